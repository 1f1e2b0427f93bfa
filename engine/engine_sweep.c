/* engine_sweep: one collective over message sizes on the engine (ddlsim
 * collective, like nccl-tests), on one platform built once.
 *
 * One actor per rank runs the sizes one after another: barrier, the
 * plan's flows of this rank (puts where it is the source, gets where it
 * is the destination), wait, barrier, the plan's extra latency. Rank 0 of
 * the group records each size's time from the first barrier to the end of
 * the extra latency. No folding: every member is simulated. */
#include "engine-private.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "engine_platform.h"
#include "xalloc.h"

static int dummy_payload;

struct sweep {
	const struct topology *t;
	const int *ranks;
	int n;
	struct coll_plan **plans;   /* [npts] */
	int **by_dst;               /* [npts] flow indices sorted by dst */
	struct engine_coll_point *pts;
	int npts;
	sg_bar_t bar;
	int finished;
};

static struct sweep *g_sweep;

static void sweep_main(int argc, char **argv)
{
	struct sweep *W = g_sweep;
	int me = W->ranks[(int)(intptr_t)sg_actor_self_get_data()];
	bool first = me == W->ranks[0];
	void *sink;
	(void)argc, (void)argv;

	for (int s = 0; s < W->npts; s++) {
		struct coll_plan *p = W->plans[s];
		if (!(W->pts[s].bytes > 0))
			continue; /* NCCL launches nothing for a count of 0 */
		sg_barrier_wait(W->bar);
		double t0 = simgrid_get_clock();
		int o0 = cplan_lower(p, NULL, me, false), o1 = cplan_lower(p, NULL, me + 1, false);
		int i0 = cplan_lower(p, W->by_dst[s], me, true), i1 = cplan_lower(p, W->by_dst[s], me + 1, true);
		sg_comm_t *c = xreallocarray(NULL, (size_t)(o1 - o0 + i1 - i0 + 1), sizeof(*c));
		int nc = 0;
		for (int i = o0; i < o1; i++)
			c[nc++] = sg_mailbox_put_async(engine_coll_mailbox(0, p->flows[i].src, p->flows[i].dst),
						       &dummy_payload, (long)ceil(p->flows[i].bytes));
		for (int i = i0; i < i1; i++) {
			const struct coll_flow *f = &p->flows[W->by_dst[s][i]];
			c[nc++] = sg_mailbox_get_async(engine_coll_mailbox(0, f->src, f->dst), &sink);
		}
		engine_platform_wait_all((void **)c, (size_t)nc);
		free(c);
		sg_barrier_wait(W->bar);
		/* the links carry no latency (plain max-min): the plan's */
		if (p->extra_latency_s + p->alpha_s > 0)
			sg_actor_sleep_for(p->extra_latency_s + p->alpha_s);
		if (first)
			W->pts[s].time_s = simgrid_get_clock() - t0;
	}
	W->finished++;
}


int engine_collective_sweep(const struct topology *t, int nodes, const int *ranks, int n,
			    enum coll_op op, const char *algo, struct engine_coll_point *pts,
			    int npts, struct diag *d)
{
	for (int s = 0; s < npts; s++)
		pts[s].op = op;
	return engine_collective_run(t, nodes, ranks, n, algo, pts, npts, d);
}

int engine_collective_run(const struct topology *t, int nodes, const int *ranks, int n,
			  const char *algo, struct engine_coll_point *pts, int npts,
			  struct diag *d)
{
	int rc = -1;
	struct sweep W = { .t = t, .ranks = ranks, .n = n, .pts = pts, .npts = npts };

	if (engine_claim_process(d))
		return -1;
	if (topology_check_nodes(t, nodes, d))
		return -1;
	for (int i = 0; i < n; i++)
		if (ranks[i] < 0 || ranks[i] >= nodes * t->gpus_per_node)
			return diag_errf(d, "rank %d is not a GPU of %d nodes x %d GPUs", ranks[i],
					 nodes, t->gpus_per_node);
	W.plans = xcalloc((size_t)npts + 1, sizeof(*W.plans));
	W.by_dst = xcalloc((size_t)npts + 1, sizeof(*W.by_dst));
	for (int s = 0; s < npts; s++) {
		bool empty = !(pts[s].bytes > 0);
		struct coll_plan *p = coll_plan_create_alone(t, algo, pts[s].op, ranks, n,
							     empty ? 1 : pts[s].bytes);
		if (!p) {
			diag_errf(d, "algorithm '%s' cannot run %s on this group of %d GPUs",
				  algo, coll_op_name(pts[s].op), n);
			goto out;
		}
		W.plans[s] = p;
		W.by_dst[s] = cplan_flows_by_dst(p);
		pts[s].algo = p->algo;
		pts[s].proto = p->proto;
		pts[s].ideal_s = p->ideal_time_s;
		pts[s].nccl_s = empty ? 0 : p->nccl_time_s;
		pts[s].ideal_s = empty ? 0 : p->ideal_time_s;
		pts[s].time_s = 0;
	}
	if (n < 2) {
		rc = 0;
		goto out;
	}
	unsigned char *used = xcalloc((size_t)nodes * t->gpus_per_node, 1);
	for (int i = 0; i < n; i++)
		used[ranks[i]] = 1;
	int started = engine_start_simgrid(t, nodes, used, NULL, false, NULL, d);
	free(used);
	if (started)
		goto out;

	g_sweep = &W;
	W.bar = sg_barrier_init((unsigned)n);
	for (int i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof(name), "r%d", ranks[i]);
		engine_start_actor(name, engine_host_of(ranks[i]), sweep_main, (void *)(intptr_t)i, false);
	}
	simgrid_run();
	if (W.finished != n) {
		diag_errf(d, "the simulation deadlocked: %d of %d ranks finished", W.finished, n);
		goto out;
	}
	rc = 0;
out:
	for (int s = 0; s < npts && W.plans; s++) {
		coll_plan_destroy(W.plans[s]);
		free(W.by_dst[s]);
	}
	free(W.plans);
	free(W.by_dst);
	if (W.bar)
		sg_barrier_destroy(W.bar);
	g_sweep = NULL;
	return rc;
}
