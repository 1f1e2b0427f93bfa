/* test-trace: `ddlsim run --trace` (sim/trace.h): the file parses as JSON,
 * times are whole nanoseconds and slices on a track never overlap, not
 * by one (balanced begin/end), every send has its receive, a slice per
 * simulated task, memory in use peaks at the anatomy's total; by default
 * one process per class of alike ranks, labelled with the ranks it
 * stands for, --trace-ranks all every simulated rank, a list only the
 * ranks asked for; a .gz name gives the same trace gzip-compressed; a
 * trace that cannot be written names its path and leaves nothing, and
 * the streaming writer (util/outfile.h) keeps and reports a write that
 * failed half-way. The structure is checked by tests/check-trace.py
 * (python3's json). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"
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
	/* rank 0 and 512 (stage 2): no arrow between them, none half drawn */
	cr_assert_eq(check(tr, "", line, sizeof(line)), 0, "%s", line);
	cr_expect_eq(strncmp(line, "ranks=2 ", 8), 0, "%s", line);
	cr_expect(strstr(line, " flows=0 "), "%s", line);
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
	cr_expect(strstr(err, "--trace-ranks: expected 'all' or ranks like '0-7,64', got '5-2'"), "%s", err);
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

/* Entries of dir other than "." and "..". */
static int entries(const char *dir)
{
	DIR *dh = opendir(dir);
	cr_assert(dh, "%s", dir);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(dh)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(dh);
	return n;
}

Test(trace, default_is_a_rank_per_class_labelled_with_the_ranks_it_stands_for, .timeout = 120)
{
	char *d = tmp_dir(), args[2048], *err = NULL, tr[1200], all[1200], line[512], cmd[1500];
	/* one pipeline, not folded: rank 16 of stage 2 computes 1.2x slower */
	const char *sc = src_path("scenarios/whatif/llama2-13b-h100-pp4-straggler.json");
	snprintf(tr, sizeof(tr), "%s/t.json", d);
	snprintf(args, sizeof(args), "run %s --out %s --format json --quiet --trace %s", sc, d, tr);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	cr_assert_eq(check(tr, "", line, sizeof(line)), 0, "%s", line);
	json_t *rep = load_report(d);
	cr_assert(rep);
	cr_expect_eq((int)jnum(rep, "simulation/simulated_ranks"), 32);
	/* stages 0, 1, 3 alike inside; stage 2: the straggler, then its 7 peers */
	cr_expect_eq(strncmp(line, "ranks=5 ", 8), 0, "%s", line);
	static const char *const want[] = {
		"\"pid\":0,\"args\":{\"labels\":\"stands for 8 ranks: 0, 1, 2, 3, 4, 5, 6, 7\"}",
		"\"pid\":8,\"args\":{\"labels\":\"stands for 8 ranks: 8, 9, 10,",
		"\"pid\":16,\"args\":{\"labels\":\"stands for 1 rank: 16\"}",
		"\"pid\":17,\"args\":{\"labels\":\"stands for 7 ranks: 17, 18, 19, 20, 21, 22, 23\"}",
		"\"pid\":24,\"args\":{\"labels\":\"stands for 8 ranks: 24,",
	};
	char *text = NULL;
	size_t cap = 0;
	FILE *f = fopen(tr, "r");
	cr_assert(f);
	cr_assert_gt(getdelim(&text, &cap, '\0', f), 0);
	fclose(f);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		cr_expect(strstr(text, want[i]), "no '%s'", want[i]);
	free(text);
	free(err);
	/* --trace-ranks all: every simulated rank, a slice per task */
	snprintf(all, sizeof(all), "%s/all.json", d);
	snprintf(args, sizeof(args), "run %s --out %s/a --format json --quiet --trace %s --trace-ranks all", sc, d, all);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	cr_assert_eq(check(all, "", line, sizeof(line)), 0, "%s", line);
	int ranks, slices;
	cr_assert_eq(sscanf(line, "ranks=%d slices=%d", &ranks, &slices), 2, "%s", line);
	cr_expect_eq(ranks, 32);
	cr_expect_eq(slices, (int)jnum(rep, "simulation/tasks"));
	snprintf(cmd, sizeof(cmd), "grep -q '\"labels\":\"stands for 1 rank: 17\"' %s", all);
	cr_expect_eq(system(cmd), 0);
	json_decref(rep);
	free(err);
	free(d);
}

Test(trace, gz_name_writes_the_same_trace_gzip_compressed, .timeout = 120)
{
	char *d = tmp_dir(), args[2048], *err = NULL, tr[1200], gz[1200], line[512], cmd[4000];
	snprintf(tr, sizeof(tr), "%s/t.json", d);
	snprintf(gz, sizeof(gz), "%s/t.json.gz", d);
	snprintf(args, sizeof(args), "run %s --out %s/p --format json --quiet --trace %s",
		 src_path("scenarios/megatron/76b.json"), d, tr);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	free(err);
	snprintf(args, sizeof(args), "run %s --out %s/g --format json --quiet --trace %s",
		 src_path("scenarios/megatron/76b.json"), d, gz);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	cr_assert_eq(check(gz, "", line, sizeof(line)), 0, "%s", line);
	cr_expect_eq(strncmp(line, "ranks=4 ", 8), 0, "%s", line);
	/* gzip's own check (CRC, length), and byte for byte the plain trace */
	snprintf(cmd, sizeof(cmd), "gzip -t %s && gzip -dc %s | cmp -s - %s", gz, gz, tr);
	cr_expect_eq(system(cmd), 0, "%s does not decompress to %s", gz, tr);
	FILE *a = fopen(tr, "r"), *b = fopen(gz, "r");
	cr_assert(a && b);
	fseek(a, 0, SEEK_END);
	fseek(b, 0, SEEK_END);
	cr_expect_lt(ftell(b) * 5, ftell(a), "gzip: %ld of %ld bytes", ftell(b), ftell(a));
	fclose(a);
	fclose(b);
	free(err);
	free(d);
}

