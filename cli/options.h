/* options: the one option table of every ddlsim command (git's
 * parse-options in spirit): each option's names, type, range, value name
 * and help in one entry; the parser, `--help` and the tests read the same
 * table.
 *
 * A command describes itself with a struct opt_cmd: its name, summary,
 * positional arguments, prose, its table of struct opt (OPT_END last) and
 * an epilogue (examples, exit codes). An entry stores its value at an
 * offset into the command's own options struct (offsetof, so a table is
 * static data: tests/test-options.c walks every command's table through
 * cli_commands[]); the command fills the struct with its defaults, then
 * calls opt_parse().
 *
 * The command line, as git and getopt_long read it:
 *
 *   -j1  -j 1  --jobs=1  --jobs 1   an option's value, attached or not
 *   -qv                             short flags clustered
 *   --quiet=1                       refused: a flag takes no value
 *   --                              ends the options: all after is positional
 *   -                               positional (stdin or stdout)
 *
 * Anything else that starts with '-' is an unknown option, said with the
 * closest long option when one is near. Positional arguments are
 * collected in order, wherever they stand. Every refusal is one line on
 * stderr ("ddlsim: error: --timeout: expected a number in [0.001, 1e+07],
 * got 'abc'") and EXIT_USAGE. */
#ifndef DDLSIM_OPTIONS_H
#define DDLSIM_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum opt_type {
	OPT_T_END = 0,
	OPT_T_GROUP,    /* a section header in --help; help is its title */
	OPT_T_FLAG,     /* bool, set true when given; refuses --flag=value */
	OPT_T_INT,      /* int in [lo, hi], decimal */
	OPT_T_LONG,     /* long in [lo, hi], decimal */
	OPT_T_NUMBER,   /* double in [lo, hi], stored times scale (0: 1) */
	OPT_T_STRING,   /* const char *, borrowed from argv */
	OPT_T_FILE,     /* a path, as OPT_T_STRING */
	OPT_T_CHOICE,   /* int: the index of the value in choices */
	OPT_T_BITS,     /* unsigned: a comma-separated list of choices, bit k
			 * for choices[k]; a later list replaces an earlier */
	OPT_T_LIST,     /* struct opt_list: each occurrence appends its value */
	OPT_T_RAW,      /* size bytes that the callback fills */
};

/* A repeatable option's values, in the order given (borrowed from argv). */
#define OPT_LIST_MAX 64
struct opt_list {
	const char *v[OPT_LIST_MAX];
	int n;
};

enum {
	OPT_HIDDEN = 1,  /* left out of the synopsis line (an alias, or an option
			  * of a synopsis line of its own: usage_more) */
};

struct opt;

/* Parse value arg of option o (flag: as the user wrote its name, "-j"
 * or "--jobs") into the options struct at base (o->off, and any other
 * field the option sets). Returns 0, or EXIT_USAGE after saying why. */
typedef int (*opt_cb)(const struct opt *o, const char *flag, const char *arg, void *base);

struct opt {
	enum opt_type type;
	char short_name;            /* 0: none */
	const char *long_name;      /* without "--"; NULL only for a group */
	size_t off, size;           /* where the value goes in the options struct */
	const char *argh;           /* the value's name in --help ("N", "FILE") */
	const char *help;           /* one line or several ('\n'), aligned in --help */
	double lo, hi, scale;       /* range of INT, LONG, NUMBER; NUMBER's scale */
	const char *const *choices; /* CHOICE, BITS: NULL last */
	opt_cb cb;                  /* parses the value instead of the type (any type) */
	const char *example;        /* a valid value for the tests (default: from the type) */
	unsigned flags;             /* OPT_HIDDEN */
};

struct opt_cmd {
	const char *name;           /* "run" */
	const char *summary;        /* one line, `ddlsim --help`'s list */
	const char *args;           /* positional arguments in the synopsis ("SCENARIO...") */
	const char *usage_more;     /* further synopsis lines (NULL: none), whole */
	bool brief;                 /* synopsis says "[options]", not every option */
	const char *description;    /* prose after the synopsis (NULL: none) */
	const struct opt *options;  /* OPT_END() last */
	const char *epilogue;       /* prose after the options: examples, exit codes */
	size_t size;                /* sizeof the options struct */
	bool passthrough;           /* the arguments go on to another program unparsed
				     * (calib): the table only documents them */
};

#define OPT_F_(T, f) .off = offsetof(T, f), .size = sizeof(((T *)0)->f)

/* A macro's value as a string, for limits quoted in a command's prose. */
#define OPT_STR_(x) #x
#define OPT_STR(x) OPT_STR_(x)

#define OPT_END() { .type = OPT_T_END }
#define OPT_GROUP(title) { .type = OPT_T_GROUP, .help = (title) }
#define OPT_FLAG(s, l, T, f, h) \
	{ .type = OPT_T_FLAG, .short_name = (s), .long_name = (l), OPT_F_(T, f), .help = (h) }
