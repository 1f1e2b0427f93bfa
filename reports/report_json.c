/* report_json: report.json, schema "ddlsim.report" 1.1 (see report.h):
 * the resolved scenario, throughput, the breakdown (per stage, rank
 * classes, per rank on request), communication, the what-ifs, memory per
 * stage with its verdict, placement, the cost model and its ops, the
 * published figures and the error against them, the training run, the
 * links' traffic (report_links.c, since 1.1) and the simulation's own
 * figures. A section jansson cannot build fails the whole report and is
 * named. */
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "framework.h"
#include "report-private.h"
#include "schedule.h"
#include "stack.h"
#include "xalloc.h"

/* The kernel stack, attention kernel and GEMM library that priced the
 * ops (stack.h, gpu.h). */
static json_t *kernels_json(const struct plan *pl)
{
	const struct stack *k = plan_stack(pl);
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:b}", "stack", k->name, "description",
			 k->description, "source", k->source, "attention_backend",
			 plan_attention_kernel(pl), "gemm_library", gemm_lib_names[k->gemm_lib],
			 "stack_given", pl->compute.stack_set);
}

static json_t *num(double x)
{
	return json_real(x);
}

static json_t *ranks_array(const int *v, int n)
{
	json_t *a = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(a, json_integer(v[i]));
	return a;
}

