/* test-nccl-layout: `ddlsim collective` against nccl-tests v2.19.6's
 * layout (github.com/NVIDIA/nccl-tests, commit a0b82b2). For each flag set
 * of a table covering every nccl-tests flag, ddlsim's standard output is
 * matched line by line against a reference layout transcribed from
 * nccl-tests' printf formats (tests/fixtures/nccl-tests/NAME.layout, written
 * by make-fixtures.py there): the header lines and their field names and
 * order, the column headers byte for byte, each row's fields in their
 * widths, each number in nccl-tests' format (getFloatStr(), %g), the
 * footer; values masked. Then values: the new collectives' busbw against
 * nccl-tests' GetBw() closed forms, -f stepping, the -o/-d fallbacks, -J's
 * JSON report and the refusals. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* util.cu getFloatStr(), transcribed: 2 decimals if they fit in width,
 * else 1, else none, else an exponent. */
static void float_str(double v, int width, char *out)
{
	static const char *const fmts[] = {"%*.2f", "%*.1f", "%*.0f"};
	char b[400];
	for (int i = 0; i < 3; i++)
		if (snprintf(b, sizeof(b), fmts[i], width, v) <= width) {
			strcpy(out, b);
			return;
		}
	snprintf(b, sizeof(b), width >= 7 ? "%*.1e" : "%*.0e", width, v);
	b[width] = 0;
	strcpy(out, b);
}

static bool all_of(const char *s, size_t n, const char *set)
{
	for (size_t i = 0; i < n; i++)
		if (!strchr(set, s[i]))
			return false;
	return true;
}

/* One field of conversion c, width w (0: none) at *pl: consumed, its
 * format checked. false with why. */
static bool match_field(char c, int w, const char **pl, char *why)
{
	const char *l = *pl;
	size_t len = strlen(l), n;
	if (c == 'S') {
		*pl = l + len;
		return len > 0 || (strcpy(why, "empty %S"), false);
	}
	if (c == 'T') {
		/* "%21s" of a "%Y-%m-%d %H:%M:%S" time */
		bool ok = len >= 21 && !strncmp(l, "  ", 2) && all_of(l + 2, 4, "0123456789") && l[6] == '-' &&
			  l[9] == '-' && l[12] == ' ' && l[15] == ':' && l[18] == ':';
		*pl = l + 21;
		return ok || (sprintf(why, "timestamp '%.21s'", l), false);
	}
	if (c == 'x') {
		n = len < (size_t)w ? len : (size_t)w; /* zero-padded: exactly w digits */
	} else if (w && len >= (size_t)w && l[0] == ' ') {
		n = (size_t)w; /* padded to its width: spaces, then one token */
		size_t k = 0;
		while (k < n && l[k] == ' ')
			k++;
		if (memchr(l + k, ' ', n - k))
			return sprintf(why, "field '%.*s' is not right-aligned in %d", (int)n, l, w), false;
	} else {
		n = strcspn(l, " "); /* wider than its width, or no width */
		if (w && n < (size_t)w)
			return sprintf(why, "field '%.*s' narrower than %d", (int)n, l, w), false;
	}
	char f[512];
	snprintf(f, sizeof(f), "%.*s", (int)n, l);
	const char *tok = f + strspn(f, " ");
	char want[512];
	bool ok = true;
	switch (c) {
	case 'd': case 'i':
		ok = *tok && (tok[0] == '-' ? all_of(tok + 1, strlen(tok + 1), "0123456789") && tok[1]
					   : all_of(tok, strlen(tok), "0123456789"));
		break;
	case 'x':
		ok = (size_t)w == n && all_of(f, n, "0123456789abcdef");
		break;
	case 'F':
		float_str(atof(tok), w, want);
		ok = *tok && !strcmp(want, f);
		break;
	case 'g':
		snprintf(want, sizeof(want), "%*g", w, atof(tok));
		ok = *tok && !strcmp(want, f);
		break;
	case 's':
		break;
	default:
		ok = false;
	}
	if (!ok)
		sprintf(why, "field '%s' is not nccl-tests' %%%d%c", f, w, c);
	*pl = l + n;
	return ok;
}

