/* attention: the attention core (softmax(QK^T) V) as the frameworks run it.
 *
 *   unfused   Megatron-LM of 2021: QK^T and PV as batched GEMMs, the s x s
 *             scores written to HBM, a (fused, masked) softmax and a
 *             dropout pass over them; causal masking does not skip work.
 *   flash     FlashAttention-2/3 and cuDNN's fused SDPA (what Megatron-Core,
 *             NeMo, TorchTitan and DeepSpeed run today): one kernel per
 *             pass, scores never leave on-chip memory, causal masking
 *             skips the tiles above the diagonal.
 *
 * Hardware FLOPs (what the kernel executes), per sequence of s tokens and
 * per head of dimension d, with c = 1/2 for causal flash (the convention of
 * the FlashAttention benchmarks) and c = 1 otherwise:
 *   unfused   forward 4 s^2 d            backward 8 s^2 d
 *   flash     forward 4 s^2 d c          backward 10 s^2 d c
 * Flash's backward recomputes the forward's QK^T (2 s^2 d) besides the four
 * gradient products dV = P^T dO, dP = dO V^T, dQ = dS K, dK = dS^T Q
 * (Dao 2023, FlashAttention-2, section 4: backward = 2.5 x forward FLOPs).
 * Model FLOPs keep Megatron's convention whatever the kernel does: full
 * s x s, forward 4 s^2 d, three times that for training (model.h).
 *
 * Flash's time comes from its own efficiency, a fraction of the GPU's
 * 16-bit tensor peak (gpu.h flash_fwd_max / flash_bwd_max at d = 128 and
 * long sequences), scaled by
 *   head dim   f(d) = (d / (d + 56)) / (128 / (128 + 56))
 *   length     g(s') = s' / (s' + K),  s' = s c (keys a query row sees)
 * and capped at 0.95. Both shapes come from FlashAttention-3's published
 * H100 forward figures: 430 TFLOP/s at s = 512 to 621 at s = 16k for d =
 * 128 (pytorch/benchmark PR #2391, B S = 16k, 16 heads) fit g with K = 239
 * tokens; with f, d = 256 then gives 0.75 of 989 TFLOP/s, the paper's
 * "up to 740 TFLOP/s (75 % utilization)" (Shah et al. 2024, abstract).
 * K is the GPU's flash_seq_half where its preset measured one (gpu.h):
 * cuDNN's forward on a GB200 saturates later, K = 632 (gpus/b200-gb200.json).
 *
 * Memory: unfused attention stores the s x s softmax output and dropout
 * mask (Korthikanti's 5 a s / h term); flash stores only its output and
 * the fp32 log-sum-exp per row (4 bytes per head and token), and
 * regenerates dropout from the RNG state. */
#ifndef DDLSIM_ATTENTION_H
#define DDLSIM_ATTENTION_H

#include <stdbool.h>

#include "gpu.h"

enum attention { ATTN_UNFUSED, ATTN_FLASH, ATTN_N };  /* zero = unfused, the historical default */

/* "unfused", "flash", NULL: for loaders. */
extern const char *const attention_names[ATTN_N + 1];

/* Which fused kernel runs the flash core. Stacks differ: Transformer
 * Engine prefers cuDNN's fused attention on Hopper and FlashAttention-2
 * on Ampere; PyTorch's SDPA runs its FlashAttention-2 backend; the
 * FlashAttention-3 package runs on Hopper only; stacks of 2023 ran
 * FlashAttention-1 or its Triton port (the stack_*.h headers cite each).
 * ATTN_BE_BEST is the GPU's flash_fwd_max / flash_bwd_max: the best
 * kernel measured on it. A backend the GPU file gives no figure for is
 * priced as ATTN_BE_BEST. */
enum attn_backend { ATTN_BE_BEST, ATTN_BE_FA2, ATTN_BE_FA3, ATTN_BE_CUDNN, ATTN_BE_FA1, ATTN_BE_N };

/* "best", "fa2", "fa3", "cudnn", "fa1", NULL. fa1 is FlashAttention-1
 * (2022: CUDA, and the Triton port of flash_attn_triton.py, which its
 * author puts at the CUDA kernel's forward + backward speed), the kernel
 * of the 2023 stacks that predate FlashAttention-2. */
