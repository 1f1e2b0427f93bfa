/* test-import2: `ddlsim import deepspeed` and `ddlsim import nemo`
 * (import/import_deepspeed.c, import/import_nemo.c, import/yaml.c).
 *
 * DeepSpeed configs as its tutorials print them (tests/data/import/,
 * tests/data/README.md names each source): the ZeRO++ stage-3 example
 * with every mapped key checked, on a Hugging Face config.json imported
 * beside it, its unknown keys (zero_quantized_*) and the hpZ group listed;
 * the ZeRO-Offload example run by `ddlsim run` to the iteration time and
 * memory (1e-9) of scenarios/llama2-13b-h100-offload.json written by hand
 * with the same framework. NeMo 2's llama3_8b recipe as nemo_run prints it,
 * every mapped key checked and run to the time of the same scenario
 * written by hand on models/zoo/llama3-8b.json, and the same recipe in
 * Megatron-Bridge's layout run to that time too. Contradictions each
 * framework refuses are refused naming the key (DeepSpeed by JSON path,
 * NeMo by line and column); YAML syntax errors at their line and column;
 * nothing written then. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define TOPO "topologies/dgx-h100.json"

/* The value at path ("parallel/zero"); asserts it is there. */
static json_t *at(json_t *o, const char *path)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", path);
	json_t *v = o;
	for (char *k = strtok(buf, "/"); k && v; k = strtok(NULL, "/"))
		v = json_object_get(v, k);
	cr_assert(v, "%s: absent", path);
	return v;
}

static const char *str_at(json_t *o, const char *path)
{
	json_t *v = at(o, path);
	cr_assert(json_is_string(v), "%s: not a string", path);
	return json_string_value(v);
}

/* `ddlsim import FORMAT INPUT -o dir/s.json --topology TOPO MORE`. */
static int import_to(const char *format, const char *input, const char *dir, const char *more, char **out,
		     char **err)
{
	char args[4096];
	snprintf(args, sizeof(args), "import %s %s -o %s/s.json --topology %s %s", format, input, dir, src_path(TOPO),
		 more);
	return run_ddlsim(args, out, err);
}

/* Run scenario a and b; expect the same iteration time and memory. */
static void expect_same_run(const char *dir, const char *a, const char *b)
{
	char args[2048], p[1200], *err = NULL;
	snprintf(args, sizeof(args), "run %s --out %s/got --quiet", a, dir);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	free(err);
	snprintf(args, sizeof(args), "run %s --out %s/ref --quiet", b, dir);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	free(err);
	snprintf(p, sizeof(p), "%s/got", dir);
	json_t *got = load_report(p);
	snprintf(p, sizeof(p), "%s/ref", dir);
	json_t *ref = load_report(p);
	cr_assert(got && ref);
	double tg = jnum(got, "summary/iteration_time_s"), tr = jnum(ref, "summary/iteration_time_s");
	cr_expect_leq(rel_diff(tg, tr), 1e-9, "imported %.12g s, by hand %.12g s", tg, tr);
	double mg = jnum(got, "memory/worst_total_GB"), mr = jnum(ref, "memory/worst_total_GB");
	cr_expect_leq(rel_diff(mg, mr), 1e-9, "imported %.12g GB, by hand %.12g GB", mg, mr);
	json_decref(got);
	json_decref(ref);
}

