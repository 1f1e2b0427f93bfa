/* finetune: parameter-efficient fine-tuning (LoRA, QLoRA) of a transformer.
 *
 * LoRA (Hu et al. 2021, "LoRA: Low-Rank Adaptation of Large Language
 * Models", eq. 3: h = W0 x + (alpha / r) B A x) freezes every base weight
 * and trains, for each targeted linear layer of d_in inputs and d_out
 * outputs, two adapters: A (d_in x r) and B (r x d_out). What that
 * changes in a training step:
 *   - frozen weights have no gradient: a frozen linear's backward runs its
 *     data-gradient GEMM (the activations' gradient must flow to the
 *     layers below) but no weight-gradient GEMM, no accumulation into a
 *     main gradient, no optimizer state and no data-parallel reduction;
 *   - the embedding, the norms and the LM head are frozen too (PEFT's
 *     get_peft_model marks only the adapters trainable);
 *   - each adapter is two small GEMMs, forward x A then (x A) B, backward
 *     the data and weight gradients of both, with PEFT's forward
 *     (huggingface/peft v0.13.0, f0b066e, src/peft/tuners/lora/layer.py:584:
 *     `result = result + lora_B(lora_A(dropout(x))) * scaling`): a dropout
 *     of the input when dropout > 0 (layer.py:113, one nn.Dropout per
 *     adapter), the scaling (one element-wise multiply of the T x d_out
 *     output) and the add into the base output (a second one), and in
 *     backward the input's two gradients (through the base and through
 *     A) summed by autograd (one add of T x d_in);
 *   - activations are still stored for the backward through frozen layers
 *     (models/memory.h), plus each adapter's own: x A (T x r, B's input)
 *     and, with dropout, the dropped input and its one-byte mask;
 *   - adapters are trained in mixed precision as any weight: 16-bit
 *     weights, gradients in the reduce dtype, K bytes of optimizer state
 *     per parameter (precision.h).
 *
 * Targets use the Hugging Face module names of a Llama layer, the naming
 * of PEFT's target_modules and of the MLPerf reference
 * (mlcommons/training llama2_70b_lora, run_llama_70B_scrolls_r16.sh at
 * 00baefa: `--lora_target_modules "qkv_proj,o_proj"` on a fused-qkv
 * Llama):
 *   q_proj k_proj v_proj  h -> h, h -> kv, h -> kv (parts of the "qkv" GEMM)
 *   qkv_proj              h -> h + 2 kv, one adapter on the fused GEMM (the
 *                         MLPerf reference; NeMo's linear_qkv, target
 *                         "attention" with o_proj)
 *   o_proj                h -> h ("attn_out")
 *   gate_proj up_proj     h -> f each ("mlp_gate_up" of a SwiGLU model; a
 *                         GELU model's fc1 is up_proj, it has no gate_proj)
 *   down_proj             f -> h ("mlp_down")
 * with kv = kv_heads x head_dim and f the MLP's inner size.
 *
 * Tensor parallelism t: an adapter is split on the side its base layer is
 * split, its rank r never: on a column-parallel layer (q, k, v, qkv, gate,
 * up) A (d_in x r) is whole on every TP rank and B is r x d_out / t; on a
 * row-parallel one (o, down) A is d_in / t x r and B whole. The whole
 * halves are computed by every TP rank; the all-reduce of the r-wide x A
 * of a row-parallel adapter (T r elements, r / h of the layer's own TP
 * traffic) is not modelled.
 *
 * QLoRA (Dettmers et al. 2023) stores the frozen linear weights of the
 * transformer layers in 4-bit NormalFloat with blockwise absmax scales
 * (blocks of 64) that are themselves quantized to 8 bits (double
 * quantization: blocks of 256 with an fp32 absmax and an fp32 offset);
 * the embedding, the norms and the LM head stay 16-bit. bitsandbytes
 * dequantizes the whole weight to the compute dtype before each GEMM,
 * forward and backward (bitsandbytes 0.45.0, 64d382d,
 * bitsandbytes/autograd/_functions.py:462 MatMul4Bit.forward
 * `torch.nn.functional.linear(A, F.dequantize_4bit(B, quant_state)...)`,
 * :493 backward `torch.matmul(grad_output, F.dequantize_4bit(B, ...).t())`).
 * dequantize_4bit (bitsandbytes/functional.py:1352-1353, 1358) first
 * dequantizes the absmax (dequantize_blockwise: reads n / 64 uint8 codes
 * and n / 16384 fp32 second-level absmax, writes n / 64 fp32), adds the
 * offset in place (reads and writes n / 64 fp32), then runs the 4-bit
 * kernel (reads n / 2 bytes of codes and the n / 64 fp32 absmax, writes n
 * 16-bit values): per weight element
 *   stored      1/2 + 1/64 + 4/16384             = 0.515869140625 bytes
 *   dequantize  (1/64 + 4/16384 + 4/64) + 8/64 + (1/2 + 4/64 + 2)
 *                                                 = 2.765869140625 bytes
 * in three kernels (QLoRA's 4.127 bits per parameter: paper, section 3,
 * "Double Quantization"). */
