/* test-plan-html: `ddlsim plan --format html`, the decision page
 * (reports/plan_html.h, cli/cmd_plan.c).
 *
 * The shipped per-token goal (H100, H200 and GB200 NVL72, two plans each:
 * under a second) is planned with --format html and --export 1: plan.html
 * is written beside the other outputs and holds the goal as its file
 * states it, a verdict per GPU type with the safe count the terminal
 * table prints, numbers with units and every range in one unit (python3
 * checks the text), no link to the network and no link to a file that is
 * not there, the date of SOURCE_DATE_EPOCH and the command line; without
 * --format html there is no page and pareto.svg is the same bytes; with
 * --screen-only it is a usage error; and headless Chromium renders the
 * goal, the verdicts and the safe counts (skipped when chromium is
 * absent). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "testutil.h"

#define GOAL "scenarios/goals/llama3-70b-per-token.json"

/* The shipped goal planned into dir/o with extra options; returns the
 * terminal output (caller frees). */
static char *plan_into(const char *dir, const char *extra)
{
	char args[2400], *out = NULL, *err = NULL;
	snprintf(args, sizeof(args), "plan %s --top 2 -j 2 --quiet --out %s/o %s", src_path(GOAL), dir, extra);
	cr_assert_eq(run_ddlsim(args, &out, &err), 0, "%s", err);
	free(err);
	return out;
}

static char *page_of(const char *dir)
{
	char p[1200];
	snprintf(p, sizeof(p), "%s/o/plan.html", dir);
	cr_assert(file_exists(p), "no %s", p);
	return test_file_text(p);
}

/* The safe counts of the terminal's "fewest GPUs" table, one per GPU
 * type in its order, into safe[] (room for max); returns how many. */
static int safe_counts(const char *out, long *safe, int max)
{
	const char *s = strstr(out, "== fewest GPUs that meet the goal");
	cr_assert(s, "%s", out);
	int n = 0;
	for (const char *e; n < max && (e = strstr(s, " GPUs at its slow edge")); s = e + 1) {
		const char *b = e;
		while (b > out && b[-1] >= '0' && b[-1] <= '9')
			b--;
		safe[n++] = strtol(b, NULL, 10);
	}
	return n;
}

/* python3 on the page: numbers with units, each range in one unit, no
 * exponent, nothing fetched from the network, every link a file beside
 * the page. Returns the exit status (what is wrong on stderr). */
static int check_text(const char *dir)
{
	char *py = write_file(dir, "check_page.py",
		"import os, re, sys\n"
		"path = sys.argv[1]\n"
		"s = open(path, encoding='utf-8').read()\n"
		"assert not re.search(r'(src|href)\\s*=\\s*\"?\\s*(https?:|//)', s, re.I), 'a network link'\n"
		"assert '@import' not in s and 'url(' not in s, 'a fetched style'\n"
		"for h in re.findall(r'href=\"([^\"]*)\"', s):\n"
		"    assert os.path.exists(os.path.join(os.path.dirname(path), h)), 'dead link ' + h\n"
		"text = re.sub(r'<[^>]*>', ' ', re.sub(r'<(style|script)>.*?</\\1>', ' ', s, flags=re.S))\n"
		"assert not re.search(r'\\d[eE][+-]?\\d', text), 'an exponent'\n"
		"for want in [r'\\$\\d[\\d.]* M\\b', r'\\d[\\d.]* days', r'\\d[\\d.]* MWh', r'\\d[\\d.]* T tokens']:\n"
		"    assert re.search(want, text), 'no number with its unit: ' + want\n"
		"ranges = re.findall(r'\\$?[\\d.]+( [kMGTPE](?![A-Za-z]))?\\S* – \\$?[\\d.]+( [kMGTPE](?![A-Za-z]))?', text)\n"
		"assert len(ranges) >= 6, ranges\n"
		"for a, b in ranges:\n"
		"    assert a == b, 'a range in two units: %r %r' % (a, b)\n");
	char cmd[4096];
	snprintf(cmd, sizeof(cmd), "python3 %s '%s/o/plan.html' 1>&2", py, dir);
	int st = system(cmd);
	free(py);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 255;
}

/* What the page must say of the shipped goal, in the file or the DOM. */
static void expect_goal_and_verdicts(const char *html, const long *safe, int ntypes)
{
	const char *goal = strstr(html, "<section id=\"goal\">");
	cr_assert(goal, "no goal section");
	static const char *const want[] = {
		"<tr><th>model</th><td>Llama-3 70B (", "<tr><th>tokens to train</th><td>15 T tokens</td>",
		"<tr><th>deadline</th><td>90 days", "<tr><th>budget</th><td>none</td>",
		"<tr><th>global batch</th><td>4 M – 16.78 M tokens</td>", "<td>$2.5 per GPU-hour</td>",
		"<td>H200-SXM5-141GB</td>", "<td>B200 (GB200)</td>", NULL,
	};
	for (int i = 0; want[i]; i++)
		cr_expect(strstr(goal, want[i]), "the goal lacks '%s'", want[i]);
	const char *v = strstr(html, "<section id=\"verdict\">");
	cr_assert(v, "no verdict section");
	cr_assert_eq(ntypes, 3);
	static const char *const gpu[] = { "H100-SXM5-80GB", "H200-SXM5-141GB", "B200 (GB200)" };
	for (int t = 0; t < ntypes; t++) {
		char w[300];
		snprintf(w, sizeof(w), "<div class=\"verdict met\" id=\"verdict-%d\"><h3>%s</h3>", t, gpu[t]);
		const char *d = strstr(v, w);
		cr_expect(d, "no verdict '%s'", w);
		snprintf(w, sizeof(w), "Meets the goal. Safe count: <span class=\"safe\" id=\"safe-%d\">%ld GPUs</span>",
			 t, safe[t]);
		cr_expect(d && strstr(d, w), "verdict %d lacks '%s'", t, w);
	}
}

