/* stack_dle.h: NVIDIA DeepLearningExamples' BERT stack, a row of
 * stack_table (stack.h).
 *
 * dle-bert (PyTorch BERT pre-training at a9e2c1d5: fp16, TorchScript and
 * nvFuser, DDP, LAMB), with its DDP gradient path and the source of every
 * count. Included by stack.c alone, which lists the rows in stack_table;
 * TE_NORM and the other fused counts it borrows are stack-private.h's.
 *
 * dle-bert: NVIDIA DeepLearningExamples PyTorch BERT pre-training
 *   (PyTorch/LanguageModeling/BERT at a9e2c1d5, 2022-03-02, the commit of
 *   the README's DGX A100 figures; modeling.py and the training loop are
 *   unchanged through 729963dd but for resume and logging), fp16 with
 *   --allreduce_post_accumulation_fp16 (scripts/configs/pretrain_config.sh
 *   L32-33), in the pytorch:21.11-py3 container (PyTorch 1.11.0a0; its
 *   C++ sources are cited by file where their lines at that commit were
 *   not read). Line numbers below: run_pretraining.py (rp), modeling.py
 *   (mo), lamb_amp_opt/ (la), all at a9e2c1d5.
 *   - precision [source]: rp L403-406 model.half(): fp16 weights,
 *     activations and gradients; no autocast (rp L508), no fp32 main
 *     gradients (main_grad_Bpp 0: the engine path below).
 *   - QKV [source]: mo L316-318, L345-347: three nn.Linear, three GEMMs
 *     (qkv_separate); the context copied back to [s, b, h] by
 *     .transpose(0, 1).contiguous() (mo L374): r2 w2 of T x h forward,
 *     1 B per element of q, k, v and the output; its backward is a view
 *     the bmm reads strided. The backward of the projections is not:
 *     q and v reach the bmm as view(s, b * heads, d).transpose(0, 1) and
 *     k as .permute(1, 2, 0) (mo L330-338, L349-351); the bmm's
 *     gradients come back as new [b * heads, s, d] and [b * heads, d, s]
 *     tensors, transposed back to [s, b * heads, d] with strides that do
 *     not fold into [s, b, h], so view's backward (grad.reshape(self
 *     sizes), PyTorch's tools/autograd/derivatives.yaml) copies each:
 *     r2 w2 of T x h three times = 3 B per element of q, k, v and the
 *     output in 3 kernels (attn_copy 1 / 3).
 *   - QKV biases [source]: the layout is [s, b, h] (mo L498), a 3-D
 *     input. PyTorch 1.11's at::linear takes addmm only for a 2-D input
 *     and runs matmul then output.add_(bias) otherwise (the fused path
 *     for contiguous 3-D input came with pytorch/pytorch#72728, February
 *     2022, after the container's November 2021 build; pytorch#39661
 *     states the 2020-2021 behaviour). nvFuser, where it splits linear
 *     into matmul and prim::add_optional (csarofeen/pytorch#1253, 2021-11,
 *     every linear with a bias until #1679, 2022-05), fuses the add only
 *     into a neighbouring pointwise op: q, k and v go on to view,
 *     transpose and bmm, none fusible there, so either way the bias add
 *     is a kernel of its own, r2 w2, and the bias gradient a reduction
 *     of the output's gradient over the tokens (autograd's sum_to, r2):
 *     4 forward, 2 backward per element of q, k, v, 3 kernels each
 *     (qkv_bias). The other Linear biases (attention output, both MLP
 *     GEMMs) depend on that split: fused into the GELU and the
 *     dropout-residual kernels where nvFuser split the linear, an add_
 *     and a reduction of their own where it did not; taken as fused, the
 *     pieces below unchanged: the container ran NVIDIA's devel nvFuser
 *     (mo L122's F.gelu(approximate=True) is the approximate GELU that
 *     pytorch#67943, 2021-11-06, held back from upstream), whose branch
 *     split every linear with a bias by then (#1253).
 *   - attention core [source]: mo L354-373, unfused: bmm, scale, mask
 *     add, softmax, dropout, bmm (the scenario's "unfused"; workload.c
 *     prices the core itself).
 *   - norm, GELU, residual: a9e2c1d5 replaced apex's FusedLayerNorm and
 *     the scripted bias_gelu by nn.LayerNorm and F.gelu (mo L121-122,
 *     L275, L391-397, L427-433), standard ops nvFuser can take: the
 *     model is torch.jit.script'ed (rp L408-409) with nvFuser on (rp
 *     L55-60). nvFuser's fusion groups at the container's PyTorch were
 *     not read: each piece is taken as one kernel reading its inputs and
 *     writing its outputs once (the counts of the fused stack, TE_NORM,
 *     TE_GELU, EAGER_RESIDUAL with the dropout mask). Not a bound: one
 *     group over dropout, residual add and LayerNorm would move less,
 *     ATen's eager kernels more.
 *   - input-gradient sums: hidden_states feeds query, key, value and the
 *     residual (mo L345-347, L397: 3 sums), attention_output MLP-up and
 *     the residual (L433, L455-456 at 729963dd: 1); the residual piece's
 *     backward charges one per half-layer, so 2 would be missing in
 *     attention. In the scripted model these sums are the autodiff
 *     backward graph's (prim::AutogradAdd), which nvFuser may fuse into
 *     the LayerNorm backward it feeds; its fusion groups were not read
 *     (above), so no sum is added (grad_sum 0) and the three GEMMs
 *     stay.
 *   - loss [source]: the MLM decoder's bias added by its own kernel (mo
 *     L553: decoder(x) + bias, r2 w2 per logit), then the criterion, not
 *     scripted (rp L75-95, L468), torch.nn.CrossEntropyLoss on the fp16
 *     logits: ATen cross_entropy_loss = log_softmax (r2 w2) + nll_loss
 *     (aten/src/ATen/native/LossNLL.cpp): 8 B/logit in 3 kernels;
 *     backward nll_loss_backward zero-fills the logits' gradient (w2, and
 *     scatters the targets), log_softmax_backward_data reads the gradient
 *     and the output and writes dx (r4 w2), the bias gradient sums the
 *     rows (r2): 10 B/logit in 4 kernels. The MLM head runs on the masked
 *     positions only (mo L587-591: index_select before the transform).
 *   - gradients across micro-batches [source]: zero_grad(set_to_none)
 *     after each step (rp L525, la fused_lamb.py L118-122); the
 *     micro-batches before the last run under DDP's no_sync (rp L668-670)
 *     where autograd's AccumulateGrad keeps the first gradient as it is
 *     and adds each later one in place, fp16 (torch/csrc/autograd/
 *     functions/accumulate_grad.h: variable_grad += new_grad): r2 r2 w2 =
 *     6 B/param on each micro-batch after a step's first.
 *   - the reduction [source]: one DDP bucket the size of the GPU's memory
 *     (rp L446, gradient_as_bucket_view); at the step's last micro-batch
 *     the reducer copies each gradient into its bucket view
 *     (torch/csrc/distributed/c10d/reducer.cpp mark_variable_ready_dense:
 *     the gradient was set to None, so it is no alias of the view): with
 *     no comm hook, at::mul_out by 1 / world size, r2 w2 = 4 B/param. With
 *     gradient_accumulation_steps > 1 DLE registers a comm hook (rp
 *     L449-464): copy_ into the view (4), bucket.buffer().div_(steps) (4),
 *     then allreduce_hook's _allreduce_fut divides by the world size
 *     (torch/distributed/algorithms/ddp_comm_hooks/default_hooks.py, one
 *     div_ over the bucket, 4): 12 B/param. The all-reduce itself is the
 *     schedule's, in fp16.
 *   - optimizer [source]: grad_scaler.step (rp L516-525) calls
 *     FusedLAMBAMP.step with the scaler (la fused_lamb.py L39, L131-258):
 *     _check_inf_per_device unscales by 1.0 in place through
 *     _amp_foreach_non_finite_check_and_unscale_ (torch/cuda/amp/
 *     grad_scaler.py, aten/src/ATen/native/cuda/AmpKernels.cu: a
 *     multi-tensor load and store of every fp16 gradient, r2 w2);
 *     multi_tensor_l2norm of the fp16 gradients (fused_lamb.py L175-181,
 *     r2); multi_tensor_lamb (la csrc/multi_tensor_lamb.cu L371-500):
 *     the fp32 master weights' per-tensor norms (L415, r4), stage 1
 *     (L43-245: reads g 2, the master 4, m 4, v 4, writes the update into
 *     g 2, m 4, v 4: 24), the update's norms (L467, r2), stage 2
 *     (L251-368, aligned path: reads the master 4, the update 2 and the
 *     fp16 weight 2, writes the master 4 and the fp16 weight 2: 14):
 *     4 + 2 + 4 + 24 + 2 + 14 = 50 B/param, the fp16 copy included
 *     (optimizer_copy16 false), 22 beyond precision.h's fused Adam (28).
 *     Kernels: the unscale, the gradient norm, the global norm, and per
 *     parameter group (two, rp L412-416) the four passes of
 *     multi_tensor_lamb: 11 (multi_tensor_apply splits a pass into more
 *     launches over 336 M parameters: a lower bound).
 *   - host: no CUDA graphs in phase 1 (rp L306-309: --cuda_graphs off,
 *     scripts/run_pretraining.sh L170-192 does not pass it); the scripted
 *     forward runs its ops from TorchScript's C++ interpreter, not
 *     Python: the torch stacks' backward issue time (C++ op and launch,
 *     3.6 us) both ways.
 *   Not counted: the embedding's dropout (mo L296), nvFuser's saved
 *   intermediates beyond the pieces' outputs, the word embedding's two
 *   gradients summed (embedding and tied decoder), the vocabulary padded
 *   to 30,528 (rp L374-375), torch.nonzero's host synchronisation in the
 *   head and the criterion (mo L590, rp L89). */
