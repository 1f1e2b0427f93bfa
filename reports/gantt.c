/* gantt: the schedule chart of one iteration (plot_gantt_svg, plot.h).
 *
 * One row per pipeline stage, drawn from the simulated timeline of the
 * rank that stands for the stage (sim/timeline.h): an upper lane for its
 * compute stream and a thin strip below for its communication in flight.
 * A stage runs thousands of tasks in an iteration, most narrower than a
 * pixel, so each lane is cut into columns of equal time: one per pixel
 * up to 4 stages, wider beyond (GANTT_COLUMNS in all, at least 50 per
 * stage), so that 64 stages stay a file of a few MB. Neighbouring
 * columns taken mostly by the same pass (micro-batch, chunk, direction),
 * or with no pass by the same wait, make a run; a run is drawn as its
 * shares of time in each state stacked top to bottom (forward, backward,
 * other compute, exposed collective, exposed pipeline transfer, bubble;
 * the idle rest shows the lane's background), rounded to twelfths of the
 * lane's height: a pass reads as a block, the communication exposed
 * inside it as a band of its own colour. On the strip, a run is the
 * columns with the same kinds of communication in flight, drawn as their
 * shares in quarters. The file grows with the passes, not the tasks (at
 * most a few rectangles per column), and each run has one tooltip with
 * its time span, its unrounded shares and its pass. */
#include "plot.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "program.h"
#include "schedule.h"
#include "svg.h"
#include "timeline.h"
#include "xalloc.h"

#define W 820.0
#define ML 70.0
#define MR 190.0
#define MT 40.0
#define MB 60.0
#define GQ 12                   /* compute lane: shares in twelfths */
#define CQ 4                    /* communication strip: in quarters */
#define GANTT_COLUMNS 2400      /* columns of all the stages together */
#define GANTT_TICKS 8           /* about as many steps on the time axis */

/* What a lane column is made of, in drawing order (top first); the
 * rest of a column is idle. */
enum { G_FWD, G_BWD, G_OTHER, G_EXP_COLL, G_EXP_P2P, G_BUBBLE, G_COLL, G_P2P, G_N };
static const enum timeline_state g_state[G_N] = {
	TL_FORWARD, TL_BACKWARD, TL_OTHER, TL_EXPOSED_COLL, TL_EXPOSED_P2P, TL_BUBBLE, TL_COLL, TL_P2P
};
static const char *const g_name[G_N] = {
	"forward", "backward", "other compute", "exposed collective", "exposed pipeline transfer",
	"pipeline bubble", "collective in flight", "pipeline transfer in flight"
};
#define C_FWD_ODD "#a0cbe8"
#define C_BWD_ODD "#8cd17d"
#define C_IDLE "#e9e9e9"
static const char *const g_color[G_N] = {
	"#4e79a7", "#59a14f", "#9c755f", "#e15759", "#b07aa1", "#edc948", "#ff9da7", "#d4a6c8"
};

/* A run of columns: units per part and its pass. */
struct gcol {
	int units[G_N];
	int mb, chunk, state;
};

/* Round the shares of b (width w seconds) over parts [g0, g1) to q units
 * in all (largest remainder; the idle rest takes what is left). Shares
 * above 1 in all (collectives and transfers overlap) are scaled to 1. */
static void quantize(const struct timeline_bin *b, double w, int g0, int g1, int q, struct gcol *c)
{
	double share[G_N] = { 0 }, sum = 0, rem[G_N] = { 0 };
	memset(c->units, 0, sizeof(c->units));
	for (int g = g0; g < g1; g++)
		sum += share[g] = fmin(1, b->state_s[g_state[g]] / w);
	int used = 0;
	for (int g = g0; g < g1; g++) {
		if (sum > 1)
			share[g] /= sum;
		c->units[g] = (int)floor(share[g] * q);
		rem[g] = share[g] * q - c->units[g];
		used += c->units[g];
	}
	int left = (int)floor(fmin(sum, 1) * q + 0.5) - used;
	while (left-- > 0) {
		int best = -1;
		for (int g = g0; g < g1; g++)
			if (rem[g] > 0 && (best < 0 || rem[g] > rem[best]))
				best = g;
		if (best < 0)
			break;
		c->units[best]++;
		rem[best] = 0;
	}
}

