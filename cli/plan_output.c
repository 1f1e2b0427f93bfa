/* plan_output: what `ddlsim plan` prints and writes once the finalists
 * are simulated (plan-private.h): the ranked options, the best plan that
 * fits, the plans that do not fit, the Pareto front and the fewest GPUs;
 * DIR/plans.csv, plans.jsonl, the plots and plan.html, published together;
 * the plans --export writes as scenarios; the command line and date
 * plan.html shows. */
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

/* Each finalist's point for the analysis (sim/study.h). */
void plan_fill_points(struct pctx *p)
{
	for (int i = 0; i < p->n; i++) {
		struct fin *f = &p->f[i];
		f->pt = (struct study_point){ .option = f->c.cluster, .gpu = plan_gpu_of(p->g, f->c.cluster),
					      .gpus = plan_gpus_of(p->g, f), .ok = f->ok, .oom = f->ok && !f->row.fits,
					      .wall_s = f->a.gp.wall_s,
					      .cost_usd = f->a.econ.cost_usd, .extra = !f->core };
	}
}

const char *const plan_out_names[5] = { "plans.csv", "plans.jsonl", "pareto.svg", "mfu-gpus.svg",
					  "plan.html" };

/* How many of plan_out_names o writes: plan.html with --format html. */
int plan_outputs_of(const struct plan_opts *o)
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

/* The outputs rendered in memory: plans.csv into text[0], plans.jsonl
 * into text[1], with --format html (nout 5) plan.html into text[2], their
 * lengths in len (caller frees the texts); each finalist's record
 * appended to recs. Returns whether every one rendered. */
static bool render_outputs(const struct pctx *p, const struct plan_opts *o, int nout, char *text[3],
			   size_t len[3], json_t *recs)
{
	FILE *m[2] = { open_memstream(&text[0], &len[0]), open_memstream(&text[1], &len[1]) };
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
	return ok;
}

/* An exclusive lock on directory dir (waited for): the descriptor to
 * close, -1 when dir does not open. */
static int lock_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0)
		while (flock(fd, LOCK_EX) < 0 && errno == EINTR)
			;
	return fd;
}

/* Stage the rendered texts (plans.csv, plans.jsonl, plan.html when nout
 * is 5) and the plots of recs in dir into af. Returns whether every one
 * was staged; the first failure is reported. */
static bool stage_outputs(const struct pctx *p, const char *dir, int nout, char *text[3], size_t len[3],
			  const json_t *recs, struct atomic_file af[5], struct diag *d)
{
	bool ok = true;
	for (int i = 0; i < 2 && ok; i++) {
		char *path = xasprintf("%s/%s", dir, plan_out_names[i]);
		ok = stage_text(&af[i], path, text[i], len[i], d) == 0;
		free(path);
	}
	struct plot_goal pg = { p->g->deadline_s / 86400, p->g->budget_usd };
	if (ok && plot_stage_points(recs, dir, p->g->name, &pg, &af[2], d))
		ok = false;
	if (ok && nout == 5) {
		char *path = xasprintf("%s/%s", dir, plan_out_names[4]);
		ok = stage_text(&af[4], path, text[2], len[2], d) == 0;
		free(path);
	}
	return ok;
}

/* DIR/plans.csv, DIR/plans.jsonl (a record per finalist, in rank order),
 * the plots and with --format html DIR/plan.html: rendered in memory,
 * staged, then published together under a lock on DIR
 * (util/atomic_file.h), so a full disk or a kill leaves the earlier
 * plan's files, never a mixed or empty set. Returns whether every file
 * was written. */
