/* memory: per-GPU memory anatomy (see memory.h for the formulas). */
#include "memory.h"
#include "memory-private.h"

#include <math.h>
#include <string.h>

const char *zero_stage_name(enum zero_stage z)
{
	static const char *const n[] = { "0", "1", "2", "3" };
	return n[z];
}

/* p for training dtype dt with the optimizer's state as the plan keeps
 * it (memory_optimizer_bytes_per_param()). */
static void optimizer_precision(struct precision *p, enum dtype dt, bool bf16_moments,
				bool master_remainders, bool fp8_params)
{
	precision_init(p, dt, false);
	if (bf16_moments)
		precision_bf16_moments(p);
	if (master_remainders && !(p->fp8 && fp8_params)) /* NeMo stores params then */
		precision_master_remainders(p);
}

double memory_optimizer_bytes_per_param(enum dtype dt, bool bf16_moments, bool master_remainders,
					bool fp8_params)
{
	struct precision p;
	optimizer_precision(&p, dt, bf16_moments, master_remainders, fp8_params);
	return p.optimizer_bytes;
}

double memory_nccl_bytes(int ncomms)
{
	return ncomms * MEMORY_NCCL_CHANNELS * 2 * MEMORY_NCCL_CONN_BYTES;
}

/* A layer's stored tensors per token, in bytes, by how tensor and
 * sequence parallelism divide them (memory.h, "Activations"):
 * rep: replicated over TP unless SP shards the sequence (norm inputs,
 * the GEMM inputs that are the norm outputs, dropout masks); tp: split
 * over TP heads or the MLP's inner dimension; core: the unfused
 * attention's s x s tensors (split over TP heads); whole: never split
 * (an MoE block's permuted token copies). */
struct act_terms {
	double rep, tp, core, whole;
};

/* Bytes per element: stored activations, saved GEMM inputs (fp8 under
 * Transformer Engine), dropout masks (1). */
struct act_bytes {
	double act, gemm_in;
	double wgrad_in;        /* a GEMM input kept only for its weight gradient:
				   gemm_in, or 0 when the weights are frozen */
};

/* Whether the experts' tensor parallelism is not the layers' (memory.h
 * etp; 0 means tp). */
static bool etp_apart(const struct mem_rank_input *in)
{
	return in->etp > 0 && in->etp != in->tp;
}

/* An MLP's inner tensors over `copies` token copies with inner size f:
 * the fc1 output (gate and up for SwiGLU: 2 f), kept in the activation
 * dtype for the activation's backward, and the activation output, saved
 * as fc2's GEMM input; an eager SwiGLU also keeps silu(gate), the
 * product's operand (memory.h, "Eager stacks"). */
static double mlp_inner(const struct mem_rank_input *in, const struct act_bytes *by,
			double copies, double f)
{
	bool gated = in->model->act == MODEL_ACT_SWIGLU;
	double fc1 = gated ? 2 * f : f, eager = gated && in->eager_swiglu ? f : 0;
	return copies * (by->act * (fc1 + eager) + by->wgrad_in * f);
}

/* Whether selective recompute runs Megatron's module bit (memory.h,
 * "Megatron-Core's recompute modules"). */
static bool rc_has(const struct mem_rank_input *in, unsigned bit)
{
	return in->recompute == RECOMPUTE_SELECTIVE && (rc_modules(in->recompute_modules) & bit);
}

/* MLA's attention terms (memory.h, "Multi-head latent attention"). */
static void mla_terms(const struct mem_rank_input *in, const struct act_bytes *by,
		      struct act_terms *t)
{
	const struct model *m = in->model;
	const struct model_mla *ml = &m->mla;
	double h = (double)m->hidden, a = (double)m->heads, s = in->seq;
	double dqk = (double)(ml->nope + ml->rope), dv = (double)ml->v;
	double mask = m->dropout ? 1 : 0;
	double ln = rc_has(in, RC_MOD_LAYERNORM) ? 0 : 1;  /* the norm's output kept */

