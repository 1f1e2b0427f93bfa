/* test-files: the one rule for input paths (util/infile.h) and the one
 * rule for outputs (util/atomic_file.h), end to end through the binary:
 * FIFOs, devices and directories as inputs (never a hang: every case runs
 * under alarm()), NUL bytes and long lines, non-regular output targets
 * (a FIFO stands for /dev/null, so no root is needed), stale temporaries,
 * a failed re-run that keeps the earlier outputs (a full disk, a rename
 * failing half-way through publishing), and sweep outputs that
 * belong to another sweep or miss a shard. Messages and exit codes exact. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testutil.h"

/* A scenario in dir whose straggler samples come from samples (a path). */
static char *samples_scenario(const char *dir, const char *samples)
{
	char text[2048];
	snprintf(text, sizeof(text),
		 "{\"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\", \"name\": \"x\",\n"
		 " \"model\": \"%s\", \"topology\": \"%s\", \"nodes\": 2,\n"
		 " \"training\": {\"global_batch\": 64, \"micro_batch\": 32, \"precision\": \"fp32\"},\n"
		 " \"simulation\": {\"stragglers\": {\"ranks\": [1], \"distribution\": \"empirical\",\n"
		 "   \"samples_file\": \"%s\"}}}\n",
		 src_path("models/zoo/resnet50.json"), src_path("topologies/v100-1gpu-edr.json"), samples);
	return write_file(dir, "scenario.json", text);
}

static char *fifo_in(const char *dir, const char *name)
{
	char *p = malloc(strlen(dir) + strlen(name) + 2);
	cr_assert_not_null(p);
	sprintf(p, "%s/%s", dir, name);
	cr_assert_eq(mkfifo(p, 0644), 0);
	return p;
}

/* validate scenario.json and expect exit 3 with exactly want after the
 * scenario's path. */
static void expect_samples_error(const char *dir, const char *samples, const char *want_tail)
{
	char *sc = samples_scenario(dir, samples), args[1200], want[2400], *err = NULL;
	snprintf(args, sizeof(args), "validate '%s'", sc);
	alarm(30);  /* a hang fails the test instead of stalling the suite */
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3);
	alarm(0);
	snprintf(want, sizeof(want), "%s: /simulation/stragglers/samples_file: error: %s\n", sc, want_tail);
	cr_expect_str_eq(err, want);
	free(err);
	free(sc);
}

Test(inputs, a_samples_file_that_is_a_fifo_is_refused_not_waited_for, .timeout = 60)
{
	char *d = tmp_dir(), *f = fifo_in(d, "samples.fifo"), want[1200];
	snprintf(want, sizeof(want), "'%s' is a FIFO, expected a regular file", f);
	expect_samples_error(d, f, want);
	free(f), free(d);
}

Test(inputs, a_samples_file_that_is_a_device_or_a_directory_is_refused, .timeout = 60)
{
	char *d = tmp_dir(), want[1200];
	expect_samples_error(d, "/dev/zero", "'/dev/zero' is a device, expected a regular file");
	snprintf(want, sizeof(want), "'%s' is a directory, expected a regular file", d);
	expect_samples_error(d, d, want);
	free(d);
}

Test(inputs, a_nul_byte_in_a_samples_file_is_an_error_with_its_line, .timeout = 60)
{
	char *d = tmp_dir(), p[1100], want[1300];
	snprintf(p, sizeof(p), "%s/s.csv", d);
	FILE *f = fopen(p, "w");
	cr_assert(f);
	fwrite("1.5\n1\0002\n", 1, 8, f);
	fclose(f);
	snprintf(want, sizeof(want), "%s:2: line holds a NUL byte (a binary file?)", p);
	expect_samples_error(d, p, want);
	free(d);
}

