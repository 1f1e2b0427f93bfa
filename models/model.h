/* model: a decoder-only transformer, an encoder transformer (BERT) or a
 * CNN, as a model file describes it.
 *
 * The model file (schema "ddlsim.model" 1.4; 1.0 to 1.3 files are read
 * as before: "moe" is new in 1.1, "mla" and moe.first_dense_layers,
 * moe.groups, moe.groups_per_token in 1.2, head_dim and qk_norm in 1.3,
 * mtp_depth in 1.4)
 * describes the architecture a
 * training job trains; it holds no parallelism and no hardware. A new
 * optional key is a minor bump; a key whose meaning changes, a major.
 *
 * With architecture "decoder_transformer":
 *
 *   key                    type     unit   default     meaning
 *   name                   string   -      required    display name
 *   source                 string   -      required    where the numbers come from
 *   architecture           string   -      required    "decoder_transformer"
 *   layers                 int      -      required    transformer blocks L
 *   hidden_size            int      -      required    h
 *   heads                  int      -      required    attention heads a
 *   kv_heads               int      -      heads       KV heads (GQA); = heads for MHA
 *   head_dim               int      -      h / heads   d of a head (HF head_dim): Q is heads x d
 *                                                      wide, K and V kv_heads x d, the output
 *                                                      projection heads x d -> h (Qwen3 32B:
 *                                                      64 x 128 = 8192 against h 5120)
 *   qk_norm                bool     -      false       a norm (the model's kind) over each head's
 *                                                      d of q and of k before RoPE, weights of d
 *                                                      each (Qwen3, Gemma 3)
 *   sliding_window         int      tokens 0           sliding-window attention: a query sees at
 *                                                      most this many keys, itself and those
 *                                                      before it (HF sliding_window; Mistral 7B
 *                                                      v0.1 4096, Gemma 2 4096, Gemma 3 1024,
 *                                                      GPT-OSS 128); 0 = full attention
 *   global_every           int      -      0           with sliding_window: every n-th layer
 *                                                      (the n-th, 2n-th, ...) attends to all keys,
 *                                                      the others through the window (HF
 *                                                      layer_types; Gemma 2 and GPT-OSS 2, Gemma 3
 *                                                      6); 0 = every layer slides
 *   attention_sinks        bool     -      false       a learned logit per head in every softmax
 *                                                      denominator (GPT-OSS: heads weights a
 *                                                      layer; no time: the kernel adds it to its
 *                                                      row sums)
 *   ffn_size               int      -      4h          MLP inner size
 *   activation             string   -      "gelu"      "gelu" (2 GEMMs) or "swiglu" (3 GEMMs)
 *   norm                   string   -      "layernorm" "layernorm" or "rmsnorm"
 *   bias                   bool     -      false       linear layers have biases
 *   dropout                bool     -      false       dropout on attention probabilities and
 *                                                      residual branches (GPT-2/3, Megatron GPT)
 *   vocab_size             int      -      required    V
 *   tied_embeddings        bool     -      false       LM head shares the embedding matrix
 *   position_embedding     string   -      "rope"      "rope", "learned" or "alibi" (a bias inside
 *                                                      the attention kernel: no parameters, no op)
 *   max_position           int      tokens 2048        rows of a learned position table
 *   published_params       number   params 0           published parameter count, for checks
 *   published_active_params number  params 0           published activated parameters (MoE)
 *   mtp_depth              int      -      0           D multi-token-prediction modules trained
 *                                                      with the model (DeepSeek-V3 arXiv
 *                                                      2412.19437 section 2.2; HF
 *                                                      num_nextn_predict_layers; Megatron-Core
 *                                                      --mtp-num-layers): each an RMSNorm of
 *                                                      the hidden state and one of the next
 *                                                      token's embedding, a projection 2h -> h,
 *                                                      a transformer block of the last layer's
 *                                                      kind, a final norm, and the shared output
 *                                                      head and loss; on the head's pipeline
 *                                                      stage (below); not in published_params;
 *                                                      decoders without sliding_window
 *   moe.experts            int      -      required    E routed experts per MoE layer (every
 *                                                      layer is an MoE layer when "moe" is given)
 *   moe.top_k              int      -      required    k experts per token (<= E)
 *   moe.expert_ffn_size    int      -      required    inner size of one expert's MLP
 *                                                      (activation as for the dense MLP)
 *   moe.shared_experts     int      -      0           experts every token passes (DeepSeekMoE)
 *   moe.shared_expert_ffn_size int  -      expert_ffn_size  inner size of one shared expert
 *   moe.capacity_factor    number   -      0           expert capacity in balanced loads; tokens
 *                                                      beyond it are dropped; 0 = dropless
 *   moe.routing            string   -      "uniform"   uniform | zipf | loads (models/moe.h)
 *   moe.zipf_s             number   -      1.0         Zipf exponent (routing "zipf")
 *   moe.expert_loads       [number] -      -           per-expert shares, one per expert (routing
 *                                                      "loads"; normalised, >= 0, not all 0)
 *   moe.first_dense_layers int  -      0           the first n layers are dense MLPs of ffn_size
 *                                                      (HF first_k_dense_replace; DeepSeek-V3: 3)
 *   moe.groups             int      -      0           G groups of E / G consecutive experts (HF
 *                                                      n_group); 0 = no group-limited routing
 *   moe.groups_per_token   int      -      groups      M groups a token's k experts may come from
 *                                                      (HF topk_group; DeepSeek-V3 node-limited
 *                                                      routing: M = 4 of 8; moe.h); top_k
 *                                                      at most M x E / G (DeepSeek-V2 2.1.2)
 *   (an MoE model's ffn_size, when left out, is its expert_ffn_size)
 *   mla.q_lora_rank        int      -      0           d_c' query latent (0: q projected from h)
 *   mla.kv_lora_rank       int      -      required    d_c key-value latent (q_lora_rank and
 *                                                      it at most hidden_size: models/bounds.h)
 *   mla.qk_nope_head_dim   int      -      required    d_h per-head q/k part without RoPE
 *   mla.qk_rope_head_dim   int      -      required    d_h^R decoupled RoPE part (q per head, k shared)
 *   mla.v_head_dim         int      -      required    per-head value dimension
 *   ("mla": multi-head latent attention, DeepSeek-V2 arXiv 2405.04434
 *   section 2.1, eqs. 9-19; kv_heads must be left out)
 *
 * Multi-token prediction (mtp_depth D > 0): the k-th module takes the
 * main model's (or module k - 1's) output h_i and the embedding of token
 * i + k, normalises each (enorm, hnorm), projects their concatenation
 * 2h -> h (eh_proj, no bias), runs one transformer block and a final
 * norm, and predicts token i + k + 1 through the main model's output
 * head and cross entropy; the embedding and the head are the main
 * model's, shared (Megatron-Core 13f8f526 megatron/core/transformer/
 * multi_token_prediction.py MultiTokenPredictionLayer: enorm, hnorm,
 * eh_proj 2h -> h, transformer_layer, final_layernorm). Megatron-Core
 * builds every module on the last pipeline stage
 * (get_mtp_num_layers_to_build: mpu.is_pipeline_last_stage()); DeepSeek-V3
 * places it with the output head (section 3.2.3, "Shared Embedding and
 * Output Head for Multi-Token Prediction"): ddlsim runs the D blocks after
 * the last stage's layers (layer indices layers .. layers + D - 1, priced
 * as the last layer), the projections, norms and the D extra head GEMMs and
 * losses with the head. Its own parameters per module: the block's,
 * 2 h^2 for eh_proj and 3 h for the (RMS) norms (DeepSeek-V3: 11,507,286,016 +
 * 102,781,952 = 11.61 B, the report's 14 B less its copies of the
 * embedding and head, 2 x 926,679,040).
 *
 * An encoder transformer (BERT, RoBERTa: Devlin et al. 2019; Liu et al.
 * 2019) is the decoder's layer with bidirectional attention (the
 * attention core is not causal); its norms are post-LN as BERT's (after
 * each residual, plus one over the embeddings, no final norm: the same
 * count of norms and parameters as the pre-LN decoder, and the placement
 * changes no FLOPs); its embedding sums word, learned position and
 * token-type rows. The published counts of the Hugging Face base models
 * (BertModel, RobertaModel) are embeddings + layers + the pooler:
 * model_encoder_base_params().
 *
 * With architecture "encoder_transformer" (the keys above but "moe", with these defaults and four more):
 *   key                    type     unit   default     meaning
 *   position_embedding     string   -      "learned"   only "learned" (BERT's table)
 *   max_position           int      tokens 512         max_position_embeddings (RoBERTa: 514)
 *   bias                   bool     -      true        BERT's linear layers have biases
 *   tied_embeddings        bool     -      true        the MLM decoder shares the word embeddings
 *   type_vocab_size        int      -      2           token-type (segment) rows (RoBERTa: 1)
 *   mlm_head               bool     -      true        the MLM head: dense h x h + GELU +
 *                                                      LayerNorm + decoder over the vocabulary
 *                                                      (its own bias of V)
 *   mlm_positions          int      tokens 0           tokens per sequence the MLM head runs on
 *                                                      (at most the scenario's seq_len)
 *                                                      (MLPerf's max_predictions_per_seq, the
 *                                                      masked positions gathered); 0 = all
 *   nsp_head               bool     -      false       next-sentence prediction: the pooler
 *                                                      (dense h x h + tanh on the first token)
 *                                                      and a 2-way classifier
 *
 * A Vision Transformer (Dosovitskiy et al. 2021, arXiv:2010.11929 eqs.
 * 1-4; Hugging Face ViTForImageClassification) cuts the image into
 * (image_size / patch_size)^2 patches, flattens each (im2col, a
 * memory-bound copy) and projects it by a linear of patch_size^2 x
 * channels -> hidden_size with its bias (a GEMM over the patches),
 * prepends a class token and adds learned position embeddings: a sample
 * is seq = (image_size / patch_size)^2 + 1 tokens, and the scenario's
 * training.seq_len is derived from the model (left out, or equal to seq,
 * else an error at /training/seq_len). Then pre-LN layers (bidirectional
 * attention, GELU MLP, biases), a final LayerNorm and the classifier
 * (hidden -> num_classes with its bias) on the class token, cross-entropy
 * loss. Parameters: patch embedding p^2 C h + h, class token h, positions
 * seq h, the layers (4h^2 + 2hf + 9h + f each), final LayerNorm 2h,
 * classifier h K + K (ViT-B/16 at 224 px, K = 1000: 86,567,656).
 *
 * With architecture "vit" (the decoder's keys but vocab_size, tied_embeddings, max_position, "moe", "mla"; these defaults and four more):
 *   key                    type     unit   default     meaning
 *   position_embedding     string   -      "learned"   only "learned"
 *   bias                   bool     -      true        ViT's linear layers have biases
 *   kv_heads               int      -      heads       only heads (multi-head attention)
 *   image_size             int      pixels required    side of the square input image
 *   patch_size             int      pixels required    side of a square patch; divides image_size
 *   channels               int      -      3           input channels (RGB)
 *   num_classes            int      -      1000        classifier outputs (ImageNet-1k)
 *
 * With architecture "cnn" (the layers are generated, see cnn.h):
 *   key                    type     unit   default     meaning
 *   name, source           string   -      required
 *   architecture           string   -      required    "cnn"
 *   cnn.family             string   -      required    "resnet" (torchvision ResNet v1.5)
 *   cnn.depth              int      -      required    18, 34, 50, 101 or 152
 *   cnn.image              int      pixels 224         input height = width
 *   cnn.classes            int      -      1000        classifier outputs
 *   published_params       number   params 0           published parameter count, for checks
 * Transformer keys are unknown keys in a CNN file and the other way round.
 */
