/* bench_gemm.c - GEMM timings through cuBLAS (fp32, tf32, fp16, bf16) and cuBLASLt (fp8).
 *
 * Convention.  Every point is one cuBLAS column-major call
 *   C[M,N] = op(A)[M,K] * op(B)[K,N],  flops = 2*M*N*K,
 * and the profile records M, N, K and the transposes exactly as passed
 * (transa "N": A stored M x K with lda = M; "T": stored K x M, lda = K;
 * likewise B; ldc = M).  fp16 and bf16 accumulate in fp32
 * (CUBLAS_COMPUTE_32F) and write their own type; tf32 is fp32 storage with
 * CUBLAS_COMPUTE_32F_FAST_TF32; fp32 is CUBLAS_COMPUTE_32F with the default
 * (non-TF32) math mode.  fp8 (e4m3 inputs, bf16 output, fp32 accumulation,
 * unit scales) goes through cublasLtMatmul with the first heuristic
 * algorithm; Hopper's fp8 kernels need the "TN" form and dimensions that
 * are multiples of 16, so fp8 points are always transa = "T", transb = "N"
 * and other shapes are skipped.  cublasGemmEx gets the handle's 32 MiB
 * workspace; cublasLt gets the same buffer.
 *
 * What is measured.  The grid of shapes.c in fp32, tf32, fp16, bf16 and
 * fp8 (compute capability >= 8.9), and the model layer shapes in bf16,
 * fp16 and fp8 - the dtypes these models train in; fp32/tf32 model shapes
 * would take longer than the whole rest of the calibration.
 *
 * Check.  Before timing, sampled entries of C are compared with a double
 * precision dot product of the exact inputs (copied back from the device):
 * |c - ref| <= tol * (sqrt(sum (a_k b_k)^2) + |ref|), where the first term
 * is the typical magnitude of a sum of random-sign products and tol covers
 * the dtype's input and output rounding (1e-4 fp32, 1e-2 tf32, 5e-3 fp16,
 * 2e-2 bf16, 3e-2 fp8).  A wrong layout or transpose gives errors of the
 * order of the first term and fails.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib.h"

struct gemm {
	struct calib *c;
	enum calib_dtype dt;
	struct gemm_shape sh;
	struct arena ar;
	long long lda, ldb, ldc;
	bool lt;
	cublasLtMatmulDesc_t op;
	cublasLtMatrixLayout_t la, lb, lc;
	cublasLtMatmulAlgo_t algo;
};

static cudaDataType_t cuda_type(enum calib_dtype dt)
{
	switch (dt) {
	case CALIB_FP16: return CUDA_R_16F;
	case CALIB_BF16: return CUDA_R_16BF;
	case CALIB_FP8: return CUDA_R_8F_E4M3;
	default: return CUDA_R_32F;
	}
}

/* Storage of the output C. */
static enum calib_dtype out_type(enum calib_dtype dt)
{
	return dt == CALIB_FP8 ? CALIB_BF16 : dt;
}

static double tolerance(enum calib_dtype dt)
{
	switch (dt) {
	case CALIB_FP32: return 1e-4;
	case CALIB_TF32: return 1e-2;
	case CALIB_FP16: return 5e-3;
	case CALIB_BF16: return 2e-2;
	case CALIB_FP8: return 3e-2;
	}
	return 0.0;
}

static cublasOperation_t op_of(char t)
{
	return t == 'T' ? CUBLAS_OP_T : CUBLAS_OP_N;
}

static int enqueue_gemm(void *arg, int i)
{
	struct gemm *g = arg;
	struct calib *c = g->c;
	const float alpha = 1.0f, beta = 0.0f;
	const void *a = arena_ptr(&g->ar, 0, i);
	const void *b = arena_ptr(&g->ar, 1, i);
	void *out = arena_ptr(&g->ar, 2, i);

	if (g->lt)
		return blas_failed(cublasLtMatmul(c->lt, g->op, &alpha, a, g->la, b, g->lb,
						  &beta, out, g->lc, out, g->lc, &g->algo,
						  c->blas_workspace, c->blas_workspace_bytes,
						  c->stream),
				   "cublasLtMatmul") ? -1 : 0;
	return blas_failed(cublasGemmEx(c->blas, op_of(g->sh.transa), op_of(g->sh.transb),
					(int)g->sh.m, (int)g->sh.n, (int)g->sh.k, &alpha,
					a, cuda_type(g->dt), (int)g->lda,
					b, cuda_type(g->dt), (int)g->ldb, &beta,
					out, cuda_type(g->dt), (int)g->ldc,
					g->dt == CALIB_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32
							    : CUBLAS_COMPUTE_32F,
					CUBLAS_GEMM_DEFAULT),
			   "cublasGemmEx") ? -1 : 0;
}

