/* test-plan: sweeps (expansion, constraints, resume, shards, merge; CSV
 * fields with commas, quotes and line breaks), the
 * expression language, economics and goodput against their closed forms,
 * and the plan search's screen against the engine. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "economics.h"
#include "expr.h"
#include "goodput.h"
#include "sweep.h"
#include "testutil.h"

static bool vars(void *ctx, const char *name, size_t len, double *out)
{
	(void)ctx;
	if (len == 2 && !strncmp(name, "dp", 2)) {
		*out = 48;
		return true;
	}
	if (len == 11 && !strncmp(name, "micro_batch", 11)) {
		*out = 2;
		return true;
	}
	return false;
}

Test(expr, round_to_picks_the_nearest_multiple)
{
	double x;
	char err[200];
	cr_assert_eq(expr_eval("round_to(dp * micro_batch, 1024)", vars, NULL, &x, err, sizeof(err)), 0, "%s", err);
	cr_expect_eq(x, 1056);  /* 96 x 11 = 1056 is nearer 1024 than 96 x 10 = 960 */
	cr_assert_eq(expr_eval("dp % 16 == 0 && !(micro_batch > 2) || 0", vars, NULL, &x, err, sizeof(err)), 0);
	cr_expect_eq(x, 1);
	cr_assert_eq(expr_eval("if(dp < 10, 1, max(2, -3) + div(7, 2))", vars, NULL, &x, err, sizeof(err)), 0);
	cr_expect_eq(x, 5);
}

Test(expr, reports_the_column_of_an_error)
{
	double x;
	char err[200];
	cr_assert_eq(expr_eval("dp * nodez", vars, NULL, &x, err, sizeof(err)), -1);
	cr_expect_str_eq(err, "unknown variable 'nodez' at column 6");
	cr_assert_eq(expr_eval("min(1, 2", vars, NULL, &x, err, sizeof(err)), -1);
	cr_expect_str_eq(err, "expected ')' at column 9");
}

Test(sweep, expands_ranges)
{
	char err[200];
	json_t *a = sweep_range("16..512 step x2", err, sizeof(err));
	cr_assert(a, "%s", err);
	cr_assert_eq(json_array_size(a), 6);
	cr_expect_eq(json_integer_value(json_array_get(a, 5)), 512);
	json_decref(a);
	a = sweep_range("1..2 step 0.25", err, sizeof(err));
	cr_assert_eq(json_array_size(a), 5);
	cr_expect_eq(json_real_value(json_array_get(a, 1)), 1.25);
	json_decref(a);
	cr_expect_null(sweep_range("8..1", err, sizeof(err)));
	cr_expect_str_eq(err, "range '8..1' is empty or does not advance (needs A <= B and step > 0, "
			 "or factor > 1 and A > 0)");
}

static const char *SWEEP =
	"{\"schema\": \"ddlsim.sweep\", \"schema_version\": \"1.0\", \"name\": \"t\",\n"
	" \"base\": \"%s\",\n"
	" \"axes\": {\"training.micro_batch\": [16, 32, 64, 128], \"training.global_batch\": \"64..256 step x2\"},\n"
	" \"derived\": {\"cost.usd_per_gpu_hour\": \"micro_batch / 16\"},\n"
	" \"constraints\": [\"micro_batch <= 64\"]}\n";

static char *make_sweep(char **dir)
{
	char text[2048];
	*dir = tmp_dir();
	snprintf(text, sizeof(text), SWEEP, src_path("scenarios/resnet50-v100-1gpu.json"));
	return write_file(*dir, "s.json", text);
}

Test(sweep, points_constraints_and_derived_values)
{
	char *dir, *p = make_sweep(&dir);
	struct diag d;
	diag_init(&d, NULL);
	struct sweep *s = sweep_load(p, &d);
	cr_assert(s, "%s", diag_text(&d));
	cr_assert_eq(s->npoints, 12);
	char reason[512];
	json_t *vals;
	/* point 4: micro_batch 32 (second value), global_batch 64: last axis fastest */
	json_t *doc = sweep_point(s, 4, &vals, reason, sizeof(reason));
	cr_assert(doc, "%s", reason);
	cr_expect_eq(json_integer_value(json_object_get(json_object_get(doc, "training"), "micro_batch")), 32);
	cr_expect_eq(json_integer_value(json_object_get(json_object_get(doc, "training"), "global_batch")), 128);
	cr_expect_eq(json_integer_value(json_object_get(json_object_get(doc, "cost"), "usd_per_gpu_hour")), 2);
	json_decref(doc);
	json_decref(vals);
	cr_expect_null(sweep_point(s, 9, &vals, reason, sizeof(reason)));
	cr_expect_str_eq(reason, "constraint \"micro_batch <= 64\" is false");
	json_decref(vals);
	sweep_destroy(s);
	diag_finish(&d);
}

