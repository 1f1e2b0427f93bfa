/* build_transformer: the per-rank program of a transformer (decoder)
 * training step under TP/SP/CP/EP/PP/DP/ZeRO, recompute and offload (see
 * build_transformer.h).
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
 * reduced over dp x cp ranks (GROUP_DP, placement.h).
 *
 * tp_comm_overlap (Megatron-Core --tp-comm-overlap, Transformer Engine
 * userbuffers; see half_overlap()): each half-layer's first and last GEMM
 * are priced apart (blocks.c) and split into tp chunks
 * pipelined with tp ring steps of one shard on the TP stream.
 *
 * ZeRO-3 granularity follows the framework preset (models/framework.h):
 * per unit (FSDP: one all-gather per layer, the next prefetched) or per
 * weight tensor (DeepSpeed: the layer's compute split per tensor, each
 * waiting for its gather, issued within the prefetch window and skipped
 * while the layer is still resident); every data-parallel collective
 * carries the preset's host launch cost (task.launch_s).
 *
 * Mixture of experts (models/moe.h, workload.h): with ep > 1 the MLP half
 * of a layer is the router part, the token dispatch all-to-all over the EP
 * group (EP stream, blocking compute, as Megatron-Core's alltoall token
 * dispatcher), the local experts' grouped GEMMs, the combine all-to-all
 * and the rest (unpermute, shared experts, residual); backward runs it in
 * reverse with the two all-to-alls again (the gradients of the combined
 * and of the dispatched tokens). Each all-to-all moves N = T k h bytes x
 * the busiest rank's load per rank (T: the rank's tokens, / t with
 * sequence parallelism), and the expert GEMMs are priced for the busiest
 * rank, so the group runs at its slowest rank's pace. Dense gradients are
 * reduced over GROUP_DP, expert gradients over GROUP_EDP (dp / ep x cp);
 * the optimizer shards and the ZeRO-1/2 gathers follow the same split.
 * An MoE model's first_dense_layers (models/model.h; DeepSeek-V3's first
 * three) are built as dense layers (struct layer_kind): their blocks
 * priced with the dense MLP of ffn_size, no all-to-alls, their whole
 * gradients over GROUP_DP, their parameters and activations in the
 * stage's memory as a dense model's.
 *
 * CPU offload (plan offload; ZeRO-Offload, Ren et al. 2021, section 4.1:
 * gradients to the CPU as they are produced, the Adam step on the CPU,
 * updated 16-bit parameters back before the next forward): every gradient
 * reduction is followed by a device-to-host copy of this rank's share
 * (the reduce-scatter's shard under ZeRO >= 1) on the host stream, so the
 * copies overlap the rest of backward bucket by bucket; after the last
 * one the CPU runs Adam on the rank's optimizer shard at
 * OFFLOAD_CPU_ADAM_PARAMS_PER_S shared by the node's GPUs, then the
 * updated parameters go back host-to-device and the (now empty) GPU
 * optimizer step waits for them. A copy of B bytes takes B / host_bw
 * (topology_host_bw(): the GPU's PCIe/C2C link, one direction at a time:
 * copies of both directions queue on the one host stream, and the link is
 * not shared with NIC traffic in the platform). "optimizer+params"
 * (ZeRO-Infinity's offload_param) also keeps the 16-bit parameters in host
 * memory: each layer's parameters are copied host-to-device before its
 * forward and its backward (one layer of prefetch, as ZeRO-3 gathers),
 * and nothing is copied back after the step (the CPU updated them where
 * they live). Embedding and head stay on the GPU. */

/* CPU Adam throughput of one node: DeepSpeed's CPU-Adam updates 10 B
 * parameters in 2.57 s (Ren et al. 2021, "ZeRO-Offload: Democratizing
 * Billion-Scale Model Training", USENIX ATC, Table 3, CPU-Adam column,
 * the DGX-2's two Xeon sockets), 3.89e9 parameters/s; the GPUs of a node
 * share it (each rank's process updates its shard on its share of the
 * cores). The table could not be re-read from a stored copy since (the
 * paper's text is not in the project's reference corpus); the one other
 * public figure found, from CPU-Adam's author (DeepSpeed PR #735,
 * 2021-02-08: an 11.6B-parameter GPT-2 step in 8.2 s, host unstated),
 * is 1.41e9 parameters/s, 2.8x slower. CPU Adam is bound by the host's
 * memory bandwidth and cores, which the topology does not describe yet:
 * treat offload times as +-3x until a host is measured. */
#define OFFLOAD_CPU_ADAM_PARAMS_PER_S (10e9 / 2.57)
#include "build_transformer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anatomy.h"
#include "blocks.h"
#include "bug.h"
#include "cost.h"
#include "framework.h"
#include "stack.h"
#include "xalloc.h"

/* What differs between an MoE layer and a dense one (an MoE model's
 * first_dense_layers, models/model.h): its priced blocks, whether its MLP
 * has the all-to-alls, the sizes of its gradients and parameters. */
struct layer_kind {
	struct blocks bk;
	bool moe_a2a;                 /* MoE with ep > 1: the MLP half has all-to-alls */
	double grad_bytes;            /* one layer's dense gradients (of this rank) */
	double grad_bytes_expert;     /* MoE: one layer's expert gradients (of this rank) */
	double param_bytes;           /* one layer's parameters (ZeRO-3, offload fetch) */
	double gather_copy_s;         /* FSDP2: the copy-out after the layer's all-gather */
};

