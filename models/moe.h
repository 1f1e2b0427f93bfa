/* moe: mixture-of-experts routing, load balance and capacity.
 *
 * An MoE layer's MLP is E experts (each an MLP of expert_ffn_size) of
 * which a router picks top_k per token, plus shared experts every token
 * passes through (DeepSeekMoE). With expert parallelism ep the E experts
 * of a layer are sharded over the ep ranks of an expert-parallel group,
 * E / ep consecutive experts per rank (Megatron-Core's local experts:
 * rank r holds experts r E/ep .. (r+1) E/ep - 1), and every rank routes
 * its own T tokens: T k token copies leave each rank (dispatch
 * all-to-all) and come back after the experts (combine all-to-all).
 *
 * The routing distribution gives the share p_e of token copies expert e
 * receives (sum 1): uniform (1/E), Zipf with exponent s (p_e proportional
 * to 1/(e+1)^s: expert 0 the hottest, as measured routing skews are
 * reported rank-ordered), or per-expert loads from the model file
 * (normalised). In units of the balanced load (T_group k / E copies per
 * expert), expert e receives E p_e. A capacity factor C > 0 caps every
 * expert at C units and drops the rest (GShard, Lepikhin et al. 2020,
 * section 2.2; Switch Transformer, Fedus et al. 2021, eq. 4: expert
 * capacity = tokens per batch / experts x capacity factor); C = 0 is
 * dropless (Megatron-Core's default, moe_expert_capacity_factor None).
 *
 * The rank of the EP group with the most kept copies sets the pace: the
 * dispatch all-to-all cannot complete before it has received, nor the
 * combine before it has computed and sent, its copies. Its load over a
 * balanced rank's (T k copies) is rank_load; the imbalance factor the
 * report gives is its load over the mean kept load of the group's ranks
 * (1 = balanced; Zipf over ranks otherwise). The grouped GEMMs of every
 * rank are priced at the busiest rank's copies, and the all-to-alls move
 * the busiest rank's volume (T k h bytes x rank_load), so the replay runs
 * at the pace of the slowest rank of the group while the ranks stay
 * identical (folding keeps working). */
#ifndef DDLSIM_MOE_H
#define DDLSIM_MOE_H

#include <stdbool.h>

/* Experts a model file may have (DeepSeek-V3 has 256 routed experts). */
#define MOE_MAX_EXPERTS 1024

enum moe_dist { MOE_DIST_UNIFORM, MOE_DIST_ZIPF, MOE_DIST_LOADS, MOE_DIST_N };

/* The routing of a model file (model.h, "moe" object). */
struct moe_config {
	long experts;             /* E routed experts; 0 = a dense model */
	long top_k;               /* k experts per token */
	long expert_ffn;          /* inner size of one expert's MLP */
	long shared_experts;      /* experts every token passes through */
	long shared_ffn;          /* inner size of one shared expert (default expert_ffn) */
	double capacity_factor;   /* C, 0 = dropless */
	enum moe_dist dist;
	double zipf_s;            /* Zipf exponent (dist = zipf) */
	int nloads;               /* = experts when dist = loads */
	double loads[MOE_MAX_EXPERTS];
	long first_dense;         /* the first layers are dense (first_k_dense_replace) */
	long groups;              /* G expert groups (n_group); 0 = no group limit */
	long groups_per_token;    /* M groups a token may use (topk_group) */
};

/* What the routing does to an EP group of ep ranks. */
struct moe_balance {
	double kept_fraction;     /* token copies kept (1 - dropped) */
	double rank_load;         /* busiest rank's kept copies / T k */
	double imbalance;         /* busiest rank's kept copies / the ranks' mean */
	int busiest_rank;         /* its index in the EP group */
};

/* Routing of cfg, with dist, zipf_s and capacity_factor taken from the
 * arguments (callers pass cfg's own to change nothing), over ep ranks
 * (ep must divide cfg->experts; BUG otherwise). */
void moe_balance(const struct moe_config *cfg, enum moe_dist dist, double zipf_s,
		 double capacity_factor, int ep, struct moe_balance *out);

/* Node-limited routing (DeepSeek-V3, arXiv 2412.19437, section 2.1.2:
 * "each token will be sent to at most M nodes", chosen by their experts'
 * affinities; HF config n_group / topk_group) and its dispatch (section
 * 3.2.2: a token crosses InfiniBand once per target node, to the GPU of
 * the same in-node index, and is forwarded over NVLink to the GPUs of
 * its experts there). For an EP group over N nodes of G = E / N experts
 * each and uniform routing, a token's k copies land on distinct experts
 * of the M_n nodes it may use (M_n = min(N, groups_per_token x max(1,
 * N / groups)); no group limit: M_n = N), touching on average
 *   D = M_n (1 - C((M_n - 1) G, k) / C(M_n G, k))
 * nodes, of which a share (N - 1) / N is not the token's own node. So
 * the InfiniBand copies per token are D (N - 1) / N, against the flat
 * all-to-all's k (N - 1) / N. DeepSeek-V3 with EP 64 over 8 nodes, k 8,
 * M 4: D = 3.629, 3.175 copies against 7 (no node limit: D = 5.295,
 * 4.633 copies).
 * Returns the deduplicated node copies per token, D (N - 1) / N; 0 when
 * N <= 1 or the model has no experts. */
double moe_node_copies(const struct moe_config *cfg, int nodes);
/* The flat all-to-all's cross-node copies per token, k (N - 1) / N. */
double moe_flat_node_copies(const struct moe_config *cfg, int nodes);

/* What the dispatch and combine all-to-alls of a model with expert
 * groups (cfg->groups > 0: node-limited routing, dispatched as above)
 * move, over the flat all-to-all of T k copies: moe_node_copies() /
 * moe_flat_node_copies() for an EP group of ep ranks, stride ranks apart
 * (tp x cp in Megatron's order), on nodes of gpn GPUs; 1 without groups
 * or within one node. The flat all-to-all's bytes scaled by it carry
 * the deduplicated InfiniBand volume (the NVLink forwarding is folded
 * into the same scale: InfiniBand is the bound, section 3.2.2). */
double moe_dispatch_scale(const struct moe_config *cfg, int ep, int stride, int gpn);

/* Name tables, NULL-terminated, in enum order. */
extern const char *const moe_dist_names[];

#endif
