/* import_hf: a Hugging Face config.json as a ddlsim model file.
 *
 * The keys are those of transformers' configuration classes (v4.46,
 * src/transformers/models/<type>/configuration_<type>.py), read for the
 * decoder-only families whose modelling ddlsim's decoder_transformer
 * covers. model_type picks the family; a key absent from the file takes
 * the configuration class's default where it changes the model (the
 * "default" rows), and is otherwise left to the model file's own default.
 *
 *   config.json key         ddlsim model key          rule
 *   model_type              architecture, activation, llama | mistral | qwen2 | qwen3 | mixtral |
 *                           norm, position_embedding  deepseek_v3 (gated SiLU MLP, RMSNorm, RoPE);
 *                           (qwen3: qk_norm true)     gpt2 (GELU MLP of 4h, LayerNorm, learned
 *                                                     positions, biases); others refused
 *   architectures           -                         checked against model_type (the row says it)
 *   num_hidden_layers       layers                    (gpt2: n_layer)
 *   hidden_size             hidden_size               (gpt2: n_embd)
 *   num_attention_heads     heads                     (gpt2: n_head)
 *   num_key_value_heads     kv_heads                  default num_attention_heads (LlamaConfig);
 *                                                     MLA (deepseek_v3): not written
 *   head_dim                head_dim                  written as given (Qwen3: 128)
 *   intermediate_size       ffn_size                  required (the classes' defaults differ by
 *                                                     family); mixtral: moe.expert_ffn_size (every
 *                                                     MLP is an MoE); gpt2: n_inner, default 4h
 *   vocab_size              vocab_size
 *   tie_word_embeddings     tied_embeddings           default false (true for gpt2)
 *   hidden_act              activation                silu -> swiglu (the families' gated MLP:
 *                                                     gate, up, down); gelu* -> gelu (gpt2's
 *                                                     activation_function)
 *   rms_norm_eps            norm rmsnorm              (gpt2 layer_norm_epsilon: layernorm)
 *   attention_bias, mlp_bias bias                     true only when every linear layer has one;
 *                                                     qwen2's q/k/v-only biases are not expressible
 *   attention_dropout       dropout                   > 0: dropout true (gpt2: attn_pdrop, resid_pdrop)
 *   max_position_embeddings max_position              (gpt2: n_positions)
 *   num_local_experts       moe.experts               (deepseek_v3: n_routed_experts)
 *   num_experts_per_tok     moe.top_k
 *   moe_intermediate_size   moe.expert_ffn_size       (deepseek_v3)
 *   n_shared_experts        moe.shared_experts
 *   first_k_dense_replace   moe.first_dense_layers
 *   n_group, topk_group     moe.groups, moe.groups_per_token
 *   q_lora_rank, kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim
 *                           mla.*                     (deepseek_v3)
 *   num_nextn_predict_layers mtp_depth                (deepseek_v3) the multi-token-prediction
 *                                                     modules trained with the model; 0: ignored
 *   sliding_window          sliding_window            mistral, mixtral: every layer attends through
 *                                                     the window (MistralAttention passes
 *                                                     config.sliding_window for each layer); null:
 *                                                     full attention. qwen2, qwen3: only with
 *                                                     use_sliding_window true, and then from layer
 *                                                     max_window_layers on, which no ddlsim key
 *                                                     says (unknown); false: ignored. Others unknown
 *
 * Keys with no effect on time or memory (token ids, initialisation, RoPE's
 * base and scaling, loss coefficients, the cache, the dtype the checkpoint
 * is stored in: the scenario's precision decides) are listed as ignored;
 * any other key as unknown, never dropped silently. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"
#include "jload.h"
#include "xalloc.h"

enum family { FAM_LLAMA, FAM_MISTRAL, FAM_QWEN2, FAM_QWEN3, FAM_MIXTRAL, FAM_DEEPSEEK_V3, FAM_GPT2 };

static const struct {
	const char *model_type;
	const char *architecture;   /* architectures[0] expected */
	enum family fam;
} families[] = {
	{ "llama", "LlamaForCausalLM", FAM_LLAMA },
	{ "mistral", "MistralForCausalLM", FAM_MISTRAL },
	{ "qwen2", "Qwen2ForCausalLM", FAM_QWEN2 },
	{ "qwen3", "Qwen3ForCausalLM", FAM_QWEN3 },
	{ "mixtral", "MixtralForCausalLM", FAM_MIXTRAL },
	{ "deepseek_v3", "DeepseekV3ForCausalLM", FAM_DEEPSEEK_V3 },
	{ "gpt2", "GPT2LMHeadModel", FAM_GPT2 },
};

