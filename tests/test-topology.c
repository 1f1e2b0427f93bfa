/* test-topology: topology files (loader, validation messages), paths, and
 * the platform agreeing with topology_path_latency()/_bw(). Each test runs
 * in its own process, so each may run the engine once. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "coll.h"
#include "diag.h"
#include "engine.h"
#include "topology.h"
#include "testutil.h"

#define GPU_JSON \
	"\"gpu\":{\"name\":\"g\",\"peak_tflops\":{\"fp32\":10},\"hbm_GB\":16,\"hbm_bw_GBps\":900,\"sm_count\":80}"

/* A 1.1 topology with node and fabric objects given as JSON text. */
static char *topo_file(const char *dir, const char *name, const char *node, const char *fabric)
{
	char text[4096];
	snprintf(text, sizeof(text),
		 "{\"schema\":\"ddlsim.topology\",\"schema_version\":\"1.1\",\"name\":\"t\","
		 "\"source\":\"test\"," GPU_JSON ",\"node\":%s,\"fabric\":%s}", node, fabric);
	return write_file(dir, name, text);
}

#define NODE_1GPU \
	"{\"gpus\":1,\"intra\":{\"kind\":\"nvswitch\",\"bw_GBps\":100,\"latency_us\":2}," \
	"\"nics\":{\"count\":1,\"bw_Gbps\":100,\"latency_us\":1}}"

static void expect_invalid(const char *node, const char *fabric, const char *jpath,
			   const char *msg)
{
	char *dir = tmp_dir(), *err = NULL, want[1024];
	char *path = topo_file(dir, "bad.json", node, fabric);
	char args[1200];
	snprintf(args, sizeof(args), "validate %s", path);
	int rc = run_ddlsim(args, NULL, &err);
	snprintf(want, sizeof(want), "%s: %s: error: %s", path, jpath, msg);
	cr_expect_eq(rc, 3, "exit code %d", rc);
	cr_expect(strstr(err, want), "expected '%s' in:\n%s", want, err);
	free(err);
	free(path);
	free(dir);
}

Test(topology, every_shipped_topology_loads)
{
	const char *files[] = { "dgx-a100", "dgx-h100", "hgx-h200", "dgx1-v100", "l40s-pcie-8gpu",
				"gb200-nvl72", "dgx-h100-fattree2-2to1", "dgx-h100-fattree3",
				"dgx-h100-rail", "dgx-b200", "gb300-nvl72" };
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char rel[128];
		struct diag d;
		diag_init(&d, stderr);
		snprintf(rel, sizeof(rel), "topologies/%s.json", files[i]);
		struct topology *t = topology_load(src_path(rel), &d);
		cr_expect(t, "%s: %s", rel, diag_text(&d));
		cr_expect(t && strlen(t->source) > 40, "%s cites a source", rel);
		topology_destroy(t);
		diag_finish(&d);
	}
}

Test(topology, rejects_zero_bandwidth)
{
	expect_invalid("{\"gpus\":1,\"intra\":{\"kind\":\"nvswitch\",\"bw_GBps\":100,\"latency_us\":2},"
		       "\"nics\":{\"count\":1,\"bw_Gbps\":0,\"latency_us\":1}}",
		       "{\"kind\":\"nonblocking\",\"latency_us\":0.5}", "/node/nics/bw_Gbps",
		       "must be > 0, got 0");
}

Test(topology, rejects_nic_assigned_to_missing_gpu)
{
	expect_invalid("{\"gpus\":2,\"intra\":{\"kind\":\"nvswitch\",\"bw_GBps\":100,\"latency_us\":2},"
		       "\"nics\":{\"count\":2,\"bw_Gbps\":100,\"latency_us\":1,\"gpus\":[[0],[1,9]]}}",
		       "{\"kind\":\"nonblocking\",\"latency_us\":0.5}", "/node/nics/gpus/1/1",
		       "NIC 1 is assigned to GPU 9, but a node has GPUs 0..1");
}

Test(topology, rejects_oversubscription_below_one)
{
	expect_invalid(NODE_1GPU,
		       "{\"kind\":\"fat_tree\",\"levels\":2,\"radix\":8,\"oversubscription\":0.5,\"latency_us\":0.5}",
		       "/fabric/oversubscription",
		       "must be >= 1 (downlink : uplink bandwidth), got 0.5");
}

