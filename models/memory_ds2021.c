/* memory_ds2021: the buffers of DeepSpeed v0.4.0's ZeRO-3 (stack
 * deepspeed-zero3-2021, models/stack_deepspeed.h) at its peak: the
 * parameters gathered per Linear, not per layer, and the full-size
 * gradients its reduce path keeps, in place of the anatomy's two gathered
 * layers and two gradient buckets (FSDP's shape, memory.c reserved).
 * Taken where the time model gathers per Linear (sim/anatomy.c: a dense
 * model, dp > 1, tp = cp = 1); elsewhere the stack keeps FSDP's shape.
 *
 * Read at microsoft/DeepSpeed v0.4.0 (2d302d6):
 *   - gathered parameters [source] runtime/zero/stage3.py: a module's
 *     parameters are gathered when it runs (fetch_sub_module L390-446) and
 *     released after it (release_sub_module L448-498: param.partition())
 *     unless used again within max_reuse_distance 1e9 elements
 *     (_keep_for_later L500-508, get_reuse_distance_in_numel L236-274);
 *     a module is one nn.Linear (its weight; biases and norms below
 *     param_persistence_threshold 1e5 stay whole and are left out here).
 *     Under full recompute the Linear kept is the layer's last, from its
 *     recomputed forward into its backward: the same tensor, counted
 *     once. After a module's fetch the next parameters of the trace are
 *     prefetched only when fewer than max_live_parameters (1e9, L98 of
 *     constants.py, L349 and L711 of stage3.py) elements are available,
 *     the module's own among them; get_params_to_prefetch (L202-232)
 *     takes parameters until prefetch_bucket_size 5e7 is reached, the one
 *     crossing it included: of Linears of 5e7 elements or more, the next
 *     one. So while Linear k runs, P_k and, when P_k < 1e9, P_next.
 *   - a gather's transient [source] partition_parameters.py
 *     _allgather_param (L791-838) all-gathers into views of the
 *     parameter's flat tensor; PyTorch's ProcessGroupNCCL::allgather of a
 *     list (pytorch/pytorch 00f5dfd5, torch/lib/c10d/ProcessGroupNCCL.cpp)
 *     gathers into a flatten_for_scatter_gather buffer of the same size
 *     and copies out of it: while a Linear is gathered, twice its
 *     elements.
 *   - gradients [source] stage3.py reduce_independent_p_g_buckets_and_
 *     remove_grads L1879-1916: contiguous_gradients off (constants.py
 *     L64), a Linear's full-size gradient (autograd's, in the parameters'
 *     fp16) joins the IPG bucket as it is; the bucket is reduced first
 *     when this gradient would take it past reduce_bucket_size 5e8
 *     (constants.py L67: the plan's bucket; stage3.py L1881-1886), an
 *     empty one too.
 *     reduce_ipg_grads (L2158-2189) first runs
 *     partition_previous_reduced_grads (L2053-2150) for the bucket reduced
 *     the time before, whose gradients are freed only there
 *     (partition_parameters.py _partition_gradient L1043: param.grad.data
 *     = the partition's buffer), then all-reduces the bucket through
 *     buffered_reduce_fallback (L2315-2326, one piece: numel_per_bucket
 *     is the bucket's own count) and allreduce_bucket (L2263-2289), whose
 *     flatten (util_ops.flatten: torch::utils::flatten_dense_tensors) is
 *     a view of a one-tensor bucket and a concatenated copy of several.
 *     So when a gradient is produced, beside the gathered weights: it,
 *     the bucket and the bucket reduced before; if it sets off a reduce,
 *     then it, the bucket and the bucket's copy (struct ipg). When a
 *     Linear (or its prefetch) is gathered: the bucket and the one before.
 * Each instant of the rank's backward, layer by layer, of a forward
 * (linear_peak) and of the backward's epilogue (the last bucket's
 * reduce) is counted; the largest is the buffer.
 * The fp16 partitions, fp32 master and Adam states, the checkpoints and
 * the recomputed layer's activations are the anatomy's (memory.c).
 * Not counted: the embedding's and head's gathers (not modelled for time
 * either), the persistent parameters and the small gradients a bucket
 * holds besides a Linear's (biases, norms: under 1e5 elements each). */
