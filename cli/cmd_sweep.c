/* cmd_sweep: `ddlsim sweep SWEEP.json [--out DIR] [-j N] [--resume]
 *             [--shard I/N] [--timeout S] [--mem-limit GB] [--show-rejected] [--quiet]`.
 *
 * Streams the points of this shard (sim/sweep.h: point i on demand), a
 * batch of SWEEP_CHUNK at a time, so its memory does not grow with the
 * point count (issue 40: 10^6 points start at once): each batch is loaded
 * through the scenario loader with shared inputs, the points that fail a
 * constraint, the loader or plan_check() recorded at once as invalid rows
 * with their reason, and the valid ones simulated through the runner, N
 * at a time. Each finished point is appended to DIR/points.csv and
 * DIR/points.jsonl (points.shard-I-of-N.* for a shard) and flushed, so an
 * interrupted sweep keeps every finished point. Before any output is
 * created, a reason that holds for every point (sweep_precheck(): an axis or
 * derived key that cannot be set, an unknown name in an expression, a
 * loader error every sampled point shares at a key no axis sets, an
 * invalid base) is said once with exit 3, as `ddlsim validate` says it,
 * and the first batch is loaded and checked; no output may be an input
 * (the sweep, its base, a point's model or topology: cli_check_samefile(),
 * before --resume reads the outputs back and again for each batch);
 * DIR/points.ddlsim-origin.json records the sweep the files belong
 * to (cli/sweep_origin.h), and the CSV is locked (flock) while the sweep
 * runs, so a second sweep on the same output is refused instead of
 * duplicating rows.
 *
 * --resume continues only an output of the same sweep and shard (its
 * origin file says so); it reads the CSV through libcsv (util/csvfile.h:
 * a quoted error message may hold commas, quotes and line breaks) and cuts
 * a torn last record, reads the JSON lines and drops torn or foreign ones,
 * then runs every point one of the two files lacks and appends it to the
 * file that lacks it: a JSON line lost to a kill is restored by running its
 * point again (the CSV row lacks the breakdowns the JSON line holds).
 * Before simulating, every point of a batch is estimated and a long sweep
 * says so (cli/longrun.h; extrapolated from the first batch when more
 * follow); a progress line over the batch goes to a terminal, a JSON
 * progress line per point to stderr otherwise (cli/progress.h). The
 * children let go of the outputs and die with the sweep, so --resume
 * right after kill -9 finds the lock free (cli/sweep_resume.h).
 *
 * Fit first: a point that simulated but does not fit in GPU memory has
 * status "oom" (never on the Pareto front); the closing summary names the
 * best point that fits (the fastest to train) before anything else, and
 * --show-rejected lists the points that do not fit apart. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "assess.h"
#include "plot.h"
#include "cli.h"
#include "csvfile.h"
#include "atomic_file.h"
#include "infile.h"
#include "longrun.h"
#include "options.h"
#include "progress.h"
#include "sweep_origin.h"
#include "sweep_resume.h"
#include "sweep_summary.h"
#include "sweep_depends.h"
#include "sweep_precheck.h"
#include "diag.h"
#include "estimate.h"
#include "human.h"
#include "report.h"
#include "reasons.h"
#include "runner.h"
#include "samefile.h"
#include "scenario.h"
#include "simulate.h"
#include "sweep.h"
#include "tidy.h"
#include "xalloc.h"

/* Points are expanded (loaded through the scenario loader) this many at a
 * time, or 4 per job when more: the sweep never holds more, so its memory
 * does not grow with its point count (issue 40: 10^6 points). */
#define SWEEP_CHUNK 512

struct point {
	long index;
	json_t *values;             /* axis and derived values */
	struct scenario *sc;        /* NULL: an invalid point */
	char *reason;               /* why it is invalid */
};


