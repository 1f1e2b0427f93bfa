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

/* Build each stage's program from the schedule: F takes tf / v, B tb / v
 * (x scale[stage] on that stage's GPU when scale is not NULL: a straggler);
 * activations and gradients travel between neighbouring virtual stages.
 * Replays it into res. */
static void replay(enum sched_kind k, int p, int m, int v, const double *scale,
		   struct engine_result *res)
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
	struct engine_job job = { .topo = t, .nodes = 1, .pl = &pl, .stage_prog = pp, .coll_algo = "ring",
				  .compute_scale = scale };
	struct diag dg;
	diag_init(&dg, stderr);
	int erc = engine_run(&job, res, &dg);
	cr_assert_eq(erc, 0, "%s", diag_text(&dg));
}

static double bubble(enum sched_kind k, int p, int m, int v)
{
	const double tf = 1.0, tb = 2.0;
	struct engine_result res;
	replay(k, p, m, v, NULL, &res);
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

/* ---- uneven stages ------------------------------------------------ */

#include "plan.h"

/* Replay schedule k with the layers of each virtual stage from pl (model
 * of L layers), forward tf and backward tb per layer, free network. */
static struct engine_result replay_layers(enum sched_kind k, const struct plan *pl, long L, int m,
					  double tf, double tb)
{
	int p = pl->parallel.pp, v = k == SCHED_INTERLEAVED ? pl->parallel.interleave : 1, nv = p * v;
	struct topology *t = free_network(p);
	struct program *progs = calloc((size_t)p, sizeof(*progs));
	struct program **pp = calloc((size_t)p, sizeof(*pp));
	for (int s = 0; s < p; s++) {
		pp[s] = &progs[s];
		program_init(&progs[s]);
		struct sched_step *o = schedule_order(k, p, s, m, v);
		for (int i = 0; i < 2 * m * v; i++) {
			int vs = o[i].chunk * p + s, first;
			int nl = plan_vstage_layers(pl, L, vs, nv, &first);
			int dep = -1;
			bool fwd = o[i].fwd;
			bool from = fwd ? vs > 0 : vs < nv - 1, to = fwd ? vs < nv - 1 : vs > 0;
			if (from) {
				struct task r = { .kind = TASK_RECV, .stream = fwd ? STREAM_RECV_PREV : STREAM_RECV_NEXT,
						  .dir = fwd ? P2P_FWD : P2P_BWD, .bytes = 1 };
				dep = program_add(&progs[s], &r, NULL, 0);
			}
			int c = program_compute(&progs[s], fwd ? CAT_FORWARD : CAT_BACKWARD, nl * (fwd ? tf : tb),
						0, o[i].mb, o[i].chunk, &dep, dep >= 0);
			if (to) {
				struct task sd = { .kind = TASK_SEND, .stream = STREAM_SEND,
						   .dir = fwd ? P2P_FWD : P2P_BWD, .bytes = 1 };
				program_add(&progs[s], &sd, &c, 1);
			}
		}
		free(o);
	}
	struct placement plc;
	placement_init(&plc, 1, 1, p, NULL);
	struct engine_job job = { .topo = t, .nodes = 1, .pl = &plc, .stage_prog = pp, .coll_algo = "ring" };
	struct engine_result res;
	struct diag dg;
	diag_init(&dg, stderr);
	cr_assert_eq(engine_run(&job, &res, &dg), 0, "%s", diag_text(&dg));
	return res;
}

/* Two stages, a lighter first one (first_stage_layers 1 of 4: 1 + 3),
 * 1F1B: the heavy stage never starves once the first micro-batch has
 * arrived, so T = f0 + m (f1 + b1) + b0, its bubble is the wait for the
 * first forward, f0, and stage 0 waits for everything else:
 * T - m (f0 + b0). */
Test(schedule, uneven_stages_bubble_is_the_closed_form)
{
	struct plan pl;
	plan_init(&pl);
	pl.parallel.pp = 2;
	pl.parallel.first_stage_layers = 1;
	const double tf = 1, tb = 2;
	const int m = 8;
	struct engine_result r = replay_layers(SCHED_1F1B, &pl, 4, m, tf, tb);
	double f0 = tf, b0 = tb, f1 = 3 * tf, b1 = 3 * tb;
	double T = f0 + m * (f1 + b1) + b0;
	cr_assert_float_eq(r.iteration_s, T, 1e-9, "iteration %.12g vs %.12g", r.iteration_s, T);
	cr_assert_float_eq(r.rank[1].bubble_s, f0, 1e-9, "stage 1 bubble %.12g", r.rank[1].bubble_s);
	cr_assert_float_eq(r.rank[0].bubble_s, T - m * (f0 + b0), 1e-9, "stage 0 bubble %.12g",
			   r.rank[0].bubble_s);
	engine_result_finish(&r);
}

/* Interleaved, explicit per-virtual-stage counts that are uniform give
 * the textbook (p - 1) / (v m) back: vstage_layers reaches the replay. */
Test(schedule, explicit_vstage_layers_reach_the_replay)
{
	struct plan pl;
	plan_init(&pl);
	pl.parallel.pp = 4;
	pl.parallel.interleave = 2;
	pl.parallel.schedule = SCHED_INTERLEAVED;
	pl.parallel.nvstage_layers = 8;
	for (int i = 0; i < 8; i++)
		pl.parallel.vstage_layers[i] = 2;
	const int m = 8;
	struct engine_result r = replay_layers(SCHED_INTERLEAVED, &pl, 16, m, 0.5, 1.0);
	double ideal = m * 4 * (0.5 + 1.0);
	cr_assert_float_eq((r.iteration_s - ideal) / ideal, 3.0 / 16, 1e-9);
	engine_result_finish(&r);
}

/* Llama 3 405B as trained: 126 layers on 16 stages, one layer fewer on
 * the first and the last (7, 8 x 14, 7); with 2 chunks per stage each
 * stage's layers split as evenly as they can, the earlier chunk first. */
Test(schedule, first_and_last_stage_layers_split_over_chunks)
{
	struct plan pl;
	plan_init(&pl);
	pl.parallel.pp = 16;
	pl.parallel.interleave = 2;
	pl.parallel.schedule = SCHED_INTERLEAVED;
	pl.parallel.first_stage_layers = 7;
	pl.parallel.last_stage_layers = 7;
	int nv = 32, total = 0, first, want_first = 0;
	for (int vs = 0; vs < nv; vs++) {
		int stage = vs % 16, chunk = vs / 16;
		int S = stage == 0 || stage == 15 ? 7 : 8;
		int want = S / 2 + (chunk < S % 2);
		int n = plan_vstage_layers(&pl, 126, vs, nv, &first);
		cr_assert_eq(n, want, "virtual stage %d: %d layers, want %d", vs, n, want);
		cr_assert_eq(first, want_first, "virtual stage %d starts at %d", vs, first);
		want_first += n;
		total += n;
	}
	cr_assert_eq(total, 126);
}

/* The pipeline's dependency equations, solved directly: each stage runs
 * its schedule's steps in order, F(s, i) after F(s - 1, i), B(s, i) after
 * B(s + 1, i) (the last stage's after its own F), a step of stage s taking
 * its time x scale[s]. Returns when the last step ends. */
static double recurrence(enum sched_kind k, int p, int m, const double *scale)
{
	const double tf = 1.0, tb = 2.0;
	double fe[64][64], be[64][64], free_at[64] = { 0 };
	int next[64] = { 0 }, left = 2 * m * p;
	struct sched_step *o[64];
	for (int s = 0; s < p; s++)
		o[s] = schedule_order(k, p, s, m, 1);
	for (int s = 0; s < p; s++)
		for (int i = 0; i < m; i++)
			fe[s][i] = be[s][i] = -1;
	while (left > 0)
		for (int s = 0; s < p; s++) {
			if (next[s] == 2 * m)
				continue;
			struct sched_step x = o[s][next[s]];
			double dep = x.fwd ? (s > 0 ? fe[s - 1][x.mb] : 0)
					   : (s < p - 1 ? be[s + 1][x.mb] : fe[s][x.mb]);
			if (dep < 0)
				continue;   /* not yet computed */
			double start = dep > free_at[s] ? dep : free_at[s];
			double end = start + (x.fwd ? tf : tb) * scale[s];
			(x.fwd ? fe : be)[s][x.mb] = end;
			free_at[s] = end;
			next[s]++;
			left--;
		}
	double last = 0;
	for (int s = 0; s < p; s++) {
		if (free_at[s] > last)
			last = free_at[s];
		free(o[s]);
	}
	return last;
}

/* One straggler stage (its GPU x f slower) in a pipeline of otherwise
 * uniform stages of time T = tf + tb per micro-batch. GPipe: the slow
 * stage paces every micro-batch once filled, so the iteration is
 * (m - 1) f T + the sum of the stage times = (m - 1) f T + (p - 1) T + f T.
 * 1F1B: the slow stage also starves while its first backward makes the
 * round trip through the faster stages after it; the replay matches the
 * schedule's dependency equations, and both stay below the bound
 * (m + p - 1) f T (every stage as slow as the slowest). */
static void one_slow_stage(enum sched_kind k, int p, int m, int slow, double f)
{
	double scale[64], T = 3.0;
	for (int s = 0; s < p; s++)
		scale[s] = s == slow ? f : 1;
	struct engine_result res;
	replay(k, p, m, 1, scale, &res);
	double want = k == SCHED_GPIPE ? (m - 1) * f * T + (p - 1) * T + f * T : recurrence(k, p, m, scale);
	cr_expect_float_eq(res.iteration_s, want, 1e-9 * want, "%s p=%d m=%d slow %d x%g: %.9g, closed form %.9g",
			   schedule_registry[k].name, p, m, slow, f, res.iteration_s, want);
	cr_expect_float_eq(recurrence(k, p, m, scale), res.iteration_s, 1e-9 * want);
	cr_expect_leq(res.iteration_s, (m + p - 1) * f * T * (1 + 1e-12));
	cr_log_info("%s p=%d m=%d slow stage %d x%g: %.4g (uniform %.4g, bound %.4g)",
		    schedule_registry[k].name, p, m, slow, f, res.iteration_s, (m + p - 1) * T,
		    (m + p - 1) * f * T);
	engine_result_finish(&res);
}

Test(schedule, one_slow_stage_one_f_one_b_closed_form)
{
	one_slow_stage(SCHED_1F1B, 4, 8, 2, 1.5);
}

Test(schedule, one_slow_stage_gpipe_closed_form)
{
	one_slow_stage(SCHED_GPIPE, 4, 8, 2, 1.5);
}

Test(schedule, one_slow_first_stage_one_f_one_b_closed_form)
{
	one_slow_stage(SCHED_1F1B, 8, 16, 0, 1.2);
}

Test(schedule, one_slow_last_stage_gpipe_closed_form)
{
	one_slow_stage(SCHED_GPIPE, 8, 16, 7, 2.0);
}

/* ---- ZB-H1: the backward split into B and W ------------------------ */

/* Replay schedule k with F taking tf, B tb and W tw (a schedule that does
 * not split the backward runs tb + tw in its backward), free network: B
 * sends the input gradient on, W sends nothing. */
static void replay_split(enum sched_kind k, int p, int m, double tf, double tb, double tw,
			 struct engine_result *res)
{
	struct topology *t = free_network(p);
	struct program *progs = calloc((size_t)p, sizeof(*progs));
	struct program **pp = calloc((size_t)p, sizeof(*pp));
	bool split = schedule_splits_backward(k);
	for (int s = 0; s < p; s++) {
		pp[s] = &progs[s];
		program_init(&progs[s]);
		struct sched_step *o = schedule_order(k, p, s, m, 1);
		for (int i = 0; i < schedule_steps(k, m, 1); i++) {
			bool fwd = o[i].fwd, w = o[i].w;
			bool from = fwd ? s > 0 : !w && s < p - 1, to = fwd ? s < p - 1 : !w && s > 0;
			int dep = -1;
			if (from) {
				struct task r = { .kind = TASK_RECV, .stream = fwd ? STREAM_RECV_PREV : STREAM_RECV_NEXT,
						  .dir = fwd ? P2P_FWD : P2P_BWD, .bytes = 1 };
				dep = program_add(&progs[s], &r, NULL, 0);
			}
			double time = fwd ? tf : w ? tw : split ? tb : tb + tw;
			int c = program_compute(&progs[s], fwd ? CAT_FORWARD : CAT_BACKWARD, time, 0, o[i].mb, 0,
						&dep, dep >= 0);
			if (to) {
				struct task sd = { .kind = TASK_SEND, .stream = STREAM_SEND,
						   .dir = fwd ? P2P_FWD : P2P_BWD, .bytes = 1 };
				program_add(&progs[s], &sd, &c, 1);
			}
		}
		free(o);
	}
	struct placement plc;
	placement_init(&plc, 1, 1, p, NULL);
	struct engine_job job = { .topo = t, .nodes = 1, .pl = &plc, .stage_prog = pp, .coll_algo = "ring" };
	struct diag dg;
	diag_init(&dg, stderr);
	cr_assert_eq(engine_run(&job, res, &dg), 0, "%s", diag_text(&dg));
}

/* Every stage runs F, B and W of each micro-batch exactly once, F before
 * B before W; forwards and B's in micro-batch order on every stage, so
 * the activations one stage sends and the gradients it receives match
 * its neighbours' order; never more than p micro-batches in flight. */
Test(schedule, zb_h1_steps_are_valid)
{
	static const int pm[][2] = { { 2, 4 }, { 4, 4 }, { 4, 8 }, { 4, 5 }, { 8, 32 }, { 4, 2 } };
	for (size_t c = 0; c < sizeof(pm) / sizeof(pm[0]); c++) {
		int p = pm[c][0], m = pm[c][1];
		cr_assert_eq(schedule_steps(SCHED_ZBH1, m, 1), 3 * m);
		for (int s = 0; s < p; s++) {
			struct sched_step *o = schedule_order(SCHED_ZBH1, p, s, m, 1);
			int at[3][64], seen[3] = { 0 };
			for (int j = 0; j < m; j++)
				at[0][j] = at[1][j] = at[2][j] = -1;
			for (int i = 0; i < 3 * m; i++) {
				int kind = o[i].fwd ? 0 : o[i].w ? 2 : 1;
				cr_assert(!(o[i].fwd && o[i].w));
				cr_assert(o[i].mb >= 0 && o[i].mb < m && o[i].chunk == 0);
				cr_assert_eq(at[kind][o[i].mb], -1, "p=%d m=%d stage %d: step %d twice", p, m, s, i);
				at[kind][o[i].mb] = i;
				cr_assert_eq(o[i].mb, seen[kind]++, "p=%d m=%d stage %d: out of order at %d", p, m, s, i);
			}
			for (int j = 0; j < m; j++)
				cr_assert(at[0][j] >= 0 && at[0][j] < at[1][j] && at[1][j] < at[2][j],
					  "p=%d m=%d stage %d micro-batch %d: F %d B %d W %d", p, m, s, j,
					  at[0][j], at[1][j], at[2][j]);
			cr_assert_leq(schedule_peak_inflight(o, 3 * m), p);
			free(o);
		}
	}
}

/* Qi et al.: with T_F = T_B = T_W the bubble is (p - 1)(T_F + T_B - T_W)
 * against 1F1B's (p - 1)(T_F + T_B + T_W): the iteration is
 * m (T_F + T_B + T_W) + the bubble. One replay per test (the engine runs
 * once per process): zb-h1 against the closed forms of both, 1f1b with
 * the same times against its own. */
static double split_bubble(enum sched_kind k, int p, int m, double *closed_zb, double *closed_1f1b)
{
	const double tf = 1, tb = 1, tw = 1;
	struct engine_result r;
	replay_split(k, p, m, tf, tb, tw, &r);
	double work = m * (tf + tb + tw), zb = (p - 1) * (tf + tb - tw), one = (p - 1) * (tf + tb + tw);
	*closed_zb = zb / (work + zb);
	*closed_1f1b = one / (work + one);
	double frac = (r.iteration_s - work) / r.iteration_s;
	/* stage 0 idles the whole bubble and nothing more */
	cr_expect(fabs(r.rank[0].bubble_s - (r.iteration_s - work)) <= 1e-9 * r.iteration_s,
		  "stage 0 bubble %.9g, iteration %.9g", r.rank[0].bubble_s, r.iteration_s);
	cr_log_info("%s p=%d m=%d: %.6g s, bubble fraction %.6f (zb-h1 closed form %.6f, 1f1b %.6f)",
		    schedule_registry[k].name, p, m, r.iteration_s, frac, *closed_zb, *closed_1f1b);
	engine_result_finish(&r);
	return frac;
}

static void zb_h1_bubble(int p, int m)
{
	double zb, one, frac = split_bubble(SCHED_ZBH1, p, m, &zb, &one);
	cr_expect(fabs(frac - zb) <= 0.01 * zb, "p=%d m=%d: bubble %.6f, closed form %.6f", p, m, frac, zb);
	cr_expect_lt(frac, one);
}

Test(schedule, zb_h1_bubble_is_the_closed_form)
{
	zb_h1_bubble(4, 8);
}

Test(schedule, zb_h1_bubble_many_stages)
{
	zb_h1_bubble(8, 32);
}

Test(schedule, zb_h1_bubble_as_many_microbatches_as_stages)
{
	zb_h1_bubble(4, 4);
}

Test(schedule, one_f_one_b_bubble_with_equal_f_b_w)
{
	double zb, one, frac = split_bubble(SCHED_1F1B, 4, 8, &zb, &one);
	cr_expect_float_eq(frac, one, 1e-9);
	cr_expect_gt(frac, zb);
}

/* The first stage holds 1F1B's p micro-batches at its peak (from F to
 * W), and no stage more. */
Test(schedule, zb_h1_peak_inflight_is_one_f_one_b_peak)
{
	int p = 4, m = 8, peak1 = 0;
	for (int s = 0; s < p; s++) {
		struct sched_step *z = schedule_order(SCHED_ZBH1, p, s, m, 1);
		struct sched_step *o = schedule_order(SCHED_1F1B, p, s, m, 1);
		int pz = schedule_peak_inflight(z, 3 * m), po = schedule_peak_inflight(o, 2 * m);
		if (s == 0)
			cr_assert_eq(pz, po, "stage 0: zb-h1 %d, 1f1b %d", pz, po);
		cr_assert_leq(pz, p);
		if (po > peak1)
			peak1 = po;
		free(z);
		free(o);
	}
	cr_assert_eq(peak1, p);
}

/* ---- DualPipe: two chunks per rank, fed from both ends --------------- */

/* Replay dualpipe as the builder issues it (sim/build_transformer.c
 * build_step): chunk 0 runs stage s of the pipeline from rank 0 up,
 * chunk 1 stage p - 1 - s of the one from rank p - 1 down (its messages
 * on their own mailboxes, task.rev); F takes tf, B tb, W tw; a pair's
 * forward sends after the pair's backward, a whole backward after its
 * W. Free network. */
static void replay_dualpipe(int p, int m, double tf, double tb, double tw, struct engine_result *res)
{
	struct topology *t = free_network(p);
	struct program *progs = calloc((size_t)p, sizeof(*progs));
	struct program **pp = calloc((size_t)p, sizeof(*pp));
	for (int s = 0; s < p; s++) {
		pp[s] = &progs[s];
		program_init(&progs[s]);
		struct sched_step *o = schedule_order(SCHED_DUALPIPE, p, s, m, 2);
		int c = -1, pend = -1;
		for (int i = 0; i < schedule_steps(SCHED_DUALPIPE, m, 2); i++) {
			int nv, vs = schedule_vstage(SCHED_DUALPIPE, p, 2, s, o[i].chunk, &nv);
			bool rev = schedule_reversed(SCHED_DUALPIPE, o[i].chunk), fwd = o[i].fwd;
			struct task r = { .kind = TASK_RECV, .dir = fwd ? P2P_FWD : P2P_BWD, .rev = rev,
					  .stream = fwd != rev ? STREAM_RECV_PREV : STREAM_RECV_NEXT, .bytes = 1 };
			struct task sd = { .kind = TASK_SEND, .stream = STREAM_SEND, .dir = r.dir, .rev = rev,
					   .bytes = 1 };
			int dep = -1;
			if (!o[i].w && (fwd ? vs > 0 : vs < nv - 1))
				dep = program_add(&progs[s], &r, NULL, 0);
			c = program_compute(&progs[s], fwd ? CAT_FORWARD : CAT_BACKWARD,
					    fwd ? tf : o[i].w ? tw : tb, 0, o[i].mb, o[i].chunk, &dep, dep >= 0);
			bool send = fwd ? vs < nv - 1 && !o[i].pair : vs > 0 && o[i].w == o[i].whole;
			if (send) {
				sd.dir = fwd ? P2P_FWD : P2P_BWD;
				program_add(&progs[s], &sd, &c, 1);
			}
			if (fwd && o[i].pair)
				pend = i;
			if (o[i].w && o[i].whole && pend >= 0) {
				int pv = schedule_vstage(SCHED_DUALPIPE, p, 2, s, o[pend].chunk, &nv);
				sd.dir = P2P_FWD;
				sd.rev = schedule_reversed(SCHED_DUALPIPE, o[pend].chunk);
				if (pv < nv - 1)
					program_add(&progs[s], &sd, &c, 1);
				pend = -1;
			}
		}
		free(o);
	}
	struct placement plc;
	placement_init(&plc, 1, 1, p, NULL);
	struct engine_job job = { .topo = t, .nodes = 1, .pl = &plc, .stage_prog = pp, .coll_algo = "ring" };
	struct diag dg;
	diag_init(&dg, stderr);
	cr_assert_eq(engine_run(&job, res, &dg), 0, "%s", diag_text(&dg));
}

/* Every rank runs F, B and W of each micro-batch once, F before B before
 * W, the first half of the micro-batches through chunk 0, the second
 * through chunk 1, each chunk's forwards and B's in micro-batch order; a
 * whole backward's W right after its B, a pair's forward right before a
 * whole backward; both chunks' layers are the same p stages. */
Test(schedule, dualpipe_steps_are_valid)
{
	static const int pm[][2] = { { 2, 4 }, { 4, 8 }, { 4, 12 }, { 8, 16 }, { 8, 22 }, { 16, 120 } };
	for (size_t c = 0; c < sizeof(pm) / sizeof(pm[0]); c++) {
		int p = pm[c][0], m = pm[c][1], n = schedule_steps(SCHED_DUALPIPE, m, 2);
		cr_assert_eq(n, 3 * m);
		for (int s = 0; s < p; s++) {
			struct sched_step *o = schedule_order(SCHED_DUALPIPE, p, s, m, 2);
			int at[3][256], seen[3][2] = { { 0 } }, nv;
			for (int j = 0; j < m; j++)
				at[0][j] = at[1][j] = at[2][j] = -1;
			for (int i = 0; i < n; i++) {
				int kind = o[i].fwd ? 0 : o[i].w ? 2 : 1, ch = o[i].chunk;
				cr_assert(o[i].mb >= 0 && o[i].mb < m);
				cr_assert_eq(ch, o[i].mb >= m / 2, "p=%d m=%d rank %d: micro-batch %d in chunk %d",
					     p, m, s, o[i].mb, ch);
				cr_assert_eq(at[kind][o[i].mb], -1, "p=%d m=%d rank %d: step %d twice", p, m, s, i);
				at[kind][o[i].mb] = i;
				if (kind < 2)
					cr_assert_eq(o[i].mb, ch * (m / 2) + seen[kind][ch]++,
						     "p=%d m=%d rank %d: out of order at %d", p, m, s, i);
				if (kind == 1 && o[i].whole)
					cr_assert(i + 1 < n && o[i + 1].w && o[i + 1].whole && o[i + 1].mb == o[i].mb);
				if (o[i].pair)
					cr_assert(i + 1 < n && !o[i + 1].fwd && o[i + 1].whole && o[i + 1].chunk != ch);
			}
			for (int j = 0; j < m; j++)
				cr_assert(at[0][j] >= 0 && at[0][j] < at[1][j] && at[1][j] < at[2][j],
					  "p=%d m=%d rank %d micro-batch %d: F %d B %d W %d", p, m, s, j,
					  at[0][j], at[1][j], at[2][j]);
			cr_assert_eq(schedule_vstage(SCHED_DUALPIPE, p, 2, s, 0, &nv), s);
			cr_assert_eq(schedule_vstage(SCHED_DUALPIPE, p, 2, s, 1, &nv), p - 1 - s);
			cr_assert_eq(nv, p);
			free(o);
		}
	}
}

/* Table 2 of the DeepSeek-V3 report: activations of PP + 1 micro-batch
 * chunks at the peak (1F1B: PP), on the ranks next to the middle; none
 * more. */
Test(schedule, dualpipe_peak_inflight_is_pp_plus_one)
{
	static const int pm[][2] = { { 4, 8 }, { 8, 16 }, { 8, 40 }, { 16, 120 } };
	for (size_t c = 0; c < sizeof(pm) / sizeof(pm[0]); c++) {
		int p = pm[c][0], m = pm[c][1], peak = 0;
		for (int s = 0; s < p; s++) {
			struct sched_step *o = schedule_order(SCHED_DUALPIPE, p, s, m, 2);
			int k = schedule_peak_inflight(o, 3 * m);
			cr_log_info("dualpipe p=%d m=%d rank %d: peak %d micro-batch chunks", p, m, s, k);
			if (k > peak)
				peak = k;
			free(o);
		}
		cr_expect_eq(peak, p + 1, "p=%d m=%d: peak %d, Table 2 says pp + 1 = %d", p, m, peak, p + 1);
	}
}

/* Free communication, uniform stages: rank 0 computes m (T_F + T_B +
 * T_W) and idles the bubble, Table 2's (p/2 - 1)(T_F&B + B - 3 T_W)
 * with B the whole backward T_B + T_W and T_F&B = T_F + B (a pair's
 * compute runs back to back): (p/2 - 1)(T_F + 2 T_B - T_W), where T_F =
 * T_B >= T_W (schedule.h: elsewhere the critical path bends away from
 * the closed form). */
static void dualpipe_bubble(int p, int m, double tf, double tb, double tw)
{
	struct engine_result r;
	replay_dualpipe(p, m, tf, tb, tw, &r);
	double work = m * (tf + tb + tw), full = tb + tw, fb = tf + full;
	double closed = (p / 2 - 1) * (fb + full - 3 * tw), one = (p - 1) * (tf + full);
	double bubble = r.iteration_s - work;
	cr_log_info("dualpipe p=%d m=%d F %g B %g W %g: %.9g s, bubble %.9g, closed form %.9g, "
		    "1f1b's (p - 1)(F + B + W) %.9g", p, m, tf, tb, tw, r.iteration_s, bubble, closed, one);
	cr_expect(fabs(bubble - closed) <= 1e-6 * closed, "p=%d m=%d: bubble %.9g, closed form %.9g",
		  p, m, bubble, closed);
	cr_expect(fabs(r.rank[0].bubble_s - bubble) <= 1e-6 * r.iteration_s, "rank 0 bubble %.9g",
		  r.rank[0].bubble_s);
	cr_expect_lt(bubble, one);
	engine_result_finish(&r);
}

Test(schedule, dualpipe_bubble_is_the_closed_form)
{
	dualpipe_bubble(8, 16, 1, 1, 1);
}

Test(schedule, dualpipe_bubble_shorter_weight_gradients)
{
	dualpipe_bubble(8, 24, 1.0, 1.0, 0.6);
}

Test(schedule, dualpipe_bubble_sixteen_ranks)
{
	dualpipe_bubble(16, 40, 1, 1, 1);
}
