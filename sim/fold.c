/* fold: the folding planner (see fold.h): which ranks the engine
 * simulates, which GPUs its platform holds, and which flows a simulated
 * rank posts for the ranks it stands for. No SimGrid here. */
#include "fold.h"

#include <stdlib.h>
#include <string.h>

#include "hash.h"
#include "platform.h"
#include "xalloc.h"

/* ---- folding: which mirror flows can meet simulated ones -------------
 *
 * Max-min sharing decomposes over the links that can bind: a link whose
 * capacity is at least the sum of the capacities feeding it (a FATPIPE
 * switch, a leaf or pod uplink of a fat tree that is not oversubscribed)
 * never limits any allocation, so it can be dropped from the system
 * without changing a rate. What remains are NICs and oversubscribed
 * uplinks. Every flow the folded simulation could post (the groups and
 * pipeline pairs of every replica) joins the binding links it crosses
 * (union-find); a mirror flow is posted if it crosses a link joined to
 * the simulated ranks' own traffic, at any time of the iteration: every
 * other flow shares no binding link, ever, with what is simulated, so
 * leaving it out changes no simulated rate. Links inside nodes (GPU,
 * NVLink, PCIe) take part like any other: a TP group of a replica on a
 * node no simulated flow reaches is left out. */

/* Link keys are slotted by util/hash.h's hash_slot: every field of the
 * key (the node is in bits 36 and up) moves the low bits; (k * phi) >> 17
 * never saw the node and every node's NIC i collided (16,384 GPUs: 72 %
 * of the run). */
/* Id of the link of key k (topology_link_key), made if add; -1 if unknown. */
static int link_id(struct fold *F, unsigned long long k, bool add)
{
	if (add && (size_t)(F->nlinks + 1) * 2 > F->lcap) {
		size_t ncap = F->lcap ? 2 * F->lcap : 4096;
		unsigned long long *nk = xcalloc(ncap, sizeof(*nk));
		int *ni = xreallocarray(NULL, ncap, sizeof(*ni));
		for (size_t i = 0; i < F->lcap; i++) {
			if (!F->lkey[i])
				continue;
			size_t j = hash_slot(F->lkey[i], ncap);
			while (nk[j])
				j = (j + 1) & (ncap - 1);
			nk[j] = F->lkey[i];
			ni[j] = F->lid[i];
		}
		free(F->lkey);
		free(F->lid);
		F->lkey = nk;
		F->lid = ni;
		F->lcap = ncap;
		F->uf = xreallocarray(F->uf, ncap, sizeof(*F->uf));
		F->rooted = xreallocarray(F->rooted, ncap, sizeof(*F->rooted));
		F->lown = xreallocarray(F->lown, ncap, sizeof(*F->lown));
		F->lpair = xreallocarray(F->lpair, ncap, sizeof(*F->lpair));
		F->lmark = xreallocarray(F->lmark, ncap, sizeof(*F->lmark));
	}
	if (!F->lcap)
		return -1;
	k++; /* 0 marks a free slot */
	size_t j = hash_slot(k, F->lcap);
	while (F->lkey[j] && F->lkey[j] != k)
		j = (j + 1) % F->lcap;
	if (F->lkey[j])
		return F->lid[j];
	if (!add)
		return -1;
	F->lkey[j] = k;
	F->lid[j] = F->nlinks;
	F->uf[F->nlinks] = F->nlinks;
	F->rooted[F->nlinks] = false;
	F->lown[F->nlinks] = 0;
	F->lpair[F->nlinks] = 0;
	F->lmark[F->nlinks] = 0;
	return F->nlinks++;
}

/* Ids of the binding links of the path a -> b, into ids (room for
 * TOPO_MAX_HOPS), made if add (else unknown links are skipped); returns
 * the count. */
static int fold_link_ids(struct fold *F, int a, int b, int *ids, bool add)
{
	const struct topology *t = F->job->topo;
	struct topo_hop h[TOPO_MAX_HOPS];
	int nh = topology_route(t, a, b, h), n = 0;
	for (int i = 0; i < nh; i++) {
		if (h[i].kind == TL_SWITCH || (h[i].kind == TL_LEAF_UP && !F->lu_binds) ||
		    (h[i].kind == TL_POD_UP && !F->pod_binds))
			continue;
		int id = link_id(F, topology_link_key(t, &h[i]), add);
		if (id >= 0)
			ids[n++] = id;
	}
	return n;
}

static int uf_find(int *uf, int x)
{
	while (uf[x] != x)
		x = uf[x] = uf[uf[x]];
	return x;
}

/* Join the binding links of a -> b; mark them as simulated traffic if root.
 * owner: the group instance the flow belongs to (-1: a pipeline message),
 * recorded with the pair a -> b on every link it crosses. */
static void fold_join(struct fold *F, int a, int b, bool root, int owner)
{
	int ids[TOPO_MAX_HOPS];
	int n = fold_link_ids(F, a, b, ids, true);
	long long pair = (long long)a * F->job->pl->nranks + b + 1;
	for (int i = 0; i < n; i++) {
		int *o = &F->lown[ids[i]];
		long long *q = &F->lpair[ids[i]];
		*o = *o == 0 ? owner : *o == owner ? owner : -1;
		*q = *q == 0 ? pair : *q == pair ? pair : -1;
		int x = uf_find(F->uf, ids[i]), y = uf_find(F->uf, ids[0]);
		if (x != y) {
			F->uf[x] = y;
			F->rooted[y] = F->rooted[y] || F->rooted[x];
		}
		if (root)
			F->rooted[y] = true;
	}
}

