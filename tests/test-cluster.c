/* test-cluster: several jobs on one fabric (sim/cluster.h, `ddlsim
 * cluster`). Jobs on disjoint nodes of a non-blocking fabric share no
 * link: together they run as alone, to 1e-9. On the 2:1 fat tree of
 * tests/data/topo-ft-1gpu-2to1.json (one-GPU nodes behind a NIC of
 * bandwidth B, 4 nodes a leaf, a leaf's uplinks 2 B each way), four jobs,
 * each a data-parallel pair with one node on each of two leaves, put four
 * flows on each leaf's uplinks at once: max-min gives each B / 2 where
 * alone it had B. A job's gradients (one bucket, after the backward pass)
 * cross in a ring of two, N bytes on the wire each way (the payload
 * scaled to NCCL's bus bandwidth), N / B alone, so together the iteration
 * is N / B longer, exactly. Bad cluster files name the key. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "coll.h"
#include "diag.h"
#include "model.h"
#include "scenario.h"
#include "testutil.h"

#define NIC_BPS (100e9 / 8)

TestSuite(cluster, .timeout = 300);

/* A ResNet-50 job of `nodes` one-GPU nodes on topology topo into dir. */
static char *job_file(const char *dir, const char *name, const char *topo, int nodes, int bucket_MB)
{
	char text[2048];
	snprintf(text, sizeof(text),
		 "{ \"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\", \"name\": \"%s\","
		 " \"model\": \"%s\", \"topology\": \"%s\", \"nodes\": %d,"
		 " \"training\": { \"global_batch\": %d, \"micro_batch\": 32, \"precision\": \"fp32\" },"
		 " \"communication\": { \"algorithm\": \"ring\", \"bucket_MB\": %d } }\n",
		 name, src_path("models/zoo/resnet50.json"), src_path(topo), nodes, 32 * nodes, bucket_MB);
	char file[128];
	snprintf(file, sizeof(file), "%s.json", name);
	return write_file(dir, file, text);
}

/* Run `ddlsim cluster` on text in dir; the report, or NULL (exit code in
 * *rc, stderr in *err when err). */
static json_t *run_cluster(const char *dir, const char *text, int *rc, char **err)
{
	char *path = write_file(dir, "c.json", text), args[2048];
	snprintf(args, sizeof(args), "cluster '%s' --out '%s/o' -q -j 2", path, dir);
	*rc = run_ddlsim(args, NULL, err);
	free(path);
	if (*rc)
		return NULL;
	char rep[1024];
	snprintf(rep, sizeof(rep), "%s/o/cluster.json", dir);
	return json_load_file(rep, 0, NULL);
}

static double job_fig(json_t *rep, int i, const char *way, const char *key)
{
	json_t *j = json_array_get(json_object_get(rep, "jobs"), (size_t)i);
	return json_number_value(json_object_get(json_object_get(j, way), key));
}

Test(cluster, disjoint_jobs_on_a_nonblocking_fabric_run_as_alone)
{
	char *dir = tmp_dir(), text[2048];
	char *a = job_file(dir, "a", "tests/data/topo-star-v100.json", 4, 25);
	char *b = job_file(dir, "b", "tests/data/topo-star-v100.json", 3, 25);
	const char *placement[] = { "packed", "spread" };
	for (int p = 0; p < 2; p++) {
		snprintf(text, sizeof(text),
			 "{ \"schema\": \"ddlsim.cluster\", \"schema_version\": \"1.0\", \"name\": \"t\","
			 " \"nodes\": 8, \"placement\": \"%s\", \"jobs\": ["
			 " { \"name\": \"a\", \"scenario\": \"%s\" }, { \"name\": \"b\", \"scenario\": \"%s\" } ] }\n",
			 placement[p], a, b);
		int rc;
		json_t *rep = run_cluster(dir, text, &rc, NULL);
		cr_assert_eq(rc, 0);
		cr_assert(rep);
		for (int i = 0; i < 2; i++) {
			double alone = job_fig(rep, i, "alone", "iteration_time_s");
			double shared = job_fig(rep, i, "shared", "iteration_time_s");
			cr_assert_gt(alone, 0);
			cr_expect_float_eq(shared, alone, 1e-9 * alone, "%s job %d: %.12g vs %.12g", placement[p], i,
					   shared, alone);
		}
		/* one switch's crossbar is all they share, and it binds none */
		cr_expect_eq(json_array_size(json_object_get(rep, "shared_links")), 0);
		/* spread: a on 0, 2, 4, 6; b on 1, 3, 5 */
		json_t *nodes = json_object_get(json_array_get(json_object_get(rep, "jobs"), 1), "nodes");
		cr_expect_eq(json_integer_value(json_array_get(nodes, 1)), p ? 3 : 5);
		json_decref(rep);
	}
	free(a), free(b), free(dir);
}

