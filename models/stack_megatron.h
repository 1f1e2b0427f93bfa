/* stack_megatron.h: the Megatron-LM stacks, rows of stack_table (stack.h).
 *
 * megatron-te (Megatron-Core with Transformer Engine, the default stack)
 * and the two stacks of Megatron-LM v2.5 as the SC21 table ran it, with
 * the source of every count. Included by stack.c alone, which lists the
 * rows in stack_table; the conventions of the counts and the pieces other
 * families share (TE_TRANSFORMER_PIECES, MEGATRON_CAUSAL_SOFTMAX) are
 * stack-private.h's.
 *
 * megatron-te: Megatron-Core core_v0.9.0 (commit 1afee59) with
 *   Transformer Engine v1.11 (commit c27ee60).
 *   - fusions on by default [source]: megatron/training/arguments.py
 *     L1205-1215 (bias_swiglu_fusion, bias_dropout_fusion,
 *     apply_rope_fusion True), L1216-1218 (cross_entropy_loss_fusion
 *     False), L1245-1249 (gradient_accumulation_fusion True).
 *   - norm [source]: TE module/layernorm_linear.py L121-149 (a separate
 *     rmsnorm/layernorm kernel writes ln_out), common/rmsnorm/
 *     rmsnorm_fwd_kernels.cuh L81, L123 (read x, write z): 4 B/el;
 *     backward tex.rmsnorm_bwd (layernorm_linear.py L689-697,
 *     rmsnorm_bwd_kernels.cuh L85-86, L128): read dz, x, write dx 6 B/el,
 *     plus the dgamma finalize kernel.
 *   - RoPE [source]: models/common/embeddings/rotary_pos_embedding.py
 *     L241-245 (fused path, q and k separately), apex
 *     csrc/megatron/fused_rotary_positional_embedding.h L28-48, L67-88:
 *     one read and one write: 4 B/el of q and of k, each pass.
 *   - SwiGLU [source]: fusions/fused_bias_swiglu.py L27-31, L58-73: reads
 *     [gate, up] (4 B per output element), writes 2: 6 B; backward reads
 *     g 2 + y 4, writes 4: 10 B.
 *   - GELU [source]: fusions/fused_bias_gelu.py (bias_gelu, bias_gelu_back):
 *     read 2, write 2; backward read g and x, write 2: 4 / 6 B.
 *   - residual [source]: fusions/fused_bias_dropout.py L9-38: reads x and
 *     the residual, writes the sum: 6 B/el; [derived] backward: the two
 *     gradients meeting at the residual stream summed, 6 B/el.
 *   - loss [source]: megatron/core/tensor_parallel/cross_entropy.py
 *     L27 (.float(): r2 w4), L29 (max: r4), L43 (sub in place: r4 w4),
 *     L62-63 (exp in place: r4 w4), L64 (sum: r4), L77 (div in place:
 *     r4 w4): 38 B/logit, 6 kernels; backward L112 (mul_ in place: r4 w4)
 *     and [derived] the .float() cast back to bf16 (r4 w2): 14 B/logit.
 *   - main gradients [source]: arguments.py L335-339 (bf16 accumulates in
 *     fp32), TE layernorm_linear.py L643-655 (the wgrad GEMM accumulates
 *     into main_grad, beta = 1): reads and writes fp32 instead of writing
 *     bf16, +6 B/param/micro-batch, fused (no kernel).
 *   - optimizer [source]: optimizer/clip_grads.py L91-102
 *     (multi_tensor_l2norm of the optimizer's shard of main gradients:
 *     r4): 4 B/param beyond the Adam step precision.h counts (TE
 *     FusedAdam r16 w12, the fp32-to-bf16 copy r4 w2:
 *     multi_tensor_adam.cu L226-264, distrib_optimizer.py L1742); and
 *     distributed/param_and_grad_buffer.py L646-650 (reset():
 *     grad_data.zero_(), called by zero_grad_buffer before every step,
 *     training.py): the whole contiguous gradient buffer, every parameter
 *     the rank holds, not the distributed optimizer's 1/dp shard: w4 of
 *     fp32 main gradients per parameter (zero_grad_buffer). The same at
 *     Megatron-LM f2e5db40 (L503-508; training.py L585).
 *   - unfused attention's causal softmax [source]: Megatron's fused
 *     ScaledUpperTriangMaskedSoftmax (the kernel of every Megatron stack
 *     here; read at Megatron-LM v2.5 e269e20 megatron/fused_kernels/
 *     scaled_upper_triang_masked_softmax.h): row i of the scores is read
 *     only up to its diagonal (local_seq = blockIdx.x + 1, L131, L151-158)
 *     and written whole (the triangle L212-222, zeros above it L223-224):
 *     forward r1 w2 = 3 B per score instead of 4; backward reads the
 *     gradient and the output in the triangle (L275-283) and writes the
 *     whole row (L319-326): r2 w2 = 4 instead of 6 (causal_softmax).
 *   - attention [source]: TE pytorch/attention.py L818-829: with flash-attn
 *     and cuDNN both usable on sm90, "Disabling FlashAttention to give
 *     FusedAttention preference on Hopper+": cuDNN on H100, flash-attn
 *     (FlashAttention-2) on A100 (L846-854).
 *
 * megatron-lm-2021, megatron-lm-2021-torch-ddp: Megatron-LM v2.5
 *   (NVIDIA/Megatron-LM e269e20, 2021-08-10) as the SC21 weak-scaling
 *   table ran it (Narayanan et al. 2021): examples/sc21/ at de7dc40f
 *   (run_table_1.sh, CONFIG.sh, SRUN.sh), fp16 with --loss-scale 8192 and
 *   --clip-grad 1.0 (CONFIG.sh L29-55), --checkpoint-activations, in
 *   nvcr.io/nvidia/pytorch:20.12-py3 (SRUN.sh L15: PyTorch 1.8.0a0, CUDA
 *   11.1, apex). The rows 1.7B-18B set DDP=torch, the rows 39B-1T
 *   DDP=local (run_table_1.sh L14-122), hence two stacks with the same
 *   kernels and different gradient paths. Line numbers below are e269e20's
 *   unless named.
 *   - LayerNorm [source]: apex-derived MixedFusedLayerNorm, fused_kernels/
 *     layer_norm_cuda_kernel.cu: forward cuApplyLayerNorm (L675, read x,
 *     write y: 4 B/el); backward cuComputePartGradGammaBeta (L748),
 *     cuComputeGradGammaBeta (L761), cuComputeGradInput (L779): 10 B/el
 *     in 3 kernels (megatron-deepspeed's count).
 *   - QKV bias [source]: mpu/layers.py L278-291: ColumnParallelLinear
 *     calls F.linear(input, weight, bias) on the [s, b, h] input (3-D);
 *     PyTorch 1.8's at::linear fuses the bias (addmm) only for a 2-D
 *     input and otherwise runs matmul then output.add_(bias) (the fused
 *     3-D path is pytorch/pytorch#72728, 2022; dle-bert's note): r2 w2
 *     per element of q, k, v forward (and again in the recomputation),
 *     and autograd's sum of the gradient over the tokens for the bias, r2,
 *     backward: 4 / 2 B, one kernel each (qkv_bias). The other linears of
 *     a layer skip the bias (skip_bias_add: the dense and both MLP
 *     GEMMs, fused into bias_gelu and bias_dropout_add below).
 *   - context copy [source]: model/transformer.py L338:
 *     context_layer.permute(2, 0, 1, 3).contiguous(), r2 w2 of T x h / t,
 *     forward (and recomputation): 1 B per element of q, k, v and the
 *     output (attn_copy); its backward is a view (the permuted gradient
 *     reshapes to [b np, sq, hn] without a copy).
 *   - softmax [source]: model/fused_softmax.py L129-145: the causal
 *     ScaledUpperTriangMaskedSoftmax for fp16 with 16 < s <= 2048 (every
 *     row of the table: s = 2048, b x heads / t a multiple of 4): 3 / 4 B
 *     per score (causal_softmax, megatron-te's note).
 *   - attention dropout [source]: transformer.py L307-308,
 *     torch.nn.Dropout on the probabilities: forward r2, w2 and the
 *     one-byte mask (5 B per score, the generic count); [derived]
 *     backward grad x mask x scale: r2 + mask r1 + w2 = 5 B, not 7.5
 *     (attn_dropout).
 *   - GELU [source]: model/fused_bias_gelu.py L31-58: bias_gelu (read 2,
 *     write 2); bias_gelu_back (reads g and y, writes 2) returns the same
 *     tensor for the input and the bias (L58), and [derived] autograd sums
 *     it over the tokens for the bias (r2): 4 / 8 B/el, 1 / 2 kernels.
 *   - residual [source]: transformer.py L357-373 (bias_dropout_add,
 *     torch.jit.script), called L474-480 and L516-522 with the bias
 *     expanded to the residual's shape: forward taken as megatron-te's 6
 *     B/el plus the mask (the legacy JIT fuser's split of dropout from the
 *     adds at PyTorch 1.8 was not read); [derived] backward: dropout's
 *     grad x mask x scale r2 w2 (+ the mask's byte, workload.c), the bias
 *     gradient summed over the tokens from expand_as's backward r2, and
 *     the residual stream's two gradients accumulated, r2 r2 w2: 12 B/el
 *     + 1 in 3 kernels.
 *   - loss [source]: model/gpt_model.py L52-56 (fp16_lm_cross_entropy off:
 *     output.float()), mpu/cross_entropy.py L31 (max), L36 (sub_), L69
 *     (exp, out=), L70 (sum), L79 (div_); backward L103 (mul_) and the
 *     cast back: megatron-te's 38 / 14 B/logit.
 *   - gradients [source]: fp16 param.grad, no fp32 main gradient:
 *     arguments.py L153-155 (fp32 accumulation only with local DDP and
 *     --accumulate-allreduce-grads-in-fp32, which the script does not set,
 *     nor --use-contiguous-buffers-in-ddp); autograd's AccumulateGrad adds
 *     each micro-batch after a step's first in place (variable_grad +=
 *     new_grad, torch/csrc/autograd/functions/accumulate_grad.h): r2 r2
 *     w2 = 6 B/param, one add_ per tensor (a GPT block op's attention or
 *     MLP has 6: LayerNorm, QKV or fc1, dense or fc2, weight and bias).
 *   - DDP=torch [source]: training.py L246-251 wraps each model in
 *     torch.nn.parallel.DistributedDataParallel (bucket_cap_mb 25,
 *     gradient_as_bucket_view False); schedules.py L117-137 runs the first
 *     m - 1 micro-batches under no_sync and the last outside it, where the
 *     reducer all-reduces 25 MB buckets as backward fills them (overlapped
 *     with the last backward); per parameter the reducer's
 *     copy_grad_to_bucket divides while copying into the bucket (at::mul_out,
 *     r2 w2) and finalize_bucket_dense's copy_bucket_to_grad copies the
 *     reduced bucket back into .grad (r2 w2): 8 B/param, two kernels per
 *     tensor (torch/csrc/distributed/c10d/reducer.cpp of the 1.8-1.10
 *     series, read at an unpinned commit).
 *   - DDP=local [source]: model/distributed.py L188-218 without grad
 *     buffers: after the last backward (training.py L366-369) the fp16
 *     grads flattened into one buffer (_flatten_dense_tensors, r2 w2),
 *     divided by d in place (r2 w2), all-reduced, and copied back per
 *     tensor (_unflatten_dense_tensors views, buf.copy_: r2 w2): 12
 *     B/param, not overlapped; the copies one kernel per tensor, the whole
 *     buffer's cat and div no launch of their own.
 *   - step [source]: optimizer/optimizer.py step L376-423:
 *     _copy_model_grads_to_main_grads (L303-317: main_grad.float(), or
 *     .grad.float() with torch DDP, r2 w4 = 6 per parameter, one cast per
 *     tensor); _unscale_main_grads_and_check_for_nan (L320-344:
 *     _amp_foreach_non_finite_check_and_unscale_ over the fp32 gradients,
 *     r4 w4 = 8) and found_inf.item(); clip_grad_norm (clip_grads.py
 *     L85-98: multi_tensor_l2norm, r4; the multi_tensor_scale of L113-118
 *     runs only when the norm exceeds --clip-grad, not counted, as
 *     megatron-te); apex FusedAdam (optimizer/__init__.py L16; r16 w12,
 *     precision.h); _copy_main_params_to_model_params (L361:
 *     multi_tensor_scale fp32 -> fp16, r4 w2, optimizer_copy16);
 *     zero_grad(set_to_none=True) (L283-294: nothing written): 6 + 8 + 4
 *     = 18 B/param beyond Adam and the fp16 copy; kernels: the unscale,
 *     the norm, Adam and the copy (multi-tensor) and the casts, one per
 *     tensor (counted with the multi-tensor ones as 4 + 1 per step: a lower
 *     bound).
 *   - GEMMs: cuBLAS 11.3 of CUDA 11.1 (gemm_lib cublas11: the A100
 *     presets measure none, gemm_max there).
 *   Not counted: the backward of torch.split of the fused QKV output (a
 *   cat of dq, dk, dv: megatron-te's Megatron-Core splits the same way
 *   and does not count it either); found_inf.item()'s host synchronisation
 *   per step; the loss-scale's update. */
