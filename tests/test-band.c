/* test-band: the error band of a prediction (sim/band.c) against the
 * shipped table (validation/bands.json, compiled in) and the nearest-family
 * rule of sim/band.h.
 *
 * Each plan's family is the rule's answer worked by hand:
 *   megatron/1.7b on DGX A100 (Megatron stack, bf16/fp16)  -> korthikanti-a100
 *   llama3-70b-h100-base (Megatron stack, TP 8 x PP 4)    -> megatron-core-h100
 *   NeMo Llama 2 70B fp8 on H100                           -> nemo-h100-fp8
 *   torchtitan Llama 2 13B, FSDP on A100                   -> torchtitan-a100
 *   torchtitan-04133643 stack, ZeRO-2, on A100             -> torchtitan-a100
 *   MPT 7B, llm-foundry-triton stack on H100               -> llm-foundry-mpt
 *   BLOOM 176B, megatron-deepspeed stack on A100           -> bloom-a100
 *   BERT-Large (encoder) on DGX A100                       -> dle-bert-a100
 *   BERT-Large (encoder) on DGX H100 (no encoder family)   -> overall
 *   ResNet-50 on a V100 (no family measured a V100)        -> overall
 * and its numbers are the file's row (runs, mean and max |error|, bias,
 * optimistic runs). The GPUs more: ceil(gpus x bias) when the bias is
 * positive, e.g. 32 GPUs at +4.6 %: ceil(1.472) = 2; 0 when negative. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "band.h"
#include "diag.h"
#include "scenario.h"
#include "testutil.h"

/* The row of family in the shipped file. */
static json_t *file_row(const char *family)
{
	json_error_t e;
	json_t *root = json_load_file(src_path("validation/bands.json"), 0, &e);
	cr_assert(root, "validation/bands.json:%d: %s", e.line, e.text);
	size_t i;
	json_t *r, *hit = NULL;
	json_array_foreach(json_object_get(root, "families"), i, r)
		if (!strcmp(json_string_value(json_object_get(r, "family")), family))
			hit = json_incref(r);
	json_decref(root);
	cr_assert(hit, "no row '%s' in validation/bands.json", family);
	return hit;
}

static double rownum(json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
}

static void expect_band_at(const char *path, const char *family)
{
	struct diag d;
	diag_init(&d, stderr);
	struct scenario *sc = scenario_load(path, &d);
	cr_assert(sc, "%s", path);
	const struct band *b = band_lookup(sc->in, &sc->plan);
	cr_expect_str_eq(b->family, family, "%s", path);
	json_t *row = file_row(family);
	cr_expect_eq(b->runs, (int)rownum(row, "runs"), "%s", family);
	cr_expect_float_eq(100 * b->mean_abs, rownum(row, "mean_abs_error_pct"), 1e-9, "%s", family);
	cr_expect_float_eq(100 * b->max_abs, rownum(row, "max_abs_error_pct"), 1e-9, "%s", family);
	cr_expect_float_eq(100 * b->bias, rownum(row, "bias_pct"), 1e-9, "%s", family);
	cr_expect_eq(b->optimistic_runs, (int)rownum(row, "optimistic_runs"), "%s", family);
	json_decref(row);
	scenario_destroy(sc);
	diag_finish(&d);
}

static void expect_band(const char *scenario, const char *family)
{
	expect_band_at(src_path(scenario), family);
}

Test(band, megatron_on_a100_is_korthikanti)
{
	expect_band("scenarios/megatron/1.7b.json", "korthikanti-a100");
}

Test(band, megatron_on_h100_is_megatron_core)
{
	expect_band("scenarios/llama3-70b-h100-base.json", "megatron-core-h100");
}

Test(band, fp8_on_h100_is_nemo)
{
	expect_band("validation/nemo-h100-fp8/nemo-llama2-70b-64gpu.json", "nemo-h100-fp8");
}

