/* test-import: `ddlsim import` (import/import.h, cli/cmd_import.c).
 *
 * Hugging Face config.json files as published (tests/data/import/) become
 * model files whose every mapped key is checked and whose parameter count
 * equals the shipped hand-written model's exactly (Llama 3.1 8B against
 * models/zoo/llama3-8b.json, Qwen3 32B, Mixtral 8x7B, DeepSeek-V3).
 * Megatron-LM launches become a scenario and its model: the GPT-3 175B
 * example script's every flag checked (defaults, ignored and unknown rows
 * included), and the launch of scenarios/llama3-70b-h100-cp.json run by
 * `ddlsim run` to the shipped scenario's iteration time (1e-9) and
 * parameter count. Contradictions the framework refuses are refused with
 * the flag named; nothing is written then, nor over an existing file
 * without --force. torchtitan's job files: test-import-tt.c. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "model.h"
#include "testutil.h"

/* `ddlsim import ARGS`, its exit code; out and err kept for the test. */
static int import(const char *args, char **out, char **err)
{
	char cmd[4096];
	snprintf(cmd, sizeof(cmd), "import %s", args);
	return run_ddlsim(cmd, out, err);
}

static double params_of(const char *path, bool active)
{
	struct diag d;
	diag_init(&d, stderr);
	struct model *m = model_load(path, &d);
	cr_assert(m, "%s does not load", path);
	double p = active ? model_active_params(m) : model_params(m);
	model_destroy(m);
	diag_finish(&d);
	return p;
}

/* Import config (tests/data/import/) into dir/name; returns the path. */
static char *import_hf_file(const char *dir, const char *config, const char *name, char **out)
{
	char *path = NULL, args[2048];
	if (asprintf(&path, "%s/%s", dir, name) < 0)
		abort();
	char rel[256];
	snprintf(rel, sizeof(rel), "tests/data/import/%s", config);
	snprintf(args, sizeof(args), "hf %s -o %s", src_path(rel), path);
	char *err = NULL;
	cr_assert_eq(import(args, out, &err), 0, "%s", err);
	free(err);
	return path;
}

Test(import, hf_llama31_8b_maps_every_key_and_matches_the_zoo_model)
{
	char *dir = tmp_dir(), *out = NULL;
	char *path = import_hf_file(dir, "llama3.1-8b-config.json", "llama.json", &out);
	json_t *m = load_json(path);
	cr_expect_str_eq(jstr_at(m, "schema_version"), "1.4");
	cr_expect_str_eq(jstr_at(m, "architecture"), "decoder_transformer");
	cr_expect_eq(jint_at(m, "layers"), 32);
	cr_expect_eq(jint_at(m, "hidden_size"), 4096);
	cr_expect_eq(jint_at(m, "heads"), 32);
	cr_expect_eq(jint_at(m, "kv_heads"), 8);
	cr_expect_eq(jint_at(m, "ffn_size"), 14336);
	cr_expect_eq(jint_at(m, "vocab_size"), 128256);
	cr_expect_eq(jint_at(m, "max_position"), 131072);
	cr_expect_str_eq(jstr_at(m, "activation"), "swiglu");
	cr_expect_str_eq(jstr_at(m, "norm"), "rmsnorm");
	cr_expect_str_eq(jstr_at(m, "position_embedding"), "rope");
	cr_expect_not(jbool_at(m, "tied_embeddings"));
	cr_expect_not(jbool_at(m, "bias"));
	cr_expect_not(jbool_at(m, "dropout"));
	/* the table: each key once, ignored ones said so */
	cr_expect(strstr(out, "rope_theta               500000.0"), "%s", out);
	cr_expect(strstr(out, "ignored: no effect on time or memory"), "%s", out);
	cr_expect(strstr(out, "15 mapped, 0 defaults, 2 derived, 9 ignored, 0 unknown"), "%s", out);
	cr_expect_eq(params_of(path, false), params_of(src_path("models/zoo/llama3-8b.json"), false));
	cr_expect_eq(params_of(path, false), 8030261248.0);
	json_decref(m);
	free(out);
	free(path);
	free(dir);
}