static bool fold_touches(struct fold *F, int a, int b)
{
	int ids[TOPO_MAX_HOPS];
	int n = fold_link_ids(F, a, b, ids, false);
	for (int i = 0; i < n; i++)
		if (F->rooted[uf_find(F->uf, ids[i])])
			return true;
	return false;
}

/* Whether a mirror plan is posted: some flow of it crosses a link joined
 * to simulated traffic (then all of it is: the rest meets nothing
 * simulated). */
static bool plan_posted(struct fold *F, struct cplan *c)
{
	if (c->posted < 0) {
		bool post = false;
		for (int i = 0; i < c->p->nflows && !post; i++)
			post = fold_touches(F, c->p->flows[i].src, c->p->flows[i].dst);
		c->posted = post;
	}
	return c->posted;
}

static bool stage_of_is(const struct placement *pl, int r, int stage)
{
	int c[DIM_N];
	placement_coords(pl, r, c);
	return c[DIM_PP] == stage;
}

/* Folded: the plans of the group kind of mem (the group of a simulated
 * rank of stage) and of every mirror group of the same stage whose flows
 * are posted, the group's own first. In the unfolded simulation every
 * replica runs the same collective at the same time on its own group, and
 * their flows share links (NICs, leaf and pod uplinks) with the simulated
 * group's: posting them all keeps that sharing exactly. Returns the entry
 * (its mir/nmir set) or NULL if a plan cannot be made. */
struct cplan *fold_mirrors(struct fold *F, int stage, int kind, const int *mem, int n, int op,
			   double bytes)
{
	const struct placement *pl = F->job->pl;
	struct cplan *c = cplan_get(&F->cache, kind, mem, n, op, bytes);
	if (!c || c->nmir >= 0)
		return c;
	int cap = placement_group_size(pl, kind), nm = 1, mcap = 16;
	int *tmp = xreallocarray(NULL, (size_t)cap + 1, sizeof(*tmp));
	struct coll_plan **mir = xreallocarray(NULL, (size_t)mcap, sizeof(*mir));
	mir[0] = c->p;
	int stamp = ++F->stampv;
	for (int i = 0; i < n; i++)
		F->stamp[mem[i]] = stamp;
	for (int r = 0; r < pl->nranks; r++) {
		if (F->stamp[r] == stamp || !stage_of_is(pl, r, stage))
			continue;
		int m = placement_group(pl, kind, r, tmp);
		for (int i = 0; i < m; i++)
			F->stamp[tmp[i]] = stamp;
		if (m <= 1)
			continue;
		struct cplan *mc = cplan_get(&F->cache, kind, tmp, m, op, bytes);
		if (!mc) {
			free(tmp);
			free(mir);
			return NULL;
		}
		if (!plan_posted(F, mc))
			continue;
		XGROW(mir, mcap, (size_t)nm + 1);
		mir[nm++] = mc->p;
	}
	free(tmp);
	c = cplan_get(&F->cache, kind, mem, n, op, bytes); /* the table may have grown */
	c->mir = mir;
	c->nmir = nm;
	return c;
}

static int cmp_int4(const void *a, const void *b)
{
	const int *x = a, *y = b;
	for (int i = 0; i < 4; i++)
		if (x[i] != y[i])
			return (x[i] > y[i]) - (x[i] < y[i]);
	return 0;
}

/* ---- folding: groups whose representative's own flows suffice ---------
 *
 * Posting a folded group's every flow (so that a tree's slowest flow is
 * seen) multiplies the flows of the common case, a ring inside a node, by
 * the group size (megatron-1t: 525,890 flows unfolded-ring style against
 * 3,941,772 whole-group). It is not needed where every flow of the group
 * provably runs at the representative's pace: the plan is pair-uniform
 * (its flows go over n distinct (src, dst) pairs, every member the source
 * of one and the destination of one, each pair with the same byte counts
 * over a path of the same link kinds, bandwidths and latencies), every
 * plan of this group instance uses the same set of pairs, and every
 * binding link a flow crosses is crossed, over the whole iteration and by
 * every replica, only by flows of this instance and of this one pair
 * (fold_join records it). Then each pair's flows see the same loads at the
 * same times, and the representative's own flows give the collective's
 * time; nothing else can meet them, so leaving the others out changes no
 * rate. tests/test-fold.c checks the result against unfolded runs. */

struct pflow {
	int src, dst;
	double bytes;
};

static int cmp_pflow(const void *a, const void *b)
{
	const struct pflow *x = a, *y = b;
	if (x->src != y->src)
		return (x->src > y->src) - (x->src < y->src);
	if (x->dst != y->dst)
		return (x->dst > y->dst) - (x->dst < y->dst);
	return (x->bytes > y->bytes) - (x->bytes < y->bytes);
}

