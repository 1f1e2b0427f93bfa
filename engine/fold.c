/* fold: the folding planner (see fold.h): which ranks the engine
 * simulates, which GPUs its platform holds, and which flows a simulated
 * rank posts for the ranks it stands for. No SimGrid here.
 * The planner's other files (fold-private.h): fold_exact.c, fold_own.c,
 * fold_cheap.c, fold_partial.c, fold_uplink.c, and below them all
 * fold_groups.c, fold_crit.c, fold_links.c. */
#include "fold.h"
#include "fold-private.h"

#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

/* ---- the planner's phases (engine_run) ------------------------------ */

void fold_init(struct fold *F, const struct engine_job *job)
{
	int N = job->pl->nranks;
	memset(F, 0, sizeof(*F));
	F->job = job;
	F->cache = (struct cplan_cache){ .topo = job->topo, .algo = job->coll_algo };
	F->active = xcalloc((size_t)N, sizeof(*F->active));
	for (int g = 0; g < GROUP_N; g++)
		F->gmem[g] = xcalloc((size_t)N, sizeof(*F->gmem[g]));
	F->stamp = xcalloc((size_t)N, sizeof(*F->stamp));
	for (int g = 0; g < GROUP_N && job->fold; g++)
		F->isig[g] = xcalloc((size_t)N, sizeof(*F->isig[g]));
	F->wraps = program_stages_wrap(job->stage_prog, job->pl->size[DIM_PP]);
	fold_binding_uplinks(F);
}

void fold_finish(struct fold *F)
{
	int N = F->job ? F->job->pl->nranks : 0;
	cplan_cache_finish(&F->cache);
	free(F->uf);
	free(F->rooted);
	free(F->lown);
	free(F->lpair);
	free(F->lmark);
	free(F->uheld);
	for (int g = 0; g < GROUP_N; g++)
		free(F->isig[g]);
	free(F->lkey);
	free(F->lid);
	free(F->stamp);
	for (int g = 0; g < GROUP_N; g++) {
		for (int r = 0; F->gmem[g] && r < N; r++)
			free(F->gmem[g][r]);
		free(F->gmem[g]);
	}
	free(F->active);
	free(F->rep_of);
	memset(F, 0, sizeof(*F));
}

/* Folded by replica classes (job.replica_class, mixed GPUs): the replica
 * standing for each replica into F->rep_of, the representative for its
 * own class, for every other class the first of its replicas not
 * simulated whole already, marked in drep (simulated whole); a class
 * whose replicas are all simulated whole needs none. Every replica
 * simulated whole stands for itself. Returns whether a replica was
 * marked: then every TP and CP rank of the representative is simulated,
 * as for a distinct replica (below), so that the barriers of every TP
 * rank's data-parallel group hold a member of the representative's class
 * and one of each other class (without them a group of the marked
 * replica alone would run at its own pace: the unfolded run's waits for
 * the slowest class). */
static bool pick_class_replicas(struct fold *F, unsigned char *drep)
{
	const struct placement *pl = F->job->pl;
	const int *cls = F->job->replica_class;
	int ndp = pl->size[DIM_DP] * pl->size[DIM_EP];
	bool marked = false;
	F->rep_of = xreallocarray(NULL, (size_t)ndp, sizeof(*F->rep_of));
	for (int k = 0; k < ndp; k++) {
		F->rep_of[k] = drep[k] ? k : cls[k] == cls[F->rep_dp] ? F->rep_dp : -1;
		/* an earlier replica of the class that is not whole of its own */
		for (int j = 0; j < k && F->rep_of[k] < 0; j++)
			if (drep[j] != 1 && cls[j] == cls[k])
				F->rep_of[k] = F->rep_of[j];
		if (F->rep_of[k] < 0) {
			F->rep_of[k] = k;
			drep[k] = 2;
			marked = true;
		}
	}
	return marked;
}

