/* test-trace-real: calib-trace on excerpts of real PyTorch profiler traces
 * (tests/data/trace-real/README.md: HTA's test data, three GPUs, four
 * training jobs).
 *
 * Every expected entry below is a line of tests/data/trace-real/expect.py
 * run on the ORIGINAL trace (not the excerpt), which finds each op's
 * kernels by the time nesting of their launches, independently of
 * models/kineto.c; the test holds the op class, shape, calls and median. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kineto.h"
#include "testutil.h"
#include "trace_calib.h"

#define DIFF "tests/data/trace-real/a100-pg509-trace-diff.json.gz"
#define NEGQ "tests/data/trace-real/a100-80gb-negqueue.json.gz"
#define MI250 "tests/data/trace-real/mi250-minitoy.json.gz"
#define NCCL "tests/data/trace-real/a100-pg509-nccl-ddp.json.gz"
#define SAMPLED "tests/data/trace-real/a100-sampled-nodevprops.json.gz"
#define R50 "tests/data/trace-real/v100-resnet50-kineto2021.json.gz"

static struct trace_calib *build(const char *rel, struct kineto_trace **t)
{
	struct diag d;
	struct trace_calib_opts o = { 0 };
	diag_init(&d, NULL);
	*t = kineto_load(src_path(rel), trace_calib_ops, &d);
	cr_assert_not_null(*t, "%s", diag_text(&d));
	diag_finish(&d);
	return trace_calib_build(*t, &o);
}

/* The GEMM entry of op, dtype and shape (m counts the batch's rows). */
static const struct trace_calib_entry *gemm(const struct trace_calib *tc, const char *op, enum dtype dt,
					    double m, double n, double k)
{
	for (int i = 0; i < tc->ne; i++) {
		const struct trace_calib_entry *e = &tc->e[i];
		if (!e->mem && !e->attn && !strcmp(e->op, op) && e->dtype == dt && e->batch * e->m == m &&
		    e->n == n && e->k == k)
			return e;
	}
	cr_assert_fail("no %s entry %g x %g x %g", op, m, n, k);
	return NULL;
}

static const struct trace_calib_entry *mem(const struct trace_calib *tc, const char *kernel, double elements,
					   double row)
{
	for (int i = 0; i < tc->ne; i++) {
		const struct trace_calib_entry *e = &tc->e[i];
		if (e->mem && !strcmp(e->kernel, kernel) && e->elements == elements && e->row == row)
			return e;
	}
	cr_assert_fail("no %s entry of %g elements, row %g", kernel, elements, row);
	return NULL;
}

/* calls and median (us) as expect.py prints them */
static void expect_entry(const struct trace_calib_entry *e, int calls, double median_us)
{
	cr_expect_eq(e->nt, calls, "%s: %d calls, want %d", e->op, e->nt, calls);
	cr_expect(fabs(e->time_s * 1e6 - median_us) < 1e-6, "%s: median %.6f us, want %.3f", e->op,
		  e->time_s * 1e6, median_us);
}

Test(trace_real, a100_trace_diff_kernels_found_through_their_launches)
{
	/* launches whose External id is their correlation: the op is the one
	 * that holds the launch on its thread (without it, no kernel is
	 * attributed and nothing is priced) */
	struct kineto_trace *t;
	struct trace_calib *tc = build(DIFF, &t);
	cr_expect_str_eq(t->gpu_name, "NVIDIA A100-PG509-200");
	cr_expect_eq(t->sm_count, 108);
	cr_expect_eq(t->nkernels, 1116);
	cr_expect_eq(t->nkernels_attributed, 1116);
	cr_expect_eq(t->nkernels_orphan, 0);
	cr_expect(tc->dropped_first);
	cr_expect_eq(tc->ne, 169);      /* expect.py: 169 lines */
	cr_expect_eq(tc->calls_priced, 395);
	trace_calib_destroy(tc);
	kineto_destroy(t);
}

