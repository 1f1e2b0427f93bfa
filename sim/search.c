/* search: the plan space, its estimate and the screen (see search.h;
 * the goal file is goal.c). */
#include "search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "anatomy.h"
#include "coll.h"
#include "hash.h"
#include "moe.h"
#include "placement.h"
#include "xalloc.h"

/* ---- the estimate ---- */

struct price {
	long mb;
	int tp, cp, ep, etp;
	bool sp, cp_a2a;
	enum attention attn;
	double f, b, sel;           /* per layer (attention + MLP), one micro-batch */
	double attn_fb;             /* the attention block's forward and backward */
	double rank_load;           /* MoE: the busiest EP rank's token copies / T k */
	double embed_f, embed_b, head_f, head_b;
};

/* The pipeline's send to the next stage, as a comm group (the others are
 * enum group_kind's: GROUP_TP, _DP, _CP, _EP, _EDP). */
#define COMM_PP_SEND GROUP_N

struct comm {
	int nodes, tp, pp, cp, ep, etp, dp, group;  /* group: enum group_kind or COMM_PP_SEND */
	char order[16];
	enum coll_op op;
	double alpha_s, s_per_byte;
};

struct search_cache {
	const struct inputs *in;
	struct price *p;
	int np;
	size_t capp;
	struct comm *c;
	int nc;
	size_t capc;
	int *slot;                  /* c's index + 1 by comm_hash(), 0: empty */
	size_t nslot;               /* a power of two, at least 2 nc */
};

struct search_cache *search_cache_create(const struct inputs *in)
{
	struct search_cache *c = xcalloc(1, sizeof(*c));
	c->in = in;
	return c;
}

void search_cache_destroy(struct search_cache *c)
{
	if (!c)
		return;
	free(c->p);
	free(c->c);
	free(c->slot);
	free(c);
}

/* A block's time as blocks_price() takes it: its kernels' GPU time, or
 * the host's time to issue them where that is longer (host.h). */
static double block_time(const struct inputs *in, const struct wl_shape *shp,
			 const struct host_issue *h, enum wl_block b, enum op_pass pass,
			 enum recompute rc)
{
	struct op_list l;
	op_list_init(&l);
	double t = 0;
	if (!workload_block(inputs_model(in), shp, b, pass, rc, &l))
		t = host_block_time(h, cost_list_time(inputs_cost(in), &l),
				    host_issue_time(h, inputs_cost(in), &l));
	op_list_finish(&l);
	return t;
}

/* The attention block's time averaged over the model's layers: those
 * that slide through its window and those that see every key. */
static double attn_time(const struct inputs *in, struct wl_shape *shp, const struct host_issue *h,
			enum op_pass pass, enum recompute rc)
{
	const struct model *m = inputs_model(in);
	double fs = m->layers > 0 ? (double)model_sliding_layers_in(m, 0, m->layers) / (double)m->layers : 0;
	shp->sliding = false;
	double t = block_time(in, shp, h, WL_ATTN, pass, rc);
	if (fs > 0) {
		shp->sliding = true;
		t = (1 - fs) * t + fs * block_time(in, shp, h, WL_ATTN, pass, rc);
		shp->sliding = false;
	}
	return t;
}

static const struct price *price_of(struct search_cache *c, const struct plan *pl)
{
	for (int i = 0; i < c->np; i++)
		if (c->p[i].mb == pl->training.micro_batch && c->p[i].tp == pl->parallel.tp &&
		    c->p[i].sp == pl->parallel.sp && c->p[i].attn == pl->training.attention &&
		    c->p[i].cp == pl->parallel.cp && c->p[i].ep == pl->parallel.ep &&
		    c->p[i].etp == plan_etp(pl) && c->p[i].cp_a2a == (pl->parallel.cp_comm == CP_A2A))
			return &c->p[i];
	XGROW(c->p, c->capp, (size_t)c->np + 1);
	struct price *p = &c->p[c->np++];
	struct wl_shape shp = plan_wl_shape(pl);
	struct host_issue h = plan_host_issue(pl);
	p->mb = pl->training.micro_batch, p->tp = pl->parallel.tp, p->sp = pl->parallel.sp,
	p->attn = pl->training.attention;
	p->cp = pl->parallel.cp, p->ep = pl->parallel.ep, p->etp = plan_etp(pl), p->cp_a2a = pl->parallel.cp_comm == CP_A2A;
	struct moe_balance bal;
	workload_moe_balance(inputs_model(c->in), &shp, &bal);
	p->rank_load = bal.rank_load;
	double af = attn_time(c->in, &shp, &h, PASS_FWD, RECOMPUTE_NONE);
	p->f = af + block_time(c->in, &shp, &h, WL_MLP, PASS_FWD, RECOMPUTE_NONE);
	double ab = attn_time(c->in, &shp, &h, PASS_BWD, RECOMPUTE_NONE);
	p->attn_fb = af + ab;
	p->b = ab + block_time(c->in, &shp, &h, WL_MLP, PASS_BWD, RECOMPUTE_NONE);
	p->sel = attn_time(c->in, &shp, &h, PASS_BWD, RECOMPUTE_SELECTIVE) - ab;
	p->embed_f = block_time(c->in, &shp, &h, WL_EMBED, PASS_FWD, RECOMPUTE_NONE);
	p->embed_b = block_time(c->in, &shp, &h, WL_EMBED, PASS_BWD, RECOMPUTE_NONE);
	p->head_f = block_time(c->in, &shp, &h, WL_HEAD, PASS_FWD, RECOMPUTE_NONE);
	p->head_b = block_time(c->in, &shp, &h, WL_HEAD, PASS_BWD, RECOMPUTE_NONE);
	return p;
}

