/* test-schedule: pipeline schedules replayed on the engine give the
 * textbook bubble: (p - 1) / m for GPipe and 1F1B, (p - 1) / (v m) for
 * interleaved 1F1B, with uniform stages and free communication. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "engine.h"
#include "schedule.h"
#include "testutil.h"

static struct topology *free_network(int gpus)
{
	char text[1024];
	snprintf(text, sizeof(text),
		 "{\"schema\":\"ddlsim.topology\",\"schema_version\":\"1.0\",\"name\":\"t\",\"source\":\"test\","
		 "\"gpu\":{\"name\":\"g\",\"peak_tflops\":{\"fp32\":1},\"hbm_GB\":80,\"hbm_bw_GBps\":1000,\"sm_count\":100},"
		 "\"node\":{\"gpus\":%d,\"intra\":{\"kind\":\"nvswitch\",\"bw_GBps\":1e9,\"latency_us\":0},"
		 "\"nics\":{\"count\":0,\"bw_Gbps\":1,\"latency_us\":0}},"
		 "\"fabric\":{\"kind\":\"nonblocking\",\"latency_us\":0}}", gpus);
	char *d = tmp_dir();
	struct diag dg;
	diag_init(&dg, stderr);
	struct topology *t = topology_load(write_file(d, "t.json", text), &dg);
	cr_assert_not_null(t);
	diag_finish(&dg);
	return t;
}

/* Build each stage's program from the schedule: F takes tf / v, B tb / v;
 * activations and gradients travel between neighbouring virtual stages. */
static double bubble(enum sched_kind k, int p, int m, int v)
{
	const double tf = 1.0, tb = 2.0;
	struct topology *t = free_network(p);
	struct program *progs = calloc((size_t)p, sizeof(*progs));
	struct program **pp = calloc((size_t)p, sizeof(*pp));
	int nv = p * v;
	for (int s = 0; s < p; s++) {
		pp[s] = &progs[s];
		program_init(&progs[s]);
		struct sched_step *o = schedule_order(k, p, s, m, v);
		for (int i = 0; i < 2 * m * v; i++) {
			int vs = o[i].chunk * p + s;
			int dep = -1;
			if (o[i].fwd) {
				if (vs > 0) {
					struct task r = { .kind = TASK_RECV, .stream = STREAM_RECV_PREV, .dir = P2P_FWD, .bytes = 1 };
					dep = program_add(&progs[s], &r, NULL, 0);
				}
				int c = program_compute(&progs[s], CAT_FORWARD, tf / v, 0, o[i].mb, o[i].chunk, &dep, dep >= 0);
				if (vs < nv - 1) {
					struct task sd = { .kind = TASK_SEND, .stream = STREAM_SEND, .dir = P2P_FWD, .bytes = 1 };
					program_add(&progs[s], &sd, &c, 1);
				}
			} else {
				if (vs < nv - 1) {
					struct task r = { .kind = TASK_RECV, .stream = STREAM_RECV_NEXT, .dir = P2P_BWD, .bytes = 1 };
					dep = program_add(&progs[s], &r, NULL, 0);
				}
				int c = program_compute(&progs[s], CAT_BACKWARD, tb / v, 0, o[i].mb, o[i].chunk, &dep, dep >= 0);
				if (vs > 0) {
					struct task sd = { .kind = TASK_SEND, .stream = STREAM_SEND, .dir = P2P_BWD, .bytes = 1 };
					program_add(&progs[s], &sd, &c, 1);
				}
			}
		}
		free(o);
	}
	struct placement pl;
	placement_init(&pl, 1, 1, p, NULL);
	struct engine_job job = { .topo = t, .nodes = 1, .pl = &pl, .stage_prog = pp, .coll_algo = "ring" };
	struct engine_result res;
	struct diag dg;
	diag_init(&dg, stderr);
	int erc = engine_run(&job, &res, &dg);
	cr_assert_eq(erc, 0, "%s", diag_text(&dg));
	double ideal = m * (tf + tb);
	double frac = (res.iteration_s - ideal) / ideal;
	/* the measured bubble of stage 0 is the same number */
	cr_assert_lt(fabs(res.rank[0].bubble_s / ideal - frac), 1e-9);
	cr_log_info("%s p=%d m=%d v=%d: bubble %.6f", schedule_registry[k].name, p, m, v, frac);
	engine_result_finish(&res);
	return frac;
}

Test(schedule, gpipe_bubble_is_p_minus_1_over_m)
{
	double f = bubble(SCHED_GPIPE, 4, 8, 1);
	cr_assert_float_eq(f, 3.0 / 8, 1e-9);
}

Test(schedule, one_f_one_b_bubble_is_p_minus_1_over_m)
{
	double f = bubble(SCHED_1F1B, 4, 8, 1);
	cr_assert_float_eq(f, 3.0 / 8, 1e-9);
}

Test(schedule, one_f_one_b_bubble_many_stages)
{
	double f = bubble(SCHED_1F1B, 8, 32, 1);
	cr_assert_float_eq(f, 7.0 / 32, 1e-9);
}

Test(schedule, interleaved_bubble_is_p_minus_1_over_vm)
{
	double f = bubble(SCHED_INTERLEAVED, 4, 8, 2);
	cr_assert_float_eq(f, 3.0 / 16, 1e-9);
}

Test(schedule, interleaved_bubble_three_chunks)
{
	double f = bubble(SCHED_INTERLEAVED, 4, 12, 3);
	cr_assert_float_eq(f, 3.0 / 36, 1e-9);
}

Test(schedule, one_f_one_b_holds_p_minus_stage_microbatches)
{
	for (int s = 0; s < 4; s++) {
		struct sched_step *o = schedule_order(SCHED_1F1B, 4, s, 8, 1);
		cr_assert_eq(schedule_peak_inflight(o, 16), 4 - s);
		free(o);
	}
	struct sched_step *g = schedule_order(SCHED_GPIPE, 4, 0, 8, 1);
	cr_assert_eq(schedule_peak_inflight(g, 16), 8);
	free(g);
}

/* Megatron: interleaving raises the first stage's in-flight activations
 * by (1 + (p - 1) / (p v)) relative to 1F1B's p micro-batches. */
Test(schedule, interleaved_inflight_matches_megatron_factor)
{
	int p = 4, v = 2, m = 8;
	struct sched_step *o = schedule_order(SCHED_INTERLEAVED, p, 0, m, v);
	int chunks = schedule_peak_inflight(o, 2 * m * v);
	/* chunks alive x (1/v of the stage's layers) vs p whole micro-batches */
	double factor = (double)chunks / v / p;
	cr_assert_float_eq(factor, 1 + (double)(p - 1) / (p * v), 1e-9, "factor %g", factor);
	free(o);
}
