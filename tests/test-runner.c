/* test-runner: the runner (forked children, fixed-size rows, limits),
 * plan_check() without side effects, result rows, atomic files, and
 * `ddlsim run` over several scenarios. */
#include <criterion/criterion.h>
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "atomic_file.h"
#include "inputs.h"
#include "plan.h"
#include "result.h"
#include "runner.h"
#include "scenario.h"
#include "simulate.h"
#include "testutil.h"
#include "xalloc.h"

/* ---- runner ---------------------------------------------------------- */

enum job_kind { JOB_OK, JOB_SEGV, JOB_SLEEP, JOB_HOG, JOB_EXIT, JOB_FAIL };

struct jobs {
	const enum job_kind *kind;
	struct result_row rows[16];
	int order[16], ndone;
};

static void job(void *ctx, int i, struct result_row *row)
{
	struct jobs *j = ctx;
	switch (j->kind[i]) {
	case JOB_OK:
		row->status = RESULT_OK;
		row->iteration_s = 1.5 * i;
		row->reason[0] = 0;
		break;
	case JOB_SEGV:
		signal(SIGSEGV, SIG_DFL);  /* not the test framework's handler */
		raise(SIGSEGV);
		break;
	case JOB_SLEEP:
		sleep(30);
		break;
	case JOB_HOG: {
		/* meson test sets MALLOC_PERTURB_, with which glibc fills every
		 * block it hands out: 1 GB of pages touched, which under load
		 * outlasted the 8 s limit on CI (2026-12-06); no filling here */
		mallopt(M_PERTURB, 0);
		/* reserve more than the address-space limit allows: 4 GiB in
		 * blocks of 64 MiB against a limit of 1 GB. The limit is on
		 * address space, so malloc fails at the 16th block or so
		 * without a page being faulted in: microseconds however loaded
		 * the machine (touching every page took 1.3 s under load and
		 * raced the 8 s time limit); one byte a block keeps the
		 * allocations live */
		for (int k = 0; k < 64; k++)
			*(volatile char *)xmalloc(64 << 20) = 1;
		break;
	}
	case JOB_EXIT:
		_exit(7);  /* ends without writing its row */
	case JOB_FAIL:
		result_row_fail(row, RESULT_FAILED, "scenario.json: /x: error: broken");
		break;
	}
}

static void done(void *ctx, int i, const struct result_row *row)
{
	struct jobs *j = ctx;
	j->rows[i] = *row;
	j->order[j->ndone++] = i;
}

Test(runner, every_job_gets_its_row_in_order_of_index)
{
	SKIP_UNLESS_FORK_IS_SAFE();
	static const enum job_kind kinds[] = { JOB_OK, JOB_OK, JOB_OK, JOB_OK, JOB_OK };
	struct jobs j = { .kind = kinds };
	struct runner_opts o = { .jobs = 2 };
	struct diag d;
	diag_init(&d, stderr);
	cr_assert_eq(runner_run(&o, 5, job, done, &j, &d), 0);
	cr_assert_eq(j.ndone, 5);
	for (int i = 0; i < 5; i++) {
		cr_expect_eq(j.rows[i].status, RESULT_OK, "job %d: %s", i, j.rows[i].reason);
		cr_expect_eq(j.rows[i].index, i);
		cr_expect_float_eq(j.rows[i].iteration_s, 1.5 * i, 1e-12);
	}
	diag_finish(&d);
}

/* AddressSanitizer reserves terabytes of address space: an address-space
 * limit cannot be tested under it (the sanitizer suite of .ci/run) */
#if defined(__SANITIZE_ADDRESS__)
#define HOG_UNDER_TEST 0
#else
#define HOG_UNDER_TEST 1
#endif

Test(runner, crashes_exits_limits_and_failures_become_error_rows, .timeout = 60)
{
	SKIP_UNLESS_FORK_IS_SAFE();
	static const enum job_kind kinds[] = { JOB_SEGV, JOB_SLEEP, HOG_UNDER_TEST ? JOB_HOG : JOB_FAIL,
					       JOB_EXIT, JOB_FAIL, JOB_OK };
	struct jobs j = { .kind = kinds };
	struct runner_opts o = { .jobs = 3, .timeout_s = 8, .mem_limit_bytes = HOG_UNDER_TEST ? 1e9 : 0 };
	struct diag d;
	diag_init(&d, stderr);
	cr_assert_eq(runner_run(&o, 6, job, done, &j, &d), 0);
	cr_assert_eq(j.ndone, 6);
	cr_expect_eq(j.rows[0].status, RESULT_CRASHED);
	cr_expect(strstr(j.rows[0].reason, "signal 11"), "%s", j.rows[0].reason);
	cr_expect_eq(j.rows[1].status, RESULT_TIMEOUT);
	cr_expect(strstr(j.rows[1].reason, "time limit of 8 s"), "%s", j.rows[1].reason);
	cr_expect_eq(j.rows[2].status, RESULT_FAILED);
	if (HOG_UNDER_TEST)
		cr_expect(strstr(j.rows[2].reason, "out of memory under the limit of 1 GB"), "%s", j.rows[2].reason);
	cr_expect_eq(j.rows[3].status, RESULT_FAILED);
	cr_expect(strstr(j.rows[3].reason, "exit status 7"), "%s", j.rows[3].reason);
	cr_expect_eq(j.rows[4].status, RESULT_FAILED);
	cr_expect_str_eq(j.rows[4].reason, "scenario.json: /x: error: broken");
	cr_expect_eq(j.rows[5].status, RESULT_OK);
	diag_finish(&d);
}

