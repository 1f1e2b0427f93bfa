/* simulate: inputs + plan -> programs -> engine -> result (see
 * simulate.h).
 *
 * simulate_run_observed in phases: the stage programs (builders.h; per
 * GPU type on mixed clusters), the per-kernel table, whether and how to
 * fold (fold_decide), which ranks differ from their replicas, the engine
 * job, the what-if side runs (whatif.h) and the reported run, then the
 * figures derived from the engine's result. */
#include "simulate.h"

#include <math.h>
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

/* One row of the per-kernel table. */
static void put_op(struct result *r, struct cost *cost, const char *block, enum op_pass pass,
		   const struct op *op)
{
	struct op_timing *o = &r->ops[r->nops++];
	bool measured = false;
	memset(o, 0, sizeof(*o));
	snprintf(o->block, sizeof(o->block), "%s", block);
	snprintf(o->pass, sizeof(o->pass), "%s", pass == PASS_FWD ? "fwd" : "bwd");
	snprintf(o->name, sizeof(o->name), "%s", op->name);
	o->m = op->m, o->n = op->n, o->k = op->k, o->batch = op->batch;
	o->flops = op->flops;
	o->bytes = op->bytes;
	o->kernels = op_launches(op);
	o->time_s = cost_op_time_ex(cost, op, &measured);
	o->measured = measured;
}

/* A convolutional network's table: every layer's kernels, one
 * micro-batch, as the plan's stack runs them (stack.h cnn). */
static int collect_cnn_ops(const struct inputs *in, const struct plan *pl, struct cost *cost,
			   struct result *r)
{
	struct cnn_net net;
	enum cnn_fusion fu = plan_stack(pl)->cnn;
	if (cnn_build(inputs_model(in), &net))
		return -1;
	int rc = 0;
	for (int i = 0; i < net.n && !rc; i++)
		for (int pass = PASS_FWD; pass <= PASS_BWD && !rc; pass++) {
			struct op_list l;
			op_list_init(&l);
			rc = cnn_layer_ops(&net.v[i], (double)pl->training.micro_batch, pl->training.precision, pass,
					   i == 0, fu, &l);
			r->ops = xreallocarray(r->ops, (size_t)(r->nops + l.n), sizeof(*r->ops));
			for (int j = 0; j < l.n && !rc; j++)
				put_op(r, cost, net.v[i].name, pass, &l.v[j]);
			op_list_finish(&l);
		}
	cnn_net_finish(&net);
	return rc;
}

/* The per-kernel table of the report: every op of every block, one
 * micro-batch, priced again by the same (deterministic) cost source. */
static int collect_ops(const struct inputs *in, const struct plan *pl, struct cost *cost,
		       struct result *r)
{
	const struct model *m = inputs_model(in);
	struct wl_shape shp = plan_wl_shape(pl);
	if (m->arch == MODEL_ARCH_CNN)
		return collect_cnn_ops(in, pl, cost, r);
	for (int b = 0; b < WL_NBLOCKS; b++)
		for (int pass = PASS_FWD; pass <= PASS_BWD; pass++) {
			struct op_list l;
			op_list_init(&l);
			if (workload_block(m, &shp, b, pass, RECOMPUTE_NONE, &l)) {
				op_list_finish(&l);
				return -1;
			}
			r->ops = xreallocarray(r->ops, (size_t)(r->nops + l.n), sizeof(*r->ops));
			for (int i = 0; i < l.n; i++)
				put_op(r, cost, wl_block_name(b), pass, &l.v[i]);
			op_list_finish(&l);
		}
	return 0;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Mixed clusters (plan node_groups): per group, the inputs priced for its
 * GPU and the programs of the stages its ranks hold; each rank's program. */
struct groups_built {
	struct inputs *vin[PLAN_MAX_NODE_GROUPS];      /* owned variants (NULL: the base) */
	struct program *prog[PLAN_MAX_NODE_GROUPS];    /* [pp] each, NULL: none built */
	struct program **rank_prog;                    /* [nranks] */
	double mem_worst[PLAN_MAX_NODE_GROUPS];        /* fullest stage on the group's GPU */
	double mem_capacity[PLAN_MAX_NODE_GROUPS];
	bool mem_fits[PLAN_MAX_NODE_GROUPS];
};

static void groups_finish(struct groups_built *g, int pp)
{
	for (int k = 0; k < PLAN_MAX_NODE_GROUPS; k++) {
		for (int s = 0; g->prog[k] && s < pp; s++)
			program_finish(&g->prog[k][s]);
		free(g->prog[k]);
		inputs_destroy(g->vin[k]);
	}
	free(g->rank_prog);
}

/* Whether two programs have the same tasks (kind, stream, group) in the
 * same order: ranks of one stage on different GPUs must replay the same
 * schedule with other times. */
static bool same_shape(const struct program *a, const struct program *b)
{
	if (a->n != b->n)
		return false;
	for (int i = 0; i < a->n; i++)
		if (a->t[i].kind != b->t[i].kind || a->t[i].stream != b->t[i].stream ||
		    a->t[i].group != b->t[i].group)
			return false;
	return true;
}

/* Build each group's programs (priced by its GPU's roofline, or by the
 * job's cost source where the GPU is the topology's) and point every rank
 * at its own; each stage's memory becomes the fullest of its GPUs
 * against that GPU's HBM (r->stage[s].mem, r->fits). */
static int build_groups(const struct inputs *in, const struct plan *pl,
			const struct placement *place, struct program *base, struct groups_built *g,
			struct result *r, struct diag *d)
{
	const struct topology *topo = inputs_topology(in);
	int nranks = place->nranks;
	bool *need = xcalloc((size_t)PLAN_MAX_NODE_GROUPS * pl->parallel.pp, sizeof(*need));
	int *rg = xreallocarray(NULL, (size_t)nranks, sizeof(*rg));
	double *cfwd = xcalloc((size_t)PLAN_MAX_NODE_GROUPS * pl->parallel.pp, sizeof(*cfwd));
	double *cbwd = xcalloc((size_t)PLAN_MAX_NODE_GROUPS * pl->parallel.pp, sizeof(*cbwd));
	int rc = -1;

