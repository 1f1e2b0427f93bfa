/* stack_llm_foundry.h: MosaicML llm-foundry's MPT stacks, rows of
 * stack_table (stack.h).
 *
 * llm-foundry (v0.10.0) and llm-foundry-triton (the code behind the 2023
 * MPT benchmark table), with the source of every count. Included by
 * stack.c alone, which lists the rows in stack_table; the eager pieces
 * are hf-eager's (stack-private.h HF_EAGER_PIECES, cited in
 * stack_eager.h).
 *
 * llm-foundry: MosaicML llm-foundry MPT, v0.10.0 (commit 742f340).
 *   - LayerNorm [source]: configuration_mpt.py L46 low_precision_layernorm,
 *     layers/norm.py L33-68: one F.layer_norm kernel in bf16, 4 B/el;
 *     [derived] backward: ATen's LayerNorm backward (dy, x -> dx) and the
 *     column reduction for dgamma, dbeta: 10 B/el in 2 kernels.
 *   - ALiBi [source]: layers/attention.py L356-376: alibi_slopes passed to
 *     flash-attn, no op of its own; attn_impl flash (mpt-7b.yaml L23-24):
 *     FlashAttention-2.
 *   - GELU [source]: layers/ffn.py L50-53, L167-168: F.gelu, one kernel.
 *   - loss [source]: modeling_mpt.py L1281, L1315-1323 fused_crossentropy =
 *     flash-attn's Triton cross-entropy (flash_attn/ops/triton/
 *     cross_entropy.py at v2.6.3 L24-87: reads each logit once; L96-138:
 *     reads logits, writes dlogits): 2 + 4 B/logit.
 *   - copies around flash [source]: layers/attention.py L277-293
 *     (bert_padding.index_first_axis gathers q, k, v into (nnz, h, d):
 *     r2 w2 each; flash_attn/bert_padding.py at v2.6.3 L8-17) and
 *     L383-384 (pad_input on the output: zero-fill w2 and scatter r2 w2),
 *     made even when nothing is padded: (3 x 4 + 6) / 4 = 4.5 B per
 *     element of q, k, v, o forward; [derived] backward the scatters of
 *     dq, dk, dv (zero-fill and copy, 6 each) and the gather of dO (4):
 *     (3 x 6 + 4) / 4 = 5.5 B.
 *   - residual adds as hf-eager; FSDP's fp32 reduce as hf-eager, where a
 *     scenario reduces in fp32; the optimizer (Composer's DecoupledAdamW,
 *     not read at this version) priced as torch's foreach AdamW.
 *
 * llm-foundry-triton: the stack of llm-foundry's published MPT benchmark
 *   table (scripts/train/benchmarking/README.md at 061f2c7c, October 2023):
 *   the pieces of llm-foundry above except the attention.
 *   - attention [source]: submit_benchmarks.py L142 (--attn_impl default
 *     'triton'), run on mosaicml/pytorch:2.0.1_cu118 (sweep.sh L5); the A100
 *     40GB rows, kept from May 2023, ran the same kernel under torch 1.13.1
 *     (layers/attention.py L317-342). layers/attention.py L398-420 at
 *     061f2c7c: q, k, v rearranged as views, flash_attn_func of
 *     flash_attn_triton.py (Tri Dao's FlashAttention in Triton, copied from
 *     flash-attention eff9fe6b), ALiBi as its bias argument: no unpad or
 *     pad copies (attn_copy 0). Its header: "Triton forward is generally
 *     faster than CUDA forward, while Triton backward is generally slower
 *     than CUDA backward. Overall Triton forward + backward is slightly
 *     slower than CUDA forward + backward": priced as FlashAttention-1's
 *     CUDA kernel (fa1; the GPU files cite its measured rate).
 *   - loss [source]: modeling_mpt.py L723-729 at 061f2c7c, flash-attn's
 *     CrossEntropyLoss (the xentropy CUDA extension): the bytes of the
 *     Triton one above, 2 + 4 B/logit.
 *   - GEMMs [source]: torch's cuBLAS of the image, CUDA 11.8's cuBLAS
 *     11.11.3.6 (the cuda-11.8.0 label of NVIDIA's libcublas conda
 *     package; the A100 40GB rows' torch 1.13.1: a CUDA 11 build): gemm_lib
 *     cublas11, which gpus/h100-sxm5-80gb.json prices from a measurement
 *     of 11.11.3.6 on H100; the A100 presets measure none (cuBLAS 11 was
 *     Ampere's mature library): gemm_max there.
 *   - the code that ran [source]: submit_benchmarks.py L397-408 at
 *     061f2c7c installs crinard/llm-foundry branch add_attns (985920032,
 *     2023-08-31), whose setup.py pins mosaicml (Composer) >=0.15.0,<0.16
 *     (L50), torch >=1.13.1,<=2.0.1 (L54), flash-attn 1.0.3.post0 and its
 *     xentropy extension (L87-90). Line numbers below: add_attns (aa),
 *     Composer v0.15.1 (co).
 *   - gradient reduction [source]: submit_benchmarks.py L269 (at
 *     061f2c7c) mod_parameters defaults fsdp_config_mixed_precision
 *     'DEFAULT' and its caller (L454-474) never passes one; co
 *     trainer/mosaic_fsdp.py L86-88: DEFAULT sets param_dtype and
 *     buffer_dtype to bf16 and leaves reduce_dtype None, which torch 2.0's
 *     FSDP takes as param_dtype (MixedPrecision; pytorch PR #90660): the
 *     gradients are reduced in bf16 (the PURE rows, L89-92, too), so the
 *     fp32 cast of main_grad_Bpp does not run (the scenarios'
 *     grad_reduce_dtype bf16).
 *   - FSDP1's flat parameter [source]: co trainer/dist_strategy.py L144
 *     (use_orig_params True); torch 2.0 torch/distributed/fsdp/
 *     flat_param.py ("We use `Tensor` views in the forward so that they
 *     are tracked by autograd", _use_unsharded_views; read at an unpinned
 *     2.0-era commit through the code index): the weights are torch.split views of the
 *     unit's flat parameter, so autograd's SplitWithSizesBackward
 *     (at::cat) writes the flat gradient from the weights' gradients, r2
 *     w2 per 16-bit parameter, every micro-batch, on the compute stream
 *     (fsdp1_flat; biases and norm weights, 0.1 % of MPT's, not counted);
 *     _runtime_utils.py _post_backward_hook calls the default
 *     reduce_scatter_hook (algorithms/_comm_hooks/default_hooks.py:
 *     grad.div_(gradient_predivide_factor) on the whole unsharded
 *     gradient, r2 w2, the reduce-scatter, output.div_(postdivide) on the
 *     shard, r2 w2 of P/d; DefaultState's predivide factor is above 1 for
 *     any d > 1, the postdivide factor d / predivide for d > 2), on the
 *     post-backward stream. Not counted: the shard's accumulation across
 *     micro-batches (_saved_grad_shard +=, r4 w2 of P/d).
 *   - biases and positions [source]: aa configuration_mpt.py L20 ('alibi':
 *     False), L53 (learned_pos_emb True), L58 (no_bias False), none set by
 *     the 061f2c7c yamls (models/zoo/llm-foundry/: the README's NumParams
 *     to the digit): the Linear biases ride in addmm's cuBLASLt epilogue
 *     forward, but backward each Linear's bias gradient is a reduction
 *     of its output gradient over the tokens (derivatives.yaml addmm:
 *     sum_to of grad), r2 per output element, one kernel (linear_bias);
 *     modeling_mpt.py L400-401 x = tok_emb + pos_emb: r2 r2 w2 per T x h
 *     element, and backward the position gradient summed over the
 *     micro-batch, r2 (pos_add).
 *   - QKV split [source]: aa layers/attention.py L625-632 qkv.split([d,
 *     kv, kv], dim=2): views forward; backward SplitWithSizesBackward
 *     concatenates dq, dk, dv (the Triton kernel's fresh tensors), r2 w2
 *     per element of the QKV output (qkv_split: 12 B per element of
 *     T x d for MHA).
 *   - train metrics [source]: aa modeling_mpt.py L693 (train_metrics
 *     LanguageCrossEntropy, LanguagePerplexity); co trainer.py L2397-2400
 *     updates them after every micro-batch's backward, under the autocast
 *     context (L2089-2100); metrics/nlp.py L90 nn.CrossEntropyLoss(
 *     reduction='sum'), L111 on the logits: autocast runs cross_entropy
 *     in fp32, .to(fp32) r2 w4, log_softmax r4 w4 (nll_loss reads one
 *     value per row): 14 B per logit each, 28 in 4 kernels (the small
 *     nll and sum: no launches counted).
 *   - optimizer [source]: co optim/decoupled_weight_decay.py L245-256,
 *     DecoupledAdamW's loop over the parameters, each step
 *     state_steps[i].item(): a host synchronisation per parameter tensor
 *     (about 200 a rank for MPT-7B). Not priced: the step is priced on
 *     the GPU alone (sim/build_transformer_stage.c optimizer_time), with
 *     no host issue or synchronisation model to carry it. */
