/* test-longrun: never a silent long run (cli/longrun.h, cli/progress.h).
 *
 * Above the threshold (DDLSIM_LONG_RUN_S, lowered here so that a short
 * run passes it) run, compare and sweep say before simulating how long
 * it will take, why folding is off and what would shorten it, in the
 * exact words below; below it they say nothing; the 4,096-GPU compare
 * on the 2:1 tree (issue 27) says so before starting. On a terminal (a
 * pseudo-terminal here) a progress line is drawn and erased; off a
 * terminal there is none, except sweep's JSON progress lines; --quiet
 * silences both; an interruption erases the line before its message.
 * Durations read as people read them (util/human.h). */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "human.h"
#include "testutil.h"

/* Llama 3 8B, TP 8 x DP 2 on two DGX H100 with simulation.fold "off"
 * (16 ranks, a fraction of a second) written into dir; returns its path
 * (malloc'd). */
static char *small_off(const char *dir)
{
	char text[2048];
	snprintf(text, sizeof(text),
		 "{\"schema\":\"ddlsim.scenario\",\"schema_version\":\"1.0\",\"name\":\"qs-off\","
		 "\"model\":\"%s\",\"topology\":\"%s\",\"nodes\":2,"
		 "\"parallel\":{\"tp\":8,\"dp\":2,\"zero\":1},"
		 "\"training\":{\"seq_len\":2048,\"global_batch\":64,\"micro_batch\":4,\"precision\":\"bf16\"},"
		 "\"simulation\":{\"fold\":\"off\"}}",
		 src_path("models/zoo/llama3-8b.json"), src_path("topologies/dgx-h100.json"));
	return write_file(dir, "qs-off.json", text);
}

/* Megatron 18B unfolded (256 ranks, about a second of CPU): long enough
 * for a progress line to be seen and interrupted. */
static char *m18b_off(const char *dir)
{
	char text[2048];
	snprintf(text, sizeof(text),
		 "{\"schema\":\"ddlsim.scenario\",\"schema_version\":\"1.0\",\"name\":\"m18b-off\","
		 "\"model\":\"%s\",\"topology\":\"%s\",\"nodes\":32,"
		 "\"parallel\":{\"tp\":8,\"pp\":1,\"dp\":32,\"schedule\":\"1f1b\",\"recompute\":\"full\"},"
		 "\"training\":{\"seq_len\":2048,\"global_batch\":1024,\"micro_batch\":8,"
		 "\"precision\":\"fp16\",\"grad_reduce_dtype\":\"fp32\",\"attention\":\"unfused\"},"
		 "\"communication\":{\"overlap_grad_reduce\":false},\"simulation\":{\"fold\":\"off\"}}",
		 src_path("models/zoo/megatron/gpt-18b.json"), src_path("topologies/dgx-a100.json"));
	return write_file(dir, "m18b-off.json", text);
}

Test(longrun, warns_before_a_long_run_in_exact_words, .timeout = 120)
{
	char *d = tmp_dir(), *p = small_off(d), args[2048], want[2048], *err = NULL;
	setenv("DDLSIM_LONG_RUN_S", "0.01", 1);
	snprintf(args, sizeof(args), "run %s --out %s/out --quiet --format json", p, d);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	snprintf(want, sizeof(want),
		 "%s: warning: a long simulation: about 0.1 s of CPU for 52.08 k events (34.5 k tasks and "
		 "17.58 k flows on 16 of 16 ranks), estimated within 3x\n"
		 "%s: /simulation/fold: warning: not folded: simulation.fold is \"off\"; to shorten it: "
		 "set simulation.fold to \"auto\" (one data-parallel replica simulated for all)\n", p, p);
	cr_expect_str_eq(err, want);
	free(err), free(p), free(d);
}

