/* test-mixed: mixed GPUs (node_groups), throttling windows, empirical
 * straggler samples and sweeps over what-if keys, through the scenario
 * path.
 *
 * Two GPU presets written here: "fast", and "slow" with every peak and
 * the HBM bandwidth halved; both with no kernel launch cost, so that the
 * roofline (models/cost_roofline.c: max(FLOPs / (peak eff), bytes / (bw
 * eff)) + launch, the efficiencies a function of the work only) prices
 * every kernel exactly twice as long on "slow". Closed forms:
 *   GPipe, 2 stages, stage 1 on slow (the slower stage), m micro-batches,
 *   links of no latency and unbounded bandwidth: stage 1 computes back to
 *   back from the first activation on, so
 *     iteration = F0 + m (F1 + B1) + max(B0 + O0, O1)
 *   (Fs, Bs: stage s's forward and backward of one micro-batch, Os its
 *   optimizer step: stage 0's after its last backward, stage 1's right
 *   after its own);
 *   data parallelism over P one-GPU nodes, half of them slow, one bucket
 *   reduced after backward: every rank waits for the slow replicas, so
 *     iteration = C_slow + ring,  C_slow = 2 C_fast
 *   (C: a rank's compute, optimizer included; ring as in test-whatif.c);
 *   a throttling window [a, a + d) of factor f inside a rank's compute
 *   adds d (1 - 1/f) to it (work runs at 1/f inside the window);
 *   energy (models/economics.h) sums over the groups: each group's GPUs
 *   x (idle + busy (limit - idle)), busy its ranks' mean compute over the
 *   iteration, limit its TDP or cap, plus nodes x the topology node's
 *   overhead, x PUE x time;
 *   a power limit on one group ("cap", HBM so fast that every kernel is
 *   compute-bound) stretches that group's compute by 1 / its clock
 *   ratio and leaves the other group's as it was;
 *   compute beside a collective slows by its own GPU's figures
 *   (engine.h, interference): a group whose GPU has a clock ratio r
 *   beside collectives pays 1 / r on its compute-bound share while the
 *   topology's GPU's group does not (the closed form per rank is
 *   test-engine.c's interference_by_each_rank_s_own_gpu).
 * One simulation per test (SimGrid runs once per process). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assess.h"
#include "diag.h"
#include "engine.h"
#include "model.h"
#include "program.h"
#include "scenario.h"
#include "simulate.h"
#include "sweep.h"
#include "testutil.h"
#include "whatif.h"

#define P 8
#define NIC_BPS (100e9 / 8)

/* A GPU preset: V100-like, peaks and HBM bandwidth divided by div, TDP
 * 300 / div W, idle 30 / div W. */
static char *write_gpu(const char *dir, const char *name, double div, double hbm_GB)
{
	char text[2048], file[64];
	snprintf(text, sizeof(text),
		 "{ \"schema\": \"ddlsim.gpu\", \"schema_version\": \"1.0\", \"name\": \"%s\","
		 " \"peak_tflops\": { \"fp32\": %.17g, \"fp16\": %.17g, \"bf16\": %.17g },"
		 " \"hbm_GB\": %g, \"hbm_bw_GBps\": %.17g, \"sm_count\": 80, \"memory_reserved_GB\": 1.0,"
		 " \"efficiency\": { \"gemm_max\": 0.8, \"gemm_half_GFLOP\": 0.1, \"attention_max\": 0.5,"
		 " \"mem_max\": 0.85, \"mem_half_MB\": 0.9, \"kernel_launch_us\": 0, \"gemm_tile\": [128, 128] },"
		 " \"power\": { \"tdp_W\": %.17g, \"idle_W\": %.17g, \"source\": \"test fixture\" },"
		 " \"sources\": { \"name\": \"test fixture\" } }\n",
		 name, 15.7 / div, 125 / div, 125 / div, hbm_GB, 900 / div, 300 / div, 30 / div);
	snprintf(file, sizeof(file), "%s.json", name);
	return write_file(dir, file, text);
}

/* "fastr": "fast" whose compute-bound kernels run at clock ratio r
 * beside a collective (schema 1.1: comm_overlap_clock_ratio); with
 * r = 1, "fast" under another name. */
static char *write_ratio_gpu(const char *dir, double r)
{
	char text[2048];
	snprintf(text, sizeof(text),
		 "{ \"schema\": \"ddlsim.gpu\", \"schema_version\": \"1.1\", \"name\": \"fastr\","
		 " \"peak_tflops\": { \"fp32\": 15.7, \"fp16\": 125, \"bf16\": 125 },"
		 " \"hbm_GB\": 32, \"hbm_bw_GBps\": 900, \"sm_count\": 80, \"memory_reserved_GB\": 1.0,"
		 " \"efficiency\": { \"gemm_max\": 0.8, \"gemm_half_GFLOP\": 0.1, \"attention_max\": 0.5,"
		 " \"mem_max\": 0.85, \"mem_half_MB\": 0.9, \"kernel_launch_us\": 0, \"gemm_tile\": [128, 128],"
		 " \"comm_overlap_clock_ratio\": %.17g },"
		 " \"power\": { \"tdp_W\": 300, \"idle_W\": 30, \"source\": \"test fixture\" },"
		 " \"sources\": { \"name\": \"test fixture\" } }\n", r);
	return write_file(dir, "fastr.json", text);
}