Test(runner, long_reasons_are_cut_on_a_character_boundary)
{
	struct result_row row;
	char *s = xmalloc(2000);
	size_t n = 0;
	while (n + 3 < 1999) {  /* "é" is two bytes: a cut can fall inside one */
		memcpy(s + n, n % 3 == 0 ? "x" : "\xc3\xa9", n % 3 == 0 ? 1 : 2);
		n += n % 3 == 0 ? 1 : 2;
	}
	s[n] = 0;
	memset(&row, 0, sizeof(row));
	result_row_fail(&row, RESULT_FAILED, s);
	size_t len = strlen(row.reason);
	cr_assert_lt(len, sizeof(row.reason));
	cr_expect_str_eq(row.reason + len - 3, "...");
	/* no continuation byte left without its lead byte */
	unsigned char last = (unsigned char)row.reason[len - 4];
	cr_expect(last < 0x80 || (last & 0xC0) == 0x80, "cut inside a character: 0x%02x", last);
	if ((last & 0xC0) == 0x80)
		cr_expect_eq((unsigned char)row.reason[len - 5], 0xc3);
	free(s);
}

/* ---- plan_check ------------------------------------------------------- */

static struct inputs *llama7b_a100(void)
{
	struct inputs *in = load_inputs(src_path("models/zoo/llama2-7b.json"), "topologies/dgx-a100.json");
	return in;
}

Test(plan, check_has_no_side_effects_and_counts_every_problem)
{
	struct inputs *in = llama7b_a100();
	struct plan p, copy;
	struct diag d;

	plan_init(&p);
	p.nodes = 2;
	p.training.seq = 4096;
	p.training.global_batch = 1024;
	plan_resolve(&p, in);
	cr_assert_eq(p.parallel.dp, 16);
	copy = p;
	diag_init(&d, NULL);
	cr_expect_eq(plan_check(&p, in, "plan", &d), 0, "%s", diag_text(&d));
	cr_expect_eq(memcmp(&p, &copy, sizeof(p)), 0, "plan_check changed the plan");
	diag_finish(&d);

	/* tp 3 does not divide 16 GPUs: one problem, reported with its path */
	p.parallel.tp = 3;
	copy = p;
	diag_init(&d, NULL);
	cr_expect_eq(plan_check(&p, in, "plan", &d), 1);
	cr_expect_str_eq(diag_text(&d), "plan: /parallel: error: tp x pp = 3 x 1 = 3 must divide the 16 GPUs "
			 "(2 nodes x 8 GPUs)\n");
	cr_expect_eq(memcmp(&p, &copy, sizeof(p)), 0);
	diag_finish(&d);

	/* several problems at once: sp without tp, micro-batch not dividing */
	plan_init(&p);
	p.nodes = 2;
	p.parallel.dp = 16;
	p.training.seq = 4096;
	p.training.global_batch = 1000;
	p.parallel.sp = true;
	diag_init(&d, NULL);
	cr_expect_eq(plan_check(&p, in, "plan", &d), 2, "%s", diag_text(&d));
	cr_expect(strstr(diag_text(&d), "sequence parallelism needs tp > 1"));
	cr_expect(strstr(diag_text(&d), "must be divisible by dp x micro_batch = 16 x 1 = 16, got 1000"));
	diag_finish(&d);
	inputs_destroy(in);
}

/* Read exactly n bytes from fd into buf; false on a short read. */
static bool read_all(int fd, void *buf, size_t n)
{
	char *p = buf;
	while (n > 0) {
		ssize_t k = read(fd, p, n);
		if (k <= 0)
			return false;
		p += k;
		n -= (size_t)k;
	}
	return true;
}

/* The runner sends rows (with their plan) through pipes: a plan must be
 * the same value in another process, hence no pointers. A forked child
 * loads a scenario (every byte of its plan zeroed first by plan_init),
 * simulates it, writes the plan's bytes and its iteration time to a pipe
 * and exits; the parent reads them into zeroed memory, then loads the same
 * scenario itself, its heap in another state (a pointer in the plan would
 * differ), compares every byte, and simulates from the copy: the same
 * iteration time to the bit. */
