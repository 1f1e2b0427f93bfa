/* plan: one parallel and training plan, the knobs a sweep or a search varies.
 *
 * A plan is a small fixed-size value (no pointers, no file paths): it can
 * be copied, compared, varied in a loop and sent through a pipe. Together
 * with the immutable inputs (model, topology, cost source; see inputs.h)
 * it is everything simulate_run() needs.
 *
 *   field              unit     default       meaning
 *   nodes              -        required      nodes in the job
 *   dp, tp, pp         -        dp derived    data-, tensor-, pipeline-parallel degrees
 *   sp                 -        false         sequence parallelism (tp > 1)
 *   zero               -        0             ZeRO stage 0..3 (3 = FSDP)
 *   schedule           -        1f1b          pipeline schedule (schedule.h)
 *   interleave         -        1             model chunks per rank (interleaved)
 *   recompute          -        none          none | selective | full
 *   order              -        "tp,dp,pp"    rank order, innermost first (placement.h)
 *   stage_layers       layers   even split    layers of each stage when nstage_layers = pp
 *   seq                tokens   required      sequence length (1 for CNNs: a sample is an image)
 *   global_batch       samples  required
 *   micro_batch        samples  1
 *   precision          -        bf16          compute and weight dtype
 *   grad_dtype         -        precision     dtype of the gradient reduction
 *   attention          -        see plan_resolve  flash | unfused (models/attention.h)
 *   fp8_comm           -        false         TP/SP all-gathers move fp8 (precision fp8)
 *   memory_reserve     fraction 0.05          allocator fragmentation reserve of HBM
 *   train_tokens       tokens   0             for time- and cost-to-train
 *   coll_algo          -        "auto"        collective algorithm (coll.h registry)
 *   bucket_bytes       bytes    25e6          gradient bucket
 *   overlap_grad_reduce -       true          reduce buckets during backward
 *   fold               -        auto          fold identical replicas (engine.h)
 *   usd_per_gpu_hour   USD      0             price for cost-to-train
 *
 * plan_check() is the whole validity test against the inputs: it has no
 * side effects, allocates nothing and runs in microseconds, so a search
 * can reject a plan before pricing it. */
#ifndef DDLSIM_PLAN_H
#define DDLSIM_PLAN_H

#include <stdbool.h>

#include "attention.h"
#include "diag.h"
#include "gpu.h"
#include "memory.h"
#include "schedule.h"
#include "workload.h"

#define PLAN_MAX_STAGES 512
#define PLAN_MAX_GPUS 1000000L

enum fold_mode { FOLD_AUTO, FOLD_ON, FOLD_OFF };

struct inputs;

struct plan {
	int nodes;
	int dp, tp, pp;                 /* dp = 0: derived by plan_resolve() */
	bool sp;
	enum zero_stage zero;
	enum sched_kind schedule;
	int interleave;
	enum recompute recompute;
	char order[16];
	int nstage_layers;              /* 0 = even split, else pp */
	int stage_layers[PLAN_MAX_STAGES];
	long seq, global_batch, micro_batch;
	enum dtype precision;
	enum dtype grad_dtype;
	enum attention attention;       /* resolved by plan_resolve() unless attention_set */
	bool attention_set;
	bool fp8_comm;
	double memory_reserve;          /* fraction of HBM */
	double train_tokens;
	char coll_algo[32];
	double bucket_bytes;
	bool overlap_grad_reduce;
	enum fold_mode fold;
	double usd_per_gpu_hour;
};

/* The defaults of the table above (nodes, seq, global_batch left 0). */
void plan_init(struct plan *p);

/* Set p->dp from the cluster when it is 0 (GPUs / (tp x pp); every GPU for
 * a CNN), seq to 1 for a CNN, and the attention kernel when not set: flash
 * where the GPU has a flash kernel and the precision is 16-bit or fp8
 * (FlashAttention has no fp32 kernels), else unfused. Leaves a plan that
 * does not divide the cluster for plan_check() to report. */
void plan_resolve(struct plan *p, const struct inputs *in);

/* Check p against the inputs: the cluster, the model's dimensions and the
 * batch. Every problem is reported into d as "file: /json/path: ..." (file
 * names the scenario or sweep the plan came from). Returns 0 if the plan
 * can be simulated, else the number of problems. No side effects. */
int plan_check(const struct plan *p, const struct inputs *in, const char *file, struct diag *d);

/* GPUs in the job: nodes x GPUs per node. */
long plan_gpus(const struct plan *p, const struct inputs *in);

/* Micro-batches per pipeline per iteration: global_batch / (dp x micro_batch). */
long plan_microbatches(const struct plan *p);

/* Layers of virtual stage vs of nv = pp x chunks, and the index of its
 * first layer: the explicit split when there is one, else as even as
 * possible with the remainder on the first stages. */
int plan_vstage_layers(const struct plan *p, long model_layers, int vs, int nv, int *first);

/* Name tables for the plan's enums, NULL-terminated, in enum order (the
 * loaders and the reports read these). */
extern const char *const plan_fold_names[];

#endif
