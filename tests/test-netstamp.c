/* test-netstamp: which links the link pass reads again at a step
 * (engine/engine_links.c: those engine/engine_changed.cpp says may have
 * changed; every link where the network stamp moved,
 * engine_platform_net_stamp, where SimGrid cannot say which) against
 * closed forms: a link's usage changed by transfers starting, and a link
 * left by its only transfer.
 *
 * The pass reads a link's usage again only when it may have changed since
 * its last read; its read at a step is the usage during that step. A start
 * that raises an active link's usage is missed by a stamp blind to starts
 * only if a later start lowers it again before any transfer ends (the
 * step a transfer ends in is read, and its usage is what the starts before
 * it made). So: four one-GPU nodes, pipeline stages 0..3, NICs of B, the
 * NICs of nodes 0 and 2 degraded to 0.4 B (the GPUs' links wide enough to
 * bind nothing), route latencies 0:
 *   t = 0    A, stage 1 -> 2 (S_A bytes): nic1 UP carries A, bound by
 *            nic2 DOWN at 0.4 B                       nic1 UP: 0.4 B
 *   t = T1   B, stage 1 -> 0 (S_B, after stage 1 computes T1), bound by
 *            nic0 DOWN at 0.4 B                       nic1 UP: 0.8 B
 *   t = T3   X, stage 3 -> 2 (S_X, after stage 3 computes T3): A and X
 *            share nic2 DOWN, 0.2 B each                nic1 UP: 0.6 B
 *   A ends at T3 + (S_A - 0.4 B T3) / 0.2 B, then B alone: 0.4 B
 * Nothing ends before A, so nic1 UP's peak utilisation is 0.8 (a stamp
 * blind to starts reads 0.4, then 0.6) and its busy time is from 0 to B's
 * end, T1 + S_B / 0.4 B. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "engine.h"
#include "engine_changed.h"
#include "platform.h"
#include "testutil.h"

#define NIC_BPS (100e9 / 8) /* 100 Gb/s */
#define SLOW 0.4            /* the degraded NICs' bandwidth factor */
#define T1 0.1
#define T3 0.2

/* Four one-GPU nodes: NVSwitch links of 1,000 GB/s (binding nothing),
 * one 100 Gb/s NIC each, every latency 0. */
static struct topology *four_nodes(void)
{
	const char *text =
		"{\"schema\":\"ddlsim.topology\",\"schema_version\":\"1.0\",\"name\":\"t\",\"source\":\"test\","
		"\"gpu\":{\"name\":\"g\",\"peak_tflops\":{\"fp32\":1,\"bf16\":100},\"hbm_GB\":80,"
		"\"hbm_bw_GBps\":1000,\"sm_count\":100},"
		"\"node\":{\"gpus\":1,\"intra\":{\"kind\":\"nvswitch\",\"bw_GBps\":1000,\"latency_us\":0},"
		"\"nics\":{\"count\":1,\"bw_Gbps\":100,\"latency_us\":0,\"gpus\":[[0]]}},"
		"\"fabric\":{\"kind\":\"nonblocking\",\"latency_us\":0}}";
	return load_topology_text(text);
}

static void add_send(struct program *p, enum p2p_dir dir, double bytes, const int *dep, int ndep)
{
	struct task s = { .kind = TASK_SEND, .stream = STREAM_SEND, .dir = dir, .bytes = bytes };
	program_add(p, &s, dep, ndep);
}

static void add_recv(struct program *p, int stream, enum p2p_dir dir, double bytes)
{
	struct task r = { .kind = TASK_RECV, .stream = stream, .dir = dir, .bytes = bytes };
	program_add(p, &r, NULL, 0);
}

static int add_compute(struct program *p, double s)
{
	struct task c = { .kind = TASK_COMPUTE, .stream = STREAM_COMPUTE, .time_s = s };
	return program_add(p, &c, NULL, 0);
}

static const struct engine_link_stats *find(const struct engine_result *r, const char *name)
{
	for (int i = 0; i < r->nlinks; i++)
		if (!strcmp(r->links[i].name, name))
			return &r->links[i];
	cr_assert_fail("no link %s in the run", name);
	return NULL;
}

