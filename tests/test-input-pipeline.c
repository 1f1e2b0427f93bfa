/* test-input-pipeline: a CNN's data loader (models/input_pipeline.h)
 * against the closed form max(GPU step, images / loader rate). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "input_pipeline.h"
#include "scenario.h"
#include "testutil.h"

/* ResNet-50, 256 images per GPU, fp16, on gpus GPUs of one DGX A100
 * (128 cores), with the input_pipeline object ip ("" = none). */
static json_t *step(int gpus, const char *ip)
{
	char text[2048];
	snprintf(text, sizeof(text),
		 "{\"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\",\n"
		 " \"model\": \"%s\", \"topology\": \"%s\", \"nodes\": 1, \"gpus_per_node_used\": %d,\n"
		 " \"training\": {\"global_batch\": %d, \"micro_batch\": 256, \"precision\": \"fp16\"%s%s%s}}\n",
		 src_path("models/zoo/resnet50.json"), src_path("topologies/dgx-a100.json"), gpus,
		 256 * gpus, ip[0] ? ", \"input_pipeline\": {" : "", ip, ip[0] ? "}" : "");
	json_t *r = report_of_text(text);
	cr_assert_not_null(r);
	return r;
}

static const char *IT = "summary/iteration_time_s";

/* 16 cores x 145 images/s = 2320 images/s for the node's 8 x 256 images:
 * the loader takes 2048 / 2320 s, slower than the GPUs' step, and the
 * step waits for it. */
Test(input_pipeline, cpu_loader_bounds_the_step_at_cores_times_rate)
{
	json_t *none = step(8, ""), *pil = step(8, "\"loader\": \"pytorch-pil\", \"cpu_cores\": 16");
	double gpu_s = jnum(none, IT), loader_s = 2048 / (16 * INPUT_PIL_CORE_IMG_PER_S);
	cr_assert(loader_s > gpu_s, "the fixture must be input-bound: %g vs %g", loader_s, gpu_s);
	cr_expect_float_eq(jnum(pil, IT), loader_s, 1e-12);
	cr_expect_float_eq(jnum(pil, "summary/samples_per_s"), 16 * INPUT_PIL_CORE_IMG_PER_S, 1e-6);
	cr_expect_float_eq(jnum(pil, "input_pipeline/gpu_iteration_s"), gpu_s, 1e-12);
	cr_expect_float_eq(jnum(pil, "input_pipeline/supply_img_per_s"), 2320, 1e-9);
	cr_expect_float_eq(jnum(pil, "input_pipeline/demand_img_per_s"), 2048 / gpu_s, 1e-6);
	cr_expect_float_eq(jnum(pil, "input_pipeline/input_bound_fraction"), 1 - gpu_s / loader_s, 1e-12);
	cr_expect(json_is_true(json_object_get(json_object_get(pil, "input_pipeline"), "input_bound")));
	json_decref(none);
	json_decref(pil);
}

/* workers_per_gpu caps the cores: 2 workers x 8 GPUs = 16 of the DGX
 * A100's 128 (the topology's node.cpu_cores). */
Test(input_pipeline, workers_per_gpu_caps_the_cores)
{
	json_t *w = step(8, "\"loader\": \"pytorch-pil\", \"workers_per_gpu\": 2");
	cr_expect_float_eq(jnum(w, IT), 2048 / (16 * INPUT_PIL_CORE_IMG_PER_S), 1e-12);
	json_decref(w);
}

/* One GPU fed by 128 cores (18 560 images/s) runs as without a loader. */
Test(input_pipeline, a_loader_that_keeps_up_leaves_the_step_alone)
{
	json_t *none = step(1, ""), *pil = step(1, "\"loader\": \"pytorch-pil\"");
	cr_expect_float_eq(jnum(pil, "input_pipeline/supply_img_per_s"), 128 * INPUT_PIL_CORE_IMG_PER_S, 1e-9);
	cr_expect_eq(jnum(pil, IT), jnum(none, IT));
	cr_expect(json_is_false(json_object_get(json_object_get(pil, "input_pipeline"), "input_bound")));
	json_decref(none);
	json_decref(pil);
}

/* DALI runs on each GPU: 256 images at 1000 images/s take 0.256 s, which
 * a GPU's ResNet-50 step (~0.09 s) must wait for; at the A100's measured
 * 7000 images/s it keeps up. */
