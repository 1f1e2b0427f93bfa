/* coll: collective operations as flows on the platform.
 *
 * A collective over a group of ranks becomes a plan: a list of flows
 * (src, dst, bytes), each one transfer on the platform, plus the latency
 * the algorithm's steps add beyond one transfer. The engine starts every
 * flow of a plan at once after the group has met, waits for them, then
 * waits the extra latency. A step-by-step ring would cost P x 2(P-1)
 * transfers; here one flow per ring edge carries that edge's whole volume,
 * so a plan has O(P) flows and, where nothing else shares the links, the
 * same time:
 *
 *   ring all-reduce of N bytes on P ranks: 2(P-1) alpha + 2(P-1)/P N / beta
 *   ring reduce-scatter, all-gather:         (P-1) alpha +  (P-1)/P N / beta
 *
 * where alpha is the slowest edge's latency and beta its bandwidth. Shared
 * links are shared by SimGrid (max-min fairness), which is where contention
 * between concurrent collectives comes from.
 *
 * Algorithms are interchangeable (const vtable + registry). Ranks across
 * several nodes use several channels (rings) as NCCL does, one per NIC,
 * each entering and leaving the node through a different GPU, so that all
 * NICs carry traffic; flows with the same endpoints are merged.
 *
 * Byte counts: N is the full buffer of one rank (all-reduce: in = out = N;
 * reduce-scatter: in N, out N/P; all-gather: in N/P, out N). */
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
	COLL_NOPS
};

struct coll_flow {
	int src, dst;      /* global ranks */
	double bytes;
	double latency_s;  /* uncontended path latency */
};

struct coll_plan {
	enum coll_op op;
	const char *algo;         /* registry name */
	double bytes;             /* N */
	int nranks;
	int channels;
	int steps;                /* latency steps of the algorithm */
	struct coll_flow *flows;
	int nflows;
	double alpha_s;           /* latency of one step (slowest edge) */
	double extra_latency_s;   /* waited after the flows: (steps - 1) alpha */
	double ideal_time_s;      /* closed form, uncontended */
	double bus_bytes;         /* bytes per rank in nccl-tests' busbw sense */
};

struct coll_algo {
	const char *name;
	const char *description;
	/* Fill p (flows allocated with malloc); 0 or -1. */
	int (*plan)(const struct topology *t, enum coll_op op, const int *ranks,
		    int n, double bytes, struct coll_plan *p);
};

/* Registered algorithms, terminated by a NULL name. */
extern const struct coll_algo coll_algos[];

/* Find an algorithm by name ("auto" picks one); NULL if unknown. */
const struct coll_algo *coll_algo_find(const char *name);

/* Plan op over ranks (global ranks, any order: the plan orders them by
 * node). Returns a new plan (coll_plan_destroy()) or NULL on bad input. */
struct coll_plan *coll_plan_create(const struct topology *t, const char *algo,
				   enum coll_op op, const int *ranks, int n,
				   double bytes);
void coll_plan_destroy(struct coll_plan *p);

const char *coll_op_name(enum coll_op op);

#endif
