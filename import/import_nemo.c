/* import_nemo: a NeMo 2 recipe printed as YAML as a ddlsim scenario and
 * its model, read through Megatron-LM's flags.
 *
 * A NeMo 2 recipe (nemo/collections/llm/recipes/<model>.py) is a tree of
 * configs: trainer (Lightning's, with a MegatronStrategy and a precision
 * plugin), model (a GPTModel whose config is a Megatron-Core
 * TransformerConfig), data, optim (Megatron-Core's OptimizerConfig), as
 * nemo_run prints it or NeMo saves it (nemo/lightning/io/mixin.py L213-272,
 * every field with its value). Its keys are Megatron-Core's, so each
 * becomes the Megatron-LM flag of the same field and import_megatron.c
 * maps and checks them: its defaults (Megatron-LM core_v0.9.0, the
 * Megatron-Core NeMo 2.0 pins) and its refusals are this importer's, with
 * the NeMo key named in every row and message. Lines below are NeMo's at
 * tag v2.0.0 (github.com/NVIDIA/NeMo, commit e938df3, the version the
 * framework preset "nemo@2.0" cites): LL L<n> is
 * nemo/collections/llm/gpt/model/llama.py, GB L<n>
 * nemo/collections/llm/gpt/model/base.py, SL L<n> nemo/lightning/_strategy_lib.py,
 * MP L<n> nemo/lightning/pytorch/plugins/mixed_precision.py, MS L<n>
 * nemo/lightning/pytorch/strategies/megatron_strategy.py. A
 * Megatron-Bridge config (github.com/NVIDIA-NeMo/Megatron-Bridge, commit
 * 067f987, its ConfigContainer: src/megatron/bridge/training/config.py,
 * MB L962-1011) is read too: its model.X is model.config.X, train.* and
 * dataset.seq_length are data.*, ddp.* trainer.strategy.ddp.*, optimizer.*
 * optim.config.*, mixed_precision (a recipe name: bf16_mixed, fp16_mixed)
 * trainer.plugins.precision and its fp8, fp8_param_gather,
 * grad_reduce_in_fp32 the plugin's; the rows keep the file's names.
 *
 *   key                                          Megatron-LM flag (ddlsim key)            rule
 *   model.config._target_                        the class's fields where absent          Llama2Config7B, 13B, 70B
 *                                                                                         (LL L60-84), Llama3Config8B,
 *                                                                                         70B (LL L87-148); vocabulary
 *                                                                                         the tokenizer's
 *   model.config.num_layers, hidden_size, ffn_hidden_size, num_attention_heads, kv_channels
 *                                                --num-layers, ... (model)
 *   model.config.num_query_groups                --group-query-attention --num-query-groups
 *   model.config.seq_length                      --max-position-embeddings; the sequence  GPTConfig 1024 (GB L168)
 *                                                without data.seq_length
 *   model.config.vocab_size                      model vocab_size, as given (GB L196)     the tokenizer's, padded to
 *                                                                                         128 tp (GB L203)
 *   model.config.make_vocab_size_divisible_by    --make-vocab-size-divisible-by           128 (GB L163)
 *   model.config.normalization, position_embedding_type, attention_dropout, hidden_dropout
 *                                                --normalization, ...
 *   model.config.gated_linear_unit true          --swiglu
 *   model.config.add_bias_linear false           --disable-bias-linear
 *   model.config.share_embeddings_and_output_weights false
 *                                                --untie-embeddings-and-output-weights
 *   model.config.qk_layernorm, num_moe_experts, moe_router_topk, moe_ffn_hidden_size,
 *   moe_token_dispatcher_type                    --qk-layernorm, --num-experts, ...
 *   model.config.recompute_granularity, recompute_method, recompute_num_layers
 *                                                --recompute-granularity, ... (parallel.recompute)
 *   model.config.tp_comm_overlap                 --tp-comm-overlap
 *   trainer.strategy.tensor_model_parallel_size, pipeline_model_parallel_size,
 *   context_parallel_size, expert_model_parallel_size, sequence_parallel
 *                                                --tensor-model-parallel-size, ...        1, off (MS L168-173); they
 *                                                                                         override model.config's (SL
 *                                                                                         L131-146)
 *   trainer.strategy.virtual_pipeline_model_parallel_size V
 *                                                --num-layers-per-virtual-pipeline-stage  None (MS L170)
 *                                                layers / pp / V
 *   trainer.strategy.ddp.overlap_grad_reduce, overlap_param_gather
 *                                                --overlap-grad-reduce, ...
 *   trainer.plugins.precision (trainer.precision) bf16-mixed: --bf16; 16-mixed: --fp16    fp32 (no --bf16, --fp16);
 *                                                                                         its values MP L75, L108-112
 *   trainer.plugins.fp8 (model.config.fp8)       --fp8-format                             None; the plugin's wins
 *                                                                                         (MP L227)
 *   trainer.plugins.fp8_params                   --fp8-param-gather                       False (MP L89)
 *   trainer.plugins.grad_reduce_in_fp32 (trainer.strategy.ddp.grad_reduce_in_fp32)
 *                                                --accumulate-allreduce-grads-in-fp32     True with a plugin (MP L80);
 *                                                                                         without, bf16 forces it
 *   optim.config.use_distributed_optimizer       --use-distributed-optimizer (zero 1)
 *   data.seq_length, micro_batch_size, global_batch_size
 *                                                --seq-length, --micro-batch-size, --global-batch-size
 *   trainer.devices, trainer.num_nodes           (scenario nodes)                         the topology's, 1 (Lightning)
 *
 * A key in parentheses is read where the first is absent; when both are
 * given the first wins and the other is listed as ignored, as NeMo
 * overrides it. trainer.devices must be the topology's GPUs per node;
 * --nodes, when given, must equal trainer.num_nodes. The scenario names
 * framework "nemo@2.0". Refused: what import_megatron.c refuses (a
 * contradiction names the NeMo key), a class ddlsim holds no fields of
 * with the architecture keys absent, a value that is not a plain word.
 * Logging, checkpoints, callbacks, the scheduler and the classes'
 * _target_ are listed as ignored; any other key as unknown. */
