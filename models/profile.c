/* profile: calib profile loader (see profile.h for the keys).
 *
 * Each section is an array of flat objects; every entry is read through its
 * own struct jobj so that a missing field, a non-positive time or an unknown
 * key is reported with the entry's JSON path ("/gemm/3/time_s"), and the
 * loader goes on to report the other entries' problems too. */
#include "profile.h"
#include "xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jload.h"

static const char *const trans_names[] = { "N", "T", NULL };
static const char *const conv_pass_names[] = { "fwd", "bwd_data", "bwd_filter", NULL };
static const char *const attn_pass_names[] = { "fwd", "bwd", NULL };
static const char *const bw_names[] = { "d2d", "h2d", "d2h", NULL };
/* calib's dtype names (calib/dtype.c, PROFILE-FORMAT.md), in enum dtype
 * order: fp8 GEMMs are "fp8_e4m3" (e4m3 inputs). calib never wrote the
 * simulator's short "fp8", so it is not accepted. calib measures no
 * block-scaled GEMM: mxfp8 and nvfp4 have no name (the list ends before
 * them) and a profile holds none. */
static const char *const profile_dtype_names[DTYPE_N + 1] = {
	"fp32", "tf32", "fp16", "bf16", "fp8_e4m3", NULL, NULL, NULL
};
_Static_assert(DTYPE_N == 7, "profile_dtype_names lists every enum dtype");

const char *profile_dtype_name(enum dtype d)
{
	return (unsigned)d < DTYPE_N && profile_dtype_names[d] ? profile_dtype_names[d] : "?";
}

static void copy_str(struct jobj *jo, const char *key, char *out, size_t n)
{
	jobj_str_copy(jo, key, out, n, JREQ);
}

static double int_num(struct jobj *jo, const char *key, long min)
{
	long x = 0;
	jobj_long(jo, key, &x, min, JREQ);
	return (double)x;
}

static void load_producer(struct jobj *root, struct profile *p)
{
	struct jobj jo;
	char version[32];

	if (jobj_child(root, "producer", &jo, JREQ) != 1)
		return;
	copy_str(&jo, "name", p->producer, sizeof(p->producer));
	copy_str(&jo, "version", version, sizeof(version));
	jobj_end(&jo);
}

static void load_gpu(struct jobj *root, struct profile *p)
{
	struct jobj jo;
	char scratch[128];
	long x;

	if (jobj_child(root, "gpu", &jo, JREQ) != 1)
		return;
	copy_str(&jo, "name", p->gpu_name, sizeof(p->gpu_name));
	copy_str(&jo, "compute_capability", p->compute_capability, sizeof(p->compute_capability));
	jobj_long(&jo, "sm_count", &p->sm_count, 1, JREQ);
	jobj_long(&jo, "hbm_bytes", &x, 1, JREQ);
	/* 1.1: what a profiler trace cannot tell (trace_calib.h) is optional */
	int req = p->schema_minor >= 1 ? 0 : JREQ;
	jobj_long(&jo, "sm_clock_max_MHz", &x, 1, req);
	jobj_long(&jo, "mem_clock_max_MHz", &x, 1, req);
	jobj_long(&jo, "mem_bus_width_bits", &x, 1, req);
	jobj_long(&jo, "l2_bytes", &x, 0, req);
	jobj_str_copy(&jo, "driver_version", scratch, sizeof(scratch), req);
	jobj_str_copy(&jo, "cuda_runtime_version", scratch, sizeof(scratch), req);
	jobj_str_copy(&jo, "cublas_version", scratch, sizeof(scratch), req);
	/* cudnn_version: a string, or null when cuDNN was not available */
	if (!jobj_has(&jo, "cudnn_version")) {
		if (req)
			jobj_err(&jo, "cudnn_version", "missing required key 'cudnn_version'");
	} else {
		json_t *v = json_object_get(jo.o, "cudnn_version");
		if (!json_is_string(v) && !json_is_null(v))
			jobj_err(&jo, "cudnn_version", "expected a string or null, got %s",
				 jload_type_name(v));
	}
	jobj_end(&jo);
}

