/* workload: the kernels one GPU runs for a piece of a transformer.
 *
 * A training step is built from blocks: the embedding, the attention half
 * and the MLP half of every transformer layer, and the head (final norm, LM
 * head, loss). workload_block() lists the kernels of one block for one
 * micro-batch, forward or backward, as this GPU sees them under tensor
 * parallelism t (Megatron column/row split: heads, FFN and vocabulary are
 * divided by t) and, with sequence parallelism, with norms, dropout and
 * residuals split along the sequence.
 *
 * Each op carries the FLOPs its kernel executes (2mnk per GEMM; the
 * attention core as attention.h counts it for the chosen kernel, causal
 * flash doing half of the s x s work), the HBM bytes it moves and its
 * shape, so a cost source can price it. Precision follows precision.h:
 * under fp8 the transformer-layer GEMMs run in fp8 and the tensors that
 * enter them unfused are cast (and transposed) by memory-bound kernels
 * ("*.fp8_cast"); the LM head and the attention core stay 16-bit.
 * Communication is not an op: the schedules place collectives between
 * blocks.
 *
 * Context parallelism c (Megatron-Core cp, Transformer Engine's
 * attention): every op sees T / c tokens. The ring ("p2p", flash only)
 * splits the sequence into 2c chunks and gives rank i chunks i and
 * 2c-1-i (load-balanced causal split); its attention core is c ops, the
 * rank's own causal block ("flash_attn.cp0": causal over s / c tokens)
 * and c - 1 ring steps ("flash_attn.cpK": non-causal, 2 x bh blocks of
 * s / 2c queries by s / 2c keys, the half of an off-diagonal block the
 * causal mask keeps). Each step is 1/c of a causal s x s core, so the c
 * ranks together do exactly the causal core's FLOPs. The all-to-all
 * ("a2a") gives each rank the whole sequence for heads / (t c) heads: one
 * causal core of s tokens over bh / c.
 *
 * Mixture of experts (model.h "moe", moe.h for the routing): the MLP block
 * of an MoE layer is the norm, the router (a T x E GEMM and a top-k
 * softmax), the permutation of the T k token copies ("moe_permute"), the
 * experts of this rank as grouped GEMMs ("expert_fc1", "expert_act",
 * "expert_fc2": batch E / ep experts of R / (E / ep) tokens each, R = the
 * busiest rank's copies, T k x rank_load; expert FFN split over t as the
 * dense MLP), the unpermutation, the shared experts (dense GEMMs over T)
 * and the residual. The ops named "expert_*" are the ones between the
 * dispatch and the combine all-to-all.
 *
 * Fine-tuning (finetune.h; dense models): with frozen base weights every
 * weight GEMM's backward is its data gradient alone and no main gradient
 * is accumulated; NF4 base weights are dequantized ("<gemm>.dequant",
 * three kernels) before each transformer-layer GEMM, forward and
 * backward; each adapter of a targeted layer follows its base GEMM as the
 * ops "lora_<target>.dropout" (dropout > 0), ".a" and ".b" (GEMMs with
 * their ".dgrad" and ".wgrad"), ".scale" and ".add", in backward also
 * ".grad_add" (the input's two gradients summed) and ".main_grad". The
 * adapter GEMMs run in the activation dtype (16-bit under fp8: NeMo's
 * adapters are not Transformer Engine modules). */
#ifndef DDLSIM_WORKLOAD_H
#define DDLSIM_WORKLOAD_H

#include <stdbool.h>

#include "attention.h"
#include "finetune.h"
#include "gpu.h"
#include "model.h"
#include "op.h"
#include "stack.h"

enum wl_block { WL_EMBED, WL_ATTN, WL_MLP, WL_HEAD, WL_NBLOCKS };

/* none; selective: Korthikanti's (the attention core again); full: every
 * layer's forward again; selective-op: torchtitan's per-op policy
 * (workload_sac_op_recomputed()). */
enum recompute { RECOMPUTE_NONE, RECOMPUTE_SELECTIVE, RECOMPUTE_FULL, RECOMPUTE_SELECTIVE_OP };

/* Megatron-Core's selective recompute modules (--recompute-modules with
 * --recompute-granularity selective; scenario parallel.recompute_modules),
 * a bit set. Megatron-LM megatron/core/transformer/transformer_config.py
 * recompute_modules (the version whose choices are core_attn, moe_act,
 * layernorm, mla_up_proj, mlp, moe, shared_experts; default
 * ["core_attn"]): core_attn checkpoints the attention core
 * (attention.py checkpoint_core_attention); layernorm wraps
 * input_layernorm and pre_mlp_layernorm in CheckpointWithoutOutput and
 * discards their outputs once the next GEMM has run (transformer_layer.py);
 * mla_up_proj the MLA up projections and RoPE (multi_latent_attention.py
 * recompute_up_proj / qkv_up_checkpoint: Q, K, V are discarded after the
 * core attention and rebuilt from the latents in the backward); moe_act
 * the routed experts' activation (moe/experts.py activation_checkpoint:
 * its output, fc2's input, is discarded after fc2). mlp, moe and
 * shared_experts (normal checkpointing of a whole sub-block) are not
 * modelled (plan_check refuses them). 0 means Megatron's default,
 * core_attn alone: the plain "selective" of Korthikanti et al. */
