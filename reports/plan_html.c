/* plan_html: the decision page of `ddlsim plan` (see plan_html.h).
 *
 * Written section by section into a memory stream: the goal, the verdict
 * per GPU type, the time-cost chart, the top plans, the provenance. The
 * conclusions are sim/study.h's (the front, the fewest GPUs per type) and
 * sim/band.h's (each plan's error band, the safe count), the same the
 * terminal tables print; this file only words them. Every text from the
 * goal or the command line is escaped (svg_escape). */
#include "plan_html.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "band.h"
#include "human.h"
#include "plot.h"
#include "report-private.h"
#include "study.h"
#include "svg.h"
#include "xalloc.h"

/* What the page derives once from the plans. */
struct page {
	const struct plan_html *in;
	const struct goal *g;
	struct study_point *pts;    /* per plan (sim/study.h) */
	bool *front;                /* per plan: on the time-cost Pareto front */
	struct band_pick *band;     /* per plan that simulated */
};

static void esc(FILE *f, const char *s)
{
	svg_escape(f, s);  /* the one escaper for markup */
}

/* x in human units (util/human.h) into one of eight rotating buffers. */
static const char *hn(double x)
{
	static char buf[8][32];
	static int k;
	k = (k + 1) % 8;
	return human_number(x, buf[k], sizeof(buf[k]));
}

/* x in the unit of like (human_scaled) into one of four rotating buffers. */
static const char *hs(double x, double like)
{
	static char buf[4][32];
	static int k;
	k = (k + 1) % 4;
	return human_scaled(x, like, buf[k], sizeof(buf[k]));
}

/* lo .. hi in one unit (human_range) into one of four rotating buffers. */
static const char *hr(double lo, double hi, const char *pre, const char *unit)
{
	static char buf[4][96];
	static int k;
	k = (k + 1) % 4;
	return human_range(lo, hi, pre, unit, buf[k], sizeof(buf[k]));
}

static const char css_more[] =
	".verdict{border:1px solid #ddd;border-radius:6px;padding:.2em .9em .6em;margin:.8em 0;background:#fafafa}"
	".verdict h3{margin:.4em 0 .2em}.verdict .v{font-size:1.15em;margin:.2em 0 .4em}"
	".verdict.met{border-left:6px solid #070}.verdict.unmet{border-left:6px solid #b00}"
	".verdict.met .v{color:#070}.verdict.unmet .v{color:#b00}"
	".safe{font-weight:700;font-size:1.2em}tr.rec{background:#fff6d5 !important}"
	"#plans table{font-size:.8em}#plans td.n,#plans td.g{white-space:nowrap}#plans td.lay{min-width:14em}"
	"#plans .d{color:#666;font-size:.85em}";

/* Plan i's band factors on a time: real = predicted x lo .. hi (report_band's clamp). */
static double band_lo(const struct page *pg, int i)
{
	return fmax(1 + pg->band[i].lo, 0.01);
}

static double band_hi(const struct page *pg, int i)
{
	return 1 + pg->band[i].hi;
}

static int per_node(const struct page *pg, int i)
{
	const struct plan_html_plan *pp = &pg->in->plans[i];
	return pp->plan->nodes > 0 ? (int)(pp->gpus / pp->plan->nodes) : 1;
}

static const char *option_name(const struct page *pg, int i)
{
	return pg->g->clusters[pg->in->plans[i].option].name;
}

/* The parallel degrees of pl into buf (n bytes): "dp 64 × tp 8 × pp 4". */
static char *degrees(const struct plan *pl, char *buf, size_t n)
{
	const struct plan_parallel *x = &pl->parallel;
	int k = snprintf(buf, n, "dp %d × tp %d × pp %d", x->dp, x->tp, x->pp);
	if (x->cp > 1 && k >= 0 && k < (int)n)
		k += snprintf(buf + k, n - (size_t)k, " × cp %d", x->cp);
	if (x->ep > 1 && k >= 0 && k < (int)n)
		snprintf(buf + k, n - (size_t)k, " (ep %d inside dp)", x->ep);
	return buf;
}

/* The rest of pl's layout into buf (n bytes): the interleaved pipeline,
 * ZeRO, recompute, sequence parallelism, the batch. */
