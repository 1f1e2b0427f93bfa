/* test-finetune: LoRA / QLoRA (models/finetune.h) against closed forms
 * worked by hand on a small model, the shipped MLPerf scenario's model
 * states and gradient traffic, and every new key's bad input (exact
 * message, exit 3). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anatomy.h"
#include "finetune.h"
#include "memory.h"
#include "scenario.h"
#include "testutil.h"
#include "workload.h"

#define REL 1e-12

/* A small Llama: h 64, 4 heads of 16 (2 KV heads: kv = 32), SwiGLU f 128,
 * 2 layers, vocabulary 100, untied, no dropout. */
static struct model small(void)
{
	struct model m;
	memset(&m, 0, sizeof(m));
	m.layers = 2;
	m.hidden = 64;
	m.heads = 4;
	m.kv_heads = 2;
	m.ffn = 128;
	m.vocab = 100;
	m.act = MODEL_ACT_SWIGLU;
	m.norm = MODEL_NORM_RMSNORM;
	m.pos = MODEL_POS_ROPE;
	return m;
}

static struct finetune lora(unsigned targets, int r)
{
	struct finetune f = { .method = FT_LORA, .rank = r, .alpha = 2.0 * r, .targets = targets };
	return f;
}

#define ALL ((1u << FT_Q) | (1u << FT_K) | (1u << FT_V) | (1u << FT_O) | (1u << FT_GATE) | \
	     (1u << FT_UP) | (1u << FT_DOWN))

static void expect_rel(double got, double want, const char *what)
{
	cr_expect(fabs(got - want) <= REL * fabs(want), "%s: %.17g, want %.17g", what, got, want);
}

/* r (d_in + d_out) per target: q 64+64, k 64+32, v 64+32, o 64+64, gate
 * 64+128, up 64+128, down 128+64 = 1024; r = 8: 8,192 per layer. */
Test(finetune, adapter_params_are_r_times_din_plus_dout)
{
	struct model m = small();
	struct finetune f = lora(ALL, 8);
	expect_rel(finetune_layer_adapter_params(&m, &f, 1), 8192, "all targets");
	f = lora(1u << FT_QKV, 8);   /* fused: 8 (64 + 128) */
	expect_rel(finetune_layer_adapter_params(&m, &f, 1), 1536, "qkv_proj");
}

/* TP 2: the split side halves, r never: q 8 (64 + 32), k and v 8 (64 + 16),
 * o 8 (32 + 64), gate and up 8 (64 + 64), down 8 (64 + 64) = 5,888. */
Test(finetune, adapters_split_on_the_base_layers_side_under_tp)
{
	struct model m = small();
	struct finetune f = lora(ALL, 8);
	expect_rel(finetune_layer_adapter_params(&m, &f, 2), 5888, "tp 2");
}

/* QLoRA's NF4 with double quantization: 4 + 8/64 + 32/(64 x 256) bits
 * (paper: 4.127), and bitsandbytes 0.45.0's three dequantization kernels. */
Test(finetune, nf4_bytes_follow_bitsandbytes)
{
	expect_rel(FT_NF4_STORED_BYTES, 0.515869140625, "stored");
	expect_rel(FT_NF4_STORED_BYTES * 8, 4.126953125, "bits");
	expect_rel(FT_NF4_DEQUANT_BYTES, 2.765869140625, "dequantize");
}

static struct wl_shape shape(double tokens, struct finetune f, enum attention attn)
{
	struct wl_shape s = { 1, tokens, 1, false, DTYPE_BF16, attn, 1, false, 1, false, 0, 0, 0,
			      NULL, { ATTN_BE_BEST, ATTN_BE_BEST }, false, f, false, { 0 }, false, 0, 0 };
	return s;
}

static const struct op *find(const struct op_list *l, const char *name)
{
	for (int i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].name, name))
			return &l->v[i];
	return NULL;
}

