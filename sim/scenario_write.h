/* scenario_write: a plan and its inputs written back as a scenario file.
 *
 * The inverse of scenario_load(): a struct plan (plan.h) and the inputs it
 * was priced with (model, topology, cost source, GPUs used per node)
 * become a "ddlsim.scenario" 1.0 document that scenario_load() reads back
 * into the same plan, so `ddlsim run` on it simulates what `ddlsim plan`
 * simulated (cli/cmd_plan.c --export). The keys are the loader's
 * (scenario.h's key table, with the loaders' name tables for the enums);
 * a key is written where the plan's value differs from what the loader
 * would set without it (plan_init() and plan_resolve()), so the file reads
 * as a hand-written one. The degrees (tp, pp, dp), the batch, the sequence
 * and the precision are always written. Values a framework preset fills
 * (plan.h's `given` bits) are written only where the scenario gave them.
 *
 * A mixed cluster (node groups) holds its GPUs by value, not the preset
 * files a scenario names; it is refused. */
#ifndef DDLSIM_SCENARIO_WRITE_H
#define DDLSIM_SCENARIO_WRITE_H

#include <jansson.h>

#include "diag.h"
#include "inputs.h"
#include "plan.h"
#include "scenario_meta.h"

/* What a written scenario says besides its plan. */
struct scenario_write_meta {
	const char *name;           /* NULL: none (the loader takes the file name) */
	const char *description;    /* NULL: none */
	const struct scenario_goal *goal;   /* NULL: none (scenario_meta.h; schema 1.1) */
};

/* The scenario document of plan p (resolved: plan_resolve() ran) priced
 * with in, to be written at path (the model, topology and profile paths
 * are made relative to path's directory where both resolve, else
 * absolute). New reference, or NULL after reporting into d (a mixed
 * cluster; a path that does not resolve). */
json_t *scenario_write_json(const struct plan *p, const struct inputs *in, const struct scenario_write_meta *m,
			    const char *path, struct diag *d);

/* The path of target relative to the directory of file (a file to be
 * written: its directory must exist), or target's absolute path when that
 * directory does not resolve or the two share only the root: how a
 * written scenario names its inputs. Caller frees; NULL (errno set) when
 * target does not resolve. */
char *scenario_path_from(const char *file, const char *target);

/* scenario_write_json() written to path atomically (util/atomic_file.h:
 * the earlier file stays on failure). Returns 0, or -1 after reporting
 * "path: error: ..." into d. */
int scenario_write_file(const struct plan *p, const struct inputs *in, const struct scenario_write_meta *m,
			const char *path, struct diag *d);

#endif
