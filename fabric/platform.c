/* platform: SimGrid XML from a topology (see platform.h).
 *
 * Every route is written from the link lists of topology_route.c, so a
 * path's latency and bottleneck are what topology_path_latency() and
 * topology_path_bw() say. Link names: "gl<rank>" a GPU's link into its
 * NVSwitch, PCIe switch or host; "nv<node>_<a>_<b>" an NVLink; "pu<node>_<s>"
 * a PCIe switch uplink; "xs<node>" the cross-socket link; "nic<node>_<i>" a
 * NIC; "fabric", "grp<k>_f" the non-blocking switch (FATPIPE);
 * "sw<leaf>" a fat-tree leaf switch (FATPIPE), "lu<leaf>" its aggregated
 * uplinks, "podup<pod>" a pod's aggregated spine uplinks.
 *
 * Zone structure, chosen so that the number of routes stays about linear
 * in the node count (Full routing needs a route per pair of children):
 *   node zone "n<k>"   hosts, a gateway router, GPU-to-GPU and GPU-to-
 *                      gateway routes: O(gpus^2) per node;
 *   non-blocking/rail  up to 64 nodes directly under the root; more in
 *                      groups of 64 ("grp<k>"), each with a switch zone
 *                      whose router is the group's gateway: O(64 nodes +
 *                      (nodes/64)^2) routes;
 *   fat tree           a zone per leaf ("leaf<k>", gateway "leaf<k>_sw"),
 *                      for 3 levels a zone per pod ("pod<p>") above them.
 * Zones without a used GPU (nodes, leaves, pods, groups) are left out,
 * with their links and routes: no route between used GPUs crosses them.
 * SimGrid forbids empty routes, so the route from a node to its group's
 * switch zone crosses a zero-latency FATPIPE link ("grp<k>_nop"), which
 * changes neither latency nor bandwidth. In a zone, child zones come first,
 * then links, then routes (SimGrid's DTD). */
#include "platform.h"
#include "xalloc.h"

#include <stdlib.h>
#include <string.h>

#include "platform-private.h"

static void link_name(const struct topology *t, const struct topo_hop *h, char *b, size_t n)
{
	switch (h->kind) {
	case TL_GPU:
		snprintf(b, n, "gl%d", h->node * t->gpus_per_node + h->index);
		break;
	case TL_NVLINK:
		snprintf(b, n, "nv%d_%d_%d", h->node, h->index, h->index2);
		break;
	case TL_PCIE_UP:
		snprintf(b, n, "pu%d_%d", h->node, h->index);
		break;
	case TL_XSOCKET:
		snprintf(b, n, "xs%d", h->node);
		break;
	case TL_NIC:
		snprintf(b, n, "nic%d_%d", h->node, h->index);
		break;
	case TL_SWITCH:
		if (h->index < 0)
			snprintf(b, n, "fabric");
		else
			snprintf(b, n, "sw%d", h->index);
		break;
	case TL_LEAF_UP:
		snprintf(b, n, "lu%d", h->index);
		break;
	case TL_POD_UP:
		snprintf(b, n, "podup%d", h->index);
		break;
	default:
		snprintf(b, n, "?");
	}
}

typedef const struct platform_sink SINK;

/* Degraded links of the platform being emitted (NULL: none). */
static const struct platform_extra *g_x;

static void put_link(SINK *f, const char *ind, const char *id, double bw, double lat, bool fatpipe)
{
	(void)ind;
	for (int i = 0; g_x && i < g_x->ndeg; i++)
		if (strcmp(g_x->deg[i].link, id) == 0) {
			bw *= g_x->deg[i].bw_factor;
			lat *= g_x->deg[i].latency_factor;
		}
	f->link(f->ctx, id, bw, lat, fatpipe);
}

static void put_hop_link(SINK *f, const char *ind, const struct topology *t, const struct topo_hop *h)
{
	char id[64];
	link_name(t, h, id, sizeof(id));
	put_link(f, ind, id, topology_link_bw(t, h), topology_link_latency(t, h), h->dir == 0);
}

