/* assess: cost, energy and goodput of a plan (see assess.h). */
#include "assess.h"

#include "memory.h"

double assess_checkpoint_bytes(const struct inputs *in, const struct plan *pl)
{
	return model_params(inputs_model(in)) *
	       (dtype_bytes(pl->training.precision) + memory_optimizer_bytes_per_param(pl->training.precision));
}

void assess_plan(const struct inputs *in, const struct plan *pl, double tokens_per_s, double busy,
		 const struct econ_params *ep, const struct goodput_params *gpp, struct assessment *o)
{
	const struct topology *t = inputs_topology(in);
	struct econ_params e = *ep;
	if (e.usd_per_gpu_hour <= 0 && e.capex_per_node_usd <= 0 && pl->cost.usd_per_gpu_hour > 0)
		e.usd_per_gpu_hour = pl->cost.usd_per_gpu_hour;
	long gpus = plan_gpus(pl, in);
	o->train_s = tokens_per_s > 0 ? pl->training.train_tokens / tokens_per_s : 0;
	o->busy = busy;
	goodput_compute(gpp, (double)gpus, pl->nodes, assess_checkpoint_bytes(in, pl), o->train_s, &o->gp);
	struct econ_cluster c = {
		.nodes = pl->nodes, .gpus = gpus, .nics_per_node = t->nics,
		.fabric_levels = t->fabric == FABRIC_FAT_TREE ? t->ft_levels : 1,
		.oversubscription = t->fabric == FABRIC_FAT_TREE ? t->ft_oversub : 1,
		.gpu_tdp_W = t->gpu.tdp_W, .gpu_idle_W = t->gpu.idle_W,
		.node_power_max_W = t->node_power_max_W,
	};
	econ_compute(&e, &c, o->gp.wall_s, busy, pl->training.train_tokens, &o->econ);
}
