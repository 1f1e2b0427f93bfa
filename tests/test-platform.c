/* test-platform: platform_has_link() against the platform itself. For
 * shipped and inline topologies and several node counts (one node, one
 * leaf, across leaves and pods, more than 64 nodes in groups, parameter
 * servers, a node using some of its GPUs), every link platform_emit_ex()
 * gives its sink is accepted, and every name the rule could form around
 * it (each kind of link, indices up to past their range) is accepted
 * exactly when the platform has it. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diag.h"
#include "platform.h"
#include "topology.h"
#include "testutil.h"

/* ---- the names a platform emits --------------------------------------- */

struct names {
	char **v;
	int n, cap;
};

static void skip_id(void *ctx, const char *id) { (void)ctx, (void)id; }
static void skip_end(void *ctx) { (void)ctx; }
static void skip_route(void *ctx, const char *src, const char *dst, const char *gws,
		       const char *gwd, const struct platform_hop *h, int n)
{
	(void)ctx, (void)src, (void)dst, (void)gws, (void)gwd, (void)h, (void)n;
}

static void add_link(void *ctx, const char *id, double bw, double lat, bool fatpipe)
{
	struct names *s = ctx;
	(void)bw, (void)lat, (void)fatpipe;
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 256;
		s->v = realloc(s->v, (size_t)s->cap * sizeof(*s->v));
		cr_assert(s->v);
	}
	s->v[s->n++] = strdup(id);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool emitted(const struct names *s, const char *name)
{
	return bsearch(&name, s->v, (size_t)s->n, sizeof(*s->v), cmp_str) != NULL;
}

/* ---- the check ---------------------------------------------------------- */

struct ctx {
	const struct topology *t;
	int nodes;
	const struct platform_extra *x;
	const struct names *s;
	int tried, accepted;
};

/* name is accepted exactly when the platform has it. */
static void expect_name(struct ctx *c, const char *name)
{
	bool want = emitted(c->s, name), got = platform_has_link(c->t, c->nodes, c->x, name);
	cr_expect_eq(got, want, "%s, %d nodes: '%s' %s", c->t->name, c->nodes, name,
		     want ? "is in the platform but refused" : "is not in the platform but accepted");
	c->tried++;
	c->accepted += got;
}

/* Indices 0..n-1 plus the two past the end. */
#define UPTO(i, n) for (int i = 0; i < (n) + 2; i++)

