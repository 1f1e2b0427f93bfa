/* engine_replay: private collectives posted as one member's flows
 * (see engine-private.h).
 *
 * An unfolded run of a tensor-parallel job spends most of its CPU time on
 * the flows of collectives inside one node (Llama 2 70B, TP 8 x PP 4 x DP
 * 32 on 1,024 H100 of the 2:1 fat tree, 8 micro-batches a replica: 1.39 M
 * tasks, 698,880 flows, almost all of one TP ring each): SimGrid's work per
 * flow and per simcall, and its full update over every flow in flight.
 * Such a collective's duration depends on its own plan alone where its
 * flows cross only links that no other flow of the run can ever use: all
 * its flows start together as the barrier opens (engine_coll.c), carry
 * no latency of their own and share plain max-min (engine_platform.cpp),
 * and max-min sharing decomposes over the links no two flow sets share
 * (fold_exact.c says why): nothing outside the plan moves its rates.
 *
 * Which plans are private is decided once, before the replay, over
 * everything that can post flows in the run: every group instance of
 * every stage's collectives (their plans made now, as the replay would
 * make them) and every pipeline pair (an interleaved pipeline's
 * wrapped ones too), each link (but a switch's crossbar,
 * a FATPIPE that binds no share and is not timed, engine_links.c) owned
 * by the one group instance whose flows cross it, or shared. A plan is
 * private when every link of its flows is its instance's alone and the
 * instance runs one collective at a time (every collective of its kind on
 * one stream, so one actor per member runs them in order, merged into
 * the compute stream's or its own: tp_comm_overlap's streams are not),
 * and uniform: its flows carry the
 * same whole bytes over routes of the same links' bandwidths and kinds
 * hop by hop, each shared link crossed by the same count k of them, so
 * every flow gets the same share and all end at one instant. Nothing is
 * private in a run where something else posts flows or moves a link's
 * capacity: parameter servers, degraded or
 * failing links, several jobs on one fabric (engine_run_many never asks),
 * an observer sampling links, per-rank programs (mixed GPUs) whose
 * collectives are not their stage's task for task, all-to-alls posted
 * one flow per NIC, or the scenario key
 * simulation.collective_flows (for checks). Per-rank programs that
 * differ from their stage's in compute times alone are replayed: the
 * plans and links found over the stages' programs are every rank's, and
 * a slower GPU only reaches a barrier later, as a straggler does
 * (tests/test-replay.c compares a mixed run with the posted one).
 *
 * Folded runs replay too, where a group instance's members are all
 * simulated (a replica simulated whole: a straggler's, a partly filled
 * leaf's) and post their plan's flows and nothing else with it: folded
 * exactly, no mirror group and every flow posted (not the
 * representative's own alone); folded cheaply, no flows around a busiest
 * member and no uplink copies (posts_its_plan_alone). Every flow a
 * folded run posts goes between two GPUs on the platform and is a flow
 * of some group instance's plan or a pipeline pair (mirrors, the flows
 * around a busiest member, uplink copies; sinks only receive), so the
 * ownership covers the instances with two or more members on the
 * platform and every pipeline pair between two. Llama 2 70B on 1,024 GPUs
 * of the 2:1 tree, 128 micro-batches, auto (132 ranks simulated, 4
 * replicas whole): 7.8 -> 4.3 CPU s, the same report.
 *
 * A private plan's first instance posts its flows (every link's peak:
 * later instances repeat its usage). Later ones post k flows of the
 * first flow's bytes on its route alone, from its source: each gets the
 * same share as every flow of the plan, so they end at the instant the
 * plan's would, through the same steps of SimGrid's clock (a sleep of a
 * recorded duration did not: SimGrid ends a sleep at any event less than
 * its precision, 1e-9 s, before its date, and the pipeline's figures
 * moved by 1e-8; Llama 2 70B on 256 GPUs). That route's links are read
 * as any flow's; the plan's other timed links are given, one by one,
 * the steps of the clock they would have been read at
 * (engine_links_add_steps: adding the phase's length at once moved their
 * busy times by 1.7e-12). Every member counts its own payload and
 * touches the class plans (engine_cls_touch) as if it had posted its
 * flows; the plan's flows' bytes go to their routes once, after the run,
 * times the instances replayed (whole numbers: the same sums in any
 * order, engine_replay_flush): the report is the posted run's, byte for
 * byte.
 *
 * A replayed instance meets once, not twice: the members but the last
 * wait at the group's barrier; the last, whose arrival is the instant the
 * first meeting would open, holds every member's SMs (engine_comm_busy),
 * posts the k flows (from the first flow's source host, whoever runs
 * it), sleeps the latency and releases them, and joins the barrier at the
 * instant the second meeting would open. Paired against ba41e69 on an
 * idle 2-core machine (2026-12-08, every report the same), CPU s: the
 * 1,024-GPU row below at 128 micro-batches 29.3 / 34.7 / 36.1 -> 26.9 /
 * 28.8 / 28.1; at 8 micro-batches 3.69 / 2.93 -> 2.56 / 1.97; 256 GPUs
 * 4.59 / 4.33 -> 3.60 / 3.90 (a figure of 57 s for that row taken first
 * was a run under perf, not comparable). Llama 2 70B, TP 8 x PP 4 on the 2:1 fat tree,
 * fold off, user CPU s against the posted run, paired on one loaded
 * 2-core machine (2026-12-07): 256 GPUs 7.0 against 13.0; 1,024 GPUs,
 * 8 micro-batches a replica, 3.0 against 7.5 (peak RSS 247 MB against
 * 265), 128 micro-batches 44-71 against 133 (665 MB against 682). */
