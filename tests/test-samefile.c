/* test-samefile: issue 40's data-loss items. No output of a command may
 * be one of its inputs (util/samefile.h, cli_check_samefile()): for each
 * command that writes files, an output that is the scenario, the model,
 * the topology, the goal or the sweep, by the same name, a symbolic or a
 * hard link, is refused before any work (exit 3, both paths named) and
 * the input is left byte for byte. And `merge` knows what complete means
 * (cli/cmd_merge.c): a shard of the other format, a torn row, a shard cut
 * short, a shard whose sweep still holds its lock; --partial merges what
 * is there and says how much. The exact message and exit code each. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "samefile.h"
#include "testutil.h"

/* A copy of shipped file rel at dir/name with its relative paths to the
 * models, topologies and GPU presets (prefix up, e.g. "../") absolute. */
static char *absolute_copy(const char *dir, const char *name, const char *rel, const char *up)
{
	char *text = test_file_text(src_path(rel)), key[64], val[1200];
	const char *dirs[] = { "models/", "topologies/", "gpus/" };
	for (int i = 0; i < 3; i++) {
		snprintf(key, sizeof(key), "\"%s%s", up, dirs[i]);
		snprintf(val, sizeof(val), "\"%s", src_path(dirs[i]));
		while (strstr(text, key)) {
			char *t = str_subst(text, key, val);
			free(text);
			text = t;
		}
	}
	char *p = write_file(dir, name, text);
	free(text);
	return p;
}

/* `ddlsim ARGS` exits with want and its stderr is exactly msg; the file
 * at kept is still the bytes it had. */
static void refused_keeps(const char *args, int want, const char *msg, const char *kept)
{
	char *before = test_file_text(kept), *err = NULL;
	int rc = run_ddlsim(args, NULL, &err);
	cr_expect_eq(rc, want, "%s: exit %d, want %d: %s", args, rc, want, err);
	cr_expect_str_eq(err, msg, "%s", args);
	char *after = test_file_text(kept);
	cr_expect_str_eq(after, before, "%s: %s was changed", args, kept);
	free(before), free(after), free(err);
}

/* ---- util/samefile.h ---- */

static int nconf;
static struct samefile_conflict conf[4];

static void keep(void *ctx, const struct samefile_conflict *c)
{
	(void)ctx;
	if (nconf < 4)
		conf[nconf] = *c;
	nconf++;
}

Test(samefile, an_output_is_an_input_by_name_symbolic_or_hard_link_and_outputs_collide)
{
	char *d = tmp_dir(), p[1200], sym[1200], hard[1200], fresh[1200];
	free(write_file(d, "in.json", "{}\n"));
	snprintf(p, sizeof(p), "%s/in.json", d);
	snprintf(sym, sizeof(sym), "%s/sym.json", d);
	snprintf(hard, sizeof(hard), "%s/hard.json", d);
	snprintf(fresh, sizeof(fresh), "%s/new.json", d);
	cr_assert_eq(symlink(p, sym), 0);
	cr_assert_eq(link(p, hard), 0);
	const char *outs[] = { p, sym, hard };
	for (int i = 0; i < 3; i++) {
		struct samefile *sf = samefile_create();
		samefile_input(sf, "the scenario", p);
		samefile_output(sf, "--trace", outs[i]);
		samefile_output(sf, "--csv", fresh);
		nconf = 0;
		cr_expect_eq(samefile_check(sf, keep, NULL), 1, "%s", outs[i]);
		cr_expect(conf[0].other_is_input);
		cr_expect_str_eq(conf[0].out_what, "--trace");
		cr_expect_str_eq(conf[0].out_path, outs[i]);
		cr_expect_str_eq(conf[0].other_what, "the scenario");
		cr_expect_str_eq(conf[0].other_path, p);
		samefile_destroy(sf);
	}
	/* two outputs, one file (that does not exist yet); stdout is none */
	struct samefile *sf = samefile_create();
	char dot[1300];
	snprintf(dot, sizeof(dot), "%s/./new.json", d);
	samefile_input(sf, "the scenario", p);
	samefile_output(sf, "--json", dot);
	samefile_output(sf, "--csv", fresh);
	samefile_output(sf, "--out", "-");
	nconf = 0;
	cr_expect_eq(samefile_check(sf, keep, NULL), 1);
	cr_expect(!conf[0].other_is_input);
	cr_expect_str_eq(conf[0].out_what, "--json");
	cr_expect_str_eq(conf[0].other_what, "--csv");
	samefile_destroy(sf);
	samefile_destroy(NULL);
	free(d);
}

