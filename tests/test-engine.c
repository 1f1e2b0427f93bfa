/* test-engine: the SimGrid replay against alpha-beta closed forms.
 *
 * Each test runs one simulation (Criterion forks a process per test, and
 * SimGrid runs once per process). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>
#include <stdio.h>

#include "coll.h"
#include "engine.h"
#include "result.h"
#include "scenario.h"
#include "simulate.h"
#include "testutil.h"

/* gpus per node, intra bw (GB/s) and latency (us), NICs per node, NIC bw
 * (Gb/s) and latency (us), fabric latency (us). */
static struct topology *topo(int gpus, double ibw, double ilat, int nics, double nbw,
			     double nlat, double flat)
{
	char text[2048], nicgpus[512] = "";
	int w = 0;
	for (int i = 0; i < nics; i++) {
		w += snprintf(nicgpus + w, sizeof(nicgpus) - (size_t)w, "%s[", i ? "," : "");
		for (int g = i * gpus / nics; g < (i + 1) * gpus / nics; g++)
			w += snprintf(nicgpus + w, sizeof(nicgpus) - (size_t)w, "%s%d",
				      g == i * gpus / nics ? "" : ",", g);
		w += snprintf(nicgpus + w, sizeof(nicgpus) - (size_t)w, "]");
	}
	snprintf(text, sizeof(text),
		 "{\"schema\":\"ddlsim.topology\",\"schema_version\":\"1.0\",\"name\":\"t\",\"source\":\"test\","
		 "\"gpu\":{\"name\":\"g\",\"peak_tflops\":{\"fp32\":1,\"bf16\":100},\"hbm_GB\":80,"
		 "\"hbm_bw_GBps\":1000,\"sm_count\":100},"
		 "\"node\":{\"gpus\":%d,\"intra\":{\"kind\":\"nvswitch\",\"bw_GBps\":%g,\"latency_us\":%g},"
		 "\"nics\":{\"count\":%d,\"bw_Gbps\":%g,\"latency_us\":%g,\"gpus\":[%s]}},"
		 "\"fabric\":{\"kind\":\"nonblocking\",\"latency_us\":%g}}",
		 gpus, ibw, ilat, nics, nbw, nlat, nicgpus, flat);
	return load_topology_text(text);
}

static double run(struct topology *t, int nodes, int tp, int dp, int pp,
		  struct program **progs, bool fold, struct engine_result *res)
{
	struct placement pl;
	struct diag dg;
	cr_assert_eq(placement_init(&pl, tp, dp, pp, NULL), 0);
	struct engine_job job = { .topo = t, .nodes = nodes, .pl = &pl, .stage_prog = progs,
				  .coll_algo = "ring", .fold = fold };
	diag_init(&dg, stderr);
	int erc = engine_run(&job, res, &dg);
	cr_assert_eq(erc, 0, "%s", diag_text(&dg));
	diag_finish(&dg);
	return res->iteration_s;
}

static void rel_eq(double got, double want)
{
	cr_assert_lt(fabs(got / want - 1), 1e-8, "got %.17g, want %.17g", got, want); /* whole bytes */
}

/* Stage 0 sends S bytes to stage 1 (every tp rank of stage 0 to its peer
 * of stage 1, at the same time); returns the iteration time. */
static double send_recv(struct topology *t, int nodes, int tp, double S)
{
	struct program p[2];
	struct program *pp[2] = { &p[0], &p[1] };
	program_init(&p[0]);
	program_init(&p[1]);
	struct task s = { .kind = TASK_SEND, .stream = STREAM_SEND, .dir = P2P_FWD, .bytes = S };
	struct task r = { .kind = TASK_RECV, .stream = STREAM_RECV_PREV, .dir = P2P_FWD, .bytes = S };
	program_add(&p[0], &s, NULL, 0);
	program_add(&p[1], &r, NULL, 0);
	struct engine_result res;
	double it = run(t, nodes, tp, 1, 2, pp, false, &res);
	engine_result_finish(&res);
	return it;
}

/* One transfer of S bytes between two pipeline stages = alpha + S / beta. */
Test(engine, one_transfer_costs_alpha_plus_size_over_beta)
{
	struct topology *t = topo(2, 100, 3, 1, 200, 1, 0.5);
	double S = 123456789;
	rel_eq(send_recv(t, 1, 1, S), 3e-6 + S / 100e9);
}