	t->rep += by->act * h + ln * by->wgrad_in * h + mask * h;
	t->whole += (by->act + by->wgrad_in) * (double)(ml->q_lora + ml->kv_lora);
	if (!rc_has(in, RC_MOD_MLA_UP_PROJ))
		t->tp += by->act * a * (2 * dqk + dv);  /* Q, K, V */
	if (in->attention == ATTN_FLASH) {
		t->tp += by->act * a * dv + (by->gemm_in < by->act ? by->wgrad_in * a * dv : 0);
		t->tp += 4 * a;
	} else {
		t->tp += by->wgrad_in * a * dv;
		if (!rc_has(in, RC_MOD_CORE_ATTN))
			t->core += a * s * (by->act + mask * (1 + by->act));
	}
}

/* An eager RMSNorm's saved bytes beyond a fused norm's, per element. */
static double norm_extra(const struct mem_rank_input *in)
{
	return in->model->norm == MODEL_NORM_RMSNORM ? in->rmsnorm_extra_Bpe : 0;
}

static void attention_terms(const struct mem_rank_input *in, const struct act_bytes *by,
			    struct act_terms *t)
{
	const struct model *m = in->model;
	if (model_is_mla(m)) {
		mla_terms(in, by, t);
		return;
	}
	double h = (double)m->hidden, a = (double)m->heads, s = in->seq;
	double q = model_q_width(m), kv = model_kv_width(m);  /* h, h kv/a without head_dim */
	double mask = m->dropout ? 1 : 0;
	double ln = rc_has(in, RC_MOD_LAYERNORM) ? 0 : 1;  /* the norm's output kept */

	t->rep += by->act * h +            /* norm input */
		  ln * by->wgrad_in * h +  /* QKV GEMM input (the norm's output) */
		  mask * h;                /* dropout mask after the projection */
	t->rep += ln * norm_extra(in) * h; /* an eager norm's own tensors */
	/* Q, K, V (K and V per query head when expanded by repeat_kv) */
	t->tp += by->act * (q + 2 * (in->repeat_kv ? q : kv));
	/* QK-norm keeps its inputs, q and k before the norm, for its backward
	 * (the normed ones are the attention's own) */
	if (m->qk_norm)
		t->tp += by->act * (q + kv);
	if (in->attention == ATTN_FLASH) {
		/* the kernel keeps its output for the backward; the
		 * projection saves its own copy when it is narrower (fp8) */
		t->tp += by->act * q + (by->gemm_in < by->act ? by->wgrad_in * q : 0);
		t->tp += 4 * a;            /* fp32 log-sum-exp per head */
	} else {
		t->tp += by->wgrad_in * q; /* projection input (the context) */
		if (!rc_has(in, RC_MOD_CORE_ATTN)) /* softmax output, mask, dropout output */
			t->core += a * s * (by->act + mask * (1 + by->act));
	}
}

/* The MLP's terms; dense: the dense MLP of ffn_size (a dense model, or
 * an MoE model's first dense layers). */
static void mlp_terms(const struct mem_rank_input *in, const struct act_bytes *by, bool dense,
		      struct act_terms *t)
{
	const struct model *m = in->model;
	double h = (double)m->hidden, mask = m->dropout ? 1 : 0;
	double ln = rc_has(in, RC_MOD_LAYERNORM) ? 0 : 1;  /* the norm's output kept */

	t->rep += by->act * h + mask * h;  /* norm input, dropout mask */
	t->rep += ln * norm_extra(in) * h;
	if (dense || !model_is_moe(m)) {
		t->rep += ln * by->wgrad_in * h; /* fc1 input (the norm's output) */
		t->tp += mlp_inner(in, by, 1, (double)m->ffn);
		return;
	}
	const struct moe_config *c = &m->moe;
	double load = in->moe_rank_load > 0 ? in->moe_rank_load : 1;
	double routed = (double)c->top_k * load, f = (double)c->expert_ffn;
	t->rep += ln * by->act * h;         /* router input (the norm's output) */
	/* etp 1: the rank's own routed copies, not the etp group's gathered ones */
	if (etp_apart(in))
		t->tp += by->gemm_in * h * routed;
	else
		t->whole += by->gemm_in * h * routed; /* permuted copies */
	t->tp += mlp_inner(in, by, routed, f) +
		 mlp_inner(in, by, 1, (double)(c->shared_experts * c->shared_ffn));
	if (in->fp8_moe_act_cache && by->gemm_in < by->act) /* fc1 outputs in fp8 */
		t->tp -= routed * (by->act - 1) * (m->act == MODEL_ACT_SWIGLU ? 2 : 1) * f;
	if (rc_has(in, RC_MOD_MOE_ACT))     /* the activation's output, fc2's input */
		t->tp -= routed * by->wgrad_in * f;
}