#define OPT_INT(s, l, T, f, a, lo_, hi_, h) \
	{ .type = OPT_T_INT, .short_name = (s), .long_name = (l), OPT_F_(T, f), .argh = (a), \
	  .lo = (lo_), .hi = (hi_), .help = (h) }
#define OPT_LONG(s, l, T, f, a, lo_, hi_, h) \
	{ .type = OPT_T_LONG, .short_name = (s), .long_name = (l), OPT_F_(T, f), .argh = (a), \
	  .lo = (lo_), .hi = (hi_), .help = (h) }
#define OPT_NUMBER(s, l, T, f, a, lo_, hi_, h) \
	{ .type = OPT_T_NUMBER, .short_name = (s), .long_name = (l), OPT_F_(T, f), .argh = (a), \
	  .lo = (lo_), .hi = (hi_), .help = (h) }
#define OPT_STRING(s, l, T, f, a, h) \
	{ .type = OPT_T_STRING, .short_name = (s), .long_name = (l), OPT_F_(T, f), .argh = (a), .help = (h) }
#define OPT_FILE(s, l, T, f, a, h) \
	{ .type = OPT_T_FILE, .short_name = (s), .long_name = (l), OPT_F_(T, f), .argh = (a), .help = (h) }
#define OPT_CHOICE(s, l, T, f, a, ch, h) \
	{ .type = OPT_T_CHOICE, .short_name = (s), .long_name = (l), OPT_F_(T, f), .argh = (a), \
	  .choices = (ch), .help = (h) }
#define OPT_BITS(s, l, T, f, a, ch, h) \
	{ .type = OPT_T_BITS, .short_name = (s), .long_name = (l), OPT_F_(T, f), .argh = (a), \
	  .choices = (ch), .help = (h) }
#define OPT_LIST(s, l, T, f, a, h) \
	{ .type = OPT_T_LIST, .short_name = (s), .long_name = (l), OPT_F_(T, f), .argh = (a), .help = (h) }
/* An option whose value cb parses; ty says what it stores at f (for
 * the tests' comparison: OPT_T_RAW compares sizeof f bytes). */
#define OPT_CALLBACK(ty, s, l, T, f, a, cb_, h) \
	{ .type = (ty), .short_name = (s), .long_name = (l), OPT_F_(T, f), .argh = (a), .cb = (cb_), \
	  .help = (h) }

/* The runner's options, one group shared by every command that runs
 * simulations through sim/runner.h (run, compare, sweep, plan,
 * validation): -j/--jobs, --timeout, --mem-limit (GB, stored in bytes)
 * into the struct runner_opts m of T. */
#define OPT_JOBS(T, m, h) OPT_INT('j', "jobs", T, m.jobs, "N", 1, 1024, h)
#define OPT_TIMEOUT(T, m) \
	OPT_NUMBER(0, "timeout", T, m.timeout_s, "S", 0.001, 1e7, \
		   "kill a simulation after S seconds (its row: status 'timeout')")
#define OPT_MEM_LIMIT(T, f, h) \
	{ .type = OPT_T_NUMBER, .long_name = "mem-limit", OPT_F_(T, f), .argh = "GB", .lo = 0.01, \
	  .hi = 1e6, .scale = 1e9, .help = (h) }
#define OPT_MEM_LIMIT_HELP \
	"address-space limit per simulation, in GB (1e9 bytes); a\n" \
	"simulation whose estimated peak memory exceeds it is\n" \
	"refused before it starts (default 80% of the machine's\n" \
	"physical memory)"
#define OPT_RUNNER_JOBS(T, m, jobs_help) \
	OPT_GROUP("runner options"), \
	OPT_JOBS(T, m, jobs_help), \
	OPT_TIMEOUT(T, m), \
	OPT_MEM_LIMIT(T, m.mem_limit_bytes, OPT_MEM_LIMIT_HELP)
#define OPT_RUNNER(T, m) OPT_RUNNER_JOBS(T, m, "simulations at once (default 1)")

/* Parse argv[1 .. argc) (argv[0] is the command's name) by c's table
 * into the options struct at base, which holds the defaults; the
 * positional arguments go, in order, into pos[0 .. *npos) (pos has room
 * for argc; its strings are argv's). Returns 0, or EXIT_USAGE after
 * one line on stderr. */
int opt_parse(const struct opt_cmd *c, int argc, char **argv, void *base, const char **pos, int *npos);

/* c's --help: the synopsis generated from the table, the summary and
 * the description, every option with its value name and help, aligned,
 * by group, then the epilogue. */
void opt_usage(const struct opt_cmd *c, FILE *f);

/* Write the value of every option of c in the struct at base to f, one
 * "name=value" line each (strings by content, so values from "--x=v"
 * and "--x v" read the same): what tests/test-options.c compares. */
void opt_dump(const struct opt_cmd *c, const void *base, FILE *f);

/* The long option of c nearest to name (without "--"), by edit
 * distance, or NULL when none is near enough to be the one meant. */
const char *opt_suggest(const struct opt_cmd *c, const char *name, size_t len);

#endif
