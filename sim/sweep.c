/* sweep: sweep files, ranges, points (see sweep.h).
 *
 * The base scenario is read as JSON once; a point is a deep copy with the
 * axis values set at their paths (objects created as needed), then the
 * derived values computed and set in order, then the constraints
 * evaluated. Loading the point (scenario_load_json) is the caller's: it
 * shares the inputs across points through an inputs cache. */
#include "sweep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "jload.h"
#include "scenario_meta.h"
#include "xalloc.h"

/* The number of values of range a..b by step (kind '+' or 'x'), counted
 * before expanding; -1 when it does not advance or is not finite. */
static double range_count(double a, double b, double step, char kind)
{
	if (kind == '+')
		return floor((b - a) / step * (1 + 1e-12) + 1e-9) + 1;
	return floor(log(b / a) / log(step) * (1 + 1e-12) + 1e-9) + 1;
}

/* Split "A..B[ step [x]S]" into its numbers. Returns 0, or -1 with why. */
static int range_parse(const char *text, double *a, double *b, double *step, char *kind,
		       char *err, size_t n)
{
	char *end;
	const char *dots = strstr(text, "..");
	*step = 1;
	*kind = '+';
	if (dots) {
		char left[64];
		snprintf(left, sizeof(left), "%.*s", (int)(dots - text < 63 ? dots - text : 63), text);
		*a = strtod(left, &end);
		bool ok_a = end != left && strspn(end, " ") == strlen(end);
		*b = strtod(dots + 2, &end);
		if (!ok_a || end == dots + 2)
			dots = NULL;
	}
	if (!dots) {
		snprintf(err, n, "expected a list or a range \"A..B\", \"A..B step S\" or \"A..B step xF\", got '%s'", text);
		return -1;
	}
	while (*end == ' ')
		end++;
	if (*end) {
		int u2 = 0;
		if (sscanf(end, "step x%lf %n", step, &u2) == 1 && !end[u2])
			*kind = 'x';
		else if (sscanf(end, "step %lf %n", step, &u2) == 1 && !end[u2])
			*kind = '+';
		else {
			snprintf(err, n, "expected \"step S\" or \"step xF\" after the range, got '%s'", end);
			return -1;
		}
	}
	return 0;
}

json_t *sweep_range(const char *text, char *err, size_t n)
{
	double a, b, step;
	char kind;
	if (range_parse(text, &a, &b, &step, &kind, err, n))
		return NULL;
	const double lim = SWEEP_RANGE_MAX_ABS;
	if (!(fabs(a) <= lim && fabs(b) <= lim && fabs(step) <= lim)) {
		snprintf(err, n, "range '%s': ends and step must be finite numbers of magnitude at most %g, "
			 "got %g..%g step %s%g", text, lim, a, b, kind == 'x' ? "x" : "", step);
		return NULL;
	}
	if (b < a || (kind == '+' && !(step > 0)) || (kind == 'x' && !(step > 1 && a > 0))) {
		snprintf(err, n, "range '%s' is empty or does not advance (needs A <= B and step > 0, "
			 "or factor > 1 and A > 0)", text);
		return NULL;
	}
	double count = range_count(a, b, step, kind);
	if (!(count <= SWEEP_RANGE_MAX_VALUES)) {
		snprintf(err, n, "range '%s' has %.0f values, more than the %d a range may have", text,
			 count, SWEEP_RANGE_MAX_VALUES);
		return NULL;
	}
	json_t *arr = json_array();
	for (long i = 0; i < (long)count; i++) {
		double x = kind == 'x' ? a * pow(step, (double)i) : a + step * (double)i;
		if (x > b * (1 + 1e-12) + 1e-9)
			break;
		double r = round(x);
		json_array_append_new(arr, fabs(x - r) < 1e-9 * fmax(1, fabs(x)) ? json_integer((json_int_t)r)
									      : json_real(x));
	}
	return arr;
}

/* The index of path component tok in an array of n elements, or -1 when
 * tok is not a decimal index below n. */
static long array_index(const char *tok, size_t n)
{
	char *end;
	if (!*tok || strspn(tok, "0123456789") != strlen(tok))
		return -1;
	long i = strtol(tok, &end, 10);
	return i >= 0 && (size_t)i < n ? i : -1;
}

/* The child tok of o: an object's member or (a decimal index) an array's
 * element; NULL if none. */