/* What a key does. */
enum act {
	A_LAYERS, A_HIDDEN, A_HEADS, A_KV_HEADS, A_HEAD_DIM, A_FFN, A_VOCAB, A_TIE, A_ACT, A_RMS_EPS,
	A_LN_EPS, A_ATTN_BIAS, A_MLP_BIAS, A_ATTN_DROPOUT, A_MAXPOS, A_EXPERTS, A_TOPK, A_MOE_FFN,
	A_SHARED, A_FIRST_DENSE, A_GROUPS, A_TOPK_GROUP, A_MLA, A_N_INNER, A_RESID_DROPOUT,
	A_MODEL_TYPE, A_ARCHS, A_IGNORED, A_SLIDING, A_USE_SLIDING, A_MOE_FREQ, A_MTP,
};

static const struct {
	const char *key;
	enum act act;
	const char *ddlsim;         /* model key set ("" none) */
} keys[] = {
	{ "model_type", A_MODEL_TYPE, "architecture" },
	{ "architectures", A_ARCHS, "" },
	{ "num_hidden_layers", A_LAYERS, "layers" },
	{ "n_layer", A_LAYERS, "layers" },
	{ "hidden_size", A_HIDDEN, "hidden_size" },
	{ "n_embd", A_HIDDEN, "hidden_size" },
	{ "num_attention_heads", A_HEADS, "heads" },
	{ "n_head", A_HEADS, "heads" },
	{ "num_key_value_heads", A_KV_HEADS, "kv_heads" },
	{ "head_dim", A_HEAD_DIM, "head_dim" },
	{ "intermediate_size", A_FFN, "ffn_size" },
	{ "n_inner", A_N_INNER, "ffn_size" },
	{ "vocab_size", A_VOCAB, "vocab_size" },
	{ "tie_word_embeddings", A_TIE, "tied_embeddings" },
	{ "hidden_act", A_ACT, "activation" },
	{ "activation_function", A_ACT, "activation" },
	{ "rms_norm_eps", A_RMS_EPS, "norm" },
	{ "layer_norm_epsilon", A_LN_EPS, "norm" },
	{ "attention_bias", A_ATTN_BIAS, "bias" },
	{ "mlp_bias", A_MLP_BIAS, "bias" },
	{ "attention_dropout", A_ATTN_DROPOUT, "dropout" },
	{ "attn_pdrop", A_ATTN_DROPOUT, "dropout" },
	{ "resid_pdrop", A_RESID_DROPOUT, "dropout" },
	{ "embd_pdrop", A_RESID_DROPOUT, "dropout" },
	{ "max_position_embeddings", A_MAXPOS, "max_position" },
	{ "n_positions", A_MAXPOS, "max_position" },
	{ "num_local_experts", A_EXPERTS, "moe.experts" },
	{ "n_routed_experts", A_EXPERTS, "moe.experts" },
	{ "num_experts_per_tok", A_TOPK, "moe.top_k" },
	{ "moe_intermediate_size", A_MOE_FFN, "moe.expert_ffn_size" },
	{ "n_shared_experts", A_SHARED, "moe.shared_experts" },
	{ "first_k_dense_replace", A_FIRST_DENSE, "moe.first_dense_layers" },
	{ "n_group", A_GROUPS, "moe.groups" },
	{ "topk_group", A_TOPK_GROUP, "moe.groups_per_token" },
	{ "q_lora_rank", A_MLA, "mla.q_lora_rank" },
	{ "kv_lora_rank", A_MLA, "mla.kv_lora_rank" },
	{ "qk_nope_head_dim", A_MLA, "mla.qk_nope_head_dim" },
	{ "qk_rope_head_dim", A_MLA, "mla.qk_rope_head_dim" },
	{ "v_head_dim", A_MLA, "mla.v_head_dim" },
	{ "sliding_window", A_SLIDING, "" },
	{ "use_sliding_window", A_USE_SLIDING, "" },
	{ "moe_layer_freq", A_MOE_FREQ, "" },
	{ "num_nextn_predict_layers", A_MTP, "" },
	/* no effect on time or memory */
	{ "_name_or_path", A_IGNORED, "" }, { "bos_token_id", A_IGNORED, "" }, { "eos_token_id", A_IGNORED, "" },
	{ "pad_token_id", A_IGNORED, "" }, { "initializer_range", A_IGNORED, "" },
	{ "rope_theta", A_IGNORED, "" }, { "rope_scaling", A_IGNORED, "" }, { "pretraining_tp", A_IGNORED, "" },
	{ "torch_dtype", A_IGNORED, "" }, { "transformers_version", A_IGNORED, "" },
	{ "use_cache", A_IGNORED, "" }, { "max_window_layers", A_IGNORED, "" },
	{ "router_aux_loss_coef", A_IGNORED, "" }, { "output_router_logits", A_IGNORED, "" },
	{ "router_jitter_noise", A_IGNORED, "" }, { "aux_loss_alpha", A_IGNORED, "" },
	{ "seq_aux", A_IGNORED, "" }, { "norm_topk_prob", A_IGNORED, "" },
	{ "routed_scaling_factor", A_IGNORED, "" }, { "scoring_func", A_IGNORED, "" },
	{ "topk_method", A_IGNORED, "" }, { "ep_size", A_IGNORED, "" }, { "layer_norm_eps", A_LN_EPS, "norm" },
	{ "summary_type", A_IGNORED, "" }, { "summary_use_proj", A_IGNORED, "" },
	{ "summary_activation", A_IGNORED, "" }, { "summary_proj_to_labels", A_IGNORED, "" },
	{ "summary_first_dropout", A_IGNORED, "" }, { "task_specific_params", A_IGNORED, "" },
	{ "n_ctx", A_IGNORED, "" }, { "auto_map", A_IGNORED, "" }, { "scale_attn_weights", A_IGNORED, "" },
	{ "reorder_and_upcast_attn", A_IGNORED, "" }, { "scale_attn_by_inverse_layer_idx", A_IGNORED, "" },
};

