/* memory_replay: the allocations of FSDP2 training steps as torchtitan
 * runs them, replayed through PyTorch's caching allocator (ptalloc.h),
 * for what the allocator reserves (memory.h, "What PyTorch's caching
 * allocator reports").
 *
 * One rank, a dense decoder, in the order torchtitan 9dec370's train.py
 * runs a step (L266-323; under a pipeline, step_pipeline() below):
 * zero_grad, forward, loss, del pred, backward, clip_grad_norm_ (foreach,
 * its per-tensor norms: small), optimizer.step; three steps, the first
 * creating AdamW's state lazily (torch.optim.AdamW _init_group:
 * exp_avg and exp_avg_sq = zeros_like(param), one parameter after
 * another), each step's foreach AdamW holding torch._foreach_sqrt's
 * fp32 copy of every exp_avg_sq at once (torch/optim/adamw.py
 * _multi_tensor_adamw: exp_avg_sq_sqrt; torchtitan optimizer.py L129-139:
 * foreach = not fused, fused off by default).
 *
 * Streams (torch/distributed/_composable/fsdp, torch 2.5/2.6): the
 * compute stream holds the sharded fp32 parameters, the unsharded
 * 16-bit ones after the all-gather's copy-out, activations, the loss,
 * the unsharded gradients and the reduce-scatter input; the all-gather
 * stream the all-gather output (freed when the next all-gather is
 * issued, so two at most); the reduce-scatter stream the reduce-scatter
 * output, whose views are the sharded gradients (freed by the next
 * zero_grad: back to that stream's pool, which the compute stream
 * cannot reuse). The root module (embedding, final norm, output) is
 * gathered once and not resharded after the forward; its gradients are
 * reduced after the embedding's, last. Under sequence parallelism each
 * layer gathers its input whole before its GEMMs (DTensor's
 * redistribute, async TP's fused all-gather-matmul alike: a compute-
 * stream tensor of the whole sequence; its symmetric-memory workspace is
 * outside the caching allocator).
 *
 * Granularity: a layer's saved activations, its recomputed tensors, its
 * gathered weights and gradients are one block each; the optimizer's
 * tensors are per parameter (a Llama layer's wq, wk, wv, wo, w1, w2,
 * w3); the loss tensor by tensor (torch's cross_entropy and
 * loss_parallel below), any other loss one block of its bytes per logit. Norms' weights and other
 * tensors under 1 MiB (the small pool) are left out. */
#include "memory.h"
#include "memory-private.h"
#include "ptalloc.h"

#include <math.h>
#include <stdlib.h>

enum { S_COMPUTE, S_ALLGATHER, S_REDUCE };

#define REPLAY_STEPS 3
#define MAX_LAYER_TENSORS 7

struct replay {
	struct ptalloc *a;
	const struct mem_rank_input *in;
	const struct mem_anatomy *o;
	int layers;
	int every;                    /* every n-th layer checkpointed (memory.h); 1: all */
	double act_ckpt, act_plain;   /* a checkpointed layer's saved bytes, another's */
	double n_shard;               /* FSDP shard degree */
	double u, wb, r;              /* a layer's gathered, gradient, reduced bytes per
					 element (the root gathers in wb: gather()) */
	double w[MAX_LAYER_TENSORS];  /* a layer's weight tensors (TP shard), elements */
	int nw;
	double layer_params, emb_params, head_params, root_params;
	double head_act, logits;      /* the head's saved bytes, logits (this rank's) */
	int *grad;                    /* reduce-scatter outputs, per layer and root */
	int ag_held, rs_held;         /* the last all-gather output, reduce-scatter input */
	double sp_gather;             /* sequence parallelism's gathered layer input */
	/* under a pipeline (stage s of p, m micro-batches) */
	bool first_stage, last_stage;
	int m;
	double boundary;              /* the tensor between stages, one micro-batch */
	double pred;                  /* the last stage's logits, one micro-batch */
	int *act;                     /* per micro-batch x layer: the saved activations
					 (without a pipeline, the one micro-batch's) */
	int *head;                    /* per micro-batch: the head's saved tensors */
	int *out_chunk, *in_grad;     /* per micro-batch: kept outputs, input gradients */
	int *recv;                    /* 2 m receive buffers, allocated once */
	int *weights;                 /* per layer, then the root: gathered for the step */
	int *acc;                     /* per layer, then the root: fp32 accumulated gradients */
	bool failed;
};

