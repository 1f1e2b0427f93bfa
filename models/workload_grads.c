/* workload_grads: the ops of a block's weight gradients after its
 * weight GEMMs (see workload-private.h), as the plan's stack runs them:
 * an engine's gradient path per ZeRO stage (DeepSpeed's, DDP's:
 * "<block>.grad_accum", "<block>.grad_bucket"), FSDP1's flat gradient
 * ("<block>.flat_grad"), and the accumulation into fp32 or 16-bit main
 * gradients ("<block>.main_grad"). Bytes per parameter from stack.h;
 * the collectives that reduce the gradients are the schedule's (sim/). */
#include "workload-private.h"

#include <stdio.h>

/* One of the engine's gradient ops (zero_grad_ops): name.suffix over
 * params parameters, bytes and kernels as given, priced as a copy. */
static void engine_grad_op(struct emitter *e, const char *name, const char *suffix,
			   double params, double bytes, int kernels)
{
	if (bytes <= 0)
		return;
	struct op op = { .kind = OP_MEMBOUND, .pass = PASS_BWD, .dtype = e->dt, .batch = 1 };
	snprintf(op.name, sizeof(op.name), "%s.%s", name, suffix);
	snprintf(op.membound_kind, sizeof(op.membound_kind), "%s", suffix);
	op.m = params;
	op.bytes = bytes;
	op.kernels = kernels;
	op_list_push(e->out, &op);
}

/* Backward: what the stack's engine does with the gradients of params
 * (this rank's) at the plan's ZeRO stage, per micro-batch on average over
 * the step (stack.h struct stack_zero_path): "name.grad_accum" and
 * "name.grad_bucket". The share of gradients in reduce buckets spanning
 * several ranks' partitions is taken over the whole model on this rank. */
static void zero_grad_ops(struct emitter *e, const struct wl_shape *s, const char *name,
			  double params)
{
	const struct stack_zero_path *z = stack_zero_path(e->stk, s->grad.zero);
	double accum, reduce;
	int ka, kr;
	if (!z || e->pass != PASS_BWD || params <= 0 || e->frozen)
		return;
	double span = stack_span_fraction(s->grad.ranks, s->grad.bucket_params,
					  model_params(e->m) / (s->tp > 1 ? s->tp : 1));
	stack_zero_grad_Bpp(z, s->grad.ranks, s->grad.microbatches, span, &accum, &reduce, &ka, &kr);
	engine_grad_op(e, name, "grad_accum", params, accum * params, ka);
	engine_grad_op(e, name, "grad_bucket", params, reduce * params, kr);
}

/* Backward: FSDP1's flat gradient of params (stack.h fsdp1_flat):
 * autograd's SplitWithSizesBackward concatenates the weights' 16-bit
 * gradients into the unit's flat gradient, read and write ("name.flat_grad"). */
void workload_flat_grad_op(struct emitter *e, const char *name, double params)
{
	if (!e->stk->fsdp1_flat || e->pass != PASS_BWD || params <= 0 || e->frozen)
		return;
	struct op op = { .kind = OP_MEMBOUND, .pass = PASS_BWD, .dtype = e->dt, .batch = 1 };
	snprintf(op.name, sizeof(op.name), "%s.flat_grad", name);
	snprintf(op.membound_kind, sizeof(op.membound_kind), "copy_bwd");
	op.m = params;
	op.bytes = 2 * dtype_bytes(e->dt) * params;
	op.kernels = 1;
	op_list_push(e->out, &op);
}

/* Backward: the weight gradients of params (this rank's) accumulated
 * into the main gradients (stack.h main_grad_Bpp), where the stack does
 * it beyond the wgrad GEMM's own write. 16-bit main gradients: a fused
 * epilogue reads them as well (2 B), a separate cast has nothing to do.
 * separate: a gradient no GEMM epilogue can take (the embedding's), added
 * by its own kernel where the stack fuses the others: read the 16-bit
 * gradient, read and write the main gradient. A stack whose engine
 * handles the gradients itself adds its ops (zero_grad_ops) here. */
void workload_main_grad_op_ex(struct emitter *e, const struct wl_shape *s, const char *name,
			      double params, bool separate)
{
	const struct stack *k = e->stk;
	zero_grad_ops(e, s, name, params);
	workload_flat_grad_op(e, name, params);
	bool fused = k->main_grad_kernels == 0 && !separate;
	double gb = s->grad_fp32 ? 4 : 2, bpp;
	if (fused)                      /* the epilogue reads and writes them */
		bpp = s->grad_fp32 ? k->main_grad_Bpp : 2;
	else if (k->main_grad_kernels == 0)     /* an add beside fused ones */
		bpp = 2 + 2 * gb;
	else                            /* a cast into the reduce buffer */
		bpp = s->grad_fp32 ? k->main_grad_Bpp : 0;
	if (e->pass != PASS_BWD || bpp <= 0 || params <= 0 || e->frozen)
		return;
	struct op op = { .kind = OP_MEMBOUND, .pass = PASS_BWD, .dtype = DTYPE_FP32, .batch = 1 };
	snprintf(op.name, sizeof(op.name), "%s.main_grad", name);
	snprintf(op.membound_kind, sizeof(op.membound_kind), "main_grad");
	op.m = params;
	op.bytes = bpp * params;
	/* fused into the wgrad epilogue: no kernel, no launch of its own */
	op.kernels = fused ? -1 : k->main_grad_kernels > 0 ? k->main_grad_kernels : 1;
	op_list_push(e->out, &op);
}

void workload_main_grad_op(struct emitter *e, const struct wl_shape *s, const char *name,
			   double params)
{
	workload_main_grad_op_ex(e, s, name, params, false);
}
