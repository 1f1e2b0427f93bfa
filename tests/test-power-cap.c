/* test-power-cap: a board power limit below the TDP (gpu.power.power_cap_W)
 * with its measured clock-versus-limit table (cap_clock_ratio): the clock
 * ratio read off the table, the compute-bound kernels it slows and the
 * memory-bound ones it leaves, the energy it bills, and the loader's
 * messages for a bad key. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "diag.h"
#include "economics.h"
#include "plan.h"
#include "gpu.h"
#include "topology.h"
#include "testutil.h"

#define PRESET "gpus/h100-sxm5-96gb-hbm2e.json"

/* A one-GPU 1.5 topology on the H100 96 GB preset with power overrides
 * (a JSON object, or NULL for none), at schema version ver. */
static char *topo_text(const char *ver, const char *power)
{
	static char text[2048];
	snprintf(text, sizeof(text),
		 "{\"schema\":\"ddlsim.topology\",\"schema_version\":\"%s\",\"name\":\"t\",\"source\":\"test\","
		 "\"gpu\":{\"preset\":\"%s\"%s%s},"
		 "\"node\":{\"gpus\":1,\"intra\":{\"kind\":\"nvswitch\",\"bw_GBps\":100,\"latency_us\":2},"
		 "\"nics\":{\"count\":1,\"bw_Gbps\":100,\"latency_us\":1}},"
		 "\"fabric\":{\"kind\":\"nonblocking\",\"latency_us\":1}}",
		 ver, src_path(PRESET), power ? ",\"power\":" : "", power ? power : "");
	return text;
}

/* The preset's limit is the fleet's default 500 W (torchtitan), and its
 * clock there is the measured one: 1731 MHz over 1969 MHz at 700 W
 * (Ujeniya et al., arXiv 2604.11391v2, Fig. 6b). */
Test(power_cap, h100_96gb_runs_at_its_measured_clock_at_the_500W_default)
{
	struct topology *t = load_topology("validation/memory-torchtitan-h100/h100-96gb-topology.json");
	cr_expect_float_eq(t->gpu.power_cap_W, 500, 1e-12);
	cr_expect_float_eq(t->gpu.tdp_W, 700, 1e-12);
	cr_expect_eq(t->gpu.cap_n, 6);
	cr_expect_float_eq(gpu_power_cap_clock_ratio(&t->gpu), 1731.0 / 1969.0, 5e-5, "%.6f",
			   gpu_power_cap_clock_ratio(&t->gpu));
	topology_destroy(t);
}

/* Linear between measured points; 1 with no limit or one at the TDP. */
Test(power_cap, interpolates_between_points_and_is_one_at_the_tdp)
{
	struct topology *t = load_topology_text(topo_text("1.5", "{\"power_cap_W\":450}"));
	cr_expect_float_eq(gpu_power_cap_clock_ratio(&t->gpu), (0.7623 + 0.8791) / 2, 1e-12);
	t->gpu.power_cap_W = 200;
	cr_expect_float_eq(gpu_power_cap_clock_ratio(&t->gpu), 625.0 / 1969.0, 5e-5);
	t->gpu.power_cap_W = 700;
	cr_expect_float_eq(gpu_power_cap_clock_ratio(&t->gpu), 1, 1e-12);
	t->gpu.power_cap_W = 0;
	cr_expect_float_eq(gpu_power_cap_clock_ratio(&t->gpu), 1, 1e-12);
	topology_destroy(t);
}

/* A compute-bound GEMM (8192^3 bf16: 2.2 ms of compute against 0.17 ms
 * of bytes) takes 1 / 0.8791 of its uncapped time at 500 W, in situ and
 * isolated; a memory-bound kernel's time does not move (no HBM bandwidth
 * under a limit was measured). */
