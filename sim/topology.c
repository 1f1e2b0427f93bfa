/* topology: topology file loader (see topology.h for the keys). */
#include "topology.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jload.h"

static const char *const intra_names[] = { "nvswitch", "pcie", NULL };
static const char *const fabric_names[] = { "nonblocking", NULL };
static const char *const dt_keys[DTYPE_N] = { "fp32", "tf32", "fp16", "bf16", "fp8" };

const char *intra_kind_name(enum intra_kind k)
{
	return intra_names[k];
}

static void load_gpu(struct jobj *top, struct gpu_spec *g)
{
	struct jobj jo, pk, ef;
	const char *s;
	double x;
	json_t *arr;
	char ap[300];

	if (jobj_child(top, "gpu", &jo, JREQ) != 1)
		return;
	if (jobj_str(&jo, "name", &s, JREQ) == 1)
		snprintf(g->name, sizeof(g->name), "%s", s);
	if (jobj_child(&jo, "peak_tflops", &pk, JREQ) == 1) {
		for (int i = 0; i < DTYPE_N; i++)
			if (jobj_num(&pk, dt_keys[i], &x, JPOS) == 1)
				g->peak_flops[i] = x * 1e12;
		if (g->peak_flops[DTYPE_FP32] <= 0)
			jobj_err(&jo, "peak_tflops", "missing required key 'fp32'");
		jobj_end(&pk);
	}
	if (jobj_num(&jo, "hbm_GB", &x, JREQ | JPOS) == 1)
		g->hbm_bytes = x * 1e9;
	if (jobj_num(&jo, "hbm_bw_GBps", &x, JREQ | JPOS) == 1)
		g->hbm_bw_Bps = x * 1e9;
	jobj_int(&jo, "sm_count", &g->sm_count, 1, JREQ);
	x = 2;
	jobj_num(&jo, "memory_reserved_GB", &x, JNONNEG);
	g->mem_reserved_bytes = x * 1e9;

	/* defaults: a large GEMM at 80% of peak, half of that at 1 GFLOP */
	g->gemm_eff_max = 0.8;
	g->gemm_half_flops = 1e9;
	g->attn_eff_max = 0.5;
	g->mem_eff_max = 0.85;
	g->mem_half_bytes = 1e6;
	g->kernel_launch_s = 4e-6;
	g->gemm_tile_m = 128;
	g->gemm_tile_n = 256;
	if (jobj_child(&jo, "efficiency", &ef, 0) == 1) {
		jobj_num(&ef, "gemm_max", &g->gemm_eff_max, JUNIT);
		if (jobj_num(&ef, "gemm_half_GFLOP", &x, JNONNEG) == 1)
			g->gemm_half_flops = x * 1e9;
		jobj_num(&ef, "attention_max", &g->attn_eff_max, JUNIT);
		jobj_num(&ef, "mem_max", &g->mem_eff_max, JUNIT);
		if (jobj_num(&ef, "mem_half_MB", &x, JNONNEG) == 1)
			g->mem_half_bytes = x * 1e6;
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
		if (g->attn_eff_max <= 0)
			jobj_err(&ef, "attention_max", "must be > 0, got %g", g->attn_eff_max);
		jobj_end(&ef);
	}
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

struct topology *topology_load(const char *path, struct diag *d)
{
	struct topology *t = calloc(1, sizeof(*t));
	struct jobj jo, node, intra, fab;
	const char *s;
	double x;
	long n;
	int e;
	int before = diag_count(d);

	if (!t)
		return NULL;
	json_t *root = jload_file(path, d);
	if (!root)
		goto err_free;
	if (jload_schema(root, path, d, "ddlsim.topology", 1, 0))
		goto err_json;
	jobj_init(&jo, root, path, "", d);
	snprintf(t->path, sizeof(t->path), "%s", path);
	if (jobj_str(&jo, "name", &s, JREQ) == 1)
		snprintf(t->name, sizeof(t->name), "%s", s);
	if (jobj_str(&jo, "source", &s, JREQ) == 1)
		snprintf(t->source, sizeof(t->source), "%s", s);
	load_gpu(&jo, &t->gpu);

	if (jobj_child(&jo, "node", &node, JREQ) == 1) {
		n = 1;
		if (jobj_int(&node, "gpus", &n, 1, JREQ) == 1 && n > TOPO_MAX_GPUS_PER_NODE) {
			jobj_err(&node, "gpus", "must be <= %d, got %ld", TOPO_MAX_GPUS_PER_NODE, n);
			n = 1;
		}
		t->gpus_per_node = (int)n;
		if (jobj_child(&node, "intra", &intra, JREQ) == 1) {
			e = 0;
			jobj_enum(&intra, "kind", intra_names, &e, JREQ);
			t->intra = e;
			if (jobj_num(&intra, "bw_GBps", &x, JREQ | JPOS) == 1)
				t->intra_bw_Bps = x * 1e9;
			if (jobj_num(&intra, "latency_us", &x, JREQ | JNONNEG) == 1)
				t->intra_latency_s = x * 1e-6;
			jobj_end(&intra);
		}
		load_nics(&node, t);
		jobj_end(&node);
	}
	if (jobj_child(&jo, "fabric", &fab, JREQ) == 1) {
		e = 0;
		jobj_enum(&fab, "kind", fabric_names, &e, JREQ);
		t->fabric = e;
		if (jobj_num(&fab, "latency_us", &x, JREQ | JNONNEG) == 1)
			t->fabric_latency_s = x * 1e-6;
		jobj_end(&fab);
	}
	jobj_end(&jo);
	if (diag_count(d) != before)
		goto err_json;
	json_decref(root);
	return t;

err_json:
	json_decref(root);
err_free:
	free(t);
	return NULL;
}

void topology_destroy(struct topology *t)
{
	free(t);
}

double topology_path_latency(const struct topology *t, int a, int b)
{
	if (a == b)
		return 0;
	if (topology_node_of(t, a) == topology_node_of(t, b))
		return t->intra_latency_s;
	return 2 * t->nic_latency_s + t->fabric_latency_s;
}

double topology_path_bw(const struct topology *t, int a, int b)
{
	if (topology_node_of(t, a) == topology_node_of(t, b))
		return t->intra_bw_Bps;
	return t->nic_bw_Bps;
}