Test(cluster, jobs_sharing_a_leaf_uplink_share_it_max_min)
{
	char *dir = tmp_dir(), text[4096];
	char *job = job_file(dir, "pair", "tests/data/topo-ft-1gpu-2to1.json", 2, 1000);
	/* job k on node k of leaf 0 and node 4 + k of leaf 1 */
	int len = snprintf(text, sizeof(text), "{ \"schema\": \"ddlsim.cluster\", \"schema_version\": \"1.0\","
			   " \"name\": \"t\", \"nodes\": 8, \"jobs\": [");
	for (int k = 0; k < 4; k++)
		len += snprintf(text + len, sizeof(text) - (size_t)len,
				"%s { \"name\": \"j%d\", \"scenario\": \"%s\", \"nodes\": [%d, %d] }", k ? "," : "", k,
				job, k, 4 + k);
	snprintf(text + len, sizeof(text) - (size_t)len, " ] }\n");
	int rc;
	json_t *rep = run_cluster(dir, text, &rc, NULL);
	cr_assert_eq(rc, 0);
	cr_assert(rep);

	struct diag d;
	diag_init(&d, stderr);
	struct scenario *sc = scenario_load(job, &d);
	cr_assert(sc, "%s", diag_text(&d));
	/* the bytes on the wire: fp32 gradients, scaled to NCCL's bus
	 * bandwidth (coll_plan.wire_scale) */
	int ranks[2] = { 0, 1 };
	struct coll_plan *p = coll_plan_create(inputs_topology(sc->in), "ring", COLL_ALLREDUCE, ranks, 2,
					       model_params(inputs_model(sc->in)) * 4);
	cr_assert(p);
	double n = 0;
	for (int i = 0; i < p->nflows; i++)
		n += p->flows[i].src == 0 ? p->flows[i].bytes : 0;
	cr_expect_geq(n, model_params(inputs_model(sc->in)) * 4);
	coll_plan_destroy(p);
	scenario_destroy(sc);
	diag_finish(&d);
	/* the hottest shared links: the leaves' uplinks, full while the four
	 * jobs' flows cross, each job's wire bytes on them */
	json_t *hot = json_array_get(json_object_get(rep, "shared_links"), 0);
	cr_assert(hot);
	cr_expect_str_eq(json_string_value(json_object_get(hot, "class")), "leaf_uplink");
	cr_expect_float_eq(json_number_value(json_object_get(hot, "peak_util")), 1, 1e-9);
	json_t *by = json_object_get(hot, "bytes_by_job");
	cr_expect_eq(json_object_size(by), 4);
	cr_expect_float_eq(json_number_value(json_object_get(by, "j2")), n, 1.0, "%.1f vs %.1f",   /* whole bytes */
			   json_number_value(json_object_get(by, "j2")), n);
	for (int i = 0; i < 4; i++) {
		double alone = job_fig(rep, i, "alone", "iteration_time_s");
		double shared = job_fig(rep, i, "shared", "iteration_time_s");
		cr_expect_float_eq(shared - alone, n / NIC_BPS, 1e-6 * shared, "job %d: %.9g - %.9g vs N / B %.9g",
				   i, shared, alone, n / NIC_BPS);
	}
	json_decref(rep);
	free(job), free(dir);
}

/* On the 4:1 tree of tests/data/topo-ft-1gpu-4to1.json (a leaf's uplinks
 * one NIC's worth), two rings of 4 nodes: packed, each on a leaf of its
 * own, share nothing; spread (0, 2, 4, 6 and 1, 3, 5, 7), each crosses
 * both ways between the leaves, where one flow fits the uplinks alone and
 * two share them: spread is slower together than alone, packed is not, and
 * packed loses least. */
Test(cluster, placements_name_the_one_that_loses_least)
{
	char *dir = tmp_dir(), text[2048];
	char *job = job_file(dir, "ring4", "tests/data/topo-ft-1gpu-4to1.json", 4, 1000);
	snprintf(text, sizeof(text),
		 "{ \"schema\": \"ddlsim.cluster\", \"schema_version\": \"1.0\", \"name\": \"t\","
		 " \"nodes\": 8, \"placement\": \"spread\", \"jobs\": ["
		 " { \"name\": \"a\", \"scenario\": \"%s\" }, { \"name\": \"b\", \"scenario\": \"%s\" } ] }\n",
		 job, job);
	char *path = write_file(dir, "c.json", text), args[2048];
	snprintf(args, sizeof(args), "cluster '%s' --out '%s/o' -q -j 2 --placements", path, dir);
	cr_assert_eq(run_ddlsim(args, NULL, NULL), 0);
	snprintf(args, sizeof(args), "%s/o/cluster.json", dir);
	json_t *rep = json_load_file(args, 0, NULL);
	cr_assert(rep);
	json_t *pl = json_object_get(rep, "placements");
	cr_assert_eq(json_array_size(pl), 2);
	double packed = json_number_value(json_object_get(json_array_get(pl, 0), "mean_slowdown"));
	double spread = json_number_value(json_object_get(json_array_get(pl, 1), "mean_slowdown"));
	cr_expect_lt(fabs(packed), 1e-9, "packed %g", packed);
	cr_expect_gt(spread, 0.01, "spread %g", spread);
	cr_expect_str_eq(json_string_value(json_object_get(rep, "least_loss_placement")), "packed");
	/* the main table is the file's placement: spread */
	double main_a = job_fig(rep, 0, "shared", "iteration_time_s");
	double spread_a = json_number_value(json_object_get(json_array_get(json_object_get(json_array_get(pl, 1), "jobs"), 0),
							    "shared_iteration_time_s"));
	cr_expect_float_eq(main_a, spread_a, 1e-12 * main_a);
	json_decref(rep);
	free(path), free(job), free(dir);
}

