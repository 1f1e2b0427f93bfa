/* report_kineto: the report's per-kernel table (cost_model.ops_per_microbatch,
 * one micro-batch of every block) written as a PyTorch profiler trace
 * (`ddlsim run --format kineto`: DIR/kineto.pt.trace.json), so that
 * `ddlsim calib-trace` reads it back as it reads a real job's trace.
 *
 * It is the table laid end to end on one thread and one stream, inside
 * one ProfilerStep#1: not the engine's multi-stream timeline (--trace),
 * whose tasks hold no op shapes. Each op with a launch is a cpu_op named
 * as eager PyTorch names the op calib-trace reads for it (trace_calib.h),
 * with the args PyTorch records with record_shapes=True ("Input Dims",
 * "Input type", "Concrete Inputs"), its kernels' launches
 * (cudaLaunchKernel, "External id", "correlation") and its kernels on the
 * GPU, as Kineto writes them (kineto.h): an op standing for k kernels is k
 * kernels of time / k each. The GPU is the topology's, in
 * deviceProperties. The mapping:
 *
 *   table op                              cpu_op                 inputs
 *   GEMM, batch 1 (fp8: _scaled_mm)       aten::mm               [m,k] [k,n]
 *   GEMM, batch b                         aten::bmm              [b,m,k] [b,k,n]
 *   fused attention (no window)           aten::_scaled_dot_product_flash_attention(_backward)
 *                                                                q [1, b h, s, d]
 *   layernorm_fwd, rmsnorm_fwd            aten::native_layer_norm, aten::rms_norm
 *   softmax_fwd, softmax_bwd              aten::_softmax, aten::_softmax_backward_data
 *   anything else                         ddlsim::<name>         (calib-trace skips it)
 *
 * TF32 GEMMs carry "tf32" in their kernel's name (calib-trace's sign);
 * "ddlsim op" in each cpu_op's args names the table row. Times are printed
 * as Kineto prints them, microseconds to the nanosecond. */
#include "report.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

#include "report-private.h"
#include "topology.h"
#include "inputs.h"
#include "kineto.h"
#include "xalloc.h"

static json_t *dims(int n, const double *v)
{
	json_t *a = json_array();
	for (int i = 0; i < n; i++)
		json_array_append_new(a, json_integer((json_int_t)llround(v[i])));
	return a;
}

/* A GEMM's inputs ([m,k] [k,n], batched [b,m,k] [b,k,n]) of type t into
 * in and ty, its op's name into name. */
static void gemm_args(const struct op_timing *o, const char *t, json_t *in, json_t *ty, char *name, size_t nn)
{
	double a[3], b[3];
	bool bat = o->batch > 1;
	a[0] = o->batch, a[bat] = o->m, a[bat + 1] = o->k;
	b[0] = o->batch, b[bat] = o->k, b[bat + 1] = o->n;
	json_array_append_new(in, dims(2 + bat, a));
	json_array_append_new(in, dims(2 + bat, b));
	json_array_append_new(ty, json_string(t));
	json_array_append_new(ty, json_string(t));
	snprintf(name, nn, "%s", bat ? "aten::bmm" : o->dtype == DTYPE_FP8 ? "aten::_scaled_mm"
					 : "aten::mm");
}

/* Fused attention's inputs (flash attention's, forward or backward) of
 * type t into in and ty, the causal flag among the concrete inputs
 * (returned; caller owns), its op's name into name. */
static json_t *attn_args(const struct op_timing *o, const char *t, json_t *in, json_t *ty, char *name, size_t nn)
{
	bool bwd = !strcmp(o->pass, "bwd");
	double q[4] = { 1, o->batch, o->m, o->k };
	int nin = bwd ? 16 : 8, qi = bwd ? 1 : 0, causal_at = bwd ? 11 : 4;
	json_t *ci = json_array();
	for (int i = 0; i < nin; i++) {
		bool tensor = i >= qi && i < qi + 3 + bwd;
		json_array_append_new(in, tensor || (bwd && i == 0) ? dims(4, q) : json_array());
		json_array_append_new(ty, json_string(tensor || (bwd && i == 0) ? t : "Scalar"));
		json_array_append_new(ci, json_string(i == causal_at ? (o->causal ? "True" : "False") : ""));
	}
	snprintf(name, nn, "aten::_scaled_dot_product_flash_attention%s", bwd ? "_backward" : "");
	return ci;
}

/* A norm's inputs after x (layernorm: weight and bias; rmsnorm: weight)
 * into in, its shape into ci, its op's name into name. */
static void norm_args(const struct op_timing *o, json_t *in, json_t *ci, char *name, size_t nn)
{
	const char *mk = o->membound_kind;
	double w[1] = { o->row };
	char nshape[48];
	snprintf(nshape, sizeof(nshape), "[%.0f]", o->row);
	bool ln = mk[0] == 'l';
	json_array_append_new(in, json_array());
	json_array_append_new(in, dims(1, w));
	if (ln)
		json_array_append_new(in, dims(1, w));
	json_array_append_new(in, json_array());
	json_array_append_new(ci, json_string(nshape));
	snprintf(name, nn, "%s", ln ? "aten::native_layer_norm" : "aten::rms_norm");
}

/* A softmax's inputs after x (backward: the output first) into in and
 * ci, its op's name into name. */
static void softmax_args(const struct op_timing *o, const double *x, json_t *in, json_t *ci, char *name,
			 size_t nn)
{
	bool bwd = o->membound_kind[8] == 'b';
	if (bwd) {
		json_array_append_new(in, dims(2, x));
		json_array_append_new(ci, json_string(""));
	}
	json_array_append_new(in, json_array());
	json_array_append_new(in, json_array());
	json_array_append_new(ci, json_string("-1"));
	snprintf(name, nn, "%s", bwd ? "aten::_softmax_backward_data" : "aten::_softmax");
}

