/* timer.c - rotating operand buffers and CUDA-event timing (median of runs).
 *
 * Cold-cache methodology.  A kernel timed over and over on the same
 * operands finds them in L2 (50 MiB on H100) after the first run and
 * reports a speed no training step sees.  arena_init() therefore allocates
 * as many copies of a point's operands as needed for all copies together
 * to exceed twice the L2 size, one allocation per point, and run i uses
 * copy i modulo the number of copies.  Big operands get 2 copies (1 when
 * device memory is short); tiny ones get thousands, which are just offsets.
 *
 * Timing.  timer_median() enqueues everything before it synchronises once:
 * a probe run (timed alone, to size the rest), the warm-up runs, then the
 * timed runs, each between its own pair of CUDA events.  For short runs a
 * spinning kernel (kernels/spin.cu) goes first and holds the GPU while the
 * host enqueues the rest, so the runs execute back to back and host launch
 * latency does not show up in the times.  The result is the median of the timed runs.  Long points get
 * fewer runs (at least 1 warm-up including the probe, and 5 timed runs) so
 * that the whole calibration stays within minutes.
 */
#include <stdlib.h>
#include <string.h>

#include "calib.h"

#define ALIGN 256
#define FREE_MARGIN ((size_t)768 << 20)	/* left for cuBLAS/cuDNN workspaces */

static size_t round_up(size_t v, size_t a)
{
	return (v + a - 1) / a * a;
}

