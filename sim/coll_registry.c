/* coll_registry: the collective algorithms by name (see coll.h): each
 * entry names its plan function (coll_ring.c, coll_tree.c, coll_nvls.c,
 * coll_hier.c, coll_direct.c); "auto" has none, coll_plan_create() asks
 * coll_tune.c for NCCL's choice. `ddlsim list` prints this table. */
#include <string.h>

#include "coll-private.h"

const struct coll_algo coll_algos[] = {
	{ "auto", "NCCL's tuning model picks algorithm and protocol (LL, LL128, Simple) by size and shape", NULL },
	{ "ring", "NCCL rings, one channel per NIC across nodes, NVLink rings on a mesh (ring:LL|LL128|Simple)", coll_ring_plan },
	{ "tree", "NCCL double binary tree over nodes, chains inside nodes, all-reduce (tree:LL|LL128|Simple)", coll_tree_plan },
	{ "nvls", "NCCL NVLink SHARP on one NVSwitch-3 node (Hopper and later): all-reduce, reduce-scatter, all-gather", coll_nvls_plan },
	{ "hierarchical", "intra-node reduce-scatter, per-rail inter-node all-reduce, intra-node all-gather", coll_hier_plan },
	{ "direct", "all-to-all as direct flows, rail-aligned (PXN) across NVSwitch nodes, else P(P-1); send/recv to the next rank", coll_direct_plan },
	{ "pairwise", "all-to-all as P(P-1) direct flows, every pair (the reference for direct's rail-aligned plan)", coll_pairwise_plan },
	{ NULL, NULL, NULL },
};

const struct coll_algo *coll_algo_by_name(const char *name)
{
	for (int i = 0; coll_algos[i].name; i++)
		if (strcmp(coll_algos[i].name, name) == 0)
			return &coll_algos[i];
	return NULL;
}