Test(plan_html, the_page_has_the_goal_the_verdict_and_the_safe_count, .timeout = 120)
{
	char *d = tmp_dir();
	setenv("SOURCE_DATE_EPOCH", "1000000000", 1);
	char *out = plan_into(d, "--format html --export 1");
	long safe[8];
	int n = safe_counts(out, safe, 8);
	char *html = page_of(d);
	expect_goal_and_verdicts(html, safe, n);
	cr_expect(strstr(html, "<tr><th>date (UTC)</th><td>2001-09-09T01:46:40Z</td></tr>"), "no date");
	cr_expect(strstr(html, "<tr><th>producer</th><td>ddlsim " DDLSIM_TEST_VERSION "</td></tr>"));
	cr_expect(strstr(html, "<tr><th>command</th><td>ddlsim plan "), "no command line");
	/* the chart inline, the recommended plan ringed; rank 1 linked to its
	 * exported scenario, rank 2 (not exported) not */
	const char *chart = strstr(html, "<section id=\"pareto\">");
	cr_expect(chart && strstr(chart, "<svg") && strstr(chart, ">recommended (black ring)</text>"));
	cr_expect(strstr(html, "<a href=\"plan-1.json\">plan-1.json</a>"));
	cr_expect_null(strstr(html, "plan-2.json"));
	cr_expect(strstr(html, "<tr class=\"rec\">"), "the recommended plan is not marked in the table");
	cr_expect_eq(check_text(d), 0, "the page's text: see stderr");
	free(html);
	free(out);
	free(d);
}

/* The other outputs do not change: no page without --format html, and
 * the Pareto plot the same bytes either way. */
Test(plan_html, without_format_html_no_page_and_the_same_plot, .timeout = 120)
{
	char *a = tmp_dir(), *b = tmp_dir(), p[1200];
	free(plan_into(a, ""));
	free(plan_into(b, "--format csv,html"));
	snprintf(p, sizeof(p), "%s/o/plan.html", a);
	cr_expect_not(file_exists(p), "plan.html without --format html");
	snprintf(p, sizeof(p), "%s/o/pareto.svg", a);
	char *sa = test_file_text(p);
	snprintf(p, sizeof(p), "%s/o/pareto.svg", b);
	char *sb = test_file_text(p);
	cr_expect(sa[0] && !strcmp(sa, sb), "pareto.svg differs with --format html");
	free(sa);
	free(sb);
	free(a);
	free(b);
}

Test(plan_html, screen_only_is_a_usage_error)
{
	char args[1400], *err = NULL;
	snprintf(args, sizeof(args), "plan %s --screen-only --format html", src_path(GOAL));
	cr_expect_eq(run_ddlsim(args, NULL, &err), 2, "%s", err);
	cr_expect(err && strstr(err, "--format html writes the simulated plans' page, and --screen-only "
				     "simulates none"), "%s", err);
	free(err);
	snprintf(args, sizeof(args), "plan %s --format pdf", src_path(GOAL));
	cr_expect_eq(run_ddlsim(args, NULL, &err), 2, "%s", err);
	free(err);
}

Test(plan_html, chromium_renders_the_decision_page, .timeout = 180)
{
	if (system("command -v chromium >/dev/null 2>&1")) {
		cr_skip("chromium is not installed (Debian package 'chromium'): plan.html not rendered");
		return;
	}
	char *d = tmp_dir(), cmd[8192];
	char *out = plan_into(d, "--format html");
	long safe[8];
	int n = safe_counts(out, safe, 8);
	snprintf(cmd, sizeof(cmd),
		 "cd %s && HOME=%s timeout 120 chromium --headless --no-sandbox --disable-gpu "
		 "--no-first-run --user-data-dir=%s/profile --dump-dom file://%s/o/plan.html >%s/dom.html "
		 "2>/dev/null", d, d, d, d, d);
	cr_assert_eq(system(cmd), 0, "chromium failed");
	snprintf(cmd, sizeof(cmd), "%s/dom.html", d);
	char *dom = test_file_text(cmd);
	cr_expect(strstr(dom, "data-rendered=\"ok\""), "the page's script did not run");
	cr_expect_null(strstr(dom, "data-errors=\"1\""), "a script error");
	expect_goal_and_verdicts(dom, safe, n);
	free(dom);
	free(out);
	free(d);
}
