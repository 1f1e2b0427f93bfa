/* build_transformer_stage: what a stage of the transformer builder holds
 * and does around its steps: its layers and its parameters' shards, the
 * optimizer step after every reduction (on the CPU with offload), the
 * ZeRO-1/2 gathers of updated parameters (overlapped with the next
 * forward under overlap_param_gather), and its compute times and memory
 * anatomy (stage_result). */
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
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build_transformer-private.h"
#include "anatomy.h"
#include "stack.h"
#include "xalloc.h"

/* Adam step: read and write fp32 master, momentum, variance and the
 * gradient, write the 16-bit weights: about 34 bytes per local parameter
 * (precision.h), plus what the stack's optimizer moves beyond it
 * (gradient zeroing, norm and clipping, an unfused Adam's extra passes:
 * stack.h optimizer_Bpp, per ZeRO stage where the stack's engine has a
 * gradient path) in its kernels, less the 16-bit copy where the stack
 * writes none, and the zeroing of the whole gradient buffer where the
 * stack zeroes it (stack.h zero_grad_buffer: params_rank, not the shard). */
static double optimizer_time(const struct plan *pl, const struct gpu_spec *g,
			     double params_local, double params_rank)
{
	struct op op = { .kind = OP_MEMBOUND, .pass = PASS_FWD, .dtype = DTYPE_FP32, .batch = 1 };
	const struct stack *k = plan_stack(pl);
	snprintf(op.name, sizeof(op.name), "adam_step");
	snprintf(op.membound_kind, sizeof(op.membound_kind), "adam");
	struct precision pr;
	precision_init(&pr, pl->training.precision, false);
	if (pl->training.fp8_params)
		precision_fp8_params(&pr);
	if (pl->training.bf16_moments)
		precision_bf16_moments(&pr);
	op.bytes = params_local * (pr.optimizer_step_bytes + stack_optimizer_Bpp(k, pl->parallel.zero) -
				   (k->optimizer_copy16 ? 0 : pr.optimizer_copy_bytes));
	op.kernels = stack_optimizer_kernels(k, pl->parallel.zero);
	double t = cost_roofline_time(g, &op);
	if (k->zero_grad_buffer) {
		/* the whole gradient buffer of the rank's parameters (stack.h) */
		op.bytes = params_rank * dtype_bytes(pl->training.grad_dtype);
		op.kernels = 1;
		t += cost_roofline_time(g, &op);
	}
	return t;
}

/* The stage's layers and its parameters' shards, from the schedule's
 * order of steps. */