static char *details(const struct plan *pl, char *buf, size_t n)
{
	const struct plan_parallel *x = &pl->parallel;
	char v[48] = "";
	if (x->schedule == SCHED_INTERLEAVED)
		snprintf(v, sizeof(v), "%d virtual stages a GPU, ", x->interleave);
	snprintf(buf, n, "%sZeRO %d, recompute %s%s; micro-batch %ld, global batch %ld", v, (int)x->zero,
		 recompute_name(x->recompute), x->sp ? ", sequence parallel" : "", pl->training.micro_batch,
		 pl->training.global_batch);
	return buf;
}

/* The whole layout of pl in words into buf (n bytes). */
static char *layout(const struct plan *pl, char *buf, size_t n)
{
	char a[120], b[160];
	snprintf(buf, n, "%s; %s", degrees(pl, a, sizeof(a)), details(pl, b, sizeof(b)));
	return buf;
}

/* ---- the goal ---------------------------------------------------------- */

static void options_table(FILE *f, const struct goal *g)
{
	fputs("<table id=\"options\"><tr><th>cluster option</th><th>GPU</th><th>topology</th>"
	      "<th>node counts</th><th>price</th></tr>\n", f);
	for (int ci = 0; ci < g->nclusters; ci++) {
		const struct goal_cluster *cl = &g->clusters[ci];
		const struct topology *t = inputs_topology(cl->in);
		fputs("<tr><td>", f);
		esc(f, cl->name);
		fputs("</td><td>", f);
		esc(f, t->gpu.name);
		fputs("</td><td>", f);
		html_escf(f, "%s (%d GPUs a node)", cl->topology, t->gpus_per_node);
		fputs("</td><td>", f);
		if (cl->auto_nodes)
			fputs("auto: ", f);
		for (int k = 0; k < cl->nnodes && k < 12; k++)
			fprintf(f, "%s%ld", k ? ", " : "", cl->nodes[k]);
		if (cl->nnodes > 12)
			fprintf(f, " and %d more", cl->nnodes - 12);
		fputs("</td><td>", f);
		if (cl->econ.usd_per_gpu_hour > 0)
			html_escf(f, "$%s per GPU-hour", hn(cl->econ.usd_per_gpu_hour));
		else if (cl->econ.capex_per_node_usd > 0)
			html_escf(f, "bought: $%s a node over %s years", hn(cl->econ.capex_per_node_usd),
			     hn(cl->econ.depreciation_years));
		else
			fputs("the scenario's", f);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

static void goal_section(FILE *f, const struct page *pg)
{
	const struct goal *g = pg->g;
	const struct model *m = g->nclusters ? inputs_model(g->clusters[0].in) : NULL;
	fputs("<section id=\"goal\"><h2>The goal</h2><table>\n", f);
	html_row(f, "goal file", "%s", pg->in->goal_file);
	html_row(f, "model", "%s (%s)", m ? m->name : "", g->model);
	html_row(f, "tokens to train", "%s tokens%s", hn(g->train_tokens),
	    g->tokens_key && !strcmp(g->tokens_key, "/dataset_tokens") ? " (epochs × dataset_tokens)" : "");
	html_row(f, "sequence length", "%ld tokens", g->seq);
	if (g->deadline_s > 0)
		html_row(f, "deadline", "%s days, failures and checkpoints included", hn(g->deadline_s / 86400));
	else
		html_row(f, "deadline", "none");
	if (g->budget_usd > 0)
		html_row(f, "budget", "$%s", hn(g->budget_usd));
	else
		html_row(f, "budget", "none");
	html_row(f, "global batch", "%s", hr(g->gb_min_tokens, g->gb_max_tokens, "", " tokens"));
	html_row(f, "precision", "%s", dtype_name(g->precision));
	fputs("</table>\n", f);
	options_table(f, g);
	fputs("</section>\n", f);
}

/* ---- the verdict ------------------------------------------------------- */

/* Whether plan i misses the deadline / the budget (a plan that fits). */
static bool late(const struct page *pg, int i)
{
	return pg->g->deadline_s > 0 && pg->pts[i].wall_s > pg->g->deadline_s;
}

static bool over_budget(const struct page *pg, int i)
{
	return pg->g->budget_usd > 0 && pg->pts[i].cost_usd > pg->g->budget_usd;
}

/* What stops the plans of GPU type gpu on fewer than below GPUs from
 * meeting the goal, in words into buf (n bytes): how many are late (the
 * fastest), over budget (the cheapest), do not fit in GPU memory, failed.
 * Returns whether there was any such plan. */
static bool limits(const struct page *pg, const char *gpu, long below, char *buf, size_t n)
{
	int nlate = 0, nover = 0, noom = 0, nfail = 0, fast = -1, cheap = -1, k = 0;
	for (int i = 0; i < pg->in->nplans; i++) {
		const struct study_point *p = &pg->pts[i];
		if (strcmp(p->gpu, gpu) || p->gpus >= below)
			continue;
		if (!p->ok) {
			nfail++;
		} else if (p->oom) {
			noom++;
		} else {
			if (late(pg, i)) {
				nlate++;
				if (fast < 0 || p->wall_s < pg->pts[fast].wall_s)
					fast = i;
			}
			if (over_budget(pg, i)) {
				nover++;
				if (cheap < 0 || p->cost_usd < pg->pts[cheap].cost_usd)
					cheap = i;
			}
		}
	}
	buf[0] = 0;
	if (fast >= 0)
		k += snprintf(buf + k, n - (size_t)k, "%d miss the %s-day deadline (the fastest: %s days on %ld GPUs)",
			      nlate, hn(pg->g->deadline_s / 86400), hn(pg->pts[fast].wall_s / 86400), pg->pts[fast].gpus);
	if (cheap >= 0 && k < (int)n)
		k += snprintf(buf + k, n - (size_t)k, "%s%d are over the $%s budget (the cheapest: $%s on %ld GPUs)",
			      k ? "; " : "", nover, hn(pg->g->budget_usd), hn(pg->pts[cheap].cost_usd),
			      pg->pts[cheap].gpus);
	if (noom && k < (int)n)
		k += snprintf(buf + k, n - (size_t)k, "%s%d do not fit in GPU memory", k ? "; " : "", noom);
	if (nfail && k < (int)n)
		k += snprintf(buf + k, n - (size_t)k, "%s%d failed to simulate", k ? "; " : "", nfail);
	if (!k)
		snprintf(buf, n, "no plan on fewer GPUs was simulated (the goal's node counts)");
	return k > 0;
}

/* The verdict of a GPU type whose fewest GPUs meeting the goal is plan i. */
static void verdict_met(FILE *f, const struct page *pg, int t, int i)
{
	const struct plan_html_plan *pp = &pg->in->plans[i];
	const struct assessment *a = pp->a;
	double lo = band_lo(pg, i), hi = band_hi(pg, i), days = a->gp.wall_s / 86400;
	int pn = per_node(pg, i);
	long safe = band_safe_gpus(&pg->band[i], pp->gpus, pn);
	char lay[320], bt[600], lim[700];
	fprintf(f, "<div class=\"verdict met\" id=\"verdict-%d\"><h3>", t);
	esc(f, pg->pts[i].gpu);
	fprintf(f, "</h3>\n<p class=\"v\">Meets the goal. Safe count: <span class=\"safe\" id=\"safe-%d\">%ld GPUs"
		"</span> (%ld nodes of %d)</p>\n<table>\n", t, safe, safe / pn, pn);
	html_row(f, "the plan simulated", "%ld GPUs on %s, rank %ld: %s", pp->gpus, option_name(pg, i), pp->rank,
	    layout(pp->plan, lay, sizeof(lay)));
	html_row(f, "days to train", "%s days (%.0f %% band: %s)", hn(days), 100 * BAND_LEVEL,
	    hr(days * lo, days * hi, "", " days"));
	html_row(f, "cost", "$%s (%.0f %% band: %s); $%s per million tokens",
	    hs(a->econ.cost_usd, a->econ.cost_usd * hi), 100 * BAND_LEVEL,
	    hr(a->econ.cost_usd * lo, a->econ.cost_usd * hi, "$", ""), hn(a->econ.usd_per_Mtoken));
	html_row(f, "energy", "%s MWh (%.0f %% band: %s)", hs(a->econ.energy_MWh, a->econ.energy_MWh * hi),
	    100 * BAND_LEVEL, hr(a->econ.energy_MWh * lo, a->econ.energy_MWh * hi, "", " MWh"));
	html_row(f, "error band", "%s", band_text(&pg->band[i], bt, sizeof(bt)));
	html_row(f, "safe count", "at the band's slow edge (%+.1f %% of time) the plan takes %s days%s; %ld GPUs "
	    "(%ld more, whole nodes) meet its %s days, throughput scaling with the GPUs", 100 * pg->band[i].hi,
	    hn(days * hi), pg->g->deadline_s > 0 && days * hi * 86400 > pg->g->deadline_s ? ", past the deadline" : "",
	    safe, safe - pp->gpus, hn(days));
	bool below = limits(pg, pg->pts[i].gpu, pp->gpus, lim, sizeof(lim));
	html_row(f, "what limits it", "%s%s", below ? "on fewer GPUs of this type, " : "", lim);
	fputs("</table></div>\n", f);
}

/* The verdict of a GPU type none of whose plans meets the goal. */
static void verdict_unmet(FILE *f, const struct page *pg, int t, const char *gpu)
{
	int n = 0, fast = -1;
	for (int i = 0; i < pg->in->nplans; i++)
		if (!strcmp(pg->pts[i].gpu, gpu)) {
			n++;
			if (study_usable(&pg->pts[i]) && (fast < 0 || pg->pts[i].wall_s < pg->pts[fast].wall_s))
				fast = i;
		}
	char lim[700], lay[320];
	fprintf(f, "<div class=\"verdict unmet\" id=\"verdict-%d\"><h3>", t);
	esc(f, gpu);
	fprintf(f, "</h3>\n<p class=\"v\">Does not meet the goal: none of its %d simulated plans does.</p>\n"
		"<table>\n", n);
	limits(pg, gpu, LONG_MAX, lim, sizeof(lim));
	html_row(f, "what limits it", "%s", lim);
	if (fast >= 0)
		html_row(f, "the fastest that fits", "%ld GPUs on %s: %s days, $%s; %s", pg->pts[fast].gpus,
		    option_name(pg, fast), hn(pg->pts[fast].wall_s / 86400), hn(pg->pts[fast].cost_usd),
		    layout(pg->in->plans[fast].plan, lay, sizeof(lay)));
	fputs("</table></div>\n", f);
}

static void verdict_section(FILE *f, const struct page *pg)
{
	const struct goal *g = pg->g;
	const char **option_gpu = xcalloc((size_t)g->nclusters + 1, sizeof(*option_gpu));
	struct study_fewest *few = xcalloc((size_t)g->nclusters + 1, sizeof(*few));
	for (int ci = 0; ci < g->nclusters; ci++)
		option_gpu[ci] = inputs_topology(g->clusters[ci].in)->gpu.name;
	int nt = study_fewest_gpus(pg->pts, pg->in->nplans, option_gpu, g->nclusters, g->deadline_s,
				   g->budget_usd, few);
	fputs("<section id=\"verdict\"><h2>Verdict per GPU type</h2>\n<p>For each GPU type, the fewest GPUs "
	      "whose simulated plan fits in GPU memory and meets the goal", f);
	if (g->deadline_s > 0)
		html_escf(f, " (%s days", hn(g->deadline_s / 86400));
	if (g->budget_usd > 0)
		html_escf(f, "%s$%s", g->deadline_s > 0 ? ", " : " (", hn(g->budget_usd));
	fputs(g->deadline_s > 0 || g->budget_usd > 0 ? ")" : "", f);
	fputs(", and the <b>safe count</b>: the GPUs that meet the same time when the run is as slow as "
	      "the edge of the error band (ddlsim's prediction against published runs, cross-validated), "
	      "rounded up to whole nodes.</p>\n", f);
	for (int t = 0; t < nt; t++) {
		if (few[t].point >= 0)
			verdict_met(f, pg, t, few[t].point);
		else
			verdict_unmet(f, pg, t, few[t].gpu);
	}
	fputs("</section>\n", f);
	free(few);
	free(option_gpu);
}

/* ---- the chart --------------------------------------------------------- */

/* The time-cost chart with the recommended plan ringed, and the
 * recommendation in words. Returns 0, -1 when the chart failed. */
static int pareto_section(FILE *f, const struct page *pg)
{
	const struct plan_html *in = pg->in;
	json_t *recs = json_array();
	for (int i = 0; i < (int)json_array_size(in->records); i++) {
		json_t *rec = json_array_get(in->records, (size_t)i);
		if (i == in->recommended) {
			rec = json_copy(rec);
			json_object_set_new(rec, "recommended", json_true());
			json_array_append_new(recs, rec);
		} else
			json_array_append(recs, rec);
	}
	struct plot_goal goal = { pg->g->deadline_s / 86400, pg->g->budget_usd };
	char *svg = plot_pareto_svg(recs, pg->g->name, &goal);
	json_decref(recs);
	fputs("<section id=\"pareto\"><h2>Time to train vs cost</h2>\n", f);
	if (svg)
		fputs(svg, f);
	free(svg);
	fputs("<p id=\"recommended\">", f);
	int r = in->recommended;
	if (r >= 0) {
		const struct plan_html_plan *pp = &in->plans[r];
		char lay[320];
		html_escf(f, "Recommended: rank %ld, %ld %s GPUs on %s, %s days, $%s (%s), %s MWh; %s. The planner's best "
		     "plan that fits: the fastest to train%s.", pp->rank, pp->gpus, pg->pts[r].gpu, option_name(pg, r),
		     hn(pp->a->gp.wall_s / 86400), hs(pp->a->econ.cost_usd, pp->a->econ.cost_usd * band_hi(pg, r)),
		     hr(pp->a->econ.cost_usd * band_lo(pg, r), pp->a->econ.cost_usd * band_hi(pg, r), "$", ""),
		     hn(pp->a->econ.energy_MWh), layout(pp->plan, lay, sizeof(lay)),
		     pg->g->budget_usd > 0 ? " within the budget (of all, when none is)" : "");
	} else
		fputs("No simulated plan fits in GPU memory: nothing to recommend. Try more nodes, a smaller "
		      "micro-batch or recompute.", f);
	fputs("</p>\n<p class=\"note\">Each point a simulated plan that fits in GPU memory, coloured by GPU "
	      "type; the Pareto front (no other plan both faster and cheaper) joined and ringed; the "
	      "deadline and budget dashed. Wall time includes failures and checkpoints.</p></section>\n", f);
	return svg ? 0 : -1;
}

/* ---- the plans --------------------------------------------------------- */

/* The largest cost and energy of the rows shown: each column in one unit. */
struct columns {
	double cost_usd, energy_MWh;
};

static void plan_row(FILE *f, const struct page *pg, int i, const struct columns *col)
{
	const struct plan_html_plan *pp = &pg->in->plans[i];
	const struct assessment *a = pp->a;
	char lay[320];
	bool rec = i == pg->in->recommended, l = late(pg, i), o = over_budget(pg, i);
	fprintf(f, "<tr%s><td class=\"n\">%ld%s</td><td>", rec ? " class=\"rec\"" : "", pp->rank,
		rec ? " ★" : "");
	esc(f, option_name(pg, i));
	fprintf(f, "</td><td class=\"n\">%ld</td><td class=\"lay\">", pp->gpus);
	esc(f, degrees(pp->plan, lay, sizeof(lay)));
	fputs("<br><span class=\"d\">", f);
	esc(f, details(pp->plan, lay, sizeof(lay)));
	fprintf(f, "</span></td><td class=\"n\">%.1f %%</td><td class=\"n\">%s days</td><td class=\"n\">$%s</td>"
		"<td class=\"n\">$%s</td><td class=\"n\">%s MWh</td><td class=\"g %s\">%s%s%s</td><td>%s</td><td>",
		100 * pp->row->mfu, hn(a->gp.wall_s / 86400), hs(a->econ.cost_usd, col->cost_usd),
		hn(a->econ.usd_per_Mtoken), hs(a->econ.energy_MWh, col->energy_MWh), l || o ? "bad" : "good", l ? "late" : "", l && o ? ", " : "",
		o ? "over budget" : l ? "" : "meets it", pg->front[i] ? "yes" : "");
	if (pp->exported)
		fprintf(f, "<a href=\"plan-%ld.json\">plan-%ld.json</a>", pp->rank, pp->rank);
	fputs("</td></tr>\n", f);
}

static void plans_section(FILE *f, const struct page *pg)
{
	const struct plan_html *in = pg->in;
	int ranked = 0, oom = 0, failed = 0, exported = 0;
	for (int i = 0; i < in->nplans; i++) {
		ranked += in->plans[i].rank > 0;
		oom += pg->pts[i].ok && pg->pts[i].oom;
		failed += !pg->pts[i].ok;
		exported += in->plans[i].exported;
	}
	fprintf(f, "<section id=\"plans\"><h2>Top plans</h2>\n<p class=\"note\">The best %d ranked plans of "
		"each cluster option, by wall time to train, and the recommended plan (★); plans.csv holds all %d simulated (%d ranked, %d "
		"that do not fit in GPU memory, %d failed), under the same ranks. ", PLAN_HTML_PER_OPTION,
		in->nplans, ranked, oom, failed);
	if (exported)
		fputs("A scenario link opens the plan as exported by <code>--export</code> (run it with "
		      "<code>ddlsim run</code>).</p>\n", f);
	else
		fputs("<code>ddlsim plan GOAL --export N</code> writes rank N as a scenario for "
		      "<code>ddlsim run</code>.</p>\n", f);
	fputs("<table><tr><th class=\"n\">rank</th><th>cluster option</th><th class=\"n\">GPUs</th>"
	      "<th>parallel layout</th><th class=\"n\">MFU</th><th class=\"n\">wall time</th>"
	      "<th class=\"n\">cost</th><th class=\"n\">per M tokens</th><th class=\"n\">energy</th>"
	      "<th>goal</th><th>front</th><th>scenario</th></tr>\n", f);
	struct columns col = { 0 };
	for (int pass = 0; pass < 2; pass++)
		for (int ci = 0; ci < pg->g->nclusters; ci++)
			for (int i = 0, shown = 0; i < in->nplans; i++) {
				/* the best of the option, and the recommended plan always */
				if (in->plans[i].option != ci || in->plans[i].rank <= 0 ||
				    (shown >= PLAN_HTML_PER_OPTION && i != in->recommended))
					continue;
				const struct assessment *a = in->plans[i].a;
				if (pass == 1)
					plan_row(f, pg, i, &col);
				col.cost_usd = fmax(col.cost_usd, a->econ.cost_usd);
				col.energy_MWh = fmax(col.energy_MWh, a->econ.energy_MWh);
				shown++;
			}
	fputs("</table></section>\n", f);
}

/* ---- provenance -------------------------------------------------------- */

static void provenance(FILE *f, const struct page *pg)
{
	const struct plan_html *in = pg->in;
	char date[32] = "-";
	time_t t = (time_t)in->date_s;
	struct tm tm;
	if (gmtime_r(&t, &tm))
		strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	fputs("<section id=\"provenance\"><h2>Provenance</h2><table>\n", f);
	html_row(f, "command", "%s", in->command);
	html_row(f, "producer", "ddlsim %s", in->version);
	html_row(f, "date (UTC)", "%s", date);
	html_row(f, "goal file", "%s", in->goal_file);
	html_row(f, "beside this page", "plans.csv and plans.jsonl (every simulated plan), pareto.svg, mfu-gpus.svg");
	fputs("</table><p class=\"note\">Days, cost and energy are predictions of ddlsim's simulator; the error "
	      "band is the interval around the matched validation family's bias inside which 80 % of the "
	      "published runs fell when each was banded with its own family left out (sim/band.h). Cost "
	      "and energy scale with the time.</p></section>\n", f);
}

/* ---- the page ---------------------------------------------------------- */

char *plan_html_render(const struct plan_html *in)
{
	const struct goal *g = in->goal;
	struct page pg = { .in = in, .g = g };
	int n = in->nplans;
	pg.pts = xcalloc((size_t)n + 1, sizeof(*pg.pts));
	pg.front = xcalloc((size_t)n + 1, sizeof(*pg.front));
	pg.band = xcalloc((size_t)n + 1, sizeof(*pg.band));
	for (int i = 0; i < n; i++) {
		const struct plan_html_plan *pp = &in->plans[i];
		const struct inputs *inp = g->clusters[pp->option].in;
		bool ok = pp->a && pp->row->status == RESULT_OK;
		pg.pts[i] = (struct study_point){ .option = pp->option, .gpu = inputs_topology(inp)->gpu.name,
						  .gpus = pp->gpus, .ok = ok, .oom = ok && !pp->row->fits,
						  .wall_s = ok ? pp->a->gp.wall_s : 0, .cost_usd = ok ? pp->a->econ.cost_usd : 0,
						  .extra = pp->extra };
		band_choose(inp, pp->plan, &pg.band[i]);
	}
	study_pareto(pg.pts, n, pg.front);

	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int bad = !f;
	if (f) {
		fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>ddlsim plan: ", f);
		esc(f, g->name);
		fprintf(f, "</title>\n<style>%s%s</style>\n<script>window.onerror=function(){document."
			"documentElement.setAttribute('data-errors','1')};</script>\n</head><body>\n<h1>ddlsim plan: ",
			report_html_css, css_more);
		esc(f, g->name);
		fputs("</h1>\n<p>", f);
		esc(f, g->description);
		fputs("</p>\n", f);
		goal_section(f, &pg);
		verdict_section(f, &pg);
		bad |= pareto_section(f, &pg);
		plans_section(f, &pg);
		provenance(f, &pg);
		fputs("<script>document.body.setAttribute('data-rendered','ok');</script>\n</body></html>\n", f);
		bad |= ferror(f) != 0;
		fclose(f);
	}
	free(pg.band);
	free(pg.front);
	free(pg.pts);
	if (bad) {
		free(buf);
		return NULL;
	}
	return buf;
}
