/* simulate: scenario -> programs -> engine -> result (see simulate.h).
 *
 * Program shape for one stage (tasks on streams, see program.h):
 *   F(mb, chunk):  [recv act] embedding? then per layer
 *                  attention [TP collective] MLP [TP collective]
 *                  (with SP: all-gather before and reduce-scatter after
 *                  each half), head? [send act]
 *   B(mb, chunk):  [recv grad] head? then per layer in reverse
 *                  [recompute forward] MLP bwd [TP] attention bwd [TP],
 *                  gradient buckets handed to the DP stream as soon as
 *                  they are complete, embedding? [send grad]
 *   end:           remaining buckets, optimizer step after every
 *                  reduction, ZeRO-1/2 all-gather of updated parameters.
 * Data-parallel reductions run on their own stream and overlap backward
 * compute, as PyTorch DDP and Megatron-LM do; TP collectives block compute.
 *
 * Context parallelism (cp ranks, models/workload.h for the split): with
 * the ring ("p2p", Transformer Engine's AttnFuncWithCPAndKVP2P) the
 * attention core of a layer is cp compute tasks, the rank's own causal
 * block and cp - 1 ring steps; before step k the K/V block of step k is
 * exchanged with the CP neighbours (a send/recv ring shift on the CP
 * stream, issued as soon as the previous exchange is done), so each
 * exchange overlaps the compute of the block in hand and the replay says
 * how much is exposed. Backward exchanges K/V and the partial dK/dV
 * (twice the bytes) per step. With "a2a" (Ulysses) q, k, v go through an
 * all-to-all over the CP group before the core and the output after it
 * (backward: dO before, dq, dk, dv after), blocking compute. Gradients are
 * reduced over dp x cp ranks (GROUP_DP, placement.h). */
#include "simulate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "anatomy.h"
#include "build_cnn.h"
#include "bug.h"
#include "cost.h"
#include "ddlsim-config.h"
#include "xalloc.h"

/* Priced blocks of one micro-batch. */
struct blocks {
	double fwd[WL_NBLOCKS], bwd[WL_NBLOCKS];
	double recompute_sel;         /* selective: attention core forward again */
	double flops_fwd[WL_NBLOCKS];
	double flops_core;            /* attention core forward flops */
	/* cp > 1, per pass: the attention block's ops before the core, after
	 * it, the own causal block (a2a: the whole core) and one ring step */
	double cp_pre[2], cp_post[2], cp_diag[2], cp_step[2];
};

struct builder {
	const struct plan *pl;
	const struct model *m;
	struct program *p;
	struct blocks bk;
	int stage, pp, v;
	double act_bytes;             /* p2p message / TP collective size */
	double ag_bytes;              /* TP/SP all-gather size (fp8 with fp8_comm) */
	double grad_bytes_layer, grad_bytes_embed, grad_bytes_head;
	double param_bytes_layer;
	double cp_kv_bytes;           /* ring: one K/V block of this rank */
	double cp_qkv_bytes, cp_out_bytes; /* a2a: q, k, v and the output */
	double pending;               /* bytes in the open bucket */
	int *dp_tasks;                /* reductions, for the optimizer's deps */
	int ndp;
	size_t capdp;
	int last;                     /* last task, for stream-order deps */
	int gate;                     /* a task the next compute must wait for */
	int prev_mark;                /* last task before the previous layer began */
};

/* The workload shape of the plan (models/workload.h). */

/* Split the attention block's ops of one pass for context parallelism:
 * before the core, the own (causal) block, a ring step, after the core. */
static void split_cp(struct cost *cost, const struct op_list *l, int cp, int pass,
		     struct blocks *bk)
{
	bool after = false;
	double steps = 0;
	for (int i = 0; i < l->n; i++) {
		double t = cost_op_time(cost, &l->v[i]);
		if (l->v[i].kind == OP_ATTN) {
			after = true;
			if (l->v[i].causal)
				bk->cp_diag[pass] += t;
			else
				steps += t;
		} else if (after)
			bk->cp_post[pass] += t;
		else
			bk->cp_pre[pass] += t;
	}
	bk->cp_step[pass] = cp > 1 ? steps / (cp - 1) : 0;
}

static int price_blocks(const struct plan *pl, const struct model *m, struct cost *cost,
			struct blocks *bk)
{
	struct wl_shape shp = plan_wl_shape(pl);
	struct op_list l;

