/* test-trace-calib: a calib profile from a PyTorch profiler trace
 * (models/kineto.h, models/trace_calib.h, `ddlsim calib-trace`).
 *
 * The fixture tests/data/trace-calib-h100.json follows Kineto's output
 * (libkineto/src/output_json.cpp, CuptiActivity.cpp, DeviceProperties.cpp;
 * tests/data/README.md): three ProfilerSteps, the first a slow warm-up;
 * aten::linear > aten::addmm (bf16, three calls after the warm-up, one of
 * them two kernels: GEMM + split-K reduction), an fp32 aten::mm, a bf16
 * aten::bmm, SDPA's flash forward (scaled_dot_product_attention >
 * _scaled_dot_product_flash_attention > _flash_attention_forward) and
 * backward on autograd's thread (its kernels carry no External id: found
 * through the launch's correlation), an aten::mm on the CPU (no kernel),
 * an aten::mm without "Input Dims", a bf16 layer norm and softmax, a
 * layer norm backward (not imported), an aten::add_ (not an op of
 * interest) and an NCCL kernel with no launch in the trace. Figures below are the fixture's
 * durations worked by hand. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "attention.h"
#include "kineto-private.h"
#include "kineto.h"
#include "profile.h"
#include "testutil.h"
#include "trace_calib.h"

#define FIXTURE "tests/data/trace-calib-h100.json"

static void expect_close(double got, double want, const char *what)
{
	cr_expect(fabs(got - want) <= 1e-12 * fabs(want), "%s: got %.17g, want %.17g", what, got, want);
}

static struct trace_calib *build(const char *path, bool keep_first, struct kineto_trace **t)
{
	struct diag d;
	struct trace_calib_opts o = { .keep_first_step = keep_first };
	diag_init(&d, NULL);
	*t = kineto_load(path, trace_calib_ops, &d);
	cr_assert_not_null(*t, "%s", diag_text(&d));
	diag_finish(&d);
	return trace_calib_build(*t, &o);
}

Test(trace_calib, attributes_kernels_to_innermost_ops)
{
	struct kineto_trace *t;
	struct trace_calib *tc = build(src_path(FIXTURE), false, &t);

	/* 24 under ops of interest, aten::add_'s under another op, an NCCL
	 * kernel whose correlation no launch in the trace holds */
	cr_expect_eq(t->nkernels, 26);
	cr_expect_eq(t->nkernels_attributed, 24);
	cr_expect_eq(t->nkernels_orphan, 1);
	cr_expect_eq(t->nsteps, 3);
	cr_expect_eq(t->first_step, 1);
	cr_expect(t->has_device);
	cr_expect_str_eq(t->gpu_name, "NVIDIA H100 80GB HBM3");
	cr_expect_eq(t->sm_count, 132);
	/* step 1 (warm-up): linear, addmm, the flash wrapper and its forward */
	cr_expect_eq(tc->calls_warmup, 4);
	/* 3 addmm, 2 mm, 2 bmm, 2 flash forward, 2 flash backward (4 kernels),
	 * 2 layer norm, 2 softmax */
	cr_expect_eq(tc->calls_priced, 15);
	cr_expect_eq(tc->kernels_priced, 18);
	/* 3 linear, 2 _scaled_dot_product_flash_attention, 2 ..._backward */
	cr_expect_eq(tc->calls_wrapper, 7);
	cr_expect_eq(tc->calls_skipped, 6);
	cr_assert_eq(tc->nskip, 3);
	cr_expect_str_eq(tc->skip[0].op, "aten::mm");
	cr_expect_eq(tc->skip[0].count, 2);
	cr_expect(strstr(tc->skip[0].why, "no kernel attributed"), "%s", tc->skip[0].why);
	cr_expect_eq(tc->skip[1].count, 2);
	cr_expect(strstr(tc->skip[1].why, "no \"Input Dims\""), "%s", tc->skip[1].why);
	cr_expect_str_eq(tc->skip[2].op, "aten::native_layer_norm_backward");
	cr_expect(strstr(tc->skip[2].why, "not imported"), "%s", tc->skip[2].why);
	trace_calib_destroy(tc);
	kineto_destroy(t);
}

