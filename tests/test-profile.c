/* test-profile: calib profile loading and the profile cost source. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"
#include "cost.h"
#include "profile.h"
#include "testutil.h"
#include "topology.h"

#define FIXTURE "tests/data/profile-synthetic-h100.json"

/* A minimal valid profile; %s is spliced into the gemm entry. */
static const char *profile_text(const char *schema, const char *gemm_extra,
				const char *time_s, bool with_k)
{
	static char buf[4096];
	snprintf(buf, sizeof(buf),
		 "{\"schema\": \"%s\", \"schema_version\": \"1.0\",\n"
		 " \"producer\": {\"name\": \"ddlsim-calib\", \"version\": \"0.1.0\"},\n"
		 " \"gpu\": {\"name\": \"NVIDIA H100 80GB HBM3\", \"compute_capability\": \"9.0\",\n"
		 "   \"sm_count\": 132, \"sm_clock_max_MHz\": 1980, \"mem_clock_max_MHz\": 2619,\n"
		 "   \"mem_bus_width_bits\": 5120, \"hbm_bytes\": 85031714816, \"l2_bytes\": 52428800,\n"
		 "   \"driver_version\": \"x\", \"cuda_runtime_version\": \"13.0\",\n"
		 "   \"cublas_version\": \"x\", \"cudnn_version\": null},\n"
		 " \"measured\": {\"date_utc\": \"x\", \"hostname\": \"x\", \"method\": \"SYNTHETIC TEST FIXTURE\",\n"
		 "   \"warmup_runs\": 5, \"timed_runs\": 20, \"quick\": false},\n"
		 " \"gemm\": [{\"dtype\": \"bf16\", \"m\": 4096, \"n\": 4096,%s \"transa\": \"N\",\n"
		 "   \"transb\": \"N\", \"time_s\": %s, \"tflops\": 700.0, \"impl\": \"x\"%s}]}\n",
		 schema, with_k ? " \"k\": 4096," : "", time_s, gemm_extra);
	return buf;
}

static struct profile *load_text(const char *text, struct diag *d, char **path)
{
	char *dir = tmp_dir();
	*path = write_file(dir, "p.json", text);
	free(dir);
	diag_init(d, NULL);
	return profile_load(*path, d);
}

static void expect_error(const char *text, const char *jpath_msg)
{
	struct diag d;
	char *path, want[2048];
	struct profile *p = load_text(text, &d, &path);
	cr_assert_null(p);
	snprintf(want, sizeof(want), "%s: %s\n", path, jpath_msg);
	cr_expect_str_eq(diag_text(&d), want);
	diag_finish(&d);
	free(path);
}

Test(profile, loads_synthetic_fixture)
{
	struct diag d;
	diag_init(&d, stderr);
	struct profile *p = profile_load(src_path(FIXTURE), &d);
	cr_assert_not_null(p);
	cr_expect_eq(p->ngemm, 28);
	cr_expect_eq(p->nconv, 9);
	cr_expect_eq(p->nmem, 10);
	cr_expect_eq(p->nattn, 1);
	cr_expect_eq(p->nbw, 4);
	cr_expect_eq(p->sm_count, 132);
	cr_expect_str_eq(p->gpu_name, "NVIDIA H100 80GB HBM3");
	cr_expect(strstr(p->method, "SYNTHETIC TEST FIXTURE") != NULL);
	profile_destroy(p);
	diag_finish(&d);
}

Test(profile, accepts_minimal_profile)
{
	struct diag d;
	char *path;
	struct profile *p = load_text(profile_text("ddlsim.profile", "", "1e-4", true), &d, &path);
	cr_assert_not_null(p, "%s", diag_text(&d));
	profile_destroy(p);
	free(path);
}

Test(profile, rejects_wrong_schema)
{
	expect_error(profile_text("ddlsim.model", "", "1e-4", true),
		     "/schema: error: expected \"ddlsim.profile\", got 'ddlsim.model'");
}

Test(profile, rejects_negative_time)
{
	expect_error(profile_text("ddlsim.profile", "", "-1e-4", true),
		     "/gemm/0/time_s: error: must be > 0, got -0.0001");
}

Test(profile, rejects_zero_time)
{
	expect_error(profile_text("ddlsim.profile", "", "0", true),
		     "/gemm/0/time_s: error: must be > 0, got 0");
}

Test(profile, rejects_missing_field)
{
	expect_error(profile_text("ddlsim.profile", "", "1e-4", false),
		     "/gemm/0/k: error: missing required key 'k'");
}

