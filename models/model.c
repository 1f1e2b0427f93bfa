/* model: transformer description loader and parameter counts (see model.h). */
#include "model.h"
#include "xalloc.h"

#include "bug.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cnn.h"
#include "bounds.h"
#include "jload.h"

static const char *const act_names[] = { "gelu", "swiglu", NULL };
static const char *const norm_names[] = { "layernorm", "rmsnorm", NULL };
static const char *const pos_names[] = { "rope", "learned", "alibi", NULL };
static const char *const cnn_family_names[] = { "resnet", NULL };

const char *model_act_name(enum model_act a)
{
	return act_names[a];
}


static void load_transformer(struct jobj *jo, struct model *m);
static void load_cnn(struct jobj *top, struct model *m);
static void load_encoder(struct jobj *jo, struct model *m);
static double transformer_params(const struct model *m);
static double transformer_iteration_flops(const struct model *m, double batch, double seq);
static double encoder_params(const struct model *m);
static double encoder_iteration_flops(const struct model *m, double batch, double seq);
static double cnn_iteration_flops(const struct model *m, double batch, double seq);
static void load_vit(struct jobj *jo, struct model *m);
static double vit_iteration_flops(const struct model *m, double batch, double seq);

const struct model_arch_ops model_archs[MODEL_ARCH_N + 1] = {
	[MODEL_ARCH_DECODER] = { "decoder_transformer", "adam", true, true, load_transformer,
				 transformer_params, transformer_iteration_flops },
	[MODEL_ARCH_CNN] = { "cnn", "sgd", false, false, load_cnn, cnn_params, cnn_iteration_flops },
	[MODEL_ARCH_ENCODER] = { "encoder_transformer", "adam", true, true, load_encoder,
				 encoder_params, encoder_iteration_flops },
	[MODEL_ARCH_VIT] = { "vit", "adam", true, true, load_vit, encoder_params,
			     vit_iteration_flops },
	[MODEL_ARCH_N] = { NULL, NULL, false, false, NULL, NULL, NULL },
};

const struct model_arch_ops *model_arch(const struct model *m)
{
	BUG_ON(m->arch < 0 || m->arch >= MODEL_ARCH_N, "model architecture %d", (int)m->arch);
	return &model_archs[m->arch];
}

static void load_cnn(struct jobj *top, struct model *m)
{
	struct jobj jo;
	int e = 0;

	m->cnn.image = 224;
	m->cnn.classes = 1000;
	if (jobj_child(top, "cnn", &jo, JREQ) != 1)
		return;
	jobj_enum(&jo, "family", cnn_family_names, &e, JREQ);
	m->cnn.family = e;
	if (jobj_int(&jo, "depth", &m->cnn.depth, 1, JREQ) == 1 &&
	    !cnn_resnet_depth_ok(m->cnn.depth))
		jobj_err(&jo, "depth", "expected a ResNet depth (one of %s), got %ld",
			 cnn_resnet_depths, m->cnn.depth);
	jobj_int(&jo, "image", &m->cnn.image, 32, 0);
	jobj_int(&jo, "classes", &m->cnn.classes, 1, 0);
	jobj_end(&jo);
	m->layers = m->cnn.depth;
}

