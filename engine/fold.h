/* fold: the folding planner, which ranks of a job the engine simulates
 * and which flows they post for the ranks it leaves out.
 *
 * Data-parallel replicas of a symmetric job run the same program at the
 * same times, so the engine simulates one, the representative replica
 * (its rank tp 0, cp 0 of every stage), and copies its figures to the
 * others (engine.h, engine_job.fold). The planner decides, before any
 * SimGrid object exists:
 *   - which replica represents the others: the first one not made
 *     distinct, or with unequal collective plans (trees) the first of the
 *     most common class of members (fold_majority_replica);
 *   - which replicas are simulated whole (partial folding): those holding
 *     a distinct rank (a straggler, a throttled GPU) and, cheap folding,
 *     those whose own traffic crosses a degraded link;
 *   - which GPUs the platform must hold: the simulated ranks, their
 *     groups' members or (cheap folding) their flows' destinations, their
 *     pipeline peers, and (exact folding) the GPUs of every mirror flow
 *     that can meet simulated traffic (fold_closure);
 *   - while the engine runs, which flows a simulated rank posts for its
 *     folded peers (fold_mirrors, fold_own_only, fold_each_crit_flow).
 * Nothing here includes SimGrid: tests/test-foldplan.c runs the planner
 * on hand-built jobs without the engine. */
#ifndef DDLSIM_FOLD_H
#define DDLSIM_FOLD_H

#include <stdbool.h>

#include "cplan.h"
#include "diag.h"
#include "engine.h"

/* The planner's state for one job; fold_init() / fold_finish(). */
struct fold {
	const struct engine_job *job;   /* borrowed */
	bool *active;           /* [nranks] simulated ranks (fold_pick_ranks) */
	int rep_dp;             /* folded: the data-parallel index of the representative replica */
	int *rep_of;            /* folded by replica classes (job.replica_class): [ndp]
				 * the replica standing for each one; NULL: rep_dp */
	struct cplan_cache cache;
	int **gmem[GROUP_N];    /* [kind][leader rank] members of that group, shared */
	int *stamp;             /* [nranks] scratch marks for listing mirrors */
	int stampv;
	int nlinks;             /* ids of the links that can bind a flow (fold_link_ids) */
	unsigned long long *lkey; /* [lcap] link key + 1 (0: free) to its id */
	int *lid;
	size_t lcap;
	int *uf;                /* [lcap] union-find over links joined by a flow */
	bool *rooted;           /* [lcap] by root: joined to simulated traffic */
	bool lu_binds, pod_binds; /* fat-tree leaf / pod uplinks can limit a rate */
	bool uplink_copies;     /* cheap folding where they do: the folded ranks'
				 * flows over them posted (fold_uplink.c) */
	unsigned char *uheld;   /* there: [leaves + pods] holding a simulated rank */
	int nleaves;
	int *lown;              /* [lcap] by link id: the one group instance whose
				 * flows cross it (kind * nranks + leader + 1), 0
				 * none yet, -1 several or a pipeline message */
	long long *lpair;       /* [lcap] by link id: src * nranks + dst + 1 of
				 * the one pair crossing it, 0 none, -1 several */
	unsigned long long *isig[GROUP_N]; /* [kind][leader] pair-set hash of
				 * every plan of that instance, 1 if they differ */
	bool serial[GROUP_N];   /* every collective of the kind runs on one
				 * stream: two of one group never overlap */
	bool wraps;             /* a stage's pipeline message goes past the last
				 * stage to the first or back (an interleaved
				 * pipeline, program_wraps; set by fold_init) */
	long long *lmark;       /* [lcap] scratch for fold_own_only */
	long long lmarkv;
};

/* Set up F for job (borrowed, must outlive F): every rank inactive. */
void fold_init(struct fold *F, const struct engine_job *job);
/* Free what F holds, the cached plans included. */
void fold_finish(struct fold *F);

/* Choose the representative replica (F->rep_dp) and the simulated ranks
 * (F->active): every rank unfolded; folded, the representative's ranks
 * tp 0, cp 0 and every rank of a replica simulated whole. Returns 0, or
 * -1 after reporting which collective plan could not be made. */
int fold_pick_ranks(struct fold *F, struct diag *d);

/* Mark in used[nodes x gpus_per_node] the GPUs the platform must hold
 * (see above). Returns 0, or -1 if a collective plan cannot be made
 * (not reported: the caller names the algorithm). */
int fold_mark_used(struct fold *F, unsigned char *used);

