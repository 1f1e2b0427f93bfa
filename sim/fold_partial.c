/* fold_partial: partial folding: the replicas a degraded link touches,
 * simulated whole. No SimGrid here. */
#include "fold-private.h"
#include "platform.h"

/* ---- partial folding: replicas a degraded link touches ------------
 *
 * A folded rank posts nothing, so a flow it would put on a degraded link
 * would be missing from that link. Its replica is simulated whole too:
 * any rank of it whose own collective flows or pipeline messages cross a
 * degraded link marks it (a 1:1 fat tree with leaf 1's uplinks halved,
 * the ring's flows from leaf 0 into leaf 1: +1.5e-4 without them). */
struct deg_walk {
	struct fold *F;
	int src, ndst, dst[64];  /* destinations already routed */
	bool hit;
};

static bool crosses_degraded(struct deg_walk *w, int dst)
{
	for (int i = 0; i < w->ndst; i++)
		if (w->dst[i] == dst)
			return false;
	if (w->ndst < (int)(sizeof(w->dst) / sizeof(w->dst[0])))
		w->dst[w->ndst++] = dst;
	const struct engine_job *job = w->F->job;
	struct topo_hop h[TOPO_MAX_HOPS];
	int n = topology_route(job->topo, w->src, dst, h);
	for (int i = 0; i < n; i++)
		for (int k = 0; k < job->ndegraded; k++)
			if (platform_hop_is(job->topo, &h[i], job->degraded[k].link))
				return true;
	return false;
}

static void deg_flow(void *ctx, const struct task *t, int dst)
{
	struct deg_walk *w = ctx;
	(void)t;
	if (!w->hit && crosses_degraded(w, dst))
		w->hit = true;
}

/* Mark in drep[dp] the replicas not yet marked with a rank whose traffic
 * crosses a degraded link. Returns 0, or -1 if a plan cannot be made. */
int fold_mark_degraded_replicas(struct fold *F, unsigned char *drep)
{
	const struct placement *pl = F->job->pl;
	int pp = pl->size[DIM_PP];
	for (int r = 0; r < pl->nranks; r++) {
		int c[DIM_N];
		placement_coords(pl, r, c);
		if (drep[c[DIM_DP]])
			continue;
		const int *grp[GROUP_N];
		int ngrp[GROUP_N];
		fold_groups(F, r, grp, ngrp);
		const struct program *prog = F->job->rank_prog ? F->job->rank_prog[r]
							       : F->job->stage_prog[c[DIM_PP]];
		struct deg_walk w = { .F = F, .src = r };
		if (fold_each_own_flow(F, r, prog, grp, ngrp, deg_flow, &w))
			return -1;
		for (int dlt = -1; dlt <= 1 && !w.hit; dlt += 2)
			if (c[DIM_PP] + dlt >= 0 && c[DIM_PP] + dlt < pp)
				w.hit = crosses_degraded(&w, placement_stage_peer(pl, r, c[DIM_PP] + dlt));
		if (w.hit)
			drep[c[DIM_DP]] = 1;
	}
	return 0;
}
