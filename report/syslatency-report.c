// SPDX-License-Identifier: GPL-2.0
/*
 * syslatency-report: the tables of a run directory of syslatency runs.
 *
 * RUNDIR/conditions holds key=value lines, among them kernels= and holds=
 * (space-separated lists, in the order to print) and boots=; each boot R
 * of a kernel left RUNDIR/KERNEL/HOLD/boot-R/samples (what report/extract
 * read from syslatency's RESULT line, through the loader report/report
 * and paired use) and hist (its --histogram file).
 *
 * Table 1 is the wake-up latency per kernel and hold, its percentiles from
 * the histograms merged over the boots, and the change of the per-boot
 * mean_ns and p99_ns against the first kernel of the hold, marked when
 * Welch's t-test over the boots finds it significant. Table 2 is the
 * reclaim that ran during the measurement: vmstat deltas, mean per boot.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "samples.h"
#include "stats.h"
#include "table.h"
#include "util.h"

#define PROG		"syslatency-report"
#define SIGNIFICANT	0.05

static const char usage[] =
	"Usage: " PROG " [--partial] [--plot-data DIR] RUNDIR\n"
	"Tables of a run directory of bench/syslatency runs: RUNDIR/conditions\n"
	"(key=value lines, kernels=, holds= and boots= among them) and for each\n"
	"boot R RUNDIR/KERNEL/HOLD/boot-R/samples (report/extract's reading of\n"
	"syslatency's RESULT line) and hist (its --histogram file). Table 1, per\n"
	"kernel and hold: wake-ups, mean, percentiles of the histograms merged over\n"
	"the boots, max, and the change of the per-boot mean_ns and p99_ns against\n"
	"the hold's first kernel ('*': Welch's t-test p < 0.05). Table 2: reclaim,\n"
	"vmstat deltas per boot.\n"
	"  --partial        skip a boot whose samples or hist is missing\n"
	"  --plot-data DIR  write each row's merged histogram to DIR/KERNEL-HOLD.dat\n"
	"  -h, --help       show this help and exit\n"
	"Exit status: 0; 1 when the plot data cannot be written; 2 on bad usage and\n"
	"on a missing or malformed input file (file and line named), as the\n"
	"report's other tools.\n";

/* The samples read; the first five every boot has. */
enum { K_WAKEUPS, K_MEAN, K_P99, K_MAX, K_OVER, K_REQUIRED };
static const char *const keys[] = {
	"wakeups", "mean_ns", "p99_ns", "max_ns", "over_10ms",
	"pgscan_kswapd", "pgscan_direct", "pgsteal_kswapd", "pgsteal_direct",
	"pgactivate", "pswpout", "pswpin", "unevictable_pgs_culled",
	"unevictable_pgs_scanned", "unevictable_pgs_rescued",
};
#define NR_KEYS ARRAY_SIZE(keys)

/* Table 2's columns: the sum of one or two keys (-1: none). */
static const struct { const char *name; int key[2]; } vm_cols[] = {
	{ "pgscan", { 5, 6 } },
	{ "pgsteal", { 7, 8 } },
	{ "pgactivate", { 9, -1 } },
	{ "pswpout", { 10, -1 } },
	{ "pswpin", { 11, -1 } },
	{ "unevictable_pgs_culled", { 12, -1 } },
	{ "unevictable_pgs_scanned", { 13, -1 } },
	{ "unevictable_pgs_rescued", { 14, -1 } },
};
#define NR_VM ARRAY_SIZE(vm_cols)

struct bucket {
	double us, n;			/* upper edge, count */
};

/* One kernel x hold: what its boots add up to. */
struct row {
	const char *kernel, *hold;
	int boots;
	double wakeups, ns_sum, max_ns, over;	/* ns_sum: mean_ns x wakeups */
	double *mean_ns, *p99_ns;		/* per boot */
	double vm_sum[NR_VM];
	int vm_boots[NR_VM];			/* boots that had the column */
	struct bucket *hist;
	size_t nhist, cap;
};

/* Open path; NULL when it is missing and missing_ok, else fatal. */
static FILE *open_input(const char *path, int missing_ok)
{
	FILE *f = fopen(path, "r");

	if (!f && !(missing_ok && errno == ENOENT))
		fatal("%s: %s", path, strerror(errno));
	return f;
}

/* The next line of f without its newline, or NULL at the end; counts *lineno. */
static char *next_line(FILE *f, const char *path, char **buf, size_t *size, int *lineno)
{
	ssize_t len = getline(buf, size, f);

	if (len < 0) {
		if (ferror(f))
			fatal("%s: %s", path, strerror(errno));
		return NULL;
	}
	if (len && (*buf)[len - 1] == '\n')
		(*buf)[len - 1] = '\0';
	++*lineno;
	return *buf;
}

