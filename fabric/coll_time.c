/* coll_time: a collective's uncontended time without its flows (see
 * coll.h, coll_time_uncontended).
 *
 * The plan search prices thousands of plans with the closed form of
 * coll_plan_build(): ideal = max(latency, slowest path) + max(NCCL's
 * transfer, the most loaded link's bytes / bandwidth), and NCCL's own
 * prediction. Building the plan to read them costs O(P log P) (P flows
 * per channel, routed, sorted, merged, summed per link); a data-parallel
 * group of 16,384 GPUs made the screen's cost per plan grow with the
 * cluster. Where the group is uniform (every node of the group holds the
 * same local GPUs; node runs sorted, as placement groups are) and "auto"
 * picks NCCL's ring or double binary tree across nodes, the same terms
 * come from one node and the fabric's few link classes:
 *
 *   ring (coll_ring.c)  channel c visits each node's GPUs rotated by
 *       c len / C, nodes in order, and wraps: every node has the same
 *       edges inside, one edge out and one in per channel, on the same
 *       local GPUs, so one node's links carry what every node's carry.
 *       Leaves and pods are ranges of nodes, so the ring leaves each
 *       leaf (pod) it visits once per channel when it visits two or
 *       more: the wrap edge's uplinks carry what every visited one
 *       carries. The wrap edge crosses the most levels, so its path is
 *       the slowest of the edges between nodes (a path crossing fewer
 *       levels has a subsequence of its hops).
 *   tree (coll_tree.c)  per tree, node i's edges are to its heap parent
 *       and children (tree 1 mirrored), all on the tree's chain head, the
 *       same local GPU on every node: a node's links carry its chains
 *       plus its degree in each tree times the head's NIC path, and a
 *       leaf's (pod's) uplink the tree edges leaving it: an O(nodes)
 *       pass of integer arithmetic, no route per flow.
 *
 * Where the fabric's time could reach NCCL's transfer (an oversubscribed
 * uplink), or the group is not uniform, or the algorithm is not NCCL's
 * auto choice of ring or tree across nodes, the plan is built
 * (coll_plan_create): the answer is always the built plan's, to
 * rounding (link loads summed in another order only decide that the
 * fabric is below NCCL's transfer, with a 1e-9 margin; the times
 * returned are NCCL's and the slowest path's, computed as the builder
 * computes them). tests/test-screen.c holds the two to 1e-12 on every
 * shipped topology. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "coll-private.h"
#include "nccl_model.h"
#include "xalloc.h"

#define LINKS_MAX 384
#define MARGIN 1e-9

/* Link loads of one node's links, or of the fabric's. */
struct loads {
	unsigned long long key[LINKS_MAX];
	double bytes[LINKS_MAX], bw_Bps[LINKS_MAX];
	int n;
	bool full;
	double fatpipe_s;    /* the largest flow / bandwidth on a FATPIPE hop */
};

static void load_add(struct loads *l, const struct topology *t, const struct topo_hop *h,
		     double bytes)
{
	double bw_Bps = topology_link_bw(t, h);
	if (h->dir == 0) { /* FATPIPE: never shared */
		l->fatpipe_s = fmax(l->fatpipe_s, bytes / bw_Bps);
		return;
	}
	unsigned long long key = topology_link_key(t, h);
	int i = 0;
	while (i < l->n && l->key[i] != key)
		i++;
	if (i == l->n) {
		if (l->n == LINKS_MAX) {
			l->full = true;
			return;
		}
		l->key[i] = key, l->bytes[i] = 0, l->bw_Bps[i] = bw_Bps;
		l->n++;
	}
	l->bytes[i] += bytes;
}

/* An empty table (caller frees). */
static struct loads *loads_create(void)
{
	struct loads *l = xmalloc(sizeof(*l));
	l->n = 0;
	l->full = false;
	l->fatpipe_s = 0;
	return l;
}

