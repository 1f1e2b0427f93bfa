/* test-links: the per-link traffic of a run (engine/engine_links.c,
 * report.json's links section) against closed forms on a star of P
 * one-GPU nodes (NIC bandwidth B per direction, PCIe wide enough that the
 * NIC bounds every path), ResNet-50 fp32 with its N gradient bytes in one
 * bucket:
 *   ring all-reduce:        every NIC carries 2 (P-1)/P N each way, all of
 *                           it data-parallel, busy 2 (P-1)/P N / B (every
 *                           flow at B), peak utilisation 1
 *   sharded servers (S=P):  a rank pushes (P-1)/P N and its server sends
 *                           back (P-1)/P N: the same 2 (P-1)/P N each way
 *   pipeline (pp 2):        what the ranks sent goes over their NICs
 * Each flow path of the engine is held to one: posted by its own member
 * (unfolded), by the group's posting member (folded exactly), through
 * the parameter servers, as pipeline messages; folded cheaply, only the
 * simulated flows are counted. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "model.h"
#include "report.h"
#include "result.h"
#include "scenario.h"
#include "simulate.h"
#include "testutil.h"

#define P 8
#define NIC_BPS (100e9 / 8)   /* 100 Gb/s */

/* The scenario of the last run_star(): r borrows its inputs. */
static struct scenario *g_sc;
/* The communication object of the runs: one bucket unless a test says. */
static const char *g_comm = "\"algorithm\": \"hierarchical\", \"bucket_MB\": 1000";

/* Simulate model (models/zoo/<model>.json) on `nodes` nodes of the star
 * with the parallel, training and simulation objects given; fills r
 * (done(): freed). */
static void run_model(const char *model, int nodes, const char *parallel, const char *training,
		      const char *simulation, struct result *r)
{
	char *dir = tmp_dir(), text[4096], zoo[128];
	snprintf(zoo, sizeof(zoo), "models/zoo/%s.json", model);
	snprintf(text, sizeof(text),
		 "{ \"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\", \"model\": \"%s\","
		 " \"topology\": \"%s\", \"nodes\": %d, \"parallel\": { %s },"
		 " \"training\": { %s },"
		 " \"communication\": { %s },"
		 " \"simulation\": { %s } }\n",
		 src_path(zoo), src_path("tests/data/topo-star-v100.json"), nodes, parallel, training,
		 g_comm, simulation);
	char *path = write_file(dir, "s.json", text);
	struct diag d;
	diag_init(&d, stderr);
	struct scenario *sc = scenario_load(path, &d);
	cr_assert(sc, "%s", diag_text(&d));
	cr_assert_eq(simulate_run(sc->in, &sc->plan, r, &d), 0, "%s", diag_text(&d));
	g_sc = sc;
	diag_finish(&d);
	free(path), free(dir);
}

/* ResNet-50 fp32, 32 images per GPU, on `nodes` nodes of the star. */
static void run_star(int nodes, const char *parallel, const char *simulation, struct result *r)
{
	char training[128];
	snprintf(training, sizeof(training),
		 "\"global_batch\": %d, \"micro_batch\": 32, \"precision\": \"fp32\"", 32 * nodes);
	run_model("resnet50", nodes, parallel, training, simulation, r);
}

static void done(struct result *r)
{
	result_finish(r);
	scenario_destroy(g_sc);
}

/* ResNet-50's fp32 gradient bytes: N. */
static double grad_bytes(void)
{
	struct diag d;
	diag_init(&d, stderr);
	struct scenario *sc = scenario_load(src_path("scenarios/resnet50-v100-1gpu.json"), &d);
	cr_assert(sc);
	double n = model_params(inputs_model(sc->in)) * 4;
	scenario_destroy(sc);
	diag_finish(&d);
	return n;
}

/* The link named name, or a link of no bytes if the run has none. */
static struct result_link find(const struct result *r, const char *name)
{
	for (int i = 0; i < result_nlinks(r); i++) {
		struct result_link l = result_link(r, i);
		if (!strcmp(l.name, name))
			return l;
	}
	return (struct result_link){ .name = name, .cls = "none" };
}

/* Every NIC of the P nodes carries `want` bytes of category cat each
 * way, and nothing else; with busy_s > 0, busy as `busy_s` and at peak 1. */
