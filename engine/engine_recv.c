/* engine_recv: both pipeline receive lanes of a simulated rank, from the
 * previous stage and from the next (STREAM_RECV_PREV, STREAM_RECV_NEXT),
 * on one actor, each message received at the instants its lane's own
 * actor would receive it (see engine-private.h).
 *
 * A lane's own actor repeats: post the get of its next receive, wait for
 * the transfer, sleep the route's latency (a CPU sleep action, date
 * start + latency), mark the receive done. Here every lane keeps its own
 * get posted and its own deadline (the latency's end), and the actor
 * blocks until the first of them:
 *   - gets only: SimGrid's wait-any over them (the transfer's end
 *     answers it, as it answers a lane's get);
 *   - deadlines only: one CPU sleep until the earliest;
 *   - both: a semaphore acquired with the earliest deadline's timeout (a
 *     CPU sleep action, as the lane's sleep), released the instant a get's
 *     transfer ends (its network action's state change,
 *     engine_platform_watch). SimGrid's wait-any with a timeout takes a
 *     timer instead: a timer fires at its date exactly, while a CPU sleep
 *     ends at any step of the clock within surf/precision (1e-9 s) of its
 *     date (CpuModel::update_actions_state_lazy: double_equals), and a
 *     lane's delivery would move where another event falls in between.
 * The deadline is the lane's own sleep's date, start + max(latency,
 * precision) (CpuCas01::sleep), and a sleep of date - now from now ends
 * on that same double where now is at least half the date (Sterbenz);
 * below that (a lane's latency longer than the clock so far) it may end
 * one ulp from it, within precision, and is delivered on waking as below;
 * on waking, every lane whose deadline is within precision of now is
 * delivered, as the CPU model ends every sleep so. Receives wait for no
 * task (engine_recv_merge checks), so a lane posts its next get the
 * instant its last receive is delivered, as its own actor does. */
#include "engine-private.h"

#include <math.h>

#include <xbt/config.h>

#include "bug.h"
#include "engine_platform.h"
#include "xalloc.h"

enum lane_phase { LANE_GET, LANE_LATENCY, LANE_END };

struct recv_actor;

/* A receive lane: its tasks and where the one in flight is. */
struct lane {
	struct recv_actor *r;
	const int *list;        /* its receive tasks, in order */
	int nl, li;             /* how many, the one in flight */
	enum lane_phase ph;
	void *comm;             /* LANE_GET: the posted get */
	void *post;             /* the sender's post time (the payload) */
	bool arrived;           /* the get's transfer ended (engine_platform_watch) */
	int peer;
	double start;           /* when the get was posted */
	double due;             /* LANE_LATENCY: when the latency ends */
};

struct recv_actor {
	struct stream_arg *a;
	struct lane ln[2];
	sg_sem_t sem;           /* released when a get's transfer ends, while armed */
	bool armed;
	double prec;            /* surf/precision */
};

/* From SimGrid's kernel, the instant l's transfer ended. */
static void on_arrival(void *ctx)
{
	struct lane *l = ctx;
	l->arrived = true;
	if (l->r->armed) {
		l->r->armed = false;
		sg_sem_release(l->r->sem);
	}
}

/* Post l's next get, or end the lane (its end is the rank's finish at
 * the latest, as a receive stream's end: comm_stream_end). */
static void lane_post(struct recv_actor *r, struct lane *l)
{
	struct stream_arg *a = r->a;
	struct sim *S = a->sim;
	struct rank_inst *ri = a->ri;
	if (l->li == l->nl || S->failed) {
		double now = simgrid_get_clock();
		if (now > ri->st->finish_s)
			ri->st->finish_s = now;
		l->ph = LANE_END;
		return;
	}
	int ti = l->list[l->li];
	const struct engine_observer *obs = S->job->obs;
	l->start = simgrid_get_clock();
	if (obs && obs->task_start)
		obs->task_start(obs->ctx, ri->rank, ri->prog, ti, l->start);
	l->arrived = false;
	l->comm = engine_p2p_recv_post(S, a, &ri->prog->t[ti], &l->peer, &l->post);
	engine_platform_watch(l->comm, on_arrival, l);
	l->ph = LANE_GET;
}

/* l's receive is delivered now: account it, then post the next. */
static void lane_done(struct recv_actor *r, struct lane *l)
{
	struct stream_arg *a = r->a;
	struct sim *S = a->sim;
	struct rank_inst *ri = a->ri;
	int ti = l->list[l->li];
	const struct engine_observer *obs = S->job->obs;
	engine_p2p_recv_done(a, ti, &ri->prog->t[ti], l->start, l->post);
	if (obs && obs->task_end)
		obs->task_end(obs->ctx, ri->rank, ri->prog, ti, ri->p2p_s[ri->p2p_slot[ti]],
			      simgrid_get_clock(), l->peer);
	engine_task_done(S, ri, ti);
	l->li++;
	lane_post(r, l);
}

