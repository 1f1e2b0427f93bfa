/* test-encoder: architecture "encoder_transformer" (models/model.h):
 * parameter counts equal to the published ones, FLOPs from BERT's
 * equations, the non-causal attention core, the MLPerf BERT-Large
 * scenario end to end and its memory in closed form, and the new keys'
 * bad input. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anatomy.h"
#include "memory.h"
#include "model.h"
#include "scenario.h"
#include "testutil.h"
#include "workload.h"

static struct model *zoo(const char *rel)
{
	struct diag d;
	diag_init(&d, stderr);
	struct model *m = model_load(src_path(rel), &d);
	diag_finish(&d);
	cr_assert_not_null(m, "%s", rel);
	return m;
}

/* The Hugging Face base model's count from the config numbers (BertModel,
 * RobertaModel): embeddings (word, position, token type, LayerNorm), L
 * layers (QKV and output with biases, two LayerNorms, the MLP with
 * biases), the pooler. */
static double base_closed_form(double L, double h, double f, double V, double P, double types)
{
	double emb = (V + P + types) * h + 2 * h;
	double layer = 4 * h * h + 4 * h + 2 * h * f + f + h + 4 * h;
	return emb + L * layer + h * h + h;
}

static void expect_base(const char *rel, double L, double h, double f, double V, double P,
			double types, double published)
{
	struct model *m = zoo(rel);
	double closed = base_closed_form(L, h, f, V, P, types);
	printf("%s: %.0f parameters with the pooler (published %.0f)\n", m->name,
	       model_encoder_base_params(m), published);
	cr_expect_eq(closed, published, "%s: closed form %.0f", rel, closed);
	cr_expect_eq(model_encoder_base_params(m), published, "%s: %.0f", rel,
		     model_encoder_base_params(m));
	cr_expect_eq(m->published_params, published);
	model_destroy(m);
}

/* bert-base-uncased 109,482,240; bert-large-uncased 335,141,888;
 * roberta-large 355,359,744 (the HF base models with their poolers,
 * config.json of google-bert/bert-base-uncased, google-bert/
 * bert-large-uncased, FacebookAI/roberta-large). */
Test(encoder, base_models_have_the_published_parameter_counts)
{
	expect_base("models/zoo/bert-base.json", 12, 768, 3072, 30522, 512, 2, 109482240);
	expect_base("models/zoo/bert-large.json", 24, 1024, 4096, 30522, 512, 2, 335141888);
	expect_base("models/zoo/roberta-large.json", 24, 1024, 4096, 50265, 514, 1, 355359744);
}

/* What is trained: BertForPreTraining adds the MLM transform (dense,
 * LayerNorm), the decoder's bias (its weight tied) and the NSP classifier
 * (110,106,428 for bert-base-uncased); RobertaForMaskedLM has the MLM head
 * and no pooler (355,412,057). */
Test(encoder, trained_counts_add_the_heads)
{
	struct model *b = zoo("models/zoo/bert-base.json");
	double h = 768;
	cr_expect_eq(model_params(b), 109482240 + (h * h + h + 2 * h + 30522) + (2 * h + 2));
	cr_expect_eq(model_params(b), 110106428);
	model_destroy(b);
	struct model *r = zoo("models/zoo/roberta-large.json");
	h = 1024;
	cr_expect_eq(model_params(r), 355359744 - (h * h + h) + (h * h + h + 2 * h + 50265));
	cr_expect_eq(model_params(r), 355412057);
	model_destroy(r);
}

/* Training FLOPs per sequence of s tokens (3 x forward): per token 2 x
 * the layers' weights (12 h^2 with f = 4h: 6N for N = 12 L h^2) plus the
 * bidirectional attention, QK^T and AV over all s keys (4 s h a layer:
 * 12 L h s in training), the MLM head on its tokens (2 h^2 + 2 h V), the
 * pooler and NSP classifier once a sequence (2 h^2 + 4 h). */
Test(encoder, iteration_flops_follow_the_closed_form)
{
	struct model *m = zoo("models/zoo/bert-large.json");
	double L = 24, h = 1024, V = 30522, s = 512, b = 8;
	double N = 12 * L * h * h;
	double per_tok = 6 * N + 12 * L * h * s + 3 * (2 * h * h + 2 * h * V);
	double want = b * (s * per_tok + 3 * (2 * h * h + 4 * h));
	cr_expect_float_eq(model_iteration_flops(m, b, s), want, want * 1e-12);
	model_destroy(m);
	/* MLPerf's head on 76 masked positions */
	m = zoo("models/zoo/mlperf/bert-large.json");
	want = b * (s * (6 * N + 12 * L * h * s) + 76 * 3 * (2 * h * h + 2 * h * V) +
		    3 * (2 * h * h + 4 * h));
	cr_expect_float_eq(model_iteration_flops(m, b, s), want, want * 1e-12);
	cr_expect_eq(model_head_tokens(m, s), 76);
	cr_expect_eq(model_head_tokens(m, 64), 64);
	model_destroy(m);
}

