/* search: plans and clusters for a training goal (`ddlsim plan`).
 *
 * A goal (schema "ddlsim.goal" 1.0) names a model, the tokens to train,
 * the sequence length, a deadline and/or a budget, a range of global
 * batch sizes, and candidate clusters (a topology file, node counts,
 * prices). What holds for every candidate (plan_check_fixed_model and
 * _gpu: LoRA on an encoder, NF4 at fp8, a precision the GPU has no peak
 * for; plan_check_train_time: the fastest the tokens could train) is
 * checked when the goal loads, said once with its JSON path (exit 3)
 * rather than as the reason each plan is rejected for.
 * For every cluster and node count the search enumerates the
 * plan space — tp, pp, interleave (virtual stages), dp (what is left),
 * micro-batch, global batch, ZeRO stage, recompute, sp, the placement
 * order, context parallelism cp (GPUs = tp x cp x pp x dp) and, for an MoE
 * model, expert parallelism ep (inside dp: ep divides dp and the experts,
 * placement.h) — and screens each plan in-process:
 *   1. plan_check() (the simulator's own validity test),
 *   2. the memory anatomy of the first and last stage (anatomy.h) against
 *      the GPU's usable capacity,
 *   3. an analytic iteration time (search_estimate()): per-layer compute
 *      priced by the cost source, TP collectives, pipeline sends and the
 *      data-parallel reduction from the collective closed forms
 *      (coll_plan_create()'s uncontended time, read without building the
 *      plan's flows where the group allows: coll_time_uncontended(),
 *      fabric/coll.h, so the cost per plan does not grow with the
 *      cluster), the context-parallel K/V ring (or Ulysses all-to-alls)
 *      beyond the attention it hides behind, the MoE token all-to-alls
 *      (dispatch and combine, each pass, on the EP group: NVLink inside a
 *      node, the NIC beyond), the experts' gradients reduced over the
 *      expert-data-parallel group (dp x cp / ep), the pipeline bubble (p - 1) / (v m) of the
 *      micro-batches' time, the optimizer.
 * The plans that survive are ranked by the estimate's wall time to train
 * (goodput included) and the best `top` per cluster, plus the best
 * SEARCH_PER_COUNT of each node count and the engine's best plan families
 * carried to the other node counts (search_screen_family), are simulated
 * on the engine through the runner; the report
 * checks the screen's ranking against the engine's (Spearman's rho).
 *
 *   key                       type      unit    default     meaning
 *   name, description         string    -       file name
 *   model                     string    path    required    model file
 *   seq_len                   int       tokens  required    a vit model's: derived from its image
 *                                                           ((image_size / patch_size)^2 + 1),
 *                                                           may be left out
 *   train_tokens              number    tokens  required    (or epochs and dataset_tokens)
 *   epochs                    number    -       -           instead of train_tokens: passes over
 *   dataset_tokens            number    tokens  -           a dataset of this many tokens
 *                                                           (epochs x it bounded as train_tokens)
 *   deadline_days             number    days    -           wall time to train, goodput included
 *   budget_usd                number    USD     -           cost to train
 *   global_batch_tokens.min   number    tokens  required    global batch range (samples x seq_len)
 *   global_batch_tokens.max   number    tokens  required
 *   precision                 string    -       "bf16"      training precision
 *   top                       int       -       20          plans simulated per cluster (1..1000)
 *                                                           for the tables; never moves the
 *                                                           fewest GPUs (cmd_plan's carry)
 *   clusters                  [object]  -       required    candidate clusters:
 *     name                    string    -       topology    display name
 *     topology                string    path    required
 *     nodes                   [int] | range | "auto"     required    node counts ("32..512 step x2");
 *                                                           "auto": the fewest that meet
 *                                                           deadline_days (search_auto_nodes)
 *     economics               object    -       {}          economics.h keys (prices)
 *   search.tp, .pp, .interleave, .micro_batch, .zero   [int]   the values tried (defaults:
 *                                tp 1,2,4,8 (dividing GPUs per node); pp the divisors of the
 *                                layers up to 32; interleave 1,2,4; micro_batch 1,2,4; zero 0..3)
 *   search.ep                 [int]     -       divisors    expert-parallel degrees (MoE models only;
 *                                                           each must divide the experts; default:
 *                                                           every divisor of the experts; a dense
 *                                                           model: 1, and listing ep > 1 is an error)
 *   search.etp                array     -       [1, "tp"]   expert-tensor-parallel degrees tried: 1
 *                                                           (each expert whole on a rank; MoE models
 *                                                           only) and/or "tp" (the plan's tp);
 *                                                           default: both, only "tp" for a dense
 *                                                           model, one with shared experts, or
 *                                                           ZeRO-3 (not modelled with etp 1)
 *   search.cp                 [int]     -       1 | 1,2,4,8 context-parallel degrees (seq_len must
 *                                                           divide by 2 cp; default: 1,2,4,8 when
 *                                                           seq_len >= 16384 (SEARCH_CP_SEQ), else
 *                                                           1); the ring (cp_comm "p2p"), Ulysses
 *                                                           ("a2a") for a sliding-window model
 *   search.recompute          [string]  -       none, selective, full
 *   search.sp                 [bool]    -       false, true (true only with tp > 1)
 *   search.order              [string]  -       "tp,dp,pp", "tp,pp,dp"
 *   goodput                   object    -       goodput.h keys
 *   finetune                  object    -       full        LoRA / QLoRA, the keys of the
 *                                                           scenario's training.finetune
 *                                                           (models/finetune.h), for every plan
 *
 * Global batch: for each (dp, micro-batch) the numbers of micro-batches m
 * that are powers of two, and the largest m, whose batch lies in the
 * range (a larger batch at the same plan only shortens the bubble; the
 * range is the user's statement of what converges). */