/* Whether line has the layout of template t; why says where not. */
static bool match_line(const char *t, const char *line, char *why)
{
	const char *l = line;
	while (*t) {
		if (t[0] == '%' && t[1] == '%') {
			if (*l != '%')
				return sprintf(why, "at column %ld: want '%%'", (long)(l - line)), false;
			t += 2;
			l++;
			continue;
		}
		if (*t == '%') {
			int w = 0;
			t++;
			while (*t >= '0' && *t <= '9')
				w = w * 10 + (*t++ - '0');
			if (*t == 'l')
				t++;
			if (!match_field(*t, w, &l, why))
				return false;
			t++;
			continue;
		}
		if (*l != *t)
			return sprintf(why, "at column %ld: want '%c', got '%c'", (long)(l - line), *t, *l ? *l : '$'),
			       false;
		t++;
		l++;
	}
	return *l ? (sprintf(why, "trailing '%s'", l), false) : true;
}

static int split(char *s, char **v, int max)
{
	int n = 0;
	for (char *p = s;; p++) {
		char *e = strchr(p, '\n');
		cr_assert_lt(n, max);
		v[n++] = p;
		if (!e)
			break;
		*e = 0;
		p = e;
	}
	return n;
}

/* out (stdout of ddlsim) against the layout file's templates. */
static void expect_layout(const char *name, char *out)
{
	char path[256];
	snprintf(path, sizeof(path), "tests/fixtures/nccl-tests/%s.layout", name);
	char *ref = test_file_text(src_path(path));
	cr_assert(ref && *ref, "%s missing", path);
	static char *T[4096], *O[70000];
	int nt = split(ref, T, 4096), no = split(out, O, 70000), k = 0;
	char why[1024];
	for (int i = 0; i < nt; i++) {
		if (!strncmp(T[i], "//", 2))
			continue;
		bool rep = T[i][0] == '+';
		const char *t = T[i] + rep;
		cr_assert_lt(k, no, "%s: output ends before template line %d '%s'", name, i + 1, t);
		cr_assert(match_line(t, O[k], why), "%s: line %d '%s'\n  against '%s': %s", name, k + 1, O[k], t, why);
		k++;
		while (rep && k < no && match_line(t, O[k], why))
			k++;
	}
	cr_expect_eq(k, no, "%s: %d lines beyond the layout, first '%s'", name, no - k, k < no ? O[k] : "");
	free(ref);
}

static const struct { const char *name, *flags; } cases[] = {
	{"defaults", ""},
	{"sweep-factor", "-b 8 -e 1M -f 2 -g 8"},
	{"sweep-bytes", "--minbytes 1M --maxbytes 4M --stepbytes 1M -g 8"},
	{"factor-fraction", "-b 1M -e 2M -f 1.5 -g 8"},
	{"threads", "-t 2 -g 4"},
	{"iters", "-n 50 -w 10 -m 4 -g 8"},
	{"cycles", "-N 2 -g 8"},
	{"parallel-init", "-p 1 -g 8"},
	{"no-check", "-c 0 -g 8"},
	{"op-all", "-o all -g 8"},
	{"op-unknown", "-o frob -g 8"},
	{"dtype-all", "-d all -g 8"},
	{"dtype-fp8", "-d f8e4m3 -g 8"},
	{"dtype-unknown", "-d float7 -g 8"},
	{"root-all", "broadcast_perf -r -1 -g 8"},
	{"blocking-1", "-z 1 -g 8"},
	{"blocking-2", "-z 2 -g 8"},
	{"blocking-3", "-z 3 -g 8"},
	{"stream-timeout-average", "-y 1 -T 30 -a 2 -g 8"},
	{"graph", "-G 2 -g 8"},
	{"cputime", "-C 1 -g 8"},
	{"timestamps", "-S 1 -g 8"},
	{"output-file-txt", "-J results.txt -g 8"},
	{"register-cta", "-R 1 -x 2 -g 8"},
	{"memory-0", "-M 0 -g 8"},
	{"unalign", "-u 3 -g 8"},
	{"per-iter", "-I 1 -K 2 -g 8"},
	{"per-iter-timestamps", "--per_iter_timing=1 --report_timestamps=1 -g 8"},
	{"gather", "gather_perf -b 1M -e 4M -f 2 -g 8"},
	{"scatter", "scatter_perf -b 1M -e 4M -f 2 -g 8"},
	{"alltoallv", "alltoallv_perf -b 1M -e 4M -f 2 -g 8"},
	{"hypercube", "hypercube_perf -b 1M -e 4M -f 2 -g 8"},
	{"max-capped", "-b 100G -e 100G -g 8"},
};

static char *run_ok(const char *flags, char **err)
{
	char args[1400], *out = NULL;
	snprintf(args, sizeof(args), "collective --topology %s %s", src_path("topologies/dgx-h100.json"), flags);
	int rc = run_ddlsim(args, &out, err);
	cr_assert_eq(rc, 0, "%s: exit %d: %s", flags, rc, err ? *err : "");
	return out;
}

