/* test-export: `ddlsim plan --export N` (cli/cmd_plan.c, sim/scenario_write.h).
 *
 * The round trip: a small goal (Llama-2 7B on 2 DGX A100 nodes; pp 1 and
 * 2, interleave 1 and 2, so a 1F1B and an interleaved pipeline plan are
 * among the finalists) is searched, every ranked plan exported, and
 * `ddlsim run` on each exported scenario must give the plan row's
 * iteration time, tokens/s and memory (plans.jsonl) to 1e-9. The
 * serializer alone: every shipped scenario written back loads to the same
 * plan. */
#include <criterion/criterion.h>
#include <glob.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario.h"
#include "scenario_write.h"
#include "testutil.h"

static char *small_goal(const char *dir)
{
	char text[2048];
	snprintf(text, sizeof(text),
		 "{\"schema\": \"ddlsim.goal\", \"schema_version\": \"1.0\", \"name\": \"export\",\n"
		 " \"model\": \"%s\", \"seq_len\": 4096, \"train_tokens\": 1e12, \"deadline_days\": 365,\n"
		 " \"global_batch_tokens\": {\"min\": 1048576, \"max\": 1048576},\n"
		 " \"search\": {\"tp\": [2, 4], \"pp\": [1, 2], \"interleave\": [1, 2], \"micro_batch\": [1],\n"
		 "   \"zero\": [1], \"recompute\": [\"selective\"], \"sp\": [true], \"order\": [\"tp,dp,pp\"]},\n"
		 " \"clusters\": [{\"name\": \"A100\", \"topology\": \"%s\", \"nodes\": [2],\n"
		 "   \"economics\": {\"usd_per_gpu_hour\": 1.8}}]}\n",
		 src_path("models/zoo/llama2-7b.json"), src_path("topologies/dgx-a100.json"));
	return write_file(dir, "goal.json", text);
}

/* The ranked records of dir/plans.jsonl (rank 1 first), as an array. */
static json_t *ranked_rows(const char *dir)
{
	char path[1200];
	snprintf(path, sizeof(path), "%s/plans.jsonl", dir);
	FILE *f = fopen(path, "r");
	cr_assert(f, "no %s", path);
	json_t *rows = json_array();
	char line[65536];
	while (fgets(line, sizeof(line), f)) {
		json_t *r = json_loads(line, 0, NULL);
		cr_assert(r, "%s: not JSON: %s", path, line);
		json_t *rank = json_object_get(r, "rank");
		if (json_is_integer(rank)) {
			cr_assert_eq(json_integer_value(rank), (json_int_t)json_array_size(rows) + 1);
			json_array_append(rows, r);
		}
		json_decref(r);
	}
	fclose(f);
	return rows;
}