static void expect_every_nic(const struct result *r, int cat, double want, double busy_s)
{
	for (int k = 0; k < P; k++)
		for (int up = 0; up < 2; up++) {
			char name[32];
			snprintf(name, sizeof(name), "nic%d_0_%s", k, up ? "UP" : "DOWN");
			struct result_link l = find(r, name);
			cr_expect_str_eq(l.cls, "nic", "%s", name);
			/* a flow's bytes are rounded up to the byte */
			cr_expect_float_eq(l.bytes_by_cat[cat], want, 1e-9 * want + P,
					   "%s carries %.0f bytes, closed form %.0f", name,
					   l.bytes_by_cat[cat], want);
			cr_expect_float_eq(l.bytes, l.bytes_by_cat[cat], 0.5, "%s: only category %d",
					   name, cat);
			if (busy_s > 0) {
				cr_expect_float_eq(l.busy_s, busy_s, 1e-9 * busy_s,
						   "%s busy %.9g s, closed form %.9g s", name, l.busy_s, busy_s);
				cr_expect_float_eq(l.peak_util, 1, 1e-9, "%s peak %g", name, l.peak_util);
			}
		}
}

Test(links, ring_allreduce_puts_its_closed_form_on_every_nic)
{
	struct result r;
	run_star(P, "\"dp_sync\": \"allreduce\"", "\"fold\": \"off\"", &r);
	double n = grad_bytes(), want = 2.0 * (P - 1) / P * n;
	cr_assert_not(r.folded);
	expect_every_nic(&r, CAT_DP_COMM, want, want / NIC_BPS);
	/* the switch's crossbar: every flow crosses it once, not timed */
	double sw = 0;
	for (int i = 0; i < result_nlinks(&r); i++) {
		struct result_link l = result_link(&r, i);
		if (!strcmp(l.cls, "switch")) {
			sw += l.bytes;
			cr_expect_not(l.timed, "%s timed", l.name);
		}
	}
	cr_expect_float_eq(sw, P * want, 1e-9 * P * want + P * P);
	done(&r);
}

/* The link pass reads the links' usage again only where the network
 * changed since its last read (engine_links.c, engine_platform_net_stamp).
 * BERT-large over 4 pipeline stages x 2 replicas, 100 MB buckets: compute
 * tasks end while messages and buckets cross the NICs, steps in which no
 * transfer starts or ends and the links keep their usage. Each of those
 * steps still counts: no link carried more than its bandwidth, busy_s x
 * B >= its bytes (equal where its flows ran at B), and at least one ran
 * at B as long as it was busy. */
Test(links, busy_time_holds_through_steps_of_compute_alone)
{
	g_comm = "\"algorithm\": \"hierarchical\", \"bucket_MB\": 100";
	struct result r;
	run_model("bert-large", P, "\"pp\": 4, \"dp_sync\": \"allreduce\"",
		  "\"global_batch\": 64, \"micro_batch\": 8, \"seq_len\": 512, \"precision\": \"fp32\"",
		  "\"fold\": \"off\"", &r);
	int timed = 0, full = 0;
	for (int i = 0; i < result_nlinks(&r); i++) {
		struct result_link l = result_link(&r, i);
		if (!l.timed || !strcmp(l.cls, "switch"))
			continue;
		timed++;
		cr_expect_geq(l.busy_s * l.bw_Bps, l.bytes * (1 - 1e-9) - P,
			      "%s: %.0f bytes in %.9g s busy at %.4g B/s", l.name, l.bytes, l.busy_s,
			      l.bw_Bps);
		cr_expect_leq(l.peak_util, 1 + 1e-9, "%s peak %g", l.name, l.peak_util);
		full += fabs(l.busy_s * l.bw_Bps - l.bytes) <= 1e-9 * l.bytes + P;
	}
	cr_expect_gt(timed, 0);
	cr_expect_gt(full, 0, "no link ran at its bandwidth whenever busy");
	done(&r);
}

/* Folded (cheaply, or exactly where the representative's own flows
 * stand for its group's, fold_own.c), only the simulated flows count. */
static void expect_only_simulated(const char *fold)
{
	struct result r;
	run_star(P, "\"dp_sync\": \"allreduce\"", fold, &r);
	double n = grad_bytes(), want = 2.0 * (P - 1) / P * n;
	cr_assert(r.folded);
	cr_assert_lt(result_sim(&r).nsimulated, P);
	/* the representative's flow to its ring successor, no more */
	cr_expect_float_eq(find(&r, "nic0_0_UP").bytes, want, 1e-9 * want + P);
	cr_expect_float_eq(find(&r, "nic1_0_DOWN").bytes, want, 1e-9 * want + P);
	for (int k = 2; k < P; k++) {
		char name[32];
		snprintf(name, sizeof(name), "nic%d_0_UP", k);
		cr_expect_eq(find(&r, name).bytes, 0, "%s: a folded rank's flow was counted", name);
	}
	done(&r);
}

Test(links, cheap_folding_counts_only_the_simulated_flows)
{
	expect_only_simulated("\"fold\": \"on\"");
}

