/* coll-private: helpers shared by the collective algorithms (sim/ only). */
#ifndef DDLSIM_COLL_PRIVATE_H
#define DDLSIM_COLL_PRIVATE_H

#include "coll.h"

/* A sorted copy of ranks (malloc'd), or NULL. */
int *coll_sorted_ranks(const int *ranks, int n);
/* Append a flow; *cap is the flows array capacity. Returns 0 or -1. */
int coll_add_flow(struct coll_plan *p, int *cap, int src, int dst, double bytes,
		  double latency_s);

int coll_ring_plan(const struct topology *t, enum coll_op op, const int *ranks,
		   int n, double bytes, struct coll_plan *p);

#endif
