/* html: the self-contained HTML report (see html.h).
 *
 * The page is written section by section into a memory stream: first the
 * decision (the headline figures with their error bands), then the
 * appendix (summary, published figures, breakdown, schedule, links,
 * memory, kernels, provenance). Every text from the scenario is escaped (esc);
 * every count, rate and amount of money goes through human_number()
 * (util/human.h): "$10.1 M", "15 T tokens", never an exponent. */
#include "html.h"
#include "stack.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assess.h"
#include "human.h"
#include "plot.h"
#include "report-private.h"
#include "schedule.h"
#include "svg.h"
#include "xalloc.h"

#define GIB 1073741824.0

static void esc(FILE *f, const char *s)
{
	svg_escape(f, s);  /* the one escaper for markup */
}

/* printf into a new string (caller frees); out of memory ends the run. */
static char *vfmt(const char *fmt, va_list ap)
{
	char *v;
	if (vasprintf(&v, fmt, ap) < 0) {
		fprintf(stderr, "ddlsim: fatal: out of memory formatting the HTML report\n");
		exit(1);
	}
	return v;
}

void html_row(FILE *f, const char *label, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *v = vfmt(fmt, ap);
	va_end(ap);
	fputs("<tr><th>", f);
	esc(f, label);
	fputs("</th><td>", f);
	esc(f, v);
	fputs("</td></tr>\n", f);
	free(v);
}

void html_escf(FILE *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *v = vfmt(fmt, ap);
	va_end(ap);
	esc(f, v);
	free(v);
}

/* x in human units into one of four rotating buffers (for one printf). */
static const char *hn(double x)
{
	static char buf[4][32];
	static int k;
	k = (k + 1) % 4;
	return human_number(x, buf[k], sizeof(buf[k]));
}

const char report_html_css[] =
	"body{font-family:system-ui,sans-serif;margin:2em auto;max-width:980px;color:#222}"
	"h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;padding-bottom:.2em}"
	"table{border-collapse:collapse;font-size:.9em;margin:.5em 0}"
	"th,td{border:1px solid #ddd;padding:.2em .5em;text-align:left}"
	"td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}"
	"tr:nth-child(even){background:#f7f7f7}.bad{color:#b00}.good{color:#070}"
	"svg{max-width:100%;height:auto}.note{color:#666;font-size:.85em}"
	".cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(220px,1fr));gap:.6em;margin:.6em 0}"
	".card{border:1px solid #ddd;border-radius:6px;padding:.5em .7em;background:#fafafa}"
	".card .k{font-size:.8em;color:#666;text-transform:uppercase;letter-spacing:.04em}"
	".card .v{font-size:1.5em;font-weight:600;margin:.15em 0;font-variant-numeric:tabular-nums}"
	".card .v.long{font-size:1.15em}.card .b{font-size:.8em;color:#444}.card.bad .v{color:#b00}.card.good .v{color:#070}"
	".appendix{margin-top:2.5em}";

/* Inline an SVG document, dropping nothing: <svg> is valid HTML5. */
static int inline_svg(FILE *f, char *svg)
{
	if (!svg)
		return -1;
	fputs(svg, f);
	free(svg);
	return 0;
}

/* ---- the decision ----------------------------------------------------- */

/* A headline card: its id, label, value and band line (printf-formatted,
 * escaped); cls "good", "bad" or "". */
