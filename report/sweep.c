// SPDX-License-Identifier: GPL-2.0
/*
 * sweep: multi-fault-all's faults/s by fault-thread count, the way
 * will-it-scale prints its runs: per thread count the rate, "linear"
 * (the one-thread rate times the thread count: perfect scaling) and
 * their ratio. scripts/native-sweep runs it on the samples report/extract
 * wrote after each run of NAME-Nt, N = 1, 2, 4, ... up to the CPUs.
 *
 * Usage: sweep [--plot FILE.png] LABELDIR...
 * Exit status: 0, 2 for bad usage or unusable input, 3 when the tables
 * were printed but the plot was not.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"
#include "samples.h"
#include "stats.h"
#include "table.h"
#include "util.h"

static const char usage[] =
	"usage: report/sweep [--plot FILE.png] LABELDIR...\n"
	"Faults/s of multi-fault-all by fault-thread count. Each LABELDIR is a\n"
	"directory of scripts/native-sweep (NAME-Nt/boot-B/ for several N,\n"
	"read by report/extract). Per variant NAME, a table with a row per\n"
	"thread count N and per label: faults/s, the harmonic mean of the runs;\n"
	"linear, will-it-scale's column, the 1-thread faults/s times N; ratio,\n"
	"faults/s over linear (1.00: perfect scaling).\n"
	"  --plot FILE.png  also draw it with gnuplot, a panel per variant\n"
	"                   (FILE.gp and FILE.dat are written next to it)\n"
	"Exit status: 0; 2 on bad usage or unusable input; 3 when the tables\n"
	"were printed but the plot was not.\n";

/* A variant NAME and its runs NAME-Nt: variant[i] has threads[i] threads. */
struct series {
	char *name;
	size_t *variant;
	unsigned long *threads;
	size_t n;
};

struct sweep {
	const struct data *d;
	struct series *s;
	size_t ns;
};

static unsigned long variant_threads(const struct data *d, size_t v)
{
	const char *t = config_get(data_config(d, v), "threads");
	unsigned long n;
	char *end;

	if (!t)
		fatal("%s: no threads= in its bench-config", d->variants[v]);
	errno = 0;
	n = strtoul(t, &end, 10);
	if (errno || *end || !n)
		fatal("%s: threads=%s in its bench-config is not a thread count",
		      d->variants[v], t);
	return n;
}

/* "serial-4t" -> "serial"; a name without -Nt stays as it is. */
static char *series_name(const char *variant)
{
	const char *dash = strrchr(variant, '-');
	size_t len = strlen(variant);

	if (dash && len - (dash - variant) > 2 && variant[len - 1] == 't' &&
	    strspn(dash + 1, "0123456789") == len - (dash - variant) - 2)
		return xstrndup(variant, dash - variant);
	return xstrdup(variant);
}

/* The variants grouped by name, each group by thread count. */
static void sweep_group(struct sweep *w, const struct data *d)
{
	struct series *s;
	size_t v, i, j, cap = 0;
	char *name;

	memset(w, 0, sizeof(*w));
	w->d = d;
	for (v = 0; v < d->nvariants; v++) {
		name = series_name(d->variants[v]);
		for (i = 0; i < w->ns && strcmp(w->s[i].name, name); i++)
			;
		if (i == w->ns) {
			w->s = grow(w->s, sizeof(*w->s), w->ns, &cap);
			w->s[w->ns++] = (struct series){ .name = name };
		} else {
			free(name);
		}
		s = &w->s[i];
		s->variant = xrealloc(s->variant, (s->n + 1) * sizeof(*s->variant));
		s->threads = xrealloc(s->threads, (s->n + 1) * sizeof(*s->threads));
		/* insertion by thread count */
		for (j = s->n; j > 0 && s->threads[j - 1] > variant_threads(d, v); j--) {
			s->variant[j] = s->variant[j - 1];
			s->threads[j] = s->threads[j - 1];
		}
		s->variant[j] = v;
		s->threads[j] = variant_threads(d, v);
		s->n++;
		if (j > 0 && s->threads[j - 1] == s->threads[j])
			fatal("%s and %s both ran %lu threads", d->variants[s->variant[j - 1]],
			      d->variants[v], s->threads[j]);
	}
}