Test(inputs, a_long_line_of_samples_is_read_whole_and_an_endless_one_refused, .timeout = 60)
{
	char *d = tmp_dir(), p[1100], want[1300], args[1200], *err = NULL;
	snprintf(p, sizeof(p), "%s/s.csv", d);
	FILE *f = fopen(p, "w");
	cr_assert(f);
	/* 6,000 bytes on one line, a number across byte 4,095: read whole */
	for (int i = 0; i < 4090; i++)
		fputc(' ', f);
	fputs("1.2345", f);
	for (int i = 0; i < 1900; i++)
		fputc(' ', f);
	fputs("1.5 x\n", f);
	fclose(f);
	snprintf(want, sizeof(want), "%s:1: expected a number, got 'x'", p);
	expect_samples_error(d, p, want);
	f = fopen(p, "w");
	fputs("1.5", f);
	for (long i = 0; i < (1L << 20); i++)
		fputc(' ', f);
	fputs("\n", f);
	fclose(f);
	snprintf(want, sizeof(want), "%s:1: line is longer than the 1048576 bytes a line may have", p);
	expect_samples_error(d, p, want);
	/* the same long line, valid */
	f = fopen(p, "w");
	for (int i = 0; i < 4090; i++)
		fputc(' ', f);
	fputs("1.2345 1.5\n", f);
	fclose(f);
	char *sc = samples_scenario(d, p);
	snprintf(args, sizeof(args), "validate '%s'", sc);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	free(err), free(sc), free(d);
}

Test(inputs, a_missing_gpu_preset_names_the_topology_and_its_key)
{
	char *d = tmp_dir(), args[1200], want[2400], *err = NULL;
	char *t = write_file(d, "topo.json",
		"{\"schema\": \"ddlsim.topology\", \"schema_version\": \"1.4\", \"name\": \"t\",\n"
		" \"gpu\": \"nope.json\", \"node\": {\"gpus\": 1}}\n");
	snprintf(args, sizeof(args), "validate '%s'", t);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3);
	snprintf(want, sizeof(want), "%s: /gpu: error: cannot open '%s/nope.json': No such file or directory", t, d);
	cr_expect(strstr(err, want), "want '%s' in:\n%s", want, err);
	free(err), free(t), free(d);
}

Test(inputs, merge_of_a_fifo_or_a_directory_is_refused, .timeout = 60)
{
	char *d = tmp_dir(), *f = fifo_in(d, "in.csv"), args[2400], want[2400], *err = NULL;
	snprintf(args, sizeof(args), "merge '%s/m.csv' '%s'", d, f);
	alarm(30);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3);
	alarm(0);
	snprintf(want, sizeof(want), "%s: error: '%s' is a FIFO, expected a regular file\n", f, f);
	cr_expect(strstr(err, want), "%s", err);
	free(err);
	snprintf(args, sizeof(args), "merge '%s/m.csv' '%s'", d, d);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3);
	snprintf(want, sizeof(want), "%s: error: '%s' is a directory, expected a regular file\n", d, d);
	cr_expect(strstr(err, want), "%s", err);
	free(err), free(f), free(d);
}

/* ---- outputs ---- */

static void expect_refused_target(const char *args_fmt, const char *fifo)
{
	char args[2400], want[1300], *err = NULL;
	snprintf(args, sizeof(args), args_fmt, fifo);
	alarm(60);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3, "%s", args);
	alarm(0);
	snprintf(want, sizeof(want), "ddlsim: error: '%s' is a FIFO, expected a regular file or nothing "
		 "(refusing to replace it)\n", fifo);
	cr_expect(strstr(err, want), "%s: %s", args, err);
	struct stat st;
	cr_expect(stat(fifo, &st) == 0 && S_ISFIFO(st.st_mode), "%s: the FIFO was replaced", args);
	free(err);
}

