/* test-cnn: CNN model files, ResNet generation, and data-parallel ResNet-50
 * training against published throughput. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnn.h"
#include "model.h"
#include "scenario.h"
#include "testutil.h"

static struct model *resnet(long depth)
{
	char *dir = tmp_dir(), text[512];
	snprintf(text, sizeof(text),
		 "{\"schema\": \"ddlsim.model\", \"schema_version\": \"1.0\", \"name\": \"r\",\n"
		 " \"source\": \"test\", \"architecture\": \"cnn\",\n"
		 " \"cnn\": {\"family\": \"resnet\", \"depth\": %ld}}\n", depth);
	char *path = write_file(dir, "m.json", text);
	struct diag d;
	diag_init(&d, stderr);
	struct model *m = model_load(path, &d);
	diag_finish(&d);
	free(path);
	free(dir);
	return m;
}

Test(cnn, resnet50_has_the_published_parameter_count)
{
	struct diag d;
	diag_init(&d, stderr);
	struct model *m = model_load(src_path("models/zoo/resnet50.json"), &d);
	cr_assert_not_null(m);
	double p = model_params(m);
	printf("ResNet-50 parameters: %.0f (published 25,557,032, %+.4f%%)\n", p,
	       100 * (p / 25557032 - 1));
	cr_expect(fabs(p / m->published_params - 1) < 0.005);
	cr_expect_eq(p, 25557032);
	/* torchvision: 4.09 GFLOPS (multiply-adds) at 224 x 224 */
	double f = cnn_forward_flops(m);
	printf("ResNet-50 forward: %.3f GMAC per image (published 4.09)\n", f / 2e9);
	cr_expect(fabs(f / 2e9 / 4.09 - 1) < 0.01);
	cr_expect_float_eq(model_iteration_flops(m, 64, 1), 3 * 64 * f, 1);
	model_destroy(m);
	diag_finish(&d);
}

Test(cnn, other_resnets_match_torchvision_parameter_counts)
{
	static const struct { long depth; double params; } v[] = {
		{ 18, 11689512 }, { 34, 21797672 }, { 101, 44549160 }, { 152, 60192808 },
	};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		struct model *m = resnet(v[i].depth);
		cr_assert_not_null(m);
		cr_expect_eq(model_params(m), v[i].params, "ResNet-%ld: %.0f", v[i].depth,
			     model_params(m));
		model_destroy(m);
	}
}

Test(cnn, resnet50_layers_have_the_expected_shapes)
{
	struct model *m = resnet(50);
	struct cnn_net net;
	cr_assert_eq(cnn_build(m, &net), 0);
	int convs = 0;
	for (int i = 0; i < net.n; i++)
		convs += net.v[i].kind == CNN_CONV;
	cr_expect_eq(convs, 53);  /* 49 + stem + 4 projections - 1 fc counted apart */
	cr_expect_eq(net.ngroups, 18);
	const struct cnn_layer *last_conv = NULL;
	for (int i = 0; i < net.n; i++)
		if (net.v[i].kind == CNN_CONV)
			last_conv = &net.v[i];
	cr_expect_eq(last_conv->p, 7);
	cr_expect_eq(last_conv->k, 2048);
	cr_expect_str_eq(net.v[net.n - 1].name, "fc");
	cnn_net_finish(&net);
	model_destroy(m);
}

static void expect_model_error(const char *body, const char *msg)
{
	char text[1024];
	snprintf(text, sizeof(text),
		 "{\"schema\": \"ddlsim.model\", \"schema_version\": \"1.0\", \"name\": \"r\",\n"
		 " \"source\": \"test\", \"architecture\": \"cnn\", %s}\n", body);
	expect_model_text_error(text, msg);
}

Test(cnn, rejects_unknown_resnet_depth)
{
	expect_model_error("\"cnn\": {\"family\": \"resnet\", \"depth\": 42}",
			   "/cnn/depth: error: expected a ResNet depth (one of 18, 34, 50, 101, 152), got 42");
}

Test(cnn, rejects_transformer_keys_in_a_cnn_file)
{
	expect_model_error("\"cnn\": {\"family\": \"resnet\", \"depth\": 50}, \"hidden_size\": 64",
			   "/hidden_size: error: unknown key 'hidden_size'");
}

Test(cnn, requires_the_generator)
{
	expect_model_error("\"published_params\": 1", "/cnn: error: missing required key 'cnn'");
}

