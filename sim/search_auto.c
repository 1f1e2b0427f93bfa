/* search_auto: "nodes": "auto", the fewest nodes whose screened plans
 * meet a goal (search_auto_nodes, see search.h): the screen doubled, then
 * bisected, and the counts around its boundary handed to the engine. */
#include "search.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "coll.h"
#include "xalloc.h"

/* Whether the best screened plans of cluster ci at nodes meet g's
 * deadline (and budget); their statistics added to *st. */
static bool screen_meets(struct goal *g, int ci, long nodes, struct search_stats *st)
{
	struct goal_cluster *cl = &g->clusters[ci];
	long *keep = cl->nodes, n = 0;
	int keepn = cl->nnodes;
	struct search_stats s1 = { 0 };
	cl->nodes = &nodes;
	cl->nnodes = 1;
	struct candidate *c = search_screen(g, ci, &n, &s1);
	cl->nodes = keep;
	cl->nnodes = keepn;
	st->enumerated += s1.enumerated, st->invalid += s1.invalid, st->no_fit += s1.no_fit;
	st->screened += s1.screened, st->screen_s += s1.screen_s;
	bool meets = false;
	for (long k = 0; k < n && !meets; k++)
		meets = c[k].est.gp.wall_s <= g->deadline_s &&
			(g->budget_usd <= 0 || c[k].est.econ.cost_usd <= g->budget_usd);
	free(c);
	return meets;
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

long search_node_cap(const struct goal_cluster *cl)
{
	long cap = topology_node_capacity(inputs_topology(cl->in));
	return cap < SEARCH_MAX_NODES ? cap : SEARCH_MAX_NODES;
}

void search_auto_nodes(struct goal *g, int ci, struct search_auto *out)
{
	struct goal_cluster *cl = &g->clusters[ci];
	long cap = search_node_cap(cl), lo = 0, hi = 0, n = 1;
	*out = (struct search_auto){ .cap = cap };
	/* doubling: lo fails, hi meets */
	for (;;) {
		out->probes++;
		if (screen_meets(g, ci, n, &out->st)) {
			hi = n;
			break;
		}
		lo = n;
		if (n >= cap)
			break;
		n = n * 2 < cap ? n * 2 : cap;
	}
	long want[6] = { cap };
	int nw = 1;
	if (hi) {
		while (hi - lo > 1) {
			long mid = lo + (hi - lo) / 2;
			out->probes++;
			*(screen_meets(g, ci, mid, &out->st) ? &hi : &lo) = mid;
		}
		long b = out->boundary = hi;
		long around[6] = { b - 2, b - 1, b, b + 1, (long)ceil(1.1 * b), (long)ceil(1.25 * b) };
		nw = 0;
		for (int i = 0; i < 6; i++)
			if (around[i] >= 1 && around[i] <= cap)
				want[nw++] = around[i];
	}
	qsort(want, (size_t)nw, sizeof(*want), cmp_long);
	long *nodes = xmalloc((size_t)nw * sizeof(*nodes));
	int k = 0;
	for (int i = 0; i < nw; i++)
		if (!k || nodes[k - 1] != want[i])
			nodes[k++] = want[i];
	free(cl->nodes);
	cl->nodes = nodes;
	cl->nnodes = k;
}