struct sw {
	struct sweep *s;
	struct point *pts;          /* the batch's valid points, to simulate */
	int npts;
	struct point *inv;          /* the batch's invalid points, recorded without simulating */
	int ninv;
	int cap;                    /* points in a batch */
	long next;                  /* the next point index to expand */
	const struct scenario *ref; /* whose inputs an invalid point's row names:
				     * the base, else the first valid point */
	struct scenario *ref_own;   /* ref when it is a point (owned) */
	bool *in_csv, *in_jsonl;    /* per point: the file has it already */
	FILE *csv, *jsonl;
	bool header_done, quiet, tty;
	long total, done, failed, invalid, oom;
	int io_error;
	struct progress *pg;        /* over the batch's points simulated */
	pid_t parent;               /* the sweep's process (its children die with it) */
	double mem_limit_bytes;     /* a point estimated above it is recorded, not run */
};

/* Append point index to the file(s) that lack it. */
static void emit(struct sw *w, long index, json_t *values, const struct result_row *row,
		 const struct inputs *in)
{
	json_t *rec = json_object();
	json_object_set_new(rec, "point", json_integer(index));
	json_object_set_new(rec, "sweep", json_string(w->s->name));
	const char *k;
	json_t *v;
	json_object_foreach(values, k, v)
		json_object_set(rec, k, v);
	struct assessment a;
	if (row->status == RESULT_OK) {
		double busy = row->iteration_s > 0 ? row->mean.compute_s / row->iteration_s : 0;
		assess_plan(in, &row->plan, row->tokens_per_s, busy, row->group_busy, &w->s->econ,
			    &w->s->goodput, &a);
	}
	tidy_add_row(rec, row, in, row->status == RESULT_OK ? &a : NULL);
	if (!w->header_done) {
		if (tidy_csv_header(w->csv, rec))
			w->io_error = 1;
		w->header_done = true;
	}
	if ((!w->in_jsonl[index] && tidy_jsonl(w->jsonl, rec)) ||
	    (!w->in_csv[index] && tidy_csv_row(w->csv, rec)))
		w->io_error = 1;
	json_decref(rec);
	w->done++;
	if (row->status == RESULT_INVALID)
		w->invalid++;
	else if (row->status != RESULT_OK)
		w->failed++;
	else if (!row->fits)
		w->oom++;
}

static void job(void *ctx, int i, struct result_row *row)
{
	struct sw *w = ctx;
	struct point *p = &w->pts[i];
	/* in the child: let go of the outputs (the CSV's lock is its open
	 * file's, which every child shares), and die with the sweep, so that
	 * a sweep killed with -9 can be resumed at once (issue 40) */
	close(fileno(w->csv));
	close(fileno(w->jsonl));
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != w->parent)
		_exit(1);  /* the sweep died before prctl: no row to give */
	simulate_row(p->sc->in, &p->sc->plan, row);
}

static void done(void *ctx, int i, const struct result_row *row)
{
	struct sw *w = ctx;
	struct result_row copy = *row;
	if (copy.status != RESULT_OK)
		copy.plan = w->pts[i].sc->plan;
	emit(w, w->pts[i].index, w->pts[i].values, &copy, w->pts[i].sc->in);
	progress_done(w->pg, i, row->status != RESULT_OK);
}

static void tick(void *ctx, const long *tasks)
{
	struct sw *w = ctx;
	progress_tasks(w->pg, tasks);
}

/* "point 17 (tp=1, dp=64)": a point and its axis values. Caller frees. */
static char *point_label(const struct point *p)
{
	char ax[400] = "";
	size_t len = 0;
	const char *k;
	json_t *v;
	json_object_foreach(p->values, k, v) {
		char *val = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(6));
		if (len < sizeof(ax))
			len += (size_t)snprintf(ax + len, sizeof(ax) - len, "%s%s=%s", len ? ", " : "", k,
						val ? val : "?");
		free(val);
	}
	return *ax ? xasprintf("point %ld (%s)", p->index, ax) : xasprintf("point %ld", p->index);
}

