/* bench_sdpa.c - causal attention fused by cuDNN (scaled-dot-product flash attention graphs), impl "cudnn_sdpa": the harness.
 *
 * NEVER RUN ON A GPU: written and compiled (cuDNN 9.19 headers, -Werror)
 * on a machine without one.  The graphs follow the pattern cuDNN documents
 * for fused flash attention and the operations NVIDIA's cudnn-frontend
 * builds for its SDPA nodes; whether cuDNN accepts them, and the checks
 * below pass, is what the first run on an H100 must show (calib/README.md).
 *
 * For each attention shape of bench_attn.c (called from there, after the
 * unfused point) this runs the two graphs of sdpa_graph.c (their
 * operations and layouts are described there), timing cudnnBackendExecute
 * with a variant pack per rotating operand copy.
 *
 * What runs and what is recorded:
 *   - a graph or plan that cuDNN does not accept (no heuristic result, no
 *     configuration finalizes, an unsupported shape or GPU, or a first
 *     execution that fails) is a warning naming the call and the status,
 *     and nothing is recorded for that pass: the profile keeps the unfused
 *     entries only, never an invented number.  A forward without a
 *     backward is recorded alone;
 *   - before timing, on rotating copy 0, rows of O and Stats (forward) and
 *     of dQ, dK, dV (backward) are compared with attn_ref.c's reference
 *     computed from the device's own inputs (the backward's from the
 *     device's O and Stats); a failed check aborts the run as in every
 *     other section (calib.h).  Tolerance 2e-2 * (root sum of squared
 *     terms + |ref|) as in bench_attn.c: the bf16 rounding of P and dS
 *     stays inside it, a wrong mask, scale or transpose does not; Stats
 *     1e-3 * (1 + |ref|) (fp32 arithmetic; a log2 or an unscaled S fails);
 *   - before the backward is timed the forward runs once on every copy, so
 *     each copy's O and Stats are consistent with its Q, K, V;
 *   - flops count the work a causal flash kernel does (attn_ref_flops():
 *     2 b h s^2 d forward, 5 b h s^2 d backward), the count the simulator
 *     prices fused attention with (models/attention.h), so a profile rate
 *     gives back the measured time.
 *
 * fp8: not built.  cuDNN's fp8 SDPA graphs add per-tensor descale/scale
 * inputs and amax outputs to every matmul and an fp8 quantisation of P and
 * dP whose CPU check needs the device's scale choices; written blind it
 * would double the untested surface, and the simulator's attention core is
 * 16-bit even under fp8 (models/workload.c), so an fp8 entry would not be
 * read.  GQA: K and V have all query heads, as in bench_attn.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn_ref.h"
#include "calib.h"

#ifdef HAVE_CUDNN

#include "sdpa_graph.h"

/* Buffers of the arena; bf16 unless noted. */
enum { BQ, BK, BV, BO, BDO, BDQ, BDK, BDV, BSTATS, BSUM, BACC, BNBUFS };

#define SDPA_TOL 2e-2
#define SDPA_LSE_TOL 1e-3

struct sdpa {
	struct calib *c;
	struct attn_shape sh;
	long long bh;
	float scale, neg_inf, one;	/* by-value scalars: the variant packs point here */
	struct arena ar;
	void *ws;
	size_t ws_bytes;
	bool clear_acc;			/* cuDNN < 9.6: zero the dQ accumulator per run */
	struct sdpa_graph g[2];		/* fwd, bwd */
	desc_t *vp[2];			/* a variant pack per rotating copy, per graph */
};

/* ---- running ---- */

/* Variant packs of graph `gi` for every rotating copy; -1 (after a
 * message) on failure. */
