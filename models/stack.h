/* stack: the kernels a training stack runs around its GEMMs and attention.
 *
 * Two stacks that run the same GEMMs and the same attention kernel still
 * differ by gigabytes of HBM traffic per layer: Transformer Engine fuses
 * the norm, RoPE, the bias-activation and the bias-dropout-add into one
 * kernel each, while an eager PyTorch model (Hugging Face style) runs
 * RMSNorm as six kernels through fp32 intermediates, RoPE as rotate_half's
 * slices, negation, concatenation, two products and a sum, and SwiGLU as
 * two. The loss, the gradient accumulation across micro-batches and the
 * optimizer also move bytes that depend on the stack, not on the model.
 *
 * A stack is a row of byte counts: for each piece of a layer, the bytes
 * its kernels read and write per element of the tensor it works on, in
 * forward and in backward, and how many kernels that is. Every count is
 * read from the stack's source at a named version (its family's header,
 * stack_*.h, cites file and line); none is fitted. workload.c emits one op per piece with these
 * bytes ("rmsnorm", "rope", "swiglu", "residual", "cross_entropy",
 * "*.main_grad"), priced as one op moving the kernels' sum and paying
 * one launch per kernel (op.kernels), so the report's kernel table shows
 * what each stack runs.
 *
 * A framework preset (framework.h) names its stack; a scenario may set
 * another (compute.stack). Without either, the Megatron-Core +
 * Transformer Engine stack prices the kernels: the most fused of the
 * stacks in wide use for transformers.
 *
 * Each stack also carries the host's time to issue one kernel, forward
 * and backward (host.h: a block of kernels shorter than their issue time
 * takes the host's time; docs/kernels.md section 10). */
#ifndef DDLSIM_STACK_H
#define DDLSIM_STACK_H

#include "attention.h"
#include "model.h"

/* How a stack runs batch norm, ReLU and the residual add (stack.h):
 *   CNN_FUSE_NONE     each its own kernel (PyTorch eager NCHW): batch norm
 *                     3 / 5 touches of its tensor forward / backward, ReLU
 *                     2 / 3, the add 3;
 *   CNN_FUSE_BN_ACT   NVIDIA's NHWC batch norm with the ReLU (and the
 *                     residual add) fused (MXNet BatchNorm act_type relu,
 *                     BatchNormAddRelu): BN+ReLU 6 / 10 B/el, BN alone 6 /
 *                     10, BN+add+ReLU 8.125 / 12.125 (a 1-bit mask), fp16;
 *   CNN_FUSE_CONV_BN  the bottleneck's batch norms folded into the
 *                     convolutions (MXNet NormConvolution: the BN
 *                     statistics in the conv's epilogue, scale, bias and
 *                     ReLU in the next conv's prologue): no forward bytes
 *                     of their own, backward 10 B/el each; the last BN,
 *                     the add and the ReLU one ScaleBiasAddRelu (6.125 /
 *                     12.125; with a projection BN applied too: +10 bwd);
 *                     the stem's BN+ReLU as CNN_FUSE_BN_ACT;
 *   CNN_FUSE_CONV_STATS the statistics in the conv's epilogue as
 *                     CNN_FUSE_CONV_BN, but each batch norm inside the
 *                     main branch applied by a ScaleBiasAddRelu of its own
 *                     with the ReLU and no addend (MXNet resnet-v1b-
 *                     stats-fl): 4.125 / 10.125 B/el; the block's last BN,
 *                     a projection's, the add and the ReLU as
 *                     CNN_FUSE_CONV_BN.
 * Byte counts of the fused kernels: stack_mxnet.h cites the sources;
 * cnn.c applies them. */
enum cnn_fusion { CNN_FUSE_NONE, CNN_FUSE_BN_ACT, CNN_FUSE_CONV_BN, CNN_FUSE_CONV_STATS };

/* One piece of a layer: bytes per element and kernels, forward and
 * backward (index 0 fwd, 1 bwd). Bytes are for 16-bit activations. A
 * pass with bytes and 0 kernels moves them inside a neighbouring
 * piece's kernel (a fused operand: no launch of its own). */
struct stack_piece {
	double bytes[2];
	int kernels[2];
};

