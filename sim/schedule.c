/* schedule: GPipe, 1F1B and interleaved 1F1B step orders (see schedule.h). */
#include "schedule.h"

#include <stdlib.h>

const struct schedule_impl schedule_registry[SCHED_N] = {
	{ "gpipe", "all forwards then all backwards (GPipe)" },
	{ "1f1b", "one-forward-one-backward, PipeDream-flush (Megatron-LM default)" },
	{ "interleaved", "interleaved 1F1B with v model chunks per rank (Megatron-LM)" },
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

struct sched_step *schedule_order(enum sched_kind k, int p, int s, int m, int v)
{
	int total = m * v;
	struct sched_step *o = malloc((size_t)(2 * total + 1) * sizeof(*o));
	int n = 0;

	if (!o)
		return NULL;
	if (k == SCHED_GPIPE) {
		for (int c = 0; c < v; c++)
			for (int j = 0; j < m; j++)
				o[n++] = (struct sched_step){ true, j, c };
		for (int c = v - 1; c >= 0; c--)
			for (int j = 0; j < m; j++)
				o[n++] = (struct sched_step){ false, j, c };
		return o;
	}
	int warm;
	if (k == SCHED_1F1B || v == 1) {
		v = 1;
		warm = p - s - 1;
	} else {
		warm = (p - s - 1) * 2 + (v - 1) * p;
		if (m == p)
			warm = total;
	}
	if (warm > total)
		warm = total;
	int f = 0, b = 0, mb, ch;
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
