/* plan: one parallel and training plan, the knobs a sweep or a search varies.
 *
 * A plan is a small fixed-size value (no pointers, no file paths; under
 * 8 KiB, test-runner.c): it can be copied, compared, varied in a loop and
 * sent through a pipe. A mixed cluster's GPUs are in it by value (the
 * presets' numbers, not their paths), so a plan says what was simulated. Together
 * with the immutable inputs (model, topology, cost source; see inputs.h)
 * it is everything simulate_run() needs.
 *
 *   field              unit     default       meaning
 *   nodes              -        required      nodes in the job
 *   framework          -        none          preset index (models/framework.h); fills
 *                                             grad_dtype, bucket_bytes, overlaps, zero and
 *                                             attention where `given` says the scenario
 *                                             did not set them
 *   group              -        none          node groups (ngroups): consecutive nodes with
 *                                             their own GPU (a mixed cluster); the topology
 *                                             gives the nodes' links and NICs
 *   node_order         -        listed        listed | fast_first | slow_first: the order in
 *                                             which the groups' nodes are numbered (ranks
 *                                             fill nodes in order, placement.h)
 *
 *   parallel (struct plan_parallel)
 *   dp, tp, pp         -        dp derived    data-, tensor-, pipeline-parallel degrees
 *   cp                 -        1             context-parallel degree (sequence split, CP group)
 *   cp_comm            -        p2p           p2p (ring K/V exchange) | a2a (Ulysses all-to-all)
 *   ep                 -        1             expert-parallel degree (MoE models; divides dp and
 *                                             the experts; placement.h: inside the DP group)
 *   etp                -        tp (0)        expert-tensor-parallel degree (MoE models; 1 or
 *                                             tp: Megatron-Core's --expert-tensor-parallel-size,
 *                                             build_transformer.c "Expert tensor parallelism")
 *   bn_group           -        1             GPUs of one node whose batch norms share
 *                                             statistics (CNN models; a power of two up to
 *                                             16: NVIDIA's NHWC BN bn_group, sim/build_cnn.c)
 *   offload            -        none          none | optimizer | optimizer+params: ZeRO-Offload's
 *                                             optimizer state and step on the CPU (and
 *                                             ZeRO-Infinity's parameters in host memory)
 *   sp                 -        false         sequence parallelism (tp > 1)
 *   zero               -        0             ZeRO stage 0..3 (3 = FSDP)
 *   shard_group        GPUs     0 (dp x cp)   hybrid sharding: the GPUs ZeRO shards over,
 *                                             consecutive members of the dp x cp group
 *                                             (placement.h GROUP_DPS); the shards are
 *                                             all-reduced across the dp x cp / shard_group
 *                                             groups (plan_shard_group)
 *   schedule           -        1f1b          pipeline schedule (schedule.h)
 *   interleave         -        1             model chunks per rank (interleaved)
 *   recompute          -        none          none | selective | full
 *   recompute_every    layers   1             full recompute of every n-th layer a rank
 *                                             holds, the others not (plan_layer_recomputed)
 *   order              -        "tp,cp,dp,pp" rank order, innermost first (placement.h; may
 *                                             name ep, else ep goes right before dp)
 *   stage_layers       layers   even split    layers of each stage when nstage_layers = pp
 *   first_stage_layers layers   0 (unset)     layers of the first stage (Megatron-Core's
 *   last_stage_layers  layers   0 (unset)     decoder_first/last_pipeline_num_layers); the
 *                                             other stages split the rest evenly
 *   vstage_layers      layers   -             layers of each of pp x interleave virtual
 *                                             stages, in virtual-stage order (chunk-major)
 *   dp_sync            -        allreduce     allreduce (collectives) | ps (parameter servers:
 *                                             each DP gradient bucket pushed to the servers
 *                                             and the updated weights pulled back; engine.h)
 *
 *   parallel.ps (struct plan_ps: the parameter servers)
 *   servers            -        1             parameter servers
 *   attach             -        fabric        fabric (dedicated CPU hosts on the fabric core,
 *                                             platform.h) | gpus (colocated: server k on
 *                                             member k of each DP group, as in seed 002)
 *   shard              -        even          even (every bucket split evenly over the
 *                                             servers by bytes) | round_robin (bucket i
 *                                             whole to server i mod servers)
 *   nic_Bps            B/s      0             a dedicated server's NIC per direction; 0:
 *                                             the topology's NIC bandwidth
 *   latency_s          s        -1            its NIC latency; < 0: the topology's NIC's
 *   async              -        false         asynchronous servers: each push applied as it
 *                                             comes, no meeting (engine.h)
 *   staleness          iterations -1          async: SSP bound (a rank starts iteration i
 *                                             once its DP group finished i - s - 1); < 0: none
 *   iterations         -        8             async: iterations replayed back to back (the
 *                                             report gives their mean)
 *
 *   training (struct plan_training)
 *   seq                tokens   required      sequence length (1 for CNNs: a sample is an image)
 *   global_batch       samples  required
 *   micro_batch        samples  1
 *   precision          -        bf16          compute and weight dtype
 *   grad_dtype         -        precision     dtype of the gradient reduction
 *   attention          -        see plan_resolve  flash | unfused (models/attention.h)
 *   fp8_comm           -        false         TP/SP all-gathers move fp8 (precision fp8)
 *   fp8_params         -        false         transformer-layer weights kept only in fp8
 *   fp8_moe_act_cache  -        false         routed experts' SwiGLU inputs saved in fp8
 *                                             (TE fp8_model_params / Megatron-Core
 *                                             --fp8-param-gather; precision fp8)
 *   optimizer_state_dtype - fp32         Adam's first and second moments: fp32 | bf16
 *                                             (models/precision.h precision_bf16_moments)
 *   master_weights     -        fp32          fp32 | remainders: the fp32 master kept as the
 *                                             bf16 weight and an int16 remainder
 *                                             (models/precision.h precision_master_remainders)
 *   allocator          -        stack's       expandable | native: PyTorch's caching allocator
 *                                             with or without expandable segments (models/ptalloc.h)
 *   memory_reserve     fraction 0.05          allocator fragmentation reserve of HBM
 *   train_tokens       tokens   0             for time- and cost-to-train
 *   input              -        none          the data loader (models/input_pipeline.h)
 *   finetune           -        full          LoRA / QLoRA (models/finetune.h): method,
 *                                             rank, alpha, dropout, targets, base dtype;
 *                                             zeroed: every weight trained
 *
 *   communication (struct plan_comm)
 *   coll_algo          -        "auto"        collective algorithm (coll.h registry)
 *   bucket_bytes       bytes    25e6          gradient bucket
 *   overlap_grad_reduce -       true          reduce buckets during backward
 *   overlap_param_gather -      false         ZeRO-1/2 parameter all-gather overlaps forward
 *   apex_contiguous_buffers -   false         Apex DistributedFusedAdam with contiguous grad
 *                                             and param buffers: no bucket buffers (memory.c)
 *   tp_comm_overlap    -        false         Transformer Engine userbuffers: SP all-gather /
 *                                             reduce-scatter pipelined with the GEMM chunks
 *                                             they feed (needs sp; see build_transformer.c)
 *   tp_rs_margin_sms   SMs      0, 0          userbuffers "pipeline" reduce-scatter with
 *                                             set_sm_margin: SMs its kernel holds, taken from
 *                                             the attention-proj [0] / MLP fc2 [1] forward GEMM
 *
 *   compute (struct plan_compute)
 *   stack              -        framework's   kernel stack (models/stack.h), a stack_table
 *                                             index; plan_resolve() sets it when not given
 *   attn_backend       -        stack's       flash kernel: fa2 | fa3 | cudnn | best; the
 *                                             stack's on this GPU unless given
 *   cuda_graphs        -        false         kernels replayed from CUDA graphs: the host
 *                                             issues none of them (models/host.h)
 *   host_issue_us      us       stack's       the host's time to issue one kernel, forward
 *                                             and backward; < 0: the stack's
 *   launch_blocking    -        false         CUDA_LAUNCH_BLOCKING=1: issue and GPU time
 *                                             add up (models/host.h)
 *
 *   moe (struct plan_moe)
 *   dist               -        model's       MoE routing: uniform | zipf | loads (models/moe.h)
 *   zipf_s             -        model's       Zipf exponent
 *   capacity_factor    -        model's       expert capacity in balanced loads, 0 = dropless
 *
 *   simulation (struct plan_simulation)
 *   fold               -        auto          fold identical replicas (engine.h)
 *   iterations         -        1             iterations sampled (a process each): the
 *                                             iteration time's P50/P95/P99 and the ranks
 *                                             on the critical path
 *   degraded           -        none          links of the platform (platform.c names) with
 *                                             bandwidth and latency factors (ndegraded)
 *   sensitivity        -        false         also simulate without them and with each
 *                                             alone: what each degraded link costs
 *   throttle           -        none          windows of the iteration in which some ranks'
 *                                             (or all) compute runs slower (nthrottle)
 *
 *   simulation.stragglers (struct plan_stragglers): ngroups groups, each
 *   (struct plan_straggler_group) with its own ranks and draws; a rank in
 *   several groups computes x the product of its groups' factors
 *   rank               ranks    none          ranks whose GPU computes slower (nranks of
 *                                             them from first_rank in the shared rank[])
 *   fraction           fraction 0             instead: this fraction of the ranks, drawn with
 *                                             the seed
 *   slowdown           factor   1             their compute time x this (fixed), or the
 *                                             mean (normal) / median (log-normal) of a draw
 *                                             per rank and iteration
 *   dist               -        fixed         fixed | normal | lognormal
 *   sigma              -        0             normal: standard deviation of the factor;
 *                                             log-normal: of its logarithm
 *   seed               -        1             seed of the draws (simulate.c); group k's
 *                                             stream is keyed by its seed and k, so a
 *                                             group added after it leaves its draws alone
 *   samples            factors  -             empirical: measured slowdown factors, one
 *                                             drawn uniformly per rank and iteration
 *                                             (nsamples from first_sample in samples[])
 *
 *   cost (struct plan_cost)
 *   usd_per_gpu_hour   USD      0             price for cost-to-train
 *
 * A stage's layers, with interleave v, are split over its v chunks as
 * evenly as possible, the remainder on the earlier chunks (Megatron-Core
 * asserts an even split; vstage_layers gives any split).
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
#include "host.h"
#include "input_pipeline.h"
#include "memory.h"
#include "schedule.h"
#include "workload.h"

#define PLAN_MAX_STAGES 512
/* The largest batch-norm group: NVIDIA's NHWC batch norm exchanges
 * statistics in log2(group) pairwise steps, at most 4 (MAX_SYNC_ITERS,
 * nhwc_batch_norm_kernel.h L193 of sneaxiy/NVIDIA-MxNet ce30b18). */
