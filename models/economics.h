/* economics: what a training run costs in money and energy.
 *
 * Two ways to pay for GPUs. Cloud: a price per GPU-hour that includes
 * power and the network. Purchase: capital per node and per network port,
 * written off over `depreciation_years` (straight line), plus the energy
 * bill. Energy counts every GPU at its idle power plus the busy fraction
 * (the simulated share of the iteration a GPU computes) of the span to its
 * power limit (its TDP, or a lower gpu.power.power_cap_W), the rest of
 * each node (CPUs, NICs, fans, NVSwitches: the node's datasheet maximum
 * minus its GPUs' TDP), and the fabric's ports, all times the facility's
 * PUE:
 *
 *   P_gpu      = idle_W + busy x (busy_W - idle_W)
 *   busy_W     = the board's power limit: tdp_W, or power_cap_W where a
 *                topology sets a lower limit (models/gpu.h; the node
 *                overhead below still counts the GPUs at their TDP)
 *   P_it       = gpus P_gpu + nodes node_overhead_W + ports port_W
 *   E          = PUE x P_it x time_to_train
 *   cost (cloud)     = gpus x hours x usd_per_gpu_hour
 *   cost (purchase)  = capex x time / (depreciation_years x 365.25 d) + E x usd_per_kWh
 *   capex      = nodes x capex_per_node_usd + ports x capex_per_port_usd
 *
 * A mixed cluster (econ_cluster.group, a plan's node_groups) sums
 * gpus P_gpu over its node groups, each group's GPUs at their own idle
 * power, power limit (TDP or cap) and busy fraction (the mean compute
 * time of the group's ranks over the iteration, which differs per group
 * when one GPU waits for the other); node_overhead_W stays the
 * topology's node less its GPUs at the topology GPU's TDP: every node of
 * a mixed cluster has the topology's CPUs, NICs and switches (sim/scenario.h
 * node_groups: the topology gives every node's links and NICs). Capital
 * and the cloud price stay per node and per GPU-hour, one figure each
 * (the "economics" object has no per-group price).
 *
 * Ports (econ_ports): every NIC has its own port and a switch port it
 * plugs into (2 per NIC); a fat tree adds, per level above the leaves,
 * an uplink and the spine port it lands on for each 1/oversubscription of
 * a NIC's bandwidth: ports = nodes nics (2 + 2 (levels - 1) / r). One
 * non-blocking switch and a rail fabric: 2 per NIC. Switch ports of a
 * single-node job count too (the job uses its NICs' switch ports).
 *
 * Key table of the "economics" object of sweep and goal files:
 *   key                  type    unit    default  meaning
 *   usd_per_gpu_hour     number  USD     0        cloud price; > 0 selects cloud pricing
 *   capex_per_node_usd   number  USD     0        purchase price of one node
 *   capex_per_port_usd   number  USD     0        one network port with its optics/cable
 *   depreciation_years   number  years   4        straight-line write-off
 *   usd_per_kWh          number  USD     0        electricity price
 *   pue                  number  >= 1    1.58     power usage effectiveness; default: the
 *                                                 average of Uptime Institute's Global Data
 *                                                 Center Survey 2023 (1.58)
 *   port_W               number  W       0        power per port (switch ASIC share, optics)
 *   node_overhead_W      number  W       topology node.power_max_W - gpus x tdp_W, else 0
 */
#ifndef DDLSIM_ECONOMICS_H
#define DDLSIM_ECONOMICS_H

#include <jansson.h>
#include <stdbool.h>

#include "gpu.h"

struct jobj;

struct econ_params {
	double usd_per_gpu_hour;
	double capex_per_node_usd, capex_per_port_usd;
	double depreciation_years;
	double usd_per_kWh;
	double pue;
	double port_W;
	double node_overhead_W;     /* < 0: from the topology */
};

#define ECON_MAX_GROUPS 4

/* One node group of a mixed cluster: its GPUs, priced at their power. */
struct econ_group {
	long nodes, gpus;
	double gpu_tdp_W, gpu_idle_W;
	double gpu_cap_W;           /* power limit below gpu_tdp_W; 0 = none */
	double busy;                /* its GPUs' busy fraction; < 0: the job's */
};

/* What the cluster is, for pricing. */
struct econ_cluster {
	long nodes, gpus;
	int nics_per_node;
	int fabric_levels;          /* 1: one switch or rails; 2, 3: fat tree */
	double oversubscription;    /* >= 1 */
	double gpu_tdp_W, gpu_idle_W;
	double gpu_cap_W;           /* power limit below tdp_W; 0 = none */
	double node_power_max_W;    /* 0 = unknown */
	int ngroups;                /* 0: every GPU is the one above */
	struct econ_group group[ECON_MAX_GROUPS];  /* their gpus sum to gpus */
};

struct econ_result {
	double ports;
	double gpu_W, it_W, facility_W;  /* average power during training (gpu_W: per
					    GPU, the mean over the groups of a mixed cluster) */
	double energy_J, energy_MWh;
	double energy_usd;
	double capex_usd;
	double cost_usd;            /* the run */
	double usd_per_Mtoken;
	double usd_per_year;        /* a year of ownership (or rental) at this load */
	bool cloud;
};

/* Defaults of the key table. */
void econ_params_init(struct econ_params *p);
/* Read an "economics" object (jo) into p (defaults kept for absent keys);
 * problems go to jo's diag. */
void econ_params_load(struct jobj *jo, struct econ_params *p);
/* p as an "economics" object that econ_params_load() reads back to p:
 * every key, node_overhead_W left out while it comes from the topology.
 * New reference. */
json_t *econ_params_json(const struct econ_params *p);

/* Network ports of the cluster (formula above). */
double econ_ports(const struct econ_cluster *c);

/* Price a run of time_s seconds training tokens tokens with GPUs busy for
 * busy (0..1) of the time (each node group's GPUs for their own busy,
 * where given). */
void econ_compute(const struct econ_params *p, const struct econ_cluster *c, double time_s,
		  double busy, double tokens, struct econ_result *out);

#endif