/* A route's links from a topology path. */
static int put_ctns(const struct topology *t, const struct topo_hop *h, int n,
		    struct platform_hop *out)
{
	for (int i = 0; i < n; i++) {
		link_name(t, &h[i], out[i].id, sizeof(out[i].id));
		out[i].dir = h[i].dir;
	}
	return n;
}

/* A zone route through one link id (dir as in struct platform_hop). */
static void zone_route1(SINK *f, const char *src, const char *dst, const char *gws,
			const char *gwd, const char *link, int dir)
{
	struct platform_hop h;
	snprintf(h.id, sizeof(h.id), "%s", link);
	h.dir = dir;
	f->route(f->ctx, src, dst, gws, gwd, &h, 1);
}

/* GPUs to emit during platform_emit() (NULL: all); emission happens once
 * per process, from one thread. */
static const unsigned char *g_used;

/* Parameter servers to emit (NULL: none), and whether the node set being
 * written is the root's (where they attach on a non-blocking fabric). */
static const struct platform_ps *g_ps;
static bool g_ps_here;

/* The zones of the parameter servers (platform.h): host, gateway, NIC. */
static void write_ps_zones(SINK *f)
{
	char z[32], h[32], gw[40], nic[40];
	for (int k = 0; g_ps && k < g_ps->servers; k++) {
		snprintf(z, sizeof(z), "psz%d", k);
		snprintf(h, sizeof(h), "ps%d", k);
		snprintf(gw, sizeof(gw), "ps%d_gw", k);
		snprintf(nic, sizeof(nic), "psnic%d", k);
		f->zone_begin(f->ctx, z);
		f->host(f->ctx, h);
		f->router(f->ctx, gw);
		put_link(f, "", nic, g_ps->nic_bw_Bps, g_ps->nic_latency_s, false);
		zone_route1(f, h, gw, NULL, NULL, nic, +1);
		f->zone_end(f->ctx);
	}
}

/* Routes from child zone `zone` (gateway gw) to every parameter server
 * through link `via` (dir as in struct platform_hop). */
static void route_ps(SINK *f, const char *zone, const char *gw, const char *via, int dir)
{
	char z[32], g[40];
	for (int k = 0; g_ps && k < g_ps->servers; k++) {
		snprintf(z, sizeof(z), "psz%d", k);
		snprintf(g, sizeof(g), "ps%d_gw", k);
		zone_route1(f, zone, z, gw, g, via, dir);
	}
}

static bool gpu_used(int r)
{
	return !g_used || g_used[r];
}

static bool node_used(const struct topology *t, int n)
{
	for (int g = 0; g < t->gpus_per_node; g++)
		if (gpu_used(n * t->gpus_per_node + g))
			return true;
	return false;
}

/* A node's zone: its used GPUs, its gateway, the links their routes
 * cross (an unused link carries nothing), the routes between them and to
 * the gateway. */