/* What a training engine does with the gradients and in the optimizer
 * step at one ZeRO stage, where the engine (not the model code, not the
 * GEMMs) runs the kernels: DeepSpeed's gradient hooks, reduce buckets
 * and fp32 partitions, or PyTorch DDP's bucket copies and comm hook as
 * DeepLearningExamples' BERT uses them (stack_deepspeed.h and
 * stack_dle.h cite every count).
 * Bytes are HBM reads +
 * writes per parameter: of the rank's parameters P (those its backward
 * produces), or of its partition P / d, d the ranks a gradient is reduced
 * over; a step runs m micro-batches. workload.c emits two ops per block
 * with the bytes of stack_zero_grad_Bpp(), per micro-batch on average
 * over the step:
 *   "<block>.grad_accum"   the gradients accumulated across a step's
 *                          micro-batches (in autograd's .grad, an fp32
 *                          copy, or the reduced partition);
 *   "<block>.grad_bucket"  the copies around each reduction: into the
 *                          reduce bucket, its division by d, the
 *                          flatten of a bucket that holds slices of
 *                          several ranks' partitions, the rank's slices
 *                          copied out, the partition's gradient buffer.
 * The collectives themselves are the schedule's (sim/). */
struct stack_zero_path {
	double accum_every_Bpp;   /* every micro-batch, per P */
	double accum_later_Bpp;   /* each micro-batch after a step's first, per P */
	double accum_shard_Bpp;   /* each reduction after a step's first, per P / d */
	int accum_kernels;        /* per block op on a micro-batch that accumulates */
	bool reduce_every_mb;     /* gradients reduced every micro-batch, else at the step's last */
	double reduce_Bpp;        /* each reduction, per P */
	double reduce_accum_Bpp;  /* each reduction of a step of two or more micro-batches, per P */
	double span_Bpp;          /* each reduction, per P in a bucket spanning partitions */
	double span_shard_Bpp;    /* the same, per P / d (the rank's slices copied out) */
	double shard_Bpp;         /* each reduction, per P / d */
	double shard_first_Bpp;   /* a step's first reduction, per P / d */
	int reduce_kernels;       /* per block op on a micro-batch that reduces */
	/* the step, as struct stack's optimizer_Bpp and optimizer_kernels */
	double optimizer_Bpp;
	int optimizer_kernels;
};

