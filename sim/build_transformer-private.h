/* build_transformer-private: what the transformer builder's files share
 * (sim/ only).
 *
 * The builder (build_transformer.h) is split by concept:
 *   build_transformer.c        the design (its header comment), the
 *                              builder's sizes, a stage's program
 *   build_transformer_step.c   one forward or backward pass of a
 *                              micro-batch through a (virtual) stage: the
 *                              layers' compute, their TP/SP, CP and EP
 *                              communication, ZeRO-3 and offload
 *                              parameter fetches
 *   build_transformer_ds2021.c DeepSpeed v0.4's ZeRO-3 gathers (the
 *                              step file calls it per layer)
 *   build_transformer_grads.c  gradient buckets and their data-parallel
 *                              reductions, offload copies
 *   build_transformer_stage.c  what a stage holds and does around its
 *                              steps: its layers and shards, the
 *                              optimizer step, its stage_result
 * No call runs back: build_transformer.c calls the step, grads and
 * stage files, the stage file the step and grads files, the step file
 * the ds2021 and grads files, the ds2021 file the grads file. */
#ifndef DDLSIM_BUILD_TRANSFORMER_PRIVATE_H
#define DDLSIM_BUILD_TRANSFORMER_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>

#include "build_transformer.h"
#include "blocks.h"
#include "cost.h"
#include "framework.h"

/* What differs between an MoE layer and a dense one (an MoE model's
 * first_dense_layers, models/model.h): its priced blocks, whether its MLP
 * has the all-to-alls, the sizes of its gradients and parameters. */
struct layer_kind {
	struct blocks bk;
	bool moe;                     /* an MoE layer: the MLP half is the dispatcher's
					 (build_transformer_step.c moe_mlp) */
	bool moe_a2a;                 /* MoE with ep > 1: the MLP half has all-to-alls */
	bool etp_gather;              /* MoE with etp > 1: the routed copies are all-gathered
					 and reduce-scattered over the expert-TP group */
	bool shared_sp;               /* MoE with shared experts and tp > 1: their SP
					 all-gather and reduce-scatter over TP */
	double grad_bytes;            /* one layer's dense gradients (of this rank) */
	double grad_bytes_expert;     /* MoE: one layer's expert gradients (of this rank) */
	double param_bytes;           /* one layer's parameters (ZeRO-3, offload fetch) */
	double gather_copy_s;         /* FSDP2: the copy-out after the layer's all-gather */
};

/* Megatron-Core's overlapped all-gather of the updated parameters
 * (overlapped_param_gather): one all-gather per gradient bucket, in
 * forward order, and how far the first forward of each chunk has come
 * through the stage's parameters. */
struct param_gather {
	int *ids;                     /* [n] the buckets' all-gathers, forward order */
	int n;
	double total, seen;           /* the stage's gradient bytes, those passed */
	unsigned char *done;          /* [v] the chunk's first forward is built */
};

/* The sizes of the messages a layer sends (this rank's). */
struct builder_msg {
	double act_bytes;             /* p2p message / TP collective size */
	double ag_bytes;              /* TP/SP all-gather size (fp8 with fp8_comm) */
	double cp_kv_bytes;           /* ring: one K/V block of this rank */
	double cp_qkv_bytes, cp_out_bytes; /* a2a: q, k, v and the output */
	double ep_bytes;              /* MoE: N of one dispatch / combine all-to-all */
	double etp_bytes;             /* MoE, etp > 1: N (gathered) of the routed copies'
					 all-gather / reduce-scatter over expert TP */
	double host_bw_Bps;           /* offload: the GPU's host link */
	double rs_margin[WL_NBLOCKS]; /* tp_comm_overlap: SMs / (SMs - the forward reduce-
					 scatter's set_sm_margin SMs), per half-layer (1: none) */
};

/* Gradients on their way to the data-parallel reductions
 * (build_transformer_grads.c). */
struct builder_grads {
	double grad_bytes_embed, grad_bytes_head;
	double pending;               /* bytes in the open bucket */
	double pending_e;             /* expert bytes in the open bucket */
	double gb;                    /* bytes per gradient element */
	int *dp_tasks;                /* reductions, for the optimizer's deps */
	int ndp;
	size_t capdp;
};

/* The stream order of the tasks built (build_transformer_task.c). */
struct builder_stream {
	int last;                     /* last task, for stream-order deps */
	int gate;                     /* a task the next compute must wait for */
	int prev_mark;                /* last task before the previous layer began */
};

