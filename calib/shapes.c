/* shapes.c - the shapes ddlsim-calib measures: model layer GEMMs, a GEMM grid, convs, attention.
 *
 * Model GEMMs.  For each model (table below), tensor-parallel degree tp in
 * {1, 2, 4, 8} and tokens per micro-batch T = b*s in {2048, 4096, 8192},
 * the five weight GEMMs of a Megatron-style layer stack, with
 * head_dim = h / heads:
 *
 *   layer      N (fwd)                          K (fwd)
 *   qkv        (h + 2 * kv_heads * head_dim) / tp   h
 *   proj       h                                h / tp
 *   mlp_up     ffn / tp (x2 for SwiGLU, gate and up fused)   h
 *   mlp_down   h                                ffn / tp
 *   lm_head    ceil(vocab / tp) (no vocabulary padding)      h
 *
 * each in three passes, as cuBLAS column-major calls C[M,N] = op(A)[M,K]
 * op(B)[K,N]:  fwd (M=T, N, K; "N","N"), dgrad (M=T, N=K_fwd, K=N_fwd;
 * "N","T") and wgrad (M=K_fwd, N=N_fwd, K=T; "T","N").  Shapes repeated
 * across models are measured once.
 *
 * The grid covers M in 17 values from 64 to 16384 (powers of two and the
 * 1.5x points between them) against ten (N, K) pairs, the 17 cubes, and N
 * and K sweeps at M = 4096: about 210 shapes, far from the cartesian
 * product but enough to interpolate between.
 *
 * Convolutions are the 23 distinct conv layers of ResNet-50 v1.5 (stride
 * on the 3x3 of the bottleneck, as torchvision) at 224x224 input, plus four
 * 3x3 layers common in VGG/U-Net style networks.
 */
#include <stdlib.h>

#include "calib.h"

struct model {
	const char *name;
	int h, ffn, heads, kv_heads, vocab;
	bool swiglu;
};

static const struct model models[] = {
	{ "gpt3-175b", 12288, 49152, 96, 96, 50257, false },
	{ "llama2-7b", 4096, 11008, 32, 32, 32000, true },
	{ "llama2-70b", 8192, 28672, 64, 8, 32000, true },
	{ "llama3-8b", 4096, 14336, 32, 8, 128256, true },
	{ "llama3-70b", 8192, 28672, 64, 8, 128256, true },
	{ "llama3-405b", 16384, 53248, 128, 8, 128256, true },
};
#define NMODELS (sizeof(models) / sizeof(models[0]))

static const int tps[] = { 1, 2, 4, 8 };
static const int tokens_list[] = { 2048, 4096, 8192 };

static int cmp_shape(const void *x, const void *y)
{
	const struct gemm_shape *a = x, *b = y;

	if (a->m != b->m)
		return a->m < b->m ? -1 : 1;
	if (a->n != b->n)
		return a->n < b->n ? -1 : 1;
	if (a->k != b->k)
		return a->k < b->k ? -1 : 1;
	if (a->transa != b->transa)
		return a->transa < b->transa ? -1 : 1;
	return (a->transb > b->transb) - (a->transb < b->transb);
}

long long shapes_gemm_unique(struct gemm_shape *v, long long n)
{
	long long i, out = 0;

	qsort(v, (size_t)n, sizeof(*v), cmp_shape);
	for (i = 0; i < n; i++)
		if (out == 0 || cmp_shape(&v[out - 1], &v[i]) != 0)
			v[out++] = v[i];
	return out;
}

static void push(struct gemm_shape *v, long long *n, long long m, long long nn,
		 long long k, char ta, char tb)
{
	v[*n].m = m;
	v[*n].n = nn;
	v[*n].k = k;
	v[*n].transa = ta;
	v[*n].transb = tb;
	(*n)++;
}

