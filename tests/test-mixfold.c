/* test-mixfold: folding mixed clusters (node_groups of different GPUs)
 * by classes of replicas (sim/simulate_fold.c, mixed_fold_why; engine
 * fold.c, pick_class_replicas): a replica's class is the GPU of each of
 * its ranks in rank order; "auto" simulates the representative and the
 * first replica of every other class, and the run equals every rank
 * simulated to 1e-9 on a non-blocking fabric, every figure of the report
 * (iteration time, MFU, memory and fit, every rank's row but whom it was
 * simulated as, the node groups' compute):
 *   stage-wise mixed GPUs, PP 2 with stage 0 on DGX H100 and stage 1 on
 *   DGX A100 nodes: every replica alike, one rank per stage simulated;
 *   replica-wise, DP outermost, replicas 0-1 on H100, 2-3 on A100: two
 *   classes, 2 replicas of 4 simulated;
 *   the same with a straggler in a replica of the second class.
 * Where it must not fold (an oversubscribed fat tree, a forced tree
 * all-reduce), "auto" simulates every rank and says why.
 *
 * Each case runs `ddlsim run folded.json unfolded.json` (each simulation
 * in its own process) and compares their reports. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define DGX_H100 "topologies/dgx-h100.json"
#define FT2 "topologies/dgx-h100-fattree2-2to1.json"

/* A Llama-like model small enough for every rank to be simulated fast. */
static void write_model(const char *d)
{
	free(write_file(d, "small-model.json",
			"{\"schema\":\"ddlsim.model\",\"schema_version\":\"1.0\",\"name\":\"small\","
			"\"source\":\"a test model\",\"architecture\":\"decoder_transformer\","
			"\"layers\":8,\"hidden_size\":1024,\"heads\":8,\"kv_heads\":8,"
			"\"ffn_size\":4096,\"activation\":\"swiglu\",\"norm\":\"rmsnorm\","
			"\"bias\":false,\"vocab_size\":32000,\"tied_embeddings\":false,"
			"\"position_embedding\":\"rope\"}"));
}

struct job {
	const char *topo;
	int h100, a100;         /* nodes of each group */
	bool a100_first;        /* the A100 group first (else the H100 one) */
	int dp, pp;             /* TP 8 */
	const char *order;      /* "" default */
	const char *algo;
	const char *sim_extra;  /* more simulation keys, "" none */
};

/* Run job with simulation.fold fold[0] and fold[1] in one `ddlsim run`,
 * reports (per rank) into r. */
static void run_pair(const struct job *j, const char *const fold[2], json_t *r[2])
{
	char *d = tmp_dir(), text[4096], args[4096], *err = NULL, dir[1024], *path[2];
	char order_kv[64] = "", groups[2048];
	const char *h100 = src_path("gpus/h100-sxm5-80gb.json"), *a100 = src_path("gpus/a100-sxm4-80gb.json");
	write_model(d);
	snprintf(groups, sizeof(groups), "{\"nodes\":%d,\"gpu\":\"%s\"},{\"nodes\":%d,\"gpu\":\"%s\"}",
		 j->a100_first ? j->a100 : j->h100, j->a100_first ? a100 : h100,
		 j->a100_first ? j->h100 : j->a100, j->a100_first ? h100 : a100);
	if (*j->order)
		snprintf(order_kv, sizeof(order_kv), ",\"order\":\"%s\"", j->order);
	const char *topo = src_path(j->topo);
	for (int i = 0; i < 2; i++) {
		snprintf(text, sizeof(text),
			 "{\"schema\":\"ddlsim.scenario\",\"schema_version\":\"1.0\",\"name\":\"m%s\","
			 "\"model\":\"%s/small-model.json\",\"topology\":\"%s\","
			 "\"node_groups\":[%s],"
			 "\"parallel\":{\"tp\":8,\"dp\":%d,\"pp\":%d%s},"
			 "\"training\":{\"seq_len\":2048,\"global_batch\":%d,\"micro_batch\":1},"
			 "\"communication\":{\"algorithm\":\"%s\",\"bucket_MB\":2},"
			 "\"simulation\":{\"fold\":\"%s\"%s%s}}",
			 fold[i], d, topo, groups, j->dp, j->pp, order_kv,
			 4 * j->dp, j->algo, fold[i], *j->sim_extra ? "," : "", j->sim_extra);
		char name[32];
		snprintf(name, sizeof(name), "%s.json", fold[i]);
		path[i] = write_file(d, name, text);
	}
	snprintf(args, sizeof(args), "run %s %s --out %s --quiet --format json --per-rank", path[0],
		 path[1], d);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	free(err);
	for (int i = 0; i < 2; i++) {
		snprintf(dir, sizeof(dir), "%s/m%s", d, fold[i]);
		r[i] = load_report(dir);
		cr_assert_not_null(r[i], "no report in %s", dir);
		free(path[i]);
	}
	free(d);
}