/* ---- each command with an output ---- */

Test(samefile, run_refuses_to_write_the_trace_or_a_report_over_its_inputs)
{
	char *d = tmp_dir(), args[4096], want[4096], link_[1200], hard[1200];
	char *sc = absolute_copy(d, "s.json", "scenarios/quickstart.json", "../");
	const char *model = src_path("models/zoo/llama2-7b.json");
	snprintf(args, sizeof(args), "run %s --out %s/o --quiet --trace %s", sc, d, sc);
	snprintf(want, sizeof(want), "ddlsim: --trace '%s': error: is an input of this command (the scenario '%s'); "
		 "refusing to overwrite it\n", sc, sc);
	refused_keeps(args, 3, want, sc);
	/* the model through a symbolic link */
	snprintf(link_, sizeof(link_), "%s/m.json", d);
	cr_assert_eq(symlink(model, link_), 0);
	snprintf(args, sizeof(args), "run %s --out %s/o --quiet --trace %s", sc, d, link_);
	snprintf(want, sizeof(want), "ddlsim: --trace '%s': error: is an input of this command (the model '%s'); "
		 "refusing to overwrite it\n", link_, model);
	refused_keeps(args, 3, want, model);
	/* the scenario as DIR/report.json through a hard link */
	snprintf(hard, sizeof(hard), "%s/r/report.json", d);
	snprintf(args, sizeof(args), "mkdir -p %s/r && ln %s %s", d, sc, hard);
	cr_assert_eq(system(args), 0);
	snprintf(args, sizeof(args), "run %s --out %s/r --quiet --format json", sc, d);
	snprintf(want, sizeof(want), "ddlsim: --out '%s': error: is an input of this command (the scenario '%s'); "
		 "refusing to overwrite it\n", hard, sc);
	refused_keeps(args, 3, want, sc);
	/* several scenarios: runs.csv is the topology */
	snprintf(hard, sizeof(hard), "%s/b/runs.csv", d);
	snprintf(args, sizeof(args), "mkdir -p %s/b && ln -s %s %s", d, src_path("topologies/dgx-a100.json"), hard);
	cr_assert_eq(system(args), 0);
	snprintf(args, sizeof(args), "run %s %s --out %s/b --quiet", sc, sc, d);
	snprintf(want, sizeof(want), "ddlsim: --out '%s': error: is an input of this command (the topology '%s'); "
		 "refusing to overwrite it\n", hard, src_path("topologies/dgx-a100.json"));
	refused_keeps(args, 3, want, src_path("topologies/dgx-a100.json"));
	snprintf(args, sizeof(args), "%s/o", d);
	cr_expect(!file_exists(args), "a refused run wrote its reports");
	free(sc), free(d);
}

Test(samefile, collective_refuses_to_write_over_its_topology)
{
	char *d = tmp_dir(), args[4096], want[4096], hard[1200];
	char *topo = absolute_copy(d, "t.json", "topologies/dgx-h100.json", "../");
	snprintf(args, sizeof(args), "collective --topology %s -b 8 -e 1M --csv %s", topo, topo);
	snprintf(want, sizeof(want), "ddlsim: --csv '%s': error: is an input of this command (the topology '%s'); "
		 "refusing to overwrite it\n", topo, topo);
	refused_keeps(args, 3, want, topo);
	snprintf(hard, sizeof(hard), "%s/h.json", d);
	cr_assert_eq(link(topo, hard), 0);
	snprintf(args, sizeof(args), "collective --topology %s -b 8 -e 1M --json %s", topo, hard);
	snprintf(want, sizeof(want), "ddlsim: --json '%s': error: is an input of this command (the topology '%s'); "
		 "refusing to overwrite it\n", hard, topo);
	refused_keeps(args, 3, want, topo);
	free(topo), free(d);
}

Test(samefile, validation_refuses_a_csv_or_bands_file_over_a_case)
{
	char *d = tmp_dir(), args[4096], want[4096];
	char *sc = absolute_copy(d, "case.json", "validation/megatron-core-h100/mcore-1.7b-48gpu.json", "../../");
	snprintf(args, sizeof(args), "validation %s --csv %s", sc, sc);
	snprintf(want, sizeof(want), "ddlsim: --csv '%s': error: is an input of this command (the scenario '%s'); "
		 "refusing to overwrite it\n", sc, sc);
	refused_keeps(args, 3, want, sc);
	snprintf(args, sizeof(args), "validation %s --write-bands %s/./case.json", sc, d);
	snprintf(want, sizeof(want), "ddlsim: --write-bands '%s/./case.json': error: is an input of this command "
		 "(the scenario '%s'); refusing to overwrite it\n", d, sc);
	refused_keeps(args, 3, want, sc);
	free(sc), free(d);
}

