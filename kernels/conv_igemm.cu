// conv_igemm.cu - implicit-GEMM 2-D convolution (fwd, bwd-data, bwd-filter), fp16 NHWC.
//
// The fallback convolution of ddlsim-calib when cuDNN is absent, and a
// reference implementation for its self-test.  Each pass is a GEMM
// C[M,N] = A[M,K] * B[K,N] whose operands are gathered on the fly from the
// activation and filter tensors (no im2col buffer):
//
//   pass        M          N          K            A          B
//   fwd         n*p*q      k          r*s*c        x (im2col) w
//   bwd-data    n*h*w      c          r*s*k        dy (gathered, stride-aware) w
//   bwd-filter  k          r*s*c      n*p*q        dy^T       x (im2col)
//
// and in all three the output is row-major C[m*N + n] in the tensor's own
// layout (y: NPQK, dx: NHWC, dw: KRSC).  Bwd-data is the "index
// transformation" form: input pixel (h, w) receives dy at
// p = (h + pad - r*dil) / stride whenever that division is exact.
//
// Tiling: 64x64 output tile per 256-thread block, K in steps of 16 staged
// through shared memory as fp32, 4x4 outputs per thread accumulated in fp32
// registers (the classic SGEMM register-blocking scheme; no tensor cores).
// The gathers load_a/load_b are also host functions, so that the index
// mapping can be unit-tested on a machine without a GPU.
// When the grid would have too few blocks to fill the GPU - always the case
// for bwd-filter, whose K is the whole batch - the K loop is split over
// gridDim.z and the partial sums are added atomically into an fp32
// workspace, then converted to fp16 by a second kernel.
#include "kernels-private.cuh"

#define BM 64
#define BN 64
#define BK 16
#define THREADS 256

struct igemm_params {
	const __half *a;	/* x or dy */
	const __half *b;	/* w or x */
	__half *out;		/* direct fp16 output (no split) */
	float *accum;		/* fp32 split-K accumulator, or NULL */
	long long M, N, K;
	int n, c, h, w, k, r, s, p, q, stride, pad, dil;
	long long ktiles_per_split;
};

template <int PASS>
static __host__ __device__ __forceinline__ float load_a(const struct igemm_params &g,
					       long long m, long long kk)
{
	if (PASS == KERNELS_CONV_FWD) {
		// m = (nb, op, oq), kk = (fr, fs, ch)
		const int oq = (int)(m % g.q);
		const long long t = m / g.q;
		const int op = (int)(t % g.p);
		const long long nb = t / g.p;
		const int ch = (int)(kk % g.c);
		const int t2 = (int)(kk / g.c);
		const int fs = t2 % g.s;
		const int fr = t2 / g.s;
		const int ih = op * g.stride - g.pad + fr * g.dil;
		const int iw = oq * g.stride - g.pad + fs * g.dil;

		if (ih < 0 || ih >= g.h || iw < 0 || iw >= g.w)
			return 0.0f;
		return __half2float(g.a[((nb * g.h + ih) * g.w + iw) * g.c + ch]);
	} else if (PASS == KERNELS_CONV_BWD_DATA) {
		// m = (nb, ih, iw), kk = (fr, fs, ko)
		const int iw = (int)(m % g.w);
		const long long t = m / g.w;
		const int ih = (int)(t % g.h);
		const long long nb = t / g.h;
		const int ko = (int)(kk % g.k);
		const int t2 = (int)(kk / g.k);
		const int fs = t2 % g.s;
		const int fr = t2 / g.s;
		const int hp = ih + g.pad - fr * g.dil;
		const int wq = iw + g.pad - fs * g.dil;

		if (hp < 0 || wq < 0 || hp % g.stride != 0 || wq % g.stride != 0)
			return 0.0f;
		const int op = hp / g.stride;
		const int oq = wq / g.stride;

		if (op >= g.p || oq >= g.q)
			return 0.0f;
		return __half2float(g.a[((nb * g.p + op) * g.q + oq) * g.k + ko]);
	} else {
		// A = dy^T: m = ko, kk = (nb, op, oq) = row of dy
		return __half2float(g.a[kk * g.k + m]);
	}
}

