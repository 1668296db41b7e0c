// SPDX-License-Identifier: GPL-2.0
/*
 * The rate tables, in the style of mmtests' compare-kernels.sh, one per
 * variant and rate:
 *
 *                       base                   spf
 *   Hmean     faults/s  251052.36  (   0.00%)  291766.01  *  16.22%*
 *
 * and, under qemu/run --icount, instructions per fault.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "stats.h"
#include "table.h"

/* The rates: a metric of the RESULT lines, and the variants that have it. */
static const struct rate {
	const char *metric, *label;
	/* a key and value the variant's config must have, or NULL */
	const char *only_key, *only_value;
} rates[] = {
	{ "faults_per_sec", "faults/s", NULL, NULL },
	{ "writer_ops_per_sec", "writer-ops/s", "writer", "1" },
};

enum mark { MARK_NONE, MARK_CHANGE, MARK_SIGNIFICANT, ROW_SAMPLES, ROW_BOOTS };

static const struct row {
	const char *name;
	double (*fn)(const double *v, size_t n);
	enum mark mark;
} rows[] = {
	{ "Hmean", stats_hmean, MARK_SIGNIFICANT },
	{ "CoeffVar", stats_coeffvar, MARK_NONE },
	{ "Min", stats_min, MARK_CHANGE },
	{ "Max", stats_max, MARK_CHANGE },
	{ "Samples", NULL, ROW_SAMPLES },
	{ "Boots", NULL, ROW_BOOTS },
};

/* Welch's t-test over the per-boot means; under two boots a side never significant. */
static int significant(const struct data *d, size_t k, size_t variant,
		       const char *metric)
{
	double *a, *b;
	size_t na = data_values(d, 0, variant, metric, 1, &a);
	size_t nb = data_values(d, k, variant, metric, 1, &b);
	struct welch w;
	int sig = !stats_welch(a, na, b, nb, &w) && w.p < SIGNIFICANCE;

	free(a);
	free(b);
	return sig;
}

double report_hmean(const struct data *d, size_t k, size_t variant,
		    const char *metric)
{
	double *v, h;
	size_t n = data_values(d, k, variant, metric, 0, &v);

	h = n ? stats_hmean(v, n) : NAN;
	free(v);
	return h;
}

double report_change(const struct data *d, size_t k, size_t variant,
		     const char *metric, int *sig)
{
	double b = report_hmean(d, 0, variant, metric);
	double x = report_hmean(d, k, variant, metric);

	*sig = !isnan(b) && !isnan(x) && significant(d, k, variant, metric);
	return 100 * (x - b) / b;
}

/* Has the config key's value (or is key NULL)? */
static int has_value(const struct config *c, const char *key, const char *value)
{
	const char *v = key ? config_get(c, key) : NULL;

	return !key || (v && !strcmp(v, value));
}

/* A kernel's value and its change against the baseline: two cells. */
static void rate_cells(const struct data *d, size_t k, size_t variant,
		       const char *metric, const struct row *row,
		       struct table *t)
{
	double *v, *base, val, pct;
	size_t n = data_values(d, k, variant, metric, 0, &v);
	size_t nb = data_values(d, 0, variant, metric, 0, &base);
	int sig;

	val = n && row->fn ? row->fn(v, n) : NAN;
	/* "-": no sample, or a statistic one sample does not define (CoeffVar) */
	if (!n || (row->fn && !isfinite(val)))
		table_cell(t, "-");
	else if (row->mark == ROW_SAMPLES)
		table_cell(t, "%zu", n);
	else if (row->mark == ROW_BOOTS)
		table_cell(t, "%zu", data_boots(d, k, variant, metric));
	else
		table_cell(t, "%.2f", val);
	pct = NAN;
	if (nb && n && (row->mark == MARK_CHANGE || row->mark == MARK_SIGNIFICANT))
		pct = 100 * (val - row->fn(base, nb)) / row->fn(base, nb);
	if (!isfinite(pct)) {
		table_cell(t, "%s", "");
	} else {
		sig = row->mark == MARK_SIGNIFICANT && significant(d, k, variant, metric);
		table_cell(t, "%c%7.2f%%%c", sig ? '*' : '(', pct, sig ? '*' : ')');
	}
	free(v);
	free(base);
}

