/* test-foldplan: the folding planner (engine/fold.h) on hand-built jobs,
 * without the engine: this suite links the sim library but not SimGrid,
 * so a SimGrid call reaching fold.c or cplan.c fails its link.
 *
 * The jobs: DGX H100 nodes of 8 GPUs, TP 8 inside a node, DP across
 * nodes, one stage whose program is one gradient all-reduce of the DP
 * group. Ranks are tp + 8 x dp: replica k is node k, its rank tp 0 is
 * rank 8k. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "fold.h"
#include "testutil.h"

struct job {
	struct topology *topo;
	struct placement pl;
	struct program prog;
	struct program *stage[1];
	unsigned char distinct[256];
	struct engine_job ej;
	struct fold F;
};

/* A folded job of dp nodes x 8 GPUs (TP 8 x DP dp) whose program is one
 * all-reduce of 64 MiB over the DP group with algorithm algo. */
static void job_init(struct job *j, int dp, const char *algo, bool exact)
{
	struct diag d;
	memset(j, 0, sizeof(*j));
	diag_init(&d, stderr);
	j->topo = topology_load(src_path("topologies/dgx-h100.json"), &d);
	cr_assert_not_null(j->topo);
	diag_finish(&d);
	cr_assert_eq(placement_init(&j->pl, 8, dp, 1, "tp,cp,dp,pp"), 0);
	program_init(&j->prog);
	program_coll(&j->prog, STREAM_DP, CAT_DP_COMM, COLL_ALLREDUCE, GROUP_DP, 64.0 * (1 << 20), 1,
		     NULL, 0);
	j->stage[0] = &j->prog;
	j->ej = (struct engine_job){ .topo = j->topo, .nodes = dp, .pl = &j->pl,
				     .stage_prog = j->stage, .coll_algo = algo, .fold = true,
				     .fold_exact = exact };
}

static void job_finish(struct job *j)
{
	fold_finish(&j->F);
	program_finish(&j->prog);
	topology_destroy(j->topo);
}

/* Plan j's ranks; the count of simulated ranks. */
static int pick(struct job *j)
{
	struct diag d;
	diag_init(&d, stderr);
	fold_init(&j->F, &j->ej);
	cr_assert_eq(fold_pick_ranks(&j->F, &d), 0);
	diag_finish(&d);
	int n = 0;
	for (int r = 0; r < j->pl.nranks; r++)
		n += j->F.active[r];
	return n;
}

/* Rings load every member alike: replica 0 represents, its rank tp 0
 * alone is simulated and stands for every rank of its stage. */
Test(foldplan, a_ring_is_represented_by_replica_0)
{
	struct job j;
	job_init(&j, 16, "ring", false);
	cr_expect_eq(pick(&j), 1);
	cr_expect_eq(j.F.rep_dp, 0);
	cr_expect(j.F.active[0]);
	cr_expect_eq(fold_representative(&j.F, 0), 0);
	cr_expect_eq(fold_representative(&j.F, 8), 0);
	cr_expect_eq(fold_representative(&j.F, 127), 0);
	job_finish(&j);
}

/* A double binary tree of 16 nodes: members 0, 7, 8 and 15 move 3
 * half-buffers each way, the other 12 move 4. The most common class
 * holds node 1 first, so replica 1 (rank 8) represents, not replica 0
 * (one of the four light members). */
Test(foldplan, a_tree_is_represented_by_its_most_common_member)
{
	struct job j;
	job_init(&j, 16, "tree", false);
	cr_expect_eq(pick(&j), 1);
	cr_expect_eq(j.F.rep_dp, 1);
	cr_expect(j.F.active[8]);
	cr_expect(!j.F.active[0]);
	cr_expect_eq(fold_representative(&j.F, 0), 8);
	cr_expect_eq(fold_representative(&j.F, 8), 8);
	cr_expect_eq(fold_representative(&j.F, 100), 8);
	job_finish(&j);
}

/* Exact folding posts every flow of its groups, so it needs no majority:
 * replica 0 represents trees too. */
