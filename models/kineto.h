/* kineto: a PyTorch profiler trace (Kineto's Chrome-trace JSON) read as
 * the CPU ops of interest and the GPU kernels each launched.
 *
 * The format, as the writers print it (pytorch/kineto
 * libkineto/src/output_json.cpp @002d9919, ChromeTraceLogger; pytorch/pytorch
 * torch/csrc/autograd/profiler_kineto.cpp @000455d7):
 *
 *   key                        type    unit  meaning
 *   traceEvents                array   -     the events, below (required)
 *   deviceProperties[]         array   -     optional, one per GPU (kineto
 *                                            DeviceProperties.cpp @0041001f):
 *                                            id, name, totalGlobalMem (bytes),
 *                                            computeMajor, computeMinor, numSms,
 *                                            ... (no clock, bus width or L2)
 *   event.ph                   string  -     "X" a complete event; "s" / "f"
 *                                            flow start / end; "M", "i" others
 *   event.cat                  string  -     ActivityType.cpp's names (before
 *                                            mid-2021 "Operator", "Runtime",
 *                                            "Kernel", read as the same): "cpu_op",
 *                                            "user_annotation", "kernel",
 *                                            "gpu_memcpy", "gpu_memset",
 *                                            "cuda_runtime", "cuda_driver", ...
 *   event.name                 string  -     op or kernel name; a
 *                                            user_annotation "ProfilerStep#N"
 *                                            spans step N of a schedule
 *   event.pid, event.tid       number  -     process (device for GPU events)
 *                                            and thread (stream); before
 *                                            mid-2021 strings ("stream 7")
 *   event.ts, event.dur        number  us    start and duration, nanoseconds
 *                                            printed as "us.nnn"; kineto clamps
 *                                            a negative duration to 0, so one
 *                                            here is a damaged file
 *   args["External id"]        int     -     a cpu_op's correlation id; on a
 *                                            kernel or runtime call, that of the
 *                                            op whose RecordFunction was
 *                                            innermost at the launch (the
 *                                            profiler pushes an id at each op's
 *                                            entry and pops it at its exit)
 *   args.correlation           int     -     CUPTI's id, shared by a runtime
 *                                            launch (cuda_runtime) and the
 *                                            kernel it launched; the "ac2g"
 *                                            flow events ("s" on the launch,
 *                                            "f" on the kernel) carry it as id
 *   args["Input Dims"]         array   -     with record_shapes=True: each
 *                                            input's sizes ([] for a scalar)
 *   args["Input type"]         array   -     each input's dtype name ("float",
 *                                            "c10::Half", "c10::BFloat16",
 *                                            "c10::Float8_e4m3fn") or its tag
 *                                            ("Scalar", "ScalarList", "")
 *   args["Input Strides"]      array   -     optional (PyTorch 2.x): strides
 *   args["Concrete Inputs"]    array   -     optional (PyTorch 2.x): scalar
 *                                            inputs as strings ("True", "0.")
 *
 * A kernel is given to a CPU op through its External id (or, without one,
 * through the External id of the cuda_runtime event with its correlation;
 * HTA links them so too: facebookresearch/HolisticTraceAnalysis
 * hta/common/trace_call_graph.py @1cea8d47, call stacks per (pid, tid),
 * kernels through the runtime launch's correlation, the main thread known
 * by its ProfilerStep#, the backward's by "autograd::"),
 * then to the innermost op of interest enclosing that op on its thread
 * (aten::linear > aten::addmm > kernel: aten::addmm), so no kernel counts
 * twice; an op of interest whose kernels all went to an inner one is a
 * wrapper. The file may be gzip'ed (tensorboard_trace_handler's
 * use_gzip) and up to util/infile.h INFILE_MAX_TRACE_BYTES; its events
 * are decoded one at a time (kineto_stream.c), only the ops of interest
 * kept. Ops lie within a step when their start falls inside a
 * ProfilerStep#N annotation of the same process (the backward runs on
 * autograd's thread, inside the step's time span). */
#ifndef DDLSIM_KINETO_H
#define DDLSIM_KINETO_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "diag.h"
#include "precision.h"

/* One call of a CPU op of interest. */
struct kineto_op {
	const char *name;       /* borrowed from the trace */
	json_t *args;           /* the event's "args" (borrowed; may be NULL) */
	char jpath[32];         /* "/traceEvents/17" (events_path, index) */
	long step;              /* ProfilerStep number, -1 outside every step */
	int nkernels;           /* kernels attributed to it */
	double kernel_s;        /* their summed durations */
	bool tf32;              /* a kernel's name mentions tf32 */
	bool wrapper;           /* an inner op of interest took its kernels */
};

