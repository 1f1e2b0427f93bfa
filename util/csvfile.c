/* csvfile: the records of a CSV file, parsed by libcsv (csvfile.h).
 *
 * The file is fed to libcsv a line at a time; a line is only the unit of
 * feeding, the fields and the records are libcsv's. Only a line feed ends
 * a record (the terminator function; a carriage return counts as a blank,
 * so CRLF files read the same), so a record ends at the end of the line
 * whose feed made libcsv report it: that line's end is the record's end
 * offset, and the lines fed since it began are its text. */
#include <csv.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "csvfile.h"
#include "infile.h"
#include "xalloc.h"

struct state {
	char **field;               /* the fields of the record so far */
	int nfields;
	size_t field_cap;
	bool row_done;              /* libcsv reported the record's end */
	bool in_record;             /* a line of the record was fed */
	char *text;                 /* the lines of the record */
	size_t text_len, text_cap;
	long line, start;           /* the line last read; the record's first */
};

static int is_blank(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static int is_term(unsigned char c)
{
	return c == '\n';
}

static void on_field(void *s, size_t len, void *data)
{
	struct state *st = data;
	XGROW(st->field, st->field_cap, st->nfields + 1);
	char *v = xmalloc(len + 1);
	if (len)
		memcpy(v, s, len);
	v[len] = 0;
	st->field[st->nfields++] = v;
}

static void on_row(int c, void *data)
{
	(void)c;
	((struct state *)data)->row_done = true;
}

static bool blank_line(const char *l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!is_blank((unsigned char)l[i]) && !is_term((unsigned char)l[i]))
			return false;
	return true;
}

static void forget_record(struct state *st)
{
	for (int i = 0; i < st->nfields; i++)
		free(st->field[i]);
	st->nfields = 0;
	st->row_done = st->in_record = false;
	st->text_len = 0;
}

static int deliver(struct state *st, long end, int (*fn)(void *, const struct csvfile_record *),
		   void *ctx)
{
	struct csvfile_record r = {
		.field = (const char *const *)st->field, .nfields = st->nfields, .line = st->start,
		.text = st->text, .text_len = st->text_len, .end = end,
	};
	int rc = fn(ctx, &r);
	forget_record(st);
	return rc;
}

int csvfile_read(FILE *f, unsigned flags, int (*fn)(void *ctx, const struct csvfile_record *r),
		 void *ctx, struct csvfile_error *err)
{
	struct csvfile_error scratch;
	if (!err)
		err = &scratch;
	err->line = 0;
	err->why[0] = 0;
	struct csv_parser p;
	if (csv_init(&p, 0)) {
		snprintf(err->why, sizeof(err->why), "%s", strerror(ENOMEM));
		return -1;
	}
	csv_set_space_func(&p, is_blank);
	csv_set_term_func(&p, is_term);
	struct state st = { 0 };
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	long off = ftell(f);
	int rc = 0;
	if (off < 0)
		off = 0;  /* a pipe: offsets from where reading began */
	while ((len = getline(&line, &cap, f)) > 0) {
		st.line++;
		if (infile_line_check(line, (size_t)len, err->why, sizeof(err->why))) {
			err->line = st.line;
			rc = -1;
			goto out;
		}
		if (line[len - 1] != '\n' && !(flags & CSVFILE_TAIL))
			break;  /* torn: its record is left out */
		off += len;
		if (!st.in_record) {
			if (blank_line(line, (size_t)len))
				continue;
			st.in_record = true;
			st.start = st.line;
		}
		XGROW(st.text, st.text_cap, st.text_len + (size_t)len + 1);
		memcpy(st.text + st.text_len, line, (size_t)len);
		st.text_len += (size_t)len;
		st.text[st.text_len] = 0;
		if (csv_parse(&p, line, (size_t)len, on_field, on_row, &st) != (size_t)len) {
			snprintf(err->why, sizeof(err->why), "%s", strerror(ENOMEM));
			rc = -1;
			goto out;
		}
		if (st.row_done && (rc = deliver(&st, off, fn, ctx)))
			goto out;
	}
	if (ferror(f)) {
		snprintf(err->why, sizeof(err->why), "cannot read: %s", strerror(errno ? errno : EIO));
		rc = -1;
		goto out;
	}
	if ((flags & CSVFILE_TAIL) && st.in_record) {
		csv_fini(&p, on_field, on_row, &st);
		if (st.row_done)
			rc = deliver(&st, off, fn, ctx);
	}
out:
	forget_record(&st);
	free(st.field);
	free(st.text);
	free(line);
	csv_free(&p);
	return rc;
}
