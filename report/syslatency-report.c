// SPDX-License-Identifier: GPL-2.0
/*
 * syslatency-report: the tables of a run directory of syslatency runs.
 *
 * RUNDIR/conditions holds key=value lines, among them kernels= and holds=
 * (space-separated lists, in the order to print) and boots=; each boot R
 * of a kernel left RUNDIR/KERNEL/boot-R/HOLD.out (syslatency's stdout, one
 * "RESULT key=value ..." line) and HOLD.hist (its --histogram file).
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

#include "stats.h"
#include "util.h"

#define PROG		"syslatency-report"
#define MAX_COLS	16
#define SIGNIFICANT	0.05

static const char usage[] =
	"Usage: " PROG " [--partial] [--plot-data DIR] RUNDIR\n"
	"Tables of a run directory of bench/syslatency runs: RUNDIR/conditions\n"
	"(key=value lines, kernels=, holds= and boots= among them) and for each\n"
	"boot R RUNDIR/KERNEL/boot-R/HOLD.out (syslatency's RESULT line) and\n"
	"HOLD.hist (its --histogram file). Table 1, per kernel and hold: wake-ups,\n"
	"mean, percentiles of the histograms merged over the boots, max, and the\n"
	"change of the per-boot mean_ns and p99_ns against the hold's first kernel\n"
	"('*': Welch's t-test p < 0.05). Table 2: reclaim, vmstat deltas per boot.\n"
	"  --partial        skip a boot whose HOLD.out or HOLD.hist is missing\n"
	"  --plot-data DIR  write each row's merged histogram to DIR/KERNEL-HOLD.dat\n"
	"  -h, --help       show this help and exit\n"
	"Exit status: 0; 1 on a missing or malformed input file; 2 on bad usage.\n";

/* The numeric RESULT keys read; the first five every RESULT line has. */
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

/* Table cells, row by row; the first nleft columns are names. */
struct table {
	int ncols, nleft;
	size_t n, cap;
	char **cell;
};