/* Folded: rank (tp 0, cp 0) of every stage of the representative
 * replica, the first data-parallel replica without a distinct rank; a
 * replica with one (a straggler, a throttled GPU) is simulated whole, its
 * ranks standing for themselves: its collectives' barriers hold the
 * representative's as long as the slow rank holds them (partial folding:
 * Llama 3 405B on 1,024 GPUs, TP 8 x PP 16, with one straggler simulates
 * 256 ranks, not 1,024: 3.9 s against 29, the same figure).
 * With such a replica (a distinct rank or a degraded link's), every TP
 * and CP rank of the representative replica is simulated: the whole
 * replica's collectives of TP rank k need a rank of it to post the alike
 * replicas' flows, which meet those replicas' pipeline messages on their
 * NICs (Llama 3 8B, TP 8 x PP 2 x DP 4 on 8 DGX H100, node 2 throttled:
 * +2.0e-4 with TP rank 0 alone, whose stage-1 rings of TP ranks 1-7
 * posted the throttled replica's flows only; now equal, 32 ranks instead
 * of 18). Class folding (a partly filled leaf) keeps TP rank 0. */
int fold_pick_ranks(struct fold *F, struct diag *d)
{
	const struct engine_job *job = F->job;
	const struct placement *pl = job->pl;
	int N = pl->nranks, rc = -1;
	unsigned char *drep = NULL;

	F->rep_dp = 0;
	bool tpwide = false;
	if (job->fold && (job->distinct || job->fold_partial_tree || job->replica_class)) {
		int ndp = pl->size[DIM_DP] * pl->size[DIM_EP];
		drep = xcalloc((size_t)ndp, 1);
		for (int r = 0; r < N; r++)
			if (job->distinct && job->distinct[r]) {
				int c[DIM_N];
				placement_coords(pl, r, c);
				drep[c[DIM_DP]] = 1;
			}
		if (job->ndegraded > 0 && !job->fold_exact && fold_mark_degraded_replicas(F, drep)) {
			diag_errf(d, "a collective plan could not be made to find the replicas a degraded link touches");
			goto out;
		}
		for (int k = 0; k < ndp; k++)
			tpwide = tpwide || drep[k];
		if (job->fold_partial_tree && fold_mark_partial_tree_replicas(F, drep)) {
			diag_errf(d, "a collective plan could not be made to find the replicas a partly "
				  "filled leaf or pod touches");
			goto out;
		}
		while (F->rep_dp < ndp - 1 && drep[F->rep_dp])
			F->rep_dp++;
	}
	if (job->fold && !job->fold_exact && !job->ps) {
		int m = fold_majority_replica(F, drep, F->rep_dp);
		if (m < 0) {
			diag_errf(d, "a collective plan could not be made to choose the representative replica");
			goto out;
		}
		F->rep_dp = m;
	}
	if (job->fold && job->replica_class)
		tpwide = pick_class_replicas(F, drep) || tpwide;
	for (int r = 0; r < N; r++) {
		int c[DIM_N];
		placement_coords(pl, r, c);
		F->active[r] = !job->fold || (drep && drep[c[DIM_DP]]) ||
			       ((tpwide || (c[DIM_TP] == 0 && c[DIM_CP] == 0)) &&
				c[DIM_DP] == F->rep_dp);
	}
	rc = 0;
out:
	free(drep);
	return rc;
}

/* The platform holds the simulated ranks and every GPU they talk to;
 * folded, also the GPUs of the mirror traffic that is posted. */
