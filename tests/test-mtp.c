/* test-mtp: the multi-token-prediction modules (models/model.h
 * mtp_depth; DeepSeek-V3 arXiv 2412.19437 section 2.2) and Adam's moments
 * in bf16 (training.optimizer_state_dtype, section 3.3.3): parameters,
 * FLOPs and memory against figures worked by hand. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "testutil.h"
#include "workload.h"

/* A 2-layer GPT (h 1024, 16 heads, f 4h, GELU, LayerNorm, V 32000) with
 * `extra` keys, written to dir. */
static char *tiny_model(const char *dir, const char *extra)
{
	char model[1024];
	snprintf(model, sizeof(model),
		 "{\"schema\":\"ddlsim.model\",\"schema_version\":\"1.4\",\"name\":\"tiny\",\"source\":\"test\","
		 "\"architecture\":\"decoder_transformer\",\"layers\":2,\"hidden_size\":1024,\"heads\":16,"
		 "%s\"vocab_size\":32000}", extra);
	return write_file(dir, "tiny.json", model);
}

static struct model *load_tiny(const char *extra)
{
	char *d = tmp_dir(), *p = tiny_model(d, extra);
	struct diag dg;
	diag_init(&dg, NULL);
	struct model *m = model_load(p, &dg);
	cr_assert_not_null(m, "%s", diag_text(&dg));
	diag_finish(&dg);
	free(p), free(d);
	return m;
}

/* DeepSeek-V3's module (HF num_nextn_predict_layers 1): an MoE block of
 * 187,107,328 (MLA) + 2 x 7168 (norms) + 256 x 7168 (router) + 257 x 3 x
 * 7168 x 2048 (the shared and the routed experts) = 11,507,286,016, and
 * eh_proj 2 x 7168^2 = 102,760,448 with three RMSNorms of 7168: 11.61 B
 * of its own; the 671 B the report counts do not change. */
Test(mtp, deepseek_v3_module_params_by_hand)
{
	struct model *m = load_model("models/zoo/deepseek-v3.json");
	cr_assert_eq(m->mtp_depth, 1);
	cr_expect_eq(model_mtp_extra_params(m), 102760448.0 + 21504.0);
	cr_expect_eq(model_mtp_params(m), 11507286016.0 + 102781952.0);
	cr_expect_eq(model_params(m), 671026404352.0);
	model_destroy(m);
}

/* Model FLOPs: per token and module the block's GEMMs 2 (4 h^2 + 8 h^2),
 * its QK^T and AV 2 a (d + d) s = 4 h s, eh_proj 2 (2h) h and the head
 * 2 h V; h 1024, s 1024, V 32000: 25,165,824 + 4,194,304 + 4,194,304 +
 * 65,536,000 = 99,090,432, x 3 (forward and backward) x 8 x 1024 tokens
 * x 2 modules. */
Test(mtp, model_flops_add_two_modules_by_hand)
{
	struct model *a = load_tiny(""), *b = load_tiny("\"mtp_depth\": 2,");
	double want = 3.0 * 8 * 1024 * 2 * 99090432.0;
	cr_expect_eq(model_mtp_iteration_flops(b, 8, 1024), want);
	double got = model_iteration_flops(b, 8, 1024) - model_iteration_flops(a, 8, 1024);
	cr_expect_float_eq(got, want, 1e-9 * want, "%.17g, want %.17g", got, want);
	model_destroy(a), model_destroy(b);
}

/* The head block prices each module's eh_proj, 2 T (2h) (h / t), and its
 * head GEMM, 2 T h (V / t): T 2 x 4096 tokens, t 2, one module. */
Test(mtp, head_block_prices_the_projection_and_head_gemms)
{
	struct model *a = load_tiny(""), *b = load_tiny("\"mtp_depth\": 1,");
	struct wl_shape s = { .micro_batch = 2, .seq = 4096, .tp = 2, .dtype = DTYPE_BF16,
			      .attention = ATTN_FLASH, .cp = 1, .ep = 1,
			      .attn_backend = { ATTN_BE_BEST, ATTN_BE_BEST } };
	double f[2];
	for (int i = 0; i < 2; i++) {
		struct op_list l;
		op_list_init(&l);
		cr_assert_eq(workload_block(i ? b : a, &s, WL_HEAD, PASS_FWD, RECOMPUTE_NONE, &l), 0);
		f[i] = op_list_flops(&l);
		op_list_finish(&l);
	}
	double T = 8192, h = 1024;
	double want = 2 * T * 2 * h * (h / 2) + 2 * T * h * (32000 / 2);
	cr_expect_float_eq(f[1] - f[0], want, 1e-9 * want, "%.17g, want %.17g", f[1] - f[0], want);
	model_destroy(a), model_destroy(b);
}

