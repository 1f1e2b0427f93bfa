/* test-vit: architecture "vit" (models/model.h): parameter counts of
 * ViT-B/16, L/16, H/14 in closed form, FLOPs per image, the kernels
 * (patch GEMM, non-causal core, pre-LN), the shipped ViT-L/16 scenario end
 * to end and its memory in closed form, and the new keys' bad input. */
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

/* ViTForImageClassification from its config: patch embedding p^2 C h + h,
 * class token h, positions (n^2 + 1) h with n = image / patch, L layers
 * (two LayerNorms 4h, QKV and output with biases 4h^2 + 4h, MLP 2hf + f +
 * h), final LayerNorm 2h, classifier h K + K. */
static double closed_form(double L, double h, double f, double img, double p, double K)
{
	double n = img / p;
	double emb = p * p * 3 * h + h + h + (n * n + 1) * h;
	double layer = 4 * h + 4 * h * h + 4 * h + 2 * h * f + f + h;
	return emb + L * layer + 2 * h + h * K + K;
}

static void expect_count(const char *rel, double L, double h, double f, double p,
			 double published)
{
	struct model *m = zoo(rel);
	double closed = closed_form(L, h, f, 224, p, 1000);
	printf("%s: %.0f parameters (published %.0f)\n", m->name, model_params(m), published);
	cr_expect_eq(closed, published, "%s: closed form %.0f", rel, closed);
	cr_expect_eq(model_params(m), published, "%s: %.0f", rel, model_params(m));
	cr_expect_eq(m->published_params, published);
	cr_expect_eq(model_vit_seq(m), (224 / (long)p) * (224 / (long)p) + 1);
	model_destroy(m);
}

/* google/vit-base-patch16-224: 86,567,656; google/vit-large-patch16-224:
 * 304,326,632; ViT-H/14 (google/vit-huge-patch14-224-in21k's config with
 * a 1000-class head): 632,045,800, the paper's 632M. */
Test(vit, zoo_models_have_the_published_parameter_counts)
{
	expect_count("models/zoo/vit-b16.json", 12, 768, 3072, 16, 86567656);
	expect_count("models/zoo/vit-l16.json", 24, 1024, 4096, 16, 304326632);
	expect_count("models/zoo/vit-h14.json", 32, 1280, 5120, 14, 632045800);
}

/* Training FLOPs per image (3 x forward): the patch GEMM 2 N_p p^2 C h,
 * per token 2 x the layers' weights (24 L h^2 with f = 4h) plus the
 * bidirectional attention over all s tokens (4 s h a layer), the
 * classifier 2 h K on the class token. */
Test(vit, iteration_flops_follow_the_closed_form)
{
	struct model *m = zoo("models/zoo/vit-l16.json");
	double L = 24, h = 1024, s = 197, b = 16, K = 1000;
	double fwd = 2 * 196 * 768 * h + s * (L * 24 * h * h + L * 4 * s * h) + 2 * h * K;
	double want = b * 3 * fwd;
	cr_expect_float_eq(model_iteration_flops(m, b, s), want, want * 1e-12);
	printf("ViT-L/16: %.2f GFLOP a forward pass of one image\n", fwd / 1e9);
	model_destroy(m);
}

/* The kernels execute what the equations count (unfused attention: the
 * model's FLOPs exactly); the core is not causal; the norm comes first
 * (pre-LN); the embedding is im2col + the patch GEMM. */
Test(vit, kernels_run_the_patch_gemm_and_a_non_causal_core)
{
	struct model *m = zoo("models/zoo/vit-b16.json");
	double b = 4, s = 197;
	struct wl_shape shp = { .micro_batch = b, .seq = s, .tp = 1, .dtype = DTYPE_BF16,
				.attention = ATTN_UNFUSED };
	double model = model_iteration_flops(m, b, s);
	double got = workload_iteration_flops(m, &shp, RECOMPUTE_NONE, b);
	cr_expect_float_eq(got, model, model * 1e-12);
	shp.attention = ATTN_FLASH;
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
	cr_expect_str_eq(l.v[0].name, "layernorm");
	op_list_finish(&l);
	op_list_init(&l);
	cr_assert_eq(workload_block(m, &shp, WL_EMBED, PASS_FWD, RECOMPUTE_NONE, &l), 0);
	cr_assert(l.n >= 2);
	cr_expect_str_eq(l.v[0].name, "im2col");
	cr_expect_str_eq(l.v[1].name, "patch_embed");
	cr_expect_float_eq(l.v[1].flops, 2 * b * 196 * 768 * 768, 1);
	op_list_finish(&l);
	model_destroy(m);
}

