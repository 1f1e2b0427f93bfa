/* kernels.h - C-callable launchers for the CUDA kernels that ddlsim-calib times.
 *
 * Every kernel in this folder is a template over the element type, written
 * in CUDA C++; this header is the only thing the C host code sees.  It uses
 * plain C types (no C++), so the calibration tool can be compiled as C11.
 *
 * Conventions shared by all launchers:
 *  - Tensors are dense, row-major, and their element type is given by an
 *    `enum kernels_dtype`.  Arithmetic is always done in fp32 registers;
 *    per-row statistics (mean, rstd) and weight gradients are fp32.
 *  - Launchers only enqueue work on `stream`; they return cudaSuccess or the
 *    error of the launch (cudaGetLastError), never synchronise, and never
 *    allocate memory.  Where scratch space is needed the caller passes it,
 *    sized by the matching *_workspace_bytes() function.
 *  - A launcher rejects shapes it does not support with
 *    cudaErrorInvalidValue before launching anything.
 */
#ifndef DDLSIM_KERNELS_H
#define DDLSIM_KERNELS_H

#include <stddef.h>
#include <stdint.h>
#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element types understood by the kernels.  E4M3 is only used by
 * kernels_fill_uniform (the GEMM benchmark feeds it to cublasLt). */
enum kernels_dtype {
	KERNELS_F32 = 0,
	KERNELS_F16 = 1,
	KERNELS_BF16 = 2,
	KERNELS_E4M3 = 3,
};

/* Fills `n` elements at `dst` with uniform(-1, 1) values whose magnitude is
 * at least 2^-6 (so no value is zero, even after rounding to e4m3).  The
 * value of element i depends only on (seed, i): it is reproducible. */
cudaError_t kernels_fill_uniform(void *dst, size_t n, enum kernels_dtype dtype,
				 uint64_t seed, cudaStream_t stream);

/* dst[i] = src[i * stride] for i < count, elements of `elem` bytes (1, 2, 4
 * or 8), both on the device. */
cudaError_t kernels_gather(void *dst, const void *src, size_t elem,
			   size_t stride, size_t count, cudaStream_t stream);

/* Enqueues a single-thread kernel that busy-waits `seconds` (at most 1 s)
 * on the GPU, holding back the work enqueued after it. */
cudaError_t kernels_spin(double seconds, cudaStream_t stream);

/* Copy bytes (a multiple of 16) from src to dst `rounds` times on exactly
 * `blocks` thread blocks of 512 threads (copy_blocks.cu): a communication
 * kernel's footprint of one block (one SM) per NCCL channel. */
cudaError_t kernels_copy_blocks(void *dst, const void *src, size_t bytes, int blocks,
				int rounds, cudaStream_t stream);

/* y[i] = gelu_tanh(x[i] + bias[i % cols]) over rows x cols elements.
 * Megatron's fused bias-GeLU (tanh approximation). */
cudaError_t kernels_bias_gelu(enum kernels_dtype dtype, const void *x,
			      const void *bias, void *y, size_t rows,
			      size_t cols, cudaStream_t stream);

/* SwiGLU with fused bias, Megatron layout: x is [rows, 2*cols] with the
 * gate in the first `cols` columns and the up projection in the last;
 * bias has 2*cols entries; y is [rows, cols]:
 * y[r,c] = silu(x[r,c] + bias[c]) * (x[r,cols+c] + bias[cols+c]). */
cudaError_t kernels_bias_swiglu(enum kernels_dtype dtype, const void *x,
				const void *bias, void *y, size_t rows,
				size_t cols, cudaStream_t stream);

/* Layer norm over rows of length `row`: y = (x - mean) * rstd * gamma + beta;
 * mean and rstd (fp32, one per row) are saved for the backward pass.
 * mean and rstd may be NULL (inference). */
cudaError_t kernels_layernorm_fwd(enum kernels_dtype dtype, const void *x,
				  const void *gamma, const void *beta, void *y,
				  float *mean, float *rstd, size_t rows,
				  size_t row, float eps, cudaStream_t stream);