#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"
#include "xalloc.h"
#include "yaml.h"

enum xkind { X_INT, X_NUM, X_STR, X_TRUE, X_FALSE, X_GQA, X_VPP, X_PREC };

/* A NeMo key (and the keys read where it is absent) and its flag. */
static const struct xlate {
	const char *key[3];
	const char *flag;
	enum xkind kind;
	const char *why;            /* why the first key wins over the others */
} xl[] = {
	{ { "model.config.num_layers" }, "--num-layers", X_INT, NULL },
	{ { "model.config.hidden_size" }, "--hidden-size", X_INT, NULL },
	{ { "model.config.ffn_hidden_size" }, "--ffn-hidden-size", X_INT, NULL },
	{ { "model.config.num_attention_heads" }, "--num-attention-heads", X_INT, NULL },
	{ { "model.config.num_query_groups" }, "--num-query-groups", X_GQA, NULL },
	{ { "model.config.kv_channels" }, "--kv-channels", X_INT, NULL },
	{ { "model.config.seq_length" }, "--max-position-embeddings", X_INT, NULL },
	{ { "data.seq_length", "model.config.seq_length" }, "--seq-length", X_INT,
	  "the data module's sequence is the batch's" },
	{ { "model.config.vocab_size" }, "--vocab-size", X_INT, NULL },
	{ { "model.config.make_vocab_size_divisible_by" }, "--make-vocab-size-divisible-by", X_INT, NULL },
	{ { "model.config.normalization" }, "--normalization", X_STR, NULL },
	{ { "model.config.gated_linear_unit" }, "--swiglu", X_TRUE, NULL },
	{ { "model.config.add_bias_linear" }, "--disable-bias-linear", X_FALSE, NULL },
	{ { "model.config.share_embeddings_and_output_weights" }, "--untie-embeddings-and-output-weights", X_FALSE,
	  NULL },
	{ { "model.config.position_embedding_type" }, "--position-embedding-type", X_STR, NULL },
	{ { "model.config.attention_dropout" }, "--attention-dropout", X_NUM, NULL },
	{ { "model.config.hidden_dropout" }, "--hidden-dropout", X_NUM, NULL },
	{ { "model.config.qk_layernorm" }, "--qk-layernorm", X_TRUE, NULL },
	{ { "model.config.num_moe_experts" }, "--num-experts", X_INT, NULL },
	{ { "model.config.moe_router_topk" }, "--moe-router-topk", X_INT, NULL },
	{ { "model.config.moe_ffn_hidden_size" }, "--moe-ffn-hidden-size", X_INT, NULL },
	{ { "model.config.moe_token_dispatcher_type" }, "--moe-token-dispatcher-type", X_STR, NULL },
	{ { "model.config.recompute_granularity" }, "--recompute-granularity", X_STR, NULL },
	{ { "model.config.recompute_method" }, "--recompute-method", X_STR, NULL },
	{ { "model.config.recompute_num_layers" }, "--recompute-num-layers", X_INT, NULL },
	{ { "model.config.tp_comm_overlap" }, "--tp-comm-overlap", X_TRUE, NULL },
	{ { "trainer.strategy.tensor_model_parallel_size", "model.config.tensor_model_parallel_size" },
	  "--tensor-model-parallel-size", X_INT, "the strategy's overrides the model config's (_strategy_lib.py L144)" },
	{ { "trainer.strategy.pipeline_model_parallel_size", "model.config.pipeline_model_parallel_size" },
	  "--pipeline-model-parallel-size", X_INT, "the strategy's overrides the model config's (_strategy_lib.py L144)" },
	{ { "trainer.strategy.virtual_pipeline_model_parallel_size", "model.config.virtual_pipeline_model_parallel_size" },
	  "--num-layers-per-virtual-pipeline-stage", X_VPP,
	  "the strategy's overrides the model config's (_strategy_lib.py L144)" },
	{ { "trainer.strategy.context_parallel_size", "model.config.context_parallel_size" }, "--context-parallel-size",
	  X_INT, "the strategy's overrides the model config's (_strategy_lib.py L144)" },
	{ { "trainer.strategy.expert_model_parallel_size", "model.config.expert_model_parallel_size" },
	  "--expert-model-parallel-size", X_INT, "the strategy's overrides the model config's (_strategy_lib.py L144)" },
	{ { "trainer.strategy.sequence_parallel", "model.config.sequence_parallel" }, "--sequence-parallel", X_TRUE,
	  "the strategy's overrides the model config's (_strategy_lib.py L144)" },
	{ { "trainer.strategy.ddp.overlap_grad_reduce" }, "--overlap-grad-reduce", X_TRUE, NULL },
	{ { "trainer.strategy.ddp.overlap_param_gather" }, "--overlap-param-gather", X_TRUE, NULL },
	{ { "trainer.plugins.precision", "trainer.precision", "model.config.bf16" }, "--bf16", X_PREC,
	  "the precision plugin's sets the model config's (mixed_precision.py L227)" },
	{ { "trainer.plugins.fp8", "model.config.fp8" }, "--fp8-format", X_STR,
	  "the precision plugin's sets the model config's (mixed_precision.py L227)" },
	{ { "trainer.plugins.fp8_params", "model.config.fp8_param_gather" }, "--fp8-param-gather", X_TRUE,
	  "the precision plugin's sets the model config's (mixed_precision.py L227)" },
	{ { "trainer.plugins.grad_reduce_in_fp32", "trainer.strategy.ddp.grad_reduce_in_fp32" },
	  "--accumulate-allreduce-grads-in-fp32", X_TRUE,
	  "the precision plugin's overrides the DDP config's (mixed_precision.py L217-227)" },
	{ { "optim.config.use_distributed_optimizer", "trainer.strategy.ddp.use_distributed_optimizer" },
	  "--use-distributed-optimizer", X_TRUE, "the optimizer config's is copied into the DDP config" },
	{ { "data.micro_batch_size" }, "--micro-batch-size", X_INT, NULL },
	{ { "data.global_batch_size" }, "--global-batch-size", X_INT, NULL },
};
#define NXL (sizeof(xl) / sizeof(xl[0]))
/* Entries the code names. */
enum { XL_GQA = 4, XL_MAXPOS = 6, XL_SEQ = 7, XL_VOCAB = 8, XL_PREC = 34, XL_GRF = 37 };

