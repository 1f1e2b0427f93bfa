/* test-hostile: one case per class of hostile input closed by issue 26's
 * "one rule for numbers" and "bounded work" (and "Hardening II": the
 * command line against the scenario, empty arguments, keys that would be
 * ignored, control characters, rates faster than the GPU, rejections
 * without their reasons, two outputs for one file): each input is refused
 * before anything is simulated, with the file, the key or JSON path, the
 * bound and its unit in the message, the documented exit code (3 invalid
 * input, 2 bad command line), and no output directory left behind. */
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

/* Write a copy of shipped file rel into dir/name with key (a JSON pointer
 * without the leading '/', components split by '/') set to v (stolen);
 * relative paths in the file are made absolute first (fix: the keys that
 * hold paths). Returns the path (malloc'd). */
static char *variant(const char *dir, const char *name, const char *rel, const char *key, json_t *v)
{
	json_t *root = json_load_file(src_path(rel), 0, NULL);
	cr_assert_not_null(root, "%s", rel);
	static const char *const paths[] = { "model", "topology", "base", NULL };
	for (int i = 0; paths[i]; i++) {
		json_t *p = json_object_get(root, paths[i]);
		if (json_is_string(p)) {
			/* rel is relative to the source root: drop its file name */
			char rel2[1024], dirpart[512];
			snprintf(dirpart, sizeof(dirpart), "%s", rel);
			char *cut = strrchr(dirpart, '/');
			*cut = 0;
			snprintf(rel2, sizeof(rel2), "%s/%s", dirpart, json_string_value(p));
			json_object_set_new(root, paths[i], json_string(src_path(rel2)));
		}
	}
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", key);
	json_t *o = root;
	char *save = NULL, *tok = strtok_r(buf, "/", &save), *next;
	for (; (next = strtok_r(NULL, "/", &save)); tok = next)
		o = json_is_array(o) ? json_array_get(o, (size_t)atoi(tok)) : json_object_get(o, tok);
	cr_assert_not_null(o, "%s in %s", key, rel);
	if (json_is_array(o))
		json_array_set_new(o, (size_t)atoi(tok), v);
	else
		json_object_set_new(o, tok, v);
	char *text = json_dumps(root, JSON_INDENT(1));
	json_decref(root);
	char *path = write_file(dir, name, text);
	free(text);
	return path;
}

/* `ddlsim ARGS` exits with want, its stderr contains msg, and dir/out
 * does not exist (nothing was written). */
static void refused(const char *args, int want, const char *msg, const char *dir)
{
	char *err = NULL, out_dir[1200];
	int rc = run_ddlsim(args, NULL, &err);
	cr_expect_eq(rc, want, "%s: exit %d, want %d: %s", args, rc, want, err);
	cr_expect(err && strstr(err, msg), "%s: expected '%s' in:\n%s", args, msg, err);
	snprintf(out_dir, sizeof(out_dir), "%s/out", dir);
	cr_expect(!file_exists(out_dir), "%s left %s behind", args, out_dir);
	free(err);
}

static char *sweep_file(const char *dir, const char *body)
{
	char text[8192];
	snprintf(text, sizeof(text),
		 "{\"schema\": \"ddlsim.sweep\", \"schema_version\": \"1.0\", \"base\": \"%s\",\n"
		 " \"output\": {\"dir\": \"%s/out\"}, %s}\n",
		 src_path("scenarios/llama3-70b-h100-base.json"), dir, body);
	return write_file(dir, "sweep.json", text);
}

