/* memory: the memory anatomy of one GPU in a training job.
 *
 * Model states follow the ZeRO paper (Rajbhandari et al. 2020): with mixed
 * precision, Psi parameters cost 2 Psi bytes of fp16/bf16 weights, 2 Psi of
 * gradients and K Psi of optimizer state (Adam: fp32 master weights,
 * momentum and variance, K = 12). ZeRO-1 shards the optimizer state over
 * the N_d data-parallel ranks, ZeRO-2 also the gradients, ZeRO-3 / FSDP
 * also the parameters. In fp32 training K = 8 (the weights are the master).
 *
 * Activations follow Korthikanti et al. 2022, "Reducing Activation
 * Recomputation in Large Transformer Models", Section 4, tensor by tensor
 * from the model's own dimensions (memory.c), bytes per token of a layer:
 *   attention: norm input A h, QKV GEMM input G h, Q K V A h (1 + 2 kv/a),
 *     the projection input G h (the context), dropout mask h;
 *     unfused core, split over TP heads: softmax output A a s, and with
 *     dropout its mask a s and the dropout output A a s;
 *   MLP: norm input A h, fc1 input G h, fc1 output A f (2 f for SwiGLU's
 *     gate and up), activation output G f (fc2's input), dropout mask h;
 * with A the activation dtype's bytes, G a saved GEMM input's (A, or 1
 * under fp8: precision.h), masks only when the model has dropout. Norm
 * inputs, the norm outputs that feed GEMMs and the masks are replicated
 * over tensor parallelism t unless sequence parallelism shards them too;
 * the rest is split over t. For GPT (f = 4h, a = kv, dropout, 16-bit)
 * this is Korthikanti's Table 2 exactly:
 *   no parallelism            sbh (34 + 5as/h)
 *   tensor parallel           sbh (10 + 24/t + 5as/(ht))
 *   tensor + sequence par.    sbh/t (34 + 5as/h)
 *   selective recompute       drops the core term (5as/h)
 *   full recompute            the layer input, 2sbh (/ t with SP)
 * times the layers a rank holds and the micro-batches in flight at its
 * peak, which the pipeline schedule counts (1F1B: p - stage on stage
 * `stage`; GPipe: m; interleaving adds its factor).
 *
 * Fused (flash) attention never stores the s x s softmax output or dropout
 * mask (attention.h): the core term is gone whatever the recompute mode,
 * and the kernel keeps instead its output (A h, which is also the
 * projection's input unless fp8 makes the projection save its own 1-byte
 * copy) and an fp32 log-sum-exp per head and token, 4 a bytes (/ t, heads
 * are split over TP). Selective recomputation (Megatron-Core checkpoints
 * the core attention) then saves nothing more in memory and costs a flash
 * forward in the backward pass. Under fp8 a GPT layer stores 29 sbh
 * instead of 34 (fc1, QKV and fc2 inputs at one byte, the projection's
 * fp8 copy beside the kernel's bf16 output).
 *
 * Precision (precision.h): fp32/tf32 weights are their own master (K = 8);
 * under fp8 Transformer Engine adds an fp8 copy and an fp8 transpose of
 * every transformer-layer weight (2 bytes per parameter; TE docs, "FP8
 * weights ... and their transposes are cached"). With fp8 parameters
 * (TE `fp8_model_params`, Megatron-Core `--fp8-param-gather`) the layer
 * weights exist only as those fp8 tensors: no 16-bit copy (the
 * distributed optimizer's fp32 master is the high-precision copy); the
 * embedding and the LM head stay 16-bit.
 *
 * What the device has: capacity is the total the device reports (nvidia-smi
 * / cudaMemGetInfo, gpu.hbm_total_bytes), minus
 *   the CUDA context and library workspaces (gpu.memory_reserved_GB),
 *   NCCL's buffers: per communicator the rank belongs to (TP, DP, PP, the
 *   tied-embedding group), MEMORY_NCCL_CHANNELS channels x 2 connections
 *   (ring and tree) x the three protocols' default buffers (NCCL
 *   src/init.cc: DEFAULT_LL_BUFFSIZE 8 x 512 x 8 x 16 = 524,288 B,
 *   DEFAULT_LL128_BUFFSIZE 120 x 640 x 8 x 8 = 4,915,200 B, DEFAULT_BUFFSIZE
 *   4 MiB = 4,194,304 B; together 9,633,792 B per connection),
 *   the caching allocator's fragmentation reserve, a fraction of the
 *   capacity (scenario training.memory_reserve).
 *
 * Mixture of experts (model.h "moe"): a layer's routed experts are
 * sharded over expert parallelism ep and tensor parallelism t, the rest of
 * the layer (attention, norms, router, shared experts) over t only; ZeRO
 * shards the dense part over the N_d data-parallel ranks and the experts
 * over the N_d / ep expert-data-parallel ones (Megatron-Core's distributed
 * optimizer shards expert parameters over the expert-data-parallel
 * group). Activations: the MLP's terms are replaced by the MoE block's:
 * the norm and router inputs, the mask, k routed copies of the token (x
 * the busiest rank's load; saved GEMM inputs, not split over t) with
 * their fc1 and activation outputs of the expert FFN, the shared experts'
 * fc1 and activation outputs.
 *
 * Multi-head latent attention (model.h "mla"; DeepSeek-V2 section 2.1),
 * the attention's terms, bytes per token: the norm input A h, the down
 * projections' shared input G h and the mask h (replicated unless SP, as
 * above); the latents, whole on every TP rank (the down projections and
 * the latents' norms are replicated): the query latent c_Q as the norm's
 * input A d_c' and as q_up's input G d_c', the key-value latent c_KV
 * likewise A d_c + G d_c; split over TP heads: the kernel's Q, K of a
 * (d_h + d_h^R) and V of a d_v (A each: the RoPE key broadcast to every
 * head as the kernel reads it), flash's output A a d_v (the output
 * projection's input; its own G copy under fp8) and log-sum-exp 4 a;
 * unfused: the projection input G a d_v and the s x s terms above. This
 * is what a stack that saves every GEMM input and the kernel's operands
 * keeps; DeepSeek-V3 (arXiv 2412.19437 section 3.2.3) recomputes the
 * RMSNorms and the MLA up-projections in the backward instead, keeping
 * the latents only: not modelled (Q, K, V are counted).
 *
 * CPU offload (ZeRO-Offload, Ren et al. 2021): the optimizer state
 * (K Psi) lives in host memory; with the parameters offloaded as well
 * (ZeRO-Infinity) the GPU holds no layer weights but buffers for the layer
 * in use and the one prefetched (embedding and head stay).
 *
 * Fine-tuning with frozen base weights (finetune.h; dense models): the
 * model states are those of the adapters' Psi_a parameters (2 Psi_a of
 * 16-bit weights, the gradient bytes x Psi_a, K Psi_a of optimizer
 * state, ZeRO-sharded as above), beside the frozen weights, which keep
 * only their storage: the precision's 16-bit weights, or under QLoRA the
 * transformer layers' linear weights in NF4 (finetune.h: 0.516 bytes per
 * parameter) and the rest 16-bit. The activations are the layer's as
 * above (the backward through a frozen layer still needs its norms',
 * activation's and attention's saved tensors) less the GEMM inputs kept
 * only for weight gradients: the QKV, projection (or its fp8 copy), fc1
 * and fc2 inputs (Transformer Engine v1.6, c81733f,
 * transformer_engine/pytorch/module/linear.py:317-330: `saved_inputmat`
 * only `if weight.requires_grad`; PyTorch's autograd codegen likewise
 * guards a saved input used by one derivative alone,
 * tools/autograd/gen_variable_type.py guard_for). Each adapter adds per
 * token x A (r elements, whole on every TP rank) and its input for A's
 * weight gradient: with dropout the dropped input and its one-byte mask,
 * else the base layer's input, once for the adapters sharing it (d_in,
 * split over TP on a row-parallel layer, else replicated unless SP). */