/* A norm's or softmax's inputs ([rows, row] first) of type t into in and
 * ty, its op's name into name; returns the concrete inputs (caller owns),
 * NULL for another memory-bound kind (in then holds x, ty nothing). */
static json_t *membound_args(const struct op_timing *o, const char *t, json_t *in, json_t *ty, char *name,
			     size_t nn)
{
	const char *mk = o->membound_kind;
	double x[2] = { o->m / o->row, o->row };
	json_array_append_new(in, dims(2, x));
	json_t *ci = json_array();
	json_array_append_new(ci, json_string(""));
	if (!strcmp(mk, "layernorm_fwd") || !strcmp(mk, "rmsnorm_fwd"))
		norm_args(o, in, ci, name, nn);
	else if (!strcmp(mk, "softmax_fwd") || !strcmp(mk, "softmax_bwd"))
		softmax_args(o, x, in, ci, name, nn);
	else {
		json_decref(ci);
		return NULL;
	}
	for (size_t i = 0; i < json_array_size(in); i++)
		json_array_append_new(ty, json_string(json_array_size(json_array_get(in, i)) ? t : "Scalar"));
	return ci;
}

/* args of a table row's cpu_op: name in *name, NULL when calib-trace reads
 * none for it (then a ddlsim:: op). */
static json_t *op_args(const struct op_timing *o, char *name, size_t nn)
{
	const char *t = kineto_torch_type(o->dtype);
	json_t *in = json_array(), *ty = json_array(), *ci = NULL;
	if (!t)
		goto other;
	if (o->kind == OP_GEMM) {
		gemm_args(o, t, in, ty, name, nn);
		goto done;
	}
	if (o->kind == OP_ATTN && o->window <= 0) {
		ci = attn_args(o, t, in, ty, name, nn);
		goto done;
	}
	if (o->kind == OP_MEMBOUND && o->row > 0 && o->m / o->row >= 1 &&
	    (ci = membound_args(o, t, in, ty, name, nn)))
		goto done;
other:
	json_decref(in);
	json_decref(ty);
	snprintf(name, nn, "ddlsim::%s", o->name);
	return json_object();
done: {
	json_t *args = json_pack("{s:o, s:o}", "Input Dims", in, "Input type", ty);
	if (ci)
		json_object_set_new(args, "Concrete Inputs", ci);
	return args;
}
}

static json_t *event(const char *cat, const char *name, int pid, int tid, double ts, double dur, json_t *args)
{
	return json_pack("{s:s, s:s, s:s, s:i, s:i, s:f, s:f, s:o}", "ph", "X", "cat", cat, "name", name,
			 "pid", pid, "tid", tid, "ts", round(ts * 1e3) / 1e3, "dur", round(dur * 1e3) / 1e3,
			 "args", args);
}

char *report_kineto_render(const struct result *r)
{
	const struct gpu_spec *g = &inputs_topology(r->in)->gpu;
	json_t *ev = json_array();
	double t = 1, cc = g->compute_capability;
	long long ext = 2, corr = 1;

	for (int i = 0; i < r->nops; i++) {
		const struct op_timing *o = &r->ops[i];
		char name[96], row[120];
		if (o->kernels < 1 || !(o->time_s > 0))
			continue;
		double us = o->time_s * 1e6, k_us = us / o->kernels;
		json_t *args = op_args(o, name, sizeof(name));
		snprintf(row, sizeof(row), "%s %s %s", o->block, o->pass, o->name);
		json_object_set_new(args, "External id", json_integer(ext));
		json_object_set_new(args, "ddlsim op", json_string(row));
		json_array_append_new(ev, event("cpu_op", name, 1, 1, t, us + 2 * o->kernels, args));
		for (int k = 0; k < o->kernels; k++, corr++) {
			double at = t + 1 + k * (k_us + 2);
			const char *kn = o->kind == OP_GEMM && o->dtype == DTYPE_TF32 ? "ddlsim_gemm_tf32f32"
										: "ddlsim_kernel";
			json_array_append_new(ev, event("cuda_runtime", "cudaLaunchKernel", 1, 1, at, 1,
							json_pack("{s:I, s:I}", "External id", ext, "correlation", corr)));
			json_array_append_new(ev, event("kernel", kn, 0, 7, at + 1, k_us,
							json_pack("{s:I, s:I, s:i, s:i}", "External id", ext,
								  "correlation", corr, "device", 0, "stream", 7)));
		}
		t += us + 2 * o->kernels + 1;
		ext++;
	}
	json_array_insert_new(ev, 0, event("user_annotation", "ProfilerStep#1", 1, 1, 0, t + 1,
					   json_pack("{s:i}", "External id", 1)));
	json_t *root = json_pack("{s:i, s:[{s:i, s:s, s:f, s:i, s:i, s:i}], s:s, s:o}", "schemaVersion", 1,
				 "deviceProperties", "id", 0, "name", g->name, "totalGlobalMem", g->hbm_bytes,
				 "computeMajor", (int)cc, "computeMinor", (int)llround(cc * 10) % 10,
				 "numSms", (int)g->sm_count, "displayTimeUnit", "ms", "traceEvents", ev);
	char *s = root ? json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER) : NULL;
	json_decref(root);
	if (!s)
		return NULL;
	char *out = xasprintf("%s\n", s);
	free(s);
	return out;
}