#ifndef DDLSIM_FINETUNE_H
#define DDLSIM_FINETUNE_H

#include <stdbool.h>

#include "jload.h"
#include "model.h"

enum ft_method { FT_FULL, FT_LORA, FT_QLORA, FT_METHOD_N };

/* Storage of the frozen base weights: the training precision's 16-bit
 * weights (lora) or NF4 (qlora). */
enum ft_base { FT_BASE_BF16, FT_BASE_FP16, FT_BASE_NF4, FT_BASE_N };

enum ft_target {
	FT_Q, FT_K, FT_V, FT_QKV, FT_O, FT_GATE, FT_UP, FT_DOWN, FT_TARGET_N
};

extern const char *const ft_method_names[FT_METHOD_N + 1];
extern const char *const ft_base_names[FT_BASE_N + 1];
extern const char *const ft_target_names[FT_TARGET_N + 1];

/* training.finetune. A zeroed struct is full fine-tuning (no change). */
struct finetune {
	enum ft_method method;
	int rank;               /* r */
	double alpha;           /* scaling alpha / r: no cost of its own */
	double dropout;         /* adapter input dropout probability */
	unsigned targets;       /* bit 1 << enum ft_target */
	enum ft_base base;
	bool base_set;          /* base_dtype given */
};

/* Per weight element of the frozen linear weights in storage base. */
#define FT_NF4_STORED_BYTES (0.5 + 1.0 / 64 + 4.0 / 16384)
#define FT_NF4_DEQUANT_BYTES ((1.0 / 64 + 4.0 / 16384 + 4.0 / 64) + 8.0 / 64 + \
			      (0.5 + 4.0 / 64 + 2))
#define FT_NF4_DEQUANT_KERNELS 3

/* True when the base weights are frozen (lora, qlora). */
bool finetune_frozen(const struct finetune *f);

/* True when target is one of f's. */
bool finetune_targets(const struct finetune *f, enum ft_target target);

/* Target's d_in and d_out in model m (whole, no TP split) and whether its
 * base layer is row-parallel (o_proj, down_proj). */
void finetune_target_dims(const struct model *m, enum ft_target target, double *d_in,
			  double *d_out, bool *row_parallel);

/* Adapter parameters of one layer on one of tp tensor-parallel ranks
 * (tp = 1: the layer's, r (d_in + d_out) summed over the targets). */
double finetune_layer_adapter_params(const struct model *m, const struct finetune *f, int tp);

/* The linear weights of one layer (QKV, output, MLP; no biases or norms):
 * what QLoRA stores in NF4. */
double finetune_layer_linear_params(const struct model *m);

/* Bytes per element of the frozen linear weights as stored (0 when the
 * training precision's own weights: wbytes applies). */
double finetune_base_stored_bytes(const struct finetune *f);

/* Model FLOPs of an iteration of batch sequences of seq tokens (dense
 * transformer): Megatron's count (model_iteration_flops) less the
 * weight-gradient GEMMs of the frozen weights (one forward's worth of
 * the layers' linear GEMMs and the LM head, 2 x weights per token) plus
 * the adapters' 6 FLOPs per adapter parameter per token (forward, data
 * and weight gradient). Method full: model_iteration_flops. */
double finetune_model_flops(const struct model *m, const struct finetune *f, double batch,
			    double seq);

/* Read a finetune object (jo, its keys: method, rank, alpha, dropout,
 * targets, base_dtype) into f, reporting every bad key into jo's diag.
 * Does not jobj_end(jo). Returns 0, or -1 after reporting. */
int finetune_load(struct jobj *jo, struct finetune *f);

#endif