Test(power_cap, a_gemm_slows_by_the_clock_ratio_and_a_copy_does_not)
{
	struct topology *t = load_topology_text(topo_text("1.5", NULL));
	struct gpu_spec capped = t->gpu, free_ = t->gpu;
	free_.power_cap_W = 0;
	const double n = 8192, launch = t->gpu.kernel_launch_s;
	struct op mm = { .kind = OP_GEMM, .pass = PASS_FWD, .dtype = DTYPE_BF16, .batch = 1,
			 .m = n, .n = n, .k = n, .flops = 2 * n * n * n, .bytes = 3 * n * n * 2 };
	double slow = cost_roofline_time(&capped, &mm) - launch;
	double fast = cost_roofline_time(&free_, &mm) - launch;
	cr_expect_float_eq(slow / fast, 1 / 0.8791, 1e-9, "%.9f", slow / fast);
	slow = cost_roofline_time_isolated(&capped, &mm) - launch;
	fast = cost_roofline_time_isolated(&free_, &mm) - launch;
	cr_expect_float_eq(slow / fast, 1 / 0.8791, 1e-9, "%.9f", slow / fast);
	struct op copy = { .kind = OP_MEMBOUND, .pass = PASS_FWD, .dtype = DTYPE_BF16, .batch = 1,
			   .bytes = 2e9 };
	cr_expect_float_eq(cost_roofline_time(&capped, &copy), cost_roofline_time(&free_, &copy), 1e-15);
	topology_destroy(t);
}

/* The energy bill counts a busy GPU at its limit, not at its TDP: idle
 * 70 W, half busy, 70 + 0.5 x (500 - 70) = 285 W against 385 W. */
Test(power_cap, energy_counts_a_busy_gpu_at_its_limit)
{
	struct econ_params p;
	struct econ_result o;
	econ_params_init(&p);
	struct econ_cluster c = { .nodes = 1, .gpus = 8, .nics_per_node = 8, .fabric_levels = 1,
				  .oversubscription = 1, .gpu_tdp_W = 700, .gpu_idle_W = 70,
				  .gpu_cap_W = 500 };
	econ_compute(&p, &c, 3600, 0.5, 1e9, &o);
	cr_expect_float_eq(o.gpu_W, 285, 1e-9);
	c.gpu_cap_W = 0;
	econ_compute(&p, &c, 3600, 0.5, 1e9, &o);
	cr_expect_float_eq(o.gpu_W, 385, 1e-9);
}

/* A mixed cluster's energy: each node group's GPUs at their own limit
 * and busy share. 8 GPUs of 700 W TDP, 70 W idle, capped at 500 W, busy
 * 0.25: 70 + 0.25 x 430 = 177.5 W each; 8 of 400 W, 40 W idle, busy 0.6:
 * 40 + 0.6 x 360 = 256 W each; two 6,500 W nodes of the topology's
 * 8 x 400 W GPUs: 3,300 W overhead each; PUE 1.58, one hour. */
Test(power_cap, a_mixed_cluster_bills_each_group_at_its_own_limit)
{
	struct econ_params p;
	struct econ_result o;
	econ_params_init(&p);
	struct econ_cluster c = { .nodes = 2, .gpus = 16, .nics_per_node = 8, .fabric_levels = 1,
				  .oversubscription = 1, .gpu_tdp_W = 400, .gpu_idle_W = 40,
				  .node_power_max_W = 6500, .ngroups = 2 };
	c.group[0] = (struct econ_group){ .nodes = 1, .gpus = 8, .gpu_tdp_W = 700, .gpu_idle_W = 70,
					  .gpu_cap_W = 500, .busy = 0.25 };
	c.group[1] = (struct econ_group){ .nodes = 1, .gpus = 8, .gpu_tdp_W = 400, .gpu_idle_W = 40,
					  .busy = 0.6 };
	econ_compute(&p, &c, 3600, 0.5, 1e9, &o);
	double it = 8 * 177.5 + 8 * 256 + 2 * 3300;
	cr_expect_float_eq(o.it_W, it, 1e-9, "%.9g W", o.it_W);
	cr_expect_float_eq(o.gpu_W, (177.5 + 256) / 2, 1e-9);
	cr_expect_float_eq(o.energy_MWh, 1.58 * it * 3600 / 3.6e9, 1e-15);
	/* a group without its own share takes the job's (0.5): 70 + 0.5 x 430 */
	c.group[0].busy = -1;
	econ_compute(&p, &c, 3600, 0.5, 1e9, &o);
	cr_expect_float_eq(o.it_W, 8 * 285 + 8 * 256 + 2 * 3300, 1e-9, "%.9g W", o.it_W);
}

