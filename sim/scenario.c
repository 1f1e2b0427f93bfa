/* scenario: scenario file loader and plan checks (see scenario.h). */
#include "scenario.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "jload.h"
#include "coll.h"
#include "cost.h"
#include "placement.h"
#include "xalloc.h"

static const char *const rc_names[] = { "none", "selective", "full", NULL };
static const char *const opt_names[] = { "adam", NULL };

/* What the loader reads besides the plan and the meta. */
struct paths {
	char model[1024], topo[1024], profile[1024], out[1024];
	const struct cost_registry_entry *cost;
};

static void path_key(struct jobj *jo, const char *key, char *out, size_t n, int flags)
{
	const char *s;
	if (jobj_str(jo, key, &s, flags) != 1)
		return;
	if (jload_resolve(jo->file, s, out, n)) {
		jobj_err(jo, key, "path too long");
		return;
	}
	if (access(out, R_OK) != 0) {
		jobj_err(jo, key, "referenced file '%s' cannot be read (%s)", out, strerror(errno));
		out[0] = 0;
	}
}

static void load_parallel(struct jobj *root, struct plan *s)
{
	struct jobj jo;
	long x;
	int e;
	json_t *arr;
	char ap[300];

	if (jobj_child(root, "parallel", &jo, 0) != 1)
		return;
	x = 0;
	if (jobj_int(&jo, "dp", &x, 1, 0) == 1) {
		if (x > PLAN_MAX_GPUS)
			jobj_err(&jo, "dp", "expected at most %ld, got %ld", PLAN_MAX_GPUS, x);
		else
			s->dp = (int)x;
	}
	x = 1;
	if (jobj_int(&jo, "tp", &x, 1, 0) == 1) {
		if (x > PLAN_MAX_GPUS)
			jobj_err(&jo, "tp", "expected at most %ld, got %ld", PLAN_MAX_GPUS, x);
		else
			s->tp = (int)x;
	}
	x = 1;
	if (jobj_int(&jo, "pp", &x, 1, 0) == 1) {
		if (x > PLAN_MAX_STAGES)
			jobj_err(&jo, "pp", "expected at most %d stages, got %ld", PLAN_MAX_STAGES, x);
		else
			s->pp = (int)x;
	}
	jobj_bool(&jo, "sp", &s->sp, 0);
	x = 0;
	if (jobj_int(&jo, "zero", &x, 0, 0) == 1) {
		if (x > 3)
			jobj_err(&jo, "zero", "expected a ZeRO stage 0..3, got %ld", x);
		else
			s->zero = (enum zero_stage)x;
	}
	e = SCHED_1F1B;
	jobj_enum_table(&jo, "schedule", schedule_registry, sizeof(schedule_registry[0]), &e, 0);
	s->schedule = e;
	x = 1;
	if (jobj_int(&jo, "interleave", &x, 1, 0) == 1) {
		if (x > PLAN_MAX_STAGES)
			jobj_err(&jo, "interleave", "expected at most %d chunks, got %ld", PLAN_MAX_STAGES, x);
		else
			s->interleave = (int)x;
	}
	e = RECOMPUTE_NONE;
	jobj_enum(&jo, "recompute", rc_names, &e, 0);
	s->recompute = e;
	const char *ord;
	if (jobj_str(&jo, "order", &ord, 0) == 1) {
		struct placement pl;
		if (placement_init(&pl, 1, 1, 1, ord))
			jobj_err(&jo, "order", "expected a permutation of tp, dp, pp such as \"tp,dp,pp\", got '%s'", ord);
		else
			snprintf(s->order, sizeof(s->order), "%s", ord);
	}
	if (jobj_array(&jo, "stage_layers", &arr, ap, sizeof(ap), 0) == 1) {
		size_t i;
		json_t *v;
		if (json_array_size(arr) > PLAN_MAX_STAGES)
			diag_err(jo.d, jo.file, ap, "at most %d stages, got %zu",
				 PLAN_MAX_STAGES, json_array_size(arr));
		else {
			s->nstage_layers = (int)json_array_size(arr);
			json_array_foreach(arr, i, v) {
				if (!json_is_integer(v)) {
					diag_err(jo.d, jo.file, ap, "/%zu: expected a positive layer count, got %s",
						 i, jload_type_name(v));
					continue;
				}
				if (json_integer_value(v) < 1 || json_integer_value(v) > INT_MAX) {
					diag_err(jo.d, jo.file, ap, "/%zu: expected a positive layer count, got %lld",
						 i, (long long)json_integer_value(v));
					continue;
				}
				s->stage_layers[i] = (int)json_integer_value(v);
			}
		}
	}
	jobj_end(&jo);
}

