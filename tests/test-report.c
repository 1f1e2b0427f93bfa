/* test-report: the report writers other than JSON: the SVG writer and
 * plots (well-formed XML with axes, units and legends, checked by
 * python3's xml module; nice ticks; the schedule chart), CSV numbers in
 * plain decimal, report.html's decision page (exact strings, human
 * units, escaping), and report.html rendered by headless Chromium (no
 * console message, every section, the decision's figures in the DOM, the
 * page's script ran, a PNG screenshot; skipped when chromium is absent). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "band.h"
#include "diag.h"
#include "plot.h"
#include "scenario.h"
#include "svg.h"
#include "testutil.h"
#include "tidy.h"
#include "xalloc.h"

static char *slurp_file(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t cap = 0;
	ssize_t n = getdelim(&buf, &cap, '\0', f);
	fclose(f);
	if (n < 0) {
		free(buf);
		return xstrdup("");
	}
	return buf;
}

/* python3: parse path as XML; the root must be <svg> with a <title>, at
 * least min_rects <rect>, a legend group and each of the texts given
 * (separated by '|'). Prints what is wrong; returns the exit status. */
static int check_svg(const char *dir, const char *path, int min_rects, const char *texts)
{
	char *py = write_file(dir, "check_svg.py",
		"import sys, xml.etree.ElementTree as ET\n"
		"ns = '{http://www.w3.org/2000/svg}'\n"
		"root = ET.parse(sys.argv[1]).getroot()\n"
		"assert root.tag == ns + 'svg', root.tag\n"
		"assert root.find(ns + 'title') is not None, 'no title'\n"
		"rects = root.findall('.//' + ns + 'rect')\n"
		"assert len(rects) >= int(sys.argv[2]), len(rects)\n"
		"assert any(g.get('class') == 'legend' for g in root.iter(ns + 'g')), 'no legend'\n"
		"alltext = ' '.join(''.join(t.itertext()) for t in root.iter(ns + 'text'))\n"
		"for want in sys.argv[3].split('|'):\n"
		"    assert want in alltext, 'missing text: ' + want\n");
	char cmd[4096];
	snprintf(cmd, sizeof(cmd), "python3 %s '%s' %d '%s' 1>&2", py, path, min_rects, texts);
	int st = system(cmd);
	free(py);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 255;
}

/* ---- svg writer --------------------------------------------------------- */

Test(svg, escapes_text_and_closes_every_element)
{
	struct svg *s = svg_create(200, 100, "a <b> & \"c\"");
	svg_text(s, 10, 10, "start", 12, -90, "%s & %d < 3", "x", 2);
	svg_rect(s, 0, 0, -5, 10, "#123456", "tip <1>");
	svg_circle(s, 5, 5, 2, "red", NULL, NULL);
	size_t n;
	char *t = svg_finish(s, &n);
	cr_assert(t);
	cr_expect_eq(strlen(t), n);
	cr_expect(strstr(t, "<title>a &lt;b&gt; &amp; &quot;c&quot;</title>"), "%s", t);
	cr_expect(strstr(t, ">x &amp; 2 &lt; 3</text>"), "%s", t);
	/* a negative width is drawn from the other edge */
	cr_expect(strstr(t, "<rect x=\"-5.00\" y=\"0.00\" width=\"5.00\""), "%s", t);
	cr_expect(strstr(t, "<title>tip &lt;1&gt;</title></rect>"), "%s", t);
	cr_expect(strstr(t, "</svg>\n"));
	char *d = tmp_dir();
	char *p = write_file(d, "x.svg", t);
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' %s", p);
	cr_expect_eq(system(cmd), 0);
	free(p);
	free(d);
	free(t);
}

Test(svg, nice_axes_round_out_to_1_2_5_steps)
{
	double lo = 0, hi = 2.93;
	svg_axes_nice(&lo, &hi, false);
	cr_expect_float_eq(lo, 0, 1e-12);
	cr_expect_float_eq(hi, 3, 1e-12);
	lo = 0;
	hi = 85.9;
	svg_axes_nice(&lo, &hi, false);
	cr_expect_float_eq(hi, 100, 1e-12);
	lo = 8;
	hi = 16384;
	svg_axes_nice(&lo, &hi, true);
	cr_expect_float_eq(lo, 1, 1e-12);
	cr_expect_float_eq(hi, 100000, 1e-9);
}