#include "engine-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bug.h"
#include "engine_platform.h"
#include "xalloc.h"

/* By link id: 0 no flow, > 0 the one group instance whose flows cross it
 * (kind * nranks + leader + 1), -1 shared or a pipeline message's. */
struct owners {
	int *o;
	size_t cap;
};

static void own_route(struct owners *w, sg_host_t a, sg_host_t b, int owner)
{
	const int *ids;
	if (!a || !b)
		return; /* folded: a GPU off the platform posts nothing */
	int n = engine_platform_route_ids(a, b, &ids);
	for (int i = 0; i < n; i++) {
		size_t id = (size_t)ids[i];
		if (id >= w->cap) {
			size_t cap = w->cap ? w->cap : 1024;
			while (cap <= id)
				cap *= 2;
			w->o = xreallocarray(w->o, cap, sizeof(*w->o));
			memset(w->o + w->cap, 0, (cap - w->cap) * sizeof(*w->o));
			w->cap = cap;
		}
		int *o = &w->o[id];
		*o = *o == 0 ? owner : *o == owner ? owner : -1;
	}
}

/* Whether every link but crossbars of every flow of c is owner's alone. */
static bool plan_private(struct sim *S, const struct owners *w, const struct coll_plan *p,
			 int owner)
{
	for (int i = 0; i < p->nflows; i++) {
		const struct coll_flow *f = &p->flows[i];
		sg_host_t hs = S->host[f->src], hd = S->host[f->dst];
		if (!hs || !hd || hs == hd || !(f->bytes > 0))
			return false;
		const int *ids;
		int n = engine_platform_route_ids(hs, hd, &ids);
		for (int k = 0; k < n; k++)
			if (!engine_platform_link_is_crossbar(engine_platform_link_of_id(ids[k])) &&
			    ((size_t)ids[k] >= w->cap || w->o[ids[k]] != owner))
				return false;
	}
	return p->nflows > 0;
}

/* Whether every flow of p gets the same share and ends at the same
 * instant as k flows alone on its first flow's route (rec->k set): the
 * same whole bytes, routes of the same links' bandwidths and kinds
 * (crossbar or shared) hop by hop, every shared link crossed by k of
 * them. The shared links off that route into rec (their busy time is
 * added by hand). */
