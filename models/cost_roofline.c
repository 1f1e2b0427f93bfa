/* cost_roofline: the analytic cost source.
 *
 *   time = max(FLOPs / (peak x eff_c x q), bytes / (bw x eff_m)) + launch
 *
 * eff_c(W) = gemm_eff_max x W / (W + gemm_half_flops) is a saturation curve
 * in the work W of one kernel: small GEMMs cannot fill the GPU. q is wave
 * quantization: a GEMM of ceil(m/tm) x ceil(n/tn) output tiles runs in
 * ceil(tiles / SMs) waves, and a partial last wave idles SMs; an output of
 * fewer tiles than SMs is split along k (split-K) when k is deep. Batched
 * GEMMs of the unfused attention core use attn_eff_max; fp8 GEMMs their own
 * gemm_max (gpu_gemm_eff_max). A fused attention kernel (OP_ATTN) runs at
 * its own efficiency over head dim and sequence (attention.h), with no
 * wave quantization and no saturation in work. eff_m(B) = mem_eff_max x
 * B / (B + mem_half_bytes) for memory-bound kernels. */
#include "cost-private.h"
#include "xalloc.h"

#include "attention.h"

#include <math.h>
#include <stdlib.h>

static double sat(double max, double w, double half)
{
	return max * w / (w + half);
}

double cost_roofline_time(const struct gpu_spec *g, const struct op *op)
{
	double mem_t = 0, comp_t = 0;

	if (op->bytes > 0)
		mem_t = op->bytes / (g->hbm_bw_Bps * sat(g->mem_eff_max, op->bytes,
							  g->mem_half_bytes));
	if (op->flops > 0) {
		double peak = g->peak_flops[op->dtype];
		if (peak <= 0)
			peak = g->peak_flops[DTYPE_FP32];
		double emax = op->batch > 1 ? g->attn_eff_max : gpu_gemm_eff_max(g, op->dtype);
		double eff = sat(emax, op->flops, g->gemm_half_flops);
		double q = 1;
		if (op->kind == OP_ATTN) {
			double fe = attention_flash_eff(g, op->pass == PASS_BWD, op->m, op->k,
							op->causal);
			eff = fe > 0 ? fe : g->attn_eff_max;
		}
		if ((op->kind == OP_GEMM || op->kind == OP_CONV) && g->sm_count > 0 &&
		    g->gemm_tile_m > 0 && g->gemm_tile_n > 0) {
			double tiles = ceil(op->m / g->gemm_tile_m) *
				       ceil(op->n / g->gemm_tile_n) * op->batch;
			/* split-K: with fewer output tiles than SMs, cuBLAS and
			 * cuDNN split a deep reduction (weight gradients: K =
			 * tokens or N P Q) over several CTAs, chunks of >= 512 */
			double split = fmin(floor((double)g->sm_count / tiles), floor(op->k / 512));
			if (split > 1)
				tiles *= split;
			double waves = ceil(tiles / (double)g->sm_count);
			q = tiles / (waves * (double)g->sm_count);
		}
		comp_t = op->flops / (peak * eff * q);
	}
	return fmax(mem_t, comp_t) + g->kernel_launch_s;
}

static double roofline_op_time(struct cost *c, const struct op *op, bool *measured)
{
	*measured = false;
	return cost_roofline_time(c->gpu, op);
}

static void roofline_destroy(struct cost *c)
{
	free(c);
}

static const struct cost_impl roofline_impl = {
	.name = "roofline",
	.description = "analytic roofline with efficiency curves",
	.op_time = roofline_op_time,
	.destroy = roofline_destroy,
};

struct cost *cost_roofline_create(const struct gpu_spec *gpu)
{
	struct cost *c = xmalloc(sizeof(*c));
	cost_base_init(c, &roofline_impl, gpu);
	return c;
}