#ifndef DDLSIM_MEMORY_H
#define DDLSIM_MEMORY_H

#include <stdbool.h>

#include "attention.h"
#include "finetune.h"
#include "gpu.h"
#include "model.h"
#include "workload.h"

enum zero_stage { ZERO_0, ZERO_1, ZERO_2, ZERO_3 };

/* What one rank holds. */
struct mem_rank_input {
	const struct model *model;
	const struct gpu_spec *gpu;
	enum dtype dtype;          /* training precision (precision.h) */
	enum attention attention;  /* attention kernel: flash stores no s x s tensors */
	bool fp8_params;           /* fp8 training: layer weights only as fp8 (no bf16) */
	double grad_elem_bytes;    /* bytes per gradient element (4 for Megatron's fp32
				      main_grad); 0 = the weights' size */
	double micro_batch, seq;   /* seq: this rank's tokens (seq / cp) */
	int tp, dp, pp;            /* dp: the ranks ZeRO shards over (dp x cp) */
	int ep;                    /* expert parallelism (0 or 1: none); experts are
				      ZeRO-sharded over dp / ep */
	double moe_rank_load;      /* busiest rank's routed copies / T k (moe.h); 0 = 1 */
	int offload;               /* 0 none, 1 optimizer state on the CPU, 2 also the
				      layers' parameters (two layers' buffers on the GPU) */
	int cp;                    /* context-parallel degree (0 or 1: none), for
				      its communicator's NCCL buffers */
	bool sp;
	enum zero_stage zero;
	enum recompute recompute;
	double layers;             /* transformer layers on this rank (all chunks) */
	double dense_layers;       /* of which an MoE model's dense first layers
				      (model.h moe.first_dense_layers); 0: all MoE */
	bool has_embedding, has_head;
	double inflight;           /* peak micro-batches in flight, in units of the
				      rank's whole layer set (chunks / v) */
	double bucket_bytes;       /* gradient bucket size (DDP / ZeRO) */
	double prefetch_layers;    /* ZeRO-3: layers all-gathered ahead */
	double reserve_fraction;   /* allocator fragmentation reserve, fraction of capacity */
	struct finetune ft;        /* LoRA / QLoRA (finetune.h); zeroed: all weights trained */
};

