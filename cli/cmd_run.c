/* cmd_run: `ddlsim run SCENARIO... [options]` (its options: the table
 * below, cli/options.h).
 *
 * One scenario runs in this process, prints its summary and writes its
 * reports. Several scenarios are all loaded and checked first (any invalid
 * file: exit 3, nothing simulated), then simulated by the runner, one
 * forked child each, N at a time; each child writes its scenario's reports
 * and sends back its row; the parent writes one CSV with a row per
 * scenario, in the order given, once all have ended. Before simulating,
 * each scenario is estimated and a long one says so (cli/longrun.h); a
 * progress line goes to a terminal (cli/progress.h): one scenario's from
 * its engine's task count, several from their children's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "cleanup.h"
#include "cli.h"
#include "diag.h"
#include "engine.h"
#include "longrun.h"
#include "options.h"
#include "progress.h"
#include "report.h"
#include "runner.h"
#include "samefile.h"
#include "scenario.h"
#include "simulate.h"
#include "timeline.h"
#include "trace.h"
#include "xalloc.h"

struct run_opts {
	const char *out;            /* NULL, "-" or a directory */
	unsigned formats;           /* enum report_format bits of --format, 0: not given */
	const char *trace;          /* --trace FILE, NULL: none */
	const char *trace_ranks;    /* --trace-ranks LIST, NULL: a rank per class */
	double trace_link_period_s; /* --trace-link-period, 0: no link sampling */
	bool quiet, per_rank;
	struct runner_opts ro;      /* jobs 0: not given (1) */
};

/* --trace-link-period: 0 (off) or at least CLI_MIN_LINK_PERIOD_S. */
static int link_period(const struct opt *o, const char *flag, const char *v, void *base)
{
	double *s = (double *)((char *)base + o->off);
	if (cli_parse_number(flag, v, o->lo, o->hi, s))
		return EXIT_USAGE;
	if (*s > 0 && *s < CLI_MIN_LINK_PERIOD_S)
		return cli_usage_error("%s: expected 0 (off) or at least %g s (a link's latency; finer "
				       "samples see nothing new), got '%s'", flag, CLI_MIN_LINK_PERIOD_S, v);
	return 0;
}

static const char *const format_names[] = { "json", "csv", "svg", "html", "kineto", NULL };

static const struct opt run_options[] = {
	OPT_STRING('o', "out", struct run_opts, out, "DIR|-",
		   "report directory; '-': the CSV on stdout and no report files"),
	OPT_BITS(0, "format", struct run_opts, formats, "LIST", format_names,
		 "comma-separated: json (report.json), csv (report.csv), svg\n"
		 "(breakdown.svg, schedule.svg, memory.svg), html (report.html,\n"
		 "self-contained), kineto (kineto.pt.trace.json: the per-kernel\n"
		 "table as a PyTorch profiler trace, which calib-trace reads);\n"
		 "default: the scenario's output.formats, else json,csv"),
	OPT_FLAG(0, "per-rank", struct run_opts, per_rank,
		 "a row per rank in report.json (breakdown.per_rank), every\n"
		 "rank; without it only breakdown.rank_classes (ranks with\n"
		 "equal figures grouped, with their count and ranges)"),
	OPT_FLAG('q', "quiet", struct run_opts, quiet, "no summary or progress"),
	OPT_GROUP("trace options (one scenario, simulated in this process)"),
	OPT_FILE(0, "trace", struct run_opts, trace, "FILE",
		 "write the iteration's timeline as Chrome trace-event JSON\n"
		 "(open in ui.perfetto.dev), gzip-compressed if FILE ends in\n"
		 ".gz: a process per recorded rank, a track per stream, a\n"
		 "slice per task (times to the nanosecond), send->recv\n"
		 "arrows, memory in use"),
	OPT_STRING(0, "trace-ranks", struct run_opts, trace_ranks, "LIST",
		   "ranks to record: 'all' (every simulated rank) or ranks like\n"
		   "0-7,64 (default: one rank per class of alike ranks, e.g.\n"
		   "one per pipeline stage, labelled with the ranks it stands for);\n"
		   "a rank beyond the job is an error, a rank folded into its\n"
		   "replicas' representative (not simulated) a warning"),
	{ .type = OPT_T_NUMBER, .long_name = "trace-link-period", OPT_F_(struct run_opts, trace_link_period_s),
	  .argh = "S", .lo = 0, .hi = 1e6, .cb = link_period,
	  .help = "sample link usage every S simulated seconds for the\n"
		  "busiest-links counters (default 0.01; 0: off; at least\n"
		  "1e-6; the period doubles after every 4096 samples, so a\n"
		  "long run's trace stays bounded)" },
	OPT_RUNNER(struct run_opts, ro),
	OPT_END(),
};

