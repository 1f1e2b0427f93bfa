/* test-ptalloc: PyTorch's caching allocator replayed (models/ptalloc.h)
 * against its rules worked by hand, and the FSDP2 replay's reserved
 * memory (models/memory_replay.c) against the terms it must hold. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memory.h"
#include "memory-private.h"
#include "ptalloc.h"
#include "testutil.h"

#define MiB 1048576.0
#define PAGE (20 * MiB)

/* A freed block serves its own stream only: stream 1 maps its own pages. */
Test(ptalloc, a_freed_block_serves_its_stream_only)
{
	struct ptalloc *a = ptalloc_new();
	int h = ptalloc_malloc(a, 0, 100 * MiB);
	ptalloc_free(a, h);
	cr_assert_float_eq(ptalloc_reserved(a), 100 * MiB, 1);
	h = ptalloc_malloc(a, 1, 100 * MiB);
	cr_assert_float_eq(ptalloc_reserved(a), 200 * MiB, 1, "stream 1 may not reuse stream 0's block");
	ptalloc_free(a, h);
	h = ptalloc_malloc(a, 0, 100 * MiB);
	cr_assert_float_eq(ptalloc_reserved(a), 200 * MiB, 1, "stream 0 reuses its own");
	cr_assert_float_eq(ptalloc_stream_reserved(a, 0), 100 * MiB, 1);
	cr_assert_float_eq(ptalloc_allocated(a), 100 * MiB, 1);
	ptalloc_destroy(a);
}

/* Pages of 20 MiB; the free end of the segment serves a request before
 * new pages are mapped, and is extended by the pages it lacks. */
Test(ptalloc, the_segment_grows_by_20_MiB_pages_from_its_free_end)
{
	struct ptalloc *a = ptalloc_new();
	ptalloc_malloc(a, 0, 30 * MiB);
	cr_assert_float_eq(ptalloc_reserved(a), 2 * PAGE, 1);
	ptalloc_malloc(a, 0, 5 * MiB);           /* in the 10 MiB left */
	cr_assert_float_eq(ptalloc_reserved(a), 2 * PAGE, 1);
	ptalloc_malloc(a, 0, 20 * MiB);          /* 5 MiB left: one page more */
	cr_assert_float_eq(ptalloc_reserved(a), 3 * PAGE, 1);
	cr_assert_float_eq(ptalloc_allocated(a), 55 * MiB, 1);
	ptalloc_destroy(a);
}

/* Without expandable segments (ptalloc_new_native): a request under
 * 10 MiB opens a 20 MiB segment, a larger one a segment of its size
 * rounded up to 2 MiB; a later request fits in a segment's free rest. */
Test(ptalloc, native_segments_are_sized_by_get_allocation_size)
{
	struct ptalloc *a = ptalloc_new_native();
	ptalloc_malloc(a, 0, 29 * MiB);          /* a 30 MiB segment */
	cr_assert_float_eq(ptalloc_reserved(a), 30 * MiB, 1);
	ptalloc_malloc(a, 0, 5 * MiB);           /* the 1 MiB rest does not hold it: 20 MiB */
	cr_assert_float_eq(ptalloc_reserved(a), 50 * MiB, 1);
	ptalloc_malloc(a, 0, 12 * MiB);          /* in the 20 MiB segment's 15 MiB rest */
	cr_assert_float_eq(ptalloc_reserved(a), 50 * MiB, 1);
	ptalloc_malloc(a, 1, 5 * MiB);           /* another stream: its own segment */
	cr_assert_float_eq(ptalloc_reserved(a), 70 * MiB, 1);
	ptalloc_destroy(a);
}

/* Without expandable segments two freed neighbours of separate
 * cudaMallocs stay two blocks: 150 MiB fits neither 100 MiB block and
 * opens a third segment (350 MiB reserved), where the expandable
 * segment merges them into one 200 MiB block that holds it (200). */
Test(ptalloc, native_blocks_of_two_segments_do_not_merge)
{
	struct ptalloc *a = ptalloc_new_native(), *e = ptalloc_new();
	struct ptalloc *both[] = { a, e };
	for (int k = 0; k < 2; k++) {
		int x = ptalloc_malloc(both[k], 0, 100 * MiB);
		int y = ptalloc_malloc(both[k], 0, 100 * MiB);
		ptalloc_free(both[k], x);
		ptalloc_free(both[k], y);
		ptalloc_malloc(both[k], 0, 150 * MiB);
	}
	cr_assert_float_eq(ptalloc_reserved(a), 350 * MiB, 1);
	cr_assert_float_eq(ptalloc_reserved(e), 200 * MiB, 1);
	ptalloc_destroy(a);
	ptalloc_destroy(e);
}