static json_t *child_of(json_t *o, const char *tok)
{
	if (json_is_object(o))
		return json_object_get(o, tok);
	if (json_is_array(o)) {
		long i = array_index(tok, json_array_size(o));
		return i >= 0 ? json_array_get(o, (size_t)i) : NULL;
	}
	return NULL;
}

/* Set v (stolen) at dotted path key in doc, creating objects on the way;
 * a component that is a decimal index goes into an existing array
 * ("simulation.degraded_links.0.bw_factor"). Returns 0, or -1 when a
 * path component is neither an object nor an element of an array. */
static int set_path(json_t *doc, const char *key, json_t *v)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", key);
	json_t *o = doc;
	char *save = NULL, *tok = strtok_r(buf, ".", &save), *next;
	for (; tok && (next = strtok_r(NULL, ".", &save)); tok = next) {
		json_t *c = child_of(o, tok);
		if (!c && json_is_object(o)) {
			c = json_object();
			json_object_set_new(o, tok, c);
		}
		if (!json_is_object(c) && !json_is_array(c)) {
			json_decref(v);
			return -1;
		}
		o = c;
	}
	if (json_is_array(o)) {
		long i = array_index(tok, json_array_size(o));
		if (i < 0) {
			json_decref(v);
			return -1;
		}
		json_array_set_new(o, (size_t)i, v);
		return 0;
	}
	json_object_set_new(o, tok, v);
	return 0;
}

static json_t *get_path(json_t *doc, const char *key, size_t len)
{
	char buf[256];
	if (len >= sizeof(buf))
		return NULL;
	memcpy(buf, key, len);
	buf[len] = 0;
	json_t *o = doc;
	char *save = NULL;
	for (char *tok = strtok_r(buf, ".", &save); tok && o; tok = strtok_r(NULL, ".", &save))
		o = child_of(o, tok);
	return o;
}

static bool number_of(const json_t *v, double *out)
{
	if (json_is_number(v))
		*out = json_number_value(v);
	else if (json_is_boolean(v))
		*out = json_is_true(v);
	else
		return false;
	return true;
}

/* Find a scalar leaf named name (len bytes) anywhere in the document;
 * returns how many were found (the value of the first in *out). */
static int find_leaf(json_t *o, const char *name, size_t len, double *out)
{
	const char *k;
	json_t *v;
	int found = 0;
	json_object_foreach(o, k, v) {
		if (json_is_object(v))
			found += find_leaf(v, name, len, found ? &(double){ 0 } : out);
		else if (strlen(k) == len && !strncmp(k, name, len) && number_of(v, found ? &(double){ 0 } : out))
			found++;
	}
	return found;
}

struct vars {
	json_t *doc;
	double gpus_per_node;
};

static bool lookup(void *ctx, const char *name, size_t len, double *out)
{
	struct vars *vs = ctx;
#define IS(s) (len == strlen(s) && !strncmp(name, s, len))
	if (IS("gpus_per_node")) {
		*out = vs->gpus_per_node;
		return true;
	}
	if (IS("gpus")) {
		double nodes = 0;
		number_of(json_object_get(vs->doc, "nodes"), &nodes);
		*out = nodes * vs->gpus_per_node;
		return true;
	}
	if (number_of(get_path(vs->doc, name, len), out))
		return true;
	if (find_leaf(vs->doc, name, len, out) == 1)
		return true;
	json_t *par = json_object_get(vs->doc, "parallel"), *tr = json_object_get(vs->doc, "training");
	double tp = 1, pp = 1;
	number_of(json_object_get(par, "tp"), &tp);
	number_of(json_object_get(par, "pp"), &pp);
	if (IS("tp") || IS("pp") || IS("interleave")) {
		*out = IS("tp") ? tp : IS("pp") ? pp : 1;
		return true;
	}
	if (IS("zero")) {
		*out = 0;
		return true;
	}
	if (IS("micro_batch")) {
		*out = 1;
		(void)tr;
		return true;
	}
	if (IS("dp")) {
		double nodes = 0;
		number_of(json_object_get(vs->doc, "nodes"), &nodes);
		*out = nodes * vs->gpus_per_node / (tp * pp);
		return true;
	}
	return false;
#undef IS
}

