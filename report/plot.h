/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The bar chart of the faults/s Hmean per variant and kernel, drawn by
 * gnuplot from a script and a data file written next to the PNG.
 */
#ifndef REPORT_PLOT_H
#define REPORT_PLOT_H

#include "samples.h"

/*
 * Exits with EXIT_USAGE, after one line saying so, when png or the .gp
 * and .dat beside it exist and are not regular files: the plot replaces
 * them.
 */
void plot_check_paths(const char *png);

/* Returns 0, or EXIT_PLOT after saying on stderr why there is no PNG. */
int plot_write(const struct data *d, const char *png);

#endif