static int make_packs(struct sdpa *a, int gi)
{
	struct sdpa_graph *g = &a->g[gi];
	const int nsets = a->ar.nsets;

	a->vp[gi] = calloc((size_t)nsets, sizeof(desc_t));
	if (!a->vp[gi])
		return calib_error("out of memory 'sdpa variant packs'");
	for (int i = 0; i < nsets; i++) {
		int64_t uids[16];
		void *ptrs[16];
		int n = 0;
		desc_t vp;

#define BIND(uid, ptr)                  \
	do {                            \
		uids[n] = (uid);        \
		ptrs[n] = (ptr);        \
		n++;                    \
	} while (0)
		BIND(UID_Q, arena_ptr(&a->ar, BQ, i));
		BIND(UID_K, arena_ptr(&a->ar, BK, i));
		BIND(UID_V, arena_ptr(&a->ar, BV, i));
		BIND(UID_O, arena_ptr(&a->ar, BO, i));
		BIND(UID_STATS, arena_ptr(&a->ar, BSTATS, i));
		BIND(UID_SCALE, &a->scale);
		BIND(UID_NEG_INF, &a->neg_inf);
		if (gi == 1) {
			BIND(UID_DO, arena_ptr(&a->ar, BDO, i));
			BIND(UID_DQ, arena_ptr(&a->ar, BDQ, i));
			BIND(UID_DK, arena_ptr(&a->ar, BDK, i));
			BIND(UID_DV, arena_ptr(&a->ar, BDV, i));
			BIND(UID_SUM, arena_ptr(&a->ar, BSUM, i));
			BIND(UID_ACC, arena_ptr(&a->ar, BACC, i));
			BIND(UID_ONE, &a->one);
		}
#undef BIND
		vp = sdpa_graph_pack(g, n, uids, ptrs, &a->ws);
		if (!vp)
			return calib_error("cuDNN call failed: %s (%d) 'sdpa %s %s'",
					   cudnnGetErrorString(g->st), (int)g->st, g->name, g->what);
		a->vp[gi][i] = vp;
	}
	return 0;
}

static int run(struct sdpa *a, int gi, int i)
{
	struct calib *c = a->c;

	if (gi == 1 && a->clear_acc &&
	    cuda_failed(cudaMemsetAsync(arena_ptr(&a->ar, BACC, i), 0, a->ar.size[BACC], c->stream),
			"cudaMemsetAsync dQ accumulator"))
		return -1;
	return dnn_failed(cudnnBackendExecute(c->dnn, a->g[gi].plan, a->vp[gi][i % a->ar.nsets]),
			  gi ? "cudnnBackendExecute sdpa bwd" : "cudnnBackendExecute sdpa fwd") ? -1 : 0;
}

static int enqueue_fwd(void *arg, int i)
{
	return run(arg, 0, i);
}

static int enqueue_bwd(void *arg, int i)
{
	return run(arg, 1, i);
}

/* ---- checks ---- */

/* Host copy of `count` elements of storage `st` from buffer j of copy 0,
 * starting at element `first`, decoded.  Caller frees; NULL on error. */
static double *fetch(const struct sdpa *a, int j, enum kernels_dtype st, size_t first,
		     size_t count)
{
	const size_t elem = st == KERNELS_F32 ? 4 : 2;
	void *raw = malloc(count * elem + 4);
	double *out = malloc(count * sizeof(double) + 8);

	if (!raw || !out) {
		calib_error("out of memory 'sdpa check'");
		goto fail;
	}
	if (copy_strided(raw, (const char *)arena_ptr(&a->ar, j, 0) + first * elem, elem, 1,
			 count) < 0)
		goto fail;
	for (size_t i = 0; i < count; i++)
		out[i] = dtype_load(st, raw, i);
	free(raw);
	return out;
fail:
	free(raw);
	free(out);
	return NULL;
}

/* Checks the forward (bwd = false) or backward results of head `hd`, rows
 * idx[0..n). */
static int check_head(const struct sdpa *a, bool bwd, long long hd, const int *idx, int n,
		      struct calib_verdict *v)
{
	const size_t s = (size_t)a->sh.seq, d = (size_t)a->sh.head_dim, base = (size_t)hd * s * d;
	double *q = fetch(a, BQ, KERNELS_BF16, base, s * d);
	double *k = fetch(a, BK, KERNELS_BF16, base, s * d);
	double *vv = fetch(a, BV, KERNELS_BF16, base, s * d);
	double *o = fetch(a, BO, KERNELS_BF16, base, s * d);
	double *lse = fetch(a, BSTATS, KERNELS_F32, (size_t)hd * s, s);
	double *dout = bwd ? fetch(a, BDO, KERNELS_BF16, base, s * d) : NULL;
	double *dq = bwd ? fetch(a, BDQ, KERNELS_BF16, base, s * d) : NULL;
	double *dk = bwd ? fetch(a, BDK, KERNELS_BF16, base, s * d) : NULL;
	double *dv = bwd ? fetch(a, BDV, KERNELS_BF16, base, s * d) : NULL;
	double *ref = malloc(4 * d * sizeof(double));
	int rc = -1;