/* Keys (by prefix, or a last component) with no effect on time or memory. */
static const char *const ignored[] = {
	"log", "resume", "trainer.callbacks", "trainer.max_steps", "trainer.max_epochs", "trainer.val_check_interval",
	"trainer.limit_val_batches", "trainer.limit_test_batches", "trainer.log_every_n_steps", "trainer.accelerator",
	"trainer.use_distributed_sampler", "trainer.enable_checkpointing", "trainer.accumulate_grad_batches",
	"trainer.plugins.pipeline_dtype", "trainer.logger",
	"trainer.num_sanity_val_steps", "trainer.strategy.gradient_as_bucket_view", "trainer.strategy.ckpt_async_save",
	"trainer.strategy.ckpt_parallel_load", "trainer.strategy.ckpt_parallel_save", "trainer.strategy.save_ckpt_format",
	"trainer.strategy.pipeline_dtype", "trainer.strategy.ddp.check_for_nan_in_grad",
	"trainer.strategy.ddp.average_in_collective", "trainer.plugins.params_dtype", "trainer.plugins.autocast_enabled",
	"trainer.plugins.fp8_margin", "trainer.plugins.fp8_amax_history_len", "trainer.plugins.fp8_amax_compute_algo",
	"trainer.plugins.fp16_loss_scale", "trainer.plugins.fp16_initial_loss_scale", "trainer.plugins.fp16_min_loss_scale",
	"trainer.plugins.fp16_loss_scale_window", "trainer.plugins.fp16_hysteresis", "optim.config.lr",
	"optim.config.min_lr", "optim.config.weight_decay", "optim.config.adam_beta1", "optim.config.adam_beta2",
	"optim.config.adam_eps", "optim.config.clip_grad", "optim.config.bf16", "optim.config.fp16", "optim.lr_scheduler",
	"data.tokenizer", "data.seed", "data.num_workers", "data.pin_memory", "data.persistent_workers", "data.paths",
	"data.split", "data.num_train_samples", "model.tokenizer", "model.optim", "model.config.init_method_std",
	"model.config.rotary_base", "model.config.rotary_percent", "model.config.layernorm_epsilon",
	"model.config.bias_activation_fusion", "model.config.masked_softmax_fusion", "model.config.persist_layer_norm",
	"model.config.bias_dropout_fusion", "model.config.bias_dropout_add_fusion", "model.config.apply_rope_fusion",
	"model.config.cross_entropy_loss_fusion", "model.config.gradient_accumulation_fusion",
	"model.config.activation_func", "model.config.scale_factor", "model.config.low_freq_factor",
	"model.config.high_freq_factor", "model.config.old_context_len", "model.config.seq_len_interpolation_factor",
	"model.config.parallel_output", "model.config.transformer_layer_spec", "model.config.forward_step_fn",
	"model.config.data_step_fn", "model.config.fp16", "model.config.params_dtype", "model.config.pipeline_dtype",
	"model.config.use_transformer_engine_full_layer_spec",
	/* Megatron-Bridge's (MB L962-1011) */
	"train", "dataset", "scheduler", "checkpoint", "logger", "rng", "validation", "tokenizer", "dist", "profiling",
	"ft", "straggler", "nvrx_straggler", "rerun_state_machine", "env_vars", "inprocess_restart", "tensor_inspect",
	"optimizer_config_override_provider", NULL
};

