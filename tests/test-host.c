/* test-host: the host's time to issue kernels (models/host.h) against the
 * blocks the builder schedules, worked by hand.
 *
 * An eager PyTorch stack costs the host 9.4 us per forward kernel and
 * 3.6 us per backward kernel (models/stack.c cites both parts). A block
 * takes max(its kernels' GPU time, its issue time): a GPT-2-small layer
 * at one sequence of 128 tokens has kernels of a few microseconds, so
 * the GPU waits for the host; Llama 2 7B at 4,096 tokens does not; and
 * kernels replayed from CUDA graphs cost the host nothing. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "blocks.h"
#include "cost.h"
#include "diag.h"
#include "host.h"
#include "inputs.h"
#include "plan.h"
#include "stack.h"
#include "testutil.h"

static const char gpt2_small[] =
	"{ \"schema\": \"ddlsim.model\", \"schema_version\": \"1.0\", \"name\": \"gpt2-small\","
	" \"architecture\": \"decoder_transformer\", \"layers\": 12, \"hidden_size\": 768,"
	" \"heads\": 12, \"ffn_size\": 3072, \"activation\": \"gelu\", \"norm\": \"layernorm\","
	" \"source\": \"GPT-2 small (Radford et al. 2019): 12 layers, d 768, 12 heads\","
	" \"vocab_size\": 50257, \"tied_embeddings\": true }\n";

Test(host, issue_time_counts_each_launch_at_its_pass_rate)
{
	struct op_list l;
	op_list_init(&l);
	struct op a = { .kind = OP_MEMBOUND, .pass = PASS_FWD, .kernels = 3 };
	struct op b = { .kind = OP_GEMM, .pass = PASS_BWD };
	struct op c = { .kind = OP_MEMBOUND, .pass = PASS_FWD, .kernels = -1 };
	op_list_push(&l, &a);
	op_list_push(&l, &b);
	op_list_push(&l, &c);
	struct host_issue h = { 9.4e-6, 3.6e-6, false };
	/* 3 forward launches, 1 backward, the fused op none */
	cr_expect(fabs(host_issue_time(&h, NULL, &l) - (3 * 9.4e-6 + 3.6e-6)) < 1e-15);
	cr_expect_eq(host_issue_time(NULL, NULL, &l), 0);
	cr_expect_eq(host_bound_time(2e-3, 1e-3), 2e-3);
	cr_expect_eq(host_bound_time(1e-5, 4e-5), 4e-5);
	/* CUDA_LAUNCH_BLOCKING=1: the two stages in turn */
	cr_expect_eq(host_block_time(&h, 2e-3, 1e-3), 2e-3);
	h.blocking = true;
	cr_expect_eq(host_block_time(&h, 2e-3, 1e-3), 3e-3);
	cr_expect_eq(host_block_time(NULL, 2e-3, 1e-3), 2e-3);
	op_list_finish(&l);
}

/* FlashAttention-3's backward is three kernels (preprocess, main,
 * postprocess) where the GPU prices the main one apart (the H100 preset:
 * fa3 bwd_seq_half); the host issues all three, and the per-kernel table
 * counts them. The same op on an A100 runs FA2 in one kernel. */