/* Without expandable segments a large-pool block is split only when more
 * than kSmallSize (1 MiB) remains: 99.5 MiB in a freed 100 MiB block
 * takes it whole (100 allocated), 90 MiB leaves a 10 MiB block that
 * serves 8 MiB without a new segment. */
Test(ptalloc, native_splits_only_past_1_MiB)
{
	struct ptalloc *a = ptalloc_new_native();
	int x = ptalloc_malloc(a, 0, 100 * MiB);
	ptalloc_free(a, x);
	x = ptalloc_malloc(a, 0, 99.5 * MiB);
	cr_assert_float_eq(ptalloc_allocated(a), 100 * MiB, 1, "a 0.5 MiB rest is not split off");
	ptalloc_free(a, x);
	ptalloc_malloc(a, 0, 90 * MiB);
	ptalloc_malloc(a, 0, 8 * MiB);
	cr_assert_float_eq(ptalloc_allocated(a), 98 * MiB, 1);
	cr_assert_float_eq(ptalloc_reserved(a), 100 * MiB, 1);
	ptalloc_destroy(a);
}

/* Without expandable segments a request of at most 1 MiB comes from the
 * small pool (2 MiB segments, split down to 512 bytes) and a larger one
 * from the large pool, never the other's blocks (get_pool()): two 1 MiB
 * requests share one 2 MiB segment; 1.5 MiB opens a 20 MiB segment beside
 * the small one's free rest; 0.5 MiB then takes a small segment of its
 * own though the large segment has 18.5 MiB free. */
Test(ptalloc, native_small_and_large_pools_are_apart)
{
	struct ptalloc *a = ptalloc_new_native();
	ptalloc_malloc(a, 0, 1 * MiB);
	cr_assert_float_eq(ptalloc_allocated(a), 1 * MiB, 1, "a small block is split at 1 MiB rest");
	ptalloc_malloc(a, 0, 1 * MiB);
	cr_assert_float_eq(ptalloc_reserved(a), 2 * MiB, 1, "both in one 2 MiB segment");
	struct ptalloc *b = ptalloc_new_native();
	ptalloc_malloc(b, 0, 0.5 * MiB);         /* 2 MiB small segment, 1.5 MiB free */
	ptalloc_malloc(b, 0, 1.5 * MiB);         /* the large pool: 20 MiB */
	cr_assert_float_eq(ptalloc_reserved(b), 22 * MiB, 1);
	ptalloc_malloc(b, 0, 0.25 * MiB);        /* the small segment's rest */
	ptalloc_malloc(b, 0, 1.25 * MiB);        /* > 1 MiB: the large segment's rest */
	cr_assert_float_eq(ptalloc_reserved(b), 22 * MiB, 1);
	struct ptalloc *c = ptalloc_new_native();
	ptalloc_malloc(c, 0, 1.5 * MiB);         /* 20 MiB, 18.5 free */
	ptalloc_malloc(c, 0, 0.5 * MiB);         /* a small segment of its own */
	cr_assert_float_eq(ptalloc_reserved(c), 22 * MiB, 1);
	ptalloc_destroy(a);
	ptalloc_destroy(b);
	ptalloc_destroy(c);
}

/* A hole inside the segment serves what fits in it; a larger request
 * goes to the end and maps new pages though the hole is free. */
Test(ptalloc, a_hole_serves_only_what_fits)
{
	struct ptalloc *a = ptalloc_new();
	int x = ptalloc_malloc(a, 0, 100 * MiB);
	ptalloc_malloc(a, 0, 60 * MiB);
	ptalloc_malloc(a, 0, 100 * MiB);
	cr_assert_float_eq(ptalloc_reserved(a), 260 * MiB, 1);
	ptalloc_free(a, x);
	ptalloc_malloc(a, 0, 120 * MiB);
	cr_assert_float_eq(ptalloc_reserved(a), 380 * MiB, 1, "the 100 MiB hole does not hold 120");
	ptalloc_malloc(a, 0, 40 * MiB);
	ptalloc_malloc(a, 0, 60 * MiB);
	cr_assert_float_eq(ptalloc_reserved(a), 380 * MiB, 1, "40 + 60 fill the hole");
	cr_assert_float_eq(ptalloc_reserved_peak(a), 380 * MiB, 1);
	cr_assert_float_eq(ptalloc_allocated_peak(a), 380 * MiB, 1);
	ptalloc_destroy(a);
}

