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

#include "attention.h"
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
		json_t *l = json_array_get(arr, i);
		char p[400];
		long v[3];
		bool ok = json_is_array(l) && json_array_size(l) == 3;
		for (int k = 0; ok && k < 3; k++) {
			ok = json_is_integer(json_array_get(l, (size_t)k));
			v[k] = ok ? (long)json_integer_value(json_array_get(l, (size_t)k)) : 0;
		}
		snprintf(p, sizeof(p), "%s/%zu", ap, i);
		if (!ok) {
			diag_err(intra->d, intra->file, p, "expected [gpu, gpu, lanes], got %s",
				 json_is_array(l) ? "another array" : jload_type_name(l));
			continue;
		}
		if (v[0] < 0 || v[0] >= G || v[1] < 0 || v[1] >= G) {
			diag_err(intra->d, intra->file, p,
				 "link to a missing GPU: a node has GPUs 0..%d, got [%ld, %ld]",
				 G - 1, v[0], v[1]);
			continue;
		}
		if (v[0] == v[1]) {
			diag_err(intra->d, intra->file, p, "link joins GPU %ld to itself", v[0]);
			continue;
		}
		if (v[2] < 1) {
			diag_err(intra->d, intra->file, p, "lanes must be >= 1, got %ld", v[2]);
			continue;
		}
		t->nvl_bw_Bps[v[0] * G + v[1]] += (double)v[2] * lane;
		t->nvl_bw_Bps[v[1] * G + v[0]] += (double)v[2] * lane;
	}
	/* two-hop routes: the intermediate GPU with the widest bottleneck */
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

/* A 1.2 key (GPU facts from micro-benchmarks) in an older file. */
static void need_12(int minor, struct jobj *jo, const char *key)
{
	if (minor < 2)
		jobj_err(jo, key, "needs schema_version \"1.2\" (the file says \"1.%d\")", minor);
}

/* The 1.5 efficiency keys (in situ and per class). */
static const char *const keys_15[] = { "mem_rowwise_max", "sustained_clock_ratio",
				       "attention_backends", "comm_overlap_clock_ratio",
				       "gemm_libraries", "flash_sustained_ratio", "flash_seq_half",
				       "gemm_max_mxfp8", "gemm_max_nvfp4", "gemm_epilogue", NULL };

/* A key of schema 1.5 (a topology, or a GPU preset 1.1) in an older file. */
static void need_15(int minor, struct jobj *jo, const char *key)
{
	if (minor < 5)
		jobj_err(jo, key, "needs schema_version \"1.5\" (a GPU preset: \"1.1\"), the file "
			 "says \"1.%d\"", minor);
}

/* Number key of jo into *v (flags as jobj_num()), refused with its path
 * when present and not > 0. */
static void read_positive(struct jobj *jo, const char *key, double *v, int flags)
{
	if (jobj_num(jo, key, v, flags) == 1 && *v <= 0)
		jobj_err(jo, key, "must be > 0, got %g", *v);
}

/* gemm_libraries {cublas11: {max, source}}: the best GEMM fraction of
 * peak on an older library (models/gpu.h enum gemm_lib). */
static void load_gemm_libraries(struct jobj *ef, struct gpu_spec *g)
{
	struct jobj gl, lb;

	if (jobj_child(ef, "gemm_libraries", &gl, 0) != 1)
		return;
	for (int l = GEMM_LIB_CURRENT + 1; l < GEMM_LIB_N; l++) {
		if (jobj_child(&gl, gemm_lib_names[l], &lb, 0) != 1)
			continue;
		read_positive(&lb, "max", &g->gemm_lib_max[l], JREQ | JUNIT);
		jobj_str(&lb, "source", &(const char *){ NULL }, JREQ);
		jobj_end(&lb);
	}
	jobj_end(&gl);
}

/* gemm_epilogue {serial, mainloop_max (optional), source}: whether the GPU's GEMM kernels write
 * each output tile after their mainloop (models/gpu.h). */
