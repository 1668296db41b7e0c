/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The text report's sections, kernels in columns with the first as the
 * baseline; main.c prints them in order.
 */
#ifndef REPORT_REPORT_H
#define REPORT_REPORT_H

#include <stdio.h>

#include "samples.h"

struct table;

/* A change is marked significant below this two-sided p-value. */
#define SIGNIFICANCE	0.05

void report_conditions(const struct data *d, FILE *out);
void report_rates(const struct data *d, FILE *out);
void report_icount(const struct data *d, FILE *out);
void report_extra(const struct data *d, FILE *out);
void report_aborts(const struct data *d, FILE *out);
void report_locks(const struct data *d, FILE *out);
void report_vmstat(const struct data *d, FILE *out);
void report_perfstat(const struct data *d, FILE *out);
void report_coherence(const struct data *d, FILE *out);
void report_insns(const struct data *d, FILE *out);
/* Transfers per fault against fault threads, a panel per variant family. */
int plot_coherence(const struct data *d, const char *png);

/*
 * Start a table with a label column and one column per kernel: the
 * kernels' names, then a "boots" row counting variant's boots with
 * metrics under prefix ("-" for a kernel that did not run the variant).
 */
void report_kernel_columns(struct table *t, const struct data *d, size_t variant,
			   const char *prefix);

/* The value of key in the baseline run's conditions, or NULL; caller frees. */
char *report_condition(const struct data *d, const char *key);

/* The harmonic mean of a metric's samples, NaN without any. */
double report_hmean(const struct data *d, size_t k, size_t variant,
		    const char *metric);

/*
 * The change of kernel k's Hmean of metric against the baseline's, in %
 * (NaN when either has no data); *sig says if Welch's test over the
 * per-boot means finds it significant.
 */
double report_change(const struct data *d, size_t k, size_t variant,
		     const char *metric, int *sig);

#endif
