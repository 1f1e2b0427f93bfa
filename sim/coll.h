/* coll: collective operations as flows on the platform.
 *
 * A collective over a group of ranks becomes a plan: a list of flows
 * (src, dst, bytes), each one transfer on the platform, plus the latency
 * the algorithm's steps add beyond one transfer. The engine starts every
 * flow of a plan at once after the group has met, waits for them, then
 * waits the extra latency. Starting everything at once models NCCL's
 * chunked pipelining: every link carries its whole share concurrently, and
 * the pipeline's fill is the latency term, steps x alpha. A step-by-step
 * ring would cost P x 2(P-1) transfers; here one flow per ring edge carries
 * that edge's whole volume, so a plan has O(P) flows (all-to-all: P(P-1)),
 * and, where nothing else shares the links, these closed forms hold
 * (alpha = the slowest edge's latency, beta its bandwidth, N bytes):
 *
 *   ring all-reduce:                 2(P-1) alpha + 2(P-1)/P N / beta
 *   ring reduce-scatter, all-gather:  (P-1) alpha +  (P-1)/P N / beta
 *   ring broadcast, reduce (chain):   (P-1) alpha +          N / beta
 *   tree all-reduce, 4 nodes x 1 GPU:  2 log2(4) alpha + 3/2 N / beta
 *   one transfer (send/recv):               alpha +          N / beta
 *
 * Shared links are shared by SimGrid (max-min fairness), which is where
 * contention inside a collective and between concurrent collectives comes
 * from. Flows with the same endpoints are merged.
 *
 * Algorithms (const vtable + registry, `ddlsim list`):
 *   ring          NCCL-style rings, one channel per NIC across nodes; on an
 *                 NVLink mesh, several rings covering the NVLinks (coll_ring.c)
 *   tree          NCCL's double binary tree over nodes, chains inside nodes;
 *                 all-reduce only, as in NCCL (coll_tree.c)
 *   hierarchical  intra-node reduce-scatter, per-rail inter-node all-reduce,
 *                 intra-node all-gather (and the halves of it for
 *                 reduce-scatter and all-gather) (coll_hier.c)
 *   direct        all-to-all: every rank sends N/P to every other, P(P-1)
 *                 flows (the one O(P^2) plan); send/recv (coll_direct.c)
 *   auto          NCCL's tuning model picks algorithm and protocol (coll_tune.c)
 *
 * Protocols. "ring" names the pure network model (no protocol overhead:
 * the closed forms above are exact). "ring:LL", "ring:LL128",
 * "ring:Simple" (and "tree:...") add NCCL's protocol model: wire bytes
 * divided by the protocol's efficiency, a per-collective base latency, and
 * a per-step latency of at least NCCL's hardware latency (coll_tune.c).
 * "auto" picks the (algorithm, protocol) pair of least modelled time.
 *
 * Byte counts: N is the full buffer of one rank (all-reduce: in = out = N;
 * reduce-scatter: in N, out N/P; all-gather: in N/P, out N; all-to-all: N
 * in, N out, N/P per peer; send/recv: N to the next rank of the group, in
 * the order given). */
#ifndef DDLSIM_COLL_H
#define DDLSIM_COLL_H

#include "topology.h"

enum coll_op {
	COLL_ALLREDUCE,
	COLL_REDUCE_SCATTER,
	COLL_ALLGATHER,
	COLL_BROADCAST,
	COLL_REDUCE,
	COLL_ALLTOALL,
	COLL_SENDRECV,
	COLL_NOPS
};

enum coll_proto { PROTO_NONE = -1, PROTO_LL, PROTO_LL128, PROTO_SIMPLE, PROTO_N };

struct coll_flow {
	int src, dst;      /* global ranks */
	double bytes;      /* on the wire */
	double latency_s;  /* uncontended path latency */
};

struct coll_plan {
	enum coll_op op;
	const char *algo;         /* registry name of the algorithm used */
	const char *proto;        /* "-" (pure network), "LL", "LL128", "Simple" */
	double bytes;             /* N */
	int nranks;
	int channels;
	int steps;                /* latency steps of the algorithm */
	struct coll_flow *flows;  /* sorted by (src, dst), endpoints unique */
	int nflows;
	double alpha_s;           /* latency of one step (slowest flow's path) */
	double latency_s;         /* all latency terms: base + steps x alpha */
	double extra_latency_s;   /* waited after the flows: latency_s - alpha_s */
	double ideal_time_s;      /* closed form, uncontended: latency_s + max link load / bw */
	double bus_bytes;         /* bytes per rank in nccl-tests' busbw sense */
};

struct coll_algo {
	const char *name;
	const char *description;
	/* Add p's flows (any order, repeats allowed) and set p->steps,
	 * p->channels and, when steps differ in latency, p->latency_s. 0 or
	 * -1 (op not supported, or the group's shape). NULL for "auto". */
	int (*plan)(const struct topology *t, enum coll_op op, const int *ranks,
		    int n, double bytes, struct coll_plan *p);
};

/* Registered algorithms, terminated by a NULL name. */
extern const struct coll_algo coll_algos[];

/* Find an algorithm by name, "name" or "name:PROTO" ("auto" is an entry);
 * NULL if unknown. */
const struct coll_algo *coll_algo_find(const char *name);

/* Plan op over ranks (global ranks, any order: the plans order them by
 * node, except send/recv, which follows the order given). algo as for
 * coll_algo_find(); a forced algorithm that does not implement op (tree:
 * all-reduce only) falls back to ring for it, as NCCL does. Returns a new
 * plan (coll_plan_destroy()) or NULL when no algorithm can run op on this
 * group. */
struct coll_plan *coll_plan_create(const struct topology *t, const char *algo,
				   enum coll_op op, const int *ranks, int n,
				   double bytes);
void coll_plan_destroy(struct coll_plan *p);

const char *coll_op_name(enum coll_op op);
/* Parse an op name ("allreduce", "reduce_scatter", ...; also
 * "reducescatter", "all_reduce" etc.). -1 if unknown. */
int coll_op_parse(const char *name);
/* nccl-tests' bus bandwidth factor: busbw = algbw x factor. */
double coll_bus_factor(enum coll_op op, int n);

#endif
