/* anatomy: a plan's per-rank memory without simulating (see anatomy.h). */
#include "anatomy.h"

#include <stdlib.h>

#include "schedule.h"
#include "xalloc.h"

void anatomy_input(const struct inputs *in, const struct plan *pl, double layers,
		   double inflight, bool has_embedding, bool has_head, struct mem_rank_input *mi)
{
	struct mem_rank_input x = {
		.model = inputs_model(in), .gpu = &inputs_topology(in)->gpu, .dtype = pl->precision,
		.grad_elem_bytes = dtype_bytes(pl->grad_dtype), .attention = pl->attention,
		.fp8_params = pl->fp8_params,
		.pp = pl->pp, .reserve_fraction = pl->memory_reserve,
		/* context parallelism: a rank holds seq/cp tokens; gradients and
		 * optimizer shards span dp x cp ranks (Megatron-Core) */
		.micro_batch = (double)pl->micro_batch, .seq = (double)pl->seq / pl->cp,
		.tp = pl->tp, .dp = pl->dp * pl->cp, .cp = pl->cp, .sp = pl->sp, .zero = pl->zero,
		.recompute = pl->recompute, .layers = layers,
		.has_embedding = has_embedding, .has_head = has_head,
		.inflight = inflight, .bucket_bytes = pl->bucket_bytes,
		.prefetch_layers = 1, .ep = pl->ep, .offload = (int)pl->offload,
	};
	struct wl_shape shp = plan_wl_shape(pl);
	struct moe_balance bal;
	workload_moe_balance(inputs_model(in), &shp, &bal);
	x.moe_rank_load = bal.rank_load;
	*mi = x;
}

void anatomy_stage(const struct inputs *in, const struct plan *pl, int stage,
		   struct mem_anatomy *out)
{
	const struct model *m = inputs_model(in);
	int v = pl->schedule == SCHED_INTERLEAVED ? pl->interleave : 1;
	int nv = pl->pp * v, layers = 0, first;
	int mb = (int)plan_microbatches(pl);
	int *chunk_layers = xmalloc((size_t)v * sizeof(int));

	for (int c = 0; c < v; c++) {
		chunk_layers[c] = plan_vstage_layers(pl, m->layers, c * pl->pp + stage, nv, &first);
		layers += chunk_layers[c];
	}
	struct sched_step *order = schedule_order(pl->schedule, pl->pp, stage, mb, v);
	double alive = 0, peak = 0;
	for (int i = 0; i < 2 * mb * v; i++) {
		alive += (order[i].fwd ? 1 : -1) * chunk_layers[order[i].chunk];
		if (alive > peak)
			peak = alive;
	}
	free(order);
	free(chunk_layers);
	struct mem_rank_input mi;
	anatomy_input(in, pl, layers, layers ? peak / layers : 0, stage == 0, stage == pl->pp - 1, &mi);
	memory_rank(&mi, out);
}

void anatomy_worst(const struct inputs *in, const struct plan *pl, struct mem_anatomy *out,
		   int *stage)
{
	struct mem_anatomy last;
	anatomy_stage(in, pl, 0, out);
	if (stage)
		*stage = 0;
	if (pl->pp > 1) {
		anatomy_stage(in, pl, pl->pp - 1, &last);
		if (last.total_bytes > out->total_bytes) {
			*out = last;
			if (stage)
				*stage = pl->pp - 1;
		}
	}
}
