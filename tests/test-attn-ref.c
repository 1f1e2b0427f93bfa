/* test-attn-ref: calib's CPU attention reference (calib/attn_ref.c) and its FLOP count, without a GPU.
 *
 * bench_sdpa.c trusts this reference to accept or reject cuDNN's fused
 * attention, so it is checked here on its own: hand-computed values on a
 * two-token head, causal masking, and the backward formulas against
 * central differences of the loss L = sum(dO * O) through the forward. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "attn_ref.h"

Test(attn_ref, flops_match_the_simulators_flash_count)
{
	const double shapes[][3] = { { 32, 4096, 128 }, { 8, 512, 64 }, { 1, 3, 5 } };

	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		for (int bwd = 0; bwd < 2; bwd++)
			for (int causal = 0; causal < 2; causal++) {
				const double bh = shapes[i][0], s = shapes[i][1], d = shapes[i][2];

				cr_assert_eq(attn_ref_flops(bwd, causal, bh, s, d),
					     attention_flops(ATTN_FLASH, causal, bwd, bh, s, d),
					     "bh %g s %g d %g bwd %d causal %d", bh, s, d, bwd, causal);
			}
	/* 2 s^2 d per head forward, 5 s^2 d backward, when causal */
	cr_assert_eq(attn_ref_flops(false, true, 1, 4096, 128), 2.0 * 4096 * 4096 * 128);
	cr_assert_eq(attn_ref_flops(true, true, 1, 4096, 128), 5.0 * 4096 * 4096 * 128);
}

/* q = (1, 2), k = (0, 1), v = (1, 3), d = 1, scale 1: row 0 sees one key
 * (o = 1, lse = 0); row 1 has scores (0, 2), so o = (1 + 3 e^2) / (1 + e^2)
 * and lse = log(1 + e^2). */
Test(attn_ref, forward_matches_hand_values)
{
	const double q[] = { 1, 2 }, k[] = { 0, 1 }, v[] = { 1, 3 };
	const struct attn_ref_head h = { .q = q, .k = k, .v = v, .s = 2, .d = 1, .scale = 1.0,
					 .causal = true };
	const double e2 = exp(2.0);
	double o, lse, mag;

	attn_ref_fwd_row(&h, 0, &o, &lse, &mag);
	cr_assert_float_eq(o, 1.0, 1e-15);
	cr_assert_float_eq(lse, 0.0, 1e-15);
	cr_assert_float_eq(mag, 1.0, 1e-15);
	attn_ref_fwd_row(&h, 1, &o, &lse, NULL);
	cr_assert_float_eq(o, (1 + 3 * e2) / (1 + e2), 1e-14);
	cr_assert_float_eq(lse, log(1 + e2), 1e-14);

	/* without the mask row 0 sees both keys: scores (0, 1) */
	const struct attn_ref_head full = { .q = q, .k = k, .v = v, .s = 2, .d = 1, .scale = 1.0,
					    .causal = false };
	attn_ref_fwd_row(&full, 0, &o, &lse, NULL);
	cr_assert_float_eq(o, (1 + 3 * exp(1.0)) / (1 + exp(1.0)), 1e-14);
	cr_assert_float_eq(lse, log(1 + exp(1.0)), 1e-14);
}

Test(attn_ref, causal_row_ignores_later_keys)
{
	double q[4 * 2], k[4 * 2], v[4 * 2], o1[2], o2[2], l1, l2;
	struct attn_ref_head h = { .q = q, .k = k, .v = v, .s = 4, .d = 2, .scale = 0.7,
				   .causal = true };

	for (int i = 0; i < 8; i++) {
		q[i] = sin(1.0 + i);
		k[i] = cos(2.0 * i);
		v[i] = 0.5 - 0.1 * i;
	}
	attn_ref_fwd_row(&h, 1, o1, &l1, NULL);
	k[5] = 9.0;	/* key 2 */
	v[7] = -4.0;	/* value 3 */
	attn_ref_fwd_row(&h, 1, o2, &l2, NULL);
	cr_assert_eq(o1[0], o2[0]);
	cr_assert_eq(o1[1], o2[1]);
	cr_assert_eq(l1, l2);
	h.causal = false;
	attn_ref_fwd_row(&h, 1, o2, &l2, NULL);
	cr_assert(fabs(o1[0] - o2[0]) > 1e-3, "the unmasked row must see the later keys");
}

#define S 5
#define D 3

/* L = sum over rows of dout . o, through the forward reference. */
static double loss(const struct attn_ref_head *h)
{
	double acc = 0.0, o[D];

	for (int r = 0; r < S; r++) {
		attn_ref_fwd_row(h, r, o, NULL, NULL);
		for (int t = 0; t < D; t++)
			acc += h->dout[r * D + t] * o[t];
	}
	return acc;
}

/* Central difference of the loss in x[i]. */
static double numeric(const struct attn_ref_head *h, double *x, int i)
{
	const double step = 1e-5, keep = x[i];
	double up, down;

	x[i] = keep + step;
	up = loss(h);
	x[i] = keep - step;
	down = loss(h);
	x[i] = keep;
	return (up - down) / (2 * step);
}

