/* whatif: what the engine needs for the what-if questions of a plan
 * (stragglers, throttled GPUs, degraded links, plan.h) and the extra
 * engine runs they ask for.
 *
 * A straggler's compute factors are drawn per iteration: the reported run
 * is iteration 0 and iterations 1..n-1 are side runs, each in a child
 * process through the runner (runner.h: its error rows carry why a run
 * failed), whose iteration times and critical ranks give the
 * distribution of the report (result.h). With
 * sensitivity on, one side run without any degraded link and one per
 * degraded link alone price each link's cost. Side runs go before the
 * reported run, which starts SimGrid in this process. */
#include "whatif.h"

#include <math.h>
#include <stdlib.h>

#include "bug.h"
#include "platform.h"
#include "runner.h"
#include "xalloc.h"

/* Whether window t lists rank q (by its rank or its node). */
static bool throttle_lists(const struct plan_throttle *t, const struct topology *topo, int q)
{
	for (int k = 0; k < t->n; k++)
		if (t->by_node ? topology_node_of(topo, q) == t->id[k] : q == t->id[k])
			return true;
	return false;
}

/* The throttling windows of the plan, one entry per rank and window
 * (caller frees; NULL when none). */
struct engine_throttle *whatif_throttle_windows(const struct plan *pl, const struct topology *topo,
					       int nranks, int *n)
{
	*n = 0;
	if (pl->simulation.nthrottle == 0)
		return NULL;
	struct engine_throttle *w = NULL;
	size_t cap = 0;
	for (int i = 0; i < pl->simulation.nthrottle; i++) {
		const struct plan_throttle *t = &pl->simulation.throttle[i];
		for (int q = 0; q < nranks; q++) {
			if (t->n > 0 && !throttle_lists(t, topo, q))
				continue;
			XGROW(w, cap, (size_t)*n + 1);
			w[(*n)++] = (struct engine_throttle){ q, t->start_s, t->start_s + t->duration_s,
							      t->factor };
		}
	}
	return w;
}

/* The rank with the most compute time: the one a synchronous iteration
 * waits for. */
int whatif_critical_rank(const struct engine_result *e)
{
	int best = 0;
	double most = -1;
	for (int i = 0; i < e->nranks; i++) {
		double c = 0;
		for (int k = 0; k < CAT_N; k++)
			c += e->rank[i].compute_s[k];
		if (c > most + 1e-12 * most) {
			most = c;
			best = i;
		}
	}
	return best;
}

/* The side runs of a plan, as runner jobs: sampled iterations 1..n-1 of
 * the stragglers, then (sensitivity) the run without degraded links and
 * one per degraded link alone. */
struct side_jobs {
	const struct plan *pl;
	const struct engine_job *job0;
	int nranks;
	int niter;              /* sampled iterations run aside: iterations - 1 */
	int nsens;              /* sensitivity runs: 1 + degraded links, or 0 */
	struct result_row *rows;/* [niter + nsens] as they come back */
};

/* The engine job of side run i. f: room for nranks factors. */
static struct engine_job side_job(const struct side_jobs *sj, int i, double *f)
{
	struct engine_job job = *sj->job0;
	job.obs = NULL;
	if (i < sj->niter) {
		plan_straggler_factors(sj->pl, sj->nranks, i + 1, f);
		job.compute_scale = f;
	} else if (i == sj->niter) {
		job.ndegraded = 0;
	} else {
		job.degraded = &sj->job0->degraded[i - sj->niter - 1];
		job.ndegraded = 1;
	}
	return job;
}

/* Runner job (in the child: SimGrid runs once per process, and this one
 * has not started it yet): side run i's iteration time and critical rank,
 * or the engine's message. */
static void side_job_run(void *ctx, int i, struct result_row *row)
{
	const struct side_jobs *sj = ctx;
	double *f = xreallocarray(NULL, (size_t)sj->nranks, sizeof(*f));
	struct engine_job job = side_job(sj, i, f);
	struct engine_result er;
	struct diag dq;
	diag_init(&dq, NULL);
	if (engine_run(&job, &er, &dq) == 0) {
		row->status = RESULT_OK;
		row->reason[0] = 0;
		row->iteration_s = er.iteration_s;
		row->critical_rank = whatif_critical_rank(&er);
	} else
		result_row_fail(row, RESULT_FAILED, diag_text(&dq));
	diag_finish(&dq);
	free(f);
}

static void side_job_done(void *ctx, int i, const struct result_row *row)
{
	struct side_jobs *sj = ctx;
	sj->rows[i] = *row;
}

/* Stragglers' sampled iterations 1..iterations-1 and the degraded links'
 * sensitivity runs, through the runner (one child each, one at a time),
 * before the reported run (job, iteration 0) starts SimGrid in this
 * process. times[0] and crit[0] are left for it. */