/* Model config classes: their architecture where the YAML leaves it. */
static const struct cls {
	const char *name, *where, *base;
	long layers, hidden, ffn, heads, groups, seq, vocab;
} classes[] = {
	{ "Llama2Config7B", "llama.py L60-66", "LlamaConfig, llama.py L40-56", 32, 4096, 11008, 32, 32, 4096, 32000 },
	{ "Llama2Config13B", "llama.py L69-75", "LlamaConfig, llama.py L40-56", 40, 5120, 13824, 40, 40, 4096, 32000 },
	{ "Llama2Config70B", "llama.py L78-84", "LlamaConfig, llama.py L40-56", 80, 8192, 28672, 64, 8, 4096, 32000 },
	{ "Llama3Config8B", "llama.py L130-136", "Llama3Config, llama.py L87-105", 32, 4096, 14336, 32, 8, 8192, 128256 },
	{ "Llama3Config70B", "llama.py L140-148", "Llama3Config, llama.py L87-105", 80, 8192, 28672, 64, 8, 8192, 128256 },
};

struct nm {
	const char *file;
	struct diag *d;
	struct import_map *map;
	const struct yaml *y;
	const struct yaml_kv *used[NXL];   /* the key each flag is read from */
	const struct cls *cls;
	const struct yaml_kv *cls_kv;
	char **lines;                      /* the launch text, by the YAML's lines */
	int *origin;                       /* the column of the value each line's flags came from */
	int nlines;
	char absent[NXL][160];             /* a flag's value not in the YAML: where it comes from */
};

/* The entry of flag in xl[]. */
static size_t xl_of(const char *flag)
{
	for (size_t x = 0; x < NXL; x++)
		if (!strcmp(xl[x].flag, flag))
			return x;
	assert(!"a flag of xl[]");
	return 0;
}

static const char *last_part(const char *key)
{
	const char *d = strrchr(key, '.');
	return d ? d + 1 : key;
}

static bool is_ignored(const char *key)
{
	const char *lp = last_part(key);
	if (!strcmp(lp, "_target_") || !strcmp(lp, "_call_"))
		return true;
	for (const char *const *p = ignored; *p; p++) {
		size_t n = strlen(*p);
		if (!strncmp(key, *p, n) && (!key[n] || key[n] == '.'))
			return true;
	}
	return false;
}

/* Place the words at line:col of the launch text (after what is there). */
static void place(struct nm *n, int line, int col, const char *words)
{
	if (line > n->nlines) {
		n->lines = xreallocarray(n->lines, (size_t)line, sizeof(char *));
		n->origin = xreallocarray(n->origin, (size_t)line, sizeof(int));
		for (int i = n->nlines; i < line; i++)
			n->lines[i] = xstrdup(""), n->origin[i] = 1;
		n->nlines = line;
	}
	char *l = n->lines[line - 1];
	int have = (int)strlen(l);
	if (!have)
		n->origin[line - 1] = col;
	char *s = have < col - 1 ? xasprintf("%s%*s%s", l, col - 1 - have, "", words) : xasprintf("%s %s", l, words);
	free(l);
	n->lines[line - 1] = s;
}

/* A value as one shell word. Returns NULL after an error. */
static const char *word(struct nm *n, const struct yaml_kv *v)
{
	const char *t = v->text;
	if (!*t || strpbrk(t, " \t\\'\"$#") || !strncmp(t, "--", 2)) {
		diag_err_at(n->d, n->file, v->line, v->col, "%s: expected a plain word, got '%s'", v->key, t);
		return NULL;
	}
	return t;
}

/* The flags of entry x, read from v, placed at v's line:col. */
static void emit(struct nm *n, size_t x, const struct yaml_kv *v)
{
	const struct xlate *e = &xl[x];
	char buf[256];
	if (v->type == YAML_NULL)
		return;
	switch (e->kind) {
	case X_INT:
		if (v->type != YAML_INT) {
			diag_err_at(n->d, n->file, v->line, v->col, "%s: expected an integer, got '%s'", v->key, v->text);
			return;
		}
		snprintf(buf, sizeof(buf), "%s %lld", e->flag, v->i);
		break;
	case X_NUM:
		if (v->type != YAML_INT && v->type != YAML_FLOAT) {
			diag_err_at(n->d, n->file, v->line, v->col, "%s: expected a number, got '%s'", v->key, v->text);
			return;
		}
		snprintf(buf, sizeof(buf), "%s %s", e->flag, v->text);
		break;
	case X_STR: {
		const char *w = word(n, v);
		if (!w)
			return;
		snprintf(buf, sizeof(buf), "%s %s", e->flag, w);
		break;
	}
	case X_TRUE:
	case X_FALSE:
		if (v->type != YAML_BOOL) {
			diag_err_at(n->d, n->file, v->line, v->col, "%s: expected true or false, got '%s'", v->key, v->text);
			return;
		}
		if (v->b != (e->kind == X_TRUE))
			return;
		snprintf(buf, sizeof(buf), "%s", e->flag);
		break;
	case X_GQA:
		if (v->type != YAML_INT) {
			diag_err_at(n->d, n->file, v->line, v->col, "%s: expected an integer, got '%s'", v->key, v->text);
			return;
		}
		snprintf(buf, sizeof(buf), "--group-query-attention --num-query-groups %lld", v->i);
		break;
	case X_VPP:
		return;         /* needs the layers and pp: vpp() */
	case X_PREC: {
		if (v->type == YAML_BOOL) {     /* model.config.bf16 */
			if (!v->b)
				return;
			snprintf(buf, sizeof(buf), "--bf16");
			break;
		}
		const char *p = v->text;
		if (!strcmp(p, "bf16-mixed") || !strcmp(p, "bf16") || !strcmp(p, "bf16_mixed"))
			snprintf(buf, sizeof(buf), "--bf16");
		else if (!strcmp(p, "16-mixed") || !strcmp(p, "16") || !strcmp(p, "fp16-mixed") || !strcmp(p, "fp16") ||
			 !strcmp(p, "fp16_mixed"))
			snprintf(buf, sizeof(buf), "--fp16");
		else if (!strcmp(p, "32") || !strcmp(p, "32-true") || !strcmp(p, "fp32"))
			return;
		else {
			diag_err_at(n->d, n->file, v->line, v->col, "%s: expected bf16-mixed, 16-mixed or 32 "
				    "(mixed_precision.py L75), got '%s'", v->key, p);
			return;
		}
		break;
	}
	}
	place(n, v->line, v->col, buf);
}