static uint64_t comm_hash(const struct comm *k)
{
	uint64_t h = ((uint64_t)k->nodes << 40) ^ ((uint64_t)k->tp << 24) ^ ((uint64_t)k->pp << 8) ^
		     ((uint64_t)k->group << 5) ^ (uint64_t)k->op ^ ((uint64_t)k->cp << 52) ^
		     ((uint64_t)k->ep << 32) ^ ((uint64_t)k->etp << 16);
	for (const char *s = k->order; *s; s++)
		h = h * 31 + (unsigned char)*s;
	return h;
}

/* Whether a and b price the same collective (dp follows from the rest). */
static bool comm_same(const struct comm *a, const struct comm *b)
{
	return a->nodes == b->nodes && a->tp == b->tp && a->pp == b->pp && a->cp == b->cp &&
	       a->ep == b->ep && a->etp == b->etp && a->group == b->group && a->op == b->op && !strcmp(a->order, b->order);
}

/* The slot of key in c's table: its entry's or the empty one where it
 * goes. */
static size_t comm_slot(const struct search_cache *c, const struct comm *key)
{
	size_t j = hash_slot(comm_hash(key), c->nslot);
	while (c->slot[j] && !comm_same(&c->c[c->slot[j] - 1], key))
		j = (j + 1) & (c->nslot - 1);
	return j;
}

/* Index every entry of c anew in a table of twice the slots. */
static void comm_rehash(struct search_cache *c)
{
	free(c->slot);
	c->nslot = c->nslot ? 2 * c->nslot : 64;
	c->slot = xcalloc(c->nslot, sizeof(*c->slot));
	for (int i = 0; i < c->nc; i++)
		c->slot[comm_slot(c, &c->c[i])] = i + 1;
}

/* alpha and s_per_byte of k (pl's layout): the closed form of op on rank
 * 0's group at two sizes. */
static void comm_price(const struct search_cache *c, const struct plan *pl, struct comm *k)
{
	struct placement place;
	placement_init_ep(&place, pl->parallel.tp, pl->parallel.cp, k->ep, pl->parallel.dp, pl->parallel.pp,
			  pl->parallel.order);
	placement_set_etp(&place, k->etp);
	int n, *ranks;
	if (k->group == COMM_PP_SEND) {
		ranks = xmalloc(2 * sizeof(int));
		ranks[0] = 0;
		ranks[1] = placement_stage_peer(&place, 0, 1);
		n = 2;
	} else {
		ranks = xmalloc((size_t)placement_group_size(&place, (enum group_kind)k->group) * sizeof(int));
		n = placement_group(&place, (enum group_kind)k->group, 0, ranks);
	}
	double t[2] = { 0, 0 }, sz[2] = { 1e6, 1e9 };
	for (int s = 0; s < 2 && n > 1; s++) {
		struct coll_time ct;
		if (!coll_time_uncontended(inputs_topology(c->in), pl->communication.coll_algo, k->op,
					   ranks, n, sz[s], &ct))
			t[s] = fmax(ct.ideal_time_s, ct.nccl_time_s);
	}
	free(ranks);
	k->s_per_byte = (t[1] - t[0]) / (sz[1] - sz[0]);
	k->alpha_s = fmax(0, t[0] - k->s_per_byte * sz[0]);
}

