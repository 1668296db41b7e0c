// SPDX-License-Identifier: GPL-2.0
/*
 * report: compare multi-fault-all results of two or more kernels the way
 * mmtests' compare-kernels.sh does, on stdout as plain text, and
 * optionally as a bar chart. scripts/compare-kernels runs it at the end,
 * on the samples perf-scripts/report/extract wrote after each boot.
 *
 * Usage: report [--plot FILE.png] KERNELDIR KERNELDIR...
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
	"usage: perf-scripts/report/report [--plot FILE.png] KERNELDIR KERNELDIR...\n"
	"Compare multi-fault-all results of two or more kernels, each a\n"
	"results/<timestamp>/<kernel> directory whose boots perf-scripts/report/extract\n"
	"has read; the first is the baseline.\n"
	"  --plot FILE.png  also draw a bar chart with gnuplot (FILE.gp and\n"
	"                   FILE.dat are written next to it); FILE.png is\n"
	"                   replaced only if it is a regular file\n"
	"Exit status: 0; 2 on bad usage or unusable input; 3 when the report was\n"
	"printed but the plot was not.\n";

/* The report: its sections in order. */
static void (*const sections[])(const struct data *d, FILE *out) = {
	report_conditions, report_rates, report_icount, report_extra,
	report_locks, report_vmstat, report_perfstat,
};

struct options {
	const char *plot;
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
		} else {
			fatal("unknown option '%s' (see --help)", a);
		}
	}
	if (o->ndirs < 2)
		fatal("need at least two kernel directories, the first being the baseline (got %d; see --help)",
		      o->ndirs);
	if (o->plot)
		plot_check_paths(o->plot);
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

/* "key=value" lines of the baseline run's conditions file into t, or value of key. */
static char *conditions(const struct data *d, struct table *t, const char *key)
{
	char *run = parent_dir(d->k[0].dir), *path = path_join(run, "conditions");
	char *text = read_file(path), *line, *save, *eq, *value = NULL;
	int lineno = 0;

	if (t) {
		table_row(t);
		table_cell(t, "results");
		table_cell(t, "%s", run);
		if (!text) {
			table_row(t);
			table_cell(t, "conditions");
			table_cell(t, "- (no %s)", path);
		}
	}
	for (line = strtok_r(text ?: "", "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		lineno++;
		if (line[0] == '#')
			continue;
		eq = strchr(line, '=');
		if (!eq)
			fatal("%s:%d: not a line key=value", path, lineno);
		*eq = '\0';
		if (key && !value && !strcmp(line, key))
			value = xstrdup(eq + 1);
		if (!t)
			continue;
		table_row(t);
		table_cell(t, "%s", line);
		table_cell(t, "%s", eq + 1);
	}
	free(text);
	free(path);
	free(run);
	return value;
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
	return conditions(d, NULL, key);
}

/* What the run was, and which kernels ran: before the numbers mean anything. */
void report_conditions(const struct data *d, FILE *out)
{
	char *run = parent_dir(d->k[0].dir), *parent;
	struct table t;
	size_t k;

	table_init(&t, "ll");
	conditions(d, &t, NULL);
	for (k = 0; k < d->nk; k++) {
		table_row(&t);
		table_cell(&t, "uname %s", d->k[k].name);
		table_cell(&t, "%s", d->k[k].uname ?: "- (no uname file)");
		parent = parent_dir(d->k[k].dir);
		/* Conditions come from the baseline's run only: say so. */
		if (strcmp(parent, run)) {
			table_row(&t);
			table_cell(&t, "results %s", d->k[k].name);
			table_cell(&t, "%s (its conditions are not shown)", parent);
		}
		free(parent);
	}
	fputs("Conditions\n", out);
	table_print(&t, "  ", out);
	fputc('\n', out);
	free(run);
}

int main(int argc, char **argv)
{
	struct options o;
	struct data d;
	size_t i;

	parse_options(argc, argv, &o);
	data_load(&d, o.dirs, o.ndirs);
	unique_names(d.k, d.nk);
	fprintf(stdout, "multi-fault-all: %s (baseline)", d.k[0].name);
	for (i = 1; i < d.nk; i++)
		fprintf(stdout, " vs %s", d.k[i].name);
	fputs("\n\n", stdout);
	for (i = 0; i < ARRAY_SIZE(sections); i++)
		sections[i](&d, stdout);
	if (fflush(stdout)) {
		fprintf(stderr, "%s: error: stdout: %s\n", prog, strerror(errno));
		return 1;
	}
	return o.plot ? plot_write(&d, o.plot) : 0;
}
