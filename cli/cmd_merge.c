/* cmd_merge: `ddlsim merge [--partial] OUT INPUT...` joins sweep shards.
 *
 * CSV (OUT ends in .csv): every input must have the same header; the rows
 * of all inputs are written under one header, ordered by point index, a
 * point that appears twice kept once (the first). JSON lines (.jsonl): the
 * same by each record's "point". A torn last line (a killed shard) is
 * left out. The merge of all shards of a sweep has the rows of the
 * unsharded sweep. CSV is read through libcsv (util/csvfile.h), so a
 * quoted field holding a comma, a quote or a line break (an error
 * message) stays in its row, and each row is copied as written; a row
 * with another number of fields than the header is an error.
 *
 * The inputs are read through util/infile.h (a FIFO, a device or a
 * directory is refused, not read). Each input's origin file
 * (cli/sweep_origin.h) says which sweep and shard it holds: inputs of
 * different sweeps are refused (identical headers do not make them one
 * sweep), and so is an incomplete set of shards, named, unless --partial.
 * OUT gets an origin file of its own (the whole sweep), so it can be
 * merged or resumed further; OUT and its origin are published together. */
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "cli.h"
#include "csvfile.h"
#include "infile.h"
#include "sweep_origin.h"
#include "xalloc.h"

void cmd_merge_usage(FILE *f)
{
	fprintf(f, "usage: ddlsim merge [--partial] OUT.csv SHARD.csv...\n"
		   "       ddlsim merge [--partial] OUT.jsonl SHARD.jsonl...\n\n"
		   "Joins the outputs of sweep shards (or of interrupted and resumed sweeps) into\n"
		   "OUT: one header, rows ordered by point index, each point once. The shards\n"
		   "must come from one sweep (their points.*.sweep.json origin files say so) and\n"
		   "be all there.\n\n"
		   "  --partial    merge an incomplete set of shards (the missing ones are named)\n\n"
		   "example:\n"
		   "  ddlsim merge out/s/points.csv out/s/points.shard-*-of-4.csv\n\n"
		   "exit codes: 0 ok, 1 cannot write OUT, 2 usage, 3 an input is unreadable, not a\n"
		   "regular file, not a sweep output, of another sweep, or a shard is missing; OUT\n"
		   "is not a regular file\n");
}

struct line {
	long point;
	size_t seq;                 /* input order, for the first of duplicates */
	char *text;
};

static int cmp_line(const void *a, const void *b)
{
	const struct line *x = a, *y = b;
	if (x->point != y->point)
		return (x->point > y->point) - (x->point < y->point);
	return (x->seq > y->seq) - (x->seq < y->seq);
}

static bool ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && !strcmp(s + n - m, suf);
}

/* What the readers of the inputs add to. */
struct merge {
	struct line *lines;
	size_t n, cap;
	char *header;               /* the first input's CSV header, as written */
	const char *first;          /* the first input's path */
	const char *path;           /* the input being read */
	bool header_seen;           /* in the input being read */
	int nfields;                /* the header's */
};

static void add_line(struct merge *m, long point, const char *text, size_t len)
{
	XGROW(m->lines, m->cap, m->n + 1);
	char *t = xmalloc(len + 1);
	memcpy(t, text, len);
	t[len] = 0;
	m->lines[m->n].point = point;
	m->lines[m->n].seq = m->n;
	m->lines[m->n++].text = t;
}

/* A point index: a whole number >= 0, or -1. */
static long point_index(const char *s)
{
	char *end;
	errno = 0;
	long p = strtol(s, &end, 10);
	return end == s || *end || errno || p < 0 ? -1 : p;
}

/* One CSV record of m->path: its header (the same as the first input's)
 * or a row, kept with the point index of its first field. Returns 0, or
 * 1 after reporting. */
static int csv_record(void *ctx, const struct csvfile_record *r)
{
	struct merge *m = ctx;
	if (!m->header_seen) {
		m->header_seen = true;
		if (!m->header) {
			if (strcmp(r->field[0], "point")) {
				fprintf(stderr, "%s:%ld: error: not a sweep output (its header does not start with 'point')\n",
					m->path, r->line);
				return 1;
			}
			m->header = xstrdup(r->text);
			m->nfields = r->nfields;
			return 0;
		}
		if (strcmp(m->header, r->text)) {
			fprintf(stderr, "%s:%ld: error: header differs from %s's\n", m->path, r->line, m->first);
			return 1;
		}
		return 0;
	}
	if (r->nfields != m->nfields) {
		fprintf(stderr, "%s:%ld: error: expected %d fields as in the header, got %d\n", m->path, r->line,
			m->nfields, r->nfields);
		return 1;
	}
	long p = point_index(r->field[0]);
	if (p < 0) {
		fprintf(stderr, "%s:%ld: error: expected a point index in the first column, got '%.60s'\n",
			m->path, r->line, r->field[0]);
		return 1;
	}
	add_line(m, p, r->text, r->text_len);
	return 0;
}