Test(export, a_ranked_plan_runs_to_its_row_figures, .timeout = 120)
{
	char *d = tmp_dir(), *goal = small_goal(d), args[4096], *out = NULL, *err = NULL;
	snprintf(args, sizeof(args), "plan %s --top 4 -j 2 --quiet --out %s/o --export 1 --export 2,3,4", goal, d);
	cr_assert_eq(run_ddlsim(args, &out, &err), 0, "%s", err);
	char od[1200];
	snprintf(od, sizeof(od), "%s/o", d);
	json_t *rows = ranked_rows(od);
	cr_assert_geq(json_array_size(rows), 4, "%s", out);
	bool interleaved = false, pipeline = false;
	for (size_t i = 0; i < 4; i++) {
		json_t *row = json_array_get(rows, i);
		char scen[1300], rd[1300], want[1400];
		snprintf(scen, sizeof(scen), "%s/plan-%zu.json", od, i + 1);
		snprintf(want, sizeof(want), "rank %zu exported to %s", i + 1, scen);
		cr_expect(strstr(out, want), "no '%s' in:\n%s", want, out);
		snprintf(rd, sizeof(rd), "%s/run-%zu", d, i + 1);
		char *sc = test_file_text(scen);
		json_t *sj = json_loads(sc, 0, NULL);
		cr_assert(sj, "%s:\n%s", scen, sc);
		/* the plan's keys, as the row states them */
		json_t *par = json_object_get(sj, "parallel");
		cr_expect_eq(json_integer_value(json_object_get(par, "tp")), json_integer_value(json_object_get(row, "tp")));
		cr_expect_eq(json_integer_value(json_object_get(par, "pp")), json_integer_value(json_object_get(row, "pp")));
		cr_expect_eq(json_integer_value(json_object_get(par, "dp")), json_integer_value(json_object_get(row, "dp")));
		cr_expect_eq(json_integer_value(json_object_get(par, "zero")), 1);
		cr_expect(json_is_true(json_object_get(par, "sp")), "%s", sc);
		cr_expect_str_eq(json_string_value(json_object_get(par, "recompute")), "selective");
		long v = (long)json_integer_value(json_object_get(row, "interleave"));
		if (v > 1) {
			interleaved = true;
			cr_expect_str_eq(json_string_value(json_object_get(par, "schedule")), "interleaved", "%s", sc);
			cr_expect_eq(json_integer_value(json_object_get(par, "interleave")), v, "%s", sc);
		}
		pipeline |= json_integer_value(json_object_get(row, "pp")) > 1;
		json_t *tr = json_object_get(sj, "training");
		cr_expect_eq(json_integer_value(json_object_get(tr, "global_batch")),
			     json_integer_value(json_object_get(row, "global_batch")));
		cr_expect_eq(json_number_value(json_object_get(tr, "train_tokens")), 1e12);
		cr_expect_eq(json_number_value(json_object_get(json_object_get(sj, "cost"), "usd_per_gpu_hour")), 1.8);
		json_decref(sj);
		free(sc);

		snprintf(args, sizeof(args), "run %s --out %s", scen, rd);
		char *rerr = NULL;
		cr_assert_eq(run_ddlsim(args, NULL, &rerr), 0, "%s", rerr);
		free(rerr);
		json_t *rep = load_report(rd);
		cr_assert(rep, "no report in %s", rd);
		double it = jnum(rep, "summary/iteration_time_s"), tps = jnum(rep, "summary/tokens_per_s");
		double mem = jnum(rep, "memory/worst_total_GB");
		double rit = json_number_value(json_object_get(row, "iteration_time_s"));
		double rtps = json_number_value(json_object_get(row, "tokens_per_s"));
		double rmem = json_number_value(json_object_get(row, "mem_peak_GB"));
		cr_expect_leq(rel_diff(it, rit), 1e-9, "rank %zu: run %.17g s, plan %.17g s", i + 1, it, rit);
		cr_expect_leq(rel_diff(tps, rtps), 1e-9, "rank %zu: run %.17g tokens/s, plan %.17g", i + 1, tps, rtps);
		cr_expect_leq(rel_diff(mem, rmem), 1e-9, "rank %zu: run %.17g GB, plan %.17g GB", i + 1, mem, rmem);
		cr_log_info("rank %zu: %s %s v%ld: %.9g s, %.9g tokens/s, %.9g GB\n", i + 1,
			    json_string_value(json_object_get(row, "schedule")), "", v, it, tps, mem);
		json_decref(rep);
	}
	cr_expect(interleaved, "no interleaved plan among the 4 ranked:\n%s", out);
	cr_expect(pipeline, "no pipeline plan among the 4 ranked:\n%s", out);
	json_decref(rows);
	free(out);
	free(err);
	free(goal);
	free(d);
}

Test(export, a_rank_beyond_the_ranked_plans_is_a_usage_error, .timeout = 120)
{
	char *d = tmp_dir(), *goal = small_goal(d), args[4096], *err = NULL;
	snprintf(args, sizeof(args), "plan %s --top 2 -j 2 --quiet --out %s/o --export 1,99", goal, d);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 2, "%s", err);
	cr_expect(err && strstr(err, "ddlsim: error: --export 99: beyond the "), "%s", err);
	char od[1200];
	snprintf(od, sizeof(od), "%s/o", d);
	json_t *rows = ranked_rows(od);
	char want[200];
	snprintf(want, sizeof(want), "beyond the %zu ranked plans", json_array_size(rows));
	cr_expect(err && strstr(err, want), "no '%s' in %s", want, err);
	snprintf(want, sizeof(want), "%s/o/plan-1.json", d);
	cr_expect(!file_exists(want), "%s written beside a usage error", want);
	json_decref(rows);
	free(err);
	err = NULL;

	/* nothing is simulated with --screen-only; a rank is a positive integer */
	snprintf(args, sizeof(args), "plan %s --screen-only --export 1", goal);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 2, "%s", err);
	cr_expect(err && strstr(err, "ddlsim: error: --export writes a simulated plan, and --screen-only "
				      "simulates none"), "%s", err);
	free(err);
	err = NULL;
	snprintf(args, sizeof(args), "plan %s --export 0", goal);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 2, "%s", err);
	cr_expect(err && strstr(err, "ddlsim: error: --export: expected ranks >= 1 separated by commas "
				      "(plans.csv's rank), got '0'"), "%s", err);
	free(err);
	free(goal);
	free(d);
}

