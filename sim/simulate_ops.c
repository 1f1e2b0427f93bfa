/* simulate_ops: the report's per-kernel table (every op of every block,
 * or every layer of a CNN, one micro-batch, priced again by the run's
 * cost source) and the cost source's names. */
#include <stdio.h>
#include <string.h>

#include "simulate-private.h"
#include "cost.h"
#include "stack.h"
#include "cnn.h"
#include "xalloc.h"

/* One row of the per-kernel table. */
static void put_op(struct result *r, struct cost *cost, const char *block, enum op_pass pass,
		   const struct op *op)
{
	struct op_timing *o = &r->ops[r->nops++];
	bool measured = false;
	memset(o, 0, sizeof(*o));
	snprintf(o->block, sizeof(o->block), "%s", block);
	snprintf(o->pass, sizeof(o->pass), "%s", pass == PASS_FWD ? "fwd" : "bwd");
	snprintf(o->name, sizeof(o->name), "%s", op->name);
	o->m = op->m, o->n = op->n, o->k = op->k, o->batch = op->batch;
	o->flops = op->flops;
	o->bytes = op->bytes;
	o->kernels = cost_op_launches(cost, op);
	o->time_s = cost_op_time_ex(cost, op, &measured);
	o->measured = measured;
	o->kind = op->kind, o->dtype = op->dtype, o->row = op->row, o->window = op->window;
	o->causal = op->causal;
	snprintf(o->membound_kind, sizeof(o->membound_kind), "%s", op->membound_kind);
}

/* A convolutional network's table: every layer's kernels, one
 * micro-batch, as the plan's stack runs them (stack.h cnn). */
static int collect_cnn_ops(const struct inputs *in, const struct plan *pl, struct cost *cost,
			   struct result *r)
{
	struct cnn_net net;
	enum cnn_fusion fu = plan_stack(pl)->cnn;
	if (cnn_build(inputs_model(in), &net))
		return -1;
	int rc = 0;
	for (int i = 0; i < net.n && !rc; i++)
		for (int pass = PASS_FWD; pass <= PASS_BWD && !rc; pass++) {
			struct op_list l;
			op_list_init(&l);
			rc = cnn_layer_ops(&net.v[i], (double)pl->training.micro_batch, pl->training.precision, pass,
					   i == 0, fu, &l);
			r->ops = xreallocarray(r->ops, (size_t)(r->nops + l.n), sizeof(*r->ops));
			for (int j = 0; j < l.n && !rc; j++)
				put_op(r, cost, net.v[i].name, pass, &l.v[j]);
			op_list_finish(&l);
		}
	cnn_net_finish(&net);
	return rc;
}

/* The per-kernel table of the report: every op of every block, one
 * micro-batch, priced again by the same (deterministic) cost source. */
static int collect_ops(const struct inputs *in, const struct plan *pl, struct cost *cost,
		       struct result *r)
{
	const struct model *m = inputs_model(in);
	struct wl_shape shp = plan_wl_shape(pl);
	if (m->arch == MODEL_ARCH_CNN)
		return collect_cnn_ops(in, pl, cost, r);
	for (int b = 0; b < WL_NBLOCKS; b++)
		for (int pass = PASS_FWD; pass <= PASS_BWD; pass++) {
			struct op_list l;
			op_list_init(&l);
			if (workload_block(m, &shp, b, pass, RECOMPUTE_NONE, &l)) {
				op_list_finish(&l);
				return -1;
			}
			r->ops = xreallocarray(r->ops, (size_t)(r->nops + l.n), sizeof(*r->ops));
			for (int i = 0; i < l.n; i++)
				put_op(r, cost, wl_block_name(b), pass, &l.v[i]);
			op_list_finish(&l);
		}
	return 0;
}

/* The per-kernel table of the report and the cost source's names.
 * Returns 0 or -1 (reported). */
int simulate_describe_cost(const struct inputs *in, const struct plan *pl, struct result *r,
			 struct diag *d)
{
	struct cost *cost = inputs_cost(in);
	if (collect_ops(in, pl, cost, r))
		return diag_errf(d, "cannot list the kernels of the model");
	r->cost_source = cost_name(cost);
	r->cost_detail = xstrdup(cost_describe(cost));
	const char *names;
	cost_measured_ops(cost, &names);
	r->measured_ops = xstrdup(names);
	cost_roofline_ops(cost, &names);
	r->roofline_ops = xstrdup(names);
	return 0;
}
