/* test-zero3: DeepSpeed ZeRO-3's traffic per GPU, worked by hand, against
 * the simulator, and what that traffic costs at 1,024 GPUs; the same with
 * hybrid sharding (parallel.shard_group: MiCS, and ZeRO-1 over shard
 * groups), folded and not.
 *
 * DeepSpeed 0.15 (models/framework.c cites deepspeed/runtime/zero/
 * parameter_offload.py L439-480 and zero/config.py): every micro-batch
 * all-gathers each submodule's 16-bit weight when the submodule runs, in
 * forward and again in backward, and releases it after use, unless the
 * weight is used again within stage3_max_reuse_distance (1e9) gathered
 * elements; tensors below stage3_param_persistence_threshold (1e5: the
 * norms) stay whole. Gradients are reduce-scattered every micro-batch
 * (a ZeRO-3 rank keeps only its shard).
 *
 * Llama 2 70B has 80 layers of W = 2 h^2 + 2 h kv + 3 h f = 0.856 G
 * weight elements in its 7 Linear modules (h 8192, kv 1024, f 28672), so
 * only a layer used last is within the reuse distance of its next use
 * (two layers apart already take 2 W = 1.7e9 > 1e9 elements): the last
 * layer is not gathered again at the start of backward, and the first
 * layer is not gathered again at the start of the next micro-batch's
 * forward. Over M micro-batches that is M L - (M - 1) forward gathers
 * and M (L - 1) backward ones, 2 M L - 2 M + 1 layers of W elements.
 * A ring all-gather of S bytes over d ranks sends S (d - 1) / d from
 * each rank, as does a reduce-scatter of the gradients, M times the
 * whole model's P parameters (16-bit gradients here). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build_transformer.h"
#include "diag.h"
#include "inputs.h"
#include "plan.h"
#include "program.h"
#include "stack.h"
#include "testutil.h"

#define H 8192.0
#define KV 1024.0
#define F 28672.0
#define L 80.0
#define V 32000.0

static json_t *run_zero_with(int zero, int nodes, int dp, int global_batch, int seq, const char *more);

/* more: further keys of the parallel object (with a leading comma), then
 * further top-level keys (text after "|"), or NULL. */
static json_t *run_zero3_with(int nodes, int dp, int global_batch, int seq, const char *more)
{
	return run_zero_with(3, nodes, dp, global_batch, seq, more);
}

/* run_zero3_with() at ZeRO stage zero. */
static json_t *run_zero_with(int zero, int nodes, int dp, int global_batch, int seq, const char *more)
{
	char *dir = tmp_dir(), text[2048], args[2048], *err = NULL, par[256] = "", top[512] = "";
	if (more) {
		const char *bar = strchr(more, '|');
		snprintf(par, sizeof(par), "%.*s", bar ? (int)(bar - more) : (int)strlen(more), more);
		snprintf(top, sizeof(top), "%s", bar ? bar + 1 : "");
	}
	snprintf(text, sizeof(text),
		 "{ \"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\","
		 " \"model\": \"%s\", \"topology\": \"%s\", \"nodes\": %d, \"framework\": \"deepspeed\","
		 " \"parallel\": { \"dp\": %d, \"zero\": %d%s },"
		 " \"training\": { \"seq_len\": %d, \"global_batch\": %d, \"micro_batch\": 1,"
		 " \"precision\": \"bf16\", \"grad_reduce_dtype\": \"bf16\" }%s }\n",
		 src_path("models/zoo/llama2-70b.json"), src_path("topologies/dgx-h100.json"), nodes,
		 dp, zero, par, seq, global_batch, top);
	char *path = write_file(dir, "z3.json", text);
	snprintf(args, sizeof(args), "run '%s' --out '%s/o' --quiet", path, dir);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err ? err : "");
	char out[1100];
	snprintf(out, sizeof(out), "%s/o", dir);
	json_t *r = load_report(out);
	cr_assert(r);
	free(err);
	free(path);
	free(dir);
	return r;
}

static json_t *run_zero3(int nodes, int dp, int global_batch, int seq)
{
	return run_zero3_with(nodes, dp, global_batch, seq, NULL);
}