static void lt_finish(struct gemm *g)
{
	if (g->lc)
		cublasLtMatrixLayoutDestroy(g->lc);
	if (g->lb)
		cublasLtMatrixLayoutDestroy(g->lb);
	if (g->la)
		cublasLtMatrixLayoutDestroy(g->la);
	if (g->op)
		cublasLtMatmulDescDestroy(g->op);
	g->lc = g->lb = g->la = NULL;
	g->op = NULL;
}

/* Sets up the cublasLt fp8 call.  Returns 0, 1 when cublasLt has no
 * algorithm for the shape, or -1. */
static int lt_init(struct gemm *g)
{
	struct calib *c = g->c;
	const cublasOperation_t ta = op_of(g->sh.transa), tb = op_of(g->sh.transb);
	const uint64_t ws = c->blas_workspace_bytes;
	cublasLtMatmulPreference_t pref = NULL;
	cublasLtMatmulHeuristicResult_t heur;
	int returned = 0, rc = -1;
	cublasStatus_t st;

	memset(&heur, 0, sizeof(heur));
	if (blas_failed(cublasLtMatmulDescCreate(&g->op, CUBLAS_COMPUTE_32F, CUDA_R_32F),
			"cublasLtMatmulDescCreate") ||
	    blas_failed(cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_TRANSA,
						       &ta, sizeof(ta)), "TRANSA") ||
	    blas_failed(cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_TRANSB,
						       &tb, sizeof(tb)), "TRANSB"))
		goto out;
	/* Layouts describe the stored matrices: rows, cols, leading dimension. */
	if (blas_failed(cublasLtMatrixLayoutCreate(&g->la, cuda_type(g->dt),
						   g->sh.transa == 'T' ? g->sh.k : g->sh.m,
						   g->sh.transa == 'T' ? g->sh.m : g->sh.k,
						   g->lda), "layout A") ||
	    blas_failed(cublasLtMatrixLayoutCreate(&g->lb, cuda_type(g->dt),
						   g->sh.transb == 'T' ? g->sh.n : g->sh.k,
						   g->sh.transb == 'T' ? g->sh.k : g->sh.n,
						   g->ldb), "layout B") ||
	    blas_failed(cublasLtMatrixLayoutCreate(&g->lc, cuda_type(out_type(g->dt)),
						   g->sh.m, g->sh.n, g->ldc), "layout C"))
		goto out;
	if (blas_failed(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate") ||
	    blas_failed(cublasLtMatmulPreferenceSetAttribute(pref,
							     CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
							     &ws, sizeof(ws)), "MAX_WORKSPACE_BYTES"))
		goto free_pref;
	st = cublasLtMatmulAlgoGetHeuristic(c->lt, g->op, g->la, g->lb, g->lc, g->lc, pref,
					    1, &heur, &returned);
	if (st == CUBLAS_STATUS_NOT_SUPPORTED || (st == CUBLAS_STATUS_SUCCESS && returned == 0)) {
		rc = 1;
		goto free_pref;
	}
	if (blas_failed(st, "cublasLtMatmulAlgoGetHeuristic"))
		goto free_pref;
	g->algo = heur.algo;
	g->lt = true;
	rc = 0;
free_pref:
	if (pref)
		cublasLtMatmulPreferenceDestroy(pref);
out:
	if (rc != 0)
		lt_finish(g);
	return rc;
}

