/* report_ranks: report.json's per-rank rows and the rank classes that
 * group equal rows (see report-private.h). A class is found by the row's
 * figures (every one but the rank and whom it was simulated as), so that
 * 98,304 ranks print as a few classes with their counts and ranges. */
#include "report-private.h"

#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

static json_t *num(double x)
{
	return json_real(x);
}

json_t *report_rank_json(const struct result *r, int i)
{
	const struct result_rank rk = result_rank(r, i), *st = &rk;
	struct result_split x = result_rank_split(r, i);
	double compute = x.compute_s, exposed = x.exposed_s, idle = x.idle_s;
	const struct mem_anatomy *mem = &r->stage[st->stage].mem;
	json_t *o = json_pack("{s:i, s:i, s:b, s:f, s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:i, s:i, s:i}",
			 "rank", i, "stage", st->stage, "fits", mem->fits,
			 "mem_total_GB", mem->total_bytes / GB, "simulated_as", st->simulated_as,
			 "compute_s", compute, "exposed_comm_s", exposed, "bubble_s", st->bubble_s,
			 "idle_s", idle, "forward_s", st->compute_s[CAT_FORWARD],
			 "backward_s", st->compute_s[CAT_BACKWARD],
			 "recompute_s", st->compute_s[CAT_RECOMPUTE],
			 "optimizer_s", st->compute_s[CAT_OPTIMIZER],
			 "exposed_tp_comm_s", st->exposed_s[CAT_TP_COMM],
			 "exposed_dp_comm_s", st->exposed_s[CAT_DP_COMM],
			 "exposed_param_comm_s", st->exposed_s[CAT_PARAM_COMM],
			 "exposed_pp_comm_s", st->exposed_s[CAT_PP_COMM],
			 "tp_comm_s", st->comm_s[CAT_TP_COMM], "dp_comm_s", st->comm_s[CAT_DP_COMM],
			 "param_comm_s", st->comm_s[CAT_PARAM_COMM], "finish_s", st->finish_s,
			 "tp_collectives", st->collectives[CAT_TP_COMM],
			 "dp_collectives", st->collectives[CAT_DP_COMM],
			 "param_collectives", st->collectives[CAT_PARAM_COMM]);
	if (o)  /* compute time added by concurrent communication (engine/engine.h), in compute_s */
		json_object_set_new(o, "interference_s", num(st->interference_s));
	if (o && r->plan.parallel.ep > 1) {
		json_object_set_new(o, "exposed_ep_comm_s", num(st->exposed_s[CAT_EP_COMM]));
		json_object_set_new(o, "ep_comm_s", num(st->comm_s[CAT_EP_COMM]));
		json_object_set_new(o, "ep_collectives", json_integer(st->collectives[CAT_EP_COMM]));
	}
	if (o && r->plan.parallel.cp > 1) {
		json_object_set_new(o, "exposed_cp_comm_s", num(st->exposed_s[CAT_CP_COMM]));
		json_object_set_new(o, "cp_comm_s", num(st->comm_s[CAT_CP_COMM]));
		json_object_set_new(o, "cp_collectives", json_integer(st->collectives[CAT_CP_COMM]));
	}
	return o;
}

/* Append "a" or "a-b" (a run of consecutive ranks) to a comma-separated
 * list in *buf (grown as needed). */
static void range_add(char **buf, size_t *len, size_t *cap, int a, int b)
{
	char tmp[32];
	int n = a == b ? snprintf(tmp, sizeof(tmp), "%s%d", *len ? "," : "", a)
		       : snprintf(tmp, sizeof(tmp), "%s%d-%d", *len ? "," : "", a, b);
	XGROW(*buf, *cap, *len + (size_t)n + 1);
	memcpy(*buf + *len, tmp, (size_t)n + 1);
	*len += (size_t)n;
}

struct rank_class {
	char *key;              /* the row without its rank, compact JSON */
	json_t *row;            /* the first rank's row (owned) */
	int count, first, last; /* ranks in it; the first and last added */
	char *ranges;           /* "0-7,64-71" */
	size_t len, cap;
	int run0;               /* start of the open run of ranges */
	struct result_rank fig; /* the first rank's figures */
};

/* Whether n numbers are the same, bit for bit (0 and -0 print apart). */
static bool same(const double *a, const double *b, int n)
{
	return memcmp(a, b, (size_t)n * sizeof(*a)) == 0;
}