Test(profile, rejects_unknown_key)
{
	expect_error(profile_text("ddlsim.profile", ", \"flops\": 1", "1e-4", true),
		     "/gemm/0/flops: error: unknown key 'flops' (did you mean 'tflops'?)");
}

Test(profile, reports_every_problem)
{
	struct diag d;
	char *path;
	struct profile *p = load_text(profile_text("ddlsim.profile", ", \"x\": 1", "-1", false),
				      &d, &path);
	cr_assert_null(p);
	cr_expect_eq(diag_count(&d), 3, "%s", diag_text(&d));
	diag_finish(&d);
	free(path);
}

/* --- the cost source ----------------------------------------------------- */

static struct gpu_spec h100(const char *name)
{
	struct gpu_spec g;
	memset(&g, 0, sizeof(g));
	snprintf(g.name, sizeof(g.name), "%s", name);
	g.peak_flops[DTYPE_FP32] = 67e12;
	g.peak_flops[DTYPE_BF16] = 989e12;
	g.peak_flops[DTYPE_FP16] = 989e12;
	g.hbm_bw_Bps = 3.35e12;
	g.sm_count = 132;
	g.gemm_eff_max = 0.8;
	g.mem_eff_max = 0.85, g.kernel_launch_s = 4e-6;
	g.gemm_tile_m = 128, g.gemm_tile_n = 256;
	return g;
}

static struct op gemm(const char *name, double m, double n, double k, double batch,
		      enum dtype dt)
{
	struct op op;
	memset(&op, 0, sizeof(op));
	snprintf(op.name, sizeof(op.name), "%s", name);
	op.kind = OP_GEMM, op.dtype = dt;
	op.m = m, op.n = n, op.k = k, op.batch = batch;
	op.flops = 2 * m * n * k * batch;
	op.bytes = (m * k + k * n + m * n) * 2 * batch;
	return op;
}

static struct op membound(const char *name, const char *kind, double bytes, double row)
{
	struct op op;
	memset(&op, 0, sizeof(op));
	snprintf(op.name, sizeof(op.name), "%s", name);
	int w = snprintf(op.membound_kind, sizeof(op.membound_kind), "%s", kind);
	cr_assert(w >= 0 && (size_t)w < sizeof(op.membound_kind), "kernel family '%s' too long", kind);
	op.kind = OP_MEMBOUND, op.dtype = DTYPE_BF16, op.batch = 1;
	op.bytes = bytes, op.row = row, op.m = bytes / 2;
	return op;
}

static struct cost *fixture_cost(struct gpu_spec *g)
{
	struct diag d;
	diag_init(&d, stderr);
	struct cost *c = cost_profile_create(g, src_path(FIXTURE), &d);
	cr_assert_not_null(c);
	cr_assert_eq(diag_count(&d), 0);
	diag_finish(&d);
	return c;
}

/* Price op and say whether the profile (not the roofline) priced it. */
static double price(struct cost *c, const struct op *op, bool *measured)
{
	const char *names;
	double t = cost_op_time(c, op);
	cost_measured_ops(c, &names);
	char list[1100];
	snprintf(list, sizeof(list), ",%s,", names);
	char key[40];
	snprintf(key, sizeof(key), ",%s,", op->name);
	*measured = strstr(list, key) != NULL;
	return t;
}

Test(profile, reproduces_measured_points_exactly)
{
	struct gpu_spec g = h100("H100-SXM5-80GB");
	struct cost *c = fixture_cost(&g);
	struct diag d;
	diag_init(&d, NULL);
	struct profile *p = profile_load(src_path(FIXTURE), &d);
	bool measured;

	for (int i = 0; i < p->ngemm; i++) {
		const struct profile_gemm *pg = &p->gemm[i];
		if (pg->transa != 'N')
			continue;
		struct op op = gemm("g", pg->m, pg->n, pg->k, 1, DTYPE_BF16);
		double t = cost_op_time_ex(c, &op, &measured);
		cr_expect(measured);
		cr_expect_eq(t, pg->time_s, "gemm %g x %g x %g: %.17g != %.17g", pg->m, pg->n,
			     pg->k, t, pg->time_s);
	}
	for (int i = 0; i < p->nmem; i++) {
		const struct profile_mem *pm = &p->mem[i];
		struct op op = membound("mb", pm->kernel, pm->bytes, pm->row);
		cr_expect_eq(price(c, &op, &measured), pm->time_s, "%s at %g B", pm->kernel, pm->bytes);
		cr_expect(measured);
	}
	profile_destroy(p);
	diag_finish(&d);
	cost_destroy(c);
}