/* A run of scenario path into dir: its report.json and summary (out). */
static json_t *run_report(const char *path, const char *dir, char **out)
{
	char args[4096], *err = NULL;
	snprintf(args, sizeof(args), "run %s --out %s", path, dir);
	cr_assert_eq(run_ddlsim(args, out, &err), 0, "%s", err);
	free(err);
	json_t *rep = load_report(dir);
	cr_assert(rep, "no report in %s", dir);
	return rep;
}

/* An exported plan carries its goal: the run gives the plan row's wall
 * days with failures, cost and energy (the goal's goodput and the
 * cluster's economics) to 1e-9, and judges them against the deadline and
 * the budget at the estimate and at the band's slow edge; a goal between
 * the two reads "meets" at one and "misses" at the other. */
Test(export, a_plan_run_gives_its_goals_verdict, .timeout = 120)
{
	char *d = tmp_dir(), *goal = small_goal(d), args[4096], *out = NULL, *err = NULL;
	snprintf(args, sizeof(args), "plan %s --top 1 -j 2 --quiet --out %s/o --export 1", goal, d);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	free(err);
	char od[1200], scen[1300], rd[1300];
	snprintf(od, sizeof(od), "%s/o", d);
	snprintf(scen, sizeof(scen), "%s/plan-1.json", od);
	snprintf(rd, sizeof(rd), "%s/run", d);
	json_t *rows = ranked_rows(od), *row = json_array_get(rows, 0);
	json_t *rep = run_report(scen, rd, &out);
	cr_expect_str_eq(json_string_value(json_object_get(rep, "schema_version")), "1.4");
	cr_expect_str_eq(json_string_value(json_object_get(json_object_get(rep, "goal"), "name")), "export");
	cr_expect_str_eq(json_string_value(json_object_get(json_object_get(rep, "goal"), "cluster")), "A100");
	static const char *const keys[][2] = { { "goal/at_estimate/wall_days", "wall_days" },
					       { "goal/at_estimate/cost_usd", "cost_usd" },
					       { "goal/at_estimate/energy_MWh", "energy_MWh" },
					       { "goal/at_estimate/goodput_ratio", "goodput_ratio" } };
	for (int k = 0; k < 4; k++) {
		double got = jnum(rep, keys[k][0]), want = json_number_value(json_object_get(row, keys[k][1]));
		cr_expect_gt(want, 0, "%s", keys[k][1]);
		cr_expect_leq(rel_diff(got, want), 1e-9, "%s: run %.17g, plan %.17g", keys[k][0], got, want);
	}
	double w0 = jnum(rep, "goal/at_estimate/wall_days"), w1 = jnum(rep, "goal/at_slow_edge/wall_days");
	double c0 = jnum(rep, "goal/at_estimate/cost_usd"), c1 = jnum(rep, "goal/at_slow_edge/cost_usd");
	double slow = jnum(rep, "goal/slow_factor");
	cr_expect_gt(slow, 1);
	cr_expect_gt(w1, w0 * slow * 0.99, "the slow edge's days: %g against %g x %g", w1, w0, slow);
	cr_expect(strstr(out, "goal export on A100 (") && strstr(out, "meets the deadline"), "%s", out);
	free(out);
	out = NULL;
	json_decref(rep);

	/* a deadline and a budget between the estimate and the slow edge */
	char *text = test_file_text(scen);
	json_t *sj = json_loads(text, 0, NULL);
	cr_assert(sj, "%s", text);
	json_t *g = json_object_get(sj, "goal");
	json_object_set_new(g, "deadline_days", json_real((w0 + w1) / 2));
	json_object_set_new(g, "budget_usd", json_real((c0 + c1) / 2));
	char *mid = json_dumps(sj, JSON_INDENT(1));
	char *mp = write_file(d, "mid.json", mid);
	snprintf(rd, sizeof(rd), "%s/run-mid", d);
	rep = run_report(mp, rd, &out);
	cr_expect(json_is_true(json_object_get(json_object_get(json_object_get(rep, "goal"), "at_estimate"),
					       "meets_deadline")));
	cr_expect(json_is_false(json_object_get(json_object_get(json_object_get(rep, "goal"), "at_slow_edge"),
						"meets_deadline")));
	cr_expect(json_is_true(json_object_get(json_object_get(json_object_get(rep, "goal"), "at_estimate"),
					       "within_budget")));
	cr_expect(json_is_false(json_object_get(json_object_get(json_object_get(rep, "goal"), "at_slow_edge"),
						"within_budget")));
	cr_expect(strstr(out, "misses the deadline by") && strstr(out, "over the budget by $"), "%s", out);
	json_decref(rep);
	free(out);
	free(mid);
	free(mp);

	/* the verdict needs the tokens to train; the goal's keys are checked */
	json_object_del(json_object_get(sj, "training"), "train_tokens");
	mid = json_dumps(sj, JSON_INDENT(1));
	mp = write_file(d, "notokens.json", mid);
	snprintf(args, sizeof(args), "validate %s", mp);
	err = NULL;
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3, "%s", err);   /* EXIT_INPUT */
	cr_expect(err && strstr(err, "/goal: error: needs training.train_tokens"), "%s", err);
	free(err);
	free(mid);
	free(mp);
	json_object_set_new(json_object_get(sj, "training"), "train_tokens", json_real(1e12));
	json_object_set_new(g, "deadline_hours", json_real(5));
	mid = json_dumps(sj, JSON_INDENT(1));
	mp = write_file(d, "unknown.json", mid);
	snprintf(args, sizeof(args), "validate %s", mp);
	err = NULL;
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3, "%s", err);
	cr_expect(err && strstr(err, "/goal/deadline_hours: error: unknown key"), "%s", err);
	free(err);
	free(mid);
	free(mp);
	json_decref(sj);
	free(text);
	json_decref(rows);
	free(goal);
	free(d);
}