/* A finite non-negative number that is all of s, or -1. */
static double number(const char *s)
{
	char *end;
	double v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	return *end || errno || !isfinite(v) ? -1 : v;
}

/* One boot's samples, as report/extract wrote them from the RESULT line. */
struct boot_samples {
	double v[NR_KEYS];
	int have[NR_KEYS];
	const char *path;
	int lineno;		/* of the last sample read, for messages */
};

static void one_sample(void *ctx, const char *metric, unsigned long run, double value,
		       const char *path, int lineno)
{
	struct boot_samples *b = ctx;
	size_t k;

	for (k = 0; k < NR_KEYS; k++) {
		if (strcmp(metric, keys[k]))
			continue;
		if (run != 1)
			fatal("%s:%d: %s of run %lu: a syslatency boot has one run", path,
			      lineno, metric, run);
		if (value < 0)
			fatal("%s:%d: %s %g: a count or a time cannot be negative", path,
			      lineno, metric, value);
		b->v[k] = value;
		b->have[k] = 1;
		b->lineno = lineno;
	}
}

/* Reads a boot's samples into b; 0, or -1 when the file is missing and missing_ok. */
static int read_samples(const char *path, struct boot_samples *b, int missing_ok)
{
	size_t k;

	memset(b, 0, sizeof(*b));
	b->path = path;
	if (samples_read(path, one_sample, b)) {
		if (missing_ok && errno == ENOENT)
			return -1;
		fatal("%s: %s", path, strerror(errno));
	}
	for (k = 0; k < K_REQUIRED; k++)
		if (!b->have[k])
			fatal("%s: no %s sample", path, keys[k]);
	return 0;
}

/* Appends a histogram's buckets to the row's; the sum of their counts. */
static double read_hist(FILE *f, const char *path, struct row *r)
{
	char *buf = NULL, *line, us_s[64], n_s[64], extra;
	double us, n, total = 0;
	int lineno = 0;
	size_t size = 0;

	while ((line = next_line(f, path, &buf, &size, &lineno))) {
		us = n = -1;
		if (sscanf(line, "%63s %63s %c", us_s, n_s, &extra) == 2) {
			us = number(us_s);
			n = number(n_s);
		}
		if (us < 0 || n < 0 || n != floor(n))
			fatal("%s:%d: '%s' is not 'latency_us count'", path, lineno, line);
		r->hist = grow(r->hist, sizeof(*r->hist), r->nhist, &r->cap);
		r->hist[r->nhist++] = (struct bucket){ us, n };
		total += n;
	}
	free(buf);
	return total;
}

static int by_latency(const void *a, const void *b)
{
	const struct bucket *x = a, *y = b;

	return (x->us > y->us) - (x->us < y->us);
}

/* Reads every boot of a row; sorts and merges its histogram. */
static void read_row(struct row *r, const char *rundir, int boots, int partial)
{
	struct boot_samples b;
	int k0, k1, boot;
	char *dir, *spath, *hpath;
	double total;
	size_t i, j, c;
	FILE *fh;

	r->mean_ns = xrealloc(NULL, boots * sizeof(double));
	r->p99_ns = xrealloc(NULL, boots * sizeof(double));
	for (boot = 1; boot <= boots; boot++) {
		dir = xasprintf("%s/%s/%s/boot-%d", rundir, r->kernel, r->hold, boot);
		spath = path_join(dir, "samples");
		hpath = path_join(dir, "hist");
		fh = open_input(hpath, partial);
		if (fh && !read_samples(spath, &b, partial)) {
			total = read_hist(fh, hpath, r);
			if (total != b.v[K_WAKEUPS])
				fatal("%s:%d: wakeups %.0f, but the counts of %s sum to %.0f",
				      spath, b.lineno, b.v[K_WAKEUPS], hpath, total);
			r->mean_ns[r->boots] = b.v[K_MEAN];
			r->p99_ns[r->boots] = b.v[K_P99];
			r->boots++;
			r->wakeups += b.v[K_WAKEUPS];
			r->ns_sum += b.v[K_MEAN] * b.v[K_WAKEUPS];
			r->over += b.v[K_OVER];
			r->max_ns = fmax(r->max_ns, b.v[K_MAX]);
			for (c = 0; c < NR_VM; c++) {
				k0 = vm_cols[c].key[0], k1 = vm_cols[c].key[1];
				r->vm_sum[c] += b.v[k0] + (k1 >= 0 ? b.v[k1] : 0);
				r->vm_boots[c] += b.have[k0] || (k1 >= 0 && b.have[k1]);
			}
		}
		if (fh)
			fclose(fh);
		free(spath);
		free(hpath);
		free(dir);
	}
	if (r->nhist)
		qsort(r->hist, r->nhist, sizeof(*r->hist), by_latency);
	for (i = 0, j = 0; i < r->nhist; i++) {
		if (j && r->hist[j - 1].us == r->hist[i].us)
			r->hist[j - 1].n += r->hist[i].n;
		else
			r->hist[j++] = r->hist[i];
	}
	r->nhist = j;
}

