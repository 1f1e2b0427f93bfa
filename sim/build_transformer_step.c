/* build_transformer_step: one forward or backward pass of a micro-batch
 * through a (virtual) stage of the transformer builder (the design:
 * build_transformer.c): each layer's compute with its tensor-parallel
 * (SP, tp_comm_overlap), context-parallel and expert-parallel
 * communication, the ZeRO-3 parameter gathers (per unit or per tensor,
 * DeepSpeed's prefetch) and offloaded parameters' fetches before it,
 * pipeline messages between stages, gradients handed to the reductions. */
#include <math.h>
#include <stdio.h>

#include "build_transformer-private.h"
#include "bug.h"
#include "schedule.h"
#include "xalloc.h"

/* Backward FLOPs of block blk, one micro-batch: twice the forward's, or
 * as executed when frozen weights skip their weight gradients. */
static double bwd_flops(const struct builder *b, enum wl_block blk)
{
	return b->frozen ? b->lk->bk.flops_bwd[blk] : 2 * b->lk->bk.flops_fwd[blk];
}

/* Time and FLOPs of block blk's backward as a B step runs it: less its
 * weight-gradient GEMMs where the schedule splits them off into W. */
static double b_time(const struct builder *b, enum wl_block blk)
{
	return b->lk->bk.bwd[blk] - (b->split ? b->lk->bk.wgrad[blk] : 0);
}

static double b_flops(const struct builder *b, enum wl_block blk)
{
	return bwd_flops(b, blk) - (b->split ? b->lk->bk.flops_wgrad[blk] : 0);
}

/* Build global layer `layer` next: its kind. */
static void set_layer(struct builder *b, int layer)
{
	b->z3.layer = layer;
	b->lk = &b->kind[builder_kind(b, layer)];
}

/* Blocks of virtual stage vs (of pp * v), and the first one's index. */
int builder_vstage_layers(const struct builder *b, int vs, int nv, int *first)
{
	return plan_stage_blocks(b->pl, b->m, vs, nv, first);
}

int builder_vstage(const struct builder *b, int chunk, int *nv)
{
	return schedule_vstage(b->pl->parallel.schedule, b->pp, b->v, b->stage, chunk, nv);
}

/* A pipeline receive of a forward (activation) or backward (gradient)
 * message of chunk: from the previous stage (forward) or the next
 * (backward), the other way round in a reversed pipeline (dualpipe's
 * chunk 1), each on the stream of the neighbour it comes from. */
static int p2p_recv(struct builder *b, bool fwd, int mb, int chunk);

static int tp_coll_bytes(struct builder *b, enum coll_op op, double bytes, int mb, int chunk)
{
	if (b->pl->parallel.tp <= 1)
		return b->stream.last;
	struct task t = { .kind = TASK_COLL, .stream = STREAM_TP, .cat = CAT_TP_COMM,
			  .op = op, .group = GROUP_TP, .bytes = bytes, .mb = mb,
			  .chunk = chunk };
	b->stream.last = builder_add(b, &t, b->stream.last);
	return b->stream.last;
}

/* Megatron-SP backward, after the TP all-gather of the gradient: the
 * column-parallel GEMM's input, kept sharded, is gathered again for the
 * weight gradient beside the data-gradient GEMM (both wait for that
 * all-gather; the TP stream runs the re-gather before the reduce-scatter,
 * which waits for both). Returns the all-gather, what the GEMM waits for. */
static int sp_regather_beside(struct builder *b, int mb, int chunk)
{
	int gather = b->stream.last;
	struct task t = { .kind = TASK_COLL, .stream = STREAM_TP, .cat = CAT_TP_COMM,
			  .op = COLL_ALLGATHER, .group = GROUP_TP, .bytes = b->msg.act_bytes,
			  .mb = mb, .chunk = chunk };
	program_add(b->p, &t, &gather, 1);
	return gather;
}

/* DeepSpeed's PipelineEngine with TP (stack.h pipe_partitioned): each TP
 * rank sends 1/t of a pipeline message and the receiver all-gathers it. */
static bool pipe_partitioned(const struct builder *b)
{
	const struct plan *pl = b->pl;
	return plan_stack(pl)->pipe_partitioned && pl->parallel.tp > 1 && !pl->parallel.sp;
}

/* One pipeline message per rank: the activation (or its gradient), 1/t
 * of it under SP or a partitioning engine. */
static double p2p_bytes(const struct builder *b)
{
	const struct plan *pl = b->pl;
	return b->msg.act_bytes / (pl->parallel.sp || pipe_partitioned(b) ? pl->parallel.tp : 1);
}

/* A pipeline send: DeepSpeed's p2p.send blocks the compute stream until
 * the message is delivered (pipe_partitioned stacks), Megatron's runs on
 * its own stream. */
static void p2p_send(struct builder *b, struct task *s)
{
	s->blocking = pipe_partitioned(b);
	int id = program_add(b->p, s, &b->stream.last, 1);
	if (s->blocking)
		b->stream.last = id;
}

