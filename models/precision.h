/* precision: data types and the mixed-precision policy of a training run.
 *
 * One home for what a dtype is called and how many bytes it takes, and for
 * which dtype each tensor of a training step uses under a scenario's
 * `training.precision`:
 *
 *   precision  GEMM math          stored tensors   weights   master  K
 *   fp32       fp32 (CUDA cores)  fp32             fp32      -       8
 *   tf32       tf32 tensor cores  fp32             fp32      -       8
 *   fp16/bf16  fp16/bf16          fp16/bf16        16-bit    fp32    12
 *   fp8        fp8 (see below)    bf16             bf16      fp32    12
 *   mxfp8      MXFP8 (see below)  bf16             bf16      fp32    12
 *   nvfp4      NVFP4 (see below)  bf16             bf16      fp32    12
 *
 * K is the optimizer state of mixed-precision Adam in bytes per parameter
 * (ZeRO paper, Rajbhandari et al. 2020: fp32 master, momentum, variance;
 * 8 when the weights themselves are fp32).
 *
 * fp8 is Transformer Engine's recipe (TE docs, "Using FP8 with Transformer
 * Engine": DelayedScaling, format HYBRID): the GEMMs of the transformer
 * layers run in fp8, E4M3 for activations and weights in the forward pass
 * and E5M2 for gradients in the backward pass (both one byte, one tensor-core
 * rate on Hopper and Blackwell), with per-tensor scales from an amax history
 * (delayed scaling). Everything else stays bf16: the LM head (Megatron keeps
 * its output layer out of TE), norms, softmax, the attention core, stored
 * activations, master weights in fp32. TE keeps an fp8 copy of each weight
 * and of its transpose (the layout the backward GEMMs read), refreshed once
 * per optimizer step; tensors entering an fp8 GEMM are cast (and, where the
 * backward needs the other layout, transposed) by memory-bound kernels that
 * also record the amax. What a TE module saves for its backward is that
 * fp8 copy of its GEMM input, not the bf16 tensor (TE's Linear,
 * LayerNormLinear and LayerNormMLP save the fp8 input they cast for the
 * weight-gradient GEMM, and LayerNormMLP the fp8 GELU output fc2 reads;
 * the fc1 output before the activation stays bf16 for the GELU/SwiGLU
 * backward). TP/SP communication may optionally move fp8
 * (Megatron-Core `--fp8` with TE's userbuffers / `tp_comm_overlap` fp8 path).
 *
 * mxfp8 and nvfp4 are Transformer Engine's block-scaled recipes for
 * Blackwell (TE 2.15 docs, api/common.rst: MXFP8BlockScaling(fp8_format=
 * E4M3), NVFP4BlockScaling(fp4_format=E2M1); docs/features/
 * low_precision_training/mxfp8/mxfp8.rst). The same modules and GEMMs as
 * fp8 run in them, the same ops stay bf16 (LM head, norms, softmax, the
 * attention core, stored activations; fp32 master weights), and the same
 * cast kernels, weight copies and saved GEMM inputs exist; what differs is
 * the element and its scales, which dtype_bytes counts with the element:
 *   mxfp8: E4M3 (one byte) plus one E8M0 scale byte per 32 consecutive
 *          elements (OCP Microscaling Formats (MX) v1.0, section 5, MXFP8:
 *          k = 32, scale E8M0): 1 + 1/32 = 1.03125 bytes
 *   nvfp4: E2M1 (half a byte) plus one E4M3 scale byte per 16 elements
 *          (TE: "1 FP8 scaling factor (E4M3)" per 16 FP4 values) and one
 *          fp32 scale per tensor, not counted (4 bytes a tensor):
 *          0.5 + 1/16 = 0.5625 bytes
 * Their GEMMs run at the GPU preset's peak_tflops.mxfp8 / .nvfp4 (the
 * datasheet's fp8 / fp4 tensor rate, declared only by GPUs with block-
 * scaled tensor cores) at efficiency.gemm_max_mxfp8 / _nvfp4 (models/gpu.h).
 * fp8_comm and fp8_params stay fp8-only (sim/plan_check.c).
 */
#ifndef DDLSIM_PRECISION_H
#define DDLSIM_PRECISION_H

#include <stdbool.h>

enum dtype { DTYPE_FP32, DTYPE_TF32, DTYPE_FP16, DTYPE_BF16, DTYPE_FP8, DTYPE_MXFP8, DTYPE_NVFP4,
	     DTYPE_N };

/* The dtype names, in enum order and NULL-terminated, for loaders:
 * "fp32", "tf32", "fp16", "bf16", "fp8", "mxfp8", "nvfp4". */
extern const char *const dtype_names[DTYPE_N + 1];

