/* import_torchtitan: a torchtitan job file (--job.config_file, TOML) as a
 * ddlsim scenario on a shipped model.
 *
 * Every key's meaning and default is torchtitan's at tag v0.1.0
 * (github.com/pytorch/torchtitan, commit f7084fc, the version the
 * framework preset "torchtitan@0.1" cites), file torchtitan/config_manager.py
 * (L<n> below); PD L<n> is torchtitan/distributed/parallel_dims.py, PZ L<n>
 * torchtitan/models/llama3/infra/parallelize.py, TR L<n> torchtitan/train.py,
 * PL L<n> torchtitan/distributed/pipeline.py, F8 L<n>
 * torchtitan/components/quantization/float8.py. A key left out takes that
 * default; the table below names it. The file is read by import/toml.c.
 *
 *   key                                          ddlsim key                    default (where)
 *   [model] name                                 (must be llama3)              "llama3" (L97)
 *   [model] flavor                               scenario model: the shipped   "debugmodel" (L100):
 *                                                models/zoo/llama3-8b, -70b,   8B, 70B, 405B
 *                                                -405b.json                    (models/llama3/__init__.py L42-67)
 *   [model] converters ["float8"]                training.precision fp8       none (L106)
 *   [training] local_batch_size (batch_size)     training.micro_batch          8 (L199)
 *   [training] global_batch_size                 training.global_batch         local x dp (L202; TR L192-199)
 *   [training] seq_len                           training.seq_len              2048 (L207)
 *   [training] mixed_precision_param             training.precision            bfloat16 (L221), applied
 *                                                                              by FSDP only (PZ L93)
 *   [training] mixed_precision_reduce            training.grad_reduce_dtype    float32 (L229)
 *   [training] compile                           compute.stack                 false (L235): "torchtitan";
 *                                                "torchtitan-compile"          true: each block and the loss
 *                                                                              compiled (models/stack_compile.h)
 *   [parallelism] data_parallel_shard_degree     parallel.dp, parallel.zero    -1: the rest (L272; PD L45)
 *   [parallelism] data_parallel_replicate_degree parallel.dp, zero 0 (DDP)     1 (L258); with shard > 1
 *                                                parallel.shard_group          HSDP: FSDP over the shard x cp
 *                                                                              ranks, all-reduce across the
 *                                                                              replicas (PZ apply_fsdp's
 *                                                                              mesh (dp_replicate, dp_shard_cp))
 *   [parallelism] fsdp_reshard_after_forward     parallel.zero 3 or 2          "default": 2 with pp (L284)
 *   [parallelism] tensor_parallel_degree         parallel.tp, parallel.sp      1 (L297); SP on norms (PZ L143)
 *   [parallelism] enable_async_tensor_parallel   communication.tp_comm_overlap false (L303); needs
 *                                                                              compile (PZ L51-54)
 *   [parallelism] pipeline_parallel_degree       parallel.pp, stage layers     1 (L306); split PL L67-110
 *   [parallelism] pipeline_parallel_schedule     parallel.schedule             "1F1B" (L331): 1F1B, GPipe,
 *                                                                              Interleaved1F1B (2 per rank, PL L91)
 *   [parallelism] pipeline_parallel_microbatch_size training.micro_batch (pp)  1 (L347)
 *   [parallelism] context_parallel_degree        parallel.cp                   1 (L355)
 *   [activation_checkpoint] mode                 parallel.recompute            "selective" (L465)
 *   [activation_checkpoint] selective_ac_option  "op": selective-op; N: full   "2" (L468; PZ L241-286)
 *                                                with recompute_every_n_layers N
 *   [float8] enable_fsdp_float8_all_gather       training.fp8_params           false (L477); on only
 *                                                                              at dp_shard > 1 (F8 L79-82)
 *   [float8] recipe_name                         (tensorwise is ddlsim's fp8)  None: tensorwise (L491)
 *
 * The scenario follows validation/memory-torchtitan-h100's cases: no
 * framework key, compute.stack "torchtitan", FSDP2 as ZeRO-3 over the shard
 * (x cp) ranks, ZeRO-2 with pipelining (the parameters are kept after
 * forward), fp32 reduction. The world size is the cluster's: --nodes x GPUs
 * per node, or, without --nodes, the product of the degrees (then
 * data_parallel_shard_degree cannot be -1). Refused as torchtitan refuses
 * them: a product of degrees other than the world size (PD L48), a global
 * batch not a multiple of local batch x dp (TR L199), a local batch not a
 * multiple of the pipeline micro batch (L352), async TP without compile
 * (PZ L54), recipe_name with the float8 all-gather (F8 L57-60), an unknown
 * model, flavor, schedule or AC option. Hybrid sharding (replicate and
 * shard degrees both > 1) maps to parallel.shard_group = shard x cp. Data, logging,
 * checkpoints, profiling, optimizer and LR keys are listed as ignored; any
 * other key as unknown. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"
#include "toml.h"
#include "xalloc.h"

enum key_id {
	K_NAME, K_FLAVOR, K_CONVERTERS, K_LOCAL, K_BATCH, K_GLOBAL, K_SEQ, K_MPP, K_MPR, K_COMPILE, K_REP, K_SHARD,
	K_RESHARD, K_TP, K_ASYNC, K_PP, K_SCHED, K_PPMB, K_CP, K_EP, K_AC_MODE, K_AC_OPT, K_F8_AG, K_F8_RECIPE, K_N
};

static const struct {
	const char *table, *key;
	enum toml_type type;
} keys[K_N] = {
	[K_NAME] = { "model", "name", TOML_STRING }, [K_FLAVOR] = { "model", "flavor", TOML_STRING },
	[K_CONVERTERS] = { "model", "converters", TOML_ARRAY },
	[K_LOCAL] = { "training", "local_batch_size", TOML_INT }, [K_BATCH] = { "training", "batch_size", TOML_INT },
	[K_GLOBAL] = { "training", "global_batch_size", TOML_INT }, [K_SEQ] = { "training", "seq_len", TOML_INT },
	[K_MPP] = { "training", "mixed_precision_param", TOML_STRING },
	[K_MPR] = { "training", "mixed_precision_reduce", TOML_STRING },
	[K_COMPILE] = { "training", "compile", TOML_BOOL },
	[K_REP] = { "parallelism", "data_parallel_replicate_degree", TOML_INT },
	[K_SHARD] = { "parallelism", "data_parallel_shard_degree", TOML_INT },
	[K_RESHARD] = { "parallelism", "fsdp_reshard_after_forward", TOML_STRING },
	[K_TP] = { "parallelism", "tensor_parallel_degree", TOML_INT },
	[K_ASYNC] = { "parallelism", "enable_async_tensor_parallel", TOML_BOOL },
	[K_PP] = { "parallelism", "pipeline_parallel_degree", TOML_INT },
	[K_SCHED] = { "parallelism", "pipeline_parallel_schedule", TOML_STRING },
	[K_PPMB] = { "parallelism", "pipeline_parallel_microbatch_size", TOML_INT },
	[K_CP] = { "parallelism", "context_parallel_degree", TOML_INT },
	[K_EP] = { "parallelism", "expert_parallel_degree", TOML_INT },
	[K_AC_MODE] = { "activation_checkpoint", "mode", TOML_STRING },
	[K_AC_OPT] = { "activation_checkpoint", "selective_ac_option", TOML_STRING },
	[K_F8_AG] = { "float8", "enable_fsdp_float8_all_gather", TOML_BOOL },
	[K_F8_RECIPE] = { "float8", "recipe_name", TOML_STRING },
};

/* Tables with no effect on time or memory, whole. */
static const char *const ignored_tables[] = {
	"job", "profiling", "metrics", "optimizer", "lr_scheduler", "checkpoint", "comm", "validation",
	"fault_tolerance", "memory_estimation", NULL
};