static void write_node(const struct topology *t, int n, bool net, SINK *f, const char *ind)
{
	int G = t->gpus_per_node;
	int maxr = G * (G - 1) / 2 + G;
	struct topo_hop (*h)[TOPO_MAX_HOPS] = xreallocarray(NULL, (size_t)maxr, sizeof(*h));
	int *k = xreallocarray(NULL, (size_t)maxr, sizeof(*k));
	int *src = xreallocarray(NULL, (size_t)maxr, sizeof(*src));
	int *dst = xreallocarray(NULL, (size_t)maxr, sizeof(*dst)); /* -1: the gateway */
	struct topo_hop *lk = xreallocarray(NULL, (size_t)maxr * TOPO_MAX_HOPS, sizeof(*lk));
	struct platform_hop ph[TOPO_MAX_HOPS];
	int nr = 0, nl = 0;
	char a[32], b[32];
	(void)ind;

	for (int x = 0; x < G; x++)
		for (int y = x + 1; y < G; y++)
			if (gpu_used(n * G + x) && gpu_used(n * G + y)) {
				src[nr] = x, dst[nr] = y;
				k[nr] = topology_route(t, n * G + x, n * G + y, h[nr]);
				nr++;
			}
	if (net)
		for (int g = 0; g < G; g++)
			if (gpu_used(n * G + g)) {
				src[nr] = g, dst[nr] = -1;
				k[nr] = topology_route_to_nic(t, n, g, h[nr]);
				if (k[nr])
					nr++;
			}
	/* the distinct links, in the order first crossed */
	for (int i = 0; i < nr; i++)
		for (int j = 0; j < k[i]; j++) {
			struct topo_hop x = h[i][j];
			x.dir = x.dir ? +1 : 0; /* one link, either direction */
			unsigned long long key = topology_link_key(t, &x);
			int q = 0;
			while (q < nl && topology_link_key(t, &lk[q]) != key)
				q++;
			if (q == nl)
				lk[nl++] = x;
		}

	snprintf(a, sizeof(a), "n%d", n);
	f->zone_begin(f->ctx, a);
	for (int g = 0; g < G; g++)
		if (gpu_used(n * G + g)) {
			snprintf(a, sizeof(a), "g%d", n * G + g);
			f->host(f->ctx, a);
		}
	snprintf(a, sizeof(a), "n%d_gw", n);
	f->router(f->ctx, a);
	for (int q = 0; q < nl; q++)
		put_hop_link(f, "", t, &lk[q]);
	for (int i = 0; i < nr; i++) {
		snprintf(a, sizeof(a), "g%d", n * G + src[i]);
		if (dst[i] >= 0)
			snprintf(b, sizeof(b), "g%d", n * G + dst[i]);
		else
			snprintf(b, sizeof(b), "n%d_gw", n);
		f->route(f->ctx, a, b, NULL, NULL, ph, put_ctns(t, h[i], k[i], ph));
	}
	f->zone_end(f->ctx);
	free(h);
	free(k);
	free(src);
	free(dst);
	free(lk);
}

/* A zone holding a router only: the gateway of a group of zones. */
static void write_switch_zone(SINK *f, const char *ind, const char *id)
{
	char r[64];
	(void)ind;
	snprintf(r, sizeof(r), "%s_r", id);
	f->zone_begin(f->ctx, id);
	f->router(f->ctx, r);
	f->zone_end(f->ctx);
}

/* A set of nodes joined through one switch (write_node_set()'s arguments). */
struct node_set {
	int n0, n1;                     /* nodes [n0, n1) */
	const char *fab, *sw, *up;      /* the switch link, the switch zone, its uplink */
	double fab_lat, up_lat;
	bool per_node;                  /* one port link per node */
};

/* The set's links: the switch (and uplink) as one FATPIPE each, or one port per node. */
static void node_set_links(const struct topology *t, const struct node_set *ns, SINK *f,
			   const char *ind, double bw)
{
	char name[64];

	/* per_node: a switch that only adds latency is written as one port
	 * link per node rather than one link every route shares, so that
	 * SimGrid's max-min solver does not tie all inter-node flows into one
	 * system (same latency, no bandwidth limit either way) */
	if (!ns->per_node) {
		put_link(f, ind, ns->fab, bw, ns->fab_lat, true);
		if (ns->up && strcmp(ns->up, ns->fab))
			put_link(f, ind, ns->up, bw, ns->up_lat, true);
		return;
	}
	for (int x = ns->n0; x < ns->n1; x++) {
		if (!node_used(t, x))
			continue;
		snprintf(name, sizeof(name), "%s_%d", ns->fab, x);
		put_link(f, ind, name, bw, ns->fab_lat, true);
		if (ns->sw && ns->up) {
			snprintf(name, sizeof(name), "%s_%d", ns->up, x);
			put_link(f, ind, name, bw, ns->up_lat, true);
		}
	}
}

