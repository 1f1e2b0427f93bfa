/* collective_out: what `ddlsim collective` prints and writes: nccl-tests
 * v2.19.6's layout as src/util.cu prints it (NVIDIA/nccl-tests a0b82b2:
 * writeDeviceReport(), writeResultHeader(), writeBenchmarkLine*(),
 * writePerIterReport(), writeTimestamp(), writeResultFooter(); device
 * lines simulated where a simulation has no pid or bus id), the CSV and
 * the JSON ("ddlsim.collective" 1.0). See cmd_collective.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "atomic_file.h"
#include "collective-private.h"
#include "ddlsim-config.h"
#include "diag.h"
#include "engine.h"
#include "topology.h"

const struct nccl_dtype nccl_dtypes[NDTYPES] = {
	{"int8", 1}, {"uint8", 1}, {"int32", 4}, {"uint32", 4}, {"int64", 8},
	{"uint64", 8}, {"half", 2}, {"float", 4}, {"double", 8}, {"bfloat16", 2},
	{"f8e4m3", 1}, {"f8e5m2", 1},
};
const char *const nccl_redops[NREDOPS] = {"sum", "prod", "max", "min", "avg", "mulsum"};

const char *nccl_test_name(enum coll_op op)
{
	static const char *const n[COLL_NOPS] = {
		[COLL_ALLREDUCE] = "all_reduce", [COLL_REDUCE_SCATTER] = "reduce_scatter",
		[COLL_ALLGATHER] = "all_gather", [COLL_BROADCAST] = "broadcast",
		[COLL_REDUCE] = "reduce", [COLL_ALLTOALL] = "alltoall", [COLL_SENDRECV] = "sendrecv",
		[COLL_GATHER] = "gather", [COLL_SCATTER] = "scatter", [COLL_HYPERCUBE] = "hypercube",
		[COLL_ALLTOALLV] = "alltoallv",
	};
	return n[op];
}

const char *collective_redop_name(int redop)
{
	return redop == REDOP_EMPTY ? "" : redop == REDOP_NONE ? "none" : nccl_redops[redop];
}

/* util.cu getFloatStr(): the value in width characters, 2 decimals, else
 * 1, else none, else exponent. */
static void float_str(double v, int width, char *out)
{
	static const char *const fmts[] = {"%*.2f", "%*.1f", "%*.0f"};
	char b[400];
	for (int i = 0; i < 3; i++) {
		if (snprintf(b, sizeof(b), fmts[i], width, v) <= width) {
			strcpy(out, b);
			return;
		}
	}
	snprintf(b, sizeof(b), width >= 7 ? "%*.1e" : "%*.0e", width, v);
	b[width] = 0; /* as snprintf(str, width + 1, ...) there */
	strcpy(out, b);
}

static void print_timestamp(FILE *f)
{
	char b[128];
	time_t now = time(NULL);
	struct tm tm;
	strftime(b, sizeof(b), "%Y-%m-%d %H:%M:%S", localtime_r(&now, &tm));
	fprintf(f, "%21s", b);
}

/* util.cu writeDeviceReport(): the version, starting and parameter lines,
 * what -z, -I and -p add, and one device line per simulated rank. */
static void print_device_report(FILE *f, const struct args *a, const struct topology *t, int n,
				const char *prog)
{
	fprintf(f, "# nccl-tests version %s nccl-headers=%d nccl-library=%d\n", NCCL_TESTS_VERSION,
		NCCL_TESTS_NCCL_CODE, NCCL_TESTS_NCCL_CODE);
	fprintf(f, "# Collective test starting: %s\n", prog);
	fprintf(f, "# nThread %ld nGpus %ld minBytes %.0f maxBytes %.0f step: %.0f(%s) warmup iters: %ld "
		   "iters: %ld agg iters: %ld validation: %ld graph: %ld unalign: %ld\n",
		a->threads, a->gpus, a->minb_asked, a->maxb_asked, a->stepf > 1 ? (double)a->stepf : a->stepb,
		a->stepf > 1 ? "factor" : "bytes", a->warmup, a->iters, a->agg, a->check, a->graph, a->unalign);
	if (a->blocking == 1)
		fprintf(f, "# Blocking Enabled: wait and barrier after each inner iteration (-m) \n");
	if (a->blocking == 2)
		fprintf(f, "# Blocking Enabled: wait after each inner iteration (-m), no barrier \n");
	if (a->blocking == 3)
		fprintf(f, "# Blocking Enabled: wait and barrier after each outer iteration (-n); "
			   "time excludes barrier \n");
	if (a->per_iter) {
		fprintf(f, "# Per-Iteration Report: CUDA event timing; i_* uses max over process rows");
		if (a->per_iter_skip)
			fprintf(f, "; summary skips first %ld iterations", a->per_iter_skip);
		fprintf(f, " \n");
	}
	if (a->pinit)
		fprintf(f, "# Parallel Init Enabled: threads call into NcclInitRank concurrently \n");
	fprintf(f, "#\n# Using devices\n");
	long per_proc = a->threads * a->gpus, per_node = per_proc * (a->procs / a->nodes);
	for (int r = 0; r < n; r++) {
		char host[32];
		snprintf(host, sizeof(host), "node%ld", r / per_node);
		fprintf(f, "#  Rank %2d Group %2d Pid %6ld on %10s device %2ld [%04x:%02lx:%02x] %s\n", r,
			0, 10000 + r / per_proc, host, r % per_node, 0, (unsigned long)(r % per_node), 0,
			t->gpu.name);
	}
	if (a->max_reduced)
		fprintf(f, "#\n# Reducing maxBytes to %.0f due to memory limitation\n", a->maxb);
}

