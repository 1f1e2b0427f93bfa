/* import_megatron: Megatron-LM pretrain_gpt.py arguments as a ddlsim
 * scenario and its model.
 *
 * Every flag's meaning and default is Megatron-LM's at tag core_v0.9.0
 * (github.com/NVIDIA/Megatron-LM, commit 1afee592e85a, the version the
 * framework preset "megatron-core@0.9" cites), file
 * megatron/training/arguments.py (L<n> below) and
 * megatron/core/transformer/transformer_config.py (TC L<n>), except
 * --moe-ffn-hidden-size, which is newer (TransformerConfig's
 * moe_ffn_hidden_size at d98e8a64ddf3, default ffn_hidden_size). A flag
 * left out takes that default; the table below names it.
 *
 *   flag                                   ddlsim key                   default (where)
 *   --num-layers                           model layers                 required (L405)
 *   --hidden-size                          model hidden_size            required (L405)
 *   --num-attention-heads                  model heads                  required (L405)
 *   --group-query-attention, --num-query-groups
 *                                          model kv_heads               heads: MHA unless
 *                                                                       --group-query-attention (L688)
 *   --kv-channels                          model head_dim               h / heads (L421)
 *   --ffn-hidden-size                      model ffn_size               4h; --swiglu: int(8h/3 / 64) 64 (L410)
 *   --swiglu                               model activation swiglu      gelu (L870)
 *   --normalization RMSNorm                model norm rmsnorm           LayerNorm (L852)
 *   --disable-bias-linear                  model bias false             biases on (L1222)
 *   --untie-embeddings-and-output-weights  model tied_embeddings false  tied (L878)
 *   --position-embedding-type              model position_embedding     learned_absolute (L831)
 *   --max-position-embeddings              model max_position           required (L405), >= seq (L437)
 *   --vocab-size, --make-vocab-size-divisible-by, --tokenizer-type
 *                                          model vocab_size             V padded to a multiple of
 *                                                                       128 tp (L849; tokenizer.py L79);
 *                                                                       NullTokenizer: V + 1 (EOD)
 *   --attention-dropout, --hidden-dropout  model dropout                0.1 each (L1016, L1018): on
 *   --qk-layernorm                         model qk_norm                off (L1855)
 *   --num-experts, --moe-router-topk, --moe-ffn-hidden-size
 *                                          model moe.*                  none; top-k 2 (L1870)
 *   --moe-token-dispatcher-type alltoall   (ddlsim's EP all-to-all)     allgather (L1882): not
 *                                                                       modelled, listed unknown
 *   --seq-length                           training.seq_len             required
 *   --micro-batch-size                     training.micro_batch         required (L258)
 *   --global-batch-size                    training.global_batch        micro x dp (L263)
 *   --bf16, --fp16, --fp8-format           training.precision           fp32 (L1469-1471, L701)
 *   --fp8-param-gather                     training.fp8_params          off (L724)
 *   --accumulate-allreduce-grads-in-fp32   training.grad_reduce_dtype   off; bf16 forces it (L330)
 *   --tensor-model-parallel-size           parallel.tp                  1 (L1505)
 *   --pipeline-model-parallel-size         parallel.pp                  1 (L1509)
 *   --num-layers-per-virtual-pipeline-stage parallel.schedule interleaved, interleave
 *                                                                       (layers / pp) / it (L269-285)
 *   --decoder-first/last-pipeline-num-layers parallel.first/last_stage_layers  even split (L1518)
 *   --context-parallel-size                parallel.cp                  1 (L1586)
 *   --expert-model-parallel-size           parallel.ep                  1 (L1862)
 *   --expert-tensor-parallel-size          parallel.etp                 tp (not in core_v0.9.0;
 *                                                                       core_v0.10.0 7ee599a
 *                                                                       arguments.py L2060, L259-260)
 *   --sequence-parallel                    parallel.sp                  off (L1243); off at tp 1 (L499)
 *   --use-distributed-optimizer            parallel.zero 1              0 (L1584)
 *   --num-distributed-optimizer-instances  parallel.shard_group         1 (not in core_v0.9.0; Megatron-LM
 *                                          dp x cp / N                  00119989 arguments.py, param_and_grad_
 *                                                                       buffer.py: the optimizer sharded over
 *                                                                       dp x cp / N ranks, the shards
 *                                                                       all-reduced across the N instances)
 *   --recompute-granularity, --recompute-method, --recompute-num-layers, --recompute-activations
 *                                          parallel.recompute           none (L1084); full needs
 *                                                                       a method and layers (TC L392-419)
 *   --recompute-modules                    parallel.recompute_modules   core_attn (not in core_v0.9.0;
 *                                                                       at d98e8a64ddf3 TC L560, a
 *                                                                       List[str] read with nargs "+"
 *                                                                       (argument_utils.py L143-147),
 *                                                                       checked only with granularity
 *                                                                       selective (TC L1940-1962));
 *                                                                       mlp, moe, shared_experts and
 *                                                                       the GDN / mHC ones refused as
 *                                                                       not modelled
 *   --overlap-grad-reduce                  communication.overlap_grad_reduce  off (L1539)
 *   --overlap-param-gather                 communication.overlap_param_gather off (L1556)
 *   --tp-comm-overlap                      communication.tp_comm_overlap      off (L1133)
 *   --transformer-impl                     (framework's stack)          transformer_engine (L721)
 *
 * The scenario names framework "megatron-core@0.9" for what the arguments
 * leave to Megatron-Core (gradient buckets, attention backend, kernels).
 * The world size is the launcher's (WORLD_SIZE, L75), not an argument: it
 * is nodes x GPUs per node of the topology with --nodes; else torchrun's
 * --nnodes x --nproc_per_node where the launch file holds them before the
 * script; else dp is global batch / micro batch (no gradient accumulation
 * assumed, said in the table) and the nodes follow. --vocab-size is read
 * as the tokenizer's size before padding (a tokenizer file is not read);
 * --sequence-parallel at tp 1 is turned off, as Megatron turns it off
 * (L499), and the table says so. Refused as Megatron refuses them: a missing required flag, both
 * --fp16 and --bf16 (TC L319), heads or query groups not a multiple of tp
 * (TC L324, L339), a world size not a multiple of tp pp cp (L180), a
 * global batch not a multiple of micro x dp (num_microbatches_calculator.py
 * L461), an interleaved schedule with pp 1 (L271) or layers that do not
 * split (L279, L282), --overlap-param-gather without the distributed
 * optimizer or --overlap-grad-reduce (L291-296), seq_len above
 * max_position_embeddings (L437), seq not a multiple of 2 cp (L425); and
 * heads not a multiple of the query groups. Flags with no effect on time
 * or memory (learning rate, data, checkpoints, logging) are listed as
 * ignored; any other as unknown. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import_megatron-private.h"
#include "workload.h"
#include "xalloc.h"

/* The value as given, for the table ("" for a flag, "(absent)" when not given). */
static const char *given_text(const struct mg *m, enum flag_id f)
{
	if (!m->given[f])
		return "";
	return mg_flags[f].kind == K_FLAG ? "(set)" : m->sv[f];
}

