/* placement: which GPU holds which (tensor, data, pipeline) coordinate.
 *
 * A plan of tp x dp x pp ranks is laid out on consecutive GPUs (global GPU
 * index = node * gpus_per_node + local). The order names the dimensions
 * from innermost to outermost: the default "tp,dp,pp" (Megatron-LM's)
 * keeps a TP group on consecutive GPUs of one node, then DP, then PP. */
#ifndef DDLSIM_PLACEMENT_H
#define DDLSIM_PLACEMENT_H

#include "program.h"

enum dim { DIM_TP, DIM_DP, DIM_PP, DIM_N };

struct placement {
	int size[DIM_N];       /* tp, dp, pp */
	int order[DIM_N];      /* innermost first */
	int nranks;
	int stride[DIM_N];     /* rank = sum coord[d] * stride[d] */
};

/* Set up; order is "tp,dp,pp"-style (NULL = default). Returns 0 or -1 if
 * order is not a permutation of tp, dp, pp. */
int placement_init(struct placement *pl, int tp, int dp, int pp, const char *order);

/* Global rank of a coordinate, and back. */
int placement_rank(const struct placement *pl, int tp, int dp, int pp);
void placement_coords(const struct placement *pl, int rank, int c[DIM_N]);

/* Members of rank's group g, into out: TP or DP ordered by that
 * coordinate (room for size[dim]); GROUP_EMB the first and last stage
 * (room for 2). Returns the count. */
int placement_group(const struct placement *pl, enum group_kind g, int rank, int *out);

/* Rank of the same (tp, dp) at pipeline stage (stage mod pp). */
int placement_stage_peer(const struct placement *pl, int rank, int stage);

/* The order as text, "tp,dp,pp". */
const char *placement_order_text(const struct placement *pl, char *buf, size_t n);

#endif
