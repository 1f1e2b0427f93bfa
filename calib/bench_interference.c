/* bench_interference.c - how much a communication kernel slows a GEMM beside it.
 *
 * NCCL runs a collective as one thread block per channel (one SM each,
 * src/enqueue.cc: grid = nChannels), streaming its buffers through HBM.
 * The engine slows compute while a collective runs (engine/engine.h); this
 * section measures the factor on the GPU: a bf16 GEMM of 8192 x 8192 x
 * 8192 through cublasGemmEx, timed alone (median of the timed runs), then
 * timed again while a copy kernel of `blocks` blocks (the channel count
 * NCCL's tuning model gives an 8-GPU ring on NVSwitch: 16, the default
 * here) copies 256 MiB back and forth on a second stream, started first
 * and long enough to cover the GEMM. The profile records both times; the
 * engine uses their ratio.
 *
 * It needs a GPU: on a machine without one, ddlsim-calib stops before any
 * section (device_info), so this file is built (nvcc) but cannot run. */
#include <stdio.h>
#include <stdlib.h>

#include "calib.h"

#define IF_N 8192
#define IF_COPY ((size_t)256 << 20)
#define IF_BLOCKS 16
#define IF_RUNS 10

static int gemm(struct calib *c, void *a, void *b, void *d)
{
	const float one = 1.0f, zero = 0.0f;
	return blas_failed(cublasGemmEx(c->blas, CUBLAS_OP_N, CUBLAS_OP_N, IF_N, IF_N, IF_N, &one,
					a, CUDA_R_16BF, IF_N, b, CUDA_R_16BF, IF_N, &zero, d,
					CUDA_R_16BF, IF_N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
			   "cublasGemmEx (interference)") ? -1 : 0;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

/* Median time of IF_RUNS GEMMs on c->stream, each with (copy) a copy
 * kernel started just before it on `side`. */
static int time_gemm(struct calib *c, void *a, void *b, void *d, void *src, void *dst,
		     cudaStream_t side, bool copy, double *median_s)
{
	double t[IF_RUNS];
	for (int r = 0; r < IF_RUNS; r++) {
		float ms = 0;
		if (copy && cuda_failed(kernels_copy_blocks(dst, src, IF_COPY, IF_BLOCKS, 64, side),
					"copy kernel"))
			return -1;
		if (cuda_failed(cudaEventRecord(c->ev_start[0], c->stream), "cudaEventRecord") ||
		    gemm(c, a, b, d) < 0 ||
		    cuda_failed(cudaEventRecord(c->ev_stop[0], c->stream), "cudaEventRecord") ||
		    cuda_failed(cudaDeviceSynchronize(), "cudaDeviceSynchronize") ||
		    cuda_failed(cudaEventElapsedTime(&ms, c->ev_start[0], c->ev_stop[0]),
				"cudaEventElapsedTime"))
			return -1;
		t[r] = 1e-3 * ms;
	}
	qsort(t, IF_RUNS, sizeof(t[0]), cmp_double);
	*median_s = t[IF_RUNS / 2];
	return 0;
}

int bench_interference(struct calib *c)
{
	size_t mat = (size_t)IF_N * IF_N * 2;
	void *a = NULL, *b = NULL, *d = NULL, *src = NULL, *dst = NULL;
	cudaStream_t side = NULL;
	int rc = -1;

	if (cuda_failed(cudaMalloc(&a, mat), "cudaMalloc") ||
	    cuda_failed(cudaMalloc(&b, mat), "cudaMalloc") ||
	    cuda_failed(cudaMalloc(&d, mat), "cudaMalloc") ||
	    cuda_failed(cudaMalloc(&src, IF_COPY), "cudaMalloc") ||
	    cuda_failed(cudaMalloc(&dst, IF_COPY), "cudaMalloc") ||
	    cuda_failed(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking), "cudaStreamCreate"))
		goto out;
	if (cuda_failed(cudaMemset(a, 0, mat), "cudaMemset") ||
	    cuda_failed(cudaMemset(b, 0, mat), "cudaMemset") ||
	    cuda_failed(cudaMemset(src, 0, IF_COPY), "cudaMemset"))
		goto out;
	if (gemm(c, a, b, d) < 0)   /* warm up */
		goto out;
	if (time_gemm(c, a, b, d, src, dst, side, false, &c->interf_alone_s) < 0 ||
	    time_gemm(c, a, b, d, src, dst, side, true, &c->interf_with_s) < 0)
		goto out;
	c->interf_blocks = IF_BLOCKS;
	calib_progress("interference: GEMM %d^3 bf16 %.3f ms alone, %.3f ms beside %d copy blocks",
		       IF_N, 1e3 * c->interf_alone_s, 1e3 * c->interf_with_s, IF_BLOCKS);
	rc = 0;
out:
	cudaDeviceSynchronize();
	if (side)
		cudaStreamDestroy(side);
	cudaFree(a);
	cudaFree(b);
	cudaFree(d);
	cudaFree(src);
	cudaFree(dst);
	return rc;
}
