/* sweep_precheck: before a sweep writes anything, a reason that holds for
 * every point said once, with exit 3 (issue 40), as `ddlsim validate`
 * would say it. */
#ifndef DDLSIM_SWEEP_PRECHECK_H
#define DDLSIM_SWEEP_PRECHECK_H

struct diag;
struct inputs_cache;
struct scenario;
struct sweep;

/* Check sweep s before its first point: an axis or derived key that
 * cannot be set, an expression naming an unknown variable, or a loader
 * error that sampled points share at a key no axis or derived value sets
 * is an error. base: the base scenario loaded (NULL: invalid, base_why
 * says why). *ref gets the scenario whose inputs an invalid point's row
 * names: base, else the first valid point's, which *own gets too (the
 * caller destroys it). Returns 0 or EXIT_INPUT after reporting into d. */
int sweep_precheck(struct sweep *s, struct inputs_cache *cache, struct scenario *base, const char *base_why,
		   const struct scenario **ref, struct scenario **own, struct diag *d);

#endif