/* Uncontended time of op on rank 0's group: alpha + bytes x s_per_byte,
 * both from the collective planner's closed form (and NCCL's predicted
 * time where it is the larger), measured at two sizes. The closed form
 * comes without the plan's flows where the group allows
 * (coll_time_uncontended: a data-parallel group of 16,384 GPUs priced
 * from one node and the fabric's link classes), and the prices are found
 * by hash, so the screen's cost per plan does not grow with the cluster. */
static double comm_time(struct search_cache *c, const struct plan *pl, int group, enum coll_op op,
			double bytes)
{
	/* the expert groups' members follow ep (the expert-data-parallel
	 * group's etp too); the others' do not (ep lives inside dp,
	 * placement.h), so those share one price over ep */
	bool by_ep = group == GROUP_EP || group == GROUP_EDP;
	struct comm key = { .nodes = pl->nodes, .tp = pl->parallel.tp, .pp = pl->parallel.pp,
			    .cp = pl->parallel.cp, .ep = by_ep ? pl->parallel.ep : 1,
			    .etp = by_ep ? plan_etp(pl) : pl->parallel.tp,
			    .dp = pl->parallel.dp, .group = group, .op = op };
	_Static_assert(sizeof(key.order) == sizeof(pl->parallel.order), "one order size");
	memcpy(key.order, pl->parallel.order, sizeof(key.order));
	if (2 * ((size_t)c->nc + 1) > c->nslot)
		comm_rehash(c);
	size_t j = comm_slot(c, &key);
	if (!c->slot[j]) {
		XGROW(c->c, c->capc, (size_t)c->nc + 1);
		c->c[c->nc] = key;
		comm_price(c, pl, &c->c[c->nc]);
		c->slot[j] = ++c->nc;
	}
	const struct comm *k = &c->c[c->slot[j] - 1];
	return k->alpha_s + bytes * k->s_per_byte;
}

/* The context-parallel exchange of one layer, one micro-batch, forward
 * and backward, beyond what hides it (sim/build_transformer_step.c
 * attn_cp): the ring's cp - 1 K/V sends a pass (dK, dV too backward)
 * behind the attention's cp - 1 off-diagonal steps, or Ulysses' four
 * blocking all-to-alls (q k v and the output, and back). fwd_again: full
 * recompute runs the forward's exchange once more. */
static double cp_exchange(struct search_cache *c, const struct plan *pl, const struct price *pr,
			  const struct precision *prec, bool fwd_again)
{
	const struct model *m = inputs_model(c->in);
	int cp = pl->parallel.cp;
	if (cp <= 1)
		return 0;
	/* the bytes of build_transformer.c's msg.cp_* */
	double t = pl->parallel.tp, hd = (double)model_head_dim(m), kvh = fmax(1, (double)m->kv_heads / t);
	double tok = (double)pl->training.micro_batch * pl->training.seq / cp * dtype_bytes(prec->activation);
	double kv = 2 * kvh * hd * tok, out = (double)m->heads / t * hd * tok, qkv = out + kv;
	double again = fwd_again ? 1 : 0;
	if (pl->parallel.cp_comm == CP_A2A) {
		double one = comm_time(c, pl, GROUP_CP, COLL_ALLTOALL, qkv) + comm_time(c, pl, GROUP_CP, COLL_ALLTOALL, out);
		return (2 + again) * one;
	}
	double fwd = (cp - 1) * comm_time(c, pl, GROUP_CP, COLL_SENDRECV, kv);
	double bwd = (cp - 1) * comm_time(c, pl, GROUP_CP, COLL_SENDRECV, 2 * kv);
	return fmax(0, (1 + again) * fwd + bwd - pr->attn_fb * (cp - 1) / cp);
}

/* The MoE dispatcher's collectives of one layer, one micro-batch, each
 * pass (build_transformer_step.c moe_mlp, blocking, Megatron-Core's
 * alltoall dispatcher, build_transformer.c "Mixture of experts"): with
 * ep > 1 the dispatch and combine all-to-alls, bytes as
 * build_transformer.c's msg.ep_bytes, on the EP group (NVLink while it
 * stays in a node, the NIC beyond: the collective planner's closed form
 * of that group); with etp > 1 the routed copies' all-gather and
 * reduce-scatter over expert TP (the TP group), msg.etp_bytes. Averaged
 * over the layers (the first_dense_layers have none). */
