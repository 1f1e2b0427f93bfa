/* dtype.c - element types on the host: names, sizes, and decoding of device data.
 *
 * The correctness checks copy device buffers back byte for byte and decode
 * them here, so the CPU references see exactly the values the GPU used
 * (no host re-implementation of the fill or of float rounding is needed).
 * Decoding is exact for every type: fp16, bf16 and e4m3 all widen to double
 * without rounding.
 */
#include <math.h>
#include <string.h>

#include "calib.h"

const char *dtype_name(enum calib_dtype dt)
{
	switch (dt) {
	case CALIB_FP32: return "fp32";
	case CALIB_TF32: return "tf32";
	case CALIB_FP16: return "fp16";
	case CALIB_BF16: return "bf16";
	case CALIB_FP8: return "fp8_e4m3";
	}
	return "?";
}

size_t dtype_size(enum calib_dtype dt)
{
	switch (dt) {
	case CALIB_FP32:
	case CALIB_TF32:
		return 4;
	case CALIB_FP16:
	case CALIB_BF16:
		return 2;
	case CALIB_FP8:
		return 1;
	}
	return 0;
}

enum kernels_dtype dtype_storage(enum calib_dtype dt)
{
	switch (dt) {
	case CALIB_FP32:
	case CALIB_TF32:
		return KERNELS_F32;
	case CALIB_FP16:
		return KERNELS_F16;
	case CALIB_BF16:
		return KERNELS_BF16;
	case CALIB_FP8:
		return KERNELS_E4M3;
	}
	return KERNELS_F32;
}

static double half_bits(uint16_t h)
{
	const int sign = h >> 15;
	const int exp = (h >> 10) & 0x1f;
	const int man = h & 0x3ff;
	double v;

	if (exp == 0)
		v = ldexp((double)man, -24);
	else if (exp == 31)
		v = man ? NAN : INFINITY;
	else
		v = ldexp((double)(man | 0x400), exp - 25);
	return sign ? -v : v;
}

static double e4m3_bits(uint8_t b)
{
	const int sign = b >> 7;
	const int exp = (b >> 3) & 0xf;
	const int man = b & 0x7;
	double v;

	if (exp == 0xf && man == 0x7)
		return NAN;
	if (exp == 0)
		v = ldexp((double)man, -9);
	else
		v = ldexp((double)(man | 0x8), exp - 10);
	return sign ? -v : v;
}

double dtype_load(enum kernels_dtype st, const void *buf, size_t i)
{
	const unsigned char *p = buf;

	switch (st) {
	case KERNELS_F32: {
		float f;

		memcpy(&f, p + 4 * i, 4);
		return f;
	}
	case KERNELS_F16: {
		uint16_t h;

		memcpy(&h, p + 2 * i, 2);
		return half_bits(h);
	}
	case KERNELS_BF16: {
		uint16_t h;
		uint32_t u;
		float f;

		memcpy(&h, p + 2 * i, 2);
		u = (uint32_t)h << 16;
		memcpy(&f, &u, 4);
		return f;
	}
	case KERNELS_E4M3:
		return e4m3_bits(p[i]);
	}
	return NAN;
}
