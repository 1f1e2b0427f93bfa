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

struct fin {
	struct candidate c;
	struct result_row row;
	struct assessment a;
	bool ok;
	bool core;                  /* one of the plans the fewest GPUs come from, --top or
				     * not: the screen's best SEARCH_PER_COUNT of its node
				     * count, or a carried family (carry()) */
	struct study_point pt;      /* the plan as the analysis sees it */
	char admit[256];            /* why it is not run (estimated over --mem-limit); "" runs */
};

struct pctx {
	struct goal *g;
	struct fin *f;
	size_t cap;
	int n, done;
	int base;               /* the first finalist of the runner's current batch */
	bool quiet, show_rejected;
	struct progress *pg;
	double mem_limit_bytes;  /* a finalist estimated above it fails, not run */
	bool mem_limit_given;
	int carried, carry_reused;  /* plans the carry simulated, and found simulated */
};

struct plan_opts {
	const char *file, *out;
	unsigned formats;               /* PLAN_FORMAT_* bits of --format, 0: not given */
	int top;
	bool screen_only, quiet, show_rejected;
	struct opt_list exports;        /* --export values as given */
	long export_rank[PLAN_MAX_EXPORTS];  /* their ranks, in order, each once */
	int nexport;
	struct runner_opts ro;
	char *command;                  /* the command line, for plan.html (owned) */
	long long date_s;               /* when, for plan.html: SOURCE_DATE_EPOCH or now */
};

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
		assess_plan(cl->in, &f->c.plan, row->tokens_per_s, busy, &cl->econ, &p->g->goodput, &f->a);
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

static const char *gpu_of(const struct goal *g, int ci)
{
	return inputs_topology(g->clusters[ci].in)->gpu.name;
}

static long gpus_of(const struct goal *g, const struct fin *f)
{
	return plan_gpus(&f->c.plan, g->clusters[f->c.cluster].in);
}

/* The error band of a finalist's plan (sim/band.h). */
static struct band_pick band_of(const struct goal *g, const struct fin *f)
{
	struct band_pick p;
	band_choose(g->clusters[f->c.cluster].in, &f->c.plan, &p);
	return p;
}

static int cmp_fin(const void *a, const void *b)
{
	const struct fin *x = a, *y = b;
	return study_compare(&x->pt, &y->pt);
}

/* --format's names, in bit order: the first three are always written. */
static const char *const format_names[] = { "csv", "jsonl", "svg", "html", NULL };
#define PLAN_FORMAT_HTML (1u << 3)

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

/* Whether finalist f meets the goal in the engine. */
static bool fin_meets(const struct goal *g, const struct fin *f)
{
	return f->ok && f->row.fits && f->a.gp.wall_s <= g->deadline_s &&
	       (g->budget_usd <= 0 || f->a.econ.cost_usd <= g->budget_usd);
}

/* "auto" node counts, the engine's turn. The screen's boundary is its own
 * estimate's; the engine decides: hi is the fewest simulated nodes of
 * cluster ci with a core plan (whatever --top) that meets the goal, lo the
 * most simulated nodes below it. While they are more than one apart, the count between them is
 * screened and its best plans simulated (bisection on the engine, taking
 * the engine's best plan as monotone in the nodes); with no simulated
 * count meeting it, twice the largest, up to the topology's capacity.
 * Returns the next node count to screen and simulate, 0 when done. */
