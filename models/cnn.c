/* cnn: ResNet layer lists, parameter counts and kernels (see cnn.h).
 *
 * The generator follows torchvision.models.resnet: a 7x7/2 stem
 * convolution with 64 channels, batch norm, ReLU and a 3x3/2 max pool;
 * four stages of blocks with widths 64, 128, 256, 512 (the first stage
 * keeps the resolution, the others halve it in their first block); global
 * average pooling and a fully connected classifier with bias. Convolutions
 * have no bias. A bottleneck is 1x1 (width), 3x3 (width, stride), 1x1
 * (4 x width), each followed by batch norm, with a 1x1 strided projection
 * plus batch norm on the shortcut where the shape changes; a basic block is
 * two 3x3 convolutions. ResNet-50 comes out at 25,557,032 parameters, the
 * count torchvision publishes. */
#include "cnn.h"
#include "xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cnn_resnet_depths[] = "18, 34, 50, 101, 152";

static const struct {
	long depth;
	bool bottleneck;
	int blocks[4];
} resnets[] = {
	{ 18, false, { 2, 2, 2, 2 } },
	{ 34, false, { 3, 4, 6, 3 } },
	{ 50, true, { 3, 4, 6, 3 } },
	{ 101, true, { 3, 4, 23, 3 } },
	{ 152, true, { 3, 8, 36, 3 } },
};

bool cnn_resnet_depth_ok(long depth)
{
	for (size_t i = 0; i < sizeof(resnets) / sizeof(resnets[0]); i++)
		if (resnets[i].depth == depth)
			return true;
	return false;
}

/* Shape of the activation flowing between layers while building. */
struct cursor {
	struct cnn_net *net;
	double c, h, w;
	int group;
	int rc;
};

static struct cnn_layer *push(struct cursor *cu, enum cnn_layer_kind kind, const char *name)
{
	struct cnn_net *n = cu->net;
	if (n->n == n->cap) {
		n->cap = n->cap ? 2 * n->cap : 64;
		n->v = xreallocarray(n->v, (size_t)n->cap, sizeof(*n->v));
	}
	struct cnn_layer *l = &n->v[n->n++];
	memset(l, 0, sizeof(*l));
	snprintf(l->name, sizeof(l->name), "%s", name);
	l->kind = kind;
	l->group = cu->group;
	l->c = l->k = cu->c;
	l->h = l->p = cu->h;
	l->w = l->q = cu->w;
	l->r = l->s = l->stride = 1;
	return l;
}

static void conv(struct cursor *cu, const char *name, double k, double r, double stride,
		 double pad)
{
	struct cnn_layer *l = push(cu, CNN_CONV, name);
	if (!l)
		return;
	l->k = k;
	l->r = l->s = r;
	l->stride = stride;
	l->pad = pad;
	l->p = floor((cu->h + 2 * pad - r) / stride) + 1;
	l->q = floor((cu->w + 2 * pad - r) / stride) + 1;
	l->params = k * cu->c * r * r;
	cu->c = k, cu->h = l->p, cu->w = l->q;
}

static void simple(struct cursor *cu, enum cnn_layer_kind kind, const char *name)
{
	struct cnn_layer *l = push(cu, kind, name);
	if (l && kind == CNN_BN)
		l->params = 2 * cu->c;
}

static void block(struct cursor *cu, const char *pre, double width, double stride,
		  bool bottleneck)
{
	char nm[48];	/* pre (up to 31) "." "downsample.0" */
	double in_c = cu->c, in_h = cu->h, in_w = cu->w;
	double out_c = bottleneck ? 4 * width : width;

#define NAME(x) (snprintf(nm, sizeof(nm), "%s.%s", pre, x), nm)
	if (bottleneck) {
		conv(cu, NAME("conv1"), width, 1, 1, 0);
		simple(cu, CNN_BN, NAME("bn1"));
		simple(cu, CNN_RELU, NAME("relu1"));
		conv(cu, NAME("conv2"), width, 3, stride, 1);
		simple(cu, CNN_BN, NAME("bn2"));
		simple(cu, CNN_RELU, NAME("relu2"));
		conv(cu, NAME("conv3"), out_c, 1, 1, 0);
		simple(cu, CNN_BN, NAME("bn3"));
	} else {
		conv(cu, NAME("conv1"), width, 3, stride, 1);
		simple(cu, CNN_BN, NAME("bn1"));
		simple(cu, CNN_RELU, NAME("relu1"));
		conv(cu, NAME("conv2"), width, 3, 1, 1);
		simple(cu, CNN_BN, NAME("bn2"));
	}
	if (cu->net->n > 0)
		cu->net->v[cu->net->n - 1].pre_add = true;
	if (stride != 1 || in_c != out_c) {
		double c = cu->c, h = cu->h, w = cu->w;
		cu->c = in_c, cu->h = in_h, cu->w = in_w;
		conv(cu, NAME("downsample.0"), out_c, 1, stride, 0);
		simple(cu, CNN_BN, NAME("downsample.1"));
		if (cu->net->n > 0)
			cu->net->v[cu->net->n - 1].shortcut_bn = true;
		cu->c = c, cu->h = h, cu->w = w;
	}
	simple(cu, CNN_ADD, NAME("add"));
	simple(cu, CNN_RELU, NAME("relu3"));
#undef NAME
}