Test(import, hf_qwen3_32b_has_head_dim_and_qk_norm)
{
	char *dir = tmp_dir(), *out = NULL;
	char *path = import_hf_file(dir, "qwen3-32b-config.json", "qwen.json", &out);
	json_t *m = load_json(path);
	cr_expect_eq(jint_at(m, "head_dim"), 128);
	cr_expect(jbool_at(m, "qk_norm"));
	cr_expect_eq(jint_at(m, "kv_heads"), 8);
	cr_expect_eq(jint_at(m, "max_position"), 40960);
	cr_expect_eq(params_of(path, false), params_of(src_path("models/zoo/qwen3-32b.json"), false));
	json_decref(m);
	free(out);
	free(path);
	free(dir);
}

/* Mistral 7B v0.1's config.json (mistralai/Mistral-7B-v0.1 on Hugging
 * Face, as released): a 4096-token window on every layer; 7,241,732,096
 * parameters. Qwen3's use_sliding_window false leaves it off. */
Test(import, hf_mistral_sliding_window_on_every_layer)
{
	char *dir = tmp_dir(), *out = NULL;
	char *path = import_hf_file(dir, "mistral-7b-v0.1-config.json", "mistral.json", &out);
	json_t *m = load_json(path);
	cr_expect_eq(jint_at(m, "sliding_window"), 4096);
	cr_expect_null(json_object_get(m, "global_every"));
	cr_expect(strstr(out, "every layer (MistralAttention"), "%s", out);
	cr_expect_eq(params_of(path, false), 7241732096.0);
	json_decref(m), free(out), free(path);
	out = NULL;
	path = import_hf_file(dir, "qwen3-32b-config.json", "qwen.json", &out);
	m = load_json(path);
	cr_expect_null(json_object_get(m, "sliding_window"));
	cr_expect(strstr(out, "ignored: false: full causal attention"), "%s", out);
	json_decref(m), free(out), free(path), free(dir);
}

Test(import, hf_mixtral_experts_take_the_intermediate_size)
{
	char *dir = tmp_dir(), *out = NULL;
	char *path = import_hf_file(dir, "mixtral-8x7b-config.json", "mixtral.json", &out);
	json_t *m = load_json(path);
	cr_expect_eq(jint_at(m, "moe/experts"), 8);
	cr_expect_eq(jint_at(m, "moe/top_k"), 2);
	cr_expect_eq(jint_at(m, "moe/expert_ffn_size"), 14336);
	cr_expect_null(json_object_get(m, "ffn_size"));
	cr_expect(strstr(out, "attention_bias                                   bias                 false                "
			      "default: absent: the configuration class's false"), "%s", out);
	const char *zoo = src_path("models/zoo/mixtral-8x7b.json");
	cr_expect_eq(params_of(path, false), params_of(zoo, false));
	cr_expect_eq(params_of(path, true), params_of(zoo, true));
	json_decref(m);
	free(out);
	free(path);
	free(dir);
}

Test(import, hf_deepseek_v3_mla_and_moe_and_its_unknown_keys)
{
	char *dir = tmp_dir(), *out = NULL;
	char *path = import_hf_file(dir, "deepseek-v3-config.json", "dsv3.json", &out);
	json_t *m = load_json(path);
	cr_expect_eq(jint_at(m, "mla/q_lora_rank"), 1536);
	cr_expect_eq(jint_at(m, "mla/kv_lora_rank"), 512);
	cr_expect_eq(jint_at(m, "mla/qk_nope_head_dim"), 128);
	cr_expect_eq(jint_at(m, "mla/qk_rope_head_dim"), 64);
	cr_expect_eq(jint_at(m, "mla/v_head_dim"), 128);
	cr_expect_eq(jint_at(m, "moe/experts"), 256);
	cr_expect_eq(jint_at(m, "moe/top_k"), 8);
	cr_expect_eq(jint_at(m, "moe/expert_ffn_size"), 2048);
	cr_expect_eq(jint_at(m, "moe/shared_experts"), 1);
	cr_expect_eq(jint_at(m, "moe/first_dense_layers"), 3);
	cr_expect_eq(jint_at(m, "moe/groups"), 8);
	cr_expect_eq(jint_at(m, "moe/groups_per_token"), 4);
	cr_expect_eq(jint_at(m, "ffn_size"), 18432);
	cr_expect_null(json_object_get(m, "kv_heads"));
	cr_expect_eq(jint_at(m, "mtp_depth"), 1);   /* num_nextn_predict_layers */
	cr_expect(strstr(out, "quantization_config"), "%s", out);
	cr_expect(strstr(out, "1 unknown"), "%s", out);
	const char *zoo = src_path("models/zoo/deepseek-v3.json");
	cr_expect_eq(params_of(path, false), params_of(zoo, false));
	cr_expect_eq(params_of(path, true), params_of(zoo, true));
	json_decref(m);
	free(out);
	free(path);
	free(dir);
}

