// gather.cu - packs strided elements into a contiguous buffer (for result checks).
//
// The correctness checks read rows of column-major matrices and columns of
// row-major ones: `count` elements `stride` apart.  cudaMemcpy2D with a
// one-element width moves one tiny row per element and can take tens of
// milliseconds for a long column; packing on the GPU and copying one
// contiguous block takes microseconds.  Elements are moved as opaque 1-, 2-,
// 4- or 8-byte words.
#include "kernels-private.cuh"

template <typename W>
static __global__ void gather_kernel(W *dst, const W *src, size_t stride, size_t count)
{
	const size_t step = (size_t)gridDim.x * blockDim.x;

	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += step)
		dst[i] = src[i * stride];
}

extern "C" cudaError_t kernels_gather(void *dst, const void *src, size_t elem,
				      size_t stride, size_t count, cudaStream_t stream)
{
	const unsigned threads = 256;
	size_t blocks = (count + threads - 1) / threads;

	if (count == 0)
		return cudaSuccess;
	if (blocks > 65536)
		blocks = 65536;
	switch (elem) {
	case 1:
		gather_kernel<<<(unsigned)blocks, threads, 0, stream>>>(
			(uint8_t *)dst, (const uint8_t *)src, stride, count);
		break;
	case 2:
		gather_kernel<<<(unsigned)blocks, threads, 0, stream>>>(
			(uint16_t *)dst, (const uint16_t *)src, stride, count);
		break;
	case 4:
		gather_kernel<<<(unsigned)blocks, threads, 0, stream>>>(
			(uint32_t *)dst, (const uint32_t *)src, stride, count);
		break;
	case 8:
		gather_kernel<<<(unsigned)blocks, threads, 0, stream>>>(
			(uint64_t *)dst, (const uint64_t *)src, stride, count);
		break;
	default:
		return cudaErrorInvalidValue;
	}
	return cudaGetLastError();
}
