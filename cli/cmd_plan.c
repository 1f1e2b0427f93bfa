/* cmd_plan: `ddlsim plan GOAL.json [--top N] [-j N] [--out DIR] [--screen-only]`.
 *
 * Screens every plan of every cluster option in-process (sim/search.h),
 * simulates the best `top` of each option and the best of each node count
 * through the runner, and prints per option the simulated plans ranked by
 * wall time to train, the Pareto front of time and cost over all options,
 * the fewest GPUs of each GPU type that meet the deadline (and budget),
 * and how the screen's ranking compares with the engine's (the ranking,
 * the front, the fewest GPUs and the correlation: sim/study.h). Every
 * simulated plan goes to DIR/plans.csv and DIR/plans.jsonl, and the
 * plots (reports/plot.h) to DIR/pareto.svg and DIR/mfu-gpus.svg. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "assess.h"
#include "plot.h"
#include "cli.h"
#include "report.h"
#include "runner.h"
#include "search.h"
#include "simulate.h"
#include "study.h"
#include "tidy.h"
#include "xalloc.h"

void cmd_plan_usage(FILE *f)
{
	fprintf(f, "usage: ddlsim plan GOAL.json [--top N] [-j N] [--out DIR] [--screen-only] [--quiet]\n\n"
		   "Searches parallel plans and cluster sizes for a training goal (schema\n"
		   "ddlsim.goal: model, tokens, sequence length, deadline and/or budget, global\n"
		   "batch range, candidate clusters with node counts and prices; sim/search.h).\n"
		   "Every plan is checked (plan_check, memory anatomy) and estimated in-process;\n"
		   "the best N per cluster option (and the best per node count) are simulated.\n"
		   "Prints the simulated plans per option ranked by wall time to train (failures\n"
		   "and checkpoints included), cost, $ per million tokens and energy; the Pareto\n"
		   "front of time and cost; the fewest GPUs per GPU type that meet the deadline;\n"
		   "and the screen's rank correlation with the engine.\n\n"
		   "  --top N         plans simulated per cluster option (default: the goal's, 20)\n"
		   "  -j, --jobs N    simulations at once (default 2)\n"
		   "  --out DIR       write DIR/plans.csv, DIR/plans.jsonl and the plots DIR/pareto.svg\n"
		   "                  (time vs cost, Pareto front) and DIR/mfu-gpus.svg (default out/<goal name>)\n"
		   "  --screen-only   screen and print the estimate's ranking, simulate nothing\n"
		   "  --quiet         only the tables\n\n"
		   "examples:\n"
		   "  ddlsim plan scenarios/goals/llama3-70b-15t-90d.json\n"
		   "  ddlsim plan scenarios/goals/llama3-70b-per-token.json --top 5 -j 2\n\n"
		   "exit codes: 0 ok, 1 a simulation or output failed, 2 usage, 3 invalid goal file\n");
}

struct fin {
	struct candidate c;
	struct result_row row;
	struct assessment a;
	bool ok;
	struct study_point pt;      /* the plan as the analysis sees it */
};

struct pctx {
	struct goal *g;
	struct fin *f;
	int n, done;
	bool quiet;
};

struct plan_opts {
	const char *file, *out;
	int top;
	bool screen_only, quiet;
	struct runner_opts ro;
};

static void job(void *ctx, int i, struct result_row *row)
{
	struct pctx *p = ctx;
	struct fin *f = &p->f[i];
	simulate_row(p->g->clusters[f->c.cluster].in, &f->c.plan, row);
}