long long shapes_gemm_models(bool quick, struct gemm_shape **out)
{
	const size_t cap = NMODELS * 4 * 3 * 5 * 3;
	struct gemm_shape *v = malloc(cap * sizeof(*v));
	long long n = 0;
	size_t mi, ti, ki;
	int l;

	if (!v)
		return -1;
	for (mi = 0; mi < NMODELS; mi++) {
		const struct model *md = &models[mi];
		const int hd = md->h / md->heads;

		if (quick && md->h != 4096 && md->h != 8192)
			continue;
		if (quick && md->vocab != 128256)
			continue;
		for (ti = 0; ti < 4; ti++) {
			const int tp = tps[ti];

			if (quick && tp != 1 && tp != 8)
				continue;
			for (ki = 0; ki < 3; ki++) {
				const long long t = tokens_list[ki];
				long long nf[5], kf[5];

				if (quick && t != 4096)
					continue;
				nf[0] = ((long long)md->h + 2LL * md->kv_heads * hd) / tp;
				kf[0] = md->h;
				nf[1] = md->h;
				kf[1] = md->h / tp;
				nf[2] = (md->swiglu ? 2LL : 1LL) * md->ffn / tp;
				kf[2] = md->h;
				nf[3] = md->h;
				kf[3] = md->ffn / tp;
				nf[4] = ((long long)md->vocab + tp - 1) / tp;
				kf[4] = md->h;
				for (l = 0; l < 5; l++) {
					push(v, &n, t, nf[l], kf[l], 'N', 'N');	/* fwd */
					push(v, &n, t, kf[l], nf[l], 'N', 'T');	/* dgrad */
					push(v, &n, kf[l], nf[l], t, 'T', 'N');	/* wgrad */
				}
			}
		}
	}
	*out = v;
	return shapes_gemm_unique(v, n);
}

static const long long grid_m[] = {
	64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096,
	6144, 8192, 12288, 16384,
};
#define NGRID (sizeof(grid_m) / sizeof(grid_m[0]))

static const long long grid_nk[][2] = {
	{ 1024, 1024 }, { 4096, 4096 }, { 8192, 8192 }, { 12288, 12288 },
	{ 1024, 4096 }, { 4096, 1024 }, { 4096, 16384 }, { 16384, 4096 },
	{ 2048, 8192 }, { 8192, 2048 },
};
#define NNK (sizeof(grid_nk) / sizeof(grid_nk[0]))

long long shapes_gemm_grid(bool quick, struct gemm_shape **out)
{
	const size_t cap = NGRID * NNK + 3 * NGRID;
	struct gemm_shape *v = malloc(cap * sizeof(*v));
	long long n = 0;
	size_t i, j;

	if (!v)
		return -1;
	if (quick) {
		/* Cubes 256 .. 8192 (powers of two) and one skinny sweep. */
		for (i = 4; i < NGRID - 2; i += 2)
			push(v, &n, grid_m[i], grid_m[i], grid_m[i], 'N', 'N');
		for (i = 0; i < NGRID - 2; i += 4)
			push(v, &n, grid_m[i], 4096, 4096, 'N', 'N');
		*out = v;
		return shapes_gemm_unique(v, n);
	}
	for (i = 0; i < NGRID; i++) {
		for (j = 0; j < NNK; j++)
			push(v, &n, grid_m[i], grid_nk[j][0], grid_nk[j][1], 'N', 'N');
		push(v, &n, grid_m[i], grid_m[i], grid_m[i], 'N', 'N');
		push(v, &n, 4096, grid_m[i], 4096, 'N', 'N');
		push(v, &n, 4096, 4096, grid_m[i], 'N', 'N');
	}
	*out = v;
	return shapes_gemm_unique(v, n);
}

