/* scenario_simulation: the lists of the scenario file's simulation object
 * (plan.h's struct plan_simulation): stragglers, with their empirical
 * samples inline or from a CSV file (read through util/csvfile.h),
 * throttling windows and degraded links. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario-private.h"
#include "scenario.h"
#include "csvfile.h"
#include "infile.h"

static void load_samples(struct jobj *jo, struct plan_stragglers *st, struct plan_straggler_group *g);

/* A rank or node id at path/i that is not an integer in [0, PLAN_MAX_GPUS). */
static void id_error(struct jobj *jo, const char *path, size_t i, const char *what, const json_t *v)
{
	if (json_is_integer(v))
		diag_err(jo->d, jo->file, path, "/%zu: expected a %s in [0, %ld), got %lld", i, what, PLAN_MAX_GPUS,
			 (long long)json_integer_value(v));
	else
		diag_err(jo->d, jo->file, path, "/%zu: expected a %s, an integer, got %s", i, what,
			 jload_type_name(v));
}

/* One group of simulation.stragglers at jo (its path in jo.path), into
 * the next free group of s; the group counts even with errors (they are
 * reported, and the load fails). */
static void load_group(struct jobj *jo, struct plan *s)
{
	struct plan_stragglers *st = &s->simulation.stragglers;
	struct plan_straggler_group *g = &st->group[st->ngroups++];
	json_t *arr, *v;
	char ap[300];
	size_t i;
	int e;

	memset(g, 0, sizeof(*g));
	g->slowdown = 1;
	g->seed = 1;
	g->first_rank = st->nrank;
	g->first_sample = st->nsample;
	if (jobj_array(jo, "ranks", &arr, ap, sizeof(ap), 0) == 1) {
		if (st->nrank + json_array_size(arr) > PLAN_MAX_STRAGGLERS)
			diag_err(jo->d, jo->file, ap, "at most %d ranks%s, got %zu", PLAN_MAX_STRAGGLERS,
				 st->listed ? " over all groups" : "", st->nrank + json_array_size(arr));
		else
			json_array_foreach(arr, i, v) {
				if (!json_is_integer(v) || json_integer_value(v) < 0 ||
				    json_integer_value(v) >= PLAN_MAX_GPUS) {
					id_error(jo, ap, i, "rank", v);
					continue;
				}
				st->rank[st->nrank++] = (int)json_integer_value(v);
				g->nranks++;
			}
	}
	if (jobj_num(jo, "fraction", &g->fraction, JPOS) == 1 && g->fraction > 1) {
		jobj_err(jo, "fraction", "expected a fraction of the ranks in (0, 1], got %g", g->fraction);
		g->fraction = 0;
	}
	if (g->nranks > 0 && g->fraction > 0)
		diag_err(jo->d, jo->file, jo->path, "give ranks or fraction, not both");
	if (g->nranks == 0 && !(g->fraction > 0))
		diag_err(jo->d, jo->file, jo->path, "names no rank: give ranks or fraction");
	jobj_num(jo, "slowdown", &g->slowdown, JPOS);
	e = STRAG_FIXED;
	jobj_enum(jo, "distribution", plan_straggler_dist_names, &e, 0);
	g->dist = e;
	jobj_num(jo, "sigma", &g->sigma, JNONNEG);
	load_samples(jo, st, g);
	long seed = 1;
	if (jobj_int(jo, "seed", &seed, 0, 0) == 1)
		g->seed = (unsigned)seed;
	jobj_end(jo);
}

/* simulation.stragglers (plan.h): one group (an object) or a list of
 * 1 to PLAN_MAX_STRAGGLER_GROUPS of them. */
void scenario_load_stragglers(struct jobj *sim, struct plan *s)
{
	struct jobj jo;
	json_t *arr, *v;
	char ap[300];
	size_t i;

	if (jobj_has(sim, "stragglers"))  /* the file's groups replace any before them */
		memset(&s->simulation.stragglers, 0, sizeof(s->simulation.stragglers));
	if (!json_is_array(json_object_get(sim->o, "stragglers"))) {
		if (jobj_child(sim, "stragglers", &jo, 0) == 1)
			load_group(&jo, s);
		return;
	}
	if (jobj_array(sim, "stragglers", &arr, ap, sizeof(ap), 0) != 1)
		return;
	if (json_array_size(arr) == 0 || json_array_size(arr) > PLAN_MAX_STRAGGLER_GROUPS) {
		diag_err(sim->d, sim->file, ap, "expected 1 to %d groups, got %zu (leave stragglers out "
			 "for none)", PLAN_MAX_STRAGGLER_GROUPS, json_array_size(arr));
		return;
	}
	s->simulation.stragglers.listed = true;
	json_array_foreach(arr, i, v) {
		char ep[340];
		snprintf(ep, sizeof(ep), "%s/%zu", ap, i);
		if (!json_is_object(v)) {
			diag_err(sim->d, sim->file, ep, "expected a straggler group, an object, got %s",
				 jload_type_name(v));
			continue;
		}
		if (jobj_init(&jo, v, sim->file, ep, sim->d) == 0)
			load_group(&jo, s);
	}
}

