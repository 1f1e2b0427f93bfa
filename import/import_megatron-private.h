/* import_megatron-private.h: what import_megatron.c (the mapping) and
 * import_megatron_args.c (the reading of the words) share; used only
 * inside import/. */
#ifndef DDLSIM_IMPORT_MEGATRON_PRIVATE_H
#define DDLSIM_IMPORT_MEGATRON_PRIVATE_H

#include <stdbool.h>

#include "import.h"

/* A word of the launch, where it starts. */
struct tok {
	char *s;
	int line, col;
};

enum kind { K_FLAG, K_INT, K_NUM, K_STR, K_LIST };  /* K_LIST: words up to the next flag */

enum flag_id {
	F_LAYERS, F_HIDDEN, F_HEADS, F_GQA, F_GROUPS, F_KV_CHANNELS, F_FFN, F_VOCAB, F_DIVISIBLE, F_TOKENIZER,
	F_SEQ, F_MAXPOS, F_MICRO, F_GLOBAL, F_TP, F_PP, F_VPP_LAYERS, F_FIRST, F_LAST, F_CP, F_EP, F_SP, F_DISTOPT,
	F_RC_GRAN, F_RC_METHOD, F_RC_LAYERS, F_RC_ACT, F_BF16, F_FP16, F_FP8, F_FP8_PARAMS, F_ACCUM_FP32,
	F_SWIGLU, F_NORM, F_UNTIE, F_NOBIAS, F_POS, F_OGR, F_OPG, F_TPCO, F_EXPERTS, F_TOPK, F_MOE_FFN,
	F_ATTN_DROP, F_HIDDEN_DROP, F_QK_LN, F_IMPL, F_FLASH, F_DISPATCHER, F_DOI, F_RC_MODULES, F_ETP, F_N
};

/* A flag import_megatron() maps: its name less "--" and its value's kind. */
struct mg_flag {
	const char *name;
	enum kind kind;
};

/* The flags mapped, by id (import_megatron_args.c). */
extern const struct mg_flag mg_flags[F_N];

/* An import's state: the words read and the flags given. */
struct mg {
	const char *file;           /* NULL: argv */
	struct diag *d;
	struct import_map *map;
	struct tok *t;
	int n;
	bool given[F_N];
	bool bad[F_N];              /* its value refused (said once) */
	int at[F_N];                /* token of the flag */
	long iv[F_N];
	double dv[F_N];
	const char *sv[F_N];        /* the value; a K_LIST's words joined by spaces */
	char *owned[F_N];           /* a K_LIST's joined words, freed by mg_free_words() */
	long launcher_world;        /* torchrun's --nnodes x --nproc_per_node; 0: not given */
	char launcher_how[96];
};

/* Report an error about the flag at token i (-1: none) into m->d.
 * Returns -1. */
int mg_err(struct mg *m, int i, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Read the words, the launch text (text non-NULL) or argc words of argv,
 * into m: the launcher's before the script, then the flags (values into
 * m->given, iv, dv, sv; ignored and unknown flags as rows of m->map).
 * Errors through mg_err(). mg_free_words() frees the words. */
void mg_read(struct mg *m, const char *text, int argc, char **argv);

/* Free the words mg_read() read. */
void mg_free_words(struct mg *m);

#endif