static void expect_closed_form(json_t *r, int dp, double M)
{
	double W = 2 * H * H + 2 * H * KV + 3 * H * F;
	double P = L * (W + 2 * H) + 2 * V * H + H;  /* + norms, embedding, head, final norm */
	double ring = (dp - 1.0) / dp;
	double gathers = 2 * M * L - 2 * M + 1;
	double param = gathers * W * 2 * ring, grads = M * P * 2 * ring;
	double got_p = jnum(r, "communication/bytes_per_gpu/param");
	double got_g = jnum(r, "communication/bytes_per_gpu/dp");
	cr_expect_lt(fabs(got_p / param - 1), 1e-9, "parameters: %.17g vs %.17g", got_p, param);
	cr_expect_lt(fabs(got_g / grads - 1), 1e-9, "gradients: %.17g vs %.17g", got_g, grads);
}

Test(zero3, deepspeed_bytes_per_gpu_match_the_closed_form)
{
	/* 16 GPUs, 2 micro-batches: 2 x 2 x 80 - 4 + 1 = 317 layer gathers */
	json_t *r = run_zero3(2, 16, 32, 4096);
	expect_closed_form(r, 16, 2);
	json_decref(r);
	/* 1,024 GPUs, one micro-batch: 159 layer gathers */
	r = run_zero3(128, 1024, 1024, 4096);
	expect_closed_form(r, 1024, 1);
	json_decref(r);
}

/* Hybrid sharding (MiCS), 32 GPUs in shard groups of g = 8 (a node), r =
 * 4 replicas, one micro-batch, ring collectives: each layer gather moves
 * (g - 1) / g of the layer within the shard group; the gradients of P
 * parameters (2 bytes) are reduce-scattered within it, (g - 1) / g x 2 P,
 * and each rank's shard of 2 P / g all-reduced across the replicas,
 * 2 (r - 1) / r x 2 P / g. */
Test(zero3, hsdp_bytes_per_gpu_match_the_closed_form)
{
	double g = 8, rr = 4, W = 2 * H * H + 2 * H * KV + 3 * H * F;
	double P = L * (W + 2 * H) + 2 * V * H + H;
	json_t *r = run_zero3_with(4, 32, 32, 4096, ", \"shard_group\": 8|, \"communication\": "
				   "{ \"algorithm\": \"ring\" }");
	double param = (2 * L - 1) * W * 2 * (g - 1) / g;
	double grads = P * 2 * (g - 1) / g + 2 * (rr - 1) / rr * P * 2 / g;
	double got_p = jnum(r, "communication/bytes_per_gpu/param");
	double got_g = jnum(r, "communication/bytes_per_gpu/dp");
	cr_expect_lt(fabs(got_p / param - 1), 1e-9, "parameters: %.17g vs %.17g", got_p, param);
	cr_expect_lt(fabs(got_g / grads - 1), 1e-9, "gradients: %.17g vs %.17g", got_g, grads);
	/* folded (one replica simulated) as every rank simulated */
	json_t *u = run_zero3_with(4, 32, 32, 4096, ", \"shard_group\": 8|, \"communication\": "
				   "{ \"algorithm\": \"ring\" }, \"simulation\": { \"fold\": \"off\" }");
	double tf = jnum(r, "summary/iteration_time_s"), tu = jnum(u, "summary/iteration_time_s");
	cr_expect_lt(fabs(tf / tu - 1), 1e-9, "folded %.17g s, unfolded %.17g s", tf, tu);
	json_decref(u);
	json_decref(r);
}

/* ZeRO-1 over shard groups of g = 8 (r = 4 replicas, ring): the
 * gradients reduce-scattered in the group, (g - 1) / g x 2 P, the shard
 * all-reduced across, 2 (r - 1) / r x 2 P / g, and after the step the
 * updated 16-bit parameters all-gathered in the group, (g - 1) / g x 2 P;
 * no parameter gathers in the passes. */
