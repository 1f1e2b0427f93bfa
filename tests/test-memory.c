/* test-memory: the ZeRO paper's example and Korthikanti et al.'s
 * activation formulas. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "assess.h"
#include "inputs.h"
#include "memory.h"
#include "plan.h"
#include "testutil.h"

/* A model whose block holds exactly psi parameters: tune nothing, just
 * scale "layers" so that layers x block params = psi. */
static struct model gpt(void)
{
	struct model m;
	memset(&m, 0, sizeof(m));
	m.layers = 1;
	m.hidden = 4096;
	m.heads = 32;
	m.kv_heads = 32;
	m.ffn = 4 * 4096;
	m.vocab = 51200;
	m.act = MODEL_ACT_GELU;
	m.norm = MODEL_NORM_LAYERNORM;
	m.tied_embeddings = true;
	m.dropout = true;   /* Korthikanti's GPT: dropout after attention and MLP */
	return m;
}

static void zero_case(enum zero_stage z, double want_GB)
{
	struct model m = gpt();
	struct gpu_spec g = { .hbm_bytes = 80e9 };
	double psi = 7.5e9;
	struct mem_rank_input in = { .model = &m, .gpu = &g, .dtype = DTYPE_FP16,
				     .micro_batch = 1, .seq = 1, .tp = 1, .dp = 64, .zero = z,
				     .layers = psi / model_layer_params(&m) };
	struct mem_anatomy o;
	memory_rank(&in, &o);
	double states = (o.weights_bytes + o.grads_bytes + o.optimizer_bytes) / 1e9;
	cr_log_info("ZeRO-%d: %.2f GB (paper %.1f)", (int)z, states, want_GB);
	cr_assert_lt(fabs(states - want_GB), 0.05 + 1e-9, "ZeRO-%d: %.3f GB vs %.1f", (int)z, states, want_GB);
}

/* Rajbhandari et al. 2020, Figure 1: Psi = 7.5B, K = 12, N_d = 64. */
Test(memory, zero_paper_baseline_120GB) { zero_case(ZERO_0, 120); }
Test(memory, zero_paper_stage1_31_4GB) { zero_case(ZERO_1, 31.4); }
Test(memory, zero_paper_stage2_16_6GB) { zero_case(ZERO_2, 16.6); }
Test(memory, zero_paper_stage3_1_9GB) { zero_case(ZERO_3, 1.9); }

/* Hybrid sharding (memory.h): the paper's Psi = 7.5B on N_d = 64 ranks,
 * sharded over a shard group of g = 8 of them: ZeRO-1 holds 2 Psi + 2 Psi
 * + 12 Psi / 8, ZeRO-2 2 Psi + 14 Psi / 8, ZeRO-3 16 Psi / 8, each in
 * bytes (fp16 weights and gradients, K = 12); g = 64 is plain ZeRO. */
Test(memory, shard_group_divides_each_stage_sharded_states)
{
	struct model m = gpt();
	struct gpu_spec g = { .hbm_bytes = 80e9 };
	double psi = 7.5e9, want[] = { 0, 4 * psi + 12 * psi / 8, 2 * psi + 14 * psi / 8, 16 * psi / 8 };
	for (int z = ZERO_1; z <= ZERO_3; z++) {
		struct mem_rank_input in = { .model = &m, .gpu = &g, .dtype = DTYPE_FP16,
					     .micro_batch = 1, .seq = 1, .tp = 1, .dp = 64, .shard = 8,
					     .zero = (enum zero_stage)z, .layers = psi / model_layer_params(&m) };
		struct mem_anatomy o, full;
		memory_rank(&in, &o);
		double states = o.weights_bytes + o.grads_bytes + o.optimizer_bytes;
		cr_expect_lt(fabs(states / want[z] - 1), 1e-12, "ZeRO-%d: %.17g vs %.17g", z, states, want[z]);
		/* a second communicator: the shard and the replicate group */
		in.shard = 64;
		memory_rank(&in, &full);
		cr_expect_gt(o.nccl_bytes, full.nccl_bytes, "ZeRO-%d: the replicate group's buffers", z);
		in.shard = 0;
		struct mem_anatomy dflt;
		memory_rank(&in, &dflt);
		cr_expect_eq(full.weights_bytes + full.grads_bytes + full.optimizer_bytes,
			     dflt.weights_bytes + dflt.grads_bytes + dflt.optimizer_bytes);
	}
}

static double act(int t, bool sp, enum recompute rc)
{
	struct model m = gpt();
	m.hidden = 12288;
	m.heads = 96;
	m.kv_heads = 96;
	m.ffn = 4 * 12288;
	struct gpu_spec g = { 0 };
	struct mem_rank_input in = { .model = &m, .gpu = &g, .dtype = DTYPE_BF16,
				     .micro_batch = 1, .seq = 2048, .tp = t, .sp = sp,
				     .recompute = rc };
	return memory_layer_activations(&in);
}