/* A compute of C seconds waiting for stage 0's send of S bytes: a
 * blocking send (DeepSpeed's p2p.send) ends when the bytes have left, so
 * the compute starts after S / beta (the route's latency alpha is the
 * receiver's, engine_p2p.c); a posted one (Megatron's) ends at once and
 * the compute overlaps the transfer, which the receiver sees at alpha +
 * S / beta. */
static double send_then_compute(bool blocking, double S, double C)
{
	struct topology *t = topo(2, 100, 3, 1, 200, 1, 0.5);
	struct program p[2];
	struct program *pp[2] = { &p[0], &p[1] };
	program_init(&p[0]);
	program_init(&p[1]);
	struct task s = { .kind = TASK_SEND, .stream = STREAM_SEND, .dir = P2P_FWD, .bytes = S,
			  .blocking = blocking };
	struct task c = { .kind = TASK_COMPUTE, .stream = STREAM_COMPUTE, .time_s = C };
	struct task r = { .kind = TASK_RECV, .stream = STREAM_RECV_PREV, .dir = P2P_FWD, .bytes = S };
	int sid = program_add(&p[0], &s, NULL, 0);
	program_add(&p[0], &c, &sid, 1);
	program_add(&p[1], &r, NULL, 0);
	struct engine_result res;
	double it = run(t, 1, 1, 1, 2, pp, false, &res);
	engine_result_finish(&res);
	topology_destroy(t);
	return it;
}

Test(engine, a_blocking_send_holds_the_compute_until_delivered)
{
	double S = 123456789, C = 2e-3;
	rel_eq(send_then_compute(true, S, C), S / 100e9 + C);
}

Test(engine, a_posted_send_lets_the_compute_overlap_it)
{
	double S = 123456789, C = 2e-3, x = 3e-6 + S / 100e9;
	rel_eq(send_then_compute(false, S, C), x > C ? x : C);
}

/* Across nodes the path is NIC, fabric, NIC: 2 x 1 us + 0.5 us, 25 GB/s. */
Test(engine, one_transfer_across_nodes)
{
	struct topology *t = topo(1, 100, 3, 1, 200, 1, 0.5);
	double S = 1e9;
	rel_eq(send_recv(t, 2, 1, S), 2.5e-6 + S / 25e9);
	rel_eq(topology_path_latency(t, 0, 1), 2.5e-6);
}

/* Two GPUs of one node sending to the next node through one shared NIC:
 * max-min sharing halves each flow's bandwidth. tp = 2 inside a node,
 * pp = 2 across nodes: ranks 0,1 -> 2,3. */
Test(engine, two_flows_sharing_a_link_take_twice_as_long)
{
	struct topology *t = topo(2, 100, 3, 1, 80, 1, 0);
	double S = 1e9;
	rel_eq(send_recv(t, 2, 2, S), 2e-6 + 2 * S / 10e9);
}

static double allreduce(struct topology *t, int nodes, int P, double N, bool fold)
{
	struct program p;
	struct program *pp[1] = { &p };
	program_init(&p);
	program_coll(&p, STREAM_DP, CAT_DP_COMM, COLL_ALLREDUCE, GROUP_DP, N, 1, NULL, 0);
	struct engine_result res;
	double it = run(t, nodes, 1, P, 1, pp, fold, &res);
	engine_result_finish(&res);
	return it;
}

/* The closed form of the "ring" plan (NCCL's latency, NCCL's bandwidth
 * where below the fabric's) for ranks 0..P-1; the engine must replay it
 * exactly when nothing else shares the links. */
static double ring_closed_form(const struct topology *t, int P, double N)
{
	int r[64];
	for (int i = 0; i < P; i++)
		r[i] = i;
	struct coll_plan *p = coll_plan_create(t, "ring", COLL_ALLREDUCE, r, P, N);
	cr_assert(p);
	double want = p->ideal_time_s;
	coll_plan_destroy(p);
	return want;
}

Test(engine, ring_allreduce_inside_a_node)
{
	struct topology *t = topo(8, 300, 2, 1, 200, 1, 0.5);
	double N = 1 << 30;
	rel_eq(allreduce(t, 1, 8, N, false), ring_closed_form(t, 8, N));
}