static void done(void *ctx, int i, const struct result_row *row)
{
	struct pctx *p = ctx;
	struct fin *f = &p->f[i];
	f->row = *row;
	f->row.plan = f->c.plan;
	f->ok = row->status == RESULT_OK;
	if (f->ok) {
		double busy = row->iteration_s > 0 ? row->mean.compute_s / row->iteration_s : 0;
		const struct goal_cluster *cl = &p->g->clusters[f->c.cluster];
		assess_plan(cl->in, &f->c.plan, row->tokens_per_s, busy, &cl->econ, &p->g->goodput, &f->a);
	}
	p->done++;
	if (!p->quiet && isatty(2))
		fprintf(stderr, "\r[%d/%d] simulated   %s", p->done, p->n, p->done == p->n ? "\n" : "");
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void plan_text(const struct plan *pl, char *buf, size_t n)
{
	snprintf(buf, n, "tp%d pp%d%s dp%d mb%ld gb%ld z%d %s%s %s", pl->parallel.tp, pl->parallel.pp,
		 pl->parallel.schedule == SCHED_INTERLEAVED
			 ? (char[8]){ 'v', (char)('0' + pl->parallel.interleave % 10), 0 } : "",
		 pl->parallel.dp, pl->training.micro_batch, pl->training.global_batch, (int)pl->parallel.zero,
		 recompute_name(pl->parallel.recompute),
		 pl->parallel.sp ? " sp" : "", pl->parallel.order);
}

static const char *gpu_of(const struct goal *g, int ci)
{
	return inputs_topology(g->clusters[ci].in)->gpu.name;
}

static long gpus_of(const struct goal *g, const struct fin *f)
{
	return plan_gpus(&f->c.plan, g->clusters[f->c.cluster].in);
}

static int cmp_fin(const void *a, const void *b)
{
	const struct fin *x = a, *y = b;
	return study_compare(&x->pt, &y->pt);
}

/* Returns 0, or EXIT_USAGE after saying what is wrong. */
static int parse_args(int argc, char **argv, struct plan_opts *o)
{
	for (int i = 1; i < argc; i++) {
		char *end;
		if (!strcmp(argv[i], "--top") && i + 1 < argc) {
			o->top = (int)strtol(argv[++i], &end, 10);
			if (*end || o->top < 1 || o->top > 1000)
				return cli_usage_error("--top: expected a number in [1, 1000], got '%s'", argv[i]);
		} else if ((!strcmp(argv[i], "-j") || !strcmp(argv[i], "--jobs")) && i + 1 < argc) {
			o->ro.jobs = (int)strtol(argv[++i], &end, 10);
			if (*end || o->ro.jobs < 1 || o->ro.jobs > 1024)
				return cli_usage_error("%s: expected a number in [1, 1024], got '%s'", argv[i - 1], argv[i]);
		} else if ((!strcmp(argv[i], "--out") || !strcmp(argv[i], "-o")) && i + 1 < argc)
			o->out = argv[++i];
		else if (!strcmp(argv[i], "--screen-only"))
			o->screen_only = true;
		else if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q"))
			o->quiet = true;
		else if (argv[i][0] == '-' && argv[i][1])
			return cli_usage_error("unknown option or missing value '%s' for 'plan'", argv[i]);
		else if (o->file)
			return cli_usage_error("'plan' takes one goal file");
		else
			o->file = argv[i];
	}
	if (!o->file)
		return cli_usage_error("'plan' needs a goal file");
	return 0;
}

/* Screen every cluster option, print what each screen found, and keep as
 * finalists the best `top` of each option and the best of each node
 * count. */
static void screen(struct pctx *p)
{
	struct search_stats st = { 0 };
	size_t cap = 0;
	for (int ci = 0; ci < p->g->nclusters; ci++) {
		long n;
		struct search_stats s1 = { 0 };
		struct candidate *c = search_screen(p->g, ci, &n, &s1);
		st.enumerated += s1.enumerated, st.invalid += s1.invalid, st.no_fit += s1.no_fit;
		st.screened += s1.screened, st.screen_s += s1.screen_s;
		printf("\n%s: %ld plans enumerated, %ld rejected by plan_check, %ld do not fit in memory, "
		       "%ld screened in %.2f s (%.0f plans/s)\n", p->g->clusters[ci].name, s1.enumerated,
		       s1.invalid, s1.no_fit, s1.screened, s1.screen_s, s1.enumerated / fmax(s1.screen_s, 1e-9));
		/* node counts are at most SEARCH_MAX_NODES (goal_load): one bit
		 * each, so finding the first of each node count is linear */
		unsigned char *seen = xcalloc(SEARCH_MAX_NODES / 8 + 1, 1);
		for (long k = 0; k < n; k++) {
			int nodes = c[k].plan.nodes;
			bool first_of_nodes = !(seen[nodes / 8] & (1u << (nodes % 8)));
			seen[nodes / 8] |= (unsigned char)(1u << (nodes % 8));
			if (k >= p->g->top && !first_of_nodes)
				continue;
			XGROW(p->f, cap, (size_t)p->n + 1);
			memset(&p->f[p->n], 0, sizeof(p->f[p->n]));
			p->f[p->n++].c = c[k];
		}
		free(seen);
		if (n == 0)
			printf("  no plan fits: try more nodes, a smaller micro-batch or recompute\n");
		free(c);
	}
	printf("\nscreen: %ld plans in %.2f s, %.0f plans/s (plan_check, memory anatomy, estimate)\n",
	       st.enumerated, st.screen_s, st.enumerated / fmax(st.screen_s, 1e-9));
}

static void print_screen_only(const struct pctx *p)
{
	for (int i = 0; i < p->n; i++) {
		char pt[160];
		plan_text(&p->f[i].c.plan, pt, sizeof(pt));
		printf("  %-16s %5ld GPUs  %-52s est %.1f d, $%.3g\n", p->g->clusters[p->f[i].c.cluster].name,
		       gpus_of(p->g, &p->f[i]), pt, p->f[i].c.est.gp.wall_s / 86400, p->f[i].c.est.econ.cost_usd);
	}
}

/* Each finalist's point for the analysis (sim/study.h). */
static void fill_points(struct pctx *p)
{
	for (int i = 0; i < p->n; i++) {
		struct fin *f = &p->f[i];
		f->pt = (struct study_point){ .option = f->c.cluster, .gpu = gpu_of(p->g, f->c.cluster),
					      .gpus = gpus_of(p->g, f), .ok = f->ok, .wall_s = f->a.gp.wall_s,
					      .cost_usd = f->a.econ.cost_usd };
	}
}

/* DIR/plans.csv, DIR/plans.jsonl (a record per finalist, in rank order)
 * and the plots. Returns whether every file was written. */
static bool write_outputs(const struct pctx *p, const char *dir, const char *csvp, struct diag *d)
{
	char *jp = xasprintf("%s/plans.jsonl", dir);
	FILE *csv = NULL, *jl = NULL;
	if (report_mkdirs(dir) == 0) {
		csv = fopen(csvp, "w");
		jl = fopen(jp, "w");
	}
	for (int i = 0; i < p->n; i++) {
		const struct fin *f = &p->f[i];
		const struct goal_cluster *cl = &p->g->clusters[f->c.cluster];
		json_t *rec = json_object();
		json_object_set_new(rec, "cluster", json_string(cl->name));
		json_object_set_new(rec, "rank", json_integer(i + 1));
		json_object_set_new(rec, "est_iteration_time_s", json_real(f->c.est_iter_s));
		json_object_set_new(rec, "est_wall_days", json_real(f->c.est.gp.wall_s / 86400));
		tidy_add_row(rec, &f->row, cl->in, f->ok ? &f->a : NULL);
		json_object_set_new(rec, "meets_deadline", json_boolean(f->ok && (!p->g->deadline_s || f->a.gp.wall_s <= p->g->deadline_s)));
		json_object_set_new(rec, "meets_budget", json_boolean(f->ok && (!p->g->budget_usd || f->a.econ.cost_usd <= p->g->budget_usd)));
		if (csv && i == 0)
			tidy_csv_header(csv, rec);
		if (csv)
			tidy_csv_row(csv, rec);
		if (jl)
			tidy_jsonl(jl, rec);
		json_decref(rec);
	}
	bool io_ok = csv && jl;
	if (csv)
		io_ok = !fclose(csv) && io_ok;
	if (jl)
		io_ok = !fclose(jl) && io_ok;
	if (io_ok && plot_write_points(jp, dir, p->g->name, d))
		io_ok = false;
	free(jp);
	return io_ok;
}

/* Per option: its simulated plans ranked, and the screen's rank
 * correlation with the engine (time per sample). */
static void print_options(const struct pctx *p)
{
	double *e = xcalloc((size_t)p->n + 1, sizeof(double)), *s = xcalloc((size_t)p->n + 1, sizeof(double));
	for (int ci = 0; ci < p->g->nclusters; ci++) {
		printf("\n== %s (simulated, by wall time to train incl. failures) ==\n", p->g->clusters[ci].name);
		printf("  %4s %6s  %-44s %7s %6s %8s %8s %10s %9s %8s %5s\n", "rank", "GPUs", "plan", "MFU", "mem GB",
		       "train d", "wall d", "cost $M", "$/Mtok", "MWh", "good");
		int k = 0, m = 0;
		for (int i = 0; i < p->n; i++) {
			const struct fin *f = &p->f[i];
			if (f->c.cluster != ci)
				continue;
			char pt[160];
			plan_text(&f->c.plan, pt, sizeof(pt));
			if (!f->ok) {
				printf("  %4s %6ld  %-44s %s: %.80s\n", "-", f->pt.gpus, pt, result_status_names[f->row.status], f->row.reason);
				continue;
			}
			printf("  %4d %6ld  %-44s %6.1f%% %6.1f %8.1f %8.1f %10.3f %9.4f %8.0f %4.1f%%%s\n", ++k, f->pt.gpus, pt,
			       100 * f->row.mfu, f->row.mem_worst_bytes / 1e9, f->a.train_s / 86400, f->a.gp.wall_s / 86400,
			       f->a.econ.cost_usd / 1e6, f->a.econ.usd_per_Mtoken, f->a.econ.energy_MWh, 100 * f->a.gp.ratio,
			       p->g->deadline_s && f->a.gp.wall_s > p->g->deadline_s ? "  late" : "");
			e[m] = f->c.est_iter_s / f->c.plan.training.global_batch;
			s[m++] = f->row.iteration_s / f->c.plan.training.global_batch;
		}
		printf("  screen vs engine over %d plans: Spearman rho %.2f (time per sample)\n", m,
		       study_spearman(e, s, m));
	}
	free(e);
	free(s);
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
		plan_text(&f->c.plan, pt, sizeof(pt));
		printf("  %-16s %6ld GPUs  %-44s %7.1f d  $%.3fM  $%.4f/Mtok\n", p->g->clusters[f->c.cluster].name,
		       f->pt.gpus, pt, f->a.gp.wall_s / 86400, f->a.econ.cost_usd / 1e6, f->a.econ.usd_per_Mtoken);
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
		char pt[160];
		plan_text(&best->c.plan, pt, sizeof(pt));
		printf("  %-20s %6ld GPUs (%s)  %-44s %.1f d, $%.3fM, $%.4f/Mtok, %.0f MWh, %.1f interruptions\n",
		       fewest[t].gpu, best->pt.gpus, p->g->clusters[best->c.cluster].name, pt,
		       best->a.gp.wall_s / 86400, best->a.econ.cost_usd / 1e6, best->a.econ.usd_per_Mtoken,
		       best->a.econ.energy_MWh, best->a.gp.interruptions);
	}
	free(fewest);
	free(option_gpu);
	free(front);
	free(pts);
}