static void load_measured(struct jobj *root, struct profile *p)
{
	struct jobj jo;
	char host[256];
	long x;
	bool q;

	if (jobj_child(root, "measured", &jo, JREQ) != 1)
		return;
	copy_str(&jo, "date_utc", p->date_utc, sizeof(p->date_utc));
	jobj_str_copy(&jo, "hostname", host, sizeof(host), p->schema_minor >= 1 ? 0 : JREQ);
	copy_str(&jo, "method", p->method, sizeof(p->method));
	jobj_long(&jo, "warmup_runs", &x, 0, JREQ);
	jobj_long(&jo, "timed_runs", &x, 1, JREQ);
	jobj_bool(&jo, "quick", &q, JREQ);
	jobj_end(&jo);
}

static enum dtype read_dtype(struct jobj *jo)
{
	int e = DTYPE_FP32;
	jobj_enum(jo, "dtype", profile_dtype_names, &e, JREQ);
	return (enum dtype)e;
}

static char read_trans(struct jobj *jo, const char *key)
{
	int e = 0;
	jobj_enum(jo, key, trans_names, &e, JREQ);
	return trans_names[e][0];
}

static const char *read_impl(struct jobj *jo)
{
	const char *s = "";
	jobj_str(jo, "impl", &s, JREQ);
	return s;
}

static void gemm_entry(struct jobj *jo, void *out)
{
	struct profile_gemm *g = out;
	g->dtype = read_dtype(jo);
	g->m = int_num(jo, "m", 1);
	g->n = int_num(jo, "n", 1);
	g->k = int_num(jo, "k", 1);
	g->transa = read_trans(jo, "transa");
	g->transb = read_trans(jo, "transb");
	jobj_num(jo, "time_s", &g->time_s, JREQ | JPOS);
	jobj_num(jo, "tflops", &g->tflops, JREQ | JPOS);
	read_impl(jo);
	jobj_long(jo, "samples", &g->samples, 1, 0);
}

static void conv_entry(struct jobj *jo, void *out)
{
	struct profile_conv *c = out;
	const char *s;
	int e = 0;

	c->dtype = read_dtype(jo);
	jobj_str(jo, "layout", &s, JREQ);
	jobj_enum(jo, "pass", conv_pass_names, &e, JREQ);
	c->pass = (enum profile_conv_pass)e;
	c->n = int_num(jo, "n", 1);
	c->c = int_num(jo, "c", 1);
	c->h = int_num(jo, "h", 1);
	c->w = int_num(jo, "w", 1);
	c->k = int_num(jo, "k", 1);
	c->r = int_num(jo, "r", 1);
	c->s = int_num(jo, "s", 1);
	c->stride = int_num(jo, "stride", 1);
	c->pad = int_num(jo, "pad", 0);
	c->dilation = int_num(jo, "dilation", 1);
	jobj_num(jo, "time_s", &c->time_s, JREQ | JPOS);
	jobj_num(jo, "tflops", &c->tflops, JREQ | JPOS);
	read_impl(jo);
}

static void mem_entry(struct jobj *jo, void *out)
{
	struct profile_mem *m = out;
	copy_str(jo, "kernel", m->kernel, sizeof(m->kernel));
	m->dtype = read_dtype(jo);
	m->elements = int_num(jo, "elements", 1);
	m->row = int_num(jo, "row", 0);
	m->bytes = int_num(jo, "bytes", 1);
	jobj_num(jo, "time_s", &m->time_s, JREQ | JPOS);
	jobj_num(jo, "GBps", &m->GBps, JREQ | JPOS);
	jobj_long(jo, "samples", &m->samples, 1, 0);
}

static void attn_entry(struct jobj *jo, void *out)
{
	struct profile_attn *a = out;
	int e = 0;
	/* calib names unfused timings "unfused_..."; anything else is a
	 * fused kernel (cuDNN SDPA, FlashAttention) */
	a->fused = strncmp(read_impl(jo), "unfused", 7) != 0;
	jobj_enum(jo, "pass", attn_pass_names, &e, JREQ);
	a->bwd = e == 1;
	a->dtype = read_dtype(jo);
	a->b = int_num(jo, "b", 1);
	a->heads = int_num(jo, "heads", 1);
	a->s = int_num(jo, "s", 1);
	a->head_dim = int_num(jo, "head_dim", 1);
	jobj_bool(jo, "causal", &a->causal, JREQ);
	jobj_num(jo, "time_s", &a->time_s, JREQ | JPOS);
	jobj_num(jo, "tflops", &a->tflops, JREQ | JPOS);
	jobj_long(jo, "samples", &a->samples, 1, 0);
}