static bool folded(json_t *r)
{
	return json_is_true(json_object_get(json_object_get(r, "simulation"), "folded"));
}

/* Two numbers equal to 1e-9 relative (1e-15 absolute near 0). */
static void expect_near(double a, double b, const char *what)
{
	cr_expect_leq(fabs(a - b), 1e-9 * fmax(fabs(a), fabs(b)) + 1e-15,
		      "%s: folded %.17g, unfolded %.17g", what, a, b);
}

/* Every figure of the folded report r[0] against the unfolded r[1]. */
static void expect_same_figures(json_t *r[2])
{
	static const char *const path[] = {
		"summary/iteration_time_s", "summary/mfu", "summary/hfu", "summary/tokens_per_s",
		"memory/worst_total_GB", "breakdown/mean/compute_s", "breakdown/mean/exposed_comm_s",
		"breakdown/mean/bubble_s",
	};
	for (size_t k = 0; k < sizeof(path) / sizeof(path[0]); k++)
		expect_near(jnum(r[0], path[k]), jnum(r[1], path[k]), path[k]);
	cr_expect_eq(jbool_at(r[0], "memory/fits"), jbool_at(r[1], "memory/fits"));
	json_t *g[2], *pr[2];
	for (int i = 0; i < 2; i++) {
		g[i] = json_object_get(json_object_get(r[i], "node_groups"), "groups");
		pr[i] = json_object_get(json_object_get(r[i], "breakdown"), "per_rank");
	}
	cr_assert_eq(json_array_size(g[0]), 2);
	for (size_t k = 0; k < 2; k++)
		expect_near(json_real_value(json_object_get(json_array_get(g[0], k), "compute_s")),
			    json_real_value(json_object_get(json_array_get(g[1], k), "compute_s")),
			    "node_groups compute_s");
	cr_assert_eq(json_array_size(pr[0]), json_array_size(pr[1]));
	cr_assert_gt(json_array_size(pr[0]), 0);
	for (size_t q = 0; q < json_array_size(pr[0]); q++) {
		json_t *a = json_array_get(pr[0], q), *b = json_array_get(pr[1], q), *v;
		const char *key;
		json_object_foreach(a, key, v) {
			if (!strcmp(key, "simulated_as"))
				continue;
			json_t *w = json_object_get(b, key);
			cr_assert_not_null(w, "rank %zu: %s", q, key);
			if (json_is_number(v)) {
				char what[96];
				snprintf(what, sizeof(what), "rank %zu %s", q, key);
				expect_near(json_number_value(v), json_number_value(w), what);
			} else
				cr_expect(json_equal(v, w), "rank %zu: %s differs", q, key);
		}
	}
}

/* job folded by "auto" (simulating `simulated` ranks) equals "off". */
static void auto_equals_off(const struct job *j, int simulated)
{
	const char *const fold[2] = { "auto", "off" };
	json_t *r[2];
	run_pair(j, fold, r);
	cr_assert(folded(r[0]), "not folded: %s",
		  json_string_value(json_object_get(json_object_get(r[0], "simulation"), "fold_reason")));
	cr_assert_not(folded(r[1]));
	cr_expect_eq(jnum(r[0], "simulation/simulated_ranks"), simulated);
	expect_same_figures(r);
	for (int i = 0; i < 2; i++)
		json_decref(r[i]);
}

Test(mixfold, stage_wise_mixed_gpus_fold_as_alike_replicas, .timeout = 300)
{
	/* stage 0 on the 4 H100 nodes, stage 1 on the 4 A100 nodes: DP 4 */
	struct job j = { DGX_H100, 4, 4, false, 4, 2, "", "ring", "" };
	auto_equals_off(&j, 2);
}