/* n (batch) is set by the caller; dil is 1 throughout. */
static const struct kernels_conv convs[] = {
	/* ResNet-50 stem */
	{ 1, 3, 224, 224, 64, 7, 7, 2, 3, 1 },
	/* conv2_x, 56x56 */
	{ 1, 64, 56, 56, 64, 1, 1, 1, 0, 1 },
	{ 1, 64, 56, 56, 64, 3, 3, 1, 1, 1 },
	{ 1, 64, 56, 56, 256, 1, 1, 1, 0, 1 },	/* also the downsample */
	{ 1, 256, 56, 56, 64, 1, 1, 1, 0, 1 },
	/* conv3_x, 28x28 */
	{ 1, 256, 56, 56, 128, 1, 1, 1, 0, 1 },
	{ 1, 128, 56, 56, 128, 3, 3, 2, 1, 1 },
	{ 1, 128, 28, 28, 512, 1, 1, 1, 0, 1 },
	{ 1, 256, 56, 56, 512, 1, 1, 2, 0, 1 },	/* downsample */
	{ 1, 512, 28, 28, 128, 1, 1, 1, 0, 1 },
	{ 1, 128, 28, 28, 128, 3, 3, 1, 1, 1 },
	/* conv4_x, 14x14 */
	{ 1, 512, 28, 28, 256, 1, 1, 1, 0, 1 },
	{ 1, 256, 28, 28, 256, 3, 3, 2, 1, 1 },
	{ 1, 256, 14, 14, 1024, 1, 1, 1, 0, 1 },
	{ 1, 512, 28, 28, 1024, 1, 1, 2, 0, 1 },	/* downsample */
	{ 1, 1024, 14, 14, 256, 1, 1, 1, 0, 1 },
	{ 1, 256, 14, 14, 256, 3, 3, 1, 1, 1 },
	/* conv5_x, 7x7 */
	{ 1, 1024, 14, 14, 512, 1, 1, 1, 0, 1 },
	{ 1, 512, 14, 14, 512, 3, 3, 2, 1, 1 },
	{ 1, 512, 7, 7, 2048, 1, 1, 1, 0, 1 },
	{ 1, 1024, 14, 14, 2048, 1, 1, 2, 0, 1 },	/* downsample */
	{ 1, 2048, 7, 7, 512, 1, 1, 1, 0, 1 },
	{ 1, 512, 7, 7, 512, 3, 3, 1, 1, 1 },
	/* common 3x3 shapes */
	{ 1, 64, 128, 128, 64, 3, 3, 1, 1, 1 },
	{ 1, 128, 64, 64, 128, 3, 3, 1, 1, 1 },
	{ 1, 256, 32, 32, 256, 3, 3, 1, 1, 1 },
	{ 1, 512, 16, 16, 512, 3, 3, 1, 1, 1 },
};

int shapes_conv(const struct kernels_conv **out)
{
	*out = convs;
	return (int)(sizeof(convs) / sizeof(convs[0]));
}

/* Query heads per GPU of the models at TP 1, 2, 4, 8 (GQA's K/V heads are
 * expanded to the query heads in the unfused path), all head_dim 128. */
static const struct attn_shape attn_full[] = {
	{ 1, 4, 2048, 128 }, { 1, 8, 2048, 128 }, { 1, 12, 2048, 128 }, { 1, 16, 2048, 128 },
	{ 1, 24, 2048, 128 }, { 1, 32, 2048, 128 }, { 1, 48, 2048, 128 }, { 1, 64, 2048, 128 },
	{ 1, 96, 2048, 128 }, { 1, 128, 2048, 128 },
	{ 1, 4, 4096, 128 }, { 1, 8, 4096, 128 }, { 1, 12, 4096, 128 }, { 1, 16, 4096, 128 },
	{ 1, 24, 4096, 128 }, { 1, 32, 4096, 128 }, { 1, 48, 4096, 128 }, { 1, 64, 4096, 128 },
	{ 1, 96, 4096, 128 }, { 1, 128, 4096, 128 },
	{ 1, 4, 8192, 128 }, { 1, 8, 8192, 128 }, { 1, 12, 8192, 128 }, { 1, 16, 8192, 128 },
	{ 1, 24, 8192, 128 }, { 1, 32, 8192, 128 }, { 1, 48, 8192, 128 }, { 1, 64, 8192, 128 },
	{ 1, 96, 8192, 128 }, { 1, 128, 8192, 128 },
};

static const struct attn_shape attn_quick[] = {
	{ 1, 8, 2048, 128 }, { 1, 32, 2048, 128 }, { 1, 8, 4096, 128 }, { 1, 32, 4096, 128 },
};

int shapes_attn(bool quick, const struct attn_shape **out)
{
	if (quick) {
		*out = attn_quick;
		return (int)(sizeof(attn_quick) / sizeof(attn_quick[0]));
	}
	*out = attn_full;
	return (int)(sizeof(attn_full) / sizeof(attn_full[0]));
}
