/* plot: the report's pictures (see plot.h).
 *
 * Layout: every chart is W x H px with the plot area inset by fixed
 * margins and the legend in a column at the right, so the HTML report can
 * stack them at one width. The schedule chart is gantt.c. */
#include "plot.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "human.h"
#include "infile.h"
#include "inputs.h"
#include "bug.h"
#include "result.h"
#include "schedule.h"
#include "study.h"
#include "svg.h"
#include "xalloc.h"

#define GB 1e9
#define W 820.0
#define H 420.0
#define ML 70.0                 /* margins: left, right (legend), top, bottom */
#define MR 190.0
#define MT 40.0
#define MB 60.0

static struct svg_axes frame(double x0, double x1, double y0, double y1)
{
	struct svg_axes a = { x0, x1, y0, y1, ML, MT, W - ML - MR, H - MT - MB, false, false };
	return a;
}

/* ---- breakdown ------------------------------------------------------- */

enum { BK_COMPUTE, BK_TP, BK_CP, BK_DP, BK_PARAM, BK_PP, BK_BUBBLE, BK_IDLE, BK_N };
static const char *const bk_names[BK_N] = {
	"compute", "exposed TP comm", "exposed CP comm", "exposed DP comm",
	"exposed param comm", "exposed PP comm", "pipeline bubble", "idle"
};
static const char *const bk_colors[BK_N] = {
	"#4e79a7", "#f28e2b", "#b07aa1", "#e15759", "#ff9da7", "#76b7b2", "#edc948", "#bab0ac"
};

char *plot_breakdown_svg(const struct result *r)
{
	int ns = r->nstages > 0 ? r->nstages : 1;
	double *v = xcalloc((size_t)ns * BK_N, sizeof(double));
	int *cnt = xcalloc((size_t)ns, sizeof(int));
	static const int cat[BK_N] = { -1, CAT_TP_COMM, CAT_CP_COMM, CAT_DP_COMM, CAT_PARAM_COMM,
				       CAT_PP_COMM, -1, -1 };
	for (int i = 0; i < result_nranks(r); i++) {
		const struct result_rank rk = result_rank(r, i), *st = &rk;
		int s = st->stage < ns ? st->stage : 0;
		struct result_split x = result_rank_split(r, i);
		double *row = v + (size_t)s * BK_N;
		row[BK_COMPUTE] += x.compute_s;
		for (int k = BK_TP; k <= BK_PP; k++)
			row[k] += st->exposed_s[cat[k]];
		row[BK_BUBBLE] += x.bubble_s;
		row[BK_IDLE] += x.idle_s;
		cnt[s]++;
	}
	double ymax = r->iteration_s;
	for (int s = 0; s < ns; s++) {
		double tot = 0;
		for (int k = 0; k < BK_N; k++)
			tot += (v[(size_t)s * BK_N + k] /= (cnt[s] ? cnt[s] : 1));
		if (tot > ymax)
			ymax = tot;
	}
	double y0 = 0;
	svg_axes_nice(&y0, &ymax, false);
	struct svg_axes a = frame(0, ns, 0, ymax);
	a.xcat = true;
	char title[256];
	snprintf(title, sizeof(title), "Iteration breakdown per pipeline stage%s%s",
		 r->meta.name ? ": " : "", r->meta.name ? r->meta.name : "");
	struct svg *g = svg_create(W, H, title);
	svg_text(g, W / 2, 22, "middle", 14, 0, "%s", title);
	svg_axes_draw(g, &a, "pipeline stage (mean over the stage's ranks)", "time per iteration (s)");
	double slot = a.pw / ns, bw = slot * 0.7 > 60 ? 60 : slot * 0.7;
	for (int s = 0; s < ns; s++) {
		double x = a.px + slot * (s + 0.5) - bw / 2, acc = 0;
		for (int k = 0; k < BK_N; k++) {
			double t = v[(size_t)s * BK_N + k];
			if (t <= 0)
				continue;
			char tip[160];
			snprintf(tip, sizeof(tip), "stage %d: %s %.6f s (%.1f%% of the iteration)", s,
				 bk_names[k], t, r->iteration_s > 0 ? 100 * t / r->iteration_s : 0);
			svg_rect(g, x, svg_ax_y(&a, acc + t), bw, svg_ax_y(&a, acc) - svg_ax_y(&a, acc + t),
				 bk_colors[k], tip);
			acc += t;
		}
		if (ns <= 32 || s % ((ns + 31) / 32) == 0)
			svg_text(g, a.px + slot * (s + 0.5), a.py + a.ph + 16, "middle", 11, 0, "%d", s);
	}
	double yi = svg_ax_y(&a, r->iteration_s);
	svg_line(g, a.px, yi, a.px + a.pw, yi, "#333333", 1, true);
	svg_text(g, a.px + a.pw, yi - 4, "end", 10, 0, "iteration %.4f s", r->iteration_s);
	svg_legend(g, W - MR + 16, MT, bk_names, bk_colors, BK_N);
	free(v);
	free(cnt);
	return svg_finish(g, NULL);
}

