/* scenario_write: a plan and its inputs written back as a scenario file
 * (scenario_write.h).
 *
 * One function per object of the file, in the loader's order
 * (scenario.c, scenario_parallel.c, scenario_simulation.c), each writing
 * the keys its loader reads, by the loader's names and name tables. A key
 * is left out where the loader's default (plan_init(), plan_resolve())
 * gives the same value. Whole numbers are written as JSON integers, other
 * numbers in the fewest digits that read back to the same double. */
#include "scenario_write.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "cost.h"
#include "scenario-private.h"
#include "finetune.h"
#include "framework.h"
#include "model.h"
#include "moe.h"
#include "schedule.h"
#include "stack.h"
#include "topology.h"
#include "xalloc.h"

/* parallel.recompute's names, in enum recompute order (scenario_parallel.c). */
static const char *const rc_names[] = { "none", "selective", "full", "selective-op", NULL };

static json_t *num(double x)
{
	if (x == floor(x) && fabs(x) < 9007199254740992.0)
		return json_integer((json_int_t)x);
	return json_real(x);
}

static void put(json_t *o, const char *key, json_t *v)
{
	json_object_set_new(o, key, v);
}

/* Set o[key] to child unless it is empty; child's reference is taken. */
static void put_object(json_t *o, const char *key, json_t *child)
{
	if (json_object_size(child))
		json_object_set_new(o, key, child);
	else
		json_decref(child);
}

static json_t *int_array(const int *v, int n)
{
	json_t *a = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(a, json_integer(v[i]));
	return a;
}

char *scenario_path_from(const char *file, const char *target)
{
	char *t = realpath(target, NULL);
	if (!t)
		return NULL;
	const char *slash = strrchr(file, '/');
	char *dir_rel = slash ? xasprintf("%.*s", (int)(slash - file + (slash == file)), file) : xstrdup(".");
	char *dir = realpath(dir_rel, NULL);
	free(dir_rel);
	if (!dir)
		return t;
	/* the longest common prefix ending at a component boundary */
	size_t common = 0, i = 0;
	for (; dir[i] && dir[i] == t[i]; i++)
		if (dir[i] == '/')
			common = i;
	if (!dir[i] && (t[i] == '/' || !t[i]))
		common = i;
	if (common == 0) {   /* only the root in common: the absolute path reads better */
		free(dir);
		return t;
	}
	size_t ups = 0;
	for (const char *s = dir + common; *s; s++)
		ups += *s == '/';
	size_t len = ups * 3 + strlen(t + common) + 2;
	char *out = xmalloc(len), *o = out;
	for (size_t k = 0; k < ups; k++)
		o += sprintf(o, "../");
	snprintf(o, len - (size_t)(o - out), "%s", t[common] == '/' ? t + common + 1 : t + common);
	free(dir);
	free(t);
	return out;
}

/* The top level's inputs: model, topology, nodes, the framework. */
static int write_top(json_t *root, const struct plan *p, const struct inputs *in, const char *path,
		     struct diag *d)
{
	static const char *const key[2] = { "model", "topology" };
	const char *src[2] = { inputs_model_path(in), inputs_topology_path(in) };
	for (int i = 0; i < 2; i++) {
		char *rel = scenario_path_from(path, src[i]);
		if (!rel)
			return diag_err(d, path, "", "cannot name the %s '%s' from the written file: %s", key[i],
					src[i], strerror(errno));
		put(root, key[i], json_string(rel));
		free(rel);
	}
	put(root, "nodes", json_integer(p->nodes));
	const struct topology *t = inputs_topology(in);
	if (t->gpus_per_node != t->gpus_per_node_physical)
		put(root, "gpus_per_node_used", json_integer(t->gpus_per_node));
	if (p->ngroups)
		return diag_err(d, path, "/node_groups", "cannot write a mixed cluster's node groups: the plan "
				"holds their GPUs' figures, not the preset files a scenario names");
	if (p->node_order != NODE_ORDER_LISTED)
		put(root, "node_order", json_string(plan_node_order_names[p->node_order]));
	if (p->framework >= 0) {
		char buf[128];
		put(root, "framework", json_string(framework_label(&framework_table[p->framework], buf, sizeof(buf))));
	}
	return 0;
}

/* Whether a key a framework preset fills must be written: given, or no
 * preset fills it. */
static bool own(const struct plan *p, unsigned given_bit)
{
	return (p->given & given_bit) || p->framework < 0;
}

