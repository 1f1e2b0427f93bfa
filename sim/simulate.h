/* simulate: one scenario from loaded files to a result.
 *
 * Prices every block of the model with the scenario's cost source, writes
 * one program per pipeline stage from the schedule (forward and backward
 * passes with their TP collectives, pipeline sends and receives, bucketed
 * DP / ZeRO gradient reduction overlapped with backward, ZeRO-3 parameter
 * gathers, the optimizer step), replays them on the engine, and derives
 * throughput, FLOP rates, the per-rank breakdown and the memory anatomy. */
#ifndef DDLSIM_SIMULATE_H
#define DDLSIM_SIMULATE_H

#include "diag.h"
#include "estimate.h"
#include "inputs.h"
#include "plan.h"
#include "result.h"

struct engine_observer;  /* engine/engine.h */

/* Simulate plan pl on inputs in into r (result_finish() it; r borrows in).
 * pl must pass plan_check() (a BUG otherwise). Returns 0 or -1 after
 * reporting into d. Runs the engine, hence once per process (runner.h
 * runs many, one child process each). */
int simulate_run(const struct inputs *in, const struct plan *pl, struct result *r,
		 struct diag *d);

/* One job of several sharing a fabric: its inputs and plan (borrowed),
 * and the fabric's GPU each of its ranks runs on ([ranks]). */
struct simulate_member {
	const struct inputs *in;
	const struct plan *pl;
	const int *gpu;
};

/* Simulate the n jobs m together on nodes nodes of the topology fabric
 * (every job's inputs name it; the GPUs of different jobs disjoint):
 * their flows share its links. r[i] is job i's result as simulate_run()
 * gives it, every rank simulated (no folding) and all-to-alls pair by
 * pair; result_finish() each, whatever is returned. Returns 0, or -1
 * after reporting into d (a job with parameter servers or a what-if,
 * engine_run_many's refusals). Once per process, as simulate_run(). */
int simulate_run_many(const struct simulate_member *m, int n, const struct topology *fabric,
		      int nodes, struct result *r, struct diag *d);
/* Whether plan pl may share a fabric (simulate_run_many): no parameter
 * servers, degraded links, throttled GPUs, stragglers or sampled
 * iterations, each of which it would simulate as if alone. */
bool simulate_can_share(const struct plan *pl);

/* As simulate_run(), with obs (NULL: none) watching the engine's replay
 * (the trace export, trace.h). */
int simulate_run_observed(const struct inputs *in, const struct plan *pl,
			  const struct engine_observer *obs, struct result *r, struct diag *d);

/* What a caller of simulate_run_hooked() hears of the run (each
 * optional). */
struct simulate_hooks {
	const struct engine_observer *obs;      /* watches the replay (trace.h) */
	/* Called once the engine job is made, before the engine starts, with
	 * the run's estimate (estimate.h; not called when it cannot be
	 * made): the long-run warning and the progress line's expectation. */
	void (*before)(void *ctx, const struct estimate *e);
	void *ctx;
};

/* As simulate_run(), with hooks h (NULL: none). */
int simulate_run_hooked(const struct inputs *in, const struct plan *pl, const struct simulate_hooks *h,
			struct result *r, struct diag *d);

/* Estimate what simulate_run(in, pl) will replay and how long it will
 * take (estimate.h), before the engine starts and without SimGrid: the
 * programs built, the folding decided and the flows counted as the run
 * would, nothing simulated. pl must pass plan_check(). Returns 0, or -1
 * after reporting into d (what simulate_run() would refuse too). */
int simulate_estimate(const struct inputs *in, const struct plan *pl, struct estimate *e,
		      struct diag *d);

/* Simulate pl on in into a runner row: the headline figures, or status
 * RESULT_FAILED with the error text; the row carries pl either way. For
 * a runner job (runner.h), which must not print: messages go to the row. */
void simulate_row(const struct inputs *in, const struct plan *pl, struct result_row *row);

/* Build stage's program without running it (tests, trace export), priced
 * as simulate_run() prices it. Returns 0 or -1. */
int simulate_build_program(const struct inputs *in, const struct plan *pl, int stage,
			   struct program *out, struct stage_result *sr);

#endif
