/* cmd_sweep: `ddlsim sweep SWEEP.json [--out DIR] [-j N] [--resume]
 *             [--shard I/N] [--timeout S] [--mem-limit GB] [--quiet]`.
 *
 * Expands the sweep (sim/sweep.h), loads each point of this shard through
 * the scenario loader with shared inputs, records the points that fail a
 * constraint, the loader or plan_check() at once as invalid rows with
 * their reason, and simulates the valid ones through the runner, N at a
 * time. Each finished point is appended to DIR/points.csv and
 * DIR/points.jsonl (points.shard-I-of-N.* for a shard) and flushed, so an
 * interrupted sweep keeps every finished point; --resume reads the CSV
 * through libcsv (util/csvfile.h: a quoted error message may hold commas,
 * quotes and line breaks), drops a torn last record and the JSON lines of
 * points the CSV lacks, and runs only the rest. A progress line goes to a terminal. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "assess.h"
#include "plot.h"
#include "cli.h"
#include "csvfile.h"
#include "diag.h"
#include "report.h"
#include "runner.h"
#include "scenario.h"
#include "simulate.h"
#include "sweep.h"
#include "tidy.h"
#include "xalloc.h"

void cmd_sweep_usage(FILE *f)
{
	fprintf(f, "usage: ddlsim sweep SWEEP.json [--out DIR] [-j N] [--resume] [--shard I/N]\n"
		   "                    [--timeout S] [--mem-limit GB] [--quiet]\n\n"
		   "Runs every point of a sweep (schema ddlsim.sweep: a base scenario, axes over\n"
		   "any scenario key, derived values and constraints; see sim/sweep.h). Points\n"
		   "that break a constraint or fail the scenario checks are recorded as invalid\n"
		   "with their reason; the others are simulated, N at a time. One CSV row and one\n"
		   "JSON line per point are appended to DIR/points.csv and DIR/points.jsonl as\n"
		   "each finishes (flushed: an interrupted sweep keeps them). DIR defaults to\n"
		   "the sweep's output.dir, else out/<sweep name>. At the end, DIR/pareto.svg\n"
		   "(time vs cost, Pareto front) and DIR/mfu-gpus.svg plot every point in the file.\n\n"
		   "  --out DIR          output directory\n"
		   "  -j, --jobs N       simulations at once (default 1)\n"
		   "  --resume           skip the points already in the output, run the rest\n"
		   "  --shard I/N        run shard I of N (1-based): the points with index mod N = I-1,\n"
		   "                     into points.shard-I-of-N.{csv,jsonl}; 'ddlsim merge' joins them\n"
		   "  --timeout S        kill a simulation after S seconds (status 'timeout')\n"
		   "  --mem-limit GB     address-space limit per simulation\n"
		   "  --quiet            no progress line or summary\n\n"
		   "examples:\n"
		   "  ddlsim sweep scenarios/sweeps/llama3-70b-h100.json -j 2\n"
		   "  ddlsim sweep scenarios/sweeps/llama3-70b-h100.json --shard 1/4 --out /scratch/s\n"
		   "  ddlsim merge /scratch/s/points.csv /scratch/s/points.shard-*-of-4.csv\n\n"
		   "exit codes: 0 every point ran or was recorded invalid, 1 a simulation or an\n"
		   "output failed, 2 usage, 3 invalid sweep file\n");
}

struct point {
	long index;
	json_t *values;             /* axis and derived values */
	struct scenario *sc;
};

