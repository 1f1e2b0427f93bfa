/* search: goal files, the plan space, the screen (see search.h). */
#include "search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "anatomy.h"
#include "bounds.h"
#include "coll.h"
#include "hash.h"
#include "jload.h"
#include "placement.h"
#include "reasons.h"
#include "sweep.h"
#include "xalloc.h"

/* ---- goal loader ---- */

static void int_list(struct jobj *jo, const char *key, int *out, int *n, int lo, int hi)
{
	json_t *arr;
	char ap[300];
	if (jobj_array(jo, key, &arr, ap, sizeof(ap), 0) != 1)
		return;
	size_t i;
	json_t *v;
	if (json_array_size(arr) == 0 || json_array_size(arr) > SEARCH_MAX_VALUES) {
		diag_err(jo->d, jo->file, ap, "expected 1 to %d values, got %zu", SEARCH_MAX_VALUES,
			 json_array_size(arr));
		return;
	}
	*n = 0;
	json_array_foreach(arr, i, v) {
		if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi) {
			if (json_is_integer(v))
				diag_err(jo->d, jo->file, ap, "/%zu: expected an integer in [%d, %d], got %lld", i, lo,
					 hi, (long long)json_integer_value(v));
			else
				diag_err(jo->d, jo->file, ap, "/%zu: expected an integer in [%d, %d], got %s", i, lo,
					 hi, jload_type_name(v));
			continue;
		}
		out[(*n)++] = (int)json_integer_value(v);
	}
}

static void load_search(struct jobj *root, struct goal *g)
{
	struct jobj jo;
	static const char *const rc_names[] = { "none", "selective", "full", NULL };
	if (jobj_child(root, "search", &jo, 0) != 1)
		return;
	int_list(&jo, "tp", g->tp, &g->ntp, 1, 1024);
	int_list(&jo, "pp", g->pp, &g->npp, 1, PLAN_MAX_STAGES);
	int_list(&jo, "interleave", g->v, &g->nv, 1, 64);
	int_list(&jo, "micro_batch", g->mb, &g->nmb, 1, 1024);
	int_list(&jo, "zero", g->zero, &g->nzero, 0, 3);
	json_t *arr, *v;
	char ap[300];
	size_t i;
	if (jobj_array(&jo, "recompute", &arr, ap, sizeof(ap), 0) == 1) {
		g->nrc = 0;
		json_array_foreach(arr, i, v) {
			int k;
			for (k = 0; rc_names[k]; k++)
				if (json_is_string(v) && !strcmp(json_string_value(v), rc_names[k]))
					break;
			if (!rc_names[k] || g->nrc == 3)
				diag_err(jo.d, jo.file, ap, "/%zu: expected one of {none, selective, full}", i);
			else
				g->rc[g->nrc++] = k;
		}
	}
	if (jobj_array(&jo, "sp", &arr, ap, sizeof(ap), 0) == 1) {
		g->nsp = 0;
		json_array_foreach(arr, i, v) {
			if (!json_is_boolean(v) || g->nsp == 2)
				diag_err(jo.d, jo.file, ap, "/%zu: expected true or false", i);
			else
				g->sp[g->nsp++] = json_is_true(v);
		}
	}
	if (jobj_array(&jo, "order", &arr, ap, sizeof(ap), 0) == 1) {
		g->norder = 0;
		json_array_foreach(arr, i, v) {
			struct placement pl;
			if (!json_is_string(v) || g->norder == 4 ||
			    placement_init(&pl, 1, 1, 1, json_string_value(v)))
				diag_err(jo.d, jo.file, ap, "/%zu: expected a permutation of tp, dp, pp such as "
					 "\"tp,dp,pp\" (at most 4 orders)", i);
			else
				snprintf(g->order[g->norder++], 16, "%s", json_string_value(v));
		}
	}
	jobj_end(&jo);
}

