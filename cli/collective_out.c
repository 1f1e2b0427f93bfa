/* collective_out: what `ddlsim collective` prints and writes: nccl-tests'
 * layout (its header lines, device lines and columns, simulated where a
 * simulation has no pid or bus id), the CSV and the JSON
 * ("ddlsim.collective" 1.0). See cmd_collective.c. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "atomic_file.h"
#include "collective-private.h"
#include "ddlsim-config.h"
#include "diag.h"
#include "engine.h"
#include "topology.h"

const struct nccl_dtype nccl_dtypes[NDTYPES] = {
	{"int8", 1}, {"uint8", 1}, {"int32", 4}, {"uint32", 4}, {"int64", 8},
	{"uint64", 8}, {"half", 2}, {"float", 4}, {"double", 8}, {"bfloat16", 2},
};
const char *const nccl_redops[NREDOPS] = {"sum", "prod", "max", "min", "avg", "mulsum"};

const char *nccl_test_name(enum coll_op op)
{
	static const char *const n[COLL_NOPS] = {
		[COLL_ALLREDUCE] = "all_reduce", [COLL_REDUCE_SCATTER] = "reduce_scatter",
		[COLL_ALLGATHER] = "all_gather", [COLL_BROADCAST] = "broadcast",
		[COLL_REDUCE] = "reduce", [COLL_ALLTOALL] = "alltoall", [COLL_SENDRECV] = "sendrecv",
	};
	return n[op];
}

static bool has_root(int op)
{
	return op == COLL_BROADCAST || op == COLL_REDUCE;
}

static double algbw_GBps(const struct row *r, const struct engine_coll_point *p)
{
	return p->time_s > 0 ? r->bytes / p->time_s / 1e9 : 0;
}

static void print_time(FILE *f, double us)
{
	char s[64];
	snprintf(s, sizeof(s), us >= 10000.0 ? "%7.0f" : us >= 100.0 ? "%7.1f" : "%7.2f", us);
	fprintf(f, "  %7s", s);
}

void collective_print_nccl_tests(FILE *f, const struct args *a, const struct topology *t, int n,
				 const struct row *rows, int r0, int r1, const struct engine_coll_point *pts)
{
	int op = rows[r0].op;
	fprintf(f, "# nThread %ld nGpus %ld minBytes %.0f maxBytes %.0f step: %.0f(%s) warmup iters: %ld "
		   "iters: %ld agg iters: %ld validation: %ld graph: %ld\n",
		a->threads, a->gpus, a->minb, a->maxb, a->stepf > 1 ? floor(a->stepf) : a->stepb,
		a->stepf > 1 ? "factor" : "bytes", a->warmup, a->iters, a->agg, a->check, a->graph);
	if (a->blocking)
		fprintf(f, "# Blocking Enabled: wait for completion and barrier after each collective \n");
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
	const char *ts = a->cputime ? "cputime" : "time";
	fprintf(f, "#\n");
	fprintf(f, "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n",
		"", "", "", "", "");
	fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s\n", "size", "count",
		"type", "redop", "root", ts, "algbw", "busbw", "#wrong", ts, "algbw", "busbw", "#wrong");
	fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s\n", "(B)",
		"(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
	double sum = 0;
	int cnt = 0;
	for (int i = r0; i < r1; i++) {
		const struct row *r = &rows[i];
		const struct engine_coll_point *p = &pts[r->pt];
		fprintf(f, "%12.0f  %12.0f  %8s  %6s  %6ld", r->bytes, r->count, nccl_dtypes[r->dtype].name,
			r->redop < 0 ? "none" : nccl_redops[r->redop], has_root(op) ? a->root : -1L);
		double alg = algbw_GBps(r, p), bus = alg * coll_bus_factor(op, n);
		for (int k = 0; k < 2; k++) {
			print_time(f, p->time_s * 1e6);
			if (a->check)
				fprintf(f, "  %6.2f  %6.2f  %5g", alg, bus, 0.0);
			else
				fprintf(f, "  %6.2f  %6.2f  %5s", alg, bus, "N/A");
			sum += bus;
			cnt++;
		}
		fprintf(f, "\n");
	}
	fprintf(f, "# Out of bounds values : %d %s\n", 0, "OK");
	fprintf(f, "# Avg bus bandwidth    : %g %s\n", cnt ? sum / cnt : 0.0, "");
	fprintf(f, "#\n\n");
}

static void write_csv(FILE *f, const struct row *rows, int nrows,
		      const struct engine_coll_point *pts, int n)
{
	fprintf(f, "op,ranks,bytes,count,type,redop,algo,proto,time_us,algbw_GBps,busbw_GBps,"
		   "nccl_us,ideal_us\n");
	for (int i = 0; i < nrows; i++) {
		const struct row *r = &rows[i];
		const struct engine_coll_point *p = &pts[r->pt];
		double alg = algbw_GBps(r, p);
		fprintf(f, "%s,%d,%.0f,%.0f,%s,%s,%s,%s,%.6f,%.6f,%.6f,%.6f,%.6f\n", nccl_test_name(r->op), n,
			r->bytes, r->count, nccl_dtypes[r->dtype].name, r->redop < 0 ? "none" : nccl_redops[r->redop],
			p->algo, p->proto, p->time_s * 1e6, alg, alg * coll_bus_factor(r->op, n),
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
		double alg = algbw_GBps(r, p);
		fprintf(f, "%s\n    {\"op\": \"%s\", \"bytes\": %.0f, \"count\": %.0f, \"type\": \"%s\", "
			   "\"redop\": \"%s\", \"algo\": \"%s\", \"proto\": \"%s\", \"time_us\": %.6f, "
			   "\"algbw_GBps\": %.6f, \"busbw_GBps\": %.6f, \"nccl_us\": %.6f, \"ideal_us\": %.6f}",
			i ? "," : "", nccl_test_name(r->op), r->bytes, r->count, nccl_dtypes[r->dtype].name,
			r->redop < 0 ? "none" : nccl_redops[r->redop], p->algo, p->proto, p->time_s * 1e6, alg,
			alg * coll_bus_factor(r->op, n), p->nccl_s * 1e6, p->ideal_s * 1e6);
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
