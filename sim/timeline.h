/* timeline: what one rank per pipeline stage did over the iteration, as
 * the report's schedule chart draws it (reports/gantt.c).
 *
 * An observer of the replay (engine.h) records, for the rank drawn for
 * each stage (the simulated rank whose figures the stage's first rank
 * takes), two things:
 *   compute   its compute stream, interval by interval: forward, backward
 *             (recompute included) and other compute tasks (optimizer,
 *             offload), and each blocked interval as the engine charged
 *             it (engine_observer.compute_wait): exposed collective,
 *             exposed pipeline transfer, or pipeline bubble. What is
 *             neither is idle (before the first task, after the last).
 *             The exposed and bubble intervals are the very ones the
 *             rank's exposed_s and bubble_s sum.
 *   coll, p2p when a collective, and when a pipeline transfer, of the rank
 *             was in flight on any communication stream (each the union
 *             over the streams), overlapped with compute or not.
 * Consecutive intervals of one kind (the same pass of the same
 * micro-batch and chunk, or the same wait) are merged as they come, so
 * memory grows with the changes of kind, not with the tasks; the other
 * ranks cost one test per task. It forwards every call to an inner
 * observer (the trace), so both can watch one replay.
 *
 * A chart cannot draw a slice per task (a 96-layer stage has thousands
 * per iteration, most narrower than a pixel): timeline_bin() spreads a
 * lane over equal bins of time, each bin the share of its time in each
 * state and the pass that took most of it. */
#ifndef DDLSIM_TIMELINE_H
#define DDLSIM_TIMELINE_H

#include <stddef.h>

#include "engine.h"

struct timeline;

enum timeline_state {
	/* the compute lane */
	TL_FORWARD,
	TL_BACKWARD,                /* backward and recompute */
	TL_OTHER,                   /* optimizer step, offload's work on the compute stream */
	TL_EXPOSED_COLL,            /* waiting for a collective (or host work) */
	TL_EXPOSED_P2P,             /* waiting for a pipeline transfer in flight */
	TL_BUBBLE,                  /* waiting for a pipeline peer's work */
	/* the communication lane */
	TL_COLL,                    /* a collective in flight */
	TL_P2P,                     /* a pipeline send or receive in flight */
	TL_NSTATES
};
/* The lanes of a stage: its compute stream; the collectives and the
 * pipeline transfers in flight on its communication streams. */
enum timeline_lane { TL_LANE_COMPUTE, TL_LANE_COLL, TL_LANE_P2P, TL_NLANES };

/* One interval: [t0_s, t1_s) in state; a compute task's micro-batch and
 * chunk (else -1); cat the task_cat of a task or of the collective
 * waited for (-1: a bubble). */
struct timeline_seg {
	double t0_s, t1_s;
	int mb;
	short chunk;
	signed char cat;
	unsigned char state;
};

/* A bin of a lane (timeline_bin): the seconds of its time in each state
 * and the compute task that took most of it (state -1: none), with the
 * task_cats of the collectives waited for (bit per cat). */
struct timeline_bin {
	double state_s[TL_NSTATES];
	int mb, chunk, state;
	unsigned exposed_cats;
};

/* A recorder forwarding every call to inner (NULL: none; borrowed, must
 * outlive the timeline). Aborts when out of memory (xalloc). */
struct timeline *timeline_create(const struct engine_observer *inner);
/* Free tl; NULL is a no-op. */
void timeline_destroy(struct timeline *tl);
/* The observer to pass to the engine (borrowed from tl). */
const struct engine_observer *timeline_observer(struct timeline *tl);

/* Stages recorded (0 before the replay began). */
int timeline_stages(const struct timeline *tl);
/* The rank drawn for stage. */
int timeline_rank(const struct timeline *tl, int stage);
/* The last instant recorded on any lane (s). */
double timeline_end_s(const struct timeline *tl);
/* The intervals of a lane of stage, in time order, disjoint (borrowed,
 * valid until the next call of the observer); *n their number. */
const struct timeline_seg *timeline_lane(const struct timeline *tl, int stage, enum timeline_lane lane,
					 size_t *n);
/* Spread the lanes of stage (bit 1 << enum timeline_lane each) over
 * nbins equal bins of [t0_s, t1_s) into bin[0..nbins) (caller's memory,
 * overwritten). */
void timeline_bin(const struct timeline *tl, int stage, unsigned lanes, double t0_s, double t1_s,
		  int nbins, struct timeline_bin *bin);

#endif
