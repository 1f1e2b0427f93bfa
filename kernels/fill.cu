// fill.cu - reproducible random fill of device buffers, in any element type.
//
// The calibration never times kernels on zeros (sparse-zero data lowers the
// power draw and flatters the clocks), so every buffer is filled with
// uniform(-1, 1) values.  The value of element i is a pure function of
// (seed, i) - a splitmix64 hash - so the fill is embarrassingly parallel and
// reproducible.  The top 24 bits of the hash give k, and u = (k - 2^23) / 2^23
// is exact in fp32; magnitudes below 2^-6 are raised to 2^-6 so that no value
// is zero, not even after rounding to e4m3 (whose smallest normal is 2^-6).
#include <cuda_fp8.h>

#include "kernels-private.cuh"

static __device__ __forceinline__ float uniform_at(uint64_t seed, size_t i)
{
	uint64_t z = seed + 0x9e3779b97f4a7c15ull * ((uint64_t)i + 1);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z = z ^ (z >> 31);
	const int k = (int)(z >> 40);	/* 24 bits */
	float u = (float)(k - 8388608) * (1.0f / 8388608.0f);
	const float floor_mag = 0.015625f;

	if (fabsf(u) < floor_mag)
		u = u < 0.0f ? -floor_mag : floor_mag;
	return u;
}

template <typename T> static __device__ __forceinline__ T store_as(float v) { return from_f<T>(v); }
template <> __device__ __forceinline__ __nv_fp8_e4m3 store_as<__nv_fp8_e4m3>(float v) { return __nv_fp8_e4m3(v); }

template <typename T>
static __global__ void fill_kernel(T *dst, size_t n, uint64_t seed)
{
	const size_t step = (size_t)gridDim.x * blockDim.x;

	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
		dst[i] = store_as<T>(uniform_at(seed, i));
}

extern "C" cudaError_t kernels_fill_uniform(void *dst, size_t n,
					    enum kernels_dtype dtype,
					    uint64_t seed, cudaStream_t stream)
{
	const unsigned threads = 256;
	size_t blocks = (n + threads - 1) / threads;

	if (n == 0)
		return cudaSuccess;
	if (blocks > 65536)
		blocks = 65536;
	switch (dtype) {
	case KERNELS_F32:
		fill_kernel<<<(unsigned)blocks, threads, 0, stream>>>((float *)dst, n, seed);
		break;
	case KERNELS_F16:
		fill_kernel<<<(unsigned)blocks, threads, 0, stream>>>((__half *)dst, n, seed);
		break;
	case KERNELS_BF16:
		fill_kernel<<<(unsigned)blocks, threads, 0, stream>>>((__nv_bfloat16 *)dst, n, seed);
		break;
	case KERNELS_E4M3:
		fill_kernel<<<(unsigned)blocks, threads, 0, stream>>>((__nv_fp8_e4m3 *)dst, n, seed);
		break;
	default:
		return cudaErrorInvalidValue;
	}
	return cudaGetLastError();
}