/* Best fit prefers a hole inside to the free end, even a larger one:
 * with a 200 MiB hole and 100 MiB free at the end, 90 MiB goes to the
 * hole, so 200 MiB then needs the end extended (to the end first, the
 * hole would have taken 200 with no new page). */
Test(ptalloc, best_fit_takes_a_hole_before_the_free_end)
{
	struct ptalloc *a = ptalloc_new();
	int x = ptalloc_malloc(a, 0, 200 * MiB);
	ptalloc_malloc(a, 0, 60 * MiB);
	int z = ptalloc_malloc(a, 0, 100 * MiB);
	ptalloc_free(a, x);
	ptalloc_free(a, z);
	ptalloc_malloc(a, 0, 90 * MiB);
	cr_assert_float_eq(ptalloc_reserved(a), 360 * MiB, 1);
	ptalloc_malloc(a, 0, 200 * MiB);
	cr_assert_float_eq(ptalloc_reserved(a), 460 * MiB, 1);
	ptalloc_destroy(a);
}

/* Freed neighbours merge: two adjacent holes of 60 serve 120. */
Test(ptalloc, freed_neighbours_merge)
{
	struct ptalloc *a = ptalloc_new();
	int x = ptalloc_malloc(a, 0, 60 * MiB), y = ptalloc_malloc(a, 0, 60 * MiB);
	ptalloc_malloc(a, 0, 40 * MiB);
	ptalloc_free(a, y);
	ptalloc_free(a, x);
	ptalloc_malloc(a, 0, 120 * MiB);
	cr_assert_float_eq(ptalloc_reserved(a), 160 * MiB, 1);
	ptalloc_destroy(a);
}

/* torch's cross_entropy on an fp32 copy, E logits (E x 4 B a multiple of
 * the page): 12 E allocated at the peak, 14 E reserved, because the
 * merged hole of the fp32 copy and the bf16 logits (6 E) takes nll's
 * gradient (4 E) and leaves 2 E that log_softmax's gradient (4 E) does
 * not fit. */
Test(ptalloc, the_cross_entropy_sequence_reserves_14_bytes_a_logit)
{
	double E = 100 * PAGE;
	struct ptalloc *a = ptalloc_new();
	int pred = ptalloc_malloc(a, 0, 2 * E), f32 = ptalloc_malloc(a, 0, 4 * E);
	int lsm = ptalloc_malloc(a, 0, 4 * E);
	ptalloc_free(a, f32);
	ptalloc_free(a, pred);
	int g1 = ptalloc_malloc(a, 0, 4 * E), g2 = ptalloc_malloc(a, 0, 4 * E);
	ptalloc_free(a, g1);
	ptalloc_free(a, lsm);
	ptalloc_free(a, g2);
	cr_assert_float_eq(ptalloc_allocated_peak(a), 12 * E, 1);
	cr_assert_float_eq(ptalloc_reserved_peak(a), 14 * E, 1);
	ptalloc_destroy(a);
}

Test(ptalloc, bad_requests_are_refused)
{
	struct ptalloc *a = ptalloc_new();
	cr_assert_eq(ptalloc_malloc(a, 0, 0), -1);
	cr_assert_eq(ptalloc_malloc(a, PTALLOC_MAX_STREAMS, MiB), -1);
	cr_assert_eq(ptalloc_malloc(a, -1, MiB), -1);
	ptalloc_free(a, -1);
	ptalloc_free(a, 12345);
	cr_assert_float_eq(ptalloc_reserved(a), 0, 1e-9);
	ptalloc_destroy(a);
}

/* Llama 3 8B (torchtitan's dimensions). */
static struct model llama8b(void)
{
	struct model m;
	memset(&m, 0, sizeof(m));
	m.arch = MODEL_ARCH_DECODER;
	m.layers = 32;
	m.hidden = 4096;
	m.heads = 32;
	m.kv_heads = 8;
	m.ffn = 14336;
	m.vocab = 128256;
	m.act = MODEL_ACT_SWIGLU;
	m.norm = MODEL_NORM_RMSNORM;
	return m;
}