Test(import_deepspeed, zeropp_stage3_example_every_mapped_key)
{
	char *dir = tmp_dir(), *out = NULL, *err = NULL, more[1024], p[1200];
	snprintf(more, sizeof(more), "--model %s --seq-len 8192 --nodes 16 --map %s/map.csv",
		 src_path("tests/data/import/llama3.1-8b-config.json"), dir);
	cr_assert_eq(import_to("deepspeed", src_path("tests/data/import/ds-zeropp-stage3.json"), dir, more, &out, &err),
		     0, "%s", err);
	snprintf(p, sizeof(p), "%s/s.json", dir);
	json_t *s = load_json(p);
	cr_expect_str_eq(str_at(s, "model"), "s.model.json");          /* the config.json, imported beside */
	cr_expect_str_eq(str_at(s, "framework"), "deepspeed@0.15");
	cr_expect_eq(jnum(s, "nodes"), 16);
	cr_expect_eq(jnum(s, "parallel/dp"), 128);                     /* the world: no tp, pp */
	cr_expect_eq(jnum(s, "parallel/zero"), 3);
	cr_expect_str_eq(str_at(s, "parallel/recompute"), "full");
	cr_expect_eq(jnum(s, "training/seq_len"), 8192);
	cr_expect_eq(jnum(s, "training/global_batch"), 256);           /* 1 x 2 x 128 */
	cr_expect_eq(jnum(s, "training/micro_batch"), 1);
	cr_expect_str_eq(str_at(s, "training/precision"), "fp16");
	cr_expect_str_eq(str_at(s, "training/optimizer"), "adam");
	cr_expect(json_is_true(at(s, "communication/overlap_grad_reduce")));
	cr_expect_eq(jnum(s, "communication/bucket_MB"), 20.0);        /* 1e7 elements x 2 bytes */
	cr_expect_null(json_object_get(at(s, "parallel"), "offload"));
	json_decref(s);
	snprintf(p, sizeof(p), "%s/s.model.json", dir);
	json_t *m = load_json(p);
	cr_expect_eq(jnum(m, "layers"), 32);
	json_decref(m);
	/* the rows: unknown keys listed, hpZ with its reason, the defaults cited */
	cr_expect(strstr(out, "zero_optimization.zero_quantized_weights  true"), "%s", out);
	cr_expect(strstr(out, "zero_optimization.zero_hpz_partition_size  16"), "%s", out);
	cr_expect(strstr(out, "unknown: ZeRO++ hpZ: a secondary copy of the parameters sharded within groups of this "
			      "many ranks; ddlsim has no shard-group key"), "%s", out);
	cr_expect(strstr(out, "mapped: 5e7 elements (Z L205)"), "%s", out);
	cr_expect(strstr(out, "ignored: a norm over the gradients and a scale: no cost ddlsim prices"), "%s", out);
	cr_expect(strstr(out, "ignored: partitions checkpoints over model-parallel ranks"), "%s", out);
	cr_expect(strstr(out, "default: absent: the model's dtype (constants.py L240, engine.py L866)"), "%s", out);
	cr_expect(strstr(out, "28 mapped, 1 defaults, 5 derived, 18 ignored, 3 unknown"), "%s", out);
	snprintf(p, sizeof(p), "%s/map.csv", dir);
	char *csv = test_file_text(p);
	cr_expect(strstr(csv, "zero_optimization.stage,3,scenario: /parallel/zero,3,mapped,\n"), "%s", csv);
	cr_expect(strstr(csv, "gradient_accumulation_steps,2,scenario: /training/global_batch,2,mapped,"), "%s", csv);
	free(csv);
	free(out);
	free(err);
	free(dir);
}

/* MiCS: mics_shard_size at stage 3 is a shard group; its hierarchical
 * all-gather is listed as not modelled. */
Test(import_deepspeed, mics_shard_size_maps_to_a_shard_group)
{
	char *dir = tmp_dir(), *out = NULL, *err = NULL, more[1024], p[1200];
	char *cfg = write_file(dir, "ds.json", "{ \"train_micro_batch_size_per_gpu\": 1, \"bf16\": {\"enabled\": true},\n"
			       "  \"zero_optimization\": { \"stage\": 3, \"mics_shard_size\": 8,\n"
			       "    \"mics_hierarchical_params_gather\": true } }\n");
	snprintf(more, sizeof(more), "--model %s --seq-len 4096 --nodes 2",
		 src_path("tests/data/import/llama3.1-8b-config.json"));
	cr_assert_eq(import_to("deepspeed", cfg, dir, more, &out, &err), 0, "%s", err);
	snprintf(p, sizeof(p), "%s/s.json", dir);
	json_t *s = load_json(p);
	cr_expect_eq(jnum(s, "parallel/dp"), 16);
	cr_expect_eq(jnum(s, "parallel/zero"), 3);
	cr_expect_eq(jnum(s, "parallel/shard_group"), 8);
	cr_expect(strstr(out, "MiCS: ZeRO-3 within shard groups of this many ranks"), "%s", out);
	cr_expect(strstr(out, "unknown: MiCS's two-hop all-gather (inside then across nodes) is not modelled"), "%s",
		  out);
	json_decref(s);
	free(out);
	free(err);
	free(cfg);
	free(dir);
}

/* torchtitan HSDP (replicate and shard degrees both > 1): FSDP2 over the
 * shard x cp ranks (torchtitan's mesh (dp_replicate, dp_shard_cp)), dp
 * their product. */
