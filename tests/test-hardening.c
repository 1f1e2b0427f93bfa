/* test-hardening: the rest of issue 26's Hardening II: the command line
 * against the scenario (trace ranks, empty arguments, two outputs for one
 * file), control characters and overlong names, writers that escape what
 * they quote, rejections grouped with their reasons, goal values and
 * entry ids beyond their range. As in test-hostile.c: the exact message,
 * the exit code (3 invalid input, 2 bad command line) and nothing left
 * behind. */
#include <criterion/criterion.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "cost.h"
#include "diag.h"
#include "expr.h"
#include "gpu.h"
#include "reasons.h"
#include "svg.h"
#include "sweep.h"
#include "tidy.h"
#include "testutil.h"
#include "topology.h"
#include "hostile.h"

Test(hardening, trace_ranks_beyond_the_job_are_refused_before_simulating)
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

Test(hardening, a_folded_rank_in_trace_ranks_is_a_warning_naming_its_representative)
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

Test(hardening, an_empty_file_name_or_option_value_is_a_usage_error)
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

/* A sweep that makes no progress (-b 0 with a factor: nccl-tests loops
 * forever) is refused, with why (issue 40 item 7). A fractional -f is
 * nccl-tests' strtol integer (issue 44 item 7): -f 1.1 steps by -i. */
Test(hardening, a_step_factor_that_makes_no_progress_is_refused)
{
	char *d = tmp_dir(), args[2048];
	const char *topo = src_path("topologies/dgx-a100.json");
	snprintf(args, sizeof(args), "collective --topology %s -b 0 -e 64 -f 2", topo);
	refused(args, 2, "ddlsim: error: the sweep from 0 to 64 bytes has more than 4096 sizes", d);
	char *out = NULL, *err = NULL;
	/* nccl-tests v2.19.6 reads -f with strtol: 1.1 is 1, a step of -i bytes */
	snprintf(args, sizeof(args), "collective --topology %s -b 8 -e 16 -f 1.1 -i 4", topo);
	cr_expect_eq(run_ddlsim(args, &out, &err), 0, "%s", err);
	cr_expect(strstr(out, "step: 4(bytes)") && strstr(out, "\n          16 "), "%s", out);
	cr_expect(strstr(err, "-f 1.1: nccl-tests reads the step factor as an integer (strtol): 1"), "%s", err);
	free(out);
	free(err);
	free(d);
}

Test(hardening, rejections_are_grouped_by_reason_with_numbers_masked)
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
Test(hardening, a_plan_search_says_why_plan_check_rejected_its_plans, .timeout = 120)
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
	/* a reason every plan would be rejected for (issue 40 item 5): said
	 * once at the goal's key, exit 3, before any plan is enumerated (it
	 * was "18888 rejected" and exit 0) */
	snprintf(args, sizeof(args), "plan %s --screen-only", f);
	char *err = NULL;
	cr_assert_eq(run_ddlsim(args, &out, &err), 3, "%s", err);
	char want[1024];
	snprintf(want, sizeof(want), "%s: /precision: error: fp8 needs a GPU with a peak for fp8, but GPU "
		 "'A100-SXM4-80GB' of topology 'DGX A100' has none (%s: /gpu/peak_tflops)\n", f,
		 src_path("topologies/dgx-a100.json"));
	cr_expect_str_eq(err, want);
	cr_expect(!strstr(out, "plans enumerated"), "%s", out);
	free(err);
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
Test(hardening, an_invalid_sweep_point_row_is_not_the_base_scenario)
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

Test(hardening, names_with_control_characters_or_slashes_are_refused_at_load)
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

Test(hardening, markup_csv_and_json_writers_escape_what_they_quote)
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

Test(hardening, empty_paths_and_overlong_names_in_files_are_refused)
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

Test(hardening, goal_values_beyond_their_range_are_refused_with_the_value_not_clamped)
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

Test(hardening, a_link_degraded_twice_and_straggler_ids_name_the_entry_and_value)
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

