/* bench_sdpa.c - causal attention fused by cuDNN (scaled-dot-product flash attention graphs), impl "cudnn_sdpa".
 *
 * NEVER RUN ON A GPU: written and compiled (cuDNN 9.19 headers, -Werror)
 * on a machine without one.  The graphs follow the pattern cuDNN documents
 * for fused flash attention and the operations NVIDIA's cudnn-frontend
 * builds for its SDPA nodes; whether cuDNN accepts them, and the checks
 * below pass, is what the first run on an H100 must show (calib/README.md).
 *
 * For each attention shape of bench_attn.c (called from there, after the
 * unfused point) this builds two operation graphs with the cuDNN backend
 * API (cudnnBackendCreateDescriptor / SetAttribute / Finalize), asks
 * heuristics mode A for engine configurations, keeps the first that
 * finalizes an execution plan, and times cudnnBackendExecute with a variant
 * pack per rotating operand copy.  b, h, s, d as in bench_attn.c; Q, K, V,
 * O and the gradients are [b, h, s, d] contiguous (BHSD), bf16 storage,
 * fp32 compute and intermediates; K (and V in the backward) are described
 * to cuDNN transposed ([b, h, d, s], strides swapped), as the matmuls take
 * them; the causal mask is top-left (query i sees keys j <= i).
 *
 *   fprop:  S = (Q K^T) * scale; mask: row = index(axis 2), col = index(axis
 *           3), S = row >= col ? S : -inf; softmax with statistics:
 *           M = max_j S, E = exp(S - M), L = sum_j E, Stats = M + log L
 *           (fp32 [b, h, s, 1], the log-sum-exp the backward needs),
 *           P = E / L (bf16), O = P V.
 *   bprop:  D = sum_t dO * O (fp32 [b, h, s, 1], a workspace tensor),
 *           P = exp(mask((Q K^T) * scale - Stats)), dV = P^T dO,
 *           dS = P * (dO V^T - D) * scale, dK = dS^T Q,
 *           dQ = dS K accumulated in fp32 (a workspace tensor) and copied.
 *
 * P^T, dS^T and K are reshape operations of other tensors (strides swapped),
 * as cuDNN's pattern has them.  Before cuDNN 9.6 the fp32 dQ accumulator
 * must start at zero: the backward then clears it in each run (timed, as
 * the frontend does it in the same place).
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
#include "bug.h"
#include "calib.h"

#ifdef HAVE_CUDNN

/* Buffers of the arena; bf16 unless noted. */
enum { BQ, BK, BV, BO, BDO, BDQ, BDK, BDV, BSTATS, BSUM, BACC, BNBUFS };

/* Unique ids of the non-virtual tensors (the variant packs' keys); the
 * virtual tensors take ids from UID_VIRTUAL up. */
enum {
	UID_Q = 1, UID_K, UID_V, UID_O, UID_DO, UID_DQ, UID_DK, UID_DV,
	UID_STATS, UID_SUM, UID_ACC, UID_SCALE, UID_NEG_INF, UID_ONE,
	UID_VIRTUAL = 100,
};

#define SDPA_TOL 2e-2
#define SDPA_LSE_TOL 1e-3
#define GB_MAX_OPS 48

typedef cudnnBackendDescriptor_t desc_t;

/* One graph under construction: every descriptor it made (destroyed by
 * gb_finish), its operations in order, and the first failure.  Once a call
 * fails the later ones do nothing, so a builder reads as a straight list
 * and the failure is looked at once, at the end. */
struct gb {
	const char *name;		/* "fwd" or "bwd" */
	desc_t *all;
	int nall, cap;
	desc_t ops[GB_MAX_OPS];
	int nops;
	int64_t next_uid;
	cudnnStatus_t st;		/* first failure, CUDNN_STATUS_SUCCESS if none */
	char what[96];			/* the call that failed */
	desc_t plan;			/* the execution plan, once built */
	int64_t ws_bytes;		/* its workspace */
	long long engine;		/* global index of its engine, -1 unknown */
	int cfg, ncfg;			/* configuration used, of those heuristics gave */
};