/* p's flows sorted by (src, dst, bytes); caller frees. */
static struct pflow *pflows_sorted(const struct coll_plan *p)
{
	struct pflow *f = xreallocarray(NULL, (size_t)p->nflows + 1, sizeof(*f));
	for (int i = 0; i < p->nflows; i++)
		f[i] = (struct pflow){ p->flows[i].src, p->flows[i].dst, p->flows[i].bytes };
	qsort(f, (size_t)p->nflows, sizeof(*f), cmp_pflow);
	return f;
}

/* Record c's pair-set hash, and note it on its instance (kind, leader):
 * 1 there once two plans of the instance use different pairs. */
static void pair_sig_note(struct fold *F, struct cplan *c, int kind, int leader)
{
	struct pflow *f = pflows_sorted(c->p);
	unsigned long long h = 0xcbf29ce484222325ULL;
	for (int i = 0; i < c->p->nflows; i++) {
		if (i && f[i].src == f[i - 1].src && f[i].dst == f[i - 1].dst)
			continue;
		h = (h ^ (unsigned long long)f[i].src) * 0x100000001b3ULL;
		h = (h ^ (unsigned long long)f[i].dst) * 0x100000001b3ULL;
	}
	free(f);
	c->psig = h | 2; /* never 0 (unset) nor 1 (mixed) */
	unsigned long long *is = &F->isig[kind][leader];
	*is = *is == 0 ? c->psig : *is == c->psig ? *is : 1;
}

/* Whether the representative's own flows of c stand for its group (see
 * above). c is the plan of a simulated group of kind and n members. */
bool fold_own_only(struct fold *F, struct cplan *c, int kind, int n)
{
	if (c->own >= 0)
		return c->own;
	c->own = 0;
	/* a group whose collectives all run on one stream has one plan at a
	 * time on its links: the pairs must be exclusive within this plan
	 * only; otherwise within every plan of the instance, all using the
	 * same pairs */
	bool serial = F->serial[kind];
	if (!c->closed || (!serial && F->isig[kind][c->leader] != c->psig))
		return false;
	long long mark0 = F->lmarkv;
	const struct topology *t = F->job->topo;
	const struct coll_plan *p = c->p;
	int N = F->job->pl->nranks, owner = kind * N + c->leader + 1;
	struct pflow *f = pflows_sorted(p);
	struct topo_hop h0[TOPO_MAX_HOPS], h[TOPO_MAX_HOPS];
	int nh0 = 0, run0 = 0, npairs = 0, stamp = ++F->stampv;
	bool ok = true;
	for (int i = 0; i < p->nflows && ok;) {
		int j = i;
		while (j < p->nflows && f[j].src == f[i].src && f[j].dst == f[i].dst)
			j++;
		/* the pair f[i..j): same bytes as the first pair, new src and dst */
		if (npairs == 0)
			run0 = j - i;
		else if (j - i != run0)
			ok = false;
		for (int k = 0; ok && npairs && k < run0; k++)
			ok = f[i + k].bytes == f[k].bytes;
		if (ok && npairs && f[i].src == f[i - 1].src)
			ok = false;
		if (ok && F->stamp[f[i].dst] == stamp)
			ok = false;
		F->stamp[f[i].dst] = stamp;
		/* the same path up to which links */
		int nh = topology_route(t, f[i].src, f[i].dst, npairs ? h : h0);
		if (npairs == 0)
			nh0 = nh;
		else if (nh != nh0)
			ok = false;
		for (int k = 0; ok && npairs && k < nh; k++)
			ok = h[k].kind == h0[k].kind &&
			     topology_link_bw(t, &h[k]) == topology_link_bw(t, &h0[k]) &&
			     topology_link_latency(t, &h[k]) == topology_link_latency(t, &h0[k]);
		/* its binding links carry this pair of this instance only */
		int ids[TOPO_MAX_HOPS];
		int m = fold_link_ids(F, f[i].src, f[i].dst, ids, false);
		long long pair = (long long)f[i].src * N + f[i].dst + 1;
		for (int k = 0; ok && k < m; k++) {
			long long *mk = &F->lmark[ids[k]];
			ok = F->lown[ids[k]] == owner &&
			     (serial ? *mk <= mark0 || *mk == mark0 + npairs + 1
				     : F->lpair[ids[k]] == pair);
			*mk = mark0 + npairs + 1;
		}
		npairs++;
		i = j;
	}
	free(f);
	F->lmarkv = mark0 + npairs + 1;
	c->own = ok && npairs == n;
	return c->own;
}

/* Before the closure: which fat-tree uplinks can bind a rate (those
 * narrower than what feeds them), and which group kinds run every
 * collective on one stream (fold_own_only). */
static void closure_setup(struct fold *F)
{
	const struct engine_job *job = F->job;
	const struct topology *t = job->topo;
	int pp = job->pl->size[DIM_PP];

	if (t->fabric == FABRIC_FAT_TREE) {
		double feed = t->ft_nodes_per_leaf * t->nics * t->nic_bw_Bps;
		F->lu_binds = t->ft_leaf_up_bw_Bps < feed;
		double lfeed = F->lu_binds ? t->ft_leaf_up_bw_Bps : feed;
		F->pod_binds = t->ft_levels == 3 && t->ft_pod_up_bw_Bps < t->ft_leaves_per_pod * lfeed;
	}
	int stream_of[GROUP_N];
	for (int g = 0; g < GROUP_N; g++) {
		stream_of[g] = -1;
		F->serial[g] = true;
	}
	for (int st = 0; st < pp; st++)
		for (int i = 0; i < job->stage_prog[st]->n; i++) {
			const struct task *tk = &job->stage_prog[st]->t[i];
			if (tk->kind != TASK_COLL)
				continue;
			if (stream_of[tk->group] < 0)
				stream_of[tk->group] = tk->stream;
			else if (stream_of[tk->group] != (int)tk->stream)
				F->serial[tk->group] = false;
		}
}

