/* import_megatron_args: the words of a Megatron-LM launch read into
 * flags, for import_megatron.c, which maps them.
 *
 * A launch file is split into words as the shell would (comments, line
 * continuations, quotes; no expansion); argv is taken as it is. The words
 * before the "*.py" script are the launcher's (torchrun's --nnodes and
 * --nproc_per_node give the world size); after it, each flag is one of
 * the mapped flags (mg_flags: its value kept by kind), an ignored one
 * (no effect on time or memory) or an unknown one, both rows of the
 * mapping table. The flag table's meanings and defaults are in
 * import_megatron.c's opening comment. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import_megatron-private.h"
#include "xalloc.h"

/* The flags mapped, by id: name and kind. */
const struct mg_flag mg_flags[F_N] = {
	[F_LAYERS] = { "num-layers", K_INT }, [F_HIDDEN] = { "hidden-size", K_INT },
	[F_HEADS] = { "num-attention-heads", K_INT }, [F_GQA] = { "group-query-attention", K_FLAG },
	[F_GROUPS] = { "num-query-groups", K_INT }, [F_KV_CHANNELS] = { "kv-channels", K_INT },
	[F_FFN] = { "ffn-hidden-size", K_INT }, [F_VOCAB] = { "vocab-size", K_INT },
	[F_DIVISIBLE] = { "make-vocab-size-divisible-by", K_INT }, [F_TOKENIZER] = { "tokenizer-type", K_STR },
	[F_SEQ] = { "seq-length", K_INT }, [F_MAXPOS] = { "max-position-embeddings", K_INT },
	[F_MICRO] = { "micro-batch-size", K_INT }, [F_GLOBAL] = { "global-batch-size", K_INT },
	[F_TP] = { "tensor-model-parallel-size", K_INT }, [F_PP] = { "pipeline-model-parallel-size", K_INT },
	[F_VPP_LAYERS] = { "num-layers-per-virtual-pipeline-stage", K_INT },
	[F_FIRST] = { "decoder-first-pipeline-num-layers", K_INT },
	[F_LAST] = { "decoder-last-pipeline-num-layers", K_INT },
	[F_CP] = { "context-parallel-size", K_INT }, [F_EP] = { "expert-model-parallel-size", K_INT },
	[F_SP] = { "sequence-parallel", K_FLAG }, [F_DISTOPT] = { "use-distributed-optimizer", K_FLAG },
	[F_RC_GRAN] = { "recompute-granularity", K_STR }, [F_RC_METHOD] = { "recompute-method", K_STR },
	[F_RC_LAYERS] = { "recompute-num-layers", K_INT }, [F_RC_ACT] = { "recompute-activations", K_FLAG },
	[F_BF16] = { "bf16", K_FLAG }, [F_FP16] = { "fp16", K_FLAG }, [F_FP8] = { "fp8-format", K_STR },
	[F_FP8_PARAMS] = { "fp8-param-gather", K_FLAG },
	[F_ACCUM_FP32] = { "accumulate-allreduce-grads-in-fp32", K_FLAG },
	[F_SWIGLU] = { "swiglu", K_FLAG }, [F_NORM] = { "normalization", K_STR },
	[F_UNTIE] = { "untie-embeddings-and-output-weights", K_FLAG }, [F_NOBIAS] = { "disable-bias-linear", K_FLAG },
	[F_POS] = { "position-embedding-type", K_STR }, [F_OGR] = { "overlap-grad-reduce", K_FLAG },
	[F_OPG] = { "overlap-param-gather", K_FLAG }, [F_TPCO] = { "tp-comm-overlap", K_FLAG },
	[F_EXPERTS] = { "num-experts", K_INT }, [F_TOPK] = { "moe-router-topk", K_INT },
	[F_MOE_FFN] = { "moe-ffn-hidden-size", K_INT }, [F_ATTN_DROP] = { "attention-dropout", K_NUM },
	[F_HIDDEN_DROP] = { "hidden-dropout", K_NUM }, [F_QK_LN] = { "qk-layernorm", K_FLAG },
	[F_IMPL] = { "transformer-impl", K_STR }, [F_FLASH] = { "use-flash-attn", K_FLAG },
	[F_DISPATCHER] = { "moe-token-dispatcher-type", K_STR },
	[F_DOI] = { "num-distributed-optimizer-instances", K_INT },
	[F_RC_MODULES] = { "recompute-modules", K_LIST },
	[F_ETP] = { "expert-tensor-parallel-size", K_INT },
};

