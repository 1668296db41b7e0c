/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the report reads: per kernel directory (results/<timestamp>/<kernel>)
 * its uname and, per <variant>/boot-<i>/, the samples and bench-config files that
 * report/extract wrote after the boot.
 */
#ifndef REPORT_SAMPLES_H
#define REPORT_SAMPLES_H

#include <stddef.h>

struct sample {
	size_t metric;		/* index into data.metrics */
	double v;
};

/* A boot's configuration: its config file's key=value lines, in order. */
struct config {
	char **key, **value;
	size_t n;
};

struct boot {
	size_t kernel, variant;
	struct config config;
	struct sample *s;	/* in the file's order */
	size_t n;
};

struct kernel {
	char *dir, *name, *uname;	/* uname NULL when not recorded */
};

struct data {
	struct kernel *k;	/* k[0] is the baseline */
	size_t nk;
	char **variants;	/* sorted so that "x-2t" comes before "x-16t" */
	size_t nvariants;
	char **metrics;		/* in order of first appearance */
	size_t nmetrics;
	struct boot *boots;
	size_t nboots;
};

/*
 * One line of a samples file: metric, run (0 for "-": once a boot) and
 * value; the file's path and the line's number for messages.
 */
typedef void (*sample_fn)(void *ctx, const char *metric, unsigned long run,
			  double value, const char *path, int lineno);

/*
 * Every "metric run value" line of the samples file path to fn; a line of
 * another form is fatal (status 2), naming the file and line. -1 (errno
 * set) when the file cannot be read, else 0.
 */
int samples_read(const char *path, sample_fn fn, void *ctx);

/* Load the kernel directories; unusable input is fatal (status 2). */
void data_load(struct data *d, char **dirs, size_t n);

/* A variant's configuration, as the first kernel that ran it recorded it. */
const struct config *data_config(const struct data *d, size_t variant);

/* The value of key, or NULL when the configuration does not have it. */
const char *config_get(const struct config *c, const char *key);

/* The configuration as one line, "threads=2 madvise=serial ..." (freed by
 * the caller).
 */
char *config_line(const struct config *c);

/* Are a and b the same but for key, whose value is a_value in a and
 * b_value in b?
 */
int config_differ_in(const struct config *a, const struct config *b,
		     const char *key, const char *a_value, const char *b_value);

/* The index of a metric, or -1 when no boot has it. */
long data_metric(const struct data *d, const char *name);

/*
 * The samples of a metric of one kernel and variant into *v (caller
 * frees): every one with per_boot 0, else the mean of each boot that has
 * it. Returns how many.
 */
size_t data_values(const struct data *d, size_t k, size_t variant,
		   const char *metric, int per_boot, double **v);

/* The sum of every sample of a metric of one kernel and variant; NaN without any. */
double data_sum(const struct data *d, size_t k, size_t variant, const char *metric);

/* Boots of kernel k and variant with any metric starting with prefix. */
size_t data_boots(const struct data *d, size_t k, size_t variant,
		  const char *prefix);

/* Does any kernel have a boot of variant with a metric starting with prefix? */
int data_any_boot(const struct data *d, size_t variant, const char *prefix);

#endif
