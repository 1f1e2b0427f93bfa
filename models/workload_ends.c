/* workload_ends: the embeddings and heads of encoder (BERT) and ViT
 * models (model.h), emitted into a block's op list by workload_block()
 * (workload.c), which emits a decoder's. */
#include "workload-private.h"

/* An encoder's embedding (model.h): the word, position and token-type
 * rows gathered and summed (three reads, one write), BERT's LayerNorm;
 * the position and type tables' gradients (replicated over TP) added by
 * a kernel of their own, the word table's as the decoder's. */
void workload_encoder_embed(struct emitter *e, const struct model *m, const struct wl_shape *s,
			    double T, double Tn)
{
	double h = (double)m->hidden;
	workload_membound(e, "embedding", "gather", T * h, 4, 0);
	workload_norm_op(e, m, "embedding_norm", Tn * h);
	if (!m->tied_embeddings)
		workload_main_grad_op_ex(e, s, "embedding", h * (double)m->vocab / s->tp, true);
	workload_main_grad_op_ex(e, s, "position_type",
				 (double)(m->max_position + m->type_vocab + 2) * h, true);
}

/* An encoder's heads (model.h): the MLM head on the masked positions
 * (gathered first when mlm_positions is given): dense, GELU, LayerNorm,
 * the decoder over the vocabulary (vocabulary-parallel as the LM head)
 * and the cross entropy; NSP: the pooler on the first token, tanh, the
 * 2-way classifier and its loss. */
void workload_encoder_head(struct emitter *e, const struct model *m, const struct wl_shape *s)
{
	double h = (double)m->hidden, Vt = (double)m->vocab / s->tp, b = s->micro_batch;
	double Th = b * model_head_tokens(m, s->seq) / (s->cp > 1 ? s->cp : 1);
	if (m->mlm_head) {
		if (m->mlm_positions > 0)
			workload_membound(e, "mlm_gather", "gather", Th * h, 2, 0);
		workload_gemm(e, "mlm_dense", 1, Th, h, h);
		workload_piece(e, "mlm_gelu", "bias_gelu", &e->stk->gelu, Th * h, 0);
		workload_norm_op(e, m, "mlm_norm", Th * h);
		workload_gemm(e, "mlm_decoder", 1, Th, Vt, h);
		workload_piece(e, "cross_entropy", "cross_entropy", &e->stk->loss, Th * Vt, Vt);
		workload_main_grad_op(e, s, "mlm", h * h + h * Vt);
	}
	if (m->nsp_head) {
		workload_gemm(e, "pooler", 1, b, h, h);
		workload_membound(e, "pooler_tanh", "tanh", b * h, 2, 0);
		workload_gemm(e, "nsp_classifier", 1, b, 2, h);
		workload_piece(e, "nsp_loss", "cross_entropy", &e->stk->loss, b * 2, 2);
		workload_main_grad_op(e, s, "nsp", h * h + 2 * h);
	}
}

/* A ViT's embedding (model.h): im2col, the image flattened into patches
 * (read and write each pixel once), the patch linear as a GEMM over the
 * patches (its weight's gradient fused as a GEMM's), the class token
 * prepended and the positions added (two reads, one write), whose
 * gradients a kernel of its own adds. Replicated over TP. */
void workload_vit_embed(struct emitter *e, const struct model *m, const struct wl_shape *s, double T)
{
	double h = (double)m->hidden, p = (double)m->patch_size, b = s->micro_batch;
	double kp = p * p * (double)m->channels, P = b * (double)(model_vit_seq(m) - 1);
	workload_membound(e, "im2col", "copy", P * kp, 2, 0);
	workload_gemm(e, "patch_embed", 1, P, h, kp);
	workload_membound(e, "cls_pos", "add", T * h, 3, 0);
	workload_main_grad_op(e, s, "patch_embed", kp * h + h);
	workload_main_grad_op_ex(e, s, "cls_pos", (double)(1 + model_vit_seq(m)) * h, true);
}

/* A ViT's head (model.h): the final LayerNorm over every token (as Hugging
 * Face's ViTModel), the class token's row gathered, the classifier and
 * the cross entropy over num_classes. Replicated over TP. */
void workload_vit_head(struct emitter *e, const struct model *m, const struct wl_shape *s, double Tn)
{
	double h = (double)m->hidden, K = (double)m->num_classes, b = s->micro_batch;
	workload_norm_op(e, m, "final_norm", Tn * h);
	workload_membound(e, "cls_gather", "gather", b * h, 2, 0);
	workload_gemm(e, "classifier", 1, b, K, h);
	workload_piece(e, "cross_entropy", "cross_entropy", &e->stk->loss, b * K, K);
	workload_main_grad_op(e, s, "classifier", h * K + K);
}