#ifndef DDLSIM_STACK_MEGATRON_H
#define DDLSIM_STACK_MEGATRON_H

#include "stack-private.h"

/* Megatron-LM v2.5's gradient path (the megatron-lm-2021 block above),
 * the same at every ZeRO stage (neither DDP has one): AccumulateGrad's
 * fp16 add on each micro-batch after a step's first (6 B, one add_ per
 * tensor, 6 per block op); at the reduction torch DDP's bucket copy in
 * and out (8 B, two kernels per tensor) or local DDP's flatten, divide
 * and copy back (12 B, a copy_ per tensor); the step's casts, unscale
 * and norm beyond Adam (18 B). */
#define MEGATRON_2021_PATH(reduce, kernels) \
	{ .accum_later_Bpp = 6, .accum_kernels = 6, \
	  .reduce_Bpp = (reduce), .reduce_kernels = (kernels), \
	  .optimizer_Bpp = 6 + 8 + 4, .optimizer_kernels = 5 }
static const struct stack_zero_path megatron_2021_torch_ddp[4] = {
	MEGATRON_2021_PATH(8, 12), MEGATRON_2021_PATH(8, 12),
	MEGATRON_2021_PATH(8, 12), MEGATRON_2021_PATH(8, 12),
};
static const struct stack_zero_path megatron_2021_local_ddp[4] = {
	MEGATRON_2021_PATH(12, 6), MEGATRON_2021_PATH(12, 6),
	MEGATRON_2021_PATH(12, 6), MEGATRON_2021_PATH(12, 6),
};
/* Megatron-LM v2.5's pieces (the megatron-lm-2021 block above): apex
 * LayerNorm, the QKV bias's own add and sum, the context's permute copy,
 * the causal fused softmax, dropout's backward, bias-GELU with the bias's
 * sum, bias_dropout_add's backward, the fp32 vocab-parallel loss; fp16
 * gradients (no main gradient: the path above); FusedAdam. */
