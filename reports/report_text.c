/* report_text: the terminal summary of one simulation (see report.h):
 * what was simulated, the headline metrics, communication per dimension,
 * MoE, parameter servers, stragglers, throttling, degraded links, memory
 * per GPU with its verdict, the published figures against the prediction,
 * the training run, the error band of the nearest validation family
 * (sim/band.h) and the simulation's own size. */
#include "report.h"

#include <math.h>
#include <string.h>

#include "framework.h"
#include "human.h"
#include "report-private.h"
#include "schedule.h"
#include "stack.h"

void report_verdict(const struct result *r, char *buf, size_t n)
{
	const struct stage_result *w = &r->stage[r->worst_stage];
	if (r->fits) {
		/* the margin and the two largest terms */
		const struct mem_anatomy *a = &w->mem;
		const struct { const char *name; double b; } t[] = {
			{ "activations", a->activations_bytes },
			{ a->peak_at_loss ? "the loss" : "the recomputed layer",
			  a->peak_at_loss ? a->logits_bytes : a->recompute_bytes },
			{ "optimizer state", a->optimizer_bytes }, { "weights", a->weights_bytes },
			{ "gradients", a->grads_bytes }, { "fp8 weight copies", a->fp8_weight_bytes },
			{ "comm buffers", a->comm_buffer_bytes },
		};
		int i1 = 0, i2 = 1;
		for (int i = 0; i < (int)(sizeof(t) / sizeof(t[0])); i++) {
			if (t[i].b > t[i1].b) {
				i2 = i1;
				i1 = i;
			} else if (i != i1 && (i2 == i1 || t[i].b > t[i2].b))
				i2 = i;
		}
		snprintf(buf, n, "fits with %.1f GB to spare: the fullest GPU (stage %d) needs %.1f GB of %.1f GB; "
			 "largest: %s %.1f GB, %s %.1f GB", (a->capacity_bytes - a->total_bytes) / GB, r->worst_stage,
			 a->total_bytes / GB, a->capacity_bytes / GB, t[i1].name, t[i1].b / GB, t[i2].name, t[i2].b / GB);
	} else {
		int bad = 0;
		for (int s = 0; s < r->nstages; s++)
			bad += !r->stage[s].mem.fits;
		snprintf(buf, n, "does not fit: stage %d needs %.1f GB per GPU but has %.1f GB "
			 "(short by %.1f GB); %d of %d stages do not fit",
			 r->worst_stage, w->mem.total_bytes / GB, w->mem.capacity_bytes / GB,
			 r->shortfall_bytes / GB, bad, r->nstages);
	}
}

static void human_bytes(double b, char *out, size_t n)
{
	if (b >= 1e12)
		snprintf(out, n, "%.2f TB", b / 1e12);
	else if (b >= 1e9)
		snprintf(out, n, "%.2f GB", b / 1e9);
	else if (b >= 1e6)
		snprintf(out, n, "%.2f MB", b / 1e6);
	else
		snprintf(out, n, "%.0f B", b);
}

/* The kernel stack, who chose it, the attention kernel and, when not
 * the current one, the GEMM library. */
static void print_kernels(const struct plan *sc, FILE *f)
{
	enum gemm_lib lib = plan_stack(sc)->gemm_lib;
	fprintf(f, "kernels      %s stack%s, attention %s%s%s\n", plan_stack(sc)->name,
		sc->compute.stack_set ? "" : sc->framework >= 0 ? " (the framework's)" : " (default)",
		plan_attention_kernel(sc), lib != GEMM_LIB_CURRENT ? ", GEMMs " : "",
		lib != GEMM_LIB_CURRENT ? gemm_lib_names[lib] : "");
}

/* The summary's head: what was simulated (scenario, model, cluster and
 * node groups, plan, framework, kernels, links, batch). */
