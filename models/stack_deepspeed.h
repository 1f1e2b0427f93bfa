/* stack_deepspeed.h: the DeepSpeed engine's stacks, rows of stack_table
 * (stack.h).
 *
 * deepspeed (a Hugging Face model under DeepSpeed v0.15.0),
 * megatron-deepspeed (BigScience's BLOOM-176B stack of 2022) and
 * deepspeed-zero3-2021 (DeepSpeed v0.4's ZeRO-3), with the
 * engine's gradient path per ZeRO stage (struct stack_zero_path) and the
 * source of every count. Included by stack.c alone, which lists the rows
 * in stack_table; the model pieces they share with other families are
 * stack-private.h's.
 *
 * deepspeed: a Hugging Face model (hf-eager's pieces, stack_eager.h, separate
 *   projections and their gradient sums included: the engine does not
 *   change the model's kernels; SDPA's FlashAttention-2 on A100 and
 *   H100) trained by the DeepSpeed engine, v0.15.0 (commit 55b4cae),
 *   bf16, FusedAdam (the config's "Adam"/"AdamW" optimizer: engine.py
 *   L1332-1357). The engine's gradient path and step, per ZeRO stage
 *   (struct stack_zero_path; P the rank's parameters, P/d its partition):
 *   - which optimizer [source]: engine.py L1149 (module.bfloat16()),
 *     get_data_types L931-946 (grad_accum_dtype: fp32 without ZeRO, the
 *     model's bf16 with it), L1233-1236, L1264-1265 (BF16_Optimizer at
 *     stage 0, and at stage 1 only with an explicit fp32
 *     grad_accum_dtype), L1548-1589 (DeepSpeedZeroOptimizer at stage 1/2,
 *     partition_grads = stage 2), L1625-1660 (stage 3). zero/config.py:
 *     contiguous_gradients True L95, reduce_scatter True L101,
 *     reduce_bucket_size 5e8 L106, use_multi_rank_bucket_allreduce True
 *     L112, overlap_comm None -> stage == 3 L131, L325-327.
 *     communication_data_type: the model's bf16 (engine.py L866-877).
 *   - stage 1/2 per reduction [source] zero/stage_1_and_2.py: each
 *     gradient copied into the IPG bucket, r2 w2 (L932-956, copy_ L955);
 *     a full bucket reduced (reduce_ipg_grads L1364-1419 ->
 *     average_tensor L1044-1145): the bucket divided by d, r2 w2
 *     (L1118-1119), its slices per owning rank all-reduced together
 *     (allreduce_and_scatter L1016-1042, allreduce_bucket L1488-1517: an
 *     all-reduce of the whole bucket in bf16, no cast L1500), where the
 *     slices are several torch.cat copies the bucket first (flatten
 *     L1489, r2 w2) and each rank copies its own slices back (L1012-1014,
 *     r2 w2 of P/d); one slice is flattened and copied back as a view
 *     (PyTorch aten flatten_dense_tensors returns the one tensor's view,
 *     copy_impl exits early on the same data: TensorShape.cpp, Copy.cpp,
 *     read at an unpinned 2.x commit): 8 B/param + 4 in spanning
 *     buckets + 4 x span / d; the rank's own gradients then copied into
 *     its partition buffer, bf16, r2 w2 of P/d (copy_grads_in_partition
 *     L1328-1362, called L1410-1414). Stage 2 hooks every gradient as
 *     backward makes it (L520-521, L897-913) and reduces on every
 *     micro-batch (engine.py L1963-1965); the epilogue adds each later
 *     micro-batch's partition into the first's, bf16 add_ r4 w2 of P/d
 *     (L776-793). Stage 1 has no hooks (overlap_comm off): autograd
 *     accumulates .grad in bf16 in place on every micro-batch after a
 *     step's first, r4 w2 (PyTorch accumulate_grad.h: variable_grad +=
 *     new_grad; the first micro-batch steals the gradient), and the
 *     engine reduces once, at the boundary (engine.py L1967-1971 ->
 *     reduce_gradients L699-719), the same bucket path.
 *   - stage 3 per micro-batch [source] zero/stage3.py: hooks on every
 *     gradient (L1145-1177); each copied into the IPG bucket, r2 w2
 *     (__add_grad_to_ipg_bucket L1263-1278); a full bucket
 *     reduce-scattered (reduce_scatter default, L1302-1307 ->
 *     __avg_scatter_grads L1360-1385: bf16, no cast, no predivide) by
 *     runtime/comm/coalesced_collectives.py reduce_scatter_coalesced
 *     L81-141: torch.cat of the ranks' interleaved chunks r2 w2 (L122),
 *     div_ r2 w2 (L124), the reduce-scatter in place (L128-130): 12
 *     B/param; partition_grads (L1451-1512) copies the rank's chunk into
 *     the bf16 partition buffer on a step's first micro-batch (L1466-1467,
 *     r2 w2 of P/d; buffer dtype grad_accum_dtype, L530-532) and adds it
 *     on later ones (L1471-1472, r4 w2).
 *   - stage 0 [source] runtime/bf16_optimizer.py: every micro-batch each
 *     bf16 gradient cast to fp32 and added to the fp32 gradient buffer
 *     (_update_hp_grad L345-359, L353: .to r2 w4, add_ r8 w4 = 18
 *     B/param); at the boundary the whole fp32 buffer all-reduced by
 *     engine.py buffered_allreduce_fallback (L2502-2513 -> allreduce_bucket
 *     L2382-2407): cast to bf16 r4 w2, mul_ by 1/d r2 w2, copied back
 *     r2 w4: 16 B/param once per step (the one flat tensor needs no
 *     flatten and its copy-back exits early).
 *   - step, stages 1-3 [source]: no overflow check in bf16
 *     (stage_1_and_2.py L1832-1833, stage3.py L2000-2001); the norm per
 *     gradient tensor of the partition in fp64, g.double() r2 w8 then
 *     torch.norm r8 (stage_1_and_2.py L1691-1697, stage3.py L1782); the
 *     partition flattened r2 w2 and cast to fp32 r2 w4
 *     (stage_1_and_2.py L1888-1894, stage3.py L1883-1884);
 *     unscale_and_clip_grads scales it unconditionally, mul_ r4 w4
 *     (L1967-1982; stage3.py L2141-2150); FusedAdam on the fp32 partition
 *     (ops/adam/fused_adam.py L169-173, L191; csrc/adam/
 *     multi_tensor_adam.cu L59-62, L84-87, L120-122: r16 w12); the fp32
 *     partition copied to the bf16 parameters r4 w2 (L1915-1917;
 *     stage3.py L2032-2035), then, at stage 1/2, one all-gather of the
 *     flat bf16 buffer (L1927-1931 -> runtime/utils.py L954-968,
 *     all_gather_into_tensor). Gradients are dropped, not zeroed
 *     (zero_grad set_to_none: L1636-1651, stage3.py L1722-1739; engine.py
 *     L2137-2140): 18 + 4 + 6 + 8 = 36 B/param of P/d beyond the 34 of a
 *     fused Adam and its bf16 copy, 5 kernels (flatten, cast, scale,
 *     Adam, copy) and two per gradient tensor of the partition for the
 *     norm, not counted (a Llama 2 7B partition at d = 8 holds about 37).
 *   - step, stage 0 [source] bf16_optimizer.py step L294-327: the norm
 *     of every fp32 gradient, r4 (runtime/utils.py L873-877; .float() of
 *     fp32 is the tensor), clipping only when the norm exceeds the
 *     maximum (utils.py L918-936, not counted, as Megatron's), FusedAdam
 *     and the bf16 copy (L436-449), the fp32 buffer zeroed, w4
 *     (clear_hp_grads L451-456): 8 B/param beyond. BF16_Optimizer shards
 *     the fp32 master, the Adam states and the step over the d ranks
 *     (L147-156) and all-gathers the bf16 parameters after it (L445-449),
 *     as ZeRO-1 does: ddlsim's zero = 0 plan prices Adam on every
 *     parameter and no gather (a framework fact not modelled here).
 *   - kernels per block op [derived]: one copy_ or add_ per weight tensor
 *     (a block taken as four: HF Llama's q, k, v, o; its MLP has three);
 *     the per-bucket div_, cat and copy-backs (a handful per 5e8
 *     parameters) in one more; stage 0's three casts per step over the
 *     whole buffer: no launch of their own.
 *   Not counted: ZeRO-3's parameter gathers coalesce the tensors fetched
 *   together into one all-gather with a torch.cat of the local chunks
 *   (zero/partition_parameters.py L1145-1178) and copy each gathered
 *   tensor out of it, r2 w2 per element, on the compute stream (L683-704;
 *   a lone tensor is gathered in place, L1227-1248); a parameter of more
 *   than 5e8 elements skips the stage 1/2 bucket copy (L949-951). Host
 *   issue time as the other torch stacks.
 *
 * megatron-deepspeed: BigScience's Megatron-DeepSpeed as BLOOM-176B (tr11)
 *   ran it in March 2022: bigscience-workshop/Megatron-DeepSpeed affff3d2
 *   (2022-03-17) under DeepSpeed's olruwase/bf16-updates branch
 *   (microsoft/DeepSpeed 2cd21f15c, 2022-03-17; merged as #1801),
 *   PyTorch 1.11, unfused attention (bigscience train/tr11-176B-ml/
 *   README.md "Software", chronicles.md 2022-03-18 and 2022-04-04).
 *   - LayerNorm [source]: MixedFusedLayerNorm (model/fused_layer_norm.py
 *     L62-90, switched to in b9883f44) runs megatron/fused_kernels/
 *     layer_norm_cuda_kernel.cu: forward one cuApplyLayerNorm (L678, read
 *     x, write y: 4 B/el); backward cuComputePartGradGammaBeta (L751,
 *     reads dy and x), cuComputeGradGammaBeta (L764, the partial sums)
 *     and cuComputeGradInput (L782, reads dy and x, writes dx): 10 B/el
 *     in 3 kernels.
 *   - GELU [source]: model/fused_bias_gelu.py L32-58, torch.jit.script
 *     bias_gelu (read 2, write 2); backward bias_gelu_back (read g and
 *     y, write 2) returns the same tensor for the input and the bias
 *     (L58), and [derived] autograd sums it over the tokens for the
 *     bias (read 2): 8 B/el in 2 kernels.
 *   - residual: bias_dropout_add as megatron-te's count (6 B/el, the
 *     mask's byte added where the model has dropout, workload.c); the
 *     fusion of its dropout by PyTorch 1.11's default JIT fuser was not
 *     read.
 *   - ALiBi [source]: model/transformer.py ParallelAttention.forward
 *     (affff3d2): the score GEMM is torch.baddbmm(alibi slice, q, k^T,
 *     beta = 1 / layer_number, ...) into a fresh tensor; PyTorch's
 *     baddbmm_out_cuda_impl (aten/src/ATen/native/cuda/Blas.cpp of the
 *     1.1x releases, read at an unpinned commit) copies the expanded
 *     bias into the result when beta != 0 (w2 per score) and cuBLAS
 *     reads it back as C (r2): 4 B per score, 1 kernel, forward only.
 *   - softmax [source]: FusedScaleMaskSoftmax takes the upper-triangular
 *     kernel (ScaledUpperTriangMaskedSoftmax; --abort-on-unmet-fused-
 *     kernel-constraints in the tr11 slurm script): workload.c's softmax
 *     (2 touches forward, 3 backward); attention dropout as workload.c.
 *   - loss [source]: GPTModelPipe appends float16_to_fp32 after the
 *     logits (model/gpt_model.py, the last spec: r2 w4), then
 *     mpu/cross_entropy.py L31 (max: r4), L36 (sub_: r4 w4), L69 (exp,
 *     out=: r4 w4), L70 (sum: r4), L79 (div_: r4 w4): 38 B/logit in 6
 *     kernels, megatron-te's count; backward mul_ (r4 w4) and the cast
 *     back (r4 w2): 14.
 *   - gradients and step [source]: BF16_Optimizer at 2cd21f15c
 *     (runtime/bf16_optimizer.py), the tr11 config's ZeRO stage 0 ("bf16
 *     must use z0! it implements its own zero stage 1 equivalent",
 *     tr11-176B-ml.slurm): after each micro-batch's backward the
 *     pipeline engine calls update_hp_grads (pipe/engine.py
 *     _exec_backward_pass; bf16_optimizer.py update_hp_grads: each bf16
 *     gradient .to(fp32) r2 w4 and add_ into the fp32 buffer r8 w4 = 18
 *     B/param, 2 kernels per tensor: a BLOOM block's attention and MLP
 *     have 6 tensors each, weights and biases of two linears and a
 *     LayerNorm); at the step boundary the whole fp32 buffer all-reduced
 *     by engine.py _bf16_reduce_grads -> buffered_allreduce_fallback ->
 *     allreduce_bucket (cast to communication_data_type, which is bf16
 *     for bf16 at stage 0, engine.py communication_data_type; mul_ by
 *     1/d; copy back): 16 B/param once per step, as v0.15's stage 0
 *     (deepspeed above); step(): the fp32 gradients' norm r4, FusedAdam
 *     on the rank's 1/d partition, the bf16 copy and an all-gather of
 *     the bf16 parameters (all_gather_dp_groups), clear_hp_grads w4: 8
 *     B/param beyond Adam. ddlsim's zero = 1 plan holds what this
 *     optimizer shards (fp32 master, moments: 1/d) and its gather; its
 *     reduction is a reduce-scatter where BF16_Optimizer all-reduces in
 *     bf16 (the same bytes on the wire as a reduce-scatter in fp32).
 *     zero = 0 and 1 both take this path; 2 and 3 (which this
 *     BF16_Optimizer refused, pipe/engine.py _exec_reduce_grads) take
 *     DeepSpeed v0.15's.
 *   - pipeline [source] runtime/pipe/engine.py (2cd21f15c): with TP > 1
 *     is_pipe_partitioned and is_grad_partitioned (L130-132);
 *     _exec_forward_pass (L622-699) rebuilds the received input with
 *     PartitionedTensor.full() (an all-gather over the TP group) and
 *     keeps only its 1/t part of the output to send; _exec_backward_pass
 *     (L701-775) all-gathers the output and the received gradient;
 *     _exec_send_activations / _exec_send_grads (L937-1030) send 1/t
 *     (and the partition's small meta tensor, not counted);
 *     runtime/pipe/p2p.py send/recv (L48-83) call dist.send/dist.recv
 *     (torch >= 1.8) without async_op: the compute stream waits for each
 *     message. Not modelled: the receive is posted only when the engine
 *     reaches it (a rendezvous with the blocked sender); ddlsim posts it
 *     ahead, as for Megatron.
 *   Host issue time as the other torch stacks. Unfused attention's
 *   causal softmax as megatron-te's (the same kernel).
 *
 * deepspeed-zero3-2021: ZeRO-3 as DeepSpeed ran it from v0.3.15 (April
 *   2021, ZeRO-Infinity's release) to v0.5.x: the lines below are read at
 *   v0.4.0 (2d302d6, 2021-06-08) and are unchanged in v0.3.15 (2c2a7f3)
 *   and v0.5.0 (f284324) but for their numbers (fetch_sub_module,
 *   _synchronize_communication, _allgather_param and its synchronize
 *   are there in all three). From v0.5.5 (91defd7, 2021-11-02;
 *   partition_parameters.py L500-503) the gather is
 *   torch.distributed._all_gather_base where torch has it, without the
 *   copy out below; its synchronize stays (L882 at v0.5.10). fp16. The
 *   model's pieces are
 *   megatron-lm-2021's (Megatron-LM v2.5, apex kernels), as the
 *   ZeRO-3 examples of the year ran Megatron-LM GPT models; the
 *   v1.1.5 fork those examples carried was not read.
 *   - config defaults [source] zero/constants.py L56 reduce_scatter True,
 *     L60 stage-3 overlap_comm True, L64 stage-3 contiguous_gradients
 *     False, L67 reduce_bucket_size 5e8, L98 max_live_parameters 1e9,
 *     L102 max_reuse_distance 1e9, L105 prefetch_bucket_size 5e7, L111
 *     param_persistence_threshold 1e5; zero/config.py L89-92, L105-108
 *     take the stage-3 defaults; engine.py L929-943 passes them on.
 *   - gathers, one per parameter [source] zero/stage3.py
 *     fetch_sub_module L390-446: the module's NOT_AVAILABLE parameters
 *     all-gathered with async_op=True (L435), then, when any was
 *     gathered or in flight, _synchronize_communication (L438-439,
 *     L521-530: handle.wait, comm_stream.synchronize() L528,
 *     torch.cuda.synchronize() L529); _all_gather (L510-519) on the
 *     fetch stream (L707: a stream of its own with overlap_comm) calls
 *     zero/partition_parameters.py _all_gather (L618-642), which with
 *     async_op runs _allgather_param per parameter (L626-632): the
 *     flat tensor of aligned_size = numel padded up to a multiple of
 *     the ranks (L593-598) zeroed (torch.zeros L806-808: w2 per
 *     element), torch.cuda.synchronize() (L813: the host waits for the
 *     whole device, every stream), the rank's partition copied in
 *     (L829, r2 w2 of aligned / d), torch.distributed.all_gather of a
 *     list of d views (L831-834). PyTorch's ProcessGroupNCCL::allgather
 *     of a list (pytorch/pytorch 00f5dfd5, torch/lib/c10d/
 *     ProcessGroupNCCL.cpp, the 1.8/1.9 c10d) gathers into a
 *     flatten_for_scatter_gather buffer and copies each output view out
 *     of it on the NCCL stream (outputTensors[i][j].copy_: r2 w2 per
 *     element), one copy_ per rank's view: d kernels per gather, each
 *     at the GPU's kernel latency, issued by the host from C++ at the
 *     stack's backward issue time (TORCH_HOST_ISSUE), the slower of the
 *     two (sim/build_transformer_ds2021.c). Per gather: 2 + 4 / d B per
 *     element before it, 4 after.
 *   - prefetch [source] stage3.py pre_sub_module_forward_function
 *     L1517-1539 and pre_sub_module_backward_function L1552-1560: fetch,
 *     then prefetch_next_sub_modules (L342-367) only when no handle is
 *     in flight and fewer elements than max_live_parameters (L98: 1e9,
 *     passed to the coordinator at L711) are available, the module's
 *     own among them (L349), and the trace of the first step is complete
 *     (L345, finish_tracing L2552): get_params_to_prefetch (L202-232)
 *     takes the next NOT_AVAILABLE parameters of the trace until their
 *     elements reach prefetch_bucket_size (the one crossing it
 *     included), gathered by the same _allgather_param, so each waits
 *     for the device (L813) and thus for the previous one; the module's
 *     compute is issued after the last is launched, beside it; the next
 *     module's fetch synchronises on it. A module's parameters are
 *     released after it runs (release_sub_module L448-498) unless the
 *     module is used again within max_reuse_distance elements, the
 *     parameters of the modules between the two uses in the trace
 *     (_keep_for_later L500-508, get_reuse_distance_in_numel L236-274,
 *     _distance_in_numel L276-285; a module is one Linear: of a
 *     recomputed layer the Linears used again by the backward within
 *     1e9 elements are kept, of GPT 175B's and 530B's only the last),
 *     persistent ones (< 1e5) never released.
 *   - gradients [source] stage3.py reduce_independent_p_g_buckets_and_
 *     remove_grads L1879-1916: a parameter's gradient joins the bucket
 *     (no copy: contiguous_gradients off); a bucket past
 *     reduce_bucket_size elements is reduced (reduce_ipg_grads
 *     L2158-2189): without contiguous_gradients buffered_reduce_fallback
 *     (L2176-2179, L2315-2326) -> allreduce_and_copy (L2291-2296) ->
 *     allreduce_bucket (L2263-2289): flatten r2 w2, div_ by d r2 w2, an
 *     all_reduce of the whole bucket in fp16 (L2279: rank None), copied
 *     back r2 w2: 12 B/param and an all-reduce where v0.15
 *     reduce-scatters. partition_previous_reduced_grads (L2053-2150)
 *     then copies the rank's slice into its partition buffer on a step's
 *     first micro-batch (partition_parameters.py _partition_gradient
 *     L1015, r2 w2 of P/d) and adds it on later ones (L1020, r4 w2).
 *   - memory [source] the same lines (models/memory_ds2021.c): per-Linear
 *     gathers and the full fp16 gradients of the IPG path, in place of
 *     FSDP's two gathered layers and two buckets (dp > 1, tp = cp = 1,
 *     dense).
 *   Stages 0-2 and the step's bytes are the deepspeed stack's (v0.15.0),
 *   not re-read at v0.4.0 (a 1,024-rank partition's step is small).
 *   Not modelled: the Python hooks' time per module (no kernel-level or
 *   profiled public measurement of DeepSpeed 0.4's hooks was found) and
 *   the time of each torch.cuda.synchronize() itself (its effect, the
 *   serialisation, is modelled); the first step's trace (no prefetch);
 *   prefetch across the end of a pass (into backward); the host waiting
 *   for the previous bucket's all-reduce before the next (L2159-2160);
 *   the embedding's and head's gathers (as for v0.15). The per-parameter
 *   gathers need tp = cp = 1, as the per-tensor model of v0.15 does; with
 *   tensor or context parallelism the gathers stay one per layer (FSDP's
 *   shape) and only the gradient path above applies. */
