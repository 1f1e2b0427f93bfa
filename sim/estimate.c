/* estimate: a simulation's events and CPU time before the engine starts
 * (see estimate.h).
 *
 * Counting, as the engine's files post (engine_stream.c counts a task
 * per task of every stream, engine_coll.c, engine_p2p.c and engine_ps.c
 * a flow per transfer they start):
 *   unfolded   every rank of stage s replays s's program, and each
 *              member of a collective posts the flows it sources, so a
 *              stage's collective flows are, per distinct (group, op,
 *              bytes) of its program, the flows its members of the
 *              stage source, summed over the group's instances: a plan
 *              per instance, not a walk of every rank's program;
 *   folded     the simulated ranks (few) walk their programs: their own
 *              flows and, cheaply folded, the flows around an unequal
 *              plan's busiest member (fold_posts_crit) and, on an
 *              oversubscribed fat tree, the folded ranks' flows and
 *              pipeline messages over its binding uplinks
 *              (fold_uplink_flows, fold_uplink_p2p); exactly folded,
 *              the posting member's group and mirror groups
 *              (fold_mirrors) and each pipeline message's mirrors
 *              (fold_mirror_p2p);
 *   parameter servers  never folded: each DP all-reduce pushes to and
 *              pulls from the servers, a rank's own shard staying;
 *   all-to-alls  where the engine may post one flow per NIC
 *              (engine_classes.c: unfolded or folded exactly, no degraded
 *              link, DDLSIM_ENGINE_PAIRS unset), the flows of the class
 *              plan wherever fabric/coll_classes.c makes one (the same
 *              test, coll_plan_class_copy). Whether the engine splits one
 *              back into its pairs depends on what else crosses its NICs
 *              at that instant, which cannot be known before the run: a
 *              split's pairs are not counted, so the engine's count is the
 *              estimate's plus the pairs of its splits (engine_result.
 *              cls_split says how many there were). */
#include "estimate.h"

#include <stdlib.h>
#include <string.h>

#include "fold.h"
#include "xalloc.h"