#ifndef DDLSIM_MODEL_H
#define DDLSIM_MODEL_H

/* Transformer blocks a model file may have (the largest published models
 * have a few hundred). */
#define MODEL_MAX_LAYERS 100000

#include <stdbool.h>

#include "diag.h"
#include "moe.h"

enum model_act { MODEL_ACT_GELU, MODEL_ACT_SWIGLU };
enum model_norm { MODEL_NORM_LAYERNORM, MODEL_NORM_RMSNORM };
enum model_pos { MODEL_POS_ROPE, MODEL_POS_LEARNED, MODEL_POS_ALIBI };
enum model_arch { MODEL_ARCH_DECODER, MODEL_ARCH_CNN, MODEL_ARCH_ENCODER, MODEL_ARCH_VIT,
		  MODEL_ARCH_N };
enum model_cnn_family { MODEL_CNN_RESNET };

/* The generator of a CNN (architecture "cnn"). */
struct model_cnn {
	enum model_cnn_family family;
	long depth;
	long image;                 /* pixels, height = width */
	long classes;
};

/* Multi-head latent attention (DeepSeek-V2 section 2.1; kv_lora = 0:
 * standard attention). Per layer, with a heads of query/key dim
 * nope + rope and value dim v:
 *   q:  h -> q_lora (W^DQ, eq. 12), RMSNorm, q_lora -> a (nope + rope)
 *       (W^UQ and W^QR fused, eqs. 13, 15); q_lora = 0: h -> a (nope + rope)
 *   kv: h -> kv_lora + rope (W^DKV and the shared RoPE key W^KR, eqs. 9,
 *       17), RMSNorm on the latent, kv_lora -> a (nope + v) (W^UK, W^UV,
 *       eqs. 10, 11)
 *   core: q.k over nope + rope (eqs. 16-18), values of v (eq. 18)
 *   out:  a v -> h (W^O, eq. 19)
 * (the RMSNorms of the latents are DeepSeek-V2's implementation detail,
 * config.json q_a_layernorm / kv_a_layernorm.) */
