/* simulate: inputs + plan -> programs -> engine -> result (see
 * simulate.h).
 *
 * simulate_run_observed in phases: the stage programs (builders.h; per
 * GPU type on mixed clusters: simulate_groups.c), the per-kernel table
 * (simulate_ops.c), whether and how to fold (simulate_fold.c), which
 * ranks differ from their replicas, the engine job, the what-if side runs
 * (whatif.h) and the reported run, then the figures derived from the
 * engine's result (simulate_derive.c). */
#include "simulate.h"
#include "simulate-private.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "anatomy.h"
#include "platform.h"
#include "builders.h"
#include "bug.h"
#include "cost.h"
#include "stack.h"
#include "cnn.h"
#include "ddlsim-config.h"
#include "framework.h"
#include "whatif.h"
#include "xalloc.h"

int simulate_build_program(const struct inputs *in, const struct plan *pl, int stage,
			   struct program *p, struct stage_result *sr)
{
	return builders_find(inputs_model(in))->build(in, pl, stage, p, sr);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int simulate_run(const struct inputs *in, const struct plan *pl, struct result *r,
		 struct diag *d)
{
	return simulate_run_observed(in, pl, NULL, r, d);
}

/* The result's header: the plan (which must pass plan_check(): a BUG
 * otherwise), the inputs borrowed, the producer. */
static void result_begin(const struct inputs *in, const struct plan *pl, struct result *r)
{
	memset(r, 0, sizeof(*r));
	r->eng = xcalloc(1, sizeof(*r->eng));
	r->plan = *pl;
	r->in = in;
	r->gpus = plan_gpus(pl, in);
	snprintf(r->producer_version, sizeof(r->producer_version), "%s", DDLSIM_VERSION);
	struct diag quiet;
	diag_init(&quiet, NULL);
	int problems = plan_check(pl, in, "plan", &quiet);
	BUG_ON(problems != 0, "simulate_run() given a plan plan_check() rejects: %s", diag_text(&quiet));
	diag_finish(&quiet);
}

/* The programs of a run: one per stage, and per GPU type on mixed
 * clusters (grp). */
struct programs {
	struct program *progs;  /* [pp] */
	struct program **pp;    /* [pp] pointers into progs, for the engine */
	struct groups_built grp;
};

static void programs_finish(struct programs *P, int npp)
{
	simulate_groups_finish(&P->grp, npp);
	for (int s = 0; s < npp && P->progs; s++)
		program_finish(&P->progs[s]);
	free(P->progs);
	free(P->pp);
}

/* Build every stage's program (r->stage) and the node groups' programs.
 * Returns 0 or -1 (reported). */
static int build_programs(const struct inputs *in, const struct plan *pl,
			  const struct placement *place, struct programs *P, struct result *r,
			  struct diag *d)
{
	r->nstages = pl->parallel.pp;
	r->stage = xcalloc((size_t)pl->parallel.pp, sizeof(*r->stage));
	P->progs = xcalloc((size_t)pl->parallel.pp, sizeof(*P->progs));
	P->pp = xcalloc((size_t)pl->parallel.pp, sizeof(*P->pp));
	for (int s = 0; s < pl->parallel.pp; s++) {
		program_init(&P->progs[s]);
		P->pp[s] = &P->progs[s];
		if (simulate_build_program(in, pl, s, &P->progs[s], &r->stage[s]))
			return diag_errf(d, "cannot build the program of stage %d", s);
	}
	if (pl->ngroups > 0 && simulate_build_groups(in, pl, place, P->progs, &P->grp, r, d))
		return -1;
	return 0;
}

/* The engine's job and what it points to. */
struct job_parts {
	struct engine_job job;
	struct engine_ps ps;
	struct platform_degrade deg[PLAN_MAX_DEGRADED];
	struct engine_throttle *thr;    /* owned */
	double *sm_work;                /* owned: job.overlap.sm_work */
	struct engine_gpu_overlap ov[PLAN_MAX_NODE_GROUPS]; /* job.group_overlap */
	double *grp_sm_work[PLAN_MAX_NODE_GROUPS];          /* owned: ov[k].sm_work where not sm_work */
};

/* Each node group's interference figures (engine.h) into J->ov, priced
 * on its GPU by its programs' cost source (simulate_groups.c): a group
 * on the topology's GPU takes the job's own. */
static void job_groups_overlap(struct job_parts *J, const struct plan *pl, const struct programs *P)
{
	const struct engine_job *j = &J->job;
	for (int k = 0; k < pl->ngroups; k++) {
		const struct inputs *cin = P->grp.vin[k];
		if (!cin) {     /* the topology's GPU, or no rank on it */
			J->ov[k] = j->overlap;
			continue;
		}
		const struct gpu_spec *g = &inputs_topology(cin)->gpu;
		struct engine_gpu_overlap *o = &J->ov[k];
		o->sm_count = (int)g->sm_count;
		o->interference_factor = cost_interference(inputs_cost(cin));
		simulate_overlap_price(cin, pl, &o->membound_share, &J->grp_sm_work[k]);
		o->sm_work = J->grp_sm_work[k];
		o->comm_clock_ratio = o->sm_work ? g->comm_overlap_clock_ratio : 0;
		o->hbm_Bps = g->hbm_bw_Bps * g->mem_eff_max;
	}
	J->job.group_overlap = J->ov;
	J->job.rank_group = P->grp.rank_group;
}

/* The engine job of plan pl on in: programs, folding, interference,
 * parameter servers, degraded links, throttling, distinct ranks. */
static void job_init(struct job_parts *J, const struct inputs *in, const struct plan *pl,
		     const struct placement *place, const struct programs *P, bool fold, bool exact,
		     bool classes, const unsigned char *distinct, const struct engine_observer *obs)
{
	const struct topology *topo = inputs_topology(in);
	J->job = (struct engine_job){ .topo = topo, .nodes = pl->nodes, .pl = place,
				      .stage_prog = P->pp, .coll_algo = pl->communication.coll_algo, .fold = fold,
				      .fold_exact = fold && exact,
				      .obs = obs };
	struct engine_gpu_overlap *o = &J->job.overlap;
	o->sm_count = (int)topo->gpu.sm_count;
	o->interference_factor = cost_interference(inputs_cost(in));
	simulate_overlap_price(in, pl, &o->membound_share, &J->sm_work);
	o->sm_work = J->sm_work;
	/* no table (nothing priced): no share to slow, as before */
	o->comm_clock_ratio = J->sm_work ? topo->gpu.comm_overlap_clock_ratio : 0;
	o->hbm_Bps = topo->gpu.hbm_bw_Bps * topo->gpu.mem_eff_max;
	J->ps = (struct engine_ps){
		.servers = pl->parallel.ps.servers, .colocated = pl->parallel.ps.attach == PS_ATTACH_GPUS,
		.round_robin = pl->parallel.ps.shard == PS_SHARD_ROUND_ROBIN,
		.async = pl->parallel.ps.async, .staleness = pl->parallel.ps.staleness,
		.nic_bw_Bps = pl->parallel.ps.nic_Bps > 0 ? pl->parallel.ps.nic_Bps : topo->nic_bw_Bps,
		.nic_latency_s = pl->parallel.ps.latency_s >= 0 ? pl->parallel.ps.latency_s : topo->nic_latency_s,
	};
	if (pl->parallel.dp_sync == DP_SYNC_PS) {
		J->job.ps = &J->ps;
		if (pl->parallel.ps.async)
			J->job.repeat = pl->parallel.ps.iterations;
	}
	for (int i = 0; i < pl->simulation.ndegraded; i++)
		J->deg[i] = (struct platform_degrade){ pl->simulation.degraded[i].link,
						       pl->simulation.degraded[i].bw_factor,
						       pl->simulation.degraded[i].latency_factor };
	J->job.degraded = J->deg;
	J->job.ndegraded = pl->simulation.ndegraded;
	J->job.collective_pairs = pl->simulation.collective_pairs;
	J->job.separate_streams = pl->simulation.separate_streams;
	J->job.collective_flows = pl->simulation.collective_flows;
	_Static_assert((int)LINK_TRAFFIC_EXACT == (int)ENGINE_LINKS_EXACT &&
		       (int)LINK_TRAFFIC_BYTES == (int)ENGINE_LINKS_BYTES &&
		       (int)LINK_TRAFFIC_OFF == (int)ENGINE_LINKS_OFF, "one order");
	J->job.links = (enum engine_links)pl->simulation.link_traffic;
	J->job.rank_prog = P->grp.rank_prog;
	if (P->grp.rank_group)
		job_groups_overlap(J, pl, P);
	/* folded by classes of GPUs: one replica simulated for each (fold.c) */
	J->job.replica_class = fold && P->grp.nclasses > 1 ? P->grp.replica_class : NULL;
	J->thr = whatif_throttle_windows(pl, topo, place->nranks, &J->job.nthrottle);
	J->job.throttle = J->thr;
	J->job.distinct = distinct;
	J->job.fold_partial_tree = fold && classes;
}

/* What a run prepares before the engine starts, and an estimate too:
 * the placement, the programs, the ranks unlike their replicas, the
 * folding decision and the engine job. */
struct prepared {
	struct placement place;
	struct programs P;
	struct job_parts J;
	unsigned char *distinct;
	bool any_distinct;
	const char *fold_advice;        /* static, simulate_fold_decide() */
};

static void prepared_finish(struct prepared *x, int npp)
{
	free(x->J.thr);
	free(x->J.sm_work);
	for (int k = 0; k < PLAN_MAX_NODE_GROUPS; k++)
		free(x->J.grp_sm_work[k]);
	free(x->distinct);
	programs_finish(&x->P, npp);
}

/* Prepare plan pl on in into x (r: the result begun by result_begin()).
 * Returns 0 or -1 (reported); x is to be finished either way. */
static int prepare(const struct inputs *in, const struct plan *pl,
		   const struct engine_observer *obs, struct prepared *x, struct result *r,
		   struct diag *d)
{
	const struct topology *topo = inputs_topology(in);
	bool fold = false, exact = false, classes = false;

