/* test-model: shipped models against their published sizes, and the
 * workload's FLOPs against Megatron-LM's closed form. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "cost.h"
#include "diag.h"
#include "model.h"
#include "testutil.h"
#include "topology.h"
#include "workload.h"

static void check_params(const char *rel)
{
	struct model *m = load_model(rel);
	double p = model_params(m);
	double err = fabs(p / m->published_params - 1);
	cr_log_info("%s: %.6g params, published %.6g, error %.4f%%", m->name, p,
		    m->published_params, 100 * err);
	cr_assert_lt(err, 0.005, "%s: %.6g vs published %.6g", m->name, p, m->published_params);
	model_destroy(m);
}

Test(model, gpt3_175b_params_within_half_percent) { check_params("models/zoo/gpt3-175b.json"); }
Test(model, llama2_7b_params_within_half_percent) { check_params("models/zoo/llama2-7b.json"); }
Test(model, llama2_70b_params_within_half_percent) { check_params("models/zoo/llama2-70b.json"); }
Test(model, llama3_8b_params_within_half_percent) { check_params("models/zoo/llama3-8b.json"); }
Test(model, llama3_70b_params_within_half_percent) { check_params("models/zoo/llama3-70b.json"); }
Test(model, llama3_405b_params_within_half_percent) { check_params("models/zoo/llama3-405b.json"); }
Test(model, llama2_13b_params_within_half_percent) { check_params("models/zoo/llama2-13b.json"); }
Test(model, mpt_70b_params_within_half_percent) { check_params("models/zoo/mpt-70b.json"); }
Test(model, bloom_176b_params_within_half_percent) { check_params("models/zoo/bloom-176b.json"); }

/* MLPerf's GPT-3 (the reference's --attention-dropout 0.0 --hidden-dropout
 * 0.0, NVIDIA's conf/custom.yaml 0.0 / 0.0) is GPT-3 175B without dropout:
 * every other key as the zoo's GPT-3, whose dropout the NeMo 24.07 recipe
 * keeps (175b.yaml hidden_dropout / attention_dropout 0.1). */
Test(model, mlperf_gpt3_is_gpt3_175b_without_dropout)
{
	struct model *g = load_model("models/zoo/gpt3-175b.json");
	struct model *m = load_model("models/zoo/mlperf/gpt3-175b.json");
	cr_assert(g->dropout, "models/zoo/gpt3-175b.json: GPT-3 trains with dropout");
	cr_assert(!m->dropout, "models/zoo/mlperf/gpt3-175b.json: MLPerf's GPT-3 has none");
	cr_assert_eq(model_params(m), model_params(g));
	cr_assert_eq(model_iteration_flops(m, 1536, 2048), model_iteration_flops(g, 1536, 2048));
	cr_assert_eq(m->layers, g->layers);
	cr_assert_eq(m->hidden, g->hidden);
	cr_assert_eq(m->heads, g->heads);
	cr_assert_eq(m->ffn, g->ffn);
	cr_assert_eq(m->vocab, g->vocab);
	cr_assert_eq(m->bias, g->bias);
	cr_assert_eq(m->tied_embeddings, g->tied_embeddings);
	cr_assert_eq(m->act, g->act);
	cr_assert_eq(m->norm, g->norm);
	cr_assert_eq(m->pos, g->pos);
	cr_assert_eq(m->max_position, g->max_position);
	cr_assert_eq(m->published_params, g->published_params);
	model_destroy(m);
	model_destroy(g);
}

/* The MPTs of llm-foundry's benchmark table (Linear and LayerNorm biases,
 * a learned position table of 2048 rows, tied embeddings): the README's
 * NumParams at sequence 2048 to the digit (models/zoo/llm-foundry/). */
Test(model, mpt_benchmark_params_exact)
{
	static const char *f[] = { "7b", "13b", "30b", "70b" };
	for (int i = 0; i < 4; i++) {
		char rel[64];
		snprintf(rel, sizeof(rel), "models/zoo/llm-foundry/mpt-%s.json", f[i]);
		struct model *m = load_model(rel);
		cr_expect_eq(model_params(m), m->published_params, "%s: %.0f vs %.0f", rel,
			     model_params(m), m->published_params);
		model_destroy(m);
	}
}

Test(model, llama2_7b_params_exact)
{
	struct model *m = load_model("models/zoo/llama2-7b.json");
	cr_assert_eq(model_params(m), 6738415616.0);
	model_destroy(m);
}

/* 72 B s L h^2 (1 + s/(6h) + V/(12 h L)) for a GPT-style model (FFN 4h,
 * MHA), no recomputation. */
static double megatron_flops(double B, double s, double L, double h, double V)
{
	return 72 * B * s * L * h * h * (1 + s / (6 * h) + V / (12 * h * L));
}

Test(model, iteration_flops_equal_megatron_formula)
{
	struct model *m = load_model("models/zoo/gpt3-175b.json");
	double B = 1536, s = 2048;
	double f = model_iteration_flops(m, B, s);
	double want = megatron_flops(B, s, (double)m->layers, (double)m->hidden, (double)m->vocab);
	cr_assert_lt(fabs(f / want - 1), 1e-12, "%.17g vs %.17g", f, want);
	model_destroy(m);
}

/* The workload's ops must add up to the same FLOPs: forward of every
 * block for one micro-batch, x3 for training. */