/* The CPU model: seconds = runs x (ESTIMATE_RUN_S + (tasks + flows) x
 * (ESTIMATE_EVENT_S + ESTIMATE_INFLIGHT_S x inflight) + ESTIMATE_CROWD_S
 * x crowd). Most of an unfolded run's time is SimGrid's max-min solve
 * (perf: 77 % in lmm::MaxMin::do_solve on GPT-3 175B over 2,048
 * unfolded GPUs, 93 % on Llama 3 70B over 4,096): with the full network
 * update (engine.c, network/optim Full) every event walks every flow in
 * flight. So each event costs the flows in flight at a mean instant
 * (inflight, estimate.h: every collective's flows for its uncontended
 * time, doubled across a 2:1 tree's uplinks, over the busiest stage's
 * compute), and a collective that posts F flows at once costs about
 * F x F / 2 more while they end (crowd). Fitted (the largest ratio of
 * predicted to measured CPU made smallest) to `ddlsim run --quiet` CPU
 * time (user + system) on the development machine (2 cores shared with
 * other jobs, SimGrid 3.32, debugoptimized), 2026-11-26; "off": the
 * shipped scenario with simulation.fold "off"; "l70": Llama 3 70B,
 * TP 8 x PP 4, sequence 8192, unfolded on tests/data/fattree2-2to1-r128
 * (a partly filled leaf):
 *
 *   scenario                                ranks sim events inflight CPU s  now  predicted
 *   gpt3-175b-dp1024 off                        1024   0.50 M   751    1.96  4.30   2.99
 *   gpt3-175b, dp 2048 off (auto: trees)        2048   1.79 M  4581   58.8     -   51.2
 *   gpt3-175b, dp 1024 off, trees               1024   0.89 M  2283   13.9     -   13.5
 *   gpt3-175b, dp 2048 off, rings               2048   1.00 M  1625    8.78    -   10.4
 *   megatron/76b off                            1024   8.48 M   232   33.5  32.8    27.0
 *   megatron/39b off                             512   2.77 M   134    6.63  7.46   7.28
 *   megatron/18b off                             256   0.75 M    85    1.21  1.83   1.77
 *   llama3-70b-h100-cp off                       256   1.98 M   110    4.28  4.66   4.88
 *   mixtral-8x7b-h100-ep8 off                     64   0.34 M    17    0.52    -    0.75
 *   l70 on 512 GPUs                              512   1.04 M   203    5.23    -    3.07
 *   l70 on 1,024 GPUs                           1024   2.09 M   429   15.3     -    8.52
 *   l70 on 2,048 GPUs                           2048   4.17 M   931   31.4     -   27.5
 *   megatron/1t (auto: folded)                    64   1.71 M     5    6.12  6.38   3.30
 *   megatron/530b (folded)                        35   0.77 M     3    2.34    -    1.47
 *   megatron/310b (folded)                        16   0.29 M     2    0.67    -    0.54
 *   deepseek-v3-h100-2048 (folded) [1]            16   0.73 M     -    2.33    -    1.96
 *   llama3-70b-h100-base (folded)                  4   0.25 M     2    0.61    -    0.48
 *   whatif/llama2-13b-h100-pp4-straggler          32   0.51 M    22    0.86    -    1.03
 *   whatif/llama3-8b-h100-fattree-degraded (5 runs) 128 2.06 M  145    3.53  2.96   5.33
 *   bench llama2-70b-256-fattree2-2to1 [2]       256   8.19 M    55   13.7   9.43  18.1
 *
 * [1] re-measured 2026-11-25 after the scenario moved to full recompute
 * with dense first layers (issue 24); its in-flight count was not
 * re-read (the model's figure is what tests/test-estimate.c holds).
 * (events: tasks + flows over every run, as the engine counted them and
 * estimate_job() predicts them; runs under 0.5 s CPU left out, the
 * process's start dominates them; ESTIMATE_RUN_S is that start, a fork
 * and SimGrid set up: 50 sampled iterations of whatif/resnet50-v100-16n-
 * jitter took 0.17 s.) Every scenario above was within 1.7x of the model
 * on the engine of its "CPU s" column; ESTIMATE_FACTOR (3x) leaves room
 * for other machines and loads.
 * [2] tests/bench/scenarios, unfolded (a partly filled leaf): the row
 * over the 10 s of issue 25.
 * Re-fitted 2026-11-26 after issue 25's engine work (tensor-parallel
 * collectives run on the compute stream's actor, one latency sleep per
 * collective, SimGrid's selective max-min update: engine_stream.c,
 * engine_coll.c, engine.c), ESTIMATE_EVENT_S alone, 2.2 -> 1.9 us, the
 * same criterion over the rows re-measured with that engine ("now":
 * release build, user + system CPU of one run, the bench row the median
 * of runs paired with the engine before, on the same 2 shared cores,
 * whose load varied from run to run: the bench row read 9.4 s quiet
 * and 15-17 s loaded). Those rows stay within 1.93x (the bench row
 * over, megatron/1t under); the solver's terms (INFLIGHT, CROWD) were
 * not re-fitted: the selective update re-solves only the flows linked
 * to a change, so rows with many flows in flight now read high. Beyond
 * the fit: l70 on 4,096 GPUs reads 4.4 min and ran more than 14 min
 * (stopped there): when the data-parallel rings over 13 leaves of a 2:1
 * tree outlast the compute, the contended flows stay in flight longer
 * than their uncontended time says, and the estimate stays low; its
 * warning (cli/longrun.h) still says to fold it. */
/* Not re-fitted for the class plans: counting them (issue 25 follow-up,
 * 2026-11-26, release build, the same 2 shared cores) moved the bench's
 * unfolded mixtral-8x7b-ep8x8nodes-1024 from 642.8 k flows and 18 s
 * predicted to 249.6 k flows and 5.0 s; the run posted 306.4 k flows
 * (7,008 class plans, the other all-to-alls per pair beside gradient
 * reductions) in 4.2 s of CPU (3.66 user + 0.51 system). */
#define ESTIMATE_RUN_S 3e-3
#define ESTIMATE_EVENT_S 1.9e-6
#define ESTIMATE_INFLIGHT_S 4.5e-9
#define ESTIMATE_CROWD_S 1.5e-9

void estimate_time(struct estimate *e)
{
	double ev = (double)(e->tasks + e->flows);
	e->events = ev * e->runs;
	e->cpu_s = e->runs * (ESTIMATE_RUN_S + ev * (ESTIMATE_EVENT_S + ESTIMATE_INFLIGHT_S * e->inflight) +
			      ESTIMATE_CROWD_S * e->crowd);
}