/* GPUs per node of the topology the document names (0 if unreadable). */
static int gpus_per_node(struct sweep *s, json_t *doc)
{
	json_t *t = json_object_get(doc, "topology");
	if (!json_is_string(t))
		return 0;
	char path[1024];
	if (jload_resolve(s->base_path, json_string_value(t), path, sizeof(path)))
		return 0;
	for (int i = 0; i < s->ngpn; i++)
		if (!strcmp(s->gpn_path[i], path))
			return s->gpn[i];
	struct diag d;
	diag_init(&d, NULL);
	json_t *root = jload_file(path, &d);
	diag_finish(&d);
	json_t *g = json_object_get(json_object_get(root, "node"), "gpus");
	int n = json_is_integer(g) ? (int)json_integer_value(g) : 0;
	json_decref(root);
	s->gpn_path = xreallocarray(s->gpn_path, (size_t)s->ngpn + 1, sizeof(char *));
	s->gpn = xreallocarray(s->gpn, (size_t)s->ngpn + 1, sizeof(int));
	s->gpn_path[s->ngpn] = xstrdup(path);
	s->gpn[s->ngpn++] = n;
	return n;
}

/* The JSON value a derived key gets (a new reference): a boolean when the
 * expression is a truth value or the key is a boolean in doc and x is 0
 * or 1, an integer when x is integral, else a real. x is finite. */
static json_t *derived_value(json_t *doc, const char *key, double x, bool boolean)
{
	json_t *old = get_path(doc, key, strlen(key));
	if (boolean || (json_is_boolean(old) && (x == 0 || x == 1)))
		return json_boolean(x != 0);
	if (fabs(x - round(x)) < 1e-9 && fabs(x) < 9e15)
		return json_integer((json_int_t)round(x));
	return json_real(x);
}

/* Whether expression error err holds whatever the variables' values: an
 * unknown name or a syntax error, not a value (a division by zero, a
 * result that is not finite). */
static bool error_every(const char *err)
{
	return !strstr(err, "division") && !strstr(err, "remainder") && !strstr(err, "round_to") &&
	       !strstr(err, "finite") && !strstr(err, "log2") && !strstr(err, "pow");
}

/* sweep_point_why(), and *failed says whether a NULL result is an error in
 * the sweep file (an expression that cannot be evaluated, a path that
 * cannot be set) rather than a constraint that is false; where (when not
 * NULL, SWEEP_WHERE bytes) gets the JSON path of the expression that
 * failed ("" for none). */
static json_t *point(struct sweep *s, long i, json_t **values, char *reason, size_t n, bool *failed,
		     bool *every, char *where)
{
	*failed = true;
	*every = true;
	if (where)
		where[0] = 0;
	json_t *doc = json_deep_copy(s->base);
	*values = json_object();
	long rest = i;
	for (int a = s->naxes - 1; a >= 0; a--) {
		size_t k = json_array_size(s->axes[a].values);
		json_t *v = json_array_get(s->axes[a].values, (size_t)(rest % (long)k));
		rest /= (long)k;
		json_object_set(*values, s->axes[a].key, v);
	}
	/* set in axis order (the values object was filled backwards) */
	for (int a = 0; a < s->naxes; a++) {
		json_t *v = json_object_get(*values, s->axes[a].key);
		if (set_path(doc, s->axes[a].key, json_incref(v))) {
			snprintf(reason, n, "axis '%s': a part of the path is not an object in the base scenario",
				 s->axes[a].key);
			goto fail;
		}
	}
	/* reorder the record's values as the axes are listed */
	json_t *ordered = json_object();
	for (int a = 0; a < s->naxes; a++)
		json_object_set(ordered, s->axes[a].key, json_object_get(*values, s->axes[a].key));
	json_decref(*values);
	*values = ordered;

	struct vars vs = { .doc = doc, .gpus_per_node = gpus_per_node(s, doc) };
	char err[200];
	for (int k = 0; k < s->nderived; k++) {
		double x;
		bool boolean;
		if (expr_eval_typed(s->derived[k].expr, lookup, &vs, &x, &boolean, err, sizeof(err))) {
			char ex[EXPR_EXCERPT + 64];
			snprintf(reason, n, "derived '%s' = %s: %s", s->derived[k].key,
				 expr_excerpt(s->derived[k].expr, err, ex, sizeof(ex)), err);
			*every = error_every(err);
			if (where)
				snprintf(where, SWEEP_WHERE, "/derived/%.250s", s->derived[k].key);
			json_object_set_new(*values, s->derived[k].key, json_null());
			goto fail;
		}
		json_t *v = derived_value(doc, s->derived[k].key, x, boolean);
		json_object_set(*values, s->derived[k].key, v);
		if (set_path(doc, s->derived[k].key, v)) {
			snprintf(reason, n, "derived '%s': a part of the path is not an object", s->derived[k].key);
			goto fail;
		}
	}
	for (int k = 0; k < s->nconstraints; k++) {
		double x;
		char ex[EXPR_EXCERPT + 64];
		if (expr_eval(s->constraints[k], lookup, &vs, &x, err, sizeof(err))) {
			snprintf(reason, n, "constraint %s: %s", expr_excerpt(s->constraints[k], err, ex, sizeof(ex)),
				 err);
			*every = error_every(err);
			if (where)
				snprintf(where, SWEEP_WHERE, "/constraints/%d", k);
			goto fail;
		}
		if (x == 0) {
			snprintf(reason, n, "constraint %s is false", expr_excerpt(s->constraints[k], NULL, ex, sizeof(ex)));
			*failed = false;
			*every = false;
			goto fail;
		}
	}
	*failed = false;
	*every = false;
	return doc;
fail:
	json_decref(doc);
	return NULL;
}

