/* cp_ring: the memory-bound kernels Transformer Engine's p2p ring
 * attention (context parallelism, cp_comm_type p2p) runs on a rank
 * besides its attention steps, causal masks only.
 *
 * Read in NVIDIA/TransformerEngine AttnFuncWithCP (v1.8,
 * transformer_engine/pytorch/attention.py L535-1650: TE 1.8.0.dev0 is
 * what NeMo Framework 24.07 ships, docs.nvidia.com/nemo-framework/
 * user-guide/24.09/softwarecomponentversions.html) and checked against
 * AttnFuncWithCPAndKVP2P of v2.9 (pytorch/attention/dot_product_attention/
 * context_parallel.py L1060-2430). The local sequence of T = s / c
 * tokens is the two load-balanced chunks i and 2c-1-i (sbhd viewed as
 * [2, T/2, ...]). What follows is rank 0 of the CP group (the rank the
 * simulator runs): its c - 1 off-diagonal steps all take the second half
 * of its queries against a whole received K/V block (the `i > rank`
 * branch forward, `i < c - rank - 1` backward).
 *
 * With Q, O, KV the bytes of this rank's queries, attention output and
 * keys + values (16-bit), per layer and micro-batch:
 *
 *   forward, before the first step (it feeds the first send):
 *     K and V concatenated into the send buffer (torch.cat)      2 KV, 1 kernel
 *   forward, after the steps:
 *     each off-diagonal step's q[1].contiguous()                 (c-1) Q, c-1 kernels
 *     the output corrections (flash_attn_fwd_out_correction, one
 *     fused element-wise kernel each): the diagonal step's whole
 *     output (read out_per_step, write out) and each other
 *     step's second half (read out_per_step, read and write out) 2 O + 1.5 (c-1) O, c kernels
 *   backward, before the steps:
 *     the saved K/V copied into the first send buffer            2 KV, 1 kernel
 *     each off-diagonal step's q, out and dout second halves
 *     made contiguous                                            (c-1)(Q + 2 O), 3 (c-1) kernels
 *   backward, after the steps (the accumulation of each step's
 *   gradients: copy_ reads and writes, add_ reads two and writes one):
 *     dq: step 0 half copy, middle steps half add, the diagonal
 *     step half copy + half add                                  (3.5 + 1.5 (c-2)) Q, c+1 kernels
 *     dK/dV: step 0 whole copy, middle steps whole add, the
 *     diagonal step half add + half copy                         (4.5 + 3 (c-2)) KV, c+1 kernels
 *
 * Both versions run these. Not priced, as the stack serves both: TE
 * 1.8's zero-filled output, which its first correction reads back (2 O
 * forward), and its torch.cat of dK and dV each backward step (2 KV per
 * step; v2.9 accumulates dk and dv apart); the softmax log-sum-exp
 * corrections (b x heads x T fp32/fp64 values: under 2 % of the output's
 * bytes at head dim 128). Non-causal rings and all-to-all CP run other
 * code and get none of these. */
#ifndef DDLSIM_CP_RING_H
#define DDLSIM_CP_RING_H

#include <stdbool.h>

/* One pass's kernels: bytes and launches before the attention steps
 * and after them (in the order the pass runs). */
struct cp_ring_extra {
	double pre_B, post_B;
	int pre_kernels, post_kernels;
};

/* The formulas above for a ring of c >= 2 ranks, pass bwd, with q_B,
 * o_B, kv_B this rank's Q, O and KV bytes; c < 2: zeros. */
struct cp_ring_extra cp_ring_extra(int c, bool bwd, double q_B, double o_B, double kv_B);

#endif
