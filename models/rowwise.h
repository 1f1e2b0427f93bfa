/* rowwise: the HBM passes of row-wise kernels (softmax, norms), from the
 * kernels' source, and how many of them the L2 serves.
 *
 * A row-wise kernel reduces each row before it writes: one CTA per row,
 * which reads the row once to reduce it (max, sum, Welford moments) and
 * again to write the result, unless the row stays in registers or
 * shared memory. Its first read and its write go to HBM (op.bytes);
 * each re-read (op.reread_bytes) comes from the L2 when the row is still
 * there. Between a row's first read and its re-read, the other resident
 * CTAs read their rows: W = resident rows x row bytes pass through the
 * L2, with resident rows = SMs x CTAs per SM (op.row_threads threads per
 * CTA, CUDA's per-SM limits). With the CTAs at random phases the reuse
 * distance of a re-read lies between W/2 and 3W/2; an LRU cache of C
 * bytes (gpu l2_bytes: the L2 one SM's accesses are cached in) serves
 * the fraction of it below C:
 *
 *   hit = clamp(C / W - 1/2, 0, 1)
 *   HBM bytes = op.bytes + op.reread_bytes x (1 - hit)
 *
 * which the roofline moves at the element-wise efficiency (mem_max):
 * the passes, not a per-class efficiency, are what make row-wise kernels
 * slower than a copy. No L2 known (l2_bytes 0) or no CTA size known
 * (row_threads 0): every re-read from HBM.
 *
 * The ATen kernels below are PyTorch 2.1's (the version NeuSight's
 * kernel timings ran; validation/kernels/README.md), described at the
 * file and function that run them:
 *
 *   softmax forward (aten/src/ATen/native/cuda/SoftMax.cu host_softmax):
 *     row <= 1024 elements and <= 4096 bytes: dispatch_softmax_forward
 *     (PersistentSoftmax.cuh), the row in a warp's registers: read once,
 *     write once. Longer rows: cunn_SoftMaxForward, one CTA per row,
 *     SoftMax_getBlockSize(ILP = 16 B / element, row) threads: ilpReduce
 *     for the max, ilpReduce for the sum of exponentials, then
 *     WriteFpropResults: three reads, one write (2 re-reads). The
 *     shared-memory kernel cunn_SoftMaxForwardSmem, which reads once,
 *     came with pytorch/pytorch PR #122970 (2024-03), after 2.1.
 *   softmax backward (softmax_backward_cuda_out): tmp = grad * output,
 *     an element-wise kernel (read 2, write 1), then host_softmax_backward:
 *     the persistent warp kernel (read tmp and output, write) for short
 *     rows, cunn_SoftMaxBackward for long ones (ilpReduce over tmp, then
 *     WriteBpropResults reads tmp and output and writes: 1 re-read).
 *   layer norm forward (layer_norm_kernel.cu, vectorized_layer_norm_kernel):
 *     one CTA of num_threads() = 128 threads per row (thread_constants.h),
 *     compute_stats reads the row (vectorized Welford), the second loop
 *     reads it again and writes y: 1 re-read.
 *   dropout forward (Dropout.cu fused_dropout_kernel): read x, write y
 *     and a bool mask (1 byte per element). Backward: native_dropout_backward
 *     (grad * mask * scale, one kernel: read grad and mask, write), or,
 *     when autograd records the backward itself (GradMode on: a grad_fn
 *     called outside no_grad, tools/autograd/derivatives.yaml
 *     native_dropout), infinitely_differentiable_native_dropout_backward
 *     (FunctionsManual.cpp): grad * (mask.type_as(grad) * scale), three
 *     kernels: the cast (read 1, write B), the scale (read B, write B),
 *     the product (read 2B, write B). */
#ifndef DDLSIM_ROWWISE_H
#define DDLSIM_ROWWISE_H

#include <stdbool.h>

#include "op.h"

/* Fraction of op's re-read bytes the L2 serves on g (the closed form
 * above); 0 when g has no l2_bytes, op no row_threads or no row. */
double rowwise_l2_hit(const struct gpu_spec *g, const struct op *op);

/* HBM bytes op moves on g: op.bytes plus the re-reads the L2 misses. */
double rowwise_hbm_bytes(const struct gpu_spec *g, const struct op *op);

/* Rows resident on g at once for a kernel of one CTA of threads per row:
 * SMs x min(max threads per SM / threads, max CTAs per SM), the limits of
 * g's compute capability (CUDA C++ Programming Guide, technical
 * specifications per compute capability). */
double rowwise_resident_rows(const struct gpu_spec *g, int threads);

/* PyTorch's SoftMax_getBlockSize(ILP, row): CTA threads of the block
 * softmax kernels (forward and backward) for an element of elem_bytes. */
int rowwise_aten_softmax_threads(double row, double elem_bytes);

/* Fill op (kind OP_MEMBOUND; pass, dtype already set) as PyTorch 2.1's
 * softmax over rows x row elements: bytes, reread_bytes, row_threads,
 * kernels, row and m. */
void rowwise_aten_softmax(struct op *op, double rows, double row);

/* The same for F.layer_norm's forward (vectorized_layer_norm_kernel);
 * the backward as one pass reading x and dy and writing dx (PyTorch also
 * runs a dgamma/dbeta kernel, not included). */
void rowwise_aten_layernorm(struct op *op, double rows, double row);

/* The same for dropout (elements = rows x row, no row of its own);
 * grad_mode: the backward as autograd records it (three kernels). */
void rowwise_aten_dropout(struct op *op, double elements, bool grad_mode);

#endif
