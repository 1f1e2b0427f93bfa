/* test-stack: the kernels each training stack runs (models/stack.c), as
 * workload.c and cnn.c emit them, against the byte counts worked by hand
 * from each stack's source (the counts stack.c cites), and how the
 * roofline prices their kernels; the scenario checks of compute.stack and
 * compute.attention_backend with their exact messages. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "build_transformer.h"
#include "cnn.h"
#include "cost.h"
#include "inputs.h"
#include "model.h"
#include "plan.h"
#include "program.h"
#include "stack.h"
#include "topology.h"
#include "testutil.h"
#include "workload.h"

static struct model *load(const char *rel)
{
	struct diag d;
	diag_init(&d, stderr);
	struct model *m = model_load(src_path(rel), &d);
	cr_assert_not_null(m, "%s", diag_text(&d));
	diag_finish(&d);
	return m;
}

/* One micro-batch of s tokens, TP t, the stack named, fp32 main gradients. */
static struct wl_shape shape(const char *stack, double s, int t)
{
	struct wl_shape w = { 1, s, t, false, DTYPE_BF16, ATTN_FLASH, 1, false, 1, false, 0, 0, 0,
			      stack_find(stack), { ATTN_BE_FA2, ATTN_BE_CUDNN }, true, { 0 }, false, { 0 } };
	cr_assert(w.stack, "no stack '%s'", stack);
	return w;
}

/* The op named name in block blk, pass ps; fails if absent. */
static struct op find_op(const struct model *m, const struct wl_shape *w, enum wl_block blk,
			 enum op_pass ps, const char *name)
{
	struct op_list l;
	op_list_init(&l);
	cr_assert_eq(workload_block(m, w, blk, ps, RECOMPUTE_NONE, &l), 0);
	for (int i = 0; i < l.n; i++)
		if (!strcmp(l.v[i].name, name)) {
			struct op o = l.v[i];
			op_list_finish(&l);
			return o;
		}
	op_list_finish(&l);
	cr_assert_fail("no op '%s'", name);
	return (struct op){ 0 };
}

static bool has_op(const struct model *m, const struct wl_shape *w, enum wl_block blk,
		   enum op_pass ps, const char *prefix)
{
	struct op_list l;
	bool found = false;
	op_list_init(&l);
	cr_assert_eq(workload_block(m, w, blk, ps, RECOMPUTE_NONE, &l), 0);
	for (int i = 0; i < l.n; i++)
		found |= !strncmp(l.v[i].name, prefix, strlen(prefix));
	op_list_finish(&l);
	return found;
}

#define EXPECT_BYTES(o, want) \
	cr_expect_float_eq((o).bytes, (want), 1e-9 * (want), "%s: %.17g vs %.17g", (o).name, \
			   (o).bytes, (double)(want))

/* Llama 2 7B (h 4096, 32 heads, no GQA), 4,096 tokens. HF's eager
 * RMSNorm: .to(fp32) r2 w4, pow r4 w4, mean r4, mul r4 w4, .to(bf16) r4
 * w2, weight mul r2 w2 = 36 B per element in 8 kernels (with the two
 * per-row ones); Transformer Engine's: read x, write y = 4 B in one. */
Test(stack, norms_as_each_stack_runs_them)
{
	struct model *m = load("models/zoo/llama2-7b.json");
	double T = 4096, h = 4096;
	struct wl_shape hf = shape("hf-eager", T, 1), te = shape("megatron-te", T, 1);
	struct op a = find_op(m, &hf, WL_ATTN, PASS_FWD, "rmsnorm");
	EXPECT_BYTES(a, 36 * T * h);
	cr_expect_eq(a.kernels, 8);
	a = find_op(m, &hf, WL_ATTN, PASS_BWD, "rmsnorm.bwd");
	EXPECT_BYTES(a, 90 * T * h);
	struct op b = find_op(m, &te, WL_ATTN, PASS_FWD, "rmsnorm");
	EXPECT_BYTES(b, 4 * T * h);
	cr_expect_eq(b.kernels, 1);
	cr_expect_gt(b.row, 0, "a norm is a row-wise kernel");
	model_destroy(m);
}

/* RoPE on q and k (h + kv = 8192 per token for Llama 2 7B): fused 4 B per
 * element (two kernels, q and k), HF's rotate_half 20 B forward; none for
 * an ALiBi model (MPT). */
Test(stack, rope_on_q_and_k_and_none_for_alibi)
{
	struct model *m = load("models/zoo/llama2-7b.json");
	double T = 4096;
	struct wl_shape hf = shape("hf-eager", T, 2), te = shape("megatron-te", T, 2);
	struct op a = find_op(m, &te, WL_ATTN, PASS_FWD, "rope");
	EXPECT_BYTES(a, 4 * T * (4096 + 4096) / 2);
	cr_expect_eq(a.kernels, 2);
	a = find_op(m, &hf, WL_ATTN, PASS_FWD, "rope");
	EXPECT_BYTES(a, 20 * T * (4096 + 4096) / 2);
	model_destroy(m);
	m = load("models/zoo/mpt-7b.json");
	cr_expect(!has_op(m, &hf, WL_ATTN, PASS_FWD, "rope"));
	/* llm-foundry's unpad/pad copies around flash: 4.5 B per element of q,
	 * k, v and the output (h 4096, no GQA), 5.5 backward, 4 kernels */
	struct wl_shape lf = shape("llm-foundry", T, 2);
	struct op c = find_op(m, &lf, WL_ATTN, PASS_FWD, "attn_copy");
	EXPECT_BYTES(c, 4.5 * T * 4 * 4096 / 2);
	cr_expect_eq(c.kernels, 4);
	EXPECT_BYTES(find_op(m, &lf, WL_ATTN, PASS_BWD, "attn_copy.bwd"), 5.5 * T * 4 * 4096 / 2);
	cr_expect(!has_op(m, &hf, WL_ATTN, PASS_FWD, "attn_copy"));
	model_destroy(m);
}

