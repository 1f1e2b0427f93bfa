/* test-stragglers: several straggler groups in one scenario
 * (simulation.stragglers as a list, plan.h).
 *
 * On the star of tests/data/topo-star-v100.json (P one-GPU nodes, data
 * parallel, ResNet-50's gradients in one bucket after backward, the ring
 * closed form of test-whatif.c), a rank in two fixed groups of factors a
 * and b computes a x b as long, and everyone waits for it:
 *   iteration = a b C + 2(P-1) alpha + 2(P-1)/P N / B
 * with C the compute of an undisturbed rank. Each group draws from its own
 * stream (its seed and place in the list): adding a group leaves the
 * draws of the groups before it alone. A one-element list is the object
 * form, report for report; bad input names the group's path. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "engine.h"
#include "model.h"
#include "scenario.h"
#include "simulate.h"
#include "testutil.h"
#include "whatif.h"

#define P 8
#define NIC_BPS (100e9 / 8)

TestSuite(stragglers, .timeout = 120);

static double g_alpha, g_n;  /* path latency, gradient bytes */

/* The scenario text on the star with this simulation object's body. */
static void star_text(char *text, size_t n, const char *simulation)
{
	snprintf(text, n,
		 "{ \"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\", \"model\": \"%s\","
		 " \"topology\": \"%s\", \"nodes\": %d, \"simulation\": { %s },"
		 " \"training\": { \"global_batch\": %d, \"micro_batch\": 32, \"precision\": \"fp32\" },"
		 " \"communication\": { \"algorithm\": \"hierarchical\", \"bucket_MB\": 1000 } }\n",
		 src_path("models/zoo/resnet50.json"), src_path("tests/data/topo-star-v100.json"), P,
		 simulation, 32 * P);
}

/* The plan of a star scenario (no run). */
static struct plan load_plan(const char *simulation)
{
	char *dir = tmp_dir(), text[4096];
	star_text(text, sizeof(text), simulation);
	char *path = write_file(dir, "s.json", text);
	struct diag d;
	diag_init(&d, stderr);
	struct scenario *sc = scenario_load(path, &d);
	cr_assert(sc, "%s", diag_text(&d));
	struct plan p = sc->plan;
	scenario_destroy(sc);
	diag_finish(&d);
	free(path), free(dir);
	return p;
}

static void run_star(const char *simulation, struct result *r)
{
	char *dir = tmp_dir(), text[4096];
	star_text(text, sizeof(text), simulation);
	char *path = write_file(dir, "s.json", text);
	struct diag d;
	diag_init(&d, stderr);
	struct scenario *sc = scenario_load(path, &d);
	cr_assert(sc, "%s", diag_text(&d));
	if (whatif_side_runs(&sc->plan) > 0)  /* forked in this process (testutil.h) */
		SKIP_UNLESS_FORK_IS_SAFE();
	cr_assert_eq(simulate_run(sc->in, &sc->plan, r, &d), 0, "%s", diag_text(&d));
	g_alpha = topology_path_latency(inputs_topology(sc->in), 0, 1);
	g_n = model_params(inputs_model(sc->in)) * 4;
	r->in = NULL;   /* borrowed from the scenario, freed here */
	scenario_destroy(sc);
	diag_finish(&d);
	free(path), free(dir);
}

/* The report of `ddlsim run` on a star scenario (a process of its own:
 * the engine runs once per process). Caller json_decref()s. */
static json_t *run_cli(const char *simulation)
{
	char *dir = tmp_dir(), text[4096], args[2048], od[1100];
	star_text(text, sizeof(text), simulation);
	char *path = write_file(dir, "s.json", text);
	snprintf(od, sizeof(od), "%s/o", dir);
	snprintf(args, sizeof(args), "run '%s' --out '%s' --quiet", path, od);
	cr_assert_eq(run_ddlsim(args, NULL, NULL), 0, "%s", simulation);
	json_t *r = load_report(od);
	cr_assert(r, "no report in %s", od);
	free(path), free(dir);
	return r;
}

static double compute_of(const struct result *r, int rank)
{
	double c = 0;
	for (int k = 0; k < CAT_N; k++)
		c += r->eng->rank[rank].compute_s[k];
	return c;
}

