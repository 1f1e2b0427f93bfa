// layernorm.cu - layer norm forward and backward, RMSNorm forward.
//
// One block per row, in a grid-stride loop over rows (row_threads() picks
// about eight elements per thread).  The forward pass reads the row twice:
// once for the statistics (sum and sum of squares in fp32, one fused block
// reduction) and once to normalise; rows are at most a few tens of KiB, so
// the second read hits L1/L2 and DRAM traffic stays one read plus one write.
//
// The backward pass follows Apex/Megatron: per row,
//   xhat = (x - mean) * rstd,  g = dy * gamma,
//   dx = rstd * (g - mean(g) - xhat * mean(g * xhat)),
// and the weight gradients dgamma = sum_rows(dy * xhat), dbeta =
// sum_rows(dy) are accumulated per block in shared memory (each thread owns
// the same columns in every row, so there are no races), written as
// per-block partials to the workspace, and summed by a second small kernel.
// The backward grid is therefore capped at a few blocks per SM.
#include "kernels-private.cuh"

template <typename T>
static __global__ void layernorm_fwd_kernel(const T *x, const T *gamma,
					    const T *beta, T *y, float *mean,
					    float *rstd, size_t rows,
					    size_t row, float eps)
{
	__shared__ float scratch[32];

	for (size_t r = blockIdx.x; r < rows; r += gridDim.x) {
		const T *xr = x + r * row;
		T *yr = y + r * row;
		float s = 0.0f, ss = 0.0f;

		for (size_t j = threadIdx.x; j < row; j += blockDim.x) {
			const float v = to_f(xr[j]);
			s += v;
			ss += v * v;
		}
		s = block_sum(s, scratch);
		ss = block_sum(ss, scratch);
		const float mu = s / (float)row;
		const float var = fmaxf(ss / (float)row - mu * mu, 0.0f);
		const float rs = rsqrtf(var + eps);

		for (size_t j = threadIdx.x; j < row; j += blockDim.x)
			yr[j] = from_f<T>((to_f(xr[j]) - mu) * rs * to_f(gamma[j]) +
					  to_f(beta[j]));
		if (threadIdx.x == 0) {
			if (mean)
				mean[r] = mu;
			if (rstd)
				rstd[r] = rs;
		}
	}
}

template <typename T>
static __global__ void rmsnorm_fwd_kernel(const T *x, const T *gamma, T *y,
					  float *rstd, size_t rows, size_t row,
					  float eps)
{
	__shared__ float scratch[32];

	for (size_t r = blockIdx.x; r < rows; r += gridDim.x) {
		const T *xr = x + r * row;
		T *yr = y + r * row;
		float ss = 0.0f;

		for (size_t j = threadIdx.x; j < row; j += blockDim.x) {
			const float v = to_f(xr[j]);
			ss += v * v;
		}
		ss = block_sum(ss, scratch);
		const float rs = rsqrtf(ss / (float)row + eps);

		for (size_t j = threadIdx.x; j < row; j += blockDim.x)
			yr[j] = from_f<T>(to_f(xr[j]) * rs * to_f(gamma[j]));
		if (threadIdx.x == 0 && rstd)
			rstd[r] = rs;
	}
}

// Dynamic shared memory: 2 * row floats of weight-gradient partials.
template <typename T>
static __global__ void layernorm_bwd_kernel(const T *dy, const T *x,
					    const T *gamma, const float *mean,
					    const float *rstd, T *dx,
					    float *partial, size_t rows,
					    size_t row)
{
	extern __shared__ float wgrad[];	/* [0, row): dgamma, [row, 2 row): dbeta */
	__shared__ float scratch[32];

	for (size_t j = threadIdx.x; j < row; j += blockDim.x) {
		wgrad[j] = 0.0f;
		wgrad[row + j] = 0.0f;
	}
	for (size_t r = blockIdx.x; r < rows; r += gridDim.x) {
		const T *dyr = dy + r * row;
		const T *xr = x + r * row;
		T *dxr = dx + r * row;
		const float mu = mean[r];
		const float rs = rstd[r];
		float sg = 0.0f, sgx = 0.0f;

		for (size_t j = threadIdx.x; j < row; j += blockDim.x) {
			const float d = to_f(dyr[j]);
			const float xhat = (to_f(xr[j]) - mu) * rs;
			const float g = d * to_f(gamma[j]);

			sg += g;
			sgx += g * xhat;
			wgrad[j] += d * xhat;
			wgrad[row + j] += d;
		}
		sg = block_sum(sg, scratch) / (float)row;
		sgx = block_sum(sgx, scratch) / (float)row;
		for (size_t j = threadIdx.x; j < row; j += blockDim.x) {
			const float xhat = (to_f(xr[j]) - mu) * rs;
			const float g = to_f(dyr[j]) * to_f(gamma[j]);

			dxr[j] = from_f<T>(rs * (g - sg - xhat * sgx));
		}
	}
	// Each thread wrote only its own columns of wgrad: no barrier needed
	// before it copies them out.
	for (size_t j = threadIdx.x; j < row; j += blockDim.x) {
		partial[(size_t)blockIdx.x * 2 * row + j] = wgrad[j];
		partial[(size_t)blockIdx.x * 2 * row + row + j] = wgrad[row + j];
	}
}

