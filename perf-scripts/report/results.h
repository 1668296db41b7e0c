/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One kernel's results, read from results/<timestamp>/<kernel>/:
 *
 *   uname                               `uname -r` of the guest
 *   <variant>/boot-<i>/bench.out        RESULT lines of multi-fault-all
 *   <variant>/boot-<i>/vmstat.delta     "name delta" lines
 *   <variant>/lock.txt                  `perf lock contention` (optional)
 */
#ifndef REPORT_RESULTS_H
#define REPORT_RESULTS_H

#include <stddef.h>

#include "lockstat.h"

struct samples {
	double *v;
	size_t n, cap;
};

struct vm_counter {
	char *name;
	double sum;		/* over the boots that have vmstat.delta */
};

struct variant {
	char *name;
	char *config;		/* "threads=2 madvise=serial ..." of a RESULT */
	struct samples faults;	/* faults_per_sec, one per RESULT line */
	struct samples writer;	/* writer_ops_per_sec of writer=1 lines */
	/*
	 * The mean of each boot's runs, one sample per boot: the runs of
	 * one boot are not independent (boots run fast or slow as a whole),
	 * so the t-test compares these.
	 */
	struct samples faults_boot, writer_boot;
	size_t boots;		/* boot-* directories */
	size_t vm_boots;	/* of those, the ones with vmstat.delta */
	struct vm_counter *vm;
	size_t nvm, vm_cap;
	int has_locks;		/* lock.txt was there */
	struct lock_table locks;
};

struct kernel {
	char *dir;		/* as given on the command line */
	char *name;		/* column label; the directory's name */
	char *uname;		/* NULL when the uname file is missing */
	struct variant *variants;	/* sorted by name */
	size_t nvariants, cap;
};

/* Read dir into k; an unusable directory is fatal (exit status 2). */
void kernel_load(struct kernel *k, const char *dir);

void kernel_free(struct kernel *k);

/* The variant called name, or NULL. */
const struct variant *kernel_variant(const struct kernel *k, const char *name);

/* Mean per boot of a vmstat counter; returns 0, or -1 if k lacks it. */
int variant_vm_mean(const struct variant *v, const char *name, double *mean);

/* Compare variant (and other) names so that "x-2t" sorts before "x-16t". */
int name_cmp(const char *a, const char *b);

#endif
