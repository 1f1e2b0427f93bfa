/* test-import-tt: `ddlsim import torchtitan` (import/import_torchtitan.c).
 *
 * torchtitan job files (its shipped llama3_405b.toml and llama3_8b.toml
 * at v0.1.0) become scenarios whose every mapped key is checked, the 8B
 * job run to validation/memory-torchtitan-h100's tt-llama3-8b-fsdp128
 * case's iteration time and memory (1e-9); a TOML syntax error is refused
 * at its line and column, and contradictions torchtitan refuses are
 * refused with the key named. Split from test-import.c, which keeps the
 * Hugging Face and Megatron-LM importers. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* `ddlsim import ARGS`, its exit code; out and err kept for the test. */
static int import(const char *args, char **out, char **err)
{
	char cmd[4096];
	snprintf(cmd, sizeof(cmd), "import %s", args);
	return run_ddlsim(cmd, out, err);
}

/* Import a torchtitan job (tests/data/import/NAME, or text written to
 * dir/job.toml when name is NULL) into dir/s.json on topology with more. */
static int import_tt(const char *dir, const char *name, const char *text, const char *topology, const char *more,
		     char **out, char **err)
{
	char rel[256], args[3072], *f = NULL;
	snprintf(rel, sizeof(rel), "tests/data/import/%s", name ? name : "");
	if (!name)
		f = write_file(dir, "job.toml", text);
	snprintf(args, sizeof(args), "torchtitan %s -o %s/s.json --topology %s --zoo %s %s", name ? src_path(rel) : f,
		 dir, src_path(topology), src_path("models/zoo"), more);
	free(f);
	return import(args, out, err);
}

#define TT_TOPO "validation/memory-torchtitan-h100/h100-96gb-topology.json"

Test(import, torchtitan_405b_job_every_mapped_key)
{
	char *dir = tmp_dir(), *out = NULL, *err = NULL, p[1200];
	cr_assert_eq(import_tt(dir, "llama3_405b.toml", NULL, "topologies/dgx-h100.json", "--nodes 64", &out, &err), 0,
		     "%s", err);
	snprintf(p, sizeof(p), "%s/s.json", dir);
	json_t *s = load_json(p);
	cr_expect(strstr(jstr_at(s, "model"), "models/zoo/llama3-405b.json"), "%s", jstr_at(s, "model"));
	cr_expect_eq(jint_at(s, "nodes"), 64);
	cr_expect_eq(jint_at(s, "parallel/tp"), 8);
	cr_expect(jbool_at(s, "parallel/sp"));
	cr_expect_eq(jint_at(s, "parallel/pp"), 1);
	cr_expect_eq(jint_at(s, "parallel/dp"), 64);                /* -1: 512 / 8 */
	cr_expect_eq(jint_at(s, "parallel/cp"), 1);
	cr_expect_eq(jint_at(s, "parallel/zero"), 3);
	cr_expect_str_eq(jstr_at(s, "parallel/recompute"), "full");
	cr_expect_eq(jint_at(s, "training/seq_len"), 8192);
	cr_expect_eq(jint_at(s, "training/micro_batch"), 2);
	cr_expect_eq(jint_at(s, "training/global_batch"), 128);     /* local 2 x dp 64 */
	cr_expect_str_eq(jstr_at(s, "training/precision"), "fp8");
	cr_expect(jbool_at(s, "training/fp8_params"));
	cr_expect_str_eq(jstr_at(s, "training/grad_reduce_dtype"), "fp32");
	cr_expect(jbool_at(s, "communication/tp_comm_overlap"));
	cr_expect_str_eq(jstr_at(s, "compute/stack"), "torchtitan-compile");  /* training.compile true */
	cr_expect_null(json_object_get(s, "framework"));
	json_decref(s);
	cr_expect(strstr(out, "float8.precompute_float8_dynamic_scale_for_fsdp"), "%s", out);
	cr_expect(strstr(out, "training.compile"), "%s", out);
	cr_expect(strstr(out, "each block and the loss compiled by Inductor"), "%s", out);
	cr_expect(strstr(out, "optimizer.lr"), "%s", out);
	free(out);
	free(err);
	free(dir);
}