/* What samples_record collects from the records of a samples file. */
struct samples {
	struct jobj *jo;
	const char *key, *path;
	double *out;
	int n, max;
};

/* One record of a samples file (csvfile.h): the numbers of its fields,
 * blanks, commas and line breaks separating numbers inside a quoted field
 * too; a record whose first
 * field starts with '#' is a comment, a first record that does not start
 * with a number is a header. Returns 0, or 1 after reporting. */
static int samples_record(void *ctx, const struct csvfile_record *r)
{
	struct samples *sm = ctx;
	if (r->nfields && r->field[0][0] == '#')
		return 0;
	for (int k = 0; k < r->nfields; k++) {
		const char *p = r->field[k];
		for (;;) {
			p += strspn(p, " \t,\r\n");
			if (!*p)
				break;
			char *end;
			double x = strtod(p, &end);
			if (end == p) {
				if (r->line == 1 && sm->n == 0)
					return 0;  /* a header */
				jobj_err(sm->jo, sm->key, "%s:%ld: expected a number, got '%.*s'", sm->path,
					 r->line, (int)strcspn(p, " \t,\r\n"), p);
				return 1;
			}
			if (!(x > 0) || !isfinite(x)) {
				jobj_err(sm->jo, sm->key, "%s:%ld: expected a positive slowdown factor, got %g",
					 sm->path, r->line, x);
				return 1;
			}
			if (sm->n == sm->max) {
				jobj_err(sm->jo, sm->key, "%s: at most %d samples, got more", sm->path, sm->max);
				return 1;
			}
			sm->out[sm->n++] = x;
			p = end;
		}
	}
	return 0;
}

/* A list of positive numbers (factors) from a CSV file, read through
 * libcsv: numbers separated by commas, blanks or line breaks; a line
 * starting with '#' and a first line that is not a number (a header) are
 * skipped. Returns the count, or -1 after reporting against jo's key. */
static int read_samples_csv(struct jobj *jo, const char *key, const char *path, double *out, int max)
{
	char why[1200];
	FILE *f = infile_open(path, why, sizeof(why));
	if (!f) {
		jobj_err(jo, key, "%s", why);
		return -1;
	}
	struct samples sm = { .jo = jo, .key = key, .path = path, .out = out, .max = max };
	struct csvfile_error ce;
	int rc = csvfile_read(f, CSVFILE_TAIL, samples_record, &sm, &ce);
	if (rc < 0 && ce.line)
		jobj_err(jo, key, "%s:%ld: line %s", path, ce.line, ce.why);
	else if (rc < 0)
		jobj_err(jo, key, "%s: %s", path, ce.why);
	fclose(f);
	if (rc)
		return -1;
	if (sm.n == 0)
		jobj_err(jo, key, "%s: no samples", path);
	return sm.n ? sm.n : -1;
}

/* simulation.stragglers.samples / samples_file (empirical), into st's
 * shared samples after those of the groups before g. */
static void load_samples(struct jobj *jo, struct plan_stragglers *st, struct plan_straggler_group *g)
{
	json_t *arr, *v;
	char ap[300];
	size_t i;
	bool list = jobj_has(jo, "samples"), file = jobj_has(jo, "samples_file");
	int room = PLAN_MAX_SAMPLES - st->nsample;

	if (g->dist != STRAG_EMPIRICAL) {
		if (list || file)
			jobj_err(jo, list ? "samples" : "samples_file", "applies to distribution "
				 "\"empirical\" only, got \"%s\"", plan_straggler_dist_names[g->dist]);
		return;
	}
	if (list == file) {
		diag_err(jo->d, jo->file, jo->path, "distribution \"empirical\" needs "
			 "samples or samples_file (one of them)");
		return;
	}
	if (jobj_has(jo, "slowdown") || jobj_has(jo, "sigma"))
		diag_err(jo->d, jo->file, jo->path, "slowdown and sigma do not apply "
			 "to distribution \"empirical\" (the samples are the factors)");
	if (file) {
		const char *str;
		char path[1024];
		if (jobj_str(jo, "samples_file", &str, JPATH) != 1)
			return;
		if (jload_resolve(jo->file, str, path, sizeof(path))) {
			jobj_err(jo, "samples_file", "path too long");
			return;
		}
		int n = read_samples_csv(jo, "samples_file", path, st->samples + st->nsample, room);
		g->nsamples = n > 0 ? n : 0;
		st->nsample += g->nsamples;
		return;
	}
	if (jobj_array(jo, "samples", &arr, ap, sizeof(ap), 0) != 1)
		return;
	if (json_array_size(arr) == 0 || json_array_size(arr) > (size_t)room) {
		diag_err(jo->d, jo->file, ap, "expected 1 to %d samples%s, got %zu", room,
			 st->listed ? " (64 over all groups)" : "", json_array_size(arr));
		return;
	}
	json_array_foreach(arr, i, v) {
		if (!json_is_number(v) || !(json_number_value(v) > 0)) {
			diag_err(jo->d, jo->file, ap, "/%zu: expected a positive slowdown factor, got %s", i,
				 json_is_number(v) ? "a number <= 0" : jload_type_name(v));
			continue;
		}
		st->samples[st->nsample++] = json_number_value(v);
		g->nsamples++;
	}
}

