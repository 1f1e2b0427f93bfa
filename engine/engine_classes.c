/* engine_classes: a training run's rail-aligned all-to-all posted as one
 * flow per flow class while nothing else crosses its NICs, and split back
 * into its per-pair flows the instant anything does (see
 * engine-private.h).
 *
 * The rail-aligned all-to-all (fabric/coll_direct.c) sends the same bytes
 * b from every GPU (A, r) to GPU r of each of the other nn - 1 nodes of
 * its group. Where only NICs can bind (fabric/coll_classes.c: a
 * non-blocking or rail fabric, a fat tree without oversubscription, no
 * degraded link) and nothing but these flows crosses the group's NICs,
 * max-min gives every one of them B / (nn - 1) (each NIC sends nn - 1 and
 * receives nn - 1, all alike): they move in step, and one flow per NIC of
 * (nn - 1) b to the next node of the group (coll_plan_class_copy) moves
 * at B the same bytes in the same time. That holds only while the group
 * has its NICs to itself: in a training run a pipeline message, a
 * gradient reduction or a parameter server's flow can cross them at any
 * time, and max-min would give the single flow one share where the pairs
 * took nn - 1 (fabric/coll_classes.c). So the engine proves it as it
 * goes:
 *   - a collective posts its class plan only if, at that instant, none of
 *     its members' NICs carries a flow (the links' SimGrid usage is 0),
 *     had a flow posted at this instant, or holds another class plan;
 *     the NICs are then held by it (occ);
 *   - every other flow the engine starts across a held NIC (collectives,
 *     pipeline messages as either side posts, parameter servers) first
 *     splits the holder: each class flow still moving is cancelled and
 *     its nn - 1 pairs are posted with their shares of what it had left.
 *     Until then each pair had moved exactly what the class flow's share
 *     says (they moved in step), so from that instant on the run is the
 *     per-pair run: the split is exact (to half a byte a pair: SimGrid
 *     moves whole bytes; 5e-11 of the iteration in tests/test-classes.c's
 *     split run), and splitting early is always
 *     safe (a flow on a busy NIC is only ever seen too early, never too
 *     late: the test is conservative).
 * The collective's latency, its flows' total bytes per member and its
 * NVLink flows are the per-pair plan's. Unfolded, every member posts its
 * own flows of the class plan; folded exactly, the posting member posts
 * the whole class plan of its group and of each mirror group
 * (fold_mirrors), each holding its own NICs. Runs folded cheaply post
 * each simulated rank's own flows, nn - 1 per NIC already; runs with
 * degraded links keep the pairs (the reason is reported,
 * engine_result.cls_why). simulation.collective_pairs keeps the pairs
 * everywhere (tests/test-classes.c compares).
 * The links' traffic (engine_links.c) counts a class flow's bytes as its
 * pairs' on the pairs' routes when it is posted (a split's pairs then
 * count nothing): the bytes per link are the per-pair run's. Its busy
 * time and peak follow the class flow's own route until it is split: the
 * per-pair run's on the NICs (each sends and receives at B either way),
 * not always on the links past them. */
#include "engine-private.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "engine_platform.h"
#include "hash.h"
#include "xalloc.h"

/* A class flow: who posted it, its ends, its transfer (NULL once its
 * poster has waited for it). */
struct cls_flow {
	int owner, src, dst;
	void *c;
};

/* A replacement pair flow of a split, waited for by owner. */
struct cls_rep {
	int owner;
	void *c;
};

struct cls_inst {
	const struct coll_plan *pairs;  /* the plan cache's, stable */
	int *nics, nnics;               /* the NIC keys held */
	struct cls_flow *f;
	size_t nf, fcap;
	struct cls_rep *rep;
	size_t nrep, repcap;
	int refs;                       /* posters not done waiting */
	bool split;
	int cat;                        /* the posting task's category (engine_links_count) */
};

/* The NIC of GPU r (node x nics + NIC index), or -1: no NIC of its own. */
static int nic_key(const struct topology *t, int r)
{
	int nic = t->nics > 0 ? t->gpu_nic[topology_local_of(t, r)] : -1;
	return nic < 0 ? -1 : topology_node_of(t, r) * t->nics + nic;
}