static long next_auto_count(const struct pctx *p, int ci)
{
	long lo = 0, hi = 0, most = 0;
	for (int i = 0; i < p->n; i++) {
		const struct fin *f = &p->f[i];
		if (f->c.cluster != ci || !f->ok || !f->core)
			continue;
		long nodes = f->c.plan.nodes;
		most = nodes > most ? nodes : most;
		if (fin_meets(p->g, f) && (!hi || nodes < hi))
			hi = nodes;
	}
	for (int i = 0; i < p->n; i++) {
		const struct fin *f = &p->f[i];
		long nodes = f->c.plan.nodes;
		if (f->c.cluster == ci && f->ok && f->core && (!hi || nodes < hi) && nodes > lo)
			lo = nodes;
	}
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
			const struct plan *pl = &fam[nfam++];
			for (int j = 0; j < nc; j++) {
				struct candidate cd;
				if (find_family(p, ci, counts[j], pl, true) >= 0 ||
				    !search_screen_family(p->g, ci, counts[j], pl, &cd, &st))
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
		}
		if (fixed)
			break;
		rounds++;
		added += p->n - p->base;
		rc = run_batch(p, o, d);
	}
	p->carried += added, p->carry_reused += reused;
	if (added || reused || !fixed)
		printf("\n%s: carry: %d plan famil%s of the engine's best carried over %d node count%s in %d round%s%s: "
		       "%d more plans simulated, %d already were (screened in %.2f s)\n", p->g->clusters[ci].name, nfam,
		       nfam == 1 ? "y" : "ies", nc, nc == 1 ? "" : "s", rounds, rounds == 1 ? "" : "s",
		       fixed ? "" : " (the most: no fixed point)", added, reused, st.screen_s);
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
		       gpus_of(p->g, &p->f[i]), pt, p->f[i].c.est.gp.wall_s / 86400,
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

/* Each finalist's point for the analysis (sim/study.h). */
static void fill_points(struct pctx *p)
{
	for (int i = 0; i < p->n; i++) {
		struct fin *f = &p->f[i];
		f->pt = (struct study_point){ .option = f->c.cluster, .gpu = gpu_of(p->g, f->c.cluster),
					      .gpus = gpus_of(p->g, f), .ok = f->ok, .oom = f->ok && !f->row.fits,
					      .wall_s = f->a.gp.wall_s,
					      .cost_usd = f->a.econ.cost_usd, .extra = !f->core };
	}
}

static const char *const out_names[5] = { "plans.csv", "plans.jsonl", "pareto.svg", "mfu-gpus.svg",
					  "plan.html" };

/* How many of out_names o writes: plan.html with --format html. */
static int outputs_of(const struct plan_opts *o)
{
	return o->formats & PLAN_FORMAT_HTML ? 5 : 4;
}

/* The record of finalist i (tidy.h). New reference. */
static json_t *record(const struct pctx *p, int i)
{
	const struct fin *f = &p->f[i];
	const struct goal_cluster *cl = &p->g->clusters[f->c.cluster];
	bool usable = study_usable(&f->pt);
	json_t *rec = json_object();
	json_object_set_new(rec, "cluster", json_string(cl->name));
	/* ranked only when it fits (p->f is in rank order, usable first) */
	json_object_set_new(rec, "rank", usable ? json_integer(i + 1) : json_null());
	json_object_set_new(rec, "est_iteration_time_s", json_real(f->c.est_iter_s));
	json_object_set_new(rec, "est_wall_days", json_real(f->c.est.gp.wall_s / 86400));
	tidy_add_row(rec, &f->row, cl->in, f->ok ? &f->a : NULL);
	json_object_set_new(rec, "meets_deadline", json_boolean(usable && (!p->g->deadline_s || f->a.gp.wall_s <= p->g->deadline_s)));
	json_object_set_new(rec, "meets_budget", json_boolean(usable && (!p->g->budget_usd || f->a.econ.cost_usd <= p->g->budget_usd)));
	return rec;
}

/* The best plan that fits: the fastest to train of the plans that fit
 * and meet the budget (the fastest that fits when none does); its index
 * in p->f, -1 when none fits. */
static int best_plan(const struct pctx *p)
{
	int best = -1;
	for (int pass = 0; pass < 2 && best < 0; pass++)
		for (int i = 0; i < p->n; i++) {
			const struct fin *f = &p->f[i];
			if (!study_usable(&f->pt) || (pass == 0 && p->g->budget_usd && f->a.econ.cost_usd > p->g->budget_usd))
				continue;
			if (best < 0 || f->a.gp.wall_s < p->f[best].a.gp.wall_s)
				best = i;
		}
	return best;
}

/* The ranks --export writes: all it was asked for, when every one is
 * ranked (plan_export_write() writes none otherwise). */
