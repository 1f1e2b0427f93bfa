/* engine_ps: data-parallel all-reduces through parameter servers (see
 * engine.h, engine_ps).
 *
 * A worker pushes its gradients to the servers (sharded evenly, or one
 * server per bucket round robin), waits until every worker's push is in
 * (synchronous) and pulls the weights back. Asynchronous servers apply
 * each push as it comes; the staleness of an update is the count of
 * others' updates applied since its worker last pulled, and a staleness
 * bound holds a worker's next iteration until its whole DP group is
 * within the bound (stale synchronous parallel, Ho et al. 2013). */
#include "engine-private.h"

#include <math.h>
#include <stdlib.h>

#include "engine_platform.h"
#include "xalloc.h"

/* Post this rank's transfers of one parameter-server phase (push: to
 * the servers; else from them) and wait for them. */
static void ps_phase(struct sim *S, struct stream_arg *a, const int *mem, int k0, int nk,
		     double part, bool push, enum task_cat cat)
{
	struct rank_inst *ri = a->ri;
	const struct engine_ps *ps = S->job->ps;
	int nc = 0;
	double lat = 0;
	XGROW(a->comms, a->ncomms_cap, (size_t)nk + 1);
	for (int i = 0; i < nk; i++) {
		int k = k0 + i;
		sg_host_t h = ps->colocated ? S->ri[mem[k]].host : S->ps_hosts[k];
		if (h == ri->host)
			continue;   /* the rank's own shard stays */
		engine_cls_touch(S, ri->rank, ps->colocated ? mem[k] : -1);
		a->comms[nc++] = push ? engine_platform_sendto_async(ri->host, h, part)
				      : engine_platform_sendto_async(h, ri->host, part);
		engine_links_count(S, push ? ri->host : h, push ? h : ri->host, part, cat);
		lat = fmax(lat, push ? engine_platform_route_latency(ri->host, h)
				     : engine_platform_route_latency(h, ri->host));
		if (push)
			ri->st->sent_bytes[cat] += part;
		S->flows++;
	}
	engine_platform_wait_all((void **)a->comms, (size_t)nc);
	/* the phase's longest route latency (the links carry none) */
	if (lat > 0)
		sg_actor_sleep_for(lat);
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
void engine_ssp_wait(struct sim *S, struct rank_inst *ri, int it)
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
void engine_ssp_tick(struct sim *S, struct rank_inst *ri)
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

void engine_ps_task(struct sim *S, struct stream_arg *a, const struct task *t)
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
	struct group_bar *gb = engine_group_barrier(S, mem[0], t->group, t->stream, mem, n);
	ps_phase(S, a, mem, k0, nk, part, true, t->cat);
	sg_barrier_wait(gb->bar);   /* the servers hold every worker's gradients */
	ps_phase(S, a, mem, k0, nk, part, false, t->cat);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

void engine_ps_summary(struct sim *S, struct engine_result *out)
{
	if (S->nstale == 0)
		return;
	qsort(S->stale, S->nstale, sizeof(*S->stale), cmp_double);
	double sum = 0;
	for (size_t i = 0; i < S->nstale; i++)
		sum += S->stale[i];
	out->ps_updates = (long)S->nstale;
	out->staleness_mean = sum / (double)S->nstale;
	out->staleness_p50 = S->stale[(size_t)ceil(0.50 * (double)S->nstale) - 1];
	out->staleness_p95 = S->stale[(size_t)ceil(0.95 * (double)S->nstale) - 1];
	out->staleness_max = S->stale[S->nstale - 1];
}
