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

struct assessment {
	double train_s;             /* failure-free time to train */
	double busy;                /* GPU busy fraction used for power */
	struct goodput_result gp;   /* wall time with failures */
	struct econ_result econ;    /* priced over gp.wall_s */
};

/* Assess plan pl on inputs in at tokens_per_s with GPUs busy `busy` of
 * the time. A cloud price in the plan (cost.usd_per_gpu_hour) applies
 * when the economics parameters give none. */
void assess_plan(const struct inputs *in, const struct plan *pl, double tokens_per_s, double busy,
		 const struct econ_params *ep, const struct goodput_params *gp, struct assessment *out);

/* The energy (MWh) of running plan pl's cluster on in for time_s with
 * its GPUs busy `busy` of the time, at the default economics parameters
 * (PUE 1.58, node overhead from the topology, no port power:
 * economics.h), failures not counted; NAN when the GPU has no TDP. */
double assess_energy_MWh(const struct inputs *in, const struct plan *pl, double time_s, double busy);

/* Checkpoint bytes of the model's states under pl's precision. */
double assess_checkpoint_bytes(const struct inputs *in, const struct plan *pl);

#endif