Test(topology, rejects_nvlink_to_missing_gpu)
{
	expect_invalid("{\"gpus\":4,\"intra\":{\"kind\":\"nvlink_mesh\",\"lane_bw_GBps\":25,\"latency_us\":2,"
		       "\"links\":[[0,1,2],[2,4,1]]},\"nics\":{\"count\":1,\"bw_Gbps\":100,\"latency_us\":1}}",
		       "{\"kind\":\"nonblocking\",\"latency_us\":0.5}", "/node/intra/links/1",
		       "link to a missing GPU: a node has GPUs 0..3, got [2, 4]");
}

Test(topology, rejects_pcie_tree_that_does_not_hold_the_gpus)
{
	expect_invalid("{\"gpus\":8,\"intra\":{\"kind\":\"pcie\",\"bw_GBps\":26,\"latency_us\":3,"
		       "\"pcie\":{\"switches\":4,\"gpus_per_switch\":3,\"switch_uplink_GBps\":26}},"
		       "\"nics\":{\"count\":1,\"bw_Gbps\":100,\"latency_us\":1}}",
		       "{\"kind\":\"nonblocking\",\"latency_us\":0.5}",
		       "/node/intra/pcie/gpus_per_switch",
		       "switches x gpus_per_switch must equal node.gpus (8), got 4 x 3");
}

Test(topology, rejects_new_keys_in_a_1_0_file)
{
	char *dir = tmp_dir(), *err = NULL, args[1200];
	char *path = write_file(dir, "old.json",
		"{\"schema\":\"ddlsim.topology\",\"schema_version\":\"1.0\",\"name\":\"t\",\"source\":\"s\","
		GPU_JSON ",\"node\":" NODE_1GPU ",\"fabric\":{\"kind\":\"fat_tree\",\"levels\":2,"
		"\"radix\":8,\"latency_us\":0.5}}");
	snprintf(args, sizeof(args), "validate %s", path);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3);
	cr_expect(strstr(err, "/fabric/kind: error: needs schema_version \"1.1\""), "%s", err);
	free(err);
	free(path);
	free(dir);
}

Test(topology, fat_tree_too_small_for_the_nodes_is_an_error)
{
	char *dir = tmp_dir(), *err = NULL, args[1200];
	char *path = topo_file(dir, "ft.json", NODE_1GPU,
			       "{\"kind\":\"fat_tree\",\"levels\":2,\"radix\":4,\"latency_us\":0.5}");
	snprintf(args, sizeof(args), "collective --topology %s --nodes 9 --min-bytes 1M --max-bytes 1M", path);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 1);
	cr_expect(strstr(err, "/fabric/radix: error: a 2-level fat tree of radix 4 holds at most 8 nodes (2 per leaf), got 9"),
		  "%s", err);
	free(err);
	free(path);
	free(dir);
}

/* Path rules of topology.h on the shipped files. */
Test(topology, path_latency_and_bandwidth_follow_the_links)
{
	struct diag d;
	diag_init(&d, stderr);
	struct topology *l40 = topology_load(src_path("topologies/l40s-pcie-8gpu.json"), &d);
	struct topology *v = topology_load(src_path("topologies/dgx1-v100.json"), &d);
	cr_assert(l40 && v, "%s", diag_text(&d));
	/* PCIe: same switch 2 hops, other socket 5 hops of 1.5 us */
	cr_expect_float_eq(topology_path_latency(l40, 0, 1), 3e-6, 1e-15);
	cr_expect_float_eq(topology_path_latency(l40, 0, 7), 7.5e-6, 1e-15);
	cr_expect_float_eq(topology_path_bw(l40, 0, 7), 26e9, 1);
	/* DGX-1: 0-3 has two lanes, 0-5 goes through a GPU (two NVLink hops) */
	cr_expect_float_eq(topology_path_bw(v, 0, 3), 50e9, 1);
	cr_expect_float_eq(topology_path_latency(v, 0, 3), 2e-6, 1e-15);
	cr_expect_float_eq(topology_path_latency(v, 0, 5), 4e-6, 1e-15);
	cr_expect_float_eq(topology_path_bw(v, 0, 5), 25e9, 1); /* via GPU 1 or 4: one single-lane hop */
	char buf[128];
	int tp[] = { 0, 1 }, cross[] = { 0, 8 };
	cr_expect_str_eq(topology_group_links(l40, tp, 2, buf, sizeof(buf)), "pcie");
	cr_expect_str_eq(topology_group_links(v, tp, 2, buf, sizeof(buf)), "nvlink");
	cr_expect_str_eq(topology_group_links(v, cross, 2, buf, sizeof(buf)), "nic/fabric");
	topology_destroy(l40);
	topology_destroy(v);
	diag_finish(&d);
}