static void print_setup(const struct result *r, FILE *f)
{
	const struct plan *sc = &r->plan;
	const struct model *model = inputs_model(r->in);
	const struct topology *topo = inputs_topology(r->in);

	fprintf(f, "scenario     %s\n", (r->meta.name ? r->meta.name : ""));
	if (r->params >= 1e9)
		fprintf(f, "model        %s (%.2f B params)\n", model->name, r->params / 1e9);
	else
		fprintf(f, "model        %s (%.2f M params)\n", model->name, r->params / 1e6);
	if (r->ngroups > 0) {
		fprintf(f, "cluster      %d x %s nodes, %d GPUs in %d node groups (%s order)", sc->nodes,
			topo->name, (int)r->gpus, r->ngroups, plan_node_order_names[sc->node_order]);
	} else
		fprintf(f, "cluster      %d x %s = %d x %s", sc->nodes, topo->name, (int)r->gpus, topo->gpu.name);
	if (topo->gpus_per_node != topo->gpus_per_node_physical)
		fprintf(f, " (%d of %d GPUs per node used)", topo->gpus_per_node, topo->gpus_per_node_physical);
	fputc('\n', f);
	/* gpu.power.power_cap_W: the topology's GPU, or each node group's */
	if (r->ngroups == 0 && gpu_power_cap_clock_ratio(&topo->gpu) < 1)
		fprintf(f, "power limit  %g W of %g W TDP: compute-bound kernels at %.3f of the clock\n",
			topo->gpu.power_cap_W, topo->gpu.tdp_W, gpu_power_cap_clock_ratio(&topo->gpu));
	for (int i = 0; i < r->ngroups; i++) {
		const struct group_result *g = &r->group[i];
		const struct gpu_spec *gg = &sc->group[r->group_index[i]].gpu;
		fprintf(f, "  group %d    nodes %d-%d, ranks %d-%d: %s, stages %d-%d, compute %.4f s, "
			"memory %.1f of %.1f GB%s\n", r->group_index[i], g->first_node,
			g->first_node + g->nodes - 1, g->first_rank, g->first_rank + g->ranks - 1, g->gpu,
			g->stage_lo, g->stage_hi, g->compute_s, g->worst_total_bytes / 1e9,
			g->capacity_bytes / 1e9, g->fits ? "" : " (does not fit)");
		if (gpu_power_cap_clock_ratio(gg) < 1)
			fprintf(f, "             power limit %g W of %g W TDP: compute-bound kernels at %.3f "
				"of the clock\n", gg->power_cap_W, gg->tdp_W, gpu_power_cap_clock_ratio(gg));
	}
	char every[32] = "";
	if (sc->parallel.recompute == RECOMPUTE_FULL && sc->parallel.recompute_every > 1)
		snprintf(every, sizeof(every), " (every %d layers)", sc->parallel.recompute_every);
	fprintf(f, "plan         dp=%d tp=%d pp=%d%s zero=%d schedule=%s v=%d recompute=%s%s\n",
		sc->parallel.dp, sc->parallel.tp, sc->parallel.pp, sc->parallel.sp ? " sp" : "",
		(int)sc->parallel.zero,
		schedule_registry[sc->parallel.schedule].name, sc->parallel.interleave,
		recompute_name(sc->parallel.recompute), every);
	if (sc->parallel.cp > 1)
		fprintf(f, "context      cp=%d (%s), gradients over dp x cp = %d ranks\n", sc->parallel.cp,
			plan_cp_comm_names[sc->parallel.cp_comm], sc->parallel.dp * sc->parallel.cp);
	if (sc->framework >= 0) {
		char label[64];
		fprintf(f, "framework    %s: grad reduce %s, bucket %g MB, overlap grad %s, param %s\n",
			framework_label(&framework_table[sc->framework], label, sizeof(label)),
			dtype_name(sc->training.grad_dtype), sc->communication.bucket_bytes / 1e6,
			sc->communication.overlap_grad_reduce ? "on" : "off",
			sc->communication.overlap_param_gather ? "on" : "off");
	}
	if (model_arch(model)->sequence)
		print_kernels(sc, f);
	fprintf(f, "links        tp: %s; dp: %s; pp: %s\n", r->links_tp[0] ? r->links_tp : "-",
		r->links_dp[0] ? r->links_dp : "-", r->links_pp[0] ? r->links_pp : "-");
	if (sc->parallel.cp > 1)
		fprintf(f, "             cp: %s\n", r->links_cp[0] ? r->links_cp : "-");
	if (!model_arch(model)->sequence)
		fprintf(f, "batch        %ld images, micro-batch %ld, %g micro-batches per GPU, %s\n",
			sc->training.global_batch, sc->training.micro_batch, r->microbatches,
			dtype_name(sc->training.precision));
	else
		fprintf(f, "batch        %ld x %ld tokens, micro-batch %ld, %g micro-batches per pipeline, %s\n",
			sc->training.global_batch, sc->training.seq, sc->training.micro_batch, r->microbatches,
			dtype_name(sc->training.precision));
}