Test(engine, ring_allreduce_across_nodes)
{
	struct topology *t = topo(1, 300, 2, 1, 200, 1, 0.5);
	double N = 1 << 30;
	rel_eq(allreduce(t, 16, 16, N, false), ring_closed_form(t, 16, N));
}

Test(engine, folded_allreduce_equals_full_simulation)
{
	struct topology *t = topo(1, 300, 2, 1, 200, 1, 0.5);
	double N = 1 << 28;
	rel_eq(allreduce(t, 16, 16, N, true), ring_closed_form(t, 16, N));
}

/* The O(P) representation against the step-by-step ring: P stages in a
 * ring (stage P-1 sends to stage 0), 2(P-1) steps of N/P bytes, each
 * waiting for the previous step's receive. */
Test(engine, edge_flows_match_step_by_step_ring)
{
	enum { P = 6 };
	struct topology *t = topo(1, 300, 2, 1, 200, 1, 0.5);
	double N = 3e8;
	struct program p[P];
	struct program *pp[P];
	for (int s = 0; s < P; s++) {
		pp[s] = &p[s];
		program_init(&p[s]);
		int prev = -1;
		for (int k = 0; k < 2 * (P - 1); k++) {
			struct task snd = { .kind = TASK_SEND, .stream = STREAM_SEND, .dir = P2P_FWD, .bytes = N / P };
			struct task rcv = { .kind = TASK_RECV, .stream = STREAM_RECV_PREV, .dir = P2P_FWD, .bytes = N / P };
			program_add(&p[s], &snd, &prev, prev >= 0);
			prev = program_add(&p[s], &rcv, NULL, 0);
		}
	}
	struct engine_result res;
	double step = run(t, P, 1, 1, P, pp, false, &res);
	engine_result_finish(&res);
	double want = 2 * (P - 1) * 2.5e-6 + 2.0 * (P - 1) / P * N / 25e9;
	rel_eq(step, want);
}

/* Compute and an overlapped reduction: the iteration is the longer of the
 * two plus what cannot overlap; the exposed part is measured. */
Test(engine, overlapped_reduction_exposes_only_the_tail)
{
	struct topology *t = topo(8, 100, 0, 1, 200, 0, 0);
	struct program p;
	struct program *pp[1] = { &p };
	program_init(&p);
	int c1 = program_compute(&p, CAT_BACKWARD, 1.0, 0, 0, 0, NULL, 0);
	/* 8 GPUs, N = 8e9: 2 x 7/8 x 8e9 / 100e9 = 0.14 s, hidden under 1 s */
	int r1 = program_coll(&p, STREAM_DP, CAT_DP_COMM, COLL_ALLREDUCE, GROUP_DP, 8e9, 1, &c1, 1);
	int c2 = program_compute(&p, CAT_BACKWARD, 1.0, 0, 0, 0, NULL, 0);
	/* 0.14 s reduction after the last compute: fully exposed */
	int r2 = program_coll(&p, STREAM_DP, CAT_DP_COMM, COLL_ALLREDUCE, GROUP_DP, 8e9, 1, &c2, 1);
	int deps[2] = { r1, r2 };
	program_compute(&p, CAT_OPTIMIZER, 0.01, 0, 0, 0, deps, 2);
	struct engine_result res;
	double ar = ring_closed_form(t, 8, 8e9); /* NCCL's ring: above 0.14 s */
	double it = run(t, 1, 1, 8, 1, pp, false, &res);
	cr_assert_lt(ar, 1.0);
	rel_eq(it, 2.0 + ar + 0.01);
	cr_assert_lt(fabs(res.rank[3].exposed_s[CAT_DP_COMM] - ar), 1e-9);
	cr_assert_lt(fabs(res.rank[3].compute_s[CAT_BACKWARD] - 2.0), 1e-12);
	engine_result_finish(&res);
}

Test(engine, second_simulation_in_a_process_is_refused)
{
	struct topology *t = topo(2, 100, 1, 1, 100, 1, 0);
	struct program p;
	struct program *pp[1] = { &p };
	program_init(&p);
	program_compute(&p, CAT_FORWARD, 1.0, 0, 0, 0, NULL, 0);
	struct engine_result res;
	run(t, 1, 1, 2, 1, pp, false, &res);
	engine_result_finish(&res);
	struct placement pl;
	placement_init(&pl, 1, 2, 1, NULL);
	struct engine_job job = { .topo = t, .nodes = 1, .pl = &pl, .stage_prog = pp,
				  .coll_algo = "ring" };
	struct diag dg;
	diag_init(&dg, NULL);
	int erc = engine_run(&job, &res, &dg);
	cr_assert_eq(erc, -1);
	cr_assert_str_eq(diag_text(&dg), "error: the simulation engine runs once per process\n");
	diag_finish(&dg);
}

