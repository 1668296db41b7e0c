// SPDX-License-Identifier: GPL-2.0
/*
 * The report's coherence section, only where boots ran under the
 * coherence simulator (scripts/compare-kernels COHERENCE=on): from the
 * samples extract-coherence.c writes, per variant family (serial-1t,
 * serial-2t, ... is "serial") a table of kernels against fault threads:
 * the benchmark phase's page faults, its cache-line transfers per fault,
 * the same less the idle phase's transfers scaled to the benchmark
 * phase's length, atomics per fault and the idle phase's transfers per
 * second; then each kernel's top five functions and top five lines by
 * transfers per fault at the family's highest thread count; and, with
 * --coherence-plot, transfers per fault against threads.
 *
 * Each boot's ratio is taken on its own, then averaged over the boots.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"
#include "report.h"
#include "table.h"
#include "util.h"

#define TOP_FUNCTIONS 5
#define TOP_LINES 5
#define FUNCTION_PREFIX "coherence/bench/function/"
#define LINE_PREFIX "coherence/bench/line/"

/*
 * The functions of the locks a fault takes on the classic path: mmap_lock
 * (an rwsem) on 6.1, the per-VMA lock on 6.12, by name prefix. Lock code
 * inlined into another function is charged to that one, and only the
 * functions the plugin listed (its top= rows a phase) are seen.
 */
static const char *const lock_prefixes[] = {
	"down_read", "down_write", "up_read", "up_write", "rwsem_", "__rwsem",
	"__down_read", "__up_read", "mmap_read_", "mmap_write_", "lock_mm_and_find_vma",
	"lock_vma_under_rcu", "vma_start_read", "vma_end_read", "vma_start_write",
};
/* The speculative path's own functions (the series' spf_*). */
static const char *const spf_prefixes[] = { "spf_" };

struct family {
	char *name;
	size_t *variant;		/* by threads, ascending */
	unsigned long *threads;
	size_t n;
};

struct families {
	const struct data *d;
	struct family *f;
	size_t n;
};

/* "serial-4t" -> "serial" and 4; 0 threads when the name has no -Nt. */
static char *family_of(const char *variant, unsigned long *threads)
{
	const char *dash = strrchr(variant, '-');
	size_t len = strlen(variant);
	char *end;

	*threads = 0;
	if (!dash || len - (dash - variant) < 3 || variant[len - 1] != 't')
		return xstrdup(variant);
	*threads = strtoul(dash + 1, &end, 10);
	if (end != variant + len - 1 || !*threads) {
		*threads = 0;
		return xstrdup(variant);
	}
	return xstrndup(variant, dash - variant);
}

/* The variants with coherence samples, grouped by family, by threads. */
static void families_group(struct families *fs, const struct data *d)
{
	size_t v, i, j, cap = 0;
	unsigned long t;
	struct family *f;
	char *name;

	memset(fs, 0, sizeof(*fs));
	fs->d = d;
	for (v = 0; v < d->nvariants; v++) {
		if (!data_any_boot(d, v, "coherence/"))
			continue;
		name = family_of(d->variants[v], &t);
		for (i = 0; i < fs->n && strcmp(fs->f[i].name, name); i++)
			;
		if (i == fs->n) {
			fs->f = grow(fs->f, sizeof(*fs->f), fs->n, &cap);
			fs->f[fs->n++] = (struct family){ .name = name };
		} else {
			free(name);
		}
		f = &fs->f[i];
		f->variant = xrealloc(f->variant, (f->n + 1) * sizeof(*f->variant));
		f->threads = xrealloc(f->threads, (f->n + 1) * sizeof(*f->threads));
		for (j = f->n; j > 0 && f->threads[j - 1] > t; j--) {
			f->variant[j] = f->variant[j - 1];
			f->threads[j] = f->threads[j - 1];
		}
		f->variant[j] = v;
		f->threads[j] = t;
		f->n++;
	}
}

static void families_free(struct families *fs)
{
	for (size_t i = 0; i < fs->n; i++) {
		free(fs->f[i].name);
		free(fs->f[i].variant);
		free(fs->f[i].threads);
	}
	free(fs->f);
}

/* A boot's value of a metric (the first sample), NaN without it. */
static double boot_value(const struct boot *b, long metric)
{
	if (metric < 0)
		return NAN;
	for (size_t i = 0; i < b->n; i++)
		if (b->s[i].metric == (size_t)metric)
			return b->s[i].v;
	return NAN;
}