	memset(bk, 0, sizeof(*bk));
	for (int b = 0; b < WL_NBLOCKS; b++) {
		op_list_init(&l);
		if (workload_block(m, &shp, b, PASS_FWD, RECOMPUTE_NONE, &l))
			goto fail;
		bk->fwd[b] = cost_list_time(cost, &l);
		bk->flops_fwd[b] = op_list_flops(&l);
		if (b == WL_ATTN && pl->cp > 1)
			split_cp(cost, &l, pl->cp, PASS_FWD, bk);
		op_list_finish(&l);
		op_list_init(&l);
		if (workload_block(m, &shp, b, PASS_BWD, RECOMPUTE_NONE, &l))
			goto fail;
		bk->bwd[b] = cost_list_time(cost, &l);
		if (b == WL_ATTN && pl->cp > 1)
			split_cp(cost, &l, pl->cp, PASS_BWD, bk);
		op_list_finish(&l);
	}
	/* the selective-recompute extra: attention backward with minus without */
	op_list_init(&l);
	if (workload_block(m, &shp, WL_ATTN, PASS_BWD, RECOMPUTE_SELECTIVE, &l))
		goto fail;
	double with = cost_list_time(cost, &l);
	bk->recompute_sel = with - bk->bwd[WL_ATTN];
	bk->flops_core = op_list_flops(&l);
	op_list_finish(&l);
	op_list_init(&l);
	workload_block(m, &shp, WL_ATTN, PASS_BWD, RECOMPUTE_NONE, &l);
	bk->flops_core -= op_list_flops(&l);
	op_list_finish(&l);
	return 0;
fail:
	op_list_finish(&l);
	return -1;
}

/* Layers of virtual stage vs (of pp * v), and the first layer's index. */
static int vstage_layers(const struct builder *b, int vs, int nv, int *first)
{
	return plan_vstage_layers(b->pl, b->m->layers, vs, nv, first);
}

static int add(struct builder *b, const struct task *t, int dep)
{
	int deps[3] = { dep, b->last, b->gate };
	int id = program_add(b->p, t, deps, t->stream == STREAM_COMPUTE ? 3 : 2);
	if (t->stream == STREAM_COMPUTE)
		b->gate = -1;
	return id;
}

static int compute(struct builder *b, enum task_cat cat, double time_s, double flops,
		   int mb, int chunk, int dep)
{
	struct task t = { .kind = TASK_COMPUTE, .stream = STREAM_COMPUTE, .cat = cat,
			  .time_s = time_s, .flops = flops, .mb = mb, .chunk = chunk };
	b->last = add(b, &t, dep);
	return b->last;
}

static int tp_coll_bytes(struct builder *b, enum coll_op op, double bytes, int mb, int chunk)
{
	if (b->pl->tp <= 1)
		return b->last;
	struct task t = { .kind = TASK_COLL, .stream = STREAM_TP, .cat = CAT_TP_COMM,
			  .op = op, .group = GROUP_TP, .bytes = bytes, .mb = mb,
			  .chunk = chunk };
	b->last = add(b, &t, b->last);
	return b->last;
}

/* A TP collective of one activation tensor (b x s x h). */
static int tp_coll(struct builder *b, enum coll_op op, int mb, int chunk)
{
	return tp_coll_bytes(b, op, op == COLL_ALLGATHER ? b->ag_bytes : b->act_bytes, mb, chunk);
}

/* A collective on the CP group (CP stream) waiting for dep. */
static int cp_coll(struct builder *b, enum coll_op op, double bytes, int mb, int chunk, int dep)
{
	struct task t = { .kind = TASK_COLL, .stream = STREAM_CP, .cat = CAT_CP_COMM, .op = op,
			  .group = GROUP_CP, .bytes = bytes, .mb = mb, .chunk = chunk };
	return program_add(b->p, &t, &dep, 1);
}

/* The attention block's compute under context parallelism, one pass;
 * extra_s (selective recompute) goes with the part after the core. */
static void attn_cp(struct builder *b, enum task_cat cat, bool bwd, double extra_s,
		    double flops, int mb, int chunk, int dep)
{
	const struct blocks *k = &b->bk;
	int cp = b->pl->cp, ps = bwd ? PASS_BWD : PASS_FWD;
	/* backward runs the block in reverse: the output projection first */
	double first = bwd ? k->cp_post[ps] + extra_s : k->cp_pre[ps];
	double last = bwd ? k->cp_pre[ps] : k->cp_post[ps];

	compute(b, cat, first, flops, mb, chunk, dep);
	if (b->pl->cp_comm == CP_A2A) {
		double in = bwd ? b->cp_out_bytes : b->cp_qkv_bytes;   /* dO : q, k, v */
		double out = bwd ? b->cp_qkv_bytes : b->cp_out_bytes;  /* dq dk dv : O */
		int x = cp_coll(b, COLL_ALLTOALL, in, mb, chunk, b->last);
		compute(b, cat, k->cp_diag[ps], 0, mb, chunk, x);
		x = cp_coll(b, COLL_ALLTOALL, out, mb, chunk, b->last);
		compute(b, cat, last, 0, mb, chunk, x);
		return;
	}
	/* the ring: the first exchange starts when Q, K, V exist (forward) or
	 * when dO has reached the core (backward) */
	double bytes = b->cp_kv_bytes * (bwd ? 2 : 1);
	int x = cp_coll(b, COLL_SENDRECV, bytes, mb, chunk, b->last);
	compute(b, cat, k->cp_diag[ps], 0, mb, chunk, b->last);
	for (int s = 1; s < cp; s++) {
		int have = x;
		if (s + 1 < cp)
			x = cp_coll(b, COLL_SENDRECV, bytes, mb, chunk, have);
		compute(b, cat, k->cp_step[ps], 0, mb, chunk, have);
	}
	compute(b, cat, last, 0, mb, chunk, b->last);
}

