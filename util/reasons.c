/* reasons: rejections grouped by their message, numbers masked (see
 * reasons.h). Groups are found by a hash of the masked text, then
 * compared in full; their number is bounded, so a linear search is
 * cheap. */
#include "reasons.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

struct group {
	struct reason r;
	char *key;              /* the first line, numbers masked as '#' */
	uint64_t hash;
	long first;             /* order of arrival: breaks ties */
};

struct reasons {
	struct group *g;
	int n;
	size_t cap;
	long total;
	bool sorted;
};

struct reasons *reasons_create(void)
{
	return xcalloc(1, sizeof(struct reasons));
}

void reasons_destroy(struct reasons *r)
{
	if (!r)
		return;
	for (int i = 0; i < r->n; i++) {
		free(r->g[i].key);
		free((char *)r->g[i].r.msg);
		free((char *)r->g[i].r.example);
	}
	free(r->g);
	free(r);
}

/* msg on one line (malloc'd): control characters as \n, \t or \xNN. */
static char *one_line(const char *msg)
{
	size_t n = strlen(msg);
	char *out = xmalloc(4 * n + 1), *o = out;
	for (const unsigned char *c = (const unsigned char *)msg; *c; c++)
		if (*c == '\n' || *c == '\t')
			*o++ = '\\', *o++ = *c == '\n' ? 'n' : 't';
		else if (*c < 0x20 || *c == 0x7f)
			o += sprintf(o, "\\x%02x", *c);
		else
			*o++ = (char)*c;
	*o = 0;
	return out;
}

static bool in_number(const char *m, size_t i)
{
	char c = m[i];
	if (isdigit((unsigned char)c) || c == '.')
		return true;
	if ((c == 'e' || c == 'E') && (isdigit((unsigned char)m[i + 1]) || m[i + 1] == '+' || m[i + 1] == '-'))
		return true;
	return (c == '+' || c == '-') && (m[i - 1] == 'e' || m[i - 1] == 'E');
}

/* msg with each number ("80", "1e+06", "2.5") one '#' (malloc'd), and
 * its FNV-1a hash. */
static char *mask(const char *msg, uint64_t *hash)
{
	char *k = xmalloc(strlen(msg) + 1), *o = k;
	uint64_t h = 14695981039346656037ULL;
	for (size_t i = 0; msg[i];) {
		if (isdigit((unsigned char)msg[i])) {
			while (msg[i] && in_number(msg, i))
				i++;
			*o = '#';
		} else
			*o = msg[i++];
		h = (h ^ (unsigned char)*o++) * 1099511628211ULL;
	}
	*o = 0;
	*hash = h;
	return k;
}

static struct group *open_group(struct reasons *r, char *key, uint64_t h, const char *msg, const char *example)
{
	XGROW(r->g, r->cap, (size_t)r->n + 1);
	struct group *g = &r->g[r->n];
	g->key = key;
	g->hash = h;
	g->first = r->n++;
	g->r.msg = xstrdup(msg);
	g->r.example = xstrdup(example ? example : "");
	g->r.count = 0;
	return g;
}

/* The open group of masked key (hash h), or NULL. */
static struct group *find_group(struct reasons *r, const char *key, uint64_t h)
{
	for (int i = 0; i < r->n; i++)
		if (r->g[i].hash == h && !strcmp(r->g[i].key, key))
			return &r->g[i];
	return NULL;
}

/* Whether msg has a character one_line() would escape. */
static bool needs_escape(const char *msg)
{
	for (const unsigned char *c = (const unsigned char *)msg; *c; c++)
		if (*c < 0x20 || *c == 0x7f)
			return true;
	return false;
}

bool reasons_count(struct reasons *r, const char *msg)
{
	uint64_t h;
	/* most calls (a plan search's rejections) have nothing to escape */
	char *line = needs_escape(msg) ? one_line(msg) : NULL, *key = mask(line ? line : msg, &h);
	struct group *g = find_group(r, key, h);
	free(key);
	free(line);
	if (!g)
		return false;
	g->r.count++;
	r->total++;
	r->sorted = false;
	return true;
}

void reasons_add(struct reasons *r, const char *msg, const char *example)
{
	uint64_t h;
	char *line = one_line(msg), *key = mask(line, &h);
	struct group *g = find_group(r, key, h);
	if (g)
		free(key);
	else if (r->n < REASONS_MAX)
		g = open_group(r, key, h, line, example);
	else {
		free(key);
		if (r->n == REASONS_MAX)
			open_group(r, xstrdup(""), 0, "other reasons", "");
		g = &r->g[REASONS_MAX];
	}
	free(line);
	g->r.count++;
	r->total++;
	r->sorted = false;
}

long reasons_total(const struct reasons *r)
{
	return r->total;
}

int reasons_groups(const struct reasons *r)
{
	return r->n;
}

static int by_count(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	bool xo = x->first == REASONS_MAX, yo = y->first == REASONS_MAX;
	if (xo != yo)
		return xo - yo;
	if (x->r.count != y->r.count)
		return x->r.count > y->r.count ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

const struct reason *reasons_get(struct reasons *r, int i)
{
	if (!r->sorted) {
		qsort(r->g, (size_t)r->n, sizeof(*r->g), by_count);
		r->sorted = true;
	}
	return &r->g[i].r;
}