/* A TP collective of one activation tensor (b x s x h). */
static int tp_coll(struct builder *b, enum coll_op op, int mb, int chunk)
{
	return tp_coll_bytes(b, op, op == COLL_ALLGATHER ? b->msg.ag_bytes : b->msg.act_bytes, mb, chunk);
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
	const struct blocks *k = &b->lk->bk;
	int cp = b->pl->parallel.cp, ps = bwd ? PASS_BWD : PASS_FWD;
	/* backward runs the block in reverse: the output projection first */
	double first = bwd ? k->cp_post[ps] + extra_s : k->cp_pre[ps];
	double last = bwd ? k->cp_pre[ps] : k->cp_post[ps];

	builder_compute(b, cat, first, flops, mb, chunk, dep);
	if (b->pl->parallel.cp_comm == CP_A2A) {
		double in = bwd ? b->msg.cp_out_bytes : b->msg.cp_qkv_bytes;   /* dO : q, k, v */
		double out = bwd ? b->msg.cp_qkv_bytes : b->msg.cp_out_bytes;  /* dq dk dv : O */
		int x = cp_coll(b, COLL_ALLTOALL, in, mb, chunk, b->stream.last);
		builder_compute(b, cat, k->cp_diag[ps], 0, mb, chunk, x);
		x = cp_coll(b, COLL_ALLTOALL, out, mb, chunk, b->stream.last);
		builder_compute(b, cat, last, 0, mb, chunk, x);
		return;
	}
	/* the ring: the first exchange starts when Q, K, V exist (forward) or
	 * when dO has reached the core (backward) */
	double bytes = b->msg.cp_kv_bytes * (bwd ? 2 : 1);
	int x = cp_coll(b, COLL_SENDRECV, bytes, mb, chunk, b->stream.last);
	builder_compute(b, cat, k->cp_diag[ps], 0, mb, chunk, b->stream.last);
	for (int s = 1; s < cp; s++) {
		int have = x;
		if (s + 1 < cp)
			x = cp_coll(b, COLL_SENDRECV, bytes, mb, chunk, have);
		builder_compute(b, cat, k->cp_step[ps], 0, mb, chunk, have);
	}
	builder_compute(b, cat, last, 0, mb, chunk, b->stream.last);
}

/* A collective of the MoE dispatcher, waiting for dep: the token
 * all-to-all on the EP group (EP stream) or, op all-gather or
 * reduce-scatter, the routed copies over the expert-TP group (the TP
 * group where etp = tp, TP stream). */
static int moe_coll(struct builder *b, enum coll_op op, int mb, int chunk, int dep)
{
	bool ep = op == COLL_ALLTOALL;
	struct task t = { .kind = TASK_COLL, .stream = ep ? STREAM_EP : STREAM_TP,
			  .cat = ep ? CAT_EP_COMM : CAT_TP_COMM, .op = op, .group = ep ? GROUP_EP : GROUP_TP,
			  .bytes = ep ? b->msg.ep_bytes : b->msg.etp_bytes, .mb = mb, .chunk = chunk };
	return program_add(b->p, &t, &dep, 1);
}

/* Between the router part and the experts (forward: dispatch) or the
 * experts and the rest (forward: combine), after dep: the all-to-all
 * and the expert-TP all-gather / reduce-scatter in the order the pass
 * runs them (build_transformer.c "Mixture of experts"); what the next
 * compute waits for. */
static int moe_exchange(struct builder *b, bool to_experts, int mb, int chunk, int dep)
{
	const struct layer_kind *k = b->lk;
	if (to_experts) {
		if (k->moe_a2a)
			dep = moe_coll(b, COLL_ALLTOALL, mb, chunk, dep);
		return k->etp_gather ? moe_coll(b, COLL_ALLGATHER, mb, chunk, dep) : dep;
	}
	if (k->etp_gather)
		dep = moe_coll(b, COLL_REDUCE_SCATTER, mb, chunk, dep);
	return k->moe_a2a ? moe_coll(b, COLL_ALLTOALL, mb, chunk, dep) : dep;
}

/* The MoE MLP block, one pass (backward in reverse: the combine's
 * gradient goes back first): router part, dispatch, experts, combine,
 * the rest; with shared experts under TP their SP all-gather before the
 * rest and reduce-scatter after it (backward: the gradient's all-gather
 * and the input's re-gather before, the reduce-scatter after). */