int cnn_build(const struct model *m, struct cnn_net *out)
{
	struct cursor cu = { .net = out, .c = 3, .h = (double)m->cnn.image,
			     .w = (double)m->cnn.image };
	size_t fi;
	char pre[32];	/* "layer%d.%d": two ints, up to 29 bytes */

	memset(out, 0, sizeof(*out));
	for (fi = 0; fi < sizeof(resnets) / sizeof(resnets[0]); fi++)
		if (resnets[fi].depth == m->cnn.depth)
			break;
	if (m->arch != MODEL_ARCH_CNN || fi == sizeof(resnets) / sizeof(resnets[0]))
		return -1;

	conv(&cu, "conv1", 64, 7, 2, 3);
	simple(&cu, CNN_BN, "bn1");
	simple(&cu, CNN_RELU, "relu");
	struct cnn_layer *mp = push(&cu, CNN_MAXPOOL, "maxpool");
	if (mp) {
		mp->r = mp->s = 3, mp->stride = 2, mp->pad = 1;
		mp->p = floor((cu.h + 2 - 3) / 2) + 1;
		mp->q = floor((cu.w + 2 - 3) / 2) + 1;
		cu.h = mp->p, cu.w = mp->q;
	}
	for (int st = 0; st < 4; st++)
		for (int b = 0; b < resnets[fi].blocks[st]; b++) {
			cu.group++;
			snprintf(pre, sizeof(pre), "layer%d.%d", st + 1, b);
			block(&cu, pre, 64 << st, (st > 0 && b == 0) ? 2 : 1,
			      resnets[fi].bottleneck);
		}
	cu.group++;
	struct cnn_layer *ap = push(&cu, CNN_AVGPOOL, "avgpool");
	if (ap) {
		ap->p = ap->q = 1;
		cu.h = cu.w = 1;
	}
	struct cnn_layer *fc = push(&cu, CNN_FC, "fc");
	if (fc) {
		fc->k = (double)m->cnn.classes;
		fc->params = cu.c * fc->k + fc->k;
	}
	out->ngroups = cu.group + 1;
	if (cu.rc) {
		cnn_net_finish(out);
		return -1;
	}
	return 0;
}

void cnn_net_finish(struct cnn_net *net)
{
	free(net->v);
	memset(net, 0, sizeof(*net));
}

double cnn_params(const struct model *m)
{
	struct cnn_net net;
	double p = 0;
	if (cnn_build(m, &net))
		return 0;
	for (int i = 0; i < net.n; i++)
		p += net.v[i].params;
	cnn_net_finish(&net);
	return p;
}

double cnn_forward_flops(const struct model *m)
{
	struct cnn_net net;
	double f = 0;
	if (cnn_build(m, &net))
		return 0;
	for (int i = 0; i < net.n; i++) {
		const struct cnn_layer *l = &net.v[i];
		if (l->kind == CNN_CONV)
			f += 2 * l->p * l->q * l->k * l->c * l->r * l->s;
		else if (l->kind == CNN_FC)
			f += 2 * l->c * l->k;
	}
	cnn_net_finish(&net);
	return f;
}

static const char *const kind_names[] = { "conv", "batchnorm", "relu", "maxpool",
					  "avgpool", "fc", "add" };

static void membound(struct op_list *out, const struct cnn_layer *l, enum dtype dt,
		    enum op_pass pass, double bytes)
{
	struct op op = { .kind = OP_MEMBOUND, .pass = pass, .dtype = dt, .batch = 1 };
	bool bwd = pass == PASS_BWD;
	snprintf(op.name, sizeof(op.name), "%s%s", kind_names[l->kind], bwd ? ".bwd" : "");
	snprintf(op.membound_kind, sizeof(op.membound_kind), "%s_%s", kind_names[l->kind],
		 bwd ? "bwd" : "fwd");
	op.m = bytes / dtype_bytes(dt);
	op.bytes = bytes;
	op_list_push(out, &op);
}

static void conv_op(struct op_list *out, const struct cnn_layer *l, double b, enum dtype dt,
		   int pass)
{
	static const char *const suffix[] = { "", ".dgrad", ".wgrad" };
	double B = dtype_bytes(dt);
	double in = b * l->c * l->h * l->w, outp = b * l->k * l->p * l->q;
	double wt = l->k * l->c * l->r * l->s;
	struct op op = { .kind = OP_CONV, .pass = pass ? PASS_BWD : PASS_FWD, .dtype = dt,
			 .batch = 1, .conv_pass = pass };

	snprintf(op.name, sizeof(op.name), "conv%.0fx%.0f%s", l->r, l->s, suffix[pass]);
	op.conv_n = b, op.conv_c = l->c, op.conv_h = l->h, op.conv_w = l->w;
	op.conv_k = l->k, op.conv_r = l->r, op.conv_s = l->s;
	op.conv_stride = l->stride, op.conv_pad = l->pad;
	switch (pass) {
	case 0:
		op.m = b * l->p * l->q, op.n = l->k, op.k = l->c * l->r * l->s;
		break;
	case 1:
		op.m = b * l->h * l->w, op.n = l->c, op.k = l->k * l->r * l->s;
		break;
	default:
		op.m = l->k, op.n = l->c * l->r * l->s, op.k = b * l->p * l->q;
		break;
	}
	op.flops = 2 * b * l->p * l->q * l->k * l->c * l->r * l->s;
	op.bytes = (in + wt + outp) * B;
	op_list_push(out, &op);
}