/* After the closure: mark in used the GPUs of every posted mirror flow
 * and pipeline pair. */
static void closure_mark_used(struct fold *F, unsigned char *used)
{
	const struct placement *pl = F->job->pl;
	int N = pl->nranks, pp = pl->size[DIM_PP];

	for (size_t i = 0; i < F->cache.cap; i++) {
		struct cplan *c = &F->cache.plans[i];
		if (c->p && c->closed && plan_posted(F, c))
			for (int f = 0; f < c->p->nflows; f++)
				used[c->p->flows[f].src] = used[c->p->flows[f].dst] = 1;
	}
	for (int r = 0; r < N; r++) {
		int c[DIM_N];
		placement_coords(pl, r, c);
		for (int dlt = -1; dlt <= 1; dlt += 2) {
			if (c[DIM_PP] + dlt < 0 || c[DIM_PP] + dlt >= pp)
				continue;
			int peer = placement_stage_peer(pl, r, c[DIM_PP] + dlt);
			if (fold_touches(F, r, peer))
				used[r] = used[peer] = 1;
		}
	}
}

/* Folded: join the binding links of every flow the replicas of every
 * stage could send (their collectives' plans across nodes, their pipeline
 * messages), rooted at the simulated ranks' own; then mark in used the
 * GPUs of every posted mirror flow. Returns 0 or -1 (a plan cannot be
 * made). */
static int fold_closure(struct fold *F, unsigned char *used)
{
	const struct engine_job *job = F->job;
	const struct placement *pl = job->pl;
	int N = pl->nranks, pp = pl->size[DIM_PP], rc = -1;

	closure_setup(F);
	int *tmp = xreallocarray(NULL, (size_t)N + 2, sizeof(*tmp));
	int *keys = NULL;
	size_t kcap = 0;
	for (int st = 0; st < pp; st++) {
		const struct program *pr = job->stage_prog[st];
		int nk = 0;
		for (int i = 0; i < pr->n; i++) {
			const struct task *tk = &pr->t[i];
			if (tk->kind != TASK_COLL || tk->bytes <= 0 ||
			    placement_group_size(pl, tk->group) <= 1)
				continue;
			/* a byte count as an int triple: sort and keep distinct */
			double bytes = tk->bytes * tk->count;
			XGROW(keys, kcap, (size_t)(nk + 1) * 4);
			int *k = &keys[nk * 4];
			k[0] = tk->group;
			k[1] = tk->op;
			memcpy(&k[2], &bytes, sizeof(bytes));
			nk++;
		}
		qsort(keys, (size_t)nk, 4 * sizeof(int), cmp_int4);
		for (int q = 0; q < nk; q++) {
			int *k = &keys[q * 4];
			if (q && !memcmp(k, k - 4, 4 * sizeof(int)))
				continue;
			double bytes;
			memcpy(&bytes, &k[2], sizeof(bytes));
			int stamp = ++F->stampv;
			for (int r = 0; r < N; r++) {
				if (F->stamp[r] == stamp || !stage_of_is(pl, r, st))
					continue;
				int m = placement_group(pl, k[0], r, tmp);
				bool root = false;
				for (int i = 0; i < m; i++) {
					F->stamp[tmp[i]] = stamp;
					root = root || F->active[tmp[i]];
				}
				if (m <= 1)
					continue;
				struct cplan *c = cplan_get(&F->cache, k[0], tmp, m, k[1], bytes);
				if (!c)
					goto out;
				if (c->closed)
					continue;
				int owner = k[0] * N + tmp[0] + 1;
				c->closed = true;
				for (int i = 0; i < c->p->nflows; i++)
					fold_join(F, c->p->flows[i].src, c->p->flows[i].dst, root,
						  owner);
				pair_sig_note(F, c, k[0], tmp[0]);
			}
		}
	}
	for (int r = 0; r < N; r++) {
		int c[DIM_N];
		placement_coords(pl, r, c);
		for (int dlt = -1; dlt <= 1; dlt += 2)
			if (c[DIM_PP] + dlt >= 0 && c[DIM_PP] + dlt < pp)
				fold_join(F, r, placement_stage_peer(pl, r, c[DIM_PP] + dlt), F->active[r],
					  -1);
	}
	closure_mark_used(F, used);
	rc = 0;
out:
	free(keys);
	free(tmp);
	return rc;
}

int fold_mirror_p2p(struct fold *F, int rank, int stage, int dir, int **pairs)
{
	const struct placement *pl = F->job->pl;
	int peer_stage = stage + (dir == P2P_FWD ? +1 : -1);
	size_t cap = 0;
	int n = 0;
	*pairs = NULL;
	if (peer_stage < 0 || peer_stage >= pl->size[DIM_PP])
		return 0;
	for (int r = 0; r < pl->nranks; r++) {
		if (r == rank || !stage_of_is(pl, r, stage))
			continue;
		int pair[2] = { r, placement_stage_peer(pl, r, peer_stage) };
		if (!fold_touches(F, pair[0], pair[1]))
			continue;
		XGROW(*pairs, cap, (size_t)2 * n + 2);
		(*pairs)[2 * n] = pair[0];
		(*pairs)[2 * n + 1] = pair[1];
		n++;
	}
	return n;
}

