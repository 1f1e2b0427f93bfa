/* test-blackwell: the DGX B200 and GB300 NVL72 presets carry their
 * datasheet figures, and the block-scaled precisions (mxfp8, nvfp4) price
 * and store what models/precision.h says, only where a preset declares
 * their peak; the B200's flash kernels run at their measured steady ratio. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "cost.h"
#include "model.h"
#include "op.h"
#include "precision.h"
#include "topology.h"
#include "workload.h"
#include "testutil.h"

/* Each new GPU preset, through its topology, with the figures its sources
 * give (gpus/b200-sxm-180gb.json, gpus/b300-gb300.json). */
Test(blackwell, presets_load_with_their_datasheet_figures)
{
	const struct {
		const char *topo, *name;
		double bf16, fp8, mxfp8, nvfp4, hbm_GB, bw_GBps, tdp_W, cc;
		long sms;
	} want[] = {
		/* DGX B200 / HGX B200 tables, per GPU, dense; MLCommons' 1000 W */
		{ "topologies/dgx-b200.json", "B200-SXM-180GB", 2250, 4500, 4500, 9000, 180, 8000, 1000, 10.0,
		  148 },
		/* GB300 NVL72 datasheet / 72, dense; Blackwell Ultra blog */
		{ "topologies/gb300-nvl72.json", "B300 (GB300)", 2500, 5000, 5000, 15000, 288, 8000, 1400, 10.3,
		  160 },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct topology *t = load_topology(want[i].topo);
		const struct gpu_spec *g = &t->gpu;
		cr_expect_str_eq(g->name, want[i].name);
		cr_expect_float_eq(g->peak_flops[DTYPE_BF16], want[i].bf16 * 1e12, 1, "%s", want[i].topo);
		cr_expect_float_eq(g->peak_flops[DTYPE_FP8], want[i].fp8 * 1e12, 1, "%s", want[i].topo);
		cr_expect_float_eq(g->peak_flops[DTYPE_MXFP8], want[i].mxfp8 * 1e12, 1, "%s", want[i].topo);
		cr_expect_float_eq(g->peak_flops[DTYPE_NVFP4], want[i].nvfp4 * 1e12, 1, "%s", want[i].topo);
		cr_expect_float_eq(g->hbm_bytes, want[i].hbm_GB * 1e9, 0.5, "%s", want[i].topo);
		cr_expect_float_eq(g->hbm_bw_Bps, want[i].bw_GBps * 1e9, 1, "%s", want[i].topo);
		cr_expect_float_eq(g->tdp_W, want[i].tdp_W, 1e-9, "%s", want[i].topo);
		cr_expect_float_eq(g->compute_capability, want[i].cc, 1e-12, "%s", want[i].topo);
		cr_expect_eq(g->sm_count, want[i].sms, "%s", want[i].topo);
		/* block-scaled GEMMs: cuBLAS on a B200 (triton PR #9044, DeepGEMM PR #348) */
		cr_expect_float_eq(g->gemm_eff_max_mxfp8, 2849.9 / 4500, 1e-3, "%s", want[i].topo);
		cr_expect_float_eq(g->gemm_eff_max_nvfp4, 5239.0 / 9000, 1e-3, "%s", want[i].topo);
		cr_expect(strlen(t->source) > 200, "%s cites its sources", want[i].topo);
		topology_destroy(t);
	}
}

/* The NVLink domain and the NIC bandwidth per GPU: 8 GPUs and one 400 Gb/s
 * ConnectX-7 each in a DGX B200 (user guide), 72 GPUs and one 800 Gb/s
 * ConnectX-8 each in a GB300 NVL72; NVLink 5 at 1.8 TB/s bidirectional,
 * 900 GB/s each way as every preset counts it. */
Test(blackwell, nvlink_domain_and_nic_bandwidth_per_gpu)
{
	const struct {
		const char *topo;
		int gpus;
		double nic_Gbps_per_gpu, power_W;
	} want[] = {
		{ "topologies/dgx-b200.json", 8, 400, 14300 },
		{ "topologies/gb300-nvl72.json", 72, 800, 0 },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct topology *t = load_topology(want[i].topo);
		cr_expect_eq(t->gpus_per_node_physical, want[i].gpus, "%s", want[i].topo);
		cr_expect_float_eq(t->intra_bw_Bps, 900e9, 1, "%s", want[i].topo);
		double per_gpu = t->nic_bw_Bps * t->nics / t->gpus_per_node_physical;
		cr_expect_float_eq(per_gpu, want[i].nic_Gbps_per_gpu * 1e9 / 8, 1, "%s", want[i].topo);
		for (int g = 0; g < t->gpus_per_node_physical; g++)
			cr_expect_eq(t->gpu_nic[g], g, "%s: GPU %d has NIC %d", want[i].topo, g, t->gpu_nic[g]);
		cr_expect_float_eq(t->node_power_max_W, want[i].power_W, 1e-9, "%s", want[i].topo);
		topology_destroy(t);
	}
}

