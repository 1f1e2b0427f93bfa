/* cmd_plan: `ddlsim plan GOAL.json [options]`.
 *
 * Screens every plan of every cluster option in-process (sim/search.h),
 * simulates through the runner the best `top` of each option and the
 * core: the best SEARCH_PER_COUNT of each node count and the carried plan
 * families (carry()). The fewest GPUs (and so their safe count) come from
 * the core alone, which does not depend on --top: --top only adds plans
 * to the tables. It prints per option the simulated plans ranked by
 * wall time to train, the Pareto front of time and cost over all options,
 * the fewest GPUs of each GPU type that meet the deadline (and budget),
 * and how the screen's ranking compares with the engine's (the ranking,
 * the front, the fewest GPUs and the correlation: sim/study.h). Fit
 * first: the best plan that fits opens the output, a simulated plan that
 * does not fit in GPU memory ("oom") is never ranked nor on the front, and
 * --show-rejected lists those apart with the GB each misses. Every
 * simulated plan goes to DIR/plans.csv and DIR/plans.jsonl, and the
 * plots (reports/plot.h) to DIR/pareto.svg and DIR/mfu-gpus.svg; with
 * --format html, the decision page DIR/plan.html (reports/plan_html.h)
 * too, published with them. Before
 * simulating, the finalists are estimated and a long search says so
 * (cli/longrun.h); a progress line goes to a terminal, a JSON progress
 * line per plan to stderr otherwise (cli/progress.h). */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "assess.h"
#include "band.h"
#include "plot.h"
#include "cli.h"
#include "ddlsim-config.h"
#include "human.h"
#include "longrun.h"
#include "options.h"
#include "plan_html.h"
#include "progress.h"
#include "reasons.h"
#include "report.h"
#include "runner.h"
#include "samefile.h"
#include "plan_export.h"
#include "search.h"
#include "simulate.h"
#include "study.h"
#include "tidy.h"
#include "xalloc.h"

#include "plan-private.h"

static void job(void *ctx, int i, struct result_row *row)
{
	struct pctx *p = ctx;
	struct fin *f = &p->f[p->base + i];
	if (f->admit[0]) {   /* admission (admit()): failed with the estimate, never started */
		result_row_fail(row, RESULT_FAILED, f->admit);
		row->plan = f->c.plan;
		return;
	}
	simulate_row(p->g->clusters[f->c.cluster].in, &f->c.plan, row);
}

/* Admission, in this process before the runner forks (a child under a
 * small --mem-limit could not even estimate): finalists from on whose
 * estimated memory is over the limit get the reason, and fail with it. */
static void admit(struct pctx *p, int from)
{
	for (int i = from; i < p->n; i++) {
		struct fin *f = &p->f[i];
		f->admit[0] = 0;
		if (!longrun_over_limit(p->g->clusters[f->c.cluster].in, &f->c.plan, p->mem_limit_bytes,
					p->mem_limit_given, f->admit, sizeof(f->admit)))
			f->admit[0] = 0;
	}
}

static void done(void *ctx, int i, const struct result_row *row)
{
	struct pctx *p = ctx;
	struct fin *f = &p->f[p->base + i];
	f->row = *row;
	f->row.plan = f->c.plan;
	f->ok = row->status == RESULT_OK;
	if (f->ok) {
		double busy = row->iteration_s > 0 ? row->mean.compute_s / row->iteration_s : 0;
		const struct goal_cluster *cl = &p->g->clusters[f->c.cluster];
		assess_plan(cl->in, &f->c.plan, row->tokens_per_s, busy, row->group_busy, &cl->econ,
			    &p->g->goodput, &f->a);
	}
	p->done++;
	progress_done(p->pg, i, !f->ok);
}

static void tick(void *ctx, const long *tasks)
{
	struct pctx *p = ctx;
	progress_tasks(p->pg, tasks);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}



/* The error band of a finalist's plan (sim/band.h). */

static int cmp_fin(const void *a, const void *b)
{
	const struct fin *x = a, *y = b;
	return study_compare(&x->pt, &y->pt);
}