Test(stragglers, two_fixed_groups_multiply_on_the_rank_in_both)
{
	struct result r;
	run_star("\"stragglers\": [ { \"ranks\": [5], \"slowdown\": 1.5 },"
		 " { \"fraction\": 1, \"slowdown\": 1.2 } ]", &r);
	double ring = 2.0 * (P - 1) * g_alpha + 2.0 * (P - 1) / P * g_n / NIC_BPS;
	/* undisturbed, every rank computes C and the iteration is C + ring */
	json_t *base = run_cli("\"fold\": \"off\"");
	double c = jnum(base, "summary/iteration_time_s") - ring;
	json_decref(base);
	cr_expect_float_eq(compute_of(&r, 5), 1.8 * c, 1e-6 * c, "rank 5: %.9g s, 1.8 x %.9g s",
			   compute_of(&r, 5), c);
	cr_expect_float_eq(compute_of(&r, 0), 1.2 * c, 1e-6 * c);
	cr_expect_float_eq(compute_of(&r, 5), 1.5 * compute_of(&r, 0), 1e-9 * c);
	cr_expect_eq(r.critical_rank[0], 5);
	double want = 1.8 * c + ring;
	cr_expect_float_eq(r.iteration_s, want, 1e-6 * want, "iteration %.9g s, closed form %.9g s",
			   r.iteration_s, want);
	/* every rank touched (the second group): nothing folded, and why */
	cr_expect_not(r.folded);
	cr_expect(r.fold_reason && strstr(r.fold_reason, "straggler"), "fold_reason '%s'",
		  r.fold_reason ? r.fold_reason : "(null)");
	result_finish(&r);
}

Test(stragglers, adding_a_group_leaves_the_draws_of_the_others)
{
	const char *a = "{ \"fraction\": 0.5, \"distribution\": \"lognormal\", \"sigma\": 0.2, \"seed\": 7 }";
	char s1[512], s2[512], s0[512];
	snprintf(s0, sizeof(s0), "\"stragglers\": %s", a);
	snprintf(s1, sizeof(s1), "\"stragglers\": [ %s ]", a);
	snprintf(s2, sizeof(s2), "\"stragglers\": [ %s, %s ]", a, a);
	struct plan p0 = load_plan(s0), p1 = load_plan(s1), p2 = load_plan(s2);
	cr_assert_eq(p2.simulation.stragglers.ngroups, 2);
	double f0[64], f1[64], g0[64], g1[64], all[64];
	int both = 0, differ = 0, moved = 0;
	for (int it = 0; it < 10; it++) {
		/* the object and the one-element list draw alike */
		plan_straggler_factors(&p0, 64, it, f0);
		plan_straggler_factors(&p1, 64, it, f1);
		/* group 0 of two draws as group 0 alone */
		plan_straggler_group_factors(&p2, 0, 64, it, g0);
		plan_straggler_group_factors(&p2, 1, 64, it, g1);
		plan_straggler_factors(&p2, 64, it, all);
		for (int q = 0; q < 64; q++) {
			cr_expect_eq(f0[q], f1[q], "iteration %d rank %d", it, q);
			cr_expect_eq(g0[q], f1[q], "iteration %d rank %d: %.17g alone, %.17g beside a group",
				     it, q, f1[q], g0[q]);
			cr_expect_eq(all[q], g0[q] * g1[q]);
			/* the same seed and keys in another place: other ranks, other draws */
			both += g0[q] != 1 && g1[q] != 1;
			differ += g0[q] != 1 && g1[q] != 1 && g0[q] != g1[q];
			moved += (g0[q] != 1) != (g1[q] != 1);
		}
	}
	cr_expect_gt(both, 0);
	cr_expect_eq(differ, both, "%d of %d draws alike on ranks in both groups", both - differ, both);
	cr_expect_gt(moved, 0, "the two groups chose the same ranks");
}

/* s without its lines starting with drop (the run's own wall time). */
static void drop_lines(char *s, const char *drop)
{
	char *w = s;
	for (char *l = s; *l;) {
		char *nl = strchr(l, '\n');
		size_t n = nl ? (size_t)(nl - l) + 1 : strlen(l);
		if (strncmp(l, drop, strlen(drop)))
			memmove(w, l, n), w += n;
		l += n;
	}
	*w = 0;
}

Test(stragglers, a_one_element_list_reports_as_the_object)
{
	char *dir = tmp_dir(), text[4096], args[2048], *txt[2], *js[2];
	const char *sim[2] = { "\"stragglers\": { \"ranks\": [3], \"slowdown\": 1.25 }",
			       "\"stragglers\": [ { \"ranks\": [3], \"slowdown\": 1.25 } ]" };
	for (int i = 0; i < 2; i++) {
		star_text(text, sizeof(text), sim[i]);
		char *path = write_file(dir, "s.json", text);
		snprintf(args, sizeof(args), "run '%s' --out '%s/o'", path, dir);
		cr_assert_eq(run_ddlsim(args, &txt[i], NULL), 0);
		drop_lines(txt[i], "simulated ");
		char od[1100];
		snprintf(od, sizeof(od), "%s/o", dir);
		json_t *r = load_report(od);
		cr_assert(r, "no report in %s", od);
		/* the simulator's own wall times differ run to run */
		json_t *so = json_object_get(r, "simulation");
		json_object_del(so, "wall_s");
		json_object_del(so, "platform_s");
		js[i] = json_dumps(r, JSON_SORT_KEYS | JSON_INDENT(1));
		json_decref(r);
		free(path);
	}
	cr_expect(strstr(txt[0], "critical path (rank: iterations) 3: 1"), "%s", txt[0]);
	cr_expect_str_eq(txt[0], txt[1]);
	cr_expect_str_eq(js[0], js[1]);
	for (int i = 0; i < 2; i++)
		free(txt[i]), free(js[i]);
	free(dir);
}