Test(svg, nice_ticks_are_1_2_5_multiples_computed_not_summed)
{
	double t[SVG_MAX_TICKS], st;
	/* 0..11.7 in about 5 steps: 0, 2, ..., 10 (step 2), not 0, 2.34, 4.68 */
	int n = svg_nice_ticks(0, 11.7, 5, t, SVG_MAX_TICKS, &st);
	cr_assert_eq(n, 6);
	cr_expect_float_eq(st, 2, 1e-12);
	for (int i = 0; i < n; i++)
		cr_expect_eq(t[i], 2.0 * i, "tick %d: %.17g", i, t[i]);
	/* the same range as an axis: rounded out to 12, ticks 0..12 */
	double lo = 0, hi = 11.7;
	svg_axes_nice(&lo, &hi, false);
	cr_expect_float_eq(hi, 12, 1e-12);
	cr_expect_eq(svg_nice_ticks(lo, hi, 5, t, SVG_MAX_TICKS, NULL), 7);
	/* 0..17.5 in about 3 steps: 0, 5, 10, 15 */
	n = svg_nice_ticks(0, 17.5, 3, t, SVG_MAX_TICKS, &st);
	cr_assert_eq(n, 4);
	cr_expect(t[1] == 5 && t[2] == 10 && t[3] == 15, "%g %g %g", t[1], t[2], t[3]);
	/* k x step: 0.3 is 3 x 0.1, printed as 0.3, not 0.30000000000000004 */
	n = svg_nice_ticks(0, 0.5, 5, t, SVG_MAX_TICKS, &st);
	cr_assert_eq(n, 6);
	cr_expect_eq(t[3], 3 * 0.1);
	char buf[32];
	snprintf(buf, sizeof(buf), "%g", t[3]);
	cr_expect_str_eq(buf, "0.3");
	/* not starting at 0; nothing for an empty range */
	n = svg_nice_ticks(13.2, 27.9, 5, t, SVG_MAX_TICKS, &st);
	cr_assert_eq(n, 7);
	cr_expect(t[0] == 14 && t[6] == 26 && st == 2, "%g .. %g step %g", t[0], t[6], st);
	cr_expect_eq(svg_nice_ticks(3, 3, 5, t, SVG_MAX_TICKS, NULL), 0);
}

/* ---- plots of a run ------------------------------------------------------ */

Test(plot, run_writes_wellformed_plots_with_axes_units_and_legends, .timeout = 120)
{
	char *d = tmp_dir(), args[2048], *err = NULL, p[1200];
	/* Megatron 76B: 4 stages, interleaved with 3 chunks */
	snprintf(args, sizeof(args), "run %s --out %s --format svg --quiet",
		 src_path("scenarios/megatron/76b.json"), d);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	snprintf(p, sizeof(p), "%s/report.json", d);
	cr_expect(!file_exists(p), "--format svg wrote report.json");
	snprintf(p, sizeof(p), "%s/breakdown.svg", d);
	/* 4 stages x at least compute and one other term, + legend swatches */
	cr_expect_eq(check_svg(d, p, 8 + 8, "time per iteration (s)|pipeline stage|compute|"
			       "exposed TP comm|exposed DP comm|pipeline bubble|idle|iteration"), 0);
	snprintf(p, sizeof(p), "%s/schedule.svg", d);
	char *g = slurp_file(p);
	cr_assert(g);
	/* the simulated timeline: a row per stage, compute, exposed
	 * communication, bubbles and communication in flight, each in its
	 * own colour with its legend entry */
	cr_expect_eq(check_svg(d, p, 4 * 20, "time from the start of the iteration (s)|pipeline stage|"
			       "forward (chunk 0, 2, ...)|backward (chunk 1, 3, ...)|exposed collective|"
			       "exposed pipeline transfer|pipeline bubble|idle|collective in flight|"
			       "pipeline transfer in flight"), 0);
	for (int s = 0; s < 4; s++) {
		char want[64];
		snprintf(want, sizeof(want), "<title>stage %d (rank ", s);
		cr_expect(strstr(g, want), "no row for stage %d", s);
	}
	static const char *const fills[] = { "#4e79a7", "#59a14f", "#e15759", "#b07aa1", "#edc948",
					     "#ff9da7", "#d4a6c8" };
	for (size_t i = 0; i < sizeof(fills) / sizeof(fills[0]); i++) {
		char want[64];
		int n = 0;
		snprintf(want, sizeof(want), "fill=\"%s\"", fills[i]);
		for (const char *q = g; (q = strstr(q, want)); q++)
			n++;
		cr_expect_gt(n, 1, "colour %s only in the legend", fills[i]);
	}
	cr_expect(strstr(g, " exposed collective ") && strstr(g, "% tp") && strstr(g, " pipeline bubble ") &&
		  strstr(g, "(most: forward of micro-batch 0, chunk 0)"), "tooltips");
	/* nice ticks: 0, 2, ..., 14 for a 13.9 s iteration */
	cr_expect(strstr(g, ">14</text>") && strstr(g, ">2</text>"));
	/* a few hundred kB, whatever the number of tasks */
	cr_expect_lt(strlen(g), 600000);
	snprintf(p, sizeof(p), "%s/memory.svg", d);
	cr_expect_eq(check_svg(d, p, 4 * 3, "memory per GPU (GB, 1e9 bytes)|weights|optimizer state|"
			       "activations|capacity"), 0);
	free(g);
	free(err);
	free(d);
}

