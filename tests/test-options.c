/* test-options: the option tables of the command line (cli/options.h).
 *
 * The parser on a table of its own: short options attached and detached,
 * clustered flags, long options with '=' and apart, flags that refuse a
 * value, ranges, choices and lists, a repeatable option, unknown options
 * with the nearest one, '--' and positional arguments in order, the
 * generated --help. Then every option of every command (walked through
 * cli_commands[]), given in each of its spellings (-j1, -j 1, --jobs=1,
 * --jobs 1), must parse and give the same options struct. */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "options.h"

struct t_opts {
	bool quiet, verbose;
	int jobs, color;
	double timeout_s;
	const char *out;
	unsigned formats;
	struct opt_list tags;
};

static const char *const colors[] = { "red", "green", "blue", NULL };
static const char *const formats[] = { "json", "csv", "svg", NULL };

static const struct opt t_options[] = {
	OPT_FLAG('q', "quiet", struct t_opts, quiet, "say nothing"),
	OPT_FLAG('v', "verbose", struct t_opts, verbose, "say more"),
	OPT_STRING('o', "out", struct t_opts, out, "DIR", "output directory"),
	OPT_CHOICE(0, "color", struct t_opts, color, "C", colors, "a colour"),
	OPT_BITS(0, "format", struct t_opts, formats, "LIST", formats, "formats, comma-separated"),
	OPT_LIST('t', "tag", struct t_opts, tags, "TAG", "a tag (repeatable)"),
	OPT_GROUP("runner options"),
	OPT_INT('j', "jobs", struct t_opts, jobs, "N", 1, 1024, "simulations at once"),
	OPT_NUMBER(0, "timeout", struct t_opts, timeout_s, "S", 0.001, 1e7, "seconds per simulation"),
	OPT_END(),
};

static const struct opt_cmd t_cmd = {
	.name = "t", .summary = "a test command", .args = "FILE...", .options = t_options,
	.epilogue = "exit codes: 0 ok\n", .size = sizeof(struct t_opts),
};

/* One parse of the words of line (split at spaces) by c into base: the
 * exit code, the positional arguments in pos[] (npos), stderr in err.
 * The words stay allocated to the end of the test (values point in). */
struct parsed {
	int rc, npos;
	const char *pos[32];
	char err[1024];
	char *words;
};

static void parse(const struct opt_cmd *c, const char *const *argv_in, int argc, void *base, struct parsed *p)
{
	char **argv = calloc((size_t)argc + 2, sizeof(*argv));
	argv[0] = (char *)c->name;
	for (int i = 0; i < argc; i++)
		argv[i + 1] = (char *)argv_in[i];
	memset(p->err, 0, sizeof(p->err));
	fflush(stderr);
	int saved = dup(2);
	FILE *t = tmpfile();
	cr_assert(t && saved >= 0);
	dup2(fileno(t), 2);
	p->rc = opt_parse(c, argc + 1, argv, base, p->pos, &p->npos);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(t);
	size_t n = fread(p->err, 1, sizeof(p->err) - 1, t);
	p->err[n] = 0;
	fclose(t);
	free(argv);
}

static void parse_line(const char *line, struct t_opts *o, struct parsed *p)
{
	const char *argv[32];
	int argc = 0;
	p->words = strdup(line);
	for (char *sv = NULL, *w = strtok_r(p->words, " ", &sv); w && argc < 32; w = strtok_r(NULL, " ", &sv))
		argv[argc++] = w;
	memset(o, 0, sizeof(*o));
	parse(&t_cmd, argv, argc, o, p);
}

Test(options, short_options_take_their_value_attached_or_apart)
{
	struct t_opts o;
	struct parsed p;
	parse_line("-j4", &o, &p);
	cr_expect_eq(p.rc, 0, "%s", p.err);
	cr_expect_eq(o.jobs, 4);
	free(p.words);
	parse_line("-j 7 -o d", &o, &p);
	cr_expect_eq(p.rc, 0, "%s", p.err);
	cr_expect_eq(o.jobs, 7);
	cr_expect_str_eq(o.out, "d");
	free(p.words);
	parse_line("-qvj3", &o, &p);
	cr_expect_eq(p.rc, 0, "%s", p.err);
	cr_expect(o.quiet && o.verbose);
	cr_expect_eq(o.jobs, 3);
	free(p.words);
}