/* One 8192^3 GEMM on the DGX B200's GPU, worked by hand as
 * models/cost_roofline.c prices it: 2048 tiles of 128 x 256 in
 * ceil(2048 / 148) = 14 waves, q = 2048 / (14 x 148); time = 2 n^3 /
 * (peak x gemm_max) / q + the 4 us launch. nvfp4 at 9000 x 0.582, bf16 at
 * 2250 x 0.729: 0.313 of the bf16 time. */
Test(blackwell, gemm_time_at_nvfp4_against_bf16_in_closed_form)
{
	struct topology *t = load_topology("topologies/dgx-b200.json");
	struct cost *c = cost_roofline_create(&t->gpu);
	const double n = 8192, q = 2048.0 / (14 * 148), launch = 4e-6;
	struct op op = { .kind = OP_GEMM, .pass = PASS_FWD, .batch = 1, .m = n, .n = n, .k = n,
			 .flops = 2 * n * n * n };
	double want[3] = { 2 * n * n * n / (2250e12 * 0.729) / q + launch,
			   2 * n * n * n / (9000e12 * 0.582) / q + launch,
			   2 * n * n * n / (4500e12 * 0.633) / q + launch };
	enum dtype dt[3] = { DTYPE_BF16, DTYPE_NVFP4, DTYPE_MXFP8 };
	double got[3];
	for (int i = 0; i < 3; i++) {
		op.dtype = dt[i];
		op.bytes = 3 * n * n * dtype_bytes(dt[i]);  /* far below the compute time */
		got[i] = cost_op_time(c, &op);
		cr_expect_float_eq(got[i], want[i], 1e-9 * want[i], "%s: %.12g vs %.12g", dtype_name(dt[i]),
				   got[i], want[i]);
	}
	cr_expect_float_eq((got[1] - launch) / (got[0] - launch), 2250 * 0.729 / (9000 * 0.582), 1e-9);
	cost_destroy(c);
	topology_destroy(t);
}

/* The scale factors are in the bytes: MXFP8 one E8M0 byte per 32 (OCP MX
 * v1.0), NVFP4 one E4M3 byte per 16 (Transformer Engine); what TE saves
 * for the weight gradient and its weight + transpose copies carry them. */
Test(blackwell, block_scaled_bytes_carry_their_scales)
{
	cr_expect_float_eq(dtype_bytes(DTYPE_MXFP8), 1 + 1.0 / 32, 1e-15);
	cr_expect_float_eq(dtype_bytes(DTYPE_NVFP4), 0.5 + 1.0 / 16, 1e-15);
	const struct {
		enum dtype dt;
		double copies, step;
	} want[] = {
		{ DTYPE_FP8, 2, 34 + 2 + 2 },
		{ DTYPE_MXFP8, 2.0625, 34 + 2 + 2.0625 },
		{ DTYPE_NVFP4, 1.125, 34 + 2 + 1.125 },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct precision p;
		precision_init(&p, want[i].dt, false);
		cr_expect(p.fp8, "%s runs TE's casts", dtype_name(want[i].dt));
		cr_expect_eq(p.gemm, want[i].dt);
		cr_expect_eq(p.saved_gemm_input, want[i].dt);
		cr_expect_float_eq(p.fp8_weight_copy_bytes, want[i].copies, 1e-15, "%s", dtype_name(want[i].dt));
		cr_expect_float_eq(p.optimizer_step_bytes, want[i].step, 1e-12, "%s", dtype_name(want[i].dt));
		cr_expect_float_eq(p.optimizer_bytes, 12, 0);
	}
}

/* What stays bf16 under nvfp4, as Transformer Engine leaves it: the
 * attention core and the LM head (outside TE's modules), stored
 * activations; the layer GEMMs are nvfp4, and a cast(+transpose) of an
 * unfused input reads 2 bytes and writes two nvfp4 copies with scales. */
