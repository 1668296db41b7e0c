// SPDX-License-Identifier: GPL-2.0
/*
 * What an mmap_lock writer costs the faulting threads: for every variant
 * that ran a writer thread and a variant that ran the same configuration
 * without one, the faults/s Hmean with the writer in % of the one without,
 * per kernel. Stock 6.1 keeps about a third; a fault path that does not
 * wait for mmap_lock should keep nearly all of it.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "stats.h"
#include "util.h"

/* The configuration of a writer variant with "writer=1" made "writer=0". */
static char *without_writer(const char *config)
{
	const char *w = strstr(config, "writer=1");

	if (!w || (w != config && w[-1] != ' '))
		return NULL;
	return xasprintf("%.*swriter=0%s", (int)(w - config), config,
			 w + strlen("writer=1"));
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

static void writer_table(const struct report *r, const char *with,
			 const char *without, FILE *out)
{
	size_t i, w = strlen("kernel");
	double a, b;

	for (i = 0; i < r->nk; i++)
		if (strlen(r->k[i].name) > w)
			w = strlen(r->k[i].name);
	fprintf(out, "Faults with an mmap_lock writer  %s against %s\n",
		with, without);
	fprintf(out, "%-*s  %14s  %14s  %6s\n", (int)w, "kernel",
		"with writer", "without", "kept");
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

void report_writer(const struct report *r, FILE *out)
{
	const char *without;
	char *config;
	size_t i, n = 0;

	for (i = 0; i < r->nvariants; i++) {
		config = without_writer(report_variant_config(r, r->variants[i]));
		if (!config)
			continue;
		without = variant_with_config(r, config);
		free(config);
		if (!without)
			continue;
		writer_table(r, r->variants[i], without, out);
		n++;
	}
	if (n)
		fputs("kept: faults/s Hmean with the writer thread in % of the same\n"
		      "faults without it (same threads, madvise mode, VMA layout).\n\n",
		      out);
}
