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
 *   direct        all-to-all: rail-aligned as NCCL's PXN (NVLink to the GPU
 *                 on the destination's rail, then one flow per node pair
 *                 and rail) where the group is whole nodes of NVSwitch
 *                 GPUs with a NIC each, else every rank sends N/P to every
 *                 other, P(P-1) flows; send/recv (coll_direct.c)
 *   pairwise      all-to-all as P(P-1) flows always (the reference)
 *   nvls          NVLink SHARP (NVSwitch-3, one node): every GPU sends its
 *                 buffer into the switch and receives the result (coll_nvls.c)
 *   auto          NCCL's tuning model picks algorithm and protocol (coll_tune.c)
 *
 * Each entry's build makes the plan: the algorithm forced, with NCCL's
 * fallbacks (coll_force.c), or, for "auto", NCCL's choice (coll_tune.c).
 *
 * NCCL's model (nccl_model.c, NCCL 2.27.3 tuning.cc). "ring", "tree" and
 * "nvls" are NCCL's algorithms: a plan's latency is NCCL's latency for
 * the (algorithm, protocol), and its flows carry bytes scaled up so that,
 * uncontended, the plan moves data at NCCL's predicted bandwidth when
 * that is below what the fabric allows (the fabric's own bound when it is
 * lower: an oversubscribed fat tree, a narrow PCIe path); contention
 * still comes from the links. "ring:LL", "ring:LL128", "ring:Simple"
 * (and "tree:...", "nvls:Simple") force the protocol; a bare "ring"
 * takes NCCL's choice of protocol for that algorithm (as NCCL_ALGO=Ring
 * alone does). "auto" takes the (algorithm, protocol) of least NCCL
 * predicted time, as NCCL does. "hierarchical" and "direct" are not
 * NCCL collectives: their plans are the fabric's closed forms above
 * (protocol "Simple", no NCCL prediction, nccl_time_s = 0).
 *
 * Byte counts: N is the full buffer of one rank (all-reduce: in = out = N;
 * reduce-scatter: in N, out N/P; all-gather: in N/P, out N; all-to-all: N
 * in, N out, N/P per peer; send/recv: N to the next rank of the group, in
 * the order given; gather: N/P from each rank to ranks[0], scatter: N/P
 * from ranks[0] to each; hypercube: N out as all-gather, step k (mask
 * 2^k) sends 2^k N/P to rank ^ 2^k; alltoallv: N in and out, N d /
 * (P(P-1)/2) to the rank d places on (distance-weighted, spread 1.0), as
 * nccl-tests v2.19.6 src/gather.cu, scatter.cu, hypercube.cu and
 * alltoallv.cu (AlltoAllvGetPeerBytesDistanceWeighted) move it; all four
 * are p2p sends in NCCL, planned by "direct" only). */
#ifndef DDLSIM_COLL_H
#define DDLSIM_COLL_H

#include <stdbool.h>

#include "topology.h"

enum coll_op {
	COLL_ALLREDUCE,
	COLL_REDUCE_SCATTER,
	COLL_ALLGATHER,
	COLL_BROADCAST,
	COLL_REDUCE,
	COLL_ALLTOALL,
	COLL_SENDRECV,
	COLL_GATHER,     /* nccl-tests' gather_perf: every rank's N/P to ranks[0] */
	COLL_SCATTER,    /* scatter_perf: N/P from ranks[0] to every rank */
	COLL_HYPERCUBE,  /* hypercube_perf: all-gather by recursive doubling, P = 2^k */
	COLL_ALLTOALLV,  /* alltoallv_perf's default distance-weighted pattern */
	COLL_NOPS
};

/* PROTO_AUTO: NCCL's choice of protocol for the algorithm. */
enum coll_proto { PROTO_AUTO = -1, PROTO_LL, PROTO_LL128, PROTO_SIMPLE, PROTO_N };

struct coll_flow {
	int src, dst;      /* global ranks */
	double bytes;      /* on the wire */
	double latency_s;  /* uncontended path latency */
};

