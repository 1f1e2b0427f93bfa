/* test-ps: parameter servers (parallel.dp_sync "ps") against the closed
 * forms of the lecture seeds (seed 002): on a star of P one-GPU nodes
 * (NIC bandwidth B, a non-blocking switch), with N gradient bytes in one
 * bucket,
 *   single master (colocated, S = 1):  it receives (P-1) N; a worker's
 *                                      push and pull take 2 (P-1) N / B
 *   sharded servers (colocated, S = P): each rank sends (P-1) N / P;
 *                                      2 (P-1)/P N / B, as a ring all-reduce
 *   dedicated servers (S, NIC B_s):    2 max(N / B, P N / (S B_s))
 *   ring all-reduce:                   2 (P-1) alpha + 2 (P-1)/P N / B
 * plus a few microseconds of path latency per phase. Bad input names the
 * key and says what is wrong. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "diag.h"
#include "engine.h"
#include "model.h"
#include "program.h"
#include "scenario.h"
#include "simulate.h"
#include "testutil.h"

static void expect_error(const char *parallel, const char *extra, const char *topo, int nodes,
			 const char *want_tail);

#define P 8
#define NIC_BPS (100e9 / 8)   /* 100 Gb/s */


/* Simulate ResNet-50 (fp32, one gradient bucket) on P nodes of the star
 * with the parallel object given; fills r. */
static double g_alpha; /* GPU-to-GPU path latency of the star */

static void run_star(const char *parallel, const char *algo, struct result *r)
{
	char *dir = tmp_dir(), text[4096];
	/* one V100 per node behind a 100 Gb/s NIC; PCIe wide enough (1 TB/s)
	 * that the NIC is every path's bottleneck */
	const char *topo = src_path("tests/data/topo-star-v100.json");
	snprintf(text, sizeof(text),
		 "{ \"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\", \"model\": \"%s\","
		 " \"topology\": \"%s\", \"nodes\": %d, \"parallel\": { %s },"
		 " \"training\": { \"global_batch\": %d, \"micro_batch\": 32, \"precision\": \"fp32\" },"
		 " \"communication\": { \"algorithm\": \"%s\", \"bucket_MB\": 1000 } }\n",
		 src_path("models/zoo/resnet50.json"), topo, P, parallel, 32 * P, algo);
	char *path = write_file(dir, "s.json", text);
	struct diag d;
	diag_init(&d, stderr);
	struct scenario *sc = scenario_load(path, &d);
	cr_assert(sc);
	cr_assert_eq(simulate_run(sc->in, &sc->plan, r, &d), 0, "%s", diag_text(&d));
	g_alpha = topology_path_latency(inputs_topology(sc->in), 0, 1);
	scenario_destroy(sc);
	diag_finish(&d);
	free(path), free(dir);
}

/* ResNet-50's fp32 gradient bytes: what a worker pushes to a single
 * dedicated server. */
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

/* alpha: the topology's GPU-to-GPU path latency (NIC, switch, NIC:
 * 2.5 us); a dedicated server's NIC has the node NIC's latency, so a
 * GPU-to-server path has the same alpha */
#define ALPHA g_alpha

Test(ps, single_master_receives_p_minus_1_n)
{
	struct result r;
	run_star("\"dp_sync\": \"ps\", \"ps\": { \"servers\": 1, \"attach\": \"gpus\" }", "ring", &r);
	double n = grad_bytes(), in = 0;
	for (int k = 1; k < P; k++)
		in += r.eng->rank[k].sent_bytes[CAT_DP_COMM];
	cr_expect_float_eq(in, (P - 1) * n, 1e-6 * n, "master receives %g, want (P-1) N = %g", in, (P - 1) * n);
	cr_expect_eq(r.eng->rank[0].sent_bytes[CAT_DP_COMM], 0);
	double want = 2 * (P - 1) * n / NIC_BPS + 2 * ALPHA;
	double got = r.eng->rank[1].comm_s[CAT_DP_COMM];
	cr_expect_float_eq(got, want, 1e-6 * want, "worker's push + pull %.9g s, closed form %.9g s", got, want);
	cr_expect_eq(r.eng->nsimulated, P);
	result_finish(&r);
}

