/* trace_calib: a calib profile from a PyTorch profiler trace (see
 * trace_calib.h for the op table and the choices).
 *
 * Each call of an op of interest is read through its op's row of
 * op_table: where its operands stand among the inputs and, for attention,
 * the query's layout and the position of is_causal in the op's schema
 * (aten/src/ATen/native/native_functions.yaml, as PyTorch 2.4-2.6 declare
 * them; flash_attn's custom ops as flash_attn_interface.py registers
 * them). A call lands in the entry of its shape (a linear search: traces
 * hold tens of distinct shapes), and each entry's time is the median of
 * its calls. */
#include "trace_calib.h"
#include "xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attention.h"
#include "bounds.h"
#include "gpu.h"
#include "profile.h"

enum opkind { OP_MM, OP_BMM, OP_MATMUL, OP_LINEAR, OP_ATTN, OP_LNORM, OP_RMSNORM, OP_SOFTMAX,
	      OP_SOFTMAX_BWD, OP_GELU, OP_GELU_BWD, OP_ADD, OP_NOT_READ };

struct opdef {
	const char *name;
	enum opkind kind;
	int a;                  /* first operand (query for attention) */
	bool bshd;              /* attention: query [b, s, h, d] (else [b, h, s, d]) */
	bool bwd;
	int scalar;             /* the scalar input read: attention is_causal, softmax dim */
	int scalar_alt_n, scalar_alt;   /* ... at scalar_alt when there are scalar_alt_n inputs */
	int dropout;            /* attention: dropout_p's input, 0 none (never at 0) */
};

static const struct opdef op_table[] = {
	{ "aten::mm", OP_MM, 0, false, false, 0, 0, 0, 0 },
	{ "aten::addmm", OP_MM, 1, false, false, 0, 0, 0, 0 },
	{ "aten::_scaled_mm", OP_MM, 0, false, false, 0, 0, 0, 0 },
	{ "aten::bmm", OP_BMM, 0, false, false, 0, 0, 0, 0 },
	{ "aten::baddbmm", OP_BMM, 1, false, false, 0, 0, 0, 0 },
	{ "aten::matmul", OP_MATMUL, 0, false, false, 0, 0, 0, 0 },
	{ "aten::linear", OP_LINEAR, 0, false, false, 0, 0, 0, 0 },
	/* (query, key, value, dropout_p, is_causal, return_debug_mask, *, scale) */
	{ "aten::_scaled_dot_product_flash_attention", OP_ATTN, 0, false, false, 4, 0, 0, 3 },
	/* (grad_out, query, key, value, out, logsumexp, cum_seq_q, cum_seq_k,
	 *  max_q, max_k, dropout_p, is_causal, philox_seed, philox_offset, *, scale) */
	{ "aten::_scaled_dot_product_flash_attention_backward", OP_ATTN, 1, false, true, 11, 0, 0, 10 },
	/* (query, key, value, attn_bias, compute_log_sumexp, dropout_p, is_causal, *, scale);
	 * before PyTorch 2.1: (query, key, value, compute_log_sumexp, is_causal, *, scale) */
	{ "aten::_scaled_dot_product_efficient_attention", OP_ATTN, 0, false, false, 6, 6, 4, 5 },
	/* (grad_out_, query, key, value, attn_bias, out, logsumexp, philox_seed,
	 *  philox_offset, dropout_p, grad_input_mask, is_causal, *, scale) */
	{ "aten::_scaled_dot_product_efficient_attention_backward", OP_ATTN, 1, false, true, 11, 0, 0, 9 },
	/* (query, key, value, attn_bias, compute_log_sumexp, dropout_p, is_causal,
	 *  return_debug_mask, *, scale) */
	{ "aten::_scaled_dot_product_cudnn_attention", OP_ATTN, 0, false, false, 6, 0, 0, 5 },
	/* (grad_out, query, key, value, out, logsumexp, philox_seed, philox_offset,
	 *  attn_bias, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, is_causal, *, scale) */
	{ "aten::_scaled_dot_product_cudnn_attention_backward", OP_ATTN, 1, false, true, 14, 0, 0, 13 },
	/* (query, key, value, cum_seq_q, cum_seq_k, max_q, max_k, dropout_p, is_causal, ...) */
	{ "aten::_flash_attention_forward", OP_ATTN, 0, true, false, 8, 0, 0, 7 },
	/* (grad_out, query, key, value, out, logsumexp, cum_seq_q, cum_seq_k, max_q,
	 *  max_k, dropout_p, is_causal, ...) */
	{ "aten::_flash_attention_backward", OP_ATTN, 1, true, true, 11, 0, 0, 10 },
	/* (q, k, v, dropout_p, softmax_scale, causal, ...) */
	{ "flash_attn::_flash_attn_forward", OP_ATTN, 0, true, false, 5, 0, 0, 3 },
	/* (dout, q, k, v, out, softmax_lse, dq, dk, dv, dropout_p, softmax_scale, causal, ...) */
	{ "flash_attn::_flash_attn_backward", OP_ATTN, 1, true, true, 11, 0, 0, 9 },
	/* (input, normalized_shape, weight, bias, eps): one kernel reads x, gamma,
	 * beta, writes y and the fp32 mean and rstd, as calib's layernorm_fwd */
	{ "aten::native_layer_norm", OP_LNORM, 0, false, false, 0, 0, 0, 0 },
	/* (input, normalized_shape, weight, eps), PyTorch 2.4+: priced only as
	 * one kernel (a fused RMSNorm); the composite (pow, mean, add, rsqrt,
	 * mul) moves other bytes than calib's rmsnorm_fwd */
	{ "aten::rms_norm", OP_RMSNORM, 0, false, false, 0, 0, 0, 0 },
	/* (self, dim, half_to_float): reads x, writes y */
	{ "aten::_softmax", OP_SOFTMAX, 0, false, false, 1, 0, 0, 0 },
	/* (grad_output, output, dim, input_dtype): reads y and dy, writes dx */
	{ "aten::_softmax_backward_data", OP_SOFTMAX_BWD, 0, false, true, 2, 0, 0, 0 },
	/* dx and the gamma / beta reductions in kernels of their own: not the
	 * traffic of calib's one-kernel layernorm_bwd, so not read */
	{ "aten::native_layer_norm_backward", OP_NOT_READ, 0, false, true, 0, 0, 0, 0 },
	/* (self, *, approximate): reads x, writes y */
	{ "aten::gelu", OP_GELU, 0, false, false, 0, 0, 0, 0 },
	/* (grad_output, self, *, approximate): reads dy and x, writes dx */
	{ "aten::gelu_backward", OP_GELU_BWD, 0, false, true, 0, 0, 0, 0 },
	/* add.Tensor (self, other, *, alpha) of two tensors of one shape: the
	 * eager residual add, reads both, writes the sum */
	{ "aten::add", OP_ADD, 0, false, false, 0, 0, 0, 0 },
};
#define NOPS ((int)(sizeof(op_table) / sizeof(op_table[0])))

