/* test-admission: issue 40's admission control and the sweep's real
 * reason: a collective over its --mem-limit is refused before anything
 * is allocated, a sweep streams its points (more than a batch: every row
 * once, with shards and --resume), a reason that holds for every point
 * is exit 3 before the first point, and the lesser items (--resume right
 * after kill -9, DDLSIM_LONG_RUN_S, --check-bands, -c, an over-long
 * expression, a non-UTF-8 file name, --trace into a new --out). The exact
 * exit code and message, and nothing left behind. (How fast and how small
 * a 10^6-point sweep is: tests/bench/sweep-stream.sh, not a test.) */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "estimate.h"
#include "sanitizer.h"
#include "testutil.h"

/* A sweep file over the shipped quickstart scenario (2 DGX A100, dp 16):
 * body is the JSON members after "base". Returns its path (malloc'd). */
static char *quick_sweep(const char *dir, const char *name, const char *body)
{
	size_t n = strlen(body) + 2048;
	char *text = malloc(n);
	snprintf(text, n, "{\"schema\": \"ddlsim.sweep\", \"schema_version\": \"1.0\", \"base\": \"%s\", %s}\n",
		 src_path("scenarios/quickstart.json"), body);
	char *path = write_file(dir, name, text);
	free(text);
	return path;
}

/* A copy of the shipped quickstart scenario with absolute paths and key
 * (a top-level object's member: "parallel", "training") member set to v
 * (stolen), as dir/name. Returns its path (malloc'd). */
static char *quick_base(const char *dir, const char *name, const char *key, const char *member, json_t *v)
{
	json_t *b = json_load_file(src_path("scenarios/quickstart.json"), 0, NULL);
	json_object_set_new(b, "model", json_string(src_path("models/zoo/llama2-7b.json")));
	json_object_set_new(b, "topology", json_string(src_path("topologies/dgx-a100.json")));
	json_object_set_new(json_object_get(b, key), member, v);
	char *text = json_dumps(b, 0), *path = write_file(dir, name, text);
	free(text);
	json_decref(b);
	return path;
}

/* `ddlsim ARGS` exits want, stderr holds each of msgs (NULL-ended), and
 * dir/out does not exist. */
static void refused_with(const char *args, int want, const char *const *msgs, const char *dir)
{
	char *err = NULL, p[1200];
	int rc = run_ddlsim(args, NULL, &err);
	cr_expect_eq(rc, want, "%s: exit %d, want %d:\n%s", args, rc, want, err);
	for (int i = 0; msgs[i]; i++)
		cr_expect(err && strstr(err, msgs[i]), "%s: expected '%s' in:\n%s", args, msgs[i], err);
	snprintf(p, sizeof(p), "%s/out", dir);
	cr_expect(!file_exists(p), "%s left %s behind", args, p);
	free(err);
}

/* The text of a file (malloc'd; NULL when unreadable). */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	char *t = malloc((size_t)n + 1);
	t[fread(t, 1, (size_t)n, f)] = 0;
	fclose(f);
	return t;
}

