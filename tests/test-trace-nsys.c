/* test-trace-nsys: `ddlsim calib-trace` on Nsight Systems SQLite exports
 * (models/nsys.h).
 *
 * - a real export (tests/data/nsys-real/README.md: hpcgroup/pipit's
 *   saxpy on an A100, Nsight Systems 2022.2) read: its GPU, its kernels
 *   matched to their launches on their thread, nothing to price in it;
 * - the round trip: quickstart's per-kernel table (`ddlsim run --format
 *   kineto`) written here in the nsys schema (the NVTX messages as
 *   PyTorch's emit_nvtx prints them, the launches, the kernels, the GPU),
 *   read back by calib-trace, the scenario rerun on that profile: every
 *   GEMM costs what it cost in the trace, to 1 %;
 * - a hand-built export: kernels to the innermost op of interest on the
 *   launch's thread, the backward's thread, the warm-up step, NCCL, TF32;
 * - bad input: not SQLite, not an export, a table missing, a truncated
 *   file, a kernel ending before it starts, no --dtype, a .nsys-rep, a
 *   FIFO; a missing file, a directory, an empty file said as such before
 *   --dtype's use; an empty .sqlite said to be no SQLite, not bad JSON. */
#include <criterion/criterion.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kineto.h"
#include "nsys.h"
#include "testutil.h"
#include "trace_calib.h"

#define SAXPY "tests/data/nsys-real/a100-saxpy-mpi-nsys2022.sqlite"
#define PID 4242LL
#define GTID(tid) (PID << 24 | (tid))

/* The tables as Nsight Systems 2024.5 declares them (the columns read,
 * and those a writer must fill: NOT NULL), tests/data/nsys-real. */
static const char schema[] =
	"CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,"
	" deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL, streamId INTEGER NOT NULL,"
	" correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,"
	" shortName INTEGER NOT NULL, registersPerThread INTEGER NOT NULL, gridX INTEGER NOT NULL,"
	" gridY INTEGER NOT NULL, gridZ INTEGER NOT NULL, blockX INTEGER NOT NULL,"
	" blockY INTEGER NOT NULL, blockZ INTEGER NOT NULL);"
	"CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL,"
	" eventClass INTEGER NOT NULL, globalTid INTEGER, correlationId INTEGER,"
	" nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL);"
	"CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL,"
	" rangeId INTEGER, category INTEGER, color INTEGER, text TEXT, globalTid INTEGER,"
	" endGlobalTid INTEGER, textId INTEGER, domainId INTEGER);"
	"CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT,"
	" totalMemory INTEGER, smCount INTEGER, computeMajor INTEGER, computeMinor INTEGER);"
	"CREATE TABLE ThreadNames (nameId INTEGER NOT NULL, priority INTEGER, globalTid INTEGER);";

struct w {
	sqlite3 *db;
	int nstr;
};

static void exec(struct w *w, const char *sql)
{
	char *err = NULL;
	cr_assert_eq(sqlite3_exec(w->db, sql, NULL, NULL, &err), SQLITE_OK, "%s: %s", sql, err);
}

static struct w open_w(const char *path, const char *gpu, long long hbm, int sms, int major, int minor)
{
	struct w w = { 0 };
	unlink(path);
	cr_assert_eq(sqlite3_open(path, &w.db), SQLITE_OK);
	exec(&w, schema);
	exec(&w, "BEGIN");
	char *sql = sqlite3_mprintf("INSERT INTO TARGET_INFO_GPU VALUES (0, 0, %Q, %lld, %d, %d, %d)", gpu, hbm,
				    sms, major, minor);
	exec(&w, sql);
	sqlite3_free(sql);
	return w;
}

static int str_id(struct w *w, const char *s)
{
	char *sql = sqlite3_mprintf("INSERT INTO StringIds VALUES (%d, %Q)", ++w->nstr, s);
	exec(w, sql);
	sqlite3_free(sql);
	return w->nstr;
}

