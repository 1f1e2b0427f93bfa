/* test-cli: the command line end to end: help, version, usage errors,
 * `validate` on every shipped file, `run` on every shipped scenario. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sys/stat.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

Test(cli, help_documents_exit_codes)
{
	char *out = NULL;
	cr_assert_eq(run_ddlsim("--help", &out, NULL), 0);
	cr_assert(strstr(out, "3  invalid input file"));
	cr_assert(strstr(out, "run "));
	cr_assert(strstr(out, "validate "));
}

Test(cli, version_prints_the_version)
{
	char *out = NULL;
	cr_assert_eq(run_ddlsim("--version", &out, NULL), 0);
	cr_assert_str_eq(out, "ddlsim " DDLSIM_TEST_VERSION "\n");
}

Test(cli, unknown_command_is_a_usage_error)
{
	char *err = NULL;
	cr_assert_eq(run_ddlsim("frobnicate", NULL, &err), 2);
	cr_assert(strstr(err, "ddlsim: error: unknown command 'frobnicate'"));
	cr_assert_eq(run_ddlsim("run", NULL, NULL), 2);
	cr_assert_eq(run_ddlsim("run a.json --bogus", NULL, NULL), 2);
}

/* Every command takes --opt=value as --opt value (cli/options.h), and a
 * flag given a value is a usage error naming it. */
Test(cli, long_options_take_their_value_after_an_equals_sign, .timeout = 120)
{
	char *d = tmp_dir(), args[2400], *out = NULL, *err = NULL;
	snprintf(args, sizeof(args), "run %s --out=%s/q --format=json,csv --quiet",
		 src_path("scenarios/quickstart.json"), d);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	free(err);
	snprintf(args, sizeof(args), "%s/q/report.csv", d);
	cr_expect_eq(access(args, F_OK), 0, "no %s", args);
	snprintf(args, sizeof(args), "plan %s --top=2 --screen-only --out=%s/p",
		 src_path("scenarios/goals/llama3-70b-per-token.json"), d);
	cr_expect_eq(run_ddlsim(args, &out, &err), 0, "%s", err);
	free(out);
	free(err);
	snprintf(args, sizeof(args), "run %s --quiet=1", src_path("scenarios/quickstart.json"));
	cr_expect_eq(run_ddlsim(args, NULL, &err), 2);
	cr_expect(strstr(err, "run: option '--quiet' takes no value, got '--quiet=1'"), "%s", err);
	free(err);
	snprintf(args, sizeof(args), "sweep x.json --resume=yes");
	cr_expect_eq(run_ddlsim(args, NULL, &err), 2);
	cr_expect(strstr(err, "sweep: option '--resume' takes no value, got '--resume=yes'"), "%s", err);
	free(err);
	free(d);
}

static void each(const char *pattern, void (*fn)(const char *path))
{
	glob_t g;
	cr_assert_eq(glob(src_path(pattern), 0, NULL, &g), 0, "no files match %s", pattern);
	for (size_t i = 0; i < g.gl_pathc; i++)
		fn(g.gl_pathv[i]);
	globfree(&g);
}

/* True if path is a validation case on testutil's known_not_fitting. */
static bool known_not_to_fit(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	for (int i = 0; known_not_fitting[i]; i++) {
		size_t k = strlen(known_not_fitting[i]);
		if (strstr(path, "/validation/") && !strncmp(base, known_not_fitting[i], k) &&
		    !strcmp(base + k, ".json"))
			return true;
	}
	return false;
}

/* validate exits 0 for every shipped file but the scenarios that do not
 * fit (exit 4, cmd_validate.c): the one shipped to show such a plan,
 * DeepSeek-V3 in its report's plan, which ddlsim counts 24.3 GB over
 * (the scenario's description says by which tensors), and the published
 * runs testutil.h lists as known not to fit. */
static void validate(const char *path)
{
	char args[1200], *err = NULL, *out = NULL;
	bool nofit = strstr(path, "/scenarios/gpt3-175b-dp1024.json") != NULL ||
		     strstr(path, "/scenarios/deepseek-v3-h100-2048.json") != NULL || known_not_to_fit(path);
	snprintf(args, sizeof(args), "validate %s", path);
	int rc = run_ddlsim(args, &out, &err);
	cr_expect_eq(rc, nofit ? 4 : 0, "%s: %s%s", path, out, err);
	cr_expect(strstr(out, nofit ? ": valid, but does not fit" : ": ok"), "%s", out);
	free(out), free(err);
}

Test(cli, validate_every_shipped_scenario) { each("scenarios/*.json", validate); each("scenarios/*/*.json", validate); }
Test(cli, validate_every_shipped_topology) { each("topologies/*.json", validate); }
Test(cli, validate_every_shipped_model) { each("models/zoo/*.json", validate); each("models/zoo/*/*.json", validate); }

