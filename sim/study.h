/* study: what a study of simulated plans concludes (`ddlsim plan`, the
 * Pareto plots of sweeps and plans).
 *
 * A study is a set of plans simulated over one or more cluster options
 * (sim/search.h picks them). Each is reduced to a point: its option, the
 * GPU type and count, whether it simulated, its wall time to train
 * (goodput included) and its cost. From the points:
 * Fit first: a plan that simulated but does not fit in GPU memory ("oom")
 * is never ranked, never on a front and never the fewest GPUs; it sorts
 * after the plans that fit, so a listing shows the best plan that fits
 * first and may list the rejected ones apart.
 *   - the ranking: plans that simulated and fit first, then those that do
 *     not fit, then failures; each by option, then by wall time;
 *   - the Pareto front of time and cost: the points no other point
 *     dominates, i.e. none is at least as fast and as cheap and strictly
 *     better in one of the two;
 *   - the fewest GPUs of each GPU type that meet a deadline and a budget
 *     (ties: the cheaper);
 *   - Spearman's rank correlation of two measures of the same plans (the
 *     screen's estimate against the engine): rho = 1 - 6 sum d^2 /
 *     (m (m^2 - 1)), d the difference of a plan's two ranks, a rank being
 *     the number of values below plus half the number equal (itself
 *     included), so ties share their mean rank.
 * No I/O and no allocation but where a function says so. */
#ifndef DDLSIM_STUDY_H
#define DDLSIM_STUDY_H

#include <stdbool.h>

/* One simulated plan as the analysis sees it. */
struct study_point {
	int option;                 /* the cluster option it ran on */
	const char *gpu;            /* its GPU type (borrowed) */
	long gpus;
	bool ok;                    /* simulated without error: the figures below apply */
	bool oom;                   /* simulated, but does not fit in GPU memory */
	double wall_s;              /* wall time to train, failures included */
	double cost_usd;            /* cost to train */
	bool extra;                 /* simulated for a wider table only (`ddlsim plan
				     * --top`): never the fewest GPUs, so that answer
				     * does not move with how many plans are shown */
};

/* Whether point p may be ranked: it simulated and fits in memory. */
bool study_usable(const struct study_point *p);

/* Order of the ranking (a qsort-style comparison): points that may be
 * ranked first, then those that do not fit, then failures; each group by
 * option, then by wall time. */
int study_compare(const struct study_point *a, const struct study_point *b);

/* Set front[i] (n entries) to whether point i is on the time-cost Pareto
 * front of the points that may be ranked (one that did not simulate or
 * does not fit is never on it and dominates nothing). Returns the number
 * on the front. */
int study_pareto(const struct study_point *p, int n, bool *front);

/* Spearman's rho of a[i] against b[i] over n pairs; NAN when n < 3. */
double study_spearman(const double *a, const double *b, int n);

/* The best plan of one GPU type: the index of its point, -1 if none meets
 * the goal. */
struct study_fewest {
	const char *gpu;            /* borrowed from option_gpu */
	int point;
};

/* For each GPU type among option_gpu[0..noptions) (the options' GPU types,
 * in the order they first appear), the simulated point (not `extra`) of that type with
 * the fewest GPUs that fits in memory, whose wall time is within deadline_s and whose cost is
 * within budget_usd (0: no deadline, no budget), the cheaper of equals.
 * Writes one entry per type to out (room for noptions) and returns how
 * many. */
int study_fewest_gpus(const struct study_point *p, int n, const char *const *option_gpu, int noptions,
		      double deadline_s, double budget_usd, struct study_fewest *out);

/* The same at the error band's slow edge: point i's wall time and cost
 * taken as (1 + slow[i]) times the predicted (slow[i] the band's upper
 * edge, band.h band_pick.hi, a fraction). The fewest GPUs of each type
 * whose simulated plan still meets the goal if the prediction errs by
 * its band's worst: the safe count, from simulations, not scaled. */
int study_safe_gpus(const struct study_point *p, int n, const double *slow, const char *const *option_gpu,
		    int noptions, double deadline_s, double budget_usd, struct study_fewest *out);

#endif
