/* coll_ring: ring collectives with NCCL-style channels, as O(P) flows.
 *
 * Ranks are ordered by node, then local index. Inside one node a single
 * ring suffices (a switch gives every GPU its full bandwidth). Across
 * nodes, C channels are built, C = the number of distinct NICs the group's
 * GPUs use in a node: channel c visits each node's ranks rotated by c k/C,
 * so it leaves every node through a different GPU and hence NIC. Each
 * channel carries N / C. Every ring edge of every channel becomes volume on
 * the flow (src, dst); equal endpoints are merged, so there are at most two
 * flows per rank (next GPU in the node, next node).
 *
 * All-reduce = reduce-scatter + all-gather: each edge carries
 * 2(P-1)/P x N/C in 2(P-1) steps. Broadcast and reduce run as a pipelined
 * chain (P-1 edges, N/C each, P-1 steps). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coll-private.h"

struct edge {
	int src, dst;
	double bytes;
};

static int cmp_edge(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;
	if (x->src != y->src)
		return (x->src > y->src) - (x->src < y->src);
	return (x->dst > y->dst) - (x->dst < y->dst);
}

int coll_ring_plan(const struct topology *t, enum coll_op op, const int *ranks,
		   int n, double N, struct coll_plan *p)
{
	double per_edge;
	int steps;
	bool chain = false;

	switch (op) {
	case COLL_ALLREDUCE:
		per_edge = 2.0 * (n - 1) / n * N;
		steps = 2 * (n - 1);
		p->bus_bytes = per_edge;
		break;
	case COLL_REDUCE_SCATTER:
	case COLL_ALLGATHER:
		per_edge = (double)(n - 1) / n * N;
		steps = n - 1;
		p->bus_bytes = per_edge;
		break;
	case COLL_BROADCAST:
	case COLL_REDUCE:
		per_edge = N;
		steps = n - 1;
		chain = true;
		p->bus_bytes = N;
		break;
	default:
		return -1; /* all-to-all is not a ring collective */
	}

	int *r = coll_sorted_ranks(ranks, n);
	if (!r)
		return -1;
	/* group boundaries by node */
	int *start = malloc((size_t)(n + 1) * sizeof(*start));
	int nn = 0;
	for (int i = 0; i < n; i++)
		if (i == 0 || topology_node_of(t, r[i]) != topology_node_of(t, r[i - 1]))
			start[nn++] = i;
	start[nn] = n;

	int C = 1;
	if (nn > 1 && t->nics > 1) {
		C = t->nics;
		for (int k = 0; k < nn; k++) {
			bool seen[TOPO_MAX_NICS] = { false };
			int d = 0;
			for (int i = start[k]; i < start[k + 1]; i++) {
				int nic = t->gpu_nic[topology_local_of(t, r[i])];
				if (nic >= 0 && !seen[nic]) {
					seen[nic] = true;
					d++;
				}
			}
			if (d < C)
				C = d;
		}
		if (C < 1)
			C = 1;
	}

	int nedges = chain ? n - 1 : n;
	struct edge *e = malloc((size_t)C * (size_t)nedges * sizeof(*e));
	int *order = malloc((size_t)n * sizeof(*order));
	int ne = 0;
	double amax = 0;
	for (int c = 0; c < C; c++) {
		int w = 0;
		for (int k = 0; k < nn; k++) {
			int len = start[k + 1] - start[k];
			int rot = (int)((long)c * len / C);
			for (int j = 0; j < len; j++)
				order[w++] = r[start[k] + (j + rot) % len];
		}
		for (int i = 0; i < nedges; i++) {
			int a = order[i], b = order[(i + 1) % n];
			e[ne++] = (struct edge){ a, b, per_edge / C };
			double lat = topology_path_latency(t, a, b);
			if (lat > amax)
				amax = lat;
		}
	}
	qsort(e, (size_t)ne, sizeof(*e), cmp_edge);
	int cap = 0, rc = 0;
	double tmax = 0;
	for (int i = 0; i < ne && !rc; i++) {
		double bytes = e[i].bytes;
		while (i + 1 < ne && e[i + 1].src == e[i].src && e[i + 1].dst == e[i].dst)
			bytes += e[++i].bytes;
		double lat = topology_path_latency(t, e[i].src, e[i].dst);
		rc = coll_add_flow(p, &cap, e[i].src, e[i].dst, bytes, lat);
		double bt = bytes / topology_path_bw(t, e[i].src, e[i].dst);
		if (bt > tmax)
			tmax = bt;
	}
	p->channels = C;
	p->steps = steps;
	p->alpha_s = amax;
	p->extra_latency_s = (steps - 1) * amax;
	p->ideal_time_s = steps * amax + tmax;
	free(order);
	free(e);
	free(start);
	free(r);
	return rc;
}
