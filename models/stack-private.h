/* stack-private.h: how the stack tables count bytes, and the pieces the
 * rows of several stack families share (included by stack.c and its
 * family headers, stack_*.h, alone).
 *
 * Bytes are HBM reads + writes per element of the tensor named in
 * stack.h, each kernel counted once (no reuse across kernels), bf16 = 2 B,
 * fp32 = 4 B. "[source]" counts are read op by op in the file named;
 * "[derived]" backward counts follow from PyTorch autograd's formula of
 * each forward op (tools/autograd/derivatives.yaml) applied to the ops
 * read in the source. The study behind them, line by line, is
 * docs/kernels.md.
 *
 * The pieces below are used by the rows of several families; each
 * comment names the header that cites its counts. */
#ifndef DDLSIM_STACK_PRIVATE_H
#define DDLSIM_STACK_PRIVATE_H

#include "stack.h"

#define FWD_BWD(bf, bb, kf, kb) { { (bf), (bb) }, { (kf), (kb) } }

/* The fused Transformer Engine pieces (megatron-te's counts,
 * stack_megatron.h) and the eager residual, SwiGLU and loss (hf-eager's,
 * stack_eager.h), shared by the rows that run them. */
#define TE_NORM FWD_BWD(4, 6, 1, 2)
#define TE_GELU FWD_BWD(4, 6, 1, 1)
#define EAGER_RESIDUAL FWD_BWD(6, 6, 1, 1)
#define EAGER_SWIGLU FWD_BWD(10, 18, 2, 3)
#define EAGER_LOSS FWD_BWD(22, 34, 3, 5)
/* ATen's LayerNorm: one forward kernel; backward dx and a column
 * reduction for dgamma, dbeta re-reading dy and x [derived]: 10 B/el. */
#define ATEN_LAYERNORM FWD_BWD(4, 10, 1, 2)
/* Transformer Engine's transformer pieces (the megatron-te row,
 * stack_megatron.h), also carried by the CNN stacks (stack_mxnet.h),
 * which never emit them. */
#define TE_TRANSFORMER_PIECES \
	.rmsnorm = TE_NORM, .layernorm = TE_NORM, .rope = FWD_BWD(4, 4, 2, 2), \
	.swiglu = FWD_BWD(6, 10, 1, 1), .gelu = TE_GELU, .residual = EAGER_RESIDUAL, \
	.loss = FWD_BWD(38, 14, 6, 2), .main_grad_Bpp = 6, .main_grad_kernels = 0
/* Beyond a fused Adam step (r16 w12, precision.h): clip_grad_norm_ (r4,
 * and an unconditional _foreach_mul_ r4 w4) = 12 B; torch's default
 * foreach AdamW, eight multi-tensor passes, 80 B instead of 28, with the
 * same clipping: 52 + 12 = 64 B. Neither writes a 16-bit copy (FSDP casts
 * at the gather). */
#define TORCH_FUSED_ADAM_CLIP 12
#define TORCH_FOREACH_ADAMW_CLIP 64
/* The eager Llama stacks' separate projections (the hf-eager and
 * torchtitan blocks of stack_eager.h, deepspeed's of stack_deepspeed.h):
 * q, k, v and gate, up as their own nn.Linear, three and two GEMMs, and
 * autograd's sums of their input gradients, an add of two 16-bit
 * gradients each, r4 w2 in one kernel [source]
 * (pytorch/pytorch torch/csrc/autograd/input_buffer.cpp, InputBuffer::
 * accumulate: old_var.add_(var), else old_var + var; the same in torch
 * 1.x and 2.x). */
#define AUTOGRAD_GRAD_SUM FWD_BWD(0, 6, 0, 1)
#define EAGER_SPLIT_PROJECTIONS \
	.qkv_separate = true, .qkv_separate_gated = true, .mlp_separate = true, \
	.grad_sum = AUTOGRAD_GRAD_SUM
