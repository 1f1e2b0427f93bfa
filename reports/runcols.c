/* runcols: the columns of a run's row and the two schemas (see runcols.h).
 *
 * Each column is one line of the table below: its name, kind, what it
 * needs, its getter, and report.csv's rounding. Getters are one-line
 * functions of the source (src). */
#include "runcols.h"

#include <math.h>

#include "band.h"
#include "schedule.h"

#define GB 1e9

enum need {
	NEED_NONE,                  /* always there */
	NEED_PLAN,                  /* a row whose plan is its point's: a failed row keeps
				     * its plan, an invalid point's row (sweep) has none
				     * (it carries the base scenario's plan and inputs,
				     * which are not the point's) */
	NEED_OK,                    /* a row that simulated */
	NEED_ASSESS,                /* a row that simulated, with its assessment */
};

#define TEXT(fn, expr) static const char *fn(const struct runcol_src *src) { return (expr); }
#define INT(fn, expr) static long long fn(const struct runcol_src *src) { return (expr); }
#define BOOL(fn, expr) static bool fn(const struct runcol_src *src) { return (expr); }
#define NUM(fn, expr) static double fn(const struct runcol_src *src) { return (expr); }

#define PL (&src->row->plan)
#define TOPO inputs_topology(src->in)
#define ROW src->row
#define A src->a

static long gpus_of(const struct runcol_src *src)
{
	return (long)PL->nodes * TOPO->gpus_per_node;
}

TEXT(scenario, src->scenario ? src->scenario : "")
TEXT(model, inputs_model(src->in)->name)
TEXT(topology, TOPO->name)
TEXT(gpu, TOPO->gpu.name)
INT(nodes, PL->nodes)
INT(gpus, gpus_of(src))
INT(dp, PL->parallel.dp)
INT(tp, PL->parallel.tp)
INT(pp, PL->parallel.pp)
INT(cp, PL->parallel.cp)
INT(ep, PL->parallel.ep)
INT(etp, plan_etp(PL))
BOOL(sp, PL->parallel.sp)
INT(zero, (int)PL->parallel.zero)
TEXT(schedule, schedule_registry[PL->parallel.schedule].name)
INT(interleave, PL->parallel.interleave)
TEXT(recompute, recompute_name(PL->parallel.recompute))
TEXT(order, PL->parallel.order)
INT(seq_len, PL->training.seq)
INT(global_batch, PL->training.global_batch)
INT(micro_batch, PL->training.micro_batch)
TEXT(precision, dtype_name(PL->training.precision))
TEXT(status, result_row_status_name(ROW))
TEXT(error, result_row_usable(ROW) ? "" : ROW->reason)
NUM(iteration_s, ROW->iteration_s)
NUM(samples_per_s, ROW->samples_per_s)
NUM(tokens_per_s, ROW->tokens_per_s)
NUM(model_tflops, ROW->model_tflops_per_gpu)
NUM(hw_tflops, ROW->hardware_tflops_per_gpu)
NUM(mfu, ROW->mfu)
NUM(hfu, ROW->hfu)
NUM(compute_s, ROW->mean.compute_s)
NUM(exposed_s, ROW->mean.exposed_s)
NUM(bubble_s, ROW->mean.bubble_s)
NUM(idle_s, ROW->mean.idle_s)
NUM(mem_peak_GB, ROW->mem_worst_bytes / GB)
NUM(mem_capacity_GB, ROW->mem_capacity_bytes / GB)
BOOL(fits, ROW->fits)
NUM(mem_short_GB, ROW->mem_short_bytes / GB)
BOOL(folded, ROW->folded)
TEXT(fold_reason, ROW->fold_reason)
/* The band of the row's plan (sim/band.h), matched anew by each getter
 * into one static pick (rows are written one at a time, and a getter's
 * text is copied out before the next getter runs). */