static double flops_of(const struct op_list *l, const char *name)
{
	const struct op *o = find(l, name);
	cr_assert(o, "no op '%s'", name);
	return o->flops;
}

/* The fused QKV adapter on T = 512 tokens, r = 8: forward x A 2 T r h,
 * (x A) B 2 T (h + 2 kv) r; backward dgrad and wgrad of both with the
 * same FLOPs; the frozen QKV GEMM has a dgrad and no wgrad, the layer no
 * main gradient but the adapters' (r (h + h + 2 kv) = 1,536 elements). */
Test(finetune, adapter_gemms_are_the_small_gemms_they_are)
{
	struct model m = small();
	struct wl_shape s = shape(512, lora(1u << FT_QKV, 8), ATTN_FLASH);
	struct op_list f, b;
	op_list_init(&f);
	op_list_init(&b);
	cr_assert_eq(workload_block(&m, &s, WL_ATTN, PASS_FWD, RECOMPUTE_NONE, &f), 0);
	cr_assert_eq(workload_block(&m, &s, WL_ATTN, PASS_BWD, RECOMPUTE_NONE, &b), 0);
	double xa = 2.0 * 512 * 8 * 64, xab = 2.0 * 512 * 128 * 8;
	expect_rel(flops_of(&f, "lora_qkv_proj.a"), xa, "x A");
	expect_rel(flops_of(&f, "lora_qkv_proj.b"), xab, "(x A) B");
	expect_rel(flops_of(&b, "lora_qkv_proj.a.dgrad"), xa, "A dgrad");
	expect_rel(flops_of(&b, "lora_qkv_proj.a.wgrad"), xa, "A wgrad");
	expect_rel(flops_of(&b, "lora_qkv_proj.b.dgrad"), xab, "B dgrad");
	expect_rel(flops_of(&b, "lora_qkv_proj.b.wgrad"), xab, "B wgrad");
	expect_rel(flops_of(&b, "qkv.dgrad"), 2.0 * 512 * 128 * 64, "frozen dgrad");
	cr_expect_null(find(&b, "qkv.wgrad"), "a frozen weight has a weight gradient");
	cr_expect_null(find(&b, "attn_out.wgrad"), "a frozen weight has a weight gradient");
	cr_expect_null(find(&b, "attn.main_grad"), "frozen weights accumulate a main gradient");
	const struct op *mg = find(&b, "lora_qkv_proj.main_grad");
	cr_assert(mg, "no main gradient for the adapters");
	expect_rel(mg->m, 1536, "adapter main gradient elements");
	cr_expect_null(find(&f, "lora_o_proj.a"), "an adapter on a layer not targeted");
	op_list_finish(&f);
	op_list_finish(&b);
}

/* Unfused attention, no recompute: the kernels' FLOPs are Megatron's
 * count (workload.h), so with frozen weights they must be it less one
 * forward of the weight GEMMs (the weight gradients) plus 6 FLOPs per
 * adapter parameter and token (finetune_model_flops). */
Test(finetune, iteration_flops_drop_frozen_weight_gradients)
{
	struct model m = small();
	struct finetune f = lora(ALL, 8);
	struct wl_shape s = shape(256, f, ATTN_UNFUSED);
	double got = workload_iteration_flops(&m, &s, RECOMPUTE_NONE, 4);
	double tok = 4 * 256.0, L = 2, linear = 64.0 * 128 + 64.0 * 64 + 3 * 64.0 * 128;
	double all = model_iteration_flops(&m, 4, 256);
	double want = all - tok * (L * 2 * linear + 2 * 64.0 * 100) + 6 * tok * L * 8192;
	expect_rel(got, want, "kernels' FLOPs");
	expect_rel(finetune_model_flops(&m, &f, 4, 256), want, "finetune_model_flops");
}

/* QLoRA: each layer GEMM's weight (the MLP's gate and up: 2 f h = 16,384
 * elements) dequantized before the GEMM, forward and backward, three
 * kernels of 2.765869140625 bytes per element. */
