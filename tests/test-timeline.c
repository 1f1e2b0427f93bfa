/* test-timeline: the stage ranks' timeline the schedule chart draws
 * (sim/timeline.h). Its intervals are the engine's own accounting: per
 * state they sum to the rank's compute, exposed and bubble figures; the
 * lanes are disjoint and in time order; the bins keep every second; the
 * inner observer sees every task. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "diag.h"
#include "result.h"
#include "scenario.h"
#include "simulate.h"
#include "testutil.h"
#include "timeline.h"

struct counter {
	long tasks, waits, begins;
};

static void count_end(void *ctx, int rank, const struct program *p, int ti, double s, double e, int peer)
{
	((struct counter *)ctx)->tasks++;
}

static void count_wait(void *ctx, int rank, double from, double to, int what)
{
	((struct counter *)ctx)->waits++;
}

static void count_begin(void *ctx, const struct engine_result *out)
{
	((struct counter *)ctx)->begins++;
}

/* Simulate a shipped scenario with a timeline around a counting observer. */
static void run(const char *scenario, struct scenario **sc, struct result *r, struct counter *c)
{
	static struct engine_observer inner;
	struct diag d;
	diag_init(&d, NULL);
	*sc = scenario_load(src_path(scenario), &d);
	cr_assert(*sc, "%s", diag_text(&d));
	inner = (struct engine_observer){ .ctx = c, .begin = count_begin, .task_end = count_end,
					  .compute_wait = count_wait };
	struct timeline *tl = timeline_create(&inner);
	cr_assert_eq(simulate_run_observed((*sc)->in, &(*sc)->plan, timeline_observer(tl), r, &d), 0, "%s",
		     diag_text(&d));
	result_set_timeline(r, tl);
	diag_finish(&d);
}

static double lane_sum(const struct timeline *tl, int s, enum timeline_lane lane, int state)
{
	size_t n;
	const struct timeline_seg *v = timeline_lane(tl, s, lane, &n);
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		if (v[i].state == state)
			sum += v[i].t1_s - v[i].t0_s;
	return sum;
}

static void expect_disjoint(const struct timeline *tl, int s, enum timeline_lane lane)
{
	size_t n;
	const struct timeline_seg *v = timeline_lane(tl, s, lane, &n);
	for (size_t i = 0; i < n; i++) {
		cr_assert_lt(v[i].t0_s, v[i].t1_s, "stage %d lane %d interval %zu", s, lane, i);
		if (i)
			cr_assert_leq(v[i - 1].t1_s, v[i].t0_s, "stage %d lane %d: %zu overlaps %zu", s, lane,
				      i - 1, i);
	}
}

#define NEAR(a, b) (fabs((a) - (b)) <= 1e-9 * fmax(1, fabs(b)))

/* Every stage: its rank's compute and waits, state by state, are the
 * engine's figures of that rank. */
static void expect_accounting(const struct result *r)
{
	const struct timeline *tl = r->timeline;
	cr_assert_eq(timeline_stages(tl), r->plan.parallel.pp);
	for (int s = 0; s < timeline_stages(tl); s++) {
		int rank = timeline_rank(tl, s);
		struct result_rank x = result_rank(r, rank);
		cr_expect_eq(x.stage, s);
		cr_expect_eq(x.simulated_as, rank, "stage %d drawn from rank %d, a folded rank", s, rank);
		double coll = 0;
		for (int c = CAT_TP_COMM; c < CAT_PP_COMM; c++)
			coll += x.exposed_s[c];
		struct { int state; double want; } want[] = {
			{ TL_FORWARD, x.compute_s[CAT_FORWARD] },
			{ TL_BACKWARD, x.compute_s[CAT_BACKWARD] + x.compute_s[CAT_RECOMPUTE] },
			{ TL_OTHER, x.compute_s[CAT_OPTIMIZER] },
			{ TL_EXPOSED_COLL, coll },
			{ TL_EXPOSED_P2P, x.exposed_s[CAT_PP_COMM] },
			{ TL_BUBBLE, x.bubble_s },
		};
		for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
			double got = lane_sum(tl, s, TL_LANE_COMPUTE, want[k].state);
			cr_expect(NEAR(got, want[k].want), "stage %d state %d: %.12g s drawn, the rank has %.12g s", s,
				  want[k].state, got, want[k].want);
		}
		for (int l = 0; l < TL_NLANES; l++)
			expect_disjoint(tl, s, l);
	}
}

Test(timeline, megatron_76b_lanes_are_the_engines_accounting, .timeout = 120)
{
	struct scenario *sc;
	struct result r;
	struct counter c = { 0 };
	run("scenarios/megatron/76b.json", &sc, &r, &c);
	expect_accounting(&r);
	/* a pipeline: bubbles, pipeline transfers in flight and exposed */
	cr_expect_gt(lane_sum(r.timeline, 0, TL_LANE_COMPUTE, TL_BUBBLE), 0.1);
	cr_expect_gt(lane_sum(r.timeline, 1, TL_LANE_P2P, TL_P2P), 0);
	cr_expect_gt(lane_sum(r.timeline, 3, TL_LANE_COLL, TL_COLL), 1);
	/* the inner observer saw the whole replay */
	cr_expect_eq(c.begins, 1);
	cr_expect_eq(c.tasks, result_sim(&r).tasks);
	cr_expect_gt(c.waits, 0);
	cr_expect_leq(timeline_end_s(r.timeline), r.iteration_s);
	cr_expect(NEAR(timeline_end_s(r.timeline), r.iteration_s));
	result_finish(&r);
	scenario_destroy(sc);
}

Test(timeline, quickstart_data_parallel_exposes_the_last_gradient_reduction, .timeout = 120)
{
	struct scenario *sc;
	struct result r;
	struct counter c = { 0 };
	run("scenarios/quickstart.json", &sc, &r, &c);
	expect_accounting(&r);
	struct result_rank x = result_rank(&r, 0);
	cr_expect_gt(x.exposed_s[CAT_DP_COMM], 0.01);
	cr_expect_eq(lane_sum(r.timeline, 0, TL_LANE_COMPUTE, TL_BUBBLE), 0);
	result_finish(&r);
	scenario_destroy(sc);
}

Test(timeline, bins_keep_every_second_of_a_lane, .timeout = 120)
{
	struct scenario *sc;
	struct result r;
	struct counter c = { 0 };
	run("scenarios/megatron/76b.json", &sc, &r, &c);
	enum { NB = 333 };
	struct timeline_bin bin[NB];
	double t1 = r.iteration_s * 1.07, w = t1 / NB;
	for (int s = 0; s < timeline_stages(r.timeline); s++) {
		timeline_bin(r.timeline, s, 1u << TL_LANE_COMPUTE, 0, t1, NB, bin);
		double sum[TL_NSTATES] = { 0 };
		for (int k = 0; k < NB; k++) {
			double in_bin = 0;
			for (int t = 0; t < TL_NSTATES; t++) {
				sum[t] += bin[k].state_s[t];
				in_bin += bin[k].state_s[t];
			}
			cr_assert_leq(in_bin, w * (1 + 1e-9), "stage %d bin %d holds %.9g s of %.9g", s, k, in_bin, w);
			/* a bin with compute names the pass that took most of it */
			bool compute = bin[k].state_s[TL_FORWARD] + bin[k].state_s[TL_BACKWARD] +
				       bin[k].state_s[TL_OTHER] > 0;
			cr_assert_eq(compute, bin[k].state >= 0, "stage %d bin %d", s, k);
		}
		for (int t = 0; t <= TL_BUBBLE; t++)
			cr_expect(NEAR(sum[t], lane_sum(r.timeline, s, TL_LANE_COMPUTE, t)), "stage %d state %d", s, t);
		/* the pipeline transfers and collectives overlap: one bin may hold both */
		timeline_bin(r.timeline, s, 1u << TL_LANE_COLL | 1u << TL_LANE_P2P, 0, t1, NB, bin);
		double coll = 0;
		for (int k = 0; k < NB; k++)
			coll += bin[k].state_s[TL_COLL];
		cr_expect(NEAR(coll, lane_sum(r.timeline, s, TL_LANE_COLL, TL_COLL)), "stage %d", s);
	}
	result_finish(&r);
	scenario_destroy(sc);
}