static bool exported(const struct pctx *p, const struct plan_opts *o, long rank)
{
	int ranked = 0;
	bool asked = false;
	while (ranked < p->n && study_usable(&p->f[ranked].pt))
		ranked++;
	for (int k = 0; k < o->nexport; k++) {
		if (o->export_rank[k] > ranked)
			return false;
		asked |= o->export_rank[k] == rank;
	}
	return asked;
}

/* DIR/plan.html (reports/plan_html.h) of the ranked finalists, whose
 * records (tidy.h) are recs, index-aligned; caller frees, NULL when it
 * failed to render. A rank --export writes links to its plan-N.json,
 * written after the page is published. */
static char *render_page(const struct pctx *p, const struct plan_opts *o, const json_t *recs)
{
	struct plan_html_plan *pl = xcalloc((size_t)p->n + 1, sizeof(*pl));
	for (int i = 0; i < p->n; i++) {
		const struct fin *f = &p->f[i];
		long rank = study_usable(&f->pt) ? i + 1 : 0;   /* record()'s */
		pl[i] = (struct plan_html_plan){ .option = f->c.cluster, .plan = &f->c.plan, .row = &f->row,
						 .a = f->ok ? &f->a : NULL, .gpus = f->pt.gpus, .rank = rank,
						 .exported = rank && exported(p, o, rank), .extra = !f->core };
	}
	struct plan_html h = { .goal = p->g, .goal_file = o->file, .plans = pl, .nplans = p->n, .records = recs,
			       .recommended = best_plan(p), .command = o->command, .version = DDLSIM_VERSION,
			       .date_s = o->date_s };
	char *page = plan_html_render(&h);
	free(pl);
	return page;
}

/* Stage path with len bytes of text into *af. 0 or -1 after reporting. */
static int stage_text(struct atomic_file *af, const char *path, const char *text, size_t len, struct diag *d)
{
	int e = atomic_file_open(af, path);
	if (!e && len && fwrite(text, 1, len, af->f) != len)
		e = -(errno ? errno : EIO);
	if (!e)
		e = atomic_file_stage(af);
	if (e) {
		atomic_file_abort(af);
		return diag_err(d, path, "", "cannot write the plan output: %s", atomic_file_strerror(-e));
	}
	return 0;
}

/* DIR/plans.csv, DIR/plans.jsonl (a record per finalist, in rank order),
 * the plots and with --format html DIR/plan.html: rendered in memory,
 * staged, then published together under a lock on DIR
 * (util/atomic_file.h), so a full disk or a kill leaves the earlier
 * plan's files, never a mixed or empty set. Returns whether every file
 * was written. */
static bool write_outputs(const struct pctx *p, const struct plan_opts *o, const char *dir, struct diag *d)
{
	char *text[3] = { 0 };
	size_t len[3] = { 0 };
	FILE *m[2] = { open_memstream(&text[0], &len[0]), open_memstream(&text[1], &len[1]) };
	struct atomic_file af[5] = { 0 };
	int nout = outputs_of(o);
	json_t *recs = json_array();
	bool ok = m[0] && m[1];
	for (int i = 0; i < p->n && ok; i++) {
		json_t *rec = record(p, i);
		if ((i == 0 && tidy_csv_header(m[0], rec)) || tidy_csv_row(m[0], rec) || tidy_jsonl(m[1], rec))
			ok = false;
		json_array_append_new(recs, rec);
	}
	for (int i = 0; i < 2; i++)
		if (m[i] && fclose(m[i]))
			ok = false;
	if (ok && nout == 5 && !(text[2] = render_page(p, o, recs)))
		ok = false;
	len[2] = text[2] ? strlen(text[2]) : 0;
	if (!ok)
		diag_errf(d, "cannot render the plan output");
	if (ok && report_mkdirs(dir)) {
		diag_err(d, dir, "", "cannot create the output directory: %s", strerror(errno));
		ok = false;
	}
	int lock_fd = ok ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	if (lock_fd >= 0)
		while (flock(lock_fd, LOCK_EX) < 0 && errno == EINTR)
			;
	for (int i = 0; i < 2 && ok; i++) {
		char *path = xasprintf("%s/%s", dir, out_names[i]);
		ok = stage_text(&af[i], path, text[i], len[i], d) == 0;
		free(path);
	}
	struct plot_goal pg = { p->g->deadline_s / 86400, p->g->budget_usd };
	if (ok && plot_stage_points(recs, dir, p->g->name, &pg, &af[2], d))
		ok = false;
	if (ok && nout == 5) {
		char *path = xasprintf("%s/%s", dir, out_names[4]);
		ok = stage_text(&af[4], path, text[2], len[2], d) == 0;
		free(path);
	}
	int e = ok ? atomic_file_publish(af, nout) : 0;
	if (e) {
		diag_err(d, dir, "", "cannot publish the plan output: %s (the earlier files were kept)", strerror(-e));
		ok = false;
	}
	for (int i = 0; i < 5; i++)
		atomic_file_abort(&af[i]);
	if (lock_fd >= 0)
		close(lock_fd);
	json_decref(recs);
	for (int i = 0; i < 3; i++)
		free(text[i]);
	return ok;
}