/* Llama 3 8B's rank under FSDP2 over 8 GPUs, bf16, micro-batch 1 of 4,096
 * tokens, full recompute, no allocator replay yet. */
static struct mem_rank_input fsdp2_full(const struct model *m, const struct gpu_spec *g)
{
	return (struct mem_rank_input){ .model = m, .gpu = g, .dtype = DTYPE_BF16, .attention = ATTN_FLASH,
					.grad_elem_bytes = 4, .micro_batch = 1, .seq = 4096, .tp = 1, .dp = 8,
					.zero = ZERO_3, .layers = m->layers, .inflight = 1, .has_embedding = true,
					.has_head = true, .fsdp2 = true, .loss_Bpl = 12, .microbatches = 1,
					.recompute = RECOMPUTE_FULL, .reserve_fraction = 0.02 };
}

/* FSDP2 under expandable segments: the replayed reserved memory holds
 * at least the allocated peak and the sharded fp32 gradients, which live
 * in the reduce-scatter stream's pool after zero_grad frees them (the
 * anatomy, which counts what is allocated, does not hold them at the
 * loss); without expandable segments nothing is replayed. */
Test(ptalloc, fsdp2_replay_keeps_the_reduce_scatter_pool)
{
	struct model m = llama8b();
	struct gpu_spec g = { .hbm_bytes = 100e9 };
	double L = 32, P = L * model_layer_params(&m) + model_embedding_params(&m) + model_head_params(&m);
	struct mem_rank_input in = fsdp2_full(&m, &g);
	struct mem_anatomy plain, replayed;
	memory_rank(&in, &plain);
	in.expandable_segments = true;
	memory_rank(&in, &replayed);
	cr_assert_float_eq(plain.caching_bytes, 0, 1e-9);
	cr_assert_float_eq(replayed.weights_bytes, plain.weights_bytes, 1, "the anatomy is the same");
	cr_assert_geq(replayed.allocator_bytes, plain.allocator_bytes + 4 * P / 8,
		      "%.2f GiB against %.2f + the gradients' %.2f", replayed.allocator_bytes / 1073741824.0,
		      plain.allocator_bytes / 1073741824.0, 4 * P / 8 / 1073741824.0);
	cr_assert_float_eq(replayed.caching_bytes, replayed.allocator_bytes - plain.allocator_bytes, 1);
	cr_assert_float_eq(replayed.total_bytes,
			   plain.total_bytes - plain.fragmentation_bytes +
			   fmax(plain.fragmentation_bytes, replayed.caching_bytes), 1,
			   "the replayed caching stands for the reserve where larger");
	/* the pools: the reduce-scatter stream's holds every sharded fp32
	 * gradient (4 P / N, each module's rounded to 512 B, the pool to its
	 * 20 MiB page); the all-gather stream's the root's gathered weights
	 * and the first layer's, beside the root's 16-bit cast's hole */
	struct mem_replay rp;
	cr_assert(memory_replay(&in, &replayed, &rp));
	double Pb = model_layer_params(&m), Pr = model_embedding_params(&m) + model_head_params(&m);
	cr_assert_geq(rp.reduce, 4 * P / 8);
	cr_assert_lt(rp.reduce, 4 * P / 8 + 20 * MiB + 33 * 512);
	/* the root's cast (2 P_r / N) leaves a hole below its output that the
	 * first layer's cast fills but its output (2 P_b) does not */
	double ag = 2 * Pr / 8 + 2 * Pr + 2 * Pb;
	cr_assert_geq(rp.allgather, ag);
	cr_assert_lt(rp.allgather, ag + 20 * MiB);
	cr_assert_float_eq(rp.reserved_peak, rp.compute + rp.allgather + rp.reduce, 1,
			   "nothing is unmapped: the peak is the end");
	cr_assert_float_eq(replayed.allocator_bytes, rp.reserved_peak, 1);
	/* a pipeline is not replayed */
	in.pp = 2;
	memory_rank(&in, &replayed);
	cr_assert_float_eq(replayed.caching_bytes, 0, 1e-9);
}

