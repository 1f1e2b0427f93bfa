/* outfile: a large output written as it is produced, checked, atomic,
 * plain or gzip.
 *
 * For outputs too large to hold in memory (a run's trace): the text goes
 * to the temporary of an atomic_file (util/atomic_file.h) as it is
 * produced, compressed with zlib's gzip stream (gzwrite) when the
 * target's name ends in ".gz". Every write's result is checked: the first
 * failure (ENOSPC, EIO, a compression error) is remembered, later writes
 * are dropped, and outfile_stage() reports it, so a caller checks once at
 * the end and never publishes a truncated file. Like atomic_file, the
 * target is replaced only when the caller publishes what was staged. */
#ifndef DDLSIM_OUTFILE_H
#define DDLSIM_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "atomic_file.h"

struct outfile {
	struct atomic_file af;      /* its temporary; af.path the target */
	void *gz;                   /* zlib's gzFile, NULL: plain */
	int err;                    /* the first failure (an errno value), 0: none */
	unsigned long long bytes;   /* written, before compression */
};

/* Whether path names a gzip file (ends in ".gz"). */
bool outfile_is_gzip(const char *path);

/* Create the temporary of path (atomic_file_open) and, for a ".gz"
 * name, a gzip stream onto it. Returns 0, or -errno /
 * -ATOMIC_FILE_ENOTREG with nothing created. */
int outfile_open(struct outfile *o, const char *path);

/* Append n bytes, a string, or printf-formatted text; a failure is
 * remembered in o->err (nothing after it is written). */
void outfile_write(struct outfile *o, const void *p, size_t n);
void outfile_puts(struct outfile *o, const char *s);
void outfile_printf(struct outfile *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* End the stream (the gzip trailer), flush, fsync and close the
 * temporary into *staged for the caller to publish with its other
 * outputs (atomic_file_publish) or drop (atomic_file_abort). Returns 0,
 * or -errno of the first failure of any write or of the end, the
 * temporary removed and *staged zeroed. o is finished either way. */
int outfile_stage(struct outfile *o, struct atomic_file *staged);

/* Drop the file: the temporary removed, the target untouched. A no-op on
 * a finished or zeroed o. */
void outfile_abort(struct outfile *o);

#endif
