/* xalloc: allocation that cannot fail silently.
 *
 * The ddlsim CLI has nothing useful to do when memory runs out in the
 * middle of building a program or a report: these wrappers print what
 * could not be allocated and exit with status 1 (failure), git-style, so
 * no caller can go on with a NULL and build a wrong simulation. */
#ifndef DDLSIM_XALLOC_H
#define DDLSIM_XALLOC_H

#include <stddef.h>
#include <stdlib.h>

void *xmalloc(size_t size);
void *xcalloc(size_t n, size_t size);
/* n x size, checked for overflow. */
void *xreallocarray(void *p, size_t n, size_t size);
char *xstrdup(const char *s);
/* printf into a new string (free()). */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Grow *v (of *cap elements of size) to hold at least need elements,
 * doubling; cap 0 starts at 16. */
#define XGROW(v, cap, need)                                                        \
	do {                                                                        \
		if ((size_t)(need) > (size_t)(cap)) {                               \
			size_t c_ = (cap) ? (size_t)(cap) : 16;                     \
			while (c_ < (size_t)(need))                                 \
				c_ *= 2;                                            \
			(v) = xreallocarray((v), c_, sizeof(*(v)));                 \
			(cap) = c_;                                                 \
		}                                                                   \
	} while (0)

#endif
