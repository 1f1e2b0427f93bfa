/* rowwise: HBM passes of row-wise kernels and the L2's share of them
 * (the closed forms and their sources are in rowwise.h). */
#include "rowwise.h"

#include <math.h>

#include "precision.h"

double rowwise_resident_rows(const struct gpu_spec *g, int threads)
{
	/* max resident threads and CTAs per SM: 2048 and 32 on 7.0, 8.0,
	 * 9.0 and 10.0; 1536 and 16 on 8.6; 1536 and 24 on 8.9 */
	double cc = g->compute_capability;
	double tmax = 2048, bmax = 32;
	if (fabs(cc - 8.6) < 0.05)
		tmax = 1536, bmax = 16;
	else if (fabs(cc - 8.9) < 0.05)
		tmax = 1536, bmax = 24;
	if (threads <= 0)
		return 0;
	return (double)g->sm_count * fmin(floor(tmax / threads), bmax);
}

double rowwise_l2_hit(const struct gpu_spec *g, const struct op *op)
{
	if (g->l2_bytes <= 0 || op->row_threads <= 0 || op->row <= 0)
		return 0;
	double w = rowwise_resident_rows(g, op->row_threads) * op->row * dtype_bytes(op->dtype);
	if (w <= 0)
		return 0;
	return fmin(1, fmax(0, g->l2_bytes / w - 0.5));
}

double rowwise_hbm_bytes(const struct gpu_spec *g, const struct op *op)
{
	return op->bytes + op->reread_bytes * (1 - rowwise_l2_hit(g, op));
}

int rowwise_aten_softmax_threads(double row, double elem_bytes)
{
	/* SoftMax.cu SoftMax_getBlockSize: ILP = sizeof(float4) / element,
	 * min(row / ILP, 1024) halved when ILP > 1, rounded up to a power of
	 * two, at least a warp */
	int ilp = (int)(16 / elem_bytes);
	double maxb = fmin(floor(row / (ilp > 0 ? ilp : 1)), 1024);
	if (ilp > 1)
		maxb = floor(maxb / 2);
	int b = 1;
	while (b < maxb)
		b *= 2;
	return b < 32 ? 32 : b;
}

/* dispatch_softmax_forward / _backward take rows of at most 1024
 * elements and 4096 bytes (SoftMax.cu host_softmax) */
static bool persistent_softmax(double row, double B)
{
	return row <= 1024 && row * B <= 4096;
}

void rowwise_aten_softmax(struct op *op, double rows, double row)
{
	double B = dtype_bytes(op->dtype), n = rows * row;
	bool warp = persistent_softmax(row, B);
	op->m = n;
	op->row = row;
	op->row_threads = warp ? 0 : rowwise_aten_softmax_threads(row, B);
	if (op->pass == PASS_FWD) {
		op->bytes = 2 * B * n;                  /* read x, write y */
		op->reread_bytes = warp ? 0 : 2 * B * n;  /* max, sum, write passes */
		op->kernels = 1;
		return;
	}
	/* tmp = grad * output (r 2, w 1), then read tmp and output, write */
	op->bytes = 3 * B * n + 3 * B * n;
	op->reread_bytes = warp ? 0 : B * n;            /* tmp's sum pass */
	op->kernels = 2;
}

void rowwise_aten_layernorm(struct op *op, double rows, double row)
{
	double B = dtype_bytes(op->dtype), n = rows * row;
	op->m = n;
	op->row = row;
	op->kernels = 1;
	if (op->pass == PASS_FWD) {
		op->bytes = 2 * B * n;          /* read x (Welford), write y */
		op->reread_bytes = B * n;       /* x again for y */
		op->row_threads = 128;          /* num_threads(): a warp x 4 */
		return;
	}
	op->bytes = 3 * B * n;                  /* read x, dy, write dx */
	op->reread_bytes = 0;
	op->row_threads = 0;
}

void rowwise_aten_dropout(struct op *op, double elements, bool grad_mode)
{
	double B = dtype_bytes(op->dtype), n = elements;
	op->m = n;
	op->row = 0;
	op->row_threads = 0;
	op->reread_bytes = 0;
	op->kernels = 1;
	if (op->pass == PASS_FWD) {
		op->bytes = 2 * B * n + n;      /* read x, write y and a bool mask */
		return;
	}
	if (!grad_mode) {
		op->bytes = 2 * B * n + n;      /* read grad and mask, write */
		return;
	}
	/* mask.type_as(grad) r1 wB, * scale rB wB, grad * r2B wB */
	op->bytes = (1 + B) * n + 2 * B * n + 3 * B * n;
	op->kernels = 3;
}