void engine_cls_init(struct sim *S)
{
	const struct engine_job *job = S->job;
	struct engine_cls *C = &S->cls;
	C->off_why = NULL;
	if (job->ndegraded > 0)
		C->off_why = "a degraded link can bind: per pair";
	else if (job->collective_pairs)
		C->off_why = "simulation.collective_pairs is set: per pair";
	/* folded cheaply, each simulated rank posts its own flows, nn - 1
	 * per NIC already: nothing to do */
	C->on = (!job->fold || job->fold_exact) && !C->off_why;
	if (!C->on)
		return;
	C->nkeys = job->nodes * (job->topo->nics > 0 ? job->topo->nics : 0);
	C->occ = xcalloc((size_t)C->nkeys + 1, sizeof(*C->occ));
	C->stamp_s = xreallocarray(NULL, (size_t)C->nkeys + 1, sizeof(*C->stamp_s));
	for (int k = 0; k < C->nkeys; k++)
		C->stamp_s[k] = -1;
	for (int d = 0; d < 2; d++)
		C->link[d] = xcalloc((size_t)C->nkeys + 1, sizeof(*C->link[d]));
}

void engine_cls_finish(struct sim *S)
{
	for (size_t i = 0; i < S->cls.mapcap; i++)
		coll_plan_destroy(S->cls.map[i].cls);
	free(S->cls.map);
	free(S->cls.occ);
	free(S->cls.stamp_s);
	free(S->cls.link[0]);
	free(S->cls.link[1]);
}

/* Why a multi-node all-to-all stayed per pair: the first reason, kept. */
static void note_why(struct sim *S, const char *why)
{
	if (why && !S->cls.why)
		S->cls.why = why;
}

/* Whether NIC key k (of GPU r; peer a GPU of another node) carries a
 * flow now or had one posted at this instant. */
static bool nic_busy(struct sim *S, int k, int r, int peer, double now)
{
	struct engine_cls *C = &S->cls;
	if (C->occ[k] || C->stamp_s[k] == now)
		return true;
	for (int d = 0; d < 2; d++) {
		if (!C->link[d][k])
			C->link[d][k] = d ? engine_platform_route_end(S->host[peer], S->host[r], true)
					  : engine_platform_route_end(S->host[r], S->host[peer], false);
		if (!C->link[d][k] || engine_platform_link_usage(C->link[d][k]) > 0)
			return true;
	}
	return false;
}

/* A new holder of the group mem's NICs for the per-pair plan p, or NULL
 * if one of them is busy. */
static struct cls_inst *hold(struct sim *S, const struct coll_plan *p, const int *mem, int n)
{
	const struct topology *t = S->job->topo;
	double now = simgrid_get_clock();
	int node0 = topology_node_of(t, mem[0]), far = -1;
	for (int i = 0; i < n && far < 0; i++)
		if (topology_node_of(t, mem[i]) != node0)
			far = mem[i];
	for (int i = 0; i < n; i++) {
		int k = nic_key(t, mem[i]);
		int peer = topology_node_of(t, mem[i]) != node0 ? mem[0] : far;
		if (k < 0 || far < 0 || nic_busy(S, k, mem[i], peer, now))
			return NULL;
	}
	struct cls_inst *ci = xcalloc(1, sizeof(*ci));
	ci->pairs = p;
	ci->nics = xreallocarray(NULL, (size_t)n, sizeof(*ci->nics));
	for (int i = 0; i < n; i++) {
		int k = nic_key(t, mem[i]);
		ci->nics[ci->nnics++] = k;
		S->cls.occ[k] = ci;
	}
	S->cls.posted++;
	return ci;
}

/* The slot of plan p in a map of cap slots (a power of two): its entry's
 * or the empty one where it goes (open addressing on the plan's address:
 * the plan cache's plans never move). */
static size_t probe(const struct cls_map *map, size_t cap, const struct coll_plan *p)
{
	size_t j = hash_slot((uintptr_t)p, cap);
	while (map[j].pairs && map[j].pairs != p)
		j = (j + 1) & (cap - 1);
	return j;
}

/* The slot of plan p in the map of class plans, grown as needed. */
static struct cls_map *map_slot(struct engine_cls *C, const struct coll_plan *p)
{
	if ((C->nmap + 1) * 2 > C->mapcap) {
		size_t ncap = C->mapcap ? 2 * C->mapcap : 256;
		struct cls_map *nm = xcalloc(ncap, sizeof(*nm));
		for (size_t i = 0; i < C->mapcap; i++)
			if (C->map[i].pairs)
				nm[probe(nm, ncap, C->map[i].pairs)] = C->map[i];
		free(C->map);
		C->map = nm;
		C->mapcap = ncap;
	}
	return &C->map[probe(C->map, C->mapcap, p)];
}

/* The class plan of p, made on first use; NULL (the reason noted) if it
 * stays per pair. */
