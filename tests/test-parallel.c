/* test-parallel: tensor, sequence, pipeline and ZeRO parallelism through
 * the whole path (scenario -> programs -> engine -> report). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/wait.h>
#include <unistd.h>

#include "engine.h"
#include "placement.h"
#include "testutil.h"

/* A 2-layer GPT (h 1024, 16 heads) scenario on one DGX A100, ring
 * collectives (the byte counts below are the ring's). */
static char *tiny(const char *dir, const char *parallel, int gb, int nodes)
{
	char model[1024], text[4096];
	snprintf(model, sizeof(model),
		 "{\"schema\":\"ddlsim.model\",\"schema_version\":\"1.0\",\"name\":\"tiny\",\"source\":\"test\","
		 "\"architecture\":\"decoder_transformer\",\"layers\":2,\"hidden_size\":1024,\"heads\":16,"
		 "\"vocab_size\":32000}");
	char *mp = write_file(dir, "tiny.json", model);
	snprintf(text, sizeof(text),
		 "{\"schema\":\"ddlsim.scenario\",\"schema_version\":\"1.0\",\"model\":\"%s\","
		 "\"topology\":\"%s\",\"nodes\":%d,\"parallel\":{%s},"
		 "\"training\":{\"seq_len\":1024,\"global_batch\":%d,\"micro_batch\":1},"
		 "\"communication\":{\"algorithm\":\"ring\"}}",
		 mp, src_path("topologies/dgx-a100.json"), nodes, parallel, gb);
	return write_file(dir, "s.json", text);
}

static json_t *run(const char *scn, const char *dir)
{
	char args[2048], *err = NULL;
	snprintf(args, sizeof(args), "run %s --out %s/out --quiet --per-rank", scn, dir);
	int rc = run_ddlsim(args, NULL, &err);
	cr_assert_eq(rc, 0, "exit %d: %s", rc, err);
	char out[1100];
	snprintf(out, sizeof(out), "%s/out", dir);
	json_t *r = load_report(out);
	cr_assert_not_null(r);
	return r;
}

/* TP = 2, 2 layers, one micro-batch: forward = embedding all-reduce + 2 per
 * layer + 3 small cross-entropy all-reduces = 8; backward = the LM head's
 * input-gradient all-reduce + 2 per layer = 5; 10 of them move b s h. */
Test(parallel, tp2_two_layers_runs_exactly_the_megatron_collectives)
{
	char *d = tmp_dir();
	json_t *r = run(tiny(d, "\"tp\": 2, \"dp\": 4", 4, 1), d);
	json_t *ranks = json_object_get(json_object_get(r, "breakdown"), "per_rank");
	cr_assert_eq(json_array_size(ranks), 8);
	double tp_bytes = jnum(r, "communication/bytes_per_gpu/tp");
	/* ring all-reduce: each rank sends 2 (t-1)/t N; N = b s h x 2 bytes */
	double N = 1024.0 * 1024 * 2, ce = 1024.0 * 4;
	double want = (1 + 4 + 1 + 4) * 2 * 0.5 * N + 3 * 2 * 0.5 * ce;
	cr_assert_float_eq(tp_bytes, want, 1e-3, "tp bytes %.17g vs %.17g", tp_bytes, want);
	for (int i = 0; i < 8; i++) {
		char key[64];
		snprintf(key, sizeof(key), "breakdown/per_rank/%d/tp_collectives", i);
		cr_assert_eq(jnum(r, key), 13, "rank %d", i);
	}
	/* and with 4 micro-batches, 4 x 13 */
	char *d2 = tmp_dir();
	json_t *r4 = run(tiny(d2, "\"tp\": 2, \"dp\": 4", 16, 1), d2);
	cr_assert_eq(jnum(r4, "breakdown/per_rank/5/tp_collectives"), 52);
	json_decref(r4);
	json_decref(r);
}

/* Megatron: per layer and micro-batch, 2 all-reduces forward and 2
 * backward of b s h elements; full recomputation adds the 2 forward ones. */
Test(parallel, tp_allreduce_volume_per_layer_matches_megatron)
{
	char *d1 = tmp_dir(), *d2 = tmp_dir();
	json_t *a = run(tiny(d1, "\"tp\": 8, \"dp\": 1", 1, 1), d1);
	json_t *b = run(tiny(d2, "\"tp\": 8, \"dp\": 1, \"recompute\": \"full\"", 1, 1), d2);
	double N = 1024.0 * 1024 * 2, per_ar = 2.0 * 7 / 8 * N;
	double extra = jnum(b, "communication/bytes_per_gpu/tp") - jnum(a, "communication/bytes_per_gpu/tp");
	/* 2 layers x 2 recomputed forward all-reduces */
	cr_assert_float_eq(extra, 2 * 2 * per_ar, 1e-3);
	json_decref(a);
	json_decref(b);
}