Test(outputs, a_fifo_is_never_replaced_by_an_output, .timeout = 120)
{
	char *d = tmp_dir(), fmt[2400], in[1100];
	char *f = fifo_in(d, "target.csv");
	snprintf(fmt, sizeof(fmt), "run '%s' --out '%s/o' --quiet --trace '%%s'", src_path("scenarios/quickstart.json"), d);
	expect_refused_target(fmt, f);
	snprintf(fmt, sizeof(fmt), "collective --topology '%s' --csv '%%s'", src_path("topologies/v100-1gpu-edr.json"));
	expect_refused_target(fmt, f);
	snprintf(in, sizeof(in), "%s/in.csv", d);
	free(write_file(d, "in.csv", "point,x\n0,1\n"));
	snprintf(fmt, sizeof(fmt), "merge '%%s' '%s'", in);
	expect_refused_target(fmt, f);
	/* a report file of the run's directory */
	char dir[1100], *rf;
	snprintf(dir, sizeof(dir), "%s/r", d);
	mkdir(dir, 0755);
	rf = fifo_in(dir, "report.csv");
	snprintf(fmt, sizeof(fmt), "run '%s' --out '%s' --quiet%%.0s", src_path("scenarios/quickstart.json"), dir);
	char args[2400], *err = NULL, want[1300];
	snprintf(args, sizeof(args), fmt, "");
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3);
	snprintf(want, sizeof(want), "'%s' is a FIFO", rf);
	cr_expect(strstr(err, want), "%s", err);
	free(err), free(rf), free(f), free(d);
}

static int count_temporaries(const char *dir)
{
	DIR *dh = opendir(dir);
	int n = 0;
	struct dirent *e;
	while (dh && (e = readdir(dh)))
		n += strstr(e->d_name, ".tmp.") != NULL;
	if (dh)
		closedir(dh);
	return n;
}

Test(outputs, stale_temporaries_of_a_dead_process_are_removed, .timeout = 120)
{
	char *d = tmp_dir(), args[2400], dead[1200], live[1200];
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);  /* pid is now a process that is gone */
	char dir[1100];
	snprintf(dir, sizeof(dir), "%s/o", d);
	mkdir(dir, 0755);
	snprintf(dead, sizeof(dead), "%s/report.json.tmp.%ld.Ab12Cd", dir, (long)pid);
	snprintf(live, sizeof(live), "%s/report.json.tmp.%ld.Ef34Gh", dir, (long)getpid());
	FILE *f = fopen(dead, "w");
	fclose(f);
	f = fopen(live, "w");
	fclose(f);
	snprintf(args, sizeof(args), "run '%s' --out '%s' --quiet", src_path("scenarios/quickstart.json"), dir);
	cr_expect_eq(run_ddlsim(args, NULL, NULL), 0);
	cr_expect(!file_exists(dead), "the dead process's temporary was left");
	cr_expect(file_exists(live), "a live process's temporary was removed");
	free(d);
}

static char *slurp_file(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	static char buf[1 << 20];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return strdup(buf);
}

/* A re-run that cannot write (here `ulimit -f`, as a full disk would)
 * keeps every file of the earlier run, publishes no trace and leaves no
 * temporary; SIGXFSZ is reported like SIGINT. */
Test(outputs, a_failed_rerun_keeps_the_earlier_outputs, .timeout = 120)
{
	char *d = tmp_dir(), cmd[4096], dir[1100], p[1200], errp[1200];
	snprintf(dir, sizeof(dir), "%s/o", d);
	snprintf(cmd, sizeof(cmd), "run '%s' --out '%s' --quiet --format json,csv,svg,html",
		 src_path("scenarios/quickstart.json"), dir);
	cr_assert_eq(run_ddlsim(cmd, NULL, NULL), 0);
	const char *names[] = { "report.json", "report.csv", "breakdown.svg", "report.html" };
	char *before[4];
	for (int i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		before[i] = slurp_file(p);
		cr_assert(before[i], "%s", p);
	}
	snprintf(errp, sizeof(errp), "%s/err", d);
	snprintf(cmd, sizeof(cmd), "ulimit -f 8; '%s' run '%s' --out '%s' --quiet --format json,csv,svg,html "
		 "--trace '%s/t.json' 2>'%s'", getenv("DDLSIM_BIN"), src_path("scenarios/quickstart.json"), dir,
		 d, errp);
	int st = system(cmd);
	cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 153, "status %d", st);
	char *err = slurp_file(errp);
	cr_expect(err && strstr(err, "ddlsim: interrupted by SIGXFSZ"), "%s", err);
	free(err);
	for (int i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		char *after = slurp_file(p);
		cr_expect(after && !strcmp(after, before[i]), "%s changed or was removed", names[i]);
		free(after);
		free(before[i]);
	}
	snprintf(p, sizeof(p), "%s/t.json", d);
	cr_expect(!file_exists(p), "the trace was published although the reports failed");
	cr_expect_eq(count_temporaries(dir), 0);
	cr_expect_eq(count_temporaries(d), 0);
	free(d);
}