#define BN_GROUP_MAX 16
#define PLAN_MAX_VSTAGES 256            /* vstage_layers entries (keeps a plan < 8 KiB) */
#define PLAN_MAX_GPUS 1000000L
#define PLAN_MAX_PS_SERVERS 4096
#define PLAN_MAX_STRAGGLERS 32          /* listed straggler ranks, all groups */
#define PLAN_MAX_STRAGGLER_GROUPS 8
#define PLAN_MAX_DEGRADED 8
#define PLAN_MAX_ITERATIONS 1000
#define PLAN_MAX_SAMPLES 64             /* empirical straggler samples, all groups */
#define PLAN_MAX_THROTTLE 8             /* throttling windows */
#define PLAN_MAX_THROTTLE_RANKS 16      /* ranks or nodes of one window */
#define PLAN_MAX_NODE_GROUPS 4
/* Tasks of one iteration's programs (all stages): the replay holds them in
 * memory, about 100 bytes each; 30 M is about 3 GB. */
#define PLAN_MAX_TASKS 30000000L

enum fold_mode { FOLD_AUTO, FOLD_ON, FOLD_OFF, FOLD_EXACT };

/* What the engine measures of the links (simulation.link_traffic; as
 * engine.h's enum engine_links, in the same order). */
enum link_traffic { LINK_TRAFFIC_EXACT, LINK_TRAFFIC_BYTES, LINK_TRAFFIC_OFF };

