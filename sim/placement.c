/* placement: rank layout of a 4D-parallel plan (see placement.h). */
#include "placement.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const char *const dim_names[DIM_N] = { "tp", "cp", "dp", "pp" };

/* Parse order into pl->order; three names put cp right after tp. */
static int parse_order(struct placement *pl, const char *order)
{
	bool used[DIM_N] = { false };
	int got[DIM_N], n = 0;
	const char *s = order;

	while (n < DIM_N) {
		int d;
		for (d = 0; d < DIM_N; d++)
			if (strncmp(s, dim_names[d], 2) == 0)
				break;
		if (d == DIM_N || used[d])
			return -1;
		used[d] = true;
		got[n++] = d;
		s += 2;
		if (*s != ',')
			break;
		s++;
	}
	if (*s)
		return -1;
	if (n == DIM_N) {
		memcpy(pl->order, got, sizeof(got));
		return 0;
	}
	if (n != DIM_N - 1 || used[DIM_CP])
		return -1;
	for (int i = 0, k = 0; i < n; i++) {
		pl->order[k++] = got[i];
		if (got[i] == DIM_TP)
			pl->order[k++] = DIM_CP;
	}
	return 0;
}

int placement_init_cp(struct placement *pl, int tp, int cp, int dp, int pp, const char *order)
{
	memset(pl, 0, sizeof(*pl));
	pl->size[DIM_TP] = tp;
	pl->size[DIM_CP] = cp;
	pl->size[DIM_DP] = dp;
	pl->size[DIM_PP] = pp;
	pl->nranks = tp * cp * dp * pp;
	if (parse_order(pl, order ? order : "tp,cp,dp,pp"))
		return -1;
	int stride = 1;
	for (int i = 0; i < DIM_N; i++) {
		pl->stride[pl->order[i]] = stride;
		stride *= pl->size[pl->order[i]];
	}
	return 0;
}

int placement_init(struct placement *pl, int tp, int dp, int pp, const char *order)
{
	return placement_init_cp(pl, tp, 1, dp, pp, order);
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

int placement_group_size(const struct placement *pl, enum group_kind g)
{
	switch (g) {
	case GROUP_TP:
		return pl->size[DIM_TP];
	case GROUP_CP:
		return pl->size[DIM_CP];
	case GROUP_DP:
		return pl->size[DIM_DP] * pl->size[DIM_CP];
	default:
		return 2;
	}
}

int placement_group(const struct placement *pl, enum group_kind g, int rank, int *out)
{
	int c[DIM_N];

	if (g == GROUP_EMB) {
		out[0] = placement_stage_peer(pl, rank, 0);
		out[1] = placement_stage_peer(pl, rank, pl->size[DIM_PP] - 1);
		return out[0] == out[1] ? 1 : 2;
	}
	placement_coords(pl, rank, c);
	if (g == GROUP_DP) {
		int base = rank - c[DIM_DP] * pl->stride[DIM_DP] - c[DIM_CP] * pl->stride[DIM_CP];
		int n = 0;
		for (int i = 0; i < pl->size[DIM_DP]; i++)
			for (int j = 0; j < pl->size[DIM_CP]; j++)
				out[n++] = base + i * pl->stride[DIM_DP] + j * pl->stride[DIM_CP];
		return n;
	}
	int dim = g == GROUP_TP ? DIM_TP : DIM_CP;
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
	snprintf(buf, n, "%s,%s,%s,%s", dim_names[pl->order[0]], dim_names[pl->order[1]],
		 dim_names[pl->order[2]], dim_names[pl->order[3]]);
	return buf;
}
