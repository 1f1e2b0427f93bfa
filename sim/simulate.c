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
 * compute, as PyTorch DDP and Megatron-LM do; TP collectives block compute. */
#include "simulate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "build_cnn.h"
#include "cost.h"
#include "ddlsim-config.h"

/* Priced blocks of one micro-batch. */
struct blocks {
	double fwd[WL_NBLOCKS], bwd[WL_NBLOCKS];
	double recompute_sel;         /* selective: attention core forward again */
	double flops_fwd[WL_NBLOCKS];
	double flops_core;            /* attention core forward flops */
};

struct builder {
	const struct scenario *sc;
	struct program *p;
	struct blocks bk;
	int stage, pp, v;
	double act_bytes;             /* p2p message / TP collective size */
	double ag_bytes;              /* TP/SP all-gather size (fp8 with fp8_comm) */
	double grad_bytes_layer, grad_bytes_embed, grad_bytes_head;
	double param_bytes_layer;
	double pending;               /* bytes in the open bucket */
	int *dp_tasks;                /* reductions, for the optimizer's deps */
	int ndp, capdp;
	int last;                     /* last task, for stream-order deps */
	int gate;                     /* a task the next compute must wait for */
	int prev_mark;                /* last task before the previous layer began */
};

/* The workload shape of the scenario (models/workload.h). */
static struct wl_shape scenario_shape(const struct scenario *sc)
{
	struct wl_shape shp = { (double)sc->micro_batch, (double)sc->seq, sc->tp, sc->sp,
				sc->precision, sc->attention };
	return shp;
}

static int price_blocks(const struct scenario *sc, struct cost *cost, struct blocks *bk)
{
	struct wl_shape shp = scenario_shape(sc);
	struct op_list l;

	memset(bk, 0, sizeof(*bk));
	for (int b = 0; b < WL_NBLOCKS; b++) {
		op_list_init(&l);
		if (workload_block(sc->model, &shp, b, PASS_FWD, RECOMPUTE_NONE, &l))
			goto fail;
		bk->fwd[b] = cost_list_time(cost, &l);
		bk->flops_fwd[b] = op_list_flops(&l);
		op_list_finish(&l);
		op_list_init(&l);
		if (workload_block(sc->model, &shp, b, PASS_BWD, RECOMPUTE_NONE, &l))
			goto fail;
		bk->bwd[b] = cost_list_time(cost, &l);
		op_list_finish(&l);
	}
	/* the selective-recompute extra: attention backward with minus without */
	op_list_init(&l);
	if (workload_block(sc->model, &shp, WL_ATTN, PASS_BWD, RECOMPUTE_SELECTIVE, &l))
		goto fail;
	double with = cost_list_time(cost, &l);
	bk->recompute_sel = with - bk->bwd[WL_ATTN];
	bk->flops_core = op_list_flops(&l);
	op_list_finish(&l);
	op_list_init(&l);
	workload_block(sc->model, &shp, WL_ATTN, PASS_BWD, RECOMPUTE_NONE, &l);
	bk->flops_core -= op_list_flops(&l);
	op_list_finish(&l);
	return 0;
fail:
	op_list_finish(&l);
	return -1;
}

/* Layers of virtual stage vs (of pp * v), and the first layer's index. */
static int vstage_layers(const struct scenario *sc, int vs, int nv, int *first)
{
	long L = sc->model->layers;
	if (sc->explicit_stages) {
		int f = 0;
		for (int i = 0; i < vs; i++)
			f += sc->stage_layers[i];
		*first = f;
		return sc->stage_layers[vs];
	}
	long base = L / nv, extra = L % nv;
	*first = (int)(vs * base + (vs < extra ? vs : extra));
	return (int)(base + (vs < extra ? 1 : 0));
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
	if (b->sc->tp <= 1)
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

/* One half-layer (attention or MLP) with its tensor-parallel communication.
 * Forward: SP all-gather, compute, SP reduce-scatter / all-reduce.
 * Backward (Megatron): SP all-gather, compute, SP reduce-scatter / all-reduce. */
static void half(struct builder *b, enum task_cat cat, double time_s, double flops,
		 int mb, int chunk)
{
	bool tp = b->sc->tp > 1;
	if (tp && b->sc->sp) {
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
			compute(b, cat, time_s, flops, mb, chunk, gather);
			tp_coll(b, COLL_REDUCE_SCATTER, mb, chunk);
			return;
		}
	}
	compute(b, cat, time_s, flops, mb, chunk, b->last);
	if (tp)
		tp_coll(b, b->sc->sp ? COLL_REDUCE_SCATTER : COLL_ALLREDUCE, mb, chunk);
}