static void load_clusters(struct jobj *root, struct goal *g)
{
	json_t *arr, *v;
	char ap[300];
	size_t i;
	if (jobj_array(root, "clusters", &arr, ap, sizeof(ap), JREQ) != 1)
		return;
	if (json_array_size(arr) == 0) {
		diag_err(root->d, root->file, ap, "expected at least one cluster, got an empty list");
		return;
	}
	g->clusters = xcalloc(json_array_size(arr), sizeof(*g->clusters));
	json_array_foreach(arr, i, v) {
		struct jobj jo, sub;
		char jp[340];
		snprintf(jp, sizeof(jp), "%.300s/%zu", ap, i);
		if (jobj_init(&jo, v, root->file, jp, root->d))
			continue;
		struct goal_cluster *c = &g->clusters[g->nclusters++];
		econ_params_init(&c->econ);
		const char *s;
		if (jobj_str(&jo, "topology", &s, JREQ | JPATH) == 1) {
			if (jload_resolve(root->file, s, c->topology, sizeof(c->topology)))
				jobj_err(&jo, "topology", "path too long");
			else
				jload_check_ref(&jo, "topology", c->topology);
		}
		jobj_str_copy(&jo, "name", c->name, sizeof(c->name), JNAME);
		json_t *nodes = json_object_get(v, "nodes");
		jobj_has(&jo, "nodes");
		json_t *list = NULL;
		char err[300];
		if (!nodes)
			jobj_err(&jo, "nodes", "missing required key 'nodes'");
		else if (json_is_string(nodes) && !strcmp(json_string_value(nodes), "auto"))
			c->auto_nodes = true;
		else if (json_is_string(nodes)) {
			list = sweep_range(json_string_value(nodes), err, sizeof(err));
			if (!list)
				jobj_err(&jo, "nodes", "%s", err);
		} else if (json_is_array(nodes) && json_array_size(nodes))
			list = json_incref(nodes);
		else
			jobj_err(&jo, "nodes", "expected a list of node counts, a range or \"auto\", got %s",
				 jload_type_name(nodes));
		if (list) {
			size_t k;
			json_t *x;
			c->nodes = xcalloc(json_array_size(list), sizeof(long));
			json_array_foreach(list, k, x) {
				if (!json_is_integer(x))
					jobj_err(&jo, "nodes", "expected node counts in [1, %d], got %s", SEARCH_MAX_NODES,
						 jload_type_name(x));
				else if (json_integer_value(x) < 1 || json_integer_value(x) > SEARCH_MAX_NODES)
					jobj_err(&jo, "nodes", "expected node counts in [1, %d], got %lld", SEARCH_MAX_NODES,
						 (long long)json_integer_value(x));
				else
					c->nodes[c->nnodes++] = (long)json_integer_value(x);
			}
			json_decref(list);
		}
		if (jobj_child(&jo, "economics", &sub, 0) == 1) {
			econ_params_load(&sub, &c->econ);
			jobj_end(&sub);
		}
		jobj_end(&jo);
	}
}

/* seq_len: required, but a ViT's follows from its image (model.h:
 * (image_size / patch_size)^2 + 1) and may be left out; given, it must
 * equal that. The model file is read here for its architecture (when
 * /model named a readable file): a model that does not load is reported
 * here, as what stops the goal, rather than as a missing seq_len. */
static void load_seq(struct jobj *jo, struct goal *g, bool model_ok)
{
	int before = diag_count(jo->d);
	struct model *m = model_ok && g->model[0] ? model_load(g->model, jo->d) : NULL;
	if (diag_count(jo->d) != before) {
		model_destroy(m);
		jobj_int(jo, "seq_len", &g->seq, 1, 0);
		return;
	}
	if (!m || !model_is_vit(m)) {
		jobj_int(jo, "seq_len", &g->seq, 1, JREQ);
		model_destroy(m);
		return;
	}
	long vs = model_vit_seq(m);
	if (jobj_int(jo, "seq_len", &g->seq, 1, 0) == 1 && g->seq != vs)
		jobj_err(jo, "seq_len", "must be left out or equal the %ld tokens of vit model '%s' "
			 "((image_size / patch_size)^2 + 1), got %ld", vs, m->name, g->seq);
	g->seq = vs;
	model_destroy(m);
}

/* The tokens to train on: train_tokens, or epochs over dataset_tokens
 * (a fine-tuning set), not both. */
