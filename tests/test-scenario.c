/* test-scenario: bad input through the CLI: each gives its exact message,
 * exit code 3, and no report. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* A valid scenario with one substitution: text with "@KEY@" placeholders
 * replaced by the caller's fragments. */
static const char *base =
	"{\n"
	"  \"schema\": \"ddlsim.scenario\",\n"
	"  \"schema_version\": \"1.0\",\n"
	"  \"model\": \"@MODEL@\",\n"
	"  \"topology\": \"@TOPO@\",\n"
	"  \"nodes\": 2,\n"
	"  \"parallel\": { @PAR@ },\n"
	"  \"training\": { \"seq_len\": 2048, \"global_batch\": @GB@, \"micro_batch\": 1 }@EXTRA@\n"
	"}\n";

static char *scenario(const char *par, const char *gb, const char *extra, const char *topo)
{
	char *a = str_subst(base, "@MODEL@", src_path("models/zoo/llama2-7b.json"));
	char *b = str_subst(a, "@TOPO@", topo ? topo : src_path("topologies/dgx-a100.json"));
	char *c = str_subst(b, "@PAR@", par);
	char *d = str_subst(c, "@GB@", gb);
	char *e = str_subst(d, "@EXTRA@", extra);
	free(a), free(b), free(c), free(d);
	return e;
}

Test(scenario, malformed_json_gives_line_and_column)
{
	expect_run_error("{\n  \"schema\": \"ddlsim.scenario\",\n  \"nodes\": 2,,\n}\n",
		     "%s:3:14: error: malformed JSON: string or '}' expected near ','\n");
}

Test(scenario, missing_key_is_named)
{
	char *s = scenario("\"dp\": 16", "512", "", NULL);
	char *t = str_subst(s, "\"nodes\": 2,\n", "");
	expect_run_error(t, "%s: /nodes: error: missing required key 'nodes'\n");
}

Test(scenario, wrong_type_says_expected_and_found)
{
	char *s = scenario("\"dp\": \"sixteen\"", "512", "", NULL);
	expect_run_error(s, "%s: /parallel/dp: error: expected an integer, got string\n");
}

Test(scenario, unknown_key_is_an_error)
{
	char *s = scenario("\"dp\": 16, \"pipeline\": 2", "512", "", NULL);
	expect_run_error(s, "%s: /parallel/pipeline: error: unknown key 'pipeline'\n");
}

Test(scenario, missing_referenced_file)
{
	char *s = scenario("\"dp\": 16", "512", "", "/nonexistent/topo.json");
	expect_run_error(s, "%s: /topology: error: cannot open '/nonexistent/topo.json': No such file or directory\n");
}

Test(scenario, batch_not_divisible_by_dp_times_microbatch)
{
	char *s = scenario("\"dp\": 16", "100", "", NULL);
	expect_run_error(s, "%s: /training/global_batch: error: must be divisible by dp x micro_batch = 16 x 1 = 16, got 100\n");
}

Test(scenario, negative_bandwidth_in_topology)
{
	char *d = tmp_dir();
	FILE *f = fopen(src_path("topologies/dgx-a100.json"), "r");
	char buf[8192];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	char *bad0 = str_subst(buf, "\"bw_GBps\": 300", "\"bw_GBps\": -300"), gpu[1100];
	/* the copy lives elsewhere: its GPU preset by absolute path */
	snprintf(gpu, sizeof(gpu), "\"%s\"", src_path("gpus/a100-sxm4-80gb.json"));
	char *bad = str_subst(bad0, "\"../gpus/a100-sxm4-80gb.json\"", gpu);
	free(bad0);
	char *tp = write_file(d, "topo.json", bad);
	char *s = scenario("\"dp\": 16", "512", "", tp);
	char want[2048];
	snprintf(want, sizeof(want), "%s: /node/intra/bw_GBps: error: must be > 0, got -300\n", tp);
	/* the message names the topology file, not the scenario */
	char *p = write_file(d, "s.json", s);
	char args[2048], *err = NULL;
	snprintf(args, sizeof(args), "run %s --out %s/out --quiet", p, d);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 3);
	cr_assert_str_eq(err, want);
}

Test(scenario, tp_must_divide_heads)
{
	char *s = scenario("\"tp\": 3, \"dp\": 5, \"pp\": 1", "512", "", NULL);
	/* 16 GPUs: 3 does not divide them either, reported first */
	expect_run_error(s, "%s: /parallel: error: tp x pp = 3 x 1 = 3 must divide the 16 GPUs (2 nodes x 8 GPUs)\n");
	char *u = scenario("\"tp\": 16", "512", "", NULL);
	/* 32 heads: 16 divides; use the 24-head Megatron 1.7B model */
	char *v = str_subst(u, src_path("models/zoo/llama2-7b.json"), src_path("models/zoo/megatron/gpt-1.7b.json"));
	expect_run_error(v, "%s: /parallel/tp: error: must divide the model's 24 attention heads, got 16\n");
}