static const struct band_pick *pick_of(const struct runcol_src *src)
{
	static struct band_pick p;
	band_choose(src->in, PL, &p);
	return &p;
}
#define BAND pick_of(src)->b
TEXT(band_family, BAND->family)
INT(band_runs, BAND->runs)
NUM(band_mean_abs_pct, 100 * BAND->mean_abs)
NUM(band_max_abs_pct, 100 * BAND->max_abs)
NUM(band_bias_pct, 100 * BAND->bias)
INT(band_gpus_more, band_more_gpus(BAND, gpus_of(src), TOPO->gpus_per_node))
NUM(band_lo_pct, 100 * pick_of(src)->lo)
NUM(band_hi_pct, 100 * pick_of(src)->hi)
static const char *band_extrapolated(const struct runcol_src *src)
{
	const struct band_pick *p = pick_of(src);
	return p->extrapolated ? p->why : "";
}
NUM(sim_wall_s, ROW->sim_wall_s)
NUM(train_days, ROW->time_to_train_s / 86400)
NUM(gpu_hours, ROW->gpu_hours)
NUM(cost_usd, ROW->cost_usd)
NUM(a_train_days, A->train_s / 86400)
NUM(a_wall_days, A->gp.wall_s / 86400)
NUM(a_goodput, A->gp.ratio)
NUM(a_interruptions, A->gp.interruptions)
NUM(a_mtbf_h, A->gp.mtbf_s / 3600)
NUM(a_ckpt_GB, A->gp.checkpoint_bytes / GB)
NUM(a_ckpt_write_s, A->gp.checkpoint_write_s)
NUM(a_ckpt_interval_min, A->gp.interval_s / 60)
NUM(a_gpu_hours, A->gp.wall_s / 3600 * gpus_of(src))
NUM(a_cost_usd, A->econ.cost_usd)
NUM(a_usd_per_Mtoken, A->econ.usd_per_Mtoken)
NUM(a_energy_MWh, assess_has_power(src->in, PL) ? A->econ.energy_MWh : NAN)   /* no TDP: no energy */
NUM(a_power_kW, assess_has_power(src->in, PL) ? A->econ.facility_W / 1e3 : NAN)
NUM(a_ports, A->econ.ports)
NUM(a_capex_usd, A->econ.capex_usd)
NUM(a_usd_per_year, A->econ.usd_per_year)

struct col {
	struct runcol info;
	enum need need;
	const char *(*text)(const struct runcol_src *);
	long long (*integer)(const struct runcol_src *);
	bool (*boolean)(const struct runcol_src *);
	double (*number)(const struct runcol_src *);
};

#define C_TEXT(id, name, need, fn) [id] = { { name, RUNCOL_TEXT, 0, 0 }, need, .text = fn }
#define C_INT(id, name, fn) [id] = { { name, RUNCOL_INT, 0, 0 }, NEED_PLAN, .integer = fn }
#define C_INT_OK(id, name, fn) [id] = { { name, RUNCOL_INT, 0, 0 }, NEED_OK, .integer = fn }
#define C_BOOL(id, name, need, fn) [id] = { { name, RUNCOL_BOOL, 0, 0 }, need, .boolean = fn }
#define C_NUM(id, name, need, digits, decimals, fn) [id] = { { name, RUNCOL_NUMBER, digits, decimals }, need, .number = fn }