Test(foldplan, exact_folding_keeps_replica_0_for_trees)
{
	struct job j;
	job_init(&j, 16, "tree", true);
	cr_expect_eq(pick(&j), 1);
	cr_expect_eq(j.F.rep_dp, 0);
	cr_expect(j.F.active[0]);
	job_finish(&j);
}

/* A straggler (rank 29: tp 5 of replica 3) makes its replica distinct:
 * replica 3 is simulated whole (ranks 24..31), and replica 0 still
 * represents the others, with every TP rank (so that replica 3's rings of
 * TP rank k hold a rank of it: fold_pick_ranks): 8 + 8 ranks; a folded
 * rank stands by its own TP rank of replica 0. */
Test(foldplan, a_straggler_makes_its_replica_simulated_whole)
{
	struct job j;
	job_init(&j, 16, "ring", false);
	j.distinct[29] = 1;
	j.ej.distinct = j.distinct;
	cr_expect_eq(pick(&j), 16);
	cr_expect_eq(j.F.rep_dp, 0);
	for (int r = 24; r < 32; r++) {
		cr_expect(j.F.active[r], "rank %d", r);
		cr_expect_eq(fold_representative(&j.F, r), r);
	}
	for (int r = 0; r < 8; r++)
		cr_expect(j.F.active[r], "rank %d", r);
	cr_expect(!j.F.active[8]);
	cr_expect_eq(fold_representative(&j.F, 1), 1);
	cr_expect_eq(fold_representative(&j.F, 40), 0);
	cr_expect_eq(fold_representative(&j.F, 45), 5);
	job_finish(&j);
}

/* A straggler in replica 0 moves the representative to the first replica
 * not made distinct: replica 1 (rank 8), and replica 0 is simulated
 * whole. */
Test(foldplan, a_straggler_in_replica_0_moves_the_representative)
{
	struct job j;
	job_init(&j, 4, "ring", false);
	j.distinct[2] = 1;
	j.ej.distinct = j.distinct;
	cr_expect_eq(pick(&j), 16);
	cr_expect_eq(j.F.rep_dp, 1);
	for (int r = 0; r < 16; r++)
		cr_expect(j.F.active[r], "rank %d", r);
	cr_expect_eq(fold_representative(&j.F, 20), 12);
	job_finish(&j);
}

/* With trees, a straggler in replica 1 (the majority's first) moves the
 * representative to the next replica of the most common class: node 2. */
Test(foldplan, a_straggler_in_the_majority_moves_it_to_the_next_member)
{
	struct job j;
	job_init(&j, 16, "tree", false);
	j.distinct[12] = 1;     /* tp 4 of replica 1 */
	j.ej.distinct = j.distinct;
	cr_expect_eq(pick(&j), 16);
	cr_expect_eq(j.F.rep_dp, 2);
	for (int r = 8; r < 24; r++)
		cr_expect(j.F.active[r], "rank %d", r);
	cr_expect_eq(fold_representative(&j.F, 0), 16);
	job_finish(&j);
}

/* Unfolded, every rank is simulated and stands for itself. */
Test(foldplan, unfolded_simulates_every_rank)
{
	struct job j;
	job_init(&j, 2, "tree", false);
	j.ej.fold = false;
	cr_expect_eq(pick(&j), 16);
	for (int r = 0; r < 16; r++)
		cr_expect_eq(fold_representative(&j.F, r), r);
	job_finish(&j);
}

/* Cheap folding of a 2-member ring: the platform holds the simulated
 * rank 0 and the destination of its flows, rank 8; not the other 14
 * GPUs of its TP groups (narrow: only its own flows are posted). */
Test(foldplan, cheap_folding_holds_the_simulated_rank_and_its_flows_peers)
{
	struct job j;
	job_init(&j, 2, "ring", false);
	cr_expect_eq(pick(&j), 1);
	unsigned char used[16] = { 0 };
	cr_assert_eq(fold_mark_used(&j.F, used), 0);
	int n = 0;
	for (int r = 0; r < 16; r++)
		n += used[r];
	cr_expect(used[0]);
	cr_expect(used[8]);
	cr_expect_eq(n, 2);
	job_finish(&j);
}

