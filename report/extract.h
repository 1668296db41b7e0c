/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What extract.c shares with extract-coherence.c: the one way input it
 * cannot read is reported (file and line, status 2), and the readers.
 */
#ifndef REPORT_EXTRACT_H
#define REPORT_EXTRACT_H

#include <stdio.h>

#include "util.h"

__printf(3, 4) __noreturn
void bad_input(const char *path, int line, const char *fmt, ...);

/* The next line of *text (cut in place), NULL at its end; PATH and *LINENO for errors. */
char *next_line(char **text, const char *path, int *lineno);

/*
 * BOOTDIR/coherence.txt (the coherence plugin's report) and
 * BOOTDIR/coherence.marks (guest/phase-mark's MARK lines), both or
 * neither: per phase between two marks, named by the first mark's label,
 * coherence/LABEL/{faults,seconds,accesses,transfers,atomics,
 * atomic_transfers} and coherence/LABEL/function/NAME (its transfers)
 * into samples, once a boot.
 */
void read_coherence(const char *dir, FILE *samples);

#endif