/* Issue 38: every published configuration trained, so each fits. */
Test(cli, every_validation_case_fits) { each("validation/*-*/*.json", validate); }

/* A plan over its GPUs' memory: validate says so and exits 4 (its files
 * are valid), run warns even when quiet and exits 0. gpt-oss-120b at PP 2
 * needs 90.9 GB of an H100's 85.5 (its shipped scenario runs PP 4). */
Test(cli, a_plan_that_does_not_fit_is_said, .timeout = 120)
{
	char *d = tmp_dir(), sc[2048], args[2600], *err = NULL, *out = NULL;
	snprintf(sc, sizeof(sc),
		 "{\"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\", \"model\": \"%s\","
		 " \"topology\": \"%s\", \"nodes\": 16, \"parallel\": {\"tp\": 1, \"pp\": 2, \"ep\": 8,"
		 " \"zero\": 1}, \"training\": {\"seq_len\": 8192, \"global_batch\": 512, \"micro_batch\": 1,"
		 " \"precision\": \"bf16\"}}", src_path("models/zoo/gpt-oss-120b.json"),
		 src_path("topologies/dgx-h100.json"));
	char *p = write_file(d, "s.json", sc);
	snprintf(args, sizeof(args), "validate '%s'", p);
	cr_expect_eq(run_ddlsim(args, &out, &err), 4, "%s", err);
	cr_expect(strstr(out, "s.json: valid, but does not fit: stage 0 needs 90.9 GB per GPU of 85.5 GB "
			      "(short by 5.4 GB)"), "%s", out);
	free(out), free(err);
	snprintf(args, sizeof(args), "run '%s' -q --out '%s/o'", p, d);
	out = err = NULL;
	cr_expect_eq(run_ddlsim(args, &out, &err), 0, "%s", err);
	cr_expect(strstr(err, "s.json: the plan does not fit in GPU memory: stage 0 needs 90.9 GB per GPU, 5.4 GB "
			      "more than it has"), "%s", err);
	free(out), free(err), free(p), free(d);
}

Test(cli, validate_rejects_an_unknown_schema)
{
	char *d = tmp_dir();
	char *p = write_file(d, "x.json", "{\"schema\": \"ddlsim.nothing\", \"schema_version\": \"1.0\"}");
	char args[1200], *err = NULL, want[1400];
	snprintf(args, sizeof(args), "validate %s", p);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 3);
	snprintf(want, sizeof(want), "%s: /schema: error: expected \"ddlsim.scenario\", \"ddlsim.model\", "
		 "\"ddlsim.topology\", \"ddlsim.gpu\", \"ddlsim.profile\", \"ddlsim.sweep\" or \"ddlsim.goal\", got 'ddlsim.nothing'\n", p);
	cr_assert_str_eq(err, want);
}

Test(cli, validate_reads_profiles_and_rejects_unknown_options)
{
	char args[1200], *out = NULL, *err = NULL;
	snprintf(args, sizeof(args), "validate %s", src_path("tests/data/profile-synthetic-h100.json"));
	cr_expect_eq(run_ddlsim(args, &out, &err), 0, "%s", err);
	cr_expect(strstr(out, "profile-synthetic-h100.json: ok"), "%s", out);
	free(out);
	free(err);
	cr_expect_eq(run_ddlsim("validate x.json --bogus", NULL, &err), 2);
	cr_expect(strstr(err, "unknown option '--bogus' for 'validate'"), "%s", err);
	free(err);
}

Test(cli, validate_platform_builds_every_gpu_or_says_why_not)
{
	char args[1200], want[1400], *out = NULL, *err = NULL;
	const char *topo = src_path("topologies/dgx-h100-fattree3.json");
	snprintf(args, sizeof(args), "validate --platform 33 %s", topo);
	cr_expect_eq(run_ddlsim(args, &out, &err), 0, "%s", err);
	snprintf(want, sizeof(want), "%s: ok, platform of 33 nodes (264 GPUs) built in ", topo);
	cr_expect(!strncmp(out, want, strlen(want)), "%s", out);
	free(out);
	free(err);
	snprintf(args, sizeof(args), "validate --platform 8193 %s", topo);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 1);
	snprintf(want, sizeof(want), "%s: /fabric/radix: error: a 3-level fat tree of radix 64 holds "
		 "at most 8192 nodes (4 per leaf), got 8193\n", topo);
	cr_expect_str_eq(err, want);
	free(err);
	snprintf(args, sizeof(args), "validate --platform 0 %s", topo);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 2);
	cr_expect(strstr(err, "--platform expects a node count from 1 to 16384, got '0'"), "%s", err);
	free(err);
	snprintf(args, sizeof(args), "validate --platform 4 %s %s", topo, topo);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 2);
	cr_expect(strstr(err, "'validate --platform' needs a node count and one topology file"), "%s", err);
	free(err);
}