static void moe_mlp(struct builder *b, enum task_cat cat, bool bwd, double flops, int mb, int chunk)
{
	const struct blocks *k = &b->lk->bk;
	int ps = bwd ? PASS_BWD : PASS_FWD;
	bool shared = b->lk->shared_sp;
	/* a split backward's B leaves each part's weight gradients to W */
	double wg[3] = { 0, 0, 0 };
	for (int i = 0; i < 3 && bwd && b->split; i++)
		wg[i] = k->moe_wgrad[i];

	if (shared && bwd) {
		tp_coll(b, COLL_ALLGATHER, mb, chunk);
		sp_regather_beside(b, mb, chunk);
	}
	builder_compute(b, cat, bwd ? k->moe_post[ps] - wg[2] : k->moe_pre[ps], flops, mb, chunk,
			b->stream.last);
	if (shared && bwd)
		tp_coll(b, COLL_REDUCE_SCATTER, mb, chunk);
	int x = moe_exchange(b, true, mb, chunk, b->stream.last);
	builder_compute(b, cat, k->moe_mid[ps] - wg[1], 0, mb, chunk, x);
	x = moe_exchange(b, false, mb, chunk, b->stream.last);
	if (shared && !bwd) {
		b->stream.last = x;
		x = tp_coll(b, COLL_ALLGATHER, mb, chunk);
	}
	builder_compute(b, cat, bwd ? k->moe_pre[ps] - wg[0] : k->moe_post[ps], 0, mb, chunk, x);
	if (shared && !bwd)
		tp_coll(b, COLL_REDUCE_SCATTER, mb, chunk);
}

/* The compute of one half-layer: one task, or the attention under CP. */
static void body(struct builder *b, enum task_cat cat, enum wl_block blk, double time_s,
		 double extra_s, double flops, int mb, int chunk, int dep)
{
	if (blk == WL_ATTN && b->pl->parallel.cp > 1)
		attn_cp(b, cat, cat == CAT_BACKWARD, extra_s, flops, mb, chunk, dep);
	else
		builder_compute(b, cat, time_s + extra_s, flops, mb, chunk, dep);
}

/* One ring step of tp_comm_overlap on the TP stream: every TP rank sends
 * `bytes` to its ring neighbour, after dep. */
static int tp_step(struct builder *b, double bytes, int mb, int chunk, int dep)
{
	struct task t = { .kind = TASK_COLL, .stream = STREAM_TP, .cat = CAT_TP_COMM,
			  .op = COLL_SENDRECV, .group = GROUP_TP, .bytes = bytes, .mb = mb,
			  .chunk = chunk };
	return program_add(b->p, &t, &dep, 1);
}

/* A GEMM of gemm_s fed by an all-gather split into tp ring steps (TE
 * userbuffers' ring exchange, CommOverlapP2P all-gather): chunk 0 is the
 * rank's own shard; before chunk k the shard of step k arrives from the
 * neighbour, exchanged while chunk k - 1 computes. */
static void ag_gemm(struct builder *b, enum task_cat cat, double gemm_s, double shard_bytes,
		    int mb, int chunk)
{
	int tp = b->pl->parallel.tp;
	int x = tp_step(b, shard_bytes, mb, chunk, b->stream.last);
	builder_compute(b, cat, gemm_s / tp, 0, mb, chunk, b->stream.last);
	for (int s = 1; s < tp; s++) {
		int have = x;
		if (s + 1 < tp)
			x = tp_step(b, shard_bytes, mb, chunk, have);
		builder_compute(b, cat, gemm_s / tp, 0, mb, chunk, have);
	}
}

/* A GEMM of gemm_s whose output is reduce-scattered in tp ring steps
 * (TE's pipelined/ring-exchange reduce-scatter): after chunk k its partial
 * (plus what came from the neighbour) goes on; the last step overlaps the
 * last chunk. Returns the last step, which whatever follows waits for. */
static int gemm_rs(struct builder *b, enum task_cat cat, double gemm_s, double shard_bytes,
		   int mb, int chunk)
{
	int tp = b->pl->parallel.tp, x = -1;
	for (int s = 0; s < tp; s++) {
		builder_compute(b, cat, gemm_s / tp, 0, mb, chunk, b->stream.last);
		if (s + 1 < tp)
			x = tp_step(b, shard_bytes, mb, chunk, b->stream.last);
	}
	return x;
}

/* One half-layer under tp_comm_overlap (Megatron-Core --tp-comm-overlap,
 * Transformer Engine userbuffers; TE's initialize_ub() methods:
 * "ring_exchange" for qkv/fc1 fprop and proj/fc2 dgrad, "pipeline" or
 * ring exchange for proj/fc2 fprop, "bulk" for qkv/fc1 dgrad and wgrad).
 * Forward: the SP all-gather before the first (column-parallel) GEMM is
 * tp ring steps pipelined with tp GEMM chunks, and the reduce-scatter
 * after the last (row-parallel) GEMM tp - 1 steps pipelined with its
 * chunks. Backward (reverse order): the all-gather of the output gradient
 * pipelined with the last GEMM's dgrad chunks, then its wgrad; the first
 * GEMM's dgrad runs beside the bulk re-gather of its input (for the
 * wgrad), and its wgrad beside the bulk reduce-scatter of the dgrad's
 * output. The replay decides how much of each step is hidden. */
