/* toml: a TOML subset reader for framework job files (toml.h).
 *
 * One pass over the text with a cursor that knows its line and column;
 * each value is read by the first character that starts it. Errors stop
 * the reader at once: after a bad token the rest of the line cannot be
 * trusted, and a job file is short enough to fix one error at a time. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "toml.h"
#include "xalloc.h"

struct toml {
	struct toml_kv *kv;
	int n, cap;
	char **strs;                /* every string owned, freed together */
	int nstr, capstr;
	struct toml_kv **arrays;    /* the arrays' element lists */
	int narr, caparr;
};

struct cur {
	const char *p, *file;
	int line, col;
	struct diag *d;
	struct toml *t;
	bool failed;
};

static int fail(struct cur *c, int line, int col, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(struct cur *c, int line, int col, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	c->failed = true;
	return diag_err_at(c->d, c->file, line, col, "%s", msg);
}

static const char *own(struct toml *t, char *s)
{
	if (t->nstr == t->capstr)
		t->strs = xreallocarray(t->strs, (size_t)(t->capstr = t->capstr ? 2 * t->capstr : 32), sizeof(char *));
	return t->strs[t->nstr++] = s;
}

static void adv(struct cur *c)
{
	if (*c->p == '\n')
		c->line++, c->col = 1;
	else
		c->col++;
	c->p++;
}

/* Skip spaces and tabs, and a comment up to the end of the line. */
static void blank(struct cur *c)
{
	while (*c->p == ' ' || *c->p == '\t')
		adv(c);
	if (*c->p == '#')
		while (*c->p && *c->p != '\n')
			adv(c);
}

/* Skip blanks, comments and newlines (inside an array). */
static void blank_lines(struct cur *c)
{
	for (blank(c); *c->p == '\n' || *c->p == '\r'; blank(c))
		adv(c);
}

/* The end of a line: blanks, a comment, then a newline or the end. */
static int eol(struct cur *c)
{
	blank(c);
	if (*c->p == '\r' && c->p[1] == '\n')
		adv(c);
	if (*c->p && *c->p != '\n')
		return fail(c, c->line, c->col, "expected the end of the line, got '%c'", *c->p);
	if (*c->p)
		adv(c);
	return 0;
}

static bool bare(char ch)
{
	return isalnum((unsigned char)ch) || ch == '_' || ch == '-';
}

static int string(struct cur *c, struct toml_kv *v)
{
	char q = *c->p;
	int line = c->line, col = c->col;
	if (c->p[1] == q && c->p[2] == q)
		return fail(c, line, col, "multi-line strings are not read");
	adv(c);
	size_t cap = 32, len = 0;
	char *s = xmalloc(cap);
	while (*c->p != q) {
		if (!*c->p || *c->p == '\n') {
			free(s);
			return fail(c, line, col, "unterminated string");
		}
		char ch = *c->p;
		if (q == '"' && ch == '\\') {
			adv(c);
			switch (*c->p) {
			case '"': ch = '"'; break;
			case '\\': ch = '\\'; break;
			case 'n': ch = '\n'; break;
			case 't': ch = '\t'; break;
			default:
				free(s);
				return fail(c, c->line, c->col, "unknown escape '\\%c'", *c->p ? *c->p : ' ');
			}
		}
		if (len + 2 > cap)
			s = xreallocarray(s, cap *= 2, 1);
		s[len++] = ch;
		adv(c);
	}
	adv(c);
	s[len] = 0;
	v->type = TOML_STRING;
	v->str = v->text = own(c->t, s);
	return 0;
}

static int number_or_bool(struct cur *c, struct toml_kv *v)
{
	const char *start = c->p;
	int line = c->line, col = c->col;
	while (bare(*c->p) || *c->p == '.' || *c->p == '+' || ((*c->p == '-') && c->p != start))
		adv(c);
	size_t n = (size_t)(c->p - start);
	char *w = xmalloc(n + 1), *o = w;
	for (size_t i = 0; i < n; i++)
		if (start[i] != '_')
			*o++ = start[i];
	*o = 0;
	char *raw = xmalloc(n + 1);
	memcpy(raw, start, n);
	raw[n] = 0;
	v->text = own(c->t, raw);
	if (!strcmp(w, "true") || !strcmp(w, "false")) {
		v->type = TOML_BOOL;
		v->b = w[0] == 't';
		free(w);
		return 0;
	}
	char *end;
	errno = 0;
	if (n && !strpbrk(w, ".eEinf")) {
		v->i = strtoll(w, &end, 10);
		v->f = (double)v->i;
		v->type = TOML_INT;
	} else {
		v->f = strtod(w, &end);
		v->type = TOML_FLOAT;
	}
	bool bad = !n || *end || errno || end == w || (v->type == TOML_FLOAT && !isfinite(v->f)) ||
		   !isdigit((unsigned char)w[w[0] == '-' || w[0] == '+']);
	free(w);
	if (bad)
		return fail(c, line, col, "expected a string, number, boolean or array, got '%s'", v->text);
	return 0;
}

static int value(struct cur *c, struct toml_kv *v, bool in_array);

static int array(struct cur *c, struct toml_kv *v)
{
	int line = c->line, col = c->col;
	const char *start = c->p;
	adv(c);
	struct toml_kv *items = NULL;
	int n = 0, cap = 0;
	for (;;) {
		blank_lines(c);
		if (*c->p == ']')
			break;
		if (!*c->p) {
			free(items);
			return fail(c, line, col, "unterminated array");
		}
		if (n == cap)
			items = xreallocarray(items, (size_t)(cap = cap ? 2 * cap : 8), sizeof(*items));
		items[n] = (struct toml_kv){ .table = v->table, .key = v->key, .line = c->line, .col = c->col };
		if (value(c, &items[n], true)) {
			free(items);
			return -1;
		}
		if (n && items[n].type != items[0].type) {
			int l = items[n].line, k = items[n].col;
			free(items);
			return fail(c, l, k, "array elements of mixed types");
		}
		n++;
		blank_lines(c);
		if (*c->p == ',') {
			adv(c);
			continue;
		}
		if (*c->p != ']') {
			free(items);
			return fail(c, c->line, c->col, "expected ',' or ']' in the array, got '%c'", *c->p ? *c->p : ' ');
		}
	}
	adv(c);
	struct toml *t = c->t;
	if (t->narr == t->caparr)
		t->arrays = xreallocarray(t->arrays, (size_t)(t->caparr = t->caparr ? 2 * t->caparr : 8),
					  sizeof(*t->arrays));
	t->arrays[t->narr++] = items;
	v->type = TOML_ARRAY;
	v->items = items;
	v->n = n;
	size_t len = (size_t)(c->p - start);
	char *raw = xmalloc(len + 1);
	memcpy(raw, start, len);
	raw[len] = 0;
	for (char *r = raw; *r; r++)
		if (*r == '\n' || *r == '\r')
			*r = ' ';
	v->text = own(t, raw);
	return 0;
}

static int value(struct cur *c, struct toml_kv *v, bool in_array)
{
	v->line = c->line, v->col = c->col;
	char ch = *c->p;
	if (ch == '"' || ch == '\'')
		return string(c, v);
	if (ch == '[')
		return in_array ? fail(c, c->line, c->col, "arrays of arrays are not read") : array(c, v);
	if (ch == '{')
		return fail(c, c->line, c->col, "inline tables are not read");
	if (!ch || ch == '\n' || ch == '#')
		return fail(c, c->line, c->col, "expected a value");
	return number_or_bool(c, v);
}

/* A [table] header. */
static int header(struct cur *c, const char **table)
{
	int line = c->line, col = c->col;
	adv(c);
	if (*c->p == '[')
		return fail(c, line, col, "arrays of tables ([[...]]) are not read");
	blank(c);
	const char *s = c->p;
	while (bare(*c->p) || *c->p == '.')
		adv(c);
	size_t n = (size_t)(c->p - s);
	blank(c);
	if (!n || *c->p != ']')
		return fail(c, c->line, c->col, "expected a table name of letters, digits, '_', '-' and '.' then ']'");
	adv(c);
	char *name = xmalloc(n + 1);
	memcpy(name, s, n);
	name[n] = 0;
	*table = own(c->t, name);
	for (int i = 0; i < c->t->n; i++)
		if (!strcmp(c->t->kv[i].table, name))
			return fail(c, line, col, "table '%s' given twice", name);
	return eol(c);
}

/* key = value */
static int pair(struct cur *c, const char *table)
{
	int line = c->line, col = c->col;
	const char *s = c->p;
	while (bare(*c->p))
		adv(c);
	size_t n = (size_t)(c->p - s);
	if (!n)
		return fail(c, line, col, "expected a key of letters, digits, '_' and '-', got '%c'", *c->p);
	if (*c->p == '.')
		return fail(c, c->line, c->col, "dotted keys are not read");
	char *key = xmalloc(n + 1);
	memcpy(key, s, n);
	key[n] = 0;
	own(c->t, key);
	blank(c);
	if (*c->p != '=')
		return fail(c, c->line, c->col, "expected '=' after the key '%s'", key);
	adv(c);
	blank(c);
	struct toml *t = c->t;
	for (int i = 0; i < t->n; i++)
		if (!strcmp(t->kv[i].table, table) && !strcmp(t->kv[i].key, key))
			return fail(c, line, col, "key '%s' given twice in [%s] (first at line %d)", key, table,
				    t->kv[i].line);
	struct toml_kv v = { .table = table, .key = key };
	if (value(c, &v, false))
		return -1;
	if (t->n == t->cap)
		t->kv = xreallocarray(t->kv, (size_t)(t->cap = t->cap ? 2 * t->cap : 32), sizeof(*t->kv));
	t->kv[t->n++] = v;
	return eol(c);
}

struct toml *toml_parse(const char *text, const char *file, struct diag *d)
{
	struct toml *t = xcalloc(1, sizeof(*t));
	struct cur c = { .p = text, .file = file, .line = 1, .col = 1, .d = d, .t = t };
	const char *table = "";
	while (*c.p && !c.failed) {
		blank(&c);
		if (*c.p == '\n' || *c.p == '\r')
			adv(&c);
		else if (*c.p == '[')
			header(&c, &table);
		else if (*c.p)
			pair(&c, table);
	}
	if (c.failed) {
		toml_destroy(t);
		return NULL;
	}
	return t;
}

void toml_destroy(struct toml *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->nstr; i++)
		free(t->strs[i]);
	for (int i = 0; i < t->narr; i++)
		free(t->arrays[i]);
	free(t->strs);
	free(t->arrays);
	free(t->kv);
	free(t);
}

int toml_count(const struct toml *t)
{
	return t->n;
}

const struct toml_kv *toml_at(const struct toml *t, int i)
{
	return &t->kv[i];
}