Test(parallel, sequence_parallel_moves_the_same_bytes_as_allreduce)
{
	char *d1 = tmp_dir(), *d2 = tmp_dir();
	json_t *a = run(tiny(d1, "\"tp\": 4, \"dp\": 2", 2, 1), d1);
	json_t *b = run(tiny(d2, "\"tp\": 4, \"dp\": 2, \"sp\": true", 2, 1), d2);
	/* an all-reduce is a reduce-scatter plus an all-gather (x = (t-1)/t N
	 * each on a ring): per micro-batch, without SP 10 all-reduces = 20x;
	 * with SP forward RS(embedding) + 2 layers x 2 x (AG + RS) + AG(head)
	 * = 10x and backward RS(head) + 2 x 2 x (AG + re-gather AG + RS) +
	 * AG(embedding) = 14x: the 4 weight-gradient re-gathers are the
	 * difference */
	double ar = jnum(a, "communication/bytes_per_gpu/tp");
	double sp = jnum(b, "communication/bytes_per_gpu/tp");
	double N = 1024.0 * 1024 * 2, x = 0.75 * N;
	cr_assert_float_eq(sp - ar, 4 * x, 1e-3, "ar %.17g sp %.17g", ar, sp);
	/* SP shrinks activation memory by t outside the attention core */
	cr_assert_lt(jnum(b, "memory/per_stage/0/activations_per_layer_microbatch_GB"),
		     jnum(a, "memory/per_stage/0/activations_per_layer_microbatch_GB"));
	json_decref(a);
	json_decref(b);
}

Test(parallel, pipeline_bubble_is_measured_and_shrinks_with_microbatches)
{
	char *d1 = tmp_dir(), *d2 = tmp_dir();
	json_t *a = run(tiny(d1, "\"pp\": 2, \"dp\": 4, \"tp\": 1", 8, 1), d1);
	json_t *b = run(tiny(d2, "\"pp\": 2, \"dp\": 4, \"tp\": 1", 64, 1), d2);
	/* the last stage also holds the LM head: it is the bottleneck, and its
	 * wait is the pipeline bubble; stage 0 mostly waits for stage 1's
	 * extra work (imbalance), whatever the number of micro-batches */
	double fa = jnum(a, "breakdown/per_stage/1/bubble_fraction");
	double fb = jnum(b, "breakdown/per_stage/1/bubble_fraction");
	cr_assert_gt(fa, 0);
	cr_assert_lt(fb, fa / 4, "2 micro-batches: %g, 16: %g", fa, fb);
	cr_assert_gt(jnum(a, "breakdown/per_stage/0/bubble_fraction"), 0.4);
	json_decref(a);
	json_decref(b);
}

Test(parallel, placement_groups_follow_the_order)
{
	char *d = tmp_dir();
	json_t *r = run(tiny(d, "\"tp\": 2, \"pp\": 2, \"dp\": 4", 8, 2), d);
	json_t *pl = json_object_get(r, "placement");
	json_t *tpg = json_object_get(pl, "tp_group_of_rank0");
	json_t *dpg = json_object_get(pl, "dp_group_of_rank0");
	json_t *ppg = json_object_get(pl, "pipeline_of_rank0");
	cr_assert_eq(json_integer_value(json_array_get(tpg, 1)), 1);
	cr_assert_eq(json_integer_value(json_array_get(dpg, 1)), 2);
	cr_assert_eq(json_integer_value(json_array_get(dpg, 3)), 6);
	cr_assert_eq(json_integer_value(json_array_get(ppg, 1)), 8);
	/* TP and DP stay in node 0, the pipeline crosses to node 1 */
	json_t *links = json_object_get(pl, "links_crossed");
	cr_assert_str_eq(json_string_value(json_array_get(json_object_get(links, "tp"), 0)), "nvswitch");
	cr_assert_str_eq(json_string_value(json_array_get(json_object_get(links, "dp"), 0)), "nvswitch");
	cr_assert_str_eq(json_string_value(json_array_get(json_object_get(links, "pp"), 0)), "nic/fabric");
	json_decref(r);
}

/* Hybrid sharding's groups (placement.h): tp 2, cp 2, dp 4 in the order
 * tp,cp,dp,pp (strides 1, 2, 4); the dp x cp list of rank 0 is k = 2 d +
 * c, ranks 4 d + 2 c. Shard groups of 4 are its consecutive slices, the
 * replicate groups every 4th entry. */
Test(parallel, shard_and_replicate_groups_slice_the_dp_cp_list)
{
	struct placement pl;
	int m[16];
	cr_assert_eq(placement_init_cp(&pl, 2, 2, 4, 1, "tp,cp,dp,pp"), 0);
	cr_assert_eq(placement_set_shard(&pl, 3), -1);
	cr_assert_eq(placement_set_shard(&pl, 4), 0);
	cr_assert_eq(placement_group_size(&pl, GROUP_DPS), 4);
	cr_assert_eq(placement_group_size(&pl, GROUP_DPR), 2);
	int want_s[] = { 0, 2, 4, 6 }, want_r0[] = { 0, 8 }, want_r2[] = { 2, 10 }, want_s9[] = { 9, 11, 13, 15 };
	cr_assert_eq(placement_group(&pl, GROUP_DPS, 2, m), 4);
	for (int i = 0; i < 4; i++)
		cr_expect_eq(m[i], want_s[i], "shard group of rank 2, member %d: %d", i, m[i]);
	cr_assert_eq(placement_group(&pl, GROUP_DPS, 9, m), 4);
	for (int i = 0; i < 4; i++)
		cr_expect_eq(m[i], want_s9[i], "shard group of rank 9, member %d: %d", i, m[i]);
	cr_assert_eq(placement_group(&pl, GROUP_DPR, 0, m), 2);
	for (int i = 0; i < 2; i++)
		cr_expect_eq(m[i], want_r0[i]);
	cr_assert_eq(placement_group(&pl, GROUP_DPR, 2, m), 2);
	for (int i = 0; i < 2; i++)
		cr_expect_eq(m[i], want_r2[i]);
	/* the whole group: no split */
	cr_assert_eq(placement_set_shard(&pl, 8), 0);
	cr_expect_eq(placement_group_size(&pl, GROUP_DPS), 8);
	cr_expect_eq(placement_group(&pl, GROUP_DPR, 5, m), 1);
	cr_expect_eq(m[0], 5);
}