/* Along each dimension, between two measured shapes (the other two on the
 * grid), the price never decreases and stays between the two measurements. */
Test(profile, interpolation_is_monotone_between_measured_points)
{
	struct gpu_spec g = h100("H100-SXM5-80GB");
	struct cost *c = fixture_cost(&g);
	bool measured;

	for (int dim = 0; dim < 3; dim++)
		for (double lo = 1024; lo < 16384; lo *= 4) {
			double hi = lo * 4, prev = 0, t_lo = 0, t_hi = 0;
			for (int i = 0; i <= 400; i++) {
				double x = round(lo * pow(hi / lo, i / 400.0));
				double s[3] = { 4096, 4096, 4096 };
				s[dim] = x;
				struct op op = gemm("g", s[0], s[1], s[2], 1, DTYPE_BF16);
				double t = cost_op_time_ex(c, &op, &measured);
				cr_expect(measured);
				cr_expect_geq(t, prev, "dim %d at %g: %g < %g", dim, x, t, prev);
				prev = t;
				if (i == 0)
					t_lo = t;
				t_hi = t;
			}
			cr_expect_lt(t_lo, t_hi);
		}
	/* memory-bound curve */
	double prev = 0;
	for (int i = 0; i <= 200; i++) {
		double b = round((1 << 20) * pow(256.0, i / 200.0));
		struct op op = membound("mb", "rmsnorm_fwd", b, 4096);
		double t = cost_op_time_ex(c, &op, &measured);
		cr_expect(measured);
		cr_expect_geq(t, prev, "at %g B", b);
		prev = t;
	}
	cost_destroy(c);
}

Test(profile, interpolates_between_measured_efficiencies)
{
	struct gpu_spec g = h100("H100-SXM5-80GB");
	struct cost *c = fixture_cost(&g);
	bool measured;
	/* the fixture's closed form: time = (2MNK + 5e9) / 700e12 */
	struct op op = gemm("g", 8192, 4096, 4096, 1, DTYPE_BF16);
	double t = price(c, &op, &measured), exact = (op.flops + 5e9) / 700e12;
	printf("gemm 8192x4096x4096: profile %.4g s, fixture curve %.4g s (%+.1f%%)\n", t, exact,
	       100 * (t / exact - 1));
	cr_expect(fabs(t / exact - 1) < 0.05);
	cost_destroy(c);
}

Test(profile, falls_back_to_roofline_outside_the_measured_range)
{
	struct gpu_spec g = h100("H100-SXM5-80GB");
	struct cost *c = fixture_cost(&g);
	bool measured;

	/* k = 128 is 8x below the smallest measured k */
	struct op far = gemm("attn_score", 4096, 4096, 128, 1, DTYPE_BF16);
	double t = price(c, &far, &measured);
	cr_expect(!measured);
	cr_expect_eq(t, cost_roofline_time(&g, &far));
	/* within 2x of the range: still the profile (edge efficiency) */
	struct op near = gemm("near", 4096, 4096, 600, 1, DTYPE_BF16);
	price(c, &near, &measured);
	cr_expect(measured);
	/* a dtype that was not measured */
	struct op fp32 = gemm("fp32_gemm", 4096, 4096, 4096, 1, DTYPE_FP32);
	t = price(c, &fp32, &measured);
	cr_expect(!measured);
	cr_expect_eq(t, cost_roofline_time(&g, &fp32));
	/* memory-bound: beyond 2x of the family's largest size */
	struct op big = membound("huge_norm", "rmsnorm_fwd", 4e9, 4096);
	price(c, &big, &measured);
	cr_expect(!measured);
	/* an uncalibrated family uses the d2d copy curve */
	struct op res = membound("residual", "residual_fwd", 128.0 * (1 << 20), 0);
	t = price(c, &res, &measured);
	cr_expect(measured);
	cr_expect_float_eq(t, 128.0 * (1 << 20) / 2800e9, 1e-9);
	/* a _fwd kind is looked up without its suffix */
	struct op sw = membound("swiglu", "bias_swiglu_fwd", 16.0 * (1 << 20), 0);
	t = price(c, &sw, &measured);
	cr_expect(measured);
	cr_expect_float_eq(t, 16.0 * (1 << 20) / 2500e9, 1e-9);

	const char *names;
	cr_expect_eq(cost_roofline_ops(c, &names), 3);
	cr_expect_str_eq(names, "attn_score,fp32_gemm,huge_norm");
	cost_destroy(c);
}

