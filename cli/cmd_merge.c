/* cmd_merge: `ddlsim merge OUT INPUT... [--partial]` joins sweep shards.
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
 * directory is refused, not read); an input of OUT's other format (.csv
 * for .jsonl and back) is a usage error, never read as the wrong one.
 * Each input's origin file (cli/sweep_origin.h) says which sweep and
 * shard it holds: inputs of different sweeps are refused (identical
 * headers do not make them one sweep), and so is an input whose sweep
 * still holds the CSV's lock (it is being written), a row of another
 * shard's point, and what is not complete unless --partial: a missing
 * shard, a torn last row (bytes after the last complete record, a JSON
 * line without its line break), fewer rows than the shard's count (shard
 * I of N of P points: the indices with index mod N = I - 1); the missing
 * points are named. --partial merges what is there and says how much.
 * OUT may be no input (cli_check_samefile()). A complete OUT gets an
 * origin file of its own (the whole sweep), so it can be merged or
 * resumed further; OUT and its origin are published together. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "cli.h"
#include "csvfile.h"
#include "infile.h"
#include "options.h"
#include "samefile.h"
#include "sweep_origin.h"
#include "xalloc.h"

struct merge_opts {
	bool partial;
};

static const struct opt merge_options[] = {
	OPT_FLAG(0, "partial", struct merge_opts, partial,
		 "merge what is there (missing shards, torn rows, shards cut\n"
		 "short) and say on stderr how much: 'merged 20 of 30 points;\n"
		 "missing: 20..29'; OUT then gets no origin record"),
	OPT_END(),
};

const struct opt_cmd cmd_merge_opts = {
	.name = "merge",
	.summary = "join the outputs of sweep shards",
	.args = "OUT.csv SHARD.csv...",
	.usage_more = "       ddlsim merge OUT.jsonl SHARD.jsonl... [--partial]\n",
	.description =
		"Joins the outputs of sweep shards (or of interrupted and resumed sweeps) into\n"
		"OUT: one header, rows ordered by point index, each point once. The shards\n"
		"must be of OUT's format, come from one sweep (their points.*.ddlsim-origin.json\n"
		"records say so), be finished (a sweep still writing one holds its lock) and\n"
		"be complete: every shard there, no torn last row, each shard holding every\n"
		"point its record counts; the missing points are named. OUT may not be a shard.\n",
	.options = merge_options,
	.epilogue =
		"example:\n"
		"  ddlsim merge out/s/points.csv out/s/points.shard-*-of-4.csv\n\n"
		"exit codes: 0 ok, 1 cannot write OUT, 2 usage (a shard of the other format),\n"
		"3 an input is unreadable, not a regular file, not a sweep output, of another\n"
		"sweep, still being written, or points are missing (without --partial); OUT is\n"
		"not a regular file, is a shard, or its origin's name holds another file\n",
	.size = sizeof(struct merge_opts),
};

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

/* One input: its origin (cli/sweep_origin.h), what was read from it. */
struct input {
	const char *path;
	struct sweep_origin o;
	bool has_origin;
	long rows;                  /* rows read */
	long torn_line;             /* the line of a torn last row, 0: none */
};

/* What the readers of the inputs add to. */
struct merge {
	struct line *lines;
	size_t n, cap;
	char *header;               /* the first input's CSV header, as written */
	const char *first;          /* the first input's path */
	struct input *cur;          /* the input being read */
	bool header_seen;           /* in the input being read */
	int nfields;                /* the header's */
	long end, next_line;        /* past the last record read: offset, line */
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
	m->cur->rows++;
}

/* A point index: a whole number >= 0, or -1. */
static long point_index(const char *s)
{
	char *end;
	errno = 0;
	long p = strtol(s, &end, 10);
	return end == s || *end || errno || p < 0 ? -1 : p;
}

/* Whether point p of line belongs to the input's shard (its origin);
 * says why not. */
static bool in_shard(const struct input *in, long line, long p)
{
	if (!in->has_origin || sweep_origin_has_point(&in->o, p))
		return true;
	if (in->o.shards == 1)
		fprintf(stderr, "%s:%ld: error: point %ld is not a point of sweep '%s', which has %ld (0..%ld)\n",
			in->path, line, p, in->o.sweep, in->o.points, in->o.points - 1);
	else
		fprintf(stderr, "%s:%ld: error: point %ld is not a point of shard %ld of %ld of sweep '%s' (%ld "
			"points: the indices mod %ld = %ld)\n", in->path, line, p, in->o.shard, in->o.shards,
			in->o.sweep, in->o.points, in->o.shards, in->o.shard - 1);
	return false;
}