/* CPU offload (ZeRO-Offload, Ren et al. 2021; ZeRO-Infinity, Rajbhandari
 * et al. 2021): where the optimizer state and the parameters live. */
enum offload { OFFLOAD_NONE, OFFLOAD_OPTIMIZER, OFFLOAD_PARAMS, OFFLOAD_N };

/* Context-parallel attention: ring exchange of K/V blocks (Megatron-Core's
 * cp_comm_type "p2p") or all-to-all of q, k, v and the output (DeepSpeed
 * Ulysses, cp_comm_type "a2a"). */
enum cp_comm { CP_P2P, CP_A2A, CP_COMM_N };

/* training.allocator: PyTorch's caching allocator as the job launched it
 * (models/ptalloc.h); PLAN_ALLOC_STACK: the stack's launch. */
enum plan_allocator { PLAN_ALLOC_STACK, PLAN_ALLOC_EXPANDABLE, PLAN_ALLOC_NATIVE };

/* Data-parallel gradient synchronisation: collectives over the DP group,
 * or parameter servers (push gradients, pull weights). */
enum dp_sync { DP_SYNC_ALLREDUCE, DP_SYNC_PS, DP_SYNC_N };
enum ps_attach { PS_ATTACH_FABRIC, PS_ATTACH_GPUS, PS_ATTACH_N };
enum ps_shard { PS_SHARD_EVEN, PS_SHARD_ROUND_ROBIN, PS_SHARD_N };

