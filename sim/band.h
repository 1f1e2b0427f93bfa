/* band: the error band of a prediction, cross-validated on the
 * published-results suite, and the family a plan is matched to.
 *
 * `ddlsim validation` holds ddlsim against published training runs, case
 * by case (validation/<family>/). Its family table, written by `ddlsim
 * validation --write-bands validation/bands.json` and checked against the
 * suite by tests/test-validation.c (so it cannot go stale silently), is
 * compiled into the binary (validation/bands-c.py generates bands-table.c
 * at build time). Every predicted time, MFU, cost and GPU count carries
 * the band of the family its plan is matched to.
 *
 * Errors, in the direction of speed: a case's speed error e is predicted
 * speed / measured speed - 1, i.e. measured time / predicted time - 1 (the
 * suite's signed error for a throughput figure, 1 / (1 + error) - 1 for an
 * iteration time). e > 0: ddlsim is optimistic (real runs take longer).
 *
 * A band is an interval of e at level BAND_LEVEL (80 %): [c - w, c + w]
 * around the family's bias c (the mean e of its runs), so a real run takes
 * predicted time x (1 + c - w) .. x (1 + c + w). The half-width w is
 * cross-validated, not the family's own spread (split conformal
 * prediction, leave one family out):
 *
 *   1. Every case i of family F is matched (band_match) as if F were not
 *      in the suite; it lands on family G(i) (or the overall row, whose
 *      bias is then the mean over the cases outside F). Its out-of-family
 *      residual is r_i = e_i - c_G(i).
 *   2. W = the smallest |r| that at least 80 % of the cases reach (the
 *      ceil(0.8 n)-th smallest): the out-of-family half-width. Wx = the
 *      same 80 % order statistic over the cases whose match in (1) was
 *      itself extrapolated (4: nothing near once F is left out), once
 *      there are BAND_EXTRAP_MIN_RUNS of them, else the largest |r|.
 *      (Until 2026-12-07 Wx was the largest |r| always; with the 2021
 *      ZeRO-3 family, whose runs miss the band they get by up to 182 %,
 *      that was not an 80 % band but one family's worst run.)
 *   3. Family F's half-width w_F = max(W, q_F), q_F the same 80 % order
 *      statistic of F's leave-one-run-out residuals (e_j minus the mean
 *      of F's other runs; 0 for a one-run family). The overall row's is W.
 *   4. A plan the suite has nothing near (below) is extrapolated: its
 *      half-width is max(w_F, Wx, W): how far the suite's runs fell when
 *      it had nothing near them, at the same 80 % level, and every
 *      report says why.
 *
 * By (2) and (3), the suite's own cases, each banded as if its family had
 * never been run, fall inside their band at least 80 % of the time; that
 * is a property of the construction, and runs the suite never saw are the
 * real test. `ddlsim validation --cross-validate` prints the in-sample and
 * out-of-family errors per family.
 *
 * The match (band_match): a plan's features (band_features) against each
 * family's envelope, the range of what its cases ran (written into the
 * bands file by the suite, never by hand). Families are ranked by, in
 * order: (1) model kind (dense decoder, MoE, encoder, CNN, ViT, LoRA
 * fine-tune) equal, required: a kind no family has takes the overall row;
 * (2) training style equal: FSDP (torchtitan(-*), hf-eager, deepspeed and
 * llm-foundry(-*) stacks, or ZeRO-3 without TP and PP), Megatron-DeepSpeed
 * (the 2022 stack), Megatron (everything else with TP/PP: the default
 * Megatron-Core + TE stack), MXNet/DLE data parallel (CNN, encoder);
 * (3) GPU generation (Volta, Ampere, Hopper, Blackwell; by the name code:
 * A100 / A800 / A10 Ampere, H100 / H200 / H800 / GH200 Hopper, B100 /
 * B200 / GB200 Blackwell, V100 Volta); (4) precision class (fp8 or
 * 16/32-bit); (5) the same kernel stack; (6) distance: the log2 factors by
 * which the plan's parameters, GPUs and sequence length lie outside the
 * family's ranges, plus 1 for each of pipeline, ZeRO-3 and context
 * parallelism the plan uses and the family never ran.
 *
 * Extrapolated when, against the family matched: the kind, style, GPU
 * generation or precision class differs; the parameters, GPUs or
 * sequence length lie outside [min / 2, 2 max] of the family's; or the
 * plan uses context parallelism, pipeline or ZeRO-3 and the family never
 * ran it. The reason reads "no validated run <what>" ("on Blackwell",
 * "at 1536 GPUs (torchtitan-a100: 64 - 64)", "with context
 * parallelism").
 *
 * The bands file, validation/bands.json (schema ddlsim.validation-bands
 * 2.0; written by the suite, never by hand; families in name order, the
 * overall row last), per family:
 *
 *   key                                   type    unit  default   meaning
 *   families                              array   -     required  one object per family, then "overall"
 *   families[].family                     string  -     required  validation/<family>/, or "overall"
 *   families[].runs                       int     -     required  published runs it sums up (that simulated)
 *   families[].mean_abs_error_pct         number  %     required  in sample: mean |error| of the figure
 *   families[].max_abs_error_pct          number  %     required  in sample: the largest |error|
 *   families[].bias_pct                   number  %     required  c: mean speed error; > 0 optimistic
 *   families[].optimistic_runs            int     -     required  runs predicted faster than measured
 *   families[].level_pct                  number  %     required  the band's level (80)
 *   families[].halfwidth_pct              number  %     required  w (cross-validated, rounded up to 0.1)
 *   families[].extrapolated_halfwidth_pct number  %     required  max(W, Wx) (the overall row's is used)
 *   families[].oof_family                 string  -     required  where its runs match when it is left out
 *   families[].oof_mean_abs_pct           number  %     required  out of family: mean |r| of its runs
 *   families[].oof_max_abs_pct            number  %     required  out of family: largest |r|
 *   families[].oof_bias_pct               number  %     required  out of family: mean r
 *   families[].oof_covered_runs           int     -     required  its runs inside their out-of-family band
 *   families[].envelope                   object  -     required  what its runs ran: gpu_generations,
 *                                                                 kinds, styles, precisions, stacks,
 *                                                                 features (arrays of names); params,
 *                                                                 gpus, seq_len ([min, max])
 *   memory                                object  -     -         the memory cases' errors (predicted /
 *                                                                 published peak - 1): runs,
 *                                                                 mean_abs_error_pct, signed_pct,
 *                                                                 low_pct, high_pct (band_memory)
 *   generated                             string  -     required  how it was written */
