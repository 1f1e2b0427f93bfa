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
