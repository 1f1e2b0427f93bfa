/* blocks: a transformer layer's blocks priced for one micro-batch (see
 * blocks.h). */
#include "blocks.h"

#include <string.h>

/* Split the attention block's ops of one pass for context parallelism:
 * before the core, the own (causal) block, a ring step, after the core. */
static void split_cp(struct cost *cost, const struct op_list *l, double scale, int cp, int pass,
		     struct blocks *bk)
{
	bool after = false;
	double steps = 0;
	for (int i = 0; i < l->n; i++) {
		double t = scale * cost_op_time(cost, &l->v[i]);
		if (l->v[i].kind == OP_ATTN) {
			after = true;
			if (l->v[i].causal)
				bk->cp_diag[pass] += t;
			else
				steps += t;
		} else if (after)
			bk->cp_post[pass] += t;
		else
			bk->cp_pre[pass] += t;
	}
	bk->cp_step[pass] = cp > 1 ? steps / (cp - 1) : 0;
}

/* 1 for an op of the half-layer's first (column-parallel) GEMM, 2 for
 * the last (row-parallel) one, 0 otherwise (workload.c's names: the GEMM,
 * its ".dgrad", ".wgrad" and ".fp8_cast"). */
static int gemm_role(const char *name)
{
	static const struct { const char *prefix; int role; } roles[] = {
		{ "qkv", 1 }, { "mlp_up", 1 }, { "mlp_gate_up", 1 }, { "mlp_gate", 1 },
		{ "attn_out", 2 }, { "mlp_down", 2 },
	};
	if (strstr(name, ".dequant"))  /* QLoRA: before the GEMM, not part of it */
		return 0;
	for (size_t i = 0; i < sizeof(roles) / sizeof(roles[0]); i++) {
		size_t n = strlen(roles[i].prefix);
		if (strncmp(name, roles[i].prefix, n) == 0 && (name[n] == '\0' || name[n] == '.'))
			return roles[i].role;
	}
	return 0;
}

/* Split a half-layer's ops of one pass around its first and last GEMM
 * (tp_comm_overlap). */
static void split_gemms(struct cost *cost, const struct op_list *l, double scale, int blk,
			int pass, struct blocks *bk)
{
	int seen = 0;  /* 0 before the first GEMM, 1 between, 2 after the last */
	for (int i = 0; i < l->n; i++) {
		const struct op *o = &l->v[i];
		double t = scale * cost_op_time(cost, o);
		int role = gemm_role(o->name);
		bool wgrad = strstr(o->name, ".wgrad") != NULL;
		if (role == 1) {
			seen = 1;
			if (wgrad)
				bk->wfirst[blk] += t;
			else
				bk->gfirst[pass][blk] += t;
		} else if (role == 2) {
			seen = 2;
			if (wgrad)
				bk->wlast[blk] += t;
			else
				bk->glast[pass][blk] += t;
			if (!wgrad && strstr(o->name, ".fp8_cast"))
				bk->glast_cast[pass][blk] += t;
		} else if (seen == 0)
			bk->pre[pass][blk] += t;
		else if (seen == 1)
			bk->mid[pass][blk] += t;
		else
			bk->post[pass][blk] += t;
	}
}

/* Split the MoE MLP block's ops of one pass around the experts. */
static void split_moe(struct cost *cost, const struct op_list *l, double scale, int pass,
		      struct blocks *bk)
{
	bool seen = false;
	for (int i = 0; i < l->n; i++) {
		double t = scale * cost_op_time(cost, &l->v[i]);
		int seg = workload_op_is_expert(&l->v[i]) ? 1 : seen ? 2 : 0;
		seen |= seg == 1;
		(seg == 1 ? bk->moe_mid : seg == 2 ? bk->moe_post : bk->moe_pre)[pass] += t;
		if (pass == PASS_BWD && strstr(l->v[i].name, ".wgrad"))
			bk->moe_wgrad[seg] += t;
	}
}

/* The time of ops l on the GPU as the host issues them (host.h), and
 * in *scale its ratio to their GPU time (every op's share of a host-bound
 * block stretches alike); the GPU's wait for the host into *wait. */
static double list_time(struct cost *cost, const struct host_issue *h, const struct op_list *l,
			double *scale, double *wait)
{
	double gpu = cost_list_time(cost, l);
	double t = host_block_time(h, gpu, host_issue_time(h, cost, l));
	*scale = gpu > 0 ? t / gpu : 1;
	*wait += t - gpu;
	return t;
}

