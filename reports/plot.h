/* plot: the report's pictures as SVG documents (drawn with svg.h).
 *
 *   breakdown  one iteration per pipeline stage as a stacked bar: compute,
 *              exposed communication per dimension (tp, cp, dp, param,
 *              pp), pipeline bubble, idle; seconds, averaged over the
 *              stage's ranks (result_rank(), sim/result.h)
 *   gantt      the pipeline schedule of one iteration as simulated
 *              (gantt.c): a row per stage from the timeline of the rank
 *              that stands for it (sim/timeline.h, result.timeline), its
 *              compute stream (forward, backward, other compute, exposed
 *              collective, exposed pipeline transfer, bubble, idle) over
 *              a strip of its collectives and pipeline transfers in
 *              flight; each pixel column the shares of its time
 *   memory     per-GPU memory anatomy per stage as stacked bars against
 *              the GPU's capacity (dashed line); GB (1e9 bytes)
 *   pareto     sweeps and plans: wall time to train vs cost, one point per
 *              simulated plan coloured by GPU type, the Pareto front (no
 *              other plan both faster and cheaper) joined and ringed, and
 *              a plan goal's deadline and budget as dashed lines
 *              (and a record with "recommended": true ringed in black:
 *              plan.html)
 *   mfu        sweeps and plans: MFU against the number of GPUs (log x),
 *              coloured by GPU type
 *
 * Every plot has axes with units and a legend. The scatters' linear axes
 * (days, cost, MFU) start at zero while their smallest value is at most
 * half their largest, else just below the smallest, so that close plans
 * spread out (plot.c axis_floor). Each function returns the
 * document's text (caller frees), NULL when the stream failed. */
#ifndef DDLSIM_PLOT_H
#define DDLSIM_PLOT_H

#include <jansson.h>

#include "atomic_file.h"
#include "result.h"

char *plot_breakdown_svg(const struct result *r);
char *plot_gantt_svg(const struct result *r);
char *plot_memory_svg(const struct result *r);

/* Sweep and plan plots from tidy records (reports/tidy.h): an array of
 * objects; records whose status is not "ok" (a plan that does not fit
 * in memory is "oom": never plotted, never on the front) or that lack the
 * figures (gpus, mfu, wall_days, cost_usd) are left out and counted in
 * the caption. */
/* A plan goal's limits drawn on the Pareto plot (0: none). */
struct plot_goal {
	double deadline_days, budget_usd;
};

char *plot_pareto_svg(const json_t *records, const char *title, const struct plot_goal *goal);
char *plot_mfu_svg(const json_t *records, const char *title);

/* Render the plots of records and stage DIR/pareto.svg and
 * DIR/mfu-gpus.svg into af[0] and af[1] (util/atomic_file.h), for the
 * caller to publish with its other outputs; goal (NULL: none) draws a
 * plan goal's deadline and budget. Returns 0, or -1 after
 * reporting into d (nothing staged). */
int plot_stage_points(const json_t *records, const char *dir, const char *title,
		      const struct plot_goal *goal, struct atomic_file af[2], struct diag *d);

/* Read the JSON lines at jsonl_path (util/infile.h) and write
 * DIR/pareto.svg and DIR/mfu-gpus.svg, both or neither. Returns 0, or -1
 * after reporting into d. */
int plot_write_points(const char *jsonl_path, const char *dir, const char *title, struct diag *d);

#endif