/* op_table's GEMMs, first in it: the ops an Nsight Systems export prices
 * too (trace_calib_gemm_ops) */
#define GEMM_OPS "aten::mm", "aten::addmm", "aten::_scaled_mm", "aten::bmm", "aten::baddbmm", \
		 "aten::matmul", "aten::linear"
const char *const trace_calib_ops[] = {
	GEMM_OPS,
	"aten::_scaled_dot_product_flash_attention",
	"aten::_scaled_dot_product_flash_attention_backward",
	"aten::_scaled_dot_product_efficient_attention",
	"aten::_scaled_dot_product_efficient_attention_backward",
	"aten::_scaled_dot_product_cudnn_attention",
	"aten::_scaled_dot_product_cudnn_attention_backward",
	"aten::_flash_attention_forward", "aten::_flash_attention_backward",
	"flash_attn::_flash_attn_forward", "flash_attn::_flash_attn_backward",
	"aten::native_layer_norm", "aten::_softmax", "aten::_softmax_backward_data",
	"aten::native_layer_norm_backward",
	"aten::rms_norm", "aten::gelu", "aten::gelu_backward", "aten::add",
	NULL,
};
const char *const trace_calib_gemm_ops[] = { GEMM_OPS, NULL };

_Static_assert(sizeof(trace_calib_ops) / sizeof(trace_calib_ops[0]) == NOPS + 1,
	       "trace_calib_ops lists op_table's names");

/* read_dtype gives no block-scaled dtype: no name for mxfp8, nvfp4 */

static const struct opdef *find_op(const char *name)
{
	for (int i = 0; i < NOPS; i++)
		if (strcmp(op_table[i].name, name) == 0)
			return &op_table[i];
	return NULL;
}