extern const char *const attn_backend_names[ATTN_BE_N + 1];

/* What a transformer runs on g when the scenario does not say: flash where
 * the topology describes a flash kernel (Ampere and later), else unfused. */
enum attention attention_default(const struct gpu_spec *g);

/* Hardware FLOPs of the attention core of bh heads x sequences of s tokens
 * and head dim d, forward (bwd = false) or backward (formulas above). */
double attention_flops(enum attention a, bool causal, bool bwd, double bh,
		       double s, double d);

/* The same with query/key head dim dqk and value head dim dv (multi-head
 * latent attention, model.h: dqk = nope + rope, dv = v_head_dim): QK^T
 * costs 2 s^2 dqk and PV 2 s^2 dv per head, so the forward is
 * 2 s^2 (dqk + dv) c and flash's backward (QK^T recomputed, dV, dP, dQ,
 * dK) 2 s^2 (3 dqk + 2 dv) c; unfused: forward 2 s^2 (dqk + dv), backward
 * twice that. dqk = dv = d gives the formulas above. */
double attention_flops_qkv(enum attention a, bool causal, bool bwd, double bh,
			   double s, double dqk, double dv);

/* Sliding-window attention (model.h sliding_window): a causal flash
 * kernel given a window w (FlashAttention-2/3's window_size = (w - 1, 0),
 * cuDNN's sliding_window_length) skips the key tiles outside the band, so
 * a sequence of s tokens holds s w - w^2 / 2 query-key pairs where the
 * full causal kernel holds s^2 / 2 (the FLOPs convention above; w >= s is
 * the full kernel). attention_window_ratio() is the ratio of the two, by
 * which the kernel's FLOPs and bytes-free time scale; attention_window_seq()
 * the causal length with the same keys per query row, 2 (s w - w^2/2) / s,
 * at which its efficiency is taken (the efficiency follows the keys a row
 * sees, s' above). Eager attention builds the whole masked s x s score
 * matrix: no window applies to it. */
double attention_window_ratio(double s, double w);
double attention_window_seq(double s, double w);

/* Fraction of the 16-bit peak the flash kernel of backend be reaches on g
 * (formulas above); 0 if g has no flash kernel. */
double attention_flash_eff(const struct gpu_spec *g, enum attn_backend be, bool bwd,
			   double s, double d, bool causal);

/* How much longer a flash kernel of bh heads x s tokens runs on sms SMs
 * than its efficiency says, for the shape of its grid. The kernel runs one
 * CTA per 128 rows of queries (forward) or of keys (backward) per head: x
 * = bh ceil(s / 128) / sms CTAs per SM. A causal kernel's CTAs differ in
 * work (a block of queries sees every key block before it), so its last
 * CTAs hold some SMs while the others idle, for about one CTA's time:
 * time x + 1 for work x (the list-scheduling bound, work / SMs + the
 * longest job). Equal CTAs (not causal) run in ceil(x) waves. The
 * efficiencies above were measured on grids of 2048 CTAs (the
 * FlashAttention papers' 16k tokens x 16 heads of 128), whose tail they
 * hold, so the factor is relative to that grid: below 1 for larger grids.
 * Measured on an H200 with cuDNN 9.19's SDPA (calib/profiles/h200-sxm5-
 * 141gb.json, 60 causal points, bh 4-128, s 2-8k; docs/kernels.md
 * section 15): measured over the unfactored price follows (1 + 1/x) /
 * (1 + 1/15.5) within 4 % from x = 1.9 to 62 (1.42 at x = 1.9, 0.93 at
 * x = 62); below one wave (x < 1) it overstates (1.91 against 1.65 at
 * x = 0.97): a few busy SMs run at a higher clock under the power cap. */
double attention_grid_factor(long sms, bool causal, double bh, double s);

