/* fold_cheap: cheap folding (fold "auto" and "on"): the flows around the
 * busiest member of plans that load their members unequally, the
 * representative replica of the most common class of members, and the
 * GPUs the simulated ranks' own flows reach. No SimGrid here. */
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
int fold_majority_replica(struct fold *F, const unsigned char *drep, int first)
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

/* Mark in used the GPUs the simulated ranks' collective flows go to
 * (what engine_coll_task posts when folding is not exact), before the platform
 * and the rank instances exist. */
int fold_mark_flow_peers(struct fold *F, unsigned char *used)
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
		if (fold_each_own_flow(F, r, prog, grp, ngrp, mark_dst, used) ||
		    fold_mark_uplink_copies(F, r, prog, grp, ngrp, used))
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
