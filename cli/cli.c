/* cli: the helpers every command shares (cli.h): usage errors, numbers
 * and shards on the command line, input names, the rules for outputs. Apart
 * from main.c so that the fuzz targets (tests/fuzz/) link a command
 * without ddlsim's main(). */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "cli.h"
#include "samefile.h"
#include "scenario.h"

int cli_usage_error(const char *fmt, ...)
{
	va_list ap;
	fputs("ddlsim: error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\n(see 'ddlsim --help')\n", stderr);
	return EXIT_USAGE;
}

/* The length of the valid UTF-8 sequence at s (1..4), or 0. */
static int utf8_len(const unsigned char *s)
{
	int n = s[0] < 0x80 ? 1 : s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : s[0] >= 0xe0 && s[0] <= 0xef ? 3
	      : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;
	for (int k = 1; k < n; k++)
		if ((s[k] & 0xc0) != 0x80)
			return 0;
	if ((n == 3 && ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0))) ||
	    (n == 4 && ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))))
		return 0;  /* overlong, a surrogate, beyond U+10FFFF */
	return n;
}

int cli_check_input_name(const char *path)
{
	const unsigned char *s = (const unsigned char *)path;
	size_t bad = (size_t)-1;
	for (size_t i = 0; s[i];) {
		int n = utf8_len(s + i);
		if (!n) {
			bad = i;
			break;
		}
		i += (size_t)n;
	}
	if (bad == (size_t)-1)
		return 0;
	char esc[600];
	size_t len = 0, i;
	for (i = 0; s[i] && len + 8 < sizeof(esc); i++) {
		int n = utf8_len(s + i);
		if (n && s[i] >= 0x20 && s[i] != 0x7f) {
			memcpy(esc + len, s + i, (size_t)n);
			len += (size_t)n;
			i += (size_t)n - 1;
		} else
			len += (size_t)snprintf(esc + len, sizeof(esc) - len, "\\x%02x", s[i]);
	}
	esc[len] = 0;
	fprintf(stderr, "ddlsim: error: '%s%s': the file name is not valid UTF-8 (byte 0x%02x at offset %zu); "
		"names become the scenario's name and go into UTF-8 reports: rename the file\n", esc,
		s[i] ? "..." : "", s[bad], bad);
	return EXIT_INPUT;
}

int cli_check_output(const char *path)
{
	char why[1200];
	if (!path || !strcmp(path, "-") || atomic_file_check(path, why, sizeof(why)) == 0)
		return 0;
	fprintf(stderr, "ddlsim: error: %s\n", why);
	return EXIT_INPUT;
}

struct conflicts {
	int inputs, outputs;
};

static void say_conflict(void *ctx, const struct samefile_conflict *c)
{
	struct conflicts *n = ctx;
	if (c->other_is_input) {
		fprintf(stderr, "ddlsim: %s '%s': error: is an input of this command (%s '%s'); refusing to "
			"overwrite it\n", c->out_what, c->out_path, c->other_what, c->other_path);
		n->inputs++;
		return;
	}
	cli_usage_error("%s '%s' is also %s '%s': give it another file (the one would replace the other)",
			c->out_what, c->out_path, c->other_what, c->other_path);
	n->outputs++;
}

int cli_check_samefile(const struct samefile *sf)
{
	struct conflicts n = { 0 };
	samefile_check(sf, say_conflict, &n);
	return n.inputs ? EXIT_INPUT : n.outputs ? EXIT_USAGE : 0;
}

void cli_note_scenario(struct samefile *sf, const struct scenario *sc)
{
	samefile_input(sf, "the scenario", sc->meta.path);
	samefile_input(sf, "the model", inputs_model_path(sc->in));
	samefile_input(sf, "the topology", inputs_topology_path(sc->in));
	samefile_input(sf, "the profile", inputs_profile_path(sc->in));
}

int cli_parse_number(const char *opt, const char *v, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	if (errno || end == v || *end || !(x >= lo && x <= hi))
		return cli_usage_error("%s: expected a number in [%g, %g], got '%s'", opt, lo, hi, v);
	*out = x;
	return 0;
}

int cli_parse_shard(const char *opt, const char *v, long *i, long *n)
{
	char *end, *end2;
	errno = 0;
	long a = strtol(v, &end, 10), b = 0;
	bool ok = !errno && end != v && *end == '/' && isdigit((unsigned char)end[1]);
	if (ok) {
		b = strtol(end + 1, &end2, 10);
		ok = !errno && !*end2 && b >= 1 && b <= CLI_MAX_SHARDS && a >= 1 && a <= b;
	}
	if (!ok)
		return cli_usage_error("%s: expected I/N, integers with 1 <= I <= N <= %d, got '%s'", opt,
				       CLI_MAX_SHARDS, v);
	*i = a - 1;
	*n = b;
	return 0;
}