/* Run with --trace path: exit 1, "path: error: cannot write the trace: why",
 * no report, nothing left in dir. */
static void expect_unwritable(const char *dir, const char *path, const char *why)
{
	char args[2048], *err = NULL, want[1400], out[1300];
	snprintf(out, sizeof(out), "%s/out", dir);
	snprintf(args, sizeof(args), "run %s --out %s --format json --quiet --trace %s",
		 src_path("scenarios/quickstart.json"), out, path);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 1, "%s", err);
	snprintf(want, sizeof(want), "%s: error: cannot write the trace: %s", path, why);
	cr_expect(strstr(err, want), "want '%s', got: %s", want, err);
	cr_expect(!file_exists(out), "a report was written");
	free(err);
}

Test(trace, an_unwritable_trace_names_its_path_and_leaves_nothing, .timeout = 120)
{
	char *d = tmp_dir(), p[1200];
	/* a name under a regular file (refused even to root) */
	char *file = write_file(d, "file", "x");
	snprintf(p, sizeof(p), "%s/t.json.gz", file);
	expect_unwritable(d, p, "Not a directory");
	snprintf(p, sizeof(p), "%s/no/such/dir/t.json", d);
	expect_unwritable(d, p, "No such file or directory");
	cr_expect_eq(entries(d), 1, "something left in %s", d);
	/* a read-only directory (root writes anyway: only checked for others) */
	if (geteuid() != 0) {
		char ro[1100];
		snprintf(ro, sizeof(ro), "%s/ro", d);
		cr_assert_eq(mkdir(ro, 0555), 0);
		snprintf(p, sizeof(p), "%s/t.json", ro);
		expect_unwritable(d, p, "Permission denied");
		cr_expect_eq(entries(ro), 0);
	}
	free(file);
	free(d);
}

/* Point every descriptor of this process open on path at /dev/full:
 * each later write fails with ENOSPC, as on a full disk. */
static void fill_disk_under(const char *path)
{
	int full = open("/dev/full", O_WRONLY), n = 0;
	cr_assert_geq(full, 0);
	DIR *dh = opendir("/proc/self/fd");
	cr_assert(dh);
	struct dirent *e;
	while ((e = readdir(dh))) {
		char link[300], target[PATH_MAX];
		snprintf(link, sizeof(link), "/proc/self/fd/%s", e->d_name);
		ssize_t k = readlink(link, target, sizeof(target) - 1);
		if (k <= 0)
			continue;
		target[k] = 0;
		if (!strcmp(target, path))
			n += dup2(full, atoi(e->d_name)) >= 0;
	}
	closedir(dh);
	close(full);
	cr_assert_gt(n, 0, "no descriptor on %s", path);
}

Test(outfile, a_write_that_fails_half_way_is_kept_reported_and_leaves_nothing)
{
	static const char *const names[] = { "t.json", "t.json.gz" };
	char *chunk = malloc(1 << 16);
	cr_assert(chunk);
	for (int i = 0; i < (1 << 16); i++)
		chunk[i] = "0123456789abcdef"[(i * 7919) % 16];
	for (int g = 0; g < 2; g++) {
		char *d = tmp_dir(), path[1200];
		snprintf(path, sizeof(path), "%s/%s", d, names[g]);
		struct outfile o;
		struct atomic_file staged;
		cr_assert_eq(outfile_open(&o, path), 0);
		cr_expect_eq(o.gz != NULL, g == 1);
		outfile_puts(&o, "{\"traceEvents\":[");
		fill_disk_under(o.af.tmp);
		for (int k = 0; k < 64; k++)     /* 4 MB: past every buffer */
			outfile_write(&o, chunk, 1 << 16);
		outfile_printf(&o, "%d]}", 42);
		cr_expect_eq(outfile_stage(&o, &staged), -ENOSPC, "%s", names[g]);
		cr_expect_null(staged.tmp);
		cr_expect_eq(entries(d), 0, "%s: something left in %s", names[g], d);
		free(d);
	}
	free(chunk);
}

Test(outfile, plain_and_gzip_round_trip)
{
	char *d = tmp_dir(), path[1200], cmd[2600];
	for (int g = 0; g < 2; g++) {
		snprintf(path, sizeof(path), "%s/x.txt%s", d, g ? ".gz" : "");
		struct outfile o;
		struct atomic_file staged;
		cr_assert_eq(outfile_open(&o, path), 0);
		for (int i = 0; i < 100000; i++)
			outfile_printf(&o, "line %d %s\n", i, i % 3 ? "a" : "bb");
		/* a formatted text longer than the small buffer */
		outfile_printf(&o, "%0600d\n", 7);
		cr_expect_eq(outfile_stage(&o, &staged), 0);
		cr_expect(!file_exists(path), "written before it was published");
		cr_assert_eq(atomic_file_publish(&staged, 1), 0);
		snprintf(cmd, sizeof(cmd), "%s %s | awk 'NR == 100000 && $0 == \"line 99999 bb\" { ok = 1 } "
			 "END { exit !(ok && NR == 100001 && length($0) == 600) }'", g ? "gzip -dc" : "cat", path);
		cr_expect_eq(system(cmd), 0, "%s", path);
	}
	free(d);
}