/* The route between each two used nodes of the set, through the switch link. */
static void node_set_pairs(const struct topology *t, const struct node_set *ns, SINK *f)
{
	char a[32], b[32], ga[40], gb[40], name[64];

	for (int x = ns->n0; x < ns->n1; x++)
		for (int y = x + 1; y < ns->n1; y++) {
			if (!node_used(t, x) || !node_used(t, y))
				continue;
			snprintf(a, sizeof(a), "n%d", x);
			snprintf(b, sizeof(b), "n%d", y);
			snprintf(ga, sizeof(ga), "n%d_gw", x);
			snprintf(gb, sizeof(gb), "n%d_gw", y);
			if (ns->per_node)
				snprintf(name, sizeof(name), "%s_%d", ns->fab, x);
			else
				snprintf(name, sizeof(name), "%s", ns->fab);
			zone_route1(f, a, b, ga, gb, name, 0);
		}
}

/* The routes from each used node to the parameter servers' zones, when they are here. */
static void node_set_ps_routes(const struct topology *t, const struct node_set *ns, SINK *f)
{
	char a[32], ga[40], name[64];

	for (int x = ns->n0; x < ns->n1 && g_ps_here; x++)
		if (node_used(t, x)) {
			snprintf(a, sizeof(a), "n%d", x);
			snprintf(ga, sizeof(ga), "n%d_gw", x);
			snprintf(name, sizeof(name), ns->per_node ? "%s_%d" : "%s", ns->fab, x);
			route_ps(f, a, ga, name, 0);
		}
}

/* The route from each used node to the switch zone, through the uplink. */
static void node_set_uplinks(const struct topology *t, const struct node_set *ns, SINK *f)
{
	char a[32], ga[40], name[64], swr[64];

	snprintf(swr, sizeof(swr), "%s_r", ns->sw);
	for (int x = ns->n0; x < ns->n1; x++) {
		if (!node_used(t, x))
			continue;
		snprintf(a, sizeof(a), "n%d", x);
		snprintf(ga, sizeof(ga), "n%d_gw", x);
		if (ns->per_node)
			snprintf(name, sizeof(name), "%s_%d", ns->up, x);
		else
			snprintf(name, sizeof(name), "%s", ns->up);
		zone_route1(f, a, ns->sw, ga, swr, name, 0);
	}
}

/* Nodes [n0, n1) as children of the current zone, joined pairwise through
 * link `fab` (a FATPIPE declared here unless declare is NULL); with sw,
 * also routed to the switch zone sw through link `up`. */
static void write_node_set(const struct topology *t, int n0, int n1, bool net, SINK *f,
			   const char *ind, const char *fab, double fab_lat,
			   const char *sw, const char *up, double up_lat, bool per_node)
{
	const struct node_set ns = { n0, n1, fab, sw, up, fab_lat, up_lat, per_node };
	double bw = t->fabric_bw_Bps > 0 ? t->fabric_bw_Bps : TOPO_UNBOUNDED_BPS;

	for (int n = n0; n < n1; n++)
		if (node_used(t, n))
			write_node(t, n, net, f, ind);
	if (sw)
		write_switch_zone(f, ind, sw);
	if (g_ps_here)
		write_ps_zones(f);
	if (!net)
		return;
	node_set_links(t, &ns, f, ind, bw);
	node_set_pairs(t, &ns, f);
	node_set_ps_routes(t, &ns, f);
	if (sw)
		node_set_uplinks(t, &ns, f);
}

