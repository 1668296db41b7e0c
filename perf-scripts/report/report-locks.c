// SPDX-License-Identifier: GPL-2.0
/*
 * The lock contention tables: per variant and kernel, the mmap_lock and
 * zone->lock rows of `perf lock contention`, a total for each, and one
 * line summing up every other lock so that nothing silently disappears.
 */
#define _GNU_SOURCE
#include <string.h>

#include "report.h"
#include "util.h"

/* Column widths: the widest of the header and the cells. */
struct widths {
	int kernel, type, caller, contended, total, max, avg;
};

static void widen(int *w, const char *s)
{
	if ((int)strlen(s) > *w)
		*w = strlen(s);
}

static void widen_numbers(struct widths *w, const struct lock_row *row)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%lu", row->contended);
	widen(&w->contended, buf);
	snprintf(buf, sizeof(buf), "%.2f", row->total_us);
	widen(&w->total, buf);
	snprintf(buf, sizeof(buf), "%.2f", row->max_us);
	widen(&w->max, buf);
	snprintf(buf, sizeof(buf), "%.2f", row->avg_us);
	widen(&w->avg, buf);
}

/* "(3 callers)": how many rows the "other" total stands for. */
static void other_callers(char *buf, size_t len, const struct lock_table *t)
{
	size_t i, n = 0;

	for (i = 0; i < t->n; i++)
		n += t->rows[i].class == LOCK_OTHER;
	snprintf(buf, len, "(%zu caller%s)", n, n == 1 ? "" : "s");
}

static void measure_table(struct widths *w, const struct lock_table *t)
{
	struct lock_row total;
	char callers[32];
	size_t i;
	int class;

	for (i = 0; i < t->n; i++) {
		widen_numbers(w, &t->rows[i]);
		if (t->rows[i].class == LOCK_OTHER)
			continue;
		widen(&w->type, t->rows[i].type);
		widen(&w->caller, t->rows[i].caller);
	}
	other_callers(callers, sizeof(callers), t);
	widen(&w->caller, callers);
	for (class = 0; class < LOCK_NR_CLASSES; class++) {
		total = lock_table_total(t, class);
		widen_numbers(w, &total);
	}
}

static void measure(const struct report *r, const char *variant,
		    struct widths *w)
{
	const struct variant *v;
	size_t i;

	w->kernel = strlen("kernel");
	w->type = strlen("spinlock");
	w->caller = strlen("caller");
	w->contended = strlen("contended");
	w->total = strlen("total wait");
	w->max = strlen("max wait");
	w->avg = strlen("avg wait");
	for (i = 0; i < r->nk; i++) {
		widen(&w->kernel, r->k[i].name);
		v = kernel_variant(&r->k[i], variant);
		if (v)
			measure_table(w, &v->locks);
	}
}

static void print_row(const struct widths *w, const char *kernel,
		      const struct lock_row *row, const char *type,
		      const char *caller, FILE *out)
{
	fprintf(out, "%-*s  %-10s  %-*s  %-*s  %*lu  %*.2f  %*.2f  %*.2f\n",
		w->kernel, kernel, lock_class_name(row->class), w->type, type,
		w->caller, caller, w->contended, row->contended, w->total,
		row->total_us, w->max, row->max_us, w->avg, row->avg_us);
}

/* The rows of one class, then their total (unless there is just one). */
static void print_class(const struct widths *w, const char *kernel,
			const struct lock_table *t, enum lock_class class,
			FILE *out)
{
	struct lock_row total = lock_table_total(t, class);
	size_t i, n = 0;

	for (i = 0; i < t->n; i++) {
		if (t->rows[i].class != class)
			continue;
		print_row(w, kernel, &t->rows[i], t->rows[i].type,
			  t->rows[i].caller, out);
		n++;
	}
	if (!n)
		fprintf(out, "%-*s  %-10s  (not contended)\n", w->kernel,
			kernel, lock_class_name(class));
	else if (n > 1)
		print_row(w, kernel, &total, "total", "", out);
}

/* Every other lock in one line: type and caller would be noise here. */
static void print_other(const struct widths *w, const char *kernel,
			const struct lock_table *t, FILE *out)
{
	struct lock_row total = lock_table_total(t, LOCK_OTHER);
	char callers[32];

	if (!total.contended)
		return;
	other_callers(callers, sizeof(callers), t);
	print_row(w, kernel, &total, "total", callers, out);
}

static int any_locks(const struct report *r, const char *variant)
{
	const struct variant *v;
	size_t i;

	for (i = 0; i < r->nk; i++) {
		v = kernel_variant(&r->k[i], variant);
		if (v && v->has_locks)
			return 1;
	}
	return 0;
}

static void lock_table(const struct report *r, const char *variant,
		       FILE *out)
{
	const struct variant *v;
	struct widths w;
	size_t i;

	measure(r, variant, &w);
	fprintf(out, "Lock contention  %s  (perf lock contention; times in us)\n",
		variant);
	fprintf(out, "%-*s  %-10s  %-*s  %-*s  %*s  %*s  %*s  %*s\n",
		w.kernel, "kernel", "lock", w.type, "type", w.caller, "caller",
		w.contended, "contended", w.total, "total wait", w.max,
		"max wait", w.avg, "avg wait");
	for (i = 0; i < r->nk; i++) {
		v = kernel_variant(&r->k[i], variant);
		if (!v || !v->has_locks) {
			fprintf(out, "%-*s  -  (%s)\n", w.kernel, r->k[i].name,
				v ? "no lock.txt" : "variant not run");
			continue;
		}
		print_class(&w, r->k[i].name, &v->locks, LOCK_MMAP, out);
		print_class(&w, r->k[i].name, &v->locks, LOCK_ZONE, out);
		print_other(&w, r->k[i].name, &v->locks, out);
	}
	fputc('\n', out);
}

void report_locks(const struct report *r, FILE *out)
{
	size_t i, shown = 0;

	for (i = 0; i < r->nvariants; i++) {
		if (!any_locks(r, r->variants[i]))
			continue;
		lock_table(r, r->variants[i], out);
		shown++;
	}
	if (!shown)
		return;
	fputs("perf lock contention (tracepoint mode) names lock types, not locks:\n"
	      "mmap_lock is every rwsem, zone->lock every spinlock taken by the page\n"
	      "allocator (rmqueue_bulk, free_pcppages_bulk, ...). Callers are\n"
	      "functions, offsets dropped and rows of the same function merged.\n\n",
	      out);
}