Test(finetune, qlora_dequantizes_before_every_layer_gemm)
{
	struct model m = small();
	struct finetune f = lora(1u << FT_DOWN, 4);
	f.method = FT_QLORA;
	f.base = FT_BASE_NF4;
	struct wl_shape s = shape(128, f, ATTN_FLASH);
	struct op_list fw, bw;
	op_list_init(&fw);
	op_list_init(&bw);
	cr_assert_eq(workload_block(&m, &s, WL_MLP, PASS_FWD, RECOMPUTE_NONE, &fw), 0);
	cr_assert_eq(workload_block(&m, &s, WL_MLP, PASS_BWD, RECOMPUTE_NONE, &bw), 0);
	const struct op *d = find(&fw, "mlp_gate_up.dequant");
	cr_assert(d, "no dequantization before the forward GEMM");
	expect_rel(d->bytes, 2 * 128.0 * 64 * 2.765869140625, "forward dequantization bytes");
	cr_expect_eq(d->kernels, 3);
	d = find(&bw, "mlp_down.dequant.bwd");
	cr_assert(d, "no dequantization before the data-gradient GEMM");
	expect_rel(d->bytes, 128.0 * 64 * 2.765869140625, "backward dequantization bytes");
	cr_expect(find(&fw, "lora_down_proj.b") != NULL, "no down_proj adapter");
	op_list_finish(&fw);
	op_list_finish(&bw);
}

static void anatomy(struct finetune f, enum zero_stage z, struct mem_anatomy *o)
{
	static struct model m;
	static struct gpu_spec g = { .hbm_bytes = 80e9 };
	m = small();
	struct mem_rank_input in = { .model = &m, .gpu = &g, .dtype = DTYPE_BF16,
				     .attention = ATTN_FLASH, .grad_elem_bytes = 4,
				     .micro_batch = 1, .seq = 256, .tp = 1, .dp = 4, .pp = 1,
				     .zero = z, .layers = 2, .has_embedding = true, .has_head = true,
				     .inflight = 1, .ft = f };
	memory_rank(&in, o);
}

/* Model states with every target, r 8, dp 4, ZeRO-1: Psi = the whole
 * model 2 x (2 x 64 + 64 x 128 + 64 x 64 + 3 x 64 x 128) + 100 x 64 + 64 +
 * 100 x 64 = 86,848, Psi_a = 2 x 8,192 = 16,384: weights 2 (Psi +
 * Psi_a), fp32 gradients 4 Psi_a, Adam 12 Psi_a / 4; QLoRA: the linear
 * weights (2 x 36,864) at 0.515869140625 bytes instead of 2. */
Test(finetune, memory_anatomy_is_the_adapters_model_states)
{
	struct mem_anatomy o;
	double psi = 2 * (2 * 64.0 + 64 * 128 + 64 * 64 + 3 * 64 * 128) + 100 * 64.0 + 64 + 100 * 64;
	double pa = 2 * 8192.0, lin = 2 * 36864.0;
	cr_assert_eq(psi, 86848);
	anatomy(lora(ALL, 8), ZERO_1, &o);
	expect_rel(o.params_local, psi + pa, "params");
	expect_rel(o.trained_params, pa, "trained params");
	expect_rel(o.weights_bytes, 2 * (psi + pa), "weights");
	expect_rel(o.grads_bytes, 4 * pa, "gradients");
	expect_rel(o.optimizer_bytes, 12 * pa / 4, "optimizer");
	struct finetune q = lora(ALL, 8);
	q.method = FT_QLORA;
	q.base = FT_BASE_NF4;
	anatomy(q, ZERO_1, &o);
	expect_rel(o.weights_bytes, 2 * (psi - lin + pa) + 0.515869140625 * lin, "nf4 weights");
	anatomy(lora(ALL, 8), ZERO_3, &o);
	expect_rel(o.weights_bytes, 2 * (psi + pa) / 4, "ZeRO-3 weights");
	expect_rel(o.grads_bytes, 4 * pa / 4, "ZeRO-3 gradients");
}