Test(sweep, bad_input_exact_messages)
{
	char *dir = tmp_dir();
	char *p = write_file(dir, "bad.json",
			     "{\"schema\": \"ddlsim.sweep\", \"schema_version\": \"1.0\", \"base\": \"nope.json\",\n"
			     " \"axes\": {\"nodes\": [], \"parallel.tp\": \"1..x\"}, \"derived\": {\"a\": \"1 +\"}, \"extra\": 1}\n");
	char args[1200], *err = NULL, want[4000];
	snprintf(args, sizeof(args), "sweep %s", p);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 3);
	snprintf(want, sizeof(want),
		 "%s: /base: error: cannot open '%s/nope.json': No such file or directory\n"
		 "%s: /axes: error: /nodes: expected a non-empty list or a range string, got an empty list\n"
		 "%s: /axes: error: /parallel.tp: expected a list or a range \"A..B\", \"A..B step S\" or \"A..B step xF\", got '1..x'\n"
		 "%s: /derived/a: error: unexpected end of expression at column 4 in \"1 +\"\n"
		 "%s: /extra: error: unknown key 'extra'\n", p, dir, p, p, p, p);
	cr_expect_str_eq(err, want);
}

static char *slurp_sorted(const char *path)
{
	char cmd[1200];
	snprintf(cmd, sizeof(cmd), "sort '%s' | cut -d, -f1-50 | sed 's/,[0-9.e+-]*,ok,/,ok,/'", path);
	FILE *f = popen(cmd, "r");
	char *buf = calloc(1, 1 << 20);
	size_t n = fread(buf, 1, (1 << 20) - 1, f);
	buf[n] = 0;
	pclose(f);
	return buf;
}

/* The rows without the simulator's wall time (the one column that differs
 * between two runs of the same point). */
static char *rows(const char *path)
{
	char cmd[1600];
	int w = snprintf(cmd, sizeof(cmd),
		 "python3 -c \"import csv,sys; r=list(csv.DictReader(open('%s')));"
		 "[x.pop('sim_wall_s') for x in r]; r.sort(key=lambda x:int(x['point']));"
		 "print('\\n'.join(','.join(x.values()) for x in r))\"", path);
	cr_assert(w > 0 && (size_t)w < sizeof(cmd), "path too long: %s", path);
	FILE *f = popen(cmd, "r");
	char *buf = calloc(1, 1 << 20);
	size_t n = fread(buf, 1, (1 << 20) - 1, f);
	buf[n] = 0;
	pclose(f);
	return buf;
}

