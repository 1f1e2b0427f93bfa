/* nsys: an Nsight Systems SQLite export read as a PyTorch profiler trace
 * (see nsys.h for the schema and the choices).
 *
 * The export is opened read-only; its NVTX ranges, CUDA launches and
 * kernels are written, one row at a time, as the Kineto events kineto.c
 * reads (kineto_feed()), so the attribution (innermost op of interest
 * around the launch on its thread), the warm-up step and the NCCL
 * summary are Kineto's. Times go from ns to us as Kineto prints them. */
#include "nsys.h"
#include "nsys-private.h"
#include "xalloc.h"

#include <jansson.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "infile.h"

/* ENUM_NSYS_EVENT_TYPE: NvtxPushPopRange, what emit_nvtx and
 * torch.cuda.nvtx.range push; start/end ranges (60) may end on another
 * thread and need not nest, so they are left out */
#define NVTX_PUSHPOP 59

static const struct {
	const char *table, *what;
} required[] = {
	{ "StringIds", "the names" },
	{ "CUPTI_ACTIVITY_KIND_KERNEL", "the GPU kernels (record with nsys profile -t cuda,nvtx)" },
	{ "CUPTI_ACTIVITY_KIND_RUNTIME", "the CUDA launches (record with nsys profile -t cuda,nvtx)" },
	{ "NVTX_EVENTS", "PyTorch's op ranges (record with nsys profile -t cuda,nvtx and the job "
	  "under torch.autograd.profiler.emit_nvtx(record_shapes=True))" },
};

struct nsys {
	const char *path;
	sqlite3 *db;
	const char *const *interest;
	const char *torch_type;
	struct diag *d;
};

int nsys_sniff(const char *path, char *why, size_t n)
{
	char head[16];
	/* no size limit: SQLite reads the export a page at a time */
	FILE *f = infile_open_max(path, LONG_MAX, why, n);
	if (!f)
		return -1;
	bool yes = fread(head, 1, sizeof(head), f) == sizeof(head) &&
		   memcmp(head, "SQLite format 3", sizeof(head)) == 0;
	fclose(f);
	return yes;
}

