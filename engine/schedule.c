/* schedule: GPipe, 1F1B, interleaved 1F1B, ZB-H1 and DualPipe step
 * orders (see schedule.h). */
#include "schedule.h"

#include <stdlib.h>

#include "bug.h"
#include "xalloc.h"

static int gpipe_order(int p, int s, int m, int v, struct sched_step *o);
static int onef1b_order(int p, int s, int m, int v, struct sched_step *o);
static int interleaved_order(int p, int s, int m, int v, struct sched_step *o);
static int zbh1_order(int p, int s, int m, int v, struct sched_step *o);
static int dualpipe_order(int p, int s, int m, int v, struct sched_step *o);

const struct schedule_impl schedule_registry[SCHED_N + 1] = {
	[SCHED_GPIPE] = { "gpipe", "all forwards then all backwards (GPipe)", gpipe_order },
	[SCHED_1F1B] = { "1f1b", "one-forward-one-backward, PipeDream-flush (Megatron-LM default)",
			 onef1b_order },
	[SCHED_INTERLEAVED] = { "interleaved", "interleaved 1F1B with v model chunks per rank (Megatron-LM)",
				interleaved_order },
	[SCHED_ZBH1] = { "zb-h1", "zero-bubble ZB-H1: backward split into B and W, W fills 1F1B's bubble (Qi et al. 2024)",
			 zbh1_order },
	[SCHED_DUALPIPE] = { "dualpipe", "DeepSeek-V3's bidirectional DualPipe: two chunks per rank, "
			     "F&B pairs, split backward (arXiv 2412.19437)", dualpipe_order },
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

/* DualPipe's order, as the reference's DualPipe.step() issues it
 * (deepseek-ai/DualPipe dualpipe/dualpipe.py at 3da1bbea5360, steps 1 to
 * 8). The reference names its chunks by phase: phase 0 is the chunk in
 * which the rank stands half_rank = min(s, p - 1 - s) stages from its
 * pipeline's start (chunk 0, the forward direction, on the first half of
 * the ranks; chunk 1 on the second half), phase 1 the other. The W's
 * are popped first in, first out (its WeightGradStore queue). */
struct dp_state {
	struct sched_step *o;
	int n, second, hm;
	int f[2], b[2];         /* forwards, backwards issued, per chunk */
	int wq[512], wh, wt;    /* B's whose W waits, as step indices of o */
};

static void dp_f(struct dp_state *d, int phase, bool pair)
{
	int c = phase ^ d->second;
	d->o[d->n++] = (struct sched_step){ .fwd = true, .mb = c * d->hm + d->f[c]++, .chunk = c,
					    .pair = pair };
}

static void dp_b(struct dp_state *d, int phase, bool zb)
{
	int c = phase ^ d->second, mb = c * d->hm + d->b[c]++;
	d->o[d->n++] = (struct sched_step){ .mb = mb, .chunk = c, .whole = !zb };
	if (!zb) {
		d->o[d->n++] = (struct sched_step){ .mb = mb, .chunk = c, .w = true, .whole = true };
		return;
	}
	BUG_ON(d->wt - d->wh >= 512, "dualpipe: over 512 W's pending");
	d->wq[d->wt++ % 512] = d->n - 1;
}

static void dp_w(struct dp_state *d)
{
	BUG_ON(d->wh == d->wt, "dualpipe: a W with no B before it");
	const struct sched_step *b = &d->o[d->wq[d->wh++ % 512]];
	d->o[d->n++] = (struct sched_step){ .mb = b->mb, .chunk = b->chunk, .w = true };
}

static int dualpipe_order(int p, int s, int m, int v, struct sched_step *o)
{
	int half = p / 2, hr = s < p - 1 - s ? s : p - 1 - s;
	struct dp_state d = { .o = o, .second = s >= half, .hm = m / 2 };
	(void)v;
	BUG_ON(p % 2 || m % 2 || m < 2 * p, "dualpipe needs p even and m even >= 2 p, got p=%d m=%d", p, m);
	for (int i = 0; i < (half - hr - 1) * 2; i++)          /* 1: nF0 */
		dp_f(&d, 0, false);
	for (int i = 0; i < hr + 1; i++) {                      /* 2: nF0F1 */
		dp_f(&d, 0, false);
		dp_f(&d, 1, false);
	}
	for (int i = 0; i < half - hr - 1; i++) {               /* 3: nB1W1F1 */
		dp_b(&d, 1, true);
		dp_w(&d);
		dp_f(&d, 1, false);
	}
	for (int i = 0; i < d.hm - p + hr + 1; i++) {           /* 4: nF0B1F1B0 */
		dp_f(&d, 0, true);
		dp_b(&d, 1, false);
		dp_f(&d, 1, true);
		dp_b(&d, 0, false);
	}
	for (int i = 0; i < half - hr - 1; i++) {               /* 5: nB1F1B0 */
		dp_b(&d, 1, false);
		dp_f(&d, 1, true);
		dp_b(&d, 0, false);
	}
	bool zb = false;                                        /* 6: nB1B0 */
	for (int i = 0; i < hr + 1; i++) {
		if (i == (hr + 1) / 2 && hr % 2 == 1)
			zb = true;
		dp_b(&d, 1, zb);
		if (i == (hr + 1) / 2 && hr % 2 == 0)
			zb = true;
		dp_b(&d, 0, zb);
	}
	for (int i = 0; i < half - hr - 1; i++) {               /* 7: nWB0 */
		dp_w(&d);
		dp_b(&d, 0, true);
	}
	for (int i = 0; i < hr + 1; i++)                        /* 8: nW */
		dp_w(&d);
	BUG_ON(d.wh != d.wt, "dualpipe: %d W's left over", d.wt - d.wh);
	return d.n;
}

bool schedule_splits_backward(enum sched_kind k)
{
	return k == SCHED_ZBH1 || k == SCHED_DUALPIPE;
}

int schedule_chunks(enum sched_kind k, int interleave)
{
	return k == SCHED_INTERLEAVED ? interleave : k == SCHED_DUALPIPE ? 2 : 1;
}

int schedule_vstage(enum sched_kind k, int p, int v, int stage, int chunk, int *nv)
{
	if (k == SCHED_DUALPIPE) {
		*nv = p;
		return chunk == 0 ? stage : p - 1 - stage;
	}
	*nv = p * v;
	return chunk * p + stage;
}

bool schedule_reversed(enum sched_kind k, int chunk)
{
	return k == SCHED_DUALPIPE && chunk == 1;
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
	if (k == SCHED_DUALPIPE)
		v = 2;
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