Test(trace_calib, prices_shapes_at_medians)
{
	struct kineto_trace *t;
	struct trace_calib *tc = build(src_path(FIXTURE), false, &t);
	cr_assert_eq(tc->ne, 7);
	const struct trace_calib_entry *e = tc->e;

	/* addmm: 500, 530 (step 2), 400 + 120 (step 3) us; warm-up 1000 dropped */
	cr_expect(!e[0].attn && e[0].dtype == DTYPE_BF16);
	cr_expect(e[0].m == 8192 && e[0].n == 4096 && e[0].k == 4096 && e[0].batch == 1);
	cr_expect(e[0].transa == 'N' && e[0].transb == 'T');  /* mat2 strides [1, 4096] */
	cr_expect_eq(e[0].nt, 3);
	expect_close(e[0].time_s, 520e-6, "addmm time");
	expect_close(e[0].tflops, 2.0 * 8192 * 4096 * 4096 / 520e-6 * 1e-12, "addmm tflops");
	/* mm: "float", an sgemm kernel: fp32; 100 and 110 us */
	cr_expect(e[1].dtype == DTYPE_FP32 && e[1].m == 1024 && e[1].n == 512 && e[1].k == 2048);
	cr_expect(e[1].transa == 'N' && e[1].transb == 'N');
	cr_expect_eq(e[1].nt, 2);
	expect_close(e[1].time_s, 105e-6, "mm time");
	expect_close(e[1].tflops, 2.0 * 1024 * 512 * 2048 / 105e-6 * 1e-12, "mm tflops");
	/* bmm: 16 x (512 x 128) @ (128 x 512), 10 us */
	cr_expect(e[2].dtype == DTYPE_BF16 && e[2].batch == 16 && e[2].m == 512 && e[2].n == 512 &&
		  e[2].k == 128);
	expect_close(e[2].time_s, 10e-6, "bmm time");
	expect_close(e[2].tflops, 2.0 * 16 * 512 * 512 * 128 / 10e-6 * 1e-12, "bmm tflops");
	/* flash forward, [b, s, h, d] = [2, 2048, 16, 128], causal: 200, 220 us */
	cr_expect(e[3].attn && !e[3].bwd && e[3].causal && e[3].dtype == DTYPE_BF16);
	cr_expect(e[3].b == 2 && e[3].heads == 16 && e[3].s == 2048 && e[3].head_dim == 128);
	cr_expect_str_eq(e[3].op, "aten::_flash_attention_forward");
	expect_close(e[3].time_s, 210e-6, "flash fwd time");
	expect_close(e[3].tflops, attention_flops(ATTN_FLASH, true, false, 32, 2048, 128) / 210e-6 * 1e-12,
		     "flash fwd tflops");
	/* flash backward: 470 + 30, 450 + 30 us */
	cr_expect(e[4].attn && e[4].bwd && e[4].causal && e[4].heads == 16 && e[4].s == 2048);
	cr_expect_eq(e[4].nt, 2);
	expect_close(e[4].time_s, 490e-6, "flash bwd time");
	expect_close(e[4].tflops, attention_flops(ATTN_FLASH, true, true, 32, 2048, 128) / 490e-6 * 1e-12,
		     "flash bwd tflops");
	/* layer norm [8, 2048, 4096] bf16, 100 and 104 us: x and y, gamma and
	 * beta, fp32 mean and rstd per row (16384 rows) */
	cr_expect(e[5].mem && !strcmp(e[5].kernel, "layernorm_fwd") && e[5].dtype == DTYPE_BF16);
	cr_expect(e[5].elements == 67108864 && e[5].row == 4096);
	cr_expect_eq(e[5].bytes, 2.0 * 67108864 * 2 + 2 * 4096 * 2 + 8 * 16384);
	expect_close(e[5].time_s, 102e-6, "layer norm time");
	expect_close(e[5].GBps, 268582912 / 102e-6 * 1e-9, "layer norm GB/s");
	/* softmax over the last dim of [2, 16, 2048, 2048] bf16, 200 us */
	cr_expect(e[6].mem && !strcmp(e[6].kernel, "softmax_fwd") && e[6].row == 2048);
	cr_expect_eq(e[6].bytes, 2.0 * 134217728 * 2);
	expect_close(e[6].GBps, 536870912 / 200e-6 * 1e-9, "softmax GB/s");
	trace_calib_destroy(tc);
	kineto_destroy(t);
}

Test(trace_calib, reads_a_gzipped_trace)
{
	/* tensorboard_trace_handler(use_gzip=True) writes *.pt.trace.json.gz */
	char *dir = tmp_dir(), gz[2048];
	char *text = test_file_text(src_path(FIXTURE));
	snprintf(gz, sizeof(gz), "%s/t.pt.trace.json.gz", dir);
	gzFile z = gzopen(gz, "wb");
	cr_assert_not_null(z);
	cr_assert_eq(gzwrite(z, text, (unsigned)strlen(text)), (int)strlen(text));
	cr_assert_eq(gzclose(z), Z_OK);
	struct kineto_trace *t;
	struct trace_calib *tc = build(gz, false, &t);
	cr_expect_eq(t->nkernels, 26);
	cr_assert_eq(tc->ne, 7);
	expect_close(tc->e[0].time_s, 520e-6, "addmm time");
	trace_calib_destroy(tc);
	kineto_destroy(t);
	free(text);
	free(dir);
}