Test(mixfold, replica_wise_mixed_gpus_fold_one_replica_per_class, .timeout = 300)
{
	/* DP outermost: replicas 0-1 on the H100 nodes, 2-3 on the A100 ones */
	struct job j = { DGX_H100, 4, 4, false, 4, 2, "tp,cp,pp,dp", "ring", "" };
	auto_equals_off(&j, 32);
}

Test(mixfold, replica_wise_with_the_slow_class_represented_first, .timeout = 300)
{
	/* replicas 0-1 on the A100 nodes: the representative's class is the
	 * slow one; every TP rank of it is simulated, or the H100 replica's
	 * TP ranks 1-7 would reduce at their own pace (measured without:
	 * rank 33 finished at 14.73 ms against 21.03 ms unfolded) */
	struct job j = { DGX_H100, 4, 4, true, 4, 2, "tp,cp,pp,dp", "ring", "" };
	auto_equals_off(&j, 32);
}

Test(mixfold, replica_wise_with_a_straggler_in_the_second_class, .timeout = 300)
{
	/* DP 8 of PP 1 on 8 nodes, rank 60 (replica 7, on an A100) 1.2x slower:
	 * replicas 0 (H100), 4 (A100) and 7 (the straggler's) simulated */
	struct job j = { DGX_H100, 4, 4, false, 8, 1, "", "ring",
			 "\"stragglers\":{\"ranks\":[60],\"slowdown\":1.2}" };
	auto_equals_off(&j, 24);
}

/* "auto" does not fold job and says why (why). */
static void auto_refuses(const struct job *j, const char *why)
{
	const char *const fold[2] = { "auto", "on" };
	json_t *r[2];
	run_pair(j, fold, r);
	cr_expect_not(folded(r[0]));
	cr_expect_eq(jnum(r[0], "simulation/simulated_ranks"), jnum(r[0], "simulation/ranks"));
	cr_expect_str_eq(jstr_at(r[0], "simulation/fold_reason"), why);
	/* "on" folds it by classes anyway */
	cr_expect(folded(r[1]));
	cr_expect_lt(jnum(r[1], "simulation/simulated_ranks"), jnum(r[1], "simulation/ranks"));
	for (int i = 0; i < 2; i++)
		json_decref(r[i]);
}

Test(mixfold, auto_does_not_fold_classes_on_an_oversubscribed_tree, .timeout = 300)
{
	struct job j = { FT2, 5, 5, false, 5, 2, "tp,cp,pp,dp", "ring", "" };
	auto_refuses(&j, "node groups with different GPUs make the data-parallel replicas differ, "
			 "folded one replica per class of GPUs only on a symmetric fabric of full "
			 "bisection");
}

Test(mixfold, auto_does_not_fold_classes_with_a_tree_all_reduce, .timeout = 300)
{
	/* DP 8: the trees load their members unequally ("on" by classes read
	 * 0.02394179 s against 0.02402502 s, -0.35 %, on 2026-12-07; DP 4's
	 * trees are balanced and fold) */
	struct job j = { DGX_H100, 8, 8, false, 8, 2, "tp,cp,pp,dp", "tree", "" };
	auto_refuses(&j, "node groups with different GPUs make the data-parallel replicas differ, "
			 "and a tree all-reduce loads its members unequally: folding by classes of "
			 "GPUs is not made for it");
}

Test(mixfold, one_replica_per_class_leaves_nothing_to_fold, .timeout = 300)
{
	/* DP 2 over 1 H100 and 1 A100 node: each replica is its class's */
	struct job j = { DGX_H100, 1, 1, false, 2, 1, "", "ring", "" };
	const char *const fold[2] = { "auto", "off" };
	json_t *r[2];
	run_pair(&j, fold, r);
	cr_expect_not(folded(r[0]));
	cr_expect_eq(jnum(r[0], "simulation/simulated_ranks"), 16);
	cr_expect_str_eq(jstr_at(r[0], "simulation/fold_reason"),
			 "every data-parallel replica stands for a class of GPUs (node groups with "
			 "different GPUs) or is simulated whole: nothing left to fold");
	expect_same_figures(r);
	for (int i = 0; i < 2; i++)
		json_decref(r[i]);
}