static void load_tokens(struct jobj *jo, struct goal *g)
{
	double epochs = 0, dataset = 0;
	bool e = jobj_num(jo, "epochs", &epochs, JPOS) == 1;
	bool ds = jobj_num(jo, "dataset_tokens", &dataset, JPOS) == 1;
	if (!jobj_has(jo, "train_tokens") && !jobj_has(jo, "epochs") && !jobj_has(jo, "dataset_tokens")) {
		jobj_err(jo, "train_tokens", "missing required key 'train_tokens' (or epochs and "
			 "dataset_tokens)");
		return;
	}
	g->tokens_key = "/dataset_tokens";
	if (jobj_has(jo, "train_tokens")) {
		g->tokens_key = "/train_tokens";
		jobj_num(jo, "train_tokens", &g->train_tokens, JPOS);
		if (jobj_has(jo, "epochs") || jobj_has(jo, "dataset_tokens"))
			jobj_err(jo, "train_tokens", "give train_tokens or epochs and dataset_tokens, not both");
		return;
	}
	if (!jobj_has(jo, "epochs"))
		jobj_err(jo, "epochs", "missing required key 'epochs' (with dataset_tokens)");
	else if (!jobj_has(jo, "dataset_tokens"))
		jobj_err(jo, "dataset_tokens", "missing required key 'dataset_tokens' (with epochs)");
	else if (e && ds) {
		char how[160], why[400];
		snprintf(how, sizeof(how), "epochs x dataset_tokens = %g x %g", epochs, dataset);
		if (!bound_check_derived("train_tokens", epochs * dataset, how, why, sizeof(why)))
			jobj_err(jo, "dataset_tokens", "%s (train_tokens' own bound)", why);
		else
			g->train_tokens = epochs * dataset;
	}
}

/* What holds for every candidate of the search (plan_check_fixed_*: the
 * model, precision, sequence and fine-tuning the goal fixes; a cluster's
 * GPU against the precision), reported once before searching rather
 * than as the reason each plan is rejected for. */
static void check_fixed(const struct goal *g, struct diag *d)
{
	struct plan pl;
	plan_init(&pl);
	pl.training.seq = g->seq;
	pl.training.precision = g->precision;
	pl.training.finetune = g->finetune;
	pl.training.train_tokens = g->train_tokens;
	for (int i = 0; i < g->nclusters; i++) {
		const struct goal_cluster *c = &g->clusters[i];
		if (i == 0)
			plan_check_fixed_model(&pl, inputs_model(c->in), g->path, "", d);
		if (plan_check_fixed_gpu(&pl, c->in, g->path, "", d))
			continue;
		/* the cluster at its most nodes, the largest batch: the fastest */
		long nodes = c->auto_nodes ? SEARCH_MAX_NODES : 1;
		for (int k = 0; k < c->nnodes && !c->auto_nodes; k++)
			nodes = c->nodes[k] > nodes ? c->nodes[k] : nodes;
		pl.nodes = (int)nodes;
		pl.parallel.dp = (int)(nodes * inputs_topology(c->in)->gpus_per_node);
		pl.training.global_batch = (long)fmax(1, floor(g->gb_max_tokens / fmax(1, (double)g->seq)));
		pl.cost.usd_per_gpu_hour = c->econ.usd_per_gpu_hour;
		plan_check_train_time(&pl, c->in, g->path, g->tokens_key, d);
	}
}

struct goal *goal_load(const char *path, struct diag *d)
{
	struct goal *g = xcalloc(1, sizeof(*g));
	struct jobj jo, sub;
	const char *s;
	int before = diag_count(d);
	static const int tp0[] = { 1, 2, 4, 8 }, v0[] = { 1, 2, 4 }, mb0[] = { 1, 2, 4 }, z0[] = { 0, 1, 2, 3 };

	g->path = xstrdup(path);
	g->precision = DTYPE_BF16;
	g->top = 20;
	memcpy(g->tp, tp0, sizeof(tp0));
	g->ntp = 4;
	memcpy(g->v, v0, sizeof(v0));
	g->nv = 3;
	memcpy(g->mb, mb0, sizeof(mb0));
	g->nmb = 3;
	memcpy(g->zero, z0, sizeof(z0));
	g->nzero = 4;
	g->rc[0] = RECOMPUTE_NONE, g->rc[1] = RECOMPUTE_SELECTIVE, g->rc[2] = RECOMPUTE_FULL;
	g->nrc = 3;
	g->sp[0] = false, g->sp[1] = true;
	g->nsp = 2;
	snprintf(g->order[0], 16, "tp,dp,pp");
	snprintf(g->order[1], 16, "tp,pp,dp");
	g->norder = 2;
	goodput_params_init(&g->goodput);

