/* fold_exact: exact folding (engine_job.fold_exact): the binding links
 * every flow of every replica could cross, joined (union-find) and rooted
 * at the simulated ranks' own traffic, and the mirror collectives and
 * pipeline messages a simulated rank posts because they can meet it. No
 * SimGrid here. */
#include <stdlib.h>
#include <string.h>

#include "fold-private.h"
#include "hash.h"
#include "xalloc.h"

/* ---- folding: which mirror flows can meet simulated ones -------------
 *
 * Max-min sharing decomposes over the links that can bind: a link whose
 * capacity is at least the sum of the capacities feeding it (a FATPIPE
 * switch, a leaf or pod uplink of a fat tree that is not oversubscribed)
 * never limits any allocation, so it can be dropped from the system
 * without changing a rate. What remains are NICs and oversubscribed
 * uplinks. Every flow the folded simulation could post (the groups and
 * pipeline pairs of every replica, an interleaved pipeline's wrapped
 * ones, last stage to first, too) joins the binding links it crosses
 * (union-find); a mirror flow is posted if it crosses a link joined to
 * the simulated ranks' own traffic, at any time of the iteration: every
 * other flow shares no binding link, ever, with what is simulated, so
 * leaving it out changes no simulated rate. Links inside nodes (GPU,
 * NVLink, PCIe) take part like any other: a TP group of a replica on a
 * node no simulated flow reaches is left out. */

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

struct mirror_list {
	struct fold *F;
	struct coll_plan **mir;
	int n, cap;
};

static int add_mirror(void *ctx, struct cplan *mc)
{
	struct mirror_list *L = ctx;
	if (plan_posted(L->F, mc)) {
		XGROW(L->mir, L->cap, (size_t)L->n + 1);
		L->mir[L->n++] = mc->p;
	}
	return 0;
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
	struct cplan *c = cplan_get(&F->cache, kind, mem, n, op, bytes);
	if (!c || c->nmir >= 0)
		return c;
	struct mirror_list L = { F, xreallocarray(NULL, 16, sizeof(*L.mir)), 1, 16 };
	L.mir[0] = c->p;
	if (fold_each_stage_group(F, stage, kind, mem, n, op, bytes, add_mirror, &L) < 0) {
		free(L.mir);
		return NULL;
	}
	c = cplan_get(&F->cache, kind, mem, n, op, bytes); /* the table may have grown */
	c->mir = L.mir;
	c->nmir = L.n;
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

/* After the closure: mark in used the GPUs of every posted mirror flow
 * and pipeline pair. */
static void closure_mark_used(struct fold *F, unsigned char *used)
{
	const struct placement *pl = F->job->pl;
	int N = pl->nranks;

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
			int peer = fold_pipe_peer(F, r, c[DIM_PP], dlt);
			if (peer >= 0 && fold_touches(F, r, peer))
				used[r] = used[peer] = 1;
		}
	}
}

/* Folded: join the binding links of every flow the replicas of every
 * stage could send (their collectives' plans across nodes, their pipeline
 * messages), rooted at the simulated ranks' own; then mark in used the
 * GPUs of every posted mirror flow. Returns 0 or -1 (a plan cannot be
 * made). */
int fold_closure(struct fold *F, unsigned char *used)
{
	const struct engine_job *job = F->job;
	const struct placement *pl = job->pl;
	int N = pl->nranks, pp = pl->size[DIM_PP], rc = -1;

	/* which group kinds run every collective on one stream (fold_own_only) */
	program_serial_kinds(job->stage_prog, pp, F->serial);
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
		if (nk > 1) /* qsort's base may not be NULL, even for none */
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
				fold_pair_sig_note(F, c, k[0], tmp[0]);
			}
		}
	}
	for (int r = 0; r < N; r++) {
		int c[DIM_N];
		placement_coords(pl, r, c);
		for (int dlt = -1; dlt <= 1; dlt += 2) {
			int peer = fold_pipe_peer(F, r, c[DIM_PP], dlt);
			if (peer >= 0)
				fold_join(F, r, peer, F->active[r], -1);
		}
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
	int dlt = dir == P2P_FWD ? +1 : -1;
	size_t cap = 0;
	int n = 0;
	*pairs = NULL;
	if (fold_pipe_peer(F, rank, stage, dlt) < 0)
		return 0; /* past the first or last stage, not wrapping */
	for (int r = 0; r < pl->nranks; r++) {
		if (r == rank || !stage_of_is(pl, r, stage))
			continue;
		int pair[2] = { r, fold_pipe_peer(F, r, stage, dlt) };
		if (!fold_touches(F, pair[0], pair[1]))
			continue;
		XGROW(*pairs, cap, (size_t)2 * n + 2);
		(*pairs)[2 * n] = pair[0];
		(*pairs)[2 * n + 1] = pair[1];
		n++;
	}
	return n;
}