static void load_gemm_epilogue(struct jobj *ef, struct gpu_spec *g)
{
	struct jobj ge;

	if (jobj_child(ef, "gemm_epilogue", &ge, 0) != 1)
		return;
	jobj_bool(&ge, "serial", &g->gemm_epilogue_serial, JREQ);
	read_positive(&ge, "mainloop_max", &g->gemm_mainloop_max, JUNIT);
	jobj_str(&ge, "source", &(const char *){ NULL }, JREQ);
	jobj_end(&ge);
}

/* mem_rowwise_max, sustained_clock_ratio, flash_sustained_ratio, flash_seq_half,
 * comm_overlap_clock_ratio, gemm_libraries, attention_backends {fa2|fa3|cudnn: {fwd_max, bwd_max,
 * bwd_seq_half (optional), source}}. */
static void load_gpu_15(struct jobj *ef, struct gpu_spec *g, int minor)
{
	for (int i = 0; keys_15[i]; i++)
		if (jobj_has(ef, keys_15[i]))
			need_15(minor, ef, keys_15[i]);
	if (minor < 5)
		return;
	read_positive(ef, "mem_rowwise_max", &g->mem_rowwise_max, JUNIT);
	read_positive(ef, "gemm_max_mxfp8", &g->gemm_eff_max_mxfp8, JUNIT);
	read_positive(ef, "gemm_max_nvfp4", &g->gemm_eff_max_nvfp4, JUNIT);
	read_positive(ef, "sustained_clock_ratio", &g->sustained_clock_ratio, JUNIT);
	read_positive(ef, "flash_sustained_ratio", &g->flash_sustained_ratio, JUNIT);
	read_positive(ef, "flash_seq_half", &g->flash_seq_half, 0);
	read_positive(ef, "comm_overlap_clock_ratio", &g->comm_overlap_clock_ratio, JUNIT);
	load_gemm_libraries(ef, g);
	load_gemm_epilogue(ef, g);
	struct jobj ab, be;
	if (jobj_child(ef, "attention_backends", &ab, 0) != 1)
		return;
	for (int b = ATTN_BE_BEST + 1; b < ATTN_BE_N; b++) {
		if (jobj_child(&ab, attn_backend_names[b], &be, 0) != 1)
			continue;
		read_positive(&be, "fwd_max", &g->flash_be_fwd[b], JREQ | JUNIT);
		read_positive(&be, "bwd_max", &g->flash_be_bwd[b], JREQ | JUNIT);
		read_positive(&be, "bwd_seq_half", &g->flash_be_bwd_half[b], 0);
		jobj_str(&be, "source", &(const char *){ NULL }, JREQ);
		jobj_end(&be);
	}
	jobj_end(&ab);
	if (g->flash_fwd_max <= 0)
		jobj_err(ef, "attention_backends", "needs flash_fwd_max and flash_bwd_max (the best "
			 "flash kernel), got none");
}

/* Read the keys of a GPU description (the topology's "gpu" object, or a
 * preset file's root) from jo into g. */