Test(profile, batched_gemm_priced_as_stacked_rows)
{
	struct gpu_spec g = h100("H100-SXM5-80GB");
	struct cost *c = fixture_cost(&g);
	bool measured;
	/* 4 x (1024 x 4096 x 4096) has the FLOPs and tiles of 4096 x 4096 x 4096 */
	struct op b = gemm("batched", 1024, 4096, 4096, 4, DTYPE_BF16);
	struct op one = gemm("one", 4096, 4096, 4096, 1, DTYPE_BF16);
	double tb = price(c, &b, &measured);
	cr_expect(measured);
	cr_expect_float_eq(tb, price(c, &one, &measured), 1e-12);
	cost_destroy(c);
}

Test(profile, warns_when_the_gpu_differs)
{
	struct gpu_spec g = h100("A100-SXM4-80GB");
	struct diag d;
	diag_init(&d, NULL);
	struct cost *c = cost_profile_create(&g, src_path(FIXTURE), &d);
	cr_assert_not_null(c);
	cr_expect_eq(diag_count(&d), 0);
	char want[2048];
	snprintf(want, sizeof(want),
		 "%s: /gpu/name: warning: profile measured on 'NVIDIA H100 80GB HBM3' prices "
		 "topology GPU 'A100-SXM4-80GB' (different GPU model)\n", src_path(FIXTURE));
	cr_expect_str_eq(diag_text(&d), want);
	cr_expect(strstr(cost_describe(c), "DIFFERENT model") != NULL);
	cost_destroy(c);
	diag_finish(&d);
	cr_expect(cost_profile_gpu_matches("NVIDIA H100 80GB HBM3", "H100-SXM5-80GB"));
	cr_expect(!cost_profile_gpu_matches("NVIDIA H100 80GB HBM3", "A100-SXM4-80GB"));
	cr_expect(cost_profile_gpu_matches("Tesla V100-SXM2-32GB", "V100"));
}

/* calib's cudnn_sdpa entries count flops as a causal flash kernel does
 * (calib/attn_ref.c: 2 b h s^2 d forward, 5 b h s^2 d backward), the count
 * the workload gives its flash attention ops (attention_flops), so an op
 * of a measured shape is priced at the measured time; the unfused entry of
 * the same shape is never used for it. */
Test(profile, cudnn_sdpa_entries_price_flash_attention_at_the_measured_time)
{
	const double bh = 32, s = 4096, d = 128, t_fwd = 1.5e-3, t_bwd = 4e-3;
	const double f_fwd = 2 * bh * s * s * d, f_bwd = 5 * bh * s * s * d;
	char text[8192], attn[1024];
	const char *base = profile_text("ddlsim.profile", "", "2e-4", true);
	size_t n = strlen(base);

	cr_assert(n > 2 && strcmp(base + n - 2, "}\n") == 0);
	snprintf(attn, sizeof(attn),
		 ",\n \"attention\": [\n"
		 "  {\"impl\": \"unfused_cublas_softmax\", \"pass\": \"fwd\", \"dtype\": \"bf16\", \"b\": 1,"
		 " \"heads\": 32, \"s\": 4096, \"head_dim\": 128, \"causal\": true, \"time_s\": 0.1,"
		 " \"tflops\": 1.0},\n"
		 "  {\"impl\": \"cudnn_sdpa\", \"pass\": \"fwd\", \"dtype\": \"bf16\", \"b\": 1,"
		 " \"heads\": 32, \"s\": 4096, \"head_dim\": 128, \"causal\": true, \"time_s\": %.17g,"
		 " \"tflops\": %.17g},\n"
		 "  {\"impl\": \"cudnn_sdpa\", \"pass\": \"bwd\", \"dtype\": \"bf16\", \"b\": 1,"
		 " \"heads\": 32, \"s\": 4096, \"head_dim\": 128, \"causal\": true, \"time_s\": %.17g,"
		 " \"tflops\": %.17g}]}\n",
		 t_fwd, f_fwd / t_fwd * 1e-12, t_bwd, f_bwd / t_bwd * 1e-12);
	snprintf(text, sizeof(text), "%.*s%s", (int)(n - 2), base, attn);

	char *dir = tmp_dir(), *path = write_file(dir, "sdpa.json", text);
	struct gpu_spec g = h100("H100-SXM5-80GB");
	struct diag dg;
	diag_init(&dg, NULL);
	struct cost *c = cost_profile_create(&g, path, &dg);
	cr_assert_not_null(c, "%s", diag_text(&dg));
	for (int bwd = 0; bwd < 2; bwd++) {
		struct op op;
		bool measured;
		memset(&op, 0, sizeof(op));
		snprintf(op.name, sizeof(op.name), "%s", bwd ? "flash_attn.bwd" : "flash_attn");
		op.kind = OP_ATTN, op.pass = bwd ? PASS_BWD : PASS_FWD, op.dtype = DTYPE_BF16;
		op.batch = bh, op.m = op.n = s, op.k = d, op.causal = true;
		op.flops = attention_flops(ATTN_FLASH, true, bwd, bh, s, d);
		double t = cost_op_time_ex(c, &op, &measured);
		cr_expect(measured, "pass %d", bwd);
		cr_expect(fabs(t - (bwd ? t_bwd : t_fwd)) <= 1e-12 * t, "pass %d: %.17g s", bwd, t);
	}
	cost_destroy(c);
	diag_finish(&dg);
	free(path);
	free(dir);
}

