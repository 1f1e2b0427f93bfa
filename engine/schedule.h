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
 *   dualpipe     DeepSeek-V3's bidirectional DualPipe (arXiv 2412.19437,
 *                section 3.2.1; deepseek-ai/DualPipe dualpipe/dualpipe.py
 *                at 3da1bbea53606543d7f5f232338fc58096db30e3): p even,
 *                each rank s holds two chunks, chunk 0 stage s of the
 *                forward-direction pipeline and chunk 1 stage p - 1 - s
 *                of the reverse one (the same layers as rank p - 1 - s's
 *                chunk 0: twice the parameters of a stage); the m
 *                micro-batches split in two halves fed from the two ends
 *                (micro-batches 0..m/2-1 through chunk 0, m/2..m-1
 *                through chunk 1); the reference's eight phases (warm-up
 *                forwards, F0 F1, B1 W F1 with zero bubble, the F&B
 *                steady state, B1 F&B, B1 B0, W B0, the last W's)
 *
 * With uniform stages and free communication the bubble is (p - 1) / m of
 * the ideal time for gpipe and 1f1b and (p - 1) / (v m) for interleaved;
 * for zb-h1 it is (p - 1)(T_F + T_B - T_W) against 1F1B's
 * (p - 1)(T_F + T_B + T_W), with T_B + T_W the whole backward (a third of
 * 1F1B's when the three are equal). For dualpipe the DeepSeek-V3
 * report's Table 2 (and the reference's README) gives (p/2 - 1)(T_F&B +
 * B - 3 T_W), with B the whole backward T_B + T_W and T_F&B the time of
 * an overlapped forward-and-backward pair; here a pair runs its forward
 * then its whole backward on the compute stream (T_F&B = T_F + B: what
 * the pair overlaps is its communication, the forward's send posted
 * after the backward as the reference batches it, not its compute), so
 * (p/2 - 1)(T_F + 2 T_B - T_W) of rank 0's time m (T_F + T_B + T_W).
 * The replay gives exactly that where T_F = T_B >= T_W
 * (tests/test-schedule.c); elsewhere its critical path bends away from
 * the closed form (p = 8, T_F = 1, T_B = 2, T_W = 1: 11 against 12;
 * T_F = 1.1, T_B = T_W = 1: 6.6 against 6.3). The engine
 * measures it from the replayed timeline.
 *
 * A schedule that splits the backward lists 3 m steps per stage, F, B
 * and W of every micro-batch; the others 2 m v, F and the whole backward.
 * A micro-batch is in flight from its F until its W where the backward is
 * split (W reads the inputs its F saved), else until its backward.
 * DualPipe also splits: a backward the reference runs whole (zero bubble
 * off: the steady state's pairs) is its B step marked `whole` followed
 * at once by its W step, also `whole`, and the input gradient is sent
 * after the W; a forward marked `pair` is the forward of an F&B pair,
 * its activation sent after the backward that follows it. */
#ifndef DDLSIM_SCHEDULE_H
#define DDLSIM_SCHEDULE_H

#include <stdbool.h>

enum sched_kind { SCHED_GPIPE, SCHED_1F1B, SCHED_INTERLEAVED, SCHED_ZBH1, SCHED_DUALPIPE, SCHED_N };

struct sched_step {
	bool fwd;
	int mb;
	int chunk;
	bool w;         /* not fwd: the weight-gradient half W of a split
			   backward; false: its B, or the whole backward */
	bool whole;     /* dualpipe: a B and its W run as one whole backward,
			   the input gradient sent after the W */
	bool pair;      /* dualpipe: the forward of an F&B pair, its send
			   posted after the pair's backward (and its W) */
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

/* Chunks each rank holds under schedule k: interleave for interleaved,
 * 2 for dualpipe, else 1. */
int schedule_chunks(enum sched_kind k, int interleave);

/* The virtual stage (0..nv-1) that chunk `chunk` of stage (rank) `stage`
 * runs, of *nv in the model's split: c p + s of p v for the
 * interleaved schedules; for dualpipe s (chunk 0) or p - 1 - s (chunk 1)
 * of p, both directions cutting the model into the same p stages. */
int schedule_vstage(enum sched_kind k, int p, int v, int stage, int chunk, int *nv);

/* Whether chunk `chunk`'s pipeline runs from the last rank to the first
 * (dualpipe's chunk 1): its forward goes to stage - 1. */
bool schedule_reversed(enum sched_kind k, int chunk);

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