struct model_mla {
	long q_lora;                /* d_c' (0: no query compression) */
	long kv_lora;               /* d_c; 0 = not MLA */
	long nope;                  /* qk_nope_head_dim */
	long rope;                  /* qk_rope_head_dim d_h^R */
	long v;                     /* v_head_dim */
};

struct model {
	enum model_arch arch;
	struct model_cnn cnn;       /* arch == MODEL_ARCH_CNN; transformer fields are 0 */
	char name[96];
	char source[4096];
	char path[1024];            /* file it was loaded from */
	long layers;
	long hidden;
	long heads;
	long kv_heads;
	long head_dim;              /* 0: hidden / heads */
	bool qk_norm;               /* RMSNorm on each head's q and k */
	long sliding_window;        /* keys a query sees at most; 0 = all */
	long global_every;          /* with a window: every n-th layer full; 0 = none */
	bool attention_sinks;       /* a learned logit per head */
	long ffn;
	long vocab;
	bool tied_embeddings;
	bool bias;
	bool dropout;
	enum model_act act;
	enum model_norm norm;
	enum model_pos pos;
	long max_position;
	double published_params;
	double published_active_params;
	struct moe_config moe;      /* moe.experts = 0: a dense model */
	/* architecture "encoder_transformer" */
	long type_vocab;
	bool mlm_head, nsp_head;
	long mlm_positions;         /* 0: every token */
	/* architecture "vit" (vocab = 0: no word table) */
	long image_size, patch_size, channels, num_classes;
	struct model_mla mla;       /* mla.kv_lora = 0: standard attention */
	long mtp_depth;             /* multi-token-prediction modules D; 0: none */
};