/* Input i's sizes into v[] (at most 8); returns the rank, or -1 when the
 * input is absent or not a list of integers. */
static int dims(const struct kineto_op *op, const char *key, int i, double v[8])
{
	json_t *a = json_array_get(kineto_arg(op, key), (size_t)i), *x;
	size_t j;
	if (!json_is_array(a) || json_array_size(a) > 8)
		return -1;
	json_array_foreach(a, j, x) {
		if (!json_is_integer(x))
			return -1;
		v[j] = (double)json_integer_value(x);
	}
	return (int)json_array_size(a);
}

static int read_dtype(const struct kineto_op *op, int i, bool tf32, enum dtype *out, char *why, size_t n)
{
	const char *s = json_string_value(json_array_get(kineto_arg(op, "Input type"), (size_t)i));
	if (!s) {
		snprintf(why, n, "no \"Input type\" for input %d (record_shapes=True records it)", i);
		return -1;
	}
	if (!kineto_dtype(s, tf32, out)) {
		snprintf(why, n, "input dtype '%s' is none of the profile's (fp32, tf32, fp16, bf16, "
			 "fp8_e4m3)", s);
		return -1;
	}
	return 0;
}

/* 'T' when input i's strides show a transposed view of a matrix (its
 * rows unit-stride), else 'N' (also when the trace holds no strides). */
static char trans_of(const struct kineto_op *op, int i)
{
	double st[8];
	int r = dims(op, "Input Strides", i, st);
	if (r < 2)
		return 'N';
	return st[r - 1] != 1 && st[r - 2] == 1 ? 'T' : 'N';
}

static int gemm_shape(const struct opdef *od, const struct kineto_op *op, struct trace_calib_entry *e,
		      char *why, size_t n)
{
	double a[8], b[8];
	int ra = dims(op, "Input Dims", od->a, a), rb = dims(op, "Input Dims", od->a + 1, b);
	if (ra < 0 || rb < 0) {
		snprintf(why, n, "no \"Input Dims\" (record the trace with record_shapes=True)");
		return -1;
	}
	e->batch = 1, e->transa = trans_of(op, od->a), e->transb = trans_of(op, od->a + 1);
	if (od->kind == OP_LINEAR && ra >= 1 && rb == 2) {
		e->m = 1;
		for (int i = 0; i < ra - 1; i++)
			e->m *= a[i];
		e->k = a[ra - 1], e->n = b[0], e->transb = 'T';
		if (b[1] != e->k)
			goto mismatch;
		return 0;
	}
	if (od->kind == OP_BMM && ra == 3 && rb == 3) {
		if (a[0] != b[0] || a[2] != b[1])
			goto mismatch;
		e->batch = a[0], e->m = a[1], e->k = a[2], e->n = b[2];
		return 0;
	}
	/* matmul of [.., m, k] by [k, n] folds the leading dimensions into one
	 * mm (ATen LinearAlgebra.cpp _matmul_impl: dim_tensor1 >= 3, dim_tensor2 == 2) */
	if (od->kind == OP_MATMUL && ra >= 3 && rb == 2) {
		e->m = 1;
		for (int i = 0; i < ra - 1; i++)
			e->m *= a[i];
		e->k = a[ra - 1], e->n = b[1];
		if (b[0] != e->k)
			goto mismatch;
		return 0;
	}
	if (od->kind != OP_BMM && od->kind != OP_LINEAR && ra == 2 && rb == 2) {
		if (a[1] != b[0])
			goto mismatch;
		e->m = a[0], e->k = a[1], e->n = b[1];
		return 0;
	}
	snprintf(why, n, "operands of rank %d and %d: not one GEMM this importer reads "
		 "(its kernels are a child op's when it has one)", ra, rb);
	return -1;
mismatch:
	snprintf(why, n, "\"Input Dims\" do not multiply (inner dimensions differ)");
	return -1;
}