Test(hardening, two_outputs_of_one_command_for_one_file_are_refused)
{
	char *d = tmp_dir(), args[2048];
	/* the trace would have replaced report.json, exit 0 */
	snprintf(args, sizeof(args), "mkdir -p %s/o", d);
	cr_assert_eq(system(args), 0);
	snprintf(args, sizeof(args), "run %s --out %s/o --quiet --trace %s/o/../o/report.json",
		 src_path("scenarios/quickstart.json"), d, d);
	char want[1200];
	snprintf(want, sizeof(want), "ddlsim: error: --trace '%s/o/../o/report.json' is also --out '%s/o/report.json': "
		 "give it another file (the one would replace the other)", d, d);
	refused(args, 2, want, d);
	snprintf(args, sizeof(args), "%s/o/report.json", d);
	cr_expect(!file_exists(args));
	/* the JSON would have replaced the CSV */
	snprintf(args, sizeof(args), "collective --topology %s -b 8 -e 1M --csv %s/c.out --json %s/./c.out",
		 src_path("topologies/dgx-h100.json"), d, d);
	snprintf(want, sizeof(want), "ddlsim: error: --json '%s/./c.out' is also --csv '%s/c.out': give it another "
		 "file (the one would replace the other)", d, d);
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

/* reasons_count() finds a message's group with or without characters to
 * escape (its fast path skips the escaping only when there is none). */
Test(hardening, rejections_counted_into_their_group_escaped_or_not)
{
	struct reasons *r = reasons_create();
	reasons_add(r, "/a: got 8 x 4", "a");
	reasons_add(r, "constraint \"a,\n\x1b[2J\" is 3", "b");
	cr_expect(reasons_count(r, "/a: got 16 x 2"));
	cr_expect(reasons_count(r, "constraint \"a,\n\x1b[2J\" is 5"));
	/* its escaped text, nothing left to escape: the same group */
	cr_expect(reasons_count(r, "constraint \"a,\\n\\x1b[2J\" is 7"));
	cr_expect(!reasons_count(r, "/b: got 1"));
	cr_expect_eq(reasons_total(r), 5);
	reasons_destroy(r);
}

/* diag_first_only(): the first message after the mark kept as a plain
 * diag keeps it (prefix, escaping), the later ones left out but their
 * errors counted; a new mark keeps the next first message. */
Test(hardening, diag_first_only_keeps_the_first_message_and_counts_the_rest)
{
	struct diag all, first;
	diag_init(&all, NULL);
	diag_init(&first, NULL);
	struct diag *ds[2] = { &all, &first };
	diag_first_only(&first);
	for (int i = 0; i < 2; i++) {
		diag_warn(ds[i], "g.json", "/w", "unused %d", 1);
		diag_err(ds[i], "g.json", "/parallel/pp", "must divide the %d layers", 80);
		diag_err_at(ds[i], "g.json", 3, 4, "bad");
		diag_errf(ds[i], "no %s", "plan");
	}
	cr_expect_eq(diag_count(&first), 3);
	cr_expect_eq(diag_count(&all), 3);
	cr_expect_str_eq(diag_text(&first), "g.json: /w: warning: unused 1\n");
	cr_expect_eq(strncmp(diag_text(&all), diag_text(&first), strlen(diag_text(&first))), 0);
	diag_first_only(&first);
	diag_err(&first, NULL, "", "line\nbreak \x1b[2J");
	diag_err(&first, NULL, "", "left out");
	cr_expect_str_eq(diag_text(&first), "g.json: /w: warning: unused 1\n"
			 "<input>: error: line\\nbreak \\x1b[2J\n");
	cr_expect_eq(diag_count(&first), 5);
	diag_finish(&all);
	diag_finish(&first);
}

/* torchtitan's per-op policy is modelled where its memory and its
 * compute agree: a Llama-style decoder under a stack with separate q, k,
 * v and gate, up projections; under the default stack (fused QKV) the
 * plan is refused with why. */
Test(hardening, selective_op_needs_torchtitan_s_projections)
{
	char *d = tmp_dir(), text[2048], args[2048], *err = NULL;
	const char *fmt = "{\"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\", \"model\": \"%s\", "
			  "\"topology\": \"%s\", \"nodes\": 1, \"parallel\": {\"dp\": 8, \"zero\": 3, "
			  "\"recompute\": \"selective-op\"}, %s\"training\": {\"seq_len\": 2048, "
			  "\"global_batch\": 8, \"micro_batch\": 1}}\n";
	snprintf(text, sizeof(text), fmt, src_path("models/zoo/llama3-8b.json"), src_path("topologies/dgx-h100.json"),
		 "");
	char *p = write_file(d, "s.json", text);
	snprintf(args, sizeof(args), "validate '%s'", p);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3, "%s", err);
	cr_expect(strstr(err, "s.json: /parallel/recompute: error: \"selective-op\" needs a stack with separate q, k, "
			      "v and gate, up projections as torchtitan's (its mm count), got stack 'megatron-te'"),
		  "%s", err);
	free(err);
	free(p);
	snprintf(text, sizeof(text), fmt, src_path("models/zoo/llama3-8b.json"), src_path("topologies/dgx-h100.json"),
		 "\"compute\": {\"stack\": \"torchtitan\"}, ");
	p = write_file(d, "s.json", text);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	free(err);
	free(p);
	free(d);
}
