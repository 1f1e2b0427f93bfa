/* report: report writers (see report.h). */
#include "report.h"

#include <stdarg.h>
#include <stdio.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "coll.h"
#include "framework.h"
#include "stack.h"
#include "html.h"
#include "plot.h"
#include "schedule.h"
#include "tidy.h"
#include "xalloc.h"

#define GB 1e9

/* The kernel stack and attention kernel that priced the ops (stack.h). */
static json_t *kernels_json(const struct plan *pl)
{
	const struct stack *k = plan_stack(pl);
	return json_pack("{s:s, s:s, s:s, s:s, s:b}", "stack", k->name, "description",
			 k->description, "source", k->source, "attention_backend",
			 plan_attention_kernel(pl),
			 "stack_given", pl->stack_set);
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
		"parallel", "dp", pl->dp, "tp", pl->tp, "pp", pl->pp, "sp", pl->sp,
		"zero", (int)pl->zero, "schedule", schedule_registry[pl->schedule].name,
		"interleave", pl->interleave, "recompute", recompute_name(pl->recompute),
		"order", pl->order,
		"training", "seq_len", (json_int_t)pl->seq, "global_batch", (json_int_t)pl->global_batch,
		"micro_batch", (json_int_t)pl->micro_batch,
		"microbatches_per_pipeline", (json_int_t)plan_microbatches(pl),
		"precision", dtype_name(pl->precision), "grad_reduce_dtype", dtype_name(pl->grad_dtype),
		"optimizer", model_arch(model)->optimizer,
		"train_tokens", pl->train_tokens,
		"communication", "algorithm", pl->coll_algo, "bucket_MB", pl->bucket_bytes / 1e6,
		"compute", "cost", profile ? "profile" : "roofline",
		"profile", profile ? profile : "");
	if (!o)
		return NULL;
	json_t *par = json_object_get(o, "parallel"), *com = json_object_get(o, "communication");
	json_object_set_new(par, "cp", json_integer(pl->cp));
	json_object_set_new(json_object_get(o, "topology"), "gpus_per_node_physical",
			    json_integer(t->gpus_per_node_physical));
	json_object_set_new(json_object_get(o, "topology"), "gpu_preset", json_string(t->gpu_preset));
	json_object_set_new(par, "cp_comm", json_string(plan_cp_comm_names[pl->cp_comm]));
	json_t *vl = json_array();
	int nv = pl->pp * (pl->schedule == SCHED_INTERLEAVED ? pl->interleave : 1);
	for (int vs = 0; vs < nv; vs++) {
		int first;
		json_array_append_new(vl, json_integer(plan_vstage_layers(pl, model->layers, vs, nv, &first)));
	}
	json_object_set_new(par, "vstage_layers", vl);
	json_object_set_new(com, "overlap_grad_reduce", json_boolean(pl->overlap_grad_reduce));
	json_object_set_new(com, "overlap_param_gather", json_boolean(pl->overlap_param_gather));
	json_object_set_new(com, "tp_comm_overlap", json_boolean(pl->tp_comm_overlap));
	json_object_set_new(o, "attention", json_string(attention_names[pl->attention]));
	/* the preset and what it resolved to; "given": the scenario's own keys */
	json_t *fw;
	if (pl->framework >= 0) {
		const struct framework *f = &framework_table[pl->framework];
		char label[64];
		fw = json_pack("{s:s, s:s, s:s, s:s, s:{s:s, s:f, s:b, s:b, s:i, s:s},"
			       " s:{s:b, s:b, s:b, s:b, s:b, s:b}}",
			"name", f->name, "version", f->version,
			"label", framework_label(f, label, sizeof(label)), "source", f->source,
			"resolved", "grad_reduce_dtype", dtype_name(pl->grad_dtype),
			"bucket_MB", pl->bucket_bytes / 1e6, "overlap_grad_reduce", pl->overlap_grad_reduce,
			"overlap_param_gather", pl->overlap_param_gather, "zero", (int)pl->zero,
			"attention", attention_names[pl->attention],
			"given", "grad_reduce_dtype", (pl->given & PLAN_GIVEN_GRAD_DTYPE) != 0,
			"bucket_MB", (pl->given & PLAN_GIVEN_BUCKET) != 0,
			"overlap_grad_reduce", (pl->given & PLAN_GIVEN_OVERLAP_GRAD) != 0,
			"overlap_param_gather", (pl->given & PLAN_GIVEN_OVERLAP_PARAM) != 0,
			"zero", (pl->given & PLAN_GIVEN_ZERO) != 0, "attention", pl->attention_set);
	} else
		fw = json_null();
	json_object_set_new(o, "framework", fw);
	json_object_set_new(o, "kernels", kernels_json(pl));
	return o;
}