/* ViT-L/16 on one DGX H100, batch 4096, bf16, DP 8: it runs, fits,
 * reports the model's FLOPs, and its MFU is plausible. */
Test(vit, vit_l16_scenario_runs_end_to_end)
{
	char *d = tmp_dir(), args[2048], *err = NULL;
	snprintf(args, sizeof(args), "run %s --out %s/out --quiet --format json",
		 src_path("scenarios/vit-l16-h100-dp8.json"), d);
	int rc = run_ddlsim(args, NULL, &err);
	cr_assert_eq(rc, 0, "exit %d: %s", rc, err);
	char dir[1100];
	snprintf(dir, sizeof(dir), "%s/out", d);
	json_t *r = load_report(dir);
	cr_assert_not_null(r);
	double t = jnum(r, "summary/iteration_time_s");
	double mt = jnum(r, "summary/model_tflops_per_gpu");
	struct model *m = zoo("models/zoo/vit-l16.json");
	double f = model_iteration_flops(m, 4096, 197);
	printf("ViT-L/16, 8 H100: %.4f s an iteration (%.0f images/s), %.1f model TFLOP/s a GPU\n",
	       t, 4096 / t, mt);
	cr_expect(t > 0);
	cr_expect_float_eq(mt, f / t / 8 / 1e12, mt * 1e-3);
	cr_expect(mt > 0.2 * 989 && mt < 0.8 * 989, "MFU %.1f %%", mt / 989 * 100);
	cr_expect(json_is_true(json_object_get(json_object_get(r, "memory"), "fits")));
	model_destroy(m);
	json_decref(r);
	free(err);
	free(d);
}

/* The ViT-L/16 scenario's GPU (bf16, DP 8, 4 micro-batches of 128
 * images of s = 197 tokens, flash attention) in closed form from the
 * dimensions alone (h 1024, a 16, f 4h, no dropout: ViT's dropout 0):
 *   parameters: patch embedding 16^2 x 3 x h + h, class token h,
 *     positions 197 h, 24 layers of 4h + 4h^2 + 4h + 2hf + f + h, final
 *     LayerNorm 2h, classifier 1000 h + 1000 (304,326,632);
 *   weights and gradients 2 bytes each, Adam 12;
 *   activations per layer (Korthikanti et al. 2022, Table 2, without
 *     dropout: the attention's and the MLP's one-byte masks and the
 *     attention dropout's output and mask go: sbh (32 + 2as/h), the core
 *     bidirectional, as stored for a causal one); flash (memory.h): 32 sbh
 *     + 4 a s b; one micro-batch of the 24 layers in flight (no pipeline);
 *   logits: fp32 logits and gradient of the class token, 2 x 4 x b x 1000. */
