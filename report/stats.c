// SPDX-License-Identifier: GPL-2.0
/*
 * Summary statistics and Welch's t-test.
 *
 * The rates compared here (faults per second) are averaged with the
 * harmonic mean, like mmtests does for throughput: every run did a
 * comparable amount of work, and the harmonic mean of rates is the rate
 * of the total.
 */
#include <math.h>

#include "stats.h"

double stats_mean(const double *v, size_t n)
{
	double sum = 0;
	size_t i;

	if (!n)
		return NAN;
	for (i = 0; i < n; i++)
		sum += v[i];
	return sum / n;
}

/* A zero or negative rate has no harmonic mean worth printing. */
double stats_hmean(const double *v, size_t n)
{
	double sum = 0;
	size_t i;

	if (!n)
		return NAN;
	for (i = 0; i < n; i++) {
		if (v[i] <= 0)
			return NAN;
		sum += 1 / v[i];
	}
	return n / sum;
}

/* Sample standard deviation (n - 1 in the denominator). */
double stats_stddev(const double *v, size_t n)
{
	double mean = stats_mean(v, n), ss = 0;
	size_t i;

	if (n < 2)
		return NAN;
	for (i = 0; i < n; i++)
		ss += (v[i] - mean) * (v[i] - mean);
	return sqrt(ss / (n - 1));
}

/* Coefficient of variation in percent: stddev over arithmetic mean. */
double stats_coeffvar(const double *v, size_t n)
{
	return 100 * stats_stddev(v, n) / stats_mean(v, n);
}

double stats_min(const double *v, size_t n)
{
	double m = NAN;
	size_t i;

	for (i = 0; i < n; i++)
		if (i == 0 || v[i] < m)
			m = v[i];
	return m;
}

double stats_max(const double *v, size_t n)
{
	double m = NAN;
	size_t i;

	for (i = 0; i < n; i++)
		if (i == 0 || v[i] > m)
			m = v[i];
	return m;
}

/*
 * Continued fraction for I_x(a, b), evaluated with the modified Lentz
 * method (Numerical Recipes, 2nd ed., 6.4). It converges quickly for
 * x < (a + 1) / (a + b + 2); stats_ibeta() uses the symmetry
 * I_x(a, b) = 1 - I_{1-x}(b, a) to stay in that region.
 */
static double ibeta_cf(double a, double b, double x)
{
	const double tiny = 1e-300, eps = 1e-16;
	double c = 1, d, h, num, delta;
	int m;

	d = 1 - (a + b) * x / (a + 1);
	if (fabs(d) < tiny)
		d = tiny;
	d = 1 / d;
	h = d;
	for (m = 1; m <= 10000; m++) {
		/* Even step: d_{2m}. */
		num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
		d = 1 + num * d;
		c = 1 + num / c;
		if (fabs(d) < tiny)
			d = tiny;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1 / d;
		h *= d * c;
		/* Odd step: d_{2m+1}. */
		num = -(a + m) * (a + b + m) * x /
		      ((a + 2 * m) * (a + 2 * m + 1));
		d = 1 + num * d;
		c = 1 + num / c;
		if (fabs(d) < tiny)
			d = tiny;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1 / d;
		delta = d * c;
		h *= delta;
		if (fabs(delta - 1) < eps)
			break;
	}
	return h;
}

double stats_ibeta(double a, double b, double x)
{
	double front;

	if (isnan(x) || a <= 0 || b <= 0)
		return NAN;
	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	/* x^a (1-x)^b / B(a, b), in logs so large a and b do not overflow. */
	front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) +
		    a * log(x) + b * log1p(-x));
	if (x < (a + 1) / (a + b + 2))
		return front * ibeta_cf(a, b, x) / a;
	return 1 - front * ibeta_cf(b, a, 1 - x) / b;
}

/* P(|T| >= |t|) = I_{df / (df + t^2)}(df / 2, 1 / 2). */
double stats_t_pvalue(double t, double df)
{
	if (isnan(t) || isnan(df) || df <= 0)
		return NAN;
	if (isinf(t))
		return 0;
	return stats_ibeta(df / 2, 0.5, df / (df + t * t));
}

/*
 * Welch's unequal-variances t-test. Two sides that both have zero
 * variance leave t undefined (0 / 0 or x / 0); they are taken as equal
 * (p = 1) when their means are, and as different (p = 0) otherwise, which
 * is what anyone looking at the samples would conclude.
 */
int stats_welch(const double *a, size_t na, const double *b, size_t nb,
		struct welch *res)
{
	double ma, mb, va, vb, se2;

	if (na < 2 || nb < 2)
		return -1;
	ma = stats_mean(a, na);
	mb = stats_mean(b, nb);
	va = stats_stddev(a, na);
	vb = stats_stddev(b, nb);
	va = va * va / na;
	vb = vb * vb / nb;
	se2 = va + vb;
	if (se2 == 0) {
		res->t = ma == mb ? 0 : copysign(INFINITY, ma - mb);
		res->df = na + nb - 2;
		res->p = ma == mb ? 1 : 0;
		return 0;
	}
	res->t = (ma - mb) / sqrt(se2);
	res->df = se2 * se2 / (va * va / (na - 1) + vb * vb / (nb - 1));
	res->p = stats_t_pvalue(res->t, res->df);
	return 0;
}
