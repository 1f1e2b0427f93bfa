/* scenario: scenario file loader and plan checks (see scenario.h); the
 * parallel object and the simulation object's lists are read in their own
 * files (scenario-private.h). */
#include "scenario.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "scenario-private.h"
#include "jload.h"
#include "coll.h"
#include "cost.h"
#include "framework.h"
#include "stack.h"
#include "xalloc.h"


static const char *const opt_names[] = { "adam", NULL };
/* training.master_weights (models/precision.h precision_master_remainders) */
static const char *const master_names[] = { "fp32", "remainders", NULL };
/* training.allocator, after the stack's (enum plan_allocator) */
static const char *const alloc_names[] = { "expandable", "native", NULL };

/* What the loader reads besides the plan and the meta. */
struct paths {
	char model[1024], topo[1024], profile[1024], out[1024];
	const struct cost_registry_entry *cost;
};

/* Read key as a path relative to the file; an input must be readable. */
static void path_key(struct jobj *jo, const char *key, char *out, size_t n, int flags)
{
	const char *s;
	if (jobj_str(jo, key, &s, flags | JPATH) != 1)
		return;
	if (jload_resolve(jo->file, s, out, n)) {
		jobj_err(jo, key, "path too long");
		return;
	}
	if (jload_check_ref(jo, key, out))
		out[0] = 0;
}

/* Returns true if the training object was read. seq_len is checked
 * against the model later (required for transformers, refused for CNNs). */
static bool load_training(struct jobj *root, struct plan *s)
{
	struct jobj jo;
	int e;

	if (jobj_child(root, "training", &jo, JREQ) != 1)
		return false;
	if (jobj_int(&jo, "seq_len", &s->training.seq, 1, 0) < 0)
		s->training.seq = -1;  /* reported; not "missing" */
	jobj_int(&jo, "global_batch", &s->training.global_batch, 1, JREQ);
	jobj_int(&jo, "micro_batch", &s->training.micro_batch, 1, 0);
	e = DTYPE_BF16;
	jobj_enum(&jo, "precision", dtype_names, &e, 0);
	s->training.precision = e;
	/* gradients are reduced in the weights' dtype unless told otherwise */
	s->training.grad_dtype = precision_weight_dtype(e);
	if (jobj_enum(&jo, "grad_reduce_dtype", dtype_names, &e, 0) == 1) {
		if (e == DTYPE_TF32 || dtype_is_te_low(e))
			jobj_err(&jo, "grad_reduce_dtype", "expected one of {fp32, fp16, bf16}, got '%s'",
				 dtype_name(e));
		else
			s->training.grad_dtype = e;
		s->given |= PLAN_GIVEN_GRAD_DTYPE;
	}
	/* fidelity keys (models/attention.h, models/precision.h, models/memory.h) */
	e = ATTN_FLASH;
	if (jobj_enum(&jo, "attention", attention_names, &e, 0) == 1) {
		s->training.attention = e;
		s->training.attention_set = true;
	}
	jobj_bool(&jo, "fp8_comm", &s->training.fp8_comm, 0);
	jobj_bool(&jo, "fp8_params", &s->training.fp8_params, 0);
	jobj_bool(&jo, "fp8_moe_act_cache", &s->training.fp8_moe_act_cache, 0);
	e = DTYPE_FP32;
	if (jobj_enum(&jo, "optimizer_state_dtype", dtype_names, &e, 0) == 1) {
		if (e != DTYPE_FP32 && e != DTYPE_BF16)
			jobj_err(&jo, "optimizer_state_dtype", "expected one of {fp32, bf16}, got '%s'",
				 dtype_name(e));
		s->training.bf16_moments = e == DTYPE_BF16;
	}
	e = 0;
	if (jobj_enum(&jo, "master_weights", master_names, &e, 0) == 1)
		s->training.master_remainders = e == 1;
	e = 0;
	if (jobj_enum(&jo, "allocator", alloc_names, &e, 0) == 1)
		s->training.allocator = e == 0 ? PLAN_ALLOC_EXPANDABLE : PLAN_ALLOC_NATIVE;
	jobj_num(&jo, "memory_reserve", &s->training.memory_reserve, JNONNEG);
	e = 0;
	jobj_enum(&jo, "optimizer", opt_names, &e, 0);
	jobj_num(&jo, "train_tokens", &s->training.train_tokens, JNONNEG);
	struct jobj ft;
	if (jobj_child(&jo, "finetune", &ft, 0) == 1) {
		finetune_load(&ft, &s->training.finetune);
		jobj_end(&ft);
	}
	struct jobj ip;
	if (jobj_child(&jo, "input_pipeline", &ip, 0) == 1) {
		input_pipeline_load(&ip, &s->training.input);
		jobj_end(&ip);
	}
	jobj_end(&jo);
	return true;
}

