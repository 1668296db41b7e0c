// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for stats.c, printing TAP lines; exit status 0 iff all pass.
 *
 * The reference values were computed independently with SciPy 1.10.1 and
 * NumPy 1.24.2 (Debian 12 packages python3-scipy 1.10.1-2), printed with
 * "%.17g", by this script:
 *
 *   import numpy as np, scipy.stats as st, scipy.special as sp
 *   from scipy.stats._stats_py import _unequal_var_ttest_denom
 *   for a, b in data_sets:                  # the arrays in sets[] below
 *       a, b = np.array(a), np.array(b)
 *       r = st.ttest_ind(a, b, equal_var=False)        # t and p
 *       df, _ = _unequal_var_ttest_denom(np.var(a, ddof=1), len(a),
 *                                        np.var(b, ddof=1), len(b))
 *       st.hmean(a); np.std(a, ddof=1); st.variation(a, ddof=1) * 100
 *   sp.betainc(a, b, x)                     # ibeta_refs[]
 *   2 * st.t.sf(abs(t), df)                 # tp_refs[]
 *
 * (SciPy 1.10's ttest_ind does not return df; _unequal_var_ttest_denom is
 * the function it uses for it, and 2 * t.sf(|t|, df) was checked to equal
 * ttest_ind's p-value for every set.) The "large_n" set is
 * a[i] = 1000 + 50 sin(i), b[i] = 1010 + 80 cos(i), i = 0..99, generated
 * the same way here and with np.sin/np.cos there.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "stats.h"

#define MAXN	100
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define __printf(a, b)	__attribute__((format(printf, a, b)))

struct ref_set {
	const char *name;
	size_t na, nb;
	double a[MAXN], b[MAXN];
	double hmean_a, hmean_b, sd_a, sd_b, cv_a, cv_b;
	double t, df, p;
};

static struct ref_set sets[] = {
	{ "equal variances", 5, 5,
	  { 10.1, 9.8, 10.3, 10.0, 9.9 }, { 10.6, 10.4, 10.9, 10.5, 10.7 },
	  10.017065132913785, 10.617229962310274,
	  0.1923538406167134, 0.1923538406167134,
	  1.9196990081508325, 1.8112414370688648,
	  -4.931969619160717, 8, 0.0011465920428410143 },
	{ "unequal variances and sizes", 6, 4,
	  { 251234.5, 249871.2, 252310.8, 250998.1, 251502.7, 250411.3 },
	  { 290112.4, 275403.9, 301877.0, 283310.6 },
	  251052.3581020635, 287350.68749751494,
	  851.89888993158127, 11214.062622848447,
	  0.33932790890310965, 3.8981575096246557,
	  -6.518772961966298, 3.0231015080306176, 0.007163176705104842 },
	{ "two samples each", 2, 2,
	  { 5.0, 7.0 }, { 6.0, 9.5 },
	  5.833333333333333, 7.3548387096774208,
	  1.4142135623730951, 2.4748737341529163,
	  23.570226039551585, 31.933854634231178,
	  -0.8682431421244593, 1.590139254798645, 0.49633455257665526 },
	{ "identical samples", 4, 4,
	  { 3.1, 2.9, 3.4, 3.0 }, { 3.1, 2.9, 3.4, 3.0 },
	  3.0891389300633341, 3.0891389300633341,
	  0.21602468994692867, 0.21602468994692867,
	  6.9685383853847958, 6.9685383853847958,
	  0, 6, 1 },
	{ "clearly significant", 5, 5,
	  { 180100.0, 181250.0, 179800.0, 180700.0, 180400.0 },
	  { 240300.0, 238900.0, 241700.0, 239500.0, 240800.0 },
	  180448.61585450775, 240236.01225623384,
	  559.01699437494744, 1094.5318634009702,
	  0.30979052057353695, 0.45559934373999761,
	  -108.78103604662149, 5.953863700229685, 4.7531622759362493e-11 },
	{ "clearly not significant", 5, 5,
	  { 180100.0, 181250.0, 179800.0, 180700.0, 180400.0 },
	  { 180900.0, 179600.0, 181400.0, 180200.0, 179950.0 },
	  180448.61585450775, 180407.63923933581,
	  559.01699437494744, 730.06848993775918,
	  0.30979052057353695, 0.40467185296699698,
	  0.097272076617159489, 7.4905476885436038, 0.92506232344730499 },
	{ "large_n", 100, 100, { 0 }, { 0 },
	  998.93825735136511, 1006.5129182551213,
	  35.537198987242427, 56.845826722636616,
	  3.5530462506995706, 5.6300594090203067,
	  -1.4162796778798485, 166.12819096651396, 0.15856591617247981 },
};

static const struct { double a, b, x, ref; } ibeta_refs[] = {
	{ 0.5, 0.5, 0.3, 0.36901011956554541 },
	{ 2.5, 0.5, 0.9, 0.48958974456442739 },
	{ 50.0, 0.5, 0.95, 0.023872705496990731 },
	{ 1.5, 7.25, 0.2, 0.65815859087883022 },
	{ 400.0, 0.5, 0.999, 0.37112320531929344 },
};

static const struct { double t, df, ref; } tp_refs[] = {
	{ 0.0, 4.0, 1 },
	{ 2.0, 3.0, 0.13932596855884311 },
	{ -2.5, 7.3, 0.039650234665600415 },
	{ 10.0, 2.0, 0.0098524570233256923 },
	{ 1.96, 10000.0, 0.050023520231833027 },
	{ 6.0, 17.5, 1.2689753664574583e-05 },
};

static int failures;

static void __printf(2, 3)
ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", cond ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!cond)
		failures++;
}

