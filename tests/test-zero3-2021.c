/* test-zero3-2021: ZeRO-3 as DeepSpeed v0.4 ran it (the stack
 * deepspeed-zero3-2021, framework deepspeed@0.4; models/stack_deepspeed.h
 * cites stage3.py and partition_parameters.py at v0.4.0), worked by hand
 * against the simulator.
 *
 * Llama 2 70B (h 8192, kv 1024, f 28672, 80 layers, vocab 32000) has 7
 * weight tensors per layer: q and o of h^2 elements, k and v of h kv,
 * gate, up and down of h f. Over d ranks DeepSpeed pads each to
 * ceil(n / d) d elements (partition_parameters.py _aligned_size) and
 * all-gathers the padded tensor, one all-gather per tensor, in forward
 * and again in backward. A tensor is kept from the forward's last layer
 * for the backward's first when its reuse distance, the elements of the
 * tensors used between (stage3.py _distance_in_numel: those after it in
 * forward, then the same in backward), is under max_reuse_distance 1e9:
 * down (0), up (2 x 235 M) and gate (4 x 235 M = 940 M) are; o (1.41 G),
 * v, k and q are gathered again. A micro-batch gathers 159 x 7 + 4 =
 * 1,117 tensors. A ring all-gather of S bytes sends S (d - 1) / d from
 * each rank.
 *
 * Gradients (fp16, 2 B) are all-reduced, not reduce-scattered
 * (contiguous_gradients off: buffered_reduce_fallback), in buckets of
 * reduce_bucket_size 5e8 elements: the head's 262 M gradients wait in the
 * bucket for the last layer's 856 M, past 5e8, then each layer fills one
 * past it and the embedding's go in the last flush: L + 1 = 81
 * all-reduces of 2 P bytes in all, each sending 2 S (d - 1) / d per rank. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build_transformer.h"
#include "coll.h"
#include "framework.h"
#include "inputs.h"
#include "plan.h"
#include "program.h"
#include "stack.h"
#include "testutil.h"
#include "topology.h"

#define H 8192.0
#define KV 1024.0
#define F 28672.0
#define L 80.0
#define V 32000.0

/* The elements of Llama 2 70B's 7 weight tensors padded over d ranks. */
static void padded(double d, double out[7])
{
	double n[7] = { H * H, H * KV, H * KV, H * H, H * F, H * F, F * H };
	for (int i = 0; i < 7; i++)
		out[i] = ceil(n[i] / d) * d;
}

static double params_total(void)
{
	double W = 2 * H * H + 2 * H * KV + 3 * H * F;
	return L * (W + 2 * H) + 2 * V * H + H;
}

/* The program of stage 0 of a plan of model on nodes x 8 A100s, one
 * micro-batch per rank, framework fw, fp16; full recomputation if asked,
 * the host's backward issue time host_bwd_us where not negative. */
static void build_plan(const char *model, const char *fw, int nodes, bool full_recompute,
		       double host_bwd_us, struct program *p, struct inputs **inp)
{
	struct inputs *in = load_inputs(src_path(model), "topologies/dgx-a100.json");
	struct plan pl;
	plan_init(&pl);
	bool known;
	pl.framework = framework_index(framework_find(fw, &known));
	cr_assert_geq(pl.framework, 0);
	pl.nodes = nodes;
	pl.parallel.dp = 8 * nodes;
	pl.parallel.zero = ZERO_3;
	pl.given |= PLAN_GIVEN_ZERO;
	if (full_recompute)
		pl.parallel.recompute = RECOMPUTE_FULL;
	pl.training.seq = 2048;
	pl.training.global_batch = 8 * nodes;
	pl.training.micro_batch = 1;
	pl.training.precision = DTYPE_FP16;
	if (host_bwd_us >= 0)
		pl.compute.host_issue_us[1] = host_bwd_us;
	plan_resolve(&pl, in);
	program_init(p);
	cr_assert_eq(build_transformer_program(in, &pl, 0, p, NULL), 0);
	*inp = in;
}

/* The same for Llama 2 70B, the plan's defaults otherwise. */
static void build_70b(const char *fw, int nodes, struct program *p, struct inputs **inp)
{
	build_plan("models/zoo/llama2-70b.json", fw, nodes, false, -1, p, inp);
}

/* 24 ranks (3 nodes): every tensor's size is off a multiple of 24, so
 * the gathers carry the padding. */