struct coll_plan {
	enum coll_op op;
	const char *algo;         /* registry name of the algorithm used */
	const char *proto;        /* "LL", "LL128", "Simple" */
	double bytes;             /* N */
	int nranks;
	int channels;
	int sm_channels;          /* CTAs (one SM each) the collective's kernel runs: NCCL's
				     nChannels for the algorithm (nccl_model_channels(),
				     graph search), else channels */
	int steps;                /* latency steps of the algorithm */
	struct coll_flow *flows;  /* sorted by (src, dst), endpoints unique */
	int nflows;
	double alpha_s;           /* latency of one step (slowest flow's path) */
	double latency_s;         /* all latency terms: base + steps x alpha */
	double extra_latency_s;   /* waited after the flows: latency_s - alpha_s */
	double ideal_time_s;      /* closed form, uncontended: latency_s + max link load / bw */
	double nccl_time_s;       /* NCCL's predicted time (0: not an NCCL algorithm) */
	double wire_scale;        /* flow bytes / payload bytes (>= 1: NCCL's losses) */
	double bus_bytes;         /* bytes per rank in nccl-tests' busbw sense */
};

struct coll_algo {
	const char *name;
	const char *description;
	/* Add p's flows (any order, repeats allowed) and set p->steps,
	 * p->channels and, when steps differ in latency, p->latency_s. 0 or
	 * -1 (op not supported, or the group's shape). NULL for "auto",
	 * which has no flows of its own: its build picks another's. */
	int (*plan)(const struct topology *t, enum coll_op op, const int *ranks,
		    int n, double bytes, struct coll_plan *p);
	/* The plan of op over ranks with this entry a and protocol proto
	 * (PROTO_AUTO: NCCL's choice): coll_force_build() (the algorithm
	 * itself, with NCCL's fallbacks) or, for "auto",
	 * coll_tune_build() (NCCL's choice of algorithm). A new plan, or
	 * NULL when none can run op on this group. */
	struct coll_plan *(*build)(const struct topology *t, const struct coll_algo *a,
				   enum coll_proto proto, enum coll_op op, const int *ranks,
				   int n, double bytes);
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
/* The closed form of the plan coll_plan_create() would make, without
 * its flows where the group allows (coll_time.c): "auto" choosing NCCL's
 * ring or tree over a uniform group across nodes whose fabric stays
 * below NCCL's transfer. closed: true when no plan was built. */
struct coll_time {
	double ideal_time_s, nccl_time_s;   /* as struct coll_plan's */
	double fabric_s;    /* the closed form's most loaded link, bytes / bandwidth
			     * (also where the plan was built for reaching NCCL's
			     * transfer); 0: not computed */
	bool closed;
};
/* Fill *out for op over bytes on ranks[0..n) with algo, as
 * coll_plan_create() then reading the plan would (to rounding: 1e-12
 * relative). Returns 0, or -1 when no algorithm can run op on the group. */
int coll_time_uncontended(const struct topology *t, const char *algo, enum coll_op op,
			  const int *ranks, int n, double bytes, struct coll_time *out);

/* The same for a collective that runs alone on the fabric (the
 * collective sweep): where per-pair flows would end together, one flow
 * per flow class instead (coll_classes.c: the rail-aligned all-to-all on
 * fabrics where only NICs bind), with the same times, latency and closed
 * form. Not for plans that share links with other traffic: max-min
 * shares them by flow count. */
struct coll_plan *coll_plan_create_alone(const struct topology *t, const char *algo,
					 enum coll_op op, const int *ranks, int n,
					 double bytes);
/* A copy of p (a plan of coll_plan_create()) with one flow per flow
 * class, as coll_plan_create_alone() makes it (coll_classes.c), for an
 * engine that posts it only while the collective meets no other traffic
 * on its binding links; NULL when p stays per pair (*why, a static
 * string, says why; NULL when the copy is made). Out of memory exits
 * (util/xalloc.h). */
struct coll_plan *coll_plan_class_copy(const struct topology *t, const struct coll_plan *p,
				       const char **why);
void coll_plan_destroy(struct coll_plan *p);
/* -1 if every member of p sends the same bytes and receives the same
 * bytes (a ring, a double binary tree whose members are all inner in one
 * tree and leaves in the other); else the member moving the most bytes
 * out or in (the first such, by rank, sources before destinations): a
 * tree of unequal members, which loads their NICs unequally. */
int coll_plan_busiest(const struct coll_plan *p);

const char *coll_op_name(enum coll_op op);
/* Parse an op name ("allreduce", "reduce_scatter", ...; also
 * "reducescatter", "all_reduce" etc.). -1 if unknown. */
int coll_op_parse(const char *name);
/* nccl-tests' bus bandwidth factor: busbw = algbw x factor. */
double coll_bus_factor(enum coll_op op, int n);

/* Whether NCCL runs op as point-to-point sends (all-to-all, send/recv,
 * and nccl-tests' gather, scatter, hypercube, alltoallv): planned by
 * "direct" whatever algorithm is asked. */
bool coll_op_p2p(enum coll_op op);

#endif