/* The compute of one half-layer: one task, or the attention under CP. */
static void body(struct builder *b, enum task_cat cat, enum wl_block blk, double time_s,
		 double extra_s, double flops, int mb, int chunk, int dep)
{
	if (blk == WL_ATTN && b->pl->cp > 1)
		attn_cp(b, cat, cat == CAT_BACKWARD, extra_s, flops, mb, chunk, dep);
	else
		compute(b, cat, time_s + extra_s, flops, mb, chunk, dep);
}

/* One half-layer (attention or MLP) with its tensor-parallel communication.
 * Forward: SP all-gather, compute, SP reduce-scatter / all-reduce.
 * Backward (Megatron): SP all-gather, compute, SP reduce-scatter / all-reduce. */
static void half(struct builder *b, enum task_cat cat, enum wl_block blk, double time_s,
		 double extra_s, double flops, int mb, int chunk)
{
	bool tp = b->pl->tp > 1;
	if (tp && b->pl->sp) {
		tp_coll(b, COLL_ALLGATHER, mb, chunk);
		if (cat == CAT_BACKWARD) {
			/* Megatron-SP backward: the column-parallel GEMM's input,
			 * kept sharded, is gathered again for the weight gradient,
			 * overlapping the data-gradient GEMM; the reduce-scatter
			 * of the input gradient waits for both */
			int gather = b->last;
			struct task t = { .kind = TASK_COLL, .stream = STREAM_TP, .cat = CAT_TP_COMM,
					  .op = COLL_ALLGATHER, .group = GROUP_TP,
					  .bytes = b->act_bytes, .mb = mb, .chunk = chunk };
			int regather = program_add(b->p, &t, &gather, 1);
			(void)regather; /* the TP stream runs it before the reduce-scatter */
			body(b, cat, blk, time_s, extra_s, flops, mb, chunk, gather);
			tp_coll(b, COLL_REDUCE_SCATTER, mb, chunk);
			return;
		}
	}
	body(b, cat, blk, time_s, extra_s, flops, mb, chunk, b->last);
	if (tp)
		tp_coll(b, b->pl->sp ? COLL_REDUCE_SCATTER : COLL_ALLREDUCE, mb, chunk);
}

static void layer_forward(struct builder *b, enum task_cat cat, int mb, int chunk)
{
	const struct blocks *k = &b->bk;
	if (b->pl->tp <= 1 && b->pl->cp <= 1) {
		compute(b, cat, k->fwd[WL_ATTN] + k->fwd[WL_MLP],
			k->flops_fwd[WL_ATTN] + k->flops_fwd[WL_MLP], mb, chunk, b->last);
		return;
	}
	half(b, cat, WL_ATTN, k->fwd[WL_ATTN], 0, k->flops_fwd[WL_ATTN], mb, chunk);
	half(b, cat, WL_MLP, k->fwd[WL_MLP], 0, k->flops_fwd[WL_MLP], mb, chunk);
}

static void dp_reduce(struct builder *b, double bytes)
{
	const struct plan *pl = b->pl;
	if ((long)pl->dp * pl->cp <= 1 || bytes <= 0)
		return;
	struct task t = { .kind = TASK_COLL, .stream = STREAM_DP, .cat = CAT_DP_COMM,
			  .op = pl->zero >= ZERO_1 ? COLL_REDUCE_SCATTER : COLL_ALLREDUCE,
			  .group = GROUP_DP, .bytes = bytes };
	int id = program_add(b->p, &t, &b->last, 1);
	XGROW(b->dp_tasks, b->capdp, (size_t)b->ndp + 1);
	b->dp_tasks[b->ndp++] = id;
}

/* Gradients of `bytes` became ready on the compute stream (last task). */
static void grads_ready(struct builder *b, double bytes, bool reduce_now)
{
	if (!reduce_now)
		return;
	b->pending += bytes;
	if ((b->pl->overlap_grad_reduce || b->pl->zero >= ZERO_2) &&
	    b->pending >= b->pl->bucket_bytes) {
		dp_reduce(b, b->pending);
		b->pending = 0;
	}
}

static void flush_bucket(struct builder *b)
{
	dp_reduce(b, b->pending);
	b->pending = 0;
}

/* ZeRO-3 / FSDP: all-gather the next layer's parameters, issued when the
 * previous layer starts (one layer of prefetch); the layer's first
 * compute task waits for it. */
static void zero3_gather(struct builder *b)
{
	int mark = b->last;
	if (b->pl->zero < ZERO_3 || (long)b->pl->dp * b->pl->cp <= 1)
		return;
	struct task t = { .kind = TASK_COLL, .stream = STREAM_PARAM, .cat = CAT_PARAM_COMM,
			  .op = COLL_ALLGATHER, .group = GROUP_DP, .bytes = b->param_bytes_layer };
	b->gate = program_add(b->p, &t, &b->prev_mark, 1);
	b->prev_mark = mark;
}