/* Price block b of pass pass into bk (splits as the plan needs them). */
static int price_block(const struct plan *pl, const struct model *m, struct cost *cost,
		       const struct host_issue *h, const struct wl_shape *shp, int b,
		       enum op_pass pass, struct blocks *bk)
{
	struct op_list l;
	double scale;
	op_list_init(&l);
	if (workload_block(m, shp, b, pass, RECOMPUTE_NONE, &l)) {
		op_list_finish(&l);
		return -1;
	}
	if (pass == PASS_FWD) {
		bk->fwd[b] = list_time(cost, h, &l, &scale, &bk->host_wait_fwd[b]);
		bk->flops_fwd[b] = op_list_flops(&l);
	} else {
		bk->bwd[b] = list_time(cost, h, &l, &scale, &bk->host_wait_bwd[b]);
		bk->flops_bwd[b] = op_list_flops(&l);
		for (int i = 0; i < l.n; i++)
			if (strstr(l.v[i].name, ".wgrad")) {
				bk->wgrad[b] += scale * cost_op_time(cost, &l.v[i]);
				bk->flops_wgrad[b] += l.v[i].flops;
			}
	}
	if (b == WL_ATTN && pl->parallel.cp > 1)
		split_cp(cost, &l, scale, pl->parallel.cp, pass, bk);
	if (b == WL_ATTN || b == WL_MLP)
		split_gemms(cost, &l, scale, b, pass, bk);
	if (b == WL_MLP && model_is_moe(m) && !shp->dense_layer)
		split_moe(cost, &l, scale, pass, bk);
	op_list_finish(&l);
	return 0;
}

/* The blocks of a layer, an MoE model's dense first layer where dense. */
static int price_layer(const struct plan *pl, const struct model *m, struct cost *cost,
		       bool dense, bool sliding, struct blocks *bk)
{
	struct wl_shape shp = plan_wl_shape(pl);
	struct host_issue h = plan_host_issue(pl);
	struct op_list l;
	double scale, wait = 0;

	shp.dense_layer = dense;
	shp.sliding = sliding;
	memset(bk, 0, sizeof(*bk));
	for (int b = 0; b < WL_NBLOCKS; b++)
		if (price_block(pl, m, cost, &h, &shp, b, PASS_FWD, bk) ||
		    price_block(pl, m, cost, &h, &shp, b, PASS_BWD, bk))
			return -1;
	/* the selective-recompute extra: attention backward with minus
	 * without, and (recompute_modules with layernorm or moe_act) the MLP
	 * block's likewise; the whole extra runs with the attention half */
	op_list_init(&l);
	if (workload_block(m, &shp, WL_ATTN, PASS_BWD, RECOMPUTE_SELECTIVE, &l))
		goto fail;
	double with = list_time(cost, &h, &l, &scale, &wait);
	bk->recompute_sel = with - bk->bwd[WL_ATTN];
	bk->flops_core = op_list_flops(&l);
	op_list_finish(&l);
	op_list_init(&l);
	workload_block(m, &shp, WL_ATTN, PASS_BWD, RECOMPUTE_NONE, &l);
	bk->flops_core -= op_list_flops(&l);
	op_list_finish(&l);
	if (rc_modules(shp.rc_modules) & (RC_MOD_LAYERNORM | RC_MOD_MOE_ACT)) {
		op_list_init(&l);
		if (workload_block(m, &shp, WL_MLP, PASS_BWD, RECOMPUTE_SELECTIVE, &l))
			goto fail;
		bk->recompute_sel += list_time(cost, &h, &l, &scale, &wait) - bk->bwd[WL_MLP];
		op_list_finish(&l);
	}
	/* the per-op selective policy's recomputed forward ops of the layer */
	struct op_list r;
	int gemms = 0;
	op_list_init(&r);
	for (int b = WL_ATTN; b <= WL_MLP; b++) {
		op_list_init(&l);
		if (workload_block(m, &shp, b, PASS_FWD, RECOMPUTE_NONE, &l)) {
			op_list_finish(&r);
			goto fail;
		}
		workload_sac_op_recomputed(&l, &gemms, &r);
		op_list_finish(&l);
	}
	bk->recompute_op = r.n ? list_time(cost, &h, &r, &scale, &wait) : 0;
	op_list_finish(&r);
	return 0;
fail:
	op_list_finish(&l);
	return -1;
}


int blocks_price(const struct plan *pl, const struct model *m, struct cost *cost,
		 struct blocks *bk)
{
	return price_layer(pl, m, cost, false, false, bk);
}

int blocks_price_dense(const struct plan *pl, const struct model *m, struct cost *cost,
		       struct blocks *bk)
{
	return price_layer(pl, m, cost, true, false, bk);
}

int blocks_price_kind(const struct plan *pl, const struct model *m, struct cost *cost, bool dense,
		      bool sliding, struct blocks *bk)
{
	return price_layer(pl, m, cost, dense, sliding, bk);
}