/* is_causal of an attention call, from "Concrete Inputs". */
static int causal_of(const struct opdef *od, const struct kineto_op *op, bool *causal, char *why, size_t n)
{
	json_t *ci = kineto_arg(op, "Concrete Inputs");
	size_t nin = json_array_size(kineto_arg(op, "Input Dims"));
	int at = od->scalar_alt_n && nin == (size_t)od->scalar_alt_n ? od->scalar_alt : od->scalar;
	const char *s = json_string_value(json_array_get(ci, (size_t)at));
	if (!ci) {
		snprintf(why, n, "causal not determinable: no \"Concrete Inputs\" (PyTorch 2.x "
			 "records is_causal there)");
		return -1;
	}
	if (!s || (strcmp(s, "True") && strcmp(s, "False"))) {
		snprintf(why, n, "causal not determinable: \"Concrete Inputs\"[%d] is not True or False", at);
		return -1;
	}
	*causal = strcmp(s, "True") == 0;
	/* the profile's attention runs without dropout: the simulator adds
	 * it (attention.h attention_dropout_ratio) */
	const char *p = od->dropout && !(od->scalar_alt_n && nin == (size_t)od->scalar_alt_n)
				? json_string_value(json_array_get(ci, (size_t)od->dropout))
				: NULL;
	if (p && *p && strtod(p, NULL) != 0) {
		snprintf(why, n, "dropout_p %s: the profile's attention is measured without dropout "
			 "(the simulator prices it, models/attention.h)", p);
		return -1;
	}
	return 0;
}

static int attn_shape(const struct opdef *od, const struct kineto_op *op, struct trace_calib_entry *e,
		      char *why, size_t n)
{
	double q[8], k[8];
	int rq = dims(op, "Input Dims", od->a, q), rk = dims(op, "Input Dims", od->a + 1, k);
	if (rq < 0 || rk < 0) {
		snprintf(why, n, "no \"Input Dims\" (record the trace with record_shapes=True)");
		return -1;
	}
	if (rq != 4 || rk != 4) {
		snprintf(why, n, "query or key of rank %d, %d, expected 4 (varlen or nested "
			 "attention is not read)", rq, rk);
		return -1;
	}
	int si = od->bshd ? 1 : 2, hi = od->bshd ? 2 : 1;
	e->b = q[0], e->s = q[si], e->heads = q[hi], e->head_dim = q[3], e->bwd = od->bwd;
	if (k[si] != q[si]) {
		snprintf(why, n, "key length %g differs from query length %g (the profile's "
			 "attention has one s)", k[si], q[si]);
		return -1;
	}
	return causal_of(od, op, &e->causal, why, n);
}

/* The integers of a Concrete Inputs string "[4096]" or "-1" into v[]
 * (at most 8); returns how many, -1 when it holds something else. */
static int concrete_ints(const struct kineto_op *op, int i, double v[8])
{
	const char *s = json_string_value(json_array_get(kineto_arg(op, "Concrete Inputs"), (size_t)i));
	int n = 0;
	char *end;
	if (!s || !*s)
		return -1;
	for (s += *s == '['; *s && *s != ']'; s = end + (*end == ',')) {
		while (*s == ' ')
			s++;
		long x = strtol(s, &end, 10);
		if (end == s || n == 8)
			return -1;
		v[n++] = (double)x;
	}
	return n;
}

/* A layer norm or softmax: the calib kernel family, its row, its bytes. */
static int mem_shape(const struct opdef *od, const struct kineto_op *op, struct trace_calib_entry *e,
		     char *why, size_t n)
{
	double x[8], w[8];
	int r = dims(op, "Input Dims", 0, x), rw, i;
	if (r < 1) {
		snprintf(why, n, "no \"Input Dims\" (record the trace with record_shapes=True)");
		return -1;
	}
	e->mem = true, e->bwd = od->bwd, e->elements = 1;
	for (i = 0; i < r; i++)
		e->elements *= x[i];
	if (od->kind == OP_GELU || od->kind == OP_GELU_BWD) {
		e->row = 0, e->kernel = od->bwd ? "bias_gelu_bwd" : "bias_gelu_fwd";
		return 0;
	}
	if (od->kind == OP_ADD) {
		rw = dims(op, "Input Dims", 1, w);
		bool same = rw == r;
		for (i = 0; same && i < r; i++)
			same = w[i] == x[i];
		if (!same || r < 1) {
			snprintf(why, n, "not two tensors of one shape (a broadcast or a scalar: another "
				 "kernel than the residual add)");
			return -1;
		}
		e->row = 0, e->kernel = "residual";
		return 0;
	}
	if (od->kind == OP_LNORM || od->kind == OP_RMSNORM) {
		/* the row: the weight's size, else normalized_shape's */
		rw = dims(op, "Input Dims", 2, w);
		if (rw < 1)
			rw = concrete_ints(op, 1, w);
		if (rw < 1) {
			snprintf(why, n, "row length not determinable (no weight, no normalized_shape in "
				 "\"Concrete Inputs\")");
			return -1;
		}
		e->row = 1;
		for (i = 0; i < rw; i++)
			e->row *= w[i];
		e->kernel = od->kind == OP_LNORM ? "layernorm_fwd" : "rmsnorm_fwd";
		return 0;
	}
	if (concrete_ints(op, od->scalar, w) != 1) {
		snprintf(why, n, "softmax dim not determinable (no \"Concrete Inputs\")");
		return -1;
	}
	if (w[0] != -1 && w[0] != r - 1) {
		snprintf(why, n, "softmax over dim %g of %d, not the last (another kernel than calib's)",
			 w[0], r);
		return -1;
	}
	e->row = x[r - 1];
	e->kernel = od->kind == OP_SOFTMAX ? "softmax_fwd" : "softmax_bwd";
	return 0;
}