Test(scenario, pp_larger_than_layers)
{
	char *s = scenario("\"pp\": 32", "512", "", NULL);
	char *v = str_subst(s, src_path("models/zoo/llama2-7b.json"), src_path("models/zoo/megatron/gpt-3.6b.json"));
	char *w = str_subst(v, "\"nodes\": 2", "\"nodes\": 4");
	expect_run_error(w, "%s: /parallel/pp: error: must be <= the model's 30 layers, got 32\n");
}

Test(scenario, dp_that_does_not_match_the_cluster)
{
	char *s = scenario("\"dp\": 8", "512", "", NULL);
	expect_run_error(s, "%s: /parallel/dp: error: dp x tp x pp must equal the 16 GPUs (2 nodes x 8 GPUs): 8 x 1 x 1 = 8\n");
}

Test(scenario, reports_every_problem_not_just_the_first)
{
	char *s = scenario("\"dp\": 16, \"sp\": 1", "512", ", \"colour\": \"red\"", NULL);
	expect_run_error(s, "%s: /parallel/sp: error: expected a boolean, got integer\n"
			"%s: /colour: error: unknown key 'colour'\n");
}

Test(scenario, interleaving_needs_a_pipeline)
{
	char *s = scenario("\"dp\": 16, \"schedule\": \"interleaved\", \"interleave\": 2", "512", "", NULL);
	expect_run_error(s, "%s: /parallel/interleave: error: interleaving needs pipeline parallelism (pp >= 2), got pp = 1\n");
}

Test(scenario, integers_beyond_int_are_refused_not_truncated)
{
	char *s = scenario("\"dp\": 16", "512", "", NULL);
	char *t = str_subst(s, "\"nodes\": 2", "\"nodes\": 4294967298");
	expect_run_error(t, "%s: /nodes: error: must be <= 2147483647, got 4294967298\n");
}

Test(scenario, recompute_every_n_layers_is_a_positive_layer_count_under_full)
{
	char *s = scenario("\"dp\": 16, \"recompute\": \"full\", \"recompute_every_n_layers\": 0", "512", "", NULL);
	expect_run_error(s, "%s: /parallel/recompute_every_n_layers: error: must be >= 1, got 0\n");
	s = scenario("\"dp\": 16, \"recompute\": \"full\", \"recompute_every_n_layers\": \"2\"", "512", "", NULL);
	expect_run_error(s, "%s: /parallel/recompute_every_n_layers: error: expected an integer, got string\n");
	s = scenario("\"dp\": 16, \"recompute\": \"selective\", \"recompute_every_n_layers\": 2", "512", "", NULL);
	expect_run_error(s, "%s: /parallel/recompute_every_n_layers: error: applies to recompute \"full\" (the "
			 "layers it picks are checkpointed whole), got recompute \"selective\"\n");
	s = scenario("\"dp\": 16, \"recompute_every_n_layers\": 2", "512", "", NULL);
	expect_run_error(s, "%s: /parallel/recompute_every_n_layers: error: applies to recompute \"full\" (the "
			 "layers it picks are checkpointed whole), got recompute \"none\"\n");
}

Test(scenario, recompute_modules_are_megatrons_names_under_selective)
{
	char *s = scenario("\"dp\": 16, \"recompute\": \"full\", \"recompute_modules\": [\"layernorm\"]",
			   "512", "", NULL);
	expect_run_error(s, "%s: /parallel/recompute_modules: error: applies with recompute \"selective\" only "
			 "(Megatron's --recompute-granularity selective), got recompute \"full\"\n");
	s = scenario("\"dp\": 16, \"recompute\": \"selective\", \"recompute_modules\": [\"core_attn\", \"norm\"]",
		     "512", "", NULL);
	expect_run_error(s, "%s: /parallel/recompute_modules/1: error: expected one of Megatron's recompute "
			 "modules {core_attn, layernorm, mla_up_proj, moe_act, mlp, moe, shared_experts}, "
			 "got \"norm\"\n");
	s = scenario("\"dp\": 16, \"recompute\": \"selective\", \"recompute_modules\": [\"mlp\"]",
		     "512", "", NULL);
	expect_run_error(s, "%s: /parallel/recompute_modules/0: error: recompute module \"mlp\" (Megatron's "
			 "checkpoint of the whole sub-block) is not modelled; modelled: core_attn, layernorm, "
			 "mla_up_proj, moe_act\n");
	s = scenario("\"dp\": 16, \"recompute\": \"selective\", \"recompute_modules\": []", "512", "", NULL);
	expect_run_error(s, "%s: /parallel/recompute_modules: error: expected at least one module (core_attn, "
			 "layernorm, mla_up_proj, moe_act), got []\n");
	s = scenario("\"dp\": 16, \"recompute\": \"selective\", \"recompute_modules\": [\"mla_up_proj\"]",
		     "512", "", NULL);
	expect_run_error(s, "%s: /parallel/recompute_modules: error: \"mla_up_proj\" recomputes multi-head "
			 "latent attention's up projections; the model has no \"mla\" attention\n");
}

