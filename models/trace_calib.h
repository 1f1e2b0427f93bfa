/* trace_calib: a calib profile from a PyTorch profiler trace.
 *
 * The kernels a user's own job ran (kineto.h) become profile entries
 * (profile.h, schema ddlsim.profile 1.1): one per distinct shape, at the
 * median of its calls' device times. The ops it reads, with the inputs
 * it takes the shape from (args "Input Dims"; the dtype from "Input type"
 * of the first operand; schemas as aten declares them in
 * aten/src/ATen/native/native_functions.yaml):
 *
 *   op                                    inputs          entry
 *   aten::mm, aten::_scaled_mm            A [m,k] B [k,n]    gemm m n k
 *   aten::addmm                           (bias) A B         gemm m n k
 *   aten::bmm                             A [b,m,k] B [b,k,n] gemm (b m) n k
 *   aten::baddbmm                         (self) A B         gemm (b m) n k
 *   aten::matmul                          A [..,m,k] B [k,n] gemm (.. m) n k (2-D B only:
 *                                                            ATen folds it so into one mm)
 *   aten::linear                          x [..,k] W [n,k]   gemm m n k, "N","T"
 *   aten::_scaled_dot_product_flash_attention     q [b,h,s,d]  attention fwd
 *   aten::_scaled_dot_product_efficient_attention q [b,h,s,d]  attention fwd
 *   aten::_scaled_dot_product_cudnn_attention     q [b,h,s,d]  attention fwd
 *   aten::_flash_attention_forward        q [b,s,h,d]        attention fwd
 *   flash_attn::_flash_attn_forward       q [b,s,h,d]        attention fwd
 *   ..._backward of each                  q second input     attention bwd
 *   aten::native_layer_norm               x, _, weight       memory_bound layernorm_fwd
 *   aten::_softmax (last dim)             x, dim             memory_bound softmax_fwd
 *   aten::_softmax_backward_data          dy, y, dim         memory_bound softmax_bwd
 *   aten::rms_norm (one kernel only)      x, _, weight       memory_bound rmsnorm_fwd
 *   aten::gelu                            x                  memory_bound bias_gelu_fwd
 *   aten::gelu_backward                   dy, x              memory_bound bias_gelu_bwd
 *   aten::add (two tensors of one shape)  a, b               memory_bound residual
 *   aten::native_layer_norm_backward      -                  skipped: its kernels move
 *                                                            other bytes than calib's
 *
 * Kernels go to the innermost of these ops (aten::linear's kernels are
 * its aten::addmm's), so aten::matmul and aten::linear are priced only
 * when they launched a kernel themselves. A batched GEMM is written as
 * one GEMM of b m rows (cost_profile.c looks batched GEMMs up so).
 * Transposes: "T" where "Input Strides" show the operand is a transposed
 * view (its rows are unit-stride), else "N"; the profile cost source
 * merges the transposes of one shape, so they do not change a price.
 * dtype: c10::BFloat16 bf16, c10::Half fp16, c10::Float8_e4m3fn(uz)
 * fp8_e4m3, float fp32 (PyTorch's default since 1.12:
 * torch.backends.cuda.matmul.allow_tf32 False) unless a kernel's name says
 * tf32 or the caller says float GEMMs ran as tf32. Attention: causal from
 * the op's is_causal in args "Concrete Inputs" (PyTorch 2.x); a call
 * without it, with key length != query length, with dropout_p > 0 (the
 * simulator adds dropout to a profile's attention: models/attention.h),
 * or of any other dtype is skipped and said. tflops: 2 m n k / time for GEMMs; attention as
 * models/attention.h counts a flash kernel (causal: half the tiles).
 * Memory-bound entries: elements of the input, row the normalized size
 * (the weight's, else normalized_shape's) or the softmax's last dim, bytes
 * as calib/bench_mem.c counts its kernels (layer norm 2 e b + 2 row b +
 * 8 rows, softmax 2 e b, its backward 3 e b; b the dtype's bytes), GBps =
 * bytes / time. RMSNorm as calib/bench_mem.c's rmsnorm_fwd (2 e b + row b +
 * 4 rows); GELU 2 e b, its backward 3 e b, the residual add 3 e b, the
 * families the workload's gelu and residual pieces are looked up under
 * (cost_profile.c: "bias_gelu_fwd", then "bias_gelu"); a composite
 * rms_norm (more than one kernel) is skipped and said.
 *
 * Calls in the first ProfilerStep#N are dropped as warm-up when the trace
 * holds two steps or more and a later step holds calls of ops of interest
 * (the step the profiler stops in may be empty). Every call of an op of interest is counted in
 * one of: priced, warm-up, wrapper (its kernels went to an inner op),
 * skipped (with why). */