static void rate_table(const struct data *d, size_t variant,
		       const struct rate *rate, FILE *out)
{
	char *align = xrealloc(NULL, 3 + 2 * d->nk), *config;
	struct table t;
	size_t k, r;

	strcpy(align, "ll");
	for (k = 0; k < d->nk; k++)
		strcat(align, "rl");

	config = config_line(data_config(d, variant));
	fprintf(out, "%s  %s  %s\n", rate->label, d->variants[variant], config);
	free(config);
	table_init(&t, align);
	free(align);
	table_row(&t);
	table_cell(&t, "%s", "");
	table_cell(&t, "%s", "");
	for (k = 0; k < d->nk; k++) {
		table_cell(&t, "%s", d->k[k].name);
		table_cell(&t, "%s", "");
	}
	for (r = 0; r < ARRAY_SIZE(rows); r++) {
		table_row(&t);
		table_cell(&t, "%s", rows[r].name);
		table_cell(&t, "%s", rate->label);
		for (k = 0; k < d->nk; k++)
			rate_cells(d, k, variant, rate->metric, &rows[r], &t);
	}
	table_print(&t, "", out);
	fputc('\n', out);
}

void report_rates(const struct data *d, FILE *out)
{
	const struct rate *rate;
	size_t v;

	for (rate = rates; rate < rates + ARRAY_SIZE(rates); rate++)
		for (v = 0; v < d->nvariants; v++)
			if (has_value(data_config(d, v), rate->only_key, rate->only_value))
				rate_table(d, v, rate, out);
	fprintf(out,
		"Rates are per run, one sample per RESULT line; higher is better.\n"
		"Hmean is their harmonic mean, CoeffVar the sample standard deviation\n"
		"in %% of the arithmetic mean. (x%%) is the change against the baseline,\n"
		"%s; *x%%* marks a change that Welch's t-test finds significant\n"
		"over the per-boot means (two-sided p < %.2f, at least 2 boots on each\n"
		"side): the runs of one boot are not independent samples, since boots\n"
		"run fast or slow as a whole. '-': no data.\n\n",
		d->k[0].name, SIGNIFICANCE);
}

/*
 * Under qemu/run --icount SHIFT the guest clock advances 2^SHIFT ns per
 * instruction, so a rate in faults per guest second is a count:
 * 1e9 / (rate * 2^SHIFT) instructions per fault, everything the one vCPU
 * executed shared among the faults: the length of the path, not its time.
 */
static void icount_table(const struct data *d, size_t variant, int shift,
			 FILE *out)
{
	double *v, base = NAN, mean, lo, hi, x;
	struct table t;
	size_t k, i, n;
	char *config;

	config = config_line(data_config(d, variant));
	fprintf(out, "instructions/fault  %s  %s\n", d->variants[variant], config);
	free(config);
	table_init(&t, "lrrrr");
	table_row(&t);
	table_cell(&t, "kernel");
	table_cell(&t, "instructions");
	table_cell(&t, "change");
	table_cell(&t, "%s", "");
	table_cell(&t, "runs' range");
	for (k = 0; k < d->nk; k++) {
		table_row(&t);
		table_cell(&t, "%s", d->k[k].name);
		n = data_values(d, k, variant, "faults_per_sec", 0, &v);
		for (i = 0, mean = 0, lo = INFINITY, hi = 0; i < n && v[i] > 0; i++) {
			x = 1e9 / (v[i] * (double)(1L << shift));
			mean += x;
			lo = fmin(lo, x);
			hi = fmax(hi, x);
		}
		free(v);
		if (!n || i < n) {
			table_cell(&t, "-");
			table_cell(&t, "-");
			table_cell(&t, "%s", "");
			table_cell(&t, "-");
			continue;
		}
		mean /= n;
		if (k == 0)
			base = mean;
		table_cell(&t, "%.1f", mean);
		if (isnan(base)) {
			table_cell(&t, "-");
			table_cell(&t, "%s", "");
		} else {
			table_cell(&t, "%+.1f", mean - base);
			table_cell(&t, "%+.2f%%", 100 * (mean - base) / base);
		}
		table_cell(&t, "%.1f", hi - lo);
	}
	table_print(&t, "", out);
	fputc('\n', out);
}

void report_icount(const struct data *d, FILE *out)
{
	char *value = report_condition(d, "icount"), *end;
	long shift = value ? strtol(value, &end, 10) : -1;
	size_t v;

	if (!value || end == value || shift < 0 || shift > 10) {
		free(value);
		return;
	}
	free(value);
	for (v = 0; v < d->nvariants; v++)
		icount_table(d, v, shift, out);
	fprintf(out,
		"Under qemu/run --icount %ld the guest clock counts instructions\n"
		"(2^%ld ns each): instructions/fault = 1e9 / (faults/s * 2^%ld), the\n"
		"mean over the runs, all the vCPU executed shared among the faults\n"
		"(the zapping, the benchmark's loop, interrupts; QEMU counts each\n"
		"iteration of a rep-prefixed string instruction). It is the length\n"
		"of the path, not its time: cache misses and contention are not in\n"
		"it. change: against %s; lower is better. runs' range: largest\n"
		"minus smallest run.\n\n",
		shift, shift, shift, d->k[0].name);
}