/* Set key (a JSON path into doc: "/parallel/tp") and add the row. */
static void put(struct mg *m, json_t *doc, const char *docname, const char *path, json_t *v, enum flag_id f,
		enum import_status st, const char *note)
{
	json_t *obj = doc;
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", path + 1);
	char *leaf = buf, *slash;
	while ((slash = strchr(leaf, '/'))) {
		*slash = 0;
		json_t *c = json_object_get(obj, leaf);
		if (!c) {
			c = json_object();
			json_object_set_new(obj, leaf, c);
		}
		obj = c;
		leaf = slash + 1;
	}
	char *w = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
	char *key = xasprintf("%s: %s", docname, path);
	char *src = xasprintf("--%s", mg_flags[f].name);
	import_map_add(m->map, st, src, given_text(m, f), key, w, note);
	if (m->file && m->given[f] && m->at[f] >= 0) {
		char *where = xasprintf("%s:%d:%d", m->file, m->t[m->at[f]].line, m->t[m->at[f]].col);
		import_map_locate(m->map, where);
		free(where);
	}
	json_object_set_new(obj, leaf, v);
	free(src);
	free(key);
	free(w);
}

#define MODEL(path, v, f, st, note) put(m, model, "model", path, v, f, st, note)
#define SCEN(path, v, f, st, note) put(m, sc, "scenario", path, v, f, st, note)
#define ST(f) (m->given[f] ? IMPORT_MAPPED : IMPORT_DEFAULT)

/* Attention: query groups (--group-query-attention) and head size. */
static void map_attention(struct mg *m, json_t *model, long tp)
{
	long h = m->iv[F_HIDDEN], heads = m->iv[F_HEADS];
	if (m->given[F_GROUPS] && !m->given[F_GQA])
		import_map_add(m->map, IMPORT_IGNORED, "--num-query-groups", m->sv[F_GROUPS], "", "",
			       "without --group-query-attention Megatron uses heads (L688-691)");
	if (m->given[F_GQA]) {
		/* --num-query-groups default 1 (L826) */
		long g = m->given[F_GROUPS] ? m->iv[F_GROUPS] : 1;
		if (g < 1 || heads % g)
			mg_err(m, m->at[m->given[F_GROUPS] ? F_GROUPS : F_GQA], "--num-query-groups: %ld does not divide "
			       "--num-attention-heads %ld", g, heads);
		else if (g % tp)
			mg_err(m, m->at[m->given[F_GROUPS] ? F_GROUPS : F_GQA], "--num-query-groups: %ld is not a multiple "
			       "of --tensor-model-parallel-size %ld (transformer_config.py L339)", g, tp);
		MODEL("/kv_heads", json_integer(g), F_GROUPS, ST(F_GROUPS),
		      m->given[F_GROUPS] ? NULL : "absent: 1 (L826)");
	}
	if (m->given[F_KV_CHANNELS])
		MODEL("/head_dim", json_integer(m->iv[F_KV_CHANNELS]), F_KV_CHANNELS, IMPORT_MAPPED, NULL);
	else if (heads && h % heads)
		mg_err(m, m->at[F_HEADS], "--num-attention-heads: %ld does not divide --hidden-size %ld and "
		       "--kv-channels is not given (L421)", heads, h);
}

/* The MLP: activation and FFN size. Returns the FFN size. */
static long map_mlp(struct mg *m, json_t *model)
{
	long h = m->iv[F_HIDDEN];
	bool swiglu = m->given[F_SWIGLU];
	MODEL("/activation", json_string(swiglu ? "swiglu" : "gelu"), F_SWIGLU, ST(F_SWIGLU),
	      swiglu ? NULL : "absent: GELU (L870)");
	long ffn = m->given[F_FFN] ? m->iv[F_FFN] : swiglu ? (long)((4.0 * h * 2 / 3) / 64) * 64 : 4 * h;
	MODEL("/ffn_size", json_integer(ffn), F_FFN, ST(F_FFN),
	      m->given[F_FFN] ? NULL : swiglu ? "absent: int(4h 2/3 / 64) 64 (L417)" : "absent: 4h (L419)");
	return ffn;
}

