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
 * reduced over dp x cp ranks (GROUP_DP, placement.h).
 *
 * tp_comm_overlap (Megatron-Core --tp-comm-overlap, Transformer Engine
 * userbuffers; see half_overlap()): each half-layer's first and last GEMM
 * are priced apart (price_blocks, split_gemms) and split into tp chunks
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
#include "simulate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "anatomy.h"
#include "platform.h"
#include "build_cnn.h"
#include "bug.h"
#include "cost.h"
#include "ddlsim-config.h"
#include "framework.h"
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
	/* tp_comm_overlap, per half-layer block and pass: the first
	 * (column-parallel) and last (row-parallel) GEMM with their fp8
	 * casts, split into dgrad and wgrad in backward (gfirst/glast are
	 * the forward GEMM or the backward dgrad), and the ops before the
	 * first GEMM, between the two and after the last */
	double gfirst[2][WL_NBLOCKS], glast[2][WL_NBLOCKS];
	double wfirst[WL_NBLOCKS], wlast[WL_NBLOCKS];
	double pre[2][WL_NBLOCKS], mid[2][WL_NBLOCKS], post[2][WL_NBLOCKS];
	/* MoE, per pass: the MLP block's ops before the dispatch, the experts,
	 * after the combine */
	double moe_pre[2], moe_mid[2], moe_post[2];
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
	bool moe_a2a;                 /* MoE with ep > 1: the MLP half has all-to-alls */
	double ep_bytes;              /* MoE: N of one dispatch / combine all-to-all */
	double grad_bytes_expert;     /* MoE: one layer's expert gradients (of this rank) */
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

/* 1 for an op of the half-layer's first (column-parallel) GEMM, 2 for
 * the last (row-parallel) one, 0 otherwise (workload.c's names: the GEMM,
 * its ".dgrad", ".wgrad" and ".fp8_cast"). */
static int gemm_role(const char *name)
{
	static const struct { const char *prefix; int role; } roles[] = {
		{ "qkv", 1 }, { "mlp_up", 1 }, { "mlp_gate_up", 1 },
		{ "attn_out", 2 }, { "mlp_down", 2 },
	};
	for (size_t i = 0; i < sizeof(roles) / sizeof(roles[0]); i++) {
		size_t n = strlen(roles[i].prefix);
		if (strncmp(name, roles[i].prefix, n) == 0 && (name[n] == '\0' || name[n] == '.'))
			return roles[i].role;
	}
	return 0;
}

/* Split a half-layer's ops of one pass around its first and last GEMM
 * (tp_comm_overlap). */
static void split_gemms(struct cost *cost, const struct op_list *l, int blk, int pass,
			struct blocks *bk)
{
	int seen = 0;  /* 0 before the first GEMM, 1 between, 2 after the last */
	for (int i = 0; i < l->n; i++) {
		const struct op *o = &l->v[i];
		double t = cost_op_time(cost, o);
		int role = gemm_role(o->name);
		bool wgrad = strstr(o->name, ".wgrad") != NULL;
		if (role == 1) {
			seen = 1;
			if (wgrad)
				bk->wfirst[blk] += t;
			else
				bk->gfirst[pass][blk] += t;
		} else if (role == 2) {
			seen = 2;
			if (wgrad)
				bk->wlast[blk] += t;
			else
				bk->glast[pass][blk] += t;
		} else if (seen == 0)
			bk->pre[pass][blk] += t;
		else if (seen == 1)
			bk->mid[pass][blk] += t;
		else
			bk->post[pass][blk] += t;
	}
}

