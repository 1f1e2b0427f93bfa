/* build_cnn: data-parallel CNN training as tasks (see build_cnn.h).
 *
 * Program of one rank, for each of the m = global_batch / (dp x
 * micro_batch) micro-batches:
 *   forward:   one compute task per layer group (stem, each residual
 *              block, head), in order; with a batch-norm group
 *              (parallel.bn_group) each batch norm also waits for its
 *              peers' statistics in both passes (bn_sync_s());
 *   backward:  the groups in reverse; on the last micro-batch each group's
 *              gradients join the open bucket, and a full bucket (bucket_MB,
 *              as PyTorch DDP and Horovod's tensor fusion do) is all-reduced
 *              on the DP stream while backward goes on;
 *   end:       the last partial bucket, then the optimizer step after every
 *              reduction.
 * The optimizer is the stack's (stack.h cnn_optimizer_Bpp: NVIDIA's MXNet
 * LARS, 24 B per parameter), else plain SGD, as in Horovod's synthetic
 * benchmarks (read weight and gradient, write weight: 3 x 4 bytes per
 * fp32 parameter; momentum would add 8), priced by the roofline like the
 * transformer's Adam step. Gradients are reduced in the scenario's grad_reduce_dtype.
 *
 * Memory anatomy: fp32 weights and gradients (plus a 16-bit weight copy
 * under mixed precision), the activations autograd keeps (every
 * convolution, batch-norm and pooling output and the max-pool indices;
 * in-place ReLUs and adds keep nothing extra), the gradient buckets and
 * the reserve. */
#include "build_cnn.h"

#include <stdlib.h>
#include <string.h>

#include "cnn.h"
#include "cost.h"
#include "inputs.h"
#include "stack.h"
#include "xalloc.h"

struct cnn_builder {
	const struct plan *pl;
	struct program *p;
	int last;               /* last compute task */
	double pending;         /* bytes in the open bucket */
	int *dp_tasks;
	int ndp;
	size_t capdp;
};

static void reduce(struct cnn_builder *b, double bytes)
{
	if (b->pl->parallel.dp <= 1 || bytes <= 0)
		return;
	struct task t = { .kind = TASK_COLL, .stream = STREAM_DP, .cat = CAT_DP_COMM,
			  .op = COLL_ALLREDUCE, .group = GROUP_DP, .bytes = bytes };
	int id = program_add(b->p, &t, &b->last, 1);
	XGROW(b->dp_tasks, b->capdp, (size_t)b->ndp + 1);
	b->dp_tasks[b->ndp++] = id;
}

static void compute(struct cnn_builder *b, enum task_cat cat, double time_s, double flops,
		    int mb)
{
	struct task t = { .kind = TASK_COMPUTE, .stream = STREAM_COMPUTE, .cat = cat,
			  .time_s = time_s, .flops = flops, .mb = mb };
	b->last = program_add(b->p, &t, &b->last, 1);
}

/* Per-group times, FLOPs and gradient bytes of one micro-batch. */
struct groups {
	int n;
	double *fwd_s, *bwd_s, *fwd_flops, *params;
	double saved_bytes;     /* activations kept for backward */
};

/* The time a batch norm's kernel waits, per pass, for the statistics of
 * the other GPUs of its group (plan.h bn_group): NVIDIA's NHWC batch norm
 * (sneaxiy/NVIDIA-MxNet ce30b18, src/operator/nn/cudnn/nhwc_batch_norm.h
 * L810-828, nhwc_batch_norm_kernel.cc L600-675) exchanges partial sums
 * inside the kernel in log2(group) pairwise steps, each CTA 0 writing
 * its sums into the peer's buffer over the node's links and every CTA
 * spinning until the peer's arrive: one link latency per step. Forward
 * exchanges twice (the mean, then the variance: L1647, L1704), backward
 * twice (dscale, dbias: L2160, L2175). The bytes (two floats per
 * channel) are negligible. */
