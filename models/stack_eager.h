/* stack_eager.h: the eager PyTorch Llama stacks, rows of stack_table
 * (stack.h).
 *
 * hf-eager (Hugging Face transformers) and torchtitan at two commits, no
 * torch.compile, with the source of every count. Included by stack.c
 * alone, which lists the rows in stack_table; the pieces other families
 * share (HF_EAGER_PIECES, EAGER_SPLIT_PROJECTIONS, TORCH_HOST_ISSUE) are
 * stack-private.h's.
 *
 * hf-eager: Hugging Face transformers LlamaForCausalLM, modeling_llama.py
 *   at commit 26a9443 (4.45.0.dev0, 2024-08-06; the Llama code has this
 *   shape in 4.40-4.45), SDPA attention (the default), no torch.compile.
 *   - RMSNorm [source] L111-125: .to(float32) r2 w4, pow r4 w4, mean r4,
 *     mul by rsqrt r4 w4, .to(bf16) r4 w2, weight mul r2 w2: 36 B/el in 6
 *     full-size kernels + 2 per-row ones (8); [derived] backward 90 B/el
 *     in 10 kernels (Liger-Kernel's published timings of this module,
 *     benchmark/data/all_benchmark_data.csv at ead96b6, imply 96).
 *   - RoPE [source] L246-276: q*cos r2 w2, -x2 r1 w1, cat r2 w2, *sin r2
 *     w2, add r4 w2: 20 B/el of q and of k, 5 kernels each; [derived]
 *     backward 28 B/el.
 *   - SwiGLU [source] L309: silu r2 w2, mul r4 w2: 10 B per output element,
 *     2 kernels; [derived] backward 18 B, 3 kernels.
 *   - residual [source] L745, L751: add r4 w2, [derived] backward 6.
 *   - loss [source] L1208-1222: logits.float() r2 w4, the shift's
 *     .contiguous() r4 w4, log_softmax r4 w4 (nll small): 22 B/logit;
 *     [derived] backward 34 B/logit (nll and log_softmax backward, the
 *     slice's zero-fill and copy, the cast back).
 *   - LayerNorm, GELU: F.layer_norm and F.gelu are one ATen kernel each
 *     (4 B/el forward); LayerNorm's backward adds the dgamma, dbeta
 *     reduction (10 B/el, ATEN_LAYERNORM).
 *   - main gradients: FSDP/DeepSpeed reduce in fp32 from the bf16 wgrad:
 *     the cast into the reduce buffer, r2 w4 = 6 B/param/micro-batch
 *     [derived] (torchtitan's reduce_dtype float32, config_manager.py L229).
 *   - optimizer [source]: the Trainer's default optim "adamw_torch"
 *     (training_args.py L1252-1261) is torch.optim.AdamW without fused,
 *     the foreach path (_multi_tensor_adamw: _foreach_mul_, lerp_, mul_,
 *     addcmul_, sqrt, div_, add_, addcdiv_: about 80 B/param in 8
 *     passes) and max_grad_norm 1.0 (L879): clip_grad_norm_ (r4, then an
 *     unconditional _foreach_mul_ r4 w4: torch/nn/utils/clip_grad.py at
 *     01a57d8).
 *   - attention: SDPA's flash backend (FlashAttention-2) on A100 and H100;
 *     with grouped-query attention repeat_kv (L314-323, called L642-643)
 *     expands and reshapes K and V to one copy per query head first:
 *     reads each K/V element, writes it n_rep times; [derived] backward
 *     sums the copies back.
 *   - projections [source]: q_proj, k_proj, v_proj are three nn.Linear
 *     on the same normed hidden_states (LlamaSdpaAttention.forward, the
 *     lines before repeat_kv's L642-643), gate_proj and up_proj two on
 *     the same x (L309): five GEMMs where a fused model runs two
 *     (wave quantization differs); autograd sums the input gradients
 *     of an activation read by several Linear layers (pytorch/pytorch
 *     torch/csrc/autograd/input_buffer.cpp InputBuffer::accumulate:
 *     old_var.add_(var), else old_var + var): r4 w2 per element of T x
 *     h, 2 adds for q, k, v and 1 for gate, up per layer, backward
 *     (the residual stream's sum is the residual piece's).
 *
 * torchtitan: v0.1.0 (commit f7084fc), torch.compile off (config_manager.py
 *   L235 compile False; llama3_8b.toml and llama3_70b.toml L37).
 *   - RMSNorm: nn.RMSNorm (model.py L276-277), in eager torch up to 2.7
 *     the ATen composite rms_norm_symint (to fp32, pow, mean, add eps,
 *     rsqrt, mul, mul weight, type_as: the op sequence of HF's RMSNorm,
 *     whose bytes are taken, 36 B/el; PyTorch's layer_norm.cpp read at an
 *     unpinned 2.4-2.7 commit); backward [derived] as HF's.
 *   - RoPE [source] model.py L69-95: xq.float() r2 w4, complex multiply r4
 *     w4, type_as r4 w2: 20 B/el of q and of k, 3 kernels each; [derived]
 *     backward 20 B/el.
 *   - SwiGLU [source] L236-237: as HF (10 / 18 B).
 *   - loss [source] components/loss.py L18-22: .float() r2 w4, log_softmax
 *     r4 w4: 14 B/logit; [derived] backward: log_softmax backward r8 w4,
 *     cast r4 w2: 18 B/logit.
 *   - optimizer [source]: AdamW(fused=True) (components/optimizer.py
 *     L276-287; torch fused_adam_utils.cuh at 01e5d8d: r16 w12), max_norm
 *     1.0 (config_manager.py L210): clip_grad_norm_ as hf-eager.
 *   - repeat_kv [source] model.py L98-107 (called L185-186): as hf-eager.
 *   - projections [source] model.py L140-145, L173 (wq, wk, wv separate
 *     nn.Linear of the same x), L232-237 (w1, w3 of the same x): as
 *     hf-eager's, five GEMMs and 3 autograd sums of 6 B per element of
 *     T x h per layer, backward. The same at the performance table's
 *     commit 04133643 (torchtitan/models/llama/model.py L156-160, L187,
 *     L243-248).
 *   - the performance table's commit 04133643 (row torchtitan-04133643):
 *     train.py L96-98 torch.optim.AdamW(..., foreach=True) and L296-298
 *     clip_grad_norm_(..., foreach=True): hf-eager's foreach AdamW and
 *     clipping (64 B/param beyond a fused Adam, 10 kernels) instead of
 *     v0.1.0's fused one; the other pieces as v0.1.0: RMSNorm
 *     torchtitan/models/norms.py L90-95 (x.float(), pow, mean, rsqrt,
 *     type_as, * weight: the composite's ops), RoPE model.py L105-106,
 *     the output's .float() L439 and F.cross_entropy train.py L163-164
 *     (14 B/logit as v0.1.0's loss), SDPA with is_causal.
 *   - attention [source] models/attention.py L183-214: SDPA with FLASH
 *     first (cuDNN first only on compute capability 10.0, B200: the B200
 *     preset gives no fa2 figure, so fa2 there is priced as its best,
 *     cuDNN's): FlashAttention-2 on A100 and H100.
 *   - FSDP2 copies [source] pytorch/pytorch 01d66d2 torch/distributed/
 *     _composable/fsdp/_fsdp_collectives.py: foreach_all_gather_copy_out
 *     (torch.split_with_sizes_copy of the whole all-gather output into
 *     the parameters' own tensors: r2 w2 per gathered bf16 element, on
 *     the current stream, at every all-gather, forward and the
 *     re-gather in backward); foreach_reduce_scatter_copy_in (torch.cat
 *     of the unsharded gradients into the reduce-scatter input of the
 *     reduce dtype: r2 w4 with fp32, on the reduce-scatter stream). The
 *     same copies are torch.ops.fsdp.split_with_sizes_copy and chunk_cat
 *     in torch/distributed/fsdp/_fully_shard/_fsdp_collectives.py at
 *     010ae4a. Not counted: the copy-in of the local shard (1/dp of the
 *     layer) and the gradient divides (AVG reduction in later torch).
 *   - FSDP2's root unit [source]: fully_shard(model) after the layers'
 *     (04133643 torchtitan/parallelisms/parallelize_llama.py L226-239;
 *     v0.1.0 llama3/infra/parallelize.py L344-366) holds the embedding,
 *     the final norm and the output layer: gathered and copied out
 *     before the first forward compute, kept unsharded through backward
 *     and reduce-scattered in the root's final callback, after the last
 *     layer's (pytorch/pytorch 005da465 torch/distributed/_composable/
 *     fsdp/_fsdp_state.py _lazy_init, _root_post_backward_final_callback;
 *     the schedule: sim/build_transformer_step.c). Not modelled: the
 *     last layer kept unsharded after forward (reshard_after_forward
 *     False for it, parallelize_llama.py L231-232), gathered once less. */
