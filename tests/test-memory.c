/* test-memory: the ZeRO paper's example and Korthikanti et al.'s
 * activation formulas. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "memory.h"

/* A model whose block holds exactly psi parameters: tune nothing, just
 * scale "layers" so that layers x block params = psi. */
static struct model gpt(void)
{
	struct model m;
	memset(&m, 0, sizeof(m));
	m.layers = 1;
	m.hidden = 4096;
	m.heads = 32;
	m.kv_heads = 32;
	m.ffn = 4 * 4096;
	m.vocab = 51200;
	m.act = MODEL_ACT_GELU;
	m.norm = MODEL_NORM_LAYERNORM;
	m.tied_embeddings = true;
	m.dropout = true;   /* Korthikanti's GPT: dropout after attention and MLP */
	return m;
}

static void zero_case(enum zero_stage z, double want_GB)
{
	struct model m = gpt();
	struct gpu_spec g = { .hbm_bytes = 80e9 };
	double psi = 7.5e9;
	struct mem_rank_input in = { .model = &m, .gpu = &g, .dtype = DTYPE_FP16,
				     .micro_batch = 1, .seq = 1, .tp = 1, .dp = 64, .zero = z,
				     .layers = psi / model_layer_params(&m) };
	struct mem_anatomy o;
	memory_rank(&in, &o);
	double states = (o.weights_bytes + o.grads_bytes + o.optimizer_bytes) / 1e9;
	cr_log_info("ZeRO-%d: %.2f GB (paper %.1f)", (int)z, states, want_GB);
	cr_assert_lt(fabs(states - want_GB), 0.05 + 1e-9, "ZeRO-%d: %.3f GB vs %.1f", (int)z, states, want_GB);
}

/* Rajbhandari et al. 2020, Figure 1: Psi = 7.5B, K = 12, N_d = 64. */
Test(memory, zero_paper_baseline_120GB) { zero_case(ZERO_0, 120); }
Test(memory, zero_paper_stage1_31_4GB) { zero_case(ZERO_1, 31.4); }
Test(memory, zero_paper_stage2_16_6GB) { zero_case(ZERO_2, 16.6); }
Test(memory, zero_paper_stage3_1_9GB) { zero_case(ZERO_3, 1.9); }

static double act(int t, bool sp, enum recompute rc)
{
	struct model m = gpt();
	m.hidden = 12288;
	m.heads = 96;
	m.kv_heads = 96;
	m.ffn = 4 * 12288;
	struct gpu_spec g = { 0 };
	struct mem_rank_input in = { .model = &m, .gpu = &g, .dtype = DTYPE_BF16,
				     .micro_batch = 1, .seq = 2048, .tp = t, .sp = sp,
				     .recompute = rc };
	return memory_layer_activations(&in);
}

/* Korthikanti et al. 2022, Table 2 (bytes per layer). */
Test(memory, activations_follow_korthikanti_formulas)
{
	double s = 2048, b = 1, h = 12288, a = 96, sbh = s * b * h;
	cr_assert_float_eq(act(1, false, RECOMPUTE_NONE), sbh * (34 + 5 * a * s / h), 1);
	cr_assert_float_eq(act(8, false, RECOMPUTE_NONE), sbh * (10 + 24.0 / 8 + 5 * a * s / (h * 8)), 1);
	cr_assert_float_eq(act(8, true, RECOMPUTE_NONE), sbh / 8 * (34 + 5 * a * s / h), 1);
	cr_assert_float_eq(act(8, false, RECOMPUTE_SELECTIVE), sbh * (10 + 24.0 / 8), 1);
	cr_assert_float_eq(act(8, true, RECOMPUTE_SELECTIVE), sbh / 8 * 34, 1);
	cr_assert_float_eq(act(8, false, RECOMPUTE_FULL), 2 * sbh, 1);
	cr_assert_float_eq(act(8, true, RECOMPUTE_FULL), 2 * sbh / 8, 1);
}

Test(memory, activations_scale_with_inflight_microbatches)
{
	struct model m = gpt();
	struct gpu_spec g = { .hbm_bytes = 80e9 };
	struct mem_rank_input in = { .model = &m, .gpu = &g, .dtype = DTYPE_BF16,
				     .micro_batch = 2, .seq = 2048, .tp = 1, .dp = 1,
				     .layers = 10, .inflight = 4 };
	struct mem_anatomy o;
	memory_rank(&in, &o);
	cr_assert_float_eq(o.activations_bytes, 40 * memory_layer_activations(&in), 1);
}

