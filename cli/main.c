/* main: `ddlsim [--help|--version] <command> [<args>]`.
 *
 * The command table is commands.c; each command is its own file and
 * parses its arguments by its option table (options.h), which also
 * gives its --help. --help is handled here, before anything touches
 * SimGrid, whose init parses argv. */
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "atomic_file.h"
#include "cleanup.h"
#include "cli.h"
#include "options.h"
#include "ddlsim-config.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: ddlsim [--help|--version] <command> [<args>]\n\n"
		   "ddlsim simulates distributed deep-learning training on a GPU cluster:\n"
		   "time per iteration, throughput, memory per GPU and cost to train.\n\n"
		   "commands:\n");
	int w = 0;
	for (int i = 0; cli_commands[i].opts; i++)
		if ((int)strlen(cli_commands[i].opts->name) > w)
			w = (int)strlen(cli_commands[i].opts->name);
	for (int i = 0; cli_commands[i].opts; i++)
		fprintf(f, "  %-*s %s\n", w, cli_commands[i].opts->name, cli_commands[i].opts->summary);
	fprintf(f, "\n'ddlsim <command> --help' describes a command.\n\n"
		   "exit codes:\n"
		   "  0  success\n"
		   "  1  the simulation or writing a report failed\n"
		   "  2  bad command line\n"
		   "  3  invalid input file (the message names the file and line:column or JSON path),\n"
		   "     an input that is not a regular file (a FIFO, a device, a directory), an\n"
		   "     output that exists and is not a regular file (never replaced), or an output\n"
		   "     that is an input of the command (the same file by any name or link: the\n"
		   "     message names both; checked before any work), or merge's shards incomplete\n"
		   "     (missing shards or points, a torn row, a sweep still writing; --partial\n"
		   "     merges what is there)\n"
		   "  4  validate: every file valid, but a scenario's plan does not fit in GPU memory\n"
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

/* The environment the command line reads (nothing below cli/ does):
 * DDLSIM_TEST_FAIL_PUBLISH=N, the tests' hook that fails the Nth
 * publishing rename (util/atomic_file.h); a value that is not a whole
 * number > 0 is said and ignored. DDLSIM_LONG_RUN_S is cli/longrun.c's. */
static void read_environment(void)
{
	const char *v = getenv("DDLSIM_TEST_FAIL_PUBLISH");
	if (!v)
		return;
	char *end;
	long n = strtol(v, &end, 10);
	if (end == v || *end || n <= 0)
		fprintf(stderr, "ddlsim: warning: DDLSIM_TEST_FAIL_PUBLISH='%s' is not a whole number > 0: "
			"ignored\n", v);
	else
		atomic_file_fail_publish_at(n);
}

int main(int argc, char **argv)
{
	cleanup_install();
	read_environment();
	if (argc < 2)
		return usage(stderr), EXIT_USAGE;
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		if (argc > 2)
			for (int i = 0; cli_commands[i].opts; i++)
				if (!strcmp(argv[2], cli_commands[i].opts->name))
					return opt_usage(cli_commands[i].opts, stdout), EXIT_OK;
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("ddlsim %s\n", DDLSIM_VERSION);
		return EXIT_OK;
	}
	for (int i = 0; cli_commands[i].opts; i++)
		if (!strcmp(argv[1], cli_commands[i].opts->name)) {
			for (int k = 2; k < argc && strcmp(argv[k], "--"); k++)
				if (!strcmp(argv[k], "--help") || !strcmp(argv[k], "-h"))
					return opt_usage(cli_commands[i].opts, stdout), EXIT_OK;
			if (check_empty_args(argc, argv))
				return EXIT_USAGE;
			return cli_commands[i].run(argc - 1, argv + 1);
		}
	return cli_usage_error("unknown command '%s'", argv[1]);
}
