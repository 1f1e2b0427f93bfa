/* schedule: the order in which a pipeline stage runs its micro-batches.
 *
 * A schedule lists, for one stage, the forward (F) and backward (B) passes
 * of every (micro-batch, model chunk) in execution order. Registered:
 *
 *   gpipe        all forwards, then all backwards (Huang et al. 2019)
 *   1f1b         PipeDream-flush: p - s - 1 warm-up forwards, then one
 *                forward / one backward, then the cool-down backwards
 *   interleaved  Megatron-LM's interleaved 1F1B: v model chunks per rank,
 *                micro-batches in groups of p (Narayanan et al. 2021)
 *
 * With uniform stages and free communication the bubble is (p - 1) / m of
 * the ideal time for gpipe and 1f1b and (p - 1) / (v m) for interleaved;
 * the engine measures it from the replayed timeline. */
#ifndef DDLSIM_SCHEDULE_H
#define DDLSIM_SCHEDULE_H

#include <stdbool.h>

enum sched_kind { SCHED_GPIPE, SCHED_1F1B, SCHED_INTERLEAVED, SCHED_N };

struct sched_step {
	bool fwd;
	int mb;
	int chunk;
};

struct schedule_impl {
	const char *name;
	const char *description;
	/* Write the 2 m v steps of stage s of p into o; return how many. */
	int (*order)(int p, int s, int m, int v, struct sched_step *o);
};

/* The schedules, indexed by enum sched_kind, {NULL} terminated: the
 * loaders, `ddlsim list` and the builder all read this table. */
extern const struct schedule_impl schedule_registry[SCHED_N + 1];

/* Steps of stage (0..p-1) with m micro-batches and v chunks (1f1b ignores
 * v), in order. Returns a malloc'd array of 2 m v steps (caller frees);
 * never NULL. */
struct sched_step *schedule_order(enum sched_kind k, int p, int stage, int m, int v);

/* Peak number of (micro-batch, chunk) pairs whose forward has run and
 * whose backward has not, over the steps. */
int schedule_peak_inflight(const struct sched_step *steps, int n);

#endif