static const struct coll_plan *class_plan(struct sim *S, const struct coll_plan *p)
{
	struct cls_map *e = map_slot(&S->cls, p);
	if (!e->pairs) {
		e->pairs = p;
		e->cls = coll_plan_class_copy(S->job->topo, p, &e->why);
		S->cls.nmap++;
	}
	if (!e->cls)
		note_why(S, e->why);
	return e->cls;
}

/* Whether p's flows cross nodes. */
static bool crosses_nodes(const struct topology *t, const struct coll_plan *p)
{
	for (int i = 0; i < p->nflows; i++)
		if (topology_node_of(t, p->flows[i].src) != topology_node_of(t, p->flows[i].dst))
			return true;
	return false;
}

/* The holder of the NICs of group mem for p's class plan (*cls), where p
 * is a multi-node all-to-all whose class plan exists and whose NICs are
 * all idle now; else NULL, the reason noted. */
static struct cls_inst *try_hold(struct sim *S, const struct coll_plan *p, const int *mem, int n,
				 const struct coll_plan **cls)
{
	*cls = NULL;
	if (p->op != COLL_ALLTOALL || !crosses_nodes(S->job->topo, p))
		return NULL;
	if (!S->cls.on) {
		note_why(S, S->cls.off_why);
		return NULL;
	}
	*cls = class_plan(S, p);
	return *cls ? hold(S, p, mem, n) : NULL;
}

struct cls_inst *engine_cls_join(struct sim *S, struct group_bar *gb, struct cplan *c,
				 const int *mem, int n, const struct coll_plan **cls)
{
	*cls = NULL;
	if (c->p->op != COLL_ALLTOALL || S->job->fold)
		return NULL;    /* folded exactly: engine_cls_post_plan() */
	if (gb->cls_posters++ == 0)
		gb->cls = try_hold(S, c->p, mem, n, &gb->cls_plan);
	struct cls_inst *ci = gb->cls;
	if (gb->cls_posters == gb->members)
		gb->cls_posters = 0;
	if (!ci || ci->split)
		return NULL;
	ci->refs++;
	*cls = gb->cls_plan;
	return ci;
}

/* The bytes the inter-node pairs of src move in ci's per-pair plan, each
 * rounded up to whole bytes as the engine posts them; their flows are
 * [*i0, *i1) of the plan. */
static double pairs_bytes(const struct topology *t, const struct cls_inst *ci, int src, int *i0,
			  int *i1)
{
	const struct coll_plan *p = ci->pairs;
	int na = topology_node_of(t, src);
	double tot = 0;
	*i0 = cplan_lower(p, NULL, src, false);
	*i1 = cplan_lower(p, NULL, src + 1, false);
	for (int i = *i0; i < *i1; i++)
		if (topology_node_of(t, p->flows[i].dst) != na)
			tot += ceil(p->flows[i].bytes);
	return tot;
}

void *engine_cls_post(struct sim *S, struct cls_inst *ci, int owner, const struct coll_flow *f,
		      int cat)
{
	const struct topology *t = S->job->topo;
	double bytes = ceil(f->bytes);
	bool cross = topology_node_of(t, f->src) != topology_node_of(t, f->dst);
	int i0, i1;
	if (cross) /* what its pairs move, to the byte (not ceil of the sum) */
		bytes = pairs_bytes(t, ci, f->src, &i0, &i1);
	void *c = engine_platform_sendto_async(S->host[f->src], S->host[f->dst], bytes);
	ci->cat = cat;
	if (cross) /* the links count the pairs it stands for, on their routes */
		for (int i = i0; i < i1; i++) {
			const struct coll_flow *q = &ci->pairs->flows[i];
			if (topology_node_of(t, q->dst) != topology_node_of(t, f->src))
				engine_links_count(S, S->host[q->src], S->host[q->dst], ceil(q->bytes), cat);
		}
	else
		engine_links_count(S, S->host[f->src], S->host[f->dst], bytes, cat);
	S->flows++;
	if (cross) {
		XGROW(ci->f, ci->fcap, ci->nf + 1);
		ci->f[ci->nf++] = (struct cls_flow){ owner, f->src, f->dst, c };
	}
	return c;
}

/* Post the inter-node pairs of class flow cf with their shares of rem
 * bytes, for its owner to wait for. */
static void post_pairs(struct sim *S, struct cls_inst *ci, const struct cls_flow *cf, double rem)
{
	const struct topology *t = S->job->topo;
	const struct coll_plan *p = ci->pairs;
	int i0, i1, na = topology_node_of(t, cf->src);
	double tot = pairs_bytes(t, ci, cf->src, &i0, &i1);
	for (int i = i0; i < i1 && tot > 0; i++) {
		const struct coll_flow *f = &p->flows[i];
		if (topology_node_of(t, f->dst) == na)
			continue;
		XGROW(ci->rep, ci->repcap, ci->nrep + 1);
		ci->rep[ci->nrep++] = (struct cls_rep){
			cf->owner, engine_platform_sendto_async(S->host[f->src], S->host[f->dst],
								rem * (ceil(f->bytes) / tot)) };
		S->flows++;
	}
}

