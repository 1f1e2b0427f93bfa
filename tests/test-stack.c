/* test-stack: the kernels each training stack runs (models/stack.c), as
 * workload.c and cnn.c emit them, against the byte counts worked by hand
 * from each stack's source (the counts stack.c cites), and how the
 * roofline prices their kernels; the scenario checks of compute.stack and
 * compute.attention_backend with their exact messages. The compiled
 * torchtitan row's fused groups. */
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

/* Llama 2 7B (h 4096, 32 heads, no GQA), 4,096 tokens. HF's eager
 * RMSNorm: .to(fp32) r2 w4, pow r4 w4, mean r4, mul r4 w4, .to(bf16) r4
 * w2, weight mul r2 w2 = 36 B per element in 8 kernels (with the two
 * per-row ones); Transformer Engine's: read x, write y = 4 B in one. */
Test(stack, norms_as_each_stack_runs_them)
{
	struct model *m = load_model("models/zoo/llama2-7b.json");
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
	struct model *m = load_model("models/zoo/llama2-7b.json");
	double T = 4096;
	struct wl_shape hf = shape("hf-eager", T, 2), te = shape("megatron-te", T, 2);
	struct op a = find_op(m, &te, WL_ATTN, PASS_FWD, "rope");
	EXPECT_BYTES(a, 4 * T * (4096 + 4096) / 2);
	cr_expect_eq(a.kernels, 2);
	a = find_op(m, &hf, WL_ATTN, PASS_FWD, "rope");
	EXPECT_BYTES(a, 20 * T * (4096 + 4096) / 2);
	model_destroy(m);
	m = load_model("models/zoo/mpt-7b.json");
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
	struct model *m = load_model("models/zoo/llama2-7b.json");
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
	struct model *m = load_model("models/zoo/llama2-7b.json");
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

/* Grouped-query attention in an eager stack: repeat_kv writes K and V
 * once per query head. Llama 3 8B: 32 heads, 8 KV heads of 128, so per
 * token 2 x 1024 K/V elements read, 4 x that written. */
Test(stack, repeat_kv_in_eager_stacks_only)
{
	struct model *m = load_model("models/zoo/llama3-8b.json");
	double T = 1024, kv = 2 * 1024;
	struct wl_shape tt = shape("torchtitan", T, 1), te = shape("megatron-te", T, 1);
	struct op a = find_op(m, &tt, WL_ATTN, PASS_FWD, "repeat_kv");
	EXPECT_BYTES(a, T * kv * (1 + 4) * 2);
	cr_expect_eq(a.kernels, 2);
	cr_expect(!has_op(m, &te, WL_ATTN, PASS_FWD, "repeat_kv"));
	model_destroy(m);
}

/* Separate projections in the eager Llama stacks: Llama 3 8B (h 4096,
 * 8 KV heads of 128, ffn 14336), 1,024 tokens, TP 2. q, k, v are three
 * GEMMs of N = 2048, 512, 512 and gate, up two of 7168 where a fused
 * stack runs one of 3072 and one of 14336; backward, autograd sums the
 * normed input's gradients, 6 B per element of T x h (every token, the
 * full hidden: column-parallel partial sums): 2 sums for q, k, v = 12 T h
 * in 2 kernels, 1 for gate, up = 6 T h in 1; none forward, none in the
 * fused stack, none in dle-bert (its scripted model's sums are the
 * autodiff graph's). */
Test(stack, separate_projections_and_their_gradient_sums)
{
	struct model *m = load_model("models/zoo/llama3-8b.json");
	double T = 1024, h = 4096;
	static const char *const eager[] = { "torchtitan", "torchtitan-04133643", "hf-eager",
					     "deepspeed" };
	for (size_t i = 0; i < sizeof(eager) / sizeof(eager[0]); i++) {
		struct wl_shape w = shape(eager[i], T, 2);
		struct op a = find_op(m, &w, WL_ATTN, PASS_BWD, "qkv_grad_sum.bwd");
		EXPECT_BYTES(a, 12 * T * h);
		cr_expect_eq(a.kernels, 2, "%s", eager[i]);
		a = find_op(m, &w, WL_MLP, PASS_BWD, "mlp_grad_sum.bwd");
		EXPECT_BYTES(a, 6 * T * h);
		cr_expect_eq(a.kernels, 1, "%s", eager[i]);
		cr_expect_eq(find_op(m, &w, WL_ATTN, PASS_FWD, "qkv.q").n, 2048);
		cr_expect_eq(find_op(m, &w, WL_ATTN, PASS_FWD, "qkv.k").n, 512);
		cr_expect_eq(find_op(m, &w, WL_ATTN, PASS_FWD, "qkv.v").n, 512);
		cr_expect_eq(find_op(m, &w, WL_MLP, PASS_FWD, "mlp_gate").n, 7168);
		cr_expect_eq(find_op(m, &w, WL_MLP, PASS_BWD, "mlp_up.dgrad").k, 7168);
		cr_expect(!has_op(m, &w, WL_MLP, PASS_FWD, "mlp_gate_up"), "%s", eager[i]);
		cr_expect(!has_op(m, &w, WL_ATTN, PASS_FWD, "qkv_grad_sum"), "%s", eager[i]);
	}
	struct wl_shape te = shape("megatron-te", T, 2), lf = shape("llm-foundry", T, 2);
	cr_expect_eq(find_op(m, &te, WL_ATTN, PASS_FWD, "qkv").n, 3072);
	cr_expect_eq(find_op(m, &lf, WL_MLP, PASS_FWD, "mlp_gate_up").n, 14336);
	cr_expect(!has_op(m, &te, WL_ATTN, PASS_BWD, "qkv_grad_sum"));
	cr_expect(!has_op(m, &lf, WL_MLP, PASS_BWD, "mlp_grad_sum"));
	model_destroy(m);
	m = load_model("models/zoo/bert-large.json");
	struct wl_shape dle = shape("dle-bert", 512, 1);
	cr_expect(has_op(m, &dle, WL_ATTN, PASS_BWD, "qkv.q"));
	cr_expect(!has_op(m, &dle, WL_ATTN, PASS_BWD, "qkv_grad_sum"));
	model_destroy(m);
}

/* Megatron's fused causal softmax reads the lower triangle, 3 B per score
 * forward, up to the longest key sequence its kernel takes (4096 in
 * Megatron-Core 0.9, stack.c); beyond it torch's softmax, priced by the
 * generic count (2 touches of 2 B). Llama 2 7B, unfused, one sequence. */
Test(stack, causal_softmax_only_up_to_the_fused_kernel_s_length)
{
	struct model *m = load_model("models/zoo/llama2-7b.json");
	for (int k = 0; k < 2; k++) {
		double s = k ? 8192 : 4096, scores = 32 * s * s;
		struct wl_shape w = shape("megatron-te", s, 1);
		w.attention = ATTN_UNFUSED;
		EXPECT_BYTES(find_op(m, &w, WL_ATTN, PASS_FWD, "softmax"), (k ? 4 : 3) * scores);
	}
	model_destroy(m);
}

/* The eager Llama stacks follow Hugging Face's code: three q, k, v
 * Linear layers and their gradient sums for a gated-MLP model (Llama 2),
 * one fused QKV GEMM and no sum for an ungated one (BLOOM's
 * query_key_value); dle-bert's BERT projects by three whatever its MLP. */
Test(stack, separate_qkv_only_where_the_model_code_has_it)
{
	struct model *ll = load_model("models/zoo/llama2-7b.json");
	struct model *bl = load_model("models/zoo/bloom-176b.json");
	const struct stack *hf = stack_find("hf-eager"), *te = stack_find("megatron-te");
	const struct stack *bert = stack_find("dle-bert");
	cr_expect(stack_qkv_separate(hf, ll));
	cr_expect(!stack_qkv_separate(hf, bl));
	cr_expect(!stack_qkv_separate(te, ll));
	cr_expect(stack_qkv_separate(bert, bl), "dle-bert: three layers whatever the MLP");
	struct wl_shape s = shape("hf-eager", 2048, 1);
	cr_expect(has_op(ll, &s, WL_ATTN, PASS_FWD, "qkv.q"));
	cr_expect(has_op(ll, &s, WL_ATTN, PASS_BWD, "qkv_grad_sum"));
	cr_expect(has_op(bl, &s, WL_ATTN, PASS_FWD, "qkv"));
	cr_expect(!has_op(bl, &s, WL_ATTN, PASS_FWD, "qkv.q"));
	cr_expect(!has_op(bl, &s, WL_ATTN, PASS_BWD, "qkv_grad_sum"));
	model_destroy(ll);
	model_destroy(bl);
}

/* torchtitan at the performance table's commit (04133643) steps with
 * foreach AdamW and foreach clipping: 64 B per parameter beyond a fused
 * Adam in 10 kernels, where v0.1.0's fused AdamW adds the clipping's 12
 * in 4; everything else alike. */
Test(stack, torchtitan_of_the_table_steps_with_foreach_adamw)
{
	const struct stack *v01 = stack_find("torchtitan"), *t24 = stack_find("torchtitan-04133643");
	cr_assert(v01 && t24);
	cr_expect_eq(stack_optimizer_Bpp(t24, 3), 64);
	cr_expect_eq(stack_optimizer_kernels(t24, 3), 10);
	cr_expect_eq(stack_optimizer_Bpp(v01, 3), 12);
	cr_expect_eq(stack_optimizer_kernels(v01, 3), 4);
	cr_expect(t24->fsdp2_copies && t24->qkv_separate && t24->mlp_separate);
	cr_expect_eq(t24->rmsnorm.bytes[1], v01->rmsnorm.bytes[1]);
	cr_expect_eq(t24->loss.bytes[0], v01->loss.bytes[0]);
	/* its 64-A100 presets' fused_rmsnorm (norms.py L120-301): 4 / 6 B per
	 * element, x and rstd saved; everything else the table's commit's */
	const struct stack *fn = stack_find("torchtitan-04133643-fused-norm");
	cr_assert(fn);
	cr_expect_eq(fn->rmsnorm.bytes[0], 4);
	cr_expect_eq(fn->rmsnorm.bytes[1], 6);
	cr_expect_eq(fn->rmsnorm_extra_Bpe, 0);
	cr_expect(fn->eager_swiglu && fn->repeat_kv && fn->fsdp2_copies);
	cr_expect_eq(stack_optimizer_Bpp(fn, 3), stack_optimizer_Bpp(t24, 3));
	cr_expect_eq(fn->swiglu.bytes[0], t24->swiglu.bytes[0]);
}

/* torchtitan under torch.compile (stack_compile.h): Inductor's fused
 * groups, Llama 3 8B (h 4096, q 4096 + k 1024 per token, ffn 14336,
 * vocabulary 128,256), 1,024 tokens, TP 1. RMSNorm 4 / 10 B per element
 * in 1 / 2 kernels (eager: 36 / 90 in 8 / 10); RoPE 4 per element of q
 * and k; SwiGLU 6 / 10 per output element in one kernel each; a residual
 * add 5 forward (one of a block's two fused into the next norm), 2
 * backward inside the norm's kernel; the projections' gradient sums 2 B
 * a sum, no kernel; the compiled loss 4 / 4 per logit. The rest is the
 * eager torchtitan row's: separate projections, repeat_kv, FSDP2. */
Test(stack, torchtitan_compile_runs_inductor_s_fused_groups)
{
	struct model *m = load_model("models/zoo/llama3-8b.json");
	double T = 1024, h = 4096, f = 14336, V = 128256;
	struct wl_shape c = shape("torchtitan-compile", T, 1);
	struct op a = find_op(m, &c, WL_ATTN, PASS_FWD, "rmsnorm");
	EXPECT_BYTES(a, 4 * T * h);
	cr_expect_eq(a.kernels, 1);
	a = find_op(m, &c, WL_ATTN, PASS_BWD, "rmsnorm.bwd");
	EXPECT_BYTES(a, 10 * T * h);
	cr_expect_eq(a.kernels, 2);
	EXPECT_BYTES(find_op(m, &c, WL_ATTN, PASS_FWD, "rope"), 4 * T * (4096 + 1024));
	EXPECT_BYTES(find_op(m, &c, WL_ATTN, PASS_BWD, "rope.bwd"), 4 * T * (4096 + 1024));
	a = find_op(m, &c, WL_MLP, PASS_FWD, "swiglu");
	EXPECT_BYTES(a, 6 * T * f);
	cr_expect_eq(a.kernels, 1);
	EXPECT_BYTES(find_op(m, &c, WL_MLP, PASS_BWD, "swiglu.bwd"), 10 * T * f);
	EXPECT_BYTES(find_op(m, &c, WL_MLP, PASS_FWD, "residual"), 5 * T * h);
	a = find_op(m, &c, WL_MLP, PASS_BWD, "residual.bwd");
	EXPECT_BYTES(a, 2 * T * h);
	cr_expect_eq(a.kernels, 0);
	a = find_op(m, &c, WL_ATTN, PASS_BWD, "qkv_grad_sum.bwd");
	EXPECT_BYTES(a, 4 * T * h);
	cr_expect_eq(a.kernels, 0);
	EXPECT_BYTES(find_op(m, &c, WL_MLP, PASS_BWD, "mlp_grad_sum.bwd"), 2 * T * h);
	EXPECT_BYTES(find_op(m, &c, WL_HEAD, PASS_FWD, "cross_entropy"), 4 * T * V);
	EXPECT_BYTES(find_op(m, &c, WL_HEAD, PASS_BWD, "cross_entropy.bwd"), 4 * T * V);
	cr_expect(has_op(m, &c, WL_ATTN, PASS_FWD, "repeat_kv"));
	cr_expect_eq(find_op(m, &c, WL_ATTN, PASS_FWD, "qkv.k").n, 1024);
	const struct stack *k = stack_find("torchtitan-compile"), *e = stack_find("torchtitan");
	cr_assert(k && e);
	cr_expect_eq(k->rmsnorm_extra_Bpe, 0, "the fused norm saves no fp32 copy");
	cr_expect_gt(e->rmsnorm_extra_Bpe, 0);
	cr_expect(!k->eager_swiglu && e->eager_swiglu, "silu's output recomputed in the fused backward");
	cr_expect_eq(k->loss_peak_Bpl, 4);
	cr_expect_eq(k->loss_peak_tp_Bpl, e->loss_peak_tp_Bpl);
	cr_expect(k->fsdp2_copies && k->expandable_segments && k->cp_torch_ring);
	cr_expect_eq(stack_optimizer_Bpp(k, 3), stack_optimizer_Bpp(e, 3));
	model_destroy(m);
}

/* The shipped compiled scenario (Llama 3 8B, FSDP 8, no checkpointing,
 * one 8,192-token sequence a GPU) against the same plan on the eager
 * row: a layer holds 2 norms x 4 B x T h less (the eager norm's fp32 copy
 * and normalised tensor) and 2 B x T f less (silu's output, recomputed
 * inside the fused backward): 503,316,480 B; the loss 4 B per logit at
 * its backward where the eager fp32 path holds 12; it runs faster. */
Test(stack, torchtitan_compile_holds_no_eager_norm_copies_and_a_16_bit_loss)
{
	char *dir = tmp_dir(), args[2400], text[4096];
	double layer[2], logits[2], iter[2];
	for (int i = 0; i < 2; i++) {
		snprintf(text, sizeof(text), "{ \"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\", "
			 "\"model\": \"%s\", \"topology\": \"%s\", \"nodes\": 1, \"framework\": \"torchtitan\", "
			 "\"parallel\": { \"zero\": 3, \"recompute\": \"none\" }, \"training\": { \"seq_len\": 8192, "
			 "\"global_batch\": 8, \"micro_batch\": 1, \"precision\": \"bf16\" }, "
			 "\"compute\": { \"stack\": \"%s\" } }\n", src_path("models/zoo/llama3-8b.json"),
			 src_path("topologies/dgx-h100.json"), i ? "torchtitan" : "torchtitan-compile");
		char *p = write_file(dir, i ? "eager.json" : "compile.json", text);
		snprintf(args, sizeof(args), "run '%s' --out '%s/o%d' --quiet --format json", p, dir, i);
		cr_assert_eq(run_ddlsim(args, NULL, NULL), 0);
		free(p);
		snprintf(args, sizeof(args), "%s/o%d", dir, i);
		json_t *r = load_report(args);
		cr_assert(r);
		layer[i] = jnum(r, "memory/per_stage/0/activations_per_layer_microbatch_GB") * 1e9;
		logits[i] = jnum(r, "memory/per_stage/0/logits_GB");
		iter[i] = jnum(r, "summary/iteration_time_s");
		json_decref(r);
	}
	cr_expect_float_eq(layer[1] - layer[0], 8192.0 * (2 * 4 * 4096 + 2 * 14336), 1.0, "eager %.0f B, compiled %.0f B",
			   layer[1], layer[0]);
	cr_expect_float_eq(logits[1] / logits[0], 12.0 / 4, 1e-9);
	cr_expect_lt(iter[0], iter[1]);
	free(dir);
}

/* An eager piece pays one launch per kernel: HF's RMSNorm costs seven
 * launches more than its bytes alone with one. */
Test(stack, an_eager_piece_pays_a_launch_per_kernel)
{
	struct model *m = load_model("models/zoo/llama2-7b.json");
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
	struct model *m = load_model("models/zoo/mpt-7b.json");
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

/* The benchmark table's GEMMs ran on the cuBLAS of CUDA 11.8
 * (mosaicml/pytorch:2.0.1_cu118): gemm_lib cublas11, which the H100
 * preset prices from pytorch/pytorch issue #100850's cuBLAS 11.11.3.6
 * rows. Its B = 1 row, a 2048 x 8192 x 8192 GEMM at 720.3 TFLOP/s, must
 * come back within 0.1 %; a compute-bound GEMM's compute time grows by
 * gemm_max / cublas11 = 0.803 / 0.759 over the current library's. The
 * A100 preset measures no cublas11 (its gemm_max), nor is fp8 priced on
 * it, and llm-foundry's later stack runs the current library. */
Test(stack, gemms_of_2023_on_the_cublas_of_cuda_11_8)
{
	cr_expect_eq(stack_find("llm-foundry-triton")->gemm_lib, GEMM_LIB_CUBLAS11);
	cr_expect_eq(stack_find("llm-foundry")->gemm_lib, GEMM_LIB_CURRENT);
	struct model *m = load_model("models/zoo/mpt-7b.json");
	struct wl_shape w = shape("llm-foundry-triton", 2048, 1), v = shape("llm-foundry", 2048, 1);
	cr_expect_eq(find_op(m, &w, WL_ATTN, PASS_FWD, "qkv").lib, GEMM_LIB_CUBLAS11);
	cr_expect_eq(find_op(m, &w, WL_MLP, PASS_BWD, "mlp_up.wgrad").lib, GEMM_LIB_CUBLAS11);
	cr_expect_eq(find_op(m, &v, WL_ATTN, PASS_FWD, "qkv").lib, GEMM_LIB_CURRENT);
	model_destroy(m);

	struct topology *h = load_topology("topologies/dgx-h100.json"), *a = load_topology("topologies/dgx-a100.json");
	struct op g = { .kind = OP_GEMM, .pass = PASS_FWD, .dtype = DTYPE_BF16, .batch = 1,
			.m = 2048, .n = 8192, .k = 8192, .lib = GEMM_LIB_CUBLAS11 };
	g.flops = 2 * g.m * g.n * g.k;
	struct op c = g;
	c.lib = GEMM_LIB_CURRENT;
	double tf = g.flops / cost_roofline_time_isolated(&h->gpu, &g) / 1e12;
	cr_expect(fabs(tf / 720.3 - 1) < 1e-3, "%.1f TFLOP/s vs 720.3 measured", tf);
	double L = h->gpu.kernel_launch_s;
	cr_expect_float_eq((cost_roofline_time(&h->gpu, &g) - L) / (cost_roofline_time(&h->gpu, &c) - L),
			   0.803 / 0.759, 1e-9);
	cr_expect_float_eq(cost_roofline_time(&a->gpu, &g), cost_roofline_time(&a->gpu, &c), 1e-15);
	g.dtype = c.dtype = DTYPE_FP8;
	cr_expect_float_eq(cost_roofline_time(&h->gpu, &g), cost_roofline_time(&h->gpu, &c), 1e-15);
	topology_destroy(h);
	topology_destroy(a);
}

/* The benchmark table's MPT-7B under the code that ran it (stack.c,
 * llm-foundry-triton: add_attns, Composer 0.15, torch 2.0 FSDP1), one
 * sequence of T = 2048 tokens, h 4096, vocabulary V 50,368, 16-bit
 * gradients reduced in bf16 (grad_fp32 false). Backward: each Linear's
 * bias gradient reads its output gradient, 2 B per output element (qkv
 * 3h, attn_out h, mlp_up 4h, mlp_down h per token); the qkv split's
 * backward concatenates dq, dk, dv, r2 w2 per element of the 3h output
 * (12 B per element of T x h); FSDP1's SplitWithSizesBackward writes each
 * block's flat gradient, r2 w2 per weight (4 h^2 attention, 8 h^2 MLP, h V
 * the tied head, 2048 h the position table); tok_emb + pos_emb 6 B per
 * element of T x h forward, the position gradient's sum 2 backward;
 * Composer's two train metrics 2 x 14 B per logit in 4 kernels, forward
 * only; no fp32 cast of the main gradient. llm-foundry v0.10.0 runs none
 * of them; the released MPT (no biases, ALiBi) has no bias gradients and
 * no position add. */
Test(stack, fsdp1_and_mpt_benchmark_kernels)
{
	struct model *m = load_model("models/zoo/llm-foundry/mpt-7b.json");
	double T = 2048, h = 4096, V = 50368;
	struct wl_shape w = shape("llm-foundry-triton", T, 1), v = shape("llm-foundry", T, 1);
	w.grad_fp32 = false;
	static const struct { const char *name; enum wl_block blk; double out; } lin[] = {
		{ "qkv.bias_grad.bwd", WL_ATTN, 3 }, { "attn_out.bias_grad.bwd", WL_ATTN, 1 },
		{ "mlp_up.bias_grad.bwd", WL_MLP, 4 }, { "mlp_down.bias_grad.bwd", WL_MLP, 1 },
	};
	for (int i = 0; i < 4; i++) {
		struct op o = find_op(m, &w, lin[i].blk, PASS_BWD, lin[i].name);
		EXPECT_BYTES(o, 2 * T * lin[i].out * h);
		cr_expect_eq(o.kernels, 1);
	}
	cr_expect_not(has_op(m, &w, WL_ATTN, PASS_FWD, "qkv.bias_grad"));
	EXPECT_BYTES(find_op(m, &w, WL_ATTN, PASS_BWD, "qkv_split.bwd"), 12 * T * h);
	cr_expect_not(has_op(m, &w, WL_ATTN, PASS_FWD, "qkv_split"));
	EXPECT_BYTES(find_op(m, &w, WL_ATTN, PASS_BWD, "attn.flat_grad"), 4 * 4 * h * h);
	EXPECT_BYTES(find_op(m, &w, WL_MLP, PASS_BWD, "mlp.flat_grad"), 4 * 8 * h * h);
	EXPECT_BYTES(find_op(m, &w, WL_HEAD, PASS_BWD, "lm_head.flat_grad"), 4 * h * V);
	EXPECT_BYTES(find_op(m, &w, WL_EMBED, PASS_BWD, "pos_emb.flat_grad"), 4 * 2048 * h);
	EXPECT_BYTES(find_op(m, &w, WL_EMBED, PASS_FWD, "pos_add"), 6 * T * h);
	EXPECT_BYTES(find_op(m, &w, WL_EMBED, PASS_BWD, "pos_add.bwd"), 2 * T * h);
	struct op tm = find_op(m, &w, WL_HEAD, PASS_FWD, "train_metrics");
	EXPECT_BYTES(tm, 28 * T * V);
	cr_expect_eq(tm.kernels, 4);
	cr_expect_not(has_op(m, &w, WL_HEAD, PASS_BWD, "train_metrics"));
	cr_expect_not(has_op(m, &w, WL_MLP, PASS_BWD, "mlp.main_grad"));
	static const char *none[] = { "qkv.bias_grad", "qkv_split", "attn.flat_grad" };
	for (int i = 0; i < 3; i++)
		cr_expect_not(has_op(m, &v, WL_ATTN, PASS_BWD, none[i]), "llm-foundry: %s", none[i]);
	cr_expect_not(has_op(m, &v, WL_HEAD, PASS_FWD, "train_metrics"));
	model_destroy(m);
	m = load_model("models/zoo/mpt-7b.json");
	cr_expect_not(has_op(m, &w, WL_ATTN, PASS_BWD, "qkv.bias_grad"));
	cr_expect_not(has_op(m, &w, WL_EMBED, PASS_FWD, "pos_add"));
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
	struct model *m = load_model("models/zoo/resnet50.json");
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

/* resnet-v1b-stats-fl (the MLPerf v1.1-v2.1 A100 PCIe runs, stack
 * mxnet-stats): bn1 and bn2 of a bottleneck are each applied by their own
 * ScaleBiasAddRelu with the ReLU, 4.125 B per element forward (x read, y
 * and a bit mask written) and 10.125 backward; the block's last BN, a
 * projection's BN and the add are priced as under mxnet-normconv. */
Test(stack, cnn_stats_fl_applies_each_inner_batch_norm_in_its_own_pass)
{
	struct model *m = load_model("models/zoo/resnet50.json");
	struct cnn_net net;
	int n;
	cr_assert_eq(cnn_build(m, &net), 0);
	double o1 = out_el(&net, "layer1.0.bn1"), o2 = out_el(&net, "layer2.0.bn2");
	cr_expect_float_eq(layer_bytes(&net, "layer1.0.bn1", PASS_FWD, CNN_FUSE_CONV_STATS, &n),
			   4.125 * o1, 1e-6 * o1);
	cr_expect_eq(n, 1);
	cr_expect_float_eq(layer_bytes(&net, "layer2.0.bn2", PASS_FWD, CNN_FUSE_CONV_STATS, &n),
			   4.125 * o2, 1e-6 * o2);
	cr_expect_float_eq(layer_bytes(&net, "layer1.0.bn1", PASS_BWD, CNN_FUSE_CONV_STATS, &n),
			   10.125 * o1, 1e-6 * o1);
	cr_expect_eq(layer_bytes(&net, "layer1.0.relu1", PASS_FWD, CNN_FUSE_CONV_STATS, &n), 0);
	const char *same[] = { "layer1.0.bn3", "layer1.0.downsample.1", "layer1.0.add", "bn1" };
	for (int i = 0; i < 4; i++)
		for (int ps = PASS_FWD; ps <= PASS_BWD; ps += PASS_BWD - PASS_FWD) {
			int n2;
			double a = layer_bytes(&net, same[i], ps, CNN_FUSE_CONV_STATS, &n),
			       b = layer_bytes(&net, same[i], ps, CNN_FUSE_CONV_BN, &n2);
			cr_expect_float_eq(a, b, 1e-9 * (b + 1), "%s pass %d: %g against %g", same[i], ps, a, b);
		}
	cnn_net_finish(&net);
	model_destroy(m);
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
		       "torchtitan-04133643, torchtitan-04133643-fused-norm, torchtitan-compile, llm-foundry, llm-foundry-triton, deepspeed, dle-bert, "
		       "mxnet-normconv, mxnet-nhwc-bn, mxnet-stats, megatron-deepspeed, megatron-lm-2021, megatron-lm-2021-torch-ddp, "
		       "deepspeed-zero3-2021}, "
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
	/* LoRA on a fused qkv_proj, which the eager Llama stacks do not have */
	static const char *const sep[] = { "hf-eager", "torchtitan", "deepspeed" };
	for (int i = 0; i < 3; i++) {
		char c[64], w[256];
		snprintf(c, sizeof(c), "{ \"stack\": \"%s\" }", sep[i]);
		snprintf(w, sizeof(w), "/training/finetune/targets: error: no fused 'qkv_proj' in stack "
			 "'%s', which projects q, k and v by three layers: give q_proj, k_proj and v_proj",
			 sep[i]);
		expect_invalid("topologies/dgx-h100.json", "models/zoo/llama2-7b.json", c,
			       ", \"finetune\": { \"method\": \"lora\", \"rank\": 16, "
			       "\"targets\": [\"qkv_proj\", \"o_proj\"] }", w);
	}
}