Test(model, workload_ops_add_up_to_megatron_flops)
{
	struct model *m = load_model("models/zoo/megatron/gpt-18b.json");
	struct wl_shape shp = { 8, 2048, 1, false, DTYPE_FP16, ATTN_UNFUSED, 1, false, 1, false, 0, 0, 0, NULL, { ATTN_BE_BEST, ATTN_BE_BEST }, false, { 0 }, false, { 0 }, false, 0, 0 };
	double fwd = 0, bwd = 0;
	for (int b = 0; b < WL_NBLOCKS; b++) {
		struct op_list l;
		op_list_init(&l);
		workload_block(m, &shp, b, PASS_FWD, RECOMPUTE_NONE, &l);
		fwd += op_list_flops(&l) * (b == WL_ATTN || b == WL_MLP ? (double)m->layers : 1);
		op_list_finish(&l);
		op_list_init(&l);
		workload_block(m, &shp, b, PASS_BWD, RECOMPUTE_NONE, &l);
		bwd += op_list_flops(&l) * (b == WL_ATTN || b == WL_MLP ? (double)m->layers : 1);
		op_list_finish(&l);
	}
	double want = megatron_flops(8, 2048, (double)m->layers, (double)m->hidden, (double)m->vocab);
	cr_assert_lt(fabs((fwd + bwd) / want - 1), 1e-12, "%.17g vs %.17g", fwd + bwd, want);
	cr_assert_lt(fabs(bwd / fwd - 2), 1e-12);
	model_destroy(m);
}

Test(model, tensor_parallel_divides_gemm_flops)
{
	struct model *m = load_model("models/zoo/llama2-70b.json");
	struct wl_shape s1 = { 1, 4096, 1, false, DTYPE_BF16, ATTN_UNFUSED, 1, false, 1, false, 0, 0, 0, NULL, { ATTN_BE_BEST, ATTN_BE_BEST }, false, { 0 }, false, { 0 }, false, 0, 0 }, s8 = s1;
	s8.tp = 8;
	struct op_list a, b;
	op_list_init(&a);
	op_list_init(&b);
	workload_block(m, &s1, WL_MLP, PASS_FWD, RECOMPUTE_NONE, &a);
	workload_block(m, &s8, WL_MLP, PASS_FWD, RECOMPUTE_NONE, &b);
	cr_assert_lt(fabs(op_list_flops(&a) / op_list_flops(&b) - 8), 1e-12);
	op_list_finish(&a);
	op_list_finish(&b);
	model_destroy(m);
}

Test(model, rejects_heads_not_dividing_hidden)
{
	char *d = tmp_dir();
	char *p = write_file(d, "m.json",
		"{\"schema\":\"ddlsim.model\",\"schema_version\":\"1.0\",\"name\":\"x\",\"source\":\"t\","
		"\"architecture\":\"decoder_transformer\",\"layers\":2,\"hidden_size\":100,"
		"\"heads\":3,\"vocab_size\":10}");
	struct diag dg;
	diag_init(&dg, NULL);
	cr_assert_null(model_load(p, &dg));
	char want[1200];
	snprintf(want, sizeof(want), "%s: /heads: error: must divide hidden_size 100 (or give head_dim), got 3\n", p);
	cr_assert_str_eq(diag_text(&dg), want);
	diag_finish(&dg);
}

Test(model, roofline_prices_a_large_gemm_near_its_efficiency)
{
	struct gpu_spec g = { .hbm_bw_Bps = 2e12, .sm_count = 108, .gemm_eff_max = 0.8,
			      .mem_eff_max = 1,
			      .gemm_tile_m = 128, .gemm_tile_n = 128 };
	g.peak_flops[DTYPE_BF16] = 312e12;
	g.peak_flops[DTYPE_FP32] = 19.5e12;
	/* 108 x 2 tiles of 128x128: exactly two full waves, no quantization loss */
	struct op op = { .kind = OP_GEMM, .dtype = DTYPE_BF16, .m = 128 * 108, .n = 256,
			 .k = 8192, .batch = 1 };
	op.flops = 2 * op.m * op.n * op.k;
	double t = cost_roofline_time(&g, &op);
	cr_assert_lt(fabs(t / (op.flops / (312e12 * 0.8)) - 1), 1e-12);
	/* one more row of tiles: a third, nearly empty wave */
	op.m += 128;
	op.flops = 2 * op.m * op.n * op.k;
	double t2 = cost_roofline_time(&g, &op);
	cr_assert_gt(t2 / t, 1.45);
}

/* The grid tail of a flash kernel (attention.h), by hand on 132 SMs; the
 * reference grid is 2048 CTAs, x_ref = 2048 / 132. */
Test(model, flash_grid_tail_by_hand)
{
	double xr = 2048.0 / 132;
	/* causal, 8 heads x 2048 tokens: 8 x 16 = 128 CTAs, x = 128/132 */
	double x = 128.0 / 132, want = (1 + 1 / x) / (1 + 1 / xr);
	cr_expect_float_eq(attention_grid_factor(132, true, 8, 2048), want, 1e-12);
	cr_expect_float_eq(want, 1.908256880733945, 1e-12);
	/* 2048 CTAs is the reference itself; 8192 tokens x 64 heads is 4x it */
	cr_expect_float_eq(attention_grid_factor(132, true, 16, 16384), 1, 1e-12);
	cr_expect_float_eq(attention_grid_factor(132, true, 64, 8192),
			   (1 + 132.0 / 4096) / (1 + 1 / xr), 1e-12);
	/* a part-filled last row of blocks counts as a whole CTA: 2049 tokens */
	cr_expect_float_eq(attention_grid_factor(132, true, 8, 2049),
			   (1 + 132.0 / 136) / (1 + 1 / xr), 1e-12);
	/* equal CTAs run in whole waves: 10 x 16 = 160 CTAs, 2 waves */
	cr_expect_float_eq(attention_grid_factor(132, false, 10, 2048),
			   (2 / (160.0 / 132)) / (16 / xr), 1e-12);
	/* no SM count or an empty op: no factor */
	cr_expect_eq(attention_grid_factor(0, true, 8, 2048), 1);
	cr_expect_eq(attention_grid_factor(132, true, 0, 2048), 1);
	/* the roofline applies it to the compute time of an OP_ATTN */
	struct gpu_spec g = { .hbm_bw_Bps = 4.8e12, .sm_count = 132, .gemm_eff_max = 0.8,
			      .mem_eff_max = 1, .flash_fwd_max = 0.6, .flash_bwd_max = 0.5 };
	g.peak_flops[DTYPE_BF16] = 989e12;
	struct op op = { .kind = OP_ATTN, .pass = PASS_FWD, .dtype = DTYPE_BF16, .batch = 8,
			 .m = 2048, .n = 2048, .k = 128, .causal = true };
	op.flops = attention_flops(ATTN_FLASH, true, false, 8, 2048, 128);
	double fe = attention_flash_eff(&g, ATTN_BE_BEST, false, 2048, 128, true);
	cr_expect_float_eq(cost_roofline_time_isolated(&g, &op), op.flops / (989e12 * fe) * want,
			   1e-9 * op.flops / (989e12 * fe));
}

