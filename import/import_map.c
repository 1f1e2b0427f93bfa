/* import_map: the mapping table of an import (import.h): rows kept in the
 * order read, printed aligned for the terminal and written as CSV. */
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"
#include "xalloc.h"

struct import_row {
	enum import_status st;
	char *source, *value, *key, *written, *note;
	char *where;                /* its place in the source ("" unknown) */
};

struct import_map {
	struct import_row *rows;
	int n, cap;
};

struct import_map *import_map_create(void)
{
	return xcalloc(1, sizeof(struct import_map));
}

void import_map_destroy(struct import_map *m)
{
	if (!m)
		return;
	for (int i = 0; i < m->n; i++) {
		struct import_row *r = &m->rows[i];
		free(r->source);
		free(r->value);
		free(r->key);
		free(r->written);
		free(r->note);
		free(r->where);
	}
	free(m->rows);
	free(m);
}

void import_map_add(struct import_map *m, enum import_status st, const char *source, const char *value,
		    const char *key, const char *written, const char *note)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 32;
		m->rows = xreallocarray(m->rows, (size_t)m->cap, sizeof(*m->rows));
	}
	m->rows[m->n++] = (struct import_row){
		.st = st, .source = xstrdup(source), .value = xstrdup(value ? value : ""),
		.key = xstrdup(key ? key : ""), .written = xstrdup(written ? written : ""),
		.note = xstrdup(note ? note : ""), .where = xstrdup(""),
	};
}

void import_map_locate(struct import_map *m, const char *where)
{
	if (!m->n)
		return;
	free(m->rows[m->n - 1].where);
	m->rows[m->n - 1].where = xstrdup(where);
}

/* Whether row key (the table's "ddlsim key": "scenario: /parallel/tp",
 * "model: /layers", or a model key with dots, "moe.experts") is doc's
 * JSON pointer ptr. */
static bool key_is(const char *key, const char *doc, const char *ptr)
{
	size_t dl = strlen(doc);
	if (!strncmp(key, doc, dl) && !strncmp(key + dl, ": ", 2))
		return !strcmp(key + dl + 2, ptr);
	if (strcmp(doc, "model") || strchr(key, ':') || ptr[0] != '/' || !*key)
		return false;
	for (ptr++; *key && *ptr; key++, ptr++)
		if (*key != *ptr && !(*key == '.' && *ptr == '/'))
			return false;
	return !*key && !*ptr;
}

bool import_map_origin(const struct import_map *m, const char *doc, const char *ptr, struct import_origin *o)
{
	const struct import_row *best = NULL;
	for (int i = 0; i < m->n; i++) {
		const struct import_row *r = &m->rows[i];
		if (!key_is(r->key, doc, ptr))
			continue;
		if (!best || (!*best->value && *r->value))
			best = r;
	}
	if (!best)
		return false;
	*o = (struct import_origin){ .st = best->st, .source = best->source, .value = best->value,
				     .written = best->written, .note = best->note, .where = best->where };
	return true;
}

void import_map_rename(struct import_map *m, const char *from, const char *to, const char *value, int st,
		       const char *note)
{
	for (int i = 0; i < m->n; i++) {
		struct import_row *r = &m->rows[i];
		if (strcmp(r->source, from))
			continue;
		free(r->source);
		r->source = xstrdup(to);
		if (value) {
			free(r->value);
			r->value = xstrdup(value);
		}
		if (note) {
			free(r->note);
			r->note = xstrdup(note);
		}
		if (st >= 0)
			r->st = (enum import_status)st;
	}
}

void import_map_subst(struct import_map *m, const char *from, const char *to)
{
	size_t fl = strlen(from), tl = strlen(to);
	for (int i = 0; i < m->n; i++) {
		char **note = &m->rows[i].note;
		for (char *hit = strstr(*note, from); hit; hit = strstr(hit, from)) {
			char after = hit[fl];
			if ((after >= 'a' && after <= 'z') || after == '-') {
				hit += fl;
				continue;
			}
			size_t off = (size_t)(hit - *note);
			char *t = xasprintf("%.*s%s%s", (int)off, *note, to, hit + fl);
			free(*note);
			*note = t;
			hit = t + off + tl;
		}
	}
}

