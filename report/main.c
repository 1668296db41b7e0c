// SPDX-License-Identifier: GPL-2.0
/*
 * report: compare multi-fault-all results of two or more kernels the way
 * mmtests' compare-kernels.sh does, on stdout as plain text, and
 * optionally as a bar chart. scripts/compare-kernels runs it at the end,
 * on the samples report/extract wrote after each boot; scripts/compare-
 * native after each label, the first alone.
 *
 * Usage: report [--plot FILE.png] [--coherence-plot FILE.png] KERNELDIR...
 * The first KERNELDIR is the baseline. Exit status: 0, 2 for bad usage or
 * unusable input, 3 when the report was printed but the plot was not.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"
#include "report.h"
#include "table.h"
#include "util.h"

static const char usage[] =
	"usage: report/report [--plot FILE.png] [--coherence-plot FILE.png] KERNELDIR...\n"
	"Compare multi-fault-all results of kernels, each a\n"
	"results/<timestamp>/<kernel> directory whose boots report/extract\n"
	"has read; the first is the baseline. One KERNELDIR: its numbers alone.\n"
	"  --plot FILE.png  also draw a bar chart with gnuplot (FILE.gp and\n"
	"                   FILE.dat are written next to it); FILE.png is\n"
	"                   replaced only if it is a regular file\n"
	"  --coherence-plot FILE.png  where boots ran under the coherence simulator:\n"
	"                   cache-line transfers per fault against fault threads\n"
	"Exit status: 0; 2 on bad usage or unusable input; 3 when the report was\n"
	"printed but the plot was not.\n";

/* The report: its sections in order. */
static void (*const sections[])(const struct data *d, FILE *out) = {
	report_conditions, report_rates, report_icount, report_extra,
	report_aborts, report_locks, report_vmstat, report_perfstat, report_coherence,
	report_insns,
};

struct options {
	const char *plot, *coherence_plot;
	char **dirs;
	int ndirs;
};

static void parse_options(int argc, char **argv, struct options *o)
{
	int i, only_dirs = 0;

	memset(o, 0, sizeof(*o));
	o->dirs = xrealloc(NULL, argc * sizeof(*o->dirs));
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (only_dirs || a[0] != '-' || !a[1]) {
			o->dirs[o->ndirs++] = argv[i];
		} else if (!strcmp(a, "--")) {
			only_dirs = 1;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(usage, stdout);
			exit(0);
		} else if (!strcmp(a, "--plot")) {
			if (++i == argc)
				fatal("--plot needs a FILE.png argument");
			o->plot = argv[i];
		} else if (!strncmp(a, "--plot=", 7) && a[7]) {
			o->plot = a + 7;
		} else if (!strcmp(a, "--plot=")) {
			fatal("--plot needs a FILE.png argument");
		} else if (!strcmp(a, "--coherence-plot")) {
			if (++i == argc)
				fatal("--coherence-plot needs a FILE.png argument");
			o->coherence_plot = argv[i];
		} else {
			fatal("unknown option '%s' (see --help)", a);
		}
	}
	/* One is a report too: native mode's first label, before the reboot. */
	if (o->ndirs < 1)
		fatal("need a kernel directory, or more, the first the baseline (see --help)");
	if (o->plot)
		plot_check_paths(o->plot);
	if (o->coherence_plot)
		plot_check_paths(o->coherence_plot);
}

/*
 * Kernels are named after their directories, but results/a/spf and
 * results/b/spf should not both be "spf": prefix the run's directory.
 */
static void unique_names(struct kernel *k, size_t nk)
{
	char **labels = xrealloc(NULL, nk * sizeof(*labels)), *parent, *run;
	size_t i, j;

	for (i = 0; i < nk; i++) {
		for (j = 0; j < nk && (j == i || strcmp(k[i].name, k[j].name)); j++)
			;
		labels[i] = NULL;
		if (j == nk)
			continue;
		parent = parent_dir(k[i].dir);
		run = base_name(parent);
		labels[i] = xasprintf("%s/%s", run, k[i].name);
		free(run);
		free(parent);
	}
	for (i = 0; i < nk; i++) {
		if (!labels[i])
			continue;
		free(k[i].name);
		k[i].name = labels[i];
	}
	free(labels);
}

/* A run's conditions file: its key=value lines, in order. */
struct conditions {
	char *path, **key, **value;	/* path NULL when there is no file */
	size_t n;
};

static void conditions_read(const char *run, struct conditions *c)
{
	char *path = path_join(run, "conditions"), *text = read_file(path);
	char *line, *save, *eq;
	int lineno = 0;

	memset(c, 0, sizeof(*c));
	if (!text) {
		free(path);
		return;
	}
	c->path = path;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		lineno++;
		if (line[0] == '#')
			continue;
		eq = strchr(line, '=');
		if (!eq)
			fatal("%s:%d: not a line key=value", path, lineno);
		*eq = '\0';
		c->key = xrealloc(c->key, (c->n + 1) * sizeof(*c->key));
		c->value = xrealloc(c->value, (c->n + 1) * sizeof(*c->value));
		c->key[c->n] = xstrdup(line);
		c->value[c->n++] = xstrdup(eq + 1);
	}
	free(text);
}

