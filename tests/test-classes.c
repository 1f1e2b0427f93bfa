/* test-classes: the rail-aligned all-to-all as one flow per NIC
 * (fabric/coll_classes.c) in a training run (engine/engine_classes.c):
 * the class plan's closed form and simulated time against the per-pair
 * plan's, a training run with class plans (split back into pairs where
 * other traffic meets them) against the same run with pairs only
 * (simulation.collective_pairs), and the fallbacks with their reasons. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "topology.h"
#include "sweep-util.h"
#include "testutil.h"

#define REL(a, b) (fabs((a) - (b)) / fabs(b))

/* 4 DGX H100 on the 1:1 three-level fat tree, 32 ranks, 1 GiB each: the
 * rail-aligned plan's inter-node flows, 8 x 4 x 3 = 96, become one per
 * NIC, 32, beside the 4 x 56 NVLink flows. Each NIC sends and receives
 * (P - g)/P N = 3/4 N, the binding load (the NVLink side carries
 * (g - 1) nn N/P = 7/8 N at 9x a NIC's bandwidth), so both plans' closed
 * form is latency + 3/4 N / B_nic, and both simulate to it. */
Test(classes, class_plan_keeps_the_pairwise_closed_form_and_time, .timeout = 120)
{
	struct topology *t = load_topology("topologies/dgx-h100-fattree3.json");
	int n = 32, r[32];
	for (int i = 0; i < n; i++)
		r[i] = i;
	double N = 1073741824.0;
	struct coll_plan *p = coll_plan_create(t, "direct", COLL_ALLTOALL, r, n, N);
	cr_assert(p);
	const char *why = "unset";
	struct coll_plan *c = coll_plan_class_copy(t, p, &why);
	cr_assert(c, "no class plan: %s", why);
	cr_expect_null(why);
	cr_expect_eq(p->nflows, 4 * 56 + 96);
	cr_expect_eq(c->nflows, 4 * 56 + 32);
	double want = p->latency_s + 0.75 * N / t->nic_bw_Bps;
	cr_expect_lt(REL(p->ideal_time_s, want), 1e-9, "pairs %.17g, hand %.17g", p->ideal_time_s, want);
	/* the class plan's own flows (its ideal_time_s is the pairs', copied):
	 * each inter-node one carries 3 nodes x 8 GPUs x N/32 = 3/4 N, one
	 * per NIC, and the latency is split anew around its slowest path */
	double most = 0;
	for (int i = 0; i < c->nflows; i++)
		if (topology_node_of(t, c->flows[i].src) != topology_node_of(t, c->flows[i].dst)) {
			cr_expect_lt(REL(c->flows[i].bytes, 0.75 * N), 1e-12, "flow %d: %.17g B", i,
				     c->flows[i].bytes);
			most = fmax(most, c->flows[i].bytes);
		}
	cr_expect_lt(REL(c->latency_s + most / t->nic_bw_Bps, want), 1e-9, "classes %.17g, hand %.17g",
		     c->latency_s + most / t->nic_bw_Bps, want);
	cr_expect_lt(REL(c->alpha_s + c->extra_latency_s, p->latency_s), 1e-12, "%.17g + %.17g vs %.17g",
		     c->alpha_s, c->extra_latency_s, p->latency_s);
	/* every member sends the same bytes in both */
	for (int m = 0; m < n; m++) {
		double a = 0, b = 0;
		for (int i = 0; i < p->nflows; i++)
			a += p->flows[i].src == m ? p->flows[i].bytes : 0;
		for (int i = 0; i < c->nflows; i++)
			b += c->flows[i].src == m ? c->flows[i].bytes : 0;
		cr_expect_lt(REL(b, a), 1e-12, "member %d: %g vs %g", m, b, a);
	}
	double ts = sweep_forked(t, 4, r, n, COLL_ALLTOALL, "direct", N);     /* one flow per NIC, alone */
	double tp = sweep_forked(t, 4, r, n, COLL_ALLTOALL, "pairwise", N);   /* P(P - 1) flows */
	cr_log_info("1 GiB all-to-all, 32 ranks: closed form %.12g s, classes %.12g s, pairwise %.12g s",
		    want, ts, tp);
	cr_expect_lt(REL(ts, want), 1e-9, "classes %.17g vs closed form %.17g", ts, want);
	cr_expect_lt(REL(tp, want), 1e-9, "pairwise %.17g vs closed form %.17g", tp, want);
	coll_plan_destroy(c);
	coll_plan_destroy(p);
	topology_destroy(t);
}

