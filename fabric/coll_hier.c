/* coll_hier: hierarchical (two-level) collectives, as O(P) flows.
 *
 * For L GPUs per node on nn nodes (the same L on every node):
 *   all-reduce      intra-node ring reduce-scatter of N, then for each
 *                   local index j an inter-node ring all-reduce of N/L
 *                   among the j-th GPUs of all nodes (one rail each), then
 *                   intra-node ring all-gather of N;
 *   reduce-scatter  intra-node reduce-scatter, inter-node reduce-scatter;
 *   all-gather      inter-node all-gather, intra-node all-gather.
 * The inter-node phase moves 2(nn-1)/nn N/L per GPU instead of a flat
 * ring's 2(P-1)/P N/C, which is what makes it faster when NICs are the
 * bottleneck. The phases are pipelined by chunks: their flows run
 * together, and the latency is the sum of the phases' step latencies,
 * e.g. 2(L-1) alpha_intra + 2(nn-1) alpha_inter for all-reduce. On one
 * node (or one GPU per node) it is the ring. */
#include <stdlib.h>

#include "coll-private.h"
#include "xalloc.h"

int coll_hier_plan(const struct topology *t, enum coll_op op, const int *ranks,
		   int n, double N, struct coll_plan *p)
{
	if (op != COLL_ALLREDUCE && op != COLL_REDUCE_SCATTER && op != COLL_ALLGATHER)
		return -1;
	int *r = coll_sorted_ranks(ranks, n);
	int *start = xreallocarray(NULL, (size_t)n + 1, sizeof(*start));
	int cap = 0, rc = -1;
	if (!r || !start)
		goto out;
	int nn = coll_node_runs(t, r, n, start);
	int L = start[1] - start[0];
	for (int k = 0; k < nn; k++)
		if (start[k + 1] - start[k] != L)
			goto out; /* uneven group: no rails */
	if (nn == 1 || L == 1) {
		free(start);
		free(r);
		return coll_ring_plan(t, op, ranks, n, N, p);
	}
	for (int k = 0; k < nn; k++)
		coll_node_order(t, r + start[k], L);

	bool ar = op == COLL_ALLREDUCE;
	double intra = (ar ? 2.0 : 1.0) * (L - 1) / L * N;     /* per intra edge */
	double inter = (ar ? 2.0 : 1.0) * (nn - 1) / nn * N / L; /* per rail edge */
	double a_intra = 0, a_inter = 0;
	for (int k = 0; k < nn; k++)
		for (int j = 0; j < L; j++) {
			int a = r[start[k] + j], b = r[start[k] + (j + 1) % L];
			if (coll_add_flow(p, &cap, a, b, intra, 0))
				goto out;
			double l = topology_path_latency(t, a, b);
			a_intra = l > a_intra ? l : a_intra;
		}
	for (int j = 0; j < L; j++)
		for (int k = 0; k < nn; k++) {
			int a = r[start[k] + j], b = r[start[(k + 1) % nn] + j];
			if (coll_add_flow(p, &cap, a, b, inter, 0))
				goto out;
			double l = topology_path_latency(t, a, b);
			a_inter = l > a_inter ? l : a_inter;
		}
	int f = ar ? 2 : 1;
	p->channels = L;
	p->steps = f * (L - 1) + f * (nn - 1);
	p->latency_s = f * (L - 1) * a_intra + f * (nn - 1) * a_inter;
	rc = 0;
out:
	free(start);
	free(r);
	return rc;
}