#ifndef DDLSIM_SEARCH_H
#define DDLSIM_SEARCH_H

#include <stdbool.h>

#include "assess.h"
#include "diag.h"
#include "inputs.h"
#include "plan.h"
#include "reasons.h"

#define SEARCH_MAX_VALUES 32
/* Context parallelism is searched by default (cp 1, 2, 4, 8) from this
 * sequence length on; below it, cp = 1 only. Why 16k: NVIDIA's long-context
 * recipes turn CP on from 16k tokens (NeMo Framework user guide, "Long
 * Context Recipes": Llama 3, Mixtral 8x7B and Nemotron at 16k and 64k, CP
 * the key technique), their shorter-sequence recipes run cp = 1; CP's
 * gain is the activation memory of a sequence split cp ways, which below
 * 16k TP, SP and recompute already cover, while it adds the K/V ring to
 * every layer and four times the plans to screen. */
#define SEARCH_CP_SEQ 16384
#define SEARCH_MAX_NODES 100000   /* the largest node count a goal may list */

struct goal_cluster {
	char name[96];
	char topology[1024];
	long *nodes;
	int nnodes;
	bool auto_nodes;            /* "nodes": "auto": search_auto_nodes() fills nodes */
	struct econ_params econ;
	struct inputs *in;          /* owned */
};

struct goal {
	char *path, *name, *description;
	char model[1024];
	long seq;
	double train_tokens;
	const char *tokens_key;     /* the JSON path train_tokens came from (static) */
	double deadline_s, budget_usd;   /* 0 = none */
	double gb_min_tokens, gb_max_tokens;
	enum dtype precision;
	int top;
	struct goal_cluster *clusters;
	int nclusters;
	int tp[SEARCH_MAX_VALUES], ntp;
	int pp[SEARCH_MAX_VALUES], npp;   /* npp = 0: divisors of the layers up to 32 */
	int v[SEARCH_MAX_VALUES], nv;
	int mb[SEARCH_MAX_VALUES], nmb;
	int zero[SEARCH_MAX_VALUES], nzero;
	int ep[SEARCH_MAX_VALUES], nep;   /* nep = 0: the divisors of the experts (MoE), else 1 */
	int etp[2], netp;                 /* 1, or 0 for "tp"; netp = 0: the default
					     (goal_tries_etp) */
	int cp[SEARCH_MAX_VALUES], ncp;   /* ncp = 0: search_cp_default() */
	int rc[3], nrc;
	bool sp[2];
	int nsp;
	char order[4][16];
	int norder;
	struct goodput_params goodput;
	struct finetune finetune;         /* LoRA / QLoRA of the plans (finetune.h) */
};

struct goal *goal_load(const char *path, struct diag *d);
void goal_destroy(struct goal *g);

