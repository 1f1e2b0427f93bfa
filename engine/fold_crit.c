/* fold_crit: cheap folding's flows around the busiest member of a plan
 * that loads its members unequally (a tree): which simulated rank posts
 * them and which they are. Below fold_cheap.c and fold_uplink.c, which
 * both use it. No SimGrid here. */
#include <stdlib.h>
#include <string.h>

#include "fold-private.h"
#include "xalloc.h"

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
			if (c[DIM_DP] == F->rep_dp)
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
int fold_plan_crit(struct cplan *c)
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
	return F->job->fold && !F->job->fold_exact && fold_plan_crit(c) >= 0 &&
	       fold_posts_group(F, mem, n, rank) && holds_rep(F, mem, n);
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
	int crit = fold_plan_crit(c);
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
