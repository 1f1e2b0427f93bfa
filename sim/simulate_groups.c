/* simulate_groups: mixed clusters (plan node_groups): each group's
 * programs priced for its GPU, every rank pointed at its own, each stage's
 * memory the fullest of its GPUs against that GPU's HBM. */
#include <stdlib.h>
#include <string.h>

#include "simulate-private.h"
#include "bug.h"
#include "builders.h"
#include "xalloc.h"

void simulate_groups_finish(struct groups_built *g, int pp)
{
	for (int k = 0; k < PLAN_MAX_NODE_GROUPS; k++) {
		for (int s = 0; g->prog[k] && s < pp; s++)
			program_finish(&g->prog[k][s]);
		free(g->prog[k]);
		inputs_destroy(g->vin[k]);
	}
	free(g->rank_prog);
	free(g->rank_group);
	free(g->replica_class);
}

/* Each data-parallel replica's class into g->replica_class, their count
 * into g->nclasses: two replicas are of one class when every rank of
 * one, in rank order, has the same GPU as the other's (node groups of
 * the same GPU preset count as one); rg: each rank's node group. */
static void replica_classes(const struct plan *pl, const struct placement *place, const int *rg,
			    struct groups_built *g)
{
	int N = place->nranks, ndp = place->size[DIM_DP] * place->size[DIM_EP], per = N / ndp;
	int gpu_of[PLAN_MAX_NODE_GROUPS], *seen = xcalloc((size_t)ndp + 1, sizeof(int));
	int *sig = xcalloc((size_t)N + 1, sizeof(int));
	for (int k = 0; k < pl->ngroups; k++) {
		gpu_of[k] = k;
		for (int j = 0; j < k && gpu_of[k] == k; j++)
			if (plan_groups_same_gpu(pl, j, k))
				gpu_of[k] = j;
	}
	/* sig[dp * per + i]: the GPU of replica dp's i-th rank */
	for (int q = 0; q < N; q++) {
		int c[DIM_N];
		placement_coords(place, q, c);
		BUG_ON(c[DIM_DP] >= ndp || seen[c[DIM_DP]] >= per, "rank %d outside the replicas", q);
		sig[c[DIM_DP] * per + seen[c[DIM_DP]]++] = gpu_of[rg[q]];
	}
	g->replica_class = xreallocarray(NULL, (size_t)ndp + 1, sizeof(int));
	g->nclasses = 0;
	for (int k = 0; k < ndp; k++) {
		int j = 0;
		while (j < k && memcmp(&sig[j * per], &sig[k * per], (size_t)per * sizeof(int)))
			j++;
		g->replica_class[k] = j < k ? g->replica_class[j] : g->nclasses++;
	}
	free(seen);
	free(sig);
}

/* Whether two programs have the same tasks (kind, stream, group) in the
 * same order: ranks of one stage on different GPUs must replay the same
 * schedule with other times. */
static bool same_shape(const struct program *a, const struct program *b)
{
	if (a->n != b->n)
		return false;
	for (int i = 0; i < a->n; i++)
		if (a->t[i].kind != b->t[i].kind || a->t[i].stream != b->t[i].stream ||
		    a->t[i].group != b->t[i].group)
			return false;
	return true;
}

/* Build each group's programs (priced by its GPU's roofline, or by the
 * job's cost source where the GPU is the topology's) and point every rank
 * at its own; each stage's memory becomes the fullest of its GPUs
 * against that GPU's HBM (r->stage[s].mem, r->fits). */
int simulate_build_groups(const struct inputs *in, const struct plan *pl,
			const struct placement *place, struct program *base, struct groups_built *g,
			struct result *r, struct diag *d)
{
	const struct topology *topo = inputs_topology(in);
	int nranks = place->nranks;
	bool *need = xcalloc((size_t)PLAN_MAX_NODE_GROUPS * pl->parallel.pp, sizeof(*need));
	int *rg = xreallocarray(NULL, (size_t)nranks, sizeof(*rg));
	double *cfwd = xcalloc((size_t)PLAN_MAX_NODE_GROUPS * pl->parallel.pp, sizeof(*cfwd));
	double *cbwd = xcalloc((size_t)PLAN_MAX_NODE_GROUPS * pl->parallel.pp, sizeof(*cbwd));
	int rc = -1;