/* training.input_pipeline against the loaded inputs: a loader feeds a
 * CNN; the CPU loader needs the node's cores, DALI's default rate was
 * measured on an A100 only (models/input_pipeline.h). */
static void check_input(const struct plan *p, const struct inputs *in, const char *path, struct diag *d)
{
	const struct input_pipeline *ip = &p->training.input;
	const struct topology *t = inputs_topology(in);

	if (ip->loader == INPUT_NONE)
		return;
	if (inputs_model(in)->arch != MODEL_ARCH_CNN) {
		diag_err(d, path, "/training/input_pipeline/loader", "a data loader needs a cnn model, "
			 "model '%s' is not one", inputs_model(in)->name);
		return;
	}
	if (ip->loader == INPUT_PYTORCH_PIL && ip->cpu_cores == 0 && t->node_cpu_cores == 0)
		diag_err(d, path, "/training/input_pipeline/cpu_cores", "missing required key 'cpu_cores': "
			 "topology '%s' does not give node.cpu_cores", t->name);
	if (ip->loader == INPUT_DALI_GPU && ip->gpu_img_per_s == 0 && !strstr(t->gpu.name, "A100"))
		diag_err(d, path, "/training/input_pipeline/gpu_img_per_s", "missing required key "
			 "'gpu_img_per_s': DALI's measured rate is an A100's, the GPU is '%s'", t->gpu.name);
}

/* node_groups and node_order (plan.h): a mixed cluster; minor: the
 * file's schema minor version (power_cap_W: 1.2). Returns the groups'
 * node count (0: none). */
static long load_groups(struct jobj *root, struct plan *s, int minor)
{
	json_t *arr, *v;
	char ap[300];
	size_t i;
	long sum = 0;
	int e = NODE_ORDER_LISTED;

	if (jobj_enum(root, "node_order", plan_node_order_names, &e, 0) == 1)
		s->node_order = e;
	if (jobj_array(root, "node_groups", &arr, ap, sizeof(ap), 0) != 1)
		return 0;
	if (json_array_size(arr) == 0 || json_array_size(arr) > PLAN_MAX_NODE_GROUPS) {
		diag_err(root->d, root->file, ap, "expected 1 to %d node groups, got %zu",
			 PLAN_MAX_NODE_GROUPS, json_array_size(arr));
		return 0;
	}
	json_array_foreach(arr, i, v) {
		struct jobj jo;
		char ep[340], path[1024];
		long n = 0;
		const char *str;
		snprintf(ep, sizeof(ep), "%s/%zu", ap, i);
		if (jobj_init(&jo, v, root->file, ep, root->d))
			continue;
		struct plan_node_group *g = &s->group[s->ngroups];
		int ok = jobj_int(&jo, "nodes", &n, 1, JREQ) == 1;
		if (ok && n > PLAN_MAX_GPUS) {
			jobj_err(&jo, "nodes", "expected at most %ld nodes, got %ld", PLAN_MAX_GPUS, n);
			ok = 0;
		}
		if (jobj_str(&jo, "gpu", &str, JREQ | JPATH) == 1) {
			if (jload_resolve(jo.file, str, path, sizeof(path))) {
				jobj_err(&jo, "gpu", "path too long");
				ok = 0;
			} else if (jload_check_ref(&jo, "gpu", path)) {
				ok = 0;
			} else if (topology_gpu_preset_load(path, &g->gpu, jo.d))
				ok = 0;
		} else
			ok = 0;
		double cap;
		char why[256];
		if (jobj_num(&jo, "power_cap_W", &cap, JPOS) == 1) {
			if (minor < 2) {
				jobj_err(&jo, "power_cap_W", "needs schema_version \"1.2\", the file says "
					 "\"1.%d\"", minor);
				ok = 0;
			} else if (ok && topology_gpu_cap_check(&g->gpu, cap, why, sizeof(why))) {
				jobj_err(&jo, "power_cap_W", "%s (GPU '%s')", why, g->gpu.name);
				ok = 0;
			} else if (ok)
				g->gpu.power_cap_W = cap;
		}
		jobj_end(&jo);
		if (ok) {
			g->nodes = (int)n;
			sum += n;
			s->ngroups++;
		}
	}
	return sum;
}