Test(longrun, says_nothing_below_the_threshold, .timeout = 120)
{
	char *d = tmp_dir(), *p = small_off(d), args[2048], *err = NULL;
	/* the default threshold (30 s), and a value that is not a number: said
	 * (issue 40), and the default holds */
	const char *env[] = { NULL, "soon" };
	const char *said[] = { "", "ddlsim: warning: DDLSIM_LONG_RUN_S: expected a number of seconds >= 0, got "
			     "'soon'; using the default, 30 s\n" };
	for (int i = 0; i < 2; i++) {
		if (env[i])
			setenv("DDLSIM_LONG_RUN_S", env[i], 1);
		else
			unsetenv("DDLSIM_LONG_RUN_S");
		snprintf(args, sizeof(args), "run %s --out %s/out%d --quiet --format json", p, d, i);
		cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
		cr_expect_str_eq(err, said[i]);
		free(err);
	}
	free(p), free(d);
}

/* compare: each scenario above the threshold, then (none alone above it)
 * the two together */
/* s without its JSON progress lines ('{"progress": ...}', which compare
 * writes to a stderr that is not a terminal), in place. */
static void drop_progress(char *s)
{
	char *w = s;
	for (char *line = s; *line;) {
		char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) + 1 : strlen(line);
		if (strncmp(line, "{\"progress\": ", 13)) {
			memmove(w, line, len);
			w += len;
		}
		line += len;
	}
	*w = 0;
}

Test(longrun, compare_warns_per_scenario_and_for_the_whole, .timeout = 120)
{
	char *d = tmp_dir(), *p = small_off(d), args[2048], want[2048], *err = NULL;
	const char *q = src_path("scenarios/quickstart.json");
	setenv("DDLSIM_LONG_RUN_S", "0.05", 1);
	snprintf(args, sizeof(args), "compare %s %s", p, q);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	cr_expect(strstr(err, "{\"progress\": {\"command\": \"compare\", \"done\": 2, \"total\": 2,"), "%s", err);
	drop_progress(err);
	snprintf(want, sizeof(want),
		 "%s: warning: a long simulation: about 0.1 s of CPU for 52.08 k events (34.5 k tasks and "
		 "17.58 k flows on 16 of 16 ranks), estimated within 3x\n"
		 "%s: /simulation/fold: warning: not folded: simulation.fold is \"off\"; to shorten it: "
		 "set simulation.fold to \"auto\" (one data-parallel replica simulated for all)\n", p, p);
	cr_expect_str_eq(err, want);
	free(err);
	/* 0.077 s and 0.009 s estimated */
	setenv("DDLSIM_LONG_RUN_S", "0.08", 1);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	drop_progress(err);
	cr_expect_str_eq(err, "ddlsim: warning: a long run: about 0.1 s of CPU for 2 scenarios, estimated "
			 "within 3x; 0 take 0.1 s or more alone; the longest, qs-off, about 0.1 s (16 of 16 "
			 "ranks simulated)\n"
			 "ddlsim: warning: qs-off is not folded: simulation.fold is \"off\"; to shorten it: set "
			 "simulation.fold to \"auto\" (one data-parallel replica simulated for all)\n");
	free(err), free(p), free(d);
}

/* Run the ddlsim binary with argv (argv[0] unused) and environment
 * variable DDLSIM_LONG_RUN_S=limit, stderr on a pseudo-terminal, stdout
 * to /dev/null; with interrupt_at, SIGINT it once that text shows.
 * Returns what it wrote on the terminal (malloc'd); *status its wait
 * status. */