static void load_gpu_keys(struct jobj *jo, struct gpu_spec *g, int minor)
{
	struct jobj pk, ef;
	double x;
	json_t *arr;
	char ap[300];

	jobj_str_copy(jo, "name", g->name, sizeof(g->name), JREQ | JNAME);
	if (jobj_child(jo, "peak_tflops", &pk, JREQ) == 1) {
		for (int i = 0; i < DTYPE_N; i++)
			if (jobj_num(&pk, dtype_names[i], &x, JPOS) == 1)
				g->peak_flops[i] = x * 1e12;
		if (g->peak_flops[DTYPE_FP32] <= 0)
			jobj_err(jo, "peak_tflops", "missing required key 'fp32'");
		jobj_end(&pk);
	}
	if (jobj_num(jo, "hbm_GB", &x, JREQ | JPOS) == 1)
		g->hbm_bytes = x * 1e9;
	if (jobj_has(jo, "hbm_total_bytes")) {
		need_12(minor, jo, "hbm_total_bytes");
		if (jobj_num(jo, "hbm_total_bytes", &x, JPOS) == 1)
			g->hbm_bytes = x;
	}
	if (jobj_num(jo, "hbm_bw_GBps", &x, JREQ | JPOS) == 1)
		g->hbm_bw_Bps = x * 1e9;
	jobj_int(jo, "sm_count", &g->sm_count, 1, JREQ);
	if (jobj_has(jo, "compute_capability")) {
		need_15(minor, jo, "compute_capability");
		double *cc = &g->compute_capability;
		if (minor >= 5 && jobj_num(jo, "compute_capability", cc, JPOS) == 1 &&
		    (*cc < 1 || *cc > 20))
			jobj_err(jo, "compute_capability", "expected a CUDA compute capability such as "
				 "9.0, got %g", *cc);
	}
	if (jobj_has(jo, "l2_MB")) {
		need_15(minor, jo, "l2_MB");
		if (minor >= 5 && jobj_num(jo, "l2_MB", &x, JPOS) == 1)
			g->l2_bytes = x * 1e6;
	}
	x = 2;
	jobj_num(jo, "memory_reserved_GB", &x, JNONNEG);
	g->mem_reserved_bytes = x * 1e9;

	/* defaults: a large GEMM at 80% of peak, half of that at 1 GFLOP */
	g->gemm_eff_max = 0.8;
	g->mem_eff_max = 0.85;
	g->kernel_launch_s = 4e-6;
	g->sustained_clock_ratio = 1;
	g->flash_sustained_ratio = 1;
	g->comm_overlap_clock_ratio = 1;
	g->gemm_tile_m = 128;
	g->gemm_tile_n = 256;
	if (jobj_child(jo, "efficiency", &ef, 0) == 1) {
		jobj_num(&ef, "gemm_max", &g->gemm_eff_max, JUNIT);
		/* obsolete since 1.5 (GEMMs in waves, memory-bound kernels with a
		 * fixed latency): still checked, not kept */
		jobj_num(&ef, "gemm_half_GFLOP", &x, JNONNEG);
		read_positive(&ef, "attention_max", &x, JUNIT);
		static const char *const k12[] = { "gemm_max_fp8", "flash_fwd_max", "flash_bwd_max" };
		double *v12[] = { &g->gemm_eff_max_fp8, &g->flash_fwd_max, &g->flash_bwd_max };
		for (int i = 0; i < 3; i++)
			if (jobj_has(&ef, k12[i])) {
				need_12(minor, &ef, k12[i]);
				read_positive(&ef, k12[i], v12[i], JUNIT);
			}
		if (jobj_has(&ef, "source")) {
			const char *src;
			need_12(minor, &ef, "source");
			jobj_str(&ef, "source", &src, 0);
		}
		jobj_num(&ef, "mem_max", &g->mem_eff_max, JUNIT);
		load_gpu_15(&ef, g, minor);
		jobj_num(&ef, "mem_half_MB", &x, JNONNEG);
		if (jobj_num(&ef, "kernel_launch_us", &x, JNONNEG) == 1)
			g->kernel_launch_s = x * 1e-6;
		if (jobj_array(&ef, "gemm_tile", &arr, ap, sizeof(ap), 0) == 1) {
			if (json_array_size(arr) != 2 || !json_is_integer(json_array_get(arr, 0)) ||
			    !json_is_integer(json_array_get(arr, 1)) ||
			    json_integer_value(json_array_get(arr, 0)) < 1 ||
			    json_integer_value(json_array_get(arr, 1)) < 1)
				jobj_err(&ef, "gemm_tile", "expected two positive integers [m, n]");
			else {
				g->gemm_tile_m = (double)json_integer_value(json_array_get(arr, 0));
				g->gemm_tile_n = (double)json_integer_value(json_array_get(arr, 1));
			}
		}
		if (g->gemm_eff_max <= 0)
			jobj_err(&ef, "gemm_max", "must be > 0, got %g", g->gemm_eff_max);
		if (g->mem_eff_max <= 0)
			jobj_err(&ef, "mem_max", "must be > 0, got %g", g->mem_eff_max);
		jobj_end(&ef);
	}
	topology_load_power(jo, g, minor);
}

