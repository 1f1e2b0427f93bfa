/* schedule: GPipe, 1F1B, interleaved 1F1B and ZB-H1 step orders (see
 * schedule.h). */
#include "schedule.h"

#include <stdlib.h>

#include "bug.h"
#include "xalloc.h"

static int gpipe_order(int p, int s, int m, int v, struct sched_step *o);
static int onef1b_order(int p, int s, int m, int v, struct sched_step *o);
static int interleaved_order(int p, int s, int m, int v, struct sched_step *o);
static int zbh1_order(int p, int s, int m, int v, struct sched_step *o);

const struct schedule_impl schedule_registry[SCHED_N + 1] = {
	[SCHED_GPIPE] = { "gpipe", "all forwards then all backwards (GPipe)", gpipe_order },
	[SCHED_1F1B] = { "1f1b", "one-forward-one-backward, PipeDream-flush (Megatron-LM default)",
			 onef1b_order },
	[SCHED_INTERLEAVED] = { "interleaved", "interleaved 1F1B with v model chunks per rank (Megatron-LM)",
				interleaved_order },
	[SCHED_ZBH1] = { "zb-h1", "zero-bubble ZB-H1: backward split into B and W, W fills 1F1B's bubble (Qi et al. 2024)",
			 zbh1_order },
	[SCHED_N] = { NULL, NULL, NULL },
};

/* Megatron's mapping of the k-th virtual micro-batch to (mb, chunk). */
static void virt(int k, int p, int v, bool fwd, int *mb, int *chunk)
{
	int group = k / (p * v);
	int in = k % (p * v);
	int c = in / p;
	*chunk = fwd ? c : v - 1 - c;
	*mb = group * p + in % p;
}

static int gpipe_order(int p, int s, int m, int v, struct sched_step *o)
{
	int n = 0;
	for (int c = 0; c < v; c++)
		for (int j = 0; j < m; j++)
			o[n++] = (struct sched_step){ .fwd = true, .mb = j, .chunk = c };
	for (int c = v - 1; c >= 0; c--)
		for (int j = 0; j < m; j++)
			o[n++] = (struct sched_step){ .mb = j, .chunk = c };
	return n;
}

/* warm-up forwards, then one forward one backward, then cool-down
 * backwards, over the m x v virtual micro-batches */
static int steady_order(int p, int v, int total, int warm, struct sched_step *o)
{
	int n = 0, f = 0, b = 0, mb, ch;
	if (warm > total)
		warm = total;
	for (; f < warm; f++) {
		virt(f, p, v, true, &mb, &ch);
		o[n++] = (struct sched_step){ .fwd = true, .mb = mb, .chunk = ch };
	}
	while (f < total) {
		virt(f++, p, v, true, &mb, &ch);
		o[n++] = (struct sched_step){ .fwd = true, .mb = mb, .chunk = ch };
		virt(b++, p, v, false, &mb, &ch);
		o[n++] = (struct sched_step){ .mb = mb, .chunk = ch };
	}
	while (b < total) {
		virt(b++, p, v, false, &mb, &ch);
		o[n++] = (struct sched_step){ .mb = mb, .chunk = ch };
	}
	return n;
}

static int onef1b_order(int p, int s, int m, int v, struct sched_step *o)
{
	return steady_order(p, 1, m, p - s - 1, o);
}

static int interleaved_order(int p, int s, int m, int v, struct sched_step *o)
{
	if (v == 1)
		return onef1b_order(p, s, m, 1, o);
	int total = m * v;
	int warm = m == p ? total : (p - s - 1) * 2 + (v - 1) * p;
	return steady_order(p, v, total, warm, o);
}

/* ZB-H1, the handcrafted schedule of Qi et al. (section 3.1, figure 3):
 * stage s runs 1F1B's p - s - 1 warm-up forwards, then s rounds of F, B
 * with the W held back (the slots where 1F1B's stage s waits for its
 * first backward), then F, B, W while forwards remain, B, W in the
 * cool-down, and last the s held-back W's, which fill the cool-down's
 * idle slots. At most p micro-batches are in flight (F run, W not) on
 * any stage, stage 0's 1F1B peak. The reference implementation's
 * handcrafted ZB-H1 has the same order: sail-sg/zero-bubble-pipeline-
 * parallelism (branch zb-h1-quick-start, a patch to Megatron-LM's
 * forward_backward_pipelining_without_interleaving: W popped from the
 * WeightGradStore after the backward from round `rank` on, the rest
 * flushed at the end); its automatic scheduler
 * megatron/core/pipeline_parallel/zerobubble/scheduler/zb.py at
 * 39f2c186a27580b7051eb51e0f651e1efd0a8170 reaches it with
 * --zero-bubble-max-pending-backward = p (ZB1P). The input gradient is
 * sent after B, not after W. */
static int zbh1_order(int p, int s, int m, int v, struct sched_step *o)
{
	int n = 0, f = 0, b = 0, w = 0;
	int warm = p - s - 1 < m ? p - s - 1 : m;
	(void)v;
	for (; f < warm; f++)
		o[n++] = (struct sched_step){ .fwd = true, .mb = f };
	for (int r = 0; r < s && f < m; r++) {
		o[n++] = (struct sched_step){ .fwd = true, .mb = f++ };
		o[n++] = (struct sched_step){ .mb = b++ };
	}
	while (f < m) {
		o[n++] = (struct sched_step){ .fwd = true, .mb = f++ };
		o[n++] = (struct sched_step){ .mb = b++ };
		o[n++] = (struct sched_step){ .mb = w++, .w = true };
	}
	while (b < m) {
		o[n++] = (struct sched_step){ .mb = b++ };
		o[n++] = (struct sched_step){ .mb = w++, .w = true };
	}
	while (w < m)
		o[n++] = (struct sched_step){ .mb = w++, .w = true };
	return n;
}

bool schedule_splits_backward(enum sched_kind k)
{
	return k == SCHED_ZBH1;
}

int schedule_steps(enum sched_kind k, int m, int v)
{
	if (schedule_splits_backward(k))
		return 3 * m;
	return 2 * m * (k == SCHED_1F1B ? 1 : v);
}

struct sched_step *schedule_order(enum sched_kind k, int p, int s, int m, int v)
{
	BUG_ON(k < 0 || k >= SCHED_N, "schedule %d out of the registry", (int)k);
	if (k == SCHED_1F1B || k == SCHED_ZBH1)
		v = 1;
	int want = schedule_steps(k, m, v);
	struct sched_step *o = xcalloc((size_t)(want + 1), sizeof(*o));
	int n = schedule_registry[k].order(p, s, m, v, o);
	BUG_ON(n != want, "schedule %s wrote %d steps for %d micro-batches x %d chunks, want %d",
	       schedule_registry[k].name, n, m, v, want);
	return o;
}

int schedule_step_inflight(const struct sched_step *st, bool split)
{
	if (st->fwd)
		return 1;
	return !split || st->w ? -1 : 0;
}

int schedule_peak_inflight(const struct sched_step *st, int n)
{
	int alive = 0, peak = 0;
	bool split = false;
	for (int i = 0; i < n; i++)
		split |= st[i].w;
	for (int i = 0; i < n; i++) {
		alive += schedule_step_inflight(&st[i], split);
		if (alive > peak)
			peak = alive;
	}
	return peak;
}