static void layer_forward(struct builder *b, enum task_cat cat, int mb, int chunk)
{
	const struct blocks *k = &b->bk;
	if (b->sc->tp <= 1) {
		compute(b, cat, k->fwd[WL_ATTN] + k->fwd[WL_MLP],
			k->flops_fwd[WL_ATTN] + k->flops_fwd[WL_MLP], mb, chunk, b->last);
		return;
	}
	half(b, cat, k->fwd[WL_ATTN], k->flops_fwd[WL_ATTN], mb, chunk);
	half(b, cat, k->fwd[WL_MLP], k->flops_fwd[WL_MLP], mb, chunk);
}

static void dp_reduce(struct builder *b, double bytes)
{
	const struct scenario *sc = b->sc;
	if (sc->dp <= 1 || bytes <= 0)
		return;
	struct task t = { .kind = TASK_COLL, .stream = STREAM_DP, .cat = CAT_DP_COMM,
			  .op = sc->zero >= ZERO_1 ? COLL_REDUCE_SCATTER : COLL_ALLREDUCE,
			  .group = GROUP_DP, .bytes = bytes };
	int id = program_add(b->p, &t, &b->last, 1);
	if (b->ndp == b->capdp) {
		b->capdp = b->capdp ? 2 * b->capdp : 64;
		b->dp_tasks = realloc(b->dp_tasks, (size_t)b->capdp * sizeof(int));
	}
	b->dp_tasks[b->ndp++] = id;
}

