/* jload: strict, versioned JSON input (see jload.h). */
#include "jload.h"

#include "bounds.h"
#include "bug.h"
#include "infile.h"
#include "xalloc.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

json_t *jload_file(const char *path, struct diag *d)
{
	json_error_t err;
	char why[1200];
	FILE *f = infile_open(path, why, sizeof(why));  /* regular files only (infile.h) */
	if (!f) {
		diag_err(d, path, "", "%s", why);
		return NULL;
	}
	json_t *root = json_loadf(f, JSON_REJECT_DUPLICATES, &err);
	fclose(f);
	if (!root) {
		diag_err_at(d, path, err.line < 1 ? 1 : err.line,
			    err.column < 1 ? 1 : err.column,
			    "malformed JSON: %s", err.text);
		return NULL;
	}
	return root;
}

int jload_check_ref(struct jobj *jo, const char *key, const char *path)
{
	char why[1200];
	if (infile_check(path, why, sizeof(why)) == 0)
		return 0;
	return jobj_err(jo, key, "%s", why);
}

const char *jload_type_name(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "object";
	case JSON_ARRAY: return "array";
	case JSON_STRING: return "string";
	case JSON_INTEGER: return "integer";
	case JSON_REAL: return "number";
	case JSON_TRUE:
	case JSON_FALSE: return "boolean";
	case JSON_NULL: return "null";
	}
	return "value";
}

int jload_schema(json_t *root, const char *file, struct diag *d,
		 const char *name, int major, int minor)
{
	if (!json_is_object(root))
		return diag_err(d, file, "", "expected a JSON object at the top level, got %s",
				jload_type_name(root));
	json_t *s = json_object_get(root, "schema");
	json_t *v = json_object_get(root, "schema_version");
	if (!s)
		return diag_err(d, file, "/schema", "missing key 'schema' (expected \"%s\")", name);
	if (!json_is_string(s) || strcmp(json_string_value(s), name) != 0)
		return diag_err(d, file, "/schema", "expected \"%s\", got %s%s%s", name,
				json_is_string(s) ? "'" : "",
				json_is_string(s) ? json_string_value(s) : jload_type_name(s),
				json_is_string(s) ? "'" : "");
	if (!v)
		return diag_err(d, file, "/schema_version",
				"missing key 'schema_version' (expected \"%d.%d\")", major, minor);
	int ma, mi;
	char tail;
	const char *vs = json_is_string(v) ? json_string_value(v) : "";
	if (!json_is_string(v) || strspn(vs, "0123456789.") != strlen(vs) ||
	    sscanf(vs, "%d.%d%c", &ma, &mi, &tail) != 2)
		return diag_err(d, file, "/schema_version",
				"expected a string \"MAJOR.MINOR\", got %s",
				jload_type_name(v));
	if (ma != major)
		return diag_err(d, file, "/schema_version",
				"unsupported major version %d of '%s' (this ddlsim reads %d.x; "
				"convert the file to version %d.%d)", ma, name, major, major, minor);
	if (mi > minor)
		return diag_err(d, file, "/schema_version",
				"version %d.%d of '%s' is newer than this ddlsim (reads up to %d.%d)",
				ma, mi, name, major, minor);
	return 0;
}

int jobj_init(struct jobj *jo, json_t *v, const char *file, const char *jpath,
	      struct diag *d)
{
	memset(jo, 0, sizeof(*jo));
	jo->o = v;
	jo->file = file;
	jo->d = d;
	snprintf(jo->path, sizeof(jo->path), "%s", jpath ? jpath : "");
	if (!json_is_object(v)) {
		jo->o = NULL;
		return diag_err(d, file, jo->path[0] ? jo->path : "", "expected an object, got %s",
				v ? jload_type_name(v) : "nothing");
	}
	if (!jo->path[0]) {
		jo->seen[jo->nseen++] = "schema";
		jo->seen[jo->nseen++] = "schema_version";
	}
	return 0;
}