/* Stragglers: how a slow rank's compute-time factor is drawn. */
enum straggler_dist { STRAG_FIXED, STRAG_NORMAL, STRAG_LOGNORMAL, STRAG_EMPIRICAL, STRAG_N };

/* A throttling window (DVFS / thermal): from start_s for duration_s of
 * the iteration (simulated time from its start), compute on the listed
 * ranks (or every rank of the listed nodes; none: every rank) takes
 * factor x as long; a task straddling an edge is priced piecewise. */
struct plan_throttle {
	int n;                          /* 0: every rank */
	int id[PLAN_MAX_THROTTLE_RANKS];/* ranks, or nodes when by_node */
	bool by_node;
	double start_s, duration_s, factor;
};

/* A node group of a mixed cluster: nodes consecutive nodes with GPU gpu
 * (a preset's values, loaded by the scenario). */
struct plan_node_group {
	int nodes;
	struct gpu_spec gpu;
};

enum node_order { NODE_ORDER_LISTED, NODE_ORDER_FAST_FIRST, NODE_ORDER_SLOW_FIRST, NODE_ORDER_N };

/* A degraded link: its platform name (platform.c) and factors on its
 * bandwidth and latency. */
struct plan_degraded {
	char link[40];
	double bw_factor, latency_factor;
};

/* Keys a scenario gave explicitly (a framework preset fills the others). */
enum plan_given {
	PLAN_GIVEN_ZERO = 1 << 0,
	PLAN_GIVEN_GRAD_DTYPE = 1 << 1,
	PLAN_GIVEN_BUCKET = 1 << 2,
	PLAN_GIVEN_OVERLAP_GRAD = 1 << 3,
	PLAN_GIVEN_OVERLAP_PARAM = 1 << 4,
	PLAN_GIVEN_MOE_DIST = 1 << 5,
	PLAN_GIVEN_MOE_ZIPF = 1 << 6,
	PLAN_GIVEN_MOE_CAPACITY = 1 << 7,
	PLAN_GIVEN_PS = 1 << 8,         /* a parallel.ps object */
	PLAN_GIVEN_PS_NIC = 1 << 9,     /* parallel.ps.nic_Gbps or latency_us */
	PLAN_GIVEN_PS_ASYNC = 1 << 10,  /* parallel.ps.staleness or iterations */
};

struct inputs;

/* The plan mirrors the scenario file: one sub-struct per JSON object
 * (scenario.h's key table), the keys with no object of their own at the
 * top. Every member is a value, so the plan stays copyable as a whole. */