Test(import_hsdp, torchtitan_hsdp_maps_to_a_shard_group)
{
	char *dir = tmp_dir(), *out = NULL, *err = NULL, more[1024], p[1200];
	char *job = write_file(dir, "job.toml", "[model]\nflavor = \"8B\"\n[parallelism]\n"
			       "data_parallel_replicate_degree = 2\ndata_parallel_shard_degree = 4\n"
			       "context_parallel_degree = 2\n");
	snprintf(more, sizeof(more), "--zoo %s --nodes 2", src_path("models/zoo"));
	cr_assert_eq(import_to("torchtitan", job, dir, more, &out, &err), 0, "%s", err);
	snprintf(p, sizeof(p), "%s/s.json", dir);
	json_t *s = load_json(p);
	cr_expect_eq(jnum(s, "parallel/dp"), 8);
	cr_expect_eq(jnum(s, "parallel/cp"), 2);
	cr_expect_eq(jnum(s, "parallel/shard_group"), 8);   /* 4 x cp 2 */
	cr_expect_eq(jnum(s, "parallel/zero"), 3);
	cr_expect(strstr(out, "HSDP: FSDP2 over the dp_shard x cp ranks"), "%s", out);
	json_decref(s);
	free(out);
	free(err);
	free(job);
	free(dir);
}

/* --num-distributed-optimizer-instances N: the distributed optimizer
 * sharded over dp x cp / N ranks (16 GPUs, dp 16, 2 instances: 8). */
#define MG_SMALL "--num-layers 4 --hidden-size 256 --num-attention-heads 8 --seq-length 512 " \
		 "--max-position-embeddings 512 --micro-batch-size 1 --vocab-size 1000 --bf16 "

Test(import_hsdp, megatron_optimizer_instances_map_to_a_shard_group)
{
	char *dir = tmp_dir(), *out = NULL, *err = NULL, p[1200];
	char *f = write_file(dir, "launch.sh", MG_SMALL "--use-distributed-optimizer "
			     "--num-distributed-optimizer-instances 2\n");
	cr_assert_eq(import_to("megatron", f, dir, "--nodes 2", &out, &err), 0, "%s", err);
	free(f);
	snprintf(p, sizeof(p), "%s/s.json", dir);
	json_t *s = load_json(p);
	cr_expect_eq(jnum(s, "parallel/dp"), 16);
	cr_expect_eq(jnum(s, "parallel/zero"), 1);
	cr_expect_eq(jnum(s, "parallel/shard_group"), 8);
	cr_expect(strstr(out, "dp x cp / 2: the optimizer sharded within each of 2 instances"), "%s", out);
	json_decref(s);
	free(out);
	free(err);
	f = write_file(dir, "launch.sh", MG_SMALL "--num-distributed-optimizer-instances 2\n");
	cr_expect_eq(import_to("megatron", f, dir, "--nodes 2 --force", NULL, &err), 3);
	cr_expect(strstr(err, "error: --num-distributed-optimizer-instances: needs --use-distributed-optimizer"),
		  "%s", err);
	free(err);
	free(f);
	f = write_file(dir, "launch.sh", MG_SMALL "--use-distributed-optimizer --num-distributed-optimizer-instances 3\n");
	cr_expect_eq(import_to("megatron", f, dir, "--nodes 2 --force", NULL, &err), 3);
	cr_expect(strstr(err, "error: --num-distributed-optimizer-instances: must divide the data-parallel ranks "
			      "dp x cp = 16, got 3"), "%s", err);
	free(err);
	free(f);
	free(dir);
}

/* --recompute-modules takes every word up to the next flag (nargs "+",
 * Megatron-LM d98e8a64ddf3 argument_utils.py L143-147); the words after
 * it are still read as flags. */
Test(import_recompute, megatron_recompute_modules_maps_its_words)
{
	char *dir = tmp_dir(), *out = NULL, *err = NULL, p[1200];
	char *f = write_file(dir, "launch.sh", MG_SMALL "--recompute-granularity selective "
			     "--recompute-modules core_attn layernorm --use-distributed-optimizer\n");
	cr_assert_eq(import_to("megatron", f, dir, "--nodes 1", &out, &err), 0, "%s", err);
	free(f);
	snprintf(p, sizeof(p), "%s/s.json", dir);
	json_t *s = load_json(p);
	json_t *mods = at(s, "parallel/recompute_modules");
	cr_assert_eq(json_array_size(mods), 2);
	cr_expect_str_eq(json_string_value(json_array_get(mods, 0)), "core_attn");
	cr_expect_str_eq(json_string_value(json_array_get(mods, 1)), "layernorm");
	cr_expect_eq(jnum(s, "parallel/zero"), 1, "the flag after the list is read");
	cr_expect(strstr(out, "--recompute-modules"), "%s", out);
	cr_expect(strstr(out, "core_attn layernorm"), "%s", out);
	json_decref(s);
	free(out);
	free(err);
	/* the scenario runs, and layernorm's recompute holds less than core_attn alone */
	double gb[2];
	for (int k = 0; k < 2; k++) {
		char args[2600];
		if (k) {
			f = write_file(dir, "launch.sh", MG_SMALL "--recompute-granularity selective "
				       "--recompute-modules core_attn --use-distributed-optimizer\n");
			cr_assert_eq(import_to("megatron", f, dir, "--nodes 1 --force", NULL, NULL), 0);
			free(f);
		}
		snprintf(args, sizeof(args), "run %s/s.json --out %s/r%d --quiet", dir, dir, k);
		cr_assert_eq(run_ddlsim(args, NULL, NULL), 0);
		snprintf(p, sizeof(p), "%s/r%d", dir, k);
		json_t *r = load_report(p);
		cr_assert(r);
		gb[k] = jnum(r, "memory/worst_total_GB");
		json_decref(r);
	}
	cr_expect_lt(gb[0], gb[1], "layernorm recomputed: %.6g GB, core_attn alone: %.6g GB", gb[0], gb[1]);
	free(dir);
}

