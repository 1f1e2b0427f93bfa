/* report_csv: report.csv, one header and one row of the headline numbers
 * (see report.h), and the same columns from a runner's fixed-size row
 * (`ddlsim run` of several scenarios). Fields are written through tidy.h's
 * RFC 4180 field writer and plain-decimal numbers. */
#include "report.h"

#include "report-private.h"
#include "schedule.h"
#include "tidy.h"

static const char *const csv_cols[] = {
	"scenario", "model", "topology", "gpu", "nodes", "gpus", "dp", "tp", "pp", "sp",
	"zero", "schedule", "interleave", "recompute", "seq_len", "global_batch",
	"micro_batch", "precision", "iteration_time_s", "samples_per_s", "tokens_per_s",
	"model_tflops_per_gpu", "hardware_tflops_per_gpu", "mfu", "compute_s",
	"exposed_comm_s", "bubble_s", "idle_s", "mem_peak_GB", "mem_capacity_GB",
	"fits", "time_to_train_days", "gpu_hours", "cost_usd", "status", "error", NULL
};

/* One text field, quoted only where RFC 4180 needs it (tidy.h). */
static void field(FILE *f, const char *s, bool first)
{
	if (!first)
		fputc(',', f);
	tidy_csv_field(f, s);
}

/* One number, unquoted, in plain decimal to `digits` significant digits. */
static void numf(FILE *f, double x, int digits)
{
	fputc(',', f);
	tidy_csv_number(f, x, digits);
}

static void intf(FILE *f, long x)
{
	fprintf(f, ",%ld", x);
}

int report_csv_header(FILE *f)
{
	for (int i = 0; csv_cols[i]; i++)
		field(f, csv_cols[i], i == 0);
	fputc('\n', f);
	return ferror(f) ? -1 : 0;
}

int report_csv_row(FILE *f, const struct result_row *row, const char *name, const struct inputs *in)
{
	const struct plan *pl = &row->plan;
	const struct topology *topo = inputs_topology(in);
	bool ok = row->status == RESULT_OK;

	field(f, name ? name : "", true);
	field(f, inputs_model(in)->name, false);
	field(f, topo->name, false);
	field(f, topo->gpu.name, false);
	intf(f, pl->nodes);
	intf(f, (long)pl->nodes * topo->gpus_per_node);
	intf(f, pl->dp);
	intf(f, pl->tp);
	intf(f, pl->pp);
	field(f, pl->sp ? "true" : "false", false);
	intf(f, (int)pl->zero);
	field(f, schedule_registry[pl->schedule].name, false);
	intf(f, pl->interleave);
	field(f, recompute_name(pl->recompute), false);
	intf(f, pl->seq);
	intf(f, pl->global_batch);
	intf(f, pl->micro_batch);
	field(f, dtype_name(pl->precision), false);
	if (ok) {
		numf(f, row->iteration_s, 9);
		numf(f, row->samples_per_s, 9);
		numf(f, row->tokens_per_s, 9);
		numf(f, row->model_tflops_per_gpu, 6);
		numf(f, row->hardware_tflops_per_gpu, 6);
		numf(f, row->mfu, 6);
		numf(f, row->mean.compute_s, 9);
		numf(f, row->mean.exposed_s, 9);
		numf(f, row->mean.bubble_s, 9);
		numf(f, row->mean.idle_s, 9);
		numf(f, row->mem_worst_bytes / GB, 6);
		numf(f, row->mem_capacity_bytes / GB, 6);
		field(f, row->fits ? "true" : "false", false);
		numf(f, row->time_to_train_s / 86400, 6);
		/* GPU-hours and money to the unit and the cent, whatever their size */
		fprintf(f, ",%.1f", row->gpu_hours);
		fprintf(f, ",%.2f", row->cost_usd);
	} else
		for (int i = 0; i < 16; i++)
			field(f, "", false);
	field(f, result_status_names[row->status], false);
	field(f, ok ? "" : row->reason, false);
	fputc('\n', f);
	return ferror(f) ? -1 : 0;
}

int report_write_csv_stream(const struct result *r, FILE *f, bool header)
{
	struct result_row row = { 0 };
	result_row_fill(&row, r);
	if (header && report_csv_header(f))
		return -1;
	return report_csv_row(f, &row, r->meta.name, r->in);
}