static void nvtx(struct w *w, long long s, long long e, int tid, const char *text)
{
	char *sql = sqlite3_mprintf("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) "
				    "VALUES (%lld, %lld, 59, %Q, %lld)", s, e, text, GTID(tid));
	exec(w, sql);
	sqlite3_free(sql);
}

/* A launch on thread tid at t_ns and its kernel on the GPU. */
static void launch(struct w *w, long long t_ns, int tid, int corr, const char *kernel, long long ks, long long ke)
{
	int name = str_id(w, kernel), api = str_id(w, "cudaLaunchKernel_v7000");
	char *sql = sqlite3_mprintf("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (%lld, %lld, 1, %lld, %d, %d, 0);"
				    "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (%lld, %lld, 0, 1, 7, %d, %lld, %d, "
				    "%d, 32, 108, 1, 1, 256, 1, 1)",
				    t_ns, t_ns + 2000, GTID(tid), corr, api, ks, ke, corr, PID << 24, name, name);
	exec(w, sql);
	sqlite3_free(sql);
}

static void close_w(struct w *w)
{
	exec(w, "COMMIT");
	sqlite3_close(w->db);
}

/* "[[8, 4096], [4096, 4096]]" as PyTorch's shapesToStr prints sizes. */
static void sizes_str(json_t *dims, char *out, size_t n)
{
	size_t i, j, at = 0;
	json_t *a, *x;
	at += (size_t)snprintf(out + at, n - at, "[");
	json_array_foreach(dims, i, a) {
		at += (size_t)snprintf(out + at, n - at, "%s[", i ? ", " : "");
		json_array_foreach(a, j, x)
			at += (size_t)snprintf(out + at, n - at, "%s%lld", j ? ", " : "",
					       (long long)json_integer_value(x));
		at += (size_t)snprintf(out + at, n - at, "]");
	}
	snprintf(out + at, n - at, "]");
}

static long long ns(json_t *e, const char *key)
{
	return llround(json_number_value(json_object_get(e, key)) * 1e3);
}

/* The Kineto trace at kin (report_kineto.c's) written as an nsys export. */
static void kineto_to_nsys(const char *kin, const char *out)
{
	json_error_t err;
	json_t *root = json_load_file(kin, 0, &err), *e, *dp;
	size_t i;
	cr_assert_not_null(root, "%s: %s", kin, err.text);
	dp = json_array_get(json_object_get(root, "deviceProperties"), 0);
	struct w w = open_w(out, json_string_value(json_object_get(dp, "name")),
			    (long long)json_number_value(json_object_get(dp, "totalGlobalMem")),
			    (int)json_integer_value(json_object_get(dp, "numSms")),
			    (int)json_integer_value(json_object_get(dp, "computeMajor")),
			    (int)json_integer_value(json_object_get(dp, "computeMinor")));
	json_array_foreach(json_object_get(root, "traceEvents"), i, e) {
		const char *cat = json_string_value(json_object_get(e, "cat"));
		const char *name = json_string_value(json_object_get(e, "name"));
		json_t *args = json_object_get(e, "args");
		long long s = ns(e, "ts"), d = ns(e, "dur");
		int corr = (int)json_integer_value(json_object_get(args, "correlation"));
		char text[1024], sz[768];
		if (!strcmp(cat, "user_annotation")) {
			nvtx(&w, s, s + d, 1, name);
		} else if (!strcmp(cat, "cpu_op")) {
			json_t *dims = json_object_get(args, "Input Dims");
			if (dims) {
				sizes_str(dims, sz, sizeof(sz));
				snprintf(text, sizeof(text), "%s, seq = %zu, op_id = %zu, sizes = %s, input_op_ids = []",
					 name, i, i, sz);
			} else {
				snprintf(text, sizeof(text), "%s, seq = %zu, op_id = %zu", name, i, i);
			}
			nvtx(&w, s, s + d, 1, text);
		} else if (!strcmp(cat, "kernel")) {
			/* its launch was the event before it (report_kineto.c) */
			json_t *l = json_array_get(json_object_get(root, "traceEvents"), i - 1);
			cr_assert_eq(json_integer_value(json_object_get(json_object_get(l, "args"), "correlation")), corr);
			launch(&w, ns(l, "ts"), 1, corr, name, s, s + d);
		}
	}
	close_w(&w);
	json_decref(root);
}

