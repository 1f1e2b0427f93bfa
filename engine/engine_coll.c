/* engine_coll: collectives on the engine (see engine-private.h).
 *
 * engine_coll_task: the members meet at a barrier, each posts the flows of
 * the group's plan it is the source of (host to host: they start as the
 * barrier opens, the destination posts nothing; plans are cached per
 * group instance, cplan.h), waits for them, meets the others again (the
 * last flow's end), and leaves the plan's latency after: the
 * flows share their links plain max-min and carry no latency of their own
 * (engine_platform.cpp), so the latency is charged once per collective,
 * max(the plan's, its longest route's). The member whose flows end last
 * sleeps it before the second meeting, the others wait through it there
 * (meet_after: a sleep per collective, not per member). A private plan's
 * later instances post one member's flows alone (engine_replay.c).
 * Folded exactly, one simulated member posts every flow of its group and
 * of the mirror groups whose flows can meet simulated ones, host to host
 * (fold.h); folded cheaply, a folded destination is a daemon sink, and
 * the flows around an unequal plan's busiest member are posted too, and
 * on an oversubscribed fat tree the folded ranks' flows over its binding
 * uplinks (fold_uplink.c). */
#include "engine-private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_platform.h"
#include "xalloc.h"

static int dummy_payload;

/* HBM bytes a collective's kernels move per byte each rank puts on the
 * wire [source: the NCCL maintainer, NVIDIA/nccl issue #1428,
 * 2024-09-06: the NVLink rate "needs to be multiplied by at least 2x for
 * memory bandwidth, as we need to store to memory, then read back from
 * it. If you add reading from or writing to user data, it can be 3x"]:
 * the lower bound, 2, for the Simple protocol. */
#define ENGINE_NCCL_HBM_PER_WIRE 2.0

/* What the buffer lines a protocol stores and reads back hold per byte of
 * data [source: NVIDIA/nccl ea38312 src/include/devcomm.h: union
 * ncclLLFifoLine, 16 bytes of which data1 and data2 are 8; an LL128 line
 * of NCCL_LL128_LINESIZE 128 bytes, NCCL_LL128_DATAELEMS 15 of its 16
 * 8-byte elements data]: LL 2, LL128 128 / 120, Simple 1. */
static double proto_line_factor(const char *proto)
{
	if (proto && !strcmp(proto, "LL"))
		return 2;
	if (proto && !strcmp(proto, "LL128"))
		return 128.0 / 120;
	return 1;
}

/* The HBM bytes per second a rank's kernels of collective p move while it
 * runs (engine.h): its bytes on the wire per rank (nccl-tests' bus bytes)
 * over its uncontended time, stored and read back in its protocol's
 * lines. */
double engine_coll_hbm_Bps(const struct coll_plan *p)
{
	return p->ideal_time_s > 0 ? ENGINE_NCCL_HBM_PER_WIRE * proto_line_factor(p->proto) *
					     p->bus_bytes / p->ideal_time_s
				   : 0;
}

sg_mailbox_t engine_coll_mailbox(int stream, int src, int dst)
{
	return engine_mailbox(MBOX_COLL, stream, src, dst);
}

/* A simulated rank's inbox for the collectives of a stream: a mailbox
 * whose permanent receiver is the actor that runs that stream's tasks on
 * the rank (engine_stream_main), so a flow put there by the source's
 * actor starts when it is put, as a host-to-host transfer does, and
 * stays in the lists of that actor alone. SimGrid 3.32 keeps every
 * host-to-host transfer (Comm::sendto_async, which detaches it) in one
 * list of the whole simulation and removes each by a linear scan when it
 * ends (CommImpl::detach and CommImpl::finish in src/kernel/activity/
 * CommImpl.cpp at v3.32; 3.34 keeps a set, commit 5f8fc2c): with an
 * unfolded data-parallel job's flows in flight at once that was half
 * the CPU at 1,024 ranks and 80 % at 2,048. The receiving actor is in
 * the collective while the flows to it run (the members meet before and
 * after), and takes them out after (inbox_drain). */
