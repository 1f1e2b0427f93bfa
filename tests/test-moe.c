/* test-moe: mixture of experts: parameter counts against the published
 * ones, routing imbalance against its closed form, the expert-parallel
 * placement, the token all-to-all volume of a simulated iteration against
 * T k h bytes per dispatch and combine, plan_check's messages for ep, and
 * the memory anatomy with experts sharded over ep; zb-h1 with ep, whose
 * B leaves the experts' weight gradients to W. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "memory.h"
#include "model.h"
#include "moe.h"
#include "placement.h"
#include "scenario.h"
#include "simulate.h"
#include "testutil.h"

static struct model *load(const char *rel)
{
	struct diag d;
	diag_init(&d, stderr);
	struct model *m = model_load(src_path(rel), &d);
	cr_assert(m, "cannot load %s", rel);
	diag_finish(&d);
	return m;
}

Test(moe, mixtral_counts_match_the_published_46_7b_total_12_9b_active)
{
	struct model *m = load("models/zoo/mixtral-8x7b.json");
	/* Jiang et al. 2024: "47B total parameters ... 13B active"; the
	 * config gives 46,702,792,704 and 12,879,925,248 exactly */
	cr_expect_eq(model_params(m), 46702792704.0);
	cr_expect_eq(model_active_params(m), 12879925248.0);
	cr_expect(fabs(model_params(m) / 46.7e9 - 1) < 0.001);
	cr_expect(fabs(model_active_params(m) / 12.9e9 - 1) < 0.002);
	/* one layer: attention 41,943,040 + router 32,768 + norms 8,192 +
	 * 8 experts x 3 x 4096 x 14336 */
	cr_expect_eq(model_layer_expert_params(m), 8.0 * 3 * 4096 * 14336);
	cr_expect_eq(model_layer_params(m), 41943040.0 + 32768 + 8192 + 8.0 * 3 * 4096 * 14336);
	model_destroy(m);
}

Test(moe, deepseek_v3_class_is_within_its_stated_approximation)
{
	struct model *m = load("models/zoo/deepseek-v3-class.json");
	/* the file says: +5% total (all 61 layers MoE, MHA for MLA), +5% active */
	cr_expect(fabs(model_params(m) / m->published_params - 1) < 0.06);
	cr_expect(fabs(model_active_params(m) / m->published_active_params - 1) < 0.06);
	model_destroy(m);
}

Test(moe, model_flops_count_activated_parameters_only)
{
	struct model *m = load("models/zoo/mixtral-8x7b.json");
	/* 6 N per token for the layers' GEMMs and the LM head, plus attention
	 * (Megatron's 4 s h per layer forward, x 3) */
	double h = 4096, s = 4096, L = 32;
	double n_gemm = L * (model_layer_active_params(m) - 8192) + 32000 * h;
	double want = 6 * n_gemm * s + 3 * L * 4 * s * h * s;
	cr_expect(fabs(model_iteration_flops(m, 1, s) / want - 1) < 1e-12,
		  "%g vs %g", model_iteration_flops(m, 1, s), want);
	model_destroy(m);
}

/* Harmonic number H_n(s) = sum_{i=1..n} i^-s. */
static double harmonic(int n, double s)
{
	double x = 0;
	for (int i = 1; i <= n; i++)
		x += pow(i, -s);
	return x;
}

Test(moe, imbalance_is_one_for_uniform_routing)
{
	struct moe_config c = { .experts = 64, .top_k = 8, .expert_ffn = 1 };
	struct moe_balance b;
	moe_balance(&c, MOE_DIST_UNIFORM, 0, 0, 8, &b);
	cr_expect_float_eq(b.imbalance, 1.0, 1e-12);
	cr_expect_float_eq(b.rank_load, 1.0, 1e-12);
	cr_expect_float_eq(b.kept_fraction, 1.0, 1e-12);
	/* capacity above the balanced load drops nothing */
	moe_balance(&c, MOE_DIST_UNIFORM, 0, 1.25, 8, &b);
	cr_expect_float_eq(b.kept_fraction, 1.0, 1e-12);
}

