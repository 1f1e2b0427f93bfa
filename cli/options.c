/* options: the table-driven parser, --help and the tests' dump of a
 * command's options (options.h). The parser is a loop over argv that
 * hands each option to the entry it names: long names through
 * parse_long(), clusters of short names through parse_short(), each value
 * through set_value() (the type's rule, or the entry's callback). The
 * usage text is generated from the same entries. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"

#define HELP_COL 26      /* where the help of an option starts */
#define WIDTH 79         /* the synopsis wraps before this column */

static void *field(const struct opt *o, void *base)
{
	return (char *)base + o->off;
}

static const void *cfield(const struct opt *o, const void *base)
{
	return (const char *)base + o->off;
}

static bool is_option(const struct opt *o)
{
	return o->type != OPT_T_GROUP;
}

/* The choices as "a, b or c" (sep ", " and last " or ") into buf. */
static const char *choice_list(const char *const *ch, const char *last, char *buf, size_t n)
{
	size_t len = 0;
	buf[0] = 0;
	for (int k = 0; ch[k] && len < n; k++)
		len += (size_t)snprintf(buf + len, n - len, "%s%s", k == 0 ? "" : ch[k + 1] ? ", " : last,
					ch[k]);
	return buf;
}

static int find_choice(const char *const *ch, const char *v, size_t len)
{
	for (int k = 0; ch[k]; k++)
		if (strlen(ch[k]) == len && !strncmp(ch[k], v, len))
			return k;
	return -1;
}

/* An integer of OPT_T_INT or OPT_T_LONG in [lo, hi], decimal. */
static int set_integer(const struct opt *o, const char *flag, const char *v, void *base)
{
	char *end;
	errno = 0;
	long x = strtol(v, &end, 10);
	if (errno || end == v || *end || x < o->lo || x > o->hi)
		return cli_usage_error("%s: expected a number in [%g, %g], got '%s'", flag, o->lo, o->hi, v);
	if (o->type == OPT_T_INT)
		*(int *)field(o, base) = (int)x;
	else
		*(long *)field(o, base) = x;
	return 0;
}

/* A comma-separated list of o's choices into a bit set. */
static int set_bits(const struct opt *o, const char *flag, const char *v, void *base)
{
	char buf[200];
	unsigned bits = 0;
	int n = 0;
	for (const char *t = v; *t;) {
		size_t len = strcspn(t, ",");
		if (len) {
			int k = find_choice(o->choices, t, len);
			if (k < 0)
				return cli_usage_error("%s: expected %s, got '%.*s'", flag,
						       choice_list(o->choices, " or ", buf, sizeof(buf)), (int)len, t);
			bits |= 1u << k;
			n++;
		}
		t += len + (t[len] == ',');
	}
	if (n == 0)
		return cli_usage_error("%s: expected a list of %s, got '%s'", flag,
				       choice_list(o->choices, ", ", buf, sizeof(buf)), v);
	*(unsigned *)field(o, base) = bits;
	return 0;
}

/* The value v of option o, as flag names it. */
static int set_value(const struct opt *o, const char *flag, const char *v, void *base)
{
	char buf[200];
	double x;
	if (o->cb)
		return o->cb(o, flag, v, base);
	switch (o->type) {
	case OPT_T_INT:
	case OPT_T_LONG:
		return set_integer(o, flag, v, base);
	case OPT_T_NUMBER:
		if (cli_parse_number(flag, v, o->lo, o->hi, &x))
			return EXIT_USAGE;
		*(double *)field(o, base) = o->scale ? x * o->scale : x;
		return 0;
	case OPT_T_STRING:
	case OPT_T_FILE:
		*(const char **)field(o, base) = v;
		return 0;
	case OPT_T_CHOICE: {
		int k = find_choice(o->choices, v, strlen(v));
		if (k < 0)
			return cli_usage_error("%s: expected %s, got '%s'", flag,
					       choice_list(o->choices, " or ", buf, sizeof(buf)), v);
		*(int *)field(o, base) = k;
		return 0;
	}
	case OPT_T_BITS:
		return set_bits(o, flag, v, base);
	case OPT_T_LIST: {
		struct opt_list *l = field(o, base);
		if (l->n == OPT_LIST_MAX)
			return cli_usage_error("%s: given more than %d times, got '%s'", flag, OPT_LIST_MAX, v);
		l->v[l->n++] = v;
		return 0;
	}
	default:
		return cli_usage_error("%s: option of no known type (a bug in its table)", flag);
	}
}