/* parallel.ps: the parameter servers (dp_sync ps). */
struct plan_ps {
	int servers;
	enum ps_attach attach;
	enum ps_shard shard;
	double nic_Bps;                 /* 0: the topology's NIC */
	double latency_s;               /* < 0: the topology's NIC latency */
	bool async;
	int staleness;                  /* < 0: unbounded */
	int iterations;
};

/* parallel: degrees, rank order, pipeline split, sharding, offload. */
struct plan_parallel {
	int dp, tp, pp;                 /* dp = 0: derived by plan_resolve() */
	int cp;
	enum cp_comm cp_comm;
	int ep;                         /* expert parallelism (MoE) */
	int etp;                        /* expert tensor parallelism (MoE); 0: tp (plan_etp) */
	int bn_group;                   /* GPUs per synchronized batch norm (CNN) */
	enum offload offload;
	bool sp;
	enum zero_stage zero;
	int shard_group;                /* GPUs ZeRO shards over; 0: dp x cp */
	enum sched_kind schedule;
	int interleave;
	enum recompute recompute;
	int recompute_every;            /* full: every n-th layer of a rank (1: all) */
	unsigned recompute_modules;     /* selective: Megatron's modules (workload.h
					   enum rc_module; 0: core_attn) */
	char order[16];
	int nstage_layers;              /* 0 = even split, else pp */
	int stage_layers[PLAN_MAX_STAGES];
	int first_stage_layers, last_stage_layers;  /* 0 = unset */
	int nvstage_layers;             /* 0 = none, else pp x interleave */
	int vstage_layers[PLAN_MAX_VSTAGES];
	enum dp_sync dp_sync;
	struct plan_ps ps;
};

/* training: the batch, the dtypes, the attention kernel, memory. */
struct plan_training {
	long seq, global_batch, micro_batch;
	enum dtype precision;
	enum dtype grad_dtype;
	enum attention attention;       /* resolved by plan_resolve() unless attention_set */
	bool attention_set;
	bool fp8_comm;
	bool fp8_params;
	bool fp8_moe_act_cache;         /* the routed experts' SwiGLU inputs saved in fp8 */
	bool bf16_moments;              /* optimizer_state_dtype "bf16": Adam's moments in bf16 */
	bool master_remainders;         /* master_weights "remainders": int16 remainders of the
					   fp32 master beside the bf16 weights */
	enum plan_allocator allocator;  /* allocator: the stack's, expandable or native */
	double memory_reserve;          /* fraction of HBM */
	double train_tokens;
	struct finetune finetune;       /* training.finetune (models/finetune.h) */
	struct input_pipeline input;    /* training.input_pipeline (models/input_pipeline.h) */
};

/* communication: the collective algorithm and the gradient reduction. */
struct plan_comm {
	char coll_algo[32];
	double bucket_bytes;
	bool overlap_grad_reduce;
	bool overlap_param_gather;
	bool apex_contiguous_buffers;   /* Apex DistributedFusedAdam, contiguous buffers */
	bool tp_comm_overlap;           /* TE userbuffers TP/SP overlap (build_transformer.c) */
	long tp_rs_margin_sms[2];       /* SMs the fprop reduce-scatter holds (proj, fc2) */
};

/* compute: the kernel stack, its attention backend, the host's issue time. */
struct plan_compute {
	int stack;                      /* stack_table index, -1 = the framework's (default
					   stack_default()); plan_resolve() sets it */
	bool stack_set;                 /* compute.stack given */
	int attn_backend_set;           /* attn_backend given (enum attn_backend), -1 = no */
	enum attn_backend attn_backend; /* resolved: the stack's on this GPU, or the given one */
	bool cuda_graphs;               /* compute.cuda_graphs: kernels replayed from CUDA graphs */
	double host_issue_us[2];        /* compute.host_issue_{fwd,bwd}_us, -1: the stack's */
	bool launch_blocking;           /* compute.launch_blocking: CUDA_LAUNCH_BLOCKING=1 */
};