#ifndef DDLSIM_STACK_DEEPSPEED_H
#define DDLSIM_STACK_DEEPSPEED_H

#include "stack-private.h"
#include "stack_megatron.h"  /* MEGATRON_2021_PIECES */

/* DeepSpeed v0.15.0's engine per ZeRO stage (the deepspeed block above):
 * stage 0 BF16_Optimizer, 1 and 2 DeepSpeedZeroOptimizer, 3 stage3.py.
 * Beyond Adam in stages 1-3: the fp64 norm 18, flatten 4, fp32 cast 6,
 * scale 8. */
#define DS_ZERO_STEP_BPP (18 + 4 + 6 + 8)
/* BF16_Optimizer: the fp32 accumulation after every micro-batch (kernels
 * per block op: two per gradient tensor), the cast-scale-copy around the
 * step's all-reduce, the norm and the zeroing. */
#define DS_BF16_PATH(kernels) \
	{ .accum_every_Bpp = 6 + 12, .accum_kernels = (kernels), \
	  .reduce_Bpp = 6 + 4 + 6, .reduce_kernels = 0, \
	  .optimizer_Bpp = 4 + 4, .optimizer_kernels = 3 }
#define DS_ZERO2_PATH \
	{ .accum_shard_Bpp = 6, .accum_kernels = 1, .reduce_every_mb = true, \
	  .reduce_Bpp = 4 + 4, .span_Bpp = 4, .span_shard_Bpp = 4, .shard_Bpp = 4, \
	  .reduce_kernels = 5, \
	  .optimizer_Bpp = DS_ZERO_STEP_BPP, .optimizer_kernels = 5 }
