/* toml: the part of TOML that a training framework's job file uses, read
 * into a flat list of table.key = value entries.
 *
 * Accepted: comments (#), [table] headers (dotted names kept whole),
 * bare keys, and values that are basic or literal strings, integers
 * (sign, underscores), floats, booleans, and arrays (over lines, trailing
 * comma) of those. Anything else (inline tables, dates, multi-line
 * strings, dotted or quoted keys, a key or table given twice) is an error
 * "file:line:col: error: ...", never skipped. */
#ifndef DDLSIM_TOML_H
#define DDLSIM_TOML_H

#include <stdbool.h>

#include "diag.h"

enum toml_type { TOML_STRING, TOML_INT, TOML_FLOAT, TOML_BOOL, TOML_ARRAY };

struct toml_kv {
	const char *table;          /* "" before any header */
	const char *key;
	enum toml_type type;
	const char *str;            /* TOML_STRING: the string */
	long long i;                /* TOML_INT */
	double f;                   /* TOML_FLOAT, and TOML_INT as a double */
	bool b;                     /* TOML_BOOL */
	const char *text;           /* the value as written (a string unquoted), for the mapping table */
	int n;                      /* TOML_ARRAY: its elements, in items */
	const struct toml_kv *items;
	int line, col;              /* where the value starts */
};

struct toml;

/* Parse text (named file in messages). Returns the entries (toml_destroy()),
 * or NULL after reporting the first syntax error into d. */
struct toml *toml_parse(const char *text, const char *file, struct diag *d);
void toml_destroy(struct toml *t);

/* The entries in file order (borrowed, valid until toml_destroy()). */
int toml_count(const struct toml *t);
const struct toml_kv *toml_at(const struct toml *t, int i);

#endif
