/* cp_ring: Transformer Engine's p2p ring attention's copies and
 * accumulations (see cp_ring.h for the source and the formulas). */
#include "cp_ring.h"

struct cp_ring_extra cp_ring_extra(int c, bool bwd, double q_B, double o_B, double kv_B)
{
	struct cp_ring_extra x = { 0 };
	if (c < 2)
		return x;
	double off = c - 1, mid = c - 2;  /* off-diagonal steps; those not step 0 */
	if (!bwd) {
		x.pre_B = 2 * kv_B;
		x.pre_kernels = 1;
		x.post_B = off * q_B + 2 * o_B + 1.5 * off * o_B;
		x.post_kernels = (c - 1) + c;
		return x;
	}
	/* backward: "pre" runs before the steps, "post" after them */
	x.pre_B = 2 * kv_B + off * (q_B + 2 * o_B);
	x.pre_kernels = 1 + 3 * (c - 1);
	x.post_B = (3.5 + 1.5 * mid) * q_B + (4.5 + 3 * mid) * kv_B;
	x.post_kernels = 2 * (c + 1);
	return x;
}