/* How long plan p keeps its flows in flight: its uncontended time,
 * times the oversubscription of a fat tree's leaf uplinks when a flow
 * crosses them (every leaf's nodes send at once in an unfolded run). */
static double plan_time_s(const struct topology *t, const struct coll_plan *p)
{
	if (t->fabric != FABRIC_FAT_TREE || t->ft_oversub <= 1)
		return p->ideal_time_s;
	int npl = t->ft_nodes_per_leaf > 0 ? t->ft_nodes_per_leaf : 1;
	for (int i = 0; i < p->nflows; i++)
		if (topology_node_of(t, p->flows[i].src) / npl != topology_node_of(t, p->flows[i].dst) / npl)
			return p->ideal_time_s * t->ft_oversub;
	return p->ideal_time_s;
}

/* Whether the engine may post class plans in this job (engine_cls_init). */
static bool classes_on(const struct engine_job *job)
{
	return (!job->fold || job->fold_exact) && job->ndegraded <= 0 && !getenv("DDLSIM_ENGINE_PAIRS");
}

/* The plan the engine posts for p: its class plan (into *own, for the
 * caller to destroy) where it has one and the job may post it, else p. */
static const struct coll_plan *posted(const struct engine_job *job, const struct coll_plan *p,
				      struct coll_plan **own)
{
	const char *why;
	*own = NULL;
	if (p->op != COLL_ALLTOALL || !classes_on(job))
		return p;
	*own = coll_plan_class_copy(job->topo, p, &why);
	return *own ? *own : p;
}

/* The flows of plan p that rank r sources. */
static long own_flows(const struct coll_plan *p, int r)
{
	return cplan_lower(p, NULL, r + 1, false) - cplan_lower(p, NULL, r, false);
}

/* The flows the engine posts for plan p: all of them, or (r >= 0) those
 * rank r sources. */
static long posted_flows(const struct engine_job *job, const struct coll_plan *p, int r)
{
	struct coll_plan *own;
	const struct coll_plan *q = posted(job, p, &own);
	long f = r >= 0 ? own_flows(q, r) : q->nflows;
	coll_plan_destroy(own);
	return f;
}

static const struct program *prog_of(const struct engine_job *job, int r, int stage)
{
	return job->rank_prog ? job->rank_prog[r] : job->stage_prog[stage];
}

/* A DP all-reduce through the parameter servers by rank r (member of
 * mem[0..n)): its pushes and pulls, the rank's own shard staying
 * (engine_ps.c). *bucket: the rank's rounds so far. */
static long ps_flows(const struct engine_ps *ps, int r, const int *mem, int n, int *bucket)
{
	int ns = ps->colocated && ps->servers > n ? n : ps->servers;
	int k0 = 0, nk = ns;
	if (ps->round_robin) {
		k0 = *bucket % ns;
		nk = 1;
	}
	(*bucket)++;
	long f = 0;
	for (int k = k0; k < k0 + nk; k++)
		f += !(ps->colocated && mem[k] == r);
	return 2 * f;
}

static void count_one(void *ctx, const struct coll_flow *f)
{
	(void)f;
	(*(long *)ctx)++;
}

/* The flows simulated rank r posts in collective t, folded or with
 * parameter servers (engine_coll.c, engine_ps.c); -1 if a plan cannot be
 * made. */
static long coll_flows(struct fold *F, int r, int stage, const struct task *t, const int *const *grp,
		       const int *ngrp, int *bucket, double *dur_s)
{
	const struct engine_job *job = F->job;
	const int *mem = grp[t->group];
	int n = ngrp[t->group];
	if (job->ps && t->group == GROUP_DP && t->op == COLL_ALLREDUCE)
		return ps_flows(job->ps, r, mem, n, bucket);
	if (n <= 1 || t->bytes <= 0)
		return 0;
	double bytes = t->bytes * t->count;
	struct cplan *c = cplan_get(&F->cache, t->group, mem, n, t->op, bytes);
	if (!c)
		return -1;
	const struct coll_plan *p = c->p;
	*dur_s = plan_time_s(job->topo, p);
	if (!job->fold_exact) {
		/* unfolded (parameter servers), or folded cheaply: own flows */
		long f = posted_flows(job, p, r);
		if (fold_posts_crit(F, c, mem, n, r))
			fold_each_crit_flow(F, c, count_one, &f);
		if (fold_posts_uplink_copies(F, r)) {
			struct cplan *u = fold_uplink_flows(F, stage, t->group, mem, n, t->op, bytes);
			if (!u)
				return -1;
			f += u->nuflows;
		}
		return f;
	}
	if (!fold_posts_group(F, mem, n, r))
		return 0;
	bool own = fold_own_only(F, c, t->group, n);
	/* the representative's own flows stay pairs (engine_coll.c) */
	long f = own ? own_flows(p, r) : posted_flows(job, p, -1);
	struct cplan *m = fold_mirrors(F, stage, t->group, mem, n, t->op, bytes);
	if (!m)
		return -1;
	for (int k = 1; k < m->nmir; k++)
		f += posted_flows(job, m->mir[k], -1);
	return f;
}

