/* memory: the memory anatomy of one GPU in a training job.
 *
 * Model states follow the ZeRO paper (Rajbhandari et al. 2020): with mixed
 * precision, Psi parameters cost 2 Psi bytes of fp16/bf16 weights, 2 Psi of
 * gradients and K Psi of optimizer state (Adam: fp32 master weights,
 * momentum and variance, K = 12). ZeRO-1 shards the optimizer state over
 * the N_d data-parallel ranks, ZeRO-2 also the gradients, ZeRO-3 / FSDP
 * also the parameters. In fp32 training K = 8 (the weights are the master).
 * Hybrid sharding (FSDP2 HSDP, DeepSpeed MiCS, Megatron-Core's
 * num_distributed_optimizer_instances) shards them over a shard group of
 * g ranks instead (mem_rank_input.shard): each sharded term / g, not / N_d.
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
 * `stage`; GPipe: m; interleaving adds its factor). Under ZB-H1
 * (engine/schedule.h), whose backward is split into B and W, a
 * micro-batch is in flight from its forward until its W, whole: W reads
 * the GEMM inputs the forward saved, and the output gradients B leaves
 * it stand in for what B frees. Every stage then peaks at p, stage 0's
 * 1F1B peak (Qi et al. 2024: ZB-H1 keeps 1F1B's peak memory, the most
 * of any stage); later stages hold more than under 1F1B.
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
 * Apex's DistributedFusedAdam with store_param_remainders (NeMo's default
 * under megatron_amp_O2 bf16, training.master_weights "remainders") keeps
 * the fp32 master as the bf16 weight plus an int16 remainder (K = 10);
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
 * the latents only: Megatron's recompute modules below.
 *
 * Megatron-Core's recompute modules (recompute "selective" with
 * recompute_modules, workload.h enum rc_module), what each frees per
 * token of a layer: core_attn the unfused core's s x s terms (the
 * default, Korthikanti's selective; nothing with flash); layernorm the
 * norms' outputs, which the next GEMM saved as its input (the attention's
 * QKV or MLA down-projection input G h, a dense MLP's fc1 input G h, an
 * MoE block's router input A h) and an eager norm's extra tensors
 * (CheckpointWithoutOutput frees the output's storage once the GEMM has
 * run; under fp8 the GEMM's saved copy is taken to be that output, as
 * the model counts it); mla_up_proj MLA's Q, K, V, A a (2 (d_h + d_h^R) +
 * d_v) split over TP (rebuilt from the latents, which stay); moe_act the
 * routed experts' activation output, fc2's input, G f per routed copy
 * (the fc1 output, the activation's input, stays). Each costs its
 * module's forward once more in the backward (workload.h). Under ZB-H1
 * and DualPipe (B and W split) the tensors layernorm and moe_act rebuild
 * in B are W's GEMM inputs and live on until W: those of the micro-batches
 * between their B and their W are not counted (the peak counts them
 * freed from the forward on).
 *
 * FP8 caching of the SwiGLU inputs (training.fp8_moe_act_cache;
 * DeepSeek-V3 arXiv 2412.19437 section 3.3.2, "Low-Precision Storage"):
 * under fp8 the routed experts' fc1 outputs are saved at 1 byte per
 * element instead of A (2 f per routed copy); the shared experts and
 * dense MLPs keep theirs in A.
 *
 * torchtitan's per-op selective checkpointing (recompute "selective-op",
 * workload.h): a layer keeps its input (A h, replicated unless SP), the
 * outputs of its odd-numbered GEMMs in forward order (a Llama layer's
 * wq, wv, w1, w2: A (h + kv h / a + f) split over TP for the column-
 * parallel ones, A h whole for a row-parallel one, the partial sum before
 * its reduction) and the flash kernel's output A h and log-sum-exp 4 a
 * (torchtitan 9dec370 parallelize_llama.py L214-264: the save list and
 * the mm count; research: T (8 h + 2 h_kv + 2 f) + 4 T a bytes for a
 * Llama layer).
 *
 * torchtitan's selective layer policy (recompute "full" with
 * recompute_every n > 1: activation_checkpoint.mode "selective",
 * selective_ac_option "n"; torchtitan 9dec370 parallelize_llama.py
 * L277-285 wraps a block in checkpoint_wrapper when the count of blocks
 * it has seen in the process is a multiple of n, else leaves it bare):
 * of a rank's L layers floor(L / n) keep their input only and the others
 * their whole saved set, so a rank saves per micro-batch
 *   floor(L / n) x the full-recompute layer + (L - floor(L / n)) x the
 *   layer without recompute,
 * and the recomputed layer below exists only where one is checkpointed.
 *
 * The recomputed layer (torch.utils.checkpoint and Megatron's
 * CheckpointFunction recompute one checkpointed layer at a time, lazily,
 * in its backward: torch/utils/checkpoint.py _checkpoint_hook, Megatron
 * core_v0.9.0 tensor_parallel/random.py L230-305): during a layer's
 * backward under full, selective-op or (unfused) selective recompute,
 * that layer's recomputed tensors exist on top of every layer's
 * checkpoints: one micro-batch's set without recompute, less what the
 * checkpoint keeps. With context parallelism, ring attention's gathered
 * keys and values of the whole sequence are alive then as well (PyTorch's
 * context_parallel all-gathers K and V: (cp - 1) / cp x 2 kv h / a A per
 * token of the sequence, 2 h A after repeat_kv; TE's p2p ring holds as
 * much in its step buffers).
 *
 * Context parallelism by torch's context_parallel (stack.h cp_torch_ring;
 * torch/distributed/tensor/experimental/_attention.py, read at pytorch
 * 0123248a48 and in an older copy of the same code, the December 2024
 * nightly torchtitan 9dec370 ran not read; torchtitan sets the rotation
 * to "allgather", config_manager.py L364-376, utils.py L180-187): with
 * T a local head-tensor (b s h / t A, K and V expanded by repeat_kv
 * first, model.py L201-202), a layer's attention backward holds, beyond
 * the (cp - 1) 2 T above: its own chunk in the all-gather's output (that
 * output is cp x the local K and V, _AllGatherRotater), the contiguous
 * copies of K and V (2 T), grad_query, grad_key and grad_value
 * accumulated in fp32 (zeros_like(dtype=float32): 6 T), and the fp32
 * concatenated K and V gradients being rotated, sent and received (the
 * all-to-all rotater's: 2 x 4 T): 18 T in all, on CP ranks only (cp > 1,
 * torchtitan parallel_dims.py L107-108).
 *
 * Eager stacks (stack.h rmsnorm_extra_Bpe, eager_swiglu, repeat_kv):
 * autograd keeps what each eager op needs, which is more than a fused
 * kernel's saved set: an RMSNorm its fp32 copy and the normalised 16-bit
 * tensor (4 B per element more than a fused norm's input), a SwiGLU
 * written silu(w1 x) * w3 x silu(w1 x) as well as w1 x, w3 x and the
 * product (f more per token, in the activation dtype), and grouped-query
 * attention run through repeat_kv hands the kernel K and V expanded to
 * every head, which it saves so (A h (1 + 2) for Q, K, V instead of
 * A h (1 + 2 kv / a)). The head's input and the final norm's saved
 * tensors (A h + A h + the eager extra, per token) are counted on the
 * rank with the head, one micro-batch's.
 *
 * The loss (stack.h loss_peak_Bpl): bytes per logit alive at the loss's
 * backward: Megatron-Core's vocabulary-parallel cross entropy 6 (the fp32
 * softmax, in place, and the 16-bit gradient cast; core_v0.9.0
 * tensor_parallel/cross_entropy.py L27-77, L180), torch's cross_entropy
 * on an fp32 copy of the logits 12 (the saved fp32 log-probabilities,
 * nll's dense gradient and log_softmax's input gradient: torchtitan
 * components/loss.py L18-22, train.py `del pred`; Hugging Face 4.45
 * likewise); 8 (fp32 logits and gradient) where the stack's loss was not
 * read. The loss's peak and the recomputed layer's come one after the
 * other: the total takes the larger phase, each with the buffers alive in
 * it.
 *
 * FSDP2 (a stack with fsdp2_copies at ZeRO-2 or 3; torch fully_shard as
 * torchtitan runs it, MixedPrecisionPolicy(param_dtype=bf16,
 * reduce_dtype=fp32)): the sharded parameters are fp32 and are the
 * optimizer's master (no separate 16-bit shard); the root module's
 * parameters (embedding, final norm, output) stay unsharded after the
 * forward (torch _fsdp_state._lazy_init: the root does not reshard).
 * At ZeRO-2 (fully_shard with reshard_after_forward=False, which is what
 * torchtitan runs under pipeline parallelism: reshard_after_forward = not
 * pp_enabled) every layer's 16-bit weights (fp8 with fp8 all-gather)
 * stay whole through the step; and a pipeline schedule turns gradient
 * synchronisation off for every micro-batch but the last (torch
 * distributed/pipelining stage.py backward_maybe_with_nosync:
 * set_requires_gradient_sync(False), set_reshard_after_backward(False)),
 * so FSDP2 keeps each gradient unsharded in the reduce dtype across the
 * micro-batches (_fsdp_param.py FSDPParam.to_accumulated_grad_if_needed,
 * unsharded_accumulated_grad = grad.to(reduce_dtype)): r bytes per
 * parameter of the stage beside the fp32 shards. Buffers, per layer of P_b
 * parameters with u bytes per gathered weight (2, or 1 under fp8 with
 * fp8 all-gather: training.fp8_params) and r per reduced gradient:
 * at the loss, the last layer (kept unsharded), the next one prefetched
 * and the deferred all-gather output, 3 u P_b; in a layer's backward,
 * the current and the prefetched layer unsharded with the flat all-gather
 * buffer (3 u P_b), the layer's gradients in the weights' dtype and the
 * reduce-scatter input of this and the previous layer (2 r P_b)
 * (_fsdp_collectives.py foreach_all_gather, foreach_reduce;
 * _fsdp_param_group.py wait_for_unshard, reduce_scatter_state). fp8 under
 * an FSDP2 stack (torchao_fp8, whatever the ZeRO stage) is torchao's
 * Float8Linear: no cached fp8 weight copies, GEMM inputs saved in the
 * activation dtype. torch's optimizers free the gradients at zero_grad
 * (set_to_none=True, the default since torch 2.0; torchtitan calls it
 * every step), so the sharded gradients do not exist at the loss's peak
 * nor in the first layers' backward: not counted (a pipeline's
 * accumulated ones are: they live through its micro-batches).
 *
 * DualPipe (engine/schedule.h; DeepSeek-V3 arXiv 2412.19437 section
 * 3.2.1 and deepseek-ai/DualPipe README 89f5de17, Table 2: 2x parameters,
 * PP + 1 micro-batches of activations): rank s holds stage s and stage
 * p - 1 - s, each copy with its own weights, gradients (the reference's
 * examples/example_dualpipe.py 7cb1e5e6 keeps a .grad per copy and sums
 * the mirror's after the step) and fp8 copies, and its own ZeRO shard of
 * optimizer state over its data-parallel group (neither the report nor
 * the reference shards one copy's state over both mirror ranks); the
 * schedule's replay counts the activations (p + 1 chunks on rank 0).
 *
 * Multi-token prediction (model.h mtp_depth D): on the rank with the
 * head, the D MTP blocks count as layers of the last stage (their
 * weights, gradients, optimizer state, fp8 copies and activations as
 * a layer's, held as that stage's in-flight micro-batches), the
 * projections and norms as D (2 h^2 + 3 h) parameters beside the head's,
 * and per token of one micro-batch the modules' tensors outside their
 * blocks: the three norms' inputs (A h each, an eager norm's extra), the
 * projection's saved input G 2h (replicated unless SP) and the shared
 * head's input A h. Each module's loss keeps its fp32 softmax from its
 * forward to its backward (Megatron-Core's vocabulary-parallel cross
 * entropy, below): the loss's peak is 4 D bytes per logit more.
 *
 * What PyTorch's caching allocator reports (allocator_bytes, the peak of
 * torch.cuda.max_memory_reserved): by default the allocated peak, the
 * total less the CUDA context, NCCL's buffers (outside the allocator) and
 * the fragmentation reserve. Where the stack runs the allocator with
 * expandable segments (stack.h expandable_segments: torchtitan) and the
 * plan is FSDP2 on a dense decoder (ZeRO-3, or ZeRO-2 under a pipeline of
 * one chunk per stage, whose order the caller gives), memory_replay.c
 * replays three training steps' allocations through the allocator
 * (ptalloc.h) and takes its reserved peak: each stream's pool
 * keeps what it once held (FSDP2's sharded gradients live in the
 * reduce-scatter stream's pool, freed by zero_grad but never usable by
 * the compute stream; the all-gather stream holds two gathered modules,
 * the root's and the first layer's, the root in 16 bits even under
 * torchao's fp8 all-gather: torchtitan 9dec370 float8.py L84-100 swaps
 * every nn.Linear but `output`, and the embedding is no Linear), a
 * freed block serves only what fits
 * in it (the loss's fp32 tensors leave holes the next ones do not fit),
 * and AdamW's state, created at the first step in memory the
 * activations freed, pushes the next step's activations beyond it.
 * Under a pipeline (torch.distributed.pipelining of December 2024) a
 * stage also keeps, until the next step, 2 m receive buffers (not on the
 * first stage for activations, not on the last for gradients), each
 * micro-batch's output (the last stage's logits) and input gradient, its
 * gathered weights and fp32 gradient accumulators through the step, and
 * the last stage concatenates its m logits at the step's end; left out
 * as transients below the stage's peak: the first step's no-grad
 * shape-inference forward (stage.py _shape_inference), the embedding's
 * all-gathered output gradient and the output projection's input
 * gradient before its reduce-scatter. The replayed caching
 * (caching_bytes: reserved beyond the allocated peak) stands in the
 * total for the fragmentation reserve where it is larger.
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
	bool fp8_moe_act_cache;    /* fp8 training: routed experts' fc1 outputs kept in fp8 */
	bool bf16_moments;         /* Adam's moments in bf16 (precision_bf16_moments) */
	bool master_remainders;    /* fp32 master as bf16 weight + int16 remainder
				      (precision_master_remainders) */
	double grad_elem_bytes;    /* bytes per gradient element (4 for Megatron's fp32
				      main_grad); 0 = the weights' size */
	double micro_batch, seq;   /* seq: this rank's tokens (seq / cp) */
	int tp, dp, pp;            /* dp: the data-parallel ranks (dp x cp) */
	int shard;                 /* the ranks ZeRO shards over (hybrid sharding: a
				      slice of dp; 0: all dp); a second communicator
				      when fewer than dp */
	int ep;                    /* expert parallelism (0 or 1: none); experts are
				      ZeRO-sharded over dp / ep */
	int etp;                   /* expert tensor parallelism (0: tp; 1: every
				      expert whole on a rank, le / ep of a layer's
				      expert parameters, ZeRO-sharded over
				      dp x tp / ep; its routed copies sharded over tp) */
	double moe_rank_load;      /* busiest rank's routed copies / T k (moe.h); 0 = 1 */
	int offload;               /* 0 none, 1 optimizer state on the CPU, 2 also the
				      layers' parameters (two layers' buffers on the GPU) */
	int cp;                    /* context-parallel degree (0 or 1: none), for
				      its communicator's NCCL buffers */
	bool sp;
	enum zero_stage zero;
	enum recompute recompute;
	unsigned recompute_modules; /* selective: Megatron's modules (workload.h enum
				       rc_module; 0: core_attn) */
	int recompute_every;       /* full: only every n-th layer of the rank is checkpointed
				      (its n-th, 2n-th, ...; the rank's first layers are an MoE
				      model's dense ones), the others save as without
				      recompute; 0 or 1: every layer */
	double layers;             /* transformer layers on this rank (all chunks) */
	double dense_layers;       /* of which an MoE model's dense first layers
				      (model.h moe.first_dense_layers); 0: all MoE */
	bool has_embedding, has_head;
	double inflight;           /* peak micro-batches in flight, in units of the
				      rank's whole layer set (chunks / v) */
	double bucket_bytes;       /* gradient bucket size (DDP / ZeRO) */
	bool apex_contiguous;      /* Apex DistributedFusedAdam with contiguous grad and
				      param buffers: its buckets are views, no bucket
				      buffers (memory.c, reserved) */
	double prefetch_layers;    /* ZeRO-3: layers all-gathered ahead */
	bool ds_zero3_2021;        /* ZeRO-3 gathered per Linear and reduced as
				      DeepSpeed v0.4.0 (memory_ds2021.c), in
				      place of the layers and buckets above */
	double z3_live_elements;   /* with ds_zero3_2021: max_live_parameters
				      (no prefetch past it; 0: no limit) */
	double reserve_fraction;   /* allocator fragmentation reserve, fraction of capacity */
	struct finetune ft;        /* LoRA / QLoRA (finetune.h); zeroed: all weights trained */
	double loss_Bpl;           /* the loss's bytes per logit at its peak (stack.h, at this
				      TP degree); 0: 8 */
	int microbatches;          /* per optimizer step (FSDP2's accumulation under PP) */
	double rmsnorm_extra_Bpe;  /* an eager RMSNorm's saved bytes beyond a fused one's,
				      per element of its input (stack.h) */
	bool eager_swiglu;         /* silu(gate) saved beside gate, up and the product
				      (stack.h eager_swiglu) */
	bool repeat_kv;            /* K and V expanded to every head before the kernel,
				      which saves them so (stack.h repeat_kv) */
	bool cp_torch_ring;        /* context parallelism by torch's context_parallel
				      (stack.h cp_torch_ring): its buffers (above) */
	bool fsdp2;                /* FSDP2's memory (above): a stack with fsdp2_copies, ZeRO >= 2 */
	bool torchao_fp8;          /* fp8 by torchao's Float8Linear (a stack with fsdp2_copies),
				      not Transformer Engine */
	bool expandable_segments;  /* the stack's allocator runs with expandable segments:
				      FSDP2 plans' reserved memory is replayed */
	bool native_allocator;     /* the same replay, the allocator without expandable
				      segments (training.allocator "native": ptalloc.h
				      ptalloc_new_native) */
	const bool *order_fwd;     /* under a pipeline, the stage's steps in order (true:
				      a micro-batch's forward, false: a backward), order_n
				      of them; NULL: not known or the backward split
				      into B and W (schedule.h zb-h1): no replay */
	int order_n;
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
	double logits_bytes;       /* the loss's peak (loss_Bpl per logit) */
	double recompute_bytes;    /* the recomputed layer's tensors (one micro-batch) */
	double fp8_weight_bytes;   /* fp8 weight copies and transposes (TE) */
	double comm_buffer_bytes;  /* gradient buckets, ZeRO-3 gathered layers (FSDP2:
				      those of the peak's phase) */
	bool peak_at_loss;         /* the peak is the loss's phase, not a layer's backward */
	double context_bytes;      /* CUDA context and library workspaces */
	double nccl_bytes;         /* NCCL communicator buffers */
	double fragmentation_bytes;/* allocator reserve: the fraction of capacity, or the
				      replayed caching where larger */
	double caching_bytes;      /* replayed (ptalloc.h): what the caching allocator
				      reserves beyond the allocated peak; 0: not replayed */
	double reserved_bytes;     /* context + NCCL + fragmentation */
	double total_bytes;
	double allocator_bytes;    /* what PyTorch's caching allocator reserves at the peak
				      (total less context, NCCL, fragmentation reserve) */
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

/* Bytes per parameter of optimizer state before sharding: 12 mixed or
 * 8 in fp32, less 4 with bf16 moments (precision_bf16_moments) and 2
 * with the master kept as remainders (precision_master_remainders, not
 * with fp8 parameters: NeMo stores the fp32 master then), as
 * memory_rank() counts it. */
double memory_optimizer_bytes_per_param(enum dtype dt, bool bf16_moments, bool master_remainders,
					bool fp8_params);

/* NCCL buffer bytes of a rank in ncomms communicators (formula above). */
double memory_nccl_bytes(int ncomms);

/* Fill out from in. */
void memory_rank(const struct mem_rank_input *in, struct mem_anatomy *out);

const char *zero_stage_name(enum zero_stage z);

#endif
