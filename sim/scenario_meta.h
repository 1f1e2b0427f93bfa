/* scenario_meta: what a scenario file says besides its plan: its path,
 * display name, description and the published figures it cites (for
 * validation only: never an input to a prediction). Apart from
 * scenario.h so that a result (result.h) carries a copy without seeing
 * the scenario, its inputs or its loader. */
#ifndef DDLSIM_SCENARIO_META_H
#define DDLSIM_SCENARIO_META_H

#include <stdbool.h>

#include "economics.h"
#include "goodput.h"

/* The newest ddlsim.scenario schema this build reads: 1.SCENARIO_SCHEMA_MINOR
 * (1.1: goal; 1.2: node_groups[].power_cap_W). Every loader of a scenario
 * document checks against it (scenario.c, and sweep.c for a sweep's base). */
#define SCENARIO_SCHEMA_MINOR 2

/* Published measurements a scenario cites (0 = none). */
struct published {
	double tflops_per_gpu;          /* hardware TFLOP/s per GPU */
	double model_tflops_per_gpu;    /* model TFLOP/s per GPU (no recompute) */
	double mfu;                     /* model FLOPs utilization, 0..1 */
	double iteration_s;
	double tokens_per_s;
	double peak_memory_bytes;       /* published.peak_memory_GiB x 2^30 */
	enum pub_memory { PUB_MEM_RESERVED, PUB_MEM_ALLOCATED, PUB_MEM_ACTIVE, PUB_MEM_DEVICE,
			  PUB_MEM_N } memory_measure;
	char *source;                   /* owned; NULL when none */
};

/* published.memory_measure's names, by enum pub_memory, NULL-ended. */
extern const char *const pub_memory_names[PUB_MEM_N + 1];

/* The goal a plan was chosen for (the scenario's "goal" object, which
 * `ddlsim plan --export` writes; scenario_goal.c): what a run of it is
 * held against. Owned strings. */
struct scenario_goal {
	bool set;
	char *name;                     /* the goal's name */
	char *file;                     /* the goal file, as the export named it (not read) */
	char *cluster;                  /* the goal's name for the plan's cluster */
	double deadline_s, budget_usd;  /* 0: none */
	struct econ_params econ;        /* the cluster's economics */
	struct goodput_params goodput;  /* the goal's failures and checkpoints */
};

/* What the scenario file says besides the plan; owned strings. */
struct scenario_meta {
	char *path;                     /* the scenario file */
	char *name;                     /* display name */
	char *description;
	struct published pub;
	struct scenario_goal goal;
};

/* Deep copy of meta into out; scenario_meta_finish() frees it. */
void scenario_meta_copy(struct scenario_meta *out, const struct scenario_meta *meta);
void scenario_meta_finish(struct scenario_meta *meta);

#endif