/* Edit distance of a[0..n) and b, at most 63 characters each. */
static size_t distance(const char *a, size_t n, const char *b)
{
	size_t m = strlen(b), row[64];
	if (n > 63 || m > 63)
		return 64;
	for (size_t j = 0; j <= m; j++)
		row[j] = j;
	for (size_t i = 1; i <= n; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= m; j++) {
			size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[m];
}

const char *opt_suggest(const struct opt_cmd *c, const char *name, size_t len)
{
	const char *best = NULL;
	size_t best_d = (size_t)-1;
	for (const struct opt *o = c->options; o->type != OPT_T_END; o++) {
		if (!is_option(o))
			continue;
		size_t d = distance(name, len, o->long_name);
		/* a prefix of the name ("--tra" for "--trace") is near too */
		if (len >= 3 && !strncmp(name, o->long_name, len))
			d = 1;
		if (d < best_d)
			best = o->long_name, best_d = d;
	}
	return best && best_d <= 1 + len / 4 ? best : NULL;
}

static int unknown(const struct opt_cmd *c, const char *flag, const char *name, size_t len)
{
	const char *near = name ? opt_suggest(c, name, len) : NULL;
	if (near)
		return cli_usage_error("unknown option '%s' for '%s'; did you mean '--%s'?", flag, c->name, near);
	return cli_usage_error("unknown option '%s' for '%s'", flag, c->name);
}

static int missing(const struct opt_cmd *c, const struct opt *o, const char *flag)
{
	return cli_usage_error("%s: option '%s' needs a value (%s)", c->name, flag, o->argh ? o->argh : "a value");
}

/* The long option at argv[*i] ("--name" or "--name=value"); *i moved
 * past a separate value. */
static int parse_long(const struct opt_cmd *c, int argc, char **argv, int *i, void *base)
{
	const char *a = argv[*i], *name = a + 2, *eq = strchr(name, '=');
	size_t len = eq ? (size_t)(eq - name) : strlen(name);
	char flag[128];
	snprintf(flag, sizeof(flag), "--%.*s", (int)len, name);
	const struct opt *o = c->options;
	while (o->type != OPT_T_END && !(is_option(o) && strlen(o->long_name) == len &&
					  !strncmp(o->long_name, name, len)))
		o++;
	if (o->type == OPT_T_END)
		return unknown(c, flag, name, len);
	if (o->type == OPT_T_FLAG && !o->cb) {
		if (eq)
			return cli_usage_error("%s: option '%s' takes no value, got '%s'", c->name, flag, a);
		*(bool *)field(o, base) = true;
		return 0;
	}
	if (eq)
		return set_value(o, flag, eq + 1, base);
	if (*i + 1 >= argc)
		return missing(c, o, flag);
	return set_value(o, flag, argv[++*i], base);
}

/* The short options at argv[*i]: flags clustered ("-qv"), the last one
 * may take a value, attached ("-j4") or the next argument ("-j 4"). */
static int parse_short(const struct opt_cmd *c, int argc, char **argv, int *i, void *base)
{
	for (const char *p = argv[*i] + 1; *p; p++) {
		char flag[3] = { '-', *p, 0 };
		const struct opt *o = c->options;
		while (o->type != OPT_T_END && !(is_option(o) && o->short_name == *p))
			o++;
		if (o->type == OPT_T_END)
			return unknown(c, flag, NULL, 0);
		if (o->type == OPT_T_FLAG && !o->cb) {
			*(bool *)field(o, base) = true;
			continue;
		}
		if (p[1])
			return set_value(o, flag, p + 1, base);
		if (*i + 1 >= argc)
			return missing(c, o, flag);
		return set_value(o, flag, argv[++*i], base);
	}
	return 0;
}

int opt_parse(const struct opt_cmd *c, int argc, char **argv, void *base, const char **pos, int *npos)
{
	bool only_pos = false;
	int rc = 0;
	*npos = 0;
	for (int i = 1; i < argc && !rc; i++) {
		const char *a = argv[i];
		if (only_pos || a[0] != '-' || !a[1])
			pos[(*npos)++] = a;
		else if (!strcmp(a, "--"))
			only_pos = true;
		else if (a[1] == '-')
			rc = parse_long(c, argc, argv, &i, base);
		else
			rc = parse_short(c, argc, argv, &i, base);
	}
	return rc;
}

/* The synopsis item of o ("[-j N]", "[--out DIR]") into buf. */
static const char *synopsis_item(const struct opt *o, char *buf, size_t n)
{
	if (o->short_name)
		snprintf(buf, n, "[-%c%s%s]", o->short_name, o->type == OPT_T_FLAG ? "" : " ",
			 o->type == OPT_T_FLAG ? "" : o->argh);
	else
		snprintf(buf, n, "[--%s%s%s]", o->long_name, o->type == OPT_T_FLAG ? "" : " ",
			 o->type == OPT_T_FLAG ? "" : o->argh);
	return buf;
}

static void synopsis(const struct opt_cmd *c, FILE *f)
{
	char head[64], item[160];
	int indent = snprintf(head, sizeof(head), "usage: ddlsim %s", c->name), col = indent;
	fputs(head, f);
	if (c->args && *c->args)
		col += fprintf(f, " %s", c->args);
	for (const struct opt *o = c->options; !c->brief && o->type != OPT_T_END; o++) {
		if (!is_option(o) || (o->flags & OPT_HIDDEN))
			continue;
		synopsis_item(o, item, sizeof(item));
		if (col + 1 + (int)strlen(item) > WIDTH) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		}
		col += fprintf(f, " %s", item);
	}
	if (c->brief)
		fputs(" [options]", f);
	fputc('\n', f);
	if (c->usage_more)
		fputs(c->usage_more, f);
}

