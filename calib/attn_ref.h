/* attn_ref.h - CPU reference of scaled-dot-product attention for one head, and its FLOP count.
 *
 * Pure C (no CUDA), so that the simulator's tests can check it without a
 * GPU (tests/test-attn-ref.c).  bench_sdpa.c compares rows of the device's
 * results with these references, computed in double from the device's own
 * inputs.  One head: q, k, v, o, dout are s x d row-major; lse has s
 * entries.  Forward, row r:
 *
 *   z_j = scale * q_r . k_j   for the keys j row r sees (j <= r if causal)
 *   lse_r = log(sum_j exp(z_j))                  (natural log)
 *   o_r = sum_j exp(z_j - lse_r) v_j
 *
 * Backward, from the forward's o and lse (what a flash kernel keeps):
 *
 *   p_ij = exp(z_ij - lse_i),  dp_ij = dout_i . v_j,  D_i = dout_i . o_i
 *   ds_ij = p_ij (dp_ij - D_i)
 *   dq_i = scale sum_j ds_ij k_j,  dk_j = scale sum_i ds_ij q_i,
 *   dv_j = sum_i p_ij dout_i
 *
 * Each function also returns, per output element, the root sum of squares
 * of the magnitudes of its terms (`mag`): the scale of the rounding error a
 * correct kernel may make, so a tolerance proportional to it passes
 * rounding and fails a wrong mask, scale or transpose.  In the backward the
 * term magnitude uses p (|dp| + |D|) in place of |ds|, so cancellation in
 * dp - D does not shrink the tolerance below the error of its operands. */
#ifndef DDLSIM_CALIB_ATTN_REF_H
#define DDLSIM_CALIB_ATTN_REF_H

#include <stdbool.h>

/* Hardware FLOPs of fused (flash) attention over bh heads of s tokens and
 * head dim d, the convention of models/attention.h: forward 4 s^2 d c,
 * backward 10 s^2 d c (the forward's QK^T recomputed besides the four
 * gradient products), c = 1/2 when causal (the masked tiles are skipped),
 * else 1; times bh. */
double attn_ref_flops(bool bwd, bool causal, double bh, double s, double d);

/* One head's operands (borrowed; the backward fields may be NULL for the
 * forward functions). */
struct attn_ref_head {
	const double *q, *k, *v;	/* s x d */
	const double *o, *dout;		/* s x d, backward only */
	const double *lse;		/* s, backward only */
	int s, d;
	double scale;
	bool causal;
};

/* Forward row r: o[d], *lse and mag[d] (any of the three may be NULL). */
void attn_ref_fwd_row(const struct attn_ref_head *h, int r, double *o, double *lse,
		      double *mag);

/* Backward, query row r: dq[d] and mag[d] (mag may be NULL). */
void attn_ref_dq_row(const struct attn_ref_head *h, int r, double *dq, double *mag);

/* Backward, key row c: dk[d], dv[d] and their magnitudes (mags may be
 * NULL). */
void attn_ref_dkv_row(const struct attn_ref_head *h, int c, double *dk, double *dk_mag,
		      double *dv, double *dv_mag);

/* The unfused path's check (bench_attn.c): |got - ref| <= TOL x mag +
 * FLOOR.  TOL is about 5 units of bf16's relative precision (2^-8); FLOOR
 * absorbs the rounding of values the magnitude cannot see (P entries and
 * their products under 2^-20). */
#define ATTN_REF_BF16_TOL 2e-2
#define ATTN_REF_BF16_FLOOR 1e-6

/* Softmax backward of one row of n probabilities, as the unfused path
 * computes it (bench_attn.c: dP = dO V^T stored in bf16, then
 * kernels_softmax_bwd): ds_j = p_j (dp_j - D), D = sum_i p_i dp_i, from
 * the device's own p and the exact dp.  mag_j bounds the rounding error a
 * correct kernel may make on ds_j, in units of the storage's relative
 * precision u (errors stay under a few u x mag_j):
 *
 *   mag_j = |ds_j| + p_j (|dp_j| + sum_i p_i |dp_i|)
 *
 * |ds_j|: the output's rounding; p_j |dp_j|: the rounding of the stored
 * dp_j; p_j sum_i p_i |dp_i|: the error of the device's D, a sum of the
 * stored dp_i, each off by up to u |dp_i| (|D| would not do: D is a sum of
 * terms of both signs, near zero on some rows, while its error is not,
 * and a per-element test scaled by |D| failed a correct kernel on the
 * H200, calib/profiles/h200-2026-11-26/selftest.log).  The bound is the
 * row's scale, not the element's: an element near zero gets the row's
 * absolute floor; a wrong kernel (no D, the D of another row, a mask or
 * transpose error) errs by O(p_j |dp_j| or p_j |D|), far above a few
 * percent of it. */
void attn_ref_softmax_bwd_row(const double *p, const double *dp, int n, double *ds,
			      double *mag);

#endif