static double state_GB(json_t *r)
{
	return jnum(r, "memory/per_stage/0/weights_GB") + jnum(r, "memory/per_stage/0/gradients_GB") +
	       jnum(r, "memory/per_stage/0/optimizer_GB");
}

/* ZeRO stages shrink model states as the paper says, and change what is
 * communicated: ZeRO-1/2 add a parameter all-gather after the step,
 * ZeRO-3 gathers parameters per layer in forward and backward. */
Test(parallel, zero_stages_trade_memory_for_communication)
{
	char *dirs[4];
	json_t *r[4];
	for (int z = 0; z < 4; z++) {
		char par[128];
		dirs[z] = tmp_dir();
		snprintf(par, sizeof(par), "\"dp\": 8, \"zero\": %d", z);
		r[z] = run(tiny(dirs[z], par, 8, 1), dirs[z]);
	}
	for (int z = 1; z < 4; z++)
		cr_assert_lt(state_GB(r[z]), state_GB(r[z - 1]), "ZeRO-%d", z);
	/* params P: 2P + 2P + 12P at stage 0; 2P + 2P + 12P/8 at stage 1 */
	double s0 = state_GB(r[0]), s1 = state_GB(r[1]);
	cr_assert_float_eq(s1 / s0, (4 + 12.0 / 8) / 16, 1e-9);
	cr_assert_float_eq(state_GB(r[3]) / s0, 1.0 / 8, 1e-9);
	cr_assert_eq(jnum(r[0], "communication/bytes_per_gpu/param"), 0);
	cr_assert_gt(jnum(r[3], "communication/bytes_per_gpu/param"), 0);
	/* ZeRO-1 sends reduce-scatter + all-gather = the all-reduce's bytes */
	cr_assert_float_eq(jnum(r[1], "communication/bytes_per_gpu/dp"),
			   jnum(r[0], "communication/bytes_per_gpu/dp"), 1e-3);
	for (int z = 0; z < 4; z++)
		json_decref(r[z]);
}

Test(parallel, full_recompute_costs_a_forward_and_saves_activations)
{
	char *d1 = tmp_dir(), *d2 = tmp_dir();
	json_t *a = run(tiny(d1, "\"dp\": 8", 8, 1), d1);
	json_t *b = run(tiny(d2, "\"dp\": 8, \"recompute\": \"full\"", 8, 1), d2);
	cr_assert_gt(jnum(b, "summary/iteration_time_s"), jnum(a, "summary/iteration_time_s"));
	cr_assert_lt(jnum(b, "memory/per_stage/0/activations_GB"), jnum(a, "memory/per_stage/0/activations_GB"));
	cr_assert_gt(jnum(b, "breakdown/per_rank/0/recompute_s"), 0);
	/* hardware FLOPs count the recomputed forward, model FLOPs do not */
	cr_assert_float_eq(jnum(b, "summary/model_flops_per_iteration"),
			   jnum(a, "summary/model_flops_per_iteration"), 1);
	cr_assert_gt(jnum(b, "summary/hardware_flops_per_iteration"),
		     jnum(b, "summary/model_flops_per_iteration"));
	json_decref(a);
	json_decref(b);
}

/* torchtitan's selective layer policy on the 2-layer model: every layer
 * (n = 1) is full recompute, n = 3 (above the layers) none, in time,
 * FLOPs and memory; n = 2 recomputes the second layer only: half of
 * full's recomputed FLOPs, its activations the mean of none's and full's,
 * and about half full's recompute time (not exactly: the two layers'
 * recomputed forwards run beside different data-parallel traffic, and
 * the clock drops under communication: 0.504 of it). */
Test(parallel, recompute_every_n_layers_recomputes_only_those_layers)
{
	static const char *const par[] = {
		"\"dp\": 8", "\"dp\": 8, \"recompute\": \"full\"",
		"\"dp\": 8, \"recompute\": \"full\", \"recompute_every_n_layers\": 1",
		"\"dp\": 8, \"recompute\": \"full\", \"recompute_every_n_layers\": 3",
		"\"dp\": 8, \"recompute\": \"full\", \"recompute_every_n_layers\": 2",
	};
	static const char *const fig[] = {
		"summary/iteration_time_s", "breakdown/per_rank/0/recompute_s", "summary/hardware_flops_per_iteration",
		"memory/per_stage/0/activations_GB", "memory/per_stage/0/total_GB",
	};
	json_t *r[5];
	for (int i = 0; i < 5; i++) {
		char *d = tmp_dir();
		r[i] = run(tiny(d, par[i], 8, 1), d);
	}
	for (size_t k = 0; k < sizeof(fig) / sizeof(fig[0]); k++) {
		double none = jnum(r[0], fig[k]), full = jnum(r[1], fig[k]);
		cr_assert_float_eq(jnum(r[2], fig[k]), full, 1e-9 * fabs(full), "%s", fig[k]);
		cr_assert_float_eq(jnum(r[3], fig[k]), none, 1e-9 * fabs(none), "%s", fig[k]);
	}
	double rn = jnum(r[0], "summary/hardware_flops_per_iteration");
	double rf = jnum(r[1], "summary/hardware_flops_per_iteration");
	cr_assert_float_eq(jnum(r[4], "summary/hardware_flops_per_iteration"), (rn + rf) / 2, 1e-9 * rf);
	double an = jnum(r[0], "memory/per_stage/0/activations_GB"), af = jnum(r[1], "memory/per_stage/0/activations_GB");
	cr_assert_float_eq(jnum(r[4], "memory/per_stage/0/activations_GB"), (an + af) / 2, 1e-9 * an);
	double re = jnum(r[4], "breakdown/per_rank/0/recompute_s"), rfull = jnum(r[1], "breakdown/per_rank/0/recompute_s");
	cr_assert_gt(re, 0.4 * rfull, "one of the two layers recomputed: %.6g s against %.6g", re, rfull);
	cr_assert_lt(re, 0.6 * rfull, "one of the two layers recomputed: %.6g s against %.6g", re, rfull);
	cr_assert_gt(jnum(r[4], "summary/iteration_time_s"), jnum(r[0], "summary/iteration_time_s"));
	cr_assert_lt(jnum(r[4], "summary/iteration_time_s"), jnum(r[1], "summary/iteration_time_s"));
	cr_assert_eq(jnum(r[4], "scenario/parallel/recompute_every_n_layers"), 2);
	cr_assert_eq(jnum(r[1], "scenario/parallel/recompute_every_n_layers"), 1);
	for (int i = 0; i < 5; i++)
		json_decref(r[i]);
}

