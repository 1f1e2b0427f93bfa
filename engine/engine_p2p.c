/* engine_p2p: pipeline messages between adjacent stages (see
 * engine-private.h).
 *
 * A send is posted on the mailbox (direction, src, dst) with its posting
 * time as the payload; the receive takes it, and the transfer's start
 * (the later of the two postings) tells account_wait what part of a wait
 * was the message itself; the receiver then waits the route's latency
 * (the links carry none: plain max-min, engine_platform.cpp). Folded exactly, the replicas' messages that can
 * meet simulated traffic (fold_mirror_p2p), folded cheaply on an
 * oversubscribed fat tree those of the folded ranks over its binding
 * uplinks (fold_uplink_p2p), start host to host at the instant the
 * simulated message starts, its send and receive both posted, and nobody
 * waits for them. */
#include "engine-private.h"

#include <math.h>
#include <stdio.h>

#include "engine_platform.h"
#include "xalloc.h"

static sg_mailbox_t p2p_mailbox(const struct sim *S, int dir, int src, int dst)
{
	return engine_mailbox(MBOX_P2P, dir, S->base + src, S->base + dst);
}

/* Start the mirror transfers of a pipeline message of bytes from ri in
 * direction dir: at the instant the message itself starts (its send and
 * receive both posted). */
static void mirror_p2p_post(struct sim *S, const struct rank_inst *ri, int dir, double bytes,
			    int cat)
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
		engine_cls_touch(S, ri->mp2p[dir][2 * k], ri->mp2p[dir][2 * k + 1]);
		engine_links_count(S, S->host[ri->mp2p[dir][2 * k]], S->host[ri->mp2p[dir][2 * k + 1]],
				   ceil(bytes), cat);
		S->loose[S->nloose++] = engine_platform_sendto_async(S->host[ri->mp2p[dir][2 * k]],
							    S->host[ri->mp2p[dir][2 * k + 1]],
							    ceil(bytes));
		S->flows++;
	}
}

/* The direction a message travels in: FWD toward stage + 1. A reversed
 * pipeline's (dualpipe's chunk 1) forward goes toward stage - 1. */
static int phys_dir(const struct task *t)
{
	return t->rev ? !t->dir : t->dir;
}

/* The mailbox lane of t: its direction, and apart the reversed
 * pipeline's, so that each (lane, src, dst) carries one stream of
 * messages posted and taken in the same order. */
static int lane(const struct task *t)
{
	return t->dir + 2 * t->rev;
}

static int p2p_peer(const struct sim *S, const struct rank_inst *ri, int dir, bool sending)
{
	/* FWD goes to stage + 1; a receive of FWD comes from stage - 1 */
	int delta = (dir == P2P_FWD) == sending ? +1 : -1;
	return placement_stage_peer(S->job->pl, ri->rank, ri->stage + delta);
}

const struct p2p_slots *engine_p2p_slots(struct sim *S, const struct program *pr)
{
	for (int k = 0; k < S->nslots; k++)
		if (S->slots[k].prog == pr)
			return &S->slots[k];
	S->slots = xreallocarray(S->slots, (size_t)S->nslots + 1, sizeof(*S->slots));
	struct p2p_slots *ps = &S->slots[S->nslots++];
	ps->prog = pr;
	ps->slot = xreallocarray(NULL, (size_t)pr->n + 1, sizeof(int));
	ps->n = 0;
	for (int i = 0; i < pr->n; i++)
		ps->slot[i] = pr->t[i].kind == TASK_SEND || pr->t[i].kind == TASK_RECV ? ps->n++ : -1;
	return ps;
}

void engine_p2p_send(struct sim *S, struct stream_arg *a, int ti, const struct task *t,
		     double start, int *nsends, int *peer)
{
	struct rank_inst *ri = a->ri;
	int d = phys_dir(t), l = lane(t);
	*peer = p2p_peer(S, ri, d, true);
	double *post = &ri->p2p_s[ri->p2p_slot[ti]];
	*post = start;
	engine_cls_touch(S, ri->rank, *peer); /* it starts now or when received */
	sg_comm_t c = engine_platform_put_async(p2p_mailbox(S, l, ri->rank, *peer), post,
						(long)ceil(t->bytes), ri->host, S->host[*peer]);
	/* the mirrors start with the message: now if its receive is posted,
	 * else when it is */
	if (ri->nmp2p[d] && S->ri[*peer].nrecv[l] > ri->nsent[l])
		mirror_p2p_post(S, ri, d, t->bytes, t->cat);
	ri->nsent[l]++;
	engine_links_count(S, ri->host, S->host[*peer], ceil(t->bytes), t->cat);
	ri->st->sent_bytes[t->cat] += t->bytes;
	S->flows++;
	/* a blocking send ends with its delivery: the tasks that wait for it
	 * (the compute stream's next, build_transformer.c) wait that long */
	if (t->blocking) {
		engine_platform_wait_all((void **)&c, 1);
		ri->st->comm_s[t->cat] += simgrid_get_clock() - start;
	} else {
		if (a->send_slot)
			a->send_slot[*nsends] = ri->p2p_slot[ti];
		a->sends[(*nsends)++] = c;
	}
}

/* Before a's receive ti (t) is posted: the mirrors that start with it,
 * the counts, the links to read again. Returns its mailbox. */
static sg_mailbox_t recv_pre(struct sim *S, struct stream_arg *a, const struct task *t, int *peer)
{
	struct rank_inst *ri = a->ri;
	int d = phys_dir(t), l = lane(t);
	*peer = p2p_peer(S, ri, d, false);
	if (S->ri[*peer].nmp2p[d] && S->ri[*peer].nsent[l] > ri->nrecv[l])
		mirror_p2p_post(S, &S->ri[*peer], d, t->bytes, t->cat);
	ri->nrecv[l]++;
	engine_cls_touch(S, *peer, ri->rank); /* it starts now or when sent */
	engine_links_touch(S, S->host[*peer], ri->host);
	return p2p_mailbox(S, l, *peer, ri->rank);
}

/* The links carry no latency (plain max-min): the receiver waits it. */
double engine_p2p_recv_arrived(struct sim *S, const struct stream_arg *a, int peer, const void *post)
{
	/* delivered: its sender may wait for it at once (engine_stream.c) */
	S->ri[peer].p2p_got[(const double *)post - S->ri[peer].p2p_s] = 1;
	return engine_platform_route_latency(S->host[peer], a->ri->host);
}

void engine_p2p_recv_done(struct stream_arg *a, int ti, const struct task *t, double start,
			  const void *post)
{
	struct rank_inst *ri = a->ri;
	double *xs = &ri->p2p_s[ri->p2p_slot[ti]], sent = *(const double *)post;
	*xs = sent > start ? sent : start;
	ri->st->comm_s[t->cat] += simgrid_get_clock() - *xs;
}

void engine_p2p_recv(struct sim *S, struct stream_arg *a, int ti, const struct task *t,
		     double start, int *peer)
{
	sg_mailbox_t mb = recv_pre(S, a, t, peer);
	const double *post = sg_mailbox_get(mb);
	double lat = engine_p2p_recv_arrived(S, a, *peer, post);
	if (lat > 0)
		sg_actor_sleep_for(lat);
	engine_p2p_recv_done(a, ti, t, start, post);
}

void *engine_p2p_recv_post(struct sim *S, struct stream_arg *a, const struct task *t, int *peer,
			   void **post)
{
	return engine_platform_get_async(recv_pre(S, a, t, peer), post);
}
