/* workload: per-block kernel lists of a transformer (see workload.h).
 *
 * Shapes follow Megatron-LM's layer: QKV and MLP-up are column-parallel
 * (output features / t), attention output and MLP-down row-parallel (input
 * features / t), so each rank holds heads / t heads. With sequence
 * parallelism the norms, dropouts and residual adds see T / t tokens.
 * Backward of a GEMM is a data-gradient and a weight-gradient GEMM of the
 * same FLOPs; backward of a memory-bound kernel moves 1.5x the bytes of its
 * forward (it reads the saved input and the incoming gradient). */
#include "workload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void op_list_init(struct op_list *l)
{
	memset(l, 0, sizeof(*l));
}

void op_list_finish(struct op_list *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

int op_list_push(struct op_list *l, const struct op *op)
{
	if (l->n == l->cap) {
		int cap = l->cap ? 2 * l->cap : 16;
		struct op *v = realloc(l->v, (size_t)cap * sizeof(*v));
		if (!v)
			return -1;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = *op;
	return 0;
}

double op_list_flops(const struct op_list *l)
{
	double f = 0;
	for (int i = 0; i < l->n; i++)
		f += l->v[i].flops;
	return f;
}

const char *wl_block_name(enum wl_block b)
{
	static const char *const n[] = { "embedding", "attention", "mlp", "head" };
	return b < WL_NBLOCKS ? n[b] : "?";
}

const char *recompute_name(enum recompute r)
{
	static const char *const n[] = { "none", "selective", "full" };
	return n[r];
}

struct emitter {
	struct op_list *out;
	enum op_pass pass;
	enum dtype dt;
	int rc;
};

static void gemm(struct emitter *e, const char *name, double batch,
		 double m, double n, double k)
{
	double B = dtype_bytes(e->dt);
	struct op op = { .kind = OP_GEMM, .pass = e->pass, .dtype = e->dt, .batch = batch };

	if (e->pass == PASS_FWD) {
		snprintf(op.name, sizeof(op.name), "%s", name);
		op.m = m, op.n = n, op.k = k;
		op.flops = 2 * batch * m * n * k;
		op.bytes = batch * (m * k + k * n + m * n) * B;
		e->rc |= op_list_push(e->out, &op);
		return;
	}
	/* dgrad: dX[m,k] = dY[m,n] W^T[n,k] */
	snprintf(op.name, sizeof(op.name), "%s.dgrad", name);
	op.m = m, op.n = k, op.k = n;
	op.flops = 2 * batch * m * n * k;
	op.bytes = batch * (m * n + n * k + m * k) * B;
	e->rc |= op_list_push(e->out, &op);
	/* wgrad: dW[k,n] = X^T[k,m] dY[m,n] */
	snprintf(op.name, sizeof(op.name), "%s.wgrad", name);
	op.m = k, op.n = n, op.k = m;
	e->rc |= op_list_push(e->out, &op);
}

static void membound(struct emitter *e, const char *name, const char *family,
		     double elements, double touches, double row)
{
	struct op op = { .kind = OP_MEMBOUND, .pass = e->pass, .dtype = e->dt, .batch = 1 };
	double f = e->pass == PASS_BWD ? 1.5 : 1.0;

	snprintf(op.name, sizeof(op.name), "%s%s", name, e->pass == PASS_BWD ? ".bwd" : "");
	snprintf(op.membound_kind, sizeof(op.membound_kind), "%s_%s", family,
		 e->pass == PASS_BWD ? "bwd" : "fwd");
	op.m = elements;
	op.row = row;
	op.bytes = f * touches * elements * dtype_bytes(e->dt);
	op.flops = 0;
	e->rc |= op_list_push(e->out, &op);
}

static void attention_core(struct emitter *e, const struct model *m,
			   const struct wl_shape *s)
{
	double heads = (double)m->heads / s->tp, hd = (double)model_head_dim(m);
	double b = s->micro_batch, sq = s->seq;

	gemm(e, "attn_score", b * heads, sq, sq, hd);
	membound(e, "softmax", "softmax", b * heads * sq * sq, 2, sq);
	if (m->dropout) /* read, write, and a one-byte mask */
		membound(e, "attn_dropout", "dropout", b * heads * sq * sq, 2.5, 0);
	gemm(e, "attn_over_v", b * heads, sq, hd, sq);
}

int workload_block(const struct model *m, const struct wl_shape *s,
		   enum wl_block blk, enum op_pass pass, enum recompute rc,
		   struct op_list *out)
{
	struct emitter e = { .out = out, .pass = pass, .dt = s->dtype };
	double t = s->tp, h = (double)m->hidden, T = s->micro_batch * s->seq;
	double Tn = s->sp ? T / t : T;  /* tokens seen by norms/dropout */
	double kv = (double)(m->kv_heads * model_head_dim(m));
	const char *norm = m->norm == MODEL_NORM_RMSNORM ? "rmsnorm" : "layernorm";
	double ffn = (double)m->ffn / t;

	switch (blk) {
	case WL_EMBED:
		membound(&e, "embedding", "gather", T * h, 2, 0);
		break;
	case WL_ATTN:
		if (pass == PASS_BWD && rc == RECOMPUTE_SELECTIVE) {
			struct emitter fw = e;
			fw.pass = PASS_FWD;
			attention_core(&fw, m, s);
			e.rc |= fw.rc;
		}
		membound(&e, norm, norm, Tn * h, 2, h);
		gemm(&e, "qkv", 1, T, (h + 2 * kv) / t, h);
		attention_core(&e, m, s);
		gemm(&e, "attn_out", 1, T, h, h / t);
		membound(&e, "dropout_residual", "residual", Tn * h, m->dropout ? 3.5 : 3, 0);
		break;
	case WL_MLP:
		membound(&e, norm, norm, Tn * h, 2, h);
		if (m->act == MODEL_ACT_SWIGLU) {
			gemm(&e, "mlp_gate_up", 1, T, 2 * ffn, h);
			membound(&e, "swiglu", "bias_swiglu", T * ffn, 3, 0);
		} else {
			gemm(&e, "mlp_up", 1, T, ffn, h);
			membound(&e, "gelu", "bias_gelu", T * ffn, 2, 0);
		}
		gemm(&e, "mlp_down", 1, T, h, ffn);
		membound(&e, "dropout_residual", "residual", Tn * h, m->dropout ? 3.5 : 3, 0);
		break;
	case WL_HEAD:
		membound(&e, "final_norm", norm, Tn * h, 2, h);
		gemm(&e, "lm_head", 1, T, (double)m->vocab / t, h);
		membound(&e, "cross_entropy", "softmax", T * (double)m->vocab / t, 2,
			 (double)m->vocab / t);
		break;
	default:
		return -1;
	}
	return e.rc ? -1 : 0;
}
