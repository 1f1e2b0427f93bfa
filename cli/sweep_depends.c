/* sweep_depends: whether a loader's message about a sweep's point can
 * depend on the point, so that `ddlsim sweep` says once, before any
 * output, a reason that holds for every point (cmd_sweep.c's precheck).
 *
 * A message names a JSON path of the base scenario ("f.json:
 * /parallel/tp: error: ..."); it depends on the point when that path is
 * inside or above a key an axis or a derived value sets. */
#include "sweep_depends.h"

#include <stdio.h>
#include <string.h>

#include "sweep.h"

/* The JSON path of the first message of a loader's diag text about file
 * ("f.json: /parallel/tp: error: ..." gives "/parallel/tp"), into jp;
 * false when the message is about another file or names no path. */
static bool message_path(const char *text, const char *file, char *jp, size_t n)
{
	size_t fl = strlen(file);
	if (strncmp(text, file, fl) || strncmp(text + fl, ": /", 3))
		return false;
	const char *p = text + fl + 2, *e = strstr(p, ": ");
	if (!e)
		return false;
	snprintf(jp, n, "%.*s", (int)(e - p), p);
	return true;
}

/* Whether JSON path jp is a sweep key's ("parallel.tp" is "/parallel/tp"),
 * inside one or above one: what an axis or a derived value may change. */
static bool near_key(const char *jp, const char *key)
{
	char kp[260];
	snprintf(kp, sizeof(kp), "/%s", key);
	for (char *c = kp; *c; c++)
		if (*c == '.')
			*c = '/';
	size_t a = strlen(jp), b = strlen(kp), m = a < b ? a : b;
	return !strncmp(jp, kp, m) && (a == b || (a < b ? kp[a] : jp[b]) == '/');
}

bool sweep_message_depends(const struct sweep *s, const char *text)
{
	char jp[300], line[600];
	if (!text)      /* no message: nothing known, so it may */
		return true;
	snprintf(line, sizeof(line), "%.*s", (int)strcspn(text, "\n"), text);
	if (strstr(line, "unknown key"))
		return false;
	if (!message_path(text, s->base_path, jp, sizeof(jp)))
		return true;
	for (int a = 0; a < s->naxes; a++)
		if (near_key(jp, s->axes[a].key))
			return true;
	for (int k = 0; k < s->nderived; k++)
		if (near_key(jp, s->derived[k].key))
			return true;
	return false;
}