/* Each group instance's members are resolved once and shared. */
Test(foldplan, groups_are_shared_by_their_members)
{
	struct job j;
	job_init(&j, 4, "ring", false);
	pick(&j);
	const int *g0[GROUP_N], *g8[GROUP_N];
	int n0[GROUP_N], n8[GROUP_N];
	fold_groups(&j.F, 0, g0, n0);
	fold_groups(&j.F, 8, g8, n8);
	cr_expect_eq(n0[GROUP_DP], 4);
	cr_expect_eq(g0[GROUP_DP], g8[GROUP_DP]);
	cr_expect_eq(g0[GROUP_DP][3], 24);
	cr_expect_eq(n0[GROUP_TP], 8);
	cr_expect_neq(g0[GROUP_TP], g8[GROUP_TP]);
	cr_expect_eq(g8[GROUP_TP][0], 8);
	job_finish(&j);
}

/* The classes a summary (the trace) shows: folded, a straggler (rank 29
 * of replica 3) alone, its 7 peers of the replica simulated whole one
 * class, every other rank of the representative's (its 8 TP ranks
 * simulated, one class); unfolded, the same
 * split without folding (its peers by their first rank, the other
 * replicas' ranks by rank 0). */
Test(foldplan, classes_put_a_straggler_alone_and_its_replica_apart)
{
	for (int folded = 1; folded >= 0; folded--) {
		struct job j;
		job_init(&j, 16, "ring", false);
		j.ej.fold = folded;
		j.distinct[29] = 1;
		j.ej.distinct = j.distinct;
		cr_expect_eq(pick(&j), folded ? 16 : 128);
		int cls[128], classes = 0;
		fold_classes(&j.F, cls);
		for (int r = 0; r < 128; r++) {
			int want = r == 29 ? 29 : r >= 24 && r < 32 ? 24 : 0;
			cr_expect_eq(cls[r], want, "%s: rank %d of class %d, want %d", folded ? "folded" : "unfolded",
				     r, cls[r], want);
			cr_expect(j.F.active[cls[r]], "rank %d's class rank %d is not simulated", r, cls[r]);
			classes += cls[r] == r;
		}
		cr_expect_eq(classes, 3);
		job_finish(&j);
	}
}

/* Two stage programs whose messages wrap: stage s sends 32 MiB forward
 * to stage s + 1 (stage 1: to stage 0) and receives from stage s - 1
 * (stage 0: from stage 1), as an interleaved pipeline's chunks do. */
static void wrapped_programs(struct program prog[2], struct program *stage[2])
{
	for (int s = 0; s < 2; s++) {
		program_init(&prog[s]);
		struct task snd = { .kind = TASK_SEND, .stream = STREAM_SEND, .cat = CAT_PP_COMM,
				    .bytes = 32.0 * (1 << 20), .dir = P2P_FWD };
		struct task rcv = snd;
		rcv.kind = TASK_RECV;
		rcv.stream = STREAM_RECV_PREV;
		program_add(&prog[s], &rcv, NULL, 0);
		program_add(&prog[s], &snd, NULL, 0);
		cr_assert(program_wraps(&prog[s], s, 2));
		stage[s] = &prog[s];
	}
}

/* An interleaved pipeline's messages wrap around: stage 1 (the last of
 * 2) sends chunk 0's activations to stage 0's chunk 1, which receives
 * them from "stage 2". Jean Zay nodes (two GPUs per Omni-Path port), TP
 * 2 x DP 4 x PP 2, a stage per node: ranks tp + 2 dp + 8 pp, rank 8
 * (stage 1, replica 0, tp 0) simulated, its TP peer 9 folded and on its
 * port. Exact folding posts 9's wrapped message to 1 with 8's: without
 * it 8 would have the port to itself. */