Test(sweep, resume_and_shards_give_the_rows_of_one_run, .timeout = 300)
{
	char *dir, *p = make_sweep(&dir);
	char args[2400], path[1200];
	(void)slurp_sorted;
	snprintf(args, sizeof(args), "sweep %s --out %s/full -j 2 --quiet", p, dir);
	cr_assert_eq(run_ddlsim(args, NULL, NULL), 0);
	snprintf(path, sizeof(path), "%s/full/points.csv", dir);
	char *full = rows(path);
	cr_assert_gt(strlen(full), 100);
	cr_expect(strstr(full, "invalid,constraint \"\"micro_batch <= 64\"\" is false") ||
		  strstr(full, "constraint"), "%s", full);

	/* a killed sweep: keep the header and 4 rows, tear the fifth line */
	snprintf(args, sizeof(args),
		 "mkdir -p %s/part && head -5 %s/full/points.csv > %s/part/points.csv && "
		 "sed -n 6p %s/full/points.csv | head -c 20 >> %s/part/points.csv && "
		 "head -6 %s/full/points.jsonl > %s/part/points.jsonl && cp %s/full/points.ddlsim-origin.json %s/part/",
		 dir, dir, dir, dir, dir, dir, dir, dir, dir);
	cr_assert_eq(system(args), 0);
	snprintf(args, sizeof(args), "sweep %s --out %s/part --resume --quiet", p, dir);
	cr_assert_eq(run_ddlsim(args, NULL, NULL), 0);
	snprintf(path, sizeof(path), "%s/part/points.csv", dir);
	cr_expect_str_eq(rows(path), full);
	snprintf(args, sizeof(args), "test $(wc -l < %s/part/points.jsonl) -eq 12", dir);
	cr_expect_eq(system(args), 0);

	/* shards 1/3..3/3 merged */
	for (int i = 1; i <= 3; i++) {
		snprintf(args, sizeof(args), "sweep %s --out %s/sh --shard %d/3 --quiet", p, dir, i);
		cr_assert_eq(run_ddlsim(args, NULL, NULL), 0);
	}
	snprintf(args, sizeof(args), "merge %s/merged.csv %s/sh/points.shard-1-of-3.csv "
		 "%s/sh/points.shard-2-of-3.csv %s/sh/points.shard-3-of-3.csv", dir, dir, dir, dir);
	cr_assert_eq(run_ddlsim(args, NULL, NULL), 0);
	snprintf(path, sizeof(path), "%s/merged.csv", dir);
	cr_expect_str_eq(rows(path), full);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	cr_assert(f, "cannot read %s", path);
	char *buf = calloc(1, 1 << 20);
	size_t n = fread(buf, 1, (1 << 20) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

/* An error message with a comma, a quote and a line break, as the sweep
 * writes it (RFC 4180: quoted, the quote doubled), in hand-written shards. */
Test(sweep, merge_keeps_a_quoted_field_with_a_comma_a_quote_and_a_newline)
{
	char *dir = tmp_dir(), args[1200], path[1200], *out = NULL;
	char *a = write_file(dir, "a.csv",
			     "point,sweep,error\n"
			     "2,t,\"constraint \"\"max(micro_batch,\n 16) <= 16\"\" is false\"\n"
			     "0,t,\n");
	char *b = write_file(dir, "b.csv",
			     "point,sweep,error\n"
			     "1,t,\"x,y\"\n"
			     "2,t,a duplicate: the first input's row is kept\n");
	snprintf(args, sizeof(args), "merge %s/m.csv %s %s", dir, a, b);
	cr_assert_eq(run_ddlsim(args, &out, NULL), 0);
	snprintf(path, sizeof(path), "%s/m.csv", dir);
	cr_expect_str_eq(slurp(path),
			 "point,sweep,error\n"
			 "0,t,\n"
			 "1,t,\"x,y\"\n"
			 "2,t,\"constraint \"\"max(micro_batch,\n 16) <= 16\"\" is false\"\n");
	char want[1400];
	snprintf(want, sizeof(want), "3 points from 2 files written to %s/m.csv\n", dir);
	cr_expect_str_eq(out, want);
}

/* Hand-made shards have no origin files (cli/sweep_origin.h). */
#define NO_ORIGIN "ddlsim: warning: the inputs have no origin files (points.*.ddlsim-origin.json): cannot " \
		  "check that they are the shards of one sweep\n"

Test(sweep, merge_bad_input_exact_messages)
{
	char *dir = tmp_dir(), args[1200], *err = NULL, want[1400];
	char *a = write_file(dir, "a.csv", "point,sweep,error\n0,t,\"two\nlines\"\nx,t,\n");
	char *b = write_file(dir, "b.csv", "point,sweep\n0,t\n");
	snprintf(args, sizeof(args), "merge %s/m.csv %s", dir, a);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 3);
	snprintf(want, sizeof(want), "%s%s:4: error: expected a point index in the first column, got 'x'\n", NO_ORIGIN, a);
	cr_expect_str_eq(err, want);
	free(err);
	snprintf(args, sizeof(args), "merge %s/m.csv %s %s", dir, b, a);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 3);
	snprintf(want, sizeof(want), "%s%s:1: error: header differs from %s's\n", NO_ORIGIN, a, b);
	cr_expect_str_eq(err, want);
}

/* A sweep whose invalid points' error field holds a comma, quotes and a
 * line break (the constraint's text): --resume on the finished output
 * runs nothing again and leaves it byte for byte; a kill inside that
 * quoted field is a torn record, cut and run again; merge keeps the rows. */