Test(import, torchtitan_lists_a_key_it_does_not_know)
{
	char *dir = tmp_dir(), *out = NULL, *err = NULL;
	cr_assert_eq(import_tt(dir, NULL, "[model]\nflavor = \"8B\"\n[parallelism]\ndata_parallel_shard_degree = 8\n"
			       "[training]\nlocal_batch_size = 1\nenable_cpu_offload = true\n", TT_TOPO, "", &out, &err),
		     0, "%s", err);
	cr_expect(strstr(out, "training.enable_cpu_offload"), "%s", out);
	cr_expect(strstr(out, "ddlsim does not know it: not applied"), "%s", out);
	char p[1200];
	snprintf(p, sizeof(p), "%s/s.json", dir);
	json_t *s = load_json(p);
	cr_expect_eq(jint_at(s, "nodes"), 1);                      /* 8 GPUs: the product of the degrees */
	cr_expect_eq(jint_at(s, "training/micro_batch"), 1);
	cr_expect_str_eq(jstr_at(s, "parallel/recompute"), "full");  /* absent: selective, option "2" */
	cr_expect_eq(jint_at(s, "parallel/recompute_every_n_layers"), 2);
	cr_expect_eq(jint_at(s, "training/seq_len"), 2048);          /* absent: 2048 */
	json_decref(s);
	free(out);
	free(err);
	free(dir);
}

Test(import, torchtitan_pipeline_context_and_float8)
{
	char *dir = tmp_dir(), *err = NULL, p[1200];
	cr_assert_eq(import_tt(dir, NULL,
			       "[model]\nname = \"llama3\"\nflavor = \"405B\"\nconverters = [\"float8\"]\n"
			       "[training]\nlocal_batch_size = 8\nglobal_batch_size = 32\nseq_len = 131072\n"
			       "mixed_precision_param = \"bfloat16\"\nmixed_precision_reduce = \"float32\"\n"
			       "[parallelism]\ndata_parallel_shard_degree = -1\ntensor_parallel_degree = 8\n"
			       "pipeline_parallel_degree = 8\npipeline_parallel_schedule = \"1F1B\"\n"
			       "pipeline_parallel_microbatch_size = 1\ncontext_parallel_degree = 4\n"
			       "[activation_checkpoint]\nmode = \"selective\"\nselective_ac_option = \"op\"\n"
			       "[float8]\nenable_fsdp_float8_all_gather = true\n",
			       TT_TOPO, "--nodes 64", NULL, &err), 0, "%s", err);
	snprintf(p, sizeof(p), "%s/s.json", dir);
	json_t *s = load_json(p);
	cr_expect_eq(jint_at(s, "parallel/pp"), 8);
	cr_expect_eq(jint_at(s, "parallel/cp"), 4);
	cr_expect_eq(jint_at(s, "parallel/dp"), 2);                 /* 512 / (8 x 8 x 4) */
	cr_expect_eq(jint_at(s, "parallel/zero"), 2);               /* reshard "default" with pp */
	cr_expect_str_eq(jstr_at(s, "parallel/schedule"), "1f1b");
	cr_expect_eq(jint_at(s, "parallel/first_stage_layers"), 15); /* (126 + 2) / 8 - 1, as the case */
	cr_expect_eq(jint_at(s, "parallel/last_stage_layers"), 15);
	cr_expect_str_eq(jstr_at(s, "parallel/recompute"), "selective-op");
	cr_expect_eq(jint_at(s, "training/micro_batch"), 1);
	cr_expect_eq(jint_at(s, "training/global_batch"), 32);
	cr_expect_eq(jint_at(s, "training/seq_len"), 131072);
	cr_expect_str_eq(jstr_at(s, "training/precision"), "fp8");
	cr_expect(jbool_at(s, "training/fp8_params"));
	json_decref(s);
	free(err);
	cr_assert_eq(import_tt(dir, NULL,
			       "[model]\nflavor = \"70B\"\n[training]\nbatch_size = 8\n[parallelism]\n"
			       "data_parallel_replicate_degree = 2\ndata_parallel_shard_degree = 1\n"
			       "pipeline_parallel_degree = 4\npipeline_parallel_schedule = \"Interleaved1F1B\"\n"
			       "pipeline_parallel_microbatch_size = 2\n[activation_checkpoint]\nmode = \"none\"\n",
			       TT_TOPO, "--force", NULL, &err), 0, "%s", err);
	s = load_json(p);
	cr_expect_eq(jint_at(s, "parallel/dp"), 2);
	cr_expect_eq(jint_at(s, "parallel/zero"), 0);               /* DDP: no FSDP */
	cr_expect_str_eq(jstr_at(s, "parallel/schedule"), "interleaved");
	cr_expect_eq(jint_at(s, "parallel/interleave"), 2);
	cr_expect_str_eq(jstr_at(s, "parallel/recompute"), "none");
	cr_expect_eq(jint_at(s, "training/micro_batch"), 2);
	cr_expect_eq(jint_at(s, "training/global_batch"), 16);      /* batch_size 8 x dp 2 */
	cr_expect_str_eq(jstr_at(s, "training/precision"), "fp32"); /* no FSDP: no mixed precision */
	json_decref(s);
	free(err);
	free(dir);
}

