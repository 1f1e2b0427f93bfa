/* build_transformer_ds2021: ZeRO-3's parameter gathers as DeepSpeed's
 * coordinator ran them in 2021 (v0.3.15 to v0.5.x; the stack
 * deepspeed-zero3-2021, whose block in models/stack_deepspeed.h cites
 * every line read at v0.4.0).
 *
 * Each weight tensor (a submodule's parameter, as the per-tensor model
 * of build_transformer_step.c counts them) is gathered by its own
 * all-gather, and every all-gather is issued after
 * torch.cuda.synchronize(): it waits for the compute stream, the
 * previous gather and the last gradient reduction. Around it run, on the
 * same stream: the padded flat tensor zeroed (w2 per element) and the
 * rank's partition copied in (r2 w2 of the partition), and after it the
 * copy out of c10d's flat buffer into the list of views (r2 w2 per
 * element). A tensor of el elements over d ranks is gathered as
 * ceil(el / d) d elements.
 *
 * The copy out is one copy_ per rank (pytorch/pytorch 00f5dfd5,
 * torch/lib/c10d/ProcessGroupNCCL.cpp, ProcessGroupNCCL::allgather: a
 * loop over the d output views, outputTensors[i][j].copy_(
 * outputFlattened[i][j], true), each under recordStream, on the NCCL
 * stream; DeepSpeed's list holds one view per rank, partition_parameters.py
 * L824-834 at v0.4.0): d kernels, each paying the GPU preset's fixed
 * kernel latency (kernel_launch_us), issued one after another from C++
 * by the host at the stack's backward issue time (a C++ op and its
 * launch, stack-private.h TORCH_HOST_ISSUE: 3.6 us); the copy takes the
 * slower of the two (host.h). At 1,536 ranks that is 1,536 launches per
 * gather, 6.1 ms on an A100 at 4 us each, where a single copy of a
 * 302 MB tensor takes 0.4 ms. Not priced: the host's loop that builds
 * the d views before the gather (L824-829: a narrow and a
 * torch.distributed.get_rank per rank, Python; no public measurement of
 * either at torch 1.8) and the compute issued after the gather waiting
 * for the host's issue of the copies.
 *
 * The coordinator's order, per module (pre-forward or pre-backward
 * hook): a tensor neither resident nor prefetched is gathered and
 * waited for; one prefetched in flight (a batch's last) is waited for,
 * with the gradient reductions in flight;
 * then, when nothing is in flight and the module's gathered elements
 * are fewer than max_live_parameters (stage3.py L349: the coordinator's
 * count of available elements, which the module's own are part of once
 * fetched; of GPT 530B's Linears, the QKV and both MLP ones, 1.26e9 and
 * 1.68e9 elements, are not, so no prefetch runs beside them), the next
 * tensors of the pass not yet gathered are prefetched until their
 * elements reach prefetch_bucket_size, one after another (each behind a device
 * synchronize), and the module's compute is issued after all but the
 * batch's last, which runs beside it. The pass's prefetch does not
 * reach past its last layer (DeepSpeed's trace does, into the next
 * pass: not modelled), nor past the layer under full recomputation.
 * Residency is decided per tensor, by its reuse distance (tensor_resident:
 * the elements used between its two uses; under full recomputation a
 * Linear is kept for its backward when twice the elements of the
 * Linears after it in the layer are under max_reuse_distance, of GPT
 * 175B's and 530B's layers only the last; the others are gathered
 * again); persistence is the per-tensor model's. The head's and
 * the embedding's parameters, which DeepSpeed's trace would count between
 * the forward's last layer and the backward's first, are not counted. */
#include <math.h>

#include "build_transformer-private.h"
#include "host.h"
#include "xalloc.h"

/* The last gradient reduction issued, or -1. */
static int last_reduction(const struct builder *b)
{
	return b->grads.ndp > 0 ? b->grads.dp_tasks[b->grads.ndp - 1] : -1;
}

/* c10d's copy out of a list all-gather of a padded elements (see the
 * top): one copy_ per rank, z3.ranks kernels on the GPU, issued one by
 * one by the host; the slower of the two. */
static double copy_out_time(const struct builder *b, double a)
{
	struct host_issue h = plan_host_issue(b->pl);
	double gpu = builder_copy_time(b, "ds_gather_copy_out", a, 2 * a * b->z3.wbytes, (int)b->z3.ranks);
	return host_block_time(&h, gpu, (double)b->z3.ranks * h.bwd_s);
}

/* One parameter of el elements gathered behind a device synchronize
 * (see the top): its zero-and-copy-in, the all-gather of the padded
 * tensor, the copy out. Returns the copy out. */
