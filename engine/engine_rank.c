/* engine_rank: what every kind of task uses on a rank (see
 * engine-private.h): the host a rank runs on, starting an actor, the
 * barrier of a group instance, the count of collectives holding SMs
 * that the compute stream's rate reads, and the mailboxes of messages
 * (resolved once each: a name printed and looked up for every send and
 * receive cost 3-5 % of an unfolded run). The task kinds (engine_stream.c,
 * engine_coll.c, engine_p2p.c, engine_ps.c) sit above this file and
 * below engine.c, so the engine's files call each other in one
 * direction only. */
#include "engine-private.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "hash.h"
#include "xalloc.h"

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

void engine_comm_busy(struct rank_inst *ri, int sms, double hbm_Bps, int dir)
{
	if (!ri->rate)
		return;
	ri->coll_active += dir;
	ri->coll_sms += dir * sms;
	ri->coll_hbm_Bps = ri->coll_active ? ri->coll_hbm_Bps + dir * hbm_Bps : 0;
	if (ri->computing) {    /* actors run one at a time: no lock needed */
		ri->computing = false;
		sg_sem_release(ri->rate);
	}
}

struct group_bar *engine_group_barrier(struct sim *S, int leader, int kind, int stream,
				       const int *members, int n)
{
	size_t k = ((size_t)leader * GROUP_N + (size_t)kind) * STREAM_N + (size_t)stream;
	if (!S->bars[k]) {
		struct group_bar *gb = xcalloc(1, sizeof(*gb));
		for (int i = 0; i < n; i++)
			gb->members += S->fold.active[members[i]];
		gb->bar = sg_barrier_init((unsigned)gb->members);
		S->bars[k] = gb;
	}
	return S->bars[k];
}

/* The mailboxes made so far, open addressing on a 64-bit key (kind,
 * channel, source, destination); a process runs one simulation. */
static struct mbox_slot {
	uint64_t key;   /* 0: empty */
	sg_mailbox_t mb;
} *g_mbox;
static size_t g_mbox_cap, g_mbox_n;

static void mbox_grow(void)
{
	size_t ncap = g_mbox_cap ? 2 * g_mbox_cap : 4096;
	struct mbox_slot *n = xcalloc(ncap, sizeof(*n));
	for (size_t i = 0; i < g_mbox_cap; i++)
		if (g_mbox[i].key) {
			size_t j = hash_slot(g_mbox[i].key, ncap);
			while (n[j].key)
				j = (j + 1) & (ncap - 1);
			n[j] = g_mbox[i];
		}
	free(g_mbox);
	g_mbox = n;
	g_mbox_cap = ncap;
}

/* The slot of key in the table (grown first if needed): its own, or the
 * empty one where it goes. */
static struct mbox_slot *mbox_find(uint64_t key)
{
	if (2 * (g_mbox_n + 1) > g_mbox_cap)
		mbox_grow();
	size_t j = hash_slot(key, g_mbox_cap);
	while (g_mbox[j].key && g_mbox[j].key != key)
		j = (j + 1) & (g_mbox_cap - 1);
	return &g_mbox[j];
}

sg_mailbox_t engine_mailbox(enum engine_mbox kind, int chan, int src, int dst)
{
	uint64_t key = ((uint64_t)(kind + 1) << 62) | ((uint64_t)(chan & 0xf) << 58) |
		       ((uint64_t)(uint32_t)src << 29) | (uint64_t)(uint32_t)dst;
	struct mbox_slot *sl = mbox_find(key);
	if (sl->key)
		return sl->mb;
	char name[64];
	snprintf(name, sizeof(name), "%c%d_%d_%d", "cpi"[kind], chan, src, dst);
	/* a simcall: other actors run meanwhile and may fill the table (or
	 * grow it), so the slot is found again after */
	sg_mailbox_t mb = sg_mailbox_by_name(name);
	sl = mbox_find(key);
	if (!sl->key) {
		sl->key = key;
		sl->mb = mb;
		g_mbox_n++;
	}
	return sl->mb;
}