bool plan_write_outputs(const struct pctx *p, const struct plan_opts *o, const char *dir, struct diag *d)
{
	char *text[3] = { 0 };
	size_t len[3] = { 0 };
	struct atomic_file af[5] = { 0 };
	int nout = plan_outputs_of(o);
	json_t *recs = json_array();
	bool ok = render_outputs(p, o, nout, text, len, recs);
	if (!ok)
		diag_errf(d, "cannot render the plan output");
	if (ok && report_mkdirs(dir)) {
		diag_err(d, dir, "", "cannot create the output directory: %s", strerror(errno));
		ok = false;
	}
	int lock_fd = ok ? lock_dir(dir) : -1;
	ok = ok && stage_outputs(p, dir, nout, text, len, recs, af, d);
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
int plan_export_plans(const struct pctx *p, const struct plan_opts *o, const char *dir, struct diag *d)
{
	int ranked = 0;
	while (ranked < p->n && study_usable(&p->f[ranked].pt))
		ranked++;
	struct plan_export_row *rows = xcalloc((size_t)ranked + 1, sizeof(*rows));
	for (int i = 0; i < ranked; i++) {
		const struct goal_cluster *cl = &p->g->clusters[p->f[i].c.cluster];
		rows[i] = (struct plan_export_row){ &p->f[i].c.plan, cl->in, cl->name, &cl->econ, p->f[i].pt.gpus };
	}
	int rc = plan_export_write(p->g, o->file, rows, ranked, p->n, o->export_rank, o->nexport, dir, d);
	free(rows);
	return rc;
}

/* Per option: its simulated plans ranked, and the screen's rank
 * correlation with the engine (time per sample). A plan's rank is its
 * place in p->f (plans.csv's, --export's): a later option's ranks go on
 * from the earlier's. */
void plan_print_options(const struct pctx *p)
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
			struct band_pick bp = plan_band_of(p->g, f);
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

void plan_print_best(const struct pctx *p)
{
	int best = best_plan(p);
	printf("\n== best plan that fits (fastest to train%s) ==\n", p->g->budget_usd ? " within the budget" : "");
	if (best < 0) {
		printf("  none of the simulated plans fits in GPU memory: try more nodes, a smaller "
		       "micro-batch or recompute\n");
		return;
	}
	const struct fin *f = &p->f[best];
	struct band_pick bp = plan_band_of(p->g, f);
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
void plan_print_rejected(const struct pctx *p)
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

/* The finalists' analysis points (caller frees). */
static struct study_point *points_of(const struct pctx *p)
{
	struct study_point *pts = xcalloc((size_t)p->n + 1, sizeof(*pts));
	for (int i = 0; i < p->n; i++)
		pts[i] = p->f[i].pt;
	return pts;
}

/* Each cluster option's GPU type, borrowed (caller frees the array). */
static const char **option_gpus(const struct pctx *p)
{
	const char **option_gpu = xcalloc((size_t)p->g->nclusters + 1, sizeof(*option_gpu));
	for (int ci = 0; ci < p->g->nclusters; ci++)
		option_gpu[ci] = plan_gpu_of(p->g, ci);
	return option_gpu;
}

/* The safe count of each GPU type, first: the fewest GPUs whose simulated
 * plan meets the goal even at its error band's slow edge (time and cost x
 * (1 + hi), study_safe_gpus), from the same core of simulations as the
 * fewest GPUs (--top's extra plans never count). */
void plan_print_safe(const struct pctx *p)
{
	if (!p->g->deadline_s && !p->g->budget_usd)
		return;
	struct study_point *pts = points_of(p);
	double *slow = xcalloc((size_t)p->n + 1, sizeof(*slow));
	const char **option_gpu = option_gpus(p);
	struct study_fewest *safe = xcalloc((size_t)p->g->nclusters + 1, sizeof(*safe));
	for (int i = 0; i < p->n; i++)
		slow[i] = p->f[i].ok ? plan_band_of(p->g, &p->f[i]).hi : 0;
	printf("\n== safe count per GPU type: the fewest GPUs whose simulated plan meets the goal "
	       "(deadline %.0f d%s) at its error band's slow edge ==\n",
	       p->g->deadline_s / 86400, p->g->budget_usd ? ", budget" : "");
	int ntypes = study_safe_gpus(pts, p->n, slow, option_gpu, p->g->nclusters, p->g->deadline_s,
				     p->g->budget_usd, safe);
	for (int t = 0; t < ntypes; t++) {
		if (safe[t].point < 0) {
			printf("  %-20s none of the simulated plans meets it at its band's slow edge\n", safe[t].gpu);
			continue;
		}
		const struct fin *f = &p->f[safe[t].point];
		char pt[160], c0[32];
		plan_describe(&f->c.plan, pt, sizeof(pt));
		printf("  %-20s %6ld GPUs (%ld nodes, %s)  %-44s %.1f d, %.1f d at the slow edge (%+.1f %%), $%s\n",
		       safe[t].gpu, f->pt.gpus, (long)f->c.plan.nodes, p->g->clusters[f->c.cluster].name, pt,
		       f->a.gp.wall_s / 86400, f->a.gp.wall_s * (1 + slow[safe[t].point]) / 86400,
		       100 * slow[safe[t].point], human_number(f->a.econ.cost_usd, c0, sizeof(c0)));
	}
	free(safe);
	free(option_gpu);
	free(slow);
	free(pts);
}

/* The Pareto front of all options, and the fewest GPUs of each GPU type
 * that meet the deadline and the budget. */
void plan_print_front(const struct pctx *p)
{
	struct study_point *pts = points_of(p);
	bool *front = xcalloc((size_t)p->n + 1, sizeof(*front));
	const char **option_gpu = option_gpus(p);
	struct study_fewest *fewest = xcalloc((size_t)p->g->nclusters + 1, sizeof(*fewest));

	printf("\n== Pareto front, wall time vs cost (all options) ==\n");
	study_pareto(pts, p->n, front);
	for (int i = 0; i < p->n; i++) {
		const struct fin *f = &p->f[i];
		if (!front[i])
			continue;
		char pt[160];
		plan_describe(&f->c.plan, pt, sizeof(pt));
		struct band_pick bp = plan_band_of(p->g, f);
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
		struct band_pick bp = plan_band_of(p->g, best);
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
char *plan_command_line(int argc, char **argv)
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
long long plan_page_date(void)
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