#define DS_ZERO3_PATH \
	{ .accum_shard_Bpp = 6, .accum_kernels = 1, .reduce_every_mb = true, \
	  .reduce_Bpp = 4 + 4 + 4, .shard_first_Bpp = 4, .reduce_kernels = 5, \
	  .optimizer_Bpp = DS_ZERO_STEP_BPP, .optimizer_kernels = 5 }
static const struct stack_zero_path deepspeed_zero[4] = {
	DS_BF16_PATH(8),
	{ .accum_later_Bpp = 6, .accum_kernels = 4,
	  .reduce_Bpp = 4 + 4, .span_Bpp = 4, .span_shard_Bpp = 4, .shard_Bpp = 4,
	  .reduce_kernels = 5,
	  .optimizer_Bpp = DS_ZERO_STEP_BPP, .optimizer_kernels = 5 },
	DS_ZERO2_PATH,
	DS_ZERO3_PATH,
};
/* Megatron-DeepSpeed of 2022 (tr11): BF16_Optimizer, its own ZeRO-1, at
 * ddlsim's stages 0 and 1 (12 gradient tensors per BLOOM block: 2 x 6
 * kernels per block op); later engines' stages 2 and 3. */
static const struct stack_zero_path megatron_ds_zero[4] = {
	DS_BF16_PATH(12), DS_BF16_PATH(12), DS_ZERO2_PATH, DS_ZERO3_PATH,
};

