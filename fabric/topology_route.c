/* topology_route: the links a transfer between two GPUs crosses.
 *
 * One function lists the links of every path (topology_route()); the
 * platform writer emits its SimGrid routes from the same lists, and path
 * latency and bandwidth are their sum and minimum, so what the planners
 * assume and what the engine simulates cannot drift apart. The rules are
 * in topology.h ("Paths"). Switch crossings (TL_SWITCH) are FATPIPE links:
 * they add latency and never share bandwidth. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "topology.h"

static int hop(struct topo_hop *h, int k, enum topo_link_kind kind, int node, int index,
	       int index2, int dir)
{
	h[k] = (struct topo_hop){ kind, node, index, index2, dir };
	return k + 1;
}

static int socket_of_switch(const struct topology *t, int s)
{
	return s / (t->pcie_switches / t->pcie_sockets);
}

static bool pcie_tree(const struct topology *t)
{
	return t->intra == INTRA_PCIE && t->pcie_switches > 0;
}

/* Links between local GPUs la != lb of one node. */
static int intra_route(const struct topology *t, int node, int la, int lb, struct topo_hop *h)
{
	int G = t->gpus_per_node, k = 0;

	if (t->intra == INTRA_NVLINK_MESH) {
		int via = t->nvl_via[la * G + lb];
		if (via == -1)
			return hop(h, k, TL_NVLINK, node, la < lb ? la : lb, la < lb ? lb : la,
				   la < lb ? +1 : -1);
		if (via >= 0) {
			k = hop(h, k, TL_NVLINK, node, la < via ? la : via, la < via ? via : la,
				la < via ? +1 : -1);
			return hop(h, k, TL_NVLINK, node, via < lb ? via : lb, via < lb ? lb : via,
				   via < lb ? +1 : -1);
		}
		/* through the host */
	} else if (pcie_tree(t)) {
		int sa = la / t->pcie_gpus_per_switch, sb = lb / t->pcie_gpus_per_switch;
		k = hop(h, k, TL_GPU, node, la, 0, +1);
		if (sa != sb) {
			int xa = socket_of_switch(t, sa), xb = socket_of_switch(t, sb);
			k = hop(h, k, TL_PCIE_UP, node, sa, 0, +1);
			if (xa != xb)
				k = hop(h, k, TL_XSOCKET, node, 0, 0, xa < xb ? +1 : -1);
			k = hop(h, k, TL_PCIE_UP, node, sb, 0, -1);
		}
		return hop(h, k, TL_GPU, node, lb, 0, -1);
	}
	k = hop(h, k, TL_GPU, node, la, 0, +1);
	return hop(h, k, TL_GPU, node, lb, 0, -1);
}

int topology_route_to_nic(const struct topology *t, int node, int g, struct topo_hop *h)
{
	int k = 0, nic = t->gpu_nic[g];

	if (t->nics < 1 || nic < 0)
		return 0;
	if (pcie_tree(t)) {
		int sg = g / t->pcie_gpus_per_switch;
		int sn = t->pcie_nics_per_switch > 0 ? nic / t->pcie_nics_per_switch : -1;
		k = hop(h, k, TL_GPU, node, g, 0, +1);
		if (sn != sg) {
			int xg = socket_of_switch(t, sg), xn = sn >= 0 ? socket_of_switch(t, sn) : 0;
			k = hop(h, k, TL_PCIE_UP, node, sg, 0, +1);
			if (xg != xn)
				k = hop(h, k, TL_XSOCKET, node, 0, 0, xg < xn ? +1 : -1);
			if (sn >= 0)
				k = hop(h, k, TL_PCIE_UP, node, sn, 0, -1);
		}
	}
	return hop(h, k, TL_NIC, node, nic, 0, +1);
}