/* One exchange between GPUs a and b on the platform takes exactly
 * topology_path_latency() + S / topology_path_bw(). */
static void expect_platform_path(const char *topo, int nodes, int a, int b)
{
	struct diag d;
	diag_init(&d, stderr);
	struct topology *t = topology_load(topo, &d);
	cr_assert(t, "%s", diag_text(&d));
	int ranks[] = { a, b };
	struct engine_coll_point pt = { .bytes = 1e6 };
	cr_assert_eq(engine_collective_sweep(t, nodes, ranks, 2, COLL_SENDRECV, "direct", &pt, 1, &d), 0,
		     "%s", diag_text(&d));
	double want = topology_path_latency(t, a, b) + 1e6 / topology_path_bw(t, a, b);
	cr_expect(fabs(pt.time_s - want) / want < 1e-9, "%s %d->%d: simulated %.12g, paths say %.12g",
		  topo, a, b, pt.time_s, want);
	cr_expect(fabs(pt.ideal_s - want) / want < 1e-9, "plan closed form %.12g", pt.ideal_s);
	topology_destroy(t);
	diag_finish(&d);
}

Test(topology, platform_matches_paths_pcie_cross_socket)
{
	expect_platform_path(src_path("topologies/l40s-pcie-8gpu.json"), 1, 1, 6);
}

Test(topology, platform_matches_paths_pcie_between_nodes)
{
	expect_platform_path(src_path("topologies/l40s-pcie-8gpu.json"), 2, 2, 13);
}

Test(topology, platform_matches_paths_nvlink_two_hops)
{
	expect_platform_path(src_path("topologies/dgx1-v100.json"), 1, 0, 5);
}

Test(topology, platform_matches_paths_nvl72)
{
	expect_platform_path(src_path("topologies/gb200-nvl72.json"), 1, 3, 70);
}

Test(topology, platform_matches_paths_fat_tree_cross_pod)
{
	char *dir = tmp_dir();
	char *p = topo_file(dir, "ft3.json", NODE_1GPU,
			    "{\"kind\":\"fat_tree\",\"levels\":3,\"radix\":4,\"latency_us\":0.5}");
	expect_platform_path(p, 16, 1, 14); /* 2 nodes per leaf, 2 leaves per pod */
	free(p);
	free(dir);
}

Test(topology, platform_matches_paths_fat_tree_cross_leaf)
{
	expect_platform_path(src_path("topologies/dgx-h100-fattree2-2to1.json"), 12, 3, 8 * 11 + 3);
}

Test(topology, platform_matches_paths_nonblocking_groups)
{
	/* more than 64 nodes: grouped zones */
	char *dir = tmp_dir();
	char *p = topo_file(dir, "nb.json", NODE_1GPU, "{\"kind\":\"nonblocking\",\"latency_us\":0.5}");
	expect_platform_path(p, 130, 5, 129);
	free(p);
	free(dir);
}

/* ---- GPU presets -------------------------------------------------------- */

/* A 1.4 topology whose gpu is the JSON text given. */
static char *preset_topo(const char *dir, const char *version, const char *gpu)
{
	char text[4096];
	snprintf(text, sizeof(text),
		 "{\"schema\":\"ddlsim.topology\",\"schema_version\":\"%s\",\"name\":\"t\",\"source\":\"s\","
		 "\"gpu\":%s,\"node\":" NODE_1GPU ",\"fabric\":{\"kind\":\"nonblocking\",\"latency_us\":1}}",
		 version, gpu);
	return write_file(dir, "t.json", text);
}