Test(samefile, plan_refuses_to_write_its_table_over_the_goal)
{
	char *d = tmp_dir(), args[4096], want[4096];
	char *goal = absolute_copy(d, "plans.csv", "scenarios/goals/llama2-70b-lora-3-epochs.json", "../../");
	snprintf(args, sizeof(args), "plan %s --out %s --quiet", goal, d);
	snprintf(want, sizeof(want), "ddlsim: --out '%s/plans.csv': error: is an input of this command (the goal "
		 "'%s'); refusing to overwrite it\n", d, goal);
	refused_keeps(args, 3, want, goal);
	free(goal), free(d);
}

static char *small_sweep(const char *dir, const char *name)
{
	char text[2048];
	snprintf(text, sizeof(text),
		 "{\"schema\": \"ddlsim.sweep\", \"schema_version\": \"1.0\", \"name\": \"t\", \"base\": \"%s\",\n"
		 " \"axes\": {\"training.micro_batch\": [8, 16, 32, 64, 128, 256], \"training.global_batch\": [256]}}\n",
		 src_path("scenarios/resnet50-v100-1gpu.json"));
	return write_file(dir, name, text);
}

Test(samefile, sweep_refuses_outputs_over_the_sweep_or_its_base)
{
	char *d = tmp_dir(), args[4096], want[4096], hard[1200];
	/* the sweep file named as its own points file */
	char *sw = small_sweep(d, "points.jsonl");
	snprintf(args, sizeof(args), "sweep %s --out %s --quiet", sw, d);
	snprintf(want, sizeof(want), "ddlsim: --out '%s': error: is an input of this command (the sweep '%s'); "
		 "refusing to overwrite it\n", sw, sw);
	refused_keeps(args, 3, want, sw);
	snprintf(args, sizeof(args), "%s/points.csv", d);
	cr_expect(!file_exists(args), "a refused sweep left its CSV");
	/* the base scenario hard-linked where a plot goes */
	char *sw2 = small_sweep(d, "s.json");
	snprintf(hard, sizeof(hard), "%s/o/pareto.svg", d);
	snprintf(args, sizeof(args), "mkdir -p %s/o && ln %s %s", d, src_path("scenarios/resnet50-v100-1gpu.json"),
		 hard);
	cr_assert_eq(system(args), 0);
	snprintf(args, sizeof(args), "sweep %s --out %s/o --quiet", sw2, d);
	snprintf(want, sizeof(want), "ddlsim: --out '%s': error: is an input of this command (the base scenario "
		 "'%s'); refusing to overwrite it\n", hard, src_path("scenarios/resnet50-v100-1gpu.json"));
	refused_keeps(args, 3, want, hard);
	/* a user's sweep where origin records were once written is never
	 * touched; a file at the new record's name that is not one is refused */
	snprintf(args, sizeof(args), "mkdir -p %s/x %s/y", d, d);
	cr_assert_eq(system(args), 0);
	char *user = small_sweep(d, "x/points.sweep.json"), *before = test_file_text(user);
	snprintf(args, sizeof(args), "sweep %s --out %s/x --quiet", sw2, d);
	cr_expect_eq(run_ddlsim(args, NULL, NULL), 0);
	char *after = test_file_text(user);
	cr_expect_str_eq(after, before);
	snprintf(args, sizeof(args), "%s/x/points.ddlsim-origin.json", d);
	cr_expect(file_exists(args));
	free(write_file(d, "y/points.ddlsim-origin.json", "{\"mine\": 1}\n"));
	snprintf(args, sizeof(args), "sweep %s --out %s/y --quiet", sw2, d);
	snprintf(want, sizeof(want), "ddlsim: --out '%s/y': error: '%s/y/points.ddlsim-origin.json' exists and is not "
		 "a sweep origin record (schema ddlsim.sweep-origin): refusing to replace it\n", d, d);
	snprintf(hard, sizeof(hard), "%s/y/points.ddlsim-origin.json", d);
	refused_keeps(args, 3, want, hard);
	free(user), free(before), free(after);
	free(sw), free(sw2), free(d);
}

