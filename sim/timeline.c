/* timeline: the stage ranks' compute and communication over the iteration
 * (see timeline.h).
 *
 * The engine reports a rank's compute-stream tasks and waits in time
 * order (one actor replays the stream), so the compute lane is appended
 * to and merged with its last interval. Communication tasks of several
 * streams end in nondecreasing time but may have begun before earlier
 * ones ended: the collective and the transfer lanes are each a union of
 * disjoint intervals, a new one absorbing the last ones it overlaps. */
#include "timeline.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "program.h"
#include "xalloc.h"

struct tl_lane {
	struct timeline_seg *v;
	size_t n, cap;
};

struct timeline {
	struct engine_observer obs;
	const struct engine_observer *inner;
	int nstages, nranks;
	int *rank_of_stage;         /* [nstages] */
	int *stage_of_rank;         /* [nranks] the stage drawn by this rank, -1: none */
	/* [nstages] per lane: compute; collectives and transfers apart (each
	 * a union of disjoint intervals) */
	struct tl_lane *lane[TL_NLANES];
	double end_s;
};

static void push(struct tl_lane *l, const struct timeline_seg *s)
{
	XGROW(l->v, l->cap, l->n + 1);
	l->v[l->n++] = *s;
}

/* Append s to a lane in time order, merged with the last interval when
 * it continues it (same kind, no gap). */
static void append(struct tl_lane *l, const struct timeline_seg *s)
{
	if (!(s->t1_s > s->t0_s))
		return;
	struct timeline_seg *p = l->n ? &l->v[l->n - 1] : NULL;
	if (p && p->state == s->state && p->mb == s->mb && p->chunk == s->chunk && p->cat == s->cat &&
	    s->t0_s - p->t1_s <= 1e-12 * fmax(1, s->t0_s)) {
		p->t1_s = fmax(p->t1_s, s->t1_s);
		return;
	}
	push(l, s);
}

/* Add s to a union of disjoint intervals; s ends no earlier than any. */
static void unite(struct tl_lane *l, struct timeline_seg s)
{
	if (!(s.t1_s > s.t0_s))
		return;
	while (l->n && s.t0_s <= l->v[l->n - 1].t1_s) {
		const struct timeline_seg *p = &l->v[--l->n];
		s.t0_s = fmin(s.t0_s, p->t0_s);
		s.t1_s = fmax(s.t1_s, p->t1_s);
	}
	push(l, &s);
}

static void on_begin(void *ctx, const struct engine_result *out)
{
	struct timeline *tl = ctx;
	tl->nranks = out->nranks;
	for (int r = 0; r < out->nranks; r++)
		if (out->rank[r].stage + 1 > tl->nstages)
			tl->nstages = out->rank[r].stage + 1;
	tl->rank_of_stage = xcalloc((size_t)tl->nstages + 1, sizeof(int));
	tl->stage_of_rank = xcalloc((size_t)tl->nranks + 1, sizeof(int));
	for (int r = 0; r < tl->nranks; r++)
		tl->stage_of_rank[r] = -1;
	for (int s = 0; s < tl->nstages; s++)
		tl->rank_of_stage[s] = -1;
	for (int r = 0; r < out->nranks; r++) {
		int s = out->rank[r].stage;
		if (tl->rank_of_stage[s] < 0) {
			tl->rank_of_stage[s] = out->rank[r].representative;
			tl->stage_of_rank[out->rank[r].representative] = s;
		}
	}
	for (int k = 0; k < TL_NLANES; k++)
		tl->lane[k] = xcalloc((size_t)tl->nstages + 1, sizeof(**tl->lane));
	if (tl->inner && tl->inner->begin)
		tl->inner->begin(tl->inner->ctx, out);
}

static int stage_of(const struct timeline *tl, int rank)
{
	return tl->stage_of_rank && rank >= 0 && rank < tl->nranks ? tl->stage_of_rank[rank] : -1;
}

static void on_start(void *ctx, int rank, const struct program *p, int ti, double now)
{
	struct timeline *tl = ctx;
	if (tl->inner && tl->inner->task_start)
		tl->inner->task_start(tl->inner->ctx, rank, p, ti, now);
}

static void on_end(void *ctx, int rank, const struct program *p, int ti, double start, double end, int peer)
{
	struct timeline *tl = ctx;
	if (tl->inner && tl->inner->task_end)
		tl->inner->task_end(tl->inner->ctx, rank, p, ti, start, end, peer);
	int s = stage_of(tl, rank);
	if (s < 0)
		return;
	const struct task *t = &p->t[ti];
	struct timeline_seg g = { .t0_s = start, .t1_s = end, .mb = t->mb, .chunk = (short)t->chunk,
				  .cat = (signed char)t->cat };
	if (end > tl->end_s)
		tl->end_s = end;
	if (t->kind == TASK_COMPUTE && t->stream == STREAM_COMPUTE) {
		g.state = t->cat == CAT_FORWARD ? TL_FORWARD
			: t->cat == CAT_BACKWARD || t->cat == CAT_RECOMPUTE ? TL_BACKWARD : TL_OTHER;
		append(&tl->lane[TL_LANE_COMPUTE][s], &g);
	} else if (t->kind == TASK_COLL) {
		g.state = TL_COLL;
		g.mb = g.chunk = g.cat = -1;
		unite(&tl->lane[TL_LANE_COLL][s], g);
	} else if (t->kind == TASK_SEND || t->kind == TASK_RECV) {
		g.state = TL_P2P;
		g.mb = g.chunk = g.cat = -1;
		unite(&tl->lane[TL_LANE_P2P][s], g);
	}
}

