/* test-trace-roundtrip: a scenario's per-kernel table written as a
 * PyTorch profiler trace (`ddlsim run --format kineto`,
 * reports/report_kineto.c), read back by `ddlsim calib-trace`, and the
 * scenario run again on that profile: every op the profile prices costs
 * what it cost in the trace, to 1 %.
 *
 * quickstart (Llama-2 7B, bf16, A100) under the roofline: its GEMMs, flash
 * attention (forward and backward) and RMSNorm go through the trace
 * (aten::mm, aten::_scaled_dot_product_flash_attention(_backward),
 * aten::rms_norm); the rest (rope, SwiGLU, residual, cross entropy, the
 * embedding) is written as ddlsim:: ops calib-trace does not read, and
 * stays on the roofline. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static json_t *ops_of(json_t *report)
{
	json_t *a = json_object_get(json_object_get(report, "cost_model"), "ops_per_microbatch");
	cr_assert(json_is_array(a));
	return a;
}

Test(trace_roundtrip, profile_from_the_written_trace_prices_each_op_as_traced)
{
	char *dir = tmp_dir(), args[8192], pp[2048], rdir[2048];
	char *err = NULL, *out = NULL;

	snprintf(args, sizeof(args), "run %s --out %s/a --format json,kineto --quiet",
		 src_path("scenarios/quickstart.json"), dir);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	free(err);
	snprintf(pp, sizeof(pp), "%s/p.json", dir);
	snprintf(args, sizeof(args), "calib-trace %s/a/kineto.pt.trace.json -o %s", dir, pp);
	cr_assert_eq(run_ddlsim(args, &out, &err), 0, "%s", err);
	/* 20 calls: 10 GEMM shapes, 2 attention, 1 RMSNorm */
	cr_expect(strstr(out, "20 priced (20 kernels) into 13 entries, 0 in the warm-up step"), "%s", out);
	free(out);
	free(err);

	snprintf(rdir, sizeof(rdir), "%s/a", dir);
	json_t *ra = load_report(rdir), *rb = report_on_profile(pp);
	cr_assert(ra && rb);
	json_t *a = ops_of(ra), *b = ops_of(rb);
	cr_assert_eq(json_array_size(a), json_array_size(b));
	int profiled = 0, gemms = 0;
	for (size_t i = 0; i < json_array_size(a); i++) {
		json_t *x = json_array_get(a, i), *y = json_array_get(b, i);
		const char *name = json_string_value(json_object_get(y, "op"));
		double ta = json_number_value(json_object_get(x, "time_s"));
		double tb = json_number_value(json_object_get(y, "time_s"));
		bool prof = !strcmp(json_string_value(json_object_get(y, "source")), "profile");
		bool gemm = json_number_value(json_object_get(x, "n")) > 0;
		gemms += gemm;
		cr_expect(!gemm || prof, "%s: a GEMM not priced from the trace's profile", name);
		if (!prof)
			continue;
		profiled++;
		cr_expect(fabs(tb / ta - 1) <= 0.01, "%s: %.6g s in the trace, %.6g s from its profile "
			  "(%+.3f %%)", name, ta, tb, 100 * (tb / ta - 1));
	}
	/* 15 GEMMs and the 2 attention cores (n > 0), and the 3 RMSNorms */
	cr_expect_eq(gemms, 17);
	cr_expect_eq(profiled, 20);
	char *m = json_dumps(json_object_get(json_object_get(rb, "cost_model"), "measured_ops"), JSON_COMPACT);
	cr_expect(strstr(m, "\"qkv\"") && strstr(m, "\"flash_attn\"") && strstr(m, "\"rmsnorm\""), "%s", m);
	free(m);
	json_decref(ra);
	json_decref(rb);
	free(dir);
}