static json_t *write_ps(const struct plan *p)
{
	const struct plan_ps *ps = &p->parallel.ps;
	json_t *o = json_object();
	if (ps->servers != 1)
		put(o, "servers", json_integer(ps->servers));
	if (ps->attach != PS_ATTACH_FABRIC)
		put(o, "attach", json_string(plan_ps_attach_names[ps->attach]));
	if (ps->shard != PS_SHARD_EVEN)
		put(o, "sharding", json_string(plan_ps_shard_names[ps->shard]));
	if (ps->async)
		put(o, "mode", json_string(plan_ps_mode_names[1]));
	if (ps->staleness >= 0)
		put(o, "staleness", json_integer(ps->staleness));
	if (ps->iterations != 8)
		put(o, "iterations", json_integer(ps->iterations));
	if (ps->nic_Bps > 0)
		put(o, "nic_Gbps", num(ps->nic_Bps * 8 / 1e9));
	if (ps->latency_s >= 0)
		put(o, "latency_us", num(ps->latency_s * 1e6));
	return o;
}

/* The parallel degrees: tp, pp, dp always; cp, cp_comm, ep, etp, bn_group when not the default. */
static void put_degrees(json_t *o, const struct plan *p)
{
	const struct plan_parallel *q = &p->parallel;
	put(o, "tp", json_integer(q->tp));
	put(o, "pp", json_integer(q->pp));
	put(o, "dp", json_integer(q->dp));
	if (q->cp != 1)
		put(o, "cp", json_integer(q->cp));
	if (q->cp_comm != CP_P2P)
		put(o, "cp_comm", json_string(plan_cp_comm_names[q->cp_comm]));
	if (q->ep != 1)
		put(o, "ep", json_integer(q->ep));
	if (plan_etp(p) != q->tp)
		put(o, "etp", json_integer(plan_etp(p)));
	if (q->bn_group != 1)
		put(o, "bn_group", json_integer(q->bn_group));
}

/* recompute, recompute_every_n_layers and recompute_modules when not the default. */
static void put_recompute(json_t *o, const struct plan_parallel *q)
{
	if (q->recompute != RECOMPUTE_NONE)
		put(o, "recompute", json_string(rc_names[q->recompute]));
	if (q->recompute_every > 1)
		put(o, "recompute_every_n_layers", json_integer(q->recompute_every));
	if (q->recompute_modules) {
		json_t *a = json_array();
		for (int k = 0; k < RC_MOD_N; k++)
			if (q->recompute_modules & (1u << k))
				json_array_append_new(a, json_string(rc_module_names[k]));
		put(o, "recompute_modules", a);
	}
}

/* The rank order and the pipeline's layers per stage when given. */
static void put_layout(json_t *o, const struct plan_parallel *q)
{
	if (strcmp(q->order, "tp,cp,dp,pp"))
		put(o, "order", json_string(q->order));
	if (q->nstage_layers)
		put(o, "stage_layers", int_array(q->stage_layers, q->nstage_layers));
	if (q->first_stage_layers)
		put(o, "first_stage_layers", json_integer(q->first_stage_layers));
	if (q->last_stage_layers)
		put(o, "last_stage_layers", json_integer(q->last_stage_layers));
	if (q->nvstage_layers)
		put(o, "vstage_layers", int_array(q->vstage_layers, q->nvstage_layers));
}

static json_t *write_parallel(const struct plan *p)
{
	const struct plan_parallel *q = &p->parallel;
	json_t *o = json_object();
	put_degrees(o, p);
	if (q->offload != OFFLOAD_NONE)
		put(o, "offload", json_string(plan_offload_names[q->offload]));
	if (q->dp_sync != DP_SYNC_ALLREDUCE)
		put(o, "dp_sync", json_string(plan_dp_sync_names[q->dp_sync]));
	if (p->given & PLAN_GIVEN_PS || q->dp_sync == DP_SYNC_PS)
		put(o, "ps", write_ps(p));
	if (q->sp)
		put(o, "sp", json_true());
	if (own(p, PLAN_GIVEN_ZERO))
		put(o, "zero", json_integer((int)q->zero));
	if (q->shard_group > 0)
		put(o, "shard_group", json_integer(q->shard_group));
	if (q->schedule != SCHED_1F1B)
		put(o, "schedule", json_string(schedule_registry[q->schedule].name));
	if (q->interleave != 1)
		put(o, "interleave", json_integer(q->interleave));
	put_recompute(o, q);
	put_layout(o, q);
	return o;
}