/* A Megatron-Bridge key as the NeMo recipe's (into buf): its
 * ConfigContainer (MB L962-1011) holds the same Megatron-Core fields under
 * other parents. Any other key as it is. */
static const char *canon(const char *key, char *buf, size_t size)
{
	static const struct {
		const char *from, *to;   /* a from ending in '.' is a prefix */
	} alias[] = {
		{ "train.micro_batch_size", "data.micro_batch_size" },
		{ "train.global_batch_size", "data.global_batch_size" },
		{ "dataset.seq_length", "data.seq_length" },
		{ "ddp.", "trainer.strategy.ddp." },
		{ "optimizer.", "optim.config." },
		{ "mixed_precision", "trainer.plugins.precision" },
		{ "mixed_precision.fp8", "trainer.plugins.fp8" },
		{ "mixed_precision.fp8_param_gather", "trainer.plugins.fp8_params" },
		{ "mixed_precision.grad_reduce_in_fp32", "trainer.plugins.grad_reduce_in_fp32" },
		{ "mixed_precision.bf16", "model.config.bf16" },
		{ "comm_overlap.tp_comm_overlap", "model.config.tp_comm_overlap" },
	};
	for (size_t i = 0; i < sizeof(alias) / sizeof(alias[0]); i++) {
		size_t l = strlen(alias[i].from);
		bool prefix = alias[i].from[l - 1] == '.';
		if (prefix ? !strncmp(key, alias[i].from, l) : !strcmp(key, alias[i].from)) {
			snprintf(buf, size, "%s%s", alias[i].to, prefix ? key + l : "");
			return buf;
		}
	}
	/* the model provider's fields are the model config's */
	if (!strncmp(key, "model.", 6) && strncmp(key, "model.config.", 13) && strcmp(key, "model._target_") &&
	    strncmp(key, "model.optim", 11) && strncmp(key, "model.tokenizer", 15)) {
		snprintf(buf, size, "model.config.%s", key + 6);
		return buf;
	}
	return key;
}

/* The entry whose key is key or a Megatron-Bridge alias of it, or NULL. */
static const struct yaml_kv *get(const struct nm *n, const char *key)
{
	char buf[256];
	for (int i = 0; i < yaml_count(n->y); i++)
		if (!strcmp(canon(yaml_at(n->y, i)->key, buf, sizeof(buf)), key))
			return yaml_at(n->y, i);
	return NULL;
}

static long int_of(const struct nm *n, const char *key, long dflt)
{
	const struct yaml_kv *v = get(n, key);
	return v && v->type == YAML_INT ? (long)v->i : dflt;
}

/* Sort every entry: a flag's key, the class, ignored or unknown. */
static void classify(struct nm *n)
{
	for (int i = 0; i < yaml_count(n->y); i++) {
		const struct yaml_kv *v = yaml_at(n->y, i);
		char buf[256];
		const char *key = canon(v->key, buf, sizeof(buf));
		if (!strcmp(key, "model.config._target_")) {
			const char *c = v->type == YAML_STRING ? last_part(v->str) : "";
			n->cls_kv = v;
			for (size_t k = 0; k < sizeof(classes) / sizeof(classes[0]); k++)
				if (!strcmp(c, classes[k].name))
					n->cls = &classes[k];
			continue;
		}
		bool found = false;
		for (size_t x = 0; x < NXL && !found; x++)
			for (int j = 0; j < 3 && xl[x].key[j]; j++) {
				if (strcmp(xl[x].key[j], key))
					continue;
				found = true;
				if (!n->used[x]) {
					n->used[x] = v;
				} else {
					char note[200];
					snprintf(note, sizeof(note), "%s is read: %s", n->used[x]->key, xl[x].why);
					import_map_add(n->map, IMPORT_IGNORED, v->key, v->text, "", "", note);
				}
				break;
			}
		if (found)
			continue;
		if (!strcmp(key, "trainer.devices") || !strcmp(key, "trainer.num_nodes"))
			continue;
		if (!strcmp(key, "optim.config.optimizer")) {
			bool adam = v->type == YAML_STRING && !strcmp(v->str, "adam");
			import_map_add(n->map, adam ? IMPORT_MAPPED : IMPORT_UNKNOWN, v->key, v->text,
				       adam ? "scenario: /training/optimizer" : "", adam ? "\"adam\"" : "",
				       adam ? NULL : "not Adam: priced as Adam (ddlsim's only optimizer)");
		} else if (is_ignored(key)) {
			import_map_add(n->map, IMPORT_IGNORED, v->key, v->text, "", "", NULL);
		} else {
			import_map_add(n->map, IMPORT_UNKNOWN, v->key, v->text, "", "", "ddlsim does not know it: not applied");
		}
	}
}