static void write_nonblocking(const struct topology *t, int nodes, SINK *f)
{
	if (nodes <= GROUP_NODES) {
		g_ps_here = true;
		write_node_set(t, 0, nodes, nodes > 1, f, " ", "fabric", t->fabric_latency_s,
			       NULL, NULL, 0, true);
		g_ps_here = false;
		return;
	}
	int groups = (nodes + GROUP_NODES - 1) / GROUP_NODES;
	char id[32], fab[32], sw[32], nop[32], name[40];
	/* only the groups that hold a used GPU: nothing routes through the others */
	bool *gu = xreallocarray(NULL, (size_t)groups, sizeof(*gu));
	for (int k = 0; k < groups; k++) {
		gu[k] = false;
		for (int n = k * GROUP_NODES; n < (k + 1) * GROUP_NODES && n < nodes && !gu[k]; n++)
			gu[k] = node_used(t, n);
	}
	for (int k = 0; k < groups; k++) {
		if (!gu[k])
			continue;
		snprintf(id, sizeof(id), "grp%d", k);
		snprintf(fab, sizeof(fab), "grp%d_f", k);
		snprintf(sw, sizeof(sw), "grp%d_sw", k);
		snprintf(nop, sizeof(nop), "grp%d_nop", k);
		f->zone_begin(f->ctx, id);
		int n1 = (k + 1) * GROUP_NODES < nodes ? (k + 1) * GROUP_NODES : nodes;
		write_node_set(t, k * GROUP_NODES, n1, true, f, "  ", fab, t->fabric_latency_s,
			       sw, nop, 0, true);
		f->zone_end(f->ctx);
	}
	write_ps_zones(f);
	for (int a = 0; a < groups; a++) {
		if (!gu[a])
			continue;
		snprintf(name, sizeof(name), "fabric_%d", a);
		put_link(f, " ", name, t->fabric_bw_Bps > 0 ? t->fabric_bw_Bps : TOPO_UNBOUNDED_BPS,
			 t->fabric_latency_s, true);
	}
	for (int a = 0; a < groups; a++)
		for (int b = a + 1; b < groups; b++) {
			if (!gu[a] || !gu[b])
				continue;
			snprintf(name, sizeof(name), "fabric_%d", a);
			char za[32], zb[32], ra[40], rb[40];
			snprintf(za, sizeof(za), "grp%d", a);
			snprintf(zb, sizeof(zb), "grp%d", b);
			snprintf(ra, sizeof(ra), "grp%d_sw_r", a);
			snprintf(rb, sizeof(rb), "grp%d_sw_r", b);
			zone_route1(f, za, zb, ra, rb, name, 0);
		}
	for (int a = 0; a < groups; a++) {
		char za[32], ra[40];
		if (!gu[a])
			continue;
		snprintf(name, sizeof(name), "fabric_%d", a);
		snprintf(za, sizeof(za), "grp%d", a);
		snprintf(ra, sizeof(ra), "grp%d_sw_r", a);
		route_ps(f, za, ra, name, 0);
	}
	free(gu);
}

static void write_leaf(const struct topology *t, int leaf, int nodes, SINK *f, const char *ind)
{
	int npl = t->ft_nodes_per_leaf;
	int n0 = leaf * npl, n1 = n0 + npl < nodes ? n0 + npl : nodes;
	char id[32], sw[32], ci[16];
	snprintf(id, sizeof(id), "sw%d", leaf);
	snprintf(sw, sizeof(sw), "leaf%d_sw", leaf);
	snprintf(ci, sizeof(ci), "%s ", ind);
	char z[32];
	snprintf(z, sizeof(z), "leaf%d", leaf);
	f->zone_begin(f->ctx, z);
	write_node_set(t, n0, n1, true, f, ci, id, t->fabric_latency_s, sw, id, 0, false);
	f->zone_end(f->ctx);
}

static bool leaf_used(const struct topology *t, int leaf, int nodes)
{
	int npl = t->ft_nodes_per_leaf;
	for (int n = leaf * npl; n < (leaf + 1) * npl && n < nodes; n++)
		if (node_used(t, n))
			return true;
	return false;
}

static bool pod_used(const struct topology *t, int pod, int nodes)
{
	int lpp = t->ft_leaves_per_pod, leaves = (nodes + t->ft_nodes_per_leaf - 1) / t->ft_nodes_per_leaf;
	for (int l = pod * lpp; l < (pod + 1) * lpp && l < leaves; l++)
		if (leaf_used(t, l, nodes))
			return true;
	return false;
}

