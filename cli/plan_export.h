/* plan_export: `ddlsim plan --export N[,N...]`: ranked plans written as
 * runnable scenarios (sim/scenario_write.h), DIR/plan-N.json. */
#ifndef DDLSIM_PLAN_EXPORT_H
#define DDLSIM_PLAN_EXPORT_H

#include "diag.h"
#include "inputs.h"
#include "options.h"
#include "plan.h"
#include "search.h"

#define PLAN_MAX_EXPORTS 64

/* --export's values as given ("3", "1,2") into ranks[0 .. *n), each rank
 * once. Returns 0, or EXIT_USAGE after saying what is wrong. */
int plan_export_parse(const struct opt_list *l, long ranks[PLAN_MAX_EXPORTS], int *n);

/* A ranked plan as the export reads it (borrowed). */
struct plan_export_row {
	const struct plan *plan;
	const struct inputs *in;    /* its cluster's */
	const char *cluster;        /* the goal's name for that cluster */
	const struct econ_params *econ;   /* that cluster's economics */
	long gpus;
};

/* Write ranks[0 .. n) of the ranked rows[0 .. ranked) (plans.csv's ranks,
 * 1-based) as DIR/plan-N.json, each with the goal object (sim/scenario.h
 * "goal": g's name, deadline, budget and goodput, the row's cluster and
 * its economics, goal_file relative to the scenario) that makes `ddlsim
 * run` give the goal's verdict; `simulated` plans in all, the ones beyond
 * `ranked` unranked (they did not fit or failed). A rank beyond them
 * writes nothing. Returns 0, EXIT_USAGE (a rank beyond the ranked plans)
 * or EXIT_FAIL (a file not written), after saying why. */
int plan_export_write(const struct goal *g, const char *goal_file, const struct plan_export_row *rows,
		      int ranked, int simulated, const long *ranks, int n, const char *dir, struct diag *d);

#endif
