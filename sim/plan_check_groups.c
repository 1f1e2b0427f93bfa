/* plan_check_groups: the checks of the parallel groups beside TP and PP
 * (plan.h plan_check()): context parallelism, expert parallelism and
 * expert tensor parallelism, and hybrid sharding's shard groups; each
 * problem into d with its JSON path. */
#include "plan_check-private.h"

#include <stdio.h>
#include <string.h>

/* Context parallelism: the load-balanced causal split, the attention
 * kernel it runs with, and the all-to-all variant's head split. */
static void check_cp(const struct plan *p, const struct model *m, const char *f, struct diag *d)
{
	if (p->parallel.cp <= 1) {
		if (p->parallel.cp_comm != CP_P2P)
			diag_err(d, f, "/parallel/cp_comm", "needs context parallelism (cp > 1), got cp = %d",
				 p->parallel.cp);
		return;
	}
	if (p->training.seq > 0 && p->training.seq % (2L * p->parallel.cp))
		diag_err(d, f, "/parallel/cp", "seq_len %ld must be divisible by 2 x cp = %d (two chunks "
			 "per rank in the load-balanced causal split)", p->training.seq, 2 * p->parallel.cp);
	else if (p->training.seq > 0 && p->parallel.sp && (p->training.seq / p->parallel.cp) % p->parallel.tp)
		diag_err(d, f, "/parallel/cp", "seq_len / cp = %ld must be divisible by tp = %d "
			 "(sequence parallelism)", p->training.seq / p->parallel.cp, p->parallel.tp);
	if (m->sliding_window > 0 && p->parallel.cp_comm != CP_A2A)
		diag_err(d, f, "/parallel/cp", "the ring's chunks of a sliding-window model (%s: window "
			 "%ld) are not modelled (which chunks a window reaches); use cp_comm \"a2a\" (Ulysses: "
			 "each rank's heads see the whole sequence) or cp = 1, got cp = %d", m->name,
			 m->sliding_window, p->parallel.cp);
	if (p->training.attention != ATTN_FLASH)
		diag_err(d, f, "/parallel/cp", "context parallelism needs attention \"flash\" (Transformer "
			 "Engine's fused attention), got \"%s\"", attention_names[p->training.attention]);
	if (p->parallel.cp_comm == CP_A2A && m->heads % ((long)p->parallel.cp * p->parallel.tp))
		diag_err(d, f, "/parallel/cp_comm", "a2a needs the model's %ld attention heads divisible "
			 "by cp x tp = %d x %d = %ld, got a remainder of %ld", m->heads,
			 p->parallel.cp, p->parallel.tp, (long)p->parallel.cp * p->parallel.tp,
			 m->heads % ((long)p->parallel.cp * p->parallel.tp));
}

/* Expert parallelism: an MoE model, experts and the DP group divisible,
 * and Megatron's rule that MoE with TP runs with sequence parallelism. */
static void check_ep(const struct plan *p, const struct model *m, const char *f, struct diag *d)
{
	const struct moe_config *c = &m->moe;

	if (!model_is_moe(m)) {
		if (p->parallel.ep > 1)
			diag_err(d, f, "/parallel/ep", "expert parallelism needs a mixture-of-experts model "
				 "(a \"moe\" object in the model file), got ep = %d", p->parallel.ep);
		if (p->given & (PLAN_GIVEN_MOE_DIST | PLAN_GIVEN_MOE_ZIPF | PLAN_GIVEN_MOE_CAPACITY))
			diag_err(d, f, "/moe", "applies to mixture-of-experts models only");
		return;
	}
	if (c->experts % p->parallel.ep)
		diag_err(d, f, "/parallel/ep", "must divide the model's %ld experts, got %d", c->experts,
			 p->parallel.ep);
	if (p->parallel.dp % p->parallel.ep)
		diag_err(d, f, "/parallel/ep", "must divide the data-parallel degree dp = %d (expert "
			 "parallelism lives inside the DP group), got %d", p->parallel.dp, p->parallel.ep);
	if (plan_etp(p) == p->parallel.tp && c->expert_ffn % p->parallel.tp)
		diag_err(d, f, "/parallel/tp", "must divide the expert FFN size %ld, got %d", c->expert_ffn,
			 p->parallel.tp);
	if (p->parallel.tp > 1 && !p->parallel.sp)
		diag_err(d, f, "/parallel/sp", "mixture of experts with tensor parallelism needs sequence "
			 "parallelism (Megatron-LM arguments.py), got tp = %d without sp", p->parallel.tp);
	if (p->moe.dist == MOE_DIST_LOADS && c->nloads != c->experts)
		diag_err(d, f, "/moe/routing", "\"loads\" needs the model's expert_loads (model '%s' has none)",
			 m->name);
	if (p->parallel.zero == ZERO_3 && p->parallel.ep > 1)
		diag_err(d, f, "/parallel/zero", "ZeRO-3 / FSDP with expert parallelism is not supported (ep = %d)",
			 p->parallel.ep);
	if (p->moe.capacity_factor < 0)
		diag_err(d, f, "/moe/capacity_factor", "expected >= 0, got %g", p->moe.capacity_factor);
}