Test(trace_calib, refuses_a_truncated_gzip)
{
	char *dir = tmp_dir(), gz[2048], cut[2048];
	char *text = test_file_text(src_path(FIXTURE));
	snprintf(gz, sizeof(gz), "%s/t.json.gz", dir);
	gzFile z = gzopen(gz, "wb");
	cr_assert_not_null(z);
	gzwrite(z, text, (unsigned)strlen(text));
	gzclose(z);
	/* its first 1000 bytes */
	FILE *f = fopen(gz, "rb");
	char buf[1000];
	cr_assert_eq(fread(buf, 1, sizeof(buf), f), sizeof(buf));
	fclose(f);
	snprintf(cut, sizeof(cut), "%s/cut.json.gz", dir);
	f = fopen(cut, "wb");
	fwrite(buf, 1, sizeof(buf), f);
	fclose(f);
	struct diag d;
	diag_init(&d, NULL);
	cr_expect_null(kineto_load(cut, trace_calib_ops, &d));
	cr_expect(strstr(diag_text(&d), "cut.json.gz: error: cannot read: unexpected end of file (a "
				       "damaged gzip file?)"), "%s", diag_text(&d));
	diag_finish(&d);
	free(text);
	free(dir);
}

Test(trace_calib, keeps_first_step_when_asked)
{
	struct kineto_trace *t;
	struct trace_calib *tc = build(src_path(FIXTURE), true, &t);
	cr_expect_eq(tc->calls_warmup, 0);
	cr_assert_eq(tc->e[0].nt, 4);           /* 500 520 530 1000: median 525 */
	expect_close(tc->e[0].time_s, 525e-6, "addmm time with the warm-up");
	trace_calib_destroy(tc);
	kineto_destroy(t);
}

/* Run calib-trace on text written to dir/name; its exit code, stderr in
 * *err (caller frees). */
static int run_on(const char *text, const char *extra, char **err, char **out)
{
	char *dir = tmp_dir(), args[4096];
	char *path = write_file(dir, "t.json", text);
	snprintf(args, sizeof(args), "calib-trace %s -o %s/p.json %s", path, dir, extra);
	int rc = run_ddlsim(args, out, err);
	free(path);
	free(dir);
	return rc;
}

static void expect_refused(const char *text, const char *msg)
{
	char *err = NULL;
	cr_expect_eq(run_on(text, "", &err, NULL), 3);
	cr_expect(strstr(err, msg), "expected '%s' in:\n%s", msg, err);
	free(err);
}

Test(trace_calib, refuses_what_is_not_json)
{
	expect_refused("{\"traceEvents\": [", "t.json:1:17: error: malformed JSON");
}

Test(trace_calib, refuses_a_file_without_trace_events)
{
	expect_refused("{\"schemaVersion\": 1}",
		       "t.json: /traceEvents: error: expected an array of trace events");
	expect_refused("[]", "t.json: error: expected a JSON object with \"traceEvents\"");
}

Test(trace_calib, refuses_a_kernel_with_negative_duration)
{
	expect_refused("{\"traceEvents\": [\n"
		       " {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1, \"tid\": 1,"
		       "  \"ts\": 0, \"dur\": 10, \"args\": {\"External id\": 5}},\n"
		       " {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", \"pid\": 0, \"tid\": 7,"
		       "  \"ts\": 20, \"dur\": -3.5, \"args\": {\"External id\": 5, \"correlation\": 9}}]}\n",
		       "t.json: /traceEvents/1/dur: error: must be >= 0 (kineto never writes a negative "
		       "duration: a damaged trace), got -3.5");
}

Test(trace_calib, refuses_a_trace_with_no_gpu)
{
	/* an mm with its kernel, no deviceProperties, no --gpu */
	const char *text =
		"{\"traceEvents\": [\n"
		" {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1, \"tid\": 1,"
		"  \"ts\": 0, \"dur\": 10, \"args\": {\"External id\": 5, \"Input Dims\": [[4096, 4096],"
		"  [4096, 4096]], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\"]}},\n"
		" {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", \"pid\": 0, \"tid\": 7,"
		"  \"ts\": 20, \"dur\": 250, \"args\": {\"External id\": 5, \"correlation\": 9}}]}\n";
	char *err = NULL, *out = NULL, arg[1200];
	cr_expect_eq(run_on(text, "", &err, NULL), 3);
	cr_expect(strstr(err, "t.json: /deviceProperties: error: the trace names no GPU"), "%s", err);
	free(err);
	/* with a preset, the preset's GPU */
	snprintf(arg, sizeof(arg), "--gpu %s", src_path("gpus/h100-sxm5-80gb.json"));
	cr_expect_eq(run_on(text, arg, &err, &out), 0, "%s", err);
	/* 549.8 of the H100 preset's 989.4 bf16 TFLOP/s */
	cr_expect(strstr(out, "GEMM bf16: 1 shapes, 549.8 .. 549.8 TFLOP/s, 55.6 .. 55.6 % of the bf16 "
			      "peak of 'H100-SXM5-80GB' (989.4 TFLOP/s)"), "%s", out);
	free(err);
	free(out);
}