struct sdpa {
	struct calib *c;
	struct attn_shape sh;
	long long bh;
	float scale, neg_inf, one;	/* by-value scalars: the variant packs point here */
	struct arena ar;
	void *ws;
	size_t ws_bytes;
	bool clear_acc;			/* cuDNN < 9.6: zero the dQ accumulator per run */
	struct gb g[2];			/* fwd, bwd */
	desc_t *vp[2];			/* a variant pack per rotating copy, per graph */
};

static bool gb_ok(const struct gb *g)
{
	return g->st == CUDNN_STATUS_SUCCESS;
}

static void gb_fail(struct gb *g, cudnnStatus_t st, const char *what)
{
	if (!gb_ok(g) || st == CUDNN_STATUS_SUCCESS)
		return;
	g->st = st;
	snprintf(g->what, sizeof(g->what), "%s", what);
}

/* A new descriptor of `type`, owned by g; NULL after a failure. */
static desc_t gb_make(struct gb *g, cudnnBackendDescriptorType_t type, const char *what)
{
	desc_t d = NULL;

	if (!gb_ok(g))
		return NULL;
	if (g->nall == g->cap) {
		int cap = g->cap ? 2 * g->cap : 64;
		desc_t *all = realloc(g->all, (size_t)cap * sizeof(*all));

		if (!all) {
			gb_fail(g, CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED, "out of memory");
			return NULL;
		}
		g->all = all;
		g->cap = cap;
	}
	gb_fail(g, cudnnBackendCreateDescriptor(type, &d), what);
	if (!gb_ok(g))
		return NULL;
	g->all[g->nall++] = d;
	return d;
}

static void gb_set(struct gb *g, desc_t d, cudnnBackendAttributeName_t attr,
		   cudnnBackendAttributeType_t type, int64_t n, const void *val, const char *what)
{
	if (gb_ok(g) && d)
		gb_fail(g, cudnnBackendSetAttribute(d, attr, type, n, val), what);
}

static void gb_final(struct gb *g, desc_t d, const char *what)
{
	if (gb_ok(g) && d)
		gb_fail(g, cudnnBackendFinalize(d), what);
}

static void gb_finish(struct gb *g)
{
	/* in reverse: plans before the graphs they were made from */
	while (g->nall > 0)
		cudnnBackendDestroyDescriptor(g->all[--g->nall]);
	free(g->all);
	g->all = NULL;
	g->cap = 0;
}

/* ---- tensors and operations ---- */

struct shape {
	int64_t dim[4], stride[4];
};

/* A tensor: non-virtual with id `uid`, or virtual (uid 0) with the next
 * free id. */
static desc_t tensor(struct gb *g, int64_t uid, cudnnDataType_t dt, const struct shape *sh,
		     const char *what)
{
	desc_t t = gb_make(g, CUDNN_BACKEND_TENSOR_DESCRIPTOR, what);
	const bool virt = uid == 0;
	const int64_t align = 16;

	if (virt)
		uid = g->next_uid++;
	gb_set(g, t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt, what);
	gb_set(g, t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, sh->dim, what);
	gb_set(g, t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, sh->stride, what);
	gb_set(g, t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid, what);
	gb_set(g, t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align, what);
	gb_set(g, t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &virt, what);
	gb_final(g, t, what);
	return t;
}

/* A float scalar passed by value (the variant pack points at host memory). */
static desc_t scalar(struct gb *g, int64_t uid, const char *what)
{
	static const struct shape one = { { 1, 1, 1, 1 }, { 1, 1, 1, 1 } };
	desc_t t = gb_make(g, CUDNN_BACKEND_TENSOR_DESCRIPTOR, what);
	const cudnnDataType_t dt = CUDNN_DATA_FLOAT;
	const bool by_value = true, virt = false;
	const int64_t align = 16;

	gb_set(g, t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt, what);
	gb_set(g, t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, one.dim, what);
	gb_set(g, t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, one.stride, what);
	gb_set(g, t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid, what);
	gb_set(g, t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align, what);
	gb_set(g, t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &virt, what);
	gb_set(g, t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &by_value, what);
	gb_final(g, t, what);
	return t;
}

static void add_op(struct gb *g, desc_t op, const char *what)
{
	gb_final(g, op, what);
	if (!gb_ok(g))
		return;
	BUG_ON(g->nops >= GB_MAX_OPS, "%s graph has more than %d operations", g->name, GB_MAX_OPS);
	g->ops[g->nops++] = op;
}

