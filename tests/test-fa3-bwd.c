/* test-fa3-bwd: FlashAttention-3's backward as ddlsim prices it on Hopper:
 * its preprocess and postprocess kernels (attention.h
 * attention_fa3_bwd_aux_bytes, bytes from the FA3 source) and its main
 * kernel's own length curve (attention_backends.fa3.bwd_max and
 * bwd_seq_half of the Hopper presets), which come from the non-causal
 * tritonbench rows of validation/kernels/attention.csv and are checked
 * against the causal rows they were not derived from. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "cost.h"
#include "testutil.h"
#include "topology.h"
#include "workload.h"

/* The FA3 backward op of (bh heads, s, d = 128) bf16 on backend be. */
static struct op bwd_op(enum attn_backend be, double bh, double s, bool causal)
{
	struct op op = { .kind = OP_ATTN, .pass = PASS_BWD, .dtype = DTYPE_BF16, .batch = bh,
			 .m = s, .n = s, .k = 128, .causal = causal, .backend = { be, be } };
	op.flops = attention_flops(ATTN_FLASH, causal, true, bh, s, 128);
	return op;
}

/* The bytes are the source's: preprocess reads O and dO (2 s d B), reads
 * the LSE and writes dPsum and LSE_log2 (12 s), zeroes the fp32 dQaccum
 * (4 s d); postprocess reads dQaccum (4 s d) and writes dQ (B s d). */
Test(fa3_bwd, pre_and_post_kernel_bytes_are_the_sources)
{
	double bh = 192, s = 1024, d = 128, B = 2;
	double pre = 2 * s * d * B + 12 * s + 4 * s * d;
	double post = 4 * s * d + B * s * d;
	cr_expect_float_eq(attention_fa3_bwd_aux_bytes(bh, s, d, B), bh * (pre + post), 1e-3);
	/* 192 x 1024 x (512 + 12 + 512 + 512 + 256) x ... = 354.7 MB */
	cr_expect_float_eq(attention_fa3_bwd_aux_bytes(bh, s, d, B), 354680832.0, 1e-3);
	cr_expect_eq(attention_fa3_bwd_aux_bytes(0, s, d, B), 0);
}

/* FA3's backward costs its main kernel plus the two memory-bound kernels
 * at mem_max, one launch each; cuDNN's backward and FA3's forward do not
 * pay them. */
Test(fa3_bwd, pre_and_post_kernels_are_priced_after_the_main_kernel)
{
	struct topology *t = load_topology("topologies/dgx-h100-fattree2-2to1.json");
	const struct gpu_spec *g = &t->gpu;
	double bh = 192, s = 1024;
	struct op op = bwd_op(ATTN_BE_FA3, bh, s, false);
	double e = attention_flash_eff(g, ATTN_BE_FA3, true, s, 128, false);
	double main_t = op.flops / (g->peak_flops[DTYPE_BF16] * e) *
			attention_grid_factor(g->sm_count, false, bh, s);
	double aux = attention_fa3_bwd_aux_bytes(bh, s, 128, 2) / (g->hbm_bw_Bps * g->mem_eff_max) +
		     2 * g->kernel_launch_s;
	double got = cost_roofline_time_isolated(g, &op);
	cr_expect_float_eq(got, main_t + g->kernel_launch_s + aux, 1e-9 * got);
	/* 354.7 MB at 0.77 of 3.35 TB/s + 8 us = 145.5 us */
	cr_expect(fabs(aux - 145.5e-6) < 0.1e-6, "aux %.2f us", aux * 1e6);

	/* no pre/post for another backend (cudnn: same figures otherwise) */
	struct op cu = bwd_op(ATTN_BE_CUDNN, bh, s, false);
	double ecu = attention_flash_eff(g, ATTN_BE_CUDNN, true, s, 128, false);
	double want = cu.flops / (g->peak_flops[DTYPE_BF16] * ecu) *
		      attention_grid_factor(g->sm_count, false, bh, s) + g->kernel_launch_s;
	cr_expect_float_eq(cost_roofline_time_isolated(g, &cu), want, 1e-9 * want);
	/* nor FA3's forward */
	struct op fw = op;
	fw.pass = PASS_FWD;
	fw.flops = attention_flops(ATTN_FLASH, false, false, bh, s, 128);
	double ef = attention_flash_eff(g, ATTN_BE_FA3, false, s, 128, false);
	want = fw.flops / (g->peak_flops[DTYPE_BF16] * ef) *
	       attention_grid_factor(g->sm_count, false, bh, s) + g->kernel_launch_s;
	cr_expect_float_eq(cost_roofline_time_isolated(g, &fw), want, 1e-9 * want);
	topology_destroy(t);
}

