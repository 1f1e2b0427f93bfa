/* nccl_model: NCCL's own cost model of a collective (NCCL 2.27.3,
 * src/graph/tuning.cc, search.cc, topo.h), for a group of GPUs of a
 * topology.
 *
 * NCCL predicts the time of every (algorithm, protocol) pair as
 * latency_us + bytes / (1000 x bw_GBps) and runs the pair of least
 * predicted time; this module computes the same latency and bandwidth
 * from the same tables, so that ddlsim chooses as NCCL does and replays
 * at the bandwidth NCCL achieves. nccl_model.c states every table, the
 * channel search it stands in for, and what is assumed where a topology
 * file does not say what NCCL would detect. */
#ifndef DDLSIM_NCCL_MODEL_H
#define DDLSIM_NCCL_MODEL_H

#include <stdbool.h>

#include "coll.h"

enum nccl_algo { NCCL_ALGO_TREE, NCCL_ALGO_RING, NCCL_ALGO_NVLS, NCCL_ALGO_N };

struct nccl_model;

/* The model of a group: ranks (global GPU indices, any order, n >= 1) of
 * t. Returns a new model (nccl_model_destroy()); out of memory exits
 * (util/xalloc.h), as every allocation here does since nccl_group_shape(). */
struct nccl_model *nccl_model_create(const struct topology *t, const int *ranks, int n);

/* What the model reads of a group: its ranks, nodes, the GPUs of its
 * most loaded node, the fewest NICs its GPUs use on a node, and the local
 * index of its first member (ranks[0], whose NVLinks it counts). */
struct nccl_shape {
	int nranks, nodes, ppn, nics, first_local;
};
/* The shape of ranks[0..n) (any order, n >= 0) into *sh: one pass, no
 * allocation when ranks are sorted. */
void nccl_group_shape(const struct topology *t, const int *ranks, int n, struct nccl_shape *sh);
/* The model of a group of shape sh: nccl_model_create() is this of
 * nccl_group_shape(). Returns a new model; out of memory exits. */
struct nccl_model *nccl_model_create_shape(const struct topology *t, const struct nccl_shape *sh);
/* destroy(NULL) is a no-op. */
void nccl_model_destroy(struct nccl_model *m);

/* "Tree", "Ring", "NVLS" (NCCL's spelling); "?" when out of range. */
const char *nccl_algo_name(enum nccl_algo a);
/* The ddlsim algorithm name of a: "tree", "ring", "nvls". */
const char *nccl_algo_plan_name(enum nccl_algo a);
/* The NCCL algorithm of a ddlsim algorithm name, or -1 (hierarchical,
 * direct, pairwise). */
int nccl_algo_of_plan(const char *name);
/* "LL", "LL128", "Simple"; "?" when out of range. */
const char *nccl_proto_name(enum coll_proto p);

/* GPU compute capability x 10 the model assumed (70, 80, 89, 90, 100),
 * from the topology's GPU name. */
int nccl_model_compcap(const struct nccl_model *m);
/* The channel graph NCCL's search would find for algorithm a: channel
 * count and per-channel bandwidth (GB/s; bwIntra, which equals bwInter in
 * this model). 0 channels: no graph (NVLS off NVSwitch-3, or across
 * nodes). */
int nccl_model_channels(const struct nccl_model *m, enum nccl_algo a);
double nccl_model_channel_bw_GBps(const struct nccl_model *m, enum nccl_algo a);

/* NCCL's latency (us) and bandwidth (GB/s, algorithm bandwidth: bytes /
 * time) of op run with (a, p) for a message of bytes, with the size
 * corrections of ncclTopoGetAlgoTime (tree correction factors, ring
 * plateau). Returns the predicted time in us, or -1 when NCCL would not
 * run op that way (algorithm or protocol disabled or not implemented,
 * all-to-all and send/recv, which NCCL does not tune). */
double nccl_model_predict(const struct nccl_model *m, enum coll_op op, enum nccl_algo a,
			  enum coll_proto p, double bytes, double *latency_us, double *bw_GBps);

/* NCCL's choice for op and bytes: the enabled pair of least predicted
 * time (ties: the first in NCCL's order, algorithms tree, ring, NVLS,
 * then protocols LL, LL128, Simple). algo_only >= 0 restricts the choice
 * to that algorithm (NCCL_ALGO set, protocol free). Returns the time in
 * us, or -1 when no pair runs op. */
double nccl_model_choose(const struct nccl_model *m, enum coll_op op, double bytes,
			 int algo_only, enum nccl_algo *a, enum coll_proto *p);
/* The pair nccl_model_choose() takes among those not yet tried
 * (tried[a][p] false), marked tried: NCCL's choice on the first call,
 * and on each further call the next by predicted time, for a caller
 * whose plan of the chosen pair cannot be built (coll_tune.c). Returns
 * false, *a and *p unchanged, when every pair that runs op was tried. */
bool nccl_model_next(const struct nccl_model *m, enum coll_op op, double bytes,
		     bool tried[NCCL_ALGO_N][PROTO_N], enum nccl_algo *a, enum coll_proto *p);

#endif