#ifndef DDLSIM_BAND_H
#define DDLSIM_BAND_H

#include <stdbool.h>
#include <stddef.h>

#include "inputs.h"
#include "plan.h"

#define BAND_LEVEL 0.80
/* Extrapolated cases needed before Wx is their 80 % order statistic
 * (with 5, the 4th smallest |r|; below, the largest |r| of all). */
#define BAND_EXTRAP_MIN_RUNS 5

enum band_gen { BAND_GEN_OTHER, BAND_GEN_VOLTA, BAND_GEN_AMPERE, BAND_GEN_HOPPER, BAND_GEN_BLACKWELL,
		BAND_GEN_N };
enum band_kind { BAND_KIND_DENSE, BAND_KIND_MOE, BAND_KIND_ENCODER, BAND_KIND_CNN, BAND_KIND_VIT,
		 BAND_KIND_LORA, BAND_KIND_N };
enum band_style { BAND_STYLE_DP, BAND_STYLE_FSDP, BAND_STYLE_MEGATRON_DS, BAND_STYLE_MEGATRON,
		  BAND_STYLE_N };
enum band_prec { BAND_PREC_16, BAND_PREC_FP8, BAND_PREC_N };
enum band_feat { BAND_FEAT_PIPELINE, BAND_FEAT_ZERO3, BAND_FEAT_CP, BAND_FEAT_N };

/* Names of the enums above, as the bands file writes them (NULL-ended). */
extern const char *const band_gen_names[BAND_GEN_N + 1];
extern const char *const band_kind_names[BAND_KIND_N + 1];
extern const char *const band_style_names[BAND_STYLE_N + 1];
extern const char *const band_prec_names[BAND_PREC_N + 1];
extern const char *const band_feat_names[BAND_FEAT_N + 1];