/* Korthikanti et al. 2022, Table 2 (bytes per layer). */
Test(memory, activations_follow_korthikanti_formulas)
{
	double s = 2048, b = 1, h = 12288, a = 96, sbh = s * b * h;
	cr_assert_float_eq(act(1, false, RECOMPUTE_NONE), sbh * (34 + 5 * a * s / h), 1);
	cr_assert_float_eq(act(8, false, RECOMPUTE_NONE), sbh * (10 + 24.0 / 8 + 5 * a * s / (h * 8)), 1);
	cr_assert_float_eq(act(8, true, RECOMPUTE_NONE), sbh / 8 * (34 + 5 * a * s / h), 1);
	cr_assert_float_eq(act(8, false, RECOMPUTE_SELECTIVE), sbh * (10 + 24.0 / 8), 1);
	cr_assert_float_eq(act(8, true, RECOMPUTE_SELECTIVE), sbh / 8 * 34, 1);
	cr_assert_float_eq(act(8, false, RECOMPUTE_FULL), 2 * sbh, 1);
	cr_assert_float_eq(act(8, true, RECOMPUTE_FULL), 2 * sbh / 8, 1);
}

Test(memory, activations_scale_with_inflight_microbatches)
{
	struct model m = gpt();
	struct gpu_spec g = { .hbm_bytes = 80e9 };
	struct mem_rank_input in = { .model = &m, .gpu = &g, .dtype = DTYPE_BF16,
				     .micro_batch = 2, .seq = 2048, .tp = 1, .dp = 1,
				     .layers = 10, .inflight = 4 };
	struct mem_anatomy o;
	memory_rank(&in, &o);
	cr_assert_float_eq(o.activations_bytes, 40 * memory_layer_activations(&in), 1);
}

/* Flash attention stores no s x s tensors: Korthikanti's 34 sbh / t (SP)
 * plus the fp32 log-sum-exp, 4 a s b / t bytes, whatever the recompute
 * mode short of full. */
Test(memory, flash_attention_drops_the_score_term)
{
	struct model m = gpt();
	struct gpu_spec g = { 0 };
	double s = 4096, b = 2, h = 4096, a = 32, t = 8;
	struct mem_rank_input in = { .model = &m, .gpu = &g, .dtype = DTYPE_BF16,
				     .attention = ATTN_FLASH, .micro_batch = b, .seq = s,
				     .tp = (int)t, .sp = true, .recompute = RECOMPUTE_NONE };
	double want = s * b * h / t * 34 + 4 * a * s * b / t;
	cr_assert_float_eq(memory_layer_activations(&in), want, 1e-6 * want);
	in.recompute = RECOMPUTE_SELECTIVE;
	cr_assert_float_eq(memory_layer_activations(&in), want, 1e-6 * want);
	in.attention = ATTN_UNFUSED;
	in.recompute = RECOMPUTE_NONE;
	double unfused = s * b * h / t * (34 + 5 * a * s / h);
	cr_assert_float_eq(memory_layer_activations(&in), unfused, 1e-6 * unfused);
}

/* Megatron's default recompute_modules, ["core_attn"], is the plain
 * selective recompute, byte for byte (unfused GPT, TP 8, Korthikanti's
 * 10 + 24 / t); layernorm on top frees the two norm outputs the QKV and
 * fc1 GEMMs saved, 2 sbh + 2 sbh, replicated over TP without SP. */
Test(memory, core_attn_module_is_plain_selective)
{
	struct model m = gpt();
	m.hidden = 12288;
	m.heads = 96;
	m.kv_heads = 96;
	m.ffn = 4 * 12288;
	struct gpu_spec g = { 0 };
	struct mem_rank_input in = { .model = &m, .gpu = &g, .dtype = DTYPE_BF16,
				     .micro_batch = 1, .seq = 2048, .tp = 8,
				     .recompute = RECOMPUTE_SELECTIVE };
	double sel = memory_layer_activations(&in), sbh = 2048.0 * 12288;
	in.recompute_modules = RC_MOD_CORE_ATTN;
	cr_assert_eq(memory_layer_activations(&in), sel);
	cr_assert_float_eq(sel, sbh * (10 + 24.0 / 8), 1);
	in.recompute_modules = RC_MOD_CORE_ATTN | RC_MOD_LAYERNORM;
	cr_assert_float_eq(memory_layer_activations(&in), sbh * (6 + 24.0 / 8), 1);
	/* layernorm alone keeps the unfused core's s x s terms (5as/(ht)) */
	in.recompute_modules = RC_MOD_LAYERNORM;
	cr_assert_float_eq(memory_layer_activations(&in), sbh * (6 + 24.0 / 8 + 5 * 96 * 2048 / (12288.0 * 8)), 1);
}

/* The terms come from the model's own dimensions: without dropout the
 * two 1-byte masks, the dropout output and its mask go (GPT:
 * 32 sbh + 2as^2b); Llama 3 70B (SwiGLU, f = 3.5h, 8 KV heads of 64,
 * no dropout) with flash, TP 8 + SP: norm inputs and GEMM inputs
 * 8h, Q K V 2h (1 + 2/8), the kernel's output 2h, the log-sum-exp 4a,
 * fc1 output 2 x 2f, SwiGLU output 2f, per token / t. */