/* NCCL channels per communicator assumed for its buffers: NCCL builds up
 * to 2 x the NVLinks / NICs it finds and at most 32 (NCCL_MAX_NCHANNELS);
 * 16 is what NCCL reports ("16 coll channels") on DGX A100 and H100. */
#define MEMORY_NCCL_CHANNELS 16
/* Bytes of NCCL buffers of one connection: LL + LL128 + SIMPLE defaults. */
#define MEMORY_NCCL_CONN_BYTES (524288.0 + 4915200.0 + 4194304.0)

struct mem_anatomy {
	double params_local;       /* parameters this rank owns before ZeRO sharding */
	double trained_params;     /* of which trained (LoRA: the adapters; else all) */
	double weights_bytes;
	double grads_bytes;
	double optimizer_bytes;
	double activations_bytes;  /* peak */
	double act_per_layer_bytes;/* one layer, one micro-batch (the mean of the
				      rank's layers where MoE and dense ones mix) */
	double logits_bytes;
	double fp8_weight_bytes;   /* fp8 weight copies and transposes (TE) */
	double comm_buffer_bytes;  /* gradient buckets, ZeRO-3 gathered layers */
	double context_bytes;      /* CUDA context and library workspaces */
	double nccl_bytes;         /* NCCL communicator buffers */
	double fragmentation_bytes;/* allocator reserve */
	double reserved_bytes;     /* context + NCCL + fragmentation */
	double total_bytes;
	double capacity_bytes;
	bool fits;
};

/* Activation bytes of one layer for one micro-batch under the input's
 * parallelism and recompute mode (formulas above); an MoE model's: an
 * MoE layer's. */
double memory_layer_activations(const struct mem_rank_input *in);
/* As memory_layer_activations() for a dense layer: an MoE model's first
 * dense layers (the dense MLP of ffn_size); a dense model's layer. */
double memory_dense_layer_activations(const struct mem_rank_input *in);

/* Bytes per parameter of optimizer state before sharding (12 or 8). */
double memory_optimizer_bytes_per_param(enum dtype dt);

/* NCCL buffer bytes of a rank in ncomms communicators (formula above). */
double memory_nccl_bytes(int ncomms);

/* Fill out from in. */
void memory_rank(const struct mem_rank_input *in, struct mem_anatomy *out);

const char *zero_stage_name(enum zero_stage z);

#endif