Test(samefile, calib_refuses_one_file_for_the_profile_and_the_csv)
{
	char *d = tmp_dir(), args[4096], want[4096], *err = NULL;
	snprintf(args, sizeof(args), "calib --out %s/p.json --csv %s/./p.json", d, d);
	int rc = run_ddlsim(args, NULL, &err);
	if (rc == 1 && strstr(err, "the calibration tool was not built")) {
		free(err);
		cr_skip_test("no CUDA at build time: ddlsim-calib is not built");
	}
	cr_expect_eq(rc, 2, "%s", err);
	snprintf(want, sizeof(want), "ddlsim-calib: error: --csv '%s/./p.json' is also --out '%s/p.json': give it "
		 "another file (the one would replace the other)\n", d, d);
	cr_expect(strstr(err, want), "%s", err);
	free(err), free(d);
}

/* ---- merge: what complete means ---- */

/* The sweep of small_sweep() in 3 shards under dir/o (2 points each). */
static char *three_shards(void)
{
	char *d = tmp_dir(), args[4096];
	char *sw = small_sweep(d, "s.json");
	for (int i = 1; i <= 3; i++) {
		snprintf(args, sizeof(args), "sweep %s --out %s/o --shard %d/3 --quiet", sw, d, i);
		cr_assert_eq(run_ddlsim(args, NULL, NULL), 0);
	}
	free(sw);
	return d;
}

#define SHARD(n) "%s/o/points.shard-" #n "-of-3"

Test(merge, a_shard_of_the_other_format_is_an_error)
{
	char *d = three_shards(), args[4096], want[4096], *err = NULL;
	snprintf(args, sizeof(args), "merge %s/m.csv " SHARD(1) ".csv " SHARD(2) ".jsonl " SHARD(3) ".csv", d, d, d, d);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 2);
	snprintf(want, sizeof(want), "ddlsim: error: merge: input '" SHARD(2) ".jsonl' is JSON lines but OUT '%s/m.csv' "
		 "is CSV: merge the .csv files of the shards into OUT (and their .jsonl files apart)\n"
		 "(see 'ddlsim --help')\n", d, d);
	cr_expect_str_eq(err, want);
	snprintf(args, sizeof(args), "%s/m.csv", d);
	cr_expect(!file_exists(args));
	free(err), free(d);
}

Test(merge, a_torn_row_or_a_shard_cut_short_is_missing_points_unless_partial)
{
	char *d = three_shards(), args[4096], want[4096], *err = NULL, *out = NULL;
	/* shard 3 (points 2 and 5) torn inside its last row */
	snprintf(args, sizeof(args), "cp " SHARD(3) ".csv " SHARD(3) ".bak && head -c -9 " SHARD(3) ".bak > "
		 SHARD(3) ".csv", d, d, d, d);
	cr_assert_eq(system(args), 0);
	snprintf(args, sizeof(args), "merge %s/m.csv " SHARD(1) ".csv " SHARD(2) ".csv " SHARD(3) ".csv", d, d, d, d);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3);
	snprintf(want, sizeof(want),
		 SHARD(3) ".csv:3: error: torn last row (a sweep killed while writing it; 'ddlsim sweep --resume' cuts it "
		 "and runs its point again)\n"
		 SHARD(3) ".csv: error: holds 1 of the 2 points of shard 3 of 3\n"
		 "ddlsim: merge: error: sweep 't' has 6 points, 1 missing: 5; resume the shards that lack them (ddlsim "
		 "sweep --resume), or pass --partial to merge what is there\n", d, d);
	cr_expect_str_eq(err, want);
	free(err);
	snprintf(want, sizeof(want), "%s/m.csv", d);
	cr_expect(!file_exists(want));

	/* shard 1 cut after its header (a copy that stopped), shard 3 torn:
	 * --partial merges the 3 points there and says which are not */
	snprintf(args, sizeof(args), "cp " SHARD(1) ".csv " SHARD(1) ".bak && head -1 " SHARD(1) ".bak > " SHARD(1) ".csv",
		 d, d, d, d);
	cr_assert_eq(system(args), 0);
	snprintf(args, sizeof(args), "merge %s/m.csv " SHARD(1) ".csv " SHARD(2) ".csv " SHARD(3) ".csv", d, d, d, d);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3);
	cr_expect(strstr(err, "ddlsim: merge: error: sweep 't' has 6 points, 3 missing: 0, 3, 5; "), "%s", err);
	free(err);
	snprintf(args, sizeof(args), "merge %s/m.csv --partial " SHARD(1) ".csv " SHARD(2) ".csv " SHARD(3) ".csv", d, d,
		 d, d);
	cr_expect_eq(run_ddlsim(args, &out, &err), 0);
	snprintf(want, sizeof(want),
		 SHARD(1) ".csv: warning: holds 0 of the 2 points of shard 1 of 3\n"
		 SHARD(3) ".csv:3: warning: torn last row (a sweep killed while writing it; 'ddlsim sweep --resume' cuts "
		 "it and runs its point again): left out\n"
		 SHARD(3) ".csv: warning: holds 1 of the 2 points of shard 3 of 3\n"
		 "ddlsim: merge: warning: merged 3 of 6 points; missing: 0, 3, 5 (--partial)\n", d, d, d);
	cr_expect_str_eq(err, want);
	snprintf(want, sizeof(want), "3 points from 3 files written to %s/m.csv\n", d);
	cr_expect_str_eq(out, want);
	/* a partial merge is not the whole sweep: no origin record */
	snprintf(want, sizeof(want), "%s/m.ddlsim-origin.json", d);
	cr_expect(!file_exists(want));
	free(err), free(out), free(d);
}

