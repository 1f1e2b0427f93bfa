/* collective_rows: the sizes and rows of `ddlsim collective` as
 * nccl-tests v2.19.6 (github.com/NVIDIA/nccl-tests, commit a0b82b2) lays
 * them out: TimeTest()'s size loop (src/common.cu: size x stepfactor when
 * the factor is above 1, else size + stepbytes), each test's
 * GetCollByteCount() (the size printed is max(send, recv) bytes, the
 * count its paramcount) and RunTest() loops (per type, per reduction op
 * where the test has one, per root where it has one: -r -1 is every
 * root; -N cycles repeat the sizes), and each test's GetBw().
 *
 * Counts of a requested size S of dtype size w (count = S / w):
 *   all_reduce, broadcast, reduce, sendrecv: count, size count x w
 *   reduce_scatter, all_gather, alltoall, gather, scatter, hypercube:
 *     base = (count / P) rounded down to a multiple of 16 / w (16 bytes),
 *     printed count base, size base x P x w
 *   alltoallv: base as above, T = base x P x w bytes per rank; the size
 *     printed is one rank's total of its per-peer bytes, each rounded down
 *     to 16 (AlltoAllvComputeMaxCounts).
 * algbw = size / time, busbw = algbw x (2(P-1)/P all_reduce; (P-1)/P
 * reduce_scatter, all_gather, alltoall, alltoallv, gather, scatter; 1
 * broadcast, reduce, sendrecv), except hypercube: algbw = base x w x
 * (P-1) / time and busbw = algbw (hypercube.cu HyperCubeGetBw). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "collective-private.h"
#include "engine.h"

int collective_sizes(const struct args *a, double *out, int max)
{
	int n = 0;
	for (double s = a->minb; s <= a->maxb; s = a->stepf > 1 ? s * (double)a->stepf : s + a->stepb) {
		if (n == max)
			return -1;
		if (out)
			out[n] = s;
		n++;
	}
	return n;
}

static bool has_redop(int op)
{
	return op == COLL_ALLREDUCE || op == COLL_REDUCE_SCATTER || op == COLL_REDUCE || op == COLL_SENDRECV;
}

static bool has_root(int op)
{
	return op == COLL_BROADCAST || op == COLL_REDUCE || op == COLL_GATHER || op == COLL_SCATTER;
}

static int ndtypes(const struct args *a)
{
	return a->dtype >= 0 ? 1 : a->fp8 ? NDTYPES : NDTYPES_NO_FP8;
}

static long loops_of(const struct args *a, int op, int n)
{
	long k = ndtypes(a) * a->cycles;
	if (has_redop(op) && a->redop < 0)
		k *= NREDOPS;
	if (has_root(op) && a->root < 0)
		k *= n;
	return k;
}

long collective_nrows(const struct args *a, int nsizes, int n)
{
	long rows = 0;
	for (int o = 0; o < a->nops; o++)
		rows += loops_of(a, a->ops[o], n) * nsizes;
	return rows;
}

/* AlltoAllvGetPeerBytesDistanceWeighted(), spread 1.0 or 0.0, summed over
 * one rank's peers (AlltoAllvComputeMaxCounts()). */
static double alltoallv_rank_bytes(double T, int n, bool uniform)
{
	if (n == 1)
		return floor(T / 16) * 16;
	double sum = 0;
	for (int d = 0; d < n; d++)
		sum += floor((uniform ? T / n : d * T / (n * (n - 1) / 2.0)) / 16) * 16;
	return sum;
}

/* r's count and size for requested size S (GetCollByteCount()); the
 * bytes N to simulate in *sim. */
static void byte_count(const struct args *a, struct row *r, double S, int n, double *sim)
{
	int w = nccl_dtypes[r->dtype].size;
	double count = floor(S / w), align = 16 / w;
	double base = floor(floor(count / n) / align) * align;
	switch (r->op) {
	case COLL_ALLREDUCE:
	case COLL_BROADCAST:
	case COLL_REDUCE:
	case COLL_SENDRECV:
		r->count = count;
		r->bytes = *sim = count * w;
		break;
	case COLL_ALLTOALLV:
		r->count = base;
		*sim = base * n * w;
		r->bytes = alltoallv_rank_bytes(*sim, n, a->alltoallv_op == COLL_ALLTOALL);
		break;
	default:
		r->count = base;
		r->bytes = *sim = base * n * w;
	}
}

void collective_bw(const struct row *r, int n, double time_s, double *alg, double *bus)
{
	if (time_s <= 0) {
		*alg = *bus = 0;
		return;
	}
	if (r->op == COLL_HYPERCUBE) {
		*alg = *bus = r->count * nccl_dtypes[r->dtype].size * (n - 1) / 1e9 / time_s;
		return;
	}
	*alg = r->bytes / 1e9 / time_s;
	*bus = *alg * coll_bus_factor(r->op, n);
}

static int point_of(const struct args *a, int op, double N, struct engine_coll_point *pts, int *npts)
{
	enum coll_op sim = op == COLL_ALLTOALLV ? (enum coll_op)a->alltoallv_op : (enum coll_op)op;
	int p = 0;
	while (p < *npts && !(pts[p].op == sim && pts[p].bytes == N))
		p++;
	if (p == *npts) {
		pts[p].op = sim;
		pts[p].bytes = N;
		(*npts)++;
	}
	return p;
}

int collective_rows(const struct args *a, const double *sizes, int nsizes, int n, struct row *rows,
		    struct engine_coll_point *pts, int *npts)
{
	int nrows = 0;
	*npts = 0;
	for (int o = 0; o < a->nops; o++) {
		int op = a->ops[o];
		int nro = has_redop(op) && a->redop < 0 ? NREDOPS : 1;
		int nrt = has_root(op) && a->root < 0 ? n : 1;
		for (int dt = 0; dt < ndtypes(a); dt++)
			for (int ro = 0; ro < nro; ro++)
				for (int rt = 0; rt < nrt; rt++)
					for (long c = 0; c < a->cycles; c++)
						for (int s = 0; s < nsizes; s++) {
							struct row *r = &rows[nrows++];
							double N;
							r->op = op;
							r->dtype = a->dtype < 0 ? dt : a->dtype;
							r->redop = op == COLL_HYPERCUBE ? REDOP_EMPTY
								   : !has_redop(op) ? REDOP_NONE
								   : a->redop < 0 ? ro : a->redop;
							r->root = !has_root(op) ? -1 : a->root < 0 ? rt : (int)a->root;
							byte_count(a, r, sizes[s], n, &N);
							r->pt = point_of(a, op, N, pts, npts);
						}
	}
	return nrows;
}

void collective_program(const struct args *a, int op, char *buf, size_t len)
{
	if (a->binary) {
		const char *base = strrchr(a->binary, '/');
		snprintf(buf, len, "%s", base ? base + 1 : a->binary);
	} else {
		snprintf(buf, len, "%s_perf", nccl_test_name(op));
	}
}
