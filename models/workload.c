/* workload: per-block kernel lists of a transformer (see workload.h).
 *
 * Shapes follow Megatron-LM's layer: QKV and MLP-up are column-parallel
 * (output features / t), attention output and MLP-down row-parallel (input
 * features / t), so each rank holds heads / t heads. With sequence
 * parallelism the norms, dropouts and residual adds see T / t tokens.
 * Backward of a GEMM is a data-gradient and a weight-gradient GEMM of the
 * same FLOPs; backward of a memory-bound kernel moves 1.5x the bytes of its
 * forward (it reads the saved input and the incoming gradient). */
#include "workload-private.h"
#include "cp_ring.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *wl_block_name(enum wl_block b)
{
	static const char *const n[] = { "embedding", "attention", "mlp", "head" };
	return b < WL_NBLOCKS ? n[b] : "?";
}

const char *const rc_module_names[RC_MOD_N + 1] = {
	"core_attn", "layernorm", "mla_up_proj", "moe_act", "mlp", "moe", "shared_experts", NULL,
};

const char *recompute_name(enum recompute r)
{
	static const char *const n[] = { "none", "selective", "full", "selective-op" };
	return n[r];
}

void workload_sac_op_recomputed(const struct op_list *in, int *gemms, struct op_list *out)
{
	for (int i = 0; i < in->n; i++) {
		const struct op *op = &in->v[i];
		if (op->kind == OP_GEMM ? ++*gemms % 2 == 0 : op->kind != OP_ATTN)
			op_list_push(out, op);
	}
}

/* Transformer Engine's cast(+transpose) of a tensor entering an fp8 GEMM:
 * reads 16 bits, writes the fp8 tensor and its fp8 transpose, and records
 * the amax for delayed scaling in the same pass: 4 bytes per element. */
static void fp8_cast(struct emitter *e, const char *name, double elements)
{
	struct op op = { .kind = OP_MEMBOUND, .pass = e->pass, .dtype = e->dt, .batch = 1 };

	snprintf(op.name, sizeof(op.name), "%s.fp8_cast", name);
	snprintf(op.membound_kind, sizeof(op.membound_kind), "fp8_cast_transpose");
	op.m = elements;
	/* a frozen weight needs no transpose for a weight gradient (TE v1.6,
	 * c81733f, pytorch/module/linear.py:116-131: cast-transpose only when
	 * weight.requires_grad) */
	op.bytes = elements * (dtype_bytes(e->dt) + (e->frozen ? 1 : 2) * dtype_bytes(e->gdt));
	op_list_push(e->out, &op);
}

/* A GEMM of this block. Under fp8, cast_in says the forward input arrives
 * unfused (not from a norm or activation kernel that writes fp8 itself),
 * cast_dy that the backward's output gradient does. */
static void gemm_ex(struct emitter *e, const char *name, double batch,
		    double m, double n, double k, bool cast_in, bool cast_dy)
{
	double Bi = dtype_bytes(e->gdt), Bo = dtype_bytes(e->dt);
	struct op op = { .kind = OP_GEMM, .pass = e->pass, .dtype = e->gdt, .batch = batch,
			 .lib = e->stk->gemm_lib };
	bool fp8 = e->fp8 && dtype_is_te_low(e->gdt);

	if (e->pass == PASS_FWD) {
		if (fp8 && cast_in)
			fp8_cast(e, name, batch * m * k);
		snprintf(op.name, sizeof(op.name), "%s", name);
		op.m = m, op.n = n, op.k = k;
		op.flops = 2 * batch * m * n * k;
		op.bytes = batch * ((m * k + k * n) * Bi + m * n * Bo);
		op.out_bytes = batch * op.m * op.n * Bo;
		op_list_push(e->out, &op);
		return;
	}
	if (fp8 && cast_dy)
		fp8_cast(e, name, batch * m * n);
	/* dgrad: dX[m,k] = dY[m,n] W^T[n,k] (fp8: E5M2 x E4M3) */
	snprintf(op.name, sizeof(op.name), "%s.dgrad", name);
	op.m = m, op.n = k, op.k = n;
	op.flops = 2 * batch * m * n * k;
	op.bytes = batch * ((m * n + n * k) * Bi + m * k * Bo);
	op.out_bytes = batch * op.m * op.n * Bo;
	op_list_push(e->out, &op);
	if (e->frozen)          /* a frozen weight: no gradient of its own */
		return;
	/* wgrad: dW[k,n] = X^T[k,m] dY[m,n]; the weight gradient is 16-bit */
	snprintf(op.name, sizeof(op.name), "%s.wgrad", name);
	op.m = k, op.n = n, op.k = m;
	op.bytes = batch * ((m * k + m * n) * Bi + k * n * Bo);
	op.out_bytes = batch * op.m * op.n * Bo;
	op_list_push(e->out, &op);
}

void workload_gemm(struct emitter *e, const char *name, double batch,
		   double m, double n, double k)
{
	gemm_ex(e, name, batch, m, n, k, false, true);
}

void workload_membound(struct emitter *e, const char *name, const char *family,
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
	op_list_push(e->out, &op);
}

/* A piece of the stack (stack.h): bytes per element and kernels as the
 * stack runs it, one op standing for its kernels (op.kernels; 0 with
 * bytes: a fused operand, stack.h struct stack_piece). */