/* Load and validate a model file. Returns a new model (model_destroy()) or
 * NULL after reporting every problem into d. */
struct model *model_load(const char *path, struct diag *d);
void model_destroy(struct model *m);

/* Head dimension: head_dim where given, else h / a. */
long model_head_dim(const struct model *m);
/* Standard attention's widths (MLA's too): the queries a d_qk, the keys
 * (and the values) kv_heads d, the attention's output a d_v that the
 * output projection takes back to h. All three are h, h kv/a and h when
 * head_dim is left out. */
double model_q_width(const struct model *m);
double model_kv_width(const struct model *m);
double model_attn_out_width(const struct model *m);
/* A dense layer's weight tensors in forward order, as the nn.Linear
 * modules of the reference implementations hold them: HF Llama's q, k,
 * v, o, gate, up, down (SwiGLU); GPT-style fused qkv, out, up, down.
 * Writes their elements to p[] (room for MODEL_LINEARS_MAX) and returns
 * how many. */
#define MODEL_LINEARS_MAX 7
int model_linear_weights(const struct model *m, double *p);

/* True where layer (0-based) attends through the sliding window
 * (sliding_window > 0 and the layer is not one of every global_every-th). */
bool model_layer_slides(const struct model *m, long layer);
/* Layers of n from index first (0-based) that slide. */
long model_sliding_layers_in(const struct model *m, long first, long n);

/* True if the model's attention is multi-head latent attention. */
bool model_is_mla(const struct model *m);
/* MLA: per-head query/key and value dimensions (nope + rope, v); other
 * models: the head dimension h / a for both. */
long model_qk_head_dim(const struct model *m);
long model_v_head_dim(const struct model *m);
/* Parameters of one layer's attention projections (biases included, norms
 * of the latents included for MLA, the layer norms not): MLA's
 * h q_lora + q_lora + q_lora a (nope + rope) + h (kv_lora + rope) + kv_lora
 * + kv_lora a (nope + v) + a v h (187,107,328 for DeepSeek-V3). */
double model_attn_params(const struct model *m);
/* Layers whose MLP is an MoE layer (layers - first_dense_layers; 0 when
 * dense). */
long model_moe_layers(const struct model *m);
/* Of the n layers from index `first` on (0-based), those whose MLP is an
 * MoE layer (the others are the first_dense_layers; 0 when dense). */
long model_moe_layers_in(const struct model *m, long first, long n);

/* Parameters of one transformer block (all of it, before any sharding;
 * an MoE model: one MoE layer). */
double model_layer_params(const struct model *m);
/* Parameters of a dense layer: attention, norms, the MLP of ffn_size (an
 * MoE model's first_dense_layers; = model_layer_params() when dense). */
