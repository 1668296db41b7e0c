// SPDX-License-Identifier: GPL-2.0
/*
 * Instructions per fault, for runs under qemu/run --icount SHIFT (the
 * conditions file says "icount: SHIFT"). The guest clock then advances
 * 2^SHIFT ns per instruction, so a rate in faults per guest second is a
 * count: 1e9 / (rate * 2^SHIFT) instructions per fault, everything the
 * one vCPU executed (the fault, the benchmark's zapping and loop,
 * interrupts) shared among the faults. The host's noise does not reach
 * it; cache misses and lock contention do not either: it measures the
 * length of the path, not its time.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "stats.h"
#include "util.h"

/* "3 (guest clock: ...)" -> 3; -1 when off, missing or not a shift. */
static int icount_shift(const struct report *r)
{
	char *value = report_condition(r, "icount"), *end;
	long shift;

	if (!value)
		return -1;
	shift = strtol(value, &end, 10);
	if (end == value || shift < 0 || shift > 10)
		shift = -1;
	free(value);
	return shift;
}

/* Instructions per fault of one run's rate. */
static double per_fault(double rate, int shift)
{
	return 1e9 / (rate * (double)(1L << shift));
}

/* Mean and the runs' spread (largest minus smallest) of a variant's runs. */
static int instructions(const struct kernel *k, const char *variant, int shift,
			double *mean, double *spread)
{
	const struct variant *v = kernel_variant(k, variant);
	double lo = INFINITY, hi = -INFINITY, sum = 0, x;
	size_t i;

	if (!v || !v->faults.n)
		return -1;
	for (i = 0; i < v->faults.n; i++) {
		if (v->faults.v[i] <= 0)
			return -1;
		x = per_fault(v->faults.v[i], shift);
		sum += x;
		lo = fmin(lo, x);
		hi = fmax(hi, x);
	}
	*mean = sum / v->faults.n;
	*spread = hi - lo;
	return 0;
}

static void icount_table(const struct report *r, const char *variant,
			 int shift, FILE *out)
{
	double base = NAN, mean, spread;
	size_t i, w = strlen("kernel");

	for (i = 0; i < r->nk; i++)
		if (strlen(r->k[i].name) > w)
			w = strlen(r->k[i].name);
	fprintf(out, "instructions/fault  %s  %s\n", variant,
		report_variant_config(r, variant));
	fprintf(out, "%-*s  %12s  %10s  %8s  %10s\n", (int)w, "kernel",
		"instructions", "change", "", "runs' range");
	for (i = 0; i < r->nk; i++) {
		fprintf(out, "%-*s", (int)w, r->k[i].name);
		if (instructions(&r->k[i], variant, shift, &mean, &spread)) {
			fprintf(out, "  %12s  %10s  %8s  %10s\n", "-", "-", "", "-");
			continue;
		}
		if (i == 0)
			base = mean;
		if (isnan(base))
			fprintf(out, "  %12.1f  %10s  %8s  %10.1f\n", mean, "-", "",
				spread);
		else
			fprintf(out, "  %12.1f  %+10.1f  %+7.2f%%  %10.1f\n", mean,
				mean - base, 100 * (mean - base) / base, spread);
	}
	fputc('\n', out);
}

void report_icount(const struct report *r, FILE *out)
{
	int shift = icount_shift(r);
	size_t i;

	if (shift < 0)
		return;
	for (i = 0; i < r->nvariants; i++)
		icount_table(r, r->variants[i], shift, out);
	fprintf(out,
		"Under qemu/run --icount %d the guest clock counts instructions\n"
		"(2^%d ns each): instructions/fault = 1e9 / (faults/s * 2^%d), the\n"
		"mean over the runs, all the vCPU executed shared among the faults\n"
		"(the zapping, the benchmark's loop, interrupts; QEMU counts each\n"
		"iteration of a rep-prefixed string instruction). It is the length\n"
		"of the path, not its time: cache misses and contention are not in\n"
		"it. change: against %s; lower is better. runs' range: largest\n"
		"minus smallest run.\n\n",
		shift, shift, shift, r->k[0].name);
}
