/* atomic_file: write a file so that readers see the old one or the whole
 * new one, never a part.
 *
 * The data goes to a fresh temporary file in the target's directory
 * (mkstemp, so concurrent writers never share one), is flushed and
 * fsync'ed, then renamed over the target. On any failure the temporary is
 * removed and the target is untouched. Used by the reports and by calib's
 * profile writer. */
#ifndef DDLSIM_ATOMIC_FILE_H
#define DDLSIM_ATOMIC_FILE_H

#include <stddef.h>
#include <stdio.h>

struct atomic_file {
	FILE *f;        /* write here between open and commit */
	char *path;     /* target (owned) */
	char *tmp;      /* temporary (owned) */
};

/* Create the temporary for path. Returns 0, or -errno (nothing created). */
int atomic_file_open(struct atomic_file *af, const char *path);
/* Flush, fsync, close and rename into place. Returns 0, or -errno after
 * removing the temporary. Frees af's strings either way. */
int atomic_file_commit(struct atomic_file *af);
/* Close and remove the temporary; the target is untouched. */
void atomic_file_abort(struct atomic_file *af);

/* The whole cycle for data already in memory. Returns 0 or -errno. */
int atomic_file_write(const char *path, const void *data, size_t len);

#endif
