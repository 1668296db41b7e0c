// SPDX-License-Identifier: GPL-2.0
/*
 * The report's instructions-by-function section, only where boots ran
 * under the coherence plugin with insns=on (scripts/compare-kernels
 * INSNS=on): per variant, each kernel's instructions per page fault in
 * the benchmark phase, in all and less the idle phase's (scaled to the
 * benchmark phase's length), then the functions whose instructions per
 * fault differ most from the baseline's (with one kernel: the most), the
 * rest in one row. A TCG stand-in for `perf diff` of instruction counts:
 * exact, and free of the host's load. Where every boot of a variant ran
 * the writer (--writer), the same rows again over the writer's cycles.
 *
 * Each boot's ratio is taken on its own, then averaged over the boots; a
 * function a boot did not list (the plugin lists its top rows a phase)
 * counts 0 there.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "table.h"
#include "util.h"

#define FUNCTION_PREFIX "coherence/bench/insn_function/"
/* What a table counts instructions per: the benchmark phase's faults, or the writer's cycles. */
#define PER_FAULT "coherence/bench/faults"
#define PER_WRITER_CYCLE "writer_ops"
/* Rows per variant, and the least difference (or count) a row shows. */
#define MAX_ROWS 30
#define MIN_DIFF 0.5

/* A boot's value of a metric (its first sample), NaN without it. */
static double boot_value(const struct data *d, const struct boot *b, const char *metric)
{
	long m = data_metric(d, metric);

	for (size_t i = 0; m >= 0 && i < b->n; i++)
		if (b->s[i].metric == (size_t)m)
			return b->s[i].v;
	return NAN;
}

enum total { ALL, LESS_IDLE };

/* A boot's bench-phase instructions per fault, in all or less idle. */
static double boot_total(const struct data *d, const struct boot *b, enum total which)
{
	double faults = boot_value(d, b, "coherence/bench/faults");
	double insns = boot_value(d, b, "coherence/bench/insns");
	double secs = boot_value(d, b, "coherence/bench/seconds");
	double idle = boot_value(d, b, "coherence/idle/insns");
	double isecs = boot_value(d, b, "coherence/idle/seconds");

	if (!(faults > 0) || isnan(insns))
		return NAN;
	if (which == ALL)
		return insns / faults;
	return isecs > 0 && !isnan(idle) ? (insns - idle * secs / isecs) / faults : NAN;
}

/*
 * The mean over kernel k's boots of variant v of a function's
 * instructions per @per (PER_FAULT or PER_WRITER_CYCLE), or (@function
 * NULL) the total per fault; NaN without a boot.
 */
static double mean_per(const struct data *d, size_t k, size_t v,
		       const char *function, enum total which, const char *per)
{
	char *metric = function ? xasprintf("%s%s", FUNCTION_PREFIX, function) : NULL;
	double sum = 0, x;
	size_t n = 0;

	for (size_t i = 0; i < d->nboots; i++) {
		const struct boot *b = &d->boots[i];

		if (b->kernel != k || b->variant != v || isnan(boot_total(d, b, ALL)))
			continue;
		if (function) {
			x = boot_value(d, b, metric);
			x = (isnan(x) ? 0 : x) / boot_value(d, b, per);
		} else {
			x = boot_total(d, b, which);
		}
		if (isnan(x))
			continue;
		sum += x;
		n++;
	}
	free(metric);
	return n ? sum / n : NAN;
}

struct row {
	const char *function;
	double *per_unit;	/* by kernel: instructions per fault or per writer cycle */
	double rank;
};

static int compare_rows(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? 1 : -1;
	return strcmp(x->function, y->function);
}

/* How far a row is from the baseline: the largest difference, or its count. */
static double row_rank(const struct data *d, const double *pf)
{
	double r = 0;

	if (d->nk == 1)
		return isnan(pf[0]) ? 0 : pf[0];
	for (size_t k = 1; k < d->nk; k++)
		if (!isnan(pf[k]) && !isnan(pf[0]))
			r = fmax(r, fabs(pf[k] - pf[0]));
	return r;
}

/* A row's cells: each kernel's value, and after the baseline's its difference. */
static void value_cells(struct table *t, const struct data *d, const double *pf)
{
	for (size_t k = 0; k < d->nk; k++) {
		if (isnan(pf[k]))
			table_cell(t, "-");
		else
			table_cell(t, "%.1f", pf[k]);
		if (k == 0)
			continue;
		if (isnan(pf[k]) || isnan(pf[0]))
			table_cell(t, "%s", "");
		else
			table_cell(t, "%+.1f", pf[k] - pf[0]);
	}
}

/*
 * Per fault: the totals, the functions, the rest. Per writer cycle only
 * the functions: a total would hold the fault threads' work too.
 */