/* Activations per token, bf16, flash, TP 1: frozen layers do not keep
 * the QKV, fc1 and fc2 inputs (2 (h + h + f) bytes), which only weight
 * gradients read; the fused QKV adapter keeps x A (2 r) and, without
 * dropout, its input (2 h); with dropout 0.1 the dropped input and its
 * mask (3 h) instead. */
Test(finetune, activations_drop_weight_gradient_inputs_and_add_the_adapters)
{
	struct model m = small();
	struct gpu_spec g = { 0 };
	struct mem_rank_input in = { .model = &m, .gpu = &g, .dtype = DTYPE_BF16,
				     .attention = ATTN_FLASH, .micro_batch = 1, .seq = 256, .tp = 1 };
	double full = memory_layer_activations(&in);
	in.ft = lora(1u << FT_QKV, 8);
	double frozen = memory_layer_activations(&in);
	expect_rel(frozen - full, 256 * (2 * 8.0 + 2 * 64 - 2 * (64 + 64 + 128)), "no dropout");
	in.ft.dropout = 0.1;
	double drop = memory_layer_activations(&in);
	expect_rel(drop - full, 256 * (2 * 8.0 + 3 * 64 - 2 * (64 + 64 + 128)), "dropout");
}

/* The shipped MLPerf recipe: TP 4, 80 layers of adapters on the fused QKV
 * (16 (8192 + 10240 / 4)) and the output projection (16 (8192 / 4 +
 * 8192)): 26,869,760 per GPU; fp32 main gradients (megatron-core), Adam
 * 12 bytes, and the DP all-reduce over 2 ranks sends their 4 bytes each. */
Test(finetune, mlperf_scenario_trains_and_reduces_only_the_adapters)
{
	char *d = tmp_dir(), args[2048], *err = NULL;
	snprintf(args, sizeof(args), "run %s --out %s/out --quiet --format json",
		 src_path("scenarios/llama2-70b-lora-mlperf.json"), d);
	int rc = run_ddlsim(args, NULL, &err);
	cr_assert_eq(rc, 0, "exit %d: %s", rc, err);
	char dir[1100];
	snprintf(dir, sizeof(dir), "%s/out", d);
	json_t *r = load_report(dir);
	double pa = 80 * (16 * (8192 + 10240 / 4.0) + 16 * (8192 / 4.0 + 8192));
	cr_expect_eq(pa, 26869760);
	expect_rel(jnum(r, "memory/per_stage/0/trained_params"), pa, "trained params");
	expect_rel(jnum(r, "memory/per_stage/0/gradients_GB"), 4 * pa / 1e9, "gradients");
	expect_rel(jnum(r, "memory/per_stage/0/optimizer_GB"), 12 * pa / 1e9, "optimizer");
	expect_rel(jnum(r, "communication/bytes_per_gpu/dp"), 4 * pa, "DP bytes");
	cr_expect(json_is_true(json_object_get(json_object_get(r, "memory"), "fits")),
		  "the MLPerf recipe does not fit");
	json_decref(r);
}

/* ---- bad input ---- */

/* A scenario of model (zoo name) with training.finetune = ft and the
 * extra training and parallel keys given. */
static char *scenario(const char *model, const char *ft, const char *training, const char *par)
{
	static const char *base =
		"{\n"
		"  \"schema\": \"ddlsim.scenario\",\n"
		"  \"schema_version\": \"1.0\",\n"
		"  \"model\": \"@MODEL@\",\n"
		"  \"topology\": \"@TOPO@\",\n"
		"  \"nodes\": 1,\n"
		"  \"parallel\": { \"tp\": 8@PAR@ },\n"
		"  \"training\": { \"seq_len\": 2048, \"global_batch\": 8@TRAIN@, \"finetune\": @FT@ }\n"
		"}\n";
	char path[256];
	snprintf(path, sizeof(path), "models/zoo/%s.json", model);
	char *a = str_subst(base, "@MODEL@", src_path(path));
	char *b = str_subst(a, "@TOPO@", src_path("topologies/dgx-h100.json"));
	char *c = str_subst(b, "@PAR@", par);
	char *e = str_subst(c, "@TRAIN@", training);
	char *f = str_subst(e, "@FT@", ft);
	free(a), free(b), free(c), free(e);
	return f;
}