/* --export (plan_export.h): plans.csv's ranks, p->f's usable plans. */
static int export_plans(const struct pctx *p, const struct plan_opts *o, const char *dir, struct diag *d)
{
	int ranked = 0;
	while (ranked < p->n && study_usable(&p->f[ranked].pt))
		ranked++;
	struct plan_export_row *rows = xcalloc((size_t)ranked + 1, sizeof(*rows));
	for (int i = 0; i < ranked; i++) {
		const struct goal_cluster *cl = &p->g->clusters[p->f[i].c.cluster];
		rows[i] = (struct plan_export_row){ &p->f[i].c.plan, cl->in, cl->name, p->f[i].pt.gpus };
	}
	int rc = plan_export_write(p->g->name, o->file, rows, ranked, p->n, o->export_rank, o->nexport, dir, d);
	free(rows);
	return rc;
}

/* Per option: its simulated plans ranked, and the screen's rank
 * correlation with the engine (time per sample). A plan's rank is its
 * place in p->f (plans.csv's, --export's): a later option's ranks go on
 * from the earlier's. */
static void print_options(const struct pctx *p)
{
	double *e = xcalloc((size_t)p->n + 1, sizeof(double)), *s = xcalloc((size_t)p->n + 1, sizeof(double));
	for (int ci = 0; ci < p->g->nclusters; ci++) {
		printf("\n== %s (simulated, by wall time to train incl. failures) ==\n", p->g->clusters[ci].name);
		printf("  %4s %6s  %-44s %7s %6s %8s %8s %10s %9s %8s %5s %7s %5s  %s\n", "rank", "GPUs", "plan", "MFU",
		       "mem GB", "train d", "wall d", "cost $M", "$/Mtok", "MWh", "good", "±err", "+GPUs", "band");
		int m = 0, nrej = 0;
		for (int i = 0; i < p->n; i++) {
			const struct fin *f = &p->f[i];
			if (f->c.cluster != ci)
				continue;
			char pt[160];
			plan_describe(&f->c.plan, pt, sizeof(pt));
			if (f->pt.oom) {
				nrej++;
				continue;
			}
			if (!f->ok) {
				printf("  %4s %6ld  %-44s %s: %.80s\n", "-", f->pt.gpus, pt, result_status_names[f->row.status], f->row.reason);
				continue;
			}
			struct band_pick bp = band_of(p->g, f);
			const struct band *b = bp.b;
			printf("  %4d %6ld  %-44s %6.1f%% %6.1f %8.1f %8.1f %10.3f %9.4f %8.0f %4.1f%% %6.1f%% %5ld  %s%s%s\n", i + 1,
			       f->pt.gpus, pt, 100 * f->row.mfu, f->row.mem_worst_bytes / 1e9, f->a.train_s / 86400,
			       f->a.gp.wall_s / 86400, f->a.econ.cost_usd / 1e6, f->a.econ.usd_per_Mtoken, f->a.econ.energy_MWh,
			       100 * f->a.gp.ratio, 100 * bp.halfwidth,
			       band_more_gpus(b, f->pt.gpus, (int)(f->pt.gpus / f->c.plan.nodes)), b->family,
			       bp.extrapolated ? " (extrapolated)" : "",
			       p->g->deadline_s && f->a.gp.wall_s > p->g->deadline_s ? "  late" : "");
			e[m] = f->c.est_iter_s / f->c.plan.training.global_batch;
			s[m++] = f->row.iteration_s / f->c.plan.training.global_batch;
		}
		if (nrej)
			printf("  %d simulated plan%s not ranked: %s not fit in GPU memory%s\n", nrej, nrej > 1 ? "s" : "",
			       nrej > 1 ? "they do" : "it does", p->show_rejected ? " (listed below)" : " (--show-rejected lists them)");
		printf("  screen vs engine over %d plans: Spearman rho %.2f (time per sample)\n", m,
		       study_spearman(e, s, m));
	}
	free(e);
	free(s);
}