Test(host, fa3_backward_issues_its_three_kernels_where_priced_as_three)
{
	char *dir = tmp_dir();
	char *model = write_file(dir, "gpt2.json", gpt2_small);
	struct diag d;
	diag_init(&d, stderr);
	struct inputs *h100 = inputs_load(model, src_path("topologies/dgx-h100.json"), "roofline", NULL, &d);
	struct inputs *a100 = inputs_load(model, src_path("topologies/dgx-a100.json"), "roofline", NULL, &d);
	cr_assert(h100 && a100);
	struct op bwd = { .kind = OP_ATTN, .pass = PASS_BWD, .batch = 12, .m = 4096, .n = 4096,
			  .k = 64, .causal = true, .backend = { ATTN_BE_FA2, ATTN_BE_FA3 } };
	struct op fwd = bwd;
	fwd.pass = PASS_FWD;
	cr_expect_eq(cost_op_launches(inputs_cost(h100), &bwd), 3);
	cr_expect_eq(cost_op_launches(inputs_cost(h100), &fwd), 1);
	cr_expect_eq(cost_op_launches(inputs_cost(a100), &bwd), 1);
	struct op_list l;
	op_list_init(&l);
	op_list_push(&l, &bwd);
	struct host_issue h = { 9.4e-6, 3.6e-6, false };
	cr_expect(fabs(host_issue_time(&h, inputs_cost(h100), &l) - 3 * 3.6e-6) < 1e-15);
	cr_expect(fabs(host_issue_time(&h, inputs_cost(a100), &l) - 3.6e-6) < 1e-15);
	op_list_finish(&l);
	inputs_destroy(h100);
	inputs_destroy(a100);
	diag_finish(&d);
	free(model);
	free(dir);

	/* the per-kernel table (report.json's ops_per_microbatch) of Llama 2
	 * 7B on H100 under FA3: the backward's row counts its three kernels */
	char text[2048];
	snprintf(text, sizeof(text),
		 "{\"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\", \"name\": \"fa3\",\n"
		 " \"model\": \"%s\", \"topology\": \"%s\", \"nodes\": 1,\n"
		 " \"parallel\": {\"dp\": 8},\n"
		 " \"training\": {\"seq_len\": 4096, \"global_batch\": 64, \"micro_batch\": 1,\n"
		 "  \"precision\": \"bf16\", \"optimizer\": \"adam\"},\n"
		 " \"compute\": {\"attention_backend\": \"fa3\"}}\n",
		 src_path("models/zoo/llama2-7b.json"), src_path("topologies/dgx-h100.json"));
	json_t *r = report_of_text(text), *o;
	size_t i;
	int rows = 0;
	json_array_foreach(json_object_get(json_object_get(r, "cost_model"), "ops_per_microbatch"), i, o) {
		const char *name = json_string_value(json_object_get(o, "op"));
		if (!strcmp(name, "flash_attn") || !strcmp(name, "flash_attn.bwd")) {
			cr_expect_eq(json_integer_value(json_object_get(o, "kernels")),
				     !strcmp(name, "flash_attn") ? 1 : 3, "%s", name);
			rows++;
		}
	}
	cr_expect_eq(rows, 2);
	json_decref(r);
}

/* The forward and backward attention blocks of model_path under stack
 * with micro-batch 1 at seq tokens; *gpu and *issue: the blocks' kernel
 * sums, as blocks_price sees them. */
static void price_ex(const char *model_path, const char *stack, long seq, bool graphs,
		     bool blocking, struct blocks *bk, double gpu[2], double issue[2])
{
	struct diag d;
	diag_init(&d, stderr);
	struct inputs *in = inputs_load(model_path, src_path("topologies/dgx-a100.json"),
					"roofline", NULL, &d);
	cr_assert(in);
	struct plan pl;
	plan_init(&pl);
	pl.nodes = 1;
	pl.parallel.dp = 8;
	pl.training.seq = seq;
	pl.training.global_batch = 8;
	pl.compute.stack = stack_index(stack_find(stack));
	pl.compute.stack_set = true;
	pl.compute.cuda_graphs = graphs;
	pl.compute.launch_blocking = blocking;
	plan_resolve(&pl, in);
	cr_assert_eq(blocks_price(&pl, inputs_model(in), inputs_cost(in), bk), 0);
	struct wl_shape shp = plan_wl_shape(&pl);
	struct host_issue h = plan_host_issue(&pl);
	for (int pass = 0; pass < 2; pass++) {
		struct op_list l;
		op_list_init(&l);
		cr_assert_eq(workload_block(inputs_model(in), &shp, WL_ATTN, pass, RECOMPUTE_NONE, &l), 0);
		gpu[pass] = cost_list_time(inputs_cost(in), &l);
		issue[pass] = host_issue_time(&h, inputs_cost(in), &l);
		op_list_finish(&l);
	}
	inputs_destroy(in);
	diag_finish(&d);
}

static void price(const char *model_path, const char *stack, long seq, bool graphs,
		  struct blocks *bk, double gpu[2], double issue[2])
{
	price_ex(model_path, stack, seq, graphs, false, bk, gpu, issue);
}

