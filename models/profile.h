/* profile: a calib profile, the kernel times ddlsim-calib measured on one GPU.
 *
 * Schema "ddlsim.profile" 1.1 (1.0 files are read as before), written by
 * calib/profile_write.c (1.0) and by the trace importer (trace_calib.h,
 * 1.1; see calib/PROFILE-FORMAT.md). Every key is required unless marked
 * optional; unknown keys are errors. 1.1 makes optional what a profiler
 * trace cannot tell (marked "1.1 optional") and adds "samples".
 *
 *   key                              type    unit   meaning
 *   producer.name, producer.version  string  -      tool that wrote the file
 *   gpu.name                         string  -      CUDA device name
 *   gpu.compute_capability           string  -      "9.0"
 *   gpu.sm_count                     int     -      streaming multiprocessors
 *   gpu.sm_clock_max_MHz             int     MHz    1.1 optional
 *   gpu.mem_clock_max_MHz            int     MHz    1.1 optional
 *   gpu.mem_bus_width_bits           int     bits   1.1 optional
 *   gpu.hbm_bytes                    int     bytes
 *   gpu.l2_bytes                     int     bytes  1.1 optional
 *   gpu.driver_version               string  -      1.1 optional
 *   gpu.cuda_runtime_version         string  -      1.1 optional
 *   gpu.cublas_version               string  -      1.1 optional
 *   gpu.cudnn_version                string|null -  null without cuDNN; 1.1 optional
 *   measured.date_utc                string  -
 *   measured.hostname                string  -      1.1 optional
 *   measured.method                  string  -      how times were taken
 *   measured.warmup_runs, .timed_runs int    -      >= 0, >= 1
 *   measured.quick                   bool    -      reduced shape set
 *   gemm[]      dtype string, m n k int, transa transb "N"|"T",
 *               time_s s > 0, tflops TFLOP/s > 0, impl string,
 *               samples int >= 1 (1.1, optional: calls the median is of)
 *   conv[]      dtype, layout string, pass "fwd"|"bwd_data"|"bwd_filter",
 *               n c h w k r s stride pad dilation int, time_s, tflops, impl
 *   memory_bound[] kernel string, dtype, elements int, row int >= 0,
 *               bytes int (HBM traffic), time_s, GBps GB/s > 0,
 *               samples (1.1, optional)
 *   attention[] impl, pass "fwd"|"bwd", dtype, b heads s head_dim int,
 *               causal bool, time_s, tflops, samples (1.1, optional)
 *   bandwidth[] kind "d2d"|"h2d"|"d2h", bytes int (d2d: read + written),
 *               time_s, GBps
 *   interference (optional object) copy_blocks int >= 1, gemm_alone_s s > 0,
 *               gemm_with_copy_s s > 0: a GEMM timed alone and while a
 *               copy kernel of copy_blocks blocks runs beside it
 *               (calib/bench_interference.c); the engine slows compute by
 *               at least max(1, gemm_with_copy_s / gemm_alone_s) while
 *               communication runs (profile_interference(); a floor
 *               under its SM model, engine/engine.h); a ratio
 *               beyond PROFILE_MAX_INTERFERENCE either way is refused, one
 *               below 1 (clock noise) loads with a warning
 * Every time and rate is bounded as models/bounds.h says; an entry faster
 * than the GPU the profile prices (whichever GPU measured it) is refused
 * (PROFILE_PEAK_MARGIN): GEMMs and convolutions (FLOPs / time_s) and fused
 * attention (tflops) above the dtype's dense peak, memory-bound kernels and
 * d2d copies (bytes / time_s) above the HBM bandwidth.
 * The five arrays are optional (absent = nothing measured in that section);
 * dtype is one of fp32, tf32, fp16, bf16, fp8_e4m3 (calib's names).
 *
 * The loader keeps the numbers as written; interpolation is the business
 * of the profile cost source (cost_profile.c). */