	if (placement_init_ep(&x->place, pl->parallel.tp, pl->parallel.cp, pl->parallel.ep, pl->parallel.dp,
			      pl->parallel.pp, pl->parallel.order))
		return diag_errf(d, "invalid rank order '%s'", pl->parallel.order);
	if (placement_set_etp(&x->place, plan_etp(pl)))
		return diag_errf(d, "expert tensor parallelism etp = %d: expected 1 or tp = %d, pp outermost",
				 plan_etp(pl), pl->parallel.tp);
	if (placement_set_shard(&x->place, pl->parallel.shard_group))
		return diag_errf(d, "shard group of %d GPUs does not divide the %d data-parallel ranks",
				 pl->parallel.shard_group, pl->parallel.dp * pl->parallel.cp);
	if (build_programs(in, pl, &x->place, &x->P, r, d))
		return -1;
	/* stragglers, GPUs throttled on their own (not the whole job) and the
	 * GPUs whose traffic can cross a degraded link make their replicas
	 * differ: cheap folding simulates those replicas whole (fold.c,
	 * partial folding); exact folding does not fold them */
	x->distinct = whatif_distinct_ranks(pl, topo, x->place.nranks, &x->any_distinct);
	if (simulate_fold_decide(in, pl, &x->place, x->P.progs, x->P.grp.nclasses, x->any_distinct, r,
				 &fold, &exact, &classes, &x->fold_advice, d))
		return -1;
	job_init(&x->J, in, pl, &x->place, &x->P, fold, exact, classes,
		 x->any_distinct ? x->distinct : NULL, obs);
	return 0;
}

#define ALL_DISTINCT_REASON "every data-parallel replica holds a straggler, a throttled GPU or a " \
			    "GPU behind a degraded link: nothing left to fold"
#define ALL_CLASSES_REASON "every data-parallel replica has a rank or traffic on the partly " \
			   "filled leaf or pod of the fat tree: nothing left to fold"
#define ALL_GPU_CLASSES_REASON "every data-parallel replica stands for a class of GPUs (node " \
			       "groups with different GPUs) or is simulated whole: nothing left to fold"

/* Why a folded run x that simulates every rank is not folded after all
 * (partial or class folding made every replica whole), NULL if it is. */
static const char *all_whole_reason(const struct prepared *x, bool folded, int simulated, int ranks)
{
	if (!folded || simulated < ranks)
		return NULL;
	return x->J.job.replica_class ? ALL_GPU_CLASSES_REASON : x->any_distinct ? ALL_DISTINCT_REASON
	       : x->J.job.fold_partial_tree ? ALL_CLASSES_REASON : NULL;
}

/* The estimate of the prepared run x (r: its result so far) into *e.
 * Returns 0 or -1 (reported). */
static int estimate_prepared(const struct plan *pl, struct prepared *x, const struct result *r,
			     struct estimate *e, struct diag *d)
{
	memset(e, 0, sizeof(*e));
	if (estimate_job(&x->J.job, e, d))
		return -1;
	e->runs = 1 + whatif_side_runs(pl);
	e->folded = r->folded;
	e->fold_reason = r->fold_reason;
	e->fold_advice = x->fold_advice;
	const char *whole = all_whole_reason(x, r->folded, e->simulated, e->ranks);
	if (whole) {
		e->folded = false;
		e->fold_reason = whole;
		e->fold_advice = x->J.job.replica_class ? "more data-parallel replicas of each class "
							  "of GPUs"
				 : x->any_distinct ? "fewer stragglers, throttled GPUs or degraded links, "
						     "or fewer nodes"
				 : "a node count that fills whole leaves and pods";
	}
	estimate_time(e);
	return 0;
}

/* Tell h->before the run's estimate, when it can be made (a plan the
 * estimate cannot make is the engine's to report). */
static void before_engine(const struct plan *pl, struct prepared *x, const struct result *r,
			  const struct simulate_hooks *h)
{
	struct estimate e;
	struct diag quiet;
	if (!h || !h->before)
		return;
	diag_init(&quiet, NULL);
	if (!estimate_prepared(pl, x, r, &e, &quiet))
		h->before(h->ctx, &e);
	diag_finish(&quiet);
}

/* The figures of the prepared run x from the engine's result in r.
 * Returns 0 or -1 (reported: figures out of bounds). */
static int derive(const struct inputs *in, const struct plan *pl, struct prepared *x,
		  struct result *r, struct diag *d)
{
	for (int i = 0; i < r->eng->nranks; i++)
		r->throttle_s += r->eng->rank[i].throttle_s;
	const char *whole = all_whole_reason(x, r->folded, r->eng->nsimulated, r->eng->nranks);
	if (whole) {
		r->folded = false;
		r->fold_reason = whole;
	}
	simulate_derive_speed(in, pl, r);
	simulate_derive_memory(in, pl, &x->place, &x->P.grp, r);
	simulate_derive_training(pl, r);
	if (simulate_check_figures(in, r, d))
		return -1;
	simulate_rank0_groups(pl, &x->place, inputs_topology(in), r);
	simulate_whole_replicas(&x->place, r);
	return 0;
}

int simulate_run_hooked(const struct inputs *in, const struct plan *pl, const struct simulate_hooks *h,
			struct result *r, struct diag *d)
{
	struct prepared x = { 0 };
	int rc = -1;
	double t0 = now_s();