Test(mtp, refused_with_a_sliding_window)
{
	char *d = tmp_dir(), *p = tiny_model(d, "\"sliding_window\": 128, \"mtp_depth\": 1,");
	struct diag dg;
	diag_init(&dg, NULL);
	cr_assert_null(model_load(p, &dg));
	cr_expect(strstr(diag_text(&dg), "/mtp_depth: error: with sliding_window is not modelled"), "%s",
		  diag_text(&dg));
	diag_finish(&dg);
	free(p), free(d);
}

/* The tiny model under pp 2 (ZeRO 1 over dp 4), one stage per layer. */
static json_t *run_tiny(const char *model_extra, const char *training_extra)
{
	char *d = tmp_dir(), *mp = tiny_model(d, model_extra), text[4096], args[2048], *err = NULL;
	snprintf(text, sizeof(text),
		 "{\"schema\":\"ddlsim.scenario\",\"schema_version\":\"1.0\",\"model\":\"%s\","
		 "\"topology\":\"%s\",\"nodes\":1,\"parallel\":{\"pp\": 2, \"dp\": 4, \"zero\": 1},"
		 "\"training\":{\"seq_len\":1024,\"global_batch\":16,\"micro_batch\":1%s},"
		 "\"communication\":{\"algorithm\":\"ring\"}}",
		 mp, src_path("topologies/dgx-a100.json"), training_extra);
	char *sp = write_file(d, "s.json", text);
	snprintf(args, sizeof(args), "run %s --out %s/out --quiet", sp, d);
	int rc = run_ddlsim(args, NULL, &err);
	cr_assert_eq(rc, 0, "exit %d: %s", rc, err);
	char out[1100];
	snprintf(out, sizeof(out), "%s/out", d);
	json_t *r = load_report(out);
	cr_assert_not_null(r);
	free(sp), free(mp), free(d);
	return r;
}

/* One module on the last stage (its head's): a block of 12 h^2 + 4 h,
 * eh_proj 2 h^2 and three LayerNorms of 2h: 14,690,304 parameters more,
 * 2 bytes each of weights and of gradients; the loss's peak holds its
 * fp32 softmax, 4 bytes x 1024 tokens x 32000 logits; stage 0 holds what
 * it held. The module's work lengthens the iteration. */
Test(mtp, last_stage_holds_the_module)
{
	json_t *a = run_tiny("", ""), *b = run_tiny("\"mtp_depth\": 1,", "");
	double dp = 14 * 1024.0 * 1024 + 10 * 1024;
	cr_expect_eq(jnum(b, "memory/per_stage/1/params_local") - jnum(a, "memory/per_stage/1/params_local"), dp);
	cr_expect_eq(jnum(b, "memory/per_stage/0/params_local"), jnum(a, "memory/per_stage/0/params_local"));
	cr_expect_float_eq(jnum(b, "memory/per_stage/1/weights_GB") - jnum(a, "memory/per_stage/1/weights_GB"),
			   2 * dp / 1e9, 1e-12);
	cr_expect_float_eq(jnum(b, "memory/per_stage/1/gradients_GB") - jnum(a, "memory/per_stage/1/gradients_GB"),
			   2 * dp / 1e9, 1e-12);
	cr_expect_float_eq(jnum(b, "memory/per_stage/1/logits_GB") - jnum(a, "memory/per_stage/1/logits_GB"),
			   4 * 1024 * 32000.0 / 1e9, 1e-12);
	cr_expect_eq(jnum(b, "memory/per_stage/1/layers"), 2);
	cr_expect_gt(jnum(b, "summary/iteration_time_s"), jnum(a, "summary/iteration_time_s"));
	json_decref(a), json_decref(b);
}

/* bf16 moments: 4 bytes per parameter fewer of optimizer state, sharded
 * over the 4 data-parallel ranks (ZeRO-1), on each stage; the step moves
 * fewer bytes, so the iteration is no longer. */
