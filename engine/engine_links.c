/* engine_links: the traffic of every link of the platform a run crossed:
 * the bytes its flows put there by category, how long it carried any,
 * and its peak utilisation (see engine-private.h).
 *
 * Bytes: every flow the engine posts is counted once, where it is posted
 * (engine_links_count), on every link of its route, attributed to the
 * category of the task that posted it. A route is asked of SimGrid once
 * per (source host, destination host) pair and kept as small link ids
 * (engine_platform_route_ids). A flow adds its bytes to its route's
 * record (open addressing on the host pair), and the routes' bytes go to
 * their links once, when the run is collected: one lookup per flow, not
 * a cache miss per link of its route. A class flow of an all-to-all
 * (engine_classes.c) is counted as the pairs it stands for, on their
 * routes. Folded runs count what they simulate: the simulated ranks'
 * flows and the mirror flows they post, never the folded ranks' (no
 * extrapolation per link).
 *
 * Busy time and peak utilisation, exact: a link's usage (the bytes per
 * second its flows get, SimGrid's Link::get_usage) is constant between
 * two instants the clock stops at, and SimGrid tells each step once it
 * has moved every transfer over it, the transfers that ended in it still
 * counted (engine_platform_on_advance). At each step, each link on the
 * active list with a usage u > 0 adds the step to its busy time and u to
 * its peak (a maximum; over its bandwidth when collected); one with
 * u = 0 leaves the list. A link joins the list when a flow is counted on
 * it, or when a flow that waited for its receiver starts
 * (engine_links_touch: the pipeline receive). A step reads again only
 * the links on the list whose usage may have changed since they were
 * read (engine_changed.h: the links of the transfers SimGrid re-solved
 * or that ended; engine_changed.cpp says why no other's can have), and
 * the links that joined since; every other link on the list still
 * carries what it did (> 0, its peak unchanged) and only adds the step
 * to its busy time (busy times kept beside the list, one add each).
 * Where SimGrid cannot say which (the lazy update), every link of the
 * list is read at each step the network changed
 * (engine_platform_net_stamp): a get_usage per link in use, a pass over
 * each one's flows, the cost that grew with the ranks (the figures are
 * in the commit that made the pass incremental). A switch's crossbar (platform.c: every
 * flow through the switch crosses it and its bandwidth binds none; a
 * FATPIPE, or a shared link of unbounded bandwidth, engine_platform.cpp)
 * is never on the list: its usage would cost a pass over
 * every flow in the switch at every step and say nothing (its busy time
 * and peak are reported as not measured).
 * A private collective replayed as one member's flows (engine_replay.c)
 * gives the plan's other links the steps its flows would have been read
 * at, one by one, from a log of the clock's steps kept while a replay is
 * open (engine_links_mark, engine_links_add_steps): the same sums.
 * The scenario key simulation.link_traffic (engine_job.links) keeps the
 * bytes and reads no usage ("bytes"), or counts nothing ("off"): an
 * unfolded run of many short collectives spends a few per cent of its
 * CPU time on the exact figures (the figures of the commit that added
 * the key). */
#include "engine-private.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_changed.h"
#include "engine_platform.h"
#include "bug.h"
#include "xalloc.h"

/* A link's state (link_traffic.state): not yet on the active list, on
 * it, or a FATPIPE link (never on it). */
enum { LINK_IDLE, LINK_ACTIVE, LINK_FATPIPE };

/* The runs whose links a step of the clock is charged to: one, or the
 * jobs of engine_run_many (each counts its own flows' links; a link's
 * usage is every job's flows on it). None outside the replay. */
#define LINKS_MAX_RUNS 64
static struct link_traffic *g_traffic[LINKS_MAX_RUNS];
static int g_ntraffic;

/* Whether SimGrid says which links' usage may have changed at a step
 * (engine_changed.h): set at the first run's start. */
static bool g_incremental;

/* Whether the links read at the last step that read them must be read
 * again: the network changed since (engine_platform_net_stamp). */
static bool must_reread(struct link_traffic *L, struct engine_net_stamp now)
{
	unsigned long v[4] = { now.changes, now.started, now.ended, now.failed };
	bool changed = memcmp(v, L->seen, sizeof(v)) != 0;
	memcpy(L->seen, v, sizeof(v));
	return changed;
}

/* Active link i joined or left: its record and the arrays agree. */
static void put_active(struct link_traffic *L, int i, int id, double busy_s)
{
	L->active[i] = id;
	L->abusy_s[i] = busy_s;
	L->lk[id].pos = i;
}