/* Returns true if the training object was read. seq_len is checked
 * against the model later (required for transformers, refused for CNNs). */
static bool load_training(struct jobj *root, struct plan *s)
{
	struct jobj jo;
	int e;

	if (jobj_child(root, "training", &jo, JREQ) != 1)
		return false;
	if (jobj_int(&jo, "seq_len", &s->seq, 1, 0) < 0)
		s->seq = -1;  /* reported; not "missing" */
	jobj_int(&jo, "global_batch", &s->global_batch, 1, JREQ);
	jobj_int(&jo, "micro_batch", &s->micro_batch, 1, 0);
	e = DTYPE_BF16;
	jobj_enum(&jo, "precision", dtype_names, &e, 0);
	s->precision = e;
	/* gradients are reduced in the weights' dtype unless told otherwise */
	s->grad_dtype = e == DTYPE_TF32 ? DTYPE_FP32 : e == DTYPE_FP8 ? DTYPE_BF16 : e;
	if (jobj_enum(&jo, "grad_reduce_dtype", dtype_names, &e, 0) == 1) {
		if (e == DTYPE_TF32 || e == DTYPE_FP8)
			jobj_err(&jo, "grad_reduce_dtype", "expected one of {fp32, fp16, bf16}, got '%s'",
				 dtype_name(e));
		else
			s->grad_dtype = e;
	}
	/* fidelity keys (models/attention.h, models/precision.h, models/memory.h) */
	e = ATTN_FLASH;
	if (jobj_enum(&jo, "attention", attention_names, &e, 0) == 1) {
		s->attention = e;
		s->attention_set = true;
	}
	jobj_bool(&jo, "fp8_comm", &s->fp8_comm, 0);
	jobj_num(&jo, "memory_reserve", &s->memory_reserve, JNONNEG);
	e = 0;
	jobj_enum(&jo, "optimizer", opt_names, &e, 0);
	jobj_num(&jo, "train_tokens", &s->train_tokens, JNONNEG);
	jobj_end(&jo);
	return true;
}