Test(zero3_2021, gathers_and_reductions_per_iteration_match_the_closed_form)
{
	struct program p;
	struct inputs *in;
	build_70b("deepspeed@0.4", 3, &p, &in);
	double pad[7], ag_bytes = 0, ar_bytes = 0, rs = 0;
	padded(24, pad);
	int ag = 0, ar = 0;
	for (int i = 0; i < p.n; i++) {
		const struct task *t = &p.t[i];
		if (t->kind != TASK_COLL)
			continue;
		if (t->stream == STREAM_PARAM && t->op == COLL_ALLGATHER) {
			ag += t->count;
			ag_bytes += t->count * t->bytes;
		} else if (t->stream == STREAM_DP && t->op == COLL_ALLREDUCE) {
			ar += t->count;
			ar_bytes += t->count * t->bytes;
		} else if (t->op == COLL_REDUCE_SCATTER) {
			rs++;
		}
	}
	double layer = 0;
	for (int i = 0; i < 7; i++)
		layer += pad[i] * 2;
	/* the last layer's q, k, v and o gathered again (tensors 0-3) */
	double again = 2 * (pad[0] + pad[1] + pad[2] + pad[3]);
	cr_expect_eq(ag, 159 * 7 + 4, "all-gathers: %d", ag);
	cr_expect_lt(fabs(ag_bytes / (159 * layer + again) - 1), 1e-12, "gathered %.17g B", ag_bytes);
	cr_expect_eq(ar, 81, "all-reduces: %d", ar);
	cr_expect_lt(fabs(ar_bytes / (2 * params_total()) - 1), 1e-12, "all-reduced %.17g B", ar_bytes);
	cr_expect_eq(rs, 0);
	program_finish(&p);
	inputs_destroy(in);
}

/* The device synchronize before every gather: each gather's first task
 * (the zeroing and copy-in) waits for the compute task built last before
 * it, so no compute runs beside a gather but a prefetch batch's last
 * (Llama 2 70B's tensors of 8.4 M to 235 M elements and a prefetch of
 * 5e7 make a batch the next tensor, or k, v and o). v0.15's gathers wait
 * for an earlier compute task (its prefetch window). */
static int gathers_after_last_compute(const char *fw, int *gathers)
{
	struct program p;
	struct inputs *in;
	build_70b(fw, 3, &p, &in);
	int n = 0, last = -1;
	*gathers = 0;
	for (int i = 0; i < p.n; i++) {
		const struct task *t = &p.t[i];
		if (t->stream == STREAM_COMPUTE)
			last = i;
		if (t->kind != TASK_COLL || t->stream != STREAM_PARAM)
			continue;
		(*gathers)++;
		const struct task *first = p.t[i - 1].stream == STREAM_PARAM &&
					   p.t[i - 1].kind == TASK_COMPUTE ? &p.t[i - 1] : t;
		for (int k = 0; k < first->ndeps; k++)
			n += p.deps[first->dep0 + k] == last;
	}
	program_finish(&p);
	inputs_destroy(in);
	return n;
}

Test(zero3_2021, every_gather_waits_for_the_device)
{
	int gathers, n = gathers_after_last_compute("deepspeed@0.4", &gathers);
	cr_expect_eq(n, gathers, "%d of %d gathers wait for the last compute", n, gathers);
	n = gathers_after_last_compute("deepspeed", &gathers);
	cr_expect_lt(n, gathers / 2, "v0.15: %d of %d gathers wait for the last compute", n, gathers);
}

/* DeepSpeed v0.15 (framework deepspeed): the same gathers without
 * padding, asynchronous, and gradients reduce-scattered. */
Test(zero3_2021, deepspeed_015_reduce_scatters_and_does_not_pad)
{
	struct program p;
	struct inputs *in;
	build_70b("deepspeed", 3, &p, &in);
	int rs = 0, ar = 0;
	double ag_bytes = 0;
	for (int i = 0; i < p.n; i++) {
		const struct task *t = &p.t[i];
		if (t->kind != TASK_COLL)
			continue;
		rs += t->op == COLL_REDUCE_SCATTER;
		ar += t->op == COLL_ALLREDUCE && t->stream == STREAM_DP;
		if (t->stream == STREAM_PARAM)
			ag_bytes += t->count * t->bytes;
	}
	double W = 2 * H * H + 2 * H * KV + 3 * H * F;
	cr_expect_gt(rs, 0);
	cr_expect_eq(ar, 0);
	cr_expect_lt(fabs(ag_bytes / (159 * W * 2) - 1), 1e-12, "gathered %.17g B", ag_bytes);
	program_finish(&p);
	inputs_destroy(in);
}