/* Flags with no effect on time or memory, and whether each takes a value. */
static const struct {
	const char *name;
	bool value;
} ignored[] = {
	{ "lr", 1 }, { "min-lr", 1 }, { "lr-decay-style", 1 }, { "lr-decay-iters", 1 }, { "lr-decay-samples", 1 },
	{ "lr-warmup-iters", 1 }, { "lr-warmup-fraction", 1 }, { "lr-warmup-samples", 1 }, { "lr-warmup-init", 1 },
	{ "weight-decay", 1 }, { "start-weight-decay", 1 }, { "end-weight-decay", 1 }, { "clip-grad", 1 },
	{ "adam-beta1", 1 }, { "adam-beta2", 1 }, { "adam-eps", 1 }, { "init-method-std", 1 }, { "seed", 1 },
	{ "save", 1 }, { "load", 1 }, { "data-path", 1 }, { "split", 1 }, { "vocab-file", 1 }, { "merge-file", 1 },
	{ "tokenizer-model", 1 }, { "data-cache-path", 1 }, { "log-interval", 1 }, { "save-interval", 1 },
	{ "eval-interval", 1 }, { "eval-iters", 1 }, { "tensorboard-dir", 1 }, { "wandb-project", 1 },
	{ "wandb-exp-name", 1 }, { "train-iters", 1 }, { "train-samples", 1 }, { "exit-interval", 1 },
	{ "exit-duration-in-mins", 1 }, { "distributed-backend", 1 }, { "distributed-timeout-minutes", 1 },
	{ "loss-scale", 1 }, { "initial-loss-scale", 1 }, { "min-loss-scale", 1 }, { "loss-scale-window", 1 },
	{ "hysteresis", 1 }, { "rotary-base", 1 }, { "ckpt-format", 1 }, { "num-workers", 1 },
	{ "log-throughput", 0 }, { "log-timers-to-tensorboard", 0 }, { "log-validation-ppl-to-tensorboard", 0 },
	{ "log-memory-to-tensorboard", 0 }, { "log-params-norm", 0 }, { "log-num-zeros-in-grad", 0 },
	{ "no-load-optim", 0 }, { "no-load-rng", 0 }, { "finetune", 0 }, { "mock-data", 0 },
	{ "use-mcore-models", 0 }, { "no-save-optim", 0 }, { "no-save-rng", 0 }, { "use-checkpoint-args", 0 },
	{ "bf16-lm-cross-entropy", 0 }, { "rampup-batch-size", 1 }, { "eod-mask-loss", 0 },
	{ "no-create-attention-mask-in-dataloader", 0 }, { "dataloader-type", 1 }, { "use-dist-ckpt", 0 },
	{ "auto-detect-ckpt-format", 0 }, { "moe-aux-loss-coeff", 1 }, { "moe-z-loss-coeff", 1 },
	{ "moe-router-load-balancing-type", 1 }, { "log-progress", 0 }, { "timing-log-level", 1 },
};

/* Report an error about the flag at token i (-1: none). Returns -1. */
int mg_err(struct mg *m, int i, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (m->file && i >= 0)
		return diag_err_at(m->d, m->file, m->t[i].line, m->t[i].col, "%s", msg);
	if (m->file)
		return diag_err(m->d, m->file, "", "%s", msg);
	return diag_errf(m->d, "%s", msg);
}

/* A place in the launch text: the next character, its line and column. */
struct cursor {
	const char *p;
	int line, col;
};

/* Step over a line continuation, a blank or a comment at c. Returns
 * whether it did. */
static bool tokenize_skip(struct cursor *c)
{
	if (*c->p == '\\' && c->p[1] == '\n') {
		c->p += 2, c->line++, c->col = 1;
		return true;
	}
	if (isspace((unsigned char)*c->p)) {
		if (*c->p == '\n')
			c->line++, c->col = 0;
		c->p++, c->col++;
		return true;
	}
	if (*c->p == '#') {
		while (*c->p && *c->p != '\n')
			c->p++;
		return true;
	}
	return false;
}

/* The word at c, its quotes removed (caller frees); an unclosed quote is
 * an error at the quote, as the shell's. */
static char *tokenize_word(struct mg *m, struct cursor *c)
{
	size_t cap_s = 16, len = 0;
	char *s = xmalloc(cap_s);
	char quote = 0;
	int qline = 0, qcol = 0;
	while (*c->p && (quote || !isspace((unsigned char)*c->p))) {
		if (!quote && *c->p == '\\' && c->p[1] == '\n') {
			c->p += 2, c->line++, c->col = 1;
			continue;
		}
		if (!quote && (*c->p == '"' || *c->p == '\'')) {
			qline = c->line, qcol = c->col;
			quote = *c->p++;
			c->col++;
			continue;
		}
		if (quote && *c->p == quote) {
			quote = 0;
			c->p++, c->col++;
			continue;
		}
		if (*c->p == '\n')
			c->line++, c->col = 0;
		if (len + 2 > cap_s)
			s = xreallocarray(s, cap_s *= 2, 1);
		s[len++] = *c->p++;
		c->col++;
	}
	s[len] = 0;
	if (quote) /* the shell would stop: "unexpected EOF while looking for matching" */
		diag_err_at(m->d, m->file, qline, qcol, "expected a closing %s quote, found the end "
			    "of the file", quote == '"' ? "double" : "single");
	return s;
}