static json_t *scenario_json(const struct result *r)
{
	const struct plan *pl = &r->plan;
	const struct model *model = inputs_model(r->in);
	const struct topology *t = inputs_topology(r->in);
	const char *profile = inputs_profile_path(r->in);
	json_t *peak = json_object();
	for (int i = 0; i < DTYPE_N; i++)
		if (t->gpu.peak_flops[i] > 0)
			json_object_set_new(peak, dtype_name(i), num(t->gpu.peak_flops[i] / 1e12));
	json_t *o = json_pack(
		"{s:s, s:s, s:s, s:{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:s, s:f},"
		" s:{s:s, s:s, s:s, s:I, s:s, s:f, s:f, s:I, s:f, s:f, s:o},"
		" s:i, s:i,"
		" s:{s:i, s:i, s:i, s:b, s:i, s:s, s:i, s:s, s:s},"
		" s:{s:I, s:I, s:I, s:I, s:s, s:s, s:s, s:f},"
		" s:{s:s, s:f}, s:{s:s, s:s}}",
		"name", r->meta.name ? r->meta.name : "", "path", r->meta.path ? r->meta.path : "",
		"description", r->meta.description ? r->meta.description : "",
		"model", "name", model->name, "architecture",
		model_arch(model)->name, "path", inputs_model_path(r->in),
		"layers", (json_int_t)model->layers, "hidden_size", (json_int_t)model->hidden,
		"heads", (json_int_t)model->heads, "kv_heads", (json_int_t)model->kv_heads,
		"ffn_size", (json_int_t)model->ffn, "vocab_size", (json_int_t)model->vocab,
		"activation", model_act_name(model->act), "params", model_params(model),
		"topology", "name", t->name, "path", inputs_topology_path(r->in), "gpu", t->gpu.name,
		"gpus_per_node", (json_int_t)t->gpus_per_node, "intra", intra_kind_name(t->intra),
		"intra_bw_GBps", t->intra_bw_Bps / GB, "intra_latency_us", t->intra_latency_s * 1e6,
		"nics_per_node", (json_int_t)t->nics, "nic_bw_Gbps", t->nic_bw_Bps * 8 / GB,
		"hbm_GB", t->gpu.hbm_bytes / GB, "peak_tflops", peak,
		"nodes", pl->nodes, "gpus", (int)r->gpus,
		"parallel", "dp", pl->parallel.dp, "tp", pl->parallel.tp, "pp", pl->parallel.pp,
		"sp", pl->parallel.sp,
		"zero", (int)pl->parallel.zero, "schedule", schedule_registry[pl->parallel.schedule].name,
		"interleave", pl->parallel.interleave, "recompute", recompute_name(pl->parallel.recompute),
		"order", pl->parallel.order,
		"training", "seq_len", (json_int_t)pl->training.seq,
		"global_batch", (json_int_t)pl->training.global_batch,
		"micro_batch", (json_int_t)pl->training.micro_batch,
		"microbatches_per_pipeline", (json_int_t)plan_microbatches(pl),
		"precision", dtype_name(pl->training.precision),
		"grad_reduce_dtype", dtype_name(pl->training.grad_dtype),
		"optimizer", model_arch(model)->optimizer,
		"train_tokens", pl->training.train_tokens,
		"communication", "algorithm", pl->communication.coll_algo,
		"bucket_MB", pl->communication.bucket_bytes / 1e6,
		"compute", "cost", profile ? "profile" : "roofline",
		"profile", profile ? profile : "");
	if (!o)
		return NULL;
	json_t *par = json_object_get(o, "parallel"), *com = json_object_get(o, "communication");
	json_object_set_new(par, "cp", json_integer(pl->parallel.cp));
	json_object_set_new(json_object_get(o, "topology"), "gpus_per_node_physical",
			    json_integer(t->gpus_per_node_physical));
	json_object_set_new(json_object_get(o, "topology"), "gpu_preset", json_string(t->gpu_preset));
	/* a board power limit is in force (a mixed cluster: per node group) */
	if (pl->ngroups == 0 && gpu_power_cap_clock_ratio(&t->gpu) < 1) {
		json_object_set_new(json_object_get(o, "topology"), "power_cap_W", num(t->gpu.power_cap_W));
		json_object_set_new(json_object_get(o, "topology"), "cap_clock_ratio",
				    num(gpu_power_cap_clock_ratio(&t->gpu)));
	}
	json_object_set_new(par, "cp_comm", json_string(plan_cp_comm_names[pl->parallel.cp_comm]));
	json_object_set_new(par, "recompute_every_n_layers", json_integer(pl->parallel.recompute_every));
	if (pl->parallel.recompute_modules) {  /* given: Megatron's names */
		json_t *rm = json_array();
		for (int k = 0; k < RC_MOD_N; k++)
			if (pl->parallel.recompute_modules & (1u << k))
				json_array_append_new(rm, json_string(rc_module_names[k]));
		json_object_set_new(par, "recompute_modules", rm);
	}
	json_t *vl = json_array();
	int nv = pl->parallel.pp * (pl->parallel.schedule == SCHED_INTERLEAVED ? pl->parallel.interleave : 1);
	for (int vs = 0; vs < nv; vs++) {
		int first;
		json_array_append_new(vl, json_integer(plan_vstage_layers(pl, model->layers, vs, nv, &first)));
	}
	json_object_set_new(par, "vstage_layers", vl);
	if (pl->training.bf16_moments)   /* given: Adam's moments in bf16 */
		json_object_set_new(json_object_get(o, "training"), "optimizer_state_dtype", json_string("bf16"));
	if (pl->training.master_remainders)   /* given: Apex's store_param_remainders */
		json_object_set_new(json_object_get(o, "training"), "master_weights", json_string("remainders"));
	if (model->mtp_depth > 0)        /* the model's MTP modules (models/model.h) */
		json_object_set_new(json_object_get(o, "model"), "mtp_depth", json_integer(model->mtp_depth));
	json_object_set_new(com, "overlap_grad_reduce", json_boolean(pl->communication.overlap_grad_reduce));
	json_object_set_new(com, "overlap_param_gather", json_boolean(pl->communication.overlap_param_gather));
	json_object_set_new(com, "tp_comm_overlap", json_boolean(pl->communication.tp_comm_overlap));
	json_object_set_new(o, "attention", json_string(attention_names[pl->training.attention]));
	/* the preset and what it resolved to; "given": the scenario's own keys */
	json_t *fw;
	if (pl->framework >= 0) {
		const struct framework *f = &framework_table[pl->framework];
		char label[64];
		fw = json_pack("{s:s, s:s, s:s, s:s, s:{s:s, s:f, s:b, s:b, s:i, s:s},"
			       " s:{s:b, s:b, s:b, s:b, s:b, s:b}}",
			"name", f->name, "version", f->version,
			"label", framework_label(f, label, sizeof(label)), "source", f->source,
			"resolved", "grad_reduce_dtype", dtype_name(pl->training.grad_dtype),
			"bucket_MB", pl->communication.bucket_bytes / 1e6,
			"overlap_grad_reduce", pl->communication.overlap_grad_reduce,
			"overlap_param_gather", pl->communication.overlap_param_gather,
			"zero", (int)pl->parallel.zero,
			"attention", attention_names[pl->training.attention],
			"given", "grad_reduce_dtype", (pl->given & PLAN_GIVEN_GRAD_DTYPE) != 0,
			"bucket_MB", (pl->given & PLAN_GIVEN_BUCKET) != 0,
			"overlap_grad_reduce", (pl->given & PLAN_GIVEN_OVERLAP_GRAD) != 0,
			"overlap_param_gather", (pl->given & PLAN_GIVEN_OVERLAP_PARAM) != 0,
			"zero", (pl->given & PLAN_GIVEN_ZERO) != 0, "attention", pl->training.attention_set);
	} else
		fw = json_null();
	json_object_set_new(o, "framework", fw);
	json_object_set_new(o, "kernels", kernels_json(pl));
	return o;
}