static json_t *rec(const char *status, double gpus, double mfu, double days, double cost)
{
	return json_pack("{s:s, s:f, s:f, s:f, s:f, s:i, s:i, s:i}", "status", status, "gpus", gpus,
			 "mfu", mfu, "wall_days", days, "cost_usd", cost, "dp", 1, "tp", 8, "pp", 4);
}

Test(plot, pareto_rings_the_plans_no_other_beats_on_both_time_and_cost)
{
	json_t *r = json_array();
	json_array_append_new(r, rec("ok", 1024, 0.40, 10, 5e6));   /* front: fastest */
	json_array_append_new(r, rec("ok", 512, 0.45, 20, 3e6));    /* front: cheapest */
	json_array_append_new(r, rec("ok", 768, 0.30, 15, 6e6));    /* dominated by the first */
	json_array_append_new(r, rec("failed", 64, 0, 0, 0));       /* left out */
	/* faster and cheaper than all, but does not fit: never plotted nor on the front */
	json_array_append_new(r, rec("oom", 256, 0.60, 5, 1e6));
	/* coloured by GPU type, one legend entry each; the goal's lines */
	json_object_set_new(json_array_get(r, 0), "gpu", json_string("H100-SXM5-80GB"));
	json_object_set_new(json_array_get(r, 1), "gpu", json_string("H100-SXM5-80GB"));
	json_object_set_new(json_array_get(r, 2), "gpu", json_string("A100-SXM4-80GB"));
	struct plot_goal goal = { 12, 4e6 };
	char *t = plot_pareto_svg(r, "goal", &goal);
	cr_assert(t);
	int front = 0;
	for (const char *q = t; (q = strstr(q, "(Pareto front)")); q++)
		front++;
	cr_expect_eq(front, 2, "%s", t);
	cr_expect(strstr(t, "10.00 days, $5.000M, MFU 40.0% (Pareto front)"), "%s", t);
	cr_expect(strstr(t, "15.00 days, $6.000M, MFU 30.0%</title>"), "%s", t);
	cr_expect(strstr(t, ">3 plans that fit plotted</text>"), "%s", t);
	cr_expect(strstr(t, ">1 that do not fit in memory left out</text>"), "%s", t);
	cr_expect_null(strstr(t, ": 5.00 days"), "a plan that does not fit is drawn:\n%s", t);
	cr_expect(strstr(t, ">1 failed or unpriced left out</text>"), "%s", t);
	cr_expect(strstr(t, "wall time to train incl. failures (days)"));
	cr_expect(strstr(t, "cost (million USD)"));
	char *d = tmp_dir(), *p = write_file(d, "pareto.svg", t);
	cr_expect(strstr(t, ">deadline 12 d</text>") && strstr(t, ">budget $4 M</text>"), "%s", t);
	cr_expect_eq(check_svg(d, p, 2, "Pareto front|H100-SXM5-80GB|A100-SXM4-80GB|deadline|budget"), 0);
	free(t);
	t = plot_mfu_svg(r, "goal");
	cr_assert(t);
	cr_expect(strstr(t, "GPUs (log scale)") && strstr(t, "model FLOPs utilisation (%)"));
	cr_expect(strstr(t, "MFU 45.00%"), "%s", t);
	free(p);
	p = write_file(d, "mfu.svg", t);
	cr_expect_eq(check_svg(d, p, 2, "H100-SXM5-80GB|A100-SXM4-80GB|Pareto front"), 0);
	free(p);
	free(t);
	free(d);
	json_decref(r);
}

