/* workload_flops: the FLOPs an iteration executes (workload.h
 * workload_iteration_flops), summed from the op lists workload_block()
 * builds for each block and pass, with what each recompute policy runs
 * again, so that the count and the priced kernels cannot drift apart. */
#include "workload.h"

static double block_flops(const struct model *m, const struct wl_shape *s,
			  enum wl_block blk, enum op_pass pass, enum recompute rc)
{
	struct op_list l;
	op_list_init(&l);
	int err = workload_block(m, s, blk, pass, rc, &l);
	double f = err ? -1 : op_list_flops(&l);
	op_list_finish(&l);
	return f;
}

/* FLOPs the per-op selective policy runs again for one layer
 * (workload_sac_op_recomputed over the attention, then the MLP block). */
static double sac_op_flops(const struct model *m, const struct wl_shape *s)
{
	struct op_list l, r;
	int gemms = 0, err = 0;
	op_list_init(&r);
	for (int b = WL_ATTN; b <= WL_MLP && !err; b++) {
		op_list_init(&l);
		err = workload_block(m, s, (enum wl_block)b, PASS_FWD, RECOMPUTE_NONE, &l);
		if (!err)
			workload_sac_op_recomputed(&l, &gemms, &r);
		op_list_finish(&l);
	}
	double f = err ? -1 : op_list_flops(&r);
	op_list_finish(&r);
	return f;
}

double workload_iteration_flops(const struct model *m, const struct wl_shape *shp,
				enum recompute rc, double samples)
{
	double Ld = model_is_moe(m) ? (double)(m->layers - model_moe_layers(m)) : 0;
	return workload_iteration_flops_layers(m, shp, rc, samples, (double)(m->layers + m->mtp_depth), Ld);
}

double workload_iteration_flops_layers(const struct model *m, const struct wl_shape *shp,
				       enum recompute rc, double samples, double rc_layers,
				       double rc_dense_layers)
{
	struct wl_shape s = *shp, d;
	s.tp = 1;  /* the whole model */
	s.sp = false;
	s.cp = 1;
	s.ep = 1;  /* every expert on one rank: the kept copies, no busiest-rank pace */
	s.etp = 0;
	s.dense_layer = false;
	d = s;
	d.dense_layer = true;
	/* an MoE model's first_dense_layers: dense MLP blocks of ffn_size;
	 * the MTP modules' blocks as the last layer (model.h) */
	double L = (double)(m->layers + m->mtp_depth), Ld = (double)(m->layers - model_moe_layers(m));
	double per_mb = 0, f, g;

	if (!model_is_moe(m))
		Ld = 0;
	for (int b = 0; b < WL_NBLOCKS; b++) {
		double n = (b == WL_ATTN || b == WL_MLP) ? L : 1;
		for (int p = PASS_FWD; p <= PASS_BWD; p++) {
			if ((f = block_flops(m, &s, b, p, RECOMPUTE_NONE)) < 0)
				return -1;
			per_mb += n * f;
			if (b != WL_MLP || Ld <= 0)
				continue;
			if ((g = block_flops(m, &d, b, p, RECOMPUTE_NONE)) < 0)
				return -1;
			per_mb += Ld * (g - f);
		}
	}
	if (rc == RECOMPUTE_FULL) {
		double a = block_flops(m, &s, WL_ATTN, PASS_FWD, RECOMPUTE_NONE);
		double b = block_flops(m, &s, WL_MLP, PASS_FWD, RECOMPUTE_NONE);
		g = Ld > 0 ? block_flops(m, &d, WL_MLP, PASS_FWD, RECOMPUTE_NONE) : 0;
		if (a < 0 || b < 0 || g < 0)
			return -1;
		per_mb += rc_layers * (a + b) + rc_dense_layers * (g - b);
	} else if (rc == RECOMPUTE_SELECTIVE_OP) {
		double r = sac_op_flops(m, &s), rd = Ld > 0 ? sac_op_flops(m, &d) : 0;
		if (r < 0 || rd < 0)
			return -1;
		per_mb += L * r + Ld * (rd - r);
	} else if (rc == RECOMPUTE_SELECTIVE) {
		double with = block_flops(m, &s, WL_ATTN, PASS_BWD, RECOMPUTE_SELECTIVE);
		double without = block_flops(m, &s, WL_ATTN, PASS_BWD, RECOMPUTE_NONE);
		if (with < 0 || without < 0)
			return -1;
		per_mb += L * (with - without);
		if (rc_modules(s.rc_modules) & (RC_MOD_LAYERNORM | RC_MOD_MOE_ACT)) {
			/* the MLP block's recomputed forward ops, dense layers apart */
			double mw = block_flops(m, &s, WL_MLP, PASS_BWD, RECOMPUTE_SELECTIVE);
			double mo = block_flops(m, &s, WL_MLP, PASS_BWD, RECOMPUTE_NONE);
			double dw = Ld > 0 ? block_flops(m, &d, WL_MLP, PASS_BWD, RECOMPUTE_SELECTIVE) : 0;
			double dn = Ld > 0 ? block_flops(m, &d, WL_MLP, PASS_BWD, RECOMPUTE_NONE) : 0;
			if (mw < 0 || mo < 0 || dw < 0 || dn < 0)
				return -1;
			per_mb += L * (mw - mo) + Ld * ((dw - dn) - (mw - mo));
		}
	}
	return per_mb * samples / s.micro_batch;
}