static json_t *mem_json(const struct stage_result *s)
{
	const struct mem_anatomy *m = &s->mem;
	json_t *o = json_pack("{s:i, s:i, s:b, s:b, s:f, s:f, s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:b, s:f}",
			 "stage", s->stage, "layers", s->layers, "embedding", s->has_embedding,
			 "head", s->has_head, "params_local", m->params_local,
			 "trained_params", m->trained_params,
			 "peak_inflight_microbatch_chunks", s->peak_inflight_chunks,
			 "inflight_factor", s->inflight,
			 "weights_GB", m->weights_bytes / GB, "gradients_GB", m->grads_bytes / GB,
			 "optimizer_GB", m->optimizer_bytes / GB,
			 "activations_GB", m->activations_bytes / GB,
			 "activations_per_layer_microbatch_GB", m->act_per_layer_bytes / GB,
			 "logits_GB", m->logits_bytes / GB, "comm_buffers_GB", m->comm_buffer_bytes / GB,
			 "reserved_GB", m->reserved_bytes / GB, "fp8_weight_copies_GB", m->fp8_weight_bytes / GB,
			 "cuda_context_GB", m->context_bytes / GB, "nccl_buffers_GB", m->nccl_bytes / GB,
			 "allocator_reserve_GB", m->fragmentation_bytes / GB,
			 "total_GB", m->total_bytes / GB, "total_GiB", m->total_bytes / 1073741824.0,
			 "capacity_GiB", m->capacity_bytes / 1073741824.0,
			 "capacity_GB", m->capacity_bytes / GB, "fits", m->fits,
			 "headroom_GB", (m->capacity_bytes - m->total_bytes) / GB);
	if (o) {
		/* the loss's peak and the recomputed layer's come one after the
		 * other (models/memory.h): which one the total holds */
		json_object_set_new(o, "recomputed_layer_GB", json_real(m->recompute_bytes / GB));
		json_object_set_new(o, "peak_phase", json_string(m->peak_at_loss ? "loss" : "layer_backward"));
		json_object_set_new(o, "pytorch_reserved_GB", json_real(m->allocator_bytes / GB));
		json_object_set_new(o, "pytorch_reserved_GiB", json_real(m->allocator_bytes / 1073741824.0));
		/* models/ptalloc.h: reserved beyond the allocated peak, replayed (0: not) */
		json_object_set_new(o, "allocator_caching_replayed_GB", json_real(m->caching_bytes / GB));
	}
	return o;
}

static json_t *split_list(const char *s)
{
	json_t *a = json_array();
	char *buf = xstrdup(s ? s : ""), *save = NULL;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		json_array_append_new(a, json_string(tok));
	free(buf);
	return a;
}

/* Set o[key] = v. A section jansson could not build (json_pack() gives
 * NULL for a non-finite number or a string that is not UTF-8) is never
 * dropped silently: the first one is named in *bad and the report fails. */
static void put(json_t *o, const char **bad, const char *key, json_t *v)
{
	if ((!v || !o || json_object_set_new(o, key, v)) && !*bad)
		*bad = key;
}