/* What the file said, before it becomes a model document. */
struct hf {
	const char *path;
	struct import_map *map;
	struct diag *d;
	enum family fam;
	bool have_fam;
	json_t *model;              /* the document being built */
	json_t *moe, *mla;          /* its objects, created on first use */
	long heads;
	bool attn_bias, mlp_bias, seen_attn_bias, seen_mlp_bias;
	bool dropout, seen_dropout;
	bool seen[64];              /* by enum act */
};

static const char *jpath(const char *key, char *buf, size_t n)
{
	snprintf(buf, n, "/%s", key);
	return buf;
}

/* v as text for the table (numbers as JSON writes them). Caller frees. */
static char *value_text(const json_t *v)
{
	if (json_is_string(v))
		return xstrdup(json_string_value(v));
	char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(12));
	return s ? s : xstrdup("?");
}

/* Set model key k (dotted: "moe.top_k") to v (stolen) and add the row. */
static void set(struct hf *h, enum import_status st, const char *src, const char *val, const char *k, json_t *v,
		const char *note)
{
	json_t *obj = h->model;
	const char *leaf = k;
	if (!strncmp(k, "moe.", 4) || !strncmp(k, "mla.", 4)) {
		json_t **o = k[1] == 'o' ? &h->moe : &h->mla;
		if (!*o)
			*o = json_object();
		obj = *o;
		leaf = k + 4;
	}
	char *w = value_text(v);
	json_object_set_new(obj, leaf, v);
	import_map_add(h->map, st, src, val, k, w, note);
	free(w);
}

/* A positive integer value of key, or -1 after an error. */
static long int_of(struct hf *h, const char *key, const json_t *v, long min)
{
	char jp[128];
	if (!json_is_integer(v) || json_integer_value(v) < min) {
		char *t = value_text(v);
		diag_err(h->d, h->path, jpath(key, jp, sizeof(jp)), "expected an integer >= %ld, got %s '%s'", min,
			 jload_type_name(v), t);
		free(t);
		return -1;
	}
	return (long)json_integer_value(v);
}

static void map_int(struct hf *h, const char *key, const char *k, const json_t *v, long min, const char *text)
{
	long n = int_of(h, key, v, min);
	if (n >= 0)
		set(h, IMPORT_MAPPED, key, text, k, json_integer(n), NULL);
}

