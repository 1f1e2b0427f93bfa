/* coll_direct: all-to-all and send/recv as direct flows.
 *
 * All-to-all: every rank sends N/P to every other rank at once, P(P-1)
 * flows: the one plan that is O(P^2), since every pair does exchange
 * data (NCCL posts the P-1 sends and receives of each rank together). A
 * 1024-rank all-to-all is a million flows; keep all-to-all groups to the
 * size of an expert-parallel group. Send/recv: each rank sends N to the
 * next rank of the group in the order given (nccl-tests' sendrecv ring
 * shift; with two ranks, an exchange). One step each. */
#include "coll-private.h"

int coll_direct_plan(const struct topology *t, enum coll_op op, const int *ranks,
		     int n, double N, struct coll_plan *p)
{
	int cap = 0;
	(void)t;
	if (op == COLL_ALLTOALL) {
		for (int i = 0; i < n; i++)
			for (int j = 0; j < n; j++)
				if (i != j && coll_add_flow(p, &cap, ranks[i], ranks[j], N / n, 0))
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