Test(scenario, tiny_gradient_buckets_are_refused)
{
	char *s = scenario("\"dp\": 16", "512", ", \"communication\": {\"bucket_MB\": 1e-9}", NULL);
	expect_run_error(s, "%s: /communication/bucket_MB: error: must be >= 0.1 (100 kB), got 1e-09\n");
}

Test(scenario, seq_len_zero_is_one_error)
{
	char *s = scenario("\"dp\": 16", "512", "", NULL);
	char *t = str_subst(s, "\"seq_len\": 2048", "\"seq_len\": 0");
	expect_run_error(t, "%s: /training/seq_len: error: must be >= 1, got 0\n");
}

Test(scenario, gradient_reduction_dtype_is_checked)
{
	char *s = scenario("\"dp\": 16", "512", "", NULL);
	char *t = str_subst(s, "\"micro_batch\": 1", "\"micro_batch\": 1, \"grad_reduce_dtype\": \"tf32\"");
	expect_run_error(t, "%s: /training/grad_reduce_dtype: error: expected one of {fp32, fp16, bf16}, got 'tf32'\n");
}

Test(scenario, empty_output_formats_are_refused)
{
	char *s = scenario("\"dp\": 16", "512", ", \"output\": {\"formats\": []}", NULL);
	expect_run_error(s, "%s: /output/formats: error: expected at least one of \"json\", \"csv\", \"svg\", \"html\", got an empty list\n");
}

Test(scenario, too_many_nodes_for_the_fabric_is_an_input_error)
{
	char *s = scenario("\"dp\": 16", "512", "", src_path("topologies/dgx-h100-fattree2-2to1.json"));
	char *t = str_subst(s, "\"nodes\": 2", "\"nodes\": 20000");
	char *d = tmp_dir();
	char *p = write_file(d, "s.json", t);
	char args[2048], *err = NULL;
	snprintf(args, sizeof(args), "validate %s", p);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 3, "%s", err);
	char want[1400];
	snprintf(want, sizeof(want), "%s: /nodes: error: 20000 nodes do not fit topology", p);
	cr_assert(strstr(err, want), "%s", err);
}

/* training.attention, training.precision (tf32, fp8), training.fp8_comm,
 * training.memory_reserve: every new key's bad input, exact message. */
static char *training_with(const char *keys, const char *topo)
{
	char *s = scenario("\"dp\": 16", "512", "", topo);
	char with[256];
	snprintf(with, sizeof(with), "\"micro_batch\": 1, %s", keys);
	char *t = str_subst(s, "\"micro_batch\": 1", with);
	free(s);
	return t;
}

Test(scenario, unknown_attention_kernel)
{
	expect_run_error(training_with("\"attention\": \"fused\"", NULL),
		     "%s: /training/attention: error: expected one of {unfused, flash}, got 'fused'\n");
}

Test(scenario, flash_needs_a_gpu_with_a_flash_kernel)
{
	expect_run_error(training_with("\"precision\": \"fp16\", \"attention\": \"flash\"",
				   src_path("topologies/dgx1-v100.json")),
		     "%s: /training/attention: error: flash needs a GPU with a fused attention kernel "
		     "(Ampere or later: the topology's gpu.efficiency.flash_fwd_max), GPU "
		     "'V100-SXM2-32GB' has none\n");
}

Test(scenario, flash_needs_16_bit_or_fp8)
{
	expect_run_error(training_with("\"precision\": \"tf32\", \"attention\": \"flash\"", NULL),
		     "%s: /training/attention: error: flash needs precision fp16, bf16 or fp8, got \"tf32\"\n");
}

/* every precision needs the GPU's peak for it: the message names the
 * topology file and key to add it to (%%s: the scenario) */
static void expect_no_peak(const char *prec, const char *topo, const char *gpu, const char *tname)
{
	char keys[64], want[2048];
	snprintf(keys, sizeof(keys), "\"precision\": \"%s\"", prec);
	snprintf(want, sizeof(want), "%%s: /training/precision: error: %s needs a GPU with a peak for %s, "
		 "but GPU '%s' of topology '%s' has none (%s: /gpu/peak_tflops)\n", prec, prec, gpu, tname,
		 src_path(topo));
	expect_run_error(training_with(keys, src_path(topo)), want);
}

Test(scenario, fp8_needs_an_fp8_peak)
{
	expect_no_peak("fp8", "topologies/dgx-a100.json", "A100-SXM4-80GB", "DGX A100");
}

Test(scenario, tf32_needs_a_tf32_peak)
{
	expect_no_peak("tf32", "topologies/dgx1-v100.json", "V100-SXM2-32GB", "DGX-1 V100");
}

Test(scenario, bf16_on_a_gpu_without_bf16_is_an_error_not_an_infinite_mfu)
{
	expect_no_peak("bf16", "topologies/dgx1-v100.json", "V100-SXM2-32GB", "DGX-1 V100");
}