static int family_of(struct hf *h, const json_t *v, const char *text)
{
	char jp[64];
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++)
		if (json_is_string(v) && !strcmp(json_string_value(v), families[i].model_type)) {
			h->fam = families[i].fam;
			h->have_fam = true;
			return (int)i;
		}
	return diag_err(h->d, h->path, jpath("model_type", jp, sizeof(jp)),
			"expected llama, mistral, qwen2, qwen3, mixtral, deepseek_v3 or gpt2 (the decoder-only "
			"families ddlsim imports), got '%s'", text);
}

static bool is_gated(const struct hf *h)
{
	return h->fam != FAM_GPT2;
}

/* A key's handler: key k of act a, value v (its text), setting model
 * key dk ("" none). One per act, in key_handlers. */
typedef void key_fn(struct hf *h, enum act a, const char *k, const char *dk, const json_t *v, const char *text);

/* model_type: the family and what it implies. */
static void key_model_type(struct hf *h, enum act a, const char *k, const char *dk, const json_t *v,
			   const char *text)
{
	(void)a, (void)dk;
	int f = family_of(h, v, text);
	if (f < 0)
		return;
	set(h, IMPORT_MAPPED, k, text, "architecture", json_string("decoder_transformer"), NULL);
	bool gated = families[f].fam != FAM_GPT2;
	set(h, IMPORT_DERIVED, k, text, "norm", json_string(gated ? "rmsnorm" : "layernorm"),
	    gated ? "the family's RMSNorm" : "GPT-2's LayerNorm");
	set(h, IMPORT_DERIVED, k, text, "position_embedding", json_string(gated ? "rope" : "learned"),
	    gated ? "the family's rotary embeddings" : "GPT-2's learned position table");
	if (families[f].fam == FAM_QWEN3)
		set(h, IMPORT_DERIVED, k, text, "qk_norm", json_true(),
		    "modeling_qwen3.py: q_norm and k_norm, an RMSNorm of head_dim per head");
	if (families[f].fam == FAM_GPT2)
		set(h, IMPORT_DERIVED, k, text, "bias", json_true(), "GPT-2's Conv1D layers have biases");
}

static void key_archs(struct hf *h, enum act a, const char *k, const char *dk, const json_t *v, const char *text)
{
	(void)a, (void)dk, (void)v;
	import_map_add(h->map, IMPORT_MAPPED, k, text, "", "", "checked against model_type");
}

/* A count: >= 1, or >= 0 for shared experts and the first dense layers;
 * n_inner null is the model file's default. */
static void key_count(struct hf *h, enum act a, const char *k, const char *dk, const json_t *v, const char *text)
{
	if (a == A_N_INNER && json_is_null(v)) {
		import_map_add(h->map, IMPORT_DEFAULT, k, text, "ffn_size", "", "null: 4 x hidden_size, the "
			       "model file's default (GPT2Config n_inner=None)");
		return;
	}
	map_int(h, k, dk, v, a == A_SHARED || a == A_FIRST_DENSE ? 0 : 1, text);
}

static void key_heads(struct hf *h, enum act a, const char *k, const char *dk, const json_t *v, const char *text)
{
	(void)a;
	h->heads = int_of(h, k, v, 1);
	if (h->heads > 0)
		set(h, IMPORT_MAPPED, k, text, dk, json_integer(h->heads), NULL);
}

static void key_kv_heads(struct hf *h, enum act a, const char *k, const char *dk, const json_t *v,
			 const char *text)
{
	(void)a;
	if (h->fam == FAM_DEEPSEEK_V3 && h->have_fam)
		import_map_add(h->map, IMPORT_DERIVED, k, text, "", "", "MLA: kv_heads left out (model.h)");
	else
		map_int(h, k, dk, v, 1, text);
}

static void key_ffn(struct hf *h, enum act a, const char *k, const char *dk, const json_t *v, const char *text)
{
	(void)a;
	if (h->fam == FAM_MIXTRAL && h->have_fam)
		map_int(h, k, "moe.expert_ffn_size", v, 1, text);
	else
		map_int(h, k, dk, v, 1, text);
}