static int side_runs(const struct plan *pl, const struct engine_job *job0, int nranks,
		     double *times, int *crit, struct result *r, struct diag *d)
{
	struct side_jobs sj = { .pl = pl, .job0 = job0, .nranks = nranks,
				.niter = pl->simulation.iterations > 1 ? pl->simulation.iterations - 1 : 0,
				.nsens = pl->simulation.sensitivity ? 1 + job0->ndegraded : 0 };
	BUG_ON(sj.niter + sj.nsens != whatif_side_runs(pl), "%d side runs, whatif_side_runs() says %d",
	       sj.niter + sj.nsens, whatif_side_runs(pl));
	int n = sj.niter + sj.nsens, rc = 0;
	if (n == 0)
		return 0;
	sj.rows = xcalloc((size_t)n, sizeof(*sj.rows));
	struct runner_opts ro = { .jobs = 1 };
	if (runner_run(&ro, n, side_job_run, side_job_done, &sj, d)) {
		free(sj.rows);
		return -1;
	}
	for (int i = 0; i < sj.niter && !rc; i++) {
		const struct result_row *row = &sj.rows[i];
		if (row->status != RESULT_OK)
			rc = diag_errf(d, "sampled iteration %d of %d failed: %s", i + 1, pl->simulation.iterations,
				       row->reason);
		times[i + 1] = row->iteration_s;
		crit[i + 1] = row->status == RESULT_OK ? row->critical_rank : -1;
	}
	if (sj.nsens > 0 && !rc) {
		const struct result_row *row = &sj.rows[sj.niter];
		r->sens_baseline_s = row->iteration_s;
		if (row->status != RESULT_OK)
			rc = diag_errf(d, "the run without degraded links failed: %s", row->reason);
		for (int k = 0; k < job0->ndegraded && !rc; k++) {
			row = &sj.rows[sj.niter + 1 + k];
			r->sens_iteration_s[k] = row->iteration_s;
			if (row->status != RESULT_OK)
				rc = diag_errf(d, "the run with degraded link '%s' alone failed: %s",
					       job0->degraded[k].link, row->reason);
		}
		r->nsens = job0->ndegraded;
	}
	free(sj.rows);
	return rc;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Nearest-rank percentile q (0..100) of sorted v[0..n). */
static double percentile(const double *v, int n, double q)
{
	int k = (int)ceil(q / 100 * n);
	return v[k < 1 ? 0 : k - 1];
}

/* The iteration-time distribution and the critical ranks (result.h). */
static void straggler_stats(int n, double *times, const int *crit, int nranks, struct result *r)
{
	int *count = xcalloc((size_t)nranks, sizeof(*count));
	for (int i = 0; i < n; i++)
		if (crit[i] >= 0 && crit[i] < nranks)
			count[crit[i]]++;
	r->ncritical = 0;
	for (int k = 0; k < RESULT_MAX_CRITICAL; k++) {
		int best = -1;
		for (int q = 0; q < nranks; q++)
			if (count[q] > 0 && (best < 0 || count[q] > count[best]))
				best = q;
		if (best < 0)
			break;
		r->critical_rank[k] = best;
		r->critical_count[k] = count[best];
		r->ncritical++;
		count[best] = 0;
	}
	free(count);
	r->iterations = n;
	qsort(times, (size_t)n, sizeof(*times), cmp_double);
	r->iter_min_s = times[0];
	r->iter_max_s = times[n - 1];
	r->iter_p50_s = percentile(times, n, 50);
	r->iter_p95_s = percentile(times, n, 95);
	r->iter_p99_s = percentile(times, n, 99);
}

unsigned char *whatif_distinct_ranks(const struct plan *pl, const struct topology *topo, int nranks,
				     bool *any)
{
	*any = false;
	if (!plan_has_stragglers(pl) && pl->simulation.nthrottle == 0 && pl->simulation.ndegraded == 0)
		return NULL;
	unsigned char *distinct = xcalloc((size_t)nranks, 1);
	plan_straggler_mask(pl, nranks, distinct);
	if (pl->simulation.ndegraded > 0) {
		unsigned char *nm = xcalloc((size_t)pl->nodes, 1);
		for (int i = 0; i < pl->simulation.ndegraded; i++)
			platform_link_nodes(topo, pl->nodes, pl->simulation.degraded[i].link, nm);
		for (int q = 0; q < nranks; q++)
			distinct[q] |= nm[topology_node_of(topo, q)];
		free(nm);
	}
	/* a window over the whole job (no ranks, no nodes) keeps replicas alike */
	for (int i = 0; i < pl->simulation.nthrottle; i++)
		for (int q = 0; q < nranks; q++)
			distinct[q] |= throttle_lists(&pl->simulation.throttle[i], topo, q);
	for (int q = 0; q < nranks && !*any; q++)
		*any = distinct[q];
	return distinct;
}

int whatif_side_runs(const struct plan *pl)
{
	return (pl->simulation.iterations > 1 ? pl->simulation.iterations - 1 : 0) +
	       (pl->simulation.sensitivity ? 1 + pl->simulation.ndegraded : 0);
}

int whatif_run(const struct plan *pl, struct engine_job *job, struct result *r, struct diag *d)
{
	int nranks = job->pl->nranks, nit = pl->simulation.iterations > 1 ? pl->simulation.iterations : 1;
	double *speed = xreallocarray(NULL, (size_t)nranks, sizeof(*speed));
	double *times = xcalloc((size_t)nit, sizeof(*times));
	int *crit = xcalloc((size_t)nit, sizeof(*crit));
	plan_straggler_factors(pl, nranks, 0, speed);
	if (plan_has_stragglers(pl))
		job->compute_scale = speed;
	int bad = side_runs(pl, job, nranks, times, crit, r, d) || engine_run(job, r->eng, d);
	if (!bad && plan_has_stragglers(pl)) {
		times[0] = r->eng->iteration_s;
		crit[0] = whatif_critical_rank(r->eng);
		straggler_stats(nit, times, crit, nranks, r);
	}
	job->compute_scale = NULL;
	free(speed);
	free(times);
	free(crit);
	return bad ? -1 : 0;
}
