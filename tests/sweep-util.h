/* sweep-util.h: one collective's time on the collective sweep
 * (engine_collective_sweep, the engine of `ddlsim collective`), run in a
 * child process: the engine runs one simulation per process. Shared by
 * test-coll.c and test-classes.c; static inline: each suite is its own
 * executable. */
#ifndef DDLSIM_TESTS_SWEEP_UTIL_H
#define DDLSIM_TESTS_SWEEP_UTIL_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "coll.h"
#include "diag.h"
#include "engine.h"

/* The time of op over bytes on ranks[0..n) of t's first nodes nodes with
 * algo, or NAN if the sweep fails. */
static inline double sweep_forked(const struct topology *t, int nodes, const int *ranks, int n,
				  enum coll_op op, const char *algo, double bytes)
{
	int fd[2];
	cr_assert_eq(pipe(fd), 0);
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct diag d;
		diag_init(&d, stderr);
		struct engine_coll_point pt = { .bytes = bytes };
		double v = engine_collective_sweep(t, nodes, ranks, n, op, algo, &pt, 1, &d) ? NAN
											      : pt.time_s;
		_exit(write(fd[1], &v, sizeof(v)) == sizeof(v) ? 0 : 1);
	}
	double v = NAN;
	close(fd[1]);
	cr_assert_eq(read(fd[0], &v, sizeof(v)), (ssize_t)sizeof(v));
	close(fd[0]);
	int st;
	waitpid(pid, &st, 0);
	return v;
}

#endif