/* Communication per dimension, mean over ranks: busy on the communication
 * streams and exposed (the compute stream waiting), and bytes sent. */
static void print_comm(const struct result *r, FILE *f)
{
	enum { NDIMS = 6 };
	static const struct { const char *name; int cat; } dims[NDIMS] = {
		{ "tp", CAT_TP_COMM }, { "cp", CAT_CP_COMM }, { "dp", CAT_DP_COMM },
		{ "param", CAT_PARAM_COMM }, { "ep", CAT_EP_COMM }, { "pp", CAT_PP_COMM } };
	double busy[NDIMS] = { 0 }, exposed[NDIMS] = { 0 };
	int n = result_nranks(r);
	for (int i = 0; i < n; i++) {
		struct result_rank x = result_rank(r, i);
		for (int k = 0; k < NDIMS; k++) {
			busy[k] += x.comm_s[dims[k].cat] / n;
			exposed[k] += x.exposed_s[dims[k].cat] / n;
		}
	}
	fprintf(f, "\n%-16s %12s %12s %14s\n", "communication", "busy s", "exposed s", "sent per GPU");
	for (int k = 0; k < NDIMS; k++) {
		int c = dims[k].cat;
		char buf[64];
		if (busy[k] <= 0 && exposed[k] <= 0 && r->comm_bytes_per_gpu[c] <= 0)
			continue;
		human_bytes(r->comm_bytes_per_gpu[c], buf, sizeof(buf));
		fprintf(f, "  %-14s %12.4f %12.4f %14s\n", dims[k].name, busy[k], exposed[k], buf);
	}
	struct result_link l;
	if (report_hottest_link(r, &l)) { /* the links section of report.json has the rest */
		char buf[64];
		human_bytes(l.bytes, buf, sizeof(buf));
		fprintf(f, "hottest link %s (%s): %s, busy %.4f s, peak %.0f %%%s\n", l.name, l.cls, buf,
			l.busy_s, 100 * l.peak_util, r->folded ? " (of the simulated flows)" : "");
	}
}

void report_band(const struct result *r, struct report_band *out)
{
	struct band_pick bp;
	band_choose(r->in, &r->plan, &bp);
	const struct band *b = bp.b;
	*out = (struct report_band){
		.p = bp, .b = b, .lo = fmax(1 + bp.lo, 0.01), .hi = 1 + bp.hi, .iteration_s = r->iteration_s * (1 + b->bias), .mfu = r->mfu / (1 + b->bias),
		.train_days = r->time_to_train_s / 86400 * (1 + b->bias), .cost_usd = r->cost_usd * (1 + b->bias),
		.gpus = r->gpus, .per_node = inputs_topology(r->in)->gpus_per_node,
	};
	out->gpus_more = band_more_gpus(b, r->gpus, out->per_node);
	out->gpus_safe = band_safe_gpus(&bp, r->gpus, out->per_node);
}