/* The lines of a file (0 when absent). */
static long lines_of(const char *path)
{
	FILE *f = fopen(path, "r");
	long n = 0;
	int c;
	if (!f)
		return 0;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

/* ---- collective: memory estimated and refused before allocating ---- */

Test(admission, the_collective_estimate_is_the_measured_fit)
{
	/* 34 MB + 165 KB per rank + 0.8 KB per rank and size (sim/estimate.c) */
	cr_expect_float_eq(estimate_collective_bytes(4096, 1), 34e6 + 4096 * 165.8e3, 1e-3);
	cr_expect_float_eq(estimate_collective_bytes(131072, 31), 34e6 + 131072 * (165e3 + 31 * 0.8e3), 1e-3);
	/* measured peak RSS: 4,096 ranks 703 MB, 1,024 ranks 201 MB: within 2 % */
	cr_expect(fabs(estimate_collective_bytes(4096, 1) / 703e6 - 1) < 0.02);
	cr_expect(fabs(estimate_collective_bytes(1024, 1) / 201e6 - 1) < 0.02);
}

Test(admission, a_collective_over_its_mem_limit_is_refused_before_allocating)
{
	char *d = tmp_dir(), args[2400], csv[1100];
	snprintf(csv, sizeof(csv), "%s/out", d);
	snprintf(args, sizeof(args), "collective --topology %s --nodes 512 -g 8 -b 1M -e 1M --mem-limit 0.5 --csv %s",
		 src_path("topologies/dgx-h100.json"), csv);
	static const char *const m1[] = { "ddlsim: error: collective on 4096 ranks (512 nodes x 8 GPUs), 1 size "
					  "needs about 0.713 GB of memory (estimated), over the --mem-limit of "
					  "0.5 GB: raise --mem-limit or make it smaller", NULL };
	refused_with(args, 3, m1, d);
	/* the documented maximum: 16,384 nodes, the 31 sizes of -b 8 -e 8G -f 2
	 * (under a 4 GB address space: should the refusal go, the run fails
	 * at once instead of taking the machine's memory; ASan reserves its
	 * shadow memory in address space, so not under ASan) */
	struct rlimit was, low;
	cr_assert_eq(getrlimit(RLIMIT_AS, &was), 0);
	low = was;
	low.rlim_cur = was.rlim_max < 4000000000UL ? was.rlim_max : 4000000000UL;
	if (!TEST_ASAN)
		cr_assert_eq(setrlimit(RLIMIT_AS, &low), 0);
	snprintf(args, sizeof(args), "collective --topology %s --nodes 16384 -g 8 -b 8 -e 8G -f 2 --mem-limit 20 --csv %s",
		 src_path("topologies/dgx-h100.json"), csv);
	static const char *const m2[] = { "collective on 131072 ranks (16384 nodes x 8 GPUs), 31 sizes needs "
					  "about 24.9 GB of memory (estimated), over the --mem-limit of 20 GB", NULL };
	refused_with(args, 3, m2, d);
	/* within its limit it runs */
	cr_assert_eq(setrlimit(RLIMIT_AS, &was), 0);
	snprintf(args, sizeof(args), "collective --topology %s --nodes 2 -g 8 -b 1M -e 1M --mem-limit 1 --csv %s",
		 src_path("topologies/dgx-h100.json"), csv);
	cr_expect_eq(run_ddlsim(args, NULL, NULL), 0);
	cr_expect_eq(lines_of(csv), 2);
	free(d);
}

/* -c is nccl-tests' check iteration count (common.cu datacheck): 0 or more */
Test(admission, collective_check_is_a_count)
{
	char args[1200], *err = NULL;
	snprintf(args, sizeof(args), "collective --topology %s -c -1 -b 1M -e 1M",
		 src_path("topologies/dgx-h100.json"));
	cr_expect_eq(run_ddlsim(args, NULL, &err), 2);
	cr_expect(strstr(err, "ddlsim: error: -c: out of range or not a number, got '-1'"), "%s", err);
	free(err);
	snprintf(args, sizeof(args), "collective --topology %s -c 0 -b 1M -e 1M",
		 src_path("topologies/dgx-h100.json"));
	cr_expect_eq(run_ddlsim(args, NULL, NULL), 0);
}

Test(admission, compare_and_validation_take_mem_limit)
{
	char args[2400], *err = NULL;
	snprintf(args, sizeof(args), "compare %s %s --mem-limit nan", src_path("scenarios/quickstart.json"),
		 src_path("scenarios/quickstart.json"));
	cr_expect_eq(run_ddlsim(args, NULL, &err), 2);
	cr_expect(strstr(err, "--mem-limit: expected a number in [0.01, 1e+06], got 'nan'"), "%s", err);
	free(err);
	snprintf(args, sizeof(args), "validation %s --mem-limit 0 --quiet", src_path("validation/bloom-a100"));
	cr_expect_eq(run_ddlsim(args, NULL, &err), 2);
	cr_expect(strstr(err, "--mem-limit: expected a number in [0.01, 1e+06], got '0'"), "%s", err);
	free(err);
}

Test(admission, a_simulation_over_its_mem_limit_is_refused_before_it_starts, .timeout = 120)
{
	/* quickstart folds to 1 of 16 ranks: 4,458 events, 34.3 MB estimated */
	char *d = tmp_dir(), args[2400];
	const char *q = src_path("scenarios/quickstart.json");
	static const char *const m[] = { "ddlsim: error: simulating ", "quickstart.json (1 of 16 ranks simulated, "
					 "4458 events) needs about 0.0343 GB of memory (estimated), over the "
					 "--mem-limit of 0.02 GB: raise --mem-limit or make it smaller\n", NULL };
	snprintf(args, sizeof(args), "run %s --out %s/out --mem-limit 0.02 --quiet", q, d);
	refused_with(args, 3, m, d);
	snprintf(args, sizeof(args), "compare %s %s --mem-limit 0.02", q, q);
	refused_with(args, 3, m, d);
	/* a sweep records the point over the limit with its estimate and
	 * runs the others: Llama 2 7B data parallel on 1,024 GPUs, folded
	 * (1 rank) and not (1,024 ranks, 209 MB estimated) */
	char *base = quick_base(d, "b.json", "parallel", "dp", json_integer(1024)), body[3000], p[1200];
	json_t *b = json_load_file(base, 0, NULL);
	json_object_set_new(b, "nodes", json_integer(128));
	json_object_set_new(json_object_get(b, "training"), "global_batch", json_integer(1024));
	json_dump_file(b, base, 0);
	json_decref(b);
	/* (under ASan no point may run under an address-space limit: ASan's
	 * shadow memory is address space; the refused point runs nowhere) */
	snprintf(body, sizeof(body), "{\"schema\": \"ddlsim.sweep\", \"schema_version\": \"1.0\", \"base\": \"%s\", "
		 "\"axes\": {\"simulation.fold\": %s}, \"output\": {\"dir\": \"%s/o\"}}", base,
		 TEST_ASAN ? "[\"off\"]" : "[\"auto\", \"off\"]", d);
	char *s = write_file(d, "s.json", body), *err = NULL;
	snprintf(args, sizeof(args), "sweep %s --mem-limit 0.2 --quiet", s);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	snprintf(p, sizeof(p), "%s/o/points.csv", d);
	char *csv = slurp(p);
	cr_assert_not_null(csv);
	cr_expect(strstr(csv, TEST_ASAN ? "\n0,s,off,," : "\n1,s,off,,") && strstr(csv, ",invalid,\"needs about 0.209 GB of memory (estimated: 1024 of "
							"1024 ranks simulated, 178.2 k events), over the --mem-limit of "
							"0.2 GB\""), "%s", csv);
	if (!TEST_ASAN)
		cr_expect(strstr(csv, "\n0,s,auto,Llama-2 7B,"), "%s", csv);
	free(csv), free(err), free(s), free(base), free(d);
}

/* ---- sweep: streamed points ---- */

/* The points of a sweep's CSV, each counted (point index -> rows). */
static void count_points(const char *csv, int *seen, int n)
{
	FILE *f = fopen(csv, "r");
	cr_assert_not_null(f, "%s", csv);
	char line[8192];
	cr_assert_not_null(fgets(line, sizeof(line), f));
	while (fgets(line, sizeof(line), f)) {
		int i = atoi(line);
		cr_assert(i >= 0 && i < n, "point %d in %s", i, csv);
		seen[i]++;
	}
	fclose(f);
}

Test(admission, a_sweep_of_more_points_than_a_batch_keeps_each_row_once, .timeout = 240)
{
	/* 1,300 points, three batches of 512; 3 simulate (constraint), the
	 * rest are invalid rows */
	char *d = tmp_dir(), args[2400], p[1200];
	char *s = quick_sweep(d, "s.json", "\"axes\": {\"cost.usd_per_gpu_hour\": \"1..1300\"}, "
			      "\"constraints\": [\"cost.usd_per_gpu_hour % 500 == 1\"]");
	snprintf(args, sizeof(args), "sweep %s --out %s/o --quiet", s, d);
	cr_assert_eq(run_ddlsim(args, NULL, NULL), 0);
	int seen[1300] = { 0 };
	snprintf(p, sizeof(p), "%s/o/points.csv", d);
	count_points(p, seen, 1300);
	for (int i = 0; i < 1300; i++)
		cr_expect_eq(seen[i], 1, "point %d: %d rows", i, seen[i]);
	snprintf(p, sizeof(p), "%s/o/points.jsonl", d);
	cr_expect_eq(lines_of(p), 1300);
	snprintf(p, sizeof(p), "%s/o/points.ddlsim-origin.json", d);
	json_t *o = json_load_file(p, 0, NULL);
	cr_expect_eq(json_integer_value(json_object_get(o, "points")), 1300);
	json_decref(o);

	/* --resume of an output cut to 700 rows: the other 600, once each */
	snprintf(args, sizeof(args), "sh -c 'head -n 701 %s/o/points.csv > %s/c && mv %s/c %s/o/points.csv && "
		 "head -n 700 %s/o/points.jsonl > %s/j && mv %s/j %s/o/points.jsonl'", d, d, d, d, d, d, d, d);
	cr_assert_eq(system(args), 0);
	snprintf(args, sizeof(args), "sweep %s --out %s/o --quiet --resume", s, d);
	cr_assert_eq(run_ddlsim(args, NULL, NULL), 0);
	memset(seen, 0, sizeof(seen));
	snprintf(p, sizeof(p), "%s/o/points.csv", d);
	count_points(p, seen, 1300);
	for (int i = 0; i < 1300; i++)
		cr_expect_eq(seen[i], 1, "after --resume, point %d: %d rows", i, seen[i]);

	/* shard 2 of 3: the points with index mod 3 = 1, 433 of them */
	snprintf(args, sizeof(args), "sweep %s --out %s/sh --quiet --shard 2/3", s, d);
	cr_assert_eq(run_ddlsim(args, NULL, NULL), 0);
	memset(seen, 0, sizeof(seen));
	snprintf(p, sizeof(p), "%s/sh/points.shard-2-of-3.csv", d);
	count_points(p, seen, 1300);
	for (int i = 0; i < 1300; i++)
		cr_expect_eq(seen[i], i % 3 == 1, "shard 2/3, point %d: %d rows", i, seen[i]);
	cr_expect_eq(lines_of(p), 1 + 433);
	free(s);
	free(d);
}

/* ---- sweep: a reason that holds for every point ---- */

Test(admission, a_reason_for_every_point_is_exit_3_before_the_first_point)
{
	char *d = tmp_dir(), args[2400];
	static const struct {
		const char *body, *msg[3];
	} cases[] = {
		/* a typo in a derived key */
		{ "\"axes\": {\"nodes\": [2, 4]}, \"derived\": {\"training.global_batch\": \"dp * micro_batchh\"}",
		  { "s.json: error: every point fails for a reason that does not depend on the point (point 0 "
		    "{\"nodes\":2,\"training.global_batch\":null}): derived 'training.global_batch' = \"dp * "
		    "micro_batchh\": unknown variable 'micro_batchh' at column 6", NULL } },
		/* an unknown name in a constraint */
		{ "\"axes\": {\"nodes\": [2, 4]}, \"constraints\": [\"nodez > 1\"]",
		  { "(point 0 {\"nodes\":2}): constraint \"nodez > 1\": unknown variable 'nodez' at column 1", NULL } },
		/* an axis on a key of the model (a file name in the scenario) */
		{ "\"axes\": {\"model.hidden\": [1024, 2048]}",
		  { "(point 0 {\"model.hidden\":1024}): axis 'model.hidden': a part of the path is not an object "
		    "in the base scenario", NULL } },
		/* an axis on a key the scenario does not have */
		{ "\"axes\": {\"training.seq_lenn\": [1024, 2048]}",
		  { "quickstart.json: /training/seq_lenn: error: unknown key 'seq_lenn' (did you mean 'seq_len'?)",
		    "s.json: error: every point fails for a reason that does not depend on the point (see above: 2 "
		    "points sampled, the same reason, at a key no axis or derived value sets)", NULL } },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char body[2000];
		snprintf(body, sizeof(body), "%s, \"output\": {\"dir\": \"%s/out\"}", cases[i].body, d);
		char *s = quick_sweep(d, "s.json", body);
		snprintf(args, sizeof(args), "sweep %s --quiet", s);
		refused_with(args, 3, cases[i].msg, d);
		/* validate says exit 3 too */
		snprintf(args, sizeof(args), "validate %s", s);
		cr_expect_eq(run_ddlsim(args, NULL, NULL), 3, "validate on case %zu", i);
		free(s);
	}
	/* an invalid base that no axis changes: the base's own message, as
	 * validate gives it */
	char *base = quick_base(d, "b.json", "training", "global_batch", json_integer(7)), body[2400];
	snprintf(body, sizeof(body), "{\"schema\": \"ddlsim.sweep\", \"schema_version\": \"1.0\", \"base\": \"%s\", "
		 "\"axes\": {\"cost.usd_per_gpu_hour\": [1, 2]}, \"output\": {\"dir\": \"%s/out\"}}", base, d);
	char *s = write_file(d, "s.json", body);
	static const char *const m[] = { "b.json: /training/global_batch: error: must be divisible by dp x "
					 "micro_batch = 16 x 1 = 16, got 7\n",
					 "s.json: /base: error: the base scenario is invalid (see above) and no axis or "
					 "derived value changes what is wrong: every point fails the same way\n", NULL };
	snprintf(args, sizeof(args), "sweep %s --quiet", s);
	refused_with(args, 3, m, d);
	free(s), free(base), free(d);
}

Test(admission, a_reason_of_some_points_is_their_row, .timeout = 120)
{
	/* tp 3 does not divide the node's 8 GPUs: point 1 only; the derived
	 * key names the axis's path, so it may depend on the point */
	char *d = tmp_dir(), args[2400], p[1200], *err = NULL;
	char body[1200];
	snprintf(body, sizeof(body), "\"axes\": {\"parallel.tp\": [1, 3]}, \"derived\": {\"parallel.dp\": "
		 "\"16 / tp\"}, \"output\": {\"dir\": \"%s/o\"}", d);
	char *s = quick_sweep(d, "s.json", body);
	snprintf(args, sizeof(args), "sweep %s --quiet", s);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	snprintf(p, sizeof(p), "%s/o/points.csv", d);
	cr_expect_eq(lines_of(p), 3);
	char *csv = slurp(p);
	cr_expect(strstr(csv, ",invalid,"), "%s", csv);
	cr_expect(strstr(csv, ",ok,"), "%s", csv);
	free(csv), free(err), free(s), free(d);
}

Test(admission, an_invalid_base_that_an_axis_fixes_is_swept)
{
	/* the base's dp 5 is wrong; the axis sets dp at every point */
	char *d = tmp_dir(), args[2400], p[1200], *err = NULL;
	char *base = quick_base(d, "b.json", "parallel", "dp", json_integer(5)), body[3000];
	snprintf(body, sizeof(body), "{\"schema\": \"ddlsim.sweep\", \"schema_version\": \"1.0\", \"base\": \"%s\", "
		 "\"axes\": {\"parallel.dp\": [16, 3]}, \"output\": {\"dir\": \"%s/o\"}}", base, d);
	char *s = write_file(d, "s.json", body);
	snprintf(args, sizeof(args), "sweep %s --quiet", s);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	snprintf(p, sizeof(p), "%s/o/points.csv", d);
	cr_expect_eq(lines_of(p), 3);
	free(err), free(s), free(base), free(d);
}

/* ---- the lesser items ---- */

Test(admission, an_over_long_expression_is_quoted_as_an_excerpt)
{
	char *d = tmp_dir(), args[2400];
	char *expr = malloc(600001), *body = malloc(601000);
	memset(expr, 'a', 600000);
	expr[600000] = 0;
	snprintf(body, 601000, "\"axes\": {\"nodes\": [2]}, \"derived\": {\"training.global_batch\": \"%s\"}, "
		 "\"output\": {\"dir\": \"%s/out\"}", expr, d);
	char *s = quick_sweep(d, "s.json", body);
	snprintf(args, sizeof(args), "sweep %s --quiet", s);
	char *err = NULL;
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3);
	cr_expect(strstr(err, "s.json: /derived/training.global_batch: error: expression of 600000 bytes is "
			 "longer than the 4096 an expression may have in \""), "%s", err);
	cr_expect(strstr(err, "a...\" (bytes 0..80 of 600000)\n"), "%.2000s", err);
	cr_expect(strlen(err) < 1000, "%zu bytes on stderr", strlen(err));
	free(err), free(s), free(body), free(expr), free(d);
}

