/* memory: per-GPU memory anatomy (see memory.h for the formulas). */
#include "memory.h"

#include <string.h>

const char *zero_stage_name(enum zero_stage z)
{
	static const char *const n[] = { "0", "1", "2", "3" };
	return n[z];
}

double memory_optimizer_bytes_per_param(enum dtype dt)
{
	struct precision p;
	precision_init(&p, dt, false);
	return p.optimizer_bytes;
}

double memory_nccl_bytes(int ncomms)
{
	return ncomms * MEMORY_NCCL_CHANNELS * 2 * MEMORY_NCCL_CONN_BYTES;
}

/* Bytes (16-bit activations) of an MLP block's stored tensors over X
 * tokens with inner size f per token copy, under t: the fc1 output
 * (2 f for SwiGLU's gate and up) and the activation output. */
static double mlp_inner(const struct model *m, double X, double f, double t)
{
	double fc1 = m->act == MODEL_ACT_SWIGLU ? 2 * f : f;
	return 2 * X * (fc1 + f) / t;
}

/* What an MoE block stores beyond the dense MLP's 19 sbh share (memory.h). */
static double moe_delta(const struct mem_rank_input *in)
{
	const struct model *m = in->model;
	const struct moe_config *c = &m->moe;
	double s = in->seq, b = in->micro_batch, h = (double)m->hidden, t = in->tp;
	double X = s * b, load = in->moe_rank_load > 0 ? in->moe_rank_load : 1;
	double sp = in->sp ? t : 1;
	/* the dense MLP's terms as the formulas above count them */
	double dense = t <= 1 ? 19 * X * h : 3 * X * h / sp + 16 * X * h / t;
	double moe = 3 * X * h / sp +                          /* input, mask */
		     2 * X * (double)c->top_k * load * h +     /* permuted copies */
		     mlp_inner(m, X * (double)c->top_k * load, (double)c->expert_ffn, t) +
		     mlp_inner(m, X, (double)(c->shared_experts * c->shared_ffn), t);
	return moe - dense;
}

/* The formulas of memory.h for a dense layer. */
static double dense_layer_activations(const struct mem_rank_input *in)
{
	const struct model *m = in->model;
	double s = in->seq, b = in->micro_batch, h = (double)m->hidden;
	double a = (double)m->heads, t = in->tp;
	double sbh = s * b * h;
	double core = 5 * a * s / h;   /* softmax input/output + dropout mask */

	/* The formulas assume 16-bit activations; fp32 doubles the tensors
	 * but not the 1-byte dropout masks: scale the whole as a bound. */
	struct precision pr;
	precision_init(&pr, in->dtype, false);
	double scale = dtype_bytes(pr.activation) / 2;
	if (in->recompute == RECOMPUTE_FULL)
		return scale * 2 * sbh / (in->sp ? t : 1);
	if (in->attention == ATTN_FLASH) /* fp32 log-sum-exp per head and token */
		return scale * (t <= 1 ? 34 * sbh : in->sp ? 34 * sbh / t : sbh * (10 + 24 / t)) +
		       4 * a * s * b / t;
	if (in->recompute == RECOMPUTE_SELECTIVE)
		core = 0;
	if (t <= 1)
		return scale * sbh * (34 + core);
	if (in->sp)
		return scale * sbh / t * (34 + core);
	return scale * sbh * (10 + 24 / t + core / t);
}

double memory_layer_activations(const struct mem_rank_input *in)
{
	double a = dense_layer_activations(in);
	if (!model_is_moe(in->model) || in->recompute == RECOMPUTE_FULL)
		return a;
	struct precision pr;
	precision_init(&pr, in->dtype, false);
	return a + dtype_bytes(pr.activation) / 2 * moe_delta(in);
}