/* ---- memory ----------------------------------------------------------- */

enum { MEM_W, MEM_G, MEM_O, MEM_FP8, MEM_ACT, MEM_LOGITS, MEM_COMM, MEM_CTX, MEM_NCCL, MEM_FRAG, MEM_N };
static const char *const mem_names[MEM_N] = {
	"weights", "gradients", "optimizer state", "fp8 weight copies", "activations", "logits",
	"comm buffers", "CUDA context", "NCCL buffers", "allocator reserve"
};

static double mem_term(const struct mem_anatomy *m, int k)
{
	switch (k) {
	case MEM_W: return m->weights_bytes;
	case MEM_G: return m->grads_bytes;
	case MEM_O: return m->optimizer_bytes;
	case MEM_FP8: return m->fp8_weight_bytes;
	case MEM_ACT: return m->activations_bytes;
	case MEM_LOGITS: return m->peak_at_loss ? m->logits_bytes : m->recompute_bytes;  /* the peak's phase */
	case MEM_COMM: return m->comm_buffer_bytes;
	case MEM_CTX: return m->context_bytes;
	case MEM_NCCL: return m->nccl_bytes;
	default: return m->fragmentation_bytes;
	}
}

char *plot_memory_svg(const struct result *r)
{
	int ns = r->nstages > 0 ? r->nstages : 1;
	double cap = inputs_topology(r->in)->gpu.hbm_bytes / GB, ymax = cap;
	for (int s = 0; s < r->nstages; s++)
		if (r->stage[s].mem.total_bytes / GB > ymax)
			ymax = r->stage[s].mem.total_bytes / GB;
	double y0 = 0;
	svg_axes_nice(&y0, &ymax, false);
	struct svg_axes a = frame(0, ns, 0, ymax);
	a.xcat = true;
	char title[256];
	snprintf(title, sizeof(title), "Memory per GPU by pipeline stage (%s)",
		 r->fits ? "fits" : "does not fit");
	struct svg *g = svg_create(W, H, title);
	svg_text(g, W / 2, 22, "middle", 14, 0, "%s", title);
	svg_axes_draw(g, &a, "pipeline stage", "memory per GPU (GB, 1e9 bytes)");
	double slot = a.pw / ns, bw = slot * 0.7 > 60 ? 60 : slot * 0.7;
	for (int s = 0; s < r->nstages; s++) {
		const struct mem_anatomy *m = &r->stage[s].mem;
		double x = a.px + slot * (s + 0.5) - bw / 2, acc = 0;
		for (int k = 0; k < MEM_N; k++) {
			double t = mem_term(m, k) / GB;
			if (t <= 0)
				continue;
			char tip[160];
			snprintf(tip, sizeof(tip), "stage %d: %s %.3f GB (%.3f GiB)", s, mem_names[k], t,
				 t * GB / 1073741824.0);
			svg_rect(g, x, svg_ax_y(&a, acc + t), bw, svg_ax_y(&a, acc) - svg_ax_y(&a, acc + t),
				 svg_palette[k], tip);
			acc += t;
		}
		if (ns <= 32 || s % ((ns + 31) / 32) == 0)
			svg_text(g, a.px + slot * (s + 0.5), a.py + a.ph + 16, "middle", 11, 0, "%d", s);
	}
	double yc = svg_ax_y(&a, cap);
	svg_line(g, a.px, yc, a.px + a.pw, yc, "#d62728", 1.5, true);
	svg_text(g, a.px + a.pw, yc - 4, "end", 10, 0, "capacity %.1f GB (%.1f GiB)", cap,
		 cap * GB / 1073741824.0);
	svg_legend(g, W - MR + 16, MT, mem_names, svg_palette, MEM_N);
	return svg_finish(g, NULL);
}

