/* cplan: the engine's cache of collective plans, one per (group leader,
 * group kind, operation, bytes).
 *
 * Every member of a group shares one plan and finds its own flows in it
 * by binary search (cplan_lower: flows are in source order, by_dst
 * indexes them by destination). The entry also carries what the folding
 * planner (fold.h) learns about the plan: its mirror plans, whether it is
 * posted, whether the representative's own flows stand for the group's,
 * its busiest member. No SimGrid here: the planner and its tests use it
 * without the engine. */
#ifndef DDLSIM_CPLAN_H
#define DDLSIM_CPLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "coll.h"
#include "program.h"

struct cplan {
	int leader, kind, op;
	double bytes;
	struct coll_plan *p;
	int *by_dst;            /* flow indices sorted by dst */
	struct coll_plan **mir; /* folded: this group's plan, then those of its
				 * mirror groups whose flows are posted */
	int nmir;               /* -1: not yet listed */
	signed char posted;     /* folded mirror: -1 unknown, 0 left out, 1 posted */
	bool closed;            /* its flows are in the closure (fold_closure) */
	signed char own;        /* folded: -1 unknown, 1 the representative's own
				 * flows stand for the group's (fold_own_only) */
	unsigned long long psig;/* hash of its set of (src, dst) pairs */
	int *cflows, ncflows;   /* cheap folding: the flows fold_each_crit_flow posts */
	struct coll_flow *uflows; /* cheap folding, binding uplinks: the folded
				 * ranks' flows over them (fold_uplink_flows) */
	int nuflows;            /* -1: not yet listed */
	int crit;               /* cheap folding: the member whose link load
				 * paces the plan when the leader's does not
				 * (plan_crit), -1 none, -2 not yet found */
	double route_alpha_s;   /* the engine's: the largest route latency of its
				 * flows on a platform with degraded links, -1 not
				 * yet found */
	bool priv;              /* the engine's: unfolded, its flows cross only
				 * links no other flow of the run can use
				 * (engine_replay.c) */
	struct cplan_replay *rep; /* the engine's: its first instance's record
				 * (engine_replay.c), NULL none yet */
};

/* What the engine keeps of a private plan (engine_replay.c): whether its
 * first instance ran, the flows its replay posts on its first flow's
 * route, and the timed links off that route, whose busy time the replay
 * adds. Heap-owned by its entry, so it stays put when the table grows. */
struct cplan_replay {
	int state;              /* 0 not begun, 1 first instance running, 2 replayable */
	int k;                  /* flows of the plan on each of its timed links */
	int nlinks;
	int *ids;               /* [nlinks] the timed links off the first flow's route */
	long ninst[CAT_N];      /* instances replayed, by the tasks' category: their
				 * flows' bytes go to the routes' counts once, after
				 * the run (engine_replay_flush) */
};

/* An open-addressing table of plans, made with one topology and one
 * collective algorithm name (both borrowed). Zero-initialise the rest. */
struct cplan_cache {
	const struct topology *topo;
	const char *algo;
	struct cplan *plans;    /* [cap], empty slots have p == NULL */
	size_t cap, n;
};

/* The plan of op over bytes on the group members[0..n) of kind, made on
 * first use (coll_plan_create). Returns the entry, owned by the cache and
 * valid until the next cplan_get (the table may grow), or NULL if the
 * algorithm cannot make the plan. */
struct cplan *cplan_get(struct cplan_cache *c, int kind, const int *members, int n, int op,
			double bytes);

/* Free every plan and the table; the cache is empty and reusable. */
void cplan_cache_finish(struct cplan_cache *c);

/* Indices of p's flows sorted by (dst, src, plan order), O(n log n): an
 * all-to-all plan has P(P-1) flows. Caller frees. */
int *cplan_flows_by_dst(const struct coll_plan *p);

/* First flow index i with key(flows[idx ? idx[i] : i]) >= r, key the
 * destination if by_dst, else the source (flows in source order). */
int cplan_lower(const struct coll_plan *p, const int *idx, int r, bool by_dst);

#endif