#ifndef DDLSIM_STACK_LLM_FOUNDRY_H
#define DDLSIM_STACK_LLM_FOUNDRY_H

#include "stack-private.h"

/* llm-foundry's MPT (both rows): the eager pieces, flash-attn's fused
 * cross-entropy, fp32 main gradients from FSDP's reduce, foreach AdamW. */
#define LLM_FOUNDRY_PIECES \
	HF_EAGER_PIECES, .loss = FWD_BWD(2, 4, 1, 1), \
	.main_grad_Bpp = 6, .main_grad_kernels = 1, \
	.optimizer_Bpp = TORCH_FOREACH_ADAMW_CLIP, .optimizer_kernels = 10, \
	.host_issue_us = TORCH_HOST_ISSUE

#define STACK_LLM_FOUNDRY \
	{ "llm-foundry", "MosaicML llm-foundry MPT (low-precision LayerNorm, ALiBi, FSDP)", \
	  LLM_FOUNDRY_PIECES, .attn_copy = FWD_BWD(4.5, 5.5, 4, 4), \
	  .attn_ampere = ATTN_BE_FA2, .attn_hopper = ATTN_BE_FA2, \
	  .source = "mosaicml/llm-foundry v0.10.0 (742f340) llmfoundry/models/mpt/configuration_mpt.py " \
		    "L46, layers/norm.py L33-68, layers/attention.py L356-376, layers/ffn.py L50-53, " \
		    "modeling_mpt.py L1281-1323; eager pieces as hf-eager (the benchmark table is at " \
		    "061f2c7c)" }