void workload_piece(struct emitter *e, const char *name, const char *family,
		    const struct stack_piece *pc, double elements, double row)
{
	struct op op = { .kind = OP_MEMBOUND, .pass = e->pass, .dtype = e->dt, .batch = 1 };
	int p = e->pass == PASS_BWD;
	int k = pc->kernels[p] > 0 ? pc->kernels[p] : pc->bytes[p] > 0 ? 0 : 1;
	/* the counts are for 16-bit activations */
	double scale = dtype_bytes(e->dt) > 2 ? dtype_bytes(e->dt) / 2 : 1;

	snprintf(op.name, sizeof(op.name), "%s%s", name, p ? ".bwd" : "");
	snprintf(op.membound_kind, sizeof(op.membound_kind), "%s_%s", family, p ? "bwd" : "fwd");
	op.m = elements, op.row = row;
	op.bytes = pc->bytes[p] * scale * elements;
	op.kernels = k;
	op_list_push(e->out, &op);
}

static const struct stack_piece *norm_piece(const struct emitter *e, const struct model *m)
{
	return m->norm == MODEL_NORM_RMSNORM ? &e->stk->rmsnorm : &e->stk->layernorm;
}

/* The norm in front of a half-layer (or the final one). */
void workload_norm_op(struct emitter *e, const struct model *m, const char *name, double el)
{
	const char *fam = m->norm == MODEL_NORM_RMSNORM ? "rmsnorm" : "layernorm";
	workload_piece(e, name, fam, norm_piece(e, m), el, (double)m->hidden);
}

/* The residual add after a half-layer, with dropout's one-byte mask
 * written (forward) and read (backward) where the model has dropout. */
static void residual_op(struct emitter *e, const struct model *m, double el)
{
	struct stack_piece pc = e->stk->residual;
	if (m->dropout) {
		pc.bytes[0] += 1;
		pc.bytes[1] += 1;
	}
	workload_piece(e, m->dropout ? "dropout_residual" : "residual", "residual", &pc, el, 0);
}

/* The activation of an MLP over el output elements. */
static void act_op(struct emitter *e, const struct model *m, const char *name, double el)
{
	if (m->act == MODEL_ACT_SWIGLU)
		workload_piece(e, name, "bias_swiglu", &e->stk->swiglu, el, 0);
	else
		workload_piece(e, name, "bias_gelu", &e->stk->gelu, el, 0);
}

/* GQA's K and V (kv_el elements) written once per query head, n_rep
 * copies: forward reads kv_el and writes n_rep kv_el; backward reads the
 * n_rep gradients and writes their sum (16-bit). */
static void repeat_kv_op(struct emitter *e, double kv_el, double n_rep)
{
	struct op op = { .kind = OP_MEMBOUND, .pass = e->pass, .dtype = e->dt, .batch = 1 };
	snprintf(op.name, sizeof(op.name), "repeat_kv%s", e->pass == PASS_BWD ? ".bwd" : "");
	snprintf(op.membound_kind, sizeof(op.membound_kind), "copy_%s",
		 e->pass == PASS_BWD ? "bwd" : "fwd");
	op.m = kv_el * n_rep;
	op.bytes = kv_el * (1 + n_rep) * dtype_bytes(e->dt);
	op.kernels = 2;     /* K and V */
	op_list_push(e->out, &op);
}

/* Unfused attention's softmax over `scores` elements (rows of sq) and
 * its dropout: the stack's counts where it sets them (stack.h
 * causal_softmax, for a causal model only and up to the fused kernel's
 * longest sequence, and attn_dropout), else the
 * generic ones (softmax 2 touches; dropout a read, a write and a
 * one-byte mask). */
static void score_ops(struct emitter *e, const struct model *m, double scores, double sq)
{
	int p = e->pass == PASS_BWD;
	int max = e->stk->causal_softmax_max_seq;
	if (!model_is_bidirectional(m) && e->stk->causal_softmax.bytes[p] > 0 &&
	    (max <= 0 || sq <= max))
		workload_piece(e, "softmax", "softmax", &e->stk->causal_softmax, scores, sq);
	else
		workload_membound(e, "softmax", "softmax", scores, 2, sq);
	if (!m->dropout)
		return;
	if (e->stk->attn_dropout.bytes[p] > 0)
		workload_piece(e, "attn_dropout", "dropout", &e->stk->attn_dropout, scores, 0);
	else
		workload_membound(e, "attn_dropout", "dropout", scores, 2.5, 0);
}

/* One memory-bound kernel group of Transformer Engine's ring (cp_ring.h). */
static void cp_ring_op(struct emitter *e, const char *name, enum dtype dt, double bytes, int kernels)
{
	bool bwd = e->pass == PASS_BWD;
	struct op op = { .kind = OP_MEMBOUND, .pass = e->pass, .dtype = dt, .batch = 1,
			 .bytes = bytes, .kernels = kernels };
	snprintf(op.name, sizeof(op.name), "%s%s", name, bwd ? ".bwd" : "");
	snprintf(op.membound_kind, sizeof(op.membound_kind), "copy_%s", bwd ? "bwd" : "fwd");
	op.m = bytes / (2 * dtype_bytes(dt));  /* elements copied: each read and written */
	op_list_push(e->out, &op);
}

/* The ring's copies and accumulations of a causal core, this rank's
 * T = b s / c tokens of q and o bytes per token (all heads) and kv for
 * K and V: before the flash ops in forward (they feed the first send)
 * and after them in the list's (forward) order in backward, where they
 * run before the steps; the rest on the other side. */