/* Megatron's vocab-parallel cross-entropy: 38 B per logit forward, 14
 * backward (the fp32 upcast, max, sub, exp, sum, div; mul_ and the cast
 * back); llm-foundry's fused Triton loss 2 + 4. Llama 2 7B, vocabulary
 * 32,000, TP 2: 16,000 logits per token. */
Test(stack, the_loss_per_logit)
{
	struct model *m = load("models/zoo/llama2-7b.json");
	double T = 2048, V = 32000;
	struct wl_shape te = shape("megatron-te", T, 2), lf = shape("llm-foundry", T, 2);
	EXPECT_BYTES(find_op(m, &te, WL_HEAD, PASS_FWD, "cross_entropy"), 38 * T * V / 2);
	EXPECT_BYTES(find_op(m, &te, WL_HEAD, PASS_BWD, "cross_entropy.bwd"), 14 * T * V / 2);
	EXPECT_BYTES(find_op(m, &lf, WL_HEAD, PASS_FWD, "cross_entropy"), 2 * T * V / 2);
	EXPECT_BYTES(find_op(m, &lf, WL_HEAD, PASS_BWD, "cross_entropy.bwd"), 4 * T * V / 2);
	model_destroy(m);
}

/* fp32 main gradients: Transformer Engine's wgrad epilogue reads and
 * writes them instead of writing 16 bits, +6 B per parameter, no kernel
 * (so no launch: the roofline prices the bytes alone); an FSDP stack
 * casts the 16-bit gradient into its fp32 reduce buffer, 6 B in a
 * kernel; with 16-bit gradients the epilogue reads them (2 B) and the
 * cast does nothing. The attention block's weights: h (h + 2 kv) + h^2. */
Test(stack, main_gradients_in_the_epilogue_or_a_cast)
{
	struct model *m = load("models/zoo/llama2-7b.json");
	struct diag d;
	diag_init(&d, stderr);
	struct topology *topo = topology_load(src_path("topologies/dgx-h100.json"), &d);
	cr_assert(topo, "%s", diag_text(&d));
	double h = 4096, P = (h * (h + 2 * h) + h * h) / 2;
	struct wl_shape te = shape("megatron-te", 4096, 2), tt = shape("torchtitan", 4096, 2);
	struct op a = find_op(m, &te, WL_ATTN, PASS_BWD, "attn.main_grad");
	EXPECT_BYTES(a, 6 * P);
	cr_expect_eq(a.kernels, -1);
	double bw = topo->gpu.hbm_bw_Bps * topo->gpu.mem_eff_max;
	cr_expect_float_eq(cost_roofline_time(&topo->gpu, &a), 6 * P / bw, 1e-12,
			   "a fused accumulation pays no launch");
	struct op b = find_op(m, &tt, WL_ATTN, PASS_BWD, "attn.main_grad");
	EXPECT_BYTES(b, 6 * P);
	cr_expect_eq(b.kernels, 1);
	te.grad_fp32 = tt.grad_fp32 = false;
	EXPECT_BYTES(find_op(m, &te, WL_ATTN, PASS_BWD, "attn.main_grad"), 2 * P);
	cr_expect(!has_op(m, &tt, WL_ATTN, PASS_BWD, "attn.main_grad"));
	/* the LM head accumulates whatever the embeddings' tying */
	cr_expect(has_op(m, &te, WL_HEAD, PASS_BWD, "lm_head.main_grad"));
	topology_destroy(topo);
	diag_finish(&d);
	model_destroy(m);
}

/* DeepSpeed 0.15's engine on a Hugging Face Llama 2 7B (stack.c cites
 * each count): P = 32 (4 h^2 + 3 h f + 2 h) + 2 V h + h = 6,738,415,616
 * parameters (h 4096, f 11008, V 32000), d = 8 ranks, m = 4
 * micro-batches, reduce buckets of 5e8 parameters. The 7 partition
 * boundaries each fall in one bucket, so 7 x 5e8 / P of the gradients sit
 * in buckets that hold several ranks' slices and are flattened (r2 w2)
 * before the all-reduce, each rank copying its slices back (r2 w2 of
 * P/d). Per parameter and micro-batch, ZeRO-2: every micro-batch the
 * copy into the bucket and the division (8), the flatten (4 f), the
 * copy-back and the copy into the partition ((4 f + 4) / 8); the bf16
 * add_ of micro-batches 2-4 into the first's partition (6 / 8 x 3/4).
 * ZeRO-1 reduces once, at the boundary (the same bytes / 4), while
 * autograd adds .grad in place on micro-batches 2-4 (6 x 3/4). ZeRO-3:
 * the bucket copy, reduce_scatter_coalesced's cat and div_ (12), the
 * chunk copied into the partition on the first micro-batch (4 / 8 / 4)
 * and added on the others (6 / 8 x 3/4). Stage 0 (BF16_Optimizer): every
 * micro-batch the bf16 gradient cast and added into fp32 (6 + 12), once
 * per step the fp32 buffer cast to bf16, divided and copied back (16 /
 * 4). The attention block's weights: 4 h^2. */
static struct wl_shape ds_shape(int zero)
{
	struct wl_shape w = shape("deepspeed", 4096, 1);
	w.grad_fp32 = false;    /* DeepSpeed reduces in the model's bf16 */
	w.grad = (struct wl_grad_path){ zero, 8, 4, 5e8 };
	return w;
}