static void idle(struct link_traffic *L, int id, double busy_s)
{
	L->lk[id].busy_s = busy_s;
	L->lk[id].state = LINK_IDLE;
	L->idled++;
}

/* Read the usage of active links [from, nactive), each over a step of
 * dt_s: one in use adds the step to its busy time and its usage to its
 * peak and stays (in order), an idle one leaves. */
static void read_tail(struct link_traffic *L, int from, double dt_s)
{
	int keep = from;
	for (int i = from; i < L->nactive; i++) {
		int id = L->active[i];
		double u = engine_platform_link_usage(L->lk[id].link);
		if (u > 0) {
			if (u > L->lk[id].peak_Bps)
				L->lk[id].peak_Bps = u;
			put_active(L, keep++, id, L->abusy_s[i] + dt_s);
		} else
			idle(L, id, L->abusy_s[i]);
	}
	L->nactive = keep;
	L->nread = keep;
}

/* Active link id, read before, may have a new usage: read it; if idle,
 * it leaves (the last read link takes its place, the last link that
 * joined since takes that one's). Its busy time is added after. */
static void reread(struct link_traffic *L, int id)
{
	double u = engine_platform_link_usage(L->lk[id].link);
	if (u > 0) {
		if (u > L->lk[id].peak_Bps)
			L->lk[id].peak_Bps = u;
		return;
	}
	int p = L->lk[id].pos, last = L->nread - 1, tail = L->nactive - 1;
	idle(L, id, L->abusy_s[p]);
	if (p != last)
		put_active(L, p, L->active[last], L->abusy_s[last]);
	if (tail != last)
		put_active(L, last, L->active[tail], L->abusy_s[tail]);
	L->nread--;
	L->nactive--;
}

/* Busy times b[0..n) each add the step dt_s, four at a time (the pass's
 * largest cost on a large unfolded run: every link in use at every step;
 * the same sums, each its own). */
static void add_step(double *restrict b, int n, double dt_s)
{
	int i = 0;
	for (; i + 4 <= n; i += 4) {
		b[i] += dt_s;
		b[i + 1] += dt_s;
		b[i + 2] += dt_s;
		b[i + 3] += dt_s;
	}
	for (; i < n; i++)
		b[i] += dt_s;
}

/* Keep step dt_s while a mark is open (engine_links_mark). */
static void log_step(struct link_traffic *L, double dt_s)
{
	if (!L->nopen)
		return;
	XGROW(L->step, L->step_cap, L->nstep + 1);
	L->step[L->nstep++] = dt_s;
}

/* A step of dt_s: the links of nch routes whose usage may have changed
 * (ch), or every link (nch < 0). The links read before and not among
 * them carry what they did (> 0: their peaks stand) and add the step;
 * the links that joined since are read. */
static void advance_one(struct link_traffic *L, double dt_s, int nch, const struct engine_changed_span *ch)
{
	if (nch < 0) {
		read_tail(L, 0, dt_s);
		log_step(L, dt_s);
		return;
	}
	unsigned long long step = ++L->steps;
	for (int k = 0; k < nch; k++)
		for (int j = 0; j < ch[k].n; j++) {
			int id = ch[k].ids[j];
			if (id >= L->n)
				continue;
			struct link_rec *r = &L->lk[id];
			if (r->state == LINK_ACTIVE && r->pos < L->nread && r->read_at != step) {
				r->read_at = step;
				reread(L, id);
			}
		}
	add_step(L->abusy_s, L->nread, dt_s);
	read_tail(L, L->nread, dt_s);
	log_step(L, dt_s);
}

static void on_advance(void *ctx, double dt_s)
{
	(void)ctx;
	if (!(dt_s > 0) || g_ntraffic == 0)
		return;
	const struct engine_changed_span *ch = NULL;
	int nch = -1;
	struct engine_net_stamp now = { 0 };
	if (g_incremental)
		nch = engine_changed_links(&ch);
	else
		now = engine_platform_net_stamp();
	for (int k = 0; k < g_ntraffic; k++)
		if (g_traffic[k])
			advance_one(g_traffic[k], dt_s,
				    g_incremental || must_reread(g_traffic[k], now) ? nch : 0, ch);
	if (g_incremental)
		engine_changed_consumed();
}