/* In situ, flash attention also runs at flash_sustained_ratio (its
 * efficiencies are burst figures) on top of sustained_clock_ratio; a GEMM
 * only at sustained_clock_ratio; isolated, neither. */
Test(model, flash_runs_at_its_sustained_ratio_in_situ)
{
	struct gpu_spec g = { .hbm_bw_Bps = 4.8e12, .sm_count = 132, .gemm_eff_max = 0.8,
			      .mem_eff_max = 1, .flash_fwd_max = 0.6, .flash_bwd_max = 0.5,
			      .gemm_tile_m = 128, .gemm_tile_n = 256,
			      .sustained_clock_ratio = 0.95, .flash_sustained_ratio = 0.9 };
	g.peak_flops[DTYPE_BF16] = 989e12;
	struct op at = { .kind = OP_ATTN, .pass = PASS_BWD, .dtype = DTYPE_BF16, .batch = 64,
			 .m = 4096, .n = 4096, .k = 128, .causal = true };
	at.flops = attention_flops(ATTN_FLASH, true, true, 64, 4096, 128);
	double iso = cost_roofline_time_isolated(&g, &at);  /* no launch latency, no bytes */
	cr_expect_float_eq(cost_roofline_time(&g, &at), iso / (0.95 * 0.9), 1e-9 * iso);
	struct op mm = { .kind = OP_GEMM, .dtype = DTYPE_BF16, .m = 8192, .n = 8192, .k = 8192,
			 .batch = 1 };
	mm.flops = 2 * mm.m * mm.n * mm.k;
	double gi = cost_roofline_time_isolated(&g, &mm);
	cr_expect_float_eq(cost_roofline_time(&g, &mm), gi / 0.95, 1e-9 * gi);
}

/* The length factor's half-length is the GPU's flash_seq_half where the
 * preset gives one, else FlashAttention-3's H100 fit of 239 tokens. */
Test(model, flash_length_factor_takes_the_gpus_half_length)
{
	struct gpu_spec g = { .flash_fwd_max = 0.6, .flash_bwd_max = 0.5 };
	/* causal 4096: a query row sees 2048 keys */
	cr_expect_float_eq(attention_flash_eff(&g, ATTN_BE_BEST, false, 4096, 128, true),
			   0.6 * 2048 / (2048 + 239.0), 1e-12);
	g.flash_seq_half = 632;
	cr_expect_float_eq(attention_flash_eff(&g, ATTN_BE_BEST, false, 4096, 128, true),
			   0.6 * 2048 / (2048 + 632.0), 1e-12);
	cr_expect_float_eq(attention_flash_eff(&g, ATTN_BE_BEST, true, 8192, 128, false),
			   0.5 * 8192 / (8192 + 632.0), 1e-12);
}

/* One cuDNN row of validation/kernels/attention.csv on the GB200 preset. */
struct gb200_row {
	bool bwd, causal;
	double b, bh, s, tflops;
};

/* The b200-gb200 cudnn rows of validation/kernels/attention.csv (the
 * figures gpus/b200-gb200.json cites); returns their count. */
static int gb200_cudnn_rows(struct gb200_row *r, int cap)
{
	char *text = test_file_text(src_path("validation/kernels/attention.csv"));
	cr_assert(text);
	int n = 0;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char pass[8], dt[8];
		double b, h, kv, s, d, c, tf;
		if (strncmp(line, "b200-gb200,cudnn,", 17) ||
		    sscanf(line + 17, "%7[^,],%7[^,],%lf,%lf,%lf,%lf,%lf,%lf,,%lf", pass, dt, &b, &h,
			   &kv, &s, &d, &c, &tf) != 9)
			continue;
		cr_assert(n < cap && d == 128 && !strcmp(dt, "bf16"), "%s", line);
		r[n++] = (struct gb200_row){ .bwd = !strcmp(pass, "bwd"), .causal = c == 1,
					     .b = b, .bh = b * h, .s = s, .tflops = tf };
	}
	free(text);
	return n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The GB200 preset's flash figures are what its source says they are,
 * from the cited cuDNN rows: flash_seq_half the least-squares fit (in
 * log) of the length factor to the batch-1 causal forward rows at s 512 ..
 * 16k; flash_fwd_max / flash_bwd_max the median over the rows at s 4096
 * and 8192 of TFLOP/s x grid factor / peak / length factor; and a flash op
 * of a cited shape priced on the preset runs at the formula's rate. */
