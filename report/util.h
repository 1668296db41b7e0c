/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small helpers shared by the report tool: allocation that cannot fail
 * (a report tool has nothing useful to do without memory) and the one
 * way errors about the input are reported.
 */
#ifndef REPORT_UTIL_H
#define REPORT_UTIL_H

#include <stddef.h>

/* Exit status for bad usage or unusable input. */
#define EXIT_USAGE	2
/* Exit status when the report was printed but the plot was not made. */
#define EXIT_PLOT	3

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define __printf(a, b)	__attribute__((format(printf, a, b)))
#define __noreturn	__attribute__((noreturn))

extern const char *prog;

__printf(1, 2) __noreturn void fatal(const char *fmt, ...);
void *xrealloc(void *ptr, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
__printf(1, 2) char *xasprintf(const char *fmt, ...);

/* Grow *arr (of *cap elements of size elem) so that it holds n + 1. */
void *grow(void *arr, size_t elem, size_t n, size_t *cap);

/* A path joined from a directory and a name; caller frees. */
char *path_join(const char *dir, const char *name);

/* The directory that holds path: "a/b/c/" -> "a/b", "c" -> "."; caller frees. */
char *parent_dir(const char *path);

/* The last component of path: "a/b/c/" -> "c"; caller frees. */
char *base_name(const char *path);

/* The whole of a small text file, or NULL if it cannot be read. */
char *read_file(const char *path);

/* s without leading and trailing white space, modified in place. */
char *strip(char *s);

#endif
