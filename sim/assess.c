/* assess: cost, energy and goodput of a plan (see assess.h). */
#include "assess.h"

#include <math.h>

#include "memory.h"

double assess_checkpoint_bytes(const struct inputs *in, const struct plan *pl)
{
	const struct plan_training *t = &pl->training;
	return model_params(inputs_model(in)) *
	       (dtype_bytes(t->precision) +
		memory_optimizer_bytes_per_param(t->precision, t->bf16_moments, t->master_remainders, t->fp8_params));
}

_Static_assert(PLAN_MAX_NODE_GROUPS <= ECON_MAX_GROUPS, "economics prices every node group");

/* The cluster of plan pl on in, as economics prices it: each node group
 * with its GPU's power and busy fraction (group_busy: NULL or < 0, the
 * job's). */
static struct econ_cluster cluster_of(const struct inputs *in, const struct plan *pl,
				      const double *group_busy)
{
	const struct topology *t = inputs_topology(in);
	struct econ_cluster c = {
		.nodes = pl->nodes, .gpus = plan_gpus(pl, in), .nics_per_node = t->nics,
		.fabric_levels = t->fabric == FABRIC_FAT_TREE ? t->ft_levels : 1,
		.oversubscription = t->fabric == FABRIC_FAT_TREE ? t->ft_oversub : 1,
		.gpu_tdp_W = t->gpu.tdp_W, .gpu_idle_W = t->gpu.idle_W,
		.gpu_cap_W = t->gpu.power_cap_W,
		.node_power_max_W = t->node_power_max_W,
	};
	for (int k = 0; k < pl->ngroups; k++) {
		const struct gpu_spec *g = &pl->group[k].gpu;
		c.group[k] = (struct econ_group){
			.nodes = pl->group[k].nodes, .gpus = (long)pl->group[k].nodes * t->gpus_per_node,
			.gpu_tdp_W = g->tdp_W, .gpu_idle_W = g->idle_W, .gpu_cap_W = g->power_cap_W,
			.busy = group_busy ? group_busy[k] : -1,
		};
	}
	c.ngroups = pl->ngroups;
	return c;
}

bool assess_has_power(const struct inputs *in, const struct plan *pl)
{
	if (pl->ngroups == 0)
		return inputs_topology(in)->gpu.tdp_W > 0;
	for (int k = 0; k < pl->ngroups; k++)
		if (!(pl->group[k].gpu.tdp_W > 0))
			return false;
	return true;
}

void assess_plan(const struct inputs *in, const struct plan *pl, double tokens_per_s, double busy,
		 const double *group_busy, const struct econ_params *ep, const struct goodput_params *gpp,
		 struct assessment *o)
{
	struct econ_params e = *ep;
	if (e.usd_per_gpu_hour <= 0 && e.capex_per_node_usd <= 0 && pl->cost.usd_per_gpu_hour > 0)
		e.usd_per_gpu_hour = pl->cost.usd_per_gpu_hour;
	struct econ_cluster c = cluster_of(in, pl, group_busy);
	o->train_s = tokens_per_s > 0 ? pl->training.train_tokens / tokens_per_s : 0;
	o->busy = busy;
	goodput_compute(gpp, (double)c.gpus, pl->nodes, assess_checkpoint_bytes(in, pl), o->train_s, &o->gp);
	econ_compute(&e, &c, o->gp.wall_s, busy, pl->training.train_tokens, &o->econ);
}

double assess_energy_MWh(const struct inputs *in, const struct plan *pl, double time_s, double busy,
			 const double *group_busy)
{
	if (!assess_has_power(in, pl))
		return NAN;
	struct econ_params e;
	struct econ_result o;
	econ_params_init(&e);
	struct econ_cluster c = cluster_of(in, pl, group_busy);
	econ_compute(&e, &c, time_s, busy, pl->training.train_tokens, &o);
	return o.energy_MWh;
}

/* The goal's test of one assessment: no deadline or budget passes. */
static void judge(const struct scenario_goal *g, const struct assessment *a, bool *deadline, bool *budget)
{
	*deadline = !(g->deadline_s > 0) || a->gp.wall_s <= g->deadline_s;
	*budget = !(g->budget_usd > 0) || a->econ.cost_usd <= g->budget_usd;
}

void assess_goal(const struct inputs *in, const struct plan *pl, const struct scenario_goal *g,
		 double tokens_per_s, double busy, const double *group_busy, double slow, struct goal_verdict *v)
{
	*v = (struct goal_verdict){ .slow_factor = slow >= 1 ? slow : 1 };
	assess_plan(in, pl, tokens_per_s, busy, group_busy, &g->econ, &g->goodput, &v->at);
	assess_plan(in, pl, tokens_per_s / v->slow_factor, busy, group_busy, &g->econ, &g->goodput, &v->slow);
	judge(g, &v->at, &v->meets_deadline, &v->within_budget);
	judge(g, &v->slow, &v->meets_deadline_slow, &v->within_budget_slow);
}
