/* fold_own: the folded groups whose representative's own flows stand
 * for the group's (fold_own_only), and the pair-set signatures of every
 * plan of a group instance it needs. No SimGrid here. */
#include <stdlib.h>

#include "fold-private.h"
#include "xalloc.h"

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
void fold_pair_sig_note(struct fold *F, struct cplan *c, int kind, int leader)
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