static int rmalloc(struct replay *r, int stream, double bytes)
{
	if (bytes <= 1048576.0)
		return -1;
	int h = ptalloc_malloc(r->a, stream, bytes);
	if (h < 0)
		r->failed = true;
	return h;
}

/* All-gather a module of p parameters on the all-gather stream: the
 * 16-bit cast of the shard (freed after the copy-in), the output. In the
 * forward the previous module's output is freed only after this one is
 * allocated (the deferred free, so two are alive); in the backward each
 * is freed right after its own copy-out, before the next prefetch. The
 * root (embedding, final norm, output) is gathered in 16 bits whatever
 * the layers: torchtitan 9dec370 float8.py L84-100 swaps every nn.Linear
 * for torchao's Float8Linear but `output` (module_filter_fn), and the
 * embedding is no Linear, so only the layers' weights take the fp8
 * all-gather (memory.c counts the root's unsharded weights so too). */
static int gather(struct replay *r, double p, bool root)
{
	double u = root ? r->wb : r->u;
	int cast = rmalloc(r, S_ALLGATHER, u * p / r->n_shard);
	int out = rmalloc(r, S_ALLGATHER, u * p);
	ptalloc_free(r->a, cast);
	return out;
}

/* The copy-out: the unsharded weights on the compute stream. */
static int copy_out(struct replay *r, double p, bool root)
{
	return rmalloc(r, S_COMPUTE, (root ? r->wb : r->u) * p);
}

/* A forward all-gather and copy-out (the previous output freed after). */
static int unshard_forward(struct replay *r, double p, bool root)
{
	int out = gather(r, p, root);
	ptalloc_free(r->a, r->ag_held);
	r->ag_held = out;
	return copy_out(r, p, root);
}

/* Reduce-scatter a module's gradients (handle g, p parameters): the
 * previous module's fp32 input freed first (held until this module's
 * post-backward), this one's on the compute stream, the 16-bit
 * gradients freed after the copy-in, the output on the reduce-scatter
 * stream. */
static int reduce(struct replay *r, int g, double p)
{
	ptalloc_free(r->a, r->rs_held);
	r->rs_held = rmalloc(r, S_COMPUTE, r->r * p);
	ptalloc_free(r->a, g);
	return rmalloc(r, S_REDUCE, r->r * p / r->n_shard);
}

/* A loss's allocations, in order: slot k allocated with bytes per logit
 * (> 0) or freed (0); OUT_GRAD marks where the output projection's
 * weight gradient is allocated (its backward, after the loss's). */
struct loss_op {
	signed char slot;
	signed char Bpl;
};
#define OUT_GRAD { -1, 0 }
#define LOSS_END { -2, 0 }

/* torch's cross_entropy on an fp32 copy (torchtitan train.py L131-138,
 * L303-308; research notes: derivatives.yaml _log_softmax saves its
 * result, _to_copy nothing; the autograd engine releases a node's saved
 * tensors after its outputs exist): the bf16 logits (0), the fp32 copy
 * (1), log_softmax's result (2); the copy freed when loss_fn returns, the
 * logits at `del pred`; backward: nll_loss's dense gradient (3),
 * log_softmax's input gradient (4), then 3 and 2 freed, the cast to bf16
 * (5), 4 freed. 12 B per logit at the peak. */
static const struct loss_op loss_torch_ce[] = {
	{ 0, 2 }, { 1, 4 }, { 2, 4 }, { 1, 0 }, { 0, 0 },
	{ 3, 4 }, { 4, 4 }, { 3, 0 }, { 2, 0 }, { 5, 2 }, { 4, 0 }, OUT_GRAD, { 5, 0 }, LOSS_END,
};
/* torch's loss_parallel on the same fp32 copy (torch distributed/tensor/
 * parallel/loss.py _log_softmax, _nll_loss_and_log_softmax_backward):
 * forward the logits (0), the copy (1), shifted (2), exp(shifted) (3,
 * freed after its sum), the result (4), then 2, 1, 0 freed; backward
 * zeros_like (5), exp(x) (6), their sum (7; 6 freed), its product with
 * the output gradient (8; 7 freed), then 5 and the saved result freed,
 * the cast to bf16 (9), 8 freed. 16 B per logit at the peak. */
