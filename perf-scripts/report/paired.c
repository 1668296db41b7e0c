// SPDX-License-Identifier: GPL-2.0
/*
 * paired: summarise an in-boot A/B comparison (scripts/compare-sysctl).
 *
 * Reads DIR/boot-<i>/pairs.txt, lines "pair N A B" with the faults/s of
 * one run in setting A and one in setting B, taken back to back in the
 * same boot. Boots run fast or slow as a whole, but both runs of a pair
 * share the boot, so B/A cancels that. Prints B/A per boot (geometric
 * mean) and over all pairs, with a 95% confidence interval and the
 * p-value of a t-test on log(B/A) against 0.
 * Exit status 0; 2 on bad usage or when DIR has fewer than two pairs.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"
#include "util.h"

#define CONFIDENCE 0.95

static const char usage[] =
	"usage: perf-scripts/report/paired DIR\n"
	"Summarise an in-boot A/B comparison (scripts/compare-sysctl): DIR/boot-N/\n"
	"pairs.txt has lines \"pair N A B\", the faults/s of a run with setting A\n"
	"and one with B in the same boot. Prints B/A per boot and over all pairs\n"
	"(geometric mean) with a 95% confidence interval and a t-test's p.\n"
	"Exit status: 0; 2 on bad usage or fewer than two pairs.\n";

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

/* log(B/A) of every pair in path appended to *v; how many were read. */
static size_t read_pairs(const char *path, double **v, size_t *n, size_t *cap)
{
	char *text = read_file(path), *line, *save;
	double a, b;
	size_t got = 0;
	int idx;

	if (!text)
		return 0;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "pair %d %lf %lf", &idx, &a, &b) != 3 || a <= 0 || b <= 0)
			continue;
		*v = grow(*v, sizeof(**v), *n, cap);
		(*v)[(*n)++] = log(b / a);
		got++;
	}
	free(text);
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
		snprintf(path, sizeof(path), "%s/boot-%d/pairs.txt", dir, boot);
		first = n;
		got = read_pairs(path, &v, &n, &cap);
		if (!got)
			break;
		boots++;
		printf("%-6d %6zu  %.4f\n", boot, got, exp(stats_mean(v + first, got)));
	}
	if (n < 2)
		fatal("%s: fewer than two pairs in boot-1/pairs.txt, boot-2/...", dir);
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