enum measure {
	FAULTS, PER_FAULT, NET_PER_FAULT, LOCK_PER_FAULT, SPF_PER_FAULT,
	ATOMICS_PER_FAULT, IDLE_PER_SEC,
};

static const char *const measure_names[] = {
	[FAULTS] = "faults",
	[PER_FAULT] = "transfers/fault",
	[NET_PER_FAULT] = "  less idle",
	[LOCK_PER_FAULT] = "  in lock functions",
	[SPF_PER_FAULT] = "  in spf_* functions",
	[ATOMICS_PER_FAULT] = "atomics/fault",
	[IDLE_PER_SEC] = "idle transfers/s",
};

/* A boot's bench-phase transfers in the functions that start with a prefix. */
static double boot_functions(const struct data *d, const struct boot *b,
			     const char *const *prefixes, size_t n)
{
	size_t plen = strlen(FUNCTION_PREFIX);
	double sum = 0;

	for (size_t i = 0; i < b->n; i++) {
		const char *m = d->metrics[b->s[i].metric];

		if (strncmp(m, FUNCTION_PREFIX, plen))
			continue;
		for (size_t j = 0; j < n; j++)
			if (!strncmp(m + plen, prefixes[j], strlen(prefixes[j]))) {
				sum += b->s[i].v;
				break;
			}
	}
	return sum;
}

/* One boot's measure; NaN when a number it needs is missing or zero. */
static double boot_measure(const struct data *d, const struct boot *b, enum measure m)
{
	double faults = boot_value(b, data_metric(d, "coherence/bench/faults"));
	double tr = boot_value(b, data_metric(d, "coherence/bench/transfers"));
	double secs = boot_value(b, data_metric(d, "coherence/bench/seconds"));
	double idle = boot_value(b, data_metric(d, "coherence/idle/transfers"));
	double isecs = boot_value(b, data_metric(d, "coherence/idle/seconds"));

	switch (m) {
	case FAULTS:
		return faults;
	case PER_FAULT:
		return faults > 0 ? tr / faults : NAN;
	case NET_PER_FAULT:
		return faults > 0 && isecs > 0 ? (tr - idle * secs / isecs) / faults : NAN;
	case LOCK_PER_FAULT:
		return faults > 0 ? boot_functions(d, b, lock_prefixes, ARRAY_SIZE(lock_prefixes)) /
				    faults : NAN;
	case SPF_PER_FAULT:
		return faults > 0 ? boot_functions(d, b, spf_prefixes, ARRAY_SIZE(spf_prefixes)) /
				    faults : NAN;
	case ATOMICS_PER_FAULT:
		return faults > 0 ? boot_value(b, data_metric(d, "coherence/bench/atomics")) / faults : NAN;
	case IDLE_PER_SEC:
		return isecs > 0 ? idle / isecs : NAN;
	}
	return NAN;
}

/* The mean over kernel k's boots of variant v; NaN without any. */
static double measure_mean(const struct data *d, size_t k, size_t v, enum measure m)
{
	double sum = 0, x;
	size_t n = 0;

	for (size_t i = 0; i < d->nboots; i++) {
		const struct boot *b = &d->boots[i];

		if (b->kernel != k || b->variant != v)
			continue;
		x = boot_measure(d, b, m);
		if (isnan(x))
			continue;
		sum += x;
		n++;
	}
	return n ? sum / n : NAN;
}

static void family_table(const struct data *d, const struct family *f, FILE *out)
{
	char *align = xrealloc(NULL, f->n + 3);
	struct table t;
	double x;

	memset(align, 'r', f->n + 2);
	align[0] = align[1] = 'l';
	align[f->n + 2] = '\0';
	table_init(&t, align);
	free(align);
	table_row(&t);
	table_cell(&t, "%s", "");
	table_cell(&t, "fault threads");
	for (size_t j = 0; j < f->n; j++)
		table_cell(&t, "%lu", f->threads[j]);
	for (size_t k = 0; k < d->nk; k++) {
		for (size_t m = 0; m < ARRAY_SIZE(measure_names); m++) {
			table_row(&t);
			table_cell(&t, "%s", m ? "" : d->k[k].name);
			table_cell(&t, "%s", measure_names[m]);
			for (size_t j = 0; j < f->n; j++) {
				x = measure_mean(d, k, f->variant[j], m);
				if (isnan(x))
					table_cell(&t, "-");
				else if (m == FAULTS || m == IDLE_PER_SEC)
					table_cell(&t, "%.0f", x);
				else if (m == LOCK_PER_FAULT || m == SPF_PER_FAULT)
					table_cell(&t, "%.2f", x);
				else
					table_cell(&t, "%.1f", x);
			}
		}
	}
	fprintf(out, "%s (%s-Nt, the benchmark phase)\n", f->name, f->name);
	table_print(&t, "  ", out);
	fputc('\n', out);
}