	for (int q = 0; q < nranks; q++) {
		int c[DIM_N];
		placement_coords(place, q, c);
		rg[q] = plan_node_group(pl, topology_node_of(topo, q));
		BUG_ON(rg[q] < 0, "rank %d on node %d outside the node groups", q, topology_node_of(topo, q));
		need[rg[q] * pl->parallel.pp + c[DIM_PP]] = true;
	}
	for (int s = 0; s < pl->parallel.pp; s++)
		r->stage[s].mem.fits = true;
	bool first[PLAN_MAX_STAGES];
	for (int s = 0; s < pl->parallel.pp; s++)
		first[s] = true;
	for (int k = 0; k < pl->ngroups; k++) {
		const struct inputs *cin = in;
		bool any = false;
		for (int s = 0; s < pl->parallel.pp; s++)
			any |= need[k * pl->parallel.pp + s];
		if (!any)
			continue;
		if (memcmp(&pl->group[k].gpu, &topo->gpu, sizeof(topo->gpu)) != 0) {
			g->vin[k] = inputs_with_gpu(in, &pl->group[k].gpu);
			if (!g->vin[k]) {
				diag_errf(d, "out of memory for node group %d", k);
				goto out;
			}
			cin = g->vin[k];
		}
		g->prog[k] = xcalloc((size_t)pl->parallel.pp, sizeof(*g->prog[k]));
		g->mem_fits[k] = true;
		for (int s = 0; s < pl->parallel.pp; s++) {
			struct stage_result sr;
			program_init(&g->prog[k][s]);
			if (!need[k * pl->parallel.pp + s])
				continue;
			if (simulate_build_program(cin, pl, s, &g->prog[k][s], &sr)) {
				diag_errf(d, "cannot build the program of stage %d on node group %d (%s)", s, k,
					  pl->group[k].gpu.name);
				goto out;
			}
			BUG_ON(!same_shape(&g->prog[k][s], &base[s]),
			       "stage %d's program on GPU '%s' has another shape than on '%s'", s,
			       pl->group[k].gpu.name, topo->gpu.name);
			if (sr.mem.total_bytes > g->mem_worst[k]) {
				g->mem_worst[k] = sr.mem.total_bytes;
				g->mem_capacity[k] = sr.mem.capacity_bytes;
			}
			g->mem_fits[k] = g->mem_fits[k] && sr.mem.fits;
			cfwd[k * pl->parallel.pp + s] = sr.compute_fwd_s;
			cbwd[k * pl->parallel.pp + s] = sr.compute_bwd_s;
			/* memory: the stage's fullest GPU, relative to its own HBM */
			struct mem_anatomy *mm = &r->stage[s].mem;
			if (first[s] || sr.mem.total_bytes - sr.mem.capacity_bytes >
					mm->total_bytes - mm->capacity_bytes) {
				bool fits = first[s] ? sr.mem.fits : mm->fits && sr.mem.fits;
				*mm = sr.mem;
				mm->fits = fits;
			} else
				mm->fits = mm->fits && sr.mem.fits;
			first[s] = false;
		}
	}
	/* the stage's compute figures: its first rank's GPU */
	for (int s = 0; s < pl->parallel.pp; s++) {
		int k = rg[placement_rank(place, 0, 0, s)];
		r->stage[s].compute_fwd_s = cfwd[k * pl->parallel.pp + s];
		r->stage[s].compute_bwd_s = cbwd[k * pl->parallel.pp + s];
	}
	g->rank_prog = xreallocarray(NULL, (size_t)nranks, sizeof(*g->rank_prog));
	for (int q = 0; q < nranks; q++) {
		int c[DIM_N];
		placement_coords(place, q, c);
		g->rank_prog[q] = &g->prog[rg[q]][c[DIM_PP]];
	}
	rc = 0;
out:
	free(need);
	free(rg);
	free(cfwd);
	free(cbwd);
	return rc;
}

/* The node groups of the report, in node order (result.h). */
static void group_stats(const struct plan *pl, const struct placement *place,
			const struct topology *topo, const struct groups_built *gb, struct result *r)
{
	int node = 0;
	r->ngroups = 0;
	while (node < pl->nodes && r->ngroups < PLAN_MAX_NODE_GROUPS) {
		int k = plan_node_group(pl, node);
		struct group_result *gr = &r->group[r->ngroups];
		r->group_index[r->ngroups++] = k;
		memset(gr, 0, sizeof(*gr));
		snprintf(gr->gpu, sizeof(gr->gpu), "%s", pl->group[k].gpu.name);
		gr->first_node = node;
		gr->nodes = pl->group[k].nodes;
		gr->first_rank = node * topo->gpus_per_node;
		gr->ranks = gr->nodes * topo->gpus_per_node;
		gr->stage_lo = gr->stage_hi = -1;
		gr->fits = gb->mem_fits[k];
		gr->worst_total_bytes = gb->mem_worst[k];
		gr->capacity_bytes = gb->mem_capacity[k];
		for (int q = gr->first_rank; q < gr->first_rank + gr->ranks && q < r->eng->nranks; q++) {
			int c[DIM_N];
			placement_coords(place, q, c);
			int s = c[DIM_PP];
			if (gr->stage_lo < 0 || s < gr->stage_lo)
				gr->stage_lo = s;
			if (s > gr->stage_hi)
				gr->stage_hi = s;
			for (int cat = 0; cat < CAT_N; cat++)
				gr->compute_s += r->eng->rank[q].compute_s[cat] / gr->ranks;
		}
		node += gr->nodes;
	}
}

int simulate_run(const struct inputs *in, const struct plan *pl, struct result *r,
		 struct diag *d)
{
	return simulate_run_observed(in, pl, NULL, r, d);
}
/* Why a run is not folded (why NULL if nothing stops it): said in the
 * report and after the summary, because an unfolded run of many ranks is
 * slow and the user may prefer simulation.fold "on" or "exact" (not
 * exact there); advice: what would let it fold or shorten it, said
 * before a long run (estimate.h). Static strings. */
struct fold_why {
	const char *why, *advice;
};

#define FOLD_ON_ADVICE "simulation.fold \"on\" folds it (within a few % of every rank " \
		       "simulated: docs/howto.md)"

static struct fold_why fold_reason(const struct plan *pl, const struct topology *t, bool tree_pp,
				   bool drift)
{
	bool rail = t->fabric == FABRIC_RAIL;
	if (pl->simulation.fold == FOLD_OFF)
		return (struct fold_why){ "simulation.fold is \"off\"",
					  "set simulation.fold to \"auto\" (one data-parallel replica "
					  "simulated for all)" };
	if (pl->simulation.fold == FOLD_EXACT && tree_pp)
		return (struct fold_why){ "a tree all-reduce with a pipeline loads its members' NICs "
					  "unequally, so the replicas' timelines differ: \"exact\" "
					  "simulates every rank", FOLD_ON_ADVICE };
	if (pl->simulation.fold == FOLD_EXACT && drift)
		return (struct fold_why){ "a pipeline of more than 2 stages with data-parallel groups "
					  "whose members' paths differ (a ring over several leaves) lets "
					  "the replicas' timelines drift apart: \"exact\" simulates "
					  "every rank", FOLD_ON_ADVICE };
	if ((long)pl->parallel.tp * pl->parallel.cp * pl->parallel.dp <= 1)
		return (struct fold_why){ "one rank per pipeline stage: nothing to fold",
					  "a smaller global batch (fewer micro-batches)" };
	if (pl->parallel.dp_sync == DP_SYNC_PS)
		return (struct fold_why){ "parameter servers: the replicas' pushes and pulls are not "
					  "identical", "simulate fewer nodes (asynchronous servers: "
					  "fewer parallel.ps.iterations)" };
	if (plan_mixed_gpus(pl))
		return (struct fold_why){ "node groups with different GPUs make the replicas differ",
					  "simulate fewer nodes" };
	if (!topology_is_symmetric(t, pl->nodes))
		return (struct fold_why){
			rail ? "the rail fabric is not symmetric at this node count (a partly filled "
			       "rail switch)"
			     : "the fat tree is not symmetric at this node count (a partly filled leaf "
			       "or pod)",
			rail ? "simulation.fold \"on\" folds it anyway (the replicas' paths taken as "
			       "alike), or a node count that fills whole rail switches"
			     : "simulation.fold \"on\" folds it anyway (the replicas' paths taken as "
			       "alike), or a node count that fills whole leaves and pods" };
	if (t->fabric != FABRIC_NONBLOCKING && !strcmp(pl->communication.coll_algo, "tree"))
		return (struct fold_why){ "a forced tree all-reduce across switches is not folded "
					  "exactly", "communication.algorithm \"auto\" or \"ring\" "
					  "folds it, as does simulation.fold \"on\"" };
	return (struct fold_why){ NULL, NULL };
}


/* How the gradient all-reduces of stage 0's program s0 treat the members
 * of rank 0's data-parallel group under the plan's algorithm. */
enum dp_alike {
	DP_ALIKE,          /* same bytes, same path latencies */
	DP_UNEQUAL_BYTES,  /* some move more bytes (coll_plan_busiest): a tree,
			    * forced or chosen by "auto" for some bucket sizes */
	DP_UNEQUAL_PATHS,  /* equal bytes, but some members' flows cross more
			    * switch levels (a ring over several leaves) */
};

static int dp_reduce_alike(const struct topology *t, const struct plan *pl,
			   const struct placement *place, const struct program *s0)
{
	int *mem = xreallocarray(NULL, (size_t)place->nranks + 1, sizeof(*mem));
	int n = placement_group(place, GROUP_DP, 0, mem), rc = DP_ALIKE;
	int *at = xreallocarray(NULL, (size_t)place->nranks + 1, sizeof(*at));
	double (*lat)[2] = xcalloc((size_t)n + 1, sizeof(*lat));
	double last = -1;   /* buckets of one size have one plan */
	for (int k = 0; k < n; k++)
		at[mem[k]] = k;
	for (int i = 0; i < s0->n && n > 1 && rc != DP_UNEQUAL_BYTES; i++) {
		const struct task *k = &s0->t[i];
		if (k->kind != TASK_COLL || k->group != GROUP_DP || k->op != COLL_ALLREDUCE ||
		    k->bytes <= 0 || k->bytes * k->count == last)
			continue;
		last = k->bytes * k->count;
		struct coll_plan *cp = coll_plan_create(t, pl->communication.coll_algo, COLL_ALLREDUCE, mem, n, last);
		if (!cp) {
			rc = -1;
			break;
		}
		if (coll_plan_busiest(cp) >= 0)
			rc = DP_UNEQUAL_BYTES;
		/* the slowest path out of and into each member */
		memset(lat, 0, (size_t)n * sizeof(*lat));
		for (int f = 0; f < cp->nflows && rc == DP_ALIKE; f++) {
			const struct coll_flow *fl = &cp->flows[f];
			double l = topology_path_latency(t, fl->src, fl->dst);
			lat[at[fl->src]][0] = fmax(lat[at[fl->src]][0], l);
			lat[at[fl->dst]][1] = fmax(lat[at[fl->dst]][1], l);
		}
		for (int m = 1; m < n && rc == DP_ALIKE; m++)
			if (fabs(lat[m][0] - lat[0][0]) > 1e-12 || fabs(lat[m][1] - lat[0][1]) > 1e-12)
				rc = DP_UNEQUAL_PATHS;
		coll_plan_destroy(cp);
	}
	free(lat);
	free(at);
	free(mem);
	return rc;
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
	groups_finish(&P->grp, npp);
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
	if (pl->ngroups > 0 && build_groups(in, pl, place, P->progs, &P->grp, r, d))
		return -1;
	return 0;
}

/* The per-kernel table of the report and the cost source's names.
 * Returns 0 or -1 (reported). */
static int describe_cost(const struct inputs *in, const struct plan *pl, struct result *r,
			 struct diag *d)
{
	struct cost *cost = inputs_cost(in);
	if (collect_ops(in, pl, cost, r))
		return diag_errf(d, "cannot list the kernels of the model");
	r->cost_source = cost_name(cost);
	r->cost_detail = xstrdup(cost_describe(cost));
	const char *names;
	cost_measured_ops(cost, &names);
	r->measured_ops = xstrdup(names);
	cost_roofline_ops(cost, &names);
	r->roofline_ops = xstrdup(names);
	return 0;
}

/* Whether to fold (r->folded, r->fold_reason; *fold). Folding needs
 * identical replicas and a symmetric fabric: decided from the fabric's
 * symmetry under this node count, not from its kind.
 * "auto" and "on" fold cheaply: the representative's own flows, daemon
 * sinks for its folded peers, and where a plan loads its members
 * unequally (a tree) the flows around its busiest member too (fold.c,
 * plan_crit), the representative a replica of the trees' most common
 * member (fold.c, majority_replica): within about 1e-4 of the
 * unfolded run for ring and auto up to 64 nodes; with a pipeline the
 * replicas run in lockstep, their messages and buckets aligned, which
 * the unfolded replicas are not: +0.07 to +3.3 % with rings (Llama 3
 * 8B, TP 8 x PP 4..16 x DP 16..64 on the 3-level fat tree), +3.9 %
 * and +6.3 % with trees (PP 16 x DP 32 forced, PP 16 x DP 128 auto,
 * where a light representative read -1.0 % and -9.6 %). "exact"
 * (fold.c) posts whole groups and the mirror traffic that
 * can meet simulated flows, equal to the unfolded run to 1e-9
 * (tests/test-fold.c) at up to 2.4x the time (megatron-1t) and far
 * more where groups share nodes (TP 4 on 8-GPU nodes: 60x). One case
 * is not exact even so, and "exact" simulates every rank there: a
 * tree with a pipeline, forced or chosen by "auto" for some bucket
 * sizes (dp_reduce_alike; folded, Llama 3 8B on 2,048 DGX H100,
 * TP 8 x PP 16 x DP 128, read 0.4085 s against 0.4506 s unfolded).
 * A tree loads its members' NICs unequally, so the pipeline messages
 * that share those NICs make the data-parallel replicas' timelines differ (10 DGX A100, TP 8 x DP 5 x
 * PP 2: folded 0.42985 s, unfolded 0.43004 s). "auto" folds exactly
 * (*exact) where a NIC serves several GPUs of a multi-node job: cheap
 * folding posts no flows of the folded ranks themselves, so the
 * representative would have a shared NIC to itself (BLOOM on Jean Zay,
 * two GPUs per Omni-Path port, TP 4 x PP 12 x DP 8: cheap 88.62 s,
 * exact and unfolded 93.02 s). Returns 0 or -1 (reported). */
static int fold_decide(const struct inputs *in, const struct plan *pl, const struct placement *place,
		       const struct program *s0, bool any_distinct, struct result *r, bool *fold,
		       bool *exact, const char **advice, struct diag *d)
{
	const struct topology *topo = inputs_topology(in);
	bool tree_pp = pl->parallel.pp > 1 && pl->parallel.dp > 1 && !strcmp(pl->communication.coll_algo, "tree");
	bool drift = false;
	*exact = pl->simulation.fold == FOLD_EXACT ||
		 (pl->simulation.fold == FOLD_AUTO && pl->nodes > 1 && topo->nics < topo->gpus_per_node);
	if (*exact && !tree_pp && pl->parallel.pp > 1 && pl->parallel.dp > 1 &&
	    pl->parallel.dp_sync != DP_SYNC_PS) {
		int u = dp_reduce_alike(topo, pl, place, s0);
		if (u < 0)
			return diag_errf(d, "cannot plan the gradient all-reduce with algorithm '%s'",
					 pl->communication.coll_algo);
		tree_pp = u == DP_UNEQUAL_BYTES;
		drift = u == DP_UNEQUAL_PATHS && pl->parallel.pp > 2;
	}
	*fold = pl->simulation.fold == FOLD_ON ||
		    (pl->simulation.fold == FOLD_EXACT && !tree_pp && !drift && !any_distinct) ||
		    (pl->simulation.fold == FOLD_AUTO && (!*exact || (!tree_pp && !drift && !any_distinct)) &&
		     pl->parallel.dp_sync != DP_SYNC_PS &&
		     !plan_mixed_gpus(pl) &&
		     topology_is_symmetric(topo, pl->nodes) &&
		     (long)pl->parallel.tp * pl->parallel.cp * pl->parallel.dp > 1 &&
		     /* a forced tree is not exact folded beyond one switch (the
		      * residue of issue 16): simulate every rank */
		     (topo->fabric == FABRIC_NONBLOCKING || strcmp(pl->communication.coll_algo, "tree") != 0));
	struct fold_why w = *fold ? (struct fold_why){ NULL, NULL } : fold_reason(pl, topo, tree_pp, drift);
	*exact = *exact && *fold;
	r->folded = *fold;
	r->fold_reason = w.why;
	*advice = w.advice;
	return 0;
}

/* The engine's job and what it points to. */
struct job_parts {
	struct engine_job job;
	struct engine_ps ps;
	struct platform_degrade deg[PLAN_MAX_DEGRADED];
	struct engine_throttle *thr;    /* owned */
};

/* The share of one layer's compute time (a CNN: the network's) spent in
 * compute-bound kernels (GEMMs, convolutions, fused attention), priced
 * by in's cost source: what a drop of the SM clock slows. */
static double compute_bound_share(const struct inputs *in, const struct plan *pl)
{
	struct cost *cost = inputs_cost(in);
	const struct model *m = inputs_model(in);
	struct wl_shape shp = plan_wl_shape(pl);
	enum cnn_fusion fu = plan_stack(pl)->cnn;
	struct cnn_net net = { 0 };
	double cb = 0, all = 0;
	bool cnn = m->arch == MODEL_ARCH_CNN;
	if (cnn && cnn_build(m, &net))
		return 0;
	int n = cnn ? net.n : 2;
	for (int i = 0; i < n; i++)
		for (int pass = PASS_FWD; pass <= PASS_BWD; pass++) {
			struct op_list l;
			op_list_init(&l);
			int rc = cnn ? cnn_layer_ops(&net.v[i], (double)pl->training.micro_batch,
						     pl->training.precision,
						     pass, i == 0, fu, &l)
				     : workload_block(m, &shp, i ? WL_MLP : WL_ATTN, pass,
						      RECOMPUTE_NONE, &l);
			for (int j = 0; j < l.n && !rc; j++) {
				double t = cost_op_time(cost, &l.v[j]);
				all += t;
				if (l.v[j].kind != OP_MEMBOUND)
					cb += t;
			}
			op_list_finish(&l);
		}
	cnn_net_finish(&net);
	return all > 0 ? cb / all : 0;
}

/* The engine job of plan pl on in: programs, folding, interference,
 * parameter servers, degraded links, throttling, distinct ranks. */
static void job_init(struct job_parts *J, const struct inputs *in, const struct plan *pl,
		     const struct placement *place, const struct programs *P, bool fold, bool exact,
		     const unsigned char *distinct, const struct engine_observer *obs)
{
	const struct topology *topo = inputs_topology(in);
	J->job = (struct engine_job){ .topo = topo, .nodes = pl->nodes, .pl = place,
				      .stage_prog = P->pp, .coll_algo = pl->communication.coll_algo, .fold = fold,
				      .fold_exact = fold && exact,
				      .sm_count = (int)topo->gpu.sm_count,
				      .interference_factor = cost_interference(inputs_cost(in)),
				      .obs = obs };
	double r = topo->gpu.comm_overlap_clock_ratio;
	if (r > 0 && r < 1)
		J->job.overlap_clock_slowdown = 1 + compute_bound_share(in, pl) * (1 / r - 1);
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
	J->job.rank_prog = P->grp.rank_prog;
	J->thr = whatif_throttle_windows(pl, topo, place->nranks, &J->job.nthrottle);
	J->job.throttle = J->thr;
	J->job.distinct = distinct;
}

/* Throughput, FLOPs, MFU/HFU and the MoE figures from the iteration time. */
static void derive_speed(const struct inputs *in, const struct plan *pl, struct result *r)
{
	const struct topology *topo = inputs_topology(in);
	const struct model *m = inputs_model(in);

	r->params = model_params(m);
	r->active_params = model_active_params(m);
	if (model_is_moe(m)) {
		struct wl_shape shp = plan_wl_shape(pl);
		struct moe_balance bal;
		workload_moe_balance(m, &shp, &bal);
		struct precision pr;
		precision_init(&pr, pl->training.precision, false);
		r->moe = true;
		r->moe_imbalance = bal.imbalance;
		r->moe_rank_load = bal.rank_load;
		r->moe_dropped_fraction = 1 - bal.kept_fraction;
		r->moe_a2a_bytes = (double)pl->training.micro_batch * (double)pl->training.seq / pl->parallel.cp /
				   (pl->parallel.sp ? pl->parallel.tp : 1) * (double)m->moe.top_k * bal.rank_load *
				   (double)m->hidden * dtype_bytes(pr.activation) *
				   moe_dispatch_scale(&m->moe, pl->parallel.ep,
						      pl->parallel.tp * pl->parallel.cp, topo->gpus_per_node);
	}
	r->microbatches = (double)plan_microbatches(pl);
	r->iteration_s = r->eng->iteration_s;
	r->samples_per_s = (double)pl->training.global_batch / r->iteration_s;
	r->tokens_per_s = r->samples_per_s * (double)pl->training.seq;
	r->model_flops = finetune_model_flops(m, &pl->training.finetune, (double)pl->training.global_batch,
					      (double)pl->training.seq);
	r->hardware_flops = builders_find(m)->hardware_flops(in, pl);
	r->peak_flops_per_gpu = topo->gpu.peak_flops[pl->training.precision];
	if (pl->ngroups > 0) {
		/* the mean peak of the job's GPUs */
		double sum = 0;
		for (int g = 0; g < pl->ngroups; g++)
			sum += (double)pl->group[g].nodes * pl->group[g].gpu.peak_flops[pl->training.precision];
		r->peak_flops_per_gpu = sum / pl->nodes;
	}
	r->model_tflops_per_gpu = r->model_flops / r->iteration_s / r->gpus / 1e12;
	r->hardware_tflops_per_gpu = r->hardware_flops / r->iteration_s / r->gpus / 1e12;
	r->mfu = r->model_tflops_per_gpu * 1e12 / r->peak_flops_per_gpu;
	r->hfu = r->hardware_tflops_per_gpu * 1e12 / r->peak_flops_per_gpu;

}

/* Memory: the fullest stage against its GPU's HBM, per node group on
 * mixed clusters; the bubble of each stage. */
static void derive_memory(const struct inputs *in, const struct plan *pl,
			  const struct placement *place, const struct groups_built *grp,
			  struct result *r)
{
	const struct topology *topo = inputs_topology(in);

