/* result: everything one simulation produced, for the reports.
 *
 * Filled by simulate_run(); read by the report writers, which read nothing
 * else: the plan that was simulated is copied in, the inputs are borrowed
 * (immutable, they outlive the result), the scenario's name and published
 * figures are copied in by the caller (result_set_meta()). Times in
 * seconds, sizes in bytes, rates per second, all per training iteration
 * unless the name says otherwise. No table is capped.
 *
 * The engine's own figures (struct engine_result, engine/engine.h) are held
 * behind a pointer: the reports do not see the engine's per-rank layout
 * and read a rank through result_rank() and the run through result_sim(),
 * views of their own that hold what the reports print. */
#ifndef DDLSIM_RESULT_H
#define DDLSIM_RESULT_H

#include <stdbool.h>

/* What the declarations below hold by value: struct mem_anatomy
 * (memory.h), struct plan and its PLAN_MAX_* bounds (plan.h), CAT_N
 * (program.h), struct scenario_meta and enum pub_memory
 * (scenario_meta.h). The rest by pointer. */
#include "memory.h"
#include "op.h"
#include "plan.h"
#include "program.h"
#include "scenario_meta.h"

struct engine_result;
struct inputs;
struct timeline;

struct stage_result {
	int stage;
	int layers;                 /* transformer layers on the stage (all chunks) */
	int first_layer;            /* of chunk 0 */
	bool has_embedding, has_head;
	int peak_inflight_chunks;   /* (micro-batch, chunk) pairs alive at peak */
	double inflight;            /* the same in units of the stage's layers */
	struct mem_anatomy mem;
	double compute_fwd_s;       /* one micro-batch, all chunks */
	double compute_bwd_s;
	double bubble_s;            /* measured on the stage's rank */
	double bubble_fraction;     /* bubble / iteration */
};

/* One kernel of one micro-batch, as the cost source priced it. */
struct op_timing {
	char block[40];             /* "embedding", "attention", "mlp", "head"; a CNN's layer */
	char pass[4];               /* "fwd" or "bwd" */
	char name[32];
	double m, n, k, batch;
	double flops, bytes, time_s;
	int kernels;                /* kernels the op stands for (an eager piece: several; a
				       main-gradient accumulation fused into its GEMM: 0) */
	bool measured;              /* from a calibration profile */
	/* for the Kineto form of the table (reports/report_kineto.c) */
	enum op_kind kind;
	enum dtype dtype;
	double row, window;         /* a row-wise kernel's row; attention's window */
	bool causal;
	char membound_kind[32];
};

#define RESULT_MAX_CRITICAL 8

/* One node group of a mixed cluster (plan node_groups), as simulated:
 * where its nodes and ranks are, the pipeline stages they hold, their
 * mean compute time and the fullest of their GPUs against its own HBM. */
struct group_result {
	char gpu[96];
	int first_node, nodes;
	int first_rank, ranks;
	int stage_lo, stage_hi;     /* pipeline stages held (-1: none) */
	double compute_s;           /* mean compute-stream busy time of its ranks */
	double worst_total_bytes;   /* the fullest stage of the group, on its GPU */
	double capacity_bytes;      /* that GPU's HBM */
	bool fits;
};

