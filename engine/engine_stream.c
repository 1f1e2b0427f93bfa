/* engine_stream: one actor per (simulated rank, used stream) replays that
 * stream's tasks in program order (see engine-private.h).
 *
 * Before a task, the stream waits for its cross-stream dependencies (one
 * semaphore per stream: it waits for one task at a time); on the compute
 * stream each blocked interval is charged to what it waited for (bubble,
 * exposed pipeline or other communication). A compute task runs in
 * segments at the current rate: slowed while collectives hold SMs
 * (interference) and inside its rank's throttling windows. */
#include "engine-private.h"

#include <math.h>
#include <stdlib.h>

#include "engine_platform.h"

/* The compute slowdown now (engine.h), by the rank's own GPU (ri->ov). */
static double slowdown(const struct sim *S, const struct rank_inst *ri)
{
	(void)S;
	if (ri->coll_active <= 0)
		return 1;
	const struct engine_gpu_overlap *J = &ri->ov;
	double f = 1;
	int sm = J->sm_count;
	if (sm > 1) {
		int c = ri->coll_sms < sm - 1 ? ri->coll_sms : sm - 1;
		double r = J->comm_clock_ratio > 0 && J->comm_clock_ratio < 1 ? J->comm_clock_ratio : 1;
		double B = J->hbm_Bps, H = ri->coll_hbm_Bps, m = J->membound_share;
		double fbw = B > 0 && H > 0 ? B / fmax(B - H, B / 2) : 1;
		double fluid = (double)sm / (sm - c);
		f = J->sm_work ? J->sm_work[c] / r + fluid * m * fbw : fluid * ((1 - m) / r + m * fbw);
	}
	/* a measured factor (a copy kernel beside a GEMM) is a floor: a
	 * collective does at least what the copy does */
	return fmax(f, J->interference_factor);
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
	if ((!ri->rate || !gpu) && !thr) {   /* a host task: NCCL's SMs and clock do not slow it */
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

static void account_wait(const struct sim *S, struct rank_inst *ri, int dep, double from, double to);

/* Wait for t's cross-stream deps; on the compute stream, charge each
 * blocked interval to the dependency it waited for. The stream began to
 * wait at from (now, or where a merged collective ran in line: when
 * that collective started, engine_stream_merge), so a dependency that
 * ended after from is charged as if waited for then. */
static void wait_deps(const struct sim *S, struct rank_inst *ri, enum stream s, const struct task *t, int it,
		      bool account, double from)
{
	const struct program *pr = ri->prog;
	double t0 = from;
	for (int k = 0; k < t->ndeps; k++) {
		int d = pr->deps[t->dep0 + k];
		if (ri->done[d] > it) {
			if (account && ri->done_at[d] > t0) {
				account_wait(S, ri, d, t0, ri->done_at[d]);
				t0 = ri->done_at[d];
			}
			continue;
		}
		while (ri->done[d] <= it) {     /* an earlier iteration's end wakes it too */
			ri->waiting[s] = d;
			sg_sem_acquire(ri->wake[s]);
		}
		double t1 = simgrid_get_clock();
		if (account && t1 > t0)
			account_wait(S, ri, d, t0, t1);
		t0 = t1;
	}
}

/* Tell the observer, if any, what the compute stream waited for. */
static void tell_wait(const struct sim *S, const struct rank_inst *ri, double from, double to, int what)
{
	const struct engine_observer *obs = S->job->obs;
	if (obs && obs->compute_wait && to > from)
		obs->compute_wait(obs->ctx, ri->rank, from, to, what);
}

static void account_wait(const struct sim *S, struct rank_inst *ri, int dep, double from, double to)
{
	double w = to - from;
	if (w <= 0 || dep < 0)
		return;
	const struct task *d = &ri->prog->t[dep];
	if (d->kind == TASK_RECV) {
		/* the bubble until the peer sent, the transfer after */
		double xs = ri->p2p_s[ri->p2p_slot[dep]];
		double exposed = to - (xs > from ? xs : from);
		if (exposed < 0)
			exposed = 0;
		if (exposed > w)
			exposed = w;
		ri->st->exposed_s[CAT_PP_COMM] += exposed;
		ri->st->bubble_s += w - exposed;
		tell_wait(S, ri, from, to - exposed, ENGINE_WAIT_BUBBLE);
		tell_wait(S, ri, to - exposed, to, CAT_PP_COMM);
	} else if (d->kind == TASK_COMPUTE && d->stream == STREAM_COMPUTE) {
		ri->st->bubble_s += w;   /* (CPU offload's host-stream work counts as exposed) */
		tell_wait(S, ri, from, to, ENGINE_WAIT_BUBBLE);
	} else {
		ri->st->exposed_s[d->cat] += w;
		tell_wait(S, ri, from, to, d->cat);
	}
}

/* May the tasks of pr's streams set[] run on the compute stream's actor,
 * with the same times and charges? Yes when they are collectives and
 * blocking pipeline sends only, in runs between two compute tasks: a
 * run's first waits for the compute task before (and for other compute
 * tasks only), the others for compute tasks and tasks of set[] only,
 * each for the one before it unless on its stream (done: they start when
 * the one before ends, in line or not), and the compute task after waits
 * for its last. The compute stream then waits from the instant the run
 * can start to at least its end: run in line, its tasks start and end at
 * the same instants, and the next task's wait is charged from the run's
 * start (wait_deps), each dependency's part to it as before.
 * Tensor-parallel collectives chain so (they block compute): two actors
 * woke each other twice per collective, 4 of the 10 simcalls a rank
 * spent on one (Llama-2 70B, 256 GPUs); the last stage's loss, three
 * all-reduces in a row (vocabulary-parallel cross entropy), is a run of
 * three. DeepSpeed's pipeline (pipe_partitioned) sends each message
 * blocking after the tensor-parallel all-reduce that ends the pass, and
 * the next compute waits for the send: a run of two streams, TP and
 * send (sends_in_line takes non-blocking sends only). */
static bool chained(const struct program *pr, const bool *set)
{
	int prev = -1, pending = -1;
	bool any = false;

	for (int i = 0; i < pr->n; i++) {
		const struct task *t = &pr->t[i];
		const int *dp = &pr->deps[t->dep0];
		bool on = false;
		if (set[t->stream]) {
			if (!(t->kind == TASK_COLL || (t->kind == TASK_SEND && t->blocking)) || prev < 0)
				return false;
			for (int k = 0; k < t->ndeps; k++) {
				if (pr->t[dp[k]].stream != STREAM_COMPUTE &&
				    (pending < 0 || !set[pr->t[dp[k]].stream]))
					return false;
				on |= dp[k] == (pending < 0 ? prev : pending);
			}
			/* a run's later task starts when the one before it ends:
			 * on its stream, or waiting for it */
			if (!on && (pending < 0 || pr->t[pending].stream != t->stream))
				return false;
			pending = i;
			any = true;
		} else if (t->stream == STREAM_COMPUTE) {
			for (int k = 0; k < t->ndeps; k++)
				on |= dp[k] == pending;
			if (pending >= 0 && !on)
				return false;
			pending = -1;
			prev = i;
		}
	}
	return any && pending < 0;
}

/* What a stage's every rank must satisfy (chained, sends_in_line). */
struct stage_test {
	const bool *set;   /* chained: the streams */
	const bool *in;    /* sends_in_line: the compute actor's streams */
	bool (*ok)(const struct program *pr, const struct stage_test *t);
};

/* Whether t holds for stage st's program and for the own program of
 * every simulated rank of stage st (the ranks share the stage's task
 * lists; a rank's own program has its shape). */
static bool stage_all(const struct sim *S, int st, const struct stage_test *t)
{
	const struct engine_job *job = S->job;
	if (!t->ok(job->stage_prog[st], t))
		return false;
	for (int r = 0; job->rank_prog && r < job->pl->nranks; r++) {
		const struct rank_inst *ri = &S->ri[r];
		if (ri->prog && ri->stage == st && ri->prog != job->stage_prog[st] && !t->ok(ri->prog, t))
			return false;
	}
	return true;
}

static bool test_chained(const struct program *pr, const struct stage_test *t)
{
	return chained(pr, t->set);
}

/* May pr's pipeline sends run on the compute stream's actor, whose list
 * holds the streams in[] (program order), each posted at the instant its
 * own actor would post it? Yes when every send is non-blocking, waits for
 * tasks of that list only, and one of them is the list's task just
 * before it (other sends apart): the list's tasks end one after the
 * other, so the send's last dependency ends then, and the send stream's
 * actor, never held by a non-blocking send, would post it at that
 * instant too. A Megatron rank's sends follow the last task of a
 * forward (or backward) pass so, one actor of the 4.75 a rank had
 * (Llama-2 70B, TP 8 x PP 4). */
static bool sends_in_line(const struct program *pr, const bool *in)
{
	int last = -1;
	bool any = false;

	for (int i = 0; i < pr->n; i++) {
		const struct task *t = &pr->t[i];
		if (t->stream == STREAM_SEND) {
			const int *dp = &pr->deps[t->dep0];
			bool on = false;
			if (t->kind != TASK_SEND || t->blocking || last < 0)
				return false;
			for (int k = 0; k < t->ndeps; k++) {
				if (!in[pr->t[dp[k]].stream])
					return false;
				on |= dp[k] == last;
			}
			if (!on)
				return false;
			any = true;
		} else if (in[t->stream])
			last = i;
	}
	return any;
}

static bool test_sends_in_line(const struct program *pr, const struct stage_test *t)
{
	return sends_in_line(pr, t->in);
}

/* Whether stage st's streams set[] chain (chained) on every rank. */
static bool stage_chained(const struct sim *S, int st, const bool *set)
{
	return stage_all(S, st, &(struct stage_test){ .set = set, .ok = test_chained });
}

void engine_stream_merge(struct sim *S)
{
	int pp = S->job->pl->size[DIM_PP];
	if (S->job->repeat > 1)   /* a stream may run iterations ahead: done_at is a later one's */
		return;
	if (S->job->separate_streams)   /* simulation.separate_streams (tests compare) */
		return;
	for (int st = 0; st < pp; st++) {
		const struct program *pr = S->job->stage_prog[st];
		const int *nt = &S->stream_ntasks[st * STREAM_N];
		bool in[STREAM_N] = { [STREAM_COMPUTE] = true };
		bool alone[STREAM_N] = { false };   /* chained alone */
		bool some = false;
		for (int s = 0; s < STREAM_N; s++) {
			bool one[STREAM_N] = { false };
			one[s] = true;
			if (s != STREAM_COMPUTE && s != STREAM_SEND && nt[s] && stage_chained(S, st, one))
				some = in[s] = alone[s] = true;
		}
		if (nt[STREAM_SEND] &&
		    stage_all(S, st, &(struct stage_test){ .in = in, .ok = test_sends_in_line }))
			some = in[STREAM_SEND] = true;
		/* blocking sends: chained with the runs merged so far, or with
		 * one more stream whose runs they end (DeepSpeed's TP) */
		for (int s = 0; nt[STREAM_SEND] && !in[STREAM_SEND] && s < STREAM_N; s++) {
			bool set[STREAM_N];
			for (int k = 0; k < STREAM_N; k++)
				set[k] = alone[k];
			set[STREAM_SEND] = set[s] = true;
			if (s == STREAM_COMPUTE || s == STREAM_RECV_PREV || s == STREAM_RECV_NEXT ||
			    (s != STREAM_SEND && (alone[s] || !nt[s])) || !stage_chained(S, st, set))
				continue;
			some = in[STREAM_SEND] = in[s] = true;
		}
		if (!some)
			continue;
		int *list = S->stream_tasks[st * STREAM_N + STREAM_COMPUTE], n = 0;
		for (int i = 0; i < pr->n; i++)
			if (in[pr->t[i].stream])
				list[n++] = i;
		S->stream_ntasks[st * STREAM_N + STREAM_COMPUTE] = n;
		for (int s = 0; s < STREAM_N; s++)
			if (s != STREAM_COMPUTE && in[s])
				S->stream_ntasks[st * STREAM_N + s] = 0;
	}
}

/* A communication stream of ri (its last task of category cat, -1:
 * none) ends now. */
static void comm_stream_end(struct rank_inst *ri, enum stream s, int cat)
{
	double now = simgrid_get_clock();
	if (now > ri->st->finish_s)
		ri->st->finish_s = now;
	if (cat >= 0 && now >= ri->comm_end && s != STREAM_RECV_PREV && s != STREAM_RECV_NEXT) {
		ri->comm_end = now;
		ri->comm_end_cat = cat;
	}
}

/* The compute stream's actor ran the sends in line (sends_in_line) and
 * finished its tasks: wait for the nsends it posted, and end the send
 * stream as its own actor would have: when the last transfer ended, or
 * when the last send was posted. It ends later than the compute stream
 * only if a transfer does, and then at that transfer's end (now); an end
 * at or before compute_end shows nowhere (collect() charges comm_end
 * only beyond compute_end, and finish_s is at least compute_end). */
static void end_sends_in_line(struct stream_arg *a, const int *list, int nl, int nsends)
{
	const struct program *pr = a->ri->prog;
	int last = nl - 1;
	while (last > 0 && pr->t[list[last]].stream != STREAM_SEND)
		last--;
	engine_platform_wait_all((void **)(a->sends + a->nwaited), (size_t)(nsends - a->nwaited));
	comm_stream_end(a->ri, STREAM_SEND, pr->t[list[last]].cat);
}

/* Before the compute stream's actor posts a send in line: wait for the
 * sends it posted whose messages were received (ended: the wait answers
 * at once), oldest first. Left for the end, every transfer this actor
 * waits for would walk them in SimGrid's list of its activities
 * (CommImpl::finish, 21 % of the CPU on the 256-GPU 2:1 tree). */
static void wait_delivered(struct stream_arg *a, int nsends)
{
	const struct rank_inst *ri = a->ri;
	while (a->nwaited < nsends && ri->p2p_got[a->send_slot[a->nwaited]]) {
		engine_platform_wait_all((void **)&a->sends[a->nwaited], 1);
		a->nwaited++;
	}
}

/* After task t started at start: the instant the compute stream's next
 * wait counts from, *from (-1: its own start), is the start of the run
 * of in-line tasks before it (chained), *run the stream of its
 * collectives; a non-blocking send takes no time, a blocking one goes
 * on the run it ends (or starts one). */
static void in_line_span(const struct task *t, bool in_line, double start, double *from, int *run)
{
	if (!in_line)
		*from = -1;
	else if (t->kind == TASK_SEND) {
		if (t->blocking && *from < 0)
			*from = start;
	} else if (*from < 0 || (int)t->stream != *run)
		*from = start;
	if (in_line && t->kind != TASK_SEND)
		*run = t->stream;
}

/* Run task ti of a's rank, started at start (in_line: a task of a
 * merged stream, engine_stream_merge); *nsends counts the sends a posted
 * and has not waited for. Returns the peer of a pipeline message, else
 * -1. */
static int run_task(struct stream_arg *a, int ti, double start, bool in_line, int *nsends)
{
	struct sim *S = a->sim;
	struct rank_inst *ri = a->ri;
	const struct task *t = &ri->prog->t[ti];
	int peer = -1;
	switch (t->kind) {
	case TASK_COMPUTE:
		if (t->time_s > 0)
			run_compute(S, ri, t->time_s * (a->s == STREAM_COMPUTE ? ri->speed : 1),
				    a->s == STREAM_COMPUTE);
		ri->st->compute_s[t->cat] += simgrid_get_clock() - start;
		break;
	case TASK_COLL:
		if (S->job->ps && t->group == GROUP_DP && t->op == COLL_ALLREDUCE)
			engine_ps_task(S, a, t);
		else
			engine_coll_task(S, a, t);
		ri->st->comm_s[t->cat] += simgrid_get_clock() - start;
		break;
	case TASK_SEND:
		if (in_line)
			wait_delivered(a, *nsends);
		engine_p2p_send(S, a, ti, t, start, nsends, &peer);
		break;
	case TASK_RECV:
		engine_p2p_recv(S, a, ti, t, start, &peer);
		break;
	}
	return peer;
}

/* a's stream ran its nl tasks of list: wait for the nsends it posted,
 * drain its inbox, and note its end (the compute stream's, or the last
 * communication's). */
static void stream_end(struct stream_arg *a, const int *list, int nl, int nsends)
{
	struct rank_inst *ri = a->ri;
	if (a->s == STREAM_COMPUTE) {
		engine_inbox_finish(a);
		double now = simgrid_get_clock();
		if (now > ri->st->finish_s)
			ri->st->finish_s = now;
		ri->compute_end = now;
		if (nsends)
			end_sends_in_line(a, list, nl, nsends);
	} else {
		if (nsends)
			engine_platform_wait_all((void **)a->sends, (size_t)nsends);
		engine_inbox_finish(a);
		comm_stream_end(ri, a->s, nl ? (int)ri->prog->t[list[nl - 1]].cat : -1);
	}
}

void engine_task_done(struct sim *S, struct rank_inst *ri, int ti)
{
	ri->done[ti]++;
	ri->done_at[ti] = simgrid_get_clock();
	if (ri->prog->t[ti].nwaiters)
		for (int s = 0; s < STREAM_N; s++)
			if (ri->waiting[s] == ti) {
				ri->waiting[s] = -1;
				sg_sem_release(ri->wake[s]);
			}
	S->tasks++;
	if (S->progress.on && !(S->tasks & (ENGINE_PROGRESS_TASKS - 1)))
		engine_progress_tick(&S->progress, S->tasks);
}

void engine_stream_main(int argc, char **argv)
{
	struct stream_arg *a = sg_actor_self_get_data();
	struct sim *S = a->sim;
	struct rank_inst *ri = a->ri;
	const struct program *pr = ri->prog;
	int *list = S->stream_tasks[ri->stage * STREAM_N + a->s];
	int nl = S->stream_ntasks[ri->stage * STREAM_N + a->s];
	int nsends = 0;
	const struct engine_observer *obs = S->job->obs;
	(void)argc, (void)argv;
	/* this actor receives the collective flows of its streams on its rank
	 * (engine_inbox) */
	sg_mailbox_set_receiver(sg_mailbox_get_name(engine_mailbox(MBOX_INBOX, a->s, 0, S->base + ri->rank)));

	int reps = S->job->repeat > 1 ? S->job->repeat : 1;
	for (int it = 0; it < reps && !S->failed; it++) {
		if (it > 0 && a->s == STREAM_COMPUTE)
			engine_ssp_wait(S, ri, it);
		double from = -1;   /* a merged task ran in line from then */
		int run = -1;       /* the stream of the last in-line collective */
		for (int li = 0; li < nl && !S->failed; li++) {
			int ti = list[li];
			const struct task *t = &pr->t[ti];
			bool in_line = t->stream != a->s;   /* engine_stream_merge */
			wait_deps(S, ri, a->s, t, it, a->s == STREAM_COMPUTE && !in_line,
				  from >= 0 ? from : simgrid_get_clock());
			double start = simgrid_get_clock();
			in_line_span(t, in_line, start, &from, &run);
			if (obs && obs->task_start)
				obs->task_start(obs->ctx, ri->rank, pr, ti, start);
			int peer = run_task(a, ti, start, in_line, &nsends);
			if (obs && obs->task_end)
				obs->task_end(obs->ctx, ri->rank, pr, ti, t->kind == TASK_RECV ? ri->p2p_s[ri->p2p_slot[ti]] : start,
					      simgrid_get_clock(), peer);
			engine_task_done(S, ri, ti);
		}
		if (a->s == STREAM_COMPUTE)
			engine_ssp_tick(S, ri);
	}
	stream_end(a, list, nl, nsends);
	S->finished++;
}