/* moe: the routing (the model's unless given). */
struct plan_moe {
	int dist;                       /* enum moe_dist */
	double zipf_s, capacity_factor;
};

/* One group of simulation.stragglers: slow ranks and how their factor is
 * drawn. Its listed ranks and empirical samples live in the shared arrays
 * of struct plan_stragglers (keeps a plan < 8 KiB). */
struct plan_straggler_group {
	int nranks, first_rank;         /* rank[first_rank .. + nranks) */
	double fraction;
	double slowdown;
	enum straggler_dist dist;
	double sigma;
	unsigned seed;
	int nsamples, first_sample;     /* empirical: samples[first_sample .. + nsamples) */
};

/* simulation.stragglers: the groups (an object in the file is one). */
struct plan_stragglers {
	int ngroups;
	bool listed;                    /* given as a list (error paths, export) */
	struct plan_straggler_group group[PLAN_MAX_STRAGGLER_GROUPS];
	int nrank;                      /* listed ranks used, all groups */
	int rank[PLAN_MAX_STRAGGLERS];
	int nsample;                    /* samples used, all groups */
	double samples[PLAN_MAX_SAMPLES];
};

/* simulation: folding, sampled iterations and the what-ifs. */
struct plan_simulation {
	enum fold_mode fold;
	int iterations;
	struct plan_stragglers stragglers;
	int ndegraded;
	struct plan_degraded degraded[PLAN_MAX_DEGRADED];
	bool sensitivity;
	bool collective_pairs;     /* simulation.collective_pairs: no class plans (engine.h) */
	bool separate_streams;     /* simulation.separate_streams: no merged actors (engine.h) */
	bool collective_flows;     /* simulation.collective_flows: no private collective
				      replayed from its first instance (engine.h) */
	enum link_traffic link_traffic; /* simulation.link_traffic (engine_links.c) */
	int nthrottle;
	struct plan_throttle throttle[PLAN_MAX_THROTTLE];
};

/* cost: the price of a GPU-hour. */
struct plan_cost {
	double usd_per_gpu_hour;
};

struct plan {
	int nodes;
	int framework;                  /* framework_table index, -1 = none */
	unsigned given;                 /* enum plan_given bits */
	int ngroups;                    /* 0: every node has the topology's GPU (node_groups) */
	struct plan_node_group group[PLAN_MAX_NODE_GROUPS];
	enum node_order node_order;
	struct plan_parallel parallel;
	struct plan_training training;
	struct plan_comm communication;
	struct plan_compute compute;
	struct plan_moe moe;
	struct plan_simulation simulation;
	struct plan_cost cost;
};

/* Whether some rank computes at another speed than the others (plan
 * stragglers): folding then simulates the replicas they are in. */
bool plan_has_stragglers(const struct plan *p);
/* Whether group g of p's stragglers names a rank and slows it. */
bool plan_straggler_group_active(const struct plan *p, int g);
/* Whether some active group draws its factor (not "fixed"). */
bool plan_stragglers_drawn(const struct plan *p);

/* slow[r] (nranks of them) = 1 for the ranks of any group (listed, or the
 * seeded fraction), the same ranks in every sampled iteration. */
void plan_straggler_mask(const struct plan *p, int nranks, unsigned char *slow);
/* The same for group g alone. */
void plan_straggler_group_mask(const struct plan *p, int g, int nranks, unsigned char *slow);

/* The compute-time factor of every rank (nranks of them) in sampled
 * iteration iter (0 = the reported one): the product over the groups
 * holding the rank of each group's factor (fixed, or drawn from the
 * group's seed, its index, the iteration and the rank; each never below
 * 0.05), 1 for a rank in none. Same plan, same numbers on every machine. */
void plan_straggler_factors(const struct plan *p, int nranks, int iter, double *out);
/* Group g's factors alone (1 outside it). */
void plan_straggler_group_factors(const struct plan *p, int g, int nranks, int iter, double *out);

/* The node group (index into p->group) holding node, after node_order:
 * -1 when the plan has no groups. */