Test(topology, gpu_preset_by_path_equals_the_inline_description)
{
	struct diag d;
	diag_init(&d, stderr);
	char gpu[1100];
	snprintf(gpu, sizeof(gpu), "\"%s\"", src_path("gpus/h100-sxm5-80gb.json"));
	char *dir = tmp_dir(), *p = preset_topo(dir, "1.4", gpu);
	struct topology *t = topology_load(p, &d);
	cr_assert(t, "%s", diag_text(&d));
	cr_expect_str_eq(t->gpu.name, "H100-SXM5-80GB");
	cr_expect_float_eq(t->gpu.peak_flops[DTYPE_BF16], 989.4e12, 1);
	cr_expect_float_eq(t->gpu.hbm_bytes, 85520809984.0, 0.5);   /* hbm_total_bytes */
	cr_expect_float_eq(t->gpu.gemm_eff_max, 0.803, 1e-12);
	cr_expect_float_eq(t->gpu.tdp_W, 700, 1e-9);
	cr_expect_str_eq(t->gpu_preset, src_path("gpus/h100-sxm5-80gb.json"));
	topology_destroy(t);
	diag_finish(&d);
	free(p);
	free(dir);
}

/* The H100 variants: each preset loads with the figures its sources give
 * (gpus/README.md). */
Test(topology, h100_variant_presets_load_with_their_cited_figures)
{
	static const struct {
		const char *file, *name;
		double bf16_tflops, fp8_tflops, hbm_bytes, bw_GBps, tdp_W;
		long sms;
	} want[] = {
		/* torchtitan's 96 GB HBM2e part: SXM5 peak as the upper bound,
		 * capacity as torch reports it, 2.4 TB/s, 700 W TDP */
		{ "gpus/h100-sxm5-96gb-hbm2e.json", "H100-SXM5-96GB-HBM2e", 989.4, 1978.9,
		  102000000000.0, 2400, 700, 132 },
		/* NVIDIA H100 whitepaper / PCIe product brief */
		{ "gpus/h100-pcie-80gb.json", "H100-PCIe-80GB", 756.5, 1513, 80e9, 2000, 350, 114 },
		/* NVIDIA H100 datasheet, NVL column, sparse figures halved */
		{ "gpus/h100-nvl-94gb.json", "H100-NVL-94GB", 835.5, 1670.5, 94e9, 3900, 400, 132 },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct diag d;
		diag_init(&d, stderr);
		char gpu[1100];
		snprintf(gpu, sizeof(gpu), "\"%s\"", src_path(want[i].file));
		char *dir = tmp_dir(), *p = preset_topo(dir, "1.5", gpu);
		struct topology *t = topology_load(p, &d);
		cr_assert(t, "%s: %s", want[i].file, diag_text(&d));
		cr_expect_str_eq(t->gpu.name, want[i].name);
		cr_expect_float_eq(t->gpu.peak_flops[DTYPE_BF16], want[i].bf16_tflops * 1e12, 1,
				   "%s", want[i].file);
		cr_expect_float_eq(t->gpu.peak_flops[DTYPE_FP8], want[i].fp8_tflops * 1e12, 1,
				   "%s", want[i].file);
		cr_expect_float_eq(t->gpu.hbm_bytes, want[i].hbm_bytes, 0.5, "%s", want[i].file);
		cr_expect_float_eq(t->gpu.hbm_bw_Bps, want[i].bw_GBps * 1e9, 1, "%s", want[i].file);
		cr_expect_float_eq(t->gpu.tdp_W, want[i].tdp_W, 1e-9, "%s", want[i].file);
		cr_expect_eq(t->gpu.sm_count, want[i].sms, "%s", want[i].file);
		topology_destroy(t);
		diag_finish(&d);
		free(p);
		free(dir);
	}
}

/* The torchtitan fleet's topology takes the 96 GB HBM2e preset: its
 * bandwidth, not the 80 GB SXM5's. */
Test(topology, torchtitan_fleet_runs_on_the_hbm2e_preset)
{
	struct diag d;
	diag_init(&d, stderr);
	struct topology *t = topology_load(
		src_path("validation/memory-torchtitan-h100/h100-96gb-topology.json"), &d);
	cr_assert(t, "%s", diag_text(&d));
	cr_expect_float_eq(t->gpu.hbm_bw_Bps, 2400e9, 1);
	cr_expect_float_eq(t->gpu.hbm_bytes, 102000000000.0, 0.5);
	cr_expect_str_eq(t->gpu.name, "H100-96GB-HBM2e-500W");
	topology_destroy(t);
	diag_finish(&d);
}

