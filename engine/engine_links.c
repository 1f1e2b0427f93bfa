/* engine_links: the traffic of every link of the platform a run crossed:
 * the bytes its flows put there by category, how long it carried any,
 * and its peak utilisation (see engine-private.h).
 *
 * Bytes: every flow the engine posts is counted once, where it is posted
 * (engine_links_count), on every link of its route, attributed to the
 * category of the task that posted it. A route is asked of SimGrid once
 * per (source host, destination host) pair and kept as small link ids
 * (engine_platform_route_ids), so a flow costs its route's length. A
 * class flow of an all-to-all (engine_classes.c) is counted as the pairs
 * it stands for, on their routes. Folded runs count
 * what they simulate: the simulated ranks' flows and the mirror flows
 * they post, never the folded ranks' (no extrapolation per link).
 *
 * Busy time and peak utilisation, exact: a link's usage (the bytes per
 * second its flows get, SimGrid's Link::get_usage) is constant between
 * two instants the clock stops at, and SimGrid tells each step once it
 * has moved every transfer over it, the transfers that ended in it still
 * counted (engine_platform_on_advance). At each step, each link on the
 * active list with a usage u > 0 adds the step to its busy time and
 * u / bandwidth to its peak; one with u = 0 leaves the list. A link joins
 * the list when a flow is counted on it, or when a flow that waited for
 * its receiver starts (engine_links_touch: the pipeline receive). So a
 * step costs the links in use, at most the links the transfers in flight
 * cross, the order of what SimGrid itself does per step (it moves every
 * transfer), never every link of the platform. A FATPIPE link (a
 * switch's crossbar, platform.c: every flow through the switch crosses
 * it and its bandwidth binds none) is never on the list: its usage would
 * cost a pass over every flow in the switch at every step and say
 * nothing (its busy time and peak are reported as not measured). */
#include "engine-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_platform.h"
#include "xalloc.h"

/* The run whose links a step of the clock is charged to (one per
 * process, NULL outside engine_run's replay). */
static struct link_traffic *g_traffic;

static void on_advance(void *ctx, double dt_s)
{
	(void)ctx;
	struct link_traffic *L = g_traffic;
	if (!L || !(dt_s > 0))
		return;
	int keep = 0;
	for (int i = 0; i < L->nactive; i++) {
		struct link_tally *k = &L->t[L->active[i]];
		double u = engine_platform_link_usage(engine_platform_link_of_id(L->active[i]));
		if (u > 0) {
			k->busy_s += dt_s;
			if (k->bw_Bps > 0 && u / k->bw_Bps > k->peak_util)
				k->peak_util = u / k->bw_Bps;
			L->active[keep++] = L->active[i];
		} else {
			k->active = false;
		}
	}
	L->nactive = keep;
}

void engine_links_init(struct sim *S)
{
	static bool hooked;
	g_traffic = &S->traffic;
	if (!hooked) {
		engine_platform_on_advance(on_advance, NULL);
		hooked = true;
	}
}

/* The tally of link id, made on first use; the link joins the active list. */
static struct link_tally *tally(struct link_traffic *L, int id)
{
	if (id >= L->n) {
		XGROW(L->t, L->cap, (size_t)id + 1);
		memset(&L->t[L->n], 0, (size_t)(id + 1 - L->n) * sizeof(*L->t));
		for (int i = L->n; i <= id; i++)
			L->t[i].bw_Bps = -1; /* asked of SimGrid on first use */
		L->n = id + 1;
	}
	struct link_tally *k = &L->t[id];
	if (k->bw_Bps < 0) {
		sg_link_t l = engine_platform_link_of_id(id);
		k->bw_Bps = sg_link_get_bandwidth(l);
		k->fatpipe = !sg_link_is_shared(l);
		k->active = k->fatpipe; /* never on the list */
	}
	if (!k->active) {
		k->active = true;
		XGROW(L->active, L->active_cap, (size_t)L->nactive + 1);
		L->active[L->nactive++] = id;
	}
	return k;
}

void engine_links_count(struct sim *S, sg_host_t src, sg_host_t dst, double bytes, int cat)
{
	const int *ids;
	if (!src || !dst || src == dst)
		return;
	int n = engine_platform_route_ids(src, dst, &ids);
	for (int i = 0; i < n; i++)
		tally(&S->traffic, ids[i])->bytes[cat] += bytes;
}

void engine_links_touch(struct sim *S, sg_host_t src, sg_host_t dst)
{
	const int *ids;
	if (!src || !dst || src == dst)
		return;
	int n = engine_platform_route_ids(src, dst, &ids);
	for (int i = 0; i < n; i++)
		tally(&S->traffic, ids[i]);
}

static double total_bytes(const struct engine_link_stats *l)
{
	double s = 0;
	for (int c = 0; c < CAT_N; c++)
		s += l->bytes[c];
	return s;
}

/* Most bytes first, then by name: the order is the run's, not the heap's. */
static int by_bytes(const void *a, const void *b)
{
	const struct engine_link_stats *x = a, *y = b;
	double bx = total_bytes(x), by = total_bytes(y);
	if (bx != by)
		return bx > by ? -1 : 1;
	return strcmp(x->name, y->name);
}

void engine_links_collect(struct sim *S, struct engine_result *out, double iterations)
{
	struct link_traffic *L = &S->traffic;
	g_traffic = NULL;
	out->links = xcalloc((size_t)L->n + 1, sizeof(*out->links));
	out->nlinks = 0;
	for (int id = 0; id < L->n; id++) {
		const struct link_tally *k = &L->t[id];
		struct engine_link_stats *o = &out->links[out->nlinks];
		for (int c = 0; c < CAT_N; c++)
			o->bytes[c] = k->bytes[c] / iterations;
		if (!(total_bytes(o) >= 1))
			continue; /* a class flow split before it moved a byte */
		snprintf(o->name, sizeof(o->name), "%s", sg_link_get_name(engine_platform_link_of_id(id)));
		o->busy_s = k->busy_s / iterations;
		o->peak_util = k->peak_util;
		o->fatpipe = k->fatpipe;
		o->bw_Bps = k->bw_Bps;
		out->nlinks++;
	}
	qsort(out->links, (size_t)out->nlinks, sizeof(*out->links), by_bytes);
}

void engine_links_finish(struct sim *S)
{
	if (g_traffic == &S->traffic)
		g_traffic = NULL;
	free(S->traffic.t);
	free(S->traffic.active);
}