Test(scenario, fp8_comm_needs_fp8)
{
	expect_run_error(training_with("\"fp8_comm\": true", NULL),
		     "%s: /training/fp8_comm: error: needs precision \"fp8\", got \"bf16\"\n");
}

Test(scenario, fp8_params_needs_fp8)
{
	expect_run_error(training_with("\"fp8_params\": true", NULL),
		     "%s: /training/fp8_params: error: needs precision \"fp8\", got \"bf16\"\n");
}

Test(scenario, fp8_moe_act_cache_needs_fp8_and_an_moe_model)
{
	expect_run_error(training_with("\"fp8_moe_act_cache\": true", NULL),
		     "%s: /training/fp8_moe_act_cache: error: needs precision \"fp8\", got \"bf16\"\n"
		     "%s: /training/fp8_moe_act_cache: error: caches the routed experts' SwiGLU inputs; "
		     "the model has no \"moe\" block\n");
}

Test(scenario, fp8_params_must_be_a_bool)
{
	expect_run_error(training_with("\"fp8_params\": 1", NULL),
		     "%s: /training/fp8_params: error: expected a boolean, got integer\n");
}

Test(scenario, memory_reserve_is_a_fraction_below_one_half)
{
	expect_run_error(training_with("\"memory_reserve\": 0.6", NULL),
		     "%s: /training/memory_reserve: error: expected a fraction of HBM below 0.5, got 0.6\n");
}

Test(scenario, gradients_are_not_reduced_in_fp8)
{
	expect_run_error(training_with("\"grad_reduce_dtype\": \"fp8\"", NULL),
		     "%s: /training/grad_reduce_dtype: error: expected one of {fp32, fp16, bf16}, got 'fp8'\n");
}

/* ---- context parallelism, uneven stages, framework presets ---------- */

/* scenario() with one more substitution in the text. */
static char *scenario_with(const char *par, const char *from, const char *to)
{
	char *s = scenario(par, "8", "", NULL), *o = str_subst(s, from, to);
	free(s);
	return o;
}

Test(scenario, cp_must_divide_the_gpus_with_tp_and_pp)
{
	char *s = scenario("\"tp\": 2, \"cp\": 3", "8", "", NULL);
	expect_run_error(s, "%s: /parallel: error: tp x cp x pp = 2 x 3 x 1 = 6 must divide the 16 GPUs "
			"(2 nodes x 8 GPUs)\n");
}

Test(scenario, cp_times_tp_pp_dp_must_equal_the_gpus)
{
	char *s = scenario("\"tp\": 2, \"cp\": 2, \"dp\": 2", "8", "", NULL);
	expect_run_error(s, "%s: /parallel/dp: error: dp x tp x cp x pp must equal the 16 GPUs (2 nodes x 8 "
			"GPUs): 2 x 2 x 2 x 1 = 8\n");
}

Test(scenario, cp_needs_two_chunks_per_rank)
{
	char *s = scenario_with("\"tp\": 2, \"cp\": 4", "\"seq_len\": 2048", "\"seq_len\": 2052");
	expect_run_error(s, "%s: /parallel/cp: error: seq_len 2052 must be divisible by 2 x cp = 8 (two "
			"chunks per rank in the load-balanced causal split)\n");
}

Test(scenario, cp_needs_flash_attention)
{
	char *s = scenario_with("\"tp\": 2, \"cp\": 2", "\"micro_batch\": 1", "\"micro_batch\": 1, "
				"\"attention\": \"unfused\"");
	expect_run_error(s, "%s: /parallel/cp: error: context parallelism needs attention \"flash\" "
			"(Transformer Engine's fused attention), got \"unfused\"\n");
}

Test(scenario, cp_a2a_needs_heads_divisible_by_cp_times_tp)
{
	char *a = scenario_with("\"tp\": 8, \"cp\": 3, \"cp_comm\": \"a2a\"", "\"seq_len\": 2048",
				"\"seq_len\": 2304");
	char *s = str_subst(a, "\"nodes\": 2", "\"nodes\": 3");
	expect_run_error(s, "%s: /parallel/cp_comm: error: a2a needs the model's 32 attention heads "
			"divisible by cp x tp = 3 x 8 = 24, got a remainder of 8\n");
	free(a);
}

Test(scenario, cp_comm_needs_cp_and_a_known_name)
{
	expect_run_error(scenario("\"tp\": 2, \"cp_comm\": \"a2a\"", "8", "", NULL),
		     "%s: /parallel/cp_comm: error: needs context parallelism (cp > 1), got cp = 1\n");
	expect_run_error(scenario("\"tp\": 2, \"cp\": 2, \"cp_comm\": \"ring\"", "8", "", NULL),
		     "%s: /parallel/cp_comm: error: expected one of {p2p, a2a}, got 'ring'\n");
	expect_run_error(scenario("\"tp\": 2, \"cp\": 0", "8", "", NULL),
		     "%s: /parallel/cp: error: must be >= 1, got 0\n");
}

