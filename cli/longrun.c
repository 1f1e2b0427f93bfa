/* longrun: the warning before a long simulation (see longrun.h). The
 * messages follow diag's format ("file: /json/path: warning: ..."), one
 * line each, so a script can grep them. */
#include "longrun.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#include "human.h"
#include "simulate.h"
#include "xalloc.h"

double longrun_threshold_s(void)
{
	static bool said;
	const char *v = getenv("DDLSIM_LONG_RUN_S");
	char *end;
	if (!v)
		return LONGRUN_DEFAULT_S;
	double s = strtod(v, &end);
	if (*v && !*end && isfinite(s) && s >= 0)
		return s;
	if (!said) {
		said = true;
		fprintf(stderr, "ddlsim: warning: DDLSIM_LONG_RUN_S: expected a number of seconds >= 0, got '%.40s%s'; "
			"using the default, %g s\n", v, strlen(v) > 40 ? "..." : "", LONGRUN_DEFAULT_S);
	}
	return LONGRUN_DEFAULT_S;
}

double longrun_mem_default_bytes(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	return pages > 0 && size > 0 ? LONGRUN_MEM_SHARE * (double)pages * (double)size : 16e9;
}

int longrun_admit(const char *what, double need_bytes, double limit_bytes)
{
	double limit = limit_bytes > 0 ? limit_bytes : longrun_mem_default_bytes();
	if (need_bytes <= limit)
		return 0;
	if (limit_bytes > 0)
		fprintf(stderr, "ddlsim: error: %s needs about %.3g GB of memory (estimated), over the "
			"--mem-limit of %.3g GB: raise --mem-limit or make it smaller\n", what, need_bytes / 1e9,
			limit / 1e9);
	else
		fprintf(stderr, "ddlsim: error: %s needs about %.3g GB of memory (estimated), over the "
			"default --mem-limit of %.3g GB (%.0f %% of this machine's %.3g GB): make it smaller, "
			"or raise --mem-limit on a machine that has the memory\n", what, need_bytes / 1e9,
			limit / 1e9, 100 * LONGRUN_MEM_SHARE, limit / LONGRUN_MEM_SHARE / 1e9);
	return EXIT_INPUT;
}

bool longrun_over_limit(const struct inputs *in, const struct plan *pl, double limit_bytes, bool given,
			char *why, size_t n)
{
	struct estimate e;
	double need;
	if (longrun_estimate(in, pl, &e) || (need = estimate_job_bytes(&e)) <= limit_bytes)
		return false;
	snprintf(why, n, "needs about %.3g GB of memory (estimated: %d of %d ranks simulated), over the "
		 "%s--mem-limit of %.3g GB", need / 1e9, e.simulated, e.ranks, given ? "" : "default ",
		 limit_bytes / 1e9);
	return true;
}

int longrun_estimate(const struct inputs *in, const struct plan *pl, struct estimate *e)
{
	struct diag quiet;
	diag_init(&quiet, NULL);
	int rc = simulate_estimate(in, pl, e, &quiet);
	diag_finish(&quiet);
	return rc;
}

/* "not folded: WHY; to shorten it: ADVICE" about path's /simulation/fold
 * (path NULL: about "ddlsim"), of what (NULL: the scenario itself). */
static void say_fold(const char *path, const char *what, const struct estimate *e)
{
	if (e->folded || !e->fold_reason)
		return;
	fprintf(stderr, "%s: %swarning: %s%snot folded: %s", path ? path : "ddlsim",
		path ? "/simulation/fold: " : "", what ? what : "", what ? " is " : "", e->fold_reason);
	if (e->fold_advice)
		fprintf(stderr, "; to shorten it: %s", e->fold_advice);
	fputc('\n', stderr);
}

