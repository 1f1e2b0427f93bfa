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
 * instant its own flows start (the replicas run in lockstep):
 *   - in each collective, the folded ranks' flows of every group instance
 *     of its stage with a flow over a binding uplink, the instance's
 *     every such flow, not only those over the uplink: the members' NICs
 *     then carry what they carry unfolded (a tree member sends to its
 *     parent and its children at once; with the uplink's flows alone the
 *     2:1 tree's Llama 3 8B, TP 8 x PP 4 x DP 10 with a forced tree, read
 *     -1.58 %, whole instances -0.71 %); it waits for them, as the
 *     unfolded group's barrier waits for its slowest member;
 *   - with each pipeline message, the messages of its stage's folded
 *     ranks that cross a binding uplink; nobody waits for those.
 * The uplinks then carry the unfolded run's load: the bench's job reads
 * what it reads unfolded (15.4159309 s, 0.5 CPU s against 15 unfolded).
 * Still left out: the folded ranks' traffic that stays below the leaf
 * switch in instances that do not cross an uplink, and the replicas'
 * drift where their members' loads differ (a tree with a pipeline). */
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

/* Whether the route a -> b crosses a binding leaf or pod uplink. */
static bool crosses_binding_uplink(const struct fold *F, int a, int b)
{
	struct topo_hop h[TOPO_MAX_HOPS];
	int nh = topology_route(F->job->topo, a, b, h);
	for (int i = 0; i < nh; i++)
		if ((h[i].kind == TL_LEAF_UP && F->lu_binds) || (h[i].kind == TL_POD_UP && F->pod_binds))
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
	struct coll_flow *f;
	int n;
	size_t cap;
	unsigned char *skip;    /* [nflows] of the own plan: posted already */
};

/* Add plan p's flows from a folded rank to L if one of its flows crosses
 * a binding uplink (skip: those of p posted already, NULL none). */
static void add_copies(const struct fold *F, const struct coll_plan *p, const unsigned char *skip,
		       struct copy_list *L)
{
	bool any = false;
	for (int i = 0; i < p->nflows && !any; i++)
		any = crosses_binding_uplink(F, p->flows[i].src, p->flows[i].dst);
	for (int i = 0; i < p->nflows && any; i++) {
		const struct coll_flow *f = &p->flows[i];
		if (F->active[f->src] || (skip && skip[i]))
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

struct cplan *fold_uplink_flows(struct fold *F, int stage, int kind, const int *mem, int n, int op,
				double bytes)
{
	const struct placement *pl = F->job->pl;
	struct cplan *c = cplan_get(&F->cache, kind, mem, n, op, bytes);
	if (!c || c->nuflows >= 0)
		return c;
	struct copy_list L = { 0 };
	L.skip = crit_posted(F, c, mem, n);
	add_copies(F, c->p, L.skip, &L);
	free(L.skip);
	int cap = placement_group_size(pl, kind);
	int *tmp = xreallocarray(NULL, (size_t)cap + 1, sizeof(*tmp));
	int stamp = ++F->stampv;
	for (int i = 0; i < n; i++)
		F->stamp[mem[i]] = stamp;
	for (int r = 0; r < pl->nranks; r++) {
		int rc[DIM_N];
		placement_coords(pl, r, rc);
		if (F->stamp[r] == stamp || rc[DIM_PP] != stage)
			continue;
		int m = placement_group(pl, kind, r, tmp);
		for (int i = 0; i < m; i++)
			F->stamp[tmp[i]] = stamp;
		if (m <= 1)
			continue;
		struct cplan *mc = cplan_get(&F->cache, kind, tmp, m, op, bytes);
		if (!mc) {
			free(tmp);
			free(L.f);
			return NULL;
		}
		add_copies(F, mc->p, NULL, &L);
	}
	free(tmp);
	c = cplan_get(&F->cache, kind, mem, n, op, bytes); /* the table may have grown */
	c->uflows = L.f;
	c->nuflows = L.n;
	return c;
}

int fold_uplink_p2p(struct fold *F, int rank, int stage, int dir, int **pairs)
{
	const struct placement *pl = F->job->pl;
	int peer_stage = stage + (dir == P2P_FWD ? +1 : -1), n = 0;
	size_t cap = 0;
	*pairs = NULL;
	if (!fold_posts_uplink_copies(F, rank) || peer_stage < 0 || peer_stage >= pl->size[DIM_PP])
		return 0;
	for (int r = 0; r < pl->nranks; r++) {
		int c[DIM_N];
		placement_coords(pl, r, c);
		if (F->active[r] || c[DIM_PP] != stage)
			continue;
		int peer = placement_stage_peer(pl, r, peer_stage);
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