/* The "moe" object's dense first layers and expert groups. */
static void load_moe_layout(struct jobj *jo, struct model *m)
{
	struct moe_config *c = &m->moe;

	if (jobj_int(jo, "first_dense_layers", &c->first_dense, 0, 0) == 1 && m->layers > 0 &&
	    c->first_dense >= m->layers)
		jobj_err(jo, "first_dense_layers", "must be below the %ld layers, got %ld", m->layers,
			 c->first_dense);
	if (jobj_int(jo, "groups", &c->groups, 1, 0) == 1 && c->experts > 0 &&
	    c->experts % c->groups)
		jobj_err(jo, "groups", "must divide the %ld experts, got %ld", c->experts, c->groups);
	bool limit = jobj_int(jo, "groups_per_token", &c->groups_per_token, 1, 0) == 1;
	if (limit && c->groups == 0)
		jobj_err(jo, "groups_per_token", "needs groups");
	else if (limit && c->groups_per_token > c->groups)
		jobj_err(jo, "groups_per_token", "must be at most the %ld groups, got %ld", c->groups,
			 c->groups_per_token);
	else if (!limit)
		c->groups_per_token = c->groups;
	/* device-limited routing (DeepSeek-V2 section 2.1.2, V3's node-limited
	 * routing): a token's top_k experts are chosen among the experts of its
	 * groups_per_token groups, so top_k <= groups_per_token x E / G (V3:
	 * 8 <= 4 x 256 / 8) */
	long per = c->groups > 0 && c->experts % c->groups == 0 ? c->experts / c->groups : 0;
	if (limit && per > 0 && c->groups_per_token <= c->groups && c->top_k > c->groups_per_token * per)
		jobj_err(jo, "groups_per_token", "leaves a token %ld x %ld = %ld experts to choose from (groups_per_token "
			 "x experts per group, device-limited routing), fewer than top_k %ld; got %ld", c->groups_per_token,
			 per, c->groups_per_token * per, c->top_k, c->groups_per_token);
}

/* The "mla" object (model.h's table). */
static void load_mla(struct jobj *top, struct model *m, bool kv_given)
{
	struct model_mla *a = &m->mla;
	struct jobj jo;

	if (jobj_child(top, "mla", &jo, 0) != 1)
		return;
	jobj_int(&jo, "q_lora_rank", &a->q_lora, 0, 0);
	jobj_int(&jo, "kv_lora_rank", &a->kv_lora, 1, JREQ);
	jobj_int(&jo, "qk_nope_head_dim", &a->nope, 1, JREQ);
	jobj_int(&jo, "qk_rope_head_dim", &a->rope, 1, JREQ);
	jobj_int(&jo, "v_head_dim", &a->v, 1, JREQ);
	static const char *const latents[] = { "kv_lora_rank", "q_lora_rank" };
	for (int i = 0; i < 2 && m->hidden > 0; i++) {
		char key[40], why[300];
		snprintf(key, sizeof(key), "mla/%s", latents[i]);
		long x = i ? a->q_lora : a->kv_lora;
		if (!bound_check_ratio(key, (double)x, (double)m->hidden, why, sizeof(why)))
			jobj_err(&jo, latents[i], "%s", why);
	}
	jobj_end(&jo);
	if (kv_given)
		jobj_err(top, "kv_heads", "must be left out with \"mla\" (its K and V are per head)");
	if (m->pos != MODEL_POS_ROPE)
		jobj_err(top, "position_embedding", "must be \"rope\" with \"mla\" (decoupled RoPE), got \"%s\"",
			 pos_names[m->pos]);
}

