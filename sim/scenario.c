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

static const char *const sched_names[] = { "gpipe", "1f1b", "interleaved", NULL };
static const char *const rc_names[] = { "none", "selective", "full", NULL };
static const char *const opt_names[] = { "adam", NULL };
static const char *const fold_names[] = { "auto", "on", "off", NULL };
static const char *const cost_names[] = { "roofline", "profile", NULL };

long scenario_microbatches(const struct scenario *s)
{
	return s->global_batch / ((long)s->dp * s->micro_batch);
}

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

static void load_parallel(struct jobj *root, struct scenario *s, long *dp_in)
{
	struct jobj jo;
	long x;
	int e;
	json_t *arr;
	char ap[300];

	s->tp = s->pp = 1;
	s->interleave = 1;
	s->schedule = SCHED_1F1B;
	snprintf(s->order, sizeof(s->order), "tp,dp,pp");
	if (jobj_child(root, "parallel", &jo, 0) != 1)
		return;
	jobj_int(&jo, "dp", dp_in, 1, 0);
	x = 1;
	if (jobj_int(&jo, "tp", &x, 1, 0) == 1)
		s->tp = (int)x;
	x = 1;
	if (jobj_int(&jo, "pp", &x, 1, 0) == 1)
		s->pp = (int)x;
	jobj_bool(&jo, "sp", &s->sp, 0);
	x = 0;
	if (jobj_int(&jo, "zero", &x, 0, 0) == 1) {
		if (x > 3)
			jobj_err(&jo, "zero", "expected a ZeRO stage 0..3, got %ld", x);
		else
			s->zero = (enum zero_stage)x;
	}
	e = SCHED_1F1B;
	jobj_enum(&jo, "schedule", sched_names, &e, 0);
	s->schedule = e;
	x = 1;
	if (jobj_int(&jo, "interleave", &x, 1, 0) == 1)
		s->interleave = (int)x;
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
		if (json_array_size(arr) > SCENARIO_MAX_STAGES)
			diag_err(jo.d, jo.file, ap, "at most %d stages, got %zu",
				 SCENARIO_MAX_STAGES, json_array_size(arr));
		else {
			s->explicit_stages = true;
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
			if ((long)json_array_size(arr) != s->pp)
				diag_err(jo.d, jo.file, ap, "expected one layer count per pipeline stage (pp = %d), got %zu",
					 s->pp, json_array_size(arr));
		}
	}
	jobj_end(&jo);
}

/* Returns true if the training object was read. seq_len is checked
 * against the model later (required for transformers, refused for CNNs). */
static bool load_training(struct jobj *root, struct scenario *s)
{
	struct jobj jo;
	int e;

	s->micro_batch = 1;
	s->precision = DTYPE_BF16;
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
	s->memory_reserve = 0.05;
	if (jobj_num(&jo, "memory_reserve", &s->memory_reserve, JNONNEG) == 1 &&
	    s->memory_reserve >= 0.5)
		jobj_err(&jo, "memory_reserve", "expected a fraction of HBM below 0.5, got %g",
			 s->memory_reserve);
	e = 0;
	jobj_enum(&jo, "optimizer", opt_names, &e, 0);
	jobj_num(&jo, "train_tokens", &s->train_tokens, JNONNEG);
	jobj_end(&jo);
	return true;
}