Test(zero3, hsdp_zero1_bytes_per_gpu_match_the_closed_form)
{
	double g = 8, rr = 4, W = 2 * H * H + 2 * H * KV + 3 * H * F;
	double P = L * (W + 2 * H) + 2 * V * H + H;
	json_t *r = run_zero_with(1, 4, 32, 32, 4096, ", \"shard_group\": 8|, \"communication\": "
				  "{ \"algorithm\": \"ring\" }");
	double want = P * 2 * (g - 1) / g + 2 * (rr - 1) / rr * P * 2 / g + P * 2 * (g - 1) / g;
	double got = jnum(r, "communication/bytes_per_gpu/dp");
	cr_expect_lt(fabs(got / want - 1), 1e-9, "dp: %.17g vs %.17g", got, want);
	cr_expect_eq(jnum(r, "communication/bytes_per_gpu/param"), 0);
	json_decref(r);
}

/* A shard group of the whole dp x cp group is plain ZeRO-3: the report
 * byte for byte, less the file's path and the simulator's wall times. */
static char *report_but_path_and_wall(json_t *r)
{
	json_object_del(json_object_get(r, "scenario"), "path");
	json_object_del(json_object_get(r, "simulation"), "wall_s");
	json_object_del(json_object_get(r, "simulation"), "platform_s");
	return json_dumps(r, JSON_INDENT(2));
}

Test(zero3, shard_group_of_all_ranks_is_the_same_report)
{
	json_t *r1 = run_zero3_with(2, 16, 16, 4096, ", \"shard_group\": 16");
	json_t *r2 = run_zero3_with(2, 16, 16, 4096, NULL);
	char *a = report_but_path_and_wall(r1), *b = report_but_path_and_wall(r2);
	cr_assert(a && b);
	cr_expect_str_eq(a, b);
	free(a);
	free(b);
	json_decref(r1);
	json_decref(r2);
}

/* At 1,024 GPUs and 1,024 tokens per GPU the gathers and reduce-scatters
 * cannot hide behind compute: a DGX H100 node receives and sends through
 * 8 NICs of 400 Gb/s, so a rank's bytes take at least bytes / (8 x 50
 * GB/s) (a ring whose 8 channels each cross nodes through their own NIC),
 * and whatever of that exceeds the compute is exposed; the 1,120
 * per-tensor collectives over a 1,024-rank ring add their latency. */
Test(zero3, traffic_that_cannot_hide_is_exposed_at_1024_gpus)
{
	json_t *r = run_zero3(128, 1024, 1024, 1024);
	double bytes = jnum(r, "communication/bytes_per_gpu/param") +
		       jnum(r, "communication/bytes_per_gpu/dp");
	double compute = jnum(r, "breakdown/mean/compute_s");
	double exposed = jnum(r, "breakdown/mean/exposed_comm_s");
	double it = jnum(r, "summary/iteration_time_s");
	cr_expect_gt(exposed, bytes / (8 * 50e9) - compute, "exposed %g s, bytes %g, compute %g s",
		     exposed, bytes, compute);
	cr_expect_gt(exposed, 0.5 * it, "exposed %g of %g s", exposed, it);
	cr_expect_gt(exposed, compute, "exposed %g s, compute %g s", exposed, compute);
	json_decref(r);
}

/* FSDP2 (the torchtitan stack) copies the gathered parameters out of the
 * all-gather buffer after every gather, on the compute stream: 2 B read
 * and 2 B written per bf16 element of the layer (stack.c cites
 * _fsdp_collectives.py). Llama 2 7B's layer holds 4 h^2 + 3 h f + 2 h =
 * 202,383,360 elements (h 4096, f 11008), so each copy-out is one
 * element-wise kernel of 4 x that many bytes at the A100's element-wise
 * efficiency (0.85 of 2039 GB/s) plus its 4 us: 0.4711 ms. One
 * micro-batch gathers each of the 32 layers in forward and again in
 * backward: 64 copies on the compute stream, where ZeRO-2 gathers
 * nothing. Before each reduce-scatter the gradients are concatenated into
 * an fp32 buffer (r2 w4 per element) on the reduce-scatter stream. The
 * programs are compared task by task (the simulation would add the
 * slowdown of compute beside the gathers). */