/* One simulated rank's tasks and flows over the job's iterations. */
static int count_rank(struct fold *F, int r, struct estimate *e)
{
	const struct engine_job *job = F->job;
	int c[DIM_N], bucket = 0, mp2p[2] = { 0, 0 }, nsim[GROUP_N] = { 0 };
	placement_coords(job->pl, r, c);
	const struct program *prog = prog_of(job, r, c[DIM_PP]);
	const int *grp[GROUP_N];
	int ngrp[GROUP_N], reps = job->repeat > 1 ? job->repeat : 1;
	fold_groups(F, r, grp, ngrp);
	for (int g = 0; g < GROUP_N; g++)
		for (int i = 0; i < ngrp[g]; i++)
			nsim[g] += F->active[grp[g][i]];
	for (int dir = 0; dir < 2 && job->fold; dir++) {
		int *pairs;
		mp2p[dir] = job->fold_exact ? fold_mirror_p2p(F, r, c[DIM_PP], dir, &pairs)
					    : fold_uplink_p2p(F, r, c[DIM_PP], dir, &pairs);
		free(pairs);
	}
	for (int it = 0; it < reps; it++)
		for (int i = 0; i < prog->n; i++) {
			const struct task *t = &prog->t[i];
			e->tasks++;
			if (t->kind == TASK_SEND)
				e->flows += 1 + mp2p[t->dir];
			if (t->kind != TASK_COLL)
				continue;
			double dur = 0;
			long f = coll_flows(F, r, c[DIM_PP], t, grp, ngrp, &bucket, &dur);
			if (f < 0)
				return -1;
			e->collectives += (job->ps && t->group == GROUP_DP && t->op == COLL_ALLREDUCE) ||
					  (ngrp[t->group] > 1 && t->bytes > 0);
			e->flows += f;
			e->flow_s += f * dur;
			/* the group's simulated members post theirs at once */
			e->crowd += (double)f * f * (nsim[t->group] > 1 ? nsim[t->group] : 1) / 2;
		}
	return 0;
}

static int stage_of(const struct placement *pl, int r)
{
	int c[DIM_N];
	placement_coords(pl, r, c);
	return c[DIM_PP];
}

/* A distinct collective of a stage's program: group, op and bytes, and
 * how many of its tasks have them. */
struct ckey {
	int group, op;
	double bytes;
	long count;
};

static int cmp_ckey(const void *a, const void *b)
{
	const struct ckey *x = a, *y = b;
	if (x->group != y->group)
		return x->group - y->group;
	if (x->op != y->op)
		return x->op - y->op;
	return (x->bytes > y->bytes) - (x->bytes < y->bytes);
}

/* The distinct collectives of prog (with more than one member and some
 * bytes) into *keys, sorted and merged; returns their count. */
static int stage_keys(const struct placement *pl, const struct program *prog, struct ckey **keys)
{
	int n = 0;
	*keys = xcalloc((size_t)prog->n + 1, sizeof(**keys));
	for (int i = 0; i < prog->n; i++) {
		const struct task *t = &prog->t[i];
		if (t->kind == TASK_COLL && t->bytes > 0 && placement_group_size(pl, t->group) > 1)
			(*keys)[n++] = (struct ckey){ t->group, t->op, t->bytes * t->count, 1 };
	}
	qsort(*keys, (size_t)n, sizeof(**keys), cmp_ckey);
	int m = 0;
	for (int i = 0; i < n; i++) {
		if (m && !cmp_ckey(&(*keys)[m - 1], &(*keys)[i]))
			(*keys)[m - 1].count++;
		else
			(*keys)[m++] = (*keys)[i];
	}
	return m;
}

/* Unfolded, no parameter servers: stage st's tasks and flows over every
 * rank of the stage, a collective's flows summed over its group
 * instances. */