static void expect_refused(const char *ver, const char *power, const char *jpath, const char *msg)
{
	char *dir = tmp_dir(), *err = NULL, want[1024], args[1200];
	char *path = write_file(dir, "t.json", topo_text(ver, power));
	snprintf(args, sizeof(args), "validate %s", path);
	int rc = run_ddlsim(args, NULL, &err);
	snprintf(want, sizeof(want), "%s: %s: error: %s", path, jpath, msg);
	cr_expect_eq(rc, 3, "exit code %d for %s", rc, power);
	cr_expect(strstr(err, want), "expected '%s' in:\n%s", want, err);
	free(err);
	free(path);
	free(dir);
}

/* Every bad key is refused with its JSON path; no clock is extrapolated
 * below the lowest measured limit or read above the TDP. */
Test(power_cap, a_bad_key_is_refused_with_its_path)
{
	expect_refused("1.5", "{\"power_cap_W\":150}", "/gpu/power/power_cap_W",
		       "is below the lowest limit cap_clock_ratio measured (200 W), got 150: no clock "
		       "is extrapolated");
	expect_refused("1.5", "{\"power_cap_W\":800}", "/gpu/power/power_cap_W",
		       "must not exceed tdp_W 700, got 800");
	expect_refused("1.5", "{\"power_cap_W\":250,\"idle_W\":300}", "/gpu/power/power_cap_W",
		       "must not be below idle_W 300 (a busy GPU would draw less than an idle one), got 250");
	expect_refused("1.5", "{\"power_cap_w\":450}", "/gpu/power/power_cap_w",
		       "unknown key 'power_cap_w' (did you mean 'power_cap_W'?)");
	expect_refused("1.4", "{\"power_cap_W\":450}", "/gpu",
		       "/power/power_cap_W: needs schema_version \"1.5\", the file says \"1.4\"");
	expect_refused("1.5", "{\"cap_clock_ratio\":[[300,0.5],[200,0.6],[700,1]]}",
		       "/gpu/power/cap_clock_ratio/1", "power_W must rise point to point: 200 W after 300 W");
	expect_refused("1.5", "{\"cap_clock_ratio\":[[300,0.5],[600,0.9]]}", "/gpu/power/cap_clock_ratio/1",
		       "the last point must be [tdp_W, 1] = [700, 1] (clocks over the clock at the TDP), "
		       "got [600, 0.9]");
	expect_refused("1.5", "{\"cap_clock_ratio\":[[300,1.5],[700,1]]}", "/gpu/power/cap_clock_ratio/0",
		       "clock_ratio must be in (0, 1], got 1.5");
}

/* A limit on a GPU with no measured table is refused, not priced at
 * full clock. */
Test(power_cap, a_limit_without_a_table_is_refused)
{
	char *dir = tmp_dir(), *err = NULL, args[1200];
	char *path = write_file(dir, "t.json",
		"{\"schema\":\"ddlsim.topology\",\"schema_version\":\"1.5\",\"name\":\"t\",\"source\":\"test\","
		"\"gpu\":{\"name\":\"g\",\"peak_tflops\":{\"fp32\":60,\"bf16\":900},\"hbm_GB\":80,"
		"\"hbm_bw_GBps\":3000,\"sm_count\":132,\"power\":{\"tdp_W\":700,\"idle_W\":70,"
		"\"source\":\"x\",\"power_cap_W\":500}},"
		"\"node\":{\"gpus\":1,\"intra\":{\"kind\":\"nvswitch\",\"bw_GBps\":100,\"latency_us\":2},"
		"\"nics\":{\"count\":1,\"bw_Gbps\":100,\"latency_us\":1}},"
		"\"fabric\":{\"kind\":\"nonblocking\",\"latency_us\":1}}");
	snprintf(args, sizeof(args), "validate %s", path);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3);
	cr_expect(strstr(err, "/gpu/power/power_cap_W: error: needs cap_clock_ratio, the measured compute "
			 "clock at power limits of this GPU (gpus/README.md); none given"), "%s", err);
	free(err);
	free(path);
	free(dir);
}