Test(import, hf_gpt2_learned_positions_biases_tied_and_dropout)
{
	char *dir = tmp_dir(), *out = NULL;
	char *path = import_hf_file(dir, "gpt2-config.json", "gpt2.json", &out);
	json_t *m = load_json(path);
	cr_expect_eq(jint_at(m, "layers"), 12);
	cr_expect_eq(jint_at(m, "hidden_size"), 768);
	cr_expect_eq(jint_at(m, "heads"), 12);
	cr_expect_eq(jint_at(m, "ffn_size"), 3072);                  /* n_inner absent: 4h */
	cr_expect_eq(jint_at(m, "max_position"), 1024);
	cr_expect_eq(jint_at(m, "vocab_size"), 50257);
	cr_expect_str_eq(jstr_at(m, "activation"), "gelu");
	cr_expect_str_eq(jstr_at(m, "norm"), "layernorm");
	cr_expect_str_eq(jstr_at(m, "position_embedding"), "learned");
	cr_expect(jbool_at(m, "bias"));
	cr_expect(jbool_at(m, "tied_embeddings"));
	cr_expect(jbool_at(m, "dropout"));
	/* openai-community/gpt2's 124,439,808 parameters (GPT2LMHeadModel, tied) */
	cr_expect_eq(params_of(path, false), 124439808.0);
	json_decref(m);
	free(out);
	free(path);
	free(dir);
}

Test(import, hf_refuses_biases_on_only_some_layers)
{
	char *dir = tmp_dir(), *err = NULL, args[2048];
	char *cfg = write_file(dir, "config.json",
			       "{\"model_type\": \"llama\", \"num_hidden_layers\": 2, \"hidden_size\": 64,\n"
			       " \"num_attention_heads\": 4, \"vocab_size\": 100, \"attention_bias\": true,\n"
			       " \"intermediate_size\": 128,"
			       " \"mlp_bias\": false}\n");
	snprintf(args, sizeof(args), "hf %s -o %s/m.json", cfg, dir);
	cr_expect_eq(import(args, NULL, &err), 3, "%s", err);
	cr_expect(strstr(err, "config.json: /mlp_bias: error: attention_bias true with mlp_bias false: ddlsim's "
			      "bias key is every linear layer's, not expressible"), "%s", err);
	char p[1200];
	snprintf(p, sizeof(p), "%s/m.json", dir);
	cr_expect_not(file_exists(p));
	free(err);
	free(cfg);
	free(dir);
}

Test(import, hf_refuses_a_family_it_does_not_know)
{
	char *dir = tmp_dir(), *err = NULL, args[2048];
	char *cfg = write_file(dir, "config.json", "{\"model_type\": \"t5\", \"d_model\": 512}\n");
	snprintf(args, sizeof(args), "hf %s -o %s/m.json", cfg, dir);
	cr_expect_eq(import(args, NULL, &err), 3, "%s", err);
	cr_expect(strstr(err, "config.json: /model_type: error: expected llama, mistral, qwen2, qwen3, mixtral, "
			      "deepseek_v3 or gpt2 (the decoder-only families ddlsim imports), got 't5'"), "%s", err);
	free(err);
	free(cfg);
	free(dir);
}