static double ep_exchange(struct search_cache *c, const struct plan *pl, const struct price *pr,
			  const struct precision *prec, bool fwd_again)
{
	const struct model *m = inputs_model(c->in);
	int etp = plan_etp(pl);
	if ((pl->parallel.ep <= 1 && etp <= 1) || !model_is_moe(m) || m->layers <= 0)
		return 0;
	double t = pl->parallel.tp;
	double tok = (double)pl->training.micro_batch * pl->training.seq / pl->parallel.cp /
		     (pl->parallel.sp ? t : 1);
	double copies = tok * (double)m->moe.top_k * pr->rank_load * (double)m->hidden *
			dtype_bytes(prec->activation);
	double nl = moe_dispatch_scale(&m->moe, pl->parallel.ep, plan_ep_stride(pl),
				       inputs_topology(c->in)->gpus_per_node);
	double share = (double)model_moe_layers(m) / (double)m->layers, r = 0;
	if (pl->parallel.ep > 1)
		r = (fwd_again ? 6 : 4) * share * comm_time(c, pl, GROUP_EP, COLL_ALLTOALL, copies * nl);
	if (etp > 1)
		r += (fwd_again ? 3 : 2) * share *
		     (comm_time(c, pl, GROUP_TP, COLL_ALLGATHER, etp * copies) +
		      comm_time(c, pl, GROUP_TP, COLL_REDUCE_SCATTER, etp * copies));
	return r;
}

/* The data-parallel side of an iteration: the gradients' reduction beyond
 * the backward that hides it, ZeRO's parameter gathers, the optimizer
 * step (into *opt_s; returns the rest). Dense parameters over the DP
 * group (dp x cp), an MoE model's experts (ep > 1 or etp < tp) over the
 * expert-data-parallel group (dp x cp x tp / (etp ep), plan_edp; their
 * share of the rank le / (etp ep), build_transformer_stage.c psi_e). */
static double dp_side(struct search_cache *c, const struct plan *pl, const struct price *pr,
		      const struct precision *prec, double L, double layer, double mbs, double *opt_s)
{
	const struct model *m = inputs_model(c->in);
	const struct topology *t = inputs_topology(c->in);
	int tp = pl->parallel.tp, ep = pl->parallel.ep, etp = plan_etp(pl);
	long ndp = (long)pl->parallel.dp * pl->parallel.cp, nedp = plan_edp(pl);
	double psi = L * model_layer_params(m) / tp + model_embedding_params(m) / tp, psi_e = 0;
	bool frozen = finetune_frozen(&pl->training.finetune);
	if (frozen) /* LoRA: the adapters are trained */
		psi = L * finetune_layer_adapter_params(m, &pl->training.finetune, tp);
	else if ((ep > 1 || etp != tp) && m->layers > 0) {
		double le = L * (double)model_moe_layers(m) / (double)m->layers * model_layer_expert_params(m) / tp;
		psi -= le;
		psi_e = etp == tp ? le / ep : le * tp / etp / ep;
	}
	double gb = dtype_bytes(pl->training.grad_dtype), exposed = 0;
	double wb = dtype_bytes(frozen ? prec->weight : prec->layer_weight);
	if (ndp > 1) {
		double window = pl->communication.overlap_grad_reduce ? L * pr->b : 0;
		if (pl->parallel.zero == ZERO_3) {
			double lp = L * model_layer_params(m) / tp * dtype_bytes(prec->layer_weight);
			double per_mb = 2 * comm_time(c, pl, GROUP_DP, COLL_ALLGATHER, lp) +
					comm_time(c, pl, GROUP_DP, COLL_REDUCE_SCATTER, lp / dtype_bytes(prec->layer_weight) * gb);
			exposed = mbs * fmax(0, per_mb - L * layer);
		} else {
			enum coll_op red = pl->parallel.zero == ZERO_0 ? COLL_ALLREDUCE : COLL_REDUCE_SCATTER;
			double r = comm_time(c, pl, GROUP_DP, red, psi * gb);
			if (psi_e > 0 && nedp > 1)
				r += comm_time(c, pl, GROUP_EDP, red, psi_e * gb);
			exposed = fmax(0, r - window);
			if (pl->parallel.zero != ZERO_0) {
				exposed += comm_time(c, pl, GROUP_DP, COLL_ALLGATHER, psi * wb);
				if (psi_e > 0 && nedp > 1)
					exposed += comm_time(c, pl, GROUP_EDP, COLL_ALLGATHER, psi_e * wb);
			}
		}
	}
	bool shard = pl->parallel.zero >= ZERO_1;
	double psi_opt = psi / (shard ? (double)ndp : 1) + psi_e / (shard ? (double)nedp : 1);
	*opt_s = psi_opt * prec->optimizer_step_bytes / (t->gpu.hbm_bw_Bps * t->gpu.mem_eff_max);
	return exposed;
}

