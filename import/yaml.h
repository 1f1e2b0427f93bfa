/* yaml: the part of YAML that a NeMo recipe printed or saved by PyYAML
 * uses, read into a flat list of dotted.path: value entries.
 *
 * Accepted: comments (#), a leading "---", block mappings by indentation
 * (spaces), plain keys, and values that are plain scalars (numbers,
 * true/false, null or ~, anything else a string), single- or
 * double-quoted strings, flow lists of scalars ([a, b]) and block lists
 * (- x) at the key's indentation or deeper; a block list's items that are
 * mappings (- key: value, as PyYAML writes a list of configs) become
 * entries "list.0.key". A nested mapping's keys are joined with '.'
 * ("trainer.strategy.tensor_model_parallel_size"), as toml.c's table.key.
 * Anything else (tabs in indentation, flow mappings, anchors, aliases,
 * tags, block scalars, multi-line plain scalars, complex keys, a key given
 * twice) is an error "file:line:col: error: ...", never skipped. */
#ifndef DDLSIM_YAML_H
#define DDLSIM_YAML_H

#include <stdbool.h>

#include "diag.h"

enum yaml_type { YAML_STRING, YAML_INT, YAML_FLOAT, YAML_BOOL, YAML_NULL, YAML_LIST };

struct yaml_kv {
	const char *key;            /* the dotted path */
	enum yaml_type type;
	const char *str;            /* YAML_STRING: the string */
	long long i;                /* YAML_INT */
	double f;                   /* YAML_FLOAT, and YAML_INT as a double */
	bool b;                     /* YAML_BOOL */
	bool quoted;                /* a quoted string (never a number) */
	const char *text;           /* the value as written (a string unquoted), for the mapping table */
	int n;                      /* YAML_LIST: its elements, in items */
	const struct yaml_kv *items;
	int line, col;              /* where the value starts (the key's, for a null) */
};

struct yaml;

/* Parse text (named file in messages). Returns the entries
 * (yaml_destroy()), or NULL after reporting the first syntax error into
 * d. */
struct yaml *yaml_parse(const char *text, const char *file, struct diag *d);
void yaml_destroy(struct yaml *y);

/* The entries in file order (borrowed, valid until yaml_destroy()). */
int yaml_count(const struct yaml *y);
const struct yaml_kv *yaml_at(const struct yaml *y, int i);
/* The entry of key, or NULL. */
const struct yaml_kv *yaml_get(const struct yaml *y, const char *key);

#endif