static bool has_table(struct nsys *x, const char *name)
{
	sqlite3_stmt *st;
	bool yes = false;
	if (sqlite3_prepare_v2(x->db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", -1,
			       &st, NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	yes = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return yes;
}

/* Prepare sql on table (for the error), or report why not. */
static sqlite3_stmt *prepare(struct nsys *x, const char *table, const char *sql)
{
	sqlite3_stmt *st = NULL;
	if (sqlite3_prepare_v2(x->db, sql, -1, &st, NULL) == SQLITE_OK)
		return st;
	diag_err(x->d, x->path, table, "cannot read it as an Nsight Systems export holds it (%s; the "
		 "columns of nsys.h expected, as Nsight Systems 2022.2 to 2025.3 write them)",
		 sqlite3_errmsg(x->db));
	sqlite3_finalize(st);
	return NULL;
}

/* Step st to its end, calling row(x, st, ctx) on each row; row returns
 * non-zero to stop. Returns 0, or -1 after reporting. */
static int each_row(struct nsys *x, const char *table, sqlite3_stmt *st,
		    int (*row)(struct nsys *x, sqlite3_stmt *st, void *ctx), void *ctx)
{
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if (row(x, st, ctx)) {
			sqlite3_finalize(st);
			return -1;
		}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return diag_err(x->d, x->path, table, "cannot read its rows: %s (a truncated or damaged "
				"export?)", sqlite3_errmsg(x->db));
	return 0;
}

static long long pid_of(long long gtid)
{
	return (gtid >> 24) & 0xFFFFFF;
}

/* A launch's or kernel's correlation made unique across processes. */
static long long corr_key(long long gtid, long long corr)
{
	return pid_of(gtid) << 32 | (corr & 0xFFFFFFFFLL);
}

static json_t *xevent(const char *cat, const char *name, double pid, double tid, long long start_ns,
		      long long end_ns, json_t *args)
{
	/* the name as the export holds it (SQLite's text, UTF-8 unchecked):
	 * a kernel's is only searched (NCCL, TF32), an op's printed only
	 * when it is one of interest, whose names are ASCII */
	return json_pack("{s:s, s:s, s:o, s:f, s:f, s:f, s:f, s:o}", "ph", "X", "cat", cat,
			 "name", json_string_nocheck(name),
			 "pid", pid, "tid", tid, "ts", (double)start_ns * 1e-3,
			 "dur", (double)(end_ns - start_ns) * 1e-3, "args", args ? args : json_object());
}

static int bad_span(struct nsys *x, const char *table, long long rowid, long long s, long long e)
{
	char jp[64];
	snprintf(jp, sizeof(jp), "/%s/%lld/end", table, rowid);
	return diag_err(x->d, x->path, jp, "ends at %lld ns, before its start at %lld ns (a damaged "
			"export)", e, s);
}

/* "Input Dims" from an emit_nvtx message's "sizes = [[..], ..]", with
 * "Input type" (a tensor: torch_type, else "Scalar"); NULL without. */
static json_t *op_args(const char *text, const char *torch_type)
{
	const char *p = strstr(text, ", sizes = [");
	json_error_t err;
	if (!p)
		return NULL;
	json_t *dims = json_loads(p + 10, JSON_DISABLE_EOF_CHECK, &err), *v;
	size_t i;
	if (!json_is_array(dims)) {
		json_decref(dims);
		return NULL;
	}
	json_t *ty = json_array();
	json_array_foreach(dims, i, v)
		json_array_append_new(ty, json_string(json_array_size(v) && torch_type ? torch_type : "Scalar"));
	return json_pack("{s:o, s:o}", "Input Dims", dims, "Input type", ty);
}

struct feed {
	void (*on_event)(void *sctx, json_t *e, int i);
	void *sctx;
};

static int nvtx_row(struct nsys *x, sqlite3_stmt *st, void *ctx)
{
	struct feed *f = ctx;
	long long rowid = sqlite3_column_int64(st, 0), s = sqlite3_column_int64(st, 1);
	long long e = sqlite3_column_int64(st, 2), gtid = sqlite3_column_int64(st, 3);
	const char *text = (const char *)sqlite3_column_text(st, 4);
	char name[256];
	if (!text)
		return 0;
	if (e < s)
		return bad_span(x, "NVTX_EVENTS", rowid, s, e);
	if (rowid > 0x7fffffff) {
		diag_err(x->d, x->path, "/NVTX_EVENTS", "rowid %lld: more NVTX events than this reader "
			 "indexes (2^31)", rowid);
		return -1;
	}
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(text, ","), text);
	bool step = strncmp(name, "ProfilerStep#", 13) == 0;
	json_t *args = step ? NULL : op_args(text, x->torch_type);
	json_t *ev = xevent(step ? "user_annotation" : "cpu_op", name, (double)pid_of(gtid),
			    (double)(gtid & 0xFFFFFF), s, e, args);
	f->on_event(f->sctx, ev, (int)rowid);
	json_decref(ev);
	return 0;
}

static int runtime_row(struct nsys *x, sqlite3_stmt *st, void *ctx)
{
	struct feed *f = ctx;
	long long s = sqlite3_column_int64(st, 0), gtid = sqlite3_column_int64(st, 1);
	long long corr = sqlite3_column_int64(st, 2);
	(void)x;
	json_t *ev = xevent("cuda_runtime", "cudaLaunchKernel", (double)pid_of(gtid), (double)(gtid & 0xFFFFFF),
			    s, s, json_pack("{s:I}", "correlation", (json_int_t)corr_key(gtid, corr)));
	f->on_event(f->sctx, ev, 0);
	json_decref(ev);
	return 0;
}

static int kernel_row(struct nsys *x, sqlite3_stmt *st, void *ctx)
{
	struct feed *f = ctx;
	long long rowid = sqlite3_column_int64(st, 0), s = sqlite3_column_int64(st, 1);
	long long e = sqlite3_column_int64(st, 2), dev = sqlite3_column_int64(st, 3);
	long long stream = sqlite3_column_int64(st, 4), corr = sqlite3_column_int64(st, 5);
	long long gpid = sqlite3_column_int64(st, 6);
	const char *name = (const char *)sqlite3_column_text(st, 7);
	if (e < s)
		return bad_span(x, "CUPTI_ACTIVITY_KIND_KERNEL", rowid, s, e);
	json_t *args = json_pack("{s:I, s:I, s:I}", "correlation", (json_int_t)corr_key(gpid, corr),
				 "device", (json_int_t)dev, "stream", (json_int_t)stream);
	json_t *ev = xevent("kernel", name ? name : "", (double)dev, (double)stream, s, e, args);
	f->on_event(f->sctx, ev, 0);
	json_decref(ev);
	return 0;
}

static int feed_all(void *ctx, void (*on_event)(void *sctx, json_t *e, int i), void *sctx)
{
	struct nsys *x = ctx;
	struct feed f = { on_event, sctx };
	sqlite3_stmt *st;
	char sql[512];
	snprintf(sql, sizeof(sql),
		 "SELECT n.rowid, n.start, n.end, n.globalTid, COALESCE(n.text, s.value) FROM NVTX_EVENTS n "
		 "LEFT JOIN StringIds s ON s.id = n.textId WHERE n.eventType = %d AND n.end IS NOT NULL "
		 "ORDER BY n.rowid", NVTX_PUSHPOP);
	if (!(st = prepare(x, "/NVTX_EVENTS", sql)) || each_row(x, "/NVTX_EVENTS", st, nvtx_row, &f))
		return -1;
	if (!(st = prepare(x, "/CUPTI_ACTIVITY_KIND_RUNTIME", "SELECT start, globalTid, correlationId FROM "
			   "CUPTI_ACTIVITY_KIND_RUNTIME WHERE correlationId IS NOT NULL AND correlationId != 0")) ||
	    each_row(x, "/CUPTI_ACTIVITY_KIND_RUNTIME", st, runtime_row, &f))
		return -1;
	if (!(st = prepare(x, "/CUPTI_ACTIVITY_KIND_KERNEL", "SELECT k.rowid, k.start, k.end, k.deviceId, "
			   "k.streamId, k.correlationId, k.globalPid, COALESCE(d.value, s.value) FROM "
			   "CUPTI_ACTIVITY_KIND_KERNEL k LEFT JOIN StringIds d ON d.id = k.demangledName "
			   "LEFT JOIN StringIds s ON s.id = k.shortName ORDER BY k.start")))
		return -1;
	return each_row(x, "/CUPTI_ACTIVITY_KIND_KERNEL", st, kernel_row, &f);
}

static int gpu_row(struct nsys *x, sqlite3_stmt *st, void *ctx)
{
	json_t *dp = ctx;
	const char *name = (const char *)sqlite3_column_text(st, 1);
	(void)x;
	if (!name)
		return 0;
	json_array_append_new(dp, json_pack("{s:I, s:s, s:I, s:I, s:I, s:I}",
					    "id", (json_int_t)sqlite3_column_int64(st, 0), "name", name,
					    "totalGlobalMem", (json_int_t)sqlite3_column_int64(st, 2),
					    "numSms", (json_int_t)sqlite3_column_int64(st, 3),
					    "computeMajor", (json_int_t)sqlite3_column_int64(st, 4),
					    "computeMinor", (json_int_t)sqlite3_column_int64(st, 5)));
	return 0;
}

/* The top level Kineto would write: deviceProperties from TARGET_INFO_GPU
 * (none without it: the caller's --gpu then names the GPU). */
static json_t *root_of(struct nsys *x)
{
	json_t *root = json_object(), *dp = json_array();
	sqlite3_stmt *st;
	if (has_table(x, "TARGET_INFO_GPU")) {
		if (!(st = prepare(x, "/TARGET_INFO_GPU", "SELECT id, name, totalMemory, smCount, computeMajor, "
				   "computeMinor FROM TARGET_INFO_GPU ORDER BY rowid")) ||
		    each_row(x, "/TARGET_INFO_GPU", st, gpu_row, dp)) {
			json_decref(dp);
			json_decref(root);
			return NULL;
		}
	}
	if (json_array_size(dp))
		json_object_set_new(root, "deviceProperties", dp);
	else
		json_decref(dp);
	return root;
}

/* Into why[n]: why SQLite cannot open path where its full path is longer
 * than the default file layer takes (the unix VFS's mxPathname, 512
 * bytes), else "". */
static void too_long(const char *path, char *why, size_t n)
{
	sqlite3_vfs *vfs = sqlite3_vfs_find(NULL);
	char *full = realpath(path, NULL);
	size_t len = full ? strlen(full) : 0;
	free(full);
	why[0] = 0;
	if (vfs && len >= (size_t)vfs->mxPathname)
		snprintf(why, n, " (its full path has %zu bytes, over the %d SQLite's file layer takes: "
			 "move it to a shorter path)", len, vfs->mxPathname);
}

static int open_db(struct nsys *x)
{
	sqlite3_stmt *st = NULL;
	char why[1200];
	int kind = nsys_sniff(x->path, why, sizeof(why));
	if (kind < 0)
		return diag_err(x->d, x->path, "", "%s", why);
	if (kind == 0)
		return diag_err(x->d, x->path, "", "not an Nsight Systems SQLite export (expected the SQLite "
				"header \"SQLite format 3\"; a .nsys-rep report is exported with `nsys export "
				"--type sqlite`)");
	/* a name that begins "file:" is a URI to SQLite where it is built with
	 * SQLITE_USE_URI (Debian's is): "./" keeps it the file sniffed */
	char *name = xasprintf("%s%s", strncmp(x->path, "file:", 5) ? "" : "./", x->path);
	int rc = sqlite3_open_v2(name, &x->db, SQLITE_OPEN_READONLY, NULL);
	free(name);
	if (rc != SQLITE_OK) {
		too_long(x->path, why, sizeof(why));
		return diag_err(x->d, x->path, "", "cannot open as SQLite: %s%s", sqlite3_errmsg(x->db), why);
	}
	if (sqlite3_prepare_v2(x->db, "SELECT count(*) FROM sqlite_master", -1, &st, NULL) != SQLITE_OK ||
	    sqlite3_step(st) != SQLITE_ROW) {
		diag_err(x->d, x->path, "", "cannot read its tables: %s (a truncated or damaged export?)",
			 sqlite3_errmsg(x->db));
		sqlite3_finalize(st);
		return -1;
	}
	sqlite3_finalize(st);
	rc = 0;                 /* every table missing said, not the first */
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++) {
		char jp[64];
		snprintf(jp, sizeof(jp), "/%s", required[i].table);
		if (!has_table(x, required[i].table))
			rc = diag_err(x->d, x->path, jp, "no such table: an Nsight Systems export holding %s "
				      "expected (nsys creates a table only for data the report holds)",
				      required[i].what);
	}
	return rc;
}

struct kineto_trace *nsys_load(const char *path, const char *const *interest, const char *torch_type,
			       FILE *summary, struct diag *d)
{
	struct nsys x = { .path = path, .interest = interest, .torch_type = torch_type, .d = d };
	struct kineto_trace *t = NULL;
	json_t *root;
	if (open_db(&x) || !(root = root_of(&x)))
		goto out;
	t = kineto_feed(path, "/NVTX_EVENTS", root, interest, feed_all, &x, d);
	if (t && summary)
		nsys_host_summary(x.db, path, summary);
out:
	sqlite3_close(x.db);
	return t;
}