/* "cap": "fast"'s peaks with HBM 10^4 times faster (every kernel
 * compute-bound), TDP 300 W, idle 30 W, a clock table 0.5 at 100 W to 1
 * at 300 W (so 0.75 at a 200 W limit), no limit of its own (schema 1.1:
 * the table's keys). */
static char *write_cap_gpu(const char *dir)
{
	char text[2048];
	snprintf(text, sizeof(text),
		 "{ \"schema\": \"ddlsim.gpu\", \"schema_version\": \"1.1\", \"name\": \"cap\","
		 " \"peak_tflops\": { \"fp32\": 15.7, \"fp16\": 125, \"bf16\": 125 },"
		 " \"hbm_GB\": 32, \"hbm_bw_GBps\": 9e6, \"sm_count\": 80, \"memory_reserved_GB\": 1.0,"
		 " \"efficiency\": { \"gemm_max\": 0.8, \"gemm_half_GFLOP\": 0.1, \"attention_max\": 0.5,"
		 " \"mem_max\": 0.85, \"kernel_launch_us\": 0, \"gemm_tile\": [128, 128] },"
		 " \"power\": { \"tdp_W\": 300, \"idle_W\": 30, \"source\": \"test fixture\","
		 " \"cap_clock_ratio\": [[100, 0.5], [300, 1]], \"cap_source\": \"test fixture\" },"
		 " \"sources\": { \"name\": \"test fixture\" } }\n");
	return write_file(dir, "cap.json", text);
}

/* A star of one-GPU nodes; ideal: no latency, unbounded links. */
static char *write_star(const char *dir, bool ideal)
{
	char text[2048];
	snprintf(text, sizeof(text),
		 "{ \"schema\": \"ddlsim.topology\", \"schema_version\": \"1.4\", \"name\": \"star\","
		 " \"source\": \"test fixture\", \"gpu\": \"fast.json\","
		 " \"node\": { \"gpus\": 1, \"intra\": { \"kind\": \"pcie\", \"bw_GBps\": 1000, \"latency_us\": %s },"
		 " \"power_max_W\": 500,"
		 " \"nics\": { \"count\": 1, \"bw_Gbps\": %s, \"latency_us\": %s } },"
		 " \"fabric\": { \"kind\": \"nonblocking\", \"latency_us\": %s } }\n",
		 ideal ? "0" : "1.0", ideal ? "1e9" : "100", ideal ? "0" : "1.0", ideal ? "0" : "0.5");
	return write_file(dir, "star.json", text);
}

struct run {
	char *dir;
	struct scenario *sc;
	struct result r;
};

/* Load body (the scenario's keys after schema, model and topology) and
 * simulate it. */
static void run(struct run *x, const char *model, bool ideal, double slow_hbm_GB, const char *body)
{
	char text[4096];
	x->dir = tmp_dir();
	free(write_gpu(x->dir, "fast", 1, 32));
	free(write_gpu(x->dir, "slow", 2, slow_hbm_GB));
	free(write_star(x->dir, ideal));
	snprintf(text, sizeof(text),
		 "{ \"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.2\", \"model\": \"%s\","
		 " \"topology\": \"star.json\", %s }\n", src_path(model), body);
	char *path = write_file(x->dir, "s.json", text);
	struct diag d;
	diag_init(&d, stderr);
	x->sc = scenario_load(path, &d);
	cr_assert(x->sc, "%s", diag_text(&d));
	if (whatif_side_runs(&x->sc->plan) > 0)  /* forked in this process (testutil.h) */
		SKIP_UNLESS_FORK_IS_SAFE();
	cr_assert_eq(simulate_run(x->sc->in, &x->sc->plan, &x->r, &d), 0, "%s", diag_text(&d));
	diag_finish(&d);
	free(path);
}

/* ResNet-50 data parallelism on the star, 4 nodes of "fast" (the
 * topology's GPU) and 4 of "fastr" at clock ratio r, 5 MB buckets whose
 * all-reduces overlap the backward pass. */
static void run_ratio(struct run *x, double r)
{
	char body[2048];
	snprintf(body, sizeof(body),
		 "\"node_groups\": [ { \"nodes\": %d, \"gpu\": \"fast.json\" }, { \"nodes\": %d, \"gpu\": \"fastr.json\" } ],"
		 " \"training\": { \"global_batch\": %d, \"micro_batch\": 32, \"precision\": \"fp32\" },"
		 " \"communication\": { \"algorithm\": \"ring\", \"bucket_MB\": 5 }",
		 P / 2, P / 2, 32 * P);
	char text[4096];
	x->dir = tmp_dir();
	free(write_gpu(x->dir, "fast", 1, 32));
	free(write_ratio_gpu(x->dir, r));
	free(write_star(x->dir, false));
	snprintf(text, sizeof(text),
		 "{ \"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.2\", \"model\": \"%s\","
		 " \"topology\": \"star.json\", %s }\n", src_path("models/zoo/resnet50.json"), body);
	char *path = write_file(x->dir, "s.json", text);
	struct diag d;
	diag_init(&d, stderr);
	x->sc = scenario_load(path, &d);
	cr_assert(x->sc, "%s", diag_text(&d));
	cr_assert_eq(simulate_run(x->sc->in, &x->sc->plan, &x->r, &d), 0, "%s", diag_text(&d));
	diag_finish(&d);
	free(path);
}

static void run_finish(struct run *x)
{
	result_finish(&x->r);
	scenario_destroy(x->sc);
	free(x->dir);
}