/* |got - want| within rel of |want|; an exact zero wants an exact zero. */
static int close_to(double got, double want, double rel)
{
	if (want == 0)
		return fabs(got) < 1e-300;
	return fabs(got - want) <= rel * fabs(want);
}

static void check(const char *what, const char *set, double got,
		  double want, double rel)
{
	ok(close_to(got, want, rel), "%s, %s", what, set);
	if (!close_to(got, want, rel))
		printf("#   got %.17g, want %.17g\n", got, want);
}

static void fill_large_n(struct ref_set *s)
{
	size_t i;

	for (i = 0; i < MAXN; i++) {
		s->a[i] = 1000 + 50 * sin(i);
		s->b[i] = 1010 + 80 * cos(i);
	}
}

static void test_set(const struct ref_set *s)
{
	struct welch w;
	int ret;

	check("hmean a", s->name, stats_hmean(s->a, s->na), s->hmean_a, 1e-9);
	check("hmean b", s->name, stats_hmean(s->b, s->nb), s->hmean_b, 1e-9);
	check("stddev a", s->name, stats_stddev(s->a, s->na), s->sd_a, 1e-9);
	check("stddev b", s->name, stats_stddev(s->b, s->nb), s->sd_b, 1e-9);
	check("coeffvar a", s->name, stats_coeffvar(s->a, s->na), s->cv_a, 1e-9);
	check("coeffvar b", s->name, stats_coeffvar(s->b, s->nb), s->cv_b, 1e-9);
	ret = stats_welch(s->a, s->na, s->b, s->nb, &w);
	ok(ret == 0, "welch returns 0, %s", s->name);
	check("welch t", s->name, w.t, s->t, 1e-9);
	check("welch df", s->name, w.df, s->df, 1e-9);
	check("welch p", s->name, w.p, s->p, 1e-6);
}

static void test_ibeta_and_t(void)
{
	char name[64];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ibeta_refs); i++) {
		snprintf(name, sizeof(name), "I_%g(%g, %g)", ibeta_refs[i].x,
			 ibeta_refs[i].a, ibeta_refs[i].b);
		check("ibeta", name, stats_ibeta(ibeta_refs[i].a, ibeta_refs[i].b,
						 ibeta_refs[i].x),
		      ibeta_refs[i].ref, 1e-9);
	}
	for (i = 0; i < ARRAY_SIZE(tp_refs); i++) {
		snprintf(name, sizeof(name), "t = %g, df = %g", tp_refs[i].t,
			 tp_refs[i].df);
		check("two-sided t p-value", name,
		      stats_t_pvalue(tp_refs[i].t, tp_refs[i].df),
		      tp_refs[i].ref, 1e-9);
	}
}

/* Cases SciPy answers with NaN; stats.c documents its own answers. */
static void test_edge_cases(void)
{
	const double same[] = { 7, 7, 7 }, other[] = { 9, 9, 9 };
	const double one[] = { 5 }, with_zero[] = { 3, 0, 4 };
	const double mixed[] = { 1, 2, 3, 4 };
	struct welch w;

	ok(stats_welch(one, 1, mixed, 4, &w) == -1,
	   "welch refuses a side with one sample");
	ok(stats_welch(same, 3, same, 3, &w) == 0 && w.p == 1 && w.t == 0,
	   "welch on equal constant samples: t = 0, p = 1");
	ok(stats_welch(same, 3, other, 3, &w) == 0 && w.p == 0 && isinf(w.t),
	   "welch on different constant samples: p = 0");
	ok(isnan(stats_hmean(with_zero, 3)),
	   "hmean of samples with a zero is NaN");
	ok(isnan(stats_stddev(one, 1)), "stddev of one sample is NaN");
	ok(stats_min(mixed, 4) == 1 && stats_max(mixed, 4) == 4,
	   "min and max");
	check("mean", "1..4", stats_mean(mixed, 4), 2.5, 1e-15);
}

int main(int argc, char **argv)
{
	size_t i;

	/* A test, not a tool; it still answers like the others. */
	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs("usage: report/stats-test\n"
		      "Unit tests of stats.c against SciPy's values, as TAP lines (tests/host/stats).\n"
		      "Exit status: 0 when all pass; 1 when one fails; 2 on bad usage.\n", stdout);
		return 0;
	}
	if (argc > 1) {
		fprintf(stderr, "stats-test: error: %s '%s' (no arguments; see --help)\n",
			argv[1][0] == '-' ? "unknown option" : "unexpected argument", argv[1]);
		return 2;
	}

	for (i = 0; i < ARRAY_SIZE(sets); i++) {
		if (!strcmp(sets[i].name, "large_n"))
			fill_large_n(&sets[i]);
		test_set(&sets[i]);
	}
	test_ibeta_and_t();
	test_edge_cases();
	printf("# %d failed\n", failures);
	return failures ? 1 : 0;
}