/* The kernels execute what the equations count: unfused attention gives
 * model_iteration_flops() exactly; flash's backward recomputes the score
 * (2.5 x the forward, not 2 x), over the whole s x s (non-causal): L x
 * 0.5 x 4 b s^2 h more. */
Test(encoder, kernels_run_a_non_causal_core)
{
	struct model *m = zoo("models/zoo/bert-large.json");
	double L = 24, h = 1024, s = 512, b = 4;
	struct wl_shape shp = { .micro_batch = b, .seq = s, .tp = 1, .dtype = DTYPE_BF16,
				.attention = ATTN_UNFUSED };
	double model = model_iteration_flops(m, b, s);
	double got = workload_iteration_flops(m, &shp, RECOMPUTE_NONE, b);
	cr_expect_float_eq(got, model, model * 1e-12);
	shp.attention = ATTN_FLASH;
	got = workload_iteration_flops(m, &shp, RECOMPUTE_NONE, b);
	double extra = L * 0.5 * 4 * b * s * s * h;
	cr_expect_float_eq(got, model + extra, model * 1e-12);
	struct op_list l;
	op_list_init(&l);
	cr_assert_eq(workload_block(m, &shp, WL_ATTN, PASS_FWD, RECOMPUTE_NONE, &l), 0);
	bool core = false;
	for (int i = 0; i < l.n; i++)
		if (l.v[i].kind == OP_ATTN) {
			core = true;
			cr_expect(!l.v[i].causal, "%s is causal", l.v[i].name);
		}
	cr_expect(core);
	/* post-LN: the norm follows the residual */
	cr_expect_str_eq(l.v[l.n - 1].name, "layernorm");
	op_list_finish(&l);
	model_destroy(m);
}

/* MLPerf BERT-Large phase 2 on 8 DGX H100: 64-way data parallelism, fp16,
 * 72 x 512 tokens a GPU: it runs, fits, and reports the model's FLOPs. */
Test(encoder, mlperf_bert_large_scenario_runs_end_to_end)
{
	char *d = tmp_dir(), args[2048], *err = NULL;
	snprintf(args, sizeof(args), "run %s --out %s/out --quiet --format json",
		 src_path("scenarios/bert-large-mlperf.json"), d);
	int rc = run_ddlsim(args, NULL, &err);
	cr_assert_eq(rc, 0, "exit %d: %s", rc, err);
	char dir[1100];
	snprintf(dir, sizeof(dir), "%s/out", d);
	json_t *r = load_report(dir);
	cr_assert_not_null(r);
	double t = jnum(r, "summary/iteration_time_s");
	double mt = jnum(r, "summary/model_tflops_per_gpu");
	struct model *m = zoo("models/zoo/mlperf/bert-large.json");
	double f = model_iteration_flops(m, 4608, 512);
	printf("MLPerf BERT-Large, 64 H100: %.4f s an iteration, %.1f model TFLOP/s a GPU\n", t, mt);
	cr_expect(t > 0);
	cr_expect_float_eq(mt, f / t / 64 / 1e12, mt * 1e-3);
	cr_expect(json_is_true(json_object_get(json_object_get(r, "memory"), "fits")));
	model_destroy(m);
	json_decref(r);
	free(err);
	free(d);
}

/* The MLPerf BERT-Large scenario's GPU (fp16, DP 64, one micro-batch of
 * 72 sequences of 512 tokens, flash attention) in closed form, worked
 * from the dimensions alone (h 1024, a 16, f 4h, V 30522, 512 positions,
 * 2 types, 76 masked positions, dropout):
 *   trained parameters: embeddings (V + 512 + 2) h + 2h, 24 layers of
 *     4h^2 + 4h + 2hf + f + h + 4h, the MLM head (dense h^2 + h,
 *     LayerNorm 2h, the decoder's bias V; its weight tied), NSP (pooler
 *     h^2 + h, classifier 2h + 2);
 *   weights and gradients 2 bytes each, Adam 12 (fp32 master, m, v);
 *     ZeRO-1 divides the 12 by the 64 ranks;
 *   activations per layer (Korthikanti et al. 2022, Table 2, no
 *     parallelism; bidirectional attention stores the same tensors as
 *     causal: the mask is not a tensor): unfused sbh (34 + 5as/h); flash
 *     (memory.h) no s x s terms, the kernel's fp32 log-sum-exp instead:
 *     34 sbh + 4 a s b; the GPU holds the 24 layers of one micro-batch;
 *   logits: fp32 logits and their gradient on the masked positions,
 *     2 x 4 x b x 76 x V. */