static double compute_of(const struct result *r, int rank, int from, int to)
{
	double c = 0;
	for (int k = from; k <= to; k++)
		c += r->eng->rank[rank].compute_s[k];
	return c;
}

/* ResNet-50 data parallelism on the star, one bucket after backward. */
static const char *dp_body(char *buf, size_t n, const char *extra)
{
	snprintf(buf, n,
		 "\"node_groups\": [ { \"nodes\": %d, \"gpu\": \"fast.json\" }, { \"nodes\": %d, \"gpu\": \"slow.json\" } ],"
		 " \"training\": { \"global_batch\": %d, \"micro_batch\": 32, \"precision\": \"fp32\" },"
		 " \"communication\": { \"algorithm\": \"hierarchical\", \"bucket_MB\": 1000 }%s",
		 P / 2, P / 2, 32 * P, extra);
	return buf;
}

Test(mixed, two_stage_pipeline_with_a_half_speed_stage_matches_the_closed_form)
{
	struct run x;
	run(&x, "models/zoo/llama2-7b.json", true, 32,
	    "\"node_groups\": [ { \"nodes\": 1, \"gpu\": \"fast.json\" }, { \"nodes\": 1, \"gpu\": \"slow.json\" } ],"
	    " \"parallel\": { \"pp\": 2, \"schedule\": \"gpipe\" },"
	    " \"training\": { \"seq_len\": 512, \"global_batch\": 8, \"micro_batch\": 1, \"precision\": \"bf16\","
	    " \"attention\": \"unfused\" }");
	const struct result *r = &x.r;
	int m = 8;
	/* stage 1 priced on slow: exactly twice its price on fast (the topology's GPU) */
	struct program p;
	struct stage_result sr;
	program_init(&p);
	cr_assert_eq(simulate_build_program(x.sc->in, &x.sc->plan, 1, &p, &sr), 0);
	cr_expect_float_eq(r->stage[1].compute_fwd_s, 2 * sr.compute_fwd_s, 1e-12 * sr.compute_fwd_s);
	cr_expect_float_eq(r->stage[1].compute_bwd_s, 2 * sr.compute_bwd_s, 1e-12 * sr.compute_bwd_s);
	program_finish(&p);
	double f0 = compute_of(r, 0, CAT_FORWARD, CAT_FORWARD) / m;
	double b0 = compute_of(r, 0, CAT_BACKWARD, CAT_BACKWARD) / m;
	double o0 = compute_of(r, 0, CAT_OPTIMIZER, CAT_OPTIMIZER);
	double t1 = compute_of(r, 1, CAT_FORWARD, CAT_BACKWARD) / m;
	cr_assert_gt(t1, f0 + b0, "stage 1 must be the slower one");
	double o1 = compute_of(r, 1, CAT_OPTIMIZER, CAT_OPTIMIZER);
	double want = f0 + m * t1 + fmax(b0 + o0, o1);
	cr_expect_float_eq(r->iteration_s, want, 1e-6 * want, "%.9g s, closed form %.9g s", r->iteration_s, want);
	cr_expect_not(r->folded);
	cr_expect_eq(r->ngroups, 2);
	cr_expect_str_eq(r->group[1].gpu, "slow");
	cr_expect_eq(r->group[1].stage_lo, 1);
	cr_expect_eq(r->group[1].stage_hi, 1);
	run_finish(&x);
}

Test(mixed, data_parallelism_runs_at_the_slow_replicas_pace)
{
	struct run x;
	char body[2048];
	run(&x, "models/zoo/resnet50.json", false, 32, dp_body(body, sizeof(body), ""));
	const struct result *r = &x.r;
	double cf = compute_of(r, 0, 0, CAT_N - 1), cs = compute_of(r, P - 1, 0, CAT_N - 1);
	cr_expect_float_eq(cs, 2 * cf, 1e-9 * cs, "slow %.9g s, fast %.9g s", cs, cf);
	const struct topology *t = inputs_topology(x.sc->in);
	double alpha = topology_path_latency(t, 0, 1);
	double n = model_params(inputs_model(x.sc->in)) * 4;
	double ring = 2.0 * (P - 1) * alpha + 2.0 * (P - 1) / P * n / NIC_BPS;
	cr_expect_float_eq(r->iteration_s, cs + ring, 1e-6 * r->iteration_s, "%.9g vs %.9g + %.9g",
			   r->iteration_s, cs, ring);
	cr_expect_float_eq(r->group[0].compute_s, cf, 1e-9 * cf);
	cr_expect_float_eq(r->group[1].compute_s, cs, 1e-9 * cs);
	/* the mean peak of the job's GPUs */
	cr_expect_float_eq(r->peak_flops_per_gpu, 0.75 * 15.7e12, 1e-9 * 15.7e12);
	run_finish(&x);
}

/* A group whose GPU slows its compute-bound kernels to r = 0.5 beside a
 * collective: its ranks' compute beside the bucket all-reduces slows by
 * their own f (about twice the other's, engine.h), the topology's GPU's
 * group's by the SM model alone; alone, both groups' compute is the
 * same. */
