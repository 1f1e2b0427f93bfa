/* ptalloc: PyTorch's caching allocator replayed (see ptalloc.h).
 *
 * Read in pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp (the stored
 * copy at 001074d2, late 2024; the expandable-segment code is the same in
 * the 2023-2025 versions compared; research notes of 2026-12-06):
 *   kMinBlockSize 512, round_size() rounds a request up to it;
 *   kSmallSize 1 MiB: requests above it come from the large pool;
 *   BlockComparatorSize orders a pool by stream, then size, then
 *   address, and get_free_block() takes the first block of the
 *   request's stream at least as large (best fit), refusing a block of
 *   another stream;
 *   should_split(): with expandable segments a block is split whenever
 *   the remainder is at least kMinBlockSize;
 *   ExpandableSegment maps its range in pages of segment_size, kLargeBuffer
 *   (20 MiB) for the large pool, one segment per stream and pool
 *   (find_expandable_block() searches by stream); get_free_block() sizes
 *   the free block at the segment's end as what it could grow to, so any
 *   free block inside that fits is taken first, and
 *   try_allocate_expandable_block() extends that end block by mapping
 *   the missing pages;
 *   free_block() merges a freed block with free neighbours of its
 *   segment; release_cached_blocks() (empty_cache, or the retry after a
 *   failed cudaMalloc) is the only path that unmaps. */
#include "ptalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MIN_BLOCK 512.0
#define SMALL_SIZE 1048576.0
#define PAGE 20971520.0     /* kLargeBuffer: the large pool's pages */

struct block {
	double off, size;
	int handle;             /* -1: free */
};

struct pool {
	struct block *b;        /* ordered by offset, contiguous from 0 */
	int n, cap;
	double mapped;          /* reserved: the segment's mapped bytes */
};

struct owner {
	int stream;             /* -1: handle unused */
	int seg;                /* native: its segment */
	double off, size;
	int next_free;          /* unused: the next unused handle + 1 (0: none) */
};

struct segment {
	int stream;
	bool small;             /* the small pool's (requests of at most 1 MiB) */
	struct pool p;          /* its blocks; p.mapped: the segment's size */
};

struct ptalloc {
	struct pool pool[PTALLOC_MAX_STREAMS];
	bool native;            /* without expandable segments: one cudaMalloc a segment */
	struct segment *seg;
	int nseg, capseg;
	struct owner *h;
	int nh, caph;
	int free1;              /* the first unused handle + 1 (0: none) */
	double allocated, allocated_peak, reserved_peak;
};

struct ptalloc *ptalloc_new(void)
{
	return calloc(1, sizeof(struct ptalloc));
}

struct ptalloc *ptalloc_new_native(void)
{
	struct ptalloc *a = calloc(1, sizeof(struct ptalloc));
	if (a)
		a->native = true;
	return a;
}

void ptalloc_destroy(struct ptalloc *a)
{
	if (!a)
		return;
	for (int i = 0; i < a->nseg; i++)
		free(a->seg[i].p.b);
	free(a->seg);
	for (int s = 0; s < PTALLOC_MAX_STREAMS; s++)
		free(a->pool[s].b);
	free(a->h);
	free(a);
}

double ptalloc_stream_reserved(const struct ptalloc *a, int stream)
{
	return stream >= 0 && stream < PTALLOC_MAX_STREAMS ? a->pool[stream].mapped : 0;
}

double ptalloc_reserved(const struct ptalloc *a)
{
	double r = 0;
	for (int s = 0; s < PTALLOC_MAX_STREAMS; s++)
		r += a->pool[s].mapped;
	return r;
}

double ptalloc_allocated(const struct ptalloc *a)
{
	return a->allocated;
}

double ptalloc_allocated_peak(const struct ptalloc *a)
{
	return a->allocated_peak;
}

double ptalloc_reserved_peak(const struct ptalloc *a)
{
	return a->reserved_peak;
}

/* Insert a block at index i; false when out of memory. */
static bool pool_insert(struct pool *p, int i, struct block b)
{
	if (p->n == p->cap) {
		int cap = p->cap ? 2 * p->cap : 16;
		struct block *nb = realloc(p->b, (size_t)cap * sizeof(*nb));
		if (!nb)
			return false;
		p->b = nb;
		p->cap = cap;
	}
	memmove(p->b + i + 1, p->b + i, (size_t)(p->n - i) * sizeof(*p->b));
	p->b[i] = b;
	p->n++;
	return true;
}

static void pool_remove(struct pool *p, int i)
{
	memmove(p->b + i, p->b + i + 1, (size_t)(p->n - i - 1) * sizeof(*p->b));
	p->n--;
}

/* A handle: the last one freed, or a new one; -1 when out of memory. */
static int new_handle(struct ptalloc *a)
{
	if (a->free1) {
		int h = a->free1 - 1;
		a->free1 = a->h[h].next_free;
		return h;
	}
	if (a->nh == a->caph) {
		int cap = a->caph ? 2 * a->caph : 64;
		struct owner *nh = realloc(a->h, (size_t)cap * sizeof(*nh));
		if (!nh)
			return -1;
		a->h = nh;
		a->caph = cap;
	}
	a->h[a->nh].stream = -1;
	return a->nh++;
}

/* Count handle h's block as allocated; the peaks. */
static int account(struct ptalloc *a, int h)
{
	a->allocated += a->h[h].size;
	if (a->allocated > a->allocated_peak)
		a->allocated_peak = a->allocated;
	double r = ptalloc_reserved(a);
	if (r > a->reserved_peak)
		a->reserved_peak = r;
	return h;
}

/* Take the free block i of p for a request of size bytes under handle h:
 * with expandable segments every block is split down to the request
 * (should_split(): a remainder of at least kMinBlockSize). */
static void take(struct pool *p, int i, double size, int h)
{
	double rest = p->b[i].size - size;
	p->b[i].handle = h;
	if (rest >= MIN_BLOCK) {
		p->b[i].size = size;
		if (!pool_insert(p, i + 1, (struct block){ p->b[i].off + size, rest, -1 }))
			p->b[i].size += rest; /* unsplit: still correct, a little larger */
	}
}

/* Without expandable segments (PYTORCH_CUDA_ALLOC_CONF unset): every
 * block lives in a segment of its own cudaMalloc, and blocks never merge
 * across segments (c10/cuda/CUDACachingAllocator.cpp at the same copy:
 * get_allocation_size() gives a request of at most kSmallSize its 2 MiB
 * kSmallBuffer, one under kMinLargeAlloc (10 MiB) a 20 MiB kLargeBuffer,
 * a larger one its size rounded up to kRoundLarge (2 MiB);
 * get_pool() sends a request of at most kSmallSize to the small pool,
 * a larger one to the large pool, and get_free_block() takes the
 * smallest free block of that pool and stream at least as large (lowest
 * address among equals; max_split_size unlimited by default);
 * should_split() splits a small-pool block when at least kMinBlockSize
 * (512) remains, a large-pool one only when more than kSmallSize (1 MiB)
 * remains; free_block() merges a block with its free neighbours in its
 * own segment). */
