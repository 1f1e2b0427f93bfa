/* stack_path: an engine's gradient path and optimizer step at a ZeRO
 * stage (stack.h struct stack_zero_path), turned into bytes and kernels
 * per parameter on an average micro-batch of a step. The counts
 * themselves, each cited, are the rows of stack.c's table (stack_*.h);
 * workload.c emits the ops.
 *
 * Over a step of m micro-batches, an op that runs on every micro-batch
 * counts whole, one that runs after the first (accumulation into an
 * existing gradient) (m - 1) / m, a reduction at the step's last 1 / m;
 * bytes per partition P / d divide by the d ranks of the reduction. */
#include "stack.h"

#include <math.h>
#include <stddef.h>

const struct stack_zero_path *stack_zero_path(const struct stack *s, int zero)
{
	return s->zero_path && zero >= 0 && zero <= 3 ? &s->zero_path[zero] : NULL;
}

double stack_span_fraction(int ranks, double bucket_params, double params)
{
	if (ranks <= 1)
		return 0;
	if (bucket_params <= 0 || params <= 0)
		return 1;
	double f = (ranks - 1) * bucket_params / params;
	return f < 1 ? f : 1;
}

/* Kernels of an op on an average micro-batch: k on the share `runs` of
 * them, at least one when it moves bytes; -1 (none of its own) for k 0. */
static int avg_kernels(int k, double runs, double bytes)
{
	if (bytes <= 0)
		return 0;
	if (k <= 0)
		return -1;
	int n = (int)lround(k * runs);
	return n > 0 ? n : 1;
}

void stack_zero_grad_Bpp(const struct stack_zero_path *z, int ranks, int m, double span,
			 double *accum_Bpp, double *reduce_Bpp, int *accum_kernels,
			 int *reduce_kernels)
{
	double d = ranks > 1 ? ranks : 1, n = m > 1 ? m : 1;
	double later = (n - 1) / n;             /* micro-batches after a step's first */
	double reduces = z->reduce_every_mb ? 1 : 1 / n;   /* reductions per micro-batch */
	double shard_later = z->reduce_every_mb ? later : 0;

	*accum_Bpp = z->accum_every_Bpp + z->accum_later_Bpp * later +
		     z->accum_shard_Bpp * shard_later / d;
	double accum_steps = n > 1 ? z->reduce_accum_Bpp : 0;
	*reduce_Bpp = reduces * (z->reduce_Bpp + accum_steps + z->span_Bpp * span +
				 (z->span_shard_Bpp * span + z->shard_Bpp) / d) +
		      z->shard_first_Bpp / (d * n);
	*accum_kernels = avg_kernels(z->accum_kernels, z->accum_every_Bpp > 0 ? 1 : later,
				     *accum_Bpp);
	*reduce_kernels = avg_kernels(z->reduce_kernels, reduces, *reduce_Bpp);
}

double stack_optimizer_Bpp(const struct stack *s, int zero)
{
	const struct stack_zero_path *z = stack_zero_path(s, zero);
	return z ? z->optimizer_Bpp : s->optimizer_Bpp;
}

int stack_optimizer_kernels(const struct stack *s, int zero)
{
	const struct stack_zero_path *z = stack_zero_path(s, zero);
	return z ? z->optimizer_kernels : s->optimizer_kernels;
}
