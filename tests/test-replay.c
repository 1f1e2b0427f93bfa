/* test-replay: private collectives posted as one member's flows
 * (engine/engine_replay.c) against the posted run.
 *
 * A tensor-parallel ring inside an NVSwitch node whose other traffic
 * leaves through the NICs is private: its first instance posts every
 * flow, the later ones k flows on one route; each instance takes the time
 * the first took, to the last bits, and every NVLink port it crosses is
 * as busy as if all had been posted. A ring whose ports a data-parallel
 * group inside the same node also crosses is not private: every instance
 * posts its flows. Each test runs one simulation (Criterion forks a
 * process per test, and SimGrid runs once per process). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "coll.h"
#include "engine.h"
#include "testutil.h"

#define K 6             /* tensor-parallel collectives per iteration */

/* nodes of 8 GPUs on an NVSwitch (300 GB/s, 1 us), one 200 Gb/s NIC
 * each, a non-blocking fabric. */
static struct topology *topo(void)
{
	static const char text[] =
		"{\"schema\":\"ddlsim.topology\",\"schema_version\":\"1.0\",\"name\":\"t\",\"source\":\"test\","
		"\"gpu\":{\"name\":\"g\",\"peak_tflops\":{\"fp32\":1,\"bf16\":100},\"hbm_GB\":80,"
		"\"hbm_bw_GBps\":1000,\"sm_count\":100},"
		"\"node\":{\"gpus\":8,\"intra\":{\"kind\":\"nvswitch\",\"bw_GBps\":300,\"latency_us\":1},"
		"\"nics\":{\"count\":1,\"bw_Gbps\":200,\"latency_us\":1,\"gpus\":[[0,1,2,3,4,5,6,7]]}},"
		"\"fabric\":{\"kind\":\"nonblocking\",\"latency_us\":1}}";
	return load_topology_text(text);
}

/* Rank 0's tensor-parallel collectives as they ended, in order. */
static double g_tp_s[K];
static int g_ntp;

static void on_task_end(void *ctx, int rank, const struct program *prog, int ti, double start_s,
			double end_s, int peer)
{
	(void)ctx, (void)peer;
	if (rank == 0 && prog->t[ti].kind == TASK_COLL && prog->t[ti].group == GROUP_TP &&
	    g_ntp < K)
		g_tp_s[g_ntp++] = end_s - start_s;
}

/* K x (compute, TP all-reduce of 64 MB), then a DP all-reduce, on tp x
 * dp ranks of `nodes` nodes, unfolded; res filled. */
static void run_tp(int nodes, int tp, int dp, struct engine_result *res)
{
	struct topology *t = topo();
	struct program p;
	struct program *pp[1] = { &p };
	program_init(&p);
	int dep = -1;
	for (int k = 0; k < K; k++) {
		int c = program_compute(&p, CAT_FORWARD, 1e-3, 0, 0, 0, &dep, 1);
		dep = program_coll(&p, STREAM_TP, CAT_TP_COMM, COLL_ALLREDUCE, GROUP_TP, 64e6, 1, &c, 1);
	}
	program_coll(&p, STREAM_DP, CAT_DP_COMM, COLL_ALLREDUCE, GROUP_DP, 256e6, 1, &dep, 1);
	struct placement pl;
	cr_assert_eq(placement_init(&pl, tp, dp, 1, NULL), 0);
	struct engine_observer obs = { .task_end = on_task_end };
	struct engine_job job = { .topo = t, .nodes = nodes, .pl = &pl, .stage_prog = pp,
				  .coll_algo = "ring", .obs = &obs };
	struct diag dg;
	diag_init(&dg, stderr);
	cr_assert_eq(engine_run(&job, res, &dg), 0, "%s", diag_text(&dg));
	diag_finish(&dg);
	program_finish(&p);
	topology_destroy(t);
}

/* TP 8 fills each node, DP 2 leaves through the NICs: the rings are
 * private. Every instance takes the first's time (posted), to 1e-12;
 * every NVLink port is as busy, to the last bit, as those the replay
 * posts on (read at the clock's steps), and as K flow phases of the
 * first instance. */
