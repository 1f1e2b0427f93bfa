/* precision: dtype table and mixed-precision policy (see precision.h). */
#include "precision.h"

#include <string.h>

const char *const dtype_names[DTYPE_N + 1] = { "fp32", "tf32", "fp16", "bf16", "fp8",
						"mxfp8", "nvfp4", NULL };
/* mxfp8: 1 byte + an E8M0 scale per 32; nvfp4: half a byte + an E4M3 scale
 * per 16 (precision.h) */
static const double bytes[DTYPE_N] = { 4, 4, 2, 2, 1, 1 + 1.0 / 32, 0.5 + 1.0 / 16 };

const char *dtype_name(enum dtype t)
{
	return ((int)t >= 0 && t < DTYPE_N) ? dtype_names[t] : "?";
}

double dtype_bytes(enum dtype t)
{
	return ((int)t >= 0 && t < DTYPE_N) ? bytes[t] : 0;
}

bool dtype_is_te_low(enum dtype t)
{
	return t == DTYPE_FP8 || t == DTYPE_MXFP8 || t == DTYPE_NVFP4;
}

enum dtype precision_weight_dtype(enum dtype training)
{
	return training == DTYPE_TF32 ? DTYPE_FP32 : dtype_is_te_low(training) ? DTYPE_BF16 : training;
}

void precision_init(struct precision *p, enum dtype training, bool fp8_comm)
{
	bool full = training == DTYPE_FP32 || training == DTYPE_TF32;
	bool low = dtype_is_te_low(training);

	memset(p, 0, sizeof(*p));
	p->training = training;
	p->gemm = training;
	p->head_gemm = low ? DTYPE_BF16 : training;
	p->activation = precision_weight_dtype(training);
	p->weight = p->activation;
	p->layer_weight = p->weight;
	p->saved_gemm_input = low ? training : p->activation;
	p->tp_comm = training == DTYPE_FP8 && fp8_comm ? DTYPE_FP8 : p->activation;
	p->fp8 = low;
	p->fp8_weight_copy_bytes = low ? 2 * dtype_bytes(training) : 0;
	p->optimizer_bytes = full ? 8 : 12;
	/* Adam reads and writes fp32 master, momentum and variance (24 B),
	 * reads the fp32 gradient (4) and writes the 16-bit weights (2) or,
	 * in fp32, updates the weights in place: 34 or 28 bytes; under fp8
	 * TE then refreshes the fp8 weight and transpose from the bf16
	 * weights (read 2, write 1 + 1; mxfp8, nvfp4: their bytes). */
	p->optimizer_step_bytes = full ? 28 : 34;
	p->optimizer_copy_bytes = full ? 0 : 6;  /* read fp32 master, write 16-bit */
	if (p->fp8)
		p->optimizer_step_bytes += 2 + p->fp8_weight_copy_bytes;
}

void precision_bf16_moments(struct precision *p)
{
	p->optimizer_bytes -= 4;
	p->optimizer_step_bytes -= 8;
}

void precision_master_remainders(struct precision *p)
{
	if (p->weight != DTYPE_BF16)
		return;
	p->optimizer_bytes -= 2;  /* int16 remainder for the fp32 master's 4 */
}

void precision_fp8_params(struct precision *p)
{
	if (!p->fp8 || p->training != DTYPE_FP8 || p->layer_weight == DTYPE_FP8)
		return;
	p->layer_weight = DTYPE_FP8;
	p->optimizer_step_bytes -= 2 + 2;  /* no bf16 weight write, no re-read to cast */
	p->optimizer_copy_bytes -= 2 + 2;
}
