/* calib.h - shared declarations of the ddlsim-calib calibration tool.
 *
 * ddlsim-calib measures real kernels on one local NVIDIA GPU and writes a
 * versioned profile (PROFILE-FORMAT.md) that the simulator reads as its
 * compute-cost source.  The tool is one context, `struct calib`, threaded
 * through five benchmark sections (bench_gemm.c, bench_conv.c,
 * bench_mem.c, bench_attn.c with bench_sdpa.c, bench_bw.c).  Each section, for each point:
 *
 *   1. allocates rotating copies of its operands (timer.c) and fills them
 *      with random data (kernels/fill.cu),
 *   2. runs the kernel once and checks the result against a CPU reference
 *      (calib_check()); a failed check aborts the whole run, so a profile
 *      is never written from a kernel that computes the wrong thing,
 *   3. times it (timer_median()) and appends a `struct calib_point`.
 *
 * In --self-test mode the sections run only step 2, on small shapes, and a
 * failed check is counted instead of aborting.  profile_write.c turns the
 * points into JSON and CSV.  This header is private to calib/.
 */
#ifndef DDLSIM_CALIB_H
#define DDLSIM_CALIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>
#include <jansson.h>
#include <cublas_v2.h>
#include <cublasLt.h>
#ifdef HAVE_CUDNN
#include <cudnn.h>
#endif

#include "ddlsim-config.h"
#include "kernels.h"

#define CALIB_NAME "ddlsim-calib"
#define CALIB_SCHEMA "ddlsim.profile"
#define CALIB_SCHEMA_VERSION "1.0"

/* Exit codes, documented in --help. */
#define CALIB_EXIT_OK 0
#define CALIB_EXIT_FAILURE 1
#define CALIB_EXIT_USAGE 2
#define CALIB_EXIT_NO_GPU 4

/* Sections of the profile; also the --only selection bits. */
enum calib_section {
	CALIB_GEMM = 0,
	CALIB_CONV,
	CALIB_MEM,	/* "memory_bound" in the profile, "mem" for --only */
	CALIB_ATTN,
	CALIB_BW,
	CALIB_NSECTIONS,
};

/* Most timed runs of one point (timer.c keeps this many event pairs). */
#define CALIB_MAX_RUNS 100

/* One measured point.  Which fields are meaningful depends on `section`
 * (PROFILE-FORMAT.md has the table); the rest stay zero / empty. */
struct calib_point {
	enum calib_section section;
	char dtype[16];		/* "fp32", "tf32", "fp16", "bf16", "fp8_e4m3" */
	char impl[48];		/* "cublas", "cudnn:IMPLICIT_GEMM", ... */
	char pass[16];		/* "fwd", "bwd_data", "bwd_filter", "bwd" */
	char kernel[24];	/* memory_bound kernel name */
	char kind[8];		/* bandwidth: "d2d", "h2d", "d2h" */
	char transa, transb;	/* gemm: 'N' or 'T' */
	long long m, n, k;	/* gemm dims; conv: n batch, k out channels */
	long long c, h, w, r, s, stride, pad, dilation;	/* conv */
	long long b, heads, seq, head_dim;		/* attention */
	bool causal;
	long long elements, row, bytes;			/* memory_bound, bandwidth */
	double time_s;		/* median time of one run */
	double tflops;		/* 1e-12 * flops / time_s, 0 if not applicable */
	double GBps;		/* 1e-9 * bytes / time_s, 0 if not applicable */
};

struct calib {
	/* Options. */
	int device;
	bool quick;
	bool self_test;
	bool no_sdpa;		/* --no-sdpa: skip cuDNN fused attention (bench_sdpa.c) */
	unsigned sections;	/* bit (1u << enum calib_section) selected */
	int warmup_runs;
	int timed_runs;
	uint64_t seed;

	/* Device facts (device_info.c). */
	struct cudaDeviceProp prop;
	size_t l2_bytes;

	/* Handles, created by calib_open(). */
	cudaStream_t stream;
	cublasHandle_t blas;
	cublasLtHandle_t lt;
	void *blas_workspace;
	size_t blas_workspace_bytes;
#ifdef HAVE_CUDNN
	cudnnHandle_t dnn;
#endif
	cudaEvent_t ev_start[CALIB_MAX_RUNS + 1];
	cudaEvent_t ev_stop[CALIB_MAX_RUNS + 1];