static void load_misc(struct jobj *root, struct scenario *sc, struct paths *ps)
{
	struct jobj jo;
	const char *str;
	int e;
	json_t *arr;
	char ap[300];
	double mb;

	struct plan *s = &sc->plan;
	struct published *pub = &sc->meta.pub;

	if (jobj_child(root, "communication", &jo, 0) == 1) {
		if (jobj_str(&jo, "algorithm", &str, 0) == 1) {
			if (!coll_algo_find(str))
				jobj_err(&jo, "algorithm", "unknown collective algorithm '%s' (see 'ddlsim list')", str);
			else
				snprintf(s->coll_algo, sizeof(s->coll_algo), "%s", str);
		}
		if (jobj_num(&jo, "bucket_MB", &mb, JPOS) == 1) {
			if (mb < 0.1)
				jobj_err(&jo, "bucket_MB", "must be >= 0.1 (100 kB), got %g", mb);
			else
				s->bucket_bytes = mb * 1e6;
		}
		jobj_bool(&jo, "overlap_grad_reduce", &s->overlap_grad_reduce, 0);
		jobj_end(&jo);
	}
	if (jobj_child(root, "published", &jo, 0) == 1) {
		jobj_num(&jo, "tflops_per_gpu", &pub->tflops_per_gpu, JPOS);
		jobj_num(&jo, "iteration_time_s", &pub->iteration_s, JPOS);
		jobj_num(&jo, "tokens_per_s", &pub->tokens_per_s, JPOS);
		if (jobj_str(&jo, "source", &str, JREQ) == 1)
			pub->source = xstrdup(str);
		jobj_end(&jo);
	}
	if (jobj_child(root, "compute", &jo, 0) == 1) {
		e = 0;
		if (jobj_enum_table(&jo, "cost", cost_registry, sizeof(cost_registry[0]), &e, 0) == 1)
			ps->cost = &cost_registry[e];
		path_key(&jo, "profile", ps->profile, sizeof(ps->profile),
			 ps->cost->needs_profile ? JREQ : 0);
		jobj_end(&jo);
	}
	if (jobj_child(root, "simulation", &jo, 0) == 1) {
		e = FOLD_AUTO;
		jobj_enum(&jo, "fold", plan_fold_names, &e, 0);
		s->fold = e;
		jobj_end(&jo);
	}
	if (jobj_child(root, "cost", &jo, 0) == 1) {
		jobj_num(&jo, "usd_per_gpu_hour", &s->usd_per_gpu_hour, JNONNEG);
		jobj_end(&jo);
	}
	sc->want_json = sc->want_csv = true;
	if (jobj_child(root, "output", &jo, 0) == 1) {
		path_key(&jo, "dir", ps->out, sizeof(ps->out), 0);
		if (jobj_array(&jo, "formats", &arr, ap, sizeof(ap), 0) == 1) {
			size_t i;
			json_t *v;
			sc->want_json = sc->want_csv = false;
			if (json_array_size(arr) == 0)
				diag_err(jo.d, jo.file, ap, "expected at least one of \"json\", \"csv\", got an empty list");
			json_array_foreach(arr, i, v) {
				const char *f = json_is_string(v) ? json_string_value(v) : "";
				if (strcmp(f, "json") == 0)
					sc->want_json = true;
				else if (strcmp(f, "csv") == 0)
					sc->want_csv = true;
				else
					diag_err(jo.d, jo.file, ap, "/%zu: expected \"json\" or \"csv\", got %s%s%s",
						 i, json_is_string(v) ? "'" : "",
						 json_is_string(v) ? f : jload_type_name(v),
						 json_is_string(v) ? "'" : "");
			}
		}
		jobj_end(&jo);
	}
}

struct inputs_cache {
	struct inputs **in;
	int n;
	size_t cap;
};

struct inputs_cache *inputs_cache_create(void)
{
	return xcalloc(1, sizeof(struct inputs_cache));
}

void inputs_cache_destroy(struct inputs_cache *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->n; i++)
		inputs_destroy(c->in[i]);
	free(c->in);
	free(c);
}

static bool same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* The cached inputs for these paths, loading them on first use. */
static struct inputs *cache_get(struct inputs_cache *c, const char *model, const char *topo,
				const char *cost, const char *profile, struct diag *d)
{
	for (int i = 0; i < c->n; i++)
		if (!strcmp(inputs_model_path(c->in[i]), model) &&
		    !strcmp(inputs_topology_path(c->in[i]), topo) &&
		    !strcmp(cost_name(inputs_cost(c->in[i])), cost) &&
		    same(inputs_profile_path(c->in[i]), profile))
			return c->in[i];
	struct inputs *in = inputs_load(model, topo, cost, profile, d);
	if (!in)
		return NULL;
	XGROW(c->in, c->cap, (size_t)c->n + 1);
	c->in[c->n++] = in;
	return in;
}

struct scenario *scenario_load(const char *path, struct diag *d)
{
	json_t *root = jload_file(path, d);
	if (!root) {
		return NULL;
	}
	struct scenario *s = scenario_load_json(root, path, NULL, d);
	json_decref(root);
	return s;
}