Test(model, gb200_flash_figures_come_from_the_cited_cudnn_rows)
{
	struct topology *t = load_topology("topologies/gb200-nvl72.json");
	const struct gpu_spec *g = &t->gpu;
	const double peak = g->peak_flops[DTYPE_BF16];
	struct gb200_row r[64];
	int n = gb200_cudnn_rows(r, 64);
	cr_assert_eq(n, 38);
	cr_assert_float_eq(peak, 2500e12, 1);

	/* the half-length: grid search in 0.1-token steps */
	double best_ss = INFINITY, best_k = 0;
	for (double k = 100; k < 2000; k += 0.1) {
		double l[16], m = 0;
		int c = 0;
		for (int i = 0; i < n; i++)
			if (!r[i].bwd && r[i].b == 1 && r[i].causal && r[i].s <= 16384) {
				double obs = r[i].tflops * 1e12 *
					     attention_grid_factor(g->sm_count, true, r[i].bh, r[i].s) / peak;
				l[c] = log(obs / (r[i].s / 2 / (r[i].s / 2 + k)));
				m += l[c++];
			}
		cr_assert_eq(c, 6);
		m /= c;
		double ss = 0;
		for (int i = 0; i < c; i++)
			ss += (l[i] - m) * (l[i] - m);
		if (ss < best_ss) {
			best_ss = ss;
			best_k = k;
		}
	}
	cr_expect_eq(round(best_k), g->flash_seq_half, "fit %.1f, preset %g", best_k,
		     g->flash_seq_half);

	/* the maxima: medians of six points each, rounded to 3 decimals */
	for (int bwd = 0; bwd < 2; bwd++) {
		double v[8];
		int c = 0;
		for (int i = 0; i < n; i++)
			if (r[i].bwd == bwd && (r[i].s == 4096 || r[i].s == 8192)) {
				double sk = r[i].causal ? r[i].s / 2 : r[i].s;
				cr_assert(c < 8);
				v[c++] = r[i].tflops * 1e12 *
					 attention_grid_factor(g->sm_count, r[i].causal, r[i].bh, r[i].s) /
					 peak / (sk / (sk + g->flash_seq_half));
			}
		cr_assert_eq(c, 6);
		qsort(v, (size_t)c, sizeof(v[0]), cmp_double);
		double med = (v[2] + v[3]) / 2, max = bwd ? g->flash_bwd_max : g->flash_fwd_max;
		cr_expect(fabs(med - max) <= 0.0005, "%s: median %.4f, preset %.3f",
			  bwd ? "bwd" : "fwd", med, max);
		cr_expect_eq(bwd ? g->flash_be_bwd[ATTN_BE_CUDNN] : g->flash_be_fwd[ATTN_BE_CUDNN], max);
	}

	/* (1, 128 heads, 8192, 128) causal, cited at 1584 forward and 1211
	 * backward TFLOP/s: priced at the formula, in time within 8 % of the
	 * figure (the backward's kernel ratchet level, validation/kernels/) */
	for (int bwd = 0; bwd < 2; bwd++) {
		struct op op = { .kind = OP_ATTN, .pass = bwd ? PASS_BWD : PASS_FWD,
				 .dtype = DTYPE_BF16, .batch = 128, .m = 8192, .n = 8192, .k = 128,
				 .causal = true, .backend = { ATTN_BE_CUDNN, ATTN_BE_CUDNN } };
		op.flops = attention_flops(ATTN_FLASH, true, bwd, 128, 8192, 128);
		double max = bwd ? g->flash_bwd_max : g->flash_fwd_max;
		double want = op.flops / (peak * max * 4096 / (4096 + g->flash_seq_half)) *
			      attention_grid_factor(g->sm_count, true, 128, 8192) + g->kernel_launch_s;
		double got = cost_roofline_time_isolated(g, &op);
		cr_expect_float_eq(got, want, 1e-9 * want);
		double cited = bwd ? 1211e12 : 1584e12;
		cr_expect(fabs(got / (op.flops / cited) - 1) < 0.08, "%s: %.0f TFLOP/s priced, %.0f cited",
			  bwd ? "bwd" : "fwd", op.flops / got / 1e12, cited / 1e12);
	}
	topology_destroy(t);
}

/* Flash attention's hardware FLOPs against the unfused count (attention.h):
 * causal forward does half of 4 s^2 d, the backward 2.5x its forward
 * (QK^T recomputed); unfused does the full square, backward 2x. */
Test(model, flash_flops_closed_forms)
{
	double bh = 64, s = 4096, d = 128, full = 4 * bh * s * s * d;
	cr_assert_eq(attention_flops(ATTN_UNFUSED, true, false, bh, s, d), full);
	cr_assert_eq(attention_flops(ATTN_UNFUSED, true, true, bh, s, d), 2 * full);
	cr_assert_eq(attention_flops(ATTN_FLASH, true, false, bh, s, d), full / 2);
	cr_assert_eq(attention_flops(ATTN_FLASH, true, true, bh, s, d), 2.5 * full / 2);
	cr_assert_eq(attention_flops(ATTN_FLASH, false, true, bh, s, d), 2.5 * full);

	/* the workload's iteration FLOPs: unfused = Megatron's formula exactly;
	 * flash = that minus the attention difference, 12 - 7 = 5 b s^2 h per layer */
	struct model *m = load_model("models/zoo/megatron/gpt-18b.json");
	double B = 8, S = 2048, L = (double)m->layers, h = (double)m->hidden;
	struct wl_shape shp = { 1, S, 1, false, DTYPE_FP16, ATTN_UNFUSED, 1, false, 1, false, 0, 0, 0, NULL, { ATTN_BE_BEST, ATTN_BE_BEST }, false, { 0 }, false, { 0 }, false, 0, 0 };
	double want = megatron_flops(B, S, L, h, (double)m->vocab);
	double got = workload_iteration_flops(m, &shp, RECOMPUTE_NONE, B);
	cr_assert_lt(fabs(got / want - 1), 1e-12, "%.17g vs %.17g", got, want);
	shp.attention = ATTN_FLASH;
	got = workload_iteration_flops(m, &shp, RECOMPUTE_NONE, B);
	double flash = want - 5 * B * S * S * h * L;
	cr_assert_lt(fabs(got / flash - 1), 1e-12, "%.17g vs %.17g", got, flash);
	/* selective recompute with flash runs the causal flash forward again: 2 b s^2 h */
	got = workload_iteration_flops(m, &shp, RECOMPUTE_SELECTIVE, B);
	cr_assert_lt(fabs(got / (flash + 2 * B * S * S * h * L) - 1), 1e-12);
	model_destroy(m);
}