/* The error band of the prediction (sim/band.h). */
static void print_band(const struct result *r, FILE *f)
{
	struct report_band rb;
	report_band(r, &rb);
	char bt[600];
	fprintf(f, "\nerror band: %s\n", band_text(&rb.p, bt, sizeof(bt)));
	fprintf(f, "  (the validation family the plan is matched to, sim/band.h: %.0f %% of the suite's runs, "
		"each banded with its own family left out, fell inside such a band; bias > 0: ddlsim "
		"predicts faster than the published runs)\n", 100 * BAND_LEVEL);
	fprintf(f, "  %-26s %12.4f s, %.4f - %.4f; %.4f at the bias\n", "iteration_time_s", r->iteration_s,
		r->iteration_s * rb.lo, r->iteration_s * rb.hi, rb.iteration_s);
	fprintf(f, "  %-26s %11.1f%%, %.1f - %.1f %%; %.1f %% at the bias\n", "mfu", 100 * r->mfu,
		100 * r->mfu / rb.hi, 100 * fmin(r->mfu / rb.lo, 1), 100 * rb.mfu);
	fprintf(f, "  %-26s %12ld, %ld more at the bias (%ld, %ld nodes); %ld at the slow edge (%ld nodes)\n",
		"gpus", r->gpus, rb.gpus_more, r->gpus + rb.gpus_more, (r->gpus + rb.gpus_more) / rb.per_node,
		rb.gpus_safe, rb.gpus_safe / rb.per_node);
	fprintf(f, "  (GPUs to meet the same time if the run is that much slower, throughput scaling "
		"with the GPUs, in whole nodes of %d)\n", rb.per_node);
	if (r->plan.training.train_tokens > 0) {
		char c0[32], c1[32];
		fprintf(f, "  %-26s %12.1f d, $%s; %.1f d, $%s at the bias\n", "training run", r->time_to_train_s / 86400,
			human_number(r->cost_usd, c0, sizeof(c0)), rb.train_days,
			human_number(rb.cost_usd, c1, sizeof(c1)));
	}
}

bool report_goal(const struct result *r, struct goal_verdict *out)
{
	const struct scenario_goal *g = &r->meta.goal;
	if (!g->set)
		return false;
	struct report_band rb;
	report_band(r, &rb);
	double gbusy[PLAN_MAX_NODE_GROUPS];
	double busy = result_busy(r, gbusy);
	assess_goal(r->in, &r->plan, g, r->tokens_per_s, busy, gbusy, rb.hi, out);
	return true;
}

/* One line of the goal's verdict: days with failures, cost, energy and
 * what they mean against the deadline and the budget. */
static void print_goal_line(FILE *f, const char *at, const struct scenario_goal *g, const struct assessment *a,
			    bool deadline, bool budget)
{
	char c[32], late[32], over[32];
	double days = a->gp.wall_s / 86400;
	fprintf(f, "  %-18s %.1f d with failures, $%s", at, days, human_number(a->econ.cost_usd, c, sizeof(c)));
	if (isfinite(a->econ.energy_MWh) && a->econ.energy_MWh > 0)
		fprintf(f, ", %.0f MWh", a->econ.energy_MWh);
	if (g->deadline_s > 0) {
		if (deadline)
			fprintf(f, ": meets the deadline (%.1f d to spare)", g->deadline_s / 86400 - days);
		else
			fprintf(f, ": misses the deadline by %s d", human_number(days - g->deadline_s / 86400, late,
										  sizeof(late)));
	}
	if (g->budget_usd > 0) {
		fputs(g->deadline_s > 0 ? "," : ":", f);
		if (budget)
			fputs(" within the budget", f);
		else
			fprintf(f, " over the budget by $%s", human_number(a->econ.cost_usd - g->budget_usd, over,
									   sizeof(over)));
	}
	fputc('\n', f);
}