/* Refused as Megatron refuses them, or as not modelled, naming the flag;
 * with granularity full the modules are listed as having no effect. */
Test(import_recompute, megatron_recompute_modules_refusals_and_no_effect)
{
	static const struct {
		const char *args, *msg;
	} bad[] = {
		{ "--recompute-granularity selective --recompute-modules core_attn attn\n",
		  "--recompute-modules: expected one of Megatron's modules {core_attn, moe_act, layernorm, "
		  "mla_up_proj, mlp, moe, shared_experts, gdn_norm_out, gdp_in_proj, gdp_qkv, mhc}, got 'attn' "
		  "(transformer_config.py L1958)" },
		{ "--recompute-granularity selective --recompute-modules mlp\n",
		  "--recompute-modules: 'mlp' (a whole sub-block checkpointed) is not modelled" },
		{ "--recompute-granularity selective --recompute-modules mla_up_proj\n",
		  "--recompute-modules: 'mla_up_proj' needs multi-latent attention (TC L1969)" },
		{ "--recompute-granularity selective --recompute-modules --use-distributed-optimizer\n",
		  "--recompute-modules: expected a value, got none" },
	};
	char *dir = tmp_dir(), *err = NULL, *out = NULL;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[600];
		snprintf(text, sizeof(text), "%s%s", MG_SMALL, bad[i].args);
		char *f = write_file(dir, "launch.sh", text);
		cr_expect_eq(import_to("megatron", f, dir, "--nodes 1 --force", NULL, &err), 3, "%zu", i);
		cr_expect(strstr(err, bad[i].msg), "%zu: %s", i, err);
		free(err);
		free(f);
	}
	char *f = write_file(dir, "launch.sh", MG_SMALL "--recompute-granularity full --recompute-method uniform "
			     "--recompute-num-layers 1 --recompute-modules layernorm\n");
	cr_assert_eq(import_to("megatron", f, dir, "--nodes 1 --force", &out, &err), 0, "%s", err);
	cr_expect(strstr(out, "read only with --recompute-granularity selective (TC L1943): no effect"), "%s", out);
	char p[1200];
	snprintf(p, sizeof(p), "%s/s.json", dir);
	json_t *s = load_json(p);
	cr_expect_null(json_object_get(json_object_get(s, "parallel"), "recompute_modules"));
	json_decref(s);
	free(out);
	free(err);
	free(f);
	free(dir);
}

Test(import_deepspeed, fills_the_batch_keys_as_deepspeed_does)
{
	char *dir = tmp_dir(), *out = NULL, *err = NULL, p[1200], more[512];
	char *cfg = write_file(dir, "ds.json", "{\"train_batch_size\": 32, \"zero_optimization\": {\"stage\": 1}}\n");
	snprintf(more, sizeof(more), "--model %s --seq-len 2048 --nodes 2", src_path("models/zoo/llama2-7b.json"));
	cr_assert_eq(import_to("deepspeed", cfg, dir, more, &out, &err), 0, "%s", err);
	snprintf(p, sizeof(p), "%s/s.json", dir);
	json_t *s = load_json(p);
	cr_expect_eq(jnum(s, "training/micro_batch"), 2);             /* train / dp, accumulation 1 */
	cr_expect_eq(jnum(s, "parallel/zero"), 1);
	cr_expect_str_eq(str_at(s, "training/precision"), "fp32");
	cr_expect(json_is_false(at(s, "communication/overlap_grad_reduce")));   /* on at stage 3 only */
	cr_expect_str_eq(str_at(s, "parallel/recompute"), "none");
	json_decref(s);
	cr_expect(strstr(out, "derived: 1 (runtime/config.py L966)"), "%s", out);
	cr_expect(strstr(out, "default: absent: on at stage 3 only (zero/config.py L131, L325-327)"), "%s", out);
	free(out);
	free(err);
	free(cfg);
	free(dir);
}

