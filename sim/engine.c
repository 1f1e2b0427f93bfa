/* engine: SimGrid replay of per-rank programs (see engine.h).
 *
 * Layout of the run:
 *   engine_run          initialises SimGrid once, builds the platform,
 *                       creates one actor per (simulated rank, used stream)
 *                       and one daemon sink per folded peer mailbox, runs.
 *   stream_main         one stream: for each of its tasks, wait for the
 *                       cross-stream deps (semaphores), run it, signal.
 *   run_coll            barrier, flows, barrier, step latency.
 * Plans are cached per (group leader, group kind, op, bytes): every member
 * of a group shares one plan and finds its own flows by binary search. */
#include "engine.h"

#include "cleanup.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <simgrid/actor.h>
#include <simgrid/barrier.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <simgrid/mailbox.h>
#include <simgrid/semaphore.h>
#include <xbt/config.h>
#include <xbt/log.h>

#include "engine_platform.h"
#include "platform.h"
#include "xalloc.h"

/* ---- progress ------------------------------------------------------ */

static bool g_progress;         /* engine_set_progress() */

void engine_set_progress(bool on)
{
	g_progress = on;
}

static double wall_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define PROGRESS_AFTER_S 3.0    /* no line for runs shorter than this */
#define PROGRESS_EVERY_S 0.5

struct progress {
	bool on, shown;
	double t0, last;
	long total;             /* tasks of every simulated rank */
};

/* Called every 4,096 tasks: a line "simulating: 42% (...)" on stderr,
 * rewritten in place. */
static void progress_tick(struct progress *pg, long done)
{
	double now = wall_now_s();
	if (now - pg->t0 < PROGRESS_AFTER_S || now - pg->last < PROGRESS_EVERY_S)
		return;
	pg->last = now;
	pg->shown = true;
	fprintf(stderr, "\rddlsim: simulating %3.0f%% (%ld of %ld tasks, %.3f s simulated, %.0f s)  ",
		pg->total > 0 ? 100.0 * (double)done / (double)pg->total : 0.0, done, pg->total,
		simgrid_get_clock(), now - pg->t0);
	fflush(stderr);
}

static void progress_end(struct progress *pg)
{
	if (pg->shown)
		fprintf(stderr, "\r%80s\r", "");
}

/* ---- plan cache ---------------------------------------------------- */

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
				 * flows stand for the group's (plan_own_only) */
	unsigned long long psig;/* hash of its set of (src, dst) pairs */
	int *cflows, ncflows;   /* cheap folding: the flows each_crit_flow posts */
	int crit;               /* cheap folding: the member whose link load
				 * paces the plan when the leader's does not
				 * (plan_crit), -1 none, -2 not yet found */
};

struct rank_inst;

struct sim {
	const struct engine_job *job;
	struct rank_inst *ri;   /* [nranks], NULL prog for folded ranks */
	bool *active;           /* [nranks] */
	int rep_dp;             /* folded: the data-parallel index of the representative replica */
	struct cplan *plans;
	size_t nplans_cap, nplans;
	sg_bar_t *bars;         /* [nranks * GROUP_N * STREAM_N], lazily made */
	struct stream_arg *args;/* [nargs] one per actor */
	int nargs;
	int **stream_tasks;     /* [pp * STREAM_N] task index lists */
	int **gmem[GROUP_N];    /* [kind][leader rank] members of that group, shared */
	int *stream_ntasks;
	int nactors, finished;
	long flows, collectives, tasks;
	bool failed;
	struct progress progress;
	sg_link_t *links;       /* the link sampler's list (freed after the run) */
	/* folding */
	sg_host_t *host;        /* [nranks] hosts of the GPUs on the platform */
	int *stamp;             /* [nranks] scratch marks for listing mirrors */
	int stampv;
	sg_comm_t *loose;       /* mirror pipeline transfers nobody waits for */
	size_t nloose, loose_cap;
	bool prune;             /* leave out mirror flows that cannot meet simulated ones */
	int nlinks;             /* ids of the links that can bind a flow (fold_link_ids) */
	unsigned long long *lkey; /* [lcap] link key + 1 (0: free) to its id */
	int *lid;
	size_t lcap;
	int *uf;                /* [lcap] union-find over links joined by a flow */
	bool *rooted;           /* [lcap] by root: joined to simulated traffic */
	bool lu_binds, pod_binds; /* fat-tree leaf / pod uplinks can limit a rate */
	int *lown;              /* [lcap] by link id: the one group instance whose
				 * flows cross it (kind * nranks + leader + 1), 0
				 * none yet, -1 several or a pipeline message */
	long long *lpair;       /* [lcap] by link id: src * nranks + dst + 1 of
				 * the one pair crossing it, 0 none, -1 several */
	unsigned long long *isig[GROUP_N]; /* [kind][leader] pair-set hash of
				 * every plan of that instance, 1 if they differ */
	bool serial[GROUP_N];   /* every collective of the kind runs on one
				 * stream: two of one group never overlap */
	long long *lmark;       /* [lcap] scratch for plan_own_only */
	long long lmarkv;
	sg_host_t *ps_hosts;    /* [job->ps->servers] dedicated parameter servers */
	int *clock;             /* [nranks] iterations a rank's compute stream finished */
	int ps_nb;              /* most DP buckets of a stage's program */
	double *ps_upd;         /* async: [leader * ps_nb + bucket] updates applied */
	double *stale;          /* async: staleness of every update */
	size_t nstale, stale_cap;
};

struct rank_inst {
	int rank, stage;
	const struct program *prog;
	int *done;              /* [prog->n] times the task finished (one per
				 * replayed iteration) */
	int waiting[STREAM_N];  /* task the stream is blocked on, or -1 */
	sg_sem_t wake[STREAM_N];/* one per stream, not per task: a stream waits
				 * for one dependency at a time */
	double *xfer_start;     /* [prog->n] recv transfer start */
	double *post_s;         /* [prog->n] when a send was posted (the
				 * message's payload: nothing to free) */
	struct engine_rank_stats *st;
	sg_sem_t rate;          /* interference: wakes the compute stream to re-rate */
	bool computing;         /* the compute stream sleeps on `rate` */
	int coll_active, coll_sms;
	sg_host_t host;
	const int *grp[GROUP_N];/* this rank's groups (into sim.gmem), resolved once */
	int ngrp[GROUP_N];
	double compute_end;     /* when the compute stream finished */
	double comm_end;        /* when the last communication stream finished */
	int comm_end_cat;       /* what that stream carried last */
	int nsent[2], nrecv[2]; /* pipeline messages posted, per p2p_dir */
	int *mp2p[2];           /* folded: mirror (src, dst) pairs of a send, per dir */
	int nmp2p[2];
	int ps_bucket;          /* parameter-server rounds so far (round robin) */
	double speed;           /* compute-time factor (stragglers) */
	int ps_nb;              /* DP buckets per iteration of this rank's program */
	double *ps_seen;        /* async: [bucket] updates applied when it last pulled */
	sg_sem_t ssp;           /* async: wakes a rank held by the staleness bound */
	bool ssp_blocked;
};

/* Owned by struct sim (freed after the run, also when a deadlock killed
 * the actor), as are the actor's buffers. */
struct stream_arg {
	struct sim *sim;
	struct rank_inst *ri;
	enum stream s;
	sg_comm_t *comms;       /* run_coll's pending transfers */
	size_t ncomms_cap;
	sg_comm_t *sends;       /* posted pipeline sends */
};

static struct sim *g_sim;
static int dummy_payload;


static unsigned long hash_key(int leader, int kind, int op, double bytes)
{
	unsigned long h = (unsigned long)leader * 2654435761UL;
	h ^= (unsigned long)kind * 40503UL + (unsigned long)op * 97UL;
	unsigned long long b;
	memcpy(&b, &bytes, sizeof(b));
	h ^= (unsigned long)(b ^ (b >> 29)) * 0x9E3779B97F4A7C15ULL;
	return h;
}

static int cmp_by_dst(const void *a, const void *b, void *arg)
{
	const struct coll_plan *p = arg;
	const struct coll_flow *x = &p->flows[*(const int *)a], *y = &p->flows[*(const int *)b];
	if (x->dst != y->dst)
		return (x->dst > y->dst) - (x->dst < y->dst);
	if (x->src != y->src)
		return (x->src > y->src) - (x->src < y->src);
	return (x > y) - (x < y); /* plan order: a stable sort */
}

/* Indices of p's flows sorted by (dst, src, plan order), O(n log n): an
 * all-to-all plan has P(P-1) flows. Caller frees. */
static int *flows_by_dst(const struct coll_plan *p)
{
	int *bd = xreallocarray(NULL, (size_t)p->nflows + 1, sizeof(*bd));
	for (int i = 0; i < p->nflows; i++)
		bd[i] = i;
	qsort_r(bd, (size_t)p->nflows, sizeof(int), cmp_by_dst, (void *)p);
	return bd;
}

static struct cplan *cplan_get(struct sim *S, int kind, const int *members, int n,
			       int op, double bytes)
{
	int leader = members[0];
	if (S->nplans * 2 >= S->nplans_cap) {
		size_t ncap = S->nplans_cap ? 2 * S->nplans_cap : 1024;
		struct cplan *np = xcalloc(ncap, sizeof(*np));
		for (size_t i = 0; i < S->nplans_cap; i++) {
			struct cplan *c = &S->plans[i];
			if (!c->p)
				continue;
			size_t j = hash_key(c->leader, c->kind, c->op, c->bytes) % ncap;
			while (np[j].p)
				j = (j + 1) % ncap;
			np[j] = *c;
		}
		free(S->plans);
		S->plans = np;
		S->nplans_cap = ncap;
	}
	size_t j = hash_key(leader, kind, op, bytes) % S->nplans_cap;
	while (S->plans[j].p) {
		struct cplan *c = &S->plans[j];
		if (c->leader == leader && c->kind == kind && c->op == op && c->bytes == bytes)
			return c;
		j = (j + 1) % S->nplans_cap;
	}
	struct coll_plan *p = coll_plan_create(S->job->topo, S->job->coll_algo, op,
					       members, n, bytes);
	if (!p)
		return NULL;
	int *bd = flows_by_dst(p);
	S->plans[j] = (struct cplan){ leader, kind, op, bytes, p, bd, NULL, -1, -1, false, -1, 0, NULL, 0, -2 };
	S->nplans++;
	return &S->plans[j];
}

static struct coll_plan *plan_get(struct sim *S, int kind, const int *members,
				  int n, int op, double bytes, int **by_dst)
{
	struct cplan *c = cplan_get(S, kind, members, n, op, bytes);
	if (!c)
		return NULL;
	*by_dst = c->by_dst;
	return c->p;
}

/* ---- folding: mirror traffic ---------------------------------------- */

/* ---- folding: which mirror flows can meet simulated ones -------------
 *
 * Max-min sharing decomposes over the links that can bind: a link whose
 * capacity is at least the sum of the capacities feeding it (a FATPIPE
 * switch, a leaf or pod uplink of a fat tree that is not oversubscribed)
 * never limits any allocation, so it can be dropped from the system
 * without changing a rate. What remains are NICs and oversubscribed
 * uplinks. Every flow the folded simulation could post (the groups and
 * pipeline pairs of every replica) joins the binding links it crosses
 * (union-find); a mirror flow is posted if it crosses a link joined to
 * the simulated ranks' own traffic, at any time of the iteration: every
 * other flow shares no binding link, ever, with what is simulated, so
 * leaving it out changes no simulated rate. Links inside nodes (GPU,
 * NVLink, PCIe) take part like any other: a TP group of a replica on a
 * node no simulated flow reaches is left out. */

/* A slot for link key k in a table of cap (a power of two) slots: a
 * splitmix64 finaliser, so that every field of the key (the node is in
 * bits 36 and up) moves the low bits; (k * phi) >> 17 never saw the node
 * and every node's NIC i collided (16,384 GPUs: 72 % of the run). */
