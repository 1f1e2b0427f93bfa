/* test-memory-ds2021: the ZeRO-3 buffers of DeepSpeed v0.4.0 (stack
 * deepspeed-zero3-2021; models/memory_ds2021.c cites stage3.py and
 * partition_parameters.py at v0.4.0), worked by hand against the anatomy.
 *
 * GPT's layer has four nn.Linear weights: qkv 3h^2, out h^2, up and down
 * 4h^2 each. A module's weight is gathered when it runs and released
 * after it; the next is prefetched only while fewer than
 * max_live_parameters (1e9) elements are available. A gradient joins the
 * IPG bucket whole; the bucket is reduced when the next one would take it
 * past 5e8 elements, and the bucket reduced before it is freed at that
 * reduce. So when a gradient is produced: the gathered weights, the
 * gradient, the bucket and the larger of the bucket reduced before (not
 * yet partitioned) and, at a reduce, the bucket's flattened copy (none
 * for a one-tensor bucket: a view); a gather doubles its tensor (c10d's
 * flat buffer). All in fp16, 2 B.
 *
 * GPT 530B (h 20480): up/down 4h^2 = 1.678e9 >= 1e9, so no prefetch
 * beside them; every bucket holds one Linear. The largest instant is the
 * up projection's gradient in backward (or its fetch): its weight, its
 * gradient, the down projection's in the bucket and the layer below's
 * qkv reduced before: 2 (4h^2 + 4h^2 + 4h^2 + 3h^2) = 30 h^2 bytes.
 * GPT 175B (h 12288): every Linear is under 1e9 and every bucket holds
 * one; the largest instant is the down projection's backward (its
 * prefetch of up, or its gradient), the layer above's qkv in the bucket
 * and its out reduced before: 2 (4h^2 + 2 x 4h^2 + 3h^2 + h^2) = 32 h^2
 * bytes. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>

#include "anatomy.h"
#include "framework.h"
#include "inputs.h"
#include "memory.h"
#include "plan.h"
#include "testutil.h"

/* The inputs (caller destroys) and plan of GPT `model` on dp A100s
 * (dp / 8 nodes) under framework fw with tp, fp16, full recompute, one
 * micro-batch of mb. */
static struct inputs *gpt_plan(const char *model, const char *fw, int dp, int tp, int mb, struct plan *pl)
{
	struct inputs *in = load_inputs(src_path(model), "topologies/dgx-a100.json");
	plan_init(pl);
	bool known;
	pl->framework = framework_index(framework_find(fw, &known));
	cr_assert_geq(pl->framework, 0);
	pl->nodes = dp * tp / 8;
	pl->parallel.dp = dp;
	pl->parallel.tp = tp;
	pl->parallel.zero = ZERO_3;
	pl->given |= PLAN_GIVEN_ZERO;
	pl->parallel.recompute = RECOMPUTE_FULL;
	pl->training.seq = 2048;
	pl->training.global_batch = dp * mb;
	pl->training.micro_batch = mb;
	pl->training.precision = DTYPE_FP16;
	plan_resolve(pl, in);
	return in;
}

/* Stage 0's anatomy of gpt_plan's plan. */
static void anatomy(const char *model, const char *fw, int dp, int tp, int mb, struct mem_anatomy *o)
{
	struct plan pl;
	struct inputs *in = gpt_plan(model, fw, dp, tp, mb, &pl);
	anatomy_stage(in, &pl, 0, o);
	inputs_destroy(in);
}

/* Expect the comm buffers of anatomy(model, "deepspeed@0.4", dp, tp, 4)
 * to be want bytes, to a relative tol. */
static void expect_buffers(const char *model, int dp, int tp, double want, double tol)
{
	struct mem_anatomy o;
	anatomy(model, "deepspeed@0.4", dp, tp, 4, &o);
	cr_expect(fabs(o.comm_buffer_bytes / want - 1) < tol, "buffers %.6g, want %.6g", o.comm_buffer_bytes,
		  want);
}

Test(memory_ds2021, gpt530b_peak_is_the_up_projections_gradient_without_prefetch)
{
	double h = 20480;
	expect_buffers("models/zoo/megatron/gpt-530b.json", 640, 1, 2 * 15 * h * h, 1e-12);
}