/* ---- ranges: finite ends and steps, counted before expanding ---- */

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
	cr_expect(strstr(diag_text(&dg), "p.json: /interference/gemm_with_copy_s: error: must be at most 100 x "
			 "gemm_alone_s (1e-09 s: a GEMM slowed more than that by a copy is no measurement), got 0.1 s"),
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

Test(hostile, trace_ranks_beyond_the_job_are_refused_before_simulating)
{
	char *d = tmp_dir(), args[2048], t[1100];
	snprintf(t, sizeof(t), "%s/t.json", d);
	/* quickstart: 2 nodes x 8 GPUs */
	static const char *const sel[][2] = {
		{ "99999", "--trace-ranks: rank 99999 of '99999' is beyond the job, which has 16 ranks (0-15)" },
		{ "0-7,16", "--trace-ranks: rank 16 of '0-7,16' is beyond the job, which has 16 ranks (0-15)" },
		{ "8-99", "--trace-ranks: rank 99 of '8-99' is beyond the job, which has 16 ranks (0-15)" },
	};
	for (size_t i = 0; i < sizeof(sel) / sizeof(sel[0]); i++) {
		snprintf(args, sizeof(args), "run %s --out %s/out --quiet --trace %s --trace-ranks %s",
			 src_path("scenarios/quickstart.json"), d, t, sel[i][0]);
		refused(args, 2, sel[i][1], d);
		cr_expect(!file_exists(t), "%s: a trace was written", sel[i][0]);
	}
	/* up to the last rank is in the job: the trace has the simulated
	 * rank 0 (the others are folded into it) */
	snprintf(args, sizeof(args), "run %s --out %s/ok --quiet --trace %s --trace-ranks 0-15",
		 src_path("scenarios/quickstart.json"), d, t);
	cr_assert_eq(run_ddlsim(args, NULL, NULL), 0);
	json_t *tr = json_load_file(t, 0, NULL), *e;
	cr_assert_not_null(tr);
	size_t k;
	int named = 0;
	json_array_foreach(json_object_get(tr, "traceEvents"), k, e)
		named += !strcmp(json_string_value(json_object_get(e, "name")), "process_name") &&
			 json_integer_value(json_object_get(e, "pid")) == 0;
	cr_expect_eq(named, 1);
	json_decref(tr);
	free(d);
}

Test(hostile, a_folded_rank_in_trace_ranks_is_a_warning_naming_its_representative)
{
	char *d = tmp_dir(), args[2048], *err = NULL;
	/* 1024 data-parallel replicas folded into one simulated rank */
	snprintf(args, sizeof(args), "run %s --out %s/out --quiet --trace %s/t.json --trace-ranks 500",
		 src_path("scenarios/gpt3-175b-dp1024.json"), d, d);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	cr_expect(strstr(err, "--trace-ranks: warning: 1 selected rank was not simulated but folded into a "
			 "representative replica (rank 500 into rank "), "%s", err);
	free(err);
	free(d);
}

Test(hostile, an_empty_file_name_or_option_value_is_a_usage_error)
{
	char *d = tmp_dir(), args[2048];
	const char *sc = src_path("scenarios/quickstart.json");
	char *sw = sweep_file(d, "\"axes\": {\"nodes\": [32]}");
	const struct { const char *fmt, *msg; } cases[] = {
		{ "run %s --trace ''", "ddlsim: error: run: option '--trace' has an empty value, "
				       "expected a file name or a value" },
		{ "run %s --out ''", "ddlsim: error: run: option '--out' has an empty value" },
		{ "run '' %s", "ddlsim: error: run: argument 1 is empty, expected a file name or an option" },
		{ "sweep %s --out ''", "ddlsim: error: sweep: option '--out' has an empty value" },
		{ "merge '' %s", "ddlsim: error: merge: argument 1 is empty" },
		{ "validate %s ''", "ddlsim: error: validate: argument 2 is empty" },
		{ "collective --topology %s --csv=", "ddlsim: error: collective: option '--csv' has an "
							 "empty value" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(args, sizeof(args), cases[i].fmt, i == 3 ? sw : sc);
		refused(args, 2, cases[i].msg, d);
	}
	free(sw);
	free(d);
}

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

Test(hostile, rejections_are_grouped_by_reason_with_numbers_masked)
{
	struct reasons *r = reasons_create();
	reasons_add(r, "/parallel/interleave: pp x interleave = 8 x 4 must divide the 80 layers", "a");
	reasons_add(r, "/training/precision: fp8 needs a GPU with a peak for fp8", "b");
	reasons_add(r, "/parallel/interleave: pp x interleave = 16 x 2 must divide the 80 layers", "c");
	reasons_add(r, "/x: got 1e+06 and 2.5", "d");
	reasons_add(r, "/x: got 3e-07 and 12", "e");
	reasons_add(r, "/x: got 4 and 7", "f");
	reasons_add(r, "constraint \"a,\n\x1b[2J\" is false", "g");
	cr_expect_eq(reasons_total(r), 7);
	cr_assert_eq(reasons_groups(r), 4);
	const struct reason *g = reasons_get(r, 0);
	cr_expect_str_eq(g->msg, "/x: got 1e+06 and 2.5");
	cr_expect_str_eq(g->example, "d");
	cr_expect_eq(g->count, 3);
	g = reasons_get(r, 1);
	cr_expect_str_eq(g->msg, "/parallel/interleave: pp x interleave = 8 x 4 must divide the 80 layers");
	cr_expect_eq(g->count, 2);
	cr_expect_eq(reasons_get(r, 2)->count, 1);
	cr_expect_str_eq(reasons_get(r, 2)->example, "b");
	/* one line, no raw control character */
	cr_expect_str_eq(reasons_get(r, 3)->msg, "constraint \"a,\\n\\x1b[2J\" is false");
	/* past REASONS_MAX groups, one last group of the others */
	for (int i = 0; i < REASONS_MAX + 10; i++) {
		char m[64];
		snprintf(m, sizeof(m), "/k%c%c: distinct", 'a' + i % 26, 'a' + i / 26);
		reasons_add(r, m, "");
	}
	cr_expect_eq(reasons_groups(r), REASONS_MAX + 1);
	g = reasons_get(r, REASONS_MAX);
	cr_expect_str_eq(g->msg, "other reasons");
	cr_expect_eq(g->count, 14);
	cr_expect_eq(reasons_total(r), 7 + REASONS_MAX + 10);
	reasons_destroy(r);
}

/* A goal whose every plan plan_check rejects (fp8 on A100s, which have no
 * fp8 peak) says why, not "try more nodes". */
Test(hostile, a_plan_search_says_why_plan_check_rejected_its_plans, .timeout = 120)
{
	char *d = tmp_dir(), args[2048], *out = NULL;
	json_t *g = json_load_file(src_path("scenarios/goals/llama3-70b-15t-90d.json"), 0, NULL);
	cr_assert_not_null(g);
	json_object_set_new(g, "model", json_string(src_path("models/zoo/llama3-70b.json")));
	json_object_set_new(g, "precision", json_string("fp8"));
	json_t *cl = json_array_get(json_object_get(g, "clusters"), 0);
	json_object_set_new(cl, "topology", json_string(src_path("topologies/dgx-a100.json")));
	json_object_set_new(cl, "nodes", json_pack("[i]", 32));
	char *text = json_dumps(g, 0), *f = write_file(d, "goal.json", text);
	free(text);
	json_decref(g);
	snprintf(args, sizeof(args), "plan %s --screen-only", f);
	cr_assert_eq(run_ddlsim(args, &out, NULL), 0);
	cr_expect(strstr(out, "H100 cloud: 18888 plans enumerated, 18888 rejected by plan_check, 0 do not fit in "
			 "memory, 0 screened"), "%s", out);
	char want[1024];
	snprintf(want, sizeof(want), "\n  18888 rejected: /training/precision: fp8 needs a GPU with a peak for fp8, "
		 "but GPU 'A100-SXM4-80GB' of topology 'DGX A100' has none (%s: /gpu/peak_tflops)\n"
		 "  no plan passes plan_check: see the reasons above\n", src_path("topologies/dgx-a100.json"));
	cr_expect(strstr(out, want), "%s", out);
	cr_expect(!strstr(out, "try more nodes"), "%s", out);
	free(out);

	/* the shipped goal on 32 nodes: three reasons, their counts add up to
	 * the rejected */
	g = json_load_file(f, 0, NULL);
	json_object_del(g, "precision");
	json_object_set_new(json_array_get(json_object_get(g, "clusters"), 0), "topology",
			    json_string(src_path("topologies/dgx-h100.json")));
	json_dump_file(g, f, 0);
	json_decref(g);
	snprintf(args, sizeof(args), "plan %s --screen-only --show-rejected", f);
	cr_assert_eq(run_ddlsim(args, &out, NULL), 0);
	long rejected = 0, sum = 0, c;
	const char *p = strstr(out, "plans enumerated, ");
	cr_assert(p && sscanf(p, "plans enumerated, %ld rejected", &rejected) == 1, "%s", out);
	int groups = 0;
	for (p = out; (p = strstr(p, "\n  ")); p++)
		if (sscanf(p, "\n  %ld rejected: ", &c) == 1 && strstr(p, "rejected: ") - p < 16)
			sum += c, groups++;
	cr_expect_eq(groups, 3, "%s", out);
	cr_expect_eq(sum, rejected, "%s", out);
	cr_expect(strstr(out, "rejected: /parallel/zero: ZeRO-3 / FSDP with pipeline parallelism is not supported "
			 "(pp = 2)\n      e.g. tp1 pp2 dp128 mb1 gb512 z3 none tp,dp,pp, 32 nodes\n"), "%s", out);
	free(out);
	free(f);
	free(d);
}

/* An invalid point's row holds its own axis values and no plan columns:
 * it used to carry the base scenario's (nodes 64, tp 8, pp 4 for a point
 * of 32 nodes and tp 3), a silent wrong row. */
Test(hostile, an_invalid_sweep_point_row_is_not_the_base_scenario)
{
	char *d = tmp_dir(), args[2048], p[1200];
	char *f = sweep_file(d, "\"axes\": {\"nodes\": [32], \"parallel.tp\": [3]}");
	snprintf(args, sizeof(args), "sweep %s --quiet", f);
	cr_assert_eq(run_ddlsim(args, NULL, NULL), 0);
	snprintf(p, sizeof(p), "%s/out/points.jsonl", d);
	json_t *rec = json_load_file(p, JSON_DISABLE_EOF_CHECK, NULL);
	cr_assert_not_null(rec);
	cr_expect_str_eq(json_string_value(json_object_get(rec, "status")), "invalid");
	cr_expect_eq(json_integer_value(json_object_get(rec, "nodes")), 32);
	cr_expect_eq(json_integer_value(json_object_get(rec, "parallel.tp")), 3);
	static const char *const none[] = { "gpus", "tp", "pp", "dp", "model", "gpu", "global_batch" };
	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++)
		cr_expect(json_is_null(json_object_get(rec, none[i])), "%s", none[i]);
	json_decref(rec);
	free(f);
	free(d);
}

/* ---- control characters: refused in names, escaped wherever quoted ---- */

/* ddlsim ARGS exits 3 with msg on stderr and no raw escape (ESC, BEL,
 * CSI) anywhere in what it printed. */
static void refused_clean(const char *args, const char *msg, const char *dir)
{
	char *out = NULL, *err = NULL;
	int rc = run_ddlsim(args, &out, &err);
	cr_expect_eq(rc, 3, "%s: exit %d: %s", args, rc, err);
	cr_expect(err && strstr(err, msg), "%s: expected '%s' in:\n%s", args, msg, err);
	cr_expect(!strpbrk(err, "\x1b\x07") && !strstr(err, "\xc2\x9b"), "%s: a raw control character in:\n%s",
		  args, err);
	cr_expect(!strpbrk(out, "\x1b\x07"), "%s: a raw control character on stdout", args);
	char p[1200];
	snprintf(p, sizeof(p), "%s/out", dir);
	cr_expect(!file_exists(p), "%s left %s behind", args, p);
	free(out);
	free(err);
}

Test(hostile, names_with_control_characters_or_slashes_are_refused_at_load)
{
	char *d = tmp_dir(), args[2048];
	static const struct { const char *rel, *key, *v, *msg; } cases[] = {
		{ "scenarios/quickstart.json", "name", "evil\x1b[2Jname",
		  "s.json: /name: error: expected a name without control characters, got U+001B at byte 4" },
		{ "scenarios/quickstart.json", "name", "a\xc2\x9b" "31m",
		  "s.json: /name: error: expected a name without control characters, got U+009B at byte 1" },
		{ "scenarios/quickstart.json", "name", "tab\there",
		  "s.json: /name: error: expected a name without control characters, got U+0009 at byte 3" },
		{ "scenarios/quickstart.json", "name", "../../etc",
		  "s.json: /name: error: expected a name that can name a directory (no '/', not '.' or '..': "
		  "outputs go to out/<name>), got '../../etc'" },
		{ "scenarios/quickstart.json", "name", "", "s.json: /name: error: expected a name, got an empty string" },
		{ "scenarios/quickstart.json", "description", "ok\nbut\x1b[31m red",
		  "s.json: /description: error: expected a string without control characters, got U+001B at byte 6" },
		{ "models/zoo/llama3-8b.json", "name", "L\a",
		  "s.json: /name: error: expected a name without control characters, got U+0007 at byte 1" },
		{ "topologies/dgx-h100.json", "name", "D\x1b",
		  "s.json: /name: error: expected a name without control characters, got U+001B at byte 1" },
		{ "scenarios/goals/llama3-70b-15t-90d.json", "name", "g/h",
		  "s.json: /name: error: expected a name that can name a directory" },
		{ "scenarios/goals/llama3-70b-15t-90d.json", "clusters/0/name", "c\x1b",
		  "s.json: /clusters/0/name: error: expected a name without control characters, got U+001B" },
		{ "scenarios/sweeps/llama3-70b-h100.json", "name", "..",
		  "s.json: /name: error: expected a name that can name a directory" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *f = variant(d, "s.json", cases[i].rel, cases[i].key, json_string(cases[i].v));
		snprintf(args, sizeof(args), "validate %s", f);
		refused_clean(args, cases[i].msg, d);
		if (i == 0) {
			snprintf(args, sizeof(args), "run %s --out %s/out --quiet", f, d);
			refused_clean(args, cases[i].msg, d);
		}
		free(f);
	}
	/* a key is quoted escaped, in the path and the message */
	char *f = variant(d, "s.json", "scenarios/quickstart.json", "\x1b[2Jx", json_integer(1));
	snprintf(args, sizeof(args), "validate %s", f);
	refused_clean(args, "s.json: /\\x1b[2Jx: error: unknown key '\\x1b[2Jx'", d);
	free(f);
	/* a sweep's axis key and string values become CSV columns and cells */
	f = sweep_file(d, "\"axes\": {\"name\": [\"ok\", \"x\\u001by\"]}");
	snprintf(args, sizeof(args), "sweep %s", f);
	refused_clean(args, "sweep.json: /axes: error: /name/1: expected a string without control characters, got "
		      "U+001B at byte 1", d);
	free(f);
	f = sweep_file(d, "\"axes\": {\"parallel.\\u001btp\": [1]}");
	snprintf(args, sizeof(args), "sweep %s", f);
	refused_clean(args, "sweep.json: /axes: error: /parallel.\\x1btp: expected a scenario key path", d);
	free(f);
	free(d);
}

Test(hostile, markup_csv_and_json_writers_escape_what_they_quote)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cr_assert_not_null(f);
	svg_escape(f, "a<b>&\"\x1b[2J\xc2\x9b\x7f\tz\n");
	fclose(f);
	cr_expect_str_eq(buf, "a&lt;b&gt;&amp;&quot;\xef\xbf\xbd[2J\xef\xbf\xbd\xef\xbf\xbd\tz\n");
	free(buf);
	f = open_memstream(&buf, &len);
	tidy_csv_field(f, "a,\"b\"\nc");
	fputc('|', f);
	tidy_csv_field(f, "plain");
	fclose(f);
	cr_expect_str_eq(buf, "\"a,\"\"b\"\"\nc\"|plain");
	free(buf);
	json_t *rec = json_pack("{s:s}", "name", "x\x1b[2J\n");
	f = open_memstream(&buf, &len);
	tidy_jsonl(f, rec);
	fclose(f);
	cr_expect_str_eq(buf, "{\"name\":\"x\\u001B[2J\\n\"}\n");
	free(buf);
	json_decref(rec);
}

/* ---- the second audit ---- */

Test(hostile, empty_paths_and_overlong_names_in_files_are_refused)
{
	char *d = tmp_dir(), args[2048];
	/* output.dir "" resolved to the scenario's own directory: reports
	 * written beside it */
	char *f = variant(d, "s.json", "scenarios/quickstart.json", "output", json_pack("{s:s}", "dir", ""));
	snprintf(args, sizeof(args), "run %s --quiet", f);
	refused(args, 3, "s.json: /output/dir: error: expected a path, got an empty string", d);
	snprintf(args, sizeof(args), "%s/report.json", d);
	cr_expect(!file_exists(args), "reports written beside the scenario");
	free(f);
	f = sweep_file(d, "\"axes\": {\"nodes\": [32]}, \"name\": \"x\"");
	json_t *sw = json_load_file(f, 0, NULL);
	json_object_set_new(json_object_get(sw, "output"), "dir", json_string(""));
	json_dump_file(sw, f, 0);
	json_decref(sw);
	snprintf(args, sizeof(args), "sweep %s", f);
	refused(args, 3, "sweep.json: /output/dir: error: expected a path, got an empty string", d);
	free(f);
	f = variant(d, "s.json", "scenarios/quickstart.json", "model", json_string(""));
	snprintf(args, sizeof(args), "validate %s", f);
	refused(args, 3, "s.json: /model: error: expected a path, got an empty string", d);
	free(f);
	/* a name is a directory name: at most 255 bytes */
	char *longname = malloc(301);
	cr_assert_not_null(longname);
	memset(longname, 'n', 300);
	longname[300] = 0;
	f = variant(d, "s.json", "scenarios/quickstart.json", "name", json_string(longname));
	refused(args, 3, "s.json: /name: error: expected a name of at most 255 bytes (it names a directory), got 300 "
		"bytes", d);
	free(longname);
	free(f);
	free(d);
}

Test(hostile, goal_values_beyond_their_range_are_refused_with_the_value_not_clamped)
{
	char *d = tmp_dir(), args[2048];
	/* top was cut to 1000 silently; the others said "got another integer" */
	static const struct { const char *key, *msg; } cases[] = {
		{ "top", "goal.json: /top: error: expected at most 1000 plans simulated per cluster (as --top), "
			 "got 1000000000" },
		{ "clusters/0/nodes", "goal.json: /clusters/0/nodes: error: expected node counts in [1, 100000], got 0" },
		{ "search", "goal.json: /search/tp: error: /0: expected an integer in [1, 1024], got 0" },
	};
	json_t *vals[] = { json_integer(1000000000), json_pack("[i]", 0), json_pack("{s:[i]}", "tp", 0) };
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *f = variant(d, "goal.json", "scenarios/goals/llama3-70b-15t-90d.json", cases[i].key, vals[i]);
		json_t *g = json_load_file(f, 0, NULL);
		json_t *cl = json_array_get(json_object_get(g, "clusters"), 0);
		json_object_set_new(cl, "topology", json_string(src_path("topologies/dgx-h100.json")));
		json_dump_file(g, f, 0);
		json_decref(g);
		snprintf(args, sizeof(args), "plan %s --screen-only --out %s/out", f, d);
		refused(args, 3, cases[i].msg, d);
		free(f);
	}
	free(d);
}

