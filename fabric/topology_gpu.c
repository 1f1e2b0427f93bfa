/* topology_gpu: the "gpu" of a topology (topology.h's key table, gpu.*):
 * its keys read inline, from a GPU preset file (schema ddlsim.gpu), or
 * from a preset with overrides laid over it.  Keys new in a schema minor
 * version are refused in an older file, with the version they need. */
#include "topology-private.h"

#include <stdio.h>
#include <string.h>

#include "attention.h"
#include "diag.h"
#include "topology.h"

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

/* peak_tflops {dtype: TFLOP/s}; fp32 is required. */
static void load_peak(struct jobj *jo, struct gpu_spec *g)
{
	struct jobj pk;
	double x;

	if (jobj_child(jo, "peak_tflops", &pk, JREQ) != 1)
		return;
	for (int i = 0; i < DTYPE_N; i++)
		if (jobj_num(&pk, dtype_names[i], &x, JPOS) == 1)
			g->peak_flops[i] = x * 1e12;
	if (g->peak_flops[DTYPE_FP32] <= 0)
		jobj_err(jo, "peak_tflops", "missing required key 'fp32'");
	jobj_end(&pk);
}

/* hbm_GB, hbm_total_bytes (1.2), hbm_bw_GBps, sm_count, memory_reserved_GB. */
static void load_memory(struct jobj *jo, struct gpu_spec *g, int minor)
{
	double x;

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
}

/* compute_capability and l2_MB, the 1.5 facts of the chip. */
static void load_chip_15(struct jobj *jo, struct gpu_spec *g, int minor)
{
	double x;

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
}

/* The efficiency defaults a file need not give. */
static void set_efficiency_defaults(struct gpu_spec *g)
{
	/* defaults: a large GEMM at 80% of peak, half of that at 1 GFLOP */
	g->gemm_eff_max = 0.8;
	g->mem_eff_max = 0.85;
	g->kernel_launch_s = 4e-6;
	g->sustained_clock_ratio = 1;
	g->flash_sustained_ratio = 1;
	g->comm_overlap_clock_ratio = 1;
	g->gemm_tile_m = 128;
	g->gemm_tile_n = 256;
}

/* The 1.2 efficiency keys: gemm_max_fp8, flash_fwd_max, flash_bwd_max, source. */
static void load_efficiency_12(struct jobj *ef, struct gpu_spec *g, int minor)
{
	static const char *const k12[] = { "gemm_max_fp8", "flash_fwd_max", "flash_bwd_max" };
	double *v12[] = { &g->gemm_eff_max_fp8, &g->flash_fwd_max, &g->flash_bwd_max };

	for (int i = 0; i < 3; i++)
		if (jobj_has(ef, k12[i])) {
			need_12(minor, ef, k12[i]);
			read_positive(ef, k12[i], v12[i], JUNIT);
		}
	if (jobj_has(ef, "source")) {
		const char *src;
		need_12(minor, ef, "source");
		jobj_str(ef, "source", &src, 0);
	}
}

/* gemm_tile [m, n]: the GEMM kernels' output tile, two positive integers. */
static void load_gemm_tile(struct jobj *ef, struct gpu_spec *g)
{
	json_t *arr;
	char ap[300];

	if (jobj_array(ef, "gemm_tile", &arr, ap, sizeof(ap), 0) != 1)
		return;
	if (json_array_size(arr) != 2 || !json_is_integer(json_array_get(arr, 0)) ||
	    !json_is_integer(json_array_get(arr, 1)) ||
	    json_integer_value(json_array_get(arr, 0)) < 1 ||
	    json_integer_value(json_array_get(arr, 1)) < 1)
		jobj_err(ef, "gemm_tile", "expected two positive integers [m, n]");
	else {
		g->gemm_tile_m = (double)json_integer_value(json_array_get(arr, 0));
		g->gemm_tile_n = (double)json_integer_value(json_array_get(arr, 1));
	}
}

/* The "efficiency" object of a GPU description, over the defaults. */
static void load_efficiency(struct jobj *jo, struct gpu_spec *g, int minor)
{
	struct jobj ef;
	double x;

	if (jobj_child(jo, "efficiency", &ef, 0) != 1)
		return;
	jobj_num(&ef, "gemm_max", &g->gemm_eff_max, JUNIT);
	/* obsolete since 1.5 (GEMMs in waves, memory-bound kernels with a
	 * fixed latency): still checked, not kept */
	jobj_num(&ef, "gemm_half_GFLOP", &x, JNONNEG);
	read_positive(&ef, "attention_max", &x, JUNIT);
	load_efficiency_12(&ef, g, minor);
	jobj_num(&ef, "mem_max", &g->mem_eff_max, JUNIT);
	load_gpu_15(&ef, g, minor);
	jobj_num(&ef, "mem_half_MB", &x, JNONNEG);
	if (jobj_num(&ef, "kernel_launch_us", &x, JNONNEG) == 1)
		g->kernel_launch_s = x * 1e-6;
	load_gemm_tile(&ef, g);
	if (g->gemm_eff_max <= 0)
		jobj_err(&ef, "gemm_max", "must be > 0, got %g", g->gemm_eff_max);
	if (g->mem_eff_max <= 0)
		jobj_err(&ef, "mem_max", "must be > 0, got %g", g->mem_eff_max);
	jobj_end(&ef);
}

/* Read the keys of a GPU description (the topology's "gpu" object, or a
 * preset file's root) from jo into g. */
static void load_gpu_keys(struct jobj *jo, struct gpu_spec *g, int minor)
{
	double x;

	jobj_str_copy(jo, "name", g->name, sizeof(g->name), JREQ | JNAME);
	load_peak(jo, g);
	load_memory(jo, g, minor);
	load_chip_15(jo, g, minor);
	x = 2;
	jobj_num(jo, "memory_reserved_GB", &x, JNONNEG);
	g->mem_reserved_bytes = x * 1e9;
	set_efficiency_defaults(g);
	load_efficiency(jo, g, minor);
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

/* Lays the overrides v over the preset's description merged: objects key
 * by key, recursively; other values replace the preset's. */
static void overlay_preset(json_t *merged, json_t *v)
{
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

void topology_load_gpu(struct jobj *top, json_t *root, struct topology *t, struct diag *d)
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
			if (merged && json_is_object(v))
				overlay_preset(merged, v);
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