static const struct loss_op loss_torch_parallel[] = {
	{ 0, 2 }, { 1, 4 }, { 2, 4 }, { 3, 4 }, { 3, 0 }, { 4, 4 }, { 2, 0 }, { 1, 0 }, { 0, 0 },
	{ 5, 4 }, { 6, 4 }, { 7, 4 }, { 6, 0 }, { 8, 4 }, { 7, 0 }, { 5, 0 }, { 4, 0 },
	{ 9, 2 }, { 8, 0 }, OUT_GRAD, { 9, 0 }, LOSS_END,
};

/* The loss by its bytes per logit at the peak (16 or 12: the sequences
 * above; else one block); returns the output's weight gradient. With
 * keep_pred the logits (slot 0) are the caller's: a pipeline keeps them. */
static int loss(struct replay *r, bool keep_pred)
{
	double n = r->logits, bpl = r->o->logits_bytes / (n > 0 ? n : 1);
	const struct loss_op *seq = fabs(bpl - 12) < 1e-9 ? loss_torch_ce :
				    fabs(bpl - 16) < 1e-9 ? loss_torch_parallel : NULL;
	int slot[10], gw = -1;
	if (!seq) {
		int l = rmalloc(r, S_COMPUTE, r->o->logits_bytes);
		ptalloc_free(r->a, l);
		return rmalloc(r, S_COMPUTE, r->wb * r->head_params);
	}
	for (; seq->slot != -2; seq++)
		if (keep_pred && seq->slot == 0)
			continue;
		else if (seq->slot == -1)
			gw = rmalloc(r, S_COMPUTE, r->wb * r->head_params);
		else if (seq->Bpl > 0)
			slot[seq->slot] = rmalloc(r, S_COMPUTE, seq->Bpl * n);
		else
			ptalloc_free(r->a, slot[seq->slot]);
	return gw;
}

/* Whether the rank's layer l is checkpointed (memory.h: every n-th). */
static bool checkpointed(const struct replay *r, int l)
{
	return (l + 1) % r->every == 0;
}

/* Layer l's saved tensors. */
static int layer_saved(struct replay *r, int l)
{
	return rmalloc(r, S_COMPUTE, checkpointed(r, l) ? r->act_ckpt : r->act_plain);
}

/* Layer l's recomputed set: what a checkpointed layer does not save. */
static double layer_recomputed(const struct replay *r, int l)
{
	return checkpointed(r, l) ? r->o->recompute_bytes : 0;
}

/* Layer l's forward beyond what it saves: sequence parallelism's
 * gathered input, then its other intermediates (the recomputed set). */
static void layer_transient(struct replay *r, int l)
{
	int g = rmalloc(r, S_COMPUTE, r->sp_gather);
	int t = rmalloc(r, S_COMPUTE, layer_recomputed(r, l));
	ptalloc_free(r->a, g);
	ptalloc_free(r->a, t);
}

/* Layer l's backward: the recomputed tensors (with the gathered input)
 * while its 16-bit weight gradients are made; returns those. */
static int layer_backward(struct replay *r, int l)
{
	int g = rmalloc(r, S_COMPUTE, r->sp_gather);
	int re = rmalloc(r, S_COMPUTE, layer_recomputed(r, l));
	int grad = rmalloc(r, S_COMPUTE, r->wb * r->layer_params);
	ptalloc_free(r->a, g);
	ptalloc_free(r->a, re);
	return grad;
}

static void optimizer_step(struct replay *r, bool first)
{
	int nt = r->layers * r->nw + 2;
	double *sz = malloc((size_t)nt * sizeof(*sz));
	int *tmp = malloc((size_t)nt * sizeof(*tmp));
	if (!sz || !tmp) {
		r->failed = true;
		goto out;
	}
	for (int l = 0; l < r->layers; l++)
		for (int k = 0; k < r->nw; k++)
			sz[l * r->nw + k] = 4 * r->w[k] / r->n_shard;
	sz[nt - 2] = 4 * r->emb_params / r->n_shard;
	sz[nt - 1] = 4 * r->head_params / r->n_shard;
	if (first)      /* exp_avg and exp_avg_sq, kept to the end */
		for (int i = 0; i < nt; i++) {
			rmalloc(r, S_COMPUTE, sz[i]);
			rmalloc(r, S_COMPUTE, sz[i]);
		}
	for (int i = 0; i < nt; i++)
		tmp[i] = rmalloc(r, S_COMPUTE, sz[i]);
	for (int i = 0; i < nt; i++)
		ptalloc_free(r->a, tmp[i]);
out:
	free(sz);
	free(tmp);
}