static void fc_ops(struct op_list *out, const struct cnn_layer *l, double b, enum dtype dt,
		  enum op_pass pass)
{
	double B = dtype_bytes(dt), m = b, n = l->k, k = l->c;
	struct op op = { .kind = OP_GEMM, .pass = pass, .dtype = dt, .batch = 1 };

	op.flops = 2 * m * n * k;
	op.bytes = (m * k + k * n + m * n) * B;
	if (pass == PASS_FWD) {
		snprintf(op.name, sizeof(op.name), "fc");
		op.m = m, op.n = n, op.k = k;
		op.out_bytes = op.m * op.n * B;
		op_list_push(out, &op);
		return;
	}
	snprintf(op.name, sizeof(op.name), "fc.dgrad");
	op.m = m, op.n = k, op.k = n;
	op.out_bytes = op.m * op.n * B;
	op_list_push(out, &op);
	snprintf(op.name, sizeof(op.name), "fc.wgrad");
	op.m = k, op.n = n, op.k = m;
	op.out_bytes = op.m * op.n * B;
	op_list_push(out, &op);
}

/* Bytes per element of l's output under fusion fu (stack.h), for fp16
 * tensors, or -1 when l is priced as its own kernel with the unfused
 * touches. The stem is group 0; pre_add marks the batch norm that ends a
 * block's main branch. */
static double fused_bytes_per_el(const struct cnn_layer *l, enum cnn_fusion fu, bool bwd)
{
	bool in_block = l->group > 0;
	bool add = l->kind == CNN_ADD;

	if (fu == CNN_FUSE_NONE || (l->kind != CNN_BN && l->kind != CNN_RELU && !add))
		return -1;
	if (l->kind == CNN_RELU)
		return 0;                       /* inside a BN kernel or a conv prologue */
	if (fu == CNN_FUSE_BN_ACT || !in_block) {
		if (add)                        /* BatchNormAddRelu carries it (pre_add) */
			return 0;
		if (l->pre_add)
			return bwd ? 12.125 : 8.125;
		return bwd ? 10 : 6;
	}
	/* CNN_FUSE_CONV_STATS: a main-branch BN before the last is applied
	 * by its own ScaleBiasAddRelu with the ReLU: reads x, writes y and a
	 * 1-bit mask; backward reads dy and x twice (the statistics' sums,
	 * then dx), the mask once, writes dx (the add's 12.125 less dz) */
	if (fu == CNN_FUSE_CONV_STATS && !add && !l->pre_add && !l->shortcut_bn)
		return bwd ? 10.125 : 4.125;
	/* CNN_FUSE_CONV_BN: ScaleBiasAddRelu on the add (applying the last
	 * BN and a projection's); every BN's backward its own pass */
	if (add)
		return bwd ? 12.125 : 6.125;
	return bwd ? 10 : 0;
}

int cnn_layer_ops(const struct cnn_layer *l, double b, enum dtype dt,
		  enum op_pass pass, bool first, enum cnn_fusion fu, struct op_list *out)
{
	double B = dtype_bytes(dt);
	double in = b * l->c * l->h * l->w, outp = b * l->k * l->p * l->q;
	bool bwd = pass == PASS_BWD;
	double fb = fused_bytes_per_el(l, fu, bwd);

	if (fb == 0)
		return 0;                       /* no kernel of its own */
	if (fb > 0) {                           /* the counts are for fp16 */
		membound(out, l, dt, pass, fb * outp * B / 2);
		return 0;
	}
	switch (l->kind) {
	case CNN_CONV:
		if (bwd && !first)
			conv_op(out, l, b, dt, 1);
		conv_op(out, l, b, dt, bwd ? 2 : 0);
		return 0;
	case CNN_FC:
		fc_ops(out, l, b, dt, pass);
		return 0;
	case CNN_BN:
		membound(out, l, dt, pass, (bwd ? 5 : 3) * outp * B);
		return 0;
	case CNN_RELU:
		membound(out, l, dt, pass, (bwd ? 3 : 2) * outp * B);
		return 0;
	case CNN_ADD:
		membound(out, l, dt, pass, 3 * outp * B);
		return 0;
	case CNN_MAXPOOL:
		/* forward writes the output and its int64 argmax; backward zeroes
		 * the input gradient and scatters into it */
		membound(out, l, dt, pass,
			 bwd ? 2 * in * B + outp * (B + 8) : (in + outp) * B + outp * 8);
		return 0;
	case CNN_AVGPOOL:
		membound(out, l, dt, pass, (in + outp) * B);
		return 0;
	}
	return -1;
}