Test(import, megatron_gpt3_175b_example_every_flag)
{
	char *dir = tmp_dir(), *out = NULL, *err = NULL, args[2048];
	snprintf(args, sizeof(args), "megatron %s -o %s/g.json --topology %s --map %s/map.csv",
		 src_path("tests/data/import/gpt3-175b.sh"), dir, src_path("topologies/dgx-a100.json"), dir);
	cr_assert_eq(import(args, &out, &err), 0, "%s", err);
	char p[1200];
	snprintf(p, sizeof(p), "%s/g.json", dir);
	json_t *s = load_json(p);
	snprintf(p, sizeof(p), "%s/g.model.json", dir);
	json_t *m = load_json(p);
	cr_expect_str_eq(jstr_at(s, "model"), "g.model.json");
	cr_expect_str_eq(jstr_at(s, "framework"), "megatron-core@0.9");
	cr_expect_eq(jint_at(s, "nodes"), 16);           /* torchrun --nnodes 16 --nproc_per_node 8 */
	cr_expect_eq(jint_at(s, "parallel/tp"), 8);
	cr_expect_eq(jint_at(s, "parallel/pp"), 16);
	cr_expect_eq(jint_at(s, "parallel/dp"), 1);
	cr_expect_not(jbool_at(s, "parallel/sp"));
	cr_expect_eq(jint_at(s, "parallel/zero"), 0);
	cr_expect_str_eq(jstr_at(s, "parallel/recompute"), "none");
	cr_expect_eq(jint_at(s, "training/seq_len"), 2048);
	cr_expect_eq(jint_at(s, "training/global_batch"), 1536);
	cr_expect_eq(jint_at(s, "training/micro_batch"), 1);
	cr_expect_str_eq(jstr_at(s, "training/precision"), "fp16");
	cr_expect_str_eq(jstr_at(s, "training/grad_reduce_dtype"), "fp16");
	cr_expect_not(jbool_at(s, "communication/overlap_grad_reduce"));
	cr_expect_not(jbool_at(s, "communication/overlap_param_gather"));
	cr_expect_eq(jint_at(m, "layers"), 96);
	cr_expect_eq(jint_at(m, "hidden_size"), 12288);
	cr_expect_eq(jint_at(m, "heads"), 96);
	cr_expect_eq(jint_at(m, "ffn_size"), 4 * 12288);             /* default 4h */
	cr_expect_eq(jint_at(m, "vocab_size"), 51200);               /* 50257 padded to 128 x 8 */
	cr_expect_eq(jint_at(m, "max_position"), 2048);
	cr_expect_str_eq(jstr_at(m, "activation"), "gelu");
	cr_expect_str_eq(jstr_at(m, "norm"), "layernorm");
	cr_expect_str_eq(jstr_at(m, "position_embedding"), "learned");
	cr_expect(jbool_at(m, "bias"));
	cr_expect(jbool_at(m, "tied_embeddings"));
	cr_expect(jbool_at(m, "dropout"));                           /* 0.1 by default */
	cr_expect_null(json_object_get(m, "kv_heads"));
	cr_expect(strstr(out, "--exit-signal-handler"), "%s", out);
	cr_expect(strstr(out, "unknown: not a flag ddlsim imports: not applied"), "%s", out);
	const char *ramp = strstr(out, "--rampup-batch-size ");
	cr_expect(ramp && strstr(ramp, "16 16 5859375") && strstr(ramp, "ignored: no effect on time or memory"), "%s",
		  out);
	cr_expect(strstr(out, "11 mapped, 15 defaults, 3 derived, 23 ignored, 1 unknown"), "%s", out);
	snprintf(p, sizeof(p), "%s/map.csv", dir);
	char *csv = test_file_text(p);
	cr_expect(!strncmp(csv, "source,value,ddlsim_key,written,status,note\n", 44), "%s", csv);
	cr_expect(strstr(csv, "--lr,6.0e-5,,,ignored,no effect on time or memory\n"), "%s", csv);
	cr_expect(strstr(csv, "--exit-signal-handler,,,,unknown,not a flag ddlsim imports: not applied\n"), "%s", csv);
	cr_expect(strstr(csv, "--swiglu,,model: /activation,\"\"\"gelu\"\"\",default,absent: GELU (L870)\n"), "%s", csv);
	free(csv);
	json_decref(s);
	json_decref(m);
	free(out);
	free(err);
	free(dir);
}

