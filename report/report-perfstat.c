// SPDX-License-Identifier: GPL-2.0
/*
 * What perf stat adds to the benchmark's own numbers (perf-stat.txt of
 * each boot, read by extract as perf/...): the page faults of the whole
 * process against the faults the benchmark measured, context switches
 * (a fault that sleeps on mmap_lock switches out) per 1000 page faults,
 * and how many CPUs the process kept busy. Per variant, kernels in
 * columns; nothing for results without perf-stat.txt.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include "report.h"
#include "table.h"

/* The mean over kernel k's boots of each boot's mean of metric; NaN without. */
static double boot_mean(const struct data *d, size_t k, size_t v, const char *metric)
{
	double *x, s = 0;
	size_t n = data_values(d, k, v, metric, 1, &x), i;

	for (i = 0; i < n; i++)
		s += x[i];
	free(x);
	return n ? s / n : NAN;
}

/* The table's rows: what each kernel's column shows. */
enum { PAGE_FAULTS, BENCH_FAULTS, PER_BENCH, SWITCHES, CPUS, ROWS };

static const char *const row_names[ROWS] = {
	[PAGE_FAULTS] = "page-faults (perf)",
	[BENCH_FAULTS] = "faults (benchmark)",
	[PER_BENCH] = "perf / benchmark",
	[SWITCHES] = "context-switches / 1000 page-faults",
	[CPUS] = "CPUs utilized",
};

/* Kernel k's values of the rows, NaN where a count is missing. */
static void perfstat_values(const struct data *d, size_t k, size_t v, double *x)
{
	double pf = boot_mean(d, k, v, "perf/page-faults");
	double bf = boot_mean(d, k, v, "faults");

	x[PAGE_FAULTS] = pf;
	x[BENCH_FAULTS] = bf;
	x[PER_BENCH] = pf / bf;
	x[SWITCHES] = 1000 * boot_mean(d, k, v, "perf/context-switches") / pf;
	x[CPUS] = boot_mean(d, k, v, "perf/cpu-clock_msec") /
		  (1000 * boot_mean(d, k, v, "perf/elapsed_s"));
}

static void perfstat_table(const struct data *d, size_t v, FILE *out)
{
	double (*x)[ROWS] = xrealloc(NULL, d->nk * sizeof(*x));
	struct table t;
	size_t k, r;

	for (k = 0; k < d->nk; k++)
		perfstat_values(d, k, v, x[k]);
	report_kernel_columns(&t, d, v, "perf/");
	for (r = 0; r < ROWS; r++) {
		table_row(&t);
		table_cell(&t, "%s", row_names[r]);
		for (k = 0; k < d->nk; k++)
			if (!isfinite(x[k][r]))
				table_cell(&t, "-");
			else
				table_cell(&t, r < PER_BENCH ? "%.0f" : "%.2f", x[k][r]);
	}
	free(x);
	fprintf(out, "perf stat  %s  (mean per run, averaged over the boots)\n",
		d->variants[v]);
	table_print(&t, "", out);
	fputc('\n', out);
}

void report_perfstat(const struct data *d, FILE *out)
{
	size_t v, shown = 0;

	for (v = 0; v < d->nvariants; v++) {
		if (!data_any_boot(d, v, "perf/"))
			continue;
		perfstat_table(d, v, out);
		shown++;
	}
	if (shown)
		fputs("From each boot's perf-stat.txt (perf stat over the same runs as the\n"
		      "rates): perf counts every page fault of the process (start, mapping,\n"
		      "the warm-up round, exit), the benchmark only its measured rounds'.\n"
		      "A fault that waits for mmap_lock sleeps: context switches.\n"
		      "'-': no perf-stat.txt, or perf could not count it.\n\n",
		      out);
}