Test(stack, deepspeed_engine_gradient_ops_per_zero_stage)
{
	struct model *m = load("models/zoo/llama2-7b.json");
	double h = 4096, A = 4 * h * h, P = 6738415616.0, f = 7 * 5e8 / P;
	struct wl_shape w = ds_shape(2);
	struct op a = find_op(m, &w, WL_ATTN, PASS_BWD, "attn.grad_accum");
	EXPECT_BYTES(a, 6.0 / 8 * 3 / 4 * A);
	cr_expect_eq(a.kernels, 1);
	struct op b = find_op(m, &w, WL_ATTN, PASS_BWD, "attn.grad_bucket");
	EXPECT_BYTES(b, (8 + 4 * f + (4 * f + 4) / 8) * A);
	cr_expect_eq(b.kernels, 5);
	cr_expect(!has_op(m, &w, WL_ATTN, PASS_BWD, "attn.main_grad"), "no fp32 main gradient");
	cr_expect(!has_op(m, &w, WL_ATTN, PASS_FWD, "attn.grad"), "backward only");
	w = ds_shape(1);
	a = find_op(m, &w, WL_ATTN, PASS_BWD, "attn.grad_accum");
	EXPECT_BYTES(a, 6.0 * 3 / 4 * A);
	cr_expect_eq(a.kernels, 3);
	b = find_op(m, &w, WL_ATTN, PASS_BWD, "attn.grad_bucket");
	EXPECT_BYTES(b, (8 + 4 * f + (4 * f + 4) / 8) / 4 * A);
	cr_expect_eq(b.kernels, 1);
	w = ds_shape(3);
	EXPECT_BYTES(find_op(m, &w, WL_ATTN, PASS_BWD, "attn.grad_accum"), 6.0 / 8 * 3 / 4 * A);
	EXPECT_BYTES(find_op(m, &w, WL_ATTN, PASS_BWD, "attn.grad_bucket"), (12 + 4.0 / 8 / 4) * A);
	w = ds_shape(0);
	a = find_op(m, &w, WL_ATTN, PASS_BWD, "attn.grad_accum");
	EXPECT_BYTES(a, 18 * A);
	cr_expect_eq(a.kernels, 8);
	b = find_op(m, &w, WL_ATTN, PASS_BWD, "attn.grad_bucket");
	EXPECT_BYTES(b, 16.0 / 4 * A);
	cr_expect_eq(b.kernels, -1, "the three casts per step launch nothing per block");
	/* one micro-batch, one rank: nothing to accumulate, one slice per bucket */
	w = ds_shape(2);
	w.grad = (struct wl_grad_path){ 2, 1, 1, 5e8 };
	cr_expect(!has_op(m, &w, WL_ATTN, PASS_BWD, "attn.grad_accum"));
	EXPECT_BYTES(find_op(m, &w, WL_ATTN, PASS_BWD, "attn.grad_bucket"), (8 + 4) * A);
	/* the MLP's weights (3 h f) and the other stacks' unchanged ops */
	w = ds_shape(2);
	EXPECT_BYTES(find_op(m, &w, WL_MLP, PASS_BWD, "mlp.grad_bucket"),
		     (8 + 4 * f + (4 * f + 4) / 8) * 3 * h * 11008);
	struct wl_shape hf = shape("hf-eager", 4096, 1);
	hf.grad = w.grad;
	cr_expect(!has_op(m, &hf, WL_ATTN, PASS_BWD, "attn.grad_"));
	EXPECT_BYTES(find_op(m, &hf, WL_ATTN, PASS_BWD, "attn.main_grad"), 6 * A);
	model_destroy(m);
}

/* BLOOM 176B (h 14336, 112 heads, ffn 57344, ALiBi, dropout) under the
 * megatron-deepspeed stack of tr11, TP 4, micro-batch 2 of 2048 tokens,
 * unfused attention: per layer 28 heads x 2 x 2048^2 = 234,881,024
 * scores. The ALiBi bias copied into the score tensor and read back by
 * the baddbmm's beta (4 B per score, forward only, one kernel); apex's
 * LayerNorm backward 10 B/el in 3 kernels; the bias-GELU backward with
 * the bias's sum 8 B/el in 2; BF16_Optimizer's fp32 accumulation 18 B per
 * parameter every micro-batch, 12 kernels per block op, at ZeRO 0 and 1,
 * and its cast-scale-copy of 16 B once per step of m = 4 micro-batches,
 * launching nothing per block; megatron-te emits no ALiBi copy. */
Test(stack, megatron_deepspeed_as_bloom_tr11_ran)
{
	struct model *m = load("models/zoo/bloom-176b.json");
	double T = 4096, h = 14336, S = 2 * 28 * 2048.0 * 2048;
	double attn_p = h * 3 * h / 4 + h * h / 4, mlp_p = 2 * h * 57344 / 4;
	struct wl_shape w = shape("megatron-deepspeed", 2048, 4);
	w.micro_batch = 2;
	w.attention = ATTN_UNFUSED;
	w.grad_fp32 = true;
	struct op a = find_op(m, &w, WL_ATTN, PASS_FWD, "alibi_bias");
	EXPECT_BYTES(a, 4 * S);
	cr_expect_eq(a.kernels, 1);
	cr_expect(!has_op(m, &w, WL_ATTN, PASS_BWD, "alibi_bias"), "the bias has no gradient");
	EXPECT_BYTES(find_op(m, &w, WL_ATTN, PASS_FWD, "attn_dropout"), 5 * S);
	struct op n = find_op(m, &w, WL_ATTN, PASS_BWD, "layernorm.bwd");
	EXPECT_BYTES(n, 10 * T * h);
	cr_expect_eq(n.kernels, 3);
	struct op g = find_op(m, &w, WL_MLP, PASS_BWD, "gelu.bwd");
	EXPECT_BYTES(g, 8 * T * 57344 / 4);
	cr_expect_eq(g.kernels, 2);
	EXPECT_BYTES(find_op(m, &w, WL_HEAD, PASS_FWD, "cross_entropy"), 38 * T * 250880 / 4);
	for (int z = 0; z <= 1; z++) {
		w.grad = (struct wl_grad_path){ z, 8, 4, 5e8 };
		struct op c = find_op(m, &w, WL_ATTN, PASS_BWD, "attn.grad_accum");
		EXPECT_BYTES(c, 18 * attn_p);
		cr_expect_eq(c.kernels, 12);
		EXPECT_BYTES(find_op(m, &w, WL_MLP, PASS_BWD, "mlp.grad_accum"), 18 * mlp_p);
		struct op b = find_op(m, &w, WL_MLP, PASS_BWD, "mlp.grad_bucket");
		EXPECT_BYTES(b, 16.0 / 4 * mlp_p);
		cr_expect_eq(b.kernels, -1);
		cr_expect(!has_op(m, &w, WL_ATTN, PASS_BWD, "attn.main_grad"),
			  "no Megatron fp32 main gradient beside the optimizer's");
	}
	const struct stack *md = stack_find("megatron-deepspeed");
	cr_expect_float_eq(stack_optimizer_Bpp(md, 1), 8, 1e-15);
	cr_expect_float_eq(stack_optimizer_Bpp(md, 2), 36, 1e-15);
	struct wl_shape te = w;
	te.stack = stack_find("megatron-te");
	cr_expect(!has_op(m, &te, WL_ATTN, PASS_FWD, "alibi_bias"));
	w.attention = ATTN_FLASH;
	cr_expect(!has_op(m, &w, WL_ATTN, PASS_FWD, "alibi_bias"), "flash adds the bias itself");
	model_destroy(m);
}

