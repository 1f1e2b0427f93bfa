/* band: a plan's features, its match among the validation families and
 * the cross-validated band (see band.h). The table itself is generated
 * from validation/bands.json. */
#include "band.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bug.h"

const char *const band_gen_names[BAND_GEN_N + 1] = { "other", "volta", "ampere", "hopper", "blackwell", NULL };
const char *const band_kind_names[BAND_KIND_N + 1] = { "dense", "moe", "encoder", "cnn", "vit", "lora", NULL };
const char *const band_style_names[BAND_STYLE_N + 1] = { "data-parallel", "fsdp", "megatron-deepspeed",
							  "megatron", NULL };
const char *const band_prec_names[BAND_PREC_N + 1] = { "16-bit", "fp8", NULL };
const char *const band_feat_names[BAND_FEAT_N + 1] = { "pipeline", "zero3", "context_parallel", NULL };

/* Words for the reasons: a generation, a kind, a style, a feature. */
static const char *const gen_words[BAND_GEN_N] = { "on this GPU", "on Volta", "on Ampere", "on Hopper",
						   "on Blackwell" };
static const char *const kind_words[BAND_KIND_N] = { "of a dense decoder", "of a mixture of experts",
						     "of an encoder", "of a CNN", "of a ViT",
						     "of a LoRA fine-tune" };
static const char *const style_words[BAND_STYLE_N] = { "in data-parallel style", "in FSDP style",
						       "of Megatron-DeepSpeed", "in Megatron style" };
static const char *const feat_words[BAND_FEAT_N] = { "with pipeline parallelism", "with ZeRO-3",
						     "with context parallelism" };

/* GPU name codes by generation (at the start of a word of the name). */
static const struct {
	const char *code;
	enum band_gen gen;
} gen_codes[] = {
	{ "GB200", BAND_GEN_BLACKWELL }, { "B200", BAND_GEN_BLACKWELL }, { "B100", BAND_GEN_BLACKWELL },
	{ "GB300", BAND_GEN_BLACKWELL }, { "B300", BAND_GEN_BLACKWELL },
	{ "GH200", BAND_GEN_HOPPER },    { "H100", BAND_GEN_HOPPER },    { "H200", BAND_GEN_HOPPER },
	{ "H800", BAND_GEN_HOPPER },     { "A100", BAND_GEN_AMPERE },    { "A800", BAND_GEN_AMPERE },
	{ "A10", BAND_GEN_AMPERE },      { "V100", BAND_GEN_VOLTA },
};

/* Whether name has code at the start of a word. */
static bool has_code(const char *name, const char *code)
{
	size_t len = strlen(code);
	for (const char *p = name; *p; p++)
		if ((p == name || !isalnum((unsigned char)p[-1])) && !strncmp(p, code, len))
			return true;
	return false;
}

static enum band_gen gen_of(const char *gpu)
{
	for (size_t i = 0; i < sizeof(gen_codes) / sizeof(gen_codes[0]); i++)
		if (has_code(gpu, gen_codes[i].code))
			return gen_codes[i].gen;
	return BAND_GEN_OTHER;
}