Test(import, megatron_mixtral_example_moe_flags_and_the_zoo_model)
{
	char *dir = tmp_dir(), *out = NULL, *err = NULL, args[2048];
	snprintf(args, sizeof(args), "megatron %s -o %s/mx.json --topology %s",
		 src_path("tests/data/import/mixtral-8x7b.sh"), dir, src_path("topologies/dgx-h100.json"));
	cr_assert_eq(import(args, &out, &err), 0, "%s", err);
	char p[1200];
	snprintf(p, sizeof(p), "%s/mx.json", dir);
	json_t *s = load_json(p);
	snprintf(p, sizeof(p), "%s/mx.model.json", dir);
	json_t *m = load_json(p);
	cr_expect_eq(jint_at(s, "nodes"), 8);
	cr_expect_eq(jint_at(s, "parallel/tp"), 1);
	cr_expect_eq(jint_at(s, "parallel/pp"), 4);
	cr_expect_eq(jint_at(s, "parallel/dp"), 16);
	cr_expect_eq(jint_at(s, "parallel/ep"), 8);
	cr_expect_not(jbool_at(s, "parallel/sp"));                  /* tp 1: off (L499) */
	cr_expect_eq(jint_at(s, "parallel/zero"), 1);
	cr_expect(jbool_at(s, "communication/overlap_grad_reduce"));
	cr_expect(jbool_at(s, "communication/overlap_param_gather"));
	cr_expect_eq(jint_at(m, "moe/experts"), 8);
	cr_expect_eq(jint_at(m, "moe/top_k"), 2);
	cr_expect_eq(jint_at(m, "moe/expert_ffn_size"), 14336);
	cr_expect_eq(jint_at(m, "kv_heads"), 8);
	cr_expect_eq(jint_at(m, "vocab_size"), 32000);
	cr_expect(strstr(out, "--moe-grouped-gemm"), "%s", out);
	cr_expect(strstr(out, "--no-masked-softmax-fusion"), "%s", out);
	cr_expect(strstr(out, "mapped: ddlsim's expert exchange is all-to-all"), "%s", out);
	cr_expect(strstr(out, "29 mapped, 4 defaults, 3 derived, 25 ignored, 3 unknown"), "%s", out);
	const char *zoo = src_path("models/zoo/mixtral-8x7b.json");
	cr_expect_eq(params_of(p, false), params_of(zoo, false));
	cr_expect_eq(params_of(p, true), params_of(zoo, true));
	json_decref(s);
	json_decref(m);
	free(out);
	free(err);
	free(dir);
}

Test(import, megatron_round_trip_of_the_llama3_70b_cp_scenario)
{
	char *dir = tmp_dir(), *err = NULL, args[2048];
	snprintf(args, sizeof(args), "megatron %s -o %s/l70.json --topology %s",
		 src_path("tests/data/import/llama3-70b-cp.sh"), dir, src_path("topologies/dgx-h100.json"));
	cr_assert_eq(import(args, NULL, &err), 0, "%s", err);
	free(err);
	char p[1200];
	snprintf(p, sizeof(p), "%s/l70.json", dir);
	json_t *s = load_json(p);
	cr_expect_eq(jint_at(s, "nodes"), 32);
	cr_expect_eq(jint_at(s, "parallel/tp"), 8);
	cr_expect(jbool_at(s, "parallel/sp"));
	cr_expect_eq(jint_at(s, "parallel/cp"), 4);
	cr_expect_eq(jint_at(s, "parallel/pp"), 4);
	cr_expect_eq(jint_at(s, "parallel/dp"), 2);
	cr_expect_str_eq(jstr_at(s, "parallel/schedule"), "interleaved");
	cr_expect_eq(jint_at(s, "parallel/interleave"), 5);          /* (80 / 4) / 4 */
	cr_expect_eq(jint_at(s, "parallel/first_stage_layers"), 18);
	cr_expect_eq(jint_at(s, "parallel/last_stage_layers"), 18);
	cr_expect_eq(jint_at(s, "parallel/zero"), 1);
	cr_expect_str_eq(jstr_at(s, "parallel/recompute"), "selective");
	cr_expect_eq(jint_at(s, "training/seq_len"), 32768);
	cr_expect_eq(jint_at(s, "training/global_batch"), 16);
	cr_expect_str_eq(jstr_at(s, "training/precision"), "bf16");
	cr_expect_str_eq(jstr_at(s, "training/grad_reduce_dtype"), "fp32");
	cr_expect(jbool_at(s, "communication/overlap_grad_reduce"));
	cr_expect(jbool_at(s, "communication/overlap_param_gather"));
	json_decref(s);
	snprintf(args, sizeof(args), "run %s/l70.json --out %s/got --quiet", dir, dir);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	free(err);
	snprintf(args, sizeof(args), "run %s --out %s/ref --quiet", src_path("scenarios/llama3-70b-h100-cp.json"), dir);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	free(err);
	snprintf(p, sizeof(p), "%s/got", dir);
	json_t *got = load_report(p);
	snprintf(p, sizeof(p), "%s/ref", dir);
	json_t *ref = load_report(p);
	cr_assert(got && ref);
	double tg = jnum(got, "summary/iteration_time_s"), tr = jnum(ref, "summary/iteration_time_s");
	cr_expect_leq(rel_diff(tg, tr), 1e-9, "imported %.12g s, shipped %.12g s", tg, tr);
	cr_expect_eq(jnum(got, "scenario/model/params"), jnum(ref, "scenario/model/params"));
	cr_expect_eq(jnum(got, "scenario/model/params"), 70553706496.0);
	json_decref(got);
	json_decref(ref);
	free(dir);
}

