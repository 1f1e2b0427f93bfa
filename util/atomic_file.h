/* atomic_file: the one rule for the files ddlsim writes.
 *
 * A file is written so that readers see the old one or the whole new one,
 * never a part: the data goes to a fresh temporary in the target's
 * directory, named "<target>.tmp.<pid>.XXXXXX" (mkstemp, so concurrent
 * writers never share one), is flushed and fsync'ed ("staged"), then
 * renamed over the target ("published"). On any failure before the
 * rename the temporary is removed and the target is untouched.
 *
 * A command with several outputs (a run's report.json, report.csv, SVGs,
 * HTML and trace; plan's plans.csv and plans.jsonl) stages them all and
 * publishes them together with atomic_file_publish(): a run publishes all
 * its outputs or none. The renames run with SIGINT, SIGTERM and SIGXFSZ
 * blocked, and each target that existed is first linked to a backup, so a
 * rename that fails half-way puts the earlier files back: a failed re-run
 * never leaves a mixed set or deletes the earlier run's files.
 *
 * Only a regular file (or nothing) is replaced: a FIFO, a device such as
 * /dev/null or a directory at the target is refused (atomic_file_check(),
 * also done by atomic_file_open()), never replaced by a regular file.
 *
 * Temporaries of this naming whose process is gone (a kill -9 between
 * fsync and rename, a power cut) are removed by the next atomic_file_open()
 * of the same target; a live temporary registers with cleanup.h, so a
 * signal removes it.
 *
 * Test hook: after atomic_file_fail_publish_at(N) (the command line sets
 * it from DDLSIM_TEST_FAIL_PUBLISH=N, cli/main.c), the Nth rename this
 * process makes while publishing fails with EIO (as a full disk or a
 * directory gone read-only would), so the all-or-none roll-back is tested
 * end to end (tests/test-files.c); the renames that put backups back are
 * not counted. Never called, as in every real run, it does nothing. */
#ifndef DDLSIM_ATOMIC_FILE_H
#define DDLSIM_ATOMIC_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct atomic_file {
	FILE *f;        /* write here between open and stage */
	char *path;     /* target (owned) */
	char *tmp;      /* temporary (owned), NULL once published or aborted */
};

/* The target is there and is not a regular file: atomic_file_open() and
 * atomic_file_write() return -ATOMIC_FILE_ENOTREG. */
#define ATOMIC_FILE_ENOTREG 4096

/* Check that path is a regular file or nothing (a dangling name). Returns
 * 0, or -1 with why[] set: "'p' is a FIFO, expected a regular file or
 * nothing (refusing to replace it)". */
int atomic_file_check(const char *path, char *why, size_t n);

/* Refuse a non-regular target, remove stale temporaries of path, create
 * the temporary. Returns 0, or -errno / -ATOMIC_FILE_ENOTREG (nothing
 * created). */
int atomic_file_open(struct atomic_file *af, const char *path);
/* Flush, fsync and close the temporary; it stays until published or
 * aborted. Returns 0, or -errno after removing it. */
int atomic_file_stage(struct atomic_file *af);
/* Rename the n staged files into place, all or none (see above); af[i]
 * with a NULL tmp are skipped. Returns 0, or -errno after removing the
 * temporaries and putting back what was replaced (-EINVAL: two of them
 * have one target, nothing renamed). Frees af's strings. */
int atomic_file_publish(struct atomic_file *af, int n);
/* Stage and publish one file. Returns 0 or -errno. Frees af's strings. */
int atomic_file_commit(struct atomic_file *af);
/* Close and remove the temporary; the target is untouched. A no-op on a
 * zeroed or published af. */
void atomic_file_abort(struct atomic_file *af);

/* Whether paths a and b name one file: the same inode when both exist,
 * else (neither exists) the same name once their directories are
 * resolved ("o/r.json" and "./o/../o/r.json"). Two outputs of one command
 * must not (cli_check_distinct()). */
bool atomic_file_same_target(const char *a, const char *b);

/* The whole cycle for data already in memory. Returns 0 or -errno. */
int atomic_file_write(const char *path, const void *data, size_t len);

/* strerror() that knows ATOMIC_FILE_ENOTREG; e > 0. */
const char *atomic_file_strerror(int e);

/* The test hook above: the nth publishing rename fails (n <= 0: none). */
void atomic_file_fail_publish_at(long n);

#endif