/* A lane's geometry and what its columns are made of. */
struct glane {
	double x, y, h, px;         /* left edge, top, height, pixels per bin */
	int g0, g1, q;              /* parts drawn, units per column */
	double t0, w;               /* the bins' start and width (s) */
	const char *head;           /* tooltip prefix */
};

/* What makes a column part of a run: on the compute lane its pass (the
 * task that took most of it) or, with none, the wait that took most;
 * on the communication strip which of its parts it has at all. */
static void column_key(const struct glane *L, const struct timeline_bin *b, struct gcol *k)
{
	memset(k, 0, sizeof(*k));
	k->mb = b->mb;
	k->chunk = b->chunk;
	k->state = b->state;
	if (L->g0 != G_FWD) {
		k->mb = k->chunk = k->state = -1;
		for (int g = L->g0; g < L->g1; g++)
			k->units[g] = b->state_s[g_state[g]] > 0;
		return;
	}
	if (b->state >= 0)
		return;
	double most = 0;
	for (int g = G_EXP_COLL; g <= G_BUBBLE; g++)
		if (b->state_s[g_state[g]] > most) {
			most = b->state_s[g_state[g]];
			k->state = -1 - g;
		}
}

static bool same_key(const struct gcol *a, const struct gcol *b)
{
	return !memcmp(a->units, b->units, sizeof(a->units)) && a->mb == b->mb && a->chunk == b->chunk &&
	       a->state == b->state;
}

/* The tooltip of a run (its bins summed in *sum, k1 - k0 of them). */
static void run_tip(const struct glane *L, const struct timeline_bin *sum, const struct gcol *key, int k0, int k1,
		    char *tip, size_t n)
{
	static const char *const cat[CAT_N] = { "forward", "backward", "recompute", "optimizer", "tp", "dp",
		"param", "cp", "ep", "offload", "pp" };
	int len = snprintf(tip, n, "%s, %.4g-%.4g s:", L->head, L->t0 + k0 * L->w, L->t0 + k1 * L->w);
	for (int g = L->g0; g < L->g1 && len < (int)n; g++) {
		double pct = 100 * sum->state_s[g_state[g]] / ((k1 - k0) * L->w);
		if (pct < 0.05)
			continue;
		len += snprintf(tip + len, n - (size_t)len, " %s %.1f %%", g_name[g], pct);
		for (int c = 0; g == G_EXP_COLL && c < CAT_N && len < (int)n; c++)
			if (sum->exposed_cats & (1u << c))
				len += snprintf(tip + len, n - (size_t)len, " %s", cat[c]);
		if (len < (int)n)
			len += snprintf(tip + len, n - (size_t)len, ",");
	}
	if (len > 0 && len < (int)n && tip[len - 1] == ',')
		tip[--len] = 0;
	if (L->g0 == G_FWD && key->state >= 0 && key->mb >= 0 && len < (int)n)
		snprintf(tip + len, n - (size_t)len, " (most: %s of micro-batch %d, chunk %d)",
			 key->state == TL_FORWARD ? "forward" : key->state == TL_BACKWARD ? "backward" : "compute",
			 key->mb, key->chunk);
}

static const char *part_color(int g, const struct gcol *key)
{
	if ((g == G_FWD || g == G_BWD) && key->chunk % 2 == 1 && key->state == (int)g_state[g])
		return g == G_FWD ? C_FWD_ODD : C_BWD_ODD;
	return g_color[g];
}

/* Draw the columns [k0, k1) of one run: its mean shares, one rectangle
 * per part, one tooltip for them all. */