	json_t *root = jload_file(path, d);
	if (!root)
		goto err;
	if (jload_schema(root, path, d, "ddlsim.goal", 1, 0))
		goto err;
	jobj_init(&jo, root, path, "", d);
	{
		const char *b = strrchr(path, '/');
		g->name = xstrdup(b ? b + 1 : path);
		char *dot = strrchr(g->name, '.');
		if (dot)
			*dot = 0;
	}
	if (jobj_str(&jo, "name", &s, JFILENAME) == 1) {
		free(g->name);
		g->name = xstrdup(s);
	}
	g->description = xstrdup(jobj_str(&jo, "description", &s, 0) == 1 ? s : "");
	int before_model = diag_count(d);
	if (jobj_str(&jo, "model", &s, JREQ | JPATH) == 1) {
		if (jload_resolve(path, s, g->model, sizeof(g->model)))
			jobj_err(&jo, "model", "path too long");
		else
			jload_check_ref(&jo, "model", g->model);
	}
	load_seq(&jo, g, diag_count(d) == before_model);
	load_tokens(&jo, g);
	double days = 0;
	if (jobj_num(&jo, "deadline_days", &days, JPOS) == 1)
		g->deadline_s = days * 86400;
	jobj_num(&jo, "budget_usd", &g->budget_usd, JPOS);
	if (jobj_child(&jo, "global_batch_tokens", &sub, JREQ) == 1) {
		jobj_num(&sub, "min", &g->gb_min_tokens, JREQ | JPOS);
		jobj_num(&sub, "max", &g->gb_max_tokens, JREQ | JPOS);
		char how[160], why[400];
		snprintf(how, sizeof(how), "global_batch_tokens.max / seq_len = %g / %ld", g->gb_max_tokens, g->seq);
		if (g->gb_max_tokens < g->gb_min_tokens)
			jobj_err(&sub, "max", "must be >= min %g, got %g", g->gb_min_tokens, g->gb_max_tokens);
		else if (g->seq > 0 &&
			 !bound_check_derived("global_batch", g->gb_max_tokens / (double)g->seq, how, why, sizeof(why)))
			jobj_err(&sub, "max", "%s (global_batch's own bound)", why);
		jobj_end(&sub);
	}
	int e = DTYPE_BF16;
	jobj_enum(&jo, "precision", dtype_names, &e, 0);
	g->precision = e;
	long top = g->top;
	if (jobj_int(&jo, "top", &top, 1, 0) == 1) {
		if (top > 1000)
			jobj_err(&jo, "top", "expected at most 1000 plans simulated per cluster (as --top), got %ld", top);
		else
			g->top = (int)top;
	}
	load_clusters(&jo, g);
	load_search(&jo, g);
	if (jobj_child(&jo, "finetune", &sub, 0) == 1) {
		finetune_load(&sub, &g->finetune);
		jobj_end(&sub);
	}
	if (jobj_child(&jo, "goodput", &sub, 0) == 1) {
		goodput_params_load(&sub, &g->goodput);
		jobj_end(&sub);
	}
	for (int i = 0; i < g->nclusters; i++)
		if (g->clusters[i].auto_nodes && !(g->deadline_s > 0)) {
			char jp[64];
			snprintf(jp, sizeof(jp), "/clusters/%d/nodes", i);
			diag_err(d, path, jp, "\"auto\" searches the fewest nodes that meet "
				 "deadline_days, and the goal gives no deadline_days");
		}
	jobj_end(&jo);
	json_decref(root);
	root = NULL;
	for (int i = 0; i < g->nclusters && g->model[0] && diag_count(d) == before; i++) {
		struct goal_cluster *c = &g->clusters[i];
		c->in = inputs_load(g->model, c->topology, "roofline", NULL, d);
		if (c->in && !c->name[0])
			snprintf(c->name, sizeof(c->name), "%s", inputs_topology(c->in)->name);
		if (c->in && !model_arch(inputs_model(c->in))->model_parallel)
			diag_err(d, path, "/model", "the plan search covers transformer models only");
	}
	if (diag_count(d) == before)
		check_fixed(g, d);
	if (diag_count(d) != before)
		goto err;
	return g;
err:
	json_decref(root);
	goal_destroy(g);
	return NULL;
}

void goal_destroy(struct goal *g)
{
	if (!g)
		return;
	for (int i = 0; i < g->nclusters; i++) {
		inputs_destroy(g->clusters[i].in);
		free(g->clusters[i].nodes);
	}
	free(g->clusters);
	free(g->path);
	free(g->name);
	free(g->description);
	free(g);
}