/* HBM bytes of a memory-bound entry, as calib/bench_mem.c counts its
 * kernels' (every operand read and result written once). */
static double mem_bytes(const struct trace_calib_entry *e)
{
	double sz = dtype_bytes(e->dtype), rows = e->row > 0 ? e->elements / e->row : 0;
	if (!strcmp(e->kernel, "layernorm_fwd"))
		return 2 * e->elements * sz + 2 * e->row * sz + 8 * rows;
	if (!strcmp(e->kernel, "rmsnorm_fwd"))      /* x, gamma, y, fp32 rstd */
		return 2 * e->elements * sz + e->row * sz + 4 * rows;
	if (!strcmp(e->kernel, "residual"))
		return 3 * e->elements * sz;
	return (e->bwd ? 3 : 2) * e->elements * sz;
}

static bool same_entry(const struct trace_calib_entry *x, const struct trace_calib_entry *y)
{
	if (x->attn != y->attn || x->mem != y->mem || x->dtype != y->dtype || strcmp(x->op, y->op) != 0)
		return false;
	if (x->mem)
		return x->elements == y->elements && x->row == y->row;
	if (!x->attn)
		return x->batch == y->batch && x->m == y->m && x->n == y->n && x->k == y->k &&
		       x->transa == y->transa && x->transb == y->transb;
	return x->b == y->b && x->heads == y->heads && x->s == y->s && x->head_dim == y->head_dim &&
	       x->causal == y->causal && x->bwd == y->bwd;
}

static void add_call(struct trace_calib *tc, const struct trace_calib_entry *c, double t)
{
	struct trace_calib_entry *e = NULL;
	for (int i = 0; i < tc->ne && !e; i++)
		if (same_entry(&tc->e[i], c))
			e = &tc->e[i];
	if (!e) {
		XGROW(tc->e, tc->ce, tc->ne + 1);
		e = &tc->e[tc->ne++];
		*e = *c;
		e->t = NULL, e->nt = e->ct = 0;
	}
	XGROW(e->t, e->ct, e->nt + 1);
	e->t[e->nt++] = t;
}

/* s: one call of op, left out for why. */
static void skip_set(struct trace_calib_skip *s, const struct kineto_op *op, const char *why)
{
	s->op = op->name, s->count = 1;
	snprintf(s->why, sizeof(s->why), "%s", why);
	snprintf(s->jpath, sizeof(s->jpath), "%s", op->jpath);
}

/* A call of op the profile cannot price, counted by op and why. */
static void add_skip(struct trace_calib *tc, const struct kineto_op *op, const char *why)
{
	tc->calls_skipped++;
	for (int i = 0; i < tc->nskip; i++)
		if (!strcmp(tc->skip[i].op, op->name) && !strcmp(tc->skip[i].why, why)) {
			tc->skip[i].count++;
			return;
		}
	XGROW(tc->skip, tc->cskip, tc->nskip + 1);
	skip_set(&tc->skip[tc->nskip++], op, why);
}

/* A call a sound trace cannot hold: said by trace_calib_profile(). */
static void add_damaged(struct trace_calib *tc, const struct kineto_op *op, const char *why)
{
	if (tc->ndamaged < TRACE_CALIB_DAMAGED_MAX)
		skip_set(&tc->damaged[tc->ndamaged], op, why);
	tc->ndamaged++;
}