/* A GPU that gives no FA3 figures (Blackwell: cuDNN only) prices an FA3
 * backward as its best flash kernel (attention.h), a measured whole: no
 * pre/post kernels on top. */
Test(fa3_bwd, no_pre_and_post_kernels_where_the_gpu_has_no_fa3_figures)
{
	struct topology *t = load_topology("topologies/dgx-b200.json");
	const struct gpu_spec *g = &t->gpu;
	cr_assert_eq(g->flash_be_bwd[ATTN_BE_FA3], 0);
	double bh = 192, s = 1024;
	struct op op = bwd_op(ATTN_BE_FA3, bh, s, false);
	double e = attention_flash_eff(g, ATTN_BE_FA3, true, s, 128, false);
	cr_expect_float_eq(e, attention_flash_eff(g, ATTN_BE_BEST, true, s, 128, false), 1e-12);
	double want = op.flops / (g->peak_flops[DTYPE_BF16] * e) *
		      attention_grid_factor(g->sm_count, false, bh, s) + g->kernel_launch_s;
	cr_expect_float_eq(cost_roofline_time_isolated(g, &op), want, 1e-9 * want);
	topology_destroy(t);
}

/* A GPU file whose fa3 entry gives no bwd_seq_half (written before the
 * main kernel was priced apart, 2026-12-07) measured the whole backward
 * in bwd_max: no pre/post kernels on top of it. */
Test(fa3_bwd, no_pre_and_post_kernels_where_bwd_max_is_the_whole_backward)
{
	struct topology *t = load_topology("topologies/dgx-h100-fattree2-2to1.json");
	struct gpu_spec g = t->gpu;
	cr_assert_gt(g.flash_be_bwd[ATTN_BE_FA3], 0);
	cr_assert_gt(g.flash_be_bwd_half[ATTN_BE_FA3], 0);
	g.flash_be_bwd_half[ATTN_BE_FA3] = 0;
	double bh = 192, s = 1024;
	struct op op = bwd_op(ATTN_BE_FA3, bh, s, false);
	double e = attention_flash_eff(&g, ATTN_BE_FA3, true, s, 128, false);
	double want = op.flops / (g.peak_flops[DTYPE_BF16] * e) *
		      attention_grid_factor(g.sm_count, false, bh, s) + g.kernel_launch_s;
	cr_expect_float_eq(cost_roofline_time_isolated(&g, &op), want, 1e-9 * want);
	topology_destroy(t);
}

/* A backend's backward takes its own half-length where the preset gives
 * one; its forward, and the other backends, keep flash_seq_half. */
Test(fa3_bwd, backward_takes_the_backends_own_half_length)
{
	struct gpu_spec g = { .flash_fwd_max = 0.6, .flash_bwd_max = 0.5 };
	g.flash_be_fwd[ATTN_BE_FA3] = 0.646;
	g.flash_be_bwd[ATTN_BE_FA3] = 0.638;
	g.flash_be_bwd_half[ATTN_BE_FA3] = 647;
	cr_expect_float_eq(attention_flash_eff(&g, ATTN_BE_FA3, true, 4096, 128, false),
			   0.638 * 4096 / (4096 + 647.0), 1e-12);
	cr_expect_float_eq(attention_flash_eff(&g, ATTN_BE_FA3, false, 4096, 128, false),
			   0.646 * 4096 / (4096 + 239.0), 1e-12);
	cr_expect_float_eq(attention_flash_eff(&g, ATTN_BE_BEST, true, 4096, 128, false),
			   0.5 * 4096 / (4096 + 239.0), 1e-12);
}

