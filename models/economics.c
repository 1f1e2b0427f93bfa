/* economics: cloud and purchase cost, energy to train (see economics.h). */
#include "economics.h"

#include "jload.h"

#define YEAR_S (365.25 * 86400)

void econ_params_init(struct econ_params *p)
{
	*p = (struct econ_params){ .depreciation_years = 4, .pue = 1.58, .node_overhead_W = -1 };
}

void econ_params_load(struct jobj *jo, struct econ_params *p)
{
	jobj_num(jo, "usd_per_gpu_hour", &p->usd_per_gpu_hour, JNONNEG);
	jobj_num(jo, "capex_per_node_usd", &p->capex_per_node_usd, JNONNEG);
	jobj_num(jo, "capex_per_port_usd", &p->capex_per_port_usd, JNONNEG);
	jobj_num(jo, "depreciation_years", &p->depreciation_years, JPOS);
	jobj_num(jo, "usd_per_kWh", &p->usd_per_kWh, JNONNEG);
	if (jobj_num(jo, "pue", &p->pue, JPOS) == 1 && p->pue < 1)
		jobj_err(jo, "pue", "must be >= 1, got %g", p->pue);
	jobj_num(jo, "port_W", &p->port_W, JNONNEG);
	jobj_num(jo, "node_overhead_W", &p->node_overhead_W, JNONNEG);
}

json_t *econ_params_json(const struct econ_params *p)
{
	json_t *o = json_object();
	json_object_set_new(o, "usd_per_gpu_hour", json_real(p->usd_per_gpu_hour));
	json_object_set_new(o, "capex_per_node_usd", json_real(p->capex_per_node_usd));
	json_object_set_new(o, "capex_per_port_usd", json_real(p->capex_per_port_usd));
	json_object_set_new(o, "depreciation_years", json_real(p->depreciation_years));
	json_object_set_new(o, "usd_per_kWh", json_real(p->usd_per_kWh));
	json_object_set_new(o, "pue", json_real(p->pue));
	json_object_set_new(o, "port_W", json_real(p->port_W));
	if (p->node_overhead_W >= 0)
		json_object_set_new(o, "node_overhead_W", json_real(p->node_overhead_W));
	return o;
}

double econ_ports(const struct econ_cluster *c)
{
	double per_nic = 2;
	if (c->fabric_levels > 1)
		per_nic += 2.0 * (c->fabric_levels - 1) / (c->oversubscription >= 1 ? c->oversubscription : 1);
	return (double)c->nodes * c->nics_per_node * per_nic;
}

/* One GPU's average power at busy (clamped to 0..1): idle, plus busy of
 * the span to its power limit (the TDP, or a lower cap). */
static double gpu_power_W(double tdp_W, double idle_W, double cap_W, double busy)
{
	if (busy < 0)
		busy = 0;
	if (busy > 1)
		busy = 1;
	double busy_W = cap_W > 0 && cap_W < tdp_W ? cap_W : tdp_W;
	return idle_W + busy * (busy_W - idle_W);
}

void econ_compute(const struct econ_params *p, const struct econ_cluster *c, double time_s,
		  double busy, double tokens, struct econ_result *o)
{
	*o = (struct econ_result){ 0 };
	double overhead = p->node_overhead_W;
	if (overhead < 0) {
		double gpn = c->nodes ? (double)c->gpus / c->nodes : 0;
		overhead = c->node_power_max_W > gpn * c->gpu_tdp_W ? c->node_power_max_W - gpn * c->gpu_tdp_W : 0;
	}
	o->ports = econ_ports(c);
	double gpus_W = 0;
	if (c->ngroups > 0) {
		for (int k = 0; k < c->ngroups && k < ECON_MAX_GROUPS; k++) {
			const struct econ_group *g = &c->group[k];
			gpus_W += g->gpus * gpu_power_W(g->gpu_tdp_W, g->gpu_idle_W, g->gpu_cap_W,
							 g->busy < 0 ? busy : g->busy);
		}
		o->gpu_W = c->gpus > 0 ? gpus_W / c->gpus : 0;
	} else {
		o->gpu_W = gpu_power_W(c->gpu_tdp_W, c->gpu_idle_W, c->gpu_cap_W, busy);
		gpus_W = c->gpus * o->gpu_W;
	}
	o->it_W = gpus_W + c->nodes * overhead + o->ports * p->port_W;
	o->facility_W = p->pue * o->it_W;
	o->energy_J = o->facility_W * time_s;
	o->energy_MWh = o->energy_J / 3.6e9;
	o->energy_usd = o->energy_J / 3.6e6 * p->usd_per_kWh;
	o->capex_usd = c->nodes * p->capex_per_node_usd + o->ports * p->capex_per_port_usd;
	o->cloud = p->usd_per_gpu_hour > 0;
	double year_energy_usd = o->facility_W * YEAR_S / 3.6e6 * p->usd_per_kWh;
	if (o->cloud) {
		o->cost_usd = c->gpus * time_s / 3600 * p->usd_per_gpu_hour;
		o->usd_per_year = c->gpus * YEAR_S / 3600 * p->usd_per_gpu_hour;
	} else {
		double amort = o->capex_usd / (p->depreciation_years * YEAR_S);
		o->cost_usd = amort * time_s + o->energy_usd;
		o->usd_per_year = amort * YEAR_S + year_energy_usd;
	}
	o->usd_per_Mtoken = tokens > 0 ? o->cost_usd / tokens * 1e6 : 0;
}