static int dbl_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void finish_entry(struct trace_calib_entry *e)
{
	if (e->nt > 0)
		qsort(e->t, (size_t)e->nt, sizeof(double), dbl_cmp);
	e->time_s = e->nt % 2 ? e->t[e->nt / 2] : (e->t[e->nt / 2 - 1] + e->t[e->nt / 2]) / 2;
	if (e->mem) {
		e->bytes = mem_bytes(e);
		e->GBps = e->bytes / e->time_s * 1e-9;
		return;
	}
	double flops = e->attn ? attention_flops(ATTN_FLASH, e->causal, e->bwd, e->b * e->heads, e->s,
						 e->head_dim)
			       : 2 * e->batch * e->m * e->n * e->k;
	e->tflops = flops / e->time_s * 1e-12;
}

/* The largest size the profile holds exactly (its integers are read as
 * doubles by the cost source): a size or product of sizes beyond it is no
 * tensor a GPU ran. */
#define SIZE_MAX_EXACT 9007199254740992.0 /* 2^53 */

/* Whether call c (one call's kernel time t, s) is one a sound trace can
 * hold: sizes >= 0 (0: an empty tensor, skipped by the caller) and at most
 * 2^53 with their products, a time and a rate within what a profile
 * entry may hold (models/bounds.h "*_s", "tflops", "GBps"). Returns 0, 1
 * for an empty tensor, or -1 with why. */
static int call_sane(const struct trace_calib_entry *c, double t, char *why, size_t n)
{
	const double sz[] = { c->batch, c->m, c->n, c->k, c->b, c->heads, c->s, c->head_dim,
			      c->elements, c->row, c->batch * c->m, c->b * c->heads * c->s * c->head_dim };
	const char *const name[] = { "batch", "m", "n", "k", "b", "heads", "s", "head_dim", "elements",
				     "row", "batch x m", "b x heads x s x head_dim" };
	for (size_t i = 0; i < sizeof(sz) / sizeof(sz[0]); i++)
		if (!(sz[i] >= 0 && sz[i] <= SIZE_MAX_EXACT)) {
			snprintf(why, n, "\"Input Dims\" give %s %.6g: expected a size in [0, 2^53] "
				 "(a damaged trace)", name[i], sz[i]);
			return -1;
		}
	if (c->mem ? c->elements == 0
		   : c->attn ? c->b * c->heads * c->s * c->head_dim == 0 : c->batch * c->m * c->n * c->k == 0)
		return 1;
	char msg[96];
	if (!bound_check("time_s", t, msg, sizeof(msg))) {
		snprintf(why, n, "its kernels' time %s (a damaged trace)", msg);
		return -1;
	}
	struct trace_calib_entry one = *c;
	double tt = t;
	one.t = &tt, one.nt = 1;
	finish_entry(&one);
	if (!bound_check(c->mem ? "GBps" : "tflops", c->mem ? one.GBps : one.tflops, msg, sizeof(msg))) {
		snprintf(why, n, "its rate %s (%s over %.3g s: a damaged trace?)", msg,
			 c->mem ? "bytes" : "FLOPs", t);
		return -1;
	}
	return 0;
}

static void price_call(struct trace_calib *tc, const struct trace_calib_opts *o, const struct kineto_op *op)
{
	const struct opdef *od = find_op(op->name);
	struct trace_calib_entry c = { .op = op->name };
	char why[256];

	if (op->nkernels == 0) {
		if (op->wrapper)
			tc->calls_wrapper++;
		else
			add_skip(tc, op, "no kernel attributed (it ran none, or the trace holds no "
				 "GPU activity)");
		return;
	}
	if (!(op->kernel_s > 0)) {
		add_skip(tc, op, "its kernels' durations sum to 0");
		return;
	}
	c.attn = od->kind == OP_ATTN;
	bool mem = od->kind == OP_LNORM || od->kind == OP_RMSNORM || od->kind == OP_SOFTMAX ||
		   od->kind == OP_SOFTMAX_BWD || od->kind == OP_GELU || od->kind == OP_GELU_BWD ||
		   od->kind == OP_ADD;
	if (od->kind == OP_NOT_READ) {
		add_skip(tc, op, "not imported: its kernels (dx, then the weight and bias gradients) move "
			 "other bytes than calib's one-kernel layernorm_bwd");
		return;
	}
	if (od->kind == OP_RMSNORM && (op->nkernels != 1 || op->wrapper)) {
		add_skip(tc, op, "not one kernel: the composite rms_norm (pow, mean, add, rsqrt, mul) "
			 "moves other bytes than calib's one-kernel rmsnorm_fwd");
		return;
	}
	int bad = mem ? mem_shape(od, op, &c, why, sizeof(why))
		      : c.attn ? attn_shape(od, op, &c, why, sizeof(why)) : gemm_shape(od, op, &c, why, sizeof(why));
	/* memory-bound kernels: storage dtype, fp32 never tf32 */
	if (bad || read_dtype(op, od->a, !mem && (op->tf32 || o->float_as_tf32), &c.dtype, why, sizeof(why))) {
		add_skip(tc, op, why);
		return;
	}
	int sane = call_sane(&c, op->kernel_s, why, sizeof(why));
	if (sane) {
		if (sane > 0)
			add_skip(tc, op, "an empty tensor (a size 0 in \"Input Dims\"): nothing to time");
		else
			add_damaged(tc, op, why);
		return;
	}
	add_call(tc, &c, op->kernel_s);
	tc->calls_priced++;
	tc->kernels_priced += op->nkernels;
}