Test(band, fsdp_on_a100_is_torchtitan)
{
	expect_band("validation/torchtitan-a100/torchtitan-llama2-13b-64gpu.json", "torchtitan-a100");
}

/* Every torchtitan stack (torchtitan-04133643 too) is FSDP by its stack,
 * not only at ZeRO-3 without TP and PP: with TP 2, and at ZeRO-2. */
Test(band, a_torchtitan_stack_is_fsdp_with_tp_or_zero2)
{
	const char *plans[2] = { "\"tp\": 2, \"dp\": 8, \"zero\": 3", "\"zero\": 2" };
	for (int i = 0; i < 2; i++) {
		char *dir = tmp_dir(), text[1024];
		snprintf(text, sizeof(text),
			 "{ \"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\","
			 " \"model\": \"%s\", \"topology\": \"%s\", \"nodes\": 2,"
			 " \"parallel\": { %s }, \"compute\": { \"stack\": \"torchtitan-04133643\" },"
			 " \"training\": { \"seq_len\": 2048, \"global_batch\": 32 } }\n",
			 src_path("models/zoo/llama2-7b.json"), src_path("topologies/dgx-a100.json"),
			 plans[i]);
		char *p = write_file(dir, "s.json", text);
		expect_band_at(p, "torchtitan-a100");
		free(p);
		free(dir);
	}
}

Test(band, llm_foundry_stack_is_llm_foundry)
{
	expect_band("validation/llm-foundry-mpt/mpt-7b-h100-8gpu.json", "llm-foundry-mpt");
}

Test(band, megatron_deepspeed_on_a100_is_bloom)
{
	expect_band("validation/bloom-a100/bloom-176b-384gpu.json", "bloom-a100");
}

Test(band, an_encoder_on_a100_is_dle_bert)
{
	expect_band("validation/dle-bert-a100/dle-bert-large-p1-8gpu.json", "dle-bert-a100");
	expect_band("scenarios/bert-large-mlperf.json", "overall");
}

Test(band, a_gpu_no_family_measured_falls_back_to_overall)
{
	expect_band("scenarios/resnet50-v100-1gpu.json", "overall");
}

Test(band, the_shipped_table_is_the_file_with_overall_last)
{
	json_error_t e;
	json_t *root = json_load_file(src_path("validation/bands.json"), 0, &e);
	cr_assert(root);
	json_t *fams = json_object_get(root, "families");
	cr_assert_eq((int)json_array_size(fams), band_count);
	for (int i = 0; i < band_count; i++) {
		json_t *r = json_array_get(fams, (size_t)i);
		cr_expect_str_eq(band_table[i].family, json_string_value(json_object_get(r, "family")));
		cr_expect_float_eq(100 * band_table[i].mean_abs, rownum(r, "mean_abs_error_pct"), 1e-9);
	}
	cr_expect_str_eq(band_table[band_count - 1].family, "overall");
	json_decref(root);
}

Test(band, more_gpus_is_the_optimism_rounded_up)
{
	const struct band opt = { "x", 8, 0.043, 0.078, 0.046, 8 }, pes = { "y", 1, 0.184, 0.184, -0.184, 0 };
	cr_expect_eq(band_more_gpus(&opt, 32), 2, "32 x 0.046 = 1.472");
	cr_expect_eq(band_more_gpus(&opt, 2304), 106, "2304 x 0.046 = 105.98");
	cr_expect_eq(band_more_gpus(&opt, 1000), 46, "exactly 46: not 47");
	cr_expect_eq(band_more_gpus(&pes, 4096), 0, "a pessimistic family implies none");
	char buf[200];
	cr_expect_str_eq(band_text(&opt, buf, sizeof(buf)), "±4.3 % (x, 8 runs, max 7.8 %, optimistic 4.6 %)");
	cr_expect_str_eq(band_text(&pes, buf, sizeof(buf)), "±18.4 % (y, 1 run, max 18.4 %, pessimistic 18.4 %)");
}