#ifndef DDLSIM_STACK_DLE_H
#define DDLSIM_STACK_DLE_H

#include "stack-private.h"

/* DeepLearningExamples BERT's DDP path (the dle-bert block above), the
 * same at every ZeRO stage (DDP has none): AccumulateGrad's in-place fp16
 * add on each micro-batch after a step's first (6, one add_ per weight
 * tensor: an attention block has 10, an MLP block 6, taken as 8); at the
 * reduction, the copy into the bucket view (4, per tensor) and, with
 * accumulation, the comm hook's two divisions of the bucket (8); the
 * step's LAMB beyond a fused Adam (22) in 11 kernels. */
#define DLE_DDP_PATH \
	{ .accum_later_Bpp = 6, .accum_kernels = 8, \
	  .reduce_Bpp = 4, .reduce_accum_Bpp = 4 + 4, .reduce_kernels = 8, \
	  .optimizer_Bpp = 50 - 28, .optimizer_kernels = 11 }
static const struct stack_zero_path dle_ddp[4] = {
	DLE_DDP_PATH, DLE_DDP_PATH, DLE_DDP_PATH, DLE_DDP_PATH,
};

#define STACK_DLE_BERT \
	{ "dle-bert", "NVIDIA DeepLearningExamples PyTorch BERT (fp16, TorchScript + nvFuser, DDP, LAMB)", \
	  .rmsnorm = TE_NORM, .layernorm = TE_NORM, .rope = FWD_BWD(4, 4, 2, 2), \
	  .swiglu = FWD_BWD(6, 10, 1, 1), .gelu = TE_GELU, .residual = EAGER_RESIDUAL, \
	  .loss = FWD_BWD(8, 10, 3, 4), .attn_copy = FWD_BWD(1, 3, 1, 3), \
	  .qkv_separate = true, .qkv_bias = FWD_BWD(4, 2, 3, 3), \
	  /* no fp32 main gradient: the DDP path (zero_path) instead */ \
	  .main_grad_Bpp = 0, .main_grad_kernels = 1, \
	  .optimizer_Bpp = 50 - 28, .optimizer_kernels = 11, \
	  .zero_path = dle_ddp, \
	  .attn_ampere = ATTN_BE_FA2, .attn_hopper = ATTN_BE_FA2, \
	  .host_issue_us = { 3.6, 3.6 }, \
	  .source = "NVIDIA/DeepLearningExamples a9e2c1d5 PyTorch/LanguageModeling/BERT: " \
		    "run_pretraining.py L55-60, L75-95, L403-464, L508-525, L668-675; modeling.py " \
		    "L316-374, L391-433, L498, L553, L587-591; lamb_amp_opt/fused_lamb/fused_lamb.py L118-258, " \
		    "csrc/multi_tensor_lamb.cu L43-500; PyTorch 1.11 reducer.cpp, default_hooks.py, " \
		    "accumulate_grad.h, LossNLL.cpp, AmpKernels.cu, Linear.cpp (before #72728), " \
		    "derivatives.yaml (view)" }

#endif