Test(vit, vit_l16_memory_follows_the_closed_form)
{
	struct diag d;
	diag_init(&d, stderr);
	struct scenario *sc = scenario_load(src_path("scenarios/vit-l16-h100-dp8.json"), &d);
	cr_assert_not_null(sc);
	diag_finish(&d);
	double h = 1024, a = 16, f = 4096, s = 197, b = 128, L = 24, K = 1000;
	double layer = 4 * h + 4 * h * h + 4 * h + 2 * h * f + f + h;
	double psi = 16 * 16 * 3 * h + h + h + s * h + L * layer + 2 * h + h * K + K;
	double flash = 32 * s * b * h + 4 * a * s * b, unfused = s * b * h * (32 + 2 * a * s / h);
	struct mem_anatomy o;

	cr_assert_eq(psi, 304326632.0);
	cr_assert_eq(sc->plan.training.attention, ATTN_FLASH);
	anatomy_stage(sc->in, &sc->plan, 0, &o);
	cr_expect_eq(o.params_local, psi);
	cr_expect_eq(o.weights_bytes, 2 * psi);
	cr_expect_eq(o.grads_bytes, 2 * psi);
	cr_expect_eq(o.optimizer_bytes, 12 * psi);
	cr_expect_float_eq(o.act_per_layer_bytes, flash, 1e-12 * flash);
	cr_expect_float_eq(o.activations_bytes, L * flash, 1e-12 * L * flash);
	cr_expect_eq(o.logits_bytes, 2 * 4 * b * K);
	printf("ViT-L/16: %.3f GB of activations a layer and micro-batch (flash), %.3f GB "
	       "unfused\n", flash / 1e9, unfused / 1e9);

	struct plan pl = sc->plan;
	pl.training.attention = ATTN_UNFUSED;
	pl.parallel.zero = ZERO_2;
	anatomy_stage(sc->in, &pl, 0, &o);
	cr_expect_float_eq(o.act_per_layer_bytes, unfused, 1e-12 * unfused);
	cr_expect_float_eq(o.grads_bytes, 2 * psi / 8, 1e-12 * psi);
	cr_expect_float_eq(o.optimizer_bytes, 12 * psi / 8, 1e-12 * psi);
	scenario_destroy(sc);
}

/* ---- bad input ---- */

static void expect_model_error(const char *body, const char *msg)
{
	char text[2048];
	snprintf(text, sizeof(text),
		 "{\"schema\": \"ddlsim.model\", \"schema_version\": \"1.2\", \"name\": \"v\",\n"
		 " \"source\": \"test\", \"architecture\": \"vit\", \"layers\": 2,\n"
		 " \"hidden_size\": 64, \"heads\": 4%s}\n", body);
	expect_model_text_error(text, msg);
}

Test(vit, rejects_bad_keys)
{
	expect_model_error(", \"patch_size\": 16", "/image_size: error: missing required key 'image_size'");
	expect_model_error(", \"image_size\": 224", "/patch_size: error: missing required key 'patch_size'");
	expect_model_error(", \"image_size\": 0, \"patch_size\": 16",
			   "/image_size: error: must be >= 1, got 0");
	expect_model_error(", \"image_size\": 224, \"patch_size\": 0",
			   "/patch_size: error: must be >= 1, got 0");
	expect_model_error(", \"image_size\": 224, \"patch_size\": 15",
			   "/patch_size: error: must divide image_size 224, got 15");
	expect_model_error(", \"image_size\": 224, \"patch_size\": 16, \"channels\": 0",
			   "/channels: error: must be >= 1, got 0");
	expect_model_error(", \"image_size\": 224, \"patch_size\": 16, \"num_classes\": \"1k\"",
			   "/num_classes: error: expected an integer, got string");
	expect_model_error(", \"image_size\": 224, \"patch_size\": 16, \"vocab_size\": 100",
			   "/vocab_size: error: unknown key 'vocab_size'");
	expect_model_error(", \"image_size\": 224, \"patch_size\": 16, \"position_embedding\": \"rope\"",
			   "/position_embedding: error: a vit has learned positions, expected \"learned\", "
			   "got \"rope\"");
	expect_model_error(", \"image_size\": 224, \"patch_size\": 16, \"kv_heads\": 2",
			   "/kv_heads: error: a vit has multi-head attention, expected 4 (heads), got 2");
}