/* --format's names, in bit order: the first three are always written. */
static const char *const format_names[] = { "csv", "jsonl", "svg", "html", NULL };

static const struct opt plan_options[] = {
	OPT_INT(0, "top", struct plan_opts, top, "N", 1, 1000,
		"plans simulated per cluster option (default: the goal's, 20),\n"
		"added to the tables: the fewest GPUs come from the screen's best\n"
		"10 of each node count and the carried plan families alone, so\n"
		"--top never moves them"),
	OPT_STRING('o', "out", struct plan_opts, out, "DIR",
		   "write DIR/plans.csv, DIR/plans.jsonl and the plots DIR/pareto.svg\n"
		   "(time vs cost, Pareto front) and DIR/mfu-gpus.svg\n"
		   "(default out/<goal name>)"),
	OPT_BITS(0, "format", struct plan_opts, formats, "LIST", format_names,
		 "comma-separated: csv, jsonl and svg (plans.csv, plans.jsonl,\n"
		 "pareto.svg, mfu-gpus.svg: always written), html (DIR/plan.html,\n"
		 "the decision page: the goal, the verdict and safe GPU count\n"
		 "per GPU type, the time-cost chart, the top plans; self-contained)"),
	OPT_LIST(0, "export", struct plan_opts, exports, "N[,N...]",
		 "write DIR/plan-N.json: a scenario (ddlsim.scenario 1.0) that\n"
		 "reproduces the plan ranked N (the rank column of the tables and\n"
		 "of plans.csv) under `ddlsim run`; repeatable, or N,N,..."),
	OPT_FLAG(0, "screen-only", struct plan_opts, screen_only,
		 "screen and print the estimate's ranking, simulate nothing"),
	OPT_FLAG(0, "show-rejected", struct plan_opts, show_rejected,
		 "list every reason plan_check rejected plans for (with a count\n"
		 "and an example plan; without it, the 3 most common), and the\n"
		 "simulated plans that do not fit in GPU memory (status 'oom',\n"
		 "never ranked nor on the front) apart, with the GB missing"),
	OPT_FLAG('q', "quiet", struct plan_opts, quiet,
		 "only the tables: no progress line (on a terminal), no JSON\n"
		 "progress lines on stderr (otherwise)"),
	OPT_RUNNER_JOBS(struct plan_opts, ro, "simulations at once (default 2)"),
	OPT_END(),
};

const struct opt_cmd cmd_plan_opts = {
	.name = "plan",
	.summary = "search plans and clusters for a training goal (time, cost, energy)",
	.args = "GOAL.json",
	.description =
		"Searches parallel plans and cluster sizes for a training goal (schema\n"
		"ddlsim.goal: model, tokens, sequence length, deadline and/or budget, global\n"
		"batch range, candidate clusters with node counts and prices; sim/search.h).\n"
		"Every plan is checked (plan_check, memory anatomy) and estimated in-process;\n"
		"the best N per cluster option and the best 10 per node count are simulated,\n"
		"then the engine's best plan families are carried to the option's other node\n"
		"counts until no new best family appears; the fewest GPUs per GPU type come\n"
		"from these per-count and carried plans, never from --top's.\n"
		"Prints first the best plan that fits in GPU memory, then the simulated plans\n"
		"that fit per option ranked by wall time to train (failures\n"
		"and checkpoints included), cost, $ per million tokens and energy; the Pareto\n"
		"front of time and cost; the fewest GPUs per GPU type that meet the deadline;\n"
		"and the screen's rank correlation with the engine. A plan whose estimated\n"
		"memory (sim/estimate.h) is above --mem-limit fails with the estimate, never\n"
		"started; one over --timeout is a timeout row.\n",
	.options = plan_options,
	.epilogue =
		"examples:\n"
		"  ddlsim plan scenarios/goals/llama3-70b-15t-90d.json\n"
		"  ddlsim plan scenarios/goals/llama3-70b-per-token.json --top 5 -j 2\n"
		"  ddlsim plan scenarios/goals/llama3-70b-per-token.json --format html\n"
		"  ddlsim plan scenarios/goals/llama3-70b-15t-90d.json --export 1 -o out/p\n"
		"  ddlsim run out/p/plan-1.json\n\n"
		"exit codes: 0 ok, 1 a simulation or output failed, 2 usage (also an --export\n"
		"rank beyond the ranked plans: a plan that failed or does not fit in GPU memory\n"
		"has no rank and is not exported), 3 invalid goal file, or an output that is an\n"
		"input (the goal, its model or a topology)\n",
	.size = sizeof(struct plan_opts),
};