Test(trace_calib, refuses_entries_above_the_presets_peak)
{
	/* a float 4096^3 GEMM in 250 us: 549.8 TFLOP/s, far above fp32's 67 */
	const char *text =
		"{\"traceEvents\": [\n"
		" {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1, \"tid\": 1,"
		"  \"ts\": 0, \"dur\": 10, \"args\": {\"External id\": 5, \"Input Dims\": [[4096, 4096],"
		"  [4096, 4096]], \"Input type\": [\"float\", \"float\"]}},\n"
		" {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"gemm\", \"pid\": 0, \"tid\": 7,"
		"  \"ts\": 20, \"dur\": 250, \"args\": {\"External id\": 5, \"correlation\": 9}}]}\n";
	char *err = NULL, arg[1200];
	snprintf(arg, sizeof(arg), "--gpu %s", src_path("gpus/h100-sxm5-80gb.json"));
	cr_expect_eq(run_on(text, arg, &err, NULL), 3);
	cr_expect(strstr(err, "p.json: /gemm/0: error: a GEMM at 549.8 TFLOP/s is above 1.25 x the fp32 "
			      "peak of 67 TFLOP/s of 'H100-SXM5-80GB' (1 calls of aten::mm, median 0.25 ms): "
			      "did float GEMMs run on TF32 tensor cores? (--tf32)"), "%s", err);
	free(err);
	/* as TF32: within 1.25 x 494.7 TFLOP/s, written */
	snprintf(arg, sizeof(arg), "--gpu %s --tf32", src_path("gpus/h100-sxm5-80gb.json"));
	cr_expect_eq(run_on(text, arg, &err, NULL), 0, "%s", err);
	free(err);
}

Test(trace_calib, written_profile_loads_and_prices_a_scenario)
{
	char *dir = tmp_dir(), args[4096], pp[2048], text[4096];
	char *err = NULL, *out = NULL;
	snprintf(pp, sizeof(pp), "%s/p.json", dir);
	snprintf(args, sizeof(args), "calib-trace %s -o %s", src_path(FIXTURE), pp);
	cr_assert_eq(run_ddlsim(args, &out, &err), 0, "%s", err);
	cr_expect(strstr(out, "15 priced (18 kernels) into 7 entries, 4 in the warm-up step, "
			      "7 wrappers"), "%s", out);
	cr_expect(strstr(out, "skipped 2 x aten::mm (first /traceEvents/"), "%s", out);
	cr_expect(strstr(out, "GEMM bf16: 2 shapes, 107.4 .. 528.6 TFLOP/s"), "%s", out);
	free(out);
	free(err);

	struct diag d;
	diag_init(&d, NULL);
	struct profile *p = profile_load(pp, &d);
	cr_assert_not_null(p, "%s", diag_text(&d));
	cr_expect_eq(p->schema_minor, 1);
	cr_expect_str_eq(p->producer, "ddlsim-trace-import");
	cr_expect_str_eq(p->gpu_name, "NVIDIA H100 80GB HBM3");
	cr_expect_eq(p->sm_count, 132);
	cr_expect_str_eq(p->method, "PyTorch profiler trace trace-calib-h100.json, 18 kernels, medians");
	cr_assert_eq(p->ngemm, 3);
	cr_assert_eq(p->nattn, 2);
	cr_assert_eq(p->nmem, 2);
	cr_expect(!strcmp(p->mem[0].kernel, "layernorm_fwd") && p->mem[0].bytes == 268582912 &&
		  p->mem[0].samples == 2);
	/* the batched GEMM as one of b m rows */
	cr_expect(p->gemm[2].m == 8192 && p->gemm[2].n == 512 && p->gemm[2].k == 128);
	cr_expect_eq(p->gemm[0].samples, 3);
	expect_close(p->gemm[0].time_s, 520e-6, "written addmm time");
	cr_expect(p->attn[1].fused && p->attn[1].bwd && p->attn[1].causal && p->attn[1].samples == 2);
	profile_destroy(p);
	diag_finish(&d);

	/* a scenario priced with it (the cost source's peak checks included) */
	snprintf(text, sizeof(text),
		 "{\"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\",\n"
		 " \"name\": \"traced\", \"model\": \"%s\", \"topology\": \"%s\", \"nodes\": 1,\n"
		 " \"training\": {\"seq_len\": 2048, \"global_batch\": 8, \"precision\": \"bf16\"},\n"
		 " \"compute\": {\"cost\": \"profile\", \"profile\": \"%s\"}}\n",
		 src_path("models/zoo/llama2-7b.json"), src_path("topologies/dgx-h100.json"), pp);
	char *sc = write_file(dir, "s.json", text);
	snprintf(args, sizeof(args), "run %s --out %s/r --quiet", sc, dir);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	char rdir[2048];
	snprintf(rdir, sizeof(rdir), "%s/r", dir);
	json_t *r = load_report(rdir);
	cr_assert_not_null(r);
	json_t *cm = json_object_get(r, "cost_model");
	cr_expect_str_eq(json_string_value(json_object_get(cm, "source")), "profile");
	char *m = json_dumps(json_object_get(cm, "measured_ops"), JSON_COMPACT);
	cr_expect(strstr(m, "\"flash_attn\""), "measured ops %s", m);
	free(m);
	json_decref(r);
	free(err);
	free(sc);
	free(dir);
}