/* Zones [z0, z1) named prefix<k> with gateways prefix<k>_sw_r, joined
 * pairwise by up-links uname<k> (UP out of a, DOWN into b). Only the zones
 * that hold a used GPU are written (used(t, k, nodes)): nothing routes
 * through the others. */
static void join_zones(const struct topology *t, SINK *f, const char *ind, const char *prefix,
		       int z0, int z1, enum topo_link_kind uk, bool declare, int nodes,
		       bool (*used)(const struct topology *, int, int))
{
	char za[32], zb[32], ra[40], rb[40];
	struct platform_hop h[2];
	if (declare)
		for (int z = z0; z < z1; z++) {
			struct topo_hop x = { uk, -1, z, 0, +1 };
			if (used(t, z, nodes))
				put_hop_link(f, ind, t, &x);
		}
	for (int a = z0; a < z1; a++) {
		if (!used(t, a, nodes))
			continue;
		for (int b = a + 1; b < z1; b++) {
			if (!used(t, b, nodes))
				continue;
			snprintf(za, sizeof(za), "%s%d", prefix, a);
			snprintf(zb, sizeof(zb), "%s%d", prefix, b);
			snprintf(ra, sizeof(ra), "%s%d_sw_r", prefix, a);
			snprintf(rb, sizeof(rb), "%s%d_sw_r", prefix, b);
			snprintf(h[0].id, sizeof(h[0].id), "%s%d", uk == TL_LEAF_UP ? "lu" : "podup", a);
			snprintf(h[1].id, sizeof(h[1].id), "%s%d", uk == TL_LEAF_UP ? "lu" : "podup", b);
			h[0].dir = +1;
			h[1].dir = -1;
			f->route(f->ctx, za, zb, ra, rb, h, 2);
		}
	}
}

static void write_fat_tree(const struct topology *t, int nodes, SINK *f)
{
	int npl = t->ft_nodes_per_leaf, lpp = t->ft_leaves_per_pod;
	int leaves = (nodes + npl - 1) / npl;

	if (t->ft_levels == 2 || leaves <= lpp) {
		for (int l = 0; l < leaves; l++)
			if (leaf_used(t, l, nodes))
				write_leaf(t, l, nodes, f, " ");
		write_ps_zones(f);
		join_zones(t, f, " ", "leaf", 0, leaves, TL_LEAF_UP, true, nodes, leaf_used);
		for (int l = 0; l < leaves && g_ps; l++) {
			char lz[32], lr[40], lu[40];
			if (!leaf_used(t, l, nodes))
				continue;
			snprintf(lz, sizeof(lz), "leaf%d", l);
			snprintf(lr, sizeof(lr), "leaf%d_sw_r", l);
			snprintf(lu, sizeof(lu), "lu%d", l);
			route_ps(f, lz, lr, lu, +1);
		}
		return;
	}
	int pods = (leaves + lpp - 1) / lpp;
	for (int p = 0; p < pods; p++) {
		int l0 = p * lpp, l1 = l0 + lpp < leaves ? l0 + lpp : leaves;
		char pz[32];
		if (!pod_used(t, p, nodes))
			continue;
		snprintf(pz, sizeof(pz), "pod%d", p);
		f->zone_begin(f->ctx, pz);
		for (int l = l0; l < l1; l++)
			if (leaf_used(t, l, nodes))
				write_leaf(t, l, nodes, f, "  ");
		char sw[32], swr[40], lz[32], lu[40];
		snprintf(sw, sizeof(sw), "pod%d_sw", p);
		snprintf(swr, sizeof(swr), "pod%d_sw_r", p);
		write_switch_zone(f, "  ", sw);
		join_zones(t, f, "  ", "leaf", l0, l1, TL_LEAF_UP, true, nodes, leaf_used);
		for (int l = l0; l < l1; l++) {
			char lr[40];
			if (!leaf_used(t, l, nodes))
				continue;
			snprintf(lz, sizeof(lz), "leaf%d", l);
			snprintf(lr, sizeof(lr), "leaf%d_sw_r", l);
			snprintf(lu, sizeof(lu), "lu%d", l);
			zone_route1(f, lz, sw, lr, swr, lu, +1);
		}
		f->zone_end(f->ctx);
	}
	join_zones(t, f, " ", "pod", 0, pods, TL_POD_UP, true, nodes, pod_used);
}