/* y = mode(x, b, t): b and t may be NULL (unary; t is BINARY_SELECT's
 * condition); axis >= 0 for GEN_INDEX. */
static void pointwise(struct gb *g, cudnnPointwiseMode_t mode, cudnnDataType_t prec, desc_t x,
		      desc_t b, desc_t t, desc_t y, int64_t axis, const char *what)
{
	desc_t pw = gb_make(g, CUDNN_BACKEND_POINTWISE_DESCRIPTOR, what);
	desc_t op;
	const float alpha = 1.0f;

	gb_set(g, pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode, what);
	gb_set(g, pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec, what);
	if (axis >= 0)
		gb_set(g, pw, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis, what);
	gb_final(g, pw, what);
	op = gb_make(g, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, what);
	gb_set(g, op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
	       &pw, what);
	gb_set(g, op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x, what);
	if (b)
		gb_set(g, op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
		       &b, what);
	if (t)
		gb_set(g, op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
		       &t, what);
	gb_set(g, op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y, what);
	gb_set(g, op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, CUDNN_TYPE_FLOAT, 1, &alpha, what);
	gb_set(g, op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, CUDNN_TYPE_FLOAT, 1, &alpha, what);
	add_op(g, op, what);
}

/* c = a b over the last two dimensions, batched over the first two; fp32
 * compute. */
static void matmul(struct gb *g, desc_t a, desc_t b, desc_t c, const char *what)
{
	desc_t mm = gb_make(g, CUDNN_BACKEND_MATMUL_DESCRIPTOR, what);
	desc_t op;
	const cudnnDataType_t comp = CUDNN_DATA_FLOAT;

	gb_set(g, mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp, what);
	gb_final(g, mm, what);
	op = gb_make(g, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, what);
	gb_set(g, op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &a, what);
	gb_set(g, op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b, what);
	gb_set(g, op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c, what);
	gb_set(g, op, CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &mm, what);
	add_op(g, op, what);
}

/* y = reduce(x) over the dimensions where y has extent 1; fp32 compute. */
static void reduction(struct gb *g, cudnnReduceTensorOp_t mode, desc_t x, desc_t y,
		      const char *what)
{
	desc_t rd = gb_make(g, CUDNN_BACKEND_REDUCTION_DESCRIPTOR, what);
	desc_t op;
	const cudnnDataType_t comp = CUDNN_DATA_FLOAT;

	gb_set(g, rd, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp, what);
	gb_set(g, rd, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &mode,
	       what);
	gb_final(g, rd, what);
	op = gb_make(g, CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, what);
	gb_set(g, op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x, what);
	gb_set(g, op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y, what);
	gb_set(g, op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &rd, what);
	add_op(g, op, what);
}

/* y = x seen with y's dimensions and strides (a transpose here). */
static void reshape(struct gb *g, desc_t x, desc_t y, const char *what)
{
	desc_t op = gb_make(g, CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR, what);

	gb_set(g, op, CUDNN_ATTR_OPERATION_RESHAPE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x, what);
	gb_set(g, op, CUDNN_ATTR_OPERATION_RESHAPE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y, what);
	add_op(g, op, what);
}

/* ---- the two graphs ---- */

/* The shapes of one problem: BHSD, its transpose, the scores and their
 * transpose, per-row statistics. */
struct shapes {
	struct shape bhsd, bhds, ss, ss_t, row;
};

static void shapes_of(const struct attn_shape *a, struct shapes *s)
{
	const int64_t B = a->b, H = a->heads, S = a->seq, D = a->head_dim;
	const struct shapes v = {
		.bhsd = { { B, H, S, D }, { H * S * D, S * D, D, 1 } },
		.bhds = { { B, H, D, S }, { H * S * D, S * D, 1, D } },
		.ss = { { B, H, S, S }, { H * S * S, S * S, S, 1 } },
		.ss_t = { { B, H, S, S }, { H * S * S, S * S, 1, S } },
		.row = { { B, H, S, 1 }, { H * S, S, 1, 1 } },
	};

	*s = v;
}

/* Scores x with the keys after each query set to -inf (top-left causal):
 * the result. */
