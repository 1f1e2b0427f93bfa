/* test-megatron: the weak-scaling table of Narayanan et al. 2021 (seed
 * 003), each row a shipped scenario, predicted vs published TFLOP/s per
 * GPU.
 *
 * Until issue 9 the A100's gemm_max (0.72) had been fitted to this very
 * table (every row within 8 %, mean 3.1 %). It is now the A100's measured
 * best-GEMM fraction (0.869, mamf-finder, topologies/dgx-a100.json), and
 * the table is a validation, not a fit: every row is over-predicted, by
 * +10.5 % (18B) to +22.2 % (1T), mean 16.9 %: what the roofline does not
 * price (GEMM shapes below the best one, framework and launch overheads,
 * memory-bound kernels below their bandwidth) is now visible instead of
 * absorbed. Issue 23 (the kernels of the Megatron + Transformer Engine
 * stack, GEMMs in waves, memory-bound kernels by class) brought it to
 * +5.3 % (18B) .. +15.4 % (76B), mean 10.7 %, with no constant fitted.
 * Row-wise kernels priced by their passes (models/rowwise.h) instead of
 * a row-wise efficiency that had been the median of the per-kernel
 * check points themselves (0.68 on A100): Megatron's one-pass norms,
 * fused softmax and cross-entropy stream at the element-wise rate, and
 * the table moved to +6.9 % (18B) .. +16.6 % (76B), mean 12.2 %.
 * The bounds record that level as a ratchet: each row in [-5 %, +17.6 %],
 * mean absolute error <= 13.2 %. Lower them when the model improves;
 * never raise them without a hardware reason. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "testutil.h"

static const char *const rows[] = { "1.7b", "3.6b", "7.5b", "18b", "39b", "76b",
				    "145b", "310b", "530b", "1t", NULL };

Test(megatron, weak_scaling_table_within_recorded_error, .timeout = 900)
{
	double sum = 0;
	int n = 0;
	printf("%-6s %12s %12s %8s\n", "model", "predicted", "published", "error");
	for (int i = 0; rows[i]; i++) {
		char *d = tmp_dir(), args[2048], rel[128], *err = NULL;
		snprintf(rel, sizeof(rel), "scenarios/megatron/%s.json", rows[i]);
		snprintf(args, sizeof(args), "run %s --out %s --quiet --format json", src_path(rel), d);
		cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s: %s", rows[i], err);
		json_t *r = load_report(d);
		double pred = jnum(r, "summary/hardware_tflops_per_gpu");
		double pub = jnum(r, "published/hardware_tflops_per_gpu");
		double e = pred / pub - 1;
		printf("%-6s %12.1f %12.1f %+7.1f%%\n", rows[i], pred, pub, 100 * e);
		cr_expect(e > -0.05 && e < 0.176, "%s: predicted %.1f vs published %.1f TFLOP/s", rows[i], pred, pub);
		sum += fabs(e);
		n++;
		json_decref(r);
	}
	printf("mean absolute error %.1f%%\n", 100 * sum / n);
	fflush(stdout);
	cr_assert_leq(sum / n, 0.132, "mean absolute error %.1f%%", 100 * sum / n);
}