json_t *sweep_point(struct sweep *s, long i, json_t **values, char *reason, size_t n)
{
	bool failed, every;
	return point(s, i, values, reason, n, &failed, &every, NULL);
}

json_t *sweep_point_why(struct sweep *s, long i, json_t **values, char *reason, size_t n, bool *every)
{
	bool failed;
	return point(s, i, values, reason, n, &failed, every, NULL);
}

bool sweep_point_undefined(struct sweep *s, long i, char *where, char *reason, size_t n)
{
	bool failed, every;
	json_t *values;
	json_t *doc = point(s, i, &values, reason, n, &failed, &every, where);
	json_decref(values);
	json_decref(doc);
	return !doc && failed && !every && where[0];
}

int sweep_check_points(struct sweep *s, struct diag *d, sweep_point_fn fn, void *ctx)
{
	long valid = 0;
	char first[600] = "", why[512] = "";
	for (long i = 0; i < s->npoints; i++) {
		json_t *values;
		bool failed, every;
		char reason[512] = "";
		json_t *doc = point(s, i, &values, reason, sizeof(reason), &failed, &every, NULL);
		char *vals = json_dumps(values, JSON_COMPACT);
		json_decref(values);
		if (failed) {
			diag_err(d, s->path, "", "point %ld %s: %s", i, vals ? vals : "", reason);
			free(vals);
			return -1;
		}
		if (doc && fn && fn(ctx, doc, why, sizeof(why))) {
			snprintf(reason, sizeof(reason), "%s", why);
			json_decref(doc);
			doc = NULL;
		}
		if (doc)
			valid++;
		else if (!first[0])
			snprintf(first, sizeof(first), "point %ld %s: %s", i, vals ? vals : "", reason);
		free(vals);
		json_decref(doc);
	}
	if (!valid)
		return diag_err(d, s->path, "", "none of the %ld points is valid (first, %s)", s->npoints, first);
	return 0;
}

/* A dotted scenario key path: 1..200 bytes, no empty component, no
 * control character (it becomes a column of the points' CSV). */
static bool key_path_ok(const char *k)
{
	unsigned cp;
	return strlen(k) && strlen(k) <= 200 && k[0] != '.' && !strstr(k, "..") &&
	       jload_control_char(k, false, &cp) < 0;
}

/* An axis's string values hold no control character: they are written to
 * the points' CSV and printed in summaries as they are. */
static void check_strings(struct jobj *root, const char *path, const char *k, const json_t *vals)
{
	size_t i;
	json_t *v;
	unsigned cp;
	long at;
	json_array_foreach(vals, i, v)
		if (json_is_string(v) && (at = jload_control_char(json_string_value(v), false, &cp)) >= 0)
			diag_err(root->d, path, "/axes", "/%s/%zu: expected a string without control characters, "
				 "got U+%04X at byte %ld", k, i, cp, at);
}

