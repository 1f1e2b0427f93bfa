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
 *   zb-h1        zero-bubble ZB-H1 (Qi et al., ICLR 2024, arXiv 2401.10241):
 *                each backward split into B (the input gradient, sent on
 *                at once) and W (the weight gradients), W deferred into
 *                the slots where 1F1B idles
 *
 * With uniform stages and free communication the bubble is (p - 1) / m of
 * the ideal time for gpipe and 1f1b and (p - 1) / (v m) for interleaved;
 * for zb-h1 it is (p - 1)(T_F + T_B - T_W) against 1F1B's
 * (p - 1)(T_F + T_B + T_W), with T_B + T_W the whole backward (a third of
 * 1F1B's when the three are equal). The engine measures it from the
 * replayed timeline.
 *
 * A schedule that splits the backward lists 3 m steps per stage, F, B
 * and W of every micro-batch; the others 2 m v, F and the whole backward.
 * A micro-batch is in flight from its F until its W where the backward is
 * split (W reads the inputs its F saved), else until its backward. */
#ifndef DDLSIM_SCHEDULE_H
#define DDLSIM_SCHEDULE_H

#include <stdbool.h>

enum sched_kind { SCHED_GPIPE, SCHED_1F1B, SCHED_INTERLEAVED, SCHED_ZBH1, SCHED_N };

struct sched_step {
	bool fwd;
	int mb;
	int chunk;
	bool w;         /* not fwd: the weight-gradient half W of a split
			   backward; false: its B, or the whole backward */
};

struct schedule_impl {
	const char *name;
	const char *description;
	/* Write the schedule_steps() steps of stage s of p into o; return
	 * how many. */
	int (*order)(int p, int s, int m, int v, struct sched_step *o);
};

/* The schedules, indexed by enum sched_kind, {NULL} terminated: the
 * loaders, `ddlsim list` and the builder all read this table. */
extern const struct schedule_impl schedule_registry[SCHED_N + 1];

/* Whether schedule k splits each backward into B and W steps. */
bool schedule_splits_backward(enum sched_kind k);

/* Steps of schedule k per stage with m micro-batches and v chunks: 3 m
 * where it splits the backward, 2 m for 1f1b, else 2 m v. */
int schedule_steps(enum sched_kind k, int m, int v);

/* Steps of stage (0..p-1) with m micro-batches and v chunks (only
 * interleaved uses v), in order. Returns a malloc'd array of
 * schedule_steps() steps (caller frees); never NULL. */
struct sched_step *schedule_order(enum sched_kind k, int p, int stage, int m, int v);

/* What step st does to the micro-batches in flight: +1 for a forward, -1
 * for the step that ends its micro-batch's stay (its W where the
 * schedule splits the backward, split, else its backward), 0 for a B
 * before its W. */
int schedule_step_inflight(const struct sched_step *st, bool split);

/* Peak number of (micro-batch, chunk) pairs whose forward has run and
 * whose backward (its W, where the steps split it) has not, over the
 * steps. */
int schedule_peak_inflight(const struct sched_step *steps, int n);

#endif
