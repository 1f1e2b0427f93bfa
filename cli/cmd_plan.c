/* cmd_plan: `ddlsim plan GOAL.json [--top N] [-j N] [--out DIR] [--screen-only]`.
 *
 * Screens every plan of every cluster option in-process (sim/search.h),
 * simulates the best `top` of each option and the best of each node count
 * through the runner, and prints per option the simulated plans ranked by
 * wall time to train, the Pareto front of time and cost over all options,
 * the fewest GPUs of each GPU type that meet the deadline (and budget),
 * and how the screen's ranking compares with the engine's. Every
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
};

struct pctx {
	struct goal *g;
	struct fin *f;
	int n, done;
	bool quiet;
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
	snprintf(buf, n, "tp%d pp%d%s dp%d mb%ld gb%ld z%d %s%s %s", pl->tp, pl->pp,
		 pl->schedule == SCHED_INTERLEAVED ? (char[8]){ 'v', (char)('0' + pl->interleave % 10), 0 } : "",
		 pl->dp, pl->micro_batch, pl->global_batch, (int)pl->zero, recompute_name(pl->recompute),
		 pl->sp ? " sp" : "", pl->order);
}

static int cmp_fin(const void *a, const void *b)
{
	const struct fin *x = a, *y = b;
	if (x->ok != y->ok)
		return x->ok ? -1 : 1;
	if (x->c.cluster != y->c.cluster)
		return x->c.cluster - y->c.cluster;
	double p = x->a.gp.wall_s, q = y->a.gp.wall_s;
	return (p > q) - (p < q);
}

/* Spearman's rho of the estimate vs the engine over the simulated plans
 * of cluster ci. */
static double spearman(const struct fin *f, int n, int ci, int *count)
{
	int m = 0;
	double *e = xcalloc((size_t)n + 1, sizeof(double)), *s = xcalloc((size_t)n + 1, sizeof(double));
	for (int i = 0; i < n; i++)
		if (f[i].ok && f[i].c.cluster == ci) {
			e[m] = f[i].c.est_iter_s / f[i].c.plan.global_batch;
			s[m++] = f[i].row.iteration_s / f[i].c.plan.global_batch;
		}
	double d2 = 0;
	for (int i = 0; i < m; i++) {
		double re = 0, rs = 0;
		for (int k = 0; k < m; k++) {
			re += e[k] < e[i] ? 1 : e[k] == e[i] ? 0.5 : 0;
			rs += s[k] < s[i] ? 1 : s[k] == s[i] ? 0.5 : 0;
		}
		d2 += (re - rs) * (re - rs);
	}
	free(e);
	free(s);
	*count = m;
	return m > 2 ? 1 - 6 * d2 / ((double)m * ((double)m * m - 1)) : NAN;
}