Test(replay, private_tp_ring_takes_the_posted_time_and_busy_time)
{
	struct engine_result res;
	run_tp(2, 8, 2, &res);
	cr_assert_eq(g_ntp, K);
	cr_expect_eq(res.replayed, 2 * (K - 1), "replayed %ld of %d", res.replayed, 2 * (K - 1));
	for (int k = 1; k < K; k++)
		cr_expect_float_eq(g_tp_s[k], g_tp_s[0], 1e-12 * g_tp_s[0],
				   "instance %d: %.17g s, posted %.17g s", k, g_tp_s[k], g_tp_s[0]);
	/* the flow phase: the collective less its latency, charged once */
	int ranks[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	struct topology *t = topo();
	struct coll_plan *cp = coll_plan_create(t, "ring", COLL_ALLREDUCE, ranks, 8, 64e6);
	double phase = g_tp_s[0] - (cp->extra_latency_s + cp->alpha_s);
	coll_plan_destroy(cp);
	topology_destroy(t);
	cr_assert_gt(phase, 0);
	int ports = 0;
	double busy0 = -1;
	for (int i = 0; i < res.nlinks; i++) {
		const struct engine_link_stats *l = &res.links[i];
		if (!l->timed || l->bytes[CAT_TP_COMM] <= 0 || l->bytes[CAT_DP_COMM] > 0)
			continue;
		ports++;
		/* read at the clock's steps or given them by the replay: the same sums */
		if (busy0 < 0)
			busy0 = l->busy_s;
		cr_expect_eq(l->busy_s, busy0, "%s busy %.17g s, another port %.17g", l->name, l->busy_s,
			     busy0);
		cr_expect_float_eq(l->busy_s, K * phase, 1e-9 * K * phase, "%s busy %.17g s, want %.17g",
				   l->name, l->busy_s, K * phase);
		cr_expect_float_eq(l->peak_util, 1, 1e-9, "%s peak %g", l->name, l->peak_util);
	}
	cr_expect_geq(ports, 16, "NVLink ports timed: %d", ports);
	engine_result_finish(&res);
}

/* TP 4 x DP 2 in one node: the data-parallel flows cross the NVLink
 * ports of the tensor-parallel rings, which are not private: nothing is
 * replayed. */
Test(replay, tp_ring_sharing_ports_with_dp_is_posted)
{
	struct engine_result res;
	run_tp(1, 4, 2, &res);
	cr_assert_eq(g_ntp, K);
	cr_expect_eq(res.replayed, 0, "replayed %ld", res.replayed);
	engine_result_finish(&res);
}

/* Nodes of 2 GPUs joined by NVLink, a NIC each, a non-blocking fabric:
 * with PP 4 innermost, stages 0-1 and 2-3 of a replica share a node and
 * the adjacent stages' messages cross NICs 1 of each node alone. */
static struct topology *topo_pairs(void)
{
	static const char text[] =
		"{\"schema\":\"ddlsim.topology\",\"schema_version\":\"1.1\",\"name\":\"t2\",\"source\":\"test\","
		"\"gpu\":{\"name\":\"g\",\"peak_tflops\":{\"fp32\":1,\"bf16\":100},\"hbm_GB\":80,"
		"\"hbm_bw_GBps\":1000,\"sm_count\":100},"
		"\"node\":{\"gpus\":2,\"intra\":{\"kind\":\"nvlink_mesh\",\"lane_bw_GBps\":25,\"latency_us\":1,"
		"\"host_bw_GBps\":64,\"links\":[[0,1,4]]},"
		"\"nics\":{\"count\":2,\"bw_Gbps\":400,\"latency_us\":1,\"gpus\":[[0],[1]]}},"
		"\"fabric\":{\"kind\":\"nonblocking\",\"latency_us\":1}}";
	return load_topology_text(text);
}

static double g_dp_s[K];
static int g_ndp;

static void on_dp_end(void *ctx, int rank, const struct program *prog, int ti, double start_s,
		      double end_s, int peer)
{
	(void)ctx, (void)peer;
	if (rank == 0 && prog->t[ti].kind == TASK_COLL && prog->t[ti].group == GROUP_DP &&
	    g_ndp < K)
		g_dp_s[g_ndp++] = end_s - start_s;
}

/* An interleaved pipeline's message wraps around: the first stage's
 * chunk c + 1 sends its gradients back to the last stage's chunk c,
 * out of the NIC of a first-stage rank that no adjacent stages' message
 * crosses. Stage 0's data-parallel group (ranks 0 and 4, a NIC each)
 * shares that NIC with it, so it is not private: every all-reduce is
 * posted, and those the message meets take longer than the last.
 * (Mutated: the wrapped pair left out of engine_replay_init's marking,
 * the group was private and 5 of its all-reduces replayed.) */
Test(replay, dp_group_under_a_wrapped_pipeline_message_is_posted)
{
	struct topology *t = topo_pairs();
	struct program p[4];
	struct program *pp[4] = { &p[0], &p[1], &p[2], &p[3] };
	for (int s = 0; s < 4; s++)
		program_init(&p[s]);
	int dep = -1;
	for (int k = 0; k < K; k++) {
		int c = program_compute(&p[0], CAT_FORWARD, 1e-4, 0, 0, 0, dep < 0 ? NULL : &dep,
					dep < 0 ? 0 : 1);
		dep = program_coll(&p[0], STREAM_DP, CAT_DP_COMM, COLL_ALLREDUCE, GROUP_DP, 256e6, 1, &c,
				   1);
	}
	struct task r = { .kind = TASK_RECV, .stream = STREAM_RECV_NEXT, .cat = CAT_PP_COMM,
			  .dir = P2P_BWD, .bytes = 1e9 };
	program_add(&p[3], &r, NULL, 0);
	struct task s = { .kind = TASK_SEND, .stream = STREAM_SEND, .cat = CAT_PP_COMM,
			  .dir = P2P_BWD, .bytes = 1e9 };
	program_add(&p[0], &s, NULL, 0);
	program_compute(&p[1], CAT_FORWARD, 1e-4, 0, 0, 0, NULL, 0);
	program_compute(&p[2], CAT_FORWARD, 1e-4, 0, 0, 0, NULL, 0);
	struct placement pl;
	cr_assert_eq(placement_init(&pl, 1, 2, 4, "tp,pp,dp"), 0);
	struct engine_observer obs = { .task_end = on_dp_end };
	struct engine_job job = { .topo = t, .nodes = 4, .pl = &pl, .stage_prog = pp,
				  .coll_algo = "ring", .obs = &obs };
	struct engine_result res;
	struct diag dg;
	diag_init(&dg, stderr);
	cr_assert_eq(engine_run(&job, &res, &dg), 0, "%s", diag_text(&dg));
	diag_finish(&dg);
	cr_assert_eq(g_ndp, K);
	cr_expect_eq(res.replayed, 0, "replayed %ld", res.replayed);
	cr_expect_gt(g_dp_s[0], 1.01 * g_dp_s[K - 1], "first all-reduce %.17g s, last %.17g s",
		     g_dp_s[0], g_dp_s[K - 1]);
	engine_result_finish(&res);
	for (int st = 0; st < 4; st++)
		program_finish(&p[st]);
	topology_destroy(t);
}

/* Mixed GPUs (job.rank_prog): rank r's TP all-reduce times, in order. */
#define MIXED_RANKS 16
static double g_mixed_s[MIXED_RANKS][K];
static int g_nmixed[MIXED_RANKS];

static void on_mixed_end(void *ctx, int rank, const struct program *prog, int ti, double start_s,
			 double end_s, int peer)
{
	(void)ctx, (void)peer;
	if (rank < MIXED_RANKS && prog->t[ti].kind == TASK_COLL && prog->t[ti].group == GROUP_TP &&
	    g_nmixed[rank] < K)
		g_mixed_s[rank][g_nmixed[rank]++] = end_s - start_s;
}

/* What a mixed run gives: its iteration, every rank's TP all-reduce
 * times, every link's busy time (of at most 256 links). */
struct mixed_figs {
	double iteration_s;
	double tp_s[MIXED_RANKS][K];
	int nlinks;
	double busy_s[256];
	double bytes_B[256][CAT_N];     /* every link's bytes, by category */
	double sent_B[MIXED_RANKS];     /* every rank's TP payload */
	long replayed, flows;
};

/* TP 8 x DP 2 on two nodes: node 0's ranks replay p, node 1's q (its
 * GPUs' own programs: other compute times, the tp_bytes of each TP
 * all-reduce); posted: every collective's flows posted. */
static void run_mixed(double tp_bytes, bool posted, struct mixed_figs *out)
{
	struct topology *t = topo();
	struct program p, q;
	struct program *pp[1] = { &p }, *rank_prog[MIXED_RANKS];
	program_init(&p);
	program_init(&q);
	int dp = -1, dq = -1;
	for (int k = 0; k < K; k++) {
		int c = program_compute(&p, CAT_FORWARD, 1e-3, 0, 0, 0, &dp, 1);
		dp = program_coll(&p, STREAM_TP, CAT_TP_COMM, COLL_ALLREDUCE, GROUP_TP, 64e6, 1, &c, 1);
		c = program_compute(&q, CAT_FORWARD, 2.5e-3, 0, 0, 0, &dq, 1);
		dq = program_coll(&q, STREAM_TP, CAT_TP_COMM, COLL_ALLREDUCE, GROUP_TP, tp_bytes, 1, &c, 1);
	}
	program_coll(&p, STREAM_DP, CAT_DP_COMM, COLL_ALLREDUCE, GROUP_DP, 256e6, 1, &dp, 1);
	program_coll(&q, STREAM_DP, CAT_DP_COMM, COLL_ALLREDUCE, GROUP_DP, 256e6, 1, &dq, 1);
	for (int r = 0; r < MIXED_RANKS; r++)
		rank_prog[r] = r < 8 ? &p : &q;
	struct placement pl;
	cr_assert_eq(placement_init(&pl, 8, 2, 1, NULL), 0);
	struct engine_observer obs = { .task_end = on_mixed_end };
	struct engine_job job = { .topo = t, .nodes = 2, .pl = &pl, .stage_prog = pp,
				  .rank_prog = rank_prog, .coll_algo = "ring", .obs = &obs,
				  .collective_flows = posted };
	struct engine_result res;
	struct diag dg;
	diag_init(&dg, stderr);
	cr_assert_eq(engine_run(&job, &res, &dg), 0, "%s", diag_text(&dg));
	diag_finish(&dg);
	memset(out, 0, sizeof(*out));
	out->iteration_s = res.iteration_s;
	out->replayed = res.replayed;
	for (int r = 0; r < MIXED_RANKS; r++) {
		cr_assert_eq(g_nmixed[r], K, "rank %d ran %d TP all-reduces", r, g_nmixed[r]);
		memcpy(out->tp_s[r], g_mixed_s[r], sizeof(out->tp_s[r]));
	}
	cr_assert_leq(res.nlinks, 256);
	out->nlinks = res.nlinks;
	for (int i = 0; i < res.nlinks; i++) {
		out->busy_s[i] = res.links[i].busy_s;
		memcpy(out->bytes_B[i], res.links[i].bytes, sizeof(out->bytes_B[i]));
	}
	for (int r = 0; r < MIXED_RANKS; r++)
		out->sent_B[r] = res.rank[r].sent_bytes[CAT_TP_COMM];
	out->flows = res.flows;
	engine_result_finish(&res);
	program_finish(&p);
	program_finish(&q);
	topology_destroy(t);
}

/* Run run(true, out) in a child process (SimGrid runs once per process)
 * and read its figures back into out (size bytes). */
static void posted_in_child(void (*run)(bool posted, void *out), void *out, size_t size)
{
	int fd[2];
	cr_assert_eq(pipe(fd), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		close(fd[0]);
		run(true, out);
		ssize_t w = write(fd[1], out, size);
		_exit(w == (ssize_t)size ? 0 : 1);
	}
	close(fd[1]);
	size_t got = 0;
	while (got < size) {
		ssize_t n = read(fd[0], (char *)out + got, size - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd[0]);
	int status;
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0 && got == size,
		  "the posted run failed");
}

/* run_mixed with 64 MB TP all-reduces on both nodes (posted_in_child). */
static void run_mixed_64mb(bool posted, void *figs)
{
	run_mixed(64e6, posted, figs);
}

/* Mixed GPUs: node 1's ranks compute 2.5 x as long, with the same
 * collectives. Their TP rings are private all the same (a rank's
 * compute times only move when it reaches the barrier, as a
 * straggler's do): both nodes' rings replay after their first
 * instance, and the run's figures are the posted run's, bit for bit
 * (the posted run in a child process: SimGrid runs once per process).
 * (Mutated: per-rank programs excluded from the replay again, as
 * before this test, nothing was replayed.) */
Test(replay, mixed_gpus_with_the_same_collectives_replay_as_posted)
{
	SKIP_UNLESS_FORK_IS_SAFE();
	static struct mixed_figs posted, replayed;
	posted_in_child(run_mixed_64mb, &posted, sizeof(posted));
	run_mixed(64e6, false, &replayed);
	cr_expect_eq(posted.replayed, 0);
	cr_expect_eq(replayed.replayed, 2 * (K - 1), "replayed %ld of %d", replayed.replayed,
		     2 * (K - 1));
	cr_expect_eq(replayed.iteration_s, posted.iteration_s, "iteration %.17g s, posted %.17g s",
		     replayed.iteration_s, posted.iteration_s);
	/* node 1's slower compute paces the run */
	cr_expect_gt(posted.iteration_s, K * 2.5e-3);
	for (int r = 0; r < MIXED_RANKS; r++)
		for (int k = 0; k < K; k++)
			cr_expect_eq(replayed.tp_s[r][k], posted.tp_s[r][k],
				     "rank %d all-reduce %d: %.17g s, posted %.17g s", r, k,
				     replayed.tp_s[r][k], posted.tp_s[r][k]);
	cr_assert_eq(replayed.nlinks, posted.nlinks);
	for (int i = 0; i < posted.nlinks; i++)
		cr_expect_eq(replayed.busy_s[i], posted.busy_s[i], "link %d busy %.17g s, posted %.17g s",
			     i, replayed.busy_s[i], posted.busy_s[i]);
	/* the replay counts what the posted run posts: every flow, every
	 * link's bytes by category (the replayed instances' added after the
	 * run, engine_replay_flush), every rank's payload. (Mutated: the
	 * flush left out, the NVLink ports' TP bytes fell to the first
	 * instance's.) */
	cr_expect_eq(replayed.flows, posted.flows, "flows %ld, posted %ld", replayed.flows,
		     posted.flows);
	for (int i = 0; i < posted.nlinks; i++)
		for (int c = 0; c < CAT_N; c++)
			cr_expect_eq(replayed.bytes_B[i][c], posted.bytes_B[i][c],
				     "link %d category %d: %.17g B, posted %.17g B", i, c,
				     replayed.bytes_B[i][c], posted.bytes_B[i][c]);
	for (int r = 0; r < MIXED_RANKS; r++)
		cr_expect_eq(replayed.sent_B[r], posted.sent_B[r], "rank %d sent %.17g B, posted %.17g B",
			     r, replayed.sent_B[r], posted.sent_B[r]);
}

/* Mixed GPUs whose programs' collectives differ (node 1's TP all-reduces
 * of 32 MB, not 64): the plans found over the stage's program are not
 * every rank's, so nothing is private and every collective is posted.
 * (Mutated: the check of the ranks' collectives removed, node 0's 5
 * later rings replayed on plans found over the stage's program alone.) */
Test(replay, mixed_gpus_with_other_collectives_post_every_flow)
{
	static struct mixed_figs figs;
	run_mixed(32e6, false, &figs);
	cr_expect_eq(figs.replayed, 0, "replayed %ld", figs.replayed);
}

/* What a run beside compute gives: its iteration and every rank's
 * compute slowed by the collectives beside it. */
struct overlap_figs {
	double iteration_s;
	double interference_s[8];
	long replayed;
};

/* TP 8 on one node, K x (compute, TP all-reduce of 64 MB) where each
 * compute waits for the previous compute alone, not for the all-reduce:
 * the all-reduce k runs beside compute k + 1, whose SMs it takes (the
 * GPU's 100 SMs, engine_comm_busy). */
static void run_overlap(bool posted, void *figs)
{
	struct overlap_figs *out = figs;
	struct topology *t = topo();
	struct program p;
	struct program *pp[1] = { &p };
	program_init(&p);
	int c = -1;
	for (int k = 0; k < K; k++) {
		c = program_compute(&p, CAT_FORWARD, 1e-3, 0, 0, 0, c < 0 ? NULL : &c, c < 0 ? 0 : 1);
		program_coll(&p, STREAM_TP, CAT_TP_COMM, COLL_ALLREDUCE, GROUP_TP, 64e6, 1, &c, 1);
	}
	struct placement pl;
	cr_assert_eq(placement_init(&pl, 8, 1, 1, NULL), 0);
	struct engine_job job = { .topo = t, .nodes = 1, .pl = &pl, .stage_prog = pp,
				  .coll_algo = "ring", .collective_flows = posted,
				  .overlap = { .sm_count = 100 } };
	struct engine_result res;
	struct diag dg;
	diag_init(&dg, stderr);
	cr_assert_eq(engine_run(&job, &res, &dg), 0, "%s", diag_text(&dg));
	diag_finish(&dg);
	memset(out, 0, sizeof(*out));
	out->iteration_s = res.iteration_s;
	out->replayed = res.replayed;
	for (int r = 0; r < 8; r++)
		out->interference_s[r] = res.rank[r].interference_s;
	engine_result_finish(&res);
	program_finish(&p);
	topology_destroy(t);
}

/* A replayed all-reduce holds every member's SMs from the instant the
 * posted one's members would take them to the instant they would give
 * them back (the last to arrive does it for all): the compute beside it
 * is slowed as beside the posted one, bit for bit, and slowed at all.
 * (Mutated: replay_for_all's engine_comm_busy calls left out, the
 * replayed run's interference fell to the first instance's.) */
Test(replay, replayed_collectives_slow_the_compute_beside_them_as_posted)
{
	SKIP_UNLESS_FORK_IS_SAFE();
	static struct overlap_figs posted, replayed;
	posted_in_child(run_overlap, &posted, sizeof(posted));
	run_overlap(false, &replayed);
	cr_expect_eq(posted.replayed, 0);
	cr_expect_eq(replayed.replayed, K - 1, "replayed %ld of %d", replayed.replayed, K - 1);
	cr_expect_eq(replayed.iteration_s, posted.iteration_s, "iteration %.17g s, posted %.17g s",
		     replayed.iteration_s, posted.iteration_s);
	for (int r = 0; r < 8; r++) {
		/* every all-reduce but the last runs beside a compute */
		cr_expect_gt(posted.interference_s[r], 0, "rank %d", r);
		cr_expect_eq(replayed.interference_s[r], posted.interference_s[r],
			     "rank %d interference %.17g s, posted %.17g s", r,
			     replayed.interference_s[r], posted.interference_s[r]);
	}
}

/* What a folded run gives: its iteration, rank 0's TP all-reduce times,
 * its flows, every link's busy time and bytes (of at most 64 links). */
struct fold_figs {
	double iteration_s;
	double tp_s[K];
	long replayed, flows;
	int nlinks;
	double busy_s[64], bytes_B[64][CAT_N];
};

static bool g_fold_exact;

/* run_tp's program, TP 8 x DP 4 on four nodes, folded (one replica
 * simulated; exactly where g_fold_exact); posted: every collective's
 * flows posted. */
static void run_fold(bool posted, void *figs)
{
	struct fold_figs *out = figs;
	struct topology *t = topo();
	struct program p;
	struct program *pp[1] = { &p };
	program_init(&p);
	int dep = -1;
	for (int k = 0; k < K; k++) {
		int c = program_compute(&p, CAT_FORWARD, 1e-3, 0, 0, 0, &dep, 1);
		dep = program_coll(&p, STREAM_TP, CAT_TP_COMM, COLL_ALLREDUCE, GROUP_TP, 64e6, 1, &c, 1);
	}
	program_coll(&p, STREAM_DP, CAT_DP_COMM, COLL_ALLREDUCE, GROUP_DP, 256e6, 1, &dep, 1);
	struct placement pl;
	cr_assert_eq(placement_init(&pl, 8, 4, 1, NULL), 0);
	g_ntp = 0;
	struct engine_observer obs = { .task_end = on_task_end };
	/* rank 8 a straggler: its replica is simulated whole, its TP group
	 * with it (folding simulates one rank of each class of alike ranks
	 * otherwise, and a group with a folded member is never private) */
	double scale[32];
	unsigned char distinct[32] = { [8] = 1 };
	for (int r = 0; r < 32; r++)
		scale[r] = r == 8 ? 1.25 : 1;
	struct engine_job job = { .topo = t, .nodes = 4, .pl = &pl, .stage_prog = pp,
				  .coll_algo = "ring", .obs = &obs, .fold = true,
				  .fold_exact = g_fold_exact, .compute_scale = scale, .distinct = distinct,
				  .collective_flows = posted };
	struct engine_result res;
	struct diag dg;
	diag_init(&dg, stderr);
	cr_assert_eq(engine_run(&job, &res, &dg), 0, "%s", diag_text(&dg));
	diag_finish(&dg);
	memset(out, 0, sizeof(*out));
	cr_assert_eq(g_ntp, K);
	memcpy(out->tp_s, g_tp_s, sizeof(out->tp_s));
	out->iteration_s = res.iteration_s;
	out->replayed = res.replayed;
	out->flows = res.flows;
	cr_assert_leq(res.nlinks, 64);
	out->nlinks = res.nlinks;
	for (int i = 0; i < res.nlinks; i++) {
		out->busy_s[i] = res.links[i].busy_s;
		memcpy(out->bytes_B[i], res.links[i].bytes, sizeof(out->bytes_B[i]));
	}
	engine_result_finish(&res);
	program_finish(&p);
	topology_destroy(t);
}

static void expect_fold_as_posted(bool exact, long want_replayed)
{
	SKIP_UNLESS_FORK_IS_SAFE();
	static struct fold_figs posted, replayed;
	g_fold_exact = exact;
	posted_in_child(run_fold, &posted, sizeof(posted));
	run_fold(false, &replayed);
	cr_expect_eq(posted.replayed, 0);
	cr_expect_eq(replayed.replayed, want_replayed, "replayed %ld, want %ld", replayed.replayed,
		     want_replayed);
	cr_expect_eq(replayed.iteration_s, posted.iteration_s, "iteration %.17g s, posted %.17g s",
		     replayed.iteration_s, posted.iteration_s);
	for (int k = 0; k < K; k++)
		cr_expect_eq(replayed.tp_s[k], posted.tp_s[k], "all-reduce %d: %.17g s, posted %.17g s",
			     k, replayed.tp_s[k], posted.tp_s[k]);
	cr_expect_eq(replayed.flows, posted.flows, "flows %ld, posted %ld", replayed.flows,
		     posted.flows);
	cr_assert_eq(replayed.nlinks, posted.nlinks);
	for (int i = 0; i < posted.nlinks; i++) {
		cr_expect_eq(replayed.busy_s[i], posted.busy_s[i], "link %d busy %.17g s, posted %.17g s",
			     i, replayed.busy_s[i], posted.busy_s[i]);
		for (int c = 0; c < CAT_N; c++)
			cr_expect_eq(replayed.bytes_B[i][c], posted.bytes_B[i][c],
				     "link %d category %d: %.17g B, posted %.17g B", i, c,
				     replayed.bytes_B[i][c], posted.bytes_B[i][c]);
	}
}

/* Folded cheaply, the private rings of the replicas simulated whole
 * (the representative and the straggler's) replay after their first
 * instance, and the run's figures are the posted run's, bit for bit.
 * (Before the folded replay, nothing of a folded run was replayed.) */
Test(replay, folded_cheaply_replays_the_whole_replicas_rings_as_posted)
{
	expect_fold_as_posted(false, 2 * (K - 1));
}

/* Folded exactly, the simulated rings post the folded replicas' rings
 * as their mirrors: a replay would leave those out, so none is private
 * and every flow is posted. (Mutated: the mirror check left out of
 * posts_its_plan_alone, both rings replayed without their mirrors.) */
Test(replay, folded_exactly_rings_with_mirrors_are_posted)
{
	expect_fold_as_posted(true, 0);
}
