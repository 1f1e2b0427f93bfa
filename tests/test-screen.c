/* test-screen: the plan search's screen (sim/search.c) prices a
 * collective without building its flows where the group allows it
 * (fabric/coll_time.c), and the estimates stay what they were. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "placement.h"
#include "search.h"
#include "testutil.h"

/* The screen of Llama 3 70B at 8k tokens on `nodes` nodes of topo: its
 * best 1000 candidates (caller frees), *n of them. */
static struct candidate *screen(const char *topo, int nodes, long *n)
{
	char *d = tmp_dir(), text[2048];
	snprintf(text, sizeof(text),
		 "{\"schema\": \"ddlsim.goal\", \"schema_version\": \"1.0\", \"name\": \"s\",\n"
		 " \"model\": \"%s\", \"seq_len\": 8192, \"train_tokens\": 15e12, \"deadline_days\": 90,\n"
		 " \"global_batch_tokens\": {\"min\": 4000000, \"max\": 16777216}, \"top\": 1000,\n"
		 " \"clusters\": [{\"name\": \"c\", \"topology\": \"%s\", \"nodes\": [%d],\n"
		 "   \"economics\": {\"usd_per_gpu_hour\": 2.5}}]}\n",
		 src_path("models/zoo/llama3-70b.json"), src_path(topo), nodes);
	char *path = write_file(d, "goal.json", text);
	struct diag dg;
	diag_init(&dg, stderr);
	struct goal *g = goal_load(path, &dg);
	cr_assert(g, "%s", diag_text(&dg));
	diag_finish(&dg);
	struct search_stats st = { 0 };
	struct candidate *c = search_screen(g, 0, n, &st);
	goal_destroy(g);
	free(path);
	free(d);
	return c;
}

/* A screen as the search before coll_time.c made it (commit 994ce86,
 * every collective built as a plan; equal to coll_time.c's at e37dec3),
 * re-recorded when the flash-attention grid tail (attention.h) and the
 * H100/H200 flash_sustained_ratio moved compute on 2026-11-26, and when
 * the memory anatomy's loss and recomputed layer (models/memory.h,
 * 2026-12-06) changed which candidates fit (three sums; the best three
 * stay): the best three and the sums over
 * the best 1000 (n of them) of the estimated iteration (s) and of the
 * busy fraction weighted by rank, which moves if the order does. */
struct recorded {
	const char *topo;
	int nodes;
	struct { const char *plan; double iter_s, busy; } best[3];
	long n;
	double sum_iter_s, sum_busy_rank;
};

static const struct recorded recorded[] = {
	{ "topologies/dgx-h100-fattree3.json", 2048,
	  { { "tp8 pp4v4 dp512 mb1 gb2048 z1 none sp tp,pp,dp", 1.2731915591387413, 0.54810624516446804 },
	    { "tp8 pp4v4 dp512 mb1 gb2048 z2 none sp tp,pp,dp", 1.2731915591387413, 0.54810624516446804 },
	    { "tp8 pp4v4 dp512 mb1 gb2048 z1 none sp tp,dp,pp", 1.2732675591387412, 0.54807352927978736 } },
	  1000, 2523.5603068597688, 112359.65074361098 },
	{ "topologies/dgx-h100-fattree3.json", 64,
	  { { "tp4 pp1 dp128 mb1 gb2048 z3 none sp tp,dp,pp", 24.970410152854505, 0.86584023827055434 },
	    { "tp4 pp1 dp128 mb1 gb1024 z3 none sp tp,dp,pp", 12.486099714005077, 0.86577820022574525 },
	    { "tp4 pp1 dp128 mb1 gb512 z3 none sp tp,dp,pp", 6.2439444945803642, 0.86565415080271513 } },
	  1000, 21223.201372086958, 373012.09558166948 },
	{ "topologies/dgx-h100-fattree2-2to1.json", 256,
	  { { "tp4 pp1 dp512 mb1 gb2048 z3 none sp tp,dp,pp", 6.541409144300717, 0.826289313186366 },
	    { "tp4 pp1 dp512 mb1 gb2048 z3 selective sp tp,dp,pp", 6.541409144300717, 0.852491897435535 },
	    { "tp4 pp1 dp512 mb1 gb1024 z3 none sp tp,dp,pp", 3.2709282315448145, 0.82623281321010533 } },
	  1000, 6637.1868099376843, 328271.19729692221 },
	{ "topologies/dgx-h100-rail.json", 32,
	  { { "tp4 pp1 dp64 mb1 gb2048 z3 none sp tp,dp,pp", 49.940820305709011, 0.86584023827055434 },
	    { "tp4 pp1 dp64 mb1 gb1024 z3 none sp tp,dp,pp", 24.972199428010153, 0.86577820022574525 },
	    { "tp4 pp1 dp64 mb1 gb512 z3 none sp tp,dp,pp", 12.487888989160728, 0.86565415080271513 } },
	  1000, 40321.598475501007, 382478.87617824133 },
	{ "topologies/dgx-a100.json", 128,
	  { { "tp4 pp1 dp256 mb1 gb2048 z3 none sp tp,dp,pp", 32.948804617470749, 0.91886144892748733 },
	    { "tp4 pp1 dp256 mb1 gb1024 z3 none sp tp,dp,pp", 16.475068066930568, 0.91882431769759587 },
	    { "tp4 pp1 dp256 mb1 gb512 z3 none sp tp,dp,pp", 8.2381997916604774, 0.91875006423993277 } },
	  1000, 29335.727497043375, 384132.47756801109 },
};

