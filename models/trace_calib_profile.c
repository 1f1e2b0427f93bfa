/* trace_calib_profile: the calib profile a trace's priced calls make
 * (trace_calib.h): the trace's device as the profile's GPU, each entry's
 * row by kind (GEMM, memory-bound, attention), and the damaged events
 * said at their JSON paths before anything is written. Split from
 * trace_calib.c, which reads the calls. */
#include "trace_calib.h"

#include <string.h>
#include <time.h>

#include "gpu.h"
#include "profile.h"

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* The trace's deviceProperties (the device its kernels ran on) held to
 * what a GPU can be and a profile can hold: kineto copies them from
 * cudaDeviceProp, so anything else is a damaged trace. Returns 0 or -1
 * (each problem said). */
static int device_check(const struct kineto_trace *t, struct diag *d)
{
	const size_t name_max = sizeof(((struct profile *)0)->gpu_name) - 1;
	int rc = 0;
	if (!*t->gpu_name || strlen(t->gpu_name) > name_max)
		rc = diag_err(d, t->path, "/deviceProperties", "name: expected a GPU name of 1 to %zu "
			      "bytes, got %zu bytes", name_max, strlen(t->gpu_name));
	if (t->sm_count < 1 || t->sm_count > 100000)
		rc = diag_err(d, t->path, "/deviceProperties", "numSms: expected an integer of 1 to "
			      "100000 SMs, got %ld", t->sm_count);
	if (!(t->hbm_bytes >= 1 && t->hbm_bytes <= 1e15))
		rc = diag_err(d, t->path, "/deviceProperties", "totalGlobalMem: expected 1 to 1e15 "
			      "bytes, got %g", t->hbm_bytes);
	if (t->cc_major < 1 || t->cc_major > 99 || t->cc_minor < 0 || t->cc_minor > 99)
		rc = diag_err(d, t->path, "/deviceProperties", "computeMajor, computeMinor: expected "
			      "integers of 1 to 99 and 0 to 99 (a CUDA compute capability), got %ld "
			      "and %ld", t->cc_major, t->cc_minor);
	return rc;
}

static json_t *gpu_object(const struct trace_calib *tc, const struct trace_calib_opts *o, struct diag *d)
{
	const struct kineto_trace *t = tc->trace;
	char cc[16];
	if (t->has_device) {
		if (device_check(t, d))
			return NULL;
		snprintf(cc, sizeof(cc), "%ld.%ld", t->cc_major, t->cc_minor);
		return json_pack("{s:s, s:s, s:I, s:I}", "name", t->gpu_name, "compute_capability", cc,
				 "sm_count", (json_int_t)t->sm_count, "hbm_bytes", (json_int_t)t->hbm_bytes);
	}
	if (!o->gpu_name) {
		diag_err(d, t->path, "/deviceProperties", "the trace names no GPU (no deviceProperties: "
			 "PyTorch before 2.0? or an Nsight Systems export without TARGET_INFO_GPU) and "
			 "none was given: name its preset with --gpu "
			 "gpus/<name>.json (its SM count and memory are what the profile needs)");
		return NULL;
	}
	snprintf(cc, sizeof(cc), "%.1f", o->compute_capability);
	return json_pack("{s:s, s:s, s:I, s:I}", "name", o->gpu_name, "compute_capability", cc,
			 "sm_count", (json_int_t)o->sm_count, "hbm_bytes", (json_int_t)o->hbm_bytes);
}

