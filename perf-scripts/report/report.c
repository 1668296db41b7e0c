// SPDX-License-Identifier: GPL-2.0
/*
 * The report as a whole: which variants there are, and the order of the
 * sections.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "util.h"

static int has_name(char **names, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return 1;
	return 0;
}

static int name_cmp_qsort(const void *a, const void *b)
{
	return name_cmp(*(char *const *)a, *(char *const *)b);
}

/* Variants run by only some kernels still get a row, with "-" elsewhere. */
void report_init(struct report *r, const struct kernel *k, size_t nk)
{
	size_t i, j, cap = 0;
	const char *name;

	memset(r, 0, sizeof(*r));
	r->k = k;
	r->nk = nk;
	for (i = 0; i < nk; i++) {
		for (j = 0; j < k[i].nvariants; j++) {
			name = k[i].variants[j].name;
			if (has_name(r->variants, r->nvariants, name))
				continue;
			r->variants = grow(r->variants, sizeof(*r->variants),
					   r->nvariants, &cap);
			r->variants[r->nvariants++] = xstrdup(name);
		}
	}
	qsort(r->variants, r->nvariants, sizeof(*r->variants), name_cmp_qsort);
}

void report_free(struct report *r)
{
	size_t i;

	for (i = 0; i < r->nvariants; i++)
		free(r->variants[i]);
	free(r->variants);
}

const char *report_variant_config(const struct report *r, const char *name)
{
	const struct variant *v;
	size_t i;

	for (i = 0; i < r->nk; i++) {
		v = kernel_variant(&r->k[i], name);
		if (v && v->config)
			return v->config;
	}
	return "";
}

void report_print(const struct report *r, FILE *out)
{
	size_t i;

	fprintf(out, "multi-fault-all: %s (baseline)", r->k[0].name);
	for (i = 1; i < r->nk; i++)
		fprintf(out, " vs %s", r->k[i].name);
	fputs("\n\n", out);
	report_conditions(r, out);
	report_rates(r, out);
	report_icount(r, out);
	report_writer(r, out);
	report_locks(r, out);
	report_vmstat(r, out);
}