/* A re-run whose Nth rename fails while publishing (DDLSIM_TEST_FAIL_PUBLISH,
 * util/atomic_file.h: a full disk or a directory gone read-only between
 * two renames) publishes none of its outputs: the renames before it are
 * rolled back, so the earlier run's report.json and report.csv are intact
 * (an earlier, different scenario's), its trace does not appear, and no
 * temporary or backup is left. N = 4 is past the three renames: all new. */
Test(outputs, a_rename_failing_half_way_through_publishing_rolls_back, .timeout = 120)
{
	char *d = tmp_dir(), cmd[4096], dir[1100], p[1200];
	snprintf(dir, sizeof(dir), "%s/o", d);
	snprintf(cmd, sizeof(cmd), "run '%s' --out '%s' --quiet --format json,csv", src_path("scenarios/quickstart.json"),
		 dir);
	cr_assert_eq(run_ddlsim(cmd, NULL, NULL), 0);
	const char *names[] = { "report.json", "report.csv" };
	char *before[2];
	for (int i = 0; i < 2; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		before[i] = slurp_file(p);
		cr_assert(before[i], "%s", p);
	}
	for (int n = 1; n <= 4; n++) {
		char errp[1200];
		snprintf(errp, sizeof(errp), "%s/err", d);
		snprintf(cmd, sizeof(cmd), "DDLSIM_TEST_FAIL_PUBLISH=%d '%s' run '%s' --out '%s' --quiet --format json,csv "
			 "--trace '%s/t.json' 2>'%s'", n, getenv("DDLSIM_BIN"), src_path("scenarios/resnet50-v100-1gpu.json"),
			 dir, dir, errp);
		int st = system(cmd);
		char *err = slurp_file(errp);
		snprintf(p, sizeof(p), "%s/t.json", dir);
		if (n == 4) {
			cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "N = 4: status %d: %s", st, err);
			cr_expect(file_exists(p));
		} else {
			char want[1300];
			snprintf(want, sizeof(want), "%s: error: cannot publish the reports: Input/output error (the earlier "
				 "files were kept)\n", dir);
			cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 1, "N = %d: status %d", n, st);
			/* the last line (ASan may print warnings before it) */
			cr_expect(err && strlen(err) >= strlen(want) && !strcmp(err + strlen(err) - strlen(want), want),
				  "N = %d: %s", n, err);
			cr_expect(!file_exists(p), "N = %d: the trace was published", n);
		}
		for (int i = 0; i < 2; i++) {
			snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
			char *after = slurp_file(p);
			cr_expect(after && (n == 4 ? strcmp(after, before[i]) != 0 : !strcmp(after, before[i])),
				  "N = %d: %s %s", n, names[i], n == 4 ? "was not replaced" : "changed or was removed");
			free(after);
		}
		cr_expect_eq(count_temporaries(dir), 0, "N = %d", n);
		free(err);
	}
	for (int i = 0; i < 2; i++)
		free(before[i]);
	free(d);
}

/* ---- sweep outputs ---- */

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The lines of text in order (in place; text stays owned by the caller). */
static char *sorted_lines(char *text)
{
	char *lines[64], *save = NULL, *out = calloc(1, strlen(text) + 2);
	int n = 0;
	for (char *l = strtok_r(text, "\n", &save); l && n < 64; l = strtok_r(NULL, "\n", &save))
		lines[n++] = l;
	qsort(lines, (size_t)n, sizeof(char *), cmp_str);
	for (int i = 0; i < n; i++)
		strcat(strcat(out, lines[i]), "\n");
	return out;
}