int arena_init(struct calib *c, struct arena *a, int nbufs,
	       const size_t *bytes, const enum kernels_dtype *st)
{
	static const size_t elem[] = {
		[KERNELS_F32] = 4, [KERNELS_F16] = 2, [KERNELS_BF16] = 2, [KERNELS_E4M3] = 1,
	};
	size_t set = 0, free_b = 0, total_b = 0, usable, want;
	long long nsets;
	int j;

	memset(a, 0, sizeof(*a));
	if (nbufs < 1 || nbufs > ARENA_MAX_BUFS)
		return calib_error("bad buffer count %d 'arena'", nbufs);
	for (j = 0; j < nbufs; j++) {
		a->size[j] = round_up(bytes[j] ? bytes[j] : 1, ALIGN);
		set += a->size[j];
	}
	want = 2 * c->l2_bytes;
	nsets = (long long)(want / set) + 1;
	if (nsets < 2)
		nsets = 2;
	if (cuda_failed(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo"))
		return -1;
	usable = free_b > FREE_MARGIN ? free_b - FREE_MARGIN : 0;
	if ((size_t)nsets * set > usable)
		nsets = (long long)(usable / set);
	if (nsets < 1)
		return 1;
	a->nsets = (int)nsets;
	a->nbufs = nbufs;
	a->bytes = (size_t)nsets * set;
	if (cudaMalloc((void **)&a->base, a->bytes) != cudaSuccess) {
		/* Fragmentation or a concurrent user: treat as "does not fit". */
		(void)cudaGetLastError();
		a->base = NULL;
		return 1;
	}
	for (j = 0; j < nbufs; j++) {
		a->off[j] = j ? a->off[j - 1] + (size_t)nsets * a->size[j - 1] : 0;
		if (cuda_failed(kernels_fill_uniform(a->base + a->off[j],
						     (size_t)nsets * a->size[j] / elem[st[j]],
						     st[j], c->seed + 7919u * (uint64_t)j,
						     c->stream),
				"kernels_fill_uniform")) {
			arena_finish(a);
			return -1;
		}
	}
	c->seed += 104729u;
	if (cuda_failed(cudaStreamSynchronize(c->stream), "fill")) {
		arena_finish(a);
		return -1;
	}
	return 0;
}

void arena_finish(struct arena *a)
{
	if (a->base)
		cudaFree(a->base);
	memset(a, 0, sizeof(*a));
}

void *arena_ptr(const struct arena *a, int j, int i)
{
	return a->base + a->off[j] + (size_t)(i % a->nsets) * a->size[j];
}

static int cmp_float(const void *x, const void *y)
{
	const float a = *(const float *)x, b = *(const float *)y;

	return (a > b) - (a < b);
}

/* The probe: one run (run *it, counted), timed on its own, into *probe_s; -1 on a CUDA error. */
static int probe_run(struct calib *c, int (*enqueue)(void *arg, int i), void *arg, int *it,
		     double *probe_s)
{
	float ms = 0.0f;

	if (cuda_failed(cudaEventRecord(c->ev_start[0], c->stream), "cudaEventRecord"))
		return -1;
	if (enqueue(arg, (*it)++) < 0)
		return -1;
	if (cuda_failed(cudaEventRecord(c->ev_stop[0], c->stream), "cudaEventRecord") ||
	    cuda_failed(cudaEventSynchronize(c->ev_stop[0]), "probe run") ||
	    cuda_failed(cudaEventElapsedTime(&ms, c->ev_start[0], c->ev_stop[0]),
			"cudaEventElapsedTime"))
		return -1;
	*probe_s = 1e-3 * ms;
	return 0;
}

/* The warm-up and timed run counts: c's, cut to the time budgets (--quick: shorter)
 * at the probe's time; 5 to CALIB_MAX_RUNS timed runs. */
static void run_counts(const struct calib *c, double probe_s, int *warm, int *runs)
{
	const double warm_budget_s = c->quick ? 0.05 : 0.2;
	const double timed_budget_s = c->quick ? 0.25 : 1.0;

	*warm = c->warmup_runs - 1;
	if (*warm > 0 && probe_s * *warm > warm_budget_s)
		*warm = (int)(warm_budget_s / probe_s);
	*runs = c->timed_runs;
	if (probe_s * *runs > timed_budget_s)
		*runs = (int)(timed_budget_s / probe_s);
	if (*runs < 5)
		*runs = 5;
	if (*runs > CALIB_MAX_RUNS)
		*runs = CALIB_MAX_RUNS;
}

/* The timed runs (from run *it on), each between its events, their times in ms into
 * times[]; -1 on a CUDA error. */
static int timed_runs(struct calib *c, int (*enqueue)(void *arg, int i), void *arg, int *it,
		      int runs, float *times)
{
	int r;

	for (r = 0; r < runs; r++) {
		if (cuda_failed(cudaEventRecord(c->ev_start[r + 1], c->stream), "cudaEventRecord"))
			return -1;
		if (enqueue(arg, (*it)++) < 0)
			return -1;
		if (cuda_failed(cudaEventRecord(c->ev_stop[r + 1], c->stream), "cudaEventRecord"))
			return -1;
	}
	if (cuda_failed(cudaStreamSynchronize(c->stream), "timed runs"))
		return -1;
	for (r = 0; r < runs; r++)
		if (cuda_failed(cudaEventElapsedTime(&times[r], c->ev_start[r + 1],
						     c->ev_stop[r + 1]),
				"cudaEventElapsedTime"))
			return -1;
	return 0;
}

/* The median of the runs' times (ms, sorted here), in s, at least 0.5 us. */
static double median_s_of(float *times, int runs)
{
	double m;

	qsort(times, (size_t)runs, sizeof(times[0]), cmp_float);
	if (runs % 2)
		m = 1e-3 * times[runs / 2];
	else
		m = 0.5e-3 * ((double)times[runs / 2 - 1] + times[runs / 2]);
	/* Events resolve about 0.5 us; never report a zero time (rates would
	 * be infinite). */
	return m < 5e-7 ? 5e-7 : m;
}

int timer_median(struct calib *c, int (*enqueue)(void *arg, int i), void *arg,
		 double *median_s)
{
	float times[CALIB_MAX_RUNS];
	double probe_s;
	int warm, runs, it = 0;

	/* Probe: one run, timed on its own. */
	if (probe_run(c, enqueue, arg, &it, &probe_s) < 0)
		return -1;
	run_counts(c, probe_s, &warm, &runs);
	/* Short runs: hold the GPU while the host enqueues them all. */
	if (probe_s < 2e-3 &&
	    cuda_failed(kernels_spin(5e-4 + 1.5e-4 * (warm + runs), c->stream), "kernels_spin"))
		return -1;
	while (warm-- > 0)
		if (enqueue(arg, it++) < 0)
			return -1;
	if (timed_runs(c, enqueue, arg, &it, runs, times) < 0)
		return -1;
	*median_s = median_s_of(times, runs);
	return 0;
}

int copy_strided(void *dst, const void *src, size_t elem, size_t stride,
		 size_t count)
{
	void *packed = NULL;
	int rc = -1;

	if (cuda_failed(cudaDeviceSynchronize(), "cudaDeviceSynchronize"))
		return -1;
	if (count == 0)
		return 0;
	if (stride == 1)
		return cuda_failed(cudaMemcpy(dst, src, elem * count,
					      cudaMemcpyDeviceToHost),
				   "cudaMemcpy D2H") ? -1 : 0;
	/* Pack on the device (kernels/gather.cu), then one contiguous copy. */
	if (cuda_failed(cudaMalloc(&packed, elem * count), "cudaMalloc gather"))
		return -1;
	if (!cuda_failed(kernels_gather(packed, src, elem, stride, count, 0), "kernels_gather") &&
	    !cuda_failed(cudaMemcpy(dst, packed, elem * count, cudaMemcpyDeviceToHost),
			 "cudaMemcpy D2H"))
		rc = 0;
	cudaFree(packed);
	return rc;
}