/* The goal the plan was chosen for and the run's verdict against it. */
static void print_goal(const struct result *r, FILE *f)
{
	struct goal_verdict v;
	if (!report_goal(r, &v))
		return;
	const struct scenario_goal *g = &r->meta.goal;
	char b[32];
	fprintf(f, "\ngoal %s", g->name);
	if (g->cluster)
		fprintf(f, " on %s", g->cluster);
	if (g->file)
		fprintf(f, " (%s)", g->file);
	fputc(':', f);
	if (g->deadline_s > 0)
		fprintf(f, " deadline %s d", human_number(g->deadline_s / 86400, b, sizeof(b)));
	if (g->budget_usd > 0)
		fprintf(f, "%s budget $%s", g->deadline_s > 0 ? "," : "", human_number(g->budget_usd, b, sizeof(b)));
	if (!(g->deadline_s > 0) && !(g->budget_usd > 0))
		fputs(" no deadline or budget", f);
	fputc('\n', f);
	print_goal_line(f, "at the estimate", g, &v.at, v.meets_deadline, v.within_budget);
	print_goal_line(f, "at the slow edge", g, &v.slow, v.meets_deadline_slow, v.within_budget_slow);
	fprintf(f, "  (wall time with failures, checkpoints and restarts, goodput %.1f %%: models/goodput.h, as "
		"`ddlsim plan` counts it; the slow edge: the error band's, the iteration %.3f x as long)\n",
		100 * v.at.gp.ratio, v.slow_factor);
	if (!r->fits)
		fputs("  (the plan does not fit in GPU memory: a run that cannot start)\n", f);
}

/* What the engine simulated: ranks, flows, tasks, why it did not fold,
 * and the all-to-alls posted one flow per NIC (engine/engine_classes.c). */
static void print_simulation(const struct result *r, FILE *f)
{
	struct result_sim rs = result_sim(r);
	fprintf(f, "\nsimulated %d of %d ranks%s, %ld flows, %ld tasks in %.2f s\n", rs.nsimulated,
		result_nranks(r), r->folded ? " (folded replicas)" : "", rs.flows, rs.tasks, r->sim_wall_s);
	if (!r->folded && r->fold_reason && result_nranks(r) > 1)
		fprintf(f, "not folded: %s\n", r->fold_reason);
	if (rs.cls_posted > 0)
		fprintf(f, "all-to-alls one flow per NIC while alone: %ld, %ld of them split back into "
			"pairs when other traffic met them\n", rs.cls_posted, rs.cls_split);
	if (rs.cls_why)
		fprintf(f, "all-to-alls per pair: %s\n", rs.cls_why);
}

/* Straggler groups, one line each, when there are several (a rank in
 * several computes x the product of their factors). */
static void print_straggler_groups(const struct plan *p, FILE *f, bool after_stats)
{
	const struct plan_stragglers *st = &p->simulation.stragglers;
	fprintf(f, "%sstraggler groups (a rank in several: the product of their factors)\n",
		after_stats ? "" : "\n");
	for (int g = 0; g < st->ngroups; g++) {
		const struct plan_straggler_group *s = &st->group[g];
		fprintf(f, "  %d: ", g);
		if (s->nranks) {
			fprintf(f, "rank%s", s->nranks > 1 ? "s" : "");
			for (int i = 0; i < s->nranks; i++)
				fprintf(f, "%s%d", i ? "," : " ", st->rank[s->first_rank + i]);
		} else
			fprintf(f, "%g%% of the ranks", 100 * s->fraction);
		if (s->dist == STRAG_EMPIRICAL)
			fprintf(f, ", empirical (%d samples)", s->nsamples);
		else if (s->dist == STRAG_FIXED)
			fprintf(f, ", fixed x%g", s->slowdown);
		else
			fprintf(f, ", %s x%g sigma %g", plan_straggler_dist_names[s->dist], s->slowdown, s->sigma);
		fprintf(f, ", seed %u\n", s->seed);
	}
}