static void check_gradients(bool causal)
{
	double q[S * D], k[S * D], v[S * D], dout[S * D], o[S * D], lse[S];
	double g[D], g2[D], mag[D], mag2[D];
	struct attn_ref_head h = { .q = q, .k = k, .v = v, .o = o, .dout = dout, .lse = lse,
				   .s = S, .d = D, .scale = 1.0 / sqrt(D), .causal = causal };

	for (int i = 0; i < S * D; i++) {
		q[i] = sin(0.3 + 1.7 * i);
		k[i] = cos(0.1 + 2.3 * i);
		v[i] = sin(5.0 - 0.9 * i);
		dout[i] = cos(1.1 * i * i);
	}
	for (int r = 0; r < S; r++)
		attn_ref_fwd_row(&h, r, o + r * D, lse + r, NULL);
	for (int r = 0; r < S; r++) {
		attn_ref_dq_row(&h, r, g, mag);
		for (int t = 0; t < D; t++) {
			cr_assert_float_eq(g[t], numeric(&h, q, r * D + t), 1e-8,
					   "dq[%d][%d] causal %d", r, t, causal);
			cr_assert(isfinite(mag[t]) && mag[t] >= 0.0);
		}
		attn_ref_dkv_row(&h, r, g, mag, g2, mag2);
		for (int t = 0; t < D; t++) {
			cr_assert_float_eq(g[t], numeric(&h, k, r * D + t), 1e-8,
					   "dk[%d][%d] causal %d", r, t, causal);
			cr_assert_float_eq(g2[t], numeric(&h, v, r * D + t), 1e-8,
					   "dv[%d][%d] causal %d", r, t, causal);
			/* dv's terms never cancel below their root sum of squares' share */
			cr_assert(mag2[t] + 1e-15 >= fabs(g2[t]) / sqrt(S), "dv mag %g vs %g",
				  mag2[t], g2[t]);
		}
	}
}

Test(attn_ref, causal_gradients_match_finite_differences)
{
	check_gradients(true);
}

Test(attn_ref, full_gradients_match_finite_differences)
{
	check_gradients(false);
}

/* The last key is seen by the last query only under the mask: its dk and
 * dv come from that one row. */
Test(attn_ref, causal_last_key_gets_gradient_from_last_row_only)
{
	double q[S * D], k[S * D], v[S * D], dout[S * D], o[S * D], lse[S], dk[D], dv[D];
	struct attn_ref_head h = { .q = q, .k = k, .v = v, .o = o, .dout = dout, .lse = lse,
				   .s = S, .d = D, .scale = 0.5, .causal = true };

	for (int i = 0; i < S * D; i++) {
		q[i] = sin(i + 0.5);
		k[i] = cos(3.0 * i);
		v[i] = sin(2.0 * i);
		dout[i] = 0.25 * (i % 4) - 0.3;
	}
	for (int r = 0; r < S; r++)
		attn_ref_fwd_row(&h, r, o + r * D, lse + r, NULL);
	attn_ref_dkv_row(&h, S - 1, dk, NULL, dv, NULL);
	const double p = exp(0.5 * (q[(S - 1) * D] * k[(S - 1) * D] +
				    q[(S - 1) * D + 1] * k[(S - 1) * D + 1] +
				    q[(S - 1) * D + 2] * k[(S - 1) * D + 2]) - lse[S - 1]);
	for (int t = 0; t < D; t++)
		cr_assert_float_eq(dv[t], p * dout[(S - 1) * D + t], 1e-14);
}

#undef S
#undef D

/* --- the unfused backward's dS check (bench_attn.c) ---------------------- */

/* x rounded to bf16 (round to nearest even), through fp32 as the device. */
static double bf16(double x)
{
	float f = (float)x;
	uint32_t u;
	memcpy(&u, &f, sizeof(u));
	u += 0x7fffu + ((u >> 16) & 1u);
	u &= 0xffff0000u;
	memcpy(&f, &u, sizeof(f));
	return f;
}

static uint64_t rng_state;

/* calib's fill: uniform(-1, 1), magnitudes >= 2^-6, in bf16. */
static double draw(void)
{
	rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
	double x = (double)(rng_state >> 11) / 9007199254740992.0 * 2 - 1;
	if (fabs(x) < 1.0 / 64)
		x = x < 0 ? -1.0 / 64 : 1.0 / 64;
	return bf16(x);
}

enum ds_kernel { DS_RIGHT, DS_NO_D, DS_OTHER_ROWS_D, DS_TRANSPOSED_DP };

/* One causal head of s x d through the unfused backward's dS step as the
 * GPU runs it (bench_attn.c): S = scale QK^T and P = softmax(S) in bf16,
 * dP = dO V^T stored in bf16, dS = P (dP - sum(P dP)) from fp32 math, in
 * bf16; `kernel` breaks it on purpose. Every row's dS is checked against
 * attn_ref_softmax_bwd_row() as bench_attn.c checks it; returns the worst
 * |got - ref| / limit, and in *old_worst the same with the former per-element
 * bound ATTN_REF_BF16_TOL (|ds| + p (|dp| + |D|)). */