void import_map_drop(struct import_map *m, const char *source)
{
	int k = 0;
	for (int i = 0; i < m->n; i++) {
		struct import_row *r = &m->rows[i];
		if (strcmp(r->source, source)) {
			m->rows[k++] = *r;
			continue;
		}
		free(r->source);
		free(r->value);
		free(r->key);
		free(r->written);
		free(r->note);
		free(r->where);
	}
	m->n = k;
}

int import_map_rows(const struct import_map *m)
{
	return m->n;
}

int import_map_count(const struct import_map *m, enum import_status st)
{
	int n = 0;
	for (int i = 0; i < m->n; i++)
		n += m->rows[i].st == st;
	return n;
}

const char *import_status_name(enum import_status st)
{
	static const char *const name[] = { "mapped", "default", "derived", "ignored", "unknown" };
	return name[st];
}

/* A column's width: the widest cell, capped so a long value wraps the
 * line rather than the table. */
static int width(const struct import_map *m, size_t off, const char *head)
{
	size_t w = strlen(head);
	for (int i = 0; i < m->n; i++) {
		size_t l = strlen(*(char *const *)((const char *)&m->rows[i] + off));
		if (l > w)
			w = l;
	}
	return w > 40 ? 40 : (int)w;
}

void import_map_print(const struct import_map *m, FILE *f)
{
	int ws = width(m, offsetof(struct import_row, source), "source");
	int wv = width(m, offsetof(struct import_row, value), "value");
	int wk = width(m, offsetof(struct import_row, key), "ddlsim key");
	int ww = width(m, offsetof(struct import_row, written), "written");
	fprintf(f, "%-*s  %-*s  %-*s  %-*s  %s\n", ws, "source", wv, "value", wk, "ddlsim key", ww, "written",
		"status");
	for (int i = 0; i < m->n; i++) {
		const struct import_row *r = &m->rows[i];
		fprintf(f, "%-*s  %-*s  %-*s  %-*s  %s", ws, r->source, wv, r->value, wk, r->key, ww, r->written,
			import_status_name(r->st));
		if (r->st == IMPORT_IGNORED)
			fprintf(f, ": %s", *r->note ? r->note : "no effect on time or memory");
		else if (*r->note)
			fprintf(f, ": %s", r->note);
		fputc('\n', f);
	}
	fprintf(f, "%d mapped, %d defaults, %d derived, %d ignored, %d unknown\n", import_map_count(m, IMPORT_MAPPED),
		import_map_count(m, IMPORT_DEFAULT), import_map_count(m, IMPORT_DERIVED),
		import_map_count(m, IMPORT_IGNORED), import_map_count(m, IMPORT_UNKNOWN));
}

/* One CSV field, quoted (RFC 4180) when it holds a comma, quote or newline. */
static void csv_field(FILE *f, const char *s, char sep)
{
	if (strpbrk(s, ",\"\n\r")) {
		fputc('"', f);
		for (; *s; s++) {
			if (*s == '"')
				fputc('"', f);
			fputc(*s, f);
		}
		fputc('"', f);
	} else {
		fputs(s, f);
	}
	fputc(sep, f);
}

int import_map_write_csv(const struct import_map *m, FILE *f)
{
	fputs("source,value,ddlsim_key,written,status,note\n", f);
	for (int i = 0; i < m->n; i++) {
		const struct import_row *r = &m->rows[i];
		csv_field(f, r->source, ',');
		csv_field(f, r->value, ',');
		csv_field(f, r->key, ',');
		csv_field(f, r->written, ',');
		csv_field(f, import_status_name(r->st), ',');
		csv_field(f, r->st == IMPORT_IGNORED && !*r->note ? "no effect on time or memory" : r->note, '\n');
	}
	return ferror(f) ? -1 : 0;
}