Test(moe, zipf_imbalance_follows_the_harmonic_closed_form)
{
	struct moe_config c = { .experts = 8, .top_k = 2, .expert_ffn = 1 };
	struct moe_balance b;
	/* one expert per rank, dropless: the hottest gets E / H_E(s) balanced loads */
	moe_balance(&c, MOE_DIST_ZIPF, 1.0, 0, 8, &b);
	cr_expect_float_eq(b.imbalance, 8 / harmonic(8, 1), 1e-12);
	cr_expect_float_eq(b.rank_load, 8 / harmonic(8, 1), 1e-12);
	cr_expect_eq(b.busiest_rank, 0);
	/* capacity 1.25: every expert above 1.25 loads is cut to it */
	double kept = 0;
	for (int e = 1; e <= 8; e++)
		kept += fmin(8 / harmonic(8, 1) / e, 1.25);
	moe_balance(&c, MOE_DIST_ZIPF, 1.0, 1.25, 8, &b);
	cr_expect_float_eq(b.kept_fraction, kept / 8, 1e-12);
	cr_expect_float_eq(b.rank_load, 1.25, 1e-12);
	cr_expect_float_eq(b.imbalance, 1.25 / (kept / 8), 1e-12);
	/* 64 experts over 8 ranks: rank 0 holds experts 0..7 */
	c.experts = 64;
	moe_balance(&c, MOE_DIST_ZIPF, 1.2, 0, 8, &b);
	cr_expect_float_eq(b.rank_load, harmonic(8, 1.2) / harmonic(64, 1.2) * 8, 1e-12);
	cr_expect_float_eq(b.imbalance, b.rank_load, 1e-12);
}

Test(moe, per_expert_loads_are_normalised)
{
	struct moe_config c = { .experts = 4, .top_k = 1, .expert_ffn = 1, .nloads = 4,
				.loads = { 4, 2, 1, 1 } };
	struct moe_balance b;
	moe_balance(&c, MOE_DIST_LOADS, 0, 0, 2, &b);
	/* rank 0: experts 0, 1 = 6/8 of the copies against a balanced 1/2 */
	cr_expect_float_eq(b.rank_load, 1.5, 1e-12);
	cr_expect_float_eq(b.imbalance, 1.5, 1e-12);
}

Test(moe, expert_groups_lie_inside_the_data_parallel_group)
{
	struct placement pl;
	int g[64];
	/* Megatron-Core's tp-cp-ep-dp-pp: tp 2, dp 8 = ep 4 x 2, pp 2 */
	cr_assert_eq(placement_init_ep(&pl, 2, 1, 4, 8, 2, NULL), 0);
	cr_expect_eq(placement_group(&pl, GROUP_EP, 0, g), 4);
	for (int i = 0; i < 4; i++)
		cr_expect_eq(g[i], 2 * i);
	cr_expect_eq(placement_group(&pl, GROUP_EDP, 0, g), 2);
	cr_expect_eq(g[0], 0);
	cr_expect_eq(g[1], 8);
	cr_expect_eq(placement_group(&pl, GROUP_DP, 0, g), 8);
	for (int i = 0; i < 8; i++)
		cr_expect_eq(g[i], 2 * i);
	int c[DIM_N];
	placement_coords(&pl, 10, c);   /* tp 0, ep 1, d' 1: dp index 1 + 4 x 1 */
	cr_expect_eq(c[DIM_DP], 5);
	cr_expect_eq(c[DIM_EP], 1);
	cr_expect_eq(placement_rank(&pl, 0, 5, 0), 10);
	/* ep named outermost of the data-parallel part */
	cr_assert_eq(placement_init_ep(&pl, 2, 1, 4, 8, 2, "tp,dp,ep,pp"), 0);
	cr_expect_eq(placement_group(&pl, GROUP_EP, 0, g), 4);
	cr_expect_eq(g[1], 4);
	char buf[32];
	cr_expect_str_eq(placement_order_text(&pl, buf, sizeof(buf)), "tp,cp,dp,ep,pp");
	cr_expect_eq(placement_init_ep(&pl, 1, 1, 3, 8, 1, NULL), -1);
}

Test(moe, all_to_all_bytes_per_layer_match_the_closed_form)
{
	struct diag d;
	diag_init(&d, stderr);
	struct scenario *sc = scenario_load(src_path("scenarios/mixtral-8x7b-h100-ep8.json"), &d);
	cr_assert(sc);
	struct result r;
	cr_assert_eq(simulate_run(sc->in, &sc->plan, &r, &d), 0, "%s", diag_text(&d));
	/* N = T k h x 2 bytes: 4096 tokens x top-2 x 4096 x bf16 */
	double N = 4096.0 * 2 * 4096 * 2;
	cr_expect_eq(r.moe_a2a_bytes, N);
	cr_expect_float_eq(r.moe_imbalance, 1.0, 1e-12);
	/* every rank sends (ep - 1) / ep of N in each of the 4 all-to-alls of
	 * a layer (dispatch, combine, forward and backward), 8 layers per
	 * stage, 16 micro-batches */
	cr_expect_float_eq(r.comm_bytes_per_gpu[CAT_EP_COMM], 16 * 8 * 4 * N * 7 / 8, 1e-9 * N);
	cr_expect_eq(r.active_params, 12879925248.0);
	result_finish(&r);
	scenario_destroy(sc);
	diag_finish(&d);
}

