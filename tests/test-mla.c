/* test-mla: multi-head latent attention and DeepSeek-V3's MoE layout:
 * parameter counts against the published 671B / 37B and the config's
 * arithmetic, per-token FLOPs of an MLA layer against DeepSeek-V2's
 * equations (section 2.1) in closed form, the activation bytes an MLA
 * layer stores, node-limited routing's cross-node copies (DeepSeek-V3
 * sections 2.1.2 and 3.2.2), the first three layers priced, stored and
 * held as dense layers (FLOPs per token, parameters per stage, EP
 * all-to-alls on MoE layers only), and the loader's messages for bad
 * keys. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anatomy.h"
#include "build_transformer.h"
#include "diag.h"
#include "inputs.h"
#include "memory.h"
#include "model.h"
#include "moe.h"
#include "op.h"
#include "plan.h"
#include "program.h"
#include "stack.h"
#include "testutil.h"
#include "workload.h"

static struct model *load(const char *rel)
{
	struct diag d;
	diag_init(&d, stderr);
	struct model *m = model_load(src_path(rel), &d);
	cr_assert(m, "cannot load %s", rel);
	diag_finish(&d);
	return m;
}

/* DeepSeek-V3's config.json */
#define H 7168.0
#define A 128.0
#define QL 1536.0
#define KL 512.0
#define NOPE 128.0
#define ROPE 64.0
#define VD 128.0
#define V 129280.0

Test(mla, deepseek_v3_counts_match_the_published_671b_total_37b_active)
{
	struct model *m = load("models/zoo/deepseek-v3.json");
	double attn = H * QL + QL + QL * A * (NOPE + ROPE) + H * (KL + ROPE) + KL +
		      KL * A * (NOPE + VD) + A * VD * H;
	double expert = 3 * H * 2048, dense = 3 * H * 18432;
	double moe_all = 256 * H + 256 * expert + expert, moe_act = 256 * H + 8 * expert + expert;
	double outside = V * H + V * H + H;        /* embedding, head, final norm */
	cr_expect_eq(model_attn_params(m), 187107328.0);
	cr_expect_eq(model_attn_params(m), attn);
	cr_expect_eq(model_params(m), 61 * (attn + 2 * H) + 3 * dense + 58 * moe_all + outside);
	cr_expect_eq(model_params(m), 671026404352.0);
	cr_expect_eq(model_active_params(m), 61 * (attn + 2 * H) + 3 * dense + 58 * moe_act + outside);
	cr_expect_eq(model_active_params(m), 37552282624.0);
	/* the report's figures, to the digit (whole billions) */
	cr_expect_eq(floor(model_params(m) / 1e9), 671);
	cr_expect_eq(floor(model_active_params(m) / 1e9), 37);
	cr_expect_eq(model_moe_layers(m), 58);
	model_destroy(m);
}

/* Forward FLOPs of one MLA attention block on T = b s tokens, tp 1, flash:
 * the five projections at 2 x weights per token (DeepSeek-V2 eqs. 9-19)
 * and the causal core 2 s^2 a (d_qk + d_v) / 2 per sequence. */
Test(mla, layer_flops_follow_the_papers_equations)
{
	struct model *m = load("models/zoo/deepseek-v3.json");
	struct wl_shape s = { .micro_batch = 2, .seq = 4096, .tp = 1, .dtype = DTYPE_BF16,
			      .attention = ATTN_FLASH };
	double T = 2 * 4096.0, sq = 4096.0, dqk = NOPE + ROPE;
	double gemm = 2 * T * (H * QL + QL * A * dqk + H * (KL + ROPE) + KL * A * (NOPE + VD) +
			       A * VD * H);
	double core = 2 * (2 * sq * sq * A * (dqk + VD)) / 2;
	struct op_list l;
	op_list_init(&l);
	cr_assert_eq(workload_block(m, &s, WL_ATTN, PASS_FWD, RECOMPUTE_NONE, &l), 0);
	cr_expect(fabs(op_list_flops(&l) / (gemm + core) - 1) < 1e-12, "%g vs %g",
		  op_list_flops(&l), gemm + core);
	op_list_finish(&l);
	/* backward: data and weight gradients, the flash backward 2 s^2 (3 d_qk + 2 d_v) c */
	op_list_init(&l);
	cr_assert_eq(workload_block(m, &s, WL_ATTN, PASS_BWD, RECOMPUTE_NONE, &l), 0);
	double core_b = 2 * (2 * sq * sq * A * (3 * dqk + 2 * VD)) / 2;
	cr_expect(fabs(op_list_flops(&l) / (2 * gemm + core_b) - 1) < 1e-12);
	op_list_finish(&l);
	/* tp 8: the down projections stay whole, the rest / 8 */
	s.tp = 8;
	op_list_init(&l);
	cr_assert_eq(workload_block(m, &s, WL_ATTN, PASS_FWD, RECOMPUTE_NONE, &l), 0);
	double down = 2 * T * (H * QL + H * (KL + ROPE));
	cr_expect(fabs(op_list_flops(&l) / (down + (gemm - down + core) / 8) - 1) < 1e-12);
	op_list_finish(&l);
	model_destroy(m);
}