Test(host, a_small_layer_waits_for_the_host_a_large_one_does_not)
{
	char *dir = tmp_dir();
	char *model = write_file(dir, "gpt2.json", gpt2_small);
	struct blocks bk;
	double gpu[2], issue[2];

	price(model, "hf-eager", 128, false, &bk, gpu, issue);
	cr_expect(issue[0] > gpu[0], "GPT-2 small forward: issue %.1f us, GPU %.1f us",
		  1e6 * issue[0], 1e6 * gpu[0]);
	cr_expect(fabs(bk.fwd[WL_ATTN] - issue[0]) < 1e-12, "fwd %.3f us, issue %.3f us",
		  1e6 * bk.fwd[WL_ATTN], 1e6 * issue[0]);
	cr_expect(fabs(bk.host_wait_fwd[WL_ATTN] - (issue[0] - gpu[0])) < 1e-12);
	cr_expect(fabs(bk.bwd[WL_ATTN] - fmax(gpu[1], issue[1])) < 1e-12);
	/* the forward attention block of the hf-eager stack launches
	 * issue / 9.4 us kernels: a whole number */
	double k = issue[0] / 9.4e-6;
	cr_expect(fabs(k - round(k)) < 1e-6 && k > 10, "%.6f launches", k);

	/* the same kernels from CUDA graphs: the GPU's time alone */
	price(model, "hf-eager", 128, true, &bk, gpu, issue);
	cr_expect_eq(issue[0], 0);
	cr_expect(fabs(bk.fwd[WL_ATTN] - gpu[0]) < 1e-15);
	cr_expect_eq(bk.host_wait_fwd[WL_ATTN], 0);

	/* Llama 2 7B at 4,096 tokens: every block outlasts its issue */
	price(src_path("models/zoo/llama2-7b.json"), "hf-eager", 4096, false, &bk, gpu, issue);
	cr_expect(issue[0] < 0.1 * gpu[0]);
	cr_expect(fabs(bk.fwd[WL_ATTN] - gpu[0]) < 1e-15);
	cr_expect_eq(bk.host_wait_fwd[WL_ATTN], 0);
	free(model);
	free(dir);
}

/* compute.launch_blocking (BLOOM tr11's CUDA_LAUNCH_BLOCKING=1): a block
 * takes its kernels' GPU time plus their issue time, the small GPT-2
 * layer and Llama 2 7B's alike, and the GPU waits the whole issue time;
 * under CUDA graphs nothing is issued, nothing added. */
Test(host, launch_blocking_adds_the_issue_time_to_the_gpu_time)
{
	char *dir = tmp_dir();
	char *model = write_file(dir, "gpt2.json", gpt2_small);
	struct blocks bk;
	double gpu[2], issue[2];
	const char *paths[2] = { model, src_path("models/zoo/llama2-7b.json") };
	long seqs[2] = { 128, 4096 };
	for (int i = 0; i < 2; i++) {
		price_ex(paths[i], "hf-eager", seqs[i], false, true, &bk, gpu, issue);
		cr_expect(issue[0] > 0 && issue[1] > 0);
		cr_expect(fabs(bk.fwd[WL_ATTN] - (gpu[0] + issue[0])) < 1e-12 * bk.fwd[WL_ATTN],
			  "fwd %.3f us, GPU %.3f + issue %.3f", 1e6 * bk.fwd[WL_ATTN], 1e6 * gpu[0],
			  1e6 * issue[0]);
		cr_expect(fabs(bk.bwd[WL_ATTN] - (gpu[1] + issue[1])) < 1e-12 * bk.bwd[WL_ATTN]);
		cr_expect(fabs(bk.host_wait_fwd[WL_ATTN] - issue[0]) < 1e-12);
	}
	price_ex(model, "hf-eager", 128, true, true, &bk, gpu, issue);
	cr_expect_eq(issue[0], 0);
	cr_expect(fabs(bk.fwd[WL_ATTN] - gpu[0]) < 1e-15);
	free(model);
	free(dir);
}

/* compute.cuda_graphs and compute.host_issue_*_us in a scenario: a
 * negative time is refused with its JSON path and exit code 3; a given
 * time replaces the stack's. */
Test(host, scenario_keys)
{
	char *dir = tmp_dir(), text[2048], args[1400], *err = NULL;
	snprintf(text, sizeof(text),
		 "{ \"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\", \"model\": \"%s\","
		 " \"topology\": \"%s\", \"nodes\": 1,"
		 " \"compute\": { \"cuda_graphs\": false, \"host_issue_fwd_us\": -2 },"
		 " \"training\": { \"seq_len\": 2048, \"global_batch\": 8 } }\n",
		 src_path("models/zoo/llama2-7b.json"), src_path("topologies/dgx-a100.json"));
	char *p = write_file(dir, "s.json", text);
	snprintf(args, sizeof(args), "validate '%s'", p);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3, "%s", err);
	char want[1600];
	snprintf(want, sizeof(want), "%s: /compute/host_issue_fwd_us: error:", p);
	cr_expect(err && strstr(err, want), "want '%s' in: %s", want, err);
	free(err);
	free(p);
	free(dir);
}
