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

static double call(struct ev *e, const char *name, size_t len)
{
	double a[3];
	int n = 0;
	if (!eat(e, ")")) {
		do {
			if (n == 3)
				return fail(e, "too many arguments to '%.*s'", (int)len, name);
			a[n++] = expr(e);
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
	case 8: return a[0] != 0 ? a[1] : a[2];
	case 9: return log2(a[0]);
	default: return pow(a[0], a[1]);
	}
}

static double primary(struct ev *e)
{
	skip(e);
	if (eat(e, "(")) {
		double x = expr(e);
		if (!eat(e, ")"))
			return fail(e, "expected ')'");
		return x;
	}
	if (isdigit((unsigned char)*e->p) || *e->p == '.') {
		char *end;
		double x = strtod(e->p, &end);
		e->p = end;
		return x;
	}
	if (isalpha((unsigned char)*e->p) || *e->p == '_') {
		const char *name = e->p;
		while (isalnum((unsigned char)*e->p) || *e->p == '_' || *e->p == '.')
			e->p++;
		size_t len = (size_t)(e->p - name);
		if (eat(e, "("))
			return call(e, name, len);
		double x;
		if (!e->var || !e->var(e->ctx, name, len, &x)) {
			e->p = name;
			return fail(e, "unknown variable '%.*s'", (int)len, name);
		}
		return x;
	}
	if (!*e->p)
		return fail(e, "unexpected end of expression");
	return fail(e, "unexpected '%c'", *e->p);
}

static double unary(struct ev *e)
{
	if (eat(e, "-"))
		return -unary(e);
	if (eat(e, "!"))
		return unary(e) == 0;
	return primary(e);
}

static double mul(struct ev *e)
{
	double x = unary(e);
	for (;;) {
		if (eat(e, "*"))
			x *= unary(e);
		else if (eat(e, "/")) {
			double y = unary(e);
			if (y == 0)
				return fail(e, "division by zero");
			x /= y;
		} else if (eat(e, "%")) {
			double y = unary(e);
			if (y == 0)
				return fail(e, "remainder by zero");
			x = fmod(x, y);
		} else
			return x;
	}
}

static double add(struct ev *e)
{
	double x = mul(e);
	for (;;) {
		if (eat(e, "+"))
			x += mul(e);
		else if (eat(e, "-"))
			x -= mul(e);
		else
			return x;
	}
}

static double cmp(struct ev *e)
{
	double x = add(e);
	if (eat(e, "<="))
		return x <= add(e);
	if (eat(e, ">="))
		return x >= add(e);
	if (eat(e, "=="))
		return x == add(e);
	if (eat(e, "!="))
		return x != add(e);
	if (eat(e, "<"))
		return x < add(e);
	if (eat(e, ">"))
		return x > add(e);
	return x;
}

static double and_(struct ev *e)
{
	double x = cmp(e);
	while (eat(e, "&&")) {
		double y = cmp(e);
		x = x != 0 && y != 0;
	}
	return x;
}

static double expr(struct ev *e)
{
	double x = and_(e);
	while (eat(e, "||")) {
		double y = and_(e);
		x = x != 0 || y != 0;
	}
	return x;
}

int expr_eval(const char *src, expr_var_fn var, void *ctx, double *out, char *err, size_t errn)
{
	struct ev e = { .src = src, .p = src, .var = var, .ctx = ctx, .err = err, .errn = errn };
	double x = expr(&e);
	skip(&e);
	if (!e.failed && *e.p)
		fail(&e, "unexpected '%c'", *e.p);
	if (e.failed)
		return -1;
	*out = x;
	return 0;
}