static size_t link_slot(unsigned long long k, size_t cap)
{
	k ^= k >> 30;
	k *= 0xbf58476d1ce4e5b9ULL;
	k ^= k >> 27;
	k *= 0x94d049bb133111ebULL;
	k ^= k >> 31;
	return (size_t)k & (cap - 1);
}

/* Id of the link of key k (topology_link_key), made if add; -1 if unknown. */
static int link_id(struct sim *S, unsigned long long k, bool add)
{
	if (add && (size_t)(S->nlinks + 1) * 2 > S->lcap) {
		size_t ncap = S->lcap ? 2 * S->lcap : 4096;
		unsigned long long *nk = xcalloc(ncap, sizeof(*nk));
		int *ni = xreallocarray(NULL, ncap, sizeof(*ni));
		for (size_t i = 0; i < S->lcap; i++) {
			if (!S->lkey[i])
				continue;
			size_t j = link_slot(S->lkey[i], ncap);
			while (nk[j])
				j = (j + 1) & (ncap - 1);
			nk[j] = S->lkey[i];
			ni[j] = S->lid[i];
		}
		free(S->lkey);
		free(S->lid);
		S->lkey = nk;
		S->lid = ni;
		S->lcap = ncap;
		S->uf = xreallocarray(S->uf, ncap, sizeof(*S->uf));
		S->rooted = xreallocarray(S->rooted, ncap, sizeof(*S->rooted));
		S->lown = xreallocarray(S->lown, ncap, sizeof(*S->lown));
		S->lpair = xreallocarray(S->lpair, ncap, sizeof(*S->lpair));
		S->lmark = xreallocarray(S->lmark, ncap, sizeof(*S->lmark));
	}
	if (!S->lcap)
		return -1;
	k++; /* 0 marks a free slot */
	size_t j = link_slot(k, S->lcap);
	while (S->lkey[j] && S->lkey[j] != k)
		j = (j + 1) % S->lcap;
	if (S->lkey[j])
		return S->lid[j];
	if (!add)
		return -1;
	S->lkey[j] = k;
	S->lid[j] = S->nlinks;
	S->uf[S->nlinks] = S->nlinks;
	S->rooted[S->nlinks] = false;
	S->lown[S->nlinks] = 0;
	S->lpair[S->nlinks] = 0;
	S->lmark[S->nlinks] = 0;
	return S->nlinks++;
}

/* Ids of the binding links of the path a -> b, into ids (room for
 * TOPO_MAX_HOPS), made if add (else unknown links are skipped); returns
 * the count. */
static int fold_link_ids(struct sim *S, int a, int b, int *ids, bool add)
{
	const struct topology *t = S->job->topo;
	struct topo_hop h[TOPO_MAX_HOPS];
	int nh = topology_route(t, a, b, h), n = 0;
	for (int i = 0; i < nh; i++) {
		if (h[i].kind == TL_SWITCH || (h[i].kind == TL_LEAF_UP && !S->lu_binds) ||
		    (h[i].kind == TL_POD_UP && !S->pod_binds))
			continue;
		int id = link_id(S, topology_link_key(t, &h[i]), add);
		if (id >= 0)
			ids[n++] = id;
	}
	return n;
}

static int uf_find(int *uf, int x)
{
	while (uf[x] != x)
		x = uf[x] = uf[uf[x]];
	return x;
}

/* Join the binding links of a -> b; mark them as simulated traffic if root.
 * owner: the group instance the flow belongs to (-1: a pipeline message),
 * recorded with the pair a -> b on every link it crosses. */
static void fold_join(struct sim *S, int a, int b, bool root, int owner)
{
	int ids[TOPO_MAX_HOPS];
	int n = fold_link_ids(S, a, b, ids, true);
	long long pair = (long long)a * S->job->pl->nranks + b + 1;
	for (int i = 0; i < n; i++) {
		int *o = &S->lown[ids[i]];
		long long *q = &S->lpair[ids[i]];
		*o = *o == 0 ? owner : *o == owner ? owner : -1;
		*q = *q == 0 ? pair : *q == pair ? pair : -1;
		int x = uf_find(S->uf, ids[i]), y = uf_find(S->uf, ids[0]);
		if (x != y) {
			S->uf[x] = y;
			S->rooted[y] = S->rooted[y] || S->rooted[x];
		}
		if (root)
			S->rooted[y] = true;
	}
}

static bool fold_touches(struct sim *S, int a, int b)
{
	int ids[TOPO_MAX_HOPS];
	int n = fold_link_ids(S, a, b, ids, false);
	for (int i = 0; i < n; i++)
		if (S->rooted[uf_find(S->uf, ids[i])])
			return true;
	return false;
}

/* Whether a mirror plan is posted: some flow of it crosses a link joined
 * to simulated traffic (then all of it is: the rest meets nothing
 * simulated). */
static bool plan_posted(struct sim *S, struct cplan *c)
{
	if (c->posted < 0) {
		bool post = false;
		for (int i = 0; i < c->p->nflows && !post; i++)
			post = fold_touches(S, c->p->flows[i].src, c->p->flows[i].dst);
		c->posted = post;
	}
	return c->posted;
}

static bool stage_of_is(const struct placement *pl, int r, int stage)
{
	int c[DIM_N];
	placement_coords(pl, r, c);
	return c[DIM_PP] == stage;
}

/* Folded: the plans of the group kind of mem (the group of a simulated
 * rank of stage) and of every mirror group of the same stage whose flows
 * are posted, the group's own first. In the unfolded simulation every
 * replica runs the same collective at the same time on its own group, and
 * their flows share links (NICs, leaf and pod uplinks) with the simulated
 * group's: posting them all keeps that sharing exactly. Returns the entry
 * (its mir/nmir set) or NULL if a plan cannot be made. */
static struct cplan *mirrors_get(struct sim *S, int stage, int kind, const int *mem, int n,
				 int op, double bytes)
{
	const struct placement *pl = S->job->pl;
	struct cplan *c = cplan_get(S, kind, mem, n, op, bytes);
	if (!c || c->nmir >= 0)
		return c;
	int cap = placement_group_size(pl, kind), nm = 1, mcap = 16;
	int *tmp = xreallocarray(NULL, (size_t)cap + 1, sizeof(*tmp));
	struct coll_plan **mir = xreallocarray(NULL, (size_t)mcap, sizeof(*mir));
	mir[0] = c->p;
	int stamp = ++S->stampv;
	for (int i = 0; i < n; i++)
		S->stamp[mem[i]] = stamp;
	for (int r = 0; r < pl->nranks; r++) {
		if (S->stamp[r] == stamp || !stage_of_is(pl, r, stage))
			continue;
		int m = placement_group(pl, kind, r, tmp);
		for (int i = 0; i < m; i++)
			S->stamp[tmp[i]] = stamp;
		if (m <= 1)
			continue;
		struct cplan *mc = cplan_get(S, kind, tmp, m, op, bytes);
		if (!mc) {
			free(tmp);
			free(mir);
			return NULL;
		}
		if (!plan_posted(S, mc))
			continue;
		XGROW(mir, mcap, (size_t)nm + 1);
		mir[nm++] = mc->p;
	}
	free(tmp);
	c = cplan_get(S, kind, mem, n, op, bytes); /* the table may have grown */
	c->mir = mir;
	c->nmir = nm;
	return c;
}

static int cmp_int4(const void *a, const void *b)
{
	const int *x = a, *y = b;
	for (int i = 0; i < 4; i++)
		if (x[i] != y[i])
			return (x[i] > y[i]) - (x[i] < y[i]);
	return 0;
}

/* ---- folding: groups whose representative's own flows suffice ---------
 *
 * Posting a folded group's every flow (so that a tree's slowest flow is
 * seen) multiplies the flows of the common case, a ring inside a node, by
 * the group size (megatron-1t: 525,890 flows unfolded-ring style against
 * 3,941,772 whole-group). It is not needed where every flow of the group
 * provably runs at the representative's pace: the plan is pair-uniform
 * (its flows go over n distinct (src, dst) pairs, every member the source
 * of one and the destination of one, each pair with the same byte counts
 * over a path of the same link kinds, bandwidths and latencies), every
 * plan of this group instance uses the same set of pairs, and every
 * binding link a flow crosses is crossed, over the whole iteration and by
 * every replica, only by flows of this instance and of this one pair
 * (fold_join records it). Then each pair's flows see the same loads at the
 * same times, and the representative's own flows give the collective's
 * time; nothing else can meet them, so leaving the others out changes no
 * rate. tests/test-fold.c checks the result against unfolded runs. */

struct pflow {
	int src, dst;
	double bytes;
};

static int cmp_pflow(const void *a, const void *b)
{
	const struct pflow *x = a, *y = b;
	if (x->src != y->src)
		return (x->src > y->src) - (x->src < y->src);
	if (x->dst != y->dst)
		return (x->dst > y->dst) - (x->dst < y->dst);
	return (x->bytes > y->bytes) - (x->bytes < y->bytes);
}

/* p's flows sorted by (src, dst, bytes); caller frees. */
static struct pflow *pflows_sorted(const struct coll_plan *p)
{
	struct pflow *f = xreallocarray(NULL, (size_t)p->nflows + 1, sizeof(*f));
	for (int i = 0; i < p->nflows; i++)
		f[i] = (struct pflow){ p->flows[i].src, p->flows[i].dst, p->flows[i].bytes };
	qsort(f, (size_t)p->nflows, sizeof(*f), cmp_pflow);
	return f;
}

/* Record c's pair-set hash, and note it on its instance (kind, leader):
 * 1 there once two plans of the instance use different pairs. */
static void pair_sig_note(struct sim *S, struct cplan *c, int kind, int leader)
{
	struct pflow *f = pflows_sorted(c->p);
	unsigned long long h = 0xcbf29ce484222325ULL;
	for (int i = 0; i < c->p->nflows; i++) {
		if (i && f[i].src == f[i - 1].src && f[i].dst == f[i - 1].dst)
			continue;
		h = (h ^ (unsigned long long)f[i].src) * 0x100000001b3ULL;
		h = (h ^ (unsigned long long)f[i].dst) * 0x100000001b3ULL;
	}
	free(f);
	c->psig = h | 2; /* never 0 (unset) nor 1 (mixed) */
	unsigned long long *is = &S->isig[kind][leader];
	*is = *is == 0 ? c->psig : *is == c->psig ? *is : 1;
}

/* Whether the representative's own flows of c stand for its group (see
 * above). c is the plan of a simulated group of kind and n members. */
static bool plan_own_only(struct sim *S, struct cplan *c, int kind, int n)
{
	if (c->own >= 0)
		return c->own;
	c->own = 0;
	/* a group whose collectives all run on one stream has one plan at a
	 * time on its links: the pairs must be exclusive within this plan
	 * only; otherwise within every plan of the instance, all using the
	 * same pairs */
	bool serial = S->serial[kind];
	if (!c->closed || (!serial && S->isig[kind][c->leader] != c->psig))
		return false;
	long long mark0 = S->lmarkv;
	const struct topology *t = S->job->topo;
	const struct coll_plan *p = c->p;
	int N = S->job->pl->nranks, owner = kind * N + c->leader + 1;
	struct pflow *f = pflows_sorted(p);
	struct topo_hop h0[TOPO_MAX_HOPS], h[TOPO_MAX_HOPS];
	int nh0 = 0, run0 = 0, npairs = 0, stamp = ++S->stampv;
	bool ok = true;
	for (int i = 0; i < p->nflows && ok;) {
		int j = i;
		while (j < p->nflows && f[j].src == f[i].src && f[j].dst == f[i].dst)
			j++;
		/* the pair f[i..j): same bytes as the first pair, new src and dst */
		if (npairs == 0)
			run0 = j - i;
		else if (j - i != run0)
			ok = false;
		for (int k = 0; ok && npairs && k < run0; k++)
			ok = f[i + k].bytes == f[k].bytes;
		if (ok && npairs && f[i].src == f[i - 1].src)
			ok = false;
		if (ok && S->stamp[f[i].dst] == stamp)
			ok = false;
		S->stamp[f[i].dst] = stamp;
		/* the same path up to which links */
		int nh = topology_route(t, f[i].src, f[i].dst, npairs ? h : h0);
		if (npairs == 0)
			nh0 = nh;
		else if (nh != nh0)
			ok = false;
		for (int k = 0; ok && npairs && k < nh; k++)
			ok = h[k].kind == h0[k].kind &&
			     topology_link_bw(t, &h[k]) == topology_link_bw(t, &h0[k]) &&
			     topology_link_latency(t, &h[k]) == topology_link_latency(t, &h0[k]);
		/* its binding links carry this pair of this instance only */
		int ids[TOPO_MAX_HOPS];
		int m = fold_link_ids(S, f[i].src, f[i].dst, ids, false);
		long long pair = (long long)f[i].src * N + f[i].dst + 1;
		for (int k = 0; ok && k < m; k++) {
			long long *mk = &S->lmark[ids[k]];
			ok = S->lown[ids[k]] == owner &&
			     (serial ? *mk <= mark0 || *mk == mark0 + npairs + 1
				     : S->lpair[ids[k]] == pair);
			*mk = mark0 + npairs + 1;
		}
		npairs++;
		i = j;
	}
	free(f);
	S->lmarkv = mark0 + npairs + 1;
	c->own = ok && npairs == n;
	return c->own;
}