/* Expert tensor parallelism (parallel.etp; build_transformer.c "Expert
 * tensor parallelism"): an MoE model; 1 or tp (a group of 1 < etp < tp
 * inside the TP group is not modelled); Megatron-Core's own rule
 * (parallel_state.py initialize_model_parallel, core_v0.10.0 7ee599a
 * L645-652: the decoder world size divisible by etp x ep x pp, else
 * RuntimeError), which with ep dividing dp and etp dividing tp holds; the
 * expert FFN divisible by etp (moe/experts.py divides fc1 and fc2 by the
 * expert-tensor-parallel world size, L125-128). etp != tp leaves out what
 * it is not priced for: shared experts (shared_experts.py gathers over
 * the attention TP group), ZeRO-3 and hybrid sharding. */
static void check_etp(const struct plan *p, const struct model *m, const char *f, struct diag *d)
{
	int etp = plan_etp(p), tp = p->parallel.tp;

	if (p->parallel.etp <= 0 || etp == tp)
		return;
	if (!model_is_moe(m)) {
		diag_err(d, f, "/parallel/etp", "expert tensor parallelism needs a mixture-of-experts model "
			 "(a \"moe\" object in the model file); model '%s' is dense, got etp = %d (tp = %d)",
			 m->name, etp, tp);
		return;
	}
	if (etp != 1) {
		diag_err(d, f, "/parallel/etp", "expected 1 or tp = %d (an expert-tensor group inside the "
			 "TP group is not modelled), got %d", tp, etp);
		return;
	}
	long world = (long)tp * p->parallel.cp * p->parallel.dp * p->parallel.pp;
	long etmp = (long)etp * p->parallel.ep * p->parallel.pp;
	if (world % etmp)
		diag_err(d, f, "/parallel/etp", "etp x ep x pp = %ld must divide the world size %ld "
			 "(Megatron-Core parallel_state.py), got etp = %d", etmp, world, etp);
	if (m->moe.expert_ffn % etp)
		diag_err(d, f, "/parallel/etp", "must divide the expert FFN size %ld, got %d",
			 m->moe.expert_ffn, etp);
	if (m->moe.shared_experts > 0)
		diag_err(d, f, "/parallel/etp", "etp != tp with shared experts (model '%s' has %ld; they "
			 "run over the attention TP group) is not modelled; give etp = %d", m->name,
			 m->moe.shared_experts, tp);
	if (p->parallel.zero >= ZERO_3)
		diag_err(d, f, "/parallel/etp", "etp != tp with ZeRO-3 / FSDP is not supported, got etp = %d, "
			 "tp = %d", etp, tp);
	if (plan_hsdp(p))
		diag_err(d, f, "/parallel/etp", "etp != tp with hybrid sharding (shard_group) is not "
			 "supported, got etp = %d, tp = %d", etp, tp);
	const char *o = strrchr(p->parallel.order, ',');   /* folded expert groups: placement.h */
	if (p->parallel.order[0] && strcmp(o ? o + 1 : p->parallel.order, "pp"))
		diag_err(d, f, "/parallel/order", "etp = 1 needs pp outermost, got \"%s\"", p->parallel.order);
}

/* Hybrid sharding (parallel.shard_group): ZeRO's state sharded over a
 * slice of the dp x cp group, replicated across the slices. */
static void check_shard(const struct plan *p, const char *f, struct diag *d)
{
	int g = p->parallel.shard_group, n = p->parallel.dp * p->parallel.cp;
	if (g <= 0)
		return;
	if (p->parallel.zero == ZERO_0)
		diag_err(d, f, "/parallel/shard_group", "a shard group shards ZeRO's state: needs zero "
			 "1, 2 or 3, got zero 0");
	if (n > 0 && n % g)
		diag_err(d, f, "/parallel/shard_group", "must divide the dp x cp = %d data-parallel "
			 "ranks, got %d", n, g);
	if (p->parallel.ep > 1)
		diag_err(d, f, "/parallel/shard_group", "hybrid sharding with expert parallelism is not "
			 "supported (ep = %d)", p->parallel.ep);
}

/* Every group's checks. */
void plan_check_groups(const struct plan *p, const struct model *m, const char *f, struct diag *d)
{
	check_cp(p, m, f, d);
	check_ep(p, m, f, d);
	check_etp(p, m, f, d);
	check_shard(p, f, d);
}
