/* coll_force: an algorithm forced by name, as NCCL_ALGO forces one, with
 * NCCL's fallbacks: the build of every registry entry but "auto" (see
 * coll.h's struct coll_algo).
 *
 * All-to-all and send/recv are NCCL point-to-point operations, which
 * NCCL_ALGO does not govern: whatever algorithm is forced, they run as
 * direct flows (as "auto" plans them; "pairwise" keeps all-to-all). An
 * algorithm without the operation (tree: all-reduce only) or the group's
 * shape (NVLS across nodes) falls back to ring, as NCCL does, with
 * NCCL's choice of protocol if the forced one cannot run. The fallbacks
 * are named by name and plan function, not by registry entry: the
 * registry refers to this file, so this file does not refer to the
 * registry (no circle). */
#include "coll-private.h"

struct coll_plan *coll_force_build(const struct topology *t, const struct coll_algo *a,
				   enum coll_proto proto, enum coll_op op, const int *ranks,
				   int n, double bytes)
{
	if (coll_op_p2p(op) && a->plan != coll_direct_plan &&
	    !(op == COLL_ALLTOALL && a->plan == coll_pairwise_plan))
		return coll_plan_build(t, "direct", coll_direct_plan, PROTO_AUTO, op, ranks, n, bytes);
	struct coll_plan *p = coll_plan_build(t, a->name, a->plan, proto, op, ranks, n, bytes);
	if (!p && a->plan != coll_ring_plan && a->plan != coll_direct_plan &&
	    a->plan != coll_pairwise_plan) {
		p = coll_plan_build(t, "ring", coll_ring_plan, proto, op, ranks, n, bytes);
		if (!p)
			p = coll_plan_build(t, "ring", coll_ring_plan, PROTO_AUTO, op, ranks, n, bytes);
	}
	return p;
}
