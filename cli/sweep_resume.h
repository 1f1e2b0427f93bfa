/* sweep_resume: what an existing sweep output holds, for `ddlsim sweep
 * --resume`, and the lock that keeps two sweeps off one output.
 *
 * The CSV is locked (flock) while a sweep writes it; a sweep killed a
 * moment ago may still have children letting go of the lock (they die
 * with it), so opening waits SWEEP_LOCK_WAIT_S for it. --resume
 * continues only an output of the same sweep and shard (its origin file,
 * cli/sweep_origin.h, says so) and marks the points each file holds
 * already. */
#ifndef DDLSIM_SWEEP_RESUME_H
#define DDLSIM_SWEEP_RESUME_H

#include <stdbool.h>

#include "diag.h"
#include "sweep_origin.h"

/* How long a sweep waits for the lock of its output (seconds). */
#define SWEEP_LOCK_WAIT_S 2.0

/* Open the CSV at csv for appending and lock it into *fd: an existing
 * one (create false: for --resume; *fd -1 when there is none), else a
 * new one. Returns 0, or an exit code after reporting in d (EXIT_USAGE:
 * it exists; EXIT_INPUT: not a regular file; EXIT_FAIL: another sweep
 * holds its lock, or it cannot be opened). */
int sweep_resume_open_csv(const char *csv, bool create, int *fd, struct diag *d);

/* --resume: the output (csv, open and locked on fd, or fd -1; jsonl)
 * must be the sweep me's (its origin file); the points its CSV holds are
 * marked in in_csv, its JSON lines' in in_jsonl (npoints each), a torn
 * last CSV record cut, and *had_header set when the CSV has its header.
 * Nothing there is a fresh start (0). Returns 0, or an exit code after
 * reporting in d. */
int sweep_resume_read(const char *csv, const char *jsonl, int fd, const struct sweep_origin *me,
		      long npoints, bool *in_csv, bool *in_jsonl, bool *had_header, struct diag *d);

#endif