#ifndef DDLSIM_PROFILE_H
#define DDLSIM_PROFILE_H

/* The largest slowdown (or speed-up) of a GEMM beside a copy an
 * interference measurement may report (gemm_with_copy_s / gemm_alone_s or
 * its inverse). */
#define PROFILE_MAX_INTERFERENCE 100
/* A profile entry may run at most this factor above the dense peak or the
 * HBM bandwidth of the GPU it prices (boost clocks); faster is refused
 * (cost_profile_create()). */
#define PROFILE_PEAK_MARGIN 1.25

#include <stdbool.h>

#include "diag.h"
#include "gpu.h"

enum profile_conv_pass { PROFILE_CONV_FWD, PROFILE_CONV_BWD_DATA, PROFILE_CONV_BWD_FILTER };
enum profile_bw_kind { PROFILE_BW_D2D, PROFILE_BW_H2D, PROFILE_BW_D2H };

struct profile_gemm {
	enum dtype dtype;
	double m, n, k;
	char transa, transb;
	double time_s;
	double tflops;
	long samples;           /* 1.1: calls the median is of (0: not said) */
};

struct profile_conv {
	enum dtype dtype;
	enum profile_conv_pass pass;
	double n, c, h, w, k, r, s, stride, pad, dilation;
	double time_s;
	double tflops;
};

struct profile_mem {
	char kernel[32];        /* family: "bias_gelu", "layernorm_fwd", ... */
	enum dtype dtype;
	double elements, row, bytes;
	double time_s;
	double GBps;
	long samples;           /* 1.1: calls the median is of (0: not said) */
};

struct profile_attn {
	bool fused;             /* impl is a fused kernel (not "unfused_...") */
	bool bwd;
	enum dtype dtype;
	double b, heads, s, head_dim;
	bool causal;
	double time_s;
	double tflops;
	long samples;           /* 1.1: calls the median is of (0: not said) */
};

struct profile_bw {
	enum profile_bw_kind kind;
	double bytes;
	double time_s;
	double GBps;
};

struct profile {
	char path[1024];
	int schema_minor;               /* 0 or 1 */
	char producer[64];
	char gpu_name[96];
	char compute_capability[16];
	long sm_count;
	char method[256];
	char date_utc[64];
	struct profile_gemm *gemm;
	int ngemm;
	struct profile_conv *conv;
	int nconv;
	struct profile_mem *mem;
	int nmem;
	struct profile_attn *attn;
	int nattn;
	struct profile_bw *bw;
	int nbw;
	long interf_blocks;             /* 0: no interference measurement */
	double interf_alone_s, interf_with_s;
};

/* Load and validate a profile. Returns a new profile (profile_destroy())
 * or NULL after reporting every problem into d. */
struct profile *profile_load(const char *path, struct diag *d);
void profile_destroy(struct profile *p);
/* The profile format's name of dtype d (calib's: "fp8_e4m3"), or "?"
 * for one a profile never holds (the block-scaled mxfp8 and nvfp4). */
const char *profile_dtype_name(enum dtype d);

/* Implicit-GEMM dimensions of a convolution pass (output P = (H + 2 pad -
 * dilation (R - 1) - 1) / stride + 1, likewise Q):
 *   fwd         M = N P Q,  N = K,      K = C R S
 *   bwd_data    M = N H W,  N = C,      K = K R S
 *   bwd_filter  M = K,      N = C R S,  K = N P Q */
void profile_conv_gemm_dims(const struct profile_conv *c, double *m, double *n, double *k);
/* The compute slowdown beside communication the profile measured:
 * max(1, gemm_with_copy_s / gemm_alone_s), or 0 without an interference
 * measurement. */
double profile_interference(const struct profile *p);
/* FLOPs of a convolution pass: 2 N P Q K C R S for all three passes. */
double profile_conv_flops(const struct profile_conv *c);

#endif