struct sw {
	struct sweep *s;
	struct point *pts;          /* valid points to simulate */
	int npts;
	FILE *csv, *jsonl;
	bool header_done, quiet, tty;
	long total, done, failed, invalid;
	double t0;
	int io_error;
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void progress(struct sw *w, bool last)
{
	if (!w->tty || w->quiet)
		return;
	double dt = now() - w->t0, rate = dt > 0 ? w->done / dt : 0;
	double eta = rate > 0 ? (w->total - w->done) / rate : 0;
	fprintf(stderr, "\r[%ld/%ld] %.2f points/s, ETA %.0f s, %ld failed, %ld invalid   %s", w->done,
		w->total, rate, eta, w->failed, w->invalid, last ? "\n" : "");
}

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
		assess_plan(in, &row->plan, row->tokens_per_s, busy, &w->s->econ, &w->s->goodput, &a);
	}
	tidy_add_row(rec, row, in, row->status == RESULT_OK ? &a : NULL);
	if (!w->header_done) {
		if (tidy_csv_header(w->csv, rec))
			w->io_error = 1;
		w->header_done = true;
	}
	if (tidy_jsonl(w->jsonl, rec) || tidy_csv_row(w->csv, rec))
		w->io_error = 1;
	json_decref(rec);
	w->done++;
	if (row->status == RESULT_INVALID)
		w->invalid++;
	else if (row->status != RESULT_OK)
		w->failed++;
	progress(w, false);
}

static void job(void *ctx, int i, struct result_row *row)
{
	struct sw *w = ctx;
	struct point *p = &w->pts[i];
	simulate_row(p->sc->in, &p->sc->plan, row);
}