/* ---- sweep and plan points ------------------------------------------- */

struct pt {
	double gpus, mfu, days, cost;
	char label[96];
	bool front, recommended;
	int type;               /* index of its GPU type in struct types */
};

/* The GPU types of the points, in order of first appearance: each its own
 * colour; a ninth and later share the last. */
#define MAX_TYPES 8
struct types {
	const char *name[MAX_TYPES + 4];   /* and the legend's extra entries (at most 4) */
	const char *col[MAX_TYPES + 4];
	int n;
};

static const char *const type_colors[MAX_TYPES] = {
	"#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#9c755f", "#bab0ac",
};

static int type_of(struct types *ty, const json_t *rec)
{
	const json_t *v = json_object_get(rec, "gpu");
	const char *name = json_is_string(v) ? json_string_value(v) : "GPU";
	for (int i = 0; i < ty->n; i++)
		if (!strcmp(ty->name[i], name))
			return i;
	if (ty->n == MAX_TYPES)
		return MAX_TYPES - 1;
	ty->name[ty->n] = name;
	ty->col[ty->n] = type_colors[ty->n];
	return ty->n++;
}

static double getnum(const json_t *o, const char *k, bool *ok)
{
	const json_t *v = json_object_get(o, k);
	if (!json_is_number(v)) {
		*ok = false;
		return 0;
	}
	return json_number_value(v);
}

/* The usable points of records: simulated ("ok"), so fitting in memory;
 * *oom counts those that do not fit ("oom"), *left_out the others. */
static struct pt *points(const json_t *records, int *n, int *oom, int *left_out, struct types *ty)
{
	ty->n = 0;
	size_t cap = json_array_size(records);
	struct pt *p = xcalloc(cap ? cap : 1, sizeof(*p));
	*n = *oom = *left_out = 0;
	size_t i;
	const json_t *rec;
	json_array_foreach(records, i, rec) {
		bool ok = json_is_object(rec);
		const json_t *st = json_object_get(rec, "status");
		if (!json_is_string(st) || strcmp(json_string_value(st), "ok"))
			ok = false;
		struct pt x = { 0 };
		x.gpus = getnum(rec, "gpus", &ok);
		x.mfu = getnum(rec, "mfu", &ok);
		x.days = getnum(rec, "wall_days", &ok);
		x.cost = getnum(rec, "cost_usd", &ok);
		if (json_is_string(st) && !strcmp(json_string_value(st), "oom")) {
			(*oom)++;
			continue;
		}
		if (!ok || !(x.gpus > 0)) {
			(*left_out)++;
			continue;
		}
		bool b = true;
		x.type = type_of(ty, rec);
		x.recommended = json_is_true(json_object_get(rec, "recommended"));
		snprintf(x.label, sizeof(x.label), "%s%s%.0f GPUs dp=%.0f tp=%.0f pp=%.0f",
			 json_is_string(json_object_get(rec, "cluster")) ? json_string_value(json_object_get(rec, "cluster")) : "",
			 json_is_string(json_object_get(rec, "cluster")) ? ": " : "", x.gpus,
			 getnum(rec, "dp", &b), getnum(rec, "tp", &b), getnum(rec, "pp", &b));
		p[(*n)++] = x;
	}
	/* the time-cost front (sim/study.h; the order of days is that of seconds) */
	struct study_point *sp = xcalloc((size_t)*n + 1, sizeof(*sp));
	bool *front = xcalloc((size_t)*n + 1, sizeof(*front));
	for (int a = 0; a < *n; a++)
		sp[a] = (struct study_point){ .ok = true, .wall_s = p[a].days, .cost_usd = p[a].cost };
	study_pareto(sp, *n, front);
	for (int a = 0; a < *n; a++)
		p[a].front = front[a];
	free(front);
	free(sp);
	return p;
}