/* Split the launch text into words as the shell would (comments, line
 * continuations, quotes; no expansion). */
static void tokenize(struct mg *m, const char *text)
{
	int cap = 0;
	struct cursor c = { .p = text, .line = 1, .col = 1 };
	while (*c.p) {
		if (tokenize_skip(&c))
			continue;
		struct tok t = { .line = c.line, .col = c.col };
		t.s = tokenize_word(m, &c);
		if (m->n == cap)
			m->t = xreallocarray(m->t, (size_t)(cap = cap ? 2 * cap : 64), sizeof(*m->t));
		m->t[m->n++] = t;
	}
}

static int find_flag(const char *name, size_t len)
{
	for (int i = 0; i < F_N; i++)
		if (strlen(mg_flags[i].name) == len && !strncmp(mg_flags[i].name, name, len))
			return i;
	return -1;
}

static int find_ignored(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		if (strlen(ignored[i].name) == len && !strncmp(ignored[i].name, name, len))
			return (int)i;
	return -1;
}

/* The first word after the "*.py" script; 0 with no script. */
static int script_end(const struct mg *m)
{
	int start = 0;
	for (int i = 0; i < m->n; i++) {
		size_t l = strlen(m->t[i].s);
		if (l > 3 && !strcmp(m->t[i].s + l - 3, ".py"))
			start = i + 1;
	}
	return start;
}

/* torchrun's --nnodes N --nproc_per_node M among the launcher's words
 * (the start before the script) into *nn, *npn (0: not given). */
static void torchrun_world(const struct mg *m, int start, long *nn, long *npn)
{
	for (int i = 0; i + 1 < start; i++) {
		const char *w = m->t[i].s, *v = m->t[i + 1].s;
		char *end;
		long x = strtol(v, &end, 10);
		if (*end || x < 1)
			continue;
		if (!strcmp(w, "--nnodes"))
			*nn = x;
		else if (!strcmp(w, "--nproc_per_node") || !strcmp(w, "--nproc-per-node"))
			*npn = x;
	}
}

/* The launcher's words, before the script (start), as a row; torchrun's
 * world size into m. */
static void read_launcher(struct mg *m, int start)
{
	char *launcher = xstrdup("");
	for (int i = 0; i < start; i++) {
		char *s = xasprintf("%s%s%s", launcher, i ? " " : "", m->t[i].s);
		free(launcher);
		launcher = s;
	}
	/* torchrun's --nnodes N --nproc_per_node M: the world size (WORLD_SIZE, L75) */
	long nn = 0, npn = 0;
	torchrun_world(m, start, &nn, &npn);
	if (nn && npn) {
		m->launcher_world = nn * npn;
		snprintf(m->launcher_how, sizeof(m->launcher_how), "torchrun --nnodes %ld x --nproc_per_node %ld",
			 nn, npn);
	}
	import_map_add(m->map, nn && npn ? IMPORT_MAPPED : IMPORT_IGNORED, "(launcher)", launcher,
		       nn && npn ? "scenario: /nodes" : "", "", nn && npn ?
		       "the world size: --nnodes x --nproc_per_node (--nodes overrides it)" :
		       "the launcher and the script: the world size comes from --nodes or the batch");
	free(launcher);
}

/* Whether word i is there and is a value, not a flag. */
static bool value_at(const struct mg *m, int i)
{
	return i < m->n && strncmp(m->t[i].s, "--", 2);
}

/* An unknown or ignored flag's value val and every word after it up to
 * the next flag (--rampup-batch-size 16 16 5859375), *i moved past them.
 * Caller frees. */
static char *join_values(const struct mg *m, int *i, const char *val)
{
	char *vals = xstrdup(val);
	while (value_at(m, *i + 1)) {
		char *t = xasprintf("%s %s", vals, m->t[++*i].s);
		free(vals);
		vals = t;
	}
	return vals;
}

