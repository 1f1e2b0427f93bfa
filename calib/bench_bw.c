/* bench_bw.c - copy bandwidth and latency: device-to-device, host-to-device, device-to-host.
 *
 * d2d: cudaMemcpyAsync between two device buffers of 64 KiB .. 1 GiB
 * (rotating copies below 2 x L2, like every other section); the profile's
 * `bytes` is twice the copy size (each byte is read and written), which
 * makes GBps comparable with the memory-bound kernels' traffic.
 * h2d / d2h: cudaMemcpyAsync from / to pinned (page-locked) host memory,
 * 4 B .. 1 GiB, bytes = the copy size.  The time of the smallest copies is
 * the transfer latency the simulator uses.  Sizes are powers of two (of
 * four, or sixteen for h2d/d2h, with --quick).
 *
 * Check: every size is copied host -> device (-> device) -> host and the
 * FNV-1a checksum of what came back must equal that of what was sent.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib.h"

#define BW_MAX ((size_t)1 << 30)

enum bw_kind { BW_D2D, BW_H2D, BW_D2H };

static const char *const kind_names[] = { "d2d", "h2d", "d2h" };

struct bw {
	struct calib *c;
	enum bw_kind kind;
	size_t size;
	unsigned char *hsrc, *hdst;	/* pinned, BW_MAX bytes each */
	void *dev;			/* BW_MAX bytes, h2d / d2h */
	struct arena ar;		/* d2d: 0 src, 1 dst */
};

static uint64_t fnv1a(const unsigned char *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static int enqueue_bw(void *arg, int i)
{
	struct bw *b = arg;
	cudaStream_t s = b->c->stream;

	switch (b->kind) {
	case BW_D2D:
		return cuda_failed(cudaMemcpyAsync(arena_ptr(&b->ar, 1, i), arena_ptr(&b->ar, 0, i),
						   b->size, cudaMemcpyDeviceToDevice, s),
				   "cudaMemcpyAsync d2d") ? -1 : 0;
	case BW_H2D:
		return cuda_failed(cudaMemcpyAsync(b->dev, b->hsrc, b->size,
						   cudaMemcpyHostToDevice, s),
				   "cudaMemcpyAsync h2d") ? -1 : 0;
	case BW_D2H:
		return cuda_failed(cudaMemcpyAsync(b->hdst, b->dev, b->size,
						   cudaMemcpyDeviceToHost, s),
				   "cudaMemcpyAsync d2h") ? -1 : 0;
	}
	return -1;
}

/* Round trip of the pattern through the copy being measured. */
static int check_bw(struct bw *b)
{
	cudaStream_t s = b->c->stream;
	void *dev = b->kind == BW_D2D ? arena_ptr(&b->ar, 0, 0) : b->dev;
	void *back = b->kind == BW_D2D ? arena_ptr(&b->ar, 1, 0) : b->dev;
	bool ok;

	memset(b->hdst, 0, b->size);
	if (cuda_failed(cudaMemcpyAsync(dev, b->hsrc, b->size, cudaMemcpyHostToDevice, s),
			"cudaMemcpyAsync h2d"))
		return -1;
	if (b->kind == BW_D2D && enqueue_bw(b, 0) < 0)
		return -1;
	if (cuda_failed(cudaMemcpyAsync(b->hdst, back, b->size, cudaMemcpyDeviceToHost, s),
			"cudaMemcpyAsync d2h") ||
	    cuda_failed(cudaStreamSynchronize(s), "copy check"))
		return -1;
	ok = fnv1a(b->hsrc, b->size) == fnv1a(b->hdst, b->size);
	return calib_check(b->c, ok, "copy %s %zu B: checksum %s", kind_names[b->kind], b->size,
			   ok ? "matches" : "differs");
}

static int run_point(struct bw *b, enum bw_kind kind, size_t size)
{
	struct calib *c = b->c;
	struct calib_point pt;
	double t = 0.0;
	int rc = -1;

	b->kind = kind;
	b->size = size;
	if (kind == BW_D2D) {
		const size_t bytes[2] = { size, size };
		const enum kernels_dtype st[2] = { KERNELS_E4M3, KERNELS_E4M3 };
		int r = arena_init(c, &b->ar, 2, bytes, st);

		if (r == 1) {
			calib_warn("does not fit in device memory, skipped 'd2d %zu B'", size);
			return 0;
		}
		if (r < 0)
			return -1;
	}
	if (check_bw(b) < 0)
		goto out;
	if (c->self_test) {
		rc = 0;
		goto out;
	}
	if (timer_median(c, enqueue_bw, b, &t) < 0)
		goto out;
	memset(&pt, 0, sizeof(pt));
	pt.section = CALIB_BW;
	snprintf(pt.kind, sizeof(pt.kind), "%s", kind_names[kind]);
	pt.bytes = (long long)(kind == BW_D2D ? 2 * size : size);
	pt.time_s = t;
	pt.GBps = (double)pt.bytes / t * 1e-9;
	calib_progress("bw   %s %11lld B %10.4f ms %8.2f GB/s", pt.kind, pt.bytes, t * 1e3,
		       pt.GBps);
	rc = calib_add(c, &pt);
out:
	if (kind == BW_D2D)
		arena_finish(&b->ar);
	return rc;
}

int bench_bw(struct calib *c)
{
	const size_t max = c->self_test ? (size_t)1 << 24 : BW_MAX;
	struct bw b;
	size_t i, size;
	int rc = -1;

	memset(&b, 0, sizeof(b));
	b.c = c;
	if (cuda_failed(cudaMallocHost((void **)&b.hsrc, max), "cudaMallocHost") ||
	    cuda_failed(cudaMallocHost((void **)&b.hdst, max), "cudaMallocHost") ||
	    cuda_failed(cudaMalloc(&b.dev, max), "cudaMalloc"))
		goto out;
	for (i = 0; i < max; i++)
		b.hsrc[i] = (unsigned char)((i * 2654435761u) >> 13 ^ (i >> 20));

	if (c->self_test) {
		static const size_t sizes[] = { 4, 1000003, (size_t)1 << 24 };

		for (i = 0; i < 3; i++)
			if (run_point(&b, BW_D2D, sizes[i]) < 0 || run_point(&b, BW_H2D, sizes[i]) < 0 ||
			    run_point(&b, BW_D2H, sizes[i]) < 0)
				goto out;
		rc = 0;
		goto out;
	}
	for (size = (size_t)64 << 10; size <= max; size *= c->quick ? 4 : 2)
		if (run_point(&b, BW_D2D, size) < 0)
			goto out;
	for (size = 4; size <= max; size *= c->quick ? 16 : 2)
		if (run_point(&b, BW_H2D, size) < 0)
			goto out;
	for (size = 4; size <= max; size *= c->quick ? 16 : 2)
		if (run_point(&b, BW_D2H, size) < 0)
			goto out;
	rc = 0;
out:
	if (b.dev)
		cudaFree(b.dev);
	if (b.hdst)
		cudaFreeHost(b.hdst);
	if (b.hsrc)
		cudaFreeHost(b.hsrc);
	return rc;
}