Test(profile, scenario_with_profile_runs_end_to_end)
{
	char *dir = tmp_dir(), text[4096], args[4096];
	snprintf(text, sizeof(text),
		 "{\"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\",\n"
		 " \"name\": \"profiled\", \"model\": \"%s\", \"topology\": \"%s\", \"nodes\": 1,\n"
		 " \"training\": {\"seq_len\": 4096, \"global_batch\": 8, \"precision\": \"bf16\"},\n"
		 " \"compute\": {\"cost\": \"profile\", \"profile\": \"%s\"}}\n",
		 src_path("models/zoo/llama2-7b.json"), src_path("topologies/dgx-h100.json"),
		 src_path(FIXTURE));
	char *sc = write_file(dir, "s.json", text);
	char *err = NULL;
	snprintf(args, sizeof(args), "run %s --out %s/r --quiet", sc, dir);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	char rdir[2048];
	snprintf(rdir, sizeof(rdir), "%s/r", dir);
	json_t *r = load_report(rdir);
	cr_assert_not_null(r);
	json_t *cm = json_object_get(r, "cost_model");
	cr_expect_str_eq(json_string_value(json_object_get(cm, "source")), "profile");
	char *m = json_dumps(json_object_get(cm, "measured_ops"), JSON_COMPACT);
	char *f = json_dumps(json_object_get(cm, "roofline_ops"), JSON_COMPACT);
	printf("measured ops %s\nroofline ops %s\n", m, f);
	cr_expect(strstr(m, "\"qkv\"") && strstr(m, "\"mlp_gate_up\"") && strstr(m, "\"rmsnorm\""));
	/* flash attention (the default on H100): the fixture's only attention
	 * entry is unfused, so the fused kernel falls back to the roofline */
	cr_expect(strstr(f, "\"flash_attn\"") && !strstr(f, "\"attn_score\""));
	cr_expect(!strstr(f, "\"qkv\""));
	free(m);
	free(f);
	json_decref(r);
	free(err);
	free(sc);
	free(dir);
}

/* --- the real H200 profile (calib/profiles/h200-sxm5-141gb.json) --------- */

/* tests/data/profile-h200-excerpt.json: entries copied verbatim from the
 * measured profile (tests/data/README.md lists which). */
#define H200_EXCERPT "tests/data/profile-h200-excerpt.json"

/* The excerpt's warning about its interference entry (it loads with it). */
#define SLOWER_ALONE_WARNING \
	"/interference/gemm_with_copy_s: warning: the GEMM ran faster beside the copy " \
	"kernel (0.00162397 s) than alone (0.00170349 s, ratio 0.953): clock or power noise, " \
	"no slowdown seen; compute beside communication is priced by the SM-share model alone"

static struct gpu_spec h200_preset(void)
{
	struct gpu_spec g;
	struct diag d;
	diag_init(&d, stderr);
	cr_assert_eq(topology_gpu_preset_load(src_path("gpus/h200-sxm5-141gb.json"), &g, &d), 0);
	diag_finish(&d);
	return g;
}

/* The measured file as it is: fp8 GEMMs named "fp8_e4m3" (the documented
 * name) and a GEMM that ran faster beside the copy kernel than alone (the
 * board at its 700 W cap) load; the interference factor is 1, with a
 * warning that says why. */