Test(mla, model_flops_count_dense_first_layers_and_mla)
{
	struct model *m = load("models/zoo/deepseek-v3.json");
	double s = 4096, dqk = NOPE + ROPE;
	double attn = 2 * (H * QL + QL * A * dqk + H * (KL + ROPE) + KL * A * (NOPE + VD) + A * VD * H);
	double dense = attn + 2 * 3 * H * 18432;
	double moe = attn + 2 * (256 * H + 3 * H * 2048 * 9);
	double per_tok = 3 * dense + 58 * moe + 61 * 2 * s * A * (dqk + VD) + 2 * H * V;
	/* the MTP module (mtp_depth 1): an MoE block, eh_proj and the head again */
	per_tok += moe + 2 * s * A * (dqk + VD) + 2 * (2 * H) * H + 2 * H * V;
	cr_expect(fabs(model_iteration_flops(m, 1, s) / (3 * s * per_tok) - 1) < 1e-12);
	/* the kernels' count agrees with the model count without flash's causal halving */
	struct wl_shape w = { .micro_batch = 1, .seq = s, .tp = 1, .dtype = DTYPE_BF16,
			      .attention = ATTN_UNFUSED };
	double wf = workload_iteration_flops(m, &w, RECOMPUTE_NONE, 1);
	cr_expect(fabs(wf / model_iteration_flops(m, 1, s) - 1) < 1e-9, "%g vs %g", wf,
		  model_iteration_flops(m, 1, s));
	model_destroy(m);
}

/* Per token, forward, tp 1, flash: one MLA attention block (the core's
 * Q K^T and P V, 2 s a (d_qk + d_v), halved by the causal mask), a dense MLP of 18432, an MoE MLP (router, 8 routed
 * experts at a balanced load, the shared expert). */
#define ATTN_GEMM (2 * (H * QL + QL * A * (NOPE + ROPE) + H * (KL + ROPE) + \
			KL * A * (NOPE + VD) + A * VD * H))
#define CORE(s) ((s) * A * (NOPE + ROPE + VD))
#define DENSE_MLP (2 * 3 * H * 18432)
#define MOE_MLP (2 * H * 256 + 2 * 3 * H * 2048 * 8 + 2 * 3 * H * 2048)

/* DeepSeek-V3's parallel layout (scenarios/deepseek-v3-h100-2048.json) without
 * recomputation, 16 micro-batches: pp 16, ep 64, dp 128, ZeRO-1, fp8, tp 1. */
static struct inputs *v3_plan(struct plan *pl)
{
	struct diag d;
	diag_init(&d, stderr);
	struct inputs *in = inputs_load(src_path("models/zoo/deepseek-v3.json"),
					src_path("topologies/dgx-h100.json"), "roofline", NULL, &d);
	cr_assert(in);
	diag_finish(&d);
	plan_init(pl);
	pl->nodes = 256;
	pl->parallel.dp = 128;
	pl->parallel.pp = 16;
	pl->parallel.ep = 64;
	pl->parallel.zero = ZERO_1;
	pl->training.seq = 4096;
	pl->training.global_batch = 2048;
	pl->training.micro_batch = 1;
	pl->training.precision = DTYPE_FP8;
	plan_resolve(pl, in);
	return in;
}