Test(links, exact_folding_counts_the_flows_it_posts)
{
	expect_only_simulated("\"fold\": \"exact\"");
}

Test(links, sharded_parameter_servers_match_the_ring_on_every_nic)
{
	struct result r;
	run_star(P, "\"dp_sync\": \"ps\", \"ps\": { \"servers\": 8, \"attach\": \"gpus\" }", "", &r);
	double n = grad_bytes(), want = 2.0 * (P - 1) / P * n;
	expect_every_nic(&r, CAT_DP_COMM, want, 0);
	done(&r);
}

Test(links, pipeline_messages_cross_the_nics)
{
	struct result r;
	run_model("bert-base", 2, "\"pp\": 2, \"dp\": 1",
		  "\"seq_len\": 128, \"global_batch\": 8, \"micro_batch\": 1, \"precision\": \"fp16\"",
		  "\"fold\": \"off\"", &r);
	double sent = 2 * r.comm_bytes_per_gpu[CAT_PP_COMM]; /* both ranks' */
	cr_assert_gt(sent, 0);
	double up = find(&r, "nic0_0_UP").bytes_by_cat[CAT_PP_COMM] +
		    find(&r, "nic1_0_UP").bytes_by_cat[CAT_PP_COMM];
	double down = find(&r, "nic0_0_DOWN").bytes_by_cat[CAT_PP_COMM] +
		      find(&r, "nic1_0_DOWN").bytes_by_cat[CAT_PP_COMM];
	cr_expect_float_eq(up, sent, 1e-9 * sent + 1000, "NICs up carry %.0f, ranks sent %.0f", up, sent);
	cr_expect_float_eq(down, sent, 1e-9 * sent + 1000, "NICs down carry %.0f, ranks sent %.0f", down, sent);
	cr_expect_gt(find(&r, "nic0_0_UP").busy_s, 0);
	done(&r);
}

Test(links, report_json_has_classes_and_top_links_without_crossbars)
{
	struct result r;
	run_star(P, "\"dp_sync\": \"allreduce\"", "\"fold\": \"off\"", &r);
	const char *bad = NULL;
	json_t *j = report_to_json(&r, false, &bad);
	cr_assert(j, "section %s", bad ? bad : "?");
	cr_expect_str_eq(json_string_value(json_object_get(j, "schema_version")), "1.4");
	json_t *links = json_object_get(j, "links");
	cr_assert(links);
	cr_expect(json_is_false(json_object_get(links, "folded")));
	json_t *top = json_object_get(links, "top");
	cr_expect_eq(json_array_size(top), 10);
	size_t i;
	json_t *t;
	json_array_foreach(top, i, t) {
		const char *cls = json_string_value(json_object_get(t, "class"));
		cr_expect(strcmp(cls, "switch") && strcmp(cls, "leaf_switch"), "a crossbar in top: %s",
			  json_string_value(json_object_get(t, "name")));
		cr_expect(json_real_value(json_object_get(json_object_get(t, "bytes_by_category"), "dp")) > 0);
	}
	/* 2 P NIC directions, all data-parallel, in the nic class */
	json_t *c;
	bool nic = false;
	json_array_foreach(json_object_get(links, "classes"), i, c)
		if (!strcmp(json_string_value(json_object_get(c, "class")), "nic")) {
			nic = true;
			cr_expect_eq(json_integer_value(json_object_get(c, "links")), 2 * P);
			cr_expect_float_eq(json_real_value(json_object_get(c, "peak_util_max")), 1, 1e-9);
		}
	cr_expect(nic, "no nic class");
	json_decref(j);
	done(&r);
}

Test(links, link_traffic_bytes_keeps_the_bytes_and_times_nothing)
{
	struct result r;
	run_star(P, "\"dp_sync\": \"allreduce\"", "\"fold\": \"off\", \"link_traffic\": \"bytes\"", &r);
	double n = grad_bytes(), want = 2.0 * (P - 1) / P * n;
	expect_every_nic(&r, CAT_DP_COMM, want, 0);
	for (int i = 0; i < result_nlinks(&r); i++) {
		struct result_link l = result_link(&r, i);
		cr_expect(!l.timed && l.busy_s == 0 && l.peak_util == 0, "%s timed", l.name);
	}
	done(&r);
}

Test(links, link_traffic_off_counts_nothing)
{
	struct result r;
	run_star(P, "\"dp_sync\": \"allreduce\"", "\"fold\": \"off\", \"link_traffic\": \"off\"", &r);
	cr_expect_eq(result_nlinks(&r), 0);
	cr_expect_gt(r.iteration_s, 0);
	done(&r);
}
