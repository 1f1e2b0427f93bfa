/* engine_changed: which links' usage may have changed over a step of the
 * clock, found from SimGrid's modified action set and the transfers that
 * ended, for the link pass (engine_links.c) to read only those; part of
 * the engine adapter (engine_changed.cpp says why no other link's usage
 * can have moved). */
#ifndef DDLSIM_ENGINE_CHANGED_H
#define DDLSIM_ENGINE_CHANGED_H

#include <stdbool.h>

/* Start finding them (once per process, after the platform is built;
 * again: no effect). True if the network model allows it (the full update
 * with selective update, engine.c); false if not (the lazy update drains
 * the modified set itself): then engine_changed_links() always says -1
 * and engine_changed_note() keeps nothing. */
bool engine_changed_start(void);

/* Keep the route of transfer c (an sg_comm_t just posted, its action made
 * or to be made before SimGrid's next solve) from host `from` to host
 * `to` (sg_host_t). Every transfer the engine posts goes through here:
 * engine_platform_sendto_async() and engine_platform_put_async(). */
void engine_changed_note(void *c, void *from, void *to);

/* Links by id (engine_platform_route_ids()): a route's, borrowed. */
struct engine_changed_span {
	const int *ids;
	int n;
};

/* The links whose usage may have changed since the last
 * engine_changed_consumed(), as routes into *spans (a link may be in
 * several; borrowed until then), and their count; -1 if any link's may
 * have (a transfer whose route was not noted changed, or the model keeps
 * no modified set). Call it at a step of the clock, before reading
 * usages. */
int engine_changed_links(const struct engine_changed_span **spans);

/* The caller has read what engine_changed_links() gave: start anew. */
void engine_changed_consumed(void);

/* Changes of transfers whose route was not noted, so far (each made its
 * step read every link), and the transfers noted and not yet ended (for
 * tests). */
unsigned long engine_changed_unknown(void);
long engine_changed_noted(void);

#endif