/* DeepSpeed v0.4.0's stage 3 (the deepspeed-zero3-2021 block above) moves
 * the bytes of DS_ZERO3_PATH: no copy into the IPG bucket; flatten, div_
 * and copy back around each bucket's all-reduce (12 B/param); the rank's
 * slice copied into its partition (first micro-batch) or added to it
 * (later ones). Its stages 0-2 are 0.15's (not re-read at v0.4.0): the
 * row takes deepspeed_zero whole; the all-reduce in place of the
 * reduce-scatter is the builder's (ds_zero3_2021). */
#define STACK_DEEPSPEED_ZERO3_2021 \
	{ "deepspeed-zero3-2021", "DeepSpeed v0.4 ZeRO-3 of 2021 (per-parameter gathers behind torch.cuda.synchronize, fp16 bucket all-reduce; Megatron-LM 2021 kernels)", \
	  MEGATRON_2021_PIECES, .zero_path = deepspeed_zero, .ds_zero3_2021 = true, \
	  .source = "microsoft/DeepSpeed v0.4.0 (2d302d6) deepspeed/runtime/zero/stage3.py " \
		    "L202-232, L342-446, L500-530, L707, L1517-1560, L1879-1916, L2053-2189, " \
		    "L2263-2326; runtime/zero/partition_parameters.py L593-642, L791-838, " \
		    "L1015-1020; runtime/zero/constants.py L56-111; pytorch/pytorch 00f5dfd5 " \
		    "torch/lib/c10d/ProcessGroupNCCL.cpp (allgather of a list); model pieces as " \
		    "megatron-lm-2021" }

