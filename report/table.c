// SPDX-License-Identifier: GPL-2.0
/*
 * The report's tables; see table.h.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "table.h"

void table_init(struct table *t, const char *align)
{
	memset(t, 0, sizeof(*t));
	t->align = xstrdup(align);
}

void table_row(struct table *t)
{
	size_t ncols = strlen(t->align);

	t->rows = grow(t->rows, sizeof(*t->rows), t->nrows, &t->cap);
	t->rows[t->nrows] = xrealloc(NULL, (ncols + 1) * sizeof(**t->rows));
	t->rows[t->nrows++][0] = NULL;
	t->ncells = 0;
}

void table_cell(struct table *t, const char *fmt, ...)
{
	char **row = t->rows[t->nrows - 1];
	va_list ap;

	if (t->ncells == strlen(t->align))
		fatal("internal error: a table row with more cells than columns");
	va_start(ap, fmt);
	if (vasprintf(&row[t->ncells], fmt, ap) < 0)
		fatal("out of memory");
	va_end(ap);
	row[++t->ncells] = NULL;
}

void table_print(struct table *t, const char *indent, FILE *out)
{
	size_t ncols = strlen(t->align), *w = xrealloc(NULL, ncols * sizeof(*w));
	size_t r, c, len, line_len;
	char *line = NULL;
	FILE *f;

	memset(w, 0, ncols * sizeof(*w));
	for (r = 0; r < t->nrows; r++)
		for (c = 0; t->rows[r][c]; c++)
			if ((t->rows[r][c + 1] || c + 1 == ncols) &&
			    strlen(t->rows[r][c]) > w[c])
				w[c] = strlen(t->rows[r][c]);
	for (r = 0; r < t->nrows; r++) {
		f = open_memstream(&line, &line_len);
		if (!f)
			fatal("out of memory");
		for (c = 0; t->rows[r][c]; c++) {
			fprintf(f, "%s%*s", c ? "  " : indent,
				t->align[c] == 'r' ? (int)w[c] : -(int)w[c],
				t->rows[r][c]);
			free(t->rows[r][c]);
		}
		fclose(f);
		if (!out)
			goto next;
		/* Empty cells at the end of a line leave no trailing blanks. */
		len = strlen(line);
		while (len && line[len - 1] == ' ')
			line[--len] = '\0';
		fprintf(out, "%s\n", line);
next:
		free(line);
		free(t->rows[r]);
	}
	free(t->rows);
	free(t->align);
	free(w);
}