static void loads_copy(struct loads *dst, const struct loads *src)
{
	dst->n = src->n;
	dst->full = src->full;
	dst->fatpipe_s = src->fatpipe_s;
	memcpy(dst->key, src->key, (size_t)src->n * sizeof(*src->key));
	memcpy(dst->bytes, src->bytes, (size_t)src->n * sizeof(*src->bytes));
	memcpy(dst->bw_Bps, src->bw_Bps, (size_t)src->n * sizeof(*src->bw_Bps));
}

static double loads_time_s(const struct loads *l)
{
	double worst = l->fatpipe_s;
	for (int i = 0; i < l->n; i++)
		worst = fmax(worst, l->bytes[i] / l->bw_Bps[i]);
	return worst;
}

/* A uniform group: n sorted ranks on nn nodes of len GPUs each, the same
 * local GPUs (lo, in ring order: coll_node_order) on each. */
struct group {
	const int *r;
	int n, nn, len;
	int nics;                       /* the NICs a node's GPUs use */
	int C;                          /* channels: nics, at least 1, 1 with one NIC */
	int lo[TOPO_MAX_GPUS_PER_NODE];
};

static int node_id(const struct topology *t, const struct group *g, int k)
{
	return topology_node_of(t, g->r[k * g->len]);
}

static int rank_at(const struct topology *t, const struct group *g, int k, int local)
{
	return node_id(t, g, k) * t->gpus_per_node + local;
}

/* The GPUs per node of ranks[0..n) if they form a uniform group of two
 * nodes or more (sorted; every node holds the same local GPUs), else 0. */
static int uniform_len(const struct topology *t, const int *ranks, int n)
{
	int len = 0;
	for (int i = 1; i < n; i++)
		if (ranks[i] <= ranks[i - 1])
			return 0;
	while (len < n && topology_node_of(t, ranks[len]) == topology_node_of(t, ranks[0]))
		len++;
	if (len > TOPO_MAX_GPUS_PER_NODE || n % len || n / len < 2)
		return 0;
	/* node k's ranks are node k's base plus node 0's local indices (sorted
	 * ranks: its node is past node k - 1's) */
	int off = ranks[0] - topology_local_of(t, ranks[0]);
	for (int b = len; b < n; b += len) {
		int base = ranks[b] - topology_local_of(t, ranks[b]) - off;
		for (int j = 0; j < len; j++)
			if (ranks[b + j] != ranks[j] + base)
				return 0;
	}
	return len;
}

/* Whether ranks[0..n) form a uniform group of two nodes or more; fills g:
 * node 0's local GPUs in ring order, the NICs they use, the channels. */
static bool group_init(const struct topology *t, const int *ranks, int n, struct group *g)
{
	int len = uniform_len(t, ranks, n);
	if (!len)
		return false;
	*g = (struct group){ .r = ranks, .n = n, .nn = n / len, .len = len, .C = 1 };
	int first[TOPO_MAX_GPUS_PER_NODE];
	memcpy(first, ranks, (size_t)len * sizeof(int));
	coll_node_order(t, first, len);
	bool seen[TOPO_MAX_NICS] = { false };
	int d = 0;
	for (int j = 0; j < len; j++) {
		g->lo[j] = topology_local_of(t, first[j]);
		int nic = t->gpu_nic[g->lo[j]];
		if (t->nics > 0 && nic >= 0 && !seen[nic]) {
			seen[nic] = true;
			d++;
		}
	}
	g->nics = d;
	if (t->nics > 1)
		g->C = d < 1 ? 1 : d;
	return true;
}

/* Route a -> b: its hops on node `node` into l, the fabric's (node -1)
 * into fab (either may be NULL). Returns the path's latency, summed as
 * topology_path_latency() sums it. */
static double route_add(const struct topology *t, int a, int b, int node, double bytes,
			struct loads *l, struct loads *fab)
{
	struct topo_hop h[TOPO_MAX_HOPS];
	int k = topology_route(t, a, b, h);
	double lat = 0;
	for (int i = 0; i < k; i++) {
		lat += topology_link_latency(t, &h[i]);
		if (l && h[i].node == node)
			load_add(l, t, &h[i], bytes);
		else if (fab && h[i].node == -1)
			load_add(fab, t, &h[i], bytes);
	}
	return lat;
}