/* The options into o and the one goal file into o->file. Returns 0, or
 * EXIT_USAGE after saying what is wrong. */
static int parse_args(int argc, char **argv, struct plan_opts *o)
{
	const char **pos = xcalloc((size_t)argc, sizeof(*pos));
	int n = 0, rc = opt_parse(&cmd_plan_opts, argc, argv, o, pos, &n);
	if (!rc && n == 0)
		rc = cli_usage_error("'plan' needs a goal file");
	else if (!rc && n > 1)
		rc = cli_usage_error("'plan' takes one goal file");
	o->file = n ? pos[0] : NULL;
	free(pos);
	if (!rc && o->exports.n && o->screen_only)
		rc = cli_usage_error("--export writes a simulated plan, and --screen-only simulates none");
	if (!rc && (o->formats & PLAN_FORMAT_HTML) && o->screen_only)
		rc = cli_usage_error("--format html writes the simulated plans' page, and --screen-only "
				     "simulates none");
	if (!rc)
		rc = plan_export_parse(&o->exports, o->export_rank, &o->nexport);
	return rc;
}

/* The plans plan_check rejected, by reason, most common first: the first
 * PLAN_REASONS_SHOWN, or with all every reason and an example plan. */
#define PLAN_REASONS_SHOWN 3
static void print_reasons(struct reasons *why, bool all)
{
	int ng = reasons_groups(why);
	for (int i = 0; i < ng && (all || i < PLAN_REASONS_SHOWN); i++) {
		const struct reason *r = reasons_get(why, i);
		printf("  %ld rejected: %s\n", r->count, r->msg);
		if (all && r->example[0])
			printf("      e.g. %s\n", r->example);
	}
	if (!all && ng > PLAN_REASONS_SHOWN)
		printf("  (%d more reasons: --show-rejected lists each with an example plan)\n", ng - PLAN_REASONS_SHOWN);
}

/* Resolve cluster ci's "nodes": "auto" (search_auto_nodes) and say what
 * the search found and which node counts go on. */
static void auto_nodes(struct pctx *p, int ci)
{
	struct goal_cluster *cl = &p->g->clusters[ci];
	struct search_auto sa;
	search_auto_nodes(p->g, ci, &sa);
	long G = inputs_topology(cl->in)->gpus_per_node;
	printf("\n%s: nodes auto: %d node counts screened (%ld plans, %.2f s)", cl->name, sa.probes,
	       sa.st.enumerated, sa.st.screen_s);
	if (sa.boundary)
		printf(": the screen meets the goal from %ld nodes (%ld GPUs) on\n", sa.boundary,
		       sa.boundary * G);
	else
		printf(": no count up to the topology's %ld nodes meets the goal\n", sa.cap);
	printf("  simulating around it: nodes");
	for (int i = 0; i < cl->nnodes; i++)
		printf("%s%ld", i ? ", " : " ", cl->nodes[i]);
	printf("\n");
}

/* Screen cluster ci at its node counts, print what the screen found, and
 * append as finalists the best `top` of it and the best SEARCH_PER_COUNT
 * of each node count (the core: the plans the fewest GPUs come from); the
 * screen's counts added to *st. */
