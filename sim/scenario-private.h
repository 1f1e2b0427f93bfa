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
 *   scenario_goal.c        the goal object (`plan --export` writes it), read
 *                          and written back
 * Each reads into the plan and reports through the jobj's diag. */
#ifndef DDLSIM_SCENARIO_PRIVATE_H
#define DDLSIM_SCENARIO_PRIVATE_H

#include <jansson.h>

#include "jload.h"
#include "plan.h"
#include "scenario_meta.h"

/* The parallel object into s (scenario_parallel.c). */
void scenario_load_parallel(struct jobj *root, struct plan *s);

/* simulation.stragglers, simulation.degraded_links, simulation.throttle
 * into s (scenario_simulation.c). */
void scenario_load_stragglers(struct jobj *sim, struct plan *s);
void scenario_load_degraded(struct jobj *sim, struct plan *s);
void scenario_load_throttle(struct jobj *sim, struct plan *s);

/* The goal object into meta->goal (scenario_goal.c); p's training
 * (already read) must name the tokens to train. */
void scenario_load_goal(struct jobj *root, struct scenario_meta *meta, const struct plan *p);
/* g as the goal object scenario_load_goal() reads back. New reference. */
json_t *scenario_goal_json(const struct scenario_goal *g);

#endif