Test(memory_ds2021, gpt175b_peak_holds_the_prefetch_and_two_earlier_gradients)
{
	double h = 12288;
	expect_buffers("models/zoo/megatron/gpt-175b.json", 384, 1, 2 * 16 * h * h, 1e-12);
}

/* max_live_parameters 1e9 gates the prefetch: with no limit, the up
 * projection would be prefetched beside the down projection's backward,
 * with the layer above's qkv in the bucket and its out reduced before:
 * 2 (4h^2 + 2 x 4h^2 + 3h^2 + h^2) = 32 h^2 bytes against 30 h^2 (GPT
 * 530B, memory_rank directly). */
Test(memory_ds2021, max_live_parameters_gates_the_prefetch)
{
	struct mem_anatomy gated, open;
	double h = 20480;
	struct plan pl;
	struct inputs *in = gpt_plan("models/zoo/megatron/gpt-530b.json", "deepspeed@0.4", 640, 1, 4, &pl);
	struct mem_rank_input mi;
	anatomy_input(in, &pl, 105, 0, 1, true, true, &mi);
	cr_assert(mi.ds_zero3_2021);
	cr_expect_eq(mi.z3_live_elements, 1e9);
	memory_rank(&mi, &gated);
	mi.z3_live_elements = 0;
	memory_rank(&mi, &open);
	double more = open.comm_buffer_bytes - gated.comm_buffer_bytes;
	cr_expect(fabs(more / (2 * h * h) - 1) < 1e-9, "prefetch %.6g, want %.6g", more, 2 * h * h);
	inputs_destroy(in);
}

/* A small model's bucket holds many Linears, and its flattened copy
 * counts. GPT 1.7B (h 2304, 24 layers; 5e8 = 94.19 h^2): the backward's
 * gradients, 4, 4, 1, 3 h^2 a layer, fill buckets of 93, 91 and 92 h^2
 * (31, 30 and 31 gradients); the last is reduced at the lowest layer's
 * down projection's gradient: its weight and the prefetched up 4 + 4,
 * its gradient 4, the bucket 92 and the bucket's copy 92 (more than the
 * 91 reduced before): 2 x 196 h^2 bytes, where two one-Linear buckets
 * would read 2 x 18 h^2. */
Test(memory_ds2021, a_bucket_of_many_linears_and_its_copy_are_counted)
{
	double h = 2304;
	expect_buffers("models/zoo/megatron/gpt-1.7b.json", 8, 1, 2 * 196 * h * h, 1e-12);
}

/* Linears that fill no bucket are reduced only by the backward's
 * epilogue, whose flatten copies them all. GPT 1.7B on 4 layers: 4 x 12
 * h^2 = 48 h^2 < 94.19 h^2, so 2 x 48 h^2 elements, 2 x 96 h^2 bytes,
 * where the backward's largest instant (the lowest qkv's prefetch of the
 * recomputed qkv below, or its gradient) holds 3 + 2 x 3 + 45 h^2. */
Test(memory_ds2021, the_epilogue_copies_a_bucket_never_reduced)
{
	double h = 2304;
	struct plan pl;
	struct inputs *in = gpt_plan("models/zoo/megatron/gpt-1.7b.json", "deepspeed@0.4", 8, 1, 4, &pl);
	struct mem_rank_input mi;
	struct mem_anatomy o;
	anatomy_input(in, &pl, 4, 0, 1, true, true, &mi);
	cr_assert(mi.ds_zero3_2021);
	memory_rank(&mi, &o);
	double want = 2 * 96 * h * h;
	cr_expect(fabs(o.comm_buffer_bytes / want - 1) < 1e-12, "buffers %.6g, want %.6g", o.comm_buffer_bytes,
		  want);
	inputs_destroy(in);
}

/* With tensor parallelism the gathers stay per layer (the builder's
 * per-tensor path needs tp = 1): the anatomy keeps FSDP's shape, two
 * gradient buckets of 5e8 fp16 elements and two gathered layers of
 * 12h^2 / tp elements. */
Test(memory_ds2021, tensor_parallel_keeps_the_whole_layer_shape)
{
	double h = 20480;
	double layer = 12 * h * h + 13 * h;  /* weights and biases, two norms */
	expect_buffers("models/zoo/megatron/gpt-530b.json", 320, 2, 2 * 5e8 * 2 + 2 * 2 * layer / 2, 1e-3);
}