Test(scenario, first_stage_layers_need_a_pipeline)
{
	expect_run_error(scenario("\"tp\": 2, \"first_stage_layers\": 3", "8", "", NULL),
		     "%s: /parallel/first_stage_layers: error: needs pipeline parallelism (pp >= 2), "
		     "got pp = 1\n");
	expect_run_error(scenario("\"tp\": 2, \"pp\": 2, \"first_stage_layers\": 0", "8", "", NULL),
		     "%s: /parallel/first_stage_layers: error: must be >= 1, got 0\n");
}

Test(scenario, first_and_last_stage_layers_leave_an_even_split)
{
	expect_run_error(scenario("\"tp\": 2, \"pp\": 4, \"first_stage_layers\": 3, \"last_stage_layers\": 4",
			      "8", "", NULL),
		     "%s: /parallel/first_stage_layers: error: the 25 layers left after the first and last "
		     "stages (32 - 3 - 4) must split evenly over the other 2 stages\n");
	expect_run_error(scenario("\"tp\": 2, \"pp\": 4, \"first_stage_layers\": 3, "
			      "\"stage_layers\": [8, 8, 8, 8]", "8", "", NULL),
		     "%s: /parallel/first_stage_layers: error: cannot be combined with stage_layers\n");
}

Test(scenario, vstage_layers_one_per_virtual_stage_adding_up)
{
	const char *il = "\"tp\": 2, \"pp\": 2, \"schedule\": \"interleaved\", \"interleave\": 2, ";
	char par[256];
	snprintf(par, sizeof(par), "%s\"vstage_layers\": [8, 8, 8]", il);
	expect_run_error(scenario(par, "8", "", NULL),
		     "%s: /parallel/vstage_layers: error: expected one layer count per virtual stage "
		     "(pp x interleave = 2 x 2 = 4), got 3\n"
		     "%s: /parallel/vstage_layers: error: must add up to the model's 32 layers, got 24\n");
	snprintf(par, sizeof(par), "%s\"vstage_layers\": [8, -1, 8, \"x\"]", il);
	expect_run_error(scenario(par, "8", "", NULL),
		     "%s: /parallel/vstage_layers/1: error: expected a layer count >= 0, got -1\n"
		     "%s: /parallel/vstage_layers/3: error: expected a layer count >= 0, got string\n");
	snprintf(par, sizeof(par), "%s\"vstage_layers\": [8, 8, 8, 8], \"stage_layers\": [16, 16]", il);
	expect_run_error(scenario(par, "8", "", NULL),
		     "%s: /parallel/vstage_layers: error: cannot be combined with stage_layers\n");
}

Test(scenario, unknown_framework_or_version)
{
	expect_run_error(scenario("\"tp\": 2", "8", ", \"framework\": \"megatron\"", NULL),
		     "%s: /framework: error: unknown framework 'megatron' (known: megatron-core, nemo, "
		     "deepspeed, fsdp2, torchtitan)\n");
	expect_run_error(scenario("\"tp\": 2", "8", ", \"framework\": \"megatron-core@0.3\"", NULL),
		     "%s: /framework: error: unknown version of framework 'megatron-core', got "
		     "'megatron-core@0.3' (known: 0.9)\n");
	expect_run_error(scenario("\"tp\": 2", "8", ", \"framework\": 9", NULL),
		     "%s: /framework: error: expected a string, got integer\n");
	expect_run_error(scenario("\"tp\": 2", "8", ", \"communication\": {\"overlap_param_gather\": 1}", NULL),
		     "%s: /communication/overlap_param_gather: error: expected a boolean, got integer\n");
}

Test(scenario, tp_comm_overlap_needs_sequence_parallelism)
{
	expect_run_error(scenario("\"tp\": 2", "8", ", \"communication\": {\"tp_comm_overlap\": true}", NULL),
		     "%s: /communication/tp_comm_overlap: error: needs sequence parallelism "
		     "(parallel.sp) with tp > 1, got sp = false, tp = 2\n");
	expect_run_error(scenario("\"tp\": 2", "8", ", \"communication\": {\"tp_comm_overlap\": 0}", NULL),
		     "%s: /communication/tp_comm_overlap: error: expected a boolean, got integer\n");
}

Test(scenario, tp_comm_overlap_sm_margin_needs_the_overlap)
{
	expect_run_error(scenario("\"tp\": 2, \"sp\": true", "8",
				  ", \"communication\": {\"tp_comm_overlap_sm_margin\": {\"proj_fprop\": 24}}", NULL),
			 "%s: /communication/tp_comm_overlap_sm_margin/proj_fprop: error: needs "
			 "communication.tp_comm_overlap = true, got 24 SMs without it\n");
	expect_run_error(scenario("\"tp\": 2, \"sp\": true", "8",
				  ", \"communication\": {\"tp_comm_overlap\": true, "
				  "\"tp_comm_overlap_sm_margin\": {\"fc2\": 16}}", NULL),
			 "%s: /communication/tp_comm_overlap_sm_margin/fc2: error: unknown key 'fc2'\n");
}