/* A layer's LoRA adapters' stored tensors (memory.h, "Fine-tuning"):
 * per target x A, and its input for A's weight gradient: the dropped
 * input and its mask per adapter, or without dropout the base layer's
 * input, once for the adapters that share it. */
static void adapter_terms(const struct mem_rank_input *in, const struct act_bytes *by,
			  struct act_terms *t)
{
	static const unsigned share[] = {
		(1u << FT_Q) | (1u << FT_K) | (1u << FT_V) | (1u << FT_QKV),
		1u << FT_O, (1u << FT_GATE) | (1u << FT_UP), 1u << FT_DOWN,
	};
	const struct model *m = in->model;
	for (size_t g = 0; g < sizeof(share) / sizeof(share[0]); g++) {
		int n = 0;
		double din = 0, dout;
		bool row = false;
		for (int k = 0; k < FT_TARGET_N; k++) {
			if (!(share[g] & (1u << k)) || !finetune_targets(&in->ft, (enum ft_target)k))
				continue;
			finetune_target_dims(m, (enum ft_target)k, &din, &dout, &row);
			t->whole += by->act * in->ft.rank;      /* x A, B's input */
			n++;
		}
		/* the input: split over TP on a row-parallel layer, else as
		 * the norm output it is (replicated unless SP) */
		double x = in->ft.dropout > 0 ? n * (by->act + 1) * din : (n ? by->act * din : 0);
		if (row)
			t->tp += x;
		else
			t->rep += x;
	}
}

/* torchtitan's per-op selective policy (memory.h): the layer's input,
 * the outputs of its odd-numbered GEMMs in the forward order of
 * torchtitan's Llama code (wq, wk, wv, wo, then w1, w3, w2 or fc1, fc2),
 * the flash kernel's output and log-sum-exp. */
static void sac_op_terms(const struct mem_rank_input *in, const struct act_bytes *by, struct act_terms *t)
{
	const struct model *m = in->model;
	double h = (double)m->hidden, a = (double)m->heads, kv = model_kv_width(m);
	double f = (double)m->ffn, q = model_q_width(m);
	bool gated = m->act == MODEL_ACT_SWIGLU;
	/* output widths and whether the layer is row-parallel (its output the
	 * whole h, a partial sum before the reduction) */
	const struct { double w; bool row; } g[] = {
		{ q, false }, { kv, false }, { kv, false }, { h, true },
		{ f, false }, { gated ? f : h, !gated }, { h, true },
	};
	int n = gated ? 7 : 6;
	t->rep += by->act * h;
	for (int i = 0; i < n; i += 2) {
		if (g[i].row)
			t->whole += by->act * g[i].w;
		else
			t->tp += by->act * g[i].w;
	}
	t->tp += by->act * q + 4 * a;
}

/* One layer's activations, an MoE layer or (dense) a dense one. */
static double layer_activations(const struct mem_rank_input *in, bool dense)
{
	const struct model *m = in->model;
	struct precision pr;
	precision_init(&pr, in->dtype, false);
	struct act_bytes by = { dtype_bytes(pr.activation), dtype_bytes(pr.saved_gemm_input),
				dtype_bytes(pr.saved_gemm_input) };
	if (in->torchao_fp8 && pr.fp8) /* torchao's Float8Linear saves its input in 16 bits */
		by.gemm_in = by.wgrad_in = by.act;
	if (finetune_frozen(&in->ft))
		by.wgrad_in = 0;
	double tokens = in->seq * in->micro_batch, t = in->tp < 1 ? 1 : in->tp;
	double sp = in->sp ? t : 1;

	if (in->recompute == RECOMPUTE_FULL) /* the layer's input only */
		return tokens * by.act * (double)m->hidden / sp;
	struct act_terms a = { 0 };
	if (in->recompute == RECOMPUTE_SELECTIVE_OP) {
		sac_op_terms(in, &by, &a);
		return tokens * (a.rep / sp + a.tp / t + a.whole);
	}
	attention_terms(in, &by, &a);
	mlp_terms(in, &by, dense, &a);
	adapter_terms(in, &by, &a);
	return tokens * (a.rep / sp + a.tp / t + a.core / t + a.whole);
}