bool longrun_warn(const char *path, const struct estimate *e)
{
	if (e->cpu_s < longrun_threshold_s())
		return false;
	char t[32], ev[32], tk[32], fl[32];
	fprintf(stderr, "%s: warning: a long simulation: about %s of CPU for %s events (%s tasks and "
		"%s flows on %d of %d ranks%s", path, human_duration(e->cpu_s, t, sizeof(t)),
		human_number(e->events, ev, sizeof(ev)), human_number((double)e->tasks * e->runs, tk, sizeof(tk)),
		human_number((double)e->flows * e->runs, fl, sizeof(fl)), e->simulated, e->ranks,
		e->folded ? ", folded" : "");
	if (e->runs > 1)
		fprintf(stderr, ", over %d runs: the what-if's side runs", e->runs);
	fprintf(stderr, "), estimated within %gx\n", ESTIMATE_FACTOR);
	say_fold(path, NULL, e);
	fflush(stderr);
	return true;
}

bool longrun_warn_batch(const char *path, const char *unit, const struct estimate *e,
			const bool *ok, const char *const *label, int n, int jobs)
{
	double cpu = 0, limit = longrun_threshold_s();
	int longest = -1, over = 0, known = 0;
	for (int i = 0; i < n; i++) {
		if (!ok[i])
			continue;
		known++;
		cpu += e[i].cpu_s;
		over += e[i].cpu_s >= limit;
		if (longest < 0 || e[i].cpu_s > e[longest].cpu_s)
			longest = i;
	}
	int par = jobs < n ? jobs : n;
	double wall = cpu / (par > 0 ? par : 1);
	if (longest < 0 || wall < limit)
		return false;
	char t[32], w[32], l[32];
	fprintf(stderr, "%s: warning: a long run: about %s of CPU for %d %s", path ? path : "ddlsim",
		human_duration(cpu, t, sizeof(t)), known, unit);
	if (par > 1)
		fprintf(stderr, " (about %s at -j %d)", human_duration(wall, w, sizeof(w)), par);
	fprintf(stderr, ", estimated within %gx; %d take %s or more alone; the longest, %s, about %s "
		"(%d of %d ranks simulated)\n", ESTIMATE_FACTOR, over, human_duration(limit, w, sizeof(w)),
		label[longest], human_duration(e[longest].cpu_s, l, sizeof(l)), e[longest].simulated,
		e[longest].ranks);
	say_fold(path, label[longest], &e[longest]);
	fflush(stderr);
	return true;
}

void longrun_scenarios(struct scenario *const *sc, int n, int jobs, struct progress *pg)
{
	struct estimate *e = xcalloc((size_t)n + 1, sizeof(*e));
	bool *ok = xcalloc((size_t)n + 1, sizeof(*ok)), warned = false;
	const char **label = xcalloc((size_t)n + 1, sizeof(*label));
	for (int i = 0; i < n; i++) {
		ok[i] = !longrun_estimate(sc[i]->in, &sc[i]->plan, &e[i]);
		label[i] = sc[i]->meta.name;
		if (ok[i]) {
			warned |= longrun_warn(sc[i]->meta.path, &e[i]);
			progress_expect(pg, i, e[i].cpu_s, e[i].tasks * e[i].runs);
		}
	}
	if (!warned)
		warned = longrun_warn_batch(NULL, "scenarios", e, ok, label, n, jobs);
	if (warned)
		progress_eager(pg);
	free(label);
	free(ok);
	free(e);
}

int longrun_admit_scenarios(struct scenario *const *sc, int n, double limit_bytes)
{
	int rc = 0;
	for (int i = 0; i < n; i++) {
		struct estimate e;
		if (longrun_estimate(sc[i]->in, &sc[i]->plan, &e))
			continue;  /* the simulation will say why it cannot be made */
		char what[1400], ev[32];
		snprintf(what, sizeof(what), "simulating %s (%d of %d ranks simulated, %s events)",
			 sc[i]->meta.path, e.simulated, e.ranks,
			 human_number((double)e.tasks + (double)e.flows, ev, sizeof(ev)));
		if (longrun_admit(what, estimate_job_bytes(&e), limit_bytes))
			rc = EXIT_INPUT;
	}
	return rc;
}
