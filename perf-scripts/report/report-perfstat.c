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
#include <string.h>

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

static void cell(struct table *t, const char *fmt, double x)
{
	if (isfinite(x))
		table_cell(t, fmt, x);
	else
		table_cell(t, "-");
}

static void perfstat_table(const struct data *d, size_t v, FILE *out)
{
	static const char *const rows[] = {
		"page-faults (perf)", "faults (benchmark)", "perf / benchmark",
		"context-switches / 1000 page-faults", "CPUs utilized",
	};
	char *align = xrealloc(NULL, d->nk + 2);
	double pf, bf, cs, clock, elapsed, x = NAN;
	struct table t;
	size_t k, r;

	memset(align, 'r', d->nk + 1);
	align[0] = 'l';
	align[d->nk + 1] = '\0';
	table_init(&t, align);
	free(align);
	table_row(&t);
	table_cell(&t, "%s", "");
	for (k = 0; k < d->nk; k++)
		table_cell(&t, "%s", d->k[k].name);
	table_row(&t);
	table_cell(&t, "boots");
	for (k = 0; k < d->nk; k++)
		table_cell(&t, "%zu", data_boots(d, k, v, "perf/"));
	for (r = 0; r < ARRAY_SIZE(rows); r++) {
		table_row(&t);
		table_cell(&t, "%s", rows[r]);
		for (k = 0; k < d->nk; k++) {
			pf = boot_mean(d, k, v, "perf/page-faults");
			bf = boot_mean(d, k, v, "faults");
			cs = boot_mean(d, k, v, "perf/context-switches");
			clock = boot_mean(d, k, v, "perf/cpu-clock_msec");
			elapsed = boot_mean(d, k, v, "perf/elapsed_s");
			switch (r) {
			case 0:
				x = pf;
				break;
			case 1:
				x = bf;
				break;
			case 2:
				x = pf / bf;
				break;
			case 3:
				x = 1000 * cs / pf;
				break;
			case 4:
				x = clock / (1000 * elapsed);
				break;
			}
			cell(&t, r < 2 ? "%.0f" : "%.2f", x);
		}
	}
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
