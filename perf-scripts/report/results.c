// SPDX-License-Identifier: GPL-2.0
/*
 * Read one kernel's result directory; see results.h for the layout.
 * Anything else in the directories (perf-stat.txt, logs) is ignored.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "results.h"
#include "util.h"

/* RESULT keys that describe the configuration rather than the outcome. */
static const char *const config_keys[] = {
	"threads", "madvise", "vma", "thp", "writer", "busy", "fault_length",
	"oversubscribe", "backing", "mapping", "access", "drop",
};

int name_cmp(const char *a, const char *b)
{
	return strverscmp(a, b);
}

static int name_cmp_qsort(const void *a, const void *b)
{
	return name_cmp(*(char *const *)a, *(char *const *)b);
}

static void samples_add(struct samples *s, double v)
{
	s->v = grow(s->v, sizeof(*s->v), s->n, &s->cap);
	s->v[s->n++] = v;
}

static int is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

/* The sorted names of the subdirectories of dir, NULL-terminated. */
static char **subdirs(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL, *path;
	size_t n = 0, cap = 0;

	if (!d)
		fatal("%s: %s", dir, strerror(errno));
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' ||
		    strncmp(de->d_name, prefix, strlen(prefix)))
			continue;
		path = path_join(dir, de->d_name);
		if (is_dir(path)) {
			names = grow(names, sizeof(*names), n + 1, &cap);
			names[n++] = xstrdup(de->d_name);
		}
		free(path);
	}
	closedir(d);
	names = grow(names, sizeof(*names), n + 1, &cap);
	names[n] = NULL;
	qsort(names, n, sizeof(*names), name_cmp_qsort);
	return names;
}

static void free_names(char **names)
{
	char **p;

	for (p = names; *p; p++)
		free(*p);
	free(names);
}

static int is_config_key(const char *key, size_t len)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(config_keys); i++)
		if (strlen(config_keys[i]) == len &&
		    !strncmp(key, config_keys[i], len))
			return 1;
	return 0;
}

/* The value of key in a RESULT line as a number; 0 if found, else -1. */
static int result_value(const char *line, const char *key, double *val)
{
	size_t len = strlen(key);
	const char *p = line;
	char *end;

	while ((p = strstr(p, key))) {
		if ((p == line || p[-1] == ' ' || p[-1] == '\t') &&
		    p[len] == '=') {
			*val = strtod(p + len + 1, &end);
			return end == p + len + 1 ? -1 : 0;
		}
		p += len;
	}
	return -1;
}

/* "threads=2 madvise=serial vma=same thp=off writer=0" from a RESULT line. */
static char *result_config(const char *line)
{
	char *copy = xstrdup(line), *tok, *save, *eq;
	char *config = xstrdup(""), *next;

	for (tok = strtok_r(copy, " \t\r", &save); tok;
	     tok = strtok_r(NULL, " \t\r", &save)) {
		eq = strchr(tok, '=');
		if (!eq || !is_config_key(tok, eq - tok))
			continue;
		next = xasprintf("%s%s%s", config, *config ? " " : "", tok);
		free(config);
		config = next;
	}
	free(copy);
	return config;
}

/*
 * A RESULT line may follow other text on the same line (a console
 * timestamp, say), so look for the word anywhere.
 */
static const char *find_result(const char *line)
{
	const char *p = line;

	while ((p = strstr(p, "RESULT "))) {
		if (p == line || p[-1] == ' ' || p[-1] == '\t' ||
		    p[-1] == ']' || p[-1] == '\r')
			return p + strlen("RESULT ");
		p++;
	}
	return NULL;
}

static void add_result(struct variant *v, const char *res)
{
	double faults, writer, ops;

	if (result_value(res, "faults_per_sec", &faults))
		return;
	samples_add(&v->faults, faults);
	if (!v->config)
		v->config = result_config(res);
	if (!result_value(res, "writer", &writer) && writer != 0 &&
	    !result_value(res, "writer_ops_per_sec", &ops))
		samples_add(&v->writer, ops);
}

static void read_bench(struct variant *v, const char *path)
{
	char *text = read_file(path), *line, *save;
	const char *res;

	if (!text)
		return;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		res = find_result(line);
		if (res)
			add_result(v, res);
	}
	free(text);
}

static void vm_add(struct variant *v, const char *name, double delta)
{
	size_t i;

	for (i = 0; i < v->nvm; i++) {
		if (!strcmp(v->vm[i].name, name)) {
			v->vm[i].sum += delta;
			return;
		}
	}
	v->vm = grow(v->vm, sizeof(*v->vm), v->nvm, &v->vm_cap);
	v->vm[v->nvm].name = xstrdup(name);
	v->vm[v->nvm++].sum = delta;
}