Test(parallel, plan_that_does_not_fit_names_the_stage_and_shortfall)
{
	char *d = tmp_dir();
	char text[2048];
	snprintf(text, sizeof(text),
		 "{\"schema\":\"ddlsim.scenario\",\"schema_version\":\"1.0\",\"model\":\"%s\","
		 "\"topology\":\"%s\",\"nodes\":1,\"parallel\":{\"tp\":8,\"pp\":1},"
		 "\"training\":{\"seq_len\":4096,\"global_batch\":8,\"micro_batch\":1}}",
		 src_path("models/zoo/llama2-70b.json"), src_path("topologies/dgx-a100.json"));
	json_t *r = run(write_file(d, "s.json", text), d);
	json_t *mem = json_object_get(r, "memory");
	cr_assert(json_is_false(json_object_get(mem, "fits")));
	/* 70B x 16 bytes / 8 = 138 GB of model states per GPU */
	cr_assert_gt(jnum(r, "memory/shortfall_GB"), 50);
	cr_assert(strstr(json_string_value(json_object_get(mem, "verdict")), "stage 0"));
	json_decref(r);
}

/* ---- context parallelism: the programs the builder writes ---------- */

#include "gpu.h"
#include "inputs.h"
#include "placement.h"
#include "simulate.h"

/* Inputs of the tiny model (h 1024, 16 heads of 64, no GQA) on DGX A100s. */
static struct inputs *tiny_inputs(const char *dir)
{
	char model[1024];
	snprintf(model, sizeof(model),
		 "{\"schema\":\"ddlsim.model\",\"schema_version\":\"1.0\",\"name\":\"tiny\",\"source\":\"test\","
		 "\"architecture\":\"decoder_transformer\",\"layers\":2,\"hidden_size\":1024,\"heads\":16,"
		 "\"kv_heads\":4,\"vocab_size\":32000}");
	char *path = write_file(dir, "tiny.json", model);
	struct inputs *in = load_inputs(path, "topologies/dgx-a100.json");
	free(path);
	return in;
}

/* Tasks of kind op on the CP stream of stage 0's program, and their bytes. */
static int cp_tasks(struct inputs *in, const struct plan *pl, enum coll_op op, double *bytes)
{
	struct program p;
	program_init(&p);
	cr_assert_eq(simulate_build_program(in, pl, 0, &p, NULL), 0);
	int n = 0;
	*bytes = 0;
	for (int i = 0; i < p.n; i++) {
		const struct task *t = &p.t[i];
		if (t->stream != STREAM_CP)
			continue;
		cr_assert_eq(t->kind, TASK_COLL);
		cr_assert_eq(t->group, GROUP_CP);
		cr_assert_eq(t->cat, CAT_CP_COMM);
		cr_assert_eq(t->op, op, "task %d: %s", i, coll_op_name(t->op));
		n++;
		*bytes += t->bytes * t->count;
	}
	program_finish(&p);
	return n;
}

static struct plan cp_plan(struct inputs *in, int cp, enum cp_comm comm, int tp, long mbs)
{
	struct plan pl;
	plan_init(&pl);
	pl.nodes = 1;
	pl.parallel.tp = tp;
	pl.parallel.sp = tp > 1;
	pl.parallel.cp = cp;
	pl.parallel.cp_comm = comm;
	pl.training.seq = 1024;
	pl.training.global_batch = mbs * (8 / (tp * cp));
	pl.training.attention = ATTN_FLASH;
	pl.training.attention_set = true;
	plan_resolve(&pl, in);
	struct diag dg;
	diag_init(&dg, stderr);
	cr_assert_eq(plan_check(&pl, in, "t", &dg), 0, "%s", diag_text(&dg));
	diag_finish(&dg);
	return pl;
}

/* The ring: cp - 1 K/V exchanges per attention forward, cp - 1 of K/V plus
 * dK/dV per backward, per layer and micro-batch. One K/V block of a rank
 * is 2 x (kv heads / tp) x head dim x b x s / cp x 2 bytes (bf16). */
