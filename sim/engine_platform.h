/* engine_platform: builds the SimGrid platform of a topology in memory
 * (SimGrid's C++ platform API), in time linear in its size. Part of the
 * engine adapter: only engine.c calls it, after SimGrid is initialised and
 * configured and before any actor is created. */
#ifndef DDLSIM_ENGINE_PLATFORM_H
#define DDLSIM_ENGINE_PLATFORM_H

#include <stdbool.h>

#include <simgrid/forward.h>

#include "topology.h"

/* Build the platform of nodes nodes of t (checked by
 * topology_check_nodes()) as platform_emit() describes it, with the GPUs
 * used[] marks (NULL: all). Returns 0, or -1 if SimGrid rejected it. Once
 * per process. */
int engine_platform_build(const struct topology *t, int nodes, const unsigned char *used);

/* The bytes per second crossing link l now (SimGrid's Link::get_usage());
 * l is an sg_link_t of the built platform. */
double engine_platform_link_usage(const void *l);

/* Start a transfer of bytes from host from to host to with no actor on
 * either side (the mirror traffic of folding, engine.c): it costs what a
 * mailbox transfer between the two hosts costs. The caller holds one
 * reference: sg_comm_wait_all() drops it, or engine_comm_release(). */
sg_comm_t engine_sendto_async(sg_host_t from, sg_host_t to, double bytes);

/* Drop the reference engine_sendto_async() gave (the transfer goes on). */
void engine_comm_release(sg_comm_t c);

/* Whether the transfer c has ended (engine_sendto_async()); from an actor. */
bool engine_comm_finished(sg_comm_t c);

#endif