static const struct col cols[RC_N] = {
	C_TEXT(RC_SCENARIO, "scenario", NEED_NONE, scenario),
	C_TEXT(RC_MODEL, "model", NEED_PLAN, model),
	C_TEXT(RC_TOPOLOGY, "topology", NEED_PLAN, topology),
	C_TEXT(RC_GPU, "gpu", NEED_PLAN, gpu),
	C_INT(RC_NODES, "nodes", nodes),
	C_INT(RC_GPUS, "gpus", gpus),
	C_INT(RC_DP, "dp", dp),
	C_INT(RC_TP, "tp", tp),
	C_INT(RC_PP, "pp", pp),
	C_BOOL(RC_SP, "sp", NEED_PLAN, sp),
	C_INT(RC_ZERO, "zero", zero),
	C_TEXT(RC_SCHEDULE, "schedule", NEED_PLAN, schedule),
	C_INT(RC_INTERLEAVE, "interleave", interleave),
	C_TEXT(RC_RECOMPUTE, "recompute", NEED_PLAN, recompute),
	C_TEXT(RC_ORDER, "order", NEED_PLAN, order),
	C_INT(RC_SEQ_LEN, "seq_len", seq_len),
	C_INT(RC_GLOBAL_BATCH, "global_batch", global_batch),
	C_INT(RC_MICRO_BATCH, "micro_batch", micro_batch),
	C_TEXT(RC_PRECISION, "precision", NEED_PLAN, precision),
	C_TEXT(RC_STATUS, "status", NEED_NONE, status),
	C_TEXT(RC_ERROR, "error", NEED_NONE, error),
	C_NUM(RC_ITERATION_S, "iteration_time_s", NEED_OK, 9, 0, iteration_s),
	C_NUM(RC_SAMPLES_PER_S, "samples_per_s", NEED_OK, 9, 0, samples_per_s),
	C_NUM(RC_TOKENS_PER_S, "tokens_per_s", NEED_OK, 9, 0, tokens_per_s),
	C_NUM(RC_MODEL_TFLOPS, "model_tflops_per_gpu", NEED_OK, 6, 0, model_tflops),
	C_NUM(RC_HW_TFLOPS, "hardware_tflops_per_gpu", NEED_OK, 6, 0, hw_tflops),
	C_NUM(RC_MFU, "mfu", NEED_OK, 6, 0, mfu),
	C_NUM(RC_HFU, "hfu", NEED_OK, 6, 0, hfu),
	C_NUM(RC_COMPUTE_S, "compute_s", NEED_OK, 9, 0, compute_s),
	C_NUM(RC_EXPOSED_S, "exposed_comm_s", NEED_OK, 9, 0, exposed_s),
	C_NUM(RC_BUBBLE_S, "bubble_s", NEED_OK, 9, 0, bubble_s),
	C_NUM(RC_IDLE_S, "idle_s", NEED_OK, 9, 0, idle_s),
	C_NUM(RC_MEM_PEAK_GB, "mem_peak_GB", NEED_OK, 6, 0, mem_peak_GB),
	C_NUM(RC_MEM_CAPACITY_GB, "mem_capacity_GB", NEED_OK, 6, 0, mem_capacity_GB),
	C_BOOL(RC_FITS, "fits", NEED_OK, fits),
	C_NUM(RC_SIM_WALL_S, "sim_wall_s", NEED_OK, 9, 0, sim_wall_s),
	C_NUM(RC_TRAIN_DAYS, "time_to_train_days", NEED_OK, 6, 0, train_days),
	/* GPU-hours and money to the unit and the cent, whatever their size */
	C_NUM(RC_GPU_HOURS, "gpu_hours", NEED_OK, 0, 1, gpu_hours),
	C_NUM(RC_COST_USD, "cost_usd", NEED_OK, 0, 2, cost_usd),
	C_NUM(RC_A_TRAIN_DAYS, "train_days", NEED_ASSESS, 9, 0, a_train_days),
	C_NUM(RC_A_WALL_DAYS, "wall_days", NEED_ASSESS, 9, 0, a_wall_days),
	C_NUM(RC_A_GOODPUT, "goodput_ratio", NEED_ASSESS, 9, 0, a_goodput),
	C_NUM(RC_A_INTERRUPTIONS, "interruptions", NEED_ASSESS, 9, 0, a_interruptions),
	C_NUM(RC_A_MTBF_H, "mtbf_h", NEED_ASSESS, 9, 0, a_mtbf_h),
	C_NUM(RC_A_CKPT_GB, "checkpoint_GB", NEED_ASSESS, 9, 0, a_ckpt_GB),
	C_NUM(RC_A_CKPT_WRITE_S, "checkpoint_write_s", NEED_ASSESS, 9, 0, a_ckpt_write_s),
	C_NUM(RC_A_CKPT_INTERVAL_MIN, "checkpoint_interval_min", NEED_ASSESS, 9, 0, a_ckpt_interval_min),
	C_NUM(RC_A_GPU_HOURS, "gpu_hours", NEED_ASSESS, 9, 0, a_gpu_hours),
	C_NUM(RC_A_COST_USD, "cost_usd", NEED_ASSESS, 9, 0, a_cost_usd),
	C_NUM(RC_A_USD_PER_MTOKEN, "usd_per_Mtoken", NEED_ASSESS, 9, 0, a_usd_per_Mtoken),
	C_NUM(RC_A_ENERGY_MWH, "energy_MWh", NEED_ASSESS, 9, 0, a_energy_MWh),
	C_NUM(RC_A_POWER_KW, "avg_power_kW", NEED_ASSESS, 9, 0, a_power_kW),
	C_NUM(RC_A_PORTS, "network_ports", NEED_ASSESS, 9, 0, a_ports),
	C_NUM(RC_A_CAPEX_USD, "capex_usd", NEED_ASSESS, 9, 0, a_capex_usd),
	C_NUM(RC_A_USD_PER_YEAR, "usd_per_year", NEED_ASSESS, 9, 0, a_usd_per_year),
	C_NUM(RC_MEM_SHORT_GB, "mem_short_GB", NEED_OK, 6, 0, mem_short_GB),
	C_BOOL(RC_FOLDED, "folded", NEED_OK, folded),
	C_TEXT(RC_FOLD_REASON, "fold_reason", NEED_OK, fold_reason),
	/* the error band of the nearest validation family (sim/band.h) */
	C_TEXT(RC_BAND_FAMILY, "band_family", NEED_OK, band_family),
	C_INT_OK(RC_BAND_RUNS, "band_runs", band_runs),
	C_NUM(RC_BAND_MEAN_ABS_PCT, "band_mean_abs_error_pct", NEED_OK, 4, 0, band_mean_abs_pct),
	C_NUM(RC_BAND_MAX_ABS_PCT, "band_max_abs_error_pct", NEED_OK, 4, 0, band_max_abs_pct),
	C_NUM(RC_BAND_BIAS_PCT, "band_bias_pct", NEED_OK, 4, 0, band_bias_pct),
	C_INT_OK(RC_BAND_GPUS_MORE, "band_gpus_more", band_gpus_more),
	C_NUM(RC_BAND_LO_PCT, "band_low_pct", NEED_OK, 4, 0, band_lo_pct),
	C_NUM(RC_BAND_HI_PCT, "band_high_pct", NEED_OK, 4, 0, band_hi_pct),
	C_TEXT(RC_BAND_EXTRAPOLATED, "band_extrapolated", NEED_OK, band_extrapolated),
	C_INT(RC_CP, "cp", cp),
	C_INT(RC_EP, "ep", ep),
	C_INT(RC_ETP, "etp", etp),
};