/* The "moe" object (model.h's table). */
static void load_moe(struct jobj *top, struct model *m)
{
	struct moe_config *c = &m->moe;
	struct jobj jo;
	int e = MOE_DIST_UNIFORM;
	json_t *arr;
	char jp[256];

	if (jobj_child(top, "moe", &jo, 0) != 1)
		return;
	if (jobj_int(&jo, "experts", &c->experts, 1, JREQ) == 1 && c->experts > MOE_MAX_EXPERTS)
		jobj_err(&jo, "experts", "expected at most %d experts, got %ld", MOE_MAX_EXPERTS,
			 c->experts);
	if (jobj_int(&jo, "top_k", &c->top_k, 1, JREQ) == 1 && c->experts > 0 &&
	    c->top_k > c->experts)
		jobj_err(&jo, "top_k", "must be at most the %ld experts, got %ld", c->experts, c->top_k);
	jobj_int(&jo, "expert_ffn_size", &c->expert_ffn, 1, JREQ);
	jobj_int(&jo, "shared_experts", &c->shared_experts, 0, 0);
	c->shared_ffn = c->expert_ffn;
	jobj_int(&jo, "shared_expert_ffn_size", &c->shared_ffn, 1, 0);
	jobj_num(&jo, "capacity_factor", &c->capacity_factor, JNONNEG);
	jobj_enum(&jo, "routing", moe_dist_names, &e, 0);
	c->dist = e;
	c->zipf_s = 1.0;
	jobj_num(&jo, "zipf_s", &c->zipf_s, JNONNEG);
	if (jobj_array(&jo, "expert_loads", &arr, jp, sizeof(jp), 0) == 1) {
		double sum = 0;
		size_t n = json_array_size(arr);
		if (c->experts > 0 && (long)n != c->experts)
			jobj_err(&jo, "expert_loads", "expected one load per expert (%ld), got %zu",
				 c->experts, n);
		for (size_t i = 0; i < n && i < MOE_MAX_EXPERTS; i++) {
			json_t *v = json_array_get(arr, i);
			char why[160];
			if (!json_is_number(v) || json_number_value(v) < 0)
				jobj_err(&jo, "expert_loads", "element %zu: expected a number >= 0, got %s",
					 i, jload_type_name(v));
			else if (!bound_check("expert_loads", json_number_value(v), why, sizeof(why)))
				jobj_err(&jo, "expert_loads", "element %zu: %s", i, why);
			else
				sum += c->loads[i] = json_number_value(v);
		}
		c->nloads = n < MOE_MAX_EXPERTS ? (int)n : MOE_MAX_EXPERTS;
		if (!(sum > 0))
			jobj_err(&jo, "expert_loads", "needs a load above 0");
		if (c->dist != MOE_DIST_LOADS)
			jobj_err(&jo, "expert_loads", "needs routing \"loads\", got \"%s\"",
				 moe_dist_names[c->dist]);
	} else if (c->dist == MOE_DIST_LOADS)
		jobj_err(&jo, "routing", "\"loads\" needs expert_loads");
	load_moe_layout(&jo, m);
	jobj_end(&jo);
}

/* The keys decoders and encoders share; m's defaults set by the caller
 * where they differ (bias, tied_embeddings, pos, max_position). */
static bool load_layers(struct jobj *jo, struct model *m, bool *kv_given)
{
	int e;

	if (jobj_int(jo, "layers", &m->layers, 1, JREQ) == 1 && m->layers > MODEL_MAX_LAYERS)
		jobj_err(jo, "layers", "expected at most %d layers, got %ld", MODEL_MAX_LAYERS, m->layers);
	jobj_int(jo, "hidden_size", &m->hidden, 1, JREQ);
	jobj_int(jo, "heads", &m->heads, 1, JREQ);
	m->kv_heads = m->heads;
	*kv_given = jobj_int(jo, "kv_heads", &m->kv_heads, 1, 0) == 1;
	m->ffn = 4 * m->hidden;
	bool ffn_given = jobj_int(jo, "ffn_size", &m->ffn, 1, 0) == 1;
	e = MODEL_ACT_GELU;
	jobj_enum(jo, "activation", act_names, &e, 0);
	m->act = e;
	e = MODEL_NORM_LAYERNORM;
	jobj_enum(jo, "norm", norm_names, &e, 0);
	m->norm = e;
	jobj_bool(jo, "bias", &m->bias, 0);
	jobj_bool(jo, "dropout", &m->dropout, 0);
	e = m->pos;
	jobj_enum(jo, "position_embedding", pos_names, &e, 0);
	m->pos = e;
	if (m->arch == MODEL_ARCH_VIT)  /* no words; positions from the image */
		return ffn_given;
	jobj_int(jo, "vocab_size", &m->vocab, 1, JREQ);
	jobj_bool(jo, "tied_embeddings", &m->tied_embeddings, 0);
	jobj_int(jo, "max_position", &m->max_position, 1, 0);
	jobj_num(jo, "published_active_params", &m->published_active_params, JNONNEG);
	return ffn_given;
}