/* (1.4) The straggler groups, when there are several: what each slows and how. */
static json_t *straggler_groups_json(const struct plan *pl)
{
	const struct plan_stragglers *st = &pl->simulation.stragglers;
	json_t *a = json_array();
	for (int g = 0; g < st->ngroups; g++) {
		const struct plan_straggler_group *s = &st->group[g];
		json_t *o = json_pack("{s:s, s:f, s:f, s:i}", "distribution",
				      plan_straggler_dist_names[s->dist], "slowdown", s->slowdown,
				      "sigma", s->sigma, "seed", (json_int_t)s->seed);
		if (s->nranks)
			json_object_set_new(o, "ranks", ranks_array(st->rank + s->first_rank, s->nranks));
		else
			json_object_set_new(o, "fraction", num(s->fraction));
		if (s->dist == STRAG_EMPIRICAL)
			json_object_set_new(o, "samples", json_integer(s->nsamples));
		json_array_append_new(a, o);
	}
	return a;
}

/* Parameter servers, stragglers and degraded links, when the plan has them. */
static void whatifs_json(const struct result *r, json_t *root, const char **bad)
{
	const struct plan *pl = &r->plan;
	if (pl->parallel.dp_sync == DP_SYNC_PS)
	{
		json_t *o = json_pack("{s:i, s:s, s:s, s:s}", "servers", pl->parallel.ps.servers,
			"attach", plan_ps_attach_names[pl->parallel.ps.attach],
			"sharding", plan_ps_shard_names[pl->parallel.ps.shard],
			"mode", plan_ps_mode_names[pl->parallel.ps.async]);
		if (pl->parallel.ps.async) {
			json_object_set_new(o, "staleness_bound", pl->parallel.ps.staleness >= 0
					    ? json_integer(pl->parallel.ps.staleness) : json_null());
			json_object_set_new(o, "iterations", json_integer(pl->parallel.ps.iterations));
			json_object_set_new(o, "iterations_per_s", num(1 / r->iteration_s));
			json_object_set_new(o, "updates", json_integer(result_sim(r).ps_updates));
			json_object_set_new(o, "staleness", json_pack("{s:f, s:f, s:f, s:f}",
				"mean", result_sim(r).staleness_mean, "p50", result_sim(r).staleness_p50,
				"p95", result_sim(r).staleness_p95, "max", result_sim(r).staleness_max));
		}
		put(root, bad, "parameter_servers", o);
	}
	if (r->iterations > 0) {
		json_t *cr = json_array();
		for (int i = 0; i < r->ncritical; i++)
			json_array_append_new(cr, json_pack("{s:i, s:i}", "rank", r->critical_rank[i],
							    "iterations", r->critical_count[i]));
		json_t *so = json_pack("{s:i, s:f, s:f, s:f, s:f, s:f, s:o}",
			"iterations", r->iterations, "iteration_p50_s", r->iter_p50_s,
			"iteration_p95_s", r->iter_p95_s, "iteration_p99_s", r->iter_p99_s,
			"iteration_min_s", r->iter_min_s, "iteration_max_s", r->iter_max_s,
			"critical_ranks", cr);
		if (so && pl->simulation.stragglers.ngroups > 1)
			json_object_set_new(so, "groups", straggler_groups_json(pl));
		put(root, bad, "stragglers", so);
	}
	if (r->ngroups > 0) {
		json_t *a = json_array();
		for (int i = 0; i < r->ngroups; i++) {
			const struct group_result *g = &r->group[i];
			const struct gpu_spec *gg = &pl->group[r->group_index[i]].gpu;
			json_t *go = json_pack("{s:i, s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:f, s:f, s:f, s:b}",
				"group", r->group_index[i], "gpu", g->gpu, "first_node", g->first_node,
				"nodes", g->nodes, "first_rank", g->first_rank, "ranks", g->ranks,
				"stage_first", g->stage_lo, "stage_last", g->stage_hi,
				"compute_s", g->compute_s, "memory_worst_GB", g->worst_total_bytes / 1e9,
				"capacity_GB", g->capacity_bytes / 1e9, "fits", g->fits);
			if (gpu_power_cap_clock_ratio(gg) < 1) {
				json_object_set_new(go, "power_cap_W", num(gg->power_cap_W));
				json_object_set_new(go, "cap_clock_ratio", num(gpu_power_cap_clock_ratio(gg)));
			}
			json_array_append_new(a, go);
		}
		put(root, bad, "node_groups", json_pack("{s:s, s:o}", "order",
			plan_node_order_names[pl->node_order], "groups", a));
	}
	if (pl->simulation.nthrottle > 0)
		put(root, bad, "throttle", json_pack("{s:i, s:f}", "windows", pl->simulation.nthrottle,
			"added_compute_s", r->throttle_s));
	if (pl->simulation.ndegraded > 0) {
		json_t *a = json_array();
		for (int i = 0; i < pl->simulation.ndegraded; i++) {
			json_t *o = json_pack("{s:s, s:f, s:f}", "link", pl->simulation.degraded[i].link,
					      "bw_factor", pl->simulation.degraded[i].bw_factor,
					      "latency_factor", pl->simulation.degraded[i].latency_factor);
			if (r->nsens > 0) {
				json_object_set_new(o, "iteration_alone_s", num(r->sens_iteration_s[i]));
				json_object_set_new(o, "cost_s", num(r->sens_iteration_s[i] - r->sens_baseline_s));
			}
			json_array_append_new(a, o);
		}
		json_t *o = json_pack("{s:o}", "links", a);
		if (r->nsens > 0)
			json_object_set_new(o, "iteration_without_s", num(r->sens_baseline_s));
		put(root, bad, "degraded_links", o);
	}
}

