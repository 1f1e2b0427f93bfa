/* simulate: one scenario from loaded files to a result.
 *
 * Prices every block of the model with the scenario's cost source, writes
 * one program per pipeline stage from the schedule (forward and backward
 * passes with their TP collectives, pipeline sends and receives, bucketed
 * DP / ZeRO gradient reduction overlapped with backward, ZeRO-3 parameter
 * gathers, the optimizer step), replays them on the engine, and derives
 * throughput, FLOP rates, the per-rank breakdown and the memory anatomy. */
#ifndef DDLSIM_SIMULATE_H
#define DDLSIM_SIMULATE_H

#include "diag.h"
#include "result.h"
#include "scenario.h"

/* Simulate sc into r (result_finish() it). Returns 0 or -1 after reporting
 * into d. Runs the engine, hence once per process. */
int simulate_run(const struct scenario *sc, struct result *r, struct diag *d);

/* Build stage's program without running it (tests, trace export).
 * Returns 0 or -1. blocks/cost as simulate_run prices them. */
struct cost;
int simulate_build_program(const struct scenario *sc, struct cost *cost, int stage,
			   struct program *out, struct stage_result *sr);

#endif