static void mark(struct jobj *jo, const char *key)
{
	for (int i = 0; i < jo->nseen; i++)
		if (strcmp(jo->seen[i], key) == 0)
			return;
	BUG_ON(jo->nseen >= JLOAD_MAX_KEYS, "a loader reads more than %d keys of %s", JLOAD_MAX_KEYS,
	       jo->path[0] ? jo->path : "the root object");
	jo->seen[jo->nseen++] = key;
}

/* Edit distance of a and b (insert, delete, substitute, swap of two
 * neighbours), capped: keys are short. */
static int distance(const char *a, const char *b)
{
	int la = (int)strlen(a), lb = (int)strlen(b);
	if (la > 63 || lb > 63)
		return 99;
	int dp[64][64];
	for (int i = 0; i <= la; i++)
		for (int j = 0; j <= lb; j++) {
			if (!i || !j) {
				dp[i][j] = i + j;
				continue;
			}
			int c = dp[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
			if (dp[i - 1][j] + 1 < c)
				c = dp[i - 1][j] + 1;
			if (dp[i][j - 1] + 1 < c)
				c = dp[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && dp[i - 2][j - 2] + 1 < c)
				c = dp[i - 2][j - 2] + 1;
			dp[i][j] = c;
		}
	return dp[la][lb];
}

/* The known key closest to an unknown one, if it is a plausible typo
 * (at most 2 edits, or 1 for short keys), else NULL. */
static const char *nearest(const struct jobj *jo, const char *key)
{
	const char *best = NULL;
	int bd = strlen(key) <= 4 ? 2 : 3;
	for (int i = 0; i < jo->nseen; i++) {
		int dd = distance(key, jo->seen[i]);
		if (dd < bd) {
			bd = dd;
			best = jo->seen[i];
		}
	}
	return best;
}

int jobj_end(struct jobj *jo)
{
	const char *key;
	json_t *val;
	int rc = 0;

	if (!jo->o)
		return -1;
	json_object_foreach(jo->o, key, val) {
		bool known = false;
		for (int i = 0; i < jo->nseen && !known; i++)
			known = strcmp(jo->seen[i], key) == 0;
		if (!known) {
			const char *near = nearest(jo, key);
			if (near)
				rc = jobj_err(jo, key, "unknown key '%s' (did you mean '%s'?)", key, near);
			else
				rc = jobj_err(jo, key, "unknown key '%s'", key);
		}
	}
	return rc;
}

int jobj_err(struct jobj *jo, const char *key, const char *fmt, ...)
{
	char *path = xasprintf("%s/%s", jo->path, key), *msg;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	BUG_ON(!msg, "out of memory formatting an error about %s", path);
	diag_err(jo->d, jo->file, path, "%s", msg);
	free(msg);
	free(path);
	return -1;
}

bool jobj_has(struct jobj *jo, const char *key)
{
	if (!jo->o || !json_object_get(jo->o, key))
		return false;
	mark(jo, key);
	return true;
}

/* Common prologue: 1 = value in *v, 0 = absent optional, -1 = error. */
static int fetch(struct jobj *jo, const char *key, json_t **v, int flags)
{
	if (!jo->o)
		return -1;
	mark(jo, key);  /* known even when absent: the typo suggestions read it */
	*v = json_object_get(jo->o, key);
	if (!*v) {
		if (flags & JREQ)
			return jobj_err(jo, key, "missing required key '%s'", key);
		return 0;
	}
	return 1;
}

static int check_range(struct jobj *jo, const char *key, double x, int flags)
{
	char why[160];
	if (!bound_check(key, x, why, sizeof(why)))
		return jobj_err(jo, key, "%s", why);
	if ((flags & JPOS) && !(x > 0))
		return jobj_err(jo, key, "must be > 0, got %g", x);
	if ((flags & JNONNEG) && x < 0)
		return jobj_err(jo, key, "must be >= 0, got %g", x);
	if ((flags & JUNIT) && (x < 0 || x > 1))
		return jobj_err(jo, key, "must be between 0 and 1, got %g", x);
	return 0;
}

int jobj_num(struct jobj *jo, const char *key, double *out, int flags)
{
	json_t *v;
	int rc = fetch(jo, key, &v, flags);
	if (rc <= 0)
		return rc;
	if (!json_is_number(v))
		return jobj_err(jo, key, "expected a number, got %s", jload_type_name(v));
	double x = json_number_value(v);
	if (check_range(jo, key, x, flags))
		return -1;
	*out = x;
	return 1;
}

static int get_integer(struct jobj *jo, const char *key, long *out, long min, long max,
		       int flags)
{
	json_t *v;
	int rc = fetch(jo, key, &v, flags);
	if (rc <= 0)
		return rc;
	if (!json_is_integer(v))
		return jobj_err(jo, key, "expected an integer, got %s", jload_type_name(v));
	json_int_t big = json_integer_value(v);
	const struct bound *b = bound_of(key);
	if (b->key && b->key[0] != '*' && b->max < (double)max)  /* an exact row (bounds.h) */
		max = (long)b->max;
	if (big > max)
		return jobj_err(jo, key, "must be <= %ld, got %lld", max, (long long)big);
	if (big < min)
		return jobj_err(jo, key, "must be >= %ld, got %lld", min, (long long)big);
	*out = (long)big;
	return 1;
}

int jobj_int(struct jobj *jo, const char *key, long *out, long min, int flags)
{
	return get_integer(jo, key, out, min, INT_MAX, flags);
}

int jobj_int_at_most(struct jobj *jo, const char *key, long min, long max, const char *what, int *out)
{
	long x = 0;
	int rc = jobj_int(jo, key, &x, min, 0);
	if (rc != 1)
		return rc;
	if (x > max)
		return jobj_err(jo, key, "expected at most %ld %s, got %ld", max, what, x);
	*out = (int)x;
	return 1;
}

int jobj_long(struct jobj *jo, const char *key, long *out, long min, int flags)
{
	return get_integer(jo, key, out, min, LONG_MAX, flags);
}

int jobj_bool(struct jobj *jo, const char *key, bool *out, int flags)
{
	json_t *v;
	int rc = fetch(jo, key, &v, flags);
	if (rc <= 0)
		return rc;
	if (!json_is_boolean(v))
		return jobj_err(jo, key, "expected a boolean, got %s", jload_type_name(v));
	*out = json_is_true(v);
	return 1;
}

long jload_control_char(const char *s, bool text, unsigned *cp)
{
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (text && (*c == '\t' || *c == '\n'))
			continue;
		if (*c < 0x20 || *c == 0x7f) {
			*cp = *c;
			return (long)(c - (const unsigned char *)s);
		}
		if (*c == 0xc2 && c[1] >= 0x80 && c[1] <= 0x9f) {  /* U+0080..U+009F */
			*cp = c[1];
			return (long)(c - (const unsigned char *)s);
		}
	}
	return -1;
}