enum rc_module {
	RC_MOD_CORE_ATTN = 1u << 0, RC_MOD_LAYERNORM = 1u << 1, RC_MOD_MLA_UP_PROJ = 1u << 2,
	RC_MOD_MOE_ACT = 1u << 3, RC_MOD_MLP = 1u << 4, RC_MOD_MOE = 1u << 5,
	RC_MOD_SHARED_EXPERTS = 1u << 6,
};
#define RC_MOD_N 7
#define RC_MOD_MODELLED (RC_MOD_CORE_ATTN | RC_MOD_LAYERNORM | RC_MOD_MLA_UP_PROJ | RC_MOD_MOE_ACT)
/* Megatron's names, by bit (NULL-terminated). */
extern const char *const rc_module_names[RC_MOD_N + 1];
/* The set in force: mods, or Megatron's default {core_attn} for 0. */
static inline unsigned rc_modules(unsigned mods)
{
	return mods ? mods : RC_MOD_CORE_ATTN;
}

/* The data-parallel gradient path, for a stack whose engine runs it
 * (stack.h struct stack_zero_path). */
struct wl_grad_path {
	int zero;               /* ZeRO stage */
	int ranks;              /* ranks a gradient is partitioned over (dp x cp, or the
				   shard group under hybrid sharding; 0 or 1: one) */
	int microbatches;       /* per optimizer step (0 or 1: one) */
	double bucket_params;   /* reduce bucket, parameters (0: one bucket) */
};

/* How one GPU sees a micro-batch. */
struct wl_shape {
	double micro_batch;     /* b, samples */
	double seq;             /* s, tokens */
	int tp;                 /* tensor-parallel degree t */
	bool sp;                /* sequence parallelism */
	enum dtype dtype;       /* training precision (precision.h says what runs in what) */
	enum attention attention; /* attention kernel (decoder models are causal) */
	int cp;                 /* context-parallel degree c (0 or 1: none) */
	bool cp_a2a;            /* c > 1: all-to-all (Ulysses) rather than the ring */
	int ep;                 /* expert-parallel degree (0 or 1: none) */
	bool moe_override;      /* routing below, not the model file's */
	int moe_dist;           /* enum moe_dist */
	double moe_zipf_s, moe_capacity;
	const struct stack *stack; /* the kernels around the GEMMs (NULL: stack_default()) */
	/* the flash kernel that runs the attention core on a GPU of compute
	 * capability below 9 ([0]) and from 9 on ([1]): each node group's GPU
	 * takes its own */
	enum attn_backend attn_backend[2];
	bool grad_fp32;         /* weight gradients accumulate into fp32 main gradients */
	struct finetune ft;     /* LoRA / QLoRA (finetune.h); zeroed: every weight trained */
	bool dense_layer;       /* an MoE model's dense first layer (model.h
				   moe.first_dense_layers): the MLP block is the
				   dense one of ffn_size, no router, no experts */
	struct wl_grad_path grad; /* zeroed: ZeRO 0, one rank, one micro-batch */
	bool sliding;           /* a layer that attends through the model's sliding
				   window (model.h sliding_window; flash only) */
	unsigned rc_modules;    /* selective recompute's modules (enum rc_module;
				   0: core_attn) */
	int etp;                /* expert-tensor-parallel degree of the routed experts
				   (0: tp; moe_block in workload.c) */
};

/* Append the ops of block blk, pass pass, to out. With RECOMPUTE_SELECTIVE
 * the backward of WL_ATTN first recomputes the forward of shp's
 * rc_modules: the attention core (core_attn), the input norm (layernorm),
 * MLA's up projections and RoPE (mla_up_proj); that of WL_MLP the
 * pre-MLP norm (layernorm) and the routed experts' activation (moe_act,
 * MoE layers); full
 * recomputation is the schedule's business (it replays the forward).
 * Returns 0, or -1 for a blk outside enum wl_block (out of memory exits:
 * util/xalloc.h). */
int workload_block(const struct model *m, const struct wl_shape *shp,
		   enum wl_block blk, enum op_pass pass, enum recompute rc,
		   struct op_list *out);

/* Hardware FLOPs of one training iteration of `samples` sequences, the
 * whole model (all ranks), as the kernels of workload_block() execute them:
 * forward and backward of every block, plus what recomputation runs again
 * (full: every layer's forward; selective: the attention core's forward).
 * Unfused attention without recomputation gives model_iteration_flops()
 * exactly. Returns -1 where workload_block() fails. */
double workload_iteration_flops(const struct model *m, const struct wl_shape *shp,
				enum recompute rc, double samples);
/* As workload_iteration_flops() with full recompute of rc_layers of the
 * model's layers only, rc_dense_layers of them an MoE model's dense first
 * layers (the other modes recompute in every layer). */
double workload_iteration_flops_layers(const struct model *m, const struct wl_shape *shp,
				       enum recompute rc, double samples, double rc_layers,
				       double rc_dense_layers);

/* The routing of an MoE model under s (s->ep ranks; the model's routing
 * unless s->moe_override). A dense model gives a balanced, dropless
 * result. */
void workload_moe_balance(const struct model *m, const struct wl_shape *s,
			  struct moe_balance *out);

/* True if op is one of an MoE block's expert GEMMs or their activation
 * (the ops between dispatch and combine). */
bool workload_op_is_expert(const struct op *op);


/* torchtitan's per-op selective activation checkpointing ("selective",
 * selective_ac_option "op"; torchtitan 9dec370 parallelize_llama.py
 * L214-264, v0.1.0 models/llama3/infra/parallelize.py L217-290): in a
 * layer's forward the outputs of aten.mm are saved on every odd call
 * (the count restarts each layer: wq, wv, w1, w2 of a Llama layer),
 * SDPA's flash and efficient kernels' outputs always; every other op is
 * recomputed in the backward. Appends to out the forward ops of in that
 * the backward runs again: GEMMs of even count (*gemms counts across the
 * calls of one layer, from 0) and every op that is neither a GEMM nor a
 * fused attention kernel. */
void workload_sac_op_recomputed(const struct op_list *in, int *gemms, struct op_list *out);

const char *wl_block_name(enum wl_block b);
const char *recompute_name(enum recompute r);

#endif