struct stack {
	const char *name;
	const char *description;
	struct stack_piece rmsnorm;    /* per element of the normalised tensor (T x h) */
	struct stack_piece layernorm;  /* the same for LayerNorm */
	struct stack_piece rope;       /* per element of q and k (T x (heads + kv_heads) x d) */
	struct stack_piece swiglu;     /* per element of the activation's output (T x ffn) */
	struct stack_piece gelu;       /* per element of the activation's output (T x ffn) */
	struct stack_piece residual;   /* (bias-)dropout-add, per element of T x h */
	struct stack_piece loss;       /* cross-entropy, per logit (T x vocab / t) */
	/* The loss's memory at its peak, bytes per logit (memory.h): what is
	 * alive when its backward runs; 0: not read (memory.c's generic 8). */
	double loss_peak_Bpl;
	/* The same under tensor parallelism, where the stack's loss is
	 * another implementation (torch's loss_parallel); 0: loss_peak_Bpl. */
	double loss_peak_tp_Bpl;
	/* What an eager RMSNorm saves for its backward beyond a fused norm's
	 * 16-bit input, bytes per element of its input (memory.h, "Eager
	 * stacks"): its fp32 copy and the normalised 16-bit tensor. 0: a
	 * fused kernel's (TE). */
	double rmsnorm_extra_Bpe;
	/* A SwiGLU written silu(w1(x)) * w3(x) in eager PyTorch: autograd
	 * saves silu's input (derivatives.yaml silu: silu_backward(grad,
	 * self)) and both operands of the product (mul.Tensor: each
	 * operand's derivative reads the other, both needing gradients),
	 * so silu(w1 x) is kept beside w1 x, w3 x and the product w2 saves:
	 * one T x f tensor more than a fused SwiGLU's (memory.h). */
	bool eager_swiglu;
	/* The stack's launch sets PYTORCH_CUDA_ALLOC_CONF=
	 * expandable_segments:True (torchtitan 9dec370 run_llama_train.sh
	 * L22-25): what its caching allocator reserves is replayed
	 * (models/ptalloc.h, memory.h) for FSDP2 plans. */
	bool expandable_segments;
	/* Copies around the attention kernel, per element of q, k, v and the
	 * output (T x (2 heads + 2 kv_heads) x d / t): an unpadding gather
	 * of q, k, v and a padding scatter of the output (kernels: 4). */
	struct stack_piece attn_copy;
	/* Query, key and value projected by three Linear layers, three
	 * GEMMs ("qkv.q", "qkv.k", "qkv.v"), rather than one fused QKV GEMM;
	 * with qkv_separate_gated only for models of a gated MLP (the Llama
	 * family's code), use stack_qkv_separate(). */
	bool qkv_separate;
	bool qkv_separate_gated;
	/* A SwiGLU MLP's gate and up projections as two Linear layers, two
	 * GEMMs ("mlp_gate", "mlp_up"), rather than one "mlp_gate_up". */
	bool mlp_separate;
	/* Autograd's sum of the input gradients of an activation that
	 * several Linear layers read (torch/csrc/autograd/input_buffer.cpp
	 * accumulate: one add per consumer after the first), bytes per
	 * element of T x h and kernels per sum, backward only: the normed
	 * input of separate q, k, v projections (2 sums, "qkv_grad_sum")
	 * and of separate gate and up projections (1, "mlp_grad_sum"). The
	 * residual stream's sum is the residual piece's backward. Zero where
	 * the stack sums them in a fused kernel or runs one GEMM. */
	struct stack_piece grad_sum;
	/* The query, key and value biases where no kernel takes them in
	 * (not the GEMM's epilogue, not a fused neighbour): per element of q,
	 * k and v (T x (heads + 2 kv_heads) x d / t), the bias add forward
	 * and the bias gradient's reduction over the tokens backward
	 * ("qkv_bias"); only for a model with biases. */
	struct stack_piece qkv_bias;
	/* Unfused attention with ALiBi, where the bias enters the score
	 * GEMM as its C operand (torch.baddbmm with beta != 0): per element
	 * of the score tensor (b x heads / t x s x s), the broadcast bias
	 * copied into the output and read back by the GEMM; no backward
	 * (the bias is a constant). */
	struct stack_piece alibi_bias;
	/* Unfused attention's softmax and dropout where the stack's kernels
	 * move other bytes than workload.c's generic counts (softmax 4 / 6
	 * B per score, dropout 5 / 7.5 with its one-byte mask): per element
	 * of the score tensor (b x heads / t x s x s). causal_softmax:
	 * Megatron's fused ScaledUpperTriangMaskedSoftmax, which reads only
	 * the lower triangle (a causal model only); attn_dropout: the
	 * attention dropout. Zero bytes: the generic count. */
	struct stack_piece causal_softmax;
	/* The longest key sequence the fused kernel takes: beyond it Megatron
	 * falls back to torch's softmax (fused_softmax.py is_kernel_available),
	 * priced by the generic count, which leaves out the fallback's fp32
	 * casts (0: no bound). */
	int causal_softmax_max_seq;
	struct stack_piece attn_dropout;
	/* Grouped-query attention: K and V materialised once per query head
	 * before the attention kernel (repeat_kv), where the kernel cannot
	 * read shared K/V heads itself. */
	bool repeat_kv;
	/* Context parallelism by torch's context_parallel (torchtitan): ring
	 * attention with all-gather rotation and fp32 gradient accumulation,
	 * whose buffers memory.h counts (its "Context parallelism"); false:
	 * Transformer Engine's p2p ring (Megatron-Core, NeMo). */
	bool cp_torch_ring;
	/* Weight gradients accumulated into fp32 main gradients, bytes per
	 * parameter per micro-batch beyond the wgrad GEMM's own 16-bit write
	 * (fused into its epilogue: read and write fp32 instead of writing
	 * 16 bits; a separate add: read the 16-bit gradient, read and write
	 * fp32), and the kernels it takes per layer (0: fused). */
	double main_grad_Bpp;
	int main_grad_kernels;
	/* The optimizer step as the stack runs it: bytes per local parameter
	 * beyond a fused Adam's (precision.h: fp32 master, moments and
	 * gradient read, master and moments written), i.e. gradient zeroing,
	 * norm and clipping passes and an unfused Adam's extra passes; whether
	 * it then writes a 16-bit copy of the weights (Megatron's distributed
	 * optimizer does; FSDP casts the shard at each gather instead); and
	 * its kernels per step (multi-tensor apply: a handful). */
	double optimizer_Bpp;
	bool optimizer_copy16;
	int optimizer_kernels;
	/* The whole gradient buffer zeroed every step (not the optimizer's
	 * shard): one write of the gradient dtype per parameter the rank
	 * holds (Megatron-Core's contiguous main-grad buffer). */
	bool zero_grad_buffer;
	/* DeepSpeed's PipelineEngine with tensor parallelism (pipe/engine.py
	 * is_pipe_partitioned = is_grad_partitioned = model parallel size > 1):
	 * each TP rank sends 1/t of a pipeline message, the receiver
	 * all-gathers it over TP, the sender all-gathers its output again
	 * before the backward, and p2p.send blocks until the message is
	 * delivered (sim/build_transformer.c). */
	bool pipe_partitioned;
	/* FSDP2's copies around its collectives (ZeRO-3), on top of the
	 * collectives: after each all-gather, split_with_sizes_copy of the
	 * gathered 16-bit parameters into the layer's own tensors (read and
	 * write, on the compute stream); before each reduce-scatter, the
	 * unsharded 16-bit gradients concatenated into the reduce-scatter
	 * buffer in the reduce dtype (on the reduce-scatter stream). FSDP1's
	 * flat parameter gathers in place: false. */
	bool fsdp2_copies;
	/* FSDP1's flat parameter (torch 2.0 FullyShardedDataParallel,
	 * use_orig_params): the forward uses views split from each unit's
	 * flat parameter, so autograd's SplitWithSizesBackward concatenates
	 * the unit's 16-bit weight gradients into one flat gradient on every
	 * micro-batch (read and write, compute stream: "<block>.flat_grad");
	 * before each reduce-scatter the reduce hook divides the unsharded
	 * gradient by the predivide factor (read and write) and after it the
	 * shard by the postdivide factor, on the post-backward stream
	 * (sim/build_transformer_grads.c). */
	bool fsdp1_flat;
	/* DeepSpeed ZeRO-3 as v0.3.15 to v0.5.x ran it (2021;
	 * stack_deepspeed.h deepspeed-zero3-2021 cites every line): one
	 * all-gather per parameter, each issued after torch.cuda.synchronize()
	 * (the device idle: compute, earlier gathers and gradient
	 * reductions done), a prefetch batch's gathers one after another,
	 * the module's compute after all but the batch's last, every gather
	 * of a parameter padded to a multiple of the ranks, zeroed and
	 * copied out of the list all_gather's flat buffer; gradients
	 * all-reduced in buckets (contiguous_gradients off by default)
	 * rather than reduce-scattered (sim/build_transformer_ds2021.c).
	 * false: v0.15's asynchronous coordinator. */
	bool ds_zero3_2021;
	/* The bias gradient of each Linear layer with a bias, where autograd
	 * reduces the output gradient over the tokens in a kernel of its own
	 * (addmm's backward: sum over the broadcast dimension): per element
	 * of the layer's output, backward only ("<linear>.bias_grad"); only
	 * for a model with biases. */
	struct stack_piece linear_bias;
	/* The fused QKV output split into q, k and v by views (torch.split):
	 * in backward autograd concatenates dq, dk, dv into the GEMM's output
	 * gradient, per element of the QKV output (T x (h + 2 kv) / t)
	 * ("qkv_split"). */
	struct stack_piece qkv_split;
	/* A learned position table added to the token embeddings (tok_emb +
	 * pos_emb) by a kernel of its own, per element of T x h; backward the
	 * position gradient summed over the micro-batch ("pos_add"); only for
	 * a decoder with learned positions. */
	struct stack_piece pos_add;
	/* Training metrics computed from the logits on every micro-batch,
	 * outside the loss (Composer's train metrics), per logit; forward
	 * only ("train_metrics"). */
	struct stack_piece train_metrics;
	/* The engine's gradient path and optimizer step per ZeRO stage
	 * (index 0-3), where it differs from the fields above (main_grad_*,
	 * optimizer_*): NULL for the stacks whose gradients and step those
	 * fields describe. */
	const struct stack_zero_path *zero_path;
	/* Convolutional networks: how batch norm, ReLU and the residual add
	 * run (cnn.h). */
	enum cnn_fusion cnn;
	/* Convolutional networks: the optimizer step's HBM bytes per
	 * parameter and its kernels per step (0: plain SGD, read weight and
	 * gradient and write the weight in fp32, 12 B, one kernel, as
	 * Horovod's synthetic benchmarks run it). */
	double cnn_optimizer_Bpp;
	int cnn_optimizer_kernels;
	/* The host's issue time per kernel launch, forward and backward
	 * (host.h), on an x86 host; 0: not known for this stack. */
	double host_issue_us[2];
	/* Fused attention kernel on compute capability < 9 and >= 9. */
	enum attn_backend attn_ampere, attn_hopper;
	/* The library its 16-bit GEMMs ran on (gpu.h): GEMM_LIB_CURRENT (0),
	 * the recent cuBLAS behind every preset's gemm_max, unless the stack
	 * is pinned to a release of an older toolkit; a GPU preset that
	 * measured that library gives its own figure, the others price it
	 * at gemm_max. */
	enum gemm_lib gemm_lib;
	const char *source;
};