/* What the engine simulated: ranks, flows, tasks, folding and why not,
 * the all-to-alls posted one flow per NIC (engine/engine_classes.c). */
static json_t *simulation_json(const struct result *r)
{
	struct result_sim rs = result_sim(r);
	json_t *sim = json_pack("{s:b, s:i, s:i, s:I, s:I, s:I, s:f, s:f}", "folded", r->folded,
				"ranks", result_nranks(r), "simulated_ranks", rs.nsimulated,
				"flows", (json_int_t)rs.flows, "collectives", (json_int_t)rs.collectives,
				"tasks", (json_int_t)rs.tasks, "wall_s", r->sim_wall_s,
				"platform_s", rs.platform_s);
	if (!sim)
		return NULL;
	json_object_set_new(sim, "fold_reason", r->fold_reason ? json_string(r->fold_reason) : json_null());
	json_object_set_new(sim, "whole_replicas", ranks_array(r->whole_replicas, r->nwhole_replicas));
	json_object_set_new(sim, "alltoall_class_plans", json_pack("{s:I, s:I, s:o}",
		"posted", (json_int_t)rs.cls_posted, "split", (json_int_t)rs.cls_split,
		"per_pair_reason", rs.cls_why ? json_string(rs.cls_why) : json_null()));
	return sim;
}

/* One side of the goal's verdict (report_goal()). */
static json_t *verdict_json(const struct assessment *a, bool deadline, bool budget)
{
	return json_pack("{s:f, s:f, s:f, s:f, s:f, s:b, s:b}", "train_days", a->train_s / 86400,
			 "wall_days", a->gp.wall_s / 86400, "goodput_ratio", a->gp.ratio, "cost_usd",
			 a->econ.cost_usd, "energy_MWh", isfinite(a->econ.energy_MWh) ? a->econ.energy_MWh : 0.0,
			 "meets_deadline", deadline, "within_budget", budget);
}

/* (1.3) The goal the plan was chosen for and the verdict against it. */
static void goal_json(const struct result *r, json_t *root, const char **bad)
{
	struct goal_verdict v;
	if (!report_goal(r, &v))
		return;
	const struct scenario_goal *g = &r->meta.goal;
	json_t *o = json_pack("{s:s, s:f, s:f, s:f, s:o, s:o}", "name", g->name,
			      "deadline_days", g->deadline_s / 86400, "budget_usd", g->budget_usd,
			      "slow_factor", v.slow_factor,
			      "at_estimate", verdict_json(&v.at, v.meets_deadline, v.within_budget),
			      "at_slow_edge", verdict_json(&v.slow, v.meets_deadline_slow, v.within_budget_slow));
	if (o && g->file)
		json_object_set_new(o, "file", json_string(g->file));
	if (o && g->cluster)
		json_object_set_new(o, "cluster", json_string(g->cluster));
	put(root, bad, "goal", o);
}