Test(cli, a_fifo_or_a_directory_is_an_error_not_a_hang, .timeout = 10)
{
	char *d = tmp_dir(), fifo[1100], args[2400], want[2400], *err = NULL;
	snprintf(fifo, sizeof(fifo), "%s/model.json", d);
	cr_assert_eq(mkfifo(fifo, 0600), 0);
	snprintf(args, sizeof(args), "validate %s %s", fifo, d);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3);
	snprintf(want, sizeof(want), "%s: error: '%s' is a FIFO, expected a regular file\n"
		 "%s: error: '%s' is a directory, expected a regular file\n", fifo, fifo, d, d);
	cr_expect_str_eq(err, want);
	free(err);
	free(d);
}

Test(cli, an_unknown_key_suggests_the_nearest_known_key)
{
	char *d = tmp_dir(), args[1200], text[4096], *err = NULL;
	snprintf(text, sizeof(text),
		 "{\"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\",\n"
		 " \"model\": \"%s\",\n \"topology\": \"%s\", \"nodes\": 1,\n"
		 " \"training\": {\"seq_len\": 4096, \"global_batch\": 8, \"micro_bach\": 1}}\n",
		 src_path("models/zoo/llama2-7b.json"), src_path("topologies/dgx-a100.json"));
	char *p = write_file(d, "s.json", text);
	snprintf(args, sizeof(args), "validate %s", p);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3);
	cr_expect(strstr(err, "/training/micro_bach: error: unknown key 'micro_bach' (did you mean 'micro_batch'?)"),
		  "%s", err);
	free(err);
	free(p);
	free(d);
}

/* Whether dir holds a file whose name has ".tmp." in it. */
static bool has_temporary(const char *dir)
{
	DIR *dh = opendir(dir);
	bool yes = false;
	struct dirent *e;
	while (dh && (e = readdir(dh)))
		yes |= strstr(e->d_name, ".tmp.") != NULL;
	if (dh)
		closedir(dh);
	return yes;
}

/* The signal goes only after the trace's temporary exists: the handler is
 * installed before any output is opened, so it is in place (no race with
 * a slow start under a sanitizer). */
Test(cli, sigint_removes_temporaries_and_exits_130, .timeout = 120)
{
	char *d = tmp_dir(), out[1100], errp[1100], trace[1100];
	snprintf(out, sizeof(out), "%s/out", d);
	snprintf(errp, sizeof(errp), "%s/err", d);
	snprintf(trace, sizeof(trace), "%s/t.json", d);
	char *argv[] = { getenv("DDLSIM_BIN"), "run", (char *)src_path("scenarios/megatron/1t.json"),
			 "--out", out, "--trace", trace, NULL };
	pid_t pid = test_spawn(argv, NULL, NULL, NULL, errp, false);
	int st, waited = 0;
	while (!has_temporary(d) && waited < 100000 && waitpid(pid, &st, WNOHANG) == 0) {
		usleep(1000);  /* up to 100 s: loading the scenario under ASan is slow */
		waited++;
	}
	cr_assert(has_temporary(d), "the trace's temporary never appeared");
	kill(pid, SIGINT);
	waitpid(pid, &st, 0);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 130, "status %d", st);
	FILE *f = fopen(errp, "r");
	char msg[512] = { 0 };
	cr_assert(f);
	size_t n = fread(msg, 1, sizeof(msg) - 1, f);
	msg[n] = 0;
	fclose(f);
	cr_expect(strstr(msg, "ddlsim: interrupted by SIGINT while "), "%s", msg);
	cr_expect(!file_exists(out), "an output directory was left behind");
	cr_expect(!has_temporary(d), "a temporary was left behind");
	cr_expect(!file_exists(trace), "a trace was published");
	free(d);
}

/* Issue 44 item 5: an interrupted compare keeps what finished. With one
 * job, the quickstart (0.1 s) ends before the 1T model (seconds) starts;
 * SIGINT goes once the progress says one is done. */
