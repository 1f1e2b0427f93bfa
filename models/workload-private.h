/* workload-private: what workload.c, workload_grads.c and workload_ends.c
 * share (models/ only): the emitter that appends one block's ops to a
 * list, its op makers, the gradient ops a block emits after its weight
 * GEMMs, and the encoder and ViT ends. */
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

/* A GEMM of this block (batch x m x n x k) at the emitter's GEMM dtype. */
void workload_gemm(struct emitter *e, const char *name, double batch, double m, double n, double k);
/* A memory-bound kernel touching elements `touches` times (1.5x that in
 * backward), family its class ("gather", "copy", ...), row its row length
 * for row-wise pricing (0: element-wise). */
void workload_membound(struct emitter *e, const char *name, const char *family,
		       double elements, double touches, double row);
/* A piece of the stack (stack.h) over `elements`, as the stack runs it. */
void workload_piece(struct emitter *e, const char *name, const char *family,
		    const struct stack_piece *pc, double elements, double row);
/* The model's norm (RMSNorm or LayerNorm piece) over el elements. */
void workload_norm_op(struct emitter *e, const struct model *m, const char *name, double el);

/* The ends of encoder and ViT models (workload_ends.c): T tokens, Tn the
 * norms' (T / tp under sequence parallelism). */
void workload_encoder_embed(struct emitter *e, const struct model *m, const struct wl_shape *s,
			    double T, double Tn);
void workload_encoder_head(struct emitter *e, const struct model *m, const struct wl_shape *s);
void workload_vit_embed(struct emitter *e, const struct model *m, const struct wl_shape *s, double T);
void workload_vit_head(struct emitter *e, const struct model *m, const struct wl_shape *s, double Tn);

#endif