/* The pipeline messages of a stage of stack st: *send_B the bytes of its
 * sends, *ag the TP all-gathers of act bytes, *blocking the sends a task
 * of another stream waits for. Llama 2 7B, TP 2 x PP 2 x DP 2 on one DGX A100,
 * 2 micro-batches of 2048 tokens. */
static void pipe_tasks(const char *st, int stage, double act, double *send_B, int *ag,
		       int *blocking)
{
	struct diag d;
	diag_init(&d, stderr);
	struct inputs *in = inputs_load(src_path("models/zoo/llama2-7b.json"),
					src_path("topologies/dgx-a100.json"), "roofline", NULL, &d);
	cr_assert(in, "%s", diag_text(&d));
	struct plan pl;
	plan_init(&pl);
	pl.nodes = 1;
	pl.parallel.tp = 2;
	pl.parallel.pp = 2;
	pl.parallel.dp = 2;
	pl.training.seq = 2048;
	pl.training.global_batch = 4;
	pl.training.micro_batch = 1;
	pl.compute.stack = stack_index(stack_find(st));
	pl.compute.stack_set = true;
	plan_resolve(&pl, in);
	struct program p;
	program_init(&p);
	cr_assert_eq(build_transformer_program(in, &pl, stage, &p, NULL), 0);
	*send_B = 0, *ag = 0, *blocking = 0;
	bool *waited = calloc((size_t)p.n, sizeof(*waited));
	cr_assert(waited);
	for (int i = 0; i < p.n; i++) {
		const struct task *t = &p.t[i];
		if (t->kind == TASK_SEND)
			*send_B += t->bytes;
		if (t->kind == TASK_COLL && t->op == COLL_ALLGATHER && t->group == GROUP_TP &&
		    t->bytes == act)
			(*ag)++;
		for (int k = 0; k < t->ndeps && t->kind != TASK_SEND; k++)
			waited[p.deps[t->dep0 + k]] = true;
	}
	for (int i = 0; i < p.n; i++)
		*blocking += p.t[i].kind == TASK_SEND && waited[i];
	free(waited);
	program_finish(&p);
	inputs_destroy(in);
	diag_finish(&d);
}

/* DeepSpeed's PipelineEngine (megatron-deepspeed) with TP 2: each rank
 * sends half of the b x s x h bf16 activation (1 x 2048 x 4096 x 2 B =
 * 16 MiB), the first stage all-gathers its output and the received
 * gradient in each backward (2 per micro-batch), the last stage the
 * received input in each forward (1), and the compute stream waits for
 * every send (2 micro-batches: 2 sends a stage). Megatron (megatron-te)
 * sends the whole tensor on its own stream and gathers nothing. */
Test(stack, deepspeed_pipeline_partitions_its_messages_over_tp)
{
	double act = 16777216, B;
	int ag, blk;
	pipe_tasks("megatron-deepspeed", 0, act, &B, &ag, &blk);
	cr_expect_float_eq(B, 2 * act / 2, 1e-9 * act);
	cr_expect_eq(ag, 4, "%d all-gathers", ag);
	cr_expect_eq(blk, 2, "%d waits for a send", blk);
	pipe_tasks("megatron-deepspeed", 1, act, &B, &ag, &blk);
	cr_expect_float_eq(B, 2 * act / 2, 1e-9 * act);
	cr_expect_eq(ag, 2, "%d all-gathers", ag);
	cr_expect_eq(blk, 2, "%d waits for a send", blk);
	pipe_tasks("megatron-te", 0, act, &B, &ag, &blk);
	cr_expect_float_eq(B, 2 * act, 1e-9 * act);
	cr_expect_eq(ag, 0, "%d all-gathers", ag);
	cr_expect_eq(blk, 0, "%d waits for a send", blk);
}

/* The share of gradients in buckets spanning partitions: (d - 1) bucket /
 * P, at most 1; none on one rank; all in one bucket over several. */
Test(stack, share_of_buckets_spanning_partitions_grows_with_ranks)
{
	cr_expect_float_eq(stack_span_fraction(8, 5e8, 7e9), 0.5, 1e-15);
	cr_expect_float_eq(stack_span_fraction(16, 5e8, 7e9), 1, 1e-15);
	cr_expect_float_eq(stack_span_fraction(1, 5e8, 7e9), 0, 1e-15);
	cr_expect_float_eq(stack_span_fraction(8, 0, 7e9), 1, 1e-15);
}

/* The step: stages 1-3 add the fp64 norm (r2 w8 + r8), the flatten (r2
 * w2), the fp32 cast (r2 w4) and the unconditional scale (r4 w4) to
 * FusedAdam's r16 w12 and the bf16 copy, 70 B per parameter of the
 * partition in 5 kernels; BF16_Optimizer (stage 0) the fp32 norm (r4)
 * and the buffer's zeroing (w4). Other stacks ignore the stage. Under
 * ZeRO-2 on 8 A100s the optimizer task of Llama 2 7B moves P / 8 x 70
 * bytes at the GPU's element-wise rate plus 5 launches. */