Test(plan, is_a_pointer_free_value_that_survives_a_pipe, .timeout = 120)
{
	SKIP_UNLESS_FORK_IS_SAFE();
	const char *path = src_path("scenarios/megatron/1.7b.json");
	int fd[2];
	cr_assert_eq(pipe(fd), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(fd[0]);
		struct diag d;
		diag_init(&d, NULL);
		struct scenario *s = scenario_load(path, &d);
		if (!s)
			_exit(2);
		struct result_row row;
		memset(&row, 0, sizeof(row));
		simulate_row(s->in, &s->plan, &row);
		if (write(fd[1], &s->plan, sizeof(s->plan)) != (ssize_t)sizeof(s->plan) ||
		    write(fd[1], &row.iteration_s, sizeof(row.iteration_s)) != (ssize_t)sizeof(double))
			_exit(3);
		scenario_destroy(s);
		_exit(row.status == RESULT_OK ? 0 : 4);
	}
	close(fd[1]);
	struct plan *copy = xcalloc(1, sizeof(*copy));
	double child_s = 0;
	cr_assert(read_all(fd[0], copy, sizeof(*copy)), "short read of the plan");
	cr_assert(read_all(fd[0], &child_s, sizeof(child_s)), "short read of the iteration time");
	close(fd[0]);
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);

	char *pad = xmalloc(12345);     /* move the parent's heap off the child's */
	struct diag d;
	diag_init(&d, stderr);
	struct scenario *s = scenario_load(path, &d);
	cr_assert(s, "%s", diag_text(&d));
	cr_expect_eq(memcmp(copy, &s->plan, sizeof(*copy)), 0, "the plan changed through the pipe");
	cr_expect_str_eq(copy->parallel.order, "tp,cp,dp,pp");
	diag_finish(&d);
	diag_init(&d, NULL);
	cr_expect_eq(plan_check(copy, s->in, "copy", &d), 0, "%s", diag_text(&d));
	diag_finish(&d);
	struct result_row row;
	memset(&row, 0, sizeof(row));
	simulate_row(s->in, copy, &row);
	cr_assert_eq(row.status, RESULT_OK, "%s", row.reason);
	cr_expect(row.iteration_s > 0);
	cr_expect_eq(row.iteration_s, child_s, "from the copy %.17g s, in the child %.17g s",
		     row.iteration_s, child_s);
	scenario_destroy(s);
	free(pad);
	free(copy);
}

/* ---- atomic files ----------------------------------------------------- */

Test(atomic_file, writes_whole_or_nothing)
{
	char *d = tmp_dir(), path[1100], missing[1100];
	snprintf(path, sizeof(path), "%s/f.txt", d);
	cr_assert_eq(atomic_file_write(path, "hello\n", 6), 0);
	FILE *f = fopen(path, "r");
	char buf[16] = { 0 };
	cr_assert(f);
	cr_expect_eq(fread(buf, 1, sizeof(buf), f), 6);
	fclose(f);
	cr_expect_str_eq(buf, "hello\n");

	struct atomic_file af;
	cr_assert_eq(atomic_file_open(&af, path), 0);
	fputs("half", af.f);
	atomic_file_abort(&af);
	f = fopen(path, "r");
	memset(buf, 0, sizeof(buf));
	cr_expect_eq(fread(buf, 1, sizeof(buf), f), 6, "an aborted write replaced the file");
	fclose(f);

	snprintf(missing, sizeof(missing), "%s/no/such/dir/f.txt", d);
	cr_expect_eq(atomic_file_write(missing, "x", 1), -ENOENT);
	char cmd[1200];
	snprintf(cmd, sizeof(cmd), "test $(ls -A %s | wc -l) -eq 1", d);
	cr_expect_eq(system(cmd), 0, "a temporary file was left behind");
	free(d);
}

/* ---- ddlsim run with several scenarios -------------------------------- */

static int count_lines(const char *s)
{
	int n = 0;
	for (; *s; s++)
		n += *s == '\n';
	return n;
}