static void screen_cluster(struct pctx *p, int ci, struct search_stats *st)
{
	long n;
	struct search_stats s1 = { .why = reasons_create() };
	struct candidate *c = search_screen(p->g, ci, &n, &s1);
	st->enumerated += s1.enumerated, st->invalid += s1.invalid, st->no_fit += s1.no_fit;
	st->screened += s1.screened, st->screen_s += s1.screen_s;
	printf("\n%s: %ld plans enumerated, %ld rejected by plan_check, %ld do not fit in memory, "
	       "%ld screened in %.2f s (%.0f plans/s)\n", p->g->clusters[ci].name, s1.enumerated,
	       s1.invalid, s1.no_fit, s1.screened, s1.screen_s, s1.enumerated / fmax(s1.screen_s, 1e-9));
	print_reasons(s1.why, p->show_rejected);
	/* node counts are at most SEARCH_MAX_NODES (goal_load): a counter
	 * each, so finding the best of each node count is linear */
	unsigned char *seen = xcalloc(SEARCH_MAX_NODES + 1, 1);
	for (long k = 0; k < n; k++) {
		int nodes = c[k].plan.nodes;
		bool core = seen[nodes] < SEARCH_PER_COUNT;
		seen[nodes] += core;
		if (k >= p->g->top && !core)
			continue;
		XGROW(p->f, p->cap, (size_t)p->n + 1);
		memset(&p->f[p->n], 0, sizeof(p->f[p->n]));
		p->f[p->n].core = core;
		p->f[p->n++].c = c[k];
	}
	free(seen);
	if (n == 0)
		printf("  %s\n", s1.no_fit ? "no plan fits: try more nodes, a smaller micro-batch or recompute"
		       : s1.invalid ? "no plan passes plan_check: see the reasons above"
		       : "no plan enumerated: no tp x pp searched fits (tp at most the GPUs of a node, "
			 "tp x pp dividing the GPUs), or no global batch in the range is a multiple of "
			 "dp x micro-batch");
	reasons_destroy(s1.why);
	free(c);
}

/* Screen every cluster option (resolving "auto" node counts first). */
static void screen(struct pctx *p)
{
	struct search_stats st = { 0 };
	for (int ci = 0; ci < p->g->nclusters; ci++) {
		if (p->g->clusters[ci].auto_nodes)
			auto_nodes(p, ci);
		screen_cluster(p, ci, &st);
	}
	printf("\nscreen: %ld plans in %.2f s, %.0f plans/s (plan_check, memory anatomy, estimate)\n",
	       st.enumerated, st.screen_s, st.enumerated / fmax(st.screen_s, 1e-9));
}

/* Whether finalist f meets the goal in the engine; safe: even with its
 * time and cost at its error band's slow edge (plan_print_safe). */
static bool fin_meets(const struct goal *g, const struct fin *f, bool safe)
{
	if (!f->ok || !f->row.fits)
		return false;
	double k = safe ? 1 + plan_band_of(g, f).hi : 1;
	return f->a.gp.wall_s * k <= g->deadline_s && (g->budget_usd <= 0 || f->a.econ.cost_usd * k <= g->budget_usd);
}

/* The fewest simulated nodes of cluster ci with a core plan that meets the goal
 * (0: none), *most the most simulated. */
static long fewest_meeting(const struct pctx *p, int ci, bool safe, long *most)
{
	long hi = 0;
	*most = 0;
	for (int i = 0; i < p->n; i++) {
		const struct fin *f = &p->f[i];
		if (f->c.cluster != ci || !f->ok || !f->core)
			continue;
		long nodes = f->c.plan.nodes;
		*most = nodes > *most ? nodes : *most;
		if (fin_meets(p->g, f, safe) && (!hi || nodes < hi))
			hi = nodes;
	}
	return hi;
}

/* The most simulated nodes of cluster ci with a core plan below hi (any, when hi is 0). */
static long most_below(const struct pctx *p, int ci, long hi)
{
	long lo = 0;
	for (int i = 0; i < p->n; i++) {
		const struct fin *f = &p->f[i];
		long nodes = f->c.plan.nodes;
		if (f->c.cluster == ci && f->ok && f->core && (!hi || nodes < hi) && nodes > lo)
			lo = nodes;
	}
	return lo;
}

/* "auto" node counts, the engine's turn. The screen's boundary is its own
 * estimate's; the engine decides: hi is the fewest simulated nodes of
 * cluster ci with a core plan (whatever --top) that meets the goal, lo the
 * most simulated nodes below it. While they are more than one apart, the count between them is
 * screened and its best plans simulated (bisection on the engine, taking
 * the engine's best plan as monotone in the nodes); with no simulated
 * count meeting it, twice the largest, up to the topology's capacity.
 * With safe, the same for the goal met at the error band's slow edge: the
 * safe count's own bisection, after the fewest GPUs'. Returns the next
 * node count to screen and simulate, 0 when done. */