Test(netstamp, a_start_that_raises_an_active_links_usage_is_read)
{
	double m = SLOW * NIC_BPS;                 /* A's and B's bound */
	double S_A = m * T3 + m / 2 * 0.1;         /* A ends at T3 + 0.1 */
	double S_B = m * 0.4;                      /* B ends at T1 + 0.4 */
	double S_X = m / 2 * 0.1 + m * 0.6;        /* X ends at T3 + 0.7 */
	struct program p[4];
	struct program *pp[4] = { &p[0], &p[1], &p[2], &p[3] };
	for (int s = 0; s < 4; s++)
		program_init(&p[s]);
	add_recv(&p[0], STREAM_RECV_NEXT, P2P_BWD, S_B);
	add_send(&p[1], P2P_FWD, S_A, NULL, 0);
	int c1 = add_compute(&p[1], T1);
	add_send(&p[1], P2P_BWD, S_B, &c1, 1);
	add_recv(&p[2], STREAM_RECV_PREV, P2P_FWD, S_A);
	add_recv(&p[2], STREAM_RECV_NEXT, P2P_BWD, S_X);
	int c3 = add_compute(&p[3], T3);
	add_send(&p[3], P2P_BWD, S_X, &c3, 1);

	struct topology *t = four_nodes();
	struct placement pl;
	cr_assert_eq(placement_init(&pl, 1, 1, 4, NULL), 0);
	const struct platform_degrade deg[2] = { { "nic0_0", SLOW, 1 }, { "nic2_0", SLOW, 1 } };
	struct engine_job job = { .topo = t, .nodes = 4, .pl = &pl, .stage_prog = pp,
				  .coll_algo = "ring", .degraded = deg, .ndegraded = 2 };
	struct engine_result res;
	struct diag dg;
	diag_init(&dg, stderr);
	cr_assert_eq(engine_run(&job, &res, &dg), 0, "%s", diag_text(&dg));
	diag_finish(&dg);

	cr_expect_float_eq(res.iteration_s, T3 + 0.7, 1e-9, "iteration %.12g s", res.iteration_s);
	const struct engine_link_stats *l = find(&res, "nic1_0_UP");
	cr_assert(l->timed);
	cr_expect_float_eq(l->peak_util, 2 * SLOW, 1e-9, "nic1_0_UP peak %.12g, closed form %g",
			   l->peak_util, 2 * SLOW);
	cr_expect_float_eq(l->busy_s, T1 + 0.4, 1e-9, "nic1_0_UP busy %.12g s, closed form %g s",
			   l->busy_s, T1 + 0.4);
	/* nic2 DOWN: A at 0.4 B, then A and X at 0.2 B each, then X */
	const struct engine_link_stats *n2 = find(&res, "nic2_0_DOWN");
	cr_expect_float_eq(n2->peak_util, 1, 1e-9, "nic2_0_DOWN peak %.12g", n2->peak_util);
	cr_expect_float_eq(n2->busy_s, T3 + 0.7, 1e-9, "nic2_0_DOWN busy %.12g s", n2->busy_s);
	/* every transfer's route was known: no step read every link */
	cr_expect_eq(engine_changed_unknown(), 0, "%lu changes of unknown route", engine_changed_unknown());

	engine_result_finish(&res);
	for (int s = 0; s < 4; s++)
		program_finish(&p[s]);
	topology_destroy(t);
}

/* The pass reads only the links SimGrid says may have changed
 * (engine/engine_changed.cpp): a link whose one transfer ended leaves
 * when the ended transfer's action is freed, which no action left on it
 * reports. Stage 0 sends A (S_A bytes, alone on nic0 UP at B: it ends at
 * T_A) to stage 1; stage 2 computes T2 > T_A, then sends Y to stage 3
 * (Y alone on nic2 UP, T_Y). The clock stops at T_A, at T2 (no transfer
 * changes there) and at T2 + T_Y: nic0 UP carried A from 0 to T_A and
 * nothing after, so its busy time is T_A, not T2 + T_Y (a pass that read
 * the ended transfer's links only in the step it ended, where its action
 * still counts, keeps nic0 UP busy to the end). */
Test(netstamp, a_link_whose_only_transfer_ended_leaves)
{
	const double T_A = 0.1, T2 = 1.0, T_Y = 0.25;
	struct program p[4];
	struct program *pp[4] = { &p[0], &p[1], &p[2], &p[3] };
	for (int s = 0; s < 4; s++)
		program_init(&p[s]);
	add_send(&p[0], P2P_FWD, NIC_BPS * T_A, NULL, 0);
	add_recv(&p[1], STREAM_RECV_PREV, P2P_FWD, NIC_BPS * T_A);
	int c2 = add_compute(&p[2], T2);
	add_send(&p[2], P2P_FWD, NIC_BPS * T_Y, &c2, 1);
	add_recv(&p[3], STREAM_RECV_PREV, P2P_FWD, NIC_BPS * T_Y);

	struct topology *t = four_nodes();
	struct placement pl;
	cr_assert_eq(placement_init(&pl, 1, 1, 4, NULL), 0);
	struct engine_job job = { .topo = t, .nodes = 4, .pl = &pl, .stage_prog = pp, .coll_algo = "ring" };
	struct engine_result res;
	struct diag dg;
	diag_init(&dg, stderr);
	cr_assert_eq(engine_run(&job, &res, &dg), 0, "%s", diag_text(&dg));
	diag_finish(&dg);

	cr_expect_float_eq(res.iteration_s, T2 + T_Y, 1e-9, "iteration %.12g s", res.iteration_s);
	const struct engine_link_stats *a = find(&res, "nic0_0_UP");
	cr_assert(a->timed);
	cr_expect_float_eq(a->busy_s, T_A, 1e-9, "nic0_0_UP busy %.12g s, closed form %g s", a->busy_s, T_A);
	cr_expect_float_eq(a->peak_util, 1, 1e-9, "nic0_0_UP peak %.12g", a->peak_util);
	const struct engine_link_stats *y = find(&res, "nic2_0_UP");
	cr_expect_float_eq(y->busy_s, T_Y, 1e-9, "nic2_0_UP busy %.12g s, closed form %g s", y->busy_s, T_Y);
	cr_expect_eq(engine_changed_unknown(), 0, "%lu changes of unknown route", engine_changed_unknown());

	engine_result_finish(&res);
	for (int s = 0; s < 4; s++)
		program_finish(&p[s]);
	topology_destroy(t);
}
