/* test-tt-float8: torchtitan's gate on FSDP2's fp8 all-gather, as the
 * memory cases and the torchtitan importer apply it. torchtitan hands
 * torchao enable_fsdp_float8_all_gather only where
 * parallel_dims.dp_shard_enabled (dp_shard > 1): 9dec370 float8.py
 * L51-54 with parallel_dims.py L103-104, v0.1.0 (f7084fc)
 * components/quantization/float8.py L79-82 with distributed/
 * parallel_dims.py L116-117. FSDP over the cp ranks alone gathers, and
 * under a pipeline keeps, the layer weights in bf16 (models/memory.h,
 * "FSDP2"). */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define TT_TOPO "validation/memory-torchtitan-h100/h100-96gb-topology.json"

/* `ddlsim import torchtitan` of a job file written to dir. */
static int import_tt(const char *dir, const char *text, const char *more, char **out, char **err)
{
	char args[3072], *f = write_file(dir, "job.toml", text);
	snprintf(args, sizeof(args), "import torchtitan %s -o %s/s.json --topology %s --zoo %s %s", f, dir,
		 src_path(TT_TOPO), src_path("models/zoo"), more);
	free(f);
	return run_ddlsim(args, out, err);
}

/* torchtitan asks FSDP2 for the fp8 all-gather only where the shard
 * degree is above 1 (9dec370 float8.py L51-54: dp_shard_enabled,
 * parallel_dims.py L103-104), whatever the toml says: its memory cases
 * with Float8 set training.fp8_params exactly where parallel.dp > 1 (the
 * cases' dp is torchtitan's dp_shard; cp ranks alone shard without it). */
Test(tt_float8, the_cases_gather_in_fp8_only_above_shard_1)
{
	const char *rel = "validation/memory-torchtitan-h100";
	DIR *d = opendir(src_path(rel));
	cr_assert(d, "%s", rel);
	int fp8_cases = 0, off = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n < 6 || strcmp(e->d_name + n - 5, ".json") || strncmp(e->d_name, "tt-", 3))
			continue;
		char path[1024];
		snprintf(path, sizeof(path), "%s/%s", src_path(rel), e->d_name);
		json_t *s = load_json(path);
		if (!strcmp(jstr_at(s, "training/precision"), "fp8")) {
			json_t *f = json_object_get(json_object_get(s, "training"), "fp8_params");
			bool fp8_ag = f && json_is_true(f);
			cr_expect_eq(fp8_ag, jint_at(s, "parallel/dp") > 1, "%s: fp8_params %d at dp %ld", e->d_name,
				     fp8_ag, jint_at(s, "parallel/dp"));
			fp8_cases++;
			off += !fp8_ag;
		}
		json_decref(s);
	}
	closedir(d);
	cr_expect_eq(fp8_cases, 13, "Float8 rows: Tables 1-6's");
	cr_expect_eq(off, 2, "the two FSDP 1 x CP 8 rows");
}

/* torchtitan's float8.py (L79-82 at v0.1.0, L51-54 at 9dec370) asks for
 * the fp8 all-gather only where dp_shard_enabled: FSDP over the cp ranks
 * alone gathers in bf16, whatever the toml says; not an error. */
Test(tt_float8, the_importer_gathers_in_fp8_only_above_shard_1)
{
	char *dir = tmp_dir(), *out = NULL, *err = NULL, p[1200];
	const char *job = "[model]\nflavor = \"8B\"\nconverters = [\"float8\"]\n[training]\nlocal_batch_size = 1\n"
			  "seq_len = 262144\n[parallelism]\ndata_parallel_shard_degree = %d\n"
			  "context_parallel_degree = %d\n[float8]\nenable_fsdp_float8_all_gather = true\n";
	char text[512];
	snprintf(p, sizeof(p), "%s/s.json", dir);
	snprintf(text, sizeof(text), job, 1, 8);
	cr_assert_eq(import_tt(dir, text, "--nodes 1", &out, &err), 0, "%s", err);
	json_t *s = load_json(p);
	cr_expect_str_eq(jstr_at(s, "training/precision"), "fp8");
	cr_expect_eq(jint_at(s, "parallel/zero"), 3);              /* FSDP over the 8 cp ranks */
	json_t *f = json_object_get(json_object_get(s, "training"), "fp8_params");
	cr_expect(!f || json_is_false(f), "fp8_params set at dp_shard 1");
	cr_expect(strstr(out, "off at data_parallel_shard_degree 1"), "%s", out);
	json_decref(s);
	free(out);
	free(err);
	snprintf(text, sizeof(text), job, 2, 4);
	cr_assert_eq(import_tt(dir, text, "--nodes 1 --force", &out, &err), 0, "%s", err);
	s = load_json(p);
	cr_expect(jbool_at(s, "training/fp8_params"));
	json_decref(s);
	free(out);
	free(err);
	free(dir);
}