Test(nccl_layout, every_flag_set_has_nccl_tests_layout, .timeout = 600)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *err = NULL, *out = run_ok(cases[i].flags, &err);
		expect_layout(cases[i].name, out);
		free(out);
		free(err);
	}
}

/* The value columns of the row of size `size` (the first one). */
static void row_of(const char *out, long size, bool no_redop, double *count, double *us, double *alg,
		   double *bus)
{
	char pat[32];
	snprintf(pat, sizeof(pat), "\n%12ld ", size);
	const char *r = strstr(out, pat);
	cr_assert(r, "no row of %ld in:\n%s", size, out);
	char ty[16], op[16];
	long root;
	int got = no_redop /* hypercube: an empty redop */
			  ? 1 + sscanf(r, " %*f %lf %15s %ld %lf %lf %lf", count, ty, &root, us, alg, bus)
			  : sscanf(r, " %*f %lf %15s %15s %ld %lf %lf %lf", count, ty, op, &root, us, alg, bus);
	cr_assert(got == 7, "row: %.200s", r);
}

/* nccl-tests' GetBw() of each new test on 8 ranks: gather, scatter,
 * alltoallv busbw = algbw x 7/8 with algbw = size / time (size: count x 8 x
 * 4 B, count = 1 MiB / 4 / 8 = 32768); hypercube algbw = count x 4 x 7 /
 * time and busbw = algbw (hypercube.cu). */
Test(nccl_layout, new_collectives_busbw_is_nccl_tests_closed_form)
{
	static const struct { const char *bin; double factor; bool hyper; } t[] = {
		{"gather_perf", 7.0 / 8, false}, {"scatter_perf", 7.0 / 8, false},
		{"alltoallv_perf", 7.0 / 8, false}, {"hypercube_perf", 1, true},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char flags[128], *out;
		snprintf(flags, sizeof(flags), "%s -b 64M -e 64M -g 8", t[i].bin);
		out = run_ok(flags, NULL);
		double count, us, alg, bus;
		/* alltoallv: one rank's distance-weighted peers, each rounded down to 16 B */
		long size = 67108864;
		if (strstr(t[i].bin, "alltoallv")) {
			size = 0;
			for (int d = 1; d < 8; d++)
				size += (long)(floor(d * 67108864.0 / 28 / 16) * 16);
		}
		row_of(out, size, t[i].hyper, &count, &us, &alg, &bus);
		cr_expect_eq(count, 67108864 / 4 / 8, "%s count", t[i].bin);
		double want_alg = (t[i].hyper ? count * 4 * 7 : (double)size) / (us * 1e-6) / 1e9;
		cr_expect(fabs(alg - want_alg) <= 0.006 + 0.001 * want_alg, "%s algbw %.2f, want %.2f", t[i].bin,
			  alg, want_alg);
		cr_expect(fabs(bus - alg * t[i].factor) <= 0.011, "%s busbw %.2f, want %.2f x %.4f", t[i].bin, bus,
			  alg, t[i].factor);
		cr_expect_gt(us, 0, "%s", t[i].bin);
		free(out);
	}
}

/* gather moves 7/8 of the buffer into one GPU: its time is at least the
 * root's NVLink receive time, size x 7/8 / 450 GB/s (DGX H100: 18 NVLink4
 * links x 25 GB/s per direction, the topology's intra bandwidth). */
Test(nccl_layout, gather_is_bound_by_the_roots_link)
{
	char *out = run_ok("gather_perf -b 1G -e 1G -g 8", NULL);
	double count, us, alg, bus;
	row_of(out, 1073741824, false, &count, &us, &alg, &bus);
	double floor_us = 1073741824.0 * 7 / 8 / 450e9 * 1e6;
	cr_expect_geq(us, floor_us, "gather %.1f us below the root's link bound %.1f", us, floor_us);
	cr_expect_lt(us, 1.5 * floor_us, "gather %.1f us, root's link bound %.1f", us, floor_us);
	free(out);
}

static int count_rows(const char *out)
{
	int n = 0;
	for (const char *p = out; (p = strchr(p, '\n')); p++)
		n += p[1] && p[1] != '#' && p[1] != '\n';
	return n;
}

/* -f F steps size x F (TimeTest()); -f 1.5 is 1 (strtol), stepping by -i;
 * -N 2 prints the sizes twice. */