/* The data loader's figures (models/input_pipeline.h). */
static json_t *input_json(const struct result *r)
{
	return json_pack("{s:s, s:i, s:f, s:f, s:f, s:f, s:b, s:f}",
		"loader", input_loader_names[r->plan.training.input.loader],
		"per_gpus", r->input_unit_gpus,
		"supply_img_per_s", r->input.supply_img_per_s,
		"demand_img_per_s", r->input.demand_img_per_s,
		"loader_s", r->input.loader_s, "gpu_iteration_s", r->gpu_iteration_s,
		"input_bound", r->input.bound,
		"input_bound_fraction", r->input.bound ? 1 - r->gpu_iteration_s / r->iteration_s : 0.0);
}

/* What the two ratios count, and the public record beside MFU. */
static json_t *plausibility_json(const struct result *r)
{
	json_t *pl = json_object();
	const struct mfu_record *rec = record_mfu(r->in, &r->plan);
	char why[600];
	bool over = record_check(r->in, &r->plan, r->mfu, why, sizeof(why));
	json_object_set_new(pl, "mfu_hfu", json_string(REPORT_MFU_HFU));
	json_object_set_new(pl, "record_mfu", rec ? json_real(rec->mfu) : json_null());
	json_object_set_new(pl, "record_run", rec ? json_string(rec->run) : json_null());
	json_object_set_new(pl, "record_source", rec ? json_string(rec->source) : json_null());
	json_object_set_new(pl, "exceeds_record", json_boolean(over));
	json_object_set_new(pl, "note", json_string(why));
	return pl;
}

/* The published figures the scenario carries and the error on each;
 * NULL when it carries none. */
static json_t *published_json(const struct result *r)
{
	const struct published *pb = &r->meta.pub;
	struct result_row row = { 0 };
	json_t *pub = NULL;
	result_row_fill(&row, r);
	for (int f = 0; f < PUB_NFIGURES; f++) {
		double want = published_figure(pb, f);
		if (want <= 0)
			continue;
		if (!pub)
			pub = json_pack("{s:s}", "source", pb->source ? pb->source : "");
		json_object_set_new(pub, pub_figures[f].report_key, num(want));
		json_object_set_new(pub, pub_figures[f].error_key, num(result_row_figure(&row, f) / want - 1));
	}
	return pub;
}

/* The error band (sim/band.h) and the figures at its bias and edges. */
static json_t *band_json(const struct result *r)
{
	struct report_band rb;
	report_band(r, &rb);
	json_t *eb = json_pack(
		"{s:s, s:i, s:f, s:f, s:f, s:i, s:{s:f, s:f, s:f, s:f}, s:I, s:I}",
		"family", rb.b->family, "published_runs", rb.b->runs, "mean_abs_error", rb.b->mean_abs,
		"max_abs_error", rb.b->max_abs, "bias", rb.b->bias, "optimistic_runs", rb.b->optimistic_runs,
		"at_bias", "iteration_time_s", rb.iteration_s, "mfu", rb.mfu,
		"time_to_train_days", rb.train_days, "cost_usd", rb.cost_usd,
		"gpus", (json_int_t)rb.gpus, "gpus_more_at_bias", (json_int_t)rb.gpus_more);
	if (!eb)
		return NULL;
	json_object_set_new(eb, "gpus_at_slow_edge", json_integer(rb.gpus_safe));
	json_object_set_new(eb, "gpus_per_node", json_integer(rb.per_node));
	json_object_set_new(eb, "level", json_real(BAND_LEVEL));
	json_object_set_new(eb, "cross_validated", json_true());
	json_object_set_new(eb, "low", json_real(rb.p.lo));
	json_object_set_new(eb, "high", json_real(rb.p.hi));
	json_object_set_new(eb, "iteration_time_s_range",
			    json_pack("[f,f]", r->iteration_s * rb.lo, r->iteration_s * rb.hi));
	json_object_set_new(eb, "extrapolated", json_boolean(rb.p.extrapolated));
	json_object_set_new(eb, "extrapolated_why", json_string(rb.p.why));
	return eb;
}

