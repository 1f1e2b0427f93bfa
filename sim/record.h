/* record: the best public MFU the project knows, per GPU generation and
 * model class, for a plausibility check of a prediction.
 *
 * A prediction whose MFU exceeds what any published run of its kind has
 * reached on its GPU generation is more likely a flaw of the model (or
 * of the plan) than a record: the summary, report.json and report.html
 * say so and name the figure. The table holds the highest MFU among the
 * published runs of validation/ (model FLOPs by Megatron's count over the
 * dense 16-bit peak), one row per generation, kind and precision class
 * the suite has a published MFU or model TFLOP/s for; each row names its
 * case and source. test-band checks that no case of the suite beats its
 * row, so the table follows the suite.
 *
 *   generation  kind            precision  MFU     run
 *   Ampere      dense decoder   16-bit     64.2 %  llm-foundry MPT-7B, 8 A100 80GB
 *   Hopper      dense decoder   16-bit     49.4 %  Megatron-Core GPT 16B, 192 H100
 *                                                  (489.1 of 989.4 TFLOP/s)
 *
 * No row for fp8, MoE, encoders, CNNs, ViT or LoRA (the suite publishes
 * no MFU for them): no plausibility line there. */
#ifndef DDLSIM_RECORD_H
#define DDLSIM_RECORD_H

#include "band.h"

struct mfu_record {
	enum band_gen gen;
	enum band_kind kind;
	enum band_prec prec;
	double mfu;                 /* 0..1, model FLOPs over the dense peak */
	const char *run;            /* what ran it */
	const char *case_path;      /* validation/<family>/<case>.json */
	const char *source;         /* where it was published */
};

extern const struct mfu_record mfu_records[];
extern const int mfu_record_count;

/* The record for plan pl on inputs in, NULL when the table has none. */
const struct mfu_record *record_mfu(const struct inputs *in, const struct plan *pl);

/* "MFU 75.1 % exceeds 64.2 %, the best public MFU the project knows for
 * a dense decoder on Ampere (run; source)" into buf
 * (n bytes) when mfu exceeds the plan's record; "" otherwise. Returns
 * whether it did. */
bool record_check(const struct inputs *in, const struct plan *pl, double mfu, char *buf, size_t n);

#endif