static void half_overlap(struct builder *b, enum task_cat cat, enum wl_block blk,
			 double extra_s, double flops, int mb, int chunk)
{
	const struct blocks *k = &b->lk->bk;
	double ag_shard = b->msg.ag_bytes / b->pl->parallel.tp, rs_shard = b->msg.act_bytes / b->pl->parallel.tp;

	if (cat != CAT_BACKWARD) {
		builder_compute(b, cat, k->pre[PASS_FWD][blk], flops, mb, chunk, b->stream.last);
		ag_gemm(b, cat, k->gfirst[PASS_FWD][blk], ag_shard, mb, chunk);
		builder_compute(b, cat, k->mid[PASS_FWD][blk] + extra_s, 0, mb, chunk, b->stream.last);
		double gemm = k->glast[PASS_FWD][blk] - k->glast_cast[PASS_FWD][blk];
		int rs = gemm_rs(b, cat, k->glast[PASS_FWD][blk] + gemm * (b->msg.rs_margin[blk] - 1),
				 rs_shard, mb, chunk);
		builder_compute(b, cat, k->post[PASS_FWD][blk], 0, mb, chunk, rs);
		return;
	}
	builder_compute(b, cat, k->post[PASS_BWD][blk], flops, mb, chunk, b->stream.last);
	ag_gemm(b, cat, k->glast[PASS_BWD][blk], ag_shard, mb, chunk);
	builder_compute(b, cat, k->wlast[blk], 0, mb, chunk, b->stream.last);
	builder_compute(b, cat, k->mid[PASS_BWD][blk] + extra_s, 0, mb, chunk, b->stream.last);
	struct task t = { .kind = TASK_COLL, .stream = STREAM_TP, .cat = CAT_TP_COMM,
			  .op = COLL_ALLGATHER, .group = GROUP_TP, .bytes = b->msg.act_bytes,
			  .mb = mb, .chunk = chunk };
	int regather = program_add(b->p, &t, &b->stream.last, 1);
	builder_compute(b, cat, k->gfirst[PASS_BWD][blk], 0, mb, chunk, b->stream.last);
	t.op = COLL_REDUCE_SCATTER;
	int rs = program_add(b->p, &t, &b->stream.last, 1);
	builder_compute(b, cat, k->wfirst[blk], 0, mb, chunk, regather);
	builder_compute(b, cat, k->pre[PASS_BWD][blk], 0, mb, chunk, rs);
}

/* One half-layer (attention or MLP) with its tensor-parallel communication.
 * Forward: SP all-gather, compute, SP reduce-scatter / all-reduce.
 * Backward (Megatron): SP all-gather, compute, SP reduce-scatter / all-reduce. */
static void half(struct builder *b, enum task_cat cat, enum wl_block blk, double time_s,
		 double extra_s, double flops, int mb, int chunk)
{
	/* an MoE layer's MLP half: the dispatcher's collectives, no SP
	 * all-gather or reduce-scatter of the hidden states around it */
	if (blk == WL_MLP && b->lk->moe) {
		moe_mlp(b, cat, cat == CAT_BACKWARD, flops, mb, chunk);
		return;
	}
	bool tp = b->pl->parallel.tp > 1;
	/* Under CP the attention half's SP collectives stay unoverlapped.
	 * Megatron-Core core_r0.8.0 overlaps them whatever the CP
	 * (attention.py L106-117, L379-390): a known departure, kept until
	 * the compute optimism it offsets is found (validation/README.md,
	 * "NeMo and Bridge on H100 fp8"; the fix is branch h-nemo-cptp). */
	if (tp && b->pl->parallel.sp && b->pl->communication.tp_comm_overlap &&
	    !(blk == WL_ATTN && b->pl->parallel.cp > 1)) {
		half_overlap(b, cat, blk, extra_s, flops, mb, chunk);
		return;
	}
	if (tp && b->pl->parallel.sp) {
		tp_coll(b, COLL_ALLGATHER, mb, chunk);
		if (cat == CAT_BACKWARD) {
			int gather = sp_regather_beside(b, mb, chunk);
			body(b, cat, blk, time_s, extra_s, flops, mb, chunk, gather);
			tp_coll(b, COLL_REDUCE_SCATTER, mb, chunk);
			return;
		}
	}
	body(b, cat, blk, time_s, extra_s, flops, mb, chunk, b->stream.last);
	if (tp)
		tp_coll(b, b->pl->parallel.sp ? COLL_REDUCE_SCATTER : COLL_ALLREDUCE, mb, chunk);
}

/* ZeRO-3 / FSDP: all-gather the next layer's parameters, issued when the
 * previous layer starts (one layer of prefetch); the layer's first
 * compute task waits for it. Under FSDP2 (stack.fsdp2_copies) that first
 * task is the copy-out of the gathered parameters (cat: the pass). */
static void zero3_gather(struct builder *b, enum task_cat cat, int mb, int chunk)
{
	int mark = b->stream.last;
	if (b->pl->parallel.zero < ZERO_3 || (long)b->pl->parallel.dp * b->pl->parallel.cp <= 1 || b->z3.per_tensor)
		return;
	struct task t = { .kind = TASK_COLL, .stream = STREAM_PARAM, .cat = CAT_PARAM_COMM,
			  .op = COLL_ALLGATHER, .group = b->zgroup, .bytes = b->lk->param_bytes,
			  .launch_s = b->z3.launch_s };
	b->stream.gate = program_add(b->p, &t, &b->stream.prev_mark, 1);
	b->stream.prev_mark = mark;
	if (b->fsdp2)
		builder_compute(b, cat, b->lk->gather_copy_s, 0, mb, chunk, b->stream.last);
}