/* Dropout on the attention probabilities (model.h dropout) inside a
 * fused kernel: the kernel draws a Philox random number per score element
 * in registers (FlashAttention-2 csrc/flash_attn/src/dropout.h, the
 * forward's apply_dropout and the backward's regeneration of the same
 * mask; cuDNN's SDPA graph takes a seed and an offset), so the kernel
 * runs longer; no bytes move. attention_dropout_ratio() is its time with
 * dropout over its time without, measured on the same shapes and GPU
 * (validation/kernels/attn-dropout.csv, DROPOUT.md; docs/kernels.md
 * section 18):
 *   fa1    A100: forward 1.233, backward 1.230: FlashAttention-1 with
 *          dropout 0.1 over without, the medians over s = 1k..64k of
 *          Dao et al. 2022 (arXiv 2205.14135v2) appendix E.6, Tables 15
 *          and 16 over Tables 18 and 19 (fp16, batch 16, 8 heads, d 64);
 *          the other GPUs run the same CUDA kernels (no per-arch code):
 *          the same ratio.
 *   fa2    1.047 forward and backward: FlashAttention 2.7.4 (varlen)
 *          on a GB200, forward + backward 0.695 -> 0.728 ms at p 0.1,
 *          TE 2.17 (NVIDIA/TransformerEngine PR #3313, comment of
 *          2026-08-05); only the pair's sum was measured, so one ratio
 *          for both. FA2 has one kernel code for every GPU from sm_80
 *          (csrc/flash_attn: mma.sync, no Hopper or Blackwell path): the
 *          same ratio on all.
 *   cudnn  compute capability 9.x: 1.034 forward and backward: TE
 *          DotProductAttention on the fused (cuDNN) backend, sbhd, bf16,
 *          4 x 1024 tokens, 16 heads, d 128, forward + backward 0.594 ->
 *          0.614 ms at p 0.1 on an H200, TE 2.15 (NVIDIA/TransformerEngine
 *          issue #3312); from 10: 1.094, 0.480 -> 0.525 ms on a B300,
 *          TE 2.14.1, same issue. Below 9 not measured: taken as 9.x's
 *          (cuDNN's graph with the Philox node, the same per-element
 *          work).
 *   fa3    FlashAttention-3 has no dropout (Dao-AILab/flash-attention
 *          issue #1251; hopper/flash_attn_interface.py takes no
 *          dropout_p): attention_backend_dropout() runs FA2 instead.
 *   best   the GPU's best measured kernel, priced with the ratio of the
 *          kernel a stack runs there with dropout: cuDNN from 9 on (TE's
 *          Hopper preference, which dropout does not change), FA2 below.
 * The packed (thd) layout's route to cuDNN's composite engine with
 * dropout (5x on a B300, same issue) is not modelled: the stacks' cores
 * here are batched (sbhd/bshd). */
double attention_dropout_ratio(enum attn_backend be, double cc, bool bwd);

/* The backend that runs the core when dropout is on: FA3 has none, and
 * Transformer Engine (v1.11 c27ee60, pytorch/attention.py L440-444,
 * "Filter: Dropout": "Disabling FlashAttention 3 for dropout") falls back
 * to FlashAttention-2; every other backend runs dropout itself (TE 1.8
 * 3ec998e9 common/fused_attn/fused_attn.cpp L122-163: the arbitrary-
 * seqlen cuDNN backend is chosen whatever the dropout). */
enum attn_backend attention_backend_dropout(enum attn_backend be, bool dropout);

/* HBM bytes of the two memory-bound kernels FlashAttention-3's backward
 * runs around its main kernel (Dao-AILab/flash-attention hopper/, launched
 * by run_flash_bwd in flash_bwd_launch_template.h @000786d2), for bh heads
 * of s query rows, head dim d, elements of elem_B bytes (dQaccum is fp32):
 *   preprocess (flash_bwd_preprocess_kernel.h @13a724de, Clear_dQaccum
 *     true): reads O and dO (2 s d B), reads the LSE and writes dPsum =
 *     rowsum(dO . O) and LSE_log2 (3 x 4 s), zeroes dQaccum (4 s d);
 *   postprocess (flash_bwd_postprocess_kernel.h @0e9a6180,
 *     FlashAttnBwdPostprocessConvertdQ): reads dQaccum (4 s d), writes dQ
 *     (B s d);
 * bh (s (2 d B + 4 d + 12) + s d (4 + B)). With fewer K/V heads (GQA) the
 * template converts dK and dV from fp32 as well; not counted (an op does
 * not carry its K/V heads). cost_roofline.c prices them at mem_max with a
 * launch each, after the main kernel. */
double attention_fa3_bwd_aux_bytes(double bh, double s, double d, double elem_B);

#endif