Test(cli, sigint_during_compare_keeps_the_finished_scenarios, .timeout = 240)
{
	char *d = tmp_dir(), outp[1100], errp[1100], cmp[1100];
	snprintf(outp, sizeof(outp), "%s/stdout", d);
	snprintf(errp, sizeof(errp), "%s/stderr", d);
	snprintf(cmp, sizeof(cmp), "%s/cmp.json", d);
	char *argv[] = { getenv("DDLSIM_BIN"), "compare", (char *)src_path("scenarios/quickstart.json"),
			 (char *)src_path("scenarios/megatron/1t.json"), "--out", cmp, NULL };
	pid_t pid = test_spawn(argv, NULL, NULL, outp, errp, false);
	int st, waited = 0;
	char *err = NULL;
	while (waited < 200000 && waitpid(pid, &st, WNOHANG) == 0) {
		free(err);
		err = test_file_text(errp);
		if (err && strstr(err, "\"done\": 1,"))
			break;
		usleep(1000);
		waited++;
	}
	cr_assert(err && strstr(err, "\"done\": 1,"), "no scenario finished: %s", err ? err : "");
	kill(pid, SIGINT);
	waitpid(pid, &st, 0);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 130, "status %d", st);
	free(err);
	err = test_file_text(errp);
	char *out = test_file_text(outp);
	cr_assert(err && out);
	cr_expect(strstr(err, "ddlsim: interrupted by SIGINT: 1 of 2 scenarios finished; the table and "
			      "--out hold them"), "%s", err);
	cr_expect(strstr(out, "best that fits: quickstart"), "%s", out);
	cr_expect(!strstr(out, "megatron-1t"), "the interrupted scenario is in the table: %s", out);
	json_t *j = json_load_file(cmp, 0, NULL);
	cr_assert(j, "--out was not written");
	json_t *sc = json_object_get(j, "scenarios");
	cr_expect_eq(json_array_size(sc), 1);
	cr_expect_str_eq(json_string_value(json_object_get(json_array_get(sc, 0), "scenario")), "quickstart");
	json_decref(j);
	free(out);
	free(err);
	free(d);
}

Test(cli, a_model_of_a_million_layers_is_refused_before_allocating)
{
	char *d = tmp_dir(), args[1200], *err = NULL;
	char *p = write_file(d, "m.json",
		"{\"schema\": \"ddlsim.model\", \"schema_version\": \"1.0\", \"name\": \"x\",\n"
		" \"source\": \"test\", \"architecture\": \"decoder_transformer\", \"layers\": 1000000,\n"
		" \"hidden_size\": 1024, \"heads\": 8, \"vocab_size\": 1000}\n");
	snprintf(args, sizeof(args), "validate %s", p);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3);
	cr_expect(strstr(err, "/layers: error: expected at most 100000 layers, got 1000000"), "%s", err);
	free(err);
	free(p);
	free(d);
}

/* The README's two commands name the binary the build makes and the test
 * command .ci/run runs. */
Test(cli, readme_commands_match_the_build_and_ci)
{
	FILE *f = fopen(src_path("README.md"), "r");
	cr_assert(f);
	static char readme[1 << 16];
	size_t n = fread(readme, 1, sizeof(readme) - 1, f);
	readme[n] = 0;
	fclose(f);
	const char *bin = getenv("DDLSIM_BIN");
	cr_assert(bin);
	const char *rel = strstr(bin, "/cli/ddlsim");
	cr_assert(rel, "DDLSIM_BIN %s", bin);
	cr_expect(strstr(readme, "&& ./build/cli/ddlsim run scenarios/quickstart.json"),
		  "README's first command does not run ./build/cli/ddlsim");
	cr_expect(strstr(readme, "\nmeson test -C build --print-errorlogs\n"));
	f = fopen(src_path(".ci/run"), "r");
	cr_assert(f);
	static char ci[1 << 16];
	n = fread(ci, 1, sizeof(ci) - 1, f);
	ci[n] = 0;
	fclose(f);
	cr_expect(strstr(ci, "\nmeson test -C build --print-errorlogs\n"), ".ci/run does not run the README's test command");
}

static void run_one(const char *path)
{
	char *d = tmp_dir();
	char args[2400], *err = NULL;
	snprintf(args, sizeof(args), "run %s --out %s --quiet", path, d);
	int rc = run_ddlsim(args, NULL, &err);
	cr_expect_eq(rc, 0, "%s: exit %d: %s", path, rc, err);
	json_t *r = load_report(d);
	cr_assert_not_null(r, "%s: no report.json", path);
	cr_expect_gt(jnum(r, "summary/iteration_time_s"), 0);
	cr_expect_gt(jnum(r, "summary/mfu"), 0.01);
	cr_expect_lt(jnum(r, "summary/mfu"), 1.0);
	char csv[1200];
	snprintf(csv, sizeof(csv), "%s/report.csv", d);
	cr_expect(file_exists(csv), "%s: no report.csv", path);
	json_decref(r);
}

/* The Megatron rows run in test-megatron. */
Test(cli, run_every_shipped_scenario, .timeout = 600) { each("scenarios/*.json", run_one); }

