/* cmd_compare: `ddlsim compare A.json B.json ... [options]`: scenarios
 * side by side. Each scenario is checked, then simulated through the runner; the
 * table has one column per scenario and one line per plan key or figure
 * (the record of reports/tidy.h, then "memory": whether it fits and by how
 * much), the plan keys that differ marked '*', each figure with its change
 * against the first scenario in percent. Fit first: the line above the
 * table names the best scenario that fits in GPU memory (the shortest
 * time to train, else the shortest iteration); one that does not fit has
 * status "oom". A cell is never cut: a longer text (a name, the reason
 * folding is off) wraps onto the lines below, at a '-', '_', '/', ',' or
 * space where there is one; numbers read without exponents (util/human.h:
 * 1.5e+13 -> 15 T). Before simulating, each scenario is estimated and a
 * long one says so (cli/longrun.h); a progress line goes to a terminal
 * (cli/progress.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assess.h"
#include "human.h"
#include "cli.h"
#include "longrun.h"
#include "options.h"
#include "progress.h"
#include "runner.h"
#include "scenario.h"
#include "simulate.h"
#include "tidy.h"
#include "xalloc.h"

struct compare_opts {
	struct runner_opts ro;
};

static const struct opt compare_options[] = {
	OPT_RUNNER(struct compare_opts, ro),
	OPT_END(),
};

const struct opt_cmd cmd_compare_opts = {
	.name = "compare",
	.summary = "simulate scenarios and show them side by side with differences",
	.args = "SCENARIO SCENARIO...",
	.description =
		"Simulates each scenario and prints them side by side: the plan (keys that\n"
		"differ marked '*'), then throughput, memory, time and cost to train (with\n"
		"the default goodput and economics of models/goodput.h and economics.h),\n"
		"each with its change against the first scenario, whether each fits in GPU\n"
		"memory, why folding is off, and the error band of its nearest validation\n"
		"family. The first line names the best scenario that fits; one that does not\n"
		"fit has status 'oom'. Long texts wrap; numbers read without exponents. A\n"
		"simulation beyond --mem-limit fails with that reason; a scenario whose\n"
		"estimated peak memory exceeds it is refused before any simulation (exit 3).\n",
	.options = compare_options,
	.epilogue =
		"example:\n"
		"  ddlsim compare scenarios/megatron/18b.json scenarios/megatron/39b.json -j 2\n\n"
		"exit codes: 0 ok, 1 a simulation failed, 2 usage, 3 invalid input\n",
	.size = sizeof(struct compare_opts),
};

#define KEY_W 24               /* the key column */
#define CELL_W 26              /* a scenario's column */

/* The first line of text that fits in CELL_W (at most CELL_W bytes, cut
 * after the last separator past a third of the width where there is one,
 * before it when it is a space, never inside a UTF-8 character): its
 * length. */
static size_t wrap_len(const char *text)
{
	size_t n = strlen(text);
	if (n <= CELL_W)
		return n;
	size_t cut = CELL_W;
	while (cut > 0 && ((unsigned char)text[cut] & 0xC0) == 0x80)
		cut--;
	for (size_t k = cut; k > CELL_W / 3; k--)
		if (strchr("-_/, ", text[k - 1]))
			return text[k - 1] == ' ' ? k - 1 : k;
	return cut;
}

/* A cell's text: a string whole, an integer exact, a real without an
 * exponent (and, from the second column, its change against the first). */
static char *cell_text(const json_t *v, const json_t *v0, bool first)
{
	char buf[64], h[32];
	if (json_is_string(v))
		return xstrdup(json_string_value(v));
	if (json_is_integer(v))
		return xasprintf("%lld", (long long)json_integer_value(v));
	if (json_is_real(v)) {
		double x = json_real_value(v), x0 = json_number_value(v0);
		human_number(x, h, sizeof(h));
		if (!first && json_is_number(v0) && x0 != 0 && fabs(x / x0 - 1) >= 0.0005)
			snprintf(buf, sizeof(buf), "%s (%+.1f%%)", h, 100 * (x / x0 - 1));
		else
			snprintf(buf, sizeof(buf), "%s", h);
		return xstrdup(buf);
	}
	if (json_is_boolean(v))
		return xstrdup(json_is_true(v) ? "true" : "false");
	return xstrdup("-");
}

/* One key's line (and the lines its longer cells wrap onto). */
static void print_key(FILE *f, const char *k, json_t **rec, int n)
{
	json_t *v0 = json_object_get(rec[0], k);
	bool differ = false, numeric = json_is_number(v0);
	for (int i = 1; i < n; i++)
		differ |= !json_equal(v0, json_object_get(rec[i], k));
	char **cell = xcalloc((size_t)n, sizeof(*cell));
	const char **left = xcalloc((size_t)n, sizeof(*left));
	for (int i = 0; i < n; i++)
		left[i] = cell[i] = cell_text(json_object_get(rec[i], k), v0, i == 0);
	size_t cap = (size_t)(KEY_W + 4) + (size_t)n * (4 * CELL_W + 2);
	char *line = xcalloc(cap, 1);
	for (bool first = true, more = true; more; first = false) {
		int len = snprintf(line, cap, "%c %-*s", first && differ && !numeric ? '*' : ' ', KEY_W, first ? k : "");
		more = false;
		for (int i = 0; i < n; i++) {
			size_t w = wrap_len(left[i]);
			/* pad by characters, not bytes (a UTF-8 text) */
			int chars = 0;
			for (size_t b = 0; b < w; b++)
				chars += ((unsigned char)left[i][b] & 0xC0) != 0x80;
			len += snprintf(line + len, cap - (size_t)len, " %.*s%*s", (int)w, left[i], CELL_W - chars, "");
			left[i] += w;
			while (*left[i] == ' ')
				left[i]++;
			more |= *left[i] != 0;
		}
		while (len > 0 && line[len - 1] == ' ')
			line[--len] = 0;
		fprintf(f, "%s\n", line);
	}
	free(line);
	for (int i = 0; i < n; i++)
		free(cell[i]);
	free(cell);
	free(left);
}