static void load_axes(struct jobj *root, struct sweep *s)
{
	json_t *axes = json_object_get(root->o, "axes");
	jobj_has(root, "axes");
	if (!axes) {
		jobj_err(root, "axes", "missing required key 'axes'");
		return;
	}
	if (!json_is_object(axes) || json_object_size(axes) == 0) {
		jobj_err(root, "axes", "expected an object of at least one scenario key -> values, got %s",
			 json_is_object(axes) ? "an empty object" : jload_type_name(axes));
		return;
	}
	const char *k;
	json_t *v;
	s->axes = xcalloc(json_object_size(axes), sizeof(*s->axes));
	s->npoints = 1;
	json_object_foreach(axes, k, v) {
		char err[300];
		json_t *vals = NULL;
		if (json_is_string(v)) {
			vals = sweep_range(json_string_value(v), err, sizeof(err));
			if (!vals)
				diag_err(root->d, s->path, "/axes", "/%s: %s", k, err);
		} else if (json_is_array(v) && json_array_size(v) > 0)
			vals = json_incref(v);
		else
			diag_err(root->d, s->path, "/axes", "/%s: expected a non-empty list or a range string, got %s",
				 k, json_is_array(v) ? "an empty list" : jload_type_name(v));
		if (!key_path_ok(k))
			diag_err(root->d, s->path, "/axes", "/%s: expected a scenario key path such as \"parallel.tp\"", k);
		check_strings(root, s->path, k, vals);
		if (vals && json_array_size(vals) == 0) {
			diag_err(root->d, s->path, "/axes", "/%s: expected at least one value", k);
			json_decref(vals);
			vals = NULL;
		}
		if (!vals)
			continue;
		s->axes[s->naxes].key = xstrdup(k);
		s->axes[s->naxes++].values = vals;
		if (s->npoints > SWEEP_MAX_POINTS / (long)json_array_size(vals)) {
			diag_err(root->d, s->path, "/axes", "more than %ld points", SWEEP_MAX_POINTS);
			s->npoints = 0;
			return;
		}
		s->npoints *= (long)json_array_size(vals);
	}
}

static bool var_any(void *ctx, const char *name, size_t len, double *out)
{
	(void)ctx, (void)name, (void)len;
	*out = 1;
	return true;
}

static void check_expr(struct diag *d, const char *file, const char *jpath, const char *src)
{
	char err[200];
	double x;
	/* syntax only: every variable reads 1 (unknown names show at a point) */
	if (expr_eval(src, var_any, NULL, &x, err, sizeof(err)) && !strstr(err, "division") &&
	    !strstr(err, "remainder") && !strstr(err, "round_to") &&
	    !strstr(err, "finite")) {
		char ex[EXPR_EXCERPT + 64];
		diag_err(d, file, jpath, "%s in %s", err, expr_excerpt(src, err, ex, sizeof(ex)));
	}
}

/* The sweep's name (its file's name less the extension, or "name") and
 * description. */
static void load_name(struct jobj *jo, struct sweep *s)
{
	const char *str;
	const char *b = strrchr(s->path, '/');
	s->name = xstrdup(b ? b + 1 : s->path);
	char *dot = strrchr(s->name, '.');
	if (dot)
		*dot = 0;
	if (jobj_str(jo, "name", &str, JFILENAME) == 1) {
		free(s->name);
		s->name = xstrdup(str);
	}
	s->description = xstrdup(jobj_str(jo, "description", &str, 0) == 1 ? str : "");
}

/* "base": the base scenario's path, relative to the sweep file, and its
 * document, read and checked for its schema. */
static void load_base(struct jobj *jo, struct sweep *s)
{
	const char *str;
	struct diag *d = jo->d;
	if (jobj_str(jo, "base", &str, JREQ | JPATH) != 1)
		return;
	if (jload_resolve(s->path, str, s->base_path, sizeof(s->base_path))) {
		jobj_err(jo, "base", "path too long");
		return;
	}
	if (jload_check_ref(jo, "base", s->base_path))
		return;
	int b0 = diag_count(d);
	s->base = jload_file(s->base_path, d);
	if (s->base && jload_schema(s->base, s->base_path, d, "ddlsim.scenario", 1, SCENARIO_SCHEMA_MINOR) == 0 &&
	    !json_is_object(s->base))
		diag_err(d, s->base_path, "", "expected a scenario object");
	if (diag_count(d) != b0)
		jobj_err(jo, "base", "the base scenario '%s' cannot be read (see above)", s->base_path);
}

/* "derived": scenario key -> expression, each key a path and each
 * expression's syntax checked. */
