/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The output of `perf lock contention`, as rows classified by lock.
 */
#ifndef REPORT_LOCKSTAT_H
#define REPORT_LOCKSTAT_H

#include <stddef.h>

enum lock_class {
	LOCK_MMAP,	/* mmap_lock: every rwsem row */
	LOCK_ZONE,	/* zone->lock: spinlock rows from the page allocator */
	LOCK_OTHER,
	LOCK_NR_CLASSES
};

struct lock_row {
	enum lock_class class;
	char *type;		/* "rwsem:R", "spinlock", ... */
	char *caller;		/* symbol without its +0x offset */
	unsigned long contended;
	double total_us, max_us, avg_us;
};

struct lock_table {
	struct lock_row *rows;	/* by class, then by total wait, longest first */
	size_t n, cap;
};

/* Returns 0, or -1 (and an empty table) when path cannot be read. */
int lock_table_read(const char *path, struct lock_table *t);

/* The sum of the rows of one class: contended, total and max wait. */
struct lock_row lock_table_total(const struct lock_table *t,
				 enum lock_class class);

void lock_table_free(struct lock_table *t);

const char *lock_class_name(enum lock_class class);

#endif