/* No class plan where it would not end with the pairs, and why. */
Test(classes, asymmetric_groups_and_fabrics_stay_per_pair)
{
	double N = 1 << 30;
	int r[80];
	for (int i = 0; i < 80; i++)
		r[i] = i;
	const char *why;
	/* the 2:1 tree: leaf uplinks can bind */
	struct topology *t = load_topology("topologies/dgx-h100-fattree2-2to1.json");
	struct coll_plan *p = coll_plan_create(t, "direct", COLL_ALLTOALL, r, 32, N);
	cr_assert(p);
	cr_expect_null(coll_plan_class_copy(t, p, &why));
	cr_expect_str_eq(why, "the fabric's uplinks can bind (an oversubscribed fat tree): per pair");
	coll_plan_destroy(p);
	topology_destroy(t);
	/* a group of 8 + 4 + 4 GPUs: not rail-aligned, P(P - 1) pairs */
	t = load_topology("topologies/dgx-h100-fattree3.json");
	int g[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 16, 17, 18, 19 };
	p = coll_plan_create(t, "direct", COLL_ALLTOALL, g, 16, N);
	cr_assert(p);
	cr_expect_eq(p->nflows, 16 * 15);
	cr_expect_null(coll_plan_class_copy(t, p, &why));
	cr_expect_str_eq(why, "the group is not rail-aligned (another GPU count on some node, a GPU "
			      "without a NIC of its own, no NVSwitch): per pair");
	coll_plan_destroy(p);
	/* two nodes: one flow per NIC already */
	p = coll_plan_create(t, "direct", COLL_ALLTOALL, r, 16, N);
	cr_assert(p);
	cr_expect_null(coll_plan_class_copy(t, p, &why));
	cr_expect_str_eq(why, "the group spans fewer than 3 nodes: one flow per NIC already");
	coll_plan_destroy(p);
	topology_destroy(t);
}

/* The report of `ddlsim run` on scenario text, with
 * simulation.collective_pairs set when pairs. */
static json_t *report_of(const char *text, bool pairs)
{
	json_t *doc = json_loads(text, 0, NULL);
	cr_assert_not_null(doc);
	json_t *sim = json_object_get(doc, "simulation");
	if (!sim)
		json_object_set_new(doc, "simulation", sim = json_object());
	if (pairs)
		json_object_set_new(sim, "collective_pairs", json_true());
	char *t = json_dumps(doc, 0);
	json_t *r = report_of_text(t);
	free(t);
	json_decref(doc);
	return r;
}

/* Mixtral 8x7B, TP 4 with SP, EP 8 over 4 nodes (two GPUs each), on
 * topo with nodes nodes, pp stages, seq tokens, batch sequences, folding
 * fold ("off": every rank simulated). */
static char *mixtral_fold(const char *topo, int nodes, int pp, int seq, int batch, const char *fold)
{
	char *s = malloc(1024);
	snprintf(s, 1024,
		 "{\"schema\":\"ddlsim.scenario\",\"schema_version\":\"1.0\",\"name\":\"cls\","
		 "\"model\":\"%s\",\"topology\":\"%s\",\"nodes\":%d,"
		 "\"parallel\":{\"tp\":4,\"sp\":true,\"pp\":%d,\"ep\":8,\"zero\":0},"
		 "\"training\":{\"seq_len\":%d,\"global_batch\":%d,\"micro_batch\":1,"
		 "\"precision\":\"bf16\"},\"simulation\":{\"fold\":\"%s\"}}",
		 src_path("models/zoo/mixtral-8x7b.json"), src_path(topo), nodes, pp, seq, batch, fold);
	return s;
}

