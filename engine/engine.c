/* engine: SimGrid replay of per-rank programs (see engine.h), the
 * adapter: the one place that sets SimGrid up and runs it.
 *
 * engine_run in phases, each failure with its own message:
 *   sim_init        the run's tables, each stage's tasks listed per stream
 *   fold_pick_ranks which ranks are simulated (fold.h)
 *   build_platform  the GPUs to hold (fold_mark_used), SimGrid set up once
 *                   per process, the platform built, hosts looked up
 *   make_ranks      the simulated ranks' state, groups, mirror pairs
 *   engine_make_sinks (cheap folding) daemon sinks for folded receivers
 *   start_actors    one actor per (simulated rank, used stream), the link
 *                   sampler, the progress count
 *   simgrid_run     the replay (engine_stream.c, engine_coll.c,
 *                   engine_p2p.c, engine_ps.c)
 *   collect         exposed tails, the mean of repeated iterations,
 *                   staleness, folded ranks' figures from their
 *                   representative, the iteration time, the links'
 *                   traffic (engine_links.c)
 * The other files of the engine are listed in engine-private.h. */
#include "engine-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xbt/config.h>
#include <xbt/log.h>

#include "bug.h"
#include "cleanup.h"
#include "engine_platform.h"
#include "platform.h"
#include "xalloc.h"

/* An actor's stack in KiB and its guard pages (engine_start_simgrid says
 * why): a sanitizer's build, which runs the suite and no large job, gets
 * eight times the stack and a guard page, so an overflow faults there. */
#if defined(__SANITIZE_ADDRESS__)
#define ENGINE_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ENGINE_SANITIZED 1
#endif
#endif
#ifdef ENGINE_SANITIZED
#define ENGINE_ACTOR_STACK_KIB 256
#define ENGINE_ACTOR_GUARD_PAGES 1
#else
#define ENGINE_ACTOR_STACK_KIB 32
#define ENGINE_ACTOR_GUARD_PAGES 0
#endif

/* ---- SimGrid, once per process -------------------------------------- */

static bool g_initialised;

int engine_claim_process(struct diag *d)
{
	if (g_initialised)
		return diag_errf(d, "the simulation engine runs once per process");
	g_initialised = true;
	return 0;
}

int engine_start_simgrid(const struct topology *t, int nodes, const unsigned char *used,
			 const struct platform_extra *x, bool full_update, double *platform_s,
			 struct diag *d)
{
	int argc = 1;
	char *argv[] = { "ddlsim", NULL };
	xbt_log_control_set("root.thres:critical");
	engine_alloc_huge_pages();
	simgrid_init(&argc, argv);
	/* SimGrid installs its own SIGINT handler (a status dump, then exit 1):
	 * ours removes temporaries and exits 130 (cleanup.h) */
	cleanup_install();
	sg_cfg_set_string("network/model", "CM02");
	sg_cfg_set_boolean("network/crosstraffic", "no");
	sg_cfg_set_double("network/TCP-gamma", 0.0);
	/* SimGrid's default, pinned: the loopback, like every link the
	 * platform builds, has latency 0, so no transfer has a latency phase
	 * (engine_platform_net_stamp relies on it) */
	sg_cfg_set_double("network/loopback-lat", 0.0);
	sg_cfg_set_string("contexts/factory", "raw");
	/* an actor's stack: SimGrid's default is 8 MiB, here without guard
	 * pages (a guarded stack is a mapping of its own and its guard
	 * another: the actors of an unfolded run of 16,384 GPUs would pass
	 * the kernel's default of 65,530 mappings). The actors
	 * are shallow (a stream's loop and SimGrid's calls): with a guard page
	 * the whole suite and the bench's scenarios ran in 16 KiB and
	 * overflowed in 8 (an error path), so 32 KiB is twice what the deepest
	 * needs; a sanitizer's redzones take four times that, and its build
	 * gets 256 KiB (the sanitized CI's hangs of 2026-12-06, first blamed
	 * on 128 KiB here, were forks beside a second thread under libasan 8:
	 * tests/testutil.h, fork_is_safe()). The stacks are
	 * resident, whatever touches them (peak RSS follows their size; meson
	 * test's MALLOC_PERTURB_ writes every byte too): measured 2026-12-06,
	 * peak RSS of GPT-3 175B over 1,024 GPUs unfolded 349 MB at 256 KiB,
	 * 187 at 64, 134 at 32; Llama 2 70B on 256 GPUs of the 2:1 tree
	 * unfolded 409, 315, 280 MB; reports identical */
	sg_cfg_set_int("contexts/stack-size", ENGINE_ACTOR_STACK_KIB);
	sg_cfg_set_int("contexts/guard-size", ENGINE_ACTOR_GUARD_PAGES);
	/* SimGrid's default lazy update of the network model gives a time
	 * that depends on the order the flows of an instant were posted (a
	 * 1024-rank tree all-reduce: 18.06 ms posted by one actor, 19.18 ms
	 * posted by 1024); the full update does not, which folding relies on
	 * (tests/test-fold.c). The collective sweep folds nothing and keeps
	 * the lazy update: with every flow re-solved at each completion, a
	 * 1,024-rank all-to-all takes 139 s instead of 91 s */
	if (full_update) {
		sg_cfg_set_string("network/optim", "Full");
		/* and re-solve only the flows that share a link, transitively,
		 * with one that started or ended (SimGrid's default with Full
		 * re-solves every flow at every event): the same shares, every
		 * shipped scenario's report byte for byte, and the solver went
		 * from 17 % of an unfolded run's instructions to 3 % (Llama-2
		 * 70B, 256 GPUs, callgrind) */
		sg_cfg_set_boolean("network/maxmin-selective-update", "yes");
	}
	double t0 = engine_wall_s();
	if (engine_platform_build_ex(t, nodes, used, x))
		return diag_errf(d, "SimGrid rejected the platform of %d nodes", nodes);
	if (platform_s)
		*platform_s = engine_wall_s() - t0;
	return 0;
}

