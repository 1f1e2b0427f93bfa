/* build_cnn: the per-rank program of data-parallel CNN training.
 *
 * The transformer builder (simulate.c) shapes its programs around layers,
 * tensor and pipeline parallelism; a CNN trains with data parallelism
 * only, so it has its own, smaller builder that writes the same task kinds
 * on the same streams. simulate_build_program() hands CNN models here. */
#ifndef DDLSIM_BUILD_CNN_H
#define DDLSIM_BUILD_CNN_H

#include "program.h"
#include "result.h"
#include "scenario.h"

struct cost;

/* Write the program of one data-parallel rank training sc's CNN into p
 * and, if sr, its compute times and memory anatomy. Returns 0 or -1 on
 * allocation failure. */
int build_cnn_program(const struct scenario *sc, struct cost *cost, struct program *p,
		      struct stage_result *sr);

#endif