/* Folded: join the binding links of every flow the replicas of every
 * stage could send (their collectives' plans across nodes, their pipeline
 * messages), rooted at the simulated ranks' own; then mark in used the
 * GPUs of every posted mirror flow. Returns 0 or -1 (a plan cannot be
 * made). */
static int fold_closure(struct sim *S, unsigned char *used)
{
	const struct engine_job *job = S->job;
	const struct topology *t = job->topo;
	const struct placement *pl = job->pl;
	int N = pl->nranks, pp = pl->size[DIM_PP], rc = -1;

	if (t->fabric == FABRIC_FAT_TREE) {
		double feed = t->ft_nodes_per_leaf * t->nics * t->nic_bw_Bps;
		S->lu_binds = t->ft_leaf_up_bw_Bps < feed;
		double lfeed = S->lu_binds ? t->ft_leaf_up_bw_Bps : feed;
		S->pod_binds = t->ft_levels == 3 && t->ft_pod_up_bw_Bps < t->ft_leaves_per_pod * lfeed;
	}
	int stream_of[GROUP_N];
	for (int g = 0; g < GROUP_N; g++) {
		stream_of[g] = -1;
		S->serial[g] = true;
	}
	for (int st = 0; st < pp; st++)
		for (int i = 0; i < job->stage_prog[st]->n; i++) {
			const struct task *tk = &job->stage_prog[st]->t[i];
			if (tk->kind != TASK_COLL)
				continue;
			if (stream_of[tk->group] < 0)
				stream_of[tk->group] = tk->stream;
			else if (stream_of[tk->group] != (int)tk->stream)
				S->serial[tk->group] = false;
		}
	int *tmp = xreallocarray(NULL, (size_t)N + 2, sizeof(*tmp));
	int *keys = NULL;
	size_t kcap = 0;
	for (int st = 0; st < pp; st++) {
		const struct program *pr = job->stage_prog[st];
		int nk = 0;
		for (int i = 0; i < pr->n; i++) {
			const struct task *tk = &pr->t[i];
			if (tk->kind != TASK_COLL || tk->bytes <= 0 ||
			    placement_group_size(pl, tk->group) <= 1)
				continue;
			/* a byte count as an int triple: sort and keep distinct */
			double bytes = tk->bytes * tk->count;
			XGROW(keys, kcap, (size_t)(nk + 1) * 4);
			int *k = &keys[nk * 4];
			k[0] = tk->group;
			k[1] = tk->op;
			memcpy(&k[2], &bytes, sizeof(bytes));
			nk++;
		}
		qsort(keys, (size_t)nk, 4 * sizeof(int), cmp_int4);
		for (int q = 0; q < nk; q++) {
			int *k = &keys[q * 4];
			if (q && !memcmp(k, k - 4, 4 * sizeof(int)))
				continue;
			double bytes;
			memcpy(&bytes, &k[2], sizeof(bytes));
			int stamp = ++S->stampv;
			for (int r = 0; r < N; r++) {
				if (S->stamp[r] == stamp || !stage_of_is(pl, r, st))
					continue;
				int m = placement_group(pl, k[0], r, tmp);
				bool root = false;
				for (int i = 0; i < m; i++) {
					S->stamp[tmp[i]] = stamp;
					root = root || S->active[tmp[i]];
				}
				if (m <= 1)
					continue;
				struct cplan *c = cplan_get(S, k[0], tmp, m, k[1], bytes);
				if (!c)
					goto out;
				if (c->closed)
					continue;
				int owner = k[0] * N + tmp[0] + 1;
				c->closed = true;
				for (int i = 0; i < c->p->nflows; i++)
					fold_join(S, c->p->flows[i].src, c->p->flows[i].dst, root,
						  owner);
				pair_sig_note(S, c, k[0], tmp[0]);
			}
		}
	}
	for (int r = 0; r < N; r++) {
		int c[DIM_N];
		placement_coords(pl, r, c);
		for (int dlt = -1; dlt <= 1; dlt += 2)
			if (c[DIM_PP] + dlt >= 0 && c[DIM_PP] + dlt < pp)
				fold_join(S, r, placement_stage_peer(pl, r, c[DIM_PP] + dlt), S->active[r],
					  -1);
	}
	/* the GPUs of what is posted */
	for (size_t i = 0; i < S->nplans_cap; i++) {
		struct cplan *c = &S->plans[i];
		if (c->p && c->closed && plan_posted(S, c))
			for (int f = 0; f < c->p->nflows; f++)
				used[c->p->flows[f].src] = used[c->p->flows[f].dst] = 1;
	}
	for (int r = 0; r < N; r++) {
		int c[DIM_N];
		placement_coords(pl, r, c);
		for (int dlt = -1; dlt <= 1; dlt += 2) {
			if (c[DIM_PP] + dlt < 0 || c[DIM_PP] + dlt >= pp)
				continue;
			int peer = placement_stage_peer(pl, r, c[DIM_PP] + dlt);
			if (fold_touches(S, r, peer))
				used[r] = used[peer] = 1;
		}
	}
	rc = 0;
out:
	free(keys);
	free(tmp);
	return rc;
}

/* Folded: the (src, dst) pairs of the pipeline messages in direction dir
 * that the replicas of simulated rank ri send with it, where posted. */
static void mirror_p2p_list(struct sim *S, struct rank_inst *ri, int dir)
{
	const struct placement *pl = S->job->pl;
	int peer_stage = ri->stage + (dir == P2P_FWD ? +1 : -1);
	size_t cap = 0;
	int n = 0;
	if (peer_stage < 0 || peer_stage >= pl->size[DIM_PP])
		return;
	for (int r = 0; r < pl->nranks; r++) {
		if (r == ri->rank || !stage_of_is(pl, r, ri->stage))
			continue;
		int pair[2] = { r, placement_stage_peer(pl, r, peer_stage) };
		if (!fold_touches(S, pair[0], pair[1]))
			continue;
		XGROW(ri->mp2p[dir], cap, (size_t)2 * n + 2);
		ri->mp2p[dir][2 * n] = pair[0];
		ri->mp2p[dir][2 * n + 1] = pair[1];
		n++;
	}
	ri->nmp2p[dir] = n;
}

/* Start the mirror transfers of a pipeline message of bytes from ri in
 * direction dir: at the instant the message itself starts (its send and
 * receive both posted). */
static void mirror_p2p_post(struct sim *S, const struct rank_inst *ri, int dir, double bytes)
{
	for (int k = 0; k < ri->nmp2p[dir]; k++) {
		if (S->nloose == S->loose_cap) {
			/* drop the finished ones first: the list holds what is in
			 * flight, not every transfer of the run (megatron-1t:
			 * 650,000 of them held 550 MB) */
			size_t keep = 0;
			for (size_t i = 0; i < S->nloose; i++) {
				if (engine_platform_comm_finished(S->loose[i]))
					engine_platform_comm_release(S->loose[i]);
				else
					S->loose[keep++] = S->loose[i];
			}
			S->nloose = keep;
		}
		XGROW(S->loose, S->loose_cap, S->nloose + 1);
		S->loose[S->nloose++] = engine_platform_sendto_async(S->host[ri->mp2p[dir][2 * k]],
							    S->host[ri->mp2p[dir][2 * k + 1]],
							    ceil(bytes));
		S->flows++;
	}
}