static json_t *mem_json(const struct stage_result *s)
{
	const struct mem_anatomy *m = &s->mem;
	return json_pack("{s:i, s:i, s:b, s:b, s:f, s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:b, s:f}",
			 "stage", s->stage, "layers", s->layers, "embedding", s->has_embedding,
			 "head", s->has_head, "params_local", m->params_local,
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
}

static json_t *rank_json(const struct result *r, int i)
{
	const struct engine_rank_stats *st = &r->eng.rank[i];
	struct result_split x = result_rank_split(r, i);
	double compute = x.compute_s, exposed = x.exposed_s, idle = x.idle_s;
	const struct mem_anatomy *mem = &r->stage[st->stage].mem;
	json_t *o = json_pack("{s:i, s:i, s:b, s:f, s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:i, s:i, s:i}",
			 "rank", i, "stage", st->stage, "fits", mem->fits,
			 "mem_total_GB", mem->total_bytes / GB, "simulated_as", st->representative,
			 "compute_s", compute, "exposed_comm_s", exposed, "bubble_s", st->bubble_s,
			 "idle_s", idle, "forward_s", st->compute_s[CAT_FORWARD],
			 "backward_s", st->compute_s[CAT_BACKWARD],
			 "recompute_s", st->compute_s[CAT_RECOMPUTE],
			 "optimizer_s", st->compute_s[CAT_OPTIMIZER],
			 "exposed_tp_comm_s", st->exposed_s[CAT_TP_COMM],
			 "exposed_dp_comm_s", st->exposed_s[CAT_DP_COMM],
			 "exposed_param_comm_s", st->exposed_s[CAT_PARAM_COMM],
			 "exposed_pp_comm_s", st->exposed_s[CAT_PP_COMM],
			 "tp_comm_s", st->comm_s[CAT_TP_COMM], "dp_comm_s", st->comm_s[CAT_DP_COMM],
			 "param_comm_s", st->comm_s[CAT_PARAM_COMM], "finish_s", st->finish_s,
			 "tp_collectives", st->collectives[CAT_TP_COMM],
			 "dp_collectives", st->collectives[CAT_DP_COMM],
			 "param_collectives", st->collectives[CAT_PARAM_COMM]);
	if (o)  /* compute time added by concurrent communication (engine.h), in compute_s */
		json_object_set_new(o, "interference_s", num(st->interference_s));
	if (o && r->plan.ep > 1) {
		json_object_set_new(o, "exposed_ep_comm_s", num(st->exposed_s[CAT_EP_COMM]));
		json_object_set_new(o, "ep_comm_s", num(st->comm_s[CAT_EP_COMM]));
		json_object_set_new(o, "ep_collectives", json_integer(st->collectives[CAT_EP_COMM]));
	}
	if (o && r->plan.cp > 1) {
		json_object_set_new(o, "exposed_cp_comm_s", num(st->exposed_s[CAT_CP_COMM]));
		json_object_set_new(o, "cp_comm_s", num(st->comm_s[CAT_CP_COMM]));
		json_object_set_new(o, "cp_collectives", json_integer(st->collectives[CAT_CP_COMM]));
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

static void verdict(const struct result *r, char *buf, size_t n)
{
	const struct stage_result *w = &r->stage[r->worst_stage];
	if (r->fits)
		snprintf(buf, n, "fits: the fullest GPU (stage %d) needs %.1f GB of %.1f GB",
			 r->worst_stage, w->mem.total_bytes / GB, w->mem.capacity_bytes / GB);
	else {
		int bad = 0;
		for (int s = 0; s < r->nstages; s++)
			bad += !r->stage[s].mem.fits;
		snprintf(buf, n, "does not fit: stage %d needs %.1f GB per GPU but has %.1f GB "
			 "(short by %.1f GB); %d of %d stages do not fit",
			 r->worst_stage, w->mem.total_bytes / GB, w->mem.capacity_bytes / GB,
			 r->shortfall_bytes / GB, bad, r->nstages);
	}
}

/* Set o[key] = v. A section jansson could not build (json_pack() gives
 * NULL for a non-finite number or a string that is not UTF-8) is never
 * dropped silently: the first one is named in *bad and the report fails. */
static void put(json_t *o, const char **bad, const char *key, json_t *v)
{
	if ((!v || !o || json_object_set_new(o, key, v)) && !*bad)
		*bad = key;
}

/* Append "a" or "a-b" (a run of consecutive ranks) to a comma-separated
 * list in *buf (grown as needed). */
static void range_add(char **buf, size_t *len, size_t *cap, int a, int b)
{
	char tmp[32];
	int n = a == b ? snprintf(tmp, sizeof(tmp), "%s%d", *len ? "," : "", a)
		       : snprintf(tmp, sizeof(tmp), "%s%d-%d", *len ? "," : "", a, b);
	XGROW(*buf, *cap, *len + (size_t)n + 1);
	memcpy(*buf + *len, tmp, (size_t)n + 1);
	*len += (size_t)n;
}

struct rank_class {
	char *key;              /* the row without its rank, compact JSON */
	json_t *row;            /* the first rank's row (owned) */
	int count, first, last; /* ranks in it; the first and last added */
	char *ranges;           /* "0-7,64-71" */
	size_t len, cap;
	int run0;               /* start of the open run of ranges */
};

/* Whether two ranks have the same figures in rank_json() but their rank
 * and representative: every figure there is one of these or derived from
 * them, the stage, and the job's iteration time. */
static bool same_figures(const struct engine_rank_stats *a, const struct engine_rank_stats *b)
{
	return memcmp(a, b, offsetof(struct engine_rank_stats, representative)) == 0 &&
	       a->stage == b->stage;
}

/* The distinct rank classes: ranks whose rows (every figure of
 * rank_json() but the rank itself and whom it was simulated as) are equal,
 * in order of their first rank, each with how many ranks and which (as
 * ranges). Always written, at any size: it is what the per-rank table
 * says, without a row per rank. NULL if a row cannot be built. */
static json_t *rank_classes_json(const struct result *r)
{
	int n = r->eng.nranks, nc = 0;
	size_t cap = 0, hcap = 64;
	while (hcap < 2 * (size_t)n + 2)
		hcap *= 2;
	struct rank_class *c = NULL;
	int *hash = xreallocarray(NULL, hcap, sizeof(*hash)); /* class index + 1, 0 free */
	memset(hash, 0, hcap * sizeof(*hash));
	/* the class the last rank simulated as r went to (-1: none yet): a
	 * folded rank whose figures equal that class's first rank joins it
	 * without its row being built and printed (98,304 ranks: 1.5 s) */
	int *rep_class = xreallocarray(NULL, (size_t)n, sizeof(*rep_class));
	for (int i = 0; i < n; i++)
		rep_class[i] = -1;
	json_t *out = NULL;
	for (int i = 0; i < n; i++) {
		const struct engine_rank_stats *st = &r->eng.rank[i];
		int rep = st->representative >= 0 && st->representative < n ? st->representative : i;
		int k = rep_class[rep];
		if (k < 0 || !same_figures(&r->eng.rank[c[k].first], st)) {
			json_t *row = rank_json(r, i);
			if (!row)
				goto fail;
			json_object_del(row, "rank");
			json_object_del(row, "simulated_as");
			char *key = json_dumps(row, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
			if (!key) {
				json_decref(row);
				goto fail;
			}
			unsigned long h = 5381;
			for (const char *q = key; *q; q++)
				h = h * 33 + (unsigned char)*q;
			size_t j = h & (hcap - 1);
			while (hash[j] && strcmp(c[hash[j] - 1].key, key))
				j = (j + 1) & (hcap - 1);
			if (!hash[j]) {
				XGROW(c, cap, (size_t)nc + 1);
				c[nc] = (struct rank_class){ .key = key, .row = row, .count = 1,
							     .first = i, .last = i, .run0 = i };
				hash[j] = ++nc;
				rep_class[rep] = nc - 1;
				continue;
			}
			k = hash[j] - 1;
			rep_class[rep] = k;
			free(key);
			json_decref(row);
		}
		if (i != c[k].last + 1) {
			range_add(&c[k].ranges, &c[k].len, &c[k].cap, c[k].run0, c[k].last);
			c[k].run0 = i;
		}
		c[k].last = i;
		c[k].count++;
	}
	out = json_array();
	for (int k = 0; k < nc; k++) {
		range_add(&c[k].ranges, &c[k].len, &c[k].cap, c[k].run0, c[k].last);
		json_t *o = json_pack("{s:i, s:s, s:i, s:O}", "count", c[k].count, "ranks", c[k].ranges,
				      "first_rank", (int)strtol(c[k].ranges, NULL, 10), "figures", c[k].row);
		if (!o || json_array_append_new(out, o)) {
			json_decref(out);
			out = NULL;
			break;
		}
	}
fail:
	for (int k = 0; k < nc; k++) {
		free(c[k].key);
		free(c[k].ranges);
		json_decref(c[k].row);
	}
	free(c);
	free(hash);
	free(rep_class);
	return out;
}


/* Parameter servers, stragglers and degraded links, when the plan has them. */
static void whatifs_json(const struct result *r, json_t *root, const char **bad)
{
	const struct plan *pl = &r->plan;
	if (pl->dp_sync == DP_SYNC_PS)
	{
		json_t *o = json_pack("{s:i, s:s, s:s, s:s}", "servers", pl->ps_servers,
			"attach", plan_ps_attach_names[pl->ps_attach], "sharding",
			plan_ps_shard_names[pl->ps_shard], "mode", plan_ps_mode_names[pl->ps_async]);
		if (pl->ps_async) {
			json_object_set_new(o, "staleness_bound", pl->ps_staleness >= 0
					    ? json_integer(pl->ps_staleness) : json_null());
			json_object_set_new(o, "iterations", json_integer(pl->ps_iterations));
			json_object_set_new(o, "iterations_per_s", num(1 / r->iteration_s));
			json_object_set_new(o, "updates", json_integer(r->eng.ps_updates));
			json_object_set_new(o, "staleness", json_pack("{s:f, s:f, s:f, s:f}",
				"mean", r->eng.staleness_mean, "p50", r->eng.staleness_p50,
				"p95", r->eng.staleness_p95, "max", r->eng.staleness_max));
		}
		put(root, bad, "parameter_servers", o);
	}
	if (r->iterations > 0) {
		json_t *cr = json_array();
		for (int i = 0; i < r->ncritical; i++)
			json_array_append_new(cr, json_pack("{s:i, s:i}", "rank", r->critical_rank[i],
							    "iterations", r->critical_count[i]));
		put(root, bad, "stragglers", json_pack("{s:i, s:f, s:f, s:f, s:f, s:f, s:o}",
			"iterations", r->iterations, "iteration_p50_s", r->iter_p50_s,
			"iteration_p95_s", r->iter_p95_s, "iteration_p99_s", r->iter_p99_s,
			"iteration_min_s", r->iter_min_s, "iteration_max_s", r->iter_max_s,
			"critical_ranks", cr));
	}
	if (r->ngroups > 0) {
		json_t *a = json_array();
		for (int i = 0; i < r->ngroups; i++) {
			const struct group_result *g = &r->group[i];
			json_array_append_new(a, json_pack("{s:i, s:s, s:i, s:i, s:i, s:i, s:i, s:i, s:f, s:f, s:f, s:b}",
				"group", r->group_index[i], "gpu", g->gpu, "first_node", g->first_node,
				"nodes", g->nodes, "first_rank", g->first_rank, "ranks", g->ranks,
				"stage_first", g->stage_lo, "stage_last", g->stage_hi,
				"compute_s", g->compute_s, "memory_worst_GB", g->worst_total_bytes / 1e9,
				"capacity_GB", g->capacity_bytes / 1e9, "fits", g->fits));
		}
		put(root, bad, "node_groups", json_pack("{s:s, s:o}", "order",
			plan_node_order_names[pl->node_order], "groups", a));
	}
	if (pl->nthrottle > 0)
		put(root, bad, "throttle", json_pack("{s:i, s:f}", "windows", pl->nthrottle,
			"added_compute_s", r->throttle_s));
	if (pl->ndegraded > 0) {
		json_t *a = json_array();
		for (int i = 0; i < pl->ndegraded; i++) {
			json_t *o = json_pack("{s:s, s:f, s:f}", "link", pl->degraded[i].link,
					      "bw_factor", pl->degraded[i].bw_factor,
					      "latency_factor", pl->degraded[i].latency_factor);
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

static json_t *build_json(const struct result *r, bool per_rank, const char **bad)
{
	const struct plan *pl = &r->plan;
	const struct topology *topo = inputs_topology(r->in);
	const struct published *pb = &r->meta.pub;
	char v[512];
	json_t *root = json_object();

	put(root, bad, "schema", json_string("ddlsim.report"));
	put(root, bad, "schema_version", json_string("1.0"));
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

	/* breakdown */
	json_t *ranks = json_array(), *stages = json_array();
	struct result_split mean = result_mean_split(r);
	/* a row per rank only when asked for (--per-rank), all of them; the
	 * rank classes always */
	for (int i = 0; per_rank && i < r->eng.nranks; i++)
		if (json_array_append_new(ranks, rank_json(r, i)) && !*bad)
			*bad = "per_rank";
	for (int s = 0; s < r->nstages; s++)
		json_array_append_new(stages, json_pack("{s:i, s:f, s:f, s:f, s:f}",
			"stage", s, "compute_fwd_per_microbatch_s", r->stage[s].compute_fwd_s,
			"compute_bwd_per_microbatch_s", r->stage[s].compute_bwd_s,
			"bubble_s", r->stage[s].bubble_s, "bubble_fraction", r->stage[s].bubble_fraction));
	json_t *classes = rank_classes_json(r);
	if (!classes && !*bad)
		*bad = "rank_classes";
	put(root, bad, "breakdown", json_pack("{s:{s:f, s:f, s:f, s:f}, s:o, s:o*, s:o, s:b}",
		"mean", "compute_s", mean.compute_s, "exposed_comm_s", mean.exposed_s,
		"bubble_s", mean.bubble_s, "idle_s", mean.idle_s, "per_stage", stages,
		"rank_classes", classes, "per_rank", ranks, "per_rank_written", per_rank));

	put(root, bad, "communication", json_pack("{s:s, s:{s:f, s:f, s:f, s:f}}",
		"algorithm", pl->coll_algo, "bytes_per_gpu",
		"tp", r->comm_bytes_per_gpu[CAT_TP_COMM], "dp", r->comm_bytes_per_gpu[CAT_DP_COMM],
		"param", r->comm_bytes_per_gpu[CAT_PARAM_COMM], "pp", r->comm_bytes_per_gpu[CAT_PP_COMM]));
	json_object_set_new(json_object_get(json_object_get(root, "communication"), "bytes_per_gpu"),
			    "cp", num(r->comm_bytes_per_gpu[CAT_CP_COMM]));
	if (r->moe) {
		json_object_set_new(json_object_get(json_object_get(root, "communication"), "bytes_per_gpu"),
				    "ep", num(r->comm_bytes_per_gpu[CAT_EP_COMM]));
		put(root, bad, "moe", json_pack("{s:i, s:f, s:f, s:f, s:f, s:f}", "ep", r->plan.ep,
			"active_params", r->active_params, "imbalance_factor", r->moe_imbalance,
			"busiest_rank_load", r->moe_rank_load, "dropped_fraction", r->moe_dropped_fraction,
			"a2a_bytes_per_rank", r->moe_a2a_bytes));
	}
	whatifs_json(r, root, bad);

	json_t *mem = json_array();
	for (int s = 0; s < r->nstages; s++)
		json_array_append_new(mem, mem_json(&r->stage[s]));
	verdict(r, v, sizeof(v));
	int over = 0;
	for (int i = 0; i < r->eng.nranks; i++)
		over += !r->stage[r->eng.rank[i].stage].mem.fits;
	put(root, bad, "memory", json_pack("{s:b, s:i, s:i, s:f, s:f, s:f, s:s, s:o}",
		"fits", r->fits, "ranks_over_capacity", over, "worst_stage", r->worst_stage,
		"worst_total_GB", r->worst_total_bytes / GB,
		"capacity_GB", topo->gpu.hbm_bytes / GB, "shortfall_GB", r->shortfall_bytes / GB,
		"verdict", v, "per_stage", mem));

	put(root, bad, "placement", json_pack("{s:s, s:o, s:o, s:o, s:{s:o, s:o, s:o}}",
		"order", pl->order, "tp_group_of_rank0", ranks_array(r->tp_group0, r->ntp0),
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
	{
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
			json_object_set_new(pub, pub_figures[f].error_key,
					    num(result_row_figure(&row, f) / want - 1));
		}
		if (pub)
			put(root, bad, "published", pub);
	}
	put(root, bad, "training_run", json_pack("{s:f, s:f, s:f, s:f, s:f, s:f}",
		"train_tokens", pl->train_tokens, "time_to_train_s", r->time_to_train_s,
		"time_to_train_days", r->time_to_train_s / 86400, "gpu_hours", r->gpu_hours,
		"usd_per_gpu_hour", pl->usd_per_gpu_hour, "cost_usd", r->cost_usd));
	put(root, bad, "simulation", json_pack("{s:b, s:i, s:i, s:I, s:I, s:I, s:f, s:f}",
		"folded", r->folded, "ranks", r->eng.nranks, "simulated_ranks", r->eng.nsimulated,
		"flows", (json_int_t)r->eng.flows, "collectives", (json_int_t)r->eng.collectives,
		"tasks", (json_int_t)r->eng.tasks, "wall_s", r->sim_wall_s,
		"platform_s", r->eng.platform_s));
	json_t *sim = json_object_get(root, "simulation");
	if (sim)
		json_object_set_new(sim, "fold_reason", r->fold_reason ? json_string(r->fold_reason)
									: json_null());
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


/* ---- CSV ----------------------------------------------------------- */

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

/* ---- files --------------------------------------------------------- */

int report_mkdirs(const char *dir)
{
	char *buf = xstrdup(dir);
	int rc = 0;
	for (char *p = buf + 1; *p && !rc; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0777) && errno != EEXIST)
			rc = -1;
		*p = '/';
	}
	if (!rc && mkdir(buf, 0777) && errno != EEXIST)
		rc = -1;
	free(buf);
	return rc;
}

int report_write_atomic(const char *path, const char *data, size_t len, struct diag *d)
{
	int rc = atomic_file_write(path, data, len);
	if (rc)
		return diag_err(d, path, "", "cannot write report: %s", strerror(-rc));
	return 0;
}

const char *const report_format_names[4] = { "json", "csv", "svg", "html" };

enum { OUT_JSON, OUT_CSV, OUT_BREAKDOWN, OUT_SCHEDULE, OUT_MEMORY, OUT_HTML, OUT_N };
static const char *const out_files[OUT_N] = {
	"report.json", "report.csv", "breakdown.svg", "schedule.svg", "memory.svg", "report.html"
};

int report_write(const struct result *r, const char *dir, unsigned formats, struct diag *d)
{
	char *text[OUT_N] = { 0 };
	size_t len[OUT_N] = { 0 };
	int rc = -1, written = 0, lock_fd = -1;

	/* render everything before creating anything */
	if (formats & REPORT_JSON) {
		const char *bad = NULL;
		json_t *j = report_to_json(r, formats & REPORT_PER_RANK, &bad);
		if (!j)
			return diag_errf(d, "cannot serialise the report's '%s' section: a value is not "
				   "finite or a string is not valid UTF-8; no report written", bad);
		char *t = json_dumps(j, JSON_INDENT(2) | JSON_REAL_PRECISION(15));
		json_decref(j);
		if (!t)
			return diag_errf(d, "cannot render the JSON report");
		text[OUT_JSON] = xasprintf("%s\n", t);
		free(t);
	}
	if (formats & REPORT_CSV) {
		FILE *m = open_memstream(&text[OUT_CSV], &len[OUT_CSV]);
		if (!m || report_write_csv_stream(r, m, true)) {
			if (m)
				fclose(m);
			diag_errf(d, "cannot render the CSV report");
			goto out;
		}
		fclose(m);
	}
	if (formats & REPORT_SVG) {
		text[OUT_BREAKDOWN] = plot_breakdown_svg(r);
		text[OUT_SCHEDULE] = plot_gantt_svg(r);
		text[OUT_MEMORY] = plot_memory_svg(r);
		if (!text[OUT_BREAKDOWN] || !text[OUT_SCHEDULE] || !text[OUT_MEMORY]) {
			diag_errf(d, "cannot render the SVG plots");
			goto out;
		}
	}
	if ((formats & REPORT_HTML) && !(text[OUT_HTML] = html_render(r))) {
		diag_errf(d, "cannot render the HTML report");
		goto out;
	}
	if (report_mkdirs(dir)) {
		diag_err(d, dir, "", "cannot create report directory: %s", strerror(errno));
		goto out;
	}
	/* runs writing the same directory publish their files in turn (a lock
	 * on the directory itself), so all the files always come from the
	 * same run */
	lock_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (lock_fd >= 0)
		while (flock(lock_fd, LOCK_EX) < 0 && errno == EINTR)
			;
	for (; written < OUT_N; written++) {
		if (!text[written])
			continue;
		char *path = xasprintf("%s/%s", dir, out_files[written]);
		size_t n = written == OUT_CSV ? len[written] : strlen(text[written]);
		int e = report_write_atomic(path, text[written], n, d);
		free(path);
		if (e)
			goto out_unlink;
	}
	rc = 0;
	goto out;
out_unlink:
	for (int i = 0; i < written; i++)
		if (text[i]) {
			char *path = xasprintf("%s/%s", dir, out_files[i]);
			unlink(path);
			free(path);
		}
out:
	if (lock_fd >= 0)
		close(lock_fd);  /* releases the lock */
	for (int i = 0; i < OUT_N; i++)
		free(text[i]);
	return rc;
}

/* ---- terminal ------------------------------------------------------ */

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
	for (int i = 0; i < r->ngroups; i++) {
		const struct group_result *g = &r->group[i];
		fprintf(f, "  group %d    nodes %d-%d, ranks %d-%d: %s, stages %d-%d, compute %.4f s, "
			"memory %.1f of %.1f GB%s\n", r->group_index[i], g->first_node,
			g->first_node + g->nodes - 1, g->first_rank, g->first_rank + g->ranks - 1, g->gpu,
			g->stage_lo, g->stage_hi, g->compute_s, g->worst_total_bytes / 1e9,
			g->capacity_bytes / 1e9, g->fits ? "" : " (does not fit)");
	}
	fprintf(f, "plan         dp=%d tp=%d pp=%d%s zero=%d schedule=%s v=%d recompute=%s\n",
		sc->dp, sc->tp, sc->pp, sc->sp ? " sp" : "", (int)sc->zero,
		schedule_registry[sc->schedule].name, sc->interleave, recompute_name(sc->recompute));
	if (sc->cp > 1)
		fprintf(f, "context      cp=%d (%s), gradients over dp x cp = %d ranks\n", sc->cp,
			plan_cp_comm_names[sc->cp_comm], sc->dp * sc->cp);
	if (sc->framework >= 0) {
		char label[64];
		fprintf(f, "framework    %s: grad reduce %s, bucket %g MB, overlap grad %s, param %s\n",
			framework_label(&framework_table[sc->framework], label, sizeof(label)),
			dtype_name(sc->grad_dtype), sc->bucket_bytes / 1e6,
			sc->overlap_grad_reduce ? "on" : "off", sc->overlap_param_gather ? "on" : "off");
	}
	if (model_arch(model)->sequence)
		fprintf(f, "kernels      %s stack%s, attention %s\n", plan_stack(sc)->name,
			sc->stack_set ? "" : sc->framework >= 0 ? " (the framework's)" : " (default)",
			plan_attention_kernel(sc));
	fprintf(f, "links        tp: %s; dp: %s; pp: %s\n", r->links_tp[0] ? r->links_tp : "-",
		r->links_dp[0] ? r->links_dp : "-", r->links_pp[0] ? r->links_pp : "-");
	if (sc->cp > 1)
		fprintf(f, "             cp: %s\n", r->links_cp[0] ? r->links_cp : "-");
	if (!model_arch(model)->sequence)
		fprintf(f, "batch        %ld images, micro-batch %ld, %g micro-batches per GPU, %s\n",
			sc->global_batch, sc->micro_batch, r->microbatches, dtype_name(sc->precision));
	else
		fprintf(f, "batch        %ld x %ld tokens, micro-batch %ld, %g micro-batches per pipeline, %s\n",
			sc->global_batch, sc->seq, sc->micro_batch, r->microbatches, dtype_name(sc->precision));
}

void report_print_summary(const struct result *r, FILE *f)
{
	const struct plan *sc = &r->plan;
	char buf[64], vbuf[512];
	struct result_split mean = result_mean_split(r);

	print_setup(r, f);
	fprintf(f, "\n%-28s %14s\n", "metric", "value");
	fprintf(f, "%-28s %14.4f\n", "iteration_time_s", r->iteration_s);
	fprintf(f, "%-28s %14.2f\n", "samples_per_s", r->samples_per_s);
	fprintf(f, "%-28s %14.0f\n", "tokens_per_s", r->tokens_per_s);
	fprintf(f, "%-28s %14.1f\n", "model_tflops_per_gpu", r->model_tflops_per_gpu);
	fprintf(f, "%-28s %14.1f\n", "hardware_tflops_per_gpu", r->hardware_tflops_per_gpu);
	fprintf(f, "%-28s %13.1f%%\n", "mfu", 100 * r->mfu);
	fprintf(f, "%-28s %14.4f\n", "compute_s (mean)", mean.compute_s);
	fprintf(f, "%-28s %14.4f\n", "exposed_comm_s (mean)", mean.exposed_s);
	fprintf(f, "%-28s %14.4f\n", "bubble_s (mean)", mean.bubble_s);
	fprintf(f, "%-28s %14.4f\n", "idle_s (mean)", mean.idle_s);
	/* communication per dimension, mean over ranks: busy on the
	 * communication streams and exposed (the compute stream waiting) */
	static const struct { const char *name; int cat; } dims[] = {
		{ "tp", CAT_TP_COMM }, { "cp", CAT_CP_COMM }, { "dp", CAT_DP_COMM },
		{ "param", CAT_PARAM_COMM }, { "ep", CAT_EP_COMM }, { "pp", CAT_PP_COMM } };
	fprintf(f, "\n%-16s %12s %12s %14s\n", "communication", "busy s", "exposed s", "sent per GPU");
	for (size_t k = 0; k < sizeof(dims) / sizeof(dims[0]); k++) {
		double busy = 0, exposed = 0;
		int c = dims[k].cat, n = r->eng.nranks;
		for (int i = 0; i < n; i++) {
			busy += r->eng.rank[i].comm_s[c] / n;
			exposed += r->eng.rank[i].exposed_s[c] / n;
		}
		if (busy <= 0 && exposed <= 0 && r->comm_bytes_per_gpu[c] <= 0)
			continue;
		human_bytes(r->comm_bytes_per_gpu[c], buf, sizeof(buf));
		fprintf(f, "  %-14s %12.4f %12.4f %14s\n", dims[k].name, busy, exposed, buf);
	}
	if (r->moe) {
		fprintf(f, "%-28s %14.3f\n", "moe imbalance factor", r->moe_imbalance);
		fprintf(f, "%-28s %13.1f%%\n", "moe tokens dropped", 100 * r->moe_dropped_fraction);
	}
	if (r->plan.dp_sync == DP_SYNC_PS)
		fprintf(f, "parameter servers            %d (%s, %s, %s)\n", r->plan.ps_servers,
			r->plan.ps_attach == PS_ATTACH_GPUS ? "on the GPUs" : "on the fabric",
			plan_ps_shard_names[r->plan.ps_shard], plan_ps_mode_names[r->plan.ps_async]);
	if (r->plan.dp_sync == DP_SYNC_PS && r->plan.ps_async)
		fprintf(f, "async: %d iterations, %.3f it/s, staleness mean %.2f, P50 %.0f, P95 %.0f, max %.0f "
			"updates (bound %d)\n", r->plan.ps_iterations, 1 / r->iteration_s, r->eng.staleness_mean,
			r->eng.staleness_p50, r->eng.staleness_p95, r->eng.staleness_max, r->plan.ps_staleness);
	if (r->iterations > 1)
		fprintf(f, "\nstragglers: %d iterations    P50 %.4f s  P95 %.4f s  P99 %.4f s  (min %.4f, max %.4f)\n",
			r->iterations, r->iter_p50_s, r->iter_p95_s, r->iter_p99_s, r->iter_min_s,
			r->iter_max_s);
	if (r->iterations > 0) {
		fprintf(f, "%scritical path (rank: iterations)", r->iterations > 1 ? "" : "\n");
		for (int i = 0; i < r->ncritical; i++)
			fprintf(f, " %d: %d", r->critical_rank[i], r->critical_count[i]);
		fprintf(f, "\n");
	}
	if (r->plan.nthrottle > 0)
		fprintf(f, "\nthrottling: %d window%s added %.4f s of compute (summed over the ranks)\n",
			r->plan.nthrottle, r->plan.nthrottle > 1 ? "s" : "", r->throttle_s);
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
			const struct plan_degraded *g = &r->plan.degraded[ord[k]];
			fprintf(f, "  %-28s %6.2f %7.2f %12.4f %+10.4f\n", g->link, g->bw_factor,
				g->latency_factor, r->sens_iteration_s[ord[k]],
				r->sens_iteration_s[ord[k]] - r->sens_baseline_s);
		}
	}
	const struct stage_result *w = &r->stage[r->worst_stage];
	/* memory in GB (1e9 bytes, as datasheets count) and GiB (2^30, as
	 * nvidia-smi and PyTorch count) */
	fprintf(f, "\nmemory per GPU (stage %d)     %14s %10s\n", r->worst_stage, "GB", "GiB");
	const struct { const char *name; double bytes; } rows[] = {
		{ "weights", w->mem.weights_bytes }, { "gradients", w->mem.grads_bytes },
		{ "optimizer state", w->mem.optimizer_bytes },
		{ "fp8 weight copies", w->mem.fp8_weight_bytes },
		{ "activations", w->mem.activations_bytes }, { "logits", w->mem.logits_bytes },
		{ "comm buffers", w->mem.comm_buffer_bytes },
		{ "CUDA context", w->mem.context_bytes }, { "NCCL buffers", w->mem.nccl_bytes },
		{ "allocator reserve", w->mem.fragmentation_bytes },
		{ "total", w->mem.total_bytes }, { "capacity", w->mem.capacity_bytes },
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (rows[i].bytes > 0 || strcmp(rows[i].name, "fp8 weight copies"))
			fprintf(f, "  %-26s %14.2f %10.2f\n", rows[i].name, rows[i].bytes / GB,
				rows[i].bytes / 1073741824.0);
	verdict(r, vbuf, sizeof(vbuf));
	fprintf(f, "memory: %s (%.1f of %.1f GiB)\n", vbuf, w->mem.total_bytes / 1073741824.0,
		w->mem.capacity_bytes / 1073741824.0);
	/* the published figures and the error of the prediction against them */
	struct result_row row = { 0 };
	result_row_fill(&row, r);
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
	if (sc->train_tokens > 0)
		fprintf(f, "\ntraining %.3g tokens: %.1f days, %.0f GPU-hours, $%.0f\n",
			sc->train_tokens, r->time_to_train_s / 86400, r->gpu_hours, r->cost_usd);
	fprintf(f, "\nsimulated %d of %d ranks%s, %ld flows, %ld tasks in %.2f s\n",
		r->eng.nsimulated, r->eng.nranks, r->folded ? " (folded replicas)" : "",
		r->eng.flows, r->eng.tasks, r->sim_wall_s);
	if (!r->folded && r->fold_reason && r->eng.nranks > 1)
		fprintf(f, "not folded: %s\n", r->fold_reason);
}
