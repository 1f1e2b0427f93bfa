/* bench_conv.c - convolution timings (fwd, bwd-data, bwd-filter) through cuDNN or kernels/conv_igemm.cu.
 *
 * Problems: the distinct conv layers of ResNet-50 and four common 3x3
 * layers (shapes.c) at batch 32, 64 and 128 (32 only with --quick).  Data
 * are fp16 in NHWC (activations) and KRSC (filters) - channels-last, the
 * layout in which cuDNN uses tensor cores - with fp32 accumulation.
 *
 * Implementation.  With cuDNN (HAVE_CUDNN), each problem and pass runs
 * cudnnFind*AlgorithmEx on the real buffers with a 256 MiB workspace, keeps
 * the fastest algorithm that succeeded (with the math type it was found
 * with), and records it as "cudnn:<ALGO>" (e.g. "cudnn:IMPLICIT_PRECOMP_GEMM",
 * "cudnn:BWD_FILTER_ALGO_1").  Without cuDNN, or when cuDNN has no algorithm
 * for a problem, the project's implicit-GEMM kernel runs instead and the
 * point says "igemm".  --self-test checks both implementations.
 *
 * Check.  Sampled outputs are compared with a CPU direct convolution in
 * double precision written from the definitions (not from the GEMM view of
 * conv_igemm.cu): |got - ref| <= 2e-2 * (sqrt(sum of squared products) +
 * |ref|), loose enough for Winograd and FFT algorithms, tight enough to
 * catch a wrong index.  Flops are 2*N*P*Q*K*C*R*S for every pass.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib.h"

#define CONV_WS_BYTES ((size_t)256 << 20)
#define CONV_TOL 2e-2

static const char *pass_name(enum kernels_conv_pass pass)
{
	switch (pass) {
	case KERNELS_CONV_FWD: return "fwd";
	case KERNELS_CONV_BWD_DATA: return "bwd_data";
	case KERNELS_CONV_BWD_FILTER: return "bwd_filter";
	}
	return "?";
}

struct conv {
	struct calib *c;
	struct kernels_conv cv;
	enum kernels_conv_pass pass;
	int p, q;
	struct arena ar;	/* 0: x or dx, 1: w or dw, 2: y or dy */
	void *ws;		/* shared workspace (not rotated) */
	size_t ws_bytes;
	bool dnn;
	char impl[48];
#ifdef HAVE_CUDNN
	cudnnTensorDescriptor_t xd, yd;
	cudnnFilterDescriptor_t wd;
	cudnnConvolutionDescriptor_t cd;
	int algo;
#endif
};

static int enqueue_conv(void *arg, int i)
{
	struct conv *v = arg;
	void *x = arena_ptr(&v->ar, 0, i);
	void *w = arena_ptr(&v->ar, 1, i);
	void *y = arena_ptr(&v->ar, 2, i);

#ifdef HAVE_CUDNN
	if (v->dnn) {
		const float alpha = 1.0f, beta = 0.0f;
		cudnnHandle_t h = v->c->dnn;

		switch (v->pass) {
		case KERNELS_CONV_FWD:
			return dnn_failed(cudnnConvolutionForward(h, &alpha, v->xd, x, v->wd, w, v->cd,
								  (cudnnConvolutionFwdAlgo_t)v->algo,
								  v->ws, v->ws_bytes, &beta, v->yd, y),
					  "cudnnConvolutionForward") ? -1 : 0;
		case KERNELS_CONV_BWD_DATA:
			return dnn_failed(cudnnConvolutionBackwardData(h, &alpha, v->wd, w, v->yd, y, v->cd,
								       (cudnnConvolutionBwdDataAlgo_t)v->algo,
								       v->ws, v->ws_bytes, &beta, v->xd, x),
					  "cudnnConvolutionBackwardData") ? -1 : 0;
		case KERNELS_CONV_BWD_FILTER:
			return dnn_failed(cudnnConvolutionBackwardFilter(h, &alpha, v->xd, x, v->yd, y, v->cd,
									 (cudnnConvolutionBwdFilterAlgo_t)v->algo,
									 v->ws, v->ws_bytes, &beta, v->wd, w),
					  "cudnnConvolutionBackwardFilter") ? -1 : 0;
		}
		return -1;
	}
#endif
	switch (v->pass) {
	case KERNELS_CONV_FWD:
		return cuda_failed(kernels_conv(&v->cv, v->pass, x, w, y, v->ws, v->c->stream),
				   "kernels_conv fwd") ? -1 : 0;
	case KERNELS_CONV_BWD_DATA:
		return cuda_failed(kernels_conv(&v->cv, v->pass, y, w, x, v->ws, v->c->stream),
				   "kernels_conv bwd_data") ? -1 : 0;
	case KERNELS_CONV_BWD_FILTER:
		return cuda_failed(kernels_conv(&v->cv, v->pass, y, x, w, v->ws, v->c->stream),
				   "kernels_conv bwd_filter") ? -1 : 0;
	}
	return -1;
}