/* Bytes of fp32 scratch that kernels_layernorm_bwd needs for its per-block
 * partial weight gradients. */
size_t kernels_layernorm_bwd_workspace_bytes(size_t rows, size_t row);

/* Layer norm backward: dx from (dy, x, gamma, mean, rstd); the fp32 weight
 * gradients dgamma[row], dbeta[row] are sums over all rows (overwritten,
 * not accumulated).  `workspace` holds
 * kernels_layernorm_bwd_workspace_bytes(rows, row) bytes. */
cudaError_t kernels_layernorm_bwd(enum kernels_dtype dtype, const void *dy,
				  const void *x, const void *gamma,
				  const float *mean, const float *rstd,
				  void *dx, float *dgamma, float *dbeta,
				  float *workspace, size_t rows, size_t row,
				  cudaStream_t stream);

/* RMSNorm: y = x * rsqrt(mean(x^2) + eps) * gamma; rstd (fp32, one per
 * row, may be NULL) is saved for the backward pass. */
cudaError_t kernels_rmsnorm_fwd(enum kernels_dtype dtype, const void *x,
				const void *gamma, void *y, float *rstd,
				size_t rows, size_t row, float eps,
				cudaStream_t stream);

/* Row-wise softmax of scale * x.  With causal_seq > 0 the rows are the
 * query rows of causal attention scores: row i has query index
 * q = i % causal_seq, columns j > q are masked and their output is 0.
 * In-place operation (x == y) is allowed. */
cudaError_t kernels_softmax_fwd(enum kernels_dtype dtype, const void *x,
				void *y, size_t rows, size_t row,
				size_t causal_seq, float scale,
				cudaStream_t stream);

/* Softmax backward: dx = y * (dy - sum_j(dy * y)) row-wise.  In-place
 * operation (dx == dy) is allowed. */
cudaError_t kernels_softmax_bwd(enum kernels_dtype dtype, const void *y,
				const void *dy, void *dx, size_t rows,
				size_t row, cudaStream_t stream);

/* Convolution passes of the implicit-GEMM kernel. */
enum kernels_conv_pass {
	KERNELS_CONV_FWD = 0,
	KERNELS_CONV_BWD_DATA = 1,
	KERNELS_CONV_BWD_FILTER = 2,
};

/* A 2-D convolution problem.  Activations are NHWC fp16 (x: n,h,w,c;
 * y: n,p,q,k), filters are KRSC fp16 (k,r,s,c), i.e. cuDNN's
 * CUDNN_TENSOR_NHWC for both; cross-correlation as in every framework.
 * p = (h + 2*pad - dil*(r-1) - 1) / stride + 1, likewise q. */
struct kernels_conv {
	int n, c, h, w;		/* input batch, channels, height, width */
	int k, r, s;		/* output channels, filter height, width */
	int stride, pad, dil;	/* same in both spatial dimensions */
};

/* Output height and width of `cv`; 0 when the problem is empty. */
int kernels_conv_out_h(const struct kernels_conv *cv);
int kernels_conv_out_w(const struct kernels_conv *cv);

/* Bytes of scratch that kernels_conv needs for `pass` (0 when none). */
size_t kernels_conv_workspace_bytes(const struct kernels_conv *cv,
				    enum kernels_conv_pass pass);

/* Runs one pass of `cv` with the project's shared-memory tiled implicit
 * GEMM (fp16 in, fp32 accumulation, fp16 out):
 *   FWD:        out = y  from a = x,  b = w
 *   BWD_DATA:   out = dx from a = dy, b = w
 *   BWD_FILTER: out = dw from a = dy, b = x
 * `workspace` holds kernels_conv_workspace_bytes(cv, pass) bytes. */
cudaError_t kernels_conv(const struct kernels_conv *cv,
			 enum kernels_conv_pass pass, const void *a,
			 const void *b, void *out, void *workspace,
			 cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif
