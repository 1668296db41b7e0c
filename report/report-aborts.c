// SPDX-License-Identifier: GPL-2.0
/*
 * The report's speculation table: per variant and kernel with spf_*
 * counters, the faults speculation tried (spf_attempt per 100 page faults),
 * the share of attempts it completed (spf_success), the share that took
 * a lock after waiting for it (spf_pte_lock_waited, and
 * spf_pmd_lock_waited where the kernel waits for an install's locks too,
 * on kernels that wait) and the reasons it gave up most often
 * (spf_abort_*), as shares of attempts. From the boots'
 * /proc/vmstat deltas (vmstat/...), summed over the boots.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "table.h"
#include "util.h"

/* Abort reasons named per row. */
#define TOP_ABORTS	3

struct abort_share {
	const char *name;	/* after "vmstat/spf_abort_" */
	double count;
};

static int by_count(const void *pa, const void *pb)
{
	const struct abort_share *a = pa, *b = pb;

	if (a->count != b->count)
		return a->count < b->count ? 1 : -1;
	return strcmp(a->name, b->name);
}

/* "vma_busy 12.3%, ..." for the most frequent aborts, "-" for none. */
static char *top_aborts(const struct data *d, size_t k, size_t v, double attempts)
{
	struct abort_share *a = xrealloc(NULL, (d->nmetrics + 1) * sizeof(*a));
	const char *prefix = "vmstat/spf_abort_";
	size_t m, n = 0, i, len = 0;
	char *s = xstrdup("");

	for (m = 0; m < d->nmetrics; m++) {
		double c;

		if (strncmp(d->metrics[m], prefix, strlen(prefix)))
			continue;
		c = data_sum(d, k, v, d->metrics[m]);
		if (isnan(c) || c <= 0)
			continue;
		a[n].name = d->metrics[m] + strlen(prefix);
		a[n++].count = c;
	}
	qsort(a, n, sizeof(*a), by_count);
	for (i = 0; i < n && i < TOP_ABORTS; i++) {
		double share = 100 * a[i].count / attempts;
		char *item = share < 0.01 ?
			xasprintf("%s%s <0.01%%", i ? ", " : "", a[i].name) :
			xasprintf("%s%s %.2f%%", i ? ", " : "", a[i].name, share);

		s = xrealloc(s, len + strlen(item) + 1);
		strcpy(s + len, item);
		len += strlen(item);
		free(item);
	}
	free(a);
	if (!n) {
		free(s);
		s = xstrdup("-");
	}
	return s;
}

void report_aborts(const struct data *d, FILE *out)
{
	struct table t;
	size_t v, k, rows = 0;

	table_init(&t, "llrrrrl");
	table_row(&t);
	table_cell(&t, "variant");
	table_cell(&t, "kernel");
	table_cell(&t, "tried");
	table_cell(&t, "attempts");
	table_cell(&t, "completed");
	table_cell(&t, "waited");
	table_cell(&t, "gave up most for (share of attempts)");
	for (v = 0; v < d->nvariants; v++)
		for (k = 0; k < d->nk; k++) {
			double attempts = data_sum(d, k, v, "vmstat/spf_attempt");
			double success = data_sum(d, k, v, "vmstat/spf_success");
			double faults = data_sum(d, k, v, "vmstat/pgfault");
			double waited = data_sum(d, k, v, "vmstat/spf_pte_lock_waited");
			double pmd_waited = data_sum(d, k, v, "vmstat/spf_pmd_lock_waited");
			char *top;

			if (!isnan(pmd_waited))
				waited = isnan(waited) ? pmd_waited : waited + pmd_waited;

			if (isnan(attempts) || isnan(success))
				continue;
			rows++;
			table_row(&t);
			table_cell(&t, "%s", d->variants[v]);
			table_cell(&t, "%s", d->k[k].name);
			if (isnan(faults) || faults <= 0)
				table_cell(&t, "-");
			else
				table_cell(&t, "%.1f%%", 100 * attempts / faults);
			table_cell(&t, "%.0f", attempts);
			if (attempts <= 0) {
				table_cell(&t, "-");
				table_cell(&t, "-");
				table_cell(&t, "-");
				continue;
			}
			table_cell(&t, "%.1f%%", 100 * success / attempts);
			if (isnan(waited))
				table_cell(&t, "-");
			else
				table_cell(&t, "%.2f%%", 100 * waited / attempts);
			top = top_aborts(d, k, v, attempts);
			table_cell(&t, "%s", top);
			free(top);
		}
	if (!rows) {
		table_print(&t, "", NULL);
		return;
	}
	fputs("Speculation  (the kernels with spf_* counters, summed over the boots)\n", out);
	table_print(&t, "", out);
	fputs("\ntried: speculative attempts per 100 page faults (pgfault: the whole guest's);\n"
	      "completed: the attempts that finished without mmap_lock; waited: the\n"
	      "attempts that found the PTE lock, or the locks of an install at an\n"
	      "empty PMD, held and took them after waiting (spf_pte_lock_waited +\n"
	      "spf_pmd_lock_waited; '-': the kernel does not wait); the rest gave\n"
	      "up to the classic path, for the reasons named (spf_abort_*, their share\n"
	      "of the attempts).\n\n", out);
}