const struct opt_cmd cmd_run_opts = {
	.name = "run",
	.summary = "simulate a scenario and write its reports",
	.args = "SCENARIO...",
	.description =
		"Simulates one training iteration of each SCENARIO on SimGrid.\n\n"
		"One scenario: prints a summary and writes DIR/report.json and DIR/report.csv\n"
		"(atomically: a failed run leaves no report). DIR defaults to the scenario's\n"
		"output.dir, else out/<scenario name>.\n\n"
		"Several scenarios, or any runner option: every file is checked before anything\n"
		"runs; then each is simulated in its own process, N at a time, and writes its\n"
		"reports to DIR/<name>/ (or its own output.dir without --out); one CSV with a\n"
		"row per scenario, in the order given (columns as report.csv, plus status and\n"
		"error), goes to DIR/runs.csv, or to stdout without --out. A simulation that\n"
		"fails, crashes or passes a limit gives a row with its status and error; the\n"
		"others go on. A scenario whose estimated peak memory exceeds --mem-limit is\n"
		"refused before simulating (exit 3).\n",
	.options = run_options,
	.epilogue =
		"examples:\n"
		"  ddlsim run scenarios/quickstart.json\n"
		"  ddlsim run scenarios/gpt3-175b-dp1024.json --out /tmp/r --format json\n"
		"  ddlsim run scenarios/quickstart.json --format json,csv,svg,html\n"
		"  ddlsim run scenarios/megatron/76b.json --trace /tmp/76b.trace.json.gz\n"
		"  ddlsim run scenarios/megatron/76b.json --trace /tmp/76b.trace.json --trace-ranks all\n"
		"  ddlsim run scenarios/megatron/*.json -j 2 --out -\n\n"
		"No output may be an input (the scenario, its model, topology, GPU preset,\n"
		"profile; by device and inode, so a link counts): refused before anything\n"
		"runs, exit 3. Two outputs for one file (--trace DIR/report.json) are a usage\n"
		"error.\n\n"
		"exit codes: 0 ok, 1 a simulation or report failed, 2 usage, 3 invalid input or\n"
		"an output that is an input\n",
	.size = sizeof(struct run_opts),
};

/* The formats a scenario's reports are written in: --format, else its
 * output.formats. */
static unsigned formats_of(const struct run_opts *o, const struct scenario *sc)
{
	unsigned pr = o->per_rank ? REPORT_PER_RANK : 0;
	if (o->formats)
		return o->formats | pr;
	return (sc->want_json ? REPORT_JSON : 0) | (sc->want_csv ? REPORT_CSV : 0) |
	       (sc->want_svg ? REPORT_SVG : 0) | (sc->want_html ? REPORT_HTML : 0) | pr;
}

struct batch {
	const struct run_opts *o;
	struct scenario **sc;
	char **dirs;                /* report directory per scenario, NULL = none */
	struct result_row *rows;
	int n, done, failed;
	struct progress *pg;
};

/* The report files of dir (none: NULL) in the formats and the trace as
 * outputs of sf (what names dir: "--out", "output.dir"), each a regular
 * file or nothing (cli_check_output). Returns 0, or EXIT_INPUT after
 * saying which is not. */
static int note_outputs(struct samefile *sf, const char *what, const char *dir, unsigned formats,
			const char *trace)
{
	char *names[7];
	int n = dir ? report_paths(dir, formats, names) : 0, rc = cli_check_output(trace);
	samefile_output(sf, "--trace", trace);
	for (int i = 0; i < n; i++) {
		samefile_output(sf, what, names[i]);
		if (!rc)
			rc = cli_check_output(names[i]);
		free(names[i]);
	}
	return rc;
}

/* One scenario in this process: the long-run warning and the progress
 * line's expectation from the run's estimate, the line from the engine's
 * count (in memory shared with the what-if's side runs, runner.h). */