static void bad(const char *ft, const char *want)
{
	expect_run_error(scenario("llama2-7b", ft, "", ""), want);
}

#define FT(keys) "{ \"method\": \"lora\", \"rank\": 8, \"targets\": [\"q_proj\"]" keys " }"

Test(finetune, rejects_unknown_method)
{
	bad("{ \"method\": \"adapter\", \"rank\": 8, \"targets\": [\"q_proj\"] }",
	    "%s: /training/finetune/method: error: expected one of {full, lora, qlora}, got 'adapter'\n");
}

Test(finetune, rejects_missing_method)
{
	bad("{ \"rank\": 8, \"targets\": [\"q_proj\"] }",
	    "%s: /training/finetune/method: error: missing required key 'method'\n");
}

Test(finetune, rejects_missing_rank)
{
	bad("{ \"method\": \"lora\", \"targets\": [\"q_proj\"] }",
	    "%s: /training/finetune/rank: error: missing required key 'rank'\n");
}

Test(finetune, rejects_zero_rank)
{
	bad("{ \"method\": \"lora\", \"rank\": 0, \"targets\": [\"q_proj\"] }",
	    "%s: /training/finetune/rank: error: must be >= 1, got 0\n");
}

Test(finetune, rejects_lora_keys_with_full)
{
	bad("{ \"method\": \"full\", \"rank\": 8 }",
	    "%s: /training/finetune/rank: error: only with method lora or qlora\n");
	bad("{ \"method\": \"full\", \"targets\": [\"q_proj\"] }",
	    "%s: /training/finetune/targets: error: only with method lora or qlora\n");
}

Test(finetune, rejects_nonpositive_alpha)
{
	bad(FT(", \"alpha\": 0"), "%s: /training/finetune/alpha: error: must be > 0, got 0\n");
}

Test(finetune, rejects_dropout_of_one)
{
	bad(FT(", \"dropout\": 1"),
	    "%s: /training/finetune/dropout: error: expected a probability in [0, 1), got 1\n");
}

Test(finetune, rejects_missing_or_empty_targets)
{
	bad("{ \"method\": \"lora\", \"rank\": 8 }",
	    "%s: /training/finetune/targets: error: missing required key 'targets'\n");
	bad("{ \"method\": \"lora\", \"rank\": 8, \"targets\": [] }",
	    "%s: /training/finetune/targets: error: expected at least one target, got an empty list\n");
}

Test(finetune, rejects_unknown_and_repeated_targets)
{
	bad("{ \"method\": \"lora\", \"rank\": 8, \"targets\": [\"q_proj\", \"fc1\"] }",
	    "%s: /training/finetune/targets/1: error: expected one of {q_proj, k_proj, v_proj, "
	    "qkv_proj, o_proj, gate_proj, up_proj, down_proj}, got 'fc1'\n");
	bad("{ \"method\": \"lora\", \"rank\": 8, \"targets\": [\"o_proj\", \"o_proj\"] }",
	    "%s: /training/finetune/targets/1: error: 'o_proj' is listed twice\n");
	bad("{ \"method\": \"lora\", \"rank\": 8, \"targets\": [\"qkv_proj\", \"v_proj\"] }",
	    "%s: /training/finetune/targets: error: qkv_proj adapts the same weights as q_proj, "
	    "k_proj and v_proj: give one or the others\n");
}

Test(finetune, rejects_gate_proj_without_swiglu)
{
	expect_run_error(scenario("mpt-7b", "{ \"method\": \"lora\", \"rank\": 8, \"targets\": [\"gate_proj\"] }",
			      "", ""),
		     "%s: /training/finetune/targets: error: gate_proj needs a SwiGLU MLP, model "
		     "'MPT-7B' has none\n");
}

