/* simulate_fold: whether a run folds (one data-parallel replica simulated
 * for all), and when it does not, why and what would let it. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "simulate-private.h"
#include "xalloc.h"

/* Why a run is not folded (why NULL if nothing stops it): said in the
 * report and after the summary, because an unfolded run of many ranks is
 * slow and the user may prefer simulation.fold "on" or "exact" (not
 * exact there); advice: what would let it fold or shorten it, said
 * before a long run (estimate.h). Static strings. */
struct fold_why {
	const char *why, *advice;
};

#define FOLD_ON_ADVICE "simulation.fold \"on\" folds it cheaply (equal to every rank " \
		       "simulated on fabrics of full bisection, -1.8 to +0.2 % on the " \
		       "oversubscribed trees measured, more where GPUs share a NIC: " \
		       "docs/howto.md)"

/* Whether every link above the NICs has full bisection (one non-blocking
 * switch, or a fat tree without oversubscription): then the replicas share
 * no switch link that one replica's flows could load differently from
 * another's, and under plain max-min sharing (engine_platform.cpp) a
 * tree's unequal member loads and a ring's unequal path latencies leave
 * the replicas' timelines equal. Measured 2026-11-26, simulation.fold "on"
 * against "off", equal to 1e-15: 10 DGX A100 with TP 8 x DP 5 x PP 2 and a
 * forced tree (0.432538966543019 s), Llama 3 8B with TP 8 on the 3-level
 * fat tree with PP 4 x DP 16 and PP 8 x DP 32 forced trees, PP 8 x DP 32
 * and PP 4 x DP 64 auto, PP 16 x DP 16 rings (docs/howto.md). On an
 * oversubscribed tree the uplinks carry the replicas' flows together:
 * cheap folding posts the folded ranks' flows over them (fold_uplink.c). */
static bool full_bisection(const struct topology *t)
{
	return t->fabric == FABRIC_NONBLOCKING || (t->fabric == FABRIC_FAT_TREE && t->ft_oversub <= 1);
}

/* tree_pp, drift, distinct: exact folding refuses the run for that
 * reason; exact: it would fold exactly; cheap_ok: cheap folding takes
 * the partly filled leaf or pod (by classes or as alike), so it is not
 * the reason; mixed: mixed_fold_why()'s refusal (why NULL: none).
 * Every refusal names one (tests/test-fold.c an_unfolded_run_says_why,
 * tests/test-estimate.c). */
static struct fold_why fold_reason(const struct plan *pl, const struct topology *t, bool tree_pp,
				   bool drift, bool distinct, bool exact, bool cheap_ok,
				   struct fold_why mixed)
{
	bool rail = t->fabric == FABRIC_RAIL;
	if (pl->simulation.fold == FOLD_OFF)
		return (struct fold_why){ "simulation.fold is \"off\"",
					  "set simulation.fold to \"auto\" (one data-parallel replica "
					  "simulated for all)" };
	if (distinct)
		return (struct fold_why){ "a straggler, a throttled GPU or a degraded link makes its "
					  "replicas differ, which exact folding does not simulate whole: "
					  "it simulates every rank", FOLD_ON_ADVICE };
	if (tree_pp)
		return (struct fold_why){ "a tree all-reduce with a pipeline loads its members "
					  "unequally, which the whole groups \"exact\" posts do not "
					  "reproduce: it simulates every rank", FOLD_ON_ADVICE };
	if (drift)
		return (struct fold_why){ "a pipeline of more than 2 stages with data-parallel groups "
					  "whose members' paths differ (a ring over several leaves of an "
					  "oversubscribed tree) lets the replicas' timelines drift apart: "
					  "\"exact\" simulates every rank", FOLD_ON_ADVICE };
	if ((long)pl->parallel.tp * pl->parallel.cp * pl->parallel.dp <= 1)
		return (struct fold_why){ "one rank per pipeline stage: nothing to fold",
					  "a smaller global batch (fewer micro-batches)" };
	if (pl->parallel.dp_sync == DP_SYNC_PS)
		return (struct fold_why){ "parameter servers: the replicas' pushes and pulls are not "
					  "identical", "simulate fewer nodes (asynchronous servers: "
					  "fewer parallel.ps.iterations)" };
	if (mixed.why)
		return mixed;
	/* a fat tree's partly filled leaf or pod stops only exact folding */
	if (!topology_is_symmetric(t, pl->nodes) && !cheap_ok)
		return (struct fold_why){
			rail ? "the rail fabric is not symmetric at this node count (a partly filled "
			       "rail switch)"
			: full_bisection(t) ? "the fat tree is not symmetric at this node count (a "
					      "partly filled leaf or pod)"
			     : "the oversubscribed fat tree is not symmetric at this node count (a "
			       "partly filled leaf or pod)",
			rail ? "simulation.fold \"on\" folds it anyway (the replicas' paths taken as "
			       "alike), or a node count that fills whole rail switches"
			     : "simulation.fold \"on\" folds it anyway (the replicas' paths taken as "
			       "alike), or a node count that fills whole leaves and pods" };
	if (!full_bisection(t) && !strcmp(pl->communication.coll_algo, "tree") && exact)
		return (struct fold_why){ "a forced tree all-reduce across oversubscribed switches "
					  "where GPUs share a NIC is not folded exactly",
					  "communication.algorithm \"auto\" or \"ring\" folds it, as "
					  "does simulation.fold \"on\"" };
	if (!full_bisection(t) && !strcmp(pl->communication.coll_algo, "tree"))
		return (struct fold_why){ "a forced tree all-reduce on a partly filled leaf or pod of "
					  "an oversubscribed fat tree folds only with at most 2 "
					  "pipeline stages and no straggler",
					  "communication.algorithm \"auto\" or \"ring\" (folded by "
					  "classes), or a node count that fills whole leaves and pods; "
					  "simulation.fold \"on\" folds it anyway (-1.8 % on a case "
					  "measured: docs/howto.md)" };
	assert(!"a refusal without a reason");
	return (struct fold_why){ "no reason known (a bug)", NULL };
}

