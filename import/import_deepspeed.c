/* import_deepspeed: a DeepSpeed config JSON (ds_config) as a ddlsim
 * scenario on a model given apart.
 *
 * Every key's meaning and default is DeepSpeed's at tag v0.15.0
 * (github.com/deepspeedai/DeepSpeed, commit 55b4cae, the version the
 * framework preset "deepspeed@0.15" cites), file
 * deepspeed/runtime/zero/config.py (Z L<n> below); C L<n> is
 * deepspeed/runtime/config.py, K L<n> deepspeed/runtime/constants.py,
 * E L<n> deepspeed/runtime/engine.py, O L<n>
 * deepspeed/runtime/zero/offload_config.py. A key left out takes that
 * default; the table below names it.
 *
 *   key                                       ddlsim key                     default (where)
 *   train_batch_size                          training.global_batch          micro x accum x dp (C L934-976)
 *   train_micro_batch_size_per_gpu            training.micro_batch           train / (dp x accum) (C L954-956)
 *   gradient_accumulation_steps               (train = micro x accum x dp)   train / (micro x dp), or 1
 *                                                                            (C L948-950, L966)
 *   bf16.enabled (bfloat16.enabled), fp16.enabled
 *                                             training.precision             false both: fp32 (K L127, L154)
 *   communication_data_type                   training.grad_reduce_dtype     None: the model's dtype (K L240;
 *                                                                            E L866): the preset's
 *   optimizer.type Adam, AdamW                training.optimizer adam        None: the client's (K L60)
 *   zero_optimization.stage                   parallel.zero                  0 (Z L88); zero_optimization
 *                                                                            true (old form): 1 (Z L55)
 *   zero_optimization.overlap_comm            communication.overlap_grad_reduce  stage 3 (Z L131, L325-327)
 *   zero_optimization.reduce_bucket_size      communication.bucket_MB        5e8 elements (Z L106), x the
 *                                                                            reduced dtype's bytes; stage 0
 *                                                                            buckets 5e8 (E L109, L1960)
 *   zero_optimization.offload_optimizer.device parallel.offload optimizer    none (O L55); cpu only
 *   zero_optimization.offload_param.device    (not modelled at stage 3)      none (O L24); stage 3 only
 *   zero_optimization.stage3_prefetch_bucket_size, stage3_max_live_parameters,
 *   stage3_max_reuse_distance, stage3_param_persistence_threshold
 *                                             the preset's ZeRO-3 gathers    5e7, 1e9, 1e9, 1e5 (Z L205-234)
 *   zero_optimization.zero_hpz_partition_size (no shard-group key: unknown)  1 (Z L283)
 *   zero_optimization.mics_shard_size         parallel.shard_group (stage 3) -1: none (Z, MiCS: ZeRO-3
 *                                                                            sharded within groups of this
 *                                                                            many ranks, replicated across;
 *                                                                            deepspeed/runtime/zero/mics.py)
 *   zero_optimization.mics_hierarchical_params_gather
 *                                             (not modelled: unknown)        false (Z); the flat all-gather
 *                                                                            in the shard group is priced
 *   activation_checkpointing                  parallel.recompute full        absent: none
 *   gradient_clipping                         ignored (no cost effect)       0 (K L215)
 *
 * The scenario names framework "deepspeed@0.15" for what the config leaves
 * to the engine (the ZeRO-3 gather window, launch costs, its kernel stack
 * "deepspeed"). The config holds no model, no sequence length and no
 * cluster: the model is a Hugging Face config.json or a ddlsim model file
 * (--model), the sequence --seq-len, the cluster --topology with --nodes.
 * The config holds no model parallelism either, so dp is the world size
 * (C L729: dist.get_world_size() without an mpu): --nodes x GPUs per node,
 * or, without --nodes, train / (micro x accum) when all three are given.
 * activation_checkpointing configures deepspeed.checkpointing, which the
 * model calls per layer (Megatron-DeepSpeed, or gradient checkpointing in
 * the Hugging Face Trainer): its presence is read as every layer
 * recomputed. Refused as DeepSpeed refuses them: train_batch_size other
 * than micro x accum x dp (C L929), a batch key below 1 (C L923-927),
 * neither train_batch_size nor the micro batch (C L976), both fp16 and bf16
 * (C L833), a stage above 3 (C L1015), offload of the optimizer at stage 0
 * (Z L157-161); and what ddlsim does not model: NVMe offload, parameter
 * offload at stage 3, "auto" (the Hugging Face Trainer's placeholder).
 * Logging, checkpoints, the scheduler and the optimizer's parameters are
 * listed as ignored; any other key as unknown. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "import.h"
#include "jload.h"
#include "xalloc.h"

enum key_id {
	K_TRAIN, K_MICRO, K_ACCUM, K_BF16, K_BF16_OLD, K_FP16, K_COMM_DTYPE, K_OPT, K_ZERO, K_STAGE, K_OVERLAP,
	K_REDUCE_BUCKET, K_AG_BUCKET, K_CONTIG, K_OFF_OPT, K_OFF_PARAM, K_PREFETCH, K_LIVE, K_REUSE, K_PERSIST,
	K_HPZ, K_REDUCE_SCATTER, K_AG_PARTITIONS, K_AC, K_AC_PARTITION, K_AC_CPU, K_CLIP, K_MICS, K_MICS_HIER, K_N
};

static const char *const keys[K_N] = {
	[K_TRAIN] = "train_batch_size", [K_MICRO] = "train_micro_batch_size_per_gpu",
	[K_ACCUM] = "gradient_accumulation_steps", [K_BF16] = "bf16.enabled", [K_BF16_OLD] = "bfloat16.enabled",
	[K_FP16] = "fp16.enabled", [K_COMM_DTYPE] = "communication_data_type", [K_OPT] = "optimizer.type",
	[K_ZERO] = "zero_optimization", [K_STAGE] = "zero_optimization.stage",
	[K_OVERLAP] = "zero_optimization.overlap_comm", [K_REDUCE_BUCKET] = "zero_optimization.reduce_bucket_size",
	[K_AG_BUCKET] = "zero_optimization.allgather_bucket_size",
	[K_CONTIG] = "zero_optimization.contiguous_gradients",
	[K_OFF_OPT] = "zero_optimization.offload_optimizer.device",
	[K_OFF_PARAM] = "zero_optimization.offload_param.device",
	[K_PREFETCH] = "zero_optimization.stage3_prefetch_bucket_size",
	[K_LIVE] = "zero_optimization.stage3_max_live_parameters",
	[K_REUSE] = "zero_optimization.stage3_max_reuse_distance",
	[K_PERSIST] = "zero_optimization.stage3_param_persistence_threshold",
	[K_HPZ] = "zero_optimization.zero_hpz_partition_size", [K_REDUCE_SCATTER] = "zero_optimization.reduce_scatter",
	[K_AG_PARTITIONS] = "zero_optimization.allgather_partitions", [K_AC] = "activation_checkpointing",
	[K_AC_PARTITION] = "activation_checkpointing.partition_activations",
	[K_AC_CPU] = "activation_checkpointing.cpu_checkpointing", [K_CLIP] = "gradient_clipping",
	[K_MICS] = "zero_optimization.mics_shard_size",
	[K_MICS_HIER] = "zero_optimization.mics_hierarchical_params_gather",
};

/* Keys (and whole objects, by prefix) with no effect on time or memory. */
static const char *const ignored[] = {
	"optimizer.params", "scheduler", "steps_per_print", "wall_clock_breakdown", "dump_state", "tensorboard",
	"wandb", "csv_monitor", "comet", "comms_logger", "flops_profiler", "checkpoint", "memory_breakdown",
	"dataloader_drop_last", "zero_allow_untested_optimizer", "zero_force_ds_cpu_optimizer", "prescale_gradients",
	"gradient_predivide_factor", "fp16.loss_scale", "fp16.loss_scale_window", "fp16.initial_scale_power",
	"fp16.hysteresis", "fp16.consecutive_hysteresis", "fp16.min_loss_scale", "fp16.auto_cast",
	"bf16.immediate_grad_update", "zero_optimization.stage3_gather_16bit_weights_on_model_save",
	"zero_optimization.stage3_gather_fp16_weights_on_model_save", "zero_optimization.load_from_fp32_weights",
	"zero_optimization.elastic_checkpoint", "zero_optimization.ignore_unused_parameters",
	"zero_optimization.round_robin_gradients", "zero_optimization.sub_group_size",
	"zero_optimization.offload_optimizer.pin_memory", "zero_optimization.offload_optimizer.buffer_count",
	"zero_optimization.offload_optimizer.fast_init", "zero_optimization.offload_optimizer.nvme_path",
	"zero_optimization.offload_param.pin_memory", "zero_optimization.offload_param.buffer_count",
	"zero_optimization.offload_param.buffer_size", "zero_optimization.offload_param.max_in_cpu",
	"zero_optimization.offload_param.nvme_path", "activation_checkpointing.contiguous_memory_optimization",
	"activation_checkpointing.number_checkpoints", "activation_checkpointing.synchronize_checkpoint_boundary",
	"activation_checkpointing.profile", "aio", NULL
};