Test(ps, sharded_servers_match_the_ring_bandwidth_term)
{
	struct result r;
	run_star("\"dp_sync\": \"ps\", \"ps\": { \"servers\": 8, \"attach\": \"gpus\" }", "ring", &r);
	double n = grad_bytes();
	for (int k = 0; k < P; k++)
		cr_expect_float_eq(r.eng->rank[k].sent_bytes[CAT_DP_COMM], (P - 1) * n / P, 1e-6 * n);
	double want = 2.0 * (P - 1) / P * n / NIC_BPS + 2 * ALPHA;
	for (int k = 0; k < P; k++) {
		double got = r.eng->rank[k].comm_s[CAT_DP_COMM];
		cr_expect_float_eq(got, want, 1e-6 * want, "rank %d: %.9g s, closed form %.9g s", k, got, want);
	}
	result_finish(&r);
}

Test(ps, ring_allreduce_matches_its_closed_form)
{
	struct result r;
	/* hierarchical with one GPU per node is a plain ring over the nodes:
	 * the fabric's closed form, no NCCL protocol model */
	run_star("\"dp_sync\": \"allreduce\"", "hierarchical", &r);
	double n = grad_bytes();
	double want = 2.0 * (P - 1) * ALPHA + 2.0 * (P - 1) / P * n / NIC_BPS;
	double got = r.eng->rank[0].comm_s[CAT_DP_COMM];
	cr_expect_float_eq(got, want, 1e-6 * want, "ring %.9g s, closed form %.9g s", got, want);
	result_finish(&r);
}

Test(ps, dedicated_servers_share_their_nic_fan_in)
{
	SKIP_UNLESS_FORK_IS_SAFE();
	double n = grad_bytes();
	struct {
		const char *ps;
		double want;
	} c[] = {
		/* 8 workers into 1 server: 8 N through its NIC each way */
		{ "\"servers\": 1", 2 * P * n / NIC_BPS },
		/* 2 servers: 4 N each */
		{ "\"servers\": 2", 2 * P / 2 * n / NIC_BPS },
		/* 8 servers: the worker's own NIC bounds, N each way */
		{ "\"servers\": 8", 2 * n / NIC_BPS },
		/* 2 servers at 400 Gb/s: 4 N / 4B = N / B, as the worker's NIC */
		{ "\"servers\": 2, \"nic_Gbps\": 400", 2 * n / NIC_BPS },
		/* whole buckets in turn: one bucket, all of it to server 0 */
		{ "\"servers\": 4, \"sharding\": \"round_robin\"", 2 * P * n / NIC_BPS },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		/* one simulation per process: fork */
		fflush(NULL);
		pid_t pid = fork();
		cr_assert(pid >= 0);
		if (pid == 0) {
			struct result r;
			char par[256];
			snprintf(par, sizeof(par), "\"dp_sync\": \"ps\", \"ps\": { %s }", c[i].ps);
			run_star(par, "ring", &r);
			double want = c[i].want + 2 * ALPHA;
			double got = r.eng->rank[3].comm_s[CAT_DP_COMM];
			int ok = fabs(got - want) <= 1e-6 * want;
			if (!ok)
				printf("# %s: %.9g s, closed form %.9g s\n", c[i].ps, got, want);
			_exit(ok ? 0 : 1);
		}
		int st;
		waitpid(pid, &st, 0);
		cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 0, "case %s", c[i].ps);
	}
}

/* Asynchronous servers, no straggler: the workers run in lockstep and all
 * push their one bucket at once, so in round i worker j's update lands at
 * position q_j of P; it pulled right after its round-(i-1) update, so its
 * staleness is P - 1 + q_j(i) - q_j(i-1) (round 0: q_j, nothing pulled yet),
 * and the mean over K rounds is ((P-1)/2 + (K-1)(P-1)) / K. */