/* Close plans (80 to 95 days, $9.8 M to $11.4 M, MFU 41 to 44 %) spread
 * over the plot: no axis starts at zero; far apart ones keep zero. */
Test(plot, axes_start_near_the_data_when_the_plans_are_close)
{
	json_t *r = json_array();
	json_array_append_new(r, rec("ok", 1024, 0.44, 80, 11.4e6));
	json_array_append_new(r, rec("ok", 896, 0.43, 88, 10.5e6));
	json_array_append_new(r, rec("ok", 768, 0.41, 95, 9.8e6));
	char *t = plot_pareto_svg(r, "close", NULL);
	cr_assert(t);
	cr_expect_null(strstr(t, ">0</text>"), "an axis starts at zero:\n%s", t);
	cr_expect(strstr(t, ">78</text>") && strstr(t, ">96</text>"), "days from 78 to 96:\n%s", t);
	free(t);
	t = plot_mfu_svg(r, "close");
	cr_assert(t);
	cr_expect_null(strstr(t, ">0</text>"), "MFU starts at zero:\n%s", t);
	free(t);
	/* 10 and 40 days: zero costs at most half the plot and stays */
	json_object_set_new(json_array_get(r, 0), "wall_days", json_real(10));
	json_object_set_new(json_array_get(r, 1), "wall_days", json_real(40));
	t = plot_pareto_svg(r, "far", NULL);
	cr_assert(t);
	cr_expect(strstr(t, ">0</text>"), "days from zero:\n%s", t);
	free(t);
	json_decref(r);
}

/* ---- csv numbers ------------------------------------------------------------ */

static char *num_text(double x, int digits)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	tidy_csv_number(f, x, digits);
	fclose(f);
	return buf;
}

Test(csv, numbers_are_plain_decimal_never_an_exponent)
{
	static const struct { double x; int digits; const char *want; } c[] = {
		{ 190690123.456, 9, "190690123" }, { 1.2345e12, 6, "1234500000000" },
		{ 0.0738980049, 9, "0.0738980049" }, { 1.5e-7, 9, "0.00000015" },
		{ 0, 9, "0" }, { -2.5, 6, "-2.5" }, { 6e-17, 9, "0" }, { 49.98813934, 9, "49.9881393" },
		{ NAN, 9, "" },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char *t = num_text(c[i].x, c[i].digits);
		cr_expect_str_eq(t, c[i].want, "%g", c[i].x);
		free(t);
	}
}

/* ---- html: the decision page ------------------------------------------------ */

/* The band text of a shipped scenario's plan, as the page must print it. */
static void band_of(const char *scenario, char *out, size_t n)
{
	struct diag d;
	diag_init(&d, NULL);
	struct scenario *sc = scenario_load(src_path(scenario), &d);
	cr_assert(sc, "%s", diag_text(&d));
	char bt[600];
	struct band_pick p;
	band_choose(sc->in, &sc->plan, &p);
	snprintf(out, n, "error band: %s", band_text(&p, bt, sizeof(bt)));
	scenario_destroy(sc);
	diag_finish(&d);
}

/* Run scenario (a path) with --format html,json into a new directory;
 * report.html's text (caller frees), *dir the directory (caller frees). */
static char *html_of(const char *scenario, char **dir)
{
	char args[2048], p[1200], *err = NULL;
	*dir = tmp_dir();
	snprintf(args, sizeof(args), "run '%s' --out %s --format html,json --quiet", scenario, *dir);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	free(err);
	snprintf(p, sizeof(p), "%s/report.html", *dir);
	char *html = slurp_file(p);
	cr_assert(html);
	return html;
}

/* The quickstart's decision: each headline figure exactly as printed. */
static const char *const quickstart_decision[] = {
	">16 × A100-SXM4-80GB</div>", ">2 nodes of DGX A100; 8 more at the bias (24); 24 at the band's slow edge</div>",
	">284.7 days</div>", ">80 %: 208.4 – 395.7 days; 302.1 days at the bias</div>",
	">$196.8 k</div>", ">80 %: $144 k – $273.5 k; $208.8 k at the bias</div>",
	">10.16 M tokens</div>", ">140.3 MWh</div>",
	">51.58 s</div>", ">80 %: 37.76 – 71.7 s; 54.73 s at the bias</div>",
	/* the band's top end of MFU stops at 100 % */
	">75.1 %</div>", ">80 %: 54.0 – 100.0 %; 70.7 % at the bias</div>",
	">fits</div>", ">56.8 GB needed of 85.9 GB (stage 0, the fullest): 29.1 GB to spare</div>",
	NULL
};