static void key_mla(struct hf *h, enum act a, const char *k, const char *dk, const json_t *v, const char *text)
{
	(void)a;
	if (json_is_null(v) && !strcmp(k, "q_lora_rank"))
		set(h, IMPORT_MAPPED, k, text, dk, json_integer(0), "null: queries projected from h");
	else
		map_int(h, k, dk, v, 1, text);
}

static void key_tie(struct hf *h, enum act a, const char *k, const char *dk, const json_t *v, const char *text)
{
	(void)a;
	char jp[160];
	if (!json_is_boolean(v))
		diag_err(h->d, h->path, jpath(k, jp, sizeof(jp)), "expected true or false, got '%s'", text);
	else
		set(h, IMPORT_MAPPED, k, text, dk, json_boolean(json_is_true(v)), NULL);
}

static void key_act(struct hf *h, enum act a, const char *k, const char *dk, const json_t *v, const char *text)
{
	(void)a;
	char jp[160];
	const char *s = json_is_string(v) ? json_string_value(v) : "";
	if (!strcmp(s, "silu") && is_gated(h))
		set(h, IMPORT_MAPPED, k, text, dk, json_string("swiglu"), "SiLU in the gated MLP (gate, up, down)");
	else if (!strncmp(s, "gelu", 4) && !is_gated(h))
		set(h, IMPORT_MAPPED, k, text, dk, json_string("gelu"), NULL);
	else
		diag_err(h->d, h->path, jpath(k, jp, sizeof(jp)), "expected %s for model_type '%s', got '%s'",
			 is_gated(h) ? "silu" : "gelu, gelu_new or gelu_pytorch_tanh",
			 families[h->fam].model_type, text);
}

static void key_eps(struct hf *h, enum act a, const char *k, const char *dk, const json_t *v, const char *text)
{
	(void)dk, (void)v;
	char jp[160];
	if ((a == A_RMS_EPS) != is_gated(h))
		diag_err(h->d, h->path, jpath(k, jp, sizeof(jp)), "a %s for model_type '%s', whose norm is %s",
			 a == A_RMS_EPS ? "RMSNorm epsilon" : "LayerNorm epsilon", families[h->fam].model_type,
			 is_gated(h) ? "RMSNorm" : "LayerNorm");
	else
		import_map_add(h->map, IMPORT_MAPPED, k, text, "norm", is_gated(h) ? "rmsnorm" : "layernorm",
			       "the epsilon itself has no effect on time or memory");
}

static void key_bias(struct hf *h, enum act a, const char *k, const char *dk, const json_t *v, const char *text)
{
	(void)dk;
	char jp[160];
	if (!json_is_boolean(v)) {
		diag_err(h->d, h->path, jpath(k, jp, sizeof(jp)), "expected true or false, got '%s'", text);
		return;
	}
	*(a == A_ATTN_BIAS ? &h->attn_bias : &h->mlp_bias) = json_is_true(v);
	*(a == A_ATTN_BIAS ? &h->seen_attn_bias : &h->seen_mlp_bias) = true;
	import_map_add(h->map, IMPORT_MAPPED, k, text, "bias", json_is_true(v) ? "true" : "false",
		       "with the other bias key: one ddlsim key for every linear layer");
}

static void key_dropout(struct hf *h, enum act a, const char *k, const char *dk, const json_t *v,
			const char *text)
{
	(void)a, (void)dk;
	char jp[160];
	if (!json_is_number(v) || json_number_value(v) < 0 || json_number_value(v) >= 1) {
		diag_err(h->d, h->path, jpath(k, jp, sizeof(jp)), "expected a probability in [0, 1), got '%s'",
			 text);
		return;
	}
	h->dropout |= json_number_value(v) > 0;
	h->seen_dropout = true;
	import_map_add(h->map, IMPORT_MAPPED, k, text, "dropout", json_number_value(v) > 0 ? "true" : "false",
		       "dropout is on when any probability is above 0");
}

/* sliding_window, use_sliding_window: with the family and each other, in
 * finish(). */
static void key_window(struct hf *h, enum act a, const char *k, const char *dk, const json_t *v,
		       const char *text)
{
	(void)h, (void)a, (void)k, (void)dk, (void)v, (void)text;
}