Test(options, long_options_take_their_value_after_an_equals_sign_or_apart)
{
	struct t_opts o;
	struct parsed p;
	parse_line("--jobs=12 --timeout 2.5 --out=a=b --color blue", &o, &p);
	cr_expect_eq(p.rc, 0, "%s", p.err);
	cr_expect_eq(o.jobs, 12);
	cr_expect_eq(o.timeout_s, 2.5);
	cr_expect_str_eq(o.out, "a=b");
	cr_expect_eq(o.color, 2);
	free(p.words);
}

Test(options, a_repeatable_option_keeps_every_value_in_order)
{
	struct t_opts o;
	struct parsed p;
	parse_line("--tag a -tb --tag=c -t d", &o, &p);
	cr_expect_eq(p.rc, 0, "%s", p.err);
	cr_assert_eq(o.tags.n, 4);
	const char *want[] = { "a", "b", "c", "d" };
	for (int i = 0; i < 4; i++)
		cr_expect_str_eq(o.tags.v[i], want[i]);
	free(p.words);
}

Test(options, a_flag_refuses_a_value)
{
	struct t_opts o;
	struct parsed p;
	parse_line("--quiet=1", &o, &p);
	cr_expect_eq(p.rc, EXIT_USAGE);
	cr_expect_str_eq(p.err, "ddlsim: error: t: option '--quiet' takes no value, got '--quiet=1'\n"
			 "(see 'ddlsim --help')\n");
	cr_expect(!o.quiet);
	free(p.words);
}