/* Keys of the read tables with no effect on time or memory. */
static const char *const ignored_keys[] = {
	"model.tokenizer_path", "model.hf_assets_path", "model.print_after_conversion", "training.dataset",
	"training.dataset_path", "training.max_norm", "training.steps", "training.warmup_steps", "training.gc_freq",
	"training.gc_debug", "training.seed", "training.deterministic", "float8.filter_fqns", "float8.emulate", NULL
};

/* The shipped model of each llama3 flavor (models/llama3/__init__.py). */
static const struct {
	const char *flavor, *file, *where;
} flavors[] = {
	{ "8B", "llama3-8b.json", "L42-50: dim 4096, 32 layers, 32 heads, 8 kv heads, ffn x1.3 of 1024" },
	{ "70B", "llama3-70b.json", "L51-59: dim 8192, 80 layers, 64 heads, 8 kv heads, ffn x1.3 of 4096" },
	{ "405B", "llama3-405b.json", "L60-67: dim 16384, 126 layers, 128 heads, 8 kv heads, ffn x1.2 of 4096" },
};
static const long flavor_layers[] = { 32, 80, 126 };

struct tt {
	const char *file;
	struct diag *d;
	struct import_map *map;
	const struct toml_kv *kv[K_N];
};

static int err(struct tt *t, enum key_id k, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int err(struct tt *t, enum key_id k, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if ((int)k >= 0 && t->kv[k])
		return diag_err_at(t->d, t->file, t->kv[k]->line, t->kv[k]->col, "%s", msg);
	return diag_err(t->d, t->file, "", "%s", msg);
}

static const char *src_name(enum key_id k, char *buf, size_t n)
{
	snprintf(buf, n, "%s.%s", keys[k].table, keys[k].key);
	return buf;
}

static long ival(const struct tt *t, enum key_id k, long dflt)
{
	return t->kv[k] ? (long)t->kv[k]->i : dflt;
}

static const char *sval(const struct tt *t, enum key_id k, const char *dflt)
{
	return t->kv[k] ? t->kv[k]->str : dflt;
}

static bool bval(const struct tt *t, enum key_id k)
{
	return t->kv[k] && t->kv[k]->b;
}

/* Set path in sc to v, with a row for key k (mapped when given, else its
 * default; st overrides when not IMPORT_MAPPED). */
static void put(struct tt *t, json_t *sc, const char *path, json_t *v, enum key_id k, enum import_status st,
		const char *note)
{
	json_t *o = sc;
	char buf[128], name[96], key[160];
	snprintf(buf, sizeof(buf), "%s", path + 1);
	char *slash = strchr(buf, '/');
	if (slash) {
		*slash = 0;
		if (!json_object_get(sc, buf))
			json_object_set_new(sc, buf, json_object());
		o = json_object_get(sc, buf);
	}
	json_object_set(o, slash ? slash + 1 : buf, v);
	char *w = json_dumps(v, JSON_ENCODE_ANY);
	snprintf(key, sizeof(key), "scenario: %s", path);
	if (st == IMPORT_MAPPED && !t->kv[k])
		st = IMPORT_DEFAULT;
	import_map_add(t->map, st, src_name(k, name, sizeof(name)), t->kv[k] ? t->kv[k]->text : "", key, w, note);
	free(w);
	json_decref(v);
}

static bool in_list(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (!strcmp(*list, s))
			return true;
	return false;
}

/* Sort every entry into kv[] or a row: ignored or unknown. */
static void classify(struct tt *t, const struct toml *doc)
{
	for (int i = 0; i < toml_count(doc); i++) {
		const struct toml_kv *v = toml_at(doc, i);
		char name[160];
		snprintf(name, sizeof(name), "%s%s%s", v->table, *v->table ? "." : "", v->key);
		int k;
		for (k = 0; k < K_N; k++)
			if (!strcmp(keys[k].table, v->table) && !strcmp(keys[k].key, v->key))
				break;
		if (k < K_N) {
			bool ok = v->type == keys[k].type ||
				  (k == K_AC_OPT && v->type == TOML_INT);
			if (k == K_CONVERTERS && ok)
				for (int j = 0; j < v->n; j++)
					ok = ok && v->items[j].type == TOML_STRING;
			if (!ok)
				diag_err_at(t->d, t->file, v->line, v->col, "%s: expected %s, got '%s'", name,
					    keys[k].type == TOML_STRING ? "a string" : keys[k].type == TOML_INT ?
					    "an integer" : keys[k].type == TOML_BOOL ? "a boolean" : "an array of strings",
					    v->text);
			else
				t->kv[k] = v;
			continue;
		}
		if (in_list(ignored_tables, v->table) || in_list(ignored_keys, name))
			import_map_add(t->map, IMPORT_IGNORED, name, v->text, "", "", "no effect on time or memory");
		else
			import_map_add(t->map, IMPORT_UNKNOWN, name, v->text, "", "", "ddlsim does not know it: not applied");
	}
}

/* The model: llama3 and a shipped flavor. Returns the flavor's index or -1. */
static int map_model(struct tt *t, json_t *sc, const char **model_file)
{
	char name[96];
	const char *mn = sval(t, K_NAME, "llama3");
	if (strcmp(mn, "llama3")) {
		err(t, K_NAME, "model.name: expected llama3 (the models ddlsim ships for torchtitan), got '%s'", mn);
		return -1;
	}
	import_map_add(t->map, t->kv[K_NAME] ? IMPORT_MAPPED : IMPORT_DEFAULT, src_name(K_NAME, name, sizeof(name)),
		       t->kv[K_NAME] ? t->kv[K_NAME]->text : "", "scenario: /model", "", "with model.flavor");
	const char *fl = sval(t, K_FLAVOR, "debugmodel");
	for (size_t i = 0; i < sizeof(flavors) / sizeof(flavors[0]); i++)
		if (!strcmp(fl, flavors[i].flavor)) {
			char w[96], note[160];
			snprintf(w, sizeof(w), "models/zoo/%s", flavors[i].file);
			snprintf(note, sizeof(note), "the shipped model of the flavor (models/llama3/__init__.py %s)",
				 flavors[i].where);
			import_map_add(t->map, IMPORT_MAPPED, src_name(K_FLAVOR, name, sizeof(name)),
				       t->kv[K_FLAVOR] ? t->kv[K_FLAVOR]->text : "", "scenario: /model", w, note);
			json_object_set_new(sc, "model", json_string(flavors[i].file));
			*model_file = flavors[i].file;
			return (int)i;
		}
	err(t, K_FLAVOR, "model.flavor: unknown llama3 flavor '%s' (known: 8B, 70B, 405B)%s", fl,
	    t->kv[K_FLAVOR] ? "" : " (absent: debugmodel, L100)");
	return -1;
}

/* The degrees against the world size. Returns 0 with *shard, or -1. */
static int world_of(struct tt *t, const struct import_cluster *c, long rep, long tp, long pp, long cp,
		    long *shard_out, long *nodes_out, char *note, size_t n)
{
	long shard = ival(t, K_SHARD, -1), other = rep * tp * pp * cp;
	if (c->nodes > 0) {
		long world = c->nodes * c->gpus_per_node;
		snprintf(note, n, "--nodes %ld x %ld GPUs per node", c->nodes, c->gpus_per_node);
		if (shard == -1) {
			if (world % other)
				return err(t, K_SHARD, "parallelism.data_parallel_shard_degree -1: the world size %ld (%s) is "
					   "not a multiple of data_parallel_replicate_degree %ld x tensor_parallel_degree "
					   "%ld x pipeline_parallel_degree %ld x context_parallel_degree %ld = %ld "
					   "(parallel_dims.py L45-48)", world, note, rep, tp, pp, cp, other);
			shard = world / other;
		} else if (shard * other != world) {
			return err(t, K_SHARD, "the world size %ld (%s) is not data_parallel_replicate_degree %ld x "
				   "data_parallel_shard_degree %ld x tensor_parallel_degree %ld x "
				   "pipeline_parallel_degree %ld x context_parallel_degree %ld = %ld "
				   "(parallel_dims.py L48)", world, note, rep, shard, tp, pp, cp, shard * other);
		}
		*nodes_out = c->nodes;
	} else {
		if (shard == -1)
			return err(t, K_SHARD, "parallelism.data_parallel_shard_degree -1 (the rest of the world) needs "
				   "the world size: give --nodes");
		long world = shard * other;
		if (world % c->gpus_per_node)
			return err(t, K_SHARD, "the product of the degrees, %ld GPUs, does not fill nodes of %ld GPUs: "
				   "give --nodes", world, c->gpus_per_node);
		*nodes_out = world / c->gpus_per_node;
		snprintf(note, n, "the product of the degrees, %ld GPUs, / %ld GPUs per node", world, c->gpus_per_node);
	}
	*shard_out = shard;
	return 0;
}

/* Pipeline stages as torchtitan splits them (PL L67-110): the embedding
 * and the output weigh one layer each, extra layers to the first stages. */
static void map_stages(struct tt *t, json_t *sc, long layers, long pp, int v)
{
	long stages = pp * v, eff = layers + 2, per = eff / stages, extra = eff % stages;
	if (v > 1) {
		import_map_add(t->map, IMPORT_DERIVED, "(pipeline split)", "", "scenario: /parallel/vstage_layers", "",
			       "not written: ddlsim splits the layers evenly over the chunks, torchtitan weighs the "
			       "embedding and output as one layer each (pipeline.py L67)");
		return;
	}
	json_t *list = json_array();
	for (long s = 0; s < stages; s++) {
		long n = per + (s < extra) - (s == 0) - (s == stages - 1);
		json_array_append_new(list, json_integer(n));
	}
	char note[200];
	snprintf(note, sizeof(note), "(%ld layers + embedding + output) / %ld stages, extra to the first "
		 "(pipeline.py L67-110)", layers, stages);
	if (!extra) {
		json_t *p = json_object_get(sc, "parallel");
		json_object_set_new(p, "first_stage_layers", json_integer(per - 1));
		json_object_set_new(p, "last_stage_layers", json_integer(per - 1));
		char w[64];
		snprintf(w, sizeof(w), "%ld, %ld", per - 1, per - 1);
		import_map_add(t->map, IMPORT_DERIVED, "(pipeline split)", "",
			       "scenario: /parallel/first_stage_layers, last_stage_layers", w, note);
		json_decref(list);
	} else {
		json_object_set_new(json_object_get(sc, "parallel"), "stage_layers", list);
		char *w = json_dumps(list, JSON_COMPACT);
		import_map_add(t->map, IMPORT_DERIVED, "(pipeline split)", "", "scenario: /parallel/stage_layers", w,
			       note);
		free(w);
	}
}

static void map_recompute(struct tt *t, json_t *sc)
{
	const char *mode = sval(t, K_AC_MODE, "selective");
	char opt[32];
	if (t->kv[K_AC_OPT] && t->kv[K_AC_OPT]->type == TOML_INT)
		snprintf(opt, sizeof(opt), "%lld", t->kv[K_AC_OPT]->i);
	else
		snprintf(opt, sizeof(opt), "%s", sval(t, K_AC_OPT, "2"));
	char name[96];
	if (!strcmp(mode, "none") || !strcmp(mode, "full")) {
		put(t, sc, "/parallel/recompute", json_string(mode), K_AC_MODE, IMPORT_MAPPED,
		    t->kv[K_AC_MODE] ? NULL : "absent: selective (L465)");
		if (t->kv[K_AC_OPT])
			import_map_add(t->map, IMPORT_IGNORED, src_name(K_AC_OPT, name, sizeof(name)), opt, "", "",
				       "only with mode selective (parallelize.py L241)");
		return;
	}
	if (strcmp(mode, "selective")) {
		err(t, K_AC_MODE, "activation_checkpoint.mode: expected none, full or selective, got '%s' (L465)", mode);
		return;
	}
	if (!strcmp(opt, "op")) {
		put(t, sc, "/parallel/recompute", json_string("selective-op"), K_AC_MODE, IMPORT_MAPPED,
		    t->kv[K_AC_MODE] ? "with selective_ac_option op" : "absent: selective (L465)");
		put(t, sc, "/parallel/recompute", json_string("selective-op"), K_AC_OPT, IMPORT_MAPPED,
		    "torchtitan's per-op policy (parallelize.py L241)");
		return;
	}
	char *end;
	long nth = strtol(opt, &end, 10);
	if (!*opt || *end || nth < 1) {
		err(t, K_AC_OPT, "activation_checkpoint.selective_ac_option: expected op or a positive integer, got '%s' "
		    "(parallelize.py L241-246)", opt);
		return;
	}
	put(t, sc, "/parallel/recompute", json_string("full"), K_AC_MODE, IMPORT_MAPPED,
	    t->kv[K_AC_MODE] ? "with an integer selective_ac_option" : "absent: selective (L465)");
	if (nth > 1)
		put(t, sc, "/parallel/recompute_every_n_layers", json_integer(nth), K_AC_OPT, IMPORT_MAPPED,
		    t->kv[K_AC_OPT] ? "every n-th layer checkpointed whole (parallelize.py L282-286)" :
		    "absent: \"2\" (L468): every 2nd layer checkpointed whole");
	else
		import_map_add(t->map, IMPORT_MAPPED, src_name(K_AC_OPT, name, sizeof(name)), opt,
			       "scenario: /parallel/recompute", "\"full\"", "every layer (parallelize.py L286)");
}

/* Whether model.converters holds "float8"; any other converter is a row
 * of its own, unknown. */
static bool precision_float8(struct tt *t)
{
	bool float8 = false;
	if (t->kv[K_CONVERTERS])
		for (int i = 0; i < t->kv[K_CONVERTERS]->n; i++) {
			const char *cv = t->kv[K_CONVERTERS]->items[i].str;
			if (!strcmp(cv, "float8"))
				float8 = true;
			else
				import_map_add(t->map, IMPORT_UNKNOWN, "model.converters", cv, "", "",
					       "a converter ddlsim does not model: not applied");
		}
	return float8;
}

/* The float8 table under Float8: its recipe and the fp8 all-gather of
 * the parameters (on only where the parameters are sharded, shard > 1). */
static void map_float8(struct tt *t, json_t *sc, long shard)
{
	char name[96];
	const char *recipe = sval(t, K_F8_RECIPE, NULL);
	if (recipe && bval(t, K_F8_AG))
		err(t, K_F8_RECIPE, "float8.recipe_name: not with enable_fsdp_float8_all_gather (float8.py L57-60)");
	if (recipe && strcmp(recipe, "tensorwise"))
		import_map_add(t->map, IMPORT_UNKNOWN, src_name(K_F8_RECIPE, name, sizeof(name)), t->kv[K_F8_RECIPE]->text,
			       "", "", "ddlsim prices tensorwise Float8: its scaling not applied");
	else
		import_map_add(t->map, t->kv[K_F8_RECIPE] ? IMPORT_MAPPED : IMPORT_DEFAULT,
			       src_name(K_F8_RECIPE, name, sizeof(name)), t->kv[K_F8_RECIPE] ? t->kv[K_F8_RECIPE]->text : "",
			       "scenario: /training/precision", "\"fp8\"", recipe ? "tensorwise" : "absent: tensorwise (L491)");
	if (bval(t, K_F8_AG) && shard > 1) {
		put(t, sc, "/training/fp8_params", json_true(), K_F8_AG, IMPORT_MAPPED, "fp8 all-gather of the parameters");
	} else if (bval(t, K_F8_AG)) {
		/* F8 L79-82: the all-gather in fp8 only where dp_shard_enabled
		 * (PD L116-117: data_parallel_shard_degree > 1); FSDP over cp
		 * alone, or no FSDP, gathers in bf16, silently */
		import_map_add(t->map, IMPORT_MAPPED, src_name(K_F8_AG, name, sizeof(name)), "true",
			       "scenario: /training/fp8_params", "false",
			       "off at data_parallel_shard_degree 1 (float8.py L79-82): bf16 all-gather");
	} else if (t->kv[K_F8_AG]) {
		import_map_add(t->map, IMPORT_MAPPED, src_name(K_F8_AG, name, sizeof(name)), "false", "", "",
			       "bf16 all-gather (ddlsim's default)");
	}
}

/* Precision: the FSDP mixed-precision policy, Float8. */
static void map_precision(struct tt *t, json_t *sc, bool fsdp, long shard)
{
	char name[96];
	const char *mpp = sval(t, K_MPP, "bfloat16"), *mpr = sval(t, K_MPR, "float32");
	if (strcmp(mpp, "bfloat16") && strcmp(mpp, "float32"))
		err(t, K_MPP, "training.mixed_precision_param: expected bfloat16 or float32, got '%s' (L221)", mpp);
	if (strcmp(mpr, "float32"))
		err(t, K_MPR, "training.mixed_precision_reduce: expected float32, got '%s' (L229)", mpr);
	bool float8 = precision_float8(t);
	const char *prec = fsdp && !strcmp(mpp, "bfloat16") ? "bf16" : "fp32";
	put(t, sc, "/training/precision", json_string(float8 ? "fp8" : prec), K_MPP, IMPORT_MAPPED,
	    float8 ? "the parameters' dtype under Float8 (bf16)" : fsdp ? (t->kv[K_MPP] ? NULL : "absent: bfloat16 (L221)") :
	    "no FSDP: the mixed-precision policy is FSDP's (parallelize.py L93), fp32");
	if (float8)
		import_map_add(t->map, IMPORT_MAPPED, "model.converters", "\"float8\"", "scenario: /training/precision",
			       "\"fp8\"", "torchao Float8Linear GEMMs (L106)");
	put(t, sc, "/training/grad_reduce_dtype", json_string("fp32"), K_MPR, IMPORT_MAPPED,
	    t->kv[K_MPR] ? NULL : "absent: float32 (L229)");
	if (float8) {
		map_float8(t, sc, shard);
		return;
	}
	for (int k = K_F8_AG; k <= K_F8_RECIPE; k++)
		if (t->kv[k])
			import_map_add(t->map, IMPORT_IGNORED, src_name(k, name, sizeof(name)), t->kv[k]->text, "", "",
				       "model.converters holds no \"float8\": Float8 is off");
}

static void map_batch(struct tt *t, json_t *sc, long dp, long pp)
{
	char name[96];
	enum key_id lk = t->kv[K_LOCAL] || !t->kv[K_BATCH] ? K_LOCAL : K_BATCH;
	if (t->kv[K_LOCAL] && t->kv[K_BATCH])
		err(t, K_BATCH, "training.batch_size: the older name of local_batch_size, not with it");
	long local = ival(t, lk, 8), micro = local;
	long global = ival(t, K_GLOBAL, -1);
	if (local < 1)
		err(t, lk, "%s: expected an integer >= 1, got %ld", src_name(lk, name, sizeof(name)), local);
	if (ival(t, K_SEQ, 2048) < 1)
		err(t, K_SEQ, "training.seq_len: expected an integer >= 1, got %ld", ival(t, K_SEQ, 2048));
	put(t, sc, "/training/seq_len", json_integer(ival(t, K_SEQ, 2048)), K_SEQ, IMPORT_MAPPED,
	    t->kv[K_SEQ] ? NULL : "absent: 2048 (L207)");
	if (global < 0) {
		put(t, sc, "/training/global_batch", json_integer(local * dp), K_GLOBAL, IMPORT_DERIVED,
		    "local batch x dp (L204; train.py L196)");
	} else {
		if (local > 0 && (global == 0 || global % (local * dp)))
			err(t, K_GLOBAL, "training.global_batch_size: %ld is not a multiple of local_batch_size %ld x dp %ld "
			    "(train.py L197-203)", global, local, dp);
		put(t, sc, "/training/global_batch", json_integer(global), K_GLOBAL, IMPORT_MAPPED,
		    "gradient accumulation: global / (local x dp) (train.py L207)");
	}
	if (pp > 1) {
		micro = ival(t, K_PPMB, 1);
		if (micro < 1 || local % micro)
			err(t, K_PPMB, "parallelism.pipeline_parallel_microbatch_size: %ld does not divide local_batch_size "
			    "%ld (L350-352)", micro, local);
		put(t, sc, "/training/micro_batch", json_integer(micro), K_PPMB, IMPORT_MAPPED,
		    t->kv[K_PPMB] ? "the pipeline's micro batch" : "absent: 1 (L347)");
		import_map_add(t->map, IMPORT_DERIVED, src_name(lk, name, sizeof(name)), t->kv[lk] ? t->kv[lk]->text : "",
			       "scenario: /training/global_batch", "", "local / microbatch size micro batches per step");
	} else {
		put(t, sc, "/training/micro_batch", json_integer(micro), lk, IMPORT_MAPPED,
		    t->kv[lk] ? (lk == K_BATCH ? "the older name of local_batch_size" : NULL) : "absent: 8 (L199)");
		if (t->kv[K_PPMB])
			import_map_add(t->map, IMPORT_IGNORED, src_name(K_PPMB, name, sizeof(name)), t->kv[K_PPMB]->text, "",
				       "", "pipeline_parallel_degree 1: no pipeline");
	}
}

static void map_pipeline(struct tt *t, json_t *sc, long pp, long layers)
{
	char name[96];
	const char *sched = sval(t, K_SCHED, "1F1B");
	if (pp == 1) {
		if (t->kv[K_SCHED])
			import_map_add(t->map, IMPORT_IGNORED, src_name(K_SCHED, name, sizeof(name)), t->kv[K_SCHED]->text,
				       "", "", "pipeline_parallel_degree 1: no pipeline");
		return;
	}
	static const struct {
		const char *tt, *ddlsim;
	} scheds[] = { { "1F1B", "1f1b" }, { "GPipe", "gpipe" }, { "Interleaved1F1B", "interleaved" } };
	for (size_t i = 0; i < sizeof(scheds) / sizeof(scheds[0]); i++)
		if (!strcmp(sched, scheds[i].tt)) {
			put(t, sc, "/parallel/schedule", json_string(scheds[i].ddlsim), K_SCHED, IMPORT_MAPPED,
			    t->kv[K_SCHED] ? NULL : "absent: 1F1B (L331)");
			if (i == 2)
				put(t, sc, "/parallel/interleave", json_integer(2), K_SCHED, IMPORT_DERIVED,
				    "2 stages per rank (pipeline.py L91)");
			map_stages(t, sc, layers, pp, i == 2 ? 2 : 1);
			return;
		}
	err(t, K_SCHED, "parallelism.pipeline_parallel_schedule: '%s' is not one ddlsim runs (known: 1F1B, GPipe, "
	    "Interleaved1F1B)", sched);
}

/* The degrees: each >= 1, the shard degree -1 or >= 1. Returns nonzero
 * after err() when one is not. */
static int degrees_bad(struct tt *t)
{
	char name[96];
	static const enum key_id deg[] = { K_REP, K_TP, K_PP, K_CP };
	int bad = 0;
	for (size_t i = 0; i < sizeof(deg) / sizeof(deg[0]); i++)
		if (ival(t, deg[i], 1) < 1)
			bad = err(t, deg[i], "%s: expected an integer >= 1, got %ld (parallel_dims.py L41)",
				  src_name(deg[i], name, sizeof(name)), ival(t, deg[i], 1));
	if (t->kv[K_SHARD] && t->kv[K_SHARD]->i != -1 && t->kv[K_SHARD]->i < 1)
		bad = err(t, K_SHARD, "parallelism.data_parallel_shard_degree: expected -1 or an integer >= 1, got %lld "
			  "(parallel_dims.py L43)", t->kv[K_SHARD]->i);
	return bad;
}

/* FSDP as ddlsim's ZeRO stage: 3, or 2 where the parameters stay after
 * forward (fsdp_reshard_after_forward). */
static void map_fsdp(struct tt *t, json_t *sc, bool fsdp, long pp)
{
	const char *reshard = sval(t, K_RESHARD, "default");
	long zero = !fsdp ? 0 : !strcmp(reshard, "never") || (!strcmp(reshard, "default") && pp > 1) ? 2 : 3;
	if (strcmp(reshard, "default") && strcmp(reshard, "always") && strcmp(reshard, "never"))
		err(t, K_RESHARD, "parallelism.fsdp_reshard_after_forward: expected default, always or never, got '%s' "
		    "(L284)", reshard);
	put(t, sc, "/parallel/zero", json_integer(zero), K_RESHARD, IMPORT_DERIVED,
	    !fsdp ? "no FSDP (shard and cp degrees 1: parallel_dims.py L128)" :
	    zero == 3 ? "FSDP2 fully_shard per block: ZeRO-3 over the shard x cp ranks" :
	    "FSDP2 keeps the parameters after forward (with pp by default, L284): ZeRO-2");
}

/* expert_parallel_degree, async TP (tp its degree) and torch.compile. */
static void map_async_compile(struct tt *t, json_t *sc, long tp)
{
	char name[96];
	if (t->kv[K_EP])
		import_map_add(t->map, IMPORT_UNKNOWN, src_name(K_EP, name, sizeof(name)), t->kv[K_EP]->text, "", "",
			       "not a key of torchtitan v0.1.0, and llama3 has no experts: not applied");
	if (bval(t, K_ASYNC)) {
		if (!bval(t, K_COMPILE))
			err(t, K_ASYNC, "parallelism.enable_async_tensor_parallel: needs training.compile "
			    "(parallelize.py L51-54)");
		if (tp > 1)
			put(t, sc, "/communication/tp_comm_overlap", json_true(), K_ASYNC, IMPORT_MAPPED,
			    "async TP overlaps the SP all-gather and reduce-scatter with the GEMMs");
		else
			import_map_add(t->map, IMPORT_IGNORED, src_name(K_ASYNC, name, sizeof(name)), "true", "", "",
				       "tensor_parallel_degree 1: no TP");
	} else if (t->kv[K_ASYNC]) {
		import_map_add(t->map, IMPORT_MAPPED, src_name(K_ASYNC, name, sizeof(name)), "false", "", "",
			       "off (ddlsim's default)");
	}
	if (bval(t, K_COMPILE))
		import_map_add(t->map, IMPORT_MAPPED, src_name(K_COMPILE, name, sizeof(name)), "true",
			       "scenario: /compute/stack", "\"torchtitan-compile\"",
			       "each block and the loss compiled by Inductor (parallelize.py L301-310, loss.py)");
	else if (t->kv[K_COMPILE])
		import_map_add(t->map, IMPORT_MAPPED, src_name(K_COMPILE, name, sizeof(name)), "false",
			       "scenario: /compute/stack", "\"torchtitan\"", "eager: the stack ddlsim prices");
}

/* The degrees, the world, the data parallelism, FSDP and the rest of
 * the job by torchtitan's parallelism keys. */
static void map_parallel(struct tt *t, json_t *sc, const struct import_cluster *c, long layers)
{
	char name[96];
	long rep = ival(t, K_REP, 1), tp = ival(t, K_TP, 1), pp = ival(t, K_PP, 1), cp = ival(t, K_CP, 1);
	int bad = degrees_bad(t);
	if (bad)
		return;
	long shard = 0, nodes = 0;
	char note[200], w[32];
	if (world_of(t, c, rep, tp, pp, cp, &shard, &nodes, note, sizeof(note)))
		return;
	json_object_set_new(sc, "nodes", json_integer(nodes));
	snprintf(w, sizeof(w), "%ld", nodes);
	import_map_add(t->map, IMPORT_DERIVED, "(world size)", "", "scenario: /nodes", w, note);
	if (tp > 1 || t->kv[K_TP])
		put(t, sc, "/parallel/tp", json_integer(tp), K_TP, IMPORT_MAPPED, NULL);
	if (tp > 1)
		put(t, sc, "/parallel/sp", json_true(), K_TP, IMPORT_DERIVED,
		    "torchtitan's TP shards the norms' sequence (parallelize.py L143-189)");
	if (pp > 1 || t->kv[K_PP])
		put(t, sc, "/parallel/pp", json_integer(pp), K_PP, IMPORT_MAPPED, NULL);
	long dp = rep * shard;
	put(t, sc, "/parallel/dp", json_integer(dp), rep > 1 ? K_REP : K_SHARD, IMPORT_MAPPED,
	    rep > 1 && shard > 1 ? "replicas x shards" : rep > 1 ? "DDP over the replicas" : t->kv[K_SHARD] && t->kv[K_SHARD]->i != -1 ? NULL :
	    "-1: the rest of the world (parallel_dims.py L45)");
	if (rep > 1 && shard > 1)
		put(t, sc, "/parallel/shard_group", json_integer(shard * cp), K_SHARD, IMPORT_DERIVED,
		    "HSDP: FSDP2 over the dp_shard x cp ranks, the shards all-reduced across the "
		    "dp_replicate replicas (parallelize.py: mesh (dp_replicate, dp_shard_cp))");
	else if (rep > 1 && t->kv[K_SHARD])
		import_map_add(t->map, IMPORT_MAPPED, src_name(K_SHARD, name, sizeof(name)), t->kv[K_SHARD]->text,
			       "scenario: /parallel/dp", "", "1: no sharding");
	else if (rep == 1 && t->kv[K_REP])
		import_map_add(t->map, IMPORT_MAPPED, src_name(K_REP, name, sizeof(name)), t->kv[K_REP]->text,
			       "scenario: /parallel/dp", "", "1: no replication");
	if (cp > 1 || t->kv[K_CP])
		put(t, sc, "/parallel/cp", json_integer(cp), K_CP, IMPORT_MAPPED, NULL);
	bool fsdp = shard > 1 || cp > 1;        /* parallel_dims.py L128-129 */
	map_fsdp(t, sc, fsdp, pp);
	map_async_compile(t, sc, tp);
	map_pipeline(t, sc, pp, layers);
	map_recompute(t, sc);
	map_batch(t, sc, dp, pp);
	map_precision(t, sc, fsdp, shard);
}

int import_torchtitan(const char *text, const char *file, const struct import_cluster *c, struct import_map *map,
		      json_t **scenario, const char **model_file, struct diag *d)
{
	struct tt t = { .file = file, .d = d, .map = map };
	int errs = diag_count(d);
	*scenario = NULL;
	*model_file = NULL;
	struct toml *doc = toml_parse(text, file, d);
	if (!doc)
		return -1;
	classify(&t, doc);
	json_t *sc = json_object();
	json_object_set_new(sc, "schema", json_string("ddlsim.scenario"));
	json_object_set_new(sc, "schema_version", json_string("1.0"));
	char *desc = xasprintf("torchtitan job file (%s), imported by ddlsim import with torchtitan v0.1.0's "
			       "defaults", file);
	json_object_set_new(sc, "description", json_string(desc));
	free(desc);
	json_object_set_new(sc, "model", json_string(""));
	json_object_set_new(sc, "topology", json_string(c->topology));
	int fl = diag_count(d) > errs ? -1 : map_model(&t, sc, model_file);
	if (fl >= 0) {
		map_parallel(&t, sc, c, flavor_layers[fl]);
		json_t *cs = json_object();
		bool compiled = bval(&t, K_COMPILE);
		json_object_set_new(cs, "stack", json_string(compiled ? "torchtitan-compile" : "torchtitan"));
		json_object_set_new(sc, "compute", cs);
		import_map_add(map, IMPORT_DERIVED, "(framework)", "", "scenario: /compute/stack",
			       compiled ? "\"torchtitan-compile\"" : "\"torchtitan\"",
			       compiled ? "torchtitan's blocks and loss as Inductor fuses them (training.compile)" :
			       "torchtitan's eager kernels, as validation/memory-torchtitan-h100's cases");
	}
	toml_destroy(doc);
	if (diag_count(d) > errs) {
		json_decref(sc);
		*model_file = NULL;
		return -1;
	}
	*scenario = sc;
	return 0;
}
