/* runcols: the columns of a run's row, one table for every writer.
 *
 * A run's row (a runner's struct result_row, the scenario's name, its
 * inputs, and the assessment of a sweep or plan point) is written in two
 * shapes: report.csv and the runs' CSV of `ddlsim run` (report_csv.c), and
 * the flat records of sweeps, plans and compare (tidy.c: CSV and JSON
 * lines). Each column is defined once here: its name, its type, what it
 * needs (a simulated row, an assessment), how its value is read, and how
 * report.csv rounds it. The two schemas are lists of these columns, in
 * their order (runcols_report, runcols_record). A column that does not
 * apply (a failed row's figures, a point without assessment) is an empty
 * CSV field and a JSON null; so is a number that is not finite. */
#ifndef DDLSIM_RUNCOLS_H
#define DDLSIM_RUNCOLS_H

#include <stdbool.h>

#include "assess.h"
#include "result.h"

enum runcol_id {
	/* what ran: the scenario, the inputs, the plan */
	RC_SCENARIO, RC_MODEL, RC_TOPOLOGY, RC_GPU, RC_NODES, RC_GPUS, RC_DP, RC_TP, RC_PP, RC_SP,
	RC_ZERO, RC_SCHEDULE, RC_INTERLEAVE, RC_RECOMPUTE, RC_ORDER, RC_SEQ_LEN, RC_GLOBAL_BATCH,
	RC_MICRO_BATCH, RC_PRECISION, RC_STATUS, RC_ERROR,
	/* the simulated headline (a row with status ok) */
	RC_ITERATION_S, RC_SAMPLES_PER_S, RC_TOKENS_PER_S, RC_MODEL_TFLOPS, RC_HW_TFLOPS, RC_MFU, RC_HFU,
	RC_COMPUTE_S, RC_EXPOSED_S, RC_BUBBLE_S, RC_IDLE_S, RC_MEM_PEAK_GB, RC_MEM_CAPACITY_GB, RC_FITS,
	RC_SIM_WALL_S, RC_TRAIN_DAYS, RC_GPU_HOURS, RC_COST_USD,
	/* the assessment: goodput and economics over the training run */
	RC_A_TRAIN_DAYS, RC_A_WALL_DAYS, RC_A_GOODPUT, RC_A_INTERRUPTIONS, RC_A_MTBF_H, RC_A_CKPT_GB,
	RC_A_CKPT_WRITE_S, RC_A_CKPT_INTERVAL_MIN, RC_A_GPU_HOURS, RC_A_COST_USD, RC_A_USD_PER_MTOKEN,
	RC_A_ENERGY_MWH, RC_A_POWER_KW, RC_A_PORTS, RC_A_CAPEX_USD, RC_A_USD_PER_YEAR,
	/* memory fit and folding (a row that simulated) */
	RC_MEM_SHORT_GB, RC_FOLDED, RC_FOLD_REASON,
	/* the error band of the nearest validation family (sim/band.h): its
	 * name, published runs, mean and max |error| and bias in percent, and
	 * the GPUs more than the plan's that its optimism implies; the
	 * cross-validated band's ends in percent and why it is extrapolated
	 * ("" when not) */
	RC_BAND_FAMILY, RC_BAND_RUNS, RC_BAND_MEAN_ABS_PCT, RC_BAND_MAX_ABS_PCT, RC_BAND_BIAS_PCT,
	RC_BAND_GPUS_MORE, RC_BAND_LO_PCT, RC_BAND_HI_PCT, RC_BAND_EXTRAPOLATED,
	/* context- and expert-parallel degrees (issue 44: plans search them) */
	RC_CP, RC_EP,
	/* the expert-tensor-parallel degree (plan_etp: tp unless parallel.etp) */
	RC_ETP,
	RC_N
};

enum runcol_kind { RUNCOL_TEXT, RUNCOL_INT, RUNCOL_BOOL, RUNCOL_NUMBER };

/* What a row's columns are read from (all borrowed). */
struct runcol_src {
	const struct result_row *row;
	const struct inputs *in;
	const char *scenario;           /* the scenario's name, NULL: "" */
	const struct assessment *a;     /* NULL: the assessment's columns do not apply */
};

/* A column's value (runcol_get()): the member of its kind. */
struct runcol_value {
	const char *text;               /* borrowed from the source or static */
	long long integer;
	bool boolean;
	double number;
};

/* A column. */
struct runcol {
	const char *name;
	enum runcol_kind kind;
	int digits;                     /* report.csv: significant digits of a number, 0: */
	int decimals;                   /* these fixed decimals instead */
};

/* Column id's description. */
const struct runcol *runcol_info(enum runcol_id id);

/* Read column id of src into *v. Returns false when the column does not
 * apply (its figures are missing), *v then untouched. */
bool runcol_get(enum runcol_id id, const struct runcol_src *src, struct runcol_value *v);

/* A schema: columns in order. */
struct runcol_schema {
	const enum runcol_id *cols;
	int n;
};
/* report.csv and the runs' CSV: the scenario, its plan, the headline at
 * the plan's price, the status and error. */
extern const struct runcol_schema runcols_report;
/* A sweep, plan or compare record after the caller's own keys: the plan,
 * the status and error, the headline, the assessment. */
extern const struct runcol_schema runcols_record;

#endif