/* Help text t (its line breaks as spaces) wrapped into lines that end
 * before WIDTH, every line after the first indented to col. */
static void indented(const char *t, int col, FILE *f)
{
	int at = col;
	bool first = true;
	for (;;) {
		while (*t == ' ' || *t == '\n')
			t++;
		if (!*t)
			break;
		int len = (int)strcspn(t, " \n");
		if (!first && at + 1 + len > WIDTH) {
			fprintf(f, "\n%*s", col, "");
			at = col;
			first = true;
		}
		at += fprintf(f, "%s%.*s", first ? "" : " ", len, t);
		first = false;
		t += len;
	}
	fputc('\n', f);
}

static void option_help(const struct opt *o, FILE *f)
{
	char left[160];
	int n;
	const char *val = o->type == OPT_T_FLAG ? "" : o->argh;
	if (o->short_name)
		n = snprintf(left, sizeof(left), "  -%c, --%s%s%s", o->short_name, o->long_name, *val ? " " : "", val);
	else
		n = snprintf(left, sizeof(left), "      --%s%s%s", o->long_name, *val ? " " : "", val);
	if (n + 1 >= HELP_COL)
		fprintf(f, "%s\n%*s", left, HELP_COL, "");
	else
		fprintf(f, "%-*s", HELP_COL, left);
	indented(o->help ? o->help : "", HELP_COL, f);
}

void opt_usage(const struct opt_cmd *c, FILE *f)
{
	synopsis(c, f);
	fprintf(f, "\n%c%s.\n", c->summary[0] - ('a' <= c->summary[0] && c->summary[0] <= 'z' ? 32 : 0),
		c->summary + 1);
	if (c->description)
		fprintf(f, "\n%s", c->description);
	bool any = false;
	for (const struct opt *o = c->options; o->type != OPT_T_END; o++) {
		if (o->type == OPT_T_GROUP) {
			fprintf(f, "\n%s:\n", o->help);
			any = true;
			continue;
		}
		if (!any)
			fputs("\noptions:\n", f);
		any = true;
		option_help(o, f);
	}
	if (c->epilogue)
		fprintf(f, "\n%s", c->epilogue);
}

void opt_dump(const struct opt_cmd *c, const void *base, FILE *f)
{
	for (const struct opt *o = c->options; o->type != OPT_T_END; o++) {
		if (!is_option(o))
			continue;
		const void *p = cfield(o, base);
		fprintf(f, "%s=", o->long_name);
		switch (o->type) {
		case OPT_T_FLAG: fprintf(f, "%d", *(const bool *)p); break;
		case OPT_T_INT: case OPT_T_CHOICE: fprintf(f, "%d", *(const int *)p); break;
		case OPT_T_LONG: fprintf(f, "%ld", *(const long *)p); break;
		case OPT_T_NUMBER: fprintf(f, "%.17g", *(const double *)p); break;
		case OPT_T_BITS: fprintf(f, "%#x", *(const unsigned *)p); break;
		case OPT_T_LIST: {
			const struct opt_list *l = p;
			for (int k = 0; k < l->n; k++)
				fprintf(f, "%s'%s'", k ? "," : "", l->v[k]);
			break;
		}
		case OPT_T_STRING: case OPT_T_FILE: {
			const char *s = *(const char *const *)p;
			fprintf(f, "%s%s%s", s ? "'" : "", s ? s : "(null)", s ? "'" : "");
			break;
		}
		default:
			for (size_t k = 0; k < o->size; k++)
				fprintf(f, "%02x", ((const unsigned char *)p)[k]);
		}
		fputc('\n', f);
	}
}