/* seq_len 0 was refused by the staged scenario's loader, naming the
 * output that is never written ('s.json: /training/seq_len'); now the
 * job file's place. A zoo not found from the working directory said
 * "cannot name it from ...": now which folder and what to give. */
Test(import, torchtitan_refuses_a_zero_seq_len_and_a_missing_zoo_at_their_place)
{
	char *dir = tmp_dir(), *err = NULL;
	cr_expect_eq(import_tt(dir, NULL, "[model]\nflavor = \"8B\"\n[training]\nseq_len = 0\n", TT_TOPO,
			       "--nodes 1", NULL, &err), 3);
	cr_expect(strstr(err, "job.toml:4:11: error: training.seq_len: expected an integer >= 1, got 0"), "%s", err);
	cr_expect_not(strstr(err, "s.json"), "%s", err);
	free(err);
	cr_expect_eq(import_tt(dir, NULL, "[model]\nflavor = \"8B\"\n", TT_TOPO, "--nodes 1 --zoo /nonexistent",
			       NULL, &err), 3);
	cr_expect(strstr(err, "ddlsim: error: --zoo '/nonexistent': cannot read the flavor's model 'llama3-8b.json': "
			      "No such file or directory (the folder given;"), "%s", err);
	free(err);
	char p[1200];
	snprintf(p, sizeof(p), "%s/s.json", dir);
	cr_expect_not(file_exists(p));
	free(dir);
}

Test(import, torchtitan_refuses_contradictions_naming_the_key)
{
	char *dir = tmp_dir(), *err = NULL;
	cr_expect_eq(import_tt(dir, NULL, "[model]\nflavor = \"8B\"\n[parallelism]\n"
			       "data_parallel_shard_degree = 4\ntensor_parallel_degree = 4\n", TT_TOPO, "--nodes 1", NULL,
			       &err), 3);
	cr_expect(strstr(err, "job.toml:4:30: error: the world size 8 (--nodes 1 x 8 GPUs per node) is not "
			      "data_parallel_replicate_degree 1 x data_parallel_shard_degree 4 x tensor_parallel_degree 4 x "
			      "pipeline_parallel_degree 1 x context_parallel_degree 1 = 16"), "%s", err);
	free(err);
	cr_expect_eq(import_tt(dir, NULL, "[model]\nflavor = \"3B\"\n", TT_TOPO, "--nodes 1", NULL, &err), 3);
	cr_expect(strstr(err, "job.toml:2:10: error: model.flavor: unknown llama3 flavor '3B' (known: 8B, 70B, 405B)"),
		  "%s", err);
	free(err);
	cr_expect_eq(import_tt(dir, NULL, "[model]\nflavor = \"8B\"\n[parallelism]\ntensor_parallel_degree = 2\n"
			       "pipeline_parallel_degree = 2\npipeline_parallel_schedule = \"ZeroBubble\"\n", TT_TOPO,
			       "--nodes 1", NULL, &err), 3);
	cr_expect(strstr(err, "job.toml:6:30: error: parallelism.pipeline_parallel_schedule: 'ZeroBubble' is not one "
			      "ddlsim runs (known: 1F1B, GPipe, Interleaved1F1B)"), "%s", err);
	free(err);
	char p[1200];
	snprintf(p, sizeof(p), "%s/s.json", dir);
	cr_expect_not(file_exists(p));
	free(dir);
}