/* c10d's copy out of a list all-gather (torch 1.8/1.9 ProcessGroupNCCL::
 * allgather, 00f5dfd5): one copy_ per rank's view, so each gather of a
 * padded elements over d ranks ends with d copies of a / d elements on
 * the NCCL stream. On the GPU: d kernels at the A100 preset's fixed
 * latency (4 us) plus the bytes, r2 w2 per element at 2,039 GB/s x 0.85
 * (gpus/a100-sxm4-80gb.json); on the host: d issues at the stack's
 * backward issue time (TORCH_HOST_ISSUE, 3.6 us); the copy takes the
 * slower. At 24 ranks the GPU's 96 us of launches beat the host's
 * 86.4 us; with a host issue time of 10 us the host's d x 10 us is what
 * the copy takes. */
static void copy_out_times(int nodes, double host_bwd_us, int *n, double *worst)
{
	struct program p;
	struct inputs *in;
	build_plan("models/zoo/llama2-70b.json", "deepspeed@0.4", nodes, false, host_bwd_us, &p, &in);
	double d = 8.0 * nodes, host = 1e-6 * (host_bwd_us >= 0 ? host_bwd_us : 3.6);
	*n = 0;
	*worst = 0;
	for (int i = 0; i + 1 < p.n; i++) {
		const struct task *t = &p.t[i], *out = &p.t[i + 1];
		if (t->kind != TASK_COLL || t->stream != STREAM_PARAM || t->op != COLL_ALLGATHER)
			continue;
		cr_assert_eq(out->kind, TASK_COMPUTE);
		cr_assert_eq(out->stream, STREAM_PARAM);
		double a = t->bytes / 2;
		double gpu = d * 4e-6 + 2 * a * 2 / (2039e9 * 0.85);
		double want = fmax(gpu, d * host);
		*worst = fmax(*worst, fabs(out->time_s / want - 1));
		(*n)++;
	}
	program_finish(&p);
	inputs_destroy(in);
}

Test(zero3_2021, c10d_copies_out_one_view_per_rank)
{
	int n;
	double worst;
	copy_out_times(3, -1, &n, &worst);
	cr_expect_eq(n, 159 * 7 + 4);
	cr_expect_lt(worst, 1e-9, "24 ranks, GPU-bound: worst copy %.3g off the closed form", worst);
	copy_out_times(3, 10, &n, &worst);
	cr_expect_lt(worst, 1e-9, "24 ranks at 10 us per issue, host-bound: worst %.3g off", worst);
	copy_out_times(128, -1, &n, &worst);
	cr_expect_lt(worst, 1e-9, "1,024 ranks: worst copy %.3g off the closed form", worst);
}

/* max_live_parameters (1e9 elements, stage3.py L349 at v0.4.0): the
 * coordinator prefetches only while fewer elements than that are
 * available, the module's own among them once fetched. GPT 530B's
 * Linears hold 3h^2 = 1.26e9 (QKV), h^2 = 0.42e9 (projection) and
 * 4h^2 = 1.68e9 (each MLP) elements: only the projection's module is
 * under the limit, so a pass prefetches one tensor beside the
 * projection's compute (the first MLP's) and gathers the others when
 * their module runs. Per layer: the forward's projection, the
 * recomputation's projection (the layer's last Linear, kept for its
 * backward within max_reuse_distance, is not prefetched across), and the
 * backward's projection (prefetching QKV): 3 of the layer's 11 gathers
 * run beside compute. A gather is counted as prefetched when the
 * compute task after it does not wait for it. */
static int prefetched_gathers(const char *model, int *gathers)
{
	struct program p;
	struct inputs *in;
	build_plan(model, "deepspeed@0.4", 3, true, -1, &p, &in);
	int n = 0;
	*gathers = 0;
	for (int i = 0; i + 1 < p.n; i++) {
		if (p.t[i].kind != TASK_COLL || p.t[i].stream != STREAM_PARAM)
			continue;
		(*gathers)++;
		int k = i + 2;
		while (k < p.n && p.t[k].stream != STREAM_COMPUTE)
			k++;
		if (k >= p.n)
			continue;
		bool waits = false;
		for (int e = 0; e < p.t[k].ndeps; e++)
			waits |= p.deps[p.t[k].dep0 + e] == i + 1;
		n += !waits;
	}
	program_finish(&p);
	inputs_destroy(in);
	return n;
}