/* The faults/s Hmean of kernel k in variant v, NaN without samples. */
static double rate(const struct data *d, size_t k, size_t v)
{
	double *x, h;
	size_t n = data_values(d, k, v, "faults_per_sec", 0, &x);

	h = n ? stats_hmean(x, n) : NAN;
	free(x);
	return h;
}

/* Kernel k's one-thread rate in series s, NaN when it has none. */
static double one_thread(const struct data *d, const struct series *s, size_t k)
{
	return s->n && s->threads[0] == 1 ? rate(d, k, s->variant[0]) : NAN;
}

/* The configuration of a series but its thread count, on one line. */
static char *series_config(const struct data *d, const struct series *s)
{
	const struct config *c = data_config(d, s->variant[0]);
	char *line = xstrdup(""), *next;
	size_t i;

	for (i = 0; i < c->n; i++) {
		if (!strcmp(c->key[i], "threads"))
			continue;
		next = xasprintf("%s%s%s=%s", line, *line ? " " : "", c->key[i], c->value[i]);
		free(line);
		line = next;
	}
	return line;
}

static void print_series(const struct data *d, const struct series *s, FILE *out)
{
	char *align = xrealloc(NULL, 2 + 3 * d->nk), *config = series_config(d, s);
	double h, one, linear;
	struct table t;
	size_t i, k;

	memset(align, 'r', 1 + 3 * d->nk);
	align[1 + 3 * d->nk] = '\0';
	fprintf(out, "faults/s by fault threads  %s  %s\n", s->name, config);
	free(config);
	table_init(&t, align);
	free(align);
	table_row(&t);
	table_cell(&t, "%s", "");
	for (k = 0; k < d->nk; k++) {
		table_cell(&t, "%s", d->k[k].name);
		table_cell(&t, "%s", "");
		table_cell(&t, "%s", "");
	}
	table_row(&t);
	table_cell(&t, "threads");
	for (k = 0; k < d->nk; k++) {
		table_cell(&t, "faults/s");
		table_cell(&t, "linear");
		table_cell(&t, "ratio");
	}
	for (i = 0; i < s->n; i++) {
		table_row(&t);
		table_cell(&t, "%lu", s->threads[i]);
		for (k = 0; k < d->nk; k++) {
			h = rate(d, k, s->variant[i]);
			one = one_thread(d, s, k);
			linear = one * s->threads[i];
			table_cell(&t, isnan(h) ? "-" : "%.2f", h);
			table_cell(&t, isnan(linear) ? "-" : "%.2f", linear);
			table_cell(&t, isnan(h) || isnan(linear) ? "-" : "%.2f", h / linear);
		}
	}
	table_print(&t, "", out);
	fputc('\n', out);
}

/* A block per series (gnuplot's index): threads, then per kernel rate and linear. */
static void write_data(FILE *f, const void *ctx)
{
	const struct sweep *w = ctx;
	const struct data *d = w->d;
	const struct series *s;
	size_t i, k;

	fputs("# threads", f);
	for (k = 0; k < d->nk; k++)
		fprintf(f, "  %s:faults/s,linear", d->k[k].name);
	fputc('\n', f);
	for (s = w->s; s < w->s + w->ns; s++) {
		fprintf(f, "%s# %s\n", s == w->s ? "" : "\n\n", s->name);
		for (i = 0; i < s->n; i++) {
			fprintf(f, "%lu", s->threads[i]);
			for (k = 0; k < d->nk; k++)
				fprintf(f, "  %.2f %.2f", rate(d, k, s->variant[i]),
					one_thread(d, s, k) * s->threads[i]);
			fputc('\n', f);
		}
	}
}