/* ---- gpus_per_node_used ------------------------------------------------- */

static char *gb200_scenario(const char *dir, const char *name, const char *used)
{
	char text[4096];
	snprintf(text, sizeof(text),
		 "{\"schema\":\"ddlsim.scenario\",\"schema_version\":\"1.0\",\"name\":\"%s\","
		 "\"model\":\"%s\",\"topology\":\"%s\",\"nodes\":2,%s"
		 "\"parallel\":{\"tp\":8,\"dp\":16,\"zero\":1},"
		 "\"training\":{\"seq_len\":4096,\"global_batch\":1024,\"micro_batch\":1,\"precision\":\"bf16\"}}",
		 name, src_path("models/zoo/llama2-7b.json"), src_path("topologies/gb200-nvl72.json"), used);
	char file[128];
	snprintf(file, sizeof(file), "%s.json", name);
	return write_file(dir, file, text);
}

Test(scenario, gpus_per_node_used_runs_64_of_an_nvl72_racks_72_gpus, .timeout = 120)
{
	char *d = tmp_dir(), *p = gb200_scenario(d, "gb64", "\"gpus_per_node_used\":64,");
	char args[2048], *out = NULL, *err = NULL;
	snprintf(args, sizeof(args), "run %s --out %s/out", p, d);
	cr_assert_eq(run_ddlsim(args, &out, &err), 0, "%s", err);
	cr_expect(strstr(out, "cluster      2 x GB200 NVL72 = 128 x B200 (GB200) (64 of 72 GPUs per node used)"),
		  "%s", out);
	char rd[1200];
	snprintf(rd, sizeof(rd), "%s/out", d);
	json_t *r = load_report(rd);
	cr_assert(r);
	cr_expect_eq(jnum(r, "scenario/gpus"), 128);
	cr_expect_eq(jnum(r, "scenario/topology/gpus_per_node"), 64);
	cr_expect_eq(jnum(r, "scenario/topology/gpus_per_node_physical"), 72);
	json_decref(r);
	free(out);
	free(err);
	free(p);
	free(d);
}

Test(scenario, gpus_per_node_used_must_fit_the_node_and_the_plan)
{
	char *d = tmp_dir(), *p = gb200_scenario(d, "gb80", "\"gpus_per_node_used\":80,");
	char args[2048], *err = NULL, want[1400];
	snprintf(args, sizeof(args), "validate %s", p);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3);
	snprintf(want, sizeof(want), "%s: /gpus_per_node_used: error: must be between 1 and the 72 GPUs per node "
		 "of topology 'GB200 NVL72', got 80\n", p);
	cr_expect_str_eq(err, want);
	free(err);
	free(p);
	/* 2 x 60 GPUs: dp 16 x tp 8 = 128 ranks do not match 120 GPUs */
	p = gb200_scenario(d, "gb60", "\"gpus_per_node_used\":60,");
	snprintf(args, sizeof(args), "validate %s", p);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3);
	cr_expect(strstr(err, "120"), "%s", err);
	free(err);
	free(p);
	free(d);
}

/* ZB-H1 (engine/schedule.h): what its B / W split does not model is
 * refused with the key that asks for it. */
Test(scenario, zb_h1_refuses_context_parallelism)
{
	char *s = scenario("\"tp\": 2, \"pp\": 2, \"cp\": 2, \"dp\": 2, \"schedule\": \"zb-h1\"", "512", "", NULL);
	expect_run_error(s, "%s: /parallel/cp: error: schedule \"zb-h1\" does not split context parallelism's "
			 "attention backward into B and W; needs cp = 1, got 2\n");
}

Test(scenario, zb_h1_refuses_zero3)
{
	char *s = scenario("\"dp\": 16, \"zero\": 3, \"schedule\": \"zb-h1\"", "512", "", NULL);
	expect_run_error(s, "%s: /parallel/zero: error: schedule \"zb-h1\" with ZeRO-3 is not modelled (W would "
			 "gather the layer's parameters again); needs zero <= 2, got 3\n");
}

Test(scenario, zb_h1_refuses_interleaving)
{
	char *s = scenario("\"pp\": 2, \"dp\": 8, \"interleave\": 2, \"schedule\": \"zb-h1\"", "512", "", NULL);
	expect_run_error(s, "%s: /parallel/interleave: error: needs schedule \"interleaved\", got \"zb-h1\"\n");
}

Test(scenario, zb_h1_refuses_tp_comm_overlap)
{
	char *s = scenario("\"tp\": 2, \"sp\": true, \"pp\": 2, \"dp\": 4, \"schedule\": \"zb-h1\"", "512",
			   ",\n  \"communication\": { \"tp_comm_overlap\": true }", NULL);
	expect_run_error(s, "%s: /communication/tp_comm_overlap: error: schedule \"zb-h1\" does not split "
			 "tp_comm_overlap's chunked GEMMs into B and W; needs false\n");
}

