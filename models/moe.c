/* moe: routing shares, capacity drops and the busiest rank (see moe.h). */
#include "moe.h"

#include <math.h>

#include "bug.h"

const char *const moe_dist_names[] = { "uniform", "zipf", "loads", NULL };

/* Share of expert e under dist (unnormalised). */
static double weight(const struct moe_config *cfg, enum moe_dist dist, double s, long e)
{
	switch (dist) {
	case MOE_DIST_ZIPF:
		return 1.0 / pow((double)(e + 1), s);
	case MOE_DIST_LOADS:
		return e < cfg->nloads ? cfg->loads[e] : 0;
	default:
		return 1;
	}
}

void moe_balance(const struct moe_config *cfg, enum moe_dist dist, double zipf_s,
		 double capacity_factor, int ep, struct moe_balance *out)
{
	long E = cfg->experts;

	BUG_ON(E < 1 || ep < 1 || E % ep, "moe_balance: %ld experts over %d ranks", E, ep);
	double sum = 0;
	for (long e = 0; e < E; e++)
		sum += weight(cfg, dist, zipf_s, e);
	if (!(sum > 0)) {     /* all-zero loads: the loader refuses them; be uniform */
		dist = MOE_DIST_UNIFORM;
		sum = (double)E;
	}
	long per = E / ep;
	double kept = 0, max = -1;
	out->busiest_rank = 0;
	for (int r = 0; r < ep; r++) {
		double load = 0;   /* in units of the balanced per-expert load */
		for (long e = r * per; e < (r + 1) * per; e++) {
			double u = (double)E * weight(cfg, dist, zipf_s, e) / sum;
			if (capacity_factor > 0 && u > capacity_factor)
				u = capacity_factor;
			load += u;
		}
		kept += load;
		if (load > max) {
			max = load;
			out->busiest_rank = r;
		}
	}
	out->kept_fraction = kept / (double)E;
	out->rank_load = max / (double)per;
	out->imbalance = kept > 0 ? max / (kept / ep) : 1;
}

/* C(n, r) / C(n', r) for n <= n' as a product (no overflow). */
static double binom_ratio(double n, double n2, long r)
{
	double q = 1;
	for (long i = 0; i < r; i++)
		q *= n - i > 0 ? (n - (double)i) / (n2 - (double)i) : 0;
	return q;
}

double moe_node_copies(const struct moe_config *cfg, int nodes)
{
	if (nodes <= 1 || cfg->experts < 1)
		return 0;
	long mn = nodes;
	if (cfg->groups > 0 && cfg->groups_per_token < cfg->groups) {
		long per = nodes / cfg->groups > 1 ? nodes / cfg->groups : 1;
		mn = cfg->groups_per_token * per < nodes ? cfg->groups_per_token * per : nodes;
	}
	double G = (double)cfg->experts / nodes, M = (double)mn;
	double D = M * (1 - binom_ratio((M - 1) * G, M * G, cfg->top_k));
	return D * (nodes - 1) / nodes;
}

double moe_flat_node_copies(const struct moe_config *cfg, int nodes)
{
	if (nodes <= 1)
		return 0;
	return (double)cfg->top_k * (nodes - 1) / nodes;
}

double moe_dispatch_scale(const struct moe_config *cfg, int ep, int stride, int gpn)
{
	long span = (long)ep * (stride > 0 ? stride : 1);
	int nodes = gpn > 0 && span > gpn ? (int)(span / gpn) : 1;
	if (cfg->groups <= 0 || nodes <= 1 || nodes > ep)
		return 1;
	return moe_node_copies(cfg, nodes) / moe_flat_node_copies(cfg, nodes);
}