struct builder {
	const struct plan *pl;
	const struct model *m;
	struct program *p;
	/* [0] the model's layer (an MoE model's MoE layer), [1] an MoE
	 * model's dense first layers, the first n_dense of the model */
	struct layer_kind kind[2];
	const struct layer_kind *lk;  /* the layer being built (embedding, head: any) */
	long n_dense;
	int stage, pp, v;
	double act_bytes;             /* p2p message / TP collective size */
	double ag_bytes;              /* TP/SP all-gather size (fp8 with fp8_comm) */
	double grad_bytes_embed, grad_bytes_head;
	double cp_kv_bytes;           /* ring: one K/V block of this rank */
	double cp_qkv_bytes, cp_out_bytes; /* a2a: q, k, v and the output */
	double pending;               /* bytes in the open bucket */
	double ep_bytes;              /* MoE: N of one dispatch / combine all-to-all */
	double pending_e;             /* expert bytes in the open bucket */
	double host_bw_Bps;           /* offload: the GPU's host link */
	int *dp_tasks;                /* reductions, for the optimizer's deps */
	int ndp;
	size_t capdp;
	int last;                     /* last task, for stream-order deps */
	int gate;                     /* a task the next compute must wait for */
	int prev_mark;                /* last task before the previous layer began */
	/* framework granularity (framework.h; fw NULL: per layer, no launch cost) */
	const struct framework *fw;
	double launch_s;              /* per data-parallel collective call */
	bool per_tensor;              /* ZeRO-3 gathers per parameter tensor, chunked compute */
	int ntens;                    /* weight tensors of a layer (this rank's part) */
	double tens[8];               /* their elements */
	double tens_total;
	double wbytes;                /* bytes per gathered parameter */
	int layer;                    /* global index of the layer being built */
	double used;                  /* parameter elements used so far (reuse distance) */
	double *last_use;             /* [model layers] `used` after a layer's last use, -1 */
	int *hist_before;             /* per computed tensor chunk: the task before it */
	double *hist_el;              /* and the elements its gather fetched (0: resident) */
	int nhist;
	size_t caphist, caphist2;
	struct precision pr;          /* the plan's dtypes (fp8 comm and params applied) */
	double gb;                    /* bytes per gradient element */
	double le;                    /* expert parameters of a layer (0: dense) */
	double tied_copy;             /* last stage's own copy of tied embeddings (elements) */
	struct cost *cost;            /* prices the FSDP2 copies */
	bool fsdp2;                   /* ZeRO-3 as FSDP2 runs it (stack.fsdp2_copies) */
	bool frozen;                  /* LoRA / QLoRA: only the adapters have gradients */
};

/* Backward FLOPs of block blk, one micro-batch: twice the forward's, or
 * as executed when frozen weights skip their weight gradients. */
static double bwd_flops(const struct builder *b, enum wl_block blk)
{
	return b->frozen ? b->lk->bk.flops_bwd[blk] : 2 * b->lk->bk.flops_fwd[blk];
}

/* Build global layer `layer` next: its kind. */
static void set_layer(struct builder *b, int layer)
{
	b->layer = layer;
	b->lk = &b->kind[layer < b->n_dense ? 1 : 0];
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
	if (b->pl->parallel.tp <= 1)
		return b->last;
	struct task t = { .kind = TASK_COLL, .stream = STREAM_TP, .cat = CAT_TP_COMM,
			  .op = op, .group = GROUP_TP, .bytes = bytes, .mb = mb,
			  .chunk = chunk };
	b->last = add(b, &t, b->last);
	return b->last;
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
	return b->act_bytes / (pl->parallel.sp || pipe_partitioned(b) ? pl->parallel.tp : 1);
}

/* A pipeline send: DeepSpeed's p2p.send blocks the compute stream until
 * the message is delivered (pipe_partitioned stacks), Megatron's runs on
 * its own stream. */