static json_t *build_json(const struct result *r, bool per_rank, const char **bad)
{
	const struct plan *pl = &r->plan;
	const struct topology *topo = inputs_topology(r->in);
	char v[512];
	json_t *root = json_object();

	put(root, bad, "schema", json_string("ddlsim.report"));
	put(root, bad, "schema_version", json_string("1.4"));
	put(root, bad, "producer", json_pack("{s:s, s:s}", "name", "ddlsim",
							"version", r->producer_version));
	put(root, bad, "scenario", scenario_json(r));
	put(root, bad, "summary", json_pack(
		"{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}",
		"iteration_time_s", r->iteration_s, "samples_per_s", r->samples_per_s,
		"tokens_per_s", r->tokens_per_s, "tokens_per_s_per_gpu", r->tokens_per_s / (double)r->gpus,
		"model_tflops_per_gpu", r->model_tflops_per_gpu,
		"hardware_tflops_per_gpu", r->hardware_tflops_per_gpu,
		"mfu", r->mfu, "hfu", r->hfu, "model_flops_per_iteration", r->model_flops,
		"hardware_flops_per_iteration", r->hardware_flops,
		"peak_tflops_per_gpu", r->peak_flops_per_gpu / 1e12));
	if (r->plan.training.input.loader != INPUT_NONE)
		put(root, bad, "input_pipeline", input_json(r));
	put(root, bad, "plausibility", plausibility_json(r));

	/* breakdown */
	json_t *ranks = json_array(), *stages = json_array();
	struct result_split mean = result_mean_split(r);
	/* a row per rank only when asked for (--per-rank), all of them; the
	 * rank classes always */
	for (int i = 0; per_rank && i < result_nranks(r); i++)
		if (json_array_append_new(ranks, report_rank_json(r, i)) && !*bad)
			*bad = "per_rank";
	for (int s = 0; s < r->nstages; s++)
		json_array_append_new(stages, json_pack("{s:i, s:f, s:f, s:f, s:f}",
			"stage", s, "compute_fwd_per_microbatch_s", r->stage[s].compute_fwd_s,
			"compute_bwd_per_microbatch_s", r->stage[s].compute_bwd_s,
			"bubble_s", r->stage[s].bubble_s, "bubble_fraction", r->stage[s].bubble_fraction));
	json_t *classes = report_rank_classes_json(r);
	if (!classes && !*bad)
		*bad = "rank_classes";
	put(root, bad, "breakdown", json_pack("{s:{s:f, s:f, s:f, s:f}, s:o, s:o*, s:o, s:b}",
		"mean", "compute_s", mean.compute_s, "exposed_comm_s", mean.exposed_s,
		"bubble_s", mean.bubble_s, "idle_s", mean.idle_s, "per_stage", stages,
		"rank_classes", classes, "per_rank", ranks, "per_rank_written", per_rank));

	put(root, bad, "communication", json_pack("{s:s, s:{s:f, s:f, s:f, s:f}}",
		"algorithm", pl->communication.coll_algo, "bytes_per_gpu",
		"tp", r->comm_bytes_per_gpu[CAT_TP_COMM], "dp", r->comm_bytes_per_gpu[CAT_DP_COMM],
		"param", r->comm_bytes_per_gpu[CAT_PARAM_COMM], "pp", r->comm_bytes_per_gpu[CAT_PP_COMM]));
	json_object_set_new(json_object_get(json_object_get(root, "communication"), "bytes_per_gpu"),
			    "cp", num(r->comm_bytes_per_gpu[CAT_CP_COMM]));
	if (r->moe) {
		json_object_set_new(json_object_get(json_object_get(root, "communication"), "bytes_per_gpu"),
				    "ep", num(r->comm_bytes_per_gpu[CAT_EP_COMM]));
		put(root, bad, "moe", json_pack("{s:i, s:f, s:f, s:f, s:f, s:f}", "ep", r->plan.parallel.ep,
			"active_params", r->active_params, "imbalance_factor", r->moe_imbalance,
			"busiest_rank_load", r->moe_rank_load, "dropped_fraction", r->moe_dropped_fraction,
			"a2a_bytes_per_rank", r->moe_a2a_bytes));
		if (plan_etp(&r->plan) != r->plan.parallel.tp)   /* parallel.etp: only where set apart */
			json_object_set_new(json_object_get(root, "moe"), "etp", json_integer(plan_etp(&r->plan)));
	}
	whatifs_json(r, root, bad);

	json_t *mem = json_array();
	for (int s = 0; s < r->nstages; s++)
		json_array_append_new(mem, mem_json(&r->stage[s]));
	report_verdict(r, v, sizeof(v));
	int over = 0;
	for (int i = 0; i < result_nranks(r); i++)
		over += !r->stage[result_rank(r, i).stage].mem.fits;
	put(root, bad, "memory", json_pack("{s:b, s:i, s:i, s:f, s:f, s:f, s:s, s:o}",
		"fits", r->fits, "ranks_over_capacity", over, "worst_stage", r->worst_stage,
		"worst_total_GB", r->worst_total_bytes / GB,
		"capacity_GB", topo->gpu.hbm_bytes / GB, "shortfall_GB", r->shortfall_bytes / GB,
		"verdict", v, "per_stage", mem));

	put(root, bad, "placement", json_pack("{s:s, s:o, s:o, s:o, s:{s:o, s:o, s:o}}",
		"order", pl->parallel.order, "tp_group_of_rank0", ranks_array(r->tp_group0, r->ntp0),
		"dp_group_of_rank0", ranks_array(r->dp_group0, r->ndp0),
		"pipeline_of_rank0", ranks_array(r->pp_ranks0, r->npp0),
		"links_crossed", "tp", split_list(r->links_tp), "dp", split_list(r->links_dp),
		"pp", split_list(r->links_pp)));
	{
		json_t *plc = json_object_get(root, "placement");
		json_object_set_new(plc, "cp_group_of_rank0", ranks_array(r->cp_group0, r->ncp0));
		json_object_set_new(json_object_get(plc, "links_crossed"), "cp", split_list(r->links_cp));
	}
	put(root, bad, "cost_model", json_pack("{s:s, s:s, s:o, s:o}",
		"source", r->cost_source ? r->cost_source : "roofline", "detail", r->cost_detail,
		"measured_ops", split_list(r->measured_ops),
		"roofline_ops", split_list(r->roofline_ops)));
	json_t *ops = json_array();
	for (int i = 0; i < r->nops; i++) {
		const struct op_timing *o = &r->ops[i];
		json_array_append_new(ops, json_pack("{s:s, s:s, s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:i, s:f, s:f, s:s}",
			"block", o->block, "pass", o->pass, "op", o->name, "m", o->m, "n", o->n,
			"k", o->k, "batch", o->batch, "flops", o->flops, "bytes", o->bytes,
			"kernels", o->kernels,
			"time_s", o->time_s, "tflops", o->time_s > 0 ? o->flops / o->time_s / 1e12 : 0.0,
			"source", o->measured ? "profile" : "roofline"));
	}
	put(json_object_get(root, "cost_model"), bad, "ops_per_microbatch", ops);
	json_t *pub = published_json(r);
	if (pub)
		put(root, bad, "published", pub);
	goal_json(r, root, bad);
	put(root, bad, "training_run", json_pack("{s:f, s:f, s:f, s:f, s:f, s:f}",
		"train_tokens", pl->training.train_tokens, "time_to_train_s", r->time_to_train_s,
		"time_to_train_days", r->time_to_train_s / 86400, "gpu_hours", r->gpu_hours,
		"usd_per_gpu_hour", pl->cost.usd_per_gpu_hour, "cost_usd", r->cost_usd));
	put(root, bad, "error_band", band_json(r));
	put(root, bad, "links", report_links_json(r, REPORT_TOP_LINKS));
	put(root, bad, "simulation", simulation_json(r));
	return root;
}

json_t *report_to_json(const struct result *r, bool per_rank, const char **bad_section)
{
	const char *bad = NULL;
	json_t *j = build_json(r, per_rank, &bad);
	if (bad_section)
		*bad_section = bad;
	if (bad) {
		json_decref(j);
		return NULL;
	}
	return j;
}