/* The framework's granularity (framework.h; fw NULL: per layer, no
 * launch cost) and ZeRO-3's per-tensor gathers with their reuse distance. */
struct builder_z3 {
	const struct framework *fw;
	double launch_s;              /* per data-parallel collective call */
	bool per_tensor;              /* ZeRO-3 gathers per parameter tensor, chunked compute */
	int ntens;                    /* weight tensors of a layer (this rank's part) */
	double tens[8];               /* their elements */
	double tens_total;
	double wbytes;                /* bytes per gathered parameter */
	int layer;                    /* global index of the layer being built */
	double used;                  /* parameter elements used so far (reuse distance) */
	double *last_use;             /* [model layers] `used` after a layer's last use, -1 */
	double *last_use_t;           /* [model layers x 8] `used` after a tensor's last use, -1
	                               * (DeepSpeed 0.4's reuse distance per module) */
	int *hist_before;             /* per computed tensor chunk: the task before it */
	double *hist_el;              /* and the elements its gather fetched (0: resident) */
	int nhist;
	size_t caphist, caphist2;
	/* DeepSpeed 0.4's synchronising coordinator (stack ds_zero3_2021,
	 * build_transformer_ds2021.c) */
	bool sync;
	long ranks;                   /* a gathered tensor is padded to a multiple of these */
	int ahead;                    /* prefetched tensors not yet used */
	int inflight;                 /* the batch's last gather (its last task), -1: waited for */
	int left;                     /* layers after this one the pass's prefetch may reach */
	int last_param;               /* the parameter stream's last task, -1: none */
};

struct builder {
	const struct plan *pl;
	const struct model *m;
	struct program *p;
	/* [0] the model's layer (an MoE model's MoE layer), [1] an MoE
	 * model's dense first layers, the first n_dense of the model */
	struct layer_kind kind[4];    /* by builder_kind(): MoE or dense, full or
				         sliding-window attention */
	const struct layer_kind *lk;  /* the layer being built (embedding, head: any) */
	long n_dense;
	int stage, pp, v;
	struct builder_msg msg;
	struct builder_grads grads;
	struct builder_stream stream;
	struct builder_z3 z3;
	struct precision pr;          /* the plan's dtypes (fp8 comm and params applied) */
	double le;                    /* expert parameters of a layer (0: dense) */
	double tied_copy;             /* last stage's own copy of tied embeddings (elements) */
	struct cost *cost;            /* prices the FSDP2 copies */
	bool fsdp2;                   /* ZeRO-3 as FSDP2 runs it (stack.fsdp2_copies) */
	bool fsdp1;                   /* FSDP1's reduce hook divides (stack.fsdp1_flat) */
	bool frozen;                  /* LoRA / QLoRA: only the adapters have gradients */
	enum group_kind zgroup;       /* the group ZeRO shards over and gathers in: GROUP_DP,
					 GROUP_DPS under hybrid sharding (plan_hsdp) */
	bool split;                   /* the schedule splits each backward into B and W
					 (schedule.h zb-h1): B leaves out the weight-gradient
					 GEMMs, W runs them and hands the gradients over */
	struct param_gather pg;       /* overlap_param_gather's buckets (n 0: none) */
};

/* What a stage holds and does around its steps. */
struct stage_plan {
	int nsteps;
	int *last_b;            /* [v] step of each chunk's last backward (its last
				   W where the schedule splits the backward) */
	int layers, first0;     /* the stage's layers, its first chunk's first */
	int dense;              /* of the layers, an MoE model's dense first layers */
	int kinds[4];           /* of the layers, those of each builder_kind() */
	double peak_alive;      /* layers' activations alive at once, at most */
	bool has_emb, has_head;
	double psi, psi_e;      /* this rank's parameters: dense, experts */
	int ndp, nedp;          /* gradient/optimizer shards: dp x cp (the shard group
				   under hybrid sharding), x tp / etp / ep for experts */
	bool gather;            /* ZeRO-1/2 all-gather of updated parameters */
	double ag_total, ag_chunk;
	int ag_count;
};

/* The kind of global layer `layer` (0-based), an index of builder.kind:
 * 1 for an MoE model's dense first layers, + 2 where it attends through
 * the model's sliding window (model.h). */