/* The stacks, NULL name last. */
extern const struct stack stack_table[];

/* The stack named name, or NULL. */
const struct stack *stack_find(const char *name);
/* Index into stack_table, or -1 for NULL. */
int stack_index(const struct stack *s);
/* The default (Megatron-Core + Transformer Engine). */
const struct stack *stack_default(void);
/* The attention backend s runs on a GPU of compute capability cc (0:
 * unknown, taken as below 9). */
enum attn_backend stack_attn_backend(const struct stack *s, double cc);
/* stack_table[index], or stack_default() for index < 0. */
const struct stack *stack_at(int index);

/* ---- stack_path.c: the gradient path and optimizer step per ZeRO stage ---- */

/* The gradient path of s at ZeRO stage zero (0-3), or NULL when s has
 * none (stack.h struct stack_zero_path). */
const struct stack_zero_path *stack_zero_path(const struct stack *s, int zero);
/* The share of a rank's gradients that sit in reduce buckets holding
 * slices of two or more ranks' partitions (stage 1/2 flattens those):
 * the d - 1 partition boundaries each fall in one bucket of
 * bucket_params, so min(1, (d - 1) bucket / params); 1 for one bucket
 * (bucket_params <= 0) over d > 1 ranks, 0 for d <= 1. */
double stack_span_fraction(int ranks, double bucket_params, double params);
/* The bytes per parameter of z's two ops per micro-batch, on average
 * over a step of m micro-batches (m < 1: 1) with d ranks (d < 1: 1) and
 * span the share of stack_span_fraction(): *accum_Bpp for grad_accum,
 * *reduce_Bpp for grad_bucket; and their kernels per block op on an
 * average micro-batch (at least 1 where the bytes are not 0). */
void stack_zero_grad_Bpp(const struct stack_zero_path *z, int ranks, int m, double span,
			 double *accum_Bpp, double *reduce_Bpp, int *accum_kernels,
			 int *reduce_kernels);
/* The optimizer step's bytes per local parameter beyond a fused Adam's
 * and its kernels at ZeRO stage zero: the stage's where s has a
 * gradient path, else s->optimizer_Bpp and s->optimizer_kernels. */
double stack_optimizer_Bpp(const struct stack *s, int zero);
int stack_optimizer_kernels(const struct stack *s, int zero);

/* Whether stack k runs query, key and value as three Linear layers for
 * model m (qkv_separate): the eager Llama stacks follow Hugging Face's
 * modeling code, where a gated-MLP model (Llama, Mistral, Qwen: SwiGLU)
 * has q_proj, k_proj and v_proj and an ungated one (GPT-2, GPT-NeoX,
 * BLOOM, Falcon: GELU) one fused query_key_value (stack.c cites the
 * modeling code). */
bool stack_qkv_separate(const struct stack *k, const struct model *m);

#endif