/* A measured profile does not record the power limit its kernels ran at:
 * under a limit the run is refused, not priced at the profile's clock
 * beside roofline fallbacks at the limit's; at the TDP it loads (the
 * bandwidth raised to the HBM3 part's, which the fixture was made for). */
Test(power_cap, a_measured_profile_under_a_limit_is_refused)
{
	struct topology *t = load_topology("validation/memory-torchtitan-h100/h100-96gb-topology.json");
	t->gpu.hbm_bw_Bps = 3.35e12; /* the HBM3 SXM5's, which the synthetic profile's copies fit */
	struct diag d;
	diag_init(&d, NULL);
	struct cost *c = cost_profile_create(&t->gpu, src_path("tests/data/profile-synthetic-h100.json"), &d);
	cr_expect_null(c);
	cr_expect(strstr(diag_text(&d), "error: cannot price topology GPU 'H100-96GB-HBM2e-500W' under its "
				    "power limit (gpu.power.power_cap_W 500 W of tdp_W 700 W): a profile "
				    "does not record the limit its kernels ran at"), "%s", diag_text(&d));
	diag_finish(&d);
	cost_destroy(c);
	t->gpu.power_cap_W = t->gpu.tdp_W;
	diag_init(&d, NULL);
	c = cost_profile_create(&t->gpu, src_path("tests/data/profile-synthetic-h100.json"), &d);
	cr_expect_not_null(c, "%s", diag_text(&d));
	diag_finish(&d);
	cost_destroy(c);
	topology_destroy(t);
}

/* A run under a limit says so: the text report's "power limit" line and
 * report.json's scenario/topology power_cap_W and cap_clock_ratio (BERT
 * on the 96 GB H100 fleet, its preset's 500 W default). */
Test(power_cap, the_report_says_a_limit_is_in_force, .timeout = 60)
{
	char *dir = tmp_dir(), text[2048], args[2400], rd[1200], *out = NULL, *err = NULL;
	snprintf(text, sizeof(text),
		 "{\"schema\":\"ddlsim.scenario\",\"schema_version\":\"1.0\",\"name\":\"cap\",\"model\":\"%s\","
		 "\"topology\":\"%s\",\"nodes\":1,\"parallel\":{\"dp\":8},\"training\":{\"seq_len\":512,"
		 "\"global_batch\":64,\"micro_batch\":8,\"precision\":\"bf16\"}}",
		 src_path("models/zoo/bert-base.json"),
		 src_path("validation/memory-torchtitan-h100/h100-96gb-topology.json"));
	char *path = write_file(dir, "cap.json", text);
	snprintf(args, sizeof(args), "run %s --out %s/out", path, dir);
	cr_assert_eq(run_ddlsim(args, &out, &err), 0, "%s", err);
	cr_expect(strstr(out, "\npower limit  500 W of 700 W TDP: compute-bound kernels at 0.879 of the clock\n"),
		  "%s", out);
	snprintf(rd, sizeof(rd), "%s/out", dir);
	json_t *r = load_report(rd);
	cr_assert(r);
	cr_expect_float_eq(jnum(r, "scenario/topology/power_cap_W"), 500, 1e-12);
	cr_expect_float_eq(jnum(r, "scenario/topology/cap_clock_ratio"), 0.8791, 1e-12);
	json_decref(r);
	free(out);
	free(err);
	free(path);
	free(dir);
}

/* node_order "fast_first" sorts node groups by their GEMM rate: a GPU
 * under a limit is the slower by its clock ratio (0.8791 at 500 W). */
Test(power_cap, a_limited_gpu_sorts_as_the_slower)
{
	struct topology *t = load_topology("validation/memory-torchtitan-h100/h100-96gb-topology.json");
	struct gpu_spec free_ = t->gpu;
	free_.power_cap_W = 0;
	double capped = plan_gpu_speed(&t->gpu, DTYPE_BF16), full = plan_gpu_speed(&free_, DTYPE_BF16);
	cr_expect_float_eq(capped / full, 0.8791, 1e-12, "%.6f", capped / full);
	topology_destroy(t);
}