/* One CSV record of m->cur: its header (the same as the first input's)
 * or a row of its shard, kept with the point index of its first field.
 * Returns 0, or 1 after reporting. */
static int csv_record(void *ctx, const struct csvfile_record *r)
{
	struct merge *m = ctx;
	const char *path = m->cur->path;
	m->end = r->end;
	m->next_line = r->line + 1;
	for (size_t k = 0; k + 1 < r->text_len; k++)
		m->next_line += r->text[k] == '\n';
	if (!m->header_seen) {
		m->header_seen = true;
		if (!m->header) {
			if (strcmp(r->field[0], "point")) {
				fprintf(stderr, "%s:%ld: error: not a sweep output (its header does not start with 'point')\n",
					path, r->line);
				return 1;
			}
			m->header = xstrdup(r->text);
			m->nfields = r->nfields;
			return 0;
		}
		if (strcmp(m->header, r->text)) {
			fprintf(stderr, "%s:%ld: error: header differs from %s's\n", path, r->line, m->first);
			return 1;
		}
		return 0;
	}
	if (r->nfields != m->nfields) {
		fprintf(stderr, "%s:%ld: error: expected %d fields as in the header, got %d\n", path, r->line,
			m->nfields, r->nfields);
		return 1;
	}
	long p = point_index(r->field[0]);
	if (p < 0) {
		fprintf(stderr, "%s:%ld: error: expected a point index in the first column, got '%.60s'\n",
			path, r->line, r->field[0]);
		return 1;
	}
	if (!in_shard(m->cur, r->line, p))
		return 1;
	add_line(m, p, r->text, r->text_len);
	return 0;
}

/* After the records of f: bytes past the last complete record that are
 * not blank are a torn row (a sweep killed while writing it; csvfile.h
 * leaves it out): its line goes to m->cur->torn_line. */
static void find_torn_tail(struct merge *m, FILE *f)
{
	long line = m->next_line ? m->next_line : 1;
	int c;
	if (fseek(f, m->end, SEEK_SET))
		return;
	while ((c = getc(f)) != EOF) {
		if (c == '\n')
			line++;
		else if (c != '\r' && c != ' ' && c != '\t') {
			m->cur->torn_line = line;
			return;
		}
	}
}

/* The JSON lines of f (each record holds its "point"); a torn last line
 * is left out and noted. Returns 0, or -1 after reporting. */
static int read_jsonl(struct merge *m, FILE *f)
{
	char *l = NULL;
	size_t lc = 0;
	ssize_t len;
	long lineno = 0;
	int rc = 0;
	char why[200];
	const char *path = m->cur->path;
	while ((len = getline(&l, &lc, f)) > 0) {
		lineno++;
		if (infile_line_check(l, (size_t)len, why, sizeof(why))) {
			fprintf(stderr, "%s:%ld: error: line %s\n", path, lineno, why);
			rc = -1;
			break;
		}
		if (l[len - 1] != '\n') {
			m->cur->torn_line = lineno;
			break;
		}
		json_t *j = json_loads(l, 0, NULL);
		json_t *pi = json_object_get(j, "point");
		long p = json_is_integer(pi) ? (long)json_integer_value(pi) : -1;
		json_decref(j);
		if (p < 0) {
			l[strcspn(l, "\n")] = 0;
			fprintf(stderr, "%s:%ld: error: expected a JSON object with a \"point\" index >= 0, got '%.60s'\n",
				path, lineno, l);
			rc = -1;
			break;
		}
		if (!in_shard(m->cur, lineno, p)) {
			rc = -1;
			break;
		}
		add_line(m, p, l, (size_t)len);
	}
	free(l);
	return rc;
}