/* A scenario refused: exit 3 with the JSON path. */
static void expect_plan_error(const char *parallel, const char *training, const char *msg)
{
	char *dir = tmp_dir(), text[2048], args[2048], *err = NULL;
	snprintf(text, sizeof(text),
		 "{\"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\",\n"
		 " \"model\": \"%s\", \"topology\": \"%s\", \"nodes\": 1,\n"
		 " \"parallel\": {%s}, \"training\": {%s}}\n",
		 src_path("models/zoo/vit-l16.json"), src_path("topologies/dgx-h100.json"),
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

Test(vit, seq_len_is_derived_from_the_image)
{
	expect_plan_error("\"dp\": 8", "\"seq_len\": 256, \"global_batch\": 64, \"micro_batch\": 8",
			 "/training/seq_len: error: must be left out or equal the 197 tokens of vit "
			 "model 'ViT-L/16 (224 px, ImageNet-1k head)' ((image_size / patch_size)^2 + 1), "
			 "got 256");
	expect_plan_error("\"dp\": 4, \"cp\": 2", "\"global_batch\": 64, \"micro_batch\": 8",
			 "/parallel/cp: error: context parallelism here is the load-balanced causal "
			 "split of a decoder; model 'ViT-L/16 (224 px, ImageNet-1k head)' is a vit, "
			 "got cp = 2");
}

/* A goal of `ddlsim plan` (sim/search.h) for model rel with `keys`
 * (seq_len or not), a global batch of exactly 4096 x 197 tokens, one
 * DGX H100 node; returns the exit code, the output in *out. */
static int plan_goal(const char *rel, const char *keys, char **out, char **err, char **path)
{
	char *dir = tmp_dir(), text[2048], args[2048];
	snprintf(text, sizeof(text),
		 "{\"schema\": \"ddlsim.goal\", \"schema_version\": \"1.0\", \"name\": \"v\",\n"
		 " \"model\": \"%s\",%s \"epochs\": 10, \"dataset_tokens\": 252389899,\n"
		 " \"deadline_days\": 1, \"global_batch_tokens\": {\"min\": 806912, \"max\": 806912},\n"
		 " \"search\": {\"tp\": [1], \"pp\": [1], \"zero\": [1], \"micro_batch\": [4, 8]},\n"
		 " \"clusters\": [{\"topology\": \"%s\", \"nodes\": [1]}]}\n",
		 src_path(rel), keys, src_path("topologies/dgx-h100.json"));
	*path = write_file(dir, "g.json", text);
	snprintf(args, sizeof(args), "plan %s --out %s/out --quiet --screen-only", *path, dir);
	free(dir);
	return run_ddlsim(args, out, err);
}

/* A ViT goal may leave seq_len out: 197 tokens, so the batch of 806,912
 * tokens is 4096 images; a differing seq_len is refused at /seq_len; a
 * decoder's goal still needs it. */
Test(vit, goal_derives_seq_len_from_the_image)
{
	char *out = NULL, *err = NULL, *path = NULL, want[2048];
	int rc = plan_goal("models/zoo/vit-l16.json", "", &out, &err, &path);
	cr_assert_eq(rc, 0, "exit %d: %s", rc, err);
	cr_expect(strstr(out, "tp1 pp1 dp8 mb8 gb4096 z1") != NULL, "no 4096-image plan in:\n%s", out);
	free(out), free(err), free(path);
	out = err = NULL;
	rc = plan_goal("models/zoo/vit-l16.json", " \"seq_len\": 197,", &out, &err, &path);
	cr_expect_eq(rc, 0, "exit %d: %s", rc, err);
	free(out), free(err), free(path);
	out = err = NULL;
	rc = plan_goal("models/zoo/vit-l16.json", " \"seq_len\": 196,", &out, &err, &path);
	cr_expect_eq(rc, 3);
	snprintf(want, sizeof(want), "%s: /seq_len: error: must be left out or equal the 197 tokens "
		 "of vit model 'ViT-L/16 (224 px, ImageNet-1k head)' ((image_size / patch_size)^2 "
		 "+ 1), got 196\n", path);
	cr_expect_str_eq(err, want);
	free(out), free(err), free(path);
	out = err = NULL;
	rc = plan_goal("models/zoo/llama2-7b.json", "", &out, &err, &path);
	cr_expect_eq(rc, 3);
	snprintf(want, sizeof(want), "%s: /seq_len: error: missing required key 'seq_len'\n", path);
	cr_expect_str_eq(err, want);
	free(out), free(err), free(path);
}