int engine_platform_load(const struct topology *t, int nodes, double *platform_s, long *hosts,
			 struct diag *d)
{
	if (engine_claim_process(d))
		return -1;
	if (topology_check_nodes(t, nodes, d))
		return -1;
	if (engine_start_simgrid(t, nodes, NULL, NULL, true, platform_s, d))
		return -1;
	*hosts = (long)sg_host_count();
	return 0;
}

/* ---- engine_run's phases --------------------------------------------- */

/* The run's tables for job, out's ranks, each stage's tasks per stream. */
static void sim_init(struct sim *S, const struct engine_job *job, struct engine_result *out)
{
	const struct placement *pl = job->pl;
	int N = pl->nranks, pp = pl->size[DIM_PP];

	S->job = job;
	fold_init(&S->fold, job);
	engine_cls_init(S);
	S->ri = xcalloc((size_t)N, sizeof(*S->ri));
	S->bars = xcalloc((size_t)N * GROUP_N * STREAM_N, sizeof(*S->bars));
	S->stream_tasks = xcalloc((size_t)pp * STREAM_N, sizeof(*S->stream_tasks));
	S->stream_ntasks = xcalloc((size_t)pp * STREAM_N, sizeof(*S->stream_ntasks));
	out->rank = xcalloc((size_t)N, sizeof(*out->rank));
	out->nranks = N;

	for (int s = 0; s < pp; s++) {
		const struct program *pr = job->stage_prog[s];
		for (int k = 0; k < STREAM_N; k++)
			S->stream_tasks[s * STREAM_N + k] = xreallocarray(NULL, (size_t)pr->n + 1, sizeof(int));
		for (int i = 0; i < pr->n; i++) {
			int k = s * STREAM_N + pr->t[i].stream;
			S->stream_tasks[k][S->stream_ntasks[k]++] = i;
		}
	}
}

/* Mark in used (the platform's GPUs) those S's simulated ranks need
 * (fold_mark_used: rank r is GPU r, or job.gpu's). Returns 0 or -1
 * (reported). */
static int mark_used(struct sim *S, unsigned char *used, struct diag *d)
{
	const struct engine_job *job = S->job;
	int N = job->pl->nranks;
	unsigned char *u = job->gpu ? xcalloc((size_t)N, 1) : used;
	int rc = fold_mark_used(&S->fold, u);
	if (rc)
		diag_errf(d, "cannot plan a collective with algorithm '%s' to find the GPUs to simulate",
			  job->coll_algo);
	else if (job->gpu)
		for (int r = 0; r < N; r++)
			used[job->gpu[r]] |= u[r];
	if (u != used)
		free(u);
	return rc ? -1 : 0;
}

/* The hosts of S's GPUs and dedicated servers, on the platform built.
 * Returns 0 or -1 (reported). */
