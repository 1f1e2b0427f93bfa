/* cmd_calib_trace: `ddlsim calib-trace TRACE.json -o PROFILE.json`, a
 * calib profile from a PyTorch profiler trace of the user's own job, or
 * from an Nsight Systems SQLite export of it (told apart by the SQLite
 * header; models/nsys.h reads it, GEMMs only, their dtype from --dtype).
 *
 * The trace is read by models/kineto.h, its GEMM and attention calls
 * priced by models/trace_calib.h; the profile (schema ddlsim.profile 1.1)
 * is written atomically (util/atomic_file.h), read back by the profile
 * loader before it is published, and a summary says what was priced,
 * dropped and skipped. The GPU comes from the trace's deviceProperties,
 * or, without them, from the preset --gpu names; nothing is invented.
 * With --gpu, an entry faster than that GPU's peak (a float GEMM that ran
 * as TF32, a trace of another GPU) is refused before anything is written. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "cli.h"
#include "ddlsim-config.h"
#include "diag.h"
#include "gpu.h"
#include "kineto.h"
#include "nsys.h"
#include "options.h"
#include "profile.h"
#include "samefile.h"
#include "topology.h"
#include "trace_calib.h"

struct calib_trace_opts {
	const char *out, *gpu, *dtype;
	bool keep_first, tf32, quiet;
};

static const struct opt calib_trace_options[] = {
	OPT_FILE('o', "out", struct calib_trace_opts, out, "PROFILE.json",
		 "profile to write (required)"),
	OPT_FILE(0, "gpu", struct calib_trace_opts, gpu, "PRESET.json",
		 "GPU preset (gpus/*.json): every entry is checked against\n"
		 "its peaks before writing; for a trace without\n"
		 "deviceProperties, its name, SMs, memory, compute capability"),
	OPT_FLAG(0, "keep-first-step", struct calib_trace_opts, keep_first,
		 "keep the first ProfilerStep's calls (dropped as warm-up\n"
		 "when the trace holds two steps or more)"),
	OPT_FLAG(0, "tf32", struct calib_trace_opts, tf32,
		 "float GEMMs ran on TF32 tensor cores (the job set\n"
		 "torch.backends.cuda.matmul.allow_tf32 or\n"
		 "set_float32_matmul_precision('high')); default fp32"),
	OPT_STRING(0, "dtype", struct calib_trace_opts, dtype, "fp32|tf32|fp16|bf16|fp8",
		   "an Nsight Systems export's GEMM dtype (required for one:\n"
		   "its NVTX ranges carry shapes, not dtypes; under autocast\n"
		   "the autocast dtype)"),
	OPT_FLAG('q', "quiet", struct calib_trace_opts, quiet, "no summary"),
	OPT_END(),
};

const struct opt_cmd cmd_calib_trace_opts = {
	.name = "calib-trace",
	.summary = "a profile from a PyTorch profiler trace of your own job",
	.args = "TRACE.json",
	.description =
		"Reads a torch.profiler trace (Chrome-trace JSON, export_chrome_trace() or the\n"
		"TensorBoard plugin's file, recorded with record_shapes=True), gives each GPU\n"
		"kernel to the innermost GEMM (aten::mm, addmm, bmm, baddbmm, _scaled_mm; matmul\n"
		"and linear when they launched it), fused attention op (SDPA flash, efficient,\n"
		"cuDNN; flash_attn), layer norm, fused RMSNorm, softmax, GELU or residual add\n"
		"that launched it, and writes one profile entry per shape at the median of its\n"
		"calls, the first ProfilerStep dropped as warm-up. Scenarios name the profile\n"
		"with \"compute\": {\"cost\": \"profile\", \"profile\": PATH}.\n"
		"The summary lists every call not priced and why, and the NCCL kernels by\n"
		"collective and message size (not in the profile). See docs/howto.md,\n"
		"\"Calibrate from your own trace\".\n"
		"An Nsight Systems report exported with `nsys export --type sqlite` (the job\n"
		"run under torch.autograd.profiler.emit_nvtx(record_shapes=True), nsys profile\n"
		"-t cuda,nvtx) is read too, its GEMMs only, in the dtype --dtype names; the\n"
		"summary adds how the host issued its launches.\n",
	.options = calib_trace_options,
	.epilogue =
		"examples:\n"
		"  ddlsim calib-trace trace.json -o my-h100.json\n"
		"  ddlsim calib-trace old-trace.json -o p.json --gpu gpus/a100-sxm4-80gb.json --tf32\n"
		"  ddlsim calib-trace report.sqlite -o my-h100.json --dtype bf16\n\n"
		"exit codes: 0 ok, 1 the profile could not be written, 2 usage, 3 invalid trace\n"
		"or nothing to price\n",
	.size = sizeof(struct calib_trace_opts),
};

/* Write root to path through the atomic writer, after checking that the
 * profile loader reads the staged file. */
static int write_profile(json_t *root, const char *path, struct diag *d)
{
	struct atomic_file af = { 0 };
	int e;
	if ((e = atomic_file_open(&af, path)))
		return diag_errf(d, "%s: cannot write: %s", path, atomic_file_strerror(-e)), EXIT_FAIL;
	if (json_dumpf(root, af.f, JSON_INDENT(1) | JSON_PRESERVE_ORDER) || fputc('\n', af.f) == EOF ||
	    (e = atomic_file_stage(&af))) {
		atomic_file_abort(&af);
		return diag_errf(d, "%s: cannot write: %s", path, atomic_file_strerror(e ? -e : EIO)),
		       EXIT_FAIL;
	}
	struct profile *p = profile_load(af.tmp, d);
	if (!p) {
		atomic_file_abort(&af);
		return diag_errf(d, "%s: BUG: the profile written does not load (above)", path),
		       EXIT_FAIL;
	}
	profile_destroy(p);
	if ((e = atomic_file_publish(&af, 1)))
		return diag_errf(d, "%s: cannot write: %s", path, atomic_file_strerror(-e)), EXIT_FAIL;
	return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n > m && !strcmp(s + n - m, suffix);
}