struct trace_calib *trace_calib_build(const struct kineto_trace *t, const struct trace_calib_opts *o)
{
	struct trace_calib *tc = xcalloc(1, sizeof(*tc));
	tc->trace = t;
	/* a warm-up to drop only when a later step holds calls: the step in
	 * which the profiler stops may be empty (HTA tests/data/amd_trace:
	 * ProfilerStep#2 of 49 us, nothing in it) */
	bool later = false;
	for (int i = 0; i < t->nops && !later; i++)
		later = t->ops[i].step >= 0 && t->ops[i].step != t->first_step;
	tc->dropped_first = t->nsteps >= 2 && later && !o->keep_first_step;
	for (int i = 0; i < t->nops; i++) {
		const struct kineto_op *op = &t->ops[i];
		if (tc->dropped_first && op->step == t->first_step) {
			tc->calls_warmup++;
			continue;
		}
		price_call(tc, o, op);
	}
	for (int i = 0; i < tc->ne; i++)
		finish_entry(&tc->e[i]);
	/* the steps the medians are of (the profile's timed_runs): at most
	 * t->nsteps distinct numbers */
	long *seen = xcalloc((size_t)t->nsteps + 1, sizeof(*seen));
	for (int i = 0; i < t->nops; i++) {
		long st = t->ops[i].step;
		bool skip = st < 0 || (tc->dropped_first && st == t->first_step);
		for (int j = 0; j < tc->steps_timed && !skip; j++)
			skip = seen[j] == st;
		if (!skip && tc->steps_timed < t->nsteps)
			seen[tc->steps_timed++] = st;
	}
	free(seen);
	if (tc->steps_timed < 1)
		tc->steps_timed = 1;
	return tc;
}

void trace_calib_destroy(struct trace_calib *tc)
{
	if (!tc)
		return;
	for (int i = 0; i < tc->ne; i++)
		free(tc->e[i].t);
	free(tc->e);
	free(tc->skip);
	free(tc);
}

int trace_calib_check_peak(const struct trace_calib *tc, const struct gpu_spec *g, const char *out,
			   struct diag *d)
{
	int idx[3] = { 0, 0, 0 }, rc = 0;     /* gemm, memory_bound, attention */
	for (int i = 0; i < tc->ne; i++) {
		const struct trace_calib_entry *e = &tc->e[i];
		int sec = e->mem ? 1 : e->attn ? 2 : 0;
		char jp[48];
		snprintf(jp, sizeof(jp), "/%s/%d", sec == 0 ? "gemm" : sec == 1 ? "memory_bound" : "attention",
			 idx[sec]++);
		double peak = e->mem ? g->hbm_bw_Bps : g->peak_flops[e->dtype];
		double rate = e->mem ? e->GBps * 1e9 : e->tflops * 1e12, unit = e->mem ? 1e9 : 1e12;
		const char *un = e->mem ? "GB/s" : "TFLOP/s";
		if (!(peak > 0) || rate <= PROFILE_PEAK_MARGIN * peak)
			continue;
		rc = diag_err(d, out, jp, "%s at %.4g %s is above %g x the %s%s of %.4g %s of '%s' (%d calls "
			      "of %s, median %.4g ms)%s", e->mem ? e->kernel : e->attn ? "attention" : "a GEMM",
			      rate / unit, un, PROFILE_PEAK_MARGIN, e->mem ? "HBM bandwidth" : profile_dtype_name(e->dtype),
			      e->mem ? "" : " peak", peak / unit, un, g->name, e->nt, e->op, e->time_s * 1e3,
			      !e->mem && e->dtype == DTYPE_FP32 ? ": did float GEMMs run on TF32 tensor "
			      "cores? (--tf32)" : ": another GPU's trace?");
	}
	return rc;
}

