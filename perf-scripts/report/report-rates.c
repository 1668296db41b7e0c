// SPDX-License-Identifier: GPL-2.0
/*
 * The rate tables, in the style of mmtests' compare-kernels.sh:
 *
 *                                 base                  spf
 *   Hmean     faults/s   251052.36 (   0.00%)  291766.01 *  16.22%*
 *
 * one per variant for faults/s, and one for writer ops/s where the
 * variant ran a writer thread.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "stats.h"
#include "util.h"

/* A change is marked significant below this two-sided p-value. */
#define SIGNIFICANCE	0.05
/* "(" "%7.2f" "%" ")" */
#define MARK_WIDTH	10

enum rate { RATE_FAULTS, RATE_WRITER };

enum row { ROW_HMEAN, ROW_COEFFVAR, ROW_MIN, ROW_MAX, ROW_SAMPLES, ROW_BOOTS, NR_ROWS };

static const char *const row_names[NR_ROWS] = {
	"Hmean", "CoeffVar", "Min", "Max", "Samples", "Boots",
};

struct cell {
	char val[32];
	char mark[24];		/* MARK_WIDTH unless the change is huge */
};

/* A kernel's samples of a rate: one per run, or with per_boot one per boot. */
static const struct samples *rate_samples(const struct report *r, size_t ki,
					  const char *variant, enum rate rate,
					  bool per_boot)
{
	const struct variant *v = kernel_variant(&r->k[ki], variant);

	if (!v)
		return NULL;
	if (rate == RATE_FAULTS)
		return per_boot ? &v->faults_boot : &v->faults;
	return per_boot ? &v->writer_boot : &v->writer;
}

static double row_value(const struct samples *s, enum row row)
{
	switch (row) {
	case ROW_HMEAN:
		return stats_hmean(s->v, s->n);
	case ROW_COEFFVAR:
		return stats_coeffvar(s->v, s->n);
	case ROW_MIN:
		return stats_min(s->v, s->n);
	case ROW_MAX:
		return stats_max(s->v, s->n);
	default:
		return s->n;
	}
}

/*
 * Welch's t-test over the per-boot means; it needs two boots a side, and
 * fewer is never significant.
 */
static int significant(const struct samples *base, const struct samples *s)
{
	struct welch w;

	if (!base || !s || stats_welch(base->v, base->n, s->v, s->n, &w))
		return 0;
	return w.p < SIGNIFICANCE;
}

/* "(  1.23%)", or "*  1.23%*" when significant; empty when undefined. */
static void format_change(char *mark, size_t len, double val, double base,
			  int sig)
{
	double pct = 100 * (val - base) / base;

	if (isnan(pct) || isinf(pct)) {
		mark[0] = '\0';
		return;
	}
	snprintf(mark, len, "%c%7.2f%%%c", sig ? '*' : '(', pct,
		 sig ? '*' : ')');
}

static void fill_cell(struct cell *c, const struct samples *s,
		      const struct samples *base, const struct samples *boots,
		      const struct samples *base_boots, enum row row)
{
	double val;

	c->val[0] = c->mark[0] = '\0';
	if (!s || !s->n) {
		strcpy(c->val, "-");
		return;
	}
	val = row_value(s, row);
	if (row == ROW_SAMPLES)
		snprintf(c->val, sizeof(c->val), "%zu", s->n);
	else if (row == ROW_BOOTS)
		snprintf(c->val, sizeof(c->val), "%zu", boots ? boots->n : 0);
	else if (isnan(val))
		strcpy(c->val, "-");
	else
		snprintf(c->val, sizeof(c->val), "%.2f", val);
	/* Change is shown for the levels, not for the spread or the count. */
	if (!base || !base->n || row == ROW_COEFFVAR || row >= ROW_SAMPLES)
		return;
	format_change(c->mark, sizeof(c->mark), val, row_value(base, row),
		      row == ROW_HMEAN && significant(base_boots, boots));
}

