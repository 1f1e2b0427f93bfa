/* sweep_resume: a sweep's output read back for --resume and its CSV
 * locked (sweep_resume.h). The CSV is read through libcsv
 * (util/csvfile.h: a quoted error message may hold commas, quotes and
 * line breaks) and a torn last record cut; the JSON lines are read one
 * at a time, and rewritten atomically without torn, foreign or repeated
 * lines when there are any. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "atomic_file.h"
#include "cli.h"
#include "csvfile.h"
#include "infile.h"
#include "sweep_resume.h"

/* What read_done learns from the records of an existing CSV. */
struct done {
	const char *csv;
	bool *seen;                 /* per point */
	long npoints;
	bool had_header, foreign;
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
			dn->foreign = true;
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

/* Mark the points of the CSV open (and locked) on fd in seen; cut a torn
 * last record (a kill while a row was written, perhaps inside a quoted
 * field). Returns 0, or an exit code after reporting. */
static int read_done(const char *csv, int fd, bool *seen, long npoints, bool *had_header, struct diag *d)
{
	struct done dn = { .csv = csv, .seen = seen, .npoints = npoints, .d = d };
	int dfd = dup(fd);
	FILE *f = dfd >= 0 ? fdopen(dfd, "r") : NULL;
	if (!f) {
		if (dfd >= 0)
			close(dfd);
		diag_err(d, csv, "", "cannot read: %s", strerror(errno));
		return EXIT_FAIL;
	}
	struct csvfile_error ce;
	int rc = csvfile_read(f, 0, done_record, &dn, &ce);
	fclose(f);
	if (rc < 0) {
		if (ce.line)
			diag_err_at(d, csv, (int)ce.line, 1, "line %s: not a sweep output", ce.why);
		else
			diag_err(d, csv, "", "%s", ce.why);
		return ce.line ? EXIT_INPUT : EXIT_FAIL;
	}
	if (rc)
		return dn.foreign ? EXIT_INPUT : EXIT_FAIL;
	if (ftruncate(fd, dn.good_end)) {
		diag_err(d, csv, "", "cannot truncate a torn last line: %s", strerror(errno));
		return EXIT_FAIL;
	}
	*had_header = dn.had_header;
	return 0;
}

/* Mark the points of the JSON lines at path in seen, keeping one line per
 * point of this sweep; the file is rewritten (atomically) without the
 * torn, unreadable, foreign or repeated lines when there are any.
 * Returns 0, or an exit code after reporting. */
static int read_jsonl_done(const char *path, bool *seen, long npoints, struct diag *d)
{
	char why[1200];
	FILE *f = infile_open(path, why, sizeof(why));
	if (!f && errno == ENOENT)
		return 0;
	if (!f)
		return diag_err(d, path, "", "%s", why), EXIT_INPUT;
	struct atomic_file af;
	int e = atomic_file_open(&af, path);
	if (e) {
		fclose(f);
		diag_err(d, path, "", "cannot rewrite the JSON lines: %s", atomic_file_strerror(-e));
		return EXIT_FAIL;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	bool dropped = false;
	while ((len = getline(&line, &cap, f)) > 0) {
		json_t *j = line[len - 1] != '\n' || infile_line_check(line, (size_t)len, why, sizeof(why))
			    ? NULL : json_loads(line, 0, NULL);
		json_t *pi = json_object_get(j, "point");
		long i = json_is_integer(pi) ? (long)json_integer_value(pi) : -1;
		if (i >= 0 && i < npoints && !seen[i]) {
			seen[i] = true;
			fwrite(line, 1, (size_t)len, af.f);
		} else
			dropped = true;
		json_decref(j);
	}
	free(line);
	fclose(f);
	if (!dropped) {
		atomic_file_abort(&af);
		return 0;
	}
	if ((e = atomic_file_commit(&af))) {
		diag_err(d, path, "", "cannot rewrite the JSON lines: %s", atomic_file_strerror(-e));
		return EXIT_FAIL;
	}
	return 0;
}

int sweep_resume_open_csv(const char *csv, bool create, int *fd, struct diag *d)
{
	*fd = open(csv, O_RDWR | O_APPEND | O_CLOEXEC | O_NOCTTY | (create ? O_CREAT | O_EXCL : 0), 0644);
	if (*fd < 0 && !create && errno == ENOENT)
		return 0;
	if (*fd < 0) {
		diag_err(d, csv, "", "cannot open the output: %s", strerror(errno));
		return errno == EEXIST ? EXIT_USAGE : EXIT_FAIL;
	}
	struct stat st;
	if (fstat(*fd, &st) || !S_ISREG(st.st_mode)) {
		diag_err(d, csv, "", "expected a regular file (refusing to write it)");
		return EXIT_INPUT;
	}
	/* a sweep killed a moment ago may still have children letting go of
	 * the lock (they die with it): wait SWEEP_LOCK_WAIT_S for them */
	struct timespec nap = { 0, 50 * 1000 * 1000 };
	int tries = (int)(SWEEP_LOCK_WAIT_S / 0.05);
	while (flock(*fd, LOCK_EX | LOCK_NB) && tries-- > 0)
		nanosleep(&nap, NULL);
	if (tries < 0) {
		diag_err(d, csv, "", "another ddlsim sweep is writing this output (it holds its lock): "
			 "wait for it or use another --out");
		return EXIT_FAIL;
	}
	return 0;
}

int sweep_resume_read(const char *csv, const char *jsonl, int fd, const struct sweep_origin *me,
		      long npoints, bool *in_csv, bool *in_jsonl, bool *had_header, struct diag *d)
{
	struct sweep_origin theirs;
	char why[1200];
	int r = sweep_origin_read(csv, &theirs, why, sizeof(why));
	struct stat st;
	if (r == 0 && fd < 0 && stat(jsonl, &st) != 0)
		return 0;  /* nothing to resume: a fresh start */
	if (r <= 0)
		return diag_err(d, csv, "", "cannot resume: %s; it may be another sweep's output or one "
				"written before ddlsim recorded origins: remove it or use another --out", why),
		       EXIT_INPUT;
	if (!sweep_origin_same(me, &theirs) || theirs.shard != me->shard || theirs.shards != me->shards)
		return diag_err(d, csv, "", "cannot resume: the output belongs to sweep '%s' (hash %s, %ld "
				"points, shard %ld of %ld), not to this one '%s' (hash %s, %ld points, shard %ld of %ld)",
				theirs.sweep, theirs.hash, theirs.points, theirs.shard, theirs.shards, me->sweep,
				me->hash, me->points, me->shard, me->shards), EXIT_INPUT;
	int rc = fd >= 0 ? read_done(csv, fd, in_csv, npoints, had_header, d) : 0;
	return rc ? rc : read_jsonl_done(jsonl, in_jsonl, npoints, d);
}

