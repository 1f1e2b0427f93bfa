/* cmd_validation: `ddlsim validation [FILE|DIR...] [options]` (the
 * table below: --csv, --ratchet, --write-bands, --check-bands,
 * --cross-validate, --all, --quiet and the runner's options).
 *
 * The published-results suite: every scenario under the given directories
 * (default validation/) that carries a `published` block is simulated
 * through the runner (one forked child each, N at a time) and held against
 * its published figure. A case's family is the name of the directory that
 * holds it (validation/<family>/<case>.json), so the suite needs no key of
 * its own. JSON files under a directory whose schema is not
 * "ddlsim.scenario" (nccl-tests logs in validation/nccl/) are skipped; a
 * file named on the command line must be a scenario. Cases too slow for CI
 * live in validation/<family>/slow/: a folder named "slow" is skipped
 * unless --all is given or it is named itself, and its cases belong to
 * the family of the folder above it.
 *
 * A case's headline figure is the first it publishes in the order of
 * enum pub_figure (sim/result.h); its signed error is predicted /
 * published - 1. The table gives, per case, the figure, both values, the
 * error, the mean split of the iteration (compute, exposed communication,
 * pipeline bubble, as fractions) and whether the plan fits in memory; then
 * the mean and the maximum absolute error per family and over all cases.
 *
 * The ratchet file (schema "ddlsim.validation-ratchet" 1.0) records the
 * highest mean absolute error, in percent, allowed per family and overall:
 *
 *   { "schema": "ddlsim.validation-ratchet", "schema_version": "1.0",
 *     "recorded": "when and how (optional)",
 *     "mean_abs_error_pct": { "<family>": 12.5, ..., "overall": 20.0 } }
 *
 * Every family that ran must have an entry (a new family records its
 * level when it is added); entries for families that did not run are
 * ignored, so a subset can be checked against the same file. Memory
 * cases (published.peak_memory_GiB) are held apart: their families'
 * levels are keyed "<family>:memory", with "overall:memory".
 *
 * A case may publish a time figure, a peak memory figure or both. The
 * memory table gives, per memory case, the published peak, what it
 * counts (published.memory_measure), ddlsim's figure for the fullest GPU
 * as that measure counts it (models/memory.h allocator_bytes, or with
 * the CUDA context and NCCL's buffers for "device"), the signed error
 * and whether the plan fits; then the statistics per family. Only time
 * cases make the error bands.
 *
 * The bands file (schema "ddlsim.validation-bands" 2.0) is the family table
 * as the predictions' error bands (sim/band.h, its keys; built by
 * sim/band_cv.h): per family and overall, the runs, the mean and the
 * largest absolute error and the bias (the mean speed error: a
 * throughput's signed error, 1 / (1 + e) - 1 for an iteration time;
 * positive is optimistic) in percent to 0.1, the runs predicted faster
 * than measured, the cross-validated half-width at 80 %, the
 * out-of-family statistics and the envelope of what the family's runs
 * ran. --cross-validate prints them. --write-bands writes it;
 * --check-bands fails when the file differs from what the suite computes
 * now (validation/bands.json is compiled into the binary: a change to the
 * model that moves an error must re-write it). */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "atomic_file.h"
#include "band_cv.h"
#include "bands_file.h"
#include "infile.h"
#include "cli.h"
#include "diag.h"
#include "jload.h"
#include "longrun.h"
#include "options.h"
#include "runner.h"
#include "samefile.h"
#include "scenario.h"
#include "simulate.h"
#include "tidy.h"
#include "xalloc.h"

#define OVERALL "overall"

struct validation_opts {
	const char *csv, *ratchet, *bands_out, *bands_check;
	bool cv, all, quiet;
	struct runner_opts ro;
};

