/* platform: turns a topology and a node count into a SimGrid platform.
 *
 * The platform is written as SimGrid XML (version 4.1): one zone per node,
 * holding its GPUs as hosts ("g<rank>", rank = node * gpus_per_node + local),
 * the node's links (GPU links into an NVSwitch, PCIe switch or host,
 * NVLinks of a mesh, PCIe switch uplinks, the cross-socket link, NICs) and
 * a gateway router; above the nodes, zones for groups of nodes, fat-tree
 * leaves and pods join them through the fabric. Every route is explicit
 * (Full routing) and is the link list of topology_route(), so a transfer's
 * path, and hence its alpha-beta cost, is exactly what the topology says.
 * Routes grow about linearly with nodes (see platform.c). This module does
 * not include SimGrid: it describes the platform to a sink, which either
 * writes SimGrid XML (platform_write) or, in the engine, builds it with
 * SimGrid's platform API (engine_platform.cpp): no link is ever looked up
 * by name in SimGrid, so building is linear in the platform's size. */
#ifndef DDLSIM_PLATFORM_H
#define DDLSIM_PLATFORM_H

#include <stdbool.h>
#include <stdio.h>

#include "topology.h"

/* A link of a route: its id and, for a split-duplex link, the direction
 * (+1 UP, -1 DOWN; 0 for a FATPIPE link). */
struct platform_hop {
	char id[64];
	int dir;
};

/* Receiver of a platform description. Calls come in SimGrid's order: in a
 * zone, child zones (zone_begin ... zone_end), hosts and routers, links,
 * then routes; every zone is Full-routed. route() joins two hosts or
 * routers of the current zone (gw_src = gw_dst = NULL) or two child zones
 * through their gateways; routes are symmetrical. Names are borrowed for
 * the call. */
struct platform_sink {
	void *ctx;
	void (*zone_begin)(void *ctx, const char *id);
	void (*zone_end)(void *ctx);
	void (*host)(void *ctx, const char *id);
	void (*router)(void *ctx, const char *id);
	void (*link)(void *ctx, const char *id, double bw_Bps, double latency_s, bool fatpipe);
	void (*route)(void *ctx, const char *src, const char *dst, const char *gw_src,
		      const char *gw_dst, const struct platform_hop *h, int n);
};

/* Describe the platform of nodes nodes of t to sink (the caller has
 * checked topology_check_nodes()); the root zone is "world". used[r]
 * (nodes x gpus_per_node, NULL: all) selects the GPUs to describe: the
 * others, their links, and nodes without a used GPU are left out, which
 * changes no transfer between used GPUs (every link their routes cross is
 * kept). Returns 0. */
int platform_emit(const struct topology *t, int nodes, const unsigned char *used,
		  const struct platform_sink *sink);

/* Parameter servers on the fabric (plan dp_sync "ps", attach "fabric"):
 * host "ps<k>" (k < servers) in its own zone "psz<k>", behind one
 * split-duplex NIC link "psnic<k>" of nic_bw_Bps per direction and
 * nic_latency_s, routed to every node through the fabric core: on a
 * non-blocking or rail fabric the node's switch port ("fabric_<node>", or
 * the group's "fabric_<g>" above 64 nodes), on a two-level fat tree the
 * leaf's aggregated uplinks ("lu<leaf>", UP towards the server: CPU
 * servers on the spine). A push into server k crosses psnic<k> DOWN, a
 * pull UP, so fan-in at a server is shared max-min on its NIC. */
struct platform_ps {
	int servers;
	double nic_bw_Bps, nic_latency_s;
};

/* Whether parameter servers can attach to nodes nodes of t: false for
 * one node or no NICs (no fabric), and for a fat tree with a pod level. */
bool platform_ps_supported(const struct topology *t, int nodes);

/* A link whose bandwidth and latency are scaled (a degraded NIC, leaf
 * uplink, spine...), named as above (link_name in platform.c). */
struct platform_degrade {
	const char *link;
	double bw_factor, latency_factor;
};

/* What a job adds to the topology's platform. */
struct platform_extra {
	const struct platform_ps *ps;          /* NULL or 0 servers: none;
						  platform_ps_supported() must hold */
	const struct platform_degrade *deg;    /* [ndeg] */
	int ndeg;
};

/* As platform_emit(), with x's servers and degraded links (x NULL:
 * none). A degraded link that the platform does not have changes nothing
 * (platform_has_link() tells). */
int platform_emit_ex(const struct topology *t, int nodes, const unsigned char *used,
		     const struct platform_extra *x, const struct platform_sink *sink);

/* Whether the platform of nodes nodes of t with x's parameter servers
 * (x NULL: none; every GPU used) has a link named name: the name checked
 * against the naming rule above (link_name in platform.c, the fabric's
 * and the servers' names) and the index ranges of that platform, without
 * describing it: the names are those platform_emit_ex() gives its sink.
 * A node's own links are those its routes cross (gpus_per_node^2 / 2
 * routes at most, no allocation), the others' by their index ranges. */
bool platform_has_link(const struct topology *t, int nodes, const struct platform_extra *x,
		       const char *name);

/* Whether hop h of a topology route (topology_route()) is the platform
 * link named name. */
bool platform_hop_is(const struct topology *t, const struct topo_hop *h, const char *name);

/* The class of a platform link by its name (link_name in platform.c;
 * SimGrid's "_UP" / "_DOWN" of a split-duplex link's directions
 * allowed): "nvswitch" or "pcie" (a GPU's link, by t's node), "nvlink",
 * "pcie_uplink", "cross_socket", "nic" (a node's or a parameter server's),
 * "switch" (a non-blocking or rail switch port), "leaf_switch",
 * "leaf_uplink", "spine_uplink" (a pod's); "other" for a name outside the
 * rule. Static string. */
const char *platform_link_class(const struct topology *t, const char *name);

/* Mark in node_mark[nodes] the nodes whose GPUs' traffic can cross
 * link (a name platform_has_link() accepts): the node of a GPU, NVLink,
 * PCIe or NIC link or of a switch port, the nodes under a leaf or a pod
 * for its switch and uplinks, every node for a link the whole fabric
 * shares. Folding simulates the replicas on those nodes (simulate.c). */
void platform_link_nodes(const struct topology *t, int nodes, const char *link,
			 unsigned char *node_mark);

/* Write the platform of nodes nodes of t to f (the caller has checked
 * topology_check_nodes()). Returns 0 or -1 (I/O). */
int platform_write(const struct topology *t, int nodes, FILE *f);

#endif
