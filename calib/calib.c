/* calib.c - the calibration context: handles, results, checks and error reporting.
 *
 * calib_open() prepares everything every section needs on the selected
 * device: one non-blocking stream, a cuBLAS handle bound to it with a
 * 32 MiB workspace (what PyTorch gives cuBLAS on Hopper), a cuBLASLt handle,
 * a cuDNN handle when built with cuDNN, and the CUDA event pairs used by
 * timer.c.  Results accumulate in a growable array of `struct calib_point`.
 * The tool's messages and status checks are in report.c.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "calib.h"

int calib_open(struct calib *c)
{
	int i;

	if (cuda_failed(cudaSetDevice(c->device), "cudaSetDevice"))
		return -1;
	if (device_info_read(c) < 0)
		return -1;
	if (cuda_failed(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking),
			"cudaStreamCreateWithFlags"))
		return -1;
	for (i = 0; i <= CALIB_MAX_RUNS; i++) {
		if (cuda_failed(cudaEventCreate(&c->ev_start[i]), "cudaEventCreate") ||
		    cuda_failed(cudaEventCreate(&c->ev_stop[i]), "cudaEventCreate"))
			return -1;
	}
	if (blas_failed(cublasCreate(&c->blas), "cublasCreate") ||
	    blas_failed(cublasSetStream(c->blas, c->stream), "cublasSetStream") ||
	    blas_failed(cublasSetMathMode(c->blas, CUBLAS_DEFAULT_MATH), "cublasSetMathMode") ||
	    blas_failed(cublasLtCreate(&c->lt), "cublasLtCreate"))
		return -1;
	c->blas_workspace_bytes = 32u << 20;
	if (cuda_failed(cudaMalloc(&c->blas_workspace, c->blas_workspace_bytes),
			"cudaMalloc cuBLAS workspace"))
		return -1;
	if (blas_failed(cublasSetWorkspace(c->blas, c->blas_workspace,
					   c->blas_workspace_bytes),
			"cublasSetWorkspace"))
		return -1;
#ifdef HAVE_CUDNN
	if (dnn_failed(cudnnCreate(&c->dnn), "cudnnCreate") ||
	    dnn_failed(cudnnSetStream(c->dnn, c->stream), "cudnnSetStream"))
		return -1;
#endif
	return 0;
}

void calib_close(struct calib *c)
{
	int i;

#ifdef HAVE_CUDNN
	if (c->dnn)
		cudnnDestroy(c->dnn);
	c->dnn = NULL;
#endif
	if (c->blas)
		cublasDestroy(c->blas);
	c->blas = NULL;
	if (c->lt)
		cublasLtDestroy(c->lt);
	c->lt = NULL;
	if (c->blas_workspace)
		cudaFree(c->blas_workspace);
	c->blas_workspace = NULL;
	for (i = 0; i <= CALIB_MAX_RUNS; i++) {
		if (c->ev_start[i])
			cudaEventDestroy(c->ev_start[i]);
		if (c->ev_stop[i])
			cudaEventDestroy(c->ev_stop[i]);
		c->ev_start[i] = c->ev_stop[i] = NULL;
	}
	if (c->stream)
		cudaStreamDestroy(c->stream);
	c->stream = NULL;
	free(c->points);
	c->points = NULL;
	c->npoints = c->cap_points = 0;
}

int calib_add(struct calib *c, const struct calib_point *pt)
{
	if (c->npoints == c->cap_points) {
		size_t cap = c->cap_points ? 2 * c->cap_points : 256;
		struct calib_point *p = realloc(c->points, cap * sizeof(*p));

		if (!p)
			return calib_error("out of memory 'results'");
		c->points = p;
		c->cap_points = cap;
	}
	c->points[c->npoints++] = *pt;
	return 0;
}

void calib_judge(struct calib_verdict *v, double got, double want, double lim, const char *where)
{
	const double ratio = fabs(got - want) / lim;

	if (!(fabs(got - want) <= lim))
		v->ok = false;
	if (!(ratio <= v->worst)) {
		v->worst = ratio;
		v->got = got;
		v->want = want;
		v->where = where;
	}
}

int calib_check(struct calib *c, bool ok, const char *fmt, ...)
{
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (c->self_test) {
		printf("%s %s\n", ok ? "ok  " : "FAIL", what);
		fflush(stdout);
		if (ok)
			c->checks_passed++;
		else
			c->checks_failed++;
		return 0;
	}
	if (ok) {
		c->checks_passed++;
		return 0;
	}
	c->checks_failed++;
	return calib_error("result check failed, no profile written '%s'", what);
}