/* ---- the estimate ---- */

struct price {
	long mb;
	int tp;
	bool sp;
	enum attention attn;
	double f, b, sel;           /* per layer (attention + MLP), one micro-batch */
	double embed_f, embed_b, head_f, head_b;
};

struct comm {
	int nodes, tp, pp, dp, group;  /* group: 0 TP, 1 DP, 2 PP send */
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
		t = host_block_time(h, cost_list_time(inputs_cost(in), &l), host_issue_time(h, &l));
	op_list_finish(&l);
	return t;
}

static const struct price *price_of(struct search_cache *c, const struct plan *pl)
{
	for (int i = 0; i < c->np; i++)
		if (c->p[i].mb == pl->training.micro_batch && c->p[i].tp == pl->parallel.tp &&
		    c->p[i].sp == pl->parallel.sp && c->p[i].attn == pl->training.attention)
			return &c->p[i];
	XGROW(c->p, c->capp, (size_t)c->np + 1);
	struct price *p = &c->p[c->np++];
	struct wl_shape shp = plan_wl_shape(pl);
	struct host_issue h = plan_host_issue(pl);
	p->mb = pl->training.micro_batch, p->tp = pl->parallel.tp, p->sp = pl->parallel.sp,
	p->attn = pl->training.attention;
	p->f = block_time(c->in, &shp, &h, WL_ATTN, PASS_FWD, RECOMPUTE_NONE) +
	       block_time(c->in, &shp, &h, WL_MLP, PASS_FWD, RECOMPUTE_NONE);
	double ab = block_time(c->in, &shp, &h, WL_ATTN, PASS_BWD, RECOMPUTE_NONE);
	p->b = ab + block_time(c->in, &shp, &h, WL_MLP, PASS_BWD, RECOMPUTE_NONE);
	p->sel = block_time(c->in, &shp, &h, WL_ATTN, PASS_BWD, RECOMPUTE_SELECTIVE) - ab;
	p->embed_f = block_time(c->in, &shp, &h, WL_EMBED, PASS_FWD, RECOMPUTE_NONE);
	p->embed_b = block_time(c->in, &shp, &h, WL_EMBED, PASS_BWD, RECOMPUTE_NONE);
	p->head_f = block_time(c->in, &shp, &h, WL_HEAD, PASS_FWD, RECOMPUTE_NONE);
	p->head_b = block_time(c->in, &shp, &h, WL_HEAD, PASS_BWD, RECOMPUTE_NONE);
	return p;
}

static uint64_t comm_hash(const struct comm *k)
{
	uint64_t h = ((uint64_t)k->nodes << 40) ^ ((uint64_t)k->tp << 24) ^ ((uint64_t)k->pp << 8) ^
		     ((uint64_t)k->group << 5) ^ (uint64_t)k->op;
	for (const char *s = k->order; *s; s++)
		h = h * 31 + (unsigned char)*s;
	return h;
}

