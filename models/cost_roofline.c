/* cost_roofline: the analytic cost source.
 *
 *   time = max(compute, memory) + launch
 *
 * GEMMs (and convolutions as implicit GEMMs) run in waves of output
 * tiles: a kernel of ceil(m/tm) x ceil(n/tn) x batch tiles of tm x tn
 * (gpu.h gemm_tile) occupies the SMs in ceil(tiles / SMs) waves, each as
 * long as one tile's 2 tm tn k FLOPs at an SM's share of the peak times
 * gemm_max:
 *
 *   compute = waves x 2 tm tn k' / (peak x gemm_max x clock / SMs)
 *
 * A partial last wave idles SMs and a tile padded past m or n computes
 * zeros, which is how small and odd-shaped GEMMs lose efficiency (NVIDIA,
 * "Matrix Multiplication Background User's Guide", sections on tile and
 * wave quantization); there is no second saturation curve in the work.
 * With fewer output tiles than SMs, cuBLAS and cuDNN split a deep
 * reduction (weight gradients: k = tokens or N P Q) over several CTAs,
 * chunks of at least 512: the tiles multiply and k' = k / split. A
 * batched GEMM is priced by the same rule per matrix (its tiles add up).
 * gemm_max is what the best-shaped large GEMM reaches in a micro-benchmark
 * (mamf-finder); fp8 GEMMs have their own (gpu_gemm_eff_max), and so do
 * GEMMs of a stack that ran an older library the GPU preset measured
 * (op->lib, gpu_gemm_eff_max_lib: cuBLAS 11 on Hopper).
 *
 * On a GPU whose GEMM kernels are not persistent (gpu.h
 * gemm_epilogue_serial: A100 and older), each CTA stores its output tile
 * after its mainloop, so a GEMM costs
 *
 *   time = max(compute, input bytes) + output bytes + launch
 *
 * (bytes at mem_max of HBM); Hopper's and Blackwell's persistent kernels
 * overlap the store with the next tile's mainloop: max(compute, bytes).
 * The compute side then runs at the preset's mainloop ceiling (gpu.h
 * gemm_mainloop_max: gemm_max's micro-benchmark less its own write).
 *
 * A fused attention kernel (OP_ATTN) runs at its backend's efficiency
 * over head dim and sequence, times the tail of its grid of CTAs
 * (attention.h, attention_grid_factor); FlashAttention-3's backward, on a
 * GPU that measured FA3's main kernel, adds its preprocess and postprocess
 * kernels, memory-bound, after it (attention_fa3_bwd_aux_bytes); dropout
 * inside the kernel lengthens it by its backend's measured ratio
 * (attention_dropout_ratio). Compute-bound
 * kernels (GEMM, convolution, attention) run at the clock a training step
 * sustains: clock = gpu sustained_clock_ratio in situ, 1 for an isolated
 * kernel (cost_roofline_time_isolated, what a micro-benchmark measures);
 * flash attention, whose efficiencies come from burst benchmarks, also
 * at gpu flash_sustained_ratio in situ. A board power limit below the TDP
 * (gpu power_cap_W) scales that clock, in situ and isolated, by its
 * measured clock ratio (gpu.h gpu_power_cap_clock_ratio); memory-bound
 * kernels keep theirs.
 *
 * A memory-bound kernel moves its HBM bytes at mem_max of the bandwidth,
 * the fraction a streaming kernel reaches. A row-wise kernel (norms,
 * softmax, the loss: op->row > 0) reduces a row before it writes and may
 * read the row more than once: its re-reads come from the L2 while the
 * resident rows fit and from HBM when they do not (rowwise.h), so its
 * bytes, not its efficiency, differ from a copy's. A GPU preset may still
 * give a measured mem_rowwise_max for row-wise kernels (then used over
 * the same bytes). Every kernel pays the fixed kernel_launch; an
 * op that stands for several kernels (an eager piece, stack.h) pays it
 * for each, one fused into the kernel before it (op->kernels < 0) none. */
#include "cost-private.h"
#include "xalloc.h"

#include "attention.h"
#include "rowwise.h"

#include <math.h>
#include <stdlib.h>

/* Seconds of the compute side of a GEMM-like op at clock ratio clk: its
 * FLOPs over the fraction q of the SMs' tile time doing useful work. */
static double gemm_compute_time(const struct gpu_spec *g, const struct op *op, double peak,
				double emax, double clk)
{
	double t = op->flops / (peak * emax * clk);
	double batch = fmax(op->batch, 1);
	if (g->sm_count <= 0 || g->gemm_tile_m <= 0 || g->gemm_tile_n <= 0 ||
	    op->m <= 0 || op->n <= 0 || op->k <= 0)
		return t;
	double sms = (double)g->sm_count;
	double tiles = ceil(op->m / g->gemm_tile_m) * ceil(op->n / g->gemm_tile_n) * batch;
	double kk = op->k;
	double split = fmin(floor(sms / tiles), floor(op->k / 512));
	if (split > 1) {
		tiles *= split;
		kk = op->k / split;
	}
	double waves = ceil(tiles / sms);
	/* useful work over what the waves of padded tiles occupy (a
	 * convolution's implicit GEMM keeps its own FLOP count) */
	double q = batch * op->m * op->n * op->k /
		   (waves * sms * g->gemm_tile_m * g->gemm_tile_n * kk);
	return t / fmin(q, 1);
}

