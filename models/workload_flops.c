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

/* The layer counts and shapes the whole-model count works with: s every
 * layer's shape on one rank, d a dense layer's of an MoE model, L the
 * layers with the MTP modules', Ld the dense ones (0 unless MoE). */
struct flops_shapes {
	struct wl_shape s, d;
	double L, Ld;
};

/* Forward and backward of every block, once per micro-batch, into *per_mb; -1 on error. */
static int add_passes(const struct model *m, const struct flops_shapes *fs, double *per_mb)
{
	double f, g;

	for (int b = 0; b < WL_NBLOCKS; b++) {
		double n = (b == WL_ATTN || b == WL_MLP) ? fs->L : 1;
		for (int p = PASS_FWD; p <= PASS_BWD; p++) {
			if ((f = block_flops(m, &fs->s, b, p, RECOMPUTE_NONE)) < 0)
				return -1;
			*per_mb += n * f;
			if (b != WL_MLP || fs->Ld <= 0)
				continue;
			if ((g = block_flops(m, &fs->d, b, p, RECOMPUTE_NONE)) < 0)
				return -1;
			*per_mb += fs->Ld * (g - f);
		}
	}
	return 0;
}

/* Full recompute: each recomputed layer's forward again, into *per_mb; -1 on error. */
static int add_full(const struct model *m, const struct flops_shapes *fs, double rc_layers,
		    double rc_dense_layers, double *per_mb)
{
	double a = block_flops(m, &fs->s, WL_ATTN, PASS_FWD, RECOMPUTE_NONE);
	double b = block_flops(m, &fs->s, WL_MLP, PASS_FWD, RECOMPUTE_NONE);
	double g = fs->Ld > 0 ? block_flops(m, &fs->d, WL_MLP, PASS_FWD, RECOMPUTE_NONE) : 0;

	if (a < 0 || b < 0 || g < 0)
		return -1;
	*per_mb += rc_layers * (a + b) + rc_dense_layers * (g - b);
	return 0;
}

/* Per-op selective recompute: the ops the policy runs again, into *per_mb; -1 on error. */
static int add_selective_op(const struct model *m, const struct flops_shapes *fs, double *per_mb)
{
	double r = sac_op_flops(m, &fs->s), rd = fs->Ld > 0 ? sac_op_flops(m, &fs->d) : 0;

	if (r < 0 || rd < 0)
		return -1;
	*per_mb += fs->L * r + fs->Ld * (rd - r);
	return 0;
}

/* Selective recompute: the attention core again, and the MLP block's recomputed
 * forward ops (layer norm, MoE activation) when chosen, into *per_mb; -1 on error. */
static int add_selective(const struct model *m, const struct flops_shapes *fs, double *per_mb)
{
	const struct wl_shape *s = &fs->s, *d = &fs->d;
	double L = fs->L, Ld = fs->Ld;
	double with = block_flops(m, s, WL_ATTN, PASS_BWD, RECOMPUTE_SELECTIVE);
	double without = block_flops(m, s, WL_ATTN, PASS_BWD, RECOMPUTE_NONE);

	if (with < 0 || without < 0)
		return -1;
	*per_mb += L * (with - without);
	if (!(rc_modules(s->rc_modules) & (RC_MOD_LAYERNORM | RC_MOD_MOE_ACT)))
		return 0;
	/* the MLP block's recomputed forward ops, dense layers apart */
	double mw = block_flops(m, s, WL_MLP, PASS_BWD, RECOMPUTE_SELECTIVE);
	double mo = block_flops(m, s, WL_MLP, PASS_BWD, RECOMPUTE_NONE);
	double dw = Ld > 0 ? block_flops(m, d, WL_MLP, PASS_BWD, RECOMPUTE_SELECTIVE) : 0;
	double dn = Ld > 0 ? block_flops(m, d, WL_MLP, PASS_BWD, RECOMPUTE_NONE) : 0;
	if (mw < 0 || mo < 0 || dw < 0 || dn < 0)
		return -1;
	*per_mb += L * (mw - mo) + Ld * ((dw - dn) - (mw - mo));
	return 0;
}

double workload_iteration_flops_layers(const struct model *m, const struct wl_shape *shp,
				       enum recompute rc, double samples, double rc_layers,
				       double rc_dense_layers)
{
	struct flops_shapes fs = { .s = *shp };
	fs.s.tp = 1;  /* the whole model */
	fs.s.sp = false;
	fs.s.cp = 1;
	fs.s.ep = 1;  /* every expert on one rank: the kept copies, no busiest-rank pace */
	fs.s.etp = 0;
	fs.s.dense_layer = false;
	fs.d = fs.s;
	fs.d.dense_layer = true;
	/* an MoE model's first_dense_layers: dense MLP blocks of ffn_size;
	 * the MTP modules' blocks as the last layer (model.h) */
	fs.L = (double)(m->layers + m->mtp_depth);
	fs.Ld = model_is_moe(m) ? (double)(m->layers - model_moe_layers(m)) : 0;
	double per_mb = 0;
	int err = add_passes(m, &fs, &per_mb);

	if (!err && rc == RECOMPUTE_FULL)
		err = add_full(m, &fs, rc_layers, rc_dense_layers, &per_mb);
	else if (!err && rc == RECOMPUTE_SELECTIVE_OP)
		err = add_selective_op(m, &fs, &per_mb);
	else if (!err && rc == RECOMPUTE_SELECTIVE)
		err = add_selective(m, &fs, &per_mb);
	return err ? -1 : per_mb * samples / fs.s.micro_batch;
}