Test(admission, an_invalid_long_run_threshold_is_a_warning)
{
	char args[1200], *err = NULL;
	snprintf(args, sizeof(args), "run %s --out - --quiet", src_path("scenarios/quickstart.json"));
	setenv("DDLSIM_LONG_RUN_S", "soon", 1);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 0);
	cr_expect(strstr(err, "ddlsim: warning: DDLSIM_LONG_RUN_S: expected a number of seconds >= 0, got "
			 "'soon'; using the default, 30 s\n"), "%s", err);
	free(err);
	setenv("DDLSIM_LONG_RUN_S", "-1", 1);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 0);
	cr_expect(strstr(err, "got '-1'"), "%s", err);
	free(err);
	unsetenv("DDLSIM_LONG_RUN_S");
}

Test(admission, a_malformed_check_bands_file_is_invalid_input_before_the_suite)
{
	char *d = tmp_dir(), args[2400], *err = NULL;
	char *b = write_file(d, "b.json", "{\"schema\": \"ddlsim.validation-bands\", \"schema_version\": \"2.0\", "
			     "\"families\": [{\"runs\": 1}, 7], \"memory\": []}");
	snprintf(args, sizeof(args), "validation %s --check-bands %s --quiet", src_path("validation/bloom-a100"), b);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3);
	cr_expect(strstr(err, "b.json: /families/0/family: error: expected the family's name (a string), got "
			 "nothing (the key is missing)\n"), "%s", err);
	cr_expect(strstr(err, "b.json: /families/1: error: expected an object (a family's row), got integer\n"),
		  "%s", err);
	cr_expect(strstr(err, "b.json: /memory: error: expected an object (the memory families' errors), got "
			 "array\n"), "%s", err);
	cr_expect(strstr(err, "ddlsim: 1 invalid validation input; nothing was simulated"), "%s", err);
	free(err), free(b), free(d);
}