sg_mailbox_t engine_inbox(const struct sim *S, int rank, int stream)
{
	/* a stream merged into the compute stream runs on its actor
	 * (engine_stream_merge leaves it no tasks of its own) */
	int stage = S->ri[rank].stage;
	if (!S->stream_ntasks[stage * STREAM_N + stream])
		stream = STREAM_COMPUTE;
	return engine_mailbox(MBOX_INBOX, stream, 0, S->base + rank);
}

/* Take the ended flows out of this actor's inbox: after the members met
 * the second time, every flow of the collective to this rank has ended
 * (each member waited for its own before it met the others), and none of
 * the next can come before this actor joins it. One simcall clears them
 * all: a get per flow cost Llama 2 70B on 256 GPUs of the 2:1 tree,
 * unfolded, 11.4 CPU s against 10.3 before the inboxes; clearing, 10.2.
 * The ended flows are only bookkeeping (SimGrid keeps each finished
 * transfer in the permanent receiver's list until a get or a clear; no
 * new transfer searches that list, MailboxImpl in src/kernel/activity at
 * v3.32), so the clear waits until about ENGINE_INBOX_CLEAR_FLOWS have
 * gathered (flows_in: this member's share of the plan's flows), and the
 * actor's end (engine_inbox_finish): a tensor-parallel ring's one flow
 * per member was a simcall per collective, 1 in 7 of an unfolded run's. */
void engine_inbox_drain(struct stream_arg *a, int flows_in)
{
	a->inbox_held += flows_in;
	if (a->inbox_held < ENGINE_INBOX_CLEAR_FLOWS)
		return;
	engine_inbox_finish(a);
}

void engine_inbox_finish(struct stream_arg *a)
{
	if (!a->inbox_held)
		return;
	a->inbox_held = 0;
	sg_mailbox_t mb = engine_mailbox(MBOX_INBOX, a->s, 0, a->sim->base + a->ri->rank);
	if (engine_platform_mailbox_ready(mb))
		engine_platform_mailbox_clear(mb);
}

/* The longest route latency among cp's flows: the topology's (the plan's
 * alpha), or with degraded links on the platform the routes' own (their
 * latency factors applied), found once per plan. */
static double route_alpha(struct sim *S, struct cplan *cp)
{
	const struct coll_plan *p = cp->p;
	if (S->job->ndegraded == 0)
		return p->alpha_s;
	if (cp->route_alpha_s < 0) {
		double a = 0;
		for (int i = 0; i < p->nflows; i++) {
			const struct coll_flow *f = &p->flows[i];
			sg_host_t hs = S->host[f->src], hd = S->host[f->dst];
			double l = hs && hd ? engine_platform_route_latency(hs, hd) : f->latency_s;
			a = fmax(a, l);
		}
		cp->route_alpha_s = a;
	}
	return cp->route_alpha_s;
}

/* The members meet before the flows; each says the latency it has. */
static void meet_first(struct group_bar *gb, double lat)
{
	if (gb->arrived++ == 0) {
		gb->latency_s = lat;
		gb->same_latency = true;
	} else if (lat != gb->latency_s)
		gb->same_latency = false;
	if (gb->arrived == gb->members)
		gb->arrived = 0;
	sg_barrier_wait(gb->bar);
}

/* The members meet again when the last one's flows end, and leave the
 * latency after. When they all have the same latency (they do: one
 * plan), the last whose flows end sleeps it before it joins and the
 * others wait at the barrier through it: the same instant, one sleep
 * per collective instead of one per member. */
static void meet_after(struct group_bar *gb, double lat, struct cplan_replay *rec)
{
	if (!gb->same_latency) {
		sg_barrier_wait(gb->bar);
		if (lat > 0)
			sg_actor_sleep_for(lat);
		return;
	}
	if (++gb->ended == gb->members) {
		gb->ended = 0;
		engine_replay_end(rec); /* a private plan's first instance */
		if (lat > 0)
			sg_actor_sleep_for(lat);
	}
	sg_barrier_wait(gb->bar);
}

struct crit_post {
	struct sim *S;
	struct stream_arg *a;
	int nc;
	int cat;                /* the posting task's category */
};

/* Post flow f of a task of category cat host to host, after splitting
 * the class plans holding a NIC it crosses (engine_cls_touch). */