static void print_best(const struct pctx *p)
{
	int best = best_plan(p);
	printf("\n== best plan that fits (fastest to train%s) ==\n", p->g->budget_usd ? " within the budget" : "");
	if (best < 0) {
		printf("  none of the simulated plans fits in GPU memory: try more nodes, a smaller "
		       "micro-batch or recompute\n");
		return;
	}
	const struct fin *f = &p->f[best];
	struct band_pick bp = band_of(p->g, f);
	const struct band *b = bp.b;
	char pt[160], bt[600], c0[32], c1[32];
	int per_node = (int)(f->pt.gpus / f->c.plan.nodes);
	long more = band_more_gpus(b, f->pt.gpus, per_node), safe = band_safe_gpus(&bp, f->pt.gpus, per_node);
	plan_describe(&f->c.plan, pt, sizeof(pt));
	printf("  %-16s %6ld GPUs  %-44s MFU %.1f%%, %.1f d, $%s, %.1f of %.1f GB%s\n",
	       p->g->clusters[f->c.cluster].name, f->pt.gpus, pt, 100 * f->row.mfu, f->a.gp.wall_s / 86400,
	       human_number(f->a.econ.cost_usd, c0, sizeof(c0)), f->row.mem_worst_bytes / 1e9,
	       f->row.mem_capacity_bytes / 1e9, p->g->deadline_s && f->a.gp.wall_s > p->g->deadline_s ? "  late" : "");
	printf("  error band %s: at the bias %.1f d, $%s, MFU %.1f%%; %ld GPUs (%ld more, whole nodes of %d)\n",
	       band_text(&bp, bt, sizeof(bt)), f->a.gp.wall_s / 86400 * (1 + b->bias),
	       human_number(f->a.econ.cost_usd * (1 + b->bias), c1, sizeof(c1)), 100 * f->row.mfu / (1 + b->bias),
	       f->pt.gpus + more, more, per_node);
	printf("  at the band's slow edge (%+.1f %% of time): %ld GPUs (%ld nodes) meet the same time, throughput "
	       "scaling with the GPUs\n", 100 * bp.hi, safe, safe / per_node);
}

/* The simulated plans that do not fit in GPU memory, apart. */
static void print_rejected(const struct pctx *p)
{
	printf("\n== rejected: simulated plans that do not fit in GPU memory (never ranked) ==\n");
	int k = 0;
	for (int i = 0; i < p->n; i++) {
		const struct fin *f = &p->f[i];
		if (!f->pt.oom)
			continue;
		char pt[160];
		plan_describe(&f->c.plan, pt, sizeof(pt));
		printf("  %-16s %6ld GPUs  %-44s needs %.1f GB of %.1f GB, %.1f GB missing\n",
		       p->g->clusters[f->c.cluster].name, f->pt.gpus, pt, f->row.mem_worst_bytes / 1e9,
		       f->row.mem_capacity_bytes / 1e9, f->row.mem_short_bytes / 1e9);
		k++;
	}
	if (!k)
		printf("  none: every simulated plan fits\n");
}