/* One H100 FA3 backward row of validation/kernels/attention.csv. */
struct fa3_row {
	bool causal;
	double bh, s, meas_s;
};

static int fa3_bwd_rows(struct fa3_row *r, int cap)
{
	char *text = test_file_text(src_path("validation/kernels/attention.csv"));
	cr_assert(text);
	const char *pre = "h100-sxm5-80gb,fa3,bwd,bf16,";
	int n = 0;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		double b, h, kv, s, d, c, us = 0, tf = 0;
		if (strncmp(line, pre, strlen(pre)))
			continue;
		const char *p = line + strlen(pre);
		if (sscanf(p, "%lf,%lf,%lf,%lf,%lf,%lf,%lf,", &b, &h, &kv, &s, &d, &c, &us) != 7 &&
		    sscanf(p, "%lf,%lf,%lf,%lf,%lf,%lf,,%lf", &b, &h, &kv, &s, &d, &c, &tf) != 7)
			continue;
		cr_assert(n < cap && d == 128, "%s", line);
		double bh = b * h;
		double fl = attention_flops(ATTN_FLASH, c == 1, true, bh, s, d);
		r[n++] = (struct fa3_row){ .causal = c == 1, .bh = bh, .s = s,
					   .meas_s = us > 0 ? us * 1e-6 : fl / (tf * 1e12) };
	}
	free(text);
	return n;
}

/* The Hopper presets' FA3 backward figures are what their source says:
 * the least-squares line of 1 / efficiency against 1 / s through the four
 * non-causal rows (each row's time less the pre/post kernels and one
 * launch, times the grid factor) gives bwd_max 0.638 and bwd_seq_half 647;
 * the causal rows, not used, are priced within 13 % each (within 3 % from
 * s = 2048). */
Test(fa3_bwd, figures_come_from_the_non_causal_rows)
{
	struct topology *t = load_topology("topologies/dgx-h100-fattree2-2to1.json");
	const struct gpu_spec *g = &t->gpu;
	struct fa3_row r[16];
	int n = fa3_bwd_rows(r, 16);
	cr_assert_eq(n, 8);
	double sx = 0, sy = 0, sxx = 0, sxy = 0;
	int c = 0;
	for (int i = 0; i < n; i++) {
		if (r[i].causal)
			continue;
		double fl = attention_flops(ATTN_FLASH, false, true, r[i].bh, r[i].s, 128);
		double aux = attention_fa3_bwd_aux_bytes(r[i].bh, r[i].s, 128, 2) /
			     (g->hbm_bw_Bps * g->mem_eff_max) + 2 * g->kernel_launch_s;
		double main_t = r[i].meas_s - aux - g->kernel_launch_s;
		double e = fl * attention_grid_factor(g->sm_count, false, r[i].bh, r[i].s) /
			   (g->peak_flops[DTYPE_BF16] * main_t);
		double x = 1 / r[i].s, y = 1 / e;
		sx += x, sy += y, sxx += x * x, sxy += x * y;
		c++;
	}
	cr_assert_eq(c, 4);
	double slope = (c * sxy - sx * sy) / (c * sxx - sx * sx), icpt = (sy - slope * sx) / c;
	double max = 1 / icpt, half = slope / icpt;
	cr_expect(fabs(max - g->flash_be_bwd[ATTN_BE_FA3]) < 0.0005, "fit %.4f, preset %.3f", max,
		  g->flash_be_bwd[ATTN_BE_FA3]);
	cr_expect_eq(round(half), g->flash_be_bwd_half[ATTN_BE_FA3], "fit %.1f, preset %g", half,
		     g->flash_be_bwd_half[ATTN_BE_FA3]);
	for (int i = 0; i < n; i++) {
		if (!r[i].causal)
			continue;
		struct op op = bwd_op(ATTN_BE_FA3, r[i].bh, r[i].s, true);
		double err = cost_roofline_time_isolated(g, &op) / r[i].meas_s - 1;
		cr_expect(fabs(err) < (r[i].s >= 2048 ? 0.03 : 0.13), "causal s %g: err %.1f %%",
			  r[i].s, 100 * err);
	}
	topology_destroy(t);
}
