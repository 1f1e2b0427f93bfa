/* build_transformer_grads: the transformer builder's gradients across
 * data-parallel ranks: buckets filled as backward produces gradients,
 * their reductions (all-reduce, or reduce-scatter under ZeRO >= 1; FSDP2's
 * copy into the reduce-scatter buffer, FSDP1's gradient divides) on the
 * DP stream, dense over GROUP_DP and experts over GROUP_EDP, and the
 * offload copies of each reduced share over the host link.
 *
 * Hybrid sharding (plan shard_group g < dp x cp, GROUP_DPS / GROUP_DPR):
 * each bucket is reduce-scattered within the shard group of g ranks, then
 * the rank's reduced shard (bytes / g) is all-reduced across the
 * dp x cp / g shard groups. PyTorch FSDP2 (a stack with fsdp2_copies) runs
 * the all-reduce on a stream of its own, so the next bucket's
 * reduce-scatter does not wait for it
 * (pytorch 010ae4a8, torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py
 * foreach_reduce: reduce_scatter on reduce_scatter_stream, then
 * dist.all_reduce(reduce_output, group=all_reduce_group) on
 * all_reduce_stream after all_reduce_stream.wait_stream(reduce_scatter_stream));
 * Megatron-Core's partial distributed optimizer
 * (--num-distributed-optimizer-instances, Megatron-LM 00119989,
 * megatron/core/distributed/param_and_grad_buffer.py start_grad_sync: the
 * bucket group's reduce-scatter over the intra-instance group, then the
 * all-reduce of each bucket's local shard over
 * inter_distributed_optimizer_instance_group, both on one
 * communication_stream: here both on the DP stream); DeepSpeed MiCS the
 * same shape (its hierarchical parameter all-gather is not modelled). The
 * optimizer waits for the all-reduces. */
#include <stdio.h>

#include "build_transformer-private.h"
#include "xalloc.h"

/* Ranks that hold copies of a gradient of group g (GROUP_DP, GROUP_EDP). */
static long grad_ranks(const struct plan *pl, enum group_kind g)
{
	if (g == GROUP_EDP && plan_etp(pl) != pl->parallel.tp)
		return plan_edp(pl);
	return (long)pl->parallel.dp * pl->parallel.cp / (g == GROUP_EDP ? pl->parallel.ep : 1);
}

/* Offload: a copy of bytes over the GPU's host link after dep. */
int builder_host_copy(struct builder *b, double bytes, int dep)
{
	struct task t = { .kind = TASK_COMPUTE, .stream = STREAM_HOST, .cat = CAT_OFFLOAD,
			  .time_s = bytes / b->msg.host_bw_Bps };
	return program_add(b->p, &t, &dep, 1);
}

/* The time of kernels copy kernels moving bytes over elements (stack
 * pieces FSDP2 and DeepSpeed run around their collectives), priced by
 * the cost source. */
double builder_copy_time(const struct builder *b, const char *name, double elements, double bytes,
			 int kernels)
{
	struct op op = { .kind = OP_MEMBOUND, .pass = PASS_FWD, .dtype = DTYPE_BF16,
			 .batch = 1, .m = elements, .bytes = bytes, .kernels = kernels };
	snprintf(op.name, sizeof(op.name), "%s", name);
	snprintf(op.membound_kind, sizeof(op.membound_kind), "copy_fwd");
	return cost_op_time(b->cost, &op);
}

/* The data-parallel wrapper's passes over a bucket of `bytes` of
 * gradients before its reduction (framework.h bucket_nan_check,
 * bucket_scale): the NaN check's norm reads it, the 1/dp scaling reads
 * and writes it; on the compute stream, where the gradient hook runs
 * them. */
static void bucket_passes(struct builder *b, double bytes)
{
	const struct framework *f = b->z3.fw;
	int kernels = f ? f->bucket_nan_check + f->bucket_scale : 0;
	if (kernels == 0 || b->fsdp2)
		return;
	struct op op = { .kind = OP_MEMBOUND, .pass = PASS_BWD, .dtype = DTYPE_FP32,
			 .batch = 1, .m = bytes / b->grads.gb, .kernels = kernels,
			 .bytes = bytes * (f->bucket_nan_check + 2 * f->bucket_scale) };
	snprintf(op.name, sizeof(op.name), "grad_bucket_check");
	snprintf(op.membound_kind, sizeof(op.membound_kind), "copy_fwd");
	builder_compute(b, CAT_BACKWARD, cost_op_time(b->cost, &op), 0, -1, -1, b->stream.last);
}

/* FSDP1's gradient predivide factor over n ranks (torch 2.0
 * algorithms/_comm_hooks/default_hooks.py DefaultState
 * _get_gradient_predivide_factor): the largest power of two f with
 * n / f <= f reached by doubling while f divides n; the postdivide factor
 * is n / f (8 ranks: 4 and 2; 2 ranks: 2 and 1). */
static double fsdp1_predivide(long n)
{
	long f = 1;
	while (n % f == 0 && n / (double)f > (double)f)
		f *= 2;
	return (double)f;
}

/* FSDP1's reduce hook (stack.h fsdp1_flat): the unsharded gradient of
 * `bytes` divided by the predivide factor before the collective and its
 * result by the postdivide factor after it where that exceeds 1 (the
 * rank's shard, bytes / n, after a reduce-scatter; the whole gradient
 * after NO_SHARD's all-reduce), read and write each, on the
 * post-backward stream. Priced as one task ahead of the collective;
 * returns it. */