/* Whether a and b price the same collective (dp follows from the rest). */
static bool comm_same(const struct comm *a, const struct comm *b)
{
	return a->nodes == b->nodes && a->tp == b->tp && a->pp == b->pp && a->group == b->group &&
	       a->op == b->op && !strcmp(a->order, b->order);
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
	placement_init(&place, pl->parallel.tp, pl->parallel.dp, pl->parallel.pp, pl->parallel.order);
	int most = pl->parallel.tp > pl->parallel.dp ? pl->parallel.tp : pl->parallel.dp;
	int n, *ranks = xmalloc((size_t)most * sizeof(int) + 2 * sizeof(int));
	if (k->group == 2) {
		ranks[0] = 0;
		ranks[1] = placement_stage_peer(&place, 0, 1);
		n = 2;
	} else
		n = placement_group(&place, k->group == 0 ? GROUP_TP : GROUP_DP, 0, ranks);
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
	struct comm key = { .nodes = pl->nodes, .tp = pl->parallel.tp, .pp = pl->parallel.pp,
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

double search_estimate(struct search_cache *c, const struct plan *pl, double *busy)
{
	const struct model *m = inputs_model(c->in);
	const struct topology *t = inputs_topology(c->in);
	const struct price *pr = price_of(c, pl);
	struct precision prec;
	precision_init(&prec, pl->training.precision, pl->training.fp8_comm);
	if (pl->training.fp8_params)
		precision_fp8_params(&prec);
	int v = pl->parallel.schedule == SCHED_INTERLEAVED ? pl->parallel.interleave : 1;
	double mbs = (double)plan_microbatches(pl);
	double L = (double)m->layers / pl->parallel.pp;
	double rc = pl->parallel.recompute == RECOMPUTE_FULL ? pr->f :
		    pl->parallel.recompute == RECOMPUTE_SELECTIVE ? pr->sel : 0;
	double act = (double)pl->training.micro_batch * pl->training.seq * m->hidden * dtype_bytes(prec.activation);
	double tpc = 0;
	if (pl->parallel.tp > 1) {
		int n = pl->parallel.recompute == RECOMPUTE_FULL ? 6 : 4;
		if (pl->parallel.sp)
			tpc = n * (comm_time(c, pl, 0, COLL_ALLGATHER, act / dtype_bytes(prec.activation) *
							   dtype_bytes(prec.tp_comm)) +
				   comm_time(c, pl, 0, COLL_REDUCE_SCATTER, act));
		else
			tpc = n * comm_time(c, pl, 0, COLL_ALLREDUCE, act);
	}
	double layer = pr->f + pr->b + rc;
	double first = L * (layer + tpc) + pr->embed_f + pr->embed_b;
	double last = L * (layer + tpc) + pr->head_f + pr->head_b;
	double t_mb = fmax(first, last);
	if (pl->parallel.pp > 1)
		t_mb += 2.0 * v * comm_time(c, pl, 2, COLL_SENDRECV,
					    act / pl->parallel.tp * (pl->parallel.sp ? 1 : pl->parallel.tp));
	double pipe = (mbs + (double)(pl->parallel.pp - 1) / v) * t_mb;

	/* data parallel: gradients of a rank's parameters, overlapped with the
	 * last micro-batch's backward */
	double psi = L * model_layer_params(m) / pl->parallel.tp + model_embedding_params(m) / pl->parallel.tp;
	if (finetune_frozen(&pl->training.finetune)) /* LoRA: the adapters are trained */
		psi = L * finetune_layer_adapter_params(m, &pl->training.finetune, pl->parallel.tp);
	double gbytes = psi * dtype_bytes(pl->training.grad_dtype), exposed = 0;
	if (pl->parallel.dp > 1) {
		double window = pl->communication.overlap_grad_reduce ? L * pr->b : 0;
		if (pl->parallel.zero == ZERO_3) {
			double lp = L * model_layer_params(m) / pl->parallel.tp * dtype_bytes(prec.layer_weight);
			double per_mb = 2 * comm_time(c, pl, 1, COLL_ALLGATHER, lp) +
					comm_time(c, pl, 1, COLL_REDUCE_SCATTER, lp / dtype_bytes(prec.layer_weight) *
									   dtype_bytes(pl->training.grad_dtype));
			exposed = mbs * fmax(0, per_mb - L * layer);
		} else {
			double red = pl->parallel.zero == ZERO_0 ? comm_time(c, pl, 1, COLL_ALLREDUCE, gbytes)
							: comm_time(c, pl, 1, COLL_REDUCE_SCATTER, gbytes);
			exposed = fmax(0, red - window);
			if (pl->parallel.zero != ZERO_0)
				exposed += comm_time(c, pl, 1, COLL_ALLGATHER, psi * dtype_bytes(
					finetune_frozen(&pl->training.finetune) ? prec.weight : prec.layer_weight));
		}
	}
	double psi_opt = psi / (pl->parallel.zero >= ZERO_1 ? pl->parallel.dp : 1);
	double opt = psi_opt * prec.optimizer_step_bytes / (t->gpu.hbm_bw_Bps * t->gpu.mem_eff_max);
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

struct candidate *search_screen(const struct goal *g, int ci, long *n, struct search_stats *st)
{
	const struct goal_cluster *cl = &g->clusters[ci];
	const struct inputs *in = cl->in;
	const struct model *m = inputs_model(in);
	const struct topology *t = inputs_topology(in);
	struct search_cache *cache = search_cache_create(in);
	struct candidate *out = NULL;
	size_t cap = 0;
	struct diag quiet;
	double t0 = now_s();
	int pps[PLAN_MAX_STAGES], npp = 0;

	if (g->npp) {
		memcpy(pps, g->pp, sizeof(int) * (size_t)g->npp);
		npp = g->npp;
	} else
		for (int p = 1; p <= 32 && p <= m->layers; p++)
			if (m->layers % p == 0)
				pps[npp++] = p;
	*n = 0;
	diag_init(&quiet, NULL);
	for (int ni = 0; ni < cl->nnodes; ni++) {
		long gpus = cl->nodes[ni] * t->gpus_per_node, start = *n;
		for (int a = 0; a < g->ntp; a++)
		for (int b = 0; b < npp; b++) {
			int tp = g->tp[a], pp = pps[b];
			if (gpus % ((long)tp * pp) || tp > t->gpus_per_node)
				continue;
			long dp = gpus / ((long)tp * pp);
			for (int c = 0; c < g->nv; c++)
			for (int e = 0; e < g->nmb; e++) {
				int v = g->v[c];
				if (v > 1 && pp == 1)
					continue;
				long mb = g->mb[e];
				long unit = dp * mb;
				long mmin = (long)ceil(g->gb_min_tokens / g->seq / unit);
				long mmax = (long)floor(g->gb_max_tokens / g->seq / unit);
				if (mmin < 1)
					mmin = 1;
				long ms[64];
				int nm = 0;
				for (long x = 1; x <= mmax && nm < 62; x *= 2)
					if (x >= mmin)
						ms[nm++] = x;
				if (mmax >= mmin && (nm == 0 || ms[nm - 1] != mmax))
					ms[nm++] = mmax;
				for (int f = 0; f < nm; f++)
				for (int z = 0; z < g->nzero; z++)
				for (int r = 0; r < g->nrc; r++)
				for (int s = 0; s < g->nsp; s++)
				for (int o = 0; o < g->norder; o++) {
					if (g->sp[s] && tp == 1)
						continue;
					if (same_order_before(g, o, pp))
						continue;
					struct plan pl;
					plan_init(&pl);
					pl.nodes = (int)cl->nodes[ni];
					pl.parallel.tp = tp, pl.parallel.pp = pp, pl.parallel.dp = (int)dp;
					pl.parallel.interleave = v;
					pl.parallel.schedule = v > 1 ? SCHED_INTERLEAVED : SCHED_1F1B;
					pl.training.micro_batch = mb;
					pl.training.global_batch = unit * ms[f];
					pl.training.seq = g->seq;
					pl.parallel.zero = (enum zero_stage)g->zero[z];
					pl.parallel.recompute = (enum recompute)g->rc[r];
					pl.parallel.sp = g->sp[s];
					snprintf(pl.parallel.order, sizeof(pl.parallel.order), "%s", g->order[o]);
					pl.training.precision = g->precision;
					pl.training.grad_dtype = precision_weight_dtype(g->precision);
					pl.training.train_tokens = g->train_tokens;
					pl.training.finetune = g->finetune;
					pl.cost.usd_per_gpu_hour = cl->econ.usd_per_gpu_hour;
					plan_resolve(&pl, in);
					st->enumerated++;
					if (rejected(g, &pl, in, &quiet, st))
						continue;
					struct mem_anatomy mem;
					anatomy_worst(in, &pl, &mem, NULL);
					if (!mem.fits) {
						st->no_fit++;
						continue;
					}
					st->screened++;
					struct candidate cd = { .plan = pl, .cluster = ci, .mem_bytes = mem.total_bytes,
								.index = st->screened };
					cd.est_iter_s = search_estimate(cache, &pl, &cd.est_busy);
					cd.est_tokens_per_s = (double)pl.training.global_batch * pl.training.seq /
							      cd.est_iter_s;
					assess_plan(in, &pl, cd.est_tokens_per_s, cd.est_busy, &cl->econ, &g->goodput, &cd.est);
					XGROW(out, cap, (size_t)*n + 1);
					out[(*n)++] = cd;
				}
				/* the diag keeps the messages; start afresh now and then */
				if (quiet.len > (1 << 20)) {
					diag_finish(&quiet);
					diag_init(&quiet, NULL);
				}
			}
		}
		*n = start + keep_best(out + start, *n - start, g->top > 0 ? g->top : 1);
	}
	diag_finish(&quiet);
	search_cache_destroy(cache);
	if (*n)
		qsort(out, (size_t)*n, sizeof(*out), cmp_cand);
	st->screen_s += now_s() - t0;
	return out;
}
