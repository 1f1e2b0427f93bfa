/* yaml: a YAML subset reader for NeMo recipes (yaml.h).
 *
 * The text is cut into logical lines first (indentation, content without
 * its comment, line number); a recursive descent over them then reads a
 * block mapping at one indentation, a nested block one level deeper, a
 * block list at its key's indentation or deeper. Errors stop the reader
 * at once, as toml.c's: a recipe is short enough to fix one at a time. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"
#include "yaml.h"

struct yaml {
	struct yaml_kv *kv;
	int n, cap;
	char **strs;                /* every string owned, freed together */
	int nstr, capstr;
	struct yaml_kv **lists;     /* the lists' element arrays */
	int nlist, caplist;
};

struct line {
	const char *s;              /* content, from the first non-blank */
	int len;                    /* without the comment and trailing blanks */
	int indent, no;
};

struct rd {
	struct line *l;
	int n, at;
	const char *file;
	struct diag *d;
	struct yaml *y;
	bool failed;
};

static int fail(struct rd *r, int line, int col, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(struct rd *r, int line, int col, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r->failed = true;
	return diag_err_at(r->d, r->file, line, col, "%s", msg);
}

static const char *own(struct yaml *y, char *s)
{
	if (y->nstr == y->capstr)
		y->strs = xreallocarray(y->strs, (size_t)(y->capstr = y->capstr ? 2 * y->capstr : 32), sizeof(char *));
	return y->strs[y->nstr++] = s;
}

static const char *own_n(struct yaml *y, const char *s, size_t n)
{
	char *c = xmalloc(n + 1);
	memcpy(c, s, n);
	c[n] = 0;
	return own(y, c);
}

/* The length of line s (up to e) without its comment (a '#' at the start
 * or after a blank, outside quotes) and trailing blanks. */
static int split_content(const char *s, const char *e)
{
	int len = 0;
	char q = 0;
	for (const char *c = s; c < e; c++) {
		if (q) {
			if (*c == q)
				q = 0;
		} else if (*c == '"' || *c == '\'') {
			if (c == s || c[-1] == ' ' || c[-1] == '[' || c[-1] == ',' || c[-1] == ':')
				q = *c;
		} else if (*c == '#' && (c == s || c[-1] == ' ' || c[-1] == '\t')) {
			break;
		}
		len = (int)(c - s) + 1;
	}
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r'))
		len--;
	return len;
}

/* Keep line no (content s[0..len) at indent ind) unless it is the first
 * document's "---"; a second document is an error. Returns 0 or fail(). */
static int split_keep(struct rd *r, int *cap, const char *s, int len, int ind, int no)
{
	if (r->n == 0 && len == 3 && !strncmp(s, "---", 3))
		return 0;
	if (len >= 3 && (!strncmp(s, "---", 3) || !strncmp(s, "...", 3)) && (len == 3 || s[3] == ' '))
		return fail(r, no, ind + 1, "a second document ('%.3s') is not read", s);
	if (r->n == *cap)
		r->l = xreallocarray(r->l, (size_t)(*cap = *cap ? 2 * *cap : 64), sizeof(*r->l));
	r->l[r->n++] = (struct line){ .s = s, .len = len, .indent = ind, .no = no };
	return 0;
}

/* Cut text into lines: blank and comment-only lines dropped, a comment
 * (a '#' at the start or after a blank, outside quotes) cut off. */
static int split(struct rd *r, const char *text)
{
	int cap = 0, no = 0;
	for (const char *p = text; *p;) {
		const char *e = strchr(p, '\n');
		if (!e)
			e = p + strlen(p);
		no++;
		int ind = 0;
		while (p + ind < e && p[ind] == ' ')
			ind++;
		if (p + ind < e && p[ind] == '\t')
			return fail(r, no, ind + 1, "a tab in the indentation (YAML indents with spaces)");
		const char *s = p + ind;
		int len = split_content(s, e);
		p = *e ? e + 1 : e;
		if (len && split_keep(r, &cap, s, len, ind, no))
			return -1;
	}
	return 0;
}

/* The character a double-quoted string's escape "\c" stands for, 0 for
 * one not read. */
static char escape_char(char c)
{
	return c == 'n' ? '\n' : c == 't' ? '\t' : c == '"' || c == '\\' || c == '/' ? c : 0;
}

/* A quoted scalar (s[0] its quote) in s[0..len) at line:col into v. */
static int quoted_scalar(struct rd *r, const char *s, int len, int line, int col, struct yaml_kv *v)
{
	char ch = s[0];
	char *o = xmalloc((size_t)len + 1);
	int k = 0, i = 1;
	for (; i < len && !(s[i] == ch && !(ch == '\'' && i + 1 < len && s[i + 1] == '\'')); i++) {
		if (ch == '\'' && s[i] == '\'') {
			o[k++] = '\'';
			i++;
			continue;
		}
		if (ch == '"' && s[i] == '\\' && i + 1 < len) {
			i++;
			char e = escape_char(s[i]);
			if (!e) {
				free(o);
				return fail(r, line, col + i - 1, "unknown escape '\\%c'", s[i]);
			}
			o[k++] = e;
			continue;
		}
		o[k++] = s[i];
	}
	o[k] = 0;
	if (i >= len) {
		free(o);
		return fail(r, line, col, "unterminated string");
	}
	if (i + 1 != len) {
		free(o);
		return fail(r, line, col + i + 1, "expected the end of the value after the string, got '%c'",
			    s[i + 1]);
	}
	v->type = YAML_STRING;
	v->quoted = true;
	v->str = v->text = own(r->y, o);
	return 0;
}

/* What a plain scalar in s[0..len) at line:col may not be or hold: an
 * indicator, a list, ': '. Returns 0 or fail(). */
static int plain_check(struct rd *r, const char *s, int len, int line, int col)
{
	char ch = s[0];
	if (strchr("&*!|>%@`{?", ch))
		return fail(r, line, col, "%s are not read", ch == '&' ? "anchors" : ch == '*' ? "aliases" :
			    ch == '!' ? "tags" : ch == '|' || ch == '>' ? "block scalars" : ch == '{' ?
			    "flow mappings" : ch == '?' ? "complex keys" : "reserved indicators");
	if (ch == '[')
		return fail(r, line, col, "lists of lists are not read");
	if (ch == '-' && (len == 1 || s[1] == ' '))
		return fail(r, line, col, "a list item where a value was expected");
	for (int i = 0; i + 1 < len; i++)
		if (s[i] == ':' && s[i + 1] == ' ')
			return fail(r, line, col + i, "': ' inside a plain value (quote the value)");
	return 0;
}

/* A plain scalar's type and value from its text t: a boolean (YAML 1.1's,
 * as PyYAML reads them), null, an integer, a float, else a string. */
static void plain_type(struct yaml_kv *v, const char *t)
{
	static const char *const yes[] = { "true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON", NULL };
	static const char *const no[] = { "false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF", NULL };
	for (int k = 0; yes[k]; k++)
		if (!strcmp(t, yes[k]) || !strcmp(t, no[k])) {
			v->type = YAML_BOOL;
			v->b = !strcmp(t, yes[k]);
			return;
		}
	if (!strcmp(t, "null") || !strcmp(t, "Null") || !strcmp(t, "~")) {
		v->type = YAML_NULL;
		return;
	}
	char *end;
	errno = 0;
	long long i = strtoll(t, &end, 10);
	if (!*end && !errno && (isdigit((unsigned char)t[0]) || ((t[0] == '-' || t[0] == '+') && t[1]))) {
		v->type = YAML_INT;
		v->i = i;
		v->f = (double)i;
		return;
	}
	errno = 0;
	double f = strtod(t, &end);
	if (!*end && !errno && isfinite(f) && strpbrk(t, "0123456789") && !strpbrk(t, "xXnN")) {
		v->type = YAML_FLOAT;
		v->f = f;
		return;
	}
	v->type = YAML_STRING;
	v->str = t;
}

/* A scalar in s[0..len) at line:col into v. */
static int scalar(struct rd *r, const char *s, int len, int line, int col, struct yaml_kv *v)
{
	v->line = line, v->col = col;
	if (!len) {
		v->type = YAML_NULL;
		v->text = "";
		return 0;
	}
	if (s[0] == '"' || s[0] == '\'')
		return quoted_scalar(r, s, len, line, col, v);
	if (plain_check(r, s, len, line, col))
		return -1;
	const char *t = own_n(r->y, s, (size_t)len);
	v->text = t;
	plain_type(v, t);
	return 0;
}

static void add(struct rd *r, struct yaml_kv v)
{
	struct yaml *y = r->y;
	if (y->n == y->cap)
		y->kv = xreallocarray(y->kv, (size_t)(y->cap = y->cap ? 2 * y->cap : 32), sizeof(*y->kv));
	y->kv[y->n++] = v;
}

static struct yaml_kv *own_list(struct yaml *y, struct yaml_kv *items)
{
	if (y->nlist == y->caplist)
		y->lists = xreallocarray(y->lists, (size_t)(y->caplist = y->caplist ? 2 * y->caplist : 8),
					 sizeof(*y->lists));
	return y->lists[y->nlist++] = items;
}

/* A flow list "[a, b]" in s[0..len) at line:col. */
static int flow_list(struct rd *r, const char *s, int len, int line, int col, struct yaml_kv *v)
{
	if (s[len - 1] != ']')
		return fail(r, line, col, "a flow list must close on its line with ']'");
	struct yaml_kv *items = NULL;
	int n = 0, cap = 0, i = 1;
	while (i < len - 1) {
		while (i < len - 1 && s[i] == ' ')
			i++;
		if (i == len - 1)
			break;
		int j = i;
		char q = 0;
		while (j < len - 1 && (q || s[j] != ',')) {
			if (q && s[j] == q)
				q = 0;
			else if (!q && (s[j] == '"' || s[j] == '\''))
				q = s[j];
			j++;
		}
		int e = j;
		while (e > i && s[e - 1] == ' ')
			e--;
		if (n == cap)
			items = xreallocarray(items, (size_t)(cap = cap ? 2 * cap : 8), sizeof(*items));
		items[n] = (struct yaml_kv){ .key = v->key };
		if (e == i || scalar(r, s + i, e - i, line, col + i, &items[n])) {
			free(items);
			return r->failed ? -1 : fail(r, line, col + i, "an empty element in the flow list");
		}
		if (items[n].type == YAML_LIST) {
			free(items);
			return fail(r, line, col + i, "lists of lists are not read");
		}
		n++;
		i = j + 1;
	}
	v->type = YAML_LIST;
	v->items = own_list(r->y, items);
	v->n = n;
	v->text = own_n(r->y, s, (size_t)len);
	return 0;
}

/* A value in s[0..len) (after "key: " or "- ") at line:col. */
static int value(struct rd *r, const char *s, int len, int line, int col, struct yaml_kv *v)
{
	if (len && s[0] == '[')
		return flow_list(r, s, len, line, col, v);
	return scalar(r, s, len, line, col, v);
}

/* Where "key:" ends in s (the ':' followed by a blank or the end), or -1. */
static int key_end(const char *s, int len)
{
	if (s[0] == '"' || s[0] == '\'' || s[0] == '[' || s[0] == '{')
		return -1;
	for (int i = 0; i < len; i++)
		if (s[i] == ':' && (i + 1 == len || s[i + 1] == ' '))
			return i;
	return -1;
}

static int mapping(struct rd *r, int indent, const char *prefix);

/* A block list of key (lines at indent starting with '-'). */
static int block_list(struct rd *r, int indent, const char *key, int kline, int kcol)
{
	struct yaml_kv *items = NULL;
	int n = 0, cap = 0, maps = 0;
	while (r->at < r->n && !r->failed && r->l[r->at].indent == indent && r->l[r->at].s[0] == '-' &&
	       (r->l[r->at].len == 1 || r->l[r->at].s[1] == ' ')) {
		struct line *l = &r->l[r->at];
		int off = 1;
		while (off < l->len && l->s[off] == ' ')
			off++;
		const char *s = l->s + off;
		int len = l->len - off, col = l->indent + off + 1;
		if (len && key_end(s, len) > 0) {
			/* a mapping item: its keys at the column after "- " */
			char *pfx = xasprintf("%s.%d", key, maps + n);
			l->s = s, l->len = len, l->indent = col - 1;
			int rc = mapping(r, col - 1, pfx);
			free(pfx);
			if (rc)
				break;
			maps++;
			continue;
		}
		if (maps) {
			fail(r, l->no, col, "a list of both mappings and scalars");
			break;
		}
		if (n == cap)
			items = xreallocarray(items, (size_t)(cap = cap ? 2 * cap : 8), sizeof(*items));
		items[n] = (struct yaml_kv){ .key = key };
		if (len && s[0] == '[') {
			fail(r, l->no, col, "lists of lists are not read");
			break;
		}
		if (value(r, s, len, l->no, col, &items[n]))
			break;
		n++;
		r->at++;
	}
	if (r->failed) {
		free(items);
		return -1;
	}
	if (maps) {
		free(items);
		return 0;
	}
	struct yaml_kv v = { .key = key, .type = YAML_LIST, .items = own_list(r->y, items), .n = n, .line = kline,
			     .col = kcol };
	char *t = xstrdup("[");
	for (int i = 0; i < n; i++) {
		char *u = xasprintf("%s%s%s", t, i ? ", " : "", items[i].text);
		free(t);
		t = u;
	}
	char *u = xasprintf("%s]", t);
	free(t);
	v.text = own(r->y, u);
	add(r, v);
	return 0;
}

/* Whether s[0..len) is a list item ("-" alone or followed by a blank). */
static bool is_item(const char *s, int len)
{
	return s[0] == '-' && (len == 1 || s[1] == ' ');
}

/* Where the key of line l (expected at a mapping's indentation) ends: its
 * colon, or -1 after fail() (a list item, a complex, quoted or malformed
 * key, a '.' or '#' in it). */
static int mapping_key(struct rd *r, const struct line *l)
{
	if (is_item(l->s, l->len))
		return fail(r, l->no, l->indent + 1, "a list item where a key was expected");
	if (l->s[0] == '?' && (l->len == 1 || l->s[1] == ' '))
		return fail(r, l->no, l->indent + 1, "complex keys are not read");
	int ke = key_end(l->s, l->len);
	if (ke < 0)
		return fail(r, l->no, l->indent + 1, l->s[0] == '"' || l->s[0] == '\'' ?
			    "quoted keys are not read" : "expected 'key: value' (a plain key, a colon and a blank)");
	for (int i = 0; i < ke; i++)
		if (l->s[i] == '.' || l->s[i] == '#')
			return fail(r, l->no, l->indent + 1 + i, "a '%c' in a key is not read (keys join with '.')",
				    l->s[i]);
	return ke;
}

/* A key already read as key or as a prefix of another's at line l.
 * Returns 0 or fail(). */
static int mapping_twice(struct rd *r, const char *key, const struct line *l)
{
	size_t kl = strlen(key);
	for (int i = 0; i < r->y->n; i++)
		if (!strcmp(r->y->kv[i].key, key) || (!strncmp(r->y->kv[i].key, key, kl) && r->y->kv[i].key[kl] == '.'))
			return fail(r, l->no, l->indent + 1, "key '%s' given twice (first at line %d)", key,
				    r->y->kv[i].line);
	return 0;
}

/* What key (a mapping at indent, on line kline:kcol, with no value on its
 * line) holds: a block list, a nested mapping, else null. */
static int mapping_nested(struct rd *r, int indent, const char *key, int kline, int kcol)
{
	struct line *nx = r->at < r->n ? &r->l[r->at] : NULL;
	if (nx && is_item(nx->s, nx->len) && nx->indent >= indent)
		return block_list(r, nx->indent, key, kline, kcol);
	if (nx && nx->indent > indent) {
		int before = r->y->n;
		if (mapping(r, nx->indent, key))
			return -1;
		if (r->y->n != before)
			return 0;
	}
	add(r, (struct yaml_kv){ .key = key, .type = YAML_NULL, .text = "", .line = kline, .col = kcol });
	return 0;
}

/* A block mapping whose keys stand at indent, under prefix ("" at the
 * top). Reads lines from r->at while they are at indent. */
static int mapping(struct rd *r, int indent, const char *prefix)
{
	while (r->at < r->n && !r->failed) {
		struct line *l = &r->l[r->at];
		if (l->indent < indent)
			return 0;
		if (l->indent > indent)
			return fail(r, l->no, l->indent + 1, "unexpected indentation (expected a key at column %d)",
				    indent + 1);
		int ke = mapping_key(r, l);
		if (ke < 0)
			return -1;
		char *k = xasprintf("%s%s%.*s", prefix, *prefix ? "." : "", ke, l->s);
		const char *key = own(r->y, k);
		if (mapping_twice(r, key, l))
			return -1;
		int off = ke + 1;
		while (off < l->len && l->s[off] == ' ')
			off++;
		int kline = l->no, kcol = l->indent + 1;
		r->at++;
		if (off < l->len) {
			struct yaml_kv v = { .key = key };
			if (value(r, l->s + off, l->len - off, l->no, l->indent + off + 1, &v))
				return -1;
			add(r, v);
		} else if (mapping_nested(r, indent, key, kline, kcol)) {
			return -1;
		}
	}
	return r->failed ? -1 : 0;
}

struct yaml *yaml_parse(const char *text, const char *file, struct diag *d)
{
	struct yaml *y = xcalloc(1, sizeof(*y));
	struct rd r = { .file = file, .d = d, .y = y };
	if (!split(&r, text) && r.n) {
		if (r.l[0].indent)
			fail(&r, r.l[0].no, 1, "the document must start at column 1");
		else
			mapping(&r, 0, "");
		if (!r.failed && r.at < r.n)
			fail(&r, r.l[r.at].no, r.l[r.at].indent + 1, "unexpected indentation");
	}
	free(r.l);
	if (r.failed) {
		yaml_destroy(y);
		return NULL;
	}
	return y;
}

void yaml_destroy(struct yaml *y)
{
	if (!y)
		return;
	for (int i = 0; i < y->nstr; i++)
		free(y->strs[i]);
	for (int i = 0; i < y->nlist; i++)
		free(y->lists[i]);
	free(y->strs);
	free(y->lists);
	free(y->kv);
	free(y);
}

int yaml_count(const struct yaml *y)
{
	return y->n;
}

const struct yaml_kv *yaml_at(const struct yaml *y, int i)
{
	return &y->kv[i];
}

const struct yaml_kv *yaml_get(const struct yaml *y, const char *key)
{
	for (int i = 0; i < y->n; i++)
		if (!strcmp(y->kv[i].key, key))
			return &y->kv[i];
	return NULL;
}