	if (!q || !k || !vv || !o || !lse || !ref || (bwd && (!dout || !dq || !dk || !dv)))
		goto out;
	{
		const struct attn_ref_head h = {
			.q = q, .k = k, .v = vv, .o = o, .dout = dout, .lse = lse,
			.s = (int)s, .d = (int)d, .scale = a->scale, .causal = true,
		};
		double *r1 = ref, *m1 = ref + d, *r2 = ref + 2 * d, *m2 = ref + 3 * d;

		for (int x = 0; x < n; x++) {
			const size_t r = (size_t)idx[x];
			double l;

			if (!bwd) {
				attn_ref_fwd_row(&h, (int)r, r1, &l, m1);
				for (size_t t = 0; t < d; t++)
					calib_judge(v, o[r * d + t], r1[t],
					      SDPA_TOL * (m1[t] + fabs(r1[t])) + 1e-6, "O");
				calib_judge(v, lse[r], l, SDPA_LSE_TOL * (1.0 + fabs(l)), "Stats");
				continue;
			}
			attn_ref_dq_row(&h, (int)r, r1, m1);
			for (size_t t = 0; t < d; t++)
				calib_judge(v, dq[r * d + t], r1[t], SDPA_TOL * (m1[t] + fabs(r1[t])) + 1e-6,
				      "dQ");
			attn_ref_dkv_row(&h, (int)r, r1, m1, r2, m2);
			for (size_t t = 0; t < d; t++) {
				calib_judge(v, dk[r * d + t], r1[t], SDPA_TOL * (m1[t] + fabs(r1[t])) + 1e-6,
				      "dK");
				calib_judge(v, dv[r * d + t], r2[t], SDPA_TOL * (m2[t] + fabs(r2[t])) + 1e-6,
				      "dV");
			}
		}
	}
	rc = 0;
out:
	free(q); free(k); free(vv); free(o); free(lse);
	free(dout); free(dq); free(dk); free(dv);
	free(ref);
	return rc;
}

static int check(struct sdpa *a, bool bwd)
{
	struct calib_verdict v = { true, 0.0, 0.0, 0.0, "-" };
	const int s = a->sh.seq;
	int idx[512], n = 0;
	const long long heads[2] = { 0, a->bh - 1 };
	const int nheads = a->bh > 1 ? 2 : 1;

	if (a->c->self_test && s <= 512) {
		for (int r = 0; r < s; r++)
			idx[n++] = r;
	} else {
		idx[n++] = 0;
		idx[n++] = s / 2 + 1;
		idx[n++] = s - 1;
	}
	for (int h = 0; h < nheads; h++)
		if (check_head(a, bwd, heads[h], idx, n, &v) < 0)
			return -1;
	return calib_check(a->c, v.ok, "attention cudnn_sdpa %s bf16 b%d h%d s%d d%d causal: "
			   "%d rows x %d heads, worst %s got %.6g want %.6g (%.2f of tolerance)",
			   bwd ? "bwd" : "fwd", a->sh.b, a->sh.heads, a->sh.seq, a->sh.head_dim, n,
			   nheads, v.where, v.got, v.want, v.worst);
}

static int record(struct sdpa *a, bool bwd, double t)
{
	struct calib_point pt;
	const struct sdpa_graph *g = &a->g[bwd];
	const double flops = attn_ref_flops(bwd, true, (double)a->bh, a->sh.seq, a->sh.head_dim);

	memset(&pt, 0, sizeof(pt));
	pt.section = CALIB_ATTN;
	snprintf(pt.impl, sizeof(pt.impl), "cudnn_sdpa");
	snprintf(pt.pass, sizeof(pt.pass), "%s", bwd ? "bwd" : "fwd");
	snprintf(pt.dtype, sizeof(pt.dtype), "bf16");
	pt.b = a->sh.b;
	pt.heads = a->sh.heads;
	pt.seq = a->sh.seq;
	pt.head_dim = a->sh.head_dim;
	pt.causal = true;
	pt.time_s = t;
	pt.tflops = flops / t * 1e-12;
	calib_progress("sdpa %-3s bf16 b%d h%-3d s%-5d d%d causal %10.4f ms %7.1f TFLOP/s "
		       "(cuDNN engine %lld, configuration %d of %d)",
		       pt.pass, a->sh.b, a->sh.heads, a->sh.seq, a->sh.head_dim, t * 1e3, pt.tflops,
		       g->engine, g->cfg + 1, g->ncfg);
	return calib_add(a->c, &pt);
}