static long next_auto_count(const struct pctx *p, int ci, bool safe)
{
	long most;
	long hi = fewest_meeting(p, ci, safe, &most);
	long lo = most_below(p, ci, hi);
	if (!hi) {
		long cap = search_node_cap(&p->g->clusters[ci]);
		return most > 0 && most < cap ? (2 * most < cap ? 2 * most : cap) : 0;
	}
	return hi - lo > 1 ? lo + (hi - lo) / 2 : 0;
}

/* Simulate the finalists from p->base on. Returns 0, or -1 after
 * reporting. */
static int run_batch(struct pctx *p, const struct plan_opts *o, struct diag *d)
{
	int rc = 0;
	if (p->n > p->base) {
		fflush(stdout);
		p->pg = progress_create("plan", "plans", p->n - p->base, o->ro.jobs, o->quiet, true);
		admit(p, p->base);
		rc = runner_run(&o->ro, p->n - p->base, job, done, p, d);
		progress_destroy(p->pg);
		p->pg = NULL;
	}
	p->base = 0;
	return rc;
}

/* Screen and simulate cluster ci at nodes alone, appending its finalists.
 * Returns 0, or -1 after reporting. */
static int try_count(struct pctx *p, const struct plan_opts *o, int ci, long nodes, struct diag *d)
{
	struct goal_cluster *cl = &p->g->clusters[ci];
	long *keep = cl->nodes;
	int keepn = cl->nnodes;
	struct search_stats st = { 0 };
	cl->nodes = &nodes;
	cl->nnodes = 1;
	p->base = p->n;
	printf("\n%s: nodes auto: the engine's turn, %ld nodes (%ld GPUs)\n", cl->name, nodes,
	       nodes * inputs_topology(cl->in)->gpus_per_node);
	screen_cluster(p, ci, &st);
	cl->nodes = keep;
	cl->nnodes = keepn;
	return run_batch(p, o, d);
}

/* The finalists simulated for --top alone (not core). */
static int extras(const struct pctx *p)
{
	int n = 0;
	for (int i = 0; i < p->n; i++)
		n += !p->f[i].core;
	return n;
}

/* The carry's rounds at most: a round simulates the families the engine
 * found best at the counts they were not simulated at; a new best family
 * starts another round, and two or three usually reach the fixed point. */
#define CARRY_MAX_ROUNDS 4

/* Whether core finalist i is faster to train than j (ties: cheaper, then
 * the plan's text, so the order is not that of p->f, which --top moves). */
static bool faster(const struct pctx *p, int i, int j)
{
	const struct fin *a = &p->f[i], *b = &p->f[j];
	if (a->a.gp.wall_s != b->a.gp.wall_s)
		return a->a.gp.wall_s < b->a.gp.wall_s;
	if (a->a.econ.cost_usd != b->a.econ.cost_usd)
		return a->a.econ.cost_usd < b->a.econ.cost_usd;
	char x[160], y[160];
	plan_describe(&a->c.plan, x, sizeof(x));
	plan_describe(&b->c.plan, y, sizeof(y));
	return strcmp(x, y) < 0;
}

/* The core finalist of cluster ci at nodes (0: any) that simulated, fits
 * and is the fastest to train; -1 when none. */
static int best_core(const struct pctx *p, int ci, long nodes)
{
	int best = -1;
	for (int i = 0; i < p->n; i++) {
		const struct fin *f = &p->f[i];
		if (f->c.cluster != ci || !f->core || !f->ok || !f->row.fits || (nodes && f->c.plan.nodes != nodes))
			continue;
		if (best < 0 || faster(p, i, best))
			best = i;
	}
	return best;
}

/* The finalist of cluster ci at nodes of fam's family (core: a core one;
 * else any with fam's global batch too); -1 when none. */