/* Place flag with words at the class's _target_ unless its key is given,
 * and say where its value comes from. */
static void from_class(struct nm *n, const char *flag, const char *words, const char *where)
{
	size_t x = xl_of(flag);
	if (n->used[x] && n->used[x]->type != YAML_NULL)
		return;
	place(n, n->cls_kv->line, n->cls_kv->col, words);
	snprintf(n->absent[x], sizeof(n->absent[x]), "absent: %s (%s)", n->cls->name, where);
}

/* The class's fields where the YAML leaves them, placed at _target_. */
static void class_flags(struct nm *n)
{
	const struct cls *c = n->cls;
	char buf[128];
	static const char *const names[] = { "--num-layers", "--hidden-size", "--ffn-hidden-size",
					     "--num-attention-heads", "--num-query-groups", "--max-position-embeddings" };
	long vals[] = { c->layers, c->hidden, c->ffn, c->heads, c->groups, c->seq };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(buf, sizeof(buf), "%s%s %ld", i == 4 ? "--group-query-attention " : "", names[i], vals[i]);
		from_class(n, names[i], buf, c->where);
	}
	snprintf(buf, sizeof(buf), "--vocab-size %ld", c->vocab);
	from_class(n, "--vocab-size", buf, c->where);
	snprintf(n->absent[XL_VOCAB], sizeof(n->absent[XL_VOCAB]), "absent: the tokenizer's %ld, padded to 128 x tp "
		 "(gpt/model/base.py L203; lightning/base.py L42-43)", c->vocab);
	/* LlamaConfig / Llama3Config: RMSNorm, gated SiLU, no biases, untied,
	 * RoPE, no dropout (LL L40-56, L87-105) */
	static const struct {
		const char *flag, *words;
	} arch[] = {
		{ "--normalization", "--normalization RMSNorm" }, { "--swiglu", "--swiglu" },
		{ "--disable-bias-linear", "--disable-bias-linear" },
		{ "--untie-embeddings-and-output-weights", "--untie-embeddings-and-output-weights" },
		{ "--position-embedding-type", "--position-embedding-type rope" },
		{ "--attention-dropout", "--attention-dropout 0.0" }, { "--hidden-dropout", "--hidden-dropout 0.0" },
	};
	for (size_t i = 0; i < sizeof(arch) / sizeof(arch[0]); i++)
		from_class(n, arch[i].flag, arch[i].words, c->base);
}

/* trainer.strategy.virtual_pipeline_model_parallel_size V: layers / pp / V
 * layers per virtual stage. */
static void vpp(struct nm *n, size_t x)
{
	const struct yaml_kv *v = n->used[x];
	if (!v || v->type == YAML_NULL)
		return;
	if (v->type != YAML_INT || v->i < 1) {
		diag_err_at(n->d, n->file, v->line, v->col, "%s: expected an integer >= 1, got '%s'", v->key, v->text);
		return;
	}
	long layers = int_of(n, "model.config.num_layers", n->cls ? n->cls->layers : 0);
	long pp = int_of(n, "trainer.strategy.pipeline_model_parallel_size",
			 int_of(n, "model.config.pipeline_model_parallel_size", 1));
	if (layers < 1 || pp < 1 || layers % (pp * v->i)) {
		diag_err_at(n->d, n->file, v->line, v->col, "%s: %lld does not divide the %ld layers of each of %ld "
			    "pipeline stages", v->key, v->i, pp > 0 ? layers / pp : layers, pp);
		return;
	}
	char buf[96];
	snprintf(buf, sizeof(buf), "--num-layers-per-virtual-pipeline-stage %ld", layers / pp / (long)v->i);
	place(n, v->line, v->col, buf);
}

/* msg with every Megatron-LM flag renamed to the NeMo key it came from
 * (new string). */
static char *rename_flags(const struct nm *n, const char *msg)
{
	char *out = xstrdup(msg);
	for (size_t x = 0; x < NXL + 3; x++) {
		/* every flag, then --fp16 (the precision's), --group-query-attention, --nodes */
		static const char *const extra[] = { "--fp16", "--group-query-attention", "--nodes" };
		const char *flag = x < NXL ? xl[x].flag : extra[x - NXL];
		size_t src = x < NXL ? x : x == NXL ? XL_PREC : XL_GQA;
		const char *to = x == NXL + 2 ? "trainer.num_nodes" : n->used[src] ? n->used[src]->key : xl[src].key[0];
		size_t fl = strlen(flag);
		for (char *hit = strstr(out, flag); hit; hit = strstr(hit, flag)) {
			char after = hit[fl];
			if ((after >= 'a' && after <= 'z') || after == '-' || (hit > out && hit[-1] == '-')) {
				hit += fl;
				continue;
			}
			size_t off = (size_t)(hit - out);
			char *t = xasprintf("%.*s%s%s", (int)off, out, to, hit + fl);
			free(out);
			out = t;
			hit = out + off + strlen(to);
		}
	}
	return out;
}