Test(stack, deepspeed_optimizer_step_per_zero_stage)
{
	const struct stack *ds = stack_find("deepspeed"), *hf = stack_find("hf-eager");
	cr_assert(ds && hf);
	for (int z = 1; z <= 3; z++) {
		cr_expect_float_eq(stack_optimizer_Bpp(ds, z), 36, 1e-15);
		cr_expect_eq(stack_optimizer_kernels(ds, z), 5);
	}
	cr_expect_float_eq(stack_optimizer_Bpp(ds, 0), 8, 1e-15);
	cr_expect_eq(stack_optimizer_kernels(ds, 0), 3);
	cr_expect(ds->optimizer_copy16);
	for (int z = 0; z <= 3; z++)
		cr_expect_float_eq(stack_optimizer_Bpp(hf, z), 64, 1e-15);
	struct diag d;
	diag_init(&d, stderr);
	struct inputs *in = inputs_load(src_path("models/zoo/llama2-7b.json"),
					src_path("topologies/dgx-a100.json"), "roofline", NULL, &d);
	cr_assert(in, "%s", diag_text(&d));
	struct plan pl;
	plan_init(&pl);
	pl.nodes = 1;
	pl.parallel.dp = 8;
	pl.parallel.zero = ZERO_2;
	pl.training.seq = 2048;
	pl.training.global_batch = 32;
	pl.training.micro_batch = 1;
	pl.training.grad_dtype = DTYPE_BF16;
	pl.compute.stack = stack_index(ds);
	pl.compute.stack_set = true;
	plan_resolve(&pl, in);
	struct program p;
	program_init(&p);
	cr_assert_eq(build_transformer_program(in, &pl, 0, &p, NULL), 0);
	int n = 0;
	double t = 0;
	for (int i = 0; i < p.n; i++)
		if (p.t[i].cat == CAT_OPTIMIZER && p.t[i].kind == TASK_COMPUTE) {
			t = p.t[i].time_s;
			n++;
		}
	cr_assert_eq(n, 1);
	const struct gpu_spec *g = &inputs_topology(in)->gpu;
	double want = 6738415616.0 / 8 * 70 / (g->hbm_bw_Bps * g->mem_eff_max) + 5 * g->kernel_launch_s;
	cr_expect_float_eq(t, want, 1e-6 * want, "%.9g s vs %.9g s", t, want);
	program_finish(&p);
	inputs_destroy(in);
	diag_finish(&d);
}

/* Grouped-query attention in an eager stack: repeat_kv writes K and V
 * once per query head. Llama 3 8B: 32 heads, 8 KV heads of 128, so per
 * token 2 x 1024 K/V elements read, 4 x that written. */
Test(stack, repeat_kv_in_eager_stacks_only)
{
	struct model *m = load("models/zoo/llama3-8b.json");
	double T = 1024, kv = 2 * 1024;
	struct wl_shape tt = shape("torchtitan", T, 1), te = shape("megatron-te", T, 1);
	struct op a = find_op(m, &tt, WL_ATTN, PASS_FWD, "repeat_kv");
	EXPECT_BYTES(a, T * kv * (1 + 4) * 2);
	cr_expect_eq(a.kernels, 2);
	cr_expect(!has_op(m, &te, WL_ATTN, PASS_FWD, "repeat_kv"));
	model_destroy(m);
}

/* An eager piece pays one launch per kernel: HF's RMSNorm costs seven
 * launches more than its bytes alone with one. */
Test(stack, an_eager_piece_pays_a_launch_per_kernel)
{
	struct model *m = load("models/zoo/llama2-7b.json");
	struct diag d;
	diag_init(&d, stderr);
	struct topology *topo = topology_load(src_path("topologies/dgx-a100.json"), &d);
	cr_assert(topo, "%s", diag_text(&d));
	struct wl_shape hf = shape("hf-eager", 4096, 1);
	struct op a = find_op(m, &hf, WL_ATTN, PASS_FWD, "rmsnorm"), one = a;
	one.kernels = 1;
	cr_expect_float_eq(cost_roofline_time(&topo->gpu, &a) - cost_roofline_time(&topo->gpu, &one),
			   7 * topo->gpu.kernel_launch_s, 1e-15);
	topology_destroy(topo);
	diag_finish(&d);
	model_destroy(m);
}

/* llm-foundry's benchmark table of 2023 ran Tri Dao's Triton
 * FlashAttention, priced as FlashAttention-1 (fa1) on Ampere and Hopper,
 * with no unpad/pad copies around it. Forward + backward on A100, causal,
 * head dim 128, 16k tokens of 16 heads: the FlashAttention-2 paper's
 * figure measures FlashAttention-1 at 69, 76 and 80 TFLOP/s at 2k, 4k
 * and 8k (the figures gpus/a100-sxm4-80gb.json's fa1 comes from); the
 * roofline must give them within 2 %. */
Test(stack, triton_flash_of_2023_priced_as_fa1)
{
	const struct stack *st = stack_find("llm-foundry-triton");
	cr_assert(st);
	cr_expect_eq(stack_attn_backend(st, 8.0), ATTN_BE_FA1);
	cr_expect_eq(stack_attn_backend(st, 9.0), ATTN_BE_FA1);
	struct model *m = load("models/zoo/mpt-7b.json");
	struct wl_shape w = shape("llm-foundry-triton", 2048, 1);
	w.attn_backend[0] = w.attn_backend[1] = ATTN_BE_FA1;
	cr_expect_not(has_op(m, &w, WL_ATTN, PASS_FWD, "attn_copy"));
	struct diag d;
	diag_init(&d, stderr);
	struct topology *topo = topology_load(src_path("topologies/dgx-a100.json"), &d);
	cr_assert(topo, "%s", diag_text(&d));
	static const double seq[] = { 2048, 4096, 8192 }, measured[] = { 69, 76, 80 };
	for (int i = 0; i < 3; i++) {
		struct op f = { .kind = OP_ATTN, .pass = PASS_FWD, .dtype = DTYPE_BF16,
				.batch = 16384 / seq[i] * 16, .m = seq[i], .n = seq[i], .k = 128,
				.causal = true, .backend = { ATTN_BE_FA1, ATTN_BE_FA1 } };
		struct op b = f;
		b.pass = PASS_BWD;
		f.flops = attention_flops(ATTN_FLASH, true, false, f.batch, seq[i], 128);
		b.flops = attention_flops(ATTN_FLASH, true, true, b.batch, seq[i], 128);
		double t = cost_roofline_time(&topo->gpu, &f) + cost_roofline_time(&topo->gpu, &b);
		double tf = (f.flops + b.flops) / t / 1e12;
		cr_expect(fabs(tf / measured[i] - 1) < 0.02, "s %g: %.1f TFLOP/s vs %g measured",
			  seq[i], tf, measured[i]);
	}
	topology_destroy(topo);
	diag_finish(&d);
	model_destroy(m);
}