static int find_hosts(struct sim *S, const unsigned char *used, int servers, struct diag *d)
{
	int N = S->job->pl->nranks;
	S->host = xcalloc((size_t)N, sizeof(*S->host));
	for (int r = 0; r < N; r++) {
		int g = S->job->gpu ? S->job->gpu[r] : r;
		if (used[g])
			S->host[r] = engine_host_of(g);
	}
	if (servers > 0) {
		S->ps_hosts = xcalloc((size_t)servers, sizeof(*S->ps_hosts));
		for (int k = 0; k < servers; k++) {
			char name[32];
			snprintf(name, sizeof(name), "ps%d", k);
			S->ps_hosts[k] = sg_host_by_name(name);
			if (!S->ps_hosts[k])
				return diag_errf(d, "platform has no parameter server '%s'", name);
		}
	}
	return 0;
}

/* The GPUs the simulated ranks need, SimGrid and the platform (with the
 * dedicated parameter servers and degraded links), the hosts of the GPUs
 * and servers. Returns 0 or -1 (reported). */
static int build_platform(struct sim *S, struct engine_result *out, struct diag *d)
{
	const struct engine_job *job = S->job;
	int rc = -1;
	unsigned char *used = xcalloc((size_t)job->nodes * job->topo->gpus_per_node, 1);

	if (mark_used(S, used, d))
		goto out_used;
	struct platform_ps pps = { 0, 0, 0 };
	if (job->ps && !job->ps->colocated)
		pps = (struct platform_ps){ job->ps->servers, job->ps->nic_bw_Bps,
					    job->ps->nic_latency_s };
	struct platform_extra px = { &pps, job->degraded, job->ndegraded };
	if (engine_start_simgrid(job->topo, job->nodes, used, &px, true, &out->platform_s, d))
		goto out_used;
	rc = find_hosts(S, used, pps.servers, d);
out_used:
	free(used);
	return rc;
}

/* Every rank's instance: its stats slot and representative; for a
 * simulated rank its program, host, groups, mirror pipeline pairs and
 * per-task state. Returns 0 or -1 (reported). */
static int make_ranks(struct sim *S, struct engine_result *out, struct diag *d)
{
	const struct engine_job *job = S->job;
	const struct placement *pl = job->pl;

	int *cls = xcalloc((size_t)pl->nranks + 1, sizeof(int));
	fold_classes(&S->fold, cls);
	for (int r = 0; r < pl->nranks; r++)
		out->rank[r].class_rank = cls[r];
	free(cls);
	for (int r = 0; r < pl->nranks; r++) {
		int c[DIM_N];
		placement_coords(pl, r, c);
		struct rank_inst *ri = &S->ri[r];
		ri->rank = r;
		ri->stage = c[DIM_PP];
		ri->st = &out->rank[r];
		ri->st->representative = fold_representative(&S->fold, r);
		ri->st->stage = c[DIM_PP];
		ri->speed = job->compute_scale ? job->compute_scale[r] : 1;
		BUG_ON(job->group_overlap && !job->rank_group, "job.group_overlap without job.rank_group");
		ri->ov = job->group_overlap ? job->group_overlap[job->rank_group[r]] : job->overlap;
		if (!S->fold.active[r])
			continue;
		out->nsimulated++;
		ri->prog = job->rank_prog ? job->rank_prog[r] : job->stage_prog[ri->stage];
		ri->host = S->host[r];
		if (!ri->host)
			return diag_errf(d, "platform has no host for rank %d", r);
		fold_groups(&S->fold, r, ri->grp, ri->ngrp);
		for (int dir = 0; dir < 2; dir++)
			ri->nmp2p[dir] = job->fold_exact ? fold_mirror_p2p(&S->fold, r, ri->stage, dir, &ri->mp2p[dir])
							 : fold_uplink_p2p(&S->fold, r, ri->stage, dir, &ri->mp2p[dir]);
		ri->done = xcalloc((size_t)ri->prog->n + 1, sizeof(*ri->done));
		ri->done_at = xcalloc((size_t)ri->prog->n + 1, sizeof(*ri->done_at));
		for (int i = 0; i < ri->prog->n; i++)
			ri->ps_nb += ri->prog->t[i].kind == TASK_COLL && ri->prog->t[i].group == GROUP_DP &&
				     ri->prog->t[i].op == COLL_ALLREDUCE;
		if (ri->ps_nb > S->ps_nb)
			S->ps_nb = ri->ps_nb;
		if (job->ps && job->ps->async) {
			ri->ps_seen = xcalloc((size_t)ri->ps_nb + 1, sizeof(*ri->ps_seen));
			ri->ssp = sg_sem_init(0);
		}
		const struct p2p_slots *ps = engine_p2p_slots(S, ri->prog);
		ri->p2p_slot = ps->slot;
		ri->p2p_s = xcalloc((size_t)ps->n + 1, sizeof(double));
		ri->p2p_got = xcalloc((size_t)ps->n + 1, 1);
		if (ri->ov.sm_count > 1 || ri->ov.interference_factor > 0) {
			ri->rate = sg_sem_init(0);
		}
		for (int s = 0; s < STREAM_N; s++) {
			ri->waiting[s] = -1;
			if (S->stream_ntasks[ri->stage * STREAM_N + s])
				S->nargs++;
		}
	}
	S->args = xcalloc((size_t)S->nargs + 1, sizeof(*S->args));
	return 0;
}