/* One fp32 aten::mm whose kernel is kname, priced with float_as_tf32. */
static enum dtype float_mm_dtype(const char *kname, bool as_tf32)
{
	char *dir = tmp_dir(), text[2048];
	snprintf(text, sizeof(text),
		 "{\"traceEvents\": [\n"
		 " {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1, \"tid\": 1,"
		 "  \"ts\": 0, \"dur\": 10, \"args\": {\"External id\": 5, \"Input Dims\": [[64, 64],"
		 "  [64, 64]], \"Input type\": [\"float\", \"float\"]}},\n"
		 " {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": 7,"
		 "  \"ts\": 20, \"dur\": 5, \"args\": {\"External id\": 5, \"correlation\": 9}}]}\n", kname);
	char *path = write_file(dir, "t.json", text);
	struct diag d;
	struct trace_calib_opts o = { .float_as_tf32 = as_tf32 };
	diag_init(&d, NULL);
	struct kineto_trace *t = kineto_load(path, trace_calib_ops, &d);
	cr_assert_not_null(t, "%s", diag_text(&d));
	struct trace_calib *tc = trace_calib_build(t, &o);
	cr_assert_eq(tc->ne, 1);
	enum dtype dt = tc->e[0].dtype;
	trace_calib_destroy(tc);
	kineto_destroy(t);
	diag_finish(&d);
	free(path);
	free(dir);
	return dt;
}

Test(trace_calib, float_gemm_is_fp32_unless_tf32_is_seen_or_said)
{
	cr_expect_eq(float_mm_dtype("ampere_sgemm_64x64_nn", false), DTYPE_FP32);
	cr_expect_eq(float_mm_dtype("sm80_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize64x64x16", false),
		     DTYPE_TF32);
	cr_expect_eq(float_mm_dtype("ampere_sgemm_64x64_nn", true), DTYPE_TF32);
}

Test(trace_calib, a_1_0_profile_may_not_say_samples)
{
	char *dir = tmp_dir();
	char *path = write_file(dir, "p.json",
		"{\"schema\": \"ddlsim.profile\", \"schema_version\": \"1.0\",\n"
		" \"producer\": {\"name\": \"x\", \"version\": \"1\"},\n"
		" \"gpu\": {\"name\": \"NVIDIA H100 80GB HBM3\", \"compute_capability\": \"9.0\",\n"
		"   \"sm_count\": 132, \"hbm_bytes\": 85031714816},\n"
		" \"measured\": {\"date_utc\": \"x\", \"method\": \"x\", \"warmup_runs\": 0,\n"
		"   \"timed_runs\": 1, \"quick\": false},\n"
		" \"gemm\": [{\"dtype\": \"bf16\", \"m\": 4096, \"n\": 4096, \"k\": 4096, \"transa\": \"N\",\n"
		"   \"transb\": \"N\", \"time_s\": 2e-4, \"tflops\": 687.2, \"impl\": \"x\", \"samples\": 3}],\n"
		" \"memory_bound\": [{\"kernel\": \"softmax_fwd\", \"dtype\": \"bf16\", \"elements\": 1048576,\n"
		"   \"row\": 1024, \"bytes\": 4194304, \"time_s\": 5e-6, \"GBps\": 838.9, \"samples\": 2}]}\n");
	struct diag d;
	diag_init(&d, NULL);
	cr_expect_null(profile_load(path, &d));
	cr_expect(strstr(diag_text(&d), "/gpu/sm_clock_max_MHz: error: missing required key 'sm_clock_max_MHz'"), "%s",
		  diag_text(&d));
	cr_expect(strstr(diag_text(&d), "/gemm/0/samples: error: unknown key in schema version 1.0"),
		  "%s", diag_text(&d));
	cr_expect(strstr(diag_text(&d), "/memory_bound/0/samples: error: unknown key in schema version 1.0"),
		  "%s", diag_text(&d));
	diag_finish(&d);
	free(path);
	free(dir);
}

/* A cpu_op with its kernels launched inside it (their launches' External
 * id is the op's), as text. */
#define OP(name, ts, dur, ext, dims, types, extra) \
	" {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"" name "\", \"pid\": 1, \"tid\": 1, \"ts\": " \
	#ts ", \"dur\": " #dur ", \"args\": {\"External id\": " #ext ", \"Input Dims\": " dims \
	", \"Input type\": " types extra "}},\n"