static void cp_ring_ops(struct emitter *e, const struct wl_shape *s, enum dtype dt, bool before,
			double T, double q, double o, double kv)
{
	bool bwd = e->pass == PASS_BWD;
	struct cp_ring_extra x = cp_ring_extra(s->cp, bwd, T * q, T * o, T * kv);
	if (before != bwd)
		cp_ring_op(e, "cp_ring_in", dt, x.pre_B, x.pre_kernels);
	else
		cp_ring_op(e, "cp_ring_out", dt, x.post_B, x.post_kernels);
}

static void attention_core(struct emitter *e, const struct model *m,
			   const struct wl_shape *s, enum dtype core_dt)
{
	double heads = (double)m->heads / s->tp;
	double dqk = (double)model_qk_head_dim(m), dv = (double)model_v_head_dim(m);
	double b = s->micro_batch, sq = s->seq;
	int cp = s->cp > 1 ? s->cp : 1;
	struct emitter c = *e;

	c.gdt = core_dt;  /* the core is 16-bit even under fp8 */
	c.frozen = false; /* its backward GEMMs are both activation gradients */
	if (s->attention == ATTN_FLASH) {
		bool bwd = e->pass == PASS_BWD;
		double B = dtype_bytes(e->dt);
		if (cp > 1 && s->cp_a2a)
			heads /= cp;            /* Ulysses: whole sequence, heads / (t c) */
		else if (cp > 1)
			sq /= cp;               /* the ring: this rank's two chunks */
		double bh = b * heads;
		bool causal = !model_is_bidirectional(m);  /* an encoder, a ViT: both ways */
		double Bc = dtype_bytes(core_dt), kvh = (double)m->kv_heads / s->tp;
		bool te_ring = cp > 1 && !s->cp_a2a && causal && !e->stk->cp_torch_ring;
		double tq = heads * dqk * Bc, to = heads * dv * Bc, tkv = kvh * (dqk + dv) * Bc;
		if (te_ring)
			cp_ring_ops(e, s, core_dt, true, b * sq, tq, to, tkv);
		bool drop = m->dropout;  /* a fused kernel's own dropout (attention.h) */
		enum attn_backend be0 = attention_backend_dropout(s->attn_backend[0], drop);
		enum attn_backend be1 = attention_backend_dropout(s->attn_backend[1], drop);
		struct op op = { .kind = OP_ATTN, .pass = e->pass, .dtype = core_dt,
				 .batch = bh, .m = sq, .n = sq, .k = dqk, .causal = causal,
				 .backend = { be0, be1 }, .dropout = drop };
		snprintf(op.name, sizeof(op.name), "flash_attn%s%s", cp > 1 && !s->cp_a2a ? ".cp0" : "",
			 bwd ? ".bwd" : "");
		op.flops = attention_flops_qkv(ATTN_FLASH, causal, bwd, bh, sq, dqk, dv);
		if (s->sliding && causal && m->sliding_window > 0 && m->sliding_window < sq) {
			op.window = (double)m->sliding_window;
			op.flops *= attention_window_ratio(sq, op.window);
		}
		/* fwd: read Q K V, write O and the fp32 log-sum-exp; bwd: read
		 * Q K V O dO and the LSE, write dQ dK dV (Q, K of dqk, V, O of dv) */
		double qkvo = (dqk + dv) * B * (bwd ? 4 : 2);
		op.bytes = bh * sq * (qkvo + 4);
		op_list_push(e->out, &op);
		for (int k = 1; k < cp && !s->cp_a2a; k++) {
			/* a ring step: 2 bh non-causal blocks of s/2c x s/2c */
			double ch = sq / 2;
			struct op st = { .kind = OP_ATTN, .pass = e->pass, .dtype = core_dt,
					 .batch = 2 * bh, .m = ch, .n = ch, .k = dqk, .causal = false,
					 .backend = { be0, be1 }, .dropout = drop };
			snprintf(st.name, sizeof(st.name), "flash_attn.cp%d%s", k, bwd ? ".bwd" : "");
			st.flops = attention_flops_qkv(ATTN_FLASH, false, bwd, 2 * bh, ch, dqk, dv);
			st.bytes = 2 * bh * ch * (qkvo + 4);
			op_list_push(e->out, &st);
		}
		if (te_ring)
			cp_ring_ops(e, s, core_dt, false, b * sq, tq, to, tkv);
		return;
	}
	workload_gemm(&c, "attn_score", b * heads, sq, sq, dqk);
	if (m->pos == MODEL_POS_ALIBI && e->stk->alibi_bias.bytes[e->pass == PASS_BWD] > 0)
		workload_piece(e, "alibi_bias", "copy", &e->stk->alibi_bias, b * heads * sq * sq, 0);
	score_ops(e, m, b * heads * sq * sq, sq);
	workload_gemm(&c, "attn_over_v", b * heads, sq, dv, sq);
}

/* An element-wise kernel of the adapters: touches x elements x the
 * activation dtype's bytes, named as given (".bwd" added in backward). */