Test(memory, activations_follow_the_model_dimensions)
{
	struct model m = gpt();
	m.dropout = false;
	m.hidden = 12288;
	m.heads = 96;
	m.kv_heads = 96;
	m.ffn = 4 * 12288;
	struct gpu_spec g = { 0 };
	double s = 2048, h = 12288, a = 96, sbh = s * h;
	struct mem_rank_input in = { .model = &m, .gpu = &g, .dtype = DTYPE_BF16,
				     .micro_batch = 1, .seq = s, .tp = 1 };
	double want = sbh * (32 + 2 * a * s / h);
	cr_assert_float_eq(memory_layer_activations(&in), want, 1e-9 * want);

	m.hidden = 8192;
	m.heads = 64;
	m.kv_heads = 8;
	m.ffn = 28672;
	m.act = MODEL_ACT_SWIGLU;
	h = 8192;
	a = 64;
	double f = 28672, t = 8;
	in.attention = ATTN_FLASH;
	in.tp = (int)t;
	in.sp = true;
	in.seq = 8192;
	want = 8192 * (8 * h + 2 * h * (1 + 2.0 / 8) + 2 * h + 4 * a + 2 * 2 * f + 2 * f) / t;
	cr_assert_float_eq(memory_layer_activations(&in), want, 1e-9 * want);
}

/* Transformer Engine saves the fp8 copies of the GEMM inputs it cast
 * (QKV, fc1 and fc2 inputs: 1 byte instead of 2) and the projection's
 * fp8 input beside the attention kernel's bf16 output: a GPT layer with
 * flash, TP + SP, stores 29 sbh / t instead of 34 (plus the fp32
 * log-sum-exp, 4 a s b / t). */
Test(memory, fp8_saves_gemm_inputs_in_one_byte)
{
	struct model m = gpt();
	m.hidden = 12288;
	m.heads = 96;
	m.kv_heads = 96;
	m.ffn = 4 * 12288;
	struct gpu_spec g = { 0 };
	double s = 2048, b = 1, h = 12288, a = 96, t = 4;
	struct mem_rank_input in = { .model = &m, .gpu = &g, .dtype = DTYPE_FP8,
				     .attention = ATTN_FLASH, .micro_batch = b, .seq = s,
				     .tp = (int)t, .sp = true };
	double want = s * b * h / t * 29 + 4 * a * s * b / t;
	cr_assert_float_eq(memory_layer_activations(&in), want, 1e-9 * want);
	in.dtype = DTYPE_BF16;
	want = s * b * h / t * 34 + 4 * a * s * b / t;
	cr_assert_float_eq(memory_layer_activations(&in), want, 1e-9 * want);
}

/* Transformer Engine fp8: bf16 weights and gradients as before, K = 12
 * (fp32 master, momentum, variance), plus an fp8 weight and an fp8
 * transpose of every transformer-layer parameter: 2 bytes each. */
Test(memory, fp8_anatomy_adds_te_weight_copies)
{
	struct model m = gpt();
	struct gpu_spec g = { .hbm_bytes = 80e9 };
	double L = 4, P = model_layer_params(&m);
	struct mem_rank_input in = { .model = &m, .gpu = &g, .dtype = DTYPE_FP8,
				     .grad_elem_bytes = 4, .micro_batch = 1, .seq = 1, .tp = 2,
				     .dp = 1, .layers = L };
	struct mem_anatomy o;
	memory_rank(&in, &o);
	double psi = L * P / 2;
	cr_assert_float_eq(o.weights_bytes, 2 * psi, 1);
	cr_assert_float_eq(o.grads_bytes, 4 * psi, 1);
	cr_assert_float_eq(o.optimizer_bytes, 12 * psi, 1);
	cr_assert_float_eq(o.fp8_weight_bytes, 2 * psi, 1);
	in.dtype = DTYPE_BF16;
	memory_rank(&in, &o);
	cr_assert_eq(o.fp8_weight_bytes, 0);
	in.dtype = DTYPE_TF32;  /* fp32 weights, their own master: K = 8 */
	memory_rank(&in, &o);
	cr_assert_float_eq(o.weights_bytes, 4 * psi, 1);
	cr_assert_float_eq(o.optimizer_bytes, 8 * psi, 1);
}

/* With fp8 parameters (TE fp8_model_params) the layer weights are only
 * their fp8 copy and transpose (1 + 1 bytes): the 16-bit weights of the
 * layers go, the embedding's stay; ZeRO-3 shards what is left. */
