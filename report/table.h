/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one table printer of the report: columns as wide as their widest
 * cell, two spaces apart, each aligned left ('l') or right ('r').
 */
#ifndef REPORT_TABLE_H
#define REPORT_TABLE_H

#include <stdio.h>

#include "util.h"

struct table {
	char *align;		/* one letter a column */
	char ***rows;		/* cells of each row, NULL-terminated */
	size_t nrows, cap, ncells, cells_cap;
};

void table_init(struct table *t, const char *align);

/* Start a row; the cells that follow fill it left to right. */
void table_row(struct table *t);

__printf(2, 3) void table_cell(struct table *t, const char *fmt, ...);

/*
 * Print the table, each line after indent, and free it. The last cell of a
 * row that has fewer cells than columns ("(not contended)") overhangs: it
 * does not widen its column. With out NULL, only free it.
 */
void table_print(struct table *t, const char *indent, FILE *out);

#endif