/* One line on the data loader (models/input_pipeline.h), when there is one. */
static void print_input(const struct result *r, FILE *f)
{
	const struct input_step *in = &r->input;
	const char *who = r->plan.training.input.loader == INPUT_DALI_GPU ? "each GPU's DALI pipeline"
									   : "host";
	const char *per = r->input_unit_gpus > 1 ? "a node's GPUs want" : "the GPU wants";

	if (r->plan.training.input.loader == INPUT_NONE)
		return;
	fprintf(f, "%s: %s decodes %.1f k img/s, %s %.1f k (%s, %.0f %% of the step waiting)\n",
		in->bound ? "input-bound" : "input keeps up", who, in->supply_img_per_s / 1e3, per,
		in->demand_img_per_s / 1e3, input_loader_names[r->plan.training.input.loader],
		in->bound ? 100 * (1 - r->gpu_iteration_s / r->iteration_s) : 0.0);
}

/* Parameter servers, sampled iterations and straggler groups, the
 * critical ranks, throttling and the degraded links' costs, where the
 * scenario has them. */
static void print_runs(const struct result *r, FILE *f)
{
	if (r->plan.parallel.dp_sync == DP_SYNC_PS)
		fprintf(f, "parameter servers            %d (%s, %s, %s)\n", r->plan.parallel.ps.servers,
			r->plan.parallel.ps.attach == PS_ATTACH_GPUS ? "on the GPUs" : "on the fabric",
			plan_ps_shard_names[r->plan.parallel.ps.shard],
			plan_ps_mode_names[r->plan.parallel.ps.async]);
	if (r->plan.parallel.dp_sync == DP_SYNC_PS && r->plan.parallel.ps.async)
		fprintf(f, "async: %d iterations, %.3f it/s, staleness mean %.2f, P50 %.0f, P95 %.0f, max %.0f "
			"updates (bound %d)\n", r->plan.parallel.ps.iterations, 1 / r->iteration_s,
			result_sim(r).staleness_mean,
			result_sim(r).staleness_p50, result_sim(r).staleness_p95, result_sim(r).staleness_max,
			r->plan.parallel.ps.staleness);
	if (r->iterations > 1)
		fprintf(f, "\nstragglers: %d iterations    P50 %.4f s  P95 %.4f s  P99 %.4f s  (min %.4f, max %.4f)\n",
			r->iterations, r->iter_p50_s, r->iter_p95_s, r->iter_p99_s, r->iter_min_s,
			r->iter_max_s);
	if (r->iterations > 0 && r->plan.simulation.stragglers.ngroups > 1)
		print_straggler_groups(&r->plan, f, r->iterations > 1);
	if (r->iterations > 0) {
		fprintf(f, "%scritical path (rank: iterations)",
			r->iterations > 1 || r->plan.simulation.stragglers.ngroups > 1 ? "" : "\n");
		for (int i = 0; i < r->ncritical; i++)
			fprintf(f, " %d: %d", r->critical_rank[i], r->critical_count[i]);
		fprintf(f, "\n");
	}
	if (r->plan.simulation.nthrottle > 0)
		fprintf(f, "\nthrottling: %d window%s added %.4f s of compute (summed over the ranks)\n",
			r->plan.simulation.nthrottle, r->plan.simulation.nthrottle > 1 ? "s" : "", r->throttle_s);
	if (r->nsens > 0) {
		/* most costly first */
		int ord[PLAN_MAX_DEGRADED];
		for (int i = 0; i < r->nsens; i++)
			ord[i] = i;
		for (int i = 1; i < r->nsens; i++)
			for (int j = i; j > 0 && r->sens_iteration_s[ord[j]] > r->sens_iteration_s[ord[j - 1]]; j--) {
				int x = ord[j];
				ord[j] = ord[j - 1];
				ord[j - 1] = x;
			}
		fprintf(f, "\ndegraded links (alone)          bw x   lat x   iteration s     cost s\n");
		fprintf(f, "  %-28s %6s %7s %12.4f %10s\n", "(none)", "", "", r->sens_baseline_s, "");
		for (int k = 0; k < r->nsens; k++) {
			const struct plan_degraded *g = &r->plan.simulation.degraded[ord[k]];
			fprintf(f, "  %-28s %6.2f %7.2f %12.4f %+10.4f\n", g->link, g->bw_factor,
				g->latency_factor, r->sens_iteration_s[ord[k]],
				r->sens_iteration_s[ord[k]] - r->sens_baseline_s);
		}
	}
}