void memory_rank(const struct mem_rank_input *in, struct mem_anatomy *o)
{
	const struct model *m = in->model;
	double t = in->tp, nd = in->dp < 1 ? 1 : in->dp;
	struct precision pr;
	precision_init(&pr, in->dtype, false);
	double wbytes = dtype_bytes(pr.weight);

	memset(o, 0, sizeof(*o));
	int ep = in->ep > 1 ? in->ep : 1;
	double ned = nd / ep < 1 ? 1 : nd / ep;   /* expert-data-parallel ranks */
	double psi_e = in->layers * model_layer_expert_params(m) / (t * ep);
	double psi = in->layers * (model_layer_params(m) - model_layer_expert_params(m)) / t;
	if (in->has_embedding)
		psi += model_embedding_params(m) / t;
	if (in->has_head)
		psi += model_head_params(m) / t;
	if (in->has_head && m->tied_embeddings && !in->has_embedding)
		psi += (double)m->vocab * (double)m->hidden / t; /* head keeps its copy */
	o->params_local = psi + psi_e;

	o->weights_bytes = wbytes * (psi / (in->zero >= ZERO_3 ? nd : 1) +
				     psi_e / (in->zero >= ZERO_3 ? ned : 1));
	double gbytes = in->grad_elem_bytes > 0 ? in->grad_elem_bytes : wbytes;
	o->grads_bytes = gbytes * (psi / (in->zero >= ZERO_2 ? nd : 1) +
				   psi_e / (in->zero >= ZERO_2 ? ned : 1));
	o->optimizer_bytes = pr.optimizer_bytes * (psi / (in->zero >= ZERO_1 ? nd : 1) +
						   psi_e / (in->zero >= ZERO_1 ? ned : 1));
	o->fp8_weight_bytes = pr.fp8_weight_copy_bytes * in->layers *
			      (model_layer_params(m) - model_layer_expert_params(m)) / t /
			      (in->zero >= ZERO_3 ? nd : 1) +
			      pr.fp8_weight_copy_bytes * psi_e / (in->zero >= ZERO_3 ? ned : 1);

	o->act_per_layer_bytes = memory_layer_activations(in);
	o->activations_bytes = o->act_per_layer_bytes * in->layers * in->inflight;
	if (in->has_head) /* fp32 logits and their gradient, vocabulary-parallel */
		o->logits_bytes = 2 * 4 * in->micro_batch * in->seq * (double)m->vocab / t;

	if (in->offload >= 1)
		o->optimizer_bytes = 0;
	if (in->offload >= 2) {
		double lw = wbytes * in->layers *
			    ((model_layer_params(m) - model_layer_expert_params(m)) / t +
			     model_layer_expert_params(m) / (t * ep));
		o->weights_bytes -= lw;
	}
	o->comm_buffer_bytes = 0;
	if (nd > 1)
		o->comm_buffer_bytes += 2 * in->bucket_bytes;
	if (in->offload >= 2)
		o->comm_buffer_bytes += wbytes * 2 * (model_layer_params(m) - model_layer_expert_params(m) +
						      model_layer_expert_params(m) / ep) / t;
	if (in->zero >= ZERO_3)
		o->comm_buffer_bytes += wbytes * (1 + in->prefetch_layers) *
					model_layer_params(m) / t;
	o->capacity_bytes = in->gpu->hbm_bytes;
	o->context_bytes = in->gpu->mem_reserved_bytes;
	int ncomms = (in->tp > 1) + (in->dp > 1) + (in->pp > 1) + (in->cp > 1) +
		     (ep > 1) + (ep > 1 && ned > 1) +
		     (in->pp > 1 && m->tied_embeddings && (in->has_embedding || in->has_head));
	o->nccl_bytes = memory_nccl_bytes(ncomms);
	o->fragmentation_bytes = in->reserve_fraction * o->capacity_bytes;
	o->reserved_bytes = o->context_bytes + o->nccl_bytes + o->fragmentation_bytes;
	o->total_bytes = o->weights_bytes + o->grads_bytes + o->optimizer_bytes +
			 o->fp8_weight_bytes + o->activations_bytes + o->logits_bytes +
			 o->comm_buffer_bytes + o->reserved_bytes;
	o->fits = o->total_bytes <= o->capacity_bytes;
}