#define STACK_LLM_FOUNDRY_TRITON \
	{ "llm-foundry-triton", "MosaicML llm-foundry MPT benchmark table of 2023 (Triton FlashAttention)", \
	  LLM_FOUNDRY_PIECES, \
	  .fsdp1_flat = true, .linear_bias = FWD_BWD(0, 2, 0, 1), \
	  .qkv_split = FWD_BWD(0, 4, 0, 1), .pos_add = FWD_BWD(6, 2, 1, 1), \
	  .train_metrics = FWD_BWD(28, 0, 4, 0), \
	  .attn_ampere = ATTN_BE_FA1, .attn_hopper = ATTN_BE_FA1, \
	  .gemm_lib = GEMM_LIB_CUBLAS11, \
	  .source = "mosaicml/llm-foundry 061f2c7c scripts/train/benchmarking/submit_benchmarks.py " \
		    "L142, sweep.sh L5; llmfoundry/models/layers/attention.py L300-420, " \
		    "flash_attn_triton.py header; modeling_mpt.py L723-729; GEMMs on cuBLAS 11 " \
		    "(mosaicml/pytorch:2.0.1_cu118: cuBLAS 11.11.3.6; the A100 40GB rows' torch " \
		    "1.13.1: a CUDA 11 build); crinard/llm-foundry add_attns (985920032) setup.py L50-90, " \
		    "configuration_mpt.py L20, L53, L58, modeling_mpt.py L400-401, L693, " \
		    "layers/attention.py L625-632; mosaicml/composer v0.15.1 trainer/mosaic_fsdp.py L86-88, " \
		    "dist_strategy.py L144, trainer.py L2397-2400, metrics/nlp.py L90-111; torch 2.0 FSDP " \
		    "flat_param.py, default_hooks.py; other pieces as llm-foundry" }

#endif