/* Import launch text (written to dir/launch.sh) on 1 DGX H100; exit code. */
static int import_text(const char *dir, const char *text, const char *more, char **out, char **err)
{
	char *f = write_file(dir, "launch.sh", text), args[2048];
	snprintf(args, sizeof(args), "megatron %s -o %s/s.json --topology %s %s", f, dir,
		 src_path("topologies/dgx-h100.json"), more);
	free(f);
	return import(args, out, err);
}

#define SMALL "--num-layers 4 --hidden-size 256 --num-attention-heads 8 --seq-length 512 " \
	      "--max-position-embeddings 512 --micro-batch-size 1 --vocab-size 1000 --bf16 "

Test(import, megatron_sequence_parallel_at_tp_1_is_off_as_megatron_sets_it)
{
	char *dir = tmp_dir(), *out = NULL, *err = NULL;
	cr_assert_eq(import_text(dir, SMALL "--sequence-parallel\n", "--nodes 1", &out, &err), 0, "%s", err);
	char p[1200];
	snprintf(p, sizeof(p), "%s/s.json", dir);
	json_t *s = load_json(p);
	cr_expect_not(jbool_at(s, "parallel/sp"));
	cr_expect_eq(jint_at(s, "parallel/dp"), 8);
	cr_expect_eq(jint_at(s, "training/global_batch"), 8);        /* micro x dp (L263) */
	cr_expect(strstr(out, "tp 1: Megatron turns sequence parallelism off (L499)"), "%s", out);
	json_decref(s);
	free(out);
	free(err);
	free(dir);
}

Test(import, megatron_refuses_heads_not_a_multiple_of_the_query_groups)
{
	char *dir = tmp_dir(), *err = NULL;
	cr_expect_eq(import_text(dir, SMALL "\\\n  --group-query-attention --num-query-groups 3\n", "--nodes 1", NULL,
				 &err), 3, "%s", err);
	cr_expect(strstr(err, "launch.sh:2:27: error: --num-query-groups: 3 does not divide --num-attention-heads 8"),
		  "%s", err);
	char p[1200];
	snprintf(p, sizeof(p), "%s/s.json", dir);
	cr_expect_not(file_exists(p));
	free(err);
	free(dir);
}

Test(import, megatron_refuses_a_global_batch_not_a_multiple_of_micro_times_dp)
{
	char *dir = tmp_dir(), *err = NULL;
	cr_expect_eq(import_text(dir, SMALL "--global-batch-size 12\n", "--nodes 1", NULL, &err), 3, "%s", err);
	cr_expect(strstr(err, "error: --global-batch-size: 12 is not a multiple of --micro-batch-size 1 x dp 8 "
			      "(num_microbatches_calculator.py L461)"), "%s", err);
	free(err);
	free(dir);
}

Test(import, megatron_refuses_what_megatron_asserts)
{
	char *dir = tmp_dir(), *err = NULL;
	cr_expect_eq(import_text(dir, SMALL "--overlap-param-gather --overlap-grad-reduce\n", "--nodes 1", NULL, &err),
		     3);
	cr_expect(strstr(err, "--overlap-param-gather: needs --use-distributed-optimizer (L291)"), "%s", err);
	free(err);
	cr_expect_eq(import_text(dir, SMALL "--recompute-granularity full\n", "--nodes 1", NULL, &err), 3);
	cr_expect(strstr(err, "--recompute-granularity full: needs --recompute-method (uniform or block) and "
			      "--recompute-num-layers (transformer_config.py L402-411)"), "%s", err);
	free(err);
	cr_expect_eq(import_text(dir, SMALL "--recompute-granularity full --recompute-method uniform "
				 "--recompute-num-layers 2\n", "--nodes 1", NULL, &err), 3);
	cr_expect(strstr(err, "--recompute-num-layers: uniform with 2 layers is not expressible in ddlsim"), "%s", err);
	free(err);
	cr_expect_eq(import_text(dir, "--num-layers 4 --seq-length 512\n", "--nodes 1", NULL, &err), 3);
	cr_expect(strstr(err, "error: --hidden-size: required, not given"), "%s", err);
	free(err);
	cr_expect_eq(import_text(dir, SMALL "--tensor-model-parallel-size $TP\n", "--nodes 1", NULL, &err), 3);
	cr_expect(strstr(err, "launch.sh:1:151: error: --tensor-model-parallel-size: '$TP' is a shell variable"),
		  "%s", err);
	free(err);
	cr_expect_eq(import_text(dir, "torchrun pretrain_gpt.py \\\n    ${GPT_MODEL_ARGS[@]}\n", "--nodes 1", NULL, &err), 3);
	cr_expect(strstr(err, "launch.sh:2:5: error: '${GPT_MODEL_ARGS[@]}' is a shell expansion: give the arguments "
			      "it stands for"), "%s", err);
	free(err);
	free(dir);
}