static int find_family(const struct pctx *p, int ci, long nodes, const struct plan *fam, bool core)
{
	for (int i = 0; i < p->n; i++) {
		const struct fin *f = &p->f[i];
		if (f->c.cluster == ci && f->c.plan.nodes == nodes && f->core >= core &&
		    search_same_family(&f->c.plan, fam) &&
		    (core || f->c.plan.training.global_batch == fam->training.global_batch))
			return i;
	}
	return -1;
}

/* The distinct node counts of cluster ci's finalists into *counts (caller
 * frees); returns how many. */
static int counts_of(const struct pctx *p, int ci, long **counts)
{
	int n = 0;
	*counts = xcalloc((size_t)p->n + 1, sizeof(**counts));
	for (int i = 0; i < p->n; i++) {
		long nodes = p->f[i].c.plan.nodes;
		bool seen = p->f[i].c.cluster != ci;
		for (int k = 0; k < n && !seen; k++)
			seen = (*counts)[k] == nodes;
		if (!seen)
			(*counts)[n++] = nodes;
	}
	return n;
}

/* Family pl of cluster ci at every node count counts[0..nc) where it has not been
 * simulated: its best global batch by the screen, added to p->f as a core plan unless
 * simulated for --top (that row marked core). Returns how many were. */
static int carry_family(struct pctx *p, int ci, const long *counts, int nc, const struct plan *pl,
			struct search_stats *st)
{
	int reused = 0;
	for (int j = 0; j < nc; j++) {
		struct candidate cd;
		if (find_family(p, ci, counts[j], pl, true) >= 0 ||
		    !search_screen_family(p->g, ci, counts[j], pl, &cd, st))
			continue;
		int same = find_family(p, ci, counts[j], &cd.plan, false);
		if (same >= 0) {   /* simulated for --top: the same plan, the same row */
			p->f[same].core = true;
			reused++;
			continue;
		}
		XGROW(p->f, p->cap, (size_t)p->n + 1);
		memset(&p->f[p->n], 0, sizeof(p->f[p->n]));
		p->f[p->n].core = true;
		p->f[p->n++].c = cd;
	}
	return reused;
}

/* The carry's line: families, node counts, rounds, plans simulated and reused. */
static void say_carry(const char *cluster, int nfam, int nc, int rounds, bool fixed, int added,
		      int reused, double screen_s)
{
	printf("\n%s: carry: %d plan famil%s of the engine's best carried over %d node count%s in %d round%s%s: "
	       "%d more plans simulated, %d already were (screened in %.2f s)\n", cluster, nfam,
	       nfam == 1 ? "y" : "ies", nc, nc == 1 ? "" : "s", rounds, rounds == 1 ? "" : "s",
	       fixed ? "" : " (the most: no fixed point)", added, reused, screen_s);
}

/* The carry: the screen ranks plans poorly against the engine (a
 * Spearman rho of 0.7 to 0.8), so the engine's best plan family at one
 * node count may not be among the screen's best at the next. The family
 * (search_same_family) of the engine's best core plan of each node count
 * of cluster ci, and of the whole option, is simulated at every node
 * count of the option where it passes plan_check() and fits and has not
 * been (its best global batch by the screen: search_screen_family), as a
 * core plan; a new best family starts another round, up to
 * CARRY_MAX_ROUNDS. Seeded from core plans only, so the core, and the
 * fewest GPUs chosen from it, does not depend on --top. Returns 0, or -1
 * after reporting. */