Test(profile, loads_the_measured_h200_excerpt)
{
	struct diag d;
	char want[1024];
	diag_init(&d, NULL);
	struct profile *p = profile_load(src_path(H200_EXCERPT), &d);
	cr_assert_not_null(p, "%s", diag_text(&d));
	cr_expect_eq(diag_count(&d), 0);
	snprintf(want, sizeof(want), "%s: " SLOWER_ALONE_WARNING "\n", src_path(H200_EXCERPT));
	cr_expect_str_eq(diag_text(&d), want);
	cr_expect_eq(p->ngemm, 12);
	cr_expect_eq(p->nconv, 9);
	cr_expect_eq(p->nmem, 23);
	cr_expect_eq(p->nattn, 6);
	cr_expect_eq(p->nbw, 19);
	cr_expect_eq(p->gemm[6].dtype, DTYPE_FP8);
	cr_expect_eq(p->gemm[6].time_s, 0.000101472);
	cr_expect_eq(p->gemm[0].dtype, DTYPE_BF16);
	cr_expect_eq(profile_interference(p), 1);
	profile_destroy(p);
	diag_finish(&d);
}

/* Text of the excerpt with its first occurrence of key replaced by val. */
static char *excerpt_with(const char *key, const char *val)
{
	FILE *f = fopen(src_path(H200_EXCERPT), "r");
	static char buf[32768];
	cr_assert_not_null(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	return str_subst(buf, key, val);
}

/* The excerpt with key replaced by val is refused with exactly jpath_msg
 * (and, when the interference entry is untouched, its warning). */
static void expect_excerpt_error(const char *key, const char *val, const char *jpath_msg)
{
	struct diag d;
	char *path, want[2048], *text = excerpt_with(key, val);
	struct profile *p = load_text(text, &d, &path);
	cr_assert_null(p);
	if (strstr(key, "gemm_with_copy_s"))
		snprintf(want, sizeof(want), "%s: %s\n", path, jpath_msg);
	else
		snprintf(want, sizeof(want), "%s: %s\n%s: " SLOWER_ALONE_WARNING "\n", path, jpath_msg, path);
	cr_expect_str_eq(diag_text(&d), want);
	diag_finish(&d);
	free(path);
	free(text);
}

/* calib never wrote the short "fp8": only the documented name loads. */
Test(profile, gemm_dtype_is_calibs_name)
{
	expect_excerpt_error("\"fp8_e4m3\"", "\"fp8\"",
			     "/gemm/6/dtype: error: expected one of {fp32, tf32, fp16, bf16, fp8_e4m3}, "
			     "got 'fp8'");
}

Test(profile, interference_factor_is_with_over_alone_when_slower)
{
	struct diag d;
	char *path, *text = excerpt_with("\"gemm_with_copy_s\": 0.00162397",
					 "\"gemm_with_copy_s\": 0.00204419");
	struct profile *p = load_text(text, &d, &path);
	cr_assert_not_null(p, "%s", diag_text(&d));
	cr_expect_str_eq(diag_text(&d), "");
	cr_expect_float_eq(profile_interference(p), 0.00204419 / 0.00170349, 1e-12);
	profile_destroy(p);
	diag_finish(&d);
	free(path);
	free(text);
}

Test(profile, interference_beyond_the_limit_either_way_is_refused)
{
	expect_excerpt_error("\"gemm_with_copy_s\": 0.00162397", "\"gemm_with_copy_s\": 1e-5",
			     "/interference/gemm_with_copy_s: error: must be within 100 x of gemm_alone_s "
			     "(0.00170349 s: a GEMM slowed or sped up more than that by a copy is no "
			     "measurement), got 1e-05 s");
	expect_excerpt_error("\"gemm_with_copy_s\": 0.00162397", "\"gemm_with_copy_s\": 0.5",
			     "/interference/gemm_with_copy_s: error: must be within 100 x of gemm_alone_s "
			     "(0.00170349 s: a GEMM slowed or sped up more than that by a copy is no "
			     "measurement), got 0.5 s");
}

/* Every section of the measured profile prices an op of its kind on the
 * H200 preset: an fp8 and a bf16 GEMM and the three passes of a
 * convolution at measured shapes (their measured times), cuDNN's fused
 * attention at a measured shape, a SwiGLU and an RMSNorm on their curves,
 * and an uncalibrated element-wise kernel on the d2d copy curve. */
Test(profile, every_section_of_the_h200_excerpt_prices_ops)
{
	struct gpu_spec g = h200_preset();
	struct diag d;
	bool measured;
	diag_init(&d, NULL);
	struct cost *c = cost_profile_create(&g, src_path(H200_EXCERPT), &d);
	cr_assert_not_null(c, "%s", diag_text(&d));
	cr_expect_eq(cost_interference(c), 1);

	struct op f8 = gemm("fp8", 4096, 4096, 4096, 1, DTYPE_FP8);
	cr_expect_eq(cost_op_time_ex(c, &f8, &measured), 0.000101472);
	cr_expect(measured);
	struct op b16 = gemm("bf16", 8192, 8192, 8192, 1, DTYPE_BF16);
	cr_expect_eq(cost_op_time_ex(c, &b16, &measured), 0.00141013);
	cr_expect(measured);

	/* conv 3x3, 64 -> 64 channels, 56 x 56, batch 64 (implicit GEMM dims) */
	const double want_conv[3] = { 4.0288e-05, 4.568e-05, 4.584e-05 };
	const double dims[3][3] = { { 64 * 56 * 56, 64, 576 }, { 64 * 56 * 56, 64, 576 },
				    { 64, 576, 64 * 56 * 56 } };
	for (int pass = 0; pass < 3; pass++) {
		struct op cv = gemm("conv", dims[pass][0], dims[pass][1], dims[pass][2], 1, DTYPE_FP16);
		cv.kind = OP_CONV, cv.conv_pass = pass;
		cr_expect_eq(cost_op_time_ex(c, &cv, &measured), want_conv[pass], "pass %d", pass);
		cr_expect(measured, "pass %d", pass);
	}

	for (int bwd = 0; bwd < 2; bwd++) {
		struct op a;
		memset(&a, 0, sizeof(a));
		snprintf(a.name, sizeof(a.name), "flash_attn");
		a.kind = OP_ATTN, a.pass = bwd ? PASS_BWD : PASS_FWD, a.dtype = DTYPE_BF16;
		a.batch = 32, a.m = a.n = 4096, a.k = 128, a.causal = true;
		a.flops = attention_flops(ATTN_FLASH, true, bwd, 32, 4096, 128);
		double t = cost_op_time_ex(c, &a, &measured), want = bwd ? 0.00075656 : 0.000255328;
		cr_expect(measured, "pass %d", bwd);
		/* the rate is the entry's 4-5 significant TFLOP/s digits */
		cr_expect(fabs(t / want - 1) < 1e-5, "pass %d: %.9g s, measured %.9g s", bwd, t, want);
	}

	/* s 8192 with 8 heads (Llama 70B at TP 8): the 8-head entry's rate
	 * (501 TFLOP/s), not the 4-head one's (393) that shares its s;
	 * 256 heads, 8x beyond the excerpt's largest (32): the roofline */
	struct op a8;
	memset(&a8, 0, sizeof(a8));
	snprintf(a8.name, sizeof(a8.name), "flash_attn_8192");
	a8.kind = OP_ATTN, a8.pass = PASS_FWD, a8.dtype = DTYPE_BF16;
	a8.batch = 8, a8.m = a8.n = 8192, a8.k = 128, a8.causal = true;
	a8.flops = attention_flops(ATTN_FLASH, true, false, 8, 8192, 128);
	cr_expect_float_eq(cost_op_time_ex(c, &a8, &measured), a8.flops / 501.192e12, 1e-15);
	cr_expect(measured);
	a8.batch = 256, a8.flops = attention_flops(ATTN_FLASH, true, false, 256, 8192, 128);
	cost_op_time_ex(c, &a8, &measured);
	cr_expect(!measured);

	struct op sw = membound("swiglu", "bias_swiglu_fwd", 16777216, 0);
	cr_expect_eq(cost_op_time_ex(c, &sw, &measured), 9.648e-06);
	cr_expect(measured);
	struct op rms = membound("rms", "rmsnorm_fwd", 67084276, 4096);
	cr_expect_eq(cost_op_time_ex(c, &rms, &measured), 5.52e-05);
	cr_expect(measured);
	struct op res = membound("residual", "residual_fwd", 268435456, 0);
	cr_expect_eq(cost_op_time_ex(c, &res, &measured), 6.7312e-05);
	cr_expect(measured);

	const char *names;
	cr_expect_eq(cost_roofline_ops(c, &names), 1, "%s", names);
	cr_expect_str_eq(names, "flash_attn_8192");
	cost_destroy(c);
	diag_finish(&d);
}

static char *resnet50_h200_text(const char *profile_path, int micro_batch)
{
	static char text[4096];
	snprintf(text, sizeof(text),
		 "{\"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\",\n"
		 " \"name\": \"resnet50-h200-profile\", \"model\": \"%s\", \"topology\": \"%s\",\n"
		 " \"nodes\": 1,\n"
		 " \"training\": {\"global_batch\": %d, \"micro_batch\": %d, \"precision\": \"fp16\"},\n"
		 " \"compute\": {\"stack\": \"mxnet-normconv\", \"cost\": \"profile\", \"profile\": \"%s\"}}\n",
		 src_path("models/zoo/resnet50.json"), src_path("topologies/hgx-h200.json"),
		 8 * micro_batch, micro_batch, profile_path);
	return text;
}

/* A CNN scenario whose profile is refused reports the profile's error
 * only: without a loaded model the scenario cannot tell a CNN (no
 * seq_len) from a transformer, so it must not ask for seq_len (it did). */
Test(profile, cnn_scenario_with_a_refused_profile_is_not_asked_for_seq_len)
{
	char *dir = tmp_dir(), *text = excerpt_with("\"gemm_with_copy_s\": 0.00162397",
						   "\"gemm_with_copy_s\": 0.5");
	char *prof = write_file(dir, "bad.json", text), want[4096];
	snprintf(want, sizeof(want),
		 "%s: /interference/gemm_with_copy_s: error: must be within 100 x of gemm_alone_s "
		 "(0.00170349 s: a GEMM slowed or sped up more than that by a copy is no measurement), "
		 "got 0.5 s\n", prof);
	expect_run_error(resnet50_h200_text(prof, 32), want);
	free(prof);
	free(text);
	free(dir);
}

/* The ResNet-50 H200 scenario priced by the measured excerpt runs; its
 * 3x3 64-channel convolutions (measured at batch 32) come from the
 * profile at their measured times. */
Test(profile, resnet50_on_h200_runs_with_the_measured_profile)
{
	json_t *r = report_of_text(resnet50_h200_text(src_path(H200_EXCERPT), 32));
	json_t *cm = json_object_get(r, "cost_model"), *ops = json_object_get(cm, "ops_per_microbatch"), *o;
	size_t i;
	int seen = 0;
	cr_expect_str_eq(json_string_value(json_object_get(cm, "source")), "profile");
	json_array_foreach(ops, i, o) {
		const char *name = json_string_value(json_object_get(o, "op"));
		if (strcmp(name, "conv3x3") != 0 || json_number_value(json_object_get(o, "n")) != 64 ||
		    json_number_value(json_object_get(o, "m")) != 32 * 56 * 56)
			continue;
		cr_expect_str_eq(json_string_value(json_object_get(o, "source")), "profile");
		cr_expect_float_eq(json_number_value(json_object_get(o, "time_s")), 2.696e-05, 1e-12);
		seen++;
	}
	cr_expect_gt(seen, 0);
	cr_expect_gt(jnum(r, "summary/iteration_time_s"), 0);
	json_decref(r);
}

/* The committed profile itself loads on its GPU's preset, every entry of
 * every section (no error; the interference warning), and an fp8 GEMM and
 * a cuDNN attention backward of its shapes are priced from it. */
Test(profile, the_committed_h200_profile_loads_whole)
{
	const char *path = src_path("calib/profiles/h200-sxm5-141gb.json");
	struct gpu_spec g = h200_preset();
	struct diag d;
	bool measured;
	diag_init(&d, NULL);
	struct profile *p = profile_load(path, &d);
	cr_assert_not_null(p, "%s", diag_text(&d));
	cr_expect_eq(p->ngemm, 3371);
	cr_expect_eq(p->nconv, 243);
	cr_expect_eq(p->nmem, 930);
	cr_expect_eq(p->nattn, 120);
	cr_expect_eq(p->nbw, 73);
	profile_destroy(p);
	struct cost *c = cost_profile_create(&g, path, &d);
	cr_assert_not_null(c, "%s", diag_text(&d));
	cr_expect_eq(diag_count(&d), 0);
	/* measured twice (grid, gemm 1031, and model shapes, 3194): the
	 * geometric mean of the two times */
	struct op f8 = gemm("fp8", 8192, 8192, 8192, 1, DTYPE_FP8);
	cr_expect_float_eq(cost_op_time_ex(c, &f8, &measured), sqrt(0.000757504 * 0.00076208), 1e-15);
	cr_expect(measured);
	struct op a;
	memset(&a, 0, sizeof(a));
	a.kind = OP_ATTN, a.pass = PASS_BWD, a.dtype = DTYPE_BF16;
	a.batch = 64, a.m = a.n = 8192, a.k = 128, a.causal = true;
	a.flops = attention_flops(ATTN_FLASH, true, true, 64, 8192, 128);
	cr_expect_float_eq(cost_op_time_ex(c, &a, &measured), a.flops / 495.814e12, 1e-15);
	cr_expect(measured);
	cost_destroy(c);
	diag_finish(&d);
}
