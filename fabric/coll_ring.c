/* coll_ring: ring collectives with NCCL-style channels, as O(P) flows.
 *
 * Ranks are ordered by node, then in ring order inside the node (local
 * index; on an NVLink mesh, a cycle of direct NVLinks, coll_mesh.c).
 * Inside one node on a switch a single ring suffices (the switch gives
 * every GPU its full bandwidth); on an NVLink mesh several rings cover the
 * links, as NCCL's ring search does, each carrying a share of N
 * proportional to its bottleneck. Across nodes, C channels are built, C =
 * the number of distinct NICs the group's GPUs use in a node: channel c
 * visits each node's ranks rotated by c k/C, so it leaves every node
 * through a different GPU and hence NIC. Each channel carries N / C.
 * Every ring edge of every channel becomes volume on the flow (src, dst);
 * equal endpoints are merged, so there are at most two flows per rank
 * (next GPU in the node, next node) per ring.
 *
 * All-reduce = reduce-scatter + all-gather: each edge carries
 * 2(P-1)/P x N/C in 2(P-1) steps. Broadcast and reduce run as a pipelined
 * chain (P-1 edges, N/C each, P-1 steps): broadcast from the first rank of
 * the ring, reduce towards it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coll-private.h"
#include "xalloc.h"

#define MAX_MESH_RINGS 8

int coll_ring_plan(const struct topology *t, enum coll_op op, const int *ranks,
		   int n, double N, struct coll_plan *p)
{
	double per_edge;
	int steps;
	bool chain = false, reverse = false;

	switch (op) {
	case COLL_ALLREDUCE:
		per_edge = 2.0 * (n - 1) / n * N;
		steps = 2 * (n - 1);
		break;
	case COLL_REDUCE_SCATTER:
	case COLL_ALLGATHER:
		per_edge = (double)(n - 1) / n * N;
		steps = n - 1;
		break;
	case COLL_BROADCAST:
	case COLL_REDUCE:
		per_edge = N;
		steps = n - 1;
		chain = true;
		reverse = op == COLL_REDUCE;
		break;
	default:
		return -1; /* all-to-all and send/recv are not ring collectives */
	}

	int *r = coll_sorted_ranks(ranks, n);
	int *start = xreallocarray(NULL, (size_t)n + 1, sizeof(*start));
	int *order = xreallocarray(NULL, (size_t)n + 1, sizeof(*order));
	int *rings = xreallocarray(NULL, (size_t)n * MAX_MESH_RINGS + 1, sizeof(*rings));
	double w[MAX_MESH_RINGS];
	int cap = 0, rc = -1;
	if (!r || !start || !order || !rings)
		goto out;
	int nn = coll_node_runs(t, r, n, start);
	for (int k = 0; k < nn; k++)
		coll_node_order(t, r + start[k], start[k + 1] - start[k]);

	/* one node on an NVLink mesh: rings covering the links */
	int nr = nn == 1 ? coll_mesh_rings(t, r, n, MAX_MESH_RINGS, rings, w) : 0;
	if (nr > 0) {
		double wsum = 0;
		for (int c = 0; c < nr; c++)
			wsum += w[c];
		for (int c = 0; c < nr; c++)
			for (int i = 0; i < (chain ? n - 1 : n); i++) {
				int a = rings[c * n + i], b = rings[c * n + (i + 1) % n];
				if (reverse) {
					int x = a;
					a = b;
					b = x;
				}
				if (coll_add_flow(p, &cap, a, b, per_edge * w[c] / wsum, 0))
					goto out;
			}
		p->channels = nr;
		p->steps = steps;
		rc = 0;
		goto out;
	}

	int C = coll_node_channels(t, r, start, nn);
	int nedges = chain ? n - 1 : n;
	for (int c = 0; c < C; c++) {
		int wr = 0;
		for (int k = 0; k < nn; k++) {
			int len = start[k + 1] - start[k];
			int rot = (int)((long)c * len / C);
			for (int j = 0; j < len; j++)
				order[wr++] = r[start[k] + (j + rot) % len];
		}
		for (int i = 0; i < nedges; i++) {
			int a = order[i], b = order[(i + 1) % n];
			if (reverse) {
				int x = a;
				a = b;
				b = x;
			}
			if (coll_add_flow(p, &cap, a, b, per_edge / C, 0))
				goto out;
		}
	}
	p->channels = C;
	p->steps = steps;
	rc = 0;
out:
	free(rings);
	free(order);
	free(start);
	free(r);
	return rc;
}
