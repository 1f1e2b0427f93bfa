/* main: `ddlsim [--help|--version] <command> [<args>]`.
 *
 * The command table lives here; each command is its own file. --help is
 * handled before anything touches SimGrid, whose init parses argv. */
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "atomic_file.h"
#include "cleanup.h"
#include "cli.h"
#include "ddlsim-config.h"
#include "xalloc.h"

#define FLAGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

const struct cli_command cli_commands[] = {
	{ "run", "simulate a scenario and write its reports", cmd_run, cmd_run_usage,
	  FLAGS("--quiet", "--per-rank") },
	{ "sweep", "run every point of a sweep file into CSV and JSON lines", cmd_sweep, cmd_sweep_usage,
	  FLAGS("--quiet", "--resume", "--show-rejected") },
	{ "merge", "join the outputs of sweep shards", cmd_merge, cmd_merge_usage, FLAGS("--partial") },
	{ "plan", "search plans and clusters for a training goal (time, cost, energy)", cmd_plan, cmd_plan_usage,
	  FLAGS("--quiet", "--screen-only", "--show-rejected") },
	{ "compare", "simulate scenarios and show them side by side with differences", cmd_compare, cmd_compare_usage,
	  FLAGS("--quiet") },
	{ "validate", "check scenario, model and topology files without simulating", cmd_validate, cmd_validate_usage,
	  FLAGS("--quiet") },
	{ "validation", "run the published-results suite and print its error table", cmd_validation, cmd_validation_usage,
	  FLAGS("--quiet", "--all", "--check-bands") },
	{ "list", "list schedules, collective algorithms and cost sources", cmd_list, cmd_list_usage, FLAGS("--quiet") },
	{ "collective", "sweep a collective over message sizes on a topology, like nccl-tests", cmd_collective, cmd_collective_usage, NULL },
	{ "calib", "measure this GPU with the CUDA calibration tool and write a profile", cmd_calib, cmd_calib_usage, NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

/* c's arguments argv[0..argc) with every "--opt=value" as "--opt" "value"
 * into a new vector *out (its strings borrowed or new; the process
 * keeps them to its end), or a usage error for "--flag=value" of one of
 * c's flags. Returns the new count, or -1 (reported). */
static int split_long_values(const struct cli_command *c, int argc, char **argv, char ***out)
{
	char **v = xcalloc(2 * (size_t)argc + 1, sizeof(*v));
	int n = 0;
	for (int k = 0; k < argc; k++) {
		const char *eq = strncmp(argv[k], "--", 2) ? NULL : strchr(argv[k], '=');
		if (k == 0 || !eq) {
			v[n++] = argv[k];
			continue;
		}
		size_t len = (size_t)(eq - argv[k]);
		for (const char *const *f = c->flags; *f; f++)
			if (strlen(*f) == len && !strncmp(*f, argv[k], len)) {
				free(v);
				return cli_usage_error("%s: option '%s' takes no value, got '%s'", c->name,
						       *f, argv[k]), -1;
			}
		v[n++] = xasprintf("%.*s", (int)len, argv[k]);
		v[n++] = (char *)eq + 1;
	}
	/* reachable to the end, not a leak to LeakSanitizer: volatile, or an
	 * optimising compiler drops the store nothing reads (GCC 12 -O2) */
	static char **volatile kept;
	*out = kept = v;
	return n;
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
		   "     an input that is not a regular file (a FIFO, a device, a directory), an\n"
		   "     output that exists and is not a regular file (never replaced), or an output\n"
		   "     that is an input of the command (the same file by any name or link: the\n"
		   "     message names both; checked before any work), or merge's shards incomplete\n"
		   "     (missing shards or points, a torn row, a sweep still writing; --partial\n"
		   "     merges what is there)\n"
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
			const struct cli_command *c = &cli_commands[i];
			char **v = argv + 1;
			int n = argc - 1;
			if (c->flags && (n = split_long_values(c, argc - 1, argv + 1, &v)) < 0)
				return EXIT_USAGE;
			return c->run(n, v);
		}
	return cli_usage_error("unknown command '%s'", argv[1]);
}