static int fsdp1_divide(struct builder *b, double bytes, long n, int dep)
{
	double el = bytes / b->grads.gb, pre = fsdp1_predivide(n);
	double out = b->pl->parallel.zero >= ZERO_1 ? 1.0 / (double)n : 1;
	double moved = 2 * bytes * ((pre > 1 ? 1 : 0) + ((double)n / pre > 1 ? out : 0));
	struct task c = { .kind = TASK_COMPUTE, .stream = STREAM_DP, .cat = CAT_DP_COMM,
			  .time_s = builder_copy_time(b, "fsdp1_grad_div", el, moved, 1) };
	return program_add(b->p, &c, &dep, 1);
}

/* DeepSpeed 0.4's ZeRO-3 all-reduces each gradient bucket (stage3.py
 * buffered_reduce_fallback: contiguous_gradients off by default; stack
 * deepspeed-zero3-2021) where later versions reduce-scatter it. */
static bool ds2021_allreduce(const struct builder *b)
{
	return plan_stack(b->pl)->ds_zero3_2021 && b->pl->parallel.zero >= ZERO_3;
}

static void dp_reduce_group(struct builder *b, double bytes, enum group_kind g)
{
	const struct plan *pl = b->pl;
	long n = grad_ranks(pl, g);
	if (bytes <= 0)
		return;
	if (n <= 1) {
		if (pl->parallel.offload != OFFLOAD_NONE)
			builder_host_copy(b, bytes, b->stream.last);
		return;
	}
	bucket_passes(b, bytes);
	int dep = b->stream.last;
	if (b->fsdp2) {
		/* FSDP2: the unsharded 16-bit gradients concatenated into the
		 * reduce-scatter buffer (reduce dtype), on its stream */
		double el = bytes / b->grads.gb;
		struct task c = { .kind = TASK_COMPUTE, .stream = STREAM_DP, .cat = CAT_DP_COMM,
				  .time_s = builder_copy_time(b, "fsdp_rs_copy_in", el,
						      el * (dtype_bytes(DTYPE_BF16) + b->grads.gb), 1) };
		dep = program_add(b->p, &c, &dep, 1);
	}
	if (b->fsdp1)
		dep = fsdp1_divide(b, bytes, n, dep);
	bool hsdp = g == GROUP_DP && b->zgroup == GROUP_DPS;
	struct task t = { .kind = TASK_COLL, .stream = STREAM_DP, .cat = CAT_DP_COMM,
			  .op = pl->parallel.zero >= ZERO_1 && !ds2021_allreduce(b) ? COLL_REDUCE_SCATTER
										      : COLL_ALLREDUCE,
			  .group = hsdp ? GROUP_DPS : g, .bytes = bytes, .launch_s = b->z3.launch_s };
	int id = program_add(b->p, &t, &dep, 1);
	if (hsdp) {
		/* hybrid sharding: the reduced shard all-reduced across the
		 * shard groups on its own stream (see the header) */
		n = plan_shard_group(pl);
		struct task ar = { .kind = TASK_COLL, .cat = CAT_DP_COMM,
				   .stream = plan_stack(pl)->fsdp2_copies ? STREAM_DPR : STREAM_DP,
				   .op = COLL_ALLREDUCE, .group = GROUP_DPR, .bytes = bytes / (double)n,
				   .launch_s = b->z3.launch_s };
		id = program_add(b->p, &ar, &id, 1);
	}
	XGROW(b->grads.dp_tasks, b->grads.capdp, (size_t)b->grads.ndp + 1);
	b->grads.dp_tasks[b->grads.ndp++] = id;
	if (pl->parallel.offload != OFFLOAD_NONE)
		builder_host_copy(b, bytes / (pl->parallel.zero >= ZERO_1 ? n : 1), id);
}

static void dp_reduce(struct builder *b, double bytes)
{
	dp_reduce_group(b, bytes, GROUP_DP);
}

/* Gradients of `bytes` (dense) and `expert` (MoE experts) became ready
 * on the compute stream (last task). */
void builder_grads_ready2(struct builder *b, double bytes, double expert, bool reduce_now)
{
	bool overlap = b->pl->communication.overlap_grad_reduce || b->pl->parallel.zero >= ZERO_2;
	if (!reduce_now)
		return;
	b->grads.pending += bytes;
	if (overlap && b->grads.pending >= b->pl->communication.bucket_bytes) {
		dp_reduce(b, b->grads.pending);
		b->grads.pending = 0;
	}
	b->grads.pending_e += expert;
	if (overlap && b->grads.pending_e >= b->pl->communication.bucket_bytes) {
		dp_reduce_group(b, b->grads.pending_e, GROUP_EDP);
		b->grads.pending_e = 0;
	}
}

void builder_grads_ready(struct builder *b, double bytes, bool reduce_now)
{
	builder_grads_ready2(b, bytes, 0, reduce_now);
}

void builder_flush_bucket(struct builder *b)
{
	dp_reduce(b, b->grads.pending);
	b->grads.pending = 0;
	dp_reduce_group(b, b->grads.pending_e, GROUP_EDP);
	b->grads.pending_e = 0;
}