/* One actor per (simulated rank, stream with tasks); the link sampler
 * if observed; the progress count. */
static void start_actors(struct sim *S)
{
	const struct engine_job *job = S->job;
	int N = job->pl->nranks;

	S->clock = xcalloc((size_t)N, sizeof(*S->clock));
	if (job->ps && job->ps->async)
		S->ps_upd = xcalloc((size_t)N * (S->ps_nb + 1), sizeof(*S->ps_upd));
	for (int r = 0, k = 0; r < N; r++) {
		struct rank_inst *ri = &S->ri[r];
		if (!ri->prog)
			continue;
		for (int s = 0; s < STREAM_N; s++) {
			int nl = S->stream_ntasks[ri->stage * STREAM_N + s];
			bool one = S->recv_one[ri->stage];   /* both receive lanes: RECV_PREV's actor */
			if (!nl || (one && s == STREAM_RECV_NEXT))
				continue;
			struct stream_arg *a = &S->args[k++];
			*a = (struct stream_arg){ .sim = S, .ri = ri, .s = s };
			int nsend = 0;   /* on the compute stream: the sends run in line */
			for (int i = 0; i < nl; i++)
				nsend += ri->prog->t[S->stream_tasks[ri->stage * STREAM_N + s][i]].kind == TASK_SEND;
			if (nsend) {
				a->sends = xreallocarray(NULL, (size_t)nsend * (job->repeat > 1 ? job->repeat : 1),
							 sizeof(*a->sends));
				/* one slot per send of one iteration: engine_stream_merge
				 * runs no send in line when iterations repeat (SSP) */
				BUG_ON(s == STREAM_COMPUTE && job->repeat > 1,
				       "rank %d: %d sends in line with %d iterations", r, nsend, job->repeat);
				if (s == STREAM_COMPUTE)
					a->send_slot = xreallocarray(NULL, (size_t)nsend, sizeof(int));
			}
			ri->wake[s] = sg_sem_init(0);
			char name[48];
			snprintf(name, sizeof(name), "r%d_%s", r, stream_name(s));
			engine_start_actor(name, ri->host,
					   one && s == STREAM_RECV_PREV ? engine_recv_main : engine_stream_main, a,
					   false);
			S->nactors++;
		}
	}
	if (job->obs && job->obs->link_sample && job->obs->link_sample_s > 0 && S->nactors)
		engine_start_actor("link_sampler", S->args[0].ri->host, engine_sampler_main, S, true);
	engine_progress_start(S);
}

