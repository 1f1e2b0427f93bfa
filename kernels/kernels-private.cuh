// kernels-private.cuh - device helpers shared by the kernels in this folder.
//
// Element-type conversion (every kernel loads its storage type, computes in
// fp32 and stores back), a block-wide sum reduction, the dtype dispatch used
// by every launcher, and the launch-shape rule of the row-wise kernels.  Only
// .cu files of kernels/ include this header.
#ifndef DDLSIM_KERNELS_PRIVATE_CUH
#define DDLSIM_KERNELS_PRIVATE_CUH

#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#include "kernels.h"

static __device__ __forceinline__ float to_f(float v) { return v; }
static __device__ __forceinline__ float to_f(__half v) { return __half2float(v); }
static __device__ __forceinline__ float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }

template <typename T> __device__ __forceinline__ T from_f(float v);
template <> __device__ __forceinline__ float from_f<float>(float v) { return v; }
template <> __device__ __forceinline__ __half from_f<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

// Sum of `v` over the whole block; every thread gets the result.  `scratch`
// holds at least 32 floats; blockDim.x is a multiple of 32 and at most 1024.
// The leading barrier makes back-to-back calls with the same scratch safe.
static __device__ __forceinline__ float block_sum(float v, float *scratch)
{
	const unsigned lane = threadIdx.x % 32;
	const unsigned warp = threadIdx.x / 32;
	const unsigned nwarps = blockDim.x / 32;

	for (int off = 16; off > 0; off /= 2)
		v += __shfl_xor_sync(0xffffffffu, v, off);
	__syncthreads();
	if (lane == 0)
		scratch[warp] = v;
	__syncthreads();
	v = lane < nwarps ? scratch[lane] : 0.0f;
	for (int off = 16; off > 0; off /= 2)
		v += __shfl_xor_sync(0xffffffffu, v, off);
	return v;
}

// Threads per block of the row-wise kernels (one block per row): about
// eight elements per thread, at least one warp, at most 512 threads.
static inline unsigned row_threads(size_t row)
{
	size_t t = (row / 8 + 31) / 32 * 32;

	if (t < 32)
		t = 32;
	if (t > 512)
		t = 512;
	return (unsigned)t;
}

// Number of blocks for a grid-stride loop over `rows` rows.
static inline unsigned row_blocks(size_t rows)
{
	return rows < (1u << 20) ? (unsigned)rows : (1u << 20);
}

// Calls KERNEL_CALL with T bound to the storage type of `dtype`.
#define KERNELS_DISPATCH(dtype, ...)                                    \
	do {                                                            \
		switch (dtype) {                                        \
		case KERNELS_F32: { typedef float T; __VA_ARGS__; } break; \
		case KERNELS_F16: { typedef __half T; __VA_ARGS__; } break; \
		case KERNELS_BF16: { typedef __nv_bfloat16 T; __VA_ARGS__; } break; \
		default: return cudaErrorInvalidValue;                  \
		}                                                       \
	} while (0)

#endif