#define KERNEL(ts, dur, ext, corr) \
	" {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": 1," \
	" \"ts\": " #ts ", \"dur\": 1, \"args\": {\"External id\": " #ext ", \"correlation\": " #corr "}},\n" \
	" {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k\", \"pid\": 0, \"tid\": 7, \"ts\": " #ts \
	", \"dur\": " #dur ", \"args\": {\"External id\": " #ext ", \"correlation\": " #corr "}},\n"

Test(trace_calib, rmsnorm_gelu_and_residual_as_memory_bound)
{
	/* [8, 1024, 4096] bf16 (e = 33554432, 8192 rows): a fused rms_norm
	 * (one kernel, 100 us), a composite one (two kernels: skipped), gelu
	 * 120 us, gelu_backward 180 us, add of two tensors 150 us, add of a
	 * tensor and a scalar (skipped), and the GEMM a profile needs */
#define X "[8, 1024, 4096]"
#define BF "\"c10::BFloat16\""
	const char *text = "{\"traceEvents\": [\n"
		OP("aten::rms_norm", 0, 200, 1, "[" X ", [], [4096], []]", "[" BF ", \"\", " BF ", \"Scalar\"]", "")
		KERNEL(10, 100, 1, 101)
		OP("aten::rms_norm", 300, 200, 2, "[" X ", [], [4096], []]", "[" BF ", \"\", " BF ", \"Scalar\"]", "")
		KERNEL(310, 60, 2, 102) KERNEL(320, 70, 2, 103)
		OP("aten::gelu", 600, 200, 3, "[" X "]", "[" BF "]", "")
		KERNEL(610, 120, 3, 104)
		OP("aten::gelu_backward", 900, 250, 4, "[" X ", " X "]", "[" BF ", " BF "]", "")
		KERNEL(910, 180, 4, 105)
		OP("aten::add", 1200, 200, 5, "[" X ", " X ", []]", "[" BF ", " BF ", \"Scalar\"]", "")
		KERNEL(1210, 150, 5, 106)
		OP("aten::add", 1500, 100, 6, "[" X ", [], []]", "[" BF ", \"Scalar\", \"Scalar\"]", "")
		KERNEL(1510, 50, 6, 107)
		OP("aten::mm", 1700, 100, 7, "[[4096, 4096], [4096, 4096]]", "[" BF ", " BF "]", "")
		KERNEL(1710, 250, 7, 108)
		" {\"ph\": \"M\", \"name\": \"end\"}]}\n";
#undef X
#undef BF
	char *dir = tmp_dir();
	char *path = write_file(dir, "t.json", text);
	struct diag d;
	struct trace_calib_opts o = { 0 };
	diag_init(&d, NULL);
	struct kineto_trace *t = kineto_load(path, trace_calib_ops, &d);
	cr_assert_not_null(t, "%s", diag_text(&d));
	diag_finish(&d);
	struct trace_calib *tc = trace_calib_build(t, &o);
	cr_assert_eq(tc->ne, 5);
	double e = 33554432, b = 2;
	const struct trace_calib_entry *r = &tc->e[0], *g = &tc->e[1], *gb = &tc->e[2], *a = &tc->e[3];
	/* calib/bench_mem.c's rmsnorm_fwd: x, gamma, y, fp32 rstd per row */
	cr_expect(r->mem && !strcmp(r->kernel, "rmsnorm_fwd") && r->row == 4096 && r->elements == e);
	cr_expect_eq(r->bytes, 2 * e * b + 4096 * b + 4 * 8192);
	expect_close(r->GBps, (2 * e * b + 4096 * b + 4 * 8192) / 100e-6 * 1e-9, "rmsnorm GB/s");
	cr_expect(!strcmp(g->kernel, "bias_gelu_fwd") && g->row == 0 && g->bytes == 2 * e * b);
	expect_close(g->time_s, 120e-6, "gelu time");
	cr_expect(!strcmp(gb->kernel, "bias_gelu_bwd") && gb->bytes == 3 * e * b);
	expect_close(gb->time_s, 180e-6, "gelu bwd time");
	cr_expect(!strcmp(a->kernel, "residual") && a->bytes == 3 * e * b);
	expect_close(a->GBps, 3 * e * b / 150e-6 * 1e-9, "residual GB/s");
	cr_expect(!tc->e[4].mem && tc->e[4].m == 4096);
	cr_assert_eq(tc->nskip, 2);
	cr_expect(strstr(tc->skip[0].why, "not one kernel: the composite rms_norm"), "%s", tc->skip[0].why);
	cr_expect(strstr(tc->skip[1].why, "not two tensors of one shape"), "%s", tc->skip[1].why);
	trace_calib_destroy(tc);
	kineto_destroy(t);
	free(path);
	free(dir);
}

struct seen {
	int n, last;
	char keys[64];
};

static void count_event(void *ctx, json_t *e, int i)
{
	struct seen *s = ctx;
	const char *k = json_object_iter_key(json_object_iter(e));
	s->n++, s->last = i;
	strncat(s->keys, k ? k : "?", sizeof(s->keys) - strlen(s->keys) - 1);
}