#define MEGATRON_2021_PIECES \
	.rmsnorm = TE_NORM, .layernorm = FWD_BWD(4, 10, 1, 3), \
	.rope = FWD_BWD(4, 4, 2, 2), .swiglu = EAGER_SWIGLU, .gelu = FWD_BWD(4, 8, 1, 2), \
	.residual = FWD_BWD(6, 12, 1, 3), .loss = FWD_BWD(38, 14, 6, 2), \
	.attn_copy = FWD_BWD(1, 0, 1, 0), .qkv_bias = FWD_BWD(4, 2, 1, 1), \
	.causal_softmax = MEGATRON_CAUSAL_SOFTMAX, .causal_softmax_max_seq = 2048, \
	.attn_dropout = FWD_BWD(5, 5, 1, 1), \
	.main_grad_Bpp = 0, .main_grad_kernels = 1, \
	.optimizer_Bpp = 6 + 8 + 4, .optimizer_copy16 = true, .optimizer_kernels = 5, \
	.attn_ampere = ATTN_BE_FA2, .attn_hopper = ATTN_BE_FA2, \
	.host_issue_us = TORCH_HOST_ISSUE, .gemm_lib = GEMM_LIB_CUBLAS11
#define MEGATRON_2021_SOURCE \
	"NVIDIA/Megatron-LM v2.5 (e269e20) megatron/mpu/layers.py L278-291, " \
	"megatron/model/transformer.py L307-308, L338, L357-373, L474-480, L516-522, " \
	"megatron/model/fused_bias_gelu.py L31-58, megatron/fused_kernels/" \
	"layer_norm_cuda_kernel.cu L675-779, scaled_upper_triang_masked_softmax.h " \
	"L120-326, megatron/optimizer/optimizer.py L303-423, clip_grads.py L85-118, " \
	"megatron/schedules.py L117-137; examples/sc21 at de7dc40f (run_table_1.sh, " \
	"CONFIG.sh, SRUN.sh: pytorch:20.12-py3)"