Test(nccl_layout, stepping_follows_timetest)
{
	char *err = NULL, *out = run_ok("-b 1K -e 1M -f 4 -g 8", &err);
	cr_expect_eq(count_rows(out), 6, "1K 4K 16K 64K 256K 1M:\n%s", out); /* 4^0..4^5 x 1K */
	cr_expect(strstr(out, "\n      262144 "), "%s", out);
	free(out);
	free(err);
	out = run_ok("-b 1M -e 3M -f 1.5 -i 1M -g 8", &err);
	cr_expect_eq(count_rows(out), 3, "1M 2M 3M:\n%s", out);
	cr_expect(strstr(out, "step: 1048576(bytes)"), "%s", out);
	cr_expect(strstr(err, "-f 1.5: nccl-tests reads the step factor as an integer (strtol): 1"), "%s", err);
	free(out);
	free(err);
	out = run_ok("-b 1M -e 2M -f 2 -N 2 -g 8", NULL);
	cr_expect_eq(count_rows(out), 4, "%s", out);
	free(out);
}

/* Unknown -o and -d fall back to sum and float with nccl-tests' line
 * (common.h), first on stdout; --op COLLECTIVE is nccl-tests' -o now. */
Test(nccl_layout, unknown_op_and_type_fall_back)
{
	char *err = NULL, *out = run_ok("-o frob -d float7 -g 8", &err);
	cr_expect(!strncmp(out, "invalid op frob, defaulting to sum .. \ninvalid type float7, defaulting to float .. \n"
			   "# nccl-tests version 2.19.6 ", 110), "%s", out);
	cr_expect(strstr(out, "     float     sum      -1  "), "%s", out);
	free(out);
	free(err);
	out = run_ok("--op all_gather -g 8", &err);
	cr_expect(strstr(out, "invalid op all_gather, defaulting to sum .. \n"), "%s", out);
	cr_expect(strstr(out, "# Collective test starting: all_reduce_perf\n"), "%s", out);
	cr_expect(strstr(err, "--op all_gather: --op is nccl-tests' reduction op; the collective is chosen "
			      "with --ops all_gather"), "%s", err);
	free(out);
	free(err);
}

/* What nccl-tests refuses under NCCL 2.27 (-D, -V), and what a simulation
 * cannot honour, exit 2 with the reason. */
Test(nccl_layout, refusals_say_why)
{
	static const struct { const char *flags, *msg; } c[] = {
		{"-D 1", "Option -D (device implementation) requires NCCL >= 2.28.0"},
		{"-V 8", "Option -V (device CTA count) requires NCCL >= 2.28.0"},
		{"-M 1", "-M 1: nccl-tests' GPU memory report measures NCCL's own allocations"},
		{"-N 0", "-N 0: nccl-tests runs endlessly"},
		{"hypercube_perf -g 6", "hypercube: 6 ranks is not a power of 2"},
	};
	const char *topo = src_path("topologies/dgx-h100.json");
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char args[1400], *err = NULL;
		snprintf(args, sizeof(args), "collective --topology %s %s", topo, c[i].flags);
		cr_expect_eq(run_ddlsim(args, NULL, &err), 2, "%s: %s", c[i].flags, err);
		cr_expect(err && strstr(err, c[i].msg), "%s: want '%s', got %s", c[i].flags, c[i].msg, err);
		free(err);
	}
	char args[1400], *err = NULL;
	snprintf(args, sizeof(args), "collective --topology %s -d f8e5m2", src_path("topologies/dgx-a100.json"));
	cr_expect_eq(run_ddlsim(args, NULL, &err), 2);
	cr_expect(err && strstr(err, "fp8 needs a GPU of compute capability 9.0"), "%s", err);
	free(err);
	setenv("NCCL_TESTS_ALLTOALLV_SPREAD", "0.5", 1);
	snprintf(args, sizeof(args), "collective alltoallv_perf --topology %s -g 8", topo);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 2);
	cr_expect(err && strstr(err, "NCCL_TESTS_ALLTOALLV_SPREAD=0.5"), "%s", err);
	free(err);
	unsetenv("NCCL_TESTS_ALLTOALLV_SPREAD");
}

/* NCCL_TESTS_ALLTOALLV_SPREAD=0 is alltoall's uniform pattern: the same
 * size, count and time as alltoall_perf. */