double search_estimate(struct search_cache *c, const struct plan *pl, double *busy)
{
	const struct model *m = inputs_model(c->in);
	const struct price *pr = price_of(c, pl);
	struct precision prec;
	precision_init(&prec, pl->training.precision, pl->training.fp8_comm);
	if (pl->training.fp8_params)
		precision_fp8_params(&prec);
	int v = pl->parallel.schedule == SCHED_INTERLEAVED ? pl->parallel.interleave : 1;
	double mbs = (double)plan_microbatches(pl);
	double L = (double)m->layers / pl->parallel.pp;
	bool full = pl->parallel.recompute == RECOMPUTE_FULL;
	double rc = full ? pr->f : pl->parallel.recompute == RECOMPUTE_SELECTIVE ? pr->sel : 0;
	double act = (double)pl->training.micro_batch * pl->training.seq / pl->parallel.cp * m->hidden *
		     dtype_bytes(prec.activation);
	double tpc = 0;
	if (pl->parallel.tp > 1) {
		double pair;   /* a half-layer's TP collectives, one pass */
		if (pl->parallel.sp)
			pair = comm_time(c, pl, GROUP_TP, COLL_ALLGATHER, act / dtype_bytes(prec.activation) *
									  dtype_bytes(prec.tp_comm)) +
			       comm_time(c, pl, GROUP_TP, COLL_REDUCE_SCATTER, act);
		else
			pair = comm_time(c, pl, GROUP_TP, COLL_ALLREDUCE, act);
		/* an MoE layer's MLP half has only its shared experts' (the
		 * routed experts' in ep_exchange; build_transformer.c) */
		double moe = model_is_moe(m) && m->layers > 0 ? (double)model_moe_layers(m) / (double)m->layers : 0;
		double mlp = 1 - moe + (model_is_moe(m) && m->moe.shared_experts > 0 ? moe : 0);
		tpc = (full ? 3 : 2) * pair * (1 + mlp);
	}
	tpc += cp_exchange(c, pl, pr, &prec, full) + ep_exchange(c, pl, pr, &prec, full);
	double layer = pr->f + pr->b + rc;
	double first = L * (layer + tpc) + pr->embed_f + pr->embed_b;
	double last = L * (layer + tpc) + pr->head_f + pr->head_b;
	double t_mb = fmax(first, last);
	if (pl->parallel.pp > 1)
		t_mb += 2.0 * v * comm_time(c, pl, COMM_PP_SEND, COLL_SENDRECV,
					    act / pl->parallel.tp * (pl->parallel.sp ? 1 : pl->parallel.tp));
	double pipe = (mbs + (double)(pl->parallel.pp - 1) / v) * t_mb;
	double opt, exposed = dp_side(c, pl, pr, &prec, L, layer, mbs, &opt);
	double iter = pipe + exposed + opt;
	if (busy)
		*busy = iter > 0 ? mbs * L * layer / iter : 0;
	return iter;
}

/* ---- the screen ---- */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_cand(const void *a, const void *b)
{
	const struct candidate *x = a, *y = b;
	double p = x->est.gp.wall_s, q = y->est.gp.wall_s;
	if (p != q)
		return p < q ? -1 : 1;
	if (x->est.econ.cost_usd != y->est.econ.cost_usd)
		return x->est.econ.cost_usd < y->est.econ.cost_usd ? -1 : 1;
	return (x->index > y->index) - (x->index < y->index);
}

/* Keep the best keep of the n candidates at c (one node count's): the
 * best `top` of a cluster and the best of each node count are among them,
 * so the screen holds O(node counts x top) plans, never every plan that
 * fits. Returns how many are kept. */
static long keep_best(struct candidate *c, long n, long keep)
{
	if (n > 1)
		qsort(c, (size_t)n, sizeof(*c), cmp_cand);
	return n < keep ? n : keep;
}

/* True if order o places ranks as an earlier order does: with pp = 1 the
 * position of pp in the order does not matter. */
static bool same_order_before(const struct goal *g, int o, int pp)
{
	if (pp > 1)
		return false;
	char a[16], b[16];
	for (int k = 0; k < o; k++) {
		struct placement x, y;
		placement_init(&x, 2, 3, 1, g->order[o]);
		placement_init(&y, 2, 3, 1, g->order[k]);
		bool same = true;
		for (int r = 0; r < 6 && same; r++) {
			int cx[DIM_N], cy[DIM_N];
			placement_coords(&x, r, cx);
			placement_coords(&y, r, cy);
			same = !memcmp(cx, cy, sizeof(cx));
		}
		(void)a, (void)b;
		if (same)
			return true;
	}
	return false;
}

/* Whether plan_check() rejects pl; a rejection is counted in st and its
 * first problem ("/jpath: what", the goal's name and "error: " cut) is
 * tallied into st->why with the plan as the example. */
