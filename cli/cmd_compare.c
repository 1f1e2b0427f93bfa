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
 * long one says so (cli/longrun.h); a progress line goes to a terminal,
 * JSON progress lines elsewhere (cli/progress.h). --out writes the
 * records, JSON or CSV by the name's extension, atomically. Interrupted
 * (SIGINT, SIGTERM) while simulating, the scenarios running are killed,
 * no more start, and the ones that finished are compared as above (the
 * table, --out), with a line on stderr; the exit status is then 128 + the
 * signal (util/cleanup.h, cleanup_defer). */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assess.h"
#include "atomic_file.h"
#include "cleanup.h"
#include "human.h"
#include "cli.h"
#include "longrun.h"
#include "options.h"
#include "progress.h"
#include "runner.h"
#include "samefile.h"
#include "scenario.h"
#include "simulate.h"
#include "tidy.h"
#include "xalloc.h"

/* --by: what "best" means (pick_best()). */
enum compare_by { BY_DAYS, BY_COST, BY_ENERGY, BY_ITERATION };
static const char *const by_names[] = { "days", "cost", "energy", "iteration", NULL };

struct compare_opts {
	struct runner_opts ro;
	const char *out;            /* --out FILE.json|FILE.csv; NULL: none */
	int by;                     /* enum compare_by */
};

