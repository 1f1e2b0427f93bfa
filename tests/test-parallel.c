/* test-parallel: tensor, sequence, pipeline and ZeRO parallelism through
 * the whole path (scenario -> programs -> engine -> report). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	snprintf(args, sizeof(args), "run %s --out %s/out --quiet", scn, dir);
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