/* One screened plan. */
struct candidate {
	struct plan plan;
	int cluster;
	double est_iter_s, est_tokens_per_s, est_busy;
	double mem_bytes;
	long index;                 /* order of enumeration: breaks ties of the ranking */
	struct assessment est;      /* from the estimate */
};

struct search_stats {
	long enumerated, invalid, no_fit, screened;
	double screen_s;
	struct reasons *why;        /* borrowed, NULL: none; with one, every plan
				     * plan_check() rejects is tallied into it by its
				     * first problem (util/reasons.h), the plan as the
				     * example */
};

/* Analytic iteration time of pl (passes plan_check()) and the GPUs' busy
 * fraction (compute / iteration). cache: per-inputs memo, NULL to make
 * one per call (search_cache_*). */
struct search_cache;
struct search_cache *search_cache_create(const struct inputs *in);
void search_cache_destroy(struct search_cache *c);
double search_estimate(struct search_cache *c, const struct plan *pl, double *busy);

/* The screen's best plans of each node count that `ddlsim plan` always
 * simulates, whatever --top; with the carried families
 * (search_screen_family) they make the fewest-GPUs answer, which --top
 * then cannot move. The screen ranks plans against the engine with a
 * Spearman rho of 0.7 to 0.8, so its first plan of a count is often not
 * the engine's best: on the shipped 70B how-many goal the engine's best
 * H100 family (tp4 pp4v4 ZeRO-1) is among the screen's best 10 of a count
 * but not its best 5, and with 3 or 5 the fewest H100 are 1,848 or 1,776
 * where 10 find 1,760 (the carry only spreads a family some count holds). */
#define SEARCH_PER_COUNT 10

/* Screen every plan of cluster ci of g: the best g->top (at least
 * SEARCH_PER_COUNT) plans that fit of each node count (so the best `top`
 * of the cluster and the best of each node count are there, and memory
 * and work grow linearly with the node counts), as a new array (caller
 * frees) of *n, sorted by estimated wall time to train, then cost, then
 * order of enumeration. The statistics in *st count every plan. */
struct candidate *search_screen(const struct goal *g, int ci, long *n, struct search_stats *st);

/* Whether a plan of tp tries expert tensor parallelism etp (1 or tp) under
 * g's search.etp (search.h) for model m. */
bool goal_tries_etp(const struct goal *g, const struct model *m, int tp, int etp);

/* Whether plans a and b are of one family: the same plan but for the
 * data-parallel degree, the node count and the global batch (tp, pp, cp,
 * ep, the schedule and its virtual stages, micro-batch, ZeRO stage,
 * recompute, sp and the rank order equal). */
bool search_same_family(const struct plan *a, const struct plan *b);

/* The screen's best plan of family's family (search_same_family) on
 * cluster ci at `nodes`, into *out: the plan as search_screen() would
 * rank it, whatever g->top. Returns false when no plan of the family
 * passes plan_check() and fits there. The statistics are added to *st. */
bool search_screen_family(const struct goal *g, int ci, long nodes, const struct plan *family,
			  struct candidate *out, struct search_stats *st);

/* What search_auto_nodes() found for one cluster. */
struct search_auto {
	long boundary;              /* fewest nodes whose screen meets the goal; 0: none up to cap */
	long cap;                   /* the most nodes the topology holds (and SEARCH_MAX_NODES) */
	int probes;                 /* node counts screened to find it */
	struct search_stats st;     /* their screening, all together */
};

/* "How many GPUs?": for cluster ci with "nodes": "auto", the fewest nodes
 * whose best screened plan meets the goal (wall time to train within
 * deadline_days, goodput included, and cost within budget_usd when set),
 * taking it as monotone in the nodes: the counts 1, 2, 4, ... are
 * screened up to the first that meets it (or the topology's capacity),
 * then the interval is bisected. The screen's estimate is not the
 * engine's, so the cluster's node counts become the boundary b and the
 * counts around it, b - 2, b - 1, b, b + 1, 1.1 b and 1.25 b (rounded up,
 * within [1, cap]): the engine then decides among the plans of those
 * (cmd_plan: fewest GPUs per type). With none meeting it up to the cap,
 * the cap alone. */
void search_auto_nodes(struct goal *g, int ci, struct search_auto *out);
/* The most nodes cluster cl may take: its topology's capacity, at most
 * SEARCH_MAX_NODES. */
long search_node_cap(const struct goal_cluster *cl);

#endif