static const struct opt validation_options[] = {
	OPT_FILE(0, "csv", struct validation_opts, csv, "FILE", "also write the table as CSV to FILE ('-': stdout)"),
	OPT_FILE(0, "ratchet", struct validation_opts, ratchet, "FILE",
		 "fail (exit 1) if a family's or the overall mean absolute\n"
		 "error exceeds the level recorded in FILE\n"
		 "(schema ddlsim.validation-ratchet: {\"mean_abs_error_pct\":\n"
		 "{\"<family>\": pct, ..., \"overall\": pct}})"),
	OPT_FILE(0, "write-bands", struct validation_opts, bands_out, "FILE",
		 "write the family table as error bands (schema\n"
		 "ddlsim.validation-bands; validation/bands.json is compiled into\n"
		 "ddlsim and gives every prediction its band, sim/band.h)"),
	OPT_FILE(0, "check-bands", struct validation_opts, bands_check, "FILE",
		 "fail (exit 1) if FILE differs from the bands the suite gives now;\n"
		 "a FILE that is not a bands file is invalid input (exit 3),\n"
		 "said before the suite runs"),
	OPT_FLAG(0, "cross-validate", struct validation_opts, cv,
		 "also print each family's errors in sample and out of family:\n"
		 "the residual against the band its runs get when the family\n"
		 "is left out, and how many of them that band covers"),
	OPT_FLAG(0, "all", struct validation_opts, all, "also run the cases in 'slow' folders"),
	OPT_FLAG('q', "quiet", struct validation_opts, quiet, "no progress lines"),
	OPT_RUNNER(struct validation_opts, ro),
	OPT_END(),
};

const struct opt_cmd cmd_validation_opts = {
	.name = "validation",
	.summary = "run the published-results suite and print its error table",
	.args = "[FILE|DIR...]",
	.description =
		"Runs the published-results suite: every scenario with a 'published' block in\n"
		"the given files and directories (default: validation/, searched recursively;\n"
		"JSON files of another schema are skipped) is simulated, N at a time, and\n"
		"held against its published figure. A case's family is the directory that\n"
		"holds it (validation/<family>/<case>.json). Cases too slow for CI live in\n"
		"validation/<family>/slow/ and run only with --all or when named.\n\n"
		"The table gives, per case: its family, the published figure (the first of\n"
		"tflops_per_gpu, model_tflops_per_gpu, mfu, tokens_per_s, iteration_time_s it\n"
		"publishes), ddlsim's prediction, the signed error (predicted / published - 1:\n"
		"for an iteration time, positive is slower; otherwise positive is faster), the\n"
		"iteration's mean split into compute, exposed communication and pipeline\n"
		"bubble, and whether the plan fits in memory; then the mean and maximum\n"
		"absolute error per family and overall. A case that passes --timeout or\n"
		"--mem-limit fails; one whose estimated memory is above --mem-limit fails with\n"
		"the estimate, never started.\n",
	.options = validation_options,
	.epilogue =
		"examples:\n"
		"  ddlsim validation -j 2\n"
		"  ddlsim validation validation/megatron-core-h100 --csv /tmp/mcore.csv\n"
		"  ddlsim validation -j 2 --ratchet validation/ratchet.json\n"
		"  ddlsim validation --all -j 2 --timeout 600\n\n"
		"exit codes: 0 ok, 1 a case failed to simulate or the ratchet was exceeded,\n"
		"2 usage, 3 invalid input (a scenario, or a case without a published figure)\n",
	.size = sizeof(struct validation_opts),
};

struct vcase {
	char *path;
	char *family;               /* owned */
	struct scenario *sc;        /* owned */
	enum pub_figure fig;        /* PUB_NFIGURES: a memory case only */
	struct result_row row;
	double err;                 /* signed; valid when row.status == RESULT_OK */
	double mem_pred, mem_err;   /* a memory case: predicted bytes, signed error */
	char *mem_name;             /* "<family>:memory" (owned) */
	char admit[256];            /* why it is not run (estimated over --mem-limit); "" runs */
};

static bool has_time(const struct vcase *c)
{
	return c->fig < PUB_NFIGURES;
}

static bool has_memory(const struct vcase *c)
{
	return c->sc->meta.pub.peak_memory_bytes > 0;
}


struct suite {
	struct vcase *c;
	int n, cap;
	int done;
	bool quiet, all;
};

struct family_stat {
	const char *name;           /* the family, or "<family>:memory" */
	const char *family;
	int n, failed;
	double sum_abs, max_abs;
	double sum_speed;           /* speed errors (band.h): + optimistic */
	int optimistic;
};

/* The name of the directory holding path ("." when none), or of the one
 * above it when that is a "slow" folder. Caller frees. */
