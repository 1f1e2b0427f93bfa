/* gpu: derived facts of a GPU description (see gpu.h): GEMM maxima by
 * dtype and library, SM margins, and the clock and power under a board
 * power limit. */
#include "gpu.h"

#include <stddef.h>

const char *const gemm_lib_names[GEMM_LIB_N + 1] = { "current", "cublas11", NULL };

double gpu_gemm_eff_max(const struct gpu_spec *g, enum dtype dt)
{
	if (dt == DTYPE_FP8 && g->gemm_eff_max_fp8 > 0)
		return g->gemm_eff_max_fp8;
	if (dt == DTYPE_MXFP8 && g->gemm_eff_max_mxfp8 > 0)
		return g->gemm_eff_max_mxfp8;
	if (dt == DTYPE_NVFP4 && g->gemm_eff_max_nvfp4 > 0)
		return g->gemm_eff_max_nvfp4;
	return g->gemm_eff_max;
}

double gpu_gemm_eff_max_lib(const struct gpu_spec *g, enum dtype dt, enum gemm_lib lib)
{
	if (!dtype_is_te_low(dt) && lib > GEMM_LIB_CURRENT && lib < GEMM_LIB_N && g->gemm_lib_max[lib] > 0)
		return g->gemm_lib_max[lib];
	return gpu_gemm_eff_max(g, dt);
}

double gpu_gemm_mainloop_max(const struct gpu_spec *g, enum dtype dt, enum gemm_lib lib)
{
	double e = gpu_gemm_eff_max_lib(g, dt, lib);
	if (g->gemm_mainloop_max > 0 && e == g->gemm_eff_max && !dtype_is_te_low(dt) &&
	    dt != DTYPE_FP8)
		return g->gemm_mainloop_max;
	return e;
}

bool gpu_has_flash(const struct gpu_spec *g)
{
	return g->flash_fwd_max > 0 && g->flash_bwd_max > 0;
}

double gpu_sm_margin_slowdown(long sm_count, long margin_sms)
{
	if (margin_sms <= 0 || margin_sms >= sm_count)
		return 1;
	return (double)sm_count / (double)(sm_count - margin_sms);
}

double gpu_power_cap_clock_ratio(const struct gpu_spec *g)
{
	double cap = g->power_cap_W;
	int n = g->cap_n;
	if (!(cap > 0) || n < 2 || (g->tdp_W > 0 && cap >= g->tdp_W))
		return 1;
	if (cap <= g->cap_W[0])
		return g->cap_clock[0];
	for (int i = 1; i < n; i++)
		if (cap <= g->cap_W[i]) {
			double f = (cap - g->cap_W[i - 1]) / (g->cap_W[i] - g->cap_W[i - 1]);
			return g->cap_clock[i - 1] + f * (g->cap_clock[i] - g->cap_clock[i - 1]);
		}
	return g->cap_clock[n - 1];
}