static void draw_run(struct svg *sv, const struct glane *L, const struct timeline_bin *bin, int k0, int k1,
		     const struct gcol *key)
{
	struct timeline_bin sum;
	memset(&sum, 0, sizeof(sum));
	for (int k = k0; k < k1; k++) {
		for (int t = 0; t < TL_NSTATES; t++)
			sum.state_s[t] += bin[k].state_s[t];
		sum.exposed_cats |= bin[k].exposed_cats;
	}
	struct gcol c;
	quantize(&sum, (k1 - k0) * L->w, L->g0, L->g1, L->q, &c);
	double x = L->x + k0 * L->px, wpx = (k1 - k0) * L->px, y = L->y;
	int parts = 0;
	for (int g = L->g0; g < L->g1; g++)
		parts += c.units[g] > 0;
	if (!parts)
		return;
	char tip[512];
	run_tip(L, &sum, key, k0, k1, tip, sizeof(tip));
	svg_group_begin(sv, tip);
	for (int g = L->g0; g < L->g1; g++) {
		if (!c.units[g])
			continue;
		double hh = L->h * c.units[g] / L->q;
		svg_rect(sv, x, y, wpx > 2 ? wpx - 0.3 : wpx, hh, part_color(g, key), NULL);
		y += hh;
	}
	if (L->g0 == G_FWD && key->state >= 0 && key->mb >= 0 && wpx > 16 && L->h >= 10)
		svg_text(sv, x + wpx / 2, L->y + L->h / 2 + 3.5, "middle", 9, 0, "%d", key->mb);
	svg_group_end(sv);
}

/* One lane of nbins columns: its background (idle), then its runs. */
static void draw_lane(struct svg *sv, const struct glane *L, const struct timeline_bin *bin, int nbins)
{
	svg_rect(sv, L->x, L->y, nbins * L->px, L->h, C_IDLE, NULL);
	struct gcol run, c;
	int k0 = 0;
	for (int k = 0; k <= nbins; k++) {
		if (k < nbins)
			column_key(L, &bin[k], &c);
		if (k > 0 && (k == nbins || !same_key(&run, &c))) {
			draw_run(sv, L, bin, k0, k, &run);
			k0 = k;
		}
		run = c;
	}
}

/* The legend: the parts a chart can show, with the odd chunks' shades
 * when the schedule has chunks. */
static void legend(struct svg *sv, int v, double x, double y)
{
	const char *names[G_N + 3], *cols[G_N + 3];
	int n = 0;
	for (int g = 0; g < G_N; g++) {
		names[n] = g == G_FWD && v > 1 ? "forward (chunk 0, 2, ...)"
			 : g == G_BWD && v > 1 ? "backward (chunk 0, 2, ...)" : g_name[g];
		cols[n++] = g_color[g];
		if (v > 1 && (g == G_FWD || g == G_BWD)) {
			names[n] = g == G_FWD ? "forward (chunk 1, 3, ...)" : "backward (chunk 1, 3, ...)";
			cols[n++] = g == G_FWD ? C_FWD_ODD : C_BWD_ODD;
		}
		if (g == G_BUBBLE) {
			names[n] = "idle";
			cols[n++] = C_IDLE;
		}
	}
	svg_legend(sv, x, y, names, cols, n);
	static const char *const note[] = { "upper lane: the compute stream,", "a column: shares of its time;",
					    "strip: communication in flight;", "numbers: micro-batch" };
	for (int i = 0; i < 4; i++)
		svg_text(sv, x, y + 18 * n + 12 + 13 * i, "start", 10, 0, "%s", note[i]);
}

/* The time axis: nice ticks, grid, labels. */
static void time_axis(struct svg *sv, const struct svg_axes *a)
{
	double tk[SVG_MAX_TICKS], st;
	int n = svg_nice_ticks(a->x0, a->x1, GANTT_TICKS, tk, SVG_MAX_TICKS, &st);
	for (int i = 0; i < n; i++) {
		double x = svg_ax_x(a, tk[i]);
		svg_line(sv, x, a->py, x, a->py + a->ph, "#e0e0e0", 1, false);
		svg_text(sv, x, a->py + a->ph + 16, "middle", 11, 0, "%g", tk[i]);
	}
	svg_line(sv, a->px, a->py + a->ph, a->px + a->pw, a->py + a->ph, "#333333", 1.2, false);
	svg_line(sv, a->px, a->py, a->px, a->py + a->ph, "#333333", 1.2, false);
	svg_text(sv, a->px + a->pw / 2, a->py + a->ph + 36, "middle", 12, 0,
		 "time from the start of the iteration (s)");
	svg_text(sv, a->px - 46, a->py + a->ph / 2, "middle", 12, -90, "pipeline stage");
}