/* The Pareto front of all options, and the fewest GPUs of each GPU type
 * that meet the deadline and the budget. */
static void print_front(const struct pctx *p)
{
	struct study_point *pts = xcalloc((size_t)p->n + 1, sizeof(*pts));
	bool *front = xcalloc((size_t)p->n + 1, sizeof(*front));
	const char **option_gpu = xcalloc((size_t)p->g->nclusters + 1, sizeof(*option_gpu));
	struct study_fewest *fewest = xcalloc((size_t)p->g->nclusters + 1, sizeof(*fewest));
	for (int i = 0; i < p->n; i++)
		pts[i] = p->f[i].pt;
	for (int ci = 0; ci < p->g->nclusters; ci++)
		option_gpu[ci] = gpu_of(p->g, ci);

	printf("\n== Pareto front, wall time vs cost (all options) ==\n");
	study_pareto(pts, p->n, front);
	for (int i = 0; i < p->n; i++) {
		const struct fin *f = &p->f[i];
		if (!front[i])
			continue;
		char pt[160];
		plan_describe(&f->c.plan, pt, sizeof(pt));
		struct band_pick bp = band_of(p->g, f);
		printf("  %-16s %6ld GPUs  %-44s %7.1f d  $%.3fM  $%.4f/Mtok  ±%.1f%% (%s)\n",
		       p->g->clusters[f->c.cluster].name, f->pt.gpus, pt, f->a.gp.wall_s / 86400, f->a.econ.cost_usd / 1e6,
		       f->a.econ.usd_per_Mtoken, 100 * bp.halfwidth, bp.b->family);
	}
	printf("\n== fewest GPUs that meet the goal (deadline %.0f d%s) per GPU type ==\n",
	       p->g->deadline_s / 86400, p->g->budget_usd ? ", budget" : "");
	int ntypes = study_fewest_gpus(pts, p->n, option_gpu, p->g->nclusters, p->g->deadline_s,
				       p->g->budget_usd, fewest);
	for (int t = 0; t < ntypes; t++) {
		if (fewest[t].point < 0) {
			printf("  %-20s none of the simulated plans meets it\n", fewest[t].gpu);
			continue;
		}
		const struct fin *best = &p->f[fewest[t].point];
		char pt[160], c0[32];
		plan_describe(&best->c.plan, pt, sizeof(pt));
		struct band_pick bp = band_of(p->g, best);
		const struct band *b = bp.b;
		int per_node = (int)(best->pt.gpus / best->c.plan.nodes);
		printf("  %-20s %6ld GPUs (%s)  %-44s %.1f d, $%s, $%.4f/Mtok, %.0f MWh, %.1f interruptions; "
		       "±%.1f%% (%s): %ld more GPUs at its bias, %ld GPUs at its slow edge (whole nodes)\n",
		       fewest[t].gpu, best->pt.gpus, p->g->clusters[best->c.cluster].name, pt,
		       best->a.gp.wall_s / 86400, human_number(best->a.econ.cost_usd, c0, sizeof(c0)),
		       best->a.econ.usd_per_Mtoken, best->a.econ.energy_MWh, best->a.gp.interruptions,
		       100 * bp.halfwidth, b->family, band_more_gpus(b, best->pt.gpus, per_node),
		       band_safe_gpus(&bp, best->pt.gpus, per_node));
	}
	free(fewest);
	free(option_gpu);
	free(front);
	free(pts);
}

/* argv (argv[0] "plan") as a shell command line (caller frees): an
 * argument with anything but letters, digits and _-+=.,/:@% in single
 * quotes. */
static char *command_line(int argc, char **argv)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);
	if (!f)
		return xstrdup("ddlsim plan");
	fputs("ddlsim", f);
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		bool plain = *a && strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					  "0123456789_-+=.,/:@%") == strlen(a);
		fputc(' ', f);
		if (plain) {
			fputs(a, f);
			continue;
		}
		fputc('\'', f);
		for (; *a; a++)
			fputs(*a == '\'' ? "'\\''" : (char[2]){ *a, 0 }, f);
		fputc('\'', f);
	}
	if (fclose(f)) {
		free(s);
		return xstrdup("ddlsim plan");
	}
	return s;
}

