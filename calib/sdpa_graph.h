/* sdpa_graph.h - cuDNN's fused attention (SDPA) operation graphs and their execution plans.
 *
 * sdpa_graph.c builds the forward and the backward graph of causal
 * scaled-dot-product attention with the cuDNN backend API and picks an
 * execution plan for each; bench_sdpa.c binds the buffers (variant packs),
 * runs, checks and times them.  cuDNN builds only (HAVE_CUDNN).  Nothing
 * here prints: a failure is kept in the graph (st, what) for the caller's
 * message. */
#ifndef DDLSIM_CALIB_SDPA_GRAPH_H
#define DDLSIM_CALIB_SDPA_GRAPH_H

#include <stdbool.h>
#include <stdint.h>

#include "calib.h"


/* Unique ids of the non-virtual tensors (the variant packs' keys); the
 * virtual tensors take ids from UID_VIRTUAL up. */
enum {
	UID_Q = 1, UID_K, UID_V, UID_O, UID_DO, UID_DQ, UID_DK, UID_DV,
	UID_STATS, UID_SUM, UID_ACC, UID_SCALE, UID_NEG_INF, UID_ONE,
	UID_VIRTUAL = 100,
};

#define SDPA_GRAPH_MAX_OPS 48

typedef cudnnBackendDescriptor_t desc_t;

/* One graph under construction: every descriptor it made (destroyed by
 * sdpa_graph_finish), its operations in order, and the first failure.
 * Once a call fails the later ones do nothing, so a builder reads as a
 * straight list and the failure is looked at once, at the end. */
struct sdpa_graph {
	const char *name;		/* "fwd" or "bwd" */
	bool bwd;			/* the backward graph, else the forward */
	desc_t *all;
	int nall, cap;
	desc_t ops[SDPA_GRAPH_MAX_OPS];
	int nops;
	int64_t next_uid;
	cudnnStatus_t st;		/* first failure, CUDNN_STATUS_SUCCESS if none */
	char what[96];			/* the call that failed */
	desc_t plan;			/* the execution plan, once built */
	int64_t ws_bytes;		/* its workspace */
	long long engine;		/* global index of its engine, -1 unknown */
	int cfg, ncfg;			/* configuration used, of those heuristics gave */
};

/* Clears g for the forward (bwd false) or the backward graph: no
 * descriptor, no failure. */
void sdpa_graph_init(struct sdpa_graph *g, bool bwd);
/* Builds g's graph for shape a, asks heuristics mode A for engine
 * configurations and keeps the first that finalizes an execution plan on
 * c's cuDNN handle: g->plan, g->ws_bytes, g->engine, g->cfg, g->ncfg.  On
 * failure sdpa_graph_ok() is false and g->st, g->what say which call
 * failed and how. */
void sdpa_graph_build(struct sdpa_graph *g, struct calib *c, const struct attn_shape *a);
/* Whether no call on g has failed. */
bool sdpa_graph_ok(const struct sdpa_graph *g);
/* A variant pack of g's plan: the n tensors uids[i] at ptrs[i], the
 * workspace *ws.  Owned by g (freed by sdpa_graph_finish); NULL after a
 * failure (sdpa_graph_ok() false). */
desc_t sdpa_graph_pack(struct sdpa_graph *g, int n, const int64_t *uids, void *const *ptrs,
		       void *const *ws);
/* Destroys every descriptor g made (plans and packs included); g can be
 * built again after sdpa_graph_init(). */
void sdpa_graph_finish(struct sdpa_graph *g);

#endif