/* No number in the page written with an exponent or as a long raw
 * amount of money. */
static void expect_human_numbers(const char *html)
{
	for (const char *q = html; *q; q++) {
		bool digit_before = q > html && q[-1] >= '0' && q[-1] <= '9';
		if (digit_before && (q[0] == 'e' || q[0] == 'E') && (q[1] == '+' || q[1] == '-') &&
		    q[2] >= '0' && q[2] <= '9')
			cr_expect(0, "an exponent: ...%.40s", q - 8);
		if (q[0] == '$' && strspn(q + 1, "0123456789") > 4)
			cr_expect(0, "a raw amount: %.20s", q);
	}
}

Test(html, decision_page_first_with_each_figure_and_its_band, .timeout = 120)
{
	char *d, band[700];
	char *html = html_of(src_path("scenarios/quickstart.json"), &d);
	const char *dec = strstr(html, "<section id=\"decision\">");
	cr_assert(dec, "no decision section");
	/* first: before the summary and every other section */
	cr_expect_null(strstr(html, "<section") < dec ? html : NULL, "a section before the decision");
	const char *end = strstr(dec, "</section>");
	cr_assert(end);
	for (int i = 0; quickstart_decision[i]; i++) {
		const char *at = strstr(dec, quickstart_decision[i]);
		cr_expect(at && at < end, "the decision lacks '%s'", quickstart_decision[i]);
	}
	band_of("scenarios/quickstart.json", band, sizeof(band));
	cr_expect(strstr(band, "korthikanti-a100"), "%s", band);
	const char *at = strstr(dec, band);
	cr_expect(at && at < end, "the decision lacks '%s'", band);
	/* human units in the appendix too */
	cr_expect(strstr(html, "<td>2000 G tokens: 284.7 days, 109.3 k GPU-hours, $196.8 k</td>"));
	cr_expect(strstr(html, "<td>19.85 samples/s, 81.31 k tokens/s</td>"));
	expect_human_numbers(html);
	free(html);
	free(d);
}

Test(html, decision_page_says_how_much_memory_is_missing, .timeout = 120)
{
	char *d;
	char *html = html_of(src_path("scenarios/gpt3-175b-dp1024.json"), &d);
	json_t *rep = load_report(d);
	cr_assert(rep);
	char want[200];
	snprintf(want, sizeof(want), ">does not fit: %.1f GB missing</div>", jnum(rep, "memory/shortfall_GB"));
	cr_expect(strstr(html, want), "no '%s'", want);
	cr_expect(strstr(html, ">1024 × A100-SXM4-80GB</div>"));
	cr_expect(strstr(html, "id=\"d-verdict\">This plan does not fit in GPU memory"));
	cr_expect(strstr(html, "<div class=\"card bad\" id=\"d-memory\">"));
	expect_human_numbers(html);
	json_decref(rep);
	free(html);
	free(d);
}

Test(html, scenario_text_is_escaped, .timeout = 120)
{
	char *text = slurp_file(src_path("scenarios/quickstart.json"));
	cr_assert(text);
	char model[1200], topo[1200];
	snprintf(model, sizeof(model), "\"%s\"", src_path("models/zoo/llama2-7b.json"));
	snprintf(topo, sizeof(topo), "\"%s\"", src_path("topologies/dgx-a100.json"));
	/* markup without '/' (names become directory names: sim/scenario.c) */
	char *a = str_subst(text, "\"quickstart\"", "\"q <b>&amp; \\\"x\\\" <i>\"");
	char *b = str_subst(a, "\"../models/zoo/llama2-7b.json\"", model);
	char *c = str_subst(b, "\"../topologies/dgx-a100.json\"", topo);
	char *dir = tmp_dir(), *path = write_file(dir, "hostile.json", c), *d;
	char *html = html_of(path, &d);
	cr_expect(strstr(html, "<h1>q &lt;b&gt;&amp;amp; &quot;x&quot; &lt;i&gt;</h1>"), "name not escaped");
	cr_expect(strstr(html, "<title>ddlsim: q &lt;b&gt;&amp;amp; &quot;x&quot; &lt;i&gt;</title>"));
	cr_expect_null(strstr(html, "<b>"), "raw markup from the scenario");
	cr_expect_null(strstr(html, "<i>"), "raw markup from the scenario");
	free(html);
	free(d);
	free(path);
	free(dir);
	free(a);
	free(b);
	free(c);
	free(text);
}