/* A launch file the shell would refuse, a value past 64 bits and a
 * negative one: each said once, at its place, nothing written. Before:
 * the open quote swallowed the rest of the file into an unknown flag's
 * value (exit 0); 99999999999999999999 read as LONG_MAX and refused as
 * "96 is not a multiple of ... 9223372036854775807"; -8 said twice (>= 0,
 * then >= 1). */
Test(import, megatron_refuses_an_open_quote_and_says_a_bad_integer_once)
{
	char *dir = tmp_dir(), *err = NULL;
	char p[1200];
	snprintf(p, sizeof(p), "%s/s.json", dir);
	cr_expect_eq(import_text(dir, SMALL "\\\n  --data-path \"/data/a b\n", "--nodes 1", NULL, &err), 3);
	cr_expect(strstr(err, "launch.sh:2:15: error: expected a closing double quote, found the end of the file"),
		  "%s", err);
	cr_expect_not(file_exists(p));
	free(err);
	cr_expect_eq(import_text(dir, SMALL "--tensor-model-parallel-size 99999999999999999999\n", "--nodes 1", NULL,
				 &err), 3);
	cr_expect(strstr(err, "error: --tensor-model-parallel-size: expected an integer >= 0 that fits in 64 bits, "
			      "got '99999999999999999999'"), "%s", err);
	cr_expect_not(strstr(err, "9223372036854775807"), "%s", err);
	free(err);
	cr_expect_eq(import_text(dir, SMALL "--tensor-model-parallel-size -8\n", "--nodes 1", NULL, &err), 3);
	const char *once = "error: --tensor-model-parallel-size: expected an integer >= 0, got '-8'";
	cr_expect(strstr(err, once), "%s", err);
	cr_expect_not(strstr(err, ">= 1, got '-8'"), "said twice: %s", err);
	cr_expect_not(file_exists(p));
	free(err);
	free(dir);
}

Test(import, megatron_full_recompute_and_interleaving)
{
	char *dir = tmp_dir(), *out = NULL, *err = NULL;
	cr_assert_eq(import_text(dir, SMALL "--recompute-granularity full --recompute-method uniform "
				 "--recompute-num-layers 1 --pipeline-model-parallel-size 2 "
				 "--num-layers-per-virtual-pipeline-stage 1 --global-batch-size 8\n", "", &out, &err),
		     3, "%s", err);
	/* tp 1 x pp 2 x dp 8 = 16 GPUs: 2 nodes derived from the batch, but the
	 * global batch 8 = micro 1 x dp 8 wants micro-batches per pipeline a
	 * multiple of pp for interleaving: ddlsim's check names the key */
	cr_expect(strstr(err, "interleaving needs micro-batches per pipeline (1) divisible by pp = 2"), "%s", err);
	free(out);
	free(err);
	cr_assert_eq(import_text(dir, SMALL "--recompute-granularity full --recompute-method uniform "
				 "--recompute-num-layers 1 --pipeline-model-parallel-size 2 "
				 "--num-layers-per-virtual-pipeline-stage 1 --global-batch-size 32\n", "--nodes 2 --force",
				 &out, &err), 0, "%s", err);
	char p[1200];
	snprintf(p, sizeof(p), "%s/s.json", dir);
	json_t *s = load_json(p);
	cr_expect_str_eq(jstr_at(s, "parallel/recompute"), "full");
	cr_expect_str_eq(jstr_at(s, "parallel/schedule"), "interleaved");
	cr_expect_eq(jint_at(s, "parallel/interleave"), 2);
	cr_expect_eq(jint_at(s, "parallel/dp"), 8);
	cr_expect_eq(jint_at(s, "nodes"), 2);
	json_decref(s);
	free(out);
	free(err);
	free(dir);
}

