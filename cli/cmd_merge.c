/* cmd_merge: `ddlsim merge OUT INPUT...` joins sweep shards.
 *
 * CSV (OUT ends in .csv): every input must have the same header; the rows
 * of all inputs are written under one header, ordered by point index, a
 * point that appears twice kept once (the first). JSON lines (.jsonl): the
 * same by each record's "point". A torn last line (a killed shard) is
 * left out. The merge of all shards of a sweep has the rows of the
 * unsharded sweep. */
#include <errno.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "cli.h"
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

int cmd_merge(int argc, char **argv)
{
	if (argc < 3)
		return cli_usage_error("'merge' needs an output file and at least one input");
	const char *outp = argv[1];
	bool jsonl = ends_with(outp, ".jsonl");
	if (!jsonl && !ends_with(outp, ".csv"))
		return cli_usage_error("merge: the output must end in .csv or .jsonl, got '%s'", outp);
	struct line *lines = NULL;
	size_t n = 0, cap = 0;
	char *header = NULL;
	int rc = EXIT_INPUT;

	for (int a = 2; a < argc; a++) {
		FILE *f = fopen(argv[a], "r");
		if (!f) {
			fprintf(stderr, "%s: error: cannot open: %s\n", argv[a], strerror(errno));
			goto out;
		}
		char *l = NULL;
		size_t lc = 0;
		ssize_t len;
		bool first = true;
		while ((len = getline(&l, &lc, f)) > 0) {
			if (l[len - 1] != '\n')
				break;
			if (!jsonl && first) {
				first = false;
				if (!header)
					header = xstrdup(l);
				else if (strcmp(header, l)) {
					fprintf(stderr, "%s: error: header differs from %s's\n", argv[a], argv[2]);
					free(l);
					fclose(f);
					goto out;
				}
				continue;
			}
			long p;
			if (jsonl) {
				json_t *j = json_loads(l, 0, NULL);
				json_t *pi = json_object_get(j, "point");
				p = json_is_integer(pi) ? (long)json_integer_value(pi) : -1;
				json_decref(j);
			} else
				p = strtol(l, NULL, 10);
			if (p < 0) {
				fprintf(stderr, "%s: error: a line without a point index: %.60s\n", argv[a], l);
				free(l);
				fclose(f);
				goto out;
			}
			XGROW(lines, cap, n + 1);
			lines[n].point = p;
			lines[n].seq = n;
			lines[n++].text = xstrdup(l);
		}
		free(l);
		fclose(f);
	}
	qsort(lines, n, sizeof(*lines), cmp_line);
	struct atomic_file af;
	rc = EXIT_FAIL;
	if (atomic_file_open(&af, outp)) {
		fprintf(stderr, "%s: error: cannot write: %s\n", outp, strerror(errno));
		goto out;
	}
	if (header)
		fputs(header, af.f);
	long last = -1, kept = 0;
	for (size_t i = 0; i < n; i++) {
		long p = lines[i].point;
		if (p == last)
			continue;
		last = p;
		fputs(lines[i].text, af.f);
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
	for (size_t i = 0; i < n; i++)
		free(lines[i].text);
	free(lines);
	free(header);
	return rc;
}
