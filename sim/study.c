/* study: ranking, Pareto front, fewest GPUs per type and rank correlation
 * of a study's simulated plans (see study.h). */
#include "study.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

bool study_usable(const struct study_point *p)
{
	return p->ok && !p->oom;
}

/* 0: may be ranked, 1: does not fit, 2: failed. */
static int group(const struct study_point *p)
{
	return !p->ok ? 2 : p->oom ? 1 : 0;
}

int study_compare(const struct study_point *a, const struct study_point *b)
{
	if (group(a) != group(b))
		return group(a) - group(b);
	if (a->option != b->option)
		return a->option - b->option;
	return (a->wall_s > b->wall_s) - (a->wall_s < b->wall_s);
}

/* Whether q dominates p: as fast and as cheap, and better in one. */
static bool dominates(const struct study_point *q, const struct study_point *p)
{
	return q->wall_s <= p->wall_s && q->cost_usd <= p->cost_usd &&
	       (q->wall_s < p->wall_s || q->cost_usd < p->cost_usd);
}

int study_pareto(const struct study_point *p, int n, bool *front)
{
	int count = 0;
	for (int i = 0; i < n; i++) {
		front[i] = study_usable(&p[i]);
		for (int k = 0; k < n && front[i]; k++)
			if (k != i && study_usable(&p[k]) && dominates(&p[k], &p[i]))
				front[i] = false;
		count += front[i];
	}
	return count;
}

/* The rank of v[i] among v[0..n): the values below it, plus half of those
 * equal to it (itself included). */
static double rank_of(const double *v, int n, int i)
{
	double r = 0;
	for (int k = 0; k < n; k++)
		r += v[k] < v[i] ? 1 : v[k] == v[i] ? 0.5 : 0;
	return r;
}

double study_spearman(const double *a, const double *b, int n)
{
	double d2 = 0;
	for (int i = 0; i < n; i++) {
		double d = rank_of(a, n, i) - rank_of(b, n, i);
		d2 += d * d;
	}
	return n > 2 ? 1 - 6 * d2 / ((double)n * ((double)n * n - 1)) : NAN;
}

/* Whether p meets the goal: simulated, fits, within the deadline and budget. */
static bool meets(const struct study_point *p, double deadline_s, double budget_usd)
{
	return study_usable(p) && !(deadline_s && p->wall_s > deadline_s) && !(budget_usd && p->cost_usd > budget_usd);
}

int study_fewest_gpus(const struct study_point *p, int n, const char *const *option_gpu, int noptions,
		      double deadline_s, double budget_usd, struct study_fewest *out)
{
	int ntypes = 0;
	for (int ci = 0; ci < noptions; ci++) {
		const char *gpu = option_gpu[ci];
		bool seen = false;
		for (int t = 0; t < ntypes && !seen; t++)
			seen = !strcmp(out[t].gpu, gpu);
		if (seen)
			continue;
		int best = -1;
		for (int i = 0; i < n; i++) {
			if (p[i].extra || strcmp(p[i].gpu, gpu) || !meets(&p[i], deadline_s, budget_usd))
				continue;
			if (best < 0 || p[i].gpus < p[best].gpus ||
			    (p[i].gpus == p[best].gpus && p[i].cost_usd < p[best].cost_usd))
				best = i;
		}
		out[ntypes++] = (struct study_fewest){ .gpu = gpu, .point = best };
	}
	return ntypes;
}

int study_safe_gpus(const struct study_point *p, int n, const double *slow, const char *const *option_gpu,
		    int noptions, double deadline_s, double budget_usd, struct study_fewest *out)
{
	struct study_point *q = xreallocarray(NULL, (size_t)n + 1, sizeof(*q));
	for (int i = 0; i < n; i++) {
		q[i] = p[i];
		q[i].wall_s *= 1 + slow[i];
		q[i].cost_usd *= 1 + slow[i];
	}
	int k = study_fewest_gpus(q, n, option_gpu, noptions, deadline_s, budget_usd, out);
	free(q);
	return k;
}
