/* attn_ref.c - CPU reference of scaled-dot-product attention for one head (formulas in attn_ref.h).
 *
 * Every output element is O(s d) work and needs no scratch memory: the
 * forward row takes two passes over the keys (the maximum score first, so
 * the exponentials cannot overflow), the backward rows one pass each,
 * recomputing p from the forward's log-sum-exp as a flash kernel does. */
#include "attn_ref.h"

#include <math.h>

double attn_ref_flops(bool bwd, bool causal, double bh, double s, double d)
{
	return (bwd ? 10.0 : 4.0) * bh * s * s * d * (causal ? 0.5 : 1.0);
}

static double dot(const double *x, const double *y, int d)
{
	double acc = 0.0;

	for (int t = 0; t < d; t++)
		acc += x[t] * y[t];
	return acc;
}

/* Number of keys query row r sees. */
static int keys_seen(const struct attn_ref_head *h, int r)
{
	return h->causal ? r + 1 : h->s;
}

void attn_ref_fwd_row(const struct attn_ref_head *h, int r, double *o, double *lse,
		      double *mag)
{
	const int d = h->d, n = keys_seen(h, r);
	const double *q = h->q + (long)r * d;
	double mx = -INFINITY, sum = 0.0;

	for (int j = 0; j < n; j++)
		mx = fmax(mx, h->scale * dot(q, h->k + (long)j * d, d));
	for (int t = 0; t < d; t++) {
		if (o)
			o[t] = 0.0;
		if (mag)
			mag[t] = 0.0;
	}
	for (int j = 0; j < n; j++) {
		const double e = exp(h->scale * dot(q, h->k + (long)j * d, d) - mx);
		const double *v = h->v + (long)j * d;

		sum += e;
		for (int t = 0; t < d; t++) {
			if (o)
				o[t] += e * v[t];
			if (mag)
				mag[t] += e * v[t] * e * v[t];
		}
	}
	for (int t = 0; t < d; t++) {
		if (o)
			o[t] /= sum;
		if (mag)
			mag[t] = sqrt(mag[t]) / sum;
	}
	if (lse)
		*lse = mx + log(sum);
}

void attn_ref_dq_row(const struct attn_ref_head *h, int r, double *dq, double *mag)
{
	const int d = h->d, n = keys_seen(h, r);
	const double *q = h->q + (long)r * d, *dout = h->dout + (long)r * d;
	const double D = dot(dout, h->o + (long)r * d, d);

	for (int t = 0; t < d; t++) {
		dq[t] = 0.0;
		if (mag)
			mag[t] = 0.0;
	}
	for (int j = 0; j < n; j++) {
		const double *k = h->k + (long)j * d;
		const double p = exp(h->scale * dot(q, k, d) - h->lse[r]);
		const double dp = dot(dout, h->v + (long)j * d, d);
		const double ds = p * (dp - D), bound = p * (fabs(dp) + fabs(D));

		for (int t = 0; t < d; t++) {
			dq[t] += h->scale * ds * k[t];
			if (mag)
				mag[t] += pow(h->scale * bound * k[t], 2);
		}
	}
	if (mag)
		for (int t = 0; t < d; t++)
			mag[t] = sqrt(mag[t]);
}

void attn_ref_dkv_row(const struct attn_ref_head *h, int c, double *dk, double *dk_mag,
		      double *dv, double *dv_mag)
{
	const int d = h->d;
	const double *k = h->k + (long)c * d, *v = h->v + (long)c * d;

	for (int t = 0; t < d; t++) {
		dk[t] = dv[t] = 0.0;
		if (dk_mag)
			dk_mag[t] = 0.0;
		if (dv_mag)
			dv_mag[t] = 0.0;
	}
	/* Query rows that see key c: i >= c when causal. */
	for (int i = h->causal ? c : 0; i < h->s; i++) {
		const double *q = h->q + (long)i * d, *dout = h->dout + (long)i * d;
		const double p = exp(h->scale * dot(q, k, d) - h->lse[i]);
		const double dp = dot(dout, v, d), D = dot(dout, h->o + (long)i * d, d);
		const double ds = p * (dp - D), bound = p * (fabs(dp) + fabs(D));

		for (int t = 0; t < d; t++) {
			dk[t] += h->scale * ds * q[t];
			dv[t] += p * dout[t];
			if (dk_mag)
				dk_mag[t] += pow(h->scale * bound * q[t], 2);
			if (dv_mag)
				dv_mag[t] += pow(p * dout[t], 2);
		}
	}
	for (int t = 0; t < d; t++) {
		if (dk_mag)
			dk_mag[t] = sqrt(dk_mag[t]);
		if (dv_mag)
			dv_mag[t] = sqrt(dv_mag[t]);
	}
}

void attn_ref_softmax_bwd_row(const double *p, const double *dp, int n, double *ds,
			      double *mag)
{
	double D = 0.0, Dabs = 0.0;

	for (int j = 0; j < n; j++) {
		D += p[j] * dp[j];
		Dabs += fabs(p[j] * dp[j]);
	}
	for (int j = 0; j < n; j++) {
		ds[j] = p[j] * (dp[j] - D);
		if (mag)
			mag[j] = fabs(ds[j]) + fabs(p[j]) * (fabs(dp[j]) + Dabs);
	}
}
