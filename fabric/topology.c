/* topology: topology file loader (see topology.h for the key table).
 *
 * The loader reads every key, reports every problem with its JSON path and
 * derives what the platform and the planners need: NVLink two-hop routes
 * of a mesh (the intermediate GPU with the widest bottleneck), the PCIe
 * tree's shape, and a fat tree's leaf and pod sizes and uplink bandwidths.
 * Keys new in 1.1 (1.2) are refused in a file that says 1.0 (1.1). */
#include "topology.h"
#include "xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jload.h"
#include "topology-private.h"

static const char *const intra_names[] = { "nvswitch", "pcie", "nvlink_mesh", NULL };
static const char *const fabric_names[] = { "nonblocking", "fat_tree", "rail", NULL };

const char *intra_kind_name(enum intra_kind k)
{
	return intra_names[k];
}

const char *fabric_kind_name(enum fabric_kind k)
{
	return fabric_names[k];
}

/* A 1.1 key in a 1.0 file. */
static void need_11(struct topology *t, struct jobj *jo, const char *key)
{
	if (t->schema_minor < 1)
		jobj_err(jo, key, "needs schema_version \"1.1\" (the file says \"1.0\")");
}

/* One item of an NVLink mesh's "links", [gpu, gpu, lanes] at path p, added
 * both ways to t->nvl_bw_Bps at lane_Bps a lane. */
static void load_mesh_link(struct jobj *intra, struct topology *t, json_t *l, const char *p,
			   double lane_Bps)
{
	int G = t->gpus_per_node;
	long v[3];
	bool ok = json_is_array(l) && json_array_size(l) == 3;

	for (int k = 0; ok && k < 3; k++) {
		ok = json_is_integer(json_array_get(l, (size_t)k));
		v[k] = ok ? (long)json_integer_value(json_array_get(l, (size_t)k)) : 0;
	}
	if (!ok) {
		diag_err(intra->d, intra->file, p, "expected [gpu, gpu, lanes], got %s",
			 json_is_array(l) ? "another array" : jload_type_name(l));
		return;
	}
	if (v[0] < 0 || v[0] >= G || v[1] < 0 || v[1] >= G) {
		diag_err(intra->d, intra->file, p,
			 "link to a missing GPU: a node has GPUs 0..%d, got [%ld, %ld]",
			 G - 1, v[0], v[1]);
		return;
	}
	if (v[0] == v[1]) {
		diag_err(intra->d, intra->file, p, "link joins GPU %ld to itself", v[0]);
		return;
	}
	if (v[2] < 1) {
		diag_err(intra->d, intra->file, p, "lanes must be >= 1, got %ld", v[2]);
		return;
	}
	t->nvl_bw_Bps[v[0] * G + v[1]] += (double)v[2] * lane_Bps;
	t->nvl_bw_Bps[v[1] * G + v[0]] += (double)v[2] * lane_Bps;
}

/* Two-hop routes of a mesh: for each pair without a direct link, the
 * intermediate GPU with the widest bottleneck (-2: none; -1: direct). */
static void mesh_routes(struct topology *t)
{
	int G = t->gpus_per_node;

	for (int a = 0; a < G; a++)
		for (int b = 0; b < G; b++) {
			if (a == b || t->nvl_bw_Bps[a * G + b] > 0) {
				t->nvl_via[a * G + b] = -1;
				continue;
			}
			int best = -2;
			double bw = 0;
			for (int c = 0; c < G; c++) {
				double w1 = t->nvl_bw_Bps[a * G + c], w2 = t->nvl_bw_Bps[c * G + b];
				double w = w1 < w2 ? w1 : w2;
				if (w > bw) {
					bw = w;
					best = c;
				}
			}
			t->nvl_via[a * G + b] = best;
		}
}

static void load_mesh(struct jobj *intra, struct topology *t)
{
	int G = t->gpus_per_node;
	double lane = 0, x;
	json_t *arr;
	char ap[300];

	t->nvl_bw_Bps = xcalloc((size_t)G * G, sizeof(*t->nvl_bw_Bps));
	t->nvl_via = xcalloc((size_t)G * G, sizeof(*t->nvl_via));
	t->host_bw_Bps = 16e9;
	if (jobj_num(intra, "lane_bw_GBps", &lane, JREQ | JPOS) == 1)
		lane *= 1e9;
	if (jobj_num(intra, "host_bw_GBps", &x, JPOS) == 1)
		t->host_bw_Bps = x * 1e9;
	if (jobj_array(intra, "links", &arr, ap, sizeof(ap), JREQ) != 1)
		return;
	for (size_t i = 0; i < json_array_size(arr); i++) {
		char p[400];
		snprintf(p, sizeof(p), "%s/%zu", ap, i);
		load_mesh_link(intra, t, json_array_get(arr, i), p, lane);
	}
	mesh_routes(t);
}

