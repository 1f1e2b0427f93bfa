/* placement: rank layout of a 5D-parallel plan (see placement.h). */
#include "placement.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const char *const dim_names[DIM_N] = { "tp", "cp", "dp", "pp", "ep" };

/* Parse order into pl->order: tp, dp and pp are required; cp left out
 * goes right after tp, ep left out right before dp (Megatron-Core's
 * "tp-cp-ep-dp-pp"). */
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
	if (*s || !used[DIM_TP] || !used[DIM_DP] || !used[DIM_PP])
		return -1;
	int k = 0;
	for (int i = 0; i < n; i++) {
		if (got[i] == DIM_DP && !used[DIM_EP])
			pl->order[k++] = DIM_EP;
		pl->order[k++] = got[i];
		if (got[i] == DIM_TP && !used[DIM_CP])
			pl->order[k++] = DIM_CP;
	}
	return k == DIM_N ? 0 : -1;
}

int placement_init_ep(struct placement *pl, int tp, int cp, int ep, int dp, int pp,
		      const char *order)
{
	memset(pl, 0, sizeof(*pl));
	if (ep < 1 || dp % ep)
		return -1;
	pl->size[DIM_TP] = tp;
	pl->size[DIM_CP] = cp;
	pl->size[DIM_DP] = dp / ep;
	pl->size[DIM_PP] = pp;
	pl->size[DIM_EP] = ep;
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

int placement_init_cp(struct placement *pl, int tp, int cp, int dp, int pp, const char *order)
{
	return placement_init_ep(pl, tp, cp, 1, dp, pp, order);
}

int placement_init(struct placement *pl, int tp, int dp, int pp, const char *order)
{
	return placement_init_cp(pl, tp, 1, dp, pp, order);
}

/* Offset of the whole data-parallel index d = e + ep d'. */
static int dp_offset(const struct placement *pl, int d)
{
	int ep = pl->size[DIM_EP];
	return (d % ep) * pl->stride[DIM_EP] + (d / ep) * pl->stride[DIM_DP];
}

int placement_set_shard(struct placement *pl, int shard)
{
	int ndp = pl->size[DIM_DP] * pl->size[DIM_EP] * pl->size[DIM_CP];
	if (shard < 0 || (shard > 0 && (ndp % shard || pl->size[DIM_EP] > 1)))
		return -1;
	pl->shard = shard == ndp ? 0 : shard;
	return 0;
}

int placement_set_etp(struct placement *pl, int etp)
{
	if (etp != 1 && etp != pl->size[DIM_TP])
		return -1;
	pl->edp_tp = etp != pl->size[DIM_TP];
	if (pl->edp_tp && pl->order[DIM_N - 1] != DIM_PP)
		return -1;
	return 0;
}

/* Folded expert groups (placement.h, etp 1): the stage's ranks by their
 * index q in the stage, GROUP_EP ep consecutive ones, GROUP_EDP those of
 * the same q mod ep. */
static int folded_group(const struct placement *pl, enum group_kind g, int rank, int *out)
{
	int ep = pl->size[DIM_EP], sz = pl->stride[DIM_PP];
	int q = rank % sz, base = rank - q, n = 0;
	if (g == GROUP_EP) {
		for (int i = 0; i < ep; i++)
			out[n++] = base + q - q % ep + i;
		return n;
	}
	for (int j = q % ep; j < sz; j += ep)
		out[n++] = base + j;
	return n;
}

int placement_rank(const struct placement *pl, int tp, int dp, int pp)
{
	return tp * pl->stride[DIM_TP] + dp_offset(pl, dp) + pp * pl->stride[DIM_PP];
}

/* Coordinates in the layout's own dimensions (c[DIM_DP] = d'). */
static void raw_coords(const struct placement *pl, int rank, int c[DIM_N])
{
	for (int d = 0; d < DIM_N; d++)
		c[d] = (rank / pl->stride[d]) % pl->size[d];
}

void placement_coords(const struct placement *pl, int rank, int c[DIM_N])
{
	raw_coords(pl, rank, c);
	c[DIM_DP] = c[DIM_EP] + pl->size[DIM_EP] * c[DIM_DP];
}

int placement_group_size(const struct placement *pl, enum group_kind g)
{
	switch (g) {
	case GROUP_TP:
		return pl->size[DIM_TP];
	case GROUP_CP:
		return pl->size[DIM_CP];
	case GROUP_DP:
		return pl->size[DIM_DP] * pl->size[DIM_EP] * pl->size[DIM_CP];
	case GROUP_EP:
		return pl->size[DIM_EP];
	case GROUP_EDP:
		return pl->size[DIM_DP] * pl->size[DIM_CP] * (pl->edp_tp ? pl->size[DIM_TP] : 1);
	case GROUP_DPS:
		return pl->shard ? pl->shard : pl->size[DIM_DP] * pl->size[DIM_EP] * pl->size[DIM_CP];
	case GROUP_DPR:
		return pl->shard ? pl->size[DIM_DP] * pl->size[DIM_EP] * pl->size[DIM_CP] / pl->shard : 1;
	default:
		return 2;
	}
}

/* GROUP_DPS / GROUP_DPR of rank (raw coordinates c): slices of the
 * GROUP_DP list, index k = d x cp + j (placement.h). */
static int shard_group(const struct placement *pl, enum group_kind g, int rank, const int c[DIM_N],
		       int *out)
{
	int cp = pl->size[DIM_CP], nk = pl->size[DIM_DP] * pl->size[DIM_EP] * cp;
	int s = pl->shard ? pl->shard : nk, n = 0;
	int d = c[DIM_EP] + pl->size[DIM_EP] * c[DIM_DP], self = d * cp + c[DIM_CP];
	int base = rank - dp_offset(pl, d) - c[DIM_CP] * pl->stride[DIM_CP];
	int k0 = g == GROUP_DPS ? self - self % s : self % s, step = g == GROUP_DPS ? 1 : s;
	int k1 = g == GROUP_DPS ? k0 + s : nk;
	for (int k = k0; k < k1; k += step)
		out[n++] = base + dp_offset(pl, k / cp) + (k % cp) * pl->stride[DIM_CP];
	return n;
}

int placement_group(const struct placement *pl, enum group_kind g, int rank, int *out)
{
	int c[DIM_N], n = 0;

	if (g == GROUP_EMB) {
		out[0] = placement_stage_peer(pl, rank, 0);
		out[1] = placement_stage_peer(pl, rank, pl->size[DIM_PP] - 1);
		return out[0] == out[1] ? 1 : 2;
	}
	raw_coords(pl, rank, c);
	if (g == GROUP_MIRROR) {
		int s = c[DIM_PP], m = pl->size[DIM_PP] - 1 - s;
		out[0] = placement_stage_peer(pl, rank, s < m ? s : m);
		out[1] = placement_stage_peer(pl, rank, s < m ? m : s);
		return out[0] == out[1] ? 1 : 2;
	}
	if (g == GROUP_DPS || g == GROUP_DPR)
		return shard_group(pl, g, rank, c, out);
	if (pl->edp_tp && (g == GROUP_EP || g == GROUP_EDP))
		return folded_group(pl, g, rank, out);
	if (g == GROUP_DP || g == GROUP_EDP) {
		int base = rank - c[DIM_DP] * pl->stride[DIM_DP] - c[DIM_CP] * pl->stride[DIM_CP];
		int nd = pl->size[DIM_DP] * pl->size[DIM_EP];
		if (g == GROUP_DP)
			base -= c[DIM_EP] * pl->stride[DIM_EP];
		else
			nd = pl->size[DIM_DP];
		for (int i = 0; i < nd; i++)
			for (int j = 0; j < pl->size[DIM_CP]; j++)
				out[n++] = base + (g == GROUP_DP ? dp_offset(pl, i) : i * pl->stride[DIM_DP]) +
					   j * pl->stride[DIM_CP];
		return n;
	}
	int dim = g == GROUP_TP ? DIM_TP : g == GROUP_EP ? DIM_EP : DIM_CP;
	int base = rank - c[dim] * pl->stride[dim];
	for (int i = 0; i < pl->size[dim]; i++)
		out[i] = base + i * pl->stride[dim];
	return pl->size[dim];
}

int placement_stage_peer(const struct placement *pl, int rank, int stage)
{
	int c[DIM_N];
	raw_coords(pl, rank, c);
	int pp = pl->size[DIM_PP];
	stage = ((stage % pp) + pp) % pp;
	return rank + (stage - c[DIM_PP]) * pl->stride[DIM_PP];
}

const char *placement_order_text(const struct placement *pl, char *buf, size_t n)
{
	size_t k = 0;
	buf[0] = 0;
	for (int i = 0; i < DIM_N && k < n; i++) {
		if (pl->order[i] == DIM_EP && pl->size[DIM_EP] == 1)
			continue;
		k += (size_t)snprintf(buf + k, n - k, "%s%s", k ? "," : "", dim_names[pl->order[i]]);
	}
	return buf;
}