static void key_moe_freq(struct hf *h, enum act a, const char *k, const char *dk, const json_t *v,
			 const char *text)
{
	(void)a, (void)dk;
	if (json_is_integer(v) && json_integer_value(v) == 1)
		import_map_add(h->map, IMPORT_IGNORED, k, text, "", "", "1: every layer after the dense ones");
	else
		import_map_add(h->map, IMPORT_UNKNOWN, k, text, "", "", "MoE every n-th layer is not modelled");
}

static void key_mtp(struct hf *h, enum act a, const char *k, const char *dk, const json_t *v, const char *text)
{
	(void)a, (void)dk;
	if (json_is_integer(v) && json_integer_value(v) == 0)
		import_map_add(h->map, IMPORT_IGNORED, k, text, "", "", "no multi-token prediction module");
	else
		map_int(h, k, "mtp_depth", v, 0, text);
}

static void key_ignored(struct hf *h, enum act a, const char *k, const char *dk, const json_t *v,
			const char *text)
{
	(void)a, (void)dk, (void)v;
	import_map_add(h->map, IMPORT_IGNORED, k, text, "", "", NULL);
}

/* Each act's handler. */
static key_fn *const key_handlers[] = {
	[A_LAYERS] = key_count, [A_HIDDEN] = key_count, [A_HEADS] = key_heads, [A_KV_HEADS] = key_kv_heads,
	[A_HEAD_DIM] = key_count, [A_FFN] = key_ffn, [A_VOCAB] = key_count, [A_TIE] = key_tie,
	[A_ACT] = key_act, [A_RMS_EPS] = key_eps, [A_LN_EPS] = key_eps, [A_ATTN_BIAS] = key_bias,
	[A_MLP_BIAS] = key_bias, [A_ATTN_DROPOUT] = key_dropout, [A_MAXPOS] = key_count,
	[A_EXPERTS] = key_count, [A_TOPK] = key_count, [A_MOE_FFN] = key_count, [A_SHARED] = key_count,
	[A_FIRST_DENSE] = key_count, [A_GROUPS] = key_count, [A_TOPK_GROUP] = key_count, [A_MLA] = key_mla,
	[A_N_INNER] = key_count, [A_RESID_DROPOUT] = key_dropout, [A_MODEL_TYPE] = key_model_type,
	[A_ARCHS] = key_archs, [A_IGNORED] = key_ignored, [A_SLIDING] = key_window,
	[A_USE_SLIDING] = key_window, [A_MOE_FREQ] = key_moe_freq, [A_MTP] = key_mtp,
};

/* One key of the file. */
static void key(struct hf *h, const char *k, const json_t *v)
{
	char *text = value_text(v);
	size_t i = 0, n = sizeof(keys) / sizeof(keys[0]);
	while (i < n && strcmp(keys[i].key, k))
		i++;
	if (i == n) {
		import_map_add(h->map, IMPORT_UNKNOWN, k, text, "", "", "not a key ddlsim imports: not applied");
		free(text);
		return;
	}
	enum act a = keys[i].act;
	h->seen[a] = true;
	key_handlers[a](h, a, k, keys[i].ddlsim, v, text);
	free(text);
}

/* sliding_window and use_sliding_window, each family's way (the table). */
static void finish_window(struct hf *h, const json_t *root)
{
	const json_t *w = json_object_get(root, "sliding_window");
	const json_t *use = json_object_get(root, "use_sliding_window");
	char *wt = w ? value_text(w) : NULL, *ut = use ? value_text(use) : NULL;
	bool qwen = h->fam == FAM_QWEN2 || h->fam == FAM_QWEN3;
	if (use && (!qwen || !json_is_true(use)))
		import_map_add(h->map, IMPORT_IGNORED, "use_sliding_window", ut, "", "",
			       qwen ? "false: full causal attention" : "not read by this family");
	if (!w || json_is_null(w) || json_is_false(w)) {
		if (w)
			import_map_add(h->map, IMPORT_IGNORED, "sliding_window", wt, "", "", "off: full causal attention");
	} else if ((h->fam == FAM_MISTRAL || h->fam == FAM_MIXTRAL) && h->have_fam) {
		long n = int_of(h, "sliding_window", w, 1);
		if (n >= 0)
			set(h, IMPORT_MAPPED, "sliding_window", wt, "sliding_window", json_integer(n),
			    "every layer (MistralAttention: the window of config.sliding_window)");
	} else if (qwen && !json_is_true(use)) {
		import_map_add(h->map, IMPORT_IGNORED, "sliding_window", wt, "", "",
			       "use_sliding_window false: full causal attention");
	} else {
		import_map_add(h->map, IMPORT_UNKNOWN, qwen ? "use_sliding_window" : "sliding_window",
			       qwen ? ut : wt, "", "", qwen ? "windows from layer max_window_layers on are not "
			       "expressible: priced as full causal attention" : "this family's window layers are not "
			       "read: priced as full causal attention");
	}
	free(wt), free(ut);
}

