/* placement: rank layout of a 3D-parallel plan (see placement.h). */
#include "placement.h"

#include <stdio.h>
#include <string.h>

static const char *const dim_names[DIM_N] = { "tp", "dp", "pp" };

int placement_init(struct placement *pl, int tp, int dp, int pp, const char *order)
{
	memset(pl, 0, sizeof(*pl));
	pl->size[DIM_TP] = tp;
	pl->size[DIM_DP] = dp;
	pl->size[DIM_PP] = pp;
	pl->nranks = tp * dp * pp;
	if (!order)
		order = "tp,dp,pp";
	bool used[DIM_N] = { false };
	const char *s = order;
	for (int i = 0; i < DIM_N; i++) {
		int d;
		for (d = 0; d < DIM_N; d++)
			if (strncmp(s, dim_names[d], 2) == 0)
				break;
		if (d == DIM_N || used[d])
			return -1;
		used[d] = true;
		pl->order[i] = d;
		s += 2;
		if (i < DIM_N - 1) {
			if (*s != ',')
				return -1;
			s++;
		}
	}
	if (*s)
		return -1;
	int stride = 1;
	for (int i = 0; i < DIM_N; i++) {
		pl->stride[pl->order[i]] = stride;
		stride *= pl->size[pl->order[i]];
	}
	return 0;
}

int placement_rank(const struct placement *pl, int tp, int dp, int pp)
{
	return tp * pl->stride[DIM_TP] + dp * pl->stride[DIM_DP] + pp * pl->stride[DIM_PP];
}

void placement_coords(const struct placement *pl, int rank, int c[DIM_N])
{
	for (int d = 0; d < DIM_N; d++)
		c[d] = (rank / pl->stride[d]) % pl->size[d];
}

int placement_group(const struct placement *pl, enum group_kind g, int rank, int *out)
{
	if (g == GROUP_EMB) {
		out[0] = placement_stage_peer(pl, rank, 0);
		out[1] = placement_stage_peer(pl, rank, pl->size[DIM_PP] - 1);
		return out[0] == out[1] ? 1 : 2;
	}
	int dim = g == GROUP_TP ? DIM_TP : DIM_DP;
	int c[DIM_N];
	placement_coords(pl, rank, c);
	int base = rank - c[dim] * pl->stride[dim];
	for (int i = 0; i < pl->size[dim]; i++)
		out[i] = base + i * pl->stride[dim];
	return pl->size[dim];
}

int placement_stage_peer(const struct placement *pl, int rank, int stage)
{
	int c[DIM_N];
	placement_coords(pl, rank, c);
	int pp = pl->size[DIM_PP];
	stage = ((stage % pp) + pp) % pp;
	return rank + (stage - c[DIM_PP]) * pl->stride[DIM_PP];
}

const char *placement_order_text(const struct placement *pl, char *buf, size_t n)
{
	snprintf(buf, n, "%s,%s,%s", dim_names[pl->order[0]], dim_names[pl->order[1]],
		 dim_names[pl->order[2]]);
	return buf;
}