template <int PASS>
static __host__ __device__ __forceinline__ float load_b(const struct igemm_params &g,
					       long long kk, long long n)
{
	if (PASS == KERNELS_CONV_FWD) {
		// n = ko, kk = (fr, fs, ch): w[ko][fr][fs][ch]
		return __half2float(g.b[n * ((long long)g.r * g.s * g.c) + kk]);
	} else if (PASS == KERNELS_CONV_BWD_DATA) {
		// kk = (fr, fs, ko), n = ch
		const int ko = (int)(kk % g.k);
		const int t = (int)(kk / g.k);
		const int fs = t % g.s;
		const int fr = t / g.s;

		return __half2float(g.b[(((long long)ko * g.r + fr) * g.s + fs) * g.c + n]);
	} else {
		// kk = (nb, op, oq), n = (fr, fs, ch); B = im2col(x)
		const int ch = (int)(n % g.c);
		const int t = (int)(n / g.c);
		const int fs = t % g.s;
		const int fr = t / g.s;
		const int oq = (int)(kk % g.q);
		const long long t2 = kk / g.q;
		const int op = (int)(t2 % g.p);
		const long long nb = t2 / g.p;
		const int ih = op * g.stride - g.pad + fr * g.dil;
		const int iw = oq * g.stride - g.pad + fs * g.dil;

		if (ih < 0 || ih >= g.h || iw < 0 || iw >= g.w)
			return 0.0f;
		return __half2float(g.b[((nb * g.h + ih) * g.w + iw) * g.c + ch]);
	}
}

template <int PASS>
static __global__ void __launch_bounds__(THREADS)
igemm_kernel(const struct igemm_params g)
{
	__shared__ float As[BK][BM + 4];
	__shared__ float Bs[BK][BN + 4];
	const int tid = threadIdx.x;
	const int tx = tid % 16;	/* output columns tx*4 .. tx*4+3 */
	const int ty = tid / 16;	/* output rows ty*4 .. ty*4+3 */
	const long long m0 = (long long)blockIdx.x * BM;
	const long long n0 = (long long)blockIdx.y * BN;
	const long long ktiles = (g.K + BK - 1) / BK;
	const long long kt_begin = (long long)blockIdx.z * g.ktiles_per_split;
	long long kt_end = kt_begin + g.ktiles_per_split;
	float acc[4][4];

	if (kt_end > ktiles)
		kt_end = ktiles;
#pragma unroll
	for (int i = 0; i < 4; i++)
#pragma unroll
		for (int j = 0; j < 4; j++)
			acc[i][j] = 0.0f;

	for (long long kt = kt_begin; kt < kt_end; kt++) {
		const long long k0 = kt * BK;

#pragma unroll
		for (int i = 0; i < (BM * BK) / THREADS; i++) {
			const int e = tid + i * THREADS;
			const int kl = e % BK;
			const int ml = e / BK;
			const long long m = m0 + ml;
			const long long kk = k0 + kl;

			As[kl][ml] = (m < g.M && kk < g.K) ? load_a<PASS>(g, m, kk) : 0.0f;
		}
#pragma unroll
		for (int i = 0; i < (BN * BK) / THREADS; i++) {
			const int e = tid + i * THREADS;
			const int kl = e % BK;
			const int nl = e / BK;
			const long long n = n0 + nl;
			const long long kk = k0 + kl;

			Bs[kl][nl] = (n < g.N && kk < g.K) ? load_b<PASS>(g, kk, n) : 0.0f;
		}
		__syncthreads();
#pragma unroll
		for (int kl = 0; kl < BK; kl++) {
			float av[4], bv[4];

#pragma unroll
			for (int i = 0; i < 4; i++)
				av[i] = As[kl][ty * 4 + i];
#pragma unroll
			for (int j = 0; j < 4; j++)
				bv[j] = Bs[kl][tx * 4 + j];
#pragma unroll
			for (int i = 0; i < 4; i++)
#pragma unroll
				for (int j = 0; j < 4; j++)
					acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
		}
		__syncthreads();
	}

#pragma unroll
	for (int i = 0; i < 4; i++) {
		const long long m = m0 + ty * 4 + i;

		if (m >= g.M)
			continue;
#pragma unroll
		for (int j = 0; j < 4; j++) {
			const long long n = n0 + tx * 4 + j;

			if (n >= g.N)
				continue;
			if (g.accum)
				atomicAdd(&g.accum[m * g.N + n], acc[i][j]);
			else
				g.out[m * g.N + n] = __float2half_rn(acc[i][j]);
		}
	}
}

static __global__ void f32_to_f16(const float *src, __half *dst, size_t n)
{
	const size_t step = (size_t)gridDim.x * blockDim.x;

	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
		dst[i] = __float2half_rn(src[i]);
}

extern "C" int kernels_conv_out_h(const struct kernels_conv *cv)
{
	const int span = cv->dil * (cv->r - 1) + 1;

	if (cv->stride <= 0 || cv->h + 2 * cv->pad < span)
		return 0;
	return (cv->h + 2 * cv->pad - span) / cv->stride + 1;
}

extern "C" int kernels_conv_out_w(const struct kernels_conv *cv)
{
	const int span = cv->dil * (cv->s - 1) + 1;

	if (cv->stride <= 0 || cv->w + 2 * cv->pad < span)
		return 0;
	return (cv->w + 2 * cv->pad - span) / cv->stride + 1;
}