#include "memory-private.h"

#include <math.h>

#include "model.h"

/* The IPG path's full-size gradients, in elements: the bucket (count
 * tensors) and the bucket reduced before it, not yet partitioned;
 * reduce_bucket_size, the plan's bucket (the deepspeed@0.4 preset's 5e8,
 * models/framework.c). */
struct ipg {
	double bucket, prev;
	int count;
	double limit;
};

/* Gradient g produced and added to s: the largest of the gradients alive
 * meanwhile, in elements. */
static double ipg_add(struct ipg *s, double g)
{
	double peak = g + s->bucket + s->prev;
	if (s->bucket + g > s->limit) {
		double copy = s->count > 1 ? s->bucket : 0; /* flatten's cat */
		double during = g + s->bucket + copy;       /* prev partitioned */
		peak = during > peak ? during : peak;
		s->prev = s->bucket;
		s->bucket = 0;
		s->count = 0;
	}
	s->bucket += g;
	s->count++;
	return peak;
}

/* The bytes of the instants of Linear k of n (p[], forward order; live:
 * max_live_parameters, weights at wb, gradients at gb): its forward's
 * and, with the gradients s holds before it, its backward's, the
 * largest; its gradient is added to s. */
static double linear_peak(const double *p, int n, int k, double live, double wb, double gb, struct ipg *s)
{
	bool pre = live <= 0 || p[k] < live;        /* a prefetch follows its fetch */
	double nf = p[(k + 1) % n];                 /* forward: the next Linear */
	double nb = p[k > 0 ? k - 1 : 0];           /* backward: the one before (of
						       the first, the layer below's
						       first, recomputed) */
	double held = s->bucket + s->prev;          /* gradients before it */
	double x[] = {
		wb * 2 * p[k],                                  /* forward fetch */
		pre ? wb * (p[k] + 2 * nf) : 0,                 /* forward prefetch */
		wb * 2 * p[k] + gb * held,                      /* backward fetch */
		pre ? wb * (p[k] + 2 * nb) + gb * held : 0,     /* backward prefetch */
		0,                                              /* its gradient */
	};
	x[4] = wb * (p[k] + (pre ? nb : 0)) + gb * ipg_add(s, p[k]);
	double m = 0;
	for (size_t i = 0; i < sizeof(x) / sizeof(x[0]); i++)
		m = x[i] > m ? x[i] : m;
	return m;
}

/* The largest of a rank's per-Linear buffers, in bytes: gathered weights
 * at wbytes, gradients at gbytes, over the backward of its layers. */
double memory_ds2021_buffers(const struct mem_rank_input *in, double wbytes, double gbytes)
{
	double p[MODEL_LINEARS_MAX];
	int n = model_linear_weights(in->model, p);
	long layers = in->layers > 1 ? (long)ceil(in->layers) : 1;
	struct ipg s = { .limit = in->bucket_bytes / gbytes };
	double peak = 0;

	for (long l = 0; l < layers; l++)
		for (int k = n - 1; k >= 0; k--) {
			double b = linear_peak(p, n, k, in->z3_live_elements, wbytes, gbytes, &s);
			peak = b > peak ? b : peak;
		}
	/* the backward's epilogue reduces the last bucket: the one before
	 * partitioned, the bucket and its copy (stage3.py
	 * independent_gradient_partition_epilogue L1728-1737); a model whose
	 * Linears fill one bucket peaks here */
	double last = gbytes * (s.bucket + (s.count > 1 ? s.bucket : 0));
	return last > peak ? last : peak;
}
