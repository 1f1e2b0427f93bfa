/* platform: turns a topology and a node count into a SimGrid platform.
 *
 * The platform is written as SimGrid XML (version 4.1): one zone per node,
 * holding its GPUs as hosts ("g<rank>", rank = node * gpus_per_node + local),
 * one full-duplex link per GPU into the node's switch (NVSwitch or PCIe),
 * one full-duplex link per NIC, and a gateway router; a root zone joins the
 * nodes through the fabric. Every route is explicit (Full routing), so a
 * transfer's path, and hence its alpha-beta cost, is exactly the links the
 * topology names. This module does not include SimGrid: it only writes the
 * file the engine loads. */
#ifndef DDLSIM_PLATFORM_H
#define DDLSIM_PLATFORM_H

#include <stdio.h>

#include "topology.h"

/* Write the platform of nodes nodes of t to f. Returns 0 or -1 (I/O). */
int platform_write(const struct topology *t, int nodes, FILE *f);

/* Write it to a new temporary file; its path goes into path (size n).
 * The caller unlink()s it. Returns 0 or -1 with errno set. */
int platform_write_temp(const struct topology *t, int nodes, char *path, size_t n);

#endif
