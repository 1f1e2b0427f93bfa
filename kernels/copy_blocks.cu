// copy_blocks.cu - a device copy on a fixed number of thread blocks, the
// stand-in for a communication kernel (NCCL runs one block per channel,
// each streaming its share of the buffer through HBM) while a GEMM runs
// beside it (calib/bench_interference.c).
#include "kernels-private.cuh"

static __global__ void copy_blocks_kernel(uint4 *dst, const uint4 *src, size_t n, int rounds)
{
	for (int r = 0; r < rounds; r++)
		for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
		     i += (size_t)gridDim.x * blockDim.x)
			dst[i] = src[i];
}

extern "C" cudaError_t kernels_copy_blocks(void *dst, const void *src, size_t bytes, int blocks,
					   int rounds, cudaStream_t stream)
{
	if (blocks < 1 || bytes < sizeof(uint4))
		return cudaErrorInvalidValue;
	copy_blocks_kernel<<<blocks, 512, 0, stream>>>((uint4 *)dst, (const uint4 *)src,
						       bytes / sizeof(uint4), rounds);
	return cudaGetLastError();
}