Test(ps, async_lockstep_staleness_is_p_minus_1)
{
	struct result r;
	run_star("\"dp_sync\": \"ps\", \"ps\": { \"servers\": 1, \"mode\": \"async\", \"iterations\": 6 }",
		 "ring", &r);
	int K = 6;
	cr_expect_eq(r.eng->ps_updates, (long)P * K);
	double want = ((P - 1) / 2.0 + (K - 1) * (P - 1.0)) / K;
	cr_expect_float_eq(r.eng->staleness_mean, want, 1e-9, "mean staleness %g, want %g",
			   r.eng->staleness_mean, want);
	cr_expect_leq(r.eng->staleness_max, 2 * (P - 1));
	result_finish(&r);
}

/* One straggler at 1.5x: synchronous servers wait for it every bucket;
 * asynchronous ones let the others run ahead (the job's rate is the mean
 * of the workers'), and a staleness bound of 0 holds them back to within
 * an iteration of it. Each in its own process. */
static double straggler_iteration(const char *ps)
{
	char par[512];
	snprintf(par, sizeof(par), "\"dp_sync\": \"ps\", \"ps\": { \"servers\": 2%s }", ps);
	char *dir = tmp_dir(), text[4096];
	snprintf(text, sizeof(text),
		 "{ \"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\", \"model\": \"%s\","
		 " \"topology\": \"%s\", \"nodes\": %d, \"parallel\": { %s },"
		 " \"training\": { \"global_batch\": %d, \"micro_batch\": 32, \"precision\": \"fp32\" },"
		 " \"simulation\": { \"stragglers\": { \"ranks\": [3], \"slowdown\": 1.5 } } }\n",
		 src_path("models/zoo/resnet50.json"), src_path("tests/data/topo-star-v100.json"), P, par,
		 32 * P);
	char *path = write_file(dir, "s.json", text), args[2048], *out = NULL;
	snprintf(args, sizeof(args), "run '%s' --out '%s/o' --quiet --format json", path, dir);
	cr_assert_eq(run_ddlsim(args, &out, NULL), 0);
	char o[1100];
	snprintf(o, sizeof(o), "%s/o", dir);
	json_t *rep = load_report(o);
	cr_assert(rep);
	double it = jnum(rep, "summary/iteration_time_s");
	json_decref(rep);
	free(out), free(path), free(dir);
	return it;
}

Test(ps, async_servers_let_workers_pass_a_straggler)
{
	double sync = straggler_iteration("");
	double async = straggler_iteration(", \"mode\": \"async\", \"iterations\": 12");
	double bound0 = straggler_iteration(", \"mode\": \"async\", \"staleness\": 0, \"iterations\": 12");
	cr_log_info("straggler 1.5x: sync %.4f s, async %.4f s, async bound 0 %.4f s", sync, async, bound0);
	cr_expect_lt(async, 0.8 * sync, "async %g vs sync %g", async, sync);
	cr_expect_gt(bound0, async * 1.05, "bound 0 %g vs unbounded %g", bound0, async);
	cr_expect_leq(bound0, sync * (1 + 1e-9));
}

Test(ps, rejects_async_keys_in_sync_mode)
{
	expect_error("\"dp_sync\": \"ps\", \"ps\": { \"staleness\": 2 }", "", "topologies/v100-1gpu-edr.json", 2,
		     "/parallel/ps: error: staleness and iterations apply to mode \"async\" only, got mode \"sync\"");
}