Test(topology, gpu_preset_overrides_replace_fields_and_merge_objects)
{
	struct diag d;
	diag_init(&d, stderr);
	char gpu[1400];
	/* an A100 40 GB described as the 80 GB preset with two fields changed */
	snprintf(gpu, sizeof(gpu), "{\"preset\":\"%s\",\"name\":\"A100-40\",\"hbm_GB\":40,"
		 "\"efficiency\":{\"mem_max\":0.9},\"power\":{\"tdp_W\":400,\"idle_W\":50,\"source\":\"x\"}}",
		 src_path("gpus/a100-sxm4-80gb.json"));
	char *dir = tmp_dir(), *p = preset_topo(dir, "1.4", gpu);
	struct topology *t = topology_load(p, &d);
	cr_assert(t, "%s", diag_text(&d));
	cr_expect_str_eq(t->gpu.name, "A100-40");
	cr_expect_float_eq(t->gpu.mem_eff_max, 0.9, 1e-12);
	/* the preset's other efficiencies stay */
	struct topology *ref = topology_load(src_path("topologies/dgx-a100.json"), &d);
	cr_assert(ref);
	cr_expect_float_eq(t->gpu.gemm_eff_max, ref->gpu.gemm_eff_max, 1e-12);
	cr_expect_float_eq(t->gpu.peak_flops[DTYPE_BF16], ref->gpu.peak_flops[DTYPE_BF16], 1);
	cr_expect_float_eq(t->gpu.tdp_W, 400, 1e-9);
	topology_destroy(ref);
	topology_destroy(t);
	diag_finish(&d);
	free(p);
	free(dir);
}

Test(topology, gpu_preset_needs_1_4_and_a_bad_preset_names_its_own_file)
{
	char *dir = tmp_dir(), *err = NULL, args[1200];
	char *p = preset_topo(dir, "1.3", "\"g.json\"");
	snprintf(args, sizeof(args), "validate %s", p);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3);
	cr_expect(strstr(err, "/gpu: error: a GPU preset needs schema_version \"1.4\" (the file says \"1.3\")"),
		  "%s", err);
	free(err);
	free(p);
	char *g = write_file(dir, "g.json", "{\"schema\":\"ddlsim.gpu\",\"schema_version\":\"1.0\","
			     "\"name\":\"g\",\"peak_tflops\":{\"fp32\":10},\"hbm_GB\":-1,\"hbm_bw_GBps\":900,"
			     "\"sm_count\":80,\"sources\":{\"hbm_GB\":\"datasheet\"},\"colour\":1}");
	p = preset_topo(dir, "1.4", "\"g.json\"");
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3);
	char want[1200];
	snprintf(want, sizeof(want), "%s: /hbm_GB: error:", g);
	cr_expect(strstr(err, want), "%s", err);
	snprintf(want, sizeof(want), "%s: /colour: error:", g);
	cr_expect(strstr(err, want), "%s", err);
	cr_expect(!strstr(err, "missing required key 'gpu'"), "%s", err);
	free(err);
	free(g);
	free(p);
	free(dir);
}

/* A number valid in the file but beyond the physical bound of its unit
 * (models/bounds.h) is an error that names its key, bound and unit, never
 * an infinite bandwidth downstream. */
Test(topology, a_value_that_overflows_when_scaled_is_refused)
{
	expect_invalid("{\"gpus\":1,\"intra\":{\"kind\":\"nvswitch\",\"bw_GBps\":100,\"latency_us\":2},"
		       "\"nics\":{\"count\":1,\"bw_Gbps\":1e308,\"latency_us\":1}}",
		       "{\"kind\":\"nonblocking\",\"latency_us\":1}", "/node/nics/bw_Gbps",
		       "must be at most 8e+12 Gbit/s, got 1e+308");
	expect_invalid("{\"gpus\":1,\"intra\":{\"kind\":\"nvswitch\",\"bw_GBps\":1e300,\"latency_us\":2},"
		       "\"nics\":{\"count\":1,\"bw_Gbps\":100,\"latency_us\":1}}",
		       "{\"kind\":\"nonblocking\",\"latency_us\":1}", "/node/intra/bw_GBps",
		       "must be at most 1e+12 GB/s, got 1e+300");
}

/* ---- schema 1.5: in-situ and per-class efficiencies, attention kernels -- */

#define GPU_15_BASE "\"name\":\"g\",\"peak_tflops\":{\"fp32\":60,\"bf16\":900},\"hbm_GB\":80," \
	"\"hbm_bw_GBps\":3000,\"sm_count\":132"

