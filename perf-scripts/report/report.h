/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The text report: conditions, rate tables, lock contention and vmstat,
 * one section each, kernels in columns with the first as the baseline.
 */
#ifndef REPORT_REPORT_H
#define REPORT_REPORT_H

#include <stdio.h>

#include "results.h"

struct report {
	const struct kernel *k;	/* k[0] is the baseline */
	size_t nk;
	char **variants;	/* every variant of any kernel, sorted */
	size_t nvariants;
};

void report_init(struct report *r, const struct kernel *k, size_t nk);
void report_free(struct report *r);
void report_print(const struct report *r, FILE *out);

/* The sections, one file each. */
void report_conditions(const struct report *r, FILE *out);
void report_rates(const struct report *r, FILE *out);
void report_writer(const struct report *r, FILE *out);
void report_locks(const struct report *r, FILE *out);
void report_vmstat(const struct report *r, FILE *out);
void report_icount(const struct report *r, FILE *out);

/*
 * The value of key in the baseline run's conditions file, or NULL;
 * caller frees.
 */
char *report_condition(const struct report *r, const char *key);

/* The configuration of a variant, from the first kernel that ran it. */
const char *report_variant_config(const struct report *r, const char *name);

/*
 * The change of kernel ki's faults/s Hmean against the baseline's, in %
 * (NaN when either has no data); *sig says if Welch's test finds it
 * significant.
 */
double report_faults_change(const struct report *r, size_t ki,
			    const char *variant, int *sig);

#endif