/* The program of one stage: its compute FLOPs (forward and backward,
 * what the tasks stand for: 3 x forward) and its EP all-to-alls. */
static void stage_program(const struct inputs *in, const struct plan *pl, int stage,
			  double *flops, int *a2a, struct stage_result *sr)
{
	struct program p;
	program_init(&p);
	cr_assert_eq(build_transformer_program(in, pl, stage, &p, sr), 0);
	*flops = 0;
	*a2a = 0;
	for (int i = 0; i < p.n; i++) {
		if (p.t[i].kind == TASK_COMPUTE)
			*flops += p.t[i].flops;
		if (p.t[i].kind == TASK_COLL && p.t[i].group == GROUP_EP)
			*a2a += p.t[i].count > 1 ? p.t[i].count : 1;
	}
	program_finish(&p);
}

/* Stage 0 holds layers 0-3: the three dense first layers and one MoE
 * layer; stage 1 four MoE layers; stage 15 the last three, the head and
 * the MTP module (an MoE block, eh_proj 2h -> h, the head again). */
Test(mla, builder_prices_the_first_three_layers_as_dense)
{
	struct plan pl;
	struct inputs *in = v3_plan(&pl);
	double s = 4096, tok = 16 * s, f;
	int a2a;
	struct stage_result sr;

	stage_program(in, &pl, 0, &f, &a2a, &sr);
	double want = 3 * (4 * (ATTN_GEMM + CORE(s)) + 3 * DENSE_MLP + MOE_MLP);
	cr_expect(fabs(f / tok / want - 1) < 1e-12, "stage 0: %.6g FLOPs per token, want %.6g",
		  f / tok, want);
	/* dispatch and combine, forward and backward: the one MoE layer */
	cr_expect_eq(a2a, 16 * 1 * 4);
	stage_program(in, &pl, 1, &f, &a2a, &sr);
	want = 3 * 4 * (ATTN_GEMM + CORE(s) + MOE_MLP);
	cr_expect(fabs(f / tok / want - 1) < 1e-12, "stage 1: %.6g, want %.6g", f / tok, want);
	cr_expect_eq(a2a, 16 * 4 * 4);
	stage_program(in, &pl, 15, &f, &a2a, &sr);
	want = 3 * (4 * (ATTN_GEMM + CORE(s) + MOE_MLP) + 2 * (2 * H) * H + 2 * 2 * H * V);
	cr_expect(fabs(f / tok / want - 1) < 1e-12, "stage 15: %.6g, want %.6g", f / tok, want);
	cr_expect_eq(a2a, 16 * 4 * 4);
	inputs_destroy(in);
}

/* Parameters a rank of each stage holds: a dense layer is the attention,
 * two RMSNorms and the dense MLP; an MoE layer the same with the router,
 * the shared expert and 256 / 64 = 4 routed experts. */
Test(mla, stages_hold_dense_first_layers_and_experts_over_ep)
{
	struct plan pl;
	struct inputs *in = v3_plan(&pl);
	double attn = 187107328.0 + 2 * H, expert = 3 * H * 2048;
	double dense = attn + 3 * H * 18432, moe = attn + 256 * H + expert + 4 * expert;
	struct mem_anatomy o;

	anatomy_stage(in, &pl, 0, &o);
	cr_expect_eq(o.params_local, V * H + 3 * dense + moe);
	cr_expect_eq(o.params_local, 3086286848.0);
	anatomy_stage(in, &pl, 1, &o);
	cr_expect_eq(o.params_local, 4 * moe);
	anatomy_stage(in, &pl, 15, &o);
	cr_expect_eq(o.params_local, 4 * moe + V * H + H + 2 * H * H + 3 * H);  /* and the MTP module */
	/* the builder's stage result says the same */
	double f;
	int a2a;
	struct stage_result sr;
	stage_program(in, &pl, 0, &f, &a2a, &sr);
	cr_expect_eq(sr.mem.params_local, V * H + 3 * dense + moe);
	inputs_destroy(in);
}