static json_t *ops_of(json_t *report)
{
	json_t *a = json_object_get(json_object_get(report, "cost_model"), "ops_per_microbatch");
	cr_assert(json_is_array(a));
	return a;
}

Test(trace_nsys, roundtrip_every_gemm_as_traced)
{
	char *dir = tmp_dir(), args[8192], kin[2048], db[2048], pp[2048], rdir[2048];
	char *err = NULL, *out = NULL;

	snprintf(args, sizeof(args), "run %s --out %s/a --format json,kineto --quiet",
		 src_path("scenarios/quickstart.json"), dir);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	free(err);
	snprintf(kin, sizeof(kin), "%s/a/kineto.pt.trace.json", dir);
	snprintf(db, sizeof(db), "%s/report.sqlite", dir);
	kineto_to_nsys(kin, db);
	snprintf(pp, sizeof(pp), "%s/p.json", dir);
	snprintf(args, sizeof(args), "calib-trace %s -o %s --dtype bf16", db, pp);
	cr_assert_eq(run_ddlsim(args, &out, &err), 0, "%s", err);
	/* quickstart's 15 GEMM calls (10 shapes); attention and RMSNorm not read */
	cr_expect(strstr(out, "15 priced (15 kernels) into 10 entries, 0 in the warm-up step"), "%s", out);
	cr_expect(strstr(out, "host issue (") && strstr(out, "launches, median"), "%s", out);
	free(out);
	free(err);

	snprintf(rdir, sizeof(rdir), "%s/a", dir);
	json_t *ra = load_report(rdir), *rb = report_on_profile(pp);
	cr_assert(ra && rb);
	json_t *a = ops_of(ra), *b = ops_of(rb);
	cr_assert_eq(json_array_size(a), json_array_size(b));
	int profiled = 0, gemms = 0;
	for (size_t i = 0; i < json_array_size(a); i++) {
		json_t *x = json_array_get(a, i), *y = json_array_get(b, i);
		const char *name = json_string_value(json_object_get(y, "op"));
		double ta = json_number_value(json_object_get(x, "time_s"));
		double tb = json_number_value(json_object_get(y, "time_s"));
		bool prof = !strcmp(json_string_value(json_object_get(y, "source")), "profile");
		bool gemm = json_number_value(json_object_get(x, "n")) > 0 && strncmp(name, "flash_attn", 10);
		gemms += gemm;
		cr_expect(gemm == prof, "%s: %s", name, gemm ? "a GEMM not priced from the export's profile"
							  : "not a GEMM, yet priced from the profile");
		if (!prof)
			continue;
		profiled++;
		cr_expect(fabs(tb / ta - 1) <= 0.01, "%s: %.6g s in the export, %.6g s from its profile "
			  "(%+.3f %%)", name, ta, tb, 100 * (tb / ta - 1));
	}
	cr_expect_eq(gemms, 15);
	cr_expect_eq(profiled, 15);
	json_decref(ra);
	json_decref(rb);
	free(dir);
}

static struct kineto_trace *load(const char *path, const char *type, char **msgs)
{
	struct diag d;
	diag_init(&d, NULL);
	struct kineto_trace *t = nsys_load(path, trace_calib_gemm_ops, type, NULL, &d);
	*msgs = strdup(diag_text(&d));
	diag_finish(&d);
	return t;
}