static void elementwise(struct emitter *e, const char *name, const char *family,
			double elements, double touches)
{
	struct op op = { .kind = OP_MEMBOUND, .pass = e->pass, .dtype = e->dt, .batch = 1 };
	bool bwd = e->pass == PASS_BWD;
	snprintf(op.name, sizeof(op.name), "%s%s", name, bwd ? ".bwd" : "");
	snprintf(op.membound_kind, sizeof(op.membound_kind), "%s_%s", family, bwd ? "bwd" : "fwd");
	op.m = elements;
	op.bytes = touches * elements * dtype_bytes(e->dt);
	op_list_push(e->out, &op);
}

/* QLoRA: bitsandbytes' dequantize_4bit of a weight of `elements` to the
 * compute dtype before its GEMM (finetune.h: bytes and kernels). */
static void dequant_op(struct emitter *e, const char *name, double elements)
{
	struct op op = { .kind = OP_MEMBOUND, .pass = e->pass, .dtype = e->dt, .batch = 1 };
	snprintf(op.name, sizeof(op.name), "%s.dequant%s", name, e->pass == PASS_BWD ? ".bwd" : "");
	snprintf(op.membound_kind, sizeof(op.membound_kind), "dequant_nf4");
	op.m = elements;
	op.bytes = elements * FT_NF4_DEQUANT_BYTES;
	op.kernels = FT_NF4_DEQUANT_KERNELS;
	op_list_push(e->out, &op);
}

/* One LoRA adapter (finetune.h) on T tokens: PEFT's dropout, x A, (x A) B,
 * the scaling and the add into the base output; in backward their
 * gradients, the input's two gradients summed, the adapters' main
 * gradients. */
static void adapter(struct emitter *e, const struct model *m, const struct wl_shape *s,
		    enum ft_target tg, double T)
{
	double din, dout, t = s->tp > 1 ? s->tp : 1, r = s->ft.rank;
	bool row, bwd = e->pass == PASS_BWD;
	char n[48], x[64];
	struct emitter a = *e;

	finetune_target_dims(m, tg, &din, &dout, &row);
	double ain = row ? din / t : din, bout = row ? dout : dout / t;
	a.frozen = false;
	a.gdt = e->dt;          /* 16-bit adapters, fp8 or not */
	snprintf(n, sizeof(n), "lora_%s", ft_target_names[tg]);
#define NAME(suffix) (snprintf(x, sizeof(x), "%s.%s", n, suffix), x)
	if (!bwd && s->ft.dropout > 0)  /* read, write, a one-byte mask */
		elementwise(&a, NAME("dropout"), "dropout", T * ain, 2.5);
	if (bwd) {
		elementwise(&a, NAME("scale"), "scale", T * bout, 2);
		workload_gemm(&a, NAME("b"), 1, T, bout, r);
		workload_gemm(&a, NAME("a"), 1, T, r, ain);
		if (s->ft.dropout > 0)  /* the gradient through the mask */
			elementwise(&a, NAME("dropout"), "dropout", T * ain, 2.5);
		elementwise(&a, NAME("grad_add"), "add", T * ain, 3);
		workload_main_grad_op(&a, s, n, r * (ain + bout));
	} else {
		workload_gemm(&a, NAME("a"), 1, T, r, ain);
		workload_gemm(&a, NAME("b"), 1, T, bout, r);
		elementwise(&a, NAME("scale"), "scale", T * bout, 2);
		elementwise(&a, NAME("add"), "add", T * bout, 3);
	}
#undef NAME
}

/* A transformer-layer linear layer named `name` (its GEMM T x n x k on
 * this rank): NF4 dequantization before the GEMM, the GEMM, and the
 * adapters of the targets on it (finetune.h's naming). */
static void linear(struct emitter *e, const struct model *m, const struct wl_shape *s,
		   const char *name, double T, double n, double k, bool cast_in, bool cast_dy)
{
	static const struct { const char *gemm; enum ft_target tg[4]; int ntg; } on[] = {
		{ "qkv", { FT_QKV, FT_Q, FT_K, FT_V }, 4 }, { "attn_out", { FT_O }, 1 },
		{ "mlp_gate_up", { FT_GATE, FT_UP }, 2 }, { "mlp_up", { FT_UP }, 1 },
		{ "mlp_down", { FT_DOWN }, 1 }, { "qkv.q", { FT_Q }, 1 },
		{ "qkv.k", { FT_K }, 1 }, { "qkv.v", { FT_V }, 1 },
		{ "mlp_gate", { FT_GATE }, 1 },
	};
	if (e->frozen && s->ft.base == FT_BASE_NF4)
		dequant_op(e, name, n * k);
	gemm_ex(e, name, 1, T, n, k, cast_in, cast_dy);
	if (m->bias && !e->frozen && e->stk->linear_bias.bytes[e->pass == PASS_BWD] > 0) {
		char bn[48];
		snprintf(bn, sizeof(bn), "%s.bias_grad", name);
		workload_piece(e, bn, "bias", &e->stk->linear_bias, T * n, 0);
	}
	for (size_t i = 0; i < sizeof(on) / sizeof(on[0]); i++) {
		if (strcmp(on[i].gemm, name) != 0)
			continue;
		for (int j = 0; j < on[i].ntg; j++)
			if (finetune_targets(&s->ft, on[i].tg[j]))
				adapter(e, m, s, on[i].tg[j], T);
	}
}

/* Backward: autograd's sums of the input gradients of the T x h
 * activation that `sums` + 1 separate Linear layers read (stack.h
 * grad_sum), one kernel each, as op `name`. */