/* Warns that pass `gi` has no cudnn_sdpa entry, and why. */
static void unavailable(const struct sdpa *a, int gi, const char *why)
{
	calib_warn("cuDNN fused attention unavailable, %s; no cudnn_sdpa entry (the unfused ones "
		   "stand) 'attention %s bf16 b%d h%d s%d d%d causal'", why, gi ? "bwd" : "fwd",
		   a->sh.b, a->sh.heads, a->sh.seq, a->sh.head_dim);
}

static void graph_unavailable(const struct sdpa *a, int gi)
{
	char why[192];

	snprintf(why, sizeof(why), "%s: %s (%d)", a->g[gi].what, cudnnGetErrorString(a->g[gi].st),
		 (int)a->g[gi].st);
	unavailable(a, gi, why);
}

/* First execution of pass gi on copy 0: 0 ran, 1 cuDNN refused it (warned),
 * -1 CUDA error. */
static int first_run(struct sdpa *a, int gi)
{
	struct calib *c = a->c;
	cudnnStatus_t st;
	char why[160];

	if (gi == 1 && a->clear_acc &&
	    cuda_failed(cudaMemsetAsync(arena_ptr(&a->ar, BACC, 0), 0, a->ar.size[BACC], c->stream),
			"cudaMemsetAsync dQ accumulator"))
		return -1;
	st = cudnnBackendExecute(c->dnn, a->g[gi].plan, a->vp[gi][0]);
	if (cuda_failed(cudaStreamSynchronize(c->stream), gi ? "sdpa bwd" : "sdpa fwd"))
		return -1;
	if (st == CUDNN_STATUS_SUCCESS)
		return 0;
	snprintf(why, sizeof(why), "cudnnBackendExecute: %s (%d)", cudnnGetErrorString(st), (int)st);
	unavailable(a, gi, why);
	return 1;
}

/* a for shape sh on c: the scale, the masked score cuDNN takes, both passes' graphs unbuilt. */
static void sdpa_init(struct sdpa *a, struct calib *c, const struct attn_shape *sh)
{
	memset(a, 0, sizeof(*a));
	a->c = c;
	a->sh = *sh;
	a->bh = (long long)sh->b * sh->heads;
	a->scale = 1.0f / sqrtf((float)sh->head_dim);
	/* cuDNN 9.10 and later take -inf for masked scores; older releases
	 * the lowest finite float (as cudnn-frontend does) */
	a->neg_inf = cudnnGetVersion() >= 91000 ? -INFINITY : -3.402823466e38f;
	a->one = 1.0f;
	a->clear_acc = cudnnGetVersion() < 90600;
	for (int gi = 0; gi < 2; gi++)
		sdpa_graph_init(&a->g[gi], gi == 1);
}

/* The buffers' sizes and types: bf16 tensors, fp32 statistics and dQ accumulator. */
static void buffer_sizes(const struct attn_shape *sh, size_t *bytes, enum kernels_dtype *st)
{
	const size_t sd = (size_t)sh->b * sh->heads * sh->seq * sh->head_dim;
	const size_t rows = (size_t)sh->b * sh->heads * sh->seq;

	for (int j = 0; j < BNBUFS; j++) {
		const bool f32 = j == BSTATS || j == BSUM || j == BACC;

		bytes[j] = (j == BSTATS || j == BSUM ? rows : sd) * (f32 ? 4 : 2);
		st[j] = f32 ? KERNELS_F32 : KERNELS_BF16;
	}
}

/* cuDNN's workspace for the larger of the graphs that built: 0, 1 it does not fit
 * (warned), -1 CUDA error. */