/* What the match looks at in one plan. */
struct band_features {
	enum band_gen gen;
	enum band_kind kind;
	enum band_style style;
	enum band_prec prec;
	const char *stack;          /* the kernel stack's name (static) */
	unsigned feats;             /* 1 << enum band_feat */
	double params, gpus, seq;
};

/* The range of what a family's runs ran; sets are bit masks of the enums. */
struct band_envelope {
	unsigned gens, kinds, styles, precs, feats;
	const char *stacks;         /* names separated by '|' */
	double params[2], gpus[2], seq[2];
};

struct band {
	const char *family;         /* validation/<family>/, or "overall" */
	int runs;                   /* published runs it sums up */
	double mean_abs;            /* in sample: mean |error|, a fraction (0.096: 9.6 %) */
	double max_abs;             /* in sample: largest |error| */
	double bias;                /* c: mean speed error, > 0 optimistic */
	int optimistic_runs;        /* runs predicted faster than measured */
	double halfwidth;           /* w, cross-validated at BAND_LEVEL */
	double extrap_halfwidth;    /* max(W, Wx) (the overall row's is used) */
	const char *oof_family;     /* where its runs match when it is left out */
	double oof_mean_abs, oof_max_abs, oof_bias;
	int oof_covered;
	struct band_envelope env;
};

/* A plan's band: the family matched and the interval of speed error. */
struct band_pick {
	const struct band *b;       /* the table's row (never NULL) */
	double center, halfwidth;   /* c and w (max(w, Wx) when extrapolated) */
	double lo, hi;              /* c - w, c + w: real time = predicted x (1 + lo .. 1 + hi) */
	bool extrapolated;
	char why[320];              /* when extrapolated: "no validated run ..." */
};

/* The memory families' errors (bands.json "memory"), fractions; runs 0
 * when the suite had none. A real peak is the predicted one / (1 + e):
 * low is the most negative e, the prediction's largest shortfall. */
struct band_memory {
	int runs;
	double mean_abs, signed_mean, low, high;
};
extern const struct band_memory band_memory;

/* The shipped table (validation/bands.json), the overall row last. */
extern const struct band band_table[];
extern const int band_count;

/* The features of plan pl on inputs in. */
void band_features(const struct inputs *in, const struct plan *pl, struct band_features *f);

/* Match f against table[0 .. n - 1] (the last row: overall) as above,
 * skipping the family named exclude (NULL: none). Fills out (b points
 * into table) and returns the row's index. */
int band_match(const struct band *table, int n, const struct band_features *f, const char *exclude,
	       struct band_pick *out);

/* band_match of plan pl on the shipped table. */
void band_choose(const struct inputs *in, const struct plan *pl, struct band_pick *out);

/* How many more GPUs than `gpus` the bias implies: a run predicted to
 * meet a deadline on `gpus` needs about gpus x (1 + bias) when ddlsim is
 * optimistic (throughput scaling with the GPUs), rounded up to whole
 * nodes of per_node GPUs (what can be bought; <= 1: GPUs); 0 for a
 * pessimistic family. */
long band_more_gpus(const struct band *b, long gpus, int per_node);
/* The GPUs that still meet the deadline when the run is as slow as the
 * band's slow edge (time x (1 + p->hi)): gpus x (1 + hi) on the same
 * scaling, rounded up to whole nodes of per_node; gpus when hi <= 0. */
long band_safe_gpus(const struct band_pick *p, long gpus, int per_node);

/* "80 % band -3.1 % .. +22.0 % of time (torchtitan-a100, 3 runs,
 * cross-validated; optimistic 11.6 %)" and, when extrapolated,
 * "; extrapolated: no validated run ..." into buf (n bytes). Returns buf. */
char *band_text(const struct band_pick *p, char *buf, size_t n);

/* Whether name is one of the '|'-separated names of list (an envelope's
 * stacks; NULL: none). */
bool band_names_has(const char *list, const char *name);

/* The order statistic of step 2 above: the smallest of x[0 .. n - 1]
 * (absolute values, sorted in place) that at least level x n of them
 * reach; 0 when n is 0. */
double band_quantile(double *x, int n, double level);

#endif
