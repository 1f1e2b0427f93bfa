/* test-report: the report writers other than JSON: the SVG writer and
 * plots (well-formed XML with axes, units and legends, checked by
 * python3's xml module), CSV numbers in plain decimal, and report.html
 * rendered by headless Chromium (no console message, every section, the
 * page's script ran, a PNG screenshot). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "plot.h"
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
	/* every pass of every stage: 4 stages x 2 passes x chunks x micro-batches */
	int passes = 0;
	for (const char *q = g; (q = strstr(q, "micro-batch ")); q++)
		passes += strncmp(q - 8, "forward ", 8) == 0 || strncmp(q - 9, "backward ", 9) == 0;
	json_t *rep = NULL;
	{
		char a2[2048], d2[1200];
		snprintf(d2, sizeof(d2), "%s/j", d);
		snprintf(a2, sizeof(a2), "run %s --out %s --format json --quiet",
			 src_path("scenarios/megatron/76b.json"), d2);
		cr_assert_eq(run_ddlsim(a2, NULL, NULL), 0);
		rep = load_report(d2);
	}
	cr_assert(rep);
	double m = jnum(rep, "scenario/training/microbatches_per_pipeline");
	double v = jnum(rep, "scenario/parallel/interleave");
	cr_expect_eq(passes, (int)(4 * 2 * v * m), "%d passes drawn, want 4 x 2 x %g x %g", passes, v, m);
	cr_expect_eq(check_svg(d, p, (int)(4 * 2 * v * m), "time from the start of the iteration (s)|"
			       "pipeline stage|forward (chunk 0, 2, ...)|backward (chunk 1, 3, ...)"), 0);
	snprintf(p, sizeof(p), "%s/memory.svg", d);
	cr_expect_eq(check_svg(d, p, 4 * 3, "memory per GPU (GB, 1e9 bytes)|weights|optimizer state|"
			       "activations|capacity"), 0);
	json_decref(rep);
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
	char *t = plot_pareto_svg(r, "goal");
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
	cr_expect_eq(check_svg(d, p, 2, "Pareto front|simulated plan"), 0);
	free(t);
	t = plot_mfu_svg(r, "goal");
	cr_assert(t);
	cr_expect(strstr(t, "GPUs (log scale)") && strstr(t, "model FLOPs utilisation (%)"));
	cr_expect(strstr(t, "MFU 45.00%"), "%s", t);
	free(p);
	p = write_file(d, "mfu.svg", t);
	cr_expect_eq(check_svg(d, p, 2, "simulated plan|Pareto front"), 0);
	free(p);
	free(t);
	free(d);
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

/* ---- html in a browser ------------------------------------------------------- */

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
	static const char *const ids[] = { "summary", "published", "breakdown", "schedule", "memory",
					   "ops", "provenance" };
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
