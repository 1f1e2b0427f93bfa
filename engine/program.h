/* program: what one rank does in one training iteration, as tasks.
 *
 * A schedule (DP, pipeline 1F1B, ...) writes a program: tasks placed on
 * streams, like CUDA streams. Tasks of one stream run one after another in
 * the order they were added; a task may also wait for tasks of other
 * streams (its deps), like a CUDA event wait. The engine replays programs
 * on SimGrid, so overlap and exposed communication come out of the
 * replay, not out of a formula.
 *
 * A program is a template shared by all ranks in the same role (for
 * example every rank of one pipeline stage): collectives name a group kind
 * (this rank's TP group, DP group) and sends/receives a peer relative to
 * the rank's pipeline stage; the engine resolves them per rank. */
#ifndef DDLSIM_PROGRAM_H
#define DDLSIM_PROGRAM_H

#include "coll.h"

enum stream {
	STREAM_COMPUTE,
	STREAM_TP,        /* tensor-parallel collectives (blocking compute) */
	STREAM_DP,        /* gradient reduction, overlapped */
	STREAM_PARAM,     /* ZeRO-3 / FSDP parameter gathers */
	STREAM_SEND,      /* pipeline sends (posted, not waited) */
	STREAM_RECV_PREV, /* pipeline receives from the previous stage */
	STREAM_RECV_NEXT, /* pipeline receives from the next stage */
	STREAM_CP,        /* context-parallel K/V exchange (overlaps attention) */
	STREAM_EP,        /* expert-parallel token dispatch / combine (blocking compute) */
	STREAM_HOST,      /* CPU offload: the GPU's host link and the CPU optimizer step */
	STREAM_DPR,       /* hybrid sharding: the all-reduce of each reduced shard across
			     the shard groups (FSDP2's all_reduce_stream) */
	STREAM_N
};

enum task_kind { TASK_COMPUTE, TASK_COLL, TASK_SEND, TASK_RECV };

/* What a task's time is accounted as, in the report's breakdown. */
enum task_cat {
	CAT_FORWARD,
	CAT_BACKWARD,
	CAT_RECOMPUTE,
	CAT_OPTIMIZER,
	CAT_TP_COMM,
	CAT_DP_COMM,
	CAT_PARAM_COMM,
	CAT_CP_COMM,      /* context parallelism: ring K/V exchange or all-to-all */
	CAT_EP_COMM,      /* expert parallelism: token dispatch and combine all-to-alls */
	CAT_OFFLOAD,      /* CPU offload: host-link copies and the CPU optimizer step */
	CAT_PP_COMM,
	CAT_N
};

/* GROUP_DP: the data-parallel ranks together with the context-parallel
 * ones (dp x cp: Megatron-Core reduces gradients over both); GROUP_CP: the
 * context-parallel ring; GROUP_EP: the expert-parallel ranks (token
 * all-to-alls); GROUP_EDP: the expert-data-parallel ranks (dp / ep x cp,
 * expert gradients); GROUP_EMB: the first and last pipeline stage of
 * the same (tp, cp, dp), which hold the two copies of tied embeddings;
 * GROUP_MIRROR: stages s and pp - 1 - s of the same (tp, cp, dp), which
 * under dualpipe hold the two copies of the same layers;
 * hybrid sharding (placement.h shard): GROUP_DPS the shard group (consecutive
 * members of GROUP_DP), GROUP_DPR the replicate group (one member of each
 * shard group, the same position in it). */
enum group_kind { GROUP_TP, GROUP_DP, GROUP_CP, GROUP_EMB, GROUP_EP, GROUP_EDP, GROUP_MIRROR, GROUP_DPS,
		  GROUP_DPR, GROUP_N };

/* Direction of a pipeline transfer (which neighbour, which mailbox). */
enum p2p_dir { P2P_FWD, P2P_BWD };

struct task {
	enum task_kind kind;
	enum stream stream;
	enum task_cat cat;
	double time_s;          /* TASK_COMPUTE */
	double flops;           /* TASK_COMPUTE: model FLOPs it stands for */
	enum coll_op op;        /* TASK_COLL */
	enum group_kind group;  /* TASK_COLL */
	double bytes;           /* TASK_COLL (N per call), TASK_SEND/RECV */
	int count;              /* TASK_COLL: back-to-back calls merged (>= 1) */
	double launch_s;        /* TASK_COLL: host launch cost per call (framework.h), waited
				   on the stream before the call */
	enum p2p_dir dir;       /* TASK_SEND/RECV: FWD goes to the next stage */
	bool rev;               /* TASK_SEND/RECV: of a pipeline that runs from the
				   last stage to the first (dualpipe's chunk 1): FWD
				   goes to the previous stage; its own mailboxes */
	bool blocking;          /* TASK_SEND: done when delivered, not when posted
				   (DeepSpeed's p2p.send; build_transformer.c) */
	int mb, chunk;          /* micro-batch and model chunk, for traces */
	int dep0, ndeps;        /* into program.deps (tasks of other streams) */
	int nwaiters;           /* cross-stream tasks that wait for this one */
};

struct program {
	struct task *t;
	int n;
	size_t cap;
	int *deps;
	int ndeps;
	size_t depcap;
	double peak_inflight;   /* micro-batch chunks alive at once (memory) */
	double flops;           /* model FLOPs of the program (no recompute) */
};

void program_init(struct program *p);
void program_finish(struct program *p);

/* Append a copy of t that waits for deps[0..ndeps) (task indices, any
 * stream; same-stream deps are implied and dropped; -1 means none).
 * Returns the new task's index. Cannot fail: out of memory exits (xalloc.h),
 * a dependency on a task not yet added is a BUG. */
int program_add(struct program *p, const struct task *t, const int *deps, int ndeps);

/* Shorthands. */
int program_compute(struct program *p, enum task_cat cat, double time_s,
		    double flops, int mb, int chunk, const int *deps, int ndeps);
int program_coll(struct program *p, enum stream s, enum task_cat cat,
		 enum coll_op op, enum group_kind g, double bytes, int count,
		 const int *deps, int ndeps);

/* Whether a pipeline message of pr, the program of stage of pp, goes to
 * or comes from past the first or last stage: an interleaved pipeline's
 * last stage sends chunk c's activations to the first stage's chunk
 * c + 1 (engine_p2p.c: placement_stage_peer wraps around), the backward
 * the reverse; a reversed pipeline's (dualpipe's chunk 1) forward goes
 * toward stage - 1. */
bool program_wraps(const struct program *pr, int stage, int pp);

/* Whether any of the pp stage programs has a message that wraps around
 * (program_wraps). */
bool program_stages_wrap(struct program *const *stage, int pp);

/* Into serial[kind]: whether every collective of the kind, over the pp
 * stage programs, is on one stream, so that its instances run one at a
 * time. */
void program_serial_kinds(struct program *const *stage, int pp, bool serial[GROUP_N]);

const char *task_cat_name(enum task_cat c);
const char *stream_name(enum stream s);

#endif
