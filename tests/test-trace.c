/* test-trace: `ddlsim run --trace` (sim/trace.h): the file parses as JSON,
 * slices on a track never overlap (balanced begin/end), every send has its
 * receive, a slice per simulated task, memory in use peaks at the anatomy's
 * total, --trace-ranks records only the ranks asked for. The structure is
 * checked by tests/check-trace.py (python3's json). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* Run check-trace.py on path; its summary line into out. */
static int check(const char *path, const char *flags, char *out, size_t n)
{
	char cmd[4096];
	snprintf(cmd, sizeof(cmd), "python3 %s %s %s", src_path("tests/check-trace.py"), path, flags);
	FILE *p = popen(cmd, "r");
	cr_assert(p);
	out[0] = 0;
	if (!fgets(out, (int)n, p))
		out[0] = 0;
	int st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 255;
}

Test(trace, megatron_76b_has_a_slice_per_task_balanced_tracks_flows_and_memory, .timeout = 120)
{
	char *d = tmp_dir(), args[2048], *err = NULL, tr[1200], line[512];
	snprintf(tr, sizeof(tr), "%s/t.json", d);
	snprintf(args, sizeof(args), "run %s --out %s --format json --quiet --trace %s",
		 src_path("scenarios/megatron/76b.json"), d, tr);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	cr_assert_eq(check(tr, "", line, sizeof(line)), 0, "%s", line);
	json_t *rep = load_report(d);
	cr_assert(rep);
	int ranks, slices, flows, counters, links;
	double peak;
	cr_assert_eq(sscanf(line, "ranks=%d slices=%d flows=%d counters=%d mem_peak_GB=%lf links=%d", &ranks,
			    &slices, &flows, &counters, &peak, &links), 6, "%s", line);
	/* folded: one rank per stage stands for its replicas */
	cr_expect_eq(ranks, (int)jnum(rep, "simulation/simulated_ranks"));
	cr_expect_eq(ranks, 4);
	cr_expect_eq(slices, (int)jnum(rep, "simulation/tasks"), "%s", line);
	cr_expect_gt(flows, 0);
	cr_expect_eq(counters, 4);
	cr_expect_float_eq(peak, jnum(rep, "memory/worst_total_GB"), 1e-4, "%s", line);
	/* the busiest links, sampled every 10 ms by default */
	cr_expect_eq(links, 8, "%s", line);
	/* the processes say which ranks they stand for */
	char cmd[1400];
	snprintf(cmd, sizeof(cmd), "grep -q '\"labels\":\"stands for 256 ranks: 0, 1, 2' %s", tr);
	cr_expect_eq(system(cmd), 0);
	json_decref(rep);
	free(err);
	free(d);
}

Test(trace, tracing_does_not_change_the_simulation, .timeout = 120)
{
	char *d = tmp_dir(), args[4096], *err = NULL, d2[1200], tr[1200];
	snprintf(d2, sizeof(d2), "%s/traced", d);
	snprintf(tr, sizeof(tr), "%s/t.json", d);
	snprintf(args, sizeof(args), "run %s --out %s --format json --quiet", src_path("scenarios/megatron/76b.json"), d);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	free(err);
	/* a fine link sampling period: many more events in the simulation */
	snprintf(args, sizeof(args), "run %s --out %s --format json --quiet --trace %s --trace-link-period 0.001",
		 src_path("scenarios/megatron/76b.json"), d2, tr);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	json_t *a = load_report(d), *b = load_report(d2);
	cr_assert(a && b);
	/* the sampler's events split SimGrid's time steps differently: equal
	 * to the last bits of a double (1e-12), not bit for bit */
	static const char *const fig[] = { "summary/iteration_time_s", "breakdown/mean/exposed_comm_s",
					   "breakdown/mean/bubble_s", NULL };
	for (int i = 0; fig[i]; i++)
		cr_expect_float_eq(jnum(a, fig[i]), jnum(b, fig[i]), 1e-12 * fabs(jnum(a, fig[i])) + 1e-15,
				   "%s: %.17g vs %.17g", fig[i], jnum(a, fig[i]), jnum(b, fig[i]));
	json_decref(a);
	json_decref(b);
	free(err);
	free(d);
}

Test(trace, trace_ranks_records_only_the_ranks_asked_for, .timeout = 120)
{
	char *d = tmp_dir(), args[2048], *err = NULL, tr[1200], line[512];
	snprintf(tr, sizeof(tr), "%s/t.json", d);
	snprintf(args, sizeof(args), "run %s --out %s --format json --quiet --trace %s --trace-ranks 0,512-600",
		 src_path("scenarios/megatron/76b.json"), d, tr);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	cr_assert_eq(check(tr, "--partial", line, sizeof(line)), 0, "%s", line);
	cr_expect_eq(strncmp(line, "ranks=2 ", 8), 0, "%s", line);
	char cmd[1400];
	snprintf(cmd, sizeof(cmd), "grep -q '\"pid\":256,' %s", tr);
	cr_expect_neq(system(cmd), 0, "rank 256 recorded");
	free(err);
	free(d);
}

Test(trace, usage_errors)
{
	char *err = NULL, args[2048];
	snprintf(args, sizeof(args), "run %s --trace /tmp/x.json --trace-ranks 5-2",
		 src_path("scenarios/megatron/76b.json"));
	cr_expect_eq(run_ddlsim(args, NULL, &err), 2);
	cr_expect(strstr(err, "--trace-ranks: expected ranks like '0-7,64', got '5-2'"), "%s", err);
	free(err);
	snprintf(args, sizeof(args), "run %s %s --trace /tmp/x.json", src_path("scenarios/megatron/76b.json"),
		 src_path("scenarios/megatron/39b.json"));
	cr_expect_eq(run_ddlsim(args, NULL, &err), 2);
	cr_expect(strstr(err, "--trace records one scenario"), "%s", err);
	free(err);
	cr_expect_eq(run_ddlsim("run x.json --trace-ranks 0", NULL, &err), 2);
	cr_expect(strstr(err, "--trace-ranks needs --trace FILE"), "%s", err);
	free(err);
}