static void on_wait(void *ctx, int rank, double from, double to, int what)
{
	struct timeline *tl = ctx;
	if (tl->inner && tl->inner->compute_wait)
		tl->inner->compute_wait(tl->inner->ctx, rank, from, to, what);
	int s = stage_of(tl, rank);
	if (s < 0)
		return;
	struct timeline_seg g = { .t0_s = from, .t1_s = to, .mb = -1, .chunk = -1, .cat = (signed char)what,
				  .state = what == ENGINE_WAIT_BUBBLE ? TL_BUBBLE
					 : what == CAT_PP_COMM ? TL_EXPOSED_P2P : TL_EXPOSED_COLL };
	if (to > tl->end_s)
		tl->end_s = to;
	append(&tl->lane[TL_LANE_COMPUTE][s], &g);
}

static void on_link(void *ctx, int i, const char *name, double t, double used, double bw)
{
	struct timeline *tl = ctx;
	tl->inner->link_sample(tl->inner->ctx, i, name, t, used, bw);
}

struct timeline *timeline_create(const struct engine_observer *inner)
{
	struct timeline *tl = xcalloc(1, sizeof(*tl));
	tl->inner = inner;
	tl->obs = (struct engine_observer){ .ctx = tl, .begin = on_begin, .task_start = on_start,
					    .task_end = on_end, .compute_wait = on_wait };
	if (inner && inner->link_sample && inner->link_sample_s > 0) {
		tl->obs.link_sample_s = inner->link_sample_s;
		tl->obs.link_sample = on_link;
	}
	return tl;
}

void timeline_destroy(struct timeline *tl)
{
	if (!tl)
		return;
	for (int k = 0; k < TL_NLANES; k++) {
		for (int s = 0; tl->lane[k] && s < tl->nstages; s++)
			free(tl->lane[k][s].v);
		free(tl->lane[k]);
	}
	free(tl->rank_of_stage);
	free(tl->stage_of_rank);
	free(tl);
}

const struct engine_observer *timeline_observer(struct timeline *tl)
{
	return &tl->obs;
}

int timeline_stages(const struct timeline *tl)
{
	return tl->nstages;
}

int timeline_rank(const struct timeline *tl, int stage)
{
	return tl->rank_of_stage[stage];
}

double timeline_end_s(const struct timeline *tl)
{
	return tl->end_s;
}

const struct timeline_seg *timeline_lane(const struct timeline *tl, int stage, enum timeline_lane lane,
					 size_t *n)
{
	*n = tl->lane[lane][stage].n;
	return tl->lane[lane][stage].v;
}

/* Add segment g to the bins of width w from b0 it covers; a compute
 * task also claims a bin where it is the longest so far (longest[]). */
static void bin_add(struct timeline_bin *bin, double *longest, int nbins, double b0, double w,
		    const struct timeline_seg *g)
{
	int lo = (int)floor((g->t0_s - b0) / w), hi = (int)floor((g->t1_s - b0) / w);
	for (int k = lo < 0 ? 0 : lo; k <= hi && k < nbins; k++) {
		double a = fmax(g->t0_s, b0 + k * w), b = fmin(g->t1_s, b0 + (k + 1) * w);
		if (!(b > a))
			continue;
		struct timeline_bin *x = &bin[k];
		x->state_s[g->state] += b - a;
		if (g->state == TL_EXPOSED_COLL && g->cat >= 0)
			x->exposed_cats |= 1u << g->cat;
		if (g->state <= TL_OTHER && b - a > longest[k]) {
			longest[k] = b - a;
			x->mb = g->mb;
			x->chunk = g->chunk;
			x->state = g->state;
		}
	}
}

void timeline_bin(const struct timeline *tl, int stage, unsigned lanes, double t0_s, double t1_s,
		  int nbins, struct timeline_bin *bin)
{
	double w = (t1_s - t0_s) / nbins;
	double *longest = xcalloc((size_t)nbins + 1, sizeof(double));
	for (int k = 0; k < nbins; k++)
		bin[k] = (struct timeline_bin){ .mb = -1, .chunk = -1, .state = -1 };
	for (int l = 0; l < TL_NLANES && w > 0; l++) {
		if (!(lanes & (1u << l)))
			continue;
		const struct tl_lane *ln = &tl->lane[l][stage];
		for (size_t i = 0; i < ln->n; i++)
			bin_add(bin, longest, nbins, t0_s, w, &ln->v[i]);
	}
	free(longest);
}