Test(blackwell, nvfp4_layer_gemms_bf16_head_and_attention)
{
	struct model *m = load_model("models/zoo/llama2-7b.json");
	struct wl_shape shp = { .micro_batch = 1, .seq = 4096, .tp = 1, .dtype = DTYPE_NVFP4,
				.attention = ATTN_FLASH, .cp = 1, .ep = 1,
				.attn_backend = { ATTN_BE_BEST, ATTN_BE_BEST } };
	struct op_list l;
	double T = 4096, h = 4096;
	int gemms = 0, casts = 0;
	op_list_init(&l);
	workload_block(m, &shp, WL_ATTN, PASS_FWD, RECOMPUTE_NONE, &l);
	for (int i = 0; i < l.n; i++) {
		if (l.v[i].kind == OP_GEMM) {
			gemms++;
			cr_expect_eq(l.v[i].dtype, DTYPE_NVFP4, "%s", l.v[i].name);
		}
		if (l.v[i].kind == OP_ATTN)
			cr_expect_eq(l.v[i].dtype, DTYPE_BF16, "%s", l.v[i].name);
		if (strstr(l.v[i].name, "fp8_cast")) {
			casts++;
			cr_expect_float_eq(l.v[i].bytes, T * h * (2 + 2 * 0.5625), 1e-6, "%s", l.v[i].name);
		}
	}
	cr_expect_gt(gemms, 0);
	cr_expect_eq(casts, 1);
	op_list_finish(&l);
	op_list_init(&l);
	workload_block(m, &shp, WL_HEAD, PASS_FWD, RECOMPUTE_NONE, &l);
	for (int i = 0; i < l.n; i++)
		if (l.v[i].kind == OP_GEMM)
			cr_expect_eq(l.v[i].dtype, DTYPE_BF16, "%s", l.v[i].name);
	op_list_finish(&l);
	model_destroy(m);
}

/* A GPU without block-scaled tensor cores declares no mxfp8 / nvfp4 peak:
 * the scenario is refused at its JSON path, naming the GPU. */
Test(blackwell, block_scaled_precision_refused_on_h100_with_its_path)
{
	const char *prec[] = { "mxfp8", "nvfp4" };
	for (int i = 0; i < 2; i++) {
		char *dir = tmp_dir(), text[2048], args[1200], *err = NULL;
		snprintf(text, sizeof(text),
			 "{\"schema\":\"ddlsim.scenario\",\"schema_version\":\"1.0\",\"name\":\"x\","
			 "\"model\":\"%s\",\"topology\":\"%s\",\"nodes\":1,"
			 "\"parallel\":{\"tp\":8},\"training\":{\"seq_len\":4096,\"global_batch\":8,"
			 "\"precision\":\"%s\"}}",
			 src_path("models/zoo/llama2-7b.json"), src_path("topologies/dgx-h100.json"), prec[i]);
		char *p = write_file(dir, "s.json", text);
		snprintf(args, sizeof(args), "run %s --quiet", p);
		int rc = run_ddlsim(args, NULL, &err);
		char want[1500];
		snprintf(want, sizeof(want),
			 "%s: /training/precision: error: %s needs a GPU with a peak for %s, but GPU "
			 "'H100-SXM5-80GB' of topology 'DGX H100' has none (%s: /gpu/peak_tflops)",
			 p, prec[i], prec[i], src_path("topologies/dgx-h100.json"));
		cr_expect_eq(rc, 3, "%s: exit code %d", prec[i], rc);
		cr_expect(err && strstr(err, want), "expected '%s' in:\n%s", want, err ? err : "");
		free(err);
		free(p);
		free(dir);
	}
}

/* A 1,000 W B200 runs a flash kernel in a steady step at 1237 / 1450 of its
 * burst throughput (FlashAttention-4 on a B200 back to back, flashinfer PR
 * #2899); the GB200 (1,200 W) has no such measurement and stays at 1; GEMMs
 * keep sustained_clock_ratio 1 on both. */
Test(blackwell, b200_flash_runs_at_its_measured_steady_ratio)
{
	struct topology *hgx = load_topology("topologies/dgx-b200.json");
	struct topology *nvl = load_topology("topologies/gb200-nvl72.json");
	cr_expect_float_eq(hgx->gpu.flash_sustained_ratio, 0.853, 1e-12);
	cr_expect_float_eq(nvl->gpu.flash_sustained_ratio, 1, 1e-12);
	struct op at = { .kind = OP_ATTN, .pass = PASS_FWD, .dtype = DTYPE_BF16, .batch = 64,
			 .m = 8192, .n = 8192, .k = 128, .causal = true };
	at.flops = attention_flops(ATTN_FLASH, true, false, 64, 8192, 128);
	double iso = cost_roofline_time_isolated(&hgx->gpu, &at) - hgx->gpu.kernel_launch_s;
	double steady = cost_roofline_time(&hgx->gpu, &at) - hgx->gpu.kernel_launch_s;
	cr_expect_float_eq(steady, iso * 1450.0 / 1237.0, 2e-3 * iso, "%g against %g", steady, iso);
	struct op mm = { .kind = OP_GEMM, .dtype = DTYPE_FP8, .m = 8192, .n = 8192, .k = 8192,
			 .batch = 1 };
	mm.flops = 2 * mm.m * mm.n * mm.k;
	cr_expect_float_eq(cost_roofline_time(&hgx->gpu, &mm), cost_roofline_time_isolated(&hgx->gpu, &mm),
			   1e-12);
	topology_destroy(hgx);
	topology_destroy(nvl);
}