static char *family_of(const char *path)
{
	char *s = xstrdup(path), *f;
	for (int up = 0; up < 2; up++) {
		char *slash = strrchr(s, '/');
		if (!slash) {
			f = xstrdup(up ? s : ".");
			goto out;
		}
		*slash = 0;
		char *b = strrchr(s, '/');
		f = xstrdup(b ? b + 1 : s);
		if (up || strcmp(f, "slow"))
			goto out;
		free(f);
	}
	f = xstrdup(".");
out:
	free(s);
	return f;
}

static void add_case(struct suite *su, const char *path)
{
	XGROW(su->c, su->cap, su->n + 1);
	struct vcase *c = &su->c[su->n++];
	memset(c, 0, sizeof(*c));
	c->path = xstrdup(path);
	c->family = family_of(path);
	c->mem_name = xasprintf("%s:memory", c->family);
}

/* True if the JSON file at path says it is a scenario (syntax errors
 * are left to the scenario loader: such a file is collected). */
static bool is_scenario_file(const char *path)
{
	json_error_t je;
	char why[1200];
	FILE *f = infile_open(path, why, sizeof(why));  /* a FIFO is the loader's to report */
	if (!f)
		return true;
	json_t *root = json_loadf(f, 0, &je);
	fclose(f);
	if (!root)
		return true;
	json_t *s = json_object_get(root, "schema");
	bool yes = json_is_string(s) && !strcmp(json_string_value(s), "ddlsim.scenario");
	json_decref(root);
	return yes;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Collect the scenarios under dir, recursively, in name order. */
static int collect_dir(struct suite *su, const char *dir, struct diag *d)
{
	DIR *dp = opendir(dir);
	if (!dp)
		return diag_err(d, dir, "", "cannot open directory: %s", strerror(errno)), -1;
	char **names = NULL;
	int n = 0, cap = 0, rc = 0;
	struct dirent *e;
	while ((e = readdir(dp))) {
		if (e->d_name[0] == '.')
			continue;
		XGROW(names, cap, n + 1);
		names[n++] = xasprintf("%s/%s", dir, e->d_name);
	}
	closedir(dp);
	if (n)  /* an empty directory: names is NULL, which qsort may not take */
		qsort(names, (size_t)n, sizeof(*names), cmp_str);
	for (int i = 0; i < n; i++) {
		struct stat st;
		size_t len = strlen(names[i]);
		const char *base = strrchr(names[i], '/') + 1;
		if (stat(names[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			if ((su->all || strcmp(base, "slow")) && collect_dir(su, names[i], d))
				rc = -1;
		} else if (len > 5 && !strcmp(names[i] + len - 5, ".json") && is_scenario_file(names[i]))
			add_case(su, names[i]);
		free(names[i]);
	}
	free(names);
	return rc;
}

/* Admission, here before the runner forks (a child under a small
 * --mem-limit could not even estimate): each case estimated over the
 * limit (given_bytes, or the default when 0) gets the reason, and fails
 * with it in val_job(). */
static void admit_cases(struct suite *su, double given_bytes)
{
	double limit = given_bytes > 0 ? given_bytes : longrun_mem_default_bytes();
	for (int i = 0; i < su->n; i++)
		if (!longrun_over_limit(su->c[i].sc->in, &su->c[i].sc->plan, limit, given_bytes > 0,
					su->c[i].admit, sizeof(su->c[i].admit)))
			su->c[i].admit[0] = 0;
}

static void val_job(void *ctx, int i, struct result_row *row)
{
	struct suite *su = ctx;
	struct scenario *sc = su->c[i].sc;
	if (su->c[i].admit[0]) {   /* admission (before the runner): the estimate, never started */
		result_row_fail(row, RESULT_FAILED, su->c[i].admit);
		row->plan = sc->plan;
		return;
	}
	simulate_row(sc->in, &sc->plan, row);
}

static void val_done(void *ctx, int i, const struct result_row *row)
{
	struct suite *su = ctx;
	struct vcase *c = &su->c[i];
	c->row = *row;
	su->done++;
	const struct published *pub = &c->sc->meta.pub;
	if (row->status == RESULT_OK && has_time(c))
		c->err = result_row_figure(row, c->fig) / published_figure(pub, c->fig) - 1;
	if (row->status == RESULT_OK && has_memory(c)) {
		c->mem_pred = result_row_memory(row, pub->memory_measure);
		c->mem_err = c->mem_pred / pub->peak_memory_bytes - 1;
	}
	if (su->quiet)
		return;
	if (row->status == RESULT_OK && has_time(c))
		fprintf(stderr, "[%d/%d] %s/%s: %+.1f%% (%.1f s simulated in %.1f s)\n", su->done, su->n,
			c->family, c->sc->meta.name, 100 * c->err, row->iteration_s, row->sim_wall_s);
	else if (row->status == RESULT_OK)
		fprintf(stderr, "[%d/%d] %s/%s: memory %+.1f%% (%.1f s simulated in %.1f s)\n", su->done, su->n,
			c->family, c->sc->meta.name, 100 * c->mem_err, row->iteration_s, row->sim_wall_s);
	else
		fprintf(stderr, "[%d/%d] %s/%s: %s: %s\n", su->done, su->n, c->family, c->sc->meta.name,
			result_status_names[row->status], row->reason);
}

static int cmp_case(const void *a, const void *b)
{
	const struct vcase *x = a, *y = b;
	int k = strcmp(x->family, y->family);
	return k ? k : strcmp(x->sc->meta.name, y->sc->meta.name);
}

static void print_value(FILE *f, double v, enum pub_figure fig)
{
	if (fig == PUB_MFU)
		fprintf(f, "%9.1f%%", 100 * v);
	else
		fprintf(f, "%10.4g", v);
}

/* Per-family statistics of the time cases (memory: of the memory
 * cases, under "<family>:memory", the overall line "overall:memory");
 * fam[nfam] is the overall line. Returns nfam. */
static int family_stats(const struct suite *su, struct family_stat *fam, bool memory)
{
	int nfam = 0;
	struct family_stat all = { .name = memory ? OVERALL ":memory" : OVERALL };
	for (int i = 0; i < su->n; i++) {
		const struct vcase *c = &su->c[i];
		if (memory ? !has_memory(c) : !has_time(c))
			continue;
		if (nfam == 0 || strcmp(fam[nfam - 1].family, c->family))
			fam[nfam++] = (struct family_stat){ .name = memory ? c->mem_name : c->family,
							    .family = c->family };
		struct family_stat *s = &fam[nfam - 1];
		for (struct family_stat *t = s; t; t = t == s ? &all : NULL) {
			if (c->row.status != RESULT_OK) {
				t->failed++;
				continue;
			}
			double a = fabs(memory ? c->mem_err : c->err);
			double speed = memory ? c->mem_err :
				       c->fig == PUB_ITERATION_S ? 1 / (1 + c->err) - 1 : c->err;
			t->sum_speed += speed;
			t->optimistic += speed > 0;
			t->n++;
			t->sum_abs += a;
			if (a > t->max_abs)
				t->max_abs = a;
		}
	}
	fam[nfam] = all;
	return nfam;
}

#define GIB 1073741824.0

static void print_stats(const struct family_stat *fam, int nfam, const char *sign, FILE *f);

static void print_table(const struct suite *su, const struct family_stat *fam, int nfam, FILE *f)
{
	fprintf(f, "%-34s %-22s %-20s %10s %10s %8s %7s %7s %7s %4s\n", "case", "family", "figure",
		"published", "predicted", "error", "compute", "exposed", "bubble", "fits");
	for (int i = 0; i < su->n; i++) {
		const struct vcase *c = &su->c[i];
		const struct result_row *r = &c->row;
		if (!has_time(c))
			continue;
		fprintf(f, "%-34s %-22s %-20s ", c->sc->meta.name, c->family, pub_figures[c->fig].key);
		print_value(f, published_figure(&c->sc->meta.pub, c->fig), c->fig);
		if (r->status != RESULT_OK) {
			fprintf(f, " %s: %s\n", result_status_names[r->status], r->reason);
			continue;
		}
		fputc(' ', f);
		print_value(f, result_row_figure(r, c->fig), c->fig);
		double it = r->iteration_s > 0 ? r->iteration_s : 1;
		fprintf(f, " %+7.1f%% %6.1f%% %6.1f%% %6.1f%% %4s\n", 100 * c->err,
			100 * r->mean.compute_s / it, 100 * r->mean.exposed_s / it,
			100 * r->mean.bubble_s / it, r->fits ? "yes" : "NO");
	}
	print_stats(fam, nfam, "bias", f);
}

/* A stats table: per family and overall, mean and max |error| and the
 * mean signed one under the label sign. */
static void print_stats(const struct family_stat *fam, int nfam, const char *sign, FILE *f)
{
	fprintf(f, "\n%-29s %5s %6s %15s %14s %10s\n", "family", "cases", "failed", "mean |error|", "max |error|",
		sign);
	for (int k = 0; k <= nfam; k++)
		fprintf(f, "%-29s %5d %6d %14.1f%% %13.1f%% %+9.1f%%\n", fam[k].name, fam[k].n, fam[k].failed,
			fam[k].n ? 100 * fam[k].sum_abs / fam[k].n : 0.0, 100 * fam[k].max_abs,
			fam[k].n ? 100 * fam[k].sum_speed / fam[k].n : 0.0);
}

/* The memory cases: the published peak, what it counts, the prediction
 * (the fullest GPU's, as that measure counts it), the error and the
 * verdict; then the per-family statistics. */
static void print_memory(const struct suite *su, const struct family_stat *mem, int nmem, FILE *f)
{
	fprintf(f, "\nmemory (published peak per GPU against the anatomy of the fullest GPU, models/memory.h)\n");
	fprintf(f, "%-34s %-22s %-9s %10s %10s %8s %10s %4s\n", "case", "family", "measure", "pub GiB", "pred GiB",
		"error", "total GB", "fits");
	for (int i = 0; i < su->n; i++) {
		const struct vcase *c = &su->c[i];
		const struct result_row *r = &c->row;
		if (!has_memory(c))
			continue;
		fprintf(f, "%-34s %-22s %-9s %10.2f ", c->sc->meta.name, c->family,
			pub_memory_names[c->sc->meta.pub.memory_measure], c->sc->meta.pub.peak_memory_bytes / GIB);
		if (r->status != RESULT_OK) {
			fprintf(f, "%s: %s\n", result_status_names[r->status], r->reason);
			continue;
		}
		fprintf(f, "%10.2f %+7.1f%% %10.1f %4s\n", c->mem_pred / GIB, 100 * c->mem_err,
			r->mem_worst_bytes / 1e9, r->fits ? "yes" : "NO");
	}
	print_stats(mem, nmem, "signed", f);
}

/* Text fields through tidy_csv_field, the one CSV field writer (RFC 4180:
 * quoted where a comma, a quote or a line break needs it). */
static int write_csv(const struct suite *su, FILE *f)
{
	fprintf(f, "case,family,path,gpus,figure,published,predicted,error,compute_fraction,"
		   "exposed_comm_fraction,bubble_fraction,fits,iteration_s,mfu,status,reason,"
		   "memory_measure,published_memory_GiB,predicted_memory_GiB,memory_error\n");
	for (int i = 0; i < su->n; i++) {
		const struct vcase *c = &su->c[i];
		const struct result_row *r = &c->row;
		bool ok = r->status == RESULT_OK;
		double it = ok && r->iteration_s > 0 ? r->iteration_s : 1;
		tidy_csv_field(f, c->sc->meta.name);
		fputc(',', f);
		tidy_csv_field(f, c->family);
		fputc(',', f);
		tidy_csv_field(f, c->path);
		fprintf(f, ",%ld,%s,", ok ? r->gpus : 0, has_time(c) ? pub_figures[c->fig].key : "");
		if (has_time(c))
			fprintf(f, "%.6g", published_figure(&c->sc->meta.pub, c->fig));
		fputc(',', f);
		if (ok && !has_time(c))
			fprintf(f, ",,,,,%s,%.6g,%.6g,", r->fits ? "true" : "false", r->iteration_s, r->mfu);
		else if (ok)
			fprintf(f, "%.6g,%.6g,%.6g,%.6g,%.6g,%s,%.6g,%.6g,", result_row_figure(r, c->fig),
				c->err, r->mean.compute_s / it, r->mean.exposed_s / it, r->mean.bubble_s / it,
				r->fits ? "true" : "false", r->iteration_s, r->mfu);
		else
			fputs(",,,,,,,,", f);
		fprintf(f, "%s,", result_status_names[r->status]);
		tidy_csv_field(f, r->reason);
		if (has_memory(c))
			fprintf(f, ",%s,%.6g,", pub_memory_names[c->sc->meta.pub.memory_measure],
				c->sc->meta.pub.peak_memory_bytes / GIB);
		else
			fputs(",,,", f);
		if (has_memory(c) && ok)
			fprintf(f, "%.6g,%.6g", c->mem_pred / GIB, c->mem_err);
		else
			fputs(",", f);
		fputc('\n', f);
	}
	return ferror(f) ? -1 : 0;
}

static int csv_out(const struct suite *su, const char *path, struct diag *d)
{
	if (!strcmp(path, "-"))
		return write_csv(su, stdout) || fflush(stdout) ? (diag_errf(d, "cannot write the CSV to stdout"), -1) : 0;
	struct atomic_file af;
	int e = atomic_file_open(&af, path);
	if (!e && write_csv(su, af.f)) {
		atomic_file_abort(&af);
		e = -EIO;
	} else if (!e)
		e = atomic_file_commit(&af);
	if (e)
		return diag_err(d, path, "", "cannot write the CSV: %s", atomic_file_strerror(-e)), -1;
	return 0;
}

/* The suite's cases that simulated, for band_cv_build (NULL when none). */
static struct band *suite_bands(const struct suite *su, int *nrows)
{
	struct band_case *bc = xcalloc((size_t)su->n + 1, sizeof(*bc));
	int n = 0;
	for (int i = 0; i < su->n; i++) {
		const struct vcase *c = &su->c[i];
		if (c->row.status != RESULT_OK || !has_time(c))
			continue;
		bc[n].family = c->family;
		band_features(c->sc->in, &c->sc->plan, &bc[n].f);
		bc[n].err = c->err;
		bc[n].speed = c->fig == PUB_ITERATION_S ? 1 / (1 + c->err) - 1 : c->err;
		n++;
	}
	struct band *rows = n ? band_cv_build(bc, n, nrows) : NULL;
	free(bc);
	return rows;
}

/* The memory cases' errors (sim/band.h "memory"), NULL when none
 * simulated. */
static json_t *memory_band(const struct suite *su)
{
	int n = 0;
	double sum_abs = 0, sum = 0, lo = 0, hi = 0;
	for (int i = 0; i < su->n; i++) {
		const struct vcase *c = &su->c[i];
		if (!has_memory(c) || c->row.status != RESULT_OK)
			continue;
		sum_abs += fabs(c->mem_err);
		sum += c->mem_err;
		lo = n ? fmin(lo, c->mem_err) : c->mem_err;
		hi = n ? fmax(hi, c->mem_err) : c->mem_err;
		n++;
	}
	if (!n)
		return NULL;
	return json_pack("{s:i, s:f, s:f, s:f, s:f}", "runs", n, "mean_abs_error_pct", bands_file_pct(sum_abs / n),
			 "signed_pct", bands_file_pct(sum / n), "low_pct", bands_file_pct(lo), "high_pct", bands_file_pct(hi));
}

/* Check the statistics against the ratchet file. Returns 0 when every
 * level holds, 1 when one is exceeded (each printed), -1 on bad input. */
static int check_ratchet(const char *path, const struct family_stat *fam, int nfam, struct diag *d)
{
	int before = diag_count(d), over = 0;
	json_t *root = jload_file(path, d);
	if (!root || jload_schema(root, path, d, "ddlsim.validation-ratchet", 1, 0)) {
		json_decref(root);
		return -1;
	}
	struct jobj jo, lv;
	jobj_init(&jo, root, path, "", d);
	if (jobj_child(&jo, "mean_abs_error_pct", &lv, JREQ) == 1) {
		for (int k = 0; k <= nfam; k++) {
			double lim;
			int got = jobj_num(&lv, fam[k].name, &lim, JNONNEG);
			if (got == 0)
				diag_err(d, path, "/mean_abs_error_pct", "no level for family '%s', "
					 "which ran (record one)", fam[k].name);
			if (got != 1)
				continue;
			double mean = fam[k].n ? 100 * fam[k].sum_abs / fam[k].n : 0;
			if (mean > lim) {
				fprintf(stderr, "ddlsim: ratchet: family '%s': mean absolute error %.2f%% "
					"exceeds the recorded %.2f%%\n", fam[k].name, mean, lim);
				over++;
			}
		}
		json_t *v;
		const char *key;
		json_object_foreach(lv.o, key, v) {
			bool ran = false;
			for (int k = 0; k <= nfam && !ran; k++)
				ran = !strcmp(fam[k].name, key);
			if (!ran && !json_is_number(v))
				diag_err(d, path, "/mean_abs_error_pct", "/%s: expected a number, got %s",
					 key, jload_type_name(v));
		}
	}
	const char *note;
	jobj_str(&jo, "recorded", &note, 0);
	jobj_end(&jo);
	json_decref(root);
	if (diag_count(d) != before)
		return -1;
	return over ? 1 : 0;
}

/* No output (--csv, --write-bands) may replace a case's scenario, model,
 * topology or what their loads read (from the reads0-th file infile.h
 * opened), nor the ratchet (cli_check_samefile). Returns 0 or an exit
 * code after saying why. */
static int check_outputs(const struct suite *su, size_t reads0, const char *ratchet, const char *csv,
			 const char *bands_out)
{
	struct samefile *sf = samefile_create();
	for (int i = 0; i < su->n; i++)
		cli_note_scenario(sf, su->c[i].sc);
	samefile_input(sf, "the ratchet", ratchet);
	samefile_inputs_read(sf, "a file it read", reads0);
	samefile_output(sf, "--csv", csv);
	samefile_output(sf, "--write-bands", bands_out);
	int rc = cli_check_samefile(sf);
	samefile_destroy(sf);
	return rc;
}

/* The exit code after a check that gave r (-1 bad input, 1 over, 0 ok)
 * on top of rc. */
static int check_rc(int rc, int r)
{
	return r < 0 ? EXIT_INPUT : r > 0 && rc == EXIT_OK ? EXIT_FAIL : rc;
}

/* --ratchet over the time families and overall, then the memory ones
 * and their overall when memory cases ran (check_ratchet's result). */
static int ratchet_all(const char *path, const struct family_stat *fam, int nfam, const struct family_stat *mem,
		       int nmem, struct diag *d)
{
	int nall = nfam + 1;
	struct family_stat *all = xcalloc((size_t)(nfam + nmem + 2), sizeof(*all));
	memcpy(all, fam, (size_t)nall * sizeof(*all));
	if (mem[nmem].n + mem[nmem].failed > 0) {
		memcpy(all + nall, mem, (size_t)(nmem + 1) * sizeof(*all));
		nall += nmem + 1;
	}
	int r = check_ratchet(path, all, nall - 1, d);
	free(all);
	return r;
}

/* --cross-validate, --write-bands FILE, --check-bands FILE on the
 * suite's time cases (cli/bands_file.h); the exit code on top of rc. */
static int bands(const struct suite *su, bool cv, const char *out, const char *check, int rc, struct diag *d)
{
	int nrows = 0;
	struct band *rows = suite_bands(su, &nrows);
	json_t *mem = memory_band(su);
	if (!rows) {
		if (out || check)
			diag_errf(d, "no time case simulated: no bands to %s", out ? "write" : "check");
		rc = out || check ? EXIT_FAIL : rc;
		goto out;
	}
	if (cv)
		bands_file_print_cv(rows, nrows, stdout);
	if (out && bands_file_write(out, rows, nrows, mem, d))
		rc = EXIT_FAIL;
	if (check)
		rc = check_rc(rc, bands_file_check(check, rows, nrows, mem, d));
out:
	band_cv_free(rows, nrows);
	json_decref(mem);
	return rc;
}

/* The cases of paths[0 .. npaths) (files and directories) into su,
 * loaded and each with its headline figure, and --check-bands' file
 * checked; *reads0 the count of files read before the cases loaded
 * (collecting opened every JSON file: not inputs). Returns how many
 * inputs are invalid (each said in d). */
static int load_cases(struct suite *su, const char **paths, int npaths, const char *bands_check, size_t *reads0,
		      struct diag *d)
{
	int bad = 0;
	for (int i = 0; i < npaths; i++) {
		struct stat st;
		if (stat(paths[i], &st) != 0) {
			diag_err(d, paths[i], "", "cannot read: %s", strerror(errno));
			bad++;
		} else if (S_ISDIR(st.st_mode)) {
			if (collect_dir(su, paths[i], d))
				bad++;
		} else
			add_case(su, paths[i]);
	}
	if (!bad && su->n == 0) {
		diag_errf(d, "no validation scenarios found");
		bad++;
	}
	if (bands_check && bands_file_validate(bands_check, d))
		bad++;  /* before the suite runs: a malformed file is invalid input */
	*reads0 = infile_read_count();  /* collecting opened every JSON file: not inputs */
	for (int i = 0; i < su->n; i++) {
		struct vcase *c = &su->c[i];
		if (!(c->sc = scenario_load(c->path, d))) {
			bad++;
			continue;
		}
		int f = 0;
		while (f < PUB_NFIGURES && published_figure(&c->sc->meta.pub, f) <= 0)
			f++;
		if (f == PUB_NFIGURES && !(c->sc->meta.pub.peak_memory_bytes > 0)) {
			diag_err(d, c->path, "/published", "a validation case needs a published figure "
				 "(one of tflops_per_gpu, model_tflops_per_gpu, mfu, tokens_per_s, iteration_time_s, "
				 "peak_memory_GiB)");
			bad++;
		}
		c->fig = f;
	}
	return bad;
}

int cmd_validation(int argc, char **argv)
{
	struct validation_opts o = { .ro = { .jobs = 1 } };
	struct suite su = { 0 };
	const char **paths = xcalloc((size_t)argc + 1, sizeof(char *));
	int npaths = 0, rc = EXIT_USAGE, bad = 0;
	struct diag d;

	if (opt_parse(&cmd_validation_opts, argc, argv, &o, paths, &npaths))
		goto out_paths;
	su.quiet = o.quiet;
	su.all = o.all;
	if (npaths == 0)
		paths[npaths++] = "validation";

	diag_init(&d, stderr);
	size_t reads0;
	bad = load_cases(&su, paths, npaths, o.bands_check, &reads0, &d);
	if (bad) {
		fprintf(stderr, "ddlsim: %d invalid validation input%s; nothing was simulated\n",
			bad, bad > 1 ? "s" : "");
		rc = EXIT_INPUT;
		goto out;
	}
	if ((rc = check_outputs(&su, reads0, o.ratchet, o.csv, o.bands_out)))
		goto out;
	admit_cases(&su, o.ro.mem_limit_bytes);
	if (runner_run(&o.ro, su.n, val_job, val_done, &su, &d)) {
		rc = EXIT_FAIL;
		goto out;
	}
	qsort(su.c, (size_t)su.n, sizeof(*su.c), cmp_case);
	struct family_stat *fam = xcalloc(2 * (size_t)su.n + 2, sizeof(*fam));
	int nfam = family_stats(&su, fam, false);
	struct family_stat *mem = fam + su.n + 1;
	int nmem = family_stats(&su, mem, true);
	print_table(&su, fam, nfam, stdout);
	if (mem[nmem].n + mem[nmem].failed > 0)
		print_memory(&su, mem, nmem, stdout);
	fflush(stdout);
	rc = fam[nfam].failed || mem[nmem].failed ? EXIT_FAIL : EXIT_OK;
	if (o.csv && csv_out(&su, o.csv, &d))
		rc = EXIT_FAIL;
	if (o.ratchet) {
		int r = ratchet_all(o.ratchet, fam, nfam, mem, nmem, &d);
		rc = check_rc(rc, r);
		if (r == 0 && !su.quiet)
			fprintf(stderr, "ratchet %s: every family within its recorded level\n", o.ratchet);
	}
	if (o.cv || o.bands_out || o.bands_check)
		rc = bands(&su, o.cv, o.bands_out, o.bands_check, rc, &d);
	int failed = 0;
	for (int i = 0; i < su.n; i++)
		failed += su.c[i].row.status != RESULT_OK;
	if (failed)
		fprintf(stderr, "ddlsim: %d of %d cases failed to simulate\n", failed, su.n);
	free(fam);
out:
	for (int i = 0; i < su.n; i++) {
		free(su.c[i].path);
		free(su.c[i].family);
		free(su.c[i].mem_name);
		scenario_destroy(su.c[i].sc);
	}
	free(su.c);
	diag_finish(&d);
out_paths:
	free(paths);
	return rc;
}
