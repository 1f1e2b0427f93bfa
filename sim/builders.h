/* builders: the program builders, one per model architecture (model.h).
 *
 * A builder writes the per-rank program of one pipeline stage (tasks on
 * streams, program.h) and says how many FLOPs the GPUs execute in an
 * iteration. simulate.c and the trace export find the builder of a model
 * here; `ddlsim list` prints the table. */
#ifndef DDLSIM_BUILDERS_H
#define DDLSIM_BUILDERS_H

#include "inputs.h"
#include "model.h"
#include "plan.h"
#include "program.h"
#include "result.h"

struct program_builder {
	const char *name;           /* the model file's "architecture" value */
	const char *description;
	/* Write stage's program under pl into p and, if sr, the stage's
	 * compute times and memory anatomy. Returns 0 or -1. */
	int (*build)(const struct inputs *in, const struct plan *pl, int stage,
		     struct program *p, struct stage_result *sr);
	/* FLOPs the GPUs execute in one iteration (recompute included). */
	double (*hardware_flops)(const struct inputs *in, const struct plan *pl);
};

/* Indexed by enum model_arch, ended by a NULL name. */
extern const struct program_builder builder_registry[MODEL_ARCH_N + 1];

/* The builder of m's architecture (never NULL). */
const struct program_builder *builders_find(const struct model *m);

#endif
