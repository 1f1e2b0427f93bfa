/* anatomy: the memory anatomy of a plan's ranks without simulating it.
 *
 * The simulator (simulate.c) and the plan search (search.c) both need what
 * one rank of a pipeline stage holds (models/memory.h); this is the one
 * place that turns a plan into the memory model's input. The peak number
 * of micro-batches in flight comes from the schedule's own step order
 * (schedule.h), so the search prices exactly what the simulator would. No
 * SimGrid: it runs in-process, in microseconds per stage. */
#ifndef DDLSIM_ANATOMY_H
#define DDLSIM_ANATOMY_H

#include <stdbool.h>

#include "inputs.h"
#include "memory.h"
#include "plan.h"

/* Fill mi for a rank of plan pl on inputs in that holds `layers`
 * transformer layers (all chunks), of which `dense_layers` are an MoE
 * model's dense first layers, `inflight` peak micro-batches in units of
 * that layer set, and the embedding and/or head. */
void anatomy_input(const struct inputs *in, const struct plan *pl, double layers,
		   double dense_layers, double inflight, bool has_embedding, bool has_head,
		   struct mem_rank_input *mi);

/* Layers of pipeline stage `stage` over its chunks (the plan's split) and
 * into *dense those of them that are an MoE model's dense first layers
 * (model_moe_layers_in()); chunk_layers (may be NULL) gets each chunk's. */
/* Under a pipeline of one chunk per stage, the stage's order of forwards
 * and backwards into mi (order_fwd, order_n) for the allocator's replay
 * (models/memory.h); returns the array to free after memory_rank(), or
 * NULL (no pipeline, interleaved: mi untouched). */
bool *anatomy_order(const struct plan *pl, int stage, struct mem_rank_input *mi);

int anatomy_stage_layers(const struct plan *pl, const struct model *m, int stage,
			 int *chunk_layers, int *dense);

/* The anatomy of a rank of pipeline stage `stage` (0..pp-1) of a plan
 * that passed plan_check(): its layers from the plan's split, its peak in
 * flight from the schedule. Transformer models only. */
void anatomy_stage(const struct inputs *in, const struct plan *pl, int stage,
		   struct mem_anatomy *out);

/* The larger total of the first and the last stage (the first holds the
 * embedding and the most micro-batches in flight under 1F1B and
 * interleaving, with the even split's extra layers; the last holds the
 * LM head and logits): what a search checks against the capacity. Sets
 * *stage to the stage it came from (may be NULL). */
void anatomy_worst(const struct inputs *in, const struct plan *pl, struct mem_anatomy *out,
		   int *stage);

#endif