/* The JSON lines of f (each record holds its "point"), a torn last line
 * left out. Returns 0, or -1 after reporting. */
static int read_jsonl(struct merge *m, FILE *f)
{
	char *l = NULL;
	size_t lc = 0;
	ssize_t len;
	long lineno = 0;
	int rc = 0;
	char why[200];
	while ((len = getline(&l, &lc, f)) > 0) {
		lineno++;
		if (infile_line_check(l, (size_t)len, why, sizeof(why))) {
			fprintf(stderr, "%s:%ld: error: line %s\n", m->path, lineno, why);
			rc = -1;
			break;
		}
		if (l[len - 1] != '\n')
			break;
		json_t *j = json_loads(l, 0, NULL);
		json_t *pi = json_object_get(j, "point");
		long p = json_is_integer(pi) ? (long)json_integer_value(pi) : -1;
		json_decref(j);
		if (p < 0) {
			l[strcspn(l, "\n")] = 0;
			fprintf(stderr, "%s:%ld: error: expected a JSON object with a \"point\" index >= 0, got '%.60s'\n",
				m->path, lineno, l);
			rc = -1;
			break;
		}
		add_line(m, p, l, (size_t)len);
	}
	free(l);
	return rc;
}

/* Read one input into m. Returns 0, or -1 after reporting. */
static int read_input(struct merge *m, const char *path, bool jsonl)
{
	char why[1200];
	FILE *f = infile_open(path, why, sizeof(why));
	if (!f) {
		fprintf(stderr, "%s: error: %s\n", path, why);
		return -1;
	}
	m->path = path;
	m->header_seen = false;
	struct csvfile_error ce;
	int rc = jsonl ? read_jsonl(m, f) : csvfile_read(f, 0, csv_record, m, &ce);
	if (rc < 0 && !jsonl && ce.line)
		fprintf(stderr, "%s:%ld: error: line %s\n", path, ce.line, ce.why);
	else if (rc < 0 && !jsonl)
		fprintf(stderr, "%s: error: %s\n", path, ce.why);
	fclose(f);
	return rc ? -1 : 0;
}

/* The inputs' origins: one sweep, every shard there (or --partial).
 * Fills *whole with the sweep's origin as the whole sweep. Returns 0, 1
 * when no input has one (nothing to check, said), or -1 after reporting. */
static int check_origins(char **in, int n, bool partial, struct sweep_origin *whole)
{
	struct sweep_origin o, first = { 0 };
	char why[1200];
	const char *first_path = NULL;
	int have = 0;
	bool *got = NULL, all = false;
	long shards = 0;  /* of the sharded inputs, which must agree */
	for (int i = 0; i < n; i++) {
		int r = sweep_origin_read(in[i], &o, why, sizeof(why));
		if (r < 0 || (r == 0 && have)) {
			fprintf(stderr, "%s: error: %s\n", in[i], why);
			goto fail;
		}
		if (r == 0)
			continue;
		if (!have++) {
			first = o;
			first_path = in[i];
		} else if (!sweep_origin_same(&first, &o)) {
			fprintf(stderr, "%s: error: from sweep '%s' (hash %s, %ld points), but %s is from sweep '%s' "
				"(hash %s, %ld points): merge the outputs of one sweep\n", in[i], o.sweep, o.hash,
				o.points, first_path, first.sweep, first.hash, first.points);
			goto fail;
		}
		if (o.shards == 1) {
			all = true;
			continue;
		}
		if (shards && o.shards != shards) {
			fprintf(stderr, "%s: error: shard %ld of %ld, but another input is a shard of %ld\n", in[i],
				o.shard, o.shards, shards);
			goto fail;
		}
		if (!shards)
			got = xcalloc((size_t)(shards = o.shards) + 1, 1);
		got[o.shard] = 1;
	}
	if (!have) {
		fprintf(stderr, "ddlsim: warning: the inputs have no origin files (points.*.sweep.json): "
			"cannot check that they are the shards of one sweep\n");
		return 1;
	}
	if (have < n) {
		fprintf(stderr, "%s: error: has an origin file but not every input has one\n", first_path);
		goto fail;
	}
	char missing[512] = "";
	for (long k = 1; k <= shards && !all; k++)
		if (!got[k] && strlen(missing) < sizeof(missing) - 24)
			snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing), "%s%ld",
				 missing[0] ? ", " : "", k);
	free(got);
	if (missing[0]) {
		fprintf(stderr, "ddlsim: %s: sweep '%s' was run in %ld shards; missing shard%s %s of %ld%s\n",
			partial ? "warning" : "error", first.sweep, shards, strchr(missing, ',') ? "s" : "",
			missing, shards, partial ? " (--partial)" : ": pass them, or --partial to merge without them");
		if (!partial)
			return -1;
	}
	*whole = first;
	whole->shard = whole->shards = 1;
	return missing[0] ? 1 : 0;