Test(nccl_layout, uniform_alltoallv_is_alltoall)
{
	setenv("NCCL_TESTS_ALLTOALLV_SPREAD", "0", 1);
	char *v = run_ok("alltoallv_perf -b 64M -e 64M -g 8", NULL);
	unsetenv("NCCL_TESTS_ALLTOALLV_SPREAD");
	char *a = run_ok("alltoall_perf -b 64M -e 64M -g 8", NULL);
	double c1, u1, a1, b1, c2, u2, a2, b2;
	row_of(v, 67108864, false, &c1, &u1, &a1, &b1);
	row_of(a, 67108864, false, &c2, &u2, &a2, &b2);
	cr_expect_eq(c1, c2);
	cr_expect_eq(u1, u2);
	cr_expect_eq(b1, b2);
	free(v);
	free(a);
}

/* -J FILE.json: nccl-tests' JSON report (util.cu's keys, in its order),
 * its "# Writing JSON output to" line first; FILE exists: FILE.0, as the
 * next run of nccl-tests writes; one result per printed row with the
 * printed time. A FILE of another suffix is ignored, as nccl-tests. */
Test(nccl_layout, output_file_json_is_nccl_tests_report)
{
	char *dir = tmp_dir(), flags[1200], path[1100];
	snprintf(path, sizeof(path), "%s/r.json", dir);
	snprintf(flags, sizeof(flags), "-b 1M -e 4M -f 2 -g 8 -J %s", path);
	char *out = run_ok(flags, NULL), *out2 = run_ok(flags, NULL);
	char want[1200];
	snprintf(want, sizeof(want), "# Writing JSON output to %s\n# nccl-tests version 2.19.6 ", path);
	cr_expect(!strncmp(out, want, strlen(want)), "%s", out);
	snprintf(want, sizeof(want), "# Writing JSON output to %s.0\n", path);
	cr_expect(!strncmp(out2, want, strlen(want)), "%s", out2);
	json_error_t e;
	json_t *doc = json_load_file(path, 0, &e);
	cr_assert(doc, "%s: %s", path, e.text);
	static const char *const keys[] = {"version", "start_time", "args", "env", "nccl_version", "config",
					   "results", "out_of_bounds", "average_bus_bandwidth", "errors", "end_time"};
	size_t k = 0;
	const char *key;
	json_t *v;
	json_object_foreach(doc, key, v)
		cr_expect(k < 11 && !strcmp(key, keys[k++]), "key %zu '%s'", k, key);
	cr_expect_eq(k, 11);
	cr_expect_eq(json_integer_value(json_object_get(doc, "version")), 3);
	cr_expect_eq(json_array_size(json_object_get(json_object_get(doc, "config"), "devices")), 8);
	json_t *res = json_object_get(doc, "results");
	cr_assert_eq(json_array_size(res), 3, "1M, 2M, 4M");
	double count, us, alg, bus;
	row_of(out, 4194304, false, &count, &us, &alg, &bus);
	json_t *r = json_array_get(res, 2), *oop = json_object_get(r, "out_of_place");
	cr_expect_eq(json_integer_value(json_object_get(r, "size")), 4194304);
	cr_expect_str_eq(json_string_value(json_object_get(r, "root")), "    -1");
	cr_expect(fabs(json_real_value(json_object_get(oop, "time")) - us) < 0.006, "time %g vs %g",
		  json_real_value(json_object_get(oop, "time")), us);
	cr_expect(fabs(json_real_value(json_object_get(oop, "bus_bw")) - bus) < 0.006);
	cr_expect(json_object_get(r, "in_place") && json_object_get(oop, "alg_bw"));
	json_decref(doc);
	free(out);
	free(out2);
	free(dir);
}

/* NCCL_TESTS_MIN_BW: the average bus bandwidth OK or FAILED against 0.9 x
 * it (util.cu writeResultFooter()), a FAILED run exits 1 (common.cu). */
Test(nccl_layout, min_bw_checks_the_average)
{
	char args[1400], *out = NULL;
	snprintf(args, sizeof(args), "collective --topology %s -g 8", src_path("topologies/dgx-h100.json"));
	setenv("NCCL_TESTS_MIN_BW", "1", 1);
	cr_expect_eq(run_ddlsim(args, &out, NULL), 0);
	cr_expect(strstr(out, " OK\n#\n# Collective test concluded"), "%s", out);
	free(out);
	setenv("NCCL_TESTS_MIN_BW", "100000", 1);
	cr_expect_eq(run_ddlsim(args, &out, NULL), 1);
	cr_expect(strstr(out, " FAILED\n#\n# Collective test concluded"), "%s", out);
	free(out);
	unsetenv("NCCL_TESTS_MIN_BW");
}