/* The keys no configuration class fills: errors when missing. */
static void finish_required(struct hf *h, const json_t *root)
{
	static const char *const required[] = { "num_hidden_layers", "hidden_size", "num_attention_heads", "vocab_size" };
	static const char *const required_gpt2[] = { "n_layer", "n_embd", "n_head", "vocab_size" };
	for (int i = 0; i < 4; i++) {
		const char *k = h->fam == FAM_GPT2 ? required_gpt2[i] : required[i];
		if (!json_object_get(root, k))
			diag_err(h->d, h->path, "", "missing key '%s' (no default: the model needs it)", k);
	}
	if (is_gated(h) && !json_object_get(root, "intermediate_size"))
		diag_err(h->d, h->path, "", "missing key 'intermediate_size' (the configuration classes' defaults "
			 "differ by family: give it)");
}

/* The keys whose absence the configuration class fills. */
static void finish_defaults(struct hf *h, const json_t *root)
{
	if (h->fam == FAM_GPT2 && !h->seen[A_N_INNER]) {
		json_t *e = json_object_get(root, "n_embd");
		if (json_is_integer(e))
			set(h, IMPORT_DEFAULT, "n_inner", "", "ffn_size", json_integer(4 * json_integer_value(e)),
			    "absent: 4 x n_embd (GPT2Config n_inner=None)");
	}
	if (is_gated(h) && h->fam != FAM_DEEPSEEK_V3 && !h->seen[A_KV_HEADS])
		import_map_add(h->map, IMPORT_DEFAULT, "num_key_value_heads", "", "kv_heads", "",
			       "absent: num_attention_heads (LlamaConfig), the model file's default");
	if (is_gated(h) && !h->seen[A_ACT])
		set(h, IMPORT_DEFAULT, "hidden_act", "", "activation", json_string("swiglu"),
		    "absent: the configuration class's silu");
	if (!is_gated(h) && !h->seen[A_ACT])
		set(h, IMPORT_DEFAULT, "activation_function", "", "activation", json_string("gelu"),
		    "absent: GPT2Config's gelu_new");
	if (!h->seen[A_TIE])
		set(h, IMPORT_DEFAULT, "tie_word_embeddings", "", "tied_embeddings", json_boolean(h->fam == FAM_GPT2),
		    h->fam == FAM_GPT2 ? "absent: PretrainedConfig's true" : "absent: the configuration class's false");
}

/* The biases: attention_bias and mlp_bias as one ddlsim key. */
static void finish_bias(struct hf *h)
{
	char jp[64];
	if (h->fam == FAM_QWEN2) {
		/* Qwen2Attention: q/k/v projections with bias=True, o_proj without,
		 * no MLP bias: not one ddlsim bias key */
		import_map_add(h->map, IMPORT_UNKNOWN, "model_type", "qwen2", "bias", "false",
			       "Qwen2's q/k/v biases (h + 2 kv_heads head_dim per layer) are not expressible "
			       "(ddlsim's bias is every linear layer's): left out");
		json_object_set_new(h->model, "bias", json_false());
	} else if (is_gated(h)) {
		if (h->seen_attn_bias && h->seen_mlp_bias && h->attn_bias != h->mlp_bias)
			diag_err(h->d, h->path, jpath("mlp_bias", jp, sizeof(jp)), "attention_bias %s with mlp_bias %s: "
				 "ddlsim's bias key is every linear layer's, not expressible",
				 h->attn_bias ? "true" : "false", h->mlp_bias ? "true" : "false");
		else
			json_object_set_new(h->model, "bias", json_boolean(h->attn_bias || h->mlp_bias));
		if (!h->seen_attn_bias)
			import_map_add(h->map, IMPORT_DEFAULT, "attention_bias", "", "bias",
				       h->mlp_bias ? "true" : "false", "absent: the configuration class's false");
	}
}

