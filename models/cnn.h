/* cnn: convolutional networks, their layers, parameters and kernels.
 *
 * A model file with architecture "cnn" names a generator instead of
 * listing layers (see model.h): {"family": "resnet", "depth": 50, "image":
 * 224, "classes": 1000} expands to the exact torchvision ResNet layer list
 * (v1.5: the stride of a downsampling bottleneck sits on its 3x3 conv).
 * Depths 18 and 34 use basic blocks, 50, 101 and 152 bottlenecks.
 *
 * Every layer records its input and output shape, so parameters, FLOPs
 * and the kernels of a training step follow. Layers are grouped for
 * backward: a group is the stem, one residual block, or the head; the
 * gradients of a group become ready together when its backward ends,
 * which is when data parallelism may start reducing them.
 *
 * Kernels (cnn_layer_ops()): a convolution is one OP_CONV per pass, priced
 * as an implicit GEMM (the dimensions of profile_conv_gemm_dims(): fwd
 * M = N P Q, N = K, K = C R S; bwd_data M = N H W, N = C, K = K R S;
 * bwd_filter M = K, N = C R S, K = N P Q) with the true convolution FLOPs
 * 2 N P Q K C R S in every pass; the first convolution has no bwd_data
 * (the image needs no gradient). The fully connected head is a GEMM.
 * Batch norm (training: statistics pass, then normalize: 3 touches of the
 * activation forward, 5 backward), ReLU (2 / 3), residual add (3 / 3: the
 * backward add sums the shortcut and main-path gradients), max pooling
 * (with int64 indices as PyTorch saves them) and global average pooling
 * are memory-bound ops with membound_kind "<kind>_fwd" / "<kind>_bwd". */
#ifndef DDLSIM_CNN_H
#define DDLSIM_CNN_H

#include <stdbool.h>

#include "gpu.h"
#include "model.h"
#include "op.h"
#include "stack.h"

enum cnn_layer_kind { CNN_CONV, CNN_BN, CNN_RELU, CNN_MAXPOOL, CNN_AVGPOOL, CNN_FC, CNN_ADD };

struct cnn_layer {
	char name[40];          /* "layer3.2.conv2" */
	enum cnn_layer_kind kind;
	int group;              /* backward group: 0 stem, 1.. blocks, last head */
	double c, h, w;         /* input channels (features for fc), height, width */
	double k, p, q;         /* output channels (features for fc), height, width */
	double r, s, stride, pad;
	double params;
	bool pre_add;           /* the batch norm ending a block's main branch, before its add */
	bool shortcut_bn;       /* a projection shortcut's batch norm (downsample.1) */
};

struct cnn_net {
	struct cnn_layer *v;
	int n, cap;
	int ngroups;
};

/* The depths a family accepts, for messages: "18, 34, 50, 101, 152". */
extern const char cnn_resnet_depths[];
/* True if depth is a ResNet depth. */
bool cnn_resnet_depth_ok(long depth);

/* Expand m (architecture "cnn") into out (cnn_net_finish() it).
 * Returns 0 or -1 on allocation failure or a bad spec. */
int cnn_build(const struct model *m, struct cnn_net *out);
void cnn_net_finish(struct cnn_net *net);

/* Parameters (conv weights, batch-norm scale and shift, fc weight and bias). */
double cnn_params(const struct model *m);
/* Forward FLOPs of one image: 2 x MACs of the convolutions and the fc. */
double cnn_forward_flops(const struct model *m);


/* Append the kernels of layer l for a micro-batch of batch images,
 * forward or backward, to out, as a stack of fusion fu runs them. first:
 * the network's first layer (no data gradient). Returns 0, or -1 for a
 * kind outside enum cnn_layer_kind (out of memory exits: util/xalloc.h).
 * enum cnn_fusion: stack.h. */
int cnn_layer_ops(const struct cnn_layer *l, double batch, enum dtype dt,
		  enum op_pass pass, bool first, enum cnn_fusion fu, struct op_list *out);

#endif
