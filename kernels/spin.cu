// spin.cu - a one-thread kernel that busy-waits, so timed runs queue up behind it.
//
// CUDA events measure GPU time between two points of a stream.  When a
// kernel is shorter than the host's cost of enqueuing it (cuBLAS and cuDNN
// spend several microseconds per call), the GPU drains the queue, waits for
// the host between the start event and the kernel, and the wait is counted
// as kernel time.  The timer enqueues this kernel first: while it spins, the
// host enqueues every timed run behind it, and the runs then execute back to
// back.  The wait uses the %globaltimer nanosecond clock (sm_70 and later).
#include "kernels-private.cuh"

static __device__ __forceinline__ unsigned long long global_ns(void)
{
	unsigned long long t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

static __global__ void spin_kernel(unsigned long long ns)
{
	const unsigned long long start = global_ns();

	while (global_ns() - start < ns)
		__nanosleep(1000);
}

extern "C" cudaError_t kernels_spin(double seconds, cudaStream_t stream)
{
	if (!(seconds > 0.0))
		return cudaSuccess;
	if (seconds > 1.0)
		seconds = 1.0;
	spin_kernel<<<1, 1, 0, stream>>>((unsigned long long)(seconds * 1e9));
	return cudaGetLastError();
}