fail:
	free(got);
	return -1;
}

/* Write OUT (and its origin when known), both or neither. */
static int write_out(const struct merge *m, const char *outp, const struct sweep_origin *whole, long *kept)
{
	struct atomic_file af[2] = { 0 };
	int e = atomic_file_open(&af[0], outp);
	if (e) {
		fprintf(stderr, "%s: error: cannot write: %s\n", outp, atomic_file_strerror(-e));
		return -1;
	}
	if (m->header)
		fputs(m->header, af[0].f);
	long last = -1;
	for (size_t i = 0; i < m->n; i++) {
		long p = m->lines[i].point;
		if (p == last)
			continue;
		last = p;
		fputs(m->lines[i].text, af[0].f);
		(*kept)++;
	}
	e = atomic_file_stage(&af[0]);
	if (!e && whole) {
		char *op = sweep_origin_path(outp);
		json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:I}", "schema", "ddlsim.sweep-origin",
				      "schema_version", "1.0", "sweep", whole->sweep, "hash", whole->hash,
				      "points", (json_int_t)whole->points, "shard", (json_int_t)1, "shards", (json_int_t)1);
		char *t = j ? json_dumps(j, JSON_PRESERVE_ORDER) : NULL;
		if (!t)
			e = -ENOMEM;
		else if (!(e = atomic_file_open(&af[1], op))) {
			fprintf(af[1].f, "%s\n", t);
			e = atomic_file_stage(&af[1]);
		}
		free(t);
		json_decref(j);
		free(op);
	}
	if (!e)
		e = atomic_file_publish(af, 2);
	atomic_file_abort(&af[0]);
	atomic_file_abort(&af[1]);
	if (e)
		fprintf(stderr, "%s: error: cannot write: %s\n", outp, atomic_file_strerror(-e));
	return e ? -1 : 0;
}

int cmd_merge(int argc, char **argv)
{
	bool partial = argc > 1 && !strcmp(argv[1], "--partial");
	if (partial) {
		argv++;
		argc--;
	}
	if (argc < 3)
		return cli_usage_error("'merge' needs an output file and at least one input");
	const char *outp = argv[1];
	bool jsonl = ends_with(outp, ".jsonl");
	if (!jsonl && !ends_with(outp, ".csv"))
		return cli_usage_error("merge: the output must end in .csv or .jsonl, got '%s'", outp);
	int rc = cli_check_output(outp);
	if (rc)
		return rc;
	struct merge m = { .first = argv[2] };
	struct sweep_origin whole;
	rc = EXIT_INPUT;
	int orc = check_origins(argv + 2, argc - 2, partial, &whole);
	if (orc < 0)
		return EXIT_INPUT;
	for (int a = 2; a < argc; a++)
		if (read_input(&m, argv[a], jsonl))
			goto out;
	qsort(m.lines, m.n, sizeof(*m.lines), cmp_line);
	long kept = 0;
	rc = EXIT_FAIL;
	if (write_out(&m, outp, orc == 0 ? &whole : NULL, &kept))
		goto out;
	printf("%ld points from %d files written to %s\n", kept, argc - 2, outp);
	rc = EXIT_OK;
out:
	for (size_t i = 0; i < m.n; i++)
		free(m.lines[i].text);
	free(m.lines);
	free(m.header);
	return rc;
}