/* Bad input: the exact message. */
static void expect_error(const char *parallel, const char *extra, const char *topo, int nodes,
			 const char *want_tail)
{
	char *dir = tmp_dir(), args[2048], *err = NULL, text[4096], want[2048];
	snprintf(text, sizeof(text),
		 "{ \"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\", \"model\": \"%s\","
		 " \"topology\": \"%s\", \"nodes\": %d, \"parallel\": { %s },"
		 " \"training\": { \"global_batch\": 64, \"micro_batch\": 32, \"precision\": \"fp32\" }%s }\n",
		 src_path("models/zoo/resnet50.json"), src_path(topo), nodes, parallel, extra);
	char *path = write_file(dir, "s.json", text);
	snprintf(args, sizeof(args), "run '%s' --out '%s/o' --quiet", path, dir);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3);
	char tail[1024];
	snprintf(tail, sizeof(tail), want_tail, path);
	snprintf(want, sizeof(want), "%s: %s\n", path, tail);
	cr_expect_str_eq(err, want);
	free(err), free(path), free(dir);
}

Test(ps, rejects_an_unknown_dp_sync)
{
	expect_error("\"dp_sync\": \"gossip\"", "", "topologies/v100-1gpu-edr.json", 2,
		     "/parallel/dp_sync: error: expected one of {allreduce, ps}, got 'gossip'");
}

Test(ps, rejects_ps_keys_without_ps)
{
	expect_error("\"ps\": { \"servers\": 2 }", "", "topologies/v100-1gpu-edr.json", 2,
		     "/parallel/ps: error: applies to parameter servers only (parallel.dp_sync \"ps\"), "
		     "got dp_sync \"allreduce\"");
}

Test(ps, rejects_zero_servers)
{
	expect_error("\"dp_sync\": \"ps\", \"ps\": { \"servers\": 0 }", "", "topologies/v100-1gpu-edr.json", 2,
		     "/parallel/ps/servers: error: must be >= 1, got 0");
}

Test(ps, rejects_more_colocated_servers_than_the_dp_group)
{
	expect_error("\"dp_sync\": \"ps\", \"ps\": { \"servers\": 3, \"attach\": \"gpus\" }", "",
		     "topologies/v100-1gpu-edr.json", 2,
		     "/parallel/ps/servers: error: colocated servers (attach \"gpus\") live on the DP "
		     "group's GPUs: at most dp x cp = 2, got 3");
}

Test(ps, rejects_a_nic_for_colocated_servers)
{
	expect_error("\"dp_sync\": \"ps\", \"ps\": { \"attach\": \"gpus\", \"nic_Gbps\": 100 }", "",
		     "topologies/v100-1gpu-edr.json", 2,
		     "/parallel/ps: error: nic_Gbps and latency_us describe dedicated servers: attach "
		     "\"fabric\" only (colocated servers use their GPU's NIC)");
}

Test(ps, rejects_dedicated_servers_without_a_fabric)
{
	expect_error("\"dp_sync\": \"ps\"", "", "topologies/v100-1gpu-edr.json", 1,
		     "/parallel/ps/attach: error: dedicated servers attach to the fabric core of a "
		     "multi-node job on a non-blocking, rail or two-level fat-tree fabric; topology "
		     "'V100 server, 1 GPU per node, EDR InfiniBand' with 1 nodes has none (use attach \"gpus\")");
}

Test(ps, rejects_zero_sharded_optimizer)
{
	expect_error("\"dp_sync\": \"ps\", \"zero\": 1", "", "topologies/v100-1gpu-edr.json", 2,
		     "/parallel/dp_sync: error: parameter servers hold the whole model and return it "
		     "whole: needs zero 0, got zero 1\n%s: /parallel/zero: error: ZeRO is not supported "
		     "for CNN models, got zero = 1");
}

Test(ps, rejects_forced_folding)
{
	expect_error("\"dp_sync\": \"ps\"", ", \"simulation\": { \"fold\": \"on\" }",
		     "topologies/v100-1gpu-edr.json", 2,
		     "/simulation/fold: error: parameter servers are simulated with every rank: \"on\" "
		     "cannot be used with dp_sync \"ps\"");
}