	/* Interference (bench_interference.c): 0 blocks = not measured. */
	int interf_blocks;
	double interf_alone_s, interf_with_s;

	/* Results. */
	struct calib_point *points;
	size_t npoints, cap_points;
	int checks_passed;
	int checks_failed;
};

/* ---- calib.c: context, results, checks, errors ---- */

/* Prints "ddlsim-calib: error: <message>" on stderr; returns -1. */
int calib_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints "ddlsim-calib: warning: <message>" on stderr. */
void calib_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Progress line on stderr (prefixed "[calib] "). */
void calib_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Predicates for API status codes: true (after printing an error naming
 * `what`) when the call failed. */
bool cuda_failed(cudaError_t err, const char *what);
bool blas_failed(cublasStatus_t st, const char *what);
#ifdef HAVE_CUDNN
bool dnn_failed(cudnnStatus_t st, const char *what);
#endif

/* Selects c->device, reads its properties, creates the stream, handles,
 * events and cuBLAS workspace.  Returns 0 or -1 (after an error message).
 * calib_close() releases whatever calib_open() created; it may be called
 * after a failed calib_open(). */
int calib_open(struct calib *c);
void calib_close(struct calib *c);

/* Appends a copy of `pt` to the results; returns 0 or -1 (out of memory). */
int calib_add(struct calib *c, const struct calib_point *pt);

/* Records the outcome of one correctness check described by the printf
 * arguments.  In self-test mode prints "ok ..." or "FAIL ...", counts it
 * and returns 0.  Otherwise prints nothing on success and an error on
 * failure, and returns -1 on failure so that the caller aborts. */
/* The running verdict of a correctness check: every compared value is
 * judged against its limit; worst is the largest |got - want| / limit seen,
 * with that comparison's got, want and where (a label, or NULL). */
struct calib_verdict {
	bool ok;
	double worst, got, want;
	const char *where;
};

/* Judge one value: v->ok goes false when |got - want| > lim (or either is
 * NaN); the worst ratio so far is kept. */
void calib_judge(struct calib_verdict *v, double got, double want, double lim, const char *where);