static int carry(struct pctx *p, const struct plan_opts *o, int ci, struct diag *d)
{
	struct plan *fam = NULL;
	size_t capf = 0;
	int nfam = 0, rounds = 0, added = 0, reused = 0, rc = 0, nc = 0;
	long *counts = NULL;
	struct search_stats st = { 0 };
	bool fixed = false;
	while (!rc && !fixed && rounds < CARRY_MAX_ROUNDS) {
		free(counts);
		nc = counts_of(p, ci, &counts);
		p->base = p->n;
		fixed = true;
		for (int k = -1; k < nc; k++) {
			int b = best_core(p, ci, k < 0 ? 0 : counts[k]);
			bool known = b < 0;
			for (int j = 0; j < nfam && !known; j++)
				known = search_same_family(&fam[j], &p->f[b].c.plan);
			if (known)
				continue;
			fixed = false;
			XGROW(fam, capf, (size_t)nfam + 1);
			fam[nfam] = p->f[b].c.plan;   /* p->f may move below */
			reused += carry_family(p, ci, counts, nc, &fam[nfam++], &st);
		}
		if (fixed)
			break;
		rounds++;
		added += p->n - p->base;
		rc = run_batch(p, o, d);
	}
	p->carried += added, p->carry_reused += reused;
	if (added || reused || !fixed)
		say_carry(p->g->clusters[ci].name, nfam, nc, rounds, fixed, added, reused, st.screen_s);
	free(counts);
	free(fam);
	p->base = 0;
	return rc;
}

static void print_screen_only(const struct pctx *p)
{
	for (int i = 0; i < p->n; i++) {
		char pt[160];
		plan_describe(&p->f[i].c.plan, pt, sizeof(pt));
		char usd[32];
		printf("  %-16s %5ld GPUs  %-52s est %.1f d, $%s\n", p->g->clusters[p->f[i].c.cluster].name,
		       plan_gpus_of(p->g, &p->f[i]), pt, p->f[i].c.est.gp.wall_s / 86400,
		       human_number(p->f[i].c.est.econ.cost_usd, usd, sizeof(usd)));
	}
}

/* Before simulating: estimate every finalist, warn when the plans to
 * simulate are long (cli/longrun.h), and give the estimates to the
 * progress line. */
static void estimate_finalists(struct pctx *p, const char *file, int jobs)
{
	struct estimate *e = xcalloc((size_t)p->n + 1, sizeof(*e));
	bool *ok = xcalloc((size_t)p->n + 1, sizeof(*ok));
	char **label = xcalloc((size_t)p->n + 1, sizeof(*label));
	for (int i = 0; i < p->n; i++) {
		const struct fin *f = &p->f[i];
		char pt[160];
		plan_describe(&f->c.plan, pt, sizeof(pt));
		label[i] = xasprintf("plan %s on %s", pt, p->g->clusters[f->c.cluster].name);
		ok[i] = !longrun_estimate(p->g->clusters[f->c.cluster].in, &f->c.plan, &e[i]);
		if (ok[i])
			progress_expect(p->pg, i, e[i].cpu_s, e[i].tasks * e[i].runs);
	}
	if (longrun_warn_batch(file, "plans", e, ok, (const char *const *)label, p->n, jobs))
		progress_eager(p->pg);
	for (int i = 0; i < p->n; i++)
		free(label[i]);
	free(label);
	free(ok);
	free(e);
}

/* No output in dir (nor --export's) may replace the goal, its model, a
 * cluster's topology or a file the loaders read, and each may be
 * written. Returns 0 or an exit code after saying why. */
static int check_outputs(const struct plan_opts *o, const struct goal *g, const char *dir)
{
	struct samefile *sf = samefile_create();
	samefile_input(sf, "the goal", o->file);
	samefile_input(sf, "the model", g->model);
	for (int i = 0; i < g->nclusters; i++)
		if (g->clusters[i].in)
			samefile_input(sf, "a cluster's topology", inputs_topology_path(g->clusters[i].in));
	samefile_inputs_read(sf, "a file it read", 0);
	int rc = 0;
	for (int i = 0; i < plan_outputs_of(o) && !o->screen_only; i++) {
		char *path = xasprintf("%s/%s", dir, plan_out_names[i]);
		samefile_output(sf, o->out ? "--out" : "the goal's output", path);
		if (!rc)
			rc = cli_check_output(path);
		free(path);
	}
	for (int i = 0; i < o->nexport; i++) {
		char *path = xasprintf("%s/plan-%ld.json", dir, o->export_rank[i]);
		samefile_output(sf, "--export", path);
		if (!rc)
			rc = cli_check_output(path);
		free(path);
	}
	if (!rc)
		rc = cli_check_samefile(sf);
	samefile_destroy(sf);
	return rc;
}