/* When plan.html says it was made: SOURCE_DATE_EPOCH (seconds since the
 * epoch, the reproducible-builds convention) when set to one, else now. */
static long long page_date(void)
{
	const char *e = getenv("SOURCE_DATE_EPOCH");
	char *end;
	errno = 0;
	long long t = e && *e ? strtoll(e, &end, 10) : -1;
	if (e && *e && (errno || *end || t < 0)) {
		fprintf(stderr, "ddlsim plan: warning: SOURCE_DATE_EPOCH: expected seconds since the epoch, "
			"got '%s': plan.html takes the time now\n", e);
		t = -1;
	}
	return t >= 0 ? t : (long long)time(NULL);
}

int cmd_plan(int argc, char **argv)
{
	struct plan_opts o = { .ro = { .jobs = 2 } };
	int rc = parse_args(argc, argv, &o);
	if (rc)
		return rc;
	o.command = command_line(argc, argv);
	o.date_s = o.formats & PLAN_FORMAT_HTML ? page_date() : 0;
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
	struct samefile *sf = samefile_create();
	samefile_input(sf, "the goal", o.file);
	samefile_input(sf, "the model", p.g->model);
	for (int i = 0; i < p.g->nclusters; i++)
		if (p.g->clusters[i].in)
			samefile_input(sf, "a cluster's topology", inputs_topology_path(p.g->clusters[i].in));
	samefile_inputs_read(sf, "a file it read", 0);
	rc = 0;
	for (int i = 0; i < outputs_of(&o) && !o.screen_only; i++) {
		char *path = xasprintf("%s/%s", dir, out_names[i]);
		samefile_output(sf, o.out ? "--out" : "the goal's output", path);
		if (!rc)
			rc = cli_check_output(path);
		free(path);
	}
	for (int i = 0; i < o.nexport; i++) {
		char *path = xasprintf("%s/plan-%ld.json", dir, o.export_rank[i]);
		samefile_output(sf, "--export", path);
		if (!rc)
			rc = cli_check_output(path);
		free(path);
	}
	if (!rc)
		rc = cli_check_samefile(sf);
	samefile_destroy(sf);
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
	o.ro.tick = tick;
	admit(&p, 0);
	int run_rc = p.n ? runner_run(&o.ro, p.n, job, done, &p, &d) : 0;
	progress_destroy(p.pg);
	p.pg = NULL;
	if (run_rc)
		goto out;
	/* the core (the fewest GPUs' plans) carried, at each count "auto" adds too */
	for (int ci = 0; ci < p.g->nclusters; ci++) {
		if (carry(&p, &o, ci, &d))
			goto out;
		for (long nx; p.g->clusters[ci].auto_nodes && (nx = next_auto_count(&p, ci));)
			if (try_count(&p, &o, ci, nx, &d) || carry(&p, &o, ci, &d))
				goto out;
	}
	t_sim = now_s() - t_sim;
	fill_points(&p);
	if (p.n)  /* no plan simulated: p.f is NULL, which qsort may not be given */
		qsort(p.f, (size_t)p.n, sizeof(*p.f), cmp_fin);

	char *csvp = xasprintf("%s/plans.csv", dir);
	bool io_ok = write_outputs(&p, &o, dir, &d);
	int failed = 0;
	for (int i = 0; i < p.n; i++)
		failed += !p.f[i].ok;
	print_best(&p);
	print_options(&p);
	print_front(&p);
	if (o.show_rejected)
		print_rejected(&p);
	printf("\n%d plans simulated in %.1f s (-j %d; %d for the carry, %d for --top alone); total %.1f s; "
	       "rows in %s\n", p.n, t_sim, o.ro.jobs, p.carried, extras(&p), now_s() - t0, csvp);
	rc = !io_ok || failed ? EXIT_FAIL : EXIT_OK;
	int erc = export_plans(&p, &o, dir, &d);
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