/* bf16, flash, tp 1, one token: a dense first layer stores the MLA terms
 * (activation_bytes_follow_the_saved_tensors) and the dense SwiGLU MLP's
 * 2h + 2h + 2 x 2f + 2f; an MoE layer the norm and router inputs 2h +
 * 2h, k copies of h, each with 2 x 2 f_e + 2 f_e, and the shared expert's
 * 2 x 2 f_e + 2 f_e. */
Test(mla, dense_first_layers_store_the_dense_mlps_activations)
{
	struct model *m = load("models/zoo/deepseek-v3.json");
	struct gpu_spec g = { .hbm_bytes = 80e9 };
	struct mem_rank_input in = { .model = m, .gpu = &g, .dtype = DTYPE_BF16,
				     .attention = ATTN_FLASH, .micro_batch = 1, .seq = 1, .tp = 1,
				     .dp = 128, .pp = 16, .ep = 64, .zero = ZERO_1, .layers = 4,
				     .dense_layers = 3, .inflight = 16 };
	double dqk = NOPE + ROPE, fe = 2048;
	double attn = 4 * H + 4 * (QL + KL) + 2 * A * (2 * dqk + VD) + 2 * A * VD + 4 * A;
	double dense = attn + 4 * H + 6 * 18432;
	double moe = attn + 4 * H + 2 * H * 8 + 8 * 6 * fe + 6 * fe;
	cr_expect_eq(memory_dense_layer_activations(&in), dense);
	cr_expect_eq(memory_layer_activations(&in), moe);
	struct mem_anatomy o;
	memory_rank(&in, &o);
	cr_expect_eq(o.activations_bytes, 16 * (3 * dense + moe));
	cr_expect_eq(o.act_per_layer_bytes, (3 * dense + moe) / 4);
	/* every layer MoE (dense_layers 0): as before the first layers were told apart */
	in.dense_layers = 0;
	memory_rank(&in, &o);
	cr_expect_eq(o.activations_bytes, 16 * 4 * moe);
	model_destroy(m);
}

static const char *small_mla =
	"{\"schema\":\"ddlsim.model\",\"schema_version\":\"1.2\",\"name\":\"x\",\"source\":\"t\","
	"\"architecture\":\"decoder_transformer\",\"layers\":2,\"hidden_size\":1024,"
	"\"heads\":8,\"ffn_size\":4096,\"activation\":\"swiglu\",\"norm\":\"rmsnorm\","
	"\"vocab_size\":1000,\"mla\":{\"q_lora_rank\":256,\"kv_lora_rank\":128,"
	"\"qk_nope_head_dim\":64,\"qk_rope_head_dim\":32,\"v_head_dim\":64}}";

/* bf16, flash, no recompute: per token, attention 2h (norm input) + 2h
 * (down projections' input) + 4 (d_c' + d_c) (latents, norm input and
 * GEMM input) + 2 a (2 d_qk + d_v) (Q K V) + 2 a d_v (output) + 4 a
 * (LSE); the SwiGLU MLP 2h + 2h + 2 x 2f + 2f. */
Test(mla, activation_bytes_follow_the_saved_tensors)
{
	char *d = tmp_dir();
	char *p = write_file(d, "m.json", small_mla);
	struct diag dg;
	diag_init(&dg, stderr);
	struct model *m = model_load(p, &dg);
	cr_assert(m);
	struct mem_rank_input in = { .model = m, .dtype = DTYPE_BF16, .attention = ATTN_FLASH,
				     .micro_batch = 1, .seq = 1, .tp = 1 };
	double h = 1024, a = 8, f = 4096;
	double attn = 4 * h + 4 * (256 + 128) + 2 * a * (2 * 96 + 64) + 2 * a * 64 + 4 * a;
	double mlp = 4 * h + 6 * f;
	cr_expect_eq(memory_layer_activations(&in), attn + mlp);
	/* tp 2 with SP: replicated terms / 2, latents whole, heads / 2 */
	in.tp = 2;
	in.sp = true;
	double want = (4 * h + 4 * h) / 2 + 4 * (256 + 128) +
		      (2 * a * (2 * 96 + 64) + 2 * a * 64 + 4 * a + 6 * f) / 2;
	cr_expect_eq(memory_layer_activations(&in), want);
	model_destroy(m);
	diag_finish(&dg);
	free(p);
	free(d);
}