Test(foldplan, exact_folding_mirrors_a_wrapped_pipeline_message)
{
	struct diag d;
	struct job j;
	memset(&j, 0, sizeof(j));
	diag_init(&d, stderr);
	j.topo = topology_load(src_path("topologies/jeanzay-a100-opa.json"), &d);
	cr_assert_not_null(j.topo);
	diag_finish(&d);
	cr_assert_eq(placement_init(&j.pl, 2, 4, 2, "tp,dp,pp"), 0);
	struct program prog[2], *stage[2];
	wrapped_programs(prog, stage);
	j.ej = (struct engine_job){ .topo = j.topo, .nodes = 2, .pl = &j.pl, .stage_prog = stage,
				    .coll_algo = "ring", .fold = true, .fold_exact = true };
	pick(&j);
	cr_assert(j.F.active[8]);
	cr_assert(!j.F.active[9]);
	unsigned char used[16] = { 0 };
	cr_assert_eq(fold_mark_used(&j.F, used), 0);
	int *pairs, n = fold_mirror_p2p(&j.F, 8, 1, P2P_FWD, &pairs);
	bool found = false;
	for (int i = 0; i < n; i++)
		found = found || (pairs[2 * i] == 9 && pairs[2 * i + 1] == 1);
	cr_expect(found, "stage 1's wrapped mirror 9 -> 1 not among %d pairs", n);
	cr_expect(used[9] && used[1]);
	free(pairs);
	fold_finish(&j.F);
	for (int s = 0; s < 2; s++)
		program_finish(&prog[s]);
	topology_destroy(j.topo);
}

/* Cheap folding on an oversubscribed fat tree posts the folded replicas'
 * pipeline messages over the held uplinks (fold_uplink_p2p), the wrapped
 * ones of an interleaved pipeline included. The 2:1 tree (leaves of 5
 * DGX H100), TP 8 x DP 10 x PP 2, a stage per 10 nodes: ranks tp + 8 dp
 * + 80 pp, replica 0's tp 0 ranks simulated (nodes 0 and 10: leaves 0
 * and 2 held).
 * Stage 1's forward message wraps to stage 0: replica 1's (rank 88, node
 * 11, leaf 2) goes to rank 8 (node 1, leaf 0) over leaf 2's uplink, and
 * rank 80 posts it with its own. Without the wrap stage 1 posted no
 * forward pair, and leaf 2's uplink carried its replica's message alone. */
Test(foldplan, cheap_folding_posts_a_wrapped_message_over_an_uplink)
{
	struct diag d;
	struct job j;
	memset(&j, 0, sizeof(j));
	diag_init(&d, stderr);
	j.topo = topology_load(src_path("topologies/dgx-h100-fattree2-2to1.json"), &d);
	cr_assert_not_null(j.topo);
	diag_finish(&d);
	cr_assert_eq(placement_init(&j.pl, 8, 10, 2, "tp,dp,pp"), 0);
	struct program prog[2], *stage[2];
	wrapped_programs(prog, stage);
	j.ej = (struct engine_job){ .topo = j.topo, .nodes = 20, .pl = &j.pl, .stage_prog = stage,
				    .coll_algo = "ring", .fold = true };
	pick(&j);
	cr_assert(j.F.active[80]);
	cr_assert(!j.F.active[88]);
	cr_assert(fold_posts_uplink_copies(&j.F, 80));
	int *pairs, n = fold_uplink_p2p(&j.F, 80, 1, P2P_FWD, &pairs);
	bool found = false;
	for (int i = 0; i < n; i++)
		found = found || (pairs[2 * i] == 88 && pairs[2 * i + 1] == 8);
	cr_expect(found, "stage 1's wrapped copy 88 -> 8 not among %d pairs", n);
	/* from leaf 2 to leaf 0: replica 0's folded TP ranks 81 to 87 and
	 * replicas 1 to 4's 32 ranks */
	cr_expect_eq(n, 39, "%d pairs", n);
	free(pairs);
	unsigned char used[160] = { 0 };
	cr_assert_eq(fold_mark_used(&j.F, used), 0);
	cr_expect(used[88] && used[8]);
	fold_finish(&j.F);
	for (int s = 0; s < 2; s++)
		program_finish(&prog[s]);
	topology_destroy(j.topo);
}