static bool plan_uniform(struct sim *S, const struct coll_plan *p, struct cplan_replay *rec)
{
	const int *r0, *ids;
	int n0 = engine_platform_route_ids(S->host[p->flows[0].src], S->host[p->flows[0].dst], &r0);
	double b0 = ceil(p->flows[0].bytes);
	int *lk = NULL, *cnt = NULL, nl = 0;
	size_t cap = 0, ccap = 0;
	bool ok = true;
	for (int i = 0; i < p->nflows && ok; i++) {
		const struct coll_flow *f = &p->flows[i];
		int n = engine_platform_route_ids(S->host[f->src], S->host[f->dst], &ids);
		ok = n == n0 && ceil(f->bytes) == b0;
		for (int h = 0; h < n && ok; h++) {
			sg_link_t l = engine_platform_link_of_id(ids[h]), l0 = engine_platform_link_of_id(r0[h]);
			bool x = engine_platform_link_is_crossbar(l);
			ok = x == engine_platform_link_is_crossbar(l0) &&
			     sg_link_get_bandwidth(l) == sg_link_get_bandwidth(l0);
			if (!ok || x)
				continue;
			int j = 0;
			while (j < nl && lk[j] != ids[h])
				j++;
			if (j == nl) {
				XGROW(lk, cap, (size_t)nl + 1);
				XGROW(cnt, ccap, (size_t)nl + 1);
				lk[nl] = ids[h];
				cnt[nl++] = 0;
			}
			cnt[j]++;
		}
	}
	for (int j = 0; j < nl && ok; j++)
		ok = cnt[j] == cnt[0];
	if (ok && nl) {
		size_t icap = 0;
		rec->k = cnt[0];
		for (int j = 0; j < nl; j++) {
			bool on_route = false;
			for (int h = 0; h < n0 && !on_route; h++)
				on_route = r0[h] == lk[j];
			if (!on_route) {
				XGROW(rec->ids, icap, (size_t)rec->nlinks + 1);
				rec->ids[rec->nlinks++] = lk[j];
			}
		}
	}
	free(lk);
	free(cnt);
	return ok && nl > 0;
}

/* Whether every collective of program a is b's, task for task: the same
 * stream, group, operation, bytes and count (the same plan on the same
 * barrier at the same point of the program); compute times may differ. */
static bool same_collectives(const struct program *a, const struct program *b)
{
	if (a == b)
		return true;
	if (a->n != b->n)
		return false;
	for (int i = 0; i < a->n; i++) {
		const struct task *x = &a->t[i], *y = &b->t[i];
		if (x->kind != y->kind || x->stream != y->stream)
			return false;
		if (x->kind == TASK_COLL && (x->group != y->group || x->op != y->op ||
					     x->bytes != y->bytes || x->count != y->count))
			return false;
	}
	return true;
}

/* Whether every rank's own program (mixed GPUs, job.rank_prog) has its
 * stage's collectives: the plans, their links and the serial kinds found
 * over the stages' programs are then every rank's, and a rank's own
 * compute times move when it reaches a barrier, as a straggler's do (its
 * flows still start together as the barrier opens). Each distinct
 * program is compared once. */
static bool rank_progs_alike(const struct sim *S)
{
	const struct engine_job *job = S->job;
	const struct program *last = NULL;
	for (int r = 0; job->rank_prog && r < job->pl->nranks; r++) {
		const struct program *pr = S->ri[r].prog;
		if (!pr || pr == last)
			continue;
		if (!same_collectives(pr, job->stage_prog[S->ri[r].stage]))
			return false;
		last = pr;
	}
	return true;
}

/* Why nothing can be private in S's run (NULL: plans may be). */
static const char *run_excluded(const struct sim *S)
{
	const struct engine_job *job = S->job;
	if (job->collective_flows)
		return "simulation.collective_flows";
	if (job->ps || job->ndegraded > 0 || job->gpu || S->base)
		return "served, degraded or shared";
	if (!rank_progs_alike(S))
		return "per-rank programs with other collectives";
	if (job->obs && job->obs->link_sample && job->obs->link_sample_s > 0)
		return "links sampled";
	for (int st = 0; st < job->pl->size[DIM_PP]; st++)
		for (int i = 0; i < job->stage_prog[st]->n; i++) {
			const struct task *t = &job->stage_prog[st]->t[i];
			if (t->kind == TASK_COLL && t->op == COLL_ALLTOALL && S->cls.on)
				return "all-to-all class plans";
		}
	return NULL;
}

/* A group instance's plan noted for the check after the marking. */
struct pkey {
	int kind, leader, op;
	double bytes;
};

static int cmp_pkey(const void *a, const void *b)
{
	const struct pkey *x = a, *y = b;
	if (x->kind != y->kind)
		return x->kind - y->kind;
	if (x->op != y->op)
		return x->op - y->op;
	return (x->bytes > y->bytes) - (x->bytes < y->bytes);
}

/* What the link ownership gathers: the owners, the group instances'
 * plans noted for the check (keys), scratch for the groups' members. */
struct replay_scan {
	struct sim *S;
	struct owners w;
	struct pkey *keys;
	size_t kcap, nk;
	int *mem;               /* [nranks + 2] a group's members */
	int *seen;              /* [nranks + 1] stamp of the rank's last group */
	int stamp;
	struct pkey *uniq;      /* a stage's distinct collectives */
	size_t ucap;
};