/* A file that is no SQLite named as an Nsight Systems file: the report
 * itself, or an export that is empty or damaged (not read as JSON, whose
 * error would not say so). 0, or -1 after reporting. */
static int refuse_nsys_name(const char *path, struct diag *d)
{
	if (ends_with(path, ".nsys-rep") || ends_with(path, ".qdrep"))
		return diag_err(d, path, "", "an Nsight Systems report, whose format is not published: export "
				"it first with `nsys export --type sqlite %s` and give the .sqlite file", path);
	if (ends_with(path, ".sqlite"))
		return diag_err(d, path, "", "no SQLite database (expected the header \"SQLite format 3\"): "
				"an empty or damaged Nsight Systems export?");
	return 0;
}

/* The trace: an Nsight Systems export (the SQLite header) with its
 * GEMMs' dtype from --dtype, else a PyTorch profiler trace. NULL after
 * reporting (*rc set for a usage error). */
static struct kineto_trace *load_trace(const char *path, const struct calib_trace_opts *a,
				       struct trace_calib_opts *o, struct diag *d, int *rc)
{
	char why[1200];
	int kind = nsys_sniff(path, why, sizeof(why));
	bool sql = kind > 0;
	int dt = -1;
	if (kind < 0) {         /* what is wrong with the file before --dtype */
		diag_err(d, path, "", "%s", why);
		return NULL;
	}
	if (!sql && refuse_nsys_name(path, d))
		return NULL;
	for (int i = 0; a->dtype && i <= DTYPE_FP8; i++)
		if (!strcmp(a->dtype, dtype_names[i]))
			dt = i;
	if (!sql && a->dtype) {
		*rc = cli_usage_error("calib-trace --dtype: for an Nsight Systems export only, and '%s' is "
				      "no SQLite file (a PyTorch profiler trace records each input's dtype)",
				      path);
		return NULL;
	}
	if (!sql)
		return kineto_load(path, trace_calib_ops, d);
	if (dt < 0) {
		*rc = cli_usage_error(a->dtype ? "calib-trace --dtype: expected fp32, tf32, fp16, bf16 or fp8"
					       : "calib-trace: an Nsight Systems export's NVTX ranges carry "
						 "shapes but no dtypes: name the GEMMs' with --dtype "
						 "fp32|tf32|fp16|bf16|fp8");
		return NULL;
	}
	o->float_as_tf32 = o->float_as_tf32 || dt == DTYPE_TF32;
	/* tf32: fp32 tensors ("float") on TF32 tensor cores */
	return nsys_load(path, trace_calib_gemm_ops,
			 dt == DTYPE_TF32 ? "float" : kineto_torch_type((enum dtype)dt),
			 a->quiet ? NULL : stdout, d);
}

int cmd_calib_trace(int argc, char **argv)
{
	struct calib_trace_opts a = { 0 };
	const char **pos = calloc((size_t)argc + 1, sizeof(*pos));
	struct trace_calib_opts o = { .producer_version = DDLSIM_VERSION };
	struct gpu_spec g = { 0 };
	struct diag d;
	int n = 0, rc;

	diag_init(&d, stderr);
	if ((rc = opt_parse(&cmd_calib_trace_opts, argc, argv, &a, pos, &n)))
		goto out;
	if (n != 1 || !a.out) {
		rc = cli_usage_error("'calib-trace' needs one trace and --out PROFILE.json");
		goto out;
	}
	if (!strcmp(a.out, "-")) {
		rc = cli_usage_error("calib-trace --out: expected a file, got '-' (the profile is read "
				     "back from it before it is published)");
		goto out;
	}
	if ((rc = cli_check_input_name(pos[0])) || (rc = cli_check_output(a.out)))
		goto out;
	struct samefile *sf = samefile_create();
	samefile_input(sf, "the trace", pos[0]);
	samefile_input(sf, "the GPU preset", a.gpu);
	samefile_output(sf, "--out", a.out);
	rc = cli_check_samefile(sf);
	samefile_destroy(sf);
	if (rc)
		goto out;
	rc = EXIT_INPUT;
	if (a.gpu) {
		if (topology_gpu_preset_load(a.gpu, &g, &d))
			goto out;
		o.gpu_name = g.name, o.sm_count = g.sm_count, o.hbm_bytes = g.hbm_bytes;
		o.compute_capability = g.compute_capability;
	}
	o.keep_first_step = a.keep_first, o.float_as_tf32 = a.tf32;
	struct kineto_trace *t = load_trace(pos[0], &a, &o, &d, &rc);
	if (!t)
		goto out;
	struct trace_calib *tc = trace_calib_build(t, &o);
	if (!a.quiet)
		trace_calib_summary(tc, a.gpu ? &g : NULL, stdout);
	json_t *root = trace_calib_profile(tc, &o, &d);
	if (root && a.gpu && trace_calib_check_peak(tc, &g, a.out, &d)) {
		json_decref(root);
		root = NULL;
	}
	if (root) {
		rc = write_profile(root, a.out, &d);
		if (!rc && !a.quiet)
			printf("wrote %s\n", a.out);
	}
	json_decref(root);
	trace_calib_destroy(tc);
	kineto_destroy(t);
out:
	diag_finish(&d);
	free(pos);
	return rc;
}
