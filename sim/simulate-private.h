/* simulate-private: what simulate.c's phases share (sim/ only).
 *
 * simulate_run_hooked is split by concept, each file with its phase:
 *   simulate.c         the run as phases: result header, programs,
 *                      engine job, estimate, the run and its row
 *   simulate_groups.c  mixed clusters: each node group's programs on
 *                      its GPU, the stages' memory against its HBM
 *   simulate_ops.c     the report's per-kernel table and the cost
 *                      source's names
 *   simulate_fold.c    whether and how to fold, and why not
 *   simulate_derive.c  the figures derived from the engine's result
 * simulate.c calls the others; they call no phase back (simulate_groups.c
 * builds through simulate_build_program(), simulate.h). */
#ifndef DDLSIM_SIMULATE_PRIVATE_H
#define DDLSIM_SIMULATE_PRIVATE_H

#include <stdbool.h>

#include "simulate.h"
#include "placement.h"
#include "program.h"

/* Mixed clusters (plan node_groups): per group, the inputs priced for its
 * GPU and the programs of the stages its ranks hold; each rank's program. */
struct groups_built {
	struct inputs *vin[PLAN_MAX_NODE_GROUPS];      /* owned variants (NULL: the base) */
	struct program *prog[PLAN_MAX_NODE_GROUPS];    /* [pp] each, NULL: none built */
	struct program **rank_prog;                    /* [nranks] */
	int *rank_group;                               /* [nranks] each rank's node group */
	double mem_worst[PLAN_MAX_NODE_GROUPS];        /* fullest stage on the group's GPU */
	double mem_capacity[PLAN_MAX_NODE_GROUPS];
	bool mem_fits[PLAN_MAX_NODE_GROUPS];
	int *replica_class;    /* [size[DIM_DP] x size[DIM_EP]] each data-parallel
				* replica's class: replicas of one class have
				* the same GPU on each of their ranks, in rank
				* order (engine_job.replica_class) */
	int nclasses;          /* classes among them (0: no node groups) */
};

/* Free g's programs and variant inputs (pp: the plan's stages). */
void simulate_groups_finish(struct groups_built *g, int pp);

/* Build each group's programs (priced by its GPU's roofline, or by the
 * job's cost source where the GPU is the topology's) and point every rank
 * at its own; each stage's memory becomes the fullest of its GPUs
 * against that GPU's HBM (r->stage[s].mem, r->fits). */
int simulate_build_groups(const struct inputs *in, const struct plan *pl,
			  const struct placement *place, struct program *base, struct groups_built *g,
			  struct result *r, struct diag *d);

/* The per-kernel table of the report and the cost source's names.
 * Returns 0 or -1 (reported). */
int simulate_describe_cost(const struct inputs *in, const struct plan *pl, struct result *r,
			   struct diag *d);

/* What a collective costs the compute beside it (engine.h, interference),
 * from one layer's kernels priced by in's cost source: the share of the
 * compute time in memory-bound kernels into *membound_share, and into
 * *sm_work (owned by the caller) the compute-bound kernels' time on
 * SMs - C SMs over the whole layer's time on every SM, for C = 0 ..
 * SMs - 1 (simulate_overlap.c). Both 0 / NULL where the GPU gives no SM
 * count, a CNN cannot be built or the layer takes no time. Every rank is
 * priced on the topology's GPU, also the other node groups' of a mixed
 * job. */
void simulate_overlap_price(const struct inputs *in, const struct plan *pl, double *membound_share,
			    double **sm_work);

/* The data-parallel replicas a folded run simulated whole, the
 * representatives aside (the replicas other replicas' ranks take their
 * figures from), into r->whole_replicas (ascending). */
void simulate_whole_replicas(const struct placement *place, struct result *r);

/* Whether to fold (r->folded, r->fold_reason: why not, for every
 * refusal; *fold, *exact: folded exactly, *classes: folded by classes,
 * the replicas touching a fat tree's partly filled leaf or pod simulated
 * whole (fold_partial.c), *advice: static text) for the stages' programs
 * progs[pp], the data-parallel replicas falling into gpu_classes classes
 * of GPUs (groups_built.nclasses; 0 or 1: alike) (simulate_fold.c says
 * how). Returns 0 or -1 (reported). */
int simulate_fold_decide(const struct inputs *in, const struct plan *pl, const struct placement *place,
			 const struct program *progs, int gpu_classes, bool any_distinct,
			 struct result *r, bool *fold, bool *exact, bool *classes,
			 const char **advice, struct diag *d);

/* Throughput, FLOPs, MFU/HFU and the MoE figures from the iteration time. */
void simulate_derive_speed(const struct inputs *in, const struct plan *pl, struct result *r);

/* Memory: the fullest stage against its GPU's HBM, per node group on
 * mixed clusters; the bubble of each stage. */
void simulate_derive_memory(const struct inputs *in, const struct plan *pl,
			    const struct placement *place, const struct groups_built *grp,
			    struct result *r);

/* Bytes sent per GPU and the time and cost to train. */
void simulate_derive_training(const struct plan *pl, struct result *r);

/* A figure that reaches a report is finite and not negative: 0, or -1
 * (reported) naming the first that is not. */
int simulate_check_figures(const struct inputs *in, const struct result *r, struct diag *d);

/* Rank 0's groups, whole, and the link classes each crosses. */
void simulate_rank0_groups(const struct plan *pl, const struct placement *place,
			   const struct topology *topo, struct result *r);

#endif