Test(sweep, resume_and_merge_survive_a_field_with_a_comma_a_quote_and_a_newline, .timeout = 300)
{
	char *dir = tmp_dir(), text[2048], args[2400], path[1200], want[4000], *out = NULL;
	snprintf(text, sizeof(text),
		 "{\"schema\": \"ddlsim.sweep\", \"schema_version\": \"1.0\", \"name\": \"q\",\n"
		 " \"base\": \"%s\",\n"
		 " \"axes\": {\"training.micro_batch\": [16, 32, 64], \"training.global_batch\": [64]},\n"
		 " \"constraints\": [\"max(micro_batch,\\n 16) <= 16\"]}\n",
		 src_path("scenarios/resnet50-v100-1gpu.json"));
	char *p = write_file(dir, "q.json", text);
	snprintf(args, sizeof(args), "sweep %s --out %s/full --quiet", p, dir);
	cr_assert_eq(run_ddlsim(args, NULL, NULL), 0);
	snprintf(path, sizeof(path), "%s/full/points.csv", dir);
	char *full = slurp(path);
	const char *field = ",invalid,\"constraint \"\"max(micro_batch,\n 16) <= 16\"\" is false\",";
	char *r1 = strstr(full, "\n1,q,"), *r2 = strstr(full, "\n2,q,"), *r0 = strstr(full, "\n0,q,");
	cr_assert(r0 && r1 && r2, "%s", full);
	cr_assert(r1 < r2 && r2 < r0, "invalid rows first, then the simulated one:\n%s", full);
	cr_expect(strstr(r1, field) && strstr(r1, field) < r2, "%s", full);
	cr_expect(strstr(r2, field), "%s", full);
	cr_expect(strstr(r0, ",ok,"), "%s", full);

	/* resume a finished sweep: nothing runs, the file is unchanged */
	snprintf(args, sizeof(args), "sweep %s --out %s/full --resume", p, dir);
	cr_assert_eq(run_ddlsim(args, &out, NULL), 0);
	snprintf(want, sizeof(want),
		 "invalid points by reason:\n"
		 "  2 invalid: constraint \"max(micro_batch,\\n 16) <= 16\" is false\n"
		 "best point that fits: point 0 (training.micro_batch=16, training.global_batch=64): 0 d to train, "
		 "$0, MFU 40.4%%, 2.7 of 32.0 GB\n"
		 "3 points (3 already done): 0 simulated (0 do not fit in memory), 0 invalid, 0 failed; rows in %s/full/points.csv "
		 "and %s/full/points.jsonl; plots in %s/full/pareto.svg and mfu-gpus.svg\n", dir, dir, dir);
	cr_expect_str_eq(out, want);
	cr_expect_str_eq(slurp(path), full);

	/* killed inside point 2's quoted field, after its line break, with
	 * points 1 and 0 written before it */
	char *hdr_end = strchr(full, '\n') + 1;
	size_t cut = (size_t)(strstr(r2, "micro_batch,\n") + strlen("micro_batch,\n") - (r2 + 1));
	char part[8192], whole[8192];
	snprintf(part, sizeof(part), "%.*s%s%.*s", (int)(r2 + 1 - full), full, r0 + 1, (int)cut, r2 + 1);
	snprintf(whole, sizeof(whole), "%.*s%s%.*s", (int)(r2 + 1 - full), full, r0 + 1, (int)(r0 - r2), r2 + 1);
	snprintf(args, sizeof(args), "mkdir -p %s/part && cp %s/full/points.jsonl %s/full/points.ddlsim-origin.json %s/part/",
		 dir, dir, dir, dir);
	cr_assert_eq(system(args), 0);
	free(write_file(dir, "part/points.csv", part));
	snprintf(args, sizeof(args), "sweep %s --out %s/part --resume", p, dir);
	free(out);
	cr_assert_eq(run_ddlsim(args, &out, NULL), 0);
	snprintf(want, sizeof(want),
		 "invalid points by reason:\n"
		 "  2 invalid: constraint \"max(micro_batch,\\n 16) <= 16\" is false\n"
		 "best point that fits: point 0 (training.micro_batch=16, training.global_batch=64): 0 d to train, "
		 "$0, MFU 40.4%%, 2.7 of 32.0 GB\n"
		 "3 points (2 already done): 0 simulated (0 do not fit in memory), 1 invalid, 0 failed; rows in %s/part/points.csv "
		 "and %s/part/points.jsonl; plots in %s/part/pareto.svg and mfu-gpus.svg\n", dir, dir, dir);
	cr_expect_str_eq(out, want);
	snprintf(path, sizeof(path), "%s/part/points.csv", dir);
	cr_expect_str_eq(slurp(path), whole);

	/* the rows as two shards, point 1 in both */
	snprintf(args, sizeof(args),
		 "cd %s && head -1 full/points.csv > s1.csv && head -1 full/points.csv > s2.csv", dir);
	cr_assert_eq(system(args), 0);
	snprintf(path, sizeof(path), "%s/s1.csv", dir);
	FILE *f = fopen(path, "a");
	fprintf(f, "%.*s%s", (int)(r2 + 1 - hdr_end), hdr_end, r0 + 1);  /* points 1 and 0 */
	fclose(f);
	snprintf(path, sizeof(path), "%s/s2.csv", dir);
	f = fopen(path, "a");
	fprintf(f, "%.*s", (int)(r0 - r1), r1 + 1);                       /* points 1 and 2 */
	fclose(f);
	snprintf(args, sizeof(args), "merge %s/m.csv %s/s2.csv %s/s1.csv", dir, dir, dir);
	free(out);
	cr_assert_eq(run_ddlsim(args, &out, NULL), 0);
	snprintf(path, sizeof(path), "%s/m.csv", dir);
	char *merged = slurp(path);
	/* one header, then points 0, 1, 2 each once, as written */
	snprintf(want, sizeof(want), "%.*s%s%.*s", (int)(hdr_end - full), full, r0 + 1, (int)(r0 - r1), r1 + 1);
	cr_expect_str_eq(merged, want);
}