struct result {
	struct plan plan;           /* what was simulated */
	const struct inputs *in;    /* borrowed */
	struct scenario_meta meta;  /* owned copy; empty unless result_set_meta() */
	long gpus;
	char producer_version[32];
	double params;
	double active_params;       /* per token (MoE: activated experts only; = params if dense) */
	bool moe;                   /* the model has experts: the moe_* figures apply */
	double moe_imbalance;       /* busiest EP rank's kept token copies / the group's mean */
	double moe_rank_load;       /* busiest EP rank's kept copies / a balanced rank's T k */
	double moe_dropped_fraction;/* token copies dropped at expert capacity */
	double moe_a2a_bytes;       /* N of one dispatch or combine all-to-all, per rank */
	double microbatches;
	double iteration_s;         /* max(GPU step, the data loader's) */
	double gpu_iteration_s;     /* the GPUs' step alone (= iteration_s without a loader) */
	struct input_step input;    /* training.input_pipeline's figures (loader none: zeros) */
	int input_unit_gpus;        /* input's images/s are per node of this many GPUs (dali: 1) */
	double samples_per_s;
	double tokens_per_s;
	double model_flops;         /* per iteration, no recompute */
	double hardware_flops;      /* per iteration, with recompute */
	double model_tflops_per_gpu;
	double hardware_tflops_per_gpu;
	double mfu;
	double hfu;
	double peak_flops_per_gpu;
	int nstages;
	struct stage_result *stage; /* [pp] */
	bool fits;                  /* every rank */
	double worst_total_bytes;
	int worst_stage;
	double shortfall_bytes;     /* worst_total - capacity if it does not fit */
	struct engine_result *eng;  /* owned: the engine's figures (engine/engine.h), for sim/ only */
	double comm_bytes_per_gpu[CAT_N];
	double time_to_train_s;
	double gpu_hours;
	double cost_usd;
	bool folded;
	const char *fold_reason;    /* static: why not folded, NULL if folded */
	int *whole_replicas;        /* owned [nwhole_replicas]: folded, the data-parallel
				       replicas simulated whole (partial or class folding) */
	int nwhole_replicas;
	double sim_wall_s;
	const char *cost_source;
	char *measured_ops;         /* owned: op names priced from a measurement */
	char *roofline_ops;         /* owned: op names priced by the roofline */
	char *cost_detail;          /* owned: the source's description (profile GPU vs topology GPU) */
	struct op_timing *ops;      /* one micro-batch of each block, fwd and bwd */
	int nops;
	int *tp_group0, ntp0;       /* owned: rank 0's groups, for the report */
	int *dp_group0, ndp0;
	int *pp_ranks0, npp0;
	int *cp_group0, ncp0;       /* owned: rank 0's context-parallel ring */
	char links_tp[128], links_dp[128], links_pp[128];  /* link classes each group crosses */
	char links_cp[128];
	/* stragglers (plan iterations): the iteration time over the sampled
	 * iterations (the reported one is iteration 0) and the ranks most
	 * often on the critical path (the rank with the most compute time of
	 * an iteration: the one a synchronous step waits for), most first */
	int iterations;
	double iter_p50_s, iter_p95_s, iter_p99_s, iter_min_s, iter_max_s;
	int ncritical;
	int critical_rank[RESULT_MAX_CRITICAL], critical_count[RESULT_MAX_CRITICAL];
	/* degraded links (plan sensitivity): the iteration without any, and
	 * with each alone (in plan.simulation.degraded's order); nsens 0: not run */
	int nsens;
	double sens_baseline_s;
	double sens_iteration_s[PLAN_MAX_DEGRADED];
	/* node groups (plan ngroups), in the order their nodes are numbered */
	int ngroups;
	int group_index[PLAN_MAX_NODE_GROUPS];  /* the plan's group (listed order) */
	struct group_result group[PLAN_MAX_NODE_GROUPS];
	/* throttling windows: compute time they added, summed over ranks */
	double throttle_s;
	/* owned: a rank per stage over the iteration (sim/timeline.h), for
	 * the schedule chart; NULL: not recorded (result_set_timeline) */
	struct timeline *timeline;
};

/* A rank's iteration split: compute, exposed communication, pipeline
 * bubble and the rest (idle), in seconds; they add up to the iteration. */
struct result_split {
	double compute_s, exposed_s, bubble_s, idle_s;
};
struct result_split result_rank_split(const struct result *r, int rank);
/* The split averaged over all ranks. */
struct result_split result_mean_split(const struct result *r);
/* The GPUs' busy fraction for their power (sim/assess.h): the mean
 * compute time of every rank over the iteration (0 without one); into
 * group (PLAN_MAX_NODE_GROUPS, when not NULL) each node group's, the
 * mean over its ranks, indexed as the plan lists its groups (-1 for
 * none). */
