/* framework: preset defaults of training stacks (see framework.h).
 *
 * Each row states the defaults of one stack at one version and cites where
 * each value is read (file and line of the public repository at that
 * version, or the documentation page). Values that the stacks leave to the
 * model code (the attention kernel) are what their reference recipes run.
 *
 * megatron-core 0.9 (github.com/NVIDIA/Megatron-LM, core_r0.9.0):
 *   - grad reduce dtype: megatron/training/arguments.py validate_args: "if
 *     args.bf16: ... bfloat16 requires gradient accumulation and all-reduce
 *     to be done in fp32" (accumulate_allreduce_grads_in_fp32 forced on);
 *     fp16 keeps --accumulate-allreduce-grads-in-fp32 off (default False),
 *     so grads are reduced in fp16. DistributedDataParallel keeps main
 *     grads in fp32 when grad_reduce_in_fp32, else in the param dtype.
 *   - bucket: megatron/core/distributed/distributed_data_parallel_config.py
 *     "bucket_size: Optional[int] = None ... If unspecified, MCore uses a
 *     default value of max(40000000, 1000000 * dp_size) parameters".
 *   - overlap_grad_reduce, overlap_param_gather, use_distributed_optimizer:
 *     all False by default (same file; arguments.py --overlap-grad-reduce,
 *     --overlap-param-gather, --use-distributed-optimizer are opt-in).
 *   - attention: Transformer Engine's fused attention (--attention-backend
 *     auto picks flash/cuDNN fused where available).
 * nemo 2.0 (github.com/NVIDIA/NeMo, r2.0.0, nemo/collections/llm/recipes/
 *   llama3_70b.py and nemo/lightning/pytorch/plugins/mixed_precision.py):
 *   - MegatronMixedPrecision(grad_reduce_in_fp32=True) for bf16-mixed;
 *   - recipes' DistributedDataParallelConfig(overlap_grad_reduce=True,
 *     overlap_param_gather=True, grad_reduce_in_fp32=True) and
 *     OptimizerConfig(use_distributed_optimizer=True): ZeRO-1;
 *   - bucket size left to Megatron-Core's default (above).
 * deepspeed 0.15 (deepspeed.ai/docs/config-json, "ZeRO Optimizations"):
 *   - zero_optimization.stage default 0; reduce_bucket_size default 5e8
 *     (elements); overlap_comm default false (true only for stage 3);
 *   - communication_data_type default None: gradients reduced in their own
 *     (the model's) dtype.
 * fsdp2 (PyTorch 2.5, pytorch.org/docs/stable/distributed.fsdp.fully_shard.html):
 *   - fully_shard shards parameters, gradients and optimizer state (ZeRO-3),
 *     one reduce-scatter per wrapped module (a transformer block);
 *   - MixedPrecisionPolicy(reduce_dtype=None): reduce in the parameters'
 *     compute dtype; prefetching overlaps gathers and reduce-scatters.
 * torchtitan 0.1 (github.com/pytorch/torchtitan, torchtitan/config_manager.py):
 *   - training.mixed_precision_reduce default "float32";
 *   - data_parallel_shard_degree -1: FSDP2 over all DP ranks (ZeRO-3), one
 *     unit per transformer block (parallelize_llama.apply_fsdp);
 *   - attention: F.scaled_dot_product_attention (flash backend).
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
 * Launch overhead: the host cost of one collective issued through c10d's
 *   ProcessGroupNCCL, from a published torch.profiler table of FSDP on
 *   multi-node A100 (github.com/pytorch/pytorch/issues/102434, 2023-05-29):
 *   c10d::_allgather_base_ 810 calls, 61.336 ms CPU total = 75.7 us per call
 *   (record_param_comms included). Every preset issues its data-parallel
 *   collectives through c10d, so all carry it; DeepSpeed's per-submodule
 *   hook bookkeeping on top of it is not in a published profile and is
 *   left out (the figure is a lower bound there). */
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
	  "Megatron-LM core_r0.9.0: megatron/training/arguments.py (bf16 forces "
	  "accumulate_allreduce_grads_in_fp32), megatron/core/distributed/"
	  "distributed_data_parallel_config.py (bucket_size max(40e6, 1e6 dp) params; "
	  "overlap_grad_reduce, overlap_param_gather, use_distributed_optimizer False)",
	  GATHER_PER_UNIT, 0, 0, 0, C10D_LAUNCH_S, C10D_LAUNCH_SRC },
	{ "nemo", "2.0", "NVIDIA NeMo 2.0 LLM recipes (on Megatron-Core)",
	  GRAD_FP32, BUCKET_MCORE, 0, true, true, 1, ATTN_FLASH,
	  "NeMo r2.0.0: nemo/collections/llm/recipes/llama3_70b.py (DDP config "
	  "overlap_grad_reduce, overlap_param_gather, grad_reduce_in_fp32 True; "
	  "use_distributed_optimizer True), nemo/lightning/pytorch/plugins/mixed_precision.py",
	  GATHER_PER_UNIT, 0, 0, 0, C10D_LAUNCH_S, C10D_LAUNCH_SRC },
	{ "deepspeed", "0.15", "Microsoft DeepSpeed (ZeRO config defaults)",
	  GRAD_AS_PARAMS, BUCKET_ELEMENTS, 5e8, false, false, 0, ATTN_FLASH,
	  "deepspeed.ai/docs/config-json (v0.15): zero_optimization.stage 0, "
	  "reduce_bucket_size 5e8 elements, overlap_comm false, communication_data_type None; "
	  "deepspeed/runtime/zero/config.py: stage3_prefetch_bucket_size 5e7, "
	  "stage3_param_persistence_threshold 1e5, stage3_max_reuse_distance 1e9",
	  GATHER_PER_TENSOR, 5e7, 1e9, 1e5, C10D_LAUNCH_S, C10D_LAUNCH_SRC },
	{ "fsdp2", "2.5", "PyTorch FSDP2 (fully_shard)",
	  GRAD_AS_PARAMS, BUCKET_PER_UNIT, 0, true, true, 3, ATTN_FLASH,
	  "pytorch.org/docs/2.5/distributed.fsdp.fully_shard.html: fully_shard "
	  "(ZeRO-3, one reduce-scatter per module), MixedPrecisionPolicy reduce_dtype None",
	  GATHER_PER_UNIT, 0, 0, 0, C10D_LAUNCH_S, C10D_LAUNCH_SRC },
	{ "torchtitan", "0.1", "PyTorch TorchTitan (FSDP2 + SDPA)",
	  GRAD_FP32, BUCKET_PER_UNIT, 0, true, true, 3, ATTN_FLASH,
	  "github.com/pytorch/torchtitan v0.1: torchtitan/config_manager.py "
	  "(mixed_precision_reduce float32, data_parallel_shard_degree -1), "
	  "torchtitan/parallelisms/parallelize_llama.py (fully_shard per block)",
	  GATHER_PER_UNIT, 0, 0, 0, C10D_LAUNCH_S, C10D_LAUNCH_SRC },
	{ NULL, NULL, NULL, GRAD_AS_PARAMS, BUCKET_BYTES, 0, false, false, 0, ATTN_UNFUSED, NULL,
	  GATHER_PER_UNIT, 0, 0, 0, 0, NULL },
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
