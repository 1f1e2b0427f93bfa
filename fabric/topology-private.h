/* topology-private: loader pieces of topology.c kept in files of their
 * own (not for callers outside fabric/). */
#ifndef DDLSIM_TOPOLOGY_PRIVATE_H
#define DDLSIM_TOPOLOGY_PRIVATE_H

#include "gpu.h"
#include "jload.h"

/* Read the "power" object of a GPU description jo (a topology's "gpu"
 * object at topology minor version minor, or a preset's root) into g:
 * tdp_W, idle_W, source (1.3), power_cap_W, cap_clock_ratio, cap_source
 * (1.5; a GPU preset 1.1). Every problem is reported with its JSON path. */
void topology_load_power(struct jobj *jo, struct gpu_spec *g, int minor);

#endif