double model_dense_layer_params(const struct model *m);
/* True if the model's layers are mixture-of-experts layers. */
bool model_is_moe(const struct model *m);
/* Parameters of one layer's routed experts (E expert MLPs; 0 when
 * dense): these are sharded over expert parallelism, the rest of the
 * layer (model_layer_params() minus these) over tensor parallelism only. */
double model_layer_expert_params(const struct model *m);
/* Parameters one token passes through in a layer: attention, norms,
 * router, k routed and every shared expert (= model_layer_params() when
 * dense). */
double model_layer_active_params(const struct model *m);
/* Whole-model activated parameters per token (Mixtral 8x7B: 12.9 B of
 * 46.7 B; = model_params() when dense). */
double model_active_params(const struct model *m);
/* The MTP modules' own parameters outside their transformer blocks:
 * D (2 h^2 + 3 n), eh_proj and the three norms of n = h (RMSNorm) or 2h
 * (LayerNorm) each (0 without MTP). */
double model_mtp_extra_params(const struct model *m);
/* The MTP modules' own parameters: D blocks of the last layer's kind and
 * model_mtp_extra_params() (the embedding and head are shared). */
double model_mtp_params(const struct model *m);
/* Training FLOPs the MTP modules add to model_iteration_flops() for
 * batch samples of seq tokens: 3 x forward, per token and module the
 * block's GEMMs (as the last layer's), its full-attention QK^T and AV,
 * eh_proj 2 x 2h x h and the head 2 h V (0 without MTP). */
double model_mtp_iteration_flops(const struct model *m, double batch, double seq);
/* Parameters outside the blocks: embeddings, final norm, LM head. */
double model_embedding_params(const struct model *m);
double model_head_params(const struct model *m);   /* 0 if tied */
/* True for architecture "encoder_transformer". */
bool model_is_encoder(const struct model *m);
/* True for architecture "vit". */
bool model_is_vit(const struct model *m);
/* True where attention is bidirectional (an encoder, a ViT). */
bool model_is_bidirectional(const struct model *m);
/* A ViT's tokens per image: (image_size / patch_size)^2 + 1 (the class
 * token); 0 for other architectures. */
long model_vit_seq(const struct model *m);
/* Output logits of one seq-token sample: the LM / MLM head's tokens x
 * vocabulary, a ViT's num_classes (its class token only). */
double model_logits_per_sample(const struct model *m, double seq);
/* An encoder: embeddings + layers + pooler, the Hugging Face base model's
 * count (bert-base-uncased 109,482,240) whatever the heads. */
double model_encoder_base_params(const struct model *m);
/* Tokens of a seq-token sample the LM / MLM head runs on (mlm_positions
 * where given, else seq). */
double model_head_tokens(const struct model *m, double seq);
/* Whole-model parameter count (every architecture): an encoder's is what
 * it trains, the embeddings, the layers, the MLM head (dense, LayerNorm,
 * decoder bias; the decoder weight tied) and with NSP the pooler and the
 * classifier. */
double model_params(const struct model *m);

/* Training FLOPs of one iteration (forward + backward, no recomputation;
 * the MTP modules' included: model_mtp_iteration_flops()),
 * counting every GEMM as 2mnk and full (unmasked) attention (an MoE
 * layer: its activated parameters only, 6 N_active per token, plus the
 * router; an encoder: its heads on model_head_tokens() per sample, the
 * pooler and classifier on one), for
 * batch samples of seq tokens. For a CNN: 3 x forward conv + fc FLOPs of
 * batch images (seq is ignored). */
double model_iteration_flops(const struct model *m, double batch, double seq);

const char *model_act_name(enum model_act a);

struct jobj;

/* What differs between architectures, in one table (wlroots' impl shape):
 * the loader, the reports and the plan checks read it instead of
 * switching on the architecture. */
struct model_arch_ops {
	const char *name;           /* the file's "architecture" value */
	const char *optimizer;      /* what the training step prices: "adam", "sgd" */
	bool sequence;              /* a sample is seq_len tokens; else one item (seq = 1) */
	bool model_parallel;        /* tp, pp, sp, ZeRO, recompute and attention apply */
	void (*load)(struct jobj *jo, struct model *m);   /* the architecture's keys */
	double (*params)(const struct model *m);
	double (*iteration_flops)(const struct model *m, double batch, double seq);
};

/* Indexed by enum model_arch, ended by a NULL name. */
extern const struct model_arch_ops model_archs[MODEL_ARCH_N + 1];
/* m's entry. */
const struct model_arch_ops *model_arch(const struct model *m);

#endif