/* FSDP2's root unit (torchtitan: fully_shard(model) over the layers'
 * units): the elements of the parameters outside the layers, the
 * embedding on the first virtual stage, the final norm and output layer
 * on the last; 0 where b is not FSDP2 or the stage holds neither. */
static double fsdp2_root_params(const struct builder *b, int vs, int nv)
{
	double t = b->pl->parallel.tp;
	if (!b->fsdp2)
		return 0;
	return (vs == 0 ? model_embedding_params(b->m) / t : 0) +
	       (vs == nv - 1 ? (model_head_params(b->m) + model_mtp_extra_params(b->m)) / t + b->tied_copy : 0);
}

/* FSDP2's root unit gathered before the stage's first compute of each
 * forward (its pre-forward, ahead of the layers' gathers on the same
 * stream) and copied out; the root is not resharded after forward, so
 * backward gathers it no more (pytorch/pytorch 005da465 torch/
 * distributed/_composable/fsdp/_fsdp_state.py _lazy_init: "For the
 * root, do not reshard after forward": post_forward_mesh_info None). */
static void fsdp2_root_gather(struct builder *b, int vs, int nv, int mb, int chunk)
{
	double el = fsdp2_root_params(b, vs, nv);
	if (el <= 0)
		return;
	struct task t = { .kind = TASK_COLL, .stream = STREAM_PARAM, .cat = CAT_PARAM_COMM,
			  .op = COLL_ALLGATHER, .group = b->zgroup, .bytes = el * b->z3.wbytes,
			  .launch_s = b->z3.launch_s };
	b->stream.gate = program_add(b->p, &t, &b->stream.last, 1);
	builder_compute(b, CAT_FORWARD,
			builder_copy_time(b, "fsdp_gather_copy_out", el, 2 * el * b->z3.wbytes, 1),
			0, mb, chunk, b->stream.last);
}

/* FSDP2's root unit's gradients: its inputs (token ids) need no
 * gradient, so its post-backward runs in the root's final callback,
 * after every layer's reduce-scatter is issued, as one reduce-scatter of
 * its own (_fsdp_state.py _root_post_backward_final_callback: "Run
 * post-backward in case forward inputs did not require gradient"). */
static void fsdp2_root_reduce(struct builder *b, int vs, int nv, bool reduce)
{
	double el = fsdp2_root_params(b, vs, nv);
	if (el <= 0 || !reduce)
		return;
	builder_flush_bucket(b);
	builder_grads_ready(b, (vs == 0 ? b->grads.grad_bytes_embed : 0) +
			       (vs == nv - 1 ? b->grads.grad_bytes_head : 0), true);
	builder_flush_bucket(b);
}

/* DeepSpeed ZeRO-3's prefetch: the gather of the next tensor is issued
 * when the computing tensor q was fetched, the latest q from which fewer
 * than prefetch_elements gathered elements lie in between
 * (PartitionedParameterCoordinator.fetch_sub_module). Returns the task
 * that precedes q's compute (its start), or the last task when nothing
 * has run yet. */
static int prefetch_dep(const struct builder *b)
{
	double acc = 0;
	int p = -1;
	for (int q = b->z3.nhist - 1; q >= 0 && acc < b->z3.fw->prefetch_elements; q--) {
		p = q;
		acc += b->z3.hist_el[q];
	}
	return p < 0 ? b->stream.last : b->z3.hist_before[p];
}

/* A layer's compute under per-tensor ZeRO-3 (DeepSpeed): one chunk per
 * weight tensor, in proportion to its elements (reverse order in
 * backward), each waiting for its tensor's all-gather unless the layer is
 * still resident (used again within reuse_elements). */
static void tensor_layer(struct builder *b, enum task_cat cat, double time_s, double flops,
			 int mb, int chunk, bool reverse)
{
	if (b->z3.sync) {
		builder_sync_tensor_layer(b, cat, time_s, flops, mb, chunk, reverse);
		return;
	}
	const struct framework *f = b->z3.fw;
	double *lu = &b->z3.last_use[b->z3.layer];
	bool resident = *lu >= 0 && b->z3.used - *lu < f->reuse_elements;
	for (int jj = 0; jj < b->z3.ntens; jj++) {
		int j = reverse ? b->z3.ntens - 1 - jj : jj;
		double el = b->z3.tens[j];
		int gate = -1;
		bool fetch = !resident && el >= f->persist_elements;
		if (fetch) {
			struct task t = { .kind = TASK_COLL, .stream = STREAM_PARAM,
					  .cat = CAT_PARAM_COMM, .op = COLL_ALLGATHER, .group = b->zgroup,
					  .bytes = el * b->z3.wbytes, .launch_s = b->z3.launch_s };
			int dep = prefetch_dep(b);
			gate = program_add(b->p, &t, &dep, 1);
		}
		XGROW(b->z3.hist_before, b->z3.caphist, (size_t)b->z3.nhist + 1);
		XGROW(b->z3.hist_el, b->z3.caphist2, (size_t)b->z3.nhist + 1);
		b->z3.hist_before[b->z3.nhist] = b->stream.last;
		b->z3.hist_el[b->z3.nhist++] = fetch ? el : 0;
		builder_compute(b, cat, time_s * el / b->z3.tens_total, jj == 0 ? flops : 0, mb, chunk, gate);
	}
	b->z3.used += b->z3.tens_total;
	*lu = b->z3.used;
}