#ifdef HAVE_CUDNN
static const char *fwd_algo_name(int a)
{
	static const char *names[] = {
		"IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT",
		"FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED",
	};
	return a >= 0 && a < 8 ? names[a] : "UNKNOWN";
}

static const char *bwd_data_algo_name(int a)
{
	static const char *names[] = {
		"BWD_DATA_ALGO_0", "BWD_DATA_ALGO_1", "BWD_DATA_FFT", "BWD_DATA_FFT_TILING",
		"BWD_DATA_WINOGRAD", "BWD_DATA_WINOGRAD_NONFUSED",
	};
	return a >= 0 && a < 6 ? names[a] : "UNKNOWN";
}

static const char *bwd_filter_algo_name(int a)
{
	static const char *names[] = {
		"BWD_FILTER_ALGO_0", "BWD_FILTER_ALGO_1", "BWD_FILTER_FFT", "BWD_FILTER_ALGO_3",
		"BWD_FILTER_WINOGRAD", "BWD_FILTER_WINOGRAD_NONFUSED", "BWD_FILTER_FFT_TILING",
	};
	return a >= 0 && a < 7 ? names[a] : "UNKNOWN";
}

static void dnn_finish(struct conv *v)
{
	if (v->cd)
		cudnnDestroyConvolutionDescriptor(v->cd);
	if (v->wd)
		cudnnDestroyFilterDescriptor(v->wd);
	if (v->yd)
		cudnnDestroyTensorDescriptor(v->yd);
	if (v->xd)
		cudnnDestroyTensorDescriptor(v->xd);
	v->cd = NULL;
	v->wd = NULL;
	v->xd = v->yd = NULL;
}

/* Creates and sets the x, y, w and convolution descriptors of the problem, checking
 * cuDNN's output shape against ours; 0 or -1. */