static void expect_scenario_error(const char *parallel, const char *training, const char *msg)
{
	char *dir = tmp_dir(), text[2048], want[2048];
	snprintf(text, sizeof(text),
		 "{\"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\",\n"
		 " \"model\": \"%s\", \"topology\": \"%s\", \"nodes\": 1, %s\n"
		 " \"training\": {%s}}\n",
		 src_path("models/zoo/resnet50.json"), src_path("topologies/dgx-a100.json"),
		 parallel, training);
	char *path = write_file(dir, "s.json", text);
	struct diag d;
	diag_init(&d, NULL);
	cr_expect_null(scenario_load(path, &d));
	snprintf(want, sizeof(want), "%s: %s\n", path, msg);
	cr_expect_str_eq(diag_text(&d), want);
	diag_finish(&d);
	free(path);
	free(dir);
}

Test(cnn, scenario_rejects_tensor_parallelism)
{
	expect_scenario_error("\"parallel\": {\"tp\": 2},", "\"global_batch\": 256",
			      "/parallel/tp: error: CNN models train with data parallelism only, got tp = 2");
}

Test(cnn, scenario_rejects_pipeline_parallelism)
{
	expect_scenario_error("\"parallel\": {\"pp\": 2},", "\"global_batch\": 256",
			      "/parallel/pp: error: CNN models train with data parallelism only, got pp = 2");
}

Test(cnn, scenario_rejects_zero)
{
	expect_scenario_error("\"parallel\": {\"zero\": 1},", "\"global_batch\": 256",
			      "/parallel/zero: error: ZeRO is not supported for CNN models, got zero = 1");
}

Test(cnn, scenario_rejects_seq_len)
{
	expect_scenario_error("", "\"global_batch\": 256, \"seq_len\": 2048",
			      "/training/seq_len: error: applies to transformer models only, not to CNN model 'ResNet-50'");
}

/* A CNN's optimizer state is the stack's (sim/build_cnn.c: fp32 master,
 * 16-bit copy, the stack's step bytes): a transformer's optimizer
 * options would be taken and have no effect. */
Test(cnn, scenario_rejects_master_weight_remainders)
{
	expect_scenario_error("", "\"global_batch\": 256, \"precision\": \"bf16\", \"master_weights\": \"remainders\"",
			      "/training/master_weights: error: applies to transformer models only, got \"remainders\"");
}

Test(cnn, scenario_rejects_bf16_optimizer_state)
{
	expect_scenario_error("", "\"global_batch\": 256, \"precision\": \"bf16\", \"optimizer_state_dtype\": \"bf16\"",
			      "/training/optimizer_state_dtype: error: applies to transformer models only, got \"bf16\"");
}

static json_t *run_scenario(const char *rel)
{
	char *dir = tmp_dir(), args[2048], rdir[1100];
	char *err = NULL;
	snprintf(args, sizeof(args), "run %s --out %s --quiet", src_path(rel), dir);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	snprintf(rdir, sizeof(rdir), "%s", dir);
	json_t *r = load_report(rdir);
	cr_assert_not_null(r);
	free(err);
	free(dir);
	return r;
}

/* Seed 001 (OSU HiDL tutorial, Horovod pytorch_synthetic_benchmark.py,
 * ResNet-50, batch 64 per GPU, fp32, V100): 336.0 images/s on one GPU,
 * 650.3 images/s on two nodes with one GPU each (1.935x).
 *
 * Tolerances: the V100 has no measured profile; its efficiencies are
 * derived, not fitted (calib/EFFICIENCIES.md), and the tutorial does not
 * say whether its V100s are SXM2 (15.7 FP32 TFLOP/s) or PCIe (14): that
 * alone is 11% of the compute time. +-15% on throughput covers it. The
 * two-node scaling depends only on the overlap of a ~100 MB all-reduce
 * with backward, which the simulator models directly: +-5%. */
