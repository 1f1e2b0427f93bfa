/* sweep_precheck: a reason that holds for every point of a sweep, said
 * once before any output (sweep_precheck.h).
 *
 * Points are sampled (SWEEP_SAMPLES, spread over the sweep). A point
 * whose axis or derived key cannot be set, or whose expression names an
 * unknown variable, fails the same way at every point: said at once. A
 * loader error that every sampled point shares, at a key no axis or
 * derived value sets (an invalid base the axes do not touch, an unknown
 * key), is said once as the loader's message. An expression undefined (a
 * division by zero) at every sampled point has every point's expressions
 * evaluated: undefined at all of them, it is said once at its JSON path;
 * a point where it is undefined while others are not is recorded invalid
 * with its reason, as one that breaks a constraint. The base invalid
 * otherwise, the first valid point stands in for it; none: exit 3 with
 * the base's reason. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "diag.h"
#include "scenario.h"
#include "sweep.h"
#include "sweep_depends.h"
#include "sweep_precheck.h"

#define SWEEP_SAMPLES 16

/* What the sampled points share. */
struct sample {
	char first[512];            /* the first sampled point's loader error */
	int sampled, same;          /* points that did not load; with first's error */
	int points, undefined;      /* points sampled; with an expression undefined there */
	bool loaded;                /* a sampled point loaded */
};

/* Sample point i: a reason that holds for every point is said (returns
 * EXIT_INPUT); else its loader error, if any, counted in sm. Returns 0. */
static int precheck_point(struct sweep *s, long i, struct inputs_cache *cache, struct sample *sm, struct diag *d)
{
	char reason[512];
	json_t *values;
	bool every = false;
	json_t *doc = sweep_point_why(s, i, &values, reason, sizeof(reason), &every);
	char *vals = json_dumps(values, JSON_COMPACT);
	json_decref(values);
	if (!doc && every) {
		diag_err(d, s->path, "", "every point fails for a reason that does not depend on the point "
			 "(point %ld %s): %s", i, vals ? vals : "", reason);
		free(vals);
		return EXIT_INPUT;
	}
	free(vals);
	sm->points++;
	if (!doc) {
		char where[SWEEP_WHERE];
		sm->undefined += sweep_point_undefined(s, i, where, reason, sizeof(reason));
		return 0;
	}
	struct diag pd;
	diag_init(&pd, NULL);
	struct scenario *sc = scenario_load_json(doc, s->base_path, cache, &pd);
	json_decref(doc);
	if (!sc) {
		const char *t = diag_text(&pd);
		size_t len = strcspn(t, "\n");
		if (!sm->sampled++)
			snprintf(sm->first, sizeof(sm->first), "%.*s", (int)len, t);
		sm->same += len == strlen(sm->first) && !strncmp(t, sm->first, len) && !sweep_message_depends(s, t);
	}
	diag_finish(&pd);
	sm->loaded = sc != NULL;
	scenario_destroy(sc);
	return 0;
}

/* Every sampled point has an expression undefined at its values (a
 * division by zero, a result that is not finite): when every point has
 * one, the sweep can run nothing, said once at the expression's JSON path
 * (the first point's, when they differ). Returns 0 (a point evaluates) or
 * EXIT_INPUT. */
static int precheck_undefined(struct sweep *s, struct diag *d)
{
	char where[SWEEP_WHERE], first_where[SWEEP_WHERE] = "", reason[512], first[512] = "";
	bool same = true;
	for (long i = 0; i < s->npoints; i++) {
		if (!sweep_point_undefined(s, i, where, reason, sizeof(reason)))
			return 0;
		if (!i) {
			snprintf(first_where, sizeof(first_where), "%s", where);
			snprintf(first, sizeof(first), "%s", reason);
		}
		same = same && !strcmp(where, first_where);
	}
	if (same)
		diag_err(d, s->path, first_where, "expected an expression defined at some point, found it undefined at "
			 "every one of the %ld point%s: %s (point 0; no point can run)", s->npoints,
			 s->npoints > 1 ? "s" : "", first);
	else
		diag_err(d, s->path, first_where, "expected expressions defined at some point, found one undefined at "
			 "every one of the %ld points (this one at point 0: %s; no point can run)", s->npoints, first);
	return EXIT_INPUT;
}

/* Every sampled point failed to load with the same error, at a key no
 * axis or derived value sets: said once (the base's fault when it is the
 * base's own reason). Returns EXIT_INPUT. */
static int precheck_same(const struct sweep *s, const struct sample *sm, struct scenario *base, const char *base_why,
			 struct diag *d)
{
	size_t fl = strlen(sm->first);
	bool is_base = !base && !strncmp(base_why, sm->first, fl) && (!base_why[fl] || base_why[fl] == '\n');
	fprintf(stderr, "%s\n", sm->first);
	if (is_base)
		diag_err(d, s->path, "/base", "the base scenario is invalid (see above) and no axis or derived "
			 "value changes what is wrong: every point fails the same way");
	else
		diag_err(d, s->path, "", "every point fails for a reason that does not depend on the point "
			 "(see above: %d point%s sampled, the same reason, at a key no axis or derived value "
			 "sets): fix the base scenario or the sweep", sm->sampled, sm->sampled > 1 ? "s" : "");
	return EXIT_INPUT;
}

/* The base invalid: an invalid point's row takes the first valid point's
 * inputs (*ref, also *own: the caller's); no valid point is what validate says. Returns 0 or
 * EXIT_INPUT after saying why. */
static int precheck_ref(struct sweep *s, struct inputs_cache *cache, const char *base_why, const struct scenario **ref,
			struct scenario **own, struct diag *d)
{
	char reason[512];
	for (long i = 0; i < s->npoints && !*ref; i++) {
		json_t *values;
		json_t *doc = sweep_point(s, i, &values, reason, sizeof(reason));
		json_decref(values);
		if (!doc)
			continue;
		struct diag pd;
		diag_init(&pd, NULL);
		*ref = *own = scenario_load_json(doc, s->base_path, cache, &pd);
		diag_finish(&pd);
		json_decref(doc);
	}
	if (*ref)
		return 0;
	fputs(base_why, stderr);
	diag_err(d, s->path, "/base", "the base scenario is invalid (see above) and none of the %ld points "
		 "is valid", s->npoints);
	return EXIT_INPUT;
}

int sweep_precheck(struct sweep *s, struct inputs_cache *cache, struct scenario *base, const char *base_why,
		   const struct scenario **ref, struct scenario **own, struct diag *d)
{
	struct sample sm = { .first = "" };
	for (int k = 0; k < SWEEP_SAMPLES && k < s->npoints && !sm.loaded; k++) {
		long i = s->npoints <= SWEEP_SAMPLES ? k : (long)((double)k * (double)(s->npoints - 1) / (SWEEP_SAMPLES - 1));
		if (precheck_point(s, i, cache, &sm, d))
			return EXIT_INPUT;
	}
	if (sm.undefined && sm.undefined == sm.points && precheck_undefined(s, d))
		return EXIT_INPUT;
	if (!sm.loaded && sm.sampled && sm.same == sm.sampled)
		return precheck_same(s, &sm, base, base_why, d);
	if (base) {
		*ref = base;
		return 0;
	}
	return precheck_ref(s, cache, base_why, ref, own, d);
}