Test(scenario, zb_h1_refuses_full_recompute)
{
	char *s = scenario("\"pp\": 2, \"dp\": 8, \"recompute\": \"full\", \"schedule\": \"zb-h1\"", "512", "", NULL);
	expect_run_error(s, "%s: /parallel/recompute: error: schedule \"zb-h1\" with full recomputation is not "
			 "modelled (W would hold the recomputed layer inputs, which memory does not count); "
			 "needs \"none\" or \"selective\", got \"full\"\n");
}

/* The shipped ZB-H1 scenario against the same plan under 1F1B: faster,
 * less bubble, and stage 0 holds the same activations (p micro-batches
 * in flight, F to W) as under 1F1B. */
Test(scenario, zb_h1_beats_one_f_one_b_at_its_memory)
{
	char *zb = test_file_text(src_path("scenarios/zb-h1-llama3-8b-pp4.json"));
	char *a = str_subst(zb, "\"../models/zoo/llama3-8b.json\"", "\"@M@\"");
	char *b = str_subst(a, "\"../topologies/dgx-h100.json\"", "\"@T@\"");
	char *c = str_subst(b, "@M@", src_path("models/zoo/llama3-8b.json"));
	char *zbt = str_subst(c, "@T@", src_path("topologies/dgx-h100.json"));
	char *onet = str_subst(zbt, "\"zb-h1\"", "\"1f1b\"");
	json_t *rz = report_of_text(zbt), *ro = report_of_text(onet);
	double tz = jnum(rz, "summary/iteration_time_s"), to = jnum(ro, "summary/iteration_time_s");
	cr_log_info("zb-h1 %.6f s, 1f1b %.6f s", tz, to);
	cr_expect_lt(tz, to);
	cr_expect_lt(jnum(rz, "breakdown/mean/bubble_s"), jnum(ro, "breakdown/mean/bubble_s"));
	/* B + W is the whole backward: the same compute, reordered */
	cr_expect_float_eq(jnum(rz, "breakdown/mean/compute_s"), jnum(ro, "breakdown/mean/compute_s"),
			   1e-9 * jnum(ro, "breakdown/mean/compute_s"));
	cr_expect_eq(jnum(rz, "memory/per_stage/0/peak_inflight_microbatch_chunks"),
		     jnum(ro, "memory/per_stage/0/peak_inflight_microbatch_chunks"));
	cr_expect_float_eq(jnum(rz, "memory/per_stage/0/activations_GB"),
			   jnum(ro, "memory/per_stage/0/activations_GB"), 1e-12);
	for (int s = 1; s < 4; s++) {
		char path[96];
		snprintf(path, sizeof(path), "memory/per_stage/%d/peak_inflight_microbatch_chunks", s);
		cr_expect_eq(jnum(rz, path), 4, "stage %d", s);
	}
	json_decref(rz);
	json_decref(ro);
	free(zb), free(a), free(b), free(c), free(zbt), free(onet);
}

/* DualPipe (engine/schedule.h): the reference's requirements and what
 * its B / W split does not model are refused with the key at fault. */
Test(scenario, dualpipe_needs_an_even_pp)
{
	char *s = scenario("\"dp\": 16, \"schedule\": \"dualpipe\"", "512", "", NULL);
	expect_run_error(s, "%s: /parallel/pp: error: schedule \"dualpipe\" needs an even number of pipeline "
			 "stages (pp >= 2), got 1\n");
}

Test(scenario, dualpipe_needs_twice_pp_microbatches)
{
	char *s = scenario("\"pp\": 4, \"dp\": 4, \"schedule\": \"dualpipe\"", "16", "", NULL);
	expect_run_error(s, "%s: /training/global_batch: error: schedule \"dualpipe\" needs an even number of "
			 "micro-batches per pipeline, at least 2 x pp = 8 (DualPipe.step()), got 4\n");
}

Test(scenario, dualpipe_refuses_full_recompute)
{
	char *s = scenario("\"pp\": 2, \"dp\": 8, \"recompute\": \"full\", \"schedule\": \"dualpipe\"", "512", "", NULL);
	expect_run_error(s, "%s: /parallel/recompute: error: schedule \"dualpipe\" with full recomputation is not "
			 "modelled (W would hold the recomputed layer inputs, which memory does not count); "
			 "needs \"none\", \"selective\" or \"selective-op\", got \"full\"\n");
}

/* The shipped DualPipe scenario against the same plan under 1F1B:
 * faster, less bubble, the same compute (B + W is the whole backward);
 * memory as Table 2 has it: every rank holds the weights of stages s
 * and p - 1 - s (2x a uniform stage's) and pp + 1 micro-batch chunks of
 * activations, rank 1 (p + 1) / (p - 1) times 1F1B's stage 1 (p - 1
 * micro-batches of as many layers per chunk). */