Test(mixed, compute_beside_a_collective_slows_by_its_own_gpu)
{
	struct run x;
	run_ratio(&x, 0.5);
	const struct result *r = &x.r;
	double i0 = r->eng->rank[0].interference_s, i7 = r->eng->rank[P - 1].interference_s;
	cr_assert_gt(i0, 0, "the buckets' all-reduces must overlap the backward pass");
	double c0 = compute_of(r, 0, 0, CAT_N - 1) - i0, c7 = compute_of(r, P - 1, 0, CAT_N - 1) - i7;
	cr_expect_float_eq(c7, c0, 1e-9 * c0, "alone: %.12g vs %.12g", c7, c0);
	/* f0 = W(C) + m SMs / (SMs - C) B / ..., f7 = W(C) / 0.5 + the same:
	 * f7 - 1 > 2 (f0 - 1) + 1 - m, so the slowed share far larger */
	cr_expect_gt(i7, 3 * i0, "ratio group %.9g s, topology GPU's %.9g s", i7, i0);
	run_finish(&x);
}

/* The same preset at ratio 1 under another name: a group of its own,
 * priced on its own, and the same as the topology's GPU to the bit. */
Test(mixed, a_group_on_a_copy_of_the_topology_gpu_interferes_alike)
{
	struct run x;
	run_ratio(&x, 1);
	const struct result *r = &x.r;
	double i0 = r->eng->rank[0].interference_s, i7 = r->eng->rank[P - 1].interference_s;
	cr_assert_gt(i0, 0);
	cr_expect_float_eq(i7, i0, 1e-12 * i0, "%.17g vs %.17g", i7, i0);
	run_finish(&x);
}

Test(mixed, fast_first_numbers_the_fast_group_first)
{
	struct run x;
	run(&x, "models/zoo/resnet50.json", false, 32,
	    "\"node_order\": \"fast_first\","
	    " \"node_groups\": [ { \"nodes\": 3, \"gpu\": \"slow.json\" }, { \"nodes\": 5, \"gpu\": \"fast.json\" } ],"
	    " \"training\": { \"global_batch\": 256, \"micro_batch\": 32, \"precision\": \"fp32\" },"
	    " \"communication\": { \"algorithm\": \"hierarchical\", \"bucket_MB\": 1000 }");
	const struct result *r = &x.r;
	cr_expect_eq(r->group_index[0], 1);
	cr_expect_str_eq(r->group[0].gpu, "fast");
	cr_expect_eq(r->group[0].first_rank, 0);
	cr_expect_eq(r->group[0].ranks, 5);
	cr_expect_eq(r->group[1].first_node, 5);
	double c0 = compute_of(r, 0, 0, CAT_N - 1), c7 = compute_of(r, 7, 0, CAT_N - 1);
	cr_expect_float_eq(c7, 2 * c0, 1e-9 * c7);
	run_finish(&x);
}

Test(mixed, memory_is_checked_against_each_gpus_own_hbm)
{
	struct run x;
	char body[2048];
	/* the slow GPU has 2 GB: ResNet-50 at 32 images in fp32 does not fit */
	run(&x, "models/zoo/resnet50.json", false, 2, dp_body(body, sizeof(body), ""));
	const struct result *r = &x.r;
	cr_expect(r->group[0].fits);
	cr_expect_not(r->group[1].fits);
	cr_expect_float_eq(r->group[1].capacity_bytes, 2e9, 1);
	cr_expect_float_eq(r->group[0].capacity_bytes, 32e9, 1);
	cr_expect_not(r->fits);
	cr_expect_float_eq(r->stage[0].mem.capacity_bytes, 2e9, 1);
	cr_expect_float_eq(r->shortfall_bytes, r->stage[0].mem.total_bytes - 2e9, 1);
	run_finish(&x);
}

Test(mixed, throttling_window_adds_its_closed_form)
{
	struct run x;
	char body[2048];
	/* rank 0 (fast; the slow replicas pace the step) throttled 2x for 20 ms
	 * from 10 ms, and rank 7 (slow) 3x for 5 ms from 50 ms */
	run(&x, "models/zoo/resnet50.json", false, 32,
	    dp_body(body, sizeof(body),
		    ", \"simulation\": { \"throttle\": [ { \"ranks\": [0], \"start_s\": 0.01, \"duration_s\": 0.02,"
		    " \"factor\": 2 }, { \"nodes\": [7], \"start_s\": 0.05, \"duration_s\": 0.005, \"factor\": 3 } ] }"));
	const struct result *r = &x.r;
	double c0 = compute_of(r, 0, 0, CAT_N - 1), c1 = compute_of(r, 1, 0, CAT_N - 1);
	double c6 = compute_of(r, 6, 0, CAT_N - 1), c7 = compute_of(r, 7, 0, CAT_N - 1);
	cr_assert_gt(c1, 0.03, "the window must lie inside the compute");
	cr_expect_float_eq(c0, c1 + 0.02 * (1 - 1 / 2.0), 1e-9 * c0, "%.9g vs %.9g", c0, c1);
	cr_expect_float_eq(c7, c6 + 0.005 * (1 - 1 / 3.0), 1e-9 * c7, "%.9g vs %.9g", c7, c6);
	cr_expect_float_eq(r->throttle_s, 0.01 + 0.005 * 2 / 3.0, 1e-9);
	const struct topology *t = inputs_topology(x.sc->in);
	double n = model_params(inputs_model(x.sc->in)) * 4;
	double ring = 2.0 * (P - 1) * topology_path_latency(t, 0, 1) + 2.0 * (P - 1) / P * n / NIC_BPS;
	cr_expect_float_eq(r->iteration_s, c7 + ring, 1e-6 * r->iteration_s);
	/* folded by classes of GPUs: the throttled replicas 0 and 7 whole,
	 * replica 1 for the fast class, 4 for the slow (test-mixfold.c) */
	cr_expect(r->folded);
	cr_expect_eq(r->eng->nsimulated, 4);
	run_finish(&x);
}

