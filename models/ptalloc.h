/* ptalloc: PyTorch's CUDA caching allocator with expandable segments,
 * replayed on a sequence of allocations and frees, for what it RESERVES
 * (torch.cuda.max_memory_reserved, what torchtitan logs as
 * max_reserved_gib) rather than what is allocated at the peak.
 *
 * The rules (c10/cuda/CUDACachingAllocator.cpp; research and citations:
 * models/ptalloc.c):
 *   - a request is rounded up to a multiple of 512 bytes (kMinBlockSize);
 *   - each stream has its own pool: a free block is reused only by a
 *     request on the stream that allocated it (the block pool is ordered
 *     by stream, then size, then address);
 *   - with expandable_segments:True each stream's pool is one segment of
 *     virtual addresses mapped in 20 MiB pages as it grows;
 *   - best fit: the smallest free block of the stream inside the segment
 *     at least as large, the lowest address among equals, split down to
 *     the request; only when none fits, the free block at the segment's
 *     end (if any), extended by mapping the pages it lacks;
 *   - freed blocks merge with free neighbours and stay mapped: reserved
 *     memory falls only at torch.cuda.empty_cache() or an out-of-memory
 *     retry, neither of which a run that fits does.
 * Requests of at most 1 MiB (the small pool) are not replayed: the
 * callers give tensors of megabytes to gigabytes.
 *
 * Sizes are bytes as doubles (exact to 2^53). */
#ifndef DDLSIM_PTALLOC_H
#define DDLSIM_PTALLOC_H

#include <stdbool.h>

#define PTALLOC_MAX_STREAMS 4

struct ptalloc;

/* A new, empty allocator; NULL when out of memory. */
struct ptalloc *ptalloc_new(void);
/* The allocator without expandable segments (PYTORCH_CUDA_ALLOC_CONF
 * unset, ptalloc.c native_malloc()): each cudaMalloc is a segment of its
 * own, 20 MiB for a request under 10 MiB, else the request rounded up to
 * 2 MiB, and one of at most 1 MiB a 2 MiB segment of the small pool,
 * which larger requests never use (nor small ones the large pool's); a
 * small-pool block is split when 512 bytes remain, a large-pool one only
 * when more than 1 MiB remains; freed blocks merge only within their
 * segment. A plan replays with it under training.allocator "native"
 * (sim/scenario.h; the memory cases do not: validation/README.md). */
struct ptalloc *ptalloc_new_native(void);
void ptalloc_destroy(struct ptalloc *a);

/* Allocate bytes on stream (0 .. PTALLOC_MAX_STREAMS - 1); returns a
 * handle for ptalloc_free(), or -1 when out of memory or bytes <= 0. */
int ptalloc_malloc(struct ptalloc *a, int stream, double bytes);
/* Free the block of handle h (a handle < 0 is ignored). */
void ptalloc_free(struct ptalloc *a, int h);

/* Bytes allocated and reserved now, and their peaks since creation. */
double ptalloc_allocated(const struct ptalloc *a);
double ptalloc_reserved(const struct ptalloc *a);
double ptalloc_allocated_peak(const struct ptalloc *a);
double ptalloc_reserved_peak(const struct ptalloc *a);
/* Reserved bytes of one stream's pool. */
double ptalloc_stream_reserved(const struct ptalloc *a, int stream);

#endif