/* A panel per series: per kernel its rates, and linear dashed in its colour. */
static void write_script(FILE *f, const void *ctx, const char *dat, const char *png)
{
	const struct sweep *w = ctx;
	const struct data *d = w->d;
	unsigned long most = 1;
	size_t i, k;
	char *title;

	for (i = 0; i < w->ns; i++)
		if (w->s[i].n && w->s[i].threads[w->s[i].n - 1] > most)
			most = w->s[i].threads[w->s[i].n - 1];
	plot_preamble(f, "report/sweep", png, w->ns > 1 ? 560 * (int)w->ns : 800, 520);
	fprintf(f, "set multiplot layout 1,%zu title \"multi-fault-all: faults/s by fault threads, harmonic mean of the runs\\n"
		"dashed: linear, the 1-thread rate times the threads (will-it-scale)\"\n"
		"set logscale x 2\n"
		"set xrange [0.8:%lu]\n"
		"set yrange [0:*]\n"
		"set xlabel 'fault threads'\n"
		"set ylabel 'faults/s (higher is better)'\n"
		"set grid\n"
		"set key top left\n"
		"set datafile missing 'NaN'\n",
		w->ns, most * 5 / 4 + 1);
	for (i = 0; i < w->ns; i++) {
		fputs("set title ", f);
		plot_quoted(f, w->s[i].name);
		fputs("\nplot ", f);
		for (k = 0; k < d->nk; k++) {
			fputs(k ? ", \\\n     " : "", f);
			plot_quoted(f, dat);
			fprintf(f, " index %zu using 1:%zu with linespoints lc %zu pt 7 title ", i,
				2 + 2 * k, k + 1);
			plot_quoted(f, d->k[k].name);
			fputs(", \\\n     ", f);
			plot_quoted(f, dat);
			fprintf(f, " index %zu using 1:%zu with lines lc %zu dt 2 title ", i,
				3 + 2 * k, k + 1);
			title = xasprintf("%s linear", d->k[k].name);
			plot_quoted(f, title);
			free(title);
		}
		fputc('\n', f);
	}
	fputs("unset multiplot\n", f);
}

int main(int argc, char **argv)
{
	const char *plot = NULL;
	char **dirs = xrealloc(NULL, argc * sizeof(*dirs));
	int i, ndirs = 0, only_dirs = 0;
	struct sweep w;
	struct data d;
	size_t s;

	prog = "sweep";
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (only_dirs || a[0] != '-' || !a[1]) {
			dirs[ndirs++] = argv[i];
		} else if (!strcmp(a, "--")) {
			only_dirs = 1;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(usage, stdout);
			return 0;
		} else if (!strcmp(a, "--plot")) {
			if (++i == argc)
				fatal("--plot needs a FILE.png argument");
			plot = argv[i];
		} else if (!strncmp(a, "--plot=", 7) && a[7]) {
			plot = a + 7;
		} else {
			fatal("unknown option '%s' (see --help)", a);
		}
	}
	if (!ndirs)
		fatal("need a label directory of scripts/native-sweep, or more (see --help)");
	if (plot)
		plot_check_paths(plot);
	data_load(&d, dirs, ndirs);
	sweep_group(&w, &d);
	for (s = 0; s < w.ns; s++)
		print_series(&d, &w.s[s], stdout);
	fputs("faults/s is the harmonic mean of the runs (RESULT lines) at that\n"
	      "thread count; linear is the 1-thread faults/s times the threads\n"
	      "(will-it-scale's column: perfect scaling); ratio is faults/s over\n"
	      "linear. '-': no data.\n", stdout);
	if (fflush(stdout)) {
		fprintf(stderr, "%s: error: stdout: %s\n", prog, strerror(errno));
		return 1;
	}
	return plot ? plot_draw(plot, write_data, write_script, &w) : 0;
}