static sg_comm_t post_flow(struct sim *S, const struct coll_flow *f, int cat)
{
	engine_cls_touch(S, f->src, f->dst);
	engine_links_count(S, S->host[f->src], S->host[f->dst], ceil(f->bytes), cat);
	S->flows++;
	return engine_platform_sendto_async(S->host[f->src], S->host[f->dst], ceil(f->bytes));
}

static void crit_post_one(void *ctx, const struct coll_flow *f)
{
	struct crit_post *c = ctx;
	XGROW(c->a->comms, c->a->ncomms_cap, (size_t)c->nc + 1);
	c->a->comms[c->nc++] = post_flow(c->S, f, c->cat);
}

/* An unfolded member's flows of the class plan cls (engine_classes.c)
 * into a->comms; returns their count. */
static int post_classes(struct sim *S, struct stream_arg *a, struct cls_inst *ci,
			const struct coll_plan *cls, int cat, double wire_scale)
{
	struct rank_inst *ri = a->ri;
	int o0 = cplan_lower(cls, NULL, ri->rank, false), o1 = cplan_lower(cls, NULL, ri->rank + 1, false);
	int nc = 0;
	XGROW(a->comms, a->ncomms_cap, (size_t)(o1 - o0 + 1));
	for (int i = o0; i < o1; i++) {
		a->comms[nc++] = engine_cls_post(S, ci, ri->rank, &cls->flows[i], cat);
		ri->st->sent_bytes[cat] += cls->flows[i].bytes / wire_scale; /* payload */
	}
	return nc;
}

/* Folded exactly: flows [i0, i1) of q, mirror plan mp or its class plan
 * (cls: posted already, engine_cls_post_plan), into a->comms (*nc) unless
 * posted; the payload of the group's own plan (own) counted for its
 * simulated sources. */
static void post_mirror(struct sim *S, struct stream_arg *a, const struct task *t,
			const struct coll_plan *mp, const struct coll_plan *q, bool cls, bool own,
			int i0, int i1, int *nc)
{
	for (int i = i0; i < i1; i++) {
		const struct coll_flow *f = &q->flows[i];
		if (!cls)
			a->comms[(*nc)++] = post_flow(S, f, t->cat);
		if (own && S->fold.active[f->src])
			S->ri[f->src].st->sent_bytes[t->cat] += f->bytes / mp->wire_scale;
	}
}

/* Folded exactly, the posting member: every flow of the group's plan
 * (or only its own, fold_own_only) and of its mirror groups' into
 * a->comms (*nc), each all-to-all as its class plan where it can
 * (engine_cls_post_plan: its holders into *cis, *ncis). Returns 0, or -1
 * if a plan cannot be made (S->failed set). */
static int post_exact(struct sim *S, struct stream_arg *a, const struct task *t, const int *mem,
		      int n, double bytes, int *nc, struct cls_inst ***cis, int *ncis)
{
	struct rank_inst *ri = a->ri;
	struct cplan *cp = fold_mirrors(&S->fold, ri->stage, t->group, mem, n, t->op, bytes);
	if (!cp) {
		S->failed = true;
		return -1;
	}
	const struct coll_plan *p = cp->mir[0];
	/* the group's own flows: all, or only the representative's where
	 * they stand for the others' (fold_own_only) */
	int o0 = 0, o1 = p->nflows;
	bool own = fold_own_only(&S->fold, cp, t->group, n);
	if (own) {
		o0 = cplan_lower(p, NULL, ri->rank, false);
		o1 = cplan_lower(p, NULL, ri->rank + 1, false);
	}
	size_t need = 1 + (size_t)(o1 - o0);
	for (int m = 1; m < cp->nmir; m++)
		need += (size_t)cp->mir[m]->nflows;
	XGROW(a->comms, a->ncomms_cap, need);
	*cis = xreallocarray(NULL, (size_t)cp->nmir + 1, sizeof(**cis));
	for (int m = 0; m < cp->nmir; m++) {
		const struct coll_plan *mp = cp->mir[m], *cls = NULL;
		struct cls_inst *ci = m == 0 && own ? NULL
			: engine_cls_post_plan(S, mp, ri->rank, a->comms, nc, &cls, t->cat);
		if (!ci)
			post_mirror(S, a, t, mp, mp, false, m == 0, m ? 0 : o0, m ? mp->nflows : o1, nc);
		else if (m == 0) /* the payload: class flows carry their pairs' bytes */
			post_mirror(S, a, t, mp, cls, true, true, 0, cls->nflows, nc);
		if (ci)
			(*cis)[(*ncis)++] = ci;
	}
	return 0;
}