Test(cli, quickstart_report_has_the_promised_fields)
{
	char *d = tmp_dir();
	char args[1200];
	snprintf(args, sizeof(args), "run %s --out %s --quiet --per-rank", src_path("scenarios/quickstart.json"), d);
	cr_assert_eq(run_ddlsim(args, NULL, NULL), 0);
	json_t *r = load_report(d);
	cr_assert_str_eq(json_string_value(json_object_get(r, "schema")), "ddlsim.report");
	const char *keys[] = { "summary/iteration_time_s", "summary/samples_per_s", "summary/tokens_per_s",
			       "summary/model_tflops_per_gpu", "summary/mfu",
			       "breakdown/per_rank/0/compute_s", "breakdown/per_rank/15/exposed_comm_s",
			       "breakdown/per_rank/0/idle_s", "communication/bytes_per_gpu/dp",
			       "memory/per_stage/0/weights_GB", "memory/per_stage/0/gradients_GB",
			       "memory/per_stage/0/optimizer_GB", "memory/per_stage/0/activations_GB",
			       "memory/per_stage/0/total_GB", NULL };
	for (int i = 0; keys[i]; i++)
		cr_expect_gt(jnum(r, keys[i]), -1e299, "missing %s", keys[i]);
	cr_assert(json_is_boolean(json_object_get(json_object_get(r, "memory"), "fits")));
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(r, "producer"), "version")),
			 DDLSIM_TEST_VERSION);
	/* tokens/s = samples/s x seq_len; samples/s = batch / iteration time */
	double it = jnum(r, "summary/iteration_time_s");
	cr_assert_float_eq(jnum(r, "summary/samples_per_s"), 1024 / it, 1e-6);
	cr_assert_float_eq(jnum(r, "summary/tokens_per_s"), 1024 * 4096 / it, 1e-3);
	json_decref(r);
}

/* GPT-3 175B with DP only: 16 bytes per parameter, far beyond 80 GB. */
Test(cli, gpt3_dp_only_does_not_fit)
{
	char *d = tmp_dir();
	char args[1200], *out = NULL;
	snprintf(args, sizeof(args), "run %s --out %s", src_path("scenarios/gpt3-175b-dp1024.json"), d);
	cr_assert_eq(run_ddlsim(args, &out, NULL), 0);
	json_t *r = load_report(d);
	json_t *mem = json_object_get(r, "memory");
	cr_assert(json_is_false(json_object_get(mem, "fits")));
	double total = jnum(r, "memory/per_stage/0/total_GB");
	/* weights 2 + gradients 2 + Adam 12 bytes per parameter */
	cr_assert_gt(total, 16 * 174.6);
	cr_assert(strstr(json_string_value(json_object_get(mem, "verdict")), "does not fit"));
	cr_assert(strstr(out, "memory: does not fit"));
	json_decref(r);
}

Test(cli, report_directory_is_left_clean_on_success)
{
	char *d = tmp_dir();
	char args[1200], cmd[1300];
	snprintf(args, sizeof(args), "run %s --out %s --quiet", src_path("scenarios/quickstart.json"), d);
	cr_assert_eq(run_ddlsim(args, NULL, NULL), 0);
	snprintf(cmd, sizeof(cmd), "test $(ls -A %s | wc -l) -eq 2", d);
	cr_assert_eq(system(cmd), 0, "temporary files left in %s", d);
}

/* Without a GPU (CI has none) or without the CUDA tool, `ddlsim calib`
 * fails with 4 (no GPU) or 1 (tool not built) and writes no profile. */
Test(cli, calib_without_gpu_fails_and_writes_nothing)
{
	char *d = tmp_dir();
	char args[1200], prof[1100], *err = NULL;
	snprintf(prof, sizeof(prof), "%s/profile.json", d);
	snprintf(args, sizeof(args), "calib --out %s", prof);
	int rc = run_ddlsim(args, NULL, &err);
	cr_assert(rc == 4 || rc == 1, "exit %d: %s", rc, err);
	cr_assert(strstr(err, rc == 4 ? "no CUDA GPU found" : "calibration tool was not built"), "%s", err);
	cr_assert(!file_exists(prof));
}

/* Expand a class's "a-b,c" ranges into mark[] (counting each rank). */
static void mark_ranges(const char *s, int *mark, int n)
{
	while (*s) {
		char *end;
		long a = strtol(s, &end, 10), b = a;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		cr_assert(a >= 0 && b >= a && b < n, "bad range in '%s'", s);
		for (long i = a; i <= b; i++)
			mark[i]++;
		s = *end == ',' ? end + 1 : end;
	}
}

/* breakdown.rank_classes is always there and partitions the ranks; the
 * per-rank rows come only with --per-rank, all of them, and each equals
 * its class's figures. */