int plan_node_group(const struct plan *p, int node);
/* The GPU of global rank (GPU index) r: its node group's, else the
 * topology's. Borrowed from p or in. */
const struct gpu_spec *plan_rank_gpu(const struct plan *p, const struct inputs *in, int r);
/* Whether some node has another GPU than the others (then folded only by
 * classes of replicas: sim/simulate_fold.c). */
bool plan_mixed_gpus(const struct plan *p);
/* Whether node groups i and j have the same GPU (the preset's values). */
bool plan_groups_same_gpu(const struct plan *p, int i, int j);
/* A GPU's GEMM rate at precision dt (peak x best GEMM efficiency x the
 * clock ratio of its power limit, gpu.h), the speed node_order sorts by. */
double plan_gpu_speed(const struct gpu_spec *g, enum dtype dt);

/* The defaults of the table above (nodes, seq, global_batch left 0). */
void plan_init(struct plan *p);

/* The kernel stack that prices p's ops (models/stack.h). */
const struct stack *plan_stack(const struct plan *p);
/* The framework preset p's ZeRO-3 runs: its own (NULL: none), or
 * DeepSpeed 0.4's where the deepspeed-zero3-2021 stack runs ZeRO-3 under
 * a preset that does not gather per tensor (that version's defaults
 * whatever the preset). */
const struct framework *plan_z3_framework(const struct plan *p);
/* Whether p's ZeRO-3 gathers tensor by tensor under fw: a per-tensor
 * preset, ZeRO-3 over more than one rank, no TP and no CP. */
bool plan_z3_per_tensor(const struct plan *p, const struct framework *fw);
/* The host's issue time per kernel launch under p (models/host.h): the
 * given one, else the stack's; none when kernels replay from CUDA graphs. */
struct host_issue plan_host_issue(const struct plan *p);
/* The kernel that runs p's attention core, for reports: the resolved
 * flash backend ("fa2", "fa3", "cudnn", "best") or "unfused". */
const char *plan_attention_kernel(const struct plan *p);

/* Set p->parallel.dp from the cluster when it is 0 (GPUs / (tp x cp x pp); every
 * GPU for a CNN), seq to 1 for a CNN, and the attention kernel when not
 * set: flash where the GPU has a flash kernel and the precision is 16-bit
 * or fp8 (FlashAttention has no fp32 kernels), else unfused; the MoE
 * routing keys the scenario did not give from the model file. With a
 * framework preset, every knob of the preset that `given` does not mark
 * is set from it (models/framework.h). Idempotent. Leaves a plan that
 * does not divide the cluster for plan_check() to report. */
void plan_resolve(struct plan *p, const struct inputs *in);

/* Check p against the inputs: the cluster, the model's dimensions and the
 * batch. Every problem is reported into d as "file: /json/path: ..." (file
 * names the scenario or sweep the plan came from). Returns 0 if the plan
 * can be simulated, else the number of problems. No side effects. */
int plan_check(const struct plan *p, const struct inputs *in, const char *file, struct diag *d);

/* The parts of plan_check() that hold for every plan with p's model,
 * precision, sequence and fine-tuning, whatever its layout and cluster
 * size: what a goal fixes for each of its candidates, so the plan search
 * reports them once before searching (sim/search.h). tr is the JSON path
 * of the object holding precision, seq_len and finetune ("/training" in a
 * scenario, "" in a goal). Returns the number of problems reported. */
int plan_check_fixed_model(const struct plan *p, const struct model *m, const char *file, const char *tr,
			   struct diag *d);
/* The fastest p could train its train_tokens (every GPU at 1.25 x its
 * peak: no cost source prices a kernel faster) and what that costs,
 * against the bounds of a time to train and a cost (models/bounds.h's
 * *_days and *_usd), reported at jpath of file before anything is
 * simulated. Returns the number of problems (0 without train_tokens or
 * for a CNN). */
int plan_check_train_time(const struct plan *p, const struct inputs *in, const char *file, const char *jpath,
			  struct diag *d);
/* The same for the GPU of in's topology: a peak for the precision. */
int plan_check_fixed_gpu(const struct plan *p, const struct inputs *in, const char *file, const char *tr,
			 struct diag *d);

