/* fold_uplink: cheap folding on an oversubscribed fat tree: the folded
 * ranks' flows that cross an uplink narrower than what feeds it, posted
 * host to host beside the representative's own. No SimGrid here.
 *
 * Cheap folding posts the representative's own flows and stands its
 * flows in for the folded ranks'. Where every link above the NICs has
 * full bisection that is exact (simulate_fold.c, full_bisection): no
 * switch link ever limits a rate, and each NIC carries what the
 * representative's carries. A 2:1 leaf uplink does limit: in the
 * unfolded run it carries the flows of every GPU below it at once (the
 * pipeline messages of 5 nodes x 8 GPUs going to the next stage's
 * leaf: 40 flows on 20 NICs' worth of uplink, each at half its NIC), and
 * folded it carried the representative's alone, at the NIC's rate: the
 * bench's Llama 2 70B on 40 nodes read -1.69 %. The folded ranks' flows
 * are not alike either: in a ring over two leaves two members' flows
 * cross the uplinks and the others stay below; the ring ends with its
 * slowest flow, which the representative's own (inside the leaf) is not.
 *
 * So on such a tree the representative's rank of each stage (tp 0, cp 0
 * of the representative replica) also posts, host to host, at the
 * instant its own flows start (the replicas run in lockstep), the folded
 * ranks' flows over the binding uplinks of the leaves and pods that hold
 * a simulated rank (held: those its own flows load; the replicas being
 * alike, every other leaf's uplinks carry what these carry, and posting
 * them all made Llama 3 70B on 4,096 GPUs of a 2:1 tree take 178 CPU s
 * instead of 10):
 *   - in each collective, those flows of every group instance of its
 *     stage, and the instance's other flows to or from their ends: their
 *     NICs then carry what they carry unfolded (a tree member sends to its
 *     parent and its children at once; with the uplink's flows alone the
 *     2:1 tree's Llama 3 8B, TP 8 x PP 4 x DP 10 with a forced tree, read
 *     -1.58 %, with their ends' -0.71 %); it waits for them, as the
 *     unfolded group's barrier waits for its slowest member;
 *   - with each pipeline message, the messages of its stage's folded
 *     ranks over those uplinks; nobody waits for those.
 * The uplinks then carry the unfolded run's load: the bench's job reads
 * what it reads unfolded (15.4159309 s, 0.5 CPU s against 15 unfolded).
 * Still left out: the folded ranks' traffic that stays below the leaf
 * switch away from those ends, and the replicas' drift where their
 * members' loads differ (a tree with a pipeline). */
#include <stdlib.h>

#include "fold-private.h"
#include "xalloc.h"

void fold_binding_uplinks(struct fold *F)
{
	const struct topology *t = F->job->topo;
	if (t->fabric != FABRIC_FAT_TREE)
		return;
	double feed = t->ft_nodes_per_leaf * t->nics * t->nic_bw_Bps;
	F->lu_binds = t->ft_leaf_up_bw_Bps < feed;
	double lfeed = F->lu_binds ? t->ft_leaf_up_bw_Bps : feed;
	F->pod_binds = t->ft_levels == 3 && t->ft_pod_up_bw_Bps < t->ft_leaves_per_pod * lfeed;
	F->uplink_copies = F->job->fold && !F->job->fold_exact && !F->job->ps &&
			   (F->lu_binds || F->pod_binds);
}

/* Mark in F->uheld the leaves ([0, leaves)) and pods ([leaves, ...))
 * holding a simulated rank, once (after fold_pick_ranks). */
static void mark_held(struct fold *F)
{
	const struct topology *t = F->job->topo;
	if (F->uheld)
		return;
	int npl = t->ft_nodes_per_leaf, lpp = t->ft_leaves_per_pod > 0 ? t->ft_leaves_per_pod : 1;
	F->nleaves = (F->job->nodes + npl - 1) / npl;
	F->uheld = xcalloc((size_t)F->nleaves + (size_t)F->nleaves / lpp + 2, 1);
	for (int r = 0; r < F->job->pl->nranks; r++)
		if (F->active[r]) {
			int leaf = topology_node_of(t, r) / npl;
			F->uheld[leaf] = F->uheld[F->nleaves + leaf / lpp] = 1;
		}
}

/* Whether the route a -> b crosses a binding uplink of a leaf or pod
 * holding a simulated rank (mark_held). */
static bool crosses_binding_uplink(const struct fold *F, int a, int b)
{
	struct topo_hop h[TOPO_MAX_HOPS];
	int nh = topology_route(F->job->topo, a, b, h);
	for (int i = 0; i < nh; i++)
		if ((h[i].kind == TL_LEAF_UP && F->lu_binds && F->uheld[h[i].index]) ||
		    (h[i].kind == TL_POD_UP && F->pod_binds && F->uheld[F->nleaves + h[i].index]))
			return true;
	return false;
}

bool fold_posts_uplink_copies(const struct fold *F, int rank)
{
	if (!F->uplink_copies || !F->active[rank])
		return false;
	int c[DIM_N];
	placement_coords(F->job->pl, rank, c);
	return c[DIM_DP] == F->rep_dp && c[DIM_TP] == 0 && c[DIM_CP] == 0;
}

struct copy_list {
	struct fold *F;
	struct coll_flow *f;
	int n;
	size_t cap;
	unsigned char *skip;    /* [nflows] of the own plan: posted already */
};