static void grad_sum_op(struct emitter *e, const char *name, int sums, double el)
{
	struct stack_piece pc = e->stk->grad_sum;
	if (e->pass != PASS_BWD || pc.bytes[1] <= 0 || sums <= 0)
		return;
	pc.bytes[1] *= sums;
	pc.kernels[1] *= sums;
	workload_piece(e, name, "residual", &pc, el, 0);
}

/* The query, key and value projection: one GEMM ("qkv"), or one per
 * projection ("qkv.q", "qkv.k", "qkv.v") where the stack's model code has
 * three Linear layers (stack.h stack_qkv_separate); then their biases where the
 * stack adds them by kernels of their own (stack.h qkv_bias). */
static void qkv_linear(struct emitter *e, const struct model *m, const struct wl_shape *s,
		       double T, double q, double kv)
{
	double h = (double)m->hidden, t = s->tp;
	if (!stack_qkv_separate(e->stk, m)) {
		linear(e, m, s, "qkv", T, (q + 2 * kv) / t, h, false, true);
		if (e->stk->qkv_split.bytes[e->pass == PASS_BWD] > 0)
			workload_piece(e, "qkv_split", "copy", &e->stk->qkv_split, T * (q + 2 * kv) / t, 0);
	} else {
		linear(e, m, s, "qkv.q", T, q / t, h, false, true);
		linear(e, m, s, "qkv.k", T, kv / t, h, false, true);
		linear(e, m, s, "qkv.v", T, kv / t, h, false, true);
		grad_sum_op(e, "qkv_grad_sum", 2, T * h);
	}
	if (m->bias && e->stk->qkv_bias.bytes[e->pass == PASS_BWD] > 0)
		workload_piece(e, "qkv_bias", "bias", &e->stk->qkv_bias, T * (q + 2 * kv) / t, 0);
	/* QK-norm (Qwen3, Gemma 3): an RMSNorm over each head's d of q and
	 * of k, after the projection and before RoPE (transformers'
	 * modeling_qwen3.py, Qwen3Attention.forward) */
	if (m->qk_norm) {
		const char *fam = m->norm == MODEL_NORM_RMSNORM ? "rmsnorm" : "layernorm";
		workload_piece(e, "qk_norm", fam, norm_piece(e, m), T * (q + kv) / t, (double)model_head_dim(m));
	}
}

/* A dense MLP's up projection and activation on T tokens, ffn the
 * rank's inner size: SwiGLU's gate and up as one GEMM ("mlp_gate_up"),
 * or two where the stack's model code has two Linear layers (stack.h
 * mlp_separate) with autograd's sum of their input gradients; a GELU
 * MLP's "mlp_up". */
static void mlp_up_act(struct emitter *e, const struct model *m, const struct wl_shape *s,
		       double T, double ffn)
{
	double h = (double)m->hidden;
	if (m->act != MODEL_ACT_SWIGLU) {
		linear(e, m, s, "mlp_up", T, ffn, h, false, false);
		act_op(e, m, "gelu", T * ffn);
		return;
	}
	if (e->stk->mlp_separate) {
		linear(e, m, s, "mlp_gate", T, ffn, h, false, false);
		linear(e, m, s, "mlp_up", T, ffn, h, false, false);
		grad_sum_op(e, "mlp_grad_sum", 1, T * h);
	} else {
		linear(e, m, s, "mlp_gate_up", T, 2 * ffn, h, false, false);
	}
	act_op(e, m, "swiglu", T * ffn);
}

/* Multi-head latent attention's projections, forward or backward (model.h
 * struct model_mla; DeepSeek-V2 section 2.1). The down projections (W^DQ;
 * W^DKV with the shared RoPE key W^KR) are replicated over TP, as
 * Megatron-Core's MLA builds them (linear_q_down_proj and
 * linear_kv_down_proj "duplicated"), and see all T tokens; the up
 * projections are column-parallel (a / t heads), the RMSNorms of the
 * latents replicated. RoPE runs on the rope parts only: a / t query heads
 * of d_h^R and the one shared key of d_h^R; "mla_concat" writes
 * [q_nope, q_rope] and [k_nope, k_rope broadcast to every head] for the
 * kernel. Returns the rank's projection weights (for the main gradients). */
static double mla_projections(struct emitter *e, const struct model *m,
			      const struct wl_shape *s, double T)
{
	const struct model_mla *a = &m->mla;
	double t = s->tp, h = (double)m->hidden, heads = (double)m->heads / t;
	double ql = (double)a->q_lora, kl = (double)a->kv_lora, r = (double)a->rope;
	double dqk = (double)(a->nope + a->rope), w = 0;
	const struct stack_piece *np = norm_piece(e, m);
	const char *fam = m->norm == MODEL_NORM_RMSNORM ? "rmsnorm" : "layernorm";

	if (ql > 0) {
		linear(e, m, s, "q_down", T, ql, h, false, false);
		workload_piece(e, "q_norm", fam, np, T * ql, ql);
		linear(e, m, s, "q_up", T, heads * dqk, ql, false, false);
		w += h * ql + ql * heads * dqk;
	} else {
		linear(e, m, s, "q_proj", T, heads * dqk, h, false, false);
		w += h * heads * dqk;
	}
	linear(e, m, s, "kv_down", T, kl + r, h, false, false);
	workload_piece(e, "kv_norm", fam, np, T * kl, kl);
	linear(e, m, s, "kv_up", T, heads * (double)(a->nope + a->v), kl, false, false);
	w += h * (kl + r) + kl * heads * (double)(a->nope + a->v);
	workload_piece(e, "rope", "rope", &e->stk->rope, T * (heads * r + r), 0);
	/* read q and k's parts, write q and k of dqk per head */
	workload_membound(e, "mla_concat", "copy", T * heads * dqk * 2, 2, 0);
	return w;
}