/* The communication block: the collective algorithm, buckets and overlaps. */
static void load_communication(struct jobj *root, struct scenario *sc)
{
	struct jobj jo;
	const char *str;
	double mb;
	struct plan *s = &sc->plan;

	if (jobj_child(root, "communication", &jo, 0) != 1)
		return;
	if (jobj_str(&jo, "algorithm", &str, 0) == 1) {
		if (!coll_algo_find(str))
			jobj_err(&jo, "algorithm", "unknown collective algorithm '%s' (see 'ddlsim list')", str);
		else
			snprintf(s->communication.coll_algo, sizeof(s->communication.coll_algo), "%s", str);
	}
	if (jobj_num(&jo, "bucket_MB", &mb, JPOS) == 1) {
		if (mb < 0.1)
			jobj_err(&jo, "bucket_MB", "must be >= 0.1 (100 kB), got %g", mb);
		else
			s->communication.bucket_bytes = mb * 1e6;
		s->given |= PLAN_GIVEN_BUCKET;
	}
	if (jobj_bool(&jo, "overlap_grad_reduce", &s->communication.overlap_grad_reduce, 0) == 1)
		s->given |= PLAN_GIVEN_OVERLAP_GRAD;
	if (jobj_bool(&jo, "overlap_param_gather", &s->communication.overlap_param_gather, 0) == 1)
		s->given |= PLAN_GIVEN_OVERLAP_PARAM;
	jobj_bool(&jo, "apex_contiguous_buffers", &s->communication.apex_contiguous_buffers, 0);
	jobj_bool(&jo, "tp_comm_overlap", &s->communication.tp_comm_overlap, 0);
	struct jobj mj;
	if (jobj_child(&jo, "tp_comm_overlap_sm_margin", &mj, 0) == 1) {
		jobj_int(&mj, "proj_fprop", &s->communication.tp_rs_margin_sms[0], 0, 0);
		jobj_int(&mj, "fc2_fprop", &s->communication.tp_rs_margin_sms[1], 0, 0);
		jobj_end(&mj);
	}
	jobj_end(&jo);
}

/* The published block: the run's own figures, for validation only. */
static void load_published(struct jobj *root, struct scenario *sc)
{
	struct jobj jo;
	const char *str;
	struct published *pub = &sc->meta.pub;

	if (jobj_child(root, "published", &jo, 0) != 1)
		return;
	jobj_num(&jo, "tflops_per_gpu", &pub->tflops_per_gpu, JPOS);
	jobj_num(&jo, "model_tflops_per_gpu", &pub->model_tflops_per_gpu, JPOS);
	if (jobj_num(&jo, "mfu", &pub->mfu, JPOS) == 1 && pub->mfu > 1) {
		jobj_err(&jo, "mfu", "expected a fraction in (0, 1], got %g", pub->mfu);
		pub->mfu = 0;
	}
	jobj_num(&jo, "iteration_time_s", &pub->iteration_s, JPOS);
	jobj_num(&jo, "tokens_per_s", &pub->tokens_per_s, JPOS);
	double gib;
	if (jobj_num(&jo, "peak_memory_GiB", &gib, JPOS) == 1)
		pub->peak_memory_bytes = gib * 1073741824.0;
	int mm = 0;
	if (jobj_enum(&jo, "memory_measure", pub_memory_names, &mm, 0) == 1) {
		pub->memory_measure = (enum pub_memory)mm;
		if (!(pub->peak_memory_bytes > 0))
			jobj_err(&jo, "memory_measure", "says what published.peak_memory_GiB counts, "
				 "but the block publishes no peak_memory_GiB");
	}
	if (jobj_str(&jo, "source", &str, JREQ) == 1)
		pub->source = xstrdup(str);
	jobj_end(&jo);
}