/* The rank whose figures rank r takes: r if simulated, else the
 * representative's rank of r's stage. */
int fold_representative(const struct fold *F, int r);

/* The class of every rank into cls[0..nranks): the simulated rank that
 * stands for it where a summary shows one rank of each kind (the trace
 * by default). Alike: the simulated ranks of one stage running one
 * program (a node group's GPU) in the replicas like the others; in a
 * replica unlike the others (folded: simulated whole; unfolded: holding
 * a distinct rank, job.distinct: a straggler, a throttled GPU, a GPU
 * behind a degraded link) those of its own stage and program; a distinct
 * rank alone. The class's rank is its first. A folded rank is of its
 * representative's class. Every class's rank is simulated. */
void fold_classes(const struct fold *F, int *cls);

/* rank's groups: grp[kind] its members (shared, owned by F), ngrp[kind]
 * their count. */
void fold_groups(struct fold *F, int rank, const int *grp[GROUP_N], int ngrp[GROUP_N]);

/* Exact folding: the plans of the group kind of mem (the group of a
 * simulated rank of stage) and of every mirror group of the same stage
 * whose flows are posted, the group's own first. Returns the entry (its
 * mir/nmir set) or NULL if a plan cannot be made. */
struct cplan *fold_mirrors(struct fold *F, int stage, int kind, const int *mem, int n, int op,
			   double bytes);

/* Exact folding: whether the representative's own flows of c (the plan
 * of a simulated group of kind and n members) stand for its group's. */
bool fold_own_only(struct fold *F, struct cplan *c, int kind, int n);

/* Folded: whether rank is the simulated member of the group mem that
 * posts the flows of the group and of its mirrors (the first simulated
 * member). */
bool fold_posts_group(const struct fold *F, const int *mem, int n, int rank);

/* Cheap folding: whether rank, simulating a member of the group mem of
 * plan c, posts the flows around c's busiest member
 * (fold_each_crit_flow). */
bool fold_posts_crit(const struct fold *F, struct cplan *c, const int *mem, int n, int rank);

/* Call fn(ctx, flow) for the flows of an unequal plan c that a folded
 * member sends to or from its busiest member or one of that member's
 * peers: posted host to host, they give the link loads that pace it. */
void fold_each_crit_flow(const struct fold *F, struct cplan *c,
			 void (*fn)(void *ctx, const struct coll_flow *f), void *ctx);

/* Call fn(ctx, task, dst) for every flow rank r posts in the collectives
 * of prog (its groups grp / ngrp) when folding is not exact: its own
 * flows of each plan. Returns -1 if a plan cannot be made, else 0. */
int fold_each_own_flow(struct fold *F, int r, const struct program *prog,
		       const int *const *grp, const int *ngrp,
		       void (*fn)(void *ctx, const struct task *t, int dst), void *ctx);

/* Cheap folding on a fat tree whose leaf or pod uplinks can limit a rate
 * (fold_uplink.c): whether rank (simulated) is the representative's rank
 * of its stage, which posts the folded ranks' flows over those uplinks. */
bool fold_posts_uplink_copies(const struct fold *F, int rank);

/* Cheap folding there: the flows whose source is folded of the
 * collective (kind, op, bytes) of every group instance of stage that
 * cross a binding uplink of a leaf or pod holding a simulated rank, or
 * go to or from an end of one, those fold_each_crit_flow posts left out,
 * listed once in the entry of mem's plan (its uflows / nuflows). Returns
 * the entry, or NULL if a plan cannot be made. */
struct cplan *fold_uplink_flows(struct fold *F, int stage, int kind, const int *mem, int n, int op,
				double bytes);

/* Cheap folding there: the (src, dst) pairs of the pipeline messages in
 * direction dir that the folded ranks of stage send over a binding uplink
 * of a leaf or pod holding a simulated rank with rank's (where fold_posts_uplink_copies(rank)), into *pairs (2 ints
 * a pair, caller frees; NULL if none). Returns the count of pairs. */
int fold_uplink_p2p(struct fold *F, int rank, int stage, int dir, int **pairs);

/* Exact folding: the (src, dst) pairs of the pipeline messages in
 * direction dir that the other replicas of rank (of stage) send with it,
 * where they can meet simulated traffic, into *pairs (2 ints a pair,
 * caller frees; NULL if none): to the adjacent stage, or past the last
 * stage to the first (or back) where a message wraps around (F->wraps).
 * Returns the count of pairs. */
int fold_mirror_p2p(struct fold *F, int rank, int stage, int dir, int **pairs);

#endif
