/* plan-private: what cmd_plan.c and plan_output.c share: a simulated
 * finalist, the search's state, the command's options, and the output
 * half's functions (plan_output.c). */
#ifndef DDLSIM_PLAN_PRIVATE_H
#define DDLSIM_PLAN_PRIVATE_H

#include <jansson.h>
#include <stdbool.h>

#include "assess.h"
#include "band.h"
#include "diag.h"
#include "options.h"
#include "plan_export.h"
#include "progress.h"
#include "result.h"
#include "runner.h"
#include "search.h"
#include "study.h"

struct fin {
	struct candidate c;
	struct result_row row;
	struct assessment a;
	bool ok;
	bool core;                  /* one of the plans the fewest GPUs come from, --top or
				     * not: the screen's best SEARCH_PER_COUNT of its node
				     * count, or a carried family (carry()) */
	struct study_point pt;      /* the plan as the analysis sees it */
	char admit[256];            /* why it is not run (estimated over --mem-limit); "" runs */
};

struct pctx {
	struct goal *g;
	struct fin *f;
	size_t cap;
	int n, done;
	int base;               /* the first finalist of the runner's current batch */
	bool quiet, show_rejected;
	struct progress *pg;
	double mem_limit_bytes;  /* a finalist estimated above it fails, not run */
	bool mem_limit_given;
	int carried, carry_reused;  /* plans the carry simulated, and found simulated */
};

struct plan_opts {
	const char *file, *out;
	unsigned formats;               /* PLAN_FORMAT_* bits of --format, 0: not given */
	int top;
	bool screen_only, quiet, show_rejected;
	struct opt_list exports;        /* --export values as given */
	long export_rank[PLAN_MAX_EXPORTS];  /* their ranks, in order, each once */
	int nexport;
	struct runner_opts ro;
	char *command;                  /* the command line, for plan.html (owned) */
	long long date_s;               /* when, for plan.html: SOURCE_DATE_EPOCH or now */
};

/* --format html's bit (the first three formats are always written). */
#define PLAN_FORMAT_HTML (1u << 3)

static inline const char *plan_gpu_of(const struct goal *g, int ci)
{
	return inputs_topology(g->clusters[ci].in)->gpu.name;
}

static inline long plan_gpus_of(const struct goal *g, const struct fin *f)
{
	return plan_gpus(&f->c.plan, g->clusters[f->c.cluster].in);
}

static inline struct band_pick plan_band_of(const struct goal *g, const struct fin *f)
{
	struct band_pick p;
	band_choose(g->clusters[f->c.cluster].in, &f->c.plan, &p);
	return p;
}

/* Each finalist's analysis point (sim/study.h), from its row. */
void plan_fill_points(struct pctx *p);
/* The output files of o, in order: plan_out_names[0 .. plan_outputs_of(o)). */
extern const char *const plan_out_names[5];
int plan_outputs_of(const struct plan_opts *o);
/* Write the outputs into dir, published together; false after reporting. */
bool plan_write_outputs(const struct pctx *p, const struct plan_opts *o, const char *dir, struct diag *d);
/* Write the plans --export names as scenarios into dir (plan_export.h):
 * 0, EXIT_USAGE or EXIT_FAIL, after saying why. */
int plan_export_plans(const struct pctx *p, const struct plan_opts *o, const char *dir, struct diag *d);
/* The summaries on stdout; plan_print_safe first. */
void plan_print_safe(const struct pctx *p);
void plan_print_options(const struct pctx *p);
void plan_print_best(const struct pctx *p);
void plan_print_rejected(const struct pctx *p);
void plan_print_front(const struct pctx *p);
/* argv as one shell-quoted line (malloc'd), and the page's date
 * (SOURCE_DATE_EPOCH or now), for plan.html. */
char *plan_command_line(int argc, char **argv);
long long plan_page_date(void);

#endif