/* util.cu writeResultHeader(). */
static void print_result_header(FILE *f, const struct args *a)
{
	const char *ts = a->cputime ? "cputime" : "time";
	const char *tl = a->timestamps ? "timestamp" : "", *tf = a->timestamps ? "%Y-%m-%d %H:%M:%S" : "";
	int tp = a->timestamps ? 19 : 0;
	fprintf(f, "#\n");
	if (a->per_iter) {
		fprintf(f, "# %10s  %12s  %8s  %6s  %6s              out-of-place (+ per-iteration)"
			   "                                in-place (+ per-iteration)\n", "", "", "", "", "");
		fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %7s  %7s  %7s  %7s  %6s  %6s  "
			   "%6s  %7s  %7s  %7s  %7s %*s\n", "size", "count", "type", "redop", "root", ts, "algbw",
			"busbw", "#wrong", "i_min", "i_max", "i_p99", "i_cv%", ts, "algbw", "busbw", "#wrong",
			"i_min", "i_max", "i_p99", "i_cv%", tp, tl);
		fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %7s  %7s  %7s  %7s  %6s  %6s  "
			   "%6s  %7s  %7s  %7s  %7s %*s\n", "(B)", "(elements)", "", "", "", "(us)", "(GB/s)",
			"(GB/s)", "", "(us)", "(us)", "(us)", "(%)", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(us)",
			"(us)", "(%)", tp, tf);
		return;
	}
	fprintf(f, "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n",
		"", "", "", "", "");
	fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n", "size", "count",
		"type", "redop", "root", ts, "algbw", "busbw", "#wrong", ts, "algbw", "busbw", "#wrong", tp, tl);
	fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s\n", "(B)",
		"(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "", tp, tf);
}

/* One row: util.cu writeBenchmarkLinePreamble(), then out-of-place and
 * in-place writeBenchmarkLineBody() (and writePerIterReport() with -I:
 * every simulated iteration takes the same time, so min = max = p99 =
 * the time and the coefficient of variation is 0), the timestamp with -S. */
static void print_row(FILE *f, const struct args *a, int n, const struct row *r,
			const struct engine_coll_point *p)
{
	char root[32], tm[8], alg_s[7], bus_s[7], cv[8];
	snprintf(root, sizeof(root), "%6i", r->root);
	fprintf(f, "%12.0f  %12.0f  %8s  %6s  %6s", r->bytes, r->count, nccl_dtypes[r->dtype].name,
		collective_redop_name(r->redop), root);
	double alg, bus;
	collective_bw(r, n, p->time_s, &alg, &bus);
	float_str(p->time_s * 1e6, 7, tm);
	float_str(alg, 6, alg_s);
	float_str(bus, 6, bus_s);
	float_str(0.0, 7, cv);
	for (int k = 0; k < 2; k++) {
		if (a->check)
			fprintf(f, "  %7s  %6s  %6s  %6g", tm, alg_s, bus_s, 0.0);
		else
			fprintf(f, "  %7s  %6s  %6s    N/A", tm, alg_s, bus_s);
		if (a->per_iter)
			fprintf(f, "  %7s  %7s  %7s  %7s", tm, tm, tm, cv);
	}
	if (a->timestamps)
		print_timestamp(f);
	fprintf(f, "\n");
}