/* "fp32", "tf32", ...; "?" out of range. */
const char *dtype_name(enum dtype t);
/* Storage size of one element in bytes (tf32 is stored as fp32; mxfp8 and
 * nvfp4 with their block scales); 0 out of range. */
double dtype_bytes(enum dtype t);
/* Whether t is one of Transformer Engine's low-precision GEMM formats
 * (fp8, mxfp8, nvfp4): bf16 everywhere else, casts, weight copies. */
bool dtype_is_te_low(enum dtype t);

/* The dtype the weights are stored and reduced in under training precision
 * `training`: fp32 for tf32 (a compute mode, not a storage format), bf16
 * for fp8, mxfp8, nvfp4 (Transformer Engine keeps bf16 weights and casts per GEMM),
 * else `training` itself. The one home of the default gradient-reduction
 * dtype (scenario, search, plan) and of precision's weight dtype. */
enum dtype precision_weight_dtype(enum dtype training);

/* Which dtype each tensor of a training step uses. */
struct precision {
	enum dtype training;     /* the scenario's training.precision */
	enum dtype gemm;         /* transformer-layer GEMMs (fp8: E4M3 fwd, E5M2 grads) */
	enum dtype head_gemm;    /* the LM head's GEMM (bf16 under fp8) */
	enum dtype activation;   /* stored activations, non-GEMM kernels, attention core */
	enum dtype saved_gemm_input; /* a GEMM input kept for the weight-gradient GEMM
				       (fp8 under TE: the cast copy the GEMM read) */
	enum dtype weight;       /* weights as the compute reads them between steps */
	enum dtype layer_weight; /* transformer-layer weights as stored and gathered
				    (fp8 with precision_fp8_params, else weight) */
	enum dtype tp_comm;      /* TP/SP activations on the wire */
	bool fp8;                /* Transformer Engine fp8, mxfp8 or nvfp4: casts, amax,
				    low-precision weight copies */
	double fp8_weight_copy_bytes;  /* per parameter: the weight + its transpose in the GEMM
					  dtype (fp8 2, mxfp8 2.0625, nvfp4 1.125), else 0 */
	double optimizer_bytes;  /* K per parameter (12 mixed, 8 fp32/tf32) */
	double optimizer_step_bytes; /* HBM traffic of one Adam step per parameter */
	double optimizer_copy_bytes; /* of which the 16-bit weight copy (0 in fp32) */
};

/* Fill p for training precision `training`; fp8_comm moves TP/SP
 * activations in fp8 (only meaningful with fp8). */
void precision_init(struct precision *p, enum dtype training, bool fp8_comm);

/* fp8 parameters (TE fp8_model_params, Megatron-Core --fp8-param-gather):
 * the transformer-layer weights exist only as their fp8 copies, so
 * ZeRO's parameter all-gathers move one byte per parameter and the
 * optimizer writes the fp8 weight and transpose from the fp32 master
 * directly (no 16-bit write and re-read). No effect unless p->fp8. */
void precision_fp8_params(struct precision *p);

/* AdamW's first and second moments in bf16 (DeepSeek-V3, arXiv
 * 2412.19437 section 3.3.3, "Low-Precision Optimizer States": "We adopt
 * the BF16 data format instead of FP32 to track the first and second
 * moments in the AdamW optimizer"; the master weights stay fp32): the
 * state is 2 + 2 bytes per parameter instead of 4 + 4 (K = 12 - 4 = 8
 * mixed, 8 - 4 = 4 in fp32), and the step reads and writes each moment
 * in 2 bytes instead of 4 (8 bytes per parameter fewer). */
void precision_bf16_moments(struct precision *p);

/* The fp32 master weights kept as remainders (Apex DistributedFusedAdam
 * store_param_remainders, NVIDIA/apex 810ffae3 apex/contrib/optimizers/
 * distributed_fused_adam.py L355-357 and L447-453: "store bits required
 * to reconstruct FP32 params", a param_remainders_shard of int16; the
 * master is the bf16 weight and those 16 low bits): the state is
 * 2 + 4 + 4 bytes per parameter instead of 4 + 4 + 4 (K = 10). NeMo
 * r2.0.0rc1 (579983fb) megatron_base_model.py L796-806 turns it on for
 * distributed_fused_adam when megatron_amp_O2 makes the model bf16 and
 * the optimizer's dtype is fp32 (its default), unless fp8_params or the
 * optim config sets store_params. Memory only: the step's traffic is
 * left as the fp32 master's (Apex reads and writes the bf16 weight and
 * the remainder, 2 + 2 bytes, instead of 4 and a 16-bit copy's 2). No
 * effect unless the weights are bf16. */
void precision_master_remainders(struct precision *p);

#endif