static void layer_forward(struct builder *b, enum task_cat cat, int mb, int chunk)
{
	const struct blocks *k = &b->lk->bk;
	if (b->pl->parallel.tp <= 1 && b->pl->parallel.cp <= 1 && !b->lk->moe_a2a) {
		if (b->z3.per_tensor)
			tensor_layer(b, cat, k->fwd[WL_ATTN] + k->fwd[WL_MLP],
				     k->flops_fwd[WL_ATTN] + k->flops_fwd[WL_MLP], mb, chunk, false);
		else
			builder_compute(b, cat, k->fwd[WL_ATTN] + k->fwd[WL_MLP],
				k->flops_fwd[WL_ATTN] + k->flops_fwd[WL_MLP], mb, chunk, b->stream.last);
		return;
	}
	half(b, cat, WL_ATTN, k->fwd[WL_ATTN], 0, k->flops_fwd[WL_ATTN], mb, chunk);
	half(b, cat, WL_MLP, k->fwd[WL_MLP], 0, k->flops_fwd[WL_MLP], mb, chunk);
}

/* Offload of parameters: this layer's 16-bit parameters from host
 * memory, issued when the previous layer starts; the layer waits. */
static void host_fetch(struct builder *b)
{
	int mark = b->stream.last;
	if (b->pl->parallel.offload != OFFLOAD_PARAMS)
		return;
	struct task t = { .kind = TASK_COMPUTE, .stream = STREAM_HOST, .cat = CAT_OFFLOAD,
			  .time_s = b->lk->param_bytes / b->msg.host_bw_Bps };
	b->stream.gate = program_add(b->p, &t, &b->stream.prev_mark, 1);
	b->stream.prev_mark = mark;
}

/* The first forward of a chunk under overlap_param_gather: the next
 * `bytes` of the stage's parameters (counted as their gradients, which
 * share the buckets) are used now, so the compute that follows waits
 * for the all-gather of the bucket they end in. */
static void param_gate(struct builder *b, int chunk, double bytes)
{
	struct param_gather *g = &b->pg;
	if (g->n == 0 || g->done[chunk])
		return;
	g->seen += bytes;
	int i = (int)ceil(g->seen / g->total * g->n - 1e-9) - 1;
	if (i < 0)
		i = 0;
	if (i > g->n - 1)
		i = g->n - 1;
	if (b->stream.gate < 0)
		b->stream.gate = g->ids[i];
}

static int p2p_recv(struct builder *b, bool fwd, int mb, int chunk)
{
	bool rev = schedule_reversed(b->pl->parallel.schedule, chunk);
	struct task r = { .kind = TASK_RECV, .stream = fwd != rev ? STREAM_RECV_PREV : STREAM_RECV_NEXT,
			  .cat = CAT_PP_COMM, .dir = fwd ? P2P_FWD : P2P_BWD, .rev = rev,
			  .bytes = p2p_bytes(b), .mb = mb, .chunk = chunk };
	return program_add(b->p, &r, NULL, 0);
}

void builder_send(struct builder *b, bool fwd, int mb, int chunk)
{
	int nv, vs = builder_vstage(b, chunk, &nv);
	if (fwd ? vs == nv - 1 : vs == 0)
		return;   /* the pipeline's last (first) stage: nothing to send on */
	struct task s = { .kind = TASK_SEND, .stream = STREAM_SEND, .cat = CAT_PP_COMM,
			  .dir = fwd ? P2P_FWD : P2P_BWD,
			  .rev = schedule_reversed(b->pl->parallel.schedule, chunk),
			  .bytes = p2p_bytes(b), .mb = mb, .chunk = chunk };
	p2p_send(b, &s);
}

void builder_forward(struct builder *b, int mb, int chunk)
{
	builder_forward_send(b, mb, chunk, true);
}