/* The string rules beyond the type: no control characters (a name: not
 * even tab or newline, and not empty; a file name: no '/', '.' or '..').
 * Returns 0 or -1 (reported). */
static int check_string(struct jobj *jo, const char *key, const char *s, int flags)
{
	unsigned cp = 0;
	long at = jload_control_char(s, !(flags & (JNAME | JFILENAME)), &cp);
	const char *what = flags & (JNAME | JFILENAME) ? "a name" : "a string";
	if (at >= 0)
		return jobj_err(jo, key, "expected %s without control characters, got U+%04X at byte %ld", what,
				cp, at);
	if ((flags & (JNAME | JFILENAME)) && !*s)
		return jobj_err(jo, key, "expected a name, got an empty string");
	if ((flags & JPATH) && !*s)
		return jobj_err(jo, key, "expected a path, got an empty string");
	if ((flags & JFILENAME) && strlen(s) > 255)
		return jobj_err(jo, key, "expected a name of at most 255 bytes (it names a directory), got %zu bytes",
				strlen(s));
	if ((flags & JFILENAME) && (strchr(s, '/') || !strcmp(s, ".") || !strcmp(s, "..")))
		return jobj_err(jo, key, "expected a name that can name a directory (no '/', not '.' or '..': "
				"outputs go to out/<name>), got '%s'", s);
	return 0;
}