void workload_moe_balance(const struct model *m, const struct wl_shape *s,
			  struct moe_balance *out)
{
	const struct moe_config *c = &m->moe;
	int ep = s->ep > 1 ? s->ep : 1;

	if (!model_is_moe(m)) {
		*out = (struct moe_balance){ 1, 1, 1, 0 };
		return;
	}
	if (s->moe_override)
		moe_balance(c, (enum moe_dist)s->moe_dist, s->moe_zipf_s, s->moe_capacity, ep, out);
	else
		moe_balance(c, c->dist, c->zipf_s, c->capacity_factor, ep, out);
}

bool workload_op_is_expert(const struct op *op)
{
	return strncmp(op->name, "expert_", 7) == 0;
}

/* An MLP of inner size f (already / t) over T tokens, named prefix_*;
 * batch > 1: a grouped GEMM of batch experts of T / batch tokens. */
static void mlp_ops(struct emitter *e, const struct model *m, const char *prefix,
		    double batch, double T, double f)
{
	char n1[32], n2[32], na[32];
	double h = (double)m->hidden, mt = T / batch;

	snprintf(n1, sizeof(n1), "%s_fc1", prefix);
	snprintf(na, sizeof(na), "%s_act", prefix);
	snprintf(n2, sizeof(n2), "%s_fc2", prefix);
	if (m->act == MODEL_ACT_SWIGLU)
		gemm_ex(e, n1, batch, mt, 2 * f, h, false, false);
	else
		gemm_ex(e, n1, batch, mt, f, h, false, false);
	act_op(e, m, na, T * f);
	workload_gemm(e, n2, batch, mt, h, f);
}

/* The MLP block of an MoE layer (workload.h). */
static void moe_block(struct emitter *e, const struct model *m, const struct wl_shape *s,
		      double T, double Tn, const char *norm)
{
	const struct moe_config *c = &m->moe;
	double t = s->tp, h = (double)m->hidden, E = (double)c->experts, k = (double)c->top_k;
	int ep = s->ep > 1 ? s->ep : 1;
	struct moe_balance bal;

	workload_moe_balance(m, s, &bal);
	/* expert tensor parallelism (Megatron-Core's alltoall dispatcher,
	 * core_v0.10.0 token_dispatcher.py L502-515): a rank's experts run on
	 * the tokens its etp group gathered, etp x (T / t) k, their FFN / etp;
	 * etp = t (the default) is T k over FFN / t as before */
	double te = s->etp > 0 ? s->etp : t;
	double local = E / ep, R = T * k * bal.rank_load;
	if (te != t)
		R = R * te / t;
	workload_norm_op(e, m, norm, Tn * h);
	workload_gemm(e, "router", 1, Tn, E, h);
	workload_membound(e, "router_topk", "softmax", Tn * E, 2, E);
	workload_membound(e, "moe_permute", "gather", Tn * k * bal.kept_fraction * h, 2, 0);
	mlp_ops(e, m, "expert", local, R, (double)c->expert_ffn / te);
	workload_membound(e, "moe_unpermute", "gather", Tn * k * bal.kept_fraction * h, 2, 0);
	if (c->shared_experts > 0)
		mlp_ops(e, m, "shared", 1, T, (double)(c->shared_experts * c->shared_ffn) / t);
	residual_op(e, m, Tn * h);
	double w = m->act == MODEL_ACT_SWIGLU ? 3 : 2;
	/* the router is replicated over TP; experts split over etp, shared
	 * experts over TP */
	double we = local * w * h * (double)c->expert_ffn, ws = w * h * (double)(c->shared_experts * c->shared_ffn);
	workload_main_grad_op(e, s, "moe", E * h + (te == t ? (we + ws) / t : we / te + ws / t));
}

/* Selective recompute's forward ops in the backward of the attention
 * block (workload.h enum rc_module): the core (core_attn); the input
 * norm (layernorm; not under post-LN, whose norm follows the residual);
 * MLA's up projections, RoPE and the concatenation that rebuild Q, K, V
 * from the saved latents (mla_up_proj; multi_latent_attention.py
 * qkv_up_proj_and_rope_apply). */
static void attn_recompute(const struct emitter *e0, const struct model *m, const struct wl_shape *s,
			   double T, double Tn, const char *norm, enum dtype head_gemm)
{
	struct emitter fw = *e0;
	unsigned mods = rc_modules(s->rc_modules);
	fw.pass = PASS_FWD;
	if (mods & RC_MOD_LAYERNORM && !model_is_encoder(m))
		workload_norm_op(&fw, m, norm, Tn * (double)m->hidden);
	if (mods & RC_MOD_MLA_UP_PROJ && model_is_mla(m)) {
		const struct model_mla *a = &m->mla;
		double heads = (double)m->heads / s->tp, r = (double)a->rope;
		double dqk = (double)(a->nope + a->rope);
		if (a->q_lora > 0)
			linear(&fw, m, s, "q_up", T, heads * dqk, (double)a->q_lora, false, false);
		linear(&fw, m, s, "kv_up", T, heads * (double)(a->nope + a->v), (double)a->kv_lora,
		       false, false);
		workload_piece(&fw, "rope", "rope", &fw.stk->rope, T * (heads * r + r), 0);
		workload_membound(&fw, "mla_concat", "copy", T * heads * dqk * 2, 2, 0);
	}
	if (mods & RC_MOD_CORE_ATTN)
		attention_core(&fw, m, s, head_gemm);
}