	r->fits = true;
	r->worst_total_bytes = 0;
	for (int s = 0; s < pl->parallel.pp; s++) {
		struct stage_result *sr = &r->stage[s];
		int rank = placement_rank(place, 0, 0, s);
		sr->bubble_s = r->eng->rank[rank].bubble_s;
		sr->bubble_fraction = sr->bubble_s / r->iteration_s;
		if (!sr->mem.fits)
			r->fits = false;
		if (sr->mem.total_bytes > r->worst_total_bytes) {
			r->worst_total_bytes = sr->mem.total_bytes;
			r->worst_stage = s;
		}
	}
	r->shortfall_bytes = r->fits ? 0 : r->worst_total_bytes - topo->gpu.hbm_bytes;
	if (pl->ngroups > 0) {
		/* each stage was checked on every GPU holding it (build_groups()) */
		double worst = -INFINITY;
		for (int s = 0; s < pl->parallel.pp; s++) {
			const struct mem_anatomy *mm = &r->stage[s].mem;
			if (mm->total_bytes - mm->capacity_bytes > worst) {
				worst = mm->total_bytes - mm->capacity_bytes;
				r->worst_stage = s;
				r->worst_total_bytes = mm->total_bytes;
			}
		}
		r->shortfall_bytes = r->fits ? 0 : worst;
		group_stats(pl, place, topo, grp, r);
	}
}

/* Bytes sent per GPU and the time and cost to train. */
static void derive_training(const struct plan *pl, struct result *r)
{
	for (int k = 0; k < CAT_N; k++) {
		double sum = 0;
		for (int i = 0; i < r->eng->nranks; i++)
			sum += r->eng->rank[i].sent_bytes[k];
		r->comm_bytes_per_gpu[k] = sum / r->eng->nranks;
	}
	if (pl->training.train_tokens > 0) {
		r->time_to_train_s = pl->training.train_tokens / r->tokens_per_s;
		r->gpu_hours = r->time_to_train_s / 3600 * r->gpus;
		r->cost_usd = r->gpu_hours * pl->cost.usd_per_gpu_hour;
	}
}

/* A figure that reaches a report is finite and not negative: 0, or -1
 * (reported) naming the first that is not. */
static int check_figures(const struct inputs *in, const struct result *r, struct diag *d)
{
	const struct { const char *name; double v; } figs[] = {
		{ "iteration_time_s", r->iteration_s }, { "tokens_per_s", r->tokens_per_s },
		{ "mfu", r->mfu }, { "hfu", r->hfu }, { "memory total", r->worst_total_bytes },
		{ "time_to_train_s", r->time_to_train_s }, { "cost_usd", r->cost_usd },
	};
	for (size_t i = 0; i < sizeof(figs) / sizeof(figs[0]); i++)
		if (!isfinite(figs[i].v) || figs[i].v < 0)
			return diag_errf(d, "the simulation derived %s = %g from topology '%s' and model '%s': "
					 "an input is out of range (a peak, a bandwidth or a price too large or zero)",
					 figs[i].name, figs[i].v, inputs_topology_path(in), inputs_model_path(in));
	return 0;
}

/* Rank 0's groups, whole, and the link classes each crosses. */
static void rank0_groups(const struct plan *pl, const struct placement *place,
			 const struct topology *topo, struct result *r)
{
	r->tp_group0 = xcalloc((size_t)pl->parallel.tp, sizeof(int));
	r->dp_group0 = xcalloc((size_t)pl->parallel.dp * pl->parallel.cp, sizeof(int));
	r->cp_group0 = xcalloc((size_t)pl->parallel.cp, sizeof(int));
	r->pp_ranks0 = xcalloc((size_t)pl->parallel.pp, sizeof(int));
	r->ntp0 = placement_group(place, GROUP_TP, 0, r->tp_group0);
	r->ndp0 = placement_group(place, GROUP_DP, 0, r->dp_group0);
	r->npp0 = pl->parallel.pp;
	for (int s = 0; s < pl->parallel.pp; s++)
		r->pp_ranks0[s] = placement_stage_peer(place, 0, s);
	r->ncp0 = placement_group(place, GROUP_CP, 0, r->cp_group0);
	BUG_ON(r->ntp0 != pl->parallel.tp || r->ndp0 != pl->parallel.dp * pl->parallel.cp ||
	       r->ncp0 != pl->parallel.cp,
	       "placement groups of %d, %d and %d ranks for tp %d, dp %d, cp %d",
	       r->ntp0, r->ndp0, r->ncp0, pl->parallel.tp, pl->parallel.dp, pl->parallel.cp);
	topology_group_links(topo, r->cp_group0, r->ncp0, r->links_cp, sizeof(r->links_cp));
	topology_group_links(topo, r->tp_group0, r->ntp0, r->links_tp, sizeof(r->links_tp));
	topology_group_links(topo, r->dp_group0, r->ndp0, r->links_dp, sizeof(r->links_dp));
	topology_group_links(topo, r->pp_ranks0, r->npp0, r->links_pp, sizeof(r->links_pp));
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
	const char *fold_advice;        /* static, fold_decide() */
};

static void prepared_finish(struct prepared *x, int npp)
{
	free(x->J.thr);
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
	bool fold = false, exact = false;

	if (placement_init_ep(&x->place, pl->parallel.tp, pl->parallel.cp, pl->parallel.ep, pl->parallel.dp,
			      pl->parallel.pp, pl->parallel.order))
		return diag_errf(d, "invalid rank order '%s'", pl->parallel.order);
	if (build_programs(in, pl, &x->place, &x->P, r, d))
		return -1;
	/* stragglers, GPUs throttled on their own (not the whole job) and the
	 * GPUs whose traffic can cross a degraded link make their replicas
	 * differ: cheap folding simulates those replicas whole (fold.c,
	 * partial folding); exact folding does not fold them */
	x->distinct = whatif_distinct_ranks(pl, topo, x->place.nranks, &x->any_distinct);
	if (fold_decide(in, pl, &x->place, &x->P.progs[0], x->any_distinct, r, &fold, &exact,
			&x->fold_advice, d))
		return -1;
	job_init(&x->J, in, pl, &x->place, &x->P, fold, exact, x->any_distinct ? x->distinct : NULL, obs);
	return 0;
}

#define ALL_DISTINCT_REASON "every data-parallel replica holds a straggler, a throttled GPU or a " \
			    "GPU behind a degraded link: nothing left to fold"

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
	if (r->folded && x->any_distinct && e->simulated == e->ranks) {
		e->folded = false;
		e->fold_reason = ALL_DISTINCT_REASON;
		e->fold_advice = "fewer stragglers, throttled GPUs or degraded links, or fewer nodes";
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

int simulate_run_hooked(const struct inputs *in, const struct plan *pl, const struct simulate_hooks *h,
			struct result *r, struct diag *d)
{
	struct prepared x = { 0 };
	int rc = -1;
	double t0 = now_s();

	result_begin(in, pl, r);
	if (prepare(in, pl, h ? h->obs : NULL, &x, r, d) || describe_cost(in, pl, r, d))
		goto out;
	before_engine(pl, &x, r, h);
	if (whatif_run(pl, &x.J.job, r, d))
		goto out;
	for (int i = 0; i < r->eng->nranks; i++)
		r->throttle_s += r->eng->rank[i].throttle_s;
	if (r->folded && x.any_distinct && r->eng->nsimulated == r->eng->nranks) {
		r->folded = false;
		r->fold_reason = ALL_DISTINCT_REASON;
	}
	derive_speed(in, pl, r);
	derive_memory(in, pl, &x.place, &x.P.grp, r);
	derive_training(pl, r);
	if (check_figures(in, r, d))
		goto out;
	rank0_groups(pl, &x.place, inputs_topology(in), r);
	rc = 0;
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

