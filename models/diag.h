/* diag: collects user-facing input errors with their file and location.
 *
 * A loader does not stop at the first problem: it reports every one it
 * finds into a struct diag and the caller checks diag_count() at the end.
 * Messages follow the house format, lowercase, what is wrong first:
 *
 *     scenario.json: /parallel/dp: must be >= 1, got 0
 *     model.json:3:14: error: ... (JSON syntax, from jansson)
 *
 * Messages go to the stream given at init (stderr in the CLI) and, when a
 * buffer is attached, are also appended to it so tests can check them.
 * A message is one line: what it quotes from a file (an unknown key, a
 * value) reaches the terminal with its control characters escaped (\n,
 * \x1b, \u009b), never as an escape sequence. */
#ifndef DDLSIM_DIAG_H
#define DDLSIM_DIAG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

struct diag {
	FILE *out;      /* where messages are printed; NULL = silent */
	char *buf;      /* all messages, '\n'-separated; owned, may be NULL */
	size_t len;
	size_t cap;     /* bytes allocated at buf (grown by doubling: a search's
			   thousands of rejections stay linear under any allocator) */
	int count;      /* number of errors reported */
	bool first_only;/* keep only the first message from mark on (diag_first_only) */
	size_t mark;
};

/* Prepare d to print to out (may be NULL). */
void diag_init(struct diag *d, FILE *out);
/* From now on, keep (and print) only the first message reported, error
 * or warning; later ones are counted (errors) but neither formatted,
 * kept nor printed. For a caller that needs only whether something is
 * wrong and its first reason (the plan search's screen rejects most
 * plans it enumerates); calling it again starts afresh. */
void diag_first_only(struct diag *d);
/* Free the message buffer. */
void diag_finish(struct diag *d);

/* Report an error about JSON path jpath ("" for the whole file) in file.
 * Always returns -1 so callers can write `return diag_err(...)`. */
int diag_err(struct diag *d, const char *file, const char *jpath,
	     const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Report a warning about jpath in file: printed and kept in the buffer
 * like an error ("file: /path: warning: ..."), but not counted, so the
 * caller goes on. */
void diag_warn(struct diag *d, const char *file, const char *jpath,
	       const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Report an error at line:col of file (1-based). Returns -1. */
int diag_err_at(struct diag *d, const char *file, int line, int col,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Report an error with no location. Returns -1. */
int diag_errf(struct diag *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Number of errors so far. */
static inline int diag_count(const struct diag *d) { return d->count; }
/* All messages so far ("" if none); borrowed. */
const char *diag_text(const struct diag *d);

#endif