void engine_links_init(struct sim *S)
{
	static bool hooked;
	S->traffic.mode = S->job->links;
	if (S->traffic.mode == ENGINE_LINKS_OFF)
		return;
	if (S->traffic.mode == ENGINE_LINKS_EXACT) {
		BUG_ON(g_ntraffic >= LINKS_MAX_RUNS, "more runs in one replay than %d", LINKS_MAX_RUNS);
		g_traffic[g_ntraffic++] = &S->traffic;
		S->traffic.nread = 0;       /* the first step reads every link */
		g_incremental = engine_changed_start();
		if (!g_incremental)
			(void)engine_platform_net_stamp(); /* starts counting */
	}
	S->traffic.rcap = 1024;
	S->traffic.routes = xcalloc(S->traffic.rcap, sizeof(*S->traffic.routes));
	if (!hooked) {
		engine_platform_on_advance(on_advance, NULL);
		hooked = true;
	}
}

/* The per-link arrays cover every id the adapter has given. */
static void cover_links(struct link_traffic *L)
{
	int need = engine_platform_nlinks();
	if (need <= L->n)
		return;
	if ((size_t)need > L->cap) {
		size_t cap = L->cap ? L->cap : 256;
		while (cap < (size_t)need)
			cap *= 2;
		L->lk = xreallocarray(L->lk, cap, sizeof(*L->lk));
		L->cap = cap;
	}
	for (int i = L->n; i < need; i++) {
		sg_link_t l = engine_platform_link_of_id(i);
		L->lk[i] = (struct link_rec){
			.link = l,
			.state = engine_platform_link_is_crossbar(l) ? LINK_FATPIPE : LINK_IDLE,
		};
	}
	L->n = need;
}

static size_t pair_hash(sg_host_t src, sg_host_t dst)
{
	return (size_t)(engine_platform_pair_mix(src, dst) >> 20);
}

/* The record of the route from src to dst, made on first use (open
 * addressing, at most half full). */
static struct route_rec *route_of(struct link_traffic *L, sg_host_t src, sg_host_t dst)
{
	size_t m = L->rcap - 1, h = pair_hash(src, dst) & m;
	while (L->routes[h].src && (L->routes[h].src != src || L->routes[h].dst != dst))
		h = (h + 1) & m;
	struct route_rec *r = &L->routes[h];
	if (r->src)
		return r;
	r->src = src;
	r->dst = dst;
	r->n = engine_platform_route_ids(src, dst, &r->all);
	for (int i = 0; i < r->n && i < ROUTE_INLINE_LINKS; i++)
		r->ids[i] = r->all[i];
	cover_links(L);
	if (++L->nroutes * 2 > L->rcap) { /* grow and rehash */
		size_t ncap = L->rcap * 2;
		struct route_rec *nr = xcalloc(ncap, sizeof(*nr));
		for (size_t q = 0; q < L->rcap; q++)
			if (L->routes[q].src) {
				size_t g = pair_hash(L->routes[q].src, L->routes[q].dst) & (ncap - 1);
				while (nr[g].src)
					g = (g + 1) & (ncap - 1);
				nr[g] = L->routes[q];
			}
		free(L->routes);
		L->routes = nr;
		L->rcap = ncap;
		return route_of(L, src, dst);
	}
	return r;
}

/* The links of route r that are idle join the active list: none if no
 * link left the list since r's last joined (a flow's usual case). */
static void activate(struct link_traffic *L, struct route_rec *r)
{
	if (r->gen == L->idled + 1)
		return;
	r->gen = L->idled + 1;
	for (int i = 0; i < r->n; i++) {
		int id = i < ROUTE_INLINE_LINKS ? r->ids[i] : r->all[i];
		if (L->lk[id].state != LINK_IDLE)
			continue;
		L->lk[id].state = LINK_ACTIVE;
		if ((size_t)L->nactive + 1 > L->active_cap) {
			size_t cap = L->active_cap;
			XGROW(L->active, cap, (size_t)L->nactive + 1);
			XGROW(L->abusy_s, L->active_cap, (size_t)L->nactive + 1);
		}
		put_active(L, L->nactive++, id, L->lk[id].busy_s);
	}
}

void engine_links_count(struct sim *S, sg_host_t src, sg_host_t dst, double bytes, int cat)
{
	if (!src || !dst || src == dst || S->traffic.mode == ENGINE_LINKS_OFF)
		return;
	struct route_rec *r = route_of(&S->traffic, src, dst);
	r->bytes[cat] += bytes;
	if (S->traffic.mode == ENGINE_LINKS_EXACT)
		activate(&S->traffic, r);
}

void engine_links_touch(struct sim *S, sg_host_t src, sg_host_t dst)
{
	if (!src || !dst || src == dst || S->traffic.mode != ENGINE_LINKS_EXACT)
		return;
	activate(&S->traffic, route_of(&S->traffic, src, dst));
}