static char *run_on_pty(char *const argv[], const char *limit, const char *interrupt_at, int *status)
{
	int m = posix_openpt(O_RDWR | O_NOCTTY);
	cr_assert(m >= 0 && !grantpt(m) && !unlockpt(m), "no pseudo-terminal: %s", strerror(errno));
	const char *sname = ptsname(m);
	cr_assert_not_null(sname);
	setenv("DDLSIM_LONG_RUN_S", limit, 1);
	fflush(NULL);
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		int s = open(sname, O_RDWR | O_NOCTTY), nul = open("/dev/null", O_WRONLY);
		if (s < 0 || nul < 0 || dup2(s, STDERR_FILENO) < 0 || dup2(nul, STDOUT_FILENO) < 0)
			_exit(126);
		close(m);
		execv(getenv("DDLSIM_BIN"), argv);
		_exit(127);
	}
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap);
	bool sent = false;
	for (;;) {
		if (len + 4096 > cap)
			buf = realloc(buf, cap *= 2);
		ssize_t r = read(m, buf + len, cap - len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;  /* EIO: the child's side closed */
		len += (size_t)r;
		buf[len] = 0;
		if (interrupt_at && !sent && strstr(buf, interrupt_at)) {
			kill(pid, SIGINT);
			sent = true;
		}
	}
	buf[len] = 0;
	close(m);
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
	strip_sanitizer_notice(buf);
	return buf;
}

Test(progress, run_draws_a_line_on_a_terminal_and_erases_it, .timeout = 120)
{
	char *d = tmp_dir(), *p = small_off(d), out[1100];
	snprintf(out, sizeof(out), "%s/out", d);
	char *argv[] = { "ddlsim", "run", p, "--out", out, "--format", "json", NULL };
	int st;
	char *tty = run_on_pty(argv, "0", NULL, &st);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s", tty);
	/* the warning, then the line, erased at the end */
	char *line = strstr(tty, "\r\033[Kddlsim run: ");
	cr_assert_not_null(line, "%s", tty);
	cr_expect(strstr(tty, "warning: a long simulation") < line, "%s", tty);
	cr_expect(strstr(line, " tasks), ") && strstr(line, " elapsed, about ") && strstr(line, " left"),
		  "%s", tty);
	size_t n = strlen(tty);
	cr_expect(n >= 4 && !strcmp(tty + n - 4, "\r\033[K"), "not erased at the end: %s", tty);
	free(tty), free(p), free(d);
}

Test(progress, quiet_and_a_short_run_draw_nothing, .timeout = 120)
{
	char *d = tmp_dir(), *p = small_off(d), out[1100];
	snprintf(out, sizeof(out), "%s/out", d);
	char *quiet[] = { "ddlsim", "run", p, "--out", out, "--format", "json", "--quiet", NULL };
	int st;
	char *tty = run_on_pty(quiet, "0", NULL, &st);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s", tty);
	cr_expect(!strstr(tty, "ddlsim run:"), "%s", tty);
	free(tty);
	/* below the threshold, a run shorter than PROGRESS_AFTER_S shows none */
	char *plain[] = { "ddlsim", "run", (char *)src_path("scenarios/quickstart.json"), "--out", out,
			  "--format", "json", NULL };
	tty = run_on_pty(plain, "1000", NULL, &st);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s", tty);
	cr_expect_str_eq(tty, "");
	free(tty), free(p), free(d);
}

Test(progress, off_a_terminal_run_and_compare_draw_nothing, .timeout = 120)
{
	char *d = tmp_dir(), *p = small_off(d), args[2048], *err = NULL;
	setenv("DDLSIM_LONG_RUN_S", "0", 1);
	snprintf(args, sizeof(args), "run %s --out %s/out --format json", p, d);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	cr_expect(strstr(err, "warning: a long simulation"), "%s", err);
	cr_expect(!strstr(err, "ddlsim run:") && !strchr(err, '\r'), "%s", err);
	free(err);
	snprintf(args, sizeof(args), "compare %s %s", p, src_path("scenarios/quickstart.json"));
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	cr_expect(!strstr(err, "ddlsim compare:") && !strchr(err, '\r'), "%s", err);
	free(err), free(p), free(d);
}

Test(progress, compare_draws_a_line_on_a_terminal, .timeout = 120)
{
	char *d = tmp_dir(), *p = small_off(d);
	char *argv[] = { "ddlsim", "compare", p, (char *)src_path("scenarios/quickstart.json"), NULL };
	int st;
	char *tty = run_on_pty(argv, "0", NULL, &st);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s", tty);
	cr_expect(strstr(tty, "\r\033[Kddlsim compare: "), "%s", tty);
	cr_expect(strstr(tty, " of 2 scenarios done), "), "%s", tty);
	size_t n = strlen(tty);
	cr_expect(n >= 4 && !strcmp(tty + n - 4, "\r\033[K"), "not erased at the end: %s", tty);
	free(tty), free(p), free(d);
}