/* True when op is a GEMM whose output store follows the mainloop on this
 * GPU (gpu.h gemm_epilogue_serial: one tile per CTA, as CUTLASS 2.x's
 * kernel/gemm.h runs mma() then epilogue()): its inputs stream during the
 * mainloop, overlapped with the MMAs by the multistage cp.async pipeline,
 * and its output write comes after. Convolutions (cuDNN's implicit GEMM)
 * are not covered: no source read says the same of them. */
static bool gemm_epilogue_serial(const struct gpu_spec *g, const struct op *op)
{
	return g->gemm_epilogue_serial && op->kind == OP_GEMM && op->out_bytes > 0 &&
	       op->bytes >= op->out_bytes && op->row <= 0;
}

/* Seconds of FlashAttention-3 backward's preprocess and postprocess
 * kernels (attention.h attention_fa3_bwd_aux_bytes): memory-bound, at
 * mem_max of the bandwidth, one launch each, serial with the main kernel. */
static double fa3_bwd_aux_time(const struct gpu_spec *g, const struct op *op)
{
	double b = attention_fa3_bwd_aux_bytes(op->batch, op->m, op->k, dtype_bytes(op->dtype));
	if (b <= 0 || g->hbm_bw_Bps <= 0 || g->mem_eff_max <= 0)
		return 0;
	return b / (g->hbm_bw_Bps * g->mem_eff_max) + 2 * g->kernel_launch_s;
}

bool cost_fa3_bwd_split(const struct gpu_spec *g, const struct op *op)
{
	return op->kind == OP_ATTN && op->pass == PASS_BWD &&
	       op->backend[g->compute_capability >= 9] == ATTN_BE_FA3 &&
	       g->flash_be_bwd[ATTN_BE_FA3] > 0 && g->flash_be_bwd_half[ATTN_BE_FA3] > 0;
}

/* clk: the compute clock's ratio in situ (1: isolated); fclk: flash
 * attention's on top of it. */
static double roofline(const struct gpu_spec *g, const struct op *op, double clk, double fclk)
{
	double mem_t = 0, comp_t = 0, aux_t = 0;

	if (op->bytes > 0) {
		double eff = op->row > 0 && g->mem_rowwise_max > 0 ? g->mem_rowwise_max
								   : g->mem_eff_max;
		mem_t = rowwise_hbm_bytes(g, op) / (g->hbm_bw_Bps * eff);
	}
	if (op->flops > 0) {
		double peak = g->peak_flops[op->dtype];
		if (peak <= 0)
			peak = g->peak_flops[DTYPE_FP32];
		double emax = gpu_gemm_eff_max_lib(g, op->dtype, op->lib);
		if (op->kind == OP_ATTN) {
			enum attn_backend be = op->backend[g->compute_capability >= 9];
			double s = op->window > 0 ? attention_window_seq(op->m, op->window) : op->m;
			double fe = attention_flash_eff(g, be, op->pass == PASS_BWD, s, op->k, op->causal);
			comp_t = op->flops / (peak * (fe > 0 ? fe : emax) * clk * fclk) *
				 attention_grid_factor(g->sm_count, op->causal, op->batch,
						       op->pass == PASS_BWD ? op->n : op->m);
			if (op->dropout)
				comp_t *= attention_dropout_ratio(be, g->compute_capability,
								  op->pass == PASS_BWD);
			if (cost_fa3_bwd_split(g, op))
				aux_t = fa3_bwd_aux_time(g, op);
		} else if (op->kind == OP_GEMM || op->kind == OP_CONV) {
			if (gemm_epilogue_serial(g, op))
				emax = gpu_gemm_mainloop_max(g, op->dtype, op->lib);
			comp_t = gemm_compute_time(g, op, peak, emax, clk);
		} else {
			comp_t = op->flops / (peak * emax);
		}
	}
	/* an eager piece is several kernels, each with its own latency */
	double t = fmax(mem_t, comp_t);
	if (gemm_epilogue_serial(g, op)) {
		double out_t = mem_t * op->out_bytes / op->bytes;
		t = fmax(mem_t - out_t, comp_t) + out_t;
	}
	return t + g->kernel_launch_s * op_launches(op) + aux_t;
}

double cost_roofline_time(const struct gpu_spec *g, const struct op *op)
{
	double clk = g->sustained_clock_ratio > 0 ? g->sustained_clock_ratio : 1;
	double fclk = g->flash_sustained_ratio > 0 ? g->flash_sustained_ratio : 1;
	return roofline(g, op, clk * gpu_power_cap_clock_ratio(g), fclk);
}

double cost_roofline_time_isolated(const struct gpu_spec *g, const struct op *op)
{
	return roofline(g, op, gpu_power_cap_clock_ratio(g), 1);
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
	.description = "analytic roofline: GEMMs in waves of tiles, memory-bound kernels by class",
	.op_time = roofline_op_time,
	.destroy = roofline_destroy,
};

struct cost *cost_roofline_create(const struct gpu_spec *gpu)
{
	struct cost *c = xmalloc(sizeof(*c));
	cost_base_init(c, &roofline_impl, gpu);
	return c;
}