/* Folded: the simulated member of a group that posts the flows of the
 * group and of its mirrors (the first simulated member). */
bool fold_posts_group(const struct fold *F, const int *mem, int n, int rank)
{
	for (int i = 0; i < n; i++)
		if (F->active[mem[i]])
			return mem[i] == rank;
	return false;
}

/* Cheap folding: whether the group holds a rank of the representative
 * replica (a replica made distinct, partial folding, is simulated whole:
 * its groups post their own flows, as the representative's folded peers
 * would in the symmetric run, so a what-if differs from its baseline by
 * what it changes, not by what is posted). */
static bool holds_rep(const struct fold *F, const int *mem, int n)
{
	const struct placement *pl = F->job->pl;
	for (int i = 0; i < n; i++)
		if (F->active[mem[i]]) {
			int c[DIM_N];
			placement_coords(pl, mem[i], c);
			if (c[DIM_DP] == F->rep_dp && c[DIM_TP] == 0 && c[DIM_CP] == 0)
				return true;
		}
	return false;
}

/* ---- cheap folding: plans that load their members unequally ---------
 *
 * Folded cheaply, the representative posts its own flows, which stand for
 * its group's when every member sends and receives the same bytes (a
 * ring). A tree does not: an inner member sends to its parent and its
 * children at once, a leaf to its parent only, the root receives from
 * every child, and with every flow posted at once the collective lasts as
 * long as its busiest member's transfers. So for an unequal plan the
 * flows folded members send to or from the busiest member and its peers
 * are posted too, host to host (fold_each_crit_flow), and the link loads that
 * pace it are simulated. Against the unfolded run: Llama 3 8B, TP 8 x
 * DP 16 on 16 DGX H100 with trees, 0.3155 s from the representative's
 * flows alone, now equal (0.3771 s); TP 8 x DP 16 x PP 2, -15 % -> -0.27 %;
 * TP 8 x DP 128 x PP 2 on the 3-level fat tree (NCCL's auto picks trees
 * there), -8.3 % -> -0.72 %. Returns the member moving the most bytes of
 * an unequal plan, or -1 for an equal one. */
static int plan_crit(struct cplan *c)
{
	/* balanced (-1): a ring, and a double binary tree whose members are
	 * inner in one tree and leaves in the other. Counting flows too would
	 * post whole trees of balanced bytes: Llama 3 405B on 98,304 GPUs (DP
	 * trees of 768) went from 0.3 s to minutes, for no change where it
	 * was measured */
	if (c->crit == -2)
		c->crit = coll_plan_busiest(c->p);
	return c->crit;
}

/* Whether rank, simulating a member of the group mem of plan c, posts the
 * flows around c's busiest member (fold_each_crit_flow): cheap folding, an
 * unequal plan (cached), the group's first simulated member, a group of
 * the representative replica. */
bool fold_posts_crit(const struct fold *F, struct cplan *c, const int *mem, int n, int rank)
{
	return F->job->fold && !F->job->fold_exact && plan_crit(c) >= 0 &&
	       fold_posts_group(F, mem, n, rank) && holds_rep(F, mem, n);
}

struct member_sig {
	double v[4];    /* bytes out, bytes in, flows out, flows in */
	int k;          /* index in the group */
};

static int cmp_sig(const void *a, const void *b)
{
	const struct member_sig *x = a, *y = b;
	for (int i = 0; i < 4; i++)
		if (x->v[i] != y->v[i])
			return x->v[i] < y->v[i] ? -1 : 1;
	return (x->k > y->k) - (x->k < y->k);
}

/* Cheap folding: the data-parallel index of the replica to simulate, so
 * that the representative stands for most replicas. An unequal plan (a
 * double binary tree: members inner in one tree and leaves in the other
 * move 4 half-buffers each way, the few inner in neither or with one child
 * 3) gives its members unequal NIC loads, and the pipeline messages that
 * share those NICs run at their member's pace: folding 127 replicas onto
 * one of the four light ones of a 128-node tree made Llama 3 8B, TP 8 x
 * PP 16 x DP 128 on 2,048 DGX H100 run 9.6 % fast (0.4072 s against
 * 0.4506 s unfolded). So the representative is the first replica, not
 * made distinct (drep), of the most common class of members of the
 * stage-0 gradient all-reduce's plan (bytes sent and received, the flows
 * counted). Equal plans (rings) and no all-reduce: first (replica 0 or
 * the first one not distinct). Returns -1 if no plan could be made. */
