// SPDX-License-Identifier: GPL-2.0
/*
 * What an mmap_lock writer costs the faulting threads: for every variant
 * that ran a writer thread and a variant that ran the same configuration
 * without one, the faults/s Hmean with the writer in % of the one without,
 * per kernel. Stock 6.1 keeps about a third; a fault path that does not
 * wait for mmap_lock should keep nearly all of it. One table, a row per
 * kernel and pair: anonymous memory (writer-Nt against single-1t or
 * serial-Nt) first, then the other mappings (fileread-writer-Nt against
 * fileread-Nt: read faults on cached file pages), next to each other for
 * each kernel. The same for a variant whose extra thread only spins in
 * user space ("busy=1"): what a second busy CPU costs by itself, the most
 * a writer variant can keep.
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

/* A variant with the extra thread, the one without it, and their mapping. */
struct pair {
	const char *with;
	const char *without;
	char *mapping;		/* "anon private write", "memfd shared read" */
	int anon;		/* anonymous, not paged out: listed first */
	int file;		/* read faults that fault-around serves */
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

/*
 * The value of key in a configuration ("backing=memfd ..."), or def when
 * it has none: results from before the key existed.
 */
static char *config_value(const char *config, const char *key, const char *def)
{
	size_t len = strlen(key);
	const char *p = config, *end;

	while ((p = strstr(p, key))) {
		if ((p == config || p[-1] == ' ') && p[len] == '=') {
			p += len + 1;
			end = strchrnul(p, ' ');
			return xstrndup(p, end - p);
		}
		p += len;
	}
	return xstrdup(def);
}

static void pair_init(struct pair *p, const struct report *r,
		      const char *with, const char *without)
{
	const char *config = report_variant_config(r, with);
	char *backing = config_value(config, "backing", "anon");
	char *mapping = config_value(config, "mapping", "private");
	char *access = config_value(config, "access", "write");
	char *drop = config_value(config, "drop", "dontneed");
	int pageout = !strcmp(drop, "pageout");

	p->with = with;
	p->without = without;
	p->mapping = xasprintf("%s %s %s%s", backing, mapping, access,
			       pageout ? " swap" : "");
	p->anon = !strcmp(backing, "anon") && !pageout;
	/* fault-around: read faults on a file or shared memory */
	p->file = (strcmp(backing, "anon") || !strcmp(mapping, "shared")) &&
		  !strcmp(access, "read");
	free(drop);
	free(backing);
	free(mapping);
	free(access);
}

static double faults_hmean(const struct kernel *k, const char *variant)
{
	const struct variant *v = kernel_variant(k, variant);

	if (!v || !v->faults.n)
		return NAN;
	return stats_hmean(v->faults.v, v->faults.n);
}

static size_t max_len(size_t w, const char *s)
{
	return strlen(s) > w ? strlen(s) : w;
}

static void extra_row(const struct kernel *k, const struct pair *p,
		      const size_t *w, FILE *out)
{
	double a = faults_hmean(k, p->with), b = faults_hmean(k, p->without);

	fprintf(out, "%-*s  %-*s  %-*s  %-*s", (int)w[0], k->name, (int)w[1],
		p->with, (int)w[2], p->without, (int)w[3], p->mapping);
	if (isnan(a) || isnan(b) || b <= 0) {
		fprintf(out, "  %14s  %14s  %6s\n", "-", "-", "-");
		return;
	}
	fprintf(out, "  %14.2f  %14.2f  %5.1f%%\n", a, b, 100 * a / b);
}

/*
 * Rows ordered by kernel, then anonymous pairs before the others, each
 * group in report order.
 */
static void extra_table(const struct report *r, const struct extra *e,
			const struct pair *pairs, size_t n, FILE *out)
{
	size_t i, j, w[4] = { strlen("kernel"), strlen("variant"),
			      strlen("against"), strlen("mapping") };
	int anon;

	for (i = 0; i < r->nk; i++)
		w[0] = max_len(w[0], r->k[i].name);
	for (j = 0; j < n; j++) {
		w[1] = max_len(w[1], pairs[j].with);
		w[2] = max_len(w[2], pairs[j].without);
		w[3] = max_len(w[3], pairs[j].mapping);
	}
	fprintf(out, "%s\n", e->title);
	fprintf(out, "%-*s  %-*s  %-*s  %-*s  %14s  %14s  %6s\n", (int)w[0],
		"kernel", (int)w[1], "variant", (int)w[2], "against", (int)w[3],
		"mapping", e->column, "without", "kept");
	for (i = 0; i < r->nk; i++)
		for (anon = 1; anon >= 0; anon--)
			for (j = 0; j < n; j++)
				if (pairs[j].anon == anon)
					extra_row(&r->k[i], &pairs[j], w, out);
	fputc('\n', out);
}

/* The table of one kind of extra thread; how many pairs it has. */
static size_t extra_tables(const struct report *r, const struct extra *e,
			   int *file, FILE *out)
{
	struct pair *pairs = NULL;
	const char *without;
	char *config;
	size_t i, n = 0, cap = 0;

	for (i = 0; i < r->nvariants; i++) {
		config = without_extra(report_variant_config(r, r->variants[i]), e);
		if (!config)
			continue;
		without = variant_with_config(r, config);
		free(config);
		if (!without)
			continue;
		pairs = grow(pairs, sizeof(*pairs), n, &cap);
		pair_init(&pairs[n], r, r->variants[i], without);
		*file |= pairs[n].file;
		n++;
	}
	if (n)
		extra_table(r, e, pairs, n, out);
	for (i = 0; i < n; i++)
		free(pairs[i].mapping);
	free(pairs);
	return n;
}

void report_writer(const struct report *r, FILE *out)
{
	int file = 0;
	size_t writers = extra_tables(r, &extras[0], &file, out);
	size_t busy = extra_tables(r, &extras[1], &file, out);

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
