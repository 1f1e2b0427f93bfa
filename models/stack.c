/* stack: the table of training stacks (stack.h) and its look-ups.
 *
 * Each family of stacks has a header of its own, included here alone,
 * that cites the source of every count beside the rows it gives:
 *   stack_megatron.h     megatron-te (the default), megatron-lm-2021,
 *                        megatron-lm-2021-torch-ddp
 *   stack_eager.h        hf-eager, torchtitan, torchtitan-04133643,
 *                        torchtitan-04133643-fused-norm
 *   stack_llm_foundry.h  llm-foundry, llm-foundry-triton
 *   stack_deepspeed.h    deepspeed, megatron-deepspeed, deepspeed-zero3-2021
 *   stack_dle.h          dle-bert
 *   stack_mxnet.h        mxnet-normconv, mxnet-nhwc-bn
 *   stack_compile.h      torchtitan-compile (Inductor's fusions)
 * stack-private.h states how the bytes are counted and holds the pieces
 * several families share. A row is a macro, not an array of its family:
 * stack_table is one array (scenarios look names up in it, a plan keeps
 * an index into it, `ddlsim list` walks it) and C cannot join arrays
 * defined in several files. The first row is the default. */
#include "stack.h"
#include "stack_megatron.h"
#include "stack_eager.h"
#include "stack_llm_foundry.h"
#include "stack_deepspeed.h"
#include "stack_dle.h"
#include "stack_mxnet.h"
#include "stack_compile.h"

#include <string.h>

const struct stack stack_table[] = {
	STACK_MEGATRON_TE,
	STACK_HF_EAGER,
	STACK_TORCHTITAN,
	STACK_TORCHTITAN_04133643,
	STACK_TORCHTITAN_04133643_FUSED_NORM,
	STACK_TORCHTITAN_COMPILE,
	STACK_LLM_FOUNDRY,
	STACK_LLM_FOUNDRY_TRITON,
	STACK_DEEPSPEED,
	STACK_DLE_BERT,
	STACK_MXNET_NORMCONV,
	STACK_MXNET_NHWC_BN,
	STACK_MXNET_STATS,
	STACK_MEGATRON_DEEPSPEED,
	STACK_MEGATRON_LM_2021,
	STACK_MEGATRON_LM_2021_TORCH_DDP,
	STACK_DEEPSPEED_ZERO3_2021,
	{ NULL, NULL, .attn_ampere = ATTN_BE_BEST, .attn_hopper = ATTN_BE_BEST, .source = NULL },
};

const struct stack *stack_find(const char *name)
{
	for (const struct stack *s = stack_table; s->name; s++)
		if (!strcmp(s->name, name))
			return s;
	return NULL;
}

int stack_index(const struct stack *s)
{
	return s ? (int)(s - stack_table) : -1;
}

const struct stack *stack_default(void)
{
	return &stack_table[0];
}

enum attn_backend stack_attn_backend(const struct stack *s, double cc)
{
	return cc >= 9 ? s->attn_hopper : s->attn_ampere;
}

const struct stack *stack_at(int index)
{
	return index >= 0 ? &stack_table[index] : stack_default();
}

/* Hugging Face's modeling code, which the eager Llama stacks follow
 * [source] (transformers 26a9443d, src/transformers/models/):
 * llama/modeling_llama.py L356-358 q_proj, k_proj, v_proj (Mistral's and
 * Qwen2's alike); gpt2/modeling_gpt2.py L158 one c_attn;
 * gpt_neox/modeling_gpt_neox.py L102, bloom/modeling_bloom.py L257 and
 * falcon/modeling_falcon.py L279 one query_key_value: the ungated (GELU)
 * families fuse the three. OPT (opt/modeling_opt.py L114-116: separate,
 * ReLU) is an exception the gated-MLP rule gets wrong. */
bool stack_qkv_separate(const struct stack *k, const struct model *m)
{
	return k->qkv_separate && (!k->qkv_separate_gated || m->act == MODEL_ACT_SWIGLU);
}