Test(mixed, throttling_every_rank_on_one_gpu)
{
	struct run x;
	/* one node, no communication: the iteration is the compute, a window
	 * straddling task edges priced piecewise */
	run(&x, "models/zoo/resnet50.json", false, 32,
	    "\"nodes\": 1, \"training\": { \"global_batch\": 32, \"micro_batch\": 32, \"precision\": \"fp32\" },"
	    " \"simulation\": { \"throttle\": [ { \"start_s\": 0.0123, \"duration_s\": 0.0311, \"factor\": 1.7 } ] }");
	const struct result *r = &x.r;
	double c = r->stage[0].compute_fwd_s + r->stage[0].compute_bwd_s;
	double opt = compute_of(r, 0, CAT_OPTIMIZER, CAT_OPTIMIZER);
	cr_assert_gt(c, 0.0123 + 0.0311);
	double want = c + opt + 0.0311 * (1 - 1 / 1.7);
	cr_expect_float_eq(r->iteration_s, want, 1e-9 * want, "%.12g vs %.12g", r->iteration_s, want);
	run_finish(&x);
}

Test(mixed, empirical_with_one_sample_equals_fixed)
{
	struct run x;
	run(&x, "models/zoo/resnet50.json", false, 32,
	    "\"nodes\": 8, \"training\": { \"global_batch\": 256, \"micro_batch\": 32, \"precision\": \"fp32\" },"
	    " \"communication\": { \"algorithm\": \"hierarchical\", \"bucket_MB\": 1000 },"
	    " \"simulation\": { \"stragglers\": { \"ranks\": [5], \"distribution\": \"empirical\", \"samples\": [1.5] } }");
	const struct result *r = &x.r;
	double c5 = compute_of(r, 5, 0, CAT_N - 1), c0 = compute_of(r, 0, 0, CAT_N - 1);
	cr_expect_float_eq(c5, 1.5 * c0, 1e-9 * c5);
	cr_expect_eq(r->critical_rank[0], 5);
	run_finish(&x);
}

Test(mixed, empirical_draws_come_from_the_samples)
{
	struct plan p;
	plan_init(&p);
	struct plan_straggler_group *g = &p.simulation.stragglers.group[0];
	p.simulation.stragglers.ngroups = 1;
	g->fraction = 1;
	g->slowdown = 1;
	g->seed = 1;
	g->dist = STRAG_EMPIRICAL;
	g->nsamples = p.simulation.stragglers.nsample = 3;
	p.simulation.stragglers.samples[0] = 1.1, p.simulation.stragglers.samples[1] = 1.3,
	p.simulation.stragglers.samples[2] = 2.0;
	double f[64];
	int seen[3] = { 0 };
	for (int it = 0; it < 20; it++) {
		plan_straggler_factors(&p, 64, it, f);
		for (int q = 0; q < 64; q++) {
			int k = f[q] == 1.1 ? 0 : f[q] == 1.3 ? 1 : f[q] == 2.0 ? 2 : -1;
			cr_assert_geq(k, 0, "rank %d drew %g", q, f[q]);
			seen[k]++;
		}
	}
	/* 1280 uniform draws: each sample about a third */
	for (int k = 0; k < 3; k++)
		cr_expect(seen[k] > 380 && seen[k] < 480, "sample %d drawn %d times", k, seen[k]);
}

Test(mixed, sweep_over_slowdown_is_monotone)
{
	char *dir = tmp_dir(), text[4096], args[2048];
	snprintf(text, sizeof(text),
		 "{ \"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\", \"model\": \"%s\","
		 " \"topology\": \"%s\", \"nodes\": 4, \"training\": { \"global_batch\": 128, \"micro_batch\": 32,"
		 " \"precision\": \"fp32\" }, \"simulation\": { \"stragglers\": { \"ranks\": [2], \"slowdown\": 1 },"
		 " \"degraded_links\": [ { \"link\": \"nic1_0\", \"bw_factor\": 1 } ] } }\n",
		 src_path("models/zoo/resnet50.json"), src_path("tests/data/topo-star-v100.json"));
	free(write_file(dir, "base.json", text));
	snprintf(text, sizeof(text),
		 "{ \"schema\": \"ddlsim.sweep\", \"schema_version\": \"1.0\", \"name\": \"s\", \"base\": \"base.json\","
		 " \"axes\": { \"simulation.stragglers.slowdown\": [1, 1.25, 1.5, 2],"
		 " \"simulation.degraded_links.0.bw_factor\": [1, 0.25] } }\n");
	char *sw = write_file(dir, "sweep.json", text);
	snprintf(args, sizeof(args), "sweep '%s' --out '%s/o' --quiet", sw, dir);
	cr_assert_eq(run_ddlsim(args, NULL, NULL), 0);
	snprintf(text, sizeof(text), "%s/o/points.jsonl", dir);
	FILE *f = fopen(text, "r");
	cr_assert(f);
	double t[8] = { 0 };
	int n = 0;
	char line[65536];
	while (n < 8 && fgets(line, sizeof(line), f)) {
		json_t *o = json_loads(line, 0, NULL);
		cr_assert(o, "%s", line);
		json_t *it = json_object_get(json_object_get(o, "summary"), "iteration_time_s");
		if (!it)
			it = json_object_get(o, "iteration_time_s");
		cr_assert(json_is_number(it), "%s", line);
		t[n++] = json_number_value(it);
		json_decref(o);
	}
	fclose(f);
	cr_assert_eq(n, 8);
	/* row-major: bw_factor varies fastest */
	for (int i = 1; i < 4; i++) {
		cr_expect_gt(t[2 * i], t[2 * (i - 1)], "slowdown step %d: %.9g <= %.9g", i, t[2 * i], t[2 * (i - 1)]);
		cr_expect_gt(t[2 * i + 1], t[2 * (i - 1) + 1]);
	}
	for (int i = 0; i < 4; i++)
		cr_expect_gt(t[2 * i + 1], t[2 * i], "a NIC at 1/4 must cost time");
	free(sw), free(dir);
}