/* NCCL PXN reroutes a flow between nodes whose GPUs sit on other rails
 * (coll_build.c): those plans are built. */
static bool pxn_moves(const struct topology *t, int la, int lb)
{
	return t->fabric == FABRIC_RAIL && t->rail_pxn && t->nics >= 2 &&
	       t->gpu_nic[la] != t->gpu_nic[lb];
}

/* The ring's slowest path (*amax) and its links' time (*fabric_s): node
 * 0's links and the wrap edge's fabric links (see the top). false: the
 * plan must be built. */
static bool ring_terms(const struct topology *t, const struct group *g, enum coll_op op, double N,
		       double *amax, double *fabric_s)
{
	double per_edge = op == COLL_ALLREDUCE ? 2.0 * (g->n - 1) / g->n * N
					       : (double)(g->n - 1) / g->n * N;
	double x = per_edge / g->C;
	int L = g->len, X = node_id(t, g, 0), last = g->nn - 1;
	struct loads *node = loads_create(), *fab = loads_create();
	bool ok = true;
	*amax = 0;
	for (int c = 0; c < g->C && ok; c++) {
		int rot = (int)((long)c * L / g->C), o[TOPO_MAX_GPUS_PER_NODE];
		for (int j = 0; j < L; j++)
			o[j] = g->lo[(j + rot) % L];
		for (int j = 0; j + 1 < L; j++)
			*amax = fmax(*amax, route_add(t, rank_at(t, g, 0, o[j]), rank_at(t, g, 0, o[j + 1]),
						      X, x, node, NULL));
		route_add(t, rank_at(t, g, 0, o[L - 1]), rank_at(t, g, 1, o[0]), X, x, node, NULL);
		*amax = fmax(*amax, route_add(t, rank_at(t, g, last, o[L - 1]), rank_at(t, g, 0, o[0]),
					      X, x, node, fab));
		ok = !pxn_moves(t, o[L - 1], o[0]);
	}
	ok = ok && !node->full && !fab->full;
	*fabric_s = fmax(loads_time_s(node), loads_time_s(fab));
	free(node);
	free(fab);
	return ok;
}

/* d x src's loads into dst. */
static void loads_merge(struct loads *dst, const struct loads *src, double d)
{
	for (int i = 0; i < src->n && !dst->full; i++) {
		int k = 0;
		while (k < dst->n && dst->key[k] != src->key[i])
			k++;
		if (k == dst->n) {
			if (k == LINKS_MAX) {
				dst->full = true;
				return;
			}
			dst->key[k] = src->key[i], dst->bytes[k] = 0, dst->bw_Bps[k] = src->bw_Bps[i];
			dst->n++;
		}
		dst->bytes[k] += d * src->bytes[i];
	}
	dst->fatpipe_s = fmax(dst->fatpipe_s, src->fatpipe_s);
}

/* Node i's degree in the heap-ordered tree over nn nodes. */
static int heap_degree(int i, int nn)
{
	return (i > 0) + (2 * i + 1 < nn) + (2 * i + 2 < nn);
}

/* The tree's parent of its i-th edge's child (tree tr: mirrored). */
static void tree_edge(int tr, int i, int nn, int *child, int *parent)
{
	*child = tr ? nn - 1 - i : i;
	*parent = tr ? nn - 1 - (i - 1) / 2 : (i - 1) / 2;
}

/* The busiest leaf (pod) uplink of the trees in edges crossing it, per
 * tree of each parity, and the most levels an edge crosses (0 one leaf,
 * 1 leaves, 2 pods) with such an edge's nodes. */
struct tree_fabric {
	int leaf_cross, pod_cross, level, child, parent;
};

/* The largest of v[0..n), 0 if none is positive. */
static int most(const int *v, int n)
{
	int m = 0;
	for (int i = 0; i < n; i++)
		m = v[i] > m ? v[i] : m;
	return m;
}