/* fp8 (Transformer Engine): layer GEMMs in fp8, the LM head and the
 * attention core 16-bit, and a cast(+transpose) of 4 bytes per element
 * for the unfused GEMM inputs (attn_out forward; dY of qkv, attn_out and
 * mlp_down backward). */
Test(model, fp8_gemms_and_casts)
{
	struct model *m = load_model("models/zoo/llama2-7b.json");
	struct wl_shape shp = { 1, 4096, 1, false, DTYPE_FP8, ATTN_FLASH, 1, false, 1, false, 0, 0, 0, NULL, { ATTN_BE_BEST, ATTN_BE_BEST }, false, { 0 }, false, { 0 }, false, 0, 0 };
	struct op_list l;
	double T = 4096, h = 4096;
	int casts = 0;
	op_list_init(&l);
	workload_block(m, &shp, WL_ATTN, PASS_FWD, RECOMPUTE_NONE, &l);
	for (int i = 0; i < l.n; i++) {
		if (l.v[i].kind == OP_GEMM)
			cr_assert_eq(l.v[i].dtype, DTYPE_FP8, "%s", l.v[i].name);
		if (l.v[i].kind == OP_ATTN)
			cr_assert_eq(l.v[i].dtype, DTYPE_BF16);
		if (strstr(l.v[i].name, "fp8_cast")) {
			casts++;
			cr_assert_str_eq(l.v[i].name, "attn_out.fp8_cast");
			cr_assert_eq(l.v[i].bytes, 4 * T * h);
		}
	}
	cr_assert_eq(casts, 1);
	op_list_finish(&l);
	op_list_init(&l);
	workload_block(m, &shp, WL_MLP, PASS_BWD, RECOMPUTE_NONE, &l);
	casts = 0;
	for (int i = 0; i < l.n; i++)
		casts += strstr(l.v[i].name, "fp8_cast") != NULL;
	cr_assert_eq(casts, 1);  /* mlp_down's dY; mlp_gate_up's comes fused */
	op_list_finish(&l);
	op_list_init(&l);
	workload_block(m, &shp, WL_HEAD, PASS_FWD, RECOMPUTE_NONE, &l);
	for (int i = 0; i < l.n; i++)
		if (l.v[i].kind == OP_GEMM)
			cr_assert_eq(l.v[i].dtype, DTYPE_BF16);
	op_list_finish(&l);
	model_destroy(m);
}

/* ---- head_dim and qk_norm (model.h) ------------------------------------ */

/* Qwen3 32B from its config.json (models/zoo/qwen3-32b.json): h 5120, 64
 * layers, 64 query heads and 8 KV heads of 128 (q 8192, kv 1024 wide),
 * SwiGLU of 25600, vocabulary 151936 untied, QK-norm. Per layer:
 * 5120 x (8192 + 2 x 1024) + 8192 x 5120 = 94,371,840 attention,
 * 3 x 5120 x 25600 = 393,216,000 MLP, 2 x 5120 layer norms and 2 x 128
 * QK-norms: 487,598,336; x 64 = 31,206,293,504 (the card's 31.2B
 * without embeddings); + 2 x 151936 x 5120 + 5120 = 32,762,123,264
 * (the card's 32.8B). */
Test(model, qwen3_32b_params_exact)
{
	struct model *m = load_model("models/zoo/qwen3-32b.json");
	cr_expect_eq(model_q_width(m), 8192);
	cr_expect_eq(model_kv_width(m), 1024);
	cr_expect_eq(model_layer_params(m), 487598336.0);
	cr_expect_eq(model_params(m), 32762123264.0);
	model_destroy(m);
	check_params("models/zoo/qwen3-32b.json");
}

/* Llama 3 8B's file with extra keys after "kv_heads": 8. */
static struct model *llama3_8b_with(const char *extra)
{
	return load_model_with("models/zoo/llama3-8b.json", "\"kv_heads\": 8,", extra);
}

static const struct wl_shape SHAPE_TP2 = { .micro_batch = 2, .seq = 4096, .tp = 2, .sp = true,
					   .dtype = DTYPE_BF16, .attention = ATTN_FLASH, .cp = 1, .ep = 1,
					   .attn_backend = { ATTN_BE_BEST, ATTN_BE_BEST } };

/* A head_dim equal to h / a is what leaving it out means: the same
 * parameters and, op by op, the same work. */