static int cmp_days(const void *a, const void *b)
{
	const struct pt *x = a, *y = b;
	return (x->days > y->days) - (x->days < y->days);
}

static void caption(struct svg *g, double y, int n, int oom, int left_out)
{
	svg_text(g, W - MR + 16, y, "start", 10, 0, "%d plans that fit plotted", n);
	if (oom)
		svg_text(g, W - MR + 16, y += 16, "start", 10, 0, "%d that do not fit in memory left out", oom);
	if (left_out)
		svg_text(g, W - MR + 16, y += 16, "start", 10, 0, "%d failed or unpriced left out", left_out);
}

/* The legend of the point plots: each GPU type, then the extra entries
 * (front, deadline, budget); the caption below it. */
static void point_legend(struct svg *g, struct types *ty, const char *const *extra,
			 const char *const *extra_col, int nextra, int n, int oom, int out)
{
	for (int i = 0; i < nextra; i++) {
		ty->name[ty->n + i] = extra[i];
		ty->col[ty->n + i] = extra_col[i];
	}
	svg_legend(g, W - MR + 16, MT, ty->name, ty->col, ty->n + nextra);
	caption(g, MT + 16.0 * (ty->n + nextra) + 28, n, oom, out);
}

/* Where a scatter's linear axis starts, from the smallest and largest
 * value it shows (points and the goal's lines): at zero while the
 * smallest is at most half the largest (zero then costs at most half the
 * plot, and a reader sees ratios), otherwise just below the smallest (5 %
 * of the span, svg_axes_nice() rounds it down to a tick), so that plans
 * within a few percent of each other (80 to 95 days) spread over the plot
 * instead of sharing its last fifth. */
static double axis_floor(double min, double max)
{
	if (!(min > 0.5 * max))
		return 0;
	return min - 0.05 * (max - min);
}

/* The extra legend entries of a point plot, after the GPU types. */
struct extras {
	const char *name[4], *col[4];
	int n;
};

/* The time-cost plot's axes: from 0 (axis_floor) to the largest of the points,
 * the deadline dl and the budget bud (million USD), rounded to ticks. */
static struct svg_axes pareto_axes(const struct pt *p, int n, double dl, double bud)
{
	double x0 = 0, x1 = dl > 0 ? dl : 1, y0 = 0, y1 = bud > 0 ? bud : 1;
	double xmin = dl > 0 ? dl : HUGE_VAL, ymin = bud > 0 ? bud : HUGE_VAL;
	for (int i = 0; i < n; i++) {
		x1 = p[i].days > x1 ? p[i].days : x1;
		y1 = p[i].cost / 1e6 > y1 ? p[i].cost / 1e6 : y1;
		xmin = p[i].days < xmin ? p[i].days : xmin;
		ymin = p[i].cost / 1e6 < ymin ? p[i].cost / 1e6 : ymin;
	}
	if (n > 0) {
		x0 = axis_floor(xmin, x1);
		y0 = axis_floor(ymin, y1);
	}
	svg_axes_nice(&x0, &x1, false);
	svg_axes_nice(&y0, &y1, false);
	return frame(x0, x1, y0, y1);
}

/* The goal's deadline (days) and budget (million USD) as dashed lines, with their legend entries. */
static void goal_lines(struct svg *g, const struct svg_axes *a, double dl, double bud, struct extras *e)
{
	char hb[32];
	if (dl > 0) {
		double x = svg_ax_x(a, dl);
		svg_line(g, x, a->py, x, a->py + a->ph, "#d62728", 1.5, true);
		svg_text(g, x - 4, a->py + 12, "end", 10, 0, "deadline %s d", human_number(dl, hb, sizeof(hb)));
		e->name[e->n] = "deadline", e->col[e->n++] = "#d62728";
	}
	if (bud > 0) {
		double y = svg_ax_y(a, bud);
		svg_line(g, a->px, y, a->px + a->pw, y, "#7f7f7f", 1.5, true);
		svg_text(g, a->px + a->pw, y - 4, "end", 10, 0, "budget $%s M", human_number(bud, hb, sizeof(hb)));
		e->name[e->n] = "budget", e->col[e->n++] = "#7f7f7f";
	}
}