double result_busy(const struct result *r, double *group);

/* One rank's figures as the reports read them: where it is, whom it was
 * simulated as, and its times and collectives by category (enum task_cat),
 * summed over the iteration. */
struct result_rank {
	int stage;                  /* pipeline stage of the rank */
	int simulated_as;           /* the rank whose simulation these figures are */
	double finish_s;            /* when the rank's last stream finished */
	double compute_s[CAT_N];    /* compute-stream busy time */
	double comm_s[CAT_N];       /* communication-stream busy time */
	double exposed_s[CAT_N];    /* compute stream waiting for communication */
	double bubble_s;            /* compute stream waiting for a pipeline peer */
	double interference_s;      /* compute slowed by concurrent communication (in compute_s) */
	int collectives[CAT_N];     /* collectives the rank took part in */
};
/* The ranks of the job (simulated or stood for by a replica). */
int result_nranks(const struct result *r);
/* Rank i's figures (0 <= i < result_nranks()). */
struct result_rank result_rank(const struct result *r, int i);

/* The simulation's own size and what only some plans have. */
struct result_sim {
	int nranks, nsimulated;     /* ranks of the job; ranks simulated (folding) */
	long flows, collectives, tasks;
	double platform_s;          /* wall seconds building the SimGrid platform */
	long ps_updates;            /* asynchronous parameter servers: updates applied */
	double staleness_mean, staleness_p50, staleness_p95, staleness_max;
	long cls_posted, cls_split; /* all-to-alls posted one flow per NIC, of them split
				     * back into pairs (engine_result) */
	const char *cls_why;        /* static: why some stayed per pair, NULL if none */
};
struct result_sim result_sim(const struct result *r);

/* A link of the platform the run's flows crossed, as the reports read
 * it: a split-duplex link's directions are two links ("<name>_UP",
 * "<name>_DOWN"). Per iteration; a folded run (result.folded) counts the
 * flows it simulated, not the folded ranks'. */
struct result_link {
	const char *name;           /* borrowed from r */
	const char *cls;            /* static: platform_link_class() (fabric/platform.h) */
	double bytes;               /* all categories */
	double bytes_by_cat[CAT_N]; /* by the category of the task that posted the flow */
	double busy_s;              /* simulated time with a flow on it */
	double peak_util;           /* most usage / bandwidth at any instant, in [0, 1] */
	double bw_Bps;              /* its bandwidth per direction */
	bool crossbar;              /* a switch's crossbar (a FATPIPE link): every flow through
				       the switch crosses it, its bandwidth binds none */
	bool timed;                 /* busy_s and peak_util measured: not a crossbar, and
				       simulation.link_traffic "exact" */
};
/* The links with bytes, most bytes first. */
int result_nlinks(const struct result *r);
/* Link i (0 <= i < result_nlinks()). */
struct result_link result_link(const struct result *r, int i);

enum result_status {
	RESULT_OK,
	RESULT_INVALID,             /* the plan failed plan_check() */
	RESULT_FAILED,              /* the simulation reported an error */
	RESULT_CRASHED,             /* the process died on a signal */
	RESULT_TIMEOUT,             /* killed at the runner's time limit */
	RESULT_NSTATUS
};
extern const char *const result_status_names[RESULT_NSTATUS];

/* The headline of one simulation as a fixed-size value: what a runner
 * child sends back over its pipe and what a CSV row is written from. */
