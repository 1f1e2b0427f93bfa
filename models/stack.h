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
 * read from the stack's source at a named version (stack.c cites file and
 * line); none is fitted. workload.c emits one op per piece with these
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
 *                     the stem's BN+ReLU as CNN_FUSE_BN_ACT.
 * Byte counts of the fused kernels: stack.c cites the sources; cnn.c
 * applies them. */
enum cnn_fusion { CNN_FUSE_NONE, CNN_FUSE_BN_ACT, CNN_FUSE_CONV_BN };

/* One piece of a layer: bytes per element and kernels, forward and
 * backward (index 0 fwd, 1 bwd). Bytes are for 16-bit activations. */
struct stack_piece {
	double bytes[2];
	int kernels[2];
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
	/* Copies around the attention kernel, per element of q, k, v and the
	 * output (T x (2 heads + 2 kv_heads) x d / t): an unpadding gather
	 * of q, k, v and a padding scatter of the output (kernels: 4). */
	struct stack_piece attn_copy;
	/* Grouped-query attention: K and V materialised once per query head
	 * before the attention kernel (repeat_kv), where the kernel cannot
	 * read shared K/V heads itself. */
	bool repeat_kv;
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
	/* FSDP2's copies around its collectives (ZeRO-3), on top of the
	 * collectives: after each all-gather, split_with_sizes_copy of the
	 * gathered 16-bit parameters into the layer's own tensors (read and
	 * write, on the compute stream); before each reduce-scatter, the
	 * unsharded 16-bit gradients concatenated into the reduce-scatter
	 * buffer in the reduce dtype (on the reduce-scatter stream). FSDP1's
	 * flat parameter gathers in place: false. */
	bool fsdp2_copies;
	/* Convolutional networks: how batch norm, ReLU and the residual add
	 * run (cnn.h). */
	enum cnn_fusion cnn;
	/* The host's issue time per kernel launch, forward and backward
	 * (host.h), on an x86 host; 0: not known for this stack. */
	double host_issue_us[2];
	/* Fused attention kernel on compute capability < 9 and >= 9. */
	enum attn_backend attn_ampere, attn_hopper;
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

#endif