static void forward(struct builder *b, int mb, int chunk)
{
	const struct plan *pl = b->pl;
	int nv = b->pp * b->v, vs = chunk * b->pp + b->stage, first;
	int nl = vstage_layers(b, vs, nv, &first);
	int dep = b->last;

	if (vs > 0) {
		struct task r = { .kind = TASK_RECV, .stream = STREAM_RECV_PREV, .cat = CAT_PP_COMM,
				  .dir = P2P_FWD, .bytes = b->act_bytes / (pl->sp ? pl->tp : 1),
				  .mb = mb, .chunk = chunk };
		dep = program_add(b->p, &r, NULL, 0);
	}
	if (vs == 0) {
		compute(b, CAT_FORWARD, b->bk.fwd[WL_EMBED], 0, mb, chunk, dep);
		tp_coll(b, pl->sp ? COLL_REDUCE_SCATTER : COLL_ALLREDUCE, mb, chunk);
	} else
		compute(b, CAT_FORWARD, 0, 0, mb, chunk, dep);
	for (int l = 0; l < nl; l++) {
		zero3_gather(b);
		layer_forward(b, CAT_FORWARD, mb, chunk);
	}
	if (vs == nv - 1) {
		if (pl->sp)
			tp_coll(b, COLL_ALLGATHER, mb, chunk);
		compute(b, CAT_FORWARD, b->bk.fwd[WL_HEAD], b->bk.flops_fwd[WL_HEAD], mb, chunk, b->last);
		/* vocabulary-parallel cross entropy: all-reduce of the max, the
		 * target logit and the sum of exponentials (fp32 per token) */
		for (int i = 0; i < 3; i++)
			tp_coll_bytes(b, COLL_ALLREDUCE, 4.0 * (double)pl->micro_batch * (double)pl->seq /
				      pl->cp, mb, chunk);
	} else {
		struct task s = { .kind = TASK_SEND, .stream = STREAM_SEND, .cat = CAT_PP_COMM,
				  .dir = P2P_FWD, .bytes = b->act_bytes / (pl->sp ? pl->tp : 1),
				  .mb = mb, .chunk = chunk };
		program_add(b->p, &s, &b->last, 1);
	}
}

static void backward(struct builder *b, int mb, int chunk, bool last_mb)
{
	const struct plan *pl = b->pl;
	const struct blocks *k = &b->bk;
	int nv = b->pp * b->v, vs = chunk * b->pp + b->stage, first;
	int nl = vstage_layers(b, vs, nv, &first);
	/* ZeRO-2/3 reduce-scatter gradients after every micro-batch */
	bool reduce = last_mb || pl->zero >= ZERO_2;
	int dep = b->last;

	if (vs < nv - 1) {
		struct task r = { .kind = TASK_RECV, .stream = STREAM_RECV_NEXT, .cat = CAT_PP_COMM,
				  .dir = P2P_BWD, .bytes = b->act_bytes / (pl->sp ? pl->tp : 1),
				  .mb = mb, .chunk = chunk };
		dep = program_add(b->p, &r, NULL, 0);
		compute(b, CAT_BACKWARD, 0, 0, mb, chunk, dep);
	} else {
		compute(b, CAT_BACKWARD, k->bwd[WL_HEAD], 2 * k->flops_fwd[WL_HEAD], mb, chunk, dep);
		/* column-parallel head: its input gradient is summed over TP */
		tp_coll(b, pl->sp ? COLL_REDUCE_SCATTER : COLL_ALLREDUCE, mb, chunk);
		grads_ready(b, b->grad_bytes_head, reduce);
	}
	for (int l = nl - 1; l >= 0; l--) {
		zero3_gather(b);
		if (pl->recompute == RECOMPUTE_FULL)
			layer_forward(b, CAT_RECOMPUTE, mb, chunk);
		double sel = pl->recompute == RECOMPUTE_SELECTIVE ? k->recompute_sel : 0;
		if (pl->tp <= 1 && pl->cp <= 1) {
			compute(b, CAT_BACKWARD, k->bwd[WL_MLP] + k->bwd[WL_ATTN] + sel,
				2 * (k->flops_fwd[WL_MLP] + k->flops_fwd[WL_ATTN]), mb, chunk, b->last);
		} else {
			half(b, CAT_BACKWARD, WL_MLP, k->bwd[WL_MLP], 0, 2 * k->flops_fwd[WL_MLP], mb, chunk);
			half(b, CAT_BACKWARD, WL_ATTN, k->bwd[WL_ATTN], sel, 2 * k->flops_fwd[WL_ATTN], mb, chunk);
		}
		grads_ready(b, b->grad_bytes_layer, reduce);
	}
	if (vs == 0) {
		/* the embedding's input is token ids: no gradient to reduce over
		 * TP; with SP its forward reduce-scatter has an all-gather here */
		if (pl->sp)
			tp_coll(b, COLL_ALLGATHER, mb, chunk);
		compute(b, CAT_BACKWARD, k->bwd[WL_EMBED], 0, mb, chunk, b->last);
		grads_ready(b, b->grad_bytes_embed, reduce);
	} else {
		struct task s = { .kind = TASK_SEND, .stream = STREAM_SEND, .cat = CAT_PP_COMM,
				  .dir = P2P_BWD, .bytes = b->act_bytes / (pl->sp ? pl->tp : 1),
				  .mb = mb, .chunk = chunk };
		program_add(b->p, &s, &b->last, 1);
	}
	/* ZeRO-2/3 keep only a shard of the gradients: they cannot wait for
	 * the last micro-batch, whatever overlap_grad_reduce says */
	if (reduce && (pl->overlap_grad_reduce || pl->zero >= ZERO_2))
		flush_bucket(b);
}