int topology_route_fabric(const struct topology *t, int na, int nb, struct topo_hop *h)
{
	int k = 0;

	if (t->fabric != FABRIC_FAT_TREE)
		return hop(h, k, TL_SWITCH, -1, -1, 0, 0);
	int npl = t->ft_nodes_per_leaf, lpp = t->ft_leaves_per_pod;
	int la = na / npl, lb = nb / npl;
	k = hop(h, k, TL_SWITCH, -1, la, 0, 0);
	if (la != lb) {
		k = hop(h, k, TL_LEAF_UP, -1, la, 0, +1);
		if (t->ft_levels == 3 && la / lpp != lb / lpp) {
			k = hop(h, k, TL_POD_UP, -1, la / lpp, 0, +1);
			k = hop(h, k, TL_POD_UP, -1, lb / lpp, 0, -1);
		}
		k = hop(h, k, TL_LEAF_UP, -1, lb, 0, -1);
		k = hop(h, k, TL_SWITCH, -1, lb, 0, 0);
	}
	return k;
}

int topology_route(const struct topology *t, int a, int b, struct topo_hop *h)
{
	int na = topology_node_of(t, a), nb = topology_node_of(t, b);
	int la = topology_local_of(t, a), lb = topology_local_of(t, b);

	if (a == b)
		return 0;
	if (na == nb)
		return intra_route(t, na, la, lb, h);
	int k = topology_route_to_nic(t, na, la, h);
	k += topology_route_fabric(t, na, nb, h + k);
	struct topo_hop back[TOPO_MAX_HOPS];
	int nbk = topology_route_to_nic(t, nb, lb, back);
	for (int i = nbk - 1; i >= 0; i--) {
		h[k] = back[i];
		h[k++].dir = -back[i].dir;
	}
	return k;
}

double topology_link_bw(const struct topology *t, const struct topo_hop *h)
{
	switch (h->kind) {
	case TL_GPU:
		return t->intra == INTRA_NVLINK_MESH ? t->host_bw_Bps : t->intra_bw_Bps;
	case TL_NVLINK:
		return t->nvl_bw_Bps[h->index * t->gpus_per_node + h->index2];
	case TL_PCIE_UP:
		return t->pcie_uplink_bw_Bps;
	case TL_XSOCKET:
		return t->pcie_xsocket_bw_Bps;
	case TL_NIC:
		return t->nic_bw_Bps;
	case TL_SWITCH:
		return t->fabric_bw_Bps > 0 ? t->fabric_bw_Bps : TOPO_UNBOUNDED_BPS;
	case TL_LEAF_UP:
		return t->ft_leaf_up_bw_Bps;
	case TL_POD_UP:
		return t->ft_pod_up_bw_Bps;
	default:
		return 0;
	}
}

double topology_link_latency(const struct topology *t, const struct topo_hop *h)
{
	switch (h->kind) {
	case TL_GPU:
	case TL_PCIE_UP:
	case TL_XSOCKET:
		return t->intra_latency_s / 2;
	case TL_NVLINK:
		return t->intra_latency_s;
	case TL_NIC:
		return t->nic_latency_s;
	case TL_SWITCH:
	case TL_POD_UP:
		return t->fabric_latency_s;
	case TL_LEAF_UP:
		return t->fabric_latency_s / 2;
	default:
		return 0;
	}
}

unsigned long long topology_link_key(const struct topology *t, const struct topo_hop *h)
{
	(void)t;
	unsigned long long k = (unsigned long long)h->kind;
	k = (k << 2) | (unsigned long long)(h->dir + 1);
	k = (k << 20) | (unsigned long long)(h->node + 1);
	k = (k << 20) | (unsigned long long)(h->index + 1);
	k = (k << 16) | (unsigned long long)h->index2;
	return k;
}

double topology_path_latency(const struct topology *t, int a, int b)
{
	struct topo_hop h[TOPO_MAX_HOPS];
	int n = topology_route(t, a, b, h);
	double s = 0;
	for (int i = 0; i < n; i++)
		s += topology_link_latency(t, &h[i]);
	return s;
}

double topology_path_bw(const struct topology *t, int a, int b)
{
	struct topo_hop h[TOPO_MAX_HOPS];
	int n = topology_route(t, a, b, h);
	double bw = INFINITY;
	for (int i = 0; i < n; i++) {
		double x = topology_link_bw(t, &h[i]);
		if (x < bw)
			bw = x;
	}
	return n ? bw : INFINITY;
}

