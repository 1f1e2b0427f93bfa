/* workload-private: what workload.c and workload_grads.c share (models/
 * only): the emitter that appends one block's ops to a list, and the
 * gradient ops a block emits after its weight GEMMs. */
#ifndef DDLSIM_WORKLOAD_PRIVATE_H
#define DDLSIM_WORKLOAD_PRIVATE_H

#include "workload.h"

struct emitter {
	struct op_list *out;
	const struct model *m;
	const struct stack *stk;
	enum op_pass pass;
	enum dtype dt;          /* activations, memory-bound kernels */
	enum dtype gdt;         /* the GEMM being emitted */
	bool fp8;               /* Transformer Engine fp8 casts */
	bool frozen;            /* weight GEMMs without weight gradients (finetune.h) */
};

/* Backward: the weight gradients of params (this rank's) of the block
 * op `name`: the stack's engine path (stack.h zero_path), FSDP1's flat
 * gradient (stack.h fsdp1_flat) and the accumulation into the main
 * gradients (stack.h main_grad_Bpp); separate: a gradient no GEMM
 * epilogue can take (an embedding's). Nothing in forward or for frozen
 * weights. */
void workload_main_grad_op_ex(struct emitter *e, const struct wl_shape *s, const char *name,
			      double params, bool separate);
/* workload_main_grad_op_ex() of a GEMM's weights (separate false). */
void workload_main_grad_op(struct emitter *e, const struct wl_shape *s, const char *name,
			   double params);
/* Backward: FSDP1's flat gradient of params alone ("name.flat_grad"),
 * for a parameter with no main-gradient op of its own (a position
 * table's). */
void workload_flat_grad_op(struct emitter *e, const char *name, double params);

#endif