/* Dropout: on when any probability is, else the class's default. */
static void finish_dropout(struct hf *h)
{
	json_object_set_new(h->model, "dropout", json_boolean(h->dropout));
	if (!h->seen_dropout)
		import_map_add(h->map, IMPORT_DEFAULT, h->fam == FAM_GPT2 ? "attn_pdrop" : "attention_dropout", "",
			       "dropout", h->fam == FAM_GPT2 ? "true" : "false",
			       h->fam == FAM_GPT2 ? "absent: GPT2Config's 0.1" : "absent: the configuration class's 0.0");
	if (h->fam == FAM_GPT2 && !h->seen_dropout)
		json_object_set_new(h->model, "dropout", json_true());
}

/* An MoE model's required keys, DeepSeek-V3's MLA, and the moe and mla
 * objects into the model. */
static void finish_moe(struct hf *h, const json_t *root)
{
	if (h->fam == FAM_MIXTRAL || h->fam == FAM_DEEPSEEK_V3) {
		const char *need[] = { h->fam == FAM_MIXTRAL ? "num_local_experts" : "n_routed_experts",
				       "num_experts_per_tok" };
		for (int i = 0; i < 2; i++)
			if (!json_object_get(root, need[i]))
				diag_err(h->d, h->path, "", "missing key '%s' (an MoE model's)", need[i]);
	}
	if (h->fam == FAM_DEEPSEEK_V3 && !h->mla)
		diag_err(h->d, h->path, "", "missing key 'kv_lora_rank' (DeepSeek-V3's MLA)");
	if (h->moe)
		json_object_set_new(h->model, "moe", h->moe);
	if (h->mla)
		json_object_set_new(h->model, "mla", h->mla);
	h->moe = h->mla = NULL;
}

/* The keys whose absence the configuration class fills, and the biases. */
static void finish(struct hf *h, const json_t *root)
{
	finish_window(h, root);
	finish_required(h, root);
	finish_defaults(h, root);
	finish_bias(h);
	finish_dropout(h);
	finish_moe(h, root);
}

json_t *import_hf(const char *path, struct import_map *map, struct diag *d)
{
	int errs = diag_count(d);
	json_t *root = jload_file(path, d);
	if (!root)
		return NULL;
	if (!json_is_object(root)) {
		diag_err(d, path, "", "expected a JSON object (a config.json), got %s", jload_type_name(root));
		json_decref(root);
		return NULL;
	}
	struct hf h = { .path = path, .map = map, .d = d, .model = json_object() };
	json_t *mt = json_object_get(root, "model_type");
	if (!mt) {
		diag_err(d, path, "", "missing key 'model_type' (which family of model: llama, qwen3, ...)");
		goto fail;
	}
	char *mtt = value_text(mt);
	int f = family_of(&h, mt, mtt);
	free(mtt);
	if (f < 0)
		goto fail;
	json_t *archs = json_object_get(root, "architectures");
	const char *a0 = json_string_value(json_array_get(archs, 0));
	if (archs && (!a0 || strcmp(a0, families[f].architecture)))
		diag_err(d, path, "/architectures/0", "expected '%s' for model_type '%s', got '%s'",
			 families[f].architecture, families[f].model_type, a0 ? a0 : "?");
	json_t *name = json_object_get(root, "_name_or_path");
	json_object_set_new(h.model, "schema", json_string("ddlsim.model"));
	json_object_set_new(h.model, "schema_version", json_string("1.4"));
	json_object_set_new(h.model, "name", json_string(json_is_string(name) && *json_string_value(name) ?
							  json_string_value(name) : families[f].architecture));
	char *src = xasprintf("Hugging Face config.json '%s' (model_type %s), imported by ddlsim import", path,
			      families[f].model_type);
	json_object_set_new(h.model, "source", json_string(src));
	json_object_set_new(h.model, "architecture", json_string("decoder_transformer"));
	free(src);
	const char *k;
	json_t *v;
	json_object_foreach(root, k, v)
		key(&h, k, v);
	finish(&h, root);
	if (diag_count(d) > errs)
		goto fail;
	json_decref(root);
	return h.model;
fail:
	json_decref(h.moe);
	json_decref(h.mla);
	json_decref(h.model);
	json_decref(root);
	return NULL;
}