static double bn_sync_s(const struct plan *pl, const struct topology *t)
{
	int steps = 0;
	for (int g = pl->parallel.bn_group; g > 1; g /= 2)
		steps++;
	return 2 * steps * t->intra_latency_s;
}

static int price(const struct plan *pl, struct cost *cost, const struct cnn_net *net,
		 double bn_sync, struct groups *g)
{
	enum dtype dt = pl->training.precision;
	double mb = (double)pl->training.micro_batch, B = dtype_bytes(dt);
	enum cnn_fusion fu = plan_stack(pl)->cnn;
	struct host_issue h = plan_host_issue(pl);
	struct op_list l;

	g->n = net->ngroups;
	g->fwd_s = xcalloc((size_t)g->n, sizeof(double));
	g->bwd_s = xcalloc((size_t)g->n, sizeof(double));
	g->fwd_flops = xcalloc((size_t)g->n, sizeof(double));
	g->params = xcalloc((size_t)g->n, sizeof(double));
	/* the host's time to issue each group's kernels (host.h): a group
	 * whose kernels are shorter takes the host's time */
	double *issue_f = xcalloc((size_t)g->n, sizeof(double));
	double *issue_b = xcalloc((size_t)g->n, sizeof(double));
	for (int i = 0; i < net->n; i++) {
		const struct cnn_layer *ly = &net->v[i];
		int gi = ly->group;
		op_list_init(&l);
		if (cnn_layer_ops(ly, mb, dt, PASS_FWD, i == 0, fu, &l))
			goto fail;
		g->fwd_s[gi] += cost_list_time(cost, &l);
		issue_f[gi] += host_issue_time(&h, cost, &l);
		g->fwd_flops[gi] += op_list_flops(&l);
		op_list_finish(&l);
		if (cnn_layer_ops(ly, mb, dt, PASS_BWD, i == 0, fu, &l))
			goto fail;
		g->bwd_s[gi] += cost_list_time(cost, &l);
		issue_b[gi] += host_issue_time(&h, cost, &l);
		op_list_finish(&l);
		if (ly->kind == CNN_BN) {
			g->fwd_s[gi] += bn_sync;
			g->bwd_s[gi] += bn_sync;
		}
		g->params[gi] += ly->params;
		double out = mb * ly->k * ly->p * ly->q;
		if (ly->kind == CNN_CONV || ly->kind == CNN_BN || ly->kind == CNN_AVGPOOL)
			g->saved_bytes += out * B;
		else if (ly->kind == CNN_MAXPOOL)
			g->saved_bytes += out * (B + 8);
	}
	for (int gi = 0; gi < g->n; gi++) {
		g->fwd_s[gi] = host_block_time(&h, g->fwd_s[gi], issue_f[gi]);
		g->bwd_s[gi] = host_block_time(&h, g->bwd_s[gi], issue_b[gi]);
	}
	free(issue_f);
	free(issue_b);
	return 0;
fail:
	op_list_finish(&l);
	free(issue_f);
	free(issue_b);
	return -1;
}

static void groups_finish(struct groups *g)
{
	free(g->fwd_s);
	free(g->bwd_s);
	free(g->fwd_flops);
	free(g->params);
}

static double sgd_time(const struct plan *pl, const struct gpu_spec *gpu, double params)
{
	const struct stack *st = plan_stack(pl);
	struct op op = { .kind = OP_MEMBOUND, .pass = PASS_FWD, .dtype = DTYPE_FP32, .batch = 1,
			 .kernels = st->cnn_optimizer_Bpp > 0 ? st->cnn_optimizer_kernels : 1 };
	snprintf(op.name, sizeof(op.name), "sgd_step");
	snprintf(op.membound_kind, sizeof(op.membound_kind), "sgd");
	op.bytes = params * (st->cnn_optimizer_Bpp > 0 ? st->cnn_optimizer_Bpp : 12);
	return cost_roofline_time(gpu, &op);
}

