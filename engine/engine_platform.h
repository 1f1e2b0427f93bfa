/* engine_platform: builds the SimGrid platform of a topology in memory
 * (SimGrid's C++ platform API), in time linear in its size. Part of the
 * engine adapter: only the engine's files call it, after SimGrid is initialised and
 * configured and before any actor is created. */
#ifndef DDLSIM_ENGINE_PLATFORM_H
#define DDLSIM_ENGINE_PLATFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "topology.h"

/* Build the platform of nodes nodes of t (checked by
 * topology_check_nodes()) as platform_emit() describes it, with the GPUs
 * used[] marks (NULL: all). Returns 0, or -1 if SimGrid rejected it. Once
 * per process. */
int engine_platform_build(const struct topology *t, int nodes, const unsigned char *used);

/* As engine_platform_build(), with x's parameter servers and degraded
 * links (platform.h; NULL: none). */
struct platform_extra;
int engine_platform_build_ex(const struct topology *t, int nodes, const unsigned char *used,
			     const struct platform_extra *x);

/* Start a transfer of bytes from host `from` to host `to` (sg_host_t)
 * with no actor on either (SimGrid's Comm::sendto_async): the parameter
 * servers' pushes and pulls, folding's posted group and mirror flows
 * (engine_coll.c, engine_p2p.c, engine_ps.c). It costs what a mailbox transfer between the two hosts
 * costs. Returns an sg_comm_t for engine_platform_wait_all(),
 * which releases it. */
void *engine_platform_sendto_async(void *from, void *to, double bytes);

/* sg_mailbox_put_async(mb, payload, bytes) of a transfer from host `from`
 * to host `to` (sg_host_t), its route noted (engine_changed.h): every
 * mailbox transfer the engine posts goes through here. */
void *engine_platform_put_async(void *mb, void *payload, long bytes, void *from, void *to);

/* The latency of the route from host `from` to host `to` (sg_host_t): the
 * sum of its links' latencies as the topology gives them, degraded links'
 * factors applied. The SimGrid links themselves have none (plain max-min
 * sharing, engine_platform.cpp): the engine charges this. */
double engine_platform_route_latency(void *from, void *to);

/* The bytes per second crossing link l now (SimGrid's Link::get_usage());
 * l is an sg_link_t of the built platform. */
double engine_platform_link_usage(const void *l);
/* Whether link l is a switch's crossbar: a FATPIPE, or a crossbar of
 * unbounded bandwidth built as a shared link (engine_platform.cpp). */
bool engine_platform_link_is_crossbar(const void *l);

/* The links of the route from host `from` to host `to` (sg_host_t) as
 * small ids, dense from 0 in the order first seen in this process, into
 * *ids (borrowed, valid for the process); returns their count. The route
 * is asked of SimGrid once per pair (Host::route_to) and kept. */
int engine_platform_route_ids(void *from, void *to, const int **ids);

/* The bits of a (from, to) host pair mixed for the route caches in front
 * of engine_platform_route_ids() (engine_links.c, engine_changed.cpp):
 * take the high bits, the low ones of aligned pointers being alike. */
static inline uint64_t engine_platform_pair_mix(const void *from, const void *to)
{
	return ((uint64_t)(uintptr_t)from * 0x9E3779B97F4A7C15ull) ^
	       ((uint64_t)(uintptr_t)to * 0xC2B2AE3D27D4EB4Full);
}

/* How many link ids engine_platform_route_ids() has given (ids below). */
int engine_platform_nlinks(void);

/* The link (an sg_link_t) of an id engine_platform_route_ids() gave. */
void *engine_platform_link_of_id(int id);

/* Call fn(ctx, dt_s) every time the simulated clock moves forward by dt_s,
 * once SimGrid has moved every transfer over that step (SimGrid's
 * Engine::on_time_advance): the links' usage then is the step's, every
 * transfer that ended in it still counted. Once per process; ctx must
 * outlive the simulation. */
void engine_platform_on_advance(void (*fn)(void *ctx, double dt_s), void *ctx);

