/* test-framework: framework presets fill the knobs a scenario leaves out,
 * with the values their sources state, and explicit keys win. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "framework.h"
#include "testutil.h"

/* Llama 2 7B on 2 DGX A100 (16 GPUs), tp 2, dp 8, bf16, with `extra`
 * top-level keys; returns the report. */
static json_t *run_with(const char *framework, const char *parallel, const char *comm,
			const char *training)
{
	char *d = tmp_dir(), text[4096], args[2048], *err = NULL, out[1100];
	snprintf(text, sizeof(text),
		 "{\"schema\":\"ddlsim.scenario\",\"schema_version\":\"1.0\",\"model\":\"%s\","
		 "\"topology\":\"%s\",\"nodes\":2,\"framework\":\"%s\",\"parallel\":{\"tp\":2%s},"
		 "\"training\":{\"seq_len\":2048,\"global_batch\":16,\"micro_batch\":1%s},"
		 "\"communication\":{%s}}",
		 src_path("models/zoo/llama2-7b.json"), src_path("topologies/dgx-a100.json"), framework,
		 parallel, training, comm);
	char *p = write_file(d, "s.json", text);
	snprintf(args, sizeof(args), "run %s --out %s/out --quiet", p, d);
	int rc = run_ddlsim(args, NULL, &err);
	cr_assert_eq(rc, 0, "exit %d: %s", rc, err);
	snprintf(out, sizeof(out), "%s/out", d);
	json_t *r = load_report(out);
	cr_assert_not_null(r);
	return r;
}

static const char *jstr(json_t *r, const char *a, const char *b, const char *c)
{
	json_t *o = json_object_get(json_object_get(json_object_get(r, a), b), c);
	cr_assert_not_null(o, "%s/%s/%s missing", a, b, c);
	return json_string_value(o);
}

static bool jbool(json_t *r, const char *a, const char *b, const char *c, const char *e)
{
	json_t *o = json_object_get(json_object_get(json_object_get(json_object_get(r, a), b), c), e);
	cr_assert(json_is_boolean(o), "%s/%s/%s/%s not a boolean", a, b, c, e);
	return json_is_true(o);
}

Test(framework, bare_name_takes_the_newest_version)
{
	bool known;
	const struct framework *f = framework_find("megatron-core", &known);
	cr_assert_not_null(f);
	cr_assert_str_eq(f->version, "0.9");
	cr_assert_eq(framework_find("megatron-core@0.9", &known), f);
	cr_assert_null(framework_find("megatron-core@0.1", &known));
	cr_assert(known);
	cr_assert_null(framework_find("jax", &known));
	cr_assert(!known);
	for (f = framework_table; f->name; f++)
		cr_assert(f->source && strlen(f->source) > 40, "%s cites no source", f->name);
}

/* Megatron-Core: bf16 reduces in fp32 (arguments.py), buckets of
 * max(40e6, 1e6 dp) parameters (DDP config), no overlaps, no distributed
 * optimizer; fp16 keeps fp16 gradients. */
Test(framework, megatron_core_defaults)
{
	bool known;
	const struct framework *f = framework_find("megatron-core", &known);
	cr_assert_eq(framework_grad_dtype(f, DTYPE_BF16), DTYPE_FP32);
	cr_assert_eq(framework_grad_dtype(f, DTYPE_FP16), DTYPE_FP16);
	cr_assert_float_eq(framework_bucket_bytes(f, 8, 4), 40e6 * 4, 1);
	cr_assert_float_eq(framework_bucket_bytes(f, 128, 4), 128e6 * 4, 1);

	json_t *r = run_with("megatron-core@0.9", "", "", "");
	cr_assert_str_eq(jstr(r, "scenario", "framework", "label"), "megatron-core@0.9");
	json_t *res = json_object_get(json_object_get(json_object_get(r, "scenario"), "framework"), "resolved");
	cr_assert_str_eq(json_string_value(json_object_get(res, "grad_reduce_dtype")), "fp32");
	cr_assert_float_eq(json_real_value(json_object_get(res, "bucket_MB")), 160, 1e-9);
	cr_assert(json_is_false(json_object_get(res, "overlap_grad_reduce")));
	cr_assert(json_is_false(json_object_get(res, "overlap_param_gather")));
	cr_assert_eq(json_integer_value(json_object_get(res, "zero")), 0);
	cr_assert_str_eq(json_string_value(json_object_get(res, "attention")), "flash");
	/* the plan itself carries the values */
	cr_assert_str_eq(jstr(r, "scenario", "training", "grad_reduce_dtype"), "fp32");
	cr_assert_float_eq(jnum(r, "scenario/communication/bucket_MB"), 160, 1e-9);
	cr_assert(!jbool(r, "scenario", "framework", "given", "bucket_MB"));
	json_decref(r);
}

/* NeMo: fp32 reduction for bf16 (bf16_mixed), fp16 for fp16 (fp16_mixed
 * sets grad_reduce_in_fp32=False), both overlaps, the distributed optimizer
 * (ZeRO-1). */