static void build_7b(const char *stack, int zero, struct program *p)
{
	struct diag d;
	diag_init(&d, stderr);
	struct inputs *in = inputs_load(src_path("models/zoo/llama2-7b.json"),
					src_path("topologies/dgx-a100.json"), "roofline", NULL, &d);
	cr_assert(in);
	struct plan pl;
	plan_init(&pl);
	pl.nodes = 1;
	pl.parallel.dp = 8;
	pl.parallel.zero = (enum zero_stage)zero;
	pl.training.seq = 2048;
	pl.training.global_batch = 8;
	pl.training.micro_batch = 1;
	pl.training.grad_dtype = DTYPE_FP32;
	pl.compute.stack = stack_index(stack_find(stack));
	pl.compute.stack_set = true;
	plan_resolve(&pl, in);
	program_init(p);
	cr_assert_eq(build_transformer_program(in, &pl, 0, p, NULL), 0);
	inputs_destroy(in);
	diag_finish(&d);
}

static void stream_sums(const char *stack, int zero, double *compute, double *dp)
{
	struct program p;
	build_7b(stack, zero, &p);
	*compute = *dp = 0;
	for (int i = 0; i < p.n; i++) {
		if (p.t[i].kind != TASK_COMPUTE)
			continue;
		if (p.t[i].stream == STREAM_COMPUTE)
			*compute += p.t[i].time_s;
		else if (p.t[i].stream == STREAM_DP)
			*dp += p.t[i].time_s;
	}
	program_finish(&p);
}

Test(zero3, fsdp2_copies_out_every_gathered_layer)
{
	double el = 4 * 4096.0 * 4096 + 3 * 4096.0 * 11008 + 2 * 4096.0;
	double copy = 4 * el / (2039e9 * 0.85) + 4e-6;
	/* and the root unit's once (the test below) */
	double root = 4 * (2 * 32000.0 * 4096 + 4096) / (2039e9 * 0.85) + 4e-6;
	double c3, d3, c2, d2;
	stream_sums("torchtitan", 3, &c3, &d3);
	stream_sums("torchtitan", 2, &c2, &d2);
	cr_expect(fabs((c3 - c2) - 64 * copy - root) < 1e-9 * c3, "ZeRO-3 - ZeRO-2 compute %.9f s, "
		  "expected 64 copies of %.9f s and the root's %.9f s", c3 - c2, copy, root);
	/* the reduce-scatter copy-in: every layer's and the root's gradients, 6 B per element,
	 * in buckets (one launch each): at least the bytes' time */
	double layers_el = 32 * el + (2 * 32000.0 * 4096 + 4096);
	cr_expect(d3 >= 6 * layers_el / (2039e9 * 0.85) && d3 < 1.2 * 6 * layers_el / (2039e9 * 0.85)
		  + 1e-3, "reduce-scatter copy-in %.6f s", d3);
	cr_expect_eq(d2, 0);
	/* FSDP1 (llm-foundry) gathers into its flat parameter in place */
	double f3, e3, f2, e2;
	stream_sums("llm-foundry", 3, &f3, &e3);
	stream_sums("llm-foundry", 2, &f2, &e2);
	cr_expect(fabs(f3 - f2) < 1e-12 * f3, "llm-foundry ZeRO-3 - ZeRO-2: %.9f s", f3 - f2);
	cr_expect_eq(e3, 0);
}

/* FSDP1's reduce-scatter hook as the benchmark's torch 2.0 runs it
 * (stack.c, llm-foundry-triton): the unsharded gradient divided before
 * the collective and the shard after, r4 w4 of fp32 per element of the
 * gradient and of its 1/8 shard, on the reduce stream: Llama 2 7B's
 * 6,738,415,616 gradients at 8 x 9/8 = 9 B each over the A100's
 * element-wise rate (0.85 of 2039 GB/s), plus one launch per bucket;
 * ZeRO-2 divides the same way, ZeRO-0 (NO_SHARD's all-reduce) the whole
 * gradient twice, 16 B. */
