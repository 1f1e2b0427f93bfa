/* blocks: a transformer layer's blocks priced for one micro-batch.
 *
 * The program builder (build_transformer.c) schedules a layer as tasks:
 * the attention and MLP halves, forward and backward, with their TP,
 * CP and expert-parallel communication between. blocks_price() lists the
 * kernels of every block (workload.c, as the plan's stack runs them),
 * prices them with the cost source, and keeps the sums the schedule
 * needs: each block and pass, the selective-recompute extra, and the
 * parts around which communication is cut in (context parallelism's
 * core and ring steps, tp_comm_overlap's first and last GEMMs, an MoE
 * block's experts). A block whose kernels are shorter than the host's
 * time to issue them takes the host's time (models/host.h); its parts
 * stretch alike. */
#ifndef DDLSIM_BLOCKS_H
#define DDLSIM_BLOCKS_H

#include "cost.h"
#include "plan.h"
#include "workload.h"

/* Priced blocks of one micro-batch. */
struct blocks {
	double fwd[WL_NBLOCKS], bwd[WL_NBLOCKS];
	double recompute_sel;         /* selective: attention core forward again */
	double recompute_op;          /* selective-op: the layer's forward ops that
					 torchtitan's per-op policy runs again */
	double flops_fwd[WL_NBLOCKS];
	double flops_bwd[WL_NBLOCKS]; /* as executed (frozen weights: no wgrad) */
	/* the weight-gradient GEMMs (".wgrad" ops) within bwd: W of a
	 * schedule that splits the backward (schedule.h zb-h1), the rest B */
	double wgrad[WL_NBLOCKS], flops_wgrad[WL_NBLOCKS];
	double flops_core;            /* attention core forward flops */
	/* cp > 1, per pass: the attention block's ops before the core, after
	 * it, the own causal block (a2a: the whole core) and one ring step */
	double cp_pre[2], cp_post[2], cp_diag[2], cp_step[2];
	/* tp_comm_overlap, per half-layer block and pass: the first
	 * (column-parallel) and last (row-parallel) GEMM with their fp8
	 * casts, split into dgrad and wgrad in backward (gfirst/glast are
	 * the forward GEMM or the backward dgrad), and the ops before the
	 * first GEMM, between the two and after the last */
	double gfirst[2][WL_NBLOCKS], glast[2][WL_NBLOCKS];
	double wfirst[WL_NBLOCKS], wlast[WL_NBLOCKS];
	double glast_cast[2][WL_NBLOCKS]; /* the fp8 casts inside glast */
	double pre[2][WL_NBLOCKS], mid[2][WL_NBLOCKS], post[2][WL_NBLOCKS];
	/* MoE, per pass: the MLP block's ops before the dispatch, the experts,
	 * after the combine */
	double moe_pre[2], moe_mid[2], moe_post[2];
	/* of moe_pre, moe_mid and moe_post in backward, their ".wgrad" ops:
	 * what B leaves to W under a split backward (dualpipe) */
	double moe_wgrad[3];
	/* the GPU's wait for the host within each block (host.h; 0 when the
	 * kernels outlast their issue), part of fwd and bwd */
	double host_wait_fwd[WL_NBLOCKS], host_wait_bwd[WL_NBLOCKS];
};

/* Price the blocks of plan pl's layer of model m into bk (zeroed
 * first; an MoE model's: an MoE layer's). Returns 0, or -1 when the
 * workload cannot be listed. */
int blocks_price(const struct plan *pl, const struct model *m, struct cost *cost,
		 struct blocks *bk);
/* As blocks_price() for a dense layer: an MoE model's first dense layers
 * (model.h moe.first_dense_layers; workload.h wl_shape.dense_layer), a
 * dense model's layer. */
int blocks_price_dense(const struct plan *pl, const struct model *m, struct cost *cost,
		       struct blocks *bk);
/* As blocks_price() for a layer of either kind, dense or MoE, and whose
 * attention slides (model.h sliding_window; workload.h wl_shape.sliding)
 * or sees every key. */
int blocks_price_kind(const struct plan *pl, const struct model *m, struct cost *cost, bool dense,
		      bool sliding, struct blocks *bk);

#endif