/* The distinct collectives (kind, op, bytes; leader 0) of program pr
 * that post flows, sorted, into R->uniq; returns their count with
 * repeats (cmp_pkey-equal neighbours). */
static size_t stage_collectives(struct replay_scan *R, const struct program *pr)
{
	const struct placement *pl = R->S->job->pl;
	size_t nu = 0;
	for (int i = 0; i < pr->n; i++) {
		const struct task *t = &pr->t[i];
		if (t->kind != TASK_COLL || t->bytes <= 0 || placement_group_size(pl, t->group) <= 1)
			continue;
		XGROW(R->uniq, R->ucap, nu + 1);
		R->uniq[nu++] = (struct pkey){ t->group, 0, t->op, t->bytes * t->count };
	}
	if (nu > 1) /* qsort's base may not be NULL, even for none */
		qsort(R->uniq, nu, sizeof(*R->uniq), cmp_pkey);
	return nu;
}

/* How many of the members mem[0..m) have a GPU on the platform: every
 * one unfolded; folded, the GPUs the simulated ranks' flows reach. Every
 * flow the run posts goes from one such GPU to another (its mirrors',
 * the flows around a busiest member, the uplink copies and the sinks
 * included: fold.h), so an instance with fewer than two posts none. */
static int hosted(const struct sim *S, const int *mem, int m)
{
	int h = 0;
	for (int i = 0; i < m; i++)
		h += S->host[mem[i]] != NULL;
	return h;
}

/* Own the links of the flows of every group instance on stage st's ranks
 * of collective k (its plan made now, as the replay would make it), each
 * plan once (its rep made), and note the instance's key. Returns 0, or -1
 * when a plan cannot be made (nothing private: the replay reports it). */
static int own_stage_collective(struct replay_scan *R, int st, const struct pkey *k)
{
	struct sim *S = R->S;
	const struct placement *pl = S->job->pl;
	int N = pl->nranks;
	R->stamp++;
	for (int r = 0; r < N; r++) {
		if (R->seen[r] == R->stamp || S->ri[r].stage != st)
			continue;
		int m = placement_group(pl, k->kind, r, R->mem);
		for (int i = 0; i < m; i++)
			R->seen[R->mem[i]] = R->stamp;
		if (m <= 1 || hosted(S, R->mem, m) < 2)
			continue;
		struct cplan *c = cplan_get(&S->fold.cache, k->kind, R->mem, m, k->op, k->bytes);
		if (!c)
			return -1;
		if (c->rep)
			continue; /* this plan's flows are marked already */
		c->rep = xcalloc(1, sizeof(*c->rep));
		int owner = k->kind * N + R->mem[0] + 1;
		for (int f = 0; f < c->p->nflows; f++)
			own_route(&R->w, S->host[c->p->flows[f].src], S->host[c->p->flows[f].dst], owner);
		XGROW(R->keys, R->kcap, R->nk + 1);
		R->keys[R->nk++] = (struct pkey){ k->kind, R->mem[0], k->op, k->bytes };
	}
	return 0;
}

/* Own (shared, -1) the links of every pipeline pair, both ways: the
 * adjacent stages', and the last stage's with the first where a message
 * wraps around (interleaved: the last stage's chunk c feeds the first's
 * c + 1: fold.h wraps). */
static void own_pipeline(struct replay_scan *R)
{
	struct sim *S = R->S;
	const struct engine_job *job = S->job;
	const struct placement *pl = job->pl;
	int pp = pl->size[DIM_PP];
	for (int r = 0; r < pl->nranks; r++)
		for (int dlt = -1; dlt <= 1; dlt += 2) {
			int s = S->ri[r].stage + dlt;
			if ((s >= 0 && s < pp) || S->fold.wraps) /* fold_init: program_stages_wrap */
				own_route(&R->w, S->host[r], S->host[placement_stage_peer(pl, r, s)], -1);
		}
}

/* Own every link any flow of the run can cross: every group instance
 * of every stage's collectives, then every pipeline pair. Returns 0 or
 * -1 (a plan cannot be made: nothing private). */