static void p2p_send(struct builder *b, struct task *s)
{
	s->blocking = pipe_partitioned(b);
	int id = program_add(b->p, s, &b->last, 1);
	if (s->blocking)
		b->last = id;
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
	const struct blocks *k = &b->lk->bk;
	int cp = b->pl->parallel.cp, ps = bwd ? PASS_BWD : PASS_FWD;
	/* backward runs the block in reverse: the output projection first */
	double first = bwd ? k->cp_post[ps] + extra_s : k->cp_pre[ps];
	double last = bwd ? k->cp_pre[ps] : k->cp_post[ps];

	compute(b, cat, first, flops, mb, chunk, dep);
	if (b->pl->parallel.cp_comm == CP_A2A) {
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

/* A token all-to-all on the EP group (EP stream) waiting for dep. */
static int ep_coll(struct builder *b, int mb, int chunk, int dep)
{
	struct task t = { .kind = TASK_COLL, .stream = STREAM_EP, .cat = CAT_EP_COMM,
			  .op = COLL_ALLTOALL, .group = GROUP_EP, .bytes = b->ep_bytes, .mb = mb,
			  .chunk = chunk };
	return program_add(b->p, &t, &dep, 1);
}

/* The MoE MLP block with its dispatch and combine, one pass (backward in
 * reverse: the combine's gradient goes back first). */
static void moe_mlp(struct builder *b, enum task_cat cat, bool bwd, double flops, int mb,
		    int chunk, int dep)
{
	const struct blocks *k = &b->lk->bk;
	int ps = bwd ? PASS_BWD : PASS_FWD;

	compute(b, cat, bwd ? k->moe_post[ps] : k->moe_pre[ps], flops, mb, chunk, dep);
	int x = ep_coll(b, mb, chunk, b->last);
	compute(b, cat, k->moe_mid[ps], 0, mb, chunk, x);
	x = ep_coll(b, mb, chunk, b->last);
	compute(b, cat, bwd ? k->moe_pre[ps] : k->moe_post[ps], 0, mb, chunk, x);
}

/* The compute of one half-layer: one task, or the attention under CP. */
static void body(struct builder *b, enum task_cat cat, enum wl_block blk, double time_s,
		 double extra_s, double flops, int mb, int chunk, int dep)
{
	if (blk == WL_ATTN && b->pl->parallel.cp > 1)
		attn_cp(b, cat, cat == CAT_BACKWARD, extra_s, flops, mb, chunk, dep);
	else if (blk == WL_MLP && b->lk->moe_a2a)
		moe_mlp(b, cat, cat == CAT_BACKWARD, flops, mb, chunk, dep);
	else
		compute(b, cat, time_s + extra_s, flops, mb, chunk, dep);
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
	int x = tp_step(b, shard_bytes, mb, chunk, b->last);
	compute(b, cat, gemm_s / tp, 0, mb, chunk, b->last);
	for (int s = 1; s < tp; s++) {
		int have = x;
		if (s + 1 < tp)
			x = tp_step(b, shard_bytes, mb, chunk, have);
		compute(b, cat, gemm_s / tp, 0, mb, chunk, have);
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
		compute(b, cat, gemm_s / tp, 0, mb, chunk, b->last);
		if (s + 1 < tp)
			x = tp_step(b, shard_bytes, mb, chunk, b->last);
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
	double ag_shard = b->ag_bytes / b->pl->parallel.tp, rs_shard = b->act_bytes / b->pl->parallel.tp;

	if (cat != CAT_BACKWARD) {
		compute(b, cat, k->pre[PASS_FWD][blk], flops, mb, chunk, b->last);
		ag_gemm(b, cat, k->gfirst[PASS_FWD][blk], ag_shard, mb, chunk);
		compute(b, cat, k->mid[PASS_FWD][blk] + extra_s, 0, mb, chunk, b->last);
		int rs = gemm_rs(b, cat, k->glast[PASS_FWD][blk], rs_shard, mb, chunk);
		compute(b, cat, k->post[PASS_FWD][blk], 0, mb, chunk, rs);
		return;
	}
	compute(b, cat, k->post[PASS_BWD][blk], flops, mb, chunk, b->last);
	ag_gemm(b, cat, k->glast[PASS_BWD][blk], ag_shard, mb, chunk);
	compute(b, cat, k->wlast[blk], 0, mb, chunk, b->last);
	compute(b, cat, k->mid[PASS_BWD][blk] + extra_s, 0, mb, chunk, b->last);
	struct task t = { .kind = TASK_COLL, .stream = STREAM_TP, .cat = CAT_TP_COMM,
			  .op = COLL_ALLGATHER, .group = GROUP_TP, .bytes = b->act_bytes,
			  .mb = mb, .chunk = chunk };
	int regather = program_add(b->p, &t, &b->last, 1);
	compute(b, cat, k->gfirst[PASS_BWD][blk], 0, mb, chunk, b->last);
	t.op = COLL_REDUCE_SCATTER;
	int rs = program_add(b->p, &t, &b->last, 1);
	compute(b, cat, k->wfirst[blk], 0, mb, chunk, regather);
	compute(b, cat, k->pre[PASS_BWD][blk], 0, mb, chunk, rs);
}

/* One half-layer (attention or MLP) with its tensor-parallel communication.
 * Forward: SP all-gather, compute, SP reduce-scatter / all-reduce.
 * Backward (Megatron): SP all-gather, compute, SP reduce-scatter / all-reduce. */
static void half(struct builder *b, enum task_cat cat, enum wl_block blk, double time_s,
		 double extra_s, double flops, int mb, int chunk)
{
	bool tp = b->pl->parallel.tp > 1;
	if (tp && b->pl->parallel.sp && b->pl->communication.tp_comm_overlap &&
	    !(blk == WL_ATTN && b->pl->parallel.cp > 1)) {
		half_overlap(b, cat, blk, extra_s, flops, mb, chunk);
		return;
	}
	if (tp && b->pl->parallel.sp) {
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
		tp_coll(b, b->pl->parallel.sp ? COLL_REDUCE_SCATTER : COLL_ALLREDUCE, mb, chunk);
}

/* Ranks that hold copies of a gradient of group g (GROUP_DP, GROUP_EDP). */
static long grad_ranks(const struct plan *pl, enum group_kind g)
{
	return (long)pl->parallel.dp * pl->parallel.cp / (g == GROUP_EDP ? pl->parallel.ep : 1);
}

/* Offload: a copy of bytes over the GPU's host link after dep. */
static int host_copy(struct builder *b, double bytes, int dep)
{
	struct task t = { .kind = TASK_COMPUTE, .stream = STREAM_HOST, .cat = CAT_OFFLOAD,
			  .time_s = bytes / b->host_bw_Bps };
	return program_add(b->p, &t, &dep, 1);
}

/* The time of a copy kernel moving bytes over elements (stack pieces
 * FSDP2 runs around its collectives), priced by the cost source. */
static double copy_time(struct builder *b, const char *name, double elements, double bytes)
{
	struct op op = { .kind = OP_MEMBOUND, .pass = PASS_FWD, .dtype = DTYPE_BF16,
			 .batch = 1, .m = elements, .bytes = bytes };
	snprintf(op.name, sizeof(op.name), "%s", name);
	snprintf(op.membound_kind, sizeof(op.membound_kind), "copy_fwd");
	return cost_op_time(b->cost, &op);
}

static void dp_reduce_group(struct builder *b, double bytes, enum group_kind g)
{
	const struct plan *pl = b->pl;
	long n = grad_ranks(pl, g);
	if (bytes <= 0)
		return;
	if (n <= 1) {
		if (pl->parallel.offload != OFFLOAD_NONE)
			host_copy(b, bytes, b->last);
		return;
	}
	int dep = b->last;
	if (b->fsdp2) {
		/* FSDP2: the unsharded 16-bit gradients concatenated into the
		 * reduce-scatter buffer (reduce dtype), on its stream */
		double el = bytes / b->gb;
		struct task c = { .kind = TASK_COMPUTE, .stream = STREAM_DP, .cat = CAT_DP_COMM,
				  .time_s = copy_time(b, "fsdp_rs_copy_in", el,
						      el * (dtype_bytes(DTYPE_BF16) + b->gb)) };
		dep = program_add(b->p, &c, &dep, 1);
	}
	struct task t = { .kind = TASK_COLL, .stream = STREAM_DP, .cat = CAT_DP_COMM,
			  .op = pl->parallel.zero >= ZERO_1 ? COLL_REDUCE_SCATTER : COLL_ALLREDUCE,
			  .group = g, .bytes = bytes, .launch_s = b->launch_s };
	int id = program_add(b->p, &t, &dep, 1);
	XGROW(b->dp_tasks, b->capdp, (size_t)b->ndp + 1);
	b->dp_tasks[b->ndp++] = id;
	if (pl->parallel.offload != OFFLOAD_NONE)
		host_copy(b, bytes / (pl->parallel.zero >= ZERO_1 ? n : 1), id);
}

static void dp_reduce(struct builder *b, double bytes)
{
	dp_reduce_group(b, bytes, GROUP_DP);
}

/* Gradients of `bytes` (dense) and `expert` (MoE experts) became ready
 * on the compute stream (last task). */
static void grads_ready2(struct builder *b, double bytes, double expert, bool reduce_now)
{
	bool overlap = b->pl->communication.overlap_grad_reduce || b->pl->parallel.zero >= ZERO_2;
	if (!reduce_now)
		return;
	b->pending += bytes;
	if (overlap && b->pending >= b->pl->communication.bucket_bytes) {
		dp_reduce(b, b->pending);
		b->pending = 0;
	}
	b->pending_e += expert;
	if (overlap && b->pending_e >= b->pl->communication.bucket_bytes) {
		dp_reduce_group(b, b->pending_e, GROUP_EDP);
		b->pending_e = 0;
	}
}

static void grads_ready(struct builder *b, double bytes, bool reduce_now)
{
	grads_ready2(b, bytes, 0, reduce_now);
}

static void flush_bucket(struct builder *b)
{
	dp_reduce(b, b->pending);
	b->pending = 0;
	dp_reduce_group(b, b->pending_e, GROUP_EDP);
	b->pending_e = 0;
}

/* ZeRO-3 / FSDP: all-gather the next layer's parameters, issued when the
 * previous layer starts (one layer of prefetch); the layer's first
 * compute task waits for it. Under FSDP2 (stack.fsdp2_copies) that first
 * task is the copy-out of the gathered parameters (cat: the pass). */
static void zero3_gather(struct builder *b, enum task_cat cat, int mb, int chunk)
{
	int mark = b->last;
	if (b->pl->parallel.zero < ZERO_3 || (long)b->pl->parallel.dp * b->pl->parallel.cp <= 1 || b->per_tensor)
		return;
	struct task t = { .kind = TASK_COLL, .stream = STREAM_PARAM, .cat = CAT_PARAM_COMM,
			  .op = COLL_ALLGATHER, .group = GROUP_DP, .bytes = b->lk->param_bytes,
			  .launch_s = b->launch_s };
	b->gate = program_add(b->p, &t, &b->prev_mark, 1);
	b->prev_mark = mark;
	if (b->fsdp2)
		compute(b, cat, b->lk->gather_copy_s, 0, mb, chunk, b->last);
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
	for (int q = b->nhist - 1; q >= 0 && acc < b->fw->prefetch_elements; q--) {
		p = q;
		acc += b->hist_el[q];
	}
	return p < 0 ? b->last : b->hist_before[p];
}

/* A layer's compute under per-tensor ZeRO-3 (DeepSpeed): one chunk per
 * weight tensor, in proportion to its elements (reverse order in
 * backward), each waiting for its tensor's all-gather unless the layer is
 * still resident (used again within reuse_elements). */
static void tensor_layer(struct builder *b, enum task_cat cat, double time_s, double flops,
			 int mb, int chunk, bool reverse)
{
	const struct framework *f = b->fw;
	double *lu = &b->last_use[b->layer];
	bool resident = *lu >= 0 && b->used - *lu < f->reuse_elements;
	for (int jj = 0; jj < b->ntens; jj++) {
		int j = reverse ? b->ntens - 1 - jj : jj;
		double el = b->tens[j];
		int gate = -1;
		bool fetch = !resident && el >= f->persist_elements;
		if (fetch) {
			struct task t = { .kind = TASK_COLL, .stream = STREAM_PARAM,
					  .cat = CAT_PARAM_COMM, .op = COLL_ALLGATHER, .group = GROUP_DP,
					  .bytes = el * b->wbytes, .launch_s = b->launch_s };
			int dep = prefetch_dep(b);
			gate = program_add(b->p, &t, &dep, 1);
		}
		XGROW(b->hist_before, b->caphist, (size_t)b->nhist + 1);
		XGROW(b->hist_el, b->caphist2, (size_t)b->nhist + 1);
		b->hist_before[b->nhist] = b->last;
		b->hist_el[b->nhist++] = fetch ? el : 0;
		compute(b, cat, time_s * el / b->tens_total, jj == 0 ? flops : 0, mb, chunk, gate);
	}
	b->used += b->tens_total;
	*lu = b->used;
}

static void layer_forward(struct builder *b, enum task_cat cat, int mb, int chunk)
{
	const struct blocks *k = &b->lk->bk;
	if (b->pl->parallel.tp <= 1 && b->pl->parallel.cp <= 1 && !b->lk->moe_a2a) {
		if (b->per_tensor)
			tensor_layer(b, cat, k->fwd[WL_ATTN] + k->fwd[WL_MLP],
				     k->flops_fwd[WL_ATTN] + k->flops_fwd[WL_MLP], mb, chunk, false);
		else
			compute(b, cat, k->fwd[WL_ATTN] + k->fwd[WL_MLP],
				k->flops_fwd[WL_ATTN] + k->flops_fwd[WL_MLP], mb, chunk, b->last);
		return;
	}
	half(b, cat, WL_ATTN, k->fwd[WL_ATTN], 0, k->flops_fwd[WL_ATTN], mb, chunk);
	half(b, cat, WL_MLP, k->fwd[WL_MLP], 0, k->flops_fwd[WL_MLP], mb, chunk);
}

/* Offload of parameters: this layer's 16-bit parameters from host
 * memory, issued when the previous layer starts; the layer waits. */
static void host_fetch(struct builder *b)
{
	int mark = b->last;
	if (b->pl->parallel.offload != OFFLOAD_PARAMS)
		return;
	struct task t = { .kind = TASK_COMPUTE, .stream = STREAM_HOST, .cat = CAT_OFFLOAD,
			  .time_s = b->lk->param_bytes / b->host_bw_Bps };
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
				  .dir = P2P_FWD, .bytes = p2p_bytes(b),
				  .mb = mb, .chunk = chunk };
		dep = program_add(b->p, &r, NULL, 0);
	}
	if (vs == 0) {
		compute(b, CAT_FORWARD, b->lk->bk.fwd[WL_EMBED], 0, mb, chunk, dep);
		tp_coll(b, pl->parallel.sp ? COLL_REDUCE_SCATTER : COLL_ALLREDUCE, mb, chunk);
	} else {
		compute(b, CAT_FORWARD, 0, 0, mb, chunk, dep);
		if (pipe_partitioned(b))        /* PartitionedTensor.full() of the input */
			tp_coll_bytes(b, COLL_ALLGATHER, b->act_bytes, mb, chunk);
	}
	for (int l = 0; l < nl; l++) {
		set_layer(b, first + l);
		zero3_gather(b, CAT_FORWARD, mb, chunk);
		host_fetch(b);
		layer_forward(b, CAT_FORWARD, mb, chunk);
	}
	if (vs == nv - 1) {
		if (pl->parallel.sp)
			tp_coll(b, COLL_ALLGATHER, mb, chunk);
		compute(b, CAT_FORWARD, b->lk->bk.fwd[WL_HEAD], b->lk->bk.flops_fwd[WL_HEAD], mb, chunk, b->last);
		/* vocabulary-parallel cross entropy: all-reduce of the max, the
		 * target logit and the sum of exponentials (fp32 per token) */
		for (int i = 0; i < 3; i++)
			tp_coll_bytes(b, COLL_ALLREDUCE,
				      4.0 * (double)pl->training.micro_batch * (double)pl->training.seq /
				      pl->parallel.cp, mb, chunk);
	} else {
		struct task s = { .kind = TASK_SEND, .stream = STREAM_SEND, .cat = CAT_PP_COMM,
				  .dir = P2P_FWD, .bytes = p2p_bytes(b),
				  .mb = mb, .chunk = chunk };
		p2p_send(b, &s);
	}
}

static void backward(struct builder *b, int mb, int chunk, bool last_mb)
{
	const struct plan *pl = b->pl;
	const struct blocks *k = &b->lk->bk;
	int nv = b->pp * b->v, vs = chunk * b->pp + b->stage, first;
	int nl = vstage_layers(b, vs, nv, &first);
	/* ZeRO-2/3 reduce-scatter gradients after every micro-batch */
	bool reduce = last_mb || pl->parallel.zero >= ZERO_2;
	int dep = b->last;

	if (vs < nv - 1) {
		struct task r = { .kind = TASK_RECV, .stream = STREAM_RECV_NEXT, .cat = CAT_PP_COMM,
				  .dir = P2P_BWD, .bytes = p2p_bytes(b),
				  .mb = mb, .chunk = chunk };
		dep = program_add(b->p, &r, NULL, 0);
		compute(b, CAT_BACKWARD, 0, 0, mb, chunk, dep);
		/* the output restored, then the received gradient (engine.py
		 * _exec_backward_pass: two PartitionedTensor.full()) */
		for (int i = 0; i < 2 && pipe_partitioned(b); i++)
			tp_coll_bytes(b, COLL_ALLGATHER, b->act_bytes, mb, chunk);
	} else {
		compute(b, CAT_BACKWARD, k->bwd[WL_HEAD], bwd_flops(b, WL_HEAD), mb, chunk, dep);
		/* column-parallel head: its input gradient is summed over TP */
		tp_coll(b, pl->parallel.sp ? COLL_REDUCE_SCATTER : COLL_ALLREDUCE, mb, chunk);
		grads_ready(b, b->grad_bytes_head, reduce);
	}
	for (int l = nl - 1; l >= 0; l--) {
		set_layer(b, first + l);
		k = &b->lk->bk;
		zero3_gather(b, CAT_BACKWARD, mb, chunk);
		host_fetch(b);
		if (pl->parallel.recompute == RECOMPUTE_FULL)
			layer_forward(b, CAT_RECOMPUTE, mb, chunk);
		double sel = pl->parallel.recompute == RECOMPUTE_SELECTIVE ? k->recompute_sel : 0;
		if (pl->parallel.tp <= 1 && pl->parallel.cp <= 1 && !b->lk->moe_a2a && b->per_tensor) {
			tensor_layer(b, CAT_BACKWARD, k->bwd[WL_MLP] + k->bwd[WL_ATTN] + sel,
				     bwd_flops(b, WL_MLP) + bwd_flops(b, WL_ATTN), mb, chunk, true);
		} else if (pl->parallel.tp <= 1 && pl->parallel.cp <= 1 && !b->lk->moe_a2a) {
			compute(b, CAT_BACKWARD, k->bwd[WL_MLP] + k->bwd[WL_ATTN] + sel,
				bwd_flops(b, WL_MLP) + bwd_flops(b, WL_ATTN), mb, chunk, b->last);
		} else {
			half(b, CAT_BACKWARD, WL_MLP, k->bwd[WL_MLP], 0, bwd_flops(b, WL_MLP), mb, chunk);
			half(b, CAT_BACKWARD, WL_ATTN, k->bwd[WL_ATTN], sel, bwd_flops(b, WL_ATTN), mb, chunk);
		}
		grads_ready2(b, b->lk->grad_bytes, b->lk->grad_bytes_expert, reduce);
	}
	if (vs == 0) {
		/* the embedding's input is token ids: no gradient to reduce over
		 * TP; with SP its forward reduce-scatter has an all-gather here */
		if (pl->parallel.sp)
			tp_coll(b, COLL_ALLGATHER, mb, chunk);
		compute(b, CAT_BACKWARD, k->bwd[WL_EMBED], 0, mb, chunk, b->last);
		grads_ready(b, b->grad_bytes_embed, reduce);
	} else {
		struct task s = { .kind = TASK_SEND, .stream = STREAM_SEND, .cat = CAT_PP_COMM,
				  .dir = P2P_BWD, .bytes = p2p_bytes(b),
				  .mb = mb, .chunk = chunk };
		p2p_send(b, &s);
	}
	/* ZeRO-2/3 keep only a shard of the gradients: they cannot wait for
	 * the last micro-batch, whatever overlap_grad_reduce says */
	if (reduce && (pl->communication.overlap_grad_reduce || pl->parallel.zero >= ZERO_2))
		flush_bucket(b);
}

/* Adam step: read and write fp32 master, momentum, variance and the
 * gradient, write the 16-bit weights: about 34 bytes per local parameter
 * (precision.h), plus what the stack's optimizer moves beyond it
 * (gradient zeroing, norm and clipping, an unfused Adam's extra passes:
 * stack.h optimizer_Bpp, per ZeRO stage where the stack's engine has a
 * gradient path) in its kernels, less the 16-bit copy where the stack
 * writes none. */
static double optimizer_time(const struct plan *pl, const struct gpu_spec *g,
			     double params_local)
{
	struct op op = { .kind = OP_MEMBOUND, .pass = PASS_FWD, .dtype = DTYPE_FP32, .batch = 1 };
	const struct stack *k = plan_stack(pl);
	snprintf(op.name, sizeof(op.name), "adam_step");
	snprintf(op.membound_kind, sizeof(op.membound_kind), "adam");
	struct precision pr;
	precision_init(&pr, pl->training.precision, false);
	if (pl->training.fp8_params)
		precision_fp8_params(&pr);
	op.bytes = params_local * (pr.optimizer_step_bytes + stack_optimizer_Bpp(k, pl->parallel.zero) -
				   (k->optimizer_copy16 ? 0 : pr.optimizer_copy_bytes));
	op.kernels = stack_optimizer_kernels(k, pl->parallel.zero);
	return cost_roofline_time(g, &op);
}

/* A layer kind's sizes (struct layer_kind; dense: an MoE model's dense
 * first layers), its blocks not priced. */
static void kind_sizes(struct builder *b, struct layer_kind *k, bool dense)
{
	const struct plan *pl = b->pl;
	const struct model *m = b->m;
	double t = pl->parallel.tp, le = dense ? 0 : b->le;
	double lp = dense ? model_dense_layer_params(m) : model_layer_params(m);

	k->moe_a2a = !dense && model_is_moe(m) && pl->parallel.ep > 1;
	k->grad_bytes = (lp - le) / t * b->gb;
	k->grad_bytes_expert = le / (t * pl->parallel.ep) * b->gb;
	if (b->frozen) {
		k->grad_bytes = finetune_layer_adapter_params(m, &pl->training.finetune,
							      pl->parallel.tp) * b->gb;
		k->grad_bytes_expert = 0;
	}
	k->param_bytes = lp / t * b->wbytes;
	k->gather_copy_s = b->fsdp2 ? copy_time(b, "fsdp_gather_copy_out", k->param_bytes / b->wbytes,
						2 * k->param_bytes) : 0;
}

/* The builder's sizes for plan pl: messages, collectives, gradients and
 * parameters per layer, the framework's granularity, a layer's weight
 * tensors. */
static void builder_sizes(struct builder *b, const struct inputs *in, const struct plan *pl)
{
	const struct model *m = inputs_model(in);
	const struct topology *topo = inputs_topology(in);
	double t = pl->parallel.tp;
	struct precision pr;

	precision_init(&pr, pl->training.precision, pl->training.fp8_comm);
	if (pl->training.fp8_params)
		precision_fp8_params(&pr);
	b->pr = pr;
	double s_local = (double)pl->training.seq / pl->parallel.cp;   /* tokens of this rank */
	b->act_bytes = (double)pl->training.micro_batch * s_local * (double)m->hidden *
		       dtype_bytes(pr.activation);
	{
		/* K and V of this rank's tokens; KV heads fewer than tp are replicated */
		double hd = (double)model_head_dim(m), kvh = (double)m->kv_heads / t;
		double tok = (double)pl->training.micro_batch * s_local * dtype_bytes(pr.activation);
		if (kvh < 1)
			kvh = 1;
		b->cp_kv_bytes = 2 * kvh * hd * tok;
		b->cp_qkv_bytes = ((double)m->heads / t * hd) * tok + b->cp_kv_bytes;
		b->cp_out_bytes = (double)m->heads / t * hd * tok;
	}
	b->ag_bytes = b->act_bytes / dtype_bytes(pr.activation) * dtype_bytes(pr.tp_comm);
	double gb = dtype_bytes(pl->training.grad_dtype);
	b->gb = gb;
	b->le = model_layer_expert_params(m);   /* 0 when dense */
	b->host_bw_Bps = topology_host_bw(topo);
	{
		struct wl_shape shp = plan_wl_shape(pl);
		struct moe_balance bal;
		workload_moe_balance(m, &shp, &bal);
		double tok = (double)pl->training.micro_batch * s_local / (pl->parallel.sp ? t : 1);
		/* node-limited routing: the deduplicated cross-node volume (moe.h) */
		double nl = moe_dispatch_scale(&m->moe, pl->parallel.ep,
					       pl->parallel.tp * pl->parallel.cp, topo->gpus_per_node);
		b->ep_bytes = tok * (double)m->moe.top_k * bal.rank_load * (double)m->hidden *
			      dtype_bytes(pr.activation) * nl;
	}
	b->grad_bytes_embed = model_embedding_params(m) / t * gb;
	/* with tied embeddings and a pipeline, the last stage keeps its own
	 * copy of the word embeddings for the LM head (Megatron-LM) */
	b->tied_copy = m->tied_embeddings && pl->parallel.pp > 1
			       ? (double)m->vocab * (double)m->hidden / t : 0;
	b->grad_bytes_head = (model_head_params(m) / t + b->tied_copy) * gb;
	b->frozen = finetune_frozen(&pl->training.finetune);
	if (b->frozen) {
		/* LoRA / QLoRA: only the adapters' gradients are reduced */
		b->grad_bytes_embed = b->grad_bytes_head = 0;
		b->tied_copy = 0;
	}
	b->wbytes = dtype_bytes(pr.layer_weight);
	b->fsdp2 = plan_stack(pl)->fsdp2_copies && pl->parallel.zero >= ZERO_3 &&
		   (long)pl->parallel.dp * pl->parallel.cp > 1;
	kind_sizes(b, &b->kind[0], false);
	kind_sizes(b, &b->kind[1], true);
	b->n_dense = model_is_moe(m) ? m->moe.first_dense : 0;
	b->lk = &b->kind[0];
	b->fw = pl->framework >= 0 ? &framework_table[pl->framework] : NULL;
	b->launch_s = b->fw ? b->fw->launch_s : 0;
	b->per_tensor = b->fw && b->fw->gather == GATHER_PER_TENSOR && pl->parallel.zero >= ZERO_3 &&
			(long)pl->parallel.dp * pl->parallel.cp > 1 && pl->parallel.tp <= 1 && pl->parallel.cp <= 1;
	{
		/* a layer's weight tensors, as the nn.Linear modules of the
		 * reference implementations hold them: HF Llama's q, k, v, o,
		 * gate, up, down (SwiGLU); GPT-style fused qkv, out, up, down */
		double h = (double)m->hidden, kv = (double)(m->kv_heads * model_head_dim(m));
		double ffn = (double)m->ffn;
		double sw[] = { h * h, h * kv, h * kv, h * h, h * ffn, h * ffn, ffn * h };
		double ge[] = { h * (h + 2 * kv), h * h, h * ffn, ffn * h };
		bool swiglu = m->act == MODEL_ACT_SWIGLU;
		b->ntens = swiglu ? 7 : 4;
		b->tens_total = 0;
		for (int i = 0; i < b->ntens; i++) {
			b->tens[i] = (swiglu ? sw[i] : ge[i]) / t;
			b->tens_total += b->tens[i];
		}
	}
	b->last_use = xmalloc((size_t)m->layers * sizeof(double));
	for (long i = 0; i < m->layers; i++)
		b->last_use[i] = -1;
}

/* What a stage holds and does around its steps. */
struct stage_plan {
	int nsteps;
	int *last_b;            /* [v] step of each chunk's last backward */
	int layers, first0;     /* the stage's layers, its first chunk's first */
	int dense;              /* of the layers, an MoE model's dense first layers */
	double peak_alive;      /* layers' activations alive at once, at most */
	bool has_emb, has_head;
	double psi, psi_e;      /* this rank's parameters: dense, experts */
	int ndp, nedp;          /* gradient/optimizer shards: dp x cp, / ep for experts */
	bool gather;            /* ZeRO-1/2 all-gather of updated parameters */
	double ag_total, ag_chunk;
	int ag_count;
};

/* The stage's layers and its parameters' shards, from the schedule's
 * order of steps. */
static void stage_plan_init(struct stage_plan *sp, const struct builder *b, const struct model *m,
			    const struct sched_step *order, int m_mb)
{
	const struct plan *pl = b->pl;
	int stage = b->stage;
	double t = pl->parallel.tp, le = b->le;
	int *chunk_layers = xmalloc((size_t)b->v * sizeof(int));

	memset(sp, 0, sizeof(*sp));
	sp->nsteps = 2 * m_mb * b->v;
	sp->last_b = xmalloc((size_t)b->v * sizeof(int));
	for (int c = 0; c < b->v; c++)
		sp->last_b[c] = -1;
	for (int i = 0; i < sp->nsteps; i++)
		if (!order[i].fwd)
			sp->last_b[order[i].chunk] = i;

	/* stage bookkeeping, memory inputs */
	int nv = pl->parallel.pp * b->v;
	for (int c = 0; c < b->v; c++) {
		int f;
		chunk_layers[c] = vstage_layers(b, c * pl->parallel.pp + stage, nv, &f);
		if (c == 0)
			sp->first0 = f;
		sp->layers += chunk_layers[c];
		if (f < b->n_dense)
			sp->dense += chunk_layers[c] - (int)model_moe_layers_in(m, f, chunk_layers[c]);
	}
	double alive = 0;
	for (int i = 0; i < sp->nsteps; i++) {
		alive += (order[i].fwd ? 1 : -1) * chunk_layers[order[i].chunk];
		if (alive > sp->peak_alive)
			sp->peak_alive = alive;
	}
	free(chunk_layers);

	int layers = sp->layers, moe = layers - sp->dense;
	/* the layers' TP-sharded parameters: MoE layers less their experts,
	 * dense first layers whole */
	double psi_layers = (moe * (model_layer_params(m) - le) +
			     sp->dense * model_dense_layer_params(m)) / t;
	sp->has_emb = stage == 0;
	sp->has_head = stage == pl->parallel.pp - 1;
	sp->psi = psi_layers + (sp->has_emb ? model_embedding_params(m) / t : 0) +
		  (sp->has_head ? model_head_params(m) / t + b->tied_copy : 0);
	sp->psi_e = moe * le / (t * pl->parallel.ep);  /* this rank's experts */
	sp->ndp = pl->parallel.dp * pl->parallel.cp;  /* gradients and optimizer shards span dp x cp */
	sp->nedp = sp->ndp / pl->parallel.ep;    /* experts: the expert-data-parallel ranks */
	/* ZeRO-1/2 all-gather of the updated parameters in buckets of 8 x
	 * bucket_MB (a layer's parameters with per-unit buckets) */
	sp->gather = (pl->parallel.zero == ZERO_1 || pl->parallel.zero == ZERO_2) && sp->ndp > 1;
	sp->ag_total = psi_layers * dtype_bytes(b->pr.layer_weight) +
		       (sp->psi - psi_layers) * dtype_bytes(b->pr.weight);
	if (b->frozen) {        /* the adapters are the trained parameters */
		sp->psi = layers * finetune_layer_adapter_params(m, &pl->training.finetune, pl->parallel.tp);
		sp->psi_e = 0;
		sp->ag_total = sp->psi * dtype_bytes(b->pr.weight);
	}
	sp->ag_chunk = pl->communication.bucket_bytes > 0 ? pl->communication.bucket_bytes * 8 : b->kind[0].param_bytes;
	sp->ag_count = sp->ag_chunk > 0 ? (int)ceil(sp->ag_total / sp->ag_chunk) : 1;
	if (sp->ag_count < 1)
		sp->ag_count = 1;
}

/* Megatron-Core's overlap_param_gather: the previous step's gather runs
 * during this forward, bucket by bucket; the first forward waits for the
 * first bucket only. */
static void overlapped_param_gather(struct builder *b, const struct stage_plan *sp)
{
	struct task ag = { .kind = TASK_COLL, .stream = STREAM_PARAM, .cat = CAT_PARAM_COMM,
			   .op = COLL_ALLGATHER, .group = GROUP_DP, .bytes = sp->ag_total / sp->ag_count,
			   .count = 1, .launch_s = b->launch_s };
	b->gate = program_add(b->p, &ag, NULL, 0);
	if (sp->ag_count > 1) {
		ag.count = sp->ag_count - 1;
		program_add(b->p, &ag, NULL, 0);
	}
}

/* The optimizer step after every reduction (on the CPU with offload),
 * then the ZeRO-1/2 gathers of updated parameters. */
static void optimizer_step(struct builder *b, const struct stage_plan *sp,
			   const struct topology *topo)
{
	const struct plan *pl = b->pl;
	struct program *p = b->p;
	double psi_opt = sp->psi / (pl->parallel.zero >= ZERO_1 ? sp->ndp : 1) +
			 sp->psi_e / (pl->parallel.zero >= ZERO_1 ? sp->nedp : 1);
	struct task opt = { .kind = TASK_COMPUTE, .stream = STREAM_COMPUTE, .cat = CAT_OPTIMIZER,
			    .time_s = optimizer_time(pl, &topo->gpu, psi_opt) };
	if (pl->parallel.dp_sync == DP_SYNC_PS)
		opt.time_s = 0;     /* the parameter servers update the weights (engine.h) */
	int *deps = xmalloc((size_t)(b->ndp + 2) * sizeof(int));
	if (b->ndp)
		memcpy(deps, b->dp_tasks, (size_t)b->ndp * sizeof(int));
	deps[b->ndp] = b->last;
	if (pl->parallel.offload != OFFLOAD_NONE) {
		/* the CPU step after every gradient copy (host stream order) */
		struct task cpu = { .kind = TASK_COMPUTE, .stream = STREAM_HOST, .cat = CAT_OFFLOAD,
				    .time_s = psi_opt * topo->gpus_per_node / OFFLOAD_CPU_ADAM_PARAMS_PER_S };
		int c = program_add(p, &cpu, deps, b->ndp + 1);
		if (pl->parallel.offload == OFFLOAD_OPTIMIZER)
			c = host_copy(b, psi_opt * dtype_bytes(b->pr.weight), c);
		opt.time_s = 0;
		deps[0] = c;
		deps[1] = b->last;
		b->last = program_add(p, &opt, deps, 2);
	} else
		b->last = program_add(p, &opt, deps, b->ndp + 1);
	free(deps);
	if (sp->gather && !pl->communication.overlap_param_gather) {
		/* buckets back to back: one merged task */
		struct task ag = { .kind = TASK_COLL, .stream = STREAM_DP, .cat = CAT_DP_COMM,
				   .op = COLL_ALLGATHER, .group = GROUP_DP, .bytes = sp->ag_total / sp->ag_count,
				   .count = sp->ag_count, .launch_s = b->launch_s };
		program_add(p, &ag, &b->last, 1);
	}
	if (sp->gather && sp->psi_e > 0 && sp->nedp > 1) {
		/* the experts' updated parameters over the expert-data-parallel
		 * group, in buckets as the dense ones */
		double ag_e = sp->psi_e * dtype_bytes(b->pr.layer_weight);
		int n_e = sp->ag_chunk > 0 ? (int)ceil(ag_e / sp->ag_chunk) : 1;
		if (n_e < 1)
			n_e = 1;
		struct task ag = { .kind = TASK_COLL,
				   .stream = pl->communication.overlap_param_gather ? STREAM_PARAM : STREAM_DP,
				   .cat = pl->communication.overlap_param_gather ? CAT_PARAM_COMM : CAT_DP_COMM,
				   .op = COLL_ALLGATHER, .group = GROUP_EDP, .bytes = ag_e / n_e,
				   .count = n_e };
		if (pl->communication.overlap_param_gather)
			program_add(p, &ag, NULL, 0);
		else
			program_add(p, &ag, &b->last, 1);
	}
}

/* The stage's compute times and memory anatomy (stage_result). */
static void stage_result_fill(struct stage_result *sr, const struct builder *b,
			      const struct stage_plan *sp, const struct inputs *in)
{
	int layers = sp->layers, dense = sp->dense;
	const struct blocks *k = &b->kind[0].bk, *kd = &b->kind[1].bk;
	bool has_emb = sp->has_emb, has_head = sp->has_head;
	memset(sr, 0, sizeof(*sr));
	sr->stage = b->stage;
	sr->layers = layers;
	sr->first_layer = sp->first0;
	sr->has_embedding = has_emb;
	sr->has_head = has_head;
	sr->peak_inflight_chunks = (int)b->p->peak_inflight;
	sr->inflight = layers ? sp->peak_alive / layers : 0;
	sr->compute_fwd_s = (layers - dense) * (k->fwd[WL_ATTN] + k->fwd[WL_MLP]) +
			    dense * (kd->fwd[WL_ATTN] + kd->fwd[WL_MLP]) +
			    (has_emb ? k->fwd[WL_EMBED] : 0) + (has_head ? k->fwd[WL_HEAD] : 0);
	sr->compute_bwd_s = (layers - dense) * (k->bwd[WL_ATTN] + k->bwd[WL_MLP]) +
			    dense * (kd->bwd[WL_ATTN] + kd->bwd[WL_MLP]) +
			    (has_emb ? k->bwd[WL_EMBED] : 0) + (has_head ? k->bwd[WL_HEAD] : 0);
	struct mem_rank_input mi;
	anatomy_input(in, b->pl, layers, dense, sr->inflight, has_emb, has_head, &mi);
	memory_rank(&mi, &sr->mem);
}

int build_transformer_program(const struct inputs *in, const struct plan *pl, int stage,
			      struct program *p, struct stage_result *sr)
{
	const struct model *m = inputs_model(in);
	struct builder b = { .pl = pl, .m = m, .p = p, .stage = stage, .pp = pl->parallel.pp, .last = -1,
			   .gate = -1, .prev_mark = -1, .cost = inputs_cost(in) };
	int m_mb = (int)plan_microbatches(pl);
	struct stage_plan sp;

	b.v = pl->parallel.schedule == SCHED_INTERLEAVED ? pl->parallel.interleave : 1;
	builder_sizes(&b, in, pl);
	if (blocks_price(pl, m, inputs_cost(in), &b.kind[0].bk) ||
	    (b.n_dense > 0 && blocks_price_dense(pl, m, inputs_cost(in), &b.kind[1].bk))) {
		free(b.last_use);
		return -1;
	}
	struct sched_step *order = schedule_order(pl->parallel.schedule, pl->parallel.pp, stage, m_mb, b.v);
	if (!order) {
		free(b.last_use);
		return -1;
	}
	stage_plan_init(&sp, &b, m, order, m_mb);
	if (sp.gather && pl->communication.overlap_param_gather)
		overlapped_param_gather(&b, &sp);
	for (int i = 0; i < sp.nsteps; i++) {
		if (order[i].fwd)
			forward(&b, order[i].mb, order[i].chunk);
		else
			backward(&b, order[i].mb, order[i].chunk, i == sp.last_b[order[i].chunk]);
	}
	flush_bucket(&b);
	/* the two copies of tied embeddings sum their gradients (Megatron's
	 * embedding group: first and last stage) */
	if (b.tied_copy > 0 && (sp.has_emb || sp.has_head)) {
		struct task t_emb = { .kind = TASK_COLL, .stream = STREAM_DP, .cat = CAT_DP_COMM,
				      .op = COLL_ALLREDUCE, .group = GROUP_EMB, .bytes = b.tied_copy * b.gb,
				      .launch_s = b.launch_s };
		int id = program_add(p, &t_emb, &b.last, 1);
		XGROW(b.dp_tasks, b.capdp, (size_t)b.ndp + 1);
		b.dp_tasks[b.ndp++] = id;
	}
	optimizer_step(&b, &sp, inputs_topology(in));
	p->peak_inflight = schedule_peak_inflight(order, sp.nsteps);
	if (sr)
		stage_result_fill(sr, &b, &sp, in);
	free(sp.last_b);
	free(order);
	free(b.dp_tasks);
	free(b.last_use);
	free(b.hist_before);
	free(b.hist_el);
	return 0;
}

double build_transformer_hardware_flops(const struct inputs *in, const struct plan *pl)
{
	struct wl_shape shp = plan_wl_shape(pl);
	return workload_iteration_flops(inputs_model(in), &shp, pl->parallel.recompute,
					(double)pl->training.global_batch);
}