/* Fit first (issue 27): ResNet-50 on one 32 GB V100 at micro-batch 512
 * needs 48.0 GB: the point simulates, but its status is "oom" with the GB
 * missing, the summary names the point that fits as the best, the plot
 * leaves it out (and says so), and --show-rejected lists it apart. */
Test(sweep, a_point_that_does_not_fit_is_oom_and_never_on_the_front, .timeout = 120)
{
	char *dir = tmp_dir(), text[2048], args[2400], path[1200], want[4000], *out = NULL;
	snprintf(text, sizeof(text),
		 "{\"schema\": \"ddlsim.sweep\", \"schema_version\": \"1.0\", \"name\": \"r\",\n"
		 " \"base\": \"%s\",\n"
		 " \"axes\": {\"training.micro_batch\": [16, 512]},\n"
		 " \"derived\": {\"training.global_batch\": \"micro_batch\"}}\n",
		 src_path("scenarios/resnet50-v100-1gpu.json"));
	char *p = write_file(dir, "r.json", text);
	snprintf(args, sizeof(args), "sweep %s --out %s/o --show-rejected", p, dir);
	cr_assert_eq(run_ddlsim(args, &out, NULL), 0, "a point that does not fit is not a failure");
	snprintf(want, sizeof(want),
		 "best point that fits: point 0 (training.micro_batch=16, training.global_batch=16): 0 d to train, "
		 "$0, MFU 40.2%%, 2.7 of 32.0 GB\n"
		 "rejected: 1 point that does not fit in GPU memory\n"
		 "  point 1 (training.micro_batch=512, training.global_batch=512): needs 48.0 GB of 32.0 GB, "
		 "16.0 GB missing\n"
		 "2 points (0 already done): 2 simulated (1 do not fit in memory), 0 invalid, 0 failed; "
		 "rows in %s/o/points.csv and %s/o/points.jsonl; plots in %s/o/pareto.svg and mfu-gpus.svg\n",
		 dir, dir, dir);
	cr_expect_str_eq(out, want);
	snprintf(path, sizeof(path), "%s/o/points.csv", dir);
	char *csv = slurp(path);
	cr_expect(strstr(csv, ",oom,\"does not fit: the fullest GPU needs 48.0 GB of 32.0 GB, 16.0 GB missing\","),
		  "%s", csv);
	cr_expect(strstr(csv, "\n0,r,16,16,") && strstr(strstr(csv, "\n0,r,16,16,"), ",ok,,"), "%s", csv);
	snprintf(path, sizeof(path), "%s/o/pareto.svg", dir);
	char *svg = slurp(path);
	cr_expect(strstr(svg, ">1 plans that fit plotted</text>"), "%s", svg);
	cr_expect(strstr(svg, ">1 that do not fit in memory left out</text>"), "%s", svg);
	int front = 0;
	for (const char *q = svg; (q = strstr(q, "(Pareto front)")); q++)
		front++;
	cr_expect_eq(front, 1, "the one point that fits is the front:\n%s", svg);
	cr_expect_null(strstr(svg, "MFU 47.9"), "the point that does not fit is drawn:\n%s", svg);
	free(svg);
	free(csv);
	free(out);
	free(p);
	free(dir);
}