Test(import_deepspeed, refuses_contradictions_naming_the_key)
{
	char *dir = tmp_dir(), *err = NULL, p[1200], more[512];
	snprintf(more, sizeof(more), "--model %s --seq-len 4096 --nodes 2", src_path("models/zoo/llama2-7b.json"));
	char *cfg = write_file(dir, "ds.json", "{\"train_batch_size\": 64, \"train_micro_batch_size_per_gpu\": 2,\n"
			       " \"gradient_accumulation_steps\": 4}\n");
	cr_expect_eq(import_to("deepspeed", cfg, dir, more, NULL, &err), 3);
	cr_expect(strstr(err, "ds.json: /train_batch_size: error: 64 is not train_micro_batch_size_per_gpu 2 x "
			      "gradient_accumulation_steps 4 x dp 16 = 128 (runtime/config.py L929)"), "%s", err);
	free(err);
	free(cfg);
	cfg = write_file(dir, "ds.json", "{\"train_batch_size\": 32, \"bf16\": {\"enabled\": true},\n"
			 " \"fp16\": {\"enabled\": true}}\n");
	cr_expect_eq(import_to("deepspeed", cfg, dir, more, NULL, &err), 3);
	cr_expect(strstr(err, "ds.json: /fp16/enabled: error: not with bf16.enabled true: DeepSpeed refuses both "
			      "(runtime/config.py L833)"), "%s", err);
	free(err);
	free(cfg);
	cfg = write_file(dir, "ds.json", "{\"train_batch_size\": 32, \"zero_optimization\": {\"stage\": 2,\n"
			 " \"offload_optimizer\": {\"device\": \"nvme\"}}}\n");
	cr_expect_eq(import_to("deepspeed", cfg, dir, more, NULL, &err), 3);
	cr_expect(strstr(err, "ds.json: /zero_optimization/offload_optimizer/device: error: nvme: ZeRO-Infinity's NVMe "
			      "offload is not modelled"), "%s", err);
	free(err);
	free(cfg);
	cfg = write_file(dir, "ds.json", "{\"train_batch_size\": \"auto\"}\n");
	cr_expect_eq(import_to("deepspeed", cfg, dir, more, NULL, &err), 3);
	cr_expect(strstr(err, "ds.json: /train_batch_size: error: 'auto' is the Hugging Face Trainer's placeholder"),
		  "%s", err);
	free(err);
	free(cfg);
	snprintf(p, sizeof(p), "%s/s.json", dir);
	cr_expect_not(file_exists(p));
	free(dir);
}

Test(import_deepspeed, needs_the_model_and_the_sequence)
{
	char *dir = tmp_dir(), *err = NULL;
	cr_expect_eq(import_to("deepspeed", src_path("tests/data/import/ds-zero2-offload.json"), dir, "--nodes 1", NULL,
			       &err), 2);
	cr_expect(strstr(err, "import deepspeed: --model FILE and --seq-len N are required"), "%s", err);
	free(err);
	free(dir);
}

/* tests/data/import/ds-zero2-offload.json is scenarios/llama2-13b-h100-offload.json
 * with overlap_comm on: the same run as that scenario under the preset
 * deepspeed@0.15 with overlap_grad_reduce, written by hand. */
Test(import_deepspeed, round_trip_of_the_zero_offload_example)
{
	char *dir = tmp_dir(), *err = NULL, more[512], p[1200];
	snprintf(more, sizeof(more), "--model %s --seq-len 4096 --nodes 1", src_path("models/zoo/llama2-13b.json"));
	cr_assert_eq(import_to("deepspeed", src_path("tests/data/import/ds-zero2-offload.json"), dir, more, NULL, &err),
		     0, "%s", err);
	free(err);
	snprintf(p, sizeof(p), "%s/s.json", dir);
	json_t *s = load_json(p);
	cr_expect_str_eq(str_at(s, "parallel/offload"), "optimizer");
	cr_expect_eq(jnum(s, "parallel/zero"), 2);
	cr_expect_str_eq(str_at(s, "parallel/recompute"), "full");
	cr_expect_str_eq(str_at(s, "training/precision"), "bf16");
	json_decref(s);
	json_t *ref = load_json(src_path("scenarios/llama2-13b-h100-offload.json"));
	json_object_set_new(ref, "model", json_string(src_path("models/zoo/llama2-13b.json")));
	json_object_set_new(ref, "topology", json_string(src_path(TOPO)));
	json_object_set_new(ref, "framework", json_string("deepspeed@0.15"));
	json_object_set_new(ref, "communication", json_pack("{s:b}", "overlap_grad_reduce", 1));
	char rp[1200];
	snprintf(rp, sizeof(rp), "%s/byhand.json", dir);
	cr_assert_eq(json_dump_file(ref, rp, JSON_INDENT(2)), 0);
	json_decref(ref);
	expect_same_run(dir, p, rp);
	free(dir);
}