/* One NCCL kernel (a name starting "nccl"): a collective or a send/recv. */
struct kineto_comm {
	char coll[24];          /* the kernel name's class: "all_reduce", "all_gather",
				   "reduce_scatter", "send_recv", "broadcast", ... */
	double in_bytes, out_bytes; /* args "In msg nelems" / "Out msg nelems" x the
				   size of args "dtype"; -1: the trace has none */
	double dur_s;
	double ts_us;
};

struct kineto_trace {
	char path[1024];
	char events_path[16];   /* where an op's event index points: "/traceEvents",
				   "/NVTX_EVENTS" (nsys.h: its rowid) */
	json_t *root;           /* the top level but traceEvents */
	json_t *held;           /* the events of the ops of interest (ops[] borrow them) */
	struct kineto_op *ops;  /* in trace order */
	int nops;
	int nkernels;           /* kernel events in the trace */
	int nkernels_attributed;/* given to an op of interest */
	int nkernels_orphan;    /* with no CPU op (no External id found) */
	int nsteps;             /* distinct ProfilerStep#N */
	long first_step;        /* lowest N, -1 without steps */
	double first_step_end_us;   /* end of that step's span (its last annotation) */
	struct kineto_comm *comm;   /* the NCCL kernels, in trace order */
	int ncomm, ccomm;
	/* deviceProperties of the GPU the kernels ran on (has_device false:
	 * the trace has none) */
	bool has_device;
	const char *gpu_name;   /* borrowed */
	long sm_count, cc_major, cc_minor;
	double hbm_bytes;
};

/* Read the trace at path, collecting the calls of the ops named in
 * interest[] (NULL-terminated). Returns a new trace (kineto_destroy()) or
 * NULL after reporting every problem into d with the file and its line:col
 * (JSON syntax) or JSON path ("/traceEvents/3/dur: ..."). */
struct kineto_trace *kineto_load(const char *path, const char *const *interest, struct diag *d);
void kineto_destroy(struct kineto_trace *t);

/* Another reader's events (nsys.h) through the same attribution: feed
 * calls on_event(sctx, e, i) once per event, written as Kineto writes
 * them (the table above: "X" events of cat "cpu_op", "user_annotation"
 * ProfilerStep#N, "cuda_runtime" with args.correlation, "kernel" with
 * args.correlation and args.device; e borrowed, kept by a reference where
 * needed; i the event's index under events_path, distinct among cpu_ops)
 * and returns 0, or -1 after reporting into d. root (taken) holds the
 * top level but the events (deviceProperties). Returns the trace, or NULL
 * (root released). */
typedef int (*kineto_feeder)(void *ctx, void (*on_event)(void *sctx, json_t *e, int i), void *sctx);
struct kineto_trace *kineto_feed(const char *path, const char *events_path, json_t *root,
				 const char *const *interest, kineto_feeder feed, void *ctx, struct diag *d);

/* Read NCCL kernel e (kernel name name, args args) into t->comm
 * (kineto_comm.c). */
void kineto_comm_add(struct kineto_trace *t, const char *name, json_t *args, double ts_us, double dur_us);

/* The NCCL kernels after the warm-up step (drop_first: those that start
 * before the first step's end are left out) by collective and message
 * size: calls, median time, algorithm bandwidth, for people
 * (kineto_comm.c). */
void kineto_comm_summary(const struct kineto_trace *t, bool drop_first, FILE *f);

/* PyTorch's name of a tensor's dtype in a trace's "Input type" (c10's
 * ScalarType: "c10::BFloat16", "c10::Half", "c10::Float8_e4m3fn",
 * "float"): kineto_dtype() reads one (an fp32 input is tf32 when the
 * caller says TF32 was on; Float8_e4m3fnuz is fp8 too), false for any
 * other; kineto_torch_type() names one, NULL for a dtype the profile has
 * no entry for. One table (kineto.c), so that what report_kineto.c writes
 * is what calib-trace reads back. */
bool kineto_dtype(const char *s, bool tf32, enum dtype *out);
const char *kineto_torch_type(enum dtype d);

/* args[key] of op as an array, or NULL. */
json_t *kineto_arg(const struct kineto_op *op, const char *key);

#endif