static void done(void *ctx, int i, const struct result_row *row)
{
	struct sw *w = ctx;
	struct result_row copy = *row;
	if (copy.status != RESULT_OK)
		copy.plan = w->pts[i].sc->plan;
	emit(w, w->pts[i].index, w->pts[i].values, &copy, w->pts[i].sc->in);
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

/* What read_done learns from the records of an existing CSV. */
struct done {
	const char *csv;
	bool *seen;                 /* per point */
	long npoints;
	bool had_header;
	long good_end;              /* byte offset past the last complete record */
	struct diag *d;
};

/* One record (csvfile.h): the header, which must start with 'point', or
 * a finished point's row. A quoted field may hold commas, quotes and line
 * breaks: the index is the record's first field. */
static int done_record(void *ctx, const struct csvfile_record *r)
{
	struct done *dn = ctx;
	if (!dn->had_header) {
		dn->had_header = true;
		if (strcmp(r->field[0], "point")) {
			diag_err(dn->d, dn->csv, "", "not a sweep output (its header does not start with 'point')");
			return 1;
		}
	} else {
		char *end;
		long i = strtol(r->field[0], &end, 10);
		if (end != r->field[0] && !*end && i >= 0 && i < dn->npoints)
			dn->seen[i] = true;
	}
	dn->good_end = r->end;
	return 0;
}

/* Read the point indices of an existing CSV; cut a torn last record (a
 * kill while a row was written, perhaps inside a quoted field). Returns a
 * calloc'd flag per point, or NULL on error (reported). */
static bool *read_done(const char *csv, long npoints, bool *had_header, struct diag *d)
{
	struct done dn = { .csv = csv, .seen = xcalloc((size_t)npoints, 1), .npoints = npoints, .d = d };
	FILE *f = fopen(csv, "r+");
	*had_header = false;
	if (!f)
		return dn.seen;
	int rc = csvfile_read(f, 0, done_record, &dn);
	if (rc < 0)
		diag_err(d, csv, "", "cannot read: %s", strerror(errno));
	else if (!rc && ftruncate(fileno(f), dn.good_end)) {
		diag_err(d, csv, "", "cannot truncate a torn last line: %s", strerror(errno));
		rc = -1;
	}
	fclose(f);
	if (rc) {
		free(dn.seen);
		return NULL;
	}
	*had_header = dn.had_header;
	return dn.seen;
}

/* Keep only the JSON lines of points in seen (a kill may leave a JSON line
 * whose CSV row was never written, or a torn line). */
static int filter_jsonl(const char *path, const bool *seen, long npoints)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	char *tmp = xasprintf("%s.tmp", path);
	FILE *o = fopen(tmp, "w");
	if (!o) {
		fclose(f);
		free(tmp);
		return -1;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	while ((len = getline(&line, &cap, f)) > 0) {
		if (line[len - 1] != '\n')
			break;
		json_t *j = json_loads(line, 0, NULL);
		json_t *pi = json_object_get(j, "point");
		long i = json_is_integer(pi) ? (long)json_integer_value(pi) : -1;
		if (i >= 0 && i < npoints && seen[i])
			fputs(line, o);
		json_decref(j);
	}
	free(line);
	fclose(f);
	int rc = fclose(o) || rename(tmp, path) ? -1 : 0;
	free(tmp);
	return rc;
}

int cmd_sweep(int argc, char **argv)
{
	const char *file = NULL, *out = NULL;
	struct runner_opts ro = { .jobs = 1 };
	bool resume = false, quiet = false;
	long shard_i = 0, shard_n = 1;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		char *end;
		if ((!strcmp(a, "--out") || !strcmp(a, "-o")) && i + 1 < argc)
			out = argv[++i];
		else if ((!strcmp(a, "-j") || !strcmp(a, "--jobs")) && i + 1 < argc) {
			long j = strtol(argv[++i], &end, 10);
			if (*end || j < 1 || j > 1024)
				return cli_usage_error("%s: expected a number in [1, 1024], got '%s'", a, argv[i]);
			ro.jobs = (int)j;
		} else if (!strcmp(a, "--timeout") && i + 1 < argc) {
			if (cli_parse_number(a, argv[++i], 0.001, 1e7, &ro.timeout_s))
				return EXIT_USAGE;
		} else if (!strcmp(a, "--mem-limit") && i + 1 < argc) {
			double gb;
			if (cli_parse_number(a, argv[++i], 0.01, 1e6, &gb))
				return EXIT_USAGE;
			ro.mem_limit_bytes = gb * 1e9;
		} else if (!strcmp(a, "--shard") && i + 1 < argc) {
			if (cli_parse_shard(a, argv[++i], &shard_i, &shard_n))
				return EXIT_USAGE;
		} else if (!strcmp(a, "--resume"))
			resume = true;
		else if (!strcmp(a, "--quiet") || !strcmp(a, "-q"))
			quiet = true;
		else if (a[0] == '-' && a[1])
			return cli_usage_error("unknown option or missing value '%s' for 'sweep'", a);
		else if (file)
			return cli_usage_error("'sweep' takes one sweep file, got '%s' and '%s'", file, a);
		else
			file = a;
	}
	if (!file)
		return cli_usage_error("'sweep' needs a sweep file");

	struct diag d;
	diag_init(&d, stderr);
	int rc = EXIT_INPUT;
	struct sw w = { .quiet = quiet, .tty = isatty(2) };
	struct inputs_cache *cache = inputs_cache_create();
	char *csv_path = NULL, *jsonl_path = NULL;
	bool *seen = NULL;

	w.s = sweep_load(file, &d);
	if (!w.s)
		goto out;
	const char *dir = out ? out : w.s->out_dir;
	rc = EXIT_FAIL;
	if (report_mkdirs(dir)) {
		diag_err(&d, dir, "", "cannot create the output directory: %s", strerror(errno));
		goto out;
	}
	if (shard_n > 1) {
		csv_path = xasprintf("%s/points.shard-%ld-of-%ld.csv", dir, shard_i + 1, shard_n);
		jsonl_path = xasprintf("%s/points.shard-%ld-of-%ld.jsonl", dir, shard_i + 1, shard_n);
	} else {
		csv_path = xasprintf("%s/points.csv", dir);
		jsonl_path = xasprintf("%s/points.jsonl", dir);
	}
	struct stat st;
	if (!resume && (stat(csv_path, &st) == 0 || stat(jsonl_path, &st) == 0)) {
		diag_err(&d, csv_path, "", "the output exists: pass --resume to continue it, or remove it");
		rc = EXIT_USAGE;
		goto out;
	}
	bool had_header = false;
	seen = resume ? read_done(csv_path, w.s->npoints, &had_header, &d) : xcalloc((size_t)w.s->npoints, 1);
	if (!seen || (resume && filter_jsonl(jsonl_path, seen, w.s->npoints))) {
		if (seen)
			diag_err(&d, jsonl_path, "", "cannot rewrite the JSON lines");
		goto out;
	}
	w.header_done = had_header;
	w.csv = fopen(csv_path, "a");
	w.jsonl = fopen(jsonl_path, "a");
	if (!w.csv || !w.jsonl) {
		diag_err(&d, csv_path, "", "cannot open the output: %s", strerror(errno));
		goto out;
	}

	long skipped = 0;
	for (long i = shard_i; i < w.s->npoints; i += shard_n)
		if (seen[i])
			skipped++;
		else
			w.total++;
	w.t0 = now();
	w.pts = xcalloc((size_t)(w.total ? w.total : 1), sizeof(*w.pts));
	/* expand: invalid points are recorded now, valid ones queued */
	for (long i = shard_i; i < w.s->npoints; i += shard_n) {
		if (seen[i])
			continue;
		char reason[512] = "";
		json_t *values;
		json_t *doc = sweep_point(w.s, i, &values, reason, sizeof(reason));
		struct scenario *sc = NULL;
		struct diag pd;
		diag_init(&pd, NULL);
		if (doc) {
			sc = scenario_load_json(doc, w.s->base_path, cache, &pd);
			if (!sc)
				one_line(diag_text(&pd), reason, sizeof(reason));
			json_decref(doc);
		}
		diag_finish(&pd);
		if (sc) {
			w.pts[w.npts].index = i;
			w.pts[w.npts].values = values;
			w.pts[w.npts++].sc = sc;
			continue;
		}
		/* an invalid point: its row with the base's inputs and plan */
		struct result_row row = { .index = (int)i };
		result_row_fail(&row, RESULT_INVALID, reason);
		struct diag bd;
		diag_init(&bd, NULL);
		struct scenario *base = scenario_load_json(w.s->base, w.s->base_path, cache, &bd);
		diag_finish(&bd);
		if (!base) {
			diag_err(&d, w.s->base_path, "", "the base scenario is invalid: fix it first");
			json_decref(values);
			rc = EXIT_INPUT;
			goto out;
		}
		row.plan = base->plan;
		emit(&w, i, values, &row, base->in);
		scenario_destroy(base);
		json_decref(values);
	}
	if (!quiet && !w.tty && skipped)
		fprintf(stderr, "ddlsim: resuming: %ld points already done\n", skipped);
	if (w.npts && runner_run(&ro, w.npts, job, done, &w, &d))
		goto out;
	progress(&w, true);
	if (w.io_error) {
		diag_err(&d, csv_path, "", "cannot write the output");
		goto out;
	}
	/* the pictures of every point in the file (resumed ones too) */
	if (plot_write_points(jsonl_path, dir, w.s->name, &d))
		goto out;
	if (!quiet)
		printf("%ld points (%ld already done): %ld simulated, %ld invalid, %ld failed; "
		       "rows in %s and %s; plots in %s/pareto.svg and mfu-gpus.svg\n", w.total + skipped, skipped, w.total - w.invalid - w.failed,
		       w.invalid, w.failed, csv_path, jsonl_path, dir);
	rc = w.failed ? EXIT_FAIL : EXIT_OK;
out:
	if (w.csv)
		fclose(w.csv);
	if (w.jsonl)
		fclose(w.jsonl);
	for (int i = 0; i < w.npts; i++) {
		scenario_destroy(w.pts[i].sc);
		json_decref(w.pts[i].values);
	}
	free(w.pts);
	free(seen);
	free(csv_path);
	free(jsonl_path);
	inputs_cache_destroy(cache);
	sweep_destroy(w.s);
	diag_finish(&d);
	return rc;
}
