/* build_cnn: the per-rank program of data-parallel CNN training.
 *
 * The transformer builder (build_transformer.c) shapes its programs around layers,
 * tensor and pipeline parallelism; a CNN trains with data parallelism
 * only, so it has its own, smaller builder that writes the same task kinds
 * on the same streams. builders.h hands CNN models here. */
#ifndef DDLSIM_BUILD_CNN_H
#define DDLSIM_BUILD_CNN_H

#include "inputs.h"
#include "plan.h"
#include "program.h"
#include "result.h"

/* Write the program of one data-parallel rank training the inputs' CNN
 * with plan pl into p (every rank runs the same program: stage is 0) and,
 * if sr, its compute times and memory anatomy.
 * Returns 0, or -1 if the model's layers cannot be generated. */
int build_cnn_program(const struct inputs *in, const struct plan *pl, int stage,
		      struct program *p, struct stage_result *sr);

/* A CNN does no recomputation: its hardware FLOPs in one iteration are its
 * model FLOPs. */
double build_cnn_hardware_flops(const struct inputs *in, const struct plan *pl);

#endif