Test(memory, fp8_params_drop_the_16bit_layer_weights)
{
	struct model m = gpt();
	struct gpu_spec g = { .hbm_bytes = 80e9 };
	double L = 4, P = model_layer_params(&m), E = model_embedding_params(&m);
	struct mem_rank_input in = { .model = &m, .gpu = &g, .dtype = DTYPE_FP8,
				     .grad_elem_bytes = 2, .micro_batch = 1, .seq = 1, .tp = 2,
				     .dp = 8, .layers = L, .has_embedding = true, .fp8_params = true };
	struct mem_anatomy o;
	memory_rank(&in, &o);
	cr_assert_float_eq(o.weights_bytes, 2 * E / 2, 1);
	cr_assert_float_eq(o.fp8_weight_bytes, 2 * L * P / 2, 1);
	cr_assert_float_eq(o.grads_bytes, 2 * (L * P + E) / 2, 1);
	in.zero = ZERO_3;
	memory_rank(&in, &o);
	cr_assert_float_eq(o.weights_bytes, 2 * E / 2 / 8, 1);
	cr_assert_float_eq(o.fp8_weight_bytes, 2 * L * P / 2 / 8, 1);
	in.dtype = DTYPE_BF16;  /* fp8_params means nothing without fp8 */
	in.zero = ZERO_0;
	memory_rank(&in, &o);
	cr_assert_float_eq(o.weights_bytes, 2 * (L * P + E) / 2, 1);
}

/* Capacity is what the device reports; the CUDA context, NCCL's buffers
 * (16 channels x 2 connections x (512 KiB + 4,915,200 B + 4 MiB) per
 * communicator) and the allocator reserve come off it. */
Test(memory, hbm_capacity_accounting)
{
	struct model m = gpt();
	struct gpu_spec g = { .hbm_bytes = 85520809984.0, .mem_reserved_bytes = 1e9 };
	struct mem_rank_input in = { .model = &m, .gpu = &g, .dtype = DTYPE_BF16,
				     .micro_batch = 1, .seq = 1, .tp = 8, .dp = 4, .pp = 2,
				     .layers = 0, .has_embedding = true, .reserve_fraction = 0.05 };
	struct mem_anatomy o;
	memory_rank(&in, &o);
	double conn = 524288.0 + 4915200.0 + 4194304.0;
	cr_assert_eq(conn, 9633792.0);
	/* TP, DP, PP and the tied-embedding group: 4 communicators */
	cr_assert_float_eq(o.nccl_bytes, 4 * 16 * 2 * conn, 1);
	cr_assert_float_eq(o.fragmentation_bytes, 0.05 * 85520809984.0, 1);
	cr_assert_float_eq(o.reserved_bytes, 1e9 + 4 * 16 * 2 * conn + 0.05 * 85520809984.0, 1);
	cr_assert_eq(o.capacity_bytes, 85520809984.0);
}

/* ---- Fidelity IV: the mechanisms read in the frameworks' code ---------- */

/* Llama 3 8B's dimensions (h 4096, 32 heads, 8 KV heads of 128, SwiGLU
 * f 14336, RMSNorm, no dropout, vocab 128256, untied). */
static struct model llama8b(void)
{
	struct model m;
	memset(&m, 0, sizeof(m));
	m.layers = 32;
	m.hidden = 4096;
	m.heads = 32;
	m.kv_heads = 8;
	m.ffn = 14336;
	m.vocab = 128256;
	m.act = MODEL_ACT_SWIGLU;
	m.norm = MODEL_NORM_RMSNORM;
	m.pos = MODEL_POS_ROPE;
	return m;
}

/* torchtitan's per-op policy keeps, per token of a Llama layer, the
 * input and the outputs of wq, wv, w1, w2 and the flash kernel (2 B
 * each) and the log-sum-exp: 8 h + 2 h_kv + 2 f + 4 a bytes
 * (parallelize_llama.py's save list, every odd mm), whatever else the
 * eager ops would save (the policy binds them). */
Test(memory, selective_op_keeps_the_odd_gemms_outputs)
{
	struct model m = llama8b();
	struct gpu_spec g = { 0 };
	double T = 2 * 8192, h = 4096, kv = 1024, f = 14336, a = 32;
	struct mem_rank_input in = { .model = &m, .gpu = &g, .dtype = DTYPE_BF16, .attention = ATTN_FLASH,
				     .micro_batch = 2, .seq = 8192, .tp = 1, .recompute = RECOMPUTE_SELECTIVE_OP,
				     .rmsnorm_extra_Bpe = 4, .repeat_kv = true, .eager_swiglu = true };
	double want = T * (8 * h + 2 * kv + 2 * f + 4 * a);
	cr_assert_float_eq(memory_layer_activations(&in), want, 1e-9 * want);
}

/* An eager stack's layer without recompute: Korthikanti's flash set for
 * a Llama layer (norm and GEMM inputs 8 h, Q K V 2 h (1 + 2 kv/h), the
 * output 2 h, 4 a, fc1 outputs 2 x 2 f, SwiGLU's 2 f) plus 4 h for each
 * of the two eager RMSNorms (the fp32 copy and the normalised tensor),
 * K, V expanded by repeat_kv (2 x 2 (h - kv)) and, where SwiGLU is
 * silu(w1 x) * w3 x, silu's output, which the product saves (2 f). */