/* Compares `samples` entries of C (copy 0) with a CPU dot product. */
static int check_gemm(struct gemm *g, int samples)
{
	struct calib *c = g->c;
	const struct gemm_shape *sh = &g->sh;
	const enum kernels_dtype st = dtype_storage(g->dt);
	const enum kernels_dtype so = dtype_storage(out_type(g->dt));
	const size_t es = dtype_size(g->dt), eo = dtype_size(out_type(g->dt));
	const char *a = arena_ptr(&g->ar, 0, 0);
	const char *b = arena_ptr(&g->ar, 1, 0);
	const char *out = arena_ptr(&g->ar, 2, 0);
	unsigned char *row = malloc((size_t)sh->k * es);
	unsigned char *col = malloc((size_t)sh->k * es);
	unsigned char cv[8];
	double worst = 0.0, worst_err = 0.0, worst_ref = 0.0, worst_c = 0.0;
	uint64_t lcg = 0x2545f4914f6cdd1dull ^ (uint64_t)(sh->m * 31 + sh->n * 17 + sh->k);
	int s, rc = -1;
	bool ok = true;

	if (!row || !col) {
		calib_error("out of memory 'gemm check'");
		goto out;
	}
	for (s = 0; s < samples; s++) {
		long long i, j, kk;
		double ref = 0.0, sq = 0.0, got, err, lim;

		if (s == 0) {
			i = 0;
			j = 0;
		} else if (s == 1) {
			i = sh->m - 1;
			j = sh->n - 1;
		} else {
			lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
			i = (long long)((lcg >> 33) % (uint64_t)sh->m);
			lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
			j = (long long)((lcg >> 33) % (uint64_t)sh->n);
		}
		/* Row i of op(A), column j of op(B), entry (i, j) of C. */
		if (sh->transa == 'N'
			    ? copy_strided(row, a + (size_t)i * es, es, (size_t)g->lda, (size_t)sh->k)
			    : copy_strided(row, a + (size_t)i * g->lda * es, es, 1, (size_t)sh->k))
			goto out;
		if (sh->transb == 'N'
			    ? copy_strided(col, b + (size_t)j * g->ldb * es, es, 1, (size_t)sh->k)
			    : copy_strided(col, b + (size_t)j * es, es, (size_t)g->ldb, (size_t)sh->k))
			goto out;
		if (copy_strided(cv, out + ((size_t)i + (size_t)j * g->ldc) * eo, eo, 1, 1))
			goto out;
		for (kk = 0; kk < sh->k; kk++) {
			const double p = dtype_load(st, row, (size_t)kk) * dtype_load(st, col, (size_t)kk);

			ref += p;
			sq += p * p;
		}
		got = dtype_load(so, cv, 0);
		err = fabs(got - ref);
		lim = tolerance(g->dt) * (sqrt(sq) + fabs(ref)) + 1e-6;
		if (!(err <= lim))
			ok = false;
		if (!(err / lim <= worst)) {
			worst = err / lim;
			worst_err = err;
			worst_ref = ref;
			worst_c = got;
		}
	}
	rc = calib_check(c, ok, "gemm %s %lldx%lldx%lld %c%c %s: %d samples, worst |err| %.3g "
			 "(got %.6g, want %.6g, %.2f of tolerance)",
			 dtype_name(g->dt), sh->m, sh->n, sh->k, sh->transa, sh->transb,
			 g->lt ? "cublasLt" : "cublas", samples, worst_err, worst_c,
			 worst_ref, worst);
out:
	free(row);
	free(col);
	return rc;
}

/* Checks and (unless self-testing) times one shape.  Returns 0 or -1. */
static int run_point(struct calib *c, enum calib_dtype dt, const struct gemm_shape *sh,
		     const char *label, long long idx, long long total)
{
	struct gemm g;
	size_t bytes[3];
	enum kernels_dtype st[3];
	struct calib_point pt;
	double t = 0.0;
	int rc;

	memset(&g, 0, sizeof(g));
	g.c = c;
	g.dt = dt;
	g.sh = *sh;
	g.lda = sh->transa == 'N' ? sh->m : sh->k;
	g.ldb = sh->transb == 'N' ? sh->k : sh->n;
	g.ldc = sh->m;
	bytes[0] = (size_t)sh->m * (size_t)sh->k * dtype_size(dt);
	bytes[1] = (size_t)sh->k * (size_t)sh->n * dtype_size(dt);
	bytes[2] = (size_t)sh->m * (size_t)sh->n * dtype_size(out_type(dt));
	st[0] = st[1] = dtype_storage(dt);
	st[2] = dtype_storage(out_type(dt));

	if (dt == CALIB_FP8) {
		rc = lt_init(&g);
		if (rc == 1) {
			calib_warn("no cublasLt algorithm, skipped 'gemm %s %lldx%lldx%lld %c%c'",
				   dtype_name(dt), sh->m, sh->n, sh->k, sh->transa, sh->transb);
			return 0;
		}
		if (rc < 0)
			return -1;
	}
	rc = arena_init(c, &g.ar, 3, bytes, st);
	if (rc == 1) {
		calib_warn("does not fit in device memory, skipped 'gemm %s %lldx%lldx%lld'",
			   dtype_name(dt), sh->m, sh->n, sh->k);
		rc = 0;
		goto free_lt;
	}
	if (rc < 0)
		goto free_lt;
	rc = -1;
	if (enqueue_gemm(&g, 0) < 0)
		goto free_arena;
	if (check_gemm(&g, c->self_test ? 64 : 8) < 0)
		goto free_arena;
	if (c->self_test) {
		rc = 0;
		goto free_arena;
	}
	if (timer_median(c, enqueue_gemm, &g, &t) < 0)
		goto free_arena;

	memset(&pt, 0, sizeof(pt));
	pt.section = CALIB_GEMM;
	snprintf(pt.dtype, sizeof(pt.dtype), "%s", dtype_name(dt));
	snprintf(pt.impl, sizeof(pt.impl), "%s", g.lt ? "cublasLt" : "cublas");
	pt.m = sh->m;
	pt.n = sh->n;
	pt.k = sh->k;
	pt.transa = sh->transa;
	pt.transb = sh->transb;
	pt.time_s = t;
	pt.tflops = 2.0 * (double)sh->m * (double)sh->n * (double)sh->k / t * 1e-12;
	calib_progress("gemm %-8s %-6s %6lld x %6lld x %6lld %c%c %10.4f ms %8.1f TFLOP/s (%lld/%lld)",
		       dtype_name(dt), label, sh->m, sh->n, sh->k, sh->transa, sh->transb,
		       t * 1e3, pt.tflops, idx + 1, total);
	rc = calib_add(c, &pt);
free_arena:
	arena_finish(&g.ar);
free_lt:
	lt_finish(&g);
	return rc;
}