int collective_print_nccl_tests(FILE *f, const struct args *a, const struct topology *t, int n,
				 const struct row *rows, int r0, int r1, const struct engine_coll_point *pts)
{
	char prog[256];
	collective_program(a, rows[r0].op, prog, sizeof(prog));
	const char *ext = a->output_file ? strrchr(a->output_file, '.') : NULL;
	bool json = ext && ext > a->output_file && !strcasecmp(ext, ".json") &&
		    !strchr(ext, '/'); /* common.cu classifyOutputFile() */
	double sum = 0;
	int cnt = 0;
	for (int i = r0; i < r1; i++) {
		double alg, bus;
		collective_bw(&rows[i], n, pts[rows[i].pt].time_s, &alg, &bus);
		sum += 2 * bus;
		cnt += 2;
	}
	double avg = cnt ? sum / cnt : 0;
	/* NCCL_TESTS_MIN_BW as common.cu reads it */
	const char *min_bw = getenv("NCCL_TESTS_MIN_BW");
	double check = min_bw ? atof(min_bw) : -1;
	if (json && collective_write_nccl_json(f, a, t, n, rows, r0, r1, pts, avg, check))
		return -1;
	print_device_report(f, a, t, n, prog);
	print_result_header(f, a);
	for (int i = r0; i < r1; i++)
		print_row(f, a, n, &rows[i], &pts[rows[i].pt]);
	/* util.cu writeResultFooter() */
	fprintf(f, "# %-20s : %d %s\n", "Out of bounds values", 0, "OK");
	fprintf(f, "# %-20s : %g %s\n", "Avg bus bandwidth", avg,
		check == -1 ? "" : avg < check * 0.9 ? "FAILED" : "OK");
	fprintf(f, "#\n");
	fprintf(f, "# Collective test concluded: %s\n", prog);
	fprintf(f, "#\n\n"); /* finalizeFooter(), then writeErrors() with no NCCL error */
	return check != -1 && avg < check * 0.9; /* run(): testNumResults, a failed run */
}

static void write_csv(FILE *f, const struct row *rows, int nrows,
		      const struct engine_coll_point *pts, int n)
{
	fprintf(f, "op,ranks,bytes,count,type,redop,algo,proto,time_us,algbw_GBps,busbw_GBps,"
		   "nccl_us,ideal_us\n");
	for (int i = 0; i < nrows; i++) {
		const struct row *r = &rows[i];
		const struct engine_coll_point *p = &pts[r->pt];
		double alg, bus;
		collective_bw(r, n, p->time_s, &alg, &bus);
		fprintf(f, "%s,%d,%.0f,%.0f,%s,%s,%s,%s,%.6f,%.6f,%.6f,%.6f,%.6f\n", nccl_test_name(r->op), n,
			r->bytes, r->count, nccl_dtypes[r->dtype].name, collective_redop_name(r->redop),
			p->algo, p->proto, p->time_s * 1e6, alg, bus,
			p->nccl_s * 1e6, p->ideal_s * 1e6);
	}
}

static void write_json(FILE *f, const struct args *a, const struct topology *t,
		       const struct row *rows, int nrows, const struct engine_coll_point *pts, int n)
{
	fprintf(f, "{\n  \"schema\": \"ddlsim.collective\", \"schema_version\": \"1.0\",\n"
		   "  \"producer\": \"ddlsim %s\", \"topology\": \"%s\", \"nodes\": %ld,\n"
		   "  \"gpus_per_node\": %ld, \"ranks\": %d, \"algo\": \"%s\",\n  \"rows\": [",
		DDLSIM_VERSION, t->name, a->nodes, a->threads * a->gpus * (a->procs / a->nodes), n, a->algo);
	for (int i = 0; i < nrows; i++) {
		const struct row *r = &rows[i];
		const struct engine_coll_point *p = &pts[r->pt];
		double alg, bus;
		collective_bw(r, n, p->time_s, &alg, &bus);
		fprintf(f, "%s\n    {\"op\": \"%s\", \"bytes\": %.0f, \"count\": %.0f, \"type\": \"%s\", "
			   "\"redop\": \"%s\", \"algo\": \"%s\", \"proto\": \"%s\", \"time_us\": %.6f, "
			   "\"algbw_GBps\": %.6f, \"busbw_GBps\": %.6f, \"nccl_us\": %.6f, \"ideal_us\": %.6f}",
			i ? "," : "", nccl_test_name(r->op), r->bytes, r->count, nccl_dtypes[r->dtype].name,
			collective_redop_name(r->redop), p->algo, p->proto, p->time_s * 1e6, alg,
			bus, p->nccl_s * 1e6, p->ideal_s * 1e6);
	}
	fprintf(f, "\n  ]\n}\n");
}

int collective_write_out(const char *path, int json, const struct args *a, const struct topology *t,
			 const struct row *rows, int nrows, const struct engine_coll_point *pts, int n,
			 struct atomic_file *af, struct diag *d)
{
	FILE *f = stdout;
	int e;
	if (strcmp(path, "-")) {
		if ((e = atomic_file_open(af, path)))
			return diag_errf(d, "%s: cannot write: %s", path, atomic_file_strerror(-e));
		f = af->f;
	}
	if (json)
		write_json(f, a, t, rows, nrows, pts, n);
	else
		write_csv(f, rows, nrows, pts, n);
	if (f != stdout && (e = atomic_file_stage(af)))
		return diag_errf(d, "%s: cannot write: %s", path, atomic_file_strerror(-e));
	return 0;
}
