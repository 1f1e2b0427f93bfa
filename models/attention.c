/* attention: FLOPs and efficiency of the attention core (see attention.h). */
#include "attention.h"

#include <math.h>
#include <stddef.h>

const char *const attention_names[ATTN_N + 1] = { "unfused", "flash", NULL };
const char *const attn_backend_names[ATTN_BE_N + 1] = { "best", "fa2", "fa3", "cudnn", "fa1",
							      NULL };

_Static_assert(ATTN_BE_N <= (int)(sizeof(((struct gpu_spec *)0)->flash_be_fwd) /
				  sizeof(double)), "gpu_spec.flash_be_* too small");

#define HD_HALF 56.0     /* head-dim saturation, FA3 H100 d = 128 vs 256 */
#define SEQ_HALF 239.0   /* sequence saturation, FA3 H100 s = 512 .. 16k (gpu.h default) */
#define EFF_CAP 0.95
#define GRID_BLOCK 128.0     /* query (fwd) or key (bwd) rows per CTA */
#define GRID_REF_CTAS 2048.0 /* 16k tokens x 16 heads / 128: the efficiencies' grid */

enum attention attention_default(const struct gpu_spec *g)
{
	return gpu_has_flash(g) ? ATTN_FLASH : ATTN_UNFUSED;
}

double attention_flops(enum attention a, bool causal, bool bwd, double bh,
		       double s, double d)
{
	return attention_flops_qkv(a, causal, bwd, bh, s, d, d);
}

double attention_flops_qkv(enum attention a, bool causal, bool bwd, double bh,
			   double s, double dqk, double dv)
{
	double qk = 2 * bh * s * s * dqk, pv = 2 * bh * s * s * dv;
	if (a == ATTN_UNFUSED)
		return (bwd ? 2 : 1) * (qk + pv);
	double c = causal ? 0.5 : 1;
	/* backward: QK^T again, dV and dP (over dv), dQ and dK (over dqk) */
	return (bwd ? 3 * qk + 2 * pv : qk + pv) * c;
}

double attention_flash_eff(const struct gpu_spec *g, enum attn_backend be, bool bwd,
			   double s, double d, bool causal)
{
	double max = bwd ? g->flash_bwd_max : g->flash_fwd_max;
	if (max > 0 && be > ATTN_BE_BEST && be < ATTN_BE_N) {
		double m = bwd ? g->flash_be_bwd[be] : g->flash_be_fwd[be];
		if (m > 0)
			max = m;
	}
	if (max <= 0 || s <= 0 || d <= 0)
		return 0;
	double sk = causal ? s / 2 : s;
	double f = (d / (d + HD_HALF)) / (128 / (128 + HD_HALF));
	double half = g->flash_seq_half > 0 ? g->flash_seq_half : SEQ_HALF;
	if (bwd && be > ATTN_BE_BEST && be < ATTN_BE_N && g->flash_be_bwd_half[be] > 0)
		half = g->flash_be_bwd_half[be];
	double e = max * f * sk / (sk + half);
	return fmin(e, EFF_CAP);
}

double attention_window_ratio(double s, double w)
{
	if (w <= 0 || w >= s || s <= 0)
		return 1;
	return (s * w - w * w / 2) / (s * s / 2);
}

double attention_window_seq(double s, double w)
{
	return s * attention_window_ratio(s, w);
}

double attention_grid_factor(long sms, bool causal, double bh, double s)
{
	if (sms <= 0 || bh <= 0 || s <= 0)
		return 1;
	double x = bh * ceil(s / GRID_BLOCK) / (double)sms;
	double xr = GRID_REF_CTAS / (double)sms;
	if (causal)
		return (1 + 1 / x) / (1 + 1 / xr);
	return (ceil(x) / x) / (ceil(xr) / xr);
}

double attention_fa3_bwd_aux_bytes(double bh, double s, double d, double elem_B)
{
	if (bh <= 0 || s <= 0 || d <= 0)
		return 0;
	double pre = s * (2 * d * elem_B + 4 * d + 3 * 4);  /* O, dO in; zeroed dQaccum; 3 fp32 rows */
	double post = s * d * (4 + elem_B);                /* dQaccum in, dQ out */
	return bh * (pre + post);
}

/* attention.h gives each figure's source. */
#define DROP_FA1_FWD 1.233   /* FA1 paper Tables 15 / 18, median s 1k..64k */
#define DROP_FA1_BWD 1.230   /* Tables 16 / 19 */
#define DROP_FA2 (0.728 / 0.695)     /* GB200, TE PR #3313 */
#define DROP_CUDNN_SM90 (0.614 / 0.594) /* H200, TE issue #3312 */
#define DROP_CUDNN_SM100 (0.525 / 0.480) /* B300, TE issue #3312 */

double attention_dropout_ratio(enum attn_backend be, double cc, bool bwd)
{
	if (be == ATTN_BE_BEST)
		be = cc >= 9 ? ATTN_BE_CUDNN : ATTN_BE_FA2;
	switch (be) {
	case ATTN_BE_FA1:
		return bwd ? DROP_FA1_BWD : DROP_FA1_FWD;
	case ATTN_BE_FA2:
	case ATTN_BE_FA3: /* runs FA2 (attention_backend_dropout) */
		return DROP_FA2;
	case ATTN_BE_CUDNN:
		return cc >= 10 ? DROP_CUDNN_SM100 : DROP_CUDNN_SM90;
	default:
		return 1;
	}
}

enum attn_backend attention_backend_dropout(enum attn_backend be, bool dropout)
{
	return dropout && be == ATTN_BE_FA3 ? ATTN_BE_FA2 : be;
}