bool platform_ps_supported(const struct topology *t, int nodes)
{
	if (nodes <= 1 || t->nics < 1)
		return false;
	if (t->fabric == FABRIC_FAT_TREE) {
		int leaves = (nodes + t->ft_nodes_per_leaf - 1) / t->ft_nodes_per_leaf;
		return t->ft_levels == 2 || leaves <= t->ft_leaves_per_pod;
	}
	return true;
}

int platform_emit_ex(const struct topology *t, int nodes, const unsigned char *used,
		     const struct platform_extra *x, const struct platform_sink *f)
{
	g_ps = x && x->ps && x->ps->servers > 0 ? x->ps : NULL;
	g_x = x;
	int rc = platform_emit(t, nodes, used, f);
	g_ps = NULL;
	g_x = NULL;
	return rc;
}

bool platform_hop_is(const struct topology *t, const struct topo_hop *h, const char *name)
{
	char b[64];
	link_name(t, h, b, sizeof(b));
	return strcmp(b, name) == 0;
}

/* Mark nodes [n0, n1) (clipped to nodes) in node_mark. */
static void mark_nodes(unsigned char *node_mark, int n0, int n1, int nodes)
{
	for (int n = n0 < 0 ? 0 : n0; n < n1 && n < nodes; n++)
		node_mark[n] = 1;
}

void platform_link_nodes(const struct topology *t, int nodes, const char *link,
			 unsigned char *node_mark)
{
	int a = -1, b = -1, c = -1, k = 0;
	int npl = t->ft_nodes_per_leaf > 0 ? t->ft_nodes_per_leaf : 1;
	int npp = npl * (t->ft_leaves_per_pod > 0 ? t->ft_leaves_per_pod : 1);
	char tail;
	/* inside one node (nv<node>_<a>_<b> before nic<node>_<i>: both parse as %d_%d) */
	if (sscanf(link, "gl%d%c", &a, &tail) == 1) {
		mark_nodes(node_mark, a / t->gpus_per_node, a / t->gpus_per_node + 1, nodes);
		return;
	}
	if (sscanf(link, "nv%d_%d_%d%c", &a, &b, &c, &tail) == 3 ||
	    sscanf(link, "pu%d_%d%c", &a, &b, &tail) == 2 || sscanf(link, "xs%d%c", &a, &tail) == 1 ||
	    sscanf(link, "nic%d_%d%c", &a, &b, &tail) == 2) {
		mark_nodes(node_mark, a, a + 1, nodes);
		return;
	}
	/* a node's port into its group's switch (traffic leaving the group) */
	if (sscanf(link, "grp%d_nop_%d%c", &b, &a, &tail) == 2) {
		mark_nodes(node_mark, a, a + 1, nodes);
		return;
	}
	/* inside a group, the route between nodes x < y takes x's port
	 * "grp<k>_f_<x>": every node of the group can cross it */
	if (sscanf(link, "grp%d_f_%d%c", &b, &a, &tail) == 2) {
		mark_nodes(node_mark, b * GROUP_NODES, (b + 1) * GROUP_NODES, nodes);
		return;
	}
	/* "fabric_<x>" (a node's port, or a group's above 64 nodes) carries x's
	 * traffic with every higher node or group: every node can cross it;
	 * "fabric" likewise (below) */
	/* a leaf switch or its uplinks, a pod's uplinks */
	if (sscanf(link, "sw%d%c", &a, &tail) == 1 || sscanf(link, "lu%d%c", &a, &tail) == 1) {
		mark_nodes(node_mark, a * npl, (a + 1) * npl, nodes);
		return;
	}
	if (sscanf(link, "podup%d%c", &a, &tail) == 1) {
		mark_nodes(node_mark, a * npp, (a + 1) * npp, nodes);
		return;
	}
	/* anything else (the shared fabric, a parameter server's NIC) */
	for (k = 0; k < nodes; k++)
		node_mark[k] = 1;
}