Test(admission, a_file_name_that_is_not_utf8_is_refused_up_front)
{
	char *d = tmp_dir(), args[4000], name[1200], msg[1400];
	snprintf(name, sizeof(name), "%s/q\xff.json", d);
	char *text = slurp(src_path("scenarios/quickstart.json"));
	FILE *f = fopen(name, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
	free(text);
	snprintf(msg, sizeof(msg), "ddlsim: error: '%s/q\\xff.json': the file name is not valid UTF-8 (byte 0xff at "
		 "offset %zu)", d, strlen(d) + 2);
	const char *const msgs[] = { msg, NULL };
	snprintf(args, sizeof(args), "run '%s' --out %s/out --quiet", name, d);
	refused_with(args, 3, msgs, d);
	char *err = NULL;
	snprintf(args, sizeof(args), "compare '%s' '%s'", name, name);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3);
	cr_expect(strstr(err, msg), "%s", err);
	free(err);
	char body[2400];
	snprintf(body, sizeof(body), "\"axes\": {\"nodes\": [2]}, \"output\": {\"dir\": \"%s/out\"}", d);
	char *s = quick_sweep(d, "q\xff.json", body);  /* the sweep file's own name */
	snprintf(args, sizeof(args), "sweep '%s' --quiet", s);
	refused_with(args, 3, msgs, d);
	free(s), free(d);
}