/* Before simulating a batch: estimate its valid points and give the
 * estimates to the progress line; for the first batch (first), warn when
 * the sweep is long (cli/longrun.h): exactly when the batch is the whole
 * sweep, else extrapolated from the batch to the left points to run. */
static void estimate_points(struct sw *w, const char *file, int jobs, bool first, long left)
{
	struct estimate *e = xcalloc((size_t)w->npts + 1, sizeof(*e));
	bool *ok = xcalloc((size_t)w->npts + 1, sizeof(*ok));
	char **label = xcalloc((size_t)w->npts + 1, sizeof(*label));
	double cpu = 0;
	int nok = 0;
	for (int i = 0; i < w->npts; i++) {
		ok[i] = !longrun_estimate(w->pts[i].sc->in, &w->pts[i].sc->plan, &e[i]);
		if (ok[i]) {
			progress_expect(w->pg, i, e[i].cpu_s, e[i].tasks * e[i].runs);
			cpu += e[i].cpu_s;
			nok++;
		}
		label[i] = first ? point_label(&w->pts[i]) : NULL;
	}
	bool warned = false;
	if (first && left <= 0)
		warned = longrun_warn_batch(file, "points", e, ok, (const char *const *)label, w->npts, jobs);
	else if (first && nok) {
		/* the rest are like the first batch: the CPU per point of the batch */
		double all = cpu / nok * (double)(left + w->npts + w->ninv) * w->npts / (w->npts + w->ninv);
		char t[32], wall[32];
		if (all / jobs >= longrun_threshold_s()) {
			fprintf(stderr, "%s: warning: a long sweep: about %s of CPU (%s at %d at once) for %ld points "
				"to run, extrapolated from the first %d (points are expanded %d at a time)\n", file,
				human_duration(all, t, sizeof(t)), human_duration(all / jobs, wall, sizeof(wall)), jobs,
				left + w->npts + w->ninv, w->npts + w->ninv, w->cap);
			warned = true;
		}
	}
	if (warned)
		progress_eager(w->pg);
	for (int i = 0; i < w->npts; i++)
		free(label[i]);
	free(label);
	free(ok);
	free(e);
}

/* One line of diag text: messages joined by "; ". */
static void one_line(const char *text, char *out, size_t n)
{
	snprintf(out, n, "%s", text);
	size_t len = strlen(out);
	while (len && out[len - 1] == '\n')
		out[--len] = 0;
	for (char *c = out; *c; c++)
		if (*c == '\n')
			*c = ';';
}

struct sweep_opts {
	const char *out;
	struct runner_opts ro;
	bool resume, quiet, show_rejected;
	long shard_i, shard_n;      /* 0-based shard of shard_n */
};

/* --shard I/N into shard_i (0-based) and shard_n. */
static int shard_option(const struct opt *o, const char *flag, const char *v, void *base)
{
	struct sweep_opts *so = base;
	(void)o;
	return cli_parse_shard(flag, v, &so->shard_i, &so->shard_n);
}

static const struct opt sweep_options[] = {
	OPT_STRING('o', "out", struct sweep_opts, out, "DIR", "output directory"),
	OPT_FLAG(0, "resume", struct sweep_opts, resume,
		 "continue this sweep's output: run the points it lacks\n"
		 "(refused on another sweep's output)"),
	{ .type = OPT_T_RAW, .long_name = "shard", .off = offsetof(struct sweep_opts, shard_i),
	  .size = 2 * sizeof(long), .argh = "I/N", .cb = shard_option, .example = "2/3",
	  .help = "run shard I of N (1-based): the points with index mod N = I-1,\n"
		  "into points.shard-I-of-N.{csv,jsonl}; 'ddlsim merge' joins them" },
	OPT_FLAG(0, "show-rejected", struct sweep_opts, show_rejected,
		 "list the points that do not fit in GPU memory after the best\n"
		 "point that fits"),
	OPT_FLAG('q', "quiet", struct sweep_opts, quiet,
		 "no progress line (on a terminal), no JSON progress lines on\n"
		 "stderr (otherwise), no summary"),
	OPT_RUNNER(struct sweep_opts, ro),
	OPT_END(),
};