static int alloc_workspace(struct sdpa *a)
{
	a->ws_bytes = (size_t)a->g[0].ws_bytes;
	if (sdpa_graph_ok(&a->g[1]) && (size_t)a->g[1].ws_bytes > a->ws_bytes)
		a->ws_bytes = (size_t)a->g[1].ws_bytes;
	if (!a->ws_bytes)
		return 0;
	cudaError_t e = cudaMalloc(&a->ws, a->ws_bytes);

	if (e == cudaErrorMemoryAllocation) {
		(void)cudaGetLastError();
		calib_warn("cuDNN workspace of %zu MiB does not fit, skipped 'sdpa h%d s%d'",
			   a->ws_bytes >> 20, a->sh.heads, a->sh.seq);
		return 1;
	}
	return cuda_failed(e, "cudaMalloc sdpa workspace") ? -1 : 0;
}

/* Runs and checks the forward, then the backward from copy 0's O and Stats where its
 * graph built (*bwd_ok: it ran and passed); 0, 1 cuDNN refused the forward (warned),
 * -1 error or failed check. */
static int check_passes(struct sdpa *a, int *bwd_ok)
{
	int rc;

	if (make_packs(a, 0) < 0)
		return -1;
	if ((rc = first_run(a, 0)) != 0)
		return rc;
	if (check(a, false) < 0)
		return -1;
	if (!sdpa_graph_ok(&a->g[1]))
		return 0;
	if (make_packs(a, 1) < 0)
		return -1;
	switch (first_run(a, 1)) {
	case -1:
		return -1;
	case 0:
		if (check(a, true) < 0)
			return -1;
		*bwd_ok = 1;
		break;
	default:
		break;
	}
	return 0;
}

/* Times and records the forward, and the backward (after a forward over every copy) when
 * bwd_ok; -1 on error. */
static int time_passes(struct sdpa *a, int bwd_ok)
{
	double t = 0.0;

	if (timer_median(a->c, enqueue_fwd, a, &t) < 0 || record(a, false, t) < 0)
		return -1;
	if (!bwd_ok)
		return 0;
	for (int i = 0; i < a->ar.nsets; i++)
		if (enqueue_fwd(a, i) < 0)
			return -1;
	if (timer_median(a->c, enqueue_bwd, a, &t) < 0 || record(a, true, t) < 0)
		return -1;
	return 0;
}

static int run_point(struct calib *c, const struct attn_shape *sh)
{
	struct sdpa a;
	size_t bytes[BNBUFS];
	enum kernels_dtype st[BNBUFS];
	int rc, ok = 0;

	sdpa_init(&a, c, sh);
	buffer_sizes(sh, bytes, st);
	sdpa_graph_build(&a.g[0], c, sh);
	if (!sdpa_graph_ok(&a.g[0])) {
		graph_unavailable(&a, 0);
		rc = 1;
		goto out_graphs;
	}
	sdpa_graph_build(&a.g[1], c, sh);
	if (!sdpa_graph_ok(&a.g[1]))
		graph_unavailable(&a, 1);

	rc = arena_init(c, &a.ar, BNBUFS, bytes, st);
	if (rc == 1) {
		calib_warn("does not fit in device memory, skipped 'sdpa h%d s%d'", sh->heads, sh->seq);
		goto out_graphs;
	}
	if (rc < 0)
		goto out_graphs;
	if ((rc = alloc_workspace(&a)) != 0)
		goto out_arena;
	if ((rc = check_passes(&a, &ok)) != 0)
		goto out_ws;
	rc = c->self_test ? 0 : time_passes(&a, ok);
out_ws:
	cudaFree(a.ws);
out_arena:
	arena_finish(&a.ar);
out_graphs:
	free(a.vp[0]);
	free(a.vp[1]);
	sdpa_graph_finish(&a.g[1]);
	sdpa_graph_finish(&a.g[0]);
	return rc;
}

int bench_sdpa(struct calib *c, const struct attn_shape *sh)
{
	return run_point(c, sh);
}

#else /* !HAVE_CUDNN */

int bench_sdpa(struct calib *c, const struct attn_shape *sh)
{
	static bool warned;

	(void)sh;
	if (!warned && !c->self_test)
		calib_warn("built without cuDNN: no fused attention (cudnn_sdpa) entries, the "
			   "attention section holds the unfused path only");
	warned = true;
	return 1;
}

#endif