/* Stage s's two lanes at row top y of height row. */
static void draw_stage(struct svg *sv, const struct svg_axes *a, const struct timeline *tl, int s, double y,
		       double row, struct timeline_bin *bin, int nbins)
{
	char head[64];
	snprintf(head, sizeof(head), "stage %d (rank %d)", s, timeline_rank(tl, s));
	struct glane L = { a->px, y + row * 0.08, row * 0.58, a->pw / nbins, G_FWD, G_COLL, GQ, a->x0,
			   (a->x1 - a->x0) / nbins, head };
	timeline_bin(tl, s, 1u << TL_LANE_COMPUTE, a->x0, a->x1, nbins, bin);
	draw_lane(sv, &L, bin, nbins);
	L.y = y + row * 0.70;
	L.h = row * 0.22;
	L.g0 = G_COLL;
	L.g1 = G_N;
	L.q = CQ;
	timeline_bin(tl, s, 1u << TL_LANE_COLL | 1u << TL_LANE_P2P, a->x0, a->x1, nbins, bin);
	draw_lane(sv, &L, bin, nbins);
}

char *plot_gantt_svg(const struct result *r)
{
	const struct plan *pl = &r->plan;
	const struct timeline *tl = r->timeline;
	int p = tl ? timeline_stages(tl) : 0, v = pl->parallel.interleave > 1 ? pl->parallel.interleave : 1;
	/* time from 0 to the end rounded up to a tick (about 8 over the span) */
	double x0 = 0, x1 = fmax(tl ? timeline_end_s(tl) : 0, r->iteration_s), tk[SVG_MAX_TICKS], st;
	if (!(x1 > 0))
		x1 = 1;
	svg_nice_ticks(0, x1, GANTT_TICKS, tk, SVG_MAX_TICKS, &st);
	x1 = ceil(x1 / st - 1e-9) * st;
	/* rows of 26 to 60 px, filling the legend's height when they can */
	double legend_h = (G_N + 1 + 2 * (v > 1)) * 18.0 + 60;
	double area = fmin(900, fmax(p * 26.0, fmin(p * 60.0, legend_h)));
	double h = MT + MB + fmax(area, legend_h);
	struct svg_axes a = { x0, x1, 0, p > 0 ? p : 1, ML, MT, W - ML - MR, area, false, false };
	char title[256];
	snprintf(title, sizeof(title), "Pipeline schedule of one iteration, as simulated (%s, %d stages, "
		 "%ld micro-batches, %d chunks per stage)", schedule_registry[pl->parallel.schedule].name,
		 pl->parallel.pp, plan_microbatches(pl), v);
	struct svg *sv = svg_create(W, h, title);
	svg_text(sv, W / 2, 22, "middle", 14, 0, "%s", title);
	time_axis(sv, &a);
	/* a column per pixel, wider past 4 stages: at most GANTT_COLUMNS
	 * columns in all (the file's size) */
	int nbins = (int)fmin(a.pw, fmax(50, GANTT_COLUMNS / fmax(p, 1)));
	struct timeline_bin *bin = xcalloc((size_t)nbins, sizeof(*bin));
	double row = p > 0 ? a.ph / p : a.ph;
	for (int s = 0; s < p; s++) {
		if (p <= 40 || s % ((p + 39) / 40) == 0)
			svg_text(sv, a.px - 6, a.py + row * s + row * 0.37 + 4, "end", 11, 0, "%d", s);
		draw_stage(sv, &a, tl, s, a.py + row * s, row, bin, nbins);
	}
	if (!tl)
		svg_text(sv, a.px + a.pw / 2, a.py + a.ph / 2, "middle", 12, 0, "no timeline was recorded");
	free(bin);
	double xi = svg_ax_x(&a, r->iteration_s);
	svg_line(sv, xi, a.py, xi, a.py + a.ph, "#333333", 1, true);
	svg_text(sv, xi - 2, a.py - 4, "end", 10, 0, "simulated iteration %.4g s", r->iteration_s);
	legend(sv, v, W - MR + 16, MT);
	return svg_finish(sv, NULL);
}