const struct opt_cmd cmd_sweep_opts = {
	.name = "sweep",
	.summary = "run every point of a sweep file into CSV and JSON lines",
	.args = "SWEEP.json",
	.description =
		"Runs every point of a sweep (schema ddlsim.sweep: a base scenario, axes over\n"
		"any scenario key, derived values and constraints; see sim/sweep.h). Points\n"
		"that break a constraint or fail the scenario checks are recorded as invalid\n"
		"with their reason; the others are simulated, N at a time; a point that does\n"
		"not fit in GPU memory gets status 'oom' (never on the Pareto front), and one\n"
		"whose estimated peak memory exceeds --mem-limit is recorded invalid with the\n"
		"estimate, not run. One CSV row and one JSON line per point are appended to\n"
		"DIR/points.csv and DIR/points.jsonl as each finishes (flushed: an interrupted\n"
		"sweep keeps them), with the sweep's record beside them\n"
		"(points.ddlsim-origin.json). DIR defaults to the sweep's output.dir, else\n"
		"out/<sweep name>. At the end, DIR/pareto.svg (time vs cost, Pareto front) and\n"
		"DIR/mfu-gpus.svg plot every point in the file.\n",
	.options = sweep_options,
	.epilogue =
		"examples:\n"
		"  ddlsim sweep scenarios/sweeps/llama3-70b-h100.json -j 2\n"
		"  ddlsim sweep scenarios/sweeps/llama3-70b-h100.json --shard 1/4 --out /scratch/s\n"
		"  ddlsim merge /scratch/s/points.csv /scratch/s/points.shard-*-of-4.csv\n\n"
		"Points stream: they are expanded, recorded and simulated " OPT_STR(SWEEP_CHUNK) " at a time, so a\n"
		"sweep of 10^6 points starts at once in little memory. A reason that holds\n"
		"for every point (a typo in a derived value, an unknown name in a constraint,\n"
		"an expression undefined at every point such as a division by zero, an axis\n"
		"on a key of the model file, an unknown key, an invalid base no axis changes)\n"
		"is said once before the first point, exit 3. A point where an expression is\n"
		"undefined while others are not is recorded invalid with the expression.\n\n"
		"exit codes: 0 every point ran or was recorded invalid, 1 a simulation or an\n"
		"output failed or another sweep holds the output, 2 usage (the output exists\n"
		"without --resume), 3 invalid sweep file or a reason for every point, or an\n"
		"output that is another sweep's, not a sweep output, not a regular file or an\n"
		"input (the sweep, its base, their model or topology; links count)\n",
	.size = sizeof(struct sweep_opts),
};

/* The options into o and the one sweep file into *file. Returns 0 or
 * EXIT_USAGE (said). */
static int parse_args(int argc, char **argv, struct sweep_opts *o, const char **file)
{
	const char **pos = xcalloc((size_t)argc, sizeof(*pos));
	int n = 0, rc = opt_parse(&cmd_sweep_opts, argc, argv, o, pos, &n);
	if (!rc && n == 0)
		rc = cli_usage_error("'sweep' needs a sweep file");
	else if (!rc && n > 1)
		rc = cli_usage_error("'sweep' takes one sweep file, got '%s' and '%s'", pos[0], pos[1]);
	*file = n ? pos[0] : NULL;
	free(pos);
	return rc;
}

