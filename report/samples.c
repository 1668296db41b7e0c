// SPDX-License-Identifier: GPL-2.0
/*
 * Read the samples of kernel directories; see samples.h for the layout.
 * Anything else in the directories (the raw output, logs) is ignored.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "samples.h"
#include "util.h"

static int name_cmp(const void *a, const void *b)
{
	return strverscmp(*(char *const *)a, *(char *const *)b);
}

/* The index of name in *names, added at the end when missing. */
static size_t intern(char ***names, size_t *n, const char *name)
{
	size_t i, cap = *n;

	for (i = 0; i < *n; i++)
		if (!strcmp((*names)[i], name))
			return i;
	*names = grow(*names, sizeof(**names), *n, &cap);
	(*names)[*n] = xstrdup(name);
	return (*n)++;
}

/* The sorted subdirectories of dir whose names start with prefix. */
static size_t subdirs(const char *dir, const char *prefix, char ***names)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	struct stat st;
	size_t n = 0;
	char *path;

	if (!d)
		fatal("%s: %s", dir, strerror(errno));
	*names = NULL;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || strncmp(de->d_name, prefix, strlen(prefix)))
			continue;
		path = path_join(dir, de->d_name);
		if (!stat(path, &st) && S_ISDIR(st.st_mode))
			intern(names, &n, de->d_name);
		free(path);
	}
	closedir(d);
	if (n)
		qsort(*names, n, sizeof(**names), name_cmp);
	return n;
}

static void free_names(char **names, size_t n)
{
	while (n--)
		free(names[n]);
	free(names);
}

/* "metric run value" lines; run is a number or "-". */
int samples_read(const char *path, sample_fn fn, void *ctx)
{
	char *text = read_file(path);
	char *line, *save, metric[256], run[16], value[64], *end, extra;
	int lineno = 0;
	double v;

	if (!text)
		return -1;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save), lineno++) {
		if (line[0] == '#')
			continue;
		if (sscanf(line, "%255s %15s %63s %c", metric, run, value, &extra) != 3 ||
		    (strcmp(run, "-") && strspn(run, "0123456789") != strlen(run)))
			fatal("%s:%d: not a line \"metric run value\"", path, lineno + 1);
		v = strtod(value, &end);
		if (*end || !isfinite(v))
			fatal("%s:%d: '%s' is not a finite number", path, lineno + 1, value);
		fn(ctx, metric, strcmp(run, "-") ? strtoul(run, NULL, 10) : 0, v, path,
		   lineno + 1);
	}
	free(text);
	return 0;
}

struct boot_ctx {
	struct data *d;
	struct boot *b;
	size_t cap;
};

static void add_sample(void *ctx, const char *metric, unsigned long run,
		       double value, const char *path, int lineno)
{
	struct boot_ctx *c = ctx;
	struct boot *b = c->b;

	(void)run, (void)path, (void)lineno;
	b->s = grow(b->s, sizeof(*b->s), b->n, &c->cap);
	b->s[b->n].metric = intern(&c->d->metrics, &c->d->nmetrics, metric);
	b->s[b->n++].v = value;
}

static void read_samples(struct data *d, struct boot *b, const char *dir)
{
	char *path = path_join(dir, "samples");
	struct boot_ctx c = { .d = d, .b = b };

	if (samples_read(path, add_sample, &c))
		fatal("%s: %s (report/extract writes it from the boot's output)",
		      path, strerror(errno));
	free(path);
}

/* The boot's config file: key=value lines, as extract wrote them. */
static void read_config(const char *dir, struct config *c)
{
	char *path = path_join(dir, "bench-config"), *text = read_file(path);
	char *line, *next, *eq;
	size_t cap = 0, vcap;

	if (!text)
		fatal("%s: %s", path, strerror(errno));
	for (line = text; *line; line = next) {
		next = strchrnul(line, '\n');
		if (*next)
			*next++ = '\0';
		eq = strchr(line, '=');
		if (!eq || eq == line)
			fatal("%s: '%s' is not key=value", path, line);
		*eq = '\0';
		vcap = cap;
		c->key = grow(c->key, sizeof(*c->key), c->n, &cap);
		c->value = grow(c->value, sizeof(*c->value), c->n, &vcap);
		c->key[c->n] = xstrdup(line);
		c->value[c->n++] = xstrdup(eq + 1);
	}
	free(text);
	free(path);
}

const char *config_get(const struct config *c, const char *key)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (!strcmp(c->key[i], key))
			return c->value[i];
	return NULL;
}

char *config_line(const struct config *c)
{
	char *s = xstrdup(""), *next;
	size_t i;

	for (i = 0; i < c->n; i++) {
		next = xasprintf("%s%s%s=%s", s, i ? " " : "", c->key[i], c->value[i]);
		free(s);
		s = next;
	}
	return s;
}

int config_differ_in(const struct config *a, const struct config *b,
		     const char *key, const char *a_value, const char *b_value)
{
	size_t i;
	int found = 0;

	if (a->n != b->n)
		return 0;
	for (i = 0; i < a->n; i++) {
		if (strcmp(a->key[i], b->key[i]))
			return 0;
		if (!strcmp(a->key[i], key)) {
			if (strcmp(a->value[i], a_value) || strcmp(b->value[i], b_value))
				return 0;
			found = 1;
		} else if (strcmp(a->value[i], b->value[i])) {
			return 0;
		}
	}
	return found;
}