static desc_t causal_mask(struct gb *g, const struct shapes *s, desc_t x, desc_t neg_inf)
{
	desc_t row = tensor(g, 0, CUDNN_DATA_INT32, &s->ss, "row index");
	desc_t col = tensor(g, 0, CUDNN_DATA_INT32, &s->ss, "column index");
	desc_t keep = tensor(g, 0, CUDNN_DATA_BOOLEAN, &s->ss, "causal keep");
	desc_t y = tensor(g, 0, CUDNN_DATA_FLOAT, &s->ss, "masked scores");

	pointwise(g, CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_FLOAT, x, NULL, NULL, row, 2,
		  "GEN_INDEX rows");
	pointwise(g, CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_FLOAT, x, NULL, NULL, col, 3,
		  "GEN_INDEX columns");
	pointwise(g, CUDNN_POINTWISE_CMP_GE, CUDNN_DATA_BOOLEAN, row, col, NULL, keep, -1,
		  "CMP_GE row >= column");
	pointwise(g, CUDNN_POINTWISE_BINARY_SELECT, CUDNN_DATA_FLOAT, x, neg_inf, keep, y, -1,
		  "BINARY_SELECT causal mask");
	return y;
}

static void build_fwd(struct gb *g, const struct attn_shape *a)
{
	struct shapes s;
	desc_t q, kt, v, o, stats, scale, ninf, sc, sc2, masked, mx, z, e, sum, lg, p;
	const cudnnDataType_t F = CUDNN_DATA_FLOAT, BF = CUDNN_DATA_BFLOAT16;

	shapes_of(a, &s);
	q = tensor(g, UID_Q, BF, &s.bhsd, "tensor Q");
	kt = tensor(g, UID_K, BF, &s.bhds, "tensor K^T");
	v = tensor(g, UID_V, BF, &s.bhsd, "tensor V");
	o = tensor(g, UID_O, BF, &s.bhsd, "tensor O");
	stats = tensor(g, UID_STATS, F, &s.row, "tensor Stats");
	scale = scalar(g, UID_SCALE, "scalar attention scale");
	ninf = scalar(g, UID_NEG_INF, "scalar -inf");

	sc = tensor(g, 0, F, &s.ss, "scores");
	matmul(g, q, kt, sc, "matmul Q K^T");
	sc2 = tensor(g, 0, F, &s.ss, "scaled scores");
	pointwise(g, CUDNN_POINTWISE_MUL, F, sc, scale, NULL, sc2, -1, "MUL scale");
	masked = causal_mask(g, &s, sc2, ninf);

	mx = tensor(g, 0, F, &s.row, "row max");
	reduction(g, CUDNN_REDUCE_TENSOR_MAX, masked, mx, "reduction max");
	z = tensor(g, 0, F, &s.ss, "scores - max");
	pointwise(g, CUDNN_POINTWISE_SUB, F, masked, mx, NULL, z, -1, "SUB max");
	e = tensor(g, 0, F, &s.ss, "exp");
	pointwise(g, CUDNN_POINTWISE_EXP, F, z, NULL, NULL, e, -1, "EXP");
	sum = tensor(g, 0, F, &s.row, "row sum");
	reduction(g, CUDNN_REDUCE_TENSOR_ADD, e, sum, "reduction sum");
	lg = tensor(g, 0, F, &s.row, "log sum");
	pointwise(g, CUDNN_POINTWISE_LOG, F, sum, NULL, NULL, lg, -1, "LOG");
	pointwise(g, CUDNN_POINTWISE_ADD, F, mx, lg, NULL, stats, -1, "ADD Stats");
	p = tensor(g, 0, BF, &s.ss, "P");
	pointwise(g, CUDNN_POINTWISE_DIV, F, e, sum, NULL, p, -1, "DIV P");
	matmul(g, p, v, o, "matmul P V");
}

