/* framework: preset defaults of training stacks (see framework.h).
 *
 * Each row states the defaults of one stack at one version and cites where
 * each value is read: a file of the public repository at a named tag
 * (commit), or a documentation page. Every value below is marked
 * [source] (read in that file at that tag) or [docs]; none is from memory.
 * Values that the stacks leave to the model code (the attention kernel)
 * are what their reference recipes run.
 *
 * megatron-core 0.9 (github.com/NVIDIA/Megatron-LM, tag core_v0.9.0 = tag
 * core_r0.9.0, commit 1afee59; the branch core_r0.9.0 moved on later):
 *   - grad reduce dtype [source]: megatron/training/arguments.py
 *     validate_args: "if args.bf16: ... bfloat16 requires gradient
 *     accumulation and all-reduce to be done in fp32" sets
 *     accumulate_allreduce_grads_in_fp32 = True; fp16 leaves
 *     --accumulate-allreduce-grads-in-fp32 at its default (store_true, off).
 *     megatron/training/training.py get_model passes it on as
 *     DistributedDataParallelConfig.grad_reduce_in_fp32, and
 *     megatron/core/distributed/distributed_data_parallel.py keeps grads in
 *     torch.float when grad_reduce_in_fp32, else in param.dtype.
 *   - bucket [source]: megatron/core/distributed/distributed_data_parallel_config.py
 *     "bucket_size: Optional[int] = None ... If unspecified, MCore uses a
 *     default value of max(40000000, 1000000 * dp_size) parameters";
 *     distributed_data_parallel.py applies it, then sets bucket_size = None
 *     (one bucket for all gradients) when overlap_grad_reduce is False, which
 *     is what the simulator does without overlap (one reduce after backward).
 *   - overlap_grad_reduce, overlap_param_gather, use_distributed_optimizer
 *     [source]: all False in distributed_data_parallel_config.py; the
 *     arguments.py flags --overlap-grad-reduce, --overlap-param-gather,
 *     --use-distributed-optimizer are store_true (opt-in).
 *   - attention [source]: arguments.py --transformer-impl default
 *     "transformer_engine", i.e. Transformer Engine's DotProductAttention,
 *     which picks its flash / cuDNN fused backend itself (TE's choice, not
 *     read here). 0.9 has no --attention-backend flag (it first appears in
 *     core_v0.11.0).
 * nemo 2.0 (github.com/NVIDIA/NeMo, tag v2.0.0, commit e938df3; its
 *   Dockerfile.ci pins Megatron-LM MCORE_TAG=core_r0.9.0):
 *   - grad reduce dtype [source]: nemo/lightning/pytorch/plugins/mixed_precision.py
 *     MegatronMixedPrecision(grad_reduce_in_fp32=True) by default, and
 *     MegatronStrategy overwrites the DDP config's grad_reduce_in_fp32 with
 *     the plugin's (update_config_with_dtype_overrides); the recipes' plugins
 *     in nemo/collections/llm/recipes/precision/mixed_precision.py set it
 *     True for bf16_mixed() (and bf16_with_fp8_mixed()) and False for
 *     fp16_mixed(): fp32 for bf16 and fp8 runs, fp16 for fp16 runs.
 *   - overlaps [source]: nemo/collections/llm/recipes/llama3_70b.py trainer()
 *     DistributedDataParallelConfig(check_for_nan_in_grad=True,
 *     grad_reduce_in_fp32=True, overlap_grad_reduce=True,
 *     overlap_param_gather=True, average_in_collective=True);
 *   - ZeRO-1 [source]: recipes/optim/adam.py
 *     distributed_fused_adam_with_cosine_annealing: OptimizerConfig(
 *     use_distributed_optimizer=True), copied into the DDP config by
 *     nemo/lightning/pytorch/strategies/megatron_strategy.py;
 *   - bucket [source]: the recipe sets no bucket_size: Megatron-Core 0.9's
 *     default (above);
 *   - attention [source]: nemo/collections/llm/gpt/model/base.py
 *     default_layer_spec uses Megatron-Core's Transformer Engine spec when
 *     Transformer Engine is installed.
 * deepspeed 0.15 (github.com/microsoft/DeepSpeed, tag v0.15.0, commit
 *   55b4cae; the lines cited are unchanged through v0.15.4):
 *   - zero stage [source]: deepspeed/runtime/zero/config.py
 *     "stage: ZeroStageEnum = 0";
 *   - overlap_comm [source]: same file, "overlap_comm: Optional[bool] = None"
 *     resolved by overlap_comm_valid to (stage == 3): false at stage 0;
 *     stage 0 reduces once at the gradient-accumulation boundary
 *     (deepspeed/runtime/engine.py allreduce_gradients);
 *   - bucket [source]: at stage 0, engine.py allreduce_gradients(bucket_size=
 *     MEMORY_OPT_ALLREDUCE_SIZE = 500000000) -> buffered_allreduce_fallback
 *     in buckets of that many elements; zero_optimization.reduce_bucket_size
 *     (stage 1/2) also defaults to 5e8 elements (zero/config.py);
 *   - grad reduce dtype [source]: communication_data_type default None
 *     (deepspeed/runtime/constants.py COMMUNICATION_DATA_TYPE_DEFAULT), which
 *     engine.py communication_data_type resolves to fp16 when fp16 is
 *     enabled, bf16 when bf16 is, else fp32: the model's dtype (bf16 at
 *     stage 0 accumulates in fp32 by default, get_data_types, but
 *     allreduce_bucket casts to bf16 for the collective);
 *   - ZeRO-3 defaults [source, zero/config.py; used below]:
 *     stage3_prefetch_bucket_size 5e7, stage3_max_live_parameters 1e9,
 *     stage3_param_persistence_threshold 1e5 (elements).
 * deepspeed 0.4 (github.com/microsoft/DeepSpeed, tag v0.4.0, commit
 *   2d302d6, 2021-06-08; ZeRO-3 as of 2021, stack deepspeed-zero3-2021,
 *   whose block in models/stack_deepspeed.h cites the lines):
 *   - zero stage [source]: deepspeed/runtime/zero/constants.py
 *     ZERO_OPTIMIZATION_STAGE_DEFAULT = disabled (L50);
 *   - grad reduce dtype [source]: stage3.py allreduce_bucket reduces the
 *     fp16 gradients as they are (allreduce_always_fp32 off): the model's;
 *   - bucket [source]: constants.py L67 reduce_bucket_size 5e8 elements;
 *     stage 3's overlap_comm True (L60, config.py L105-108);
 *   - ZeRO-3 granularity [source]: one gather per parameter, prefetch
 *     5e7 elements (L105), max_reuse_distance 1e9 (L102),
 *     param_persistence_threshold 1e5 (L111); max_live_parameters 1e9
 *     (L98), stage3.py L711 passes it to the coordinator, which
 *     prefetches only while fewer elements are available (L349);
 *   - attention: unfused (the year's Megatron-LM models; FlashAttention
 *     was published in 2022).
 * fsdp2 (PyTorch 2.5: torch.distributed._composable.fsdp; the public page
 *   pytorch.org/docs/stable/distributed.fsdp.fully_shard.html was created
 *   on Dec 04, 2024, after 2.5, and documents the later
 *   torch.distributed.fsdp path). Read [source] in
 *   torch/distributed/_composable/fsdp/ of github.com/pytorch/pytorch at
 *   stored commits from before 2.6 moved it (fully_shard.py 012c62d,
 *   _fsdp_api.py 0b2c60e), not at tag v2.5.0 (the repository was too large
 *   to fetch here):
 *   - ZeRO-3: fully_shard shards parameters, "and in turn, so are their
 *     gradients and optimizer states"; reshard_after_forward=True (frees
 *     parameters after forward, all-gathers again in backward); "Each
 *     group's parameters and its gradients are communicated together in one
 *     collective": one all-gather and one reduce-scatter per wrapped module
 *     (a transformer block);
 *   - grad reduce dtype: MixedPrecisionPolicy(param_dtype=None,
 *     reduce_dtype=None): reduce in the compute (parameter) dtype;
 *   - overlap: collectives on their own streams; backward prefetches one
 *     module implicitly (_fsdp_param_group.py _backward_prefetch, reverse
 *     post-forward order).
 * torchtitan 0.1 (github.com/pytorch/torchtitan, tag v0.1.0, commit f7084fc,
 *   2025-06-17):
 *   - grad reduce dtype [source]: torchtitan/config_manager.py
 *     training.mixed_precision_reduce default "float32"
 *     (mixed_precision_param "bfloat16"), passed to
 *     MixedPrecisionPolicy(param_dtype, reduce_dtype) by apply_fsdp;
 *   - ZeRO-3 [source]: parallelism.data_parallel_shard_degree default -1
 *     (all leftover ranks); torchtitan/models/llama3/infra/parallelize.py
 *     apply_fsdp calls fully_shard per transformer block, then on the root
 *     (fsdp_reshard_after_forward "default": the last block and, without
 *     PP, the root keep their parameters after forward);
 *   - attention [source]: torchtitan/models/llama3/model/args.py
 *     use_flex_attn False -> torchtitan/models/attention.py
 *     ScaledDotProductAttention: F.scaled_dot_product_attention with
 *     backends FLASH_ATTENTION, EFFICIENT_ATTENTION, MATH (cuDNN first on
 *     compute capability 10.0).
 *
 * ZeRO-3 collective granularity:
 *   - DeepSpeed 0.15 (deepspeed/runtime/zero/config.py): prefetch_bucket_size
 *     (stage3_prefetch_bucket_size) 5e7 elements, param_persistence_threshold
 *     1e5, max_live_parameters 1e9, max_reuse_distance 1e9, reduce_bucket_size
 *     5e8. PartitionedParameterCoordinator.fetch_sub_module all-gathers a
 *     submodule's partitioned parameters when it runs and prefetches the next
 *     ones in the recorded trace while fewer than prefetch_bucket_size
 *     elements are in flight; a parameter whose next use is within
 *     max_reuse_distance elements is kept. Every nn.Linear weight is one
 *     submodule's tensor (HF Llama: q, k, v, o, gate, up, down; GPT-style
 *     fused qkv: 4); norms and biases (< 1e5 elements) persist whole.
 *     max_live_parameters (1e9) is not binding while a prefetch window
 *     (5e7) and a layer fit in it, which holds for every shipped model.
 *   - FSDP2 / TorchTitan (torch/distributed/_composable/fsdp): one
 *     all-gather per fully_shard unit (foreach_all_gather into one flat
 *     buffer), implicit prefetch of the next unit in forward and backward
 *     (one unit in flight ahead; FSDP1's limit_all_gathers allows two);
 *     one reduce-scatter per unit.
 *   - Megatron-Core 0.9 has no ZeRO-3 (its FSDP came later): a zero = 3 plan
 *     under megatron-core / nemo gathers per unit, as FSDP.
 * Work on each gradient bucket before its reduction (bucket_nan_check,
 *   bucket_scale) [source]: Megatron-Core's DDP, core_v0.9.0
 *   megatron/core/distributed/param_and_grad_buffer.py L223-243
 *   (start_grad_sync: check_for_nan_in_grad() takes grad_data.norm(p=2) of
 *   every bucket of the group, L132-140; then grad_data *=
 *   gradient_scaling_factor where it is not 1), the same at Megatron-LM
 *   f2e5db40 (the commit of the README's H100 table), L109-123 per bucket.
 *   megatron/training/training.py L528-530 passes check_for_nan_in_grad =
 *   --check-for-nan-in-loss-and-grad (on: the flag is
 *   --no-check-for-nan-in-loss-and-grad, store_false, arguments.py L1092)
 *   and average_in_collective = --ddp-average-in-collective (off,
 *   store_true, L1554); distributed_data_parallel.py then sets the
 *   scaling factor to 1 / dp when the collective does not average. NeMo
 *   2.0's recipe DDP config (above) has check_for_nan_in_grad=True and
 *   average_in_collective=True: the norm, no scaling. The other presets
 *   run neither on the compute stream.
 * Launch overhead: the host cost of one collective issued through c10d's
 *   ProcessGroupNCCL, from a published torch.profiler table of FSDP on
 *   multi-node A100 (github.com/pytorch/pytorch/issues/102434, 2023-05-29):
 *   c10d::_allgather_base_ 810 calls, 61.336 ms CPU total = 75.7 us per call
 *   (record_param_comms included). Every preset issues its data-parallel
 *   collectives through c10d, so all carry it; DeepSpeed's per-submodule
 *   hook bookkeeping on top of it is not in a published profile and is
 *   left out (the figure is a lower bound there).
 * Kernel stacks (stack.h, cited in stack_*.h): Megatron-Core and NeMo run
 *   Transformer Engine's fused kernels (megatron-te); DeepSpeed and FSDP2
 *   wrap whatever model code they are given, most often a Hugging Face
 *   model run eagerly: FSDP2 as it is (hf-eager), DeepSpeed with its
 *   engine's gradient hooks, reduce buckets and ZeRO optimizer step
 *   (deepspeed: hf-eager's pieces plus the engine's, per ZeRO stage);
 *   TorchTitan its own eager Llama. */