int build_cnn_program(const struct inputs *in, const struct plan *pl, int stage,
		      struct program *p, struct stage_result *sr)
{
	const struct model *model = inputs_model(in);
	const struct gpu_spec *gpu = &inputs_topology(in)->gpu;
	struct cnn_net net;
	struct groups g = { 0 };
	struct cnn_builder b = { .pl = pl, .p = p, .last = -1 };
	long nmb = plan_microbatches(pl);
	double gbytes = dtype_bytes(pl->training.grad_dtype);
	double params = 0, fwd_s = 0, bwd_s = 0;
	int rc = -1;

	if (cnn_build(model, &net))
		return -1;
	if (price(pl, inputs_cost(in), &net, bn_sync_s(pl, inputs_topology(in)), &g))
		goto out;
	for (int i = 0; i < g.n; i++) {
		params += g.params[i];
		fwd_s += g.fwd_s[i];
		bwd_s += g.bwd_s[i];
	}
	for (long mb = 0; mb < nmb; mb++) {
		bool last_mb = mb == nmb - 1;
		for (int i = 0; i < g.n; i++)
			compute(&b, CAT_FORWARD, g.fwd_s[i], g.fwd_flops[i], (int)mb);
		for (int i = g.n - 1; i >= 0; i--) {
			compute(&b, CAT_BACKWARD, g.bwd_s[i], 2 * g.fwd_flops[i], (int)mb);
			if (!last_mb)
				continue;
			b.pending += g.params[i] * gbytes;
			if (b.pending >= pl->communication.bucket_bytes) {
				reduce(&b, b.pending);
				b.pending = 0;
			}
		}
	}
	reduce(&b, b.pending);

	struct task opt = { .kind = TASK_COMPUTE, .stream = STREAM_COMPUTE, .cat = CAT_OPTIMIZER,
			    .time_s = sgd_time(pl, gpu, params) };
	if (pl->parallel.dp_sync == DP_SYNC_PS)
		opt.time_s = 0;     /* the parameter servers update the weights (engine.h) */
	int *deps = xmalloc((size_t)(b.ndp + 1) * sizeof(int));
	for (int i = 0; i < b.ndp; i++)
		deps[i] = b.dp_tasks[i];
	deps[b.ndp] = b.last;
	b.last = program_add(p, &opt, deps, b.ndp + 1);
	free(deps);
	p->peak_inflight = 1;

	if (sr) {
		struct mem_anatomy *m = &sr->mem;
		memset(sr, 0, sizeof(*sr));
		sr->layers = (int)model->layers;
		sr->has_embedding = sr->has_head = true;
		sr->peak_inflight_chunks = 1;
		sr->inflight = 1;
		sr->compute_fwd_s = fwd_s;
		sr->compute_bwd_s = bwd_s;
		m->params_local = params;
		/* fp32 master weights, plus a 16-bit copy under mixed precision */
		m->weights_bytes = params * (4 + (pl->training.precision == DTYPE_FP32 ? 0 :
						  dtype_bytes(pl->training.precision)));
		m->grads_bytes = params * 4;
		m->optimizer_bytes = 0;
		m->activations_bytes = g.saved_bytes;
		m->act_per_layer_bytes = sr->layers ? g.saved_bytes / sr->layers : 0;
		m->comm_buffer_bytes = pl->parallel.dp > 1 ? 2 * pl->communication.bucket_bytes : 0;
		m->reserved_bytes = gpu->mem_reserved_bytes;
		m->total_bytes = m->weights_bytes + m->grads_bytes + m->activations_bytes +
				 m->comm_buffer_bytes + m->reserved_bytes;
		m->capacity_bytes = gpu->hbm_bytes;
		m->fits = m->total_bytes <= m->capacity_bytes;
	}
	rc = 0;
out:
	groups_finish(&g);
	free(b.dp_tasks);
	cnn_net_finish(&net);
	return rc;
}

double build_cnn_hardware_flops(const struct inputs *in, const struct plan *pl)
{
	return model_iteration_flops(inputs_model(in), (double)pl->training.global_batch, (double)pl->training.seq);
}