Test(zero3_2021, no_prefetch_beside_a_module_over_max_live_parameters)
{
	int gathers, n = prefetched_gathers("models/zoo/megatron/gpt-530b.json", &gathers);
	cr_expect_eq(gathers, 105 * 11, "gathers: %d", gathers);
	cr_expect_eq(n, 105 * 3, "prefetched beside compute: %d of %d", n, gathers);
}

/* At 1,024 GPUs (128 DGX A100, 8 HDR NICs each) every gather runs alone
 * on the network (behind the device synchronize; the gradient
 * all-reduces overlap only a batch's last gather), so the time a rank
 * spends in them is the sum of each one's uncontended time, the fabric's
 * closed form (fabric/coll_time.c: NCCL's latency and transfer for the
 * pair NCCL picks, or the most loaded link), plus c10d's launch cost per
 * call (framework.c, 75.7 us); the bandwidth each GPU gets per gather of
 * S bytes is S (d - 1) / d over its time: 8.1 GB/s for k and v (16.8 MB,
 * latency-bound), 43.8 GB/s for q and o (134 MB), 91.0 GB/s for the MLP's
 * (470 MB). Llama 2 70B's three tensor sizes (h^2, h kv, h f, divisible
 * by 1,024: no padding), 2,048 tokens per GPU. Under v0.15's
 * asynchronous prefetch the gathers share the network with each other
 * and the reduce-scatters: 11 % more time in them. */
Test(zero3_2021, each_gpu_gets_the_closed_form_bandwidth_at_1024_gpus, .timeout = 600)
{
	struct program p;
	struct inputs *in;
	build_70b("deepspeed@0.4", 128, &p, &in);
	program_finish(&p);
	static int ranks[1024];
	for (int i = 0; i < 1024; i++)
		ranks[i] = i;
	double size[3] = { H * H, H * KV, H * F }, count[3] = { 2, 2, 3 }, want_bw[3] = { 43.78, 8.11, 90.99 };
	double sum = 0, bytes = 0;
	for (int k = 0; k < 3; k++) {
		struct coll_time ct;
		cr_assert_eq(coll_time_uncontended(inputs_topology(in), "auto", COLL_ALLGATHER, ranks, 1024,
						   2 * size[k], &ct), 0);
		double bw = 2 * size[k] * 1023 / 1024 / ct.ideal_time_s / 1e9;
		cr_expect_lt(fabs(bw - want_bw[k]), 0.01, "gather of %.0f B: %.4f GB/s per GPU", 2 * size[k], bw);
		/* and the last layer's q, o (2 x h^2) and k, v (2 x h kv) again */
		double n = 159 * count[k] + (k < 2 ? 2 : 0);
		sum += n * (ct.ideal_time_s + 75.7e-6);
		bytes += n * 2 * size[k] * 1023 / 1024;
	}
	inputs_destroy(in);

	char *dir = tmp_dir(), text[1024], args[2048], *err = NULL;
	snprintf(text, sizeof(text),
		 "{ \"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\","
		 " \"model\": \"%s\", \"topology\": \"%s\", \"nodes\": 128, \"framework\": \"deepspeed@0.4\","
		 " \"parallel\": { \"dp\": 1024, \"zero\": 3 },"
		 " \"training\": { \"seq_len\": 2048, \"global_batch\": 1024, \"micro_batch\": 1,"
		 " \"precision\": \"fp16\" } }\n",
		 src_path("models/zoo/llama2-70b.json"), src_path("topologies/dgx-a100.json"));
	char *path = write_file(dir, "z3.json", text);
	snprintf(args, sizeof(args), "run '%s' --out '%s/o' --quiet", path, dir);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err ? err : "");
	snprintf(args, sizeof(args), "%s/o", dir);
	json_t *r = load_report(args);
	cr_assert(r);
	double got_bytes = jnum(r, "communication/bytes_per_gpu/param");
	double busy = jnum(r, "breakdown/rank_classes/0/figures/param_comm_s");
	cr_expect_eq(jnum(r, "breakdown/rank_classes/0/figures/param_collectives"), 159 * 7 + 4);
	cr_expect_eq(jnum(r, "breakdown/rank_classes/0/figures/dp_collectives"), 81);
	cr_expect_lt(fabs(got_bytes / bytes - 1), 1e-12, "bytes %.17g vs %.17g", got_bytes, bytes);
	cr_expect_lt(fabs(busy / sum - 1), 0.01, "gathers %.9g s (%.2f GB/s per GPU) vs closed form %.9g s "
		     "(%.2f GB/s)", busy, got_bytes / busy / 1e9, sum, bytes / sum / 1e9);
	json_decref(r);
	free(err);
	free(path);
	free(dir);
}