/* The shipped Mixtral EP 8 scenario with `from` replaced by `to`, run
 * into dir/name; its report (caller json_decref()s). */
static json_t *run_mixtral_with(const char *dir, const char *name, const char *from, const char *to)
{
	static char text[8192];
	char doc[9000], out[700], args[1600];
	FILE *f = fopen(src_path("scenarios/mixtral-8x7b-h100-ep8.json"), "r");
	cr_assert(f);
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = 0;
	char *at = strstr(text, from);
	cr_assert(at, "no '%s' in the scenario", from);
	snprintf(doc, sizeof(doc), "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
	char *rel = doc, *p;
	while ((p = strstr(rel, "\"../")) != NULL) {
		char tail[9000];
		snprintf(tail, sizeof(tail), "%s", p + 4);
		snprintf(p, sizeof(doc) - (size_t)(p - doc), "\"%s/%s", src_path(""), tail);
		rel = p + 1;
	}
	char *path = write_file(dir, name, doc);
	snprintf(out, sizeof(out), "%s/%s.out", dir, name);
	snprintf(args, sizeof(args), "run '%s' --out '%s' --quiet --format json", path, out);
	cr_assert_eq(run_ddlsim(args, NULL, NULL), 0, "%s", doc);
	free(path);
	json_t *rep = load_report(out);
	cr_assert(rep);
	return rep;
}

Test(moe, zipf_routing_slows_the_iteration_and_capacity_bounds_it)
{
	char *dir = tmp_dir();
	double t[3];
	const char *moe[3] = { "", ", \"moe\": { \"routing\": \"zipf\", \"zipf_s\": 1.0 }",
			       ", \"moe\": { \"routing\": \"zipf\", \"zipf_s\": 1.0, \"capacity_factor\": 1.25 }" };
	const char *end = "\"precision\": \"bf16\"\n  }";
	for (int i = 0; i < 3; i++) {
		char name[32], to[160];
		snprintf(name, sizeof(name), "s%d.json", i);
		snprintf(to, sizeof(to), "%s%s", end, moe[i]);
		json_t *rep = run_mixtral_with(dir, name, end, to);
		t[i] = jnum(rep, "summary/iteration_time_s");
		if (i == 1)
			cr_expect_float_eq(jnum(rep, "moe/imbalance_factor"), 8 / harmonic(8, 1), 1e-9);
		if (i == 2)
			cr_expect_float_eq(jnum(rep, "moe/busiest_rank_load"), 1.25, 1e-9);
		json_decref(rep);
	}
	cr_expect(t[1] > 1.5 * t[0], "zipf %g vs uniform %g", t[1], t[0]);
	cr_expect(t[2] > t[0] && t[2] < t[1], "capacity %g between %g and %g", t[2], t[0], t[1]);
	free(dir);
}

/* zb-h1 with expert parallelism: B runs the experts' dispatch, input
 * gradients and combine, W their weight gradients (blocks.h moe_wgrad),
 * so the work is 1F1B's (each stage's backward per micro-batch, and the
 * mean compute within what the all-to-all kernels' overlap moves: 0.1 %)
 * and the bubble shrinks. Were B to keep the experts' wgrad as well, the
 * compute would grow by it. */
Test(moe, zb_h1_with_ep_moves_the_experts_wgrad_to_w)
{
	char *dir = tmp_dir();
	json_t *one = run_mixtral_with(dir, "1f1b.json", "\"zero\": 1", "\"zero\": 1, \"schedule\": \"1f1b\"");
	json_t *zb = run_mixtral_with(dir, "zb.json", "\"zero\": 1", "\"zero\": 1, \"schedule\": \"zb-h1\"");
	for (int s = 0; s < 4; s++) {
		char k[96];
		snprintf(k, sizeof(k), "breakdown/per_stage/%d/compute_bwd_per_microbatch_s", s);
		cr_expect_float_eq(jnum(zb, k), jnum(one, k), 1e-12, "%s", k);
	}
	double c1 = jnum(one, "breakdown/mean/compute_s"), cz = jnum(zb, "breakdown/mean/compute_s");
	cr_expect_leq(fabs(cz - c1), 1e-3 * c1, "compute: zb-h1 %.9g s, 1f1b %.9g s", cz, c1);
	double t1 = jnum(one, "summary/iteration_time_s"), tz = jnum(zb, "summary/iteration_time_s");
	cr_expect_lt(tz, 0.95 * t1, "zb-h1 %.6g s, 1f1b %.6g s", tz, t1);
	cr_expect_lt(jnum(zb, "breakdown/mean/bubble_s"), jnum(one, "breakdown/mean/bubble_s"));
	json_decref(one);
	json_decref(zb);
	free(dir);
}

Test(moe, memory_shards_experts_over_ep_and_their_optimizer_over_dp_over_ep)
{
	struct model *m = load("models/zoo/mixtral-8x7b.json");
	struct gpu_spec g = { .hbm_bytes = 80e9 };
	struct mem_rank_input in = { .model = m, .gpu = &g, .dtype = DTYPE_BF16, .micro_batch = 1,
				     .seq = 4096, .tp = 1, .dp = 16, .pp = 4, .ep = 8, .zero = ZERO_1,
				     .layers = 8, .inflight = 1, .attention = ATTN_FLASH };
	struct mem_anatomy o;
	memory_rank(&in, &o);
	double dense = 8 * (model_layer_params(m) - model_layer_expert_params(m));
	double expert = 8 * model_layer_expert_params(m) / 8;
	cr_expect_float_eq(o.params_local, dense + expert, 1);
	cr_expect_float_eq(o.weights_bytes, 2 * (dense + expert), 1);
	/* Adam's 12 bytes: dense over 16 DP ranks, experts over 16 / 8 = 2 */
	cr_expect_float_eq(o.optimizer_bytes, 12 * (dense / 16 + expert / 2), 1);
	/* without ep every rank holds all 8 experts */
	in.ep = 1;
	memory_rank(&in, &o);
	cr_expect_float_eq(o.params_local, dense + 8 * expert, 1);
	model_destroy(m);
}

/* Run `ddlsim run` on a copy of the shipped scenario with sed-like edits;
 * expect exit 3 and the exact messages. */
static void expect_plan_error(const char *from, const char *to, const char *want_fmt)
{
	FILE *f = fopen(src_path("scenarios/mixtral-8x7b-h100-ep8.json"), "r");
	static char text[8192], doc[9000];
	cr_assert(f);
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = 0;
	char *p = strstr(text, from);
	cr_assert(p, "%s", from);
	snprintf(doc, sizeof(doc), "%.*s%s%s", (int)(p - text), text, to, p + strlen(from));
	char *q;
	while ((q = strstr(doc, "\"../")) != NULL) {
		char tail[9000];
		snprintf(tail, sizeof(tail), "%s", q + 4);
		snprintf(q, sizeof(doc) - (size_t)(q - doc), "\"%s%s", src_path(""), tail);
	}
	char *dir = tmp_dir(), *path = write_file(dir, "s.json", doc), args[1200], want[2048], *err;
	snprintf(args, sizeof(args), "run '%s' --out '%s/o' --quiet", path, dir);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3);
	snprintf(want, sizeof(want), want_fmt, path, path);
	cr_expect_str_eq(err, want);
	free(err), free(path), free(dir);
}

Test(moe, ep_must_divide_the_experts_and_the_dp_group)
{
	expect_plan_error("\"ep\": 8", "\"ep\": 3",
		"%s: /parallel/ep: error: must divide the model's 8 experts, got 3\n"
		"%s: /parallel/ep: error: must divide the data-parallel degree dp = 16 (expert "
		"parallelism lives inside the DP group), got 3\n");
}

Test(moe, ep_needs_an_moe_model_and_tp_needs_sp)
{
	expect_plan_error("mixtral-8x7b.json", "llama3-70b.json",
		"%s: /parallel/ep: error: expert parallelism needs a mixture-of-experts model (a \"moe\" "
		"object in the model file), got ep = 8\n");
	expect_plan_error("\"tp\": 1", "\"tp\": 2",
		"%s: /parallel/sp: error: mixture of experts with tensor parallelism needs sequence "
		"parallelism (Megatron-LM arguments.py), got tp = 2 without sp\n");
	expect_plan_error("\"ep\": 8", "\"ep\": 8, \"bn_group\": 2",
		"%s: /parallel/bn_group: error: batch-norm groups apply to CNN models only, got 2\n");
}
