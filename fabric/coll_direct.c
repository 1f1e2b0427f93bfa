/* coll_direct: all-to-all, send/recv and nccl-tests' gather, scatter,
 * hypercube and alltoallv as direct flows.
 *
 * All-to-all, pairwise: every rank sends N/P to every other rank at once,
 * P(P-1) flows, since every pair does exchange data (NCCL posts the P-1
 * sends and receives of each rank together). A 1,024-rank all-to-all is
 * a million flows, which SimGrid does not finish in minutes.
 *
 * All-to-all, rail-aligned (the "direct" plan where the group allows it):
 * a group of nn nodes with the same g local GPUs on each, NVSwitch inside
 * the node and a NIC per GPU, is planned as NCCL's PXN moves it: a GPU's
 * data for GPU r of every other node first crosses NVLink to its own
 * node's GPU r, which sends one message per node over its rail. Flows:
 *
 *   GPU a -> GPU r, same node (r != a):      nn N/P  (for r here and on
 *                                                      every other node)
 *   GPU (A, r) -> GPU (B, r), nodes A != B:   g N/P  (from the g GPUs of A)
 *
 * nn g(g-1) + g nn(nn-1) flows instead of P(P-1) (1,024 ranks: 130,048
 * against 1,047,552). Every NIC carries the same bytes as pairwise,
 * (P-g) N/P each way, and so does every fat-tree uplink; the NVLink side
 * carries nn times more, at 9x a NIC's bandwidth on a DGX H100. Without
 * contention both take the NIC time, (P-g)/P N / B_nic (tests/test-coll.c
 * checks the engine's times agree to 1e-9); with contention elsewhere
 * they share differently (fewer, bigger flows get fewer max-min shares),
 * and the test bounds the difference. Groups that are not rail-aligned
 * (another GPU count on some node, a shared NIC, PCIe or an NVLink mesh
 * inside the node) stay pairwise. The flows of the two stages start
 * together, as every plan's do (coll.h): no store-and-forward delay.
 *
 * Send/recv: each rank sends N to the next rank of the group in the order
 * given (nccl-tests' sendrecv ring shift; with two ranks, an exchange).
 * One step each. */
#include <stdlib.h>

#include <math.h>

#include "coll-private.h"
#include "xalloc.h"

/* The rail-aligned all-to-all (above) into p; 1 if the group is not
 * rail-aligned (nothing added), 0 or -1. */
static int rail_alltoall(const struct topology *t, const int *ranks, int n, double N,
			 struct coll_plan *p, int *cap)
{
	int *r = coll_sorted_ranks(ranks, n), rc = 1;
	int *start = xreallocarray(NULL, (size_t)n + 1, sizeof(*start));
	int nn = coll_node_runs(t, r, n, start), g = start[1] - start[0];
	if (t->intra != INTRA_NVSWITCH || nn < 2 || g < 2 || nn * g != n)
		goto out;
	unsigned long long nics = 0;
	for (int i = 0; i < g; i++) {
		int nic = t->gpu_nic[topology_local_of(t, r[i])];
		if (nic < 0 || nic >= 64 || (nics >> nic & 1))
			goto out;       /* a GPU without a NIC of its own */
		nics |= 1ULL << nic;
	}
	for (int k = 1; k < nn; k++)
		for (int i = 0; i < g; i++)
			if (start[k + 1] - start[k] != g ||
			    topology_local_of(t, r[start[k] + i]) != topology_local_of(t, r[i]))
				goto out;
	rc = -1;
	double per = N / n;
	for (int k = 0; k < nn; k++)
		for (int i = 0; i < g; i++)
			for (int j = 0; j < g; j++)
				if (i != j && coll_add_flow(p, cap, r[start[k] + i], r[start[k] + j],
							    per * nn, 0))
					goto out;
	for (int i = 0; i < g; i++)
		for (int k = 0; k < nn; k++)
			for (int m = 0; m < nn; m++)
				if (k != m && coll_add_flow(p, cap, r[start[k] + i], r[start[m] + i],
							    per * g, 0))
					goto out;
	rc = 0;
out:
	free(r);
	free(start);
	return rc;
}

static int pairwise_alltoall(const int *ranks, int n, double N, struct coll_plan *p, int *cap)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			if (i != j && coll_add_flow(p, cap, ranks[i], ranks[j], N / n, 0))
				return -1;
	return 0;
}

int coll_pairwise_plan(const struct topology *t, enum coll_op op, const int *ranks,
		       int n, double N, struct coll_plan *p)
{
	int cap = 0;
	(void)t;
	if (op != COLL_ALLTOALL || pairwise_alltoall(ranks, n, N, p, &cap))
		return -1;
	p->channels = 1;
	p->steps = 1;
	return 0;
}

/* nccl-tests v2.19.6's p2p tests (commit a0b82b2): gather.cu and
 * scatter.cu send count = N/P to or from the root (ranks[0]);
 * hypercube.cu's loop `for (mask = 1; mask < nRanks; mask <<= 1)` sends
 * count x mask to rank ^ mask, log2 P steps (P a power of 2, else -1);
 * alltoallv.cu's default pattern sends the rank d places on N d /
 * (P(P-1)/2) (AlltoAllvGetPeerBytesDistanceWeighted, spread 1.0), nothing
 * to itself, the bytes rounded down to 16 as there. All flows start at
 * once (as the other plans), so hypercube's steps are its latency. */
static int p2p_plan(enum coll_op op, const int *ranks, int n, double N, struct coll_plan *p,
		    int *cap)
{
	double per = N / n;
	p->steps = 1;
	if (op == COLL_HYPERCUBE && (n & (n - 1)))
		return -1;
	for (int i = 0; i < n; i++) {
		if (op == COLL_GATHER && i && coll_add_flow(p, cap, ranks[i], ranks[0], per, 0))
			return -1;
		if (op == COLL_SCATTER && i && coll_add_flow(p, cap, ranks[0], ranks[i], per, 0))
			return -1;
		for (int mask = 1; op == COLL_HYPERCUBE && mask < n; mask <<= 1)
			if (coll_add_flow(p, cap, ranks[i], ranks[i ^ mask], per * mask, 0))
				return -1;
		for (int d = 1; op == COLL_ALLTOALLV && d < n; d++) {
			double b = floor(d * N / (n * (n - 1) / 2.0) / 16) * 16;
			if (b > 0 && coll_add_flow(p, cap, ranks[i], ranks[(i + d) % n], b, 0))
				return -1;
		}
	}
	for (int mask = 2; op == COLL_HYPERCUBE && mask < n; mask <<= 1)
		p->steps++;
	return 0;
}

int coll_direct_plan(const struct topology *t, enum coll_op op, const int *ranks,
		     int n, double N, struct coll_plan *p)
{
	int cap = 0;
	if (op >= COLL_GATHER) {
		if (p2p_plan(op, ranks, n, N, p, &cap))
			return -1;
	} else if (op == COLL_ALLTOALL) {
		int rc = rail_alltoall(t, ranks, n, N, p, &cap);
		if (rc < 0 || (rc > 0 && pairwise_alltoall(ranks, n, N, p, &cap)))
			return -1;
	} else if (op == COLL_SENDRECV) {
		for (int i = 0; i < n; i++)
			if (coll_add_flow(p, &cap, ranks[i], ranks[(i + 1) % n], N, 0))
				return -1;
	} else {
		return -1;
	}
	p->channels = 1;
	p->steps = 1;
	return 0;
}