/* torchao's Float8 with the fp8 all-gather (training.fp8_params): the
 * layers gather in one byte, the root (embedding, final norm, output)
 * in bf16 still, torchtitan 9dec370 float8.py L84-100 swapping every
 * nn.Linear but `output` and the embedding being no Linear. The
 * all-gather stream's pool: the root's bf16 cast (2 P_r / N, freed after
 * the copy-in) and output (2 P_r); the first layer's fp8 cast and output
 * (P_b (1 + 1 / N) = 245 MB) fit in the cast's hole (262 MB), and every
 * later layer's in what the root's output leaves. With the root in fp8
 * too: P_r / N + P_r, and the first layer's output (P_b) past the hole,
 * 1.40 GB against 2.36. */
Test(ptalloc, float8_all_gather_leaves_the_root_in_bf16)
{
	struct model m = llama8b();
	struct gpu_spec g = { .hbm_bytes = 100e9 };
	double L = 32, N = 8;
	struct mem_rank_input in = { .model = &m, .gpu = &g, .dtype = DTYPE_FP8, .attention = ATTN_FLASH,
				     .grad_elem_bytes = 4, .micro_batch = 1, .seq = 4096, .tp = 1, .dp = N,
				     .zero = ZERO_3, .layers = L, .inflight = 1, .has_embedding = true,
				     .has_head = true, .fsdp2 = true, .torchao_fp8 = true, .fp8_params = true,
				     .loss_Bpl = 12, .microbatches = 1, .recompute = RECOMPUTE_FULL,
				     .expandable_segments = true };
	struct mem_anatomy o;
	memory_rank(&in, &o);
	struct mem_replay rp;
	cr_assert(memory_replay(&in, &o, &rp));
	double Pr = model_embedding_params(&m) + model_head_params(&m);
	double ag = 2 * Pr / N + 2 * Pr;
	cr_assert_geq(rp.allgather, ag, "%.4g GB against %.4g", rp.allgather / 1e9, ag / 1e9);
	cr_assert_lt(rp.allgather, ag + 20 * MiB, "%.4g GB against %.4g", rp.allgather / 1e9, ag / 1e9);
}

/* A pipeline's middle stage (stage 1 of 4, 1F1B, 4 micro-batches:
 * F F F B F B B B) as torch.distributed.pipelining of December 2024 runs
 * it under FSDP2: the stage's weights gathered for the whole step, fp32
 * gradient accumulators of every layer, receive buffers for activations
 * and gradients (m each), the kept outputs and input gradients (m each)
 * all alive at the last backward beside the accumulators; the
 * reduce-scatter pool holds the sharded gradients. */
Test(ptalloc, pipeline_stage_keeps_buffers_accumulators_and_weights)
{
	struct model m = llama8b();
	struct gpu_spec g = { .hbm_bytes = 100e9 };
	static const bool order[] = { true, true, true, false, true, false, false, false };
	double L = 8, Pb = model_layer_params(&m), mb = 2, seq = 4096, N = 8;
	struct mem_rank_input in = { .model = &m, .gpu = &g, .dtype = DTYPE_BF16, .attention = ATTN_FLASH,
				     .grad_elem_bytes = 4, .micro_batch = mb, .seq = seq, .tp = 1, .dp = N,
				     .pp = 4, .zero = ZERO_2, .layers = L, .inflight = 3, .fsdp2 = true,
				     .loss_Bpl = 12, .microbatches = 4, .recompute = RECOMPUTE_FULL,
				     .expandable_segments = true, .order_fwd = order, .order_n = 8 };
	struct mem_anatomy o;
	memory_rank(&in, &o);
	struct mem_replay rp;
	cr_assert(memory_replay(&in, &o, &rp));
	double A = mb * seq * 4096 * 2;                 /* the stage boundary, bf16 */
	double held = 4 * L * Pb + 2 * L * Pb + 4 * 4 * A;
	cr_assert_geq(rp.allocated_peak, held, "%.2f GiB allocated, %.2f held at the last backward",
		      rp.allocated_peak / 1073741824.0, held / 1073741824.0);
	cr_assert_geq(rp.reduce, 4 * L * Pb / N);
	cr_assert_lt(rp.reduce, 4 * L * Pb / N + 20 * MiB);
	cr_assert_float_eq(o.allocator_bytes, rp.reserved_peak, 1);
	/* after the step: the fp32 shards, AdamW's two states and the sharded
	 * gradients (16 B per parameter over N; AdamW's state of the norms'
	 * weights, under 1 MiB, in the small pool, not replayed), the 2 m
	 * receive buffers, the m kept outputs and m input gradients, and the
	 * last module's fp32 reduce-scatter input, left held (no final
	 * callback in December 2024); each tensor rounded up to 512 B */
	double end = 8 * L * Pb / N + 8 * L * (Pb - 2 * 4096) / N + 4 * 4 * A + 4 * Pb;
	cr_assert_geq(rp.allocated_end, end, "%.6g against %.6g (A %.6g Pb %.6g)", rp.allocated_end, end, A, Pb);
	cr_assert_lt(rp.allocated_end, end + 200 * 512, "%.0f against %.0f", rp.allocated_end, end);
	/* no order given: no replay */
	in.order_fwd = NULL;
	memory_rank(&in, &o);
	cr_assert_float_eq(o.caching_bytes, 0, 1e-9);
}

