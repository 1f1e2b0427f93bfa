/* whatif: what the engine needs for the what-if questions of a plan
 * (stragglers, throttled GPUs, degraded links, plan.h) and the extra
 * engine runs they ask for.
 *
 * A straggler's compute factors are drawn per iteration: the reported run
 * is iteration 0 and iterations 1..n-1 are side runs, each in a child
 * process (SimGrid runs once per process), whose iteration times and
 * critical ranks give the distribution of the report (result.h). With
 * sensitivity on, one side run without any degraded link and one per
 * degraded link alone price each link's cost. Side runs go before the
 * reported run, which starts SimGrid in this process. */
#include "whatif.h"

#include <math.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "platform.h"
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
	if (pl->nthrottle == 0)
		return NULL;
	struct engine_throttle *w = NULL;
	size_t cap = 0;
	for (int i = 0; i < pl->nthrottle; i++) {
		const struct plan_throttle *t = &pl->throttle[i];
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

struct side_out {
	double iteration_s;
	int critical;
	int ok;
};

/* One more engine run of job, in a child process (SimGrid runs once per
 * process; this one has not started it yet): its iteration time and
 * critical rank come back over a pipe. ok = 0 when it failed. */
static struct side_out side_run(const struct engine_job *job)
{
	struct side_out o = { 0, -1, 0 };
	int fd[2];
	if (pipe(fd))
		return o;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return o;
	}
	if (pid == 0) {
		struct engine_result er;
		struct diag dq;
		close(fd[0]);
		diag_init(&dq, NULL);
		if (engine_run(job, &er, &dq) == 0) {
			o.iteration_s = er.iteration_s;
			o.critical = whatif_critical_rank(&er);
			o.ok = 1;
		}
		_exit(write(fd[1], &o, sizeof(o)) == (ssize_t)sizeof(o) ? 0 : 1);
	}
	close(fd[1]);
	size_t got = 0;
	struct side_out in = o;
	while (got < sizeof(in)) {
		ssize_t n = read(fd[0], (char *)&in + got, sizeof(in) - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd[0]);
	waitpid(pid, NULL, 0);
	return got == sizeof(in) ? in : o;
}

/* Stragglers' sampled iterations 1..iterations-1 and the degraded links'
 * sensitivity runs, before the reported run (job, iteration 0) starts
 * SimGrid in this process. times[0] and crit[0] are left for it. */
static int side_runs(const struct plan *pl, const struct engine_job *job0, int nranks,
		     double *times, int *crit, struct result *r, struct diag *d)
{
	struct engine_job job = *job0;
	job.obs = NULL;
	double *f = xreallocarray(NULL, (size_t)nranks, sizeof(*f));
	int rc = 0;
	for (int i = 1; i < pl->iterations && !rc; i++) {
		plan_straggler_factors(pl, nranks, i, f);
		job.compute_scale = f;
		struct side_out o = side_run(&job);
		if (!o.ok)
			rc = diag_errf(d, "sampled iteration %d of %d failed", i, pl->iterations);
		times[i] = o.iteration_s;
		crit[i] = o.critical;
	}
	job = *job0;
	job.obs = NULL;
	if (pl->sensitivity && !rc) {
		job.ndegraded = 0;
		struct side_out o = side_run(&job);
		r->sens_baseline_s = o.iteration_s;
		rc = o.ok ? 0 : diag_errf(d, "the run without degraded links failed");
		for (int i = 0; i < job0->ndegraded && !rc; i++) {
			job.degraded = &job0->degraded[i];
			job.ndegraded = 1;
			o = side_run(&job);
			r->sens_iteration_s[i] = o.iteration_s;
			if (!o.ok)
				rc = diag_errf(d, "the run with degraded link '%s' alone failed",
					       job0->degraded[i].link);
		}
		r->nsens = job0->ndegraded;
	}
	free(f);
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
	if (!plan_has_stragglers(pl) && pl->nthrottle == 0 && pl->ndegraded == 0)
		return NULL;
	unsigned char *distinct = xcalloc((size_t)nranks, 1);
	plan_straggler_mask(pl, nranks, distinct);
	if (pl->ndegraded > 0) {
		unsigned char *nm = xcalloc((size_t)pl->nodes, 1);
		for (int i = 0; i < pl->ndegraded; i++)
			platform_link_nodes(topo, pl->nodes, pl->degraded[i].link, nm);
		for (int q = 0; q < nranks; q++)
			distinct[q] |= nm[topology_node_of(topo, q)];
		free(nm);
	}
	/* a window over the whole job (no ranks, no nodes) keeps replicas alike */
	for (int i = 0; i < pl->nthrottle; i++)
		for (int q = 0; q < nranks; q++)
			distinct[q] |= throttle_lists(&pl->throttle[i], topo, q);
	for (int q = 0; q < nranks && !*any; q++)
		*any = distinct[q];
	return distinct;
}

int whatif_run(const struct plan *pl, struct engine_job *job, struct result *r, struct diag *d)
{
	int nranks = job->pl->nranks, nit = pl->iterations > 1 ? pl->iterations : 1;
	double *speed = xreallocarray(NULL, (size_t)nranks, sizeof(*speed));
	double *times = xcalloc((size_t)nit, sizeof(*times));
	int *crit = xcalloc((size_t)nit, sizeof(*crit));
	plan_straggler_factors(pl, nranks, 0, speed);
	if (plan_has_stragglers(pl))
		job->compute_scale = speed;
	int bad = side_runs(pl, job, nranks, times, crit, r, d) || engine_run(job, &r->eng, d);
	if (!bad && plan_has_stragglers(pl)) {
		times[0] = r->eng.iteration_s;
		crit[0] = whatif_critical_rank(&r->eng);
		straggler_stats(nit, times, crit, nranks, r);
	}
	job->compute_scale = NULL;
	free(speed);
	free(times);
	free(crit);
	return bad ? -1 : 0;
}
