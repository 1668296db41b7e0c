// SPDX-License-Identifier: GPL-2.0
/*
 * The counter tables: per variant, perf lock contention's rows (lock/...)
 * classified by lock, and the mean per boot of each /proc/vmstat delta
 * (vmstat/...), kernels in columns.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "table.h"

/*
 * perf's tracepoint mode names lock types, not locks. The only rwsem the
 * benchmark's threads take is mmap_lock; the page allocator functions of
 * the list zone-lock-callers (which collect-lock reads too) take
 * zone->lock (or inline a caller that does).
 */
static const char *const zone_lock_callers[] = {
#include "zone-lock-callers.h"
};

static const char *const lock_classes[] = { "mmap_lock", "zone->lock", "other" };

struct lock_row {
	int class;		/* index into lock_classes */
	char *type, *caller;
	double contended, wait, max, avg;	/* avg < 0: wait / contended */
};

static int classify(const char *type, const char *caller)
{
	size_t i;

	if (!strncmp(type, "rwsem", 5))
		return 0;
	for (i = 0; !strcmp(type, "spinlock") && i < ARRAY_SIZE(zone_lock_callers); i++)
		if (!strcmp(caller, zone_lock_callers[i]))
			return 1;
	return 2;
}

static double sum(const struct data *d, size_t k, size_t v, const char *metric)
{
	double s = data_sum(d, k, v, metric);

	return isnan(s) ? 0 : s;
}

static double max_of(const struct data *d, size_t k, size_t v, const char *metric)
{
	double *x, m = 0;
	size_t n = data_values(d, k, v, metric, 0, &x);

	while (n--)
		m = x[n] > m ? x[n] : m;
	free(x);
	return m;
}

static int has(const struct data *d, size_t k, size_t v, const char *metric)
{
	double *x;
	size_t n = data_values(d, k, v, metric, 0, &x);

	free(x);
	return n > 0;
}

/* A lock row's field: its row's metric ("lock/T/C/contended") made ".../field". */
static double field(const struct data *d, size_t k, size_t v, const char *row,
		    const char *name, double (*fn)(const struct data *, size_t,
						   size_t, const char *))
{
	char *metric = xasprintf("%.*s/%s", (int)(strlen(row) - 10), row, name);
	double x = fn(d, k, v, metric);

	free(metric);
	return x;
}

static int row_order(const void *pa, const void *pb)
{
	const struct lock_row *a = pa, *b = pb;

	if (a->class != b->class)
		return a->class - b->class;
	if (a->wait != b->wait)
		return a->wait > b->wait ? -1 : 1;
	return strcmp(a->caller, b->caller);
}

/* The rows of kernel k's lock profile of variant v, in printing order. */
static size_t lock_rows(const struct data *d, size_t k, size_t v,
			struct lock_row **rows)
{
	size_t m, n = 0, cap = 0, len;
	const char *name, *slash;
	struct lock_row *r;

	*rows = NULL;
	for (m = 0; m < d->nmetrics; m++) {
		name = d->metrics[m];
		len = strlen(name);
		if (strncmp(name, "lock/", 5) || len < 15 ||
		    strcmp(name + len - 10, "/contended") ||
		    !has(d, k, v, name))
			continue;
		*rows = grow(*rows, sizeof(**rows), n, &cap);
		r = &(*rows)[n++];
		slash = strchr(name + 5, '/');
		r->type = xstrndup(name + 5, slash - name - 5);
		r->caller = xstrndup(slash + 1, name + len - 10 - slash - 1);
		r->class = classify(r->type, r->caller);
		r->contended = sum(d, k, v, name);
		r->wait = field(d, k, v, name, "wait_us", sum);
		r->max = field(d, k, v, name, "max_us", max_of);
		/* perf's own average where the row is one of perf's */
		r->avg = data_boots(d, k, v, name) == 1 ? field(d, k, v, name, "avg_us", sum) : -1;
	}
	qsort(*rows, n, sizeof(**rows), row_order);
	return n;
}

static void lock_cells(struct table *t, const char *kernel, int class,
		       const char *type, const char *caller,
		       const struct lock_row *r)
{
	table_row(t);
	table_cell(t, "%s", kernel);
	table_cell(t, "%s", lock_classes[class]);
	table_cell(t, "%s", type);
	table_cell(t, "%s", caller);
	table_cell(t, "%.0f", r->contended);
	table_cell(t, "%.2f", r->wait);
	table_cell(t, "%.2f", r->max);
	table_cell(t, "%.2f", r->avg >= 0 ? r->avg :
		   r->contended ? r->wait / r->contended : 0);
}

/*
 * mmap_lock's and zone->lock's rows, each with a total unless there is
 * one; every other lock summed up in one line, so that nothing silently
 * disappears.
 */
static void kernel_locks(const struct data *d, size_t k, size_t v,
			 struct table *t)
{
	struct lock_row *rows, total;
	size_t n = lock_rows(d, k, v, &rows), i, shown;
	int class;
	char *callers;

