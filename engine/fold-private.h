/* fold-private: what the folding planner's files share (sim/ only).
 *
 * The planner (fold.h) is split by the kind of folding each file serves:
 *   fold.c          the planner's phases (init, the ranks simulated, the
 *                   GPUs the platform holds, classes of alike ranks)
 *   fold_exact.c    exact folding: the binding links every flow could
 *                   join, the mirror flows that can meet simulated ones
 *   fold_own.c      groups whose representative's own flows stand for
 *                   the group's
 *   fold_cheap.c    cheap folding: plans that load their members
 *                   unequally, the representative replica, the GPUs
 *                   the simulated ranks' flows reach
 *   fold_partial.c  partial folding: replicas a degraded link touches
 *   fold_uplink.c   cheap folding on an oversubscribed fat tree: the
 *                   folded ranks' flows over its binding uplinks
 * and below them, called by them and calling none of them:
 *   fold_groups.c   a rank's groups, the flows it posts of them, the
 *                   other instances of a stage's group
 *   fold_crit.c     the flows around an unequal plan's busiest member
 *   fold_links.c    the binding links of a path as ids
 * The calls run one way: fold.c -> the kinds' files -> the bottom three.
 * No SimGrid in any of them. */
#ifndef DDLSIM_FOLD_PRIVATE_H
#define DDLSIM_FOLD_PRIVATE_H

#include <stdbool.h>

#include "fold.h"

/* Ids of the binding links of the path a -> b, into ids (room for
 * TOPO_MAX_HOPS), made if add (else unknown links are skipped); returns
 * the count (fold_links.c). */
int fold_link_ids(struct fold *F, int a, int b, int *ids, bool add);

/* Folded exactly: join the binding links of every flow the replicas
 * could send, rooted at the simulated ranks' own, and mark in used the
 * GPUs of every posted mirror flow. Returns 0 or -1 (a plan cannot be
 * made) (fold_exact.c). */
int fold_closure(struct fold *F, unsigned char *used);

/* Call fn(ctx, c) with the plan of every other instance of group kind
 * on stage's ranks than mem's (of n members; instances of one member
 * skipped), in rank order; c is valid until the next cplan_get. Returns
 * 0, or -1 when a plan cannot be made or fn returns < 0 (fold_groups.c). */
int fold_each_stage_group(struct fold *F, int stage, int kind, const int *mem, int n, int op,
			  double bytes, int (*fn)(void *ctx, struct cplan *c), void *ctx);

/* Which fat-tree uplinks can bind a rate (those narrower than what feeds
 * them: F->lu_binds, F->pod_binds) and whether cheap folding posts the
 * folded ranks' flows over them (F->uplink_copies) (fold_uplink.c). */
void fold_binding_uplinks(struct fold *F);
/* The rank r of stage st sends pipeline messages to (or takes them
 * from) on the dlt (+1 / -1) side: the adjacent stage's, the first
 * stage's past the last and the last's before the first where a message
 * wraps around (F->wraps, an interleaved pipeline: program_wraps); -1
 * none. */
int fold_pipe_peer(const struct fold *F, int r, int st, int dlt);

/* Mark in used the GPUs of the copies the simulated rank r (program
 * prog, groups grp / ngrp) posts over binding uplinks, if it posts them
 * (fold_posts_uplink_copies). Returns 0 or -1 (fold_uplink.c). */
int fold_mark_uplink_copies(struct fold *F, int r, const struct program *prog, const int *const *grp,
			    const int *ngrp, unsigned char *used);

/* Record c's pair-set hash, and note it on its instance (kind, leader)
 * (fold_own.c). */
void fold_pair_sig_note(struct fold *F, struct cplan *c, int kind, int leader);

/* Cheap folding: the data-parallel index of the replica to simulate, not
 * marked in drep, first when every plan is equal; -1 if no plan could be
 * made (fold_cheap.c). */
int fold_majority_replica(struct fold *F, const unsigned char *drep, int first);

/* Mark in used the GPUs the simulated ranks' collective flows go to when
 * folding is not exact. Returns 0 or -1 (fold_cheap.c). */
int fold_mark_flow_peers(struct fold *F, unsigned char *used);

/* Mark in drep[dp] the replicas with a rank whose traffic crosses a
 * degraded link. Returns 0 or -1 (fold_partial.c). */
int fold_mark_degraded_replicas(struct fold *F, unsigned char *drep);
/* Mark in drep[dp] the replicas with a rank on a partly filled leaf or pod
 * of the fat tree, or whose traffic crosses its switch or uplinks. Returns
 * 0, or -1 if a plan cannot be made. */
int fold_mark_partial_tree_replicas(struct fold *F, unsigned char *drep);

/* The member of plan c moving the most bytes when c loads its members
 * unequally, else -1 (cached in c) (fold_crit.c). */
int fold_plan_crit(struct cplan *c);

#endif