/* The compute block: the cost source and its profile, the kernel stack, attention backend and host issue. */
static void load_compute(struct jobj *root, struct scenario *sc, struct paths *ps)
{
	struct jobj jo;
	int e;
	struct plan *s = &sc->plan;

	if (jobj_child(root, "compute", &jo, 0) != 1)
		return;
	e = 0;
	if (jobj_enum_table(&jo, "cost", cost_registry, sizeof(cost_registry[0]), &e, 0) == 1)
		ps->cost = &cost_registry[e];
	/* a profile the cost source does not read would be ignored */
	if (!ps->cost->needs_profile && jobj_has(&jo, "profile"))
		jobj_err(&jo, "profile", "is read only with \"cost\": \"profile\", got \"cost\": \"%s\"%s: "
			 "set cost to \"profile\" to price the kernels from it, or drop the key",
			 ps->cost->name, json_object_get(jo.o, "cost") ? "" : " (the default)");
	else
		path_key(&jo, "profile", ps->profile, sizeof(ps->profile),
			 ps->cost->needs_profile ? JREQ : 0);
	e = 0;
	if (jobj_enum_table(&jo, "stack", stack_table, sizeof(stack_table[0]), &e, 0) == 1) {
		s->compute.stack = e;
		s->compute.stack_set = true;
	}
	e = 0;
	if (jobj_enum(&jo, "attention_backend", attn_backend_names, &e, 0) == 1)
		s->compute.attn_backend_set = (int)e;
	jobj_bool(&jo, "cuda_graphs", &s->compute.cuda_graphs, 0);
	static const char *const issue[] = { "host_issue_fwd_us", "host_issue_bwd_us" };
	for (int i = 0; i < 2; i++)
		if (jobj_num(&jo, issue[i], &s->compute.host_issue_us[i], JNONNEG) == 1 && s->compute.cuda_graphs)
			jobj_err(&jo, issue[i], "is never read with cuda_graphs true (a graph replays the "
				 "kernels without the host issuing each): drop the key or set cuda_graphs false, "
				 "got %g us", s->compute.host_issue_us[i]);
	jobj_bool(&jo, "launch_blocking", &s->compute.launch_blocking, 0);
	jobj_end(&jo);
}

/* The moe block: routing and capacity. */
static void load_moe(struct jobj *root, struct scenario *sc)
{
	struct jobj jo;
	int e;
	struct plan *s = &sc->plan;

	if (jobj_child(root, "moe", &jo, 0) != 1)
		return;
	e = 0;
	if (jobj_enum(&jo, "routing", moe_dist_names, &e, 0) == 1) {
		s->moe.dist = e;
		s->given |= PLAN_GIVEN_MOE_DIST;
	}
	if (jobj_num(&jo, "zipf_s", &s->moe.zipf_s, JNONNEG) == 1)
		s->given |= PLAN_GIVEN_MOE_ZIPF;
	if (jobj_num(&jo, "capacity_factor", &s->moe.capacity_factor, JNONNEG) == 1)
		s->given |= PLAN_GIVEN_MOE_CAPACITY;
	jobj_end(&jo);
}

