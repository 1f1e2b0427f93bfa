/* report-private: what the report's outputs share, inside reports/ only.
 *
 * The report is written by output: report_json.c (report.json), with the
 * per-rank rows and rank classes in report_ranks.c; report_csv.c
 * (report.csv and the runs' CSV); report_text.c (the terminal summary);
 * report.c renders the chosen formats and writes the files. */
#ifndef DDLSIM_REPORT_PRIVATE_H
#define DDLSIM_REPORT_PRIVATE_H

#include <jansson.h>
#include <stdio.h>
#include <stddef.h>

#include "assess.h"
#include "band.h"
#include "record.h"
#include "result.h"

#define GB 1e9

/* Rank i's row of breakdown.per_rank (new reference), NULL when jansson
 * cannot build it (a non-finite number). */
json_t *report_rank_json(const struct result *r, int i);

/* breakdown.rank_classes: the ranks whose rows are equal but for the rank,
 * grouped (new reference), NULL if a row cannot be built. */
json_t *report_rank_classes_json(const struct result *r);

/* The style sheet of the HTML pages (report.html, plan.html): inline in
 * each, nothing fetched. */
extern const char report_html_css[];

/* What MFU and HFU count, for a reader who sees one exceed the other. */
#define REPORT_MFU_HFU                                                                         \
	"MFU: model FLOPs, Megatron's and PaLM's count: 6 N + 12 L h s per token, attention "   \
	"counted whole, no recompute; HFU: the FLOPs the kernels execute: a causal mask's "     \
	"skipped half left out, recomputation counted; both over the dense peak. HFU is below " \
	"MFU when the causal half saved outweighs what recompute adds"

/* The memory verdict in words (fits, or by how much the worst stage does
 * not), into buf of n bytes. */
void report_verdict(const struct result *r, char *buf, size_t n);

/* A run's figures with the error band of the validation family its plan
 * is matched to (sim/band.h): each at the family's bias (what the suite
 * says a real run gives when ddlsim errs as it did on the family's
 * published runs: times and cost x (1 + bias), MFU / (1 + bias)), the
 * band's factors on a time (real = predicted x lo .. hi, at BAND_LEVEL)
 * and the GPUs more the bias implies. */
struct report_band {
	struct band_pick p;         /* the match, the interval, extrapolated or not */
	const struct band *b;       /* p.b: the shipped table's row */
	double lo, hi;              /* 1 + p.lo (at least 0.01), 1 + p.hi */
	double iteration_s, mfu, train_days, cost_usd;  /* at the bias */
	long gpus, gpus_more;       /* more: at the bias, whole nodes */
	long gpus_safe;             /* at the band's slow edge, whole nodes (band.h) */
	int per_node;               /* GPUs a node */
};
void report_band(const struct result *r, struct report_band *out);

/* The verdict of a run against the goal its plan was chosen for (the
 * scenario's goal object, `plan --export`; sim/assess.h assess_goal), at
 * the estimate and at the band's slow edge. False (out untouched) when
 * the scenario names no goal. */
bool report_goal(const struct result *r, struct goal_verdict *out);

/* The top links report.json lists (links.top) by default. */
#define REPORT_TOP_LINKS 10

/* A class of links (platform_link_class()): its links' totals. */
struct report_link_class {
	const char *cls;            /* static */
	int links;
	double bytes, bytes_by_cat[CAT_N];
	double busy_s_max, peak_util_max;   /* of its busiest link */
	bool timed;                 /* busy and peak measured (not crossbars) */
};
/* The classes of r's links into *out (owned by the caller: free()), most
 * bytes first; returns their count (0: no link carried anything, *out
 * may still need freeing). */
int report_link_classes(const struct result *r, struct report_link_class **out);
/* Whether a link is a switch's crossbar (a FATPIPE link, its busy time
 * and peak not measured), which the top links and the hottest link leave
 * out. */
bool report_link_crossbar(const struct result_link *l);
/* The hottest link but crossbars into *out: the longest busy, then the
 * highest peak, then the most bytes. false: none. */
bool report_hottest_link(const struct result *r, struct result_link *out);
/* report.json's links section: the classes and the top links by bytes. */
json_t *report_links_json(const struct result *r, int top);

/* HTML pages (html.c): a table row of a label and a printf-formatted
 * value, both escaped; printf into f, escaped. Out of memory ends the run. */
void html_row(FILE *f, const char *label, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void html_escf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
