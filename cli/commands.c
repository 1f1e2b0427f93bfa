/* commands: the command table of `ddlsim` (cli.h), one entry per
 * cmd_*.c; apart from main.c so that the tests walk every command's
 * option table (tests/test-options.c). */
#include <stddef.h>

#include "cli.h"

const struct cli_command cli_commands[] = {
	{ &cmd_run_opts, cmd_run },
	{ &cmd_sweep_opts, cmd_sweep },
	{ &cmd_merge_opts, cmd_merge },
	{ &cmd_plan_opts, cmd_plan },
	{ &cmd_import_opts, cmd_import },
	{ &cmd_compare_opts, cmd_compare },
	{ &cmd_cluster_opts, cmd_cluster },
	{ &cmd_validate_opts, cmd_validate },
	{ &cmd_validation_opts, cmd_validation },
	{ &cmd_list_opts, cmd_list },
	{ &cmd_collective_opts, cmd_collective },
	{ &cmd_calib_opts, cmd_calib },
	{ &cmd_calib_trace_opts, cmd_calib_trace },
	{ NULL, NULL },
};