Test(import, torchtitan_refuses_a_toml_syntax_error_with_its_place)
{
	char *dir = tmp_dir(), *err = NULL;
	cr_expect_eq(import_tt(dir, NULL, "[model]\nflavor = \"8B\"\n[training]\nseq_len = 8192 8\n", TT_TOPO,
			       "--nodes 1", NULL, &err), 3);
	cr_expect(strstr(err, "job.toml:4:16: error: expected the end of the line, got '8'"), "%s", err);
	free(err);
	cr_expect_eq(import_tt(dir, NULL, "[model]\nflavor = \"8B\n", TT_TOPO, "--nodes 1", NULL, &err), 3);
	cr_expect(strstr(err, "job.toml:2:10: error: unterminated string"), "%s", err);
	free(err);
	cr_expect_eq(import_tt(dir, NULL, "[model]\nflavor = { a = 1 }\n", TT_TOPO, "--nodes 1", NULL, &err), 3);
	cr_expect(strstr(err, "job.toml:2:10: error: inline tables are not read"), "%s", err);
	free(err);
	cr_expect_eq(import_tt(dir, NULL, "[training]\nseq_len = 1\nseq_len = 2\n", TT_TOPO, "--nodes 1", NULL, &err), 3);
	cr_expect(strstr(err, "job.toml:3:1: error: key 'seq_len' given twice in [training] (first at line 2)"), "%s",
		  err);
	free(err);
	free(dir);
}

Test(import, torchtitan_round_trip_of_the_8b_fsdp128_case)
{
	char *dir = tmp_dir(), *err = NULL, args[2048], p[1200];
	cr_assert_eq(import_tt(dir, "llama3_8b.toml", NULL, TT_TOPO, "--nodes 16", NULL, &err), 0, "%s", err);
	free(err);
	snprintf(p, sizeof(p), "%s/s.json", dir);
	json_t *s = load_json(p);
	cr_expect_eq(jint_at(s, "parallel/dp"), 128);
	cr_expect_eq(jint_at(s, "parallel/zero"), 3);
	cr_expect_str_eq(jstr_at(s, "parallel/recompute"), "selective-op");
	cr_expect_eq(jint_at(s, "training/global_batch"), 256);
	cr_expect_str_eq(jstr_at(s, "training/precision"), "bf16");
	json_decref(s);
	snprintf(args, sizeof(args), "run %s/s.json --out %s/got --quiet", dir, dir);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	free(err);
	snprintf(args, sizeof(args), "run %s --out %s/ref --quiet",
		 src_path("validation/memory-torchtitan-h100/tt-llama3-8b-fsdp128.json"), dir);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	free(err);
	snprintf(p, sizeof(p), "%s/got", dir);
	json_t *got = load_report(p);
	snprintf(p, sizeof(p), "%s/ref", dir);
	json_t *ref = load_report(p);
	cr_assert(got && ref);
	double tg = jnum(got, "summary/iteration_time_s"), tr = jnum(ref, "summary/iteration_time_s");
	cr_expect_leq(rel_diff(tg, tr), 1e-9, "imported %.12g s, shipped %.12g s", tg, tr);
	double mg = jnum(got, "memory/worst_total_GB"), mr = jnum(ref, "memory/worst_total_GB");
	cr_expect_leq(rel_diff(mg, mr), 1e-9, "imported %.12g GB, shipped %.12g GB", mg, mr);
	json_decref(got);
	json_decref(ref);
	free(dir);
}
