/* coll_tune: NCCL's choice of algorithm and protocol ("auto").
 *
 * NCCL predicts every enabled (algorithm, protocol) pair's time from its
 * tuning tables and runs the least (ncclTopoGetAlgoTime and the choice in
 * enqueue.cc, NCCL 2.27.3); nccl_model.c holds the tables. "auto" asks
 * the model for that pair and builds its plan: ring, tree or NVLS for
 * all-reduce; ring or NVLS for reduce-scatter and all-gather; ring for
 * broadcast and reduce. Should the plan of the chosen pair not be
 * buildable on the group's shape (NVLS off a single NVSwitch node), the
 * next pair by predicted time is taken. All-to-all and send/recv are
 * point-to-point in NCCL, outside its tuning model: the direct plan.
 *
 * This is the build of the registry's "auto" entry. It names the plans
 * it builds by name and plan function (nccl_algo_plan_name() and
 * plan_of below), not by registry entry: the registry refers to this
 * file, so this file does not refer to the registry (no circle). */
#include "coll-private.h"
#include "nccl_model.h"

/* The plan function of each NCCL algorithm (its name:
 * nccl_algo_plan_name()). */
static const coll_plan_fn plan_of[NCCL_ALGO_N] = {
	[NCCL_ALGO_TREE] = coll_tree_plan,
	[NCCL_ALGO_RING] = coll_ring_plan,
	[NCCL_ALGO_NVLS] = coll_nvls_plan,
};

struct coll_plan *coll_tune_build(const struct topology *t, const struct coll_algo *entry,
				  enum coll_proto proto, enum coll_op op, const int *ranks,
				  int n, double bytes)
{
	if (coll_op_p2p(op))
		return coll_plan_build(t, "direct", coll_direct_plan, PROTO_AUTO, op, ranks, n, bytes);
	if (n <= 1)
		return coll_plan_build(t, "ring", coll_ring_plan, PROTO_AUTO, op, ranks, n, bytes);
	struct nccl_model *m = nccl_model_create(t, ranks, n);
	if (!m)
		return NULL;
	bool tried[NCCL_ALGO_N][PROTO_N] = { { false } };
	struct coll_plan *p = NULL;
	enum nccl_algo a;
	enum coll_proto pr;
	while (!p && nccl_model_next(m, op, bytes, tried, &a, &pr))
		p = coll_plan_build(t, nccl_algo_plan_name(a), plan_of[a], pr, op, ranks, n, bytes);
	nccl_model_destroy(m);
	return p;
}