Test(finetune, rejects_bad_base_dtypes)
{
	bad(FT(", \"base_dtype\": \"int4\""),
	    "%s: /training/finetune/base_dtype: error: expected one of {bf16, fp16, nf4}, got 'int4'\n");
	bad("{ \"method\": \"qlora\", \"rank\": 8, \"targets\": [\"q_proj\"], \"base_dtype\": \"bf16\" }",
	    "%s: /training/finetune/base_dtype: error: qlora stores the base weights in nf4, got 'bf16'\n");
	bad(FT(", \"base_dtype\": \"nf4\""),
	    "%s: /training/finetune/base_dtype: error: nf4 base weights are qlora: give method qlora\n");
	bad(FT(", \"base_dtype\": \"fp16\""),
	    "%s: /training/finetune/base_dtype: error: a lora base is the precision's own weights, "
	    "bf16 under precision \"bf16\", got 'fp16'\n");
}

Test(finetune, rejects_nf4_with_fp8_or_zero3)
{
	const char *q = "{ \"method\": \"qlora\", \"rank\": 8, \"targets\": [\"q_proj\"] }";
	expect_run_error(scenario("llama2-7b", q, ", \"precision\": \"fp8\"", ""),
		     "%s: /training/finetune/base_dtype: error: nf4 weights are dequantized to a bf16 or "
		     "fp16 precision, got precision \"fp8\"\n");
	expect_run_error(scenario("llama2-7b", q, "", ", \"zero\": 3"),
		     "%s: /training/finetune/base_dtype: error: nf4 weights with ZeRO-3 are not supported\n");
}

Test(finetune, rejects_moe_models_and_offload)
{
	expect_run_error(scenario("mixtral-8x7b", FT(""), "", ", \"sp\": true"),
		     "%s: /training/finetune: error: mixture-of-experts models are not supported yet "
		     "(model 'Mixtral 8x7B')\n");
	expect_run_error(scenario("llama2-7b", FT(""), "", ", \"offload\": \"optimizer\""),
		     "%s: /parallel/offload: error: CPU offload with frozen base weights is not "
		     "supported, got \"optimizer\"\n");
}

Test(finetune, rejects_unknown_key)
{
	bad(FT(", \"lora_rank\": 8"), "%s: /training/finetune/lora_rank: error: unknown key 'lora_rank'\n");
}

/* ---- the goal of `ddlsim plan` ---- */

static void bad_goal(const char *keys, const char *want_fmt)
{
	static const char *base =
		"{ \"schema\": \"ddlsim.goal\", \"schema_version\": \"1.0\",\n"
		"  \"model\": \"@MODEL@\", \"seq_len\": 4096, @KEYS@,\n"
		"  \"global_batch_tokens\": { \"min\": 32768, \"max\": 65536 },\n"
		"  \"clusters\": [ { \"topology\": \"@TOPO@\", \"nodes\": [1] } ] }\n";
	char *a = str_subst(base, "@MODEL@", src_path("models/zoo/llama2-7b.json"));
	char *b = str_subst(a, "@TOPO@", src_path("topologies/dgx-h100.json"));
	char *c = str_subst(b, "@KEYS@", keys);
	char *d = tmp_dir(), *p = write_file(d, "g.json", c), args[2048], want[4096], *err = NULL;
	snprintf(args, sizeof(args), "plan %s --out %s/out --quiet --screen-only", p, d);
	int rc = run_ddlsim(args, NULL, &err);
	snprintf(want, sizeof(want), want_fmt, p);
	cr_assert_eq(rc, 3, "exit %d, stderr: %s", rc, err);
	cr_assert_str_eq(err, want);
	free(a), free(b), free(c);
}

