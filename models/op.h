/* op: one kernel a GPU runs, as a cost source prices it, and a growable
 * list of them. The builders of workloads (workload.c for transformers,
 * cnn.c for CNNs) emit ops; the cost sources (cost.h) price them. */
#ifndef DDLSIM_OP_H
#define DDLSIM_OP_H

#include <stdbool.h>

#include "attention.h"
#include "gpu.h"

enum op_kind {
	OP_GEMM,        /* C[m,n] = A[m,k] B[k,n], batch independent copies */
	OP_MEMBOUND,    /* elementwise, norm, softmax, gather: bytes dominate */
	OP_CONV,        /* convolution (CNN workloads) */
	OP_ATTN,        /* fused (flash) attention core: batch = b x heads, m = n = s,
			   k = head dim; priced by its own efficiency (attention.h) */
};

enum op_pass { PASS_FWD, PASS_BWD };

struct op {
	char name[32];          /* "qkv", "attn_score.dgrad", "layernorm", ... */
	enum op_kind kind;
	enum op_pass pass;
	enum dtype dtype;
	double m, n, k, batch;  /* GEMM shape (batch = 1 for a plain GEMM) */
	double row;             /* row length of a row-wise kernel (softmax, norm) */
	double reread_bytes;    /* a row-wise kernel's re-reads of its rows, beyond bytes:
				   from the L2 while the resident rows fit (rowwise.h) */
	int row_threads;        /* threads of its one CTA per row; 0 = not known */
	double flops;
	double bytes;           /* HBM traffic, read + written */
	double out_bytes;       /* OP_GEMM: of bytes, the output's write; 0 = not known */
	/* convolution shape (OP_CONV): output channels k_out, input c, image h x w */
	double conv_n, conv_c, conv_h, conv_w, conv_k, conv_r, conv_s, conv_stride, conv_pad;
	int conv_pass;          /* 0 fwd, 1 bwd_data, 2 bwd_filter */
	bool causal;            /* OP_ATTN: causal mask (tiles above the diagonal skipped) */
	double window;          /* OP_ATTN, causal: keys a query sees at most (sliding-window
				   attention, attention.h); 0 = all before it */
	enum gemm_lib lib;      /* OP_GEMM: the library that runs it (the stack's; gpu.h) */
	enum attn_backend backend[2]; /* OP_ATTN: the fused kernel that runs it, compute
				   capability < 9 and >= 9 (wl_shape) */
	bool dropout;           /* OP_ATTN: dropout on the probabilities inside the
				   kernel (attention.h attention_dropout_ratio) */
	char membound_kind[32]; /* calibrated kernel family: "layernorm_fwd", "softmax_fwd", ... */
	int kernels;            /* kernels the op stands for (an eager piece: several); 0 = 1;
				   -1: fused into the previous kernel (no launch of its own) */
};

struct op_list {
	struct op *v;
	int n, cap;
};

void op_list_init(struct op_list *l);
void op_list_finish(struct op_list *l);
/* Append a copy of op (out of memory exits: util/xalloc.h). */
void op_list_push(struct op_list *l, const struct op *op);

/* Kernel launches op pays: its kernels (at least 1), 0 for an op fused
 * into the kernel before it (kernels < 0). */
int op_launches(const struct op *op);

/* Sum of the ops' FLOPs. */
double op_list_flops(const struct op_list *l);

#endif