Test(trace_real, a100_trace_diff_entries)
{
	struct kineto_trace *t;
	struct trace_calib *tc = build(DIFF, &t);
	/* CUTLASS tensorop_s1688gemm kernels: TF32 (at 2 x 1024 x 1024 x 1705
	 * / 142 us = 25 TFLOP/s; fp32 entries are SIMT sgemm / gemv kernels) */
	expect_entry(gemm(tc, "aten::addmm", DTYPE_TF32, 1024, 1024, 1705), 1, 142);
	expect_entry(gemm(tc, "aten::addmm", DTYPE_TF32, 1024, 100, 256), 13, 9);
	expect_entry(gemm(tc, "aten::addmm", DTYPE_TF32, 1024, 1024, 2048), 2, 58.5);
	expect_entry(gemm(tc, "aten::addmm", DTYPE_FP32, 98304, 15, 15), 1, 34);
	/* bmm [1024, 96, 647] x [1024, 647, 30]: m counts the batch's rows */
	expect_entry(gemm(tc, "aten::bmm", DTYPE_TF32, 98304, 30, 647), 2, 341.5);
	expect_entry(gemm(tc, "aten::bmm", DTYPE_FP32, 662528, 96, 30), 1, 433);
	/* matmul [1024, 96, 50] x [50, 15] folded into one mm */
	expect_entry(gemm(tc, "aten::matmul", DTYPE_FP32, 98304, 15, 50), 2, 46.5);
	const struct trace_calib_entry *ln = mem(tc, "layernorm_fwd", 524288, 512);
	expect_entry(ln, 15, 26);
	cr_expect_eq(ln->bytes, 2.0 * 524288 * 4 + 2 * 512 * 4 + 8 * 1024);
	const struct trace_calib_entry *add = mem(tc, "residual", 63602688, 0);
	expect_entry(add, 3, 567);
	cr_expect_eq(add->bytes, 3.0 * 63602688 * 4);
	cr_expect(fabs(add->GBps - 3.0 * 63602688 * 4 / 567e-6 * 1e-9) < 1e-9);
	trace_calib_destroy(tc);
	kineto_destroy(t);
}

Test(trace_real, a100_80gb_every_entry)
{
	struct kineto_trace *t;
	struct trace_calib *tc = build(NEGQ, &t);
	cr_expect_str_eq(t->gpu_name, "NVIDIA A100-SXM4-80GB");
	cr_assert_eq(tc->ne, 9);        /* expect.py: 9 lines */
	cr_expect_eq(tc->steps_timed, 4);      /* ProfilerStep#551-554 */
	expect_entry(gemm(tc, "aten::addmm", DTYPE_TF32, 4096, 64, 100), 4, 14);
	expect_entry(gemm(tc, "aten::addmm", DTYPE_TF32, 4096, 64, 2798), 4, 93);
	expect_entry(gemm(tc, "aten::mm", DTYPE_FP32, 4096, 2798, 64), 4, 108);
	expect_entry(gemm(tc, "aten::mm", DTYPE_TF32, 64, 100, 4096), 4, 44.5);
	expect_entry(gemm(tc, "aten::mm", DTYPE_TF32, 64, 2798, 4096), 4, 146);
	expect_entry(mem(tc, "residual", 11460608, 0), 4, 95.5);
	expect_entry(mem(tc, "residual", 11722752, 0), 4, 76);
	expect_entry(mem(tc, "residual", 256, 0), 36, 3);
	expect_entry(mem(tc, "residual", 32768, 0), 36, 4);
	trace_calib_destroy(tc);
	kineto_destroy(t);
}

Test(trace_real, mi250_empty_last_step_is_no_reason_to_drop_the_first)
{
	/* ProfilerStep#1 holds the step, #2 (49 us) nothing: dropping #1 as
	 * warm-up would leave nothing to price */
	struct kineto_trace *t;
	struct trace_calib *tc = build(MI250, &t);
	cr_expect_str_eq(t->gpu_name, "AMD Radeon Graphics");
	cr_expect_eq(t->sm_count, 104);
	cr_expect_eq(t->nsteps, 2);
	cr_expect(!tc->dropped_first);
	cr_expect_eq(tc->steps_timed, 1);      /* the profile's timed_runs: #2 held nothing */
	cr_assert_eq(tc->ne, 2);
	/* addmm: the bias broadcast (6.88 us) and rocBLAS's Cijk kernel (17.6 us,
	 * launched by hipExtModuleLaunchKernel) */
	expect_entry(gemm(tc, "aten::addmm", DTYPE_FP32, 5, 128, 128), 1, 24.48);
	expect_entry(gemm(tc, "aten::mm", DTYPE_FP32, 128, 128, 5), 1, 12.64);
	trace_calib_destroy(tc);
	kineto_destroy(t);
}