long topology_node_capacity(const struct topology *t)
{
	long max = TOPO_MAX_NODES;
	if (t->fabric == FABRIC_FAT_TREE) {
		long leaves = t->ft_levels == 2 ? t->ft_radix
						: (long)t->ft_radix * t->ft_leaves_per_pod;
		if (leaves * t->ft_nodes_per_leaf < max)
			max = leaves * t->ft_nodes_per_leaf;
	}
	if (t->fabric == FABRIC_RAIL && t->rail_radix > 0 && t->rail_radix < max)
		max = t->rail_radix;
	return max;
}

int topology_check_nodes(const struct topology *t, int nodes, struct diag *d)
{
	if (nodes > TOPO_MAX_NODES)
		return diag_err(d, t->path, "/fabric",
				"ddlsim simulates at most %d nodes, got %d", TOPO_MAX_NODES, nodes);
	long max = topology_node_capacity(t);
	if (nodes <= max)
		return 0;
	if (t->fabric == FABRIC_FAT_TREE)
		return diag_err(d, t->path, "/fabric/radix",
				"a %d-level fat tree of radix %d holds at most %ld nodes "
				"(%d per leaf), got %d", t->ft_levels, t->ft_radix, max,
				t->ft_nodes_per_leaf, nodes);
	return diag_err(d, t->path, "/fabric/radix",
			"a rail switch of radix %d holds at most %d nodes, got %d",
			t->rail_radix, t->rail_radix, nodes);
}

enum { C_NVSWITCH, C_NVLINK, C_PCIE, C_HOST, C_NET, C_N };

static void classify(const struct topology *t, int a, int b, bool *seen)
{
	struct topo_hop h[TOPO_MAX_HOPS];
	int n = topology_route(t, a, b, h);
	for (int i = 0; i < n; i++) {
		switch (h[i].kind) {
		case TL_GPU:
			seen[t->intra == INTRA_NVSWITCH ? C_NVSWITCH
			     : t->intra == INTRA_PCIE  ? C_PCIE
						       : C_HOST] = true;
			break;
		case TL_NVLINK:
			seen[C_NVLINK] = true;
			break;
		case TL_PCIE_UP:
		case TL_XSOCKET:
			seen[C_PCIE] = true;
			break;
		default:
			seen[C_NET] = true;
			break;
		}
	}
}

const char *topology_group_links(const struct topology *t, const int *ranks, int n,
				 char *out, size_t size)
{
	static const char *const names[C_N] = { "nvswitch", "nvlink", "pcie", "host", "nic/fabric" };
	bool seen[C_N] = { false };

	if (n <= 64) {
		for (int i = 0; i < n; i++)
			for (int j = 0; j < n; j++)
				if (i != j)
					classify(t, ranks[i], ranks[j], seen);
	} else {
		for (int i = 0; i < n; i++) {
			classify(t, ranks[i], ranks[(i + 1) % n], seen);
			classify(t, ranks[0], ranks[i], seen);
		}
	}
	size_t w = 0;
	if (size)
		out[0] = 0;
	for (int c = 0; c < C_N; c++)
		if (seen[c] && w < size)
			w += (size_t)snprintf(out + w, size - w, "%s%s", w ? "," : "", names[c]);
	return out;
}

bool topology_is_symmetric(const struct topology *t, int nodes)
{
	switch (t->fabric) {
	case FABRIC_NONBLOCKING:
		return true;
	case FABRIC_FAT_TREE: {
		int npl = t->ft_nodes_per_leaf, lpp = t->ft_leaves_per_pod;
		if (nodes <= 1 || npl <= 0)
			return true;
		if (nodes % npl)
			return false;
		int leaves = nodes / npl;
		return t->ft_levels == 2 || lpp <= 0 || leaves <= lpp || leaves % lpp == 0;
	}
	case FABRIC_RAIL:
		return t->rail_radix <= 0 || nodes <= t->rail_radix || nodes % t->rail_radix == 0;
	}
	return false;
}
