/* cmd_compare: `ddlsim compare A.json B.json ... [-j N]`: scenarios side by
 * side. Each scenario is checked, then simulated through the runner; the
 * table has one column per scenario and one line per plan key or figure,
 * the plan keys that differ marked '*', each figure with its change
 * against the first scenario in percent. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assess.h"
#include "cli.h"
#include "runner.h"
#include "scenario.h"
#include "simulate.h"
#include "tidy.h"
#include "xalloc.h"

void cmd_compare_usage(FILE *f)
{
	fprintf(f, "usage: ddlsim compare SCENARIO SCENARIO... [-j N]\n\n"
		   "Simulates each scenario and prints them side by side: the plan (keys that\n"
		   "differ marked '*'), then throughput, memory, time and cost to train (with\n"
		   "the default goodput and economics of models/goodput.h and economics.h),\n"
		   "each with its change against the first scenario.\n\n"
		   "example:\n"
		   "  ddlsim compare scenarios/megatron/18b.json scenarios/megatron/39b.json -j 2\n\n"
		   "exit codes: 0 ok, 1 a simulation failed, 2 usage, 3 invalid input\n");
}

struct cctx {
	struct scenario **sc;
	struct result_row *rows;
};

static void job(void *ctx, int i, struct result_row *row)
{
	struct cctx *c = ctx;
	simulate_row(c->sc[i]->in, &c->sc[i]->plan, row);
}

static void done(void *ctx, int i, const struct result_row *row)
{
	struct cctx *c = ctx;
	c->rows[i] = *row;
	c->rows[i].plan = c->sc[i]->plan;
}

int cmd_compare(int argc, char **argv)
{
	struct runner_opts ro = { .jobs = 1 };
	const char **paths = xcalloc((size_t)argc, sizeof(char *));
	int n = 0, rc = EXIT_USAGE;
	for (int i = 1; i < argc; i++) {
		if ((!strcmp(argv[i], "-j") || !strcmp(argv[i], "--jobs")) && i + 1 < argc) {
			char *end;
			ro.jobs = (int)strtol(argv[++i], &end, 10);
			if (*end || ro.jobs < 1 || ro.jobs > 1024) {
				cli_usage_error("%s: expected a number in [1, 1024], got '%s'", argv[i - 1], argv[i]);
				goto out_paths;
			}
		} else if (argv[i][0] == '-' && argv[i][1]) {
			cli_usage_error("unknown option '%s' for 'compare'", argv[i]);
			goto out_paths;
		} else
			paths[n++] = argv[i];
	}
	if (n < 2) {
		cli_usage_error("'compare' needs at least two scenario files");
		goto out_paths;
	}
	struct diag d;
	diag_init(&d, stderr);
	struct cctx c = { .sc = xcalloc((size_t)n, sizeof(*c.sc)), .rows = xcalloc((size_t)n, sizeof(*c.rows)) };
	int bad = 0;
	for (int i = 0; i < n; i++)
		bad += !(c.sc[i] = scenario_load(paths[i], &d));
	rc = EXIT_INPUT;
	if (bad)
		goto out;
	rc = EXIT_FAIL;
	if (runner_run(&ro, n, job, done, &c, &d))
		goto out;
	struct econ_params ep;
	struct goodput_params gp;
	econ_params_init(&ep);
	goodput_params_init(&gp);
	json_t **rec = xcalloc((size_t)n, sizeof(json_t *));
	for (int i = 0; i < n; i++) {
		struct assessment a;
		const struct result_row *r = &c.rows[i];
		if (r->status == RESULT_OK)
			assess_plan(c.sc[i]->in, &r->plan, r->tokens_per_s,
				    r->iteration_s > 0 ? r->mean.compute_s / r->iteration_s : 0, &ep, &gp, &a);
		rec[i] = json_object();
		json_object_set_new(rec[i], "scenario", json_string(c.sc[i]->meta.name));
		tidy_add_row(rec[i], r, c.sc[i]->in, r->status == RESULT_OK ? &a : NULL);
	}
	const char *k;
	json_t *v0;
	int failed = 0;
	json_object_foreach(rec[0], k, v0) {
		bool differ = false, numeric = json_is_number(v0);
		for (int i = 1; i < n; i++)
			differ |= !json_equal(v0, json_object_get(rec[i], k));
		printf("%c %-24s", differ && !numeric ? '*' : ' ', k);
		for (int i = 0; i < n; i++) {
			json_t *v = json_object_get(rec[i], k);
			char buf[64];
			if (json_is_string(v))
				snprintf(buf, sizeof(buf), "%.24s", json_string_value(v));
			else if (json_is_integer(v))
				snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(v));
			else if (json_is_real(v)) {
				double x = json_real_value(v), x0 = json_number_value(v0);
				if (i > 0 && json_is_number(v0) && x0 != 0 && x != x0)
					snprintf(buf, sizeof(buf), "%.4g (%+.1f%%)", x, 100 * (x / x0 - 1));
				else
					snprintf(buf, sizeof(buf), "%.4g", x);
			} else if (json_is_boolean(v))
				snprintf(buf, sizeof(buf), "%s", json_is_true(v) ? "true" : "false");
			else
				snprintf(buf, sizeof(buf), "-");
			printf(" %-26s", buf);
		}
		printf("\n");
	}
	for (int i = 0; i < n; i++) {
		failed += c.rows[i].status != RESULT_OK;
		json_decref(rec[i]);
	}
	free(rec);
	rc = failed ? EXIT_FAIL : EXIT_OK;
out:
	for (int i = 0; i < n; i++)
		scenario_destroy(c.sc[i]);
	free(c.sc);
	free(c.rows);
	diag_finish(&d);
out_paths:
	free(paths);
	return rc;
}