Test(options, values_out_of_range_are_refused_with_the_range)
{
	static const struct { const char *line, *err; } cases[] = {
		{ "--jobs 0", "ddlsim: error: --jobs: expected a number in [1, 1024], got '0'\n" },
		{ "-j1025", "ddlsim: error: -j: expected a number in [1, 1024], got '1025'\n" },
		{ "-j 1.5", "ddlsim: error: -j: expected a number in [1, 1024], got '1.5'\n" },
		{ "--timeout=abc", "ddlsim: error: --timeout: expected a number in [0.001, 1e+07], got 'abc'\n" },
		{ "--timeout nan", "ddlsim: error: --timeout: expected a number in [0.001, 1e+07], got 'nan'\n" },
		{ "--color pink", "ddlsim: error: --color: expected red, green or blue, got 'pink'\n" },
		{ "--format json,xml", "ddlsim: error: --format: expected json, csv or svg, got 'xml'\n" },
		{ "--format ,", "ddlsim: error: --format: expected a list of json, csv, svg, got ','\n" },
		{ "--jobs", "ddlsim: error: t: option '--jobs' needs a value (N)\n" },
		{ "-q -j", "ddlsim: error: t: option '-j' needs a value (N)\n" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct t_opts o;
		struct parsed p;
		parse_line(cases[i].line, &o, &p);
		cr_expect_eq(p.rc, EXIT_USAGE, "%s", cases[i].line);
		cr_expect(!strncmp(p.err, cases[i].err, strlen(cases[i].err)), "%s: want %s, got %s", cases[i].line,
			  cases[i].err, p.err);
		free(p.words);
	}
	struct t_opts o;
	struct parsed p;
	parse_line("--format svg,json --jobs 1024 --timeout 0.001", &o, &p);
	cr_expect_eq(p.rc, 0, "%s", p.err);
	cr_expect_eq(o.formats, 5u);
	cr_expect_eq(o.jobs, 1024);
	free(p.words);
}

Test(options, an_unknown_option_is_said_with_the_nearest_one)
{
	struct t_opts o;
	struct parsed p;
	parse_line("--jbos 2", &o, &p);
	cr_expect_eq(p.rc, EXIT_USAGE);
	cr_expect_str_eq(p.err, "ddlsim: error: unknown option '--jbos' for 't'; did you mean '--jobs'?\n"
			 "(see 'ddlsim --help')\n");
	free(p.words);
	parse_line("--time=3", &o, &p);
	cr_expect(strstr(p.err, "unknown option '--time' for 't'; did you mean '--timeout'?"), "%s", p.err);
	free(p.words);
	parse_line("--frobnicate", &o, &p);
	cr_expect_str_eq(p.err, "ddlsim: error: unknown option '--frobnicate' for 't'\n(see 'ddlsim --help')\n");
	free(p.words);
	parse_line("-qx", &o, &p);
	cr_expect_eq(p.rc, EXIT_USAGE);
	cr_expect(strstr(p.err, "unknown option '-x' for 't'"), "%s", p.err);
	free(p.words);
}

Test(options, double_dash_ends_the_options_and_positionals_keep_their_order)
{
	struct t_opts o;
	struct parsed p;
	parse_line("a -q b - -- -v --jobs=3 c", &o, &p);
	cr_expect_eq(p.rc, 0, "%s", p.err);
	cr_expect(o.quiet && !o.verbose);
	cr_expect_eq(o.jobs, 0);
	cr_assert_eq(p.npos, 6);
	const char *want[] = { "a", "b", "-", "-v", "--jobs=3", "c" };
	for (int i = 0; i < 6; i++)
		cr_expect_str_eq(p.pos[i], want[i]);
	free(p.words);
}

/* The usage text: the synopsis from the table, the summary, each option
 * with its value name and help at one column, groups, the epilogue. */
Test(options, help_is_generated_from_the_table)
{
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);
	opt_usage(&t_cmd, f);
	fclose(f);
	const char *head = "usage: ddlsim t FILE... [-q] [-v] [-o DIR] [--color C] [--format LIST] [-t TAG]\n"
			   "                [-j N] [--timeout S]\n\nA test command.\n";
	cr_expect(!strncmp(text, head, strlen(head)), "%s", text);
	cr_expect(strstr(text, "\noptions:\n  -q, --quiet             say nothing\n"), "%s", text);
	cr_expect(strstr(text, "      --color C           a colour\n"), "%s", text);
	cr_expect(strstr(text, "\nrunner options:\n  -j, --jobs N            simulations at once\n"), "%s", text);
	cr_expect(strstr(text, "\nexit codes: 0 ok\n"), "%s", text);
	free(text);
}

/* A valid value of option o for the spelling test. */
static const char *example_of(const struct opt *o, char *buf, size_t n)
{
	if (o->example)
		return o->example;
	switch (o->type) {
	case OPT_T_INT:
	case OPT_T_LONG:
	case OPT_T_NUMBER:
		cr_assert(o->hi > 0, "--%s: no range and no example", o->long_name);
		snprintf(buf, n, "%.17g", o->hi);
		return buf;
	case OPT_T_CHOICE:
		return o->choices[1] ? o->choices[1] : o->choices[0];
	case OPT_T_BITS:
		return o->choices[0];
	case OPT_T_STRING:
	case OPT_T_FILE:
	case OPT_T_LIST:
		return "x.json";
	default:
		cr_assert_fail("--%s: no example for its type", o->long_name);
		return NULL;
	}
}

/* The dump of c's options after parsing argv (asserted to parse). */
static char *dump_after(const struct opt_cmd *c, const char *const *argv, int argc)
{
	void *base = calloc(1, c->size);
	struct parsed p;
	parse(c, argv, argc, base, &p);
	cr_expect_eq(p.rc, 0, "%s: '%s %s': %s", c->name, argv[0], argc > 1 ? argv[1] : "", p.err);
	char *text = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&text, &n);
	opt_dump(c, base, f);
	fclose(f);
	free(base);
	return text;
}

/* Every option of every command in each of its spellings: the same
 * parse, and one that differs from no option at all. */
