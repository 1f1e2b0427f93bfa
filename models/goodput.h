/* goodput: failures, checkpoints and restarts in the time to train.
 *
 * A job of G GPUs on N nodes is interrupted at rate
 *   lambda = G gpu_failures_per_hour + N node_failures_per_hour  (per hour),
 * mean time between interruptions M = 1 / lambda. It writes a checkpoint
 * of the model states (weights and optimizer: params x (weight bytes +
 * optimizer bytes per parameter), the memory anatomy's figures,
 * models/memory.h) in delta = bytes / storage_write_Bps seconds, and an
 * interruption costs R = restart_s plus the work since the last
 * checkpoint. The checkpoint interval tau is Daly's higher-order optimum
 * (J. T. Daly, "A higher order estimate of the optimum checkpoint interval
 * for restart dumps", FGCS 22 (2006), eq. 37), which refines Young's
 * sqrt(2 delta M) (J. W. Young, CACM 17 (1974)):
 *   tau = sqrt(2 delta M) (1 + sqrt(delta / 2M) / 3 + (delta / 2M) / 9) - delta,  delta < 2M
 *   tau = M,                                                                       otherwise
 * and the wall time to do T_s seconds of work is Daly's eq. 13:
 *   T_w = M e^(R/M) (e^((tau + delta)/M) - 1) T_s / tau.
 * The effective training time ratio is T_s / T_w and the expected
 * interruptions T_w / M.
 *
 * Defaults, from Meta's Llama 3 report (Llama Team, "The Llama 3 Herd of
 * Models", arXiv 2407.21783, section 3.3.4): 466 job interruptions in a
 * 54-day snapshot of pre-training on up to 16,384 H100 GPUs, 419 of them
 * unexpected, "higher than 90% effective training time"; all 419 are
 * counted per GPU (the report attributes 78% to hardware, GPU- and
 * host-side together, and gives no per-node split): 419 / (54 x 24 x
 * 16384) = 1.9733e-5 per GPU-hour; node_failures_per_hour 0 (already in
 * the total). Storage: the report's Tectonic file system sustains 2 TB/s
 * (section 3.3.1). restart_s: 600 s, an assumption (no published figure
 * at this scale), stated in every report.
 *
 * Key table of the "goodput" object of sweep and goal files:
 *   key                     type    unit     default     meaning
 *   gpu_failures_per_hour   number  1/h      1.9733e-5   interruptions per GPU-hour
 *   node_failures_per_hour  number  1/h      0           interruptions per node-hour
 *   storage_write_GBps      number  GB/s     2000        checkpoint write bandwidth
 *   restart_s               number  s        600         restart after an interruption
 *   checkpoint_interval_s   number  s        0           0: Daly's optimum
 */
#ifndef DDLSIM_GOODPUT_H
#define DDLSIM_GOODPUT_H

#include <jansson.h>

struct jobj;

#define GOODPUT_LLAMA3_INTERRUPTIONS 419.0
#define GOODPUT_LLAMA3_DAYS 54.0
#define GOODPUT_LLAMA3_GPUS 16384.0

struct goodput_params {
	double gpu_failures_per_hour, node_failures_per_hour;
	double storage_write_Bps;
	double restart_s;
	double checkpoint_interval_s;   /* 0 = optimal */
};

struct goodput_result {
	double mtbf_s;
	double checkpoint_bytes, checkpoint_write_s;
	double interval_s;
	double ratio;                   /* effective training time: work / wall */
	double wall_s;                  /* time to train with failures */
	double interruptions;           /* expected over wall_s */
};

void goodput_params_init(struct goodput_params *p);
void goodput_params_load(struct jobj *jo, struct goodput_params *p);
/* p as a "goodput" object that goodput_params_load() reads back to p.
 * New reference. */
json_t *goodput_params_json(const struct goodput_params *p);

/* Daly's optimum interval for write time delta_s and MTBF mtbf_s. */
double goodput_daly_interval(double delta_s, double mtbf_s);

/* Goodput of work_s seconds of failure-free training on gpus GPUs in
 * nodes nodes, writing checkpoint_bytes per checkpoint. */
void goodput_compute(const struct goodput_params *p, double gpus, double nodes,
		     double checkpoint_bytes, double work_s, struct goodput_result *out);

#endif