static int majority_replica(struct fold *F, const unsigned char *drep, int first)
{
	const struct engine_job *job = F->job;
	const struct placement *pl = job->pl;
	const struct program *pr = job->stage_prog[0];
	if (pl->size[DIM_DP] < 2)
		return first;
	int *mem = xreallocarray(NULL, (size_t)pl->nranks + 1, sizeof(*mem));
	int *at = xreallocarray(NULL, (size_t)pl->nranks + 1, sizeof(*at));
	int n = placement_group(pl, GROUP_DP, placement_rank(pl, 0, 0, 0), mem), pick = first;
	bool unequal = false;
	struct member_sig *sig = xcalloc((size_t)n + 1, sizeof(*sig));
	for (int k = 0; k < n; k++) {
		at[mem[k]] = k;
		sig[k].k = k;
	}
	/* per member, over the stage's gradient all-reduces */
	for (int i = 0; i < pr->n; i++) {
		const struct task *t = &pr->t[i];
		if (t->kind != TASK_COLL || t->group != GROUP_DP || t->op != COLL_ALLREDUCE ||
		    t->bytes <= 0)
			continue;
		struct cplan *c = cplan_get(&F->cache, GROUP_DP, mem, n, COLL_ALLREDUCE, t->bytes * t->count);
		if (!c) {
			pick = -1;
			goto out;
		}
		if (plan_crit(c) < 0)
			continue;   /* equal: every member alike */
		unequal = true;
		for (int f = 0; f < c->p->nflows; f++) {
			const struct coll_flow *fl = &c->p->flows[f];
			sig[at[fl->src]].v[0] += fl->bytes;
			sig[at[fl->src]].v[2]++;
			sig[at[fl->dst]].v[1] += fl->bytes;
			sig[at[fl->dst]].v[3]++;
		}
	}
	if (!unequal)
		goto out;
	/* the largest class holding a candidate (cp 0, a replica not made
	 * distinct); its first candidate */
	qsort(sig, (size_t)n, sizeof(*sig), cmp_sig);
	int best = 0;
	for (int a = 0; a < n;) {
		int b = a, cand = -1;
		for (; b < n && !memcmp(sig[b].v, sig[a].v, sizeof(sig[a].v)); b++) {
			int dk[DIM_N];
			placement_coords(pl, mem[sig[b].k], dk);
			if (dk[DIM_CP] == 0 && !(drep && drep[dk[DIM_DP]]) &&
			    (cand < 0 || dk[DIM_DP] < cand))
				cand = dk[DIM_DP];
		}
		if (cand >= 0 && b - a > best) {
			best = b - a;
			pick = cand;
		}
		a = b;
	}
out:
	free(sig);
	free(at);
	free(mem);
	return pick;
}

/* Call fn(ctx, flow) for the flows of an unequal plan c (plan_crit) that
 * engine_coll_task posts host to host: those a folded member sends to or from
 * the busiest member or one of its peers, so that the busiest member's
 * transfers and the link loads that pace them are simulated, at the cost
 * of a few flows whatever the group's size (a tree of 768 members posted
 * whole: 400,000 flows and minutes for Llama 3 405B on 98,304 GPUs). */
void fold_each_crit_flow(const struct fold *F, struct cplan *c,
			 void (*fn)(void *ctx, const struct coll_flow *f), void *ctx)
{
	int crit = plan_crit(c);
	const struct coll_plan *p = c->p;
	if (!c->cflows) {
		/* the busiest member and its peers */
		int np = 0, cap = 16, *peer = xreallocarray(NULL, (size_t)cap, sizeof(*peer));
		peer[np++] = crit;
		for (int i = 0; i < p->nflows; i++) {
			const struct coll_flow *f = &p->flows[i];
			int o = f->src == crit ? f->dst : f->dst == crit ? f->src : -1;
			bool seen = o < 0;
			for (int k = 0; k < np && !seen; k++)
				seen = peer[k] == o;
			if (!seen) {
				XGROW(peer, cap, (size_t)np + 1);
				peer[np++] = o;
			}
		}
		c->cflows = xreallocarray(NULL, (size_t)p->nflows + 1, sizeof(*c->cflows));
		for (int i = 0; i < p->nflows; i++) {
			const struct coll_flow *f = &p->flows[i];
			bool in = false;
			for (int k = 0; k < np && !in; k++)
				in = f->src == peer[k] || f->dst == peer[k];
			if (in && !F->active[f->src])
				c->cflows[c->ncflows++] = i;
		}
		free(peer);
	}
	for (int i = 0; i < c->ncflows; i++)
		fn(ctx, &p->flows[c->cflows[i]]);
}

void fold_groups(struct fold *F, int rank, const int *grp[GROUP_N], int ngrp[GROUP_N])
{
	const struct placement *pl = F->job->pl;
	for (int g = 0; g < GROUP_N; g++) {
		int cap = placement_group_size(pl, g);
		int *tmp = xreallocarray(NULL, (size_t)cap, sizeof(*tmp));
		int n = placement_group(pl, g, rank, tmp);
		int leader = tmp[0];
		if (!F->gmem[g][leader])
			F->gmem[g][leader] = tmp;
		else
			free(tmp);
		grp[g] = F->gmem[g][leader];
		ngrp[g] = n;
	}
}

/* Call fn for every flow rank r posts in its collectives (program prog,
 * groups grp / ngrp) when folding is not exact: its own flows of each
 * collective's plan. Returns -1 if a plan cannot be made, else 0. */