static void bw_entry(struct jobj *jo, void *out)
{
	struct profile_bw *b = out;
	int e = 0;
	jobj_enum(jo, "kind", bw_names, &e, JREQ);
	b->kind = (enum profile_bw_kind)e;
	b->bytes = int_num(jo, "bytes", 1);
	jobj_num(jo, "time_s", &b->time_s, JREQ | JPOS);
	jobj_num(jo, "GBps", &b->GBps, JREQ | JPOS);
}

/* Read root[key] (an optional array) into a new array of n entries of
 * size bytes each, calling entry() on every element. */
static void *load_section(struct jobj *root, const char *key, size_t size,
			  void (*entry)(struct jobj *, void *), int *n)
{
	json_t *arr, *v;
	char ap[300], ep[sizeof(ap) + 24];
	size_t i;
	struct jobj jo;

	*n = 0;
	if (jobj_array(root, key, &arr, ap, sizeof(ap), 0) != 1 || json_array_size(arr) == 0)
		return NULL;
	char *out = xcalloc(json_array_size(arr), size);
	json_array_foreach(arr, i, v) {
		snprintf(ep, sizeof(ep), "%s/%zu", ap, i);
		if (jobj_init(&jo, v, root->file, ep, root->d))
			continue;
		entry(&jo, out + (size_t)*n * size);
		jobj_end(&jo);
		(*n)++;
	}
	return out;
}

/* interference: a GEMM alone and beside a copy kernel. A GEMM that ran
 * faster beside the copy is a real measurement (on the H200 of
 * calib/profiles/h200-sxm5-141gb.json, 1.624 vs 1.703 ms: the board sat at
 * its 700 W cap and the clock moved between the two timings), so it loads;
 * the factor the engine uses is max(1, with / alone) (profile_interference()),
 * and a warning says the copy's slowdown was not seen. A ratio beyond
 * PROFILE_MAX_INTERFERENCE either way is no measurement. */
static void load_interference(struct jobj *root, struct profile *p)
{
	struct jobj jo;
	double lim = PROFILE_MAX_INTERFERENCE;

	if (jobj_child(root, "interference", &jo, 0) != 1)
		return;
	jobj_int(&jo, "copy_blocks", &p->interf_blocks, 1, JREQ);
	jobj_num(&jo, "gemm_alone_s", &p->interf_alone_s, JPOS | JREQ);
	if (jobj_num(&jo, "gemm_with_copy_s", &p->interf_with_s, JPOS | JREQ) == 1 &&
	    p->interf_alone_s > 0) {
		double a = p->interf_alone_s, w = p->interf_with_s;
		if (w > lim * a || w < a / lim)
			jobj_err(&jo, "gemm_with_copy_s", "must be within %g x of gemm_alone_s (%g s: a GEMM "
				 "slowed or sped up more than that by a copy is no measurement), got %g s",
				 lim, a, w);
		else if (w < a)
			diag_warn(root->d, root->file, "/interference/gemm_with_copy_s",
				  "the GEMM ran faster beside the copy kernel (%g s) than alone (%g s, "
				  "ratio %.3f): clock or power noise, no slowdown seen; compute beside "
				  "communication is priced by the SM-share model alone",
				  w, a, w / a);
	}
	jobj_end(&jo);
}

/* "samples" came with 1.1: a 1.0 file holding one has a key its version
 * does not know. */