#ifndef DDLSIM_STACK_EAGER_H
#define DDLSIM_STACK_EAGER_H

#include "stack-private.h"

/* torch's loss_parallel (torchtitan with TP: train.py's loss under
 * loss_parallel(), the vocabulary-sharded logits), torch
 * distributed/tensor/parallel/loss.py: _log_softmax (L128, after
 * torch._decomp's) holds the fp32 input, `shifted` and exp(shifted) at
 * once beside the 16-bit logits (2 + 4 + 4 + 4 = 14 B per logit), and
 * _nll_loss_and_log_softmax_backward (L346) the saved result, zeros_like
 * grad_input, (grad_input + exp(x)) and its product with grad_output
 * (4 x 4 = 16): 16 at the loss's peak. */
#define TORCH_LOSS_PARALLEL_PEAK_BPL 16
/* torchtitan's Llama (the torchtitan block above), shared by the v0.1.0
 * row and the row of the performance table's commit, which differ in
 * the optimizer only. */
#define TORCHTITAN_PIECES \
	.rmsnorm = FWD_BWD(36, 90, 8, 10), .rmsnorm_extra_Bpe = EAGER_RMSNORM_EXTRA_BPE, \
	TORCHTITAN_PIECES_BUT_THE_NORM
/* torchtitan's Llama but its RMSNorm, for the rows with another norm. */
#define TORCHTITAN_PIECES_BUT_THE_NORM \
	.layernorm = ATEN_LAYERNORM, \
	.rope = FWD_BWD(20, 20, 6, 6), .swiglu = EAGER_SWIGLU, .gelu = TE_GELU, \
	.residual = EAGER_RESIDUAL, EAGER_SPLIT_PROJECTIONS, \
	.loss = FWD_BWD(14, 18, 2, 2), .loss_peak_Bpl = TORCH_CE_FP32_PEAK_BPL, \
	.eager_swiglu = true, TORCHTITAN_FRAME