static int count_stage(struct fold *F, int st, struct estimate *e)
{
	const struct engine_job *job = F->job;
	const struct placement *pl = job->pl;
	const struct program *prog = job->stage_prog[st];
	int N = pl->nranks, rc = -1, nsend = 0;
	long ranks = 0;
	int *mem = xreallocarray(NULL, (size_t)N + 1, sizeof(*mem));
	unsigned char *seen = xcalloc((size_t)N, 1);
	struct ckey *keys;
	int nk = stage_keys(pl, prog, &keys);

	for (int i = 0; i < prog->n; i++)
		nsend += prog->t[i].kind == TASK_SEND;
	for (int r = 0; r < N; r++)
		ranks += stage_of(pl, r) == st;
	e->tasks += ranks * prog->n;
	e->flows += ranks * nsend;
	for (int k = 0; k < nk; k++) {
		double inflight = 0;
		e->collectives += keys[k].count * ranks;
		memset(seen, 0, (size_t)N);
		for (int r = 0; r < N; r++) {
			if (seen[r] || stage_of(pl, r) != st)
				continue;
			int n = placement_group(pl, keys[k].group, r, mem);
			for (int i = 0; i < n; i++)
				seen[mem[i]] = 1;
			struct cplan *cp = cplan_get(&F->cache, keys[k].group, mem, n, keys[k].op, keys[k].bytes);
			if (!cp)
				goto out;
			/* the flows its members of this stage source (the
			 * embedding group's other member is another stage's) */
			struct coll_plan *own;
			const struct coll_plan *q = posted(job, cp->p, &own);
			long f = 0;
			for (int i = 0; i < n; i++)
				if (stage_of(pl, mem[i]) == st)
					f += own_flows(q, mem[i]);
			coll_plan_destroy(own);
			e->flows += keys[k].count * f;
			inflight += f;
			e->flow_s += keys[k].count * f * plan_time_s(job->topo, cp->p);
		}
		/* every instance of the collective posts its flows at once */
		e->crowd += keys[k].count * inflight * inflight / 2;
	}
	rc = 0;
out:
	free(keys);
	free(seen);
	free(mem);
	return rc;
}

/* A lower bound of the iteration: the busiest stage's compute. */
static double iteration_s(const struct engine_job *job)
{
	double worst = 1e-9;
	for (int st = 0; st < job->pl->size[DIM_PP]; st++) {
		const struct program *prog = job->stage_prog[st];
		double c = 0;
		for (int i = 0; i < prog->n; i++)
			if (prog->t[i].kind == TASK_COMPUTE && prog->t[i].stream == STREAM_COMPUTE)
				c += prog->t[i].time_s;
		if (c > worst)
			worst = c;
	}
	return worst * (job->repeat > 1 ? job->repeat : 1);
}

int estimate_job(const struct engine_job *job, struct estimate *e, struct diag *d)
{
	const struct placement *pl = job->pl;
	struct fold F;
	unsigned char *used = NULL;
	int rc = -1;

	e->ranks = pl->nranks;
	e->simulated = 0;
	e->tasks = e->flows = e->collectives = 0;
	e->crowd = e->flow_s = e->inflight = 0;
	fold_init(&F, job);
	if (fold_pick_ranks(&F, d))
		goto out;
	for (int r = 0; r < pl->nranks; r++)
		e->simulated += F.active[r];
	if (job->fold_exact) {
		/* the mirrors exact folding posts come from its closure */
		used = xcalloc((size_t)job->nodes * job->topo->gpus_per_node, 1);
		if (fold_mark_used(&F, used))
			goto out_plan;
	}
	if (!job->fold && !job->ps) {
		for (int s = 0; s < pl->size[DIM_PP]; s++)
			if (count_stage(&F, s, e))
				goto out_plan;
	} else {
		for (int r = 0; r < pl->nranks; r++)
			if (F.active[r] && count_rank(&F, r, e))
				goto out_plan;
	}
	/* the pipeline's stages run side by side: their flows are in flight
	 * together */
	e->crowd *= pl->size[DIM_PP];
	e->inflight = e->flow_s / iteration_s(job);
	rc = 0;
	goto out;
out_plan:
	diag_errf(d, "cannot plan a collective with algorithm '%s' to estimate the run", job->coll_algo);
out:
	free(used);
	fold_finish(&F);
	return rc;
}