static void load_transformer(struct jobj *jo, struct model *m)
{
	m->pos = MODEL_POS_ROPE;
	m->max_position = 2048;
	bool kv_given, ffn_given = load_layers(jo, m, &kv_given);
	bool hd_given = jobj_int(jo, "head_dim", &m->head_dim, 1, 0) == 1;
	jobj_bool(jo, "qk_norm", &m->qk_norm, 0);
	jobj_int(jo, "sliding_window", &m->sliding_window, 1, 0);
	if (jobj_int(jo, "global_every", &m->global_every, 1, 0) == 1 && !m->sliding_window)
		jobj_err(jo, "global_every", "needs sliding_window (the layers between are windowed)");
	jobj_bool(jo, "attention_sinks", &m->attention_sinks, 0);
	if (jobj_int(jo, "mtp_depth", &m->mtp_depth, 0, 0) == 1 && m->mtp_depth > 0 && m->sliding_window)
		jobj_err(jo, "mtp_depth", "with sliding_window is not modelled (which attention the MTP "
			 "block has is not known)");
	load_moe(jo, m);
	load_mla(jo, m, kv_given);
	if (model_is_mla(m) && hd_given)
		jobj_err(jo, "head_dim", "must be left out with \"mla\" (its head dimensions are in \"mla\")");
	if (model_is_mla(m) && m->qk_norm)
		jobj_err(jo, "qk_norm", "applies to standard attention, not \"mla\" (its latents have their own norms)");
	if (model_is_moe(m) && !ffn_given)
		m->ffn = m->moe.expert_ffn;
}

/* An encoder (model.h's second table); "moe" is left unknown. */
static void load_encoder(struct jobj *jo, struct model *m)
{
	m->pos = MODEL_POS_LEARNED;
	m->max_position = 512;
	m->bias = true;
	m->tied_embeddings = true;
	m->type_vocab = 2;
	m->mlm_head = true;
	bool kv_given;
	load_layers(jo, m, &kv_given);
	if (m->pos != MODEL_POS_LEARNED)
		jobj_err(jo, "position_embedding", "an encoder_transformer has learned positions "
			 "(BERT's table), expected \"learned\", got \"%s\"", pos_names[m->pos]);
	jobj_int(jo, "type_vocab_size", &m->type_vocab, 1, 0);
	jobj_bool(jo, "mlm_head", &m->mlm_head, 0);
	jobj_int(jo, "mlm_positions", &m->mlm_positions, 1, 0);
	jobj_bool(jo, "nsp_head", &m->nsp_head, 0);
	if (m->mlm_positions > 0 && !m->mlm_head)
		jobj_err(jo, "mlm_positions", "needs mlm_head true");
	if (!m->mlm_head && !m->nsp_head)
		jobj_err(jo, "mlm_head", "an encoder needs a head to train: mlm_head or nsp_head");
}

/* A Vision Transformer (model.h's "vit" table). */
static void load_vit(struct jobj *jo, struct model *m)
{
	m->pos = MODEL_POS_LEARNED;
	m->bias = true;
	m->channels = 3;
	m->num_classes = 1000;
	bool kv_given;
	load_layers(jo, m, &kv_given);
	if (m->pos != MODEL_POS_LEARNED)
		jobj_err(jo, "position_embedding", "a vit has learned positions, expected \"learned\", "
			 "got \"%s\"", pos_names[m->pos]);
	if (kv_given && m->kv_heads != m->heads)
		jobj_err(jo, "kv_heads", "a vit has multi-head attention, expected %ld (heads), got %ld",
			 m->heads, m->kv_heads);
	int ri = jobj_int(jo, "image_size", &m->image_size, 1, JREQ);
	int rp = jobj_int(jo, "patch_size", &m->patch_size, 1, JREQ);
	jobj_int(jo, "channels", &m->channels, 1, 0);
	jobj_int(jo, "num_classes", &m->num_classes, 1, 0);
	if (ri == 1 && rp == 1 && m->image_size % m->patch_size)
		jobj_err(jo, "patch_size", "must divide image_size %ld, got %ld", m->image_size,
			 m->patch_size);
	char how[160], why[400];
	snprintf(how, sizeof(how), "(image_size / patch_size)^2 + 1 = (%ld / %ld)^2 + 1", m->image_size,
		 m->patch_size);
	if (ri == 1 && rp == 1 && !bound_check_derived("seq_len", (double)model_vit_seq(m), how, why, sizeof(why)))
		jobj_err(jo, "image_size", "%s (seq_len's own bound)", why);
	m->max_position = model_vit_seq(m);
}

struct model *model_load(const char *path, struct diag *d)
{
	struct model *m = xcalloc(1, sizeof(*m));
	struct jobj jo;
	int arch = 0;
	int before = diag_count(d);