/* off a terminal, sweep writes one JSON progress line per point */
Test(progress, sweep_writes_json_progress_lines_off_a_terminal, .timeout = 120)
{
	char *d = tmp_dir(), args[2048], *err = NULL;
	setenv("DDLSIM_LONG_RUN_S", "1000", 1);
	snprintf(args, sizeof(args), "sweep %s --out %s/s -j 2",
		 src_path("scenarios/sweeps/resnet50-v100-ps-servers.json"), d);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	int k = 0;
	double last = -1;
	for (char *l = strtok(err, "\n"); l; l = strtok(NULL, "\n")) {
		json_error_t je;
		json_t *o = json_loads(l, 0, &je), *pg = json_object_get(o, "progress");
		cr_assert(json_is_object(pg), "not a progress line: %s", l);
		cr_expect_str_eq(json_string_value(json_object_get(pg, "command")), "sweep");
		cr_expect_eq(json_integer_value(json_object_get(pg, "done")), ++k);
		cr_expect_eq(json_integer_value(json_object_get(pg, "total")), 6);
		cr_expect_eq(json_integer_value(json_object_get(pg, "failed")), 0);
		double pc = json_number_value(json_object_get(pg, "percent"));
		cr_expect(pc > last && pc <= 100, "%s", l);
		last = pc;
		cr_expect(json_is_number(json_object_get(pg, "elapsed_s")));
		cr_expect(json_is_number(json_object_get(pg, "remaining_s")));
		json_decref(o);
	}
	cr_expect_eq(k, 6);
	cr_expect_eq(last, 100);
	free(err);
	snprintf(args, sizeof(args), "sweep %s --out %s/q --quiet",
		 src_path("scenarios/sweeps/resnet50-v100-ps-servers.json"), d);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	cr_expect_str_eq(err, "");
	free(err), free(d);
}

/* SIGINT while the line shows: erased, then the interruption's message */
Test(progress, interruption_erases_the_line, .timeout = 120)
{
	char *d = tmp_dir(), *p = m18b_off(d), out[1100];
	snprintf(out, sizeof(out), "%s/out", d);
	char *argv[] = { "ddlsim", "run", p, "--out", out, "--format", "json", NULL };
	int st;
	char *tty = run_on_pty(argv, "0", "\r\033[Kddlsim run: ", &st);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 130, "status %d: %s", st, tty);
	cr_expect(strstr(tty, "\r\033[Kddlsim: interrupted by SIGINT while simulating; no partial report "
			 "was left behind\r\n"), "%s", tty);
	free(tty), free(p), free(d);
}

/* Issue 27's case: two plans on 4,096 GPUs behind a 2:1 fat tree whose
 * last leaf is partly filled, with simulation.fold "off" (by default
 * class folding now takes them: the replicas touching the partly filled
 * leaf simulated whole, 228 and 57 of 4,096 ranks, estimated 46 s and
 * 7.7 s, measured 86 and 15.6 CPU s). Before anything is simulated, compare says how long each will
 * take, why folding is off and what would fold it; then its progress line
 * shows at once, and the test interrupts it. */