static int native_malloc(struct ptalloc *a, int stream, double size)
{
	bool small = size <= SMALL_SIZE;
	int bs = -1, bi = -1;
	for (int g = 0; g < a->nseg; g++) {
		struct pool *p = &a->seg[g].p;
		if (a->seg[g].stream != stream || a->seg[g].small != small)
			continue;
		for (int i = 0; i < p->n; i++)
			if (p->b[i].handle < 0 && p->b[i].size >= size &&
			    (bs < 0 || p->b[i].size < a->seg[bs].p.b[bi].size)) {
				bs = g;
				bi = i;
			}
	}
	if (bs < 0) {
		double seg = small ? 2 * SMALL_SIZE :
			     size < 10 * SMALL_SIZE ? PAGE : ceil(size / (2 * SMALL_SIZE)) * 2 * SMALL_SIZE;
		if (a->nseg == a->capseg) {
			int cap = a->capseg ? 2 * a->capseg : 64;
			struct segment *ns = realloc(a->seg, (size_t)cap * sizeof(*ns));
			if (!ns)
				return -1;
			a->seg = ns;
			a->capseg = cap;
		}
		bs = a->nseg++;
		a->seg[bs] = (struct segment){ .stream = stream, .small = small };
		a->seg[bs].p.mapped = seg;
		if (!pool_insert(&a->seg[bs].p, 0, (struct block){ 0, seg, -1 }))
			return -1;
		bi = 0;
		a->pool[stream].mapped += seg;
	}
	int h = new_handle(a);
	if (h < 0)
		return -1;
	struct pool *p = &a->seg[bs].p;
	double rest = p->b[bi].size - size;
	p->b[bi].handle = h;
	if (small ? rest >= MIN_BLOCK : rest > SMALL_SIZE) {
		p->b[bi].size = size;
		if (!pool_insert(p, bi + 1, (struct block){ p->b[bi].off + size, rest, -1 }))
			p->b[bi].size += rest;
	}
	a->h[h] = (struct owner){ stream, bs, p->b[bi].off, p->b[bi].size, 0 };
	return h;
}

int ptalloc_malloc(struct ptalloc *a, int stream, double bytes)
{
	if (!a || bytes <= 0 || stream < 0 || stream >= PTALLOC_MAX_STREAMS)
		return -1;
	double size = ceil(bytes / MIN_BLOCK) * MIN_BLOCK;
	struct pool *p = &a->pool[stream];
	if (a->native) {
		int nh = native_malloc(a, stream, size);
		if (nh < 0)
			return -1;
		return account(a, nh);
	}

	/* best fit among the free blocks inside the segment; the free block
	 * at its end counts as unbounded (it can grow), so it comes last */
	int best = -1, tail = p->n && p->b[p->n - 1].handle < 0 ? p->n - 1 : -1;
	for (int i = 0; i < p->n; i++)
		if (i != tail && p->b[i].handle < 0 && p->b[i].size >= size &&
		    (best < 0 || p->b[i].size < p->b[best].size))
			best = i;
	if (best < 0) {
		/* the tail, extended by the pages it lacks */
		if (tail < 0) {
			if (!pool_insert(p, p->n, (struct block){ p->mapped, 0, -1 }))
				return -1;
			tail = p->n - 1;
		}
		best = tail;
		if (p->b[tail].size < size) {
			double mapped = p->mapped + ceil((size - p->b[tail].size) / PAGE) * PAGE;
			p->b[tail].size += mapped - p->mapped;
			p->mapped = mapped;
		}
	}
	int h = new_handle(a);
	if (h < 0)
		return -1;
	take(p, best, size, h);
	a->h[h] = (struct owner){ stream, 0, p->b[best].off, p->b[best].size, 0 };
	return account(a, h);
}

void ptalloc_free(struct ptalloc *a, int h)
{
	if (!a || h < 0 || h >= a->nh || a->h[h].stream < 0)
		return;
	struct pool *p = a->native ? &a->seg[a->h[h].seg].p : &a->pool[a->h[h].stream];
	/* the block at the handle's offset: blocks are ordered by offset */
	int lo = 0, hi = p->n - 1, i = -1;
	while (lo <= hi && i < 0) {
		int mid = lo + (hi - lo) / 2;
		if (p->b[mid].off == a->h[h].off)
			i = mid;
		else if (p->b[mid].off < a->h[h].off)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	a->h[h].stream = -1;
	a->h[h].next_free = a->free1;
	a->free1 = h + 1;
	if (i < 0)
		return;
	a->allocated -= p->b[i].size;
	p->b[i].handle = -1;
	if (i + 1 < p->n && p->b[i + 1].handle < 0) {
		p->b[i].size += p->b[i + 1].size;
		pool_remove(p, i + 1);
	}
	if (i > 0 && p->b[i - 1].handle < 0) {
		p->b[i - 1].size += p->b[i].size;
		pool_remove(p, i);
	}
}
