/* stack_compile.h: torchtitan's Llama under torch.compile, a row of
 * stack_table (stack.h).
 *
 * torchtitan v0.1.0 (pytorch/torchtitan f7084fc) with training.compile:
 * each TransformerBlock compiled whole (models/llama3/infra/
 * parallelize.py L301-310, apply_compile: torch.compile(transformer_block,
 * fullgraph=True), after the activation-checkpoint wrapping and before
 * FSDP, L76-80), and the loss function too (components/loss.py
 * build_cross_entropy_loss: torch.compile(cross_entropy_loss) when
 * training.compile). Inductor, the default backend, lowers a block's
 * graph between its GEMMs and the attention kernel (both left to cuBLAS
 * and SDPA) into Triton kernels, each of which reads its inputs once and
 * writes its outputs once, the intermediates kept in registers. Which ops
 * fuse is read from the kernel names of public Inductor caches of
 * compiled decoder blocks in training (ByteDance-Seed/VeOmni pull request
 * 881, 2026-07-10, its "compile_default" fusion analysis:
 * triton_per/red_fused__to_copy_add_mean_mul_pow_rsqrt (RMSNorm, with the
 * residual add before it), triton_red_fused__to_copy_add_div_mul_pow_sum
 * (RMSNorm's backward with the residual gradient's add),
 * triton_poi_fused_mul_silu (SwiGLU), triton_poi_fused_add_fill_mul_
 * sigmoid_silu_sub (its backward), triton_poi_fused_add (a residual add),
 * triton_poi_fused_clone (copies)). The byte counts are [derived] from
 * those groups at 16-bit activations:
 *   - RMSNorm: forward one persistent reduction, read x w y: 4 B/el;
 *     backward dx (read dy, x; write dx) and the weight gradient's column
 *     reduction re-reading dy and x: 10 B/el in 2 kernels (ATen
 *     LayerNorm's shape, stack-private.h ATEN_LAYERNORM).
 *   - RoPE: xq.float(), the complex product and type_as in one pointwise
 *     kernel per q and k: 4 B/el forward and backward (TE's count).
 *   - SwiGLU: silu(w1 x) * w3 x, read 4 w 2: 6 B per output element, one
 *     kernel; backward read dy, w1 x, w3 x, write both gradients: 10.
 *   - residual: of a block's two adds, the first (h = x + attention) is
 *     fused into ffn_norm's kernel, which reads the attention output and
 *     writes h beside the normed tensor (4 B/el more than the norm alone),
 *     the second (out = h + mlp) is a kernel of its own at the graph's end
 *     (read 4 w 2): 5 B/el per add on average, a launch counted for each
 *     (one too many a layer, some microseconds); backward, the residual
 *     gradient's add is read inside the norm's dx kernel: 2 B/el, no
 *     kernel.
 *   - the input gradients of the separate wq, wk, wv (and w1, w3)
 *     projections: autograd's adds (eager, stack-private.h
 *     AUTOGRAD_GRAD_SUM: 6 B/el a sum, a kernel each) become extra
 *     operands of the norm's dx kernel: 2 B/el a sum, no kernel.
 *   - loss: F.cross_entropy(pred.float()) compiled: forward a looped
 *     reduction over each row of logits read twice (the row maximum, then
 *     the sum of exponentials; a 128k row does not fit one block): 4 B per
 *     logit; backward one pointwise kernel, read the 16-bit logits and
 *     each row's log-sum-exp, write the 16-bit gradient (the cast's
 *     backward fused): 4 B per logit.
 * Memory: what the partitioner saves. Inductor partitions the joint graph
 * with min_cut_rematerialization_partition (torch/_functorch/
 * partitioners.py), whose defaults (torch/_functorch/config.py, PyTorch
 * 2.6: ban_recompute_materialized_backward, ban_recompute_reductions,
 * ban_recompute_not_in_allowlist all True; read in public copies of the
 * file) forbid recomputing a value that a non-fusible backward op reads:
 * the norms' outputs and SwiGLU's product feed weight-gradient GEMMs, so
 * they are saved as Transformer Engine saves them; only the fused
 * kernels' fp32 intermediates are not (rmsnorm_extra_Bpe 0: the eager
 * norm's fp32 copy and normalised tensor are gone), nor silu(w1 x),
 * which only fusible backward ops read (eager_swiglu false: recomputed
 * inside SwiGLU's fused backward). The compiled loss
 * keeps the 16-bit logits it reads and writes a 16-bit gradient: 4 B per
 * logit at its backward (2 + 2) against the eager fp32 path's 12. With
 * tensor parallelism torchtitan's loss is loss_parallel on DTensors, whose
 * compiled form was not read: the eager figure stands.
 * Not modelled: the final norm before the output layer stays eager
 * (outside the blocks) but is priced as compiled, one norm of 2 L + 1;
 * the host's issue time per kernel is eager PyTorch's (no citable figure
 * for Inductor's wrapper was found), over fewer kernels. Everything else
 * (FSDP2's copies, repeat_kv's copies, SDPA flash, fused AdamW) is the
 * torchtitan v0.1.0 row's. */
#ifndef DDLSIM_STACK_COMPILE_H
#define DDLSIM_STACK_COMPILE_H

#include "stack-private.h"
#include "stack_eager.h"    /* TORCHTITAN_FRAME */

/* The compiled loss's bytes per logit alive at its backward [derived]:
 * the 16-bit logits it saved and the 16-bit gradient it writes. */
#define INDUCTOR_CE_PEAK_BPL 4

#define STACK_TORCHTITAN_COMPILE \
	{ "torchtitan-compile", "TorchTitan 0.1 Llama with training.compile (each block and the loss " \
	  "compiled by Inductor)", \
	  .rmsnorm = FWD_BWD(4, 10, 1, 2), .layernorm = ATEN_LAYERNORM, \
	  .rope = FWD_BWD(4, 4, 2, 2), .swiglu = FWD_BWD(6, 10, 1, 1), .gelu = TE_GELU, \
	  .residual = FWD_BWD(5, 2, 1, 0), \
	  .qkv_separate = true, .qkv_separate_gated = true, .mlp_separate = true, \
	  .grad_sum = FWD_BWD(0, 2, 0, 0), \
	  .loss = FWD_BWD(4, 4, 1, 1), .loss_peak_Bpl = INDUCTOR_CE_PEAK_BPL, \
	  .rmsnorm_extra_Bpe = 0, TORCHTITAN_FRAME, \
	  .optimizer_Bpp = TORCH_FUSED_ADAM_CLIP, .optimizer_kernels = 4, \
	  .source = "pytorch/torchtitan v0.1.0 (f7084fc) models/llama3/infra/parallelize.py L76-80, " \
		    "L301-310; components/loss.py build_cross_entropy_loss; the fusions: " \
		    "ByteDance-Seed/VeOmni pull request 881 (Inductor kernel names); " \
		    "torch/_functorch/partitioners.py, config.py (PyTorch 2.6)" }

#endif