static void check_classes(const char *scn, int nranks, int want_classes)
{
	char *d = tmp_dir(), args[2400], out[1200];
	for (int pr = 0; pr < 2; pr++) {
		snprintf(out, sizeof(out), "%s/%d", d, pr);
		snprintf(args, sizeof(args), "run %s --out %s --quiet --format json%s", scn, out,
			 pr ? " --per-rank" : "");
		char *err = NULL;
		cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
		free(err);
		json_t *r = load_report(out);
		cr_assert_not_null(r);
		json_t *b = json_object_get(r, "breakdown");
		json_t *cl = json_object_get(b, "rank_classes"), *rows = json_object_get(b, "per_rank");
		cr_assert(json_is_boolean(json_object_get(b, "per_rank_written")));
		cr_assert_eq(json_is_true(json_object_get(b, "per_rank_written")), pr);
		cr_assert_eq(json_array_size(rows), pr ? (size_t)nranks : 0);
		cr_assert_eq(json_array_size(cl), (size_t)want_classes);
		int *mark = calloc((size_t)nranks, sizeof(int)), total = 0;
		size_t k;
		json_t *c;
		json_array_foreach(cl, k, c) {
			const char *rs = json_string_value(json_object_get(c, "ranks"));
			cr_assert_not_null(rs);
			int before = 0;
			for (int i = 0; i < nranks; i++)
				before += mark[i];
			mark_ranges(rs, mark, nranks);
			int after = 0;
			for (int i = 0; i < nranks; i++)
				after += mark[i];
			cr_assert_eq(after - before, json_integer_value(json_object_get(c, "count")), "%s", rs);
			total += after - before;
			cr_assert_eq(json_integer_value(json_object_get(c, "first_rank")), strtol(rs, NULL, 10));
			for (int i = 0; pr && i < nranks; i++) {
				/* every row of the class has the class's figures */
				char *e;
				long a = strtol(rs, &e, 10);
				if (i != a)
					continue;
				json_t *row = json_deep_copy(json_array_get(rows, (size_t)i));
				json_object_del(row, "rank");
				json_object_del(row, "simulated_as");
				cr_assert(json_equal(row, json_object_get(c, "figures")), "rank %d", i);
				json_decref(row);
			}
		}
		cr_assert_eq(total, nranks);
		for (int i = 0; i < nranks; i++)
			cr_assert_eq(mark[i], 1, "rank %d in %d classes", i, mark[i]);
		/* and with the rows: a row's figures decide its class */
		for (int i = 0; pr && i < nranks; i++) {
			json_t *row = json_deep_copy(json_array_get(rows, (size_t)i));
			json_object_del(row, "rank");
			json_object_del(row, "simulated_as");
			int hits = 0;
			json_array_foreach(cl, k, c)
				hits += json_equal(row, json_object_get(c, "figures"));
			cr_assert_eq(hits, 1, "rank %d matches %d classes", i, hits);
			json_decref(row);
		}
		free(mark);
		json_decref(r);
	}
}

Test(cli, rank_classes_always_per_rank_rows_on_request, .timeout = 120)
{
	/* 16 data-parallel ranks, folded: one class, every rank */
	check_classes(src_path("scenarios/quickstart.json"), 16, 1);
	/* TP 2 x PP 2 x DP 2 unfolded: the stages differ; TP and DP peers of
	 * a stage do the same work and wait the same */
	char *d = tmp_dir(), text[2048];
	snprintf(text, sizeof(text),
		 "{\"schema\":\"ddlsim.scenario\",\"schema_version\":\"1.0\",\"name\":\"classes\","
		 "\"model\":\"%s\",\"topology\":\"%s\",\"nodes\":1,"
		 "\"parallel\":{\"tp\":2,\"pp\":2,\"dp\":2},"
		 "\"training\":{\"seq_len\":1024,\"global_batch\":8,\"micro_batch\":1},"
		 "\"simulation\":{\"fold\":\"off\"}}",
		 src_path("models/zoo/llama3-8b.json"), src_path("topologies/dgx-a100.json"));
	check_classes(write_file(d, "s.json", text), 8, 2);
}

/* compare (issue 27 item 7): two ResNet-50 plans on one 32 GB V100 whose
 * names share their first 24 characters; the second's micro-batch of 512
 * needs 48.0 GB. The names are printed whole, wrapped at a '-' within the
 * 26-character column; the plan that fits is named best; the second is
 * "oom" with its reason wrapped and the memory line per column; 1.5e13
 * tokens' training of ~6e5 days reads "599.1 k", never an exponent. */