Test(memory, eager_norms_swiglu_and_repeat_kv_save_more)
{
	struct model m = llama8b();
	struct gpu_spec g = { 0 };
	double h = 4096, kv = 1024, f = 14336, a = 32, T = 4096;
	struct mem_rank_input in = { .model = &m, .gpu = &g, .dtype = DTYPE_BF16, .attention = ATTN_FLASH,
				     .micro_batch = 1, .seq = 4096, .tp = 1 };
	double fused = T * (8 * h + 2 * (h + 2 * kv) + 2 * h + 4 * a + 6 * f);
	cr_assert_float_eq(memory_layer_activations(&in), fused, 1e-9 * fused);
	in.rmsnorm_extra_Bpe = 4;
	in.repeat_kv = true;
	double eager = fused + T * (2 * 4 * h + 4 * (h - kv));
	cr_assert_float_eq(memory_layer_activations(&in), eager, 1e-9 * eager);
	in.eager_swiglu = true;
	eager += T * 2 * f;
	cr_assert_float_eq(memory_layer_activations(&in), eager, 1e-9 * eager);
}

/* The loss's bytes per logit are the stack's (6 Megatron's vocab-parallel
 * cross entropy, 12 torch's on fp32 logits, 8 where unread), over TP; the
 * loss's phase and the recomputed layer's are one after the other, the
 * total holds the larger. */
Test(memory, loss_bytes_per_logit_and_the_peak_phase)
{
	struct model m = llama8b();
	struct gpu_spec g = { .hbm_bytes = 80e9 };
	struct mem_rank_input in = { .model = &m, .gpu = &g, .dtype = DTYPE_BF16, .attention = ATTN_FLASH,
				     .micro_batch = 1, .seq = 4096, .tp = 2, .dp = 1, .layers = 1,
				     .inflight = 1, .has_head = true, .recompute = RECOMPUTE_FULL };
	struct mem_anatomy o;
	double logits = 4096.0 * 128256 / 2;
	for (int k = 0; k < 3; k++) {
		double bpl[] = { 0, 6, 12 }, want[] = { 8, 6, 12 };
		in.loss_Bpl = bpl[k];
		memory_rank(&in, &o);
		cr_assert_float_eq(o.logits_bytes, want[k] * logits, 1, "loss_Bpl %g", bpl[k]);
	}
	/* full recompute: the layer's set without recompute less its input */
	struct mem_rank_input none = in;
	none.recompute = RECOMPUTE_NONE;
	double r = memory_layer_activations(&none) - memory_layer_activations(&in);
	cr_assert_float_eq(o.recompute_bytes, r, 1e-6 * r);
	cr_assert(o.peak_at_loss, "12 B x 1.05e9 logits / 2 dwarfs one layer's recompute");
	double rest = o.weights_bytes + o.grads_bytes + o.optimizer_bytes + o.activations_bytes +
		      o.comm_buffer_bytes + o.reserved_bytes;
	cr_assert_float_eq(o.total_bytes, rest + o.logits_bytes, 1);
	in.has_head = false;   /* no loss here: the recomputed layer is the peak */
	memory_rank(&in, &o);
	cr_assert(!o.peak_at_loss);
	rest = o.weights_bytes + o.grads_bytes + o.optimizer_bytes + o.activations_bytes + o.comm_buffer_bytes +
	       o.reserved_bytes;
	cr_assert_float_eq(o.total_bytes, rest + o.recompute_bytes, 1);
	/* what PyTorch reports: less the context, NCCL and the reserve */
	cr_assert_float_eq(o.allocator_bytes, o.total_bytes - o.reserved_bytes, 1);
}

/* FSDP2 at ZeRO-3: the fp32 shards are the master (no 16-bit shard),
 * the root's embedding and head stay whole in 16 bits, the sharded
 * gradients are gone (zero_grad's set_to_none, before the forward); at
 * the loss the last layer, the prefetched one and the deferred
 * all-gather (3 x 2 P_b); at ZeRO-2 under a pipeline of several
 * micro-batches the layers' 16-bit weights stay whole and the gradients
 * accumulate unsharded in the reduce dtype (4 B per parameter). */