/* The simulation block: folding, iterations, stragglers, degraded links, throttling, engine switches. */
static void load_simulation(struct jobj *root, struct scenario *sc)
{
	struct jobj jo;
	int e;
	struct plan *s = &sc->plan;

	if (jobj_child(root, "simulation", &jo, 0) != 1)
		return;
	e = FOLD_AUTO;
	jobj_enum(&jo, "fold", plan_fold_names, &e, 0);
	s->simulation.fold = e;
	jobj_int_at_most(&jo, "iterations", 1, PLAN_MAX_ITERATIONS, "iterations", &s->simulation.iterations);
	scenario_load_stragglers(&jo, s);
	scenario_load_degraded(&jo, s);
	scenario_load_throttle(&jo, s);
	jobj_bool(&jo, "sensitivity", &s->simulation.sensitivity, 0);
	jobj_bool(&jo, "collective_pairs", &s->simulation.collective_pairs, 0);
	jobj_bool(&jo, "separate_streams", &s->simulation.separate_streams, 0);
	jobj_bool(&jo, "collective_flows", &s->simulation.collective_flows, 0);
	e = LINK_TRAFFIC_EXACT;
	jobj_enum(&jo, "link_traffic", plan_link_traffic_names, &e, 0);
	s->simulation.link_traffic = e;
	jobj_end(&jo);
}

/* The cost block. */
static void load_cost(struct jobj *root, struct scenario *sc)
{
	struct jobj jo;
	struct plan *s = &sc->plan;

	if (jobj_child(root, "cost", &jo, 0) != 1)
		return;
	jobj_num(&jo, "usd_per_gpu_hour", &s->cost.usd_per_gpu_hour, JNONNEG);
	jobj_end(&jo);
}

/* The output block: the directory and formats (json and csv unless told). */
static void load_output(struct jobj *root, struct scenario *sc, struct paths *ps)
{
	struct jobj jo;
	const char *str;
	json_t *arr;
	char ap[300];

	sc->want_json = sc->want_csv = true;
	sc->want_svg = sc->want_html = false;
	if (jobj_child(root, "output", &jo, 0) != 1)
		return;
	/* an output directory is created when the reports are written */
	if (jobj_str(&jo, "dir", &str, JPATH) == 1 && jload_resolve(jo.file, str, ps->out, sizeof(ps->out)))
		jobj_err(&jo, "dir", "path too long");
	if (jobj_array(&jo, "formats", &arr, ap, sizeof(ap), 0) == 1) {
		size_t i;
		json_t *v;
		sc->want_json = sc->want_csv = false;
		if (json_array_size(arr) == 0)
			diag_err(jo.d, jo.file, ap, "expected at least one of \"json\", \"csv\", \"svg\", \"html\", got an empty list");
		json_array_foreach(arr, i, v) {
			const char *f = json_is_string(v) ? json_string_value(v) : "";
			if (strcmp(f, "json") == 0)
				sc->want_json = true;
			else if (strcmp(f, "csv") == 0)
				sc->want_csv = true;
			else if (strcmp(f, "svg") == 0)
				sc->want_svg = true;
			else if (strcmp(f, "html") == 0)
				sc->want_html = true;
			else
				diag_err(jo.d, jo.file, ap, "/%zu: expected \"json\", \"csv\", \"svg\" or \"html\", got %s%s%s",
					 i, json_is_string(v) ? "'" : "",
					 json_is_string(v) ? f : jload_type_name(v),
					 json_is_string(v) ? "'" : "");
		}
	}
	jobj_end(&jo);
}

static void load_misc(struct jobj *root, struct scenario *sc, struct paths *ps)
{
	load_communication(root, sc);
	load_published(root, sc);
	load_compute(root, sc, ps);
	load_moe(root, sc);
	load_simulation(root, sc);
	load_cost(root, sc);
	load_output(root, sc, ps);
	scenario_load_goal(root, &sc->meta, &sc->plan);
}

/* Values that are valid but most likely a mistake: warnings, with the unit. */
static void warn_plausibility(const struct scenario *s, struct diag *d)
{
	const struct plan *p = &s->plan;
	const struct topology *t = inputs_topology(s->in);
	const struct model *m = inputs_model(s->in);

	if (p->communication.bucket_bytes > 10e9)
		diag_warn(d, s->meta.path, "/communication/bucket_MB", "%g MB is %g GB per gradient bucket; "
			  "the unit is MB (1e6 bytes), not bytes", p->communication.bucket_bytes / 1e6,
			  p->communication.bucket_bytes / 1e9);
	if (p->parallel.tp > t->gpus_per_node)
		diag_warn(d, s->meta.path, "/parallel/tp", "tp = %d spans %d nodes of %d GPUs: every "
			  "tensor-parallel collective crosses the inter-node fabric", p->parallel.tp,
			  (p->parallel.tp + t->gpus_per_node - 1) / t->gpus_per_node, t->gpus_per_node);
	if (model_arch(m)->model_parallel && p->parallel.tp > 1 && m->kv_heads % p->parallel.tp)
		diag_warn(d, s->meta.path, "/parallel/tp", "tp = %d does not divide the model's %ld KV heads: "
			  "each KV head is replicated on %ld ranks", p->parallel.tp, m->kv_heads,
			  p->parallel.tp / m->kv_heads);
}

/* "megatron-core, nemo, ..." (static buffer: one message at a time). */
static const char *known_names(void)
{
	static char buf[256];
	size_t n = 0;
	buf[0] = 0;
	for (const struct framework *f = framework_table; f->name; f++) {
		if (f != framework_table && strcmp(f->name, f[-1].name) == 0)
			continue;
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", n ? ", " : "", f->name);
		if (n >= sizeof(buf))
			break;
	}
	return buf;
}

/* The versions listed for spec's framework name, "0.9, 0.8". */
static const char *known_versions(const char *spec)
{
	static char buf[256];
	size_t n = 0, len = strcspn(spec, "@");
	buf[0] = 0;
	for (const struct framework *f = framework_table; f->name; f++) {
		if (strlen(f->name) != len || strncmp(f->name, spec, len))
			continue;
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", n ? ", " : "", f->version);
		if (n >= sizeof(buf))
			break;
	}
	return buf;
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
				const char *cost, const char *profile, int used, const char *file,
				struct diag *d)
{
	for (int i = 0; i < c->n; i++)
		if (inputs_topology(c->in[i])->gpus_per_node ==
			    (used ? used : inputs_topology(c->in[i])->gpus_per_node_physical) &&
		    !strcmp(inputs_model_path(c->in[i]), model) &&
		    !strcmp(inputs_topology_path(c->in[i]), topo) &&
		    !strcmp(cost_name(inputs_cost(c->in[i])), cost) &&
		    same(inputs_profile_path(c->in[i]), profile))
			return c->in[i];
	struct inputs *in = inputs_load_gpus(model, topo, cost, profile, used, file, d);
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

/* The scenario's name (the file's base name unless "name" says) and description. */
static void load_meta(struct jobj *jo, struct scenario *s, const char *path)
{
	const char *str;
	const char *base = strrchr(path, '/');

	s->meta.name = xstrdup(base ? base + 1 : path);
	char *dot = strrchr(s->meta.name, '.');
	if (dot)
		*dot = 0;
	if (jobj_str(jo, "name", &str, JFILENAME) == 1) {
		free(s->meta.name);
		s->meta.name = xstrdup(str);
	}
	s->meta.description = xstrdup(jobj_str(jo, "description", &str, 0) == 1 ? str : "");
}

/* node_groups and nodes: the node count comes from the groups unless "nodes" is given. */
static void load_nodes(struct jobj *jo, struct plan *p, int minor)
{
	long nodes = 0;
	long group_nodes = load_groups(jo, p, minor);

	if (jobj_has(jo, "node_groups") && !jobj_has(jo, "nodes"))
		p->nodes = (int)group_nodes;
	else if (jobj_int(jo, "nodes", &nodes, 1, JREQ) == 1) {
		if (nodes > PLAN_MAX_GPUS)
			jobj_err(jo, "nodes", "expected at most %ld nodes, got %ld", PLAN_MAX_GPUS, nodes);
		else
			p->nodes = (int)nodes;
	}
}

/* "framework": a name, or name@version, from framework_table. */
static void load_framework(struct jobj *jo, struct plan *p)
{
	const char *str;
	bool known;

	if (jobj_str(jo, "framework", &str, 0) != 1)
		return;
	const struct framework *fw = framework_find(str, &known);
	if (fw)
		p->framework = framework_index(fw);
	else if (known)
		jobj_err(jo, "framework", "unknown version of framework '%.*s', got '%s' (known: %s)",
			 (int)strcspn(str, "@"), str, str, known_versions(str));
	else
		jobj_err(jo, "framework", "unknown framework '%s' (known: %s)", str, known_names());
}

/* Loads the model, topology and cost inputs, from the cache when there is one. */
static void load_inputs(struct scenario *s, const struct paths *ps, struct inputs_cache *cache,
			int used, const char *path, struct diag *d)
{
	if (!ps->model[0] || !ps->topo[0])
		return;
	const char *prof = ps->cost->needs_profile && ps->profile[0] ? ps->profile : NULL;
	if (cache) {
		s->in = cache_get(cache, ps->model, ps->topo, ps->cost->name, prof, used, path, d);
		s->in_borrowed = true;
	} else
		s->in = inputs_load_gpus(ps->model, ps->topo, ps->cost->name, prof, used, path, d);
}

/* training.seq_len against the loaded model: none for a CNN, the image's tokens for a ViT. */
static void check_seq(struct scenario *s, bool have_training, const char *path, struct diag *d)
{
	const struct model *m = s->in ? inputs_model(s->in) : NULL;

	if (m && !model_arch(m)->sequence) {
		if (s->plan.training.seq > 0)
			diag_err(d, path, "/training/seq_len", "applies to transformer models only, "
				 "not to CNN model '%s'", m->name);
	} else if (m && model_is_vit(m)) {     /* a ViT's tokens follow from its image */
		long vs = model_vit_seq(m);
		if (s->plan.training.seq > 0 && s->plan.training.seq != vs)
			diag_err(d, path, "/training/seq_len", "must be left out or equal the %ld tokens "
				 "of vit model '%s' ((image_size / patch_size)^2 + 1), got %ld", vs,
				 m->name, s->plan.training.seq);
		else
			s->plan.training.seq = vs;
	} else if (m && have_training && s->plan.training.seq == 0)
		/* only a loaded model says whether it has a sequence: when the
		 * inputs failed (a bad profile, topology or model, reported
		 * already), a CNN scenario must not be told it lacks seq_len */
		diag_err(d, path, "/training/seq_len", "missing required key 'seq_len'");
}

struct scenario *scenario_load_json(json_t *root, const char *path, struct inputs_cache *cache,
				    struct diag *d)
{
	struct scenario *s = xcalloc(1, sizeof(*s));
	struct paths ps = { .cost = &cost_registry[0] };
	struct jobj jo;
	int before = diag_count(d);