struct function_row {
	const char *name;
	double per_fault;
};

static int compare_rows(const void *a, const void *b)
{
	const struct function_row *x = a, *y = b;

	if (x->per_fault != y->per_fault)
		return x->per_fault < y->per_fault ? 1 : -1;
	return strcmp(x->name, y->name);
}

/*
 * Kernel k's functions (prefix FUNCTION_PREFIX) or lines (LINE_PREFIX) in
 * variant v by transfers per fault, the mean over its boots (a boot
 * without the row counts 0: the plugin lists the top ones only); *rows is
 * the caller's to free.
 */
static size_t top_rows(const struct data *d, size_t k, size_t v, const char *prefix,
		       struct function_row **rows)
{
	size_t plen = strlen(prefix), n = 0, boots = 0, i;
	struct function_row *r = xrealloc(NULL, (d->nmetrics + 1) * sizeof(*r));

	for (size_t m = 0; m < d->nmetrics; m++)
		if (!strncmp(d->metrics[m], prefix, plen))
			r[n++] = (struct function_row){ d->metrics[m] + plen, 0 };
	for (i = 0; i < d->nboots; i++) {
		const struct boot *b = &d->boots[i];
		double faults;

		if (b->kernel != k || b->variant != v)
			continue;
		faults = boot_measure(d, b, FAULTS);
		if (!(faults > 0))
			continue;
		boots++;
		for (size_t j = 0; j < n; j++) {
			char *metric = xasprintf("%s%s", prefix, r[j].name);
			double x = boot_value(b, data_metric(d, metric));

			free(metric);
			if (!isnan(x))
				r[j].per_fault += x / faults;
		}
	}
	for (i = 0; i < n; i++)
		r[i].per_fault = boots ? r[i].per_fault / boots : 0;
	qsort(r, n, sizeof(*r), compare_rows);
	while (n && !(r[n - 1].per_fault > 0))
		n--;
	*rows = r;
	return n;
}

/*
 * The top functions, or with @lines the top lines ("ADDR/FUNCTION": the
 * line's guest physical address and the function with most of its
 * transfers), of each kernel at the family's highest thread count.
 */
static void family_top(const struct data *d, const struct family *f, bool lines, FILE *out)
{
	size_t v = f->variant[f->n - 1];
	int top = lines ? TOP_LINES : TOP_FUNCTIONS;
	struct function_row *rows;
	struct table t;
	size_t n;

	if (lines)
		fprintf(out, "%s: top %d lines by transfers per fault at %lu fault threads (%s;\n"
			"  guest physical address, and the function with most of the line's transfers)\n",
			f->name, top, f->threads[f->n - 1], d->variants[v]);
	else
		fprintf(out, "%s: top %d functions by transfers per fault at %lu fault threads (%s)\n",
			f->name, top, f->threads[f->n - 1], d->variants[v]);
	table_init(&t, lines ? "lrll" : "lrl");
	for (size_t k = 0; k < d->nk; k++) {
		n = top_rows(d, k, v, lines ? LINE_PREFIX : FUNCTION_PREFIX, &rows);
		if (!n) {
			table_row(&t);
			table_cell(&t, "%s", d->k[k].name);
			table_cell(&t, "-");
			table_cell(&t, "(no coherence count)");
			if (lines)
				table_cell(&t, "%s", "");
		}
		for (size_t i = 0; i < n && i < (size_t)top; i++) {
			const char *slash = lines ? strchr(rows[i].name, '/') : NULL;

			table_row(&t);
			table_cell(&t, "%s", i ? "" : d->k[k].name);
			table_cell(&t, "%.2f", rows[i].per_fault);
			if (lines) {
				table_cell(&t, "%.*s", slash ? (int)(slash - rows[i].name) :
					   (int)strlen(rows[i].name), rows[i].name);
				table_cell(&t, "%s", slash ? slash + 1 : "");
			} else {
				table_cell(&t, "%s", rows[i].name);
			}
		}
		free(rows);
	}
	table_print(&t, "  ", out);
	fputc('\n', out);
}