/* Free the batch's points. */
static void free_batch(struct sw *w)
{
	for (int i = 0; i < w->npts; i++) {
		scenario_destroy(w->pts[i].sc);
		json_decref(w->pts[i].values);
	}
	for (int i = 0; i < w->ninv; i++) {
		json_decref(w->inv[i].values);
		free(w->inv[i].reason);
	}
	w->npts = w->ninv = 0;
}

/* Expand the next batch of this shard's points the outputs lack, from
 * point w->next on: valid ones into w->pts, invalid ones (with their
 * reason) into w->inv, w->cap in all at most; w->next moves past them. */
static void expand(struct sw *w, const struct sweep_opts *o, struct inputs_cache *cache)
{
	free_batch(w);
	for (; w->next < w->s->npoints && w->npts + w->ninv < w->cap; w->next += o->shard_n) {
		long i = w->next;
		if (w->in_csv[i] && w->in_jsonl[i])
			continue;
		char reason[512] = "";
		json_t *values;
		json_t *doc = sweep_point(w->s, i, &values, reason, sizeof(reason));
		struct scenario *sc = NULL;
		struct diag pd;
		diag_init(&pd, NULL);
		if (doc) {
			sc = scenario_load_json(doc, w->s->base_path, cache, &pd);
			if (!sc)
				one_line(diag_text(&pd), reason, sizeof(reason));
			json_decref(doc);
		}
		diag_finish(&pd);
		struct estimate e;
		double need;
		if (sc && !longrun_estimate(sc->in, &sc->plan, &e) && (need = estimate_job_bytes(&e)) > w->mem_limit_bytes) {
			/* admission: recorded with the estimate, never started */
			char ev[32];
			snprintf(reason, sizeof(reason), "needs about %.3g GB of memory (estimated: %d of %d ranks "
				 "simulated, %s events), over the %s--mem-limit of %.3g GB", need / 1e9, e.simulated,
				 e.ranks, human_number((double)e.tasks + (double)e.flows, ev, sizeof(ev)),
				 o->ro.mem_limit_bytes > 0 ? "" : "default ", w->mem_limit_bytes / 1e9);
			scenario_destroy(sc);
			sc = NULL;
		}
		struct point *p = sc ? &w->pts[w->npts++] : &w->inv[w->ninv++];
		*p = (struct point){ .index = i, .values = values, .sc = sc,
				     .reason = sc ? NULL : xstrdup(reason) };
	}
}

/* The output paths of this shard, checked: regular files or nothing, an
 * origin's name free or an origin (cli/sweep_origin.h), and noted in sf
 * (what names dir: "--out", "output.dir"). */
static int output_paths(const struct sweep_opts *o, const char *dir, const char *what, struct samefile *sf,
			char **csv, char **jsonl)
{
	if (o->shard_n > 1) {
		*csv = xasprintf("%s/points.shard-%ld-of-%ld.csv", dir, o->shard_i + 1, o->shard_n);
		*jsonl = xasprintf("%s/points.shard-%ld-of-%ld.jsonl", dir, o->shard_i + 1, o->shard_n);
	} else {
		*csv = xasprintf("%s/points.csv", dir);
		*jsonl = xasprintf("%s/points.jsonl", dir);
	}
	char *p[5] = { *csv, *jsonl, sweep_origin_path(*csv), xasprintf("%s/pareto.svg", dir),
		       xasprintf("%s/mfu-gpus.svg", dir) };
	int rc = 0;
	for (int i = 0; i < 5; i++) {
		samefile_output(sf, what, p[i]);
		if (!rc)
			rc = cli_check_output(p[i]);
	}
	char why[1200];
	if (!rc && sweep_origin_check_target(*csv, why, sizeof(why))) {
		fprintf(stderr, "ddlsim: %s '%s': error: %s\n", what, dir, why);
		rc = EXIT_INPUT;
	}
	for (int i = 2; i < 5; i++)
		free(p[i]);
	return rc;
}

/* After expanding: no point's scenario inputs (an axis may name another
 * model or topology) may be an output the resumed sweep appends to.
 * Returns 0 or an exit code after saying which. */