/* "memory": whether the plan fits, with its need and the GB missing. */
static json_t *memory_text(const struct result_row *r)
{
	if (r->status != RESULT_OK)
		return json_string("-");
	char buf[160];
	if (r->fits)
		snprintf(buf, sizeof(buf), "fits: %.1f of %.1f GB", r->mem_worst_bytes / 1e9, r->mem_capacity_bytes / 1e9);
	else
		snprintf(buf, sizeof(buf), "does not fit: %.1f of %.1f GB, %.1f GB missing", r->mem_worst_bytes / 1e9,
			 r->mem_capacity_bytes / 1e9, r->mem_short_bytes / 1e9);
	return json_string(buf);
}

struct cctx {
	struct scenario **sc;
	struct result_row *rows;
	struct progress *pg;
};

static void job(void *ctx, int i, struct result_row *row)
{
	struct cctx *c = ctx;
	simulate_row(c->sc[i]->in, &c->sc[i]->plan, row);
}

static void done(void *ctx, int i, const struct result_row *row)
{
	struct cctx *c = ctx;
	c->rows[i] = *row;
	c->rows[i].plan = c->sc[i]->plan;
	progress_done(c->pg, i, row->status != RESULT_OK);
}

static void tick(void *ctx, const long *tasks)
{
	struct cctx *c = ctx;
	progress_tasks(c->pg, tasks);
}

int cmd_compare(int argc, char **argv)
{
	struct compare_opts o = { .ro = { .jobs = 1 } };
	const char **paths = xcalloc((size_t)argc, sizeof(char *));
	int n = 0, rc = EXIT_USAGE;
	if (opt_parse(&cmd_compare_opts, argc, argv, &o, paths, &n))
		goto out_paths;
	struct runner_opts ro = o.ro;
	if (n < 2) {
		cli_usage_error("'compare' needs at least two scenario files");
		goto out_paths;
	}
	struct diag d;
	diag_init(&d, stderr);
	struct cctx c = { .sc = xcalloc((size_t)n, sizeof(*c.sc)), .rows = xcalloc((size_t)n, sizeof(*c.rows)) };
	int bad = 0;
	for (int i = 0; i < n; i++)
		bad += cli_check_input_name(paths[i]) || !(c.sc[i] = scenario_load(paths[i], &d));
	rc = EXIT_INPUT;
	if (bad || longrun_admit_scenarios(c.sc, n, ro.mem_limit_bytes))
		goto out;
	rc = EXIT_FAIL;
	c.pg = progress_create("compare", "scenarios", n, ro.jobs, false, false);
	longrun_scenarios(c.sc, n, ro.jobs, c.pg);
	ro.tick = tick;
	int run_rc = runner_run(&ro, n, job, done, &c, &d);
	progress_destroy(c.pg);
	if (run_rc)
		goto out;
	struct econ_params ep;
	struct goodput_params gp;
	econ_params_init(&ep);
	goodput_params_init(&gp);
	json_t **rec = xcalloc((size_t)n, sizeof(json_t *));
	for (int i = 0; i < n; i++) {
		struct assessment a;
		const struct result_row *r = &c.rows[i];
		if (r->status == RESULT_OK)
			assess_plan(c.sc[i]->in, &r->plan, r->tokens_per_s,
				    r->iteration_s > 0 ? r->mean.compute_s / r->iteration_s : 0, &ep, &gp, &a);
		rec[i] = json_object();
		json_object_set_new(rec[i], "scenario", json_string(c.sc[i]->meta.name));
		tidy_add_row(rec[i], r, c.sc[i]->in, r->status == RESULT_OK ? &a : NULL);
		json_object_set_new(rec[i], "memory", memory_text(r));
	}
	/* fit first: the best scenario that fits */
	int best = -1;
	double best_key = 0;
	for (int i = 0; i < n; i++) {
		const struct result_row *r = &c.rows[i];
		if (!result_row_usable(r))
			continue;
		json_t *wd = json_object_get(rec[i], "wall_days");
		double key = json_is_number(wd) && json_number_value(wd) > 0 ? json_number_value(wd) * 86400 : r->iteration_s;
		if (best < 0 || key < best_key)
			best = i, best_key = key;
	}
	if (best >= 0)
		printf("best that fits: %s\n", c.sc[best]->meta.name);
	else
		printf("best that fits: none (no scenario simulated and fits in GPU memory)\n");
	const char *k;
	json_t *v0;
	int failed = 0;
	json_object_foreach(rec[0], k, v0)
		print_key(stdout, k, rec, n);
	for (int i = 0; i < n; i++) {
		failed += c.rows[i].status != RESULT_OK;
		json_decref(rec[i]);
	}
	free(rec);
	rc = failed ? EXIT_FAIL : EXIT_OK;
out:
	for (int i = 0; i < n; i++)
		scenario_destroy(c.sc[i]);
	free(c.sc);
	free(c.rows);
	diag_finish(&d);
out_paths:
	free(paths);
	return rc;
}
