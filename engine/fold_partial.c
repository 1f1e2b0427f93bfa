/* fold_partial: partial folding: the replicas a degraded link or a partly
 * filled leaf or pod of a fat tree touches, simulated whole. No SimGrid
 * here. */
#include "fold-private.h"
#include "platform.h"

/* ---- partial folding: replicas a link touches ----------------------
 *
 * A folded rank posts nothing, so a flow it would put on a degraded link
 * would be missing from that link. Its replica is simulated whole too:
 * any rank of it whose own collective flows or pipeline messages cross a
 * degraded link marks it (a 1:1 fat tree with leaf 1's uplinks halved,
 * the ring's flows from leaf 0 into leaf 1: +1.5e-4 without them).
 * Likewise the switch and uplinks of a partly filled leaf or pod, which
 * carry another load than a full one's (class folding). */
struct deg_walk {
	struct fold *F;
	int src, ndst, dst[64];  /* destinations already routed */
	int leaf, pod;           /* the partly filled leaf and pod, -1: none */
	bool hit;
};

static bool hop_marks(const struct deg_walk *w, const struct topo_hop *h)
{
	const struct engine_job *job = w->F->job;
	if (w->leaf >= 0 || w->pod >= 0)
		return ((h->kind == TL_SWITCH || h->kind == TL_LEAF_UP) && h->index >= 0 &&
			(h->index == w->leaf ||
			 (w->pod >= 0 && h->index / job->topo->ft_leaves_per_pod == w->pod))) ||
		       (h->kind == TL_POD_UP && h->index == w->pod);
	for (int k = 0; k < job->ndegraded; k++)
		if (platform_hop_is(job->topo, h, job->degraded[k].link))
			return true;
	return false;
}

static bool crosses_marked(struct deg_walk *w, int dst)
{
	for (int i = 0; i < w->ndst; i++)
		if (w->dst[i] == dst)
			return false;
	if (w->ndst < (int)(sizeof(w->dst) / sizeof(w->dst[0])))
		w->dst[w->ndst++] = dst;
	struct topo_hop h[TOPO_MAX_HOPS];
	int n = topology_route(w->F->job->topo, w->src, dst, h);
	for (int i = 0; i < n; i++)
		if (hop_marks(w, &h[i]))
			return true;
	return false;
}

static void deg_flow(void *ctx, const struct task *t, int dst)
{
	struct deg_walk *w = ctx;
	(void)t;
	if (!w->hit && crosses_marked(w, dst))
		w->hit = true;
}

/* Mark in drep[dp] the replicas not yet marked with a rank whose traffic
 * crosses a link hop_marks() picks (w0: the walk's leaf and pod).
 * Returns 0, or -1 if a plan cannot be made. */
static int mark_replicas(struct fold *F, unsigned char *drep, const struct deg_walk *w0)
{
	const struct placement *pl = F->job->pl;
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
		struct deg_walk w = *w0;
		w.src = r;
		if (fold_each_own_flow(F, r, prog, grp, ngrp, deg_flow, &w))
			return -1;
		for (int dlt = -1; dlt <= 1 && !w.hit; dlt += 2) {
			int peer = fold_pipe_peer(F, r, c[DIM_PP], dlt);
			if (peer >= 0)
				w.hit = crosses_marked(&w, peer);
		}
		if (w.hit)
			drep[c[DIM_DP]] = 1;
	}
	return 0;
}

int fold_mark_degraded_replicas(struct fold *F, unsigned char *drep)
{
	struct deg_walk w = { .F = F, .leaf = -1, .pod = -1 };
	return mark_replicas(F, drep, &w);
}

/* The partly filled leaf and pod of a fat tree of nodes nodes (-1: none):
 * the last ones, nodes filling the leaves and pods in order. */
static void partial_leaf_pod(const struct topology *t, int nodes, int *leaf, int *pod)
{
	int npl = t->ft_nodes_per_leaf, lpp = t->ft_leaves_per_pod;
	int leaves = (nodes + npl - 1) / npl;
	*leaf = nodes % npl ? leaves - 1 : -1;
	*pod = t->ft_levels == 3 && lpp > 0 && leaves > lpp && leaves % lpp ? leaves / lpp : -1;
}

int fold_mark_partial_tree_replicas(struct fold *F, unsigned char *drep)
{
	const struct engine_job *job = F->job;
	const struct topology *t = job->topo;
	struct deg_walk w = { .F = F };
	if (t->fabric != FABRIC_FAT_TREE || t->ft_nodes_per_leaf <= 0)
		return 0;
	partial_leaf_pod(t, job->nodes, &w.leaf, &w.pod);
	if (w.leaf < 0 && w.pod < 0)
		return 0;
	/* the ranks on it, whatever their traffic */
	for (int r = 0; r < job->pl->nranks; r++) {
		int leaf = topology_node_of(t, r) / t->ft_nodes_per_leaf, c[DIM_N];
		if (leaf == w.leaf || (w.pod >= 0 && leaf / t->ft_leaves_per_pod == w.pod)) {
			placement_coords(job->pl, r, c);
			drep[c[DIM_DP]] = 1;
		}
	}
	return mark_replicas(F, drep, &w);
}