/* ---- html in a browser ------------------------------------------------------- */

/* path's DOM after headless Chromium ran its scripts (caller frees). */
static char *chromium_dom(const char *dir, const char *path)
{
	char cmd[8192];
	snprintf(cmd, sizeof(cmd),
		 "cd %s && HOME=%s timeout 120 chromium --headless --no-sandbox --disable-gpu "
		 "--no-first-run --user-data-dir=%s/profile --dump-dom file://%s >%s/dom.html 2>/dev/null",
		 dir, dir, dir, path, dir);
	cr_assert_eq(system(cmd), 0, "chromium failed on %s", path);
	snprintf(cmd, sizeof(cmd), "%s/dom.html", dir);
	char *dom = slurp_file(cmd);
	cr_assert(dom);
	return dom;
}

Test(html, chromium_renders_the_decision_page, .timeout = 180)
{
	if (system("command -v chromium >/dev/null 2>&1")) {
		cr_skip("chromium is not installed (Debian package 'chromium'): the decision page not rendered");
		return;
	}
	char *d, p[1200], band[700];
	free(html_of(src_path("scenarios/quickstart.json"), &d));
	snprintf(p, sizeof(p), "%s/report.html", d);
	char *dom = chromium_dom(d, p);
	cr_expect(strstr(dom, "data-rendered=\"ok\""), "the page's script did not run");
	const char *dec = strstr(dom, "<section id=\"decision\">");
	cr_assert(dec, "no decision section in the DOM");
	for (int i = 0; quickstart_decision[i]; i++)
		cr_expect(strstr(dec, quickstart_decision[i]), "the rendered decision lacks '%s'",
			  quickstart_decision[i]);
	band_of("scenarios/quickstart.json", band, sizeof(band));
	cr_expect(strstr(dec, band), "the rendered decision lacks '%s'", band);
	/* the schedule chart made it into the DOM with its legend */
	cr_expect(strstr(dom, ">exposed collective</text>") && strstr(dom, ">pipeline bubble</text>"));
	free(dom);
	free(d);
}

Test(html, renders_in_chromium_with_every_section_and_no_console_message, .timeout = 180)
{
	if (system("command -v chromium >/dev/null 2>&1")) {
		cr_skip("chromium is not installed (Debian package 'chromium'): report.html not rendered");
		return;
	}
	char *d = tmp_dir(), args[2048], *err = NULL, cmd[8192], p[1200];
	snprintf(args, sizeof(args), "run %s --out %s --format html --quiet",
		 src_path("scenarios/megatron/76b.json"), d);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	snprintf(p, sizeof(p), "%s/report.html", d);
	char *html = slurp_file(p);
	cr_assert(html);
	/* self-contained: nothing fetched */
	cr_expect(!strstr(html, "src=\"http") && !strstr(html, "href=\"http") && !strstr(html, "@import"));
	/* the DOM after the page's scripts ran, and the console log */
	snprintf(cmd, sizeof(cmd),
		 "cd %s && HOME=%s timeout 120 chromium --headless --no-sandbox --disable-gpu "
		 "--no-first-run --user-data-dir=%s/profile --enable-logging=stderr --v=0 "
		 "--dump-dom file://%s >%s/dom.html 2>%s/console.txt", d, d, d, p, d, d);
	cr_assert_eq(system(cmd), 0, "chromium failed: see %s/console.txt", d);
	snprintf(cmd, sizeof(cmd), "%s/dom.html", d);
	char *dom = slurp_file(cmd);
	snprintf(cmd, sizeof(cmd), "%s/console.txt", d);
	char *console = slurp_file(cmd);
	cr_assert(dom && console);
	cr_expect(!strstr(console, ":CONSOLE"), "console messages:\n%s", console);
	cr_expect(strstr(dom, "data-rendered=\"ok\""), "the page's script did not run");
	cr_expect(!strstr(dom, "data-errors=\"1\""), "a script error");
	static const char *const ids[] = { "decision", "summary", "published", "breakdown", "schedule",
					   "links", "memory", "ops", "provenance" };
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		char want[64];
		snprintf(want, sizeof(want), "<section id=\"%s\">", ids[i]);
		cr_expect(strstr(dom, want), "no section '%s'", ids[i]);
	}
	cr_expect(strstr(dom, "tflops_per_gpu (TFLOP/s)"), "no published line");
	/* and a screenshot, as a person would see it */
	snprintf(cmd, sizeof(cmd),
		 "cd %s && HOME=%s timeout 120 chromium --headless --no-sandbox --disable-gpu "
		 "--no-first-run --user-data-dir=%s/profile --window-size=1000,3000 "
		 "--screenshot=%s/report.png file://%s >/dev/null 2>&1", d, d, d, d, p);
	cr_expect_eq(system(cmd), 0);
	snprintf(p, sizeof(p), "%s/report.png", d);
	struct stat st;
	cr_expect(stat(p, &st) == 0 && st.st_size > 20000, "no screenshot (or a blank one) at %s", p);
	free(html);
	free(dom);
	free(console);
	free(err);
	free(d);
}

