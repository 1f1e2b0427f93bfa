/* band: the nearest validation family of a plan and its error band (see
 * band.h). The table itself is generated from validation/bands.json. */
#include "band.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bug.h"

enum style { STYLE_CNN, STYLE_ENCODER, STYLE_FOUNDRY, STYLE_MEGATRON_DS, STYLE_FSDP, STYLE_FP8,
	     STYLE_MEGATRON };

/* The rule table of band.h, in order. gpus: codes separated by '|'. */
static const struct {
	enum style style;
	const char *gpus;
	const char *family;
} rules[] = {
	{ STYLE_CNN, "H100|H200", "resnet50-mlperf" },
	{ STYLE_ENCODER, "A100", "dle-bert-a100" },
	{ STYLE_FOUNDRY, "A100|H100|H200", "llm-foundry-mpt" },
	{ STYLE_MEGATRON_DS, "A100", "bloom-a100" },
	{ STYLE_FSDP, "A100", "torchtitan-a100" },
	{ STYLE_FSDP, "H100|H200", "llm-foundry-mpt" },
	{ STYLE_FP8, "H100|H200", "nemo-h100-fp8" },
	{ STYLE_MEGATRON, "H100|H200", "megatron-core-h100" },
	{ STYLE_MEGATRON, "A100", "korthikanti-a100" },
};

static enum style style_of(const struct inputs *in, const struct plan *pl)
{
	const char *stack = plan_stack(pl)->name;
	if (inputs_model(in)->arch == MODEL_ARCH_CNN)
		return STYLE_CNN;
	if (inputs_model(in)->arch == MODEL_ARCH_ENCODER)
		return STYLE_ENCODER;
	if (!strncmp(stack, "llm-foundry", strlen("llm-foundry")))
		return STYLE_FOUNDRY;
	if (!strcmp(stack, "megatron-deepspeed"))
		return STYLE_MEGATRON_DS;
	if (!strncmp(stack, "torchtitan", strlen("torchtitan")) || !strcmp(stack, "hf-eager") ||
	    !strcmp(stack, "deepspeed") ||
	    (pl->parallel.zero == 3 && pl->parallel.tp == 1 && pl->parallel.pp == 1))
		return STYLE_FSDP;
	if (pl->training.precision == DTYPE_FP8)
		return STYLE_FP8;
	return STYLE_MEGATRON;
}

/* Whether name has code at the start of a word. */
static bool has_code(const char *name, const char *code, size_t len)
{
	for (const char *p = name; *p; p++)
		if ((p == name || !isalnum((unsigned char)p[-1])) && !strncmp(p, code, len))
			return true;
	return false;
}

static bool gpu_matches(const char *name, const char *codes)
{
	for (const char *c = codes; *c;) {
		size_t len = strcspn(c, "|");
		if (has_code(name, c, len))
			return true;
		c += len + (c[len] == '|');
	}
	return false;
}

const struct band *band_get(const char *family)
{
	for (int i = 0; i < band_count; i++)
		if (!strcmp(band_table[i].family, family))
			return &band_table[i];
	return NULL;
}

const struct band *band_lookup(const struct inputs *in, const struct plan *pl)
{
	enum style st = style_of(in, pl);
	const char *gpu = inputs_topology(in)->gpu.name;
	const struct band *b = NULL;
	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]) && !b; i++)
		if (rules[i].style == st && gpu_matches(gpu, rules[i].gpus))
			b = band_get(rules[i].family);
	if (!b)
		b = band_get("overall");
	BUG_ON(!b, "the shipped band table has no overall row");
	return b;
}

long band_more_gpus(const struct band *b, long gpus)
{
	return b->bias > 0 ? (long)ceil(gpus * b->bias - 1e-9) : 0;
}

char *band_text(const struct band *b, char *buf, size_t n)
{
	snprintf(buf, n, "±%.1f %% (%s, %d run%s, max %.1f %%, %s %.1f %%)", 100 * b->mean_abs, b->family,
		 b->runs, b->runs == 1 ? "" : "s", 100 * b->max_abs, b->bias > 0 ? "optimistic" : "pessimistic", 100 * fabs(b->bias));
	return buf;
}
