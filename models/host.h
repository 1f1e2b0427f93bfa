/* host: the CPU time a framework spends issuing kernels, and what the GPU
 * loses waiting for it.
 *
 * A training step's kernels are issued by one host thread per GPU (the
 * Python forward, then the autograd engine's thread in backward): each
 * launch costs the host the framework's issue time (Python, the
 * dispatcher, autograd's bookkeeping, the driver's launch call). The host
 * runs ahead of the GPU through the launch queue, so host and GPU work as
 * two stages of a pipeline: over a run of kernels without a host
 * synchronisation the GPU takes
 *
 *     max(sum of the kernels' GPU times, sum of their issue times)
 *
 * and waits for the host when the kernels are shorter than their issue
 * time (small models, small micro-batches, eager stacks). A CUDA graph
 * replays captured kernels with one launch: its kernels cost the host
 * (almost) nothing, which is why frameworks capture them. The issue
 * times per kernel are the stack's (stack.h, cited in stack-private.h); a
 * scenario may give measured ones.
 *
 * With CUDA_LAUNCH_BLOCKING=1 (a debugging switch some runs keep on, as
 * BLOOM-176B's tr11 did against a hang: bigscience train/tr11-176B-ml/
 * tr11-176B-ml.slurm) every launch returns only when its kernel has
 * finished (CUDA Programming Guide, "Asynchronous Concurrent Execution":
 * the variable disables asynchronous kernel launches), so the host can
 * no longer run ahead: the two stages work in turn and a run of kernels
 * takes the sum of their GPU and issue times. */
#ifndef DDLSIM_HOST_H
#define DDLSIM_HOST_H

#include <stdbool.h>

#include "op.h"

/* The host's issue time per kernel launch, forward and backward (the
 * autograd engine's). */
struct host_issue {
	double fwd_s, bwd_s;
	bool blocking;          /* CUDA_LAUNCH_BLOCKING=1: issue and GPU time add up */
};

struct cost;

/* The host's time to issue ops l (each op's launches on c's GPU,
 * cost_op_launches(), or op_launches() where c is NULL, at the rate of
 * its pass). */
double host_issue_time(const struct host_issue *h, const struct cost *c, const struct op_list *l);

/* The GPU time of a run of kernels of GPU time gpu_s that takes the host
 * issue_s to issue: the slower of the two stages. */
double host_bound_time(double gpu_s, double issue_s);

/* The same for h's launches: their sum where h->blocking (each launch
 * waits for its kernel), else host_bound_time(); gpu_s for h NULL. */
double host_block_time(const struct host_issue *h, double gpu_s, double issue_s);

#endif