int fold_each_own_flow(struct fold *F, int r, const struct program *prog,
		       const int *const *grp, const int *ngrp,
		       void (*fn)(void *ctx, const struct task *t, int dst), void *ctx)
{
	for (int i = 0; i < prog->n; i++) {
		const struct task *t = &prog->t[i];
		int n = ngrp[t->group];
		if (t->kind != TASK_COLL || n <= 1 || t->bytes <= 0)
			continue;
		struct cplan *c = cplan_get(&F->cache, t->group, grp[t->group], n, t->op,
					    t->bytes * t->count);
		if (!c)
			return -1;
		const struct coll_plan *p = c->p;
		int o1 = cplan_lower(p, NULL, r + 1, false);
		for (int k = cplan_lower(p, NULL, r, false); k < o1; k++)
			fn(ctx, t, p->flows[k].dst);
	}
	return 0;
}

static void mark_ends(void *ctx, const struct coll_flow *f)
{
	((unsigned char *)ctx)[f->src] = 1;
	((unsigned char *)ctx)[f->dst] = 1;
}

static void mark_dst(void *ctx, const struct task *t, int dst)
{
	(void)t;
	((unsigned char *)ctx)[dst] = 1;
}

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
static int mark_degraded_replicas(struct fold *F, unsigned char *drep)
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

/* Mark in used the GPUs the simulated ranks' collective flows go to
 * (what engine_coll_task posts when folding is not exact), before the platform
 * and the rank instances exist. */
static int mark_flow_peers(struct fold *F, unsigned char *used)
{
	const struct placement *pl = F->job->pl;

	for (int r = 0; r < pl->nranks; r++) {
		if (!F->active[r])
			continue;
		int c[DIM_N];
		placement_coords(pl, r, c);
		const int *grp[GROUP_N];
		int ngrp[GROUP_N];
		fold_groups(F, r, grp, ngrp);
		const struct program *prog = F->job->rank_prog ? F->job->rank_prog[r]
							       : F->job->stage_prog[c[DIM_PP]];
		if (fold_each_own_flow(F, r, prog, grp, ngrp, mark_dst, used))
			return -1;
		/* the busiest members' transfers this rank posts (plan_crit) */
		for (int i = 0; i < prog->n; i++) {
			const struct task *t = &prog->t[i];
			int n = ngrp[t->group];
			if (t->kind != TASK_COLL || n <= 1 || t->bytes <= 0)
				continue;
			struct cplan *cp = cplan_get(&F->cache, t->group, grp[t->group], n, t->op,
						     t->bytes * t->count);
			if (!cp)
				return -1;
			if (fold_posts_crit(F, cp, grp[t->group], n, r))
				fold_each_crit_flow(F, cp, mark_ends, used);
		}
	}
	return 0;
}

/* ---- the planner's phases (engine_run) ------------------------------ */

void fold_init(struct fold *F, const struct engine_job *job)
{
	int N = job->pl->nranks;
	memset(F, 0, sizeof(*F));
	F->job = job;
	F->cache = (struct cplan_cache){ .topo = job->topo, .algo = job->coll_algo };
	F->active = xcalloc((size_t)N, sizeof(*F->active));
	for (int g = 0; g < GROUP_N; g++)
		F->gmem[g] = xcalloc((size_t)N, sizeof(*F->gmem[g]));
	F->stamp = xcalloc((size_t)N, sizeof(*F->stamp));
	for (int g = 0; g < GROUP_N && job->fold; g++)
		F->isig[g] = xcalloc((size_t)N, sizeof(*F->isig[g]));
}

void fold_finish(struct fold *F)
{
	int N = F->job ? F->job->pl->nranks : 0;
	cplan_cache_finish(&F->cache);
	free(F->uf);
	free(F->rooted);
	free(F->lown);
	free(F->lpair);
	free(F->lmark);
	for (int g = 0; g < GROUP_N; g++)
		free(F->isig[g]);
	free(F->lkey);
	free(F->lid);
	free(F->stamp);
	for (int g = 0; g < GROUP_N; g++) {
		for (int r = 0; F->gmem[g] && r < N; r++)
			free(F->gmem[g][r]);
		free(F->gmem[g]);
	}
	free(F->active);
	memset(F, 0, sizeof(*F));
}

/* Folded: rank (tp 0, cp 0) of every stage of the representative
 * replica, the first data-parallel replica without a distinct rank; a
 * replica with one (a straggler, a throttled GPU) is simulated whole, its
 * ranks standing for themselves: its collectives' barriers hold the
 * representative's as long as the slow rank holds them (partial folding:
 * 405B on 1,024 GPUs with one straggler simulates 144 ranks, not 1,024). */