/* Adam step: read and write fp32 master, momentum, variance and the
 * gradient, write the 16-bit weights: about 34 bytes per local parameter. */
static double optimizer_time(const struct plan *pl, const struct gpu_spec *g,
			     double params_local)
{
	struct op op = { .kind = OP_MEMBOUND, .pass = PASS_FWD, .dtype = DTYPE_FP32, .batch = 1 };
	snprintf(op.name, sizeof(op.name), "adam_step");
	snprintf(op.membound_kind, sizeof(op.membound_kind), "adam");
	struct precision pr;
	precision_init(&pr, pl->precision, false);
	op.bytes = params_local * pr.optimizer_step_bytes;
	return cost_roofline_time(g, &op);
}

static int build_transformer_program(const struct inputs *in, const struct plan *pl, int stage,
				     struct program *p, struct stage_result *sr)
{
	const struct model *m = inputs_model(in);
	const struct topology *topo = inputs_topology(in);
	struct cost *cost = inputs_cost(in);
	struct builder b = { .pl = pl, .m = m, .p = p, .stage = stage, .pp = pl->pp, .last = -1,
			   .gate = -1, .prev_mark = -1 };
	int m_mb = (int)plan_microbatches(pl);
	int rc = -1;

	b.v = pl->schedule == SCHED_INTERLEAVED ? pl->interleave : 1;
	if (price_blocks(pl, m, cost, &b.bk))
		return -1;
	double t = pl->tp;
	struct precision pr;
	precision_init(&pr, pl->precision, pl->fp8_comm);
	double s_local = (double)pl->seq / pl->cp;   /* tokens of this rank */
	b.act_bytes = (double)pl->micro_batch * s_local * (double)m->hidden *
		      dtype_bytes(pr.activation);
	{
		/* K and V of this rank's tokens; KV heads fewer than tp are replicated */
		double hd = (double)model_head_dim(m), kvh = (double)m->kv_heads / t;
		double tok = (double)pl->micro_batch * s_local * dtype_bytes(pr.activation);
		if (kvh < 1)
			kvh = 1;
		b.cp_kv_bytes = 2 * kvh * hd * tok;
		b.cp_qkv_bytes = ((double)m->heads / t * hd) * tok + b.cp_kv_bytes;
		b.cp_out_bytes = (double)m->heads / t * hd * tok;
	}
	b.ag_bytes = b.act_bytes / dtype_bytes(pr.activation) * dtype_bytes(pr.tp_comm);
	double gb = dtype_bytes(pl->grad_dtype);
	b.grad_bytes_layer = model_layer_params(m) / t * gb;
	b.grad_bytes_embed = model_embedding_params(m) / t * gb;
	/* with tied embeddings and a pipeline, the last stage keeps its own
	 * copy of the word embeddings for the LM head (Megatron-LM) */
	double tied_copy = m->tied_embeddings && pl->pp > 1
				   ? (double)m->vocab * (double)m->hidden / t : 0;
	b.grad_bytes_head = (model_head_params(m) / t + tied_copy) * gb;
	b.param_bytes_layer = model_layer_params(m) / t * dtype_bytes(pr.weight);

	struct sched_step *order = schedule_order(pl->schedule, pl->pp, stage, m_mb, b.v);
	if (!order)
		return -1;
	int nsteps = 2 * m_mb * b.v;
	int *last_b = xmalloc((size_t)b.v * sizeof(int));
	int *chunk_layers = xmalloc((size_t)b.v * sizeof(int));
	for (int c = 0; c < b.v; c++)
		last_b[c] = -1;
	for (int i = 0; i < nsteps; i++)
		if (!order[i].fwd)
			last_b[order[i].chunk] = i;

	/* stage bookkeeping, memory inputs */
	int nv = pl->pp * b.v, layers = 0, first0 = 0;
	for (int c = 0; c < b.v; c++) {
		int f;
		chunk_layers[c] = vstage_layers(&b, c * pl->pp + stage, nv, &f);
		if (c == 0)
			first0 = f;
		layers += chunk_layers[c];
	}
	double alive = 0, peak_alive = 0;
	for (int i = 0; i < nsteps; i++) {
		alive += (order[i].fwd ? 1 : -1) * chunk_layers[order[i].chunk];
		if (alive > peak_alive)
			peak_alive = alive;
	}

