/* scenario-private: what the scenario loader's files share (sim/ only).
 *
 * The loader is split by the scenario file's objects:
 *   scenario.c             the file's top level: inputs and their cache,
 *                          nodes and node groups, framework, the training,
 *                          communication, published, compute, moe, cost
 *                          and output objects, plausibility warnings
 *   scenario_parallel.c    the parallel object: degrees, schedule, ZeRO,
 *                          stage layers, parameter servers
 *   scenario_simulation.c  the simulation object's lists: stragglers (and
 *                          their samples file), degraded links, throttling
 *                          windows
 * Each reads into the plan and reports through the jobj's diag. */
#ifndef DDLSIM_SCENARIO_PRIVATE_H
#define DDLSIM_SCENARIO_PRIVATE_H

#include "jload.h"
#include "plan.h"

/* The parallel object into s (scenario_parallel.c). */
void scenario_load_parallel(struct jobj *root, struct plan *s);

/* simulation.stragglers, simulation.degraded_links, simulation.throttle
 * into s (scenario_simulation.c). */
void scenario_load_stragglers(struct jobj *sim, struct plan *s);
void scenario_load_degraded(struct jobj *sim, struct plan *s);
void scenario_load_throttle(struct jobj *sim, struct plan *s);

#endif
