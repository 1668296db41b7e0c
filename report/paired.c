// SPDX-License-Identifier: GPL-2.0
/*
 * paired: summarise an in-boot A/B comparison (scripts/compare-kernels --paired).
 *
 * Reads DIR/boot-<i>/samples, which report/extract wrote from
 * the boot's output: faults_per_sec/A and faults_per_sec/B of run N are
 * pair N, one run in setting A and one in setting B, taken back to back
 * in the same boot. Boots run fast or slow as a whole, but both runs of a pair
 * share the boot, so B/A cancels that. Prints B/A per boot (geometric
 * mean) and over all pairs, with a 95% confidence interval and the
 * p-value of a t-test on log(B/A) against 0.
 * Exit status 0; 2 on bad usage, input it cannot parse (file and line
 * named), or fewer than two pairs.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "samples.h"
#include "stats.h"
#include "util.h"

#define CONFIDENCE 0.95

static const char usage[] =
	"usage: report/paired DIR\n"
	"Summarise an in-boot A/B comparison (scripts/compare-kernels --paired):\n"
	"in DIR/boot-N/samples (report/extract), faults_per_sec/A\n"
	"and /B of run K are pair K, a run with setting A and one with B in the\n"
	"same boot. Prints B/A per boot and over all pairs (geometric mean) with\n"
	"a 95% confidence interval and a t-test's p.\n"
	"Exit status: 0; 2 on bad usage, unreadable samples or fewer than two pairs.\n";

/* The t with two-sided p-value 1 - CONFIDENCE at df degrees of freedom. */
static double t_quantile(double df)
{
	double lo = 0, hi = 1000, mid;
	int i;

	for (i = 0; i < 200; i++) {
		mid = (lo + hi) / 2;
		if (stats_t_pvalue(mid, df) > 1 - CONFIDENCE)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

/* Store x as run's rate of one setting; -1 when the run is there already. */
static int put(double **r, size_t *n, size_t run, double x)
{
	size_t cap = *n;

	if (run > *n) {
		*r = xrealloc(*r, run * sizeof(**r));
		while (cap < run)
			(*r)[cap++] = 0;
		*n = run;
	}
	if ((*r)[run - 1])
		return -1;
	(*r)[run - 1] = x;
	return 0;
}

/* The runs' rates of settings A and B in one boot's samples. */
struct pairs {
	double *r[2];
	size_t nr[2];
};

/* A faults_per_sec/A or /B sample (samples_read's callback). */
static void pair_rate(void *ctx, const char *metric, unsigned long run,
		      double x, const char *path, int lineno)
{
	struct pairs *p = ctx;
	int set;

	if (strncmp(metric, "faults_per_sec/", 15))
		return;
	if (strlen(metric) != 16 || (metric[15] != 'A' && metric[15] != 'B') ||
	    run < 1 || x <= 0)
		fatal("%s:%d: not a pair's rate: %s %lu %g", path, lineno, metric, run, x);
	set = metric[15] - 'A';
	if (put(&p->r[set], &p->nr[set], run, x))
		fatal("%s:%d: run %lu of setting %c twice", path, lineno, run, metric[15]);
}

/*
 * log(B/A) of every pair in a boot's samples appended to *v; how many
 * (0 when the file does not exist). Runs of one setting without the
 * other's are an error: a pair half missing is not a pair.
 */
static size_t read_pairs(const char *path, double **v, size_t *n, size_t *cap)
{
	struct pairs p = { { NULL, NULL }, { 0, 0 } };
	double **r = p.r;
	size_t *nr = p.nr, i, got = 0;

	if (samples_read(path, pair_rate, &p))
		return 0;
	for (i = 0; i < nr[0] || i < nr[1]; i++) {
		if (i >= nr[0] || i >= nr[1] || !r[0][i] || !r[1][i])
			fatal("%s: pair %zu lacks its run with setting %c", path, i + 1,
			      i < nr[0] && r[0][i] ? 'B' : 'A');
		*v = grow(*v, sizeof(**v), *n, cap);
		(*v)[(*n)++] = log(r[1][i] / r[0][i]);
		got++;
	}
	free(r[0]);
	free(r[1]);
	return got;
}

int main(int argc, char **argv)
{
	double *v = NULL, m, sd, half, t, p;
	size_t n = 0, cap = 0, first, got;
	const char *dir = NULL;
	char path[4096];
	int i, only_args = 0, boot, boots = 0;

	prog = "paired";
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (only_args || a[0] != '-' || !a[1]) {
			if (dir)
				fatal("one DIR expected, not '%s' too (see --help)", a);
			dir = a;
		} else if (!strcmp(a, "--")) {
			only_args = 1;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(usage, stdout);
			return 0;
		} else {
			fatal("unknown option '%s' (see --help)", a);
		}
	}
	if (!dir)
		fatal("usage: paired DIR (see --help)");
	printf("%-6s %6s  %s\n", "boot", "pairs", "B/A");
	for (boot = 1; boot < 1000; boot++) {
		snprintf(path, sizeof(path), "%s/boot-%d/samples", dir, boot);
		first = n;
		got = read_pairs(path, &v, &n, &cap);
		if (!got)
			break;
		boots++;
		printf("%-6d %6zu  %.4f\n", boot, got, exp(stats_mean(v + first, got)));
	}
	if (n < 2)
		fatal("%s: fewer than two pairs in boot-1/samples, boot-2/...", dir);
	m = stats_mean(v, n);
	sd = stats_stddev(v, n);
	half = t_quantile(n - 1) * sd / sqrt(n);
	t = sd > 0 ? m / (sd / sqrt(n)) : 0;
	p = sd > 0 ? stats_t_pvalue(t, n - 1) : 1;
	printf("%-6s %6zu  %.4f  (%+.2f%%)  95%% CI %.4f .. %.4f  p %.3g  (%d boots)\n",
	       "all", n, exp(m), 100 * (exp(m) - 1), exp(m - half), exp(m + half), p, boots);
	printf("\nB/A: geometric mean of the pairs' ratios of faults/s, B's run to A's\n"
	       "in the same boot; the interval and p (t-test on log(B/A), %zu df)\n"
	       "treat the pairs as independent: each pair's two runs share a boot.\n",
	       n - 1);
	free(v);
	return 0;
}