static void load_variant(struct data *d, size_t k, const char *dir,
			 const char *name)
{
	char **boots, *vdir = path_join(dir, name), *bdir;
	size_t nb = subdirs(vdir, "boot-", &boots), i, v, cap = d->nboots;
	struct boot *b;

	/* Not a variant (a log directory, say): nothing to read. */
	if (!nb)
		goto out;
	v = intern(&d->variants, &d->nvariants, name);
	for (i = 0; i < nb; i++) {
		d->boots = grow(d->boots, sizeof(*d->boots), d->nboots, &cap);
		b = &d->boots[d->nboots++];
		*b = (struct boot){ .kernel = k, .variant = v };
		bdir = path_join(vdir, boots[i]);
		read_samples(d, b, bdir);
		read_config(bdir, &b->config);
		free(bdir);
	}
out:
	free_names(boots, nb);
	free(vdir);
}

static void load_kernel(struct data *d, size_t k, const char *dir)
{
	char **names, *path = path_join(dir, "uname"), *text = read_file(path);
	size_t n = subdirs(dir, "", &names), i, before = d->nboots;

	d->k[k].dir = xstrdup(dir);
	d->k[k].name = base_name(dir);
	d->k[k].uname = text ? xstrdup(strip(strtok(text, "\n") ?: "")) : NULL;
	for (i = 0; i < n; i++)
		load_variant(d, k, dir, names[i]);
	free(path);
	path = path_join(dir, "conditions");
	if (d->nboots == before)
		fatal("%s: no results in %s/*/boot-*/%s", dir, dir,
		      access(path, F_OK) ? "" :
		      " (a run's directory? name its kernel directories)");
	free_names(names, n);
	free(text);
	free(path);
}

/* Variants in report order: boots renumbered to match. */
static void sort_variants(struct data *d)
{
	char **sorted = xrealloc(NULL, d->nvariants * sizeof(*sorted));
	size_t *to = xrealloc(NULL, d->nvariants * sizeof(*to)), i, j;

	memcpy(sorted, d->variants, d->nvariants * sizeof(*sorted));
	qsort(sorted, d->nvariants, sizeof(*sorted), name_cmp);
	for (i = 0; i < d->nvariants; i++)
		for (j = 0; j < d->nvariants; j++)
			if (sorted[j] == d->variants[i])
				to[i] = j;
	for (i = 0; i < d->nboots; i++)
		d->boots[i].variant = to[d->boots[i].variant];
	free(d->variants);
	d->variants = sorted;
	free(to);
}

void data_load(struct data *d, char **dirs, size_t n)
{
	size_t i;

	memset(d, 0, sizeof(*d));
	d->nk = n;
	d->k = xrealloc(NULL, n * sizeof(*d->k));
	for (i = 0; i < n; i++)
		load_kernel(d, i, dirs[i]);
	sort_variants(d);
}

const struct config *data_config(const struct data *d, size_t variant)
{
	static const struct config none;
	size_t i;

	for (i = 0; i < d->nboots; i++)
		if (d->boots[i].variant == variant)
			return &d->boots[i].config;
	return &none;
}

long data_metric(const struct data *d, const char *name)
{
	size_t i;

	for (i = 0; i < d->nmetrics; i++)
		if (!strcmp(d->metrics[i], name))
			return i;
	return -1;
}

size_t data_values(const struct data *d, size_t k, size_t variant,
		   const char *metric, int per_boot, double **v)
{
	long m = data_metric(d, metric);
	size_t i, j, n = 0, cap = 0, in_boot;
	const struct boot *b;
	double sum;

	*v = NULL;
	for (i = 0; m >= 0 && i < d->nboots; i++) {
		b = &d->boots[i];
		if (b->kernel != k || b->variant != variant)
			continue;
		for (j = 0, in_boot = 0, sum = 0; j < b->n; j++) {
			if (b->s[j].metric != (size_t)m)
				continue;
			in_boot++;
			sum += b->s[j].v;
			if (per_boot)
				continue;
			*v = grow(*v, sizeof(**v), n, &cap);
			(*v)[n++] = b->s[j].v;
		}
		if (per_boot && in_boot) {
			*v = grow(*v, sizeof(**v), n, &cap);
			(*v)[n++] = sum / in_boot;
		}
	}
	return n;
}

double data_sum(const struct data *d, size_t k, size_t variant, const char *metric)
{
	double *x, s = 0;
	size_t n = data_values(d, k, variant, metric, 0, &x), i;

	for (i = 0; i < n; i++)
		s += x[i];
	free(x);
	return n ? s : NAN;
}

size_t data_boots(const struct data *d, size_t k, size_t variant,
		  const char *prefix)
{
	size_t i, j, n = 0, len = strlen(prefix);
	const struct boot *b;

	for (i = 0; i < d->nboots; i++) {
		b = &d->boots[i];
		if (b->kernel != k || b->variant != variant)
			continue;
		for (j = 0; j < b->n; j++)
			if (!strncmp(d->metrics[b->s[j].metric], prefix, len))
				break;
		n += j < b->n;
	}
	return n;
}

int data_any_boot(const struct data *d, size_t variant, const char *prefix)
{
	size_t k;

	for (k = 0; k < d->nk; k++)
		if (data_boots(d, k, variant, prefix))
			return 1;
	return 0;
}