/* l's transfer ended now: its latency starts (the lane's own sleep). */
static void lane_arrived(struct recv_actor *r, struct lane *l)
{
	engine_platform_wait_all(&l->comm, 1);   /* ended: at once; releases it */
	double lat = engine_p2p_recv_arrived(r->a->sim, r->a, l->peer, l->post);
	if (lat > 0) {
		l->due = simgrid_get_clock() + fmax(lat, r->prec);
		l->ph = LANE_LATENCY;
	} else
		lane_done(r, l);
}

void engine_recv_main(int argc, char **argv)
{
	struct stream_arg *a = sg_actor_self_get_data();
	struct sim *S = a->sim;
	struct rank_inst *ri = a->ri;
	struct recv_actor r = { .a = a, .sem = sg_sem_init(0), .prec = sg_cfg_get_double("surf/precision") };
	(void)argc, (void)argv;
	sg_mailbox_set_receiver(sg_mailbox_get_name(engine_mailbox(MBOX_INBOX, a->s, 0, S->base + ri->rank)));

	for (int k = 0; k < 2; k++) {
		int s = k ? STREAM_RECV_NEXT : STREAM_RECV_PREV;
		r.ln[k] = (struct lane){ .r = &r, .list = S->stream_tasks[ri->stage * STREAM_N + s],
					 .nl = S->stream_ntasks[ri->stage * STREAM_N + s] };
	}
	for (int k = 0; k < 2; k++)
		lane_post(&r, &r.ln[k]);
	for (;;) {
		double now = simgrid_get_clock(), due = INFINITY;
		for (int k = 0; k < 2; k++)
			if (r.ln[k].ph == LANE_LATENCY && fabs(r.ln[k].due - now) < r.prec)
				lane_done(&r, &r.ln[k]);
		for (int k = 0; k < 2; k++)
			if (r.ln[k].ph == LANE_GET && r.ln[k].arrived)
				lane_arrived(&r, &r.ln[k]);
		void *gets[2];
		int nget = 0;
		for (int k = 0; k < 2; k++) {
			if (r.ln[k].ph == LANE_GET)
				gets[nget++] = r.ln[k].comm;
			else if (r.ln[k].ph == LANE_LATENCY)
				due = fmin(due, r.ln[k].due);
		}
		if (S->failed || (!nget && isinf(due)))
			break;
		if (isinf(due)) {
			engine_platform_wait_any(gets, nget);
			/* a get that ends without its state change would spin here */
			BUG_ON(!(r.ln[0].ph == LANE_GET && r.ln[0].arrived) &&
			       !(r.ln[1].ph == LANE_GET && r.ln[1].arrived),
			       "rank %d: a receive ended unwatched", ri->rank);
			continue;
		}
		if (!nget)
			sg_actor_sleep_for(due - now);
		else {
			r.armed = true;
			sg_sem_acquire_timeout(r.sem, due - now);
			r.armed = false;
		}
	}
	for (int k = 0; k < 2; k++)   /* a failed run's gets: r goes with this actor */
		if (r.ln[k].ph == LANE_GET)
			engine_platform_unwatch(r.ln[k].comm);
	engine_inbox_finish(a);
	sg_sem_destroy(r.sem);
	S->finished++;
}

/* Whether every receive of pr waits for no task. */
static bool recv_free(const struct program *pr)
{
	for (int i = 0; i < pr->n; i++)
		if (pr->t[i].kind == TASK_RECV && pr->t[i].ndeps)
			return false;
	return true;
}

void engine_recv_merge(struct sim *S)
{
	const struct engine_job *job = S->job;
	int pp = job->pl->size[DIM_PP];
	S->recv_one = xcalloc((size_t)pp, sizeof(*S->recv_one));
	if (job->repeat > 1 || job->separate_streams)
		return;
	for (int st = 0; st < pp; st++) {
		const int *nt = &S->stream_ntasks[st * STREAM_N];
		bool ok = nt[STREAM_RECV_PREV] && nt[STREAM_RECV_NEXT] && recv_free(job->stage_prog[st]);
		for (int r = 0; ok && job->rank_prog && r < job->pl->nranks; r++)
			if (S->ri[r].prog && S->ri[r].stage == st && !recv_free(S->ri[r].prog))
				ok = false;
		S->recv_one[st] = ok;
	}
}
