// SPDX-License-Identifier: GPL-2.0
/*
 * What an mmap_lock writer costs the faulting threads: for every variant
 * that ran a writer thread and a variant that ran the same configuration
 * without one, the faults/s Hmean with the writer in % of the one without,
 * per kernel. Stock 6.1 keeps about a third; a fault path that does not
 * wait for mmap_lock should keep nearly all of it. The same for a variant
 * whose extra thread only spins in user space ("busy=1"): what a second
 * busy CPU costs by itself, the most a writer variant can keep.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "stats.h"
#include "util.h"

/* An extra thread a variant may run: its configuration key and words. */
struct extra {
	const char *on;		/* in the configuration when it ran */
	const char *off;	/* the same configuration without it */
	const char *title;
	const char *column;
};

static const struct extra extras[] = {
	{ "writer=1", "writer=0", "Faults with an mmap_lock writer", "with writer" },
	{ "busy=1", "busy=0", "Faults with a busy thread (no system calls)", "with busy" },
};

/* config with e->on made e->off; NULL when config does not have e->on. */
static char *without_extra(const char *config, const struct extra *e)
{
	const char *w = strstr(config, e->on);

	if (!w || (w != config && w[-1] != ' '))
		return NULL;
	return xasprintf("%.*s%s%s", (int)(w - config), config, e->off,
			 w + strlen(e->on));
}

/* The first variant, in report order, whose configuration is config. */
static const char *variant_with_config(const struct report *r,
				       const char *config)
{
	size_t i;

	for (i = 0; i < r->nvariants; i++)
		if (!strcmp(report_variant_config(r, r->variants[i]), config))
			return r->variants[i];
	return NULL;
}

static double faults_hmean(const struct kernel *k, const char *variant)
{
	const struct variant *v = kernel_variant(k, variant);

	if (!v || !v->faults.n)
		return NAN;
	return stats_hmean(v->faults.v, v->faults.n);
}

static void extra_table(const struct report *r, const struct extra *e,
			const char *with, const char *without, FILE *out)
{
	size_t i, w = strlen("kernel");
	double a, b;

	for (i = 0; i < r->nk; i++)
		if (strlen(r->k[i].name) > w)
			w = strlen(r->k[i].name);
	fprintf(out, "%s  %s against %s\n", e->title, with, without);
	fprintf(out, "%-*s  %14s  %14s  %6s\n", (int)w, "kernel",
		e->column, "without", "kept");
	for (i = 0; i < r->nk; i++) {
		a = faults_hmean(&r->k[i], with);
		b = faults_hmean(&r->k[i], without);
		fprintf(out, "%-*s", (int)w, r->k[i].name);
		if (isnan(a) || isnan(b) || b <= 0) {
			fprintf(out, "  %14s  %14s  %6s\n", "-", "-", "-");
			continue;
		}
		fprintf(out, "  %14.2f  %14.2f  %5.1f%%\n", a, b, 100 * a / b);
	}
	fputc('\n', out);
}

/* The tables of one kind of extra thread; how many were written. */
static size_t extra_tables(const struct report *r, const struct extra *e,
			   FILE *out)
{
	const char *without;
	char *config;
	size_t i, n = 0;

	for (i = 0; i < r->nvariants; i++) {
		config = without_extra(report_variant_config(r, r->variants[i]), e);
		if (!config)
			continue;
		without = variant_with_config(r, config);
		free(config);
		if (!without)
			continue;
		extra_table(r, e, r->variants[i], without, out);
		n++;
	}
	return n;
}

void report_writer(const struct report *r, FILE *out)
{
	size_t writers = extra_tables(r, &extras[0], out);
	size_t busy = extra_tables(r, &extras[1], out);

	if (writers || busy)
		fputs("kept: faults/s Hmean with the extra thread in % of the same\n"
		      "faults without it (same threads, madvise mode, VMA layout).\n",
		      out);
	if (busy)
		fputs("The busy thread takes no lock and makes no system call: its\n"
		      "cost is that of a second busy CPU alone, the most a writer\n"
		      "variant can keep on this machine.\n",
		      out);
	if (writers || busy)
		fputc('\n', out);
}
