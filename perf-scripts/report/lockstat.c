// SPDX-License-Identifier: GPL-2.0
/*
 * Parse `perf lock contention` output (perf 6.1, tracepoint mode):
 *
 *  contended   total wait     max wait     avg wait         type   caller
 *
 *         75      1.02 ms     33.71 us     13.59 us     rwsem:R   lock_mm_and_find_vma+0x5a
 *
 * In that mode perf does not know which lock was contended, only its type
 * and the caller. That is enough for this benchmark: the only rwsem its
 * threads take is mmap_lock, and the page allocator's spinlock callers
 * below take zone->lock. Lines that do not parse as a row (the header,
 * warnings, the debug summary) are skipped.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lockstat.h"
#include "util.h"

/* Page allocator functions that take zone->lock (or inline a caller that does). */
static const char *const zone_lock_callers[] = {
	"rmqueue_bulk", "rmqueue_buddy", "rmqueue", "__rmqueue_pcplist",
	"free_pcppages_bulk", "free_one_page", "__free_pages_ok",
	"__free_one_page", "rmqueue_fallback", "__rmqueue",
};

const char *lock_class_name(enum lock_class class)
{
	switch (class) {
	case LOCK_MMAP:
		return "mmap_lock";
	case LOCK_ZONE:
		return "zone->lock";
	default:
		return "other";
	}
}

static enum lock_class classify(const char *type, const char *caller)
{
	size_t i;

	if (!strncmp(type, "rwsem", 5))
		return LOCK_MMAP;
	if (strcmp(type, "spinlock"))
		return LOCK_OTHER;
	for (i = 0; i < ARRAY_SIZE(zone_lock_callers); i++)
		if (!strcmp(caller, zone_lock_callers[i]))
			return LOCK_ZONE;
	return LOCK_OTHER;
}

/* perf prints times with the largest unit that fits: ns, us, ms, s, m, h. */
static int to_us(double val, const char *unit, double *us)
{
	static const struct { const char *unit; double scale; } units[] = {
		{ "ns", 1e-3 }, { "us", 1 }, { "ms", 1e3 }, { "s", 1e6 },
		{ "m", 60e6 }, { "h", 3600e6 },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(units); i++) {
		if (!strcmp(unit, units[i].unit)) {
			*us = val * units[i].scale;
			return 0;
		}
	}
	return -1;
}

/* "lock_mm_and_find_vma+0x5a" -> "lock_mm_and_find_vma", in place. */
static void strip_offset(char *caller)
{
	char *plus = strstr(caller, "+0x");

	if (plus)
		*plus = '\0';
}

static int parse_row(const char *line, struct lock_row *row)
{
	char u1[8], u2[8], u3[8], type[32], caller[256] = "";
	double total, max, avg;
	int n;

	n = sscanf(line, " %lu %lf %7s %lf %7s %lf %7s %31s %255s",
		   &row->contended, &total, u1, &max, u2, &avg, u3, type,
		   caller);
	if (n < 8)
		return -1;
	if (to_us(total, u1, &row->total_us) || to_us(max, u2, &row->max_us) ||
	    to_us(avg, u3, &row->avg_us))
		return -1;
	strip_offset(caller);
	row->class = classify(type, caller);
	row->type = xstrdup(type);
	row->caller = xstrdup(caller);
	return 0;
}

/*
 * perf prints one row per caller address; after the offsets are gone two
 * rows can name the same function, and the reader wants them as one.
 */
static void add_row(struct lock_table *t, struct lock_row *row)
{
	struct lock_row *r;
	size_t i;

	for (i = 0; i < t->n; i++) {
		r = &t->rows[i];
		if (strcmp(r->type, row->type) || strcmp(r->caller, row->caller))
			continue;
		r->contended += row->contended;
		r->total_us += row->total_us;
		if (row->max_us > r->max_us)
			r->max_us = row->max_us;
		r->avg_us = r->contended ? r->total_us / r->contended : 0;
		free(row->type);
		free(row->caller);
		return;
	}
	t->rows = grow(t->rows, sizeof(*t->rows), t->n, &t->cap);
	t->rows[t->n++] = *row;
}

static int row_order(const void *pa, const void *pb)
{
	const struct lock_row *a = pa, *b = pb;

	if (a->class != b->class)
		return a->class < b->class ? -1 : 1;
	if (a->total_us != b->total_us)
		return a->total_us > b->total_us ? -1 : 1;
	return strcmp(a->caller, b->caller);
}

int lock_table_read(const char *path, struct lock_table *t)
{
	char *text = read_file(path), *line, *save;
	struct lock_row row;

	memset(t, 0, sizeof(*t));
	if (!text)
		return -1;
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (!parse_row(line, &row))
			add_row(t, &row);
	free(text);
	qsort(t->rows, t->n, sizeof(*t->rows), row_order);
	return 0;
}

struct lock_row lock_table_total(const struct lock_table *t,
				 enum lock_class class)
{
	struct lock_row sum = { .class = class };
	size_t i;

	for (i = 0; i < t->n; i++) {
		if (t->rows[i].class != class)
			continue;
		sum.contended += t->rows[i].contended;
		sum.total_us += t->rows[i].total_us;
		if (t->rows[i].max_us > sum.max_us)
			sum.max_us = t->rows[i].max_us;
	}
	sum.avg_us = sum.contended ? sum.total_us / sum.contended : 0;
	return sum;
}

void lock_table_free(struct lock_table *t)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		free(t->rows[i].type);
		free(t->rows[i].caller);
	}
	free(t->rows);
	memset(t, 0, sizeof(*t));
}