Test(mtp, bf16_moments_keep_eight_bytes_of_state)
{
	json_t *a = run_tiny("", ""), *b = run_tiny("", ", \"optimizer_state_dtype\": \"bf16\"");
	for (int s = 0; s < 2; s++) {
		char k[64], o[64];
		snprintf(k, sizeof(k), "memory/per_stage/%d/params_local", s);
		snprintf(o, sizeof(o), "memory/per_stage/%d/optimizer_GB", s);
		double want = 4 * jnum(a, k) / 4 / 1e9;
		cr_expect_float_eq(jnum(a, o) - jnum(b, o), want, 1e-12, "stage %d", s);
		cr_expect_float_eq(jnum(b, o), 8 * jnum(a, k) / 4 / 1e9, 1e-12, "stage %d", s);
	}
	cr_expect_leq(jnum(b, "summary/iteration_time_s"), jnum(a, "summary/iteration_time_s"));
	json_t *t = json_object_get(json_object_get(b, "scenario"), "training");
	cr_expect_str_eq(json_string_value(json_object_get(t, "optimizer_state_dtype")), "bf16");
	json_decref(a), json_decref(b);
}

Test(mtp, optimizer_state_dtype_takes_fp32_or_bf16)
{
	char *d = tmp_dir(), *mp = tiny_model(d, ""), text[4096], args[2048], *err = NULL;
	snprintf(text, sizeof(text),
		 "{\"schema\":\"ddlsim.scenario\",\"schema_version\":\"1.0\",\"model\":\"%s\","
		 "\"topology\":\"%s\",\"nodes\":1,\"parallel\":{\"dp\": 8},"
		 "\"training\":{\"seq_len\":1024,\"global_batch\":16,\"optimizer_state_dtype\":\"fp16\"}}",
		 mp, src_path("topologies/dgx-a100.json"));
	char *sp = write_file(d, "s.json", text);
	snprintf(args, sizeof(args), "run %s --out %s/out --quiet", sp, d);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 3, "%s", err);
	cr_expect(strstr(err, "/training/optimizer_state_dtype: error: expected one of {fp32, bf16}, got 'fp16'"),
		  "%s", err);
	free(sp), free(mp), free(d);
}

/* training.master_weights "remainders" (Apex store_param_remainders):
 * 2 bytes per parameter fewer of optimizer state on each stage, sharded
 * over the 4 ranks, and written back into the scenario; it needs bf16
 * weights, so fp32 training is refused at its JSON path. */
Test(mtp, master_weight_remainders_keep_ten_bytes_of_state)
{
	json_t *a = run_tiny("", ""), *b = run_tiny("", ", \"master_weights\": \"remainders\"");
	for (int s = 0; s < 2; s++) {
		char k[64], o[64];
		snprintf(k, sizeof(k), "memory/per_stage/%d/params_local", s);
		snprintf(o, sizeof(o), "memory/per_stage/%d/optimizer_GB", s);
		cr_expect_float_eq(jnum(b, o), 10 * jnum(a, k) / 4 / 1e9, 1e-12, "stage %d", s);
		cr_expect_float_eq(jnum(a, o) - jnum(b, o), 2 * jnum(a, k) / 4 / 1e9, 1e-12, "stage %d", s);
	}
	json_t *t = json_object_get(json_object_get(b, "scenario"), "training");
	cr_expect_str_eq(json_string_value(json_object_get(t, "master_weights")), "remainders");
	json_decref(a), json_decref(b);

	char *d = tmp_dir(), *mp = tiny_model(d, ""), text[4096], args[2048], *err = NULL;
	snprintf(text, sizeof(text),
		 "{\"schema\":\"ddlsim.scenario\",\"schema_version\":\"1.0\",\"model\":\"%s\","
		 "\"topology\":\"%s\",\"nodes\":1,\"parallel\":{\"dp\": 8},"
		 "\"training\":{\"seq_len\":1024,\"global_batch\":16,\"precision\":\"fp32\","
		 "\"master_weights\":\"remainders\"}}",
		 mp, src_path("topologies/dgx-a100.json"));
	char *sp = write_file(d, "s.json", text);
	snprintf(args, sizeof(args), "run %s --out %s/out --quiet", sp, d);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 3, "%s", err);
	cr_expect(strstr(err, "/training/master_weights: error: \"remainders\" needs bf16 weights"), "%s", err);
	free(sp), free(mp), free(d);
}