void report_coherence(const struct data *d, FILE *out)
{
	struct families fs;

	if (data_metric(d, "coherence/bench/transfers") < 0)
		return;
	families_group(&fs, d);
	fputs("Cache-line transfers per fault (the coherence simulator: counts in a model of\n"
	      "TCG's accesses, not times; a transfer is a line one vCPU takes from another's\n"
	      "cache. \"less idle\": less the idle phase's transfers, scaled to the benchmark\n"
	      "phase's length; the guest's background traffic is in both phases, and busy\n"
	      "vCPUs make more of it than idle ones. \"in lock functions\": mmap_lock's and\n"
	      "the VMA lock's (down_read*, up_read, rwsem_*, lock_vma_under_rcu, ...);\n"
	      "\"in spf_* functions\": the speculative path's own)\n", out);
	for (size_t i = 0; i < fs.n; i++)
		family_table(d, &fs.f[i], out);
	for (size_t i = 0; i < fs.n; i++) {
		family_top(d, &fs.f[i], false, out);
		family_top(d, &fs.f[i], true, out);
	}
	families_free(&fs);
}

/* A block per family and kernel (gnuplot's index): threads, transfers/fault. */
static void write_data(FILE *f, const void *ctx)
{
	const struct families *fs = ctx;
	const struct data *d = fs->d;
	size_t block = 0;

	fputs("# threads transfers/fault less-idle\n", f);
	for (size_t i = 0; i < fs->n; i++)
		for (size_t k = 0; k < d->nk; k++) {
			fprintf(f, "%s# %s %s\n", block++ ? "\n\n" : "", fs->f[i].name, d->k[k].name);
			for (size_t j = 0; j < fs->f[i].n; j++) {
				double x = measure_mean(d, k, fs->f[i].variant[j], PER_FAULT);
				double y = measure_mean(d, k, fs->f[i].variant[j], NET_PER_FAULT);

				fprintf(f, "%lu", fs->f[i].threads[j]);
				fprintf(f, isnan(x) ? "  NaN" : "  %.3f", x);
				fprintf(f, isnan(y) ? "  NaN\n" : "  %.3f\n", y);
			}
		}
}

/* A panel per family, a line per kernel; dashed: less the idle phase. */
static void write_script(FILE *f, const void *ctx, const char *dat, const char *png)
{
	const struct families *fs = ctx;
	const struct data *d = fs->d;
	unsigned long most = 1;
	size_t block = 0;

	for (size_t i = 0; i < fs->n; i++)
		if (fs->f[i].threads[fs->f[i].n - 1] > most)
			most = fs->f[i].threads[fs->f[i].n - 1];
	plot_preamble(f, "report/report", png, fs->n > 1 ? 520 * (int)fs->n : 800, 520);
	fprintf(f, "set multiplot layout 1,%zu title \"multi-fault-all under the coherence simulator: "
		"cache-line transfers per fault\\n"
		"dashed: less the idle phase's transfers, scaled to the benchmark's length\"\n"
		"set logscale x 2\n"
		"set xrange [0.8:%lu]\n"
		"set yrange [*<0:*]\n"
		"set xlabel 'fault threads'\n"
		"set ylabel 'transfers per fault (lower is better)'\n"
		"set grid\n"
		"set key top left\n"
		"set datafile missing 'NaN'\n",
		fs->n, most * 5 / 4 + 1);
	for (size_t i = 0; i < fs->n; i++) {
		fputs("set title ", f);
		plot_quoted(f, fs->f[i].name);
		fputs("\nplot ", f);
		for (size_t k = 0; k < d->nk; k++, block++) {
			fputs(k ? ", \\\n     " : "", f);
			plot_quoted(f, dat);
			fprintf(f, " index %zu using 1:2 with linespoints lc %zu pt 7 title ", block, k + 1);
			plot_quoted(f, d->k[k].name);
			fputs(", \\\n     ", f);
			plot_quoted(f, dat);
			fprintf(f, " index %zu using 1:3 with linespoints lc %zu dt 2 pt 6 notitle", block, k + 1);
		}
		fputc('\n', f);
	}
	fputs("unset multiplot\n", f);
}

int plot_coherence(const struct data *d, const char *png)
{
	struct families fs;
	int rc;

	if (data_metric(d, "coherence/bench/transfers") < 0) {
		fprintf(stderr, "%s: no coherence plot: no boot ran under the coherence simulator\n", prog);
		return EXIT_PLOT;
	}
	families_group(&fs, d);
	rc = plot_draw(png, write_data, write_script, &fs);
	families_free(&fs);
	return rc;
}
