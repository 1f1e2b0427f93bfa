/* report: JSON and CSV capacity-planning reports and the terminal summary.
 *
 * report.json (schema "ddlsim.report" 1.1) holds everything: the resolved
 * scenario, throughput, FLOP rates, per-rank breakdown, communication
 * volumes, memory anatomy per stage with the fit verdict, cost-model
 * provenance and time/cost to train. report.csv is one header and one row
 * of the headline numbers, so that runs and sweeps concatenate. Both are
 * written atomically: to a temporary file in the same directory, flushed,
 * then renamed, so a failed run never leaves a partial report.
 * One file per output: report_json.c, report_csv.c, report_text.c (the
 * summary), report.c (the files); report-private.h holds what they
 * share. */
#ifndef DDLSIM_REPORT_H
#define DDLSIM_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "atomic_file.h"
#include "diag.h"
#include "result.h"

/* The report as JSON (new reference), with a row per rank in
 * breakdown.per_rank if per_rank (else that list is empty; the rank
 * classes are always there), or NULL when a section cannot be
 * serialised (a non-finite number, a string that is not UTF-8): then
 * *bad_section (if not NULL) names it. Never a report with a section
 * missing. */
json_t *report_to_json(const struct result *r, bool per_rank, const char **bad_section);

/* The report files, as bits of report_write()'s formats. */
enum report_format {
	REPORT_JSON = 1 << 0,       /* report.json */
	REPORT_CSV = 1 << 1,        /* report.csv */
	REPORT_SVG = 1 << 2,        /* breakdown.svg, schedule.svg, memory.svg (plot.h) */
	REPORT_HTML = 1 << 3,       /* report.html (html.h) */
	REPORT_KINETO = 1 << 4,     /* kineto.pt.trace.json: the per-kernel table as a PyTorch
				     * profiler trace (report_kineto.c) */
	REPORT_PER_RANK = 1 << 5,   /* not a file: report.json's breakdown.per_rank
				     * has a row per rank (else it is empty and
				     * breakdown.rank_classes alone describes them) */
};
/* The formats' names in bit order ("json", "csv", "svg", "html", "kineto"). */
extern const char *const report_format_names[5];

/* The per-kernel table (cost_model.ops_per_microbatch) as a PyTorch
 * profiler trace that `ddlsim calib-trace` reads (report_kineto.c); a new
 * string, NULL if it cannot be built. */
char *report_kineto_render(const struct result *r);

/* Write the files of formats (enum report_format bits) to DIR (creating
 * it), with also (a staged file such as the trace; NULL or zeroed: none):
 * all published together or none (util/atomic_file.h). Everything is
 * rendered and staged before the first file is replaced, so a failure
 * (a full disk, a FIFO where report.json goes) leaves the earlier run's
 * files as they were. also is consumed either way. Returns 0 or -1 after
 * reporting. */
int report_write(const struct result *r, const char *dir, unsigned formats, struct atomic_file *also,
		 struct diag *d);

/* The names of the files formats write into dir, for checking them
 * before a run (cli_check_output): fills names[] with up to 7 paths
 * (caller frees each) and returns their count. */
int report_paths(const char *dir, unsigned formats, char *names[7]);

/* The CSV header and row (the columns of report.csv). */
int report_write_csv_stream(const struct result *r, FILE *f, bool header);

/* The same columns from a runner's fixed-size row (a failed row has empty
 * figures, its status and the error): the header, then one row of the
 * scenario named name on inputs in. Return 0 or -1 on a stream error. */
int report_csv_header(FILE *f);
int report_csv_row(FILE *f, const struct result_row *row, const char *name, const struct inputs *in);

/* Human-readable summary table. */
void report_print_summary(const struct result *r, FILE *f);

/* Write data atomically to path (temp file + fsync + rename). */
int report_write_atomic(const char *path, const char *data, size_t len, struct diag *d);

/* mkdir -p. Returns 0 or -1 with errno. */
int report_mkdirs(const char *dir);

#endif