	for (class = 0; class < 3; class++) {
		total = (struct lock_row){ .class = class, .avg = -1 };
		for (i = shown = 0; i < n; i++) {
			if (rows[i].class != class)
				continue;
			if (class < 2)
				lock_cells(t, d->k[k].name, class, rows[i].type,
					   rows[i].caller, &rows[i]);
			shown++;
			total.contended += rows[i].contended;
			total.wait += rows[i].wait;
			total.max = rows[i].max > total.max ? rows[i].max : total.max;
		}
		if (class < 2 && !shown) {
			table_row(t);
			table_cell(t, "%s", d->k[k].name);
			table_cell(t, "%s", lock_classes[class]);
			table_cell(t, "(not contended)");
		} else if ((class < 2 && shown > 1) || (class == 2 && total.contended)) {
			callers = class < 2 ? xstrdup("") :
				  xasprintf("(%zu caller%s)", shown, shown == 1 ? "" : "s");
			lock_cells(t, d->k[k].name, class, "total", callers, &total);
			free(callers);
		}
	}
	for (i = 0; i < n; i++) {
		free(rows[i].type);
		free(rows[i].caller);
	}
	free(rows);
}

void report_locks(const struct data *d, FILE *out)
{
	size_t v, k, shown = 0;
	struct table t;

	for (v = 0; v < d->nvariants; v++) {
		for (k = 0; k < d->nk && !has(d, k, v, "lock/rows"); k++)
			;
		if (k == d->nk)
			continue;
		fprintf(out, "Lock contention  %s  (perf lock contention; times in us)\n",
			d->variants[v]);
		table_init(&t, "llllrrrr");
		table_row(&t);
		table_cell(&t, "kernel");
		table_cell(&t, "lock");
		table_cell(&t, "type");
		table_cell(&t, "caller");
		table_cell(&t, "contended");
		table_cell(&t, "total wait");
		table_cell(&t, "max wait");
		table_cell(&t, "avg wait");
		for (k = 0; k < d->nk; k++) {
			if (has(d, k, v, "lock/rows")) {
				kernel_locks(d, k, v, &t);
				continue;
			}
			table_row(&t);
			table_cell(&t, "%s", d->k[k].name);
			table_cell(&t, "-");
			table_cell(&t, data_boots(d, k, v, "") ? "(no lock profile)" :
				   "(variant not run)");
		}
		table_print(&t, "", out);
		fputc('\n', out);
		shown++;
	}
	if (shown)
		fputs("perf lock contention (tracepoint mode) names lock types, not locks:\n"
		      "mmap_lock is every rwsem, zone->lock every spinlock taken by the page\n"
		      "allocator (rmqueue_bulk, free_pcppages_bulk, ...). Callers are\n"
		      "functions, offsets dropped and rows of the same function merged.\n\n",
		      out);
}

/* The mean per boot of a vmstat counter; 0 if kernel k has it, else -1. */
static int vm_mean(const struct data *d, size_t k, size_t v, const char *name,
		   double *mean)
{
	size_t boots = data_boots(d, k, v, "vmstat/");

	if (!has(d, k, v, name))
		return -1;
	*mean = sum(d, k, v, name) / boots;
	return 0;
}

/* Rows: pgfault, then spf_*, then the rest unless zero on every kernel. */
static int wanted(const struct data *d, size_t v, const char *metric, int pass)
{
	int spf = !strncmp(metric, "vmstat/spf_", 11);
	int pgfault = !strcmp(metric, "vmstat/pgfault");
	double mean;
	size_t k;

	if (strncmp(metric, "vmstat/", 7))
		return 0;
	if (pass < 2)
		return pass ? spf : pgfault;
	for (k = 0; !pgfault && !spf && k < d->nk; k++)
		if (!vm_mean(d, k, v, metric, &mean) && mean != 0)
			return 1;
	return 0;
}

static void vmstat_table(const struct data *d, size_t v, FILE *out)
{
	size_t k, m, rows = 0;
	struct table t;
	double mean;
	int pass;

	report_kernel_columns(&t, d, v, "vmstat/");
	for (pass = 0; pass < 3; pass++)
		for (m = 0; m < d->nmetrics; m++) {
			if (!wanted(d, v, d->metrics[m], pass))
				continue;
			rows++;
			table_row(&t);
			table_cell(&t, "%s", d->metrics[m] + strlen("vmstat/"));
			for (k = 0; k < d->nk; k++)
				if (vm_mean(d, k, v, d->metrics[m], &mean))
					table_cell(&t, "-");
				else
					table_cell(&t, "%.1f", mean);
		}
	if (rows)
		fprintf(out, "vmstat  %s  (mean per boot)\n", d->variants[v]);
	table_print(&t, "", rows ? out : NULL);
	if (rows)
		fputc('\n', out);
}

void report_vmstat(const struct data *d, FILE *out)
{
	size_t v, shown = 0;

	for (v = 0; v < d->nvariants; v++) {
		if (!data_any_boot(d, v, "vmstat/"))
			continue;
		vmstat_table(d, v, out);
		shown++;
	}
	if (shown)
		fputs("Counters from each boot's vmstat.delta, averaged over the boots.\n"
		      "'-': the kernel has no such counter. Counters other than pgfault\n"
		      "and spf_* that are zero on every kernel are left out.\n\n",
		      out);
}
