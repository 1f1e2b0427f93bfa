// softmax.cu - row-wise softmax forward (optionally causal-masked) and backward.
//
// One block per row in a grid-stride loop, like layernorm.cu.  The forward
// pass makes three sweeps over the row - max, sum of exp(x - max), write -
// all but the first served from L1/L2; the backward pass two (sum of dy * y,
// then write).  The causal variant is the softmax of unfused attention
// scores: rows are query positions (row index modulo the sequence length)
// and the masked columns j > q are written as exact zeros and skipped by the
// reductions.  Arithmetic in fp32; exp via __expf on (x - max) * scale.
#include <float.h>

#include "kernels-private.cuh"

static __device__ __forceinline__ float block_max(float v, float *scratch)
{
	const unsigned lane = threadIdx.x % 32;
	const unsigned warp = threadIdx.x / 32;
	const unsigned nwarps = blockDim.x / 32;

	for (int off = 16; off > 0; off /= 2)
		v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
	__syncthreads();
	if (lane == 0)
		scratch[warp] = v;
	__syncthreads();
	v = lane < nwarps ? scratch[lane] : -FLT_MAX;
	for (int off = 16; off > 0; off /= 2)
		v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, off));
	return v;
}

template <typename T>
static __global__ void softmax_fwd_kernel(const T *x, T *y, size_t rows,
					  size_t row, size_t causal_seq,
					  float scale)
{
	__shared__ float scratch[32];

	for (size_t r = blockIdx.x; r < rows; r += gridDim.x) {
		const T *xr = x + r * row;
		T *yr = y + r * row;
		// Columns [0, valid) take part; the rest are masked.
		const size_t valid = causal_seq ? (r % causal_seq) + 1 : row;
		const size_t n = valid < row ? valid : row;
		float m = -FLT_MAX, s = 0.0f;

		for (size_t j = threadIdx.x; j < n; j += blockDim.x)
			m = fmaxf(m, to_f(xr[j]) * scale);
		m = block_max(m, scratch);
		for (size_t j = threadIdx.x; j < n; j += blockDim.x)
			s += __expf(to_f(xr[j]) * scale - m);
		s = block_sum(s, scratch);
		const float inv = 1.0f / s;

		for (size_t j = threadIdx.x; j < row; j += blockDim.x)
			yr[j] = from_f<T>(j < n ? __expf(to_f(xr[j]) * scale - m) * inv : 0.0f);
	}
}

template <typename T>
static __global__ void softmax_bwd_kernel(const T *y, const T *dy, T *dx,
					  size_t rows, size_t row)
{
	__shared__ float scratch[32];

	for (size_t r = blockIdx.x; r < rows; r += gridDim.x) {
		const T *yr = y + r * row;
		const T *dyr = dy + r * row;
		T *dxr = dx + r * row;
		float s = 0.0f;

		for (size_t j = threadIdx.x; j < row; j += blockDim.x)
			s += to_f(dyr[j]) * to_f(yr[j]);
		s = block_sum(s, scratch);
		for (size_t j = threadIdx.x; j < row; j += blockDim.x)
			dxr[j] = from_f<T>(to_f(yr[j]) * (to_f(dyr[j]) - s));
	}
}

extern "C" cudaError_t kernels_softmax_fwd(enum kernels_dtype dtype,
					   const void *x, void *y, size_t rows,
					   size_t row, size_t causal_seq,
					   float scale, cudaStream_t stream)
{
	if (row == 0)
		return cudaErrorInvalidValue;
	if (rows == 0)
		return cudaSuccess;
	KERNELS_DISPATCH(dtype, {
		softmax_fwd_kernel<T><<<row_blocks(rows), row_threads(row), 0, stream>>>(
			(const T *)x, (T *)y, rows, row, causal_seq, scale);
	});
	return cudaGetLastError();
}

extern "C" cudaError_t kernels_softmax_bwd(enum kernels_dtype dtype,
					   const void *y, const void *dy,
					   void *dx, size_t rows, size_t row,
					   cudaStream_t stream)
{
	if (row == 0)
		return cudaErrorInvalidValue;
	if (rows == 0)
		return cudaSuccess;
	KERNELS_DISPATCH(dtype, {
		softmax_bwd_kernel<T><<<row_blocks(rows), row_threads(row), 0, stream>>>(
			(const T *)y, (const T *)dy, (T *)dx, rows, row);
	});
	return cudaGetLastError();
}