/* What every torchtitan row shares whatever runs its kernels (eager or
 * compiled, stack_compile.h): repeat_kv's copies, loss_parallel's peak
 * under TP, torch's CP ring, expandable segments, the fp32 reduce cast,
 * FSDP2's copies, SDPA's flash kernel, PyTorch's host issue time. */
#define TORCHTITAN_FRAME \
	.repeat_kv = true, .loss_peak_tp_Bpl = TORCH_LOSS_PARALLEL_PEAK_BPL, .cp_torch_ring = true, \
	.expandable_segments = true, \
	.main_grad_Bpp = 6, .main_grad_kernels = 1, .fsdp2_copies = true, \
	.attn_ampere = ATTN_BE_FA2, .attn_hopper = ATTN_BE_FA2, \
	.host_issue_us = TORCH_HOST_ISSUE

#define STACK_HF_EAGER \
	{ "hf-eager", "Hugging Face transformers eager model (SDPA attention, no compile)", \
	  HF_EAGER_PIECES, EAGER_SPLIT_PROJECTIONS, \
	  .loss = EAGER_LOSS, .repeat_kv = true, .loss_peak_Bpl = TORCH_CE_FP32_PEAK_BPL, \
	  .main_grad_Bpp = 6, .main_grad_kernels = 1, \
	  .optimizer_Bpp = TORCH_FOREACH_ADAMW_CLIP, .optimizer_kernels = 10, \
	  .attn_ampere = ATTN_BE_FA2, .attn_hopper = ATTN_BE_FA2, \
	  .host_issue_us = TORCH_HOST_ISSUE, \
	  .source = "huggingface/transformers 26a9443 (4.45.0.dev0) " \
		    "src/transformers/models/llama/modeling_llama.py L111-125, L246-276, L309, " \
		    "L745-751, L1208-1222" }