/* The upper edge of the bucket where the count reaches permille/1000, at most max. */
static double percentile_us(const struct row *r, unsigned int permille)
{
	double rank = fmax(1, ceil(r->wakeups * permille / 1000)), cum = 0;
	size_t i;

	for (i = 0; i < r->nhist; i++) {
		cum += r->hist[i].n;
		if (cum >= rank)
			break;
	}
	return fmin(i < r->nhist ? r->hist[i].us : INFINITY, r->max_ns / 1000);
}

/* A row of cells: the words of s (a header). */
static void heading(struct table *t, const char *s)
{
	char *copy = xstrdup(s), *w, *save;

	table_row(t);
	for (w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save))
		table_cell(t, "%s", w);
	free(copy);
}

/* The change of b's per-boot mean against a's, in percent, marked; none for a. */
static void change(struct table *t, int is_base, const double *a, int na,
		   const double *b, int nb)
{
	double ma = stats_mean(a, na), mb = stats_mean(b, nb);
	struct welch w;

	if (is_base)
		table_cell(t, "%s", "");
	else if (!na || !nb || ma == 0)
		table_cell(t, "-");
	else if (stats_welch(a, na, b, nb, &w))
		table_cell(t, "%+.1f%% n/a", 100 * (mb - ma) / ma);
	else
		table_cell(t, "%+.1f%%%s", 100 * (mb - ma) / ma, w.p < SIGNIFICANT ? "*" : " ");
}