static void card(FILE *f, const char *id, const char *cls, const char *label, const char *value,
		 const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void card(FILE *f, const char *id, const char *cls, const char *label, const char *value,
		 const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *b = vfmt(fmt, ap);
	va_end(ap);
	fprintf(f, "<div class=\"card %s\" id=\"%s\"><div class=\"k\">", cls, id);
	esc(f, label);
	fprintf(f, "</div><div class=\"v%s\">", strlen(value) > 16 ? " long" : "");
	esc(f, value);
	fputs("</div><div class=\"b\">", f);
	esc(f, b);
	fputs("</div></div>\n", f);
	free(b);
}

/* GPUs: count and type (each node group's on a mixed cluster), the
 * nodes, the GPUs more the family's bias implies. */
static void card_gpus(FILE *f, const struct result *r, const struct report_band *rb)
{
	const struct topology *topo = inputs_topology(r->in);
	char v[512];
	int n = snprintf(v, sizeof(v), "%ld × %s", r->gpus, topo->gpu.name);
	if (r->ngroups > 0) {
		n = snprintf(v, sizeof(v), "%ld GPUs:", r->gpus);
		for (int i = 0; i < r->ngroups && n < (int)sizeof(v); i++)
			n += snprintf(v + n, sizeof(v) - (size_t)n, "%s %d × %s", i ? "," : "",
				      r->group[i].ranks, r->group[i].gpu);
	}
	card(f, "d-gpus", "", "GPUs", v, "%d nodes of %s; %ld more at the bias (%ld); %ld at the band's slow edge",
	     r->plan.nodes, topo->name, rb->gpus_more, rb->gpus + rb->gpus_more, rb->gpus_safe);
}

/* A figure proportional to the run's time (days, cost, energy): value,
 * the band's range, the figure at the bias. */
static void card_time_like(FILE *f, const char *id, const char *label, const char *pre, double x,
			   const char *unit, const struct report_band *rb)
{
	char v[64];
	snprintf(v, sizeof(v), "%s%s%s", pre, hn(x), unit);
	card(f, id, "", label, v, "%.0f %%: %s%s – %s%s%s; %s%s%s at the bias", 100 * BAND_LEVEL, pre,
	     hn(x * rb->lo), pre, hn(x * rb->hi), unit, pre, hn(x * (1 + rb->b->bias)), unit);
}

/* The training run: days, cost, energy, tokens per dollar. */
static void cards_run(FILE *f, const struct result *r, const struct report_band *rb)
{
	const struct band *b = rb->b;
	const struct plan *pl = &r->plan;
	if (!(pl->training.train_tokens > 0)) {
		card(f, "d-days", "", "days to train", "–", "the scenario sets no training.train_tokens");
		return;
	}
	double days = r->time_to_train_s / 86400;
	card_time_like(f, "d-days", "days to train", "", days, " days", rb);
	if (r->cost_usd > 0) {
		card_time_like(f, "d-cost", "cost", "$", r->cost_usd, "", rb);
		double tpd = pl->training.train_tokens / r->cost_usd;
		char v[64];
		snprintf(v, sizeof(v), "%s tokens", hn(tpd));
		card(f, "d-tokens-per-usd", "", "tokens per dollar", v, "%.0f %%: %s – %s; %s at the bias",
		     100 * BAND_LEVEL, hn(tpd / rb->hi), hn(tpd / rb->lo), hn(tpd / (1 + b->bias)));
	} else
		card(f, "d-cost", "", "cost", "–", "the scenario sets no cost.usd_per_gpu_hour");
	double gbusy[PLAN_MAX_NODE_GROUPS];
	double busy = result_busy(r, gbusy);
	double mwh = assess_energy_MWh(r->in, pl, r->time_to_train_s, busy, gbusy);
	if (isfinite(mwh))
		card_time_like(f, "d-energy", "energy", "", mwh, " MWh", rb);
}

/* Memory: fits or not, needed against capacity. */
static void card_memory(FILE *f, const struct result *r)
{
	const struct stage_result *w = &r->stage[r->worst_stage];
	char v[64];
	if (r->fits) {
		card(f, "d-memory", "good", "memory per GPU", "fits",
		     "%.1f GB needed of %.1f GB (stage %d, the fullest): %.1f GB to spare",
		     w->mem.total_bytes / GB, w->mem.capacity_bytes / GB, r->worst_stage,
		     (w->mem.capacity_bytes - w->mem.total_bytes) / GB);
		return;
	}
	int bad = 0;
	for (int s = 0; s < r->nstages; s++)
		bad += !r->stage[s].mem.fits;
	snprintf(v, sizeof(v), "does not fit: %.1f GB missing", r->shortfall_bytes / GB);
	card(f, "d-memory", "bad", "memory per GPU", v, "stage %d needs %.1f GB of %.1f GB; %d of %d stages do not fit",
	     r->worst_stage, w->mem.total_bytes / GB, w->mem.capacity_bytes / GB, bad, r->nstages);
}

/* The goal the plan was chosen for (`plan --export`): a card each for the
 * deadline and the budget, at the estimate and at the band's slow edge. */
static void cards_goal(FILE *f, const struct result *r, const struct goal_verdict *v)
{
	const struct scenario_goal *g = &r->meta.goal;
	double d0 = v->at.gp.wall_s / 86400, d1 = v->slow.gp.wall_s / 86400;
	if (g->deadline_s > 0) {
		double dl = g->deadline_s / 86400;
		const char *cls = v->meets_deadline_slow ? "good" : v->meets_deadline ? "" : "bad";
		const char *val = v->meets_deadline_slow ? "meets, even at the slow edge" :
				  v->meets_deadline ? "meets; not at the slow edge" : "misses";
		card(f, "d-goal-deadline", cls, "deadline", val, "%s days with failures against %s; %s at the "
		     "slow edge", hn(d0), hn(dl), hn(d1));
	}
	if (g->budget_usd > 0) {
		const char *cls = v->within_budget_slow ? "good" : v->within_budget ? "" : "bad";
		const char *val = v->within_budget_slow ? "within, even at the slow edge" :
				  v->within_budget ? "within; not at the slow edge" : "over";
		card(f, "d-goal-budget", cls, "budget", val, "$%s against $%s; $%s at the slow edge",
		     hn(v->at.econ.cost_usd), hn(g->budget_usd), hn(v->slow.econ.cost_usd));
	}
}

/* The decision: what a reader needs to say yes or no, each figure with
 * the error band of the plan's nearest validation family. */
static void decision(FILE *f, const struct result *r)
{
	struct report_band rb;
	char bt[600], v[64];
	report_band(r, &rb);
	fputs("<section id=\"decision\"><h2>Decision</h2>\n", f);
	struct goal_verdict gv;
	bool goal = report_goal(r, &gv);
	if (goal) {
		const struct scenario_goal *g = &r->meta.goal;
		fputs("<p id=\"d-goal\">goal: ", f);
		html_escf(f, "%s%s%s%s%s: %s tokens", g->name, g->cluster ? " on " : "", g->cluster ? g->cluster : "",
		     g->file ? ", from " : "", g->file ? g->file : "", hn(r->plan.training.train_tokens));
		if (g->deadline_s > 0)
			html_escf(f, ", a deadline of %s days", hn(g->deadline_s / 86400));
		if (g->budget_usd > 0)
			html_escf(f, ", a budget of $%s", hn(g->budget_usd));
		fputs(" (the goal's failures, checkpoints and prices, as <code>ddlsim plan</code> counts "
		      "them)</p>\n", f);
	}
	if (!r->fits)
		fputs("<p class=\"bad\" id=\"d-verdict\">This plan does not fit in GPU memory: its time, cost "
		      "and energy are those of a run that cannot start.</p>\n", f);
	fputs("<div class=\"cards\">\n", f);
	card_gpus(f, r, &rb);
	cards_run(f, r, &rb);
	snprintf(v, sizeof(v), "%s s", hn(r->iteration_s));
	card(f, "d-iteration", "", "iteration time", v, "%.0f %%: %s – %s s; %s s at the bias", 100 * BAND_LEVEL,
	     hn(r->iteration_s * rb.lo), hn(r->iteration_s * rb.hi), hn(rb.iteration_s));
	snprintf(v, sizeof(v), "%.1f %%", 100 * r->mfu);
	card(f, "d-mfu", "", "MFU", v, "%.0f %%: %.1f – %.1f %%; %.1f %% at the bias", 100 * BAND_LEVEL,
	     100 * r->mfu / rb.hi, 100 * fmin(r->mfu / rb.lo, 1), 100 * rb.mfu);
	card_memory(f, r);
	if (goal)
		cards_goal(f, r, &gv);
	fputs("</div>\n", f);
	char why[600];
	if (record_check(r->in, &r->plan, r->mfu, why, sizeof(why))) {
		fputs("<p class=\"bad\" id=\"d-plausibility\">plausibility: ", f);
		esc(f, why);
		fputs("</p>\n", f);
	}
	fputs("<p class=\"note\" id=\"d-mfu-hfu\">", f);
	esc(f, REPORT_MFU_HFU);
	fprintf(f, " (here HFU %.1f %%).</p>\n<p id=\"d-band\">error band: ", 100 * r->hfu);
	esc(f, band_text(&rb.p, bt, sizeof(bt)));
	fputs("</p>\n<p class=\"note\">The band is cross-validated (sim/band.h): the interval around "
	      "the matched validation family's bias inside which 80 % of the suite's published runs fell "
	      "when each was banded with its own family left out; an extrapolated plan gets the widest "
	      "such error. \"At the bias\" moves the figure by the family's mean signed error (positive: "
	      "ddlsim predicted faster than measured, so real runs take longer). Days, cost and energy "
	      "are failure-free; energy counts the GPUs at their busy share between idle and TDP, the "
	      "nodes' other parts and a PUE of 1.58.</p></section>\n", f);
}

/* ---- the appendix ------------------------------------------------------ */

static void summary(FILE *f, const struct result *r)
{
	const struct plan *pl = &r->plan;
	const struct model *model = inputs_model(r->in);
	const struct topology *topo = inputs_topology(r->in);
	struct result_split mean = result_mean_split(r);
	fputs("<section id=\"summary\"><h2>Summary</h2><table>\n", f);
	html_row(f, "model", "%s (%s parameters)", model->name, hn(r->params));
	html_row(f, "cluster", "%d × %s = %ld × %s", pl->nodes, topo->name, r->gpus, topo->gpu.name);
	if (pl->ngroups == 0 && gpu_power_cap_clock_ratio(&topo->gpu) < 1)
		html_row(f, "power limit", "%g W of %g W TDP: compute-bound kernels at %.3f of the clock",
			 topo->gpu.power_cap_W, topo->gpu.tdp_W, gpu_power_cap_clock_ratio(&topo->gpu));
	for (int i = 0; i < r->ngroups; i++) {  /* a mixed cluster: each node group's limit */
		const struct gpu_spec *gg = &pl->group[r->group_index[i]].gpu;
		if (gpu_power_cap_clock_ratio(gg) < 1)
			html_row(f, "power limit", "group %d (%s): %g W of %g W TDP: compute-bound kernels "
				 "at %.3f of the clock", r->group_index[i], r->group[i].gpu, gg->power_cap_W,
				 gg->tdp_W, gpu_power_cap_clock_ratio(gg));
	}
	html_row(f, "plan", "dp %d, tp %d, pp %d, cp %d%s, ZeRO %d, schedule %s (v %d), recompute %s, %s",
	    pl->parallel.dp, pl->parallel.tp, pl->parallel.pp, pl->parallel.cp, pl->parallel.sp ? ", sp" : "",
	    (int)pl->parallel.zero, schedule_registry[pl->parallel.schedule].name, pl->parallel.interleave,
	    recompute_name(pl->parallel.recompute), dtype_name(pl->training.precision));
	if (model_arch(model)->sequence)
		html_row(f, "kernels", "%s stack (%s), attention %s, GEMMs %s", plan_stack(pl)->name,
		    plan_stack(pl)->description, plan_attention_kernel(pl),
		    gemm_lib_names[plan_stack(pl)->gemm_lib]);
	html_row(f, "batch", "%s sequences × %s tokens, micro-batch %ld, %s micro-batches per pipeline",
	    hn((double)pl->training.global_batch), hn((double)pl->training.seq), pl->training.micro_batch,
	    hn(r->microbatches));
	html_row(f, "iteration time", "%s s", hn(r->iteration_s));
	html_row(f, "throughput", "%s samples/s, %s tokens/s", hn(r->samples_per_s), hn(r->tokens_per_s));
	html_row(f, "model TFLOP/s per GPU", "%.1f", r->model_tflops_per_gpu);
	html_row(f, "hardware TFLOP/s per GPU", "%.1f", r->hardware_tflops_per_gpu);
	html_row(f, "MFU / HFU", "%.1f %% / %.1f %%", 100 * r->mfu, 100 * r->hfu);
	html_row(f, "mean split (s)", "compute %.4f, exposed communication %.4f, bubble %.4f, idle %.4f",
	    mean.compute_s, mean.exposed_s, mean.bubble_s, mean.idle_s);
	html_row(f, "memory", "%s: worst stage %d needs %.2f GB (%.2f GiB) of %.2f GB", r->fits ? "fits" : "does not fit",
	    r->worst_stage, r->worst_total_bytes / GB, r->worst_total_bytes / GIB, topo->gpu.hbm_bytes / GB);
	if (pl->training.train_tokens > 0)
		html_row(f, "training run", "%s tokens: %s days, %s GPU-hours, $%s", hn(pl->training.train_tokens),
		    hn(r->time_to_train_s / 86400), hn(r->gpu_hours), hn(r->cost_usd));
	fputs("</table></section>\n", f);
}

static void published(FILE *f, const struct result *r)
{
	struct result_row rr = { 0 };
	result_row_fill(&rr, r);
	bool any = false;
	for (int k = 0; k < PUB_NFIGURES; k++)
		any |= published_figure(&r->meta.pub, k) > 0;
	if (!any)
		return;
	fputs("<section id=\"published\"><h2>Published vs predicted</h2><table>\n"
	      "<tr><th>figure</th><th class=\"n\">published</th><th class=\"n\">predicted</th>"
	      "<th class=\"n\">error</th></tr>\n", f);
	for (int k = 0; k < PUB_NFIGURES; k++) {
		double want = published_figure(&r->meta.pub, k);
		if (want <= 0)
			continue;
		double got = result_row_figure(&rr, k), e = got / want - 1;
		fprintf(f, "<tr><td>%s (%s)</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
			"<td class=\"n %s\">%+.1f %%</td></tr>\n", pub_figures[k].key, pub_figures[k].unit,
			hn(want), hn(got), e > 0.1 || e < -0.1 ? "bad" : "good", 100 * e);
	}
	fputs("</table><p class=\"note\">source: ", f);
	esc(f, r->meta.pub.source);
	fputs("</p></section>\n", f);
}

/* Bytes in human units: "25.27 GB". */
static const char *hbytes(double b)
{
	static char buf[2][40];
	static int k;
	k = (k + 1) % 2;
	char n[32];
	snprintf(buf[k], sizeof(buf[k]), "%sB", human_number(b, n, sizeof(n)));
	return buf[k];
}

static int breakdown(FILE *f, const struct result *r)
{
	fputs("<section id=\"breakdown\"><h2>Where the time goes</h2>\n", f);
	int bad = inline_svg(f, plot_breakdown_svg(r));
	fputs("<table><tr><th>stage</th><th class=\"n\">forward per micro-batch (s)</th>"
	      "<th class=\"n\">backward per micro-batch (s)</th><th class=\"n\">bubble (s)</th>"
	      "<th class=\"n\">bubble fraction</th></tr>\n", f);
	for (int s = 0; s < r->nstages; s++)
		fprintf(f, "<tr><td>%d</td><td class=\"n\">%.6f</td><td class=\"n\">%.6f</td>"
			"<td class=\"n\">%.4f</td><td class=\"n\">%.1f %%</td></tr>\n", s,
			r->stage[s].compute_fwd_s, r->stage[s].compute_bwd_s, r->stage[s].bubble_s,
			100 * r->stage[s].bubble_fraction);
	fputs("</table>\n<table><tr><th>dimension</th><th class=\"n\">bytes sent per GPU</th></tr>\n", f);
	static const struct { const char *n; int c; } dims[] = {
		{ "tp", CAT_TP_COMM }, { "cp", CAT_CP_COMM }, { "dp", CAT_DP_COMM },
		{ "param", CAT_PARAM_COMM }, { "pp", CAT_PP_COMM } };
	for (size_t k = 0; k < sizeof(dims) / sizeof(dims[0]); k++)
		fprintf(f, "<tr><td>%s</td><td class=\"n\">%s</td></tr>\n", dims[k].n,
			hbytes(r->comm_bytes_per_gpu[dims[k].c]));
	fputs("</table></section>\n<section id=\"schedule\"><h2>Pipeline schedule</h2>\n", f);
	bad |= inline_svg(f, plot_gantt_svg(r));
	fputs("<p class=\"note\">One row per pipeline stage, from the simulated timeline of the rank that "
	      "stands for it: the upper lane is its compute stream (forward, backward, other compute; "
	      "waiting for a collective or a pipeline transfer: exposed communication; waiting for a "
	      "peer's work: bubble; the rest idle), each column the shares of its time; the strip below "
	      "shows its collectives and pipeline transfers in flight, overlapped or not. Hover for the "
	      "figures. <code>ddlsim run --trace</code> records every task.</p></section>\n", f);
	return bad;
}

/* A table cell of a share x in [0, 1] as a percentage, its background
 * the heat of x (white to red). */
static void heat_cell(FILE *f, double x, bool measured)
{
	if (!measured) {
		fputs("<td class=\"n\">-</td>", f);
		return;
	}
	fprintf(f, "<td class=\"n\" style=\"background:rgba(204,0,0,%.2f)\">%.0f %%</td>",
		0.6 * fmin(fmax(x, 0), 1), 100 * x);
}

/* The links' traffic: the classes, then the hottest links by bytes
 * (report.json's links section, report_links.c), busy time as a share of
 * the iteration and peak utilisation as heat. */
static void links(FILE *f, const struct result *r)
{
	struct report_link_class *cls;
	int ncls = report_link_classes(r, &cls), shown = 0;
	double it = r->iteration_s > 0 ? r->iteration_s : 1;
	fputs("<section id=\"links\"><h2>Links</h2>\n", f);
	fputs("<table><tr><th>link class</th><th class=\"n\">links</th><th class=\"n\">bytes</th>"
	      "<th class=\"n\">busiest (of the iteration)</th><th class=\"n\">peak utilisation</th></tr>\n", f);
	for (int k = 0; k < ncls; k++) {
		fprintf(f, "<tr><td>%s</td><td class=\"n\">%d</td><td class=\"n\">%s</td>", cls[k].cls,
			cls[k].links, hbytes(cls[k].bytes));
		heat_cell(f, cls[k].busy_s_max / it, cls[k].timed);
		heat_cell(f, cls[k].peak_util_max, cls[k].timed);
		fputs("</tr>\n", f);
	}
	free(cls);
	fputs("</table>\n<table><tr><th>link</th><th>class</th><th class=\"n\">bytes</th>"
	      "<th class=\"n\">busy (of the iteration)</th><th class=\"n\">peak utilisation</th></tr>\n", f);
	for (int i = 0; i < result_nlinks(r) && shown < REPORT_TOP_LINKS; i++) {
		struct result_link l = result_link(r, i);
		if (report_link_crossbar(&l))
			continue;
		fputs("<tr><td>", f);
		esc(f, l.name);
		fprintf(f, "</td><td>%s</td><td class=\"n\">%s</td>", l.cls, hbytes(l.bytes));
		heat_cell(f, l.busy_s / it, true);
		heat_cell(f, l.peak_util, true);
		fputs("</tr>\n", f);
		shown++;
	}
	fprintf(f, "</table>\n<p class=\"note\">Per iteration, every flow %s counted on every link of its "
		"route (a link's two directions apart); the switches' crossbars carry every flow through "
		"them and bind none, so they are in their class only. Busy: the time a link carried any "
		"flow; peak: the most of its bandwidth its flows used at once (report.json, "
		"<code>links</code>).</p></section>\n",
		r->folded ? "the folded run simulated (the representative ranks' and the mirror flows "
			    "they post, not the folded ranks')" : "of every rank");
}

static int memory(FILE *f, const struct result *r)
{
	fputs("<section id=\"memory\"><h2>Memory anatomy per GPU</h2>\n", f);
	int bad = inline_svg(f, plot_memory_svg(r));
	fputs("<table><tr><th>stage</th><th class=\"n\">weights</th><th class=\"n\">gradients</th>"
	      "<th class=\"n\">optimizer</th><th class=\"n\">activations</th><th class=\"n\">loss or recompute</th>"
	      "<th class=\"n\">comm buffers</th><th class=\"n\">reserved</th><th class=\"n\">total GB</th>"
	      "<th class=\"n\">total GiB</th><th>fits</th></tr>\n", f);
	for (int s = 0; s < r->nstages; s++) {
		const struct mem_anatomy *m = &r->stage[s].mem;
		fprintf(f, "<tr><td>%d</td><td class=\"n\">%.2f</td><td class=\"n\">%.2f</td>"
			"<td class=\"n\">%.2f</td><td class=\"n\">%.2f</td><td class=\"n\">%.2f</td>"
			"<td class=\"n\">%.2f</td><td class=\"n\">%.2f</td><td class=\"n\">%.2f</td>"
			"<td class=\"n\">%.2f</td><td class=\"%s\">%s</td></tr>\n", s,
			m->weights_bytes / GB, m->grads_bytes / GB, m->optimizer_bytes / GB,
			m->activations_bytes / GB,
			(m->peak_at_loss ? m->logits_bytes : m->recompute_bytes) / GB, m->comm_buffer_bytes / GB,
			m->reserved_bytes / GB, m->total_bytes / GB, m->total_bytes / GIB,
			m->fits ? "good" : "bad", m->fits ? "yes" : "no");
	}
	fputs("</table><p class=\"note\">GB = 1e9 bytes (datasheets), GiB = 2^30 bytes "
	      "(nvidia-smi, PyTorch); reserved = CUDA context + NCCL buffers + allocator reserve.</p>"
	      "</section>\n", f);
	return bad;
}

/* The kernels of one micro-batch, one row per op. */
static void ops_table(FILE *f, const struct result *r)
{
	fputs("<section id=\"ops\"><h2>Kernels of one micro-batch</h2><table>\n<tr><th>block</th>"
	      "<th>pass</th><th>op</th><th class=\"n\">m</th><th class=\"n\">n</th><th class=\"n\">k</th>"
	      "<th class=\"n\">batch</th><th class=\"n\">GFLOP</th><th class=\"n\">MB moved</th>"
	      "<th class=\"n\">kernels</th><th class=\"n\">time (us)</th><th class=\"n\">TFLOP/s</th><th>source</th></tr>\n", f);
	for (int i = 0; i < r->nops; i++) {
		const struct op_timing *o = &r->ops[i];
		fputs("<tr><td>", f);
		esc(f, o->block);
		fputs("</td><td>", f);
		esc(f, o->pass);
		fputs("</td><td>", f);
		esc(f, o->name);
		fprintf(f, "</td><td class=\"n\">%.0f</td><td class=\"n\">%.0f</td><td class=\"n\">%.0f</td>"
			"<td class=\"n\">%.0f</td><td class=\"n\">%.3f</td><td class=\"n\">%.3f</td>"
			"<td class=\"n\">%d</td><td class=\"n\">%.2f</td><td class=\"n\">%.1f</td><td>%s</td></tr>\n",
			o->m, o->n, o->k, o->batch, o->flops / 1e9, o->bytes / 1e6, o->kernels, o->time_s * 1e6,
			o->time_s > 0 ? o->flops / o->time_s / 1e12 : 0.0, o->measured ? "profile" : "roofline");
	}
	fputs("</table></section>\n", f);
}

static void provenance(FILE *f, const struct result *r)
{
	const struct topology *topo = inputs_topology(r->in);
	const char *profile = inputs_profile_path(r->in);
	fputs("<section id=\"provenance\"><h2>Provenance</h2><table>\n", f);
	html_row(f, "producer", "ddlsim %s (report schema ddlsim.report 1.1)", r->producer_version);
	html_row(f, "scenario", "%s", r->meta.path ? r->meta.path : "");
	html_row(f, "model file", "%s", inputs_model_path(r->in));
	html_row(f, "topology file", "%s", inputs_topology_path(r->in));
	html_row(f, "GPU preset", "%s", topo->gpu_preset[0] ? topo->gpu_preset : "inline in the topology");
	html_row(f, "cost source", "%s", r->cost_source ? r->cost_source : "roofline");
	html_row(f, "profile", "%s", profile ? profile : "none (roofline)");
	html_row(f, "cost detail", "%s", r->cost_detail ? r->cost_detail : "");
	html_row(f, "simulation", "%d of %d ranks simulated%s, %s flows, %s tasks, %.2f s wall",
	    result_sim(r).nsimulated, result_nranks(r), r->folded ? " (folded replicas)" : "",
	    hn((double)result_sim(r).flows), hn((double)result_sim(r).tasks), r->sim_wall_s);
	fputs("</table></section>\n", f);
}

char *html_render(const struct result *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	const char *name = r->meta.name ? r->meta.name : "scenario";
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>ddlsim: ", f);
	esc(f, name);
	fprintf(f, "</title>\n<style>%s</style>\n"
		"<script>window.onerror=function(){document.documentElement.setAttribute('data-errors','1')};</script>\n"
		"</head><body>\n<h1>", report_html_css);
	esc(f, name);
	fputs("</h1>\n<p>", f);
	esc(f, r->meta.description);
	fputs("</p>\n", f);
	decision(f, r);
	fputs("<div class=\"appendix\">\n", f);
	summary(f, r);
	published(f, r);
	int bad = breakdown(f, r);
	links(f, r);
	bad |= memory(f, r);
	ops_table(f, r);
	provenance(f, r);
	fputs("</div>\n<script>document.body.setAttribute('data-rendered','ok');</script>\n</body></html>\n", f);
	bad |= ferror(f) != 0;
	fclose(f);
	if (bad) {
		free(buf);
		return NULL;
	}
	return buf;
}
