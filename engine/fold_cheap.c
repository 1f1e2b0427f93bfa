/* fold_cheap: cheap folding (fold "auto" and "on"): the flows around the
 * busiest member of plans that load their members unequally, the
 * representative replica of the most common class of members, and the
 * GPUs the simulated ranks' own flows reach. No SimGrid here. */
#include <stdlib.h>
#include <string.h>

#include "fold-private.h"
#include "xalloc.h"

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
		if (fold_plan_crit(c) < 0)
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