int calib_check(struct calib *c, bool ok, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Wall-clock seconds since an arbitrary origin (CLOCK_MONOTONIC). */
double calib_now_s(void);

/* ---- dtype.c: element types on the host ---- */

enum calib_dtype {
	CALIB_FP32 = 0,
	CALIB_TF32,	/* fp32 storage, TF32 tensor-core math */
	CALIB_FP16,
	CALIB_BF16,
	CALIB_FP8,	/* e4m3 */
};

/* Profile name of `dt` ("fp32", ...). */
const char *dtype_name(enum calib_dtype dt);
/* Bytes per element in memory. */
size_t dtype_size(enum calib_dtype dt);
/* Storage type for the fill kernel. */
enum kernels_dtype dtype_storage(enum calib_dtype dt);
/* Value of element `i` of a host copy of a buffer of storage type `st`. */
double dtype_load(enum kernels_dtype st, const void *buf, size_t i);

/* ---- device_info.c ---- */

/* Reads the facts of c->device into c->prop and c->l2_bytes. */
int device_info_read(struct calib *c);

/* The profile's "gpu" object (schema in PROFILE-FORMAT.md); a new
 * reference the caller owns, or NULL when out of memory. */
json_t *device_info_json(const struct calib *c);

/* Number of CUDA devices in *count, or -1 with the reason in `why`. */
int device_info_count(int *count, char *why, size_t why_size);

/* ---- timer.c: rotating buffers and timing ---- */

/* A set of operand buffers in nsets rotating copies: copy i of buffer j
 * starts at base + off[j] + (i % nsets) * size[j].  Every copy is 256-byte
 * aligned and filled with random data of its storage type. */
#define ARENA_MAX_BUFS 12
struct arena {
	char *base;
	size_t bytes;			/* whole allocation */
	size_t off[ARENA_MAX_BUFS];	/* start of buffer j's copies */
	size_t size[ARENA_MAX_BUFS];	/* bytes of one copy, rounded to 256 */
	int nbufs;
	int nsets;
};

/* Allocates `nbufs` buffers of bytes[j] bytes, filled per storage type
 * st[j], in as many rotating copies as needed so that all copies together
 * exceed 2 x L2 (at least 2, or 1 when memory is short).  Returns 0, 1 when
 * even one copy does not fit in free device memory (nothing allocated; the
 * caller skips the point), or -1 on a CUDA error.  arena_finish() frees. */
int arena_init(struct calib *c, struct arena *a, int nbufs,
	       const size_t *bytes, const enum kernels_dtype *st);
void arena_finish(struct arena *a);

/* Pointer to buffer j of copy i (i taken modulo nsets). */
void *arena_ptr(const struct arena *a, int j, int i);

/* Times `enqueue` on c->stream: one probe run, c->warmup_runs - 1 more
 * warm-up runs and c->timed_runs timed runs (fewer, but at least 1 warm-up
 * and 5 timed, when one run is long), each timed run bracketed by its own
 * CUDA events, all enqueued before one synchronisation.  enqueue(arg, i)
 * enqueues run i (which uses rotating copy i) and returns 0 or -1.  Stores
 * the median run time in *median_s; returns 0 or -1. */
int timer_median(struct calib *c, int (*enqueue)(void *arg, int i), void *arg,
		 double *median_s);

/* Copies `count` elements of `elem` bytes (1, 2, 4 or 8 when stride > 1),
 * `stride` elements apart, from device `src` to host `dst`, after waiting
 * for all work on the device (so it sees results of c->stream).  Returns 0
 * or -1. */
int copy_strided(void *dst, const void *src, size_t elem, size_t stride,
		 size_t count);

/* ---- shapes.c: the workloads' shapes ---- */

struct gemm_shape {
	long long m, n, k;
	char transa, transb;
};

/* Model layer GEMMs (fwd, dgrad, wgrad; TP 1,2,4,8; 2048/4096/8192 tokens),
 * deduplicated.  Returns the count and a malloc'd array in *out (caller
 * frees), or -1 when out of memory.  `quick` keeps a small subset. */
long long shapes_gemm_models(bool quick, struct gemm_shape **out);

/* Sorts v[0..n) and removes duplicate shapes; returns the new count. */
long long shapes_gemm_unique(struct gemm_shape *v, long long n);

/* The M, N, K grid (transposes N, N).  Same ownership as above. */
long long shapes_gemm_grid(bool quick, struct gemm_shape **out);

/* The distinct convolutions of ResNet-50 plus a few common shapes, at
 * batch 1 (the caller sets n).  Returns the count; *out points to a static
 * table (do not free). */
int shapes_conv(const struct kernels_conv **out);

/* Attention configurations (heads per GPU, sequence length) of the models
 * at TP 1,2,4,8; b = 1, head_dim = 128.  Static table in *out. */
struct attn_shape {
	int b, heads, seq, head_dim;
};
int shapes_attn(bool quick, const struct attn_shape **out);

/* ---- the sections; each returns 0 or -1 (aborts the run) ---- */

int bench_gemm(struct calib *c);
int bench_conv(struct calib *c);
int bench_mem(struct calib *c);
int bench_attn(struct calib *c);
/* bench_sdpa.c, called by bench_attn() for each of its shapes: causal
 * attention fused by cuDNN's SDPA graphs (impl "cudnn_sdpa"), forward and
 * backward, checked and then timed.  Returns 0 when checked (self-test) or
 * recorded (the forward alone when cuDNN refuses only the backward), 1 when
 * nothing is recorded because cuDNN cannot run it here or it does not fit
 * (a warning says why), -1 on a failed check or a CUDA error. */
int bench_sdpa(struct calib *c, const struct attn_shape *sh);
int bench_bw(struct calib *c);
/* bench_interference.c: a bf16 GEMM timed alone and beside a copy kernel
 * of c->interf_blocks blocks; fills c->interf_alone_s and interf_with_s
 * (the profile's "interference" object). Returns 0 or -1. */
int bench_interference(struct calib *c);

/* ---- profile_write.c ---- */

/* Writes the JSON profile atomically (PATH.tmp.<pid>, fsync, rename).
 * Returns 0 or -1 (after an error message naming the path). */
int profile_write_json(const struct calib *c, const char *path);

/* Writes the raw CSV, one row per point, atomically.  Returns 0 or -1. */
int profile_write_csv(const struct calib *c, const char *path);

#endif