Test(framework, nemo_turns_on_overlaps_and_the_distributed_optimizer)
{
	bool known;
	const struct framework *f = framework_find("nemo", &known);
	cr_assert_eq(framework_grad_dtype(f, DTYPE_BF16), DTYPE_FP32);
	cr_assert_eq(framework_grad_dtype(f, DTYPE_FP16), DTYPE_FP16);
	json_t *r = run_with("nemo", "", "", "");
	json_t *res = json_object_get(json_object_get(json_object_get(r, "scenario"), "framework"), "resolved");
	cr_assert_str_eq(json_string_value(json_object_get(res, "grad_reduce_dtype")), "fp32");
	cr_assert(json_is_true(json_object_get(res, "overlap_grad_reduce")));
	cr_assert(json_is_true(json_object_get(res, "overlap_param_gather")));
	cr_assert_eq(jnum(r, "scenario/parallel/zero"), 1);
	/* the parameter all-gather runs on its own stream, overlapping forward */
	cr_assert_gt(jnum(r, "communication/bytes_per_gpu/param"), 0);
	json_decref(r);
}

/* DeepSpeed: reduce_bucket_size 5e8 elements in the model's dtype. */
Test(framework, deepspeed_buckets_are_elements)
{
	json_t *r = run_with("deepspeed", "", "", "");
	cr_assert_str_eq(jstr(r, "scenario", "training", "grad_reduce_dtype"), "bf16");
	cr_assert_float_eq(jnum(r, "scenario/communication/bucket_MB"), 1000, 1e-9);
	cr_assert_eq(jnum(r, "scenario/parallel/zero"), 0);
	/* its stack: the HF model's kernels and the engine's (stage 0:
	 * BF16_Optimizer's fp32 accumulation), in the kernel table */
	cr_assert_str_eq(jstr(r, "scenario", "kernels", "stack"), "deepspeed");
	cr_assert_str_eq(jstr(r, "scenario", "kernels", "gemm_library"), "current");
	json_t *ops = json_object_get(json_object_get(r, "cost_model"), "ops_per_microbatch");
	bool accum = false, main_grad = false;
	for (size_t i = 0; i < json_array_size(ops); i++) {
		const char *n = json_string_value(json_object_get(json_array_get(ops, i), "op"));
		accum |= n && !strcmp(n, "attn.grad_accum");
		main_grad |= n && strstr(n, ".main_grad") != NULL;
	}
	cr_expect(accum, "no attn.grad_accum in the kernel table");
	cr_expect(!main_grad, "DeepSpeed keeps no fp32 main gradient at the wgrad");
	json_decref(r);
}

/* FSDP2 and TorchTitan shard everything (ZeRO-3), one unit per layer;
 * TorchTitan reduces in fp32, FSDP2 in the compute dtype. */
Test(framework, fsdp_presets_shard_everything)
{
	json_t *a = run_with("fsdp2", "", "", "");
	cr_assert_eq(jnum(a, "scenario/parallel/zero"), 3);
	cr_assert_str_eq(jstr(a, "scenario", "training", "grad_reduce_dtype"), "bf16");
	cr_assert_float_eq(jnum(a, "scenario/communication/bucket_MB"), 0, 1e-12);
	json_t *b = run_with("torchtitan", "", "", "");
	cr_assert_eq(jnum(b, "scenario/parallel/zero"), 3);
	cr_assert_str_eq(jstr(b, "scenario", "training", "grad_reduce_dtype"), "fp32");
	json_decref(a);
	json_decref(b);
}

/* Explicit keys win over the preset, and the report says which were given. */
Test(framework, explicit_keys_override_the_preset)
{
	json_t *r = run_with("nemo", ", \"zero\": 0", "\"bucket_MB\": 50, \"overlap_param_gather\": false",
			     ", \"grad_reduce_dtype\": \"bf16\"");
	cr_assert_str_eq(jstr(r, "scenario", "training", "grad_reduce_dtype"), "bf16");
	cr_assert_float_eq(jnum(r, "scenario/communication/bucket_MB"), 50, 1e-9);
	cr_assert_eq(jnum(r, "scenario/parallel/zero"), 0);
	cr_assert(jbool(r, "scenario", "framework", "given", "bucket_MB"));
	cr_assert(jbool(r, "scenario", "framework", "given", "zero"));
	cr_assert(jbool(r, "scenario", "framework", "given", "grad_reduce_dtype"));
	cr_assert(jbool(r, "scenario", "framework", "given", "overlap_param_gather"));
	cr_assert(!jbool(r, "scenario", "framework", "given", "overlap_grad_reduce"));
	/* not given: still the preset's */
	json_t *res = json_object_get(json_object_get(json_object_get(r, "scenario"), "framework"), "resolved");
	cr_assert(json_is_true(json_object_get(res, "overlap_grad_reduce")));
	cr_assert(json_is_false(json_object_get(res, "overlap_param_gather")));
	json_decref(r);
}