Test(options, every_option_of_every_command_parses_the_same_in_each_spelling)
{
	int checked = 0;
	for (int i = 0; cli_commands[i].opts; i++) {
		const struct opt_cmd *c = cli_commands[i].opts;
		char *none = dump_after(c, NULL, 0);
		for (const struct opt *o = c->options; o->type != OPT_T_END; o++) {
			if (o->type == OPT_T_GROUP)
				continue;
			char val[64], sh[80], lo[160], lo_eq[240];
			bool flag = o->type == OPT_T_FLAG && !o->cb;
			const char *v = flag ? "" : example_of(o, val, sizeof(val));
			snprintf(lo, sizeof(lo), "--%s", o->long_name);
			snprintf(lo_eq, sizeof(lo_eq), "--%s=%s", o->long_name, v);
			const char *sp[4][2];
			int argcs[4], ns = 0;
			if (flag) {
				sp[ns][0] = lo, argcs[ns++] = 1;
			} else {
				sp[ns][0] = lo_eq, argcs[ns++] = 1;
				sp[ns][0] = lo, sp[ns][1] = v, argcs[ns++] = 2;
			}
			snprintf(sh, sizeof(sh), "-%c%s", o->short_name, flag ? "" : v);
			char sh_alone[3] = { '-', o->short_name, 0 };
			if (o->short_name) {
				sp[ns][0] = sh, argcs[ns++] = 1;
				if (!flag)
					sp[ns][0] = sh_alone, sp[ns][1] = v, argcs[ns++] = 2;
			}
			char *first = dump_after(c, sp[0], argcs[0]);
			cr_expect_str_neq(first, none, "%s %s: no effect", c->name, sp[0][0]);
			for (int k = 1; k < ns; k++) {
				char *other = dump_after(c, sp[k], argcs[k]);
				cr_expect_str_eq(other, first, "%s: '%s' and '%s %s' parse differently", c->name,
						 sp[0][0], sp[k][0], argcs[k] > 1 ? sp[k][1] : "");
				free(other);
			}
			free(first);
			checked++;
		}
		free(none);
	}
	cr_expect_gt(checked, 60, "only %d options checked", checked);
}

/* Every option of every command is in its --help, and the first line
 * is its synopsis. */
Test(options, every_command_help_names_every_option)
{
	for (int i = 0; cli_commands[i].opts; i++) {
		const struct opt_cmd *c = cli_commands[i].opts;
		char *text = NULL, want[160];
		size_t n = 0;
		FILE *f = open_memstream(&text, &n);
		opt_usage(c, f);
		fclose(f);
		snprintf(want, sizeof(want), "usage: ddlsim %s", c->name);
		cr_expect(!strncmp(text, want, strlen(want)), "%s", text);
		for (const struct opt *o = c->options; o->type != OPT_T_END; o++) {
			if (o->type == OPT_T_GROUP)
				continue;
			snprintf(want, sizeof(want), "--%s", o->long_name);
			cr_expect(strstr(text, want), "%s --help lacks %s", c->name, want);
		}
		free(text);
	}
}

/* The runner's options are one group, the same in every command that
 * runs simulations through the runner. */
Test(options, the_runner_group_is_shared)
{
	const char *runs[] = { "run", "compare", "sweep", "plan", "validation" };
	for (size_t k = 0; k < sizeof(runs) / sizeof(runs[0]); k++) {
		const struct opt_cmd *c = NULL;
		for (int i = 0; cli_commands[i].opts; i++)
			if (!strcmp(cli_commands[i].opts->name, runs[k]))
				c = cli_commands[i].opts;
		cr_assert(c, "no command %s", runs[k]);
		int found = 0;
		for (const struct opt *o = c->options; o->type != OPT_T_END; o++)
			if (o->type != OPT_T_GROUP && (!strcmp(o->long_name, "jobs") || !strcmp(o->long_name, "timeout") ||
						       !strcmp(o->long_name, "mem-limit")))
				found++;
		cr_expect_eq(found, 3, "%s has %d of the runner's options", runs[k], found);
	}
}