/* The points (sorted by days), the Pareto front joined and ringed, each with its tooltip. */
static void pareto_points(struct svg *g, const struct svg_axes *a, const struct pt *p, int n,
			  const struct types *ty)
{
	double *xy = xcalloc((size_t)(2 * (n ? n : 1)), sizeof(double));
	int nf = 0;
	for (int i = 0; i < n; i++)
		if (p[i].front) {
			xy[2 * nf] = svg_ax_x(a, p[i].days);
			xy[2 * nf++ + 1] = svg_ax_y(a, p[i].cost / 1e6);
		}
	if (nf > 1)
		svg_polyline(g, xy, nf, "#e15759", 1.5);
	for (int i = 0; i < n; i++) {
		char tip[200];
		snprintf(tip, sizeof(tip), "%s: %.2f days, $%.3fM, MFU %.1f%%%s", p[i].label, p[i].days,
			 p[i].cost / 1e6, 100 * p[i].mfu, p[i].front ? " (Pareto front)" : "");
		svg_circle(g, svg_ax_x(a, p[i].days), svg_ax_y(a, p[i].cost / 1e6), p[i].front ? 5 : 3.5,
			   ty->col[p[i].type], p[i].front ? "#7f0000" : NULL, tip);
	}
	free(xy);
}

/* The first recommended plan ringed in black, on top of the points so never hidden. */
static void ring_recommended(struct svg *g, const struct svg_axes *a, const struct pt *p, int n,
			     struct extras *e)
{
	for (int i = 0; i < n; i++)
		if (p[i].recommended) {
			double x = svg_ax_x(a, p[i].days), y = svg_ax_y(a, p[i].cost / 1e6);
			svg_circle(g, x, y, 10, "none", "#000", "recommended");
			svg_text(g, x + 13, y - 8, "start", 11, 0, "recommended");
			e->name[e->n] = "recommended (black ring)", e->col[e->n++] = "#000";
			return;
		}
}

char *plot_pareto_svg(const json_t *records, const char *title, const struct plot_goal *goal)
{
	int n, oom, out;
	struct types ty;
	struct pt *p = points(records, &n, &oom, &out, &ty);
	double dl = goal ? goal->deadline_days : 0, bud = goal ? goal->budget_usd / 1e6 : 0;
	struct svg_axes a = pareto_axes(p, n, dl, bud);
	char t[256];
	snprintf(t, sizeof(t), "Time to train vs cost%s%s", title ? ": " : "", title ? title : "");
	struct svg *g = svg_create(W, H, t);
	svg_text(g, W / 2, 22, "middle", 14, 0, "%s", t);
	svg_axes_draw(g, &a, "wall time to train incl. failures (days)", "cost (million USD)");
	struct extras e = { { "Pareto front (ringed)" }, { "#e15759" }, 1 };
	goal_lines(g, &a, dl, bud, &e);
	qsort(p, (size_t)n, sizeof(*p), cmp_days);
	pareto_points(g, &a, p, n, &ty);
	ring_recommended(g, &a, p, n, &e);
	point_legend(g, &ty, e.name, e.col, e.n, n, oom, out);
	free(p);
	return svg_finish(g, NULL);
}