Test(topology, reads_the_1_5_gpu_keys)
{
	struct diag d;
	diag_init(&d, stderr);
	char *dir = tmp_dir();
	char *p = preset_topo(dir, "1.5", "{" GPU_15_BASE ",\"compute_capability\":9.0,"
			      "\"efficiency\":{\"mem_max\":0.8,\"mem_rowwise_max\":0.6,"
			      "\"sustained_clock_ratio\":0.9,\"comm_overlap_clock_ratio\":0.8,"
			      "\"flash_sustained_ratio\":0.85,\"flash_seq_half\":632,"
			      "\"flash_fwd_max\":0.6,\"flash_bwd_max\":0.5,\"attention_backends\":{"
			      "\"fa2\":{\"fwd_max\":0.3,\"bwd_max\":0.31,\"source\":\"a\"},"
			      "\"cudnn\":{\"fwd_max\":0.62,\"bwd_max\":0.52,\"source\":\"b\"}}}}");
	struct topology *t = topology_load(p, &d);
	cr_assert(t, "%s", diag_text(&d));
	cr_expect_float_eq(t->gpu.compute_capability, 9.0, 1e-12);
	cr_expect_float_eq(t->gpu.mem_rowwise_max, 0.6, 1e-12);
	cr_expect_float_eq(t->gpu.sustained_clock_ratio, 0.9, 1e-12);
	cr_expect_float_eq(t->gpu.comm_overlap_clock_ratio, 0.8, 1e-12);
	cr_expect_float_eq(t->gpu.flash_sustained_ratio, 0.85, 1e-12);
	cr_expect_float_eq(t->gpu.flash_seq_half, 632, 1e-12);
	cr_expect_float_eq(t->gpu.flash_be_fwd[ATTN_BE_FA2], 0.3, 1e-12);
	cr_expect_float_eq(t->gpu.flash_be_bwd[ATTN_BE_CUDNN], 0.52, 1e-12);
	cr_expect_eq(t->gpu.flash_be_fwd[ATTN_BE_FA3], 0);  /* not given: the best */
	/* the backend's figure is what a flash op of that backend runs at */
	cr_expect_float_eq(attention_flash_eff(&t->gpu, ATTN_BE_FA2, false, 1e9, 128, false), 0.3,
			   1e-6);
	cr_expect_float_eq(attention_flash_eff(&t->gpu, ATTN_BE_FA3, false, 1e9, 128, false), 0.6,
			   1e-6);
	topology_destroy(t);
	diag_finish(&d);
	free(p);
	free(dir);
}

Test(topology, rejects_1_5_keys_in_older_files_and_bad_backends_with_their_paths)
{
	char *dir = tmp_dir(), *err = NULL, args[1200], want[1400];
	/* a 1.4 inline GPU with 1.5 keys */
	char *p = preset_topo(dir, "1.4", "{" GPU_15_BASE ",\"compute_capability\":9.0,"
			      "\"efficiency\":{\"mem_rowwise_max\":0.6}}");
	snprintf(args, sizeof(args), "validate %s", p);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3);
	snprintf(want, sizeof(want), "%s: /gpu/compute_capability: error: needs schema_version \"1.5\" "
		 "(a GPU preset: \"1.1\"), the file says \"1.4\"", p);
	cr_expect(strstr(err, want), "%s", err);
	snprintf(want, sizeof(want), "%s: /gpu/efficiency/mem_rowwise_max: error: needs schema_version", p);
	cr_expect(strstr(err, want), "%s", err);
	free(err);
	free(p);
	/* a 1.4 topology overriding a preset with a 1.5 key */
	char gpu[1400];
	snprintf(gpu, sizeof(gpu), "{\"preset\":\"%s\",\"efficiency\":{\"sustained_clock_ratio\":0.9}}",
		 src_path("gpus/h100-sxm5-80gb.json"));
	p = preset_topo(dir, "1.4", gpu);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3);
	snprintf(want, sizeof(want), "%s: /gpu: error: /efficiency/sustained_clock_ratio: needs "
		 "schema_version \"1.5\", the file says \"1.4\"", p);
	cr_expect(strstr(err, want), "%s", err);
	free(err);
	free(p);
	/* a backend without its source, one out of range, one unknown */
	p = preset_topo(dir, "1.5", "{" GPU_15_BASE ",\"efficiency\":{\"flash_fwd_max\":0.6,"
			"\"flash_bwd_max\":0.5,\"attention_backends\":{\"fa2\":{\"fwd_max\":0.3,"
			"\"bwd_max\":0.3},\"fa3\":{\"fwd_max\":0.6,\"bwd_max\":0,\"source\":\"s\"},"
			"\"fa4\":{}}}}");
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3);
	snprintf(want, sizeof(want), "%s: /gpu/efficiency/attention_backends/fa2/source: error: missing "
		 "required key 'source'", p);
	cr_expect(strstr(err, want), "%s", err);
	snprintf(want, sizeof(want), "%s: /gpu/efficiency/attention_backends/fa3/bwd_max: error: "
		 "must be > 0, got 0", p);
	cr_expect(strstr(err, want), "%s", err);
	snprintf(want, sizeof(want), "%s: /gpu/efficiency/attention_backends/fa4: error: unknown key", p);
	cr_expect(strstr(err, want), "%s", err);
	free(err);
	free(p);
	/* backends without the best flash kernel */
	p = preset_topo(dir, "1.5", "{" GPU_15_BASE ",\"efficiency\":{\"attention_backends\":{"
			"\"fa2\":{\"fwd_max\":0.3,\"bwd_max\":0.3,\"source\":\"s\"}}}}");
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3);
	snprintf(want, sizeof(want), "%s: /gpu/efficiency/attention_backends: error: needs "
		 "flash_fwd_max and flash_bwd_max (the best flash kernel), got none", p);
	cr_expect(strstr(err, want), "%s", err);
	free(err);
	free(p);
	free(dir);
}