Test(admission, a_trace_into_the_new_out_folder_is_written)
{
	char *d = tmp_dir(), args[2400], p[1200], *err = NULL;
	snprintf(args, sizeof(args), "run %s --out %s/new --trace %s/new/t/trace.json --quiet",
		 src_path("scenarios/quickstart.json"), d, d);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	snprintf(p, sizeof(p), "%s/new/t/trace.json", d);
	cr_expect(file_exists(p));
	snprintf(p, sizeof(p), "%s/new/report.json", d);
	cr_expect(file_exists(p));
	free(err), free(d);
}

Test(admission, resume_right_after_kill_9_is_not_refused, .timeout = 180)
{
	/* points of a few seconds each (256 ranks, unfolded, 4 pipeline
	 * stages), two at once: kill -9 while both run */
	char *d = tmp_dir(), p[1200], args[2400];
	json_t *b = json_load_file(src_path("scenarios/quickstart.json"), 0, NULL);
	json_object_set_new(b, "model", json_string(src_path("models/zoo/llama2-7b.json")));
	json_object_set_new(b, "topology", json_string(src_path("topologies/dgx-a100.json")));
	json_object_set_new(b, "nodes", json_integer(32));
	json_object_set_new(b, "parallel", json_pack("{s:i,s:i,s:i}", "dp", 8, "tp", 8, "pp", 4));
	json_object_set_new(json_object_get(b, "training"), "global_batch", json_integer(256));
	json_object_set_new(b, "simulation", json_pack("{s:s}", "fold", "off"));
	char *text = json_dumps(b, 0), *base = write_file(d, "b.json", text);
	free(text);
	json_decref(b);
	char body[3000];
	snprintf(body, sizeof(body), "{\"schema\": \"ddlsim.sweep\", \"schema_version\": \"1.0\", \"base\": \"%s\", "
		 "\"axes\": {\"training.global_batch\": [64, 128, 256, 512]}}", base);
	char *s = write_file(d, "s.json", body);
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		char out[1200];
		snprintf(out, sizeof(out), "%s/o", d);
		int nul = open("/dev/null", O_WRONLY);
		dup2(nul, 1);
		dup2(nul, 2);
		execl(getenv("DDLSIM_BIN"), "ddlsim", "sweep", s, "--out", out, "-j", "2", "--quiet", (char *)NULL);
		_exit(127);
	}
	snprintf(p, sizeof(p), "%s/o/points.csv", d);
	struct timespec nap = { 0, 20 * 1000 * 1000 };
	for (int i = 0; i < 500 && !file_exists(p); i++)
		nanosleep(&nap, NULL);
	cr_assert(file_exists(p));
	nanosleep(&(struct timespec){ 0, 300 * 1000 * 1000 }, NULL);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	char *err = NULL;
	snprintf(args, sizeof(args), "sweep %s --out %s/o -j 2 --quiet --resume", s, d);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	cr_expect_eq(lines_of(p), 5);
	free(err), free(s), free(base), free(d);
}