Test(zero3, fsdp1_divides_every_reduced_gradient)
{
	double P = 6738415616.0, div = 9 * P / (2039e9 * 0.85);
	double c3, d3, c2, d2;
	stream_sums("llm-foundry-triton", 3, &c3, &d3);
	stream_sums("llm-foundry-triton", 2, &c2, &d2);
	cr_log_info("FSDP1 divides: %.6f s (ZeRO-3), %.6f s (ZeRO-2), bytes' time %.6f s", d3, d2, div);
	cr_expect(d3 >= div && d3 < div + 1e-3, "FSDP1 divides %.6f s, expected %.6f s + launches",
		  d3, div);
	cr_expect(fabs(d2 - d3) < 1e-9 * d3, "ZeRO-2 %.9f s vs ZeRO-3 %.9f s", d2, d3);
	/* NO_SHARD: the post-divide on the whole all-reduced gradient, 16 B */
	double c0, d0;
	stream_sums("llm-foundry-triton", 0, &c0, &d0);
	cr_expect(d0 >= 16 * P / (2039e9 * 0.85) && d0 < 16 * P / (2039e9 * 0.85) + 1e-3,
		  "NO_SHARD divides %.6f s", d0);
}

/* FSDP2's root unit (torchtitan: fully_shard(model) over the layers):
 * Llama 2 7B's embedding and output layer, 32000 x 4096 each, and the
 * final norm's 4096: R = 262,148,096 elements. Its all-gather, 2 R bytes
 * of bf16, is the first parameter gather of the step, ahead of the 32
 * layers' forward and 32 backward gathers (the root is not resharded
 * after forward: no second one), and its copy-out (4 R bytes at 0.85 of
 * 2039 GB/s plus 4 us) the first compute task; its gradients, 4 R bytes
 * in fp32, are reduce-scattered last, after the embedding's backward
 * (the root's final callback). FSDP1 (llm-foundry) gathers the layers
 * only. */
Test(zero3, fsdp2_gathers_the_root_unit_first_and_reduces_it_last)
{
	double R = 2 * 32000.0 * 4096 + 4096;
	double layer = 2 * (4 * 4096.0 * 4096 + 3 * 4096.0 * 11008 + 2 * 4096.0);
	struct program p;
	build_7b("torchtitan", 3, &p);
	int gathers = 0, first_compute = -1, last_rs = -1, last_compute = -1;
	for (int i = 0; i < p.n; i++) {
		const struct task *t = &p.t[i];
		if (t->kind == TASK_COLL && t->stream == STREAM_PARAM) {
			cr_expect_float_eq(t->bytes, gathers == 0 ? 2 * R : layer, 1e-9 * layer,
					   "gather %d: %.17g B", gathers, t->bytes);
			gathers++;
		}
		if (t->kind == TASK_COLL && t->stream == STREAM_DP)
			last_rs = i;
		if (t->kind == TASK_COMPUTE && t->stream == STREAM_COMPUTE && t->cat != CAT_OPTIMIZER) {
			if (first_compute < 0)
				first_compute = i;
			last_compute = i;
		}
	}
	cr_expect_eq(gathers, 1 + 64);
	cr_assert(first_compute >= 0 && last_rs >= 0);
	cr_expect_float_eq(p.t[first_compute].time_s, 4 * R / (2039e9 * 0.85) + 4e-6, 1e-9,
			   "root copy-out %.12f s", p.t[first_compute].time_s);
	cr_expect_float_eq(p.t[last_rs].bytes, 4 * R, 1e-9 * R, "last reduce-scatter %.17g B",
			   p.t[last_rs].bytes);
	cr_expect_gt(last_rs, last_compute, "the root's reduce-scatter follows the last backward");
	program_finish(&p);
	build_7b("llm-foundry", 3, &p);
	gathers = 0;
	for (int i = 0; i < p.n; i++)
		if (p.t[i].kind == TASK_COLL && p.t[i].stream == STREAM_PARAM) {
			cr_expect_float_eq(p.t[i].bytes, layer, 1e-9 * layer, "FSDP1 gather %d", gathers);
			gathers++;
		}
	cr_expect_eq(gathers, 64);
	program_finish(&p);
}