Test(scenario, dualpipe_beats_one_f_one_b_at_twice_the_weights)
{
	char *dp = test_file_text(src_path("scenarios/dualpipe-llama3-8b-pp4.json"));
	char *a = str_subst(dp, "\"../models/zoo/llama3-8b.json\"", "\"@M@\"");
	char *b = str_subst(a, "\"../topologies/dgx-h100.json\"", "\"@T@\"");
	char *c = str_subst(b, "@M@", src_path("models/zoo/llama3-8b.json"));
	char *dpt = str_subst(c, "@T@", src_path("topologies/dgx-h100.json"));
	char *onet = str_subst(dpt, "\"dualpipe\"", "\"1f1b\"");
	json_t *rd = report_of_text(dpt), *ro = report_of_text(onet);
	double td = jnum(rd, "summary/iteration_time_s"), to = jnum(ro, "summary/iteration_time_s");
	cr_log_info("dualpipe %.6f s, 1f1b %.6f s", td, to);
	cr_expect_lt(td, to);
	cr_expect_lt(jnum(rd, "breakdown/mean/bubble_s"), jnum(ro, "breakdown/mean/bubble_s"));
	/* B + W is the whole backward: the same forward and backward compute;
	 * the optimizer updates both copies, stage s's and p - 1 - s's */
	double pass[2] = { 0, 0 }, opt[2][4] = { { 0 } };
	for (int r = 0; r < 2; r++) {
		json_t *cl = json_object_get(json_object_get(r ? ro : rd, "breakdown"), "rank_classes");
		size_t i;
		json_t *x;
		json_array_foreach(cl, i, x) {
			json_t *f = json_object_get(x, "figures");
			double n = json_number_value(json_object_get(x, "count"));
			pass[r] += n * (json_number_value(json_object_get(f, "forward_s")) +
					json_number_value(json_object_get(f, "backward_s")));
			opt[r][json_integer_value(json_object_get(f, "stage"))] =
				json_number_value(json_object_get(f, "optimizer_s"));
		}
	}
	cr_expect_float_eq(pass[0], pass[1], 1e-9 * pass[1], "forward + backward %.9g s, 1f1b %.9g s",
			   pass[0], pass[1]);
	int p = 4;
	for (int s = 0; s < p; s++)
		/* to its kernels' fixed cost, paid once (0.06 % here) */
		cr_expect_float_eq(opt[0][s], opt[1][s] + opt[1][p - 1 - s], 1e-3 * opt[0][s],
				   "stage %d optimizer %.9g s, 1f1b %.9g + %.9g", s, opt[0][s], opt[1][s],
				   opt[1][p - 1 - s]);
	for (int s = 0; s < p; s++) {
		char path[96], mirror[96];
		snprintf(path, sizeof(path), "memory/per_stage/%d/peak_inflight_microbatch_chunks", s);
		cr_expect_eq(jnum(rd, path), p + 1, "stage %d", s);
		snprintf(path, sizeof(path), "memory/per_stage/%d/weights_GB", s);
		snprintf(mirror, sizeof(mirror), "memory/per_stage/%d/weights_GB", p - 1 - s);
		double want = jnum(ro, path) + jnum(ro, mirror);
		cr_expect_float_eq(jnum(rd, path), want, 1e-12 * want, "stage %d: %.9g GB, want %.9g",
				   s, jnum(rd, path), want);
	}
	/* a micro-batch passes one chunk of a middle rank: 1F1B's stage */
	cr_expect_float_eq(jnum(rd, "breakdown/per_stage/1/compute_fwd_per_microbatch_s"),
			   jnum(ro, "breakdown/per_stage/1/compute_fwd_per_microbatch_s"), 1e-12);
	double act1 = jnum(ro, "memory/per_stage/1/activations_GB");
	double want = act1 * (p + 1) / (p - 1);   /* 1F1B's stage 1 holds p - 1 */
	cr_expect_float_eq(jnum(rd, "memory/per_stage/1/activations_GB"), want, 1e-12 * want);
	json_decref(rd);
	json_decref(ro);
	free(dp), free(a), free(b), free(c), free(dpt), free(onet);
}

/* Hybrid sharding: a shard group shards ZeRO's state, so it needs a
 * ZeRO stage, and it must divide the dp x cp ranks. */
Test(scenario, shard_group_needs_zero)
{
	char *s = scenario("\"dp\": 16, \"shard_group\": 8", "512", "", NULL);
	expect_run_error(s, "%s: /parallel/shard_group: error: a shard group shards ZeRO's state: needs zero 1, "
			 "2 or 3, got zero 0\n");
}

Test(scenario, shard_group_must_divide_dp)
{
	char *s = scenario("\"dp\": 16, \"zero\": 3, \"shard_group\": 6", "512", "", NULL);
	expect_run_error(s, "%s: /parallel/shard_group: error: must divide the dp x cp = 16 data-parallel ranks, "
			 "got 6\n");
}
