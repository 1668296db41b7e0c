// SPDX-License-Identifier: GPL-2.0
/*
 * The report's bar chart: the faults/s Hmean of each variant, a bar per
 * kernel with its runs' range, and over every bar but the baseline's the
 * change against it. plot.c writes the files and runs gnuplot.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "plot.h"
#include "report.h"
#include "stats.h"
#include "util.h"

/*
 * One line per variant: its name, then per kernel the Hmean, Min, Max
 * and the label over its bar: the change against the baseline, starred
 * when significant.
 */
static void write_data(FILE *f, const void *ctx)
{
	const struct data *d = ctx;
	double *s, pct;
	size_t v, k, n;
	int sig;

	fputs("# variant", f);
	for (k = 0; k < d->nk; k++)
		fprintf(f, "  %s:hmean,min,max,change", d->k[k].name);
	fputc('\n', f);
	for (v = 0; v < d->nvariants; v++) {
		fprintf(f, "\"%s\"", d->variants[v]);
		for (k = 0; k < d->nk; k++) {
			n = data_values(d, k, v, "faults_per_sec", 0, &s);
			if (!n)
				fputs("  NaN NaN NaN", f);
			else
				fprintf(f, "  %.2f %.2f %.2f", stats_hmean(s, n),
					stats_min(s, n), stats_max(s, n));
			free(s);
			pct = k ? report_change(d, k, v, "faults_per_sec", &sig) : NAN;
			if (isfinite(pct))
				fprintf(f, " \"%+.2f%%%s\"", pct, sig ? " *" : "");
			else
				fputs(" \"\"", f);
		}
		fputc('\n', f);
	}
}

static void write_settings(const struct data *d, FILE *f, const char *png)
{
	plot_preamble(f, "report/report", png, 1000, 560);
	fprintf(f, "set title \"multi-fault-all: faults/s, harmonic mean of the runs, error bars min..max\\n"
		"labels: change against the baseline (first bar), * significant (Welch's t-test, p < 0.05)\"\n"
		"set ylabel 'faults/s (higher is better)'\n"
		"set style data histogram\n"
		"set style histogram errorbars gap 2 lw 1\n"
		"set style fill solid 0.75 border -1\n"
		"set boxwidth 0.9 relative\n"
		"set xrange [-0.5:%zu.5]\n"
		"set yrange [0:*]\n"
		"set grid ytics\n"
		"set key outside right top\n"
		"set datafile missing 'NaN'\n"
		"# Centre of bar j (from 0) of cluster i: how histograms place them.\n"
		"nk = %zu\n"
		"bar_x(i, j) = i + (j - (nk - 1) / 2.0) / (nk + 2)\n",
		d->nvariants - 1, d->nk);
}

/* A bar per kernel, then a label over every bar but the baseline's. */
static void write_script(FILE *f, const void *ctx, const char *dat,
			 const char *png)
{
	const struct data *d = ctx;
	size_t j, col;

	write_settings(d, f, png);
	fputs("plot ", f);
	plot_quoted(f, dat);
	fputs(" using 2:3:4:xtic(1) title ", f);
	plot_quoted(f, d->k[0].name);
	for (j = 1; j < d->nk; j++) {
		col = 2 + 4 * j;
		fprintf(f, ", \\\n     '' using %zu:%zu:%zu title ", col,
			col + 1, col + 2);
		plot_quoted(f, d->k[j].name);
	}
	for (j = 1; j < d->nk; j++) {
		col = 2 + 4 * j;
		fprintf(f, ", \\\n     '' using (bar_x($0, %zu)):%zu:%zu with labels offset 0,0.8 notitle",
			j, col + 2, col + 3);
	}
	fputc('\n', f);
}

int plot_write(const struct data *d, const char *png)
{
	return plot_draw(png, write_data, write_script, d);
}
