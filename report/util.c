// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by the report tools (report, paired).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* The program's name in its messages; paired sets its own. */
const char *prog = "report";

/*
 * Problems with the input are the user's to fix: one line naming the
 * problem, and the usage exit status so scripts can tell it from a crash.
 */
void fatal(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: error: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EXIT_USAGE);
}

static void out_of_memory(void)
{
	fprintf(stderr, "%s: error: out of memory\n", prog);
	exit(1);
}

void *xrealloc(void *ptr, size_t size)
{
	ptr = realloc(ptr, size ? size : 1);
	if (!ptr)
		out_of_memory();
	return ptr;
}

char *xstrdup(const char *s)
{
	char *d = strdup(s);

	if (!d)
		out_of_memory();
	return d;
}

char *xstrndup(const char *s, size_t n)
{
	char *d = strndup(s, n);

	if (!d)
		out_of_memory();
	return d;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int ret;

	va_start(ap, fmt);
	ret = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (ret < 0)
		out_of_memory();
	return s;
}

void *grow(void *arr, size_t elem, size_t n, size_t *cap)
{
	if (n < *cap)
		return arr;
	*cap = *cap ? *cap * 2 : 8;
	return xrealloc(arr, *cap * elem);
}

char *path_join(const char *dir, const char *name)
{
	size_t len = strlen(dir);

	if (len && dir[len - 1] == '/')
		return xasprintf("%s%s", dir, name);
	return xasprintf("%s/%s", dir, name);
}

/* path without trailing slashes (but "/" stays "/"); caller frees. */
static char *trim_slashes(const char *path)
{
	char *copy = xstrdup(path);
	size_t len = strlen(copy);

	while (len > 1 && copy[len - 1] == '/')
		copy[--len] = '\0';
	return copy;
}

char *parent_dir(const char *path)
{
	char *copy = trim_slashes(path), *slash = strrchr(copy, '/'), *dir;

	if (!slash)
		dir = xstrdup(".");
	else if (slash == copy)
		dir = xstrdup("/");
	else
		dir = xstrndup(copy, slash - copy);
	free(copy);
	return dir;
}

char *base_name(const char *path)
{
	char *copy = trim_slashes(path), *slash = strrchr(copy, '/'), *name;

	name = xstrdup(slash && slash[1] ? slash + 1 : copy);
	free(copy);
	return name;
}

char *read_file(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0, got;

	if (!f)
		return NULL;
	do {
		buf = grow(buf, 1, len + 4096, &cap);
		got = fread(buf + len, 1, cap - len - 1, f);
		len += got;
	} while (got);
	buf[len] = '\0';
	fclose(f);
	return buf;
}

char *strip(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}
