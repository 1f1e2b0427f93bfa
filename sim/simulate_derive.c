/* simulate_derive: the figures derived from the engine's result:
 * throughput, FLOPs, MFU/HFU and MoE figures, memory (per node group on
 * mixed clusters), bytes sent and the time and cost to train, the check
 * that every figure is finite, and rank 0's groups with their links. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "simulate-private.h"
#include "builders.h"
#include "bug.h"
#include "xalloc.h"

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
		for (int q = gr->first_rank; q < gr->first_rank + gr->ranks && q < r->eng->nranks; q++) {
			int c[DIM_N];
			placement_coords(place, q, c);
			int s = c[DIM_PP];
			if (gr->stage_lo < 0 || s < gr->stage_lo)
				gr->stage_lo = s;
			if (s > gr->stage_hi)
				gr->stage_hi = s;
			for (int cat = 0; cat < CAT_N; cat++)
				gr->compute_s += r->eng->rank[q].compute_s[cat] / gr->ranks;
		}
		node += gr->nodes;
	}
}

/* The data loader (models/input_pipeline.h): a prefetching loader
 * overlaps the GPUs' step, so the step is the slower of the two. The CPU
 * loader serves the GPUs of one node; DALI runs on each GPU. */
static void apply_input(const struct inputs *in, const struct plan *pl, struct result *r)
{
	const struct input_pipeline *ip = &pl->training.input;
	const struct topology *topo = inputs_topology(in);

	if (ip->loader == INPUT_NONE)
		return;
	int on_node = r->gpus < topo->gpus_per_node ? (int)r->gpus : topo->gpus_per_node;
	double per_gpu = (double)pl->training.global_batch / (double)pl->parallel.dp;
	long cores = ip->cpu_cores > 0 ? ip->cpu_cores : topo->node_cpu_cores;
	r->input_unit_gpus = ip->loader == INPUT_PYTORCH_PIL ? on_node : 1;
	r->input = input_pipeline_step(ip, r->gpu_iteration_s, per_gpu * r->input_unit_gpus, cores, on_node);
	r->iteration_s = r->input.step_s;
}

/* Throughput, FLOPs, MFU/HFU and the MoE figures from the iteration time. */
void simulate_derive_speed(const struct inputs *in, const struct plan *pl, struct result *r)
{
	const struct topology *topo = inputs_topology(in);
	const struct model *m = inputs_model(in);

	r->params = model_params(m);
	r->active_params = model_active_params(m);
	if (model_is_moe(m)) {
		struct wl_shape shp = plan_wl_shape(pl);
		struct moe_balance bal;
		workload_moe_balance(m, &shp, &bal);
		struct precision pr;
		precision_init(&pr, pl->training.precision, false);
		r->moe = true;
		r->moe_imbalance = bal.imbalance;
		r->moe_rank_load = bal.rank_load;
		r->moe_dropped_fraction = 1 - bal.kept_fraction;
		r->moe_a2a_bytes = (double)pl->training.micro_batch * (double)pl->training.seq / pl->parallel.cp /
				   (pl->parallel.sp ? pl->parallel.tp : 1) * (double)m->moe.top_k * bal.rank_load *
				   (double)m->hidden * dtype_bytes(pr.activation) *
				   moe_dispatch_scale(&m->moe, pl->parallel.ep, plan_ep_stride(pl),
						      topo->gpus_per_node);
	}
	r->microbatches = (double)plan_microbatches(pl);
	r->iteration_s = r->gpu_iteration_s = r->eng->iteration_s;
	apply_input(in, pl, r);
	r->samples_per_s = (double)pl->training.global_batch / r->iteration_s;
	r->tokens_per_s = r->samples_per_s * (double)pl->training.seq;
	r->model_flops = finetune_model_flops(m, &pl->training.finetune, (double)pl->training.global_batch,
					      (double)pl->training.seq);
	r->hardware_flops = builders_find(m)->hardware_flops(in, pl);
	r->peak_flops_per_gpu = topo->gpu.peak_flops[pl->training.precision];
	if (pl->ngroups > 0) {
		/* the mean peak of the job's GPUs */
		double sum = 0;
		for (int g = 0; g < pl->ngroups; g++)
			sum += (double)pl->group[g].nodes * pl->group[g].gpu.peak_flops[pl->training.precision];
		r->peak_flops_per_gpu = sum / pl->nodes;
	}
	r->model_tflops_per_gpu = r->model_flops / r->iteration_s / r->gpus / 1e12;
	r->hardware_tflops_per_gpu = r->hardware_flops / r->iteration_s / r->gpus / 1e12;
	r->mfu = r->model_tflops_per_gpu * 1e12 / r->peak_flops_per_gpu;
	r->hfu = r->hardware_tflops_per_gpu * 1e12 / r->peak_flops_per_gpu;

}

/* Memory: the fullest stage against its GPU's HBM, per node group on
 * mixed clusters; the bubble of each stage. */