static int check_point_inputs(const struct sw *w, const char *what, const char *csv, const char *jsonl)
{
	struct samefile *sf = samefile_create();
	for (int i = 0; i < w->npts; i++)
		cli_note_scenario(sf, w->pts[i].sc);
	char *origin = sweep_origin_path(csv);
	samefile_output(sf, what, csv);
	samefile_output(sf, what, jsonl);
	samefile_output(sf, what, origin);
	free(origin);
	int rc = cli_check_samefile(sf);
	samefile_destroy(sf);
	return rc;
}

/* Create (or continue) the outputs: the origin, the CSV (locked), the
 * JSON lines. Returns 0 or an exit code after reporting. */
static int open_outputs(struct sw *w, int *csv_fd, const char *csv_path, const char *jsonl_path,
			const struct sweep_origin *me, struct diag *d)
{
	int e = sweep_origin_write(csv_path, me);
	if (e) {
		diag_err(d, csv_path, "", "cannot write its origin file: %s",
			 e == -EEXIST ? "a file that is not an origin has its name" : atomic_file_strerror(-e));
		return EXIT_FAIL;
	}
	int rc;
	if (*csv_fd < 0 && (rc = sweep_resume_open_csv(csv_path, true, csv_fd, d)))
		return rc;
	w->csv = fdopen(*csv_fd, "a");
	if (w->csv)
		*csv_fd = -1;  /* the stream owns it (and its lock) now */
	w->jsonl = fopen(jsonl_path, "a");
	if (!w->csv || !w->jsonl) {
		diag_err(d, w->csv ? jsonl_path : csv_path, "", "cannot open the output: %s", strerror(errno));
		return EXIT_FAIL;
	}
	return 0;
}

/* Record the batch's invalid points, simulate its valid ones. Returns 0 or
 * an exit code after reporting. */
static int run_batch(struct sw *w, const struct sweep_opts *o, const char *csv_path, struct diag *d)
{
	for (int k = 0; k < w->ninv; k++) {
		struct result_row row = { .index = (int)w->inv[k].index };
		result_row_fail(&row, RESULT_INVALID, w->inv[k].reason);
		row.plan = w->ref->plan;
		emit(w, w->inv[k].index, w->inv[k].values, &row, w->ref->in);
	}
	struct runner_opts ro = o->ro;
	ro.tick = tick;
	if (w->npts && runner_run(&ro, w->npts, job, done, w, d))
		return EXIT_FAIL;
	progress_destroy(w->pg);
	w->pg = NULL;
	if (w->io_error || fflush(w->csv) || fflush(w->jsonl)) {
		diag_err(d, csv_path, "", "cannot write the output");
		return EXIT_FAIL;
	}
	return 0;
}

/* The sweep file, its base's name and its hash into me. Returns the
 * sweep (sweep_destroy()), or NULL after saying why. */
static struct sweep *load_sweep(const char *file, struct sweep_origin *me, struct diag *d)
{
	char why[1200];
	if (cli_check_input_name(file))
		return NULL;
	struct sweep *s = sweep_load(file, d);
	if (!s)
		return NULL;
	if (cli_check_input_name(s->base_path))
		goto fail;
	if (sweep_origin_hash(file, s->base_path, me->hash, why, sizeof(why))) {
		diag_err(d, file, "", "%s", why);
		goto fail;
	}
	snprintf(me->sweep, sizeof(me->sweep), "%s", s->name);
	me->points = s->npoints;
	return s;
fail:
	sweep_destroy(s);
	return NULL;
}

/* The outputs' paths into *csv and *jsonl (caller frees), none an input
 * (the sweep, its base and the base's inputs: cli_check_samefile) nor
 * another output, the directory dir created, and an existing output
 * refused without --resume. Returns 0 or an exit code after saying why. */
