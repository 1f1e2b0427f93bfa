/* coll_registry: the collective algorithms by name (see coll.h): each
 * entry names its plan function (coll_ring.c, coll_tree.c, coll_nvls.c,
 * coll_hier.c, coll_direct.c) and its build: the algorithm forced with
 * NCCL's fallbacks (coll_force.c), or, for "auto", which has no flows of
 * its own, NCCL's choice (coll_tune.c). `ddlsim list` prints this
 * table. */
#include <string.h>

#include "coll-private.h"

const struct coll_algo coll_algos[] = {
	{ "auto", "NCCL's tuning model picks algorithm and protocol (LL, LL128, Simple) by size and shape", NULL, coll_tune_build },
	{ "ring", "NCCL rings, one channel per NIC across nodes, NVLink rings on a mesh (ring:LL|LL128|Simple)", coll_ring_plan, coll_force_build },
	{ "tree", "NCCL double binary tree over nodes, chains inside nodes, all-reduce (tree:LL|LL128|Simple)", coll_tree_plan, coll_force_build },
	{ "nvls", "NCCL NVLink SHARP on one NVSwitch-3 node (Hopper and later): all-reduce, reduce-scatter, all-gather", coll_nvls_plan, coll_force_build },
	{ "hierarchical", "intra-node reduce-scatter, per-rail inter-node all-reduce, intra-node all-gather", coll_hier_plan, coll_force_build },
	{ "direct", "all-to-all as direct flows, rail-aligned (PXN) across NVSwitch nodes, else P(P-1); send/recv to the next rank", coll_direct_plan, coll_force_build },
	{ "pairwise", "all-to-all as P(P-1) direct flows, every pair (the reference for direct's rail-aligned plan)", coll_pairwise_plan, coll_force_build },
	{ NULL, NULL, NULL, NULL },
};

const struct coll_algo *coll_algo_by_name(const char *name)
{
	for (int i = 0; coll_algos[i].name; i++)
		if (strcmp(coll_algos[i].name, name) == 0)
			return &coll_algos[i];
	return NULL;
}
