/* placement: which GPU holds which (tensor, context, expert, data, pipeline) coordinate.
 *
 * A plan of tp x cp x dp x pp ranks is laid out on consecutive GPUs (global
 * GPU index = node * gpus_per_node + local). The order names the
 * dimensions from innermost to outermost. Megatron-Core's default order is
 * "tp-cp-ep-dp-pp" (megatron/core/parallel_state.py, initialize_model_parallel,
 * order="tp-cp-ep-dp-pp"); without expert parallelism that is "tp,cp,dp,pp":
 * a TP group on consecutive GPUs of one node, then the context-parallel
 * ring, then DP, then PP. An order of three names ("tp,dp,pp", the form
 * before context parallelism) places cp right after tp, as Megatron does.
 *
 * Groups: GROUP_TP varies tp; GROUP_CP varies cp (the ring of context
 * parallelism, in cp order); GROUP_DP varies dp and cp together, the group
 * Megatron-Core reduces gradients and shards the distributed optimizer
 * over (parallel_state's data-parallel group "with context parallelism").
 *
 * Expert parallelism (mixture of experts) lives inside the data-parallel
 * dimension, as in Megatron-Core (parallel_state.py builds the expert
 * groups from the same ranks as data parallelism: "tp-cp-ep-dp-pp"): the
 * dp ranks of a DP group are ep x (dp / ep), with a data-parallel index
 * d = e + ep x d'. "ep" may be named in the order; left out, it goes right
 * before dp. GROUP_EP varies e (the experts of a layer are sharded over
 * it and the token all-to-alls run on it); GROUP_EDP varies d' and cp
 * (the expert-data-parallel group that reduces an expert's gradients and
 * shards its optimizer state). Coordinates report the whole data-parallel
 * index d in c[DIM_DP] and e in c[DIM_EP].
 *
 * Hybrid sharding (shard > 0, dividing the dp x cp members of GROUP_DP):
 * GROUP_DPS is the shard group, `shard` consecutive members of the rank's
 * GROUP_DP in its (dp, cp) order, cp inner (Megatron-Core parallel_state's
 * intra-partial data-parallel group: consecutive slices of the dp-cp rank
 * list; torchtitan's mesh (dp_replicate, dp_shard, cp, tp): the shard group
 * dp_shard x cp inside one replica), and GROUP_DPR the replicate group, the
 * members at the same position of every shard group (a stride of `shard`
 * through that list). With the usual order a shard group of 8 on nodes of
 * 8 GPUs is one node. shard 0: GROUP_DPS is GROUP_DP and GROUP_DPR the
 * rank alone. */
#ifndef DDLSIM_PLACEMENT_H
#define DDLSIM_PLACEMENT_H

#include <stdbool.h>
#include <stddef.h>

#include "program.h"

enum dim { DIM_TP, DIM_CP, DIM_DP, DIM_PP, DIM_EP, DIM_N };

struct placement {
	int size[DIM_N];       /* tp, cp, dp / ep, pp, ep */
	int order[DIM_N];      /* innermost first */
	int nranks;
	int stride[DIM_N];     /* rank = sum coord[d] * stride[d] */
	int shard;             /* members of a shard group (GROUP_DPS); 0: all of GROUP_DP */
	bool edp_tp;           /* etp 1: folded expert groups (placement_set_etp) */
};

/* Set up with cp = 1; order as for placement_init_cp(). */
int placement_init(struct placement *pl, int tp, int dp, int pp, const char *order);

/* Set up; order is "tp,cp,dp,pp"-style, or three names without cp (cp
 * goes right after tp); NULL = "tp,cp,dp,pp". Returns 0 or -1 if order is
 * not such a permutation. */
int placement_init_cp(struct placement *pl, int tp, int cp, int dp, int pp, const char *order);

/* Set up with expert parallelism: ep must divide dp (plan_check() says
 * so); order may name ep ("tp,cp,ep,dp,pp"). Returns 0 or -1 (bad order,
 * ep not dividing dp). */
int placement_init_ep(struct placement *pl, int tp, int cp, int ep, int dp, int pp,
		      const char *order);

/* Hybrid sharding: shard groups of `shard` members of GROUP_DP (0: one
 * group, the whole of it). Returns 0, or -1 (shard not dividing the dp x cp
 * members, or expert parallelism: its groups are not split). */
int placement_set_shard(struct placement *pl, int shard);

/* Expert tensor parallelism etp (1 or the placement's tp). etp = tp: the
 * groups above. etp = 1, Megatron-Core's MoE parallel folding
 * (parallel_state.py initialize_model_parallel, core_v0.10.0 7ee599a
 * L642-668: a second RankGenerator over the same ranks, tp = etp, cp = 1,
 * ep, dp = the expert-data-parallel size, in the same order): the expert
 * groups are laid out afresh over the S = tp x cp x dp ranks of a stage,
 * by a rank's index q in its stage (its global rank less the stage's
 * offset: needs pp outermost in the order), GROUP_EP the ep consecutive q
 * of q's block (q - q mod ep ..), GROUP_EDP the S / ep ranks of the same
 * q mod ep (Megatron-Core's expert data-parallel group,
 * expert_data_parallel_size = world / (etp ep pp)); the dense groups do
 * not change. Returns 0, or -1 (etp neither 1 nor tp, or etp 1 with pp
 * not outermost). */
int placement_set_etp(struct placement *pl, int etp);

/* Global rank of a coordinate (cp = 0; dp is the whole data-parallel
 * index d = e + ep d'), and back. */
int placement_rank(const struct placement *pl, int tp, int dp, int pp);
void placement_coords(const struct placement *pl, int rank, int c[DIM_N]);

/* Members of rank's group g, into out (room for placement_group_size()):
 * TP and CP ordered by that coordinate, DP by (dp, cp) with cp inner;
 * GROUP_EMB the first and last stage, GROUP_MIRROR stages s and pp - 1 - s
 * (the lower first). Returns the count. */
int placement_group(const struct placement *pl, enum group_kind g, int rank, int *out);

/* Ranks in a group of kind g. */
int placement_group_size(const struct placement *pl, enum group_kind g);

/* Rank of the same (tp, cp, dp) at pipeline stage (stage mod pp). */
int placement_stage_peer(const struct placement *pl, int rank, int stage);

/* The order as text, "tp,cp,dp,pp" (with ep when ep > 1). */
const char *placement_order_text(const struct placement *pl, char *buf, size_t n);

#endif