/* Let go of ci's NICs (stamped: its pairs, if split, start now). */
static void unhold(struct sim *S, struct cls_inst *ci, bool stamp)
{
	double now = simgrid_get_clock();
	for (int i = 0; i < ci->nnics; i++) {
		if (S->cls.occ[ci->nics[i]] == ci)
			S->cls.occ[ci->nics[i]] = NULL;
		if (stamp)
			S->cls.stamp_s[ci->nics[i]] = now;
	}
}

/* Split ci into its per-pair flows (see above). */
static void split(struct sim *S, struct cls_inst *ci)
{
	ci->split = true;
	S->cls.split++;
	unhold(S, ci, true);
	for (size_t j = 0; j < ci->nf; j++) {
		struct cls_flow *cf = &ci->f[j];
		if (!cf->c)
			continue;
		double rem = engine_platform_comm_remaining(cf->c);
		if (rem <= 0)
			continue;
		engine_platform_comm_cancel(cf->c);
		post_pairs(S, ci, cf, rem); /* counted on the links when posted */
	}
}

void engine_cls_touch(struct sim *S, int a, int b)
{
	struct engine_cls *C = &S->cls;
	if (!C->on)
		return;
	const struct topology *t = S->job->topo;
	if (a >= 0 && b >= 0 && topology_node_of(t, a) == topology_node_of(t, b))
		return;                 /* inside a node: no NIC crossed */
	double now = simgrid_get_clock();
	int ends[2] = { a, b };
	for (int e = 0; e < 2; e++) {
		int k = ends[e] >= 0 ? nic_key(t, ends[e]) : -1;
		if (k < 0)
			continue;
		C->stamp_s[k] = now;
		if (C->occ[k])
			split(S, C->occ[k]);
	}
}

/* The members of p (its sources: every member of an all-to-all) into
 * mem (room for p->nflows); returns their count. */
static int plan_members(const struct coll_plan *p, int *mem)
{
	int n = 0;
	for (int i = 0; i < p->nflows; i++)
		if (!n || mem[n - 1] != p->flows[i].src)
			mem[n++] = p->flows[i].src;
	return n;
}

struct cls_inst *engine_cls_post_plan(struct sim *S, const struct coll_plan *p, int owner,
				      sg_comm_t *comms, int *nc, const struct coll_plan **cls, int cat)
{
	*cls = NULL;
	if (p->op != COLL_ALLTOALL)
		return NULL;
	int *mem = xreallocarray(NULL, (size_t)p->nflows + 1, sizeof(*mem));
	const struct coll_plan *c;
	struct cls_inst *ci = try_hold(S, p, mem, plan_members(p, mem), &c);
	free(mem);
	if (!ci)
		return NULL;
	ci->refs = 1;
	for (int i = 0; i < c->nflows; i++)
		comms[(*nc)++] = engine_cls_post(S, ci, owner, &c->flows[i], cat);
	*cls = c;
	return ci;
}

void engine_cls_wait(struct sim *S, struct cls_inst **cis, int ncis, int owner, sg_comm_t *comms,
		     int nc)
{
	for (int i = 0; i < nc; i++)
		engine_platform_comm_wait(comms[i]);
	/* this poster's class flows are over (ended or cancelled): a later
	 * split finds nothing of it to cancel, and no more pairs for it */
	for (int k = 0; k < ncis; k++)
		for (size_t j = 0; j < cis[k]->nf; j++)
			if (cis[k]->f[j].owner == owner)
				cis[k]->f[j].c = NULL;
	for (int i = 0; i < nc; i++)
		engine_platform_comm_release(comms[i]);
	for (int k = 0; k < ncis; k++) {
		struct cls_inst *ci = cis[k];
		for (size_t j = 0; j < ci->nrep; j++)
			if (ci->rep[j].owner == owner) {
				engine_platform_comm_wait(ci->rep[j].c);
				engine_platform_comm_release(ci->rep[j].c);
				ci->rep[j].c = NULL;
			}
		if (--ci->refs > 0)
			continue;
		if (!ci->split)
			unhold(S, ci, false);
		free(ci->nics);
		free(ci->f);
		free(ci->rep);
		free(ci);
	}
}