static void load_pcie_tree(struct jobj *intra, struct topology *t)
{
	struct jobj pc;
	long v;
	double x;
	int G = t->gpus_per_node;

	if (jobj_child(intra, "pcie", &pc, 0) != 1)
		return;
	need_11(t, intra, "pcie");
	v = 1;
	jobj_int(&pc, "sockets", &v, 1, 0);
	if (v > 2) {
		jobj_err(&pc, "sockets", "must be 1 or 2, got %ld", v);
		v = 1;
	}
	t->pcie_sockets = (int)v;
	v = 1;
	if (jobj_int(&pc, "switches", &v, 1, JREQ) == 1)
		t->pcie_switches = (int)v;
	v = 1;
	if (jobj_int(&pc, "gpus_per_switch", &v, 1, JREQ) == 1)
		t->pcie_gpus_per_switch = (int)v;
	v = 0;
	jobj_int(&pc, "nics_per_switch", &v, 0, 0);
	t->pcie_nics_per_switch = (int)v;
	if (jobj_num(&pc, "switch_uplink_GBps", &x, JREQ | JPOS) == 1)
		t->pcie_uplink_bw_Bps = x * 1e9;
	if (t->pcie_sockets > 1) {
		if (jobj_num(&pc, "cross_socket_GBps", &x, JREQ | JPOS) == 1)
			t->pcie_xsocket_bw_Bps = x * 1e9;
	} else if (jobj_num(&pc, "cross_socket_GBps", &x, JPOS) == 1) {
		t->pcie_xsocket_bw_Bps = x * 1e9;
	}
	if (t->pcie_switches > 0 && t->pcie_gpus_per_switch > 0 &&
	    (long)t->pcie_switches * t->pcie_gpus_per_switch != G)
		jobj_err(&pc, "gpus_per_switch",
			 "switches x gpus_per_switch must equal node.gpus (%d), got %d x %d",
			 G, t->pcie_switches, t->pcie_gpus_per_switch);
	if (t->pcie_switches % t->pcie_sockets)
		jobj_err(&pc, "switches", "must be a multiple of sockets (%d), got %d",
			 t->pcie_sockets, t->pcie_switches);
	jobj_end(&pc);
}

static void load_nics(struct jobj *node, struct topology *t)
{
	struct jobj jo;
	double x;
	long n = 0;
	json_t *arr;
	char ap[300];

	if (jobj_child(node, "nics", &jo, JREQ) != 1)
		return;
	jobj_int(&jo, "count", &n, 0, JREQ);
	if (n > TOPO_MAX_NICS) {
		jobj_err(&jo, "count", "must be <= %d, got %ld", TOPO_MAX_NICS, n);
		n = 0;
	}
	t->nics = (int)n;
	if (jobj_num(&jo, "bw_Gbps", &x, JREQ | JPOS) == 1)
		t->nic_bw_Bps = x * 1e9 / 8;
	if (jobj_num(&jo, "latency_us", &x, JREQ | JNONNEG) == 1)
		t->nic_latency_s = x * 1e-6;
	for (int g = 0; g < t->gpus_per_node; g++)
		t->gpu_nic[g] = t->nics ? (int)((long)g * t->nics / t->gpus_per_node) : -1;
	if (jobj_array(&jo, "gpus", &arr, ap, sizeof(ap), 0) == 1) {
		bool used[TOPO_MAX_GPUS_PER_NODE] = { false };
		if ((long)json_array_size(arr) != n)
			diag_err(jo.d, jo.file, ap, "expected one list per NIC (%ld), got %zu",
				 n, json_array_size(arr));
		for (size_t i = 0; i < json_array_size(arr) && (long)i < n; i++) {
			json_t *l = json_array_get(arr, i), *v;
			size_t k;
			if (!json_is_array(l)) {
				diag_err(jo.d, jo.file, ap, "/%zu: expected an array of GPU indices, got %s",
					 i, jload_type_name(l));
				continue;
			}
			json_array_foreach(l, k, v) {
				char p[400];
				snprintf(p, sizeof(p), "%s/%zu/%zu", ap, i, k);
				if (!json_is_integer(v)) {
					diag_err(jo.d, jo.file, p, "expected a GPU index, got %s",
						 jload_type_name(v));
					continue;
				}
				long gi = (long)json_integer_value(v);
				if (gi < 0 || gi >= t->gpus_per_node) {
					diag_err(jo.d, jo.file, p,
						 "NIC %zu is assigned to GPU %ld, but a node has GPUs 0..%d",
						 i, gi, t->gpus_per_node - 1);
					continue;
				}
				t->gpu_nic[gi] = (int)i;
				used[gi] = true;
			}
		}
		for (int g = 0; g < t->gpus_per_node; g++)
			if (!used[g] && n > 0)
				diag_err(jo.d, jo.file, ap, "GPU %d is served by no NIC", g);
	}
	jobj_end(&jo);
}