/* How the gradient all-reduces of program prog (the stage of rank) treat
 * the members of rank's data-parallel group under the plan's algorithm. */
enum dp_alike {
	DP_ALIKE,          /* same bytes, same path latencies */
	DP_UNEQUAL_BYTES,  /* some move more bytes (coll_plan_busiest): a tree,
			    * forced or chosen by "auto" for some bucket sizes */
	DP_UNEQUAL_PATHS,  /* equal bytes, but some members' flows cross more
			    * switch levels (a ring over several leaves) */
};

static int dp_reduce_alike(const struct topology *t, const struct plan *pl,
			   const struct placement *place, const struct program *prog, int rank)
{
	int *mem = xreallocarray(NULL, (size_t)place->nranks + 1, sizeof(*mem));
	int n = placement_group(place, GROUP_DP, rank, mem), rc = DP_ALIKE;
	int *at = xreallocarray(NULL, (size_t)place->nranks + 1, sizeof(*at));
	double (*lat)[2] = xcalloc((size_t)n + 1, sizeof(*lat));
	double last = -1;   /* buckets of one size have one plan */
	for (int k = 0; k < n; k++)
		at[mem[k]] = k;
	for (int i = 0; i < prog->n && n > 1 && rc != DP_UNEQUAL_BYTES; i++) {
		const struct task *k = &prog->t[i];
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

/* Whether the gradient all-reduce of some stage loads its data-parallel
 * members unequally (dp_reduce_alike: DP_UNEQUAL_BYTES, a tree) into
 * *unequal. Returns 0 or -1 (a plan that cannot be made, reported). */
static int some_stage_unequal(const struct topology *t, const struct plan *pl,
			      const struct placement *place, const struct program *progs, bool *unequal,
			      struct diag *d)
{
	*unequal = false;
	for (int s = 0; s < pl->parallel.pp && !*unequal; s++) {
		int u = dp_reduce_alike(t, pl, place, &progs[s], placement_rank(place, 0, 0, s));
		if (u < 0)
			return diag_errf(d, "cannot plan the gradient all-reduce with algorithm '%s'",
					 pl->communication.coll_algo);
		*unequal = u == DP_UNEQUAL_BYTES;
	}
	return 0;
}

/* Class folding, "auto" only: on a fat tree a partly filled leaf or pod
 * changes the sharing of the links near it, and the replicas with a rank
 * or traffic on it, simulated whole (fold_partial.c), make the folded run
 * equal the unfolded one on a tree of full bisection (3-level tree,
 * Llama 3 8B TP 8: 10 nodes PP 2 x DP 5 ring, 132 nodes PP 4 x DP 33 ring
 * and auto, 14 nodes DP 14, equal to 1e-9, tests/test-fold.c). On an
 * oversubscribed tree it stays where "auto" picks trees for some buckets
 * (below); its figures: docs/howto.md, the class-folding table. */
static bool fold_classes(const struct plan *pl, const struct topology *t, bool exact)
{
	return pl->simulation.fold == FOLD_AUTO && !exact && t->fabric == FABRIC_FAT_TREE &&
	       !topology_is_symmetric(t, pl->nodes);
}

/* Whether "auto" folds a partly filled leaf or pod of an oversubscribed
 * fat tree cheaply, as "on" does (the replicas' paths taken as alike),
 * not by classes: with at most 2 pipeline stages, no straggler, and
 * gradient all-reduces that are rings on every stage or a forced tree.
 * There "on" is within the 0.5 % "auto" folds under (docs/howto.md,
 * folding on an oversubscribed tree; measured 2026-12-06 on the 2:1 tree,
 * leaves of 5, Llama 3 8B TP 8, 2 micro-batches a replica: 22 nodes
 * PP 2 x DP 11 -0.115 % ring, -0.126 % auto, -0.233 % tree; 12 nodes
 * PP 2 and 7 and 16 nodes PP 1, rings and trees, equal); by classes a
 * tree read -1.25 % (16 nodes PP 1). With more stages the replicas
 * drift apart by a fixed time (Llama 3 8B, PP 4 x DP 8 on 32 nodes: 0.5
 * ms with rings, 2.4 ms with a forced tree, -0.64 % and -1.77 % of a
 * short iteration) and class folding stays, as it does where "auto"
 * picks trees for some buckets and for the cases not measured. *alike:
 * the answer. Returns 0 or -1 (a plan that cannot be made, reported). */
static int partly_filled_alike(const struct plan *pl, const struct topology *t,
			       const struct placement *place, const struct program *progs,
			       bool any_distinct, bool *alike, struct diag *d)
{
	const char *algo = pl->communication.coll_algo;
	bool tree = !strcmp(algo, "tree");
	*alike = false;
	if (full_bisection(t) || pl->parallel.dp <= 1 || pl->parallel.pp > 2 || any_distinct ||
	    pl->parallel.dp_sync == DP_SYNC_PS || (!tree && strcmp(algo, "ring") && strcmp(algo, "auto")))
		return 0;
	bool unequal = false;
	if (!tree && some_stage_unequal(t, pl, place, progs, &unequal, d))
		return -1;
	*alike = !unequal;
	return 0;
}

/* Mixed GPUs (node groups of different presets), the data-parallel
 * replicas in gpu_classes classes of one GPU signature (the GPU of each
 * of a replica's ranks, in rank order): why "auto" does not fold them,
 * into *w (why NULL: it does). One class (a pipeline's stages on
 * different GPUs, every replica alike) folds as identical replicas do,
 * cheaply. Several fold by classes (fold.c: the first replica of every
 * class but the representative's simulated whole and standing for its
 * class, every TP rank of the representative simulated, as with a
 * straggler's replica) where the fabric has full bisection above the
 * NICs and is symmetric, and the gradient all-reduces load their members
 * equally: the replicas of a class then run alike and the barriers of
 * the simulated members hold each class's pace, equal to every rank
 * simulated to 1e-9 (tests/test-mixed.c: stage-wise and replica-wise
 * mixed GPUs on a non-blocking star; Llama 2 13B on 64 DGX H100 + 64 DGX
 * A100 nodes, docs/howto.md). Not measured, so not folded by "auto":
 * exact folding (GPUs sharing a NIC), oversubscribed or partly filled
 * trees, rails (whose switches the classes load unequally), trees.
 * "on" folds them all by classes. Returns 0 or -1 (reported). */
static int mixed_fold_why(const struct plan *pl, const struct topology *t,
			  const struct placement *place, const struct program *progs, int gpu_classes,
			  bool exact, struct fold_why *w, struct diag *d)
{
	*w = (struct fold_why){ NULL, NULL };
	if (!plan_mixed_gpus(pl) || pl->simulation.fold == FOLD_ON)
		return 0;
	if (exact) {
		*w = (struct fold_why){ "node groups with different GPUs are not folded exactly (GPUs "
					"sharing a NIC): it simulates every rank",
					"simulate fewer nodes" };
		return 0;
	}
	if (gpu_classes <= 1)
		return 0;
	if (!full_bisection(t) || !topology_is_symmetric(t, pl->nodes)) {
		*w = (struct fold_why){ "node groups with different GPUs make the data-parallel "
					"replicas differ, folded one replica per class of GPUs only on "
					"a symmetric fabric of full bisection",
					"simulation.fold \"on\" folds it by classes anyway (the "
					"replicas' paths taken as alike), or a non-blocking fabric" };
		return 0;
	}
	bool unequal = false;
	if (pl->parallel.dp > 1 && some_stage_unequal(t, pl, place, progs, &unequal, d))
		return -1;
	if (unequal)
		*w = (struct fold_why){ "node groups with different GPUs make the data-parallel "
					"replicas differ, and a tree all-reduce loads its members "
					"unequally: folding by classes of GPUs is not made for it",
					"communication.algorithm \"ring\" folds it one replica per "
					"class of GPUs; simulation.fold \"on\" folds it anyway" };
	return 0;
}

/* Whether to fold (r->folded, r->fold_reason; *fold). Folding needs
 * identical replicas and a symmetric fabric: decided from the fabric's
 * symmetry under this node count, not from its kind.
 * "auto" and "on" fold cheaply: the representative's own flows, daemon
 * sinks for its folded peers, and where a plan loads its members
 * unequally (a tree) the flows around its busiest member too (fold_cheap.c,
 * plan_crit), the representative a replica of the trees' most common
 * member (fold_cheap.c, fold_majority_replica). On fabrics of full
 * bisection above the NICs the cases measured equal the unfolded run to
 * 1e-15, pipelines and trees included (full_bisection); on an
 * oversubscribed tree the representative also posts the folded ranks'
 * flows over its binding uplinks (fold_uplink.c): equal to the unfolded
 * run on full leaves of the trees measured, and a forced tree there
 * within 0.5 %, so "auto" folds it (measured 2026-12-06, Llama 3 8B TP 8
 * on the 2:1 tree: DP 10 on 10 nodes equal, PP 4 x DP 10 on 40 -0.186 %,
 * at half the CPU time); on partly filled ones "auto" folds as "on"
 * where that was measured within 0.5 % (partly_filled_alike), else by
 * classes (fold_classes), and a forced tree it cannot fold either way it
 * does not fold.
 * Those figures have one home: docs/howto.md's folding tables.
 * "exact" (fold_exact.c) posts whole groups and the mirror traffic that
 * can meet simulated flows, equal to the unfolded run to 1e-9
 * (tests/test-fold.c) at a multiple of the time, far more where groups
 * share nodes. It simulates every rank where a
 * pipeline meets a tree, forced or chosen by "auto" for some bucket sizes
 * (dp_reduce_alike): its whole groups do not reproduce the unfolded run
 * there (the 1:1 tree, Llama 3 8B-like test job of tests/test-fold.c,
 * PP 2, forced tree: -0.51 %, where cheap folding equals it), and, on an
 * oversubscribed fabric, where rings' members' paths differ: the
 * members' unequal loads on the shared uplinks make the replicas'
 * timelines differ. "auto" folds exactly (*exact) where a NIC serves
 * several GPUs of a multi-node job: cheap folding posts no flows of the
 * folded ranks themselves, so the representative would have a shared NIC
 * to itself (BLOOM on Jean Zay, two GPUs per Omni-Path port, TP 4 x PP 12
 * x DP 8: cheap 88.62 s, exact and unfolded 93.02 s); there a forced
 * tree on an oversubscribed tree, a partly filled leaf and a straggler
 * stay unfolded, not measured. Mixed GPUs fold one replica per class of
 * GPUs where mixed_fold_why() allows. *classes: folded by classes (a
 * partly filled leaf or pod). Returns 0 or -1 (reported). */
/* Whether "auto" folds: exact folding only where nothing blocks it
 * (blocked: a tree across pipeline stages, drifting paths, distinct
 * ranks), never with parameter servers or with mixed GPUs that
 * mixed_fold_why() refuses (mixed_ok: none it refuses), only where the
 * replicas are alike (alike: a symmetric topology, classes or a partly
 * filled leaf measured alike), and with more than one rank to a stage; a
 * forced tree folds cheaply across oversubscribed switches (measured,
 * above), not exactly or by classes. */
static bool auto_folds(const struct plan *pl, bool exact, bool blocked, bool alike, bool classes,
		       bool full, bool tree, bool mixed_ok)
{
	return (!exact || !blocked) && pl->parallel.dp_sync != DP_SYNC_PS && mixed_ok &&
	       alike && (long)pl->parallel.tp * pl->parallel.cp * pl->parallel.dp > 1 &&
	       (full || !tree || (!exact && !classes));
}

/* Whether pl asks for exact folding: "exact", or "auto" where a NIC
 * serves several GPUs of a multi-node job (above). */
static bool exact_wanted(const struct plan *pl, const struct topology *topo)
{
	return pl->simulation.fold == FOLD_EXACT ||
	       (pl->simulation.fold == FOLD_AUTO && pl->nodes > 1 && topo->nics < topo->gpus_per_node);
}

/* With exact folding of a pipeline of several replicas (no parameter
 * servers), whether its gradient all-reduces differ across stages:
 * *tree_pp when their bytes do (dp_reduce_alike), *drift when their paths
 * do on more than two stages across an oversubscribed fabric. Returns 0
 * or -1 (reported). */
static int pp_reduce_differs(const struct topology *topo, const struct plan *pl, const struct placement *place,
			     const struct program *progs, bool full, bool *tree_pp, bool *drift, struct diag *d)
{
	if (*tree_pp || pl->parallel.pp <= 1 || pl->parallel.dp <= 1 || pl->parallel.dp_sync == DP_SYNC_PS)
		return 0;
	int u = dp_reduce_alike(topo, pl, place, &progs[0], 0);
	if (u < 0)
		return diag_errf(d, "cannot plan the gradient all-reduce with algorithm '%s'",
				 pl->communication.coll_algo);
	*tree_pp = u == DP_UNEQUAL_BYTES;
	*drift = u == DP_UNEQUAL_PATHS && pl->parallel.pp > 2 && !full;
	return 0;
}

/* Whether pl folds: "on" always, "exact" where nothing blocks it, "auto"
 * where auto_folds(). */
static bool folds(const struct plan *pl, bool exact, bool blocked, bool alike, bool classes, bool full,
		  bool tree, bool mixed_ok)
{
	return pl->simulation.fold == FOLD_ON ||
	       (pl->simulation.fold == FOLD_EXACT && !blocked) ||
	       (pl->simulation.fold == FOLD_AUTO &&
		auto_folds(pl, exact, blocked, alike, classes, full, tree, mixed_ok));
}

int simulate_fold_decide(const struct inputs *in, const struct plan *pl, const struct placement *place,
			 const struct program *progs, int gpu_classes, bool any_distinct,
			 struct result *r, bool *fold, bool *exact, bool *classes,
			 const char **advice, struct diag *d)
{
	const struct topology *topo = inputs_topology(in);
	bool full = full_bisection(topo);
	bool tree = !strcmp(pl->communication.coll_algo, "tree");
	bool tree_pp = pl->parallel.pp > 1 && pl->parallel.dp > 1 && tree;
	bool drift = false, alike = false;
	bool symmetric = topology_is_symmetric(topo, pl->nodes);
	*exact = exact_wanted(pl, topo);
	if (*exact && pp_reduce_differs(topo, pl, place, progs, full, &tree_pp, &drift, d))
		return -1;
	*classes = fold_classes(pl, topo, *exact);
	if (*classes && partly_filled_alike(pl, topo, place, progs, any_distinct, &alike, d))
		return -1;
	*classes = *classes && !alike;
	struct fold_why mixed;
	if (mixed_fold_why(pl, topo, place, progs, gpu_classes, *exact, &mixed, d))
		return -1;
	bool blocked = tree_pp || drift || any_distinct;
	*fold = folds(pl, *exact, blocked, symmetric || *classes || alike, *classes, full, tree, !mixed.why);
	struct fold_why w = *fold ? (struct fold_why){ NULL, NULL } :
				    fold_reason(pl, topo, *exact && tree_pp, *exact && drift,
						*exact && any_distinct, *exact, *classes || alike, mixed);
	*exact = *exact && *fold;
	*classes = *classes && *fold;
	r->folded = *fold;
	r->fold_reason = w.why;
	*advice = w.advice;
	return 0;
}

void simulate_whole_replicas(const struct placement *place, struct result *r)
{
	int N = place->nranks, c[DIM_N];
	/* per replica: 1 seen, 2 with a folded rank, 4 standing for one
	 * (the representative; folded by classes of GPUs, each class's) */
	unsigned char *state = xcalloc((size_t)N + 1, 1);
	r->whole_replicas = xcalloc((size_t)N + 1, sizeof(int));
	r->nwhole_replicas = 0;
	for (int q = 0; q < N && r->folded; q++) {
		placement_coords(place, q, c);
		state[c[DIM_DP]] |= 1;
		if (r->eng->rank[q].representative != q) {
			state[c[DIM_DP]] |= 2;
			placement_coords(place, r->eng->rank[q].representative, c);
			state[c[DIM_DP]] |= 4;
		}
	}
	for (int dp = 0; dp < N; dp++)
		if (state[dp] == 1)
			r->whole_replicas[r->nwhole_replicas++] = dp;
	free(state);
}