static char *sweep_file(const char *dir, const char *name, const char *base)
{
	char text[2048], fn[300];
	snprintf(text, sizeof(text),
		 "{\"schema\": \"ddlsim.sweep\", \"schema_version\": \"1.0\", \"name\": \"%s\",\n"
		 " \"base\": \"%s\",\n"
		 " \"axes\": {\"training.micro_batch\": [16, 32, 64, 128]},\n"
		 " \"constraints\": [\"micro_batch <= 64\"]}\n", name, base);
	snprintf(fn, sizeof(fn), "%s.json", name);
	return write_file(dir, fn, text);
}

Test(sweeps, resume_of_another_sweeps_output_is_refused, .timeout = 120)
{
	char *d = tmp_dir(), args[2400], want[2400], *err = NULL;
	const char *base = src_path("scenarios/resnet50-v100-1gpu.json");
	char *a = sweep_file(d, "a", base), *b = sweep_file(d, "b", base);
	snprintf(args, sizeof(args), "sweep '%s' --out '%s/o' --quiet", a, d);
	cr_assert_eq(run_ddlsim(args, NULL, NULL), 0);
	snprintf(args, sizeof(args), "sweep '%s' --out '%s/o' --resume --quiet", b, d);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3);
	cr_expect(strstr(err, "/o/points.csv: error: cannot resume: the output belongs to sweep 'a' (hash "), "%s", err);
	cr_expect(strstr(err, "4 points, shard 1 of 1), not to this one 'b' (hash "), "%s", err);
	free(err);
	/* a CSV that is not a sweep output: 3 with a message */
	char dir2[1100];
	snprintf(dir2, sizeof(dir2), "%s/o2", d);
	mkdir(dir2, 0755);
	free(write_file(dir2, "points.csv", "a,b\n1,2\n"));
	snprintf(args, sizeof(args), "sweep '%s' --out '%s' --resume --quiet", a, dir2);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3);
	snprintf(want, sizeof(want), "%s/points.csv: error: cannot resume: '%s/points.csv' has no origin file", dir2, dir2);
	cr_expect(strstr(err, want), "%s", err);
	free(err), free(a), free(b), free(d);
}

Test(sweeps, resume_restores_lost_json_lines_and_a_held_lock_refuses_a_second_sweep, .timeout = 120)
{
	char *d = tmp_dir(), args[2400], p[1200], *err = NULL;
	char *a = sweep_file(d, "a", src_path("scenarios/resnet50-v100-1gpu.json"));
	snprintf(args, sizeof(args), "sweep '%s' --out '%s/o' --quiet", a, d);
	cr_assert_eq(run_ddlsim(args, NULL, NULL), 0);
	snprintf(p, sizeof(p), "%s/o/points.jsonl", d);
	char *full = slurp_file(p), *second = strchr(full, '\n');
	FILE *f = fopen(p, "w");
	fwrite(full, 1, (size_t)(second - full) + 1, f);  /* the first line only */
	fputs("{\"point\": 3, \"tor", f);                  /* and a torn one */
	fclose(f);
	snprintf(args, sizeof(args), "sweep '%s' --out '%s/o' --resume --quiet", a, d);
	cr_expect_eq(run_ddlsim(args, NULL, NULL), 0);
	/* every point once (sim_wall_s differs between runs: not compared) */
	char *again = slurp_file(p), *sorted = sorted_lines(again);
	for (int k = 0; k < 4; k++) {
		char key[40];
		snprintf(key, sizeof(key), "{\"point\":%d,", k);
		char *at = strstr(sorted, key);
		cr_expect(at && !strstr(at + 1, key), "point %d: %s", k, sorted);
	}
	int lines = 0;
	for (char *c = sorted; *c; c++)
		lines += *c == '\n';
	cr_expect_eq(lines, 4);
	free(sorted);
	free(again);
	/* another ddlsim holds the output */
	snprintf(p, sizeof(p), "%s/o/points.csv", d);
	int fd = open(p, O_RDONLY);
	cr_assert(fd >= 0 && flock(fd, LOCK_EX) == 0);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 1);
	cr_expect(strstr(err, "points.csv: error: another ddlsim sweep is writing this output"), "%s", err);
	close(fd);
	free(err), free(full), free(a), free(d);
}

