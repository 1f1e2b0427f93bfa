/* test-cp-ring: Transformer Engine's p2p ring attention's copies and
 * gradient accumulations (models/cp_ring.h), as workload_block() emits
 * them for Llama 3 8B: bytes and kernels per pass against a step-by-step
 * walk of rank 0's branches in TE's AttnFuncWithCP (v1.8 attention.py,
 * sbhd, causal) written here on its own, where they sit around the flash
 * steps, and that non-causal cores, all-to-all CP and torch's ring get
 * none of them. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cp_ring.h"
#include "model.h"
#include "op.h"
#include "stack.h"
#include "testutil.h"
#include "workload.h"

/* What rank 0 of c moves, walked step by step: an element-wise kernel
 * reading r and writing w bytes adds r + w. Q, O, KV: its queries,
 * output, keys + values. */
struct walk {
	double in_B, out_B;
	int in_k, out_k;
};

static void kern(double *bytes, int *k, double r, double w)
{
	*bytes += r + w;
	(*k)++;
}

static struct walk walk_fwd(int c, double Q, double O, double KV)
{
	struct walk x = { 0 };
	kern(&x.in_B, &x.in_k, KV, KV);                      /* torch.cat((k, v)) */
	for (int i = 1; i < c; i++)                            /* i > rank: q[1].contiguous() */
		kern(&x.out_B, &x.out_k, Q / 2, Q / 2);
	kern(&x.out_B, &x.out_k, O, O);                        /* step 0's correction */
	for (int i = 1; i < c; i++)                            /* second-half corrections */
		kern(&x.out_B, &x.out_k, O / 2 + O / 2, O / 2);
	return x;
}

static struct walk walk_bwd(int c, double Q, double O, double KV)
{
	struct walk x = { 0 };
	kern(&x.in_B, &x.in_k, KV, KV);                        /* p2p_comm_buffers[0][0].copy_(kv) */
	for (int i = 0; i < c - 1; i++) {                      /* i < c - rank - 1 */
		kern(&x.in_B, &x.in_k, Q / 2, Q / 2);          /* q[1].contiguous() */
		kern(&x.in_B, &x.in_k, O / 2, O / 2);          /* out[1] */
		kern(&x.in_B, &x.in_k, O / 2, O / 2);          /* dout[1] */
	}
	for (int i = 0; i < c; i++) {
		if (i == c - 1) {                              /* the diagonal step, rank 0 */
			kern(&x.out_B, &x.out_k, Q / 2, Q / 2);        /* dq[0].copy_ */
			kern(&x.out_B, &x.out_k, Q, Q / 2);            /* dq[1].add_ */
			kern(&x.out_B, &x.out_k, KV, KV / 2);          /* dkv[:, 0].add_ */
			kern(&x.out_B, &x.out_k, KV / 2, KV / 2);      /* dkv[:, 1].copy_ */
		} else if (i > 0) {
			kern(&x.out_B, &x.out_k, Q, Q / 2);            /* dq[1].add_ */
			kern(&x.out_B, &x.out_k, 2 * KV, KV);          /* dkv.add_ */
		} else {
			kern(&x.out_B, &x.out_k, Q / 2, Q / 2);        /* dq[1].copy_ */
			kern(&x.out_B, &x.out_k, KV, KV);              /* dkv.copy_ */
		}
	}
	return x;
}

/* The op named name in l: its index, or -1. */
static int find(const struct op_list *l, const char *name)
{
	for (int i = 0; i < l->n; i++)
		if (strcmp(l->v[i].name, name) == 0)
			return i;
	return -1;
}

static int first_attn(const struct op_list *l)
{
	for (int i = 0; i < l->n; i++)
		if (l->v[i].kind == OP_ATTN)
			return i;
	return -1;
}

static int last_attn(const struct op_list *l)
{
	int k = -1;
	for (int i = 0; i < l->n; i++)
		if (l->v[i].kind == OP_ATTN)
			k = i;
	return k;
}

static void expect_op(const struct op_list *l, const char *name, double bytes, int kernels)
{
	int i = find(l, name);
	cr_assert(i >= 0, "no %s", name);
	cr_expect(fabs(l->v[i].bytes - bytes) <= 1e-9 * bytes, "%s: %.17g B, want %.17g",
		  name, l->v[i].bytes, bytes);
	cr_expect_eq(op_launches(&l->v[i]), kernels, "%s: %d kernels, want %d", name,
		     op_launches(&l->v[i]), kernels);
}

/* Llama 3 8B (32 heads, 8 KV heads of 128), b 1 x s 8192, bf16 core: per
 * rank T = 8192 / c tokens, Q = O = T x 32 / t x 128 x 2 B, KV = T x 8 / t
 * x 256 x 2 B. */
