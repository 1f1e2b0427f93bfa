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
 * Mixture of experts (models/moe.h, workload.h), as Megatron-Core's
 * alltoall token dispatcher runs it (Megatron-LM core_v0.10.0, commit
 * 7ee599a, megatron/core/transformer/moe/token_dispatcher.py,
 * MoEAlltoAllTokenDispatcher, whose tp_size/tp_group are the expert-tensor
 * ones, L51, L60-62; the same collectives in core_v0.12.0 L531-545,
 * L621-636 and core_v0.14.0 L625-660, L738-772): the MoE layer takes the
 * sequence-parallel shard of the hidden states (moe_layer.py refuses TP
 * without SP in training, core_v0.10.0 L130-139, core_v0.14.0 L258), so no
 * SP all-gather or reduce-scatter of the hidden states surrounds it
 * (transformer_layer.py L298-347: the attention's output projection
 * reduce-scatters, the residual and the pre-MLP norm run on the shard,
 * then the MoE layer). Its MLP half is the router part (norm, router,
 * permute of the rank's T / tp tokens' k copies), the token dispatch
 * all-to-all over the EP group (L502-504; EP stream, blocking compute;
 * none at ep 1, where all_to_all on a group of one returns its input),
 * with etp > 1 the all-gather of the received copies over the expert-TP
 * group (L508-515: etp x the rank's copies gathered), the local experts'
 * grouped GEMMs (FFN / etp, experts.py L117-128, no collective of their
 * own), the reduce-scatter of their outputs over expert TP (L560-567), the
 * combine all-to-all (L571-573) and the rest (unpermute, shared experts,
 * residual); backward runs it in reverse, each collective's gradient its
 * mirror (all-to-all for all-to-all, reduce-scatter for all-gather:
 * tensor_parallel/mappings.py L296-373, L418-452). Each all-to-all moves N
 * = T / tp k h bytes x the busiest rank's load per rank, the expert-TP
 * all-gather and reduce-scatter N = etp x that (the group's members hold
 * the same experts, so the same load; not node-limited), and the expert
 * GEMMs are priced for the busiest rank, so the group runs at its slowest
 * rank's pace. Shared experts (shared_experts.py, an MLP over the
 * attention TP group, run after the combine without
 * moe_shared_expert_overlap, moe_layer.py L149-152) have the usual SP
 * all-gather and reduce-scatter of the hidden states over TP (with the
 * backward re-gather), here around the block's part after the combine.
 * tp_comm_overlap (userbuffers) does not reach the MoE half: the experts'
 * linears have no TP communication of their own. Dense gradients are
 * reduced over GROUP_DP, expert gradients over GROUP_EDP (dp / ep x cp);
 * the optimizer shards and the ZeRO-1/2 gathers follow the same split.
 * Expert tensor parallelism (parallel.etp, Megatron-Core's MoE "parallel
 * folding", --expert-tensor-parallel-size): etp = tp (the default) runs
 * the experts over tp, the expert-TP group being the TP group; with etp =
 * 1 there is no expert-tensor collective at all, the whole experts on the
 * rank's routed copies (etp x T / tp k, workload.c moe_block); its expert
 * weights, gradients and optimizer state are le / (etp ep) per rank,
 * reduced and sharded over dp x cp x tp / (etp ep) expert-data-parallel
 * ranks, and the EP group is folded onto ep consecutive ranks of the stage
 * as Megatron-Core lays it out (GROUP_EP, GROUP_EDP: placement_set_etp;
 * the dispatch's node-limited scale with stride 1, plan_ep_stride). Only
 * etp 1 and tp are built (plan_check.c).
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
 * they live). Embedding and head stay on the GPU.
 *
 * The builder's files (build_transformer-private.h): this one (sizes and
 * a stage's program), build_transformer_step.c (a pass through the
 * stage's layers), build_transformer_grads.c (gradient reductions),
 * build_transformer_stage.c (around the steps: shards, optimizer, the
 * stage's result). */
#include "build_transformer.h"
#include "build_transformer-private.h"

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

int builder_kind(const struct builder *b, long layer)
{
	if (layer >= b->m->layers)     /* an MTP block: the last layer's kind */
		layer = b->m->layers - 1;
	return (layer < b->n_dense ? 1 : 0) | (model_layer_slides(b->m, layer) ? 2 : 0);
}

/* A layer kind's sizes (struct layer_kind; dense: an MoE model's dense
 * first layers), its blocks not priced. */
static void kind_sizes(struct builder *b, struct layer_kind *k, bool dense)
{
	const struct plan *pl = b->pl;
	const struct model *m = b->m;
	double t = pl->parallel.tp, le = dense ? 0 : b->le;
	double lp = dense ? model_dense_layer_params(m) : model_layer_params(m);

	double te = plan_etp(pl);
	k->moe = !dense && model_is_moe(m);
	k->moe_a2a = k->moe && pl->parallel.ep > 1;
	k->etp_gather = k->moe && te > 1;
	k->shared_sp = k->moe && m->moe.shared_experts > 0 && t > 1;
	k->grad_bytes = (lp - le) / t * b->grads.gb;
	k->grad_bytes_expert = le / (te * pl->parallel.ep) * b->grads.gb;
	if (b->frozen) {
		k->grad_bytes = finetune_layer_adapter_params(m, &pl->training.finetune,
							      pl->parallel.tp) * b->grads.gb;
		k->grad_bytes_expert = 0;
	}
	k->param_bytes = lp / t * b->z3.wbytes;
	k->gather_copy_s = b->fsdp2 ? builder_copy_time(b, "fsdp_gather_copy_out", k->param_bytes / b->z3.wbytes,
						2 * k->param_bytes, 1) : 0;
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
	b->msg.act_bytes = (double)pl->training.micro_batch * s_local * (double)m->hidden *
		       dtype_bytes(pr.activation);
	{
		/* K and V of this rank's tokens; KV heads fewer than tp are replicated */
		double hd = (double)model_head_dim(m), kvh = (double)m->kv_heads / t;
		double tok = (double)pl->training.micro_batch * s_local * dtype_bytes(pr.activation);
		if (kvh < 1)
			kvh = 1;
		b->msg.cp_kv_bytes = 2 * kvh * hd * tok;
		b->msg.cp_qkv_bytes = ((double)m->heads / t * hd) * tok + b->msg.cp_kv_bytes;
		b->msg.cp_out_bytes = (double)m->heads / t * hd * tok;
	}
	b->msg.ag_bytes = b->msg.act_bytes / dtype_bytes(pr.activation) * dtype_bytes(pr.tp_comm);
	double gb = dtype_bytes(pl->training.grad_dtype);
	b->grads.gb = gb;
	b->le = model_layer_expert_params(m);   /* 0 when dense */
	b->msg.host_bw_Bps = topology_host_bw(topo);
	for (int i = 0; i < WL_NBLOCKS; i++)
		b->msg.rs_margin[i] = 1;
	b->msg.rs_margin[WL_ATTN] = gpu_sm_margin_slowdown(topo->gpu.sm_count, pl->communication.tp_rs_margin_sms[0]);
	b->msg.rs_margin[WL_MLP] = gpu_sm_margin_slowdown(topo->gpu.sm_count, pl->communication.tp_rs_margin_sms[1]);
	{
		struct wl_shape shp = plan_wl_shape(pl);
		struct moe_balance bal;
		workload_moe_balance(m, &shp, &bal);
		double tok = (double)pl->training.micro_batch * s_local / (pl->parallel.sp ? t : 1);
		/* node-limited routing: the deduplicated cross-node volume (moe.h) */
		double nl = moe_dispatch_scale(&m->moe, pl->parallel.ep, plan_ep_stride(pl), topo->gpus_per_node);
		b->msg.ep_bytes = tok * (double)m->moe.top_k * bal.rank_load * (double)m->hidden *
			      dtype_bytes(pr.activation) * nl;
		/* the etp group's received copies gathered (not node-limited:
		 * its members hold the same experts) */
		b->msg.etp_bytes = plan_etp(pl) * tok * (double)m->moe.top_k * bal.rank_load *
				   (double)m->hidden * dtype_bytes(pr.activation);
	}
	b->grads.grad_bytes_embed = model_embedding_params(m) / t * gb;
	/* with tied embeddings and a pipeline, the last stage keeps its own
	 * copy of the word embeddings for the LM head (Megatron-LM) */
	b->tied_copy = m->tied_embeddings && pl->parallel.pp > 1
			       ? (double)m->vocab * (double)m->hidden / t : 0;
	b->grads.grad_bytes_head = ((model_head_params(m) + model_mtp_extra_params(m)) / t + b->tied_copy) * gb;
	b->frozen = finetune_frozen(&pl->training.finetune);
	if (b->frozen) {
		/* LoRA / QLoRA: only the adapters' gradients are reduced */
		b->grads.grad_bytes_embed = b->grads.grad_bytes_head = 0;
		b->tied_copy = 0;
	}
	b->z3.wbytes = dtype_bytes(pr.layer_weight);
	b->fsdp2 = plan_stack(pl)->fsdp2_copies && pl->parallel.zero >= ZERO_3 &&
		   (long)pl->parallel.dp * pl->parallel.cp > 1;
	b->fsdp1 = plan_stack(pl)->fsdp1_flat;
	b->zgroup = plan_hsdp(pl) ? GROUP_DPS : GROUP_DP;
	for (int k = 0; k < 4; k++)
		kind_sizes(b, &b->kind[k], k & 1);
	b->n_dense = model_is_moe(m) ? m->moe.first_dense : 0;
	b->lk = &b->kind[0];
	/* DeepSpeed 0.4's ZeRO-3 (stack deepspeed-zero3-2021) gathers per
	 * tensor with that version's defaults whatever the framework preset */
	b->z3.fw = plan_z3_framework(pl);
	b->z3.ranks = plan_hsdp(pl) ? plan_shard_group(pl) : (long)pl->parallel.dp * pl->parallel.cp;
	b->z3.inflight = b->z3.last_param = -1;
	b->z3.launch_s = b->z3.fw ? b->z3.fw->launch_s : 0;
	b->z3.per_tensor = plan_z3_per_tensor(pl, b->z3.fw);
	b->z3.sync = plan_stack(pl)->ds_zero3_2021 && b->z3.per_tensor;
	/* a layer's weight tensors, as the nn.Linear modules hold them */
	b->z3.ntens = model_linear_weights(m, b->z3.tens);
	b->z3.tens_total = 0;
	for (int i = 0; i < b->z3.ntens; i++) {
		b->z3.tens[i] /= t;
		b->z3.tens_total += b->z3.tens[i];
	}
	b->z3.last_use = xmalloc((size_t)m->layers * sizeof(double));
	for (long i = 0; i < m->layers; i++)
		b->z3.last_use[i] = -1;
	b->z3.last_use_t = xmalloc((size_t)m->layers * 8 * sizeof(double));
	for (long i = 0; i < m->layers * 8; i++)
		b->z3.last_use_t[i] = -1;
}

/* Step i of the order. DualPipe (schedule.h): the forward of an F&B
 * pair posts its send after the pair's backward (the reference batches
 * the pair's sends after its compute), a whole backward its send after
 * its W. */
static void build_step(struct builder *b, const struct sched_step *order, int i, const int *last_b)
{
	const struct sched_step *x = &order[i];
	bool last = i == last_b[x->chunk];
	if (x->fwd) {
		builder_forward_send(b, x->mb, x->chunk, !x->pair);
		return;
	}
	if (!x->w) {
		builder_backward_send(b, x->mb, x->chunk, last, !x->whole);
		return;
	}
	builder_weight(b, x->mb, x->chunk, last);
	if (x->whole)
		builder_send(b, false, x->mb, x->chunk);
	/* a pair's forward: its backward (and the W of a whole one) done */
	const struct sched_step *f = i >= 2 && order[i - 1].whole ? &order[i - 2] : NULL;
	if (f && f->fwd && f->pair)
		builder_send(b, true, f->mb, f->chunk);
}

int build_transformer_program(const struct inputs *in, const struct plan *pl, int stage,
			      struct program *p, struct stage_result *sr)
{
	const struct model *m = inputs_model(in);
	struct builder b = { .pl = pl, .m = m, .p = p, .stage = stage, .pp = pl->parallel.pp,
			   .stream = { .last = -1, .gate = -1, .prev_mark = -1 }, .cost = inputs_cost(in) };
	int m_mb = (int)plan_microbatches(pl);
	struct stage_plan sp;

	b.v = schedule_chunks(pl->parallel.schedule, pl->parallel.interleave);
	b.split = schedule_splits_backward(pl->parallel.schedule);
	builder_sizes(&b, in, pl);
	bool slides = model_sliding_layers_in(m, 0, m->layers) > 0;
	for (int k = 0; k < 4; k++) {
		if ((k & 1 && b.n_dense == 0) || (k & 2 && !slides))
			continue;  /* no such layer */
		if (blocks_price_kind(pl, m, inputs_cost(in), k & 1, k & 2, &b.kind[k].bk)) {
			free(b.z3.last_use);
			free(b.z3.last_use_t);
			return -1;
		}
	}
	struct sched_step *order = schedule_order(pl->parallel.schedule, pl->parallel.pp, stage, m_mb, b.v);
	if (!order) {
		free(b.z3.last_use);
		free(b.z3.last_use_t);
		return -1;
	}
	stage_plan_init(&sp, &b, m, order, m_mb);
	if (sp.gather && pl->communication.overlap_param_gather)
		builder_overlapped_param_gather(&b, &sp);
	for (int i = 0; i < sp.nsteps; i++)
		build_step(&b, order, i, sp.last_b);
	builder_flush_bucket(&b);
	/* the two copies of tied embeddings sum their gradients (Megatron's
	 * embedding group: first and last stage) */
	if (b.tied_copy > 0 && (sp.has_emb || sp.has_head)) {
		struct task t_emb = { .kind = TASK_COLL, .stream = STREAM_DP, .cat = CAT_DP_COMM,
				      .op = COLL_ALLREDUCE, .group = GROUP_EMB, .bytes = b.tied_copy * b.grads.gb,
				      .launch_s = b.z3.launch_s };
		int id = program_add(p, &t_emb, &b.stream.last, 1);
		XGROW(b.grads.dp_tasks, b.grads.capdp, (size_t)b.grads.ndp + 1);
		b.grads.dp_tasks[b.grads.ndp++] = id;
	}
	/* dualpipe: ranks s and pp - 1 - s hold the two copies of the same
	 * layers (and the first and last both ends), whose gradients are
	 * summed before the step, as the reference's example does it after
	 * DualPipe.step() (examples/example_dualpipe.py at 3da1bbea: each
	 * copy's gradient plus its mirror's); here one all-reduce of the
	 * rank's gradients with its mirror's after the last W */
	if (pl->parallel.schedule == SCHED_DUALPIPE && pl->parallel.pp > 1) {
		struct task t_mir = { .kind = TASK_COLL, .stream = STREAM_DP, .cat = CAT_DP_COMM,
				      .op = COLL_ALLREDUCE, .group = GROUP_MIRROR,
				      .bytes = (sp.psi + sp.psi_e) * b.grads.gb, .launch_s = b.z3.launch_s };
		int id = program_add(p, &t_mir, &b.stream.last, 1);
		XGROW(b.grads.dp_tasks, b.grads.capdp, (size_t)b.grads.ndp + 1);
		b.grads.dp_tasks[b.grads.ndp++] = id;
	}
	builder_optimizer_step(&b, &sp, inputs_topology(in));
	p->peak_inflight = schedule_peak_inflight(order, sp.nsteps);
	if (sr)
		builder_stage_result(sr, &b, &sp, in);
	free(sp.last_b);
	free(order);
	free(b.grads.dp_tasks);
	free(b.z3.last_use);
	free(b.z3.last_use_t);
	free(b.z3.hist_before);
	free(b.z3.hist_el);
	free(b.pg.ids);
	free(b.pg.done);
	return 0;
}

double build_transformer_hardware_flops(const struct inputs *in, const struct plan *pl)
{
	struct wl_shape shp = plan_wl_shape(pl);
	double dense, layers = plan_recomputed_model_layers(pl, inputs_model(in), &dense);
	return workload_iteration_flops_layers(inputs_model(in), &shp, pl->parallel.recompute,
					       (double)pl->training.global_batch, layers, dense);
}