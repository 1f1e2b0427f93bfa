/* test-study: the analysis of a study's simulated plans (sim/study.c)
 * against values worked by hand.
 *
 * Pareto front of five (wall time, cost) points
 *   A (10, 5)  B (8, 7)  C (12, 4)  D (11, 6)  E (8, 8)
 * D is dominated by A (slower and dearer), E by B (as fast, dearer): the
 * front is A, B, C. A point that did not simulate, even at (1, 1), is
 * neither on it nor dominates anything; two equal points are both on it.
 * Spearman's rho = 1 - 6 sum d^2 / (m (m^2 - 1)):
 *   (1,2,3,4,5) vs (2,1,4,3,5): d = -1, 1, -1, 1, 0, sum 4, rho = 1 - 24/120 = 0.8;
 *   reversed: sum d^2 = 16 + 4 + 0 + 4 + 16 = 40, rho = 1 - 240/120 = -1;
 *   ties (1,1,2) vs (1,2,3): ranks (1, 1, 2.5) vs (0.5, 1.5, 2.5), sum d^2
 *   0.5, rho = 1 - 3/24 = 0.875; fewer than 3 pairs: NAN.
 * Fewest GPUs per type over options H100, H200, H100 (deadline 120 s,
 * budget 25 $): H100's 512-GPU plans at 100 s / $10 and 110 s / $9 meet
 * it (the cheaper wins), its 256 GPUs at 200 s are late, its 128 GPUs did
 * not simulate; H200's only plan costs $30: none. Without deadline and
 * budget: H100's 256 GPUs, H200's 1,024. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "study.h"

#define PT(opt, gpu_, n, ok_, w, c) \
	{ .option = (opt), .gpu = (gpu_), .gpus = (n), .ok = (ok_), .wall_s = (w), .cost_usd = (c) }

Test(study, pareto_front_of_five_points)
{
	const struct study_point p[] = {
		PT(0, "g", 1, true, 10, 5), PT(0, "g", 1, true, 8, 7), PT(0, "g", 1, true, 12, 4),
		PT(0, "g", 1, true, 11, 6), PT(0, "g", 1, true, 8, 8),
	};
	bool front[5];
	cr_assert_eq(study_pareto(p, 5, front), 3);
	cr_assert(front[0] && front[1] && front[2]);
	cr_assert(!front[3], "D (11, 6) is dominated by A (10, 5)");
	cr_assert(!front[4], "E (8, 8) is dominated by B (8, 7)");
}

Test(study, pareto_ignores_failed_points_and_keeps_equal_ones)
{
	const struct study_point p[] = {
		PT(0, "g", 1, true, 10, 5), PT(0, "g", 1, false, 1, 1), PT(0, "g", 1, true, 10, 5),
		PT(0, "g", 1, true, 11, 5),
	};
	bool front[4];
	cr_assert_eq(study_pareto(p, 4, front), 2);
	cr_assert(front[0] && front[2], "equal points do not dominate each other");
	cr_assert(!front[1], "a failed point is not on the front");
	cr_assert(!front[3], "(11, 5) is dominated by (10, 5)");
}

Test(study, spearman_of_hand_worked_rankings)
{
	const double a[] = { 1, 2, 3, 4, 5 }, b[] = { 2, 1, 4, 3, 5 }, rev[] = { 50, 40, 30, 20, 10 };
	cr_assert_float_eq(study_spearman(a, b, 5), 0.8, 1e-12);
	cr_assert_float_eq(study_spearman(a, a, 5), 1.0, 1e-12);
	cr_assert_float_eq(study_spearman(a, rev, 5), -1.0, 1e-12);
	const double t[] = { 1, 1, 2 }, u[] = { 1, 2, 3 };
	cr_assert_float_eq(study_spearman(t, u, 3), 0.875, 1e-12);
	cr_assert(isnan(study_spearman(a, b, 2)), "two pairs have no rank correlation");
}

Test(study, fewest_gpus_per_gpu_type)
{
	const struct study_point p[] = {
		PT(0, "H100", 512, true, 100, 10), PT(2, "H100", 256, true, 200, 8),
		PT(2, "H100", 512, true, 110, 9), PT(0, "H100", 128, false, 0, 0),
		PT(1, "H200", 1024, true, 50, 30),
	};
	const char *const opt[] = { "H100", "H200", "H100" };
	struct study_fewest f[3];
	cr_assert_eq(study_fewest_gpus(p, 5, opt, 3, 120, 25, f), 2, "two GPU types");
	cr_assert_str_eq(f[0].gpu, "H100");
	cr_assert_eq(f[0].point, 2, "512 GPUs at $9 beat 512 at $10; 256 are late");
	cr_assert_str_eq(f[1].gpu, "H200");
	cr_assert_eq(f[1].point, -1, "over budget");
	cr_assert_eq(study_fewest_gpus(p, 5, opt, 3, 0, 0, f), 2);
	cr_assert_eq(f[0].point, 1, "no deadline: 256 GPUs; 128 did not simulate");
	cr_assert_eq(f[1].point, 4);
}

/* Issue 44 item 1: the safe count is the fewest GPUs whose simulated plan
 * meets the deadline at its band's slow edge: 256 GPUs meet 90 d at 80 d
 * but not at +20 % (96 d); 512 at 75 d with +10 % (82.5 d) do. */
Test(study, safe_gpus_meet_the_goal_at_the_slow_edge)
{
	const struct study_point p[] = {
		PT(0, "H100", 256, true, 80, 10), PT(0, "H100", 512, true, 75, 12),
		PT(0, "H100", 1024, true, 40, 20),
	};
	const double slow[] = { 0.2, 0.1, 0.1 }, none[] = { 0, 0, 0 };
	const char *const opt[] = { "H100" };
	struct study_fewest f[1];
	cr_assert_eq(study_safe_gpus(p, 3, slow, opt, 1, 90, 0, f), 1);
	cr_expect_eq(f[0].point, 1, "512 GPUs: 82.5 d at the slow edge; 256 take 96 d there");
	cr_assert_eq(study_fewest_gpus(p, 3, opt, 1, 90, 0, f), 1);
	cr_expect_eq(f[0].point, 0, "the fewest GPUs: 256 at 80 d");
	study_safe_gpus(p, 3, none, opt, 1, 90, 0, f);
	cr_expect_eq(f[0].point, 0, "no band: the fewest GPUs");
	study_safe_gpus(p, 3, slow, opt, 1, 90, 13, f);
	cr_expect_eq(f[0].point, -1, "cost at the slow edge over budget: $13.2 and $22");
}

Test(study, ranking_puts_simulated_plans_first_by_option_then_time)
{
	struct study_point p[] = {
		PT(1, "g", 1, true, 5, 0), PT(0, "g", 1, false, 0, 0), PT(0, "g", 1, true, 9, 0),
		PT(0, "g", 1, true, 3, 0),
	};
	cr_assert_lt(study_compare(&p[3], &p[2]), 0, "faster first");
	cr_assert_lt(study_compare(&p[2], &p[0]), 0, "option 0 before option 1");
	cr_assert_lt(study_compare(&p[0], &p[1]), 0, "simulated before failed");
	cr_assert_eq(study_compare(&p[3], &p[3]), 0);
}

/* Fit first: a plan that simulated but does not fit in GPU memory (286 GB
 * on an 80 GB GPU, say) is the fastest and cheapest of four, yet it ranks
 * after every plan that fits (before a failure), is not on the front, does
 * not push (10, 5) off it, and is never the fewest GPUs. */
Test(study, a_plan_that_does_not_fit_is_never_ranked_nor_on_the_front)
{
	struct study_point p[] = {
		PT(0, "H100", 512, true, 10, 5), PT(0, "H100", 256, true, 1, 1),
		PT(0, "H100", 1024, true, 8, 7), PT(0, "H100", 128, false, 0, 0),
	};
	p[1].oom = true;
	cr_assert(!study_usable(&p[1]));
	cr_assert(study_usable(&p[0]));
	cr_assert_gt(study_compare(&p[1], &p[0]), 0, "a plan that fits ranks first, however slow");
	cr_assert_gt(study_compare(&p[1], &p[2]), 0);
	cr_assert_lt(study_compare(&p[1], &p[3]), 0, "oom before failed");
	bool front[4];
	cr_assert_eq(study_pareto(p, 4, front), 2);
	cr_assert(front[0] && front[2], "(10, 5) and (8, 7): the oom plan at (1, 1) dominates nothing");
	cr_assert(!front[1], "a plan that does not fit is never on the front");
	const char *const opt[] = { "H100" };
	struct study_fewest f[1];
	cr_assert_eq(study_fewest_gpus(p, 4, opt, 1, 0, 0, f), 1);
	cr_assert_eq(f[0].point, 0, "512 GPUs: the 256 that do not fit are not an answer");
	qsort(p, 4, sizeof(p[0]), (int (*)(const void *, const void *))study_compare);
	cr_assert_eq(p[0].gpus, 1024, "ranked: 8 s first");
	cr_assert_eq(p[1].gpus, 512);
	cr_assert(p[2].oom, "then the plan that does not fit");
	cr_assert(!p[3].ok);
}

/* A plan simulated for a wider table only (`ddlsim plan --top`: extra)
 * is ranked and on the front like any, but never the fewest GPUs, so that
 * answer does not move with --top. */
Test(study, an_extra_plan_is_never_the_fewest_gpus)
{
	struct study_point p[] = { PT(0, "H100", 512, true, 10, 5), PT(0, "H100", 256, true, 9, 4) };
	p[1].extra = true;
	const char *const opt[] = { "H100" };
	struct study_fewest f[1];
	cr_assert_eq(study_fewest_gpus(p, 2, opt, 1, 20, 0, f), 1);
	cr_expect_eq(f[0].point, 0, "512 GPUs: the 256 of --top alone are not the answer");
	bool front[2];
	cr_expect_eq(study_pareto(p, 2, front), 1);
	cr_expect(front[1], "an extra plan is still on the front");
	p[1].extra = false;
	cr_assert_eq(study_fewest_gpus(p, 2, opt, 1, 20, 0, f), 1);
	cr_expect_eq(f[0].point, 1);
}