/* Read input in into m. Returns 0, or -1 after reporting. */
static int read_input(struct merge *m, struct input *in, bool jsonl)
{
	char why[1200];
	FILE *f = infile_open(in->path, why, sizeof(why));
	if (!f) {
		fprintf(stderr, "%s: error: %s\n", in->path, why);
		return -1;
	}
	m->cur = in;
	m->header_seen = false;
	m->end = m->next_line = 0;
	struct csvfile_error ce;
	int rc = jsonl ? read_jsonl(m, f) : csvfile_read(f, 0, csv_record, m, &ce);
	if (rc < 0 && !jsonl && ce.line)
		fprintf(stderr, "%s:%ld: error: line %s\n", in->path, ce.line, ce.why);
	else if (rc < 0 && !jsonl)
		fprintf(stderr, "%s: error: %s\n", in->path, ce.why);
	else if (rc == 0 && !jsonl)
		find_torn_tail(m, f);
	fclose(f);
	return rc ? -1 : 0;
}

/* What check_origins() has seen of the inputs' origins so far. */
struct origins {
	struct sweep_origin first;      /* the first input's with an origin */
	const char *first_path;
	int have;                       /* inputs with an origin */
	bool *got, all;                 /* [shard] seen; a whole (unsharded) output seen */
	long shards;                    /* of the sharded inputs, which must agree */
};

/* Reads input in's origin into in->o and adds it to os; -1 after reporting one
 * that cannot be read, is missing after others, or is of another sweep or shard count. */
static int add_origin(struct origins *os, struct input *in)
{
	struct sweep_origin *o = &in->o;
	char why[1200];
	int r = sweep_origin_read(in->path, o, why, sizeof(why));
	if (r < 0 || (r == 0 && os->have)) {
		fprintf(stderr, "%s: error: %s\n", in->path, why);
		return -1;
	}
	if (r == 0)
		return 0;
	in->has_origin = true;
	if (!os->have++) {
		os->first = *o;
		os->first_path = in->path;
	} else if (!sweep_origin_same(&os->first, o)) {
		fprintf(stderr, "%s: error: from sweep '%s' (hash %s, %ld points), but %s is from sweep '%s' "
			"(hash %s, %ld points): merge the outputs of one sweep\n", in->path, o->sweep, o->hash,
			o->points, os->first_path, os->first.sweep, os->first.hash, os->first.points);
		return -1;
	}
	if (o->shards == 1) {
		os->all = true;
		return 0;
	}
	if (os->shards && o->shards != os->shards) {
		fprintf(stderr, "%s: error: shard %ld of %ld, but another input is a shard of %ld\n", in->path,
			o->shard, o->shards, os->shards);
		return -1;
	}
	if (!os->shards)
		os->got = xcalloc((size_t)(os->shards = o->shards) + 1, 1);
	os->got[o->shard] = 1;
	return 0;
}

/* The shards none of the inputs is, "2, 3" into missing ("" when none or a whole output). */
static void missing_shards(const struct origins *os, char *missing, size_t size)
{
	missing[0] = 0;
	for (long k = 1; k <= os->shards && !os->all; k++)
		if (!os->got[k] && strlen(missing) < size - 24)
			snprintf(missing + strlen(missing), size - strlen(missing), "%s%ld",
				 missing[0] ? ", " : "", k);
}

/* The inputs' origins: one sweep, every shard there (or --partial).
 * Fills each input's origin and *whole with the sweep's origin as the
 * whole sweep. Returns 0, 1 when no input has one (nothing to check,
 * said) or shards are missing (--partial, said), or -1 after reporting. */
static int check_origins(struct input *in, int n, bool partial, struct sweep_origin *whole)
{
	struct origins os = { 0 };
	for (int i = 0; i < n; i++)
		if (add_origin(&os, &in[i]))
			goto fail;
	if (!os.have) {
		fprintf(stderr, "ddlsim: warning: the inputs have no origin files (points.*.ddlsim-origin.json): "
			"cannot check that they are the shards of one sweep\n");
		return 1;
	}
	if (os.have < n) {
		fprintf(stderr, "%s: error: has an origin file but not every input has one\n", os.first_path);
		goto fail;
	}
	char missing[512];
	missing_shards(&os, missing, sizeof(missing));
	free(os.got);
	if (missing[0]) {
		fprintf(stderr, "ddlsim: %s: sweep '%s' was run in %ld shards; missing shard%s %s of %ld%s\n",
			partial ? "warning" : "error", os.first.sweep, os.shards, strchr(missing, ',') ? "s" : "",
			missing, os.shards, partial ? " (--partial)" : ": pass them, or --partial to merge without them");
		if (!partial)
			return -1;
	}
	*whole = os.first;
	whole->shard = whole->shards = 1;
	return missing[0] ? 1 : 0;
fail:
	free(os.got);
	return -1;
}