Test(parallel, cp_ring_has_cp_minus_1_steps_of_one_kv_block)
{
	char *d = tmp_dir();
	struct inputs *in = tiny_inputs(d);
	const int cases[][2] = { { 2, 1 }, { 4, 1 }, { 4, 2 }, { 8, 1 } };  /* cp, tp */
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		int cp = cases[c][0], tp = cases[c][1];
		long mbs = 3, L = 2;
		struct plan pl = cp_plan(in, cp, CP_P2P, tp, mbs);
		double bytes;
		int n = cp_tasks(in, &pl, COLL_SENDRECV, &bytes);
		double kv = 2.0 * (4 / tp) * 64 * 1 * (1024.0 / cp) * 2;
		cr_assert_eq(n, mbs * L * 2 * (cp - 1), "cp %d tp %d: %d exchanges", cp, tp, n);
		double want = mbs * L * (cp - 1) * (kv + 2 * kv);
		cr_assert_float_eq(bytes, want, 1e-6 * want, "cp %d tp %d: %.17g vs %.17g", cp, tp, bytes, want);
	}
	inputs_destroy(in);
}

/* Ulysses: an all-to-all of q, k, v before the core and of the output
 * after it (backward: dO, then dq, dk, dv): 2 x (q k v + o) per layer. */
Test(parallel, cp_a2a_moves_qkv_and_output)
{
	char *d = tmp_dir();
	struct inputs *in = tiny_inputs(d);
	long mbs = 2, L = 2;
	int cp = 4;
	struct plan pl = cp_plan(in, cp, CP_A2A, 2, mbs);
	double bytes;
	int n = cp_tasks(in, &pl, COLL_ALLTOALL, &bytes);
	double tok = 1024.0 / cp * 2, q = 16 / 2 * 64 * tok, kv = 2 * (4 / 2) * 64 * tok;
	cr_assert_eq(n, mbs * L * 4);
	double want = mbs * L * 2 * (q + kv + q);
	cr_assert_float_eq(bytes, want, 1e-6 * want, "%.17g vs %.17g", bytes, want);
	inputs_destroy(in);
}

/* The replay: each GPU sends what its program says (a ring shift sends
 * the whole block), the CP group is consecutive GPUs after TP in the
 * default order, and gradients are reduced over dp x cp ranks. */
Test(parallel, cp_bytes_per_gpu_and_groups_in_the_report)
{
	char *d = tmp_dir();
	char model[1024], text[4096];
	snprintf(model, sizeof(model),
		 "{\"schema\":\"ddlsim.model\",\"schema_version\":\"1.0\",\"name\":\"tiny\",\"source\":\"test\","
		 "\"architecture\":\"decoder_transformer\",\"layers\":2,\"hidden_size\":1024,\"heads\":16,"
		 "\"kv_heads\":4,\"vocab_size\":32000}");
	char *mp = write_file(d, "tiny.json", model);
	snprintf(text, sizeof(text),
		 "{\"schema\":\"ddlsim.scenario\",\"schema_version\":\"1.0\",\"model\":\"%s\","
		 "\"topology\":\"%s\",\"nodes\":1,\"parallel\":{\"tp\":2,\"cp\":2},"
		 "\"training\":{\"seq_len\":1024,\"global_batch\":4,\"micro_batch\":1,\"attention\":\"flash\"},"
		 "\"communication\":{\"algorithm\":\"ring\"}}", mp, src_path("topologies/dgx-a100.json"));
	json_t *r = run(write_file(d, "s.json", text), d);
	/* dp = 8 / (2 x 2) = 2; 2 micro-batches per pipeline, 2 layers, one exchange each way */
	double kv = 2.0 * 2 * 64 * 512 * 2;
	double want = 2 * 2 * (kv + 2 * kv);
	double got = jnum(r, "communication/bytes_per_gpu/cp");
	cr_assert_float_eq(got, want, 1e-6 * want, "%.17g vs %.17g", got, want);
	json_t *pl = json_object_get(r, "placement");
	json_t *cpg = json_object_get(pl, "cp_group_of_rank0");
	json_t *dpg = json_object_get(pl, "dp_group_of_rank0");
	cr_assert_eq(json_array_size(cpg), 2);
	cr_assert_eq(json_integer_value(json_array_get(cpg, 1)), 2);
	cr_assert_eq(json_array_size(dpg), 4);
	cr_assert_eq(json_integer_value(json_array_get(dpg, 1)), 2);
	cr_assert_eq(json_integer_value(json_array_get(dpg, 2)), 4);
	cr_assert_eq(jnum(r, "scenario/parallel/cp"), 2);
	json_decref(r);
}

/* The ring divides attention work exactly: the cp ranks' core FLOPs add
 * up to the causal core of the whole sequence. */
Test(parallel, cp_ring_steps_add_up_to_the_causal_core)
{
	char *d = tmp_dir();
	struct inputs *in = tiny_inputs(d);
	const struct model *m = inputs_model(in);
	for (int cp = 2; cp <= 8; cp *= 2) {
		struct wl_shape one = { 1, 1024, 1, false, DTYPE_BF16, ATTN_FLASH, 1, false, 1, false, 0, 0, 0, NULL, { ATTN_BE_BEST, ATTN_BE_BEST }, false, { 0 }, false, { 0 }, false, 0, 0 }, s = one;
		s.cp = cp;
		for (int pass = PASS_FWD; pass <= PASS_BWD; pass++) {
			struct op_list a, b;
			op_list_init(&a);
			op_list_init(&b);
			cr_assert_eq(workload_block(m, &one, WL_ATTN, pass, RECOMPUTE_NONE, &a), 0);
			cr_assert_eq(workload_block(m, &s, WL_ATTN, pass, RECOMPUTE_NONE, &b), 0);
			double fa = 0, fb = 0;
			int nb = 0;
			for (int i = 0; i < a.n; i++)
				fa += a.v[i].kind == OP_ATTN ? a.v[i].flops : 0;
			for (int i = 0; i < b.n; i++)
				if (b.v[i].kind == OP_ATTN) {
					fb += b.v[i].flops;
					nb++;
				}
			cr_assert_eq(nb, cp);
			cr_assert_float_eq(cp * fb, fa, 1e-9 * fa, "cp %d: %g x %d vs %g", cp, fb, cp, fa);
			op_list_finish(&a);
			op_list_finish(&b);
		}
	}
	inputs_destroy(in);
}

