/* coll_nvls: NVLink SHARP (NVLS) collectives on one NVSwitch-3 node.
 *
 * With NVLS the NVSwitch reduces and multicasts: for all-reduce every
 * GPU pushes its whole buffer N into the switch (multimem reductions
 * read each GPU's memory once) and receives the reduced N back (multimem
 * stores), so each GPU link carries N each way instead of a ring's
 * 2(P-1)/P N. Reduce-scatter and all-gather move (P-1)/P N each way, as
 * a ring does. The flows are laid out as a ring over the node's GPUs
 * (each GPU's uplink and downlink each carry one flow), which on a
 * switch loads exactly the GPU links NVLS loads. NCCL's own latency (25
 * us) and bandwidth for NVLS come from nccl_model.c; NVLS needs Hopper or
 * later and NVSwitch (NCCL's search finds no NVLS graph otherwise) and,
 * across nodes, CollNet, which ddlsim does not model: the planner refuses
 * groups spanning nodes or other node kinds. */
#include <stdlib.h>

#include "coll-private.h"

int coll_nvls_plan(const struct topology *t, enum coll_op op, const int *ranks,
		   int n, double N, struct coll_plan *p)
{
	double per_edge;
	int cap = 0, rc = -1;

	if (t->intra != INTRA_NVSWITCH)
		return -1;
	if (op == COLL_ALLREDUCE)
		per_edge = N;
	else if (op == COLL_REDUCE_SCATTER || op == COLL_ALLGATHER)
		per_edge = (double)(n - 1) / n * N;
	else
		return -1;
	int *r = coll_sorted_ranks(ranks, n);
	if (!r)
		return -1;
	if (topology_node_of(t, r[0]) != topology_node_of(t, r[n - 1]))
		goto out;
	for (int i = 0; i < n; i++)
		if (coll_add_flow(p, &cap, r[i], r[(i + 1) % n], per_edge, 0))
			goto out;
	p->channels = 1;
	p->steps = 1;
	rc = 0;
out:
	free(r);
	return rc;
}