/* Split the MoE MLP block's ops of one pass around the experts. */
static void split_moe(struct cost *cost, const struct op_list *l, int pass, struct blocks *bk)
{
	bool seen = false;
	for (int i = 0; i < l->n; i++) {
		double t = cost_op_time(cost, &l->v[i]);
		if (workload_op_is_expert(&l->v[i])) {
			seen = true;
			bk->moe_mid[pass] += t;
		} else if (seen)
			bk->moe_post[pass] += t;
		else
			bk->moe_pre[pass] += t;
	}
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
		if (b == WL_ATTN || b == WL_MLP)
			split_gemms(cost, &l, b, PASS_FWD, bk);
		if (b == WL_MLP && model_is_moe(m))
			split_moe(cost, &l, PASS_FWD, bk);
		op_list_finish(&l);
		op_list_init(&l);
		if (workload_block(m, &shp, b, PASS_BWD, RECOMPUTE_NONE, &l))
			goto fail;
		bk->bwd[b] = cost_list_time(cost, &l);
		if (b == WL_ATTN && pl->cp > 1)
			split_cp(cost, &l, pl->cp, PASS_BWD, bk);
		if (b == WL_ATTN || b == WL_MLP)
			split_gemms(cost, &l, b, PASS_BWD, bk);
		if (b == WL_MLP && model_is_moe(m))
			split_moe(cost, &l, PASS_BWD, bk);
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
	const struct blocks *k = &b->bk;
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
	if (blk == WL_ATTN && b->pl->cp > 1)
		attn_cp(b, cat, cat == CAT_BACKWARD, extra_s, flops, mb, chunk, dep);
	else if (blk == WL_MLP && b->moe_a2a)
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
	int tp = b->pl->tp;
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
	int tp = b->pl->tp, x = -1;
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
	const struct blocks *k = &b->bk;
	double ag_shard = b->ag_bytes / b->pl->tp, rs_shard = b->act_bytes / b->pl->tp;

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
	bool tp = b->pl->tp > 1;
	if (tp && b->pl->sp && b->pl->tp_comm_overlap && !(blk == WL_ATTN && b->pl->cp > 1)) {
		half_overlap(b, cat, blk, extra_s, flops, mb, chunk);
		return;
	}
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

/* Ranks that hold copies of a gradient of group g (GROUP_DP, GROUP_EDP). */
static long grad_ranks(const struct plan *pl, enum group_kind g)
{
	return (long)pl->dp * pl->cp / (g == GROUP_EDP ? pl->ep : 1);
}

/* Offload: a copy of bytes over the GPU's host link after dep. */
static int host_copy(struct builder *b, double bytes, int dep)
{
	struct task t = { .kind = TASK_COMPUTE, .stream = STREAM_HOST, .cat = CAT_OFFLOAD,
			  .time_s = bytes / b->host_bw_Bps };
	return program_add(b->p, &t, &dep, 1);
}

static void dp_reduce_group(struct builder *b, double bytes, enum group_kind g)
{
	const struct plan *pl = b->pl;
	long n = grad_ranks(pl, g);
	if (bytes <= 0)
		return;
	if (n <= 1) {
		if (pl->offload != OFFLOAD_NONE)
			host_copy(b, bytes, b->last);
		return;
	}
	struct task t = { .kind = TASK_COLL, .stream = STREAM_DP, .cat = CAT_DP_COMM,
			  .op = pl->zero >= ZERO_1 ? COLL_REDUCE_SCATTER : COLL_ALLREDUCE,
			  .group = g, .bytes = bytes, .launch_s = b->launch_s };
	int id = program_add(b->p, &t, &b->last, 1);
	XGROW(b->dp_tasks, b->capdp, (size_t)b->ndp + 1);
	b->dp_tasks[b->ndp++] = id;
	if (pl->offload != OFFLOAD_NONE)
		host_copy(b, bytes / (pl->zero >= ZERO_1 ? n : 1), id);
}

static void dp_reduce(struct builder *b, double bytes)
{
	dp_reduce_group(b, bytes, GROUP_DP);
}

/* Gradients of `bytes` (dense) and `expert` (MoE experts) became ready
 * on the compute stream (last task). */
static void grads_ready2(struct builder *b, double bytes, double expert, bool reduce_now)
{
	bool overlap = b->pl->overlap_grad_reduce || b->pl->zero >= ZERO_2;
	if (!reduce_now)
		return;
	b->pending += bytes;
	if (overlap && b->pending >= b->pl->bucket_bytes) {
		dp_reduce(b, b->pending);
		b->pending = 0;
	}
	b->pending_e += expert;
	if (overlap && b->pending_e >= b->pl->bucket_bytes) {
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
 * compute task waits for it. */
static void zero3_gather(struct builder *b)
{
	int mark = b->last;
	if (b->pl->zero < ZERO_3 || (long)b->pl->dp * b->pl->cp <= 1 || b->per_tensor)
		return;
	struct task t = { .kind = TASK_COLL, .stream = STREAM_PARAM, .cat = CAT_PARAM_COMM,
			  .op = COLL_ALLGATHER, .group = GROUP_DP, .bytes = b->param_bytes_layer,
			  .launch_s = b->launch_s };
	b->gate = program_add(b->p, &t, &b->prev_mark, 1);
	b->prev_mark = mark;
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
	const struct blocks *k = &b->bk;
	if (b->pl->tp <= 1 && b->pl->cp <= 1 && !b->moe_a2a) {
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
	if (b->pl->offload != OFFLOAD_PARAMS)
		return;
	struct task t = { .kind = TASK_COMPUTE, .stream = STREAM_HOST, .cat = CAT_OFFLOAD,
			  .time_s = b->param_bytes_layer / b->host_bw_Bps };
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
		b->layer = first + l;
		zero3_gather(b);
		host_fetch(b);
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
		b->layer = first + l;
		zero3_gather(b);
		host_fetch(b);
		if (pl->recompute == RECOMPUTE_FULL)
			layer_forward(b, CAT_RECOMPUTE, mb, chunk);
		double sel = pl->recompute == RECOMPUTE_SELECTIVE ? k->recompute_sel : 0;
		if (pl->tp <= 1 && pl->cp <= 1 && !b->moe_a2a && b->per_tensor) {
			tensor_layer(b, CAT_BACKWARD, k->bwd[WL_MLP] + k->bwd[WL_ATTN] + sel,
				     2 * (k->flops_fwd[WL_MLP] + k->flops_fwd[WL_ATTN]), mb, chunk, true);
		} else if (pl->tp <= 1 && pl->cp <= 1 && !b->moe_a2a) {
			compute(b, CAT_BACKWARD, k->bwd[WL_MLP] + k->bwd[WL_ATTN] + sel,
				2 * (k->flops_fwd[WL_MLP] + k->flops_fwd[WL_ATTN]), mb, chunk, b->last);
		} else {
			half(b, CAT_BACKWARD, WL_MLP, k->bwd[WL_MLP], 0, 2 * k->flops_fwd[WL_MLP], mb, chunk);
			half(b, CAT_BACKWARD, WL_ATTN, k->bwd[WL_ATTN], sel, 2 * k->flops_fwd[WL_ATTN], mb, chunk);
		}
		grads_ready2(b, b->grad_bytes_layer, b->grad_bytes_expert, reduce);
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
	if (pl->fp8_params)
		precision_fp8_params(&pr);
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
	if (pl->fp8_params)
		precision_fp8_params(&pr);
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
	double le = model_layer_expert_params(m);   /* 0 when dense */
	b.grad_bytes_layer = (model_layer_params(m) - le) / t * gb;
	b.grad_bytes_expert = le / (t * pl->ep) * gb;
	b.moe_a2a = model_is_moe(m) && pl->ep > 1;
	b.host_bw_Bps = topology_host_bw(topo);
	{
		struct wl_shape shp = plan_wl_shape(pl);
		struct moe_balance bal;
		workload_moe_balance(m, &shp, &bal);
		double tok = (double)pl->micro_batch * s_local / (pl->sp ? t : 1);
		b.ep_bytes = tok * (double)m->moe.top_k * bal.rank_load * (double)m->hidden *
			     dtype_bytes(pr.activation);
	}
	b.grad_bytes_embed = model_embedding_params(m) / t * gb;
	/* with tied embeddings and a pipeline, the last stage keeps its own
	 * copy of the word embeddings for the LM head (Megatron-LM) */
	double tied_copy = m->tied_embeddings && pl->pp > 1
				   ? (double)m->vocab * (double)m->hidden / t : 0;
	b.grad_bytes_head = (model_head_params(m) / t + tied_copy) * gb;
	b.param_bytes_layer = model_layer_params(m) / t * dtype_bytes(pr.layer_weight);
	b.wbytes = dtype_bytes(pr.layer_weight);
	b.fw = pl->framework >= 0 ? &framework_table[pl->framework] : NULL;
	b.launch_s = b.fw ? b.fw->launch_s : 0;
	b.per_tensor = b.fw && b.fw->gather == GATHER_PER_TENSOR && pl->zero >= ZERO_3 &&
		       (long)pl->dp * pl->cp > 1 && pl->tp <= 1 && pl->cp <= 1;
	{
		/* a layer's weight tensors, as the nn.Linear modules of the
		 * reference implementations hold them: HF Llama's q, k, v, o,
		 * gate, up, down (SwiGLU); GPT-style fused qkv, out, up, down */
		double h = (double)m->hidden, kv = (double)(m->kv_heads * model_head_dim(m));
		double ffn = (double)m->ffn;
		double sw[] = { h * h, h * kv, h * kv, h * h, h * ffn, h * ffn, ffn * h };
		double ge[] = { h * (h + 2 * kv), h * h, h * ffn, ffn * h };
		bool swiglu = m->act == MODEL_ACT_SWIGLU;
		b.ntens = swiglu ? 7 : 4;
		b.tens_total = 0;
		for (int i = 0; i < b.ntens; i++) {
			b.tens[i] = (swiglu ? sw[i] : ge[i]) / t;
			b.tens_total += b.tens[i];
		}
	}
	b.last_use = xmalloc((size_t)m->layers * sizeof(double));
	for (long i = 0; i < m->layers; i++)
		b.last_use[i] = -1;

	struct sched_step *order = schedule_order(pl->schedule, pl->pp, stage, m_mb, b.v);
	if (!order) {
		free(b.last_use);
		return -1;
	}
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
	double psi = layers * (model_layer_params(m) - le) / t +
		     (has_emb ? model_embedding_params(m) / t : 0) +
		     (has_head ? model_head_params(m) / t + tied_copy : 0);
	double psi_e = layers * le / (t * pl->ep);  /* this rank's experts */
	int ndp = pl->dp * pl->cp;  /* gradients and optimizer shards span dp x cp */
	int nedp = ndp / pl->ep;    /* experts: the expert-data-parallel ranks */
	/* ZeRO-1/2 all-gather of the updated parameters in buckets of 8 x
	 * bucket_MB (a layer's parameters with per-unit buckets) */
	bool gather = (pl->zero == ZERO_1 || pl->zero == ZERO_2) && ndp > 1;
	double psi_layers = layers * (model_layer_params(m) - le) / t;
	double ag_total = psi_layers * dtype_bytes(pr.layer_weight) +
			  (psi - psi_layers) * dtype_bytes(pr.weight);
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
				   .count = 1, .launch_s = b.launch_s };
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
				      .op = COLL_ALLREDUCE, .group = GROUP_EMB, .bytes = tied_copy * gb,
				      .launch_s = b.launch_s };
		int id = program_add(p, &t_emb, &b.last, 1);
		XGROW(b.dp_tasks, b.capdp, (size_t)b.ndp + 1);
		b.dp_tasks[b.ndp++] = id;
	}

	/* optimizer after every reduction; ZeRO-1/2 gather updated parameters */
	double psi_opt = psi / (pl->zero >= ZERO_1 ? ndp : 1) +
			 psi_e / (pl->zero >= ZERO_1 ? nedp : 1);
	struct task opt = { .kind = TASK_COMPUTE, .stream = STREAM_COMPUTE, .cat = CAT_OPTIMIZER,
			    .time_s = optimizer_time(pl, &topo->gpu, psi_opt) };
	if (pl->dp_sync == DP_SYNC_PS)
		opt.time_s = 0;     /* the parameter servers update the weights (engine.h) */
	int *deps = xmalloc((size_t)(b.ndp + 2) * sizeof(int));
	if (b.ndp)
		memcpy(deps, b.dp_tasks, (size_t)b.ndp * sizeof(int));
	deps[b.ndp] = b.last;
	if (pl->offload != OFFLOAD_NONE) {
		/* the CPU step after every gradient copy (host stream order) */
		struct task cpu = { .kind = TASK_COMPUTE, .stream = STREAM_HOST, .cat = CAT_OFFLOAD,
				    .time_s = psi_opt * topo->gpus_per_node / OFFLOAD_CPU_ADAM_PARAMS_PER_S };
		int c = program_add(p, &cpu, deps, b.ndp + 1);
		if (pl->offload == OFFLOAD_OPTIMIZER)
			c = host_copy(&b, psi_opt * dtype_bytes(pr.weight), c);
		opt.time_s = 0;
		deps[0] = c;
		deps[1] = b.last;
		b.last = program_add(p, &opt, deps, 2);
	} else
		b.last = program_add(p, &opt, deps, b.ndp + 1);
	free(deps);
	if (gather && !pl->overlap_param_gather) {
		/* buckets back to back: one merged task */
		struct task ag = { .kind = TASK_COLL, .stream = STREAM_DP, .cat = CAT_DP_COMM,
				   .op = COLL_ALLGATHER, .group = GROUP_DP, .bytes = ag_total / ag_count,
				   .count = ag_count, .launch_s = b.launch_s };
		program_add(p, &ag, &b.last, 1);
	}
	if (gather && psi_e > 0 && nedp > 1) {
		/* the experts' updated parameters over the expert-data-parallel
		 * group, in buckets as the dense ones */
		double ag_e = psi_e * dtype_bytes(pr.layer_weight);
		int n_e = ag_chunk > 0 ? (int)ceil(ag_e / ag_chunk) : 1;
		if (n_e < 1)
			n_e = 1;
		struct task ag = { .kind = TASK_COLL, .stream = pl->overlap_param_gather ? STREAM_PARAM : STREAM_DP,
				   .cat = pl->overlap_param_gather ? CAT_PARAM_COMM : CAT_DP_COMM,
				   .op = COLL_ALLGATHER, .group = GROUP_EDP, .bytes = ag_e / n_e,
				   .count = n_e };
		if (pl->overlap_param_gather)
			program_add(p, &ag, NULL, 0);
		else
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
	free(b.last_use);
	free(b.hist_before);
	free(b.hist_el);
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

/* The rank with the most compute time: the one a synchronous iteration
 * waits for. */
static int critical_rank(const struct engine_result *e)
{
	int best = 0;
	double most = -1;
	for (int i = 0; i < e->nranks; i++) {
		double c = 0;
		for (int k = 0; k < CAT_N; k++)
			c += e->rank[i].compute_s[k];
		if (c > most + 1e-12 * most) {
			most = c;
			best = i;
		}
	}
	return best;
}

struct side_out {
	double iteration_s;
	int critical;
	int ok;
};

/* One more engine run of job, in a child process (SimGrid runs once per
 * process; this one has not started it yet): its iteration time and
 * critical rank come back over a pipe. ok = 0 when it failed. */
static struct side_out side_run(const struct engine_job *job)
{
	struct side_out o = { 0, -1, 0 };
	int fd[2];
	if (pipe(fd))
		return o;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return o;
	}
	if (pid == 0) {
		struct engine_result er;
		struct diag dq;
		close(fd[0]);
		diag_init(&dq, NULL);
		if (engine_run(job, &er, &dq) == 0) {
			o.iteration_s = er.iteration_s;
			o.critical = critical_rank(&er);
			o.ok = 1;
		}
		_exit(write(fd[1], &o, sizeof(o)) == (ssize_t)sizeof(o) ? 0 : 1);
	}
	close(fd[1]);
	size_t got = 0;
	struct side_out in = o;
	while (got < sizeof(in)) {
		ssize_t n = read(fd[0], (char *)&in + got, sizeof(in) - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd[0]);
	waitpid(pid, NULL, 0);
	return got == sizeof(in) ? in : o;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Nearest-rank percentile q (0..100) of sorted v[0..n). */
static double percentile(const double *v, int n, double q)
{
	int k = (int)ceil(q / 100 * n);
	return v[k < 1 ? 0 : k - 1];
}

/* Stragglers' sampled iterations 1..iterations-1 and the degraded links'
 * sensitivity runs, before the reported run (job, iteration 0) starts
 * SimGrid in this process. times[0] and crit[0] are left for it. */
static int side_runs(const struct plan *pl, const struct engine_job *job0, int nranks,
		     double *times, int *crit, struct result *r, struct diag *d)
{
	struct engine_job job = *job0;
	job.obs = NULL;
	double *f = xreallocarray(NULL, (size_t)nranks, sizeof(*f));
	int rc = 0;
	for (int i = 1; i < pl->iterations && !rc; i++) {
		plan_straggler_factors(pl, nranks, i, f);
		job.compute_scale = f;
		struct side_out o = side_run(&job);
		if (!o.ok)
			rc = diag_errf(d, "sampled iteration %d of %d failed", i, pl->iterations);
		times[i] = o.iteration_s;
		crit[i] = o.critical;
	}
	job = *job0;
	job.obs = NULL;
	if (pl->sensitivity && !rc) {
		job.ndegraded = 0;
		struct side_out o = side_run(&job);
		r->sens_baseline_s = o.iteration_s;
		rc = o.ok ? 0 : diag_errf(d, "the run without degraded links failed");
		for (int i = 0; i < job0->ndegraded && !rc; i++) {
			job.degraded = &job0->degraded[i];
			job.ndegraded = 1;
			o = side_run(&job);
			r->sens_iteration_s[i] = o.iteration_s;
			if (!o.ok)
				rc = diag_errf(d, "the run with degraded link '%s' alone failed",
					       job0->degraded[i].link);
		}
		r->nsens = job0->ndegraded;
	}
	free(f);
	return rc;
}

/* The iteration-time distribution and the critical ranks (result.h). */
static void straggler_stats(int n, double *times, const int *crit, int nranks, struct result *r)
{
	int *count = xcalloc((size_t)nranks, sizeof(*count));
	for (int i = 0; i < n; i++)
		if (crit[i] >= 0 && crit[i] < nranks)
			count[crit[i]]++;
	r->ncritical = 0;
	for (int k = 0; k < RESULT_MAX_CRITICAL; k++) {
		int best = -1;
		for (int q = 0; q < nranks; q++)
			if (count[q] > 0 && (best < 0 || count[q] > count[best]))
				best = q;
		if (best < 0)
			break;
		r->critical_rank[k] = best;
		r->critical_count[k] = count[best];
		r->ncritical++;
		count[best] = 0;
	}
	free(count);
	r->iterations = n;
	qsort(times, (size_t)n, sizeof(*times), cmp_double);
	r->iter_min_s = times[0];
	r->iter_max_s = times[n - 1];
	r->iter_p50_s = percentile(times, n, 50);
	r->iter_p95_s = percentile(times, n, 95);
	r->iter_p99_s = percentile(times, n, 99);
}

/* Mixed clusters (plan node_groups): per group, the inputs priced for its
 * GPU and the programs of the stages its ranks hold; each rank's program. */
struct groups_built {
	struct inputs *vin[PLAN_MAX_NODE_GROUPS];      /* owned variants (NULL: the base) */
	struct program *prog[PLAN_MAX_NODE_GROUPS];    /* [pp] each, NULL: none built */
	struct program **rank_prog;                    /* [nranks] */
	double mem_worst[PLAN_MAX_NODE_GROUPS];        /* fullest stage on the group's GPU */
	double mem_capacity[PLAN_MAX_NODE_GROUPS];
	bool mem_fits[PLAN_MAX_NODE_GROUPS];
};

static void groups_finish(struct groups_built *g, int pp)
{
	for (int k = 0; k < PLAN_MAX_NODE_GROUPS; k++) {
		for (int s = 0; g->prog[k] && s < pp; s++)
			program_finish(&g->prog[k][s]);
		free(g->prog[k]);
		inputs_destroy(g->vin[k]);
	}
	free(g->rank_prog);
}

/* Whether two programs have the same tasks (kind, stream, group) in the
 * same order: ranks of one stage on different GPUs must replay the same
 * schedule with other times. */
static bool same_shape(const struct program *a, const struct program *b)
{
	if (a->n != b->n)
		return false;
	for (int i = 0; i < a->n; i++)
		if (a->t[i].kind != b->t[i].kind || a->t[i].stream != b->t[i].stream ||
		    a->t[i].group != b->t[i].group)
			return false;
	return true;
}

/* Build each group's programs (priced by its GPU's roofline, or by the
 * job's cost source where the GPU is the topology's) and point every rank
 * at its own; each stage's memory becomes the fullest of its GPUs
 * against that GPU's HBM (r->stage[s].mem, r->fits). */
static int build_groups(const struct inputs *in, const struct plan *pl,
			const struct placement *place, struct program *base, struct groups_built *g,
			struct result *r, struct diag *d)
{
	const struct topology *topo = inputs_topology(in);
	int nranks = place->nranks;
	bool *need = xcalloc((size_t)PLAN_MAX_NODE_GROUPS * pl->pp, sizeof(*need));
	int *rg = xreallocarray(NULL, (size_t)nranks, sizeof(*rg));
	double *cfwd = xcalloc((size_t)PLAN_MAX_NODE_GROUPS * pl->pp, sizeof(*cfwd));
	double *cbwd = xcalloc((size_t)PLAN_MAX_NODE_GROUPS * pl->pp, sizeof(*cbwd));
	int rc = -1;

	for (int q = 0; q < nranks; q++) {
		int c[DIM_N];
		placement_coords(place, q, c);
		rg[q] = plan_node_group(pl, topology_node_of(topo, q));
		BUG_ON(rg[q] < 0, "rank %d on node %d outside the node groups", q, topology_node_of(topo, q));
		need[rg[q] * pl->pp + c[DIM_PP]] = true;
	}
	for (int s = 0; s < pl->pp; s++)
		r->stage[s].mem.fits = true;
	bool first[PLAN_MAX_STAGES];
	for (int s = 0; s < pl->pp; s++)
		first[s] = true;
	for (int k = 0; k < pl->ngroups; k++) {
		const struct inputs *cin = in;
		bool any = false;
		for (int s = 0; s < pl->pp; s++)
			any |= need[k * pl->pp + s];
		if (!any)
			continue;
		if (memcmp(&pl->group[k].gpu, &topo->gpu, sizeof(topo->gpu)) != 0) {
			g->vin[k] = inputs_with_gpu(in, &pl->group[k].gpu);
			if (!g->vin[k]) {
				diag_errf(d, "out of memory for node group %d", k);
				goto out;
			}
			cin = g->vin[k];
		}
		g->prog[k] = xcalloc((size_t)pl->pp, sizeof(*g->prog[k]));
		g->mem_fits[k] = true;
		for (int s = 0; s < pl->pp; s++) {
			struct stage_result sr;
			program_init(&g->prog[k][s]);
			if (!need[k * pl->pp + s])
				continue;
			if (simulate_build_program(cin, pl, s, &g->prog[k][s], &sr)) {
				diag_errf(d, "cannot build the program of stage %d on node group %d (%s)", s, k,
					  pl->group[k].gpu.name);
				goto out;
			}
			BUG_ON(!same_shape(&g->prog[k][s], &base[s]),
			       "stage %d's program on GPU '%s' has another shape than on '%s'", s,
			       pl->group[k].gpu.name, topo->gpu.name);
			if (sr.mem.total_bytes > g->mem_worst[k]) {
				g->mem_worst[k] = sr.mem.total_bytes;
				g->mem_capacity[k] = sr.mem.capacity_bytes;
			}
			g->mem_fits[k] = g->mem_fits[k] && sr.mem.fits;
			cfwd[k * pl->pp + s] = sr.compute_fwd_s;
			cbwd[k * pl->pp + s] = sr.compute_bwd_s;
			/* memory: the stage's fullest GPU, relative to its own HBM */
			struct mem_anatomy *mm = &r->stage[s].mem;
			if (first[s] || sr.mem.total_bytes - sr.mem.capacity_bytes >
					mm->total_bytes - mm->capacity_bytes) {
				bool fits = first[s] ? sr.mem.fits : mm->fits && sr.mem.fits;
				*mm = sr.mem;
				mm->fits = fits;
			} else
				mm->fits = mm->fits && sr.mem.fits;
			first[s] = false;
		}
	}
	/* the stage's compute figures: its first rank's GPU */
	for (int s = 0; s < pl->pp; s++) {
		int k = rg[placement_rank(place, 0, 0, s)];
		r->stage[s].compute_fwd_s = cfwd[k * pl->pp + s];
		r->stage[s].compute_bwd_s = cbwd[k * pl->pp + s];
	}
	g->rank_prog = xreallocarray(NULL, (size_t)nranks, sizeof(*g->rank_prog));
	for (int q = 0; q < nranks; q++) {
		int c[DIM_N];
		placement_coords(place, q, c);
		g->rank_prog[q] = &g->prog[rg[q]][c[DIM_PP]];
	}
	rc = 0;
out:
	free(need);
	free(rg);
	free(cfwd);
	free(cbwd);
	return rc;
}

/* The node groups of the report, in node order (result.h). */
static void group_stats(const struct plan *pl, const struct placement *place,
			const struct topology *topo, const struct groups_built *gb, struct result *r)
{
	int node = 0;
	r->ngroups = 0;
	while (node < pl->nodes && r->ngroups < PLAN_MAX_NODE_GROUPS) {
		int k = plan_node_group(pl, node);
		struct group_result *gr = &r->group[r->ngroups];
		r->group_index[r->ngroups++] = k;
		memset(gr, 0, sizeof(*gr));
		snprintf(gr->gpu, sizeof(gr->gpu), "%s", pl->group[k].gpu.name);
		gr->first_node = node;
		gr->nodes = pl->group[k].nodes;
		gr->first_rank = node * topo->gpus_per_node;
		gr->ranks = gr->nodes * topo->gpus_per_node;
		gr->stage_lo = gr->stage_hi = -1;
		gr->fits = gb->mem_fits[k];
		gr->worst_total_bytes = gb->mem_worst[k];
		gr->capacity_bytes = gb->mem_capacity[k];
		for (int q = gr->first_rank; q < gr->first_rank + gr->ranks && q < r->eng.nranks; q++) {
			int c[DIM_N];
			placement_coords(place, q, c);
			int s = c[DIM_PP];
			if (gr->stage_lo < 0 || s < gr->stage_lo)
				gr->stage_lo = s;
			if (s > gr->stage_hi)
				gr->stage_hi = s;
			for (int cat = 0; cat < CAT_N; cat++)
				gr->compute_s += r->eng.rank[q].compute_s[cat] / gr->ranks;
		}
		node += gr->nodes;
	}
}

/* Whether window t lists rank q (by its rank or its node). */
static bool throttle_lists(const struct plan_throttle *t, const struct topology *topo, int q)
{
	for (int k = 0; k < t->n; k++)
		if (t->by_node ? topology_node_of(topo, q) == t->id[k] : q == t->id[k])
			return true;
	return false;
}

/* The throttling windows of the plan, one entry per rank and window
 * (caller frees; NULL when none). */
static struct engine_throttle *throttle_windows(const struct plan *pl, const struct topology *topo,
						int nranks, int *n)
{
	*n = 0;
	if (pl->nthrottle == 0)
		return NULL;
	struct engine_throttle *w = NULL;
	size_t cap = 0;
	for (int i = 0; i < pl->nthrottle; i++) {
		const struct plan_throttle *t = &pl->throttle[i];
		for (int q = 0; q < nranks; q++) {
			if (t->n > 0 && !throttle_lists(t, topo, q))
				continue;
			XGROW(w, cap, (size_t)*n + 1);
			w[(*n)++] = (struct engine_throttle){ q, t->start_s, t->start_s + t->duration_s,
							      t->factor };
		}
	}
	return w;
}

int simulate_run(const struct inputs *in, const struct plan *pl, struct result *r,
		 struct diag *d)
{
	return simulate_run_observed(in, pl, NULL, r, d);
}
/* Why a run is not folded (NULL if nothing stops it): said in the report
 * and after the summary, because an unfolded run of many ranks is slow
 * and the user may prefer simulation.fold "on" or "exact" (not exact
 * there). */
static const char *fold_reason(const struct plan *pl, const struct topology *t, bool tree_pp,
			       bool drift)
{
	if (pl->fold == FOLD_OFF)
		return "simulation.fold is \"off\"";
	if (pl->fold == FOLD_EXACT && tree_pp)
		return "a tree all-reduce with a pipeline loads its members' NICs unequally, so the "
		       "replicas' timelines differ: \"exact\" simulates every rank";
	if (pl->fold == FOLD_EXACT && drift)
		return "a pipeline of more than 2 stages with data-parallel groups whose members' "
		       "paths differ (a ring over several leaves) lets the replicas' timelines drift "
		       "apart: \"exact\" simulates every rank";
	if ((long)pl->tp * pl->cp * pl->dp <= 1)
		return "one rank per pipeline stage: nothing to fold";
	if (pl->dp_sync == DP_SYNC_PS)
		return "parameter servers: the replicas' pushes and pulls are not identical";
	if (plan_mixed_gpus(pl))
		return "node groups with different GPUs make the replicas differ";
	if (!topology_is_symmetric(t, pl->nodes))
		return t->fabric == FABRIC_RAIL
		       ? "the rail fabric is not symmetric at this node count (a partly filled rail switch)"
		       : "the fat tree is not symmetric at this node count (a partly filled leaf or pod)";
	if (t->fabric != FABRIC_NONBLOCKING && !strcmp(pl->coll_algo, "tree"))
		return "a forced tree all-reduce across switches is not folded exactly";
	return NULL;
}


/* How the gradient all-reduces of stage 0's program s0 treat the members
 * of rank 0's data-parallel group under the plan's algorithm. */
enum dp_alike {
	DP_ALIKE,          /* same bytes, same path latencies */
	DP_UNEQUAL_BYTES,  /* some move more bytes (coll_plan_busiest): a tree,
			    * forced or chosen by "auto" for some bucket sizes */
	DP_UNEQUAL_PATHS,  /* equal bytes, but some members' flows cross more
			    * switch levels (a ring over several leaves) */
};

static int dp_reduce_alike(const struct topology *t, const struct plan *pl,
			   const struct placement *place, const struct program *s0)
{
	int *mem = xreallocarray(NULL, (size_t)place->nranks + 1, sizeof(*mem));
	int n = placement_group(place, GROUP_DP, 0, mem), rc = DP_ALIKE;
	int *at = xreallocarray(NULL, (size_t)place->nranks + 1, sizeof(*at));
	double (*lat)[2] = xcalloc((size_t)n + 1, sizeof(*lat));
	double last = -1;   /* buckets of one size have one plan */
	for (int k = 0; k < n; k++)
		at[mem[k]] = k;
	for (int i = 0; i < s0->n && n > 1 && rc != DP_UNEQUAL_BYTES; i++) {
		const struct task *k = &s0->t[i];
		if (k->kind != TASK_COLL || k->group != GROUP_DP || k->op != COLL_ALLREDUCE ||
		    k->bytes <= 0 || k->bytes * k->count == last)
			continue;
		last = k->bytes * k->count;
		struct coll_plan *cp = coll_plan_create(t, pl->coll_algo, COLL_ALLREDUCE, mem, n, last);
		if (!cp) {
			rc = -1;
			break;
		}
		if (coll_plan_busiest(cp) >= 0)
			rc = DP_UNEQUAL_BYTES;
		/* the slowest path out of and into each member */
		memset(lat, 0, (size_t)n * sizeof(*lat));
		for (int f = 0; f < cp->nflows && rc == DP_ALIKE; f++) {
			const struct coll_flow *fl = &cp->flows[f];
			double l = topology_path_latency(t, fl->src, fl->dst);
			lat[at[fl->src]][0] = fmax(lat[at[fl->src]][0], l);
			lat[at[fl->dst]][1] = fmax(lat[at[fl->dst]][1], l);
		}
		for (int m = 1; m < n && rc == DP_ALIKE; m++)
			if (fabs(lat[m][0] - lat[0][0]) > 1e-12 || fabs(lat[m][1] - lat[0][1]) > 1e-12)
				rc = DP_UNEQUAL_PATHS;
		coll_plan_destroy(cp);
	}
	free(lat);
	free(at);
	free(mem);
	return rc;
}

int simulate_run_observed(const struct inputs *in, const struct plan *pl,
			  const struct engine_observer *obs, struct result *r, struct diag *d)
{
	const struct topology *topo = inputs_topology(in);
	const struct model *m = inputs_model(in);
	struct cost *cost = inputs_cost(in);
	struct placement place;
	struct program *progs = NULL, **pp = NULL;
	struct groups_built grp = { 0 };
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
	if (placement_init_ep(&place, pl->tp, pl->cp, pl->ep, pl->dp, pl->pp, pl->order))
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
	if (pl->ngroups > 0 && build_groups(in, pl, &place, progs, &grp, r, d))
		goto out;
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
	 * the fabric's symmetry under this node count, not from its kind.
	 * "auto" and "on" fold cheaply: the representative's own flows, daemon
	 * sinks for its folded peers, and where a plan loads its members
	 * unequally (a tree) the flows around its busiest member too (fold.c,
	 * plan_crit), the representative a replica of the trees' most common
	 * member (fold.c, majority_replica): within about 1e-4 of the
	 * unfolded run for ring and auto up to 64 nodes; with a pipeline the
	 * replicas run in lockstep, their messages and buckets aligned, which
	 * the unfolded replicas are not: +0.07 to +3.3 % with rings (Llama 3
	 * 8B, TP 8 x PP 4..16 x DP 16..64 on the 3-level fat tree), +3.9 %
	 * and +6.3 % with trees (PP 16 x DP 32 forced, PP 16 x DP 128 auto,
	 * where a light representative read -1.0 % and -9.6 %). "exact"
	 * (fold.c) posts whole groups and the mirror traffic that
	 * can meet simulated flows, equal to the unfolded run to 1e-9
	 * (tests/test-fold.c) at up to 2.4x the time (megatron-1t) and far
	 * more where groups share nodes (TP 4 on 8-GPU nodes: 60x). One case
	 * is not exact even so, and "exact" simulates every rank there: a
	 * tree with a pipeline, forced or chosen by "auto" for some bucket
	 * sizes (dp_reduce_alike; folded, Llama 3 8B on 2,048 DGX H100,
	 * TP 8 x PP 16 x DP 128, read 0.4085 s against 0.4506 s unfolded).
	 * A tree loads its members' NICs
	 * unequally, so the pipeline messages that share those NICs make the
	 * data-parallel replicas' timelines differ (10 DGX A100, TP 8 x DP 5 x
	 * PP 2: folded 0.42985 s, unfolded 0.43004 s). */
	bool tree_pp = pl->pp > 1 && pl->dp > 1 && !strcmp(pl->coll_algo, "tree");
	bool drift = false;
	if (pl->fold == FOLD_EXACT && !tree_pp && pl->pp > 1 && pl->dp > 1 && pl->dp_sync != DP_SYNC_PS) {
		int u = dp_reduce_alike(topo, pl, &place, &progs[0]);
		if (u < 0) {
			diag_errf(d, "cannot plan the gradient all-reduce with algorithm '%s'",
				  pl->coll_algo);
			goto out;
		}
		tree_pp = u == DP_UNEQUAL_BYTES;
		drift = u == DP_UNEQUAL_PATHS && pl->pp > 2;
	}
	/* stragglers, GPUs throttled on their own (not the whole job) and the
	 * GPUs whose traffic can cross a degraded link make their replicas
	 * differ: cheap folding simulates those replicas whole (fold.c,
	 * partial folding); exact folding does not fold them */
	unsigned char *distinct = NULL;
	bool any_distinct = false;
	if (plan_has_stragglers(pl) || pl->nthrottle > 0 || pl->ndegraded > 0) {
		distinct = xcalloc((size_t)place.nranks, 1);
		plan_straggler_mask(pl, place.nranks, distinct);
		if (pl->ndegraded > 0) {
			unsigned char *nm = xcalloc((size_t)pl->nodes, 1);
			for (int i = 0; i < pl->ndegraded; i++)
				platform_link_nodes(topo, pl->nodes, pl->degraded[i].link, nm);
			for (int q = 0; q < place.nranks; q++)
				distinct[q] |= nm[topology_node_of(topo, q)];
			free(nm);
		}
		/* a window over the whole job (no ranks, no nodes) keeps replicas alike */
		for (int i = 0; i < pl->nthrottle; i++)
			for (int q = 0; q < place.nranks; q++)
				distinct[q] |= throttle_lists(&pl->throttle[i], topo, q);
		for (int q = 0; q < place.nranks && !any_distinct; q++)
			any_distinct = distinct[q];
	}
	bool fold = pl->fold == FOLD_ON || (pl->fold == FOLD_EXACT && !tree_pp && !drift && !any_distinct) ||
		    (pl->fold == FOLD_AUTO && pl->dp_sync != DP_SYNC_PS && !plan_mixed_gpus(pl) &&
		     topology_is_symmetric(topo, pl->nodes) &&
		     (long)pl->tp * pl->cp * pl->dp > 1 &&
		     /* a forced tree is not exact folded beyond one switch (the
		      * residue of issue 16): simulate every rank */
		     (topo->fabric == FABRIC_NONBLOCKING || strcmp(pl->coll_algo, "tree") != 0));
	r->folded = fold;
	r->fold_reason = fold ? NULL : fold_reason(pl, topo, tree_pp, drift);
	struct engine_job job = { .topo = topo, .nodes = pl->nodes, .pl = &place,
				  .stage_prog = pp, .coll_algo = pl->coll_algo, .fold = fold,
				  .fold_exact = fold && pl->fold == FOLD_EXACT,
				  .sm_count = (int)topo->gpu.sm_count,
				  .interference_factor = cost_interference(cost), .obs = obs };
	struct engine_ps ps = {
		.servers = pl->ps_servers, .colocated = pl->ps_attach == PS_ATTACH_GPUS,
		.round_robin = pl->ps_shard == PS_SHARD_ROUND_ROBIN,
		.async = pl->ps_async, .staleness = pl->ps_staleness,
		.nic_bw_Bps = pl->ps_nic_Bps > 0 ? pl->ps_nic_Bps : topo->nic_bw_Bps,
		.nic_latency_s = pl->ps_latency_s >= 0 ? pl->ps_latency_s : topo->nic_latency_s,
	};
	if (pl->dp_sync == DP_SYNC_PS) {
		job.ps = &ps;
		if (pl->ps_async)
			job.repeat = pl->ps_iterations;
	}
	struct platform_degrade deg[PLAN_MAX_DEGRADED];
	for (int i = 0; i < pl->ndegraded; i++)
		deg[i] = (struct platform_degrade){ pl->degraded[i].link, pl->degraded[i].bw_factor,
						    pl->degraded[i].latency_factor };
	job.degraded = deg;
	job.ndegraded = pl->ndegraded;
	job.rank_prog = grp.rank_prog;
	struct engine_throttle *thr = throttle_windows(pl, topo, place.nranks, &job.nthrottle);
	job.throttle = thr;
	int nranks = place.nranks, nit = pl->iterations > 1 ? pl->iterations : 1;
	double *speed = xreallocarray(NULL, (size_t)nranks, sizeof(*speed));
	double *times = xcalloc((size_t)nit, sizeof(*times));
	int *crit = xcalloc((size_t)nit, sizeof(*crit));
	plan_straggler_factors(pl, nranks, 0, speed);
	if (plan_has_stragglers(pl))
		job.compute_scale = speed;
	if (any_distinct)
		job.distinct = distinct;
	int bad = side_runs(pl, &job, nranks, times, crit, r, d) || engine_run(&job, &r->eng, d);
	if (!bad && plan_has_stragglers(pl)) {
		times[0] = r->eng.iteration_s;
		crit[0] = critical_rank(&r->eng);
		straggler_stats(nit, times, crit, nranks, r);
	}
	free(speed);
	free(times);
	free(crit);
	free(thr);
	free(distinct);
	if (bad)
		goto out;
	for (int i = 0; i < r->eng.nranks; i++)
		r->throttle_s += r->eng.rank[i].throttle_s;
	if (r->folded && any_distinct && r->eng.nsimulated == r->eng.nranks) {
		r->folded = false;
		r->fold_reason = "every data-parallel replica holds a straggler, a throttled GPU or a "
				 "GPU behind a degraded link: nothing left to fold";
	}

	r->params = model_params(m);
	r->active_params = model_active_params(m);
	if (model_is_moe(m)) {
		struct wl_shape shp = plan_wl_shape(pl);
		struct moe_balance bal;
		workload_moe_balance(m, &shp, &bal);
		struct precision pr;
		precision_init(&pr, pl->precision, false);
		r->moe = true;
		r->moe_imbalance = bal.imbalance;
		r->moe_rank_load = bal.rank_load;
		r->moe_dropped_fraction = 1 - bal.kept_fraction;
		r->moe_a2a_bytes = (double)pl->micro_batch * (double)pl->seq / pl->cp /
				   (pl->sp ? pl->tp : 1) * (double)m->moe.top_k * bal.rank_load *
				   (double)m->hidden * dtype_bytes(pr.activation);
	}
	r->microbatches = (double)plan_microbatches(pl);
	r->iteration_s = r->eng.iteration_s;
	r->samples_per_s = (double)pl->global_batch / r->iteration_s;
	r->tokens_per_s = r->samples_per_s * (double)pl->seq;
	r->model_flops = model_iteration_flops(m, (double)pl->global_batch, (double)pl->seq);
	r->hardware_flops = builders[m->arch].hardware_flops(in, pl);
	r->peak_flops_per_gpu = topo->gpu.peak_flops[pl->precision];
	if (pl->ngroups > 0) {
		/* the mean peak of the job's GPUs */
		double sum = 0;
		for (int g = 0; g < pl->ngroups; g++)
			sum += (double)pl->group[g].nodes * pl->group[g].gpu.peak_flops[pl->precision];
		r->peak_flops_per_gpu = sum / pl->nodes;
	}
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
	if (pl->ngroups > 0) {
		/* each stage was checked on every GPU holding it (build_groups()) */
		double worst = -INFINITY;
		for (int s = 0; s < pl->pp; s++) {
			const struct mem_anatomy *mm = &r->stage[s].mem;
			if (mm->total_bytes - mm->capacity_bytes > worst) {
				worst = mm->total_bytes - mm->capacity_bytes;
				r->worst_stage = s;
				r->worst_total_bytes = mm->total_bytes;
			}
		}
		r->shortfall_bytes = r->fits ? 0 : worst;
		group_stats(pl, &place, topo, &grp, r);
	}
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
	groups_finish(&grp, pl->pp);
	for (int s = 0; s < pl->pp && progs; s++)
		program_finish(&progs[s]);
	free(progs);
	free(pp);
	return rc;
}

void simulate_row(const struct inputs *in, const struct plan *pl, struct result_row *row)
{
	struct result r;
	struct diag d;

	diag_init(&d, NULL);
	if (simulate_run(in, pl, &r, &d)) {
		result_row_fail(row, RESULT_FAILED, diag_text(&d));
		row->plan = *pl;
	} else {
		result_row_fill(row, &r);
		result_finish(&r);
	}
	diag_finish(&d);
}