	bool has_emb = stage == 0, has_head = stage == pl->pp - 1;
	double psi = layers * model_layer_params(m) / t +
		     (has_emb ? model_embedding_params(m) / t : 0) +
		     (has_head ? model_head_params(m) / t + tied_copy : 0);
	int ndp = pl->dp * pl->cp;  /* gradients and optimizer shards span dp x cp */
	/* ZeRO-1/2 all-gather of the updated parameters in buckets of 8 x
	 * bucket_MB (a layer's parameters with per-unit buckets) */
	bool gather = (pl->zero == ZERO_1 || pl->zero == ZERO_2) && ndp > 1;
	double ag_total = psi * dtype_bytes(pr.weight);
	double ag_chunk = pl->bucket_bytes > 0 ? pl->bucket_bytes * 8 : b.param_bytes_layer;
	int ag_count = ag_chunk > 0 ? (int)ceil(ag_total / ag_chunk) : 1;
	if (ag_count < 1)
		ag_count = 1;
	if (gather && pl->overlap_param_gather) {
		/* Megatron-Core's overlap_param_gather: the previous step's
		 * gather runs during this forward, bucket by bucket; the first
		 * forward waits for the first bucket only */
		struct task ag = { .kind = TASK_COLL, .stream = STREAM_PARAM, .cat = CAT_PARAM_COMM,
				   .op = COLL_ALLGATHER, .group = GROUP_DP, .bytes = ag_total / ag_count,
				   .count = 1 };
		b.gate = program_add(p, &ag, NULL, 0);
		if (ag_count > 1) {
			ag.count = ag_count - 1;
			program_add(p, &ag, NULL, 0);
		}
	}

	for (int i = 0; i < nsteps; i++) {
		if (order[i].fwd)
			forward(&b, order[i].mb, order[i].chunk);
		else
			backward(&b, order[i].mb, order[i].chunk, i == last_b[order[i].chunk]);
	}
	flush_bucket(&b);

	/* the two copies of tied embeddings sum their gradients (Megatron's
	 * embedding group: first and last stage) */
	if (tied_copy > 0 && (has_emb || has_head)) {
		struct task t_emb = { .kind = TASK_COLL, .stream = STREAM_DP, .cat = CAT_DP_COMM,
				      .op = COLL_ALLREDUCE, .group = GROUP_EMB, .bytes = tied_copy * gb };
		int id = program_add(p, &t_emb, &b.last, 1);
		XGROW(b.dp_tasks, b.capdp, (size_t)b.ndp + 1);
		b.dp_tasks[b.ndp++] = id;
	}

	/* optimizer after every reduction; ZeRO-1/2 gather updated parameters */
	double psi_opt = psi / (pl->zero >= ZERO_1 ? ndp : 1);
	struct task opt = { .kind = TASK_COMPUTE, .stream = STREAM_COMPUTE, .cat = CAT_OPTIMIZER,
			    .time_s = optimizer_time(pl, &topo->gpu, psi_opt) };
	int *deps = xmalloc((size_t)(b.ndp + 2) * sizeof(int));
	if (b.ndp)
		memcpy(deps, b.dp_tasks, (size_t)b.ndp * sizeof(int));
	deps[b.ndp] = b.last;
	b.last = program_add(p, &opt, deps, b.ndp + 1);
	free(deps);
	if (gather && !pl->overlap_param_gather) {
		/* buckets back to back: one merged task */
		struct task ag = { .kind = TASK_COLL, .stream = STREAM_DP, .cat = CAT_DP_COMM,
				   .op = COLL_ALLGATHER, .group = GROUP_DP, .bytes = ag_total / ag_count,
				   .count = ag_count };
		program_add(p, &ag, &b.last, 1);
	}
	p->peak_inflight = schedule_peak_inflight(order, nsteps);

	if (sr) {
		memset(sr, 0, sizeof(*sr));
		sr->stage = stage;
		sr->layers = layers;
		sr->first_layer = first0;
		sr->has_embedding = has_emb;
		sr->has_head = has_head;
		sr->peak_inflight_chunks = (int)p->peak_inflight;
		sr->inflight = layers ? peak_alive / layers : 0;
		sr->compute_fwd_s = layers * (b.bk.fwd[WL_ATTN] + b.bk.fwd[WL_MLP]) +
				    (has_emb ? b.bk.fwd[WL_EMBED] : 0) + (has_head ? b.bk.fwd[WL_HEAD] : 0);
		sr->compute_bwd_s = layers * (b.bk.bwd[WL_ATTN] + b.bk.bwd[WL_MLP]) +
				    (has_emb ? b.bk.bwd[WL_EMBED] : 0) + (has_head ? b.bk.bwd[WL_HEAD] : 0);
		struct mem_rank_input mi;
		anatomy_input(in, pl, layers, sr->inflight, has_emb, has_head, &mi);
		memory_rank(&mi, &sr->mem);
	}
	rc = 0;
	free(last_b);
	free(chunk_layers);
	free(order);
	free(b.dp_tasks);
	return rc;
}

static double transformer_hardware_flops(const struct inputs *in, const struct plan *pl)
{
	struct wl_shape shp = plan_wl_shape(pl);
	return workload_iteration_flops(inputs_model(in), &shp, pl->recompute,
					(double)pl->global_batch);
}

/* A CNN does no recomputation: its hardware FLOPs are its model FLOPs. */
static double cnn_hardware_flops(const struct inputs *in, const struct plan *pl)
{
	return model_iteration_flops(inputs_model(in), (double)pl->global_batch, (double)pl->seq);
}

/* The program builder of each model architecture (model.h). */
static const struct builder_impl {
	int (*build)(const struct inputs *in, const struct plan *pl, int stage,
		     struct program *p, struct stage_result *sr);
	double (*hardware_flops)(const struct inputs *in, const struct plan *pl);
} builders[MODEL_ARCH_N] = {
	[MODEL_ARCH_DECODER] = { build_transformer_program, transformer_hardware_flops },
	[MODEL_ARCH_CNN] = { build_cnn_program, cnn_hardware_flops },
};