/* efficiency.gemm_libraries: an older GEMM library's best fraction of
 * peak, read into gemm_lib_max; a library without its source, a figure
 * out of range and an unknown library are refused with their paths. */
Test(topology, reads_gemm_libraries_and_rejects_bad_ones_with_their_paths)
{
	struct diag d;
	diag_init(&d, stderr);
	char *dir = tmp_dir(), *err = NULL, args[1200], want[1400];
	char *p = preset_topo(dir, "1.5", "{" GPU_15_BASE ",\"efficiency\":{\"gemm_max\":0.8,"
			      "\"gemm_libraries\":{\"cublas11\":{\"max\":0.7,\"source\":\"s\"}}}}");
	struct topology *t = topology_load(p, &d);
	cr_assert(t, "%s", diag_text(&d));
	cr_expect_float_eq(t->gpu.gemm_lib_max[GEMM_LIB_CUBLAS11], 0.7, 1e-12);
	cr_expect_float_eq(gpu_gemm_eff_max_lib(&t->gpu, DTYPE_BF16, GEMM_LIB_CUBLAS11), 0.7, 1e-12);
	cr_expect_float_eq(gpu_gemm_eff_max_lib(&t->gpu, DTYPE_BF16, GEMM_LIB_CURRENT), 0.8, 1e-12);
	topology_destroy(t);
	free(p);
	p = preset_topo(dir, "1.5", "{" GPU_15_BASE ",\"efficiency\":{\"gemm_libraries\":{"
			"\"cublas11\":{\"max\":1.5},\"cublas10\":{}}}}");
	snprintf(args, sizeof(args), "validate %s", p);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3);
	snprintf(want, sizeof(want), "%s: /gpu/efficiency/gemm_libraries/cublas11/max: error: must be "
		 "between 0 and 1, got 1.5", p);
	cr_expect(strstr(err, want), "%s", err);
	snprintf(want, sizeof(want), "%s: /gpu/efficiency/gemm_libraries/cublas11/source: error: missing "
		 "required key 'source'", p);
	cr_expect(strstr(err, want), "%s", err);
	snprintf(want, sizeof(want), "%s: /gpu/efficiency/gemm_libraries/cublas10: error: unknown key", p);
	cr_expect(strstr(err, want), "%s", err);
	free(err);
	free(p);
	/* a 1.4 file with the 1.5 key */
	p = preset_topo(dir, "1.4", "{" GPU_15_BASE ",\"efficiency\":{\"gemm_libraries\":{}}}");
	snprintf(args, sizeof(args), "validate %s", p);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3);
	snprintf(want, sizeof(want), "%s: /gpu/efficiency/gemm_libraries: error: needs schema_version", p);
	cr_expect(strstr(err, want), "%s", err);
	free(err);
	free(p);
	free(dir);
	diag_finish(&d);
}