static int own_links(struct replay_scan *R)
{
	const struct engine_job *job = R->S->job;
	for (int st = 0; st < job->pl->size[DIM_PP]; st++) {
		size_t nu = stage_collectives(R, job->stage_prog[st]);
		for (size_t u = 0; u < nu; u++)
			if ((!u || cmp_pkey(&R->uniq[u], &R->uniq[u - 1])) &&
			    own_stage_collective(R, st, &R->uniq[u]))
				return -1;
	}
	own_pipeline(R);
	return 0;
}

/* Whether the members mem[0..m) of group instance k, folded or not,
 * post their plan's flows and no others with its collectives, as an
 * unfolded run's do: every member simulated (the barrier counts the
 * simulated ones), and folded exactly, no mirror group and every flow
 * of the plan posted (not the representative's own alone); folded
 * cheaply, no flows around a busiest member (fold_posts_crit) and no
 * folded ranks' copies over an uplink (fold_uplink_flows). */
static bool posts_its_plan_alone(struct sim *S, const struct pkey *k, const int *mem, int m)
{
	struct fold *F = &S->fold;
	if (!S->job->fold)
		return true;
	for (int i = 0; i < m; i++)
		if (!F->active[mem[i]])
			return false;
	int st = S->ri[k->leader].stage;
	if (S->job->fold_exact) {
		struct cplan *c = fold_mirrors(F, st, k->kind, mem, m, k->op, k->bytes);
		return c && c->nmir == 1 && !fold_own_only(F, c, k->kind, m);
	}
	for (int i = 0; i < m; i++) {
		/* the entry is looked up again each time: the table may grow */
		struct cplan *c = cplan_get(&F->cache, k->kind, mem, m, k->op, k->bytes);
		if (!c || fold_posts_crit(F, c, mem, m, mem[i]))
			return false;
		if (fold_posts_uplink_copies(F, mem[i])) {
			c = fold_uplink_flows(F, st, k->kind, mem, m, k->op, k->bytes);
			if (!c || c->nuflows > 0)
				return false;
		}
	}
	return true;
}

/* Check the plan of group instance k and record whether it is private
 * (c->priv, counted in S->nprivate): its kind serial and not an
 * all-to-all, its first flow's ends members (the replay's poster and
 * receiver run the collective), every link its instance's alone, and
 * uniform. */
static void check_private(struct replay_scan *R, const bool serial[GROUP_N], const struct pkey *k)
{
	struct sim *S = R->S;
	const struct placement *pl = S->job->pl;
	int N = pl->nranks, *mem = R->mem;
	if (!serial[k->kind] || k->op == COLL_ALLTOALL)
		return;
	int m = placement_group(pl, k->kind, k->leader, mem);
	if (!posts_its_plan_alone(S, k, mem, m))
		return;
	struct cplan *c = cplan_get(&S->fold.cache, k->kind, mem, m, k->op, k->bytes);
	if (c->p->nflows <= 0)
		return;
	bool src_in = false, dst_in = false;
	for (int i = 0; i < m; i++) {
		src_in = src_in || mem[i] == c->p->flows[0].src;
		dst_in = dst_in || mem[i] == c->p->flows[0].dst;
	}
	c->priv = src_in && dst_in && plan_private(S, &R->w, c->p, k->kind * N + k->leader + 1) &&
		  plan_uniform(S, c->p, c->rep);
	S->nprivate += c->priv;
}

void engine_replay_init(struct sim *S)
{
	if (run_excluded(S))
		return;
	int N = S->job->pl->nranks;
	bool serial[GROUP_N];
	program_serial_kinds(S->job->stage_prog, S->job->pl->size[DIM_PP], serial);
	struct replay_scan R = { .S = S };
	R.mem = xreallocarray(NULL, (size_t)N + 2, sizeof(*R.mem));
	R.seen = xcalloc((size_t)N + 1, sizeof(*R.seen));
	if (!own_links(&R))
		for (size_t q = 0; q < R.nk; q++)
			check_private(&R, serial, &R.keys[q]);
	free(R.uniq);
	free(R.seen);
	free(R.mem);
	free(R.keys);
	free(R.w.o);
}

struct cplan_replay *engine_replay_begin(struct cplan *c)
{
	struct cplan_replay *rec = c->rep;
	if (!c->priv || !rec || rec->state == 2)
		return NULL;
	rec->state = 1;
	return rec;
}

void engine_replay_end(struct cplan_replay *rec)
{
	if (rec && rec->state == 1)
		rec->state = 2;
}