static const struct opt compare_options[] = {
	OPT_RUNNER(struct compare_opts, ro),
	OPT_CHOICE(0, "by", struct compare_opts, by, "days|cost|energy|iteration", by_names,
		   "what makes the best scenario that fits: the fewest days to\n"
		   "train with failures (default), the least cost or energy to\n"
		   "train, or the shortest iteration; within 0.5 %, the cheaper\n"
		   "(by cost: the faster)"),
	OPT_STRING('o', "out", struct compare_opts, out, "FILE",
		   "also write the table's records to FILE: JSON (ddlsim.compare\n"
		   "1.0) when it ends in .json, CSV (a header, a row per\n"
		   "scenario) when it ends in .csv"),
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
		"family. The first line names the best scenario that fits and why, by --by\n"
		"(the fewest days to train by default; days, cost and energy need every\n"
		"scenario's train_tokens, else the shortest iteration is taken and the line\n"
		"says so; within 0.5 %, the cheaper); one that does not fit has status\n"
		"'oom'. Long texts wrap; numbers read without exponents. A\n"
		"simulation beyond --mem-limit fails with that reason; a scenario whose\n"
		"estimated peak memory exceeds it is refused before any simulation (exit 3).\n",
	.options = compare_options,
	.epilogue =
		"example:\n"
		"  ddlsim compare scenarios/megatron/18b.json scenarios/megatron/39b.json -j 2\n"
		"  ddlsim compare a.json b.json --out cmp.csv\n"
		"  ddlsim compare h100.json gb200.json --by energy\n\n"
		"exit codes: 0 ok, 1 a simulation failed, 2 usage, 3 invalid input,\n"
		"130 interrupted by SIGINT (143 SIGTERM): the scenarios that finished are compared\n",
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
	/* a figure (a real) shows its change; a plan key (a name, a count, a
	 * switch: nodes, tp, global_batch) is marked when it differs */
	bool differ = false, numeric = json_is_real(v0);
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

/* The record key of each figure compare_by ranks by (BY_ITERATION: the row's). */
static const char *const best_key[] = { "wall_days", "cost_usd", "energy_MWh", NULL };

/* by, or BY_ITERATION when a usable scenario lacks by's figure (no train_tokens). */
static int best_by(json_t **rec, const struct result_row *rows, int n, int by)
{
	int eff = by;
	for (int i = 0; i < n && eff != BY_ITERATION; i++) {
		json_t *v = json_object_get(rec[i], best_key[eff]);
		if (result_row_usable(&rows[i]) && !(json_is_number(v) && json_number_value(v) > 0))
			eff = BY_ITERATION;
	}
	return eff;
}

/* The usable scenario with the least figure by eff, ties within 0.5 % settled by the
 * tie figure (*bk, *bt and *tied its figure, tie figure and whether it won a tie);
 * -1 when none is usable. */
static int best_index(json_t **rec, const struct result_row *rows, int n, int eff, double *bk,
		      double *bt, bool *tied)
{
	const char *tie_key = eff == BY_COST ? "wall_days" : "cost_usd";
	int best = -1;
	for (int i = 0; i < n; i++) {
		if (!result_row_usable(&rows[i]))
			continue;
		double key = eff == BY_ITERATION ? rows[i].iteration_s :
			     json_number_value(json_object_get(rec[i], best_key[eff]));
		json_t *tv = json_object_get(rec[i], tie_key);
		double t = json_is_number(tv) ? json_number_value(tv) : 0;
		bool tie = best >= 0 && fabs(key / *bk - 1) <= 0.005;
		if (best < 0 || (tie && t > 0 && *bt > 0 && t < *bt) || (!tie && key < *bk)) {
			*tied = tie;
			best = i, *bk = key, *bt = t;
		}
	}
	return best;
}

/* Why the best is best, into why: its figure, the fallback from by, the tie. */
static void best_why(int by, int eff, double bk, double bt, bool tied, char *why, size_t wn)
{
	static const char *const said[] = { "days to train with failures, the fewest",
					    "to train, the least cost", "MWh to train, the least energy",
					    "s per iteration, the shortest" };
	char k[32], c[32];
	human_number(bk, k, sizeof(k));
	if (eff == BY_COST)
		snprintf(why, wn, "$%s %s", k, said[eff]);
	else if (eff == BY_ITERATION)
		snprintf(why, wn, "%.4f %s", bk, said[eff]);
	else
		snprintf(why, wn, "%s %s", k, said[eff]);
	size_t l = strlen(why);
	if (eff != by)
		l += (size_t)snprintf(why + l, wn - l, "; not every scenario has train_tokens, so not by %s",
				      by_names[by]);
	if (tied)
		l += (size_t)snprintf(why + l, wn - l, eff == BY_COST ? "; as cheap as another within 0.5 %% and "
				      "faster" : "; as good as another within 0.5 %% and cheaper");
	if (eff != BY_COST && bt > 0 && eff != BY_ITERATION)
		snprintf(why + l, wn - l, ", $%s", human_number(bt, c, sizeof(c)));
}

/* The best usable scenario by `by` (enum compare_by): the least of its
 * figure, two within 0.5 % of each other settled by cost (by cost: by
 * days) where both have it. Days, cost and energy come from the records
 * (assess.h: with failures); when a usable scenario lacks the figure (no
 * train_tokens), the shortest iteration decides and why says so. Returns
 * its index, -1 when none is usable. */
static int pick_best(json_t **rec, const struct result_row *rows, int n, int by, char *why, size_t wn)
{
	int eff = best_by(rec, rows, n, by);
	double bk = 0, bt = 0;
	bool tied = false;
	int best = best_index(rec, rows, n, eff, &bk, &bt, &tied);

	if (best < 0)
		return -1;
	best_why(by, eff, bk, bt, tied, why, wn);
	return best;
}

/* The records as CSV (tidy.h's writer, as sweep and plan write theirs): a
 * header of rec[0]'s columns, one row per scenario. */
static char *records_csv(json_t **rec, int n, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	if (!f)
		return NULL;
	int bad = tidy_csv_header(f, rec[0]);
	for (int i = 0; i < n && !bad; i++)
		bad = tidy_csv_row(f, rec[i]);
	fclose(f);
	if (bad) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* --out: the records (and the best) written whole or not at all. */
static int write_out(const char *path, json_t **rec, int n, const char *best, const char *why)
{
	size_t len = 0;
	char *data = NULL;
	size_t pl = strlen(path);
	if (pl > 4 && !strcmp(path + pl - 4, ".csv")) {
		data = records_csv(rec, n, &len);
	} else {
		json_t *arr = json_array();
		for (int i = 0; i < n; i++)
			json_array_append(arr, rec[i]);
		json_t *root = json_pack("{s:s, s:s, s:s?, s:s?, s:o}", "schema", "ddlsim.compare", "schema_version",
					 "1.0", "best_that_fits", best, "best_why", best ? why : NULL, "scenarios", arr);
		data = root ? json_dumps(root, JSON_INDENT(1) | JSON_REAL_PRECISION(17)) : NULL;
		json_decref(root);
		len = data ? strlen(data) : 0;
	}
	int e = data ? atomic_file_write(path, data, len) : -ENOMEM;
	free(data);
	if (e) {
		fprintf(stderr, "ddlsim: error: cannot write '%s': %s\n", path, atomic_file_strerror(-e));
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

struct cctx {
	struct scenario **sc;
	struct result_row *rows;
	bool *finished;
	struct progress *pg;
};

/* Set by the first SIGINT or SIGTERM while the scenarios run
 * (cleanup_defer): the ones that finished are still compared. */
static volatile sig_atomic_t g_stop;

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
	/* a child killed by the interruption did not finish */
	c->finished[i] = !(g_stop && row->status == RESULT_CRASHED);
	if (c->finished[i])
		progress_done(c->pg, i, row->status != RESULT_OK);
}

static void tick(void *ctx, const long *tasks)
{
	struct cctx *c = ctx;
	progress_tasks(c->pg, tasks);
}

/* --out's name (.json or .csv) and whether it may be written. Returns 0
 * or an exit code after saying why. */
static int compare_check_out(const char *out)
{
	size_t l = strlen(out);
	if (!(l > 5 && !strcmp(out + l - 5, ".json")) && !(l > 4 && !strcmp(out + l - 4, ".csv"))) {
		cli_usage_error("--out expects a file ending in .json or .csv, got '%s'", out);
		return EXIT_USAGE;
	}
	return cli_check_output(out);
}

/* --out is none of the n scenarios' inputs (checked before any work).
 * Returns 0 or an exit code after saying why. */
static int compare_check_samefile(struct scenario **sc, int n, const char *out)
{
	struct samefile *sf = samefile_create();
	for (int i = 0; i < n; i++)
		cli_note_scenario(sf, sc[i]);
	samefile_output(sf, "--out", out);
	int e = cli_check_samefile(sf);
	samefile_destroy(sf);
	return e;
}

/* After an interruption by sig: the finished scenarios of c moved first,
 * in their order, and said on stderr. Returns how many finished. */
static int compare_keep_finished(struct cctx *c, int n, int sig, const char *out)
{
	int m = 0;
	for (int i = 0; i < n; i++)
		if (c->finished[i]) {
			struct scenario *t = c->sc[m];
			struct result_row r = c->rows[m];
			c->sc[m] = c->sc[i], c->rows[m] = c->rows[i];
			c->sc[i] = t, c->rows[i] = r;
			m++;
		}
	fprintf(stderr, "ddlsim: interrupted by %s: %d of %d scenarios finished%s\n",
		sig == SIGINT ? "SIGINT" : "SIGTERM", m, n,
		m ? (out ? "; the table and --out hold them" : "; the table holds them") : "");
	return m;
}

/* The n scenarios' records (tidy.h, with the assessment of those that
 * simulated and the memory text); caller frees each and the array. */
static json_t **compare_records(const struct cctx *c, int n)
{
	struct econ_params ep;
	struct goodput_params gp;
	econ_params_init(&ep);
	goodput_params_init(&gp);
	json_t **rec = xcalloc((size_t)n, sizeof(json_t *));
	for (int i = 0; i < n; i++) {
		struct assessment a;
		const struct result_row *r = &c->rows[i];
		if (r->status == RESULT_OK)
			assess_plan(c->sc[i]->in, &r->plan, r->tokens_per_s,
				    r->iteration_s > 0 ? r->mean.compute_s / r->iteration_s : 0, r->group_busy,
				    &ep, &gp, &a);
		rec[i] = json_object();
		json_object_set_new(rec[i], "scenario", json_string(c->sc[i]->meta.name));
		tidy_add_row(rec[i], r, c->sc[i]->in, r->status == RESULT_OK ? &a : NULL);
		json_object_set_new(rec[i], "memory", memory_text(r));
	}
	return rec;
}

/* The best that fits and the table of the n records on stdout, and --out
 * when given. Returns the exit code before any interruption. */
static int compare_report(const struct cctx *c, json_t **rec, int n, const struct compare_opts *o)
{
	/* fit first: the best scenario that fits */
	char why[300];
	int best = pick_best(rec, c->rows, n, o->by, why, sizeof(why));
	if (best >= 0)
		printf("best that fits: %s (%s)\n", c->sc[best]->meta.name, why);
	else
		printf("best that fits: none (no scenario simulated and fits in GPU memory)\n");
	const char *k;
	json_t *v0;
	int failed = 0;
	json_object_foreach(rec[0], k, v0)
		print_key(stdout, k, rec, n);
	for (int i = 0; i < n; i++)
		failed += c->rows[i].status != RESULT_OK;
	int rc = failed ? EXIT_FAIL : EXIT_OK;
	if (o->out && write_out(o->out, rec, n, best >= 0 ? c->sc[best]->meta.name : NULL, why))
		rc = EXIT_FAIL;
	return rc;
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
	if (o.out && (rc = compare_check_out(o.out)))
		goto out_paths;
	struct diag d;
	diag_init(&d, stderr);
	struct cctx c = { .sc = xcalloc((size_t)n, sizeof(*c.sc)), .rows = xcalloc((size_t)n, sizeof(*c.rows)),
			  .finished = xcalloc((size_t)n, sizeof(*c.finished)) };
	int all = n;
	int bad = 0;
	for (int i = 0; i < n; i++)
		bad += cli_check_input_name(paths[i]) || !(c.sc[i] = scenario_load(paths[i], &d));
	rc = EXIT_INPUT;
	if (bad || longrun_admit_scenarios(c.sc, n, ro.mem_limit_bytes))
		goto out;
	if (o.out && (rc = compare_check_samefile(c.sc, n, o.out)))
		goto out;
	rc = EXIT_FAIL;
	c.pg = progress_create("compare", "scenarios", n, ro.jobs, false, true);
	longrun_scenarios(c.sc, n, ro.jobs, c.pg);
	ro.tick = tick;
	ro.stop = &g_stop;
	cleanup_defer(&g_stop);
	int run_rc = runner_run(&ro, n, job, done, &c, &d);
	int sig = g_stop;
	cleanup_defer(NULL);
	progress_destroy(c.pg);
	if (run_rc)
		goto out;
	/* the finished ones first, in their order; the table is theirs */
	if (sig && (n = compare_keep_finished(&c, n, sig, o.out)) == 0) {
		rc = 128 + sig;
		goto out;
	}
	json_t **rec = compare_records(&c, n);
	rc = compare_report(&c, rec, n, &o);
	if (sig)
		rc = 128 + sig;
	for (int i = 0; i < n; i++)
		json_decref(rec[i]);
	free(rec);
out:
	for (int i = 0; i < all; i++)
		scenario_destroy(c.sc[i]);
	free(c.sc);
	free(c.rows);
	free(c.finished);
	diag_finish(&d);
out_paths:
	free(paths);
	return rc;
}