#define STACK_DEEPSPEED \
	{ "deepspeed", "Hugging Face eager model under the DeepSpeed 0.15 engine (bf16, ZeRO, FusedAdam)", \
	  HF_EAGER_PIECES, EAGER_SPLIT_PROJECTIONS, \
	  .loss = EAGER_LOSS, .repeat_kv = true, .loss_peak_Bpl = TORCH_CE_FP32_PEAK_BPL, \
	  /* no fp32 main gradient: the engine's ops (zero_path) instead */ \
	  .main_grad_Bpp = 0, .main_grad_kernels = 1, \
	  .optimizer_Bpp = DS_ZERO_STEP_BPP, .optimizer_copy16 = true, .optimizer_kernels = 5, \
	  .zero_path = deepspeed_zero, \
	  .attn_ampere = ATTN_BE_FA2, .attn_hopper = ATTN_BE_FA2, \
	  .host_issue_us = TORCH_HOST_ISSUE, \
	  .source = "microsoft/DeepSpeed v0.15.0 (55b4cae) deepspeed/runtime/engine.py L931-946, " \
		    "L1233-1265, L1548-1660, L1960-1974; runtime/zero/stage_1_and_2.py L932-956, " \
		    "L1044-1145, L1328-1419, L1488-1517, L1823-1941; runtime/zero/stage3.py " \
		    "L1263-1316, L1360-1385, L1451-1512, L2049-2150; runtime/bf16_optimizer.py " \
		    "L294-456; ops/adam/fused_adam.py, csrc/adam/multi_tensor_adam.cu; model pieces " \
		    "as hf-eager" }