static char *long_name_case(const char *dir, const char *v, int mb)
{
	char text[2048], name[64];
	snprintf(text, sizeof(text),
		 "{\"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\",\n"
		 " \"name\": \"resnet50-v100-single-gpu-data-parallel-variant-%s\",\n"
		 " \"model\": \"%s\", \"topology\": \"%s\", \"nodes\": 1,\n"
		 " \"training\": {\"global_batch\": %d, \"micro_batch\": %d, \"precision\": \"fp32\",\n"
		 "   \"train_tokens\": 1.5e13}}\n",
		 v, src_path("models/zoo/resnet50.json"), src_path("topologies/v100-1gpu-edr.json"), mb, mb);
	snprintf(name, sizeof(name), "%s.json", v);
	return write_file(dir, name, text);
}

/* Llama 2 7B on `nodes` DGX A100 (DP over all of them) at usd per
 * GPU-hour, named name, written to dir. */
static char *dp_case(const char *dir, const char *name, int nodes, double usd)
{
	char text[2048], file[64];
	snprintf(text, sizeof(text),
		 "{\"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\", \"name\": \"%s\",\n"
		 " \"model\": \"%s\", \"topology\": \"%s\", \"nodes\": %d,\n"
		 " \"parallel\": {\"zero\": 1, \"recompute\": \"selective\"},\n"
		 " \"training\": {\"seq_len\": 4096, \"global_batch\": 512, \"micro_batch\": 1, \"precision\": \"bf16\",\n"
		 "   \"train_tokens\": 2e12}, \"cost\": {\"usd_per_gpu_hour\": %g}}\n",
		 name, src_path("models/zoo/llama2-7b.json"), src_path("topologies/dgx-a100.json"), nodes, usd);
	snprintf(file, sizeof(file), "%s.json", name);
	return write_file(dir, file, text);
}

/* Issue 44: compare marks every plan key that differs (nodes, gpus, dp
 * are counts), names the best by days to train and, at equal days, the
 * cheaper, says why, and writes its records with --out (JSON or CSV, by
 * the extension; another is a usage error). */
Test(cli, compare_marks_counts_picks_by_days_then_cost_and_writes_out, .timeout = 120)
{
	char *d = tmp_dir(), args[4000], *out = NULL, *err = NULL;
	char *a = dp_case(d, "two", 2, 1.8), *b = dp_case(d, "four", 4, 1.8), *c = dp_case(d, "four-cheap", 4, 1.5);
	snprintf(args, sizeof(args), "compare %s %s %s --out %s/cmp.json", a, b, c, d);
	cr_assert_eq(run_ddlsim(args, &out, &err), 0, "%s%s", out, err);
	cr_expect(strstr(out, "best that fits: four-cheap ("), "%s", out);
	cr_expect(strstr(out, "days to train with failures, the fewest; as good as another within 0.5 % and "
			  "cheaper"), "%s", out);
	cr_expect(strstr(out, "\n* nodes "), "%s", out);
	cr_expect(strstr(out, "\n* gpus "), "%s", out);
	cr_expect(strstr(out, "\n* dp "), "%s", out);
	cr_expect(strstr(out, "\n  tp "), "%s", out);
	char p[1200];
	snprintf(p, sizeof(p), "%s/cmp.json", d);
	json_t *j = json_load_file(p, 0, NULL);
	cr_assert_not_null(j);
	cr_expect_str_eq(json_string_value(json_object_get(j, "schema")), "ddlsim.compare");
	cr_expect_str_eq(json_string_value(json_object_get(j, "best_that_fits")), "four-cheap");
	cr_expect_eq(json_array_size(json_object_get(j, "scenarios")), 3);
	json_decref(j);
	free(out), free(err);
	out = err = NULL;
	snprintf(args, sizeof(args), "compare %s %s --out %s/cmp.csv", a, b, d);
	cr_assert_eq(run_ddlsim(args, &out, &err), 0, "%s", err);
	snprintf(p, sizeof(p), "%s/cmp.csv", d);
	char *csv = test_file_text(p);
	cr_expect(!strncmp(csv, "scenario,model,topology,gpu,nodes,", 34), "%s", csv);
	cr_expect(strstr(csv, "\ntwo,Llama-2 7B,"), "%s", csv);
	cr_expect(strstr(csv, "\nfour,Llama-2 7B,"), "%s", csv);
	free(csv), free(out), free(err);
	err = NULL;
	snprintf(args, sizeof(args), "compare %s %s --out %s/cmp.txt", a, b, d);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 2);
	cr_expect(strstr(err, "--out expects a file ending in .json or .csv"), "%s", err);
	free(err), free(a), free(b), free(c), free(d);
}

/* Issue 44 item 5: --by names what "best" is. Two nodes at $1.0 a
 * GPU-hour against four at $1.8: four train in fewer days, two for less
 * money; --by energy picks the record with the least energy_MWh. */