static void step(struct replay *r, bool first)
{
	int L = r->layers;
	int *saved = r->act;          /* one micro-batch's layers (m = 1) */

	for (int i = 0; i <= L; i++) {          /* zero_grad */
		ptalloc_free(r->a, r->grad[i]);
		r->grad[i] = -1;
	}
	/* forward: the root first, each layer resharded after its forward
	 * but the last (torchtitan: reshard_after_forward False for it) */
	int root = unshard_forward(r, r->root_params, true), last = -1;
	for (int l = 0; l < L; l++) {
		int w = unshard_forward(r, r->layer_params, false);
		saved[l] = layer_saved(r, l);
		layer_transient(r, l);
		if (l < L - 1)
			ptalloc_free(r->a, w);
		else
			last = w;
	}
	int head = rmalloc(r, S_COMPUTE, r->head_act);
	int gout = loss(r, false);
	ptalloc_free(r->a, head);
	/* backward: layer l's weights copied out from the output gathered
	 * ahead, which is freed, then layer l - 1's gathered */
	int ahead = L > 1 ? gather(r, r->layer_params, false) : -1;
	ptalloc_free(r->a, r->ag_held);
	r->ag_held = -1;
	for (int l = L - 1; l >= 0; l--) {
		int w = last;
		if (l < L - 1) {
			w = copy_out(r, r->layer_params, false);
			ptalloc_free(r->a, ahead);
			ahead = l > 0 ? gather(r, r->layer_params, false) : -1;
		}
		int g = layer_backward(r, l);
		ptalloc_free(r->a, saved[l]);
		ptalloc_free(r->a, w);              /* reshard after backward */
		r->grad[l] = reduce(r, g, r->layer_params);
	}
	/* the root's gradients, reduced last, in the final callback */
	int gemb = rmalloc(r, S_COMPUTE, r->wb * r->emb_params);
	r->grad[L] = reduce(r, gemb, r->root_params);
	ptalloc_free(r->a, gout);
	ptalloc_free(r->a, r->rs_held);
	r->rs_held = -1;
	ptalloc_free(r->a, root);
	optimizer_step(r, first);
}

/* A micro-batch's forward on a pipeline stage (memory_replay.h rules):
 * at the step's first, every module gathered and kept; each layer's
 * saved tensors (under full recompute the first layer's input is the
 * receive buffer on a stage after the first); the stage's output kept
 * until the next step (the last stage's: its logits, with the loss run
 * at once: 1F1B runs a last stage's backward right after its forward). */
static void pipe_forward(struct replay *r, int j)
{
	int L = r->layers;
	if (j == 0)
		r->weights[L] = r->root_params > 0 ? unshard_forward(r, r->root_params, true) : -1;
	for (int l = 0; l < L; l++) {
		if (j == 0)
			r->weights[l] = unshard_forward(r, r->layer_params, false);
		bool is_recv = l == 0 && !r->first_stage && r->in->recompute == RECOMPUTE_FULL &&
			       checkpointed(r, 0);
		r->act[j * L + l] = is_recv ? -1 : layer_saved(r, l);
		layer_transient(r, l);
	}
	if (j == 0) {
		ptalloc_free(r->a, r->ag_held);
		r->ag_held = -1;
	}
	if (!r->last_stage) {
		r->out_chunk[j] = rmalloc(r, S_COMPUTE, r->boundary);
		return;
	}
	r->head[j] = rmalloc(r, S_COMPUTE, r->head_act);
	r->out_chunk[j] = rmalloc(r, S_COMPUTE, r->pred);
	int gw = loss(r, true);
	/* the output's gradient joins the root's accumulation */
	if (j == 0)
		r->acc[L] = rmalloc(r, S_COMPUTE, r->r * r->root_params);
	ptalloc_free(r->a, gw);
}

/* A micro-batch's backward on a stage: each layer's recompute and
 * 16-bit gradients, turned into fp32 accumulators at the step's first
 * backward and added into them after; the input's gradient kept (on the
 * receive buffer) until the next step; the embedding's gradient on the
 * first stage. */
