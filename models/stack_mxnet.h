/* stack_mxnet.h: NVIDIA's MLPerf MXNet ResNet stacks, rows of
 * stack_table (stack.h).
 *
 * mxnet-normconv (one node) and mxnet-nhwc-bn (several nodes): how batch
 * norm, ReLU and the residual add run (stack.h enum cnn_fusion) and the
 * LARS step, with the source of every count. Included by stack.c alone,
 * which lists the rows in stack_table; the transformer pieces they carry
 * (stack-private.h TE_TRANSFORMER_PIECES) are unused by a CNN.
 *
 * mxnet-normconv, mxnet-nhwc-bn: NVIDIA's MLPerf Training v4.0 ResNet-50
 *   (mlcommons/training_results_v4.0 6fe9543, implementations/
 *   eos_ngc24.04_mxnet), fp16 NHWC, --fuse-bn-relu 1 --fuse-bn-add-relu 1
 *   (run_and_time.sh L124-137). One node runs resnet-v1b-mainloop-fl
 *   (config_DGXH100.sh L18): per bottleneck three NormConvolution ops
 *   (the previous BN's scale, bias and ReLU in the prologue, the next
 *   BN's statistics in the epilogue: no forward bytes; backward a BN
 *   backward on the dgrad output reading dy and x, writing dx: 6 B/el if
 *   the tile stays on chip, 10 when re-read, taken at 400 images per GPU
 *   where the early tensors are hundreds of MB) and one ScaleBiasAddRelu
 *   (reads x and the shortcut, writes y and a 1-bit mask: 6.125 B/el;
 *   backward reads dy, x, the mask, writes dx and dz: 12.125 re-read; a
 *   projection unit's BN backward in place, +10). Several nodes run
 *   resnet-v1b-fl (config_DGXH100_multi_8x8x50.sh L18): NHWC BatchNorm
 *   with ReLU (x read twice, y written: 6 / 10 B/el) and
 *   BatchNormAddRelu (8.125 / 12.125). NVIDIA's MXNet 24.04 source is not
 *   public: the kernels' reads and writes are those of the same ops in
 *   NVIDIA's MXNet fork at sneaxiy/NVIDIA-MxNet ce30b18
 *   (cudnn_norm_convolution-inl.h L57-62, L199-263, L328-444;
 *   cudnn_scale_bias_add_relu-inl.h L233-263, L346-365;
 *   nhwc_batch_norm_kernel.cc L1049-1058, L1282-1897, L2301-3202). */
#ifndef DDLSIM_STACK_MXNET_H
#define DDLSIM_STACK_MXNET_H

#include "stack-private.h"

/* A CNN stack: the TE pieces (unused), Megatron's optimizer copy, the
 * GPU's best flash kernel (unused), and its batch-norm fusion. MXNet
 * issues kernels from its C++ engine threads, at a cost no public
 * measurement gives: no host issue time (host_issue_us 0). */
#define CNN_STACK(fusion) \
	TE_TRANSFORMER_PIECES, .optimizer_copy16 = true, .cnn = (fusion), \
	.attn_ampere = ATTN_BE_BEST, .attn_hopper = ATTN_BE_BEST
/* NVIDIA's MLPerf ResNet optimizer, SGDwFASTLARSV2 (eos_n316_ngc24.04_mxnet
 * common/optimizer.py L155-245, --optimizer sgdwfastlars in every
 * config_DGXH100*.sh), fp16 weights with fp32 master copies: per step
 * multi_sum_sq over the 16-bit weights and over the 16-bit gradients of
 * the LARS parameters (2 + 2 B: all but BN gamma/beta and biases, under
 * 0.3 % of ResNet-50's), multi_lars_v2 and four small vector ops over the
 * 55 per-layer rates (broadcast_mul, broadcast_div, slice_assign,
 * copyto), then lars_multi_mp_sgd_mom_update_v2 in groups of
 * MXNET_OPTIMIZER_AGGREGATION_SIZE = 54 tensors (config_DGXA100_common.sh):
 * read the gradient (2), the fp32 master weight and momentum (4 + 4),
 * write both (4 + 4) and the 16-bit weight (2), 20 B (LARSMultiSGDKernel,
 * src/operator/lars_multi_sgd-inl.h L172-203 of NVIDIA's MXNet fork
 * sneaxiy/NVIDIA-MxNet ce30b18; MXNet 24.04's _v2 ops are not public).
 * 24 B per parameter; kernels: 2 sums, 5 small ops and ceil(161 / 54) = 3
 * updates over ResNet-50's 161 parameter tensors. */