Test(trace_nsys, real_saxpy_export_gpu_and_launches)
{
	char *msgs;
	struct kineto_trace *t = load(src_path(SAXPY), "float", &msgs);
	cr_assert_not_null(t, "%s", msgs);
	cr_expect(t->has_device);
	cr_expect_str_eq(t->gpu_name, "NVIDIA A100-SXM4-40GB");
	cr_expect_eq(t->sm_count, 108);
	cr_expect_eq(t->cc_major, 8);
	cr_expect_eq(t->cc_minor, 0);
	cr_expect_eq(t->hbm_bytes, 42297524224.0);
	/* 5 saxpy kernels, each launched inside an NVTX range "saxpy" of the
	 * MPI rank's thread: all found their launch (same process's
	 * correlationId), none an op of interest */
	cr_expect_eq(t->nkernels, 5);
	cr_expect_eq(t->nkernels_orphan, 0);
	cr_expect_eq(t->nkernels_attributed, 0);
	cr_expect_eq(t->nops, 0);
	cr_expect_eq(t->ncomm, 0);
	kineto_destroy(t);
	free(msgs);

	char *dir = tmp_dir(), args[4096], *out = NULL, *err = NULL;
	snprintf(args, sizeof(args), "calib-trace %s -o %s/p.json --dtype fp32", src_path(SAXPY), dir);
	cr_expect_eq(run_ddlsim(args, &out, &err), 3);
	cr_expect(strstr(err, "/NVTX_EVENTS: error: no GEMM priced") && strstr(err, "emit_nvtx"), "%s", err);
	cr_expect(strstr(out, "thread 1230493 (MPI Rank 0): 5 launches"), "%s", out);
	free(out);
	free(err);
	free(dir);
}

/* Step 1 (warm-up) and step 2 each: aten::linear > aten::addmm, two
 * kernels on the main thread (tid 1); aten::mm on autograd's thread (tid
 * 2); an NCCL kernel launched outside every range (tid 3). */
static void handmade(const char *path, bool with_nvtx)
{
	struct w w = open_w(path, "NVIDIA H100 80GB HBM3", 85520809984LL, 132, 9, 0);
	int corr = 10;
	char *sql = sqlite3_mprintf("INSERT INTO ThreadNames VALUES (%d, 10, %lld)", str_id(&w, "python"),
				    GTID(1));
	exec(&w, sql);
	sqlite3_free(sql);
	if (!with_nvtx)
		exec(&w, "DROP TABLE NVTX_EVENTS");
	for (int step = 1; step <= 2; step++) {
		long long t0 = step * 1000000LL, kt = step == 1 ? 900000 : 100000;
		if (with_nvtx) {
			nvtx(&w, t0, t0 + 900000, 1, step == 1 ? "ProfilerStep#1" : "ProfilerStep#2");
			nvtx(&w, t0 + 1000, t0 + 50000, 1, "aten::linear, seq = 3, op_id = 7, sizes = [[8, 4096], "
			     "[1024, 4096], [1024]], input_op_ids = []");
			nvtx(&w, t0 + 2000, t0 + 40000, 1, "aten::addmm, seq = 3, op_id = 8, sizes = [[1024], "
			     "[8, 4096], [4096, 1024], [], []], input_op_ids = []");
			nvtx(&w, t0 + 60000, t0 + 90000, 2, "aten::mm, seq = 3, op_id = 9, sizes = [[1024, 8], "
			     "[8, 4096]]");
		}
		launch(&w, t0 + 3000, 1, corr++, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n", t0 + 100000,
		       t0 + 100000 + kt);
		launch(&w, t0 + 4000, 1, corr++, "splitKreduce_kernel", t0 + 300000, t0 + 300000 + kt / 2);
		launch(&w, t0 + 61000, 2, corr++, "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n", t0 + 500000,
		       t0 + 520000);
		launch(&w, t0 + 95000, 3, corr++, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgs)",
		       t0 + 600000, t0 + 700000);
	}
	close_w(&w);
}

