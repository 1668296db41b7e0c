/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Plots drawn by gnuplot from a script and a data file written next to
 * the PNG: plot.c runs gnuplot, plot-faults.c draws the report's bar
 * chart, report/sweep its lines.
 */
#ifndef REPORT_PLOT_H
#define REPORT_PLOT_H

#include <stdio.h>

#include "samples.h"

/*
 * Exits with EXIT_USAGE, after one line saying so, when png or the .gp
 * and .dat beside it exist and are not regular files: the plot replaces
 * them.
 */
void plot_check_paths(const char *png);

/* s as a gnuplot single-quoted string. */
void plot_quoted(FILE *f, const char *s);

/*
 * The start of every script: a comment naming the tool that wrote it, a
 * PNG terminal of width x height (pngcairo where gnuplot has it) and the
 * output, the variable png, which plot_draw() sets to a temporary file
 * and which defaults to png_name when the script is run by hand.
 */
void plot_preamble(FILE *f, const char *tool, const char *png_name,
		   int width, int height);

/*
 * Write FILE.dat with write_dat and FILE.gp with write_gp (given the
 * names of the .dat and the .png, without their directory) next to png,
 * then run gnuplot on them in that directory. Returns 0, or EXIT_PLOT
 * after saying on stderr why there is no PNG.
 */
int plot_draw(const char *png, void (*write_dat)(FILE *f, const void *ctx),
	      void (*write_gp)(FILE *f, const void *ctx, const char *dat_name,
			       const char *png_name),
	      const void *ctx);

/* The report's bar chart of the faults/s Hmean per variant and kernel. */
int plot_write(const struct data *d, const char *png);

#endif
