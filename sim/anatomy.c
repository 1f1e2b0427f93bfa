/* anatomy: a plan's per-rank memory without simulating (see anatomy.h). */
#include "anatomy.h"

#include <stdlib.h>

#include "framework.h"
#include "schedule.h"
#include "xalloc.h"

void anatomy_input(const struct inputs *in, const struct plan *pl, double layers,
		   double dense_layers, double inflight, bool has_embedding, bool has_head,
		   struct mem_rank_input *mi)
{
	const struct stack *k = plan_stack(pl);
	struct mem_rank_input x = {
		.model = inputs_model(in), .gpu = &inputs_topology(in)->gpu, .dtype = pl->training.precision,
		.grad_elem_bytes = dtype_bytes(pl->training.grad_dtype), .attention = pl->training.attention,
		.fp8_params = pl->training.fp8_params, .fp8_moe_act_cache = pl->training.fp8_moe_act_cache,
		.bf16_moments = pl->training.bf16_moments, .master_remainders = pl->training.master_remainders,
		.pp = pl->parallel.pp, .reserve_fraction = pl->training.memory_reserve,
		/* context parallelism: a rank holds seq/cp tokens; gradients and
		 * optimizer shards span dp x cp ranks (Megatron-Core) */
		.micro_batch = (double)pl->training.micro_batch, .seq = (double)pl->training.seq / pl->parallel.cp,
		.tp = pl->parallel.tp, .dp = pl->parallel.dp * pl->parallel.cp, .cp = pl->parallel.cp,
		.shard = plan_shard_group(pl),
		.sp = pl->parallel.sp, .zero = pl->parallel.zero,
		.recompute = pl->parallel.recompute, .recompute_modules = pl->parallel.recompute_modules,
		.recompute_every = pl->parallel.recompute_every, .layers = layers, .dense_layers = dense_layers,
		.has_embedding = has_embedding, .has_head = has_head,
		.inflight = inflight, .bucket_bytes = pl->communication.bucket_bytes,
		.apex_contiguous = pl->communication.apex_contiguous_buffers,
		.prefetch_layers = 1, .ep = pl->parallel.ep, .etp = plan_etp(pl), .offload = (int)pl->parallel.offload,
		.ft = pl->training.finetune,
		.loss_Bpl = pl->parallel.tp > 1 && k->loss_peak_tp_Bpl > 0 ? k->loss_peak_tp_Bpl : k->loss_peak_Bpl,
		.microbatches = (int)plan_microbatches(pl),
		.rmsnorm_extra_Bpe = k->rmsnorm_extra_Bpe,
		.eager_swiglu = k->eager_swiglu,
		.repeat_kv = k->repeat_kv,
		.cp_torch_ring = k->cp_torch_ring,
		/* as the builder's FSDP2 (sim/build_transformer.c) */
		.fsdp2 = k->fsdp2_copies && pl->parallel.zero >= ZERO_2 &&
			 (long)pl->parallel.dp * pl->parallel.cp > 1,
		.torchao_fp8 = k->fsdp2_copies,
		.expandable_segments = k->expandable_segments &&
				       pl->training.allocator != PLAN_ALLOC_NATIVE,
		.native_allocator = k->expandable_segments &&
				    pl->training.allocator == PLAN_ALLOC_NATIVE,
	};
	/* DeepSpeed 0.4's ZeRO-3 per Linear, where the builder gathers so
	 * (sim/build_transformer.c: per tensor needs tp = cp = 1), with its
	 * framework's max_live_parameters */
	const struct framework *z3fw = plan_z3_framework(pl);
	if (k->ds_zero3_2021 && plan_z3_per_tensor(pl, z3fw) && !model_is_moe(x.model)) {
		x.ds_zero3_2021 = true;
		x.z3_live_elements = z3fw->live_elements;
	}
	struct wl_shape shp = plan_wl_shape(pl);
	struct moe_balance bal;
	workload_moe_balance(inputs_model(in), &shp, &bal);
	x.moe_rank_load = bal.rank_load;
	*mi = x;
}

int anatomy_stage_layers(const struct plan *pl, const struct model *m, int stage,
			 int *chunk_layers, int *dense)
{
	int v = schedule_chunks(pl->parallel.schedule, pl->parallel.interleave);
	int nv, layers = 0, first;

	*dense = 0;
	for (int c = 0; c < v; c++) {
		int vs = schedule_vstage(pl->parallel.schedule, pl->parallel.pp, v, stage, c, &nv);
		int n = plan_stage_blocks(pl, m, vs, nv, &first);
		if (chunk_layers)
			chunk_layers[c] = n;
		layers += n;
		*dense += n - (int)model_moe_layers_in(m, first, n);
	}
	if (!model_is_moe(m))
		*dense = 0;
	return layers;
}

void anatomy_stage(const struct inputs *in, const struct plan *pl, int stage,
		   struct mem_anatomy *out)
{
	const struct model *m = inputs_model(in);
	int v = schedule_chunks(pl->parallel.schedule, pl->parallel.interleave);
	int mb = (int)plan_microbatches(pl), dense;
	int *chunk_layers = xmalloc((size_t)v * sizeof(int));
	int layers = anatomy_stage_layers(pl, m, stage, chunk_layers, &dense);
	struct sched_step *order = schedule_order(pl->parallel.schedule, pl->parallel.pp, stage, mb, v);
	double alive = 0, peak = 0;
	bool split = schedule_splits_backward(pl->parallel.schedule);
	for (int i = 0; i < schedule_steps(pl->parallel.schedule, mb, v); i++) {
		alive += schedule_step_inflight(&order[i], split) * chunk_layers[order[i].chunk];
		if (alive > peak)
			peak = alive;
	}
	free(chunk_layers);
	free(order);
	struct mem_rank_input mi;
	/* dualpipe's first and last ranks hold both ends (schedule.h) */
	bool ends = pl->parallel.schedule == SCHED_DUALPIPE && (stage == 0 || stage == pl->parallel.pp - 1);
	anatomy_input(in, pl, layers, dense, layers ? peak / layers : 0, stage == 0 || ends,
		      stage == pl->parallel.pp - 1 || ends, &mi);
	bool *fwd = anatomy_order(pl, stage, &mi);
	memory_rank(&mi, out);
	free(fwd);
}

bool *anatomy_order(const struct plan *pl, int stage, struct mem_rank_input *mi)
{
	int mb = (int)plan_microbatches(pl);
	/* the replay knows forwards and whole backwards, not B and W */
	if (pl->parallel.pp <= 1 || pl->parallel.schedule == SCHED_INTERLEAVED ||
	    schedule_splits_backward(pl->parallel.schedule) || mb < 1)
		return NULL;
	struct sched_step *order = schedule_order(pl->parallel.schedule, pl->parallel.pp, stage, mb, 1);
	bool *fwd = xmalloc((size_t)(2 * mb) * sizeof(*fwd));
	for (int i = 0; i < 2 * mb; i++)
		fwd[i] = order[i].fwd;
	free(order);
	mi->order_fwd = fwd;
	mi->order_n = 2 * mb;
	return fwd;
}

void anatomy_worst(const struct inputs *in, const struct plan *pl, struct mem_anatomy *out,
		   int *stage)
{
	struct mem_anatomy last;
	anatomy_stage(in, pl, 0, out);
	if (stage)
		*stage = 0;
	if (pl->parallel.pp > 1) {
		anatomy_stage(in, pl, pl->parallel.pp - 1, &last);
		if (last.total_bytes > out->total_bytes) {
			*out = last;
			if (stage)
				*stage = pl->parallel.pp - 1;
		}
	}
}