/* simulation.throttle (plan.h): windows of slower compute. */
void scenario_load_throttle(struct jobj *sim, struct plan *s)
{
	json_t *arr, *v, *ids, *x;
	char ap[300], ip[400];
	size_t i, k;

	if (jobj_array(sim, "throttle", &arr, ap, sizeof(ap), 0) != 1)
		return;
	if (json_array_size(arr) > PLAN_MAX_THROTTLE) {
		diag_err(sim->d, sim->file, ap, "at most %d windows, got %zu", PLAN_MAX_THROTTLE,
			 json_array_size(arr));
		return;
	}
	json_array_foreach(arr, i, v) {
		struct jobj jo;
		char ep[340];
		snprintf(ep, sizeof(ep), "%s/%zu", ap, i);
		if (jobj_init(&jo, v, sim->file, ep, sim->d))
			continue;
		struct plan_throttle *w = &s->simulation.throttle[s->simulation.nthrottle];
		memset(w, 0, sizeof(*w));
		w->factor = 1;
		bool byr = jobj_has(&jo, "ranks"), byn = jobj_has(&jo, "nodes");
		if (byr && byn)
			diag_err(jo.d, jo.file, ep, "give ranks or nodes, not both");
		w->by_node = byn;
		if ((byr || byn) && jobj_array(&jo, byn ? "nodes" : "ranks", &ids, ip, sizeof(ip), 0) == 1) {
			if (json_array_size(ids) == 0 || json_array_size(ids) > PLAN_MAX_THROTTLE_RANKS)
				diag_err(jo.d, jo.file, ip, "expected 1 to %d entries, got %zu",
					 PLAN_MAX_THROTTLE_RANKS, json_array_size(ids));
			else
				json_array_foreach(ids, k, x) {
					if (!json_is_integer(x) || json_integer_value(x) < 0 ||
					    json_integer_value(x) >= PLAN_MAX_GPUS) {
						id_error(&jo, ip, k, byn ? "node" : "rank", x);
						continue;
					}
					w->id[w->n++] = (int)json_integer_value(x);
				}
		}
		int ok = jobj_num(&jo, "start_s", &w->start_s, JREQ | JNONNEG) == 1;
		ok &= jobj_num(&jo, "duration_s", &w->duration_s, JREQ | JPOS) == 1;
		ok &= jobj_num(&jo, "factor", &w->factor, JREQ | JPOS) == 1;
		if (ok && w->factor < 1)
			jobj_err(&jo, "factor", "expected a slowdown factor >= 1 (compute time x factor), got %g",
				 w->factor);
		if (ok && w->factor >= 1)
			s->simulation.nthrottle++;
		jobj_end(&jo);
	}
}

/* simulation.degraded_links (plan.h): names are checked against the
 * platform by plan_check(). */
void scenario_load_degraded(struct jobj *sim, struct plan *s)
{
	json_t *arr, *v;
	char ap[300];
	size_t i;

	if (jobj_array(sim, "degraded_links", &arr, ap, sizeof(ap), 0) != 1)
		return;
	if (json_array_size(arr) > PLAN_MAX_DEGRADED) {
		diag_err(sim->d, sim->file, ap, "at most %d links, got %zu", PLAN_MAX_DEGRADED,
			 json_array_size(arr));
		return;
	}
	json_array_foreach(arr, i, v) {
		struct jobj jo;
		char ep[340];
		snprintf(ep, sizeof(ep), "%s/%zu", ap, i);
		if (jobj_init(&jo, v, sim->file, ep, sim->d))
			continue;
		struct plan_degraded *g = &s->simulation.degraded[s->simulation.ndegraded];
		g->bw_factor = g->latency_factor = 1;
		int dup = -1, got = jobj_str_copy(&jo, "link", g->link, sizeof(g->link), JREQ);
		for (int k = 0; got == 1 && k < s->simulation.ndegraded && dup < 0; k++)
			if (!strcmp(s->simulation.degraded[k].link, g->link))
				dup = k;
		if (dup >= 0)
			jobj_err(&jo, "link", "link '%s' is degraded by entry %d already: give each link once, with "
				 "both factors", g->link, dup);
		else if (got == 1) {
			int b = jobj_num(&jo, "bw_factor", &g->bw_factor, JPOS);
			int l = jobj_num(&jo, "latency_factor", &g->latency_factor, JPOS);
			if (b == 0 && l == 0) /* a link degraded by nothing is a mistake */
				jobj_err(&jo, "bw_factor", "link '%s' is degraded by neither bw_factor nor "
					 "latency_factor: give at least one", g->link);
			s->simulation.ndegraded++;
		}
		jobj_end(&jo);
	}
}
