/* reasons: why things were rejected, grouped, for a summary a reader can
 * act on ("37656 rejected: /training/precision: fp8 needs a GPU with a
 * peak for fp8 ...") instead of a bare count.
 *
 * A rejection is one message (the first problem found) and an example of
 * what it rejected. Messages are grouped by their text with every number
 * masked, so "pp x interleave = 4 x 2 must divide the 80 layers" and
 * "... = 8 x 2 ..." are one reason; a group keeps its count, its first
 * message (on one line: control characters written \n, \t, \xNN, so
 * a summary is safe to print) and its first example. At most REASONS_MAX groups are kept
 * apart; later new reasons are counted in one last group, "other reasons". */
#ifndef DDLSIM_REASONS_H
#define DDLSIM_REASONS_H

#include <stdbool.h>
#include <stddef.h>

#define REASONS_MAX 256

struct reasons;

/* One group of rejections (borrowed from the tally). */
struct reason {
	const char *msg;        /* the group's first message */
	const char *example;    /* the first thing it rejected */
	long count;
};

/* A new, empty tally (reasons_destroy()). */
struct reasons *reasons_create(void);
/* NULL is a no-op. */
void reasons_destroy(struct reasons *r);
/* Count one rejection for msg, with example; both are copied when they
 * open a group. */
void reasons_add(struct reasons *r, const char *msg, const char *example);
/* Count one rejection for msg if its group is open and return true;
 * false, counting nothing, when msg would open a group (then
 * reasons_add() it with its example): a caller whose example is costly
 * to write makes it only for a new group. */
bool reasons_count(struct reasons *r, const char *msg);
/* Rejections counted. */
long reasons_total(const struct reasons *r);
/* Groups, and the i-th of them, most rejections first (ties: the first
 * seen first; "other reasons" last). */
int reasons_groups(const struct reasons *r);
const struct reason *reasons_get(struct reasons *r, int i);

#endif