int fold_pick_ranks(struct fold *F, struct diag *d)
{
	const struct engine_job *job = F->job;
	const struct placement *pl = job->pl;
	int N = pl->nranks, rc = -1;
	unsigned char *drep = NULL;

	F->rep_dp = 0;
	if (job->fold && job->distinct) {
		int ndp = pl->size[DIM_DP] * pl->size[DIM_EP];
		drep = xcalloc((size_t)ndp, 1);
		for (int r = 0; r < N; r++)
			if (job->distinct[r]) {
				int c[DIM_N];
				placement_coords(pl, r, c);
				drep[c[DIM_DP]] = 1;
			}
		if (job->ndegraded > 0 && !job->fold_exact && mark_degraded_replicas(F, drep)) {
			diag_errf(d, "a collective plan could not be made to find the replicas a degraded link touches");
			goto out;
		}
		while (F->rep_dp < ndp - 1 && drep[F->rep_dp])
			F->rep_dp++;
	}
	if (job->fold && !job->fold_exact && !job->ps) {
		int m = majority_replica(F, drep, F->rep_dp);
		if (m < 0) {
			diag_errf(d, "a collective plan could not be made to choose the representative replica");
			goto out;
		}
		F->rep_dp = m;
	}
	for (int r = 0; r < N; r++) {
		int c[DIM_N];
		placement_coords(pl, r, c);
		F->active[r] = !job->fold || (drep && drep[c[DIM_DP]]) ||
			       (c[DIM_TP] == 0 && c[DIM_CP] == 0 && c[DIM_DP] == F->rep_dp);
	}
	rc = 0;
out:
	free(drep);
	return rc;
}

/* The platform holds the simulated ranks and every GPU they talk to;
 * folded, also the GPUs of the mirror traffic that is posted. */
int fold_mark_used(struct fold *F, unsigned char *used)
{
	const struct engine_job *job = F->job;
	const struct placement *pl = job->pl;
	int N = pl->nranks, pp = pl->size[DIM_PP];
	int *grp = xreallocarray(NULL, (size_t)N + 2, sizeof(*grp));
	/* cheap folding posts only the simulated ranks' own flows: the
	 * platform needs their destinations, not every member of their
	 * groups (building every node made the load quadratic: SimGrid
	 * checks each new name against the whole platform) */
	bool narrow = job->fold && !job->fold_exact && !job->ps;
	for (int r = 0; r < N; r++) {
		if (!F->active[r])
			continue;
		int c[DIM_N];
		placement_coords(pl, r, c);
		used[r] = 1;
		for (int g = 0; g < GROUP_N && !narrow; g++) {
			int n = placement_group(pl, g, r, grp);
			for (int i = 0; i < n; i++)
				used[grp[i]] = 1;
		}
		for (int dlt = -1; dlt <= 1; dlt += 2)
			if (c[DIM_PP] + dlt >= 0 && c[DIM_PP] + dlt < pp)
				used[placement_stage_peer(pl, r, c[DIM_PP] + dlt)] = 1;
	}
	free(grp);
	if ((job->fold_exact && fold_closure(F, used)) || (narrow && mark_flow_peers(F, used)))
		return -1;
	return 0;
}

/* The replicas whose ranks differ from the others': folded, those
 * simulated whole; unfolded, those holding a distinct rank ([ndp]). */
static unsigned char *unlike_replicas(const struct fold *F)
{
	const struct engine_job *job = F->job;
	const struct placement *pl = job->pl;
	int N = pl->nranks, ndp = pl->size[DIM_DP] * pl->size[DIM_EP], c[DIM_N];
	unsigned char *whole = xcalloc((size_t)ndp + 1, 1);
	for (int r = 0; r < N; r++) {
		placement_coords(pl, r, c);
		if (job->fold ? F->active[r] && c[DIM_DP] != F->rep_dp : job->distinct && job->distinct[r])
			whole[c[DIM_DP]] = 1;
	}
	return whole;
}

void fold_classes(const struct fold *F, int *cls)
{
	const struct engine_job *job = F->job;
	const struct placement *pl = job->pl;
	int N = pl->nranks, nk = 0, c[DIM_N];
	unsigned char *whole = unlike_replicas(F);
	/* the classes seen: (stage, program, who) and their first rank; who
	 * is -1 for the alike replicas, the replica's index in an unlike
	 * one, -2 - r for a distinct rank r */
	const struct program **kprog = xcalloc((size_t)N + 1, sizeof(*kprog));
	int *kstage = xcalloc((size_t)N + 1, sizeof(int)), *kwho = xcalloc((size_t)N + 1, sizeof(int));
	int *krank = xcalloc((size_t)N + 1, sizeof(int));
	for (int r = 0; r < N; r++) {
		cls[r] = -1;
		if (!F->active[r])
			continue;
		placement_coords(pl, r, c);
		const struct program *prog = job->rank_prog ? job->rank_prog[r] : job->stage_prog[c[DIM_PP]];
		int who = job->distinct && job->distinct[r] ? -2 - r : whole[c[DIM_DP]] ? c[DIM_DP] : -1, k = 0;
		while (k < nk && !(kstage[k] == c[DIM_PP] && kprog[k] == prog && kwho[k] == who))
			k++;
		if (k == nk) {
			kstage[nk] = c[DIM_PP];
			kprog[nk] = prog;
			kwho[nk] = who;
			krank[nk++] = r;
		}
		cls[r] = krank[k];
	}
	/* a folded rank is of its representative's class */
	for (int r = 0; r < N; r++)
		if (cls[r] < 0)
			cls[r] = cls[fold_representative(F, r)];
	free(whole);
	free(kprog);
	free(kstage);
	free(kwho);
	free(krank);
}

int fold_representative(const struct fold *F, int r)
{
	const struct placement *pl = F->job->pl;
	if (!F->job->fold || F->active[r])
		return r;
	int c[DIM_N];
	placement_coords(pl, r, c);
	return placement_rank(pl, 0, F->rep_dp, c[DIM_PP]);
}
