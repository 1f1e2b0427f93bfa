/* estimate: how long a simulation will take, known before the engine
 * starts (issue 27: never a silent long run).
 *
 * The engine's work is its events: every task a simulated rank replays
 * (a compute slice, a collective, a pipeline send or receive) and every
 * flow it posts on the network (a collective's transfers, a pipeline
 * message, a parameter-server push or pull, the mirror flows folding
 * posts for the ranks it leaves out). engine_result counts both
 * (tasks, flows). estimate_job() counts them from the job alone, with
 * the folding planner (fold.h, no SimGrid): the ranks simulated, each
 * one's program, and the flows each of its collectives posts under the
 * job's folding, as the engine's files post them. The counts are the
 * engine's own to within the planner's view of the mirrors (equal on
 * every shipped scenario, tests/test-estimate.c).
 *
 * The time is a CPU cost per event plus the cost of SimGrid's max-min
 * solve, which walks the flows in flight at each event (those linked to
 * what changed, since the selective update of engine.c): each event
 * costs the flows in flight at a mean instant (inflight), and a
 * collective posting F flows at once costs about F x F / 2 more while
 * they end (crowd). The uplink copies of cheap folding on an
 * oversubscribed tree (fold_uplink.c) are counted apart
 * (copies_inflight, copies_crowd): they cost more per flow. See
 * ESTIMATE_* in estimate.c for the fit, the machine and the scenarios it
 * was measured on, the factor it holds to and where it does not hold. What-if side runs (sampled
 * straggler iterations, degraded-link sensitivity) repeat the job: the
 * estimate counts them as runs. */
#ifndef DDLSIM_ESTIMATE_H
#define DDLSIM_ESTIMATE_H

#include <stdbool.h>

#include "diag.h"
#include "engine.h"

/* The factor the predicted CPU time holds to against the measured one on
 * the scenarios of the fit (estimate.c): the truth lies within
 * [cpu_s / ESTIMATE_FACTOR, cpu_s * ESTIMATE_FACTOR]. */
#define ESTIMATE_FACTOR 3.0

struct estimate {
	int ranks;              /* ranks of the job */
	int simulated;          /* ranks the engine simulates (after folding) */
	int runs;               /* engine runs: the reported one and the side runs */
	long tasks;             /* tasks of one run, as engine_result.tasks counts them */
	long flows;             /* flows of one run, as engine_result.flows counts them */
	long collectives;       /* collectives of one run (engine_result.collectives) */
	double flow_s;          /* flows x how long their collective keeps them in
				 * flight (uncontended, x a fat tree's oversubscription
				 * across its uplinks), summed */
	double inflight;        /* flows in flight at a mean instant: flow_s over the
				 * busiest stage's compute time */
	double crowd;           /* flows in flight seen by the flow events of one run:
				 * a collective whose F flows the stage's simulated
				 * ranks post at once (every instance of its group)
				 * adds F x F x pp / 2, the pipeline's stages running
				 * side by side */
	double copies_flow_s;   /* the part of flow_s of the uplink copies cheap
				 * folding posts on an oversubscribed tree
				 * (fold_uplink.c) */
	double copies_inflight; /* the copies' part of inflight: copies_flow_s over
				 * the busiest stage's compute time */
	double copies_crowd;    /* the crowd of the collectives whose flows include
				 * uplink copies, counted apart from crowd */
	double events;          /* (tasks + flows) x runs */
	double cpu_s;           /* predicted CPU seconds of every run */
	bool folded;
	const char *fold_reason;/* static: why not folded (NULL if folded) */
	const char *fold_advice;/* static: what would shorten it (NULL if nothing to say) */
};

/* Count into e->simulated, e->tasks, e->flows, e->collectives,
 * e->flow_s, e->inflight, e->crowd and their copies_ parts what
 * engine_run(job) will replay, and set e->ranks (the rest is the
 * caller's). Builds no SimGrid object. Returns 0, or -1 after reporting
 * into d (a collective plan that cannot be made). */
int estimate_job(const struct engine_job *job, struct estimate *e, struct diag *d);

/* e->events and e->cpu_s from e->tasks, e->flows, e->inflight, e->crowd,
 * their copies_ parts and e->runs. */
void estimate_time(struct estimate *e);

/* Peak memory of a collective sweep (engine_collective_run) on ranks
 * ranks over points distinct (op, bytes) points, in bytes: a base, a
 * cost per rank (its host, links and actor on the platform, its flows in
 * the plan) and a cost per rank and point (the plans are built before the
 * run). The constants and how they were measured: ESTIMATE_COLL_* in
 * estimate.c. */
double estimate_collective_bytes(long ranks, int points);

/* Peak memory of one simulation (engine_run) from its estimate e (tasks,
 * flows and ranks simulated of one run), in bytes: a base, a cost per
 * simulated rank (its host, links, actor and program) and a cost per
 * event. The constants, how they were measured and how far they hold:
 * ESTIMATE_RUN_* in estimate.c. */
double estimate_job_bytes(const struct estimate *e);

#endif
