/* engine_rank: what every kind of task uses on a rank (see
 * engine-private.h): the host a rank runs on, starting an actor, the
 * barrier of a group instance, and the count of collectives holding SMs
 * that the compute stream's rate reads. The task kinds (engine_stream.c,
 * engine_coll.c, engine_p2p.c, engine_ps.c) sit above this file and
 * below engine.c, so the engine's files call each other in one
 * direction only. */
#include "engine-private.h"

#include <stdio.h>

void engine_start_actor(const char *name, sg_host_t h, xbt_main_func_t fn, void *data,
			bool daemon)
{
	sg_actor_t a = sg_actor_init(name, h);
	sg_actor_set_data(a, data);
	sg_actor_start_(a, fn, 0, NULL);
	if (daemon)
		sg_actor_daemonize(a);
}

sg_host_t engine_host_of(int rank)
{
	char name[32];
	snprintf(name, sizeof(name), "g%d", rank);
	return sg_host_by_name(name);
}

void engine_comm_busy(struct rank_inst *ri, int sms, int dir)
{
	if (!ri->rate)
		return;
	ri->coll_active += dir;
	ri->coll_sms += dir * sms;
	if (ri->computing) {    /* actors run one at a time: no lock needed */
		ri->computing = false;
		sg_sem_release(ri->rate);
	}
}

sg_bar_t engine_group_barrier(struct sim *S, int leader, int kind, int stream,
			      const int *members, int n)
{
	size_t k = ((size_t)leader * GROUP_N + (size_t)kind) * STREAM_N + (size_t)stream;
	if (!S->bars[k]) {
		int act = 0;
		for (int i = 0; i < n; i++)
			act += S->fold.active[members[i]];
		S->bars[k] = sg_barrier_init((unsigned)act);
	}
	return S->bars[k];
}