	if (!m)
		return NULL;
	json_t *root = jload_file(path, d);
	if (!root)
		goto err_free;
	if (jload_schema(root, path, d, "ddlsim.model", 1, 4))
		goto err_json;
	jobj_init(&jo, root, path, "", d);

	jload_copy_path(path, m->path, sizeof(m->path), d);
	jobj_str_copy(&jo, "name", m->name, sizeof(m->name), JREQ | JNAME);
	jobj_str_copy(&jo, "source", m->source, sizeof(m->source), JREQ);
	if (jobj_enum_table(&jo, "architecture", model_archs, sizeof(model_archs[0]), &arch, JREQ) == 1) {
		m->arch = arch;
		model_archs[arch].load(&jo, m);
	}
	jobj_num(&jo, "published_params", &m->published_params, JNONNEG);
	jobj_end(&jo);

	if (m->hidden > 0 && m->heads > 0 && m->hidden % m->heads && !m->head_dim)
		diag_err(d, path, "/heads", "must divide hidden_size %ld (or give head_dim), got %ld",
			 m->hidden, m->heads);
	if (m->kv_heads > 0 && m->heads % m->kv_heads)
		diag_err(d, path, "/kv_heads", "must divide heads %ld, got %ld",
			 m->heads, m->kv_heads);
	if (diag_count(d) != before)
		goto err_json;
	json_decref(root);
	return m;

err_json:
	json_decref(root);
err_free:
	free(m);
	return NULL;
}

void model_destroy(struct model *m)
{
	free(m);
}

long model_head_dim(const struct model *m)
{
	if (m->head_dim > 0)
		return m->head_dim;
	return m->heads ? m->hidden / m->heads : 0;
}

bool model_layer_slides(const struct model *m, long layer)
{
	if (m->sliding_window <= 0)
		return false;
	return m->global_every <= 0 || (layer + 1) % m->global_every != 0;
}

long model_sliding_layers_in(const struct model *m, long first, long n)
{
	long k = 0;
	for (long i = first; i < first + n; i++)
		k += model_layer_slides(m, i);
	return k;
}

double model_q_width(const struct model *m)
{
	return (double)m->heads * (double)model_qk_head_dim(m);
}

double model_kv_width(const struct model *m)
{
	return (double)m->kv_heads * (double)model_head_dim(m);
}

double model_attn_out_width(const struct model *m)
{
	return (double)m->heads * (double)model_v_head_dim(m);
}

int model_linear_weights(const struct model *m, double *p)
{
	double h = (double)m->hidden, kv = model_kv_width(m), q = model_q_width(m), f = (double)m->ffn;
	double sw[] = { h * q, h * kv, h * kv, q * h, h * f, h * f, f * h };
	double ge[] = { h * (q + 2 * kv), q * h, h * f, f * h };
	bool swiglu = m->act == MODEL_ACT_SWIGLU;
	int n = swiglu ? 7 : 4;
	for (int i = 0; i < n; i++)
		p[i] = swiglu ? sw[i] : ge[i];
	return n;
}

bool model_is_moe(const struct model *m)
{
	return m->moe.experts > 0;
}

/* One MLP of inner size f, with its biases. */
static double mlp_params(const struct model *m, double f)
{
	double h = (double)m->hidden;
	double p = (m->act == MODEL_ACT_SWIGLU ? 3 : 2) * h * f;
	if (m->bias)
		p += (m->act == MODEL_ACT_SWIGLU ? 2 * f : f) + h;
	return p;
}

bool model_is_mla(const struct model *m)
{
	return m->mla.kv_lora > 0;
}

long model_qk_head_dim(const struct model *m)
{
	return model_is_mla(m) ? m->mla.nope + m->mla.rope : model_head_dim(m);
}

long model_v_head_dim(const struct model *m)
{
	return model_is_mla(m) ? m->mla.v : model_head_dim(m);
}

long model_moe_layers(const struct model *m)
{
	return model_is_moe(m) ? m->layers - m->moe.first_dense : 0;
}