static json_t *stream(const char *text, struct seen *s, bool *had)
{
	memset(s, 0, sizeof(*s));
	return kineto_stream(text, strlen(text), count_event, s, had);
}

Test(trace_calib, streams_events_one_at_a_time)
{
	struct seen s;
	bool had;
	json_t *r = stream("{\"schemaVersion\": 1, \"traceEvents\": [ {\"a\": 1},\n{\"b\": [2, 3]} ],\n"
			   " \"deviceProperties\": [{\"id\": 0}]}\n", &s, &had);
	cr_assert_not_null(r);
	cr_expect(had);
	cr_expect_eq(s.n, 2);
	cr_expect_eq(s.last, 1);
	cr_expect_str_eq(s.keys, "ab");
	/* the other keys kept, the events not */
	cr_expect_eq(json_object_size(r), 2);
	cr_expect(json_is_array(json_object_get(r, "deviceProperties")));
	cr_expect_null(json_object_get(r, "traceEvents"));
	json_decref(r);
	r = stream("{\"traceEvents\": []}", &s, &had);
	cr_expect(r && had && s.n == 0);
	json_decref(r);
	/* not an array: kept for the caller to say so */
	r = stream("{\"traceEvents\": {}}", &s, &had);
	cr_expect(r && !had && json_is_object(json_object_get(r, "traceEvents")));
	json_decref(r);
	/* what the whole decode must report: NULL */
	cr_expect_null(stream("{\"traceEvents\": [{\"a\": 1},]}", &s, &had));
	cr_expect_null(stream("{\"traceEvents\": [{\"a\": 1}", &s, &had));
	cr_expect_null(stream("{\"x\": 1, \"x\": 2, \"traceEvents\": []}", &s, &had));
	cr_expect_null(stream("{\"traceEvents\": [], \"traceEvents\": []}", &s, &had));
	cr_expect_null(stream("{\"traceEvents\": [{\"a\": 1, \"a\": 2}]}", &s, &had));
	cr_expect_null(stream("{\"traceEvents\": []} x", &s, &had));
	cr_expect_null(stream("[]", &s, &had));
}

Test(trace_calib, kernel_of_a_driver_launch_without_external_id)
{
	/* a Triton or cuBLASLt kernel launched with cuLaunchKernel (Kineto's
	 * "cuda_driver"), on another stream, neither it nor its launch with an
	 * External id: the op holding the launch on its thread takes it */
	const char *text = "{\"traceEvents\": [\n"
		" {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1, \"tid\": 1, \"ts\": 0,"
		"  \"dur\": 50, \"args\": {\"External id\": 7, \"Input Dims\": [[1024, 1024], [1024, 1024]],"
		"  \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\"]}},\n"
		" {\"ph\": \"X\", \"cat\": \"cuda_driver\", \"name\": \"cuLaunchKernel\", \"pid\": 1, \"tid\": 1,"
		"  \"ts\": 10, \"dur\": 5, \"args\": {\"correlation\": 31}},\n"
		" {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"triton_mm\", \"pid\": 0, \"tid\": 13, \"ts\": 20,"
		"  \"dur\": 12.5, \"args\": {\"correlation\": 31, \"stream\": 13}}]}\n";
	char *dir = tmp_dir();
	char *path = write_file(dir, "t.json", text);
	struct diag d;
	struct trace_calib_opts o = { 0 };
	diag_init(&d, NULL);
	struct kineto_trace *t = kineto_load(path, trace_calib_ops, &d);
	cr_assert_not_null(t, "%s", diag_text(&d));
	diag_finish(&d);
	cr_expect_eq(t->nkernels_attributed, 1);
	cr_expect_eq(t->nkernels_orphan, 0);
	struct trace_calib *tc = trace_calib_build(t, &o);
	cr_assert_eq(tc->ne, 1);
	expect_close(tc->e[0].time_s, 12.5e-6, "mm time");
	trace_calib_destroy(tc);
	kineto_destroy(t);
	free(path);
	free(dir);
}