static void write_plot_data(const char *dir, const struct row *r)
{
	char *path = xasprintf("%s/%s-%s.dat", dir, r->kernel, r->hold);
	FILE *f = fopen(path, "w");
	size_t i;

	if (!f) {
		fprintf(stderr, PROG ": error: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	for (i = 0; i < r->nhist; i++)
		fprintf(f, "%.15g %.0f\n", r->hist[i].us, r->hist[i].n);
	if (fclose(f)) {
		fprintf(stderr, PROG ": error: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	free(path);
}

/* The words of s, split at blanks, into *v (the caller frees v[0] and v). */
static int words(char *s, char ***v)
{
	char *w, *save;
	int n = 0;

	*v = NULL;
	for (w = strtok_r(s, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		*v = xrealloc(*v, (n + 1) * sizeof(**v));
		(*v)[n++] = w;
	}
	return n;
}

/* The conditions file: its lines for the header, kernels=, holds=, boots=. */
static char *read_conditions(const char *rundir, char ***kernel, int *nk,
			     char ***hold, int *nh, int *boots)
{
	char *path = xasprintf("%s/conditions", rundir), *buf = NULL, *line, *eq;
	char *all = NULL, *prev;
	int lineno = 0;
	size_t size = 0;
	FILE *f = open_input(path, 0);

	*kernel = *hold = NULL;
	*nk = *nh = *boots = 0;
	while ((line = next_line(f, path, &buf, &size, &lineno))) {
		if (!*line)
			continue;
		eq = strchr(line, '=');
		if (!eq || eq == line)
			fatal("%s:%d: '%s' is not key=value", path, lineno, line);
		prev = all;
		all = prev ? xasprintf("%s; %s", prev, line) : xstrdup(line);
		free(prev);
		*eq++ = '\0';
		if (!strcmp(line, "kernels") && !*nk)
			*nk = words(xstrdup(eq), kernel);
		else if (!strcmp(line, "holds") && !*nh)
			*nh = words(xstrdup(eq), hold);
		else if (!strcmp(line, "boots") && !*boots) {
			if (strspn(eq, "0123456789") == strlen(eq) && strlen(eq) <= 4)
				*boots = atoi(eq);
			if (*boots < 1)
				fatal("%s:%d: boots='%s' is not an integer from 1 to 9999",
				      path, lineno, eq);
		}
	}
	fclose(f);
	if (!*nk || !*nh || !*boots)
		fatal("%s: no kernels=, holds= or boots= naming one at least", path);
	free(buf);
	free(path);
	return all;
}

int main(int argc, char **argv)
{
	static const unsigned int permille[] = { 500, 990, 999 };
	int i, k, nk, nh, boots, partial = 0, only_args = 0;
	const char *rundir = NULL, *plot_dir = NULL;
	char *conditions, **kernel, **hold;
	struct row *rows, *r, *base;
	struct table t1, t2;
	size_t c;

	prog = PROG;	/* util.c's messages */
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (only_args || a[0] != '-' || !a[1]) {
			if (rundir)
				fatal("one RUNDIR expected, not '%s' too (see --help)", a);
			rundir = a;
		} else if (!strcmp(a, "--")) {
			only_args = 1;
		} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(usage, stdout);
			return 0;
		} else if (!strcmp(a, "--partial")) {
			partial = 1;
		} else if (!strcmp(a, "--plot-data")) {
			if (i + 1 == argc || !argv[i + 1][0])
				fatal("--plot-data needs a directory (see --help)");
			plot_dir = argv[++i];
		} else {
			fatal("unknown option '%s' (see --help)", a);
		}
	}
	if (!rundir)
		fatal("no RUNDIR given (see --help)");

	/* Holds outer, kernels inner: the kernels of a hold sit together. */
	conditions = read_conditions(rundir, &kernel, &nk, &hold, &nh, &boots);
	rows = xrealloc(NULL, nk * nh * sizeof(*rows));
	memset(rows, 0, nk * nh * sizeof(*rows));
	for (i = 0; i < nk * nh; i++) {
		rows[i].kernel = kernel[i % nk];
		rows[i].hold = hold[i / nk];
		read_row(&rows[i], rundir, boots, partial);
	}

	table_init(&t1, "llrrrrrrrrrr");
	heading(&t1, "kernel hold boots wakeups mean_us p50_us p99_us p99.9_us max_us "
		     "over_10ms mean_chg p99_chg");
	table_init(&t2, "llrrrrrrrr");
	heading(&t2, "kernel hold");
	for (c = 0; c < NR_VM; c++)
		table_cell(&t2, "%s", vm_cols[c].name);
	for (i = 0; i < nk * nh; i++) {
		r = &rows[i];
		base = &rows[i - i % nk];
		table_row(&t1);
		table_cell(&t1, "%s", r->kernel);
		table_cell(&t1, "%s", r->hold);
		table_cell(&t1, "%d", r->boots);
		table_cell(&t1, "%.0f", r->wakeups);
		if (r->boots && r->wakeups) {
			table_cell(&t1, "%.1f", r->ns_sum / r->wakeups / 1000);
			for (k = 0; k < 3; k++)
				table_cell(&t1, "%.1f", percentile_us(r, permille[k]));
			table_cell(&t1, "%.1f", r->max_ns / 1000);
		} else {
			for (k = 0; k < 5; k++)
				table_cell(&t1, "-");
		}
		table_cell(&t1, "%.0f", r->over);
		change(&t1, r == base, base->mean_ns, base->boots, r->mean_ns, r->boots);
		change(&t1, r == base, base->p99_ns, base->boots, r->p99_ns, r->boots);
		table_row(&t2);
		table_cell(&t2, "%s", r->kernel);
		table_cell(&t2, "%s", r->hold);
		for (c = 0; c < NR_VM; c++) {
			if (r->vm_boots[c])
				table_cell(&t2, "%.1f", r->vm_sum[c] / r->vm_boots[c]);
			else
				table_cell(&t2, "-");
		}
	}
	printf("conditions: %s\n", conditions);
	printf("\nwake-up latency\n");
	table_print(&t1, "", stdout);
	printf("mean_chg, p99_chg: the per-boot mean of mean_ns, p99_ns against the hold's first\n"
	       "kernel; * Welch's t-test p < %g; n/a fewer than two boots a side\n", SIGNIFICANT);
	printf("\nreclaim during the measurement (per boot, mean)\n");
	table_print(&t2, "", stdout);
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, PROG ": error: write to stdout: %s\n", strerror(errno));
		return 1;
	}

	if (plot_dir) {
		if (mkdir(plot_dir, 0777) && errno != EEXIST) {
			fprintf(stderr, PROG ": error: %s: %s\n", plot_dir, strerror(errno));
			return 1;
		}
		for (i = 0; i < nk * nh; i++)
			write_plot_data(plot_dir, &rows[i]);
	}
	return 0;
}