double memory_layer_activations(const struct mem_rank_input *in)
{
	return layer_activations(in, false);
}

double memory_dense_layer_activations(const struct mem_rank_input *in)
{
	return layer_activations(in, true);
}

/* The recomputed layer's tensors (memory.h): its set without recompute
 * less what its checkpoint keeps, the larger of the rank's two kinds of
 * layer that has a checkpointed one; with context parallelism the
 * gathered keys and values. */
static double recompute_transient(const struct mem_rank_input *in, bool moe, bool dense)
{
	if (in->recompute == RECOMPUTE_NONE || (!moe && !dense))
		return 0;
	struct mem_rank_input none = *in;
	none.recompute = RECOMPUTE_NONE;
	double r = 0;
	for (int k = 0; k < 2; k++)
		if (k ? dense : moe)
			r = fmax(r, layer_activations(&none, k) - layer_activations(in, k));
	if (in->cp > 1) {
		const struct model *m = in->model;
		struct precision pr;
		precision_init(&pr, in->dtype, false);
		/* K and V as the kernel gets them: per query head after repeat_kv */
		double kv = in->repeat_kv ? model_q_width(m) : model_kv_width(m);
		double t = in->tp < 1 ? 1 : in->tp;
		r += in->micro_batch * in->seq * (in->cp - 1) * 2 * kv * dtype_bytes(pr.activation) / t;
		/* torch's ring's buffers beyond it (memory.h: 18 T) */
		if (in->cp_torch_ring)
			r += 18 * in->micro_batch * in->seq * (double)m->hidden / t * dtype_bytes(pr.activation);
	}
	return r;
}

/* The rank's layers by kind (memory.h, "Mixture of experts"): MoE layers
 * and dense ones (a dense model's, an MoE model's first_dense_layers). */
static void rank_layers(const struct mem_rank_input *in, double *moe, double *dense)
{
	*moe = model_is_moe(in->model) ? in->layers - in->dense_layers : 0;
	*dense = in->layers - *moe;
}

/* Of the rank's layers by kind, those saved as in->recompute says: all,
 * or under full recompute of every n-th layer (memory.h, "torchtitan's
 * selective layer policy") floor(L / n), floor(dense / n) of them dense
 * (the dense layers come first). */
static void checkpointed_layers(const struct mem_rank_input *in, double lm, double ld, double *cm,
				double *cd)
{
	int n = in->recompute == RECOMPUTE_FULL && in->recompute_every > 1 ? in->recompute_every : 1;
	*cm = lm, *cd = ld;
	if (n == 1)
		return;
	*cd = floor(ld / n);
	*cm = floor((lm + ld) / n) - *cd;
}

/* The activations of n layers of a kind (dense or not), c of them
 * checkpointed as in->recompute says, the others without recompute. */
static double kind_activations(const struct mem_rank_input *in, double n, double c, bool dense)
{
	if (n <= 0)
		return 0;
	struct mem_rank_input none = *in;
	none.recompute = RECOMPUTE_NONE;
	return c * layer_activations(in, dense) + (n - c) * layer_activations(&none, dense);
}

/* Parameters of the largest layer the rank holds, its TP shard (experts
 * whole: what ZeRO-3 gathers) or with the experts / ep (offloaded
 * parameters' buffers; / (etp ep) where etp is not tp). */