Test(import_nemo, llama3_8b_recipe_every_mapped_key)
{
	char *dir = tmp_dir(), *out = NULL, *err = NULL, p[1200];
	cr_assert_eq(import_to("nemo", src_path("tests/data/import/nemo-llama3-8b.yaml"), dir, "", &out, &err), 0, "%s",
		     err);
	snprintf(p, sizeof(p), "%s/s.json", dir);
	json_t *s = load_json(p);
	cr_expect_str_eq(str_at(s, "framework"), "nemo@2.0");
	cr_expect_str_eq(str_at(s, "model"), "s.model.json");
	cr_expect_eq(jnum(s, "nodes"), 1);
	cr_expect_eq(jnum(s, "parallel/tp"), 1);
	cr_expect_eq(jnum(s, "parallel/pp"), 1);
	cr_expect_eq(jnum(s, "parallel/cp"), 2);
	cr_expect_eq(jnum(s, "parallel/dp"), 4);
	cr_expect(json_is_false(at(s, "parallel/sp")));
	cr_expect_eq(jnum(s, "parallel/zero"), 1);
	cr_expect_str_eq(str_at(s, "parallel/recompute"), "none");
	cr_expect_eq(jnum(s, "training/seq_len"), 8192);
	cr_expect_eq(jnum(s, "training/global_batch"), 512);
	cr_expect_eq(jnum(s, "training/micro_batch"), 1);
	cr_expect_str_eq(str_at(s, "training/precision"), "bf16");
	cr_expect_str_eq(str_at(s, "training/grad_reduce_dtype"), "fp32");
	cr_expect(json_is_true(at(s, "communication/overlap_grad_reduce")));
	cr_expect(json_is_true(at(s, "communication/overlap_param_gather")));
	json_decref(s);
	snprintf(p, sizeof(p), "%s/s.model.json", dir);
	json_t *m = load_json(p);
	cr_expect_eq(jnum(m, "layers"), 32);
	cr_expect_eq(jnum(m, "hidden_size"), 4096);
	cr_expect_eq(jnum(m, "heads"), 32);
	cr_expect_eq(jnum(m, "kv_heads"), 8);
	cr_expect_eq(jnum(m, "ffn_size"), 14336);
	cr_expect_eq(jnum(m, "vocab_size"), 128256);
	cr_expect_eq(jnum(m, "max_position"), 8192);
	cr_expect_str_eq(str_at(m, "activation"), "swiglu");
	cr_expect_str_eq(str_at(m, "norm"), "rmsnorm");
	cr_expect_str_eq(str_at(m, "position_embedding"), "rope");
	cr_expect(json_is_false(at(m, "tied_embeddings")));
	cr_expect(json_is_false(at(m, "bias")));
	cr_expect(json_is_false(at(m, "dropout")));
	json_decref(m);
	cr_expect(strstr(out, "model.config.num_layers                                                             "
			      "model: /layers                            32                                    default: "
			      "absent: Llama3Config8B (llama.py L130-136)"), "%s", out);
	cr_expect(strstr(out, "absent: Llama3Config8B (Llama3Config, llama.py L87-105)"), "%s", out);
	cr_expect(strstr(out, "trainer.strategy.ddp.grad_reduce_in_fp32  true"), "%s", out);
	cr_expect(strstr(out, "ignored: trainer.plugins.grad_reduce_in_fp32 is read: the precision plugin's overrides"),
		  "%s", out);
	cr_expect(strstr(out, "trainer.callbacks.0._target_"), "%s", out);
	cr_expect(strstr(out, "16 mapped, 15 defaults, 3 derived, 49 ignored, 0 unknown"), "%s", out);
	free(out);
	free(err);
	free(dir);
}

/* NeMo's llama3_8b recipe, and the same in Megatron-Bridge's layout, run
 * as the recipe's run written by hand on the shipped model. */