	s->meta.path = xstrdup(path);
	plan_init(&s->plan);
	if (jload_schema(root, path, d, "ddlsim.scenario", 1, SCENARIO_SCHEMA_MINOR))
		goto err;
	int minor = 0;
	sscanf(json_string_value(json_object_get(root, "schema_version")), "%*d.%d", &minor);
	jobj_init(&jo, root, path, "", d);
	load_meta(&jo, s, path);
	path_key(&jo, "model", ps.model, sizeof(ps.model), JREQ);
	path_key(&jo, "topology", ps.topo, sizeof(ps.topo), JREQ);
	long used = 0;
	jobj_int(&jo, "gpus_per_node_used", &used, 1, 0);
	load_nodes(&jo, &s->plan, minor);
	load_framework(&jo, &s->plan);
	scenario_load_parallel(&jo, &s->plan);
	bool have_training = load_training(&jo, &s->plan);
	load_misc(&jo, s, &ps);
	jobj_end(&jo);
	s->out_dir = ps.out[0] ? xstrdup(ps.out) : xasprintf("out/%s", s->meta.name);

	load_inputs(s, &ps, cache, (int)used, path, d);
	check_seq(s, have_training, path, d);
	if (s->in && have_training)
		check_input(&s->plan, s->in, path, d);
	if (diag_count(d) != before || !s->in)
		goto err;
	plan_resolve(&s->plan, s->in);
	if (plan_check(&s->plan, s->in, path, d) ||
	    plan_check_train_time(&s->plan, s->in, path, "/training/train_tokens", d))
		goto err;
	warn_plausibility(s, d);
	return s;
err:
	scenario_destroy(s);
	return NULL;
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