static void check_samples(const struct profile *p, const char *path, struct diag *d)
{
	char jp[64];
	for (int i = 0; p->schema_minor < 1 && i < p->ngemm; i++)
		if (p->gemm[i].samples) {
			snprintf(jp, sizeof(jp), "/gemm/%d/samples", i);
			diag_err(d, path, jp, "unknown key in schema version 1.0 (1.1 adds it)");
		}
	for (int i = 0; p->schema_minor < 1 && i < p->nmem; i++)
		if (p->mem[i].samples) {
			snprintf(jp, sizeof(jp), "/memory_bound/%d/samples", i);
			diag_err(d, path, jp, "unknown key in schema version 1.0 (1.1 adds it)");
		}
	for (int i = 0; p->schema_minor < 1 && i < p->nattn; i++)
		if (p->attn[i].samples) {
			snprintf(jp, sizeof(jp), "/attention/%d/samples", i);
			diag_err(d, path, jp, "unknown key in schema version 1.0 (1.1 adds it)");
		}
}

struct profile *profile_load(const char *path, struct diag *d)
{
	struct profile *p = xcalloc(1, sizeof(*p));
	struct jobj jo;
	int before = diag_count(d);

	if (!p)
		return NULL;
	jload_copy_path(path, p->path, sizeof(p->path), d);
	json_t *root = jload_file(path, d);
	if (!root)
		goto err_free;
	if (jload_schema(root, path, d, "ddlsim.profile", 1, 1))
		goto err_json;
	sscanf(json_string_value(json_object_get(root, "schema_version")), "1.%d", &p->schema_minor);
	jobj_init(&jo, root, path, "", d);
	load_producer(&jo, p);
	load_gpu(&jo, p);
	load_measured(&jo, p);
	p->gemm = load_section(&jo, "gemm", sizeof(*p->gemm), gemm_entry, &p->ngemm);
	p->conv = load_section(&jo, "conv", sizeof(*p->conv), conv_entry, &p->nconv);
	p->mem = load_section(&jo, "memory_bound", sizeof(*p->mem), mem_entry, &p->nmem);
	p->attn = load_section(&jo, "attention", sizeof(*p->attn), attn_entry, &p->nattn);
	p->bw = load_section(&jo, "bandwidth", sizeof(*p->bw), bw_entry, &p->nbw);
	load_interference(&jo, p);
	jobj_end(&jo);
	check_samples(p, path, d);
	if (diag_count(d) != before)
		goto err_json;
	if (p->ngemm + p->nconv + p->nmem + p->nbw == 0) {
		diag_err(d, path, "", "profile holds no gemm, conv, memory_bound or bandwidth measurement");
		goto err_json;
	}
	json_decref(root);
	return p;

err_json:
	json_decref(root);
err_free:
	profile_destroy(p);
	return NULL;
}

void profile_destroy(struct profile *p)
{
	if (!p)
		return;
	free(p->gemm);
	free(p->conv);
	free(p->mem);
	free(p->attn);
	free(p->bw);
	free(p);
}

static void conv_out(const struct profile_conv *c, double *P, double *Q)
{
	*P = floor((c->h + 2 * c->pad - c->dilation * (c->r - 1) - 1) / c->stride) + 1;
	*Q = floor((c->w + 2 * c->pad - c->dilation * (c->s - 1) - 1) / c->stride) + 1;
}

void profile_conv_gemm_dims(const struct profile_conv *c, double *m, double *n, double *k)
{
	double P, Q;
	conv_out(c, &P, &Q);
	switch (c->pass) {
	case PROFILE_CONV_FWD:
		*m = c->n * P * Q, *n = c->k, *k = c->c * c->r * c->s;
		break;
	case PROFILE_CONV_BWD_DATA:
		*m = c->n * c->h * c->w, *n = c->c, *k = c->k * c->r * c->s;
		break;
	case PROFILE_CONV_BWD_FILTER:
		*m = c->k, *n = c->c * c->r * c->s, *k = c->n * P * Q;
		break;
	}
}

double profile_interference(const struct profile *p)
{
	if (p->interf_blocks <= 0 || !(p->interf_alone_s > 0))
		return 0;
	return p->interf_with_s > p->interf_alone_s ? p->interf_with_s / p->interf_alone_s : 1;
}

double profile_conv_flops(const struct profile_conv *c)
{
	double P, Q;
	conv_out(c, &P, &Q);
	return 2 * c->n * P * Q * c->k * c->c * c->r * c->s;
}