Test(memory, fsdp2_master_root_buffers_and_pipeline_accumulation)
{
	struct model m = llama8b();
	struct gpu_spec g = { .hbm_bytes = 100e9 };
	double L = 32, Pb = model_layer_params(&m), E = model_embedding_params(&m), H = model_head_params(&m);
	struct mem_rank_input in = { .model = &m, .gpu = &g, .dtype = DTYPE_BF16, .attention = ATTN_FLASH,
				     .grad_elem_bytes = 4, .micro_batch = 1, .seq = 4096, .tp = 1, .dp = 8,
				     .zero = ZERO_3, .layers = L, .inflight = 1, .has_embedding = true,
				     .has_head = true, .fsdp2 = true, .loss_Bpl = 12, .microbatches = 1 };
	struct mem_anatomy o;
	memory_rank(&in, &o);
	double P = L * Pb + E + H;
	cr_assert_float_eq(o.weights_bytes, 2 * (E + H), 1);
	cr_assert_float_eq(o.grads_bytes, 0, 1);
	cr_assert_float_eq(o.optimizer_bytes, 12 * P / 8, 1);
	cr_assert(o.peak_at_loss, "6.3 GB of loss against 16 P_b = 3.5 GB of backward buffers");
	cr_assert_float_eq(o.comm_buffer_bytes, 3 * 2 * Pb, 1);
	/* the same at ZeRO-2 under PP 2 with 4 micro-batches: the stage holds
	 * all layers here (layers as given) */
	in.zero = ZERO_2;
	in.pp = 2;
	in.microbatches = 4;
	memory_rank(&in, &o);
	cr_assert_float_eq(o.weights_bytes, 2 * (E + H) + 2 * L * Pb, 1);
	cr_assert_float_eq(o.grads_bytes, 4 * P, 1);
	cr_assert_float_eq(o.comm_buffer_bytes, 0, 1, "ZeRO-2 gathers nothing at the loss");
}

/* torchao Float8 under FSDP2 at ZeRO-2 (a pipeline keeps the layers
 * whole): with the fp8 all-gather (training.fp8_params) a layer weight
 * stays whole as its fp8 all-gather output, 1 B per parameter; without
 * it (torchtitan at dp_shard 1, float8.py) as the bf16 one, 2 B; the
 * root stays 16-bit either way. */
Test(memory, fsdp2_float8_all_gather_keeps_the_layers_in_one_byte)
{
	struct model m = llama8b();
	struct gpu_spec g = { .hbm_bytes = 100e9 };
	double L = 32, Pb = model_layer_params(&m), E = model_embedding_params(&m), H = model_head_params(&m);
	struct mem_rank_input in = { .model = &m, .gpu = &g, .dtype = DTYPE_FP8, .attention = ATTN_FLASH,
				     .grad_elem_bytes = 4, .micro_batch = 1, .seq = 4096, .tp = 1, .dp = 8,
				     .pp = 2, .zero = ZERO_2, .layers = L, .inflight = 1, .has_embedding = true,
				     .has_head = true, .fsdp2 = true, .torchao_fp8 = true, .fp8_params = true,
				     .loss_Bpl = 12, .microbatches = 4 };
	struct mem_anatomy o;
	memory_rank(&in, &o);
	cr_assert_float_eq(o.weights_bytes, 2 * (E + H) + 1 * L * Pb, 1);
	cr_assert_float_eq(o.fp8_weight_bytes, 0, 1, "torchao caches no fp8 copies");
	in.fp8_params = false;
	memory_rank(&in, &o);
	cr_assert_float_eq(o.weights_bytes, 2 * (E + H) + 2 * L * Pb, 1);
}

/* Context parallelism: the recomputed layer holds ring attention's
 * gathered K and V of the other ranks ((cp - 1) 2 T, T = b s h / t A a
 * local head-tensor after repeat_kv), and under torch's context_parallel
 * (stack cp_torch_ring) 18 T more: the gather's own chunk, the
 * contiguous K and V, the fp32 gradient accumulators of q, k and v, the
 * fp32 K/V gradients rotated (memory.h); nothing on a rank without CP. */
Test(memory, context_parallel_ring_buffers)
{
	struct model m = llama8b();
	struct gpu_spec g = { .hbm_bytes = 80e9 };
	struct mem_rank_input in = { .model = &m, .gpu = &g, .dtype = DTYPE_BF16, .attention = ATTN_FLASH,
				     .micro_batch = 1, .seq = 8192, .tp = 2, .dp = 1, .layers = 1,
				     .inflight = 1, .recompute = RECOMPUTE_FULL, .repeat_kv = true };
	struct mem_anatomy o;
	memory_rank(&in, &o);
	double base = o.recompute_bytes, T = 8192.0 * 4096 / 2 * 2;
	in.cp = 4;
	memory_rank(&in, &o);
	cr_assert_float_eq(o.recompute_bytes - base, 3 * 2 * T, 1e-9 * T, "TE's ring: the gathered K and V");
	in.cp_torch_ring = true;
	memory_rank(&in, &o);
	cr_assert_float_eq(o.recompute_bytes - base, (3 * 2 + 18) * T, 1e-9 * T, "torch's ring: 18 T more");
	in.cp = 1;
	memory_rank(&in, &o);
	cr_assert_float_eq(o.recompute_bytes, base, 1e-9 * base, "no CP: no ring");
}

/* bf16, flash, tp 1, one token: a head_dim of 256 on h 4096 (32 heads,
 * 8 KV heads) widens Q from 4096 to 8192 and K, V from 1024 to 2048;
 * the layer saves Q, K, V and the kernel's output, 2 bytes each: 2 x
 * (4096 + 2 x 1024) + 2 x 4096 = 20,480 bytes more a token; QK-norm
 * saves q and k before the norm, 2 x (8192 + 2048) more. */
