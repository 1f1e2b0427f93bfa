/* html: the self-contained HTML report (see html.h). */
#include "html.h"
#include "stack.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot.h"
#include "report-private.h"
#include "schedule.h"
#include "svg.h"
#include "xalloc.h"

#define GB 1e9
#define GIB 1073741824.0

static void esc(FILE *f, const char *s)
{
	svg_escape(f, s);  /* the one escaper for markup */
}

/* A table row of a label and a printf-formatted, escaped value. */
static void row(FILE *f, const char *label, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void row(FILE *f, const char *label, const char *fmt, ...)
{
	va_list ap;
	char *v;
	va_start(ap, fmt);
	int n = vasprintf(&v, fmt, ap);
	va_end(ap);
	if (n < 0) {
		fprintf(stderr, "ddlsim: fatal: out of memory formatting the HTML report\n");
		exit(1);
	}
	fputs("<tr><th>", f);
	esc(f, label);
	fputs("</th><td>", f);
	esc(f, v);
	fputs("</td></tr>\n", f);
	free(v);
}

static const char css[] =
	"body{font-family:system-ui,sans-serif;margin:2em auto;max-width:980px;color:#222}"
	"h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;padding-bottom:.2em}"
	"table{border-collapse:collapse;font-size:.9em;margin:.5em 0}"
	"th,td{border:1px solid #ddd;padding:.2em .5em;text-align:left}"
	"td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}"
	"tr:nth-child(even){background:#f7f7f7}.bad{color:#b00}.good{color:#070}"
	"svg{max-width:100%;height:auto}.note{color:#666;font-size:.85em}";

/* Inline an SVG document, dropping nothing: <svg> is valid HTML5. */
static int inline_svg(FILE *f, char *svg)
{
	if (!svg)
		return -1;
	fputs(svg, f);
	free(svg);
	return 0;
}

/* The kernels of one micro-batch, one row per op. */
static void ops_table(FILE *f, const struct result *r)
{
	fputs("<section id=\"ops\"><h2>Kernels of one micro-batch</h2><table>\n<tr><th>block</th>"
	      "<th>pass</th><th>op</th><th class=\"n\">m</th><th class=\"n\">n</th><th class=\"n\">k</th>"
	      "<th class=\"n\">batch</th><th class=\"n\">GFLOP</th><th class=\"n\">MB moved</th>"
	      "<th class=\"n\">kernels</th><th class=\"n\">time (us)</th><th class=\"n\">TFLOP/s</th><th>source</th></tr>\n", f);
	for (int i = 0; i < r->nops; i++) {
		const struct op_timing *o = &r->ops[i];
		fputs("<tr><td>", f);
		esc(f, o->block);
		fputs("</td><td>", f);
		esc(f, o->pass);
		fputs("</td><td>", f);
		esc(f, o->name);
		fprintf(f, "</td><td class=\"n\">%.0f</td><td class=\"n\">%.0f</td><td class=\"n\">%.0f</td>"
			"<td class=\"n\">%.0f</td><td class=\"n\">%.3f</td><td class=\"n\">%.3f</td>"
			"<td class=\"n\">%d</td><td class=\"n\">%.2f</td><td class=\"n\">%.1f</td><td>%s</td></tr>\n",
			o->m, o->n, o->k, o->batch, o->flops / 1e9, o->bytes / 1e6, o->kernels, o->time_s * 1e6,
			o->time_s > 0 ? o->flops / o->time_s / 1e12 : 0.0, o->measured ? "profile" : "roofline");
	}
	fputs("</table></section>\n", f);

}

char *html_render(const struct result *r)
{
	const struct plan *pl = &r->plan;
	const struct model *model = inputs_model(r->in);
	const struct topology *topo = inputs_topology(r->in);
	char *buf = NULL;
	size_t len = 0;
	int bad = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	const char *name = r->meta.name ? r->meta.name : "scenario";

	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>ddlsim: ", f);
	esc(f, name);
	fprintf(f, "</title>\n<style>%s</style>\n"
		"<script>window.onerror=function(){document.documentElement.setAttribute('data-errors','1')};</script>\n"
		"</head><body>\n<h1>", css);
	esc(f, name);
	fputs("</h1>\n<p>", f);
	esc(f, r->meta.description);
	fputs("</p>\n", f);

	/* summary */
	struct result_split mean = result_mean_split(r);
	fputs("<section id=\"summary\"><h2>Summary</h2><table>\n", f);
	row(f, "model", "%s (%.3g B parameters)", model->name, r->params / 1e9);
	row(f, "cluster", "%d x %s = %ld x %s", pl->nodes, topo->name, r->gpus, topo->gpu.name);
	row(f, "plan", "dp %d, tp %d, pp %d, cp %d%s, ZeRO %d, schedule %s (v %d), recompute %s, %s",
	    pl->parallel.dp, pl->parallel.tp, pl->parallel.pp, pl->parallel.cp, pl->parallel.sp ? ", sp" : "",
	    (int)pl->parallel.zero,
	    schedule_registry[pl->parallel.schedule].name, pl->parallel.interleave,
	    recompute_name(pl->parallel.recompute),
	    dtype_name(pl->training.precision));
	if (model_arch(model)->sequence)
		row(f, "kernels", "%s stack (%s), attention %s",
		    plan_stack(pl)->name,
		    plan_stack(pl)->description,
		    plan_attention_kernel(pl));
	row(f, "batch", "%ld sequences x %ld tokens, micro-batch %ld, %g micro-batches per pipeline",
	    pl->training.global_batch, pl->training.seq, pl->training.micro_batch, r->microbatches);
	row(f, "iteration time", "%.4f s", r->iteration_s);
	row(f, "throughput", "%.2f samples/s, %.0f tokens/s", r->samples_per_s, r->tokens_per_s);
	row(f, "model TFLOP/s per GPU", "%.1f", r->model_tflops_per_gpu);
	row(f, "hardware TFLOP/s per GPU", "%.1f", r->hardware_tflops_per_gpu);
	row(f, "MFU / HFU", "%.1f %% / %.1f %%", 100 * r->mfu, 100 * r->hfu);
	row(f, "mean split (s)", "compute %.4f, exposed communication %.4f, bubble %.4f, idle %.4f",
	    mean.compute_s, mean.exposed_s, mean.bubble_s, mean.idle_s);
	row(f, "memory", "%s: worst stage %d needs %.2f GB (%.2f GiB) of %.2f GB",
	    r->fits ? "fits" : "does not fit", r->worst_stage, r->worst_total_bytes / GB,
	    r->worst_total_bytes / GIB, topo->gpu.hbm_bytes / GB);
	if (pl->training.train_tokens > 0)
		row(f, "training run", "%.3g tokens: %.1f days, %.0f GPU-hours, $%.0f", pl->training.train_tokens,
		    r->time_to_train_s / 86400, r->gpu_hours, r->cost_usd);
	{
		struct report_band rb;
		char bt[200];
		report_band(r, &rb);
		row(f, "error band", "%s: iteration %.4f s, MFU %.1f %%, %ld more GPUs (%ld) at the bias",
		    band_text(rb.b, bt, sizeof(bt)), rb.iteration_s, 100 * rb.mfu, rb.gpus_more, rb.gpus + rb.gpus_more);
	}
	fputs("</table></section>\n", f);

	/* published vs predicted */
	struct result_row rr = { 0 };
	result_row_fill(&rr, r);
	bool any = false;
	for (int k = 0; k < PUB_NFIGURES; k++)
		any |= published_figure(&r->meta.pub, k) > 0;
	if (any) {
		fputs("<section id=\"published\"><h2>Published vs predicted</h2><table>\n"
		      "<tr><th>figure</th><th class=\"n\">published</th><th class=\"n\">predicted</th>"
		      "<th class=\"n\">error</th></tr>\n", f);
		for (int k = 0; k < PUB_NFIGURES; k++) {
			double want = published_figure(&r->meta.pub, k);
			if (want <= 0)
				continue;
			double got = result_row_figure(&rr, k), e = got / want - 1;
			fprintf(f, "<tr><td>%s (%s)</td><td class=\"n\">%.4g</td><td class=\"n\">%.4g</td>"
				"<td class=\"n %s\">%+.1f %%</td></tr>\n", pub_figures[k].key, pub_figures[k].unit,
				want, got, e > 0.1 || e < -0.1 ? "bad" : "good", 100 * e);
		}
		fputs("</table><p class=\"note\">source: ", f);
		esc(f, r->meta.pub.source);
		fputs("</p></section>\n", f);
	}

	/* plots */
	fputs("<section id=\"breakdown\"><h2>Where the time goes</h2>\n", f);
	bad |= inline_svg(f, plot_breakdown_svg(r));
	fputs("<table><tr><th>stage</th><th class=\"n\">forward per micro-batch (s)</th>"
	      "<th class=\"n\">backward per micro-batch (s)</th><th class=\"n\">bubble (s)</th>"
	      "<th class=\"n\">bubble fraction</th></tr>\n", f);
	for (int s = 0; s < r->nstages; s++)
		fprintf(f, "<tr><td>%d</td><td class=\"n\">%.6f</td><td class=\"n\">%.6f</td>"
			"<td class=\"n\">%.4f</td><td class=\"n\">%.1f %%</td></tr>\n", s,
			r->stage[s].compute_fwd_s, r->stage[s].compute_bwd_s, r->stage[s].bubble_s,
			100 * r->stage[s].bubble_fraction);
	fputs("</table>\n<table><tr><th>dimension</th><th class=\"n\">bytes sent per GPU</th></tr>\n", f);
	static const struct { const char *n; int c; } dims[] = {
		{ "tp", CAT_TP_COMM }, { "cp", CAT_CP_COMM }, { "dp", CAT_DP_COMM },
		{ "param", CAT_PARAM_COMM }, { "pp", CAT_PP_COMM } };
	for (size_t k = 0; k < sizeof(dims) / sizeof(dims[0]); k++)
		fprintf(f, "<tr><td>%s</td><td class=\"n\">%.4g GB</td></tr>\n", dims[k].n,
			r->comm_bytes_per_gpu[dims[k].c] / GB);
	fputs("</table></section>\n<section id=\"schedule\"><h2>Pipeline schedule</h2>\n", f);
	bad |= inline_svg(f, plot_gantt_svg(r));
	fputs("<p class=\"note\">Forward and backward passes in the schedule's order with each stage's "
	      "per-micro-batch compute time; communication and the optimizer step are not drawn. "
	      "<code>ddlsim run --trace</code> records every task.</p></section>\n", f);

	fputs("<section id=\"memory\"><h2>Memory anatomy per GPU</h2>\n", f);
	bad |= inline_svg(f, plot_memory_svg(r));
	fputs("<table><tr><th>stage</th><th class=\"n\">weights</th><th class=\"n\">gradients</th>"
	      "<th class=\"n\">optimizer</th><th class=\"n\">activations</th><th class=\"n\">logits</th>"
	      "<th class=\"n\">comm buffers</th><th class=\"n\">reserved</th><th class=\"n\">total GB</th>"
	      "<th class=\"n\">total GiB</th><th>fits</th></tr>\n", f);
	for (int s = 0; s < r->nstages; s++) {
		const struct mem_anatomy *m = &r->stage[s].mem;
		fprintf(f, "<tr><td>%d</td><td class=\"n\">%.2f</td><td class=\"n\">%.2f</td>"
			"<td class=\"n\">%.2f</td><td class=\"n\">%.2f</td><td class=\"n\">%.2f</td>"
			"<td class=\"n\">%.2f</td><td class=\"n\">%.2f</td><td class=\"n\">%.2f</td>"
			"<td class=\"n\">%.2f</td><td class=\"%s\">%s</td></tr>\n", s,
			m->weights_bytes / GB, m->grads_bytes / GB, m->optimizer_bytes / GB,
			m->activations_bytes / GB, m->logits_bytes / GB, m->comm_buffer_bytes / GB,
			m->reserved_bytes / GB, m->total_bytes / GB, m->total_bytes / GIB,
			m->fits ? "good" : "bad", m->fits ? "yes" : "no");
	}
	fputs("</table><p class=\"note\">GB = 1e9 bytes (datasheets), GiB = 2^30 bytes "
	      "(nvidia-smi, PyTorch); reserved = CUDA context + NCCL buffers + allocator reserve.</p>"
	      "</section>\n", f);

	ops_table(f, r);

	/* provenance */
	const char *profile = inputs_profile_path(r->in);
	fputs("<section id=\"provenance\"><h2>Provenance</h2><table>\n", f);
	row(f, "producer", "ddlsim %s (report schema ddlsim.report 1.0)", r->producer_version);
	row(f, "scenario", "%s", r->meta.path ? r->meta.path : "");
	row(f, "model file", "%s", inputs_model_path(r->in));
	row(f, "topology file", "%s", inputs_topology_path(r->in));
	row(f, "GPU preset", "%s", topo->gpu_preset[0] ? topo->gpu_preset : "inline in the topology");
	row(f, "cost source", "%s", r->cost_source ? r->cost_source : "roofline");
	row(f, "profile", "%s", profile ? profile : "none (roofline)");
	row(f, "cost detail", "%s", r->cost_detail ? r->cost_detail : "");
	row(f, "simulation", "%d of %d ranks simulated%s, %ld flows, %ld tasks, %.2f s wall",
	    result_sim(r).nsimulated, result_nranks(r), r->folded ? " (folded replicas)" : "", result_sim(r).flows,
	    result_sim(r).tasks, r->sim_wall_s);
	fputs("</table></section>\n"
	      "<script>document.body.setAttribute('data-rendered','ok');</script>\n"
	      "</body></html>\n", f);
	bad |= ferror(f) != 0;
	fclose(f);
	if (bad) {
		free(buf);
		return NULL;
	}
	return buf;
}