Test(import_nemo, round_trip_of_the_llama3_8b_recipe_in_both_layouts)
{
	static const char *const recipes[] = { "tests/data/import/nemo-llama3-8b.yaml",
						"tests/data/import/bridge-llama3-8b.yaml" };
	for (size_t i = 0; i < sizeof(recipes) / sizeof(recipes[0]); i++) {
		char *dir = tmp_dir(), *err = NULL, p[1200];
		cr_assert_eq(import_to("nemo", src_path(recipes[i]), dir, "--nodes 1", NULL, &err), 0, "%s", err);
		free(err);
		snprintf(p, sizeof(p), "%s/s.json", dir);
		json_t *ref = json_pack("{s:s, s:s, s:s, s:s, s:s, s:i, s:s,"
					" s:{s:i, s:i, s:i, s:i, s:i},"
					" s:{s:i, s:i, s:i, s:s, s:s},"
					" s:{s:b, s:b}}",
					"schema", "ddlsim.scenario", "schema_version", "1.0", "name", "byhand",
					"model", src_path("models/zoo/llama3-8b.json"), "topology", src_path(TOPO), "nodes",
					1, "framework", "nemo@2.0",
					"parallel", "tp", 1, "pp", 1, "cp", 2, "dp", 4, "zero", 1,
					"training", "seq_len", 8192, "global_batch", 512, "micro_batch", 1, "precision",
					"bf16", "grad_reduce_dtype", "fp32",
					"communication", "overlap_grad_reduce", 1, "overlap_param_gather", 1);
		cr_assert(ref);
		char rp[1200];
		snprintf(rp, sizeof(rp), "%s/byhand.json", dir);
		cr_assert_eq(json_dump_file(ref, rp, JSON_INDENT(2)), 0);
		json_decref(ref);
		expect_same_run(dir, p, rp);
		free(dir);
	}
}

Test(import_nemo, megatron_bridge_layout_keeps_the_file_s_names)
{
	char *dir = tmp_dir(), *out = NULL, *err = NULL;
	cr_assert_eq(import_to("nemo", src_path("tests/data/import/bridge-llama3-8b.yaml"), dir, "", &out, &err), 0,
		     "%s", err);
	cr_expect(strstr(out, "model.num_query_groups                    8                        model: /kv_heads"),
		  "%s", out);
	cr_expect(strstr(out, "train.global_batch_size                   512                      scenario: "
			      "/training/global_batch"), "%s", out);
	cr_expect(strstr(out, "mixed_precision                           bf16_mixed               scenario: "
			      "/training/precision"), "%s", out);
	cr_expect(strstr(out, "mapped: with model.hidden_dropout"), "%s", out);
	cr_expect(strstr(out, "mapped: a preset vocab_size is used as given, not padded"), "%s", out);
	cr_expect(strstr(out, "27 mapped, 3 defaults, 3 derived, 15 ignored, 0 unknown"), "%s", out);
	free(out);
	free(err);
	free(dir);
}

/* A recipe (text) written to dir/recipe.yaml, imported on one DGX H100. */
static int import_yaml(const char *dir, const char *text, const char *more, char **out, char **err)
{
	char *f = write_file(dir, "recipe.yaml", text);
	int rc = import_to("nemo", f, dir, more, out, err);
	free(f);
	return rc;
}

#define SMALL "model:\n  config:\n    num_layers: 4\n    hidden_size: 256\n    num_attention_heads: 8\n" \
	      "    vocab_size: 1000\n    seq_length: 512\n"

Test(import_nemo, refuses_contradictions_naming_the_key_and_its_place)
{
	char *dir = tmp_dir(), *err = NULL, p[1200];
	cr_expect_eq(import_yaml(dir, "model:\n  config:\n    _target_: nemo.collections.llm.gpt.model.llama.Llama3Config8B\n"
				 "trainer:\n  strategy:\n    tensor_model_parallel_size: 3\ndata:\n  seq_length: 4096\n"
				 "  micro_batch_size: 1\n", "", NULL, &err), 3);
	cr_expect(strstr(err, "recipe.yaml:3:15: error: model.config.num_attention_heads: 32 is not a multiple of "
			      "trainer.strategy.tensor_model_parallel_size 3 (transformer_config.py L324)"), "%s", err);
	cr_expect(strstr(err, "recipe.yaml: error: the world size 8 (trainer.num_nodes 1 x 8 GPUs per node) is not a "
			      "multiple of tp 3 x pp 1 x cp 1 (L180)"), "%s", err);
	free(err);
	cr_expect_eq(import_yaml(dir, SMALL "    num_query_groups: 3\ndata:\n  seq_length: 512\n  micro_batch_size: 1\n",
				 "", NULL, &err), 3);
	cr_expect(strstr(err, "recipe.yaml:8:23: error: model.config.num_query_groups: 3 does not divide "
			      "model.config.num_attention_heads 8"), "%s", err);
	free(err);
	cr_expect_eq(import_yaml(dir, SMALL "data:\n  seq_length: 1024\n  micro_batch_size: 1\n", "", NULL, &err), 3);
	cr_expect(strstr(err, "recipe.yaml:9:15: error: data.seq_length: 1024 is above model.config.seq_length 512 "
			      "(L437)"), "%s", err);
	free(err);
	cr_expect_eq(import_yaml(dir, SMALL "trainer:\n  devices: 4\ndata:\n  seq_length: 512\n  micro_batch_size: 1\n",
				 "", NULL, &err), 3);
	cr_expect(strstr(err, "recipe.yaml:9:12: error: trainer.devices: 4 GPUs per node, but the topology's nodes have "
			      "8"), "%s", err);
	free(err);
	snprintf(p, sizeof(p), "%s/s.json", dir);
	cr_expect_not(file_exists(p));
	free(dir);
}