static bool prefix(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

void band_features(const struct inputs *in, const struct plan *pl, struct band_features *f)
{
	const struct model *m = inputs_model(in);
	const struct plan_parallel *pp = &pl->parallel;
	const char *stack = plan_stack(pl)->name;

	memset(f, 0, sizeof(*f));
	f->gen = gen_of(inputs_topology(in)->gpu.name);
	if (m->arch == MODEL_ARCH_CNN)
		f->kind = BAND_KIND_CNN;
	else if (m->arch == MODEL_ARCH_ENCODER)
		f->kind = BAND_KIND_ENCODER;
	else if (m->arch == MODEL_ARCH_VIT)
		f->kind = BAND_KIND_VIT;
	else if (pl->training.finetune.method != FT_FULL)
		f->kind = BAND_KIND_LORA;
	else if (model_is_moe(m))
		f->kind = BAND_KIND_MOE;
	else
		f->kind = BAND_KIND_DENSE;
	if (f->kind == BAND_KIND_CNN || f->kind == BAND_KIND_ENCODER)
		f->style = BAND_STYLE_DP;
	else if (prefix(stack, "torchtitan") || prefix(stack, "llm-foundry") || !strcmp(stack, "hf-eager") ||
		 !strcmp(stack, "deepspeed") || (pp->zero == ZERO_3 && pp->tp == 1 && pp->pp == 1))
		f->style = BAND_STYLE_FSDP;
	else if (!strcmp(stack, "megatron-deepspeed"))
		f->style = BAND_STYLE_MEGATRON_DS;
	else
		f->style = BAND_STYLE_MEGATRON;
	f->prec = dtype_is_te_low(pl->training.precision) ? BAND_PREC_FP8 : BAND_PREC_16;
	f->stack = stack;
	f->feats = (pp->pp > 1 ? 1u << BAND_FEAT_PIPELINE : 0) | (pp->zero == ZERO_3 ? 1u << BAND_FEAT_ZERO3 : 0) |
		   (pp->cp > 1 ? 1u << BAND_FEAT_CP : 0);
	f->params = model_params(m);
	f->gpus = (double)plan_gpus(pl, in);
	f->seq = m->arch == MODEL_ARCH_CNN ? 0 : (double)pl->training.seq;
}

/* log2 of how far x lies outside [r0, r1] (0 inside; 0 when x or the
 * range is not positive: CNNs have no sequence). */
static double outside(double x, const double r[2])
{
	if (!(x > 0) || !(r[0] > 0))
		return 0;
	/* the envelope holds six significant digits (the bands file's) */
	return x < r[0] * (1 - 1e-5) ? log2(r[0] / x) : x > r[1] * (1 + 1e-5) ? log2(x / r[1]) : 0;
}

bool band_names_has(const char *list, const char *name)
{
	size_t len = strlen(name);
	for (const char *p = list; p && *p;) {
		size_t k = strcspn(p, "|");
		if (k == len && !strncmp(p, name, len))
			return true;
		p += k + (p[k] == '|');
	}
	return false;
}

/* The rank key of family e for f: smaller is nearer (band.h's order). */
struct rank {
	int miss[4];                /* style, generation, precision, stack: 0 or 1 */
	double dist;
};

static struct rank rank_of(const struct band_envelope *e, const struct band_features *f)
{
	struct rank r = { { 0 }, 0 };
	r.miss[0] = !(e->styles & 1u << f->style);
	r.miss[1] = !(e->gens & 1u << f->gen);
	r.miss[2] = !(e->precs & 1u << f->prec);
	r.miss[3] = !band_names_has(e->stacks, f->stack);
	r.dist = outside(f->params, e->params) + outside(f->gpus, e->gpus) + outside(f->seq, e->seq);
	for (int k = 0; k < BAND_FEAT_N; k++)
		r.dist += (f->feats & 1u << k) && !(e->feats & 1u << k);
	return r;
}

static bool nearer(const struct rank *a, const struct rank *b)
{
	for (int k = 0; k < 4; k++)
		if (a->miss[k] != b->miss[k])
			return a->miss[k] < b->miss[k];
	return a->dist < b->dist - 1e-12;
}

/* The lowest set bit of a non-empty mask (0 for an empty one). */
static int first_bit(unsigned m)
{
	for (int k = 0; k < 32; k++)
		if (m & 1u << k)
			return k;
	return 0;
}

/* Append "; "-separated reason text to out->why. */
static void why(struct band_pick *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void why(struct band_pick *out, const char *fmt, ...)
{
	size_t len = strlen(out->why);
	if (len + 3 >= sizeof(out->why))
		return;
	if (len)
		len += (size_t)snprintf(out->why + len, sizeof(out->why) - len, "; ");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(out->why + len, sizeof(out->why) - len, fmt, ap);
	va_end(ap);
	out->extrapolated = true;
}

/* x / scale in plain decimal (no exponent: the reason goes into CSV
 * cells): whole from 100 up, else three significant digits. */
static const char *plain(double x, double scale, char *buf, size_t n)
{
	x /= scale;
	snprintf(buf, n, x >= 100 ? "%.0f" : x >= 0.001 ? "%.3g" : "%.6f", x);
	return buf;
}

/* A range check for the reasons: x outside [r0 / 2, 2 r1]; scale, unit
 * and the range's suffix say how to print it (1e9, "B parameters", "B"). */
static void range_why(struct band_pick *out, double scale, const char *unit, const char *suffix, double x,
		      const double r[2], const char *family)
{
	if (!(x > 0) || !(r[0] > 0) || (x >= r[0] / 2 && x <= 2 * r[1]))
		return;
	char a[32], b[32], c[32];
	why(out, "no validated run at %s%s (%s: %s%s - %s%s)", plain(x, scale, a, sizeof(a)), unit, family,
	    plain(r[0], scale, b, sizeof(b)), suffix, plain(r[1], scale, c, sizeof(c)), suffix);
}

/* The kinds and GPU generations of table[0 .. n - 2] but exclude: what
 * the suite validated at all. */
static void suite_union(const struct band *table, int n, const char *exclude, unsigned *kinds, unsigned *gens)
{
	*kinds = *gens = 0;
	for (int i = 0; i < n - 1; i++)
		if (!exclude || strcmp(table[i].family, exclude)) {
			*kinds |= table[i].env.kinds;
			*gens |= table[i].env.gens;
		}
}

int band_match(const struct band *table, int n, const struct band_features *f, const char *exclude,
	       struct band_pick *out)
{
	BUG_ON(n < 1 || strcmp(table[n - 1].family, "overall"), "a band table must end with its overall row");
	int best = -1;
	struct rank rb = { { 0 }, 0 };
	for (int i = 0; i < n - 1; i++) {
		const struct band_envelope *e = &table[i].env;
		if ((exclude && !strcmp(table[i].family, exclude)) || !(e->kinds & 1u << f->kind))
			continue;
		struct rank r = rank_of(e, f);
		if (best < 0 || nearer(&r, &rb)) {
			best = i;
			rb = r;
		}
	}
	memset(out, 0, sizeof(*out));
	int k = best >= 0 ? best : n - 1;
	const struct band *b = &table[k];
	out->b = b;
	unsigned kinds, gens;
	suite_union(table, n, exclude, &kinds, &gens);
	if (!(kinds & 1u << f->kind))
		why(out, "no validated run %s", kind_words[f->kind]);
	if (!(gens & 1u << f->gen))
		why(out, "no validated run %s", gen_words[f->gen]);
	if (best >= 0) {
		const struct band_envelope *e = &b->env;
		if (rb.miss[0])
			why(out, "no validated run %s (%s is %s)", style_words[f->style], b->family,
			    style_words[first_bit(e->styles)]);
		if (rb.miss[1] && (gens & 1u << f->gen))
			why(out, "no validated run of this style %s (%s ran %s)", gen_words[f->gen], b->family,
			    gen_words[first_bit(e->gens)]);
		if (rb.miss[2])
			why(out, "no validated %s run of this style", f->prec == BAND_PREC_FP8 ? "fp8" : "16-bit");
		range_why(out, 1e9, "B parameters", "B", f->params, e->params, b->family);
		range_why(out, 1, f->gpus == 1 ? " GPU" : " GPUs", "", f->gpus, e->gpus, b->family);
		range_why(out, 1, " tokens per sequence", "", f->seq, e->seq, b->family);
		for (int j = 0; j < BAND_FEAT_N; j++)
			if ((f->feats & 1u << j) && !(e->feats & 1u << j))
				why(out, "no validated run of this family %s", feat_words[j]);
	}
	const struct band *all = &table[n - 1];
	out->center = b->bias;
	out->halfwidth = out->extrapolated ? fmax(b->halfwidth, all->extrap_halfwidth) : b->halfwidth;
	out->lo = out->center - out->halfwidth;
	out->hi = out->center + out->halfwidth;
	return k;
}

void band_choose(const struct inputs *in, const struct plan *pl, struct band_pick *out)
{
	struct band_features f;
	band_features(in, pl, &f);
	band_match(band_table, band_count, &f, NULL, out);
}

/* x GPUs up to whole nodes of per_node. */
static long whole_nodes(double x, int per_node)
{
	long n = per_node > 1 ? per_node : 1;
	return (long)ceil(x / (double)n - 1e-9) * n;
}

long band_more_gpus(const struct band *b, long gpus, int per_node)
{
	return b->bias > 0 ? whole_nodes((double)gpus * b->bias, per_node) : 0;
}

long band_safe_gpus(const struct band_pick *p, long gpus, int per_node)
{
	return p->hi > 0 ? whole_nodes((double)gpus * (1 + p->hi), per_node) : gpus;
}

char *band_text(const struct band_pick *p, char *buf, size_t n)
{
	const struct band *b = p->b;
	int k = snprintf(buf, n, "%.0f %% band %+.1f %% .. %+.1f %% of time (%s, %d run%s, cross-validated; %s %.1f %%)",
			 100 * BAND_LEVEL, 100 * p->lo, 100 * p->hi, b->family, b->runs, b->runs == 1 ? "" : "s",
			 b->bias > 0 ? "optimistic" : "pessimistic", 100 * fabs(b->bias));
	if (p->extrapolated && k > 0 && (size_t)k < n)
		snprintf(buf + k, n - (size_t)k, "; extrapolated: %s", p->why);
	return buf;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double band_quantile(double *x, int n, double level)
{
	if (n <= 0)
		return 0;
	for (int i = 0; i < n; i++)
		x[i] = fabs(x[i]);
	qsort(x, (size_t)n, sizeof(*x), cmp_double);
	int k = (int)ceil(level * n - 1e-9);
	return x[k < 1 ? 0 : k - 1];
}