/* Megatron's recompute modules on the small MLA model (bf16, flash,
 * tp 1), bytes per token each frees (memory.h): layernorm the norms'
 * outputs the next GEMMs saved, 2h (down projections' input) + 2h (fc1
 * input); mla_up_proj Q, K, V, 2 a (2 d_qk + d_v); core_attn nothing
 * (flash); together the sum. */
Test(mla, recompute_modules_free_the_norm_outputs_and_qkv)
{
	char *d = tmp_dir();
	char *p = write_file(d, "m.json", small_mla);
	struct diag dg;
	diag_init(&dg, stderr);
	struct model *m = model_load(p, &dg);
	cr_assert(m);
	struct mem_rank_input in = { .model = m, .dtype = DTYPE_BF16, .attention = ATTN_FLASH,
				     .micro_batch = 1, .seq = 1, .tp = 1 };
	double h = 1024, a = 8, qkv = 2 * a * (2 * 96 + 64);
	double none = memory_layer_activations(&in);
	in.recompute = RECOMPUTE_SELECTIVE;
	in.recompute_modules = RC_MOD_CORE_ATTN;
	cr_expect_eq(memory_layer_activations(&in), none);
	in.recompute_modules = RC_MOD_LAYERNORM;
	cr_expect_eq(memory_layer_activations(&in), none - 4 * h);
	in.recompute_modules = RC_MOD_MLA_UP_PROJ;
	cr_expect_eq(memory_layer_activations(&in), none - qkv);
	in.recompute_modules = RC_MOD_LAYERNORM | RC_MOD_MLA_UP_PROJ | RC_MOD_CORE_ATTN;
	cr_expect_eq(memory_layer_activations(&in), none - 4 * h - qkv);
	model_destroy(m);
	diag_finish(&dg);
	free(p);
	free(d);
}

/* The recompute modules' forward ops in the backward (workload.h): with
 * mla_up_proj the attention block's backward runs q_up and kv_up again,
 * 2 T (d_c' a d_qk + d_c a (d_nope + d_v)) FLOPs, and the RoPE and
 * concatenation; with layernorm each block one RMSNorm forward more
 * (no FLOPs counted, one op); the iteration's FLOPs grow by the GEMMs'
 * per layer. */
Test(mla, recompute_modules_run_their_forward_again_in_the_backward)
{
	char *d = tmp_dir();
	char *p = write_file(d, "m.json", small_mla);
	struct diag dg;
	diag_init(&dg, stderr);
	struct model *m = model_load(p, &dg);
	cr_assert(m);
	struct wl_shape s = { .micro_batch = 1, .seq = 512, .tp = 1, .dtype = DTYPE_BF16,
			      .attention = ATTN_FLASH };
	double T = 512, a = 8, up = 2 * T * (256 * a * 96 + 128 * a * (64 + 64));
	struct op_list l0, l1;
	op_list_init(&l0);
	op_list_init(&l1);
	cr_assert(!workload_block(m, &s, WL_ATTN, PASS_BWD, RECOMPUTE_NONE, &l0));
	s.rc_modules = RC_MOD_MLA_UP_PROJ;
	cr_assert(!workload_block(m, &s, WL_ATTN, PASS_BWD, RECOMPUTE_SELECTIVE, &l1));
	cr_expect_eq(l1.n, l0.n + 4, "q_up, kv_up, rope, concat: %d ops against %d", l1.n, l0.n);
	cr_expect_float_eq(op_list_flops(&l1) - op_list_flops(&l0), up, 1e-9 * up);
	cr_expect_str_eq(l1.v[0].name, "q_up");
	cr_expect_str_eq(l1.v[1].name, "kv_up");
	op_list_finish(&l1);
	op_list_init(&l1);
	s.rc_modules = RC_MOD_LAYERNORM;
	cr_assert(!workload_block(m, &s, WL_MLP, PASS_BWD, RECOMPUTE_SELECTIVE, &l1));
	op_list_finish(&l0);
	op_list_init(&l0);
	cr_assert(!workload_block(m, &s, WL_MLP, PASS_BWD, RECOMPUTE_NONE, &l0));
	cr_expect_eq(l1.n, l0.n + 1);
	cr_expect_eq(l1.v[0].pass, PASS_FWD);
	op_list_finish(&l0);
	op_list_finish(&l1);
	/* the iteration: L = 2 layers, one sample */
	s.rc_modules = RC_MOD_MLA_UP_PROJ;
	double base = workload_iteration_flops(m, &s, RECOMPUTE_NONE, 1);
	double with = workload_iteration_flops(m, &s, RECOMPUTE_SELECTIVE, 1);
	cr_expect_float_eq(with - base, 2 * up, 1e-9 * up);
	model_destroy(m);
	diag_finish(&dg);
	free(p);
	free(d);
}

