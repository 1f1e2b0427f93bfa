/* test-hostile: one case per class of hostile input closed by issue 26's
 * "one rule for numbers" and "bounded work": ranges, bounds with their
 * units, derived values and expressions, command-line numbers, profile
 * rates faster than the GPU. Each input is refused before anything is
 * simulated, with the file, the key or JSON path, the bound and its unit
 * in the message, the documented exit code (3 invalid input, 2 bad
 * command line), and no output directory left behind. The rest of
 * Hardening II is in test-hardening.c. */
#include <criterion/criterion.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "cost.h"
#include "expr.h"
#include "gpu.h"
#include "reasons.h"
#include "svg.h"
#include "sweep.h"
#include "tidy.h"
#include "testutil.h"
#include "topology.h"
#include "hostile.h"

Test(hostile, a_range_with_nan_or_inf_ends_is_refused_not_divided_by_zero)
{
	static const char *const cases[][2] = {
		{ "nan..4", "/axes: error: /nodes: range 'nan..4': ends and step must be finite numbers of "
			    "magnitude at most 1e+15, got nan..4 step 1" },
		{ "1..nan", "range '1..nan': ends and step must be finite numbers of magnitude at most 1e+15, "
			    "got 1..nan step 1" },
		{ "1..inf", "range '1..inf': ends and step must be finite numbers of magnitude at most 1e+15, "
			    "got 1..inf step 1" },
		{ "1..4 step x1e400", "range '1..4 step x1e400': ends and step must be finite" },
		{ "1..1e12", "range '1..1e12' has 1000000000001 values, more than the 100000 a range may have" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *d = tmp_dir(), body[256], args[2048];
		snprintf(body, sizeof(body), "\"axes\": {\"nodes\": \"%s\"}", cases[i][0]);
		char *f = sweep_file(d, body);
		snprintf(args, sizeof(args), "validate %s", f);
		refused(args, 3, cases[i][1], d);
		snprintf(args, sizeof(args), "sweep %s -j 1", f);
		refused(args, 3, cases[i][1], d);
		free(f);
		free(d);
	}
}

Test(hostile, goal_node_ranges_that_are_not_finite_are_refused)
{
	char *d = tmp_dir(), args[2048];
	char *f = variant(d, "goal.json", "scenarios/goals/llama3-70b-15t-90d.json", "clusters/0/nodes",
			  json_string("nan..4"));
	snprintf(args, sizeof(args), "plan %s --out %s/out", f, d);
	refused(args, 3, "goal.json: /clusters/0/nodes: error: range 'nan..4': ends and step must be finite "
		"numbers of magnitude at most 1e+15, got nan..4 step 1", d);
	free(f);
	f = variant(d, "goal.json", "scenarios/goals/llama3-70b-15t-90d.json", "clusters/0/nodes",
		    json_string("1..inf"));
	refused(args, 3, "goal.json: /clusters/0/nodes: error: range '1..inf'", d);
	free(f);
	free(d);
}

/* ---- numbers beyond what the engine can simulate: refused at load ---- */

Test(hostile, numbers_beyond_their_physical_bound_are_refused_with_key_bound_and_unit)
{
	static const struct { const char *rel, *key; double v; const char *msg; } cases[] = {
		{ "scenarios/ps/resnet50-v100-16n-ps-straggler.json", "parallel/ps/latency_us", 1e308,
		  "/parallel/ps/latency_us: error: must be at most 1e+06 us, got 1e+308" },
		{ "scenarios/whatif/llama3-8b-h100-fattree-degraded.json",
		  "simulation/degraded_links/2/latency_factor", 1e308,
		  "/simulation/degraded_links/2/latency_factor: error: must be at most 1e+06 x, got 1e+308" },
		{ "scenarios/ps/resnet50-v100-16n-ps-straggler.json", "simulation/stragglers/sigma", 1000,
		  "/simulation/stragglers/sigma: error: must be at most 2, got 1000" },
		{ "scenarios/ps/resnet50-v100-16n-ps-straggler.json", "simulation/stragglers/slowdown", 1e308,
		  "/simulation/stragglers/slowdown: error: must be at most 1000 x, got 1e+308" },
		{ "scenarios/ps/resnet50-v100-16n-ps-straggler.json", "training/train_tokens", 1e300,
		  "/training/train_tokens: error: must be at most 1e+18 tokens, got 1e+300" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *d = tmp_dir(), args[2048];
		char *f = variant(d, "s.json", cases[i].rel, cases[i].key, json_real(cases[i].v));
		snprintf(args, sizeof(args), "run %s --out %s/out --quiet", f, d);
		refused(args, 3, cases[i].msg, d);
		free(f);
		free(d);
	}
}

Test(hostile, a_price_beyond_its_bound_is_refused_before_simulating)
{
	char *d = tmp_dir(), args[2048];
	char *f = variant(d, "s.json", "scenarios/quickstart.json", "name", json_string("q"));
	json_t *root = json_load_file(f, 0, NULL);
	json_object_set_new(root, "cost", json_pack("{s:f}", "usd_per_gpu_hour", 1e308));
	json_dump_file(root, f, 0);
	json_decref(root);
	snprintf(args, sizeof(args), "run %s --out %s/out --quiet", f, d);
	refused(args, 3, "s.json: /cost/usd_per_gpu_hour: error: must be at most 10000 USD/GPU-hour, got 1e+308", d);
	free(f);
	free(d);
}

Test(hostile, an_expert_load_beyond_its_bound_is_refused)
{
	char *d = tmp_dir(), args[2048];
	json_t *loads = json_array();
	for (int i = 0; i < 8; i++)
		json_array_append_new(loads, json_real(i == 3 ? 1e308 : 1));
	char *f = variant(d, "m.json", "models/zoo/mixtral-8x7b.json", "moe/expert_loads", loads);
	json_t *root = json_load_file(f, 0, NULL);
	json_object_set_new(json_object_get(root, "moe"), "routing", json_string("loads"));
	json_dump_file(root, f, 0);
	json_decref(root);
	snprintf(args, sizeof(args), "validate %s", f);
	refused(args, 3, "m.json: /moe/expert_loads: error: element 3: must be at most 1e+30 "
		"(no quantity ddlsim models is larger), got 1e+308", d);
	free(f);
	free(d);
}

/* ---- expressions: finite results, bounded depth and length, booleans ---- */

Test(hostile, a_derived_value_or_constraint_that_is_not_finite_names_the_point_and_expression)
{
	char *d = tmp_dir(), args[2048];
	char *f = sweep_file(d, "\"axes\": {\"nodes\": [32]}, \"derived\": {\"training.global_batch\": "
			     "\"pow(10, 400)\"}");
	snprintf(args, sizeof(args), "validate %s", f);
	refused(args, 3, "sweep.json: error: point 0 {\"nodes\":32,\"training.global_batch\":null}: derived "
		"'training.global_batch' = \"pow(10, 400)\": result inf is not a finite number at column 13", d);
	free(f);
	f = sweep_file(d, "\"axes\": {\"nodes\": [32]}, \"constraints\": [\"log2(nodes - 32) < 1\"]");
	refused(args, 3, "sweep.json: error: point 0 {\"nodes\":32}: constraint \"log2(nodes - 32) < 1\": "
		"result -inf is not a finite number at column 17", d);
	free(f);
	free(d);
}

Test(hostile, deep_or_long_expressions_are_refused_without_overflowing_the_stack)
{
	char *src = malloc(100001), err[200];
	double x;
	cr_assert_not_null(src);
	for (int i = 0; i < 50000; i++)
		src[i] = '(', src[100000 - 1 - i] = ')';
	src[100000] = 0;
	cr_expect_eq(expr_eval(src, NULL, NULL, &x, err, sizeof(err)), -1);
	cr_expect_str_eq(err, "expression of 100000 bytes is longer than the 4096 an expression may have");
	/* within the length, past the depth */
	memset(src, '-', 1000);
	snprintf(src + 1000, 8, "1");
	cr_expect_eq(expr_eval(src, NULL, NULL, &x, err, sizeof(err)), -1);
	cr_expect_str_eq(err, "expression nested more than 64 deep at column 66");
	for (int i = 0; i < 64; i++)
		src[i] = '(', src[64 + 1 + i] = ')';
	src[64] = '7', src[129] = 0;
	cr_expect_eq(expr_eval(src, NULL, NULL, &x, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(x, 7);
	free(src);
}

static bool tp8(void *ctx, const char *name, size_t len, double *out)
{
	(void)ctx;
	*out = len == 2 && !strncmp(name, "tp", 2) ? 8 : 1e308;
	return true;
}

Test(hostile, booleans_and_comparisons_are_truth_values)
{
	char err[200];
	double x;
	bool b;
	cr_expect_eq(expr_eval_typed("tp > 1", tp8, NULL, &x, &b, err, sizeof(err)), 0);
	cr_expect(x == 1 && b);
	cr_expect_eq(expr_eval_typed("!(tp <= 4) && true || false", tp8, NULL, &x, &b, err, sizeof(err)), 0);
	cr_expect(x == 1 && b);
	cr_expect_eq(expr_eval_typed("tp != 8 || false", tp8, NULL, &x, &b, err, sizeof(err)), 0);
	cr_expect(x == 0 && b);
	cr_expect_eq(expr_eval_typed("(tp >= 8) + 1", tp8, NULL, &x, &b, err, sizeof(err)), 0);
	cr_expect(x == 2 && !b);
	cr_expect_eq(expr_eval_typed("if(tp == 8, true, false)", tp8, NULL, &x, &b, err, sizeof(err)), 0);
	cr_expect(x == 1 && b);
	/* 1e308 * 10 is no number: an error, never inf (and NaN never true) */
	cr_expect_eq(expr_eval("big * 10 > 1", tp8, NULL, &x, err, sizeof(err)), -1);
	cr_expect_str_eq(err, "result inf is not a finite number at column 9");
}

Test(hostile, a_boolean_derived_value_sets_a_boolean_key)
{
	char *d = tmp_dir(), args[2048];
	char *f = sweep_file(d, "\"axes\": {\"nodes\": [32], \"parallel.tp\": [1, 8]}, "
			     "\"derived\": {\"parallel.sp\": \"tp > 1\"}");
	struct diag dg;
	diag_init(&dg, NULL);
	struct sweep *s = sweep_load(f, &dg);
	cr_assert_not_null(s, "%s", diag_text(&dg));
	for (long i = 0; i < 2; i++) {
		json_t *values;
		char reason[512] = "";
		json_t *doc = sweep_point(s, i, &values, reason, sizeof(reason));
		cr_assert_not_null(doc, "%s", reason);
		json_t *sp = json_object_get(json_object_get(doc, "parallel"), "sp");
		cr_expect(json_is_boolean(sp) && json_is_true(sp) == (i == 1), "point %ld", i);
		json_decref(doc);
		json_decref(values);
	}
	sweep_destroy(s);
	diag_finish(&dg);
	char *out = NULL;
	snprintf(args, sizeof(args), "validate %s", f);
	cr_expect_eq(run_ddlsim(args, &out, NULL), 0);
	free(out);
	free(f);
	free(d);
}

/* ---- the command line ---- */

Test(hostile, command_line_numbers_are_strict)
{
	char *d = tmp_dir(), args[2048];
	const char *sc = src_path("scenarios/quickstart.json");
	char *f = sweep_file(d, "\"axes\": {\"nodes\": [32]}");
	static const char *const shards[] = { "1/2x", "1/1e20", "0/2", "3/2", "1/", "-1/2" };
	for (size_t i = 0; i < sizeof(shards) / sizeof(shards[0]); i++) {
		char msg[200];
		snprintf(args, sizeof(args), "sweep %s --shard %s", f, shards[i]);
		snprintf(msg, sizeof(msg), "--shard: expected I/N, integers with 1 <= I <= N <= 100000, got '%s'",
			 shards[i]);
		refused(args, 2, msg, d);
	}
	snprintf(args, sizeof(args), "sweep %s --mem-limit 1e400", f);
	refused(args, 2, "--mem-limit: expected a number in [0.01, 1e+06], got '1e400'", d);
	snprintf(args, sizeof(args), "run %s --out %s/out --mem-limit 1e400", sc, d);
	refused(args, 2, "--mem-limit: expected a number in [0.01, 1e+06], got '1e400'", d);
	snprintf(args, sizeof(args), "run %s --out %s/out --trace %s/t.json --trace-link-period 1e-300", sc, d, d);
	refused(args, 2, "--trace-link-period: expected 0 (off) or at least 1e-06 s (a link's latency; finer "
		"samples see nothing new), got '1e-300'", d);
	free(f);
	free(d);
}

/* ---- profiles and presets ---- */

static struct gpu_spec h100(void)
{
	struct gpu_spec g;
	memset(&g, 0, sizeof(g));
	snprintf(g.name, sizeof(g.name), "H100-SXM5-80GB");
	g.peak_flops[DTYPE_FP32] = 67e12;
	g.peak_flops[DTYPE_BF16] = 989e12;
	g.hbm_bw_Bps = 3.35e12;
	g.sm_count = 132;
	g.gemm_eff_max = 0.8;
	g.mem_eff_max = 0.85, g.kernel_launch_s = 4e-6;
	g.gemm_tile_m = 128, g.gemm_tile_n = 256;
	return g;
}

static const char *profile(const char *gemm_time, const char *alone, const char *with)
{
	static char text[4096];
	snprintf(text, sizeof(text),
		 "{\"schema\": \"ddlsim.profile\", \"schema_version\": \"1.0\",\n"
		 " \"producer\": {\"name\": \"ddlsim-calib\", \"version\": \"0.1.0\"},\n"
		 " \"gpu\": {\"name\": \"NVIDIA H100 80GB HBM3\", \"compute_capability\": \"9.0\",\n"
		 "   \"sm_count\": 132, \"sm_clock_max_MHz\": 1980, \"mem_clock_max_MHz\": 2619,\n"
		 "   \"mem_bus_width_bits\": 5120, \"hbm_bytes\": 85031714816, \"l2_bytes\": 52428800,\n"
		 "   \"driver_version\": \"x\", \"cuda_runtime_version\": \"13.0\",\n"
		 "   \"cublas_version\": \"x\", \"cudnn_version\": null},\n"
		 " \"measured\": {\"date_utc\": \"x\", \"hostname\": \"x\", \"method\": \"SYNTHETIC TEST FIXTURE\",\n"
		 "   \"warmup_runs\": 5, \"timed_runs\": 20, \"quick\": false},\n"
		 " \"gemm\": [{\"dtype\": \"bf16\", \"m\": 4096, \"n\": 4096, \"k\": 4096, \"transa\": \"N\",\n"
		 "  \"transb\": \"N\", \"time_s\": %s, \"tflops\": 600, \"impl\": \"cublasLt\"}],\n"
		 " \"interference\": {\"copy_blocks\": 8, \"gemm_alone_s\": %s, \"gemm_with_copy_s\": %s}}\n",
		 gemm_time, alone, with);
	return text;
}

Test(hostile, profile_entries_faster_than_the_gpu_or_absurd_are_refused)
{
	char *d = tmp_dir();
	struct gpu_spec g = h100();
	struct diag dg;
	/* a GEMM at 1e-300 s would be an MFU of 1e300 % */
	diag_init(&dg, NULL);
	cr_expect_null(cost_profile_create(&g, write_file(d, "p.json", profile("1e-300", "1e-3", "1.1e-3")), &dg));
	cr_expect(strstr(diag_text(&dg), "p.json: /gemm/0/time_s: error: must be 0 or at least 1e-12 s, got 1e-300"),
		  "%s", diag_text(&dg));
	diag_finish(&dg);
	/* within the bound on durations, still 5x the GPU's peak */
	diag_init(&dg, NULL);
	cr_expect_null(cost_profile_create(&g, write_file(d, "p.json", profile("2.7e-5", "1e-3", "1.1e-3")), &dg));
	cr_expect(strstr(diag_text(&dg), "p.json: /gemm/0/time_s: error: must be at least 0.000111174 s "
			 "(1.37439e+11 FLOPs at 1.25 x the bf16 peak of 989 TFLOP/s of 'H100-SXM5-80GB'), got 2.7e-05 s "
			 "(5090.33 TFLOP/s)\n"),
		  "%s", diag_text(&dg));
	diag_finish(&dg);
	/* an interference ratio of 1e8 (an infinite one before the bounds) */
	diag_init(&dg, NULL);
	cr_expect_null(cost_profile_create(&g, write_file(d, "p.json", profile("2e-4", "1e-9", "0.1")), &dg));
	cr_expect(strstr(diag_text(&dg), "p.json: /interference/gemm_with_copy_s: error: must be within 100 x "
			 "of gemm_alone_s (1e-09 s: a GEMM slowed or sped up more than that by a copy is no "
			 "measurement), got 0.1 s"),
		  "%s", diag_text(&dg));
	diag_finish(&dg);
	/* the same profile with sane numbers loads */
	diag_init(&dg, NULL);
	struct cost *c = cost_profile_create(&g, write_file(d, "p.json", profile("2e-4", "1e-3", "1.1e-3")), &dg);
	cr_expect_not_null(c, "%s", diag_text(&dg));
	cost_destroy(c);
	diag_finish(&dg);
	free(d);
}

/* Every rate the profile cost source prices with is held to the GPU:
 * convolutions and fused attention to the dtype's peak, memory-bound
 * kernels and device copies to the HBM bandwidth (with the same 1.25 x
 * margin). The shipped synthetic profile passes; each entry made faster
 * than the GPU is refused with its JSON path, the implied rate and the
 * peak. */
Test(hostile, profile_rates_beyond_peak_flops_or_hbm_bandwidth_are_refused)
{
	char *d = tmp_dir();
	struct gpu_spec g = h100();
	g.peak_flops[DTYPE_FP16] = 989e12;
	json_t *p = json_load_file(src_path("tests/data/profile-synthetic-h100.json"), 0, NULL);
	cr_assert_not_null(p);
	static const struct { const char *section, *key; double v; const char *msg; } cases[] = {
		{ "conv", "time_s", 1e-6, "p.json: /conv/0/time_s: error: must be at least 1.19697e-05 s (1.47975e+10 "
		  "FLOPs at 1.25 x the fp16 peak of 989 TFLOP/s of 'H100-SXM5-80GB'), got 1e-06 s (14797.5 TFLOP/s)\n" },
		{ "attention", "tflops", 5000, "p.json: /attention/0/tflops: error: must be at most 1236.25 TFLOP/s "
		  "(1.25 x the bf16 peak of 989 TFLOP/s of 'H100-SXM5-80GB'), got 5000 TFLOP/s\n" },
		{ "memory_bound", "time_s", 1e-9, "p.json: /memory_bound/0/time_s: error: must be at least 2.50406e-07 s "
		  "(1.04858e+06 bytes at 1.25 x the HBM bandwidth of 3350 GB/s of 'H100-SXM5-80GB'), got 1e-09 s "
		  "(1.04858e+06 GB/s)\n" },
		{ "bandwidth", "time_s", 1e-9, "p.json: /bandwidth/0/time_s: error: must be at least 5.00812e-07 s "
		  "(2.09715e+06 bytes at 1.25 x the HBM bandwidth of 3350 GB/s of 'H100-SXM5-80GB'), got 1e-09 s "
		  "(2.09715e+06 GB/s)\n" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *c = json_deep_copy(p);
		json_object_set_new(json_array_get(json_object_get(c, cases[i].section), 0), cases[i].key,
				    json_real(cases[i].v));
		char *text = json_dumps(c, 0), *path = write_file(d, "p.json", text);
		struct diag dg;
		diag_init(&dg, NULL);
		cr_expect_null(cost_profile_create(&g, path, &dg), "%s", cases[i].section);
		cr_expect(strstr(diag_text(&dg), cases[i].msg), "%s", diag_text(&dg));
		cr_expect_eq(diag_count(&dg), 1, "%s", diag_text(&dg));
		diag_finish(&dg);
		free(path);
		free(text);
		json_decref(c);
	}
	/* as shipped: it loads */
	struct diag dg;
	diag_init(&dg, NULL);
	struct cost *c = cost_profile_create(&g, src_path("tests/data/profile-synthetic-h100.json"), &dg);
	cr_expect_not_null(c, "%s", diag_text(&dg));
	cost_destroy(c);
	diag_finish(&dg);
	/* an H100's profile pricing an A100 would run it above its own peak
	 * (an MFU of 152 % on quickstart): refused too, naming both GPUs */
	struct gpu_spec a100 = g;
	snprintf(a100.name, sizeof(a100.name), "A100-SXM4-80GB");
	a100.peak_flops[DTYPE_BF16] = 312e12;
	a100.hbm_bw_Bps = 2.039e12;
	diag_init(&dg, NULL);
	cr_expect_null(cost_profile_create(&a100, src_path("tests/data/profile-synthetic-h100.json"), &dg));
	cr_expect(strstr(diag_text(&dg), "/gemm/26/time_s: error: must be at least 0.0225541 s (8.79609e+12 FLOPs at "
			 "1.25 x the bf16 peak of 312 TFLOP/s of 'A100-SXM4-80GB'; measured on 'NVIDIA H100 80GB "
			 "HBM3'), got 0.012573 s (699.602 TFLOP/s)\n"), "%s", diag_text(&dg));
	diag_finish(&dg);
	json_decref(p);
	free(d);
}

Test(hostile, an_hbm_override_of_a_preset_is_honoured)
{
	char *d = tmp_dir(), text[2048];
	snprintf(text, sizeof(text),
		 "{\"schema\": \"ddlsim.topology\", \"schema_version\": \"1.5\", \"name\": \"t\", \"source\": \"test\",\n"
		 " \"gpu\": {\"preset\": \"%s\", \"hbm_GB\": 40},\n"
		 " \"node\": {\"gpus\": 1, \"intra\": {\"kind\": \"nvswitch\", \"bw_GBps\": 100, \"latency_us\": 1},\n"
		 "  \"nics\": {\"count\": 1, \"bw_Gbps\": 100, \"latency_us\": 1}},\n"
		 " \"fabric\": {\"kind\": \"nonblocking\", \"latency_us\": 1}}\n",
		 src_path("gpus/h100-sxm5-80gb.json"));
	struct diag dg;
	diag_init(&dg, NULL);
	struct topology *t = topology_load(write_file(d, "t.json", text), &dg);
	cr_assert_not_null(t, "%s", diag_text(&dg));
	cr_expect_eq(t->gpu.hbm_bytes, 40e9);
	topology_destroy(t);
	diag_finish(&dg);
	free(d);
}

/* ---- the command line against the scenario, empty arguments ---- */

Test(hostile, a_profile_the_cost_source_does_not_read_is_an_error)
{
	char *d = tmp_dir(), args[2048];
	json_t *compute = json_pack("{s:s}", "profile", src_path("tests/data/profile-synthetic-h100.json"));
	char *f = variant(d, "s.json", "scenarios/quickstart.json", "compute", compute);
	snprintf(args, sizeof(args), "run %s --out %s/out --quiet", f, d);
	refused(args, 3, "s.json: /compute/profile: error: is read only with \"cost\": \"profile\", got \"cost\": "
		"\"roofline\" (the default): set cost to \"profile\" to price the kernels from it, or drop the key", d);
	free(f);
	f = variant(d, "s.json", "scenarios/quickstart.json", "compute",
		    json_pack("{s:s, s:s}", "cost", "roofline", "profile",
			      src_path("tests/data/profile-synthetic-h100.json")));
	refused(args, 3, "s.json: /compute/profile: error: is read only with \"cost\": \"profile\", got \"cost\": "
		"\"roofline\": set cost", d);
	free(f);
	free(d);
}

/* ---- rejections come with their reasons ---- */