static void load_fabric(struct jobj *fab, struct topology *t)
{
	long v;
	double x;

	t->rail_pxn = true;
	if (t->fabric == FABRIC_NONBLOCKING)
		return;
	need_11(t, fab, "kind");
	if (t->fabric == FABRIC_RAIL) {
		v = 0;
		jobj_int(fab, "radix", &v, 0, 0);
		t->rail_radix = (int)v;
		jobj_bool(fab, "pxn", &t->rail_pxn, 0);
		return;
	}
	v = 2;
	if (jobj_int(fab, "levels", &v, 2, JREQ) == 1 && v > 3) {
		jobj_err(fab, "levels", "must be 2 or 3, got %ld", v);
		v = 2;
	}
	t->ft_levels = (int)v;
	v = 2;
	jobj_int(fab, "radix", &v, 2, JREQ);
	t->ft_radix = (int)v;
	x = 1;
	if (jobj_num(fab, "oversubscription", &x, 0) == 1 && !(x >= 1)) {
		jobj_err(fab, "oversubscription", "must be >= 1 (downlink : uplink bandwidth), got %g", x);
		x = 1;
	}
	t->ft_oversub = x;
	long down = (long)floor(t->ft_radix * x / (x + 1) + 1e-9);
	int per = t->nics > 0 ? t->nics : 1;
	if (down < per) {
		jobj_err(fab, "radix", "a leaf has %ld down ports, fewer than the %d NICs of a node", down, per);
		down = per;
	}
	t->ft_nodes_per_leaf = (int)(down / per);
	t->ft_leaves_per_pod = t->ft_radix / 2 > 0 ? t->ft_radix / 2 : 1;
	t->ft_leaf_up_bw_Bps = (double)t->ft_nodes_per_leaf * per * t->nic_bw_Bps / x;
	t->ft_pod_up_bw_Bps = t->ft_leaf_up_bw_Bps * t->ft_leaves_per_pod;
}

/* Validate after scaling: every figure in a range a machine can have (a
 * number valid in the file can overflow once scaled to bytes or FLOP/s),
 * and a warning for values outside the physically plausible, with the
 * unit. The limits are documented here:
 *   peak            <= 1e6 TFLOP/s    (today's GPUs: 1e3 to 1e4)
 *   HBM             <= 1e5 GB          (warning above 1e4 GB)
 *   bandwidths      <= 1e12 GB/s       (NIC warning above 3.2 Tb/s per port;
 *                                       tests use 1e9 GB/s as "free")
 *   latencies       <= 1e6 us */