/* Flash attention stores no s x s tensors: Korthikanti's 34 sbh / t (SP)
 * plus the fp32 log-sum-exp, 4 a s b / t bytes, whatever the recompute
 * mode short of full. */
Test(memory, flash_attention_drops_the_score_term)
{
	struct model m = gpt();
	struct gpu_spec g = { 0 };
	double s = 4096, b = 2, h = 4096, a = 32, t = 8;
	struct mem_rank_input in = { .model = &m, .gpu = &g, .dtype = DTYPE_BF16,
				     .attention = ATTN_FLASH, .micro_batch = b, .seq = s,
				     .tp = (int)t, .sp = true, .recompute = RECOMPUTE_NONE };
	double want = s * b * h / t * 34 + 4 * a * s * b / t;
	cr_assert_float_eq(memory_layer_activations(&in), want, 1e-6 * want);
	in.recompute = RECOMPUTE_SELECTIVE;
	cr_assert_float_eq(memory_layer_activations(&in), want, 1e-6 * want);
	in.attention = ATTN_UNFUSED;
	in.recompute = RECOMPUTE_NONE;
	double unfused = s * b * h / t * (34 + 5 * a * s / h);
	cr_assert_float_eq(memory_layer_activations(&in), unfused, 1e-6 * unfused);
}

/* The terms come from the model's own dimensions: without dropout the
 * two 1-byte masks, the dropout output and its mask go (GPT:
 * 32 sbh + 2as^2b); Llama 3 70B (SwiGLU, f = 3.5h, 8 KV heads of 64,
 * no dropout) with flash, TP 8 + SP: norm inputs and GEMM inputs
 * 8h, Q K V 2h (1 + 2/8), the kernel's output 2h, the log-sum-exp 4a,
 * fc1 output 2 x 2f, SwiGLU output 2f, per token / t. */
Test(memory, activations_follow_the_model_dimensions)
{
	struct model m = gpt();
	m.dropout = false;
	m.hidden = 12288;
	m.heads = 96;
	m.kv_heads = 96;
	m.ffn = 4 * 12288;
	struct gpu_spec g = { 0 };
	double s = 2048, h = 12288, a = 96, sbh = s * h;
	struct mem_rank_input in = { .model = &m, .gpu = &g, .dtype = DTYPE_BF16,
				     .micro_batch = 1, .seq = s, .tp = 1 };
	double want = sbh * (32 + 2 * a * s / h);
	cr_assert_float_eq(memory_layer_activations(&in), want, 1e-9 * want);

	m.hidden = 8192;
	m.heads = 64;
	m.kv_heads = 8;
	m.ffn = 28672;
	m.act = MODEL_ACT_SWIGLU;
	h = 8192;
	a = 64;
	double f = 28672, t = 8;
	in.attention = ATTN_FLASH;
	in.tp = (int)t;
	in.sp = true;
	in.seq = 8192;
	want = 8192 * (8 * h + 2 * h * (1 + 2.0 / 8) + 2 * h + 4 * a + 2 * 2 * f + 2 * f) / t;
	cr_assert_float_eq(memory_layer_activations(&in), want, 1e-9 * want);
}

/* Transformer Engine saves the fp8 copies of the GEMM inputs it cast
 * (QKV, fc1 and fc2 inputs: 1 byte instead of 2) and the projection's
 * fp8 input beside the attention kernel's bf16 output: a GPT layer with
 * flash, TP + SP, stores 29 sbh / t instead of 34 (plus the fp32
 * log-sum-exp, 4 a s b / t). */
Test(memory, fp8_saves_gemm_inputs_in_one_byte)
{
	struct model m = gpt();
	m.hidden = 12288;
	m.heads = 96;
	m.kv_heads = 96;
	m.ffn = 4 * 12288;
	struct gpu_spec g = { 0 };
	double s = 2048, b = 1, h = 12288, a = 96, t = 4;
	struct mem_rank_input in = { .model = &m, .gpu = &g, .dtype = DTYPE_FP8,
				     .attention = ATTN_FLASH, .micro_batch = b, .seq = s,
				     .tp = (int)t, .sp = true };
	double want = s * b * h / t * 29 + 4 * a * s * b / t;
	cr_assert_float_eq(memory_layer_activations(&in), want, 1e-9 * want);
	in.dtype = DTYPE_BF16;
	want = s * b * h / t * 34 + 4 * a * s * b / t;
	cr_assert_float_eq(memory_layer_activations(&in), want, 1e-9 * want);
}

/* Transformer Engine fp8: bf16 weights and gradients as before, K = 12
 * (fp32 master, momentum, variance), plus an fp8 weight and an fp8
 * transpose of every transformer-layer parameter: 2 bytes each. */
