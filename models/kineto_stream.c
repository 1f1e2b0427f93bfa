/* kineto_stream: a trace's JSON text read one trace event at a time
 * (kineto-private.h), so that a trace of hundreds of MB is not held as a
 * tree (jansson's takes about nine times the text: a 35 MB trace, 323 MB).
 *
 * The top level is scanned by hand (an object of keys and values); each
 * key, each top-level value and each element of "traceEvents" is decoded
 * by jansson alone (JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK: it stops at
 * the end of the value and says how many bytes it read). Anything else
 * (a syntax error, a duplicate key, a top level that is not an object)
 * stops the scan: the caller then decodes the text whole, as before,
 * and reports jansson's line:column. */
#include "kineto-private.h"

#include <string.h>

#define VALUE_FLAGS (JSON_DECODE_ANY | JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES)

static size_t skip_ws(const char *b, size_t len, size_t p)
{
	while (p < len && (b[p] == ' ' || b[p] == '\t' || b[p] == '\n' || b[p] == '\r'))
		p++;
	return p;
}

/* One value at *p, advancing *p past it; NULL if none decodes. */
static json_t *value_at(const char *b, size_t len, size_t *p)
{
	json_error_t err;
	json_t *v = *p < len ? json_loadb(b + *p, len - *p, VALUE_FLAGS, &err) : NULL;
	if (v)
		*p += (size_t)err.position;
	return v;
}

/* The elements of the array at *p (its '['), each given to on_event. */
static int events_at(const char *b, size_t len, size_t *p, void (*on_event)(void *, json_t *, int),
		     void *ctx)
{
	size_t q = skip_ws(b, len, *p + 1);
	if (q < len && b[q] == ']') {
		*p = q + 1;
		return 0;
	}
	for (int i = 0;; i++) {
		json_t *e = value_at(b, len, &q);
		if (!e)
			return -1;
		on_event(ctx, e, i);
		json_decref(e);
		q = skip_ws(b, len, q);
		if (q < len && b[q] == ']') {
			*p = q + 1;
			return 0;
		}
		if (q >= len || b[q] != ',')
			return -1;
		q = skip_ws(b, len, q + 1);
	}
}

json_t *kineto_stream(const char *b, size_t len, void (*on_event)(void *ctx, json_t *e, int i), void *ctx,
		      bool *had_events)
{
	size_t p = skip_ws(b, len, 0);
	json_t *root = json_object();
	*had_events = false;
	if (p >= len || b[p] != '{')
		goto fail;
	p = skip_ws(b, len, p + 1);
	if (p < len && b[p] == '}') {
		p++;
		goto end;
	}
	for (;;) {
		if (p >= len || b[p] != '"')
			goto fail;
		json_t *k = value_at(b, len, &p);
		const char *key = json_string_value(k);
		p = skip_ws(b, len, p);
		if (!key || p >= len || b[p] != ':' || json_object_get(root, key) ||
		    (*had_events && !strcmp(key, "traceEvents"))) {
			json_decref(k);
			goto fail;
		}
		p = skip_ws(b, len, p + 1);
		if (!strcmp(key, "traceEvents") && p < len && b[p] == '[') {
			*had_events = true;
			if (events_at(b, len, &p, on_event, ctx)) {
				json_decref(k);
				goto fail;
			}
		} else {
			json_t *v = value_at(b, len, &p);
			if (!v) {
				json_decref(k);
				goto fail;
			}
			json_object_set_new(root, key, v);
		}
		json_decref(k);
		p = skip_ws(b, len, p);
		if (p < len && b[p] == '}') {
			p++;
			break;
		}
		if (p >= len || b[p] != ',')
			goto fail;
		p = skip_ws(b, len, p + 1);
	}
end:
	if (skip_ws(b, len, p) != len)
		goto fail;
	return root;
fail:
	json_decref(root);
	return NULL;
}