Test(model, head_dim_of_h_over_heads_changes_nothing)
{
	struct model *a = load_model("models/zoo/llama3-8b.json"), *b = llama3_8b_with("\"head_dim\": 128,");
	cr_expect_eq(model_params(a), model_params(b));
	for (int blk = 0; blk < WL_NBLOCKS; blk++)
		for (int pass = PASS_FWD; pass <= PASS_BWD; pass++) {
			struct op_list la, lb;
			op_list_init(&la), op_list_init(&lb);
			workload_block(a, &SHAPE_TP2, blk, pass, RECOMPUTE_NONE, &la);
			workload_block(b, &SHAPE_TP2, blk, pass, RECOMPUTE_NONE, &lb);
			cr_assert_eq(la.n, lb.n, "block %d pass %d", blk, pass);
			for (int i = 0; i < la.n; i++) {
				cr_expect_str_eq(la.v[i].name, lb.v[i].name);
				cr_expect_eq(la.v[i].flops, lb.v[i].flops, "%s", la.v[i].name);
				cr_expect_eq(la.v[i].bytes, lb.v[i].bytes, "%s", la.v[i].name);
			}
			op_list_finish(&la), op_list_finish(&lb);
		}
	model_destroy(a), model_destroy(b);
}

/* The forward GEMM FLOPs of an attention block: 2 T (h (q + 2 kv) + q h)
 * / t, whatever h / a is. */
static double attn_gemm_flops_of(const struct model *m, const struct wl_shape *s)
{
	struct op_list l;
	op_list_init(&l);
	workload_block(m, s, WL_ATTN, PASS_FWD, RECOMPUTE_NONE, &l);
	double f = 0;
	for (int i = 0; i < l.n; i++)
		if (l.v[i].kind == OP_GEMM)
			f += l.v[i].flops;
	op_list_finish(&l);
	return f;
}

Test(model, head_dim_sets_the_attention_widths)
{
	/* Llama 3 8B with heads of 256: q 8192, kv 2048 on h 4096 */
	struct model *m = llama3_8b_with("\"head_dim\": 256,");
	double T = 2 * 4096, h = 4096, q = 32 * 256, kv = 8 * 256;
	cr_expect_eq(model_attn_params(m), h * (q + 2 * kv) + q * h);
	cr_expect_float_eq(attn_gemm_flops_of(m, &SHAPE_TP2), 2 * T * (h * (q + 2 * kv) + q * h) / 2, 1e-3);
	/* the model FLOPs: 6 x those weights per token, and the core at d 256 */
	double base = model_iteration_flops(m, 1, 4096);
	struct model *ref = load_model("models/zoo/llama3-8b.json");
	double dw = 6 * 4096 * 32 * (h * (q + 2 * kv) + q * h - (h * (h + 2 * 1024) + h * h));
	double dcore = 3 * 32 * 4096 * (2.0 * 4096 * 32 * (256 + 256 - 128 - 128)); /* L tok 2 s a dd */
	cr_expect_float_eq(base - model_iteration_flops(ref, 1, 4096), dw + dcore, 1e-6 * base);
	/* a heads count that does not divide h is fine with a head_dim */
	model_destroy(m);
	char *d = tmp_dir(), *p = write_file(d, "m.json",
		"{\"schema\":\"ddlsim.model\",\"schema_version\":\"1.3\",\"name\":\"x\",\"source\":\"t\","
		"\"architecture\":\"decoder_transformer\",\"layers\":2,\"hidden_size\":4096,"
		"\"heads\":40,\"kv_heads\":8,\"head_dim\":96,\"vocab_size\":10}");
	struct diag dg;
	diag_init(&dg, NULL);
	m = model_load(p, &dg);
	cr_assert_not_null(m, "%s", diag_text(&dg));
	cr_expect_eq(model_q_width(m), 40 * 96);
	cr_expect_eq(model_kv_width(m), 8 * 96);
	diag_finish(&dg);
	free(p), free(d);
	model_destroy(m), model_destroy(ref);
}

Test(model, qk_norm_is_a_norm_of_each_head_of_q_and_k)
{
	struct model *a = load_model("models/zoo/llama3-8b.json"), *b = llama3_8b_with("\"qk_norm\": true,");
	cr_expect_eq(model_params(b) - model_params(a), 32 * 2 * 128);  /* L x (q, k) x d */
	struct op_list l;
	op_list_init(&l);
	workload_block(b, &SHAPE_TP2, WL_ATTN, PASS_FWD, RECOMPUTE_NONE, &l);
	const struct op *qk = NULL;
	for (int i = 0; i < l.n; i++)
		if (!strcmp(l.v[i].name, "qk_norm"))
			qk = &l.v[i];
	cr_assert_not_null(qk, "no qk_norm op");
	cr_expect_eq(qk->row, 128);  /* a row is one head */
	op_list_finish(&l);
	op_list_init(&l);
	workload_block(a, &SHAPE_TP2, WL_ATTN, PASS_FWD, RECOMPUTE_NONE, &l);
	for (int i = 0; i < l.n; i++)
		cr_expect_str_neq(l.v[i].name, "qk_norm");
	op_list_finish(&l);
	model_destroy(a), model_destroy(b);
}

Test(model, head_dim_and_qk_norm_refused_with_mla)
{
	char *text = test_file_text(src_path("models/zoo/deepseek-v3.json"));
	char *at = strstr(text, "\"layers\"");
	cr_assert_not_null(at);
	char buf[16384];
	snprintf(buf, sizeof(buf), "%.*s\"head_dim\": 128, \"qk_norm\": true, %s", (int)(at - text), text, at);
	char *d = tmp_dir(), *p = write_file(d, "m.json", buf);
	struct diag dg;
	diag_init(&dg, NULL);
	cr_assert_null(model_load(p, &dg));
	cr_expect(strstr(diag_text(&dg), "/head_dim: error: must be left out with \"mla\""), "%s", diag_text(&dg));
	cr_expect(strstr(diag_text(&dg), "/qk_norm: error: applies to standard attention"), "%s", diag_text(&dg));
	diag_finish(&dg);
	free(text), free(p), free(d);
}

/* ---- sliding-window attention (model.h, attention.h) ------------------ */