static __global__ void layernorm_bwd_reduce(const float *partial,
					    unsigned nblocks, size_t row,
					    float *dgamma, float *dbeta)
{
	const size_t j = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	float g = 0.0f, b = 0.0f;

	if (j >= row)
		return;
	for (unsigned i = 0; i < nblocks; i++) {
		g += partial[(size_t)i * 2 * row + j];
		b += partial[(size_t)i * 2 * row + row + j];
	}
	dgamma[j] = g;
	dbeta[j] = b;
}

// Blocks of the backward grid: at most two per SM, at most one per row.
static unsigned bwd_blocks(size_t rows)
{
	int sms = 0;
	int dev = 0;
	size_t cap;

	if (cudaGetDevice(&dev) != cudaSuccess ||
	    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
	    sms <= 0)
		sms = 132;
	cap = 2 * (size_t)sms;
	return (unsigned)(rows < cap ? rows : cap);
}

extern "C" size_t kernels_layernorm_bwd_workspace_bytes(size_t rows, size_t row)
{
	// The SM count does not change while the tool runs; allow for the
	// largest grid bwd_blocks() can return on this device.
	return (size_t)bwd_blocks(rows ? rows : 1) * 2 * row * sizeof(float);
}

extern "C" cudaError_t kernels_layernorm_fwd(enum kernels_dtype dtype,
					     const void *x, const void *gamma,
					     const void *beta, void *y,
					     float *mean, float *rstd,
					     size_t rows, size_t row, float eps,
					     cudaStream_t stream)
{
	if (row == 0)
		return cudaErrorInvalidValue;
	if (rows == 0)
		return cudaSuccess;
	KERNELS_DISPATCH(dtype, {
		layernorm_fwd_kernel<T><<<row_blocks(rows), row_threads(row), 0, stream>>>(
			(const T *)x, (const T *)gamma, (const T *)beta, (T *)y,
			mean, rstd, rows, row, eps);
	});
	return cudaGetLastError();
}

extern "C" cudaError_t kernels_rmsnorm_fwd(enum kernels_dtype dtype,
					   const void *x, const void *gamma,
					   void *y, float *rstd, size_t rows,
					   size_t row, float eps,
					   cudaStream_t stream)
{
	if (row == 0)
		return cudaErrorInvalidValue;
	if (rows == 0)
		return cudaSuccess;
	KERNELS_DISPATCH(dtype, {
		rmsnorm_fwd_kernel<T><<<row_blocks(rows), row_threads(row), 0, stream>>>(
			(const T *)x, (const T *)gamma, (T *)y, rstd, rows, row, eps);
	});
	return cudaGetLastError();
}

extern "C" cudaError_t kernels_layernorm_bwd(enum kernels_dtype dtype,
					     const void *dy, const void *x,
					     const void *gamma,
					     const float *mean,
					     const float *rstd, void *dx,
					     float *dgamma, float *dbeta,
					     float *workspace, size_t rows,
					     size_t row, cudaStream_t stream)
{
	const size_t smem = 2 * row * sizeof(float);
	unsigned nblocks;
	cudaError_t err;

	// 2 * 16384 floats = 128 KiB: within the opt-in limit of sm_80/sm_90.
	if (row == 0 || row > 16384)
		return cudaErrorInvalidValue;
	if (rows == 0)
		return cudaSuccess;
	nblocks = bwd_blocks(rows);
	KERNELS_DISPATCH(dtype, {
		err = cudaFuncSetAttribute(layernorm_bwd_kernel<T>,
					   cudaFuncAttributeMaxDynamicSharedMemorySize,
					   (int)smem);
		if (err != cudaSuccess)
			return err;
		layernorm_bwd_kernel<T><<<nblocks, row_threads(row), smem, stream>>>(
			(const T *)dy, (const T *)x, (const T *)gamma, mean, rstd,
			(T *)dx, workspace, rows, row);
	});
	err = cudaGetLastError();
	if (err != cudaSuccess)
		return err;
	layernorm_bwd_reduce<<<(unsigned)((row + 255) / 256), 256, 0, stream>>>(
		workspace, nblocks, row, dgamma, dbeta);
	return cudaGetLastError();
}
