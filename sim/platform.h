/* platform: turns a topology and a node count into a SimGrid platform.
 *
 * The platform is written as SimGrid XML (version 4.1): one zone per node,
 * holding its GPUs as hosts ("g<rank>", rank = node * gpus_per_node + local),
 * the node's links (GPU links into an NVSwitch, PCIe switch or host,
 * NVLinks of a mesh, PCIe switch uplinks, the cross-socket link, NICs) and
 * a gateway router; above the nodes, zones for groups of nodes, fat-tree
 * leaves and pods join them through the fabric. Every route is explicit
 * (Full routing) and is the link list of topology_route(), so a transfer's
 * path, and hence its alpha-beta cost, is exactly what the topology says.
 * Routes grow about linearly with nodes (see platform.c). This module does
 * not include SimGrid: it only writes the file the engine loads. */
#ifndef DDLSIM_PLATFORM_H
#define DDLSIM_PLATFORM_H

#include <stdio.h>

#include "topology.h"

/* Write the platform of nodes nodes of t to f (the caller has checked
 * topology_check_nodes()). Returns 0 or -1 (I/O). */
int platform_write(const struct topology *t, int nodes, FILE *f);

/* Write it to a new temporary file; its path goes into path (size n).
 * The caller unlink()s it. Returns 0 or -1 with errno set. */
int platform_write_temp(const struct topology *t, int nodes, char *path, size_t n);

#endif