static int sync_gather(struct builder *b, double el)
{
	double d = (double)b->z3.ranks, a = ceil(el / d) * d, w = b->z3.wbytes;
	int deps[3] = { b->stream.last, b->z3.last_param, last_reduction(b) };
	struct task in = { .kind = TASK_COMPUTE, .stream = STREAM_PARAM, .cat = CAT_PARAM_COMM,
			   .time_s = builder_copy_time(b, "ds_gather_zero_copy_in", a, a * w + 2 * a / d * w, 1) };
	int id = program_add(b->p, &in, deps, 3);
	struct task t = { .kind = TASK_COLL, .stream = STREAM_PARAM, .cat = CAT_PARAM_COMM,
			  .op = COLL_ALLGATHER, .group = b->zgroup, .bytes = a * w,
			  .launch_s = b->z3.launch_s };
	id = program_add(b->p, &t, &id, 1);
	struct task out = { .kind = TASK_COMPUTE, .stream = STREAM_PARAM, .cat = CAT_PARAM_COMM,
			    .time_s = copy_out_time(b, a) };
	id = program_add(b->p, &out, &id, 1);
	b->z3.last_param = id;
	return id;
}

/* Whether tensor j of the model's layer l, used next when `at` elements
 * have been used, is still gathered: DeepSpeed releases a module's
 * parameters after it runs unless its next use lies within
 * max_reuse_distance elements, the parameters of the modules in the
 * trace between the two uses (stage3.py release_sub_module L448-498,
 * _keep_for_later L500-508, get_reuse_distance_in_numel L236-274,
 * _distance_in_numel L276-285); a module here is one weight tensor's
 * Linear. */
static bool tensor_resident(const struct builder *b, long l, int j, double at)
{
	double lu = b->z3.last_use_t[l * 8 + j];
	return lu >= 0 && at - lu < b->z3.fw->reuse_elements;
}

/* The prefetch after tensor jj of the layer in pass order (see the top):
 * sets ahead and inflight. Returns what the module's compute waits for:
 * the batch's last but one, or gate when the batch holds fewer than two
 * gathers. A tensor still gathered (tensor_resident, at the elements used
 * by the time it runs) is skipped. */
static int prefetch(struct builder *b, int jj, bool reverse, int gate)
{
	const struct framework *f = b->z3.fw;
	int n = b->z3.ntens, prev = gate, last = -1, cnt = 0;
	double acc = 0, at = b->z3.used + b->z3.tens[reverse ? n - 1 - jj : jj];
	for (int p = jj + 1; p < (1 + b->z3.left) * n && acc < f->prefetch_elements; p++) {
		int k = p / n, pos = p % n, j = reverse ? n - 1 - pos : pos;
		long l = b->z3.layer + (reverse ? -k : k);
		double el = b->z3.tens[j];
		bool resident = tensor_resident(b, l, j, at);
		at += el;
		if (resident || el < f->persist_elements)
			continue;
		if (cnt > 0)
			prev = last;
		last = sync_gather(b, el);
		acc += el;
		cnt++;
	}
	b->z3.ahead = cnt;
	b->z3.inflight = cnt > 0 ? last : -1;
	return prev;
}

void builder_sync_tensor_layer(struct builder *b, enum task_cat cat, double time_s, double flops,
			       int mb, int chunk, bool reverse)
{
	const struct framework *f = b->z3.fw;
	for (int jj = 0; jj < b->z3.ntens; jj++) {
		int j = reverse ? b->z3.ntens - 1 - jj : jj;
		double el = b->z3.tens[j];
		int gate = -1;
		if (!tensor_resident(b, b->z3.layer, j, b->z3.used) && el >= f->persist_elements) {
			if (b->z3.ahead > 0) {
				/* prefetched: a batch's last is still in flight;
				 * _synchronize_communication waits for it and
				 * (torch.cuda.synchronize) for the reductions */
				if (--b->z3.ahead == 0 && b->z3.inflight >= 0) {
					gate = b->z3.inflight;
					b->z3.inflight = -1;
					if (b->stream.gate < 0)
						b->stream.gate = last_reduction(b);
				}
			} else {
				gate = sync_gather(b, el);
			}
		}
		/* prefetch only with no gather in flight and fewer gathered
		 * elements available than max_live_parameters: this module's
		 * (stage3.py L349; those kept for a later use, the current
		 * one for GPT's layers, are not added) */
		double avail = el >= f->persist_elements ? el : 0;
		if (b->z3.inflight < 0 && (f->live_elements <= 0 || avail < f->live_elements))
			gate = prefetch(b, jj, reverse, gate);
		builder_compute(b, cat, time_s * el / b->z3.tens_total, jj == 0 ? flops : 0, mb, chunk, gate);
		b->z3.used += el;
		b->z3.last_use_t[b->z3.layer * 8 + j] = b->z3.used;
	}
	b->z3.last_use[b->z3.layer] = b->z3.used;
}