/* A sweep's base is read at the scenario schema's own newest version:
 * a 1.2 base (node_groups[].power_cap_W: a sweep of each group's energy)
 * loads, a 1.3 one is refused as newer than 1.2. (Checked: with the
 * sweep's base read up to 1.0, as before, the 1.1 and 1.2 bases were
 * refused "newer than this ddlsim (reads up to 1.0)".) */
Test(mixed, a_sweep_reads_its_base_at_the_scenario_schema_s_version)
{
	static const char *const ver[] = { "1.1", "1.2", "1.3" };
	for (int v = 0; v < 3; v++) {
		char *dir = tmp_dir(), text[1024];
		snprintf(text, sizeof(text),
			 "{ \"schema\": \"ddlsim.scenario\", \"schema_version\": \"%s\", \"model\": \"m.json\","
			 " \"topology\": \"t.json\", \"nodes\": 1 }\n", ver[v]);
		free(write_file(dir, "base.json", text));
		char *sw = write_file(dir, "sweep.json",
				      "{ \"schema\": \"ddlsim.sweep\", \"schema_version\": \"1.0\", \"name\": \"s\","
				      " \"base\": \"base.json\", \"axes\": { \"nodes\": [1, 2] } }\n");
		struct diag dg;
		diag_init(&dg, NULL);
		struct sweep *s = sweep_load(sw, &dg);
		if (v < 2)
			cr_expect(s, "a %s base: %s", ver[v], diag_text(&dg));
		else {
			cr_expect_null(s, "a 1.3 base loaded");
			cr_expect(strstr(diag_text(&dg), "reads up to 1.2"), "%s", diag_text(&dg));
		}
		if (s)
			sweep_destroy(s);
		diag_finish(&dg);
		free(sw), free(dir);
	}
}

/* Exit 3 and exactly "path: want_tail" on stderr (a scenario of schema
 * version ver). */
static void expect_error_v(const char *ver, const char *body, const char *want_tail)
{
	char *dir = tmp_dir(), args[2048], *err = NULL, text[4096], want[4096];
	free(write_gpu(dir, "fast", 1, 32));
	free(write_gpu(dir, "slow", 2, 32));
	free(write_cap_gpu(dir));
	free(write_star(dir, false));
	snprintf(text, sizeof(text),
		 "{ \"schema\": \"ddlsim.scenario\", \"schema_version\": \"%s\", \"model\": \"%s\","
		 " \"topology\": \"star.json\", \"training\": { \"global_batch\": 64, \"micro_batch\": 32,"
		 " \"precision\": \"fp32\" }, %s }\n", ver, src_path("models/zoo/resnet50.json"), body);
	char *path = write_file(dir, "s.json", text);
	snprintf(args, sizeof(args), "run '%s' --out '%s/o' --quiet", path, dir);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3);
	snprintf(want, sizeof(want), "%s: %s\n", path, want_tail);
	cr_expect_str_eq(err, want);
	free(err), free(path), free(dir);
}

static void expect_error(const char *body, const char *want_tail)
{
	expect_error_v("1.0", body, want_tail);
}

Test(mixed, rejects_nodes_other_than_the_groups)
{
	expect_error("\"nodes\": 1, \"node_groups\": [ { \"nodes\": 1, \"gpu\": \"fast.json\" },"
		     " { \"nodes\": 1, \"gpu\": \"slow.json\" } ]",
		     "/nodes: error: must equal the node groups' 2 nodes, got 1");
}

Test(mixed, rejects_node_order_without_groups)
{
	expect_error("\"nodes\": 2, \"node_order\": \"fast_first\"",
		     "/node_order: error: orders node groups: needs node_groups");
}

Test(mixed, rejects_a_missing_gpu_preset)
{
	expect_error("\"node_groups\": [ { \"nodes\": 2, \"gpu\": \"/nonexistent/none.json\" } ]",
		     "/node_groups/0/gpu: error: cannot open '/nonexistent/none.json': No such file or directory");
}

Test(mixed, rejects_exact_folding_with_mixed_gpus)
{
	expect_error("\"simulation\": { \"fold\": \"exact\" }, \"node_groups\": [ { \"nodes\": 1, \"gpu\": \"fast.json\" },"
		     " { \"nodes\": 1, \"gpu\": \"slow.json\" } ]",
		     "/simulation/fold: error: node groups with different GPUs make ranks differ, which "
		     "exact folding does not fold: use \"auto\" or \"on\" (one replica simulated for "
		     "each class of GPUs)");
}