static int dnn_describe(struct conv *v)
{
	const struct kernels_conv *cv = &v->cv;
	int on = 0, oc = 0, oh = 0, ow = 0;

	if (dnn_failed(cudnnCreateTensorDescriptor(&v->xd), "cudnnCreateTensorDescriptor") ||
	    dnn_failed(cudnnCreateTensorDescriptor(&v->yd), "cudnnCreateTensorDescriptor") ||
	    dnn_failed(cudnnCreateFilterDescriptor(&v->wd), "cudnnCreateFilterDescriptor") ||
	    dnn_failed(cudnnCreateConvolutionDescriptor(&v->cd), "cudnnCreateConvolutionDescriptor"))
		return -1;
	if (dnn_failed(cudnnSetTensor4dDescriptor(v->xd, CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF,
						  cv->n, cv->c, cv->h, cv->w), "x descriptor") ||
	    dnn_failed(cudnnSetFilter4dDescriptor(v->wd, CUDNN_DATA_HALF, CUDNN_TENSOR_NHWC,
						  cv->k, cv->c, cv->r, cv->s), "w descriptor") ||
	    dnn_failed(cudnnSetConvolution2dDescriptor(v->cd, cv->pad, cv->pad, cv->stride,
						       cv->stride, cv->dil, cv->dil,
						       CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
		       "conv descriptor") ||
	    dnn_failed(cudnnSetConvolutionMathType(v->cd, CUDNN_TENSOR_OP_MATH), "math type") ||
	    dnn_failed(cudnnGetConvolution2dForwardOutputDim(v->cd, v->xd, v->wd, &on, &oc, &oh, &ow),
		       "cudnnGetConvolution2dForwardOutputDim"))
		return -1;
	if (on != cv->n || oc != cv->k || oh != v->p || ow != v->q)
		return calib_error("cuDNN output shape %dx%dx%dx%d differs from %dx%dx%dx%d 'conv'",
				   on, oc, oh, ow, cv->n, cv->k, v->p, v->q);
	if (dnn_failed(cudnnSetTensor4dDescriptor(v->yd, CUDNN_TENSOR_NHWC, CUDNN_DATA_HALF,
						  cv->n, cv->k, v->p, v->q), "y descriptor"))
		return -1;
	return 0;
}

/* The first of cuDNN's timed forward algorithms that ran into v->algo, v->impl and *math. */
static cudnnStatus_t find_fwd(struct conv *v, void *x, void *w, void *y, cudnnMathType_t *math)
{
	cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
	int ret = 0;
	cudnnStatus_t st = cudnnFindConvolutionForwardAlgorithmEx(v->c->dnn, v->xd, x, v->wd, w, v->cd,
								   v->yd, y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
								   &ret, perf, v->ws, v->ws_bytes);

	for (int i = 0; st == CUDNN_STATUS_SUCCESS && i < ret; i++)
		if (perf[i].status == CUDNN_STATUS_SUCCESS) {
			v->algo = (int)perf[i].algo;
			*math = perf[i].mathType;
			snprintf(v->impl, sizeof(v->impl), "cudnn:%s", fwd_algo_name(v->algo));
			break;
		}
	return st;
}

/* As find_fwd(), for the data gradient. */
static cudnnStatus_t find_bwd_data(struct conv *v, void *x, void *w, void *y, cudnnMathType_t *math)
{
	cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
	int ret = 0;
	cudnnStatus_t st = cudnnFindConvolutionBackwardDataAlgorithmEx(v->c->dnn, v->wd, w, v->yd, y,
									v->cd, v->xd, x,
									CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
									&ret, perf, v->ws, v->ws_bytes);

	for (int i = 0; st == CUDNN_STATUS_SUCCESS && i < ret; i++)
		if (perf[i].status == CUDNN_STATUS_SUCCESS) {
			v->algo = (int)perf[i].algo;
			*math = perf[i].mathType;
			snprintf(v->impl, sizeof(v->impl), "cudnn:%s", bwd_data_algo_name(v->algo));
			break;
		}
	return st;
}

/* As find_fwd(), for the filter gradient. */
static cudnnStatus_t find_bwd_filter(struct conv *v, void *x, void *w, void *y, cudnnMathType_t *math)
{
	cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
	int ret = 0;
	cudnnStatus_t st = cudnnFindConvolutionBackwardFilterAlgorithmEx(v->c->dnn, v->xd, x, v->yd, y,
									  v->cd, v->wd, w,
									  CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
									  &ret, perf, v->ws, v->ws_bytes);

	for (int i = 0; st == CUDNN_STATUS_SUCCESS && i < ret; i++)
		if (perf[i].status == CUDNN_STATUS_SUCCESS) {
			v->algo = (int)perf[i].algo;
			*math = perf[i].mathType;
			snprintf(v->impl, sizeof(v->impl), "cudnn:%s", bwd_filter_algo_name(v->algo));
			break;
		}
	return st;
}

/* Describes the problem to cuDNN and finds the fastest algorithm on the
 * buffers of copy 0.  Returns 0 (v->dnn set), 1 when cuDNN has no working
 * algorithm, or -1. */
static int dnn_init(struct conv *v)
{
	void *x = arena_ptr(&v->ar, 0, 0), *w = arena_ptr(&v->ar, 1, 0), *y = arena_ptr(&v->ar, 2, 0);
	cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
	cudnnMathType_t math = CUDNN_DEFAULT_MATH;

	if (dnn_describe(v) < 0)
		return -1;
	v->algo = -1;
	switch (v->pass) {
	case KERNELS_CONV_FWD:
		st = find_fwd(v, x, w, y, &math);
		break;
	case KERNELS_CONV_BWD_DATA:
		st = find_bwd_data(v, x, w, y, &math);
		break;
	case KERNELS_CONV_BWD_FILTER:
		st = find_bwd_filter(v, x, w, y, &math);
		break;
	}
	/* Any refusal (not supported, bad parameter for this layout, no
	 * algorithm succeeded) falls back to the project kernel. */
	if (st != CUDNN_STATUS_SUCCESS || v->algo < 0) {
		if (st != CUDNN_STATUS_SUCCESS)
			calib_warn("cudnnFind*AlgorithmEx: %s", cudnnGetErrorString(st));
		(void)cudaGetLastError();
		return 1;
	}
	/* Run with the math type the algorithm was found with. */
	if (dnn_failed(cudnnSetConvolutionMathType(v->cd, math), "math type"))
		return -1;
	v->dnn = true;
	return 0;
}
#endif

/* Element of an NHWC / KRSC host copy. */
static double at4(const void *buf, int d1, int d2, int d3, long long i0, int i1, int i2, int i3)
{
	return dtype_load(KERNELS_F16, buf, (size_t)(((i0 * d1 + i1) * d2 + i2) * d3 + i3));
}

/* Reference value of output element `e` of the pass, and the root sum of
 * squared products, from host copies of x, w, y (as inputs). */
static double reference(const struct conv *v, const void *x, const void *w, const void *y,
			size_t e, double *rss)
{
	const struct kernels_conv *cv = &v->cv;
	double ref = 0.0, sq = 0.0, prod;

	switch (v->pass) {
	case KERNELS_CONV_FWD: {
		const int ko = (int)(e % (size_t)cv->k);
		const int oq = (int)(e / (size_t)cv->k % (size_t)v->q);
		const int op = (int)(e / ((size_t)cv->k * v->q) % (size_t)v->p);
		const long long nb = (long long)(e / ((size_t)cv->k * v->q * v->p));
		int fr, fs, ch;

		for (fr = 0; fr < cv->r; fr++)
			for (fs = 0; fs < cv->s; fs++) {
				const int ih = op * cv->stride - cv->pad + fr * cv->dil;
				const int iw = oq * cv->stride - cv->pad + fs * cv->dil;

				if (ih < 0 || ih >= cv->h || iw < 0 || iw >= cv->w)
					continue;
				for (ch = 0; ch < cv->c; ch++) {
					prod = at4(x, cv->h, cv->w, cv->c, nb, ih, iw, ch) *
					       at4(w, cv->r, cv->s, cv->c, ko, fr, fs, ch);
					ref += prod;
					sq += prod * prod;
				}
			}
		break;
	}
	case KERNELS_CONV_BWD_DATA: {
		const int ch = (int)(e % (size_t)cv->c);
		const int iw = (int)(e / (size_t)cv->c % (size_t)cv->w);
		const int ih = (int)(e / ((size_t)cv->c * cv->w) % (size_t)cv->h);
		const long long nb = (long long)(e / ((size_t)cv->c * cv->w * cv->h));
		int fr, fs, ko, op, oq;

		/* dx[nb,ih,iw,ch] = sum over (op, oq, fr, fs) with
		 * op*stride - pad + fr*dil == ih, likewise w. */
		for (op = 0; op < v->p; op++)
			for (fr = 0; fr < cv->r; fr++) {
				if (op * cv->stride - cv->pad + fr * cv->dil != ih)
					continue;
				for (oq = 0; oq < v->q; oq++)
					for (fs = 0; fs < cv->s; fs++) {
						if (oq * cv->stride - cv->pad + fs * cv->dil != iw)
							continue;
						for (ko = 0; ko < cv->k; ko++) {
							prod = at4(y, v->p, v->q, cv->k, nb, op, oq, ko) *
							       at4(w, cv->r, cv->s, cv->c, ko, fr, fs, ch);
							ref += prod;
							sq += prod * prod;
						}
					}
			}
		break;
	}
	case KERNELS_CONV_BWD_FILTER: {
		const int ch = (int)(e % (size_t)cv->c);
		const int fs = (int)(e / (size_t)cv->c % (size_t)cv->s);
		const int fr = (int)(e / ((size_t)cv->c * cv->s) % (size_t)cv->r);
		const int ko = (int)(e / ((size_t)cv->c * cv->s * cv->r));
		long long nb;
		int op, oq;

		for (nb = 0; nb < cv->n; nb++)
			for (op = 0; op < v->p; op++) {
				const int ih = op * cv->stride - cv->pad + fr * cv->dil;

				if (ih < 0 || ih >= cv->h)
					continue;
				for (oq = 0; oq < v->q; oq++) {
					const int iw = oq * cv->stride - cv->pad + fs * cv->dil;

					if (iw < 0 || iw >= cv->w)
						continue;
					prod = at4(y, v->p, v->q, cv->k, nb, op, oq, ko) *
					       at4(x, cv->h, cv->w, cv->c, nb, ih, iw, ch);
					ref += prod;
					sq += prod * prod;
				}
			}
		break;
	}
	}
	*rss = sqrt(sq);
	return ref;
}

static int check_conv(struct conv *v, int samples)
{
	const struct kernels_conv *cv = &v->cv;
	const size_t nx = (size_t)cv->n * cv->h * cv->w * cv->c;
	const size_t nw = (size_t)cv->k * cv->r * cv->s * cv->c;
	const size_t ny = (size_t)cv->n * v->p * v->q * cv->k;
	const size_t nout = v->pass == KERNELS_CONV_FWD ? ny
			    : v->pass == KERNELS_CONV_BWD_DATA ? nx : nw;
	const void *out;
	unsigned char *x = malloc(2 * nx), *w = malloc(2 * nw), *y = malloc(2 * ny);
	uint64_t lcg = 0x9e3779b97f4a7c15ull ^ nout;
	double worst = 0.0, worst_got = 0.0, worst_ref = 0.0;
	bool ok = true;
	int s, rc = -1;

	if (!x || !w || !y) {
		calib_error("out of memory 'conv check'");
		goto out;
	}
	if (copy_strided(x, arena_ptr(&v->ar, 0, 0), 2, 1, nx) ||
	    copy_strided(w, arena_ptr(&v->ar, 1, 0), 2, 1, nw) ||
	    copy_strided(y, arena_ptr(&v->ar, 2, 0), 2, 1, ny))
		goto out;
	out = v->pass == KERNELS_CONV_FWD ? (const void *)y
	      : v->pass == KERNELS_CONV_BWD_DATA ? (const void *)x : (const void *)w;
	if ((size_t)samples > nout)
		samples = (int)nout;
	for (s = 0; s < samples; s++) {
		size_t e;
		double rss, ref, got, lim;

		if (s == 0)
			e = 0;
		else if (s == 1)
			e = nout - 1;
		else if ((size_t)samples == nout)
			e = (size_t)s;
		else {
			lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
			e = (size_t)((lcg >> 17) % nout);
		}
		/* The output buffer is also an input slot; the reference
		 * reads only the pass's inputs, never the output. */
		ref = reference(v, x, w, y, e, &rss);
		got = dtype_load(KERNELS_F16, out, e);
		lim = CONV_TOL * (rss + fabs(ref)) + 1e-3;
		if (!(fabs(got - ref) <= lim))
			ok = false;
		if (!(fabs(got - ref) / lim <= worst)) {
			worst = fabs(got - ref) / lim;
			worst_got = got;
			worst_ref = ref;
		}
	}
	rc = calib_check(v->c, ok, "conv %s %s n%d c%d %dx%d k%d %dx%d s%d p%d d%d: %d samples, "
			 "worst got %.6g want %.6g (%.2f of tolerance)",
			 pass_name(v->pass), v->impl, cv->n, cv->c, cv->h, cv->w, cv->k, cv->r,
			 cv->s, cv->stride, cv->pad, cv->dil, samples, worst_got, worst_ref, worst);
out:
	free(x);
	free(w);
	free(y);
	return rc;
}

/* Checks and (unless self-testing) times one problem and pass with cuDNN
 * (use_dnn) or the project kernel.  Returns 0 or -1. */
static int run_point(struct calib *c, const struct kernels_conv *cv, enum kernels_conv_pass pass,
		     bool use_dnn, void *ws, size_t ws_bytes)
{
	struct conv v;
	struct calib_point pt;
	size_t bytes[3];
	enum kernels_dtype st[3] = { KERNELS_F16, KERNELS_F16, KERNELS_F16 };
	double t = 0.0, flops;
	int rc;

	memset(&v, 0, sizeof(v));
	v.c = c;
	v.cv = *cv;
	v.pass = pass;
	v.p = kernels_conv_out_h(cv);
	v.q = kernels_conv_out_w(cv);
	v.ws = ws;
	v.ws_bytes = ws_bytes;
	if (v.p <= 0 || v.q <= 0)
		return calib_error("empty output 'conv c%d %dx%d r%d'", cv->c, cv->h, cv->w, cv->r);
	bytes[0] = (size_t)cv->n * cv->h * cv->w * cv->c * 2;
	bytes[1] = (size_t)cv->k * cv->r * cv->s * cv->c * 2;
	bytes[2] = (size_t)cv->n * v.p * v.q * cv->k * 2;
	rc = arena_init(c, &v.ar, 3, bytes, st);
	if (rc == 1) {
		calib_warn("does not fit in device memory, skipped 'conv n%d c%d %dx%d k%d'",
			   cv->n, cv->c, cv->h, cv->w, cv->k);
		return 0;
	}
	if (rc < 0)
		return -1;
	rc = -1;
	snprintf(v.impl, sizeof(v.impl), "igemm");
#ifdef HAVE_CUDNN
	if (use_dnn) {
		int r = dnn_init(&v);

		if (r < 0)
			goto free_all;
		if (r == 1)
			calib_warn("no cuDNN algorithm, using igemm 'conv %s n%d c%d %dx%d k%d r%d'",
				   pass_name(pass), cv->n, cv->c, cv->h, cv->w, cv->k, cv->r);
	}
#else
	(void)use_dnn;
#endif
	if (!v.dnn && kernels_conv_workspace_bytes(cv, pass) > ws_bytes) {
		calib_error("igemm workspace %zu > %zu bytes 'conv'",
			    kernels_conv_workspace_bytes(cv, pass), ws_bytes);
		goto free_all;
	}
	if (enqueue_conv(&v, 0) < 0)
		goto free_all;
	if (check_conv(&v, c->self_test ? 4096 : 16) < 0)
		goto free_all;
	if (c->self_test) {
		rc = 0;
		goto free_all;
	}
	if (timer_median(c, enqueue_conv, &v, &t) < 0)
		goto free_all;
	flops = 2.0 * cv->n * v.p * v.q * (double)cv->k * cv->c * cv->r * cv->s;
	memset(&pt, 0, sizeof(pt));
	pt.section = CALIB_CONV;
	snprintf(pt.dtype, sizeof(pt.dtype), "fp16");
	snprintf(pt.impl, sizeof(pt.impl), "%s", v.impl);
	snprintf(pt.pass, sizeof(pt.pass), "%s", pass_name(pass));
	pt.n = cv->n;
	pt.c = cv->c;
	pt.h = cv->h;
	pt.w = cv->w;
	pt.k = cv->k;
	pt.r = cv->r;
	pt.s = cv->s;
	pt.stride = cv->stride;
	pt.pad = cv->pad;
	pt.dilation = cv->dil;
	pt.time_s = t;
	pt.tflops = flops / t * 1e-12;
	calib_progress("conv %-10s n%-3d c%-4d %3dx%-3d k%-4d %dx%d s%d %-36s %9.4f ms %7.1f TFLOP/s",
		       pass_name(pass), cv->n, cv->c, cv->h, cv->w, cv->k, cv->r, cv->s,
		       cv->stride, v.impl, t * 1e3, pt.tflops);
	rc = calib_add(c, &pt);
free_all:
#ifdef HAVE_CUDNN
	dnn_finish(&v);
#endif
	arena_finish(&v.ar);
	return rc;
}

int bench_conv(struct calib *c)
{
	static const struct kernels_conv tests[] = {
		{ 2, 8, 9, 9, 16, 3, 3, 2, 1, 1 },
		{ 2, 16, 8, 8, 8, 1, 1, 1, 0, 1 },
		{ 1, 3, 20, 20, 8, 7, 7, 2, 3, 1 },
		{ 2, 32, 7, 7, 64, 3, 3, 1, 1, 1 },
		{ 1, 64, 14, 14, 128, 1, 1, 2, 0, 1 },
		{ 1, 8, 12, 12, 8, 3, 3, 1, 2, 2 },
		{ 4, 64, 28, 28, 64, 3, 3, 1, 1, 1 },
	};
	static const int batches[] = { 32, 64, 128 };
	const struct kernels_conv *convs;
	int nconvs = shapes_conv(&convs), i, b, p, rc = -1;
	void *ws = NULL;

	if (cuda_failed(cudaMalloc(&ws, CONV_WS_BYTES), "cudaMalloc conv workspace"))
		return -1;
	if (c->self_test) {
		for (i = 0; i < (int)(sizeof(tests) / sizeof(tests[0])); i++)
			for (p = 0; p < 3; p++) {
				if (run_point(c, &tests[i], (enum kernels_conv_pass)p, false,
					      ws, CONV_WS_BYTES) < 0)
					goto out;
#ifdef HAVE_CUDNN
				if (run_point(c, &tests[i], (enum kernels_conv_pass)p, true,
					      ws, CONV_WS_BYTES) < 0)
					goto out;
#endif
			}
		rc = 0;
		goto out;
	}
	for (b = 0; b < 3; b++) {
		if (c->quick && batches[b] != 32)
			continue;
		for (i = 0; i < nconvs; i++) {
			struct kernels_conv cv = convs[i];

			if (c->quick && i >= 23)
				break;	/* ResNet-50 layers only */
			cv.n = batches[b];
			for (p = 0; p < 3; p++)
				if (run_point(c, &cv, (enum kernels_conv_pass)p, true,
					      ws, CONV_WS_BYTES) < 0)
					goto out;
		}
	}
	rc = 0;
out:
	cudaFree(ws);
	return rc;
}
