/* sweep: a base scenario and axes over any of its keys, expanded into
 * points (a Cartesian product), each a scenario document loaded through
 * the scenario loader (so every present and future scenario key can be
 * swept and is checked the same way).
 *
 * Schema "ddlsim.sweep" 1.0. Paths are relative to the sweep file.
 *
 *   key           type              default     meaning
 *   name          string            file name   display name
 *   description   string            ""
 *   base          string (path)     required    the base scenario file
 *   axes          object            required    scenario key (JSON path with dots:
 *                                               "parallel.tp", "nodes",
 *                                               "cost.usd_per_gpu_hour") -> values:
 *                                               a non-empty list of JSON values, or a
 *                                               range "A..B" (step 1), "A..B step S"
 *                                               (arithmetic), "A..B step xF" (geometric);
 *                                               B is included when reached
 *   derived       object            {}          scenario key -> expression (expr.h),
 *                                               evaluated in order after the axes are
 *                                               set; integral results are written as
 *                                               integers, truth values as booleans
 *                                               ("parallel.sp": "tp > 1"); a result that
 *                                               is not finite is an error
 *   constraints   [string]          []          expressions; a point where one is false, or
 *                                               undefined (a division by zero), is recorded
 *                                               as invalid with the constraint; `ddlsim sweep`
 *                                               refuses one undefined at every point (exit 3)
 *   economics     object            see economics.h
 *   goodput       object            see goodput.h
 *   output.dir    string (path)     "out/<name>" where points.csv / points.jsonl go (relative
 *                                               to the working directory, unlike base)
 *
 * Variables in expressions: every number or boolean in the point's
 * document by its dotted path ("parallel.tp") and by its last name when
 * that is unique ("tp"); tp, pp, interleave, micro_batch default to 1 and
 * zero to 0 when absent; nodes; gpus_per_node (from the point's topology);
 * gpus = nodes x gpus_per_node; dp = the document's, else gpus / (tp pp).
 *
 * Points are numbered 0..N-1 in row-major order: the last axis varies
 * fastest. Shard k of n (0-based) holds the points with i mod n = k. */
#ifndef DDLSIM_SWEEP_H
#define DDLSIM_SWEEP_H

#include <jansson.h>
#include <stdbool.h>

#include "diag.h"
#include "economics.h"
#include "goodput.h"

#define SWEEP_MAX_POINTS 10000000L
/* A range's values are counted before it is expanded: at most this many,
 * its ends and step finite and of magnitude at most SWEEP_RANGE_MAX_ABS
 * (integers are exact in a double up to 2^53). */
#define SWEEP_RANGE_MAX_VALUES 100000
#define SWEEP_RANGE_MAX_ABS 1e15

struct sweep_axis {
	char *key;                  /* dotted scenario path */
	json_t *values;             /* array, owned */
};

struct sweep_derived {
	char *key, *expr;
};

struct sweep {
	char *path, *name, *description;
	char base_path[1024];
	json_t *base;               /* the base scenario's document, owned */
	struct sweep_axis *axes;
	int naxes;
	struct sweep_derived *derived;
	int nderived;
	char **constraints;
	int nconstraints;
	char out_dir[1024];
	struct econ_params econ;
	struct goodput_params goodput;
	long npoints;
	/* gpus per node of each topology the points name (read on first use) */
	char **gpn_path;
	int *gpn, ngpn;
};

/* Load and check a sweep file and its base scenario's JSON. Returns a new
 * sweep (sweep_destroy()) or NULL after reporting every problem into d. */
struct sweep *sweep_load(const char *path, struct diag *d);
void sweep_destroy(struct sweep *s);

/* Point i's scenario document (a new reference) with the axes and derived
 * values set, or NULL with why in reason (a constraint that is false, an
 * expression that failed). *values gets a new object of the point's axis
 * and derived values (key -> value) for the record, also on failure. */
json_t *sweep_point(struct sweep *s, long i, json_t **values, char *reason, size_t n);

/* sweep_point(), and on failure *every says whether the reason holds for
 * every point whatever its values (a path an axis or a derived key cannot
 * be set at, an expression naming an unknown variable or function, a
 * syntax error): a fault of the sweep file, not of the point. A false
 * constraint, a division by zero or a result that is not finite depend
 * on the point. */
json_t *sweep_point_why(struct sweep *s, long i, json_t **values, char *reason, size_t n, bool *every);

/* The bytes of the JSON path sweep_point_undefined() names. */
#define SWEEP_WHERE 300

/* Whether an expression of point i cannot be evaluated at the point's
 * values (a division by zero, a remainder by zero, a result that is not
 * finite: undefined there, not a fault of the sweep's text); then where
 * (SWEEP_WHERE bytes) gets its JSON path in the sweep file
 * ("/constraints/0", "/derived/training.global_batch") and reason what
 * happened, with the expression. */
bool sweep_point_undefined(struct sweep *s, long i, char *where, char *reason, size_t n);

/* Check one point's document: 0, or -1 with why (a line) in reason. */
typedef int (*sweep_point_fn)(void *ctx, json_t *doc, char *reason, size_t n);

/* Evaluate the derived values and constraints of every point (what
 * `ddlsim validate` does): the first point whose expression cannot be
 * evaluated (an unknown variable, a division by zero, a result that is not
 * a finite number) is an error naming the point, its values and the
 * expression; so is a sweep none of whose points is valid (constraints,
 * and fn, when not NULL, on each point's document). Returns 0 or -1
 * (reported into d). */
int sweep_check_points(struct sweep *s, struct diag *d, sweep_point_fn fn, void *ctx);

/* Parse a range string ("16..512 step x2") into a new array; NULL with
 * why in err if it is not a range. */
json_t *sweep_range(const char *text, char *err, size_t n);

#endif
