/* test-whatif: stragglers and degraded links through the scenario path.
 * On the star of tests/data/topo-star-v100.json (P one-GPU nodes, NIC
 * bandwidth B, path latency alpha), ResNet-50's N gradient bytes in one
 * bucket reduced by a ring over the nodes ("hierarchical": the fabric's
 * closed form):
 *   ring all-reduce:                2(P-1) alpha + 2(P-1)/P N / B
 *   with one NIC at half bandwidth: 2(P-1) alpha + 2(P-1)/P N / (B / 2)
 * (every ring edge carries the same bytes, so the slowest edge paces the
 * ring). A fixed straggler's compute takes its factor, it is the critical
 * rank, and the sampled iterations are a reproducible distribution. Bad
 * input names the key and says what is wrong. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "diag.h"
#include "engine.h"
#include "model.h"
#include "program.h"
#include "scenario.h"
#include "simulate.h"
#include "testutil.h"
#include "whatif.h"

#define P 8
#define NIC_BPS (100e9 / 8)

/* A test takes 3 s at most under a sanitizer: one that hangs fails by
 * name here, not as the whole suite at meson's 600 s. */
TestSuite(whatif, .timeout = 120);

static double g_alpha, g_n;  /* path latency, gradient bytes */

static void run_star(const char *simulation, struct result *r)
{
	char *dir = tmp_dir(), text[4096];
	snprintf(text, sizeof(text),
		 "{ \"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\", \"model\": \"%s\","
		 " \"topology\": \"%s\", \"nodes\": %d, \"simulation\": { %s },"
		 " \"training\": { \"global_batch\": %d, \"micro_batch\": 32, \"precision\": \"fp32\" },"
		 " \"communication\": { \"algorithm\": \"hierarchical\", \"bucket_MB\": 1000 } }\n",
		 src_path("models/zoo/resnet50.json"), src_path("tests/data/topo-star-v100.json"), P,
		 simulation, 32 * P);
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

/* ResNet-50's fp32 gradient bytes. */
static double grad_bytes(const struct result *r)
{
	(void)r;
	return g_n;
}

Test(whatif, ring_with_one_nic_halved_matches_the_closed_form)
{
	struct result r;
	run_star("\"degraded_links\": [ { \"link\": \"nic3_0\", \"bw_factor\": 0.5 } ]", &r);
	double n = grad_bytes(&r);
	double want = 2.0 * (P - 1) * g_alpha + 2.0 * (P - 1) / P * n / (NIC_BPS / 2);
	for (int k = 0; k < P; k++) {
		double got = r.eng->rank[k].comm_s[CAT_DP_COMM];
		cr_expect_float_eq(got, want, 1e-6 * want, "rank %d: %.9g s, closed form %.9g s", k, got, want);
	}
	/* folded but for the replicas whose traffic crosses the NIC: node 3's
	 * and node 2's, the ring predecessor sending into it (fold.c) */
	cr_expect(r.folded);
	cr_expect_eq(r.eng->nsimulated, 3);
	result_finish(&r);
}

Test(whatif, sensitivity_ranks_the_degraded_links)
{
	struct result r;
	run_star("\"sensitivity\": true, \"degraded_links\": [ { \"link\": \"nic1_0\", \"bw_factor\": 0.8 },"
		 " { \"link\": \"nic6_0\", \"bw_factor\": 0.25 } ]", &r);
	double n = grad_bytes(&r), ring = 2.0 * (P - 1) / P * n;
	cr_expect_eq(r.nsens, 2);
	/* one bucket after backward: the iteration grows by the ring's extra time */
	cr_expect_float_eq(r.sens_iteration_s[0] - r.sens_baseline_s, ring / (0.8 * NIC_BPS) - ring / NIC_BPS,
			   1e-6 * r.sens_baseline_s);
	cr_expect_float_eq(r.sens_iteration_s[1] - r.sens_baseline_s, ring / (0.25 * NIC_BPS) - ring / NIC_BPS,
			   1e-6 * r.sens_baseline_s);
	/* both together: the slowest paces the ring */
	cr_expect_float_eq(r.iteration_s, r.sens_iteration_s[1], 1e-9 * r.iteration_s);
	result_finish(&r);
}

Test(whatif, fixed_straggler_is_the_critical_rank)
{
	struct result r;
	run_star("\"stragglers\": { \"ranks\": [5], \"slowdown\": 1.5 }", &r);
	double c5 = 0, c0 = 0;
	for (int k = 0; k < CAT_N; k++) {
		c5 += r.eng->rank[5].compute_s[k];
		c0 += r.eng->rank[0].compute_s[k];
	}
	cr_expect_float_eq(c5, 1.5 * c0, 1e-9 * c5, "straggler %.9g s vs others %.9g s", c5, c0);
	cr_expect_eq(r.iterations, 1);
	cr_expect_eq(r.ncritical, 1);
	cr_expect_eq(r.critical_rank[0], 5);
	/* everyone waits for it: the iteration is its compute plus the ring */
	double ring = 2.0 * (P - 1) * g_alpha + 2.0 * (P - 1) / P * grad_bytes(&r) / NIC_BPS;
	cr_expect_float_eq(r.iteration_s, c5 + ring, 1e-6 * r.iteration_s, "%.9g vs %.9g + %.9g",
			   r.iteration_s, c5, ring);
	result_finish(&r);
}

Test(whatif, sampled_iterations_are_reproducible_percentiles)
{
	struct result r;
	run_star("\"iterations\": 30, \"stragglers\": { \"fraction\": 1, \"distribution\": \"lognormal\","
		 " \"sigma\": 0.1, \"seed\": 42 }", &r);
	cr_expect_eq(r.iterations, 30);
	cr_expect_leq(r.iter_min_s, r.iter_p50_s);
	cr_expect_leq(r.iter_p50_s, r.iter_p95_s);
	cr_expect_leq(r.iter_p95_s, r.iter_p99_s);
	cr_expect_leq(r.iter_p99_s, r.iter_max_s);
	cr_expect_gt(r.iter_max_s, r.iter_min_s);
	int total = 0;
	for (int i = 0; i < r.ncritical; i++)
		total += r.critical_count[i];
	cr_expect_leq(total, 30);
	/* the factors are a function of (seed, iteration, rank) */
	struct plan pl = r.plan;
	double a[P], b[P];
	plan_straggler_factors(&pl, P, 7, a);
	plan_straggler_factors(&pl, P, 7, b);
	for (int i = 0; i < P; i++)
		cr_expect_eq(a[i], b[i]);
	/* log-normal with sigma 0.1 around 1: the mean of many draws of log f is 0 */
	double s = 0, s2 = 0;
	int cnt = 0;
	for (int it = 0; it < 200; it++) {
		plan_straggler_factors(&pl, P, it, a);
		for (int i = 0; i < P; i++, cnt++) {
			s += log(a[i]);
			s2 += log(a[i]) * log(a[i]);
		}
	}
	double mean = s / cnt, sd = sqrt(s2 / cnt - mean * mean);
	cr_expect_lt(fabs(mean), 4 * 0.1 / sqrt(cnt), "mean of log f %g", mean);
	cr_expect_lt(fabs(sd - 0.1), 0.01, "sd of log f %g", sd);
	result_finish(&r);
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

Test(whatif, rejects_an_unknown_link)
{
	expect_error("\"degraded_links\": [ { \"link\": \"nic9_0\", \"bw_factor\": 0.5 } ]", 2,
		     "/simulation/degraded_links/0/link: error: no link 'nic9_0' in the platform of 2 "
		     "nodes of topology 'V100 server, 1 GPU per node, EDR InfiniBand' (names as "
		     "fabric/platform.c: gl<gpu>, nic<node>_<nic>, lu<leaf>, podup<pod>, psnic<server>, ...)");
}

Test(whatif, rejects_a_zero_bandwidth_factor)
{
	expect_error("\"degraded_links\": [ { \"link\": \"nic1_0\", \"bw_factor\": 0 } ]", 2,
		     "/simulation/degraded_links/0/bw_factor: error: must be > 0, got 0");
}

Test(whatif, rejects_a_straggler_outside_the_job)
{
	expect_error("\"stragglers\": { \"ranks\": [0, 2], \"slowdown\": 2 }", 2,
		     "/simulation/stragglers/ranks/1: error: expected a rank below the job's 2 GPUs, got 2");
}

Test(whatif, rejects_ranks_and_fraction_together)
{
	expect_error("\"stragglers\": { \"ranks\": [1], \"fraction\": 0.5 }", 2,
		     "/simulation/stragglers: error: give ranks or fraction, not both");
}

Test(whatif, rejects_iterations_without_draws)
{
	expect_error("\"iterations\": 10, \"stragglers\": { \"ranks\": [1], \"slowdown\": 2 }", 2,
		     "/simulation/iterations: error: samples straggler draws: needs stragglers with "
		     "distribution \"normal\", \"lognormal\" or \"empirical\" (every iteration would be the "
		     "same), got 10 "
		     "iterations");
}

Test(whatif, rejects_sensitivity_without_links)
{
	expect_error("\"sensitivity\": true", 2,
		     "/simulation/sensitivity: error: needs degraded_links to measure");
}

Test(whatif, rejects_exact_folding_with_a_straggler_or_a_degraded_link)
{
	const char *want = "/simulation/fold: error: stragglers and degraded links make their "
			   "replicas differ, which exact folding does not fold: use \"auto\" or \"on\" "
			   "(the others folded, those replicas simulated whole)";
	expect_error("\"fold\": \"exact\", \"stragglers\": { \"ranks\": [1], \"slowdown\": 2 }", 2, want);
	expect_error("\"fold\": \"exact\", \"degraded_links\": [ { \"link\": \"nic1_0\", \"bw_factor\": 0.5 } ]",
		     2, want);
}