static void check_ranges(const struct topology *t, const char *f, struct diag *d)
{
	const struct { const char *jpath; double v, max; const char *unit; double scale; } r[] = {
		{ "/gpu/peak_tflops/bf16", t->gpu.peak_flops[DTYPE_BF16], 1e18, "TFLOP/s", 1e12 },
		{ "/gpu/peak_tflops/fp16", t->gpu.peak_flops[DTYPE_FP16], 1e18, "TFLOP/s", 1e12 },
		{ "/gpu/peak_tflops/fp32", t->gpu.peak_flops[DTYPE_FP32], 1e18, "TFLOP/s", 1e12 },
		{ "/gpu/peak_tflops/fp8", t->gpu.peak_flops[DTYPE_FP8], 1e18, "TFLOP/s", 1e12 },
		{ "/gpu/peak_tflops/tf32", t->gpu.peak_flops[DTYPE_TF32], 1e18, "TFLOP/s", 1e12 },
		{ "/gpu/peak_tflops/mxfp8", t->gpu.peak_flops[DTYPE_MXFP8], 1e18, "TFLOP/s", 1e12 },
		{ "/gpu/peak_tflops/nvfp4", t->gpu.peak_flops[DTYPE_NVFP4], 1e18, "TFLOP/s", 1e12 },
		{ "/gpu/hbm_GB", t->gpu.hbm_bytes, 1e14, "GB", 1e9 },
		{ "/gpu/hbm_bw_GBps", t->gpu.hbm_bw_Bps, 1e21, "GB/s", 1e9 },
		{ "/gpu/memory_reserved_GB", t->gpu.mem_reserved_bytes, 1e14, "GB", 1e9 },
		{ "/node/intra/bw_GBps", t->intra_bw_Bps, 1e21, "GB/s", 1e9 },
		{ "/node/intra/host_bw_GBps", t->host_bw_Bps, 1e21, "GB/s", 1e9 },
		{ "/node/nics/bw_Gbps", t->nic_bw_Bps, 1e21, "Gb/s", 1e9 / 8 },
		{ "/node/nics/latency_us", t->nic_latency_s, 1, "us", 1e-6 },
		{ "/node/intra/latency_us", t->intra_latency_s, 1, "us", 1e-6 },
		{ "/fabric/latency_us", t->fabric_latency_s, 1, "us", 1e-6 },
	};
	for (size_t i = 0; i < sizeof(r) / sizeof(r[0]); i++)
		if (!isfinite(r[i].v) || r[i].v > r[i].max)
			diag_err(d, f, r[i].jpath, "expected at most %g %s, got %g", r[i].max / r[i].scale,
				 r[i].unit, r[i].v / r[i].scale);
	if (t->nic_bw_Bps > 3.2e12 / 8 && isfinite(t->nic_bw_Bps) && t->nic_bw_Bps <= 1e21)
		diag_warn(d, f, "/node/nics/bw_Gbps", "%g Gb/s per NIC is more than any NIC ships "
			  "(800 Gb/s in 2025); the unit is Gb/s", t->nic_bw_Bps * 8 / 1e9);
	if (t->gpu.hbm_bytes > 1e13 && t->gpu.hbm_bytes <= 1e14)
		diag_warn(d, f, "/gpu/hbm_GB", "%g GB of HBM per GPU is more than any GPU has; "
			  "the unit is GB", t->gpu.hbm_bytes / 1e9);
}

/* An NVLink mesh's intra bandwidth when the file gives none: the widest
 * GPU's NVLink total, else (no NVLink at all) the host link's. */
static void mesh_intra_bw(struct topology *t)
{
	int G = t->gpus_per_node;

	for (int a = 0; a < G && t->intra_bw_Bps == 0; a++) {
		double sum = 0;
		for (int b = 0; b < G; b++)
			sum += t->nvl_bw_Bps[a * G + b];
		if (sum > t->intra_bw_Bps)
			t->intra_bw_Bps = sum;
	}
	/* reports want a number even when a GPU has no NVLink */
	if (t->intra_bw_Bps == 0)
		t->intra_bw_Bps = t->host_bw_Bps;
}

/* node.intra: the kind (nvswitch, pcie, nvlink_mesh), bandwidth, latency
 * and the kind's own keys. */
static void load_intra(struct jobj *node, struct topology *t)
{
	struct jobj intra;
	double x;
	int e = 0;

	if (jobj_child(node, "intra", &intra, JREQ) != 1)
		return;
	jobj_enum(&intra, "kind", intra_names, &e, JREQ);
	t->intra = e;
	bool mesh = t->intra == INTRA_NVLINK_MESH;
	if (mesh)
		need_11(t, &intra, "kind");
	if (jobj_num(&intra, "bw_GBps", &x, (mesh ? 0 : JREQ) | JPOS) == 1)
		t->intra_bw_Bps = x * 1e9;
	if (jobj_num(&intra, "latency_us", &x, JREQ | JNONNEG) == 1)
		t->intra_latency_s = x * 1e-6;
	if (mesh) {
		load_mesh(&intra, t);
		mesh_intra_bw(t);
	} else if (t->intra == INTRA_PCIE) {
		load_pcie_tree(&intra, t);
	} else if (jobj_num(&intra, "host_bw_GBps", &x, JPOS) == 1) {
		need_11(t, &intra, "host_bw_GBps");
		t->host_bw_Bps = x * 1e9;   /* nvswitch: the GPU's PCIe/C2C link to the CPU */
	}
	jobj_end(&intra);
}

