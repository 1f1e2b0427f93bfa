/* memory-private.h: what memory.c takes from memory_replay.c and
 * memory_ds2021.c. */
#ifndef DDLSIM_MEMORY_PRIVATE_H
#define DDLSIM_MEMORY_PRIVATE_H

#include <stdbool.h>

#include "memory.h"

/* The peak PyTorch's caching allocator reserves over FSDP2 steps as
 * torchtitan runs them (memory_replay.c), from the anatomy o of in;
 * false where the replay does not apply (no FSDP2 at ZeRO-3, or under a
 * pipeline at ZeRO-2 without the stage's order; MoE, MLA, encoders,
 * frozen weights, offload, tied embeddings) or out of memory. */
struct mem_replay {
	double reserved_peak, allocated_peak;
	double allocated_end;                /* after the last step's optimizer */
	double compute, allgather, reduce;   /* each stream's pool, reserved at the end */
};
bool memory_replay(const struct mem_rank_input *in, const struct mem_anatomy *o, struct mem_replay *out);

/* DeepSpeed v0.4.0's ZeRO-3 buffers at their peak (memory_ds2021.c):
 * the gathered Linear weights (wbytes per element) and the full-size
 * gradients of its reduce path (gbytes), the largest over the rank's
 * layers' Linears, in bytes. */
double memory_ds2021_buffers(const struct mem_rank_input *in, double wbytes, double gbytes);

#endif