/* No input may be written by a sweep still running: its CSV (the JSON
 * lines' sibling) holds the sweep's lock (cmd_sweep.c). Returns 0, or -1
 * after naming the inputs still being written. */
static int check_locks(const struct input *in, int n)
{
	int bad = 0;
	for (int i = 0; i < n; i++) {
		char *csv = ends_with(in[i].path, ".jsonl")
			    ? xasprintf("%.*s.csv", (int)(strlen(in[i].path) - 6), in[i].path) : xstrdup(in[i].path);
		int fd = open(csv, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
		struct stat st;
		if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && flock(fd, LOCK_SH | LOCK_NB) &&
		    errno == EWOULDBLOCK) {
			fprintf(stderr, "%s: error: a sweep is still writing it (it holds the lock of '%s'): "
				"merge once it has ended\n", in[i].path, csv);
			bad++;
		}
		if (fd >= 0)
			close(fd);
		free(csv);
	}
	return bad ? -1 : 0;
}

/* "2, 5, 8..11, ...": the first few missing points of the sweep's
 * points (present[k] false), runs of three or more as a range. */
static void list_missing(const bool *present, long points, char *buf, size_t n)
{
	size_t len = 0;
	int items = 0;
	buf[0] = 0;
	for (long k = 0; k < points; k++) {
		if (present[k])
			continue;
		long j = k;
		while (j + 1 < points && !present[j + 1])
			j++;
		for (long i = k; i <= j; i = j - k >= 2 ? j + 1 : i + 1) {
			if (items++ == 8) {
				snprintf(buf + len, n - len, ", ...");
				return;
			}
			int w = j - k >= 2 ? snprintf(buf + len, n - len, "%s%ld..%ld", len ? ", " : "", k, j)
					   : snprintf(buf + len, n - len, "%s%ld", len ? ", " : "", i);
			len = w < 0 || (size_t)w >= n - len ? n - 1 : len + (size_t)w;
		}
		k = j;
	}
}

/* Whether what was read is complete: no torn row, and with origins every
 * point of the sweep there (per input: its shard's count). Says what is
 * missing, as errors, or with partial as warnings ending in "merged K of
 * P points; missing: ..."). Returns 0 when complete, 1 when not. */
