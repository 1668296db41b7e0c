// SPDX-License-Identifier: GPL-2.0
/*
 * Window: pgtable.c's, in a shared memfd mapping: a speculative shmem
 * read fault that found its PMD empty installs the page table, checking
 * the VMA's mark under page_table_lock, which vma_start_write() takes
 * after marking a file VMA too.
 */
#define PGTABLE_SHMEM 1
#include "pgtable.c"
