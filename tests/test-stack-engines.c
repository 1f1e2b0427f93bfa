/* test-stack-engines: the gradient, optimizer and pipeline paths that a
 * training engine adds to its stack's kernels (models/stack.c), against
 * byte counts worked by hand from the engine's source: DeepSpeed's
 * gradient buckets and optimizer step per ZeRO stage, BigScience's
 * Megatron-DeepSpeed as BLOOM tr11 ran it (ALiBi, apex LayerNorm,
 * BF16_Optimizer, the TP-partitioned blocking pipeline), and
 * DeepLearningExamples BERT (three projections, the MLM head on the masked
 * positions, DDP's gradient path, FusedLAMB), and Megatron-LM v2.5 as the
 * SC21 table ran it (apex kernels, fp16 gradients, torch or local DDP). */
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
#include "stack-util.h"

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

Test(stack_engines, deepspeed_engine_gradient_ops_per_zero_stage)
{
	struct model *m = load_model("models/zoo/llama2-7b.json");
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
Test(stack_engines, megatron_deepspeed_as_bloom_tr11_ran)
{
	struct model *m = load_model("models/zoo/bloom-176b.json");
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

/* Megatron-LM v2.5 as the SC21 table ran it (stacks megatron-lm-2021 and
 * -torch-ddp), on the table's GPT 1.7B (h 2304, 24 heads, ffn 9216,
 * dropout), TP 1, one micro-batch of 2048 tokens in fp16, unfused
 * attention: 24 x 2048^2 = 100,663,296 scores per layer. The causal
 * fused softmax reads only the lower triangle (3 / 4 B per score, as
 * megatron-te's, against the generic 4 / 6 of an eager stack); the
 * attention dropout's backward 5 B per score (megatron-te 7.5); the QKV
 * bias added by its own kernel (4 B per element of q, k, v) and summed
 * for its gradient (2); the context's permute copy (4 B per element of
 * T x h, forward only); bias_dropout_add's backward 12 + 1 (the mask)
 * B/el in 3 kernels; apex LayerNorm 10 B/el in 3; bias-GELU 8 in 2.
 * Gradients in fp16 .grad: autograd's add on micro-batches 2-4 of 4
 * (6 x 3/4 B/param), at the reduction torch DDP's bucket copies (8 / 4)
 * or local DDP's flatten, divide and copy back (12 / 4); no fp32 main
 * gradient; the step 18 B/param beyond Adam and the fp16 copy. */
Test(stack_engines, megatron_lm_2021_as_the_sc21_table_ran)
{
	struct model *m = load_model("models/zoo/megatron/gpt-1.7b.json");
	double T = 2048, h = 2304, f = 9216, S = 24 * 2048.0 * 2048;
	double attn_p = 4 * h * h, mlp_p = 2 * h * f;
	struct wl_shape w = shape("megatron-lm-2021-torch-ddp", 2048, 1);
	w.dtype = DTYPE_FP16;
	w.attention = ATTN_UNFUSED;
	w.grad_fp32 = false;
	w.grad = (struct wl_grad_path){ 0, 32, 4, 0 };
	EXPECT_BYTES(find_op(m, &w, WL_ATTN, PASS_FWD, "softmax"), 3 * S);
	EXPECT_BYTES(find_op(m, &w, WL_ATTN, PASS_BWD, "softmax.bwd"), 4 * S);
	EXPECT_BYTES(find_op(m, &w, WL_ATTN, PASS_FWD, "attn_dropout"), 5 * S);
	EXPECT_BYTES(find_op(m, &w, WL_ATTN, PASS_BWD, "attn_dropout.bwd"), 5 * S);
	struct op q = find_op(m, &w, WL_ATTN, PASS_FWD, "qkv_bias");
	EXPECT_BYTES(q, 4 * T * 3 * h);
	cr_expect_eq(q.kernels, 1);
	EXPECT_BYTES(find_op(m, &w, WL_ATTN, PASS_BWD, "qkv_bias.bwd"), 2 * T * 3 * h);
	EXPECT_BYTES(find_op(m, &w, WL_ATTN, PASS_FWD, "attn_copy"), 4 * T * h);
	cr_expect(!has_op(m, &w, WL_ATTN, PASS_BWD, "attn_copy"), "the permute's backward is a view");
	struct op r = find_op(m, &w, WL_ATTN, PASS_BWD, "dropout_residual.bwd");
	EXPECT_BYTES(r, 13 * T * h);
	cr_expect_eq(r.kernels, 3);
	struct op n = find_op(m, &w, WL_ATTN, PASS_BWD, "layernorm.bwd");
	EXPECT_BYTES(n, 10 * T * h);
	cr_expect_eq(n.kernels, 3);
	EXPECT_BYTES(find_op(m, &w, WL_MLP, PASS_BWD, "gelu.bwd"), 8 * T * f);
	EXPECT_BYTES(find_op(m, &w, WL_ATTN, PASS_BWD, "attn.grad_accum"), 6 * 0.75 * attn_p);
	EXPECT_BYTES(find_op(m, &w, WL_MLP, PASS_BWD, "mlp.grad_bucket"), 8.0 / 4 * mlp_p);
	cr_expect(!has_op(m, &w, WL_ATTN, PASS_BWD, "attn.main_grad"), "fp16 .grad, no main gradient");
	struct wl_shape loc = w;
	loc.stack = stack_find("megatron-lm-2021");
	EXPECT_BYTES(find_op(m, &loc, WL_MLP, PASS_BWD, "mlp.grad_bucket"), 12.0 / 4 * mlp_p);
	cr_expect_float_eq(stack_optimizer_Bpp(loc.stack, 0), 18, 1e-15);
	struct wl_shape te = w, hf = w;
	te.stack = stack_find("megatron-te");
	hf.stack = stack_find("hf-eager");
	EXPECT_BYTES(find_op(m, &te, WL_ATTN, PASS_BWD, "softmax.bwd"), 4 * S);
	EXPECT_BYTES(find_op(m, &te, WL_ATTN, PASS_BWD, "attn_dropout.bwd"), 7.5 * S);
	EXPECT_BYTES(find_op(m, &hf, WL_ATTN, PASS_FWD, "softmax"), 4 * S);
	EXPECT_BYTES(find_op(m, &hf, WL_ATTN, PASS_BWD, "softmax.bwd"), 6 * S);
	model_destroy(m);
}

/* Llama 2 7B on one DGX A100, priced by the roofline: the inputs (the
 * caller destroys them) and *pl, TP tp x PP pp x DP dp, sequence 2048,
 * micro-batch 1, global batch gb, under the stack named st (resolve it
 * after any other change). */
static struct inputs *llama7b_a100(const char *st, int tp, int pp, int dp, long gb, struct plan *pl)
{
	struct inputs *in = load_inputs(src_path("models/zoo/llama2-7b.json"), "topologies/dgx-a100.json");
	plan_init(pl);
	pl->nodes = 1;
	pl->parallel.tp = tp;
	pl->parallel.pp = pp;
	pl->parallel.dp = dp;
	pl->training.seq = 2048;
	pl->training.global_batch = gb;
	pl->training.micro_batch = 1;
	pl->compute.stack = stack_index(stack_find(st));
	pl->compute.stack_set = true;
	return in;
}

/* The pipeline messages of a stage of stack st: *send_B the bytes of its
 * sends, *ag the TP all-gathers of act bytes, *blocking the sends a task
 * of another stream waits for. Llama 2 7B, TP 2 x PP 2 x DP 2 on one DGX A100,
 * 2 micro-batches of 2048 tokens. */
static void pipe_tasks(const char *st, int stage, double act, double *send_B, int *ag,
		       int *blocking)
{
	struct plan pl;
	struct inputs *in = llama7b_a100(st, 2, 2, 2, 4, &pl);
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
}

/* DeepSpeed's PipelineEngine (megatron-deepspeed) with TP 2: each rank
 * sends half of the b x s x h bf16 activation (1 x 2048 x 4096 x 2 B =
 * 16 MiB), the first stage all-gathers its output and the received
 * gradient in each backward (2 per micro-batch), the last stage the
 * received input in each forward (1), and the compute stream waits for
 * every send (2 micro-batches: 2 sends a stage). Megatron (megatron-te)
 * sends the whole tensor on its own stream and gathers nothing. */
Test(stack_engines, deepspeed_pipeline_partitions_its_messages_over_tp)
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
Test(stack_engines, share_of_buckets_spanning_partitions_grows_with_ranks)
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
Test(stack_engines, deepspeed_optimizer_step_per_zero_stage)
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
	struct plan pl;
	struct inputs *in = llama7b_a100("deepspeed", 1, 1, 8, 32, &pl);
	pl.parallel.zero = ZERO_2;
	pl.training.grad_dtype = DTYPE_BF16;
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
 * fp16 forward; backward, the gradients of q, k and v made contiguous
 * again for their Linear (view's backward reshapes the transposed bmm
 * gradients: L330-338), r2 w2 of T x h three times in 3 kernels; the
 * fused stack runs one QKV GEMM of T x 3h x h and no copy. */
Test(stack_engines, dle_bert_three_projections_and_the_context_copy)
{
	struct model *m = load_model("models/zoo/dle/bert-large-phase1.json");
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
	struct op cb = find_op(m, &w, WL_ATTN, PASS_BWD, "attn_copy.bwd");
	EXPECT_BYTES(cb, 3 * 4 * T * h);
	cr_expect_eq(cb.kernels, 3);
	struct wl_shape te = w;
	te.stack = stack_find("megatron-te");
	struct op f = find_op(m, &te, WL_ATTN, PASS_FWD, "qkv");
	cr_expect(f.m == T && f.n == 3 * h && f.k == h);
	cr_expect(!has_op(m, &te, WL_ATTN, PASS_FWD, "attn_copy"));
	model_destroy(m);
}

/* The Q, K and V biases of PyTorch 1.11's linear on the [s, b, h] input
 * (matmul, then add_; nvFuser cannot fuse them before view and bmm): the
 * add reads and writes 3 T x h fp16 elements forward in 3 kernels, the
 * bias gradient reads the 3 T x h of the outputs' gradient in 3
 * reductions; 8 GPUs at T = 32,768, h = 1024: 402.7 MB forward, 201.3 MB
 * backward, 244.3 us and 128.2 us on the A100 80GB roofline. Not for a
 * model without biases, nor for Megatron-Core's fused stack. */
Test(stack_engines, dle_bert_qkv_biases_by_their_own_kernels)
{
	struct model *m = load_model("models/zoo/dle/bert-large-phase1.json");
	double T = 256 * 128, h = 1024;
	struct wl_shape w = dle_shape(32);
	struct op f = find_op(m, &w, WL_ATTN, PASS_FWD, "qkv_bias");
	EXPECT_BYTES(f, 4 * 3 * T * h);
	cr_expect_eq(f.kernels, 3);
	cr_expect_float_eq(f.m, 3 * T * h, 1e-9);
	struct op b = find_op(m, &w, WL_ATTN, PASS_BWD, "qkv_bias.bwd");
	EXPECT_BYTES(b, 2 * 3 * T * h);
	cr_expect_eq(b.kernels, 3);
	/* priced at mem_max 0.85 of 2,039 GB/s, 4 us a launch */
	struct diag d;
	struct gpu_spec g;
	diag_init(&d, stderr);
	cr_assert_eq(topology_gpu_preset_load(src_path("gpus/a100-sxm4-80gb.json"), &g, &d), 0);
	diag_finish(&d);
	double tf = 12 * T * h / (2039e9 * 0.85) + 3 * 4e-6, tb = 6 * T * h / (2039e9 * 0.85) + 3 * 4e-6;
	cr_expect_float_eq(cost_roofline_time(&g, &f), tf, 1e-9 * tf, "%.9g s vs %.9g s",
			   cost_roofline_time(&g, &f), tf);
	cr_expect_float_eq(cost_roofline_time(&g, &b), tb, 1e-9 * tb, "%.9g s vs %.9g s",
			   cost_roofline_time(&g, &b), tb);
	struct wl_shape te = w;
	te.stack = stack_find("megatron-te");
	cr_expect(!has_op(m, &te, WL_ATTN, PASS_FWD, "qkv_bias"));
	model_destroy(m);
	struct model *nb = load_model("models/zoo/llama2-7b.json");
	cr_expect(!has_op(nb, &w, WL_ATTN, PASS_FWD, "qkv_bias"), "a model without biases");
	model_destroy(nb);
}

/* The MLM head on the 20 masked positions of each sequence (modeling.py
 * L587-591): the decoder GEMM is 5,120 x 30,522 x 1,024 (320 GFLOP
 * forward), then the decoder's bias add (r2 w2) and CrossEntropyLoss on
 * the fp16 logits, log_softmax (r2 w2) and nll_loss: 8 B per logit in 3
 * kernels; backward the zero-filled gradient (w2), log_softmax's backward
 * (r4 w2) and the bias gradient's row sum (r2): 10 B in 4. Megatron's
 * fp32 loss moves 38 / 14. */
Test(stack_engines, dle_bert_mlm_head_on_the_masked_positions)
{
	struct model *m = load_model("models/zoo/dle/bert-large-phase1.json");
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
Test(stack_engines, dle_bert_ddp_gradient_path)
{
	struct model *m = load_model("models/zoo/dle/bert-large-phase1.json");
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
Test(stack_engines, dle_bert_lamb_step_bytes)
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
