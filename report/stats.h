/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Summary statistics and Welch's t-test for benchmark samples.
 */
#ifndef REPORT_STATS_H
#define REPORT_STATS_H

#include <stddef.h>

double stats_mean(const double *v, size_t n);
double stats_hmean(const double *v, size_t n);
double stats_stddev(const double *v, size_t n);
double stats_coeffvar(const double *v, size_t n);
double stats_min(const double *v, size_t n);
double stats_max(const double *v, size_t n);

/* I_x(a, b), the regularized incomplete beta function. */
double stats_ibeta(double a, double b, double x);

/* Two-sided p-value of Student's t distribution with df degrees of freedom. */
double stats_t_pvalue(double t, double df);

struct welch {
	double t;	/* (mean(a) - mean(b)) / standard error */
	double df;	/* Welch-Satterthwaite degrees of freedom */
	double p;	/* two-sided p-value */
};

/* Returns 0, or -1 when either side has fewer than two samples. */
int stats_welch(const double *a, size_t na, const double *b, size_t nb,
		struct welch *res);

#endif