// Fills the GEMM view of (cv, pass) and chooses the split of the K loop:
// enough blocks for about four waves of 132 SMs, at least 8 K tiles each.
static void plan(const struct kernels_conv *cv, enum kernels_conv_pass pass,
		 struct igemm_params *g, dim3 *grid)
{
	const long long p = kernels_conv_out_h(cv), q = kernels_conv_out_w(cv);
	long long ktiles, tiles, splits, per;

	*g = igemm_params{};
	g->n = cv->n; g->c = cv->c; g->h = cv->h; g->w = cv->w;
	g->k = cv->k; g->r = cv->r; g->s = cv->s;
	g->p = (int)p; g->q = (int)q;
	g->stride = cv->stride; g->pad = cv->pad; g->dil = cv->dil;
	switch (pass) {
	case KERNELS_CONV_FWD:
		g->M = (long long)cv->n * p * q;
		g->N = cv->k;
		g->K = (long long)cv->r * cv->s * cv->c;
		break;
	case KERNELS_CONV_BWD_DATA:
		g->M = (long long)cv->n * cv->h * cv->w;
		g->N = cv->c;
		g->K = (long long)cv->r * cv->s * cv->k;
		break;
	default:
		g->M = cv->k;
		g->N = (long long)cv->r * cv->s * cv->c;
		g->K = (long long)cv->n * p * q;
		break;
	}
	ktiles = (g->K + BK - 1) / BK;
	tiles = ((g->M + BM - 1) / BM) * ((g->N + BN - 1) / BN);
	splits = (4 * 132 + tiles - 1) / tiles;
	if (splits > ktiles / 8)
		splits = ktiles / 8;
	if (splits > 4096)
		splits = 4096;
	if (splits < 1)
		splits = 1;
	per = (ktiles + splits - 1) / splits;
	splits = (ktiles + per - 1) / per;
	if (splits < 1)
		splits = 1;
	g->ktiles_per_split = per > 0 ? per : 1;
	*grid = dim3((unsigned)((g->M + BM - 1) / BM), (unsigned)((g->N + BN - 1) / BN),
		     (unsigned)splits);
}

static bool valid(const struct kernels_conv *cv)
{
	return cv->n > 0 && cv->c > 0 && cv->h > 0 && cv->w > 0 && cv->k > 0 &&
	       cv->r > 0 && cv->s > 0 && cv->stride > 0 && cv->pad >= 0 &&
	       cv->dil > 0 && kernels_conv_out_h(cv) > 0 && kernels_conv_out_w(cv) > 0;
}

extern "C" size_t kernels_conv_workspace_bytes(const struct kernels_conv *cv,
					       enum kernels_conv_pass pass)
{
	struct igemm_params g;
	dim3 grid;

	if (!valid(cv))
		return 0;
	plan(cv, pass, &g, &grid);
	return grid.z > 1 ? (size_t)g.M * (size_t)g.N * sizeof(float) : 0;
}

extern "C" cudaError_t kernels_conv(const struct kernels_conv *cv,
				    enum kernels_conv_pass pass, const void *a,
				    const void *b, void *out, void *workspace,
				    cudaStream_t stream)
{
	struct igemm_params g;
	dim3 grid;
	cudaError_t err;

	if (!valid(cv) || pass < KERNELS_CONV_FWD || pass > KERNELS_CONV_BWD_FILTER)
		return cudaErrorInvalidValue;
	plan(cv, pass, &g, &grid);
	if (grid.y > 65535)
		return cudaErrorInvalidValue;
	g.a = (const __half *)a;
	g.b = (const __half *)b;
	g.out = (__half *)out;
	g.accum = NULL;
	if (grid.z > 1) {
		if (!workspace)
			return cudaErrorInvalidValue;
		g.accum = (float *)workspace;
		err = cudaMemsetAsync(workspace, 0, (size_t)g.M * (size_t)g.N * sizeof(float), stream);
		if (err != cudaSuccess)
			return err;
	}
	switch (pass) {
	case KERNELS_CONV_FWD:
		igemm_kernel<KERNELS_CONV_FWD><<<grid, THREADS, 0, stream>>>(g);
		break;
	case KERNELS_CONV_BWD_DATA:
		igemm_kernel<KERNELS_CONV_BWD_DATA><<<grid, THREADS, 0, stream>>>(g);
		break;
	default:
		igemm_kernel<KERNELS_CONV_BWD_FILTER><<<grid, THREADS, 0, stream>>>(g);
		break;
	}
	err = cudaGetLastError();
	if (err != cudaSuccess || grid.z == 1)
		return err;
	{
		const size_t n = (size_t)g.M * (size_t)g.N;
		size_t blocks = (n + 255) / 256;

		if (blocks > 65536)
			blocks = 65536;
		f32_to_f16<<<(unsigned)blocks, 256, 0, stream>>>(g.accum, g.out, n);
	}
	return cudaGetLastError();
}