void builder_forward_send(struct builder *b, int mb, int chunk, bool send)
{
	const struct plan *pl = b->pl;
	int nv, first, vs = builder_vstage(b, chunk, &nv);
	int nl = builder_vstage_layers(b, vs, nv, &first);
	int dep = b->stream.last;

	if (vs > 0)
		dep = p2p_recv(b, true, mb, chunk);
	fsdp2_root_gather(b, vs, nv, mb, chunk);
	if (vs == 0) {
		param_gate(b, chunk, b->grads.grad_bytes_embed);
		builder_compute(b, CAT_FORWARD, b->lk->bk.fwd[WL_EMBED], 0, mb, chunk, dep);
		tp_coll(b, pl->parallel.sp ? COLL_REDUCE_SCATTER : COLL_ALLREDUCE, mb, chunk);
	} else {
		builder_compute(b, CAT_FORWARD, 0, 0, mb, chunk, dep);
		if (pipe_partitioned(b))        /* PartitionedTensor.full() of the input */
			tp_coll_bytes(b, COLL_ALLGATHER, b->msg.act_bytes, mb, chunk);
	}
	for (int l = 0; l < nl; l++) {
		set_layer(b, first + l);
		b->z3.left = nl - 1 - l;   /* the layers the prefetch may reach */
		zero3_gather(b, CAT_FORWARD, mb, chunk);
		host_fetch(b);
		param_gate(b, chunk, b->lk->grad_bytes);
		layer_forward(b, CAT_FORWARD, mb, chunk);
	}
	if (vs == nv - 1) {
		if (pl->parallel.sp)
			tp_coll(b, COLL_ALLGATHER, mb, chunk);
		param_gate(b, chunk, b->grads.grad_bytes_head);
		builder_compute(b, CAT_FORWARD, b->lk->bk.fwd[WL_HEAD], b->lk->bk.flops_fwd[WL_HEAD], mb, chunk, b->stream.last);
		/* vocabulary-parallel cross entropy: all-reduce of the max, the
		 * target logit and the sum of exponentials (fp32 per token) */
		for (int i = 0; i < 3; i++)
			tp_coll_bytes(b, COLL_ALLREDUCE,
				      4.0 * (double)pl->training.micro_batch * (double)pl->training.seq /
				      pl->parallel.cp, mb, chunk);
	} else if (send) {
		builder_send(b, true, mb, chunk);
	}
	if (b->pg.n)
		b->pg.done[chunk] = 1;
}

/* Layers the rank holds in chunks before chunk: where the chunk's first
 * layer stands in plan_layer_recomputed()'s count. */
static int rank_layers_before(const struct builder *b, int chunk)
{
	int n = 0, first, nv;
	for (int c = 0; c < chunk; c++) {
		int vs = builder_vstage(b, c, &nv);
		n += builder_vstage_layers(b, vs, nv, &first);
	}
	return n;
}

void builder_backward(struct builder *b, int mb, int chunk, bool last_mb)
{
	builder_backward_send(b, mb, chunk, last_mb, true);
}

/* The start of chunk's backward: a later stage receives its output's
 * gradient (DeepSpeed's partitioned pipe: gathers the output and the
 * gradient), the last computes the head and sums its input gradient over
 * TP, its gradients handed over unless FSDP2 or a split backward. */
static void backward_top(struct builder *b, int mb, int chunk, int vs, int nv, bool reduce)
{
	const struct plan *pl = b->pl;
	if (vs < nv - 1) {
		int dep = p2p_recv(b, false, mb, chunk);
		builder_compute(b, CAT_BACKWARD, 0, 0, mb, chunk, dep);
		/* the output restored, then the received gradient (engine.py
		 * _exec_backward_pass: two PartitionedTensor.full()) */
		for (int i = 0; i < 2 && pipe_partitioned(b); i++)
			tp_coll_bytes(b, COLL_ALLGATHER, b->msg.act_bytes, mb, chunk);
		return;
	}
	builder_compute(b, CAT_BACKWARD, b_time(b, WL_HEAD), b_flops(b, WL_HEAD), mb, chunk, b->stream.last);
	/* column-parallel head: its input gradient is summed over TP */
	tp_coll(b, pl->parallel.sp ? COLL_REDUCE_SCATTER : COLL_ALLREDUCE, mb, chunk);
	if (!b->fsdp2 && !b->split)  /* FSDP2: in the final callback */
		builder_grads_ready(b, b->grads.grad_bytes_head, reduce);
}

/* The backward of layer `layer`, the rank's `held`-th: its parameters
 * gathered (ZeRO-3) or fetched (offload), its forward recomputed where the
 * plan recomputes it, its MLP and attention (one task without TP, CP or
 * an MoE all-to-all), its gradients handed over unless split. */
static void backward_layer(struct builder *b, int mb, int chunk, int layer, int held, int l, bool reduce)
{
	const struct plan *pl = b->pl;
	set_layer(b, layer);
	const struct blocks *k = &b->lk->bk;
	/* the prefetch reaches the next layers unless they recompute */
	b->z3.left = pl->parallel.recompute == RECOMPUTE_FULL ? 0 : l;
	zero3_gather(b, CAT_BACKWARD, mb, chunk);
	host_fetch(b);
	if (pl->parallel.recompute == RECOMPUTE_FULL && plan_layer_recomputed(pl, held))
		layer_forward(b, CAT_RECOMPUTE, mb, chunk);
	double sel = pl->parallel.recompute == RECOMPUTE_SELECTIVE ? k->recompute_sel :
		     pl->parallel.recompute == RECOMPUTE_SELECTIVE_OP ? k->recompute_op : 0;
	double tm = b_time(b, WL_MLP), ta = b_time(b, WL_ATTN);
	double fm = b_flops(b, WL_MLP), fa = b_flops(b, WL_ATTN);
	if (pl->parallel.tp <= 1 && pl->parallel.cp <= 1 && !b->lk->moe_a2a && b->z3.per_tensor) {
		tensor_layer(b, CAT_BACKWARD, tm + ta + sel, fm + fa, mb, chunk, true);
	} else if (pl->parallel.tp <= 1 && pl->parallel.cp <= 1 && !b->lk->moe_a2a) {
		builder_compute(b, CAT_BACKWARD, tm + ta + sel, fm + fa, mb, chunk, b->stream.last);
	} else {
		half(b, CAT_BACKWARD, WL_MLP, tm, 0, fm, mb, chunk);
		half(b, CAT_BACKWARD, WL_ATTN, ta, sel, fa, mb, chunk);
	}
	if (!b->split)
		builder_grads_ready2(b, b->lk->grad_bytes, b->lk->grad_bytes_expert, reduce);
}