/* Selective recompute's forward ops in the backward of the MLP block:
 * the pre-MLP norm (layernorm) and the routed experts' activation of an
 * MoE layer (moe_act; moe/experts.py activation_checkpoint), over the
 * rank's routed copies as moe_block runs it. */
static void mlp_recompute(const struct emitter *e0, const struct model *m, const struct wl_shape *s,
			  double T, double Tn, const char *norm)
{
	struct emitter fw = *e0;
	unsigned mods = rc_modules(s->rc_modules);
	fw.pass = PASS_FWD;
	if (mods & RC_MOD_LAYERNORM && !model_is_encoder(m))
		workload_norm_op(&fw, m, norm, Tn * (double)m->hidden);
	if (mods & RC_MOD_MOE_ACT && model_is_moe(m) && !s->dense_layer) {
		struct moe_balance bal;
		workload_moe_balance(m, s, &bal);
		double R = T * (double)m->moe.top_k * bal.rank_load;
		act_op(&fw, m, "expert_act", R * (double)m->moe.expert_ffn / s->tp);
	}
}

/* A decoder's embedding: the token gather, a learned position table's
 * add where the stack runs it as a kernel of its own (stack.h pos_add)
 * and its share of FSDP1's flat gradient, and an untied table's main
 * gradient. */
static void decoder_embed(struct emitter *e, const struct model *m, const struct wl_shape *s,
			  double T)
{
	double h = (double)m->hidden;
	workload_membound(e, "embedding", "gather", T * h, 2, 0);
	if (m->pos == MODEL_POS_LEARNED) {
		if (e->stk->pos_add.bytes[e->pass == PASS_BWD] > 0)
			workload_piece(e, "pos_add", "add", &e->stk->pos_add, T * h, 0);
		workload_flat_grad_op(e, "pos_emb", (double)m->max_position * h);
	}
	/* the embedding's gradient is not a GEMM's output: a separate add
	 * into the main gradient where the stack fuses the others */
	if (!m->tied_embeddings)
		workload_main_grad_op_ex(e, s, "embedding", h * (double)m->vocab / s->tp, true);
}

/* The MTP modules' work outside their blocks (model.h), each: the rolled embeddings
 * (a copy), enorm and hnorm, their concatenation (a copy of 2h), eh_proj 2h -> h (a TE
 * linear), the final norm, the head's GEMM and cross entropy, their main gradients. */
static void mtp_head(struct emitter *e, const struct model *m, const struct wl_shape *s,
		     double T, double Tn, enum dtype gemm_dt, enum dtype head_gemm)
{
	double h = (double)m->hidden, Vt = (double)m->vocab / s->tp;
	for (long k = 0; k < m->mtp_depth; k++) {
		e->gdt = gemm_dt;
		workload_membound(e, "mtp_roll", "copy", T * h, 2, 0);
		for (int n = 0; n < 2; n++)
			workload_norm_op(e, m, n ? "mtp_hnorm" : "mtp_enorm", Tn * h);
		workload_membound(e, "mtp_concat", "copy", T * 2 * h, 2, 0);
		linear(e, m, s, "mtp_eh_proj", T, h / s->tp, 2 * h, true, true);
		workload_norm_op(e, m, "mtp_final_norm", Tn * h);
		e->gdt = head_gemm;
		workload_gemm(e, "mtp_lm_head", 1, T, Vt, h);
		workload_piece(e, "mtp_cross_entropy", "cross_entropy", &e->stk->loss, T * Vt, Vt);
		workload_main_grad_op(e, s, "mtp", 2 * h * h / s->tp + h * Vt);
	}
}

/* The embedding: a ViT's patches, an encoder's (post-LN) or a decoder's. */
static void embed_block(struct emitter *e, const struct model *m, const struct wl_shape *s,
			double T, double Tn)
{
	if (model_is_vit(m))
		workload_vit_embed(e, m, s, T);
	else if (model_is_encoder(m))
		workload_encoder_embed(e, m, s, T, Tn);
	else
		decoder_embed(e, m, s, T);
}