Test(cp_ring, bytes_and_kernels_follow_rank_0s_branches)
{
	struct model *m = load_model("models/zoo/llama3-8b.json");
	const int cases[][2] = { { 2, 1 }, { 3, 1 }, { 4, 2 }, { 8, 1 } };  /* c, t */
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		int c = cases[k][0], t = cases[k][1];
		struct wl_shape s = { .micro_batch = 1, .seq = 8192, .tp = t, .sp = t > 1,
				      .dtype = DTYPE_FP8, .attention = ATTN_FLASH, .cp = c };
		double T = 8192.0 / c;
		double Q = T * 32 / t * 128 * 2, KV = T * 8 / t * 256 * 2;
		struct walk f = walk_fwd(c, Q, Q, KV), b = walk_bwd(c, Q, Q, KV);
		struct op_list l;
		op_list_init(&l);
		cr_assert_eq(workload_block(m, &s, WL_ATTN, PASS_FWD, RECOMPUTE_NONE, &l), 0);
		expect_op(&l, "cp_ring_in", f.in_B, f.in_k);
		expect_op(&l, "cp_ring_out", f.out_B, f.out_k);
		/* forward: the send buffer before the first step, the rest after the last */
		cr_expect_lt(find(&l, "cp_ring_in"), first_attn(&l));
		cr_expect_gt(find(&l, "cp_ring_out"), last_attn(&l));
		op_list_finish(&l);
		op_list_init(&l);
		cr_assert_eq(workload_block(m, &s, WL_ATTN, PASS_BWD, RECOMPUTE_NONE, &l), 0);
		expect_op(&l, "cp_ring_in.bwd", b.in_B, b.in_k);
		expect_op(&l, "cp_ring_out.bwd", b.out_B, b.out_k);
		/* backward lists run in reverse: what precedes the steps comes after them */
		cr_expect_gt(find(&l, "cp_ring_in.bwd"), last_attn(&l));
		cr_expect_lt(find(&l, "cp_ring_out.bwd"), first_attn(&l));
		op_list_finish(&l);
	}
	model_destroy(m);
}

/* The closed forms of cp_ring.h at c = 2 for the D4 row's shape (Llama 3
 * 8B, CP 2, TP 1, s 8192): Q = O = 33,554,432 B, KV = 16,777,216 B. */
Test(cp_ring, llama3_8b_cp2_closed_forms)
{
	double Q = 4096.0 * 32 * 128 * 2, KV = 4096.0 * 8 * 256 * 2;
	cr_assert_eq(Q, 33554432.0);
	cr_assert_eq(KV, 16777216.0);
	struct cp_ring_extra f = cp_ring_extra(2, false, Q, Q, KV);
	struct cp_ring_extra b = cp_ring_extra(2, true, Q, Q, KV);
	cr_expect_eq(f.pre_B, 2 * KV);
	cr_expect_eq(f.post_B, 4.5 * Q);        /* Q + 2 O + 1.5 O */
	cr_expect_eq(b.pre_B, 2 * KV + 3 * Q);  /* 2 KV + Q + 2 O */
	cr_expect_eq(b.post_B, 3.5 * Q + 4.5 * KV);
	cr_expect_eq(f.pre_kernels + f.post_kernels, 1 + 1 + 2);
	cr_expect_eq(b.pre_kernels + b.post_kernels, 4 + 6);
	struct cp_ring_extra none = cp_ring_extra(1, true, Q, Q, KV);
	cr_expect_eq(none.pre_B + none.post_B, 0);
}

static int ring_ops(const struct model *m, struct wl_shape *s)
{
	int n = 0;
	for (int p = 0; p < 2; p++) {
		struct op_list l;
		op_list_init(&l);
		cr_assert_eq(workload_block(m, s, WL_ATTN, p ? PASS_BWD : PASS_FWD, RECOMPUTE_NONE, &l), 0);
		for (int i = 0; i < l.n; i++)
			n += strncmp(l.v[i].name, "cp_ring", 7) == 0;
		op_list_finish(&l);
	}
	return n;
}

/* None without the TE ring: all-to-all CP, torch's context_parallel
 * (torchtitan), a bidirectional encoder, no CP. */
Test(cp_ring, only_transformer_engines_causal_ring_pays_them)
{
	struct model *m = load_model("models/zoo/llama3-8b.json");
	struct wl_shape s = { .micro_batch = 1, .seq = 8192, .tp = 1, .dtype = DTYPE_BF16,
			      .attention = ATTN_FLASH, .cp = 2 };
	cr_expect_eq(ring_ops(m, &s), 4);
	s.cp_a2a = true;
	cr_expect_eq(ring_ops(m, &s), 0);
	s.cp_a2a = false;
	s.stack = stack_find("torchtitan");
	cr_assert(s.stack);
	cr_expect_eq(ring_ops(m, &s), 0);
	s.stack = NULL;
	s.cp = 1;
	cr_expect_eq(ring_ops(m, &s), 0);
	model_destroy(m);
	struct model *bert = load_model("models/zoo/bert-large.json");
	s.cp = 2;
	s.seq = 512;
	cr_expect_eq(ring_ops(bert, &s), 0);
	model_destroy(bert);
}