int cmd_plan(int argc, char **argv)
{
	struct plan_opts o = { .ro = { .jobs = 2 } };
	int rc = parse_args(argc, argv, &o);
	if (rc)
		return rc;
	struct diag d;
	diag_init(&d, stderr);
	rc = EXIT_INPUT;
	struct pctx p = { .quiet = o.quiet };
	double t0 = now_s();

	p.g = goal_load(o.file, &d);
	if (!p.g)
		goto out;
	if (o.top)
		p.g->top = o.top;
	rc = EXIT_FAIL;
	printf("goal %s: %s\n", p.g->name, p.g->description);
	screen(&p);
	if (o.screen_only) {
		print_screen_only(&p);
		rc = EXIT_OK;
		goto out;
	}
	double t_sim = now_s();
	if (p.n && runner_run(&o.ro, p.n, job, done, &p, &d))
		goto out;
	t_sim = now_s() - t_sim;
	fill_points(&p);
	qsort(p.f, (size_t)p.n, sizeof(*p.f), cmp_fin);

	char *dir = o.out ? xstrdup(o.out) : xasprintf("out/%s", p.g->name);
	char *csvp = xasprintf("%s/plans.csv", dir);
	bool io_ok = write_outputs(&p, dir, csvp, &d);
	int failed = 0;
	for (int i = 0; i < p.n; i++)
		failed += !p.f[i].ok;
	print_options(&p);
	print_front(&p);
	printf("\n%d plans simulated in %.1f s (-j %d); total %.1f s; rows in %s\n", p.n, t_sim, o.ro.jobs,
	       now_s() - t0, csvp);
	if (!io_ok)
		diag_err(&d, csvp, "", "cannot write the plan output: %s", strerror(errno));
	rc = !io_ok || failed ? EXIT_FAIL : EXIT_OK;
	free(dir);
	free(csvp);
out:
	free(p.f);
	goal_destroy(p.g);
	diag_finish(&d);
	return rc;
}
