/* bug: always-on invariant checks (git's BUG(), SimGrid's xbt_assert).
 *
 * BUG_ON(cond, fmt, ...) stops the program with the file, line and message
 * when cond holds. It is for the program's own mistakes at module
 * boundaries (a plan that plan_check() accepted but a builder cannot
 * build, an index out of its table); a user's mistake is never a BUG_ON
 * but a diag error with the input that caused it. Not compiled out by
 * NDEBUG. */
#ifndef DDLSIM_BUG_H
#define DDLSIM_BUG_H

#include <stdio.h>
#include <stdlib.h>

#define BUG_ON(cond, ...)                                                            \
	do {                                                                          \
		if (__builtin_expect(!!(cond), 0)) {                                  \
			fprintf(stderr, "ddlsim: BUG at %s:%d: %s: ", __FILE__, __LINE__, \
				#cond);                                               \
			fprintf(stderr, __VA_ARGS__);                                 \
			fputc('\n', stderr);                                          \
			abort();                                                      \
		}                                                                     \
	} while (0)

#endif