Test(finetune, goal_takes_epochs_over_a_dataset)
{
	bad_goal("\"epochs\": 2", "%s: /dataset_tokens: error: missing required key "
		 "'dataset_tokens' (with epochs)\n");
	bad_goal("\"train_tokens\": 1e9, \"epochs\": 2, \"dataset_tokens\": 1e8",
		 "%s: /train_tokens: error: give train_tokens or epochs and dataset_tokens, not both\n");
	bad_goal("\"deadline_days\": 1", "%s: /train_tokens: error: missing required key "
		 "'train_tokens' (or epochs and dataset_tokens)\n");
	bad_goal("\"epochs\": 2, \"dataset_tokens\": 1e8, \"finetune\": { \"method\": \"lora\", "
		 "\"rank\": 8 }", "%s: /finetune/targets: error: missing required key 'targets'\n");
}

/* A scenario of the goal's model and adapters under the plan of a
 * `ddlsim plan` record (rec: one line of plans.jsonl); lora: with the
 * goal's finetune object, else full training. Returns its worst stage's
 * anatomy. */
static void record_anatomy(json_t *rec, bool lora, struct mem_anatomy *o)
{
	static const char *fmt =
		"{ \"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\", \"name\": \"r\",\n"
		"  \"model\": \"%s\", \"topology\": \"%s\", \"nodes\": %lld,\n"
		"  \"parallel\": { \"tp\": %lld, \"pp\": %lld, \"dp\": %lld, \"sp\": %s, \"zero\": %lld,\n"
		"                \"recompute\": \"%s\" },\n"
		"  \"training\": { \"seq_len\": %lld, \"global_batch\": %lld, \"micro_batch\": %lld,\n"
		"                \"precision\": \"%s\"%s } }\n";
	const char *ft = ", \"finetune\": { \"method\": \"lora\", \"rank\": 16, \"alpha\": 32, "
			 "\"dropout\": 0.1, \"targets\": [\"qkv_proj\", \"o_proj\"] }";
	char text[4096];
	snprintf(text, sizeof(text), fmt, src_path("models/zoo/llama2-70b.json"),
		 src_path("topologies/dgx-h100.json"),
		 json_integer_value(json_object_get(rec, "nodes")),
		 json_integer_value(json_object_get(rec, "tp")),
		 json_integer_value(json_object_get(rec, "pp")),
		 json_integer_value(json_object_get(rec, "dp")),
		 json_is_true(json_object_get(rec, "sp")) ? "true" : "false",
		 json_integer_value(json_object_get(rec, "zero")),
		 json_string_value(json_object_get(rec, "recompute")),
		 json_integer_value(json_object_get(rec, "seq_len")),
		 json_integer_value(json_object_get(rec, "global_batch")),
		 json_integer_value(json_object_get(rec, "micro_batch")),
		 json_string_value(json_object_get(rec, "precision")), lora ? ft : "");
	char *d = tmp_dir(), *p = write_file(d, "s.json", text);
	struct diag dg;
	diag_init(&dg, stderr);
	struct scenario *sc = scenario_load(p, &dg);
	cr_assert_not_null(sc, "%s", text);
	diag_finish(&dg);
	anatomy_worst(sc->in, &sc->plan, o, NULL);
	scenario_destroy(sc);
	free(p), free(d);
}

/* The shipped fine-tuning goal (Llama 2 70B, LoRA r 16 on qkv_proj and
 * o_proj, 3 epochs over 1e9 tokens, deadline 1 day, 1-8 DGX H100):
 * `ddlsim plan` simulates its finalists; each is timed on 3 x 1e9 tokens
 * (train days = 3e9 / tokens per s / 86,400), meets the deadline exactly
 * when its wall time is at most a day, and fits as LoRA: its memory is the
 * anatomy of the plan with the adapters (per rank at tp 4: 80 layers x r
 * (8192 + 10240 / 4 + 8192 / 4 + 8192) = 26,869,760 trained parameters,
 * Adam's 12 bytes each; the frozen weights 2 bytes of psi / 4), where the
 * same plan trained in full would need 16 psi / 4 = 276 GB. The fewest
 * GPUs meeting the deadline: 32 (0.7 d; 16 GPUs take 1.4 d). */