static json_t *entry_json(const struct trace_calib_entry *e)
{
	char impl[128], ta[2] = { e->transa, 0 }, tb[2] = { e->transb, 0 };
	snprintf(impl, sizeof(impl), "trace:%s", e->op);
	if (e->mem)
		return json_pack("{s:s, s:s, s:I, s:I, s:I, s:f, s:f, s:i}", "kernel", e->kernel,
				 "dtype", profile_dtype_name(e->dtype), "elements", (json_int_t)e->elements,
				 "row", (json_int_t)e->row, "bytes", (json_int_t)e->bytes, "time_s", e->time_s,
				 "GBps", e->GBps, "samples", e->nt);
	if (e->attn)
		return json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:b, s:f, s:f, s:i}",
				 "impl", impl, "pass", e->bwd ? "bwd" : "fwd", "dtype", profile_dtype_name(e->dtype),
				 "b", (json_int_t)e->b, "heads", (json_int_t)e->heads, "s", (json_int_t)e->s,
				 "head_dim", (json_int_t)e->head_dim, "causal", e->causal, "time_s", e->time_s,
				 "tflops", e->tflops, "samples", e->nt);
	return json_pack("{s:s, s:I, s:I, s:I, s:s, s:s, s:f, s:f, s:s, s:i}",
			 "dtype", profile_dtype_name(e->dtype), "m", (json_int_t)(e->batch * e->m),
			 "n", (json_int_t)e->n, "k", (json_int_t)e->k, "transa", ta, "transb", tb,
			 "time_s", e->time_s, "tflops", e->tflops, "impl", impl, "samples", e->nt);
}

json_t *trace_calib_profile(const struct trace_calib *tc, const struct trace_calib_opts *o, struct diag *d)
{
	const struct kineto_trace *t = tc->trace;
	char method[256], date[32];
	int ngemm = 0;

	for (int i = 0; i < tc->ndamaged && i < TRACE_CALIB_DAMAGED_MAX; i++)
		diag_err(d, t->path, tc->damaged[i].jpath, "%s: %s", tc->damaged[i].op, tc->damaged[i].why);
	if (tc->ndamaged > TRACE_CALIB_DAMAGED_MAX)
		diag_err(d, t->path, t->events_path, "and %d more calls a sound trace cannot hold",
			 tc->ndamaged - TRACE_CALIB_DAMAGED_MAX);
	if (tc->ndamaged)
		return NULL;
	for (int i = 0; i < tc->ne; i++)
		ngemm += !tc->e[i].attn && !tc->e[i].mem;
	if (ngemm == 0) {
		diag_err(d, t->path, t->events_path, "no GEMM priced (%d calls skipped, %d in the warm-up "
			 "step): a profile needs one (record the trace with record_shapes=True%s and at "
			 "least one aten::mm, addmm, bmm or baddbmm on the GPU)",
			 tc->calls_skipped, tc->calls_warmup,
			 strcmp(t->events_path, "/traceEvents") ? ", under torch.autograd.profiler.emit_nvtx "
			 "for Nsight Systems" : "");
		return NULL;
	}
	json_t *gpu = gpu_object(tc, o, d);
	if (!gpu)
		return NULL;
	if (o->date_utc)
		snprintf(date, sizeof(date), "%s", o->date_utc);
	else {
		time_t now = time(NULL);
		struct tm tm;
		gmtime_r(&now, &tm);
		strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	}
	snprintf(method, sizeof(method), "%s %.120s, %d kernels, medians",
		 strcmp(t->events_path, "/traceEvents") ? "Nsight Systems export" : "PyTorch profiler trace",
		 base_name(t->path), tc->kernels_priced);
	json_t *gemm = json_array(), *attn = json_array(), *mem = json_array();
	for (int i = 0; i < tc->ne; i++)
		json_array_append_new(tc->e[i].attn ? attn : tc->e[i].mem ? mem : gemm, entry_json(&tc->e[i]));
	return json_pack("{s:s, s:s, s:{s:s, s:s}, s:o, s:{s:s, s:s, s:i, s:i, s:b}, s:o, s:o, s:o}",
			 "schema", "ddlsim.profile", "schema_version", "1.1",
			 "producer", "name", "ddlsim-trace-import", "version",
			 o->producer_version ? o->producer_version : "?",
			 "gpu", gpu,
			 "measured", "date_utc", date, "method", method,
			 "warmup_runs", tc->dropped_first ? 1 : 0,
			 "timed_runs", tc->steps_timed,
			 "quick", false,
			 "gemm", gemm, "memory_bound", mem, "attention", attn);
}
