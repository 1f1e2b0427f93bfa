/* test-a100-pcie: the A100 PCIe presets (gpus/a100-pcie-40gb.json, 250 W,
 * and gpus/a100-pcie-80gb.json, 300 W) load with the figures NVIDIA's A100
 * datasheet and the kernel measurements their sources cite give, and a
 * GEMM on a PCIe card is priced no faster than on the SXM4 card of the
 * same memory. */
#include <criterion/criterion.h>
#include <stdio.h>

#include "cost.h"
#include "gpu.h"
#include "topology.h"
#include "testutil.h"

/* A one-GPU topology on the preset rel. */
static struct topology *on_preset(const char *rel)
{
	static char text[2048];
	snprintf(text, sizeof(text),
		 "{\"schema\":\"ddlsim.topology\",\"schema_version\":\"1.5\",\"name\":\"t\",\"source\":\"test\","
		 "\"gpu\":\"%s\","
		 "\"node\":{\"gpus\":1,\"intra\":{\"kind\":\"pcie\",\"bw_GBps\":24,\"latency_us\":3},"
		 "\"nics\":{\"count\":1,\"bw_Gbps\":200,\"latency_us\":1}},"
		 "\"fabric\":{\"kind\":\"nonblocking\",\"latency_us\":1}}",
		 src_path(rel));
	return load_topology_text(text);
}

/* Datasheet: the SXM4's dense peaks (312 bf16, 156 tf32, 19.5 fp32) at
 * the same 1,410 MHz boost clock and 108 SMs; 40 GB HBM2 at 1,555 GB/s
 * and 250 W, 80 GB HBM2e at 1,935 GB/s and 300 W. Efficiencies: the
 * 40 GB card's best torch.mm bf16 rate, 234.14 / 312 (torch-performance-
 * test-data issue #108); element-wise kernels on each card (NeuSight):
 * 0.872 and 0.860 of HBM bandwidth; the 80 GB card's GEMM mamf-finder's
 * 'NVIDIA A100 PCIe' row, 252.9 / 312 (stas00/ml-engineering @b9e29720). */
Test(a100_pcie, presets_load_with_their_cited_figures)
{
	static const struct {
		const char *file, *name;
		double hbm_bytes, bw_GBps, tdp_W, gemm_max, mem_max;
	} want[] = {
		{ "gpus/a100-pcie-40gb.json", "A100-PCIe-40GB", 40e9, 1555, 250, 0.750, 0.872 },
		{ "gpus/a100-pcie-80gb.json", "A100-PCIe-80GB", 80e9, 1935, 300, 0.811, 0.860 },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct topology *t = on_preset(want[i].file);
		const struct gpu_spec *g = &t->gpu;
		cr_expect_str_eq(g->name, want[i].name);
		cr_expect_float_eq(g->peak_flops[DTYPE_BF16], 312e12, 1, "%s", want[i].file);
		cr_expect_float_eq(g->peak_flops[DTYPE_FP16], 312e12, 1, "%s", want[i].file);
		cr_expect_float_eq(g->peak_flops[DTYPE_TF32], 156e12, 1, "%s", want[i].file);
		cr_expect_float_eq(g->peak_flops[DTYPE_FP32], 19.5e12, 1, "%s", want[i].file);
		cr_expect_float_eq(g->peak_flops[DTYPE_FP8], 0, 1e-9, "%s: no fp8 on sm80", want[i].file);
		cr_expect_eq(g->sm_count, 108, "%s", want[i].file);
		cr_expect_float_eq(g->compute_capability, 8.0, 1e-12, "%s", want[i].file);
		cr_expect_float_eq(g->hbm_bytes, want[i].hbm_bytes, 0.5, "%s", want[i].file);
		cr_expect_float_eq(g->hbm_bw_Bps, want[i].bw_GBps * 1e9, 1, "%s", want[i].file);
		cr_expect_float_eq(g->tdp_W, want[i].tdp_W, 1e-9, "%s", want[i].file);
		cr_expect_float_eq(g->power_cap_W, 0, 1e-12, "%s: the TDP is the card's limit", want[i].file);
		cr_expect_float_eq(g->gemm_eff_max, want[i].gemm_max, 1e-12, "%s", want[i].file);
		cr_expect_float_eq(g->mem_eff_max, want[i].mem_max, 1e-12, "%s", want[i].file);
		topology_destroy(t);
	}
}

/* Time of a bf16 GEMM m x n x k on the preset rel, less the launch. */
static double gemm_s(const char *rel, double m, double n, double k)
{
	struct topology *t = on_preset(rel);
	struct op mm = { .kind = OP_GEMM, .pass = PASS_FWD, .dtype = DTYPE_BF16, .batch = 1,
			 .m = m, .n = n, .k = k, .flops = 2 * m * n * k,
			 .bytes = 2 * (m * k + k * n + m * n) };
	double s = cost_roofline_time(&t->gpu, &mm) - t->gpu.kernel_launch_s;
	topology_destroy(t);
	return s;
}

/* The 250 W card's GEMMs reach 0.750 of peak against the SXM4's 0.869
 * (same peak, same SMs, same 1,555 GB/s): a compute-bound GEMM takes
 * 0.869 / 0.750 of the SXM4's time, and no shape is priced faster on the
 * PCIe card. The 80 GB card's 0.811 and its 1,935 GB/s: never faster
 * than the SXM4 80 GB's 0.869 and 2,039 GB/s either. */
Test(a100_pcie, a_gemm_is_priced_no_faster_than_on_the_sxm4_card)
{
	double big_pcie = gemm_s("gpus/a100-pcie-40gb.json", 8192, 8192, 8192);
	double big_sxm = gemm_s("gpus/a100-sxm4-40gb.json", 8192, 8192, 8192);
	cr_expect_float_eq(big_pcie / big_sxm, 0.869 / 0.750, 1e-9, "%.6f", big_pcie / big_sxm);
	static const double shapes[][3] = {
		{ 8192, 8192, 8192 }, { 4096, 4096, 4096 }, { 2048, 8192, 1024 },
		{ 16384, 1024, 4096 }, { 512, 512, 512 }, { 8192, 128, 8192 },
	};
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		const double *s = shapes[i];
		double p40 = gemm_s("gpus/a100-pcie-40gb.json", s[0], s[1], s[2]);
		double x40 = gemm_s("gpus/a100-sxm4-40gb.json", s[0], s[1], s[2]);
		double p80 = gemm_s("gpus/a100-pcie-80gb.json", s[0], s[1], s[2]);
		double x80 = gemm_s("gpus/a100-sxm4-80gb.json", s[0], s[1], s[2]);
		cr_expect_geq(p40, x40 * (1 - 1e-12), "40 GB %gx%gx%g: PCIe %g s < SXM4 %g s", s[0], s[1], s[2], p40, x40);
		cr_expect_geq(p80, x80 * (1 - 1e-12), "80 GB %gx%gx%g: PCIe %g s < SXM4 %g s", s[0], s[1], s[2], p80, x80);
	}
}
