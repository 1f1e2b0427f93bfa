/* whatif: the engine's inputs for a plan's what-if questions
 * (stragglers, throttling windows, degraded links: plan.h) and the side
 * runs they need (sampled straggler iterations, degraded-link
 * sensitivity), before the reported run. */
#ifndef DDLSIM_WHATIF_H
#define DDLSIM_WHATIF_H

#include <stdbool.h>

#include "engine.h"
#include "plan.h"
#include "result.h"

/* The ranks unlike their replicas: stragglers, GPUs throttled on their
 * own (a window over the whole job keeps replicas alike) and the GPUs of
 * nodes whose traffic can cross a degraded link. Returns a mask of
 * nranks bytes (caller frees), NULL if the plan asks nothing of the
 * kind; *any whether some rank is marked. */
unsigned char *whatif_distinct_ranks(const struct plan *pl, const struct topology *topo, int nranks,
				     bool *any);

/* The throttling windows of the plan, one entry per rank and window
 * (caller frees; NULL with *n = 0 when none). */
struct engine_throttle *whatif_throttle_windows(const struct plan *pl, const struct topology *topo,
					       int nranks, int *n);

/* The rank with the most compute time: the one a synchronous iteration
 * waits for. */
int whatif_critical_rank(const struct engine_result *e);

/* The side runs whatif_run() makes before the reported run: the sampled
 * straggler iterations after the first, and with simulation.sensitivity
 * the run without degraded links and one per degraded link alone. */
int whatif_side_runs(const struct plan *pl);

/* Run job for plan pl into r->eng: the side runs first (each a child of
 * the runner, runner.h, one at a time), then the reported run in this
 * process (iteration 0, with the
 * stragglers' factors of iteration 0), then the iteration distribution
 * and critical ranks (r->iter_*, r->critical_*) and the sensitivity
 * figures (r->sens_*). job->compute_scale points at the factors during
 * the call and is NULL after it.
 * Returns 0, or -1 after reporting which run failed. */
int whatif_run(const struct plan *pl, struct engine_job *job, struct result *r, struct diag *d);

#endif