/* The "node" object: power, CPU cores, GPU count, intra-node links, NICs. */
static void load_node(struct jobj *jo, struct topology *t, const char *path, struct diag *d)
{
	struct jobj node;
	long n = 1;

	if (jobj_child(jo, "node", &node, JREQ) != 1)
		return;
	if (jobj_has(&node, "power_max_W")) {
		if (t->schema_minor < 3)
			jobj_err(&node, "power_max_W", "needs schema_version \"1.3\" (the file says \"1.%d\")",
				 t->schema_minor);
		else
			jobj_num(&node, "power_max_W", &t->node_power_max_W, JPOS);
	}
	jobj_int(&node, "cpu_cores", &t->node_cpu_cores, 1, 0);
	if (jobj_int(&node, "gpus", &n, 1, JREQ) == 1 && n > TOPO_MAX_GPUS_PER_NODE) {
		jobj_err(&node, "gpus", "must be <= %d, got %ld", TOPO_MAX_GPUS_PER_NODE, n);
		n = 1;
	}
	t->gpus_per_node = t->gpus_per_node_physical = (int)n;
	load_intra(&node, t);
	load_nics(&node, t);
	if (t->pcie_nics_per_switch > 0 && t->pcie_switches > 0 &&
	    (long)t->pcie_nics_per_switch * t->pcie_switches < t->nics)
		diag_err(d, path, "/node/intra/pcie/nics_per_switch",
			 "switches x nics_per_switch must hold node.nics.count (%d), got %d x %d",
			 t->nics, t->pcie_switches, t->pcie_nics_per_switch);
	jobj_end(&node);
}

struct topology *topology_load(const char *path, struct diag *d)
{
	struct topology *t = xcalloc(1, sizeof(*t));
	struct jobj jo, fab;
	double x;
	int e;
	int before = diag_count(d);

	if (!t)
		return NULL;
	json_t *root = jload_file(path, d);
	if (!root)
		goto err_free;
	if (jload_schema(root, path, d, "ddlsim.topology", 1, 5))
		goto err_json;
	sscanf(json_string_value(json_object_get(root, "schema_version")), "%*d.%d",
	       &t->schema_minor);
	jobj_init(&jo, root, path, "", d);
	jload_copy_path(path, t->path, sizeof(t->path), d);
	jobj_str_copy(&jo, "name", t->name, sizeof(t->name), JREQ | JNAME);
	jobj_str_copy(&jo, "source", t->source, sizeof(t->source), JREQ);
	topology_load_gpu(&jo, root, t, d);

	load_node(&jo, t, path, d);
	if (jobj_child(&jo, "fabric", &fab, JREQ) == 1) {
		e = 0;
		jobj_enum(&fab, "kind", fabric_names, &e, JREQ);
		t->fabric = e;
		if (jobj_num(&fab, "latency_us", &x, JREQ | JNONNEG) == 1)
			t->fabric_latency_s = x * 1e-6;
		load_fabric(&fab, t);
		jobj_end(&fab);
	}
	jobj_end(&jo);
	if (diag_count(d) == before)
		check_ranges(t, path, d);
	if (diag_count(d) != before)
		goto err_json;
	json_decref(root);
	return t;

err_json:
	json_decref(root);
err_free:
	topology_destroy(t);
	return NULL;
}

int topology_use_gpus(struct topology *t, int used, const char *file, const char *jpath,
		      struct diag *d)
{
	int G = t->gpus_per_node;
	if (used < 1 || used > G)
		return diag_err(d, file, jpath, "must be between 1 and the %d GPUs per node of topology '%s', got %d",
				G, t->name, used);
	if (used == G)
		return 0;
	if (t->nvl_bw_Bps) {
		double *bw = xcalloc((size_t)used * used, sizeof(double));
		int *via = xcalloc((size_t)used * used, sizeof(int));
		for (int a = 0; a < used; a++)
			for (int b = 0; b < used; b++) {
				bw[a * used + b] = t->nvl_bw_Bps[a * G + b];
				int v = t->nvl_via[a * G + b];
				via[a * used + b] = v >= used ? -2 : v;
			}
		free(t->nvl_bw_Bps);
		free(t->nvl_via);
		t->nvl_bw_Bps = bw;
		t->nvl_via = via;
	}
	t->gpus_per_node = used;
	return 0;
}

void topology_destroy(struct topology *t)
{
	if (!t)
		return;
	free(t->nvl_bw_Bps);
	free(t->nvl_via);
	free(t);
}

double topology_host_bw(const struct topology *t)
{
	return t->intra == INTRA_PCIE ? t->intra_bw_Bps : t->host_bw_Bps;
}
