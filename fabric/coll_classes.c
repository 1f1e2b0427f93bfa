/* coll_classes: a collective that runs alone, with one flow per flow
 * class where per-pair flows would end at the same time.
 *
 * The rail-aligned all-to-all (coll_direct.c) sends g N/P from every GPU
 * to the same rail of each of the other nn - 1 nodes of the group. Where
 * nothing between two NICs can bind (a non-blocking or rail fabric, a fat
 * tree without oversubscription: its leaf and pod uplinks carry at least
 * what the NICs below them send, topology.h), those flows are limited by
 * the sending and the receiving NIC only. Every NIC sends and receives
 * nn - 1 of them, all of one size, so max-min fairness gives each
 * B / (nn - 1) and all end at (nn - 1) g N/P / B. One flow per NIC to the
 * same rail of the next node of the group (a cyclic shift: every NIC
 * still sends and receives once, the whole (nn - 1) g N/P) ends at the
 * same time: nn g flows instead of g nn (nn - 1), 1,024 ranks in 8,192
 * flows instead of 130,048 (and 1,047,552 pairs). The plan keeps the
 * latency and the closed form of the per-pair plan (its longest pair, its
 * link loads, which the shift leaves as they were).
 *
 * "Alone" matters: beside other traffic on the same NICs (a pipeline send,
 * a gradient reduction), max-min gives the one shifted flow one share
 * where the per-pair flows took nn - 1. The collective sweep (`ddlsim
 * collective`, one collective at a time) uses the class plan throughout;
 * the training engine (engine/engine_classes.c) posts it only while nothing
 * else crosses the group's NICs and splits it back into the per-pair
 * flows, each with its share of what is left, the instant anything does
 * (coll_plan_class_copy). On an oversubscribed tree an uplink can bind
 * and nothing changes. tests/test-coll.c holds the times to the per-pair
 * plan's to 1e-9. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "coll-private.h"
#include "xalloc.h"

/* Whether only NICs can bind flows between nodes. */
static bool nics_bind_only(const struct topology *t)
{
	if (t->fabric != FABRIC_FAT_TREE)
		return true;
	return t->ft_leaf_up_bw_Bps >= t->ft_nodes_per_leaf * t->nics * t->nic_bw_Bps * (1 - 1e-12);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* The group's nodes, sorted and unique, into nodes[] (room for 2 p->nflows);
 * returns their count. */
static int group_nodes(const struct topology *t, const struct coll_plan *p, int *nodes)
{
	int n = 0;
	for (int i = 0; i < p->nflows; i++) {
		nodes[n++] = topology_node_of(t, p->flows[i].src);
		nodes[n++] = topology_node_of(t, p->flows[i].dst);
	}
	qsort(nodes, (size_t)n, sizeof(*nodes), cmp_int);
	int u = 0;
	for (int i = 0; i < n; i++)
		if (!u || nodes[u - 1] != nodes[i])
			nodes[u++] = nodes[i];
	return u;
}

/* Whether every flow between nodes of p is rail-aligned (same local GPU),
 * of one size, and every (node, rail) sends to each of the nn - 1 other
 * nodes: the shape the shift stands for. */
static bool rail_shaped(const struct topology *t, const struct coll_plan *p, int nn)
{
	double b = -1;
	int run = 0;
	for (int i = 0; i <= p->nflows; i++) {
		/* flows are sorted by source: a run ends where the source changes */
		if (i > 0 && (i == p->nflows || p->flows[i].src != p->flows[i - 1].src)) {
			if (run != 0 && run != nn - 1)
				return false;
			run = 0;
		}
		if (i == p->nflows)
			break;
		const struct coll_flow *f = &p->flows[i];
		if (topology_node_of(t, f->src) == topology_node_of(t, f->dst))
			continue;
		if (topology_local_of(t, f->src) != topology_local_of(t, f->dst) ||
		    (b >= 0 && f->bytes != b))
			return false;
		b = f->bytes;
		run++;
	}
	return b > 0;
}

/* coll_plan_classes() saying why p stays per pair (*why, a static string,
 * NULL when it was made one flow per class). */
static void classes(const struct topology *t, struct coll_plan *p, const char **why)
{
	*why = "not an all-to-all";
	if (p->op != COLL_ALLTOALL || p->nflows < 2)
		return;
	*why = "the fabric's uplinks can bind (an oversubscribed fat tree): per pair";
	if (!nics_bind_only(t))
		return;
	int *nodes = xreallocarray(NULL, 2 * (size_t)p->nflows, sizeof(*nodes)), *pos = NULL;
	int nn = group_nodes(t, p, nodes), last = nodes[nn - 1];
	*why = nn < 3 ? "the group spans fewer than 3 nodes: one flow per NIC already"
		      : "the group is not rail-aligned (another GPU count on some node, a GPU "
			"without a NIC of its own, no NVSwitch): per pair";
	if (nn < 3 || !rail_shaped(t, p, nn))
		goto out_nodes;
	*why = NULL;
	pos = xreallocarray(NULL, (size_t)last + 1, sizeof(*pos));
	for (int k = 0; k < nn; k++)
		pos[nodes[k]] = k;
	int w = 0;
	double amax = 0;
	for (int i = 0; i < p->nflows; i++) {
		struct coll_flow f = p->flows[i];
		int na = topology_node_of(t, f.src), nb = topology_node_of(t, f.dst);
		if (na != nb) {
			int next = nodes[(pos[na] + 1) % nn];
			if (nb != next)
				continue;       /* folded into the flow to the next node */
			f.bytes *= nn - 1;
			f.latency_s = topology_path_latency(t, f.src, f.dst);
		}
		p->flows[w++] = f;
		if (f.latency_s > amax)
			amax = f.latency_s;
	}
	p->nflows = w;
	p->alpha_s = amax;
	p->extra_latency_s = p->latency_s > amax ? p->latency_s - amax : 0;
	free(pos);
out_nodes:
	free(nodes);
}

void coll_plan_classes(const struct topology *t, struct coll_plan *p)
{
	const char *why;
	classes(t, p, &why);
}

struct coll_plan *coll_plan_class_copy(const struct topology *t, const struct coll_plan *p,
				       const char **why)
{
	struct coll_plan *c = xmalloc(sizeof(*c));
	*c = *p;
	c->flows = xreallocarray(NULL, (size_t)p->nflows + 1, sizeof(*c->flows));
	memcpy(c->flows, p->flows, (size_t)p->nflows * sizeof(*c->flows));
	classes(t, c, why);
	if (*why) {
		coll_plan_destroy(c);
		return NULL;
	}
	return c;
}
