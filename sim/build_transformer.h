/* build_transformer: the per-rank program of a transformer (decoder)
 * training step.
 *
 * One stage's program: forward and backward of every micro-batch and
 * model chunk in the schedule's order (schedule.h), layers as compute
 * tasks priced by the cost source, TP/SP, CP and EP collectives blocking
 * compute, pipeline messages, gradient buckets reduced on the DP stream
 * as soon as they are complete, ZeRO gathers, CPU offload copies and the
 * optimizer step (build_transformer.c says how each is shaped).
 * build_cnn.h builds CNNs; builders.h picks one per model architecture. */
#ifndef DDLSIM_BUILD_TRANSFORMER_H
#define DDLSIM_BUILD_TRANSFORMER_H

#include "inputs.h"
#include "plan.h"
#include "program.h"
#include "result.h"

/* Write the program of pipeline stage stage of the inputs' transformer
 * under plan pl into p and, if sr, the stage's compute times and memory
 * anatomy. Returns 0, or -1 if the model's ops cannot be generated or
 * priced. */
int build_transformer_program(const struct inputs *in, const struct plan *pl, int stage,
			      struct program *p, struct stage_result *sr);

/* FLOPs the GPUs execute in one iteration of the whole job, recompute
 * included (models/workload.h). */
double build_transformer_hardware_flops(const struct inputs *in, const struct plan *pl);

#endif