/* Norm, biases, tied embeddings, position embedding and its reach. */
static void map_layout(struct mg *m, json_t *model)
{
	const char *norm = m->given[F_NORM] ? m->sv[F_NORM] : "LayerNorm";
	if (strcmp(norm, "LayerNorm") && strcmp(norm, "RMSNorm"))
		mg_err(m, m->at[F_NORM], "--normalization: expected LayerNorm or RMSNorm, got '%s'", norm);
	MODEL("/norm", json_string(strcmp(norm, "RMSNorm") ? "layernorm" : "rmsnorm"), F_NORM, ST(F_NORM),
	      m->given[F_NORM] ? NULL : "absent: LayerNorm (L852)");
	MODEL("/bias", json_boolean(!m->given[F_NOBIAS]), F_NOBIAS, ST(F_NOBIAS),
	      m->given[F_NOBIAS] ? NULL : "absent: add_bias_linear (L1222)");
	MODEL("/tied_embeddings", json_boolean(!m->given[F_UNTIE]), F_UNTIE, ST(F_UNTIE),
	      m->given[F_UNTIE] ? NULL : "absent: tied (L878)");
	const char *pos = m->given[F_POS] ? m->sv[F_POS] : "learned_absolute";
	if (strcmp(pos, "learned_absolute") && strcmp(pos, "rope"))
		mg_err(m, m->at[F_POS], "--position-embedding-type: expected learned_absolute or rope (ddlsim has no "
		       "model without position embeddings), got '%s'", pos);
	MODEL("/position_embedding", json_string(strcmp(pos, "rope") ? "learned" : "rope"), F_POS, ST(F_POS),
	      m->given[F_POS] ? NULL : "absent: learned_absolute (L831)");
	MODEL("/max_position", json_integer(m->iv[F_MAXPOS]), F_MAXPOS, IMPORT_MAPPED, NULL);
}

/* The vocabulary: the tokenizer's size padded (tokenizer.py L79-91). */
static void map_vocab(struct mg *m, json_t *model, long tp)
{
	if (!m->given[F_VOCAB]) {
		mg_err(m, -1, "--vocab-size: not given: the vocabulary is the tokenizer's, which the arguments do not "
		       "hold; give --vocab-size (its size before padding)");
		return;
	}
	bool null_tok = m->given[F_TOKENIZER] && !strcmp(m->sv[F_TOKENIZER], "NullTokenizer");
	long v = m->iv[F_VOCAB] + null_tok;
	long div = m->given[F_DIVISIBLE] ? m->iv[F_DIVISIBLE] : 128;
	long mult = div * tp;
	long padded = mult > 0 ? (v + mult - 1) / mult * mult : v;
	char note[160];
	snprintf(note, sizeof(note), "%ld%s padded to a multiple of %ld x tp %ld (tokenizer.py L79)", v,
		 null_tok ? " (NullTokenizer: + EOD)" : "", div, tp);
	MODEL("/vocab_size", json_integer(padded), F_VOCAB, IMPORT_DERIVED, note);
	if (m->given[F_DIVISIBLE])
		import_map_add(m->map, IMPORT_MAPPED, "--make-vocab-size-divisible-by", m->sv[F_DIVISIBLE],
			       "model: /vocab_size", "", "the padding's multiple");
	if (m->given[F_TOKENIZER])
		import_map_add(m->map, IMPORT_MAPPED, "--tokenizer-type", m->sv[F_TOKENIZER], "model: /vocab_size",
			       "", null_tok ? "NullTokenizer: one EOD token beyond --vocab-size" :
			       "the vocabulary is --vocab-size");
}

/* Dropout, on when either probability is, and the QK norm. */
static void map_regularization(struct mg *m, json_t *model)
{
	double ad = m->given[F_ATTN_DROP] ? m->dv[F_ATTN_DROP] : 0.1, hd = m->given[F_HIDDEN_DROP] ? m->dv[F_HIDDEN_DROP] : 0.1;
	MODEL("/dropout", json_boolean(ad > 0 || hd > 0), F_ATTN_DROP, ST(F_ATTN_DROP),
	      m->given[F_ATTN_DROP] ? "with --hidden-dropout" : "absent: 0.1 (L1016)");
	if (m->given[F_HIDDEN_DROP])
		import_map_add(m->map, IMPORT_MAPPED, "--hidden-dropout", m->sv[F_HIDDEN_DROP], "model: /dropout",
			       ad > 0 || hd > 0 ? "true" : "false", "with --attention-dropout");
	else
		import_map_add(m->map, IMPORT_DEFAULT, "--hidden-dropout", "", "model: /dropout",
			       ad > 0 || hd > 0 ? "true" : "false", "absent: 0.1 (L1018)");
	if (m->given[F_QK_LN])
		MODEL("/qk_norm", json_true(), F_QK_LN, IMPORT_MAPPED, NULL);
}