static double largest_layer(const struct mem_rank_input *in, bool experts_over_ep)
{
	const struct model *m = in->model;
	double lm, ld, le = model_layer_expert_params(m), ep = in->ep > 1 ? in->ep : 1;
	rank_layers(in, &lm, &ld);
	double moe = lm > 0 ? model_layer_params(m) - le + le / (experts_over_ep ? ep : 1) : 0;
	double dense = ld > 0 ? model_dense_layer_params(m) : 0;
	if (experts_over_ep && lm > 0 && etp_apart(in)) {
		/* etp 1: the rank's experts whole, le / (etp ep), the rest / tp */
		double r = (model_layer_params(m) - le) / in->tp + le / (in->etp * ep);
		return r > dense / in->tp ? r : dense / in->tp;
	}
	return (moe > dense ? moe : dense) / in->tp;
}

/* The ranks ZeRO shards over: the shard group (hybrid sharding, ZeRO's
 * states divide by it, not by the whole data-parallel group), else dp. */
static double shard_ranks(const struct mem_rank_input *in)
{
	double nd = in->dp < 1 ? 1 : in->dp;
	return in->shard >= 1 && in->shard < nd ? in->shard : nd;
}

/* Frozen base weights (memory.h, "Fine-tuning"): model states of the
 * adapters only, the layers' linear weights in their storage dtype. */
static void frozen_states(const struct mem_rank_input *in, double wbytes, double opt_bytes,
			  struct mem_anatomy *o)
{
	double t = in->tp, nd = shard_ranks(in);
	double ad = in->layers * finetune_layer_adapter_params(in->model, &in->ft, in->tp);
	double lin = in->layers * finetune_layer_linear_params(in->model) / t;
	double sb = finetune_base_stored_bytes(&in->ft);
	double gbytes = in->grad_elem_bytes > 0 ? in->grad_elem_bytes : wbytes;
	double z3 = in->zero >= ZERO_3 ? nd : 1;

	if (sb > 0)
		o->weights_bytes += (sb - wbytes) * lin / z3;
	o->weights_bytes += wbytes * ad / z3;
	o->grads_bytes = gbytes * ad / (in->zero >= ZERO_2 ? nd : 1);
	o->optimizer_bytes = opt_bytes * ad / (in->zero >= ZERO_1 ? nd : 1);
	o->params_local += ad;
	o->trained_params = ad;
}

/* How ZeRO shards a rank's states: over the nd data-parallel ranks, the
 * experts over the ned expert-data-parallel ones. */
struct shard {
	enum zero_stage zero;
	double nd, ned;
};

/* This rank's share of psi dense and psi_e expert elements, sharded when
 * the ZeRO stage is `from` or higher. */
static double sharded(const struct shard *sh, enum zero_stage from, double psi, double psi_e)
{
	return psi / (sh->zero >= from ? sh->nd : 1) + psi_e / (sh->zero >= from ? sh->ned : 1);
}

/* The expert-data-parallel ranks of nd data-parallel ones: nd / ep, x tp
 * / etp where the experts are split over fewer ranks than tp (memory.h
 * etp; Megatron-Core parallel_state.py expert_data_parallel_size). */
static double etp_ned(const struct mem_rank_input *in, double nd)
{
	int ep = in->ep > 1 ? in->ep : 1;
	double ned = nd / ep < 1 ? 1 : nd / ep;
	if (etp_apart(in))
		ned = nd * (in->tp / in->etp) / ep;
	return ned;
}

/* A rank's parameter elements: psi dense (embedding and head included),
 * psi_l the layers' share of them, psi_e its experts'. */
struct rank_params {
	double psi, psi_l, psi_e;
};

/* The rank's parameters: its layers' (TP-sharded; MoE layers less their experts, dense
 * layers whole), its experts', the embedding and head where its stage holds them. */
static struct rank_params rank_params(const struct mem_rank_input *in, double t, double te, int ep)
{
	const struct model *m = in->model;
	struct rank_params rp;
	double lm, ld, le = model_layer_expert_params(m);
	rank_layers(in, &lm, &ld);
	rp.psi_e = lm * le / (te * ep);         /* this rank's experts */
	rp.psi_l = (lm * (model_layer_params(m) - le) + ld * model_dense_layer_params(m)) / t;
	rp.psi = rp.psi_l;
	if (in->has_embedding)
		rp.psi += model_embedding_params(m) / t;
	if (in->has_head)   /* the head, and the MTP modules' projections and norms */
		rp.psi += (model_head_params(m) + model_mtp_extra_params(m)) / t;
	if (in->has_head && m->tied_embeddings && !in->has_embedding)
		rp.psi += (double)m->vocab * (double)m->hidden / t; /* head keeps its copy */
	return rp;
}