static bool rejected(const struct goal *g, const struct plan *pl, const struct inputs *in, struct diag *quiet,
		     struct search_stats *st)
{
	size_t at = quiet->len, fl = strlen(g->path);
	diag_first_only(quiet); /* only the first problem is read below */
	if (!plan_check(pl, in, g->path, quiet))
		return false;
	st->invalid++;
	if (!st->why)
		return true;
	const char *msg = quiet->buf + at;
	if (!strncmp(msg, g->path, fl) && !strncmp(msg + fl, ": ", 2))
		msg += fl + 2;
	const char *eol = msg + strcspn(msg, "\n"), *err = strstr(msg, "error: "), *rest = msg;
	int jl = 0;
	if (err && err < eol)
		jl = (int)(err - msg), rest = err + 7;
	/* "jpath: " and the message after "error: ", copied (no printf:
	 * most enumerated plans come here) */
	char line[1024], example[256];
	size_t rl = (size_t)(eol - rest);
	if ((size_t)jl > sizeof(line) - 1)
		jl = (int)sizeof(line) - 1;
	if (rl > sizeof(line) - 1 - (size_t)jl)
		rl = sizeof(line) - 1 - (size_t)jl;
	memcpy(line, msg, (size_t)jl);
	memcpy(line + jl, rest, rl);
	line[jl + rl] = 0;
	if (reasons_count(st->why, line))
		return true;   /* a reason seen before: its example is written */
	plan_describe(pl, example, sizeof(example) - 24);
	size_t el = strlen(example);
	snprintf(example + el, sizeof(example) - el, ", %d nodes", pl->nodes);
	reasons_add(st->why, line, example);
	return true;
}

bool search_same_family(const struct plan *a, const struct plan *b)
{
	const struct plan_parallel *x = &a->parallel, *y = &b->parallel;
	return x->tp == y->tp && x->pp == y->pp && x->cp == y->cp && x->ep == y->ep &&
	       plan_etp(a) == plan_etp(b) &&
	       x->interleave == y->interleave && x->schedule == y->schedule && x->zero == y->zero &&
	       x->recompute == y->recompute && x->sp == y->sp && !strcmp(x->order, y->order) &&
	       a->training.micro_batch == b->training.micro_batch;
}

/* What one screen holds while it enumerates. */
struct screen {
	const struct goal *g;
	int ci;
	const struct plan *family;  /* NULL: every plan; else only this family's */
	int pps[PLAN_MAX_STAGES], npp;
	struct search_cache *cache;
	struct diag quiet;
	struct candidate *out;
	size_t cap;
	long n;
	struct search_stats *st;
};

/* Resolve pl (its shape set) with the goal's training and the cluster's
 * price, and append it to s->out with its estimate when it passes
 * plan_check() and fits. */
static void screen_plan(struct screen *s, struct plan *pl)
{
	const struct goal *g = s->g;
	const struct goal_cluster *cl = &g->clusters[s->ci];
	const struct inputs *in = cl->in;
	struct search_stats *st = s->st;
	pl->training.precision = g->precision;
	pl->training.grad_dtype = precision_weight_dtype(g->precision);
	pl->training.train_tokens = g->train_tokens;
	pl->training.finetune = g->finetune;
	pl->cost.usd_per_gpu_hour = cl->econ.usd_per_gpu_hour;
	plan_resolve(pl, in);
	st->enumerated++;
	if (rejected(g, pl, in, &s->quiet, st))
		return;
	struct mem_anatomy mem;
	anatomy_worst(in, pl, &mem, NULL);
	if (!mem.fits) {
		st->no_fit++;
		return;
	}
	st->screened++;
	struct candidate cd = { .plan = *pl, .cluster = s->ci, .mem_bytes = mem.total_bytes,
				.index = st->screened };
	cd.est_iter_s = search_estimate(s->cache, pl, &cd.est_busy);
	cd.est_tokens_per_s = (double)pl->training.global_batch * pl->training.seq / cd.est_iter_s;
	assess_plan(in, pl, cd.est_tokens_per_s, cd.est_busy, NULL, &cl->econ, &g->goodput, &cd.est);
	XGROW(s->out, s->cap, (size_t)s->n + 1);
	s->out[s->n++] = cd;
}

/* The numbers of micro-batches of `unit` samples each (dp x micro-batch)
 * whose global batch lies in g's range: the powers of two and the
 * largest (search.h), into ms (room for 64). Returns how many. */