const struct runcol *runcol_info(enum runcol_id id)
{
	return &cols[id].info;
}

bool runcol_get(enum runcol_id id, const struct runcol_src *src, struct runcol_value *v)
{
	const struct col *c = &cols[id];
	bool ok = src->row->status == RESULT_OK;
	if ((c->need >= NEED_OK && !ok) || (c->need == NEED_ASSESS && !src->a) ||
	    (c->need == NEED_PLAN && src->row->status == RESULT_INVALID))
		return false;
	switch (c->info.kind) {
	case RUNCOL_TEXT: v->text = c->text(src); break;
	case RUNCOL_INT: v->integer = c->integer(src); break;
	case RUNCOL_BOOL: v->boolean = c->boolean(src); break;
	case RUNCOL_NUMBER: v->number = c->number(src); break;
	}
	return true;
}

static const enum runcol_id report_cols[] = {
	RC_SCENARIO, RC_MODEL, RC_TOPOLOGY, RC_GPU, RC_NODES, RC_GPUS, RC_DP, RC_TP, RC_PP, RC_SP,
	RC_ZERO, RC_SCHEDULE, RC_INTERLEAVE, RC_RECOMPUTE, RC_SEQ_LEN, RC_GLOBAL_BATCH, RC_MICRO_BATCH,
	RC_PRECISION, RC_ITERATION_S, RC_SAMPLES_PER_S, RC_TOKENS_PER_S, RC_MODEL_TFLOPS, RC_HW_TFLOPS,
	RC_MFU, RC_COMPUTE_S, RC_EXPOSED_S, RC_BUBBLE_S, RC_IDLE_S, RC_MEM_PEAK_GB, RC_MEM_CAPACITY_GB,
	RC_FITS, RC_TRAIN_DAYS, RC_GPU_HOURS, RC_COST_USD, RC_STATUS, RC_ERROR,
	/* appended (issue 27): never reorder, readers index by position too */
	RC_MEM_SHORT_GB, RC_BAND_FAMILY, RC_BAND_RUNS, RC_BAND_MEAN_ABS_PCT, RC_BAND_MAX_ABS_PCT,
	RC_BAND_BIAS_PCT, RC_BAND_GPUS_MORE,
	/* appended (issue 38): the cross-validated band */
	RC_BAND_LO_PCT, RC_BAND_HI_PCT, RC_BAND_EXTRAPOLATED,
};