#include "framework.h"

#include <stdio.h>
#include <string.h>

/* Host cost of one c10d collective call (see above). */
#define C10D_LAUNCH_S 75.7e-6
#define C10D_LAUNCH_SRC "github.com/pytorch/pytorch/issues/102434: torch.profiler, " \
	"c10d::_allgather_base_ 61.336 ms CPU total over 810 calls"

const struct framework framework_table[] = {
	{ "megatron-core", "0.9", "NVIDIA Megatron-Core (Megatron-LM's defaults)",
	  GRAD_FP32_IF_BF16, BUCKET_MCORE, 0, false, false, 0, ATTN_FLASH,
	  "Megatron-LM core_v0.9.0 (1afee59): megatron/training/arguments.py (bf16 forces "
	  "accumulate_allreduce_grads_in_fp32; --transformer-impl transformer_engine), "
	  "megatron/core/distributed/distributed_data_parallel_config.py (bucket_size "
	  "max(40e6, 1e6 dp) params; overlap_grad_reduce, overlap_param_gather, "
	  "use_distributed_optimizer False)",
	  GATHER_PER_UNIT, 0, 0, 0, C10D_LAUNCH_S, C10D_LAUNCH_SRC, "megatron-te", true, true, 0 },
	{ "nemo", "2.0", "NVIDIA NeMo 2.0 LLM recipes (on Megatron-Core 0.9)",
	  GRAD_FP32_IF_BF16, BUCKET_MCORE, 0, true, true, 1, ATTN_FLASH,
	  "NeMo v2.0.0 (e938df3): nemo/collections/llm/recipes/llama3_70b.py (DDP config "
	  "overlap_grad_reduce, overlap_param_gather True), recipes/optim/adam.py "
	  "(use_distributed_optimizer True), recipes/precision/mixed_precision.py "
	  "(grad_reduce_in_fp32 True for bf16_mixed, False for fp16_mixed), "
	  "nemo/lightning/pytorch/plugins/mixed_precision.py",
	  GATHER_PER_UNIT, 0, 0, 0, C10D_LAUNCH_S, C10D_LAUNCH_SRC, "megatron-te", true, false, 0 },
	{ "deepspeed", "0.15", "Microsoft DeepSpeed (ZeRO config defaults)",
	  GRAD_AS_PARAMS, BUCKET_ELEMENTS, 5e8, false, false, 0, ATTN_FLASH,
	  "DeepSpeed v0.15.0 (55b4cae): deepspeed/runtime/zero/config.py (stage 0, "
	  "overlap_comm false below stage 3, reduce_bucket_size 5e8 elements), "
	  "deepspeed/runtime/engine.py (stage-0 allreduce buckets 5e8 elements; "
	  "communication_data_type None -> the fp16/bf16 model dtype; stage3_prefetch_bucket_size 5e7, "
	  "stage3_param_persistence_threshold 1e5, stage3_max_reuse_distance 1e9)",
	  GATHER_PER_TENSOR, 5e7, 1e9, 1e5, C10D_LAUNCH_S, C10D_LAUNCH_SRC, "deepspeed", false, false, 0 },
	{ "deepspeed", "0.4", "Microsoft DeepSpeed of 2021 (v0.4 ZeRO config defaults)",
	  GRAD_AS_PARAMS, BUCKET_ELEMENTS, 5e8, false, false, 0, ATTN_UNFUSED,
	  "DeepSpeed v0.4.0 (2d302d6): deepspeed/runtime/zero/constants.py L50-111 (stage 0, "
	  "stage-3 overlap_comm True, contiguous_gradients False, reduce_bucket_size 5e8, "
	  "prefetch_bucket_size 5e7, max_reuse_distance 1e9, param_persistence_threshold 1e5, "
	  "max_live_parameters 1e9: stage3.py L349, L711), "
	  "deepspeed/runtime/zero/stage3.py allreduce_bucket (fp16 as the model)",
	  GATHER_PER_TENSOR, 5e7, 1e9, 1e5, C10D_LAUNCH_S, C10D_LAUNCH_SRC, "deepspeed-zero3-2021",
	  false, false, 1e9 },
	{ "fsdp2", "2.5", "PyTorch FSDP2 (fully_shard)",
	  GRAD_AS_PARAMS, BUCKET_PER_UNIT, 0, true, true, 3, ATTN_FLASH,
	  "pytorch torch/distributed/_composable/fsdp/fully_shard.py, _fsdp_api.py "
	  "(stored pre-2.6 commits 012c62d, 0b2c60e; tag v2.5.0 not read): fully_shard "
	  "(ZeRO-3, one reduce-scatter per module), MixedPrecisionPolicy reduce_dtype None",
	  GATHER_PER_UNIT, 0, 0, 0, C10D_LAUNCH_S, C10D_LAUNCH_SRC, "hf-eager", false, false, 0 },
	{ "torchtitan", "0.1", "PyTorch TorchTitan (FSDP2 + SDPA)",
	  GRAD_FP32, BUCKET_PER_UNIT, 0, true, true, 3, ATTN_FLASH,
	  "torchtitan v0.1.0 (f7084fc): torchtitan/config_manager.py "
	  "(mixed_precision_reduce float32, data_parallel_shard_degree -1), "
	  "torchtitan/models/llama3/infra/parallelize.py (fully_shard per block), "
	  "torchtitan/models/attention.py (SDPA)",
	  GATHER_PER_UNIT, 0, 0, 0, C10D_LAUNCH_S, C10D_LAUNCH_SRC, "torchtitan", false, false, 0 },
	{ NULL, NULL, NULL, GRAD_AS_PARAMS, BUCKET_BYTES, 0, false, false, 0, ATTN_UNFUSED, NULL,
	  GATHER_PER_UNIT, 0, 0, 0, 0, NULL, NULL, false, false, 0 },
};

