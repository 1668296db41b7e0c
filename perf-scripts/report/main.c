// SPDX-License-Identifier: GPL-2.0
/*
 * report: compare multi-fault-all results of two or more kernels the way
 * mmtests' compare-kernels.sh does, on stdout as plain text, and
 * optionally as a bar chart. scripts/compare-kernels runs it at the end;
 * it has its own name so that the two programs' messages cannot be
 * mistaken for each other.
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
#include "util.h"

static const char usage[] =
	"usage: perf-scripts/report/report [--plot FILE.png] KERNELDIR KERNELDIR...\n"
	"Compare multi-fault-all results of two or more kernels, each a\n"
	"results/<timestamp>/<kernel> directory; the first is the baseline.\n"
	"  --plot FILE.png  also draw a bar chart with gnuplot (FILE.gp and\n"
	"                   FILE.dat are written next to it); FILE.png is\n"
	"                   replaced only if it is a regular file\n"
	"Exit status: 0; 2 on bad usage or unusable input; 3 when the report was\n"
	"printed but the plot was not.\n";

struct options {
	const char *plot;
	const char **dirs;
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
			o->dirs[o->ndirs++] = a;
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
static int name_taken(const struct kernel *k, int nk, int i)
{
	int j;

	for (j = 0; j < nk; j++)
		if (j != i && !strcmp(k[i].name, k[j].name))
			return 1;
	return 0;
}

static void unique_names(struct kernel *k, int nk)
{
	char **labels = xrealloc(NULL, nk * sizeof(*labels)), *parent, *run;
	int i;

	for (i = 0; i < nk; i++) {
		labels[i] = NULL;
		if (!name_taken(k, nk, i))
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

int main(int argc, char **argv)
{
	struct options o;
	struct kernel *k;
	struct report r;
	int i, ret;

	parse_options(argc, argv, &o);
	k = xrealloc(NULL, o.ndirs * sizeof(*k));
	for (i = 0; i < o.ndirs; i++)
		kernel_load(&k[i], o.dirs[i]);
	unique_names(k, o.ndirs);
	report_init(&r, k, o.ndirs);
	report_print(&r, stdout);
	if (fflush(stdout)) {
		fprintf(stderr, "%s: error: stdout: %s\n", prog, strerror(errno));
		return 1;
	}
	ret = o.plot ? plot_write(&r, o.plot) : 0;
	report_free(&r);
	for (i = 0; i < o.ndirs; i++)
		kernel_free(&k[i]);
	free(k);
	free(o.dirs);
	return ret;
}