static const enum runcol_id record_cols[] = {
	RC_MODEL, RC_TOPOLOGY, RC_GPU, RC_NODES, RC_GPUS, RC_DP, RC_TP, RC_PP, RC_SP, RC_ZERO,
	RC_SCHEDULE, RC_INTERLEAVE, RC_RECOMPUTE, RC_ORDER, RC_SEQ_LEN, RC_GLOBAL_BATCH, RC_MICRO_BATCH,
	RC_PRECISION, RC_STATUS, RC_ERROR, RC_ITERATION_S, RC_TOKENS_PER_S, RC_MODEL_TFLOPS, RC_MFU,
	RC_HFU, RC_COMPUTE_S, RC_EXPOSED_S, RC_BUBBLE_S, RC_IDLE_S, RC_MEM_PEAK_GB, RC_MEM_CAPACITY_GB,
	RC_FITS, RC_SIM_WALL_S, RC_A_TRAIN_DAYS, RC_A_WALL_DAYS, RC_A_GOODPUT, RC_A_INTERRUPTIONS,
	RC_A_MTBF_H, RC_A_CKPT_GB, RC_A_CKPT_WRITE_S, RC_A_CKPT_INTERVAL_MIN, RC_A_GPU_HOURS,
	RC_A_COST_USD, RC_A_USD_PER_MTOKEN, RC_A_ENERGY_MWH, RC_A_POWER_KW, RC_A_PORTS, RC_A_CAPEX_USD,
	RC_A_USD_PER_YEAR,
	/* appended (issue 27) */
	RC_MEM_SHORT_GB, RC_FOLDED, RC_FOLD_REASON, RC_BAND_FAMILY, RC_BAND_RUNS, RC_BAND_MEAN_ABS_PCT,
	RC_BAND_MAX_ABS_PCT, RC_BAND_BIAS_PCT, RC_BAND_GPUS_MORE,
	/* appended (issue 38) */
	RC_BAND_LO_PCT, RC_BAND_HI_PCT, RC_BAND_EXTRAPOLATED,
	/* appended (issue 44): the searched context and expert parallelism */
	RC_CP, RC_EP, RC_ETP,
};

const struct runcol_schema runcols_report = { report_cols, (int)(sizeof(report_cols) / sizeof(report_cols[0])) };
const struct runcol_schema runcols_record = { record_cols, (int)(sizeof(record_cols) / sizeof(record_cols[0])) };