void simulate_derive_memory(const struct inputs *in, const struct plan *pl,
			  const struct placement *place, const struct groups_built *grp,
			  struct result *r)
{
	const struct topology *topo = inputs_topology(in);

	r->fits = true;
	r->worst_total_bytes = 0;
	for (int s = 0; s < pl->parallel.pp; s++) {
		struct stage_result *sr = &r->stage[s];
		int rank = placement_rank(place, 0, 0, s);
		sr->bubble_s = r->eng->rank[rank].bubble_s;
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
		/* each stage was checked on every GPU holding it (simulate_build_groups()) */
		double worst = -INFINITY;
		for (int s = 0; s < pl->parallel.pp; s++) {
			const struct mem_anatomy *mm = &r->stage[s].mem;
			if (mm->total_bytes - mm->capacity_bytes > worst) {
				worst = mm->total_bytes - mm->capacity_bytes;
				r->worst_stage = s;
				r->worst_total_bytes = mm->total_bytes;
			}
		}
		r->shortfall_bytes = r->fits ? 0 : worst;
		group_stats(pl, place, topo, grp, r);
	}
}

/* Bytes sent per GPU and the time and cost to train. */
void simulate_derive_training(const struct plan *pl, struct result *r)
{
	for (int k = 0; k < CAT_N; k++) {
		double sum = 0;
		for (int i = 0; i < r->eng->nranks; i++)
			sum += r->eng->rank[i].sent_bytes[k];
		r->comm_bytes_per_gpu[k] = sum / r->eng->nranks;
	}
	if (pl->training.train_tokens > 0) {
		r->time_to_train_s = pl->training.train_tokens / r->tokens_per_s;
		r->gpu_hours = r->time_to_train_s / 3600 * r->gpus;
		r->cost_usd = r->gpu_hours * pl->cost.usd_per_gpu_hour;
	}
}

/* A figure that reaches a report is finite and not negative: 0, or -1
 * (reported) naming the first that is not. */
int simulate_check_figures(const struct inputs *in, const struct result *r, struct diag *d)
{
	const struct { const char *name; double v; } figs[] = {
		{ "iteration_time_s", r->iteration_s }, { "tokens_per_s", r->tokens_per_s },
		{ "mfu", r->mfu }, { "hfu", r->hfu }, { "memory total", r->worst_total_bytes },
		{ "time_to_train_s", r->time_to_train_s }, { "cost_usd", r->cost_usd },
	};
	for (size_t i = 0; i < sizeof(figs) / sizeof(figs[0]); i++)
		if (!isfinite(figs[i].v) || figs[i].v < 0)
			return diag_errf(d, "the simulation derived %s = %g from topology '%s' and model '%s': "
					 "an input is out of range (a peak, a bandwidth or a price too large or zero)",
					 figs[i].name, figs[i].v, inputs_topology_path(in), inputs_model_path(in));
	return 0;
}

/* Rank 0's groups, whole, and the link classes each crosses. */
void simulate_rank0_groups(const struct plan *pl, const struct placement *place,
			 const struct topology *topo, struct result *r)
{
	r->tp_group0 = xcalloc((size_t)pl->parallel.tp, sizeof(int));
	r->dp_group0 = xcalloc((size_t)pl->parallel.dp * pl->parallel.cp, sizeof(int));
	r->cp_group0 = xcalloc((size_t)pl->parallel.cp, sizeof(int));
	r->pp_ranks0 = xcalloc((size_t)pl->parallel.pp, sizeof(int));
	r->ntp0 = placement_group(place, GROUP_TP, 0, r->tp_group0);
	r->ndp0 = placement_group(place, GROUP_DP, 0, r->dp_group0);
	r->npp0 = pl->parallel.pp;
	for (int s = 0; s < pl->parallel.pp; s++)
		r->pp_ranks0[s] = placement_stage_peer(place, 0, s);
	r->ncp0 = placement_group(place, GROUP_CP, 0, r->cp_group0);
	BUG_ON(r->ntp0 != pl->parallel.tp || r->ndp0 != pl->parallel.dp * pl->parallel.cp ||
	       r->ncp0 != pl->parallel.cp,
	       "placement groups of %d, %d and %d ranks for tp %d, dp %d, cp %d",
	       r->ntp0, r->ndp0, r->ncp0, pl->parallel.tp, pl->parallel.dp, pl->parallel.cp);
	topology_group_links(topo, r->cp_group0, r->ncp0, r->links_cp, sizeof(r->links_cp));
	topology_group_links(topo, r->tp_group0, r->ntp0, r->links_tp, sizeof(r->links_tp));
	topology_group_links(topo, r->dp_group0, r->ndp0, r->links_dp, sizeof(r->links_dp));
	topology_group_links(topo, r->pp_ranks0, r->npp0, r->links_pp, sizeof(r->links_pp));
}