/* The host's time to issue one kernel from PyTorch (host.h) [measured,
 * two parts]: forward, a Python op with autograd recording, 6.8 us
 * (pytorch/pytorch issue #41383, PyTorch 1.6: y = 2 * x with
 * requires_grad, 1e6 calls; 5.0 us without autograd; CPU tensors, so no
 * launch), plus cudaLaunchKernel, 2.6 us at the minimum
 * (makslevental/persistent_kernel README.md at 1a1b230, driver
 * 510.39.01): 9.4 us. Backward, a node of the autograd engine's C++
 * thread: the same op from C++, about 1 us (ibid., a PyTorch
 * maintainer's measurement: half of x*x's 2 us is Python), plus the
 * launch: 3.6 us. Transformer Engine's modules issue their fused kernels
 * through the same path with more Python per module (te.Linear's CPU
 * time is 2.7 x nn.Linear's on GH200: NVIDIA/TransformerEngine issue
 * #2053), so these are a lower bound for megatron-te. */
#define TORCH_HOST_ISSUE { 9.4, 3.6 }
/* The eager PyTorch pieces of a Hugging Face-style model (hf-eager's
 * counts, stack_eager.h), which llm-foundry and the DeepSpeed stack share. */
#define HF_EAGER_PIECES \
	.rmsnorm = FWD_BWD(36, 90, 8, 10), .layernorm = ATEN_LAYERNORM, \
	.rope = FWD_BWD(20, 28, 10, 12), .swiglu = EAGER_SWIGLU, .gelu = TE_GELU, \
	.residual = EAGER_RESIDUAL, \
	.rmsnorm_extra_Bpe = EAGER_RMSNORM_EXTRA_BPE, .eager_swiglu = true
/* torch's cross_entropy on an fp32 copy of 16-bit logits, at its
 * backward: the fp32 log-probabilities log_softmax saves
 * (derivatives.yaml _log_softmax: result), nll_loss's dense input
 * gradient and log_softmax's input gradient, 4 B each (torchtitan
 * 9dec370 train.py L131-138, L303-308: `del pred` frees the 16-bit
 * logits first; transformers 4.45 modeling_llama.py: logits.float()). */
#define TORCH_CE_FP32_PEAK_BPL 12
/* An eager RMSNorm's saved tensors (torchtitan 9dec370 models/norms.py
 * RMSNorm._norm: x.float() * torch.rsqrt(x.pow(2).mean(-1) + eps), then
 * .type_as(x) * weight; transformers 26a9443 modeling_llama.py L111-125
 * LlamaRMSNorm alike): pow and mul save the fp32 copy (4 B per element),
 * the weight's mul the normalised 16-bit tensor (2 B), where a fused norm
 * saves its 16-bit input (2 B): 4 B more per element of the input (in
 * fp32 training the copy is the input, the normalised output 4 B: again
 * 4 more). RoPE saves nothing more in either stack: its products take
 * the rotation (freqs_cis, cos, sin), which needs no gradient, so
 * autograd keeps only that operand (tools/autograd/gen_variable_type.py
 * guard_for: an input saved for the other's derivative alone). */
#define EAGER_RMSNORM_EXTRA_BPE 4

/* Megatron's fused ScaledUpperTriangMaskedSoftmax (stack_megatron.h's
 * megatron-te note):
 * 3 / 4 B per score, one kernel each way, for key sequences the kernel
 * takes [source]: 16 < sk <= 4096 in Megatron-Core core_v0.9.0
 * megatron/core/fusions/fused_softmax.py L156 and in BigScience's
 * Megatron-DeepSpeed affff3d2 megatron/model/fused_softmax.py L171, <= 2048
 * in Megatron-LM v2.5 e269e20 megatron/model/fused_softmax.py L132
 * (causal_softmax_max_seq). */
#define MEGATRON_CAUSAL_SOFTMAX FWD_BWD(3, 4, 1, 1)

#endif