int builder_kind(const struct builder *b, long layer);

/* The forward (backward) pass of micro-batch mb through chunk chunk of
 * the stage; last_mb: the chunk's last backward, where gradients are
 * reduced (build_transformer_step.c). */
void builder_forward(struct builder *b, int mb, int chunk);
void builder_backward(struct builder *b, int mb, int chunk, bool last_mb);
/* The same, their pipeline send left out when `send` is false. */
void builder_forward_send(struct builder *b, int mb, int chunk, bool send);
void builder_backward_send(struct builder *b, int mb, int chunk, bool last_mb, bool send);
/* W of micro-batch mb through chunk chunk under a split backward (b->split):
 * the weight gradients, then handed to the reductions (last_mb: the
 * chunk's last W, where they are reduced) (build_transformer_step.c). */
void builder_weight(struct builder *b, int mb, int chunk, bool last_mb);

/* Task t added after dep, the stream's last task and (compute stream)
 * the gate, which it clears; returns it (build_transformer_task.c). */
int builder_add(struct builder *b, const struct task *t, int dep);
/* A compute task on the compute stream after dep (and the stream's last
 * task and the gate); returns it (build_transformer_task.c). */
int builder_compute(struct builder *b, enum task_cat cat, double time_s, double flops, int mb,
		    int chunk, int dep);

/* Layers of virtual stage vs (of pp * v), and the first layer's index
 * (build_transformer_step.c). */
int builder_vstage_layers(const struct builder *b, int vs, int nv, int *first);

/* The virtual stage the stage's chunk runs, of *nv (schedule_vstage())
 * (build_transformer_step.c). */
int builder_vstage(const struct builder *b, int chunk, int *nv);

/* The pipeline send of a forward (fwd) or backward step of (mb, chunk)
 * that the step left to its caller (dualpipe's F&B pairs and whole
 * backwards, schedule.h), now (build_transformer_step.c). */
void builder_send(struct builder *b, bool fwd, int mb, int chunk);

/* Gradients of bytes (dense) and expert (MoE experts) became ready on the
 * compute stream; reduced in buckets when reduce_now
 * (build_transformer_grads.c). */
void builder_grads_ready2(struct builder *b, double bytes, double expert, bool reduce_now);
void builder_grads_ready(struct builder *b, double bytes, bool reduce_now);

/* Reduce what the open buckets hold (build_transformer_grads.c). */
void builder_flush_bucket(struct builder *b);

/* A layer's compute under DeepSpeed 0.4's ZeRO-3 coordinator
 * (builder_z3.sync): one chunk per weight tensor (reverse order in
 * backward), each parameter gathered behind a device synchronize, and
 * the prefetch batches (build_transformer_ds2021.c). */
void builder_sync_tensor_layer(struct builder *b, enum task_cat cat, double time_s, double flops,
			       int mb, int chunk, bool reverse);

/* Offload: a copy of bytes over the GPU's host link after dep; returns
 * the task (build_transformer_grads.c). */
int builder_host_copy(struct builder *b, double bytes, int dep);

/* The time of `kernels` copy kernels moving bytes over elements in all
 * (stack pieces FSDP2 and DeepSpeed run around their collectives), priced
 * by the cost source, each kernel paying its launch
 * (build_transformer_grads.c). */
double builder_copy_time(const struct builder *b, const char *name, double elements, double bytes,
			 int kernels);

/* The stage's layers and its parameters' shards, from the schedule's
 * order of steps (build_transformer_stage.c). */
void stage_plan_init(struct stage_plan *sp, const struct builder *b, const struct model *m,
		     const struct sched_step *order, int m_mb);

/* Megatron-Core's overlap_param_gather: one all-gather per gradient
 * bucket during the step's first forward, each layer waiting for its
 * bucket's (build_transformer_stage.c). */
void builder_overlapped_param_gather(struct builder *b, const struct stage_plan *sp);

/* The optimizer step after every reduction (on the CPU with offload),
 * then the ZeRO-1/2 gathers of updated parameters
 * (build_transformer_stage.c). */
void builder_optimizer_step(struct builder *b, const struct stage_plan *sp,
			    const struct topology *topo);

/* The stage's compute times and memory anatomy (stage_result)
 * (build_transformer_stage.c). */
void builder_stage_result(struct stage_result *sr, const struct builder *b,
			  const struct stage_plan *sp, const struct inputs *in);

#endif