/* A bad cluster file: exit 3 and the message's part want. jobs names
 * two scenarios (%s twice): job files of two one-GPU nodes on the test
 * star, the second on another topology when other. */
static void expect_bad_on(const char *jobs, int nodes, const char *want, bool other)
{
	char *dir = tmp_dir(), text[4096], *err = NULL;
	char *a = job_file(dir, "a", "tests/data/topo-star-v100.json", 2, 25);
	char *b = job_file(dir, "b", "topologies/v100-1gpu-edr.json", 2, 25);
	char js[2048];
	snprintf(js, sizeof(js), jobs, a, other ? b : a);
	snprintf(text, sizeof(text), "{ \"schema\": \"ddlsim.cluster\", \"schema_version\": \"1.0\","
		 " \"name\": \"t\", \"nodes\": %d, \"jobs\": [ %s ] }\n", nodes, js);
	int rc;
	json_t *rep = run_cluster(dir, text, &rc, &err);
	cr_expect_eq(rc, 3, "%s", err ? err : "");
	cr_expect(err && strstr(err, want), "wanted '%s' in: %s", want, err ? err : "(none)");
	json_decref(rep);
	free(err), free(a), free(b), free(dir);
}

static void expect_bad(const char *jobs, int nodes, const char *want)
{
	expect_bad_on(jobs, nodes, want, false);
}

Test(cluster, rejects_overlapping_nodes)
{
	expect_bad("{ \"name\": \"a\", \"scenario\": \"%s\", \"nodes\": [0, 1] },"
		   " { \"name\": \"b\", \"scenario\": \"%s\", \"nodes\": [1, 2] }", 4,
		   "/jobs/1/nodes/0: error: expected a node no other job holds, found node 1 (job 'a' holds it)");
}

Test(cluster, rejects_a_node_listed_twice)
{
	expect_bad("{ \"name\": \"a\", \"scenario\": \"%s\", \"nodes\": [0, 0] }, { \"name\": \"b\", \"scenario\": \"%s\" }",
		   4, "/jobs/0/nodes/1: error: expected each node once, found node 0 again");
}

/* a node count beyond what any fabric builds is refused at load, before
 * placing 2^31 nodes (it ran past a minute, then failed with exit 1) */
Test(cluster, rejects_more_nodes_than_ddlsim_simulates)
{
	expect_bad("{ \"name\": \"a\", \"scenario\": \"%s\" }, { \"name\": \"b\", \"scenario\": \"%s\" }",
		   2147483647, "c.json: /nodes: error: expected at most 16384 nodes, the most ddlsim simulates, "
		   "got 2147483647");
}

Test(cluster, rejects_more_nodes_than_the_fabric)
{
	expect_bad("{ \"name\": \"a\", \"scenario\": \"%s\" }, { \"name\": \"b\", \"scenario\": \"%s\" }", 3,
		   "/nodes: error: expected room for the jobs: they need 4 more nodes, the fabric has 3 free of 3");
}

Test(cluster, rejects_jobs_on_different_topologies)
{
	expect_bad_on("{ \"name\": \"a\", \"scenario\": \"%s\" }, { \"name\": \"b\", \"scenario\": \"%s\" }", 4,
		      "/jobs/1/scenario: error: expected a scenario on the fabric of job 'a'", true);
}

Test(cluster, rejects_an_unknown_key_and_a_duplicate_name)
{
	expect_bad("{ \"name\": \"a\", \"scenario\": \"%s\", \"gpus\": 2 }, { \"name\": \"b\", \"scenario\": \"%s\" }",
		   4, "/jobs/0");
	expect_bad("{ \"name\": \"a\", \"scenario\": \"%s\" }, { \"name\": \"a\", \"scenario\": \"%s\" }", 4,
		   "/jobs/1/name: error: expected a name no other job has, found 'a'");
}

Test(cluster, rejects_a_wrong_node_list)
{
	expect_bad("{ \"name\": \"a\", \"scenario\": \"%s\", \"nodes\": [0] }, { \"name\": \"b\", \"scenario\": \"%s\" }",
		   4, "/jobs/0/nodes: error: expected the 2 nodes the scenario runs on, found 1");
	expect_bad("{ \"name\": \"a\", \"scenario\": \"%s\", \"nodes\": [0, 9] }, { \"name\": \"b\", \"scenario\": \"%s\" }",
		   4, "/jobs/0/nodes/1: error: expected a node of the fabric, 0 to 3, found 9");
}