static void read_vmstat(struct variant *v, const char *path)
{
	char *text = read_file(path), *line, *save, name[128];
	double delta;

	if (!text)
		return;
	v->vm_boots++;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (sscanf(line, " %127s %lf", name, &delta) == 2)
			vm_add(v, name, delta);
	free(text);
}

/* The mean of s's samples from index first on, added to means if any. */
static void add_boot_mean(struct samples *means, const struct samples *s,
			  size_t first)
{
	double sum = 0;
	size_t i;

	if (s->n <= first)
		return;
	for (i = first; i < s->n; i++)
		sum += s->v[i];
	samples_add(means, sum / (s->n - first));
}

static void read_boot(struct variant *v, const char *boot_dir)
{
	size_t faults = v->faults.n, writer = v->writer.n;
	char *path;

	path = path_join(boot_dir, "bench.out");
	read_bench(v, path);
	free(path);
	add_boot_mean(&v->faults_boot, &v->faults, faults);
	add_boot_mean(&v->writer_boot, &v->writer, writer);
	path = path_join(boot_dir, "vmstat.delta");
	read_vmstat(v, path);
	free(path);
}

static void read_variant(struct variant *v, const char *dir)
{
	char **boots = subdirs(dir, "boot-"), **b, *path;

	for (b = boots; *b; b++) {
		path = path_join(dir, *b);
		read_boot(v, path);
		free(path);
		v->boots++;
	}
	free_names(boots);
	if (!v->boots)
		return;
	path = path_join(dir, "lock.txt");
	v->has_locks = !lock_table_read(path, &v->locks);
	free(path);
}

/* The first line of a small file, stripped, or NULL. */
static char *read_line(const char *path)
{
	char *text = read_file(path), *line;

	if (!text)
		return NULL;
	line = xstrdup(strip(strtok(text, "\n") ?: ""));
	free(text);
	return line;
}

static size_t total_results(const struct kernel *k)
{
	size_t i, n = 0;

	for (i = 0; i < k->nvariants; i++)
		n += k->variants[i].faults.n;
	return n;
}

static void variant_free(struct variant *v)
{
	size_t i;

	free(v->name);
	free(v->config);
	free(v->faults.v);
	free(v->writer.v);
	free(v->faults_boot.v);
	free(v->writer_boot.v);
	for (i = 0; i < v->nvm; i++)
		free(v->vm[i].name);
	free(v->vm);
	lock_table_free(&v->locks);
}

/* results/<timestamp>/ rather than one of its kernel directories? */
static int looks_like_run(const char *dir)
{
	char *path = path_join(dir, "conditions");
	struct stat st;
	int ret = !stat(path, &st);

	free(path);
	return ret;
}

void kernel_load(struct kernel *k, const char *dir)
{
	char **names, **p, *path;
	struct variant *v;

	memset(k, 0, sizeof(*k));
	k->dir = xstrdup(dir);
	k->name = base_name(dir);
	path = path_join(dir, "uname");
	k->uname = read_line(path);
	free(path);
	names = subdirs(dir, "");
	for (p = names; *p; p++) {
		k->variants = grow(k->variants, sizeof(*k->variants),
				   k->nvariants, &k->cap);
		v = &k->variants[k->nvariants++];
		memset(v, 0, sizeof(*v));
		v->name = xstrdup(*p);
		path = path_join(dir, *p);
		read_variant(v, path);
		free(path);
		/* Not a variant (a log directory, say): forget it. */
		if (!v->boots) {
			variant_free(v);
			k->nvariants--;
		}
	}
	free_names(names);
	if (!total_results(k))
		fatal("%s: no RESULT lines in %s/*/boot-*/bench.out%s", dir, dir,
		      looks_like_run(dir) ?
		      " (a run's directory? name its kernel directories)" : "");
}

const struct variant *kernel_variant(const struct kernel *k, const char *name)
{
	size_t i;

	for (i = 0; i < k->nvariants; i++)
		if (!strcmp(k->variants[i].name, name))
			return &k->variants[i];
	return NULL;
}

int variant_vm_mean(const struct variant *v, const char *name, double *mean)
{
	size_t i;

	for (i = 0; i < v->nvm; i++) {
		if (!strcmp(v->vm[i].name, name)) {
			*mean = v->vm[i].sum / v->vm_boots;
			return 0;
		}
	}
	return -1;
}

void kernel_free(struct kernel *k)
{
	size_t i;

	for (i = 0; i < k->nvariants; i++)
		variant_free(&k->variants[i]);
	free(k->variants);
	free(k->dir);
	free(k->name);
	free(k->uname);
}