static void pipe_backward(struct replay *r, int j)
{
	int L = r->layers;
	if (r->last_stage)
		ptalloc_free(r->a, r->head[j]);
	for (int l = L - 1; l >= 0; l--) {
		int g = layer_backward(r, l);
		ptalloc_free(r->a, r->act[j * L + l]);
		if (j == 0)
			r->acc[l] = rmalloc(r, S_COMPUTE, r->r * r->layer_params);
		ptalloc_free(r->a, g);
	}
	if (!r->first_stage)
		r->in_grad[j] = rmalloc(r, S_COMPUTE, r->boundary);
	else {
		int g = rmalloc(r, S_COMPUTE, r->wb * r->emb_params);
		if (j == 0 && !r->last_stage)
			r->acc[L] = rmalloc(r, S_COMPUTE, r->r * r->root_params);
		ptalloc_free(r->a, g);
	}
}

/* One step of a pipeline stage (torch.distributed.pipelining as of
 * December 2024 under torchtitan 9dec370): zero_grad; the schedule's
 * clear_runtime_states frees the last step's kept outputs and input
 * gradients; receive buffers made once, m for activations (not on the
 * first stage) and m for gradients (not on the last); the stage's order
 * of forwards and backwards; then, after the last backward, each module
 * resharded and reduce-scattered in turn (the root first), the last
 * reduce-scatter input left held (no final callback then); the last
 * stage concatenates its m logits (merge_chunks) and drops the result;
 * the optimizer. */
static void step_pipeline(struct replay *r, bool first)
{
	int L = r->layers, m = r->m;
	for (int i = 0; i <= L; i++) {
		ptalloc_free(r->a, r->grad[i]);
		r->grad[i] = -1;
	}
	for (int j = 0; j < m; j++) {
		ptalloc_free(r->a, r->out_chunk[j]);
		ptalloc_free(r->a, r->in_grad[j]);
		r->out_chunk[j] = r->in_grad[j] = -1;
	}
	if (first)
		for (int j = 0; j < 2 * m; j++)
			r->recv[j] = (j < m ? !r->first_stage : !r->last_stage) ?
				     rmalloc(r, S_COMPUTE, r->boundary) : -1;
	int fj = 0, bj = 0;
	for (int k = 0; k < 2 * m; k++)
		if (r->in->order_fwd[k])
			pipe_forward(r, fj++);
		else
			pipe_backward(r, bj++);
	for (int i = L; i >= 0; i--) {     /* the root, then the layers */
		int g = i == L ? L : L - 1 - i;
		if (g == L && r->root_params <= 0)
			continue;
		ptalloc_free(r->a, r->weights[g]);
		r->weights[g] = -1;
		r->grad[g] = reduce(r, r->acc[g], g == L ? r->root_params : r->layer_params);
		r->acc[g] = -1;
	}
	if (r->last_stage) {
		int cat = rmalloc(r, S_COMPUTE, m * r->pred);
		ptalloc_free(r->a, cat);
	}
	optimizer_step(r, first);
}

static int *handles(int n)
{
	int *h = malloc((size_t)(n > 0 ? n : 1) * sizeof(*h));
	for (int i = 0; h && i < n; i++)
		h[i] = -1;
	return h;
}

/* Whether the replay models this rank: torchtitan's FSDP2 plans of a
 * dense decoder (ZeRO-3, or ZeRO-2 and up under a pipeline with its
 * stage order). */
static bool replay_applies(const struct mem_rank_input *in)
{
	const struct model *m = in->model;
	if (!in->fsdp2 || model_is_moe(m) || model_is_mla(m) || m->arch != MODEL_ARCH_DECODER ||
	    finetune_frozen(&in->ft) || in->offload || m->tied_embeddings)
		return false;
	if (in->pp > 1)
		return in->order_fwd && in->order_n >= 2 && in->zero >= ZERO_2;
	return in->zero >= ZERO_3 && in->has_embedding && in->has_head;
}