/* moe_act on DeepSeek-V3 (bf16, flash, one token, ep 64, tp 1): an MoE
 * layer frees the routed copies' activation outputs, k x 2 f_e bytes
 * (fc2's inputs); its dense first layers nothing; its backward runs the
 * SwiGLU of the rank's routed copies again. fp8_moe_act_cache likewise
 * frees k x 2 f_e of the fc1 outputs. */
Test(mla, moe_act_frees_the_routed_activation_outputs)
{
	struct model *m = load("models/zoo/deepseek-v3.json");
	struct mem_rank_input in = { .model = m, .dtype = DTYPE_BF16, .attention = ATTN_FLASH,
				     .micro_batch = 1, .seq = 1, .tp = 1, .ep = 64 };
	double none = memory_layer_activations(&in), dense = memory_dense_layer_activations(&in);
	in.recompute = RECOMPUTE_SELECTIVE;
	in.recompute_modules = RC_MOD_MOE_ACT;
	cr_expect_eq(memory_layer_activations(&in), none - 8 * 2 * 2048);
	cr_expect_eq(memory_dense_layer_activations(&in), dense);
	/* fp8 (the fc2 input already 1 byte) with the SwiGLU inputs cached in
	 * fp8: k x 2 f_e more bytes go (2 -> 1 per element of the fc1 output) */
	in.dtype = DTYPE_FP8;
	in.recompute = RECOMPUTE_NONE;
	double f8 = memory_layer_activations(&in);
	in.fp8_moe_act_cache = true;
	cr_expect_eq(memory_layer_activations(&in), f8 - 8 * 2 * 2048);
	cr_expect_eq(memory_dense_layer_activations(&in), memory_dense_layer_activations(&(struct mem_rank_input){
		.model = m, .dtype = DTYPE_FP8, .attention = ATTN_FLASH, .micro_batch = 1, .seq = 1, .tp = 1, .ep = 64 }));
	struct wl_shape s = { .micro_batch = 1, .seq = 4096, .tp = 1, .dtype = DTYPE_BF16,
			      .attention = ATTN_FLASH, .ep = 64, .rc_modules = RC_MOD_MOE_ACT };
	struct op_list l0, l1;
	op_list_init(&l0);
	op_list_init(&l1);
	cr_assert(!workload_block(m, &s, WL_MLP, PASS_BWD, RECOMPUTE_NONE, &l0));
	cr_assert(!workload_block(m, &s, WL_MLP, PASS_BWD, RECOMPUTE_SELECTIVE, &l1));
	cr_expect_eq(l1.n, l0.n + 1);
	cr_expect_str_eq(l1.v[0].name, "expert_act");
	cr_expect_eq(l1.v[0].pass, PASS_FWD);
	op_list_finish(&l0);
	op_list_finish(&l1);
	model_destroy(m);
}