/* Mixture of experts (--num-experts), its FFN size defaulting to ffn. */
static void map_moe(struct mg *m, json_t *model, long ffn)
{
	if (!m->given[F_EXPERTS]) {
		for (int f = F_TOPK; f <= F_MOE_FFN; f++)
			if (m->given[f])
				import_map_add(m->map, IMPORT_IGNORED, f == F_TOPK ? "--moe-router-topk" : "--moe-ffn-hidden-size",
					       m->sv[f], "", "", "no --num-experts: a dense model");
		return;
	}
	MODEL("/moe/experts", json_integer(m->iv[F_EXPERTS]), F_EXPERTS, IMPORT_MAPPED, NULL);
	MODEL("/moe/top_k", json_integer(m->given[F_TOPK] ? m->iv[F_TOPK] : 2), F_TOPK, ST(F_TOPK),
	      m->given[F_TOPK] ? NULL : "absent: 2 (L1870)");
	MODEL("/moe/expert_ffn_size", json_integer(m->given[F_MOE_FFN] ? m->iv[F_MOE_FFN] : ffn), F_MOE_FFN,
	      ST(F_MOE_FFN), m->given[F_MOE_FFN] ? NULL : "absent: ffn_hidden_size (TransformerConfig)");
	/* ddlsim's expert parallelism exchanges tokens all-to-all */
	const char *disp = m->given[F_DISPATCHER] ? m->sv[F_DISPATCHER] : "allgather";
	import_map_add(m->map, strcmp(disp, "alltoall") ? IMPORT_UNKNOWN : IMPORT_MAPPED,
		       "--moe-token-dispatcher-type", given_text(m, F_DISPATCHER), "scenario: /parallel/ep", "",
		       strcmp(disp, "alltoall") ? (m->given[F_DISPATCHER] ? "not all-to-all: priced as ddlsim's "
		       "all-to-all exchange" : "absent: allgather (L1882), not modelled: priced as ddlsim's "
		       "all-to-all exchange") : "ddlsim's expert exchange is all-to-all");
}

/* The flags the model file takes. */
static void map_model(struct mg *m, json_t *model, long tp)
{
	MODEL("/layers", json_integer(m->iv[F_LAYERS]), F_LAYERS, IMPORT_MAPPED, NULL);
	MODEL("/hidden_size", json_integer(m->iv[F_HIDDEN]), F_HIDDEN, IMPORT_MAPPED, NULL);
	MODEL("/heads", json_integer(m->iv[F_HEADS]), F_HEADS, IMPORT_MAPPED, NULL);
	map_attention(m, model, tp);
	long ffn = map_mlp(m, model);
	map_layout(m, model);
	map_vocab(m, model, tp);
	map_regularization(m, model);
	map_moe(m, model, ffn);
}

/* Recompute: Megatron's granularity, method and layers as ddlsim's
 * recompute (TC L392-419). Full recompute of every layer is method
 * uniform with 1 layer per unit, or block with every layer of a stage. */
static const char *recompute(struct mg *m, long layers_per_stage, const char **note)
{
	const char *gran = m->given[F_RC_GRAN] ? m->sv[F_RC_GRAN] : NULL;
	*note = NULL;
	if (m->given[F_RC_ACT] && !gran) {
		*note = "--recompute-activations: selective (L235)";
		return "selective";
	}
	if (!gran) {
		*note = "absent: no recompute (L1084)";
		return "none";
	}
	if (!strcmp(gran, "selective")) {
		if (m->given[F_RC_METHOD])
			mg_err(m, m->at[F_RC_METHOD], "--recompute-method: not with --recompute-granularity selective (L493)");
		if (m->given[F_RC_LAYERS])
			mg_err(m, m->at[F_RC_LAYERS], "--recompute-num-layers: not with --recompute-granularity selective "
			       "(transformer_config.py L415)");
		return "selective";
	}
	if (strcmp(gran, "full")) {
		mg_err(m, m->at[F_RC_GRAN], "--recompute-granularity: expected full or selective, got '%s'", gran);
		return "none";
	}
	if (!m->given[F_RC_METHOD] || !m->given[F_RC_LAYERS]) {
		mg_err(m, m->at[F_RC_GRAN], "--recompute-granularity full: needs --recompute-method (uniform or block) "
		       "and --recompute-num-layers (transformer_config.py L402-411)");
		return "none";
	}
	const char *meth = m->sv[F_RC_METHOD];
	long n = m->iv[F_RC_LAYERS];
	if (!strcmp(meth, "uniform") && n == 1)
		return "full";
	if (!strcmp(meth, "block") && n == layers_per_stage)
		return "full";
	if (strcmp(meth, "uniform") && strcmp(meth, "block"))
		mg_err(m, m->at[F_RC_METHOD], "--recompute-method: expected uniform or block, got '%s'", meth);
	else
		mg_err(m, m->at[F_RC_LAYERS], "--recompute-num-layers: %s with %ld layers is not expressible in ddlsim "
		       "(its full recompute is every layer its own unit: uniform 1, or block %ld)", meth, n,
		       layers_per_stage);
	return "none";
}

/* --recompute-modules (d98e8a64ddf3 transformer_config.py L560,
 * L1940-1962): the words as parallel.recompute_modules with recompute
 * rc "selective"; any other granularity leaves them unread, as Megatron
 * does. Megatron's other names are refused as not modelled, a name it
 * does not know as Megatron refuses it (TC L1958). */
