/* bench_attn.c - causal self-attention timings, unfused: cuBLAS batched GEMMs + the softmax kernel.
 *
 * The fused (flash) path is cuDNN's, timed by bench_sdpa.c for each shape
 * right after the unfused point (impl "cudnn_sdpa"; skipped with --no-sdpa
 * or without cuDNN).  The project has no fused kernel of its own: one
 * written without a GPU to tune it on would be far from the state of the
 * art.  This file times what Megatron calls the unfused ("local")
 * attention path and labels it "unfused_cublas_softmax":
 *
 *   fwd:  S = (Q K^T) / sqrt(d)     cublasGemmStridedBatchedEx
 *         P = causal_softmax(S)     kernels_softmax_fwd, in place
 *         O = P V                   cublasGemmStridedBatchedEx
 *   bwd:  dV = P^T dO,  dP = dO V^T, dS = softmax_bwd(P, dP) (in place),
 *         dQ = dS K / sqrt(d),  dK = dS^T Q / sqrt(d)
 *
 * Q, K, V, O and their gradients are [b*heads, s, d] row-major (one
 * contiguous s x d matrix per head); S/P and dP/dS are [b*heads, s, s].
 * Each row-major matrix is passed to column-major cuBLAS as its transpose,
 * e.g. S^T = K Q^T is gemm(T, N, m = s, n = s, k = d, A = K, B = Q).
 * bf16 storage, fp32 accumulation.  GQA models are measured with K/V
 * already expanded to all query heads, as the unfused path does.  Flops
 * count the work actually done, masked half included: 4*b*h*s^2*d forward,
 * 8*b*h*s^2*d backward.
 *
 * Check (before timing, on rotating copy 0): for two heads and a few rows,
 * the P row and O row of the forward pass; the dS row, dQ row, dK row and
 * dV row of the backward pass, each from the device's own inputs to that
 * step (so every product is O(s*d) on the CPU).  Tolerance 2e-2 (about
 * 5 units of bf16's relative precision 2^-8) times the scale of the
 * rounding a correct kernel makes: for a GEMM output, the root sum of
 * squared terms + |ref|; for dS, the row's scale of
 * attn_ref_softmax_bwd_row() (dP is stored in bf16, so the error of
 * sum(P dP) follows sum P |dP|, not |sum P dP|, which is near zero on some
 * rows).  bf16 rounding of S, P and dP stays well within it; a wrong
 * transpose, mask or missing term does not.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn_ref.h"
#include "calib.h"

enum { AQ, AK, AV, AO, ADO, ADQ, ADK, ADV, AS, ADP, ANBUFS };

#define ATTN_TOL ATTN_REF_BF16_TOL

struct attn {
	struct calib *c;
	struct attn_shape sh;
	long long bh;		/* b * heads */
	float scale;
	struct arena ar;
};