Test(merge, runs_of_missing_points_read_as_ranges)
{
	char *d = tmp_dir(), args[4096], *err = NULL;
	char *sw = small_sweep(d, "s.json");
	/* the whole sweep merged (rows by point), then cut after points 0, 1 */
	snprintf(args, sizeof(args), "sweep %s --out %s/o --quiet && %s merge %s/all.csv %s/o/points.csv >/dev/null && "
		 "head -3 %s/all.csv > %s/p.csv && cp %s/all.ddlsim-origin.json %s/p.ddlsim-origin.json", sw, d,
		 getenv("DDLSIM_BIN"), d, d, d, d, d, d);
	cr_assert_eq(run_ddlsim(args, NULL, NULL), 0);
	snprintf(args, sizeof(args), "merge --partial %s/m.csv %s/p.csv", d, d);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 0);
	char want[2400];
	snprintf(want, sizeof(want), "%s/p.csv: warning: holds 2 of the sweep's 6 points\n"
		 "ddlsim: merge: warning: merged 2 of 6 points; missing: 2..5 (--partial)\n", d);
	cr_expect_str_eq(err, want);
	free(err), free(sw), free(d);
}

Test(merge, a_shard_whose_sweep_holds_its_lock_is_refused)
{
	char *d = three_shards(), args[4096], want[4096], p[1200], *err = NULL;
	snprintf(p, sizeof(p), SHARD(2) ".csv", d);
	int fd = open(p, O_RDONLY);
	cr_assert(fd >= 0 && flock(fd, LOCK_EX) == 0);
	snprintf(args, sizeof(args), "merge --partial %s/m.jsonl " SHARD(1) ".jsonl " SHARD(2) ".jsonl " SHARD(3) ".jsonl",
		 d, d, d, d);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3);
	snprintf(want, sizeof(want), SHARD(2) ".jsonl: error: a sweep is still writing it (it holds the lock of '%s'): "
		 "merge once it has ended\n", d, p);
	cr_expect_str_eq(err, want);
	free(err);
	close(fd);
	cr_expect_eq(run_ddlsim(args, NULL, NULL), 0);
	free(d);
}

Test(merge, out_may_be_no_shard_and_its_record_no_users_file)
{
	char *d = three_shards(), args[4096], want[4096], *err = NULL;
	snprintf(args, sizeof(args), "merge " SHARD(1) ".csv " SHARD(1) ".csv " SHARD(2) ".csv " SHARD(3) ".csv", d, d,
		 d, d);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3);
	snprintf(want, sizeof(want), "ddlsim: OUT '" SHARD(1) ".csv': error: is an input of this command (a shard '"
		 SHARD(1) ".csv'); refusing to overwrite it\n"
		 "ddlsim: OUT's origin record '" SHARD(1) ".ddlsim-origin.json': error: is an input of this command (an "
		 "origin record it read '" SHARD(1) ".ddlsim-origin.json'); refusing to overwrite it\n", d, d, d, d);
	cr_expect_str_eq(err, want);
	free(err);
	/* a user's results.sweep.json beside OUT results.csv stays as it was */
	char *user = small_sweep(d, "results.sweep.json"), *before = test_file_text(user);
	snprintf(args, sizeof(args), "merge %s/results.csv " SHARD(1) ".csv " SHARD(2) ".csv " SHARD(3) ".csv", d, d, d,
		 d);
	cr_expect_eq(run_ddlsim(args, NULL, NULL), 0);
	char *after = test_file_text(user);
	cr_expect_str_eq(after, before);
	snprintf(want, sizeof(want), "%s/results.ddlsim-origin.json", d);
	cr_expect(file_exists(want));
	free(user), free(before), free(after), free(d);
}