int fold_mark_used(struct fold *F, unsigned char *used)
{
	const struct engine_job *job = F->job;
	const struct placement *pl = job->pl;
	int N = pl->nranks;
	int *grp = xreallocarray(NULL, (size_t)N + 2, sizeof(*grp));
	/* cheap folding posts only the simulated ranks' own flows: the
	 * platform needs their destinations, not every member of their
	 * groups (building every node made the load quadratic: SimGrid
	 * checks each new name against the whole platform) */
	bool narrow = job->fold && !job->fold_exact && !job->ps;
	for (int r = 0; r < N; r++) {
		if (!F->active[r])
			continue;
		int c[DIM_N];
		placement_coords(pl, r, c);
		used[r] = 1;
		for (int g = 0; g < GROUP_N && !narrow; g++) {
			int n = placement_group(pl, g, r, grp);
			for (int i = 0; i < n; i++)
				used[grp[i]] = 1;
		}
		for (int dlt = -1; dlt <= 1; dlt += 2) {
			int peer = fold_pipe_peer(F, r, c[DIM_PP], dlt);
			if (peer >= 0)
				used[peer] = 1;
		}
	}
	free(grp);
	if ((job->fold_exact && fold_closure(F, used)) || (narrow && fold_mark_flow_peers(F, used)))
		return -1;
	return 0;
}

/* The replicas whose ranks differ from the others': folded, those
 * simulated whole; unfolded, those holding a distinct rank ([ndp]). */
static unsigned char *unlike_replicas(const struct fold *F)
{
	const struct engine_job *job = F->job;
	const struct placement *pl = job->pl;
	int N = pl->nranks, ndp = pl->size[DIM_DP] * pl->size[DIM_EP], c[DIM_N];
	unsigned char *whole = xcalloc((size_t)ndp + 1, 1);
	for (int r = 0; r < N; r++) {
		placement_coords(pl, r, c);
		if (job->fold ? F->active[r] && c[DIM_DP] != F->rep_dp : job->distinct && job->distinct[r])
			whole[c[DIM_DP]] = 1;
	}
	return whole;
}

void fold_classes(const struct fold *F, int *cls)
{
	const struct engine_job *job = F->job;
	const struct placement *pl = job->pl;
	int N = pl->nranks, nk = 0, c[DIM_N];
	unsigned char *whole = unlike_replicas(F);
	/* the classes seen: (stage, program, who) and their first rank; who
	 * is -1 for the alike replicas, the replica's index in an unlike
	 * one, -2 - r for a distinct rank r */
	const struct program **kprog = xcalloc((size_t)N + 1, sizeof(*kprog));
	int *kstage = xcalloc((size_t)N + 1, sizeof(int)), *kwho = xcalloc((size_t)N + 1, sizeof(int));
	int *krank = xcalloc((size_t)N + 1, sizeof(int));
	for (int r = 0; r < N; r++) {
		cls[r] = -1;
		if (!F->active[r])
			continue;
		placement_coords(pl, r, c);
		const struct program *prog = job->rank_prog ? job->rank_prog[r] : job->stage_prog[c[DIM_PP]];
		int who = job->distinct && job->distinct[r] ? -2 - r : whole[c[DIM_DP]] ? c[DIM_DP] : -1, k = 0;
		while (k < nk && !(kstage[k] == c[DIM_PP] && kprog[k] == prog && kwho[k] == who))
			k++;
		if (k == nk) {
			kstage[nk] = c[DIM_PP];
			kprog[nk] = prog;
			kwho[nk] = who;
			krank[nk++] = r;
		}
		cls[r] = krank[k];
	}
	/* a folded rank is of its representative's class */
	for (int r = 0; r < N; r++)
		if (cls[r] < 0)
			cls[r] = cls[fold_representative(F, r)];
	free(whole);
	free(kprog);
	free(kstage);
	free(kwho);
	free(krank);
}

int fold_representative(const struct fold *F, int r)
{
	const struct placement *pl = F->job->pl;
	if (!F->job->fold || F->active[r])
		return r;
	int c[DIM_N];
	placement_coords(pl, r, c);
	/* its own TP rank of the representative replica where that one is
	 * simulated (a replica simulated whole, above) */
	int dp = F->rep_of ? F->rep_of[c[DIM_DP]] : F->rep_dp;
	int same = placement_rank(pl, c[DIM_TP], dp, c[DIM_PP]);
	return c[DIM_CP] == 0 && F->active[same] ? same : placement_rank(pl, 0, dp, c[DIM_PP]);
}
