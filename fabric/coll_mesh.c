/* coll_mesh: ring orders on an NVLink mesh (DGX-1 style hybrid cube-mesh).
 *
 * NCCL searches the NVLink graph for rings whose every hop is a direct
 * NVLink, and uses several such rings to use all links. Here: a
 * depth-first search for the Hamiltonian cycle of direct links with the
 * widest bottleneck (pruned by the best found so far; at most 12 GPUs,
 * which covers real meshes), taken greedily several times on the
 * residual per-direction link bandwidth. */
#include <stdlib.h>
#include <string.h>

#include "coll-private.h"
#include "xalloc.h"

#define MESH_MAX 12

struct search {
	int len;
	const double *cap;        /* [len * len] residual per direction */
	int path[MESH_MAX], best[MESH_MAX];
	bool used[MESH_MAX];
	double best_w;
	long budget;
};

static void dfs(struct search *s, int depth, double w)
{
	if (--s->budget < 0 || w <= s->best_w)
		return;
	int last = s->path[depth - 1];
	if (depth == s->len) {
		double c = s->cap[last * s->len + s->path[0]];
		if (c < w)
			w = c;
		if (w > s->best_w) {
			s->best_w = w;
			memcpy(s->best, s->path, sizeof(s->best));
		}
		return;
	}
	for (int v = 0; v < s->len; v++) {
		double c = s->cap[last * s->len + v];
		if (s->used[v] || c <= 0)
			continue;
		s->used[v] = true;
		s->path[depth] = v;
		dfs(s, depth + 1, c < w ? c : w);
		s->used[v] = false;
	}
}

/* Best cycle over the residual capacities; 0 if none. */
static double best_cycle(int len, const double *cap, int *cycle)
{
	struct search s = { .len = len, .cap = cap, .best_w = 0, .budget = 2000000 };
	s.path[0] = 0;
	s.used[0] = true;
	dfs(&s, 1, 1e300);
	if (s.best_w > 0)
		memcpy(cycle, s.best, (size_t)len * sizeof(int));
	return s.best_w;
}

static double *mesh_caps(const struct topology *t, const int *r, int len)
{
	int G = t->gpus_per_node;
	double *cap = xcalloc((size_t)len * len + 1, sizeof(*cap));
	for (int i = 0; i < len; i++)
		for (int j = 0; j < len; j++)
			if (i != j)
				cap[i * len + j] = t->nvl_bw_Bps[topology_local_of(t, r[i]) * G +
								 topology_local_of(t, r[j])];
	return cap;
}

int coll_mesh_rings(const struct topology *t, const int *r, int len, int maxc,
		    int *rings, double *w)
{
	if (t->intra != INTRA_NVLINK_MESH || len < 2 || len > MESH_MAX)
		return 0;
	double *cap = mesh_caps(t, r, len);
	int cyc[MESH_MAX], nr = 0;
	if (!cap)
		return 0;
	while (nr < maxc) {
		double bw = best_cycle(len, cap, cyc);
		if (bw <= 0)
			break;
		for (int i = 0; i < len; i++) {
			cap[cyc[i] * len + cyc[(i + 1) % len]] -= bw;
			rings[nr * len + i] = r[cyc[i]];
		}
		w[nr++] = bw;
	}
	free(cap);
	return nr;
}

void coll_node_order(const struct topology *t, int *r, int len)
{
	if (t->intra != INTRA_NVLINK_MESH || len < 3 || len > MESH_MAX)
		return;
	double *cap = mesh_caps(t, r, len);
	int cyc[MESH_MAX], tmp[MESH_MAX];
	if (!cap)
		return;
	if (best_cycle(len, cap, cyc) > 0) {
		for (int i = 0; i < len; i++)
			tmp[i] = r[cyc[i]];
		memcpy(r, tmp, (size_t)len * sizeof(int));
	}
	free(cap);
}