Test(mixed, rejects_a_throttle_factor_below_one)
{
	expect_error("\"nodes\": 2, \"simulation\": { \"throttle\": [ { \"ranks\": [1], \"start_s\": 0,"
		     " \"duration_s\": 1, \"factor\": 0.5 } ] }",
		     "/simulation/throttle/0/factor: error: expected a slowdown factor >= 1 (compute time x "
		     "factor), got 0.5");
}

Test(mixed, rejects_a_throttled_rank_outside_the_job)
{
	expect_error("\"nodes\": 2, \"simulation\": { \"throttle\": [ { \"ranks\": [0, 2], \"start_s\": 0,"
		     " \"duration_s\": 1, \"factor\": 2 } ] }",
		     "/simulation/throttle/0/ranks/1: error: expected a rank below the job's 2, got 2");
}

Test(mixed, rejects_empirical_without_samples)
{
	expect_error("\"nodes\": 2, \"simulation\": { \"stragglers\": { \"ranks\": [1], \"distribution\": \"empirical\" } }",
		     "/simulation/stragglers: error: distribution \"empirical\" needs samples or "
		     "samples_file (one of them)");
}

Test(mixed, rejects_samples_for_another_distribution)
{
	expect_error("\"nodes\": 2, \"simulation\": { \"stragglers\": { \"ranks\": [1], \"slowdown\": 2,"
		     " \"samples\": [1.5] } }",
		     "/simulation/stragglers/samples: error: applies to distribution \"empirical\" only, "
		     "got \"fixed\"");
}

/* libcsv reads the file: a quoted field may hold commas and line breaks,
 * and a message names the line its record starts on. */
Test(mixed, reports_the_line_of_a_bad_sample_after_a_quoted_field)
{
	char *dir = tmp_dir(), body[2048], want[2048];
	char *p = write_file(dir, "samples.csv", "slowdown\n\"1.5,\n2\"\n2 x\n");
	snprintf(body, sizeof(body),
		 "\"nodes\": 2, \"simulation\": { \"stragglers\": { \"ranks\": [1], \"distribution\": \"empirical\","
		 " \"samples_file\": \"%s\" } }", p);
	snprintf(want, sizeof(want), "/simulation/stragglers/samples_file: error: %s:4: expected a number, got 'x'", p);
	expect_error(body, want);
	free(p), free(dir);
}

Test(mixed, reads_samples_from_a_csv_file)
{
	char *dir = tmp_dir(), text[1024];
	free(write_file(dir, "samples.csv",
			"slowdown\n\"1.5,\n1.5\"\r\n# a comment, \"quoted\"\n1.5"));  /* no final line break */
	struct run x;
	x.dir = NULL;
	snprintf(text, sizeof(text),
		 "\"nodes\": 8, \"training\": { \"global_batch\": 256, \"micro_batch\": 32, \"precision\": \"fp32\" },"
		 " \"communication\": { \"algorithm\": \"hierarchical\", \"bucket_MB\": 1000 },"
		 " \"simulation\": { \"stragglers\": { \"ranks\": [5], \"distribution\": \"empirical\","
		 " \"samples_file\": \"%s/samples.csv\" } }", dir);
	run(&x, "models/zoo/resnet50.json", false, 32, text);
	double c5 = compute_of(&x.r, 5, 0, CAT_N - 1), c0 = compute_of(&x.r, 0, 0, CAT_N - 1);
	cr_expect_float_eq(c5, 1.5 * c0, 1e-9 * c5);
	cr_expect_eq(x.sc->plan.simulation.stragglers.group[0].nsamples, 3);
	run_finish(&x);
	free(dir);
}

/* Energy sums each node group's GPUs at their own power and busy share:
 * 4 "fast" (300 W TDP, 30 W idle) and 4 "slow" (150 W, 15 W) one-GPU
 * nodes of data parallelism; the fast ones wait for the slow ones, so
 * the slow group's busy share is twice the fast one's (C_slow = 2
 * C_fast); each node's overhead is the topology's 500 W node less its
 * GPU at the topology GPU's ("fast") 300 W TDP. */
Test(mixed, energy_sums_each_groups_gpus_at_their_own_power)
{
	struct run x;
	char body[2048];
	run(&x, "models/zoo/resnet50.json", false, 32, dp_body(body, sizeof(body), ""));
	const struct result *r = &x.r;
	double gb[PLAN_MAX_NODE_GROUPS];
	double mean = result_busy(r, gb);
	double it = r->iteration_s;
	double cf = compute_of(r, 0, CAT_FORWARD, CAT_OPTIMIZER);
	double cs = compute_of(r, P - 1, CAT_FORWARD, CAT_OPTIMIZER);
	cr_expect_float_eq(gb[0], cf / it, 1e-12, "fast busy %.9g vs %.9g", gb[0], cf / it);
	cr_expect_float_eq(gb[1], cs / it, 1e-12, "slow busy %.9g vs %.9g", gb[1], cs / it);
	cr_expect_float_eq(gb[1], 2 * gb[0], 1e-9, "slow %.9g, fast %.9g", gb[1], gb[0]);
	cr_expect_float_eq(mean, (gb[0] + gb[1]) / 2, 1e-12);
	cr_expect_eq(gb[2], -1);
	double T = 86400;
	double gpus_W = P / 2 * (30 + gb[0] * (300 - 30)) + P / 2 * (15 + gb[1] * (150 - 15));
	double want = 1.58 * (gpus_W + P * (500 - 300)) * T / 3.6e9;
	double mwh = assess_energy_MWh(x.sc->in, &x.sc->plan, T, mean, gb);
	cr_expect_float_eq(mwh, want, 1e-12 * want, "%.12g MWh vs %.12g", mwh, want);
	/* without the groups' shares: every group at the job's mean share */
	double flat = 1.58 * (P / 2 * (30 + mean * 270) + P / 2 * (15 + mean * 135) + P * 200) * T / 3.6e9;
	cr_expect_float_eq(assess_energy_MWh(x.sc->in, &x.sc->plan, T, mean, NULL), flat, 1e-12 * flat);
	run_finish(&x);
}