#define STACK_MEGATRON_DEEPSPEED \
	{ "megatron-deepspeed", "BigScience Megatron-DeepSpeed of 2022 (BLOOM tr11: apex LayerNorm, unfused attention, BF16_Optimizer)", \
	  .rmsnorm = TE_NORM, .layernorm = FWD_BWD(4, 10, 1, 3), \
	  .rope = FWD_BWD(4, 4, 2, 2), .swiglu = EAGER_SWIGLU, .gelu = FWD_BWD(4, 8, 1, 2), \
	  .residual = EAGER_RESIDUAL, .loss = FWD_BWD(38, 14, 6, 2), \
	  .alibi_bias = FWD_BWD(4, 0, 1, 0), .pipe_partitioned = true, \
	  .causal_softmax = MEGATRON_CAUSAL_SOFTMAX, .causal_softmax_max_seq = 4096, \
	  /* no fp32 main gradient of Megatron's: BF16_Optimizer's (zero_path) */ \
	  .main_grad_Bpp = 0, .main_grad_kernels = 1, \
	  .optimizer_Bpp = 8, .optimizer_copy16 = true, .optimizer_kernels = 3, \
	  .zero_path = megatron_ds_zero, \
	  .attn_ampere = ATTN_BE_FA2, .attn_hopper = ATTN_BE_FA2, \
	  .host_issue_us = TORCH_HOST_ISSUE, \
	  .source = "bigscience-workshop/Megatron-DeepSpeed affff3d2 megatron/model/fused_layer_norm.py " \
		    "L62-90, megatron/fused_kernels/layer_norm_cuda_kernel.cu L678, L751-782, " \
		    "megatron/model/fused_bias_gelu.py L32-58, megatron/model/transformer.py " \
		    "(ALiBi baddbmm), megatron/model/gpt_model.py (float16_to_fp32), " \
		    "megatron/mpu/cross_entropy.py L31-79; microsoft/DeepSpeed 2cd21f15c " \
		    "deepspeed/runtime/bf16_optimizer.py (update_hp_grads, step, clear_hp_grads), " \
		    "runtime/pipe/engine.py (_exec_backward_pass, _bf16_reduce_grads), " \
		    "runtime/engine.py (communication_data_type, allreduce_bucket)" }

#endif