Test(import_nemo, reads_a_small_config_and_lists_an_unknown_key)
{
	char *dir = tmp_dir(), *out = NULL, *err = NULL, p[1200];
	cr_assert_eq(import_yaml(dir, SMALL "    recompute_granularity: full\n    recompute_method: uniform\n"
				 "    recompute_num_layers: 1\n    moe_shared_expert_intermediate_size: 64\n"
				 "trainer:\n  num_nodes: 1\n  strategy:\n    tensor_model_parallel_size: 2\n"
				 "    pipeline_model_parallel_size: 2\n    virtual_pipeline_model_parallel_size: 2\n"
				 "    sequence_parallel: yes\n  plugins:\n    precision: bf16-mixed\n    fp8: hybrid\n"
				 "data:\n  seq_length: 512  # the batch's\n  micro_batch_size: 1\n  global_batch_size: 8\n"
				 "optim:\n  config:\n    use_distributed_optimizer: true\n", "", &out, &err), 0, "%s", err);
	snprintf(p, sizeof(p), "%s/s.json", dir);
	json_t *s = load_json(p);
	cr_expect_str_eq(str_at(s, "parallel/recompute"), "full");
	cr_expect_str_eq(str_at(s, "parallel/schedule"), "interleaved");
	cr_expect_eq(jnum(s, "parallel/interleave"), 2);
	cr_expect(json_is_true(at(s, "parallel/sp")));
	cr_expect_eq(jnum(s, "parallel/dp"), 2);
	cr_expect_str_eq(str_at(s, "training/precision"), "fp8");
	json_decref(s);
	snprintf(p, sizeof(p), "%s/s.model.json", dir);
	json_t *m = load_json(p);
	cr_expect_eq(jnum(m, "vocab_size"), 1000);                    /* given: not padded (base.py L196) */
	json_decref(m);
	cr_expect(strstr(out, "model.config.moe_shared_expert_intermediate_size  64"), "%s", out);
	cr_expect(strstr(out, "unknown: ddlsim does not know it: not applied"), "%s", out);
	free(out);
	free(err);
	free(dir);
}

Test(import_nemo, refuses_a_yaml_syntax_error_with_its_place)
{
	char *dir = tmp_dir(), *err = NULL;
	static const struct {
		const char *text, *msg;
	} bad[] = {
		{ "model:\n  config:\n    num_layers: 4\n   hidden_size: 8\n",
		  "recipe.yaml:4:4: error: unexpected indentation (expected a key at column 3)" },
		{ "model:\n  config: {a: 1}\n", "recipe.yaml:2:11: error: flow mappings are not read" },
		{ "data:\n  seq_length: \"8192\n", "recipe.yaml:2:15: error: unterminated string" },
		{ "data:\n\tseq_length: 1\n", "recipe.yaml:2:1: error: a tab in the indentation" },
		{ "data:\n  seq_length: 1\n  seq_length: 2\n",
		  "recipe.yaml:3:3: error: key 'data.seq_length' given twice (first at line 2)" },
		{ "data:\n  seq_length: &a 1\n", "recipe.yaml:2:15: error: anchors are not read" },
		{ "data:\n  text: |\n    a\n", "recipe.yaml:2:9: error: block scalars are not read" },
		{ "data:\n  seq_length 1\n", "recipe.yaml:2:3: error: expected 'key: value'" },
		{ "a: [1, [2]]\n", "recipe.yaml:1:8: error: lists of lists are not read" },
		{ "a: 1\n---\nb: 2\n", "recipe.yaml:2:1: error: a second document ('---') is not read" },
		{ "a:\n- - 1\n", "recipe.yaml:2:3: error: a list item where a value was expected" },
		{ "b: c: d\n", "recipe.yaml:1:5: error: ': ' inside a plain value (quote the value)" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_expect_eq(import_yaml(dir, bad[i].text, "", NULL, &err), 3, "%s", bad[i].text);
		cr_expect(strstr(err, bad[i].msg), "want '%s', got: %s", bad[i].msg, err);
		free(err);
	}
	free(dir);
}