struct one_run {
	const char *path;
	struct progress *pg;
	atomic_long *board;
};

static void one_before(void *ctx, const struct estimate *e)
{
	struct one_run *o = ctx;
	if (longrun_warn(o->path, e))
		progress_eager(o->pg);
	progress_expect(o->pg, 0, e->cpu_s, e->tasks * e->runs);
}

static void one_tick(void *ctx)
{
	struct one_run *o = ctx;
	long tasks = atomic_load_explicit(&o->board[0], memory_order_relaxed);
	progress_tasks(o->pg, &tasks);
}

/* Simulate sc into r with hooks h, recording the timeline the schedule
 * chart draws when the formats have one (svg, html), h's observer (the
 * trace's) inside it. Returns 0 or -1 (reported). */
static int simulate_recorded(struct scenario *sc, unsigned formats, struct simulate_hooks *h,
			     struct result *r, struct diag *d)
{
	struct timeline *tl = formats & (REPORT_SVG | REPORT_HTML) ? timeline_create(h->obs) : NULL;
	if (tl)
		h->obs = timeline_observer(tl);
	int rc = simulate_run_hooked(sc->in, &sc->plan, h, r, d);
	if (rc)
		timeline_destroy(tl);
	else
		result_set_timeline(r, tl);
	return rc;
}

/* Simulate sc in this process into r, with the warning and the progress
 * line (none with quiet), and the timeline (simulate_recorded).
 * Returns 0 or -1 (reported). */
static int simulate_one(struct scenario *sc, unsigned formats, struct trace *tr, bool quiet,
			struct result *r, struct diag *d)
{
	struct one_run one = { .path = sc->meta.path, .board = runner_board_create(1) };
	one.pg = progress_create("run", "scenarios", 1, 1, quiet, false);
	struct engine_progress ep = { .tasks = &one.board[0], .tick = one_tick, .ctx = &one };
	struct simulate_hooks h = { .obs = tr ? trace_observer(tr) : NULL, .before = one_before,
				    .ctx = &one };
	engine_set_progress(&ep);
	int rc = simulate_recorded(sc, formats, &h, r, d);
	engine_set_progress(NULL);
	progress_destroy(one.pg);
	runner_board_destroy(one.board, 1);
	return rc;
}

/* --trace-ranks against the job's nranks ranks (0: its syntax only), as
 * a usage error. Returns 0 or EXIT_USAGE. */
static int check_trace_ranks(const char *ranks, long nranks)
{
	struct diag td;
	int rc = 0;
	diag_init(&td, NULL);
	if (trace_ranks_check(ranks, nranks, &td)) {
		const char *m = diag_text(&td);
		m += strncmp(m, "error: ", 7) ? 0 : 7;
		rc = cli_usage_error("%.*s", (int)strcspn(m, "\n"), m);
	}
	diag_finish(&td);
	return rc;
}

/* Say on stderr, even quiet, that r's plan does not fit: its time is
 * what the plan would take with memory enough (the report's
 * memory.fits; validate exits 4 for it). */
static void warn_nofit(const char *path, const struct result *r)
{
	if (r->fits)
		return;
	fprintf(stderr, "ddlsim: warning: %s: the plan does not fit in GPU memory: stage %d needs %.1f GB per GPU, "
		"%.1f GB more than it has; the time reported is the time with memory enough\n", path,
		r->worst_stage, r->worst_total_bytes / 1e9, r->shortfall_bytes / 1e9);
}

/* No output of sc's run (into dir, none on stdout) may replace an input
 * or another output (cli_check_samefile). Returns 0 or an exit code after
 * saying why. */
static int check_run_outputs(struct scenario *sc, const struct run_opts *o, const char *dir, bool to_stdout)
{
	struct samefile *sf = samefile_create();
	cli_note_scenario(sf, sc);
	samefile_inputs_read(sf, "a file it read", 0);
	int rc = note_outputs(sf, o->out ? "--out" : "output.dir", to_stdout ? NULL : dir, formats_of(o, sc),
			      o->trace);
	if (!rc)
		rc = cli_check_samefile(sf);
	samefile_destroy(sf);
	return rc;
}

