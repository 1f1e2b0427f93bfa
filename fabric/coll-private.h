/* coll-private: helpers shared by the collective algorithms (fabric/ only). */
#ifndef DDLSIM_COLL_PRIVATE_H
#define DDLSIM_COLL_PRIVATE_H

#include "coll.h"

/* An algorithm's plan function: struct coll_algo's plan (coll.h). */
typedef int (*coll_plan_fn)(const struct topology *t, enum coll_op op, const int *ranks, int n,
			    double bytes, struct coll_plan *p);

/* A sorted copy of ranks (malloc'd), or NULL. */
int *coll_sorted_ranks(const int *ranks, int n);
/* Append a flow; *cap is the flows array capacity. Returns 0 or -1. */
int coll_add_flow(struct coll_plan *p, int *cap, int src, int dst, double bytes,
		  double latency_s);
/* Split sorted ranks into runs by node: start[k] is the first index of
 * node run k, start[nn] = n (start has room for n + 1). Returns nn. */
int coll_node_runs(const struct topology *t, const int *sorted, int n, int *start);
/* The channels a ring or tree over those node runs takes: one per NIC
 * the ranks use in every node, at least one; one in a single node or
 * where a node has one NIC. */
int coll_node_channels(const struct topology *t, const int *sorted, const int *start, int nn);
/* Put one node's ranks r[0..len) in ring order: on an NVLink mesh, a
 * Hamiltonian cycle of direct NVLinks with the widest bottleneck (when
 * one exists and len <= 12); otherwise unchanged. */
void coll_node_order(const struct topology *t, int *r, int len);
/* Up to maxc rings covering one node's NVLink mesh greedily: each is the
 * widest remaining Hamiltonian cycle of r[0..len), its bottleneck taken
 * off the links it uses. Orders go to rings[c * len + i], bottlenecks to
 * w[c]. Returns the number of rings (0: not a mesh, or no cycle). */
int coll_mesh_rings(const struct topology *t, const int *r, int len, int maxc,
		    int *rings, double *w);

/* The builds of the registry's entries (struct coll_algo's build):
 * "auto", NCCL's choice of (algorithm, protocol) (coll_tune.c; a and
 * proto unused: "auto" takes no protocol), and every other entry, the
 * algorithm a forced, with NCCL's fallbacks (coll_force.c). A new plan
 * or NULL. */
struct coll_plan *coll_tune_build(const struct topology *t, const struct coll_algo *a,
				  enum coll_proto proto, enum coll_op op, const int *ranks,
				  int n, double bytes);
struct coll_plan *coll_force_build(const struct topology *t, const struct coll_algo *a,
				   enum coll_proto proto, enum coll_op op, const int *ranks,
				   int n, double bytes);
/* The registry entry of exactly this name (no ":PROTO"), or NULL
 * (coll_registry.c). */
const struct coll_algo *coll_algo_by_name(const char *name);
/* Build a plan with the algorithm of this registry name and plan
 * function and protocol proto; NULL if it cannot (coll_build.c). The
 * builds name an algorithm by its name and plan function, not its
 * registry entry, so that they sit below the registry (no circle). */
struct coll_plan *coll_plan_build(const struct topology *t, const char *name, coll_plan_fn plan,
				  enum coll_proto proto, enum coll_op op, const int *ranks,
				  int n, double bytes);

/* Make p, planned to run alone, one flow per flow class where that ends
 * at the same time as its per-pair flows (coll_classes.c); p unchanged
 * otherwise. Out of memory exits (util/xalloc.h). */
void coll_plan_classes(const struct topology *t, struct coll_plan *p);

int coll_ring_plan(const struct topology *t, enum coll_op op, const int *ranks,
		   int n, double bytes, struct coll_plan *p);
int coll_tree_plan(const struct topology *t, enum coll_op op, const int *ranks,
		   int n, double bytes, struct coll_plan *p);
int coll_hier_plan(const struct topology *t, enum coll_op op, const int *ranks,
		   int n, double bytes, struct coll_plan *p);
int coll_nvls_plan(const struct topology *t, enum coll_op op, const int *ranks,
		   int n, double bytes, struct coll_plan *p);
int coll_direct_plan(const struct topology *t, enum coll_op op, const int *ranks,
		     int n, double bytes, struct coll_plan *p);
int coll_pairwise_plan(const struct topology *t, enum coll_op op, const int *ranks,
		       int n, double bytes, struct coll_plan *p);

#endif
