// SPDX-License-Identifier: GPL-2.0
/*
 * What an extra thread costs the faulting threads: for every variant that
 * ran an mmap_lock writer (or a thread that only spins in user space) and
 * the variant that ran the same configuration without it, the faults/s
 * Hmean with it in % of the one without, per kernel. Stock 6.1 keeps about
 * a third beside a writer; a fault path that does not wait for mmap_lock
 * should keep nearly all of it. Per kernel, anonymous memory first, then
 * the other mappings.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "table.h"

static const struct extra {
	const char *key, *on, *off;	/* its key's value with and without it */
	const char *title, *column;
} extras[] = {
	{ "writer", "1", "0", "Faults with an mmap_lock writer", "with writer" },
	{ "busy", "1", "0", "Faults with a busy thread (no system calls)", "with busy" },
};

/* The value of key, or def for results from before the key. */
static const char *config_or(const struct config *c, const char *key, const char *def)
{
	const char *v = config_get(c, key);

	return v ? v : def;
}

/* The variant whose config is variant's with e->on made e->off, or -1. */
static long without(const struct data *d, size_t variant, const struct extra *e)
{
	const struct config *c = data_config(d, variant);
	size_t v;

	for (v = 0; v < d->nvariants; v++)
		if (config_differ_in(c, data_config(d, v), e->key, e->on, e->off))
			return (long)v;
	return -1;
}

/*
 * "anon private write" (and " swap" when paged out); *anon when anonymous
 * and not paged out, *file when read faults that fault-around serves.
 */
static char *mapping(const struct config *c, int *anon, int *file)
{
	const char *backing = config_or(c, "backing", "anon");
	const char *map = config_or(c, "mapping", "private");
	const char *access = config_or(c, "access", "write");
	int pageout = !strcmp(config_or(c, "drop", "dontneed"), "pageout");

	*anon = !strcmp(backing, "anon") && !pageout;
	*file = (strcmp(backing, "anon") || !strcmp(map, "shared")) &&
		!strcmp(access, "read");
	return xasprintf("%s %s %s%s", backing, map, access, pageout ? " swap" : "");
}

/* The table of one kind of extra thread; returns how many pairs it has. */
static size_t extra_table(const struct data *d, const struct extra *e,
			  int *any_file, FILE *out)
{
	size_t k, v, n = 0;
	int anon, want_anon, file;
	struct table t;
	double a, b;
	char *map;
	long w;

	table_init(&t, "llllrrr");
	table_row(&t);
	table_cell(&t, "kernel");
	table_cell(&t, "variant");
	table_cell(&t, "against");
	table_cell(&t, "mapping");
	table_cell(&t, "%s", e->column);
	table_cell(&t, "without");
	table_cell(&t, "kept");
	for (k = 0; k < d->nk; k++)
		for (want_anon = 1; want_anon >= 0; want_anon--)
			for (v = 0; v < d->nvariants; v++) {
				w = without(d, v, e);
				if (w < 0)
					continue;
				map = mapping(data_config(d, v), &anon, &file);
				if (anon != want_anon) {
					free(map);
					continue;
				}
				*any_file |= file;
				n++;
				a = report_hmean(d, k, v, "faults_per_sec");
				b = report_hmean(d, k, w, "faults_per_sec");
				table_row(&t);
				table_cell(&t, "%s", d->k[k].name);
				table_cell(&t, "%s", d->variants[v]);
				table_cell(&t, "%s", d->variants[w]);
				table_cell(&t, "%s", map);
				free(map);
				if (isnan(a) || isnan(b) || b <= 0) {
					table_cell(&t, "-");
					table_cell(&t, "-");
					table_cell(&t, "-");
				} else {
					table_cell(&t, "%.2f", a);
					table_cell(&t, "%.2f", b);
					table_cell(&t, "%.1f%%", 100 * a / b);
				}
			}
	if (n)
		fprintf(out, "%s\n", e->title);
	table_print(&t, "", n ? out : NULL);
	if (n)
		fputc('\n', out);
	return n;
}

void report_extra(const struct data *d, FILE *out)
{
	int file = 0;
	size_t writers = extra_table(d, &extras[0], &file, out);
	size_t busy = extra_table(d, &extras[1], &file, out);

	if (writers || busy)
		fputs("kept: faults/s Hmean with the extra thread in % of the same\n"
		      "faults without it (same threads, madvise mode, VMA layout,\n"
		      "mapping and access). mapping: backing (anon, memfd, dir),\n"
		      "private or shared, read or write; swap: paged out to swap\n"
		      "every round and faulted back in.\n",
		      out);
	if (file)
		fputs("A read fault on a file maps up to 16 cached pages at once\n"
		      "(fault-around): compare what each mapping keeps, not the\n"
		      "faults/s of one mapping with another's.\n",
		      out);
	if (busy)
		fputs("The busy thread takes no lock and makes no system call: its\n"
		      "cost is that of a second busy CPU alone, the most a writer\n"
		      "variant can keep.\n",
		      out);
	if (writers || busy)
		fputc('\n', out);
}