#define STACK_MEGATRON_TE \
	{ "megatron-te", "Megatron-Core 0.9 + Transformer Engine 1.11 (fused kernels)", \
	  TE_TRANSFORMER_PIECES, \
	  .optimizer_Bpp = 4, .optimizer_copy16 = true, .optimizer_kernels = 3, \
	  .zero_grad_buffer = true, .causal_softmax = MEGATRON_CAUSAL_SOFTMAX, \
	  .causal_softmax_max_seq = 4096, \
	  /* cross_entropy.py L27 fp32 copy, L43-77 softmax in place, L180 saved; the \
	   * backward in place, cast to 16 bits: 4 + 2 */ \
	  .loss_peak_Bpl = 6, \
	  .attn_ampere = ATTN_BE_FA2, .attn_hopper = ATTN_BE_CUDNN, \
	  .host_issue_us = TORCH_HOST_ISSUE, \
	  .source = "Megatron-LM core_v0.9.0 (1afee59) megatron/training/arguments.py L1205-1249, " \
		    "megatron/core/tensor_parallel/cross_entropy.py L27-77, L112; TransformerEngine " \
		    "v1.11 (c27ee60) pytorch/module/layernorm_linear.py, pytorch/attention.py L818-829" }

#define STACK_MEGATRON_LM_2021 \
	{ "megatron-lm-2021", "Megatron-LM v2.5 of 2021 with local DDP (SC21 rows 39B-1T: apex kernels, fp16, flat fp16 all-reduce after backward)", \
	  MEGATRON_2021_PIECES, .zero_path = megatron_2021_local_ddp, \
	  .source = MEGATRON_2021_SOURCE ", megatron/model/distributed.py L188-218" }

#define STACK_MEGATRON_LM_2021_TORCH_DDP \
	{ "megatron-lm-2021-torch-ddp", "Megatron-LM v2.5 of 2021 with torch DDP (SC21 rows 1.7B-18B: apex kernels, fp16, bucketed all-reduce in the last backward)", \
	  MEGATRON_2021_PIECES, .zero_path = megatron_2021_torch_ddp, \
	  .source = MEGATRON_2021_SOURCE ", megatron/training.py L246-251; PyTorch reducer.cpp " \
		    "(copy_grad_to_bucket, copy_bucket_to_grad)" }

#endif
