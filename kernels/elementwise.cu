// elementwise.cu - fused bias + activation kernels: bias-GeLU and bias-SwiGLU.
//
// These are the memory-bound element-wise ops of a transformer MLP (Megatron
// fuses the bias add into the activation).  Each thread handles groups of
// four consecutive elements with one aligned vector load/store per operand
// (16 bytes in fp32, 8 bytes in fp16/bf16), in a grid-stride loop; when the
// row length is not a multiple of four, or a pointer is not aligned to the
// vector, a scalar path does the same work.  Arithmetic is in fp32: GeLU is
// the tanh approximation, SiLU is x / (1 + exp(-x)).
#include "kernels-private.cuh"

template <typename T> struct alignas(4 * sizeof(T)) vec4 {
	T v[4];
};

static __device__ __forceinline__ float gelu_tanh(float x)
{
	const float k0 = 0.7978845608028654f;	/* sqrt(2/pi) */
	const float k1 = 0.044715f;

	return 0.5f * x * (1.0f + tanhf(k0 * (x + k1 * x * x * x)));
}

static __device__ __forceinline__ float silu(float x)
{
	return x / (1.0f + __expf(-x));
}

template <typename T>
static __global__ void bias_gelu_vec(const T *x, const T *bias, T *y,
				     size_t groups, size_t cols)
{
	const size_t step = (size_t)gridDim.x * blockDim.x;

	for (size_t g = (size_t)blockIdx.x * blockDim.x + threadIdx.x; g < groups; g += step) {
		const size_t i = g * 4;
		const vec4<T> xv = reinterpret_cast<const vec4<T> *>(x)[g];
		const vec4<T> bv = reinterpret_cast<const vec4<T> *>(bias)[(i % cols) / 4];
		vec4<T> yv;

#pragma unroll
		for (int j = 0; j < 4; j++)
			yv.v[j] = from_f<T>(gelu_tanh(to_f(xv.v[j]) + to_f(bv.v[j])));
		reinterpret_cast<vec4<T> *>(y)[g] = yv;
	}
}

template <typename T>
static __global__ void bias_gelu_scalar(const T *x, const T *bias, T *y,
					size_t n, size_t cols)
{
	const size_t step = (size_t)gridDim.x * blockDim.x;

	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
		y[i] = from_f<T>(gelu_tanh(to_f(x[i]) + to_f(bias[i % cols])));
}

template <typename T>
static __global__ void bias_swiglu_vec(const T *x, const T *bias, T *y,
				       size_t groups, size_t cols)
{
	const size_t step = (size_t)gridDim.x * blockDim.x;

	for (size_t g = (size_t)blockIdx.x * blockDim.x + threadIdx.x; g < groups; g += step) {
		const size_t i = g * 4;
		const size_t r = i / cols;
		const size_t c = i % cols;
		const vec4<T> gv = *reinterpret_cast<const vec4<T> *>(x + r * 2 * cols + c);
		const vec4<T> uv = *reinterpret_cast<const vec4<T> *>(x + r * 2 * cols + cols + c);
		const vec4<T> gb = *reinterpret_cast<const vec4<T> *>(bias + c);
		const vec4<T> ub = *reinterpret_cast<const vec4<T> *>(bias + cols + c);
		vec4<T> yv;

#pragma unroll
		for (int j = 0; j < 4; j++)
			yv.v[j] = from_f<T>(silu(to_f(gv.v[j]) + to_f(gb.v[j])) *
					    (to_f(uv.v[j]) + to_f(ub.v[j])));
		reinterpret_cast<vec4<T> *>(y)[g] = yv;
	}
}

template <typename T>
static __global__ void bias_swiglu_scalar(const T *x, const T *bias, T *y,
					  size_t n, size_t cols)
{
	const size_t step = (size_t)gridDim.x * blockDim.x;

	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
		const size_t r = i / cols;
		const size_t c = i % cols;
		const float gate = to_f(x[r * 2 * cols + c]) + to_f(bias[c]);
		const float up = to_f(x[r * 2 * cols + cols + c]) + to_f(bias[cols + c]);

		y[i] = from_f<T>(silu(gate) * up);
	}
}

static unsigned grid_for(size_t work, unsigned threads)
{
	size_t blocks = (work + threads - 1) / threads;

	if (blocks > 65536)
		blocks = 65536;
	return blocks ? (unsigned)blocks : 1;
}

static bool vec_ok(size_t cols, size_t align, const void *a, const void *b,
		   const void *c)
{
	return cols % 4 == 0 && (uintptr_t)a % align == 0 &&
	       (uintptr_t)b % align == 0 && (uintptr_t)c % align == 0;
}

extern "C" cudaError_t kernels_bias_gelu(enum kernels_dtype dtype,
					 const void *x, const void *bias,
					 void *y, size_t rows, size_t cols,
					 cudaStream_t stream)
{
	const unsigned threads = 256;
	const size_t n = rows * cols;

	if (cols == 0)
		return cudaErrorInvalidValue;
	if (n == 0)
		return cudaSuccess;
	KERNELS_DISPATCH(dtype, {
		if (vec_ok(cols, 4 * sizeof(T), x, bias, y))
			bias_gelu_vec<T><<<grid_for(n / 4, threads), threads, 0, stream>>>(
				(const T *)x, (const T *)bias, (T *)y, n / 4, cols);
		else
			bias_gelu_scalar<T><<<grid_for(n, threads), threads, 0, stream>>>(
				(const T *)x, (const T *)bias, (T *)y, n, cols);
	});
	return cudaGetLastError();
}

extern "C" cudaError_t kernels_bias_swiglu(enum kernels_dtype dtype,
					   const void *x, const void *bias,
					   void *y, size_t rows, size_t cols,
					   cudaStream_t stream)
{
	const unsigned threads = 256;
	const size_t n = rows * cols;

	if (cols == 0)
		return cudaErrorInvalidValue;
	if (n == 0)
		return cudaSuccess;
	KERNELS_DISPATCH(dtype, {
		if (vec_ok(cols, 4 * sizeof(T), x, bias, y))
			bias_swiglu_vec<T><<<grid_for(n / 4, threads), threads, 0, stream>>>(
				(const T *)x, (const T *)bias, (T *)y, n / 4, cols);
		else
			bias_swiglu_scalar<T><<<grid_for(n, threads), threads, 0, stream>>>(
				(const T *)x, (const T *)bias, (T *)y, n, cols);
	});
	return cudaGetLastError();
}