/* FSDP2's weights and gradients (not fine-tuning frozen weights) over those of ZeRO. */
static void fsdp2_states(const struct mem_rank_input *in, const struct precision *pr,
			 const struct shard *sh, const struct rank_params *rp, double wbytes,
			 double gbytes, struct mem_anatomy *o)
{
	/* the fp32 shards are the master; the root's parameters (at
	 * ZeRO-2 the layers' too) stay unsharded in 16 bits (the layers
	 * in fp8 with fp8 all-gather) */
	o->weights_bytes = wbytes * (rp->psi - rp->psi_l);
	if (in->zero < ZERO_3)
		o->weights_bytes += (pr->fp8 && in->fp8_params ? 1 : wbytes) * (rp->psi_l + rp->psi_e);
	/* fp32 training: the shards are the weights themselves (K = 8
	 * holds no master) */
	if (pr->weight == DTYPE_FP32)
		o->weights_bytes += 4 * sharded(sh, ZERO_3, rp->psi, rp->psi_e);
	/* the sharded gradients are freed by zero_grad before the
	 * forward; a pipeline's accumulation lives: unsharded, in the
	 * reduce dtype */
	o->grads_bytes = in->zero < ZERO_3 && in->pp > 1 && in->microbatches > 1 ?
			 gbytes * (rp->psi + rp->psi_e) : 0;
}

/* Model states (memory.h): the rank's parameters, weights, gradients,
 * optimizer state and fp8 copies, frozen weights, offload. */
static void model_states(const struct mem_rank_input *in, const struct precision *pr,
			 struct mem_anatomy *o)
{
	double t = in->tp, nd = shard_ranks(in), wbytes = dtype_bytes(pr->weight);
	int ep = in->ep > 1 ? in->ep : 1;
	double te = in->etp > 0 ? in->etp : t, ned = etp_ned(in, nd);
	struct shard sh = { in->zero, nd, ned };
	struct rank_params rp = rank_params(in, t, te, ep);
	double psi = rp.psi, psi_l = rp.psi_l, psi_e = rp.psi_e;
	o->params_local = psi + psi_e;

	double gbytes = in->grad_elem_bytes > 0 ? in->grad_elem_bytes : wbytes;
	o->weights_bytes = wbytes * sharded(&sh, ZERO_3, psi, psi_e);
	o->grads_bytes = gbytes * sharded(&sh, ZERO_2, psi, psi_e);
	o->optimizer_bytes = pr->optimizer_bytes * sharded(&sh, ZERO_1, psi, psi_e);
	o->fp8_weight_bytes = pr->fp8_weight_copy_bytes * psi_l / (in->zero >= ZERO_3 ? nd : 1) +
			      pr->fp8_weight_copy_bytes * psi_e / (in->zero >= ZERO_3 ? sh.ned : 1);
	o->trained_params = o->params_local;
	if (finetune_frozen(&in->ft))
		frozen_states(in, wbytes, pr->optimizer_bytes, o);
	if (in->offload >= 1)
		o->optimizer_bytes = 0;
	if (in->fsdp2 && !finetune_frozen(&in->ft))
		fsdp2_states(in, pr, &sh, &rp, wbytes, gbytes, o);
	if (in->torchao_fp8)
		o->fp8_weight_bytes = 0;
	else if (in->offload >= 2)
		o->weights_bytes -= wbytes * (psi_l + psi_e);
	else if (pr->fp8 && in->fp8_params) /* the fp8 copies are the weights */
		o->weights_bytes -= wbytes * sharded(&sh, ZERO_3, psi_l, psi_e);
}