/* The first member of struct plan where a and b differ ("" when none),
 * `given` left out (writing a key marks it given). */
static const char *plan_diff(const struct plan *a, const struct plan *b)
{
	struct plan x = *a, y = *b;
	x.given = y.given = 0;
#define SAME(m) if (memcmp(&x.m, &y.m, sizeof(x.m))) return #m
	SAME(nodes);
	SAME(framework);
	SAME(ngroups);
	SAME(group);
	SAME(node_order);
	SAME(parallel);
	SAME(training);
	SAME(communication);
	SAME(compute);
	SAME(moe);
	SAME(simulation);
	SAME(cost);
#undef SAME
	return memcmp(&x, &y, sizeof(x)) ? "(padding)" : "";
}

/* Every shipped scenario's plan, written (scenario_write_json) and loaded
 * again, is the same plan; a mixed cluster is refused with its path. */
Test(export, every_shipped_scenario_writes_back_to_its_plan, .timeout = 120)
{
	static const char *const pattern[] = { "scenarios/*.json", "scenarios/*/*.json", "validation/*/*.json",
					       "validation/*/*/*.json" };
	char *d = tmp_dir();
	int written = 0, refused = 0;
	for (size_t k = 0; k < sizeof(pattern) / sizeof(pattern[0]); k++) {
		glob_t gl;
		if (glob(src_path(pattern[k]), 0, NULL, &gl))
			continue;
		for (size_t i = 0; i < gl.gl_pathc; i++) {
			char *text = test_file_text(gl.gl_pathv[i]);
			bool is_scenario = strstr(text, "\"ddlsim.scenario\"") != NULL;
			free(text);
			if (!is_scenario)
				continue;
			struct diag dg;
			char *buf = NULL;
			size_t len = 0;
			FILE *msg = open_memstream(&buf, &len);
			diag_init(&dg, msg);
			struct scenario *a = scenario_load(gl.gl_pathv[i], &dg);
			cr_assert(a, "%s does not load", gl.gl_pathv[i]);
			char out[1200];
			snprintf(out, sizeof(out), "%s/w%d.json", d, written + refused);
			struct scenario_write_meta m = { .name = "w" };
			int rc = scenario_write_file(&a->plan, a->in, &m, out, &dg);
			if (a->plan.ngroups) {
				cr_expect_eq(rc, -1, "%s: a mixed cluster written", gl.gl_pathv[i]);
				fflush(msg);
				char want[1400];
				snprintf(want, sizeof(want), "%s: /node_groups: error: cannot write a mixed cluster's node "
					 "groups: the plan holds their GPUs' figures, not the preset files a scenario "
					 "names\n", out);
				cr_expect(strstr(buf, want), "%s: no '%s' in:\n%s", gl.gl_pathv[i], want, buf);
				refused++;
			} else {
				cr_assert_eq(rc, 0, "%s: not written", gl.gl_pathv[i]);
				struct scenario *b = scenario_load(out, &dg);
				cr_assert(b, "%s written as %s does not load:\n%s", gl.gl_pathv[i], out, test_file_text(out));
				const char *diff = plan_diff(&a->plan, &b->plan);
				cr_expect_str_eq(diff, "", "%s: written as %s, its %s differs:\n%s", gl.gl_pathv[i], out, diff,
						 test_file_text(out));
				scenario_destroy(b);
				written++;
			}
			scenario_destroy(a);
			diag_finish(&dg);
			fclose(msg);
			free(buf);
		}
		globfree(&gl);
	}
	cr_expect_gt(written, 50, "only %d scenarios written", written);
	cr_expect_gt(refused, 0, "no mixed-cluster scenario refused");
	free(d);
}