Test(mla, node_limited_routing_sends_fewer_cross_node_copies)
{
	struct model *m = load("models/zoo/deepseek-v3.json");
	/* EP 64 over 8 nodes of 32 experts, k 8, M 4 (section 2.1.2):
	 * D = 4 (1 - C(96,8)/C(128,8)), remote share 7/8 */
	double c96 = 1, c256 = 1;
	for (int i = 0; i < 8; i++) {
		c96 *= (96.0 - i) / (128.0 - i);
		c256 *= (224.0 - i) / (256.0 - i);
	}
	double lim = 4 * (1 - c96) * 7 / 8, free_ = 8 * (1 - c256) * 7 / 8;
	cr_expect(fabs(moe_node_copies(&m->moe, 8) - lim) < 1e-12);
	cr_expect(fabs(lim - 3.175384558872488) < 1e-12);
	cr_expect_eq(moe_flat_node_copies(&m->moe, 8), 7);
	/* the dispatch bytes scale: EP 64, tp 1, 8 GPUs a node */
	cr_expect(fabs(moe_dispatch_scale(&m->moe, 64, 1, 8) - lim / 7) < 1e-12);
	/* one node: no InfiniBand, nothing changes */
	cr_expect_eq(moe_dispatch_scale(&m->moe, 8, 1, 8), 1);
	/* without the group limit: every node may be used */
	m->moe.groups_per_token = 8;
	cr_expect(fabs(moe_node_copies(&m->moe, 8) - free_) < 1e-12);
	m->moe.groups = 0;
	cr_expect_eq(moe_dispatch_scale(&m->moe, 64, 1, 8), 1);
	model_destroy(m);
}

/* bad input: the exact message, the JSON path, exit 3 from validate */
static void expect_bad(const char *json, const char *msg)
{
	char *d = tmp_dir();
	char *p = write_file(d, "m.json", json);
	struct diag dg;
	diag_init(&dg, NULL);
	cr_assert_null(model_load(p, &dg));
	char want[2048];
	snprintf(want, sizeof(want), "%s: %s\n", p, msg);
	cr_expect_str_eq(diag_text(&dg), want);
	diag_finish(&dg);
	char args[1200], *out = NULL, *err = NULL;
	snprintf(args, sizeof(args), "validate %s", p);
	cr_expect_eq(run_ddlsim(args, &out, &err), 3);
	free(out);
	free(err);
	free(p);
	free(d);
}

#define HEAD "{\"schema\":\"ddlsim.model\",\"schema_version\":\"1.2\",\"name\":\"x\",\"source\":\"t\"," \
	"\"architecture\":\"decoder_transformer\",\"layers\":4,\"hidden_size\":1024," \
	"\"heads\":8,\"vocab_size\":1000,"
#define MLA "\"mla\":{\"kv_lora_rank\":128,\"qk_nope_head_dim\":64,\"qk_rope_head_dim\":32," \
	"\"v_head_dim\":64}"
#define MOE "\"moe\":{\"experts\":16,\"top_k\":2,\"expert_ffn_size\":512,"

Test(mla, rejects_kv_heads_beside_mla)
{
	expect_bad(HEAD "\"kv_heads\":2," MLA "}",
		   "/kv_heads: error: must be left out with \"mla\" (its K and V are per head)");
}

Test(mla, rejects_mla_without_rope)
{
	expect_bad(HEAD "\"position_embedding\":\"learned\"," MLA "}",
		   "/position_embedding: error: must be \"rope\" with \"mla\" (decoupled RoPE), got \"learned\"");
}

Test(mla, rejects_mla_without_kv_lora_rank)
{
	expect_bad(HEAD "\"mla\":{\"qk_nope_head_dim\":64,\"qk_rope_head_dim\":32,\"v_head_dim\":64}}",
		   "/mla/kv_lora_rank: error: missing required key 'kv_lora_rank'");
}

Test(mla, rejects_more_groups_per_token_than_groups)
{
	expect_bad(HEAD MOE "\"groups\":4,\"groups_per_token\":5}}",
		   "/moe/groups_per_token: error: must be at most the 4 groups, got 5");
}

Test(mla, rejects_groups_not_dividing_experts)
{
	expect_bad(HEAD MOE "\"groups\":3}}", "/moe/groups: error: must divide the 16 experts, got 3");
}

Test(mla, rejects_all_layers_dense)
{
	expect_bad(HEAD MOE "\"first_dense_layers\":4}}",
		   "/moe/first_dense_layers: error: must be below the 4 layers, got 4");
}

Test(mla, rejects_groups_per_token_without_groups)
{
	expect_bad(HEAD MOE "\"groups_per_token\":2}}", "/moe/groups_per_token: error: needs groups");
}