static int check_complete(const struct merge *m, const struct input *in, int n, const struct sweep_origin *whole,
			  bool partial)
{
	const char *level = partial ? "warning" : "error";
	int incomplete = 0;
	for (int i = 0; i < n; i++) {
		if (in[i].torn_line) {
			fprintf(stderr, "%s:%ld: %s: torn last row (a sweep killed while writing it; 'ddlsim sweep "
				"--resume' cuts it and runs its point again)%s\n", in[i].path, in[i].torn_line, level,
				partial ? ": left out" : "");
			incomplete = 1;
		}
		long want = in[i].has_origin ? sweep_origin_shard_points(&in[i].o) : 0;
		if (in[i].has_origin && in[i].rows < want) {
			if (in[i].o.shards > 1)
				fprintf(stderr, "%s: %s: holds %ld of the %ld points of shard %ld of %ld\n", in[i].path,
					level, in[i].rows, want, in[i].o.shard, in[i].o.shards);
			else
				fprintf(stderr, "%s: %s: holds %ld of the sweep's %ld points\n", in[i].path, level,
					in[i].rows, want);
			incomplete = 1;
		}
	}
	if (!whole)
		return incomplete;
	bool *present = xcalloc((size_t)whole->points + 1, 1);
	long have = 0;
	for (size_t i = 0; i < m->n; i++)
		if (m->lines[i].point < whole->points && !present[m->lines[i].point]) {
			present[m->lines[i].point] = true;
			have++;
		}
	if (have < whole->points) {
		char list[400];
		list_missing(present, whole->points, list, sizeof(list));
		if (partial)
			fprintf(stderr, "ddlsim: merge: warning: merged %ld of %ld points; missing: %s (--partial)\n",
				have, whole->points, list);
		else
			fprintf(stderr, "ddlsim: merge: error: sweep '%s' has %ld points, %ld missing: %s; resume the "
				"shards that lack them (ddlsim sweep --resume), or pass --partial to merge what is "
				"there\n", whole->sweep, whole->points, whole->points - have, list);
		incomplete = 1;
	}
	free(present);
	return incomplete;
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

/* OUT and its origin record may replace no input (a shard, an origin
 * read) and no file that is not an origin (util/samefile.h,
 * cli/sweep_origin.h). Returns 0 or an exit code after saying why. */
static int check_outputs(const char *outp, const struct input *in, int n)
{
	struct samefile *sf = samefile_create();
	for (int i = 0; i < n; i++)
		samefile_input(sf, "a shard", in[i].path);
	samefile_inputs_read(sf, "an origin record it read", 0);
	char *origin = sweep_origin_path(outp), why[1200];
	samefile_output(sf, "OUT", outp);
	samefile_output(sf, "OUT's origin record", origin);
	int rc = cli_check_samefile(sf);
	samefile_destroy(sf);
	free(origin);
	if (!rc && sweep_origin_check_target(outp, why, sizeof(why))) {
		fprintf(stderr, "ddlsim: OUT '%s': error: %s\n", outp, why);
		rc = EXIT_INPUT;
	}
	return rc;
}

/* The command line: OUT and the inputs (into in[]), --partial anywhere,
 * an input of OUT's other format refused. Returns 0 or EXIT_USAGE. */
static int parse_args(int argc, char **argv, const char **outp, struct input *in, int *n, bool *partial)
{
	struct merge_opts o = { 0 };
	const char **pos = xcalloc((size_t)argc, sizeof(*pos));
	int npos = 0;
	*outp = NULL;
	*n = 0;
	if (opt_parse(&cmd_merge_opts, argc, argv, &o, pos, &npos)) {
		free(pos);
		return EXIT_USAGE;
	}
	*partial = o.partial;
	*outp = npos ? pos[0] : NULL;
	for (int k = 1; k < npos; k++)
		in[(*n)++].path = pos[k];
	free(pos);
	if (!*outp || !*n)
		return cli_usage_error("'merge' needs an output file and at least one input");
	bool jsonl = ends_with(*outp, ".jsonl");
	if (!jsonl && !ends_with(*outp, ".csv"))
		return cli_usage_error("merge: the output must end in .csv or .jsonl, got '%s'", *outp);
	for (int i = 0; i < *n; i++)
		if (ends_with(in[i].path, jsonl ? ".csv" : ".jsonl"))
			return cli_usage_error("merge: input '%s' is %s but OUT '%s' is %s: merge the %s files of "
					       "the shards into OUT (and their %s files apart)", in[i].path,
					       jsonl ? "CSV" : "JSON lines", *outp, jsonl ? "JSON lines" : "CSV",
					       jsonl ? ".jsonl" : ".csv", jsonl ? ".csv" : ".jsonl");
	return 0;
}

int cmd_merge(int argc, char **argv)
{
	struct input *in = xcalloc((size_t)argc, sizeof(*in));
	const char *outp;
	int n, rc;
	bool partial = false;
	struct merge m = { 0 };
	if ((rc = parse_args(argc, argv, &outp, in, &n, &partial)))
		goto out;
	bool jsonl = ends_with(outp, ".jsonl");
	if ((rc = cli_check_output(outp)))
		goto out;
	m.first = in[0].path;
	struct sweep_origin whole = { 0 };
	rc = EXIT_INPUT;
	int orc = check_origins(in, n, partial, &whole);
	if (orc < 0 || check_locks(in, n))
		goto out;
	if ((rc = check_outputs(outp, in, n)))
		goto out;
	rc = EXIT_INPUT;
	for (int i = 0; i < n; i++)
		if (read_input(&m, &in[i], jsonl))
			goto out;
	if (m.n)  /* no rows: m.lines is NULL, which qsort may not take */
		qsort(m.lines, m.n, sizeof(*m.lines), cmp_line);
	bool have_whole = in[0].has_origin;  /* then every input has one: whole is the sweep */
	int incomplete = check_complete(&m, in, n, have_whole ? &whole : NULL, partial);
	if (incomplete && !partial)
		goto out;
	long kept = 0;
	rc = EXIT_FAIL;
	/* OUT's origin says it is the whole sweep: only when it is */
	if (write_out(&m, outp, orc == 0 && !incomplete ? &whole : NULL, &kept))
		goto out;
	printf("%ld points from %d files written to %s\n", kept, n, outp);
	rc = EXIT_OK;
out:
	for (size_t i = 0; i < m.n; i++)
		free(m.lines[i].text);
	free(m.lines);
	free(m.header);
	free(in);
	return rc;
}