static void build_bwd(struct gb *g, const struct attn_shape *a)
{
	struct shapes s;
	desc_t q, kt, vt, o, dout, stats, dq, dk, dv, dsum, acc, scale, ninf, one;
	desc_t t, t2, sc, sc2, sc3, masked, e, pt, dp, u, u2, ds, dst, k;
	const cudnnDataType_t F = CUDNN_DATA_FLOAT, BF = CUDNN_DATA_BFLOAT16;

	shapes_of(a, &s);
	q = tensor(g, UID_Q, BF, &s.bhsd, "tensor Q");
	kt = tensor(g, UID_K, BF, &s.bhds, "tensor K^T");
	vt = tensor(g, UID_V, BF, &s.bhds, "tensor V^T");
	o = tensor(g, UID_O, BF, &s.bhsd, "tensor O");
	dout = tensor(g, UID_DO, BF, &s.bhsd, "tensor dO");
	stats = tensor(g, UID_STATS, F, &s.row, "tensor Stats");
	dq = tensor(g, UID_DQ, BF, &s.bhsd, "tensor dQ");
	dk = tensor(g, UID_DK, BF, &s.bhsd, "tensor dK");
	dv = tensor(g, UID_DV, BF, &s.bhsd, "tensor dV");
	dsum = tensor(g, UID_SUM, F, &s.row, "tensor sum(dO O)");
	acc = tensor(g, UID_ACC, F, &s.bhsd, "tensor dQ accumulator");
	scale = scalar(g, UID_SCALE, "scalar attention scale");
	ninf = scalar(g, UID_NEG_INF, "scalar -inf");
	one = scalar(g, UID_ONE, "scalar 1");

	/* D = sum_t dO O (times 1: the dropout-scale slot of the pattern) */
	t = tensor(g, 0, F, &s.bhsd, "dO O");
	pointwise(g, CUDNN_POINTWISE_MUL, F, dout, o, NULL, t, -1, "MUL dO O");
	t2 = tensor(g, 0, F, &s.row, "sum dO O");
	reduction(g, CUDNN_REDUCE_TENSOR_ADD, t, t2, "reduction sum dO O");
	pointwise(g, CUDNN_POINTWISE_MUL, F, t2, one, NULL, dsum, -1, "MUL 1");

	/* P recomputed from Stats */
	sc = tensor(g, 0, F, &s.ss, "scores");
	matmul(g, q, kt, sc, "matmul Q K^T");
	sc2 = tensor(g, 0, F, &s.ss, "scaled scores");
	pointwise(g, CUDNN_POINTWISE_MUL, F, sc, scale, NULL, sc2, -1, "MUL scale");
	sc3 = tensor(g, 0, F, &s.ss, "scores - Stats");
	pointwise(g, CUDNN_POINTWISE_SUB, F, sc2, stats, NULL, sc3, -1, "SUB Stats");
	masked = causal_mask(g, &s, sc3, ninf);
	e = tensor(g, 0, F, &s.ss, "P");
	pointwise(g, CUDNN_POINTWISE_EXP, F, masked, NULL, NULL, e, -1, "EXP");

	/* dV = P^T dO */
	pt = tensor(g, 0, BF, &s.ss_t, "P^T");
	reshape(g, e, pt, "reshape P^T");
	matmul(g, pt, dout, dv, "matmul P^T dO");

	/* dS = P (dO V^T - D) scale */
	dp = tensor(g, 0, F, &s.ss, "dP");
	matmul(g, dout, vt, dp, "matmul dO V^T");
	u = tensor(g, 0, F, &s.ss, "dP - D");
	pointwise(g, CUDNN_POINTWISE_SUB, F, dp, dsum, NULL, u, -1, "SUB D");
	u2 = tensor(g, 0, F, &s.ss, "P (dP - D)");
	pointwise(g, CUDNN_POINTWISE_MUL, F, u, e, NULL, u2, -1, "MUL P");
	ds = tensor(g, 0, F, &s.ss, "dS");
	pointwise(g, CUDNN_POINTWISE_MUL, F, u2, scale, NULL, ds, -1, "MUL dS scale");

	/* dK = dS^T Q */
	dst = tensor(g, 0, BF, &s.ss_t, "dS^T");
	reshape(g, ds, dst, "reshape dS^T");
	matmul(g, dst, q, dk, "matmul dS^T Q");

	/* dQ = dS K, accumulated in fp32 */
	k = tensor(g, 0, BF, &s.bhsd, "K");
	reshape(g, kt, k, "reshape K");
	matmul(g, ds, k, acc, "matmul dS K");
	pointwise(g, CUDNN_POINTWISE_IDENTITY, F, acc, NULL, NULL, dq, -1, "IDENTITY dQ");
}

/* Operation graph, heuristics mode A, and the first engine configuration
 * that finalizes an execution plan: g->plan, g->ws_bytes.  On failure g->st
 * and g->what say why. */