static void map_recompute_modules(struct mg *m, json_t *sc, const char *rc)
{
	/* Megatron's names beyond ddlsim's (workload.h rc_module_names) */
	static const char *const other[] = { "gdn_norm_out", "gdp_in_proj", "gdp_qkv", "mhc", NULL };
	const char *flag = "--recompute-modules";

	if (!m->given[F_RC_MODULES])
		return;
	if (strcmp(rc, "selective")) {
		import_map_add(m->map, IMPORT_IGNORED, flag, m->sv[F_RC_MODULES], "", "",
			       "read only with --recompute-granularity selective (TC L1943): no effect");
		return;
	}
	json_t *arr = json_array();
	char *words = xstrdup(m->sv[F_RC_MODULES]), *save = NULL;
	for (char *w = strtok_r(words, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		int k = 0, j = 0;
		while (rc_module_names[k] && strcmp(rc_module_names[k], w))
			k++;
		while (other[j] && strcmp(other[j], w))
			j++;
		if (!rc_module_names[k] && !other[j])
			mg_err(m, m->at[F_RC_MODULES], "%s: expected one of Megatron's modules {core_attn, moe_act, "
			       "layernorm, mla_up_proj, mlp, moe, shared_experts, gdn_norm_out, gdp_in_proj, gdp_qkv, "
			       "mhc}, got '%s' (transformer_config.py L1958)", flag, w);
		else if (rc_module_names[k] && (1u << k) == RC_MOD_MLA_UP_PROJ)
			mg_err(m, m->at[F_RC_MODULES], "%s: 'mla_up_proj' needs multi-latent attention (TC L1969), "
			       "which a Megatron import does not describe: set it in the model file and "
			       "parallel.recompute_modules by hand", flag);
		else if (!rc_module_names[k] || !((1u << k) & RC_MOD_MODELLED))
			mg_err(m, m->at[F_RC_MODULES], "%s: '%s' (a whole sub-block checkpointed) is not modelled; "
			       "modelled: core_attn, moe_act, layernorm", flag, w);
		else
			json_array_append_new(arr, json_string(w));
	}
	free(words);
	SCEN("/parallel/recompute_modules", arr, F_RC_MODULES, IMPORT_MAPPED,
	     "Megatron's selective modules (TC L560)");
}

/* The world size and data parallelism: --nodes, else torchrun's --nnodes x
 * --nproc_per_node, else global / micro batch. Returns 0 with *dp, *nodes
 * and how (note), or -1 after mg_err(). */
static int world_of(struct mg *m, const struct import_cluster *c, long tp, long pp, long cp, long *dp_out,
		    long *nodes_out, char *note, size_t note_n)
{
	long micro = m->iv[F_MICRO];
	long mp = tp * pp * cp, dp, nodes;
	if (c->nodes > 0 || m->launcher_world) {
		long world = c->nodes > 0 ? c->nodes * c->gpus_per_node : m->launcher_world;
		if (c->nodes > 0)
			snprintf(note, note_n, "--nodes %ld x %ld GPUs per node", c->nodes, c->gpus_per_node);
		else
			snprintf(note, note_n, "%s", m->launcher_how);
		if (world % mp) {
			mg_err(m, -1, "the world size %ld (%s) is not a multiple of tp %ld x pp %ld x cp %ld (L180)", world,
			       note, tp, pp, cp);
			return -1;
		}
		if (world % c->gpus_per_node) {
			mg_err(m, -1, "the world size %ld (%s) does not fill nodes of %ld GPUs: give --nodes", world, note,
			       c->gpus_per_node);
			return -1;
		}
		dp = world / mp;
		nodes = world / c->gpus_per_node;
	} else if (m->given[F_GLOBAL]) {
		if (m->iv[F_GLOBAL] % micro) {
			mg_err(m, m->at[F_GLOBAL], "--global-batch-size: %ld is not a multiple of --micro-batch-size %ld "
			       "(num_microbatches_calculator.py L461)", m->iv[F_GLOBAL], micro);
			return -1;
		}
		dp = m->iv[F_GLOBAL] / micro;
		if ((mp * dp) % c->gpus_per_node) {
			mg_err(m, -1, "the world size tp %ld x pp %ld x cp %ld x dp %ld (global / micro batch) = %ld GPUs does "
			       "not fill nodes of %ld GPUs: give --nodes", tp, pp, cp, dp, mp * dp, c->gpus_per_node);
			return -1;
		}
		nodes = mp * dp / c->gpus_per_node;
	} else {
		mg_err(m, -1, "the world size is the launcher's, not an argument: give --nodes, or --global-batch-size "
		       "(dp = global / micro batch)");
		return -1;
	}
	if (c->nodes <= 0 && !m->launcher_world)
		snprintf(note, note_n, "tp %ld x pp %ld x cp %ld x dp %ld (global / micro batch: no gradient "
			 "accumulation assumed) / %ld GPUs per node", tp, pp, cp, dp, c->gpus_per_node);
	*dp_out = dp;
	*nodes_out = nodes;
	return 0;
}

/* The scenario's sequence length and batch sizes, checked as Megatron-LM
 * checks them. */
static void map_batch(struct mg *m, json_t *sc, long dp, long cp)
{
	long micro = m->iv[F_MICRO], seq = m->iv[F_SEQ];
	if (seq > m->iv[F_MAXPOS])
		mg_err(m, m->at[F_SEQ], "--seq-length: %ld is above --max-position-embeddings %ld (L437)", seq,
		       m->iv[F_MAXPOS]);
	if (cp > 1 && seq % (2 * cp))
		mg_err(m, m->at[F_SEQ], "--seq-length: %ld is not a multiple of 2 x --context-parallel-size %ld (L425)",
		       seq, cp);
	SCEN("/training/seq_len", json_integer(seq), F_SEQ, IMPORT_MAPPED, NULL);
	long global = m->given[F_GLOBAL] ? m->iv[F_GLOBAL] : micro * dp;
	if (global % (micro * dp))
		mg_err(m, m->at[F_GLOBAL], "--global-batch-size: %ld is not a multiple of --micro-batch-size %ld x dp %ld "
		       "(num_microbatches_calculator.py L461)", global, micro, dp);
	SCEN("/training/global_batch", json_integer(global), F_GLOBAL, ST(F_GLOBAL),
	     m->given[F_GLOBAL] ? NULL : "absent: micro batch x dp (L263)");
	SCEN("/training/micro_batch", json_integer(micro), F_MICRO, IMPORT_MAPPED, NULL);
}

/* The scenario's precision (--bf16, --fp16, --fp8-format), fp8 parameters
 * and the dtype gradients are reduced in. */
static void map_precision(struct mg *m, json_t *sc)
{
	if (m->given[F_FP16] && m->given[F_BF16])
		mg_err(m, m->at[F_FP16], "--fp16: not with --bf16 (transformer_config.py L319)");
	const char *prec = m->given[F_BF16] ? "bf16" : m->given[F_FP16] ? "fp16" : "fp32";
	enum flag_id pf = m->given[F_BF16] ? F_BF16 : F_FP16;
	if (m->given[F_FP8]) {
		if (strcmp(m->sv[F_FP8], "e4m3") && strcmp(m->sv[F_FP8], "hybrid"))
			mg_err(m, m->at[F_FP8], "--fp8-format: expected e4m3 or hybrid, got '%s'", m->sv[F_FP8]);
		SCEN("/training/precision", json_string("fp8"), F_FP8, IMPORT_MAPPED,
		     "Transformer Engine fp8 GEMMs (models/precision.h)");
		import_map_add(m->map, IMPORT_MAPPED, mg_flags[pf].name[0] == 'b' ? "--bf16" : "--fp16", given_text(m, pf),
			       "scenario: /training/precision", "\"fp8\"", "the parameters' dtype under fp8");
	} else {
		SCEN("/training/precision", json_string(prec), pf, m->given[pf] ? IMPORT_MAPPED : IMPORT_DEFAULT,
		     m->given[pf] ? NULL : "absent --bf16 and --fp16: fp32 (L1469-1471)");
	}
	if (m->given[F_FP8_PARAMS]) {
		if (!m->given[F_DISTOPT])
			mg_err(m, m->at[F_FP8_PARAMS], "--fp8-param-gather: needs --use-distributed-optimizer (L316)");
		SCEN("/training/fp8_params", json_true(), F_FP8_PARAMS, IMPORT_MAPPED, NULL);
	}
	/* gradients reduced in fp32 with bf16 (L330-336) or the flag; else the parameters' dtype */
	bool fp32g = m->given[F_ACCUM_FP32] || m->given[F_BF16] || !strcmp(prec, "fp32");
	SCEN("/training/grad_reduce_dtype", json_string(fp32g ? "fp32" : "fp16"), F_ACCUM_FP32, ST(F_ACCUM_FP32),
	     m->given[F_ACCUM_FP32] ? NULL : m->given[F_BF16] ? "bf16: fp32 (L330-336)" : "the parameters' dtype");
}

/* The scenario's training object: sequence, batch, precision, gradients. */
static void map_training(struct mg *m, json_t *sc, long dp, long cp)
{
	map_batch(m, sc, dp, cp);
	map_precision(m, sc);
}

/* The scenario's communication object, and the framework's stack. */
static void map_communication(struct mg *m, json_t *sc, bool sp)
{
	if (m->given[F_OPG] && !m->given[F_DISTOPT])
		mg_err(m, m->at[F_OPG], "--overlap-param-gather: needs --use-distributed-optimizer (L291)");
	if (m->given[F_OPG] && !m->given[F_OGR])
		mg_err(m, m->at[F_OPG], "--overlap-param-gather: needs --overlap-grad-reduce (L293)");
	SCEN("/communication/overlap_grad_reduce", json_boolean(m->given[F_OGR]), F_OGR, ST(F_OGR),
	     m->given[F_OGR] ? NULL : "absent: off (L1539)");
	SCEN("/communication/overlap_param_gather", json_boolean(m->given[F_OPG]), F_OPG, ST(F_OPG),
	     m->given[F_OPG] ? NULL : "absent: off (L1556)");
	if (m->given[F_TPCO]) {
		if (!sp)
			mg_err(m, m->at[F_TPCO], "--tp-comm-overlap: needs --sequence-parallel with tp > 1 "
			       "(ddlsim's tp_comm_overlap overlaps the SP all-gather and reduce-scatter)");
		SCEN("/communication/tp_comm_overlap", json_true(), F_TPCO, IMPORT_MAPPED, NULL);
	}
	const char *impl = m->given[F_IMPL] ? m->sv[F_IMPL] : "transformer_engine";
	if (strcmp(impl, "transformer_engine"))
		import_map_add(m->map, IMPORT_UNKNOWN, "--transformer-impl", impl, "", "",
			       "ddlsim prices Megatron-Core's Transformer Engine kernels (stack megatron-te): not applied");
	else
		import_map_add(m->map, m->given[F_IMPL] ? IMPORT_MAPPED : IMPORT_DEFAULT, "--transformer-impl",
			       given_text(m, F_IMPL), "scenario: /framework", "\"megatron-core@0.9\"",
			       m->given[F_IMPL] ? "its stack megatron-te" : "absent: transformer_engine (L721)");
	if (m->given[F_FLASH])
		import_map_add(m->map, IMPORT_MAPPED, "--use-flash-attn", "(set)", "scenario: /training/attention",
			       "", "flash: the framework's default where the GPU has it");
}

/* --num-distributed-optimizer-instances N: the distributed optimizer
 * sharded over dp x cp / N ranks (Megatron-Core's partial distributed
 * optimizer), ddlsim's shard group; needs the distributed optimizer. */
static void map_instances(struct mg *m, json_t *sc, long dpcp)
{
	if (!m->given[F_DOI])
		return;
	long n = m->iv[F_DOI];
	char note[160];
	if (n < 1 || dpcp % n)
		mg_err(m, m->at[F_DOI], "--num-distributed-optimizer-instances: must divide the data-parallel "
		       "ranks dp x cp = %ld, got %ld", dpcp, n);
	else if (n > 1 && !m->given[F_DISTOPT])
		mg_err(m, m->at[F_DOI], "--num-distributed-optimizer-instances: needs --use-distributed-optimizer "
		       "(Partial DistOpt cannot be used without DistOpt)");
	else if (n > 1) {
		snprintf(note, sizeof(note), "dp x cp / %ld: the optimizer sharded within each of %ld instances, "
			 "the shards all-reduced across them", n, n);
		SCEN("/parallel/shard_group", json_integer(dpcp / n), F_DOI, IMPORT_DERIVED, note);
	} else
		import_map_add(m->map, IMPORT_MAPPED, "--num-distributed-optimizer-instances", "1", "", "",
			       "one instance: the whole data-parallel group");
}

/* --expert-tensor-parallel-size: parallel.etp where given (absent: tp,
 * core_v0.10.0 arguments.py L259-260, the scenario's default too). */
static void map_etp(struct mg *m, json_t *sc, long tp)
{
	if (!m->given[F_ETP])
		return;
	if (m->iv[F_ETP] < 1)
		mg_err(m, m->at[F_ETP], "--%s: expected an integer >= 1, got '%s'", mg_flags[F_ETP].name,
		       m->sv[F_ETP]);
	else
		SCEN("/parallel/etp", json_integer(m->iv[F_ETP]), F_ETP, IMPORT_MAPPED, m->iv[F_ETP] == tp ?
		     "= tp, Megatron-Core's default (core_v0.10.0 arguments.py L259-260)" : NULL);
}

/* The parallel degrees given below 1 and the heads tp does not divide,
 * through mg_err(). Returns whether the degrees are usable. */
static bool degrees_check(struct mg *m, long tp, long pp, long cp, long ep)
{
	for (int f = F_TP; f <= F_EP; f++)
		if ((f == F_TP || f == F_PP || f == F_CP || f == F_EP) && m->given[f] && m->iv[f] < 1)
			mg_err(m, m->at[f], "--%s: expected an integer >= 1, got '%s'", mg_flags[f].name, m->sv[f]);
	if (tp < 1 || pp < 1 || cp < 1 || ep < 1 || m->iv[F_MICRO] < 1)
		return false;
	if (m->iv[F_HEADS] % tp)
		mg_err(m, m->at[F_HEADS], "--num-attention-heads: %ld is not a multiple of --tensor-model-parallel-size "
		       "%ld (transformer_config.py L324)", m->iv[F_HEADS], tp);
	return true;
}

/* The scenario's nodes and degrees (tp, pp, dp, cp, ep, etp) once the
 * world size is known. Returns 0, or -1 after world_of() said why. */
static int map_degrees(struct mg *m, json_t *sc, const struct import_cluster *c, long tp, long pp, long cp, long ep,
		       long *dp_out)
{
	long dp, nodes;
	char note[200];
	if (world_of(m, c, tp, pp, cp, &dp, &nodes, note, sizeof(note)))
		return -1;
	json_object_set_new(sc, "nodes", json_integer(nodes));
	char w[32];
	snprintf(w, sizeof(w), "%ld", nodes);
	import_map_add(m->map, IMPORT_DERIVED, "(world size)", "", "scenario: /nodes", w, note);
	SCEN("/parallel/tp", json_integer(tp), F_TP, ST(F_TP), m->given[F_TP] ? NULL : "absent: 1 (L1505)");
	SCEN("/parallel/pp", json_integer(pp), F_PP, ST(F_PP), m->given[F_PP] ? NULL : "absent: 1 (L1509)");
	json_object_set_new(json_object_get(sc, "parallel"), "dp", json_integer(dp));
	snprintf(note, sizeof(note), "%ld", dp);
	import_map_add(m->map, IMPORT_DERIVED, "(data parallel)", "", "scenario: /parallel/dp", note,
		       "world / (tp pp cp) (L191)");
	if (cp > 1 || m->given[F_CP])
		SCEN("/parallel/cp", json_integer(cp), F_CP, IMPORT_MAPPED, NULL);
	if (ep > 1 || m->given[F_EP])
		SCEN("/parallel/ep", json_integer(ep), F_EP, IMPORT_MAPPED, NULL);
	map_etp(m, sc, tp);
	*dp_out = dp;
	return 0;
}

/* --num-layers-per-virtual-pipeline-stage: the interleaved schedule and
 * its chunks per stage, checked as Megatron-LM checks them. */
static void map_vpp(struct mg *m, json_t *sc, long pp, long layers)
{
	if (!m->given[F_VPP_LAYERS])
		return;
	long v = m->iv[F_VPP_LAYERS];
	char note[200];
	if (pp < 2)
		mg_err(m, m->at[F_VPP_LAYERS], "--num-layers-per-virtual-pipeline-stage: needs "
		       "--pipeline-model-parallel-size > 1, got %ld (L271)", pp);
	else if (layers % pp)
		mg_err(m, m->at[F_VPP_LAYERS], "--num-layers-per-virtual-pipeline-stage: --num-layers %ld is not a "
		       "multiple of --pipeline-model-parallel-size %ld (L279)", layers, pp);
	else if (v < 1 || (layers / pp) % v)
		mg_err(m, m->at[F_VPP_LAYERS], "--num-layers-per-virtual-pipeline-stage: %ld does not divide the %ld "
		       "layers of a stage (L282)", v, layers / pp);
	else {
		SCEN("/parallel/schedule", json_string("interleaved"), F_VPP_LAYERS, IMPORT_MAPPED, NULL);
		snprintf(note, sizeof(note), "(layers / pp) / %ld (L284)", v);
		SCEN("/parallel/interleave", json_integer(layers / pp / v), F_VPP_LAYERS, IMPORT_DERIVED, note);
	}
}

/* The uneven first and last stages, and activation recomputation over a
 * stage's stage_layers layers. */
static void map_stages(struct mg *m, json_t *sc, long stage_layers)
{
	if (m->given[F_FIRST])
		SCEN("/parallel/first_stage_layers", json_integer(m->iv[F_FIRST]), F_FIRST, IMPORT_MAPPED, NULL);
	if (m->given[F_LAST])
		SCEN("/parallel/last_stage_layers", json_integer(m->iv[F_LAST]), F_LAST, IMPORT_MAPPED, NULL);
	const char *rnote;
	const char *rc = recompute(m, stage_layers, &rnote);
	enum flag_id rf = m->given[F_RC_GRAN] || !m->given[F_RC_ACT] ? F_RC_GRAN : F_RC_ACT;
	SCEN("/parallel/recompute", json_string(rc), rf, ST(rf), rnote);
	if (m->given[F_RC_METHOD])
		import_map_add(m->map, IMPORT_MAPPED, "--recompute-method", m->sv[F_RC_METHOD], "scenario: /parallel/recompute",
			       rc, "with --recompute-num-layers");
	if (m->given[F_RC_LAYERS])
		import_map_add(m->map, IMPORT_MAPPED, "--recompute-num-layers", m->sv[F_RC_LAYERS],
			       "scenario: /parallel/recompute", rc, "with --recompute-method");
	map_recompute_modules(m, sc, rc);
}

/* The scenario file's keys from the flags: its contradictions through
 * mg_err(). */
static void map_scenario(struct mg *m, json_t *sc, const struct import_cluster *c)
{
	long tp = m->given[F_TP] ? m->iv[F_TP] : 1, pp = m->given[F_PP] ? m->iv[F_PP] : 1;
	long cp = m->given[F_CP] ? m->iv[F_CP] : 1, ep = m->given[F_EP] ? m->iv[F_EP] : 1;
	long layers = m->iv[F_LAYERS], dp;
	if (!degrees_check(m, tp, pp, cp, ep) || map_degrees(m, sc, c, tp, pp, cp, ep, &dp))
		return;
	bool sp = m->given[F_SP] && tp > 1;
	SCEN("/parallel/sp", json_boolean(sp), F_SP, ST(F_SP), !m->given[F_SP] ? "absent: off (L1243)" :
	     tp == 1 ? "tp 1: Megatron turns sequence parallelism off (L499)" : NULL);
	SCEN("/parallel/zero", json_integer(m->given[F_DISTOPT]), F_DISTOPT, ST(F_DISTOPT),
	     m->given[F_DISTOPT] ? "the distributed optimizer shards the optimizer state: ZeRO-1" :
	     "absent: off (L1584)");
	map_instances(m, sc, dp * cp);
	map_vpp(m, sc, pp, layers);
	map_stages(m, sc, layers / pp);
	map_training(m, sc, dp, cp);
	map_communication(m, sc, sp);
}

int import_megatron(const char *text, const char *file, int argc, char **argv, const struct import_cluster *c,
		    const char *model_ref, struct import_map *map, json_t **model, json_t **scenario,
		    struct diag *d)
{
	struct mg m = { .file = text ? file : NULL, .d = d, .map = map };
	int errs = diag_count(d);
	*model = *scenario = NULL;
	mg_read(&m, text, argc, argv);
	static const enum flag_id required[] = { F_LAYERS, F_HIDDEN, F_HEADS, F_MAXPOS, F_SEQ, F_MICRO };
	for (size_t i = 0; i < sizeof(required) / sizeof(required[0]); i++)
		if (!m.given[required[i]])
			mg_err(&m, -1, "--%s: required, not given (arguments.py L405, L258)", mg_flags[required[i]].name);
	for (int f = 0; f < F_N; f++)
		if (m.given[f] && !m.bad[f] && mg_flags[f].kind == K_INT && m.iv[f] < 1 && f != F_VOCAB &&
		    f != F_FIRST && f != F_LAST)
			mg_err(&m, m.at[f], "--%s: expected an integer >= 1, got '%s'", mg_flags[f].name, m.sv[f]);
	if (diag_count(d) > errs)
		goto fail;
	json_t *mo = json_object(), *sc = json_object();
	json_object_set_new(mo, "schema", json_string("ddlsim.model"));
	json_object_set_new(mo, "schema_version", json_string("1.3"));
	char *name = xasprintf("Megatron-LM GPT %ld x %ld", m.iv[F_LAYERS], m.iv[F_HIDDEN]);
	json_object_set_new(mo, "name", json_string(name));
	free(name);
	char *src = xasprintf("Megatron-LM pretrain_gpt.py arguments (%s), imported by ddlsim import with Megatron-LM "
			      "core_v0.9.0's defaults", file ? file : "the command line");
	json_object_set_new(mo, "source", json_string(src));
	json_object_set_new(mo, "architecture", json_string("decoder_transformer"));
	json_object_set_new(sc, "schema", json_string("ddlsim.scenario"));
	json_object_set_new(sc, "schema_version", json_string("1.0"));
	json_object_set_new(sc, "description", json_string(src));
	free(src);
	json_object_set_new(sc, "model", json_string(model_ref));
	json_object_set_new(sc, "topology", json_string(c->topology));
	json_object_set_new(sc, "framework", json_string("megatron-core@0.9"));
	long tp = m.given[F_TP] ? m.iv[F_TP] : 1;
	map_model(&m, mo, tp < 1 ? 1 : tp);
	map_scenario(&m, sc, c);
	if (diag_count(d) > errs) {
		json_decref(mo);
		json_decref(sc);
		goto fail;
	}
	*model = mo;
	*scenario = sc;
	mg_free_words(&m);
	return 0;
fail:
	mg_free_words(&m);
	return -1;
}