static char *mixtral(const char *topo, int nodes, int pp, int seq, int batch)
{
	return mixtral_fold(topo, nodes, pp, seq, batch, "off");
}

static const char *const figures[] = {
	"summary/iteration_time_s", "breakdown/mean/compute_s", "breakdown/mean/exposed_comm_s",
	"breakdown/mean/bubble_s", "breakdown/mean/idle_s",
};

/* The links' traffic of the class run c and the pairwise run p
 * (report.json's links): the top links' and every class's bytes and
 * bytes by category to 1e-9 (a class flow counts as its pairs, on their
 * routes),
 * and the NICs' busiest busy time and peak (each NIC sends and receives
 * at its bandwidth either way). */
static void expect_links_as_pairs(json_t *c, json_t *p)
{
	json_t *cc = json_object_get(json_object_get(c, "links"), "classes");
	json_t *pc = json_object_get(json_object_get(p, "links"), "classes");
	cr_assert_eq(json_array_size(cc), json_array_size(pc));
	size_t i;
	json_t *x;
	/* the top links, link by link (ties in bytes by name) */
	json_t *ct = json_object_get(json_object_get(c, "links"), "top");
	json_t *pt = json_object_get(json_object_get(p, "links"), "top");
	cr_expect_eq(json_array_size(ct), json_array_size(pt));
	json_array_foreach(ct, i, x) {
		json_t *y = json_array_get(pt, i);
		double a = json_real_value(json_object_get(x, "bytes"));
		double b = json_real_value(json_object_get(y, "bytes"));
		cr_expect(REL(a, b) < 1e-9, "top %zu: classes %s %.17g, pairs %s %.17g", i,
			  json_string_value(json_object_get(x, "name")), a,
			  json_string_value(json_object_get(y, "name")), b);
	}
	json_array_foreach(cc, i, x) {
		const char *cls = json_string_value(json_object_get(x, "class"));
		json_t *y = NULL, *z;
		size_t k;
		json_array_foreach(pc, k, z)
			if (!strcmp(json_string_value(json_object_get(z, "class")), cls))
				y = z;
		cr_assert(y, "class %s only in the class run", cls);
		double a = json_real_value(json_object_get(x, "bytes"));
		double b = json_real_value(json_object_get(y, "bytes"));
		cr_expect(REL(a, b) < 1e-9, "%s bytes: classes %.17g, pairs %.17g", cls, a, b);
		const char *key;
		json_t *v;
		json_object_foreach(json_object_get(x, "bytes_by_category"), key, v) {
			double w = json_real_value(json_object_get(json_object_get(y, "bytes_by_category"), key));
			cr_expect(REL(json_real_value(v), w) < 1e-9, "%s %s bytes: classes %.17g, pairs %.17g",
				  cls, key, json_real_value(v), w);
		}
		if (strcmp(cls, "nic"))
			continue;
		for (int q = 0; q < 2; q++) {
			const char *f = q ? "peak_util_max" : "busy_s_max";
			a = json_real_value(json_object_get(x, f));
			b = json_real_value(json_object_get(y, f));
			cr_expect(REL(a, b) < 1e-9, "nic %s: classes %.17g, pairs %.17g", f, a, b);
		}
	}
}

/* The same run with class plans and with pairs: every figure to 1e-9,
 * the class plans posted (and split, if split) as said, fewer flows;
 * both runs folded (fewer ranks simulated than there are) when folded,
 * every rank simulated otherwise. */