/* The value of key, or NULL. */
static const char *conditions_get(const struct conditions *c, const char *key)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (!strcmp(c->key[i], key))
			return c->value[i];
	return NULL;
}

static void conditions_free(struct conditions *c)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		free(c->key[i]);
		free(c->value[i]);
	}
	free(c->key);
	free(c->value);
	free(c->path);
}

void report_kernel_columns(struct table *t, const struct data *d, size_t variant,
			   const char *prefix)
{
	char *align = xrealloc(NULL, d->nk + 2);
	size_t k;

	memset(align, 'r', d->nk + 1);
	align[0] = 'l';
	align[d->nk + 1] = '\0';
	table_init(t, align);
	free(align);
	table_row(t);
	table_cell(t, "%s", "");
	for (k = 0; k < d->nk; k++)
		table_cell(t, "%s", d->k[k].name);
	table_row(t);
	table_cell(t, "boots");
	for (k = 0; k < d->nk; k++)
		table_cell(t, data_boots(d, k, variant, "") ? "%zu" : "-",
			   data_boots(d, k, variant, prefix));
}

char *report_condition(const struct data *d, const char *key)
{
	char *run = parent_dir(d->k[0].dir), *value;
	struct conditions c;

	conditions_read(run, &c);
	value = conditions_get(&c, key) ? xstrdup(conditions_get(&c, key)) : NULL;
	conditions_free(&c);
	free(run);
	return value;
}

/*
 * What the runs were, and which kernels ran: before the numbers mean
 * anything. Kernels from two runs or more (an old kept run against a new
 * one) get the runs' conditions side by side, a column each.
 */
void report_conditions(const struct data *d, FILE *out)
{
	char **run = xrealloc(NULL, d->nk * sizeof(*run)), *align, *parent;
	struct conditions *c;
	size_t nrun = 0, i, j, k, r, *kr = xrealloc(NULL, d->nk * sizeof(*kr));
	const char *v;
	struct table t;

	for (k = 0; k < d->nk; k++) {
		parent = parent_dir(d->k[k].dir);
		for (r = 0; r < nrun && strcmp(run[r], parent); r++)
			;
		if (r == nrun)
			run[nrun++] = parent;
		else
			free(parent);
		kr[k] = r;
	}
	c = xrealloc(NULL, nrun * sizeof(*c));
	align = xrealloc(NULL, nrun + 2);
	memset(align, 'l', nrun + 1);
	align[nrun + 1] = '\0';
	table_init(&t, align);
	free(align);
	table_row(&t);
	table_cell(&t, "results");
	for (r = 0; r < nrun; r++) {
		conditions_read(run[r], &c[r]);
		table_cell(&t, "%s", run[r]);
	}
	for (r = 0; r < nrun; r++) {
		if (c[r].path)
			continue;
		table_row(&t);
		table_cell(&t, "conditions");
		for (j = 0; j < nrun; j++)
			table_cell(&t, c[j].path ? "%s" : "- (no %s/conditions)",
				   c[j].path ? "" : run[j]);
		break;
	}
	/* Every key once, where it first appears, with each run's value. */
	for (r = 0; r < nrun; r++) {
		for (i = 0; i < c[r].n; i++) {
			for (j = 0; j < r && !conditions_get(&c[j], c[r].key[i]); j++)
				;
			if (j < r)
				continue;
			table_row(&t);
			table_cell(&t, "%s", c[r].key[i]);
			for (j = 0; j < nrun; j++) {
				v = conditions_get(&c[j], c[r].key[i]);
				table_cell(&t, "%s", v ?: "-");
			}
		}
	}
	for (k = 0; k < d->nk; k++) {
		table_row(&t);
		table_cell(&t, "uname %s", d->k[k].name);
		for (r = 0; r < nrun; r++)
			table_cell(&t, "%s", r != kr[k] ? "" :
				   d->k[k].uname ?: "- (no uname file)");
	}
	fputs("Conditions\n", out);
	table_print(&t, "  ", out);
	fputc('\n', out);
	for (r = 0; r < nrun; r++) {
		conditions_free(&c[r]);
		free(run[r]);
	}
	free(c);
	free(run);
	free(kr);
}

int main(int argc, char **argv)
{
	struct options o;
	struct data d;
	size_t i;
	int rc;

	parse_options(argc, argv, &o);
	data_load(&d, o.dirs, o.ndirs);
	unique_names(d.k, d.nk);
	fprintf(stdout, "multi-fault-all: %s%s", d.k[0].name, d.nk > 1 ? " (baseline)" : "");
	for (i = 1; i < d.nk; i++)
		fprintf(stdout, " vs %s", d.k[i].name);
	fputs("\n\n", stdout);
	for (i = 0; i < ARRAY_SIZE(sections); i++)
		sections[i](&d, stdout);
	if (fflush(stdout)) {
		fprintf(stderr, "%s: error: stdout: %s\n", prog, strerror(errno));
		return 1;
	}
	rc = o.plot ? plot_write(&d, o.plot) : 0;
	if (o.coherence_plot && plot_coherence(&d, o.coherence_plot))
		rc = EXIT_PLOT;
	return rc;
}
