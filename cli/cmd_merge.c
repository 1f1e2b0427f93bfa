/* cmd_merge: `ddlsim merge OUT INPUT...` joins sweep shards.
 *
 * CSV (OUT ends in .csv): every input must have the same header; the rows
 * of all inputs are written under one header, ordered by point index, a
 * point that appears twice kept once (the first). JSON lines (.jsonl): the
 * same by each record's "point". A torn last line (a killed shard) is
 * left out. The merge of all shards of a sweep has the rows of the
 * unsharded sweep. CSV is read through libcsv (util/csvfile.h), so a
 * quoted field holding a comma, a quote or a line break (an error
 * message) stays in its row, and each row is copied as written. */
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "cli.h"
#include "csvfile.h"
#include "xalloc.h"

void cmd_merge_usage(FILE *f)
{
	fprintf(f, "usage: ddlsim merge OUT.csv SHARD.csv...\n"
		   "       ddlsim merge OUT.jsonl SHARD.jsonl...\n\n"
		   "Joins the outputs of sweep shards (or of interrupted and resumed sweeps) into\n"
		   "OUT: one header, rows ordered by point index, each point once.\n\n"
		   "example:\n"
		   "  ddlsim merge out/s/points.csv out/s/points.shard-*-of-4.csv\n\n"
		   "exit codes: 0 ok, 1 cannot write OUT, 2 usage, 3 an input is unreadable or its\n"
		   "header differs\n");
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
			m->header = xstrdup(r->text);
			return 0;
		}
		if (strcmp(m->header, r->text)) {
			fprintf(stderr, "%s:%ld: error: header differs from %s's\n", m->path, r->line, m->first);
			return 1;
		}
		return 0;
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
	while ((len = getline(&l, &lc, f)) > 0) {
		lineno++;
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
	FILE *f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "%s: error: cannot open: %s\n", path, strerror(errno));
		return -1;
	}
	m->path = path;
	m->header_seen = false;
	int rc = jsonl ? read_jsonl(m, f) : csvfile_read(f, 0, csv_record, m);
	if (rc < 0 && !jsonl)
		fprintf(stderr, "%s: error: cannot read: %s\n", path, strerror(errno));
	fclose(f);
	return rc ? -1 : 0;
}

int cmd_merge(int argc, char **argv)
{
	if (argc < 3)
		return cli_usage_error("'merge' needs an output file and at least one input");
	const char *outp = argv[1];
	bool jsonl = ends_with(outp, ".jsonl");
	if (!jsonl && !ends_with(outp, ".csv"))
		return cli_usage_error("merge: the output must end in .csv or .jsonl, got '%s'", outp);
	struct merge m = { .first = argv[2] };
	int rc = EXIT_INPUT;

	for (int a = 2; a < argc; a++)
		if (read_input(&m, argv[a], jsonl))
			goto out;
	qsort(m.lines, m.n, sizeof(*m.lines), cmp_line);
	struct atomic_file af;
	rc = EXIT_FAIL;
	if (atomic_file_open(&af, outp)) {
		fprintf(stderr, "%s: error: cannot write: %s\n", outp, strerror(errno));
		goto out;
	}
	if (m.header)
		fputs(m.header, af.f);
	long last = -1, kept = 0;
	for (size_t i = 0; i < m.n; i++) {
		long p = m.lines[i].point;
		if (p == last)
			continue;
		last = p;
		fputs(m.lines[i].text, af.f);
		kept++;
	}
	if (ferror(af.f)) {
		atomic_file_abort(&af);
		fprintf(stderr, "%s: error: cannot write\n", outp);
		goto out;
	}
	if (atomic_file_commit(&af)) {
		fprintf(stderr, "%s: error: cannot write\n", outp);
		goto out;
	}
	printf("%ld points from %d files written to %s\n", kept, argc - 2, outp);
	rc = EXIT_OK;
out:
	for (size_t i = 0; i < m.n; i++)
		free(m.lines[i].text);
	free(m.lines);
	free(m.header);
	return rc;
}