static int batch_counts(const struct goal *g, long unit, long *ms)
{
	long mmin = (long)ceil(g->gb_min_tokens / g->seq / unit);
	long mmax = (long)floor(g->gb_max_tokens / g->seq / unit);
	if (mmin < 1)
		mmin = 1;
	int nm = 0;
	for (long x = 1; x <= mmax && nm < 62; x *= 2)
		if (x >= mmin)
			ms[nm++] = x;
	if (mmax >= mmin && (nm == 0 || ms[nm - 1] != mmax))
		ms[nm++] = mmax;
	return nm;
}

/* Whether a plan of tp leaves out expert tensor parallelism 1 (et) or
 * tp (!et): not in search.etp (goal_tries_etp), or etp 1 where it is tp
 * (tp 1: tried as etp tp) or plan_check refuses it (MoE with TP needs
 * sp; the default leaves out ZeRO-3). */
static bool etp_skipped(const struct goal *g, const struct inputs *in, int tp, bool et, bool sp, int zero)
{
	if (et && (tp == 1 || !sp || (g->netp == 0 && zero >= 3)))
		return true;
	return !goal_tries_etp(g, inputs_model(in), tp, et ? 1 : tp);
}

/* One shape screen_nodes' outer loops fix: the node count, the parallel
 * degrees, interleaving, the micro-batch and its dp x micro-batch unit. */
struct shape {
	long nodes, dp, mb, unit;
	int tp, pp, cp, v;
};

/* Indices into the goal's lists of one candidate's remaining choices:
 * ep, expert TP 1 or tp (et), ZeRO, recompute, sp and order. */
struct pick {
	int x, et, z, r, sp, o;
};

/* Whether pick k of shape sh is left out before its plan is built: sp
 * without TP, an ep that does not divide dp or is not the family's, an
 * expert TP etp_skipped() refuses, or an order already tried. */
static bool pick_skipped(const struct screen *s, const struct shape *sh, const struct pick *k)
{
	const struct goal *g = s->g;
	const struct plan *fam = s->family;
	int ep = g->ep[k->x];
	if ((g->sp[k->sp] && sh->tp == 1) || sh->dp % ep || (fam && ep != fam->parallel.ep) ||
	    etp_skipped(g, g->clusters[s->ci].in, sh->tp, k->et, g->sp[k->sp], g->zero[k->z]))
		return true;
	return same_order_before(g, k->o, sh->pp);
}

/* The plan of shape sh, pick k and m micro-batch units into *pl. */
static void pick_plan(const struct screen *s, const struct shape *sh, const struct pick *k, long m,
		      struct plan *pl)
{
	const struct goal *g = s->g;
	const struct inputs *in = g->clusters[s->ci].in;
	int tp = sh->tp, cp = sh->cp, v = sh->v;
	int etp = k->et ? 1 : tp;
	plan_init(pl);
	pl->nodes = (int)sh->nodes;
	pl->parallel.tp = tp, pl->parallel.pp = sh->pp, pl->parallel.dp = (int)sh->dp;
	pl->parallel.cp = cp, pl->parallel.ep = g->ep[k->x];
	pl->parallel.etp = etp == tp ? 0 : etp;
	/* the ring's chunks of a sliding window are not modelled
	 * (plan_check): such a model splits heads (Ulysses) */
	pl->parallel.cp_comm = cp > 1 && inputs_model(in)->sliding_window > 0 ? CP_A2A : CP_P2P;
	pl->parallel.interleave = v;
	pl->parallel.schedule = v > 1 ? SCHED_INTERLEAVED : SCHED_1F1B;
	pl->training.micro_batch = sh->mb;
	pl->training.global_batch = sh->unit * m;
	pl->training.seq = g->seq;
	pl->parallel.zero = (enum zero_stage)g->zero[k->z];
	pl->parallel.recompute = (enum recompute)g->rc[k->r];
	pl->parallel.sp = g->sp[k->sp];
	snprintf(pl->parallel.order, sizeof(pl->parallel.order), "%s", g->order[k->o]);
}

/* Screen every batch and remaining choice of shape sh (screen_plan). */
static void screen_shape(struct screen *s, const struct shape *sh)
{
	const struct goal *g = s->g;
	long ms[64];
	int nm = batch_counts(g, sh->unit, ms);
	struct pick k;
	for (int f = 0; f < nm; f++)
	for (k.x = 0; k.x < g->nep; k.x++)
	for (k.et = 0; k.et < 2; k.et++)
	for (k.z = 0; k.z < g->nzero; k.z++)
	for (k.r = 0; k.r < g->nrc; k.r++)
	for (k.sp = 0; k.sp < g->nsp; k.sp++)
	for (k.o = 0; k.o < g->norder; k.o++) {
		if (pick_skipped(s, sh, &k))
			continue;
		struct plan pl;
		pick_plan(s, sh, &k, ms[f], &pl);
		if (s->family && !search_same_family(&pl, s->family))
			continue;
		screen_plan(s, &pl);
	}
}