/* ---- tp_comm_overlap (Transformer Engine userbuffers) --------------- */

/* Per layer and micro-batch each half-layer's SP all-gather and
 * reduce-scatter become tp - 1 ring steps of one shard (b s h / tp) in
 * forward (2 halves x 2 x (tp - 1)), the output-gradient all-gather tp - 1
 * steps in backward (2 x (tp - 1)), and backward keeps one bulk re-gather
 * and one bulk reduce-scatter per half. The ring moves what the ring
 * all-gather and reduce-scatter moved: (tp - 1) shards each. */
Test(parallel, tp_comm_overlap_splits_sp_collectives_into_ring_steps)
{
	char *d = tmp_dir();
	struct inputs *in = tiny_inputs(d);
	const int tps[] = { 2, 4, 8 };
	for (size_t c = 0; c < sizeof(tps) / sizeof(tps[0]); c++) {
		int tp = tps[c];
		long mbs = 3, L = 2;
		struct plan off = cp_plan(in, 1, CP_P2P, tp, mbs), on = off;
		on.communication.tp_comm_overlap = true;
		double bytes[2] = { 0, 0 }, compute[2] = { 0, 0 };
		int steps = 0, bulk = 0;
		for (int k = 0; k < 2; k++) {
			struct program p;
			program_init(&p);
			cr_assert_eq(simulate_build_program(in, k ? &on : &off, 0, &p, NULL), 0);
			for (int i = 0; i < p.n; i++) {
				const struct task *t = &p.t[i];
				if (t->kind == TASK_COMPUTE)
					compute[k] += t->time_s;
				if (t->stream != STREAM_TP)
					continue;
				double n = t->op == COLL_SENDRECV ? 1 : (tp - 1.0) / tp;
				bytes[k] += n * t->bytes * t->count;
				if (k && t->op == COLL_SENDRECV)
					steps++;
				else if (k && t->bytes == 1024.0 * 1024 * 2)
					bulk++;
			}
			program_finish(&p);
		}
		cr_assert_eq(steps, mbs * L * 6 * (tp - 1), "tp %d: %d steps", tp, steps);
		/* the bulk ones, plus the embedding's and head's unsplit SP collectives
		 * (RS + AG forward, RS + AG backward) */
		cr_assert_eq(bulk, mbs * (L * 4 + 4), "tp %d: %d bulk", tp, bulk);
		cr_assert_float_eq(bytes[1], bytes[0], 1e-9 * bytes[0], "tp %d: %.17g vs %.17g", tp,
				   bytes[1], bytes[0]);
		cr_assert_float_eq(compute[1], compute[0], 1e-12, "tp %d: the GEMM chunks add up", tp);
	}
	inputs_destroy(in);
}

/* The replay: the pipelined steps hide behind GEMM chunks, so the exposed
 * TP communication falls, and the compute stays but for what the
 * overlapped communication slows it (interference, engine.h). */
Test(parallel, tp_comm_overlap_hides_tp_communication)
{
	char *d1 = tmp_dir(), *d2 = tmp_dir();
	json_t *a = run(tiny(d1, "\"tp\": 8, \"dp\": 1, \"sp\": true", 2, 1), d1);
	char *s = tiny(d2, "\"tp\": 8, \"dp\": 1, \"sp\": true", 2, 1);
	char *e = NULL, args[2048];
	/* the same scenario with the knob on */
	FILE *f = fopen(s, "r");
	char text[8192];
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = 0;
	char *alg = strstr(text, "\"algorithm\"");
	cr_assert_not_null(alg);
	char out[8192];
	snprintf(out, sizeof(out), "%.*s\"tp_comm_overlap\": true, %s", (int)(alg - text), text, alg);
	char *s2 = write_file(d2, "s2.json", out);
	snprintf(args, sizeof(args), "run %s --out %s/out --quiet --per-rank", s2, d2);
	cr_assert_eq(run_ddlsim(args, NULL, &e), 0, "%s", e);
	snprintf(args, sizeof(args), "%s/out", d2);
	json_t *b = load_report(args);
	cr_assert_not_null(b);
	double ta = jnum(a, "breakdown/per_rank/0/exposed_tp_comm_s");
	double tb = jnum(b, "breakdown/per_rank/0/exposed_tp_comm_s");
	cr_assert_lt(tb, 0.75 * ta, "exposed TP %.6g s with overlap vs %.6g s", tb, ta);
	double ca = jnum(a, "breakdown/per_rank/0/compute_s") - jnum(a, "breakdown/per_rank/0/interference_s");
	double cb = jnum(b, "breakdown/per_rank/0/compute_s") - jnum(b, "breakdown/per_rank/0/interference_s");
	cr_assert_float_eq(cb, ca, 1e-9, "%.17g vs %.17g", cb, ca);
	cr_assert_gt(jnum(b, "breakdown/per_rank/0/interference_s"), 0);
	cr_assert_lt(jnum(b, "summary/iteration_time_s"), jnum(a, "summary/iteration_time_s"));
	cr_assert(json_is_true(json_object_get(json_object_get(json_object_get(b, "scenario"),
							      "communication"), "tp_comm_overlap")));
	json_decref(a);
	json_decref(b);
}