/* A replayed rank's figures divided by the k iterations replayed. */
static void mean_of_iterations(struct engine_rank_stats *st, double k)
{
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

/* The run's result from the finished replay. */
static void collect(struct sim *S, struct engine_result *out)
{
	const struct engine_job *job = S->job;
	int N = job->pl->nranks;

	/* communication still running after the last compute is exposed too */
	for (int r = 0; r < N; r++) {
		struct rank_inst *ri = &S->ri[r];
		if (ri->prog && ri->comm_end > ri->compute_end) {
			ri->st->exposed_s[ri->comm_end_cat] += ri->comm_end - ri->compute_end;
			if (job->obs && job->obs->compute_wait)
				job->obs->compute_wait(job->obs->ctx, r, ri->compute_end, ri->comm_end,
						       ri->comm_end_cat);
		}
	}
	if (job->repeat > 1)    /* the mean iteration of the replayed ones */
		for (int r = 0; r < N; r++)
			if (S->ri[r].prog)
				mean_of_iterations(&out->rank[r], job->repeat);
	engine_ps_summary(S, out);
	for (int r = 0; r < N; r++) {
		int rep = out->rank[r].representative;
		if (rep != r) {
			int stage = out->rank[r].stage, cls = out->rank[r].class_rank;
			out->rank[r] = out->rank[rep];
			out->rank[r].representative = rep;
			out->rank[r].class_rank = cls;
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
	engine_replay_flush(S);
	out->flows = S->flows;
	out->collectives = S->collectives;
	out->replayed = S->replayed;
	out->tasks = S->tasks;
	out->actors = S->nactors;
	out->cls_posted = S->cls.posted;
	out->cls_split = S->cls.split;
	out->cls_why = S->cls.why;
	engine_links_collect(S, out, job->repeat > 1 ? job->repeat : 1);
}

/* Free what the run holds, SimGrid's objects included (also after a
 * deadlock killed actors). */
static void sim_finish(struct sim *S)
{
	int N = S->job->pl->nranks, pp = S->job->pl->size[DIM_PP];

	for (size_t i = 0; i < S->nloose; i++)
		engine_platform_comm_release(S->loose[i]);
	free(S->loose);
	free(S->host);
	free(S->links);
	free(S->ps_hosts);
	free(S->clock);
	free(S->ps_upd);
	free(S->stale);
	for (int k = 0; k < S->nargs && S->args; k++) {
		free(S->args[k].comms);
		free(S->args[k].sends);
		free(S->args[k].send_slot);
	}
	free(S->args);
	for (int r = 0; r < N; r++) {
		struct rank_inst *ri = &S->ri[r];
		for (int s = 0; s < STREAM_N; s++)
			if (ri->wake[s])
				sg_sem_destroy(ri->wake[s]);
		if (ri->rate)
			sg_sem_destroy(ri->rate);
		if (ri->ssp)
			sg_sem_destroy(ri->ssp);
		free(ri->ps_seen);
		free(ri->done);
		free(ri->done_at);
		free(ri->p2p_s);
		free(ri->p2p_got);
		free(ri->mp2p[0]);
		free(ri->mp2p[1]);
	}
	for (int k = 0; k < pp * STREAM_N; k++)
		free(S->stream_tasks[k]);
	free(S->stream_tasks);
	free(S->stream_ntasks);
	free(S->recv_one);
	for (size_t k = 0; S->bars && k < (size_t)N * GROUP_N * STREAM_N; k++)
		if (S->bars[k]) {
			sg_barrier_destroy(S->bars[k]->bar);
			free(S->bars[k]);
		}
	free(S->bars);
	free(S->ri);
	for (int k = 0; k < S->nslots; k++)
		free(S->slots[k].slot);
	free(S->slots);
	engine_cls_finish(S);
	engine_links_finish(S);
	fold_finish(&S->fold);
}

int engine_run(const struct engine_job *job, struct engine_result *out, struct diag *d)
{
	struct sim S = { 0 };
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (engine_claim_process(d))
		return -1;
	if (topology_check_nodes(job->topo, job->nodes, d))
		return -1;
	sim_init(&S, job, out);
	if (fold_pick_ranks(&S.fold, d) || build_platform(&S, out, d) || make_ranks(&S, out, d))
		goto out_sim;
	if (job->fold && !job->fold_exact && engine_make_sinks(&S)) {
		diag_errf(d, "cannot plan a collective with algorithm '%s' for the folded ranks' sinks",
			  job->coll_algo);
		goto out_sim;
	}
	if (job->obs && job->obs->begin)
		job->obs->begin(job->obs->ctx, out);
	engine_stream_merge(&S);
	engine_recv_merge(&S);
	engine_links_init(&S);
	engine_replay_init(&S);
	start_actors(&S);
	simgrid_run();
	if (S.progress.on)
		engine_progress_tick(&S.progress, S.tasks);
	if (S.failed) {
		diag_errf(d, "cannot plan a collective with algorithm '%s' during the replay",
			  job->coll_algo);
		goto out_sim;
	}
	if (S.finished != S.nactors) {
		diag_errf(d, "the simulation deadlocked: %d of %d streams finished",
			  S.finished, S.nactors);
		goto out_sim;
	}
	collect(&S, out);
	rc = 0;
out_sim:
	sim_finish(&S);
	return rc;
}

/* What engine_run_many refuses (engine.h says why). */
static int check_many(const struct engine_job *const *jobs, int n, struct diag *d)
{
	const struct topology *t = jobs[0]->topo;
	int ngpus = jobs[0]->nodes * t->gpus_per_node, rc = 0;
	unsigned char *taken = xcalloc((size_t)ngpus + 1, 1);

	for (int i = 0; i < n && !rc; i++) {
		const struct engine_job *j = jobs[i];
		if (j->topo != t || j->nodes != jobs[0]->nodes)
			rc = diag_errf(d, "job %d of %d is on another fabric than job 1", i + 1, n);
		else if (!j->gpu)
			rc = diag_errf(d, "job %d of %d does not say which GPUs it runs on", i + 1, n);
		else if (j->fold || j->obs || j->ps || j->ndegraded || j->repeat > 1 || !j->collective_pairs)
			rc = diag_errf(d, "job %d of %d is folded, observed, served by parameter servers, "
				       "behind a degraded link, repeated or posts one flow per NIC: "
				       "none of these can share a fabric", i + 1, n);
		for (int r = 0; r < j->pl->nranks && !rc; r++) {
			int g = j->gpu[r];
			if (g < 0 || g >= ngpus)
				rc = diag_errf(d, "job %d of %d: rank %d on GPU %d, outside the fabric's %d",
					       i + 1, n, r, g, ngpus);
			else if (taken[g])
				rc = diag_errf(d, "job %d of %d: rank %d on GPU %d, which another rank holds",
					       i + 1, n, r, g);
			else
				taken[g] = 1;
		}
	}
	free(taken);
	return rc ? -1 : 0;
}

int engine_run_many(const struct engine_job *const *jobs, int n, struct engine_result *out,
		    struct diag *d)
{
	struct sim *S = xcalloc((size_t)n + 1, sizeof(*S));
	unsigned char *used = NULL;
	int rc = -1, ninit = 0;

	for (int i = 0; i < n; i++)
		memset(&out[i], 0, sizeof(out[i]));
	if (n < 1) {
		diag_errf(d, "no job to simulate");
		goto out;
	}
	if (check_many(jobs, n, d) || engine_claim_process(d) ||
	    topology_check_nodes(jobs[0]->topo, jobs[0]->nodes, d))
		goto out;
	const struct topology *t = jobs[0]->topo;
	used = xcalloc((size_t)jobs[0]->nodes * t->gpus_per_node, 1);
	for (int i = 0, base = 0; i < n; i++) {
		sim_init(&S[i], jobs[i], &out[i]);
		ninit++;
		S[i].base = base;
		base += jobs[i]->pl->nranks;
		if (fold_pick_ranks(&S[i].fold, d) || mark_used(&S[i], used, d))
			goto out;
	}
	struct platform_ps pps = { 0, 0, 0 };
	struct platform_extra px = { &pps, NULL, 0 };
	if (engine_start_simgrid(t, jobs[0]->nodes, used, &px, true, &out[0].platform_s, d))
		goto out;
	for (int i = 0; i < n; i++) {
		out[i].platform_s = out[0].platform_s;
		if (find_hosts(&S[i], used, 0, d) || make_ranks(&S[i], &out[i], d))
			goto out;
	}
	for (int i = 0; i < n; i++) {
		engine_stream_merge(&S[i]);
		engine_recv_merge(&S[i]);
		engine_links_init(&S[i]);
		start_actors(&S[i]);
	}
	simgrid_run();
	for (int i = 0; i < n; i++) {
		if (S[i].failed) {
			diag_errf(d, "job %d of %d: cannot plan a collective with algorithm '%s' during "
				  "the replay", i + 1, n, jobs[i]->coll_algo);
			goto out;
		}
		if (S[i].finished != S[i].nactors) {
			diag_errf(d, "the simulation deadlocked: job %d of %d, %d of %d streams finished",
				  i + 1, n, S[i].finished, S[i].nactors);
			goto out;
		}
	}
	for (int i = 0; i < n; i++)
		collect(&S[i], &out[i]);
	rc = 0;
out:
	free(used);
	for (int i = 0; i < ninit; i++)
		sim_finish(&S[i]);
	free(S);
	return rc;
}

void engine_result_finish(struct engine_result *r)
{
	free(r->rank);
	free(r->links);
	memset(r, 0, sizeof(*r));
}