double model_attn_params(const struct model *m)
{
	double h = (double)m->hidden;
	if (!model_is_mla(m)) {
		double q = model_q_width(m), kv = model_kv_width(m);
		double qk_norm = m->qk_norm ? 2 * (double)model_head_dim(m) : 0;
		double sinks = m->attention_sinks ? (double)m->heads : 0;
		return h * (q + 2 * kv) + q * h + (m->bias ? (q + 2 * kv) + h : 0) + qk_norm + sinks;
	}
	const struct model_mla *a = &m->mla;
	double heads = (double)m->heads, ql = (double)a->q_lora, kl = (double)a->kv_lora;
	double dqk = (double)(a->nope + a->rope), ln = m->norm == MODEL_NORM_LAYERNORM ? 2 : 1;
	double q = ql > 0 ? h * ql + ln * ql + ql * heads * dqk : h * heads * dqk;
	double kv = h * (kl + (double)a->rope) + ln * kl + kl * heads * (double)(a->nope + a->v);
	double o = heads * (double)a->v * h;
	return q + kv + o + (m->bias ? heads * dqk + kl + (double)a->rope + heads *
				       (double)(a->nope + a->v) + h : 0);
}

/* Attention (with biases) and the two norms. */
static double attn_norm_params(const struct model *m)
{
	return model_attn_params(m) + (m->norm == MODEL_NORM_LAYERNORM ? 4 : 2) * (double)m->hidden;
}

/* Router and shared experts of an MoE layer. */
static double moe_dense_params(const struct model *m)
{
	const struct moe_config *c = &m->moe;
	return (double)m->hidden * (double)c->experts +
	       (double)c->shared_experts * mlp_params(m, (double)c->shared_ffn);
}

double model_layer_expert_params(const struct model *m)
{
	if (!model_is_moe(m))
		return 0;
	return (double)m->moe.experts * mlp_params(m, (double)m->moe.expert_ffn);
}

double model_dense_layer_params(const struct model *m)
{
	return attn_norm_params(m) + mlp_params(m, (double)m->ffn);
}

long model_moe_layers_in(const struct model *m, long first, long n)
{
	if (!model_is_moe(m))
		return 0;
	long dense = m->moe.first_dense - first;    /* dense layers from `first` on */
	if (dense < 0)
		dense = 0;
	return dense < n ? n - dense : 0;
}

double model_layer_params(const struct model *m)
{
	if (model_is_moe(m))
		return attn_norm_params(m) + moe_dense_params(m) + model_layer_expert_params(m);
	return model_dense_layer_params(m);
}

double model_layer_active_params(const struct model *m)
{
	if (!model_is_moe(m))
		return model_layer_params(m);
	return attn_norm_params(m) + moe_dense_params(m) +
	       (double)m->moe.top_k * mlp_params(m, (double)m->moe.expert_ffn);
}

double model_active_params(const struct model *m)
{
	if (!model_is_moe(m))
		return model_params(m);
	double moe = (double)model_moe_layers(m);
	return moe * model_layer_active_params(m) + ((double)m->layers - moe) * model_dense_layer_params(m) +
	       model_embedding_params(m) + model_head_params(m);
}

bool model_is_encoder(const struct model *m)
{
	return m->arch == MODEL_ARCH_ENCODER;
}

bool model_is_vit(const struct model *m)
{
	return m->arch == MODEL_ARCH_VIT;
}

bool model_is_bidirectional(const struct model *m)
{
	return model_is_encoder(m) || model_is_vit(m);
}

long model_vit_seq(const struct model *m)
{
	if (!model_is_vit(m) || m->patch_size <= 0)
		return 0;
	long n = m->image_size / m->patch_size;
	return n * n + 1;
}

double model_logits_per_sample(const struct model *m, double seq)
{
	if (model_is_vit(m))
		return (double)m->num_classes;
	return model_head_tokens(m, seq) * (double)m->vocab;
}

/* A ViT's patch embedding: the linear of p^2 C -> h and its bias. */
static double patch_embed_params(const struct model *m)
{
	double p = (double)m->patch_size;
	return p * p * (double)m->channels * (double)m->hidden + (double)m->hidden;
}