/* ResNet under NVIDIA's MLPerf MXNet kernels: the ReLUs have no kernel,
 * inside a bottleneck the batch norms have no forward bytes (folded into
 * the convolutions), the add is ScaleBiasAddRelu at 6.125 B per element
 * (fp16: x and the shortcut read, y and a bit mask written); on several
 * nodes NHWC BN+ReLU at 6 and BatchNormAddRelu at 8.125 on the block's
 * last BN (bn2 of a ResNet-18 basic block, bn3 of a bottleneck). */
static double layer_bytes(const struct cnn_net *net, const char *name, enum op_pass ps,
			  enum cnn_fusion fu, int *nops)
{
	for (int i = 0; i < net->n; i++) {
		if (strcmp(net->v[i].name, name))
			continue;
		struct op_list l;
		op_list_init(&l);
		cr_assert_eq(cnn_layer_ops(&net->v[i], 2, DTYPE_FP16, ps, i == 0, fu, &l), 0);
		double b = 0;
		for (int j = 0; j < l.n; j++)
			b += l.v[j].bytes;
		*nops = l.n;
		op_list_finish(&l);
		return b;
	}
	cr_assert_fail("no layer '%s'", name);
	return 0;
}

static double out_el(const struct cnn_net *net, const char *name)
{
	for (int i = 0; i < net->n; i++)
		if (!strcmp(net->v[i].name, name))
			return 2 * net->v[i].k * net->v[i].p * net->v[i].q;
	return 0;
}

Test(stack, cnn_batch_norm_fused_as_mlperf_runs_it)
{
	struct model *m = load("models/zoo/resnet50.json");
	struct cnn_net net;
	int n;
	cr_assert_eq(cnn_build(m, &net), 0);
	cr_expect_eq(layer_bytes(&net, "layer1.0.relu1", PASS_FWD, CNN_FUSE_CONV_BN, &n), 0);
	cr_expect_eq(n, 0);
	cr_expect_eq(layer_bytes(&net, "layer1.0.bn1", PASS_FWD, CNN_FUSE_CONV_BN, &n), 0);
	double o = out_el(&net, "layer1.0.add");
	cr_expect_float_eq(layer_bytes(&net, "layer1.0.add", PASS_FWD, CNN_FUSE_CONV_BN, &n),
			   6.125 * o, 1e-6 * o);
	cr_expect_float_eq(layer_bytes(&net, "layer1.0.bn3", PASS_BWD, CNN_FUSE_CONV_BN, &n),
			   10 * out_el(&net, "layer1.0.bn3"), 1e-6 * o);
	cr_expect_float_eq(layer_bytes(&net, "layer1.0.bn3", PASS_FWD, CNN_FUSE_BN_ACT, &n),
			   8.125 * out_el(&net, "layer1.0.bn3"), 1e-6 * o);
	cr_expect_float_eq(layer_bytes(&net, "bn1", PASS_FWD, CNN_FUSE_CONV_BN, &n),
			   6 * out_el(&net, "bn1"), 1e-6 * o);
	/* unfused: BN 3 touches of fp16 */
	cr_expect_float_eq(layer_bytes(&net, "layer1.0.bn1", PASS_FWD, CNN_FUSE_NONE, &n),
			   3 * 2 * out_el(&net, "layer1.0.bn1"), 1e-6 * o);
	cnn_net_finish(&net);
	model_destroy(m);
	/* a basic block ends with bn2 */
	struct diag d;
	diag_init(&d, stderr);
	char *dir = tmp_dir();
	char *p = write_file(dir, "r18.json", "{\"schema\":\"ddlsim.model\",\"schema_version\":\"1.0\","
			     "\"name\":\"r18\",\"source\":\"s\",\"architecture\":\"cnn\",\"cnn\":{"
			     "\"family\":\"resnet\",\"depth\":18,\"image\":224,\"classes\":1000}}");
	m = model_load(p, &d);
	cr_assert(m, "%s", diag_text(&d));
	cr_assert_eq(cnn_build(m, &net), 0);
	cr_expect_float_eq(layer_bytes(&net, "layer1.0.bn2", PASS_FWD, CNN_FUSE_BN_ACT, &n),
			   8.125 * out_el(&net, "layer1.0.bn2"), 1e-6);
	cr_expect_eq(layer_bytes(&net, "layer1.0.add", PASS_FWD, CNN_FUSE_BN_ACT, &n), 0);
	cnn_net_finish(&net);
	model_destroy(m);
	diag_finish(&d);
	free(p);
	free(dir);
}

/* compute.stack and compute.attention_backend: bad names, a kernel that
 * needs flash, FlashAttention-3 on an Ampere GPU, a CNN stack on a
 * transformer; exit code 3 and the JSON path. */
static void expect_invalid(const char *topo, const char *model, const char *compute,
			   const char *attention, const char *want)
{
	char *dir = tmp_dir(), text[2048], args[1400], *err = NULL, w[1600];
	snprintf(text, sizeof(text),
		 "{ \"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\", \"model\": \"%s\","
		 " \"topology\": \"%s\", \"nodes\": 1, \"compute\": %s,"
		 " \"training\": { \"seq_len\": 2048, \"global_batch\": 8%s } }\n",
		 src_path(model), src_path(topo), compute, attention);
	char *p = write_file(dir, "s.json", text);
	snprintf(args, sizeof(args), "validate '%s'", p);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 3, "%s", err);
	snprintf(w, sizeof(w), "%s: %s", p, want);
	cr_expect(err && strstr(err, w), "want '%s' in: %s", w, err);
	free(err);
	free(p);
	free(dir);
}