int simulate_build_program(const struct inputs *in, const struct plan *pl, int stage,
			   struct program *p, struct stage_result *sr)
{
	return builders[inputs_model(in)->arch].build(in, pl, stage, p, sr);
}

/* The per-kernel table of the report: every op of every block, one
 * micro-batch, priced again by the same (deterministic) cost source. */
static int collect_ops(const struct inputs *in, const struct plan *pl, struct cost *cost,
		       struct result *r)
{
	const struct model *m = inputs_model(in);
	struct wl_shape shp = plan_wl_shape(pl);
	for (int b = 0; b < WL_NBLOCKS; b++)
		for (int pass = PASS_FWD; pass <= PASS_BWD; pass++) {
			struct op_list l;
			op_list_init(&l);
			if (workload_block(m, &shp, b, pass, RECOMPUTE_NONE, &l)) {
				op_list_finish(&l);
				return -1;
			}
			r->ops = xreallocarray(r->ops, (size_t)(r->nops + l.n), sizeof(*r->ops));
			for (int i = 0; i < l.n; i++) {
				struct op_timing *o = &r->ops[r->nops++];
				const struct op *op = &l.v[i];
				bool measured = false;
				memset(o, 0, sizeof(*o));
				snprintf(o->block, sizeof(o->block), "%s", wl_block_name(b));
				snprintf(o->pass, sizeof(o->pass), "%s", pass == PASS_FWD ? "fwd" : "bwd");
				snprintf(o->name, sizeof(o->name), "%s", op->name);
				o->m = op->m, o->n = op->n, o->k = op->k, o->batch = op->batch;
				o->flops = op->flops;
				o->bytes = op->bytes;
				o->time_s = cost_op_time_ex(cost, op, &measured);
				o->measured = measured;
			}
			op_list_finish(&l);
		}
	return 0;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int simulate_run(const struct inputs *in, const struct plan *pl, struct result *r,
		 struct diag *d)
{
	return simulate_run_observed(in, pl, NULL, r, d);
}

int simulate_run_observed(const struct inputs *in, const struct plan *pl,
			  const struct engine_observer *obs, struct result *r, struct diag *d)
{
	const struct topology *topo = inputs_topology(in);
	const struct model *m = inputs_model(in);
	struct cost *cost = inputs_cost(in);
	struct placement place;
	struct program *progs = NULL, **pp = NULL;
	int rc = -1;
	double t0 = now_s();

	memset(r, 0, sizeof(*r));
	r->plan = *pl;
	r->in = in;
	r->gpus = plan_gpus(pl, in);
	snprintf(r->producer_version, sizeof(r->producer_version), "%s", DDLSIM_VERSION);
	{
		struct diag quiet;
		diag_init(&quiet, NULL);
		int problems = plan_check(pl, in, "plan", &quiet);
		BUG_ON(problems != 0, "simulate_run() given a plan plan_check() rejects: %s", diag_text(&quiet));
		diag_finish(&quiet);
	}
	if (placement_init_cp(&place, pl->tp, pl->cp, pl->dp, pl->pp, pl->order))
		return diag_errf(d, "invalid rank order '%s'", pl->order);

	r->nstages = pl->pp;
	r->stage = xcalloc((size_t)pl->pp, sizeof(*r->stage));
	progs = xcalloc((size_t)pl->pp, sizeof(*progs));
	pp = xcalloc((size_t)pl->pp, sizeof(*pp));
	for (int s = 0; s < pl->pp; s++) {
		program_init(&progs[s]);
		pp[s] = &progs[s];
		if (simulate_build_program(in, pl, s, &progs[s], &r->stage[s])) {
			diag_errf(d, "cannot build the program of stage %d", s);
			goto out;
		}
	}
	if (collect_ops(in, pl, cost, r)) {
		diag_errf(d, "cannot list the kernels of the model");
		goto out;
	}
	r->cost_source = cost_name(cost);
	r->cost_detail = xstrdup(cost_describe(cost));
	const char *names;
	cost_measured_ops(cost, &names);
	r->measured_ops = xstrdup(names);
	cost_roofline_ops(cost, &names);
	r->roofline_ops = xstrdup(names);

	/* Folding needs identical replicas and a symmetric fabric: decided from
	 * the fabric's symmetry under this node count, not from its kind. */
	bool fold = pl->fold == FOLD_ON ||
		    (pl->fold == FOLD_AUTO && topology_is_symmetric(topo, pl->nodes) &&
		     (long)pl->tp * pl->cp * pl->dp > 1 &&
		     /* a forced tree is not exact folded beyond one switch (the
		      * residue of issue 16): simulate every rank */
		     (topo->fabric == FABRIC_NONBLOCKING || strcmp(pl->coll_algo, "tree") != 0));
	r->folded = fold;
	struct engine_job job = { .topo = topo, .nodes = pl->nodes, .pl = &place,
				  .stage_prog = pp, .coll_algo = pl->coll_algo, .fold = fold, .obs = obs };
	if (engine_run(&job, &r->eng, d))
		goto out;

	r->params = model_params(m);
	r->microbatches = (double)plan_microbatches(pl);
	r->iteration_s = r->eng.iteration_s;
	r->samples_per_s = (double)pl->global_batch / r->iteration_s;
	r->tokens_per_s = r->samples_per_s * (double)pl->seq;
	r->model_flops = model_iteration_flops(m, (double)pl->global_batch, (double)pl->seq);
	r->hardware_flops = builders[m->arch].hardware_flops(in, pl);
	r->peak_flops_per_gpu = topo->gpu.peak_flops[pl->precision];
	r->model_tflops_per_gpu = r->model_flops / r->iteration_s / r->gpus / 1e12;
	r->hardware_tflops_per_gpu = r->hardware_flops / r->iteration_s / r->gpus / 1e12;
	r->mfu = r->model_tflops_per_gpu * 1e12 / r->peak_flops_per_gpu;
	r->hfu = r->hardware_tflops_per_gpu * 1e12 / r->peak_flops_per_gpu;

	r->fits = true;
	r->worst_total_bytes = 0;
	for (int s = 0; s < pl->pp; s++) {
		struct stage_result *sr = &r->stage[s];
		int rank = placement_rank(&place, 0, 0, s);
		sr->bubble_s = r->eng.rank[rank].bubble_s;
		sr->bubble_fraction = sr->bubble_s / r->iteration_s;
		if (!sr->mem.fits)
			r->fits = false;
		if (sr->mem.total_bytes > r->worst_total_bytes) {
			r->worst_total_bytes = sr->mem.total_bytes;
			r->worst_stage = s;
		}
	}
	r->shortfall_bytes = r->fits ? 0 : r->worst_total_bytes - topo->gpu.hbm_bytes;
	for (int k = 0; k < CAT_N; k++) {
		double sum = 0;
		for (int i = 0; i < r->eng.nranks; i++)
			sum += r->eng.rank[i].sent_bytes[k];
		r->comm_bytes_per_gpu[k] = sum / r->eng.nranks;
	}
	if (pl->train_tokens > 0) {
		r->time_to_train_s = pl->train_tokens / r->tokens_per_s;
		r->gpu_hours = r->time_to_train_s / 3600 * r->gpus;
		r->cost_usd = r->gpu_hours * pl->usd_per_gpu_hour;
	}
	/* validate after derivation: a figure that reaches a report is finite */
	{
		const struct { const char *name; double v; } figs[] = {
			{ "iteration_time_s", r->iteration_s }, { "tokens_per_s", r->tokens_per_s },
			{ "mfu", r->mfu }, { "hfu", r->hfu }, { "memory total", r->worst_total_bytes },
			{ "time_to_train_s", r->time_to_train_s }, { "cost_usd", r->cost_usd },
		};
		for (size_t i = 0; i < sizeof(figs) / sizeof(figs[0]); i++)
			if (!isfinite(figs[i].v) || figs[i].v < 0) {
				diag_errf(d, "the simulation derived %s = %g from topology '%s' and model '%s': "
					  "an input is out of range (a peak, a bandwidth or a price too large or zero)",
					  figs[i].name, figs[i].v, inputs_topology_path(in), inputs_model_path(in));
				goto out;
			}
	}

	/* rank 0's groups, whole, and the link classes each crosses */
	r->tp_group0 = xcalloc((size_t)pl->tp, sizeof(int));
	r->dp_group0 = xcalloc((size_t)pl->dp * pl->cp, sizeof(int));
	r->cp_group0 = xcalloc((size_t)pl->cp, sizeof(int));
	r->pp_ranks0 = xcalloc((size_t)pl->pp, sizeof(int));
	r->ntp0 = placement_group(&place, GROUP_TP, 0, r->tp_group0);
	r->ndp0 = placement_group(&place, GROUP_DP, 0, r->dp_group0);
	r->npp0 = pl->pp;
	for (int s = 0; s < pl->pp; s++)
		r->pp_ranks0[s] = placement_stage_peer(&place, 0, s);
	r->ncp0 = placement_group(&place, GROUP_CP, 0, r->cp_group0);
	BUG_ON(r->ntp0 != pl->tp || r->ndp0 != pl->dp * pl->cp || r->ncp0 != pl->cp,
	       "placement groups of %d, %d and %d ranks for tp %d, dp %d, cp %d",
	       r->ntp0, r->ndp0, r->ncp0, pl->tp, pl->dp, pl->cp);
	topology_group_links(topo, r->cp_group0, r->ncp0, r->links_cp, sizeof(r->links_cp));
	topology_group_links(topo, r->tp_group0, r->ntp0, r->links_tp, sizeof(r->links_tp));
	topology_group_links(topo, r->dp_group0, r->ndp0, r->links_dp, sizeof(r->links_dp));
	topology_group_links(topo, r->pp_ranks0, r->npp0, r->links_pp, sizeof(r->links_pp));
	rc = 0;
out:
	r->sim_wall_s = now_s() - t0;
	for (int s = 0; s < pl->pp && progs; s++)
		program_finish(&progs[s]);
	free(progs);
	free(pp);
	return rc;
}
