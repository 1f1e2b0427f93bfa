/* cmd_run: `ddlsim run SCENARIO [--out DIR] [--format json,csv] [--quiet]`. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "diag.h"
#include "report.h"
#include "scenario.h"
#include "simulate.h"

void cmd_run_usage(FILE *f)
{
	fprintf(f, "usage: ddlsim run SCENARIO [--out DIR] [--format json,csv] [--quiet]\n\n"
		   "Simulates one training iteration of SCENARIO on SimGrid, prints a summary\n"
		   "and writes DIR/report.json and DIR/report.csv (atomically: a failed run\n"
		   "leaves no report). DIR defaults to the scenario's output.dir, else\n"
		   "out/<scenario name>.\n\n"
		   "  --out DIR          report directory\n"
		   "  --format LIST      json, csv or json,csv (default: the scenario's, else both)\n"
		   "  --quiet            no summary on stdout\n\n"
		   "examples:\n"
		   "  ddlsim run scenarios/quickstart.json\n"
		   "  ddlsim run scenarios/gpt3-175b-dp1024.json --out /tmp/r --format json\n\n"
		   "exit codes: 0 ok, 1 simulation or report failed, 2 usage, 3 invalid input\n");
}

int cmd_run(int argc, char **argv)
{
	const char *path = NULL, *out = NULL, *fmt = NULL;
	bool quiet = false;
	struct diag d;
	struct result r;
	int rc = EXIT_FAIL;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--out") || !strcmp(argv[i], "-o")) {
			if (++i == argc)
				return cli_usage_error("--out needs a directory");
			out = argv[i];
		} else if (!strcmp(argv[i], "--format")) {
			if (++i == argc)
				return cli_usage_error("--format needs json, csv or json,csv");
			fmt = argv[i];
		} else if (!strcmp(argv[i], "--quiet") || !strcmp(argv[i], "-q")) {
			quiet = true;
		} else if (argv[i][0] == '-') {
			return cli_usage_error("unknown option '%s' for 'run'", argv[i]);
		} else if (path) {
			return cli_usage_error("'run' takes one scenario, got '%s' and '%s'", path, argv[i]);
		} else
			path = argv[i];
	}
	if (!path)
		return cli_usage_error("'run' needs a scenario file");
	bool want_json = true, want_csv = true;
	if (fmt) {
		want_json = want_csv = false;
		char buf[64];
		snprintf(buf, sizeof(buf), "%s", fmt);
		for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
			if (!strcmp(t, "json"))
				want_json = true;
			else if (!strcmp(t, "csv"))
				want_csv = true;
			else
				return cli_usage_error("--format: expected json or csv, got '%s'", t);
		}
	}

	diag_init(&d, stderr);
	struct scenario *sc = scenario_load(path, &d);
	if (!sc) {
		diag_finish(&d);
		return EXIT_INPUT;
	}
	if (!fmt) {
		want_json = sc->want_json;
		want_csv = sc->want_csv;
	}
	if (simulate_run(sc->in, &sc->plan, &r, &d))
		goto out;
	result_set_meta(&r, &sc->meta);
	if (!quiet)
		report_print_summary(&r, stdout);
	const char *dir = out ? out : sc->out_dir;
	if (report_write(&r, dir, want_json, want_csv, &d))
		goto out_result;
	if (!quiet)
		printf("\nreports written to %s/\n", dir);
	rc = EXIT_OK;
out_result:
	result_finish(&r);
out:
	scenario_destroy(sc);
	diag_finish(&d);
	return rc;
}