static void load_misc(struct jobj *root, struct scenario *s)
{
	struct jobj jo;
	const char *str;
	int e;
	json_t *arr;
	char ap[300];
	double mb;

	snprintf(s->coll_algo, sizeof(s->coll_algo), "auto");
	s->bucket_bytes = 25e6;
	s->overlap_grad_reduce = true;
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
		jobj_num(&jo, "tflops_per_gpu", &s->pub_tflops, JPOS);
		jobj_num(&jo, "iteration_time_s", &s->pub_iteration_s, JPOS);
		jobj_num(&jo, "tokens_per_s", &s->pub_tokens_per_s, JPOS);
		if (jobj_str(&jo, "source", &str, JREQ) == 1)
			snprintf(s->pub_source, sizeof(s->pub_source), "%s", str);
		jobj_end(&jo);
	}
	if (jobj_child(root, "compute", &jo, 0) == 1) {
		e = COST_ROOFLINE;
		jobj_enum(&jo, "cost", cost_names, &e, 0);
		s->cost = e;
		path_key(&jo, "profile", s->profile_path, sizeof(s->profile_path),
			 e == COST_PROFILE ? JREQ : 0);
		jobj_end(&jo);
	}
	if (jobj_child(root, "simulation", &jo, 0) == 1) {
		e = FOLD_AUTO;
		jobj_enum(&jo, "fold", fold_names, &e, 0);
		s->fold = e;
		jobj_end(&jo);
	}
	if (jobj_child(root, "cost", &jo, 0) == 1) {
		jobj_num(&jo, "usd_per_gpu_hour", &s->usd_per_gpu_hour, JNONNEG);
		jobj_end(&jo);
	}
	s->want_json = s->want_csv = true;
	if (jobj_child(root, "output", &jo, 0) == 1) {
		path_key(&jo, "dir", s->out_dir, sizeof(s->out_dir), 0);
		if (jobj_array(&jo, "formats", &arr, ap, sizeof(ap), 0) == 1) {
			size_t i;
			json_t *v;
			s->want_json = s->want_csv = false;
			if (json_array_size(arr) == 0)
				diag_err(jo.d, jo.file, ap, "expected at least one of \"json\", \"csv\", got an empty list");
			json_array_foreach(arr, i, v) {
				const char *f = json_is_string(v) ? json_string_value(v) : "";
				if (strcmp(f, "json") == 0)
					s->want_json = true;
				else if (strcmp(f, "csv") == 0)
					s->want_csv = true;
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

/* A CNN trains with data parallelism only: one replica per GPU. */
static void check_cnn_plan(struct scenario *s, long dp_in, struct diag *d)
{
	const char *f = s->path;

	if (s->tp > 1)
		diag_err(d, f, "/parallel/tp", "CNN models train with data parallelism only, got tp = %d", s->tp);
	if (s->pp > 1)
		diag_err(d, f, "/parallel/pp", "CNN models train with data parallelism only, got pp = %d", s->pp);
	if (s->zero != ZERO_0)
		diag_err(d, f, "/parallel/zero", "ZeRO is not supported for CNN models, got zero = %d", (int)s->zero);
	if (s->sp)
		diag_err(d, f, "/parallel/sp", "sequence parallelism does not apply to CNN models");
	if (s->recompute != RECOMPUTE_NONE)
		diag_err(d, f, "/parallel/recompute", "recomputation is not supported for CNN models, got '%s'",
			 recompute_name(s->recompute));
	if (s->attention_set)
		diag_err(d, f, "/training/attention", "applies to transformer models only");
	if (s->precision == DTYPE_FP8)
		diag_err(d, f, "/training/precision", "fp8 (Transformer Engine) applies to transformer models only");
	s->dp = s->gpus;
	if (dp_in > 0 && dp_in != s->dp)
		diag_err(d, f, "/parallel/dp", "must equal the %d GPUs for a CNN model, got %ld", s->gpus, dp_in);
	long div = (long)s->dp * s->micro_batch;
	if (s->global_batch > 0 && s->global_batch % div)
		diag_err(d, f, "/training/global_batch", "must be divisible by dp x micro_batch = %d x %ld = %ld, got %ld",
			 s->dp, s->micro_batch, div, s->global_batch);
}

/* The precision against the GPU: tf32 and fp8 need tensor cores for them. */
static void check_precision(struct scenario *s, struct diag *d)
{
	const struct gpu_spec *g = &s->topo->gpu;

	if ((s->precision == DTYPE_TF32 || s->precision == DTYPE_FP8) &&
	    g->peak_flops[s->precision] <= 0)
		diag_err(d, s->path, "/training/precision", "%s needs a GPU with %s tensor cores, "
			 "but GPU '%s' of topology '%s' has no %s peak", dtype_name(s->precision),
			 dtype_name(s->precision), g->name, s->topo->name, dtype_name(s->precision));
	if (s->fp8_comm && s->precision != DTYPE_FP8)
		diag_err(d, s->path, "/training/fp8_comm", "needs precision \"fp8\", got \"%s\"",
			 dtype_name(s->precision));
}

/* The attention kernel: flash by default where the GPU has one and the
 * precision is 16-bit or fp8 (FlashAttention has no fp32 kernels). */
static void check_attention(struct scenario *s, struct diag *d)
{
	const struct gpu_spec *g = &s->topo->gpu;
	bool full = s->precision == DTYPE_FP32 || s->precision == DTYPE_TF32;

	if (!s->attention_set) {
		s->attention = full ? ATTN_UNFUSED : attention_default(g);
		return;
	}
	if (s->attention != ATTN_FLASH)
		return;
	if (!gpu_has_flash(g))
		diag_err(d, s->path, "/training/attention", "flash needs a GPU with a fused attention "
			 "kernel (Ampere or later: the topology's gpu.efficiency.flash_fwd_max), "
			 "GPU '%s' has none", g->name);
	else if (full)
		diag_err(d, s->path, "/training/attention", "flash needs precision fp16, bf16 or fp8, "
			 "got \"%s\"", dtype_name(s->precision));
}

/* Checks across files: the plan against the cluster, model and batch. */
static void check_plan(struct scenario *s, long dp_in, struct diag *d)
{
	const char *f = s->path;
	const struct model *m = s->model;
	const struct topology *t = s->topo;
	long gpus = (long)s->nodes * t->gpus_per_node;

	if (gpus > 1000000) {
		diag_err(d, f, "/nodes", "at most 1000000 GPUs are supported, got %d nodes x %d GPUs = %ld",
			 s->nodes, t->gpus_per_node, gpus);
		return;
	}
	s->gpus = (int)gpus;
	{
		struct diag inner;
		diag_init(&inner, NULL);
		if (topology_check_nodes(t, s->nodes, &inner))
			diag_err(d, f, "/nodes", "%d nodes do not fit topology '%s': %s", s->nodes, t->name,
				 strstr(diag_text(&inner), "error: ") ? strstr(diag_text(&inner), "error: ") + 7
								       : diag_text(&inner));
		diag_finish(&inner);
	}
	if (s->nodes > 1 && t->nics < 1)
		diag_err(d, f, "/nodes", "%d nodes need NICs, but topology '%s' has none",
			 s->nodes, t->name);
	check_precision(s, d);
	if (m->arch == MODEL_ARCH_CNN) {
		check_cnn_plan(s, dp_in, d);
		return;
	}
	check_attention(s, d);
	if (gpus % ((long)s->tp * s->pp)) {
		diag_err(d, f, "/parallel", "tp x pp = %d x %d = %d must divide the %ld GPUs "
			 "(%d nodes x %d GPUs)", s->tp, s->pp, s->tp * s->pp, gpus, s->nodes,
			 t->gpus_per_node);
		return;
	}
	s->dp = (int)(gpus / ((long)s->tp * s->pp));
	if (dp_in > 0 && dp_in != s->dp) {
		diag_err(d, f, "/parallel/dp", "dp x tp x pp must equal the %ld GPUs (%d nodes x %d GPUs): "
			 "%ld x %d x %d = %ld", gpus, s->nodes, t->gpus_per_node, dp_in, s->tp, s->pp,
			 dp_in * s->tp * s->pp);
		return;
	}
	if (m->heads % s->tp)
		diag_err(d, f, "/parallel/tp", "must divide the model's %ld attention heads, got %d",
			 m->heads, s->tp);
	else if (m->kv_heads % s->tp && s->tp % m->kv_heads)
		diag_err(d, f, "/parallel/tp", "must divide or be a multiple of the model's %ld KV heads, got %d",
			 m->kv_heads, s->tp);
	if (m->ffn % s->tp)
		diag_err(d, f, "/parallel/tp", "must divide the FFN size %ld, got %d", m->ffn, s->tp);
	/* a vocabulary not divisible by tp is fine: Megatron pads it */
	if (s->sp && s->tp < 2)
		diag_err(d, f, "/parallel/sp", "sequence parallelism needs tp > 1, got tp = %d", s->tp);
	if (s->seq > 0 && s->sp && s->seq % s->tp)
		diag_err(d, f, "/parallel/sp", "seq_len %ld must be divisible by tp = %d", s->seq, s->tp);
	if (s->pp > m->layers)
		diag_err(d, f, "/parallel/pp", "must be <= the model's %ld layers, got %d", m->layers, s->pp);
	else if (s->explicit_stages) {
		long sum = 0;
		for (int i = 0; i < s->pp; i++)
			sum += s->stage_layers[i];
		if (sum != m->layers)
			diag_err(d, f, "/parallel/stage_layers", "must add up to the model's %ld layers, got %ld",
				 m->layers, sum);
	} else if (s->schedule == SCHED_INTERLEAVED && m->layers % ((long)s->pp * s->interleave))
		diag_err(d, f, "/parallel/interleave", "pp x interleave = %d x %d must divide the %ld layers",
			 s->pp, s->interleave, m->layers);
	if (s->interleave > 1 && s->pp < 2)
		diag_err(d, f, "/parallel/interleave", "interleaving needs pipeline parallelism (pp >= 2), got pp = %d",
			 s->pp);
	if (s->interleave > 1 && s->schedule != SCHED_INTERLEAVED)
		diag_err(d, f, "/parallel/interleave", "needs schedule \"interleaved\", got \"%s\"",
			 schedule_registry[s->schedule].name);
	if (s->schedule == SCHED_INTERLEAVED && s->explicit_stages && s->interleave > 1)
		diag_err(d, f, "/parallel/stage_layers", "cannot be combined with interleave > 1");
	long div = (long)s->dp * s->micro_batch;
	if (s->global_batch > 0 && s->global_batch % div)
		diag_err(d, f, "/training/global_batch", "must be divisible by dp x micro_batch = %d x %ld = %ld, got %ld",
			 s->dp, s->micro_batch, div, s->global_batch);
	else if (s->schedule == SCHED_INTERLEAVED && s->interleave > 1 &&
		 (s->global_batch / div) % s->pp)
		diag_err(d, f, "/training/global_batch", "interleaving needs micro-batches per pipeline (%ld) divisible by pp = %d",
			 s->global_batch / div, s->pp);
	long steps = 2 * (s->global_batch / (div > 0 ? div : 1)) *
		     (s->schedule == SCHED_INTERLEAVED ? s->interleave : 1);
	if (steps > 4000000)
		diag_err(d, f, "/training/global_batch", "%ld micro-batches per pipeline are more than this ddlsim "
			 "replays (2 x micro-batches x chunks must be <= 4000000); raise micro_batch",
			 s->global_batch / (div > 0 ? div : 1));
	if (s->cost == COST_PROFILE && s->profile_path[0]) {
		struct cost *c = cost_profile_create(s->profile_path, &t->gpu, d);
		cost_destroy(c);
	}
	if (s->zero == ZERO_3 && s->pp > 1)
		diag_err(d, f, "/parallel/zero", "ZeRO-3 / FSDP with pipeline parallelism is not supported (pp = %d)", s->pp);
}

struct scenario *scenario_load(const char *path, struct diag *d)
{
	struct scenario *s = calloc(1, sizeof(*s));
	struct jobj jo;
	const char *str;
	long nodes = 0, dp_in = 0;
	int before = diag_count(d);

	if (!s)
		return NULL;
	snprintf(s->path, sizeof(s->path), "%s", path);
	json_t *root = jload_file(path, d);
	if (!root)
		goto err;
	if (jload_schema(root, path, d, "ddlsim.scenario", 1, 0))
		goto err;
	jobj_init(&jo, root, path, "", d);
	const char *base = strrchr(path, '/');
	snprintf(s->name, sizeof(s->name), "%s", base ? base + 1 : path);
	char *dot = strrchr(s->name, '.');
	if (dot)
		*dot = 0;
	if (jobj_str(&jo, "name", &str, 0) == 1)
		snprintf(s->name, sizeof(s->name), "%s", str);
	if (jobj_str(&jo, "description", &str, 0) == 1)
		snprintf(s->description, sizeof(s->description), "%s", str);
	path_key(&jo, "model", s->model_path, sizeof(s->model_path), JREQ);
	path_key(&jo, "topology", s->topo_path, sizeof(s->topo_path), JREQ);
	jobj_int(&jo, "nodes", &nodes, 1, JREQ);
	s->nodes = (int)nodes;
	load_parallel(&jo, s, &dp_in);
	bool have_training = load_training(&jo, s);
	load_misc(&jo, s);
	jobj_end(&jo);
	json_decref(root);
	root = NULL;
	if (!s->out_dir[0])
		snprintf(s->out_dir, sizeof(s->out_dir), "out/%s", s->name);

	if (s->model_path[0])
		s->model = model_load(s->model_path, d);
	if (s->topo_path[0])
		s->topo = topology_load(s->topo_path, d);
	if (s->model && s->model->arch == MODEL_ARCH_CNN) {
		if (s->seq > 0)
			diag_err(d, path, "/training/seq_len", "applies to transformer models only, "
				 "not to CNN model '%s'", s->model->name);
		s->seq = 1;  /* a sample is one image: tokens/s report images/s */
	} else if (have_training && s->seq == 0)
		diag_err(d, path, "/training/seq_len", "missing required key 'seq_len'");
	if (diag_count(d) != before || !s->model || !s->topo)
		goto err;
	check_plan(s, dp_in, d);
	if (diag_count(d) != before)
		goto err;
	return s;
err:
	json_decref(root);
	scenario_destroy(s);
	return NULL;
}

void scenario_destroy(struct scenario *s)
{
	if (!s)
		return;
	model_destroy(s->model);
	topology_destroy(s->topo);
	free(s);
}