#define SAME(a, b) (fabs((a) - (b)) <= 1e-12 * fabs(b))

Test(screen, estimates_are_the_recorded_ones, .timeout = 300)
{
	for (size_t k = 0; k < sizeof(recorded) / sizeof(recorded[0]); k++) {
		const struct recorded *w = &recorded[k];
		long n;
		struct candidate *c = screen(w->topo, w->nodes, &n);
		double sum = 0, wsum = 0;
		cr_expect_eq(n, w->n, "%s x %d: %ld candidates kept, recorded %ld", w->topo, w->nodes, n, w->n);
		for (long i = 0; i < n; i++) {
			char b[256];
			plan_describe(&c[i].plan, b, sizeof(b));
			sum += c[i].est_iter_s;
			wsum += c[i].est_busy * (i + 1);
			if (i >= 3)
				continue;
			cr_expect_str_eq(b, w->best[i].plan, "%s x %d: #%ld", w->topo, w->nodes, i + 1);
			cr_expect(SAME(c[i].est_iter_s, w->best[i].iter_s) && SAME(c[i].est_busy, w->best[i].busy),
				  "%s x %d: #%ld %s: %.17g s, busy %.17g; recorded %.17g, %.17g", w->topo, w->nodes,
				  i + 1, b, c[i].est_iter_s, c[i].est_busy, w->best[i].iter_s, w->best[i].busy);
		}
		cr_expect(SAME(sum, w->sum_iter_s) && SAME(wsum, w->sum_busy_rank),
			  "%s x %d: sums %.17g, %.17g; recorded %.17g, %.17g", w->topo, w->nodes, sum, wsum,
			  w->sum_iter_s, w->sum_busy_rank);
		free(c);
	}
}

/* Every group of rank 0 the screen prices (tp, dp and the pipeline's
 * pair, both orders) on `nodes` nodes of topo, at the screen's two sizes
 * and every collective it prices: the time without flows equals the
 * built plan's to 1e-12. Returns how many were closed forms. */
static int check_groups(const char *topo, int nodes, int *total, int *trees, int *fabrics)
{
	struct topology *t = load_topology(topo);
	static const char *const orders[] = { "tp,dp,pp", "tp,pp,dp" };
	static const enum coll_op ops[] = { COLL_ALLREDUCE, COLL_REDUCE_SCATTER, COLL_ALLGATHER };
	int G = nodes * t->gpus_per_node, closed = 0;
	int *ranks = malloc((size_t)G * sizeof(int));
	for (int tp = 1; tp <= t->gpus_per_node; tp *= 2)
		for (int pp = 1; pp <= 16; pp *= 2)
			for (int o = 0; o < 2; o++) {
				if (G % (tp * pp))
					continue;
				struct placement pl;
				placement_init(&pl, tp, G / (tp * pp), pp, orders[o]);
				for (int grp = 0; grp < 2; grp++) {
					int n = placement_group(&pl, grp ? GROUP_DP : GROUP_TP, 0, ranks);
					for (int k = 0; k < 3 && n > 1; k++)
						for (double b = 1e6; b <= 1e9; b *= 1000) {
							struct coll_time ct;
							struct coll_plan *p = coll_plan_create(t, "auto", ops[k], ranks, n, b);
							int rc = coll_time_uncontended(t, "auto", ops[k], ranks, n, b, &ct);
							cr_assert_eq(rc, p ? 0 : -1);
							if (!p)
								continue;
							cr_expect(fabs(ct.ideal_time_s - p->ideal_time_s) <= 1e-12 * p->ideal_time_s &&
								  fabs(ct.nccl_time_s - p->nccl_time_s) <= 1e-12 * p->nccl_time_s,
								  "%s, %d nodes, tp %d pp %d %s, %s of %d ranks, %g B: "
								  "ideal %.17g vs plan %.17g, nccl %.17g vs %.17g (%s)",
								  topo, nodes, tp, pp, orders[o], coll_op_name(ops[k]), n, b,
								  ct.ideal_time_s, p->ideal_time_s, ct.nccl_time_s, p->nccl_time_s,
								  p->algo);
							/* the plan's fabric time: its transfer, NCCL's losses taken out */
							double fab = (p->ideal_time_s - fmax(p->latency_s, p->alpha_s)) / p->wire_scale;
							cr_expect(ct.fabric_s == 0 || fabs(ct.fabric_s - fab) <= 1e-6 * fab,
								  "%s, %d nodes, tp %d pp %d %s, %s of %d ranks, %g B: "
								  "fabric %.17g vs plan %.17g (%s)", topo, nodes, tp, pp, orders[o],
								  coll_op_name(ops[k]), n, b, ct.fabric_s, fab, p->algo);
							*fabrics += ct.fabric_s > 0;
							closed += ct.closed;
							*trees += ct.closed && !strcmp(p->algo, "tree");
							++*total;
							coll_plan_destroy(p);
						}
				}
			}
	free(ranks);
	topology_destroy(t);
	return closed;
}