Test(import, megatron_fp8_tp_overlap_head_dim_and_qk_norm)
{
	char *dir = tmp_dir(), *out = NULL, *err = NULL;
	cr_assert_eq(import_text(dir, SMALL "--fp8-format hybrid --fp8-param-gather --use-distributed-optimizer "
				 "--tensor-model-parallel-size 2 --sequence-parallel --tp-comm-overlap --kv-channels 64 "
				 "--qk-layernorm --global-batch-size 4\n", "", &out, &err), 0, "%s", err);
	char p[1200];
	snprintf(p, sizeof(p), "%s/s.json", dir);
	json_t *s = load_json(p);
	snprintf(p, sizeof(p), "%s/s.model.json", dir);
	json_t *m = load_json(p);
	cr_expect_str_eq(jstr_at(s, "training/precision"), "fp8");
	cr_expect(jbool_at(s, "training/fp8_params"));
	cr_expect(jbool_at(s, "communication/tp_comm_overlap"));
	cr_expect_eq(jint_at(s, "nodes"), 1);                        /* tp 2 x dp 4 = 8 GPUs */
	cr_expect_eq(jint_at(m, "head_dim"), 64);
	cr_expect(jbool_at(m, "qk_norm"));
	json_decref(s);
	json_decref(m);
	free(out);
	free(err);
	cr_expect_eq(import_text(dir, SMALL "--fp16\n", "--nodes 1 --force", NULL, &err), 3);
	cr_expect(strstr(err, "error: --fp16: not with --bf16 (transformer_config.py L319)"), "%s", err);
	free(err);
	cr_expect_eq(import_text(dir, SMALL "--position-embedding-type none\n", "--nodes 1 --force", NULL, &err), 3);
	cr_expect(strstr(err, "error: --position-embedding-type: expected learned_absolute or rope"), "%s", err);
	free(err);
	free(dir);
}

Test(import, megatron_arguments_after_double_dash)
{
	char *dir = tmp_dir(), *err = NULL, args[2048];
	snprintf(args, sizeof(args), "megatron -o %s/s.json --topology %s --nodes 1 -- " SMALL
		 "--tensor-model-parallel-size 2 --sequence-parallel --swiglu --num-experts 4 --expert-model-parallel-size 2",
		 dir, src_path("topologies/dgx-h100.json"));
	char *out = NULL;
	cr_assert_eq(import(args, &out, &err), 0, "%s", err);
	cr_expect(strstr(out, "unknown: absent: allgather (L1882), not modelled: priced as ddlsim's all-to-all "
			      "exchange"), "%s", out);
	free(out);
	char p[1200];
	snprintf(p, sizeof(p), "%s/s.json", dir);
	json_t *s = load_json(p);
	snprintf(p, sizeof(p), "%s/s.model.json", dir);
	json_t *m = load_json(p);
	cr_expect(jbool_at(s, "parallel/sp"));
	cr_expect_eq(jint_at(s, "parallel/tp"), 2);
	cr_expect_eq(jint_at(s, "parallel/ep"), 2);
	cr_expect_eq(jint_at(s, "parallel/dp"), 4);
	cr_expect_eq(jint_at(m, "moe/experts"), 4);
	cr_expect_eq(jint_at(m, "moe/top_k"), 2);                    /* default (L1870) */
	cr_expect_eq(jint_at(m, "ffn_size"), 640);                   /* int(4 x 256 x 2/3 / 64) x 64 */
	cr_expect_eq(jint_at(m, "moe/expert_ffn_size"), 640);
	cr_expect_eq(jint_at(m, "vocab_size"), 1024);                /* 1000 padded to 128 x 2 */
	json_decref(s);
	json_decref(m);
	free(err);
	free(dir);
}

Test(import, refuses_to_replace_an_output_without_force)
{
	char *dir = tmp_dir(), *err = NULL, args[2048];
	char *old = write_file(dir, "m.json", "old\n");
	snprintf(args, sizeof(args), "hf %s -o %s", src_path("tests/data/import/llama3.1-8b-config.json"), old);
	cr_expect_eq(import(args, NULL, &err), 3, "%s", err);
	cr_expect(strstr(err, "m.json' exists; refusing to replace it (give --force)"), "%s", err);
	char *text = test_file_text(old);
	cr_expect_str_eq(text, "old\n");
	free(text);
	free(err);
	strcat(args, " --force");
	cr_expect_eq(import(args, NULL, &err), 0, "%s", err);
	text = test_file_text(old);
	cr_expect(strstr(text, "\"layers\": 32"), "%s", text);
	free(text);
	free(err);
	free(old);
	free(dir);
}