/* A mapped flag f given at word at with val: kept by its kind. */
static void store_flag(struct mg *m, int f, int at, const char *flag, const char *val)
{
	m->given[f] = true;
	m->at[f] = at;
	m->sv[f] = val;
	char *end = NULL;
	if (mg_flags[f].kind == K_INT) {
		errno = 0;
		m->iv[f] = strtol(val, &end, 10);
		if (!*val || *end || errno || m->iv[f] < 0) {
			mg_err(m, at, "%s: expected an integer >= 0%s, got '%s'", flag,
			       errno == ERANGE ? " that fits in 64 bits" : "", val);
			m->bad[f] = true;
		}
	} else if (mg_flags[f].kind == K_NUM) {
		m->dv[f] = strtod(val, &end);
		if (!*val || *end || !(m->dv[f] >= 0 && m->dv[f] < 1))
			mg_err(m, at, "%s: expected a probability in [0, 1), got '%s'", flag, val);
	}
}

/* A flag word as read: its id (f: mapped, g: ignored, both -1: unknown),
 * whether it takes a value, the value given "=" (eq) or after it. */
struct flag_word {
	int f, g;
	bool takes;
	const char *eq, *val;
};

/* The flag word at (its name "--flag") checked and kept: a mapped flag
 * stored, another as a row. */
static void take_flag(struct mg *m, const struct flag_word *fw, int at, const char *flag)
{
	const char *val = fw->val;
	if (fw->takes && !val) {
		mg_err(m, at, "%s: expected a value, got none", flag);
	} else if (!fw->takes && fw->eq) {
		mg_err(m, at, "%s: a flag takes no value, got '%s'", flag, val);
	} else if (val && strchr(val, '$')) {
		mg_err(m, at, "%s: '%s' is a shell variable: give its value (ddlsim does not expand the shell)",
		       flag, val);
	} else if (fw->f < 0) {
		import_map_add(m->map, fw->g >= 0 ? IMPORT_IGNORED : IMPORT_UNKNOWN, flag, val ? val : "", "", "",
			       fw->g >= 0 ? NULL : "not a flag ddlsim imports: not applied");
	} else {
		store_flag(m, fw->f, at, flag, val);
	}
}

/* The word i after the script (start): a flag and its values. Returns
 * the last word it took. */
static int read_word(struct mg *m, int i, int start)
{
	const char *w = m->t[i].s;
	if (strncmp(w, "--", 2)) {
		if (strchr(w, '$'))
			mg_err(m, i, "'%s' is a shell expansion: give the arguments it stands for (ddlsim does not "
			       "expand the shell)", w);
		else
			mg_err(m, i, "expected a flag (--name), got '%s'", w);
		return i;
	}
	const char *name = w + 2;
	struct flag_word fw = { .eq = strchr(name, '=') };
	size_t len = fw.eq ? (size_t)(fw.eq - name) : strlen(name);
	fw.f = find_flag(name, len);
	fw.g = fw.f < 0 ? find_ignored(name, len) : -1;
	fw.takes = fw.f >= 0 ? mg_flags[fw.f].kind != K_FLAG : fw.g >= 0 ? ignored[fw.g].value :
		   (fw.eq || value_at(m, i + 1));
	char *vals = NULL;      /* an unknown or ignored flag's words, joined */
	if (fw.eq)
		fw.val = fw.eq + 1;
	else if (fw.takes && value_at(m, i + 1))
		fw.val = m->t[++i].s;
	if (fw.val && !fw.eq && (fw.f < 0 || mg_flags[fw.f].kind == K_LIST))
		fw.val = vals = join_values(m, &i, fw.val);
	char *flag = xasprintf("--%.*s", (int)len, name);
	int at = i;
	while (at > start && strncmp(m->t[at].s, "--", 2))
		at--;
	take_flag(m, &fw, at, flag);
	if (fw.f >= 0 && mg_flags[fw.f].kind == K_LIST && vals) {
		/* the list's words stay with m: m->sv points at them */
		free(m->owned[fw.f]);
		m->owned[fw.f] = vals;
		vals = NULL;
	}
	free(flag);
	free(vals);
	return i;
}

/* Read the words after the script (or all, with no script) into m. */
static void parse(struct mg *m)
{
	int start = script_end(m);
	if (start)
		read_launcher(m, start);
	for (int i = start; i < m->n; i++)
		i = read_word(m, i, start);
}

void mg_read(struct mg *m, const char *text, int argc, char **argv)
{
	if (text) {
		tokenize(m, text);
	} else {
		m->t = xcalloc((size_t)(argc ? argc : 1), sizeof(*m->t));
		for (int i = 0; i < argc; i++)
			m->t[m->n++] = (struct tok){ .s = xstrdup(argv[i]), .line = 1, .col = i + 1 };
	}
	parse(m);
}

void mg_free_words(struct mg *m)
{
	for (int i = 0; i < m->n; i++)
		free(m->t[i].s);
	free(m->t);
	for (int f = 0; f < F_N; f++)
		free(m->owned[f]);
}