Test(finetune, shipped_goal_picks_lora_plans_that_meet_the_deadline)
{
	char *d = tmp_dir(), args[2048], path[1100], *err = NULL;
	snprintf(args, sizeof(args), "plan %s --out %s/out --quiet --top 2 -j 2",
		 src_path("scenarios/goals/llama2-70b-lora-3-epochs.json"), d);
	int rc = run_ddlsim(args, NULL, &err);
	cr_assert_eq(rc, 0, "exit %d: %s", rc, err);
	snprintf(path, sizeof(path), "%s/out/plans.jsonl", d);
	FILE *f = fopen(path, "r");
	cr_assert_not_null(f);
	char line[8192];
	int n = 0, meet = 0, fewest = 0;
	json_t *first = NULL;
	while (fgets(line, sizeof(line), f)) {
		json_t *r = json_loads(line, 0, NULL);
		cr_assert_not_null(r, "%s", line);
		cr_assert_str_eq(json_string_value(json_object_get(r, "status")), "ok");
		cr_expect(json_is_true(json_object_get(r, "fits")));
		double tps = jnum(r, "tokens_per_s"), wall = jnum(r, "wall_days");
		/* plans.jsonl writes 12 significant digits */
		cr_expect(fabs(jnum(r, "train_days") / (3e9 / tps / 86400) - 1) < 1e-10,
			  "train days %.12g for %.12g tokens/s", jnum(r, "train_days"), tps);
		bool meets = json_is_true(json_object_get(r, "meets_deadline"));
		cr_expect_eq(meets, wall <= 1, "wall %.3f d, meets_deadline %d", wall, meets);
		int gpus = (int)json_integer_value(json_object_get(r, "gpus"));
		if (meets && (!fewest || gpus < fewest))
			fewest = gpus;
		meet += meets;
		if (!first && json_integer_value(json_object_get(r, "zero")) == 0 &&
		    json_integer_value(json_object_get(r, "tp")) == 4)
			first = json_incref(r);
		json_decref(r);
		n++;
	}
	fclose(f);
	cr_assert(n >= 2 && meet >= 1, "%d plans, %d meet the deadline", n, meet);
	cr_expect_eq(fewest, 32);

	/* the best plan of tp 4 and ZeRO-0: its memory the LoRA anatomy */
	cr_assert_not_null(first, "no plan of tp 4 and ZeRO-0 among the finalists");
	struct diag dg;
	diag_init(&dg, stderr);
	struct model *m = model_load(src_path("models/zoo/llama2-70b.json"), &dg);
	cr_assert_not_null(m);
	diag_finish(&dg);
	double psi = model_params(m), ad = 80 * 16 * (8192 + 10240 / 4 + 8192 / 4 + 8192);
	struct mem_anatomy o;
	record_anatomy(first, true, &o);
	cr_expect(fabs(o.total_bytes / 1e9 / jnum(first, "mem_peak_GB") - 1) < 1e-10,
		  "plan's memory %.12g GB, anatomy %.12g", jnum(first, "mem_peak_GB"), o.total_bytes / 1e9);
	expect_rel(o.trained_params, ad, "adapters per rank");
	expect_rel(o.optimizer_bytes, 12 * ad, "adapters' Adam state");
	expect_rel(o.weights_bytes, 2 * (psi / 4 + ad), "frozen weights and adapters");
	cr_expect(o.fits);
	record_anatomy(first, false, &o);
	cr_expect(o.weights_bytes + o.grads_bytes + o.optimizer_bytes >= 16 * psi / 4 * (1 - 1e-12));
	cr_expect(!o.fits, "full training fits in %.1f GB", o.total_bytes / 1e9);
	model_destroy(m);
	json_decref(first);
	free(err);
	free(d);
}