static bool fp8_ok(const struct gemm_shape *sh)
{
	return sh->m % 16 == 0 && sh->n % 16 == 0 && sh->k % 16 == 0;
}

/* Runs `n` shapes in `dt`.  fp8 points are forced to "TN" (shapes that
 * then coincide are measured once) and need dimensions divisible by 16. */
static int run_list(struct calib *c, enum calib_dtype dt, const struct gemm_shape *v,
		    long long n, const char *label)
{
	struct gemm_shape *list = malloc((size_t)(n > 0 ? n : 1) * sizeof(*list));
	long long i, count = 0;
	int rc = -1;

	if (!list)
		return calib_error("out of memory 'gemm shapes'");
	for (i = 0; i < n; i++) {
		struct gemm_shape sh = v[i];

		if (dt == CALIB_FP8) {
			if (!fp8_ok(&sh))
				continue;
			sh.transa = 'T';
			sh.transb = 'N';
		}
		list[count++] = sh;
	}
	if (dt == CALIB_FP8)
		count = shapes_gemm_unique(list, count);
	for (i = 0; i < count; i++)
		if (run_point(c, dt, &list[i], label, i, count) < 0)
			goto out;
	rc = 0;
out:
	free(list);
	return rc;
}

static int self_test(struct calib *c, bool fp8)
{
	static const struct gemm_shape shapes[] = {
		{ 128, 96, 64, 'N', 'N' },
		{ 100, 75, 33, 'N', 'T' },
		{ 64, 128, 256, 'T', 'N' },
		{ 257, 129, 65, 'T', 'T' },
		{ 1024, 768, 4096, 'N', 'N' },
	};
	static const struct gemm_shape shapes8[] = {
		{ 128, 256, 64, 'T', 'N' },
		{ 1024, 512, 2048, 'T', 'N' },
	};
	static const enum calib_dtype dts[] = { CALIB_FP32, CALIB_TF32, CALIB_FP16, CALIB_BF16 };
	size_t d;

	for (d = 0; d < sizeof(dts) / sizeof(dts[0]); d++)
		if (run_list(c, dts[d], shapes, sizeof(shapes) / sizeof(shapes[0]), "test") < 0)
			return -1;
	if (fp8 && run_list(c, CALIB_FP8, shapes8, sizeof(shapes8) / sizeof(shapes8[0]), "test") < 0)
		return -1;
	return 0;
}

int bench_gemm(struct calib *c)
{
	static const enum calib_dtype grid_dts[] = {
		CALIB_FP32, CALIB_TF32, CALIB_FP16, CALIB_BF16, CALIB_FP8,
	};
	static const enum calib_dtype model_dts[] = { CALIB_BF16, CALIB_FP16, CALIB_FP8 };
	const bool fp8 = c->prop.major * 10 + c->prop.minor >= 89;
	struct gemm_shape *grid = NULL, *models = NULL;
	long long ngrid, nmodels;
	size_t d;
	int rc = -1;

	if (c->self_test)
		return self_test(c, fp8);
	if (!fp8)
		calib_warn("compute capability %d.%d < 8.9, fp8 GEMMs skipped 'gemm'",
			   c->prop.major, c->prop.minor);
	ngrid = shapes_gemm_grid(c->quick, &grid);
	nmodels = shapes_gemm_models(c->quick, &models);
	if (ngrid < 0 || nmodels < 0) {
		calib_error("out of memory 'gemm shapes'");
		goto out;
	}
	for (d = 0; d < sizeof(grid_dts) / sizeof(grid_dts[0]); d++) {
		if (grid_dts[d] == CALIB_FP8 && !fp8)
			continue;
		if (c->quick && grid_dts[d] != CALIB_BF16 && grid_dts[d] != CALIB_FP32)
			continue;
		if (run_list(c, grid_dts[d], grid, ngrid, "grid") < 0)
			goto out;
	}
	for (d = 0; d < sizeof(model_dts) / sizeof(model_dts[0]); d++) {
		if (model_dts[d] == CALIB_FP8 && !fp8)
			continue;
		if (c->quick && model_dts[d] != CALIB_BF16)
			continue;
		if (run_list(c, model_dts[d], models, nmodels, "model") < 0)
			goto out;
	}
	rc = 0;
out:
	free(grid);
	free(models);
	return rc;
}