/* The workload shape one rank prices its kernels for (workload.h). */
struct wl_shape plan_wl_shape(const struct plan *p);

/* GPUs in the job: nodes x GPUs per node. */
long plan_gpus(const struct plan *p, const struct inputs *in);

/* The plan's parallel layout in one line for tables and messages, as
 * `ddlsim plan` prints it: "tp8 pp4v2 dp16 mb1 gb2048 z1 selective sp
 * tp,dp,pp" (v: interleaved chunks, z: ZeRO stage, "z3/8" over shard
 * groups of 8; "full/2": full recompute of every second layer; " cp2 ep8"
 * after the pipeline when context or expert parallelism is on, " etp1"
 * when the expert-tensor-parallel degree is not tp). */
void plan_describe(const struct plan *p, char *buf, size_t n);

/* The GPUs ZeRO shards over: shard_group, or the whole dp x cp group. */
int plan_shard_group(const struct plan *p);

/* The expert-tensor-parallel degree: parallel.etp, or tp where it is 0
 * (Megatron-Core's default: arguments.py sets --expert-tensor-parallel-size
 * to --tensor-model-parallel-size when not given). */
int plan_etp(const struct plan *p);

/* The expert-data-parallel ranks of an expert's gradients and optimizer
 * shards: dp x cp x (tp / etp) / ep (Megatron-Core parallel_state.py:
 * expert_data_parallel_size = decoder_world_size / (etp x ep x pp)). */
long plan_edp(const struct plan *p);

/* Ranks between two neighbours of the EP group: tp x cp, or 1 with
 * etp != tp (placement_set_etp's folded expert groups). */
int plan_ep_stride(const struct plan *p);

/* Hybrid sharding: a shard group smaller than the dp x cp group. */
bool plan_hsdp(const struct plan *p);

/* Micro-batches per pipeline per iteration: global_batch / (dp x micro_batch). */
long plan_microbatches(const struct plan *p);

/* Layers of virtual stage vs of nv = pp x chunks (vs = chunk x pp +
 * stage), and the index of its first layer: vstage_layers when given;
 * else each stage's count (stage_layers, or first/last_stage_layers with
 * the rest split evenly) split over its chunks; else as even as possible
 * over the nv virtual stages with the remainder on the first ones. */
int plan_vstage_layers(const struct plan *p, long model_layers, int vs, int nv, int *first);
/* The transformer blocks virtual stage vs runs: its layers
 * (plan_vstage_layers()) and on the last one, with the output head, the
 * model's mtp_depth MTP blocks after them (model.h: Megatron-Core builds
 * them on the last pipeline stage), indices layers .. layers + D - 1. */
int plan_stage_blocks(const struct plan *p, const struct model *m, int vs, int nv, int *first);

/* Whether the k-th transformer layer a rank holds (from 0, counted over
 * its chunks in order) is recomputed in its backward: every layer under
 * selective and selective-op; under full, the n-th, 2n-th, ... with n =
 * recompute_every (torchtitan's selective layer policy: apply_ac counts
 * the blocks it wraps in one process and checkpoints those whose count
 * is a multiple of n, torchtitan 9dec370 parallelize_llama.py L277-285). */
bool plan_layer_recomputed(const struct plan *p, int k);

/* Over the whole model (each pipeline stage counting its own layers):
 * the layers recomputed, *dense of them an MoE model's dense first ones. */
double plan_recomputed_model_layers(const struct plan *p, const struct model *m, double *dense);

/* Name tables for the plan's enums, NULL-terminated, in enum order (the
 * loaders and the reports read these). */
extern const char *const plan_fold_names[];
extern const char *const plan_link_traffic_names[];
extern const char *const plan_cp_comm_names[];
extern const char *const plan_offload_names[];
extern const char *const plan_dp_sync_names[];
extern const char *const plan_ps_attach_names[];
extern const char *const plan_ps_shard_names[];
extern const char *const plan_ps_mode_names[];
extern const char *const plan_straggler_dist_names[];
extern const char *const plan_node_order_names[];

#endif