static int prepare_outputs(const struct sweep_opts *o, const char *file, const struct sweep *s,
			   const struct scenario *base, const char *dir, const char *what, char **csv, char **jsonl,
			   struct diag *d)
{
	struct samefile *sf = samefile_create();
	samefile_input(sf, "the sweep", file);
	samefile_input(sf, "the base scenario", s->base_path);
	if (base)
		cli_note_scenario(sf, base);
	samefile_inputs_read(sf, "a file it read", 0);
	int rc = output_paths(o, dir, what, sf, csv, jsonl);
	if (!rc)
		rc = cli_check_samefile(sf);
	samefile_destroy(sf);
	if (rc)
		return rc;
	if (report_mkdirs(dir)) {
		diag_err(d, dir, "", "cannot create the output directory: %s", strerror(errno));
		return EXIT_FAIL;
	}
	struct stat st;
	if (!o->resume && (stat(*csv, &st) == 0 || stat(*jsonl, &st) == 0)) {
		diag_err(d, *csv, "", "the output exists: pass --resume to continue it, or remove it");
		return EXIT_USAGE;
	}
	return 0;
}

/* This shard's points: those to simulate counted into w->total; returns
 * how many both outputs already hold (resumed). */
static long count_points(struct sw *w, const struct sweep_opts *o)
{
	long skipped = 0;
	for (long i = o->shard_i; i < w->s->npoints; i += o->shard_n)
		if (w->in_csv[i] && w->in_jsonl[i])
			skipped++;
		else
			w->total++;
	return skipped;
}

/* The batch's buffers: a batch of at least SWEEP_CHUNK points (4 per
 * job), the memory limit (--mem-limit, else longrun's default), the
 * first point this shard's. */
static void batch_init(struct sw *w, const struct sweep_opts *o)
{
	w->cap = o->ro.jobs * 4 > SWEEP_CHUNK ? o->ro.jobs * 4 : SWEEP_CHUNK;
	w->mem_limit_bytes = o->ro.mem_limit_bytes > 0 ? o->ro.mem_limit_bytes : longrun_mem_default_bytes();
	w->pts = xcalloc((size_t)w->cap, sizeof(*w->pts));
	w->inv = xcalloc((size_t)w->cap, sizeof(*w->inv));
	w->next = o->shard_i;
}

/* The batches after the first (expanded and checked): each estimated,
 * simulated and recorded, the next then expanded and checked. Returns 0
 * or an exit code after reporting. */
static int stream_points(struct sw *w, const struct sweep_opts *o, struct inputs_cache *cache, const char *file,
			 const char *what, const char *csv_path, const char *jsonl_path, struct diag *d)
{
	int rc;
	bool first = true;
	for (long left = w->total - w->npts - w->ninv;; left -= w->npts + w->ninv, first = false) {
		w->pg = progress_create("sweep", "points", w->npts, o->ro.jobs, o->quiet, true);
		estimate_points(w, file, o->ro.jobs, first, left);
		if ((rc = run_batch(w, o, csv_path, d)))
			return rc;
		if (left <= 0)
			return 0;
		expand(w, o, cache);
		if ((rc = check_point_inputs(w, what, csv_path, jsonl_path)))
			return rc;
	}
}

/* After the last batch: the plots of every point in the file (resumed
 * ones too), the summary and the closing line. Returns an exit code. */
static int finish_points(struct sw *w, const struct sweep_opts *o, long skipped, const char *csv_path,
			 const char *jsonl_path, const char *dir, struct diag *d)
{
	if (fflush(w->jsonl) || plot_write_points(jsonl_path, dir, w->s->name, d))
		return EXIT_FAIL;
	if (!o->quiet || o->show_rejected)
		sweep_summary_print(jsonl_path, o->show_rejected);
	if (!o->quiet)
		printf("%ld points (%ld already done): %ld simulated (%ld do not fit in memory), %ld invalid, %ld failed; "
		       "rows in %s and %s; plots in %s/pareto.svg and mfu-gpus.svg\n", w->total + skipped, skipped,
		       w->total - w->invalid - w->failed, w->oom, w->invalid, w->failed, csv_path, jsonl_path, dir);
	return w->failed ? EXIT_FAIL : EXIT_OK;
}