Test(cli, compare_by_days_cost_energy_or_iteration, .timeout = 120)
{
	char *d = tmp_dir(), args[4000], *out = NULL, *err = NULL;
	char *a = dp_case(d, "two-cheap", 2, 1.0), *b = dp_case(d, "four", 4, 1.8);
	static const char *const by[] = { "days", "cost", "energy", "iteration" };
	const char *best[4];
	char names[4][64];
	for (int k = 0; k < 4; k++) {
		snprintf(args, sizeof(args), "compare %s %s --by %s --out %s/cmp-%s.json", a, b, by[k], d, by[k]);
		cr_assert_eq(run_ddlsim(args, &out, &err), 0, "%s%s", out, err);
		char p[1200];
		snprintf(p, sizeof(p), "%s/cmp-%s.json", d, by[k]);
		json_t *j = json_load_file(p, 0, NULL);
		cr_assert_not_null(j);
		snprintf(names[k], sizeof(names[k]), "%s", json_string_value(json_object_get(j, "best_that_fits")));
		best[k] = names[k];
		if (k == 2) {   /* the least energy of the records */
			json_t *sc = json_object_get(j, "scenarios");
			double e0 = json_number_value(json_object_get(json_array_get(sc, 0), "energy_MWh"));
			double e1 = json_number_value(json_object_get(json_array_get(sc, 1), "energy_MWh"));
			cr_expect(e0 > 0 && e1 > 0 && e0 != e1, "%g %g", e0, e1);
			cr_expect_str_eq(best[k], e0 < e1 ? "two-cheap" : "four");
			cr_expect(strstr(out, "MWh to train, the least energy"), "%s", out);
		}
		json_decref(j);
		free(out), free(err);
		out = err = NULL;
	}
	cr_expect_str_eq(best[0], "four");
	cr_expect_str_eq(best[1], "two-cheap");
	cr_expect_str_eq(best[3], "four");
	snprintf(args, sizeof(args), "compare %s %s --by speed", a, b);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 2);
	cr_expect(err && strstr(err, "--by: expected days, cost, energy or iteration, got 'speed'"), "%s", err);
	free(err), free(a), free(b), free(d);
}

/* The lines of out from the one starting with `from` up to the one
 * starting with `to` (excluded). */
static char *lines_between(const char *out, const char *from, const char *to)
{
	const char *a = strstr(out, from), *b = a ? strstr(a, to) : NULL;
	cr_assert(a && b, "no '%s' ... '%s' in:\n%s", from, to, out);
	return strndup(a, (size_t)(b - a));
}

Test(cli, compare_prints_long_names_whole_human_numbers_and_memory_fit, .timeout = 60)
{
	char *d = tmp_dir(), args[2400], *out = NULL;
	char *a = long_name_case(d, "a", 64), *b = long_name_case(d, "b", 512);
	snprintf(args, sizeof(args), "compare %s %s", a, b);
	cr_assert_eq(run_ddlsim(args, &out, NULL), 0, "%s", out);
	char *head = lines_between(out, "best that fits", "  nodes ");
	cr_expect_str_eq(head,
		"best that fits: resnet50-v100-single-gpu-data-parallel-variant-a (599.1 k days to train with failures, the fewest)\n"
		"* scenario                 resnet50-v100-single-gpu-  resnet50-v100-single-gpu-\n"
		"                           data-parallel-variant-a    data-parallel-variant-b\n"
		"  model                    ResNet-50                  ResNet-50\n"
		"  topology                 V100 server, 1 GPU per     V100 server, 1 GPU per\n"
		"                           node, EDR InfiniBand       node, EDR InfiniBand\n"
		"  gpu                      Tesla V100-SXM2-32GB       Tesla V100-SXM2-32GB\n");
	char *st = lines_between(out, "* status", "  iteration_time_s");
	cr_expect_str_eq(st,
		"* status                   ok                         oom\n"
		"* error                                               does not fit: the fullest\n"
		"                                                      GPU needs 48.0 GB of 32.0\n"
		"                                                      GB, 16.0 GB missing\n");
	char *days = lines_between(out, "  train_days", "  goodput_ratio");
	cr_expect_str_eq(days,
		"  train_days               599.1 k                    566.9 k (-5.4%)\n"
		"  wall_days                599.1 k                    566.9 k (-5.4%)\n");
	const char *mem = strstr(out, "* memory");
	cr_expect_str_eq(mem,
		"* memory                   fits: 7.0 of 32.0 GB       does not fit: 48.0 of\n"
		"                                                      32.0 GB, 16.0 GB missing\n");
	cr_expect(strstr(out, "\n* fits                     true                       false\n"), "%s", out);
	cr_expect(strstr(out, "\n  fold_reason\n"), "one rank: nothing to fold\n%s", out);
	cr_expect(!strstr(out, "e+") && !strstr(out, "e-0"), "an exponent in\n%s", out);
	free(head);
	free(st);
	free(days);
	free(out);
	free(a);
	free(b);
	free(d);
}
