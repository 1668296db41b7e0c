// SPDX-License-Identifier: GPL-2.0
/*
 * The vmstat tables: per variant, the mean per boot of every counter in
 * vmstat.delta, kernels in columns. pgfault comes first and the spf_*
 * counters next, since those are what the series is about; any other
 * counter follows unless it stayed zero on every kernel.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "util.h"

struct names {
	const char **v;
	size_t n, cap;
};

static int listed(const struct names *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], name))
			return 1;
	return 0;
}

static int nonzero_somewhere(const struct report *r, const char *variant,
			     const char *name)
{
	const struct variant *v;
	double mean;
	size_t i;

	for (i = 0; i < r->nk; i++) {
		v = kernel_variant(&r->k[i], variant);
		if (v && !variant_vm_mean(v, name, &mean) && mean != 0)
			return 1;
	}
	return 0;
}

/* Which rows to show; pass 0: pgfault, 1: spf_*, 2: the rest. */
static int wanted(const struct report *r, const char *variant,
		  const char *name, int pass)
{
	int spf = !strncmp(name, "spf_", 4), pgfault = !strcmp(name, "pgfault");

	switch (pass) {
	case 0:
		return pgfault;
	case 1:
		return spf;
	default:
		return !pgfault && !spf &&
		       nonzero_somewhere(r, variant, name);
	}
}

/* Counter names in order of first appearance, baseline first. */
static void collect(const struct report *r, const char *variant,
		    struct names *l)
{
	const struct variant *v;
	size_t i, j;
	int pass;

	for (pass = 0; pass < 3; pass++) {
		for (i = 0; i < r->nk; i++) {
			v = kernel_variant(&r->k[i], variant);
			for (j = 0; v && j < v->nvm; j++) {
				const char *name = v->vm[j].name;

				if (listed(l, name) ||
				    !wanted(r, variant, name, pass))
					continue;
				l->v = grow(l->v, sizeof(*l->v), l->n, &l->cap);
				l->v[l->n++] = name;
			}
		}
	}
}

static void format_mean(char *buf, size_t len, const struct variant *v,
			const char *name)
{
	double mean;

	if (!v || variant_vm_mean(v, name, &mean))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f", mean);
}

static int column_width(const struct report *r, const char *variant,
			const struct names *l)
{
	size_t i, j, w = 8;
	char buf[64];

	for (i = 0; i < r->nk; i++) {
		if (strlen(r->k[i].name) > w)
			w = strlen(r->k[i].name);
		for (j = 0; j < l->n; j++) {
			format_mean(buf, sizeof(buf),
				    kernel_variant(&r->k[i], variant), l->v[j]);
			if (strlen(buf) > w)
				w = strlen(buf);
		}
	}
	return w;
}

static void print_rows(const struct report *r, const char *variant,
		       const struct names *l, int nw, int cw, FILE *out)
{
	const struct variant *v;
	char buf[64];
	size_t i, j;

	fprintf(out, "%-*s", nw, "boots");
	for (i = 0; i < r->nk; i++) {
		v = kernel_variant(&r->k[i], variant);
		snprintf(buf, sizeof(buf), "%zu", v ? v->vm_boots : 0);
		fprintf(out, "  %*s", cw, v ? buf : "-");
	}
	fputc('\n', out);
	for (j = 0; j < l->n; j++) {
		fprintf(out, "%-*s", nw, l->v[j]);
		for (i = 0; i < r->nk; i++) {
			v = kernel_variant(&r->k[i], variant);
			format_mean(buf, sizeof(buf), v, l->v[j]);
			fprintf(out, "  %*s", cw, buf);
		}
		fputc('\n', out);
	}
}

/* Returns whether there was anything to print. */
static int vmstat_table(const struct report *r, const char *variant,
			FILE *out)
{
	struct names l = { 0 };
	int nw = strlen("boots"), cw;
	size_t i;

	collect(r, variant, &l);
	if (!l.n)
		return 0;
	for (i = 0; i < l.n; i++)
		if ((int)strlen(l.v[i]) > nw)
			nw = strlen(l.v[i]);
	cw = column_width(r, variant, &l);
	fprintf(out, "vmstat  %s  (mean per boot)\n%-*s", variant, nw, "");
	for (i = 0; i < r->nk; i++)
		fprintf(out, "  %*s", cw, r->k[i].name);
	fputc('\n', out);
	print_rows(r, variant, &l, nw, cw, out);
	fputc('\n', out);
	free(l.v);
	return 1;
}

void report_vmstat(const struct report *r, FILE *out)
{
	size_t i, shown = 0;

	for (i = 0; i < r->nvariants; i++)
		shown += vmstat_table(r, r->variants[i], out);
	if (shown)
		fputs("Counters from each boot's vmstat.delta, averaged over the boots.\n"
		      "'-': the kernel has no such counter. Counters other than pgfault\n"
		      "and spf_* that are zero on every kernel are left out.\n",
		      out);
}