/* The replay under torchtitan's selective layer policy: every layer
 * checkpointed (n = 1) replays as full recompute, none (n above the
 * layers) as no recompute, every second layer in between; on a pipeline
 * stage after the first, the first layer's input is the receive buffer
 * only where that layer is checkpointed. */
Test(ptalloc, every_nth_layer_checkpoint_replays_between_none_and_full)
{
	struct model m = llama8b();
	struct gpu_spec g = { .hbm_bytes = 100e9 };
	struct mem_rank_input in = { .model = &m, .gpu = &g, .dtype = DTYPE_BF16, .attention = ATTN_FLASH,
				     .grad_elem_bytes = 4, .micro_batch = 1, .seq = 4096, .tp = 1, .dp = 8,
				     .zero = ZERO_3, .layers = 32, .inflight = 1, .has_embedding = true,
				     .has_head = true, .fsdp2 = true, .loss_Bpl = 12, .microbatches = 1,
				     .rmsnorm_extra_Bpe = 4, .repeat_kv = true, .expandable_segments = true,
				     .reserve_fraction = 0.02 };
	struct mem_anatomy none, full, o;
	memory_rank(&in, &none);
	in.recompute = RECOMPUTE_FULL;
	memory_rank(&in, &full);
	cr_assert_gt(none.caching_bytes, 0, "replayed");
	in.recompute_every = 1;
	memory_rank(&in, &o);
	cr_assert_float_eq(o.allocator_bytes, full.allocator_bytes, 1e-9 * full.allocator_bytes);
	in.recompute_every = 33;
	memory_rank(&in, &o);
	cr_assert_float_eq(o.allocator_bytes, none.allocator_bytes, 1e-9 * none.allocator_bytes);
	in.recompute_every = 2;
	memory_rank(&in, &o);
	cr_assert_gt(o.allocator_bytes, full.allocator_bytes, "%.2f GiB against full's %.2f",
		     o.allocator_bytes / 1073741824.0, full.allocator_bytes / 1073741824.0);
	cr_assert_lt(o.allocator_bytes, none.allocator_bytes, "%.2f GiB against none's %.2f",
		     o.allocator_bytes / 1073741824.0, none.allocator_bytes / 1073741824.0);
	/* at the loss the 16 checkpointed layers hold their inputs and the
	 * 16 others their whole sets */
	struct mem_replay rp;
	cr_assert(memory_replay(&in, &o, &rp));
	cr_assert_geq(rp.allocated_peak, 16 * 2 * 4096 * 4096.0 + 16 * (o.recompute_bytes + 2 * 4096 * 4096.0));
	/* a pipeline's last stage (its first layer's input is the receive
	 * buffer only where that layer is checkpointed): n = 1 as full, n
	 * above its 16 layers as none */
	static const bool order[] = { true, false };
	in.pp = 2, in.zero = ZERO_2, in.has_embedding = false, in.order_fwd = order, in.order_n = 2;
	in.layers = 16;
	struct mem_anatomy pn, pf;
	in.recompute = RECOMPUTE_NONE, in.recompute_every = 0;
	memory_rank(&in, &pn);
	in.recompute = RECOMPUTE_FULL;
	memory_rank(&in, &pf);
	in.recompute_every = 1;
	memory_rank(&in, &o);
	cr_assert_gt(pf.caching_bytes, 0, "replayed");
	cr_assert_float_eq(o.allocator_bytes, pf.allocator_bytes, 1e-9 * pf.allocator_bytes);
	in.recompute_every = 17;
	memory_rank(&in, &o);
	cr_assert_float_eq(o.allocator_bytes, pn.allocator_bytes, 1e-9 * pn.allocator_bytes);
}