static void gb_plan(struct gb *g, struct calib *c)
{
	desc_t graph, heur, *cfgs = NULL;
	const cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
	int64_t n = 0, got = 0;

	graph = gb_make(g, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, "operation graph");
	gb_set(g, graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, g->nops,
	       g->ops, "operation graph");
	gb_set(g, graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &c->dnn,
	       "operation graph");
	gb_final(g, graph, "operation graph");
	heur = gb_make(g, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, "heuristics mode A");
	gb_set(g, heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
	       &graph, "heuristics mode A");
	gb_set(g, heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode,
	       "heuristics mode A");
	gb_final(g, heur, "heuristics mode A");
	if (!gb_ok(g))
		return;
	gb_fail(g, cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
					    CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &n, NULL),
		"heuristics results (count)");
	if (gb_ok(g) && n <= 0)
		gb_fail(g, CUDNN_STATUS_NOT_SUPPORTED, "heuristics mode A: no engine configuration");
	if (!gb_ok(g))
		return;
	cfgs = calloc((size_t)n, sizeof(*cfgs));
	if (!cfgs) {
		gb_fail(g, CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED, "out of memory");
		return;
	}
	for (int64_t i = 0; i < n && gb_ok(g); i++)
		cfgs[i] = gb_make(g, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, "engine configuration");
	if (gb_ok(g))
		gb_fail(g, cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
						    CUDNN_TYPE_BACKEND_DESCRIPTOR, n, &got, cfgs),
			"heuristics results");
	g->ncfg = (int)got;
	for (int64_t i = 0; i < got && gb_ok(g) && !g->plan; i++) {
		desc_t plan = gb_make(g, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, "execution plan");
		cudnnStatus_t st;

		gb_set(g, plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &c->dnn,
		       "execution plan");
		gb_set(g, plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
		       CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfgs[i], "execution plan");
		if (!gb_ok(g))
			break;
		/* A configuration that does not finalize is no error yet: the
		 * next one may; the last status is kept for the message. */
		st = cudnnBackendFinalize(plan);
		if (st != CUDNN_STATUS_SUCCESS) {
			if (i == got - 1)
				gb_fail(g, st, "execution plan (no configuration finalizes)");
			continue;
		}
		g->plan = plan;
		g->cfg = (int)i;
	}
	if (gb_ok(g) && !g->plan)
		gb_fail(g, CUDNN_STATUS_NOT_SUPPORTED, "execution plan (no configuration finalizes)");
	if (gb_ok(g))
		gb_fail(g, cudnnBackendGetAttribute(g->plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
						    CUDNN_TYPE_INT64, 1, &got, &g->ws_bytes),
			"execution plan workspace size");
	/* The engine's global index, for the progress line only. */
	g->engine = -1;
	if (gb_ok(g)) {
		desc_t eng = gb_make(g, CUDNN_BACKEND_ENGINE_DESCRIPTOR, "engine");
		int64_t idx = -1;

		if (eng && cudnnBackendGetAttribute(cfgs[g->cfg], CUDNN_ATTR_ENGINECFG_ENGINE,
						    CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &got,
						    &eng) == CUDNN_STATUS_SUCCESS &&
		    cudnnBackendGetAttribute(eng, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64,
					     1, &got, &idx) == CUDNN_STATUS_SUCCESS)
			g->engine = idx;
	}
	free(cfgs);
}

/* ---- running ---- */

/* Variant packs of graph `gi` for every rotating copy; -1 (after a
 * message) on failure. */