/* A 200 W limit on one group of "cap" GPUs (clock ratio 0.75) stretches
 * only that group's compute, by 1 / 0.75, and every report says so: the
 * text's group line, report.json's node_groups and report.html's
 * summary. */
Test(mixed, a_cap_in_one_group_slows_only_that_group, .timeout = 60)
{
	char *dir = tmp_dir(), text[4096], args[2400], rd[1200], *out = NULL, *err = NULL;
	free(write_gpu(dir, "fast", 1, 32));
	free(write_cap_gpu(dir));
	free(write_star(dir, false));
	snprintf(text, sizeof(text),
		 "{ \"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.2\", \"model\": \"%s\","
		 " \"topology\": \"star.json\","
		 " \"node_groups\": [ { \"nodes\": 4, \"gpu\": \"cap.json\" },"
		 " { \"nodes\": 4, \"gpu\": \"cap.json\", \"power_cap_W\": 200 } ],"
		 " \"training\": { \"global_batch\": 256, \"micro_batch\": 32, \"precision\": \"fp32\" },"
		 " \"communication\": { \"algorithm\": \"hierarchical\", \"bucket_MB\": 1000 } }\n",
		 src_path("models/zoo/resnet50.json"));
	char *path = write_file(dir, "s.json", text);
	snprintf(args, sizeof(args), "run %s --out %s/out --format json,html", path, dir);
	cr_assert_eq(run_ddlsim(args, &out, &err), 0, "%s", err);
	cr_expect(strstr(out, "\n  group 1    nodes 4-7, ranks 4-7: cap, stages 0-0, compute "), "%s", out);
	cr_expect(strstr(out, "\n             power limit 200 W of 300 W TDP: compute-bound kernels at 0.750 "
			 "of the clock\n"), "%s", out);
	cr_expect_not(strstr(out, "\npower limit"), "%s", out);
	snprintf(rd, sizeof(rd), "%s/out", dir);
	json_t *r = load_report(rd);
	cr_assert(r);
	double c0 = jnum(r, "node_groups/groups/0/compute_s"), c1 = jnum(r, "node_groups/groups/1/compute_s");
	cr_expect_float_eq(c1, c0 / 0.75, 1e-4 * c1, "capped %.9g s, free %.9g s, ratio %.6f", c1, c0, c0 / c1);
	cr_expect_float_eq(jnum(r, "node_groups/groups/1/power_cap_W"), 200, 1e-12);
	cr_expect_float_eq(jnum(r, "node_groups/groups/1/cap_clock_ratio"), 0.75, 1e-12);
	cr_expect_eq(jnum(r, "node_groups/groups/0/power_cap_W"), -1e300);
	cr_expect_eq(jnum(r, "scenario/topology/power_cap_W"), -1e300);
	json_decref(r);
	char *html = NULL;
	snprintf(rd, sizeof(rd), "%s/out/report.html", dir);
	html = test_file_text(rd);
	cr_assert(html);
	cr_expect(strstr(html, "group 1 (cap): 200 W of 300 W TDP: compute-bound kernels at 0.750 of the clock"));
	free(html);
	free(out);
	free(err);
	free(path);
	free(dir);
}

/* A group's power limit: schema 1.2, and its preset's rules, each with
 * the key's path. */
Test(mixed, rejects_a_bad_group_power_cap)
{
	expect_error("\"node_groups\": [ { \"nodes\": 2, \"gpu\": \"cap.json\", \"power_cap_W\": 200 } ]",
		     "/node_groups/0/power_cap_W: error: needs schema_version \"1.2\", the file says \"1.0\"");
	expect_error_v("1.2", "\"node_groups\": [ { \"nodes\": 2, \"gpu\": \"cap.json\", \"power_cap_W\": 400 } ]",
		       "/node_groups/0/power_cap_W: error: must not exceed tdp_W 300, got 400 (GPU 'cap')");
	expect_error_v("1.2", "\"node_groups\": [ { \"nodes\": 2, \"gpu\": \"cap.json\", \"power_cap_W\": 50 } ]",
		       "/node_groups/0/power_cap_W: error: is below the lowest limit cap_clock_ratio measured "
		       "(100 W), got 50: no clock is extrapolated (GPU 'cap')");
	expect_error_v("1.2", "\"node_groups\": [ { \"nodes\": 1, \"gpu\": \"cap.json\" },"
		       " { \"nodes\": 1, \"gpu\": \"fast.json\", \"power_cap_W\": 200 } ]",
		       "/node_groups/1/power_cap_W: error: needs cap_clock_ratio, the measured compute clock at "
		       "power limits of this GPU (gpus/README.md); none given (GPU 'fast')");
	expect_error_v("1.2", "\"node_groups\": [ { \"nodes\": 2, \"gpu\": \"cap.json\", \"power_cap_w\": 200 } ]",
		       "/node_groups/0/power_cap_w: error: unknown key 'power_cap_w' (did you mean 'power_cap_W'?)");
}