Test(longrun, compare_of_4096_gpus_on_the_2to1_tree_says_before_starting, .timeout = 300)
{
	char *d = tmp_dir(), *path[2], text[2048];
	const char *model[2] = { "llama3-70b", "llama3-8b" };
	const int pp[2] = { 4, 1 };
	for (int i = 0; i < 2; i++) {
		char m[256], name[32];
		snprintf(m, sizeof(m), "models/zoo/%s.json", model[i]);
		int dp = 4096 / (8 * pp[i]);
		snprintf(text, sizeof(text),
			 "{\"schema\":\"ddlsim.scenario\",\"schema_version\":\"1.0\",\"name\":\"%s-4096\","
			 "\"model\":\"%s\",\"topology\":\"%s\",\"nodes\":512,"
			 "\"parallel\":{\"tp\":8,\"pp\":%d,\"dp\":%d},\"training\":{\"seq_len\":8192,"
			 "\"global_batch\":%d,\"micro_batch\":1,\"precision\":\"bf16\"},"
			 "\"simulation\":{\"fold\":\"off\"}}",
			 model[i], src_path(m), src_path("tests/data/fattree2-2to1-r128.json"), pp[i], dp,
			 8 * dp);
		snprintf(name, sizeof(name), "s%d.json", i);
		path[i] = write_file(d, name, text);
	}
	char *argv[] = { "ddlsim", "compare", path[0], path[1], NULL };
	int st;
	char *tty = run_on_pty(argv, "30", "\r\033[Kddlsim compare: ", &st);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 130, "status %d: %s", st, tty);
	const char *fold = "/simulation/fold: warning: not folded: simulation.fold is \"off\"; to "
			   "shorten it: set simulation.fold to \"auto\" (one data-parallel replica "
			   "simulated for all)\r\n";
	char want[4096];
	snprintf(want, sizeof(want),
		 "%s: warning: a long simulation: about 3.1 min of CPU for 8590 k events (5552 k tasks and "
		 "3037 k flows on 4096 of 4096 ranks), estimated within 3x\r\n%s: %s"
		 "%s: warning: a long simulation: about 5.4 min of CPU for 13.74 M events (8827 k tasks and "
		 "4914 k flows on 4096 of 4096 ranks), estimated within 3x\r\n%s: %s"
		 "\r\033[Kddlsim compare: ", path[0], path[0], fold, path[1], path[1], fold);
	cr_expect(!strncmp(tty, want, strlen(want)), "%s", tty);
	free(tty), free(path[0]), free(path[1]), free(d);
}

Test(human, durations_read_in_their_unit)
{
	const struct { double s; const char *want; } c[] = {
		{ 0.04, "0.0 s" }, { 3.54, "3.5 s" }, { 9.96, "10 s" }, { 45.2, "45 s" },
		{ 59.6, "1.0 min" }, { 126, "2.1 min" }, { 3599, "1.0 h" }, { 5400, "1.5 h" },
		{ 2 * 86400 + 1, "2.0 d" }, { -1, "-" },
	};
	char buf[32];
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		cr_expect_str_eq(human_duration(c[i].s, buf, sizeof(buf)), c[i].want, "%g s", c[i].s);
}

Test(human, a_range_reads_in_one_unit)
{
	const struct { double lo, hi; const char *pre, *unit, *want; } c[] = {
		{ 9.8e6, 11.4e6, "$", "", "$9.8 M – $11.4 M" },
		{ 8e6, 12e6, "$", "", "$8 M – $12 M" },   /* never "8000 k – 12 M" */
		{ 980e3, 1.2e6, "$", "", "$980 k – $1200 k" },
		{ 82.6, 104.2, "", " days", "82.6 – 104.2 days" },
		{ 9000, 12000, NULL, " MWh", "9 k – 12 k MWh" },
		{ 1, NAN, "", "", "-" },
	};
	char buf[64], a[32], b[32];
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		cr_expect_str_eq(human_range(c[i].lo, c[i].hi, c[i].pre, c[i].unit, buf, sizeof(buf)), c[i].want,
				 "%g .. %g", c[i].lo, c[i].hi);
	cr_expect_str_eq(human_scaled(8393000, 11.4e6, a, sizeof(a)), "8.393 M");
	cr_expect_str_eq(human_scaled(72.66, 1e5, b, sizeof(b)), "0.07266 k");
	/* human_number as it was: a prefix only past 9999.5 */
	cr_expect_str_eq(human_number(10100541, a, sizeof(a)), "10.1 M");
	cr_expect_str_eq(human_number(9999.4, b, sizeof(b)), "9999");
}