/* Megatron-LM's messages in q, the flags renamed, into n's diag. */
static void restate(struct nm *n, const struct diag *q)
{
	char *all = xstrdup(diag_text(q));
	size_t fl = strlen(n->file);
	for (char *line = strtok(all, "\n"); line; line = strtok(NULL, "\n")) {
		char *msg = strstr(line, "error: ");
		if (!msg)
			continue;
		char *r = rename_flags(n, msg + 7);
		int l, c;
		if (!strncmp(line, n->file, fl) && sscanf(line + fl, ":%d:%d:", &l, &c) == 2)
			diag_err_at(n->d, n->file, l, l >= 1 && l <= n->nlines ? n->origin[l - 1] : c, "%s", r);
		else
			diag_err(n->d, n->file, "", "%s", r);
		free(r);
	}
	free(all);
}

/* The table's rows of the flags renamed to the keys they came from. */
static void rename_rows(struct nm *n, bool plugin_grf)
{
	if (plugin_grf)
		import_map_rename(n->map, xl[XL_GRF].flag, xl[XL_GRF].key[0], "", IMPORT_DEFAULT,
				  "absent: the precision plugin's True (mixed_precision.py L80)");
	for (size_t x = 0; x < NXL; x++) {
		const struct yaml_kv *v = n->used[x];
		if (*n->absent[x])
			import_map_rename(n->map, xl[x].flag, xl[x].key[0], "", IMPORT_DEFAULT, n->absent[x]);
		else if (v && v->type != YAML_NULL && (xl[x].kind == X_TRUE || xl[x].kind == X_FALSE) &&
			 v->b != (xl[x].kind == X_TRUE))
			import_map_rename(n->map, xl[x].flag, v->key, v->text, IMPORT_MAPPED, "as given");
		else
			import_map_rename(n->map, xl[x].flag, v ? v->key : xl[x].key[0], v ? v->text : NULL, -1, NULL);
	}
	const struct yaml_kv *p = n->used[XL_PREC];
	import_map_rename(n->map, "--fp16", p ? p->key : xl[XL_PREC].key[0], p ? p->text : NULL, -1, NULL);
	for (size_t x = 0; x < NXL; x++)
		import_map_subst(n->map, xl[x].flag, n->used[x] ? n->used[x]->key : xl[x].key[0]);
	import_map_subst(n->map, "--fp16", p ? p->key : xl[XL_PREC].key[0]);
	import_map_subst(n->map, "--nodes", "trainer.num_nodes");
	import_map_drop(n->map, "--transformer-impl");
}

/* The nodes: trainer.num_nodes (Lightning's 1), which --nodes must equal;
 * trainer.devices must be the topology's GPUs per node. */
static long cluster_of(struct nm *n, const struct import_cluster *c)
{
	const struct yaml_kv *dev = get(n, "trainer.devices"), *nn = get(n, "trainer.num_nodes");
	long nodes = nn && nn->type == YAML_INT ? (long)nn->i : 1;
	if (dev && (dev->type != YAML_INT || dev->i != c->gpus_per_node))
		diag_err_at(n->d, n->file, dev->line, dev->col, "trainer.devices: %s GPUs per node, but the topology's "
			    "nodes have %ld", dev->text, c->gpus_per_node);
	if (nn && (nn->type != YAML_INT || nn->i < 1))
		diag_err_at(n->d, n->file, nn->line, nn->col, "trainer.num_nodes: expected an integer >= 1, got '%s'",
			    nn->text);
	else if (c->nodes > 0 && c->nodes != nodes)
		diag_err_at(n->d, n->file, nn ? nn->line : 1, nn ? nn->col : 1, "trainer.num_nodes: %ld%s, but --nodes "
			    "is %ld", nodes, nn ? "" : " (absent: Lightning's 1)", c->nodes);
	char w[32];
	snprintf(w, sizeof(w), "%ld", (long)c->gpus_per_node);
	import_map_add(n->map, dev ? IMPORT_MAPPED : IMPORT_DEFAULT, "trainer.devices", dev ? dev->text : "",
		       "scenario: /topology", w, dev ? "the topology's GPUs per node" : "absent: the topology's");
	snprintf(w, sizeof(w), "%ld", nodes);
	import_map_add(n->map, nn ? IMPORT_MAPPED : IMPORT_DEFAULT, "trainer.num_nodes", nn ? nn->text : "",
		       "scenario: /nodes", w, nn ? NULL : "absent: 1 (Lightning's Trainer)");
	return nodes;
}

/* The class named by model.config._target_, as a row. */
static void class_row(struct nm *n)
{
	if (n->cls_kv && !n->cls) {
		bool arch = get(n, "model.config.num_layers") != NULL;
		import_map_add(n->map, arch ? IMPORT_IGNORED : IMPORT_UNKNOWN, "model.config._target_", n->cls_kv->text,
			       "", "", arch ? "the fields given are read" : "a class ddlsim holds no fields of: give them");
	} else if (n->cls_kv) {
		char w[96];
		snprintf(w, sizeof(w), "%s's fields where absent", n->cls->name);
		import_map_add(n->map, IMPORT_MAPPED, "model.config._target_", n->cls_kv->text, "model", w,
			       n->cls->where);
	}
}

