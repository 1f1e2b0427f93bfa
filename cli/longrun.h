/* longrun: the warning before a long simulation (issue 27: never a
 * silent long run).
 *
 * Before simulating, run, compare, sweep and plan estimate each
 * simulation from its plan (sim/estimate.h: the ranks simulated after
 * folding, the tasks and flows the engine will replay, the CPU time of
 * those events on the machine the model was fitted on). When the
 * estimate reaches the threshold, they say so on stderr before anything
 * starts, with the reason folding is off and what would shorten it:
 *
 *   s.json: warning: a long simulation: about 2.1 min of CPU for 8.48 M events
 *     (5.7 M tasks and 2.78 M flows on 1024 of 1024 ranks), estimated within 3x
 *   s.json: /simulation/fold: warning: not folded: simulation.fold is "off"; to
 *     shorten it: set simulation.fold to "auto" (one data-parallel replica ...)
 *
 * (each message one line). The threshold is LONGRUN_DEFAULT_S seconds,
 * or the environment's DDLSIM_LONG_RUN_S (a number >= 0, in seconds;
 * 0 warns about every simulation: the tests use it; anything else is
 * said once as a warning and the default holds). */
#ifndef DDLSIM_LONGRUN_H
#define DDLSIM_LONGRUN_H

#include <stdbool.h>

#include "estimate.h"
#include "progress.h"
#include "scenario.h"

#define LONGRUN_DEFAULT_S 30.0

/* The threshold in seconds (see above). A DDLSIM_LONG_RUN_S that is not
 * a number >= 0 is not used: a warning says so on stderr (once) and the
 * default holds. */
double longrun_threshold_s(void);

/* Admission (issue 40: every size has a bound before work starts): a
 * command that simulates estimates the peak memory of what it is about
 * to run and refuses it over its --mem-limit, whose default is
 * LONGRUN_MEM_SHARE of the machine's physical memory. */
#define LONGRUN_MEM_SHARE 0.8

/* The default memory limit in bytes (LONGRUN_MEM_SHARE of the physical
 * memory; 16 GB when it cannot be read). */
double longrun_mem_default_bytes(void);

/* When need_bytes, the estimated peak memory of what (e.g. "collective
 * on 131072 ranks (16384 nodes x 8 GPUs), 31 sizes"), exceeds limit_bytes
 * (0: the default), say on stderr "ddlsim: error: WHAT needs about N GB
 * of memory (estimated), over the --mem-limit of L GB (...)" with what to
 * do, and return EXIT_INPUT (3); else 0. */
int longrun_admit(const char *what, double need_bytes, double limit_bytes);

/* Admission of the simulations of scenarios sc[0..n) (run, compare): each
 * estimated (its peak memory, sim/estimate.h's estimate_job_bytes()) and
 * refused when over limit_bytes (0: the default), "ddlsim: error:
 * simulating S.json (R of T ranks simulated, E events) needs about ...".
 * Returns 0, or EXIT_INPUT after saying each one over. */
int longrun_admit_scenarios(struct scenario *const *sc, int n, double limit_bytes);

/* Admission of one runner job (plan's finalists, validation's cases):
 * when the simulation of pl on in is estimated above limit_bytes (given:
 * from --mem-limit, else the default), write why into why ("needs about
 * N GB of memory (estimated: R of T ranks simulated), over the --mem-limit
 * of L GB") and return true: the caller fails the job with it, never
 * starting the simulation. */
bool longrun_over_limit(const struct inputs *in, const struct plan *pl, double limit_bytes, bool given,
			char *why, size_t n);

/* Estimate the simulation of plan pl on in into *e. Returns 0, or -1
 * when it cannot be estimated (nothing said: the simulation will say
 * why). */
int longrun_estimate(const struct inputs *in, const struct plan *pl, struct estimate *e);

/* When e->cpu_s reaches the threshold, print the warning about the
 * simulation of the scenario at path (see above) to stderr. Returns
 * whether it warned. */
bool longrun_warn(const char *path, const struct estimate *e);

/* A batch of n simulations (the points of a sweep, the plans of a
 * search, the scenarios of a compare) run jobs at a time, e[i] the
 * estimate of simulation i when ok[i] (else unknown), label[i] what
 * names it ("point 17 (tp=1, dp=64)"), unit what they are ("points"):
 * when their wall time (their CPU over min(jobs, n)) reaches the
 * threshold, print on stderr, about file path (NULL: "ddlsim"), the
 * total, how many pass
 * the threshold alone and the longest, and, when the longest is not
 * folded, why and what would shorten it. Returns whether it warned. */
bool longrun_warn_batch(const char *path, const char *unit, const struct estimate *e,
			const bool *ok, const char *const *label, int n, int jobs);

/* The scenarios sc[0..n), to be simulated jobs at a time (compare, a
 * run of several): estimate each, warn about each long one and, when
 * none is long alone, about their total (about "ddlsim"), and give the
 * estimates to pg (progress.h; eager when a warning was given). */
void longrun_scenarios(struct scenario *const *sc, int n, int jobs, struct progress *pg);

#endif