static int make_packs(struct sdpa *a, int gi)
{
	struct gb *g = &a->g[gi];
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
		vp = gb_make(g, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, "variant pack");
		gb_set(g, vp, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n, uids,
		       "variant pack");
		gb_set(g, vp, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, n, ptrs,
		       "variant pack");
		gb_set(g, vp, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &a->ws,
		       "variant pack");
		gb_final(g, vp, "variant pack");
		if (!gb_ok(g))
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
	const struct gb *g = &a->g[bwd];
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

static int run_point(struct calib *c, const struct attn_shape *sh)
{
	struct sdpa a;
	size_t bytes[BNBUFS];
	enum kernels_dtype st[BNBUFS];
	const size_t sd = (size_t)sh->b * sh->heads * sh->seq * sh->head_dim;
	const size_t rows = (size_t)sh->b * sh->heads * sh->seq;
	double t = 0.0;
	int rc, gi, ok = 0;

	memset(&a, 0, sizeof(a));
	a.c = c;
	a.sh = *sh;
	a.bh = (long long)sh->b * sh->heads;
	a.scale = 1.0f / sqrtf((float)sh->head_dim);
	/* cuDNN 9.10 and later take -inf for masked scores; older releases
	 * the lowest finite float (as cudnn-frontend does) */
	a.neg_inf = cudnnGetVersion() >= 91000 ? -INFINITY : -3.402823466e38f;
	a.one = 1.0f;
	a.clear_acc = cudnnGetVersion() < 90600;
	a.g[0].name = "fwd";
	a.g[1].name = "bwd";
	for (gi = 0; gi < 2; gi++) {
		a.g[gi].next_uid = UID_VIRTUAL;
		a.g[gi].st = CUDNN_STATUS_SUCCESS;
	}
	for (int j = 0; j < BNBUFS; j++) {
		const bool f32 = j == BSTATS || j == BSUM || j == BACC;

		bytes[j] = (j == BSTATS || j == BSUM ? rows : sd) * (f32 ? 4 : 2);
		st[j] = f32 ? KERNELS_F32 : KERNELS_BF16;
	}

	build_fwd(&a.g[0], sh);
	gb_plan(&a.g[0], c);
	if (!gb_ok(&a.g[0])) {
		graph_unavailable(&a, 0);
		rc = 1;
		goto out_graphs;
	}
	build_bwd(&a.g[1], sh);
	gb_plan(&a.g[1], c);
	if (!gb_ok(&a.g[1]))
		graph_unavailable(&a, 1);

	rc = arena_init(c, &a.ar, BNBUFS, bytes, st);
	if (rc == 1) {
		calib_warn("does not fit in device memory, skipped 'sdpa h%d s%d'", sh->heads, sh->seq);
		goto out_graphs;
	}
	if (rc < 0)
		goto out_graphs;
	rc = -1;
	a.ws_bytes = (size_t)a.g[0].ws_bytes;
	if (gb_ok(&a.g[1]) && (size_t)a.g[1].ws_bytes > a.ws_bytes)
		a.ws_bytes = (size_t)a.g[1].ws_bytes;
	if (a.ws_bytes) {
		cudaError_t e = cudaMalloc(&a.ws, a.ws_bytes);

		if (e == cudaErrorMemoryAllocation) {
			(void)cudaGetLastError();
			calib_warn("cuDNN workspace of %zu MiB does not fit, skipped 'sdpa h%d s%d'",
				   a.ws_bytes >> 20, sh->heads, sh->seq);
			rc = 1;
			goto out_arena;
		}
		if (cuda_failed(e, "cudaMalloc sdpa workspace"))
			goto out_arena;
	}

	/* Forward: build, run, check. */
	if (make_packs(&a, 0) < 0)
		goto out_ws;
	rc = first_run(&a, 0);
	if (rc != 0)
		goto out_ws;
	rc = -1;
	if (check(&a, false) < 0)
		goto out_ws;
	/* Backward, from copy 0's O and Stats. */
	if (gb_ok(&a.g[1])) {
		if (make_packs(&a, 1) < 0)
			goto out_ws;
		switch (first_run(&a, 1)) {
		case -1:
			goto out_ws;
		case 0:
			if (check(&a, true) < 0)
				goto out_ws;
			ok = 1;
			break;
		default:
			break;
		}
	}
	if (c->self_test) {
		rc = 0;
		goto out_ws;
	}
	if (timer_median(c, enqueue_fwd, &a, &t) < 0 || record(&a, false, t) < 0)
		goto out_ws;
	if (ok) {
		for (int i = 0; i < a.ar.nsets; i++)
			if (enqueue_fwd(&a, i) < 0)
				goto out_ws;
		if (timer_median(c, enqueue_bwd, &a, &t) < 0 || record(&a, true, t) < 0)
			goto out_ws;
	}
	rc = 0;
out_ws:
	cudaFree(a.ws);
out_arena:
	arena_finish(&a.ar);
out_graphs:
	free(a.vp[0]);
	free(a.vp[1]);
	gb_finish(&a.g[1]);
	gb_finish(&a.g[0]);
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