/* First flow index with flows[idx(i)].key >= r. */
static int lower(const struct coll_plan *p, const int *idx, int r, bool by_dst)
{
	int lo = 0, hi = p->nflows;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		const struct coll_flow *f = &p->flows[idx ? idx[mid] : mid];
		int key = by_dst ? f->dst : f->src;
		if (key < r)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static sg_mailbox_t coll_mailbox(int stream, int src, int dst)
{
	char name[64];
	snprintf(name, sizeof(name), "c%d_%d_%d", stream, src, dst);
	return sg_mailbox_by_name(name);
}

static sg_mailbox_t p2p_mailbox(int dir, int src, int dst)
{
	char name[64];
	snprintf(name, sizeof(name), "p%d_%d_%d", dir, src, dst);
	return sg_mailbox_by_name(name);
}

/* ---- task execution ------------------------------------------------ */

static sg_bar_t group_barrier(struct sim *S, int leader, int kind, int stream,
			      const int *members, int n)
{
	size_t k = ((size_t)leader * GROUP_N + (size_t)kind) * STREAM_N + (size_t)stream;
	if (!S->bars[k]) {
		int act = 0;
		for (int i = 0; i < n; i++)
			act += S->active[members[i]];
		S->bars[k] = sg_barrier_init((unsigned)act);
	}
	return S->bars[k];
}

/* Resolve rank's groups once, sharing one member array per group. */
static void resolve_groups(struct sim *S, struct rank_inst *ri)
{
	const struct placement *pl = S->job->pl;
	for (int g = 0; g < GROUP_N; g++) {
		int cap = placement_group_size(pl, g);
		int *tmp = xreallocarray(NULL, (size_t)cap, sizeof(*tmp));
		int n = placement_group(pl, g, ri->rank, tmp);
		int leader = tmp[0];
		if (!S->gmem[g][leader])
			S->gmem[g][leader] = tmp;
		else
			free(tmp);
		ri->grp[g] = S->gmem[g][leader];
		ri->ngrp[g] = n;
	}
}

/* A collective of sms CTAs starts (dir +1) or ends (-1) on ri: the
 * compute stream re-evaluates its rate. */
static void comm_busy(struct sim *S, struct rank_inst *ri, int sms, int dir)
{
	(void)S;
	if (!ri->rate)
		return;
	ri->coll_active += dir;
	ri->coll_sms += dir * sms;
	if (ri->computing) {    /* actors run one at a time: no lock needed */
		ri->computing = false;
		sg_sem_release(ri->rate);
	}
}

/* The compute slowdown now (engine.h). */
static double slowdown(const struct sim *S, const struct rank_inst *ri)
{
	if (ri->coll_active <= 0)
		return 1;
	if (S->job->interference_factor > 0)
		return S->job->interference_factor;
	int sm = S->job->sm_count, c = ri->coll_sms < sm - 1 ? ri->coll_sms : sm - 1;
	return (double)sm / (sm - c);
}

/* The throttling factor of rank at time t (engine.h), and in *next the
 * next window edge after t (INFINITY: none). */
static double throttle_at(const struct sim *S, int rank, double t, double *next)
{
	double f = 1;
	*next = INFINITY;
	for (int i = 0; i < S->job->nthrottle; i++) {
		const struct engine_throttle *w = &S->job->throttle[i];
		if (w->rank != rank)
			continue;
		if (t >= w->start_s && t < w->end_s) {
			f *= w->factor;
			*next = fmin(*next, w->end_s);
		} else if (t < w->start_s)
			*next = fmin(*next, w->start_s);
	}
	return f;
}

/* A compute task of time_s (alone): segments at the current rate, cut
 * whenever a collective starts or ends on this rank, and (gpu: a
 * compute-stream task) at the edges of its throttling windows. */
static void run_compute(struct sim *S, struct rank_inst *ri, double time_s, bool gpu)
{
	bool thr = gpu && S->job->nthrottle > 0;
	if (!ri->rate && !thr) {
		sg_actor_sleep_for(time_s);
		return;
	}
	double start = simgrid_get_clock(), left = time_s, throttled = 0;
	while (left > 0) {
		double t0 = simgrid_get_clock(), next = INFINITY, ft = 1;
		if (thr) {
			ft = throttle_at(S, ri->rank, t0, &next);
			if (next - t0 <= 1e-12 * fmax(1, t0))  /* on an edge (rounding) */
				ft = throttle_at(S, ri->rank, next, &next);
		}
		double f = (ri->rate ? slowdown(S, ri) : 1) * ft;
		double need = left * f, edge = next - t0;
		bool cut = edge < need;
		double span = cut ? edge : need;
		if (ri->rate) {
			ri->computing = true;
			int timed_out = sg_sem_acquire_timeout(ri->rate, span);
			ri->computing = false;
			if (timed_out && !cut) {
				throttled += need * (1 - 1 / ft);
				break;  /* the work is done */
			}
		} else
			sg_actor_sleep_for(span);
		double e = simgrid_get_clock() - t0;
		if (!ri->rate && !cut) {
			throttled += e * (1 - 1 / ft);
			break;
		}
		throttled += e * (1 - 1 / ft);
		left -= e / f;
	}
	double extra = simgrid_get_clock() - start - time_s - throttled;
	if (extra > 0)
		ri->st->interference_s += extra;
	ri->st->throttle_s += throttled;
}

/* Folded: the simulated member of a group that posts the flows of the
 * group and of its mirrors (the first simulated member). */
static bool posts_group(const struct sim *S, const int *mem, int n, int rank)
{
	for (int i = 0; i < n; i++)
		if (S->active[mem[i]])
			return mem[i] == rank;
	return false;
}

/* Cheap folding: whether the group holds a rank of the representative
 * replica (a replica made distinct, partial folding, is simulated whole:
 * its groups post their own flows, as the representative's folded peers
 * would in the symmetric run, so a what-if differs from its baseline by
 * what it changes, not by what is posted). */
static bool holds_rep(const struct sim *S, const int *mem, int n)
{
	const struct placement *pl = S->job->pl;
	for (int i = 0; i < n; i++)
		if (S->active[mem[i]]) {
			int c[DIM_N];
			placement_coords(pl, mem[i], c);
			if (c[DIM_DP] == S->rep_dp && c[DIM_TP] == 0 && c[DIM_CP] == 0)
				return true;
		}
	return false;
}


/* ---- cheap folding: plans that load their members unequally ---------
 *
 * Folded cheaply, the representative posts its own flows, which stand for
 * its group's when every member sends and receives the same bytes (a
 * ring). A tree does not: an inner member sends to its parent and its
 * children at once, a leaf to its parent only, the root receives from
 * every child, and with every flow posted at once the collective lasts as
 * long as its busiest member's transfers. So for an unequal plan the
 * flows folded members send to or from the busiest member and its peers
 * are posted too, host to host (each_crit_flow), and the link loads that
 * pace it are simulated. Against the unfolded run: Llama 3 8B, TP 8 x
 * DP 16 on 16 DGX H100 with trees, 0.3155 s from the representative's
 * flows alone, now equal (0.3771 s); TP 8 x DP 16 x PP 2, -15 % -> -0.27 %;
 * TP 8 x DP 128 x PP 2 on the 3-level fat tree (NCCL's auto picks trees
 * there), -8.3 % -> -0.72 %. Returns the member moving the most bytes of
 * an unequal plan, or -1 for an equal one. */
static int plan_crit(struct cplan *c)
{
	/* balanced (-1): a ring, and a double binary tree whose members are
	 * inner in one tree and leaves in the other. Counting flows too would
	 * post whole trees of balanced bytes: Llama 3 405B on 98,304 GPUs (DP
	 * trees of 768) went from 0.3 s to minutes, for no change where it
	 * was measured */
	if (c->crit == -2)
		c->crit = coll_plan_busiest(c->p);
	return c->crit;
}

/* Whether rank, simulating a member of the group mem of plan c, posts the
 * flows around c's busiest member (each_crit_flow): cheap folding, an
 * unequal plan (cached), the group's first simulated member, a group of
 * the representative replica. */
static bool posts_crit(const struct sim *S, struct cplan *c, const int *mem, int n, int rank)
{
	return S->job->fold && !S->job->fold_exact && plan_crit(c) >= 0 &&
	       posts_group(S, mem, n, rank) && holds_rep(S, mem, n);
}

struct member_sig {
	double v[4];    /* bytes out, bytes in, flows out, flows in */
	int k;          /* index in the group */
};

static int cmp_sig(const void *a, const void *b)
{
	const struct member_sig *x = a, *y = b;
	for (int i = 0; i < 4; i++)
		if (x->v[i] != y->v[i])
			return x->v[i] < y->v[i] ? -1 : 1;
	return (x->k > y->k) - (x->k < y->k);
}

/* Cheap folding: the data-parallel index of the replica to simulate, so
 * that the representative stands for most replicas. An unequal plan (a
 * double binary tree: members inner in one tree and leaves in the other
 * move 4 half-buffers each way, the few inner in neither or with one child
 * 3) gives its members unequal NIC loads, and the pipeline messages that
 * share those NICs run at their member's pace: folding 127 replicas onto
 * one of the four light ones of a 128-node tree made Llama 3 8B, TP 8 x
 * PP 16 x DP 128 on 2,048 DGX H100 run 9.6 % fast (0.4072 s against
 * 0.4506 s unfolded). So the representative is the first replica, not
 * made distinct (drep), of the most common class of members of the
 * stage-0 gradient all-reduce's plan (bytes sent and received, the flows
 * counted). Equal plans (rings) and no all-reduce: first (replica 0 or
 * the first one not distinct). Returns -1 if no plan could be made. */
static int majority_replica(struct sim *S, const unsigned char *drep, int first)
{
	const struct engine_job *job = S->job;
	const struct placement *pl = job->pl;
	const struct program *pr = job->stage_prog[0];
	if (pl->size[DIM_DP] < 2)
		return first;
	int *mem = xreallocarray(NULL, (size_t)pl->nranks + 1, sizeof(*mem));
	int *at = xreallocarray(NULL, (size_t)pl->nranks + 1, sizeof(*at));
	int n = placement_group(pl, GROUP_DP, placement_rank(pl, 0, 0, 0), mem), pick = first;
	bool unequal = false;
	struct member_sig *sig = xcalloc((size_t)n + 1, sizeof(*sig));
	for (int k = 0; k < n; k++) {
		at[mem[k]] = k;
		sig[k].k = k;
	}
	/* per member, over the stage's gradient all-reduces */
	for (int i = 0; i < pr->n; i++) {
		const struct task *t = &pr->t[i];
		if (t->kind != TASK_COLL || t->group != GROUP_DP || t->op != COLL_ALLREDUCE ||
		    t->bytes <= 0)
			continue;
		struct cplan *c = cplan_get(S, GROUP_DP, mem, n, COLL_ALLREDUCE, t->bytes * t->count);
		if (!c) {
			pick = -1;
			goto out;
		}
		if (plan_crit(c) < 0)
			continue;   /* equal: every member alike */
		unequal = true;
		for (int f = 0; f < c->p->nflows; f++) {
			const struct coll_flow *fl = &c->p->flows[f];
			sig[at[fl->src]].v[0] += fl->bytes;
			sig[at[fl->src]].v[2]++;
			sig[at[fl->dst]].v[1] += fl->bytes;
			sig[at[fl->dst]].v[3]++;
		}
	}
	if (!unequal)
		goto out;
	/* the largest class holding a candidate (cp 0, a replica not made
	 * distinct); its first candidate */
	qsort(sig, (size_t)n, sizeof(*sig), cmp_sig);
	int best = 0;
	for (int a = 0; a < n;) {
		int b = a, cand = -1;
		for (; b < n && !memcmp(sig[b].v, sig[a].v, sizeof(sig[a].v)); b++) {
			int dk[DIM_N];
			placement_coords(pl, mem[sig[b].k], dk);
			if (dk[DIM_CP] == 0 && !(drep && drep[dk[DIM_DP]]) &&
			    (cand < 0 || dk[DIM_DP] < cand))
				cand = dk[DIM_DP];
		}
		if (cand >= 0 && b - a > best) {
			best = b - a;
			pick = cand;
		}
		a = b;
	}
out:
	free(sig);
	free(at);
	free(mem);
	return pick;
}

/* Call fn(ctx, flow) for the flows of an unequal plan c (plan_crit) that
 * run_coll posts host to host: those a folded member sends to or from
 * the busiest member or one of its peers, so that the busiest member's
 * transfers and the link loads that pace them are simulated, at the cost
 * of a few flows whatever the group's size (a tree of 768 members posted
 * whole: 400,000 flows and minutes for Llama 3 405B on 98,304 GPUs). */
static void each_crit_flow(struct sim *S, struct cplan *c,
			   void (*fn)(void *ctx, const struct coll_flow *f), void *ctx)
{
	int crit = plan_crit(c);
	const struct coll_plan *p = c->p;
	if (!c->cflows) {
		/* the busiest member and its peers */
		int np = 0, cap = 16, *peer = xreallocarray(NULL, (size_t)cap, sizeof(*peer));
		peer[np++] = crit;
		for (int i = 0; i < p->nflows; i++) {
			const struct coll_flow *f = &p->flows[i];
			int o = f->src == crit ? f->dst : f->dst == crit ? f->src : -1;
			bool seen = o < 0;
			for (int k = 0; k < np && !seen; k++)
				seen = peer[k] == o;
			if (!seen) {
				XGROW(peer, cap, (size_t)np + 1);
				peer[np++] = o;
			}
		}
		c->cflows = xreallocarray(NULL, (size_t)p->nflows + 1, sizeof(*c->cflows));
		for (int i = 0; i < p->nflows; i++) {
			const struct coll_flow *f = &p->flows[i];
			bool in = false;
			for (int k = 0; k < np && !in; k++)
				in = f->src == peer[k] || f->dst == peer[k];
			if (in && !S->active[f->src])
				c->cflows[c->ncflows++] = i;
		}
		free(peer);
	}
	for (int i = 0; i < c->ncflows; i++)
		fn(ctx, &p->flows[c->cflows[i]]);
}

/* Post this rank's transfers of one parameter-server phase (push: to
 * the servers; else from them) and wait for them. */
static void ps_phase(struct sim *S, struct stream_arg *a, const int *mem, int k0, int nk,
		     double part, bool push, enum task_cat cat)
{
	struct rank_inst *ri = a->ri;
	const struct engine_ps *ps = S->job->ps;
	int nc = 0;
	XGROW(a->comms, a->ncomms_cap, (size_t)nk + 1);
	for (int i = 0; i < nk; i++) {
		int k = k0 + i;
		sg_host_t h = ps->colocated ? S->ri[mem[k]].host : S->ps_hosts[k];
		if (h == ri->host)
			continue;   /* the rank's own shard stays */
		a->comms[nc++] = push ? engine_platform_sendto_async(ri->host, h, part)
				      : engine_platform_sendto_async(h, ri->host, part);
		if (push)
			ri->st->sent_bytes[cat] += part;
		S->flows++;
	}
	sg_comm_wait_all(a->comms, (size_t)nc);
}

/* Whether the job runs asynchronous parameter servers with a staleness
 * bound. */
static bool ssp_on(const struct sim *S)
{
	return S->job->ps && S->job->ps->async && S->job->ps->staleness >= 0;
}

/* Before iteration it of ri's compute stream: with a staleness bound s,
 * wait until every rank of its DP group has finished iteration it - s - 1
 * (stale synchronous parallel, Ho et al. 2013); the wait counts as exposed
 * DP communication. */
static void ssp_wait(struct sim *S, struct rank_inst *ri, int it)
{
	if (!ssp_on(S))
		return;
	const int *mem = ri->grp[GROUP_DP];
	int n = ri->ngrp[GROUP_DP];
	double t0 = simgrid_get_clock();
	for (;;) {
		int lo = it;
		for (int i = 0; i < n; i++)
			if (S->clock[mem[i]] < lo)
				lo = S->clock[mem[i]];
		if (lo >= it - S->job->ps->staleness)
			break;
		ri->ssp_blocked = true;
		sg_sem_acquire(ri->ssp);
	}
	ri->st->exposed_s[CAT_DP_COMM] += simgrid_get_clock() - t0;
}

/* ri's compute stream finished an iteration: wake the ranks of its DP
 * group that the bound holds. */
static void ssp_tick(struct sim *S, struct rank_inst *ri)
{
	S->clock[ri->rank]++;
	if (!ssp_on(S))
		return;
	const int *mem = ri->grp[GROUP_DP];
	for (int i = 0; i < ri->ngrp[GROUP_DP]; i++) {
		struct rank_inst *o = &S->ri[mem[i]];
		if (o->ssp_blocked) {
			o->ssp_blocked = false;
			sg_sem_release(o->ssp);
		}
	}
}

/* A DP all-reduce through the parameter servers (engine.h). */
static void run_ps(struct sim *S, struct stream_arg *a, const struct task *t)
{
	struct rank_inst *ri = a->ri;
	const struct engine_ps *ps = S->job->ps;
	const int *mem = ri->grp[t->group];
	int n = ri->ngrp[t->group];
	double bytes = t->bytes * t->count;
	int ns = ps->colocated && ps->servers > n ? n : ps->servers;
	int k0 = 0, nk = ns;
	double part = bytes / ns;

	if (ps->round_robin) {
		k0 = ri->ps_bucket % ns;
		nk = 1;
		part = bytes;
	}
	int b = ri->ps_nb > 0 ? ri->ps_bucket % ri->ps_nb : 0;
	ri->ps_bucket++;
	S->collectives++;
	if (t->launch_s > 0)
		sg_actor_sleep_for(t->launch_s * t->count);
	ri->st->collectives[t->cat] += t->count;
	if (ps->async) {
		/* the servers apply each push as it comes: its staleness is the
		 * updates of others applied since this rank pulled the weights */
		ps_phase(S, a, mem, k0, nk, part, true, t->cat);
		double *u = &S->ps_upd[(size_t)mem[0] * S->ps_nb + b];
		XGROW(S->stale, S->stale_cap, S->nstale + 1);
		S->stale[S->nstale++] = *u - ri->ps_seen[b];
		*u += 1;
		ri->ps_seen[b] = *u;
		ps_phase(S, a, mem, k0, nk, part, false, t->cat);
		return;
	}
	sg_bar_t bar = group_barrier(S, mem[0], t->group, t->stream, mem, n);
	ps_phase(S, a, mem, k0, nk, part, true, t->cat);
	sg_barrier_wait(bar);   /* the servers hold every worker's gradients */
	ps_phase(S, a, mem, k0, nk, part, false, t->cat);
}


struct crit_post {
	struct sim *S;
	struct stream_arg *a;
	int nc;
};

static void crit_post_one(void *ctx, const struct coll_flow *f)
{
	struct crit_post *c = ctx;
	XGROW(c->a->comms, c->a->ncomms_cap, (size_t)c->nc + 1);
	c->a->comms[c->nc++] = engine_platform_sendto_async(c->S->host[f->src], c->S->host[f->dst],
							    ceil(f->bytes));
	c->S->flows++;
}

static void run_coll(struct sim *S, struct stream_arg *a, const struct task *t)
{
	struct rank_inst *ri = a->ri;
	const int *mem = ri->grp[t->group];
	int n = ri->ngrp[t->group];
	if (n <= 1 || t->bytes <= 0)
		return;
	if (S->job->ps && t->group == GROUP_DP && t->op == COLL_ALLREDUCE) {
		run_ps(S, a, t);
		return;
	}
	double bytes = t->bytes * t->count;
	struct cplan *cp0 = cplan_get(S, t->group, mem, n, t->op, bytes);
	if (!cp0) {
		S->failed = true;
		return;
	}
	struct coll_plan *p = cp0->p;
	const int *by_dst = cp0->by_dst;
	sg_bar_t bar = group_barrier(S, mem[0], t->group, t->stream, mem, n);
	S->collectives++;
	if (t->launch_s > 0)
		sg_actor_sleep_for(t->launch_s * t->count);
	ri->st->collectives[t->cat] += t->count;

	sg_barrier_wait(bar);
	comm_busy(S, ri, p->sm_channels, +1);
	int nc = 0;
	if (S->job->fold_exact) {
		/* one simulated member posts every flow of the group and of its
		 * mirror groups, host to host; the others wait at the barrier */
		if (posts_group(S, mem, n, ri->rank)) {
			struct cplan *cp = mirrors_get(S, ri->stage, t->group, mem, n, t->op, bytes);
			if (!cp) {
				S->failed = true;
				return;
			}
			/* the group's own flows: all, or only the representative's
			 * where they stand for the others' (plan_own_only) */
			int o0 = 0, o1 = p->nflows;
			if (plan_own_only(S, cp, t->group, n)) {
				o0 = lower(p, NULL, ri->rank, false);
				o1 = lower(p, NULL, ri->rank + 1, false);
			}
			size_t need = 1 + (size_t)(o1 - o0);
			for (int m = 1; m < cp->nmir; m++)
				need += (size_t)cp->mir[m]->nflows;
			XGROW(a->comms, a->ncomms_cap, need);
			for (int m = 0; m < cp->nmir; m++) {
				const struct coll_plan *mp = cp->mir[m];
				int i0 = m ? 0 : o0, i1 = m ? mp->nflows : o1;
				for (int i = i0; i < i1; i++) {
					const struct coll_flow *f = &mp->flows[i];
					a->comms[nc++] = engine_platform_sendto_async(S->host[f->src], S->host[f->dst],
									     ceil(f->bytes));
					if (m == 0 && S->active[f->src])
						S->ri[f->src].st->sent_bytes[t->cat] += f->bytes / mp->wire_scale;
					S->flows++;
				}
			}
		}
	} else {
		int o0 = lower(p, NULL, ri->rank, false), o1 = lower(p, NULL, ri->rank + 1, false);
		int i0 = lower(p, by_dst, ri->rank, true), i1 = lower(p, by_dst, ri->rank + 1, true);
		XGROW(a->comms, a->ncomms_cap, (size_t)(o1 - o0 + i1 - i0 + 1));
		sg_comm_t *c = a->comms;
		void *sink = NULL;
		for (int i = o0; i < o1; i++) {
			const struct coll_flow *f = &p->flows[i];
			c[nc++] = sg_mailbox_put_async(coll_mailbox(t->stream, f->src, f->dst),
						       &dummy_payload, (long)ceil(f->bytes));
			ri->st->sent_bytes[t->cat] += f->bytes / p->wire_scale; /* payload */
			S->flows++;
		}
		for (int i = i0; i < i1; i++) {
			const struct coll_flow *f = &p->flows[by_dst[i]];
			if (S->active[f->src]) /* a folded source sends nothing */
				c[nc++] = sg_mailbox_get_async(coll_mailbox(t->stream, f->src, f->dst), &sink);
		}
		/* no plan is made since cp0 was found: the pointer holds */
		if (posts_crit(S, cp0, mem, n, ri->rank)) {
			struct crit_post cpst = { S, a, nc };
			each_crit_flow(S, cp0, crit_post_one, &cpst);
			nc = cpst.nc;
		}
	}
	sg_comm_wait_all(a->comms, (size_t)nc);
	sg_barrier_wait(bar);
	/* count merged calls: count x steps latencies, one already in the flows */
	double extra = p->extra_latency_s * t->count + (t->count - 1) * p->alpha_s;
	if (extra > 0)
		sg_actor_sleep_for(extra);
	comm_busy(S, ri, p->sm_channels, -1);
}

static int p2p_peer(const struct sim *S, const struct rank_inst *ri, enum p2p_dir dir,
		    bool sending)
{
	/* FWD goes to stage + 1; a receive of FWD comes from stage - 1 */
	int delta = (dir == P2P_FWD) == sending ? +1 : -1;
	return placement_stage_peer(S->job->pl, ri->rank, ri->stage + delta);
}

static void account_wait(struct rank_inst *ri, int dep, double from, double to);

/* Wait for t's cross-stream deps; on the compute stream, charge each
 * blocked interval to the dependency it waited for. */
static void wait_deps(struct rank_inst *ri, enum stream s, const struct task *t, int it, bool account)
{
	const struct program *pr = ri->prog;
	for (int k = 0; k < t->ndeps; k++) {
		int d = pr->deps[t->dep0 + k];
		if (ri->done[d] > it)
			continue;
		double t0 = simgrid_get_clock();
		while (ri->done[d] <= it) {     /* an earlier iteration's end wakes it too */
			ri->waiting[s] = d;
			sg_sem_acquire(ri->wake[s]);
		}
		double t1 = simgrid_get_clock();
		if (account && t1 > t0)
			account_wait(ri, d, t0, t1);
	}
}

static void account_wait(struct rank_inst *ri, int dep, double from, double to)
{
	double w = to - from;
	if (w <= 0 || dep < 0)
		return;
	const struct task *d = &ri->prog->t[dep];
	if (d->kind == TASK_RECV) {
		double xs = ri->xfer_start[dep];
		double exposed = to - (xs > from ? xs : from);
		if (exposed < 0)
			exposed = 0;
		if (exposed > w)
			exposed = w;
		ri->st->exposed_s[CAT_PP_COMM] += exposed;
		ri->st->bubble_s += w - exposed;
	} else if (d->kind == TASK_COMPUTE && d->stream == STREAM_COMPUTE) {
		ri->st->bubble_s += w;   /* (CPU offload's host-stream work counts as exposed) */
	} else {
		ri->st->exposed_s[d->cat] += w;
	}
}

static void stream_main(int argc, char **argv)
{
	struct stream_arg *a = sg_actor_self_get_data();
	struct sim *S = a->sim;
	struct rank_inst *ri = a->ri;
	const struct program *pr = ri->prog;
	int *list = S->stream_tasks[ri->stage * STREAM_N + a->s];
	int nl = S->stream_ntasks[ri->stage * STREAM_N + a->s];
	sg_comm_t *sends = a->sends;
	int nsends = 0;
	const struct engine_observer *obs = S->job->obs;
	(void)argc, (void)argv;

	int reps = S->job->repeat > 1 ? S->job->repeat : 1;
	for (int it = 0; it < reps && !S->failed; it++) {
		if (it > 0 && a->s == STREAM_COMPUTE)
			ssp_wait(S, ri, it);
		for (int li = 0; li < nl && !S->failed; li++) {
			int ti = list[li];
			const struct task *t = &pr->t[ti];
			wait_deps(ri, a->s, t, it, a->s == STREAM_COMPUTE);
			double start = simgrid_get_clock();
			int peer = -1;
			if (obs && obs->task_start)
				obs->task_start(obs->ctx, ri->rank, pr, ti, start);
			switch (t->kind) {
			case TASK_COMPUTE:
				if (t->time_s > 0)
					run_compute(S, ri, t->time_s * (a->s == STREAM_COMPUTE ? ri->speed : 1),
						    a->s == STREAM_COMPUTE);
				ri->st->compute_s[t->cat] += simgrid_get_clock() - start;
				break;
			case TASK_COLL:
				run_coll(S, a, t);
				ri->st->comm_s[t->cat] += simgrid_get_clock() - start;
				break;
			case TASK_SEND: {
				peer = p2p_peer(S, ri, t->dir, true);
				ri->post_s[ti] = start;
				sends[nsends++] = sg_mailbox_put_async(p2p_mailbox(t->dir, ri->rank, peer),
								       &ri->post_s[ti], (long)ceil(t->bytes));
				/* the mirrors start with the message: now if its
				 * receive is posted, else when it is */
				if (S->job->fold_exact && S->ri[peer].nrecv[t->dir] > ri->nsent[t->dir])
					mirror_p2p_post(S, ri, t->dir, t->bytes);
				ri->nsent[t->dir]++;
				ri->st->sent_bytes[t->cat] += t->bytes;
				S->flows++;
				break;
			}
			case TASK_RECV: {
				peer = p2p_peer(S, ri, t->dir, false);
				if (S->job->fold_exact && S->ri[peer].nsent[t->dir] > ri->nrecv[t->dir])
					mirror_p2p_post(S, &S->ri[peer], t->dir, t->bytes);
				ri->nrecv[t->dir]++;
				const double *post = sg_mailbox_get(p2p_mailbox(t->dir, peer, ri->rank));
				ri->xfer_start[ti] = *post > start ? *post : start;
				ri->st->comm_s[t->cat] += simgrid_get_clock() - ri->xfer_start[ti];
				break;
			}
			}
			if (obs && obs->task_end)
				obs->task_end(obs->ctx, ri->rank, pr, ti, t->kind == TASK_RECV ? ri->xfer_start[ti] : start,
					      simgrid_get_clock(), peer);
			ri->done[ti]++;
			if (t->nwaiters)
				for (int s = 0; s < STREAM_N; s++)
					if (ri->waiting[s] == ti) {
						ri->waiting[s] = -1;
						sg_sem_release(ri->wake[s]);
					}
			S->tasks++;
			if (S->progress.on && !(S->tasks & 4095))
				progress_tick(&S->progress, S->tasks);
		}
		if (a->s == STREAM_COMPUTE)
			ssp_tick(S, ri);
	}
	if (nsends)
		sg_comm_wait_all(sends, (size_t)nsends);
	double now = simgrid_get_clock();
	if (now > ri->st->finish_s)
		ri->st->finish_s = now;
	if (a->s == STREAM_COMPUTE)
		ri->compute_end = now;
	else if (nl && now >= ri->comm_end && a->s != STREAM_RECV_PREV && a->s != STREAM_RECV_NEXT) {
		ri->comm_end = now;
		ri->comm_end_cat = pr->t[list[nl - 1]].cat;
	}
	S->finished++;
}

/* The link sampler (engine_observer.link_sample): a daemon that reads every
 * link's usage each period. It gives up once no task has ended for
 * SAMPLER_IDLE_S of simulated time, so a deadlocked replay still ends
 * (the daemon alone would keep the clock running). */
#define SAMPLER_IDLE_S 100.0
static void sampler_main(int argc, char **argv)
{
	struct sim *S = sg_actor_self_get_data();
	const struct engine_observer *obs = S->job->obs;
	size_t n = sg_link_count();
	sg_link_t *l = sg_link_list();
	long last_tasks = -1;
	double last_progress = 0;
	(void)argc, (void)argv;
	S->links = l;
	for (;;) {
		sg_actor_sleep_for(obs->link_sample_s);
		double now = simgrid_get_clock();
		if (S->tasks != last_tasks) {
			last_tasks = S->tasks;
			last_progress = now;
		} else if (now - last_progress > SAMPLER_IDLE_S)
			return;
		for (size_t i = 0; i < n; i++)
			obs->link_sample(obs->ctx, (int)i, sg_link_get_name(l[i]), now,
					 engine_platform_link_usage(l[i]), sg_link_get_bandwidth(l[i]));
	}
}

static void sink_main(int argc, char **argv)
{
	sg_mailbox_t mb = sg_actor_self_get_data();
	(void)argc, (void)argv;
	for (;;)
		sg_mailbox_get(mb);
}

/* ---- setup --------------------------------------------------------- */

static bool g_initialised;

/* Initialise SimGrid as a pure alpha-beta network and build the platform
 * of nodes nodes of t. Once per process. Returns 0 or -1 (reported). */
static int start_simgrid(const struct topology *t, int nodes, const unsigned char *used,
			 const struct platform_extra *x, bool full_update, double *platform_s,
			 struct diag *d)
{
	int argc = 1;
	char *argv[] = { "ddlsim", NULL };
	xbt_log_control_set("root.thres:critical");
	simgrid_init(&argc, argv);
	/* SimGrid installs its own SIGINT handler (a status dump, then exit 1):
	 * ours removes temporaries and exits 130 (cleanup.h) */
	cleanup_install();
	sg_cfg_set_string("network/model", "CM02");
	sg_cfg_set_boolean("network/crosstraffic", "no");
	sg_cfg_set_double("network/TCP-gamma", 0.0);
	sg_cfg_set_string("contexts/factory", "raw");
	sg_cfg_set_int("contexts/guard-size", 0);
	/* an actor's stack: SimGrid's default is 8 MiB, malloc'ed without
	 * guard pages, and the actors here are shallow (a stream's loop and
	 * SimGrid's calls). Untouched pages cost nothing, but malloc
	 * perturbation (meson test sets MALLOC_PERTURB_) writes every byte:
	 * 512 unfolded ranks took 22 GB and were killed */
	sg_cfg_set_int("contexts/stack-size", 256);
	/* SimGrid's default lazy update of the network model gives a time
	 * that depends on the order the flows of an instant were posted (a
	 * 1024-rank tree all-reduce: 18.06 ms posted by one actor, 19.18 ms
	 * posted by 1024); the full update does not, which folding relies on
	 * (tests/test-fold.c). The collective sweep folds nothing and keeps
	 * the lazy update: with every flow re-solved at each completion, a
	 * 1,024-rank all-to-all takes 139 s instead of 91 s */
	if (full_update)
		sg_cfg_set_string("network/optim", "Full");
	double t0 = wall_now_s();
	if (engine_platform_build_ex(t, nodes, used, x))
		return diag_errf(d, "SimGrid rejected the platform of %d nodes", nodes);
	if (platform_s)
		*platform_s = wall_now_s() - t0;
	return 0;
}

static void start_actor(const char *name, sg_host_t h, xbt_main_func_t fn, void *data,
			bool daemon)
{
	sg_actor_t a = sg_actor_init(name, h);
	sg_actor_set_data(a, data);
	sg_actor_start_(a, fn, 0, NULL);
	if (daemon)
		sg_actor_daemonize(a);
}

static sg_host_t host_of(int rank)
{
	char name[32];
	snprintf(name, sizeof(name), "g%d", rank);
	return sg_host_by_name(name);
}

/* Call fn for every flow rank r posts in its collectives (program prog,
 * groups grp / ngrp) when folding is not exact: its own flows of each
 * collective's plan. Returns -1 if a plan cannot be made, else 0. */
static int each_own_flow(struct sim *S, int r, const struct program *prog,
			 const int *const *grp, const int *ngrp,
			 void (*fn)(void *ctx, const struct task *t, int dst), void *ctx)
{
	for (int i = 0; i < prog->n; i++) {
		const struct task *t = &prog->t[i];
		int n = ngrp[t->group];
		if (t->kind != TASK_COLL || n <= 1 || t->bytes <= 0)
			continue;
		int *bd;
		struct coll_plan *p = plan_get(S, t->group, grp[t->group], n, t->op,
					       t->bytes * t->count, &bd);
		if (!p)
			return -1;
		int o1 = lower(p, NULL, r + 1, false);
		for (int k = lower(p, NULL, r, false); k < o1; k++)
			fn(ctx, t, p->flows[k].dst);
	}
	return 0;
}

static void mark_ends(void *ctx, const struct coll_flow *f)
{
	((unsigned char *)ctx)[f->src] = 1;
	((unsigned char *)ctx)[f->dst] = 1;
}

static void mark_dst(void *ctx, const struct task *t, int dst)
{
	(void)t;
	((unsigned char *)ctx)[dst] = 1;
}

/* ---- partial folding: replicas a degraded link touches ------------
 *
 * A folded rank posts nothing, so a flow it would put on a degraded link
 * would be missing from that link. Its replica is simulated whole too:
 * any rank of it whose own collective flows or pipeline messages cross a
 * degraded link marks it (a 1:1 fat tree with leaf 1's uplinks halved,
 * the ring's flows from leaf 0 into leaf 1: +1.5e-4 without them). */
struct deg_walk {
	struct sim *S;
	int src, ndst, dst[64];  /* destinations already routed */
	bool hit;
};

static bool crosses_degraded(struct deg_walk *w, int dst)
{
	for (int i = 0; i < w->ndst; i++)
		if (w->dst[i] == dst)
			return false;
	if (w->ndst < (int)(sizeof(w->dst) / sizeof(w->dst[0])))
		w->dst[w->ndst++] = dst;
	const struct engine_job *job = w->S->job;
	struct topo_hop h[TOPO_MAX_HOPS];
	int n = topology_route(job->topo, w->src, dst, h);
	for (int i = 0; i < n; i++)
		for (int k = 0; k < job->ndegraded; k++)
			if (platform_hop_is(job->topo, &h[i], job->degraded[k].link))
				return true;
	return false;
}

static void deg_flow(void *ctx, const struct task *t, int dst)
{
	struct deg_walk *w = ctx;
	(void)t;
	if (!w->hit && crosses_degraded(w, dst))
		w->hit = true;
}

/* Mark in drep[dp] the replicas not yet marked with a rank whose traffic
 * crosses a degraded link. Returns 0, or -1 if a plan cannot be made. */
static int mark_degraded_replicas(struct sim *S, unsigned char *drep)
{
	const struct placement *pl = S->job->pl;
	int pp = pl->size[DIM_PP];
	for (int r = 0; r < pl->nranks; r++) {
		int c[DIM_N];
		placement_coords(pl, r, c);
		if (drep[c[DIM_DP]])
			continue;
		struct rank_inst ri = { .rank = r };
		resolve_groups(S, &ri);
		const struct program *prog = S->job->rank_prog ? S->job->rank_prog[r]
							       : S->job->stage_prog[c[DIM_PP]];
		struct deg_walk w = { .S = S, .src = r };
		if (each_own_flow(S, r, prog, ri.grp, ri.ngrp, deg_flow, &w))
			return -1;
		for (int dlt = -1; dlt <= 1 && !w.hit; dlt += 2)
			if (c[DIM_PP] + dlt >= 0 && c[DIM_PP] + dlt < pp)
				w.hit = crosses_degraded(&w, placement_stage_peer(pl, r, c[DIM_PP] + dlt));
		if (w.hit)
			drep[c[DIM_DP]] = 1;
	}
	return 0;
}

/* Mark in used the GPUs the simulated ranks' collective flows go to
 * (what run_coll posts when folding is not exact), before the platform
 * and the rank instances exist. */
static int mark_flow_peers(struct sim *S, unsigned char *used)
{
	const struct placement *pl = S->job->pl;

	for (int r = 0; r < pl->nranks; r++) {
		if (!S->active[r])
			continue;
		int c[DIM_N];
		placement_coords(pl, r, c);
		struct rank_inst ri = { .rank = r };
		resolve_groups(S, &ri);
		const struct program *prog = S->job->rank_prog ? S->job->rank_prog[r]
							       : S->job->stage_prog[c[DIM_PP]];
		if (each_own_flow(S, r, prog, ri.grp, ri.ngrp, mark_dst, used))
			return -1;
		/* the busiest members' transfers this rank posts (plan_crit) */
		for (int i = 0; i < prog->n; i++) {
			const struct task *t = &prog->t[i];
			int n = ri.ngrp[t->group];
			if (t->kind != TASK_COLL || n <= 1 || t->bytes <= 0)
				continue;
			struct cplan *cp = cplan_get(S, t->group, ri.grp[t->group], n, t->op,
						     t->bytes * t->count);
			if (!cp)
				return -1;
			if (posts_crit(S, cp, ri.grp[t->group], n, r))
				each_crit_flow(S, cp, mark_ends, used);
		}
	}
	return 0;
}

/* make_sinks' state: the mailboxes that have a sink (open addressing). */
struct sink_set {
	const struct sim *S;
	int rank;
	size_t cap, n;
	sg_mailbox_t *mb;
};

static void sink_add(void *ctx, const struct task *t, int dst)
{
	struct sink_set *ss = ctx;
	if (ss->S->active[dst])
		return;
	sg_mailbox_t mb = coll_mailbox(t->stream, ss->rank, dst);
	size_t h = ((size_t)mb >> 4) % ss->cap;
	while (ss->mb[h] && ss->mb[h] != mb)
		h = (h + 1) % ss->cap;
	if (ss->mb[h])
		return;
	ss->mb[h] = mb;
	if (++ss->n * 2 > ss->cap) { /* grow and rehash */
		size_t ncap = ss->cap * 2;
		sg_mailbox_t *ns = xcalloc(ncap, sizeof(*ns));
		for (size_t q = 0; q < ss->cap; q++)
			if (ss->mb[q]) {
				size_t g = ((size_t)ss->mb[q] >> 4) % ncap;
				while (ns[g])
					g = (g + 1) % ncap;
				ns[g] = ss->mb[q];
			}
		free(ss->mb);
		ss->mb = ns;
		ss->cap = ncap;
	}
	char name[64];
	snprintf(name, sizeof(name), "sink_%d_%d_%d", t->stream, ss->rank, dst);
	start_actor(name, host_of(dst), sink_main, mb, true);
}

/* Create a daemon sink for every mailbox a simulated rank sends collective
 * flows on to a folded rank, standing in for the folded receiver. */
static int make_sinks(struct sim *S)
{
	const struct placement *pl = S->job->pl;
	struct sink_set ss = { .S = S, .cap = 1024, .mb = xcalloc(1024, sizeof(sg_mailbox_t)) };
	int rc = 0;

	for (int r = 0; r < pl->nranks && !rc; r++) {
		struct rank_inst *ri = &S->ri[r];
		if (!ri->prog)
			continue;
		ss.rank = r;
		rc = each_own_flow(S, r, ri->prog, ri->grp, ri->ngrp, sink_add, &ss);
	}
	free(ss.mb);
	return rc;
}

int engine_run(const struct engine_job *job, struct engine_result *out, struct diag *d)
{
	const struct placement *pl = job->pl;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (g_initialised)
		return diag_errf(d, "the simulation engine runs once per process");
	g_initialised = true;

	if (topology_check_nodes(job->topo, job->nodes, d))
		return -1;

	struct sim S = { .job = job };
	g_sim = &S;
	int N = pl->nranks, pp = pl->size[DIM_PP];
	S.ri = xcalloc((size_t)N, sizeof(*S.ri));
	S.active = xcalloc((size_t)N, sizeof(*S.active));
	S.bars = xcalloc((size_t)N * GROUP_N * STREAM_N, sizeof(*S.bars));
	for (int g = 0; g < GROUP_N; g++)
		S.gmem[g] = xcalloc((size_t)N, sizeof(*S.gmem[g]));
	S.stream_tasks = xcalloc((size_t)pp * STREAM_N, sizeof(*S.stream_tasks));
	S.stream_ntasks = xcalloc((size_t)pp * STREAM_N, sizeof(*S.stream_ntasks));
	out->rank = xcalloc((size_t)N, sizeof(*out->rank));
	out->nranks = N;

	for (int s = 0; s < pp; s++) {
		const struct program *pr = job->stage_prog[s];
		for (int k = 0; k < STREAM_N; k++)
			S.stream_tasks[s * STREAM_N + k] = xreallocarray(NULL, (size_t)pr->n + 1, sizeof(int));
		for (int i = 0; i < pr->n; i++) {
			int k = s * STREAM_N + pr->t[i].stream;
			S.stream_tasks[k][S.stream_ntasks[k]++] = i;
		}
	}
	/* folded: rank (tp 0, cp 0) of every stage of the representative
	 * replica, the first data-parallel replica without a distinct rank;
	 * a replica with one (a straggler, a throttled GPU) is simulated
	 * whole, its ranks standing for themselves: its collectives' barriers
	 * hold the representative's as long as the slow rank holds them
	 * (partial folding: 405B on 1,024 GPUs with one straggler simulates
	 * 144 ranks, not 1,024) */
	S.rep_dp = 0;
	unsigned char *drep = NULL;
	if (job->fold && job->distinct) {
		int ndp = pl->size[DIM_DP] * pl->size[DIM_EP];
		drep = xcalloc((size_t)ndp, 1);
		for (int r = 0; r < N; r++)
			if (job->distinct[r]) {
				int c[DIM_N];
				placement_coords(pl, r, c);
				drep[c[DIM_DP]] = 1;
			}
		if (job->ndegraded > 0 && !job->fold_exact && mark_degraded_replicas(&S, drep)) {
			diag_errf(d, "a collective plan could not be made");
			free(drep);
			goto out;
		}
		while (S.rep_dp < ndp - 1 && drep[S.rep_dp])
			S.rep_dp++;
	}
	if (job->fold && !job->fold_exact && !job->ps) {
		int m = majority_replica(&S, drep, S.rep_dp);
		if (m < 0) {
			diag_errf(d, "a collective plan could not be made");
			free(drep);
			goto out;
		}
		S.rep_dp = m;
	}
	for (int r = 0; r < N; r++) {
		int c[DIM_N];
		placement_coords(pl, r, c);
		S.active[r] = !job->fold || (drep && drep[c[DIM_DP]]) ||
			      (c[DIM_TP] == 0 && c[DIM_CP] == 0 && c[DIM_DP] == S.rep_dp);
	}
	free(drep);
	/* the platform holds the simulated ranks and every GPU they talk to;
	 * folded, also the GPUs of the mirror traffic that is posted */
	const struct topology *topo = job->topo;
	int ngpus = job->nodes * topo->gpus_per_node;
	unsigned char *used = xcalloc((size_t)ngpus, 1);
	int *grp = xreallocarray(NULL, (size_t)N + 2, sizeof(*grp));
	S.stamp = xcalloc((size_t)N, sizeof(*S.stamp));
	for (int g = 0; g < GROUP_N && job->fold; g++)
		S.isig[g] = xcalloc((size_t)N, sizeof(*S.isig[g]));
	/* cheap folding posts only the simulated ranks' own flows: the
	 * platform needs their destinations, not every member of their
	 * groups (building every node made the load quadratic: SimGrid
	 * checks each new name against the whole platform) */
	bool narrow = job->fold && !job->fold_exact && !job->ps;
	for (int r = 0; r < N; r++) {
		if (!S.active[r])
			continue;
		int c[DIM_N];
		placement_coords(pl, r, c);
		used[r] = 1;
		for (int g = 0; g < GROUP_N && !narrow; g++) {
			int n = placement_group(pl, g, r, grp);
			for (int i = 0; i < n; i++)
				used[grp[i]] = 1;
		}
		for (int dlt = -1; dlt <= 1; dlt += 2)
			if (c[DIM_PP] + dlt >= 0 && c[DIM_PP] + dlt < pp)
				used[placement_stage_peer(pl, r, c[DIM_PP] + dlt)] = 1;
	}
	if ((job->fold_exact && fold_closure(&S, used)) || (narrow && mark_flow_peers(&S, used))) {
		free(grp);
		free(used);
		diag_errf(d, "cannot plan a collective with algorithm '%s'", job->coll_algo);
		goto out;
	}
	free(grp);
	struct platform_ps pps = { 0, 0, 0 };
	if (job->ps && !job->ps->colocated)
		pps = (struct platform_ps){ job->ps->servers, job->ps->nic_bw_Bps,
					    job->ps->nic_latency_s };
	struct platform_extra px = { &pps, job->degraded, job->ndegraded };
	int started = start_simgrid(job->topo, job->nodes, used, &px, true, &out->platform_s, d);
	if (started) {
		free(used);
		goto out;
	}
	S.host = xcalloc((size_t)N, sizeof(*S.host));
	for (int r = 0; r < N; r++)
		if (used[r])
			S.host[r] = host_of(r);
	free(used);
	if (pps.servers > 0) {
		S.ps_hosts = xcalloc((size_t)pps.servers, sizeof(*S.ps_hosts));
		for (int k = 0; k < pps.servers; k++) {
			char name[32];
			snprintf(name, sizeof(name), "ps%d", k);
			S.ps_hosts[k] = sg_host_by_name(name);
			if (!S.ps_hosts[k]) {
				diag_errf(d, "platform has no parameter server '%s'", name);
				goto out;
			}
		}
	}
	for (int r = 0; r < N; r++) {
		int c[DIM_N];
		placement_coords(pl, r, c);
		struct rank_inst *ri = &S.ri[r];
		ri->rank = r;
		ri->stage = c[DIM_PP];
		ri->st = &out->rank[r];
		ri->st->representative = job->fold && !S.active[r]
					 ? placement_rank(pl, 0, S.rep_dp, c[DIM_PP]) : r;
		ri->st->stage = c[DIM_PP];
		ri->speed = job->compute_scale ? job->compute_scale[r] : 1;
		if (!S.active[r])
			continue;
		out->nsimulated++;
		ri->prog = job->rank_prog ? job->rank_prog[r] : job->stage_prog[ri->stage];
		ri->host = S.host[r];
		if (!ri->host) {
			diag_errf(d, "platform has no host for rank %d", r);
			goto out;
		}
		resolve_groups(&S, ri);
		if (job->fold_exact) {
			mirror_p2p_list(&S, ri, P2P_FWD);
			mirror_p2p_list(&S, ri, P2P_BWD);
		}
		ri->done = xcalloc((size_t)ri->prog->n + 1, sizeof(*ri->done));
		for (int i = 0; i < ri->prog->n; i++)
			ri->ps_nb += ri->prog->t[i].kind == TASK_COLL && ri->prog->t[i].group == GROUP_DP &&
				     ri->prog->t[i].op == COLL_ALLREDUCE;
		if (ri->ps_nb > S.ps_nb)
			S.ps_nb = ri->ps_nb;
		if (job->ps && job->ps->async) {
			ri->ps_seen = xcalloc((size_t)ri->ps_nb + 1, sizeof(*ri->ps_seen));
			ri->ssp = sg_sem_init(0);
		}
		ri->xfer_start = xcalloc((size_t)ri->prog->n + 1, sizeof(double));
		ri->post_s = xcalloc((size_t)ri->prog->n + 1, sizeof(double));
		if (job->sm_count > 1 || job->interference_factor > 0) {
			ri->rate = sg_sem_init(0);
		}
		for (int s = 0; s < STREAM_N; s++) {
			ri->waiting[s] = -1;
			if (S.stream_ntasks[ri->stage * STREAM_N + s])
				S.nargs++;
		}
	}
	S.args = xcalloc((size_t)S.nargs + 1, sizeof(*S.args));
	if (job->fold && !job->fold_exact && make_sinks(&S)) {
		diag_errf(d, "cannot plan a collective with algorithm '%s'", job->coll_algo);
		goto out;
	}
	S.clock = xcalloc((size_t)N, sizeof(*S.clock));
	if (job->ps && job->ps->async)
		S.ps_upd = xcalloc((size_t)N * (S.ps_nb + 1), sizeof(*S.ps_upd));
	for (int r = 0, k = 0; r < N; r++) {
		struct rank_inst *ri = &S.ri[r];
		if (!ri->prog)
			continue;
		for (int s = 0; s < STREAM_N; s++) {
			int nl = S.stream_ntasks[ri->stage * STREAM_N + s];
			if (!nl)
				continue;
			struct stream_arg *a = &S.args[k++];
			*a = (struct stream_arg){ .sim = &S, .ri = ri, .s = s };
			if (s == STREAM_SEND)
				a->sends = xreallocarray(NULL, (size_t)nl * (job->repeat > 1 ? job->repeat : 1),
							 sizeof(*a->sends));
			ri->wake[s] = sg_sem_init(0);
			char name[48];
			snprintf(name, sizeof(name), "r%d_%s", r, stream_name(s));
			start_actor(name, ri->host, stream_main, a, false);
			S.nactors++;
		}
	}
	if (job->obs && job->obs->link_sample && job->obs->link_sample_s > 0 && S.nactors)
		start_actor("link_sampler", S.args[0].ri->host, sampler_main, &S, true);
	if (g_progress && isatty(STDERR_FILENO)) {
		S.progress = (struct progress){ .on = true, .t0 = wall_now_s() };
		for (int r = 0; r < N; r++)
			if (S.ri[r].prog)
				S.progress.total += S.ri[r].prog->n;
	}
	simgrid_run();
	progress_end(&S.progress);

	if (S.failed) {
		diag_errf(d, "cannot plan a collective with algorithm '%s'", job->coll_algo);
		goto out;
	}
	if (S.finished != S.nactors) {
		diag_errf(d, "the simulation deadlocked: %d of %d streams finished",
			  S.finished, S.nactors);
		goto out;
	}
	/* communication still running after the last compute is exposed too */
	for (int r = 0; r < N; r++) {
		struct rank_inst *ri = &S.ri[r];
		if (ri->prog && ri->comm_end > ri->compute_end)
			ri->st->exposed_s[ri->comm_end_cat] += ri->comm_end - ri->compute_end;
	}
	if (job->repeat > 1)    /* the mean iteration of the replayed ones */
		for (int r = 0; r < N; r++) {
			struct engine_rank_stats *st = &out->rank[r];
			if (!S.ri[r].prog)
				continue;
			double k = job->repeat;
			st->finish_s /= k;
			st->bubble_s /= k;
			st->interference_s /= k;
			for (int c = 0; c < CAT_N; c++) {
				st->compute_s[c] /= k;
				st->comm_s[c] /= k;
				st->exposed_s[c] /= k;
				st->sent_bytes[c] /= k;
				st->collectives[c] = (int)(st->collectives[c] / k + 0.5);
			}
		}
	if (S.nstale > 0) {
		qsort(S.stale, S.nstale, sizeof(*S.stale), cmp_double);
		double sum = 0;
		for (size_t i = 0; i < S.nstale; i++)
			sum += S.stale[i];
		out->ps_updates = (long)S.nstale;
		out->staleness_mean = sum / (double)S.nstale;
		out->staleness_p50 = S.stale[(size_t)ceil(0.50 * (double)S.nstale) - 1];
		out->staleness_p95 = S.stale[(size_t)ceil(0.95 * (double)S.nstale) - 1];
		out->staleness_max = S.stale[S.nstale - 1];
	}
	for (int r = 0; r < N; r++) {
		int rep = out->rank[r].representative;
		if (rep != r) {
			int stage = out->rank[r].stage;
			out->rank[r] = out->rank[rep];
			out->rank[r].representative = rep;
			out->rank[r].stage = stage;
		}
		if (out->rank[r].finish_s > out->iteration_s)
			out->iteration_s = out->rank[r].finish_s;
	}
	if (job->repeat > 1) {
		/* asynchronous ranks run at their own pace: the job's rate is
		 * the mean of theirs (samples per second add up) */
		double rate = 0;
		for (int r = 0; r < N; r++)
			rate += 1 / out->rank[r].finish_s / N;
		out->iteration_s = 1 / rate;
	}
	out->flows = S.flows;
	out->collectives = S.collectives;
	out->tasks = S.tasks;
	rc = 0;
out:
	for (size_t i = 0; i < S.nplans_cap; i++)
		if (S.plans && S.plans[i].p) {
			coll_plan_destroy(S.plans[i].p);
			free(S.plans[i].by_dst);
			free(S.plans[i].cflows);
			free(S.plans[i].mir);
		}
	for (size_t i = 0; i < S.nloose; i++)
		engine_platform_comm_release(S.loose[i]);
	free(S.loose);
	free(S.host);
	free(S.uf);
	free(S.rooted);
	free(S.lown);
	free(S.lpair);
	free(S.lmark);
	for (int g = 0; g < GROUP_N; g++)
		free(S.isig[g]);
	free(S.lkey);
	free(S.lid);
	free(S.stamp);
	free(S.plans);
	free(S.links);
	free(S.ps_hosts);
	free(S.clock);
	free(S.ps_upd);
	free(S.stale);
	for (int k = 0; k < S.nargs && S.args; k++) {
		free(S.args[k].comms);
		free(S.args[k].sends);
	}
	free(S.args);
	for (int r = 0; r < N; r++) {
		for (int s = 0; s < STREAM_N; s++)
			if (S.ri[r].wake[s])
				sg_sem_destroy(S.ri[r].wake[s]);
		if (S.ri[r].rate)
			sg_sem_destroy(S.ri[r].rate);
		if (S.ri[r].ssp)
			sg_sem_destroy(S.ri[r].ssp);
		free(S.ri[r].ps_seen);
		free(S.ri[r].done);
		free(S.ri[r].xfer_start);
		free(S.ri[r].post_s);
		free(S.ri[r].mp2p[0]);
		free(S.ri[r].mp2p[1]);
	}
	for (int k = 0; k < pp * STREAM_N; k++)
		free(S.stream_tasks[k]);
	free(S.stream_tasks);
	free(S.stream_ntasks);
	for (size_t k = 0; S.bars && k < (size_t)N * GROUP_N * STREAM_N; k++)
		if (S.bars[k])
			sg_barrier_destroy(S.bars[k]);
	free(S.bars);
	for (int g = 0; g < GROUP_N; g++) {
		for (int r = 0; S.gmem[g] && r < N; r++)
			free(S.gmem[g][r]);
		free(S.gmem[g]);
	}
	free(S.active);
	free(S.ri);
	g_sim = NULL;
	return rc;
}

void engine_result_finish(struct engine_result *r)
{
	free(r->rank);
	memset(r, 0, sizeof(*r));
}

/* ---- collective sweep (ddlsim collective) -------------------------- */

/* One actor per rank runs the sizes one after another on one platform:
 * barrier, the plan's flows of this rank (puts where it is the source,
 * gets where it is the destination), wait, barrier, the plan's extra
 * latency. Rank 0 of the group records each size's time from the first
 * barrier to the end of the extra latency. */
struct sweep {
	const struct topology *t;
	const int *ranks;
	int n;
	struct coll_plan **plans;   /* [npts] */
	int **by_dst;               /* [npts] flow indices sorted by dst */
	struct engine_coll_point *pts;
	int npts;
	sg_bar_t bar;
	int finished;
};

static struct sweep *g_sweep;

static void sweep_main(int argc, char **argv)
{
	struct sweep *W = g_sweep;
	int me = W->ranks[(int)(intptr_t)sg_actor_self_get_data()];
	bool first = me == W->ranks[0];
	void *sink;
	(void)argc, (void)argv;

	for (int s = 0; s < W->npts; s++) {
		struct coll_plan *p = W->plans[s];
		if (!(W->pts[s].bytes > 0))
			continue; /* NCCL launches nothing for a count of 0 */
		sg_barrier_wait(W->bar);
		double t0 = simgrid_get_clock();
		int o0 = lower(p, NULL, me, false), o1 = lower(p, NULL, me + 1, false);
		int i0 = lower(p, W->by_dst[s], me, true), i1 = lower(p, W->by_dst[s], me + 1, true);
		sg_comm_t *c = xreallocarray(NULL, (size_t)(o1 - o0 + i1 - i0 + 1), sizeof(*c));
		int nc = 0;
		for (int i = o0; i < o1; i++)
			c[nc++] = sg_mailbox_put_async(coll_mailbox(0, p->flows[i].src, p->flows[i].dst),
						       &dummy_payload, (long)ceil(p->flows[i].bytes));
		for (int i = i0; i < i1; i++) {
			const struct coll_flow *f = &p->flows[W->by_dst[s][i]];
			c[nc++] = sg_mailbox_get_async(coll_mailbox(0, f->src, f->dst), &sink);
		}
		sg_comm_wait_all(c, (size_t)nc);
		free(c);
		sg_barrier_wait(W->bar);
		if (p->extra_latency_s > 0)
			sg_actor_sleep_for(p->extra_latency_s);
		if (first)
			W->pts[s].time_s = simgrid_get_clock() - t0;
	}
	W->finished++;
}


int engine_collective_sweep(const struct topology *t, int nodes, const int *ranks, int n,
			    enum coll_op op, const char *algo, struct engine_coll_point *pts,
			    int npts, struct diag *d)
{
	for (int s = 0; s < npts; s++)
		pts[s].op = op;
	return engine_collective_run(t, nodes, ranks, n, algo, pts, npts, d);
}

int engine_platform_load(const struct topology *t, int nodes, double *platform_s, long *hosts,
			 struct diag *d)
{
	if (g_initialised)
		return diag_errf(d, "the simulation engine runs once per process");
	g_initialised = true;
	if (topology_check_nodes(t, nodes, d))
		return -1;
	if (start_simgrid(t, nodes, NULL, NULL, true, platform_s, d))
		return -1;
	*hosts = (long)sg_host_count();
	return 0;
}

int engine_collective_run(const struct topology *t, int nodes, const int *ranks, int n,
			  const char *algo, struct engine_coll_point *pts, int npts,
			  struct diag *d)
{
	int rc = -1;
	struct sweep W = { .t = t, .ranks = ranks, .n = n, .pts = pts, .npts = npts };

	if (g_initialised)
		return diag_errf(d, "the simulation engine runs once per process");
	g_initialised = true;
	if (topology_check_nodes(t, nodes, d))
		return -1;
	for (int i = 0; i < n; i++)
		if (ranks[i] < 0 || ranks[i] >= nodes * t->gpus_per_node)
			return diag_errf(d, "rank %d is not a GPU of %d nodes x %d GPUs", ranks[i],
					 nodes, t->gpus_per_node);
	W.plans = xcalloc((size_t)npts + 1, sizeof(*W.plans));
	W.by_dst = xcalloc((size_t)npts + 1, sizeof(*W.by_dst));
	for (int s = 0; s < npts; s++) {
		bool empty = !(pts[s].bytes > 0);
		struct coll_plan *p = coll_plan_create(t, algo, pts[s].op, ranks, n,
						       empty ? 1 : pts[s].bytes);
		if (!p) {
			diag_errf(d, "algorithm '%s' cannot run %s on this group of %d GPUs",
				  algo, coll_op_name(pts[s].op), n);
			goto out;
		}
		W.plans[s] = p;
		W.by_dst[s] = flows_by_dst(p);
		pts[s].algo = p->algo;
		pts[s].proto = p->proto;
		pts[s].ideal_s = p->ideal_time_s;
		pts[s].nccl_s = empty ? 0 : p->nccl_time_s;
		pts[s].ideal_s = empty ? 0 : p->ideal_time_s;
		pts[s].time_s = 0;
	}
	if (n < 2) {
		rc = 0;
		goto out;
	}
	unsigned char *used = xcalloc((size_t)nodes * t->gpus_per_node, 1);
	for (int i = 0; i < n; i++)
		used[ranks[i]] = 1;
	int started = start_simgrid(t, nodes, used, NULL, false, NULL, d);
	free(used);
	if (started)
		goto out;

	g_sweep = &W;
	W.bar = sg_barrier_init((unsigned)n);
	for (int i = 0; i < n; i++) {
		char name[32];
		snprintf(name, sizeof(name), "r%d", ranks[i]);
		start_actor(name, host_of(ranks[i]), sweep_main, (void *)(intptr_t)i, false);
	}
	simgrid_run();
	if (W.finished != n) {
		diag_errf(d, "the simulation deadlocked: %d of %d ranks finished", W.finished, n);
		goto out;
	}
	rc = 0;
out:
	for (int s = 0; s < npts && W.plans; s++) {
		coll_plan_destroy(W.plans[s]);
		free(W.by_dst[s]);
	}
	free(W.plans);
	free(W.by_dst);
	if (W.bar)
		sg_barrier_destroy(W.bar);
	g_sweep = NULL;
	return rc;
}