Test(goodput, daly_and_young_closed_forms)
{
	/* delta << M: Daly's interval tends to Young's sqrt(2 delta M) */
	double d = 10, m = 36000;
	double young = sqrt(2 * d * m), x = d / (2 * m);
	cr_expect_float_eq(goodput_daly_interval(d, m), young * (1 + sqrt(x) / 3 + x / 9) - d, 1e-9);
	cr_expect_lt(fabs(goodput_daly_interval(d, m) / young - 1), 0.02);
	cr_expect_eq(goodput_daly_interval(100, 40), 40);  /* delta >= 2M: tau = M */
	struct goodput_params p = { .gpu_failures_per_hour = 1e-4, .storage_write_Bps = 1e9, .restart_s = 60 };
	struct goodput_result r;
	goodput_compute(&p, 1000, 125, 10e9, 86400, &r);
	double M = 3600 / 0.1, tau = goodput_daly_interval(10, M);
	double wall = M * exp(60 / M) * expm1((tau + 10) / M) * 86400 / tau;
	cr_expect_float_eq(r.mtbf_s, M, 1e-9);
	cr_expect_float_eq(r.wall_s, wall, 1e-6);
	cr_expect_float_eq(r.interruptions, wall / M, 1e-9);
}

Test(goodput, llama3_interruptions_and_effective_time)
{
	/* Llama 3 (arXiv 2407.21783, 3.3.4): 419 unexpected interruptions in
	 * 54 days on 16,384 GPUs, "higher than 90% effective training time".
	 * 405B: 16-bit weights + 12 bytes of Adam state per parameter. */
	struct goodput_params p;
	goodput_params_init(&p);
	struct goodput_result r;
	goodput_compute(&p, 16384, 2048, 405e9 * 14, 54 * 86400 * 0.93, &r);
	double per_day = r.interruptions / (r.wall_s / 86400);
	cr_expect_float_eq(per_day, 419.0 / 54, 1e-9);
	cr_expect_gt(r.ratio, 0.90);
	cr_expect_lt(r.ratio, 0.99);
}

Test(economics, cloud_and_purchase_closed_forms)
{
	struct econ_params p;
	econ_params_init(&p);
	struct econ_cluster c = { .nodes = 4, .gpus = 32, .nics_per_node = 8, .fabric_levels = 2,
				  .oversubscription = 2, .gpu_tdp_W = 700, .gpu_idle_W = 70,
				  .node_power_max_W = 10200 };
	cr_expect_eq(econ_ports(&c), 4 * 8 * (2 + 2.0 / 2));
	p.usd_per_gpu_hour = 2.5;
	p.port_W = 10;
	struct econ_result r;
	econ_compute(&p, &c, 3600, 0.5, 1e9, &r);
	double it = 32 * (70 + 0.5 * 630) + 4 * (10200 - 8 * 700) + 96 * 10.0;
	cr_expect_float_eq(r.it_W, it, 1e-9);
	cr_expect_float_eq(r.energy_MWh, 1.58 * it * 3600 / 3.6e9, 1e-12);
	cr_expect_float_eq(r.cost_usd, 32 * 2.5, 1e-9);
	cr_expect_float_eq(r.usd_per_Mtoken, 80 / 1e3, 1e-12);
	p.usd_per_gpu_hour = 0;
	p.capex_per_node_usd = 300000;
	p.capex_per_port_usd = 1000;
	p.usd_per_kWh = 0.1;
	econ_compute(&p, &c, 86400, 0.5, 1e9, &r);
	double capex = 4 * 300000 + 96 * 1000.0;
	cr_expect_float_eq(r.capex_usd, capex, 1e-9);
	cr_expect_float_eq(r.cost_usd, capex / (4 * 365.25) + 1.58 * it * 24 / 1e3 * 0.1, 1e-6);
}

/* The search simulates only the screen's best N; on a case small enough to
 * simulate every valid plan, its best must be exhaustive simulation's best
 * (Llama-2 7B on 16 A100: 24 plans of tp x pp x micro-batch x recompute). */
static char *best_row(const char *goal, int top, const char *dir)
{
	char args[2048], path[1200], *err = NULL;
	snprintf(args, sizeof(args), "plan %s --top %d -j 2 --quiet --out %s", goal, top, dir);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	free(err);
	snprintf(path, sizeof(path), "%s/plans.csv", dir);
	FILE *f = fopen(path, "r");
	cr_assert(f, "no %s", path);
	char line[8192];
	cr_assert(fgets(line, sizeof(line), f));  /* header */
	char *row = NULL;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "A100,1,", 7) == 0) {  /* the option's rank 1 */
			char *ok = strstr(line, ",ok,");
			cr_assert(ok, "%s", line);
			*ok = 0;  /* the plan and its estimate; what follows holds wall times */
			row = strdup(line);
			break;
		}
	}
	fclose(f);
	cr_assert(row, "no rank-1 row in %s", path);
	return row;
}