struct result_row {
	int index;                  /* the job's index */
	enum result_status status;
	char reason[512];           /* why not OK, cut on a UTF-8 boundary */
	struct plan plan;
	long gpus;
	double iteration_s, samples_per_s, tokens_per_s;
	double model_tflops_per_gpu, hardware_tflops_per_gpu, mfu, hfu;
	struct result_split mean;
	double group_busy[PLAN_MAX_NODE_GROUPS];  /* result_busy(): each node group's */
	double mem_worst_bytes, mem_capacity_bytes;
	double mem_worst_alloc_bytes;   /* the fullest stage's caching-allocator peak
					   (models/memory.h allocator_bytes) */
	double mem_worst_device_bytes;  /* the same with the CUDA context and NCCL's
					   buffers: what nvidia-smi shows */
	bool fits;                  /* every rank fits in its GPU's memory; a row that
				     * simulated but does not is "oom" (result_row_status_name),
				     * its reason says how many GB are missing */
	double mem_short_bytes;     /* the fullest GPU's need beyond its capacity, 0 if it fits */
	bool folded;                /* replicas folded (engine/fold.h) */
	char fold_reason[160];      /* why not folded, "" if folded or one rank */
	double comm_bytes_per_gpu[CAT_N];
	double time_to_train_s, gpu_hours, cost_usd;
	double sim_wall_s;
	int critical_rank;          /* what-if side runs (whatif.c): the rank with the
				     * most compute time; 0 elsewhere */
};

/* The figures a scenario may publish (struct published), each with the
 * prediction it is held against; the order is the order in which the
 * validation table picks a case's headline figure. The signed error is
 * predicted / published - 1 for every figure (for the iteration time,
 * positive means predicted slower; for the others, predicted faster). */
enum pub_figure {
	PUB_HW_TFLOPS,              /* published.tflops_per_gpu vs hardware TFLOP/s per GPU */
	PUB_MODEL_TFLOPS,           /* published.model_tflops_per_gpu vs model TFLOP/s per GPU */
	PUB_MFU,                    /* published.mfu vs model TFLOP/s over the topology's peak */
	PUB_TOKENS_PER_S,           /* published.tokens_per_s vs the whole job's tokens/s */
	PUB_ITERATION_S,            /* published.iteration_time_s vs the iteration time */
	PUB_NFIGURES
};
struct pub_figure_info {
	const char *key;            /* the scenario's published.<key> */
	const char *report_key;     /* report.json: published.<report_key> */
	const char *error_key;      /* report.json: published.<error_key> */
	const char *unit;           /* for tables */
};
extern const struct pub_figure_info pub_figures[PUB_NFIGURES];
/* The published value of figure f, 0 when the scenario does not publish it. */
double published_figure(const struct published *pb, enum pub_figure f);
/* The predicted value of figure f from a row with status OK. */
double result_row_figure(const struct result_row *row, enum pub_figure f);
/* The predicted peak memory of a row with status OK, in bytes, as
 * published.memory_measure m counts it: the caching allocator's figure,
 * or with the CUDA context and NCCL's buffers for "device". */
double result_row_memory(const struct result_row *row, enum pub_memory m);

/* The status a row's reports print: its status's name, or "oom" for a row
 * that simulated (RESULT_OK) but does not fit in GPU memory: its figures
 * are those of a plan that cannot run, so it is never "ok", never ranked
 * and never on a Pareto front. Static string. */
const char *result_row_status_name(const struct result_row *row);
/* Whether a row may be ranked: it simulated and fits in GPU memory. */
bool result_row_usable(const struct result_row *row);

/* Fill row from a finished simulation (status OK; a plan that does not
 * fit gets its reason: "does not fit: the fullest GPU needs X GB of Y GB,
 * Z GB missing"). */
void result_row_fill(struct result_row *row, const struct result *r);
/* Set row's status and reason (copied, cut on a UTF-8 character boundary
 * with "..." when longer than the row holds). */
void result_row_fail(struct result_row *row, enum result_status st, const char *reason);

/* Give r the timeline recorded while it was simulated (timeline_create(),
 * its observer passed to simulate_run_observed()); r owns it from now. */
void result_set_timeline(struct result *r, struct timeline *tl);

/* Copy meta (name, description, published figures) into r. */
void result_set_meta(struct result *r, const struct scenario_meta *meta);
void result_finish(struct result *r);

#endif
