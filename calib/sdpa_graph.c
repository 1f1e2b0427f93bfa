/* sdpa_graph.c - causal attention as cuDNN operation graphs (scaled-dot-product flash attention), forward and backward, and their execution plans.
 *
 * Two operation graphs per attention shape (bench_attn.c's shapes), built
 * with the cuDNN backend API (cudnnBackendCreateDescriptor / SetAttribute /
 * Finalize) in the operations NVIDIA's cudnn-frontend builds for its SDPA
 * nodes; heuristics mode A gives engine configurations and the first that
 * finalizes an execution plan is kept.  b, h, s, d as in bench_attn.c; Q,
 * K, V, O and the gradients are [b, h, s, d] contiguous (BHSD), bf16 storage,
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
 * the frontend does it in the same place). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bug.h"
#include "sdpa_graph.h"

bool sdpa_graph_ok(const struct sdpa_graph *g)
{
	return g->st == CUDNN_STATUS_SUCCESS;
}

static void gb_fail(struct sdpa_graph *g, cudnnStatus_t st, const char *what)
{
	if (!sdpa_graph_ok(g) || st == CUDNN_STATUS_SUCCESS)
		return;
	g->st = st;
	snprintf(g->what, sizeof(g->what), "%s", what);
}

/* A new descriptor of `type`, owned by g; NULL after a failure. */
static desc_t gb_make(struct sdpa_graph *g, cudnnBackendDescriptorType_t type, const char *what)
{
	desc_t d = NULL;

	if (!sdpa_graph_ok(g))
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
	if (!sdpa_graph_ok(g))
		return NULL;
	g->all[g->nall++] = d;
	return d;
}

static void gb_set(struct sdpa_graph *g, desc_t d, cudnnBackendAttributeName_t attr,
		   cudnnBackendAttributeType_t type, int64_t n, const void *val, const char *what)
{
	if (sdpa_graph_ok(g) && d)
		gb_fail(g, cudnnBackendSetAttribute(d, attr, type, n, val), what);
}

static void gb_final(struct sdpa_graph *g, desc_t d, const char *what)
{
	if (sdpa_graph_ok(g) && d)
		gb_fail(g, cudnnBackendFinalize(d), what);
}

void sdpa_graph_finish(struct sdpa_graph *g)
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
static desc_t tensor(struct sdpa_graph *g, int64_t uid, cudnnDataType_t dt, const struct shape *sh,
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
static desc_t scalar(struct sdpa_graph *g, int64_t uid, const char *what)
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

static void add_op(struct sdpa_graph *g, desc_t op, const char *what)
{
	gb_final(g, op, what);
	if (!sdpa_graph_ok(g))
		return;
	BUG_ON(g->nops >= SDPA_GRAPH_MAX_OPS, "%s graph has more than %d operations", g->name,
	       SDPA_GRAPH_MAX_OPS);
	g->ops[g->nops++] = op;
}

/* y = mode(x, b, t): b and t may be NULL (unary; t is BINARY_SELECT's
 * condition); axis >= 0 for GEN_INDEX. */
static void pointwise(struct sdpa_graph *g, cudnnPointwiseMode_t mode, cudnnDataType_t prec, desc_t x,
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
static void matmul(struct sdpa_graph *g, desc_t a, desc_t b, desc_t c, const char *what)
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
static void reduction(struct sdpa_graph *g, cudnnReduceTensorOp_t mode, desc_t x, desc_t y,
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
static void reshape(struct sdpa_graph *g, desc_t x, desc_t y, const char *what)
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
static desc_t causal_mask(struct sdpa_graph *g, const struct shapes *s, desc_t x, desc_t neg_inf)
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

static void build_fwd(struct sdpa_graph *g, const struct attn_shape *a)
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

static void build_bwd(struct sdpa_graph *g, const struct attn_shape *a)
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
static void find_plan(struct sdpa_graph *g, struct calib *c)
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
	if (!sdpa_graph_ok(g))
		return;
	gb_fail(g, cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
					    CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &n, NULL),
		"heuristics results (count)");
	if (sdpa_graph_ok(g) && n <= 0)
		gb_fail(g, CUDNN_STATUS_NOT_SUPPORTED, "heuristics mode A: no engine configuration");
	if (!sdpa_graph_ok(g))
		return;
	cfgs = calloc((size_t)n, sizeof(*cfgs));
	if (!cfgs) {
		gb_fail(g, CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED, "out of memory");
		return;
	}
	for (int64_t i = 0; i < n && sdpa_graph_ok(g); i++)
		cfgs[i] = gb_make(g, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, "engine configuration");
	if (sdpa_graph_ok(g))
		gb_fail(g, cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
						    CUDNN_TYPE_BACKEND_DESCRIPTOR, n, &got, cfgs),
			"heuristics results");
	g->ncfg = (int)got;
	for (int64_t i = 0; i < got && sdpa_graph_ok(g) && !g->plan; i++) {
		desc_t plan = gb_make(g, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, "execution plan");
		cudnnStatus_t st;

		gb_set(g, plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &c->dnn,
		       "execution plan");
		gb_set(g, plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
		       CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfgs[i], "execution plan");
		if (!sdpa_graph_ok(g))
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
	if (sdpa_graph_ok(g) && !g->plan)
		gb_fail(g, CUDNN_STATUS_NOT_SUPPORTED, "execution plan (no configuration finalizes)");
	if (sdpa_graph_ok(g))
		gb_fail(g, cudnnBackendGetAttribute(g->plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
						    CUDNN_TYPE_INT64, 1, &got, &g->ws_bytes),
			"execution plan workspace size");
	/* The engine's global index, for the progress line only. */
	g->engine = -1;
	if (sdpa_graph_ok(g)) {
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

void sdpa_graph_init(struct sdpa_graph *g, bool bwd)
{
	memset(g, 0, sizeof(*g));
	g->name = bwd ? "bwd" : "fwd";
	g->bwd = bwd;
	g->next_uid = UID_VIRTUAL;
	g->st = CUDNN_STATUS_SUCCESS;
}

void sdpa_graph_build(struct sdpa_graph *g, struct calib *c, const struct attn_shape *a)
{
	if (g->bwd)
		build_bwd(g, a);
	else
		build_fwd(g, a);
	find_plan(g, c);
}

desc_t sdpa_graph_pack(struct sdpa_graph *g, int n, const int64_t *uids, void *const *ptrs,
		       void *const *ws)
{
	desc_t vp = gb_make(g, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, "variant pack");

	gb_set(g, vp, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n, uids,
	       "variant pack");
	gb_set(g, vp, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, n, ptrs,
	       "variant pack");
	gb_set(g, vp, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, ws,
	       "variant pack");
	gb_final(g, vp, "variant pack");
	return sdpa_graph_ok(g) ? vp : NULL;
}
