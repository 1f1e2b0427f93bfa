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

struct topology;

/* Read the topology's "gpu" (top is the topology's root object, root its
 * JSON): inline, a preset file's path (1.4), or {"preset": path,
 * overrides...}, into t->gpu; every problem is reported, with the preset
 * file's path or the topology's /gpu path. May replace root's "gpu" by the
 * merged description. */
void topology_load_gpu(struct jobj *top, json_t *root, struct topology *t, struct diag *d);

#endif