static void __attribute__((noreturn, format(printf, 2, 3))) die(int status, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, PROG ": error: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(status);
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

/* Open path; NULL when it is missing and missing_ok, else fatal. */
static FILE *open_input(const char *path, int missing_ok)
{
	FILE *f = fopen(path, "r");

	if (!f && !(missing_ok && errno == ENOENT))
		die(1, "%s: %s", path, strerror(errno));
	return f;
}

/* The next line of f without its newline, or NULL at the end; counts *lineno. */
static char *next_line(FILE *f, const char *path, char **buf, size_t *size, int *lineno)
{
	ssize_t len = getline(buf, size, f);

	if (len < 0) {
		if (ferror(f))
			die(1, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (len && (*buf)[len - 1] == '\n')
		(*buf)[len - 1] = '\0';
	++*lineno;
	return *buf;
}

/*
 * The words of s, split at blanks, into a new NULL-terminated array; the
 * caller frees v[0] (the words' copy of s) when there are any, and v.
 */
static char **words(const char *s, int *n)
{
	char *copy = xstrdup(s), *w, *save, **v = NULL;

	*n = 0;
	for (w = strtok_r(copy, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
		v = xrealloc(v, (*n + 2) * sizeof(*v));
		v[(*n)++] = w;
		v[*n] = NULL;
	}
	if (!v)
		free(copy);
	return v;
}

/* Reads HOLD.out into v[]/have[], the RESULT line's keys (absent: 0); its line number. */
static int read_result(FILE *f, const char *path, double *v, int *have)
{
	char *buf = NULL, *line, *tok, *save, *eq;
	int lineno = 0, found = 0;
	size_t size = 0, k;

	memset(have, 0, NR_KEYS * sizeof(*have));
	memset(v, 0, NR_KEYS * sizeof(*v));
	while ((line = next_line(f, path, &buf, &size, &lineno))) {
		if (strncmp(line, "RESULT ", 7))
			continue;
		if (found)
			die(1, "%s:%d: a second RESULT line", path, lineno);
		found = lineno;
		for (tok = strtok_r(line + 7, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
			eq = strchr(tok, '=');
			if (!eq || eq == tok)
				die(1, "%s:%d: '%s' is not key=value", path, lineno, tok);
			*eq = '\0';
			if (!strcmp(tok, "hold") || !strcmp(tok, "pressure"))
				continue;
			if (number(eq + 1) < 0)
				die(1, "%s:%d: %s='%s' is not a finite non-negative number",
				    path, lineno, tok, eq + 1);
			for (k = 0; k < NR_KEYS; k++) {
				if (!strcmp(tok, keys[k])) {
					v[k] = number(eq + 1);
					have[k] = 1;
				}
			}
		}
		for (k = 0; k < K_REQUIRED; k++)
			if (!have[k])
				die(1, "%s:%d: no %s= in the RESULT line", path, lineno, keys[k]);
	}
	if (!found)
		die(1, "%s: no RESULT line", path);
	free(buf);
	return found;
}

/* Appends HOLD.hist's buckets to the row's; the sum of their counts. */
static double read_hist(FILE *f, const char *path, struct row *r)
{
	char *buf = NULL, *line, **w;
	double us, n, total = 0;
	int lineno = 0, nw;
	size_t size = 0;

	while ((line = next_line(f, path, &buf, &size, &lineno))) {
		w = words(line, &nw);
		us = nw == 2 ? number(w[0]) : -1;
		n = nw == 2 ? number(w[1]) : -1;
		if (us < 0 || n < 0 || n != floor(n))
			die(1, "%s:%d: '%s' is not 'latency_us count'", path, lineno, line);
		if (r->nhist == r->cap) {
			r->cap = r->cap ? 2 * r->cap : 1024;
			r->hist = xrealloc(r->hist, r->cap * sizeof(*r->hist));
		}
		r->hist[r->nhist++] = (struct bucket){ us, n };
		total += n;
		free(w[0]);
		free(w);
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
	double v[NR_KEYS], total;
	int have[NR_KEYS], lineno, k0, k1;
	char *out, *hist;
	FILE *fo, *fh;
	size_t i, j, c;

	r->mean_ns = xrealloc(NULL, boots * sizeof(double));
	r->p99_ns = xrealloc(NULL, boots * sizeof(double));
	for (int boot = 1; boot <= boots; boot++) {
		out = xasprintf("%s/%s/boot-%d/%s.out", rundir, r->kernel, boot, r->hold);
		hist = xasprintf("%s/%s/boot-%d/%s.hist", rundir, r->kernel, boot, r->hold);
		fo = open_input(out, partial);
		fh = open_input(hist, partial);
		if (fo && fh) {
			lineno = read_result(fo, out, v, have);
			total = read_hist(fh, hist, r);
			if (total != v[K_WAKEUPS])
				die(1, "%s:%d: wakeups=%.0f, but the counts of %s sum to %.0f",
				    out, lineno, v[K_WAKEUPS], hist, total);
			r->mean_ns[r->boots] = v[K_MEAN];
			r->p99_ns[r->boots] = v[K_P99];
			r->boots++;
			r->wakeups += v[K_WAKEUPS];
			r->ns_sum += v[K_MEAN] * v[K_WAKEUPS];
			r->over += v[K_OVER];
			r->max_ns = fmax(r->max_ns, v[K_MAX]);
			for (c = 0; c < NR_VM; c++) {
				k0 = vm_cols[c].key[0], k1 = vm_cols[c].key[1];
				r->vm_sum[c] += v[k0] + (k1 >= 0 ? v[k1] : 0);
				r->vm_boots[c] += have[k0] || (k1 >= 0 && have[k1]);
			}
		}
		if (fo)
			fclose(fo);
		if (fh)
			fclose(fh);
		free(out);
		free(hist);
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

static void __attribute__((format(printf, 2, 3))) cell(struct table *t, const char *fmt, ...)
{
	va_list ap;

	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 64;
		t->cell = xrealloc(t->cell, t->cap * sizeof(*t->cell));
	}
	va_start(ap, fmt);
	if (vasprintf(&t->cell[t->n++], fmt, ap) < 0)
		die(1, "out of memory");
	va_end(ap);
}

/* Appends a row of cells, the words of s (a header). */
static void heading(struct table *t, const char *s)
{
	int i, n;
	char **w = words(s, &n);

	for (i = 0; i < n; i++)
		cell(t, "%s", w[i]);
	free(w[0]);
	free(w);
}

/* Columns as wide as their widest cell, names left-aligned, numbers right. */
static void table_print(const char *title, struct table *t)
{
	int w[MAX_COLS] = { 0 }, c, len;
	size_t i, size;
	char *line;
	FILE *m;

	for (i = 0; i < t->n; i++) {
		len = strlen(t->cell[i]);
		if (len > w[i % t->ncols])
			w[i % t->ncols] = len;
	}
	printf("\n%s\n", title);
	for (i = 0; i < t->n; i += t->ncols) {
		m = open_memstream(&line, &size);
		if (!m)
			die(1, "out of memory");
		for (c = 0; c < t->ncols; c++)
			fprintf(m, "%s%*s", c ? "  " : "", c < t->nleft ? -w[c] : w[c], t->cell[i + c]);
		fclose(m);
		while (size && line[size - 1] == ' ')
			size--;
		printf("%.*s\n", (int)size, line);
		free(line);
	}
	for (i = 0; i < t->n; i++)
		free(t->cell[i]);
	free(t->cell);
}

/* The change of b's per-boot mean against a's, in percent, marked; none for a. */
static void change(struct table *t, int is_base, const double *a, int na,
		   const double *b, int nb)
{
	double ma = stats_mean(a, na), mb = stats_mean(b, nb);
	struct welch w;

	if (is_base)
		cell(t, "%s", "");
	else if (!na || !nb || ma == 0)
		cell(t, "-");
	else if (stats_welch(a, na, b, nb, &w))
		cell(t, "%+.1f%% n/a", 100 * (mb - ma) / ma);
	else
		cell(t, "%+.1f%%%s", 100 * (mb - ma) / ma, w.p < SIGNIFICANT ? "*" : " ");
}

static void write_plot_data(const char *dir, const struct row *r)
{
	char *path = xasprintf("%s/%s-%s.dat", dir, r->kernel, r->hold);
	FILE *f = fopen(path, "w");
	size_t i;

	if (!f)
		die(1, "%s: %s", path, strerror(errno));
	for (i = 0; i < r->nhist; i++)
		fprintf(f, "%.15g %.0f\n", r->hist[i].us, r->hist[i].n);
	if (fclose(f))
		die(1, "%s: %s", path, strerror(errno));
	free(path);
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
	*boots = 0;
	while ((line = next_line(f, path, &buf, &size, &lineno))) {
		if (!*line)
			continue;
		eq = strchr(line, '=');
		if (!eq || eq == line)
			die(1, "%s:%d: '%s' is not key=value", path, lineno, line);
		prev = all;
		all = prev ? xasprintf("%s; %s", prev, line) : xstrdup(line);
		free(prev);
		*eq++ = '\0';
		if (!strcmp(line, "kernels") && !*kernel)
			*kernel = words(eq, nk);
		else if (!strcmp(line, "holds") && !*hold)
			*hold = words(eq, nh);
		else if (!strcmp(line, "boots") && !*boots) {
			if (strspn(eq, "0123456789") == strlen(eq) && strlen(eq) <= 4)
				*boots = atoi(eq);
			if (*boots < 1)
				die(1, "%s:%d: boots='%s' is not an integer from 1 to 9999", path, lineno, eq);
		}
	}
	fclose(f);
	if (!*kernel || !*hold || !*boots)
		die(1, "%s: no kernels=, holds= or boots= naming one at least", path);
	free(buf);
	free(path);
	return all;
}

int main(int argc, char **argv)
{
	struct table t1 = { .ncols = 12, .nleft = 2 }, t2 = { .ncols = 2 + NR_VM, .nleft = 2 };
	static const unsigned int permille[] = { 500, 990, 999 };
	int i, k, nk, nh, boots, partial = 0, only_args = 0;
	const char *rundir = NULL, *plot_dir = NULL;
	char *conditions, **kernel, **hold;
	struct row *rows, *r, *base;
	size_t c;

	prog = PROG;	/* util.c's messages */
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (only_args || a[0] != '-' || !a[1]) {
			if (rundir)
				die(2, "one RUNDIR expected, not '%s' too (see --help)", a);
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
				die(2, "--plot-data needs a directory (see --help)");
			plot_dir = argv[++i];
		} else {
			die(2, "unknown option '%s' (see --help)", a);
		}
	}
	if (!rundir)
		die(2, "no RUNDIR given (see --help)");

	/* Holds outer, kernels inner: the kernels of a hold sit together. */
	conditions = read_conditions(rundir, &kernel, &nk, &hold, &nh, &boots);
	rows = xrealloc(NULL, nk * nh * sizeof(*rows));
	memset(rows, 0, nk * nh * sizeof(*rows));
	for (i = 0; i < nk * nh; i++) {
		rows[i].kernel = kernel[i % nk];
		rows[i].hold = hold[i / nk];
		read_row(&rows[i], rundir, boots, partial);
	}

	heading(&t1, "kernel hold boots wakeups mean_us p50_us p99_us p99.9_us max_us "
		     "over_10ms mean_chg p99_chg");
	heading(&t2, "kernel hold");
	for (c = 0; c < NR_VM; c++)
		cell(&t2, "%s", vm_cols[c].name);
	for (i = 0; i < nk * nh; i++) {
		r = &rows[i];
		base = &rows[i - i % nk];
		cell(&t1, "%s", r->kernel);
		cell(&t1, "%s", r->hold);
		cell(&t1, "%d", r->boots);
		cell(&t1, "%.0f", r->wakeups);
		if (r->boots && r->wakeups) {
			cell(&t1, "%.1f", r->ns_sum / r->wakeups / 1000);
			for (k = 0; k < 3; k++)
				cell(&t1, "%.1f", percentile_us(r, permille[k]));
			cell(&t1, "%.1f", r->max_ns / 1000);
		} else {
			for (k = 0; k < 5; k++)
				cell(&t1, "-");
		}
		cell(&t1, "%.0f", r->over);
		change(&t1, r == base, base->mean_ns, base->boots, r->mean_ns, r->boots);
		change(&t1, r == base, base->p99_ns, base->boots, r->p99_ns, r->boots);
		cell(&t2, "%s", r->kernel);
		cell(&t2, "%s", r->hold);
		for (c = 0; c < NR_VM; c++) {
			if (r->vm_boots[c])
				cell(&t2, "%.1f", r->vm_sum[c] / r->vm_boots[c]);
			else
				cell(&t2, "-");
		}
	}
	printf("conditions: %s\n", conditions);
	table_print("wake-up latency", &t1);
	printf("mean_chg, p99_chg: the per-boot mean of mean_ns, p99_ns against the hold's first\n"
	       "kernel; * Welch's t-test p < %g; n/a fewer than two boots a side\n", SIGNIFICANT);
	table_print("reclaim during the measurement (per boot, mean)", &t2);
	if (fflush(stdout) || ferror(stdout))
		die(1, "write to stdout: %s", strerror(errno));

	if (plot_dir) {
		if (mkdir(plot_dir, 0777) && errno != EEXIST)
			die(1, "%s: %s", plot_dir, strerror(errno));
		for (i = 0; i < nk * nh; i++)
			write_plot_data(plot_dir, &rows[i]);
	}
	return 0;
}