void trace_calib_summary(const struct trace_calib *tc, const struct gpu_spec *g, FILE *f)
{
	const struct kineto_trace *t = tc->trace;
	int calls = tc->calls_priced + tc->calls_warmup + tc->calls_wrapper + tc->calls_skipped;

	fprintf(f, "trace %s: %d kernels: %d given to ops of interest, %d under other ops "
		"(element-wise, copies, collectives, compiled regions: not priced), %d with no CPU op\n",
		t->path, t->nkernels, t->nkernels_attributed,
		t->nkernels - t->nkernels_attributed - t->nkernels_orphan, t->nkernels_orphan);
	if (t->nsteps)
		fprintf(f, "steps: %d ProfilerStep%s%s\n", t->nsteps, t->nsteps > 1 ? "s" : "",
			tc->dropped_first ? ", the first dropped as warm-up" : ", none dropped");
	fprintf(f, "ops matched: %d calls of ops of interest: %d priced (%d kernels) into %d entries, "
		"%d in the warm-up step, %d wrappers (their kernels priced with an inner op), "
		"%d skipped\n", calls, tc->calls_priced, tc->kernels_priced, tc->ne, tc->calls_warmup,
		tc->calls_wrapper, tc->calls_skipped);
	for (int i = 0; i < tc->nskip; i++)
		fprintf(f, "  skipped %d x %s (first %s): %s\n", tc->skip[i].count, tc->skip[i].op,
			tc->skip[i].jpath, tc->skip[i].why);
	kineto_comm_summary(t, tc->dropped_first, f);
	for (int dt = 0; dt < DTYPE_N; dt++) {
		double lo = INFINITY, hi = 0;
		int n = 0;
		for (int i = 0; i < tc->ne; i++)
			if (!tc->e[i].attn && !tc->e[i].mem && (int)tc->e[i].dtype == dt) {
				lo = fmin(lo, tc->e[i].tflops), hi = fmax(hi, tc->e[i].tflops), n++;
			}
		if (!n)
			continue;
		fprintf(f, "GEMM %s: %d shapes, %.1f .. %.1f TFLOP/s", profile_dtype_name(dt), n, lo, hi);
		if (g && g->peak_flops[dt] > 0)
			fprintf(f, ", %.1f .. %.1f %% of the %s peak of '%s' (%.1f TFLOP/s)",
				100 * lo * 1e12 / g->peak_flops[dt], 100 * hi * 1e12 / g->peak_flops[dt],
				profile_dtype_name(dt), g->name, g->peak_flops[dt] * 1e-12);
		fputc('\n', f);
	}
	for (int i = 0; i < tc->ne; i++) {
		const struct trace_calib_entry *e = &tc->e[i];
		if (e->mem)
			fprintf(f, "  %s %s %.0f elements, row %.0f: %d calls, median %.4g ms, %.1f GB/s (%s)\n",
				e->kernel, profile_dtype_name(e->dtype), e->elements, e->row, e->nt, e->time_s * 1e3,
				e->GBps, e->op);
		else if (e->attn)
			fprintf(f, "  attention %s %s b %g heads %g s %g d %g%s: %d calls, median %.4g ms, "
				"%.1f TFLOP/s (%s)\n", e->bwd ? "bwd" : "fwd", profile_dtype_name(e->dtype), e->b,
				e->heads, e->s, e->head_dim, e->causal ? " causal" : "", e->nt,
				e->time_s * 1e3, e->tflops, e->op);
		else {
			char bt[32] = "";
			if (e->batch > 1)
				snprintf(bt, sizeof(bt), " batch %g", e->batch);
			fprintf(f, "  gemm %s %g x %g x %g%s: %d calls, median %.4g ms, %.1f TFLOP/s (%s)\n",
				profile_dtype_name(e->dtype), e->m, e->n, e->k, bt, e->nt, e->time_s * 1e3,
				e->tflops, e->op);
		}
	}
}