/* Buffers and what the device keeps back: gradient buckets, ZeRO-3's
 * gathered layers, offload's layer buffers, the CUDA context, NCCL, the
 * allocator's reserve.
 *
 * Apex's DistributedFusedAdam with contiguous_grad_buffer and
 * contiguous_param_buffer (apex_contiguous) holds no bucket buffers
 * [source]: NVIDIA/apex 810ffae3 (the APEX_TAG of NeMo r2.0.0rc1's
 * Dockerfile.ci L38, NeMo 24.07), apex/contrib/optimizers/
 * distributed_fused_adam.py. _init_grad_buffer (L1075-1096) allocates one
 * buffer for every bucket in grad_sync_dtype; zero_grad (L1461-1480) makes
 * each bucket's grads_bucket a slice of it and each parameter's .grad a
 * view of it: the buckets are the gradients (grads_bytes). step
 * (L2283-2296) makes each bucket's params_bucket a slice of the parameter
 * buffer that init_param_buffer (L998-1072) made the parameters
 * themselves, so _start_bucket_param_sync (L1936-1990) all-gathers into
 * the weights. The one allocation beside: _start_bucket_grad_sync
 * (L1780-1830) reduce-scatters each bucket into a new shard of bucket / dp
 * elements, kept as grads_shard until zero_grad (grads / dp in all). It is
 * not counted at this peak: a chunk's reduction starts only after the
 * backward of its last micro-batch (Megatron-Core 338af51, NeMo r2.0.0rc1's
 * MCORE_TAG, pipeline_parallel/schedules.py L750-758 grad_sync_func; NeMo's
 * no_sync before it), in the schedule's cool-down, once the activations of
 * the backwards before it are freed. */
static void reserved(const struct mem_rank_input *in, double wbytes, struct mem_anatomy *o)
{
	const struct model *m = in->model;
	double nd = in->dp < 1 ? 1 : in->dp;
	int ep = in->ep > 1 ? in->ep : 1;
	double ned = etp_ned(in, nd);
	double gbytes = in->grad_elem_bytes > 0 ? in->grad_elem_bytes : wbytes;

	o->comm_buffer_bytes = 0;
	if (in->ds_zero3_2021)   /* per Linear (memory_ds2021.c) */
		o->comm_buffer_bytes += memory_ds2021_buffers(in, wbytes, gbytes);
	else if (nd > 1 && !in->fsdp2 && !in->apex_contiguous)
		o->comm_buffer_bytes += 2 * in->bucket_bytes;
	if (in->offload >= 2)
		o->comm_buffer_bytes += wbytes * 2 * largest_layer(in, true);
	if (in->zero >= ZERO_3 && !in->fsdp2 && !in->ds_zero3_2021)
		o->comm_buffer_bytes += wbytes * (1 + in->prefetch_layers) * largest_layer(in, false);
	o->capacity_bytes = in->gpu->hbm_bytes;
	o->context_bytes = in->gpu->mem_reserved_bytes;
	int ncomms = (in->tp > 1) + (in->dp > 1) + (in->pp > 1) + (in->cp > 1) +
		     (ep > 1) + ((ep > 1 || etp_apart(in)) && ned > 1) +
		     (in->pp > 1 && m->tied_embeddings && (in->has_embedding || in->has_head)) +
		     (shard_ranks(in) > 1 && shard_ranks(in) < nd); /* shard and replicate groups */
	o->nccl_bytes = memory_nccl_bytes(ncomms);
	o->fragmentation_bytes = in->reserve_fraction * o->capacity_bytes;
	o->reserved_bytes = o->context_bytes + o->nccl_bytes + o->fragmentation_bytes;
}

/* FSDP2's buffers in the loss's phase and in a layer's backward
 * (memory.h, "FSDP2"). */
static void fsdp2_buffers(const struct mem_rank_input *in, const struct precision *pr, double *at_loss,
			  double *in_bwd)
{
	double pb = largest_layer(in, false), wb = dtype_bytes(pr->weight);
	double u = in->zero >= ZERO_3 ? (pr->fp8 && in->fp8_params ? 1 : wb) : 0;  /* ZeRO-2: no gathers */
	double r = in->grad_elem_bytes > 0 ? in->grad_elem_bytes : wb;
	*at_loss = 3 * u * pb;
	*in_bwd = 3 * u * pb + wb * pb + 2 * r * pb;
}