double model_head_tokens(const struct model *m, double seq)
{
	if (model_is_encoder(m) && m->mlm_positions > 0 && (double)m->mlm_positions < seq)
		return (double)m->mlm_positions;
	return seq;
}

/* BERT's pooler: dense h x h with its bias. */
static double pooler_params(const struct model *m)
{
	return (double)m->hidden * (double)m->hidden + (double)m->hidden;
}

double model_embedding_params(const struct model *m)
{
	double p = (double)m->vocab * (double)m->hidden;
	if (model_is_vit(m))            /* patches, class token, positions */
		return patch_embed_params(m) + (double)(1 + model_vit_seq(m)) * (double)m->hidden;
	if (model_is_encoder(m))        /* word + position + token type + LayerNorm */
		return p + (double)(m->max_position + m->type_vocab + 2) * (double)m->hidden;
	if (m->pos == MODEL_POS_LEARNED)
		p += (double)m->max_position * (double)m->hidden;
	return p;
}

double model_head_params(const struct model *m)
{
	if (model_is_vit(m))            /* final LayerNorm, classifier and its bias */
		return 2 * (double)m->hidden + ((double)m->hidden + 1) * (double)m->num_classes;
	if (model_is_encoder(m)) {
		double h = (double)m->hidden, p = 0;
		if (m->mlm_head)        /* transform dense, LayerNorm, decoder bias */
			p += pooler_params(m) + 2 * h + (double)m->vocab +
			     (m->tied_embeddings ? 0 : (double)m->vocab * h);
		if (m->nsp_head)        /* pooler, 2-way classifier */
			p += pooler_params(m) + 2 * h + 2;
		return p;
	}
	double final_norm = (m->norm == MODEL_NORM_LAYERNORM ? 2 : 1) * (double)m->hidden;
	return final_norm + (m->tied_embeddings ? 0 : (double)m->vocab * (double)m->hidden);
}

static double transformer_params(const struct model *m)
{
	double moe = (double)model_moe_layers(m);
	return moe * model_layer_params(m) + ((double)m->layers - moe) * model_dense_layer_params(m) +
	       model_embedding_params(m) + model_head_params(m);
}

double model_encoder_base_params(const struct model *m)
{
	return (double)m->layers * model_layer_params(m) + model_embedding_params(m) +
	       pooler_params(m);
}

static double encoder_params(const struct model *m)
{
	return transformer_params(m);
}

static double cnn_iteration_flops(const struct model *m, double batch, double seq)
{
	(void)seq;
	return 3 * batch * cnn_forward_flops(m);
}

double model_params(const struct model *m)
{
	return model_arch(m)->params(m);
}

double model_iteration_flops(const struct model *m, double batch, double seq)
{
	return model_arch(m)->iteration_flops(m, batch, seq);
}

/* Forward GEMM FLOPs per token of a layer's attention projections: 2 x
 * their weights (MLA: the five projections of model.h, eqs. 9-19 of
 * DeepSeek-V2; the latents' norms are no GEMMs). */
static double attn_gemm_flops(const struct model *m)
{
	double h = (double)m->hidden;
	if (!model_is_mla(m)) {
		double q = model_q_width(m), kv = model_kv_width(m);
		return 2 * (h * (q + 2 * kv) + q * h);
	}
	const struct model_mla *a = &m->mla;
	double heads = (double)m->heads, ql = (double)a->q_lora, kl = (double)a->kv_lora;
	double dqk = (double)(a->nope + a->rope);
	double q = ql > 0 ? h * ql + ql * heads * dqk : h * heads * dqk;
	return 2 * (q + h * (kl + (double)a->rope) + kl * heads * (double)(a->nope + a->v) +
		    heads * (double)a->v * h);
}