int platform_emit(const struct topology *t, int nodes, const unsigned char *used,
		  const struct platform_sink *f)
{
	g_used = used;
	f->zone_begin(f->ctx, "world");
	if (nodes <= 1 || t->nics < 1)
		write_node(t, 0, false, f, " ");
	else if (t->fabric == FABRIC_FAT_TREE)
		write_fat_tree(t, nodes, f);
	else
		write_nonblocking(t, nodes, f);
	f->zone_end(f->ctx);
	g_used = NULL;
	return 0;
}

/* ---- the XML sink -------------------------------------------------- */

struct xml {
	FILE *f;
	int depth;
};

static void xml_zone_begin(void *ctx, const char *id)
{
	struct xml *x = ctx;
	fprintf(x->f, "%*s<zone id=\"%s\" routing=\"Full\">\n", x->depth++, "", id);
}

static void xml_zone_end(void *ctx)
{
	struct xml *x = ctx;
	fprintf(x->f, "%*s</zone>\n", --x->depth, "");
}

static void xml_host(void *ctx, const char *id)
{
	struct xml *x = ctx;
	fprintf(x->f, "%*s<host id=\"%s\" speed=\"1Gf\"/>\n", x->depth, "", id);
}

static void xml_router(void *ctx, const char *id)
{
	struct xml *x = ctx;
	fprintf(x->f, "%*s<router id=\"%s\"/>\n", x->depth, "", id);
}

static void xml_link(void *ctx, const char *id, double bw_Bps, double latency_s, bool fatpipe)
{
	struct xml *x = ctx;
	fprintf(x->f, "%*s<link id=\"%s\" bandwidth=\"%.17gBps\" latency=\"%.17gs\" sharing_policy=\"%s\"/>\n",
		x->depth, "", id, bw_Bps, latency_s, fatpipe ? "FATPIPE" : "SPLITDUPLEX");
}

static void xml_route(void *ctx, const char *src, const char *dst, const char *gw_src,
		      const char *gw_dst, const struct platform_hop *h, int n)
{
	struct xml *x = ctx;
	if (gw_src)
		fprintf(x->f, "%*s<zoneRoute src=\"%s\" dst=\"%s\" gw_src=\"%s\" gw_dst=\"%s\" symmetrical=\"YES\">",
			x->depth, "", src, dst, gw_src, gw_dst);
	else
		fprintf(x->f, "%*s<route src=\"%s\" dst=\"%s\" symmetrical=\"YES\">", x->depth, "",
			src, dst);
	for (int i = 0; i < n; i++)
		if (h[i].dir)
			fprintf(x->f, "<link_ctn id=\"%s\" direction=\"%s\"/>", h[i].id,
				h[i].dir > 0 ? "UP" : "DOWN");
		else
			fprintf(x->f, "<link_ctn id=\"%s\"/>", h[i].id);
	fprintf(x->f, "</%s>\n", gw_src ? "zoneRoute" : "route");
}

int platform_write(const struct topology *t, int nodes, FILE *f)
{
	struct xml x = { f, 0 };
	const struct platform_sink sink = { &x, xml_zone_begin, xml_zone_end, xml_host,
					    xml_router, xml_link, xml_route };
	fprintf(f, "<?xml version='1.0'?>\n"
		   "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
		   "<platform version=\"4.1\">\n");
	platform_emit(t, nodes, NULL, &sink);
	fprintf(f, "</platform>\n");
	return ferror(f) ? -1 : 0;
}