const struct framework *framework_find(const char *spec, bool *known_name)
{
	const char *at = strchr(spec, '@');
	size_t n = at ? (size_t)(at - spec) : strlen(spec);

	*known_name = false;
	for (const struct framework *f = framework_table; f->name; f++) {
		if (strlen(f->name) != n || strncmp(f->name, spec, n) != 0)
			continue;
		*known_name = true;
		if (!at || strcmp(at + 1, f->version) == 0)
			return f;
	}
	return NULL;
}

int framework_index(const struct framework *f)
{
	return f ? (int)(f - framework_table) : -1;
}

enum dtype framework_grad_dtype(const struct framework *f, enum dtype param)
{
	switch (f->grad) {
	case GRAD_FP32:
		return DTYPE_FP32;
	case GRAD_FP32_IF_BF16:
		return param == DTYPE_BF16 ? DTYPE_FP32 : param;
	default:
		return param;
	}
}

double framework_bucket_bytes(const struct framework *f, int dp, double grad_elem_bytes)
{
	switch (f->bucket) {
	case BUCKET_MCORE: {
		double params = 1e6 * dp > 40e6 ? 1e6 * dp : 40e6;
		return params * grad_elem_bytes;
	}
	case BUCKET_ELEMENTS:
		return f->bucket_value * grad_elem_bytes;
	case BUCKET_PER_UNIT:
		return 0;
	default:
		return f->bucket_value;
	}
}

const char *framework_label(const struct framework *f, char *buf, unsigned long n)
{
	snprintf(buf, n, "%s@%s", f->name, f->version);
	return buf;
}