/* An attention block (MLA or MHA/GQA), its selective recompute ahead of the backward. */
static void attn_block(struct emitter *e, const struct model *m, const struct wl_shape *s,
		       enum recompute rc, double T, double Tn, const char *norm, enum dtype head_gemm)
{
	double t = s->tp, h = (double)m->hidden;
	double kv = model_kv_width(m), q = model_q_width(m);
	bool post = model_is_encoder(m);        /* BERT's post-LN: norm after the residual */
	if (e->pass == PASS_BWD && rc == RECOMPUTE_SELECTIVE)
		attn_recompute(e, m, s, T, Tn, norm, head_gemm);
	if (!post)
		workload_norm_op(e, m, norm, Tn * h);
	if (model_is_mla(m)) {
		double w = mla_projections(e, m, s, T);
		double o = (double)m->heads / t * (double)m->mla.v;
		attention_core(e, m, s, head_gemm);
		linear(e, m, s, "attn_out", T, h, o, true, true);
		residual_op(e, m, Tn * h);
		if (post)
			workload_norm_op(e, m, norm, Tn * h);
		workload_main_grad_op(e, s, "attn", w + o * h);
		return;
	}
	qkv_linear(e, m, s, T, q, kv);
	if (m->pos == MODEL_POS_ROPE)
		workload_piece(e, "rope", "rope", &e->stk->rope, T * (q + kv) / t, 0);
	if (e->stk->attn_copy.bytes[e->pass == PASS_BWD] > 0)
		workload_piece(e, "attn_copy", "copy", &e->stk->attn_copy, T * 2 * (q + kv) / t, 0);
	if (e->stk->repeat_kv && m->kv_heads < m->heads)
		repeat_kv_op(e, T * 2 * kv / t, (double)m->heads / (double)m->kv_heads);
	attention_core(e, m, s, head_gemm);
	linear(e, m, s, "attn_out", T, h, q / t, true, true);
	residual_op(e, m, Tn * h);
	if (post)
		workload_norm_op(e, m, norm, Tn * h);
	workload_main_grad_op(e, s, "attn", h * (q + 2 * kv) / t + q * h / t);
}

/* An MLP block (an MoE layer's experts, or a dense MLP), its selective recompute ahead. */
static void mlp_block(struct emitter *e, const struct model *m, const struct wl_shape *s,
		      enum recompute rc, double T, double Tn, const char *norm)
{
	double h = (double)m->hidden, ffn = (double)m->ffn / s->tp;
	bool post = model_is_encoder(m);
	if (e->pass == PASS_BWD && rc == RECOMPUTE_SELECTIVE)
		mlp_recompute(e, m, s, T, Tn, norm);
	if (model_is_moe(m) && !s->dense_layer) {
		moe_block(e, m, s, T, Tn, norm);
		return;
	}
	if (!post)
		workload_norm_op(e, m, norm, Tn * h);
	mlp_up_act(e, m, s, T, ffn);
	linear(e, m, s, "mlp_down", T, h, ffn, false, true);
	residual_op(e, m, Tn * h);
	if (post)
		workload_norm_op(e, m, norm, Tn * h);
	workload_main_grad_op(e, s, "mlp", (m->act == MODEL_ACT_SWIGLU ? 3 : 2) * h * ffn);
}

/* The head: a ViT's, an encoder's, or a decoder's MTP modules, final norm and LM head. */
static void head_block(struct emitter *e, const struct model *m, const struct wl_shape *s,
		       double T, double Tn, const struct precision *pr)
{
	double t = s->tp, h = (double)m->hidden;
	if (model_is_vit(m) || model_is_encoder(m)) {
		e->gdt = pr->head_gemm;
		if (model_is_vit(m))
			workload_vit_head(e, m, s, Tn);
		else
			workload_encoder_head(e, m, s);
		return;
	}
	mtp_head(e, m, s, T, Tn, pr->gemm, pr->head_gemm);   /* leaves e.gdt the head's */
	workload_norm_op(e, m, "final_norm", Tn * h);
	e->gdt = pr->head_gemm;  /* Megatron's output layer is outside TE */
	workload_gemm(e, "lm_head", 1, T, (double)m->vocab / t, h);
	workload_piece(e, "cross_entropy", "cross_entropy", &e->stk->loss,
		       T * (double)m->vocab / t, (double)m->vocab / t);
	if (e->stk->train_metrics.bytes[e->pass == PASS_BWD] > 0)
		workload_piece(e, "train_metrics", "cross_entropy", &e->stk->train_metrics,
			       T * (double)m->vocab / t, (double)m->vocab / t);
	/* tied or not, the LM head's wgrad accumulates into a main gradient
	 * (with a pipeline, the last stage's own copy of the embedding) */
	workload_main_grad_op(e, s, "lm_head", h * (double)m->vocab / t);
}

int workload_block(const struct model *m, const struct wl_shape *s,
		   enum wl_block blk, enum op_pass pass, enum recompute rc,
		   struct op_list *out)
{
	struct precision pr;
	precision_init(&pr, s->dtype, false);
	struct emitter e = { .out = out, .m = m, .stk = s->stack ? s->stack : stack_default(),
			     .pass = pass, .dt = pr.activation, .gdt = pr.gemm, .fp8 = pr.fp8,
			     .frozen = finetune_frozen(&s->ft) };
	double T = s->micro_batch * s->seq / (s->cp > 1 ? s->cp : 1);  /* this rank's tokens */
	double Tn = s->sp ? T / s->tp : T;  /* tokens seen by norms/dropout */
	const char *norm = m->norm == MODEL_NORM_RMSNORM ? "rmsnorm" : "layernorm";
	switch (blk) {
	case WL_EMBED:
		embed_block(&e, m, s, T, Tn);
		break;
	case WL_ATTN:
		attn_block(&e, m, s, rc, T, Tn, norm, pr.head_gemm);
		break;
	case WL_MLP:
		mlp_block(&e, m, s, rc, T, Tn, norm);
		break;
	case WL_HEAD:
		head_block(&e, m, s, T, Tn, &pr);
		break;
	default:
		return -1;
	}
	return 0;
}

/* FLOPs of block blk, one pass, one micro-batch; -1 on failure. */