void report_print_summary(const struct result *r, FILE *f)
{
	const struct plan *sc = &r->plan;
	char vbuf[512];
	struct result_split mean = result_mean_split(r);

	print_setup(r, f);
	fprintf(f, "\n%-28s %14s\n", "metric", "value");
	fprintf(f, "%-28s %14.4f\n", "iteration_time_s", r->iteration_s);
	fprintf(f, "%-28s %14.2f\n", "samples_per_s", r->samples_per_s);
	print_input(r, f);
	if (model_arch(inputs_model(r->in))->sequence)  /* a CNN's sample is an image, not tokens */
		fprintf(f, "%-28s %14.0f\n", "tokens_per_s", r->tokens_per_s);
	fprintf(f, "%-28s %14.1f\n", "model_tflops_per_gpu", r->model_tflops_per_gpu);
	fprintf(f, "%-28s %14.1f\n", "hardware_tflops_per_gpu", r->hardware_tflops_per_gpu);
	fprintf(f, "%-28s %13.1f%%\n", "mfu", 100 * r->mfu);
	fprintf(f, "%-28s %13.1f%%\n", "hfu", 100 * r->hfu);
	fprintf(f, "  (%s)\n", REPORT_MFU_HFU);
	if (record_check(r->in, &r->plan, r->mfu, vbuf, sizeof(vbuf)))
		fprintf(f, "plausibility: %s\n", vbuf);
	fprintf(f, "%-28s %14.4f\n", "compute_s (mean)", mean.compute_s);
	fprintf(f, "%-28s %14.4f\n", "exposed_comm_s (mean)", mean.exposed_s);
	fprintf(f, "%-28s %14.4f\n", "bubble_s (mean)", mean.bubble_s);
	fprintf(f, "%-28s %14.4f\n", "idle_s (mean)", mean.idle_s);
	print_comm(r, f);
	if (r->moe) {
		fprintf(f, "%-28s %14.3f\n", "moe imbalance factor", r->moe_imbalance);
		fprintf(f, "%-28s %13.1f%%\n", "moe tokens dropped", 100 * r->moe_dropped_fraction);
	}
	print_runs(r, f);
	const struct stage_result *w = &r->stage[r->worst_stage];
	/* memory in GB (1e9 bytes, as datasheets count) and GiB (2^30, as
	 * nvidia-smi and PyTorch count) */
	fprintf(f, "\nmemory per GPU (stage %d)     %14s %10s\n", r->worst_stage, "GB", "GiB");
	const struct { const char *name; double bytes; } rows[] = {
		{ "weights", w->mem.weights_bytes }, { "gradients", w->mem.grads_bytes },
		{ "optimizer state", w->mem.optimizer_bytes },
		{ "fp8 weight copies", w->mem.fp8_weight_bytes },
		{ "activations", w->mem.activations_bytes },
		{ w->mem.peak_at_loss ? "loss (the peak's phase)" : "loss", w->mem.logits_bytes },
		{ w->mem.peak_at_loss ? "recomputed layer" : "recomputed layer (peak)", w->mem.recompute_bytes },
		{ "comm buffers", w->mem.comm_buffer_bytes },
		{ "CUDA context", w->mem.context_bytes }, { "NCCL buffers", w->mem.nccl_bytes },
		{ w->mem.caching_bytes > 0 ? "allocator (replayed)" : "allocator reserve", w->mem.fragmentation_bytes },
		{ "total", w->mem.total_bytes }, { "capacity", w->mem.capacity_bytes },
		{ "PyTorch reserved (peak)", w->mem.allocator_bytes },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (rows[i].bytes > 0 || (strcmp(rows[i].name, "fp8 weight copies") &&
					  strncmp(rows[i].name, "recomputed", 10)))
			fprintf(f, "  %-26s %14.2f %10.2f\n", rows[i].name, rows[i].bytes / GB,
				rows[i].bytes / 1073741824.0);
	fprintf(f, "  (the loss and the recomputed layer come one after the other: the total holds the "
		"larger with its buffers; PyTorch reserved: %s, models/memory.h)\n",
		w->mem.caching_bytes > 0 ? "the caching allocator replayed over three steps, the allocated peak "
		"and what it caches, the larger of that and the reserve in the total" :
		"the total less the context, NCCL and the reserve");
	report_verdict(r, vbuf, sizeof(vbuf));
	fprintf(f, "memory: %s (%.1f of %.1f GiB)\n", vbuf, w->mem.total_bytes / 1073741824.0,
		w->mem.capacity_bytes / 1073741824.0);
	if (band_memory.runs > 0 && band_memory.low < 0) {
		/* the validated error: published peaks ran up to -low above */
		double real = w->mem.total_bytes - w->mem.allocator_bytes + w->mem.allocator_bytes / (1 + band_memory.low);
		double lo = 100 * (1 / (1 + band_memory.high) - 1), hi = 100 * (1 / (1 + band_memory.low) - 1);
		fprintf(f, "memory at the validated error: %.1f GB of %.1f GB%s (published peaks ran from %.1f %% %s "
			"to %.1f %% above ddlsim's figure, %d runs: validation/README.md \"Memory families\")\n",
			real / GB, w->mem.capacity_bytes / GB, real > w->mem.capacity_bytes ? ": would not fit" : "",
			fabs(lo), lo < 0 ? "below" : "above", hi, band_memory.runs);
	}
	struct result_row row = { 0 };
	result_row_fill(&row, r);
	if (r->meta.pub.peak_memory_bytes > 0) {
		/* the largest over the stages, as ddlsim validation holds it */
		double got = result_row_memory(&row, r->meta.pub.memory_measure);
		fprintf(f, "memory published: %.2f GiB (%s), predicted %.2f GiB, error %+.1f%%\n",
			r->meta.pub.peak_memory_bytes / 1073741824.0, pub_memory_names[r->meta.pub.memory_measure],
			got / 1073741824.0, 100 * (got / r->meta.pub.peak_memory_bytes - 1));
	}
	/* the published figures and the error of the prediction against them */
	bool head = false;
	for (int k = 0; k < PUB_NFIGURES; k++) {
		double want = published_figure(&r->meta.pub, k);
		if (want <= 0)
			continue;
		if (!head)
			fprintf(f, "\npublished vs predicted%s%s\n", r->meta.pub.source ? ": " : "",
				r->meta.pub.source ? r->meta.pub.source : "");
		head = true;
		double got = result_row_figure(&row, k);
		fprintf(f, "  %-24s %12.4g %-8s predicted %12.4g  error %+.1f%%\n", pub_figures[k].key,
			want, pub_figures[k].unit, got, 100 * (got / want - 1));
	}
	if (sc->training.train_tokens > 0) {  /* "15 T tokens", "4.241 M GPU-hours", "$10.6 M" */
		char tok[32], gh[32], usd[32];
		fprintf(f, "\ntraining %s tokens: %.1f days, %s GPU-hours, $%s\n",
			human_number(sc->training.train_tokens, tok, sizeof(tok)), r->time_to_train_s / 86400,
			human_number(r->gpu_hours, gh, sizeof(gh)), human_number(r->cost_usd, usd, sizeof(usd)));
	}
	print_band(r, f);
	print_goal(r, f);
	print_simulation(r, f);
}
