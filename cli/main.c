/* main: `ddlsim [--help|--version] <command> [<args>]`.
 *
 * The command table lives here; each command is its own file. --help is
 * handled before anything touches SimGrid, whose init parses argv. */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "cleanup.h"
#include "atomic_file.h"
#include "cli.h"
#include "ddlsim-config.h"

const struct cli_command cli_commands[] = {
	{ "run", "simulate a scenario and write its reports", cmd_run, cmd_run_usage },
	{ "sweep", "run every point of a sweep file into CSV and JSON lines", cmd_sweep, cmd_sweep_usage },
	{ "merge", "join the outputs of sweep shards", cmd_merge, cmd_merge_usage },
	{ "plan", "search plans and clusters for a training goal (time, cost, energy)", cmd_plan, cmd_plan_usage },
	{ "compare", "simulate scenarios and show them side by side with differences", cmd_compare, cmd_compare_usage },
	{ "validate", "check scenario, model and topology files without simulating", cmd_validate, cmd_validate_usage },
	{ "validation", "run the published-results suite and print its error table", cmd_validation, cmd_validation_usage },
	{ "list", "list schedules, collective algorithms and cost sources", cmd_list, cmd_list_usage },
	{ "collective", "sweep a collective over message sizes on a topology, like nccl-tests", cmd_collective, cmd_collective_usage },
	{ "calib", "measure this GPU with the CUDA calibration tool and write a profile", cmd_calib, cmd_calib_usage },
	{ NULL, NULL, NULL, NULL },
};

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

int cli_check_output(const char *path)
{
	char why[1200];
	if (!path || !strcmp(path, "-") || atomic_file_check(path, why, sizeof(why)) == 0)
		return 0;
	fprintf(stderr, "ddlsim: error: %s\n", why);
	return EXIT_INPUT;
}

int cli_check_distinct(const char *what_a, const char *a, const char *what_b, const char *b)
{
	if (!a || !b || !strcmp(a, "-") || !strcmp(b, "-") || !atomic_file_same_target(a, b))
		return 0;
	return cli_usage_error("%s '%s' is also %s: give it another file (the one would replace the other)",
			       what_a, a, what_b);
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

static void usage(FILE *f)
{
	fprintf(f, "usage: ddlsim [--help|--version] <command> [<args>]\n\n"
		   "ddlsim simulates distributed deep-learning training on a GPU cluster:\n"
		   "time per iteration, throughput, memory per GPU and cost to train.\n\n"
		   "commands:\n");
	for (int i = 0; cli_commands[i].name; i++)
		fprintf(f, "  %-10s %s\n", cli_commands[i].name, cli_commands[i].summary);
	fprintf(f, "\n'ddlsim <command> --help' describes a command.\n\n"
		   "exit codes:\n"
		   "  0  success\n"
		   "  1  the simulation or writing a report failed\n"
		   "  2  bad command line\n"
		   "  3  invalid input file (the message names the file and line:column or JSON path),\n"
		   "     an input that is not a regular file (a FIFO, a device, a directory), or an\n"
		   "     output that exists and is not a regular file (never replaced)\n"
		   "  130, 143, 153  interrupted by SIGINT, SIGTERM or SIGXFSZ (ulimit -f): temporary\n"
		   "     files removed, no output published or half-replaced\n\n"
		   "environment:\n"
		   "  DDLSIM_LONG_RUN_S  seconds of CPU from which run, compare, sweep and plan warn,\n"
		   "                     before simulating, how long it will take, why folding is off\n"
		   "                     and what would shorten it (default 30; 0: always)\n\n"
		   "example:\n"
		   "  ddlsim run scenarios/quickstart.json --out out/quickstart\n");
}

/* No argument of a command may be empty: an empty file name or option
 * value ('--trace ""', '--csv=') is always a slip (an unset shell
 * variable), never a choice, so it is a usage error here, for every
 * command, before a command opens "" as a file. Returns 0 or EXIT_USAGE. */
static int check_empty_args(int argc, char **argv)
{
	for (int k = 2; k < argc; k++) {
		size_t n = strlen(argv[k]);
		if (n && !(n > 2 && !strncmp(argv[k], "--", 2) && argv[k][n - 1] == '='))
			continue;
		if (n)
			return cli_usage_error("%s: option '%.*s' has an empty value, expected a file name or a "
					       "value", argv[1], (int)(n - 1), argv[k]);
		if (k > 2 && argv[k - 1][0] == '-' && argv[k - 1][1])
			return cli_usage_error("%s: option '%s' has an empty value, expected a file name or a "
					       "value", argv[1], argv[k - 1]);
		return cli_usage_error("%s: argument %d is empty, expected a file name or an option", argv[1],
				       k - 1);
	}
	return 0;
}

int main(int argc, char **argv)
{
	cleanup_install();
	if (argc < 2)
		return usage(stderr), EXIT_USAGE;
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		if (argc > 2)
			for (int i = 0; cli_commands[i].name; i++)
				if (!strcmp(argv[2], cli_commands[i].name))
					return cli_commands[i].usage(stdout), EXIT_OK;
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("ddlsim %s\n", DDLSIM_VERSION);
		return EXIT_OK;
	}
	for (int i = 0; cli_commands[i].name; i++)
		if (!strcmp(argv[1], cli_commands[i].name)) {
			for (int k = 2; k < argc; k++)
				if (!strcmp(argv[k], "--help") || !strcmp(argv[k], "-h"))
					return cli_commands[i].usage(stdout), EXIT_OK;
			if (check_empty_args(argc, argv))
				return EXIT_USAGE;
			return cli_commands[i].run(argc - 1, argv + 1);
		}
	return cli_usage_error("unknown command '%s'", argv[1]);
}