/* A trace inside the output directory dir: the trace's directory created
 * first (the trace streams into a temporary file beside its name).
 * Returns 0 or -1 (reported). */
static int make_trace_dir(const struct run_opts *o, const char *dir, bool to_stdout, struct diag *d)
{
	size_t dl = strlen(dir);
	const char *slash = o->trace ? strrchr(o->trace, '/') : NULL;
	if (!slash || to_stdout || strncmp(o->trace, dir, dl) || o->trace[dl] != '/')
		return 0;
	char *tdir = xasprintf("%.*s", (int)(slash - o->trace), o->trace);
	int e = report_mkdirs(tdir) ? errno : 0;
	if (e)
		diag_err(d, tdir, "", "cannot create the trace's directory: %s", strerror(e));
	free(tdir);
	return e ? -1 : 0;
}

/* -o -: r's CSV on stdout, then the trace published. Returns an exit
 * code. */
static int write_stdout(const struct result *r, const struct run_opts *o, struct atomic_file *trace_af,
			struct diag *d)
{
	if (report_write_csv_stream(r, stdout, true) || fflush(stdout))
		return EXIT_FAIL;
	int e = atomic_file_publish(trace_af, 1);
	if (e) {
		diag_err(d, o->trace, "", "cannot write the trace: %s", strerror(-e));
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

/* Run one scenario in this process (summary, reports and trace, published
 * together or not at all). */
static int run_one(struct scenario *sc, const struct run_opts *o, struct diag *d)
{
	struct result r;
	int rc = EXIT_FAIL;
	bool to_stdout = o->out && !strcmp(o->out, "-");
	const char *dir = o->out ? o->out : sc->out_dir;
	struct atomic_file trace_af = { 0 };

	if (o->trace_ranks && check_trace_ranks(o->trace_ranks, plan_gpus(&sc->plan, sc->in)))
		return EXIT_USAGE;
	if ((rc = check_run_outputs(sc, o, dir, to_stdout)))
		return rc;
	rc = EXIT_FAIL;
	cleanup_phase("simulating");
	struct trace *tr = NULL;
	if (make_trace_dir(o, dir, to_stdout, d))
		return EXIT_FAIL;
	if (o->trace && !(tr = trace_create(o->trace, o->trace_ranks, o->trace_link_period_s, d)))
		return EXIT_FAIL;
	if (simulate_one(sc, to_stdout ? 0 : formats_of(o, sc), tr, o->quiet || to_stdout, &r, d)) {
		trace_destroy(tr);
		return EXIT_FAIL;
	}
	if (tr && trace_finish(tr, &r, &trace_af, d)) {
		result_finish(&r);
		return EXIT_FAIL;
	}
	result_set_meta(&r, &sc->meta);
	warn_nofit(sc->meta.path, &r);
	cleanup_phase("writing the reports");
	if (to_stdout) {
		rc = write_stdout(&r, o, &trace_af, d);
		goto out;
	}
	if (!o->quiet)
		report_print_summary(&r, stdout);
	if (report_write(&r, dir, formats_of(o, sc), &trace_af, d))
		goto out;
	if (!o->quiet)
		printf("\nreports written to %s/\n", dir);
	rc = EXIT_OK;
out:
	atomic_file_abort(&trace_af);
	result_finish(&r);
	return rc;
}

/* In a runner child: simulate scenario i, write its reports, fill the row. */
static void batch_job(void *ctx, int i, struct result_row *row)
{
	struct batch *b = ctx;
	struct scenario *sc = b->sc[i];
	struct result r;
	struct diag d;

	diag_init(&d, b->o->quiet ? NULL : stderr);
	struct simulate_hooks h = { 0 };
	if (simulate_recorded(sc, b->dirs[i] ? formats_of(b->o, sc) : 0, &h, &r, &d)) {
		result_row_fail(row, RESULT_FAILED, diag_text(&d));
		goto out;
	}
	result_set_meta(&r, &sc->meta);
	if (b->dirs[i]) {
		if (report_write(&r, b->dirs[i], formats_of(b->o, sc), NULL, &d)) {
			result_row_fail(row, RESULT_FAILED, diag_text(&d));
			result_finish(&r);
			goto out;
		}
	}
	result_row_fill(row, &r);
	result_finish(&r);
out:
	diag_finish(&d);
}

static void batch_done(void *ctx, int i, const struct result_row *row)
{
	struct batch *b = ctx;
	b->rows[i] = *row;
	b->done++;
	if (row->status != RESULT_OK)
		b->failed++;
	progress_clear(b->pg);     /* the line below the message, not before it */
	if (row->status == RESULT_OK && !row->fits)  /* said even quiet */
		fprintf(stderr, "ddlsim: warning: %s: the plan %s\n", b->sc[i]->meta.path, row->reason);
	if (!b->o->quiet && row->status == RESULT_OK)
		fprintf(stderr, "[%d/%d] %s: %.4f s per iteration, MFU %.1f%%%s\n", b->done, b->n,
			b->sc[i]->meta.name, row->iteration_s, 100 * row->mfu, row->fits ? "" : ", does not fit");
	else if (!b->o->quiet)
		fprintf(stderr, "[%d/%d] %s: %s: %s\n", b->done, b->n, b->sc[i]->meta.name,
			result_status_names[row->status], row->reason);
	progress_done(b->pg, i, row->status != RESULT_OK);
}

static void batch_tick(void *ctx, const long *tasks)
{
	struct batch *b = ctx;
	progress_tasks(b->pg, tasks);
}

static int write_rows(const struct batch *b, FILE *f)
{
	if (report_csv_header(f))
		return -1;
	for (int i = 0; i < b->n; i++)
		if (report_csv_row(f, &b->rows[i], b->sc[i]->meta.name, b->sc[i]->in))
			return -1;
	return 0;
}

/* Each scenario's report directory into b->dirs: none with -o -, its
 * output.dir without -o, DIR/<name> with -o DIR (DIR/<name>.2, ... when
 * two scenarios share a name). */
static void batch_dirs(struct batch *b)
{
	const struct run_opts *o = b->o;
	for (int i = 0; i < b->n; i++) {
		if (o->out && !strcmp(o->out, "-"))
			continue;
		if (!o->out) {
			b->dirs[i] = xstrdup(b->sc[i]->out_dir);
			continue;
		}
		int dup = 0;
		for (int k = 0; k < i; k++)
			dup += !strcmp(b->sc[k]->meta.name, b->sc[i]->meta.name);
		b->dirs[i] = dup ? xasprintf("%s/%s.%d", o->out, b->sc[i]->meta.name, dup + 1)
				 : xasprintf("%s/%s", o->out, b->sc[i]->meta.name);
	}
}

/* No report nor runs.csv (unless on stdout) may replace an input or
 * another output (cli_check_samefile). Returns 0 or an exit code after
 * saying why. */
static int check_batch_outputs(const struct batch *b, bool to_stdout)
{
	const struct run_opts *o = b->o;
	struct samefile *sf = samefile_create();
	int rc = 0;
	for (int i = 0; i < b->n; i++)
		cli_note_scenario(sf, b->sc[i]);
	samefile_inputs_read(sf, "a file it read", 0);
	for (int i = 0; i < b->n && !rc; i++)
		if (b->dirs[i])
			rc = note_outputs(sf, o->out ? "--out" : "output.dir", b->dirs[i], formats_of(o, b->sc[i]), NULL);
	if (!to_stdout) {
		char *runs = xasprintf("%s/runs.csv", o->out);
		samefile_output(sf, "--out", runs);
		if (!rc)
			rc = cli_check_output(runs);
		free(runs);
	}
	if (!rc)
		rc = cli_check_samefile(sf);
	samefile_destroy(sf);
	return rc;
}

/* DIR/runs.csv written whole or not at all, said unless quiet. Returns 0
 * or -1 (reported). */
static int write_runs_csv(const struct batch *b, struct diag *d)
{
	const struct run_opts *o = b->o;
	struct atomic_file af;
	char *path = xasprintf("%s/runs.csv", o->out);
	int e = report_mkdirs(o->out) ? -errno : atomic_file_open(&af, path);
	if (!e && write_rows(b, af.f)) {
		e = -EIO;
		atomic_file_abort(&af);
	} else if (!e)
		e = atomic_file_commit(&af);
	if (e)
		diag_err(d, path, "", "cannot write the runs CSV: %s", atomic_file_strerror(-e));
	else if (!o->quiet)
		printf("%d scenarios, %d failed; rows written to %s\n", b->n, b->failed, path);
	free(path);
	return e ? -1 : 0;
}

static int run_batch(struct batch *b, const struct runner_opts *ro, struct diag *d)
{
	const struct run_opts *o = b->o;
	bool to_stdout = !o->out || !strcmp(o->out, "-");
	int rc = EXIT_FAIL;

	b->dirs = xcalloc((size_t)b->n, sizeof(char *));
	b->rows = xcalloc((size_t)b->n, sizeof(struct result_row));
	batch_dirs(b);
	if ((rc = check_batch_outputs(b, to_stdout)))
		goto out;
	rc = EXIT_FAIL;
	cleanup_phase("simulating the scenarios (the rows of finished ones are lost: use ddlsim sweep for incremental rows)");
	b->pg = progress_create("run", "scenarios", b->n, ro->jobs, o->quiet, false);
	longrun_scenarios(b->sc, b->n, ro->jobs, b->pg);
	struct runner_opts rt = *ro;
	rt.tick = batch_tick;
	int run_rc = runner_run(&rt, b->n, batch_job, batch_done, b, d);
	progress_destroy(b->pg);
	if (run_rc)
		goto out;
	cleanup_phase("writing the runs CSV");
	if (to_stdout) {
		if (write_rows(b, stdout) || fflush(stdout)) {
			diag_errf(d, "cannot write the CSV to stdout");
			goto out;
		}
	} else if (write_runs_csv(b, d))
		goto out;
	rc = b->failed ? EXIT_FAIL : EXIT_OK;
out:
	for (int i = 0; i < b->n; i++)
		free(b->dirs[i]);
	free(b->dirs);
	free(b->rows);
	return rc;
}

/* The command line's scenarios and the checks between options. Returns
 * 0, or EXIT_USAGE after saying why. */
static int check_args(const struct run_opts *o, int npaths, bool batch)
{
	if (npaths == 0)
		return cli_usage_error("'run' needs a scenario file");
	if ((o->trace || o->trace_ranks) && (npaths > 1 || batch))
		return cli_usage_error("--trace records one scenario simulated in this process: give one "
				       "scenario, no -j/--timeout/--mem-limit");
	if (o->trace_ranks && !o->trace)
		return cli_usage_error("--trace-ranks needs --trace FILE");
	if (o->trace_ranks && check_trace_ranks(o->trace_ranks, 0))
		return EXIT_USAGE;
	return 0;
}

int cmd_run(int argc, char **argv)
{
	struct run_opts o = { .trace_link_period_s = 1e-2 };
	const char **paths = xcalloc((size_t)argc, sizeof(char *));
	int npaths = 0, rc = EXIT_USAGE;
	struct diag d;

	if (opt_parse(&cmd_run_opts, argc, argv, &o, paths, &npaths))
		goto out_paths;
	/* a runner option asks for the runner, even for one scenario */
	bool batch = o.ro.jobs || o.ro.timeout_s > 0 || o.ro.mem_limit_bytes > 0;
	o.ro.jobs = o.ro.jobs ? o.ro.jobs : 1;
	if (check_args(&o, npaths, batch))
		goto out_paths;

	diag_init(&d, stderr);
	cleanup_phase("loading the scenarios");
	struct batch b = { .o = &o, .n = npaths };
	b.sc = xcalloc((size_t)npaths, sizeof(*b.sc));
	int bad = 0;
	for (int i = 0; i < npaths; i++)
		if (cli_check_input_name(paths[i]) || !(b.sc[i] = scenario_load(paths[i], &d)))
			bad++;
	if (bad) {
		if (npaths > 1)
			fprintf(stderr, "ddlsim: %d of %d scenarios are invalid; nothing was simulated\n", bad, npaths);
		rc = EXIT_INPUT;
	} else if ((rc = longrun_admit_scenarios(b.sc, npaths, o.ro.mem_limit_bytes)))
		;  /* admission: an estimated memory over --mem-limit, said */
	else if (npaths == 1 && !batch)
		rc = run_one(b.sc[0], &o, &d);
	else
		rc = run_batch(&b, &o.ro, &d);
	for (int i = 0; i < npaths; i++)
		scenario_destroy(b.sc[i]);
	free(b.sc);
	diag_finish(&d);
out_paths:
	free(paths);
	return rc;
}