static void tree_fabric(const struct topology *t, const struct group *g, struct tree_fabric *f)
{
	int nn = g->nn, npl = t->ft_nodes_per_leaf > 0 ? t->ft_nodes_per_leaf : 1;
	int lpp = t->ft_levels == 3 && t->ft_leaves_per_pod > 0 ? t->ft_leaves_per_pod : 0;
	int nleaf = node_id(t, g, nn - 1) / npl + 1;
	int *leaf = xcalloc((size_t)nleaf * 2, sizeof(*leaf)), *pod = leaf + nleaf;
	*f = (struct tree_fabric){ 0, 0, -1, 1, 0 };
	for (int tr = 0; tr < 2; tr++)
		for (int i = 1; i < nn; i++) {
			int c, p;
			tree_edge(tr, i, nn, &c, &p);
			int lc = node_id(t, g, c) / npl, lp = node_id(t, g, p) / npl;
			bool leaves = t->fabric == FABRIC_FAT_TREE && lc != lp;
			bool pods = leaves && lpp && lc / lpp != lp / lpp;
			if (leaves)
				leaf[lc]++, leaf[lp]++;
			if (pods)
				pod[lc / lpp]++, pod[lp / lpp]++;
			int lv = pods ? 2 : leaves ? 1 : 0;
			if (lv > f->level)
				f->level = lv, f->child = c, f->parent = p;
		}
	f->leaf_cross = most(leaf, nleaf);
	f->pod_cross = most(pod, nleaf);
	free(leaf);
}

/* The most loaded node's links under the trees: its chains plus, per
 * tree parity, its degree times the head's paths (chain: every node's
 * chains; head[tr]: one edge per tree of parity tr). */
static double tree_node_s(const struct group *g, const struct loads *chain, struct loads *const *head,
			  bool *ok)
{
	bool seen[4][4] = { { false } };
	double worst = 0;
	for (int j = 0; j < g->nn; j++)
		seen[heap_degree(j, g->nn)][heap_degree(g->nn - 1 - j, g->nn)] = true;
	struct loads *l = loads_create();
	for (int a = 0; a < 4; a++)
		for (int b = 0; b < 4; b++) {
			if (!seen[a][b])
				continue;
			loads_copy(l, chain);
			loads_merge(l, head[0], a);
			loads_merge(l, head[1], b);
			*ok = *ok && !l->full;
			worst = fmax(worst, loads_time_s(l));
		}
	free(l);
	return worst;
}

/* The double binary tree's slowest path and its links' time (see the
 * top); false: the plan must be built. */
static bool tree_terms(const struct topology *t, const struct group *g, double N, double *amax,
		       double *fabric_s)
{
	int C = g->C, L = g->len, X = node_id(t, g, 0), Y = node_id(t, g, 1);
	double part = N / (2.0 * C);
	struct loads *chain = loads_create(), *fab = loads_create(), *head[2] = { loads_create(), loads_create() };
	struct tree_fabric f;
	bool ok = true;
	tree_fabric(t, g, &f);
	*amax = 0;
	for (int k2 = 0; k2 < 2 * C; k2++) {
		int tr = k2 & 1, rot = C == 1 && tr ? L / 2 : (int)((long)k2 * L / (2 * C));
		for (int j = 0; j + 1 < L; j++) {
			int a = g->lo[(j + rot) % L], b = g->lo[(j + 1 + rot) % L];
			*amax = fmax(*amax, route_add(t, X * t->gpus_per_node + a, X * t->gpus_per_node + b,
						      X, part, chain, NULL));
			*amax = fmax(*amax, route_add(t, X * t->gpus_per_node + b, X * t->gpus_per_node + a,
						      X, part, chain, NULL));
		}
		int h = g->lo[rot % L];
		route_add(t, X * t->gpus_per_node + h, Y * t->gpus_per_node + h, X, part, head[tr], NULL);
		route_add(t, Y * t->gpus_per_node + h, X * t->gpus_per_node + h, X, part, head[tr], NULL);
		int c = rank_at(t, g, f.child, h), p = rank_at(t, g, f.parent, h);
		*amax = fmax(*amax, route_add(t, c, p, -1, 2 * C * part, NULL, fab));
		*amax = fmax(*amax, route_add(t, p, c, -1, 2 * C * part, NULL, fab));
	}
	double node_s = tree_node_s(g, chain, head, &ok);
	*fabric_s = fmax(node_s, fab->fatpipe_s); /* fab: merged flows' bound on FATPIPE hops */
	if (t->fabric == FABRIC_FAT_TREE) {
		*fabric_s = fmax(*fabric_s, f.leaf_cross * C * part / t->ft_leaf_up_bw_Bps);
		if (f.pod_cross)
			*fabric_s = fmax(*fabric_s, f.pod_cross * C * part / t->ft_pod_up_bw_Bps);
	}
	ok = ok && !chain->full && !head[0]->full && !head[1]->full;
	free(chain);
	free(fab);
	free(head[0]);
	free(head[1]);
	return ok;
}