Test(cnn, resnet50_v100_throughput_matches_seed_001)
{
	json_t *one = run_scenario("scenarios/resnet50-v100-1gpu.json");
	json_t *two = run_scenario("scenarios/resnet50-v100-2nodes.json");
	double s1 = jnum(one, "summary/samples_per_s"), s2 = jnum(two, "summary/samples_per_s");
	double scaling = s2 / s1, pub_scaling = 650.3 / 336.0;
	printf("ResNet-50 V100 1 GPU:   predicted %.1f images/s, published 336.0 (%+.1f%%)\n", s1,
	       100 * (s1 / 336.0 - 1));
	printf("ResNet-50 V100 2 nodes: predicted %.1f images/s, published 650.3 (%+.1f%%)\n", s2,
	       100 * (s2 / 650.3 - 1));
	printf("scaling 1 -> 2 nodes:   predicted %.3fx, published %.3fx (%+.1f%%)\n", scaling,
	       pub_scaling, 100 * (scaling / pub_scaling - 1));
	cr_expect(fabs(s1 / 336.0 - 1) < 0.15);
	cr_expect(fabs(s2 / 650.3 - 1) < 0.15);
	cr_expect(fabs(scaling / pub_scaling - 1) < 0.05);
	/* data parallelism moved the gradients: 25.56 M fp32 parameters */
	cr_expect(jnum(two, "summary/model_tflops_per_gpu") > 0);
	json_decref(one);
	json_decref(two);
}

/* A ResNet-50 step on one DGX H100 under NVIDIA's MXNet stack, with
 * batch-norm groups of g GPUs: one micro-batch of 16 images per GPU and
 * every gradient in one bucket (the MLPerf configs' Horovod group). */
static json_t *mxnet_step(int g)
{
	char text[2048];
	snprintf(text, sizeof(text),
		 "{\"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\",\n"
		 " \"model\": \"%s\", \"topology\": \"%s\", \"nodes\": 1,\n"
		 " \"parallel\": {\"bn_group\": %d},\n"
		 " \"training\": {\"global_batch\": 128, \"micro_batch\": 16, \"precision\": \"fp16\"},\n"
		 " \"communication\": {\"bucket_MB\": 67.108864},\n"
		 " \"compute\": {\"stack\": \"mxnet-nhwc-bn\"}}\n",
		 src_path("models/zoo/resnet50.json"), src_path("topologies/dgx-h100.json"), g);
	return report_of_text(text);
}

/* NVIDIA's NHWC batch norm with bn_group g exchanges its partial sums
 * with a peer in log2(g) steps, twice forward and twice backward, each
 * step one NVLink latency (DGX H100: 2 us): ResNet-50's 53 batch norms
 * wait 53 x 2 x log2(g) x 2 us more in each pass. */
Test(cnn, bn_group_adds_one_link_latency_per_exchange)
{
	json_t *r1 = mxnet_step(1), *r2 = mxnet_step(2), *r8 = mxnet_step(8);
	const char *fw = "breakdown/rank_classes/0/figures/forward_s";
	const char *bw = "breakdown/rank_classes/0/figures/backward_s";
	double per_step = 53 * 2 * 2e-6;
	cr_expect_float_eq(jnum(r2, fw) - jnum(r1, fw), per_step, 1e-12);
	cr_expect_float_eq(jnum(r2, bw) - jnum(r1, bw), per_step, 1e-12);
	cr_expect_float_eq(jnum(r8, fw) - jnum(r1, fw), 3 * per_step, 1e-12);
	cr_expect_float_eq(jnum(r8, "summary/iteration_time_s") - jnum(r1, "summary/iteration_time_s"),
			   6 * per_step, 1e-9);
	/* the LARS step (models/stack.c): 24 B per parameter and 10 kernels
	 * at the H100's element-wise rate (3350 GB/s x 0.77, 4 us each) */
	double params = jnum(r1, "memory/per_stage/0/params_local");
	cr_expect_float_eq(jnum(r1, "breakdown/rank_classes/0/figures/optimizer_s"),
			   params * 24 / (3350e9 * 0.77) + 10 * 4e-6, 1e-12);
	json_decref(r1);
	json_decref(r2);
	json_decref(r8);
}

Test(cnn, scenario_rejects_a_bn_group_that_does_not_divide_the_node)
{
	expect_scenario_error("\"parallel\": {\"bn_group\": 3},", "\"global_batch\": 256",
			      "/parallel/bn_group: error: expected a power of two dividing the 8 GPUs of a "
			      "node (the group exchanges statistics over the node's links), got 3");
	expect_scenario_error("\"parallel\": {\"bn_group\": 32},", "\"global_batch\": 256",
			      "/parallel/bn_group: error: expected at most 16 GPUs per batch-norm "
			      "group, got 32");
}