struct scenario *scenario_load_json(json_t *root, const char *path, struct inputs_cache *cache,
				    struct diag *d)
{
	struct scenario *s = xcalloc(1, sizeof(*s));
	struct paths ps = { .cost = &cost_registry[0] };
	struct jobj jo;
	const char *str;
	long nodes = 0;
	int before = diag_count(d);

	s->meta.path = xstrdup(path);
	plan_init(&s->plan);
	if (jload_schema(root, path, d, "ddlsim.scenario", 1, 0))
		goto err;
	jobj_init(&jo, root, path, "", d);
	{
		const char *base = strrchr(path, '/');
		s->meta.name = xstrdup(base ? base + 1 : path);
		char *dot = strrchr(s->meta.name, '.');
		if (dot)
			*dot = 0;
	}
	if (jobj_str(&jo, "name", &str, 0) == 1) {
		free(s->meta.name);
		s->meta.name = xstrdup(str);
	}
	s->meta.description = xstrdup(jobj_str(&jo, "description", &str, 0) == 1 ? str : "");
	path_key(&jo, "model", ps.model, sizeof(ps.model), JREQ);
	path_key(&jo, "topology", ps.topo, sizeof(ps.topo), JREQ);
	if (jobj_int(&jo, "nodes", &nodes, 1, JREQ) == 1) {
		if (nodes > PLAN_MAX_GPUS)
			jobj_err(&jo, "nodes", "expected at most %ld nodes, got %ld", PLAN_MAX_GPUS, nodes);
		else
			s->plan.nodes = (int)nodes;
	}
	load_parallel(&jo, &s->plan);
	bool have_training = load_training(&jo, &s->plan);
	load_misc(&jo, s, &ps);
	jobj_end(&jo);
	s->out_dir = ps.out[0] ? xstrdup(ps.out) : xasprintf("out/%s", s->meta.name);

	if (ps.model[0] && ps.topo[0]) {
		const char *prof = ps.cost->needs_profile && ps.profile[0] ? ps.profile : NULL;
		if (cache) {
			s->in = cache_get(cache, ps.model, ps.topo, ps.cost->name, prof, d);
			s->in_borrowed = true;
		} else
			s->in = inputs_load(ps.model, ps.topo, ps.cost->name, prof, d);
	}
	const struct model *m = s->in ? inputs_model(s->in) : NULL;
	if (m && !model_arch(m)->sequence) {
		if (s->plan.seq > 0)
			diag_err(d, path, "/training/seq_len", "applies to transformer models only, "
				 "not to CNN model '%s'", m->name);
	} else if (have_training && s->plan.seq == 0)
		diag_err(d, path, "/training/seq_len", "missing required key 'seq_len'");
	if (diag_count(d) != before || !s->in)
		goto err;
	plan_resolve(&s->plan, s->in);
	if (plan_check(&s->plan, s->in, path, d))
		goto err;
	return s;
err:
	scenario_destroy(s);
	return NULL;
}

void scenario_meta_copy(struct scenario_meta *out, const struct scenario_meta *m)
{
	*out = *m;
	out->path = m->path ? xstrdup(m->path) : NULL;
	out->name = m->name ? xstrdup(m->name) : NULL;
	out->description = m->description ? xstrdup(m->description) : NULL;
	out->pub.source = m->pub.source ? xstrdup(m->pub.source) : NULL;
}

void scenario_meta_finish(struct scenario_meta *m)
{
	free(m->path);
	free(m->name);
	free(m->description);
	free(m->pub.source);
	memset(m, 0, sizeof(*m));
}

void scenario_destroy(struct scenario *s)
{
	if (!s)
		return;
	if (!s->in_borrowed)
		inputs_destroy(s->in);
	scenario_meta_finish(&s->meta);
	free(s->out_dir);
	free(s);
}