	result_begin(in, pl, r);
	if (prepare(in, pl, h ? h->obs : NULL, &x, r, d) || simulate_describe_cost(in, pl, r, d))
		goto out;
	before_engine(pl, &x, r, h);
	if (whatif_run(pl, &x.J.job, r, d))
		goto out;
	rc = derive(in, pl, &x, r, d);
out:
	r->sim_wall_s = now_s() - t0;
	prepared_finish(&x, pl->parallel.pp);
	return rc;
}

int simulate_run_observed(const struct inputs *in, const struct plan *pl,
			  const struct engine_observer *obs, struct result *r, struct diag *d)
{
	struct simulate_hooks h = { .obs = obs };
	return simulate_run_hooked(in, pl, &h, r, d);
}

bool simulate_can_share(const struct plan *pl)
{
	return pl->parallel.dp_sync != DP_SYNC_PS && !pl->simulation.ndegraded && !pl->simulation.nthrottle &&
	       !plan_has_stragglers(pl) && pl->simulation.iterations <= 1;
}

int simulate_run_many(const struct simulate_member *m, int n, const struct topology *fabric,
		      int nodes, struct result *r, struct diag *d)
{
	struct prepared *x = xcalloc((size_t)n + 1, sizeof(*x));
	struct plan *pl = xcalloc((size_t)n + 1, sizeof(*pl));
	const struct engine_job **jobs = xcalloc((size_t)n + 1, sizeof(*jobs));
	struct engine_result *out = xcalloc((size_t)n + 1, sizeof(*out));
	int rc = -1, nbegun = 0;
	double t0 = now_s();

	for (int i = 0; i < n; i++) {
		/* every rank simulated, every all-to-all pair by pair: a job's
		 * ranks stand only for themselves beside another job's flows
		 * (engine_run_many) */
		pl[i] = *m[i].pl;
		pl[i].simulation.fold = FOLD_OFF;
		pl[i].simulation.collective_pairs = true;
		result_begin(m[i].in, &pl[i], &r[i]);
		nbegun++;
		if (prepare(m[i].in, &pl[i], NULL, &x[i], &r[i], d) ||
		    simulate_describe_cost(m[i].in, &pl[i], &r[i], d))
			goto out;
		if (!simulate_can_share(&pl[i])) {
			diag_errf(d, "job %d of %d: parameter servers, degraded links, throttled GPUs, "
				  "stragglers or sampled iterations cannot share a fabric (yet): "
				  "simulate that job alone", i + 1, n);
			goto out;
		}
		x[i].J.job.topo = fabric;
		x[i].J.job.nodes = nodes;
		x[i].J.job.gpu = m[i].gpu;
		jobs[i] = &x[i].J.job;
	}
	if (engine_run_many(jobs, n, out, d))
		goto out;
	for (int i = 0; i < n; i++) {
		*r[i].eng = out[i];
		memset(&out[i], 0, sizeof(out[i]));
		if (derive(m[i].in, &pl[i], &x[i], &r[i], d))
			goto out;
	}
	rc = 0;
out:
	for (int i = 0; i < n; i++) {
		engine_result_finish(&out[i]);
		if (i < nbegun) {
			r[i].sim_wall_s = now_s() - t0;
			prepared_finish(&x[i], pl[i].parallel.pp);
		}
	}
	for (int i = nbegun; i < n; i++)
		memset(&r[i], 0, sizeof(r[i]));
	free(out);
	free(jobs);
	free(pl);
	free(x);
	return rc;
}

int simulate_estimate(const struct inputs *in, const struct plan *pl, struct estimate *e,
		      struct diag *d)
{
	struct prepared x = { 0 };
	struct result r;
	int rc = -1;

	memset(e, 0, sizeof(*e));
	result_begin(in, pl, &r);
	if (!prepare(in, pl, NULL, &x, &r, d) && !estimate_prepared(pl, &x, &r, e, d))
		rc = 0;
	prepared_finish(&x, pl->parallel.pp);
	result_finish(&r);
	return rc;
}

void simulate_row(const struct inputs *in, const struct plan *pl, struct result_row *row)
{
	struct result r;
	struct diag d;

	diag_init(&d, NULL);
	if (simulate_run(in, pl, &r, &d)) {
		result_row_fail(row, RESULT_FAILED, diag_text(&d));
		row->plan = *pl;
	} else {
		result_row_fill(row, &r);
		result_finish(&r);
	}
	diag_finish(&d);
}