/* The launch text: every flag at its key's line and column. Returns
 * whether a precision plugin left grad_reduce_in_fp32 to its default. */
static bool launch_text(struct nm *n)
{
	for (size_t x = 0; x < NXL; x++) {
		if (xl[x].kind == X_VPP)
			vpp(n, x);
		else if (n->used[x])
			emit(n, x, n->used[x]);
	}
	/* a precision plugin without grad_reduce_in_fp32 takes its True (MP L80) */
	const struct yaml_kv *plugin = NULL;
	char buf[256];
	for (int i = 0; i < yaml_count(n->y) && !plugin; i++)
		if (!strncmp(canon(yaml_at(n->y, i)->key, buf, sizeof(buf)), "trainer.plugins.", 16))
			plugin = yaml_at(n->y, i);
	if (plugin && !n->used[XL_GRF])
		place(n, plugin->line, plugin->col, "--accumulate-allreduce-grads-in-fp32");
	if (n->cls) {
		class_flags(n);
	} else if (!n->used[XL_MAXPOS]) {
		/* GPTConfig's seq_length, the model's positions */
		place(n, 1, 1, "--max-position-embeddings 1024");
		snprintf(n->absent[XL_MAXPOS], sizeof(n->absent[XL_MAXPOS]), "absent: GPTConfig's 1024 "
			 "(gpt/model/base.py L168)");
	}
	return plugin && !n->used[XL_GRF];
}

int import_nemo(const char *text, const char *file, const struct import_cluster *c, const char *model_ref,
		struct import_map *map, json_t **model, json_t **scenario, struct diag *d)
{
	assert(xl_of("--num-query-groups") == XL_GQA && xl_of("--max-position-embeddings") == XL_MAXPOS &&
	       xl_of("--seq-length") == XL_SEQ && xl_of("--vocab-size") == XL_VOCAB && xl_of("--bf16") == XL_PREC &&
	       xl_of("--accumulate-allreduce-grads-in-fp32") == XL_GRF);
	struct nm n = { .file = file, .d = d, .map = map };
	int errs = diag_count(d), rc = -1;
	*model = *scenario = NULL;
	struct yaml *y = yaml_parse(text, file, d);
	if (!y)
		return -1;
	n.y = y;
	classify(&n);
	if (!n.used[XL_SEQ] && (n.used[XL_SEQ] = get(&n, "model.config.seq_length")))
		import_map_add(map, IMPORT_DERIVED, "model.config.seq_length", n.used[XL_SEQ]->text,
			       "scenario: /training/seq_len", n.used[XL_SEQ]->text, "no data.seq_length: the model's");
	class_row(&n);
	long nodes = cluster_of(&n, c);
	bool plugin_grf = launch_text(&n);
	if (diag_count(d) > errs)
		goto out;
	size_t len = 1;
	for (int i = 0; i < n.nlines; i++)
		len += strlen(n.lines[i]) + 1;
	char *launch = xmalloc(len), *o = launch;
	for (int i = 0; i < n.nlines; i++)
		o += sprintf(o, "%s\n", n.lines[i]);
	*o = 0;
	struct diag q;
	diag_init(&q, NULL);
	struct import_cluster cc = *c;
	cc.nodes = nodes;
	int mrc = import_megatron(launch, file, 0, NULL, &cc, model_ref, map, model, scenario, &q);
	free(launch);
	restate(&n, &q);
	diag_finish(&q);
	rename_rows(&n, plugin_grf);
	if (mrc)
		goto out;
	/* a vocab_size given is used as it is (GB L196-197) */
	const struct yaml_kv *vs = n.used[XL_VOCAB];
	if (vs && vs->type == YAML_INT) {
		json_object_set_new(*model, "vocab_size", json_integer(vs->i));
		import_map_drop(map, vs->key);
		import_map_add(map, IMPORT_MAPPED, vs->key, vs->text, "model: /vocab_size", vs->text,
			       "a preset vocab_size is used as given, not padded (gpt/model/base.py L196-197)");
	}
	json_object_set_new(*scenario, "framework", json_string("nemo@2.0"));
	import_map_add(map, IMPORT_DERIVED, "(framework)", "", "scenario: /framework", "\"nemo@2.0\"",
		       "NeMo 2.0's defaults where the recipe is silent (models/framework.c), stack megatron-te");
	char *desc = xasprintf("NeMo 2 recipe (%s), imported by ddlsim import through Megatron-LM core_v0.9.0's "
			       "flags and defaults", file);
	json_object_set_new(*scenario, "description", json_string(desc));
	json_object_set_new(*model, "source", json_string(desc));
	free(desc);
	if (n.cls) {
		char *name = xasprintf("NeMo %s", n.cls->name);
		json_object_set_new(*model, "name", json_string(name));
		free(name);
	}
	rc = 0;
out:
	if (rc) {
		json_decref(*model);
		json_decref(*scenario);
		*model = *scenario = NULL;
	}
	for (int i = 0; i < n.nlines; i++)
		free(n.lines[i]);
	free(n.lines);
	free(n.origin);
	yaml_destroy(y);
	return rc;
}