#define STACK_TORCHTITAN \
	{ "torchtitan", "TorchTitan 0.1 Llama (eager, torch.compile off)", \
	  TORCHTITAN_PIECES, \
	  .optimizer_Bpp = TORCH_FUSED_ADAM_CLIP, .optimizer_kernels = 4, \
	  .source = "pytorch/torchtitan v0.1.0 (f7084fc) torchtitan/models/llama3/model/model.py " \
		    "L69-95, L140-145, L173, L232-237, L276-277; components/loss.py L18-22; " \
		    "config_manager.py L139, L210, L229, L235; models/attention.py L183-214; " \
		    "components/optimizer.py L276-287; torch/csrc/autograd/input_buffer.cpp" }

#define STACK_TORCHTITAN_04133643 \
	{ "torchtitan-04133643", "TorchTitan of April 2024 (04133643, its performance table): as torchtitan, foreach AdamW", \
	  TORCHTITAN_PIECES, \
	  .optimizer_Bpp = TORCH_FOREACH_ADAMW_CLIP, .optimizer_kernels = 10, \
	  .source = "pytorch/torchtitan 04133643 train.py L96-98 (AdamW foreach=True), L296-298 " \
		    "(clip_grad_norm_ foreach=True), L163-164; torchtitan/models/llama/model.py " \
		    "L105-106, L156-160, L187, L243-248, L439; torchtitan/models/norms.py L90-95; " \
		    "other pieces as torchtitan v0.1.0" }

/* The performance table's commit with the norm its 64-A100 presets set,
 * norm_type "fused_rmsnorm" (04133643 train_configs/llama2_13b.toml L21,
 * "a preset for 64 A100 GPUs"): torchtitan/models/norms.py L120-301, a
 * Triton RMSNorm, forward read x write y and each row's rstd (4 B per
 * element, one kernel), backward read x and dy write dx (6 B) and the
 * weight gradient's per-SM partial sums summed by a second kernel
 * (_dw.sum(0), N x SMs: not per element); it saves x, the weight and
 * rstd (ctx.save_for_backward), no fp32 copy: rmsnorm_extra 0. */
#define STACK_TORCHTITAN_04133643_FUSED_NORM \
	{ "torchtitan-04133643-fused-norm", "TorchTitan of April 2024 (04133643) with its presets' " \
	  "fused_rmsnorm (a Triton RMSNorm)", \
	  .rmsnorm = FWD_BWD(4, 6, 1, 2), .rmsnorm_extra_Bpe = 0, TORCHTITAN_PIECES_BUT_THE_NORM, \
	  .optimizer_Bpp = TORCH_FOREACH_ADAMW_CLIP, .optimizer_kernels = 10, \
	  .source = "pytorch/torchtitan 04133643 torchtitan/models/norms.py L120-301 (fused_rmsnorm), " \
		    "train_configs/llama2_13b.toml L21; the rest as torchtitan-04133643" }

#endif