int jobj_str(struct jobj *jo, const char *key, const char **out, int flags)
{
	json_t *v;
	int rc = fetch(jo, key, &v, flags);
	if (rc <= 0)
		return rc;
	if (!json_is_string(v))
		return jobj_err(jo, key, "expected a string, got %s", jload_type_name(v));
	if (check_string(jo, key, json_string_value(v), flags))
		return -1;
	*out = json_string_value(v);
	return 1;
}

int jobj_str_copy(struct jobj *jo, const char *key, char *out, size_t size, int flags)
{
	const char *s;
	int rc = jobj_str(jo, key, &s, flags);
	if (rc <= 0)
		return rc;
	size_t n = strlen(s);
	if (n >= size)
		return jobj_err(jo, key, "expected a string of at most %zu bytes, got %zu bytes", size - 1, n);
	memcpy(out, s, n + 1);
	return 1;
}

int jload_copy_path(const char *path, char *out, size_t size, struct diag *d)
{
	size_t n = strlen(path);
	if (n >= size)
		return diag_err(d, path, "", "file name of %zu bytes is longer than the %zu this ddlsim keeps",
				n, size - 1);
	memcpy(out, path, n + 1);
	return 0;
}

int jobj_enum_table(struct jobj *jo, const char *key, const void *table, size_t stride,
		    int *out, int flags)
{
	const char *s;
	int rc = jobj_str(jo, key, &s, flags);
	if (rc <= 0)
		return rc;
#define NAME(i) (*(const char *const *)((const char *)table + (size_t)(i) * stride))
	for (int i = 0; NAME(i); i++)
		if (strcmp(NAME(i), s) == 0) {
			*out = i;
			return 1;
		}
	char *list = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&list, &len);
	BUG_ON(!m, "out of memory listing the names of %s", key);
	for (int i = 0; NAME(i); i++)
		fprintf(m, "%s%s", i ? ", " : "", NAME(i));
#undef NAME
	fclose(m);
	jobj_err(jo, key, "expected one of {%s}, got '%s'", list, s);
	free(list);
	return -1;
}

int jobj_enum(struct jobj *jo, const char *key, const char *const *names,
	      int *out, int flags)
{
	return jobj_enum_table(jo, key, names, sizeof(*names), out, flags);
}

int jobj_child(struct jobj *jo, const char *key, struct jobj *child, int flags)
{
	json_t *v;
	char path[sizeof(jo->path)];
	int rc = fetch(jo, key, &v, flags);
	if (rc <= 0) {
		memset(child, 0, sizeof(*child));
		return rc;
	}
	/* key is one of the loader's own key names: the path is bounded */
	int n = snprintf(path, sizeof(path), "%s/%s", jo->path, key);
	BUG_ON(n < 0 || (size_t)n >= sizeof(path), "JSON path %s/%s too long", jo->path, key);
	if (jobj_init(child, v, jo->file, path, jo->d))
		return -1;
	return 1;
}

int jobj_array(struct jobj *jo, const char *key, json_t **out,
	       char *jpath, size_t jpath_size, int flags)
{
	json_t *v;
	int rc = fetch(jo, key, &v, flags);
	if (rc <= 0)
		return rc;
	if (!json_is_array(v))
		return jobj_err(jo, key, "expected an array, got %s", jload_type_name(v));
	if (jpath)
		snprintf(jpath, jpath_size, "%s/%s", jo->path, key);
	*out = v;
	return 1;
}

int jload_resolve(const char *base_file, const char *rel, char *out, size_t n)
{
	if (rel[0] == '/') {
		if ((size_t)snprintf(out, n, "%s", rel) >= n)
			return -1;
		return 0;
	}
	const char *slash = strrchr(base_file, '/');
	int dirlen = slash ? (int)(slash - base_file) : 0;
	int w = slash ? snprintf(out, n, "%.*s/%s", dirlen, base_file, rel)
		      : snprintf(out, n, "%s", rel);
	return (w < 0 || (size_t)w >= n) ? -1 : 0;
}