/* s w - w^2 / 2 pairs of s^2 / 2: at s 4096, w 128, 516,096 of
 * 8,388,608; a causal kernel of 252 tokens sees as many keys a row. */
Test(model, attention_window_ratio_by_hand)
{
	cr_expect_eq(attention_window_ratio(4096, 128), 516096.0 / 8388608.0);
	cr_expect_eq(attention_window_seq(4096, 128), 252);
	cr_expect_eq(attention_window_ratio(4096, 4096), 1);
	cr_expect_eq(attention_window_ratio(4096, 8192), 1);
	cr_expect_eq(attention_window_ratio(4096, 0), 1);
}

/* gpt-oss-120b (models/zoo/gpt-oss-120b.json): attention 2880 x (4096 +
 * 2 x 512) + 4096 x 2880 + biases 5120 + 2880 + 64 sinks = 26,550,144;
 * norms 5760; router 2880 x 128 = 368,640; 128 experts of 3 x 2880^2 +
 * 2 x 2880 + 2880 = 24,891,840: 3,213,080,064 a layer, x 36 =
 * 115,670,882,304; + 2 x 201088 x 2880 + 2880 = 116,829,152,064 (the
 * card's 116.8B). Layers 0, 2, 4, ... slide, 1, 3, 5, ... see all. */
Test(model, gpt_oss_120b_params_and_layers_exact)
{
	struct model *m = load_model("models/zoo/gpt-oss-120b.json");
	cr_expect_eq(model_attn_params(m), 26550144.0);
	cr_expect_eq(model_layer_params(m), 3213080064.0);
	cr_expect_eq(model_params(m), 116829152064.0);
	cr_expect(model_layer_slides(m, 0) && !model_layer_slides(m, 1) && model_layer_slides(m, 34) &&
		  !model_layer_slides(m, 35));
	cr_expect_eq(model_sliding_layers_in(m, 0, 36), 18);
	cr_expect_eq(model_sliding_layers_in(m, 3, 4), 2);
	model_destroy(m);
	check_params("models/zoo/gpt-oss-120b.json");
	/* Gemma 3's five windowed layers to one global: every sixth sees all */
	m = llama3_8b_with("\"sliding_window\": 1024, \"global_every\": 6,");
	cr_expect_eq(model_sliding_layers_in(m, 0, 12), 10);
	cr_expect(!model_layer_slides(m, 5) && !model_layer_slides(m, 11) && model_layer_slides(m, 6));
	model_destroy(m);
}

/* A sliding layer's flash kernel carries its window and the band's
 * FLOPs; a global layer's is the full causal kernel. */
Test(model, sliding_layers_price_only_the_band)
{
	struct model *m = load_model("models/zoo/gpt-oss-120b.json");
	struct wl_shape s = SHAPE_TP2;
	s.tp = 1, s.sp = false, s.seq = 8192, s.ep = 8;
	for (int slide = 0; slide < 2; slide++) {
		s.sliding = slide;
		for (int pass = PASS_FWD; pass <= PASS_BWD; pass++) {
			struct op_list l;
			op_list_init(&l);
			workload_block(m, &s, WL_ATTN, pass, RECOMPUTE_NONE, &l);
			int n = 0;
			for (int i = 0; i < l.n; i++) {
				const struct op *o = &l.v[i];
				if (o->kind != OP_ATTN)
					continue;
				n++;
				double full = attention_flops_qkv(ATTN_FLASH, true, pass == PASS_BWD, 2 * 64, 8192,
								  64, 64);
				cr_expect_eq(o->window, slide ? 128 : 0);
				cr_expect_float_eq(o->flops, full * (slide ? attention_window_ratio(8192, 128) : 1),
						   1e-9 * full);
			}
			cr_expect_eq(n, 1);
			op_list_finish(&l);
		}
	}
	model_destroy(m);
}

/* The model FLOPs count a sliding layer's query against min(s, w) keys:
 * 18 of 36 layers at 128 instead of 8192 keys, 2 x 64 heads x (64 + 64)
 * a key, three passes. */
Test(model, model_flops_count_the_window_span)
{
	struct model *m = load_model("models/zoo/gpt-oss-120b.json");
	double slid = model_iteration_flops(m, 1, 8192);
	m->sliding_window = 0;
	double full = model_iteration_flops(m, 1, 8192);
	cr_expect_float_eq(full - slid, 3 * 8192.0 * (2 * 64 * 128) * 18 * (8192 - 128), 1e-9 * full);
	model_destroy(m);
}

/* Llama 3 8B's file with a window, written beside the scenario, run on
 * one DGX H100 (TP 8) at 8k tokens: its iteration time. */
static double windowed_llama_time(const char *extra)
{
	struct model *m = llama3_8b_with(extra);   /* asserts it loads */
	model_destroy(m);
	char *text = test_file_text(src_path("models/zoo/llama3-8b.json"));
	char *at = strstr(text, "\"kv_heads\": 8,") + strlen("\"kv_heads\": 8,");
	char buf[8192], sc[4096];
	snprintf(buf, sizeof(buf), "%.*s %s %s", (int)(at - text), text, extra, at);
	char *d = tmp_dir(), *p = write_file(d, "m.json", buf);
	snprintf(sc, sizeof(sc),
		 "{\"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\", \"model\": \"%s\","
		 " \"topology\": \"%s\", \"nodes\": 1, \"parallel\": {\"tp\": 8, \"sp\": true},"
		 " \"training\": {\"seq_len\": 8192, \"global_batch\": 4, \"micro_batch\": 1,"
		 " \"precision\": \"bf16\"}}", p, src_path("topologies/dgx-h100.json"));
	json_t *r = report_of_text(sc);
	double t = jnum(r, "summary/iteration_time_s");
	json_decref(r);
	free(text), free(p), free(d);
	return t;
}