Test(trace_nsys, handmade_export_attribution)
{
	char *dir = tmp_dir(), path[2048], *msgs;
	snprintf(path, sizeof(path), "%s/h.sqlite", dir);
	handmade(path, true);
	struct kineto_trace *t = load(path, "c10::BFloat16", &msgs);
	cr_assert_not_null(t, "%s", msgs);
	cr_expect_str_eq(t->gpu_name, "NVIDIA H100 80GB HBM3");
	cr_expect_eq(t->nkernels, 8);
	cr_expect_eq(t->nkernels_orphan, 2);             /* the NCCL kernels: launched under no range */
	cr_expect_eq(t->nkernels_attributed, 6);
	cr_expect_eq(t->nsteps, 2);
	cr_expect_eq(t->ncomm, 2);
	cr_expect_str_eq(t->comm[0].coll, "all_reduce");
	cr_assert_eq(t->nops, 6);
	cr_expect_str_eq(t->ops[1].name, "aten::addmm");
	cr_expect(t->ops[0].wrapper);                    /* linear: its kernels are addmm's */
	cr_expect_eq(t->ops[1].nkernels, 2);
	cr_expect(fabs(t->ops[4].kernel_s - 150e-6) < 1e-12, "%g", t->ops[4].kernel_s);
	cr_expect(t->ops[2].tf32);                       /* autograd thread's mm */
	cr_expect_str_eq(t->ops[1].jpath, "/NVTX_EVENTS/3");
	struct trace_calib_opts o = { 0 };
	struct trace_calib *tc = trace_calib_build(t, &o);
	cr_expect(tc->dropped_first);
	cr_expect_eq(tc->calls_warmup, 3);
	cr_expect_eq(tc->calls_priced, 2);
	cr_expect_eq(tc->calls_wrapper, 1);
	cr_assert_eq(tc->ne, 2);
	/* addmm: [8, 4096] x [4096, 1024] bf16, 100 + 50 us; mm bf16 too
	 * (--dtype types every GEMM; its kernel's TF32 name only flags it) */
	cr_expect(tc->e[0].m == 8 && tc->e[0].n == 1024 && tc->e[0].k == 4096 && tc->e[0].dtype == DTYPE_BF16);
	cr_expect(fabs(tc->e[0].time_s - 150e-6) < 1e-12);
	cr_expect(tc->e[1].m == 1024 && tc->e[1].n == 4096 && tc->e[1].k == 8 && tc->e[1].dtype == DTYPE_BF16);
	trace_calib_destroy(tc);
	kineto_destroy(t);
	free(msgs);

	/* the host: thread 1 launches at 3 and 4 us into each step (1 ms
	 * apart): gaps 1, 999, 1 us; threads 2 and 3 once a step */
	char args[4096], *out = NULL, *err = NULL;
	snprintf(args, sizeof(args), "calib-trace %s -o %s/h.json --dtype bf16", path, dir);
	cr_assert_eq(run_ddlsim(args, &out, &err), 0, "%s", err);
	cr_expect(strstr(out, "  thread 1 (python): 4 launches, median 1.00 us apart\n  thread 2 (?): 2 "
			 "launches, median 1000.00 us apart\n"), "%s", out);
	cr_expect(strstr(out, "2 priced (3 kernels) into 2 entries, 3 in the warm-up step, 1 wrappers"), "%s", out);
	free(out);
	free(err);
	free(dir);
}

/* An export whose every thread launched one kernel: no gap, so no host
 * issue summary (not its heading alone). */