static json_t *write_finetune(const struct finetune *f)
{
	json_t *o = json_object();
	put(o, "method", json_string(ft_method_names[f->method]));
	if (f->method == FT_FULL)
		return o;
	put(o, "rank", json_integer(f->rank));
	if (f->alpha != f->rank)
		put(o, "alpha", num(f->alpha));
	if (f->dropout > 0)
		put(o, "dropout", num(f->dropout));
	json_t *t = json_array();
	for (int k = 0; k < FT_TARGET_N; k++)
		if (f->targets & (1u << k))
			json_array_append_new(t, json_string(ft_target_names[k]));
	put(o, "targets", t);
	if (f->base_set)
		put(o, "base_dtype", json_string(ft_base_names[f->base]));
	return o;
}

static json_t *write_input(const struct input_pipeline *ip)
{
	json_t *o = json_object();
	put(o, "loader", json_string(input_loader_names[ip->loader]));
	if (ip->cpu_cores > 0)
		put(o, "cpu_cores", json_integer(ip->cpu_cores));
	if (ip->workers_per_gpu > 0)
		put(o, "workers_per_gpu", json_integer(ip->workers_per_gpu));
	if (ip->core_img_per_s > 0)
		put(o, "core_img_per_s", num(ip->core_img_per_s));
	if (ip->gpu_img_per_s > 0)
		put(o, "gpu_img_per_s", num(ip->gpu_img_per_s));
	return o;
}

static json_t *write_training(const struct plan *p, const struct inputs *in)
{
	const struct plan_training *t = &p->training;
	json_t *o = json_object();
	if (model_arch(inputs_model(in))->sequence)   /* a CNN's sample is one image: no seq_len */
		put(o, "seq_len", json_integer(t->seq));
	put(o, "global_batch", json_integer(t->global_batch));
	put(o, "micro_batch", json_integer(t->micro_batch));
	put(o, "precision", json_string(dtype_names[t->precision]));
	if (own(p, PLAN_GIVEN_GRAD_DTYPE) &&
	    (t->grad_dtype != precision_weight_dtype(t->precision) || (p->given & PLAN_GIVEN_GRAD_DTYPE)))
		put(o, "grad_reduce_dtype", json_string(dtype_names[t->grad_dtype]));
	if (t->attention_set)
		put(o, "attention", json_string(attention_names[t->attention]));
	if (t->fp8_comm)
		put(o, "fp8_comm", json_true());
	if (t->fp8_params)
		put(o, "fp8_params", json_true());
	if (t->fp8_moe_act_cache)
		put(o, "fp8_moe_act_cache", json_true());
	if (t->bf16_moments)
		put(o, "optimizer_state_dtype", json_string("bf16"));
	if (t->master_remainders)
		put(o, "master_weights", json_string("remainders"));
	if (t->allocator != PLAN_ALLOC_STACK)
		put(o, "allocator", json_string(t->allocator == PLAN_ALLOC_NATIVE ? "native" : "expandable"));
	if (t->memory_reserve != 0.05)
		put(o, "memory_reserve", num(t->memory_reserve));
	if (t->train_tokens > 0)
		put(o, "train_tokens", num(t->train_tokens));
	if (t->finetune.method != FT_FULL)
		put(o, "finetune", write_finetune(&t->finetune));
	if (t->input.loader != INPUT_NONE)
		put(o, "input_pipeline", write_input(&t->input));
	return o;
}

static json_t *write_communication(const struct plan *p)
{
	const struct plan_comm *c = &p->communication;
	json_t *o = json_object();
	if (strcmp(c->coll_algo, "auto"))
		put(o, "algorithm", json_string(c->coll_algo));
	if (own(p, PLAN_GIVEN_BUCKET) && (c->bucket_bytes != 25e6 || (p->given & PLAN_GIVEN_BUCKET)))
		put(o, "bucket_MB", num(c->bucket_bytes / 1e6));
	if (own(p, PLAN_GIVEN_OVERLAP_GRAD) && (!c->overlap_grad_reduce || (p->given & PLAN_GIVEN_OVERLAP_GRAD)))
		put(o, "overlap_grad_reduce", json_boolean(c->overlap_grad_reduce));
	if (own(p, PLAN_GIVEN_OVERLAP_PARAM) &&
	    (c->overlap_param_gather || (p->given & PLAN_GIVEN_OVERLAP_PARAM)))
		put(o, "overlap_param_gather", json_boolean(c->overlap_param_gather));
	if (c->apex_contiguous_buffers)
		put(o, "apex_contiguous_buffers", json_true());
	if (c->tp_comm_overlap)
		put(o, "tp_comm_overlap", json_true());
	if (c->tp_rs_margin_sms[0] || c->tp_rs_margin_sms[1]) {
		json_t *m = json_object();
		put(m, "proj_fprop", json_integer(c->tp_rs_margin_sms[0]));
		put(m, "fc2_fprop", json_integer(c->tp_rs_margin_sms[1]));
		put(o, "tp_comm_overlap_sm_margin", m);
	}
	return o;
}