static void variant_table(const struct data *d, size_t v, const char *per, FILE *out)
{
	bool faults = !strcmp(per, PER_FAULT);
	size_t plen = strlen(FUNCTION_PREFIX), nrows = 0, shown;
	struct row *rows = xrealloc(NULL, (d->nmetrics + 1) * sizeof(*rows));
	double *all = xrealloc(NULL, d->nk * sizeof(double));
	double *rest = xrealloc(NULL, d->nk * sizeof(double));
	double *idle = xrealloc(NULL, d->nk * sizeof(double));
	char *align = xrealloc(NULL, 2 * d->nk + 1);
	struct table t;

	for (size_t k = 0; faults && k < d->nk; k++) {
		all[k] = rest[k] = mean_per(d, k, v, NULL, ALL, PER_FAULT);
		idle[k] = mean_per(d, k, v, NULL, LESS_IDLE, PER_FAULT);
	}
	for (size_t m = 0; m < d->nmetrics; m++) {
		struct row *r = &rows[nrows];

		if (strncmp(d->metrics[m], FUNCTION_PREFIX, plen))
			continue;
		r->function = d->metrics[m] + plen;
		r->per_unit = xrealloc(NULL, d->nk * sizeof(double));
		for (size_t k = 0; k < d->nk; k++)
			r->per_unit[k] = mean_per(d, k, v, r->function, ALL, per);
		r->rank = row_rank(d, r->per_unit);
		nrows++;
	}
	qsort(rows, nrows, sizeof(*rows), compare_rows);
	for (shown = 0; shown < nrows && shown < MAX_ROWS && rows[shown].rank >= MIN_DIFF; shown++)
		for (size_t k = 0; faults && k < d->nk; k++)
			rest[k] -= isnan(rows[shown].per_unit[k]) ? 0 : rows[shown].per_unit[k];

	memset(align, 'r', 2 * d->nk);
	align[0] = 'l';
	align[2 * d->nk] = '\0';
	table_init(&t, align);
	table_row(&t);
	table_cell(&t, faults ? "instructions/fault" : "instructions/writer cycle");
	for (size_t k = 0; k < d->nk; k++) {
		table_cell(&t, "%s", d->k[k].name);
		if (k)
			table_cell(&t, "-%s", d->k[0].name);
	}
	if (faults) {
		table_row(&t);
		table_cell(&t, "all");
		value_cells(&t, d, all);
		table_row(&t);
		table_cell(&t, "less idle");
		value_cells(&t, d, idle);
	}
	for (size_t i = 0; i < shown; i++) {
		table_row(&t);
		table_cell(&t, "  %s", rows[i].function);
		value_cells(&t, d, rows[i].per_unit);
	}
	if (faults) {
		table_row(&t);
		table_cell(&t, "  the other %zu functions", nrows - shown);
		value_cells(&t, d, rest);
	}
	fprintf(out, "%s: instructions per %s by function (the benchmark phase; %s)\n",
		d->variants[v], faults ? "fault" : "writer cycle",
		d->nk > 1 ? "functions by the largest difference" : "the top functions");
	table_print(&t, "  ", out);
	fputc('\n', out);
	for (size_t i = 0; i < nrows; i++)
		free(rows[i].per_unit);
	free(rows);
	free(all);
	free(rest);
	free(idle);
	free(align);
}

/* Whether every boot of variant v that counted instructions ran the writer. */
static bool writer_ran(const struct data *d, size_t v)
{
	bool any = false;

	for (size_t i = 0; i < d->nboots; i++) {
		const struct boot *b = &d->boots[i];

		if (b->variant != v || isnan(boot_value(d, b, "coherence/bench/insns")))
			continue;
		if (!(boot_value(d, b, PER_WRITER_CYCLE) > 0))
			return false;
		any = true;
	}
	return any;
}

void report_insns(const struct data *d, FILE *out)
{
	bool any = false;

	if (data_metric(d, "coherence/bench/insns") < 0)
		return;
	fputs("Instructions per fault by function (INSNS=on: the coherence plugin with\n"
	      "insns=on counts every kernel instruction each vCPU executes, charged to\n"
	      "its function by the kernel's System.map; user code is not counted). The benchmark\n"
	      "phase is one run of multi-fault-all, its start-up, warm-up round and exit\n"
	      "included, over the page faults the guest counted in it; \"less idle\" takes\n"
	      "away the idle phase's instructions scaled to the benchmark phase's length.\n"
	      "Counts, not times: a cache miss costs nothing here, and QEMU counts each\n"
	      "iteration of a rep-prefixed string instruction. Inlined code is its caller's.\n"
	      "Beside the writer, a second table divides the same counts by the writer's\n"
	      "cycles (an mmap, mprotect and munmap each): every function's count is the\n"
	      "whole kernel's, so read the writer's functions there, not the faults'.\n\n",
	      out);
	for (size_t v = 0; v < d->nvariants; v++) {
		if (!data_any_boot(d, v, "coherence/bench/insns"))
			continue;
		variant_table(d, v, PER_FAULT, out);
		if (writer_ran(d, v))
			variant_table(d, v, PER_WRITER_CYCLE, out);
		any = true;
	}
	if (!any)
		fputs("  (no variant ran with INSNS=on)\n\n", out);
}
