/* plan_html: plan.html, the decision page of `ddlsim plan --format html`.
 *
 * One self-contained page for a manager, like report.html (html.h):
 * inline CSS and SVG, no script, font, image or style sheet from
 * anywhere else, so it opens offline and can be mailed. Sections, each a
 * <section> with a fixed id the tests look for:
 *   goal        the goal as its file states it: model, tokens, sequence
 *               length, deadline, budget, batch range, the cluster options
 *               (GPU type, topology, node counts, price)
 *   verdict     per GPU type (sim/study.h, study_fewest_gpus): the fewest
 *               GPUs that meet the goal, and the safe count (id safe-N):
 *               the GPUs that meet the same time at the error band's slow
 *               edge (band_safe_gpus, sim/band.h), with days, cost and
 *               energy, each with its band, and what limits it (the plans
 *               of that type on fewer GPUs: late, over budget, not fitting
 *               in GPU memory, failed); or why no plan of the type meets it
 *   pareto      the time-cost chart (plot_pareto_svg): every plan that fits
 *               a point, the Pareto front joined, the recommended plan
 *               ringed in black
 *   plans       the best ranked plans of each cluster option (at most
 *               PLAN_HTML_PER_OPTION, and the recommended one) with their
 *               parallel layout; a rank that --export wrote links to its
 *               scenario plan-N.json, no other has a link
 *   provenance  the command line, ddlsim's version, the date (UTC,
 *               ISO 8601), the files beside the page
 * A range is in one unit ("$9.8 M – $11.4 M", human_range(), util/human.h)
 * and every count and amount goes through human_number(). A one-line
 * inline script sets data-rendered="ok" on <body> (any script error sets
 * data-errors), so a headless browser's DOM dump shows the page ran. */
#ifndef DDLSIM_PLAN_HTML_H
#define DDLSIM_PLAN_HTML_H

#include <jansson.h>
#include <stdbool.h>

#include "assess.h"
#include "result.h"
#include "search.h"

#define PLAN_HTML_PER_OPTION 10

/* One simulated plan of the study, everything borrowed. */
struct plan_html_plan {
	int option;                     /* its cluster option: an index into goal->clusters */
	const struct plan *plan;
	const struct result_row *row;   /* the engine's row */
	const struct assessment *a;     /* time, cost, energy to train; NULL when it failed */
	long gpus;
	long rank;                      /* plans.csv's rank; 0: not ranked (failed, or does not fit) */
	bool exported;                  /* --export wrote plan-<rank>.json beside the page */
	bool extra;                     /* study_point's: never the verdict's plan */
};

/* The page's inputs, everything borrowed. */
struct plan_html {
	const struct goal *goal;
	const char *goal_file;          /* as given on the command line */
	const struct plan_html_plan *plans;  /* in plans.csv's order: the ranked first, by rank */
	int nplans;
	const json_t *records;          /* plans.jsonl's records, index-aligned with plans: the chart's */
	int recommended;                /* index into plans of the recommended plan, -1: none */
	const char *command;            /* the command line as run */
	const char *version;            /* ddlsim's */
	long long date_s;               /* when, in seconds since the epoch (UTC) */
};

/* The page for p (caller frees), NULL when the chart or the stream
 * failed. */
char *plan_html_render(const struct plan_html *p);

#endif