Test(hostile, a_link_degraded_twice_and_straggler_ids_name_the_entry_and_value)
{
	char *d = tmp_dir(), args[2048];
	json_t *links = json_pack("[{s:s, s:f}, {s:s, s:f}]", "link", "lu0", "bw_factor", 0.5, "link", "lu0", "bw_factor",
				  0.25);
	char *f = variant(d, "s.json", "scenarios/whatif/llama3-8b-h100-fattree-degraded.json",
			  "simulation/degraded_links", links);
	snprintf(args, sizeof(args), "run %s --out %s/out --quiet", f, d);
	refused(args, 3, "s.json: /simulation/degraded_links/1/link: error: link 'lu0' is degraded by entry 0 already: "
		"give each link once, with both factors", d);
	free(f);
	f = variant(d, "s.json", "scenarios/whatif/llama3-8b-h100-fattree-degraded.json", "simulation/stragglers",
		    json_pack("{s:[i]}", "ranks", -1));
	refused(args, 3, "s.json: /simulation/stragglers/ranks: error: /0: expected a rank in [0, 1000000), got -1", d);
	free(f);
	free(d);
}

Test(hostile, two_outputs_of_one_command_for_one_file_are_refused)
{
	char *d = tmp_dir(), args[2048];
	/* the trace would have replaced report.json, exit 0 */
	snprintf(args, sizeof(args), "mkdir -p %s/o", d);
	cr_assert_eq(system(args), 0);
	snprintf(args, sizeof(args), "run %s --out %s/o --quiet --trace %s/o/../o/report.json",
		 src_path("scenarios/quickstart.json"), d, d);
	char want[1200];
	snprintf(want, sizeof(want), "ddlsim: error: --trace '%s/o/../o/report.json' is also the report.json of the "
		 "reports: give it another file", d);
	refused(args, 2, want, d);
	snprintf(args, sizeof(args), "%s/o/report.json", d);
	cr_expect(!file_exists(args));
	/* the JSON would have replaced the CSV */
	snprintf(args, sizeof(args), "collective --topology %s -e 1M --csv %s/c.out --json %s/./c.out",
		 src_path("topologies/dgx-h100.json"), d, d);
	snprintf(want, sizeof(want), "ddlsim: error: --json '%s/./c.out' is also the --csv file", d);
	refused(args, 2, want, d);
	snprintf(args, sizeof(args), "%s/c.out", d);
	cr_expect(!file_exists(args));
	/* and whatever the command, a set with one target twice publishes
	 * nothing */
	struct atomic_file af[2];
	snprintf(args, sizeof(args), "%s/x.json", d);
	cr_assert_eq(atomic_file_open(&af[0], args), 0);
	cr_assert_eq(atomic_file_open(&af[1], args), 0);
	fputs("a", af[0].f);
	fputs("b", af[1].f);
	cr_assert_eq(atomic_file_stage(&af[0]), 0);
	cr_assert_eq(atomic_file_stage(&af[1]), 0);
	cr_expect_eq(atomic_file_publish(af, 2), -EINVAL);
	cr_expect(!file_exists(args));
	free(d);
}
