/* bounds: the physical range of every number ddlsim reads (see bounds.h). */
#include "bounds.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct bound table[] = {
	{ "sigma", 0, 2, "" },
	{ "slowdown", 0, 1000, "x" },
	{ "factor", 0, 1000, "x" },
	{ "latency_factor", 0, 1e6, "x" },
	{ "bw_factor", 1e-6, 1e6, "x" },
	{ "capacity_factor", 0, 1000, "x" },
	{ "oversubscription", 0, 1000, "x" },
	{ "pue", 0, 10, "" },
	{ "zipf_s", 0, 100, "" },
	{ "usd_per_gpu_hour", 0, 1e4, "USD/GPU-hour" },
	{ "usd_per_kWh", 0, 1000, "USD/kWh" },
	{ "train_tokens", 0, 1e18, "tokens" },
	{ "dataset_tokens", 0, 1e18, "tokens" },
	{ "seq_len", 0, 2147483647, "tokens" },
	{ "global_batch", 0, 2147483647, "samples" },
	{ "tflops", 1e-6, 1e6, "TFLOP/s" },
	{ "GBps", 1e-6, 1e12, "GB/s" },
	{ "tflops_per_gpu", 1e-6, 1e6, "TFLOP/s" },
	{ "*_tflops_per_gpu", 1e-6, 1e6, "TFLOP/s" },
	{ "*_us", 0, 1e6, "us" },
	{ "*_s", 1e-12, 1e9, "s" },
	{ "*_days", 0, 36500, "days" },
	{ "*_per_hour", 0, 1e4, "per hour" },
	{ "*_GBps", 1e-6, 1e12, "GB/s" },
	{ "*_Gbps", 1e-6, 8e12, "Gbit/s" },
	{ "*_W", 0, 1e8, "W" },
	{ "*_MB", 0, 1e9, "MB" },
	{ "*_GB", 0, 1e7, "GB" },
	{ "*_GFLOP", 0, 1e12, "GFLOP" },
	{ "*_usd", 0, 1e13, "USD" },
	{ NULL, 0, 1e30, "" },
};

/* Sizes bounded by another size of their file (bounds.h's second table). */
static const struct {
	const char *key, *of;
	double max;
	const char *why;
} ratios[] = {
	{ "mla/kv_lora_rank", "hidden_size", 1, "MLA's latent compresses the hidden state; DeepSeek-V2 "
	  "uses 512 of 5120" },
	{ "mla/q_lora_rank", "hidden_size", 1, "the query's latent compresses the hidden state; "
	  "DeepSeek-V2 uses 1536 of 5120" },
	{ "finetune/rank", "the narrowest side of an adapted weight", 1, "a LoRA update B A of a d x k "
	  "weight has rank at most min(d, k)" },
};

static bool matches(const char *pattern, const char *key)
{
	if (pattern[0] != '*')
		return !strcmp(pattern, key);
	size_t np = strlen(pattern + 1), nk = strlen(key);
	return nk > np && !strcmp(key + nk - np, pattern + 1);
}

const struct bound *bound_of(const char *key)
{
	const struct bound *b;
	/* exact names first: "zipf_s" is no duration */
	for (b = table; b->key; b++)
		if (b->key[0] != '*' && key && matches(b->key, key))
			return b;
	for (b = table; b->key; b++)
		if (b->key[0] == '*' && key && matches(b->key, key))
			return b;
	return b;
}

bool bound_check(const char *key, double x, char *msg, unsigned long n)
{
	const struct bound *b = bound_of(key);
	const char *sp = b->unit[0] ? " " : "";
	if (!isfinite(x)) {
		snprintf(msg, n, "expected a finite number, got %g", x);
		return false;
	}
	if (fabs(x) > b->max) {
		snprintf(msg, n, "must be at most %g%s%s%s, got %g", b->max, sp, b->unit,
			 b->key ? "" : " (no quantity ddlsim models is larger)", x);
		return false;
	}
	if (x != 0 && fabs(x) < b->tiny) {
		snprintf(msg, n, "must be 0 or at least %g%s%s, got %g", b->tiny, sp, b->unit, x);
		return false;
	}
	return true;
}

/* x as %g, or a whole number that %g would round with all its digits
 * (a derived 4294967297 is no 4.29497e+09). */
static const char *exact(double x, char *buf, size_t n)
{
	snprintf(buf, n, "%g", x);
	if (strtod(buf, NULL) != x && x == floor(x) && fabs(x) < 1e17)
		snprintf(buf, n, "%.0f", x);
	return buf;
}

bool bound_check_derived(const char *key, double x, const char *how, char *msg, unsigned long n)
{
	const struct bound *b = bound_of(key);
	const char *sp = b->unit[0] ? " " : "";
	if (isfinite(x) && fabs(x) <= b->max && (x == 0 || fabs(x) >= b->tiny))
		return true;
	char bb[32], xb[32];
	if (!isfinite(x) || fabs(x) > b->max)
		snprintf(msg, n, "%s = %s must be at most %s%s%s, got %s", key, how, exact(b->max, bb, sizeof(bb)), sp,
			 b->unit, exact(x, xb, sizeof(xb)));
	else
		snprintf(msg, n, "%s = %s must be 0 or at least %s%s%s, got %s", key, how, exact(b->tiny, bb, sizeof(bb)),
			 sp, b->unit, exact(x, xb, sizeof(xb)));
	return false;
}

bool bound_check_ratio(const char *key, double x, double of_value, char *msg, unsigned long n)
{
	for (size_t i = 0; i < sizeof(ratios) / sizeof(ratios[0]); i++) {
		if (strcmp(ratios[i].key, key))
			continue;
		double max = ratios[i].max * of_value;
		if (x <= max)
			return true;
		snprintf(msg, n, "must be at most %g x %s = %.0f (%s), got %.0f", ratios[i].max, ratios[i].of, max,
			 ratios[i].why, x);
		return false;
	}
	return true;
}
