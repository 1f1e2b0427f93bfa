/* band: the error band of a prediction, from the published-results suite.
 *
 * `ddlsim validation` holds ddlsim against published training runs, case
 * by case, and sums each family (validation/<family>/) up as the mean and
 * the largest absolute error and the mean signed error. That table,
 * written by `ddlsim validation --write-bands validation/bands.json` and
 * checked against the suite by tests/test-validation.c (so it cannot go
 * stale silently), is compiled into the binary (validation/bands-c.py
 * generates bands-table.c at build time). Every predicted time, MFU, cost
 * and GPU count carries the band of the family nearest its plan.
 *
 * A family's errors, in the direction of speed: a case's speed error is
 * predicted speed / measured speed - 1, i.e. the suite's signed error for
 * a throughput figure and 1 / (1 + error) - 1 for an iteration time. The
 * bias is their mean: positive, ddlsim is optimistic (predicts faster
 * than measured: real runs take longer, cost more, need more GPUs);
 * negative, pessimistic. The absolute errors are the suite's own (its
 * table's "mean |error|" and "max |error|").
 *
 * The nearest family (band_lookup): the plan's training style and its GPU,
 * first rule that matches:
 *
 *   style                                        GPU           family
 *   CNN (architecture "cnn")                     H100, H200    resnet50-mlperf
 *   encoder (architecture "encoder_transformer") A100          dle-bert-a100
 *   llm-foundry, llm-foundry-triton stacks       A100, H100, H200  llm-foundry-mpt
 *   megatron-deepspeed stack (2022)              A100          bloom-a100
 *   FSDP: torchtitan(-*), hf-eager, deepspeed    A100          torchtitan-a100
 *     stack, or ZeRO-3 without TP and PP         H100, H200    llm-foundry-mpt
 *   fp8 (Megatron-style, TP/PP)                  H100, H200    nemo-h100-fp8
 *   Megatron-Core + TE (the default stack)       H100, H200    megatron-core-h100
 *                                                A100          korthikanti-a100
 *   anything else (V100, L40S, B200, ...)        -             overall
 *
 * A plan has one style, the first in the table's order that applies (a
 * CNN is a CNN whatever its stack). The GPU matches when the topology's
 * GPU name has the code at the start of a word ("H200-SXM5-141GB" is
 * H200; "B200 (GB200)" is not). H200 counts as H100: the same Hopper SMs
 * and NVLink, more and faster memory. A family the shipped table lacks
 * falls back to the overall row.
 *
 * The bands file, validation/bands.json (written by the suite, never by
 * hand; families in name order, the overall row last):
 *
 *   key                                 type    unit  default   meaning
 *   families                            array   -     required  one object per family, then "overall"
 *   families[].family                   string  -     required  validation/<family>/, or "overall"
 *   families[].runs                     int     -     required  published runs it sums up (that simulated)
 *   families[].mean_abs_error_pct       number  %     required  mean |predicted / published - 1|, to 0.1
 *   families[].max_abs_error_pct        number  %     required  the largest |error|, to 0.1
 *   families[].bias_pct                 number  %     required  mean speed error, to 0.1; > 0: optimistic
 *   families[].optimistic_runs          int     -     required  runs predicted faster than measured
 *   generated                           string  -     required  how it was written */
#ifndef DDLSIM_BAND_H
#define DDLSIM_BAND_H

#include <stdbool.h>

#include "inputs.h"
#include "plan.h"

struct band {
	const char *family;         /* validation/<family>/, or "overall" */
	int runs;                   /* published runs it sums up */
	double mean_abs;            /* mean |error|, a fraction (0.096: 9.6 %) */
	double max_abs;             /* largest |error| */
	double bias;                /* mean speed error: > 0 optimistic, < 0 pessimistic */
	int optimistic_runs;        /* runs predicted faster than measured */
};

/* The shipped table (validation/bands.json), the overall row last. */
extern const struct band band_table[];
extern const int band_count;

/* The row of family, NULL if the table has none. */
const struct band *band_get(const char *family);

/* The band of the family nearest plan pl on inputs in (the rule above);
 * the overall row when no family applies. Never NULL. */
const struct band *band_lookup(const struct inputs *in, const struct plan *pl);

/* How many more GPUs than `gpus` the band implies: a run predicted to
 * meet a deadline on `gpus` needs about gpus x (1 + optimism) when ddlsim
 * is optimistic by `optimism` (its bias, when positive), rounded up;
 * 0 for a pessimistic family. */
long band_more_gpus(const struct band *b, long gpus);

/* "±9.6 % (megatron-core-h100, 9 runs, max 24.1 %, optimistic 3.2 %)"
 * into buf (n bytes). Returns buf. */
char *band_text(const struct band *b, char *buf, size_t n);

#endif