Test(sweeps, an_invalid_base_leaves_no_points_files, .timeout = 60)
{
	char *d = tmp_dir(), args[2400], p[1200], *err = NULL;
	char *base = write_file(d, "base.json",
		"{\"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\", \"name\": \"b\",\n"
		" \"model\": \"nope.json\", \"topology\": \"nope.json\", \"nodes\": 1,\n"
		" \"training\": {\"global_batch\": 64, \"micro_batch\": 64, \"precision\": \"fp32\"}}\n");
	char *a = sweep_file(d, "a", base);
	snprintf(args, sizeof(args), "sweep '%s' --out '%s/o' --quiet", a, d);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3);
	/* the reason validate gives, then why it holds for every point */
	cr_expect(strstr(err, "base.json: /model: error: cannot open"), "%s", err);
	cr_expect(strstr(err, "a.json: /base: error: the base scenario is invalid (see above) and no axis or "
			 "derived value changes what is wrong"), "%s", err);
	snprintf(p, sizeof(p), "%s/o/points.csv", d);
	cr_expect(!file_exists(p), "an empty points.csv was left");
	snprintf(p, sizeof(p), "%s/o/points.jsonl", d);
	cr_expect(!file_exists(p), "an empty points.jsonl was left");
	free(err), free(a), free(base), free(d);
}

Test(sweeps, merge_refuses_another_sweeps_shard_and_names_a_missing_one, .timeout = 120)
{
	char *d = tmp_dir(), args[4096], want[2400], *err = NULL;
	const char *base = src_path("scenarios/resnet50-v100-1gpu.json");
	char *a = sweep_file(d, "a", base), *b = sweep_file(d, "b", base);
	for (int i = 1; i <= 2; i++) {
		snprintf(args, sizeof(args), "sweep '%s' --out '%s/a' --shard %d/2 --quiet", a, d, i);
		cr_assert_eq(run_ddlsim(args, NULL, NULL), 0);
		snprintf(args, sizeof(args), "sweep '%s' --out '%s/b' --shard %d/2 --quiet", b, d, i);
		cr_assert_eq(run_ddlsim(args, NULL, NULL), 0);
	}
	/* identical headers, another sweep: refused, not silently dropped rows */
	snprintf(args, sizeof(args), "merge '%s/m.csv' '%s/a/points.shard-1-of-2.csv' '%s/b/points.shard-2-of-2.csv'",
		 d, d, d);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3);
	snprintf(want, sizeof(want), "%s/b/points.shard-2-of-2.csv: error: from sweep 'b' (hash ", d);
	cr_expect(strstr(err, want), "%s", err);
	free(err);
	snprintf(args, sizeof(args), "merge '%s/m.csv' '%s/a/points.shard-1-of-2.csv'", d, d);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3);
	cr_expect_str_eq(err, "ddlsim: error: sweep 'a' was run in 2 shards; missing shard 2 of 2: pass them, "
			 "or --partial to merge without them\n");
	free(err);
	snprintf(want, sizeof(want), "%s/m.csv", d);
	cr_expect(!file_exists(want));
	snprintf(args, sizeof(args), "merge --partial '%s/m.csv' '%s/a/points.shard-1-of-2.csv'", d, d);
	cr_expect_eq(run_ddlsim(args, NULL, NULL), 0);
	snprintf(args, sizeof(args), "merge '%s/m.csv' '%s/a/points.shard-1-of-2.csv' '%s/a/points.shard-2-of-2.csv'",
		 d, d, d);
	cr_expect_eq(run_ddlsim(args, NULL, NULL), 0);
	/* a junk row is an error, not skipped */
	free(write_file(d, "j.csv", "point,x\n0,1\n1,2,3\n"));
	snprintf(args, sizeof(args), "merge '%s/m2.csv' '%s/j.csv'", d, d);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3);
	snprintf(want, sizeof(want), "%s/j.csv:3: error: expected 2 fields as in the header, got 3\n", d);
	cr_expect(strstr(err, want), "%s", err);
	free(err), free(a), free(b), free(d);
}