/* NCCL's pair for op as coll_tune_build() takes it: the least predicted
 * time among pairs whose plan can be built on a group across nodes
 * (NVLS cannot; tree all-reduce only). -1: none. */
static int tune_pick(const struct nccl_model *m, enum coll_op op, double bytes, enum coll_proto *proto)
{
	bool tried[NCCL_ALGO_N][PROTO_N] = { { false } };
	enum nccl_algo a;
	while (nccl_model_next(m, op, bytes, tried, &a, proto))
		if (a == NCCL_ALGO_RING || (a == NCCL_ALGO_TREE && op == COLL_ALLREDUCE))
			return a;
	return -1;
}

/* The closed form without flows (see the top): 0 done, 1 build the plan. */
static int closed_form(const struct topology *t, const char *algo, enum coll_op op, const int *ranks,
		       int n, double bytes, struct coll_time *out)
{
	const struct coll_algo *a = coll_algo_find(algo);
	struct group g;
	if (!a || a->build != coll_tune_build || bytes <= 0 ||
	    (op != COLL_ALLREDUCE && op != COLL_REDUCE_SCATTER && op != COLL_ALLGATHER) ||
	    !group_init(t, ranks, n, &g))
		return 1;
	/* nccl_group_shape() of a uniform group, without its pass */
	struct nccl_shape sh = { .nranks = n, .nodes = g.nn, .ppn = g.len, .nics = g.nics,
				 .first_local = topology_local_of(t, ranks[0]) };
	struct nccl_model *m = nccl_model_create_shape(t, &sh);
	enum coll_proto proto = PROTO_SIMPLE;
	int na = m ? tune_pick(m, op, bytes, &proto) : -1;
	double lat_us = 0, bw_GBps = 0, us = na < 0 ? -1 : nccl_model_predict(m, op, na, proto, bytes, &lat_us, &bw_GBps);
	nccl_model_destroy(m);
	double amax = 0, fabric_s = 0, xfer_s = (us - lat_us) * 1e-6;
	if (us < 0 || !(na == NCCL_ALGO_RING ? ring_terms(t, &g, op, bytes, &amax, &fabric_s)
					     : tree_terms(t, &g, bytes, &amax, &fabric_s)))
		return 1;
	out->fabric_s = fabric_s;
	if (!(fabric_s > 0 && fabric_s * (1 + MARGIN) < xfer_s))
		return 1;
	/* coll_plan_build(): NCCL's transfer above the fabric's, NCCL's latency */
	double lat = lat_us * 1e-6;
	out->ideal_time_s = fmax(lat, amax) + xfer_s;
	out->nccl_time_s = us * 1e-6;
	out->closed = true;
	return 0;
}

int coll_time_uncontended(const struct topology *t, const char *algo, enum coll_op op,
			  const int *ranks, int n, double bytes, struct coll_time *out)
{
	*out = (struct coll_time){ 0 };
	if (n > 1 && !closed_form(t, algo, op, ranks, n, bytes, out))
		return 0;
	struct coll_plan *p = coll_plan_create(t, algo, op, ranks, n, bytes);
	if (!p)
		return -1;
	out->ideal_time_s = p->ideal_time_s;
	out->nccl_time_s = p->nccl_time_s;
	coll_plan_destroy(p);
	return 0;
}