	for (int q = 0; q < nranks; q++) {
		int c[DIM_N];
		placement_coords(place, q, c);
		rg[q] = plan_node_group(pl, topology_node_of(topo, q));
		BUG_ON(rg[q] < 0, "rank %d on node %d outside the node groups", q, topology_node_of(topo, q));
		need[rg[q] * pl->parallel.pp + c[DIM_PP]] = true;
	}
	for (int s = 0; s < pl->parallel.pp; s++)
		r->stage[s].mem.fits = true;
	bool first[PLAN_MAX_STAGES];
	for (int s = 0; s < pl->parallel.pp; s++)
		first[s] = true;
	for (int k = 0; k < pl->ngroups; k++) {
		const struct inputs *cin = in;
		bool any = false;
		for (int s = 0; s < pl->parallel.pp; s++)
			any |= need[k * pl->parallel.pp + s];
		if (!any)
			continue;
		if (memcmp(&pl->group[k].gpu, &topo->gpu, sizeof(topo->gpu)) != 0) {
			g->vin[k] = inputs_with_gpu(in, &pl->group[k].gpu);
			if (!g->vin[k]) {
				diag_errf(d, "out of memory for node group %d", k);
				goto out;
			}
			cin = g->vin[k];
		}
		g->prog[k] = xcalloc((size_t)pl->parallel.pp, sizeof(*g->prog[k]));
		g->mem_fits[k] = true;
		for (int s = 0; s < pl->parallel.pp; s++) {
			struct stage_result sr;
			program_init(&g->prog[k][s]);
			if (!need[k * pl->parallel.pp + s])
				continue;
			/* the builder itself (simulate.c's wrapper would be a circle) */
			if (builders_find(inputs_model(cin))->build(cin, pl, s, &g->prog[k][s], &sr)) {
				diag_errf(d, "cannot build the program of stage %d on node group %d (%s)", s, k,
					  pl->group[k].gpu.name);
				goto out;
			}
			BUG_ON(!same_shape(&g->prog[k][s], &base[s]),
			       "stage %d's program on GPU '%s' has another shape than on '%s'", s,
			       pl->group[k].gpu.name, topo->gpu.name);
			if (sr.mem.total_bytes > g->mem_worst[k]) {
				g->mem_worst[k] = sr.mem.total_bytes;
				g->mem_capacity[k] = sr.mem.capacity_bytes;
			}
			g->mem_fits[k] = g->mem_fits[k] && sr.mem.fits;
			cfwd[k * pl->parallel.pp + s] = sr.compute_fwd_s;
			cbwd[k * pl->parallel.pp + s] = sr.compute_bwd_s;
			/* memory: the stage's fullest GPU, relative to its own HBM */
			struct mem_anatomy *mm = &r->stage[s].mem;
			if (first[s] || sr.mem.total_bytes - sr.mem.capacity_bytes >
					mm->total_bytes - mm->capacity_bytes) {
				bool fits = first[s] ? sr.mem.fits : mm->fits && sr.mem.fits;
				*mm = sr.mem;
				mm->fits = fits;
			} else
				mm->fits = mm->fits && sr.mem.fits;
			first[s] = false;
		}
	}
	/* the stage's compute figures: its first rank's GPU */
	for (int s = 0; s < pl->parallel.pp; s++) {
		int k = rg[placement_rank(place, 0, 0, s)];
		r->stage[s].compute_fwd_s = cfwd[k * pl->parallel.pp + s];
		r->stage[s].compute_bwd_s = cbwd[k * pl->parallel.pp + s];
	}
	g->rank_prog = xreallocarray(NULL, (size_t)nranks, sizeof(*g->rank_prog));
	for (int q = 0; q < nranks; q++) {
		int c[DIM_N];
		placement_coords(place, q, c);
		g->rank_prog[q] = &g->prog[rg[q]][c[DIM_PP]];
	}
	replica_classes(pl, place, rg, g);
	g->rank_group = rg;
	rg = NULL;
	rc = 0;
out:
	free(need);
	free(rg);
	free(cfwd);
	free(cbwd);
	return rc;
}