/* Gradients of `bytes` became ready on the compute stream (last task). */
static void grads_ready(struct builder *b, double bytes, bool reduce_now)
{
	if (!reduce_now)
		return;
	b->pending += bytes;
	if ((b->sc->overlap_grad_reduce || b->sc->zero >= ZERO_2) &&
	    b->pending >= b->sc->bucket_bytes) {
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
	if (b->sc->zero < ZERO_3 || b->sc->dp <= 1)
		return;
	struct task t = { .kind = TASK_COLL, .stream = STREAM_PARAM, .cat = CAT_PARAM_COMM,
			  .op = COLL_ALLGATHER, .group = GROUP_DP, .bytes = b->param_bytes_layer };
	b->gate = program_add(b->p, &t, &b->prev_mark, 1);
	b->prev_mark = mark;
}

static void forward(struct builder *b, int mb, int chunk)
{
	const struct scenario *sc = b->sc;
	int nv = b->pp * b->v, vs = chunk * b->pp + b->stage, first;
	int nl = vstage_layers(sc, vs, nv, &first);
	int dep = b->last;

	if (vs > 0) {
		struct task r = { .kind = TASK_RECV, .stream = STREAM_RECV_PREV, .cat = CAT_PP_COMM,
				  .dir = P2P_FWD, .bytes = b->act_bytes / (sc->sp ? sc->tp : 1),
				  .mb = mb, .chunk = chunk };
		dep = program_add(b->p, &r, NULL, 0);
	}
	if (vs == 0) {
		compute(b, CAT_FORWARD, b->bk.fwd[WL_EMBED], 0, mb, chunk, dep);
		tp_coll(b, sc->sp ? COLL_REDUCE_SCATTER : COLL_ALLREDUCE, mb, chunk);
	} else
		compute(b, CAT_FORWARD, 0, 0, mb, chunk, dep);
	for (int l = 0; l < nl; l++) {
		zero3_gather(b);
		layer_forward(b, CAT_FORWARD, mb, chunk);
	}
	if (vs == nv - 1) {
		if (sc->sp)
			tp_coll(b, COLL_ALLGATHER, mb, chunk);
		compute(b, CAT_FORWARD, b->bk.fwd[WL_HEAD], b->bk.flops_fwd[WL_HEAD], mb, chunk, b->last);
		/* vocabulary-parallel cross entropy: all-reduce of the max, the
		 * target logit and the sum of exponentials (fp32 per token) */
		for (int i = 0; i < 3; i++)
			tp_coll_bytes(b, COLL_ALLREDUCE, 4.0 * (double)sc->micro_batch * (double)sc->seq,
				      mb, chunk);
	} else {
		struct task s = { .kind = TASK_SEND, .stream = STREAM_SEND, .cat = CAT_PP_COMM,
				  .dir = P2P_FWD, .bytes = b->act_bytes / (sc->sp ? sc->tp : 1),
				  .mb = mb, .chunk = chunk };
		program_add(b->p, &s, &b->last, 1);
	}
}

static void backward(struct builder *b, int mb, int chunk, bool last_mb)
{
	const struct scenario *sc = b->sc;
	const struct blocks *k = &b->bk;
	int nv = b->pp * b->v, vs = chunk * b->pp + b->stage, first;
	int nl = vstage_layers(sc, vs, nv, &first);
	/* ZeRO-2/3 reduce-scatter gradients after every micro-batch */
	bool reduce = last_mb || sc->zero >= ZERO_2;
	int dep = b->last;

	if (vs < nv - 1) {
		struct task r = { .kind = TASK_RECV, .stream = STREAM_RECV_NEXT, .cat = CAT_PP_COMM,
				  .dir = P2P_BWD, .bytes = b->act_bytes / (sc->sp ? sc->tp : 1),
				  .mb = mb, .chunk = chunk };
		dep = program_add(b->p, &r, NULL, 0);
		compute(b, CAT_BACKWARD, 0, 0, mb, chunk, dep);
	} else {
		compute(b, CAT_BACKWARD, k->bwd[WL_HEAD], 2 * k->flops_fwd[WL_HEAD], mb, chunk, dep);
		/* column-parallel head: its input gradient is summed over TP */
		tp_coll(b, sc->sp ? COLL_REDUCE_SCATTER : COLL_ALLREDUCE, mb, chunk);
		grads_ready(b, b->grad_bytes_head, reduce);
	}
	for (int l = nl - 1; l >= 0; l--) {
		zero3_gather(b);
		if (sc->recompute == RECOMPUTE_FULL)
			layer_forward(b, CAT_RECOMPUTE, mb, chunk);
		double sel = sc->recompute == RECOMPUTE_SELECTIVE ? k->recompute_sel : 0;
		if (sc->tp <= 1) {
			compute(b, CAT_BACKWARD, k->bwd[WL_MLP] + k->bwd[WL_ATTN] + sel,
				2 * (k->flops_fwd[WL_MLP] + k->flops_fwd[WL_ATTN]), mb, chunk, b->last);
		} else {
			half(b, CAT_BACKWARD, k->bwd[WL_MLP], 2 * k->flops_fwd[WL_MLP], mb, chunk);
			half(b, CAT_BACKWARD, k->bwd[WL_ATTN] + sel, 2 * k->flops_fwd[WL_ATTN], mb, chunk);
		}
		grads_ready(b, b->grad_bytes_layer, reduce);
	}
	if (vs == 0) {
		/* the embedding's input is token ids: no gradient to reduce over
		 * TP; with SP its forward reduce-scatter has an all-gather here */
		if (sc->sp)
			tp_coll(b, COLL_ALLGATHER, mb, chunk);
		compute(b, CAT_BACKWARD, k->bwd[WL_EMBED], 0, mb, chunk, b->last);
		grads_ready(b, b->grad_bytes_embed, reduce);
	} else {
		struct task s = { .kind = TASK_SEND, .stream = STREAM_SEND, .cat = CAT_PP_COMM,
				  .dir = P2P_BWD, .bytes = b->act_bytes / (sc->sp ? sc->tp : 1),
				  .mb = mb, .chunk = chunk };
		program_add(b->p, &s, &b->last, 1);
	}
	/* ZeRO-2/3 keep only a shard of the gradients: they cannot wait for
	 * the last micro-batch, whatever overlap_grad_reduce says */
	if (reduce && (sc->overlap_grad_reduce || sc->zero >= ZERO_2))
		flush_bucket(b);
}

/* Adam step: read and write fp32 master, momentum, variance and the
 * gradient, write the 16-bit weights: about 34 bytes per local parameter. */
static double optimizer_time(const struct scenario *sc, const struct gpu_spec *g,
			     double params_local)
{
	struct op op = { .kind = OP_MEMBOUND, .pass = PASS_FWD, .dtype = DTYPE_FP32, .batch = 1 };
	snprintf(op.name, sizeof(op.name), "adam_step");
	snprintf(op.membound_kind, sizeof(op.membound_kind), "adam");
	struct precision pr;
	precision_init(&pr, sc->precision, false);
	op.bytes = params_local * pr.optimizer_step_bytes;
	return cost_roofline_time(g, &op);
}

int simulate_build_program(const struct scenario *sc, struct cost *cost, int stage,
			   struct program *p, struct stage_result *sr)
{
	struct builder b = { .sc = sc, .p = p, .stage = stage, .pp = sc->pp, .last = -1,
			   .gate = -1, .prev_mark = -1 };
	const struct model *m = sc->model;
	int m_mb = (int)scenario_microbatches(sc);
	int rc = -1;

	if (m->arch == MODEL_ARCH_CNN)  /* CNNs: data parallelism, own builder */
		return build_cnn_program(sc, cost, p, sr);
	b.v = sc->schedule == SCHED_INTERLEAVED ? sc->interleave : 1;
	if (price_blocks(sc, cost, &b.bk))
		return -1;
	double t = sc->tp;
	struct precision pr;
	precision_init(&pr, sc->precision, sc->fp8_comm);
	b.act_bytes = (double)sc->micro_batch * (double)sc->seq * (double)m->hidden *
		      dtype_bytes(pr.activation);
	b.ag_bytes = b.act_bytes / dtype_bytes(pr.activation) * dtype_bytes(pr.tp_comm);
	double gb = dtype_bytes(sc->grad_dtype);
	b.grad_bytes_layer = model_layer_params(m) / t * gb;
	b.grad_bytes_embed = model_embedding_params(m) / t * gb;
	/* with tied embeddings and a pipeline, the last stage keeps its own
	 * copy of the word embeddings for the LM head (Megatron-LM) */
	double tied_copy = m->tied_embeddings && sc->pp > 1
				   ? (double)m->vocab * (double)m->hidden / t : 0;
	b.grad_bytes_head = (model_head_params(m) / t + tied_copy) * gb;
	b.param_bytes_layer = model_layer_params(m) / t * dtype_bytes(pr.weight);

	struct sched_step *order = schedule_order(sc->schedule, sc->pp, stage, m_mb, b.v);
	if (!order)
		return -1;
	int nsteps = 2 * m_mb * b.v;
	int *last_b = malloc((size_t)b.v * sizeof(int));
	int *chunk_layers = malloc((size_t)b.v * sizeof(int));
	for (int c = 0; c < b.v; c++)
		last_b[c] = -1;
	for (int i = 0; i < nsteps; i++)
		if (!order[i].fwd)
			last_b[order[i].chunk] = i;

	/* stage bookkeeping, memory inputs */
	int nv = sc->pp * b.v, layers = 0, first0 = 0;
	for (int c = 0; c < b.v; c++) {
		int f;
		chunk_layers[c] = vstage_layers(sc, c * sc->pp + stage, nv, &f);
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

	for (int i = 0; i < nsteps; i++) {
		if (order[i].fwd)
			forward(&b, order[i].mb, order[i].chunk);
		else
			backward(&b, order[i].mb, order[i].chunk, i == last_b[order[i].chunk]);
	}
	flush_bucket(&b);

	bool has_emb = stage == 0, has_head = stage == sc->pp - 1;
	/* the two copies of tied embeddings sum their gradients (Megatron's
	 * embedding group: first and last stage) */
	if (tied_copy > 0 && (has_emb || has_head)) {
		struct task t_emb = { .kind = TASK_COLL, .stream = STREAM_DP, .cat = CAT_DP_COMM,
				      .op = COLL_ALLREDUCE, .group = GROUP_EMB, .bytes = tied_copy * gb };
		int id = program_add(p, &t_emb, &b.last, 1);
		if (b.ndp == b.capdp) {
			b.capdp = b.capdp ? 2 * b.capdp : 64;
			b.dp_tasks = realloc(b.dp_tasks, (size_t)b.capdp * sizeof(int));
		}
		b.dp_tasks[b.ndp++] = id;
	}

	/* optimizer after every reduction; ZeRO-1/2 gather updated parameters */
	double psi = layers * model_layer_params(m) / t +
		     (has_emb ? model_embedding_params(m) / t : 0) +
		     (has_head ? model_head_params(m) / t + tied_copy : 0);
	double psi_opt = psi / (sc->zero >= ZERO_1 ? sc->dp : 1);
	struct task opt = { .kind = TASK_COMPUTE, .stream = STREAM_COMPUTE, .cat = CAT_OPTIMIZER,
			    .time_s = optimizer_time(sc, &sc->topo->gpu, psi_opt) };
	int *deps = malloc((size_t)(b.ndp + 2) * sizeof(int));
	if (b.ndp)
		memcpy(deps, b.dp_tasks, (size_t)b.ndp * sizeof(int));
	deps[b.ndp] = b.last;
	b.last = program_add(p, &opt, deps, b.ndp + 1);
	free(deps);
	if ((sc->zero == ZERO_1 || sc->zero == ZERO_2) && sc->dp > 1) {
		/* buckets of 8 x bucket_MB, back to back: one merged task */
		double total = psi * dtype_bytes(pr.weight), chunk = sc->bucket_bytes * 8;
		int count = (int)ceil(total / chunk);
		if (count < 1)
			count = 1;
		struct task ag = { .kind = TASK_COLL, .stream = STREAM_DP, .cat = CAT_DP_COMM,
				   .op = COLL_ALLGATHER, .group = GROUP_DP, .bytes = total / count,
				   .count = count };
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
		struct mem_rank_input mi = {
			.model = m, .gpu = &sc->topo->gpu, .dtype = sc->precision,
			.grad_elem_bytes = dtype_bytes(sc->grad_dtype), .attention = sc->attention,
			.pp = sc->pp, .reserve_fraction = sc->memory_reserve,
			.micro_batch = (double)sc->micro_batch, .seq = (double)sc->seq,
			.tp = sc->tp, .dp = sc->dp, .sp = sc->sp, .zero = sc->zero,
			.recompute = sc->recompute, .layers = layers,
			.has_embedding = has_emb, .has_head = has_head,
			.inflight = sr->inflight, .bucket_bytes = sc->bucket_bytes,
			.prefetch_layers = 1,
		};
		memory_rank(&mi, &sr->mem);
	}
	rc = 0;
	free(last_b);
	free(chunk_layers);
	free(order);
	free(b.dp_tasks);
	return rc;
}

/* The per-kernel table of the report: every op of every block, one
 * micro-batch, priced again by the same (deterministic) cost source. */
static int collect_ops(const struct scenario *sc, struct cost *cost, struct result *r)
{
	struct wl_shape shp = scenario_shape(sc);
	for (int b = 0; b < WL_NBLOCKS; b++)
		for (int pass = PASS_FWD; pass <= PASS_BWD; pass++) {
			struct op_list l;
			op_list_init(&l);
			if (workload_block(sc->model, &shp, b, pass, RECOMPUTE_NONE, &l)) {
				op_list_finish(&l);
				return -1;
			}
			struct op_timing *nv = realloc(r->ops, (size_t)(r->nops + l.n) * sizeof(*nv));
			if (!nv) {
				op_list_finish(&l);
				return -1;
			}
			r->ops = nv;
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

void result_finish(struct result *r)
{
	free(r->ops);
	free(r->stage);
	engine_result_finish(&r->eng);
	memset(r, 0, sizeof(*r));
}

int simulate_run(const struct scenario *sc, struct result *r, struct diag *d)
{
	const struct topology *topo = sc->topo;
	const struct model *m = sc->model;
	struct placement pl;
	struct program *progs = NULL, **pp = NULL;
	struct cost *cost = NULL;
	int rc = -1;
	double t0 = now_s();

	memset(r, 0, sizeof(*r));
	r->sc = sc;
	snprintf(r->producer_version, sizeof(r->producer_version), "%s", DDLSIM_VERSION);
	if (placement_init(&pl, sc->tp, sc->dp, sc->pp, sc->order))
		return diag_err(d, sc->path, "/parallel/order", "invalid rank order '%s'", sc->order);
	cost = sc->cost == COST_PROFILE
		       ? cost_profile_create(sc->profile_path, &topo->gpu, d)
		       : cost_roofline_create(&topo->gpu);
	if (!cost)
		return -1;

	r->nstages = sc->pp;
	r->stage = calloc((size_t)sc->pp, sizeof(*r->stage));
	progs = calloc((size_t)sc->pp, sizeof(*progs));
	pp = calloc((size_t)sc->pp, sizeof(*pp));
	for (int s = 0; s < sc->pp; s++) {
		program_init(&progs[s]);
		pp[s] = &progs[s];
		if (simulate_build_program(sc, cost, s, &progs[s], &r->stage[s])) {
			diag_errf(d, "cannot build the program of stage %d", s);
			goto out;
		}
	}
	if (collect_ops(sc, cost, r)) {
		diag_errf(d, "cannot list the kernels of the model");
		goto out;
	}
	r->cost_source = cost_name(cost);
	snprintf(r->cost_detail, sizeof(r->cost_detail), "%s", cost_describe(cost));
	const char *names;
	cost_measured_ops(cost, &names);
	snprintf(r->measured_ops, sizeof(r->measured_ops), "%s", names);
	cost_roofline_ops(cost, &names);
	snprintf(r->roofline_ops, sizeof(r->roofline_ops), "%s", names);

	/* Folding needs identical replicas and a symmetric fabric. */
	bool fold = sc->fold == FOLD_ON ||
		    (sc->fold == FOLD_AUTO && topo->fabric == FABRIC_NONBLOCKING &&
		     sc->tp * sc->dp > 1);
	r->folded = fold;
	struct engine_job job = { .topo = topo, .nodes = sc->nodes, .pl = &pl,
				  .stage_prog = pp, .coll_algo = sc->coll_algo, .fold = fold };
	if (engine_run(&job, &r->eng, d))
		goto out;

	r->params = model_params(m);
	r->microbatches = (double)scenario_microbatches(sc);
	r->iteration_s = r->eng.iteration_s;
	r->samples_per_s = (double)sc->global_batch / r->iteration_s;
	r->tokens_per_s = r->samples_per_s * (double)sc->seq;
	r->model_flops = model_iteration_flops(m, (double)sc->global_batch, (double)sc->seq);
	if (m->arch == MODEL_ARCH_CNN)
		r->hardware_flops = r->model_flops;
	else {
		struct wl_shape shp = scenario_shape(sc);
		r->hardware_flops = workload_iteration_flops(m, &shp, sc->recompute,
							     (double)sc->global_batch);
	}
	r->peak_flops_per_gpu = topo->gpu.peak_flops[sc->precision];
	r->model_tflops_per_gpu = r->model_flops / r->iteration_s / sc->gpus / 1e12;
	r->hardware_tflops_per_gpu = r->hardware_flops / r->iteration_s / sc->gpus / 1e12;
	r->mfu = r->model_tflops_per_gpu * 1e12 / r->peak_flops_per_gpu;
	r->hfu = r->hardware_tflops_per_gpu * 1e12 / r->peak_flops_per_gpu;

	r->fits = true;
	r->worst_total_bytes = 0;
	for (int s = 0; s < sc->pp; s++) {
		struct stage_result *sr = &r->stage[s];
		int rank = placement_rank(&pl, 0, 0, s);
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
	if (sc->train_tokens > 0) {
		r->time_to_train_s = sc->train_tokens / r->tokens_per_s;
		r->gpu_hours = r->time_to_train_s / 3600 * sc->gpus;
		r->cost_usd = r->gpu_hours * sc->usd_per_gpu_hour;
	}
	snprintf(r->order, sizeof(r->order), "%s", sc->order);
	{
		int n = sc->tp > sc->dp ? sc->tp : sc->dp;
		int *g = malloc((size_t)(n > sc->pp ? n : sc->pp) * sizeof(*g));
		int k = placement_group(&pl, GROUP_TP, 0, g);
		topology_group_links(topo, g, k, r->links_tp, sizeof(r->links_tp));
		k = placement_group(&pl, GROUP_DP, 0, g);
		topology_group_links(topo, g, k, r->links_dp, sizeof(r->links_dp));
		for (int s = 0; s < sc->pp; s++)
			g[s] = placement_stage_peer(&pl, 0, s);
		topology_group_links(topo, g, sc->pp, r->links_pp, sizeof(r->links_pp));
		free(g);
	}
	r->ntp0 = sc->tp <= 64 ? placement_group(&pl, GROUP_TP, 0, r->tp_group0) : 0;
	r->ndp0 = sc->dp <= 64 ? placement_group(&pl, GROUP_DP, 0, r->dp_group0) : 0;
	if (sc->pp <= 64) {
		r->npp0 = sc->pp;
		for (int s = 0; s < sc->pp; s++)
			r->pp_ranks0[s] = placement_stage_peer(&pl, 0, s);
	}
	rc = 0;
out:
	r->sim_wall_s = now_s() - t0;
	for (int s = 0; s < sc->pp && progs; s++)
		program_finish(&progs[s]);
	free(progs);
	free(pp);
	cost_destroy(cost);
	return rc;
}