Test(memory, fp8_anatomy_adds_te_weight_copies)
{
	struct model m = gpt();
	struct gpu_spec g = { .hbm_bytes = 80e9 };
	double L = 4, P = model_layer_params(&m);
	struct mem_rank_input in = { .model = &m, .gpu = &g, .dtype = DTYPE_FP8,
				     .grad_elem_bytes = 4, .micro_batch = 1, .seq = 1, .tp = 2,
				     .dp = 1, .layers = L };
	struct mem_anatomy o;
	memory_rank(&in, &o);
	double psi = L * P / 2;
	cr_assert_float_eq(o.weights_bytes, 2 * psi, 1);
	cr_assert_float_eq(o.grads_bytes, 4 * psi, 1);
	cr_assert_float_eq(o.optimizer_bytes, 12 * psi, 1);
	cr_assert_float_eq(o.fp8_weight_bytes, 2 * psi, 1);
	in.dtype = DTYPE_BF16;
	memory_rank(&in, &o);
	cr_assert_eq(o.fp8_weight_bytes, 0);
	in.dtype = DTYPE_TF32;  /* fp32 weights, their own master: K = 8 */
	memory_rank(&in, &o);
	cr_assert_float_eq(o.weights_bytes, 4 * psi, 1);
	cr_assert_float_eq(o.optimizer_bytes, 8 * psi, 1);
}

/* With fp8 parameters (TE fp8_model_params) the layer weights are only
 * their fp8 copy and transpose (1 + 1 bytes): the 16-bit weights of the
 * layers go, the embedding's stay; ZeRO-3 shards what is left. */
Test(memory, fp8_params_drop_the_16bit_layer_weights)
{
	struct model m = gpt();
	struct gpu_spec g = { .hbm_bytes = 80e9 };
	double L = 4, P = model_layer_params(&m), E = model_embedding_params(&m);
	struct mem_rank_input in = { .model = &m, .gpu = &g, .dtype = DTYPE_FP8,
				     .grad_elem_bytes = 2, .micro_batch = 1, .seq = 1, .tp = 2,
				     .dp = 8, .layers = L, .has_embedding = true, .fp8_params = true };
	struct mem_anatomy o;
	memory_rank(&in, &o);
	cr_assert_float_eq(o.weights_bytes, 2 * E / 2, 1);
	cr_assert_float_eq(o.fp8_weight_bytes, 2 * L * P / 2, 1);
	cr_assert_float_eq(o.grads_bytes, 2 * (L * P + E) / 2, 1);
	in.zero = ZERO_3;
	memory_rank(&in, &o);
	cr_assert_float_eq(o.weights_bytes, 2 * E / 2 / 8, 1);
	cr_assert_float_eq(o.fp8_weight_bytes, 2 * L * P / 2 / 8, 1);
	in.dtype = DTYPE_BF16;  /* fp8_params means nothing without fp8 */
	in.zero = ZERO_0;
	memory_rank(&in, &o);
	cr_assert_float_eq(o.weights_bytes, 2 * (L * P + E) / 2, 1);
}

/* Capacity is what the device reports; the CUDA context, NCCL's buffers
 * (16 channels x 2 connections x (512 KiB + 4,915,200 B + 4 MiB) per
 * communicator) and the allocator reserve come off it. */
Test(memory, hbm_capacity_accounting)
{
	struct model m = gpt();
	struct gpu_spec g = { .hbm_bytes = 85520809984.0, .mem_reserved_bytes = 1e9 };
	struct mem_rank_input in = { .model = &m, .gpu = &g, .dtype = DTYPE_BF16,
				     .micro_batch = 1, .seq = 1, .tp = 8, .dp = 4, .pp = 2,
				     .layers = 0, .has_embedding = true, .reserve_fraction = 0.05 };
	struct mem_anatomy o;
	memory_rank(&in, &o);
	double conn = 524288.0 + 4915200.0 + 4194304.0;
	cr_assert_eq(conn, 9633792.0);
	/* TP, DP, PP and the tied-embedding group: 4 communicators */
	cr_assert_float_eq(o.nccl_bytes, 4 * 16 * 2 * conn, 1);
	cr_assert_float_eq(o.fragmentation_bytes, 0.05 * 85520809984.0, 1);
	cr_assert_float_eq(o.reserved_bytes, 1e9 + 4 * 16 * 2 * conn + 0.05 * 85520809984.0, 1);
	cr_assert_eq(o.capacity_bytes, 85520809984.0);
}