char *plot_mfu_svg(const json_t *records, const char *title)
{
	int n, oom, out;
	struct types ty;
	struct pt *p = points(records, &n, &oom, &out, &ty);
	double x0 = 1, x1 = 10, y0 = 0, y1 = 0.1, ymin = HUGE_VAL;
	for (int i = 0; i < n; i++) {
		if (i == 0 || p[i].gpus < x0) x0 = p[i].gpus;
		if (i == 0 || p[i].gpus > x1) x1 = p[i].gpus;
		if (100 * p[i].mfu > y1) y1 = 100 * p[i].mfu;
		if (100 * p[i].mfu < ymin) ymin = 100 * p[i].mfu;
	}
	if (n > 0)
		y0 = axis_floor(ymin, y1);
	svg_axes_nice(&x0, &x1, true);
	svg_axes_nice(&y0, &y1, false);
	struct svg_axes a = frame(x0, x1, y0, y1);
	a.xlog = true;
	char t[256];
	snprintf(t, sizeof(t), "MFU vs GPU count%s%s", title ? ": " : "", title ? title : "");
	struct svg *g = svg_create(W, H, t);
	svg_text(g, W / 2, 22, "middle", 14, 0, "%s", t);
	svg_axes_draw(g, &a, "GPUs (log scale)", "model FLOPs utilisation (%)");
	for (int i = 0; i < n; i++) {
		char tip[200];
		snprintf(tip, sizeof(tip), "%s: MFU %.2f%%", p[i].label, 100 * p[i].mfu);
		svg_circle(g, svg_ax_x(&a, p[i].gpus), svg_ax_y(&a, 100 * p[i].mfu), p[i].front ? 5 : 4,
			   ty.col[p[i].type], p[i].front ? "#7f0000" : NULL, tip);
	}
	static const char *const names[] = { "on the time-cost Pareto front (ringed)" };
	static const char *const cols[] = { "#e15759" };
	point_legend(g, &ty, names, cols, 1, n, oom, out);
	free(p);
	return svg_finish(g, NULL);
}

int plot_stage_points(const json_t *records, const char *dir, const char *title,
		      const struct plot_goal *goal, struct atomic_file af[2], struct diag *d)
{
	char *svgs[2] = { plot_pareto_svg(records, title, goal), plot_mfu_svg(records, title) };
	static const char *const names[2] = { "pareto.svg", "mfu-gpus.svg" };
	int rc = 0;
	memset(af, 0, 2 * sizeof(*af));
	for (int i = 0; i < 2 && !rc; i++) {
		char *path = xasprintf("%s/%s", dir, names[i]);
		size_t n = svgs[i] ? strlen(svgs[i]) : 0;
		int e = 0;
		if (!svgs[i])
			rc = diag_err(d, path, "", "cannot render the plot");
		else if ((e = atomic_file_open(&af[i], path)) == 0 && fwrite(svgs[i], 1, n, af[i].f) != n)
			e = -(errno ? errno : EIO);
		if (!e && !rc)
			e = atomic_file_stage(&af[i]);
		if (e)
			rc = diag_err(d, path, "", "cannot write report: %s", atomic_file_strerror(-e));
		free(path);
	}
	for (int i = 0; i < 2; i++) {
		if (rc)
			atomic_file_abort(&af[i]);
		free(svgs[i]);
	}
	return rc;
}

int plot_write_points(const char *jsonl_path, const char *dir, const char *title, struct diag *d)
{
	char why[1200];
	FILE *f = infile_open(jsonl_path, why, sizeof(why));
	if (!f)
		return diag_err(d, jsonl_path, "", "cannot read the points for the plots: %s", why);
	/* a record that is not plotted (invalid, failed) counts as one shared
	 * stand-in of its status: a sweep's points stream, its invalid rows
	 * must not fill memory here either */
	json_t *recs = json_array(), *other = json_pack("{s:s}", "status", "invalid");
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	while ((len = getline(&line, &cap, f)) > 0) {
		json_t *o = infile_line_check(line, (size_t)len, why, sizeof(why)) ? NULL
			    : json_loads(line, 0, NULL);
		const char *st = json_string_value(json_object_get(o, "status"));
		if (o && st && strcmp(st, "ok") && strcmp(st, "oom")) {
			json_decref(o);
			o = json_incref(other);
		}
		if (o)
			json_array_append_new(recs, o);
	}
	json_decref(other);
	free(line);
	fclose(f);
	struct atomic_file af[2];
	int rc = plot_stage_points(recs, dir, title, NULL, af, d), e;
	if (!rc && (e = atomic_file_publish(af, 2)))
		rc = diag_err(d, dir, "", "cannot write the plots: %s", strerror(-e));
	json_decref(recs);
	return rc;
}