/* Screen the interleavings and micro-batches of sh's degrees (its
 * nodes, tp, pp, cp and dp set): those of s->family's only when set. */
static void screen_degrees(struct screen *s, struct shape *sh)
{
	const struct goal *g = s->g;
	const struct plan *fam = s->family;
	for (int c = 0; c < g->nv; c++)
	for (int e = 0; e < g->nmb; e++) {
		sh->v = g->v[c];
		if (sh->v > 1 && sh->pp == 1)
			continue;
		sh->mb = g->mb[e];
		if (fam && (sh->v != fam->parallel.interleave || sh->mb != fam->training.micro_batch))
			continue;
		sh->unit = sh->dp * sh->mb;
		screen_shape(s, sh);
		/* the diag keeps the messages; start afresh now and then */
		if (s->quiet.len > (1 << 20)) {
			diag_finish(&s->quiet);
			diag_init(&s->quiet, NULL);
		}
	}
}

/* Append to s->out every plan of cluster s->ci at `nodes` that passes
 * plan_check() and fits (only s->family's when set), with its estimate. */
static void screen_nodes(struct screen *s, long nodes)
{
	const struct goal *g = s->g;
	const struct topology *t = inputs_topology(g->clusters[s->ci].in);
	const struct plan *fam = s->family;
	long gpus = nodes * t->gpus_per_node;
	for (int a = 0; a < g->ntp; a++)
	for (int b = 0; b < s->npp; b++)
	for (int q = 0; q < g->ncp; q++) {
		int tp = g->tp[a], pp = s->pps[b], cp = g->cp[q];
		if (gpus % ((long)tp * cp * pp) || tp > t->gpus_per_node)
			continue;
		if (fam && (tp != fam->parallel.tp || pp != fam->parallel.pp || cp != fam->parallel.cp))
			continue;
		struct shape sh = { .nodes = nodes, .dp = gpus / ((long)tp * cp * pp), .tp = tp, .pp = pp, .cp = cp };
		screen_degrees(s, &sh);
	}
}

static void screen_init(struct screen *s, const struct goal *g, int ci, const struct plan *family,
			struct search_stats *st)
{
	const struct model *m = inputs_model(g->clusters[ci].in);
	*s = (struct screen){ .g = g, .ci = ci, .family = family, .st = st };
	if (g->npp) {
		memcpy(s->pps, g->pp, sizeof(int) * (size_t)g->npp);
		s->npp = g->npp;
	} else
		for (int p = 1; p <= 32 && p <= m->layers; p++)
			if (m->layers % p == 0)
				s->pps[s->npp++] = p;
	s->cache = search_cache_create(g->clusters[ci].in);
	diag_init(&s->quiet, NULL);
}

static void screen_finish(struct screen *s)
{
	diag_finish(&s->quiet);
	search_cache_destroy(s->cache);
}

struct candidate *search_screen(const struct goal *g, int ci, long *n, struct search_stats *st)
{
	const struct goal_cluster *cl = &g->clusters[ci];
	struct screen s;
	double t0 = now_s();
	long keep = g->top > SEARCH_PER_COUNT ? g->top : SEARCH_PER_COUNT;
	screen_init(&s, g, ci, NULL, st);
	for (int ni = 0; ni < cl->nnodes; ni++) {
		long start = s.n;
		screen_nodes(&s, cl->nodes[ni]);
		s.n = start + keep_best(s.out + start, s.n - start, keep);
	}
	screen_finish(&s);
	if (s.n)
		qsort(s.out, (size_t)s.n, sizeof(*s.out), cmp_cand);
	st->screen_s += now_s() - t0;
	*n = s.n;
	return s.out;
}

bool search_screen_family(const struct goal *g, int ci, long nodes, const struct plan *family,
			  struct candidate *out, struct search_stats *st)
{
	struct screen s;
	double t0 = now_s();
	screen_init(&s, g, ci, family, st);
	screen_nodes(&s, nodes);
	screen_finish(&s);
	long best = -1;
	for (long k = 0; k < s.n; k++)
		if (best < 0 || cmp_cand(&s.out[k], &s.out[best]) < 0)
			best = k;
	if (best >= 0)
		*out = s.out[best];
	free(s.out);
	st->screen_s += now_s() - t0;
	return best >= 0;
}