/* A scenario naming the stack validates (exit 0). */
static void expect_valid(const char *compute)
{
	char *dir = tmp_dir(), text[2048], args[1400], *err = NULL;
	snprintf(text, sizeof(text),
		 "{ \"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\", \"model\": \"%s\","
		 " \"topology\": \"%s\", \"nodes\": 1, \"compute\": %s, \"parallel\": { \"zero\": 2 },"
		 " \"training\": { \"seq_len\": 2048, \"global_batch\": 32 } }\n",
		 src_path("models/zoo/llama2-7b.json"), src_path("topologies/dgx-h100.json"), compute);
	char *p = write_file(dir, "s.json", text);
	snprintf(args, sizeof(args), "validate '%s'", p);
	cr_expect_eq(run_ddlsim(args, NULL, &err), 0, "%s: %s", compute, err ? err : "");
	free(err);
	free(p);
	free(dir);
}

Test(stack, scenario_checks_of_the_stack_and_the_attention_kernel)
{
	expect_valid("{ \"stack\": \"deepspeed\" }");
	expect_invalid("topologies/dgx-a100.json", "models/zoo/llama2-7b.json",
		       "{ \"stack\": \"megatron\" }", "",
		       "/compute/stack: error: expected one of {megatron-te, hf-eager, torchtitan, "
		       "llm-foundry, llm-foundry-triton, deepspeed, dle-bert, mxnet-normconv, mxnet-nhwc-bn, "
		       "megatron-deepspeed}, "
		       "got 'megatron'");
	expect_invalid("topologies/dgx-a100.json", "models/zoo/llama2-7b.json",
		       "{ \"attention_backend\": \"fa3\" }", "",
		       "/compute/attention_backend: error: fa3 needs compute capability 9.0 or later "
		       "(Hopper), GPU 'A100-SXM4-80GB' has 8.0");
	expect_invalid("topologies/dgx-h100.json", "models/zoo/llama2-7b.json",
		       "{ \"attention_backend\": \"fa3\" }", ", \"attention\": \"unfused\"",
		       "/compute/attention_backend: error: a flash kernel needs attention \"flash\", "
		       "got \"unfused\"");
	expect_invalid("topologies/dgx-h100.json", "models/zoo/llama2-7b.json",
		       "{ \"stack\": \"mxnet-normconv\" }", "",
		       "/compute/stack: error: stack 'mxnet-normconv' runs convolutional networks, "
		       "the model is a transformer");
}

/* DeepLearningExamples' BERT-Large phase 1 (stack.c dle-bert): 256
 * sequences of 128 tokens per micro-batch, fp16 (model.half()), unfused
 * attention, 16-bit gradients reduced over 8 ranks, m micro-batches. */
static struct wl_shape dle_shape(int m)
{
	struct wl_shape w = shape("dle-bert", 128, 1);
	w.micro_batch = 256;
	w.dtype = DTYPE_FP16;
	w.attention = ATTN_UNFUSED;
	w.grad_fp32 = false;
	w.grad = (struct wl_grad_path){ 0, 8, m, 0 };
	return w;
}

/* Three nn.Linear for query, key and value (modeling.py L316-318): three
 * GEMMs of T x h x h, T = 32,768 tokens, h = 1024, and no fused one; the
 * context's transpose(0, 1).contiguous() (L374) reads and writes T x h
 * fp16 forward, nothing backward; the fused stack runs one QKV GEMM of
 * T x 3h x h and no copy. */
Test(stack, dle_bert_three_projections_and_the_context_copy)
{
	struct model *m = load("models/zoo/dle/bert-large-phase1.json");
	double T = 256 * 128, h = 1024;
	struct wl_shape w = dle_shape(32);
	const char *qkv[] = { "qkv.q", "qkv.k", "qkv.v" };
	for (int i = 0; i < 3; i++) {
		struct op g = find_op(m, &w, WL_ATTN, PASS_FWD, qkv[i]);
		cr_expect(g.m == T && g.n == h && g.k == h, "%s: %g x %g x %g", g.name, g.m, g.n, g.k);
		cr_expect_float_eq(g.flops, 2 * T * h * h, 1e-6);
	}
	EXPECT_BYTES(find_op(m, &w, WL_ATTN, PASS_BWD, "qkv.k.wgrad"), (2 * T * h + h * h) * 2);
	struct op_list l;
	op_list_init(&l);
	cr_assert_eq(workload_block(m, &w, WL_ATTN, PASS_FWD, RECOMPUTE_NONE, &l), 0);
	int fused = 0, gemms = 0;
	for (int i = 0; i < l.n; i++) {
		fused += !strcmp(l.v[i].name, "qkv");
		gemms += !strncmp(l.v[i].name, "qkv.", 4);
	}
	op_list_finish(&l);
	cr_expect(fused == 0 && gemms == 3, "only qkv.q, .k, .v: %d fused, %d", fused, gemms);
	struct op c = find_op(m, &w, WL_ATTN, PASS_FWD, "attn_copy");
	EXPECT_BYTES(c, 4 * T * h);
	cr_expect_eq(c.kernels, 1);
	cr_expect(!has_op(m, &w, WL_ATTN, PASS_BWD, "attn_copy"), "a view backward");
	struct wl_shape te = w;
	te.stack = stack_find("megatron-te");
	struct op f = find_op(m, &te, WL_ATTN, PASS_FWD, "qkv");
	cr_expect(f.m == T && f.n == 3 * h && f.k == h);
	cr_expect(!has_op(m, &te, WL_ATTN, PASS_FWD, "attn_copy"));
	model_destroy(m);
}

/* The MLM head on the 20 masked positions of each sequence (modeling.py
 * L587-591): the decoder GEMM is 5,120 x 30,522 x 1,024 (320 GFLOP
 * forward), then the decoder's bias add (r2 w2) and CrossEntropyLoss on
 * the fp16 logits, log_softmax (r2 w2) and nll_loss: 8 B per logit in 3
 * kernels; backward the zero-filled gradient (w2), log_softmax's backward
 * (r4 w2) and the bias gradient's row sum (r2): 10 B in 4. Megatron's
 * fp32 loss moves 38 / 14. */