/* ---- interference: compute slowed while a collective runs ---------- */

/* What the job says about compute beside a collective (engine.h): a
 * measured factor, the memory-bound share, the HBM bandwidth it gets
 * alone, the clock ratio, the work's table by SMs taken. */
struct beside {
	double factor, membound, hbm_Bps, clock_ratio;
	const double *sm_work;
	const struct engine_gpu_overlap *groups;  /* job.group_overlap, NULL: none */
	const int *rank_group;                    /* job.rank_group */
	struct engine_rank_stats *rank7;          /* NULL, or rank 7's stats */
};

/* What the collective of interfere_with is, from its plan: its CTAs, its
 * protocol and its bytes on the wire per second (bus bytes over its
 * uncontended time). */
struct coll_seen {
	double coll_s, wire_Bps;
	int ctas;
	char proto[8];
};

/* One DGX-like node of 8 GPUs with 100 SMs each, tp = 8: a compute task of
 * T on every rank and a ring all-gather of B on the TP stream, started
 * together (overlap = true) or the collective after the compute, with
 * what *b says. Returns rank 0's stats; *cs what the collective was
 * (coll_s its wall time). */
static struct engine_rank_stats interfere_with(double T, double B, bool overlap,
					       const struct beside *b, struct coll_seen *cs)
{
	struct topology *t = topo(8, 300, 1, 1, 200, 1, 1);
	struct program p;
	struct program *pp[1] = { &p };
	program_init(&p);
	int c = program_compute(&p, CAT_FORWARD, T, 0, 0, 0, NULL, 0);
	int dep = overlap ? -1 : c;
	program_coll(&p, STREAM_TP, CAT_TP_COMM, COLL_ALLGATHER, GROUP_TP, B, 1, &dep, 1);
	struct placement pl;
	cr_assert_eq(placement_init(&pl, 8, 1, 1, NULL), 0);
	struct engine_job job = { .topo = t, .nodes = 1, .pl = &pl, .stage_prog = pp,
				  .coll_algo = "ring", .fold = false,
				  .overlap = { .sm_count = 100, .interference_factor = b->factor,
					       .membound_share = b->membound, .hbm_Bps = b->hbm_Bps,
					       .comm_clock_ratio = b->clock_ratio, .sm_work = b->sm_work },
				  .group_overlap = b->groups,
				  .rank_group = b->rank_group };
	struct engine_result res;
	struct diag dg;
	diag_init(&dg, stderr);
	cr_assert_eq(engine_run(&job, &res, &dg), 0, "%s", diag_text(&dg));
	diag_finish(&dg);
	struct engine_rank_stats st = res.rank[0];
	if (b->rank7)
		*b->rank7 = res.rank[7];
	cs->coll_s = st.comm_s[CAT_TP_COMM];
	int ranks[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	struct coll_plan *cp = coll_plan_create(t, "ring", COLL_ALLGATHER, ranks, 8, B);
	cs->ctas = cp->sm_channels;
	cs->wire_Bps = cp->bus_bytes / cp->ideal_time_s;
	snprintf(cs->proto, sizeof(cs->proto), "%s", cp->proto ? cp->proto : "Simple");
	coll_plan_destroy(cp);
	engine_result_finish(&res);
	program_finish(&p);
	topology_destroy(t);
	return st;
}

static struct engine_rank_stats interfere(double T, double B, bool overlap, double factor,
					  double *coll_s, int *ctas)
{
	struct coll_seen cs;
	struct engine_rank_stats st = interfere_with(T, B, overlap, &(struct beside){ .factor = factor },
						     &cs);
	*coll_s = cs.coll_s;
	*ctas = cs.ctas;
	return st;
}

/* The SM model alone (with a measured factor of factor, none: 0): an
 * overlap o shorter than the GEMM costs o (f - 1) / f, f = SMs / (SMs -
 * C), C the collective's CTAs (NCCL channels). */
static void sm_model_alone(double factor)
{
	double T = 0.01, o;
	int C;
	struct engine_rank_stats st = interfere(T, 256e6, true, factor, &o, &C);
	cr_assert_gt(C, 0);
	cr_assert_lt(o, T);
	double f = 100.0 / (100 - C);
	rel_eq(st.compute_s[CAT_FORWARD], T + o * (f - 1) / f);
	rel_eq(st.interference_s, o * (f - 1) / f);
}

Test(engine, interference_slows_compute_only_while_a_collective_overlaps)
{
	sm_model_alone(0);
}

/* A collective longer than the GEMM: all of the GEMM runs slowed, T f. */
Test(engine, interference_under_a_long_collective_is_the_whole_factor)
{
	double T = 0.001, o;
	int C;
	struct engine_rank_stats st = interfere(T, 1e9, true, 0, &o, &C);
	cr_assert_gt(o, T * 2);
	rel_eq(st.compute_s[CAT_FORWARD], T * 100.0 / (100 - C));
}

/* A measured factor (calib profile) above the SM model's is taken; a
 * collective that runs after the compute slows nothing (next test). */
Test(engine, interference_measured_factor_and_no_overlap)
{
	double T = 0.01, o;
	int C;
	struct engine_rank_stats st = interfere(T, 256e6, true, 1.5, &o, &C);
	cr_assert_lt(100.0 / (100 - C), 1.5, "%d CTAs", C);
	rel_eq(st.compute_s[CAT_FORWARD], T + o * 0.5 / 1.5);
}

/* A measured factor below the SM model's (the H200's copy kernel: 1) is a
 * floor, not a replacement: the SM model's slowdown stays. */
Test(engine, interference_measured_factor_is_a_floor)
{
	sm_model_alone(1.0);
}

/* Memory-bound work beside a collective: HBM shared max-min between the
 * kernel (B alone) and the collective's H = 2 x its wire bytes per
 * second (x 2 again in LL's lines, engine_coll.c), on top of the SM
 * model: f = SMs / (SMs - C) x ((1 - m) / r + m B / max(B - H, B / 2)),
 * m the memory-bound share, r the clock ratio (1: none). With B = 4 H
 * and m = 1/2 the kernel keeps 3/4 of HBM; with B = H the collective is
 * capped at half. One engine run per process: a test each. */
static void hbm_shared(double bytes, double share, double b_over_h, double r)
{
	double T = 0.01;
	struct coll_seen cs;
	/* the collective's H from its plan alone, to size B (the run below
	 * finds the same plan) */
	struct topology *t = topo(8, 300, 1, 1, 200, 1, 1);
	int ranks[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	struct coll_plan *cp = coll_plan_create(t, "ring", COLL_ALLGATHER, ranks, 8, bytes);
	double lines = cp->proto && !strcmp(cp->proto, "LL") ? 2 : 1;
	double H = 2 * lines * cp->bus_bytes / cp->ideal_time_s;
	coll_plan_destroy(cp);
	topology_destroy(t);
	double B = b_over_h * H;
	struct beside b = { .membound = share, .hbm_Bps = B, .clock_ratio = r };
	struct engine_rank_stats st = interfere_with(T, bytes, true, &b, &cs);
	cr_assert_lt(cs.coll_s, T);
	double o = cs.coll_s, rr = r > 0 ? r : 1;
	double f = 100.0 / (100 - cs.ctas) * ((1 - share) / rr + share * B / fmax(B - H, B / 2));
	rel_eq(st.compute_s[CAT_FORWARD], T + o * (f - 1) / f);
	rel_eq(st.interference_s, o * (f - 1) / f);
}

Test(engine, interference_of_a_collective_s_hbm_traffic)
{
	hbm_shared(256e6, 0.5, 4, 0);
}

Test(engine, interference_of_a_collective_s_hbm_traffic_capped_at_half)
{
	hbm_shared(256e6, 1, 1, 0);
}

/* A small all-gather runs NCCL's LL protocol, whose 16-byte lines hold 8
 * bytes of data: twice the HBM of Simple per byte on the wire. */
Test(engine, interference_of_an_ll_collective_s_lines)
{
	struct topology *t = topo(8, 300, 1, 1, 200, 1, 1);
	int ranks[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	struct coll_plan *cp = coll_plan_create(t, "ring", COLL_ALLGATHER, ranks, 8, 64e3);
	cr_assert_str_eq(cp->proto ? cp->proto : "(none)", "LL");
	coll_plan_destroy(cp);
	topology_destroy(t);
	hbm_shared(64e3, 1, 3, 0);
}

/* The clock ratio r slows the compute-bound share only: m = 1/2, r = 0.8. */
Test(engine, interference_clock_ratio_on_the_compute_bound_share)
{
	hbm_shared(256e6, 0.5, 4, 0.8);
}

/* With the work's table (sim/simulate_overlap.c: the compute-bound
 * kernels' time on SMs - C SMs over the whole work's on all), f =
 * W(C) / r + m x SMs / (SMs - C): W rising with C, m = 0.5, r = 0.8, no
 * HBM sharing; the entry read is the collective's C. */
Test(engine, interference_by_the_work_table)
{
	double T = 0.01, w[100];
	struct coll_seen cs;
	for (int c = 0; c < 100; c++)
		w[c] = 0.5 + 0.004 * c;
	struct beside b = { .membound = 0.5, .clock_ratio = 0.8, .sm_work = w };
	struct engine_rank_stats st = interfere_with(T, 256e6, true, &b, &cs);
	cr_assert_gt(cs.ctas, 0);
	cr_assert_lt(cs.coll_s, T);
	double o = cs.coll_s, f = w[cs.ctas] / 0.8 + 0.5 * 100.0 / (100 - cs.ctas);
	rel_eq(st.compute_s[CAT_FORWARD], T + o * (f - 1) / f);
	rel_eq(st.interference_s, o * (f - 1) / f);
}

/* Mixed GPUs (job.group_overlap): each rank slows by its own GPU's
 * figures, whatever the job's. Ranks 0-3 on a GPU of clock ratio 0.8 and
 * memory-bound share 1/4, ranks 4-7 on one of 120 SMs with neither; the
 * job's own figures (job.overlap: a third GPU, factor 3) are not read. The same
 * all-gather beside the same compute on every rank: each pays
 * o (f - 1) / f with its f = SMs / (SMs - C) ((1 - m) / r + m). */
Test(engine, interference_by_each_rank_s_own_gpu)
{
	double T = 0.01;
	struct coll_seen cs;
	struct engine_gpu_overlap g[2] = {
		{ .sm_count = 100, .comm_clock_ratio = 0.8, .membound_share = 0.25 },
		{ .sm_count = 120 },
	};
	int rg[8] = { 0, 0, 0, 0, 1, 1, 1, 1 };
	struct engine_rank_stats st7;
	struct beside b = { .factor = 3, .membound = 0.9, .clock_ratio = 0.5, .groups = g,
			    .rank_group = rg, .rank7 = &st7 };
	struct engine_rank_stats st0 = interfere_with(T, 256e6, true, &b, &cs);
	cr_assert_gt(cs.ctas, 0);
	cr_assert_lt(cs.coll_s, T);
	double o = cs.coll_s;
	double f0 = 100.0 / (100 - cs.ctas) * (0.75 / 0.8 + 0.25);
	double f7 = 120.0 / (120 - cs.ctas);
	rel_eq(st0.interference_s, o * (f0 - 1) / f0);
	rel_eq(st7.interference_s, o * (f7 - 1) / f7);
	rel_eq(st0.compute_s[CAT_FORWARD], T + o * (f0 - 1) / f0);
	rel_eq(st7.compute_s[CAT_FORWARD], T + o * (f7 - 1) / f7);
}

Test(engine, interference_needs_an_overlap)
{
	double T = 0.01, o;
	int C;
	struct engine_rank_stats st = interfere(T, 256e6, false, 1.5, &o, &C);
	rel_eq(st.compute_s[CAT_FORWARD], T);
	cr_assert_eq(st.interference_s, 0);
}

/* The report of `ddlsim run` on scenario file path, its run's wall
 * times removed; with simulation.separate_streams set when separate (a
 * copy in a folder of its own, its model and topology paths absolute). */
static json_t *report_of_ex(const char *path, bool separate, const char *extra)
{
	char *dir = tmp_dir(), args[1024], *err = NULL, from[1024];
	json_t *doc = json_load_file(path, 0, NULL);
	cr_assert_not_null(doc, "%s", path);
	snprintf(from, sizeof(from), "%s", path);
	*strrchr(from, '/') = 0;
	static const char *const keys[] = { "model", "topology" };
	for (int k = 0; k < 2; k++) {
		const char *v = json_string_value(json_object_get(doc, keys[k]));
		if (v && v[0] != '/') {
			char abs[2048];
			snprintf(abs, sizeof(abs), "%s/%s", from, v);
			json_object_set_new(doc, keys[k], json_string(abs));
		}
	}
	json_t *simk = json_object_get(doc, "simulation");
	if (!simk)
		json_object_set_new(doc, "simulation", simk = json_object());
	json_object_set_new(simk, "separate_streams", json_boolean(separate));
	char *text = json_dumps(doc, 0), *copy = write_file(dir, "s.json", text);
	free(text);
	json_decref(doc);
	snprintf(args, sizeof(args), "run '%s' --out '%s/o' --quiet --format json %s", copy, dir, extra);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s: %s", path, err);
	free(copy);
	char out[1200];
	snprintf(out, sizeof(out), "%s/o", dir);
	json_t *r = load_report(out);
	cr_assert_not_null(r, "%s: no report", path);
	json_t *sim = json_object_get(r, "simulation");
	json_object_del(sim, "wall_s");
	json_object_del(sim, "platform_s");
	json_object_del(json_object_get(r, "scenario"), "path");   /* the copy's */
	free(err);
	free(dir);
	return r;
}

/* The merge scenario below: Llama-2 70B, TP 8 x PP 4 x DP 2 on 8 nodes
 * of the 2:1 fat tree, unfolded (text into buf). */
static const char *merge_scenario_ex(char *buf, size_t n, const char *parallel_more)
{
	snprintf(buf, n,
		 "{\"schema\":\"ddlsim.scenario\",\"schema_version\":\"1.0\",\"name\":\"merge\","
		 "\"model\":\"%s\",\"topology\":\"%s\",\"nodes\":8,"
		 "\"parallel\":{\"tp\":8,\"pp\":4,\"dp\":2%s},"
		 "\"training\":{\"seq_len\":4096,\"global_batch\":16,\"micro_batch\":1,\"precision\":\"bf16\"},"
		 "\"simulation\":{\"fold\":\"off\"}}",
		 src_path("models/zoo/llama2-70b.json"), src_path("topologies/dgx-h100-fattree2-2to1.json"),
		 parallel_more);
	return buf;
}

static const char *merge_scenario(char *buf, size_t n)
{
	return merge_scenario_ex(buf, n, "");
}

/* The actors of scenario path, simulated (nsim ranks of it). */
static int actors_of(const char *path, int nsim)
{
	struct diag dg;
	struct result r;
	diag_init(&dg, stderr);
	struct scenario *sc = scenario_load(path, &dg);
	cr_assert(sc, "%s", diag_text(&dg));
	cr_assert_eq(simulate_run(sc->in, &sc->plan, &r, &dg), 0, "%s", diag_text(&dg));
	cr_assert_eq(r.eng->nsimulated, nsim);
	int n = r.eng->actors;
	diag_finish(&dg);
	result_finish(&r);
	scenario_destroy(sc);
	return n;
}

/* The actors of the merge scenario, under schedule text sched. */
static int merge_actors(const char *sched)
{
	char text[1024], *d = tmp_dir();
	char *path = write_file(d, "merge.json", merge_scenario_ex(text, sizeof(text), sched));
	int n = actors_of(path, 64);
	free(path);
	free(d);
	return n;
}

/* Scenario path's report (run with extra options) merged and with
 * simulation.separate_streams: the same to the last bit, and some
 * communication exposed (so the streams did interact). Returns the
 * merged report (the caller's). */
static json_t *expect_merged_as_separate(const char *path, const char *extra)
{
	json_t *a = report_of_ex(path, false, extra), *b = report_of_ex(path, true, extra);
	char *sa = json_dumps(a, JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
	char *sb = json_dumps(b, JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
	cr_expect_str_eq(sa, sb, "%s: merged and separate streams differ", path);
	cr_expect_gt(jnum(a, "breakdown/mean/exposed_comm_s"), 0, "%s", path);
	free(sa);
	free(sb);
	json_decref(b);
	return a;
}

/* A rank's pipeline sends, and the last stage's loss all-reduces (three
 * in a row), run on its compute stream's actor (engine_stream_merge):
 * per 4 ranks of a pipeline, the compute streams (4), DP (4) and the
 * receives (1 + 1 + 1 + 1: the middle stages' two lanes on one actor,
 * engine_recv.c) are left: 12 actors, 192 of the 64 ranks (224 with a
 * receive actor per lane, 304 with a send actor per rank too and the
 * last stage's TP on its own, 352 with every stream separate). The same
 * figures as separate actors: merged_streams_replay_as_separate_actors. */
Test(engine, pipeline_sends_run_on_the_compute_stream_s_actor, .timeout = 120)
{
	int n = merge_actors("");
	cr_expect_eq(n, 192, "%d actors", n);
}

/* Tensor-parallel collectives and pipeline sends run on the compute
 * stream's actor (engine_stream_merge): every figure of the report, to
 * the last bit, is the one separate actors give: unfolded with pipeline
 * receives waited for around them, with a straggler (a rank's own
 * program), with throttling windows (compute cut in segments), and
 * under the zero-bubble and DualPipe schedules (sends after backward's
 * input and weight halves, reversed pipelines), and DeepSpeed's
 * blocking sends (BLOOM 176B). */
Test(engine, merged_streams_replay_as_separate_actors, .timeout = 240)
{
	char text[1024];
	char *d = tmp_dir();
	const char *paths[] = { write_file(d, "merge.json", merge_scenario(text, sizeof(text))),
				src_path("scenarios/whatif/llama2-13b-h100-pp4-straggler.json"),
				src_path("scenarios/whatif/llama2-13b-h100-pp4-throttle.json"),
				src_path("scenarios/zb-h1-llama3-8b-pp4.json"),
				src_path("scenarios/dualpipe-llama3-8b-pp4.json"),
				src_path("validation/bloom-a100/bloom-176b-384gpu.json") };
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		json_decref(expect_merged_as_separate(paths[i], ""));
	free((char *)paths[0]);
	free(d);
}

/* Interleaved 1F1B (2 chunks a stage): every stage receives from both
 * neighbours (the first stage's second chunk from the last stage), and
 * the two lanes run on one actor (engine_recv.c): a rank keeps its
 * compute stream's actor (TP and sends in line), DP's and one receive
 * actor, 3 actors, 192 of the 64 ranks (256 with an actor per lane). */
Test(engine, both_receive_lanes_share_one_actor, .timeout = 120)
{
	int n = merge_actors(",\"schedule\":\"interleaved\",\"interleave\":2");
	cr_expect_eq(n, 192, "%d actors", n);
}

/* Both receive lanes on one actor deliver every message at the instants
 * an actor per lane does: interleaved 1F1B, whose every stage receives
 * on both lanes, gives every figure of the report, every rank's row
 * included (--per-rank), to the last bit, merged and with
 * simulation.separate_streams (an actor per stream). */
Test(engine, merged_receive_lanes_replay_as_separate_actors, .timeout = 240)
{
	char text[1024], *d = tmp_dir();
	char *path = write_file(d, "merge.json",
				merge_scenario_ex(text, sizeof(text),
						  ",\"schedule\":\"interleaved\",\"interleave\":2"));
	json_t *a = expect_merged_as_separate(path, "--per-rank");
	cr_assert_not_null(json_object_get(json_object_get(a, "breakdown"), "per_rank"));
	json_decref(a);
	free(path);
	free(d);
}

/* DeepSpeed's pipeline (BLOOM 176B, TP 4 x PP 12, Megatron-DeepSpeed):
 * each blocking send follows the TP all-reduce that ends a pass, and the
 * next compute waits for it; both run on the compute stream's actor, a
 * run of two streams (engine_stream.c, chained): folded to 12 ranks, 36
 * actors (60 with the TP collectives and the sends on their own; 46 and
 * 70 with the middle stages' receive lanes apart, engine_recv.c). The
 * same figures as separate actors: merged_streams_replay_as_separate_
 * actors. */
Test(engine, blocking_sends_run_in_line_with_their_tp_run, .timeout = 120)
{
	int n = actors_of(src_path("validation/bloom-a100/bloom-176b-384gpu.json"), 12);
	cr_expect_eq(n, 36, "%d actors", n);
}