Test(search, finds_the_best_plan_of_exhaustive_simulation, .timeout = 300)
{
	char *d = tmp_dir(), goal_text[2048], dir_top[1200], dir_all[1200];
	snprintf(goal_text, sizeof(goal_text),
		 "{\"schema\": \"ddlsim.goal\", \"schema_version\": \"1.0\", \"name\": \"small\",\n"
		 " \"model\": \"%s\", \"seq_len\": 4096, \"train_tokens\": 1e12, \"deadline_days\": 365,\n"
		 " \"global_batch_tokens\": {\"min\": 4194304, \"max\": 4194304},\n"
		 " \"search\": {\"tp\": [1, 2, 4], \"pp\": [1, 2], \"interleave\": [1], \"micro_batch\": [1, 2],\n"
		 "   \"zero\": [1], \"recompute\": [\"selective\", \"full\"], \"sp\": [false], \"order\": [\"tp,dp,pp\"]},\n"
		 " \"clusters\": [{\"name\": \"A100\", \"topology\": \"%s\", \"nodes\": [2],\n"
		 "   \"economics\": {\"usd_per_gpu_hour\": 1.8}}]}\n",
		 src_path("models/zoo/llama2-7b.json"), src_path("topologies/dgx-a100.json"));
	char *goal = write_file(d, "goal.json", goal_text);
	snprintf(dir_top, sizeof(dir_top), "%s/top3", d);
	snprintf(dir_all, sizeof(dir_all), "%s/all", d);
	char *top = best_row(goal, 3, dir_top);
	char *all = best_row(goal, 100, dir_all);
	cr_expect_str_eq(top, all, "search with the screen's best 3 and exhaustive simulation disagree");
	free(top);
	free(all);
	free(goal);
	free(d);
}

/* "How many GPUs?": nodes "auto" finds the fewest GPUs that meet the
 * deadline (screen doubling and bisection, then the engine's bisection,
 * cmd_plan.c) equal to exhaustive simulation of every node count 1..32
 * with the same plans, for several deadlines, simulating fewer node
 * counts; without a deadline "auto" is refused with its JSON path. */
static long fewest_gpus(const char *dir, const char *nodes, double days, int *simulated)
{
	char text[2048], args[2400], *out = NULL, *err = NULL;
	snprintf(text, sizeof(text),
		 "{\"schema\": \"ddlsim.goal\", \"schema_version\": \"1.0\", \"name\": \"fewest\",\n"
		 " \"model\": \"%s\", \"seq_len\": 4096, \"train_tokens\": 1e12, \"deadline_days\": %g,\n"
		 " \"global_batch_tokens\": {\"min\": 2097152, \"max\": 8388608},\n"
		 " \"search\": {\"tp\": [1, 2], \"pp\": [1], \"interleave\": [1], \"micro_batch\": [1],\n"
		 "   \"zero\": [1], \"recompute\": [\"selective\"], \"sp\": [false], \"order\": [\"tp,dp,pp\"]},\n"
		 " \"clusters\": [{\"name\": \"A100\", \"topology\": \"%s\", \"nodes\": %s,\n"
		 "   \"economics\": {\"usd_per_gpu_hour\": 1.8}}]}\n",
		 src_path("models/zoo/llama2-7b.json"), days, src_path("topologies/dgx-a100.json"), nodes);
	char *goal = write_file(dir, "g.json", text);
	snprintf(args, sizeof(args), "plan %s --top 3 -j 2 --out %s/o", goal, dir);
	cr_assert_eq(run_ddlsim(args, &out, &err), 0, "%s", err);
	const char *f = strstr(out, "== fewest GPUs");
	f = f ? strstr(f, "A100-SXM4-80GB") : NULL;
	long gpus = 0;
	cr_assert(f && sscanf(f, "A100-SXM4-80GB %ld GPUs", &gpus) == 1, "%s", out);
	const char *s = strstr(out, " plans simulated in ");
	cr_assert(s);
	while (s > out && s[-1] != '\n')
		s--;
	cr_assert_eq(sscanf(s, "%d", simulated), 1, "%s", s);
	free(out);
	free(err);
	free(goal);
	return gpus;
}

