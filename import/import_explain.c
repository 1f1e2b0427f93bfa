/* import_explain: what the loaders say about an import's documents, said
 * at the user's own key or flag (import_map_explain(), import.h).
 *
 * `ddlsim import` checks the documents it builds by loading them, and the
 * loaders name ddlsim's files and keys ("run.model.json: /layers: error:
 * must be <= 2147483647, got 4096000000"): a file that does not exist yet
 * and a key the user never wrote. The mapping table knows which source
 * key or flag set each ddlsim key, so each such error is said again at
 * it, in the house form, with the ddlsim key kept in parentheses:
 *
 *   launch.sh:8:5: error: --num-layers: must be <= 2147483647, got
 *   99999999999 (ddlsim's model key /layers)
 *   config.json: /num_hidden_layers: error: ... (ddlsim's model key /layers)
 *
 * A value the importer derived or defaulted says so ("written 51200:
 * 50257 padded to ..."). A message at a key no row set is kept as is. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"
#include "xalloc.h"

/* The place of the origin o: its own, else input's JSON pointer of a key
 * the input gave (a JSON input), else input, else "" (the command line).
 * Caller frees. */
static char *explain_where(const struct import_origin *o, const char *input, bool json_input)
{
	if (*o->where)
		return xstrdup(o->where);
	if (!input)
		return xstrdup("");
	if (json_input && *o->value && o->source[0] != '(' && o->source[0] != '-') {
		char *p = xasprintf("%s: /%s", input, o->source);
		for (char *c = p + strlen(input) + 3; *c; c++)
			if (*c == '.')
				*c = '/';
		return p;
	}
	return xstrdup(input);
}

/* Whether place where names the source key itself (a JSON pointer ending
 * in it): then the message need not repeat it. */
static bool where_names(const char *where, const char *source)
{
	size_t wl = strlen(where), sl = strlen(source);
	return wl > sl && where[wl - sl - 1] == '/' && !strcmp(where + wl - sl, source);
}

/* Whether the loader's name a of the model file is b: the same, or the
 * same last component (the loader read it by its absolute name). */
static bool same_file_name(const char *a, const char *b)
{
	const char *sa = strrchr(a, '/'), *sb = strrchr(b, '/');
	return !strcmp(a, b) || !strcmp(sa ? sa + 1 : a, sb ? sb + 1 : b);
}

/* The document ("model", "scenario") and origin of the error in line l
 * (cut there: *at the key's JSON pointer, *msg the message), or NULL
 * when it is not an error at a key a row of m set. */
static const char *explain_find(const struct import_map *m, char *l, const struct import_inputs *in, char **at,
				char **msg, struct import_origin *o)
{
	char *err = strstr(l, ": error: "), *p = NULL;
	for (char *c = l; err && (c = strstr(c, ": /")) && c < err; c++)
		p = c;
	if (!p)
		return NULL;
	*p = *err = 0;
	const char *doc = in->scenario_path && !strcmp(l, in->scenario_path) ? "scenario" :
			  in->model_path && same_file_name(l, in->model_path) ? "model" : NULL;
	if (!doc || !import_map_origin(m, doc, p + 2, o)) {
		*p = *err = ':';
		return NULL;
	}
	*at = p + 2;
	*msg = err + 9;
	return doc;
}

/* One line of the loaders' text (len bytes, no newline) to out, said at
 * its origin when it is an error at a key of a document of the import. */
static void explain_line(const struct import_map *m, const char *line, size_t len, const struct import_inputs *in,
			 FILE *out)
{
	char *l = xasprintf("%.*s", (int)len, line), *at, *msg;
	struct import_origin o;
	const char *doc = explain_find(m, l, in, &at, &msg, &o);
	if (!doc) {
		fprintf(out, "%s\n", l);
		free(l);
		return;
	}
	char *where = explain_where(&o, !strcmp(doc, "model") ? in->model_input : in->scenario_input, in->json);
	const char *src = o.source[0] == '(' ? "" : o.source;
	bool named = where_names(where, src);
	fprintf(out, "%s%serror: %s%s%s (ddlsim's %s key %s", where, *where ? ": " : "", named ? "" : src,
		*src && !named ? ": " : "", msg, doc, at);
	if (o.st == IMPORT_DERIVED || o.st == IMPORT_DEFAULT)
		fprintf(out, ", written %s%s%s", o.written, *o.note ? ": " : "", o.note);
	fputs(")\n", out);
	free(where);
	free(l);
}

char *import_map_explain(const struct import_map *m, const char *text, const struct import_inputs *in)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&buf, &size);
	if (!out)
		return xstrdup(text);
	for (const char *p = text; *p;) {
		size_t len = strcspn(p, "\n");
		explain_line(m, p, len, in, out);
		p += len + (p[len] == '\n');
	}
	fclose(out);
	return buf;
}