/* The sizes the replay allocates, from the rank's input and anatomy. */
static void replay_sizes(struct replay *r, const struct mem_rank_input *in, const struct mem_anatomy *o)
{
	const struct model *m = in->model;
	struct precision pr;
	precision_init(&pr, in->dtype, false);
	double t = in->tp < 1 ? 1 : in->tp, h = (double)m->hidden;
	double kv = model_kv_width(m), q = model_q_width(m), f = (double)m->ffn;
	double a = dtype_bytes(pr.activation), tokens = in->micro_batch * in->seq;

	r->layers = (int)ceil(in->layers);
	/* torchtitan's selective layer policy (memory.h): the two kinds of
	 * layer, each as memory.c counts it; all alike, the mean */
	r->every = in->recompute == RECOMPUTE_FULL && in->recompute_every > 1 ? in->recompute_every : 1;
	r->act_ckpt = r->act_plain = o->act_per_layer_bytes;
	if (r->every > 1 && r->every <= r->layers) {
		struct mem_rank_input none = *in;
		none.recompute = RECOMPUTE_NONE;
		r->act_ckpt = memory_dense_layer_activations(in);
		r->act_plain = memory_dense_layer_activations(&none);
	}
	r->n_shard = in->dp < 1 ? 1 : in->dp;
	if (in->shard >= 1 && in->shard < r->n_shard)
		r->n_shard = in->shard;     /* hybrid sharding: the shard group */
	r->wb = dtype_bytes(pr.weight);
	r->u = pr.fp8 && in->fp8_params ? 1 : r->wb;
	r->r = in->grad_elem_bytes > 0 ? in->grad_elem_bytes : r->wb;
	double w[] = { h * q, h * kv, h * kv, q * h, h * f, f * h, h * f };
	r->nw = m->act == MODEL_ACT_SWIGLU ? 7 : 6;
	for (int k = 0; k < r->nw; k++)
		r->w[k] = w[k] / t;
	r->layer_params = model_dense_layer_params(m) / t;
	r->emb_params = in->has_embedding ? model_embedding_params(m) / t : 0;
	r->head_params = in->has_head ? model_head_params(m) / t : 0;
	r->root_params = r->emb_params + r->head_params;
	r->logits = in->has_head ? in->micro_batch * model_logits_per_sample(m, in->seq) / t : 0;
	r->head_act = o->activations_bytes - in->layers * o->act_per_layer_bytes * in->inflight;
	/* sequence parallelism gathers a layer's input whole before its
	 * GEMMs (in fp8 under torchao's Float8Linear, which casts first) */
	if (in->sp && t > 1)
		r->sp_gather = tokens * h * (pr.fp8 && in->torchao_fp8 ? 1 : a);
	r->first_stage = in->has_embedding;
	r->last_stage = in->has_head;
	r->m = in->pp > 1 ? in->order_n / 2 : 1;
	r->boundary = tokens * h * a / (in->sp ? t : 1);
	r->pred = 2 * r->logits;
}

bool memory_replay(const struct mem_rank_input *in, const struct mem_anatomy *o, struct mem_replay *out)
{
	bool pipe = in->pp > 1, ok = false;
	if (!replay_applies(in))
		return false;

	struct replay r = { .in = in, .o = o, .ag_held = -1, .rs_held = -1 };
	replay_sizes(&r, in, o);
	int L = r.layers;
	r.a = in->native_allocator ? ptalloc_new_native() : ptalloc_new();
	r.grad = handles(L + 1);
	r.act = handles(r.m * L);
	r.head = handles(r.m);
	r.out_chunk = handles(r.m);
	r.in_grad = handles(r.m);
	r.recv = handles(2 * r.m);
	r.weights = handles(L + 1);
	r.acc = handles(L + 1);
	if (!r.a || !r.grad || !r.act || !r.head ||
	    !r.out_chunk || !r.in_grad || !r.recv || !r.weights || !r.acc)
		goto out;
	for (int i = 0; i <= L; i++)     /* the fp32 shards, at init */
		rmalloc(&r, S_COMPUTE, 4 * (i < L ? r.layer_params : r.root_params) / r.n_shard);
	for (int s = 0; s < REPLAY_STEPS; s++)
		if (pipe)
			step_pipeline(&r, s == 0);
		else
			step(&r, s == 0);
	if (r.failed)
		goto out;
	*out = (struct mem_replay){
		.reserved_peak = ptalloc_reserved_peak(r.a), .allocated_peak = ptalloc_allocated_peak(r.a),
		.allocated_end = ptalloc_allocated(r.a),
		.compute = ptalloc_stream_reserved(r.a, S_COMPUTE),
		.allgather = ptalloc_stream_reserved(r.a, S_ALLGATHER),
		.reduce = ptalloc_stream_reserved(r.a, S_REDUCE),
	};
	ok = true;
out:
	ptalloc_destroy(r.a);
	free(r.grad);
	free(r.act);
	free(r.head);
	free(r.out_chunk);
	free(r.in_grad);
	free(r.recv);
	free(r.weights);
	free(r.acc);
	return ok;
}