int cmd_plan(int argc, char **argv)
{
	const char *file = NULL, *out = NULL;
	int top = 0;
	bool screen_only = false, quiet = false;
	struct runner_opts ro = { .jobs = 2 };
	for (int i = 1; i < argc; i++) {
		char *end;
		if (!strcmp(argv[i], "--top") && i + 1 < argc) {
			top = (int)strtol(argv[++i], &end, 10);
			if (*end || top < 1 || top > 1000)
				return cli_usage_error("--top: expected a number in [1, 1000], got '%s'", argv[i]);
		} else if ((!strcmp(argv[i], "-j") || !strcmp(argv[i], "--jobs")) && i + 1 < argc) {
			ro.jobs = (int)strtol(argv[++i], &end, 10);
			if (*end || ro.jobs < 1 || ro.jobs > 1024)
				return cli_usage_error("%s: expected a number in [1, 1024], got '%s'", argv[i - 1], argv[i]);
		} else if ((!strcmp(argv[i], "--out") || !strcmp(argv[i], "-o")) && i + 1 < argc)
			out = argv[++i];
		else if (!strcmp(argv[i], "--screen-only"))
			screen_only = true;
		else if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q"))
			quiet = true;
		else if (argv[i][0] == '-' && argv[i][1])
			return cli_usage_error("unknown option or missing value '%s' for 'plan'", argv[i]);
		else if (file)
			return cli_usage_error("'plan' takes one goal file");
		else
			file = argv[i];
	}
	if (!file)
		return cli_usage_error("'plan' needs a goal file");
	struct diag d;
	diag_init(&d, stderr);
	int rc = EXIT_INPUT;
	struct pctx p = { .quiet = quiet };
	struct search_stats st = { 0 };
	size_t cap = 0;
	double t0 = now_s();

	p.g = goal_load(file, &d);
	if (!p.g)
		goto out;
	if (top)
		p.g->top = top;
	rc = EXIT_FAIL;
	printf("goal %s: %s\n", p.g->name, p.g->description);
	for (int ci = 0; ci < p.g->nclusters; ci++) {
		long n;
		struct search_stats s1 = { 0 };
		struct candidate *c = search_screen(p.g, ci, &n, &s1);
		st.enumerated += s1.enumerated, st.invalid += s1.invalid, st.no_fit += s1.no_fit;
		st.screened += s1.screened, st.screen_s += s1.screen_s;
		printf("\n%s: %ld plans enumerated, %ld rejected by plan_check, %ld do not fit in memory, "
		       "%ld screened in %.2f s (%.0f plans/s)\n", p.g->clusters[ci].name, s1.enumerated,
		       s1.invalid, s1.no_fit, s1.screened, s1.screen_s, s1.enumerated / fmax(s1.screen_s, 1e-9));
		/* finalists: the best `top`, and the best of each node count */
		const struct goal_cluster *cl = &p.g->clusters[ci];
		for (long k = 0; k < n; k++) {
			bool pick = k < p.g->top;
			if (!pick) {
				bool first_of_nodes = true;
				for (long q = 0; q < k; q++)
					if (c[q].plan.nodes == c[k].plan.nodes) {
						first_of_nodes = false;
						break;
					}
				pick = first_of_nodes;
			}
			if (!pick)
				continue;
			XGROW(p.f, cap, (size_t)p.n + 1);
			memset(&p.f[p.n], 0, sizeof(p.f[p.n]));
			p.f[p.n++].c = c[k];
		}
		if (n == 0)
			printf("  no plan fits: try more nodes, a smaller micro-batch or recompute\n");
		(void)cl;
		free(c);
	}
	printf("\nscreen: %ld plans in %.2f s, %.0f plans/s (plan_check, memory anatomy, estimate)\n",
	       st.enumerated, st.screen_s, st.enumerated / fmax(st.screen_s, 1e-9));
	if (screen_only) {
		for (int i = 0; i < p.n; i++) {
			char pt[160];
			plan_text(&p.f[i].c.plan, pt, sizeof(pt));
			printf("  %-16s %5ld GPUs  %-52s est %.1f d, $%.3g\n", p.g->clusters[p.f[i].c.cluster].name,
			       plan_gpus(&p.f[i].c.plan, p.g->clusters[p.f[i].c.cluster].in), pt,
			       p.f[i].c.est.gp.wall_s / 86400, p.f[i].c.est.econ.cost_usd);
		}
		rc = EXIT_OK;
		goto out;
	}
	double t_sim = now_s();
	if (p.n && runner_run(&ro, p.n, job, done, &p, &d))
		goto out;
	t_sim = now_s() - t_sim;
	qsort(p.f, (size_t)p.n, sizeof(*p.f), cmp_fin);

	/* outputs */
	const char *dir = out ? out : NULL;
	char *dflt = xasprintf("out/%s", p.g->name);
	if (!dir)
		dir = dflt;
	char *csvp = xasprintf("%s/plans.csv", dir), *jp = xasprintf("%s/plans.jsonl", dir);
	FILE *csv = NULL, *jl = NULL;
	if (report_mkdirs(dir) == 0) {
		csv = fopen(csvp, "w");
		jl = fopen(jp, "w");
	}
	int failed = 0;
	for (int i = 0; i < p.n; i++) {
		struct fin *f = &p.f[i];
		const struct goal_cluster *cl = &p.g->clusters[f->c.cluster];
		json_t *rec = json_object();
		json_object_set_new(rec, "cluster", json_string(cl->name));
		json_object_set_new(rec, "rank", json_integer(i + 1));
		json_object_set_new(rec, "est_iteration_time_s", json_real(f->c.est_iter_s));
		json_object_set_new(rec, "est_wall_days", json_real(f->c.est.gp.wall_s / 86400));
		tidy_add_row(rec, &f->row, cl->in, f->ok ? &f->a : NULL);
		json_object_set_new(rec, "meets_deadline", json_boolean(f->ok && (!p.g->deadline_s || f->a.gp.wall_s <= p.g->deadline_s)));
		json_object_set_new(rec, "meets_budget", json_boolean(f->ok && (!p.g->budget_usd || f->a.econ.cost_usd <= p.g->budget_usd)));
		if (csv && i == 0)
			tidy_csv_header(csv, rec);
		if (csv)
			tidy_csv_row(csv, rec);
		if (jl)
			tidy_jsonl(jl, rec);
		json_decref(rec);
		failed += !f->ok;
	}
	bool io_ok = csv && jl;
	if (csv)
		io_ok = !fclose(csv) && io_ok;
	if (jl)
		io_ok = !fclose(jl) && io_ok;
	if (io_ok && plot_write_points(jp, dir, p.g->name, &d))
		io_ok = false;

	/* per option */
	for (int ci = 0; ci < p.g->nclusters; ci++) {
		printf("\n== %s (simulated, by wall time to train incl. failures) ==\n", p.g->clusters[ci].name);
		printf("  %4s %6s  %-44s %7s %6s %8s %8s %10s %9s %8s %5s\n", "rank", "GPUs", "plan", "MFU", "mem GB",
		       "train d", "wall d", "cost $M", "$/Mtok", "MWh", "good");
		int k = 0;
		for (int i = 0; i < p.n; i++) {
			struct fin *f = &p.f[i];
			if (f->c.cluster != ci)
				continue;
			char pt[160];
			plan_text(&f->c.plan, pt, sizeof(pt));
			long gpus = plan_gpus(&f->c.plan, p.g->clusters[ci].in);
			if (!f->ok) {
				printf("  %4s %6ld  %-44s %s: %.80s\n", "-", gpus, pt, result_status_names[f->row.status], f->row.reason);
				continue;
			}
			printf("  %4d %6ld  %-44s %6.1f%% %6.1f %8.1f %8.1f %10.3f %9.4f %8.0f %4.1f%%%s\n", ++k, gpus, pt,
			       100 * f->row.mfu, f->row.mem_worst_bytes / 1e9, f->a.train_s / 86400, f->a.gp.wall_s / 86400,
			       f->a.econ.cost_usd / 1e6, f->a.econ.usd_per_Mtoken, f->a.econ.energy_MWh, 100 * f->a.gp.ratio,
			       p.g->deadline_s && f->a.gp.wall_s > p.g->deadline_s ? "  late" : "");
		}
		int cnt;
		double rho = spearman(p.f, p.n, ci, &cnt);
		printf("  screen vs engine over %d plans: Spearman rho %.2f (time per sample)\n", cnt, rho);
	}
	/* Pareto front: no other simulated plan is both faster and cheaper */
	printf("\n== Pareto front, wall time vs cost (all options) ==\n");
	for (int i = 0; i < p.n; i++) {
		struct fin *f = &p.f[i];
		if (!f->ok)
			continue;
		bool dominated = false;
		for (int k = 0; k < p.n && !dominated; k++)
			if (k != i && p.f[k].ok && p.f[k].a.gp.wall_s <= f->a.gp.wall_s &&
			    p.f[k].a.econ.cost_usd <= f->a.econ.cost_usd &&
			    (p.f[k].a.gp.wall_s < f->a.gp.wall_s || p.f[k].a.econ.cost_usd < f->a.econ.cost_usd))
				dominated = true;
		if (dominated)
			continue;
		char pt[160];
		plan_text(&f->c.plan, pt, sizeof(pt));
		printf("  %-16s %6ld GPUs  %-44s %7.1f d  $%.3fM  $%.4f/Mtok\n", p.g->clusters[f->c.cluster].name,
		       plan_gpus(&f->c.plan, p.g->clusters[f->c.cluster].in), pt, f->a.gp.wall_s / 86400,
		       f->a.econ.cost_usd / 1e6, f->a.econ.usd_per_Mtoken);
	}
	/* fewest GPUs per GPU type meeting deadline and budget */
	printf("\n== fewest GPUs that meet the goal (deadline %.0f d%s) per GPU type ==\n",
	       p.g->deadline_s / 86400, p.g->budget_usd ? ", budget" : "");
	for (int ci = 0; ci < p.g->nclusters; ci++) {
		const char *gname = inputs_topology(p.g->clusters[ci].in)->gpu.name;
		bool seen_before = false;
		for (int q = 0; q < ci; q++)
			seen_before |= !strcmp(inputs_topology(p.g->clusters[q].in)->gpu.name, gname);
		if (seen_before)
			continue;
		struct fin *best = NULL;
		for (int i = 0; i < p.n; i++) {
			struct fin *f = &p.f[i];
			if (!f->ok || strcmp(inputs_topology(p.g->clusters[f->c.cluster].in)->gpu.name, gname))
				continue;
			if (p.g->deadline_s && f->a.gp.wall_s > p.g->deadline_s)
				continue;
			if (p.g->budget_usd && f->a.econ.cost_usd > p.g->budget_usd)
				continue;
			long gg = plan_gpus(&f->c.plan, p.g->clusters[f->c.cluster].in);
			long bg = best ? plan_gpus(&best->c.plan, p.g->clusters[best->c.cluster].in) : 0;
			if (!best || gg < bg || (gg == bg && f->a.econ.cost_usd < best->a.econ.cost_usd))
				best = f;
		}
		if (!best) {
			printf("  %-20s none of the simulated plans meets it\n", gname);
			continue;
		}
		char pt[160];
		plan_text(&best->c.plan, pt, sizeof(pt));
		printf("  %-20s %6ld GPUs (%s)  %-44s %.1f d, $%.3fM, $%.4f/Mtok, %.0f MWh, %.1f interruptions\n", gname,
		       plan_gpus(&best->c.plan, p.g->clusters[best->c.cluster].in), p.g->clusters[best->c.cluster].name,
		       pt, best->a.gp.wall_s / 86400, best->a.econ.cost_usd / 1e6, best->a.econ.usd_per_Mtoken,
		       best->a.econ.energy_MWh, best->a.gp.interruptions);
	}
	printf("\n%d plans simulated in %.1f s (-j %d); total %.1f s; rows in %s\n", p.n, t_sim, ro.jobs,
	       now_s() - t0, csvp);
	if (!io_ok)
		diag_err(&d, csvp, "", "cannot write the plan output: %s", strerror(errno));
	rc = !io_ok || failed ? EXIT_FAIL : EXIT_OK;
	free(dflt);
	free(csvp);
	free(jp);
out:
	free(p.f);
	goal_destroy(p.g);
	diag_finish(&d);
	return rc;
}