double report_faults_change(const struct report *r, size_t ki,
			    const char *variant, int *sig)
{
	const struct samples *base = rate_samples(r, 0, variant, RATE_FAULTS, false);
	const struct samples *s = rate_samples(r, ki, variant, RATE_FAULTS, false);
	double b, x;

	*sig = 0;
	if (!base || !base->n || !s || !s->n)
		return NAN;
	b = stats_hmean(base->v, base->n);
	x = stats_hmean(s->v, s->n);
	*sig = significant(rate_samples(r, 0, variant, RATE_FAULTS, true),
			   rate_samples(r, ki, variant, RATE_FAULTS, true));
	return 100 * (x - b) / b;
}

static void print_table(const struct report *r, const char *variant,
			enum rate rate, const struct cell *cells, FILE *out)
{
	const char *metric = rate == RATE_FAULTS ? "faults/s" : "writer-ops/s";
	size_t i, row, w = 0, cw;

	for (i = 0; i < NR_ROWS * r->nk; i++)
		if (strlen(cells[i].val) > w)
			w = strlen(cells[i].val);
	for (i = 0; i < r->nk; i++)
		if (strlen(r->k[i].name) > w + 1 + MARK_WIDTH)
			w = strlen(r->k[i].name) - 1 - MARK_WIDTH;
	cw = w + 1 + MARK_WIDTH;

	fprintf(out, "%s  %s  %s\n", metric, variant,
		report_variant_config(r, variant));
	fprintf(out, "%-22s", "");
	for (i = 0; i < r->nk; i++)
		fprintf(out, "  %*s", (int)cw, r->k[i].name);
	fputc('\n', out);
	for (row = 0; row < NR_ROWS; row++) {
		fprintf(out, "%-9s %-12s", row_names[row], metric);
		for (i = 0; i < r->nk; i++) {
			const struct cell *c = &cells[row * r->nk + i];

			fprintf(out, "  %*s", (int)w, c->val);
			/* Pad the mark only where a column follows. */
			if (c->mark[0] || i + 1 < r->nk)
				fprintf(out, " %-*s", MARK_WIDTH, c->mark);
		}
		fputc('\n', out);
	}
	fputc('\n', out);
}

static void rate_table(const struct report *r, const char *variant,
		       enum rate rate, FILE *out)
{
	struct cell *cells = xrealloc(NULL, NR_ROWS * r->nk * sizeof(*cells));
	const struct samples *base = rate_samples(r, 0, variant, rate, false);
	const struct samples *base_boots = rate_samples(r, 0, variant, rate, true);
	size_t i, row;

	for (row = 0; row < NR_ROWS; row++)
		for (i = 0; i < r->nk; i++)
			fill_cell(&cells[row * r->nk + i],
				  rate_samples(r, i, variant, rate, false), base,
				  rate_samples(r, i, variant, rate, true), base_boots,
				  row);
	print_table(r, variant, rate, cells, out);
	free(cells);
}

static int has_writer(const struct report *r, const char *variant)
{
	const struct samples *s;
	size_t i;

	for (i = 0; i < r->nk; i++) {
		s = rate_samples(r, i, variant, RATE_WRITER, false);
		if (s && s->n)
			return 1;
	}
	return 0;
}

void report_rates(const struct report *r, FILE *out)
{
	size_t i;

	for (i = 0; i < r->nvariants; i++)
		rate_table(r, r->variants[i], RATE_FAULTS, out);
	for (i = 0; i < r->nvariants; i++)
		if (has_writer(r, r->variants[i]))
			rate_table(r, r->variants[i], RATE_WRITER, out);
	fprintf(out,
		"Rates are per run, one sample per RESULT line; higher is better.\n"
		"Hmean is their harmonic mean, CoeffVar the sample standard deviation\n"
		"in %% of the arithmetic mean. (x%%) is the change against the baseline,\n"
		"%s; *x%%* marks a change that Welch's t-test finds significant\n"
		"over the per-boot means (two-sided p < %.2f, at least 2 boots on each\n"
		"side): the runs of one boot are not independent samples, since boots\n"
		"run fast or slow as a whole. '-': no data.\n\n",
		r->k[0].name, SIGNIFICANCE);
}