Test(trace_nsys, host_summary_needs_two_launches_on_a_thread)
{
	char *dir = tmp_dir(), path[2048], args[4096], *out = NULL, *err = NULL;
	snprintf(path, sizeof(path), "%s/one.sqlite", dir);
	struct w w = open_w(path, "NVIDIA H100 80GB HBM3", 85520809984LL, 132, 9, 0);
	nvtx(&w, 1000, 9000, 1, "aten::mm, seq = 3, op_id = 9, sizes = [[1024, 8], [8, 4096]]");
	launch(&w, 2000, 1, 10, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n", 20000, 30000);
	launch(&w, 5000, 2, 11, "vectorized_elementwise_kernel", 40000, 41000);
	close_w(&w);
	snprintf(args, sizeof(args), "calib-trace %s -o %s/one.json --dtype bf16", path, dir);
	cr_assert_eq(run_ddlsim(args, &out, &err), 0, "%s", err);
	cr_expect(strstr(out, "1 priced (1 kernels) into 1 entries"), "%s", out);
	cr_expect_null(strstr(out, "host issue"), "%s", out);
	free(out);
	free(err);
	free(dir);
}

/* A relative name that begins "file:" is the file of that name, not an
 * SQLite URI for another ("file:h.sqlite" would open h.sqlite, here no
 * export). */
Test(trace_nsys, file_colon_name_is_no_uri)
{
	char *dir = tmp_dir(), *msgs;
	cr_assert_eq(chdir(dir), 0);
	handmade("./file:h.sqlite", true);      /* "./": the writer's SQLite takes URIs too */
	sqlite3 *db;
	cr_assert_eq(sqlite3_open("h.sqlite", &db), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db, "CREATE TABLE t (x INTEGER)", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	struct kineto_trace *t = load("file:h.sqlite", "c10::BFloat16", &msgs);
	cr_expect_not_null(t, "%s", msgs);
	cr_expect_eq(t ? t->nkernels : -1, 8);
	kineto_destroy(t);
	free(msgs);
	free(dir);
}

/* An export whose full path is longer than SQLite's file layer opens
 * (512 bytes) is refused with that said, not "unable to open" alone. */
Test(trace_nsys, path_longer_than_sqlite_opens_said_so)
{
	char *dir = tmp_dir(), p[2048], q[2048], *msgs;
	size_t n = (size_t)snprintf(p, sizeof(p), "%s", dir);
	for (int i = 0; i < 3; i++) {
		n += (size_t)snprintf(p + n, sizeof(p) - n, "/%0200d", i);
		cr_assert_eq(mkdir(p, 0700), 0);
	}
	snprintf(p + n, sizeof(p) - n, "/h.sqlite");
	snprintf(q, sizeof(q), "%s/h.sqlite", dir);
	handmade(q, true);
	cr_assert_eq(rename(q, p), 0);
	struct kineto_trace *t = load(p, "c10::BFloat16", &msgs);
	cr_expect_null(t);
	cr_expect(strstr(msgs, "error: cannot open as SQLite: unable to open database file (its full path has "),
		  "%s", msgs);
	cr_expect(strstr(msgs, "bytes, over the 512 SQLite's file layer takes: move it to a shorter path)"),
		  "%s", msgs);
	kineto_destroy(t);
	free(msgs);
	free(dir);
}

/* calib-trace on path exits rc with want in its stderr. */
static void refused(const char *path, const char *extra, int rc, const char *want)
{
	char args[4096], *err = NULL;
	snprintf(args, sizeof(args), "calib-trace %s -o %s.json %s", path, path, extra);
	cr_expect_eq(run_ddlsim(args, NULL, &err), rc, "%s: %s", path, err);
	cr_expect(strstr(err, want), "%s: expected '%s' in: %s", path, want, err);
	free(err);
}

Test(trace_nsys, bad_input_is_said_with_file_and_what_was_expected)
{
	char *dir = tmp_dir(), p[2048], q[2048];

	/* not an export: another SQLite database */
	snprintf(p, sizeof(p), "%s/other.sqlite", dir);
	sqlite3 *db;
	cr_assert_eq(sqlite3_open(p, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db, "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)", NULL, NULL, NULL),
		     SQLITE_OK);
	sqlite3_close(db);
	refused(p, "--dtype bf16", 3, "other.sqlite: /StringIds: error: no such table: an Nsight Systems "
		"export holding the names expected");
	/* every table missing said, not only the first */
	refused(p, "--dtype bf16", 3, "other.sqlite: /NVTX_EVENTS: error: no such table: an Nsight Systems "
		"export holding PyTorch's op ranges");

	snprintf(p, sizeof(p), "%s/nonvtx.sqlite", dir);
	handmade(p, false);
	refused(p, "--dtype bf16", 3, "nonvtx.sqlite: /NVTX_EVENTS: error: no such table");
	refused(p, "", 2, "carry shapes but no dtypes: name the GEMMs' with --dtype");
	refused(p, "--dtype int8", 2, "expected fp32, tf32, fp16, bf16 or fp8");

	/* truncated: the first half of a good export */
	snprintf(q, sizeof(q), "%s/good.sqlite", dir);
	handmade(q, true);
	FILE *f = fopen(q, "rb");
	cr_assert_not_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	char *buf = malloc((size_t)n);
	rewind(f);
	cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	snprintf(p, sizeof(p), "%s/trunc.sqlite", dir);
	f = fopen(p, "wb");
	fwrite(buf, 1, (size_t)n / 2, f);
	fclose(f);
	free(buf);
	refused(p, "--dtype bf16", 3, "trunc.sqlite: error: cannot read its tables: database disk image "
		"is malformed");
	refused(p, "--dtype bf16", 3, "(a truncated or damaged export?)");

	/* a kernel that ends before it starts */
	cr_assert_eq(sqlite3_open(q, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db, "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start - 5 WHERE rowid = 3",
				  NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	refused(q, "--dtype bf16", 3, "good.sqlite: /CUPTI_ACTIVITY_KIND_KERNEL/3/end: error: ends at");

	/* a report not exported, and --dtype on a Kineto trace */
	snprintf(p, sizeof(p), "%s/r.nsys-rep", dir);
	free(write_file(dir, "r.nsys-rep", "not an export"));
	refused(p, "--dtype bf16", 3, "export it first with `nsys export --type sqlite");
	snprintf(p, sizeof(p), "%s/t.json", dir);
	free(write_file(dir, "t.json", "{\"traceEvents\": []}"));
	refused(p, "--dtype bf16", 2, "for an Nsight Systems export only");

	/* with --dtype, what is wrong with the file is said before --dtype's
	 * use: a missing file, a directory, an empty file (not SQLite) */
	snprintf(q, sizeof(q), "%s/missing.sqlite", dir);
	refused(q, "--dtype bf16", 3, "missing.sqlite: error: cannot open '");
	refused(dir, "--dtype bf16", 3, "' is a directory, expected a regular file");
	free(write_file(dir, "empty.json", ""));
	snprintf(q, sizeof(q), "%s/empty.json", dir);
	refused(q, "--dtype bf16", 2, "for an Nsight Systems export only, and '");
	refused(q, "--dtype bf16", 2, "empty.json' is no SQLite file");
	/* an export named so but empty or damaged: said so, not read as JSON */
	free(write_file(dir, "empty.sqlite", ""));
	snprintf(q, sizeof(q), "%s/empty.sqlite", dir);
	refused(q, "", 3, "empty.sqlite: error: no SQLite database (expected the header \"SQLite format 3\"): "
		"an empty or damaged Nsight Systems export?");
	refused(q, "--dtype bf16", 3, "empty.sqlite: error: no SQLite database");

	/* a FIFO is not waited on to tell the formats apart */
	snprintf(q, sizeof(q), "%s/fifo", dir);
	cr_assert_eq(mkfifo(q, 0600), 0);
	refused(q, "", 3, "is a FIFO, expected a regular file");

	struct diag d;
	diag_init(&d, NULL);
	cr_expect_null(nsys_load(p, trace_calib_gemm_ops, "float", NULL, &d));
	cr_expect(strstr(diag_text(&d), "t.json: error: not an Nsight Systems SQLite export"), "%s", diag_text(&d));
	diag_finish(&d);
	diag_init(&d, NULL);
	cr_expect_null(nsys_load(dir, trace_calib_gemm_ops, "float", NULL, &d));
	cr_expect(strstr(diag_text(&d), "' is a directory, expected a regular file"), "%s", diag_text(&d));
	diag_finish(&d);
	free(dir);
}
