/* scenario: one what-if question, as a scenario file states it.
 *
 * Schema "ddlsim.scenario" 1.0. Paths are relative to the scenario file.
 *
 *   key                           type     unit    default       meaning
 *   name                          string   -       file name     display name
 *   description                   string   -       ""
 *   model                         string   path    required      model file
 *   topology                      string   path    required      topology file
 *   nodes                         int      -       required      nodes in the job
 *   parallel.dp                   int      -       GPUs/(tp pp)  data-parallel degree
 *   parallel.tp                   int      -       1             tensor-parallel degree
 *   parallel.pp                   int      -       1             pipeline stages
 *   parallel.sp                   bool     -       false         sequence parallelism (needs tp > 1)
 *   parallel.zero                 int      -       0             ZeRO stage 0..3 (3 = FSDP)
 *   parallel.schedule             string   -       "1f1b"        gpipe | 1f1b | interleaved
 *   parallel.interleave           int      -       1             model chunks per rank (interleaved)
 *   parallel.recompute            string   -       "none"        none | selective | full
 *   parallel.order                string   -       "tp,dp,pp"    rank order, innermost first
 *   parallel.stage_layers         [int]    layers  even split    layers of each pipeline stage
 *   training.seq_len              int      tokens  required
 *   training.global_batch         int      samples required
 *   training.micro_batch          int      samples 1
 *   training.precision            string   -       "bf16"        fp32 | tf32 | fp16 | bf16 | fp8
 *                                                                (models/precision.h: tf32 = fp32 with
 *                                                                tf32 GEMMs; fp8 = Transformer Engine)
 *   training.attention            string   -       see meaning   flash | unfused (models/attention.h);
 *                                                                default flash where the GPU has a
 *                                                                flash kernel and precision is 16-bit
 *                                                                or fp8, else unfused
 *   training.fp8_comm             bool     -       false         TP/SP all-gathers move fp8 (needs fp8)
 *   training.memory_reserve       number   0..0.5  0.05          allocator fragmentation reserve, a
 *                                                                fraction of HBM (models/memory.h)
 *   training.optimizer            string   -       "adam"        adam (mixed-precision Adam, K = 12)
 *   training.grad_reduce_dtype    string   -       precision     dtype of gradient reduction: fp32 |
 *                                                                fp16 | bf16 (tf32: fp32, fp8: bf16)
 *   training.train_tokens         number   tokens  0             for time- and cost-to-train
 *   communication.algorithm       string   -       "auto"        collective algorithm
 *   communication.bucket_MB       number   MB      25            gradient bucket (1e6 bytes)
 *   communication.overlap_grad_reduce bool -       true          reduce buckets during backward (DDP);
 *                                                                false: one reduction after it (Megatron-LM 2021)
 *   compute.cost                  string   -       "roofline"    roofline | profile
 *   compute.profile               string   path    -             calib profile (cost = profile)
 *   simulation.fold               string   -       "auto"        auto | on | off (see engine.h)
 *   cost.usd_per_gpu_hour         number   USD     0             price for cost-to-train
 *   output.dir                    string   path    "out/<name>"  report directory (relative to the working directory)
 *   output.formats                [string] -       ["json","csv"]
 *   published.tflops_per_gpu      number   TFLOP/s -             a published measurement to hold the
 *   published.iteration_time_s    number   s       -             prediction against (reported with
 *   published.tokens_per_s        number   tokens/s -            its error)
 *   published.source              string   -       -
 */
#ifndef DDLSIM_SCENARIO_H
#define DDLSIM_SCENARIO_H

#include <stdbool.h>

#include "diag.h"
#include "attention.h"
#include "gpu.h"
#include "memory.h"
#include "model.h"
#include "schedule.h"
#include "topology.h"
#include "workload.h"

#define SCENARIO_MAX_STAGES 512

enum fold_mode { FOLD_AUTO, FOLD_ON, FOLD_OFF };
enum cost_kind { COST_ROOFLINE, COST_PROFILE };

struct scenario {
	char path[1024];
	char name[128];
	char description[512];
	char model_path[1024];
	char topo_path[1024];
	char profile_path[1024];
	struct model *model;          /* owned */
	struct topology *topo;        /* owned */
	int nodes;
	int gpus;                     /* nodes x gpus per node */
	int dp, tp, pp;
	bool sp;
	enum zero_stage zero;
	enum sched_kind schedule;
	int interleave;
	enum recompute recompute;
	char order[16];
	int stage_layers[SCENARIO_MAX_STAGES];  /* 0 = even split */
	bool explicit_stages;
	long seq, global_batch, micro_batch;
	enum dtype precision;
	enum dtype grad_dtype;
	enum attention attention;     /* resolved at load: the default depends on the GPU */
	bool attention_set;           /* training.attention was given */
	bool fp8_comm;
	double memory_reserve;        /* fraction of HBM */
	double train_tokens;
	char coll_algo[32];
	double bucket_bytes;
	bool overlap_grad_reduce;
	double pub_tflops, pub_iteration_s, pub_tokens_per_s;   /* 0 = none */
	char pub_source[256];
	enum cost_kind cost;
	enum fold_mode fold;
	double usd_per_gpu_hour;
	char out_dir[1024];
	bool want_json, want_csv;
};

/* Load a scenario and the model and topology it names, and check that
 * the plan fits the cluster and the batch. Returns a new scenario
 * (scenario_destroy()) or NULL after reporting every problem into d. */
struct scenario *scenario_load(const char *path, struct diag *d);
void scenario_destroy(struct scenario *s);

/* Micro-batches per pipeline per iteration: global_batch / (dp x micro_batch). */
long scenario_microbatches(const struct scenario *s);

#endif