void engine_links_bytes(struct sim *S, sg_host_t src, sg_host_t dst, double bytes, int cat)
{
	if (!src || !dst || src == dst || S->traffic.mode == ENGINE_LINKS_OFF)
		return;
	route_of(&S->traffic, src, dst)->bytes[cat] += bytes;
}

long long engine_links_mark(struct sim *S)
{
	struct link_traffic *L = &S->traffic;
	if (L->mode != ENGINE_LINKS_EXACT)
		return 0;
	if (!L->nopen) {        /* nothing kept: start afresh */
		L->base += (long long)L->nstep;
		L->nstep = 0;
	}
	long long m = L->base + (long long)L->nstep;
	XGROW(L->open, L->open_cap, (size_t)L->nopen + 1);
	L->open[L->nopen++] = m;
	return m;
}

/* Mark m closed; drop the steps no open mark needs once they are many. */
static void close_mark(struct link_traffic *L, long long m)
{
	for (int i = 0; i < L->nopen; i++)
		if (L->open[i] == m) {
			L->open[i] = L->open[--L->nopen];
			break;
		}
	if (L->nstep < 4096)
		return;
	long long lo = L->base + (long long)L->nstep;
	for (int i = 0; i < L->nopen; i++)
		if (L->open[i] < lo)
			lo = L->open[i];
	size_t drop = (size_t)(lo - L->base);
	if (drop * 2 < L->nstep)
		return;
	memmove(L->step, L->step + drop, (L->nstep - drop) * sizeof(*L->step));
	L->nstep -= drop;
	L->base = lo;
}

void engine_links_add_steps(struct sim *S, long long mark, const int *ids, int n)
{
	struct link_traffic *L = &S->traffic;
	if (L->mode != ENGINE_LINKS_EXACT)
		return;
	cover_links(L);
	size_t from = (size_t)(mark - L->base);
	for (int k = 0; k < n; k++) {
		int id = ids[k];
		if (id >= L->n)
			continue;
		double *b = L->lk[id].state == LINK_ACTIVE ? &L->abusy_s[L->lk[id].pos] : &L->lk[id].busy_s;
		for (size_t i = from; i < L->nstep; i++)
			*b += L->step[i];
	}
	close_mark(L, mark);
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
	for (int k = 0; k < g_ntraffic; k++)   /* the replay is over */
		g_traffic[k] = NULL;
	for (int i = 0; i < L->nactive; i++)   /* the busy times of the links in use */
		L->lk[L->active[i]].busy_s = L->abusy_s[i];
	g_ntraffic = 0;
	out->links = NULL;
	out->nlinks = 0;
	if (L->mode == ENGINE_LINKS_OFF)
		return;
	double *bytes = xcalloc((size_t)L->n * CAT_N + 1, sizeof(*bytes));
	for (size_t q = 0; q < L->rcap; q++) {
		const struct route_rec *r = &L->routes[q];
		for (int i = 0; r->src && i < r->n; i++)
			for (int c = 0; c < CAT_N; c++)
				bytes[(size_t)r->all[i] * CAT_N + c] += r->bytes[c];
	}
	out->links = xcalloc((size_t)L->n + 1, sizeof(*out->links));
	out->nlinks = 0;
	for (int id = 0; id < L->n; id++) {
		struct engine_link_stats *o = &out->links[out->nlinks];
		for (int c = 0; c < CAT_N; c++)
			o->bytes[c] = bytes[(size_t)id * CAT_N + c] / iterations;
		if (!(total_bytes(o) >= 1))
			continue;
		snprintf(o->name, sizeof(o->name), "%s", sg_link_get_name(L->lk[id].link));
		o->bw_Bps = sg_link_get_bandwidth(L->lk[id].link);
		o->fatpipe = L->lk[id].state == LINK_FATPIPE;
		o->timed = L->mode == ENGINE_LINKS_EXACT && !o->fatpipe;
		o->busy_s = L->lk[id].busy_s / iterations;
		o->peak_util = o->bw_Bps > 0 ? L->lk[id].peak_Bps / o->bw_Bps : 0;
		out->nlinks++;
	}
	free(bytes);
	qsort(out->links, (size_t)out->nlinks, sizeof(*out->links), by_bytes);
}

void engine_links_finish(struct sim *S)
{
	struct link_traffic *L = &S->traffic;
	for (int k = 0; k < g_ntraffic; k++)
		if (g_traffic[k] == L)
			g_traffic[k] = NULL;
	free(L->routes);
	free(L->lk);
	free(L->active);
	free(L->abusy_s);
	free(L->step);
	free(L->open);
}