Test(stragglers, folding_two_groups_matches_every_rank_simulated)
{
	const char *groups = "\"stragglers\": [ { \"ranks\": [5], \"slowdown\": 1.5 },"
			     " { \"ranks\": [5, 6], \"slowdown\": 1.2 } ]";
	char s[512];
	snprintf(s, sizeof(s), "\"fold\": \"auto\", %s", groups);
	json_t *folded = run_cli(s);
	snprintf(s, sizeof(s), "\"fold\": \"off\", %s", groups);
	json_t *full = run_cli(s);
	cr_expect(jbool_at(folded, "simulation/folded"));
	/* the representative replica and the two touched ones */
	cr_expect_eq(jint_at(folded, "simulation/simulated_ranks"), 3);
	double a = jnum(folded, "summary/iteration_time_s"), b = jnum(full, "summary/iteration_time_s");
	cr_expect_float_eq(a, b, 1e-9 * b, "folded %.17g s, unfolded %.17g s", a, b);
	json_decref(folded);
	json_decref(full);
}

static void expect_error(const char *simulation, int nodes, const char *want_tail)
{
	char *dir = tmp_dir(), args[2048], *err = NULL, text[4096], want[4096];
	snprintf(text, sizeof(text),
		 "{ \"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\", \"model\": \"%s\","
		 " \"topology\": \"%s\", \"nodes\": %d, \"simulation\": { %s },"
		 " \"training\": { \"global_batch\": 64, \"micro_batch\": 32, \"precision\": \"fp32\" } }\n",
		 src_path("models/zoo/resnet50.json"), src_path("topologies/v100-1gpu-edr.json"), nodes,
		 simulation);
	char *path = write_file(dir, "s.json", text);
	snprintf(args, sizeof(args), "run '%s' --out '%s/o' --quiet", path, dir);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3);
	snprintf(want, sizeof(want), "%s: %s\n", path, want_tail);
	cr_expect_str_eq(err, want);
	free(err), free(path), free(dir);
}

Test(stragglers, rejects_a_group_that_is_not_an_object)
{
	expect_error("\"stragglers\": [ { \"ranks\": [1], \"slowdown\": 2 }, 3 ]", 2,
		     "/simulation/stragglers/1: error: expected a straggler group, an object, got integer");
}

Test(stragglers, a_bad_key_names_its_group)
{
	expect_error("\"stragglers\": [ { \"ranks\": [1], \"slowdown\": 2 },"
		     " { \"fraction\": 1, \"distribution\": \"lognormal\", \"sigma\": -0.1 } ]", 2,
		     "/simulation/stragglers/1/sigma: error: must be >= 0, got -0.1");
	expect_error("\"stragglers\": [ { \"ranks\": [1], \"slowdown\": 2 }, { \"ranks\": [0, 2], \"slowdown\": 1.1 } ]",
		     2, "/simulation/stragglers/1/ranks/1: error: expected a rank below the job's 2 GPUs, got 2");
	expect_error("\"stragglers\": [ { \"ranks\": [1], \"slowdown\": 2 }, { \"slowdown\": 1.1 } ]", 2,
		     "/simulation/stragglers/1: error: names no rank: give ranks or fraction");
}

Test(stragglers, rejects_too_many_groups_and_none)
{
	char s[2048] = "\"stragglers\": [ ";
	for (int i = 0; i < 9; i++)
		strcat(s, i ? ", { \"fraction\": 1, \"slowdown\": 1.01 }" : "{ \"fraction\": 1, \"slowdown\": 1.01 }");
	strcat(s, " ]");
	expect_error(s, 2, "/simulation/stragglers: error: expected 1 to 8 groups, got 9 (leave "
		     "stragglers out for none)");
	expect_error("\"stragglers\": []", 2, "/simulation/stragglers: error: expected 1 to 8 groups, "
		     "got 0 (leave stragglers out for none)");
}

Test(stragglers, iterations_need_one_drawn_group)
{
	struct plan p = load_plan("\"iterations\": 3, \"stragglers\": [ { \"ranks\": [5], \"slowdown\": 1.25 },"
				  " { \"fraction\": 1, \"distribution\": \"lognormal\", \"sigma\": 0.03 } ]");
	cr_expect(plan_stragglers_drawn(&p));
	expect_error("\"iterations\": 3, \"stragglers\": [ { \"ranks\": [1], \"slowdown\": 1.25 },"
		     " { \"fraction\": 1, \"slowdown\": 1.1 } ]", 2,
		     "/simulation/iterations: error: samples straggler draws: needs stragglers with "
		     "distribution \"normal\", \"lognormal\" or \"empirical\" (every iteration would be the "
		     "same), got 3 iterations");
}