/* Unfolded or folded cheaply, a member posts its own flows of plan p:
 * all start now (every member left the barrier at this instant), into a
 * simulated destination's inbox (engine_make_inboxes), and to a folded
 * one's sink through its mailbox (the sink takes them one at a time); a
 * folded source sends nothing. Then, where this member posts
 * them (fold_posts_crit), the flows around an unequal plan's busiest
 * member, and (fold_posts_uplink_copies) the folded ranks' copies over
 * an oversubscribed tree's binding uplinks. Returns the count of
 * a->comms, or -1 if the copies cannot be planned (S->failed set). */
static int post_own(struct sim *S, struct stream_arg *a, const struct task *t,
		    const struct coll_plan *p, const int *mem, int n, double bytes)
{
	struct rank_inst *ri = a->ri;
	int nc = 0, o0 = cplan_lower(p, NULL, ri->rank, false), o1 = cplan_lower(p, NULL, ri->rank + 1, false);
	XGROW(a->comms, a->ncomms_cap, (size_t)(o1 - o0 + 1));
	sg_comm_t *c = a->comms;
	for (int i = o0; i < o1; i++) {
		const struct coll_flow *f = &p->flows[i];
		engine_cls_touch(S, f->src, f->dst);
		engine_links_count(S, S->host[f->src], S->host[f->dst], ceil(f->bytes), t->cat);
		/* to a simulated rank's actor, or to a folded one's sink
		 * (engine_make_sinks: SimGrid says its host) */
		bool in = S->fold.active[f->dst];
		sg_mailbox_t mb = in ? engine_inbox(S, f->dst, t->stream)
				     : engine_coll_mailbox(t->stream, S->base + f->src, S->base + f->dst);
		c[nc++] = engine_platform_put_async(mb, &dummy_payload, (long)ceil(f->bytes), ri->host,
						    in ? S->host[f->dst] : NULL);
		ri->st->sent_bytes[t->cat] += f->bytes / p->wire_scale; /* payload */
		S->flows++;
	}
	struct cplan *cp = cplan_get(&S->fold.cache, t->group, mem, n, t->op, bytes); /* found: made before */
	struct crit_post cpst = { S, a, nc, t->cat };
	if (fold_posts_crit(&S->fold, cp, mem, n, ri->rank))
		fold_each_crit_flow(&S->fold, cp, crit_post_one, &cpst);
	if (fold_posts_uplink_copies(&S->fold, ri->rank)) {
		/* the folded ranks' copies over binding uplinks (fold_uplink.c) */
		cp = fold_uplink_flows(&S->fold, ri->stage, t->group, mem, n, t->op, bytes);
		if (!cp) {
			S->failed = true;
			return -1;
		}
		for (int i = 0; i < cp->nuflows; i++)
			crit_post_one(&cpst, &cp->uflows[i]);
	}
	return cpst.nc;
}

