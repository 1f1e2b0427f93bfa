/* report.c - the tool's messages and the status checks of CUDA, cuBLAS
 * and cuDNN calls (see calib.h).
 *
 * Errors follow the house format "ddlsim-calib: error: what went wrong
 * 'subject'"; progress lines start with "[calib]". Below calib.c and
 * every section, so the context and the sections call down only.
 */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "calib.h"

static void vreport(const char *level, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: %s: ", CALIB_NAME, level);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int calib_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("error", fmt, ap);
	va_end(ap);
	return -1;
}

void calib_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport("warning", fmt, ap);
	va_end(ap);
}

void calib_progress(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("[calib] ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

bool cuda_failed(cudaError_t err, const char *what)
{
	if (err == cudaSuccess)
		return false;
	calib_error("CUDA call failed: %s (%s) '%s'", cudaGetErrorString(err),
		    cudaGetErrorName(err), what);
	return true;
}

bool blas_failed(cublasStatus_t st, const char *what)
{
	if (st == CUBLAS_STATUS_SUCCESS)
		return false;
	calib_error("cuBLAS call failed: %s (%d) '%s'", cublasGetStatusString(st),
		    (int)st, what);
	return true;
}

#ifdef HAVE_CUDNN
bool dnn_failed(cudnnStatus_t st, const char *what)
{
	if (st == CUDNN_STATUS_SUCCESS)
		return false;
	calib_error("cuDNN call failed: %s (%d) '%s'", cudnnGetErrorString(st),
		    (int)st, what);
	return true;
}
#endif

double calib_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