void stage_plan_init(struct stage_plan *sp, const struct builder *b, const struct model *m,
			    const struct sched_step *order, int m_mb)
{
	const struct plan *pl = b->pl;
	double t = pl->parallel.tp, le = b->le;
	int *chunk_layers = xmalloc((size_t)b->v * sizeof(int));

	memset(sp, 0, sizeof(*sp));
	sp->nsteps = schedule_steps(pl->parallel.schedule, m_mb, b->v);
	sp->last_b = xmalloc((size_t)b->v * sizeof(int));
	for (int c = 0; c < b->v; c++)
		sp->last_b[c] = -1;
	for (int i = 0; i < sp->nsteps; i++)
		if (!order[i].fwd && order[i].w == b->split)
			sp->last_b[order[i].chunk] = i;

	/* stage bookkeeping, memory inputs */
	bool has_emb = false, has_head = false;
	for (int c = 0; c < b->v; c++) {
		int f, nv, vs = builder_vstage(b, c, &nv);
		chunk_layers[c] = builder_vstage_layers(b, vs, nv, &f);
		has_emb |= vs == 0;
		has_head |= vs == nv - 1;
		if (c == 0)
			sp->first0 = f;
		sp->layers += chunk_layers[c];
		if (f < b->n_dense)
			sp->dense += chunk_layers[c] - (int)model_moe_layers_in(m, f, chunk_layers[c]);
		for (int l = f; l < f + chunk_layers[c]; l++)
			sp->kinds[builder_kind(b, l)]++;
	}
	double alive = 0;
	for (int i = 0; i < sp->nsteps; i++) {
		alive += schedule_step_inflight(&order[i], b->split) * chunk_layers[order[i].chunk];
		if (alive > sp->peak_alive)
			sp->peak_alive = alive;
	}
	free(chunk_layers);

	int layers = sp->layers, moe = layers - sp->dense;
	/* the layers' TP-sharded parameters: MoE layers less their experts,
	 * dense first layers whole */
	double psi_layers = (moe * (model_layer_params(m) - le) +
			     sp->dense * model_dense_layer_params(m)) / t;
	/* dualpipe's first and last ranks hold both ends (schedule.h) */
	sp->has_emb = has_emb;
	sp->has_head = has_head;
	sp->psi = psi_layers + (sp->has_emb ? model_embedding_params(m) / t : 0) +
		  (sp->has_head ? (model_head_params(m) + model_mtp_extra_params(m)) / t + b->tied_copy : 0);
	sp->psi_e = moe * le / (plan_etp(pl) * pl->parallel.ep);  /* this rank's experts */
	sp->ndp = plan_shard_group(pl);          /* gradients and optimizer shards span dp x cp,
						    or the shard group (hybrid sharding) */
	sp->nedp = sp->ndp / pl->parallel.ep;    /* experts: the expert-data-parallel ranks */
	if (plan_etp(pl) != pl->parallel.tp)     /* etp 1: the tp ranks hold copies too */
		sp->nedp = (int)plan_edp(pl);
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

/* The stage's gradient bytes of dense parameters in forward order (the
 * embedding, its chunks' layers, the head), which param_gate walks. */
static double stage_grad_bytes(struct builder *b)
{
	int nv, first;
	double total = 0;
	for (int c = 0; c < b->v; c++) {
		int vs = builder_vstage(b, c, &nv);
		int nl = builder_vstage_layers(b, vs, nv, &first);
		for (int l = 0; l < nl; l++)
			total += b->kind[builder_kind(b, first + l)].grad_bytes;
		total += (vs == 0 ? b->grads.grad_bytes_embed : 0) + (vs == nv - 1 ? b->grads.grad_bytes_head : 0);
	}
	return total;
}

/* Megatron-Core's overlap_param_gather (Megatron-LM f2e5db40, the commit
 * of the README's H100 table, megatron/core/optimizer/distrib_optimizer.py
 * L1325-1337, L1413-1475): one all-gather per gradient bucket (the
 * parameter buffer shares the gradient buffer's buckets, L484-501),
 * ordered as the forward uses them (L1355-1361). The first is dispatched
 * before the forward; a forward pre-hook makes each module's first use of
 * a bucket's parameters wait for its all-gather and only then dispatches
 * the next one (L1454-1475: not all at once, so that the communication
 * kernels do not head-of-line block compute under
 * CUDA_DEVICE_MAX_CONNECTIONS=1). The all-gathers thus run one after
 * another on their stream during the first forward of the step, and each
 * layer of that forward waits for the bucket its parameters end in
 * (param_gate, build_transformer_step.c); later micro-batches find them
 * gathered. A bucket is the gradient bucket's parameters (bucket_bytes
 * of gradients) in the gathered dtype. */
void builder_overlapped_param_gather(struct builder *b, const struct stage_plan *sp)
{
	double bucket_params = b->pl->communication.bucket_bytes / b->grads.gb;
	int n = bucket_params > 0 ? (int)ceil(sp->psi / bucket_params) : sp->ag_count;
	if (n < 1)
		n = 1;
	struct task ag = { .kind = TASK_COLL, .stream = STREAM_PARAM, .cat = CAT_PARAM_COMM,
			   .op = COLL_ALLGATHER, .group = b->zgroup, .bytes = sp->ag_total / n,
			   .count = 1, .launch_s = b->z3.launch_s };
	b->pg.total = stage_grad_bytes(b);
	if (b->pg.total <= 0)
		return;
	b->pg.ids = xmalloc((size_t)n * sizeof(int));
	b->pg.done = xcalloc((size_t)b->v, 1);
	b->pg.n = n;
	for (int i = 0; i < n; i++)
		b->pg.ids[i] = program_add(b->p, &ag, i ? &b->pg.ids[i - 1] : NULL, i ? 1 : 0);
}

/* The optimizer step after every reduction (on the CPU with offload),
 * then the ZeRO-1/2 gathers of updated parameters. */
void builder_optimizer_step(struct builder *b, const struct stage_plan *sp,
			   const struct topology *topo)
{
	const struct plan *pl = b->pl;
	struct program *p = b->p;
	double psi_opt = sp->psi / (pl->parallel.zero >= ZERO_1 ? sp->ndp : 1) +
			 sp->psi_e / (pl->parallel.zero >= ZERO_1 ? sp->nedp : 1);
	struct task opt = { .kind = TASK_COMPUTE, .stream = STREAM_COMPUTE, .cat = CAT_OPTIMIZER,
			    .time_s = optimizer_time(pl, &topo->gpu, psi_opt, sp->psi + sp->psi_e) };
	if (pl->parallel.dp_sync == DP_SYNC_PS)
		opt.time_s = 0;     /* the parameter servers update the weights (engine.h) */
	int *deps = xmalloc((size_t)(b->grads.ndp + 2) * sizeof(int));
	if (b->grads.ndp)
		memcpy(deps, b->grads.dp_tasks, (size_t)b->grads.ndp * sizeof(int));
	deps[b->grads.ndp] = b->stream.last;
	if (pl->parallel.offload != OFFLOAD_NONE) {
		/* the CPU step after every gradient copy (host stream order) */
		struct task cpu = { .kind = TASK_COMPUTE, .stream = STREAM_HOST, .cat = CAT_OFFLOAD,
				    .time_s = psi_opt * topo->gpus_per_node / OFFLOAD_CPU_ADAM_PARAMS_PER_S };
		int c = program_add(p, &cpu, deps, b->grads.ndp + 1);
		if (pl->parallel.offload == OFFLOAD_OPTIMIZER)
			c = builder_host_copy(b, psi_opt * dtype_bytes(b->pr.weight), c);
		opt.time_s = 0;
		deps[0] = c;
		deps[1] = b->stream.last;
		b->stream.last = program_add(p, &opt, deps, 2);
	} else
		b->stream.last = program_add(p, &opt, deps, b->grads.ndp + 1);
	free(deps);
	if (sp->gather && !pl->communication.overlap_param_gather) {
		/* buckets back to back: one merged task */
		struct task ag = { .kind = TASK_COLL, .stream = STREAM_DP, .cat = CAT_DP_COMM,
				   .op = COLL_ALLGATHER, .group = b->zgroup, .bytes = sp->ag_total / sp->ag_count,
				   .count = sp->ag_count, .launch_s = b->z3.launch_s };
		program_add(p, &ag, &b->stream.last, 1);
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
			program_add(p, &ag, &b->stream.last, 1);
	}
}

/* The stage's compute times and memory anatomy (stage_result). */
void builder_stage_result(struct stage_result *sr, const struct builder *b,
			      const struct stage_plan *sp, const struct inputs *in)
{
	int layers = sp->layers, dense = sp->dense;
	const struct blocks *k = &b->kind[0].bk;
	bool has_emb = sp->has_emb, has_head = sp->has_head;
	memset(sr, 0, sizeof(*sr));
	sr->stage = b->stage;
	sr->layers = layers;
	sr->first_layer = sp->first0;
	sr->has_embedding = has_emb;
	sr->has_head = has_head;
	sr->peak_inflight_chunks = (int)b->p->peak_inflight;
	sr->inflight = layers ? sp->peak_alive / layers : 0;
	sr->compute_fwd_s = (has_emb ? k->fwd[WL_EMBED] : 0) + (has_head ? k->fwd[WL_HEAD] : 0);
	sr->compute_bwd_s = (has_emb ? k->bwd[WL_EMBED] : 0) + (has_head ? k->bwd[WL_HEAD] : 0);
	for (int i = 0; i < 4; i++) {
		const struct blocks *ki = &b->kind[i].bk;
		sr->compute_fwd_s += sp->kinds[i] * (ki->fwd[WL_ATTN] + ki->fwd[WL_MLP]);
		sr->compute_bwd_s += sp->kinds[i] * (ki->bwd[WL_ATTN] + ki->bwd[WL_MLP]);
	}
	if (b->pl->parallel.schedule == SCHED_DUALPIPE) {
		/* a micro-batch passes one of the rank's two chunks: the mean */
		sr->compute_fwd_s /= 2;
		sr->compute_bwd_s /= 2;
	}
	struct mem_rank_input mi;
	anatomy_input(in, b->pl, layers, dense, sr->inflight, has_emb, has_head, &mi);
	bool *fwd = anatomy_order(b->pl, b->stage, &mi);
	memory_rank(&mi, &sr->mem);
	free(fwd);
}