static int write_compute(json_t *root, const struct plan *p, const struct inputs *in, const char *path,
			 struct diag *d)
{
	const struct plan_compute *c = &p->compute;
	json_t *o = json_object();
	const char *cost = cost_name(inputs_cost(in));
	if (strcmp(cost, cost_registry[0].name))
		put(o, "cost", json_string(cost));
	if (inputs_profile_path(in)) {
		char *rel = scenario_path_from(path, inputs_profile_path(in));
		if (!rel) {
			json_decref(o);
			return diag_err(d, path, "", "cannot name the profile '%s' from the written file: %s",
					inputs_profile_path(in), strerror(errno));
		}
		put(o, "profile", json_string(rel));
		free(rel);
	}
	if (c->stack_set)
		put(o, "stack", json_string(stack_table[c->stack].name));
	if (c->attn_backend_set >= 0)
		put(o, "attention_backend", json_string(attn_backend_names[c->attn_backend_set]));
	if (c->cuda_graphs)
		put(o, "cuda_graphs", json_true());
	static const char *const issue[] = { "host_issue_fwd_us", "host_issue_bwd_us" };
	for (int i = 0; i < 2; i++)
		if (c->host_issue_us[i] >= 0)
			put(o, issue[i], num(c->host_issue_us[i]));
	if (c->launch_blocking)
		put(o, "launch_blocking", json_true());
	put_object(root, "compute", o);
	return 0;
}

static json_t *write_moe(const struct plan *p)
{
	json_t *o = json_object();
	if (p->given & PLAN_GIVEN_MOE_DIST)
		put(o, "routing", json_string(moe_dist_names[p->moe.dist]));
	if (p->given & PLAN_GIVEN_MOE_ZIPF)
		put(o, "zipf_s", num(p->moe.zipf_s));
	if (p->given & PLAN_GIVEN_MOE_CAPACITY)
		put(o, "capacity_factor", num(p->moe.capacity_factor));
	return o;
}

static json_t *write_straggler_group(const struct plan_stragglers *st, const struct plan_straggler_group *s)
{
	json_t *o = json_object();
	if (s->nranks)
		put(o, "ranks", int_array(st->rank + s->first_rank, s->nranks));
	else
		put(o, "fraction", num(s->fraction));
	if (s->dist != STRAG_FIXED)
		put(o, "distribution", json_string(plan_straggler_dist_names[s->dist]));
	if (s->dist == STRAG_EMPIRICAL) {
		json_t *a = json_array();
		for (int i = 0; i < s->nsamples; i++)
			json_array_append_new(a, num(st->samples[s->first_sample + i]));
		put(o, "samples", a);
	} else {
		if (s->slowdown != 1)
			put(o, "slowdown", num(s->slowdown));
		if (s->sigma > 0)
			put(o, "sigma", num(s->sigma));
	}
	if (s->seed != 1)
		put(o, "seed", json_integer(s->seed));
	return o;
}

/* One group as an object (the form of files before lists), several (or
 * one given as a list) as a list of them. */
static json_t *write_stragglers(const struct plan_stragglers *st)
{
	if (st->ngroups == 1 && !st->listed)
		return write_straggler_group(st, &st->group[0]);
	json_t *a = json_array();
	for (int g = 0; g < st->ngroups; g++)
		json_array_append_new(a, write_straggler_group(st, &st->group[g]));
	return a;
}

static json_t *write_simulation(const struct plan *p)
{
	const struct plan_simulation *s = &p->simulation;
	json_t *o = json_object();
	if (s->fold != FOLD_AUTO)
		put(o, "fold", json_string(plan_fold_names[s->fold]));
	if (s->iterations != 1)
		put(o, "iterations", json_integer(s->iterations));
	if (s->stragglers.ngroups > 0)
		put(o, "stragglers", write_stragglers(&s->stragglers));
	if (s->ndegraded) {
		json_t *a = json_array();
		for (int i = 0; i < s->ndegraded; i++) {
			json_t *g = json_object();
			put(g, "link", json_string(s->degraded[i].link));
			put(g, "bw_factor", num(s->degraded[i].bw_factor));
			put(g, "latency_factor", num(s->degraded[i].latency_factor));
			json_array_append_new(a, g);
		}
		put(o, "degraded_links", a);
	}
	if (s->nthrottle) {
		json_t *a = json_array();
		for (int i = 0; i < s->nthrottle; i++) {
			const struct plan_throttle *w = &s->throttle[i];
			json_t *g = json_object();
			if (w->n)
				put(g, w->by_node ? "nodes" : "ranks", int_array(w->id, w->n));
			put(g, "start_s", num(w->start_s));
			put(g, "duration_s", num(w->duration_s));
			put(g, "factor", num(w->factor));
			json_array_append_new(a, g);
		}
		put(o, "throttle", a);
	}
	if (s->sensitivity)
		put(o, "sensitivity", json_true());
	if (s->collective_pairs)
		put(o, "collective_pairs", json_true());
	if (s->separate_streams)
		put(o, "separate_streams", json_true());
	if (s->collective_flows)
		put(o, "collective_flows", json_true());
	if (s->link_traffic != LINK_TRAFFIC_EXACT)
		put(o, "link_traffic", json_string(plan_link_traffic_names[s->link_traffic]));
	return o;
}

