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
 * Branch s8-meg21: the rows run the code that ran them, Megatron-LM v2.5
 * (e269e20) as configured by the SC21 scripts (examples/sc21 at
 * de7dc40f), instead of Megatron-Core + Transformer Engine with guessed
 * settings: the kernels of stacks megatron-lm-2021 / -torch-ddp
 * (models/stack.c: apex LayerNorm, the QKV bias's own add, the context
 * copy, bias_dropout_add's and bias-GELU's bias gradients, fp16
 * gradients accumulated by autograd, the fp16 optimizer's casts, and the
 * causal fused softmax reading only its lower triangle, a fact of the
 * kernel megatron-te runs too), and the configuration of
 * run_table_1.sh and CONFIG.sh: 1.7B-18B torch DDP (fp16 buckets
 * all-reduced during the last backward, where they had been fp32 after
 * it), 39B-1T local DDP (one flat fp16 all-reduce after the backward),
 * 39B and 1T plain 1F1B (the script sets no virtual stages). Per row,
 * before -> after: 1.7B +13.9 -> +18.5 %, 3.6B +11.7 -> +17.4, 7.5B +7.7
 * -> +16.3, 18B +6.9 -> +14.3, 39B +11.5 -> +9.3, 76B +16.6 -> +18.3,
 * 145B +11.0 -> +11.5, 310B +12.7 -> +12.8, 530B +14.4 -> +14.0, 1T
 * +15.5 -> +9.8; mean 12.2 -> 14.2 %. The kernels alone, on the old
 * configuration, gave a mean of 11.4 % (the softmax's and the attention
 * dropout's bytes outweigh the 2021 stack's extra copies at s = 2048);
 * the configuration correction (the torch DDP rows' overlapped fp16
 * all-reduce) is what moves the table the optimistic way, and it is what
 * the runs did: the bounds are raised for that reason only. The 2021 code
 * ran 8-10 % slower than Korthikanti et al.'s 2022 runs of the same
 * pipelines on the same Selene (530B 54.08 vs 49.05 s, 1T 102.6 vs 94.42
 * s): software the byte counts do not see.
 * The bounds record that level as a ratchet: each row in [-5 %, +19.5 %],
 * mean absolute error <= 15.2 %. Lower them when the model improves;
 * never raise them without a reason of the runs themselves (hardware,
 * the code and configuration that ran). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static const char *const rows[] = { "1.7b", "3.6b", "7.5b", "18b", "39b", "76b",
				    "145b", "310b", "530b", "1t", NULL };

/* The row of golden.json's scenarios for scenario rel, or NULL. */
static json_t *golden_row(json_t *g, const char *rel)
{
	size_t i;
	json_t *row;
	json_array_foreach(json_object_get(g, "scenarios"), i, row)
		if (!strcmp(json_string_value(json_object_get(row, "scenario")), rel))
			return row;
	return NULL;
}

/* The predictions are the golden figures (tests/golden/golden.json,
 * which test-golden holds every build to): read, not simulated again. */
Test(megatron, weak_scaling_table_within_recorded_error)
{
	json_error_t je;
	json_t *g = json_load_file(src_path("tests/golden/golden.json"), 0, &je);
	cr_assert(g, "tests/golden/golden.json:%d:%d: %s", je.line, je.column, je.text);
	double sum = 0;
	int n = 0;
	printf("%-6s %12s %12s %8s\n", "model", "predicted", "published", "error");
	for (int i = 0; rows[i]; i++) {
		char rel[128];
		snprintf(rel, sizeof(rel), "scenarios/megatron/%s.json", rows[i]);
		json_t *row = golden_row(g, rel), *sc = json_load_file(src_path(rel), 0, &je);
		cr_assert(row, "%s: not in tests/golden/golden.json", rel);
		cr_assert(sc, "%s:%d:%d: %s", rel, je.line, je.column, je.text);
		double pred = jnum(row, "hardware_tflops_per_gpu");
		double pub = jnum(sc, "published/tflops_per_gpu");
		double e = pred / pub - 1;
		printf("%-6s %12.1f %12.1f %+7.1f%%\n", rows[i], pred, pub, 100 * e);
		cr_expect(e > -0.05 && e < 0.195, "%s: predicted %.1f vs published %.1f TFLOP/s", rows[i], pred, pub);
		sum += fabs(e);
		n++;
		json_decref(sc);
	}
	json_decref(g);
	printf("mean absolute error %.1f%%\n", 100 * sum / n);
	fflush(stdout);
	cr_assert_leq(sum / n, 0.152, "mean absolute error %.1f%%", 100 * sum / n);
}
