/* plan_export: ranked plans as runnable scenarios (see plan_export.h). */
#include "plan_export.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"
#include "scenario_write.h"
#include "xalloc.h"

int plan_export_parse(const struct opt_list *l, long ranks[PLAN_MAX_EXPORTS], int *n)
{
	for (int i = 0; i < l->n; i++) {
		const char *s = l->v[i];
		while (1) {
			char *end;
			errno = 0;
			long r = strtol(s, &end, 10);
			if (end == s || (*end && *end != ',') || errno || r < 1 || r > 1000000)
				return cli_usage_error("--export: expected ranks >= 1 separated by commas (plans.csv's "
						       "rank), got '%s'", l->v[i]);
			bool seen = false;
			for (int k = 0; k < *n; k++)
				seen |= ranks[k] == r;
			if (!seen && *n == PLAN_MAX_EXPORTS)
				return cli_usage_error("--export: at most %d plans, got more", PLAN_MAX_EXPORTS);
			if (!seen)
				ranks[(*n)++] = r;
			if (!*end)
				break;
			s = end + 1;
		}
	}
	return 0;
}

int plan_export_write(const struct goal *g, const char *goal_file, const struct plan_export_row *rows,
		      int ranked, int simulated, const long *ranks, int n, const char *dir, struct diag *d)
{
	int rc = 0;
	for (int i = 0; i < n; i++) {
		if (ranks[i] <= ranked)
			continue;
		char unranked[160] = "";
		if (simulated > ranked)
			snprintf(unranked, sizeof(unranked), "; the other %d simulated plan%s no rank (%s not fit in "
				 "GPU memory or failed)", simulated - ranked, simulated - ranked == 1 ? " has" : "s have",
				 simulated - ranked == 1 ? "it does" : "they do");
		rc = cli_usage_error("--export %ld: beyond the %d ranked plan%s%s", ranks[i], ranked,
				     ranked == 1 ? "" : "s", unranked);
	}
	if (rc)
		return rc;
	for (int i = 0; i < n; i++) {
		long r = ranks[i];
		const struct plan_export_row *row = &rows[r - 1];
		char pt[160];
		plan_describe(row->plan, pt, sizeof(pt));
		char *path = xasprintf("%s/plan-%ld.json", dir, r);
		char *name = xasprintf("%s-plan-%ld", g->name, r);
		char *desc = xasprintf("rank %ld of `ddlsim plan %s` on %s: %ld GPUs, %s", r, goal_file, row->cluster,
				       row->gpus, pt);
		char *rel = scenario_path_from(path, goal_file);
		struct scenario_goal sg = {
			.set = true, .name = g->name, .file = rel ? rel : (char *)goal_file,
			.cluster = (char *)row->cluster, .deadline_s = g->deadline_s, .budget_usd = g->budget_usd,
			.econ = *row->econ, .goodput = g->goodput,
		};
		struct scenario_write_meta m = { .name = name, .description = desc, .goal = &sg };
		if (scenario_write_file(row->plan, row->in, &m, path, d))
			rc = EXIT_FAIL;
		else
			printf("rank %ld exported to %s (ddlsim run %s)\n", r, path, path);
		free(rel);
		free(desc);
		free(name);
		free(path);
	}
	return rc;
}
