/* fold_groups: a rank's groups and the flows it posts of them, for the
 * folding planner's files (the bottom of them, with fold_crit.c and
 * fold_links.c: they call it, it calls none of them). No SimGrid here. */
#include <stdlib.h>
#include <string.h>

#include "fold-private.h"
#include "xalloc.h"

/* Folded: the simulated member of a group that posts the flows of the
 * group and of its mirrors (the first simulated member). */
bool fold_posts_group(const struct fold *F, const int *mem, int n, int rank)
{
	for (int i = 0; i < n; i++)
		if (F->active[mem[i]])
			return mem[i] == rank;
	return false;
}

int fold_pipe_peer(const struct fold *F, int r, int st, int dlt)
{
	const struct placement *pl = F->job->pl;
	int s = st + dlt;
	if ((s < 0 || s >= pl->size[DIM_PP]) && !F->wraps)
		return -1;
	return placement_stage_peer(pl, r, s);
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

/* See fold-private.h: one pass over the stage's ranks, each group
 * instance met once (seen), the caller's own skipped. */
int fold_each_stage_group(struct fold *F, int stage, int kind, const int *mem, int n, int op,
			  double bytes, int (*fn)(void *ctx, struct cplan *c), void *ctx)
{
	const struct placement *pl = F->job->pl;
	int *tmp = xreallocarray(NULL, (size_t)placement_group_size(pl, kind) + 1, sizeof(*tmp));
	unsigned char *seen = xcalloc((size_t)pl->nranks + 1, 1);
	int rc = 0;
	for (int i = 0; i < n; i++)
		seen[mem[i]] = 1;
	for (int r = 0; r < pl->nranks && rc == 0; r++) {
		int c[DIM_N];
		placement_coords(pl, r, c);
		if (seen[r] || c[DIM_PP] != stage)
			continue;
		int m = placement_group(pl, kind, r, tmp);
		for (int i = 0; i < m; i++)
			seen[tmp[i]] = 1;
		if (m <= 1)
			continue;
		struct cplan *mc = cplan_get(&F->cache, kind, tmp, m, op, bytes);
		rc = mc ? fn(ctx, mc) : -1;
	}
	free(seen);
	free(tmp);
	return rc < 0 ? -1 : 0;
}