/* The summary says what MFU and HFU count, and that the quickstart's MFU
 * (75.1 %) is above the best public figure for its class (sim/record.h);
 * report.json and report.html carry the same. */
Test(summary, mfu_hfu_defined_and_the_record_named, .timeout = 120)
{
	char *dir = tmp_dir(), args[2048], *out = NULL, *err = NULL, p[1200];
	snprintf(args, sizeof(args), "run '%s' --out %s --format json,html", src_path("scenarios/quickstart.json"), dir);
	cr_assert_eq(run_ddlsim(args, &out, &err), 0, "%s", err);
	cr_expect(strstr(out, "\nmfu                                   75.1%\nhfu                                   72.4%\n"
			      "  (MFU: model FLOPs, Megatron's and PaLM's count: 6 N + 12 L h s per token"), "%s", out);
	/* and the memory at the memory families' largest shortfall */
	cr_expect(strstr(out, "\nmemory at the validated error: 70.1 GB of 85.9 GB (published peaks ran from 3.9 % below to "
			      "26.6 % above ddlsim's figure, 24 runs"), "%s", out);
	cr_expect(strstr(out, "\nplausibility: MFU 75.1 % exceeds 64.2 %, the best public MFU the project knows for "
			      "a dense decoder on Ampere (llm-foundry MPT-7B on 8 A100 80GB; "), "%s", out);
	snprintf(p, sizeof(p), "%s/report.json", dir);
	char *json = slurp_file(p);
	cr_assert(json);
	cr_expect(strstr(json, "\"exceeds_record\": true"), "%s", json);
	cr_expect(strstr(json, "\"record_mfu\": 0.6423"), "%s", json);
	snprintf(p, sizeof(p), "%s/report.html", dir);
	char *html = slurp_file(p);
	cr_assert(html);
	cr_expect(strstr(html, "<p class=\"bad\" id=\"d-plausibility\">plausibility: MFU 75.1 % exceeds 64.2 %"));
	cr_expect(strstr(html, "(here HFU 72.4 %).</p>"));
	free(json);
	free(html);
	free(out);
	free(err);
	free(dir);
}

/* Issue 44: the summary's training line without exponents or digits a
 * reader must count, and no tokens for a CNN (an image is its sample). */
Test(report, summary_numbers_read_with_their_units, .timeout = 120)
{
	char *d = tmp_dir(), args[2400], *out = NULL, *err = NULL;
	snprintf(args, sizeof(args), "run %s --out %s/a", src_path("scenarios/llama3-70b-h100-base.json"), d);
	cr_assert_eq(run_ddlsim(args, &out, &err), 0, "%s", err);
	cr_expect(strstr(out, "\ntraining 15 T tokens: 345.2 days, 4241 k GPU-hours, $10.6 M\n"), "%s", out);
	cr_expect(strstr(out, "\ntokens_per_s "), "%s", out);
	free(out), free(err);
	out = err = NULL;
	snprintf(args, sizeof(args), "run %s --out %s/b", src_path("scenarios/resnet50-v100-2nodes.json"), d);
	cr_assert_eq(run_ddlsim(args, &out, &err), 0, "%s", err);
	cr_expect(strstr(out, "\nsamples_per_s "), "%s", out);
	cr_expect(!strstr(out, "tokens_per_s"), "%s", out);
	free(out), free(err), free(d);
}