Test(stack, dle_bert_mlm_head_on_the_masked_positions)
{
	struct model *m = load("models/zoo/dle/bert-large-phase1.json");
	double N = 256 * 20, V = 30522, h = 1024;
	struct wl_shape w = dle_shape(32);
	struct op d = find_op(m, &w, WL_HEAD, PASS_FWD, "mlm_decoder");
	cr_expect(d.m == N && d.n == V && d.k == h, "%g x %g x %g", d.m, d.n, d.k);
	cr_expect_float_eq(d.flops, 2 * N * V * h, 1e-3);
	cr_expect_float_eq(d.flops, 320.02e9, 1e-4 * 320.02e9);
	struct op l = find_op(m, &w, WL_HEAD, PASS_FWD, "cross_entropy");
	EXPECT_BYTES(l, 8 * N * V);
	cr_expect_eq(l.kernels, 3);
	struct op lb = find_op(m, &w, WL_HEAD, PASS_BWD, "cross_entropy.bwd");
	EXPECT_BYTES(lb, 10 * N * V);
	cr_expect_eq(lb.kernels, 4);
	struct wl_shape te = w;
	te.stack = stack_find("megatron-te");
	EXPECT_BYTES(find_op(m, &te, WL_HEAD, PASS_FWD, "cross_entropy"), 38 * N * V);
	model_destroy(m);
}

/* DDP under DLE's loop, per parameter (the attention block's weights A =
 * 4 h^2): micro-batches 2..m add their fp16 gradient in place (r2 r2 w2);
 * at the step's last the reducer copies it into the bucket view (4) and
 * with m > 1 the comm hook divides the bucket twice (8), on average over
 * the step's m micro-batches; with m = 1 no hook: the copy alone,
 * dividing as it goes, and nothing accumulated. No fp32 main gradient. */
Test(stack, dle_bert_ddp_gradient_path)
{
	struct model *m = load("models/zoo/dle/bert-large-phase1.json");
	double h = 1024, A = 4 * h * h;
	struct wl_shape w = dle_shape(32);
	struct op a = find_op(m, &w, WL_ATTN, PASS_BWD, "attn.grad_accum");
	EXPECT_BYTES(a, 6.0 * 31 / 32 * A);
	cr_expect_eq(a.kernels, 8);
	struct op b = find_op(m, &w, WL_ATTN, PASS_BWD, "attn.grad_bucket");
	EXPECT_BYTES(b, (4.0 + 8) / 32 * A);
	cr_expect(!has_op(m, &w, WL_ATTN, PASS_BWD, "attn.main_grad"));
	w = dle_shape(4);
	EXPECT_BYTES(find_op(m, &w, WL_ATTN, PASS_BWD, "attn.grad_bucket"), (4.0 + 8) / 4 * A);
	w = dle_shape(1);
	cr_expect(!has_op(m, &w, WL_ATTN, PASS_BWD, "attn.grad_accum"));
	EXPECT_BYTES(find_op(m, &w, WL_ATTN, PASS_BWD, "attn.grad_bucket"), 4 * A);
	model_destroy(m);
}

/* FusedLAMBAMP's step (lamb_amp_opt at a9e2c1d5) per fp16 parameter: the
 * scaler's unscale check r2 w2, the gradient norm r2, the fp32 master's
 * norms r4, stage 1 r14 w10, the update's norms r2, stage 2 r8 w6: 50 B,
 * its fp16 copy included, 22 beyond a fused Adam's 28. BERT-Large with
 * the pooler and both heads: 31,782,912 in the embeddings, 24 layers of
 * 12,596,224, the pooler 1,049,600, the MLM transform and decoder bias
 * 1,082,170, NSP 2,050 = 336,226,108 parameters, so 16.81 GB per step,
 * priced at the A100's element-wise rate with 11 launches. */
Test(stack, dle_bert_lamb_step_bytes)
{
	const struct stack *s = stack_find("dle-bert");
	cr_assert(s);
	cr_expect_float_eq(stack_optimizer_Bpp(s, 0), 22, 1e-15);
	cr_expect_eq(stack_optimizer_kernels(s, 0), 11);
	cr_expect(!s->optimizer_copy16);
	struct diag d;
	diag_init(&d, stderr);
	struct inputs *in = inputs_load(src_path("models/zoo/dle/bert-large-phase1.json"),
					src_path("topologies/dgx-a100.json"), "roofline", NULL, &d);
	cr_assert(in, "%s", diag_text(&d));
	double P = 31782912.0 + 24 * 12596224.0 + 1049600 + 1082170 + 2050;
	cr_expect_float_eq(P, 336226108, 0.5);
	cr_expect_float_eq(model_params(inputs_model(in)), P, 0.5);
	struct plan pl;
	plan_init(&pl);
	pl.nodes = 1;
	pl.parallel.dp = 8;
	pl.training.seq = 128;
	pl.training.global_batch = 65536;
	pl.training.micro_batch = 256;
	pl.training.precision = DTYPE_FP16;
	pl.training.grad_dtype = DTYPE_FP16;
	pl.training.attention = ATTN_UNFUSED;
	pl.compute.stack = stack_index(s);
	pl.compute.stack_set = true;
	plan_resolve(&pl, in);
	struct program p;
	program_init(&p);
	cr_assert_eq(build_transformer_program(in, &pl, 0, &p, NULL), 0);
	double t = -1;
	for (int i = 0; i < p.n; i++)
		if (p.t[i].cat == CAT_OPTIMIZER && p.t[i].kind == TASK_COMPUTE)
			t = p.t[i].time_s;
	const struct gpu_spec *g = &inputs_topology(in)->gpu;
	double want = P * 50 / (g->hbm_bw_Bps * g->mem_eff_max) + 11 * g->kernel_launch_s;
	cr_expect_float_eq(t, want, 1e-6 * want, "%.9g s vs %.9g s", t, want);
	cr_expect_float_eq(P * 50, 16.811e9, 1e-4 * 16.811e9);
	program_finish(&p);
	inputs_destroy(in);
	diag_finish(&d);
}