/* text (json_dumps()'s, numbers at 17 digits) with each number that has
 * a fraction or an exponent in its shortest form that reads back to the
 * same double ("0.1", not "0.10000000000000001"). New string. */
static char *shortest_numbers(const char *text)
{
	size_t cap = strlen(text) + 1, n = 0;
	char *out = xmalloc(cap);
	bool in_string = false;
	for (const char *s = text; *s;) {
		if (in_string || *s == '"' || !(*s == '-' || (*s >= '0' && *s <= '9'))) {
			if (*s == '\\' && in_string && s[1]) {
				out[n++] = *s++;
			} else if (*s == '"')
				in_string = !in_string;
			out[n++] = *s++;
			continue;
		}
		char *end;
		double x = strtod(s, &end);
		size_t len = (size_t)(end - s);
		char best[40];
		snprintf(best, sizeof(best), "%.*s", (int)(len < sizeof(best) ? len : sizeof(best) - 1), s);
		if (strpbrk(best, ".eE") && len < sizeof(best))
			for (int prec = 1; prec <= 17; prec++) {
				char t[40];
				snprintf(t, sizeof(t), "%.*g", prec, x);
				if (strtod(t, NULL) == x) {
					/* keep a fraction's mark: "2.5", "1e-05" stay numbers with a point or exponent */
					if (!strpbrk(t, ".eEn"))
						strcat(t, ".0");
					if (strlen(t) <= len)
						snprintf(best, sizeof(best), "%s", t);
					break;
				}
			}
		size_t bl = len < sizeof(best) ? strlen(best) : len;
		memcpy(out + n, len < sizeof(best) ? best : s, bl);
		n += bl;
		s = end;
	}
	out[n] = 0;
	return out;
}

json_t *scenario_write_json(const struct plan *p, const struct inputs *in, const struct scenario_write_meta *m,
			    const char *path, struct diag *d)
{
	json_t *root = json_object();
	put(root, "schema", json_string("ddlsim.scenario"));
	/* 1.1 added the goal object: a file without one stays readable by 1.0 */
	put(root, "schema_version", json_string(m && m->goal ? "1.1" : "1.0"));
	if (m && m->name)
		put(root, "name", json_string(m->name));
	if (m && m->description)
		put(root, "description", json_string(m->description));
	if (write_top(root, p, in, path, d))
		goto err_root;
	put(root, "parallel", write_parallel(p));
	put(root, "training", write_training(p, in));
	put_object(root, "communication", write_communication(p));
	if (write_compute(root, p, in, path, d))
		goto err_root;
	put_object(root, "moe", write_moe(p));
	put_object(root, "simulation", write_simulation(p));
	if (p->cost.usd_per_gpu_hour > 0) {
		json_t *c = json_object();
		put(c, "usd_per_gpu_hour", num(p->cost.usd_per_gpu_hour));
		put(root, "cost", c);
	}
	if (m && m->goal)
		put(root, "goal", scenario_goal_json(m->goal));
	return root;
err_root:
	json_decref(root);
	return NULL;
}

int scenario_write_file(const struct plan *p, const struct inputs *in, const struct scenario_write_meta *m,
			const char *path, struct diag *d)
{
	json_t *root = scenario_write_json(p, in, m, path, d);
	if (!root)
		return -1;
	char *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
	json_decref(root);
	if (!text)
		return diag_err(d, path, "", "cannot render the scenario");
	char *shortest = shortest_numbers(text);
	free(text);
	char *line = xasprintf("%s\n", shortest);
	free(shortest);
	int e = atomic_file_write(path, line, strlen(line));
	free(line);
	if (e)
		return diag_err(d, path, "", "cannot write the scenario: %s", atomic_file_strerror(-e));
	return 0;
}