/* The progress line and the output streams closed. */
static void close_streams(struct sw *w)
{
	progress_destroy(w->pg);
	if (w->csv)
		fclose(w->csv);
	if (w->jsonl)
		fclose(w->jsonl);
}

int cmd_sweep(int argc, char **argv)
{
	struct sweep_opts o = { .ro = { .jobs = 1 }, .shard_n = 1 };
	const char *file;
	int rc = parse_args(argc, argv, &o, &file);
	if (rc)
		return rc;

	struct diag d;
	diag_init(&d, stderr);
	rc = EXIT_INPUT;
	struct sw w = { .quiet = o.quiet, .tty = isatty(STDERR_FILENO), .parent = getpid() };
	struct inputs_cache *cache = inputs_cache_create();
	struct scenario *base = NULL;
	char *csv_path = NULL, *jsonl_path = NULL;
	int csv_fd = -1;
	struct sweep_origin me = { .shard = o.shard_i + 1, .shards = o.shard_n };

	if (!(w.s = load_sweep(file, &me, &d)))
		goto out;
	const char *dir = o.out ? o.out : w.s->out_dir, *what = o.out ? "--out" : "output.dir";
	/* no output may replace the sweep, its base or the base's inputs
	 * (cli_check_samefile), checked before --resume reads an output back */
	struct diag bd;
	diag_init(&bd, NULL);
	base = scenario_load_json(w.s->base, w.s->base_path, cache, &bd);
	rc = sweep_precheck(w.s, cache, base, diag_text(&bd), &w.ref, &w.ref_own, &d);
	diag_finish(&bd);
	if (rc)
		goto out;
	if ((rc = prepare_outputs(&o, file, w.s, base, dir, what, &csv_path, &jsonl_path, &d)))
		goto out;
	w.in_csv = xcalloc((size_t)w.s->npoints, 1);
	w.in_jsonl = xcalloc((size_t)w.s->npoints, 1);
	if (o.resume && ((rc = sweep_resume_open_csv(csv_path, false, &csv_fd, &d)) ||
			 (rc = sweep_resume_read(csv_path, jsonl_path, csv_fd, &me, w.s->npoints, w.in_csv, w.in_jsonl,
						    &w.header_done, &d))))
		goto out;
	long skipped = count_points(&w, &o);
	/* the points stream: a batch is expanded, checked, recorded and
	 * simulated before the next is expanded (the first before any
	 * output is created or changed) */
	batch_init(&w, &o);
	expand(&w, &o, cache);
	if ((rc = check_point_inputs(&w, what, csv_path, jsonl_path)) ||
	    (rc = open_outputs(&w, &csv_fd, csv_path, jsonl_path, &me, &d)))
		goto out;
	if (!o.quiet && !w.tty && skipped)
		fprintf(stderr, "ddlsim: resuming: %ld points already done\n", skipped);
	if ((rc = stream_points(&w, &o, cache, file, what, csv_path, jsonl_path, &d)))
		goto out;
	rc = finish_points(&w, &o, skipped, csv_path, jsonl_path, dir, &d);
out:
	close_streams(&w);
	if (csv_fd >= 0)
		close(csv_fd);
	free_batch(&w);
	scenario_destroy(w.ref_own);
	scenario_destroy(base);
	free(w.pts);
	free(w.inv);
	free(w.in_csv);
	free(w.in_jsonl);
	free(csv_path);
	free(jsonl_path);
	inputs_cache_destroy(cache);
	sweep_destroy(w.s);
	diag_finish(&d);
	return rc;
}
