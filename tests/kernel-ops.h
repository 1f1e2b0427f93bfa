/* kernel-ops: the op ddlsim would emit for a measured kernel of the
 * per-kernel suite (test-kernels.c, validation/kernels/): GEMMs, the
 * memory-bound kernels (element-wise byte counts; PyTorch's row-wise
 * kernels through models/rowwise.h) and fused attention. One place, so
 * that the suite and the tests of its table price a row the same way.
 * Header-only (static functions) so that the suite needs no build rule
 * of its own. */
#ifndef DDLSIM_TEST_KERNEL_OPS_H
#define DDLSIM_TEST_KERNEL_OPS_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "attention.h"
#include "rowwise.h"
#include "workload.h"

/* A GEMM C[m,n] = A[m,k] B[k,n], batch copies: 2bmnk FLOPs, each operand
 * read or written once. fp8 GEMMs write a 16-bit output (as the XLA
 * table's f8 x f8 -> bf16 and Transformer Engine do). */
static inline struct op kernel_gemm_op(enum dtype dt, double b, double m, double n, double k)
{
	struct op op = { .kind = OP_GEMM, .pass = PASS_FWD, .dtype = dt,
			 .m = m, .n = n, .k = k, .batch = b };
	double Bi = dtype_bytes(dt), Bo = dt == DTYPE_FP8 ? 2 : Bi;
	snprintf(op.name, sizeof(op.name), "gemm");
	op.flops = 2 * b * m * n * k;
	op.bytes = b * ((m * k + k * n) * Bi + m * n * Bo);
	op.out_bytes = b * m * n * Bo;
	return op;
}

/* HBM bytes per element of an element-wise kernel: what its one kernel
 * reads plus writes. 0 for an unknown kernel. (Layer norm, softmax and
 * dropout are PyTorch's kernels as models/rowwise.h describes them.)
 * swiglu counts per output element: it reads two (gate and up) and writes
 * one, as ddlsim's bias_swiglu piece does (models/stack.c). */
static inline double membound_bytes_per_elem(const char *kernel, enum op_pass pass, double B)
{
	static const char *const unary[] = { "gelu", "addu", "mulu", "divu", "powu", "relu", "tanh", NULL };
	static const char *const binary[] = { "add", "mul", "div", "pow", "swiglu", NULL };
	if (!strcmp(kernel, "layernorm") || !strcmp(kernel, "softmax") || !strcmp(kernel, "dropout"))
		return 1;  /* rowwise.h */
	if (!strcmp(kernel, "rmsnorm"))
		return pass == PASS_FWD ? 1 : 0;
	if (pass != PASS_FWD)
		return 0;
	for (int i = 0; unary[i]; i++)
		if (!strcmp(kernel, unary[i]))
			return 2 * B;
	for (int i = 0; binary[i]; i++)
		if (!strcmp(kernel, binary[i]))
			return 3 * B;
	return 0;
}

/* The memory-bound op of kernel over rows x row_len elements. Layer norm,
 * softmax and dropout are PyTorch 2.1's kernels (models/rowwise.h: the
 * passes over each row, the re-reads the L2 may serve, the kernels of a
 * backward). The only dropout backward rows are NeuSight's per-node
 * timings, which call the node's grad_fn outside no_grad
 * (neusight/Tracing/analysis.py run_kernel): autograd's grad-mode
 * backward, three kernels. */
static inline struct op kernel_membound_op(const char *kernel, enum op_pass pass, enum dtype dt,
					   double rows, double row_len)
{
	struct op op = { .kind = OP_MEMBOUND, .pass = pass, .dtype = dt, .batch = 1 };
	const char *fam = !strcmp(kernel, "gelu") ? "bias_gelu" : !strcmp(kernel, "add") ? "residual" :
			  !strcmp(kernel, "swiglu") ? "bias_swiglu" :
			  !strcmp(kernel, "layernorm") || !strcmp(kernel, "softmax") ||
			  !strcmp(kernel, "rmsnorm") || !strcmp(kernel, "dropout") ? kernel : "elementwise";
	snprintf(op.name, sizeof(op.name), "%s%s", kernel, pass == PASS_BWD ? ".bwd" : "");
	snprintf(op.membound_kind, sizeof(op.membound_kind), "%s_%s", fam,
		 pass == PASS_BWD ? "bwd" : "fwd");
	if (!strcmp(kernel, "softmax")) {
		rowwise_aten_softmax(&op, rows, row_len);
	} else if (!strcmp(kernel, "layernorm") || !strcmp(kernel, "rmsnorm")) {
		/* RMSNorm forward: the same sweeps (statistics, then re-read and
		 * write), as PyTorch's fused kernel and calib's make them */
		rowwise_aten_layernorm(&op, rows, row_len);
	} else if (!strcmp(kernel, "dropout")) {
		rowwise_aten_dropout(&op, rows * row_len, true);
	} else {
		op.m = rows * row_len;
		op.bytes = op.m * membound_bytes_per_elem(kernel, pass, dtype_bytes(dt));
	}
	return op;
}

/* THE place where a measured fused-attention kernel becomes ddlsim's op:
 * OP_ATTN, batch = b x heads, m = n = s, k = head dim, FLOPs as
 * models/attention.h counts flash (the convention of the benchmarks the
 * rows come from), bytes as workload.c's attention_core(), priced as the
 * row's backend ("fa2", "fa3", "cudnn": attention.h enum attn_backend).
 * GQA's fewer K/V heads change neither count. */
static inline struct op kernel_attention_op(const char *backend, enum op_pass pass, enum dtype dt,
					    double b, double heads, double s, double d, bool causal)
{
	bool bwd = pass == PASS_BWD;
	double bh = b * heads, B = dtype_bytes(dt);
	enum attn_backend be = ATTN_BE_BEST;
	for (int i = 0; attn_backend_names[i]; i++)
		if (!strcmp(attn_backend_names[i], backend))
			be = (enum attn_backend)i;
	struct op op = { .kind = OP_ATTN, .pass = pass, .dtype = dt, .batch = bh,
			 .m = s, .n = s, .k = d, .causal = causal, .backend = { be, be } };
	snprintf(op.name, sizeof(op.name), "flash_attn%s", bwd ? ".bwd" : "");
	op.flops = attention_flops(ATTN_FLASH, causal, bwd, bh, s, d);
	op.bytes = bh * s * (d * B * (bwd ? 8 : 4) + 4);
	return op;
}

#endif