/* A stamp of the network model's transfers: equal stamps mean no
 * transfer started, changed state (ended, failed, cancelled: SimGrid's
 * Link::on_communication_state_change) or left the model in between, so
 * the max-min shares and every link's usage are what they were
 * (engine_links.c relies on it). The model's transfers started, ended
 * and failed are counted: a start adds to the first, an end or a failure
 * moves one to the others (with a state change), and one leaves them
 * when SimGrid takes it out to finish its activity, after the step it
 * ended in, which still counted it. Nothing else moves a share in these
 * runs, and the stamp relies on it: no transfer has a latency phase
 * (CM02 gives a transfer of route latency L > 0 a variable of penalty 0
 * and enables it once L has passed, in update_actions_state, with no
 * state change and no change of set: network_cm02.cpp,
 * NetworkCm02Model::update_actions_state_full and _lazy, at
 * v3.32; the links are built with latency 0, the loopback's is pinned
 * to 0 in engine.c), no rate bound moves (TCP-gamma 0, no
 * Comm::set_rate), no transfer is suspended, and no link's bandwidth,
 * latency or state changes during a run (no profiles; degraded links
 * are built degraded). tests/test-netstamp.c holds the started term to
 * a closed form. */
struct engine_net_stamp {
	unsigned long changes;  /* state changes so far */
	unsigned long started, ended, failed; /* transfers in each set now */
};
struct engine_net_stamp engine_platform_net_stamp(void);

/* Drop the reference engine_platform_sendto_async() gave, for a transfer
 * nobody waits for (the transfer goes on). */
void engine_platform_comm_release(void *c);

/* Whether the transfer c (engine_platform_sendto_async()) has ended; from
 * an actor only (a simcall). */
bool engine_platform_comm_finished(void *c);

/* Whether the oldest transfer in mailbox mb (an sg_mailbox_t) has ended,
 * so that a get takes it at once. */
bool engine_platform_mailbox_ready(void *mb);

/* Drop every transfer mailbox mb holds (one simcall): those that ended
 * are released; one still running would be cancelled (the caller knows
 * none is). */
void engine_platform_mailbox_clear(void *mb);

/* The first (last: the last) link of the route from host `from` to host
 * `to`, an sg_link_t, or NULL if the route has none. */
void *engine_platform_route_end(void *from, void *to, bool last);

/* The bytes transfer c (engine_platform_sendto_async()) still has to
 * move; 0 once it ended. */
double engine_platform_comm_remaining(void *c);

/* Stop transfer c where it is (from an actor: a simcall); whoever waits
 * for it sees it cancelled (engine_platform_comm_wait()). */
void engine_platform_comm_cancel(void *c);

/* Wait for the transfers comms[0..n) (sg_comm_t) one after the other
 * and release them: sg_comm_wait_all() without a CPU sleep action per
 * transfer (from an actor: a simcall each). */
void engine_platform_wait_all(void **comms, size_t n);

/* Post a get on mailbox mb (an sg_mailbox_t): the transfer (an
 * sg_comm_t, released by engine_platform_wait_all()), whose payload
 * lands in *payload when it ends. */
void *engine_platform_get_async(void *mb, void **payload);

/* Call fn(ctx) once, from SimGrid's kernel (no simcall may block there),
 * the instant transfer c's network action ends (Link::
 * on_communication_state_change): before SimGrid finishes its activity
 * and answers who waits for it, in the same step of the clock. c must
 * not have ended yet. */
void engine_platform_watch(void *c, void (*fn)(void *ctx), void *ctx);

/* Call nothing when transfer c ends (engine_platform_watch undone). */
void engine_platform_unwatch(void *c);

/* Wait for the first of transfers comms[0..n) to end (a simcall): its
 * index; the references are kept. */
int engine_platform_wait_any(void **comms, int n);

/* Wait for transfer c; true if it ended, false if it was cancelled. The
 * reference engine_platform_sendto_async() gave is kept:
 * engine_platform_comm_release() drops it. */
bool engine_platform_comm_wait(void *c);

#endif
