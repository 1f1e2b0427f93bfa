/* platform_links: platform link names without describing the platform
 * (the names platform.c gives; see platform.h): whether a platform holds
 * a link of that name, and what kind of link it is, for the reports'
 * per-link traffic. */
#include "platform.h"

#include <stdbool.h>
#include <string.h>

#include "platform-private.h"

/* A canonical decimal (no sign, no leading zero, at most 9 digits) at s
 * into *v; returns the end, or NULL. */
static const char *scan_index(const char *s, int *v)
{
	int n = 0;
	*v = 0;
	if (s[0] == '0' && s[1] >= '0' && s[1] <= '9')
		return NULL;
	while (n < 9 && s[n] >= '0' && s[n] <= '9')
		*v = *v * 10 + (s[n++] - '0');
	/* a tenth digit refuses the name (and never overflows *v) */
	return n > 0 && !(s[n] >= '0' && s[n] <= '9') ? s + n : NULL;
}

/* Whether name is prefix<a>[sep<b>[sep2<c>]] exactly (sep NULL: one index,
 * sep2 NULL: two), with the indices into a, b, c. */
static bool scan_name(const char *name, const char *prefix, const char *sep, const char *sep2,
		      int *a, int *b, int *c)
{
	size_t k = strlen(prefix);
	if (strncmp(name, prefix, k) || !(name = scan_index(name + k, a)))
		return false;
	if (sep) {
		k = strlen(sep);
		if (strncmp(name, sep, k) || !(name = scan_index(name + k, b)))
			return false;
	}
	if (sep2) {
		k = strlen(sep2);
		if (strncmp(name, sep2, k) || !(name = scan_index(name + k, c)))
			return false;
	}
	return *name == 0;
}

/* Whether a route of node n (between two of its GPUs, or, with net, from
 * one to its NIC) crosses the link of h, as write_node() collects them. */
static bool node_crosses(const struct topology *t, int n, bool net, const struct topo_hop *h)
{
	int G = t->gpus_per_node;
	struct topo_hop r[TOPO_MAX_HOPS];
	for (int x = 0; x < G; x++) {
		int k = 0;
		for (int y = x + 1; y <= G; y++) {
			if (y < G)
				k = topology_route(t, n * G + x, n * G + y, r);
			else if (net)
				k = topology_route_to_nic(t, n, x, r);
			else
				k = 0;
			for (int i = 0; i < k; i++)
				if (r[i].kind == h->kind && r[i].node == h->node && r[i].index == h->index &&
				    r[i].index2 == h->index2)
					return true;
		}
	}
	return false;
}

/* The hop a node link's name stands for ("gl", "nv", "pu", "xs", "nic"; G GPUs a node);
 * false when the name is not a node link's. */
static bool node_hop(const char *name, int G, struct topo_hop *h)
{
	int a, b, c;

	if (scan_name(name, "gl", NULL, NULL, &a, &b, &c))
		*h = (struct topo_hop){ TL_GPU, a / G, a % G, 0, 0 };
	else if (scan_name(name, "nv", "_", "_", &a, &b, &c))
		*h = (struct topo_hop){ TL_NVLINK, a, b, c, 0 };
	else if (scan_name(name, "pu", "_", NULL, &a, &b, &c))
		*h = (struct topo_hop){ TL_PCIE_UP, a, b, 0, 0 };
	else if (scan_name(name, "xs", NULL, NULL, &a, &b, &c))
		*h = (struct topo_hop){ TL_XSOCKET, a, 0, 0, 0 };
	else if (scan_name(name, "nic", "_", NULL, &a, &b, &c))
		*h = (struct topo_hop){ TL_NIC, a, b, 0, 0 };
	else
		return false;
	return true;
}

/* Whether a non-blocking or rail fabric of nodes holds the link name (write_nonblocking). */
static bool flat_fabric_has(int nodes, const char *name)
{
	int a, b, c;
	int groups = (nodes + GROUP_NODES - 1) / GROUP_NODES;

	if (scan_name(name, "fabric_", NULL, NULL, &a, &b, &c))
		return a < (nodes <= GROUP_NODES ? nodes : groups);
	if (nodes > GROUP_NODES && (scan_name(name, "grp", "_f_", NULL, &a, &b, &c) ||
				    scan_name(name, "grp", "_nop_", NULL, &a, &b, &c)))
		return b < nodes && b / GROUP_NODES == a;
	return false;
}

bool platform_has_link(const struct topology *t, int nodes, const struct platform_extra *x,
		       const char *name)
{
	int a, b, c;
	bool net = nodes > 1 && t->nics >= 1;
	int nn = net ? nodes : 1;      /* nodes written: without a fabric, node 0 alone */
	struct topo_hop h;

	/* a node's links: the hop the name stands for, on one of its routes */
	if (node_hop(name, t->gpus_per_node, &h))
		return h.node < nn && node_crosses(t, h.node, net, &h);

	/* the fabric's links (write_nonblocking, write_fat_tree) */
	if (!net)
		return false;
	int npl = t->ft_nodes_per_leaf, lpp = t->ft_leaves_per_pod;
	int leaves = t->fabric == FABRIC_FAT_TREE ? (nodes + npl - 1) / npl : 0;
	bool pods = t->fabric == FABRIC_FAT_TREE && t->ft_levels == 3 && leaves > lpp;
	if (scan_name(name, "psnic", NULL, NULL, &a, &b, &c))
		return x && x->ps && a < x->ps->servers && !pods;
	if (t->fabric != FABRIC_FAT_TREE)
		return flat_fabric_has(nodes, name);
	if (scan_name(name, "sw", NULL, NULL, &a, &b, &c) || scan_name(name, "lu", NULL, NULL, &a, &b, &c))
		return a < leaves;
	if (pods && scan_name(name, "podup", NULL, NULL, &a, &b, &c))
		return a < (leaves + lpp - 1) / lpp;
	return false;
}


static bool has_prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

const char *platform_link_class(const struct topology *t, const char *name)
{
	static const struct { const char *prefix, *cls; } rule[] = {
		{ "nv", "nvlink" }, { "pu", "pcie_uplink" }, { "xs", "cross_socket" },
		{ "nic", "nic" }, { "psnic", "nic" }, { "fabric", "switch" }, { "grp", "switch" },
		{ "sw", "leaf_switch" }, { "lu", "leaf_uplink" }, { "podup", "spine_uplink" },
	};
	if (has_prefix(name, "gl"))
		return t->intra == INTRA_NVSWITCH ? "nvswitch" : "pcie";
	for (size_t i = 0; i < sizeof(rule) / sizeof(rule[0]); i++)
		if (has_prefix(name, rule[i].prefix))
			return rule[i].cls;
	return "other";
}