void engine_coll_task(struct sim *S, struct stream_arg *a, const struct task *t)
{
	struct rank_inst *ri = a->ri;
	const int *mem = ri->grp[t->group];
	int n = ri->ngrp[t->group];
	if (n <= 1 || t->bytes <= 0)
		return;
	double bytes = t->bytes * t->count;
	struct cplan *cp0 = cplan_get(&S->fold.cache, t->group, mem, n, t->op, bytes);
	if (!cp0) {
		S->failed = true;
		return;
	}
	/* the entry cp0 lives in the cache's table, which grows when any
	 * actor makes a plan (while this one sleeps or waits, or here in
	 * fold_mirrors): what it holds is read now, and it is looked up
	 * again before it is used after a wait (4,096 unfolded ranks read a
	 * moved entry: a crash at the latency below) */
	struct coll_plan *p = cp0->p;
	/* the latency of each merged call: the plan's beyond its longest
	 * route, and that route's */
	double lat = (p->extra_latency_s + route_alpha(S, cp0)) * t->count;
	struct group_bar *gb = engine_group_barrier(S, mem[0], t->group, t->stream, mem, n);
	S->collectives++;
	const bool priv = cp0->priv; /* read before the sleep, which may move cp0 */
	if (t->launch_s > 0)
		sg_actor_sleep_for(t->launch_s * t->count);
	ri->st->collectives[t->cat] += t->count;

	if (priv) {
		/* a private plan (engine_replay.c) whose first instance ran */
		if (t->launch_s > 0) /* the entry may have moved while it slept */
			cp0 = cplan_get(&S->fold.cache, t->group, mem, n, t->op, bytes);
		if (engine_replay_ready(cp0)) {
			engine_replay_coll(S, a, t, cp0, gb, mem, n, lat);
			return;
		}
	}
	meet_first(gb, lat);
	double hbm = engine_coll_hbm_Bps(p);
	engine_comm_busy(ri, p->sm_channels, hbm, +1);
	int nc = 0, ncis = 0;
	struct cls_inst **cis = NULL;   /* folded exactly: the class plans posted */
	const struct coll_plan *cls;
	cp0 = cplan_get(&S->fold.cache, t->group, mem, n, t->op, bytes); /* found: made above */
	struct cplan_replay *rec = NULL;
	if (cp0->priv)
		rec = engine_replay_begin(cp0); /* a private plan's first instance */
	struct cls_inst *ci = engine_cls_join(S, gb, cp0, mem, n, &cls);
	if (ci) {
		nc = post_classes(S, a, ci, cls, t->cat, p->wire_scale);
	} else if (S->job->fold_exact) {
		/* one simulated member posts every flow of the group and of its
		 * mirror groups, host to host; the others wait at the barrier */
		if (fold_posts_group(&S->fold, mem, n, ri->rank) &&
		    post_exact(S, a, t, mem, n, bytes, &nc, &cis, &ncis))
			return;
	} else {
		nc = post_own(S, a, t, p, mem, n, bytes);
		if (nc < 0)
			return;
	}
	if (ci)
		engine_cls_wait(S, &ci, 1, ri->rank, a->comms, nc);
	else if (ncis)
		engine_cls_wait(S, cis, ncis, ri->rank, a->comms, nc);
	else
		engine_platform_wait_all((void **)a->comms, (size_t)nc);
	free(cis);
	meet_after(gb, lat, rec);
	if (!ci && !S->job->fold_exact)
		engine_inbox_drain(a, (p->nflows + n - 1) / n);
	engine_comm_busy(ri, p->sm_channels, hbm, -1);
}

static void sink_main(int argc, char **argv)
{
	sg_mailbox_t mb = sg_actor_self_get_data();
	(void)argc, (void)argv;
	for (;;)
		sg_mailbox_get(mb);
}

/* engine_make_sinks' state: the mailboxes that have a sink (open addressing). */
struct sink_set {
	const struct sim *S;
	int rank;
	size_t cap, n;
	sg_mailbox_t *mb;
};

static void sink_add(void *ctx, const struct task *t, int dst)
{
	struct sink_set *ss = ctx;
	if (ss->S->fold.active[dst])
		return;
	sg_mailbox_t mb = engine_coll_mailbox(t->stream, ss->S->base + ss->rank, ss->S->base + dst);
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
	engine_start_actor(name, engine_host_of(dst), sink_main, mb, true);
}

/* Create a daemon sink for every mailbox a simulated rank sends collective
 * flows on to a folded rank, standing in for the folded receiver. */
int engine_make_sinks(struct sim *S)
{
	const struct placement *pl = S->job->pl;
	struct sink_set ss = { .S = S, .cap = 1024, .mb = xcalloc(1024, sizeof(sg_mailbox_t)) };
	int rc = 0;

	for (int r = 0; r < pl->nranks && !rc; r++) {
		struct rank_inst *ri = &S->ri[r];
		if (!ri->prog)
			continue;
		ss.rank = r;
		rc = fold_each_own_flow(&S->fold, r, ri->prog, ri->grp, ri->ngrp, sink_add, &ss);
	}
	free(ss.mb);
	return rc;
}