/* On every shipped topology, each group checked (total, the loop's own
 * count), of them the closed forms (ring and tree) and the trees among
 * them as recorded when coll_time.c came (commit e37dec3): the closed
 * form reaches at least as many again, and every closed form's fabric
 * time is held to the plan's. */
Test(screen, closed_forms_equal_the_built_plans, .timeout = 300)
{
	static const struct { const char *topo; int nodes, total, closed, trees; } cases[] = {
		{ "topologies/dgx-h100-fattree3.json", 2048, 420, 240, 74 },
		{ "topologies/dgx-h100-fattree3.json", 160, 420, 240, 53 },
		{ "topologies/dgx-h100-fattree2-2to1.json", 256, 420, 234, 49 },
		{ "topologies/dgx-h100-rail.json", 32, 420, 135, 31 },
		{ "topologies/dgx-h100.json", 64, 420, 240, 41 },
		{ "topologies/dgx-a100.json", 128, 420, 240, 40 },
		{ "topologies/dgx1-v100.json", 16, 408, 186, 17 },
		{ "topologies/jeanzay-a100-opa.json", 24, 396, 210, 12 },
		{ "topologies/l40s-pcie-8gpu.json", 8, 372, 174, 0 },
		{ "topologies/hgx-h200.json", 12, 348, 174, 18 },
		{ "topologies/gb200-nvl72.json", 4, 420, 108, 28 },
		{ "topologies/dgx-a100-40gb.json", 3, 192, 84, 2 },
		{ "topologies/dgx-h100-fattree3-r128.json", 1536, 420, 240, 74 },
		{ "topologies/v100-1gpu-edr.json", 48, 60, 60, 4 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int total = 0, trees = 0, fabrics = 0;
		int closed = check_groups(cases[i].topo, cases[i].nodes, &total, &trees, &fabrics);
		cr_log_info("%s x %d: %d of %d closed, %d trees, %d fabric", cases[i].topo,
			    cases[i].nodes, closed, total, trees, fabrics);
		cr_expect_eq(total, cases[i].total, "%s x %d: %d groups checked", cases[i].topo,
			     cases[i].nodes, total);
		cr_expect_geq(closed, cases[i].closed, "%s x %d: %d of %d closed", cases[i].topo,
			      cases[i].nodes, closed, total);
		cr_expect_geq(trees, cases[i].trees, "%s x %d: %d trees closed", cases[i].topo,
			      cases[i].nodes, trees);
		cr_expect_geq(fabrics, closed, "%s x %d: %d fabric times for %d closed forms",
			      cases[i].topo, cases[i].nodes, fabrics, closed);
	}
}

/* Groups the closed form leaves to the built plan, and one it takes: the
 * answer is the plan's either way. */
Test(screen, other_groups_are_built)
{
	struct topology *t = load_topology("topologies/dgx-h100-fattree3.json");
	static const struct { int r[8], n; const char *algo; bool closed; } cases[] = {
		{ { 0, 1, 8, 9, 16, 17, 24, 25 }, 8, "auto", true },     /* two GPUs on four nodes */
		{ { 0, 1, 8, 16, 17, 24, 25, 32 }, 8, "auto", false },   /* one node short */
		{ { 0, 1, 8, 10, 16, 17, 24, 25 }, 8, "auto", false },   /* another local GPU */
		{ { 8, 9, 0, 1, 16, 17, 24, 25 }, 8, "auto", false },    /* not sorted */
		{ { 0, 1, 8, 9, 16, 17, 24, 25 }, 8, "ring", false },    /* forced */
		{ { 0, 1024, 2048, 4096, 8192, 16384, 32768, 65528 }, 8, "auto", true }, /* pods apart */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		for (int op = COLL_ALLREDUCE; op <= COLL_ALLGATHER; op++) {
			struct coll_time ct;
			struct coll_plan *p = coll_plan_create(t, cases[i].algo, op, cases[i].r, cases[i].n, 1e8);
			cr_assert(p);
			cr_assert_eq(coll_time_uncontended(t, cases[i].algo, op, cases[i].r, cases[i].n, 1e8, &ct), 0);
			cr_expect_eq(ct.closed, cases[i].closed, "case %zu, %s", i, coll_op_name(op));
			cr_expect(fabs(ct.ideal_time_s - p->ideal_time_s) <= 1e-12 * p->ideal_time_s &&
				  ct.nccl_time_s == p->nccl_time_s, "case %zu, %s: %.17g vs %.17g", i,
				  coll_op_name(op), ct.ideal_time_s, p->ideal_time_s);
			coll_plan_destroy(p);
		}
	topology_destroy(t);
}