/* End to end: a window as long as the sequence is no window at all; a
 * 1024-token window on every layer shortens the step, on every other
 * layer by half as much. */
Test(model, a_window_shortens_the_step_of_its_layers_only, .timeout = 120)
{
	double none = windowed_llama_time(""), whole = windowed_llama_time("\"sliding_window\": 8192,");
	double half = windowed_llama_time("\"sliding_window\": 1024, \"global_every\": 2,");
	double all = windowed_llama_time("\"sliding_window\": 1024,");
	cr_expect_float_eq(whole, none, 1e-12 * none);
	cr_expect_lt(all, none);
	/* one node, no data parallelism: the step is its layers' sum, half
	 * of them windowed */
	cr_expect_float_eq(half, (none + all) / 2, 1e-9 * none);
	cr_log_info("iteration: %.6f s no window, %.6f every other layer, %.6f every layer", none, half, all);
}

/* The ring's chunks of a windowed model are refused, Ulysses is not. */
Test(model, context_parallel_ring_refused_with_a_window, .timeout = 120)
{
	char *d = tmp_dir(), sc[2048], args[2400], *err = NULL;
	const char *fmt = "{\"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\", \"model\": \"%s\","
			  " \"topology\": \"%s\", \"nodes\": 8, \"parallel\": {\"tp\": 1, \"ep\": 8, \"cp\": 2,"
			  " \"pp\": 4, \"cp_comm\": \"%s\"}, \"training\": {\"seq_len\": 8192, \"global_batch\": 16,"
			  " \"micro_batch\": 1, \"precision\": \"bf16\"}}";
	snprintf(sc, sizeof(sc), fmt, src_path("models/zoo/gpt-oss-120b.json"), src_path("topologies/dgx-h100.json"),
		 "p2p");
	char *p = write_file(d, "s.json", sc);
	snprintf(args, sizeof(args), "validate '%s'", p);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3);
	cr_expect(strstr(err, "/parallel/cp: error: the ring's chunks of a sliding-window model (gpt-oss-120b: "
			      "window 128) are not modelled"), "%s", err);
	free(err), free(p);
	snprintf(sc, sizeof(sc), fmt, src_path("models/zoo/gpt-oss-120b.json"), src_path("topologies/dgx-h100.json"),
		 "a2a");
	p = write_file(d, "s.json", sc);
	err = NULL;
	int rc = run_ddlsim(args, NULL, &err);  /* valid; 4 where it does not fit */
	cr_expect(rc == 0 || rc == 4, "exit %d: %s", rc, err);
	cr_expect(!strstr(err, "/parallel/cp"), "%s", err);
	free(err), free(p), free(d);
}

/* A short-k GEMM with a large output (LLMCompass's A100 Q K^T: b 192,
 * 2048 x 2048 x 128 fp16, validation/kernels/llmcompass-a100-gemm.csv):
 * on the A100 preset with gemm_epilogue.serial on the output tile is stored
 * after the mainloop, so the GEMM costs its compute plus the output's
 * write, its compute at the preset's mainloop ceiling; on the H100
 * (persistent kernels) the larger of compute and all bytes. Each computed
 * from the preset's figures. */
Test(model, serial_epilogue_adds_the_output_write_on_a100_not_h100)
{
	const char *names[2] = { "gpus/a100-sxm4-80gb.json", "gpus/h100-sxm5-80gb.json" };
	for (int i = 0; i < 2; i++) {
		struct gpu_spec g;
		struct diag d;
		diag_init(&d, stderr);
		cr_assert_eq(topology_gpu_preset_load(src_path(names[i]), &g, &d), 0, "%s", names[i]);
		diag_finish(&d);
		/* off by default on every preset (gpus/a100-sxm4-80gb.json
		 * gemm_epilogue.source says why); the A100 carries its
		 * mainloop ceiling, so switching it on prices the serial form */
		cr_assert(!g.gemm_epilogue_serial, "%s", names[i]);
		g.gemm_epilogue_serial = i == 0;
		double b = 192, m = 2048, n = 2048, k = 128;
		struct op op = { .kind = OP_GEMM, .dtype = DTYPE_FP16, .batch = b, .m = m, .n = n,
				 .k = k };
		op.flops = 2 * b * m * n * k;
		op.out_bytes = b * m * n * 2;
		op.bytes = b * (m * k + k * n) * 2 + op.out_bytes;
		double bw = g.hbm_bw_Bps * g.mem_eff_max;
		/* 16 x 8 tiles per matrix x 192: whole waves of full tiles */
		double tiles = (m / g.gemm_tile_m) * (n / g.gemm_tile_n) * b;
		double waves = ceil(tiles / g.sm_count);
		/* the A100's mainloop ceiling: gemm_max less its benchmark's write */
		double emax = i == 0 ? g.gemm_mainloop_max : g.gemm_eff_max;
		cr_assert(emax > 0, "%s", names[i]);
		double comp = op.flops / (g.peak_flops[DTYPE_FP16] * emax) *
			      waves * g.sm_count / tiles;
		double in_t = (op.bytes - op.out_bytes) / bw, out_t = op.out_bytes / bw;
		double want = i == 0 ? fmax(comp, in_t) + out_t : fmax(comp, op.bytes / bw);
		want += g.kernel_launch_s;
		double got = cost_roofline_time_isolated(&g, &op);
		cr_expect_float_eq(got, want, 1e-9 * want, "%s: %g s, want %g", names[i], got, want);
		if (i == 0) /* the write is most of the price: not max(compute, bytes) */
			cr_expect_gt(got, 1.4 * (fmax(comp, op.bytes / bw) + g.kernel_launch_s));
	}
}