Test(run_many, csv_on_stdout_has_one_row_per_scenario_in_order, .timeout = 120)
{
	char args[4096], *out = NULL, *err = NULL;
	snprintf(args, sizeof(args), "run %s %s %s -j 2 --out - --quiet",
		 src_path("scenarios/resnet50-v100-1gpu.json"), src_path("scenarios/megatron/1.7b.json"),
		 src_path("scenarios/resnet50-v100-2nodes.json"));
	cr_assert_eq(run_ddlsim(args, &out, &err), 0, "%s", err);
	cr_expect_eq(count_lines(out), 4, "%s", out);
	const char *r1 = strchr(out, '\n') + 1;
	/* text unquoted where RFC 4180 allows, numbers in plain decimal */
	cr_expect_eq(strncmp(r1, "resnet50-v100-1gpu,ResNet-50,", 29), 0, "%s", out);
	const char *r2 = strchr(r1, '\n') + 1;
	cr_expect_eq(strncmp(r2, "megatron-1.7b,", 14), 0, "%s", out);
	cr_expect_eq(strncmp(out, "scenario,model,topology,gpu,nodes,gpus,dp,tp,pp,", 48), 0, "%s", out);
	/* appended columns after the status and error: the GB missing, the
	 * error band of the nearest validation family (sim/band.h) */
	cr_expect(strstr(out, ",status,error,mem_short_GB,band_family,band_runs,band_mean_abs_error_pct,"
			      "band_max_abs_error_pct,band_bias_pct,band_gpus_more,band_low_pct,band_high_pct,"
			      "band_extrapolated\n"), "%s", out);
	/* a V100 (no family ran one) is extrapolated, and the CSV says why */
	cr_expect(strstr(r1, ",ok,,0,mlperf-h100pcie,"), "%s", r1);
	cr_expect(strstr(r1, ",no validated run on Volta\n"), "%s", r1);
	cr_expect(strstr(r2, ",ok,,0,korthikanti-a100,"), "%s", r2);
	/* the one field with a comma is the only quoted one */
	cr_expect(strstr(r1, ",\"V100 server, 1 GPU per node, EDR InfiniBand\",Tesla V100-SXM2-32GB,1,1,1,1,1,false,"),
		  "%s", r1);
	cr_expect(strstr(r2, ",fp16,2.9776908,"), "%s", r2);
	cr_expect(!strstr(out, "e+") && !strstr(out, "e-0"), "an exponent in %s", out);
	free(out);
	free(err);
}

Test(run_many, writes_reports_per_scenario_and_runs_csv, .timeout = 120)
{
	char *d = tmp_dir(), args[4096], p[1200], *err = NULL;
	snprintf(args, sizeof(args), "run %s %s --out %s --quiet",
		 src_path("scenarios/resnet50-v100-1gpu.json"), src_path("scenarios/resnet50-v100-1gpu.json"), d);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	snprintf(p, sizeof(p), "%s/runs.csv", d);
	cr_expect(file_exists(p));
	snprintf(p, sizeof(p), "%s/resnet50-v100-1gpu/report.json", d);
	cr_expect(file_exists(p));
	/* the same name twice: the second gets its own directory */
	snprintf(p, sizeof(p), "%s/resnet50-v100-1gpu.2/report.json", d);
	cr_expect(file_exists(p));
	free(err);
	free(d);
}

Test(run_many, an_invalid_scenario_stops_everything_before_simulating)
{
	char *d = tmp_dir(), args[4096], *out = NULL, *err = NULL;
	char *bad = write_file(d, "bad.json", "{\"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\"}\n");
	snprintf(args, sizeof(args), "run %s %s --out %s/out",
		 src_path("scenarios/resnet50-v100-1gpu.json"), bad, d);
	cr_expect_eq(run_ddlsim(args, &out, &err), 3);
	cr_expect(strstr(err, "bad.json: /model: error: missing required key 'model'"), "%s", err);
	cr_expect(strstr(err, "1 of 2 scenarios are invalid; nothing was simulated"), "%s", err);
	char p[1200];
	snprintf(p, sizeof(p), "%s/out", d);
	cr_expect(!file_exists(p), "an output directory was created");
	free(out);
	free(err);
	free(bad);
	free(d);
}

Test(run_many, usage_errors_exit_2)
{
	char *err = NULL;
	cr_expect_eq(run_ddlsim("run x.json -j 0", NULL, &err), 2);
	cr_expect(strstr(err, "-j: expected a number in [1, 1024], got '0'"), "%s", err);
	free(err);
	cr_expect_eq(run_ddlsim("run x.json --format ''", NULL, &err), 2);
	cr_expect(strstr(err, "run: option '--format' has an empty value"), "%s", err);
	free(err);
	cr_expect_eq(run_ddlsim("run x.json --format ,", NULL, &err), 2);
	cr_expect(strstr(err, "--format: expected a list of json, csv, svg, html, kineto, got ','"), "%s", err);
	free(err);
	cr_expect_eq(run_ddlsim("run x.json --format json,pdf", NULL, &err), 2);
	cr_expect(strstr(err, "--format: expected json, csv, svg, html or kineto, got 'pdf'"), "%s", err);
	free(err);
	cr_expect_eq(run_ddlsim("run x.json --timeout nan", NULL, &err), 2);
	free(err);
}