bool engine_replay_ready(const struct cplan *c)
{
	return c->priv && c->rep && c->rep->state == 2;
}

/* The member whose arrival opens the meeting (the last): everything the
 * members would do together from the instant the barrier would open to
 * the instant it would open again, on their behalf. */
static void replay_for_all(struct sim *S, struct stream_arg *a, const struct coll_plan *p,
			   struct cplan_replay *rec, int cat, const int *mem, int n, double lat)
{
	S->flows += p->nflows;
	rec->ninst[cat]++;
	const double hbm = engine_coll_hbm_Bps(p);
	for (int i = 0; i < n; i++)
		engine_comm_busy(&S->ri[mem[i]], p->sm_channels, hbm, +1);
	/* k flows of the first flow's bytes on its route alone, from its
	 * source: each gets the share every flow of the plan gets, and they
	 * end when the plan's would */
	const struct coll_flow f0 = p->flows[0];
	sg_host_t src = S->host[f0.src], dst = S->host[f0.dst];
	S->replayed++;
	long long mark = engine_links_mark(S);
	engine_links_touch(S, src, dst);
	XGROW(a->comms, a->ncomms_cap, (size_t)rec->k + 1);
	for (int i = 0; i < rec->k; i++)
		a->comms[i] = engine_platform_sendto_async(src, dst, ceil(f0.bytes));
	engine_platform_wait_all((void **)a->comms, (size_t)rec->k);
	/* the plan's other links: the steps its flows would have been read
	 * at, added as they would have been */
	engine_links_add_steps(S, mark, rec->ids, rec->nlinks);
	if (lat > 0)
		sg_actor_sleep_for(lat);
	for (int i = 0; i < n; i++)
		engine_comm_busy(&S->ri[mem[i]], p->sm_channels, hbm, -1);
}

void engine_replay_coll(struct sim *S, struct stream_arg *a, const struct task *t, struct cplan *c,
			struct group_bar *gb, const int *mem, int n, double lat)
{
	struct rank_inst *ri = a->ri;
	const struct coll_plan *p = c->p;
	struct cplan_replay *rec = c->rep;
	/* what its own flows would have counted: its payload now, in the
	 * order the posted run adds it; their bytes on their routes (whole
	 * numbers, whose sums are exact in any order) after the run, and
	 * their count by the last to arrive */
	int o0 = cplan_lower(p, NULL, ri->rank, false), o1 = cplan_lower(p, NULL, ri->rank + 1, false);
	for (int i = o0; i < o1; i++) {
		const struct coll_flow *f = &p->flows[i];
		engine_cls_touch(S, f->src, f->dst);
		ri->st->sent_bytes[t->cat] += f->bytes / p->wire_scale; /* payload */
	}
	/* one meeting, not two: the members but the last wait at the
	 * barrier; the last, whose arrival is the instant the posted run's
	 * first meeting opens, runs the collective for all of them and
	 * joins them at the instant its second would open (the latency is
	 * the plan's, every member's alike: run_excluded, same_collectives) */
	if (gb->arrived++ == 0)
		gb->latency_s = lat;
	BUG_ON(lat != gb->latency_s, "members of one private plan with latencies %g and %g s",
	       lat, gb->latency_s);
	if (gb->arrived == gb->members) {
		BUG_ON(gb->members != n, "%d of %d members simulated in a replay", gb->members, n);
		gb->arrived = 0;
		replay_for_all(S, a, p, rec, t->cat, mem, n, lat);
	}
	sg_barrier_wait(gb->bar);
}

void engine_replay_flush(struct sim *S)
{
	const struct cplan_cache *C = &S->fold.cache;
	for (size_t q = 0; q < C->cap; q++) {
		const struct cplan *c = &C->plans[q];
		if (!c->p || !c->priv || !c->rep)
			continue;
		for (int cat = 0; cat < CAT_N; cat++) {
			long k = c->rep->ninst[cat];
			for (int i = 0; k > 0 && i < c->p->nflows; i++) {
				const struct coll_flow *f = &c->p->flows[i];
				double b = ceil(f->bytes);
				/* whole numbers below 2^53 add exactly, in any
				 * order: the posted run's sums, byte for byte */
				BUG_ON((double)k * b > 0x1p53, "%ld replays of %.0f bytes", k, b);
				engine_links_bytes(S, S->host[f->src], S->host[f->dst], (double)k * b,
						   cat);
			}
		}
	}
}