/* A GPU preset file (schema ddlsim.gpu 1.1; 1.0 accepted) read and
 * checked on its own: its GPU keys (as the topology's "gpu" object: a
 * 1.0 preset takes the keys of a topology 1.4, a 1.1 preset those of 1.5)
 * and "sources", a string per key saying where the number comes from.
 * Returns the GPU object without schema and sources (new reference), or
 * NULL after reporting; *minor is the topology minor version its keys
 * were read at. */
static json_t *read_preset(const char *path, int *minor, struct diag *d)
{
	json_t *pre = jload_file(path, d), *out = NULL;
	struct jobj pj, src;
	struct gpu_spec scratch = { 0 };
	int pminor = 0;
	*minor = 4;
	if (!pre || jload_schema(pre, path, d, "ddlsim.gpu", 1, 1))
		goto out;
	sscanf(json_string_value(json_object_get(pre, "schema_version")), "%*d.%d", &pminor);
	*minor = pminor >= 1 ? 5 : 4;
	jobj_init(&pj, pre, path, "", d);
	int before = diag_count(d);
	if (jobj_child(&pj, "sources", &src, JREQ) == 1) {
		const char *k, *str;
		json_t *sv;
		json_object_foreach(src.o, k, sv)
			jobj_str(&src, k, &str, 0);
		jobj_end(&src);
	}
	load_gpu_keys(&pj, &scratch, *minor);
	jobj_end(&pj);
	if (diag_count(d) == before) {
		out = json_deep_copy(pre);
		json_object_del(out, "schema");
		json_object_del(out, "schema_version");
		json_object_del(out, "sources");
	}
out:
	json_decref(pre);
	return out;
}

int topology_gpu_preset_load(const char *path, struct gpu_spec *out, struct diag *d)
{
	int minor;
	json_t *g = read_preset(path, &minor, d);
	struct jobj jo;
	if (!g)
		return -1;
	memset(out, 0, sizeof(*out));
	int before = diag_count(d);
	jobj_init(&jo, g, path, "", d);
	load_gpu_keys(&jo, out, minor);
	json_decref(g);
	return diag_count(d) == before ? 0 : -1;
}

int topology_gpu_preset_check(const char *path, struct diag *d)
{
	int minor;
	json_t *g = read_preset(path, &minor, d);
	json_decref(g);
	return g ? 0 : -1;
}

/* The topology's "gpu": inline (every version), or (1.4) a preset file's
 * path, or {"preset": path, overrides...}. A preset is read and checked on
 * its own (errors name the preset file), then copied under the
 * topology's "gpu" with the overrides laid over it (objects such as
 * efficiency or power key by key, recursively), so the topology reads one description
 * and an override's error names the topology's /gpu path. */
/* An override of a preset names a 1.5 key in an older topology. */
static void check_override_15(struct jobj *top, json_t *v, int minor)
{
	if (minor >= 5 || !json_is_object(v))
		return;
	json_t *ef = json_object_get(v, "efficiency");
	if (json_object_get(v, "compute_capability"))
		jobj_err(top, "gpu", "/compute_capability: needs schema_version \"1.5\", the file "
			 "says \"1.%d\"", minor);
	for (int i = 0; keys_15[i] && json_is_object(ef); i++)
		if (json_object_get(ef, keys_15[i]))
			jobj_err(top, "gpu", "/efficiency/%s: needs schema_version \"1.5\", the file "
				 "says \"1.%d\"", keys_15[i], minor);
	static const char *const power_15[] = { "power_cap_W", "cap_clock_ratio", "cap_source" };
	json_t *pw = json_object_get(v, "power");
	for (int i = 0; i < 3 && json_is_object(pw); i++)
		if (json_object_get(pw, power_15[i]))
			jobj_err(top, "gpu", "/power/%s: needs schema_version \"1.5\", the file "
				 "says \"1.%d\"", power_15[i], minor);
}