static int gemm_batched(struct attn *a, char ta, char tb, int m, int n, int k, float alpha,
			const void *A, int lda, long long sa, const void *B, int ldb,
			long long sb, void *C, int ldc, long long sc)
{
	const float beta = 0.0f;

	return blas_failed(cublasGemmStridedBatchedEx(a->c->blas,
						      ta == 'T' ? CUBLAS_OP_T : CUBLAS_OP_N,
						      tb == 'T' ? CUBLAS_OP_T : CUBLAS_OP_N,
						      m, n, k, &alpha, A, CUDA_R_16BF, lda, sa,
						      B, CUDA_R_16BF, ldb, sb, &beta,
						      C, CUDA_R_16BF, ldc, sc, (int)a->bh,
						      CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
			   "cublasGemmStridedBatchedEx") ? -1 : 0;
}

static int enqueue_fwd(void *arg, int i)
{
	struct attn *a = arg;
	const int s = a->sh.seq, d = a->sh.head_dim;
	const long long sd = (long long)s * d, ss = (long long)s * s;
	void *q = arena_ptr(&a->ar, AQ, i), *k = arena_ptr(&a->ar, AK, i);
	void *v = arena_ptr(&a->ar, AV, i), *o = arena_ptr(&a->ar, AO, i);
	void *sp = arena_ptr(&a->ar, AS, i);

	/* S^T (col-major s x s) = K Q^T: S row-major. */
	if (gemm_batched(a, 'T', 'N', s, s, d, a->scale, k, d, sd, q, d, sd, sp, s, ss) < 0)
		return -1;
	if (cuda_failed(kernels_softmax_fwd(KERNELS_BF16, sp, sp, (size_t)(a->bh * s), (size_t)s,
					    (size_t)s, 1.0f, a->c->stream),
			"kernels_softmax_fwd"))
		return -1;
	/* O^T (d x s) = V^T P^T. */
	return gemm_batched(a, 'N', 'N', d, s, s, 1.0f, v, d, sd, sp, s, ss, o, d, sd);
}

static int enqueue_bwd(void *arg, int i)
{
	struct attn *a = arg;
	const int s = a->sh.seq, d = a->sh.head_dim;
	const long long sd = (long long)s * d, ss = (long long)s * s;
	void *q = arena_ptr(&a->ar, AQ, i), *k = arena_ptr(&a->ar, AK, i);
	void *v = arena_ptr(&a->ar, AV, i), *dout = arena_ptr(&a->ar, ADO, i);
	void *dq = arena_ptr(&a->ar, ADQ, i), *dk = arena_ptr(&a->ar, ADK, i);
	void *dv = arena_ptr(&a->ar, ADV, i), *p = arena_ptr(&a->ar, AS, i);
	void *dp = arena_ptr(&a->ar, ADP, i);

	/* dV^T (d x s) = dO^T P */
	if (gemm_batched(a, 'N', 'T', d, s, s, 1.0f, dout, d, sd, p, s, ss, dv, d, sd) < 0)
		return -1;
	/* dP^T (s x s) = V dO^T: dP row-major */
	if (gemm_batched(a, 'T', 'N', s, s, d, 1.0f, v, d, sd, dout, d, sd, dp, s, ss) < 0)
		return -1;
	if (cuda_failed(kernels_softmax_bwd(KERNELS_BF16, p, dp, dp, (size_t)(a->bh * s),
					    (size_t)s, a->c->stream),
			"kernels_softmax_bwd"))
		return -1;
	/* dQ^T (d x s) = K^T dS^T */
	if (gemm_batched(a, 'N', 'N', d, s, s, a->scale, k, d, sd, dp, s, ss, dq, d, sd) < 0)
		return -1;
	/* dK^T (d x s) = Q^T dS */
	return gemm_batched(a, 'N', 'T', d, s, s, a->scale, q, d, sd, dp, s, ss, dk, d, sd);
}

/* Host copy of `count` bf16 elements, `stride` apart, from buffer j of
 * copy 0 starting at element `first`; decoded.  Caller frees; NULL on error. */
static double *fetch(const struct attn *a, int j, size_t first, size_t stride, size_t count)
{
	uint16_t *raw = malloc(count * 2 + 2);
	double *out = malloc(count * sizeof(double) + 8);
	size_t i;

	if (!raw || !out) {
		calib_error("out of memory 'attention check'");
		goto fail;
	}
	if (copy_strided(raw, (const char *)arena_ptr(&a->ar, j, 0) + first * 2, 2, stride,
			 count) < 0)
		goto fail;
	for (i = 0; i < count; i++)
		out[i] = dtype_load(KERNELS_BF16, raw, i);
	free(raw);
	return out;
fail:
	free(raw);
	free(out);
	return NULL;
}

/* One head's inputs on the host, for check_head()'s rows. */
struct head {
	const double *q, *k, *vv, *dout;  /* [s x d] */
	double *tmp;                      /* [s] scratch */
	size_t s, d, base, sbase;         /* sizes; the head's offset in q..dO and in S, dP */
	double scale;
};

/* Forward of row r: P row r from S = scale q k^T, causal; O row r = P V. */
static int check_fwd_row(struct attn *a, const struct head *h, size_t r, struct calib_verdict *v)
{
	const size_t s = h->s, d = h->d;
	double *row = fetch(a, AS, h->sbase + r * s, 1, s), *res = NULL;
	double mx = -INFINITY, sum = 0.0;
	size_t j, t;
	int rc = -1;

	if (!row || !(res = fetch(a, AO, h->base + r * d, 1, d)))
		goto out;
	for (j = 0; j <= r; j++) {
		double dot = 0.0;

		for (t = 0; t < d; t++)
			dot += h->q[r * d + t] * h->k[j * d + t];
		h->tmp[j] = h->scale * dot;
		mx = fmax(mx, h->tmp[j]);
	}
	for (j = 0; j <= r; j++)
		sum += exp(h->tmp[j] - mx);
	for (j = 0; j < s; j++) {
		const double ref = j <= r ? exp(h->tmp[j] - mx) / sum : 0.0;

		calib_judge(v, row[j], ref, ATTN_TOL * fabs(ref) + 1e-6, NULL);
	}
	for (t = 0; t < d; t++) {
		double ref = 0.0, sq = 0.0;

		/* From the device's P row: isolates the GEMM. */
		for (j = 0; j < s; j++) {
			const double pr = row[j] * h->vv[j * d + t];

			ref += pr;
			sq += pr * pr;
		}
		calib_judge(v, res[t], ref, ATTN_TOL * (sqrt(sq) + fabs(ref)) + 1e-6, NULL);
	}
	rc = 0;
out:
	free(row);
	free(res);
	return rc;
}

/* dS row r = P (dP - sum(P dP)), dP = dO_r . v_j, bounded by the row's scale
 * (attn_ref_softmax_bwd_row()); row is P row r, row2 the device's dS row r. */
static int check_ds_row(const struct head *h, size_t r, const double *row, const double *row2,
			struct calib_verdict *v)
{
	const size_t s = h->s, d = h->d;
	double *ref = malloc(2 * s * sizeof(double) + 8);
	size_t j, t;

	if (!ref) {
		calib_error("out of memory 'attention check'");
		return -1;
	}
	for (j = 0; j < s; j++) {
		double dp = 0.0;

		for (t = 0; t < d; t++)
			dp += h->dout[r * d + t] * h->vv[j * d + t];
		h->tmp[j] = dp;
	}
	attn_ref_softmax_bwd_row(row, h->tmp, (int)s, ref, ref + s);
	for (j = 0; j < s; j++)
		calib_judge(v, row2[j], ref[j], ATTN_TOL * ref[s + j] + ATTN_REF_BF16_FLOOR, NULL);
	free(ref);
	return 0;
}

/* dQ, dK and dV row r from the device's dS row (row2), P column (col) and dS column (col2). */
static int check_grad_rows(struct attn *a, const struct head *h, size_t r, const double *row2,
			   const double *col, const double *col2, struct calib_verdict *v)
{
	const size_t s = h->s, d = h->d;
	double *dq = fetch(a, ADQ, h->base + r * d, 1, d);
	double *dk = fetch(a, ADK, h->base + r * d, 1, d);
	double *dv = fetch(a, ADV, h->base + r * d, 1, d);

	if (!dq || !dk || !dv) {
		free(dq); free(dk); free(dv);
		return -1;
	}
	for (size_t t = 0; t < d; t++) {
		double rq = 0.0, sq_q = 0.0, rk = 0.0, sq_k = 0.0, rv = 0.0, sq_v = 0.0;

		for (size_t i = 0; i < s; i++) {
			const double pq = h->scale * row2[i] * h->k[i * d + t];	/* dQ_r */
			const double pk = h->scale * col2[i] * h->q[i * d + t];	/* dK_r */
			const double pv = col[i] * h->dout[i * d + t];		/* dV_r */

			rq += pq; sq_q += pq * pq;
			rk += pk; sq_k += pk * pk;
			rv += pv; sq_v += pv * pv;
		}
		calib_judge(v, dq[t], rq, ATTN_TOL * (sqrt(sq_q) + fabs(rq)) + 1e-6, NULL);
		calib_judge(v, dk[t], rk, ATTN_TOL * (sqrt(sq_k) + fabs(rk)) + 1e-6, NULL);
		calib_judge(v, dv[t], rv, ATTN_TOL * (sqrt(sq_v) + fabs(rv)) + 1e-6, NULL);
	}
	free(dq);
	free(dk);
	free(dv);
	return 0;
}

/* Backward of row r.  row: P row r; row2: dS row r; col: P column r; col2: dS column r. */
static int check_bwd_row(struct attn *a, const struct head *h, size_t r, struct calib_verdict *v)
{
	const size_t s = h->s;
	double *row = NULL, *row2 = NULL, *col = NULL, *col2 = NULL;
	int rc = -1;

	if (!(row = fetch(a, AS, h->sbase + r * s, 1, s)) ||
	    !(row2 = fetch(a, ADP, h->sbase + r * s, 1, s)) ||
	    !(col = fetch(a, AS, h->sbase + r, s, s)) ||
	    !(col2 = fetch(a, ADP, h->sbase + r, s, s)))
		goto out;
	if (check_ds_row(h, r, row, row2, v) < 0 || check_grad_rows(a, h, r, row2, col, col2, v) < 0)
		goto out;
	rc = 0;
out:
	free(row); free(row2); free(col); free(col2);
	return rc;
}

/* Checks forward (bwd = false) or backward results of head `hd`, rows /
 * columns `idx[0..n)`. */
static int check_head(struct attn *a, bool bwd, long long hd, const int *idx, int n,
		      struct calib_verdict *v)
{
	const size_t s = (size_t)a->sh.seq, d = (size_t)a->sh.head_dim;
	const size_t base = (size_t)hd * s * d;
	double *q = fetch(a, AQ, base, 1, s * d), *k = fetch(a, AK, base, 1, s * d);
	double *vv = fetch(a, AV, base, 1, s * d), *dout = fetch(a, ADO, base, 1, s * d);
	double *tmp = malloc(s * sizeof(double) + 8);
	const struct head h = { q, k, vv, dout, tmp, s, d, base, (size_t)hd * s * s, a->scale };
	int rc = -1;

	if (!q || !k || !vv || !dout || !tmp)
		goto out;
	for (int x = 0; x < n; x++)
		if ((bwd ? check_bwd_row : check_fwd_row)(a, &h, (size_t)idx[x], v) < 0)
			goto out;
	rc = 0;
out:
	free(q); free(k); free(vv); free(dout);
	free(tmp);
	return rc;
}

static int check_attn(struct attn *a, bool bwd)
{
	struct calib_verdict v = { true, 0.0, 0.0, 0.0, NULL };
	const int s = a->sh.seq;
	int idx[512], n = 0, h, r;
	long long heads[2] = { 0, a->bh - 1 };

	if (a->c->self_test && s <= 512) {
		for (r = 0; r < s; r++)
			idx[n++] = r;
	} else {
		idx[n++] = 0;
		idx[n++] = s / 2 + 1;
		idx[n++] = s - 1;
	}
	for (h = 0; h < (a->bh > 1 ? 2 : 1); h++)
		if (check_head(a, bwd, heads[h], idx, n, &v) < 0)
			return -1;
	return calib_check(a->c, v.ok, "attention %s bf16 b%d h%d s%d d%d causal: %d rows x %d heads, "
			   "worst got %.6g want %.6g (%.2f of tolerance)",
			   bwd ? "bwd" : "fwd", a->sh.b, a->sh.heads, a->sh.seq, a->sh.head_dim, n,
			   a->bh > 1 ? 2 : 1, v.got, v.want, v.worst);
}

static int record(struct calib *c, const struct attn *a, bool bwd, double t)
{
	struct calib_point pt;
	const double flops = (bwd ? 8.0 : 4.0) * (double)a->bh * a->sh.seq * (double)a->sh.seq *
			     a->sh.head_dim;

	memset(&pt, 0, sizeof(pt));
	pt.section = CALIB_ATTN;
	snprintf(pt.impl, sizeof(pt.impl), "unfused_cublas_softmax");
	snprintf(pt.pass, sizeof(pt.pass), "%s", bwd ? "bwd" : "fwd");
	snprintf(pt.dtype, sizeof(pt.dtype), "bf16");
	pt.b = a->sh.b;
	pt.heads = a->sh.heads;
	pt.seq = a->sh.seq;
	pt.head_dim = a->sh.head_dim;
	pt.causal = true;
	pt.time_s = t;
	pt.tflops = flops / t * 1e-12;
	calib_progress("attn %-3s bf16 b%d h%-3d s%-5d d%d causal %10.4f ms %7.1f TFLOP/s",
		       pt.pass, a->sh.b, a->sh.heads, a->sh.seq, a->sh.head_dim, t * 1e3, pt.tflops);
	return calib_add(c, &pt);
}

static int run_point(struct calib *c, const struct attn_shape *sh)
{
	struct attn a;
	size_t bytes[ANBUFS];
	enum kernels_dtype st[ANBUFS];
	double t = 0.0;
	int j, rc;

	memset(&a, 0, sizeof(a));
	a.c = c;
	a.sh = *sh;
	a.bh = (long long)sh->b * sh->heads;
	a.scale = 1.0f / sqrtf((float)sh->head_dim);
	for (j = 0; j < ANBUFS; j++) {
		const size_t cols = j == AS || j == ADP ? (size_t)sh->seq : (size_t)sh->head_dim;

		bytes[j] = (size_t)a.bh * sh->seq * cols * 2;
		st[j] = KERNELS_BF16;
	}
	rc = arena_init(c, &a.ar, ANBUFS, bytes, st);
	if (rc == 1) {
		calib_warn("does not fit in device memory, skipped 'attention h%d s%d'",
			   sh->heads, sh->seq);
		return 0;
	}
	if (rc < 0)
		return -1;
	rc = -1;
	if (enqueue_fwd(&a, 0) < 0 || check_attn(&a, false) < 0 ||
	    enqueue_bwd(&a, 0) < 0 || check_attn(&a, true) < 0)
		goto out;
	if (c->self_test) {
		rc = 0;
		goto out;
	}
	if (timer_median(c, enqueue_fwd, &a, &t) < 0 || record(c, &a, false, t) < 0)
		goto out;
	if (timer_median(c, enqueue_bwd, &a, &t) < 0 || record(c, &a, true, t) < 0)
		goto out;
	rc = 0;
out:
	arena_finish(&a.ar);
	return rc;
}

int bench_attn(struct calib *c)
{
	static const struct attn_shape tests[] = {
		{ 1, 2, 256, 64 },
		{ 2, 3, 128, 128 },
		{ 1, 2, 1024, 128 },
	};
	const struct attn_shape *shapes;
	int n, i;

	if (c->self_test) {
		shapes = tests;
		n = (int)(sizeof(tests) / sizeof(tests[0]));
	} else {
		n = shapes_attn(c->quick, &shapes);
	}
	for (i = 0; i < n; i++) {
		if (run_point(c, &shapes[i]) < 0)
			return -1;
		if (!c->no_sdpa && bench_sdpa(c, &shapes[i]) < 0)
			return -1;
	}
	return 0;
}
