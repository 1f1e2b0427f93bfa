/* cli: the ddlsim command table; one file per command (cmd_*.c).
 *
 * Exit codes, documented in `ddlsim --help`: */
#ifndef DDLSIM_CLI_H
#define DDLSIM_CLI_H

#include <stdio.h>

enum {
	EXIT_OK = 0,        /* success */
	EXIT_FAIL = 1,      /* the simulation or an output failed */
	EXIT_USAGE = 2,     /* bad command line */
	EXIT_INPUT = 3,     /* invalid input file */
	EXIT_NOFIT = 4,     /* validate: valid files, a plan that does not fit in memory */
};

struct opt_cmd;

/* A command: its options table (cli/options.h: name, summary, --help)
 * and what runs it with argv[0] its name. */
struct cli_command {
	const struct opt_cmd *opts;
	int (*run)(int argc, char **argv);
};

/* Every command, { NULL, NULL } last (commands.c). */
extern const struct cli_command cli_commands[];

int cmd_run(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_cluster(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_validation(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_calib(int argc, char **argv);
int cmd_calib_trace(int argc, char **argv);
int cmd_collective(int argc, char **argv);
int cmd_import(int argc, char **argv);
extern const struct opt_cmd cmd_run_opts, cmd_sweep_opts, cmd_merge_opts, cmd_plan_opts, cmd_compare_opts, cmd_cluster_opts,
	cmd_validate_opts, cmd_validation_opts, cmd_list_opts, cmd_calib_opts, cmd_calib_trace_opts,
	cmd_collective_opts, cmd_import_opts;

/* Parse option opt's value v as a number in [lo, hi] into *out. Returns 0,
 * or EXIT_USAGE after saying what was expected (nan, junk, out of range). */
int cli_parse_number(const char *opt, const char *v, double lo, double hi, double *out);

/* The one rule for outputs (util/atomic_file.h): an output path ("-" and
 * NULL pass) must be a regular file or nothing. Returns 0, or EXIT_INPUT
 * after "ddlsim: error: 'p' is a FIFO, expected a regular file or nothing
 * (refusing to replace it)". */
int cli_check_output(const char *path);

/* An input file's name must be UTF-8: a scenario or sweep takes its name
 * from it, and reports and records are UTF-8 JSON. Returns 0, or
 * EXIT_INPUT after "ddlsim: error: 'q\xff.json': the file name is not
 * valid UTF-8 (byte 0xff at offset 1) ...", the name escaped (bytes that
 * are not UTF-8 and control characters as \xNN), said before any work. */
int cli_check_input_name(const char *path);

/* The one rule against losing data (util/samefile.h), checked before any
 * work starts: no output of sf may be an input of it, no two outputs one
 * file. Each conflict is said: "ddlsim: --trace 'S.json': error: is an
 * input of this command (the scenario 'S.json'); refusing to overwrite
 * it", or "ddlsim: error: --trace 'o/report.json' is also --out
 * 'o/report.json': give it another file (the one would replace the
 * other)". Returns 0, EXIT_INPUT when an output is an input, else
 * EXIT_USAGE when two outputs are one file. */
struct samefile;
int cli_check_samefile(const struct samefile *sf);

/* Note the inputs of scenario sc in sf: the scenario, its model,
 * topology and profile (roles "the scenario", "the model", ...). */
struct scenario;
void cli_note_scenario(struct samefile *sf, const struct scenario *sc);

/* Parse --shard's value "I/N" (decimal integers, 1 <= I <= N <= CLI_MAX_SHARDS)
 * into *i (0-based) and *n. Returns 0, or EXIT_USAGE after saying why. */
#define CLI_MAX_SHARDS 100000
int cli_parse_shard(const char *opt, const char *v, long *i, long *n);

/* The smallest --trace-link-period: a microsecond, the scale of one link's
 * latency (a finer period sees nothing new and only multiplies samples). */
#define CLI_MIN_LINK_PERIOD_S 1e-6

/* Print "ddlsim: error: ..." to stderr and return EXIT_USAGE. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
