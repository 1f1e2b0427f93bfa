/* expr: recursive-descent evaluator of the sweep expression language
 * (grammar and functions in expr.h). One pass over the text, no tree: the
 * expressions are a few tokens and evaluated once per sweep point. */
#include "expr.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ev {
	const char *src, *p;
	expr_var_fn var;
	void *ctx;
	char *err;
	size_t errn;
	bool failed;
	bool boolean;      /* the value last computed is a truth value */
	int depth;         /* nesting of parentheses, calls and unary operators */
};

static double fail(struct ev *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static double fail(struct ev *e, const char *fmt, ...)
{
	if (!e->failed) {
		char what[160];
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(what, sizeof(what), fmt, ap);
		va_end(ap);
		snprintf(e->err, e->errn, "%s at column %d", what, (int)(e->p - e->src) + 1);
		e->failed = true;
	}
	return 0;
}

/* x as the value of an operation: a result that is not a finite number
 * (1e308 * 10, log2(0), pow(-1, 0.5)) fails here, so no NaN or infinity
 * reaches a comparison (where NaN would read as true) or a scenario. */
static double result(struct ev *e, double x, bool boolean)
{
	e->boolean = boolean;
	if (!isfinite(x))
		return fail(e, "result %g is not a finite number", x);
	return x;
}

/* Enter one level of nesting; false (reported) past EXPR_MAX_DEPTH, so
 * that no input can overflow the stack. */
static bool enter(struct ev *e)
{
	if (e->failed)
		return false;
	if (++e->depth > EXPR_MAX_DEPTH) {
		fail(e, "expression nested more than %d deep", EXPR_MAX_DEPTH);
		return false;
	}
	return true;
}

static void skip(struct ev *e)
{
	while (isspace((unsigned char)*e->p))
		e->p++;
}

static bool eat(struct ev *e, const char *tok)
{
	skip(e);
	size_t n = strlen(tok);
	if (strncmp(e->p, tok, n))
		return false;
	/* '<' must not eat the start of '<=', '!' not of '!=' */
	if (n == 1 && (tok[0] == '<' || tok[0] == '>' || tok[0] == '!' || tok[0] == '=') && e->p[1] == '=')
		return false;
	e->p += n;
	return true;
}

static double expr(struct ev *e);
static double apply(struct ev *e, int f, const double *a);

static double call(struct ev *e, const char *name, size_t len)
{
	double a[3];
	bool ab[3] = { false, false, false };
	int n = 0;
	if (!eat(e, ")")) {
		do {
			if (n == 3)
				return fail(e, "too many arguments to '%.*s'", (int)len, name);
			a[n] = expr(e);
			ab[n++] = e->boolean;
		} while (eat(e, ","));
		if (!eat(e, ")"))
			return fail(e, "expected ')'");
	}
	static const struct { const char *name; int nargs; } fns[] = {
		{ "min", 2 }, { "max", 2 }, { "floor", 1 }, { "ceil", 1 }, { "round", 1 },
		{ "abs", 1 }, { "div", 2 }, { "round_to", 2 }, { "if", 3 }, { "log2", 1 },
		{ "pow", 2 }, { NULL, 0 }
	};
	int f;
	for (f = 0; fns[f].name; f++)
		if (strlen(fns[f].name) == len && !strncmp(fns[f].name, name, len))
			break;
	if (!fns[f].name)
		return fail(e, "unknown function '%.*s'", (int)len, name);
	if (n != fns[f].nargs)
		return fail(e, "'%s' takes %d argument%s, got %d", fns[f].name, fns[f].nargs,
			    fns[f].nargs == 1 ? "" : "s", n);
	if (f == 8)  /* if(c, a, b): a truth value when both branches are */
		return result(e, a[0] != 0 ? a[1] : a[2], ab[1] && ab[2]);
	return result(e, apply(e, f, a), false);
}

static double apply(struct ev *e, int f, const double *a)
{
	switch (f) {
	case 0: return fmin(a[0], a[1]);
	case 1: return fmax(a[0], a[1]);
	case 2: return floor(a[0]);
	case 3: return ceil(a[0]);
	case 4: return round(a[0]);
	case 5: return fabs(a[0]);
	case 6:
		if (a[1] == 0)
			return fail(e, "division by zero in 'div'");
		return floor(a[0] / a[1]);
	case 7: {
		if (!(a[0] > 0))
			return fail(e, "'round_to' needs a positive multiple, got %g", a[0]);
		double k = floor(a[1] / a[0] + 0.5);
		return (k < 1 ? 1 : k) * a[0];
	}
	case 9: return log2(a[0]);
	default: return pow(a[0], a[1]);
	}
}

static double primary(struct ev *e)
{
	skip(e);
	if (eat(e, "(")) {
		if (!enter(e))
			return 0;
		double x = expr(e);
		e->depth--;
		if (!eat(e, ")"))
			return fail(e, "expected ')'");
		return x;
	}
	if (isdigit((unsigned char)*e->p) || *e->p == '.') {
		char *end;
		const char *at = e->p;
		double x = strtod(e->p, &end);
		e->p = end;
		if (end == at) {
			e->p = at + 1;
			return fail(e, "expected a number");
		}
		return result(e, x, false);
	}
	if (isalpha((unsigned char)*e->p) || *e->p == '_') {
		const char *name = e->p;
		while (isalnum((unsigned char)*e->p) || *e->p == '_' || *e->p == '.')
			e->p++;
		size_t len = (size_t)(e->p - name);
		if (eat(e, "(")) {
			if (!enter(e))
				return 0;
			double x = call(e, name, len);
			e->depth--;
			return x;
		}
		if ((len == 4 && !strncmp(name, "true", 4)) || (len == 5 && !strncmp(name, "false", 5)))
			return result(e, len == 4, true);
		double x;
		if (!e->var || !e->var(e->ctx, name, len, &x)) {
			e->p = name;
			return fail(e, "unknown variable '%.*s'", (int)len, name);
		}
		if (!isfinite(x)) {
			e->p = name;
			return fail(e, "variable '%.*s' is %g, not a finite number", (int)len, name, x);
		}
		return result(e, x, false);
	}
	if (!*e->p)
		return fail(e, "unexpected end of expression");
	return fail(e, "unexpected '%c'", *e->p);
}

static double unary(struct ev *e)
{
	bool neg = eat(e, "-"), not = !neg && eat(e, "!");
	if (!neg && !not)
		return primary(e);
	if (!enter(e))
		return 0;
	double x = unary(e);
	e->depth--;
	return neg ? result(e, -x, false) : result(e, x == 0, true);
}

static double mul(struct ev *e)
{
	double x = unary(e);
	for (;;) {
		if (eat(e, "*"))
			x = result(e, x * unary(e), false);
		else if (eat(e, "/")) {
			double y = unary(e);
			if (y == 0)
				return fail(e, "division by zero");
			x = result(e, x / y, false);
		} else if (eat(e, "%")) {
			double y = unary(e);
			if (y == 0)
				return fail(e, "remainder by zero");
			x = result(e, fmod(x, y), false);
		} else
			return x;
	}
}

static double add(struct ev *e)
{
	double x = mul(e);
	for (;;) {
		if (eat(e, "+"))
			x = result(e, x + mul(e), false);
		else if (eat(e, "-"))
			x = result(e, x - mul(e), false);
		else
			return x;
	}
}

static double cmp(struct ev *e)
{
	double x = add(e);
	if (eat(e, "<="))
		return result(e, x <= add(e), true);
	if (eat(e, ">="))
		return result(e, x >= add(e), true);
	if (eat(e, "=="))
		return result(e, x == add(e), true);
	if (eat(e, "!="))
		return result(e, x != add(e), true);
	if (eat(e, "<"))
		return result(e, x < add(e), true);
	if (eat(e, ">"))
		return result(e, x > add(e), true);
	return x;
}

static double and_(struct ev *e)
{
	double x = cmp(e);
	while (eat(e, "&&")) {
		double y = cmp(e);
		x = result(e, x != 0 && y != 0, true);
	}
	return x;
}

static double expr(struct ev *e)
{
	double x = and_(e);
	while (eat(e, "||")) {
		double y = and_(e);
		x = result(e, x != 0 || y != 0, true);
	}
	return x;
}

int expr_eval_typed(const char *src, expr_var_fn var, void *ctx, double *out, bool *boolean,
		    char *err, size_t errn)
{
	struct ev e = { .src = src, .p = src, .var = var, .ctx = ctx, .err = err, .errn = errn };
	size_t len = strlen(src);
	if (len > EXPR_MAX_LEN) {
		snprintf(err, errn, "expression of %zu bytes is longer than the %d an expression may have",
			 len, EXPR_MAX_LEN);
		return -1;
	}
	double x = expr(&e);
	skip(&e);
	if (!e.failed && *e.p)
		fail(&e, "unexpected '%c'", *e.p);
	if (e.failed)
		return -1;
	*out = x;
	if (boolean)
		*boolean = e.boolean;
	return 0;
}

int expr_eval(const char *src, expr_var_fn var, void *ctx, double *out, char *err, size_t errn)
{
	return expr_eval_typed(src, var, ctx, out, NULL, err, errn);
}

const char *expr_excerpt(const char *src, const char *err, char *buf, size_t n)
{
	size_t len = strlen(src);
	if (len <= EXPR_EXCERPT) {
		snprintf(buf, n, "\"%s\"", src);
		return buf;
	}
	const char *c = err ? strstr(err, "at column ") : NULL;
	long col = c ? strtol(c + strlen("at column "), NULL, 10) : 1;
	size_t at = col > 0 && (size_t)col <= len ? (size_t)col - 1 : 0;
	size_t from = at > EXPR_EXCERPT / 2 ? at - EXPR_EXCERPT / 2 : 0;
	if (from + EXPR_EXCERPT > len)
		from = len - EXPR_EXCERPT;
	size_t to = from + EXPR_EXCERPT;
	snprintf(buf, n, "\"%s%.*s%s\" (bytes %zu..%zu of %zu)", from ? "..." : "", (int)(to - from), src + from,
		 to < len ? "..." : "", from, to, len);
	return buf;
}
