/* assess: what a plan's throughput means for a purchase — cost, energy
 * and goodput over the whole training run.
 *
 * Given the iteration time of a plan (simulated by the engine, or a
 * search's estimate) and the GPUs' busy fraction, the failure-free time
 * to train is train_tokens / tokens_per_s; goodput (models/goodput.h)
 * stretches it by failures, checkpoints and restarts into the wall time,
 * and economics (models/economics.h) prices that wall time: a run pays
 * for the time lost to failures too. The checkpoint is the model states
 * (weights + optimizer, models/memory.h bytes per parameter). */
#ifndef DDLSIM_ASSESS_H
#define DDLSIM_ASSESS_H

#include "economics.h"
#include "goodput.h"
#include "inputs.h"
#include "plan.h"
#include "scenario_meta.h"

struct assessment {
	double train_s;             /* failure-free time to train */
	double busy;                /* GPU busy fraction used for power */
	struct goodput_result gp;   /* wall time with failures */
	struct econ_result econ;    /* priced over gp.wall_s */
};

/* Assess plan pl on inputs in at tokens_per_s with GPUs busy `busy` of
 * the time; on a mixed cluster (pl->ngroups) each node group's GPUs at
 * their own power, busy group_busy[k] of the time (group k of the plan's
 * listed order; NULL or < 0: busy; result_busy() gives both). A cloud
 * price in the plan (cost.usd_per_gpu_hour) applies when the economics
 * parameters give none. */
void assess_plan(const struct inputs *in, const struct plan *pl, double tokens_per_s, double busy,
		 const double *group_busy, const struct econ_params *ep, const struct goodput_params *gp,
		 struct assessment *out);

/* Whether every GPU of pl on in (the topology's, or each node group's)
 * gives its power (gpu.power.tdp_W): else energy is unknown. */
bool assess_has_power(const struct inputs *in, const struct plan *pl);

/* The energy (MWh) of running plan pl's cluster on in for time_s with
 * its GPUs busy `busy` of the time (group_busy as assess_plan()), at the
 * default economics parameters (PUE 1.58, node overhead from the
 * topology, no port power: economics.h), failures not counted; NAN when
 * a GPU has no TDP (assess_has_power()). */
double assess_energy_MWh(const struct inputs *in, const struct plan *pl, double time_s, double busy,
			 const double *group_busy);

/* Checkpoint bytes of the model's states under pl's precision. */
double assess_checkpoint_bytes(const struct inputs *in, const struct plan *pl);

/* A run held against the goal its plan was chosen for (a scenario's goal
 * object, scenario_meta.h): assessed with the goal's economics and
 * goodput at the simulated throughput and at the error band's slow edge
 * (throughput / slow_factor, the band's high end, sim/band.h), each
 * judged against the deadline (wall time with failures) and the budget;
 * a goal without a deadline or budget passes that test. */
struct goal_verdict {
	struct assessment at, slow;
	double slow_factor;                       /* >= 1 */
	bool meets_deadline, within_budget;       /* at the estimate */
	bool meets_deadline_slow, within_budget_slow;
};

void assess_goal(const struct inputs *in, const struct plan *pl, const struct scenario_goal *g,
		 double tokens_per_s, double busy, const double *group_busy, double slow_factor,
		 struct goal_verdict *out);

#endif