static void expect_platform(const char *what, const struct topology *t, int nodes, int servers)
{
	struct names s = { NULL, 0, 0 };
	struct platform_ps ps = { servers, 1e9, 1e-6 };
	struct platform_extra x = { servers > 0 ? &ps : NULL, NULL, 0 };
	const struct platform_sink sink = { &s, skip_id, skip_end, skip_id, skip_id, add_link, skip_route };
	cr_assert(!servers || platform_ps_supported(t, nodes), "%s: no servers on %d nodes", what, nodes);
	platform_emit_ex(t, nodes, NULL, &x, &sink);
	qsort(s.v, (size_t)s.n, sizeof(*s.v), cmp_str);
	int u = 0;                      /* one of each (a link is declared once anyway) */
	for (int i = 0; i < s.n; i++)
		if (u == 0 || strcmp(s.v[u - 1], s.v[i]))
			s.v[u++] = s.v[i];
		else
			free(s.v[i]);
	s.n = u;
	cr_assert_gt(s.n, 0, "%s: no links", what);

	struct ctx c = { t, nodes, &x, &s, 0, 0 };
	char b[96];
	/* every emitted name */
	for (int i = 0; i < s.n; i++)
		cr_expect(platform_has_link(t, nodes, &x, s.v[i]), "%s, %d nodes: emitted link '%s' refused",
			  what, nodes, s.v[i]);

	/* every name of every kind, indices past their range */
	int G = t->gpus_per_node, groups = (nodes + 63) / 64;
	int leaves = t->ft_nodes_per_leaf > 0 ? (nodes + t->ft_nodes_per_leaf - 1) / t->ft_nodes_per_leaf : 1;
	int pods = t->ft_leaves_per_pod > 0 ? (leaves + t->ft_leaves_per_pod - 1) / t->ft_leaves_per_pod : 1;
	int nv = G <= 16 ? G : 6;       /* NVLink ends: all of a small node, else the first */
	int sw = t->pcie_switches > 0 ? t->pcie_switches : 1;
	UPTO(n, nodes) {
		UPTO(a, nv) UPTO(bb, nv) {
			snprintf(b, sizeof(b), "nv%d_%d_%d", n, a, bb);
			expect_name(&c, b);
		}
		UPTO(a, sw) {
			snprintf(b, sizeof(b), "pu%d_%d", n, a);
			expect_name(&c, b);
		}
		UPTO(a, t->nics) {
			snprintf(b, sizeof(b), "nic%d_%d", n, a);
			expect_name(&c, b);
		}
		snprintf(b, sizeof(b), "xs%d", n);
		expect_name(&c, b);
		snprintf(b, sizeof(b), "fabric_%d", n);
		expect_name(&c, b);
		UPTO(k, groups) {
			snprintf(b, sizeof(b), "grp%d_f_%d", k, n);
			expect_name(&c, b);
			snprintf(b, sizeof(b), "grp%d_nop_%d", k, n);
			expect_name(&c, b);
		}
	}
	UPTO(r, nodes * G) {
		snprintf(b, sizeof(b), "gl%d", r);
		expect_name(&c, b);
	}
	UPTO(l, leaves) {
		snprintf(b, sizeof(b), "sw%d", l);
		expect_name(&c, b);
		snprintf(b, sizeof(b), "lu%d", l);
		expect_name(&c, b);
	}
	UPTO(p, pods) {
		snprintf(b, sizeof(b), "podup%d", p);
		expect_name(&c, b);
	}
	UPTO(k, servers) {
		snprintf(b, sizeof(b), "psnic%d", k);
		expect_name(&c, b);
	}
	/* near misses: no such kind, the switch that is never a link, not the
	 * canonical spelling of an index */
	static const char *const bad[] = { "", "fabric", "gl", "gl-1", "gl01", "gl0x", " gl0", "GL0",
					   "nic0", "nic0_", "nic0_0_0", "nv0_0", "lu", "lu+0", "podup",
					   "psnic", "grp0_f", "grp0_nop", "leaf0", "n0_gw", "sw0_0",
					   "gl99999999999", "fabric_1e1" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_name(&c, bad[i]);
	/* what was tried covers the platform: every emitted name was formed */
	cr_expect_eq(c.accepted, s.n, "%s, %d nodes: %d names accepted of %d tried, %d links emitted",
		     what, nodes, c.accepted, c.tried, s.n);

	for (int i = 0; i < s.n; i++)
		free(s.v[i]);
	free(s.v);
}

static struct topology *load(const char *path)
{
	struct diag d;
	diag_init(&d, stderr);
	struct topology *t = topology_load(path, &d);
	cr_assert(t, "%s", diag_text(&d));
	diag_finish(&d);
	return t;
}

static void expect_shipped(const char *file, int nodes, int servers)
{
	struct topology *t = load(src_path(file));
	expect_platform(file, t, nodes, servers);
	topology_destroy(t);
}

#define GPU_JSON \
	"\"gpu\":{\"name\":\"g\",\"peak_tflops\":{\"fp32\":10},\"hbm_GB\":16,\"hbm_bw_GBps\":900,\"sm_count\":80}"
#define NODE_1GPU \
	"{\"gpus\":1,\"intra\":{\"kind\":\"nvswitch\",\"bw_GBps\":100,\"latency_us\":2}," \
	"\"nics\":{\"count\":1,\"bw_Gbps\":100,\"latency_us\":1}}"

/* A topology of 1-GPU nodes on the fabric given as JSON text. */
static void expect_inline(const char *fabric, int nodes, int servers)
{
	char text[2048], *dir = tmp_dir();
	snprintf(text, sizeof(text),
		 "{\"schema\":\"ddlsim.topology\",\"schema_version\":\"1.1\",\"name\":\"t\","
		 "\"source\":\"test\"," GPU_JSON ",\"node\":" NODE_1GPU ",\"fabric\":%s}", fabric);
	char *path = write_file(dir, "t.json", text);
	struct topology *t = load(path);
	expect_platform(fabric, t, nodes, servers);
	topology_destroy(t);
	free(path);
	free(dir);
}

Test(platform, nvswitch_nodes_name_their_gpu_links_nics_and_switch_ports)
{
	expect_shipped("topologies/dgx-h100.json", 1, 0);
	expect_shipped("topologies/dgx-h100.json", 4, 2);
	expect_shipped("topologies/jeanzay-a100-opa.json", 3, 0);
	expect_shipped("topologies/dgx-h100-rail.json", 4, 1);
}

Test(platform, pcie_trees_name_their_uplinks_and_cross_socket_link)
{
	expect_shipped("topologies/l40s-pcie-8gpu.json", 1, 0);
	expect_shipped("topologies/l40s-pcie-8gpu.json", 2, 0);
	expect_shipped("topologies/v100-1gpu-edr.json", 3, 1);
}

Test(platform, nvlink_meshes_name_the_nvlinks_routes_cross)
{
	expect_shipped("topologies/dgx1-v100.json", 1, 0);
	expect_shipped("topologies/dgx1-v100.json", 2, 0);
	/* 6 of 8 GPUs used: 2-hop routes through an unused GPU take the host */
	struct topology *t = load(src_path("topologies/dgx1-v100.json"));
	struct diag d;
	diag_init(&d, stderr);
	cr_assert_eq(topology_use_gpus(t, 6, "t", "/gpus_per_node_used", &d), 0);
	diag_finish(&d);
	expect_platform("dgx1-v100, 6 GPUs used", t, 2, 0);
	topology_destroy(t);
}

Test(platform, a_rack_of_72_gpus_and_a_partly_used_one)
{
	expect_shipped("topologies/gb200-nvl72.json", 1, 0);
	expect_shipped("topologies/gb200-nvl72.json", 2, 0);
	struct topology *t = load(src_path("topologies/gb200-nvl72.json"));
	struct diag d;
	diag_init(&d, stderr);
	cr_assert_eq(topology_use_gpus(t, 64, "t", "/gpus_per_node_used", &d), 0);
	diag_finish(&d);
	expect_platform("gb200-nvl72, 64 GPUs used", t, 2, 0);
	topology_destroy(t);
}

Test(platform, fat_trees_name_leaves_uplinks_and_pods)
{
	expect_shipped("topologies/dgx-h100-fattree2-2to1.json", 2, 0);
	expect_shipped("topologies/dgx-h100-fattree2-2to1.json", 12, 3);
	expect_shipped("topologies/dgx-h100-fattree3.json", 8, 2);
	/* 2 nodes per leaf, 2 leaves per pod: one pod, then four */
	expect_inline("{\"kind\":\"fat_tree\",\"levels\":3,\"radix\":4,\"latency_us\":0.5}", 4, 2);
	expect_inline("{\"kind\":\"fat_tree\",\"levels\":3,\"radix\":4,\"latency_us\":0.5}", 15, 0);
}

Test(platform, more_than_64_nodes_name_their_groups)
{
	expect_inline("{\"kind\":\"nonblocking\",\"latency_us\":0.5}", 64, 1);
	expect_inline("{\"kind\":\"nonblocking\",\"latency_us\":0.5}", 130, 2);
}
