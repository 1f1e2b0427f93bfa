/* schedule: GPipe, 1F1B and interleaved 1F1B step orders (see schedule.h). */
#include "schedule.h"

#include <stdlib.h>

#include "bug.h"
#include "xalloc.h"

static int gpipe_order(int p, int s, int m, int v, struct sched_step *o);
static int onef1b_order(int p, int s, int m, int v, struct sched_step *o);
static int interleaved_order(int p, int s, int m, int v, struct sched_step *o);

const struct schedule_impl schedule_registry[SCHED_N + 1] = {
	[SCHED_GPIPE] = { "gpipe", "all forwards then all backwards (GPipe)", gpipe_order },
	[SCHED_1F1B] = { "1f1b", "one-forward-one-backward, PipeDream-flush (Megatron-LM default)",
			 onef1b_order },
	[SCHED_INTERLEAVED] = { "interleaved", "interleaved 1F1B with v model chunks per rank (Megatron-LM)",
				interleaved_order },
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
			o[n++] = (struct sched_step){ true, j, c };
	for (int c = v - 1; c >= 0; c--)
		for (int j = 0; j < m; j++)
			o[n++] = (struct sched_step){ false, j, c };
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
		o[n++] = (struct sched_step){ true, mb, ch };
	}
	while (f < total) {
		virt(f++, p, v, true, &mb, &ch);
		o[n++] = (struct sched_step){ true, mb, ch };
		virt(b++, p, v, false, &mb, &ch);
		o[n++] = (struct sched_step){ false, mb, ch };
	}
	while (b < total) {
		virt(b++, p, v, false, &mb, &ch);
		o[n++] = (struct sched_step){ false, mb, ch };
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

struct sched_step *schedule_order(enum sched_kind k, int p, int s, int m, int v)
{
	BUG_ON(k < 0 || k >= SCHED_N, "schedule %d out of the registry", (int)k);
	if (k == SCHED_1F1B)
		v = 1;
	struct sched_step *o = xcalloc((size_t)(2 * m * v + 1), sizeof(*o));
	int n = schedule_registry[k].order(p, s, m, v, o);
	BUG_ON(n != 2 * m * v, "schedule %s wrote %d steps for %d micro-batches x %d chunks",
	       schedule_registry[k].name, n, m, v);
	return o;
}

int schedule_peak_inflight(const struct sched_step *st, int n)
{
	int alive = 0, peak = 0;
	for (int i = 0; i < n; i++) {
		alive += st[i].fwd ? 1 : -1;
		if (alive > peak)
			peak = alive;
	}
	return peak;
}
