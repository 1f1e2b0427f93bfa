/* gpu: dtype helpers (see gpu.h). */
#include "gpu.h"

static const char *const names[DTYPE_N] = { "fp32", "tf32", "fp16", "bf16", "fp8" };
static const double bytes[DTYPE_N] = { 4, 4, 2, 2, 1 };

const char *dtype_name(enum dtype t)
{
	return (t >= 0 && t < DTYPE_N) ? names[t] : "?";
}

double dtype_bytes(enum dtype t)
{
	return (t >= 0 && t < DTYPE_N) ? bytes[t] : 0;
}