/* TE userbuffers' "pipeline" reduce-scatter with set_sm_margin: the
 * forward GEMM before it runs on sm_count - n SMs, so its time is
 * multiplied by sm_count / (sm_count - n) (gpu.h), nothing else moves.
 * Closed form: the compute added by n SMs on proj_fprop is
 * (f(n) - 1) G, G the GEMM's time summed over layers and micro-batches,
 * so added(n1) / added(n2) = (f(n1) - 1) / (f(n2) - 1); the wire bytes
 * do not change. */
Test(parallel, tp_rs_sm_margin_scales_the_forward_rs_gemm)
{
	cr_assert_float_eq(gpu_sm_margin_slowdown(132, 24), 132.0 / 108.0, 1e-15);
	cr_assert_float_eq(gpu_sm_margin_slowdown(132, 16), 132.0 / 116.0, 1e-15);
	cr_assert_eq(gpu_sm_margin_slowdown(132, 0), 1.0);
	cr_assert_eq(gpu_sm_margin_slowdown(132, 132), 1.0);
	char *d = tmp_dir();
	struct inputs *in = tiny_inputs(d);
	long sms = inputs_topology(in)->gpu.sm_count;
	cr_assert_gt(sms, 8);
	struct plan base = cp_plan(in, 1, CP_P2P, 4, 3);
	base.communication.tp_comm_overlap = true;
	const long n[3] = { 0, 4, sms / 2 };
	double compute[3][2] = { { 0 } }, bytes[3] = { 0 };
	for (int c = 0; c < 3; c++) {
		for (int blk = 0; blk < 2; blk++) {
			struct plan pl = base;
			pl.communication.tp_rs_margin_sms[blk] = n[c];
			struct program p;
			program_init(&p);
			cr_assert_eq(simulate_build_program(in, &pl, 0, &p, NULL), 0);
			for (int i = 0; i < p.n; i++) {
				if (p.t[i].kind == TASK_COMPUTE)
					compute[c][blk] += p.t[i].time_s;
				else if (blk == 0)
					bytes[c] += p.t[i].bytes * p.t[i].count;
			}
			program_finish(&p);
		}
	}
	for (int blk = 0; blk < 2; blk++) {
		double a1 = compute[1][blk] - compute[0][blk], a2 = compute[2][blk] - compute[0][blk];
		cr_assert_gt(a1, 0, "block %d: %.17g", blk, a1);
		double want = (gpu_sm_margin_slowdown(sms, n[2]) - 1) / (gpu_sm_margin_slowdown(sms, n[1]) - 1);
		cr_assert_float_eq(a2 / a1, want, 1e-9 * want, "block %d: %.17g vs %.17g", blk, a2 / a1, want);
	}
	cr_assert_float_eq(bytes[2], bytes[0], 1e-12 * bytes[0]);
	inputs_destroy(in);
}

/* ZB-H1 (engine/schedule.h): W hands the gradients over, so on the last
 * stage (its first W held back to the end: F0 B0, F1 B1 W0, ..., W3) no
 * data-parallel reduction may start before the last micro-batch's W,
 * even with reductions overlapping the backward. */
Test(parallel, zb_h1_reduces_gradients_after_the_last_w)
{
	char *d = tmp_dir();
	struct inputs *in = tiny_inputs(d);
	struct plan pl;
	plan_init(&pl);
	pl.nodes = 1;
	pl.parallel.pp = 2;
	pl.parallel.dp = 4;
	pl.parallel.schedule = SCHED_ZBH1;
	pl.communication.overlap_grad_reduce = true;
	pl.training.seq = 1024;
	pl.training.global_batch = 16;   /* 4 micro-batches per pipeline */
	plan_resolve(&pl, in);
	struct diag dg;
	diag_init(&dg, stderr);
	cr_assert_eq(plan_check(&pl, in, "t", &dg), 0, "%s", diag_text(&dg));
	diag_finish(&dg);
	struct program p;
	program_init(&p);
	cr_assert_eq(simulate_build_program(in, &pl, 1, &p, NULL), 0);
	/* the last W: the compute tasks of micro-batch 3 after W2's */
	int last2 = -1, w3 = -1, reductions = 0;
	for (int i = 0; i < p.n; i++)
		if (p.t[i].stream == STREAM_COMPUTE && p.t[i].cat == CAT_BACKWARD && p.t[i].mb == 2)
			last2 = i;
	for (int i = last2 + 1; i < p.n && w3 < 0; i++)
		if (p.t[i].stream == STREAM_COMPUTE && p.t[i].mb == 3)
			w3 = i;
	cr_assert(last2 >= 0 && w3 > last2);
	for (int i = 0; i < p.n; i++) {
		const struct task *t = &p.t[i];
		if (t->stream != STREAM_DP || t->kind != TASK_COLL || t->group != GROUP_DP)
			continue;
		int dep = -1;
		for (int k = 0; k < t->ndeps; k++)
			if (p.deps[t->dep0 + k] > dep)
				dep = p.deps[t->dep0 + k];
		cr_expect_geq(dep, w3, "reduction %d waits for task %d, before the last W (%d)", i, dep, w3);
		reductions++;
	}
	cr_assert_gt(reductions, 0);
	program_finish(&p);
	inputs_destroy(in);
}