static void load_gpu(struct jobj *top, json_t *root, struct topology *t, struct diag *d)
{
	json_t *v = json_object_get(root, "gpu");
	int minor = t->schema_minor;
	const char *rel = json_is_string(v) ? json_string_value(v)
			: json_is_string(json_object_get(v, "preset")) ? json_string_value(json_object_get(v, "preset"))
			: NULL;
	if (!rel && json_is_object(v) && json_object_get(v, "preset"))
		jobj_err(top, "gpu", "/preset: expected a path to a GPU preset, got %s",
			 jload_type_name(json_object_get(v, "preset")));
	if (rel) {
		if (t->schema_minor < 4) {
			jobj_err(top, "gpu", "a GPU preset needs schema_version \"1.4\" (the file says \"1.%d\")",
				 t->schema_minor);
			json_object_del(root, "gpu");
		} else if (jload_resolve(t->path, rel, t->gpu_preset, sizeof(t->gpu_preset))) {
			jobj_err(top, "gpu", "preset path too long");
			json_object_del(root, "gpu");
		} else if (jload_check_ref(top, json_is_string(v) ? "gpu" : "gpu/preset", t->gpu_preset)) {
			json_object_del(root, "gpu");
		} else {
			int pminor;
			json_t *merged = read_preset(t->gpu_preset, &pminor, d);
			check_override_15(top, v, t->schema_minor);
			if (pminor > minor)
				minor = pminor;
			if (merged && json_is_object(v)) {
				const char *k;
				json_t *ov;
				json_object_foreach(v, k, ov) {
					json_t *base = json_object_get(merged, k);
					if (!strcmp(k, "preset"))
						continue;
					if (json_is_object(base) && json_is_object(ov))
						json_object_update_recursive(base, ov);
					else
						json_object_set(merged, k, ov);
				}
				/* the preset's device-reported total belongs to its hbm_GB:
				 * an hbm_GB override alone would otherwise be ignored */
				if (json_object_get(v, "hbm_GB") && !json_object_get(v, "hbm_total_bytes"))
					json_object_del(merged, "hbm_total_bytes");
			}
			if (merged)
				json_object_set_new(root, "gpu", merged);
			else
				json_object_del(root, "gpu");  /* reported above; no second error */
		}
		if (!json_object_get(root, "gpu"))
			return;  /* reported; not a second "missing gpu" */
	}
	struct jobj jo;
	if (jobj_child(top, "gpu", &jo, JREQ) != 1)
		return;
	/* a preset's keys were checked against the preset's own schema, the
	 * overrides against the topology's */
	load_gpu_keys(&jo, &t->gpu, minor);
	jobj_end(&jo);
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

struct topology *topology_load(const char *path, struct diag *d)
{
	struct topology *t = xcalloc(1, sizeof(*t));
	struct jobj jo, node, intra, fab;
	double x;
	long n;
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
	load_gpu(&jo, root, t, d);

	if (jobj_child(&jo, "node", &node, JREQ) == 1) {
		n = 1;
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
		if (jobj_child(&node, "intra", &intra, JREQ) == 1) {
			e = 0;
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
			} else if (t->intra == INTRA_PCIE) {
				load_pcie_tree(&intra, t);
			} else if (jobj_num(&intra, "host_bw_GBps", &x, JPOS) == 1) {
				need_11(t, &intra, "host_bw_GBps");
				t->host_bw_Bps = x * 1e9;   /* nvswitch: the GPU's PCIe/C2C link to the CPU */
			}
			jobj_end(&intra);
		}
		load_nics(&node, t);
		if (t->pcie_nics_per_switch > 0 && t->pcie_switches > 0 &&
		    (long)t->pcie_nics_per_switch * t->pcie_switches < t->nics)
			diag_err(d, path, "/node/intra/pcie/nics_per_switch",
				 "switches x nics_per_switch must hold node.nics.count (%d), got %d x %d",
				 t->nics, t->pcie_switches, t->pcie_nics_per_switch);
		jobj_end(&node);
	}
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