/* Add to L plan p's flows from a folded rank that cross a held binding
 * uplink, and those to or from a member at an end of one (its NIC's load)
 * (skip: those of p posted already, NULL none). F->stamp marks the
 * members. */
static void add_copies(struct fold *F, const struct coll_plan *p, const unsigned char *skip,
		       struct copy_list *L)
{
	int stamp = ++F->stampv, marked = 0;
	for (int i = 0; i < p->nflows; i++) {
		const struct coll_flow *f = &p->flows[i];
		if (!F->active[f->src] && crosses_binding_uplink(F, f->src, f->dst)) {
			F->stamp[f->src] = F->stamp[f->dst] = stamp;
			marked++;
		}
	}
	for (int i = 0; i < p->nflows && marked; i++) {
		const struct coll_flow *f = &p->flows[i];
		if (F->active[f->src] || (skip && skip[i]) ||
		    (F->stamp[f->src] != stamp && F->stamp[f->dst] != stamp))
			continue;
		XGROW(L->f, L->cap, (size_t)L->n + 1);
		L->f[L->n++] = *f;
	}
}

struct crit_mark {
	const struct coll_flow *flows;
	unsigned char *skip;
};

static void mark_crit(void *ctx, const struct coll_flow *f)
{
	struct crit_mark *m = ctx;
	m->skip[f - m->flows] = 1;
}

/* The flows of the own plan c that cheap folding posts already around
 * its busiest member (fold_each_crit_flow), marked ([nflows], caller
 * frees), or NULL. */
static unsigned char *crit_posted(const struct fold *F, struct cplan *c, const int *mem, int n)
{
	int first = -1;
	for (int i = 0; i < n && first < 0; i++)
		if (F->active[mem[i]])
			first = mem[i];
	if (first < 0 || !fold_posts_crit(F, c, mem, n, first))
		return NULL;
	struct crit_mark m = { c->p->flows, xcalloc((size_t)c->p->nflows + 1, 1) };
	fold_each_crit_flow(F, c, mark_crit, &m);
	return m.skip;
}

/* fold_each_stage_group's callback: another instance's copies. */
static int add_group_copies(void *ctx, struct cplan *mc)
{
	struct copy_list *L = ctx;
	add_copies(L->F, mc->p, NULL, L);
	return 0;
}

struct cplan *fold_uplink_flows(struct fold *F, int stage, int kind, const int *mem, int n, int op,
				double bytes)
{
	struct cplan *c = cplan_get(&F->cache, kind, mem, n, op, bytes);
	if (!c || c->nuflows >= 0)
		return c;
	mark_held(F);
	struct copy_list L = { .F = F };
	L.skip = crit_posted(F, c, mem, n);
	add_copies(F, c->p, L.skip, &L);
	free(L.skip);
	L.skip = NULL;
	if (fold_each_stage_group(F, stage, kind, mem, n, op, bytes, add_group_copies, &L) < 0) {
		free(L.f);
		return NULL;
	}
	c = cplan_get(&F->cache, kind, mem, n, op, bytes); /* the table may have grown */
	c->uflows = L.f;
	c->nuflows = L.n;
	return c;
}

int fold_uplink_p2p(struct fold *F, int rank, int stage, int dir, int **pairs)
{
	const struct placement *pl = F->job->pl;
	int dlt = dir == P2P_FWD ? +1 : -1, n = 0;
	size_t cap = 0;
	*pairs = NULL;
	if (!fold_posts_uplink_copies(F, rank) || fold_pipe_peer(F, rank, stage, dlt) < 0)
		return 0; /* past the first or last stage, not wrapping */
	mark_held(F);
	for (int r = 0; r < pl->nranks; r++) {
		int c[DIM_N];
		placement_coords(pl, r, c);
		if (F->active[r] || c[DIM_PP] != stage)
			continue;
		int peer = fold_pipe_peer(F, r, stage, dlt);
		if (!crosses_binding_uplink(F, r, peer))
			continue;
		XGROW(*pairs, cap, (size_t)2 * n + 2);
		(*pairs)[2 * n] = r;
		(*pairs)[2 * n + 1] = peer;
		n++;
	}
	return n;
}

int fold_mark_uplink_copies(struct fold *F, int r, const struct program *prog, const int *const *grp,
			    const int *ngrp, unsigned char *used)
{
	int c[DIM_N];
	if (!fold_posts_uplink_copies(F, r))
		return 0;
	placement_coords(F->job->pl, r, c);
	for (int i = 0; i < prog->n; i++) {
		const struct task *t = &prog->t[i];
		int n = ngrp[t->group];
		if (t->kind != TASK_COLL || n <= 1 || t->bytes <= 0)
			continue;
		struct cplan *cp = fold_uplink_flows(F, c[DIM_PP], t->group, grp[t->group], n, t->op,
						     t->bytes * t->count);
		if (!cp)
			return -1;
		for (int k = 0; k < cp->nuflows; k++)
			used[cp->uflows[k].src] = used[cp->uflows[k].dst] = 1;
	}
	for (int dir = 0; dir < 2; dir++) {
		int *pairs, np = fold_uplink_p2p(F, r, c[DIM_PP], dir, &pairs);
		for (int k = 0; k < 2 * np; k++)
			used[pairs[k]] = 1;
		free(pairs);
	}
	return 0;
}