/* Simulate the finalists, then per cluster carry the core (the fewest
 * GPUs' plans) over, at each count "auto" adds too. Returns 0 or -1 when
 * the runner or a carry failed (reported). */
static int simulate_finalists(struct pctx *p, struct plan_opts *o, struct diag *d)
{
	o->ro.tick = tick;
	admit(p, 0);
	int run_rc = p->n ? runner_run(&o->ro, p->n, job, done, p, d) : 0;
	progress_destroy(p->pg);
	p->pg = NULL;
	if (run_rc)
		return -1;
	for (int ci = 0; ci < p->g->nclusters; ci++) {
		if (carry(p, o, ci, d))
			return -1;
		for (int safe = 0; safe < 2; safe++)
			for (long nx; p->g->clusters[ci].auto_nodes && (nx = next_auto_count(p, ci, safe));)
				if (try_count(p, o, ci, nx, d) || carry(p, o, ci, d))
					return -1;
	}
	return 0;
}

/* The plan's tables on stdout. */
static void print_results(const struct pctx *p, const struct plan_opts *o)
{
	plan_print_safe(p);
	plan_print_best(p);
	plan_print_options(p);
	plan_print_front(p);
	if (o->show_rejected)
		plan_print_rejected(p);
}

int cmd_plan(int argc, char **argv)
{
	struct plan_opts o = { .ro = { .jobs = 2 } };
	int rc = parse_args(argc, argv, &o);
	if (rc)
		return rc;
	o.command = plan_command_line(argc, argv);
	o.date_s = o.formats & PLAN_FORMAT_HTML ? plan_page_date() : 0;
	struct diag d;
	diag_init(&d, stderr);
	rc = EXIT_INPUT;
	struct pctx p = { .quiet = o.quiet, .show_rejected = o.show_rejected,
			  .mem_limit_bytes = o.ro.mem_limit_bytes > 0 ? o.ro.mem_limit_bytes :
					     longrun_mem_default_bytes(),
			  .mem_limit_given = o.ro.mem_limit_bytes > 0 };
	char *dir = NULL;
	double t0 = now_s();

	p.g = goal_load(o.file, &d);
	if (!p.g)
		goto out;
	if (o.top)
		p.g->top = o.top;
	dir = o.out ? xstrdup(o.out) : xasprintf("out/%s", p.g->name);
	/* no output may replace the goal, its model, a cluster's topology */
	rc = check_outputs(&o, p.g, dir);
	if (rc)
		goto out;
	rc = EXIT_FAIL;
	printf("goal %s: %s\n", p.g->name, p.g->description);
	screen(&p);
	if (o.screen_only) {
		print_screen_only(&p);
		rc = EXIT_OK;
		goto out;
	}
	fflush(stdout);
	p.pg = progress_create("plan", "plans", p.n, o.ro.jobs, o.quiet, true);
	estimate_finalists(&p, o.file, o.ro.jobs);
	double t_sim = now_s();
	if (simulate_finalists(&p, &o, &d))
		goto out;
	t_sim = now_s() - t_sim;
	plan_fill_points(&p);
	if (p.n)  /* no plan simulated: p.f is NULL, which qsort may not be given */
		qsort(p.f, (size_t)p.n, sizeof(*p.f), cmp_fin);

	char *csvp = xasprintf("%s/plans.csv", dir);
	bool io_ok = plan_write_outputs(&p, &o, dir, &d);
	int failed = 0;
	for (int i = 0; i < p.n; i++)
		failed += !p.f[i].ok;
	print_results(&p, &o);
	printf("\n%d plans simulated in %.1f s (-j %d; %d for the carry, %d for --top alone); total %.1f s; "
	       "rows in %s\n", p.n, t_sim, o.ro.jobs, p.carried, extras(&p), now_s() - t0, csvp);
	rc = !io_ok || failed ? EXIT_FAIL : EXIT_OK;
	int erc = plan_export_plans(&p, &o, dir, &d);
	if (erc)
		rc = erc;
	free(csvp);
out:
	free(o.command);
	free(dir);
	free(p.f);
	goal_destroy(p.g);
	diag_finish(&d);
	return rc;
}
