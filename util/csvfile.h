/* csvfile: the records of a CSV file (RFC 4180), parsed by libcsv.
 *
 * A field may hold a comma, a doubled quote or a line break inside quotes
 * (an error message column): libcsv splits the fields, this module adds
 * what the readers of sweep outputs need beside them: the line a record
 * starts on (for "file:line:" messages), its bytes as written (so `merge`
 * copies a row unchanged) and the offset just past it (so `sweep --resume`
 * can cut a torn last record). A record ends at a line feed outside
 * quotes; a carriage return before it, and blanks around an unquoted
 * field, are not part of the field; blank lines are skipped. */
#ifndef DDLSIM_CSVFILE_H
#define DDLSIM_CSVFILE_H

#include <stddef.h>
#include <stdio.h>

struct csvfile_record {
	const char *const *field;   /* nfields NUL-terminated values, borrowed for the call */
	int nfields;
	long line;                  /* 1-based line of the file the record starts on */
	const char *text;           /* the record's bytes as in the file, its line break included */
	size_t text_len;
	long end;                   /* byte offset of f just past the record */
};

/* Also pass a last record that lacks its line break (a file written by
 * hand); without it, such a record is a torn write and is left out. */
#define CSVFILE_TAIL 1u

/* Why csvfile_read() failed: the line (0 when not one line's fault) and
 * what is wrong, for "file:line: error: why". */
struct csvfile_error {
	long line;
	char why[160];
};

/* Call fn for each complete record of f, read from its current position,
 * in order. Returns 0 after the last one, fn's value as soon as fn returns
 * nonzero (nothing more is read), or -1 with *err filled when f cannot be
 * read, a line holds a NUL byte or is longer than INFILE_MAX_LINE
 * (infile.h: never a field cut at the NUL or split), or memory runs out. */
int csvfile_read(FILE *f, unsigned flags, int (*fn)(void *ctx, const struct csvfile_record *r),
		 void *ctx, struct csvfile_error *err);

#endif