static void load_derived(struct jobj *jo, struct sweep *s)
{
	struct jobj sub;
	if (jobj_child(jo, "derived", &sub, 0) != 1)
		return;
	const char *k;
	json_t *v;
	s->derived = xcalloc(json_object_size(sub.o) + 1, sizeof(*s->derived));
	json_object_foreach(sub.o, k, v) {
		jobj_has(&sub, k);
		if (!key_path_ok(k)) {
			jobj_err(&sub, k, "expected a scenario key path such as \"training.global_batch\"");
			continue;
		}
		if (!json_is_string(v)) {
			jobj_err(&sub, k, "expected an expression string, got %s", jload_type_name(v));
			continue;
		}
		char jp[300];
		snprintf(jp, sizeof(jp), "/derived/%.250s", k);
		check_expr(jo->d, s->path, jp, json_string_value(v));
		s->derived[s->nderived].key = xstrdup(k);
		s->derived[s->nderived++].expr = xstrdup(json_string_value(v));
	}
	jobj_end(&sub);
}

/* "constraints": expression strings, each one's syntax checked. */
static void load_constraints(struct jobj *jo, struct sweep *s)
{
	json_t *arr;
	char ap[300];
	if (jobj_array(jo, "constraints", &arr, ap, sizeof(ap), 0) != 1)
		return;
	size_t i;
	json_t *v;
	s->constraints = xcalloc(json_array_size(arr) + 1, sizeof(char *));
	json_array_foreach(arr, i, v) {
		if (!json_is_string(v)) {
			diag_err(jo->d, s->path, ap, "/%zu: expected an expression string, got %s", i, jload_type_name(v));
			continue;
		}
		char jp[340];
		snprintf(jp, sizeof(jp), "%.300s/%zu", ap, i);
		check_expr(jo->d, s->path, jp, json_string_value(v));
		s->constraints[s->nconstraints++] = xstrdup(json_string_value(v));
	}
}

/* "economics", "goodput" and "output" (the output folder, by default
 * out/<name>). */
static void load_rest(struct jobj *jo, struct sweep *s)
{
	struct jobj sub;
	const char *str;
	if (jobj_child(jo, "economics", &sub, 0) == 1) {
		econ_params_load(&sub, &s->econ);
		jobj_end(&sub);
	}
	if (jobj_child(jo, "goodput", &sub, 0) == 1) {
		goodput_params_load(&sub, &s->goodput);
		jobj_end(&sub);
	}
	snprintf(s->out_dir, sizeof(s->out_dir), "out/%s", s->name);
	if (jobj_child(jo, "output", &sub, 0) == 1) {
		if (jobj_str(&sub, "dir", &str, JPATH) == 1 &&
		    (size_t)snprintf(s->out_dir, sizeof(s->out_dir), "%s", str) >= sizeof(s->out_dir))
			jobj_err(&sub, "dir", "path too long (at most %zu bytes)", sizeof(s->out_dir) - 1);
		jobj_end(&sub);
	}
}

struct sweep *sweep_load(const char *path, struct diag *d)
{
	struct sweep *s = xcalloc(1, sizeof(*s));
	struct jobj jo;
	int before = diag_count(d);

	s->path = xstrdup(path);
	econ_params_init(&s->econ);
	goodput_params_init(&s->goodput);
	json_t *root = jload_file(path, d);
	if (!root)
		goto err;
	if (jload_schema(root, path, d, "ddlsim.sweep", 1, 0))
		goto err;
	jobj_init(&jo, root, path, "", d);
	load_name(&jo, s);
	load_base(&jo, s);
	load_axes(&jo, s);
	load_derived(&jo, s);
	load_constraints(&jo, s);
	load_rest(&jo, s);
	jobj_end(&jo);
	json_decref(root);
	root = NULL;
	if (diag_count(d) != before)
		goto err;
	return s;
err:
	json_decref(root);
	sweep_destroy(s);
	return NULL;
}

void sweep_destroy(struct sweep *s)
{
	if (!s)
		return;
	for (int i = 0; i < s->naxes; i++) {
		free(s->axes[i].key);
		json_decref(s->axes[i].values);
	}
	free(s->axes);
	for (int i = 0; i < s->nderived; i++) {
		free(s->derived[i].key);
		free(s->derived[i].expr);
	}
	free(s->derived);
	for (int i = 0; i < s->nconstraints; i++)
		free(s->constraints[i]);
	free(s->constraints);
	for (int i = 0; i < s->ngpn; i++)
		free(s->gpn_path[i]);
	free(s->gpn_path);
	free(s->gpn);
	json_decref(s->base);
	free(s->path);
	free(s->name);
	free(s->description);
	free(s);
}