/* The preset's ZeRO-3 gather settings (framework.c, Z L205-234). */
static const struct {
	enum key_id k;
	double v;
	const char *where;
} preset3[] = {
	{ K_PREFETCH, 5e7, "5e7 elements (Z L205)" }, { K_LIVE, 1e9, "1e9 (Z L228)" },
	{ K_REUSE, 1e9, "1e9 (Z L234)" }, { K_PERSIST, 1e5, "1e5 (Z L211)" },
};

struct ds {
	const char *file;
	struct diag *d;
	struct import_map *map;
	json_t *v[K_N];
};

static bool in_ignored(const char *path)
{
	for (const char *const *p = ignored; *p; p++) {
		size_t n = strlen(*p);
		if (!strncmp(path, *p, n) && (!path[n] || path[n] == '.'))
			return true;
	}
	return false;
}

/* The JSON path of a dotted key ("zero_optimization.stage" ->
 * "/zero_optimization/stage") into buf. */
static const char *jp(const char *key, char *buf, size_t n)
{
	snprintf(buf, n, "/%s", key);
	for (char *p = buf; *p; p++)
		if (*p == '.')
			*p = '/';
	return buf;
}

static int err(struct ds *s, enum key_id k, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int err(struct ds *s, enum key_id k, const char *fmt, ...)
{
	char msg[512], p[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return diag_err(s->d, s->file, (int)k >= 0 ? jp(keys[k], p, sizeof(p)) : "", "%s", msg);
}

/* The value as written, for the table (caller frees). */
static char *text(const json_t *v)
{
	if (!v)
		return xstrdup("");
	if (json_is_string(v))
		return xstrdup(json_string_value(v));
	char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(12));
	return s ? s : xstrdup("?");
}

static void row(struct ds *s, enum import_status st, const char *source, const json_t *v, const char *key,
		const char *written, const char *note)
{
	char *t = text(v);
	import_map_add(s->map, st, source, t, key, written, note);
	free(t);
}

/* Walk the config, every leaf (an object's non-object values; a known
 * object key itself) into v[] or a row. */
static void classify(struct ds *s, json_t *o, const char *prefix)
{
	const char *k;
	json_t *v;
	json_object_foreach(o, k, v) {
		char path[256];
		snprintf(path, sizeof(path), "%s%s%s", prefix, *prefix ? "." : "", k);
		int id;
		for (id = 0; id < K_N; id++)
			if (!strcmp(keys[id], path))
				break;
		if (id == K_ZERO && json_is_boolean(v)) {
			s->v[K_ZERO] = v;
			continue;
		}
		if (id == K_AC)
			s->v[K_AC] = v;
		if (json_is_object(v) && !in_ignored(path)) {
			classify(s, v, path);
			continue;
		}
		if (id < K_N && id != K_AC && id != K_ZERO)
			s->v[id] = v;
		else if (in_ignored(path))
			row(s, IMPORT_IGNORED, path, v, "", "", NULL);
		else
			row(s, IMPORT_UNKNOWN, path, v, "", "", "ddlsim does not know it: not applied");
	}
}

/* An integer key >= min, or dflt when absent; -1 after an error. */
static long ival(struct ds *s, enum key_id k, long dflt, long min)
{
	json_t *v = s->v[k];
	if (!v)
		return dflt;
	if (json_is_string(v) && !strcmp(json_string_value(v), "auto")) {
		err(s, k, "'auto' is the Hugging Face Trainer's placeholder, filled from its arguments: give the number");
		return -1;
	}
	double x = json_is_number(v) ? json_number_value(v) : -1;
	if (!json_is_number(v) || x != (double)(long)x || x < (double)min) {
		char *t = text(v);
		err(s, k, "expected an integer >= %ld, got '%s'", min, t);
		free(t);
		return -1;
	}
	return (long)x;
}

static int bval(struct ds *s, enum key_id k)
{
	json_t *v = s->v[k];
	if (!v)
		return 0;
	if (json_is_string(v) && !strcmp(json_string_value(v), "auto"))
		return err(s, k, "'auto' is the Hugging Face Trainer's placeholder, filled from its arguments: give "
			   "true or false");
	if (!json_is_boolean(v)) {
		char *t = text(v);
		err(s, k, "expected true or false, got '%s'", t);
		free(t);
		return -1;
	}
	return json_is_true(v);
}

/* Set path in sc to v (taken), with a row for key k. */
static void put(struct ds *s, json_t *sc, const char *path, json_t *v, enum key_id k, enum import_status st,
		const char *note)
{
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", path + 1);
	char *slash = strchr(buf, '/');
	json_t *o = sc;
	if (slash) {
		*slash = 0;
		if (!json_object_get(sc, buf))
			json_object_set_new(sc, buf, json_object());
		o = json_object_get(sc, buf);
	}
	char *w = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
	char key[160];
	snprintf(key, sizeof(key), "scenario: %s", path);
	if (st == IMPORT_MAPPED && !s->v[k])
		st = IMPORT_DEFAULT;
	row(s, st, keys[k], s->v[k], key, w, note);
	free(w);
	json_object_set_new(o, slash ? slash + 1 : buf, v);
}

/* The world size: --nodes, else train / (micro x accum) GPUs, into *dp
 * and *nodes, and how into note. Returns 0 or err(). */
static int batch_world(struct ds *s, const struct import_cluster *c, long t, long m, long a, long *dp, long *nodes,
		       char *note, size_t n)
{
	if (c->nodes > 0) {
		*dp = c->nodes * c->gpus_per_node;
		*nodes = c->nodes;
		snprintf(note, n, "--nodes %ld x %ld GPUs per node: the config holds no model parallelism, "
			 "dp is the world (C L729)", c->nodes, c->gpus_per_node);
		return 0;
	}
	if (!(t && m && a))
		return err(s, -1, "the world size is the launcher's, not the config's: give --nodes (or all of "
			   "train_batch_size, train_micro_batch_size_per_gpu and gradient_accumulation_steps)");
	if (t % (m * a))
		return err(s, K_TRAIN, "%ld is not a multiple of train_micro_batch_size_per_gpu %ld x "
			   "gradient_accumulation_steps %ld (runtime/config.py L929)", t, m, a);
	*dp = t / (m * a);
	if (*dp % c->gpus_per_node)
		return err(s, K_TRAIN, "dp = train_batch_size / (micro x accumulation) = %ld GPUs does not fill "
			   "nodes of %ld GPUs: give --nodes", *dp, c->gpus_per_node);
	*nodes = *dp / c->gpus_per_node;
	snprintf(note, n, "train / (micro x accum) = %ld GPUs / %ld GPUs per node", *dp, c->gpus_per_node);
	return 0;
}

/* The batch sizes the config leaves out (0) from those it gives, as
 * DeepSpeed fills them (C L948-972); how[0..2] (train, micro, accum) get
 * the rule of each one filled. */
static void batch_fill(long *t, long *m, long *a, long dp, const char *how[3])
{
	if (*t && *m && !*a)
		*a = *t / *m / dp, how[2] = "train / micro / dp (runtime/config.py L948-950)";
	else if (*t && *a && !*m)
		*m = *t / dp / *a, how[1] = "train / dp / accum (runtime/config.py L954-956)";
	else if (*m && *a && !*t)
		*t = *m * *a * dp, how[0] = "micro x accum x dp (runtime/config.py L960-962)";
	else if (*t && !*m && !*a)
		*a = 1, *m = *t / dp, how[2] = "1 (runtime/config.py L966)", how[1] = "train / dp (runtime/config.py L967)";
	else if (*m && !*t && !*a)
		*a = 1, *t = *m * dp, how[2] = "1 (runtime/config.py L972)", how[0] = "micro x dp (runtime/config.py L971)";
}

/* The world size and the batch: DeepSpeed's rules (C L934-981). */
static int map_batch(struct ds *s, json_t *sc, const struct import_cluster *c)
{
	long t = ival(s, K_TRAIN, 0, 1), m = ival(s, K_MICRO, 0, 1), a = ival(s, K_ACCUM, 0, 1);
	if (t < 0 || m < 0 || a < 0)
		return -1;
	if (!t && !m)
		return err(s, -1, "neither train_batch_size nor train_micro_batch_size_per_gpu is given: DeepSpeed needs "
			   "one (runtime/config.py L976)");
	long dp = 0, nodes = 0;
	char note[200], w[32];
	if (batch_world(s, c, t, m, a, &dp, &nodes, note, sizeof(note)))
		return -1;
	json_object_set_new(sc, "nodes", json_integer(nodes));
	snprintf(w, sizeof(w), "%ld", nodes);
	import_map_add(s->map, IMPORT_DERIVED, "(world size)", "", "scenario: /nodes", w, note);
	json_t *par = json_object_get(sc, "parallel");
	json_object_set_new(par, "dp", json_integer(dp));
	snprintf(w, sizeof(w), "%ld", dp);
	import_map_add(s->map, IMPORT_DERIVED, "(data parallel)", "", "scenario: /parallel/dp", w,
		       "the world size: no tensor or pipeline parallelism in a DeepSpeed config");
	const char *how[3] = { NULL, NULL, NULL };
	batch_fill(&t, &m, &a, dp, how);
	if (m < 1 || a < 1)
		return err(s, K_TRAIN, "%ld over dp %ld leaves %s below 1 (runtime/config.py L925-927)", t, dp,
			   m < 1 ? "train_micro_batch_size_per_gpu" : "gradient_accumulation_steps");
	if (t != m * a * dp)
		return err(s, K_TRAIN, "%ld is not train_micro_batch_size_per_gpu %ld x gradient_accumulation_steps %ld x "
			   "dp %ld = %ld (runtime/config.py L929)", t, m, a, dp, m * a * dp);
	put(s, sc, "/training/global_batch", json_integer(t), K_TRAIN, how[0] ? IMPORT_DERIVED : IMPORT_MAPPED, how[0]);
	put(s, sc, "/training/micro_batch", json_integer(m), K_MICRO, how[1] ? IMPORT_DERIVED : IMPORT_MAPPED, how[1]);
	snprintf(w, sizeof(w), "%ld", a);
	row(s, how[2] ? IMPORT_DERIVED : IMPORT_MAPPED, keys[K_ACCUM], s->v[K_ACCUM], "scenario: /training/global_batch",
	    w, how[2] ? how[2] : "global / (micro x dp) micro-batches per step");
	return 0;
}

/* communication_data_type: the reduction's dtype. Returns the bytes of a
 * reduced element (absent: bytes, the parameters'), 0 after an error. */
static int map_comm_dtype(struct ds *s, json_t *sc, int bytes)
{
	json_t *cd = s->v[K_COMM_DTYPE];
	if (!cd) {
		import_map_add(s->map, IMPORT_DEFAULT, keys[K_COMM_DTYPE], "", "scenario: /framework", "",
			       "absent: the model's dtype (constants.py L240, engine.py L866): the preset's");
		return bytes;
	}
	const char *c = json_is_string(cd) ? json_string_value(cd) : "";
	const char *g = !strcmp(c, "fp32") ? "fp32" : !strcmp(c, "fp16") ? "fp16" : !strcmp(c, "bf16") ? "bf16" : NULL;
	if (!g) {
		char *t = text(cd);
		err(s, K_COMM_DTYPE, "expected fp32, fp16 or bf16, got '%s'", t);
		free(t);
		return 0;
	}
	put(s, sc, "/training/grad_reduce_dtype", json_string(g), K_COMM_DTYPE, IMPORT_MAPPED, NULL);
	return strcmp(g, "fp32") ? 2 : 4;
}

/* The key whose row carries the precision: the one set true (bk for
 * bf16), else the first given, else fp16. */
static enum key_id precision_key(const struct ds *s, int bf, int fp, enum key_id bk)
{
	if (bf)
		return bk;
	if (fp)
		return K_FP16;
	return s->v[K_BF16] ? K_BF16 : s->v[K_BF16_OLD] ? K_BF16_OLD : K_FP16;
}

/* Precision and the reduction's dtype; returns the bytes of a reduced
 * element, 0 after an error. */
static int map_precision(struct ds *s, json_t *sc)
{
	int bf = bval(s, K_BF16), bfo = bval(s, K_BF16_OLD), fp = bval(s, K_FP16);
	if (bf < 0 || bfo < 0 || fp < 0)
		return 0;
	enum key_id bk = s->v[K_BF16] || !s->v[K_BF16_OLD] ? K_BF16 : K_BF16_OLD;
	bf = bf || bfo;
	if (bf && fp) {
		err(s, K_FP16, "not with %s true: DeepSpeed refuses both (runtime/config.py L833)", keys[bk]);
		return 0;
	}
	const char *prec = bf ? "bf16" : fp ? "fp16" : "fp32";
	enum key_id pk = precision_key(s, bf, fp, bk);
	put(s, sc, "/training/precision", json_string(prec), pk, IMPORT_MAPPED,
	    bf || fp ? NULL : "absent or false: fp32 (constants.py L127, L154)");
	static const enum key_id pks[] = { K_BF16, K_BF16_OLD, K_FP16 };
	for (size_t i = 0; i < sizeof(pks) / sizeof(pks[0]); i++)
		if (pks[i] != pk && s->v[pks[i]])
			row(s, IMPORT_MAPPED, keys[pks[i]], s->v[pks[i]], "scenario: /training/precision", "",
			    "with the other precision keys");
	return map_comm_dtype(s, sc, bf || fp ? 2 : 4);
}

/* The ZeRO stage (zero_optimization.stage, or the old boolean form),
 * the key that gave it (*sk) and its note. Returns it, or -1 (after
 * err() for a stage above 3). */
static long zero_stage(struct ds *s, enum key_id *sk, const char **snote)
{
	long stage = 0;
	*snote = "absent: 0 (zero/config.py L88)";
	*sk = K_STAGE;
	if (s->v[K_STAGE]) {
		stage = ival(s, K_STAGE, 0, 0);
		if (stage > 3) {
			err(s, K_STAGE, "expected 0, 1, 2 or 3, got %ld (runtime/config.py L1015)", stage);
			return -1;
		}
		*snote = NULL;
	} else if (s->v[K_ZERO]) {
		stage = json_is_true(s->v[K_ZERO]);
		*sk = K_ZERO;
		*snote = "the old boolean form: true is stage 1 (zero/config.py L55)";
	}
	return stage;
}

/* reduce_bucket_size as ddlsim's bucket, gbytes bytes an element of the
 * reduced dtype (0: unknown). */
static void zero_reduce_bucket(struct ds *s, json_t *sc, long stage, int gbytes)
{
	char note[200];
	long rb = ival(s, K_REDUCE_BUCKET, 500000000, 0);
	if (rb >= 0 && s->v[K_REDUCE_BUCKET] && stage == 0) {
		row(s, IMPORT_IGNORED, keys[K_REDUCE_BUCKET], s->v[K_REDUCE_BUCKET], "", "",
		    "stage 0 reduces in buckets of 5e8 elements (engine.py L109, L1960), not this key's");
	} else if (rb >= 0 && s->v[K_REDUCE_BUCKET] && gbytes) {
		snprintf(note, sizeof(note), "%ld elements x %d bytes of the reduced dtype", rb, gbytes);
		put(s, sc, "/communication/bucket_MB", json_real((double)rb * gbytes / 1e6), K_REDUCE_BUCKET, IMPORT_MAPPED,
		    note);
	} else if (rb >= 0) {
		import_map_add(s->map, IMPORT_DEFAULT, keys[K_REDUCE_BUCKET], "", "scenario: /framework", "",
			       "absent: 5e8 elements (zero/config.py L106): the preset's");
	}
}

/* The all-gather bucket, contiguous gradients and the reduce-scatter /
 * all-gather switches: rows only. */
static void zero_switches(struct ds *s)
{
	if (s->v[K_AG_BUCKET])
		row(s, IMPORT_IGNORED, keys[K_AG_BUCKET], s->v[K_AG_BUCKET], "", "",
		    "ddlsim has no all-gather bucket key: ZeRO-1/2's parameter all-gather is priced in the gradient "
		    "buckets, ZeRO-3's by the preset's prefetch window");
	if (s->v[K_CONTIG])
		row(s, IMPORT_IGNORED, keys[K_CONTIG], s->v[K_CONTIG], "", "",
		    "a copy into one buffer against fragmentation: ddlsim keeps no fragmentation but its reserve");
	for (int k = K_REDUCE_SCATTER; k <= K_AG_PARTITIONS; k++) {
		int b = bval(s, k);
		if (b > 0)
			row(s, IMPORT_MAPPED, keys[k], s->v[k], "scenario: /parallel/zero", "",
			    "DeepSpeed's default true (zero/config.py L101, L119): as ddlsim prices ZeRO");
		else if (!b && s->v[k])
			row(s, IMPORT_UNKNOWN, keys[k], s->v[k], "", "",
			    "false: all-reduce instead of reduce-scatter / all-gather, not modelled: not applied");
	}
}

/* Stage 3's keys the preset holds (preset3), and ZeRO++ hpZ: rows only. */
static void zero_stage3(struct ds *s, long stage)
{
	char note[200];
	for (size_t i = 0; i < sizeof(preset3) / sizeof(preset3[0]); i++) {
		enum key_id k = preset3[i].k;
		if (!s->v[k])
			continue;
		long x = ival(s, k, 0, 0);
		if (x < 0)
			continue;
		if (stage < 3)
			row(s, IMPORT_IGNORED, keys[k], s->v[k], "", "", "stage 3's only");
		else if ((double)x == preset3[i].v)
			row(s, IMPORT_MAPPED, keys[k], s->v[k], "scenario: /framework", "\"deepspeed@0.15\"",
			    preset3[i].where);
		else {
			snprintf(note, sizeof(note), "ddlsim's preset holds DeepSpeed's default %s; another value has no "
				 "key: not applied", preset3[i].where);
			row(s, IMPORT_UNKNOWN, keys[k], s->v[k], "", "", note);
		}
	}
	long hpz = ival(s, K_HPZ, 1, 0);
	if (hpz > 1)
		row(s, IMPORT_UNKNOWN, keys[K_HPZ], s->v[K_HPZ], "", "",
		    "ZeRO++ hpZ: a secondary copy of the parameters sharded within groups of this many ranks; ddlsim "
		    "has no shard-group key: ZeRO-3 priced over all dp ranks, not applied");
	else if (s->v[K_HPZ] && hpz >= 0)
		row(s, IMPORT_IGNORED, keys[K_HPZ], s->v[K_HPZ], "", "", "1 or 0: no secondary partition (zero/config.py "
		    "L283)");
}

/* The offload device of key k: its string, NULL when absent or not a
 * string. */
static const char *offload_device(const struct ds *s, enum key_id k)
{
	return s->v[k] && json_is_string(s->v[k]) ? json_string_value(s->v[k]) : NULL;
}

/* Whether key k is given and not an offload device (cpu, nvme, none). */
static bool offload_bad(const struct ds *s, enum key_id k, const char *dev)
{
	return s->v[k] && (!dev || (strcmp(dev, "cpu") && strcmp(dev, "nvme") && strcmp(dev, "none")));
}

/* offload_optimizer.device as ddlsim's offload. */
static void zero_offload_optimizer(struct ds *s, json_t *sc, long stage)
{
	const char *od = offload_device(s, K_OFF_OPT);
	if (offload_bad(s, K_OFF_OPT, od))
		err(s, K_OFF_OPT, "expected cpu, nvme or none (offload_config.py L14-18)");
	else if (od && !strcmp(od, "nvme"))
		err(s, K_OFF_OPT, "nvme: ZeRO-Infinity's NVMe offload is not modelled (ddlsim's offload is to host "
		    "memory over the host link); give cpu");
	else if (od && !strcmp(od, "cpu") && stage == 0)
		err(s, K_OFF_OPT, "cpu: needs zero_optimization.stage 1, 2 or 3 (zero/config.py L157-161)");
	else if (od && !strcmp(od, "cpu"))
		put(s, sc, "/parallel/offload", json_string("optimizer"), K_OFF_OPT, IMPORT_MAPPED,
		    "ZeRO-Offload: the optimizer state and step on the CPU");
	else if (od)
		row(s, IMPORT_MAPPED, keys[K_OFF_OPT], s->v[K_OFF_OPT], "scenario: /parallel/offload", "", "none");
}

/* offload_param.device: read at stage 3 only, where it is not modelled. */
static void zero_offload_param(struct ds *s, long stage)
{
	const char *pd = offload_device(s, K_OFF_PARAM);
	if (offload_bad(s, K_OFF_PARAM, pd))
		err(s, K_OFF_PARAM, "expected cpu, nvme or none (offload_config.py L14-18)");
	else if (pd && strcmp(pd, "none") && stage < 3)
		row(s, IMPORT_IGNORED, keys[K_OFF_PARAM], s->v[K_OFF_PARAM], "", "",
		    "read at stage 3 only (zero/config.py L150-153)");
	else if (pd && strcmp(pd, "none"))
		err(s, K_OFF_PARAM, "%s: parameter offload at ZeRO stage 3 is not modelled (ddlsim's optimizer+params "
		    "offload is below stage 3)", pd);
	else if (pd)
		row(s, IMPORT_MAPPED, keys[K_OFF_PARAM], s->v[K_OFF_PARAM], "scenario: /parallel/offload", "", "none");
}

/* MiCS (mics_shard_size > 0 at stage 3): ZeRO-3 over shard groups of
 * that many ranks, gradients all-reduced across them, as ddlsim's
 * parallel.shard_group; its hierarchical all-gather is not modelled. */
static void zero_mics(struct ds *s, json_t *sc, long stage)
{
	long n = ival(s, K_MICS, -1, -1);
	if (n > 0 && stage == 3)
		put(s, sc, "/parallel/shard_group", json_integer(n), K_MICS, IMPORT_MAPPED,
		    "MiCS: ZeRO-3 within shard groups of this many ranks, gradients all-reduced across them");
	else if (n > 0)
		row(s, IMPORT_IGNORED, keys[K_MICS], s->v[K_MICS], "", "", "MiCS partitions at stage 3 only");
	else if (n == 0 || (n == -1 && s->v[K_MICS]))
		row(s, IMPORT_IGNORED, keys[K_MICS], s->v[K_MICS], "", "", "-1 or 0: no MiCS (zero/config.py)");
	int h = bval(s, K_MICS_HIER);
	if (h > 0)
		row(s, IMPORT_UNKNOWN, keys[K_MICS_HIER], s->v[K_MICS_HIER], "", "",
		    "MiCS's two-hop all-gather (inside then across nodes) is not modelled: the flat all-gather "
		    "within the shard group is priced");
	else if (h == 0 && s->v[K_MICS_HIER])
		row(s, IMPORT_MAPPED, keys[K_MICS_HIER], s->v[K_MICS_HIER], "", "", "false: the flat all-gather");
}

static void map_zero(struct ds *s, json_t *sc, int gbytes)
{
	enum key_id sk;
	const char *snote;
	long stage = zero_stage(s, &sk, &snote);
	if (stage < 0)
		return;
	put(s, sc, "/parallel/zero", json_integer(stage), sk, IMPORT_MAPPED, snote);
	int ov = bval(s, K_OVERLAP);
	if (ov >= 0)
		put(s, sc, "/communication/overlap_grad_reduce", json_boolean(s->v[K_OVERLAP] ? ov : stage == 3), K_OVERLAP,
		    IMPORT_MAPPED, s->v[K_OVERLAP] ? NULL : "absent: on at stage 3 only (zero/config.py L131, L325-327)");
	zero_reduce_bucket(s, sc, stage, gbytes);
	zero_switches(s);
	zero_stage3(s, stage);
	zero_mics(s, sc, stage);
	zero_offload_optimizer(s, sc, stage);
	zero_offload_param(s, stage);
}

static void map_rest(struct ds *s, json_t *sc)
{
	if (s->v[K_AC] && !json_is_object(s->v[K_AC])) {
		err(s, K_AC, "expected an object");
	} else if (s->v[K_AC]) {
		put(s, sc, "/parallel/recompute", json_string("full"), K_AC, IMPORT_MAPPED,
		    "configures deepspeed.checkpointing, which the model calls per layer: every layer recomputed");
		if (bval(s, K_AC_PARTITION) > 0)
			row(s, IMPORT_IGNORED, keys[K_AC_PARTITION], s->v[K_AC_PARTITION], "", "",
			    "partitions checkpoints over model-parallel ranks: the config holds none (tp 1)");
		else if (s->v[K_AC_PARTITION])
			row(s, IMPORT_IGNORED, keys[K_AC_PARTITION], s->v[K_AC_PARTITION], "", "",
			    "off (activation_checkpointing/config.py L28)");
		if (bval(s, K_AC_CPU) > 0)
			row(s, IMPORT_UNKNOWN, keys[K_AC_CPU], s->v[K_AC_CPU], "", "",
			    "checkpoints kept in host memory: not modelled, not applied");
		else if (s->v[K_AC_CPU])
			row(s, IMPORT_IGNORED, keys[K_AC_CPU], s->v[K_AC_CPU], "", "",
			    "off (activation_checkpointing/config.py L43)");
	} else {
		import_map_add(s->map, IMPORT_DEFAULT, keys[K_AC], "", "scenario: /parallel/recompute", "\"none\"",
			       "absent: no recompute");
		json_object_set_new(json_object_get(sc, "parallel"), "recompute", json_string("none"));
	}
	if (s->v[K_CLIP])
		row(s, IMPORT_IGNORED, keys[K_CLIP], s->v[K_CLIP], "", "",
		    "a norm over the gradients and a scale: no cost ddlsim prices");
	json_t *o = s->v[K_OPT];
	const char *ot = o && json_is_string(o) ? json_string_value(o) : NULL;
	if (o && !ot)
		err(s, K_OPT, "expected a string");
	else if (ot && (!strcasecmp(ot, "adam") || !strcasecmp(ot, "adamw")))
		put(s, sc, "/training/optimizer", json_string("adam"), K_OPT, IMPORT_MAPPED,
		    "mixed-precision Adam (its name lowered, runtime/config.py L846-847)");
	else if (ot)
		row(s, IMPORT_UNKNOWN, keys[K_OPT], o, "", "", "not Adam: priced as Adam (ddlsim's only optimizer)");
	else
		import_map_add(s->map, IMPORT_DEFAULT, keys[K_OPT], "", "scenario: /training/optimizer", "",
			       "absent: the client's optimizer (constants.py L60): priced as Adam");
}

int import_deepspeed(const char *path, const struct import_cluster *c, long seq_len, struct import_map *map,
		     json_t **scenario, struct diag *d)
{
	struct ds s = { .file = path, .d = d, .map = map };
	int errs = diag_count(d);
	*scenario = NULL;
	json_t *root = jload_file(path, d);
	if (!root)
		return -1;
	if (!json_is_object(root)) {
		diag_err(d, path, "", "expected a JSON object (a DeepSpeed config), got %s", jload_type_name(root));
		json_decref(root);
		return -1;
	}
	classify(&s, root, "");
	json_t *sc = json_object();
	json_object_set_new(sc, "schema", json_string("ddlsim.scenario"));
	json_object_set_new(sc, "schema_version", json_string("1.0"));
	char *desc = xasprintf("DeepSpeed config (%s), imported by ddlsim import with DeepSpeed v0.15.0's defaults",
			       path);
	json_object_set_new(sc, "description", json_string(desc));
	free(desc);
	json_object_set_new(sc, "model", json_string(""));
	json_object_set_new(sc, "topology", json_string(c->topology));
	json_object_set_new(sc, "framework", json_string("deepspeed@0.15"));
	import_map_add(map, IMPORT_DERIVED, "(framework)", "", "scenario: /framework", "\"deepspeed@0.15\"",
		       "the engine's defaults the config leaves (models/framework.c), its kernel stack deepspeed");
	json_object_set_new(sc, "parallel", json_object());
	json_object_set_new(sc, "training", json_object());
	char w[32];
	snprintf(w, sizeof(w), "%ld", seq_len);
	json_object_set_new(json_object_get(sc, "training"), "seq_len", json_integer(seq_len));
	import_map_add(map, IMPORT_MAPPED, "(--seq-len)", w, "scenario: /training/seq_len", w,
		       "a DeepSpeed config holds no sequence length");
	if (!map_batch(&s, sc, c)) {
		int gbytes = map_precision(&s, sc);
		map_zero(&s, sc, gbytes);
		map_rest(&s, sc);
	}
	json_decref(root);
	if (diag_count(d) > errs) {
		json_decref(sc);
		return -1;
	}
	*scenario = sc;
	return 0;
}