Test(memory, head_dim_widens_the_saved_attention_tensors)
{
	struct model m = gpt();
	m.kv_heads = 8;
	struct gpu_spec g = { .hbm_bytes = 80e9 };
	struct mem_rank_input in = { .model = &m, .gpu = &g, .dtype = DTYPE_BF16, .attention = ATTN_FLASH,
				     .micro_batch = 1, .seq = 1, .tp = 1, .dp = 1, .pp = 1, .layers = 1,
				     .inflight = 1 };
	double base = memory_layer_activations(&in);
	m.head_dim = 256;
	double wide = memory_layer_activations(&in);
	cr_expect_eq(wide - base, 2 * (4096 + 2 * 1024) + 2 * 4096);
	m.qk_norm = true;
	cr_expect_eq(memory_layer_activations(&in) - wide, 2 * (8192 + 2048));
}

/* torchtitan's selective layer policy (recompute full, every n-th layer
 * of the rank): n = 1 is full recompute, n above the rank's layers is no
 * recompute, and n = 2 of an eager Llama layer's 32 keeps 16 layer
 * inputs (2 T h) and 16 whole saved sets, with one layer's recomputed
 * tensors (the saved set less its input) at the backward's peak. */
Test(memory, every_nth_layer_checkpoint_lies_between_none_and_full)
{
	struct model m = llama8b();
	struct gpu_spec g = { .hbm_bytes = 100e9 };
	double T = 4096, h = 4096, f = 14336, a = 32, L = 32;
	struct mem_rank_input in = { .model = &m, .gpu = &g, .dtype = DTYPE_BF16, .attention = ATTN_FLASH,
				     .micro_batch = 1, .seq = T, .tp = 1, .dp = 8, .zero = ZERO_3, .layers = L,
				     .inflight = 1, .has_embedding = true, .has_head = true, .loss_Bpl = 12,
				     .rmsnorm_extra_Bpe = 4, .repeat_kv = true, .microbatches = 1 };
	struct mem_anatomy none, full, o;
	memory_rank(&in, &none);
	in.recompute = RECOMPUTE_FULL;
	memory_rank(&in, &full);
	in.recompute_every = 1;
	memory_rank(&in, &o);
	cr_assert_float_eq(o.activations_bytes, full.activations_bytes, 1e-9 * full.activations_bytes);
	cr_assert_float_eq(o.recompute_bytes, full.recompute_bytes, 1e-9 * full.recompute_bytes);
	cr_assert_float_eq(o.total_bytes, full.total_bytes, 1e-9 * full.total_bytes);
	in.recompute_every = 33;
	memory_rank(&in, &o);
	cr_assert_float_eq(o.activations_bytes, none.activations_bytes, 1e-9 * none.activations_bytes);
	cr_assert_float_eq(o.recompute_bytes, 0, 1e-9);
	cr_assert_float_eq(o.total_bytes, none.total_bytes, 1e-9 * none.total_bytes);

	in.recompute_every = 2;
	memory_rank(&in, &o);
	double eager = T * (8 * h + 2 * 3 * h + 2 * h + 4 * a + 6 * f + 2 * 4 * h);  /* as above */
	double head = T * h * (2 + 2 + 4);       /* the head's input, the final norm's tensors */
	double want = 16 * 2 * T * h + 16 * eager + head;
	cr_assert_float_eq(o.activations_bytes, want, 1e-9 * want, "%.6g against %.6g", o.activations_bytes,
			   want);
	cr_assert_float_eq(o.recompute_bytes, eager - 2 * T * h, 1e-9 * eager);
	cr_assert_gt(o.total_bytes, full.total_bytes);
	cr_assert_lt(o.total_bytes, none.total_bytes);
	/* 31 layers: the 2nd, 4th, ... 30th, 15 of them */
	in.layers = 31;
	memory_rank(&in, &o);
	want = 15 * 2 * T * h + 16 * eager + head;
	cr_assert_float_eq(o.activations_bytes, want, 1e-9 * want);
}

/* Apex DistributedFusedAdam with contiguous grad and param buffers
 * (memory.c, reserved): its buckets are slices of the gradients and its
 * all-gathers write into the weights, so the two bucket buffers a DDP
 * bucket holds (2 x bucket_bytes) leave the count and nothing else moves. */
Test(memory, apex_contiguous_buffers_hold_no_bucket_copies)
{
	struct model m = gpt();
	struct gpu_spec g = { .hbm_bytes = 80e9 };
	struct mem_rank_input in = { .model = &m, .gpu = &g, .dtype = DTYPE_BF16, .grad_elem_bytes = 2,
				     .micro_batch = 1, .seq = 2048, .tp = 4, .dp = 16, .pp = 8, .zero = ZERO_1,
				     .layers = 12, .inflight = 1, .bucket_bytes = 906e6 };
	struct mem_anatomy ddp, apex;
	memory_rank(&in, &ddp);
	in.apex_contiguous = true;
	memory_rank(&in, &apex);
	cr_assert_float_eq(ddp.comm_buffer_bytes, 2 * 906e6, 1);
	cr_assert_float_eq(apex.comm_buffer_bytes, 0, 1);
	cr_assert_float_eq(ddp.total_bytes - apex.total_bytes, 2 * 906e6, 1);
	cr_assert_float_eq(apex.grads_bytes, ddp.grads_bytes, 1);
	cr_assert_float_eq(apex.weights_bytes, ddp.weights_bytes, 1);
	cr_assert_float_eq(apex.optimizer_bytes, ddp.optimizer_bytes, 1);
}

