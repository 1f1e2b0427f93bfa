/* progress: how far a command's simulations have gone (issue 27: never a
 * silent long run), for run, compare, sweep and plan.
 *
 * The work is n jobs (simulations), each weighted by its estimated CPU
 * time and measured by the tasks its engine runs have replayed against
 * the tasks its estimate expects (sim/estimate.h: the count is exact, so
 * a job's share is the share of its tasks done); a finished job counts
 * whole. The percent is the weighted share done; the time left is the
 * elapsed time scaled by the share left once 5 % is done, before that
 * the estimate's (its CPU over the jobs run at once).
 *
 * Where it goes, on stderr:
 *   a terminal    one line rewritten in place, at most PROGRESS_HZ times a
 *                 second, once the command has run PROGRESS_AFTER_S (at
 *                 once when the estimate reached the long-run threshold,
 *                 cli/longrun.h), erased before other output and at the
 *                 end:
 *                   ddlsim sweep: 42% (4 of 10 points done, 1 failed), 12 s
 *                   elapsed, about 16 s left
 *   not a terminal, with json: one JSON line per finished job (sweep and
 *                 plan, whose records are JSON lines too; the records
 *                 themselves stay data):
 *                   {"progress": {"command": "sweep", "done": 4, "total": 10,
 *                    "failed": 1, "percent": 42.0, "elapsed_s": 12.0,
 *                    "remaining_s": 16.5}}
 *   otherwise, or quiet: nothing. */
#ifndef DDLSIM_PROGRESS_H
#define DDLSIM_PROGRESS_H

#include <stdbool.h>

#define PROGRESS_HZ 4
#define PROGRESS_AFTER_S 1.0

struct progress;

/* A progress report of command ("sweep") over n jobs of unit ("points"),
 * run jobs at a time; quiet: none; json: JSON lines when stderr is not a
 * terminal. Returns the report (progress_destroy()). */
struct progress *progress_create(const char *command, const char *unit, int n, int jobs,
				 bool quiet, bool json);
/* Show the line from now on, however short the elapsed time (the
 * long-run warning was given). */
void progress_eager(struct progress *p);
/* Erase the line and free p (NULL: no-op). */
void progress_destroy(struct progress *p);

/* Job i's estimate: cpu_s seconds of CPU, tasks to replay over its runs
 * (0: unknown; the job then counts when it ends). */
void progress_expect(struct progress *p, int i, double cpu_s, long tasks);

/* The tasks each job has replayed so far (tasks[0..n), runner.h's
 * tick): update the line. */
void progress_tasks(struct progress *p, const long *tasks);

/* Job i ended, failed or not. */
void progress_done(struct progress *p, int i, bool failed);

/* Erase the line before other output (redrawn at the next update). */
void progress_clear(struct progress *p);

#endif
