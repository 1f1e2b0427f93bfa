/* simulate_overlap: what a collective costs the compute beside it, as the
 * engine's job carries it (engine.h, interference), from one layer's
 * kernels (a CNN: the network's) priced by the job's cost source:
 *   - the share of the compute time in memory-bound kernels, which share
 *     HBM with the collective's traffic (the engine also gives them the
 *     SMs' fluid share: engine.h);
 *   - with C SMs running the collective's CTAs, the compute-bound
 *     kernels' time on the other SMs - C, by the roofline's own rules at
 *     that SM count (GEMM waves of tiles, split-K, flash attention's grid
 *     tail: models/cost_roofline.c), over the whole layer's time on every
 *     SM. A GEMM of one full wave needs two on SMs - C and takes twice as
 *     long (NVIDIA developer forum, "Compute-Communication Overlap Causes
 *     Severe GEMM Performance Degradation because of Tail Effect": a
 *     132-CTA GEMM beside a 24-CTA all-gather on an H100); one of many
 *     waves loses SMs / (SMs - C), the fluid share.
 * A measured cost source (a calib profile) keeps its own times: the
 * roofline's ratio between the two SM counts scales them. */
#include "simulate-private.h"

#include <stdlib.h>

#include "cnn.h"
#include "cost.h"
#include "stack.h"
#include "workload.h"
#include "xalloc.h"

/* Add op's share to the sums: its time t on every SM to *all, and to
 * mb or, on SMs - C SMs, to cb[C] for every C. */
static void add_op(const struct gpu_spec *g, const struct op *op, double t, double *all, double *mb,
		   double *cb)
{
	int S = g->sm_count;
	*all += t;
	if (op->kind == OP_MEMBOUND) {
		*mb += t;
		return;
	}
	double base = cost_roofline_time(g, op);
	struct gpu_spec fewer = *g;
	for (int c = 0; c < S; c++) {
		/* the same SMs, fewer of them: each keeps its share of the peak */
		fewer.sm_count = S - c;
		for (int d = 0; d < DTYPE_N; d++)
			fewer.peak_flops[d] = g->peak_flops[d] * (S - c) / S;
		cb[c] += base > 0 ? t * cost_roofline_time(&fewer, op) / base : t;
	}
}

void simulate_overlap_price(const struct inputs *in, const struct plan *pl, double *membound_share,
			    double **sm_work)
{
	const struct gpu_spec *g = &inputs_topology(in)->gpu;
	struct cost *cost = inputs_cost(in);
	const struct model *m = inputs_model(in);
	struct wl_shape shp = plan_wl_shape(pl);
	enum cnn_fusion fu = plan_stack(pl)->cnn;
	struct cnn_net net = { 0 };
	bool cnn = m->arch == MODEL_ARCH_CNN;
	double all = 0, mb = 0;

	*membound_share = 0;
	*sm_work = NULL;
	if (g->sm_count <= 1 || (cnn && cnn_build(m, &net)))
		return;
	double *cb = xcalloc((size_t)g->sm_count, sizeof(*cb));
	int n = cnn ? net.n : 2;
	for (int i = 0; i < n; i++)
		for (int pass = PASS_FWD; pass <= PASS_BWD; pass++) {
			struct op_list l;
			op_list_init(&l);
			int rc = cnn ? cnn_layer_ops(&net.v[i], (double)pl->training.micro_batch,
						     pl->training.precision, pass, i == 0, fu, &l)
				     : workload_block(m, &shp, i ? WL_MLP : WL_ATTN, pass,
						      RECOMPUTE_NONE, &l);
			for (int j = 0; j < l.n && !rc; j++)
				add_op(g, &l.v[j], cost_op_time(cost, &l.v[j]), &all, &mb, cb);
			op_list_finish(&l);
		}
	cnn_net_finish(&net);
	if (all <= 0) {
		free(cb);
		return;
	}
	for (int c = 0; c < g->sm_count; c++)
		cb[c] /= all;
	*membound_share = mb / all;
	*sm_work = cb;
}