Test(encoder, mlperf_bert_large_memory_follows_the_closed_form)
{
	struct diag d;
	diag_init(&d, stderr);
	struct scenario *sc = scenario_load(src_path("scenarios/bert-large-mlperf.json"), &d);
	cr_assert_not_null(sc);
	diag_finish(&d);
	double h = 1024, a = 16, f = 4096, V = 30522, s = 512, b = 72, L = 24;
	double layer = 4 * h * h + 4 * h + 2 * h * f + f + h + 4 * h;
	double psi = (V + 512 + 2) * h + 2 * h + L * layer + (h * h + h + 2 * h + V) +
		     (h * h + h + 2 * h + 2);
	double flash = 34 * s * b * h + 4 * a * s * b, unfused = s * b * h * (34 + 5 * a * s / h);
	struct mem_anatomy o;

	cr_assert_eq(sc->plan.training.attention, ATTN_FLASH);
	anatomy_stage(sc->in, &sc->plan, 0, &o);
	cr_expect_eq(o.params_local, psi);
	cr_expect_eq(o.weights_bytes, 2 * psi);
	cr_expect_eq(o.grads_bytes, 2 * psi);
	cr_expect_eq(o.optimizer_bytes, 12 * psi);
	cr_expect_eq(o.fp8_weight_bytes, 0);
	cr_expect_float_eq(o.act_per_layer_bytes, flash, 1e-12 * flash);
	cr_expect_float_eq(o.activations_bytes, L * flash, 1e-12 * L * flash);
	cr_expect_eq(o.logits_bytes, 2 * 4 * b * 76 * V);
	printf("MLPerf BERT-Large: %.0f parameters, %.3f GB of activations a layer (flash), "
	       "%.3f GB unfused\n", psi, flash / 1e9, unfused / 1e9);

	struct plan pl = sc->plan;
	pl.training.attention = ATTN_UNFUSED;
	pl.parallel.zero = ZERO_1;
	anatomy_stage(sc->in, &pl, 0, &o);
	cr_expect_float_eq(o.act_per_layer_bytes, unfused, 1e-12 * unfused);
	cr_expect_float_eq(o.optimizer_bytes, 12 * psi / 64, 1e-12 * psi);
	cr_expect_eq(o.grads_bytes, 2 * psi);
	scenario_destroy(sc);
}

/* ---- bad input ---- */

static void expect_model_error(const char *body, const char *msg)
{
	char text[2048];
	snprintf(text, sizeof(text),
		 "{\"schema\": \"ddlsim.model\", \"schema_version\": \"1.1\", \"name\": \"e\",\n"
		 " \"source\": \"test\", \"architecture\": \"encoder_transformer\", \"layers\": 2,\n"
		 " \"hidden_size\": 64, \"heads\": 4, \"vocab_size\": 100%s}\n", body);
	expect_model_text_error(text, msg);
}

Test(encoder, rejects_bad_keys)
{
	expect_model_error(", \"type_vocab_size\": 0",
			   "/type_vocab_size: error: must be >= 1, got 0");
	expect_model_error(", \"mlm_head\": 1", "/mlm_head: error: expected a boolean, got integer");
	expect_model_error(", \"nsp_head\": \"yes\"",
			   "/nsp_head: error: expected a boolean, got string");
	expect_model_error(", \"mlm_positions\": -1",
			   "/mlm_positions: error: must be >= 1, got -1");
	expect_model_error(", \"mlm_head\": false, \"nsp_head\": true, \"mlm_positions\": 20",
			   "/mlm_positions: error: needs mlm_head true");
	expect_model_error(", \"mlm_head\": false",
			   "/mlm_head: error: an encoder needs a head to train: mlm_head or nsp_head");
	expect_model_error(", \"position_embedding\": \"rope\"",
			   "/position_embedding: error: an encoder_transformer has learned positions "
			   "(BERT's table), expected \"learned\", got \"rope\"");
	expect_model_error(", \"moe\": {\"experts\": 8, \"top_k\": 2, \"expert_ffn_size\": 64}",
			   "/moe: error: unknown key 'moe'");
}

/* A scenario the plan checks refuse: exit 3 with the JSON path. */
static void expect_plan_error(const char *parallel, const char *training, const char *msg)
{
	char *dir = tmp_dir(), text[2048], args[2048], *err = NULL;
	snprintf(text, sizeof(text),
		 "{\"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\",\n"
		 " \"model\": \"%s\", \"topology\": \"%s\", \"nodes\": 1,\n"
		 " \"parallel\": {%s}, \"training\": {%s}}\n",
		 src_path("models/zoo/bert-large.json"), src_path("topologies/dgx-h100.json"),
		 parallel, training);
	char *path = write_file(dir, "s.json", text);
	snprintf(args, sizeof(args), "run %s --out %s/out --quiet", path, dir);
	int rc = run_ddlsim(args, NULL, &err);
	cr_expect_eq(rc, 3, "exit %d: %s", rc, err);
	cr_expect(err && strstr(err, msg), "wanted '%s' in: %s", msg, err);
	free(err);
	free(path);
	free(dir);
}

Test(encoder, plan_checks_refuse_what_an_encoder_cannot_run)
{
	expect_plan_error("\"dp\": 8", "\"seq_len\": 1024, \"global_batch\": 64, \"micro_batch\": 8",
			 "/training/seq_len: error: must be at most the 512 learned positions of model "
			 "'BERT-Large (uncased)' (max_position), got 1024");
	expect_plan_error("\"dp\": 4, \"cp\": 2",
			 "\"seq_len\": 512, \"global_batch\": 64, \"micro_batch\": 8",
			 "/parallel/cp: error: context parallelism here is the load-balanced causal "
			 "split of a decoder; model 'BERT-Large (uncased)' is an encoder_transformer, "
			 "got cp = 2");
}