/* DualPipe (engine/schedule.h) with pp = 2: rank 0 holds stage 0 of the
 * forward pipeline (chunk 0: the embedding and layer 0) and stage 1 of
 * the reverse one (chunk 1: layer 1 and the head), so the whole model.
 * Chunk 0 sends its m/2 activations forward and receives m/2 gradients;
 * chunk 1, last of the reverse pipeline, receives m/2 activations and
 * sends m/2 gradients, on its own mailboxes (task.rev), from and to the
 * other rank. After the last W one all-reduce with the mirror rank sums
 * the two copies' gradients: the rank's whole gradient, here the
 * model's. */
Test(parallel, dualpipe_sends_both_ways_and_sums_the_mirror_copies)
{
	char *d = tmp_dir();
	struct inputs *in = tiny_inputs(d);
	struct plan pl;
	plan_init(&pl);
	pl.nodes = 1;
	pl.parallel.pp = 2;
	pl.parallel.dp = 4;
	pl.parallel.schedule = SCHED_DUALPIPE;
	pl.training.seq = 1024;
	pl.training.global_batch = 16;   /* 4 micro-batches per pipeline: 2 pp */
	plan_resolve(&pl, in);
	struct diag dg;
	diag_init(&dg, stderr);
	cr_assert_eq(plan_check(&pl, in, "t", &dg), 0, "%s", diag_text(&dg));
	diag_finish(&dg);
	struct program p;
	program_init(&p);
	cr_assert_eq(simulate_build_program(in, &pl, 0, &p, NULL), 0);
	int n[2][2][2] = { { { 0 } } };   /* [send][rev][dir] */
	int mirror = 0, last_compute = -1;
	double mirror_bytes = 0;
	for (int i = 0; i < p.n; i++) {
		const struct task *t = &p.t[i];
		if (t->stream == STREAM_COMPUTE)
			last_compute = i;
		if (t->kind == TASK_SEND || t->kind == TASK_RECV) {
			n[t->kind == TASK_SEND][t->rev][t->dir]++;
			cr_expect_eq(t->rev, t->chunk == 1, "task %d chunk %d", i, t->chunk);
		}
		if (t->kind == TASK_COLL && t->group == GROUP_MIRROR) {
			mirror++;
			mirror_bytes += t->bytes;
			int dep = -1;
			for (int k = 0; k < t->ndeps; k++)
				if (p.deps[t->dep0 + k] > dep)
					dep = p.deps[t->dep0 + k];
			cr_expect_eq(dep, last_compute, "the mirror sum waits for task %d, the last W is %d",
				     dep, last_compute);
		}
	}
	cr_expect_eq(n[1][0][P2P_FWD], 2);   /* chunk 0's activations */
	cr_expect_eq(n[0][0][P2P_BWD], 2);   /* chunk 0's gradients in */
	cr_expect_eq(n[0][1][P2P_FWD], 2);   /* chunk 1's activations in */
	cr_expect_eq(n[1][1][P2P_BWD], 2);   /* chunk 1's gradients */
	cr_expect_eq(n[1][0][P2P_BWD] + n[0][0][P2P_FWD] + n[0][1][P2P_BWD] + n[1][1][P2P_FWD], 0);
	cr_assert_eq(mirror, 1);
	double want = model_params(inputs_model(in)) * dtype_bytes(pl.training.grad_dtype);
	cr_expect_float_eq(mirror_bytes, want, 1e-12 * want, "%.17g bytes, want %.17g", mirror_bytes, want);
	program_finish(&p);
	inputs_destroy(in);
}

/* Megatron's recompute modules under DualPipe (selective recompute is
 * allowed there; W reads the GEMM inputs the forward saved): with
 * layernorm beside core_attn, a layer keeps per token 2h + 2h fewer
 * bytes (the QKV and fc1 inputs, the norms' outputs; no TP): 4 x 1024 x
 * 1024 tokens per micro-batch, and each backward runs the two norms
 * again (the iteration is longer); the scenario echoes the key. */
Test(parallel, recompute_modules_under_dualpipe_free_the_norm_outputs)
{
	static const char *const par[] = {
		"\"pp\": 2, \"dp\": 4, \"schedule\": \"dualpipe\", \"recompute\": \"selective\"",
		"\"pp\": 2, \"dp\": 4, \"schedule\": \"dualpipe\", \"recompute\": \"selective\", "
		"\"recompute_modules\": [\"core_attn\", \"layernorm\"]",
	};
	json_t *r[2];
	for (int i = 0; i < 2; i++) {
		char *d = tmp_dir();
		r[i] = run(tiny(d, par[i], 16, 1), d);
	}
	double a0 = jnum(r[0], "memory/per_stage/0/activations_per_layer_microbatch_GB");
	double a1 = jnum(r[1], "memory/per_stage/0/activations_per_layer_microbatch_GB");
	cr_assert_float_eq(a0 - a1, 4 * 1024 * 1024.0 / 1e9, 1e-9, "%.9g - %.9g", a0, a1);
	cr_assert_gt(jnum(r[1], "summary/iteration_time_s"), jnum(r[0], "summary/iteration_time_s"));
	json_t *m = json_object_get(json_object_get(json_object_get(r[1], "scenario"), "parallel"),
				    "recompute_modules");
	cr_assert_eq(json_array_size(m), 2);
	cr_assert_str_eq(json_string_value(json_array_get(m, 1)), "layernorm");
	for (int i = 0; i < 2; i++)
		json_decref(r[i]);
}