/* Whether two ranks have the same figures in report_rank_json() but their
 * rank and whom they were simulated as: every figure there is one of
 * these, read field by field, or derived from them, the stage (its
 * memory) and the job's iteration time. Equal figures give equal rows;
 * unequal ones have their row built and compared. */
static bool same_figures(const struct result_rank *a, const struct result_rank *b)
{
	return a->stage == b->stage && same(&a->finish_s, &b->finish_s, 1) &&
	       same(a->compute_s, b->compute_s, CAT_N) && same(a->comm_s, b->comm_s, CAT_N) &&
	       same(a->exposed_s, b->exposed_s, CAT_N) && same(&a->bubble_s, &b->bubble_s, 1) &&
	       same(&a->interference_s, &b->interference_s, 1) &&
	       !memcmp(a->collectives, b->collectives, sizeof(a->collectives));
}

/* The distinct rank classes: ranks whose rows (every figure of
 * rank_json() but the rank itself and whom it was simulated as) are equal,
 * in order of their first rank, each with how many ranks and which (as
 * ranges). Always written, at any size: it is what the per-rank table
 * says, without a row per rank. NULL if a row cannot be built. */
json_t *report_rank_classes_json(const struct result *r)
{
	int n = result_nranks(r), nc = 0;
	size_t cap = 0, hcap = 64;
	while (hcap < 2 * (size_t)n + 2)
		hcap *= 2;
	struct rank_class *c = NULL;
	int *hash = xreallocarray(NULL, hcap, sizeof(*hash)); /* class index + 1, 0 free */
	memset(hash, 0, hcap * sizeof(*hash));
	/* the class the last rank simulated as r went to (-1: none yet): a
	 * folded rank whose figures equal that class's first rank joins it
	 * without its row being built and printed (98,304 ranks: 1.5 s) */
	int *rep_class = xreallocarray(NULL, (size_t)n, sizeof(*rep_class));
	for (int i = 0; i < n; i++)
		rep_class[i] = -1;
	json_t *out = NULL;
	for (int i = 0; i < n; i++) {
		const struct result_rank st = result_rank(r, i);
		int rep = st.simulated_as >= 0 && st.simulated_as < n ? st.simulated_as : i;
		int k = rep_class[rep];
		if (k < 0 || !same_figures(&c[k].fig, &st)) {
			json_t *row = report_rank_json(r, i);
			if (!row)
				goto fail;
			json_object_del(row, "rank");
			json_object_del(row, "simulated_as");
			char *key = json_dumps(row, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
			if (!key) {
				json_decref(row);
				goto fail;
			}
			unsigned long h = 5381;
			for (const char *q = key; *q; q++)
				h = h * 33 + (unsigned char)*q;
			size_t j = h & (hcap - 1);
			while (hash[j] && strcmp(c[hash[j] - 1].key, key))
				j = (j + 1) & (hcap - 1);
			if (!hash[j]) {
				XGROW(c, cap, (size_t)nc + 1);
				c[nc] = (struct rank_class){ .key = key, .row = row, .count = 1,
							     .first = i, .last = i, .run0 = i, .fig = st };
				hash[j] = ++nc;
				rep_class[rep] = nc - 1;
				continue;
			}
			k = hash[j] - 1;
			rep_class[rep] = k;
			free(key);
			json_decref(row);
		}
		if (i != c[k].last + 1) {
			range_add(&c[k].ranges, &c[k].len, &c[k].cap, c[k].run0, c[k].last);
			c[k].run0 = i;
		}
		c[k].last = i;
		c[k].count++;
	}
	out = json_array();
	for (int k = 0; k < nc; k++) {
		range_add(&c[k].ranges, &c[k].len, &c[k].cap, c[k].run0, c[k].last);
		json_t *o = json_pack("{s:i, s:s, s:i, s:O}", "count", c[k].count, "ranks", c[k].ranges,
				      "first_rank", (int)strtol(c[k].ranges, NULL, 10), "figures", c[k].row);
		if (!o || json_array_append_new(out, o)) {
			json_decref(out);
			out = NULL;
			break;
		}
	}
fail:
	for (int k = 0; k < nc; k++) {
		free(c[k].key);
		free(c[k].ranges);
		json_decref(c[k].row);
	}
	free(c);
	free(hash);
	free(rep_class);
	return out;
}