/* The end of chunk's backward: the first stage computes the embedding's
 * (its gradients handed over unless FSDP2 or split), another sends its
 * input's gradient back when send. */
static void backward_bottom(struct builder *b, int mb, int chunk, int vs, bool send, bool reduce)
{
	if (vs == 0) {
		/* the embedding's input is token ids: no gradient to reduce over
		 * TP; with SP its forward reduce-scatter has an all-gather here */
		if (b->pl->parallel.sp)
			tp_coll(b, COLL_ALLGATHER, mb, chunk);
		builder_compute(b, CAT_BACKWARD, b_time(b, WL_EMBED), 0, mb, chunk, b->stream.last);
		if (!b->fsdp2 && !b->split)
			builder_grads_ready(b, b->grads.grad_bytes_embed, reduce);
	} else if (send) {
		builder_send(b, false, mb, chunk);
	}
}

void builder_backward_send(struct builder *b, int mb, int chunk, bool last_mb, bool send)
{
	const struct plan *pl = b->pl;
	int nv, first, vs = builder_vstage(b, chunk, &nv);
	int nl = builder_vstage_layers(b, vs, nv, &first);
	/* ZeRO-2/3 reduce-scatter gradients after every micro-batch; a split
	 * backward hands its gradients over in W (builder_weight()) */
	bool reduce = !b->split && (last_mb || pl->parallel.zero >= ZERO_2);

	backward_top(b, mb, chunk, vs, nv, reduce);
	int before = rank_layers_before(b, chunk);
	for (int l = nl - 1; l >= 0; l--)
		backward_layer(b, mb, chunk, first + l, before + l, l, reduce);
	backward_bottom(b, mb, chunk, vs, send, reduce);
	fsdp2_root_reduce(b, vs, nv, reduce);
	/* ZeRO-2/3 keep only a shard of the gradients: they cannot wait for
	 * the last micro-batch, whatever overlap_grad_reduce says */
	if (reduce && (pl->communication.overlap_grad_reduce || pl->parallel.zero >= ZERO_2))
		builder_flush_bucket(b);
}

/* W of a split backward (schedule.h zb-h1): the weight-gradient GEMMs of
 * the head, of each layer in backward order and of the embedding (the
 * same blocks' wgrad that B leaves out), each layer's gradients
 * handed to the reductions when its W is done, so that a reduction never
 * starts before the last W of the weights it reduces (plan_check refuses
 * what would need more: ZeRO-3's gathers, FSDP2, tp_comm_overlap's split
 * GEMMs, CP, EP, offloaded parameters). */
void builder_weight(struct builder *b, int mb, int chunk, bool last_mb)
{
	const struct plan *pl = b->pl;
	int nv, first, vs = builder_vstage(b, chunk, &nv);
	int nl = builder_vstage_layers(b, vs, nv, &first);
	bool reduce = last_mb || pl->parallel.zero >= ZERO_2;

	BUG_ON(!b->split || b->fsdp2 || b->z3.per_tensor, "a W step without a split backward");
	if (vs == nv - 1) {
		builder_compute(b, CAT_BACKWARD, b->lk->bk.wgrad[WL_HEAD], b->lk->bk.flops_wgrad[WL_HEAD],
				mb, chunk, b->stream.last);
		builder_grads_ready(b, b->grads.grad_bytes_head, reduce);
	}
	for (int l = nl - 1; l >= 0; l--) {
		set_layer(b, first + l);
		const struct blocks *k = &b->lk->bk;
		builder_compute(b, CAT_BACKWARD, k->wgrad[WL_MLP] + k->wgrad[WL_ATTN],
				k->flops_wgrad[WL_MLP] + k->flops_wgrad[WL_ATTN], mb, chunk, b->stream.last);
		builder_grads_ready2(b, b->lk->grad_bytes, b->lk->grad_bytes_expert, reduce);
	}
	if (vs == 0) {
		/* a ViT's patch embedding is a GEMM; a token embedding has none */
		builder_compute(b, CAT_BACKWARD, b->lk->bk.wgrad[WL_EMBED], b->lk->bk.flops_wgrad[WL_EMBED],
				mb, chunk, b->stream.last);
		builder_grads_ready(b, b->grads.grad_bytes_embed, reduce);
	}
	if (reduce && (pl->communication.overlap_grad_reduce || pl->parallel.zero >= ZERO_2))
		builder_flush_bucket(b);
}