static double ds_worst(int s, int d, uint64_t seed, enum ds_kernel kernel, double *old_worst)
{
	double *q = malloc(sizeof(double) * s * d), *k = malloc(sizeof(double) * s * d);
	double *v = malloc(sizeof(double) * s * d), *dout = malloc(sizeof(double) * s * d);
	double *P = malloc(sizeof(double) * s * s), *dP = malloc(sizeof(double) * s * s);
	double *dp = malloc(sizeof(double) * s), *ref = malloc(sizeof(double) * s);
	double *mag = malloc(sizeof(double) * s), scale = 1 / sqrt(d), worst = 0, prevD = 0;

	rng_state = seed;
	for (int i = 0; i < s * d; i++)
		q[i] = draw(), k[i] = draw(), v[i] = draw(), dout[i] = draw();
	for (int r = 0; r < s; r++) {
		double mx = -INFINITY, sum = 0;
		for (int j = 0; j <= r; j++) {
			double z = 0;
			for (int t = 0; t < d; t++)
				z += q[r * d + t] * k[j * d + t];
			P[r * s + j] = bf16((float)(scale * z));
			mx = fmax(mx, P[r * s + j]);
		}
		for (int j = 0; j <= r; j++)
			sum += exp(P[r * s + j] - mx);
		for (int j = 0; j < s; j++)
			P[r * s + j] = j <= r ? bf16(exp(P[r * s + j] - mx) / sum) : 0;
		for (int j = 0; j < s; j++) {
			double z = 0;
			for (int t = 0; t < d; t++)
				z += dout[r * d + t] * v[j * d + t];
			dP[r * s + j] = bf16(z);
		}
	}
	*old_worst = 0;
	for (int r = 0; r < s; r++) {
		double Ddev = 0, Dexact = 0;
		for (int j = 0; j < s; j++) {
			dp[j] = 0;
			for (int t = 0; t < d; t++)
				dp[j] += dout[r * d + t] * v[j * d + t];
			Ddev += (float)(P[r * s + j] * dP[r * s + j]);
			Dexact += P[r * s + j] * dp[j];
		}
		double useD = kernel == DS_NO_D ? 0 : kernel == DS_OTHER_ROWS_D ? prevD : Ddev;
		prevD = Ddev;
		attn_ref_softmax_bwd_row(P + (long)r * s, dp, s, ref, mag);
		for (int j = 0; j < s; j++) {
			double dpj = kernel == DS_TRANSPOSED_DP ? dP[j * s + r] : dP[r * s + j];
			double got = bf16((float)(P[r * s + j] * (dpj - useD)));
			double err = fabs(got - ref[j]);
			double lim = ATTN_REF_BF16_TOL * mag[j] + ATTN_REF_BF16_FLOOR;
			double old = ATTN_REF_BF16_TOL * (fabs(ref[j]) + P[r * s + j] *
				     (fabs(dp[j]) + fabs(Dexact))) + ATTN_REF_BF16_FLOOR;
			worst = fmax(worst, err / lim);
			*old_worst = fmax(*old_worst, err / old);
		}
	}
	free(q), free(k), free(v), free(dout), free(P), free(dP), free(dp), free(ref), free(mag);
	return worst;
}

/* The self-test's two failing shapes (calib/profiles/h200-2026-11-26/
 * selftest.log: s 256 d 64 at 1.02 and s 128 d 128 at 1.17 of the former
 * tolerance), two seeds each: a correct kernel stays well inside the row
 * bound (0.15 of it); the former per-element bound fails it (1.30), as it
 * did on the GPU. */
Test(attn_ref, softmax_bwd_bound_passes_bf16_rounding)
{
	const int shapes[][2] = { { 256, 64 }, { 128, 128 } };
	double worst = 0, old_worst = 0, old;

	for (int i = 0; i < 2; i++)
		for (uint64_t seed = 1; seed <= 2; seed++) {
			worst = fmax(worst, ds_worst(shapes[i][0], shapes[i][1], seed, DS_RIGHT, &old));
			old_worst = fmax(old_worst, old);
		}
	printf("dS of a correct bf16 kernel: worst %.3f of the row bound, %.3f of the former "
	       "per-element bound\n", worst, old_worst);
	cr_expect_lt(worst, 0.5);
	cr_expect_gt(old_worst, 1, "the emulation no longer reproduces the GPU's failure");
}

/* A kernel that drops D, takes another row's D or reads dP transposed
 * fails the bound by far. */
Test(attn_ref, softmax_bwd_bound_fails_wrong_kernels)
{
	const enum ds_kernel wrong[] = { DS_NO_D, DS_OTHER_ROWS_D, DS_TRANSPOSED_DP };
	double old;

	for (int i = 0; i < 3; i++) {
		double w = ds_worst(128, 128, 1, wrong[i], &old);
		printf("dS of wrong kernel %d: worst %.3g of the row bound\n", i, w);
		cr_expect_gt(w, 3, "kernel %d: %g", i, w);
	}
}
