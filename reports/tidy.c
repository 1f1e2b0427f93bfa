/* tidy: flat point records as CSV and JSON lines (see tidy.h). */
#include "tidy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GB 1e9

static void put(json_t *o, const char *k, json_t *v)
{
	json_object_set_new(o, k, v ? v : json_null());
}

static json_t *num(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

void tidy_add_row(json_t *rec, const struct result_row *row, const struct inputs *in,
		  const struct assessment *a)
{
	const struct plan *pl = &row->plan;
	const struct topology *t = inputs_topology(in);
	bool ok = row->status == RESULT_OK;

	put(rec, "model", json_string(inputs_model(in)->name));
	put(rec, "topology", json_string(t->name));
	put(rec, "gpu", json_string(t->gpu.name));
	put(rec, "nodes", json_integer(pl->nodes));
	put(rec, "gpus", json_integer((json_int_t)pl->nodes * t->gpus_per_node));
	put(rec, "dp", json_integer(pl->dp));
	put(rec, "tp", json_integer(pl->tp));
	put(rec, "pp", json_integer(pl->pp));
	put(rec, "sp", json_boolean(pl->sp));
	put(rec, "zero", json_integer((int)pl->zero));
	put(rec, "schedule", json_string(schedule_registry[pl->schedule].name));
	put(rec, "interleave", json_integer(pl->interleave));
	put(rec, "recompute", json_string(recompute_name(pl->recompute)));
	put(rec, "order", json_string(pl->order));
	put(rec, "seq_len", json_integer(pl->seq));
	put(rec, "global_batch", json_integer(pl->global_batch));
	put(rec, "micro_batch", json_integer(pl->micro_batch));
	put(rec, "precision", json_string(dtype_name(pl->precision)));
	put(rec, "status", json_string(result_status_names[row->status]));
	put(rec, "error", json_string(ok ? "" : row->reason));
	static const char *const figs[] = {
		"iteration_time_s", "tokens_per_s", "model_tflops_per_gpu", "mfu", "hfu",
		"compute_s", "exposed_comm_s", "bubble_s", "idle_s", "mem_peak_GB",
		"mem_capacity_GB", "fits", "sim_wall_s", "train_days", "wall_days",
		"goodput_ratio", "interruptions", "mtbf_h", "checkpoint_GB", "checkpoint_write_s",
		"checkpoint_interval_min", "gpu_hours", "cost_usd", "usd_per_Mtoken",
		"energy_MWh", "avg_power_kW", "network_ports", "capex_usd", "usd_per_year", NULL
	};
	if (!ok) {
		for (int i = 0; figs[i]; i++)
			put(rec, figs[i], json_null());
		return;
	}
	put(rec, "iteration_time_s", num(row->iteration_s));
	put(rec, "tokens_per_s", num(row->tokens_per_s));
	put(rec, "model_tflops_per_gpu", num(row->model_tflops_per_gpu));
	put(rec, "mfu", num(row->mfu));
	put(rec, "hfu", num(row->hfu));
	put(rec, "compute_s", num(row->mean.compute_s));
	put(rec, "exposed_comm_s", num(row->mean.exposed_s));
	put(rec, "bubble_s", num(row->mean.bubble_s));
	put(rec, "idle_s", num(row->mean.idle_s));
	put(rec, "mem_peak_GB", num(row->mem_worst_bytes / GB));
	put(rec, "mem_capacity_GB", num(row->mem_capacity_bytes / GB));
	put(rec, "fits", json_boolean(row->fits));
	put(rec, "sim_wall_s", num(row->sim_wall_s));
	if (!a) {
		for (int i = 13; figs[i]; i++)
			put(rec, figs[i], json_null());
		return;
	}
	long gpus = (long)pl->nodes * t->gpus_per_node;
	put(rec, "train_days", num(a->train_s / 86400));
	put(rec, "wall_days", num(a->gp.wall_s / 86400));
	put(rec, "goodput_ratio", num(a->gp.ratio));
	put(rec, "interruptions", num(a->gp.interruptions));
	put(rec, "mtbf_h", num(a->gp.mtbf_s / 3600));
	put(rec, "checkpoint_GB", num(a->gp.checkpoint_bytes / GB));
	put(rec, "checkpoint_write_s", num(a->gp.checkpoint_write_s));
	put(rec, "checkpoint_interval_min", num(a->gp.interval_s / 60));
	put(rec, "gpu_hours", num(a->gp.wall_s / 3600 * gpus));
	put(rec, "cost_usd", num(a->econ.cost_usd));
	put(rec, "usd_per_Mtoken", num(a->econ.usd_per_Mtoken));
	put(rec, "energy_MWh", t->gpu.tdp_W > 0 ? num(a->econ.energy_MWh) : json_null());
	put(rec, "avg_power_kW", t->gpu.tdp_W > 0 ? num(a->econ.facility_W / 1e3) : json_null());
	put(rec, "network_ports", num(a->econ.ports));
	put(rec, "capex_usd", num(a->econ.capex_usd));
	put(rec, "usd_per_year", num(a->econ.usd_per_year));
}

void tidy_csv_field(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

void tidy_csv_number(FILE *f, double x, int digits)
{
	if (!isfinite(x))
		return;  /* an empty field: the value does not exist */
	if (x == 0) {
		fputc('0', f);
		return;
	}
	/* `digits` significant digits in fixed notation, trailing zeros cut */
	int mag = (int)floor(log10(fabs(x)));
	int dec = digits - 1 - mag;
	if (dec < 0)
		dec = 0;
	if (dec > 12)
		dec = 12;  /* below 1e-12 is rounding noise (a time of 6e-17 s) */
	char buf[400];
	snprintf(buf, sizeof(buf), "%.*f", dec, x);
	if (strchr(buf, '.')) {
		char *e = buf + strlen(buf) - 1;
		while (*e == '0')
			*e-- = 0;
		if (*e == '.')
			*e = 0;
	}
	fputs(strcmp(buf, "-0") ? buf : "0", f);
}

static bool scalar(const json_t *v)
{
	return !json_is_object(v) && !json_is_array(v);
}

int tidy_csv_header(FILE *f, const json_t *rec)
{
	const char *k;
	json_t *v;
	bool first = true;
	json_object_foreach((json_t *)rec, k, v) {
		if (!scalar(v))
			continue;
		if (!first)
			fputc(',', f);
		first = false;
		tidy_csv_field(f, k);
	}
	fputc('\n', f);
	return fflush(f) || ferror(f) ? -1 : 0;
}

int tidy_csv_row(FILE *f, const json_t *rec)
{
	const char *k;
	json_t *v;
	bool first = true;
	json_object_foreach((json_t *)rec, k, v) {
		if (!scalar(v))
			continue;
		if (!first)
			fputc(',', f);
		first = false;
		if (json_is_string(v))
			tidy_csv_field(f, json_string_value(v));
		else if (json_is_integer(v))
			fprintf(f, "%lld", (long long)json_integer_value(v));
		else if (json_is_real(v))
			tidy_csv_number(f, json_real_value(v), 9);
		else if (json_is_boolean(v))
			fputs(json_is_true(v) ? "true" : "false", f);
	}
	fputc('\n', f);
	return fflush(f) || ferror(f) ? -1 : 0;
}

int tidy_jsonl(FILE *f, const json_t *rec)
{
	char *s = json_dumps(rec, JSON_COMPACT | JSON_REAL_PRECISION(12));
	if (!s)
		return -1;
	fputs(s, f);
	fputc('\n', f);
	free(s);
	return fflush(f) || ferror(f) ? -1 : 0;
}
