/* test-overlap: what a collective's SMs cost the compute beside it
 * (sim/simulate_overlap.c, the table the engine's interference reads:
 * engine/engine.h).
 *
 * The compute-bound kernels are priced by the roofline at SMs - C SMs,
 * each SM keeping its share of the peak: a GEMM of exactly one wave of
 * tiles needs two waves when C SMs run a collective's CTAs and takes
 * twice as long (the tail effect of a 132-CTA GEMM beside a 24-CTA
 * all-gather on an H100), one of many waves about SMs / (SMs - C). This
 * suite includes simulate's private header. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cost.h"
#include "diag.h"
#include "op.h"
#include "scenario.h"
#include "simulate-private.h"
#include "testutil.h"

/* The roofline of g at SMs - c SMs, each with its share of the peak. */
static double at_fewer_sms(const struct gpu_spec *g, const struct op *op, int c)
{
	struct gpu_spec f = *g;
	f.sm_count = g->sm_count - c;
	for (int d = 0; d < DTYPE_N; d++)
		f.peak_flops[d] = g->peak_flops[d] * f.sm_count / g->sm_count;
	return cost_roofline_time(&f, op);
}

static struct scenario *load(const char *path)
{
	struct diag d;
	diag_init(&d, stderr);
	struct scenario *sc = scenario_load(src_path(path), &d);
	cr_assert(sc, "%s", diag_text(&d));
	diag_finish(&d);
	return sc;
}

/* 11 x 12 tiles of 128 x 256 = 132, one full wave of an H100; beside 24
 * CTAs, two waves of 108: twice the compute (the kernel latency aside). A
 * GEMM of 40 waves loses 40 -> ceil(5280 / 108) = 49 waves: 49 / 40. */
Test(overlap, a_gemm_of_one_wave_takes_two_beside_a_collective)
{
	struct scenario *sc = load("scenarios/whatif/llama3-8b-h100-fattree-degraded.json");
	const struct gpu_spec *g = &inputs_topology(sc->in)->gpu;
	cr_assert_eq(g->sm_count, 132);
	cr_assert_eq(g->gemm_tile_m, 128);
	cr_assert_eq(g->gemm_tile_n, 256);
	const double m[2] = { 128 * 11, 128 * 11 * 40 };
	const double want[2] = { 2, 49.0 / 40 };
	for (int i = 0; i < 2; i++) {
		struct op op = { .kind = OP_GEMM, .dtype = DTYPE_BF16, .m = m[i], .n = 256 * 12,
				 .k = 8192, .batch = 1 };
		op.flops = 2 * op.m * op.n * op.k;
		op.bytes = 2 * (op.m * op.k + op.k * op.n + op.m * op.n);
		double lat = g->kernel_launch_s;
		double t0 = cost_roofline_time(g, &op) - lat, t24 = at_fewer_sms(g, &op, 24) - lat;
		cr_assert_float_eq(t24 / t0, want[i], 1e-12, "%d: %.15g", i, t24 / t0);
	}
	scenario_destroy(sc);
}

/* The table of a whole layer: the shares add up to one with no SM taken,
 * losing one more SM never speeds the work up, on Llama 3 8B's
 * many-wave GEMMs 16 SMs cost about their fluid share, 132 / 116, and
 * the waves make it differ from the fluid share by more than 1 % at some
 * SM counts (a fluid table would not). */
Test(overlap, the_layer_table_adds_up_and_grows_with_the_sms_taken)
{
	struct scenario *sc = load("scenarios/whatif/llama3-8b-h100-fattree-degraded.json");
	double mb, *w;
	simulate_overlap_price(sc->in, &sc->plan, &mb, &w);
	cr_assert_not_null(w);
	int S = inputs_topology(sc->in)->gpu.sm_count;
	cr_assert_gt(mb, 0);
	cr_assert_float_eq(w[0] + mb, 1, 1e-12);
	double off = 0;
	for (int c = 1; c < S; c++) {
		cr_assert_geq(w[c], w[c - 1] * (1 - 1e-12), "C %d: %g < %g", c, w[c], w[c - 1]);
		off = fmax(off, fabs(w[c] / w[0] / ((double)S / (S - c)) - 1));
	}
	double ratio = w[16] / w[0], fluid = 132.0 / 116;
	cr_assert(ratio > 0.95 * fluid && ratio < 1.1 * fluid, "%g against %g", ratio, fluid);
	cr_assert_gt(off, 0.01, "the table is the fluid share to %g", off);
	free(w);
	scenario_destroy(sc);
}