#define MXNET_LARS_BPP 24
#define MXNET_LARS_KERNELS 10

#define STACK_MXNET_NORMCONV \
	/* NVIDIA's MLPerf Training v4.0 ResNet-50 (MXNet NGC 24.04): the \
	 * transformer pieces are the fused ones (unused by a CNN) */ \
	{ "mxnet-normconv", "NVIDIA MLPerf MXNet ResNet, one node: BN folded into NormConvolution", \
	  CNN_STACK(CNN_FUSE_CONV_BN), \
	  .cnn_optimizer_Bpp = MXNET_LARS_BPP, .cnn_optimizer_kernels = MXNET_LARS_KERNELS, \
	  .source = "mlcommons/training_results_v4.0 (6fe9543) NVIDIA/benchmarks/resnet/implementations/" \
		    "eos_ngc24.04_mxnet: config_DGXH100.sh L18 (resnet-v1b-mainloop-fl), " \
		    "symbols/resnet-v1b-mainloop-fl.py L208-302 (NormConvolution, ScaleBiasAddRelu), " \
		    "run_and_time.sh L124-137; byte counts from NVIDIA's MXNet fork (sneaxiy/NVIDIA-MxNet " \
		    "ce30b18) cudnn_norm_convolution-inl.h, cudnn_scale_bias_add_relu-inl.h, " \
		    "nhwc_batch_norm_kernel.cc" }

/* The MLPerf v1.1-v2.1 A100 PCIe submissions (Dell, ASUSTeK, Supermicro,
 * Fujitsu, CASIA) all run resnet-v1b-stats-fl: per bottleneck conv1 a
 * NormConvolution with no_norm (statistics in its epilogue), conv2 and
 * conv3 NormalizedConvolution with no_equiv_scale_bias (no prologue
 * apply), BNStatsFinalize after each, bn1 and bn2 applied by
 * ScaleBiasAddRelu(act relu, no addend), the block's end by
 * ScaleBiasAddRelu with the shortcut (dual_scale_bias with a projection's
 * BN). The LARS step as the v4.0 stack's (the configs: sgdwfastlars,
 * MXNET_OPTIMIZER_AGGREGATION_SIZE 54; v2.0's optimizer.py not re-read). */
#define STACK_MXNET_STATS \
	{ "mxnet-stats", "NVIDIA MLPerf MXNet ResNet v1.1-v2.1, resnet-v1b-stats-fl: BN statistics in the conv, " \
	  "applied by ScaleBiasAddRelu", \
	  CNN_STACK(CNN_FUSE_CONV_STATS), \
	  .cnn_optimizer_Bpp = MXNET_LARS_BPP, .cnn_optimizer_kernels = MXNET_LARS_KERNELS, \
	  .source = "mlcommons/training_results_v2.0 (a6ae3e16) Dell/benchmarks/resnet/implementations/mxnet: " \
		    "config_R750xax4A100PCIE80GB.sh (NETWORK resnet-v1b-stats-fl, OPTIMIZER sgdwfastlars), " \
		    "symbols/resnet-v1b-stats-fl.py residual_unit_norm_conv and scale_bias_add_relu " \
		    "(NormConvolution no_norm, NormalizedConvolution no_equiv_scale_bias, BNStatsFinalize, " \
		    "ScaleBiasAddRelu act_type relu with and without dataZ); byte counts as mxnet-normconv's " \
		    "ScaleBiasAddRelu (sneaxiy/NVIDIA-MxNet ce30b18 cudnn_scale_bias_add_relu-inl.h) without dz" }

#define STACK_MXNET_NHWC_BN \
	{ "mxnet-nhwc-bn", "NVIDIA MLPerf MXNet ResNet, several nodes: NHWC BN+ReLU, BN+add+ReLU", \
	  CNN_STACK(CNN_FUSE_BN_ACT), \
	  .cnn_optimizer_Bpp = MXNET_LARS_BPP, .cnn_optimizer_kernels = MXNET_LARS_KERNELS, \
	  .source = "mlcommons/training_results_v4.0 (6fe9543) NVIDIA/benchmarks/resnet/implementations/" \
		    "eos_ngc24.04_mxnet: config_DGXH100_multi_8x8x50.sh L18 (resnet-v1b-fl), " \
		    "symbols/resnet-v1b-fl.py L158-208 (BatchNorm act relu, BatchNormAddRelu); NVIDIA's " \
		    "MXNet fork (sneaxiy/NVIDIA-MxNet ce30b18) batch_norm.cu L1111-1147, " \
		    "batch_norm_add_relu.cu L678-705, nhwc_batch_norm_kernel.cc" }

#endif