/* The bare name stays v0.15 (the newest first); 0.4 names its stack. */
Test(zero3_2021, deepspeed_04_is_a_dated_preset)
{
	bool known;
	const struct framework *f = framework_find("deepspeed", &known);
	cr_assert_str_eq(f->version, "0.15");
	f = framework_find("deepspeed@0.4", &known);
	cr_assert_not_null(f);
	cr_assert_str_eq(f->stack, "deepspeed-zero3-2021");
	cr_assert_eq(f->gather, GATHER_PER_TENSOR);
	cr_assert_float_eq(f->prefetch_elements, 5e7, 1);
	cr_assert_float_eq(framework_bucket_bytes(f, 1024, 2), 5e8 * 2, 1);
	cr_assert(stack_find("deepspeed-zero3-2021")->ds_zero3_2021);
	cr_assert(!stack_find("deepspeed")->ds_zero3_2021);
}

/* The validation family zero3-2021-a100 (Narayanan et al. 2021, Table 2,
 * ZeRO-3 without model parallelism): each case's published iteration time
 * is the paper's eq. (3), F = 96 B s l h^2 (1 + s / 6h + V / 16 l h), over
 * its GPUs times the table's TFLOP/s per GPU; the family loads, every case
 * runs on deepspeed@0.4's stack, fits, and its row is printed. */
static const struct {
	const char *name;
	double l, h, batch, gpus, tflops;
} zero3_rows[] = {
	{ "zero3-175b-384gpu", 96, 12288, 1536, 384, 144 },
	{ "zero3-175b-768gpu", 96, 12288, 1536, 768, 88 },
	{ "zero3-175b-1536gpu", 96, 12288, 1536, 1536, 44 },
	{ "zero3-530b-1120gpu", 105, 20480, 2240, 1120, 98 },
	{ "zero3-530b-2240gpu", 105, 20480, 2240, 2240, 48 },
	{ "zero3-530b-640gpu", 105, 20480, 2560, 640, 138 },  /* the starred row */
};

Test(zero3_2021, validation_family_is_the_papers_table_and_runs, .timeout = 300)
{
	const double s = 2048, vocab = 51200;
	int n = (int)(sizeof(zero3_rows) / sizeof(zero3_rows[0]));
	for (int i = 0; i < n; i++) {
		double l = zero3_rows[i].l, h = zero3_rows[i].h, B = zero3_rows[i].batch;
		double flops = 96 * B * s * l * h * h * (1 + s / (6 * h) + vocab / (16 * l * h));
		double want = flops / (zero3_rows[i].gpus * zero3_rows[i].tflops * 1e12);
		char path[512];
		snprintf(path, sizeof(path), "validation/zero3-2021-a100/%s.json", zero3_rows[i].name);
		json_t *c = load_json(src_path(path));
		cr_expect_lt(fabs(jnum(c, "published/iteration_time_s") - want), 0.006, "%s: %.4f s vs eq. 3's %.4f s",
			     path, jnum(c, "published/iteration_time_s"), want);
		cr_expect_str_eq(jstr_at(c, "framework"), "deepspeed@0.4");
		cr_expect_eq(jint_at(c, "parallel/dp"), (long)zero3_rows[i].gpus);
		cr_expect_eq(jint_at(c, "nodes") * 8, (long)zero3_rows[i].gpus);
		cr_expect_eq(jint_at(c, "training/global_batch") / jint_at(c, "training/micro_batch"),
			     (long)zero3_rows[i].gpus, "%s: one micro-batch per GPU", path);
		json_decref(c);
	}
	char args[2048], *out = NULL, *err = NULL;
	snprintf(args, sizeof(args), "validation '%s' -j 2 --quiet", src_path("validation/zero3-2021-a100"));
	cr_assert_eq(run_ddlsim(args, &out, &err), 0, "%s\n%s", out ? out : "", err ? err : "");
	for (int i = 0; i < n; i++)
		cr_expect(strstr(out, zero3_rows[i].name), "%s missing:\n%s", zero3_rows[i].name, out);
	cr_expect(strstr(out, "zero3-2021-a100                   6      0"), "%s", out);
	cr_expect_null(strstr(out, "  NO\n"), "a published run is reported as not fitting:\n%s", out);
	free(out);
	free(err);
}
