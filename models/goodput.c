/* goodput: Young/Daly checkpointing under a failure rate (see goodput.h). */
#include "goodput.h"

#include <math.h>

#include "jload.h"

void goodput_params_init(struct goodput_params *p)
{
	*p = (struct goodput_params){
		.gpu_failures_per_hour = GOODPUT_LLAMA3_INTERRUPTIONS /
					 (GOODPUT_LLAMA3_DAYS * 24 * GOODPUT_LLAMA3_GPUS),
		.storage_write_Bps = 2e12,
		.restart_s = 600,
	};
}

void goodput_params_load(struct jobj *jo, struct goodput_params *p)
{
	double x;
	jobj_num(jo, "gpu_failures_per_hour", &p->gpu_failures_per_hour, JNONNEG);
	jobj_num(jo, "node_failures_per_hour", &p->node_failures_per_hour, JNONNEG);
	if (jobj_num(jo, "storage_write_GBps", &x, JPOS) == 1)
		p->storage_write_Bps = x * 1e9;
	jobj_num(jo, "restart_s", &p->restart_s, JNONNEG);
	jobj_num(jo, "checkpoint_interval_s", &p->checkpoint_interval_s, JNONNEG);
}

json_t *goodput_params_json(const struct goodput_params *p)
{
	json_t *o = json_object();
	json_object_set_new(o, "gpu_failures_per_hour", json_real(p->gpu_failures_per_hour));
	json_object_set_new(o, "node_failures_per_hour", json_real(p->node_failures_per_hour));
	json_object_set_new(o, "storage_write_GBps", json_real(p->storage_write_Bps / 1e9));
	json_object_set_new(o, "restart_s", json_real(p->restart_s));
	json_object_set_new(o, "checkpoint_interval_s", json_real(p->checkpoint_interval_s));
	return o;
}

double goodput_daly_interval(double d, double m)
{
	if (d >= 2 * m)
		return m;
	double x = d / (2 * m);
	return sqrt(2 * d * m) * (1 + sqrt(x) / 3 + x / 9) - d;
}

void goodput_compute(const struct goodput_params *p, double gpus, double nodes,
		     double ckpt_bytes, double work_s, struct goodput_result *o)
{
	double rate_h = gpus * p->gpu_failures_per_hour + nodes * p->node_failures_per_hour;
	*o = (struct goodput_result){ .checkpoint_bytes = ckpt_bytes, .ratio = 1, .wall_s = work_s };
	o->checkpoint_write_s = ckpt_bytes / p->storage_write_Bps;
	if (rate_h <= 0) {
		o->mtbf_s = INFINITY;
		o->interval_s = p->checkpoint_interval_s;
		return;
	}
	double m = 3600 / rate_h, d = o->checkpoint_write_s;
	o->mtbf_s = m;
	o->interval_s = p->checkpoint_interval_s > 0 ? p->checkpoint_interval_s : goodput_daly_interval(d, m);
	if (o->interval_s <= 0)
		o->interval_s = m;
	o->wall_s = m * exp(p->restart_s / m) * expm1((o->interval_s + d) / m) * work_s / o->interval_s;
	o->ratio = work_s > 0 ? work_s / o->wall_s : 1;
	o->interruptions = o->wall_s / m;
}