/* Without expandable segments (training.allocator "native") the same
 * FSDP2 plan is replayed on PyTorch's native segments, which are sized
 * per request and never merge across segments: what it reserves is at
 * least what expandable segments reserve, and it is replayed at all
 * (memory.c: either allocator, never neither). */
Test(ptalloc, native_allocator_replays_fsdp2_on_its_own_segments)
{
	struct model m = llama8b();
	struct gpu_spec g = { .hbm_bytes = 100e9 };
	struct mem_rank_input in = fsdp2_full(&m, &g);
	struct mem_anatomy plain, expandable, native;
	memory_rank(&in, &plain);
	in.expandable_segments = true;
	memory_rank(&in, &expandable);
	in.expandable_segments = false;
	in.native_allocator = true;
	memory_rank(&in, &native);
	cr_assert_gt(native.caching_bytes, 0, "the native allocator is replayed");
	cr_assert_geq(native.allocator_bytes, expandable.allocator_bytes, "%.3f GiB native, %.3f expandable",
		      native.allocator_bytes / 1073741824.0, expandable.allocator_bytes / 1073741824.0);
	struct mem_replay rp;
	cr_assert(memory_replay(&in, &native, &rp));
	cr_assert_float_eq(native.allocator_bytes, rp.reserved_peak, 1);
	cr_assert_float_eq(native.weights_bytes, plain.weights_bytes, 1, "the anatomy is the same");
}

/* training.allocator from a scenario: torchtitan's Llama 3 8B on 8 H100
 * (the memory case tt-llama3-8b-fsdp8) needs more with "native" than
 * with its launch's expandable segments; "expandable" is the stack's own
 * (the same figure); another stack's allocator is not replayed: an error
 * at /training/allocator. */
Test(ptalloc, training_allocator_key_selects_the_replay)
{
	char *dir = tmp_dir(), path[2048], args[4200];
	json_t *s = load_json(src_path("validation/memory-torchtitan-h100/tt-llama3-8b-fsdp8.json"));
	cr_assert(s);
	json_object_del(s, "published");
	snprintf(path, sizeof(path), "%s", src_path("validation/memory-torchtitan-h100/h100-96gb-topology.json"));
	json_object_set_new(s, "topology", json_string(path));
	snprintf(path, sizeof(path), "%s", src_path("models/zoo/llama3-8b.json"));
	json_object_set_new(s, "model", json_string(path));
	const char *alloc[3] = { NULL, "expandable", "native" };
	double need[3];
	for (int i = 0; i < 3; i++) {
		json_t *t = json_object_get(s, "training");
		if (alloc[i])
			json_object_set_new(t, "allocator", json_string(alloc[i]));
		char *text = json_dumps(s, JSON_INDENT(1)), name[32], *out = NULL, *err = NULL;
		snprintf(name, sizeof(name), "s%d.json", i);
		char *f = write_file(dir, name, text);
		snprintf(args, sizeof(args), "validate %s", f);
		cr_assert_eq(run_ddlsim(args, &out, &err), 0, "%s", err);
		const char *p = strstr(out, "needs ");
		cr_assert(p && sscanf(p, "needs %lf GB", &need[i]) == 1, "%s", out);
		free(text);
		free(f);
		free(out);
		free(err);
	}
	cr_assert_float_eq(need[1], need[0], 1e-9, "expandable is torchtitan's launch");
	cr_assert_gt(need[2], need[0] + 1, "native %.1f GB, expandable %.1f GB", need[2], need[0]);

	json_object_set_new(json_object_get(s, "compute"), "stack", json_string("megatron-te"));
	json_object_set_new(json_object_get(s, "parallel"), "recompute", json_string("full"));
	char *text = json_dumps(s, JSON_INDENT(1)), *out = NULL, *err = NULL;
	char *f = write_file(dir, "bad.json", text);
	snprintf(args, sizeof(args), "validate %s", f);
	cr_assert_eq(run_ddlsim(args, &out, &err), 3, "%s%s", out, err);
	cr_assert(strstr(err, "/training/allocator: error: PyTorch's caching allocator is replayed for "
			      "torchtitan's stacks only"), "%s", err);
	free(text);
	free(f);
	free(out);
	free(err);
	json_decref(s);
	free(dir);
}