Test(input_pipeline, dali_bounds_each_gpu_at_its_rate)
{
	json_t *none = step(8, ""), *slow = step(8, "\"loader\": \"dali-gpu\", \"gpu_img_per_s\": 1000");
	json_t *a100 = step(8, "\"loader\": \"dali-gpu\"");
	cr_expect_float_eq(jnum(slow, IT), 0.256, 1e-12);
	cr_expect_float_eq(jnum(slow, "input_pipeline/supply_img_per_s"), 1000, 1e-9);
	cr_expect_eq(jnum(a100, IT), jnum(none, IT));
	cr_expect_float_eq(jnum(a100, "input_pipeline/supply_img_per_s"), INPUT_DALI_A100_IMG_PER_S, 1e-9);
	json_decref(none);
	json_decref(slow);
	json_decref(a100);
}

static void expect_error(const char *model, const char *topo, const char *ip, const char *msg)
{
	char *dir = tmp_dir(), text[2048], want[2048];
	snprintf(text, sizeof(text),
		 "{\"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\",\n"
		 " \"model\": \"%s\", \"topology\": \"%s\", \"nodes\": 1,\n"
		 " \"training\": {\"global_batch\": 256, %s \"input_pipeline\": {%s}}}\n",
		 src_path(model), src_path(topo),
		 strstr(model, "resnet") ? "" : "\"seq_len\": 2048,", ip);
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

static const char *R50 = "models/zoo/resnet50.json", *A100 = "topologies/dgx-a100.json";

Test(input_pipeline, rejects_an_unknown_loader)
{
	expect_error(R50, A100, "\"loader\": \"pil-simd\"",
		     "/training/input_pipeline/loader: error: expected one of {none, pytorch-pil, "
		     "dali-gpu}, got 'pil-simd'");
}

Test(input_pipeline, rejects_fewer_than_one_core)
{
	expect_error(R50, A100, "\"loader\": \"pytorch-pil\", \"cpu_cores\": 0",
		     "/training/input_pipeline/cpu_cores: error: must be >= 1, got 0");
}

Test(input_pipeline, rejects_cpu_keys_for_dali)
{
	expect_error(R50, A100, "\"loader\": \"dali-gpu\", \"workers_per_gpu\": 4",
		     "/training/input_pipeline/workers_per_gpu: error: applies to loader 'pytorch-pil' "
		     "only, the loader is 'dali-gpu'");
}

Test(input_pipeline, needs_the_cores_when_the_topology_lacks_them)
{
	expect_error(R50, "topologies/dgx1-v100.json", "\"loader\": \"pytorch-pil\"",
		     "/training/input_pipeline/cpu_cores: error: missing required key 'cpu_cores': "
		     "topology 'DGX-1 V100' does not give node.cpu_cores");
}

Test(input_pipeline, needs_a_dali_rate_off_the_a100)
{
	expect_error(R50, "topologies/dgx-h100.json", "\"loader\": \"dali-gpu\"",
		     "/training/input_pipeline/gpu_img_per_s: error: missing required key "
		     "'gpu_img_per_s': DALI's measured rate is an A100's, the GPU is 'H100-SXM5-80GB'");
}

Test(input_pipeline, needs_a_cnn)
{
	expect_error("models/zoo/llama3-8b.json", A100, "\"loader\": \"pytorch-pil\"",
		     "/training/input_pipeline/loader: error: a data loader needs a cnn model, "
		     "model 'Llama-3 8B' is not one");
}

/* The shipped scenario's summary says, in one line, who binds: 128
 * cores x 145 images/s against the 8 GPUs' 2048 images a step. */
Test(input_pipeline, the_summary_names_the_binding_loader)
{
	char *dir = tmp_dir(), args[2048], *out = NULL, *err = NULL;
	snprintf(args, sizeof(args), "run %s --out %s", src_path("scenarios/resnet50-a100-8gpu-pil.json"), dir);
	cr_assert_eq(run_ddlsim(args, &out, &err), 0, "%s", err);
	cr_expect(strstr(out, "\ninput-bound: host decodes 18.6 k img/s, a node's GPUs want 21.8 k "
			 "(pytorch-pil, 15 % of the step waiting)\n"), "%s", out);
	free(out);
	free(err);
	free(dir);
}