/* The MTP modules' tensors outside their blocks (memory.h, "Multi-token
 * prediction"), one micro-batch as the head's. */
static double mtp_activations(const struct mem_rank_input *in, const struct precision *pr)
{
	const struct model *m = in->model;
	double a = dtype_bytes(pr->activation), g = dtype_bytes(pr->saved_gemm_input);
	double sp = in->sp && in->tp > 1 ? in->tp : 1, h = (double)m->hidden;
	double norms = 3 * (a + norm_extra(in)) / sp;   /* enorm, hnorm, final norm inputs */
	return (double)m->mtp_depth * in->micro_batch * in->seq * h * (norms + g * 2 / sp + a);
}

void memory_rank(const struct mem_rank_input *in, struct mem_anatomy *o)
{
	const struct model *m = in->model;
	struct precision pr;
	optimizer_precision(&pr, in->dtype, in->bf16_moments, in->master_remainders, in->fp8_params);
	double lm, ld, cm, cd;

	memset(o, 0, sizeof(*o));
	model_states(in, &pr, o);
	rank_layers(in, &lm, &ld);
	checkpointed_layers(in, lm, ld, &cm, &cd);
	double acts = kind_activations(in, lm, cm, false) + kind_activations(in, ld, cd, true);
	o->act_per_layer_bytes = in->layers > 0 ? acts / in->layers : memory_layer_activations(in);
	o->activations_bytes = acts * in->inflight;
	if (in->has_head && !model_is_vit(m) && m->arch == MODEL_ARCH_DECODER) {
		/* the head's input and the final norm's tensors, one micro-batch */
		double a = dtype_bytes(pr.activation), sp = in->sp && in->tp > 1 ? in->tp : 1;
		o->activations_bytes += in->micro_batch * in->seq * (double)m->hidden *
					(a + (a + norm_extra(in)) / sp);
		o->activations_bytes += mtp_activations(in, &pr);
	}
	if (in->has_head) /* the loss's peak per logit, vocabulary-parallel (an
			   * encoder's MLM head: its masked positions only); the
			   * stacks' losses were read for decoders' LM heads */
		o->logits_bytes = ((in->loss_Bpl > 0 && m->arch == MODEL_ARCH_DECODER ? in->loss_Bpl : 8) +
				   4 * (double)m->mtp_depth) *
				  in->micro_batch *
				  model_logits_per_sample(m, in->seq) / (model_is_vit(m) ? 1 : in->tp);
	if (in->layers > 0)
		o->recompute_bytes = recompute_transient(in, cm > 0, cd > 0);
	reserved(in, dtype_bytes(pr.weight), o);
	double buf_loss = 0, buf_bwd = 0;
	if (in->fsdp2)
		fsdp2_buffers(in, &pr, &buf_loss, &buf_bwd);
	o->peak_at_loss = o->logits_bytes + buf_loss >= o->recompute_bytes + buf_bwd;
	o->comm_buffer_bytes += o->peak_at_loss ? buf_loss : buf_bwd;
	o->total_bytes = o->weights_bytes + o->grads_bytes + o->optimizer_bytes + o->fp8_weight_bytes +
			 o->activations_bytes + o->comm_buffer_bytes + o->reserved_bytes +
			 (o->peak_at_loss ? o->logits_bytes : o->recompute_bytes);
	o->allocator_bytes = o->total_bytes - o->reserved_bytes;
	struct mem_replay rp;
	if ((in->expandable_segments || in->native_allocator) && memory_replay(in, o, &rp) &&
	    rp.reserved_peak > o->allocator_bytes) {
		double replayed = rp.reserved_peak;
		/* the caching the replay finds stands for the reserve where larger */
		o->caching_bytes = replayed - o->allocator_bytes;
		double more = fmax(0, o->caching_bytes - o->fragmentation_bytes);
		o->fragmentation_bytes += more;
		o->reserved_bytes += more;
		o->total_bytes += more;
		o->allocator_bytes = replayed;
	}
	o->fits = o->total_bytes <= o->capacity_bytes;
}