Test(search, auto_nodes_finds_the_fewest_gpus_of_exhaustive_simulation, .timeout = 300)
{
	char *d = tmp_dir();
	static const double days[] = { 20, 45, 60, 120, 400 };
	for (size_t i = 0; i < sizeof(days) / sizeof(days[0]); i++) {
		int sa = 0, se = 0;
		long a = fewest_gpus(d, "\"auto\"", days[i], &sa);
		long e = fewest_gpus(d, "\"1..32\"", days[i], &se);
		cr_expect_eq(a, e, "deadline %g d: auto %ld GPUs, exhaustive %ld", days[i], a, e);
		cr_expect_lt(sa, se, "deadline %g d: auto simulated %d plans, exhaustive %d", days[i], sa, se);
	}
	char *goal = write_file(d, "nodl.json",
		"{\"schema\": \"ddlsim.goal\", \"schema_version\": \"1.0\", \"model\": \"m.json\","
		" \"seq_len\": 4096, \"train_tokens\": 1e12, \"global_batch_tokens\": {\"min\": 1, \"max\": 2},"
		" \"clusters\": [{\"topology\": \"t.json\", \"nodes\": \"auto\"}]}\n");
	char args[1400], *err = NULL;
	snprintf(args, sizeof(args), "validate %s", goal);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3, "%s", err);
	cr_expect(err && strstr(err, "/clusters/0/nodes: error: \"auto\" searches the fewest nodes that "
				      "meet deadline_days, and the goal gives no deadline_days"), "%s", err);
	free(err);
	free(goal);
	free(d);
}

/* The shipped "how many" goal: the screen's boundary is optimistic for
 * H100 here, so the engine takes its turns (bisection by simulation,
 * cmd_plan.c try_count: a batch of its own with its own progress), and
 * every GPU type gets its fewest GPUs. */
Test(search, auto_nodes_engine_turns_on_the_shipped_goal, .timeout = 300)
{
	char *d = tmp_dir(), args[2400], *out = NULL, *err = NULL;
	snprintf(args, sizeof(args), "plan %s -j 2 --quiet --out %s/o",
		 src_path("scenarios/goals/llama3-70b-15t-90d-how-many.json"), d);
	cr_assert_eq(run_ddlsim(args, &out, &err), 0, "%s", err);
	cr_expect(strstr(out, "H100 cloud: nodes auto: the engine's turn, "), "%s", out);
	const char *f = strstr(out, "== fewest GPUs that meet the goal");
	cr_assert(f, "%s", out);
	cr_expect(strstr(f, "H100-SXM5-80GB") && strstr(f, "H200-SXM5-141GB") && strstr(f, "B200 (GB200)"),
		  "%s", f);
	cr_expect_null(strstr(f, "none of the simulated plans meets it"), "%s", f);
	/* the safe count opens the answer, per GPU type, each at least the
	 * fewest GPUs of its type and meeting the deadline at its slow edge */
	const char *safe = strstr(out, "== safe count per GPU type");
	const char *best = strstr(out, "== best plan that fits");
	cr_assert(safe && best && safe < best, "%s", out);
	const char *types[] = { "H100-SXM5-80GB", "H200-SXM5-141GB", "B200 (GB200)" };
	for (int t = 0; t < 3; t++) {
		char fmt[80];
		long s_gpus = 0, f_gpus = 0;
		double days = 0, slow_days = 0;
		const char *a = strstr(safe, types[t]), *b = strstr(f, types[t]);
		cr_assert(a && a < best && b, "%s", out);
		snprintf(fmt, sizeof(fmt), "%s %%ld GPUs", types[t]);
		cr_assert_eq(sscanf(a, fmt, &s_gpus), 1, "%s", a);
		cr_assert_eq(sscanf(b, fmt, &f_gpus), 1, "%s", b);
		cr_expect_geq(s_gpus, f_gpus, "%s: the safe count is below the fewest GPUs", types[t]);
		const char *dd = strstr(a, " d, ");
		cr_assert(dd);
		while (dd > a && dd[-1] != ' ')
			dd--;
		cr_assert_eq(sscanf(dd, "%lf d, %lf d at the slow edge", &days, &slow_days), 2, "%s", dd);
		cr_expect(days <= slow_days && slow_days <= 90, "%s: %.1f d, %.1f at the slow edge", types[t],
			  days, slow_days);
	}
	free(out);
	free(err);
	free(d);
}