static double transformer_iteration_flops(const struct model *m, double batch, double seq)
{
	double h = (double)m->hidden, f = (double)m->ffn, L = (double)m->layers;
	double tok = batch * seq, fm = (m->act == MODEL_ACT_SWIGLU ? 3 : 2) * h;
	double Lm = (double)model_moe_layers(m);
	/* forward GEMM flops per token per layer: 2 * weights */
	double dense = attn_gemm_flops(m) + 2 * fm * f, moe = 0;
	if (model_is_moe(m)) {  /* activated weights only: k routed + shared experts, router */
		const struct moe_config *c = &m->moe;
		moe = attn_gemm_flops(m) + 2 * (h * (double)c->experts +
			    fm * ((double)c->top_k * (double)c->expert_ffn +
				  (double)c->shared_experts * (double)c->shared_ffn));
	}
	/* QK^T and AV per token, full s x s: 2 s a (d_qk + d_v); a sliding
	 * layer's query sees min(s, w) keys in the same convention */
	double per_key = 2 * (double)m->heads * (double)(model_qk_head_dim(m) + model_v_head_dim(m));
	double Ls = (double)model_sliding_layers_in(m, 0, m->layers);
	double span = m->sliding_window > 0 ? fmin(seq, (double)m->sliding_window) : seq;
	double attn = per_key * ((L - Ls) * seq + Ls * span);
	double fwd = tok * ((L - Lm) * dense + Lm * moe + attn + 2 * h * (double)m->vocab);
	return 3 * fwd + model_mtp_iteration_flops(m, batch, seq);
}

double model_mtp_extra_params(const struct model *m)
{
	double h = (double)m->hidden, norm = m->norm == MODEL_NORM_LAYERNORM ? 2 * h : h;
	return (double)m->mtp_depth * (2 * h * h + 3 * norm);
}

/* True where the last layer (the MTP block's kind) is an MoE layer. */
static bool last_layer_moe(const struct model *m)
{
	return model_moe_layers_in(m, m->layers - 1, 1) > 0;
}

double model_mtp_params(const struct model *m)
{
	double block = last_layer_moe(m) ? model_layer_params(m) : model_dense_layer_params(m);
	return (double)m->mtp_depth * block + model_mtp_extra_params(m);
}

double model_mtp_iteration_flops(const struct model *m, double batch, double seq)
{
	if (m->mtp_depth <= 0)
		return 0;
	double h = (double)m->hidden, fm = (m->act == MODEL_ACT_SWIGLU ? 3 : 2) * h;
	double gemm = attn_gemm_flops(m) + 2 * fm * (double)m->ffn;
	if (last_layer_moe(m)) {
		const struct moe_config *c = &m->moe;
		gemm = attn_gemm_flops(m) + 2 * (h * (double)c->experts +
			fm * ((double)c->top_k * (double)c->expert_ffn +
			      (double)c->shared_experts * (double)c->shared_ffn));
	}
	double attn = 2 * (double)m->heads * (double)(model_qk_head_dim(m) + model_v_head_dim(m)) * seq;
	double per_tok = gemm + attn + 2 * (2 * h) * h + 2 * h * (double)m->vocab;
	return 3 * batch * seq * (double)m->mtp_depth * per_tok;
}

/* An encoder: the layers as the decoder's (full attention, model.h), the
 * MLM head on model_head_tokens() per sample (transform 2h^2, decoder
 * 2hV per token), the pooler and the NSP classifier on the first token. */
static double encoder_iteration_flops(const struct model *m, double batch, double seq)
{
	double h = (double)m->hidden, V = (double)m->vocab;
	struct model body = *m;
	body.vocab = 0;  /* the layers alone */
	double fwd = transformer_iteration_flops(&body, batch, seq) / 3;
	if (m->mlm_head)
		fwd += batch * model_head_tokens(m, seq) * (2 * h * h + 2 * h * V);
	if (m->nsp_head)
		fwd += batch * (2 * h * h + 2 * h * 2);
	return 3 * fwd;
}

/* A ViT (model.h): the patch embedding's GEMM on (image/patch)^2 patches
 * per image, the layers on seq tokens (full attention), the classifier on
 * the class token. */
static double vit_iteration_flops(const struct model *m, double batch, double seq)
{
	double h = (double)m->hidden, p = (double)m->patch_size;
	double patches = (double)(model_vit_seq(m) - 1);
	struct model body = *m;
	body.vocab = 0;
	double fwd = transformer_iteration_flops(&body, batch, seq) / 3;
	fwd += batch * (2 * patches * p * p * (double)m->channels * h +
			2 * h * (double)m->num_classes);
	return 3 * fwd;
}