/* Apex's store_param_remainders (NeMo r2.0.0rc1 megatron_base_model.py
 * L796-806, apex 810ffae3 distributed_fused_adam.py L447-453): the fp32
 * master is the bf16 weight plus an int16 remainder, so the sharded state
 * is (2 + 4 + 4) psi / N_d instead of 12 psi / N_d; the weights, gradients
 * and fp8 copies stay. GPT-3 20B's rank at TP 2 x DP 32 (NeMo 24.07):
 * 10.13 G parameters, 3.798 -> 3.165 GB. fp32 weights have no remainder
 * (K = 8 stays), and fp8 parameters make NeMo store the master (K = 12). */
Test(memory, apex_param_remainders_keep_ten_bytes_of_state)
{
	struct model m = gpt();
	struct gpu_spec g = { .hbm_bytes = 80e9 };
	double L = 4, P = model_layer_params(&m), E = model_embedding_params(&m);
	struct mem_rank_input in = { .model = &m, .gpu = &g, .dtype = DTYPE_FP8, .grad_elem_bytes = 2,
				     .micro_batch = 1, .seq = 2048, .tp = 2, .dp = 32, .zero = ZERO_1,
				     .layers = L, .has_embedding = true, .inflight = 1 };
	struct mem_anatomy full, rem;
	memory_rank(&in, &full);
	in.master_remainders = true;
	memory_rank(&in, &rem);
	double psi = (L * P + E) / 2;
	cr_assert_float_eq(full.optimizer_bytes, 12 * psi / 32, 1);
	cr_assert_float_eq(rem.optimizer_bytes, (2 + 4 + 4) * psi / 32, 1);
	cr_assert_float_eq(full.total_bytes - rem.total_bytes, 2 * psi / 32, 1);
	cr_assert_float_eq(rem.weights_bytes, full.weights_bytes, 1);
	cr_assert_float_eq(rem.grads_bytes, full.grads_bytes, 1);
	cr_assert_float_eq(rem.fp8_weight_bytes, full.fp8_weight_bytes, 1);
	in.dtype = DTYPE_BF16;
	memory_rank(&in, &rem);
	cr_assert_float_eq(rem.optimizer_bytes, 10 * psi / 32, 1);
	in.dtype = DTYPE_TF32;
	memory_rank(&in, &rem);
	cr_assert_float_eq(rem.optimizer_bytes, 8 * psi / 32, 1);
	in.dtype = DTYPE_FP8;
	in.fp8_params = true;
	memory_rank(&in, &rem);
	cr_assert_float_eq(rem.optimizer_bytes, 12 * psi / 32, 1);
}

/* A checkpoint holds the optimizer's state as the plan keeps it
 * (sim/assess.c assess_checkpoint_bytes): 12 bytes a parameter mixed, 8
 * with bf16 moments, 10 with Apex's remainders (12 again with fp8
 * parameters, where NeMo stores the fp32 master), 8 in fp32. */
Test(memory, checkpoint_counts_the_optimizer_state_as_kept)
{
	cr_assert_float_eq(memory_optimizer_bytes_per_param(DTYPE_BF16, false, false, false), 12, 1e-12);
	cr_assert_float_eq(memory_optimizer_bytes_per_param(DTYPE_BF16, true, false, false), 8, 1e-12);
	cr_assert_float_eq(memory_optimizer_bytes_per_param(DTYPE_BF16, false, true, false), 10, 1e-12);
	cr_assert_float_eq(memory_optimizer_bytes_per_param(DTYPE_FP8, false, true, false), 10, 1e-12);
	cr_assert_float_eq(memory_optimizer_bytes_per_param(DTYPE_FP8, false, true, true), 12, 1e-12);
	cr_assert_float_eq(memory_optimizer_bytes_per_param(DTYPE_FP32, false, false, false), 8, 1e-12);

	struct inputs *in = load_inputs(src_path("models/zoo/llama2-7b.json"), "topologies/dgx-h100.json");
	struct plan pl;
	plan_init(&pl);
	pl.nodes = 1;
	pl.parallel.dp = 8;
	pl.training.precision = DTYPE_BF16;
	double n = model_params(inputs_model(in));
	cr_assert_float_eq(assess_checkpoint_bytes(in, &pl), n * (2 + 12), 1);
	pl.training.master_remainders = true;
	cr_assert_float_eq(assess_checkpoint_bytes(in, &pl), n * (2 + 10), 1);
	pl.training.bf16_moments = true;
	cr_assert_float_eq(assess_checkpoint_bytes(in, &pl), n * (2 + 6), 1);
	inputs_destroy(in);
}