Test(trace_calib, string_thread_ids_keep_threads_apart)
{
	/* Kineto before mid-2021 wrote tids as strings: an addmm on thread
	 * "2" overlapping the mm of thread "1" must not take the mm's launch */
	const char *text = "{\"traceEvents\": [\n"
		" {\"ph\": \"X\", \"cat\": \"Operator\", \"name\": \"aten::mm\", \"pid\": 1, \"tid\": \"1\", \"ts\": 0,"
		"  \"dur\": 100, \"args\": {\"Input Dims\": [[64, 64], [64, 64]], \"Input type\": [\"float\", \"float\"]}},\n"
		" {\"ph\": \"X\", \"cat\": \"Operator\", \"name\": \"aten::addmm\", \"pid\": 1, \"tid\": \"2\", \"ts\": 10,"
		"  \"dur\": 50, \"args\": {\"Input Dims\": [[64], [64, 32], [32, 64], [], []],"
		"  \"Input type\": [\"float\", \"float\", \"float\", \"Scalar\", \"Scalar\"]}},\n"
		" {\"ph\": \"X\", \"cat\": \"Runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, \"tid\": \"1\","
		"  \"ts\": 20, \"dur\": 5, \"args\": {\"correlation\": 31, \"external id\": 31}},\n"
		" {\"ph\": \"X\", \"cat\": \"Kernel\", \"name\": \"sgemm\", \"pid\": 0, \"tid\": \"stream 7\", \"ts\": 30,"
		"  \"dur\": 4, \"args\": {\"correlation\": 31, \"external id\": 31}}]}\n";
	char *dir = tmp_dir();
	char *path = write_file(dir, "t.json", text);
	struct diag d;
	struct trace_calib_opts o = { 0 };
	diag_init(&d, NULL);
	struct kineto_trace *t = kineto_load(path, trace_calib_ops, &d);
	cr_assert_not_null(t, "%s", diag_text(&d));
	diag_finish(&d);
	struct trace_calib *tc = trace_calib_build(t, &o);
	cr_assert_eq(tc->ne, 1);
	cr_expect_str_eq(tc->e[0].op, "aten::mm");
	cr_expect(tc->e[0].m == 64 && tc->e[0].n == 64 && tc->e[0].k == 64);
	trace_calib_destroy(tc);
	kineto_destroy(t);
	free(path);
	free(dir);
}

/* A path longer than a trace keeps (1023 bytes) is refused, not said and
 * then read on (kineto.c's trace_new(), split out for the nsys reader):
 * calib-trace exits 3 and writes no profile. */
Test(trace_calib, path_too_long_to_keep_is_refused)
{
	char *dir = tmp_dir(), p[2048], args[4096], *err = NULL;
	size_t n = (size_t)snprintf(p, sizeof(p), "%s", dir);
	for (int i = 0; i < 5; i++) {
		n += (size_t)snprintf(p + n, sizeof(p) - n, "/%0200d", i);
		cr_assert_eq(mkdir(p, 0700), 0);
	}
	/* a real trace calib-trace prices (trace-real/README.md) */
	snprintf(p + n, sizeof(p) - n, "/t.json.gz");
	FILE *in = fopen(src_path("tests/data/trace-real/a100-80gb-negqueue.json.gz"), "rb"), *out = fopen(p, "wb");
	cr_assert(in && out);
	char buf[4096];
	for (size_t k; (k = fread(buf, 1, sizeof(buf), in)) > 0;)
		cr_assert_eq(fwrite(buf, 1, k, out), k);
	fclose(in);
	fclose(out);
	snprintf(args, sizeof(args), "calib-trace %s -o %s/p.json", p, dir);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3, "%s", err);
	cr_expect(strstr(err, "is longer than the 1023 this ddlsim keeps"), "%s", err);
	free(err);
	snprintf(p, sizeof(p), "%s/p.json", dir);
	cr_expect(!file_exists(p));
	free(dir);
}

/* The fixture with dropout_p 0.1 on every attention call: a profile's
 * attention is priced without dropout and the simulator multiplies it by
 * the measured ratio (models/attention.h), so such calls are skipped and
 * said, not priced twice. (Mutated: the dropout check taken out of
 * causal_of, the two flash entries were priced from the dropout calls.) */
Test(trace_calib, skips_attention_calls_with_dropout)
{
	FILE *in = fopen(src_path(FIXTURE), "rb");
	cr_assert_not_null(in);
	char path[] = "/tmp/ddlsim-trace-dropout-XXXXXX";
	int fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	FILE *out = fdopen(fd, "wb");
	char buf[4096];
	int replaced = 0;
	while (fgets(buf, sizeof(buf), in)) {
		/* dropout_p just before is_causal "True" in Concrete Inputs */
		char *at = strstr(buf, "\"0.\", \"True\"");
		if (at) {
			fwrite(buf, 1, (size_t)(at - buf), out);
			fputs("\"0.1\", \"True\"", out);
			fputs(at + strlen("\"0.\", \"True\""), out);
			replaced++;
		} else {
			fputs(buf, out);
		}
	}
	fclose(in);
	fclose(out);
	cr_assert_gt(replaced, 0, "no dropout_p in the fixture's attention calls");
	struct kineto_trace *t;
	struct trace_calib *tc = build(path, false, &t);
	unlink(path);
	for (int i = 0; i < tc->ne; i++)
		cr_expect(!tc->e[i].attn, "entry %d (%s) is attention", i, tc->e[i].op);
	int drop = 0;
	for (int i = 0; i < tc->nskip; i++)
		drop += strstr(tc->skip[i].why, "dropout_p 0.1") != NULL;
	cr_expect_geq(drop, 2, "attention calls skipped for their dropout: %d", drop);
	trace_calib_destroy(tc);
	kineto_destroy(t);
}