#ifndef DDLSIM_TRACE_CALIB_H
#define DDLSIM_TRACE_CALIB_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "diag.h"
#include "kineto.h"
#include "precision.h"

struct gpu_spec;

/* The ops of interest (NULL last), for kineto_load(). */
extern const char *const trace_calib_ops[];
/* Its GEMM ops only (NULL last): what an Nsight Systems export prices
 * (nsys.h: its NVTX ranges carry no dtypes and no is_causal, so neither
 * the memory-bound ops, fp32 under autocast while the GEMMs are not, nor
 * attention can be priced from it). */
extern const char *const trace_calib_gemm_ops[];

struct trace_calib_opts {
	bool keep_first_step;       /* keep the first ProfilerStep's calls */
	bool float_as_tf32;         /* "float" GEMMs ran on TF32 tensor cores */
	/* the GPU when the trace has no deviceProperties: name NULL = none */
	const char *gpu_name;
	long sm_count;
	double hbm_bytes, compute_capability;
	const char *producer_version;
	const char *date_utc;       /* NULL: now */
};

#define TRACE_CALIB_DAMAGED_MAX 8

struct trace_calib_entry {
	bool attn, mem;
	enum dtype dtype;
	const char *op;             /* the op's name (borrowed from the trace) */
	double batch, m, n, k;      /* gemm: m counts the batch's rows */
	char transa, transb;
	double b, heads, s, head_dim;
	bool causal, bwd;
	const char *kernel;         /* memory-bound: calib's family ("layernorm_fwd") */
	double elements, row, bytes, GBps;
	double *t;                  /* each call's kernel time, s */
	int nt, ct;
	double time_s, tflops;      /* median; its rate */
};

struct trace_calib_skip {
	const char *op;             /* borrowed */
	char why[256];
	char jpath[32];             /* the first call skipped so */
	int count;
};

struct trace_calib {
	const struct kineto_trace *trace;   /* borrowed */
	struct trace_calib_entry *e;
	int ne, ce;
	struct trace_calib_skip *skip;
	int nskip, cskip;
	int calls_priced, calls_warmup, calls_wrapper, calls_skipped;
	int kernels_priced;
	/* calls a sound trace cannot hold (a negative size, a rate beyond any
	 * GPU): the first TRACE_CALIB_DAMAGED_MAX said, all counted; the
	 * profile is refused when there is one (trace_calib_profile()) */
	struct trace_calib_skip damaged[TRACE_CALIB_DAMAGED_MAX];
	int ndamaged;
	int steps_timed;            /* distinct ProfilerSteps after the warm-up holding calls
				       of ops of interest (>= 1): the profile's timed_runs */
	bool dropped_first;
};

/* Turn t's op calls into entries (medians computed). Never fails; what it
 * cannot price is in ->skip, what a sound trace cannot hold in ->damaged. Returns a new trace_calib
 * (trace_calib_destroy()); t must outlive it. */
struct trace_calib *trace_calib_build(const struct kineto_trace *t, const struct trace_calib_opts *o);
void trace_calib_destroy(struct trace_calib *tc);

/* The profile as a new JSON object (caller json_decref()s), or NULL after
 * reporting why into d: a damaged call (each said at its event's path),
 * no GEMM priced (the loader needs one), or no GPU (neither
 * deviceProperties nor o->gpu_name, or a name longer than a profile's). */
json_t *trace_calib_profile(const struct trace_calib *tc, const struct trace_calib_opts *o,
			    struct diag *d);

/* Refuse every entry faster than GPU g can run (as the profile cost source
 * would against g: profile.h PROFILE_PEAK_MARGIN over the dtype's dense
 * peak or the HBM bandwidth), each said as out's JSON path. Returns 0 or
 * -1 (reported). */
int trace_calib_check_peak(const struct trace_calib *tc, const struct gpu_spec *g, const char *out,
			   struct diag *d);

/* What was read, priced, dropped and skipped, and the GEMM rate range per
 * dtype (with g, also as a fraction of g's dense peak), for people. */
void trace_calib_summary(const struct trace_calib *tc, const struct gpu_spec *g, FILE *f);

#endif