static void expect_as_pairs(const char *text, bool want_split, bool folded)
{
	json_t *c = report_of(text, false), *p = report_of(text, true);
	for (int k = 0; k < 2; k++) {
		json_t *r = k ? p : c;
		double sim = jnum(r, "simulation/simulated_ranks"), all = jnum(r, "simulation/ranks");
		cr_expect(folded ? sim < all : sim == all, "%s run: %.0f of %.0f ranks simulated",
			  k ? "pairs" : "classes", sim, all);
		cr_expect_eq(json_is_true(json_object_get(json_object_get(r, "simulation"), "folded")), folded);
	}
	for (size_t i = 0; i < sizeof(figures) / sizeof(figures[0]); i++) {
		double a = jnum(c, figures[i]), b = jnum(p, figures[i]);
		cr_expect(b == 0 ? a == 0 : REL(a, b) < 1e-9, "%s: classes %.17g, pairs %.17g",
			  figures[i], a, b);
	}
	double posted = jnum(c, "simulation/alltoall_class_plans/posted");
	double split = jnum(c, "simulation/alltoall_class_plans/split");
	cr_log_info("classes: %.0f posted, %.0f split; flows %.0f against %.0f", posted, split,
		    jnum(c, "simulation/flows"), jnum(p, "simulation/flows"));
	cr_expect_gt(posted, 0);
	cr_expect(want_split ? split > 0 : split == 0, "split %g", split);
	cr_expect_lt(jnum(c, "simulation/flows"), jnum(p, "simulation/flows"));
	cr_expect_eq(jnum(p, "simulation/alltoall_class_plans/posted"), 0);
	json_t *why = json_object_get(json_object_get(json_object_get(p, "simulation"),
						      "alltoall_class_plans"), "per_pair_reason");
	cr_expect_str_eq(json_string_value(why), "simulation.collective_pairs is set: per pair");
	expect_links_as_pairs(c, p);
	json_decref(c);
	json_decref(p);
}

/* One stage on 4 non-blocking nodes: the all-to-alls meet only the
 * gradient reductions, and start per pair where those hold the NICs. */
Test(classes, training_run_with_class_plans_equals_the_pairwise_run, .timeout = 240)
{
	char *s = mixtral("topologies/dgx-h100.json", 4, 1, 4096, 8);
	expect_as_pairs(s, false, false);
	free(s);
}

/* Two stages of 4 nodes on the 1:1 fat tree, long sequences: pipeline
 * messages cross the NICs while all-to-alls run, which splits them into
 * their pairs mid-flight; the run still equals the pairwise one. */
Test(classes, class_plans_split_by_other_traffic_equal_the_pairwise_run, .timeout = 240)
{
	char *s = mixtral("topologies/dgx-h100-fattree3.json", 8, 2, 16384, 64);
	expect_as_pairs(s, true, false);
	free(s);
}

/* Folded exactly, the posting member posts its group's and its mirror
 * groups' class plans: the same figures as its pairs, split or not. */
Test(classes, exact_folding_with_class_plans_equals_its_pairwise_run, .timeout = 240)
{
	char *s = mixtral_fold("topologies/dgx-h100-fattree3.json", 8, 2, 16384, 64, "exact");
	expect_as_pairs(s, true, true);
	free(s);
}

/* On the 2:1 tree the uplinks can bind: every all-to-all stays per
 * pair, the report says why. */
Test(classes, oversubscribed_tree_falls_back_to_pairs_with_its_reason, .timeout = 240)
{
	char *s = mixtral("topologies/dgx-h100-fattree2-2to1.json", 4, 1, 4096, 8);
	json_t *r = report_of(s, false);
	cr_expect_eq(jnum(r, "simulation/alltoall_class_plans/posted"), 0);
	json_t *why = json_object_get(json_object_get(json_object_get(r, "simulation"),
						      "alltoall_class_plans"), "per_pair_reason");
	cr_expect_str_eq(json_string_value(why),
			 "the fabric's uplinks can bind (an oversubscribed fat tree): per pair");
	json_decref(r);
	free(s);
}
