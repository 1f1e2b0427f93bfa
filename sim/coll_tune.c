/* coll_tune: NCCL's tuning model: protocol costs and the "auto" choice.
 *
 * Constants are those of NVIDIA NCCL's src/graph/tuning.cc
 * (ncclTunerConstantsDefaults and ncclTopoTuneModel, NCCL 2.2x, read at
 * github.com/NVIDIA/nccl); they are cited, not the code:
 *
 *   base latency per collective (us)     LL     LL128  Simple
 *     tree                               6.8    14.0   8.4
 *     ring                               6.6    14.0   8.4
 *   hardware latency per step (us)
 *     NVLink  tree                       0.6    1.25   4.0
 *             ring                       0.6    1.9    3.4
 *     PCIe    tree                       1.0    1.9    4.0
 *             ring                       1.0    2.5    5.7
 *     network tree                       5.0    8.5    14.0
 *             ring                       2.7    4.0    14.0
 *   bandwidth efficiency
 *     ring LL x 0.5 (8-byte lines carry 4 bytes of data and a flag),
 *     ring LL128 x 0.92 ("120.0/128.0"), tree all-reduce x 0.92,
 *     tree LL x 0.92 / 3.8, tree LL128 x 0.92 x 7/9 on one node and
 *     x 0.92 x 120/128 across nodes.
 *
 * How they enter a plan (coll.c): flow bytes are divided by the
 * efficiency (the wire carries the protocol's overhead), the base latency
 * is added once, and every step costs at least the hardware latency of
 * the group's link class (NVLink or PCIe on one node, network across
 * nodes), the topology's own path latency when that is larger. NCCL's
 * per-channel bandwidth caps (llMaxBws, perChMax*Bws) depend on the GPU
 * generation and are left out: the topology's links bound bandwidth.
 *
 * "auto" plans every candidate NCCL would consider for the op (all-reduce:
 * ring and tree x LL, LL128, Simple; reduce-scatter, all-gather,
 * broadcast, reduce: ring x 3; all-to-all and send/recv: direct) and keeps
 * the one with the least closed-form time, so the choice follows message
 * size (LL wins small messages, Simple large ones), group shape (tree's
 * log2 latency across many nodes) and topology (link bandwidths and
 * contention within the plan). */
#include <math.h>
#include <string.h>

#include "coll-private.h"

enum { HW_NVLINK, HW_PCI, HW_NET };

static const double base_us[2][PROTO_N] = {
	{ 6.8, 14.0, 8.4 },   /* tree */
	{ 6.6, 14.0, 8.4 },   /* ring */
};

static const double hw_us[3][2][PROTO_N] = {
	{ { 0.6, 1.25, 4.0 }, { 0.6, 1.9, 3.4 } },   /* NVLink: tree, ring */
	{ { 1.0, 1.9, 4.0 }, { 1.0, 2.5, 5.7 } },    /* PCIe */
	{ { 5.0, 8.5, 14.0 }, { 2.7, 4.0, 14.0 } },  /* network */
};

void coll_tune_proto(const struct topology *t, const char *algo, enum coll_proto proto,
		     int nnodes, double *eff, double *base_s, double *step_floor_s)
{
	*eff = 1;
	*base_s = 0;
	*step_floor_s = 0;
	if (proto == PROTO_NONE)
		return;
	bool tree = !strcmp(algo, "tree");
	int a = tree ? 0 : 1;
	int hw = nnodes > 1 ? HW_NET : t->intra == INTRA_PCIE ? HW_PCI : HW_NVLINK;
	*base_s = base_us[a][proto] * 1e-6;
	*step_floor_s = hw_us[hw][a][proto] * 1e-6;
	if (tree) {
		*eff = 0.92;
		if (proto == PROTO_LL)
			*eff *= 1 / 3.8;
		else if (proto == PROTO_LL128)
			*eff *= nnodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0;
	} else if (proto == PROTO_LL) {
		*eff = 0.5;
	} else if (proto == PROTO_LL128) {
		*eff = 0.92;
	}
}

struct coll_plan *coll_tune_select(const struct topology *t, enum coll_op op,
				   const int *ranks, int n, double bytes)
{
	static const char *const ar[] = { "ring", "tree", NULL };
	static const char *const ring[] = { "ring", NULL };
	const char *const *algos = op == COLL_ALLREDUCE ? ar : ring;
	struct coll_plan *best = NULL;

	if (op == COLL_ALLTOALL || op == COLL_SENDRECV)
		return coll_plan_build(t, coll_algo_find("direct"), PROTO_NONE, op, ranks, n, bytes);
	for (int i = 0; algos[i]; i++)
		for (int pr = 0; pr < PROTO_N; pr++) {
			struct coll_plan *p = coll_plan_build(t, coll_algo_find(algos[i]), pr, op,
							      ranks, n, bytes);
			if (!p)
				continue;
			if (!best || p->ideal_time_s < best->ideal_time_s) {
				coll_plan_destroy(best);
				best = p;
			} else {
				coll_plan_destroy(p);
			}
		}
	return best;
}
