/* runner: many simulations against one set of inputs, each in its own
 * forked child process, a fixed number at a time.
 *
 * SimGrid initialises once per process (engine.h), so every simulation of
 * a sweep, a plan search's finalists or a multi-scenario `ddlsim run` is a
 * child: fork() shares the parent's loaded inputs read-only (copy on
 * write), the child runs the caller's job and sends back one fixed-size
 * struct result_row over a pipe, then _exit()s. The parent keeps `jobs`
 * children running and hands each row to the caller as it arrives, so an
 * interrupted sweep has everything that finished.
 *
 * A child that crashes (a signal), exits without a row, exceeds its time
 * limit (killed with SIGKILL) or its address-space limit (RLIMIT_AS: the
 * allocation fails and xalloc exits) yields an error row with the reason;
 * the runner never loses or hangs on a job. */
#ifndef DDLSIM_RUNNER_H
#define DDLSIM_RUNNER_H

#include <signal.h>
#include <stdatomic.h>

#include "result.h"

/* Progress (issue 27): with runner_opts.tick set, each child's engine
 * runs count the tasks they replay (engine_set_progress) into a counter
 * of a board shared across fork, and the parent calls tick(ctx, tasks)
 * every RUNNER_TICK_S while children run and after each job ends, tasks[i]
 * the tasks job i has replayed so far (its what-if side runs' included;
 * 0 before it starts). */
#define RUNNER_TICK_S 0.25
typedef void (*runner_tick_fn)(void *ctx, const long *tasks);

struct runner_opts {
	int jobs;                   /* children at once (>= 1) */
	double timeout_s;           /* per child; 0 = none */
	double mem_limit_bytes;     /* per child address space; 0 = none */
	runner_tick_fn tick;        /* NULL: no progress */
	const volatile sig_atomic_t *stop; /* non-zero: start no more jobs (the
					    * ones running end as they do;
					    * cleanup_defer() kills them) */
};

/* Runs in the child for job index i: fill row (result_row_fill() after a
 * simulation, or status and reason on failure). Its return value is
 * ignored; the row is what counts. */
typedef void (*runner_job_fn)(void *ctx, int i, struct result_row *row);
/* Runs in the parent as each job ends, in completion order. */
typedef void (*runner_done_fn)(void *ctx, int i, const struct result_row *row);

/* Run jobs 0..n-1. Returns 0 when every job was started and ended (rows
 * with errors included) or *o->stop ended the run early (the jobs not
 * started get no row), or -1 after reporting into d if the runner
 * itself could not go on (fork or pipe failed): the rows delivered so far
 * stand. */
int runner_run(const struct runner_opts *o, int n, runner_job_fn job, runner_done_fn done,
	       void *ctx, struct diag *d);

/* n counters, zero, in memory shared with the children forked after
 * (mmap MAP_SHARED): where engine runs in children report their
 * progress (engine.h). Exits like xalloc when the memory cannot be had.
 * runner_board_destroy(board, n) unmaps it (NULL: no-op). */
atomic_long *runner_board_create(int n);
void runner_board_destroy(atomic_long *board, int n);

#endif
