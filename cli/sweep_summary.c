/* sweep_summary: the closing summary of `ddlsim sweep` (sweep_summary.h),
 * read back from the sweep's JSON lines one record at a time: the
 * invalid points by reason, the best point that fits, the points that do
 * not fit in GPU memory. */
#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "human.h"
#include "reasons.h"
#include "sweep_summary.h"

/* A record's axis values ("k=v, ..."): its keys between "sweep" and
 * "model" (emit() writes them there). */
static void axes_text(const json_t *rec, char *buf, size_t n)
{
	const char *k;
	json_t *v;
	bool in = false;
	size_t len = 0;
	buf[0] = 0;
	json_object_foreach((json_t *)rec, k, v) {
		if (!strcmp(k, "model"))
			break;
		if (in && len < n) {
			char *val = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(6));
			len += (size_t)snprintf(buf + len, n - len, "%s%s=%s", len ? ", " : "", k, val ? val : "?");
			free(val);
		}
		in |= !strcmp(k, "sweep");
	}
}

static double rec_num(const json_t *rec, const char *k)
{
	const json_t *v = json_object_get(rec, k);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The invalid points by reason, most common first: the first 3, or with
 * all every reason and an example point. */
static void print_invalid(struct reasons *why, bool all)
{
	int ng = reasons_groups(why);
	if (ng)
		printf("invalid points by reason:\n");
	for (int i = 0; i < ng && (all || i < 3); i++) {
		const struct reason *r = reasons_get(why, i);
		printf("  %ld invalid: %s\n", r->count, r->msg);
		if (all && r->example[0])
			printf("      e.g. %s\n", r->example);
	}
	if (!all && ng > 3)
		printf("  (%d more reasons: --show-rejected lists each with an example point)\n", ng - 3);
}

/* The sort key of a record that simulated: its days to train, else its
 * iteration time. */
static double best_key(const json_t *o)
{
	return isfinite(rec_num(o, "wall_days")) ? rec_num(o, "wall_days") : rec_num(o, "iteration_time_s");
}

/* The points that do not fit in GPU memory, from the JSON lines f (read
 * again from the start). */
static void print_rejected(FILE *f, long noom)
{
	printf("rejected: %ld point%s that do%s not fit in GPU memory\n", noom, noom == 1 ? "" : "s", noom == 1 ? "es" : "");
	rewind(f);
	char *line = NULL, ax[512];
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0) {
		json_t *o = json_loads(line, 0, NULL);
		const char *st = json_string_value(json_object_get(o, "status"));
		if (st && !strcmp(st, "oom")) {
			axes_text(o, ax, sizeof(ax));
			printf("  point %lld (%s): needs %.1f GB of %.1f GB, %.1f GB missing\n",
			       (long long)json_integer_value(json_object_get(o, "point")), ax, rec_num(o, "mem_peak_GB"),
			       rec_num(o, "mem_capacity_GB"), rec_num(o, "mem_short_GB"));
		}
		json_decref(o);
	}
	free(line);
}

void sweep_summary_print(const char *jsonl_path, bool show_rejected)
{
	FILE *f = fopen(jsonl_path, "r");
	if (!f)
		return;
	json_t *best = NULL;
	char *line = NULL;
	size_t cap = 0;
	long noom = 0;
	struct reasons *why = reasons_create();
	char ax[512];
	while (getline(&line, &cap, f) > 0) {
		json_t *o = json_loads(line, 0, NULL);
		if (!o)
			continue;
		const char *st = json_string_value(json_object_get(o, "status"));
		noom += st && !strcmp(st, "oom");
		if (st && !strcmp(st, "invalid") && json_is_string(json_object_get(o, "error"))) {
			axes_text(o, ax, sizeof(ax));
			reasons_add(why, json_string_value(json_object_get(o, "error")), ax);
		}
		if (st && !strcmp(st, "ok") && (!best || best_key(o) < best_key(best))) {
			json_decref(best);
			best = json_incref(o);
		}
		json_decref(o);
	}
	free(line);
	print_invalid(why, show_rejected);
	reasons_destroy(why);
	if (best) {
		axes_text(best, ax, sizeof(ax));
		char days[32], usd[32];
		printf("best point that fits: point %lld (%s): %s d to train, $%s, MFU %.1f%%, %.1f of %.1f GB\n",
		       (long long)json_integer_value(json_object_get(best, "point")), ax,
		       human_number(rec_num(best, "wall_days"), days, sizeof(days)),
		       human_number(rec_num(best, "cost_usd"), usd, sizeof(usd)), 100 * rec_num(best, "mfu"),
		       rec_num(best, "mem_peak_GB"), rec_num(best, "mem_capacity_GB"));
	} else
		printf("best point that fits: none of the points simulated and fits in GPU memory\n");
	json_decref(best);
	if (noom && !show_rejected)
		printf("%ld point%s that do%s not fit in GPU memory (status oom) left out; --show-rejected lists them\n",
		       noom, noom > 1 ? "s" : "", noom > 1 ? "" : "es");
	if (show_rejected)
		print_rejected(f, noom);
	fclose(f);
}