Test(trace_real, nccl_collectives_summed_up)
{
	struct kineto_trace *t;
	struct trace_calib *tc = build(NCCL, &t);
	/* NCCL 2.17 launches its kernels with cudaLaunchKernelExC: all found */
	cr_assert_eq(t->ncomm, 21);
	cr_expect_eq(t->nkernels_orphan, 0);
	cr_expect_str_eq(t->comm[0].coll, "all_reduce");   /* ncclKernel_AllReduce_RING_LL_Sum_float */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	kineto_comm_summary(t, tc->dropped_first, f);
	fclose(f);
	/* expect.py-style from the original: allreduce of 6637568 floats, 2
	 * calls after ProfilerStep#4, median 2526.9265 us */
	cr_expect(strstr(buf, "collectives: 14 NCCL kernels after the warm-up step"), "%s", buf);
	cr_expect(strstr(buf, "  all_reduce in 26550272 B out 26550272 B: 2 calls, median 2.527 ms, "
			 "10.51 GB/s of input\n"), "%s", buf);
	cr_expect(strstr(buf, "  broadcast in 424 B out 424 B: 2 calls, median 0.007776 ms"), "%s", buf);
	free(buf);
	trace_calib_destroy(tc);
	kineto_destroy(t);
}

Test(trace_real, a100_without_device_properties_needs_gpu_and_tf32)
{
	/* HTA's sampled trace: no deviceProperties; one aten::mm of its
	 * sampling kept only the split-K reduction of its GEMM (7 us: 59.9
	 * "fp32" TFLOP/s), which the A100 preset's peak check refuses */
	const char *sq = src_path(SAMPLED);
	char *dir = tmp_dir(), args[4096], *err = NULL, *out = NULL;
	snprintf(args, sizeof(args), "calib-trace %s -o %s/p.json", sq, dir);
	cr_expect_eq(run_ddlsim(args, &out, &err), 3);
	cr_expect(strstr(err, "/deviceProperties: error: the trace names no GPU"), "%s", err);
	free(out), free(err);
	snprintf(args, sizeof(args), "calib-trace %s -o %s/p.json --gpu %s", sq, dir,
		 src_path("gpus/a100-sxm4-80gb.json"));
	cr_expect_eq(run_ddlsim(args, &out, &err), 3);
	cr_expect(strstr(err, "error: a GEMM at 59.92 TFLOP/s is above 1.25 x the fp32 peak of 19.5 "
			 "TFLOP/s of 'A100-SXM4-80GB' (1 calls of aten::mm, median 0.007 ms)"), "%s", err);
	free(out), free(err);
	snprintf(args, sizeof(args), "calib-trace %s -o %s/p.json --gpu %s --tf32", sq, dir,
		 src_path("gpus/a100-sxm4-80gb.json"));
	cr_expect_eq(run_ddlsim(args, &out, &err), 0, "%s", err);
	/* fp32 and tf32 calls of one shape merge: 146 entries (expect.py) less 3 */
	cr_expect(strstr(out, "202 priced (207 kernels) into 143 entries, 325 in the warm-up step"), "%s", out);
	cr_expect(strstr(out, "GEMM tf32: 140 shapes, 0.0 .. 111.2 TFLOP/s, 0.0 .. 71.3 % of the tf32 peak "
			 "of 'A100-SXM4-80GB'"), "%s", out);
	/* expect.py: aten::mm 512 x 8192 x 8192, 1 call, 618 us */
	cr_expect(strstr(out, "  gemm tf32 512 x 8192 x 8192: 1 calls, median 0.618 ms, 111.2 TFLOP/s "
			 "(aten::mm)\n"), "%s", out);
	free(out), free(err);
	free(dir);
}

Test(trace_real, v100_resnet50_of_2021_kineto_names)
{
	/* PyTorch 1.9's Kineto: "Operator", "Runtime", "Kernel", string tids
	 * ("25738", "stream 7"), "external id"; the backward on thread 25772 */
	struct kineto_trace *t;
	struct trace_calib *tc = build(R50, &t);
	cr_expect_str_eq(t->gpu_name, "Tesla V100-DGXS-32GB");
	cr_expect_eq(t->sm_count, 80);
	cr_expect_eq(t->nkernels, 150);
	cr_expect_eq(t->nkernels_attributed, 150);
	cr_expect_eq(t->nsteps, 2);
	cr_assert_eq(tc->ne, 7);        /* expect.py: 7 lines */
	expect_entry(gemm(tc, "aten::addmm", DTYPE_FP32, 32, 1000, 2048), 1, 33);
	expect_entry(gemm(tc, "aten::mm", DTYPE_FP32, 1000, 2048, 32), 1, 18);
	expect_entry(gemm(tc, "aten::mm", DTYPE_FP32, 32, 2048, 1000), 1, 27);
	expect_entry(mem(tc, "residual", 12845056, 0), 4, 187);
	expect_entry(mem(tc, "residual", 25690112, 0), 3, 373);
	expect_entry(mem(tc, "residual", 3211264, 0), 2, 49);
	expect_entry(mem(tc, "residual", 6422528, 0), 7, 95);
	trace_calib_destroy(tc);
	kineto_destroy(t);
}
