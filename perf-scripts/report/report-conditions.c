// SPDX-License-Identifier: GPL-2.0
/*
 * The Conditions block: what the run was (from the conditions file the
 * harness writes next to the kernel directories) and which kernels ran.
 * A reader of the numbers needs both before the numbers mean anything.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "util.h"

struct kv {
	char *key, *value;
};

struct kvs {
	struct kv *v;
	size_t n, cap;
};

static void kv_add(struct kvs *l, char *key, char *value)
{
	l->v = grow(l->v, sizeof(*l->v), l->n, &l->cap);
	l->v[l->n].key = key;
	l->v[l->n++].value = value;
}

/* "key: value" lines; a line without a colon is kept whole as a key. */
static void read_conditions(struct kvs *l, const char *path)
{
	char *text = read_file(path), *line, *save, *colon;

	if (!text)
		return;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		line = strip(line);
		if (!*line || *line == '#')
			continue;
		colon = strchr(line, ':');
		if (colon)
			*colon++ = '\0';
		kv_add(l, xstrdup(strip(line)),
		       xstrdup(colon ? strip(colon) : ""));
	}
	free(text);
}

static void add_kernels(struct kvs *l, const struct report *r,
			const char *results)
{
	char *parent;
	size_t i;

	for (i = 0; i < r->nk; i++) {
		kv_add(l, xasprintf("uname %s", r->k[i].name),
		       xstrdup(r->k[i].uname ?: "- (no uname file)"));
		parent = parent_dir(r->k[i].dir);
		/* Conditions come from the baseline's run only: say so. */
		if (strcmp(parent, results))
			kv_add(l, xasprintf("results %s", r->k[i].name),
			       xasprintf("%s (its conditions are not shown)",
					 parent));
		free(parent);
	}
}

static void print_kvs(const struct kvs *l, FILE *out)
{
	size_t i, w = 0;

	for (i = 0; i < l->n; i++)
		if (strlen(l->v[i].key) > w)
			w = strlen(l->v[i].key);
	for (i = 0; i < l->n; i++)
		fprintf(out, "  %-*s  %s\n", (int)w, l->v[i].key,
			l->v[i].value);
}

static void free_kvs(struct kvs *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		free(l->v[i].key);
		free(l->v[i].value);
	}
	free(l->v);
}

char *report_condition(const struct report *r, const char *key)
{
	char *results = parent_dir(r->k[0].dir);
	char *path = path_join(results, "conditions");
	struct kvs l = { 0 };
	char *value = NULL;
	size_t i;

	read_conditions(&l, path);
	for (i = 0; i < l.n && !value; i++)
		if (!strcmp(l.v[i].key, key))
			value = xstrdup(l.v[i].value);
	free_kvs(&l);
	free(path);
	free(results);
	return value;
}

void report_conditions(const struct report *r, FILE *out)
{
	char *results = parent_dir(r->k[0].dir);
	char *path = path_join(results, "conditions");
	struct kvs l = { 0 };

	kv_add(&l, xstrdup("results"), xstrdup(results));
	read_conditions(&l, path);
	if (l.n == 1)
		kv_add(&l, xstrdup("conditions"),
		       xasprintf("- (no %s)", path));
	add_kernels(&l, r, results);
	fputs("Conditions\n", out);
	print_kvs(&l, out);
	fputc('\n', out);
	free_kvs(&l);
	free(path);
	free(results);
}
