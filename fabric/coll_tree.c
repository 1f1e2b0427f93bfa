/* coll_tree: NCCL's double binary tree all-reduce, as O(P) flows.
 *
 * As in NCCL, the trees span nodes and each node is a chain of its GPUs.
 * Two binary trees over the node indices each carry half of the buffer:
 * tree 0 is the heap-ordered tree (parent of i is (i-1)/2), tree 1 its
 * mirror (node j plays i = nn-1-j), so that most nodes that are interior
 * in one tree are leaves in the other and the load is balanced. As NCCL
 * does, there is a pair of trees per channel, one channel per NIC (as the
 * ring), each pair carrying N / C; each tree's chains start at a different
 * GPU of the node, so the trees leave nodes through different NICs (with
 * one channel, tree 1's chains start half-way round the node). All-reduce = reduce up the tree then
 * broadcast down, pipelined: every edge carries N/2 each way per tree, and
 * the latency is 2 ((L-1) alpha_intra + depth alpha_inter), depth =
 * floor(log2 nn), L GPUs per node (NCCL's model in tuning.cc). NCCL uses
 * trees for all-reduce only, and so does this planner. */
#include <math.h>
#include <stdlib.h>

#include "coll-private.h"
#include "xalloc.h"

static int add_both(struct coll_plan *p, int *cap, int a, int b, double bytes)
{
	if (coll_add_flow(p, cap, a, b, bytes, 0))
		return -1;
	return coll_add_flow(p, cap, b, a, bytes, 0);
}

/* One tree's (k2 of 2C) chains inside the nn nodes, rotated per tree, of
 * part bytes each way into p; *a_intra the longest link's latency.
 * Returns 0 or -1. */
static int add_chains(const struct topology *t, struct coll_plan *p, int *cap, const int *r, const int *start,
		      int nn, int k2, int C, double part, double *a_intra)
{
	int tr = k2 & 1;
	for (int k = 0; k < nn; k++) {
		int len = start[k + 1] - start[k], rot = (int)((long)k2 * len / (2 * C));
		if (C == 1 && tr)
			rot = len / 2;
		for (int j = 0; j + 1 < len; j++) {
			int a = r[start[k] + (j + rot) % len], b = r[start[k] + (j + 1 + rot) % len];
			if (add_both(p, cap, a, b, part))
				return -1;
			double l = topology_path_latency(t, a, b);
			*a_intra = l > *a_intra ? l : *a_intra;
		}
	}
	return 0;
}

/* One tree's (k2 of 2C) binary tree over the nn nodes, between chain
 * heads (the odd trees mirrored), of part bytes each way into p;
 * *a_inter the longest link's latency. Returns 0 or -1. */
static int add_node_tree(const struct topology *t, struct coll_plan *p, int *cap, const int *r, const int *start,
			 int nn, int k2, int C, double part, double *a_inter)
{
	int tr = k2 & 1;
	for (int i = 1; i < nn; i++) {
		int child = tr ? nn - 1 - i : i, parent = tr ? nn - 1 - (i - 1) / 2 : (i - 1) / 2;
		int lc = start[child + 1] - start[child], lp = start[parent + 1] - start[parent];
		int rc_ = C == 1 && tr ? lc / 2 : (int)((long)k2 * lc / (2 * C));
		int rp_ = C == 1 && tr ? lp / 2 : (int)((long)k2 * lp / (2 * C));
		int a = r[start[child] + rc_ % lc], b = r[start[parent] + rp_ % lp];
		if (add_both(p, cap, a, b, part))
			return -1;
		double l = topology_path_latency(t, a, b);
		*a_inter = l > *a_inter ? l : *a_inter;
	}
	return 0;
}

int coll_tree_plan(const struct topology *t, enum coll_op op, const int *ranks,
		   int n, double N, struct coll_plan *p)
{
	if (op != COLL_ALLREDUCE)
		return -1;
	int *r = coll_sorted_ranks(ranks, n);
	int *start = xreallocarray(NULL, (size_t)n + 1, sizeof(*start));
	int cap = 0, rc = -1, maxlen = 0;
	double a_intra = 0, a_inter = 0;
	if (!r || !start)
		goto out;
	int nn = coll_node_runs(t, r, n, start);
	for (int k = 0; k < nn; k++) {
		int len = start[k + 1] - start[k];
		coll_node_order(t, r + start[k], len);
		if (len > maxlen)
			maxlen = len;
	}
	/* channels, each a pair of trees carrying N / (2C) */
	int C = coll_node_channels(t, r, start, nn);
	double part = N / (2.0 * C);
	for (int k2 = 0; k2 < 2 * C; k2++)
		if (add_chains(t, p, &cap, r, start, nn, k2, C, part, &a_intra) ||
		    add_node_tree(t, p, &cap, r, start, nn, k2, C, part, &a_inter))
			goto out;
	int depth = 0;
	while ((2 << depth) <= nn)
		depth++;
	p->channels = 2 * C;
	p->steps = 2 * (maxlen - 1 + depth);
	p->latency_s = 2 * ((maxlen - 1) * a_intra + depth * a_inter);
	rc = 0;
out:
	free(start);
	free(r);
	return rc;
}
