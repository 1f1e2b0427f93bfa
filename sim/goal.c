/* goal: the goal file ("ddlsim.goal" 1.0) loaded and checked, every
 * error with its JSON path, and the reasons that hold for every candidate
 * said once (search.h: struct goal, goal_load, goal_destroy). */
#include "search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "jload.h"
#include "placement.h"
#include "sweep.h"
#include "xalloc.h"

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

/* search.etp: 1 and "tp" (search.h), "tp" stored as 0. */
static void etp_list(struct jobj *jo, struct goal *g)
{
	json_t *arr, *v;
	char ap[300];
	size_t i;
	if (jobj_array(jo, "etp", &arr, ap, sizeof(ap), 0) != 1)
		return;
	if (json_array_size(arr) == 0 || json_array_size(arr) > 2) {
		diag_err(jo->d, jo->file, ap, "expected 1 or 2 values (1, \"tp\"), got %zu", json_array_size(arr));
		return;
	}
	g->netp = 0;
	json_array_foreach(arr, i, v) {
		if (json_is_integer(v) && json_integer_value(v) == 1)
			g->etp[g->netp++] = 1;
		else if (json_is_string(v) && !strcmp(json_string_value(v), "tp"))
			g->etp[g->netp++] = 0;
		else
			diag_err(jo->d, jo->file, ap, "/%zu: expected 1 or \"tp\" (the expert-tensor-parallel "
				 "degrees modelled), got %s", i, json_is_integer(v) ? "another integer" :
				 jload_type_name(v));
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
	int_list(&jo, "ep", g->ep, &g->nep, 1, MOE_MAX_EXPERTS);
	etp_list(&jo, g);
	int_list(&jo, "cp", g->cp, &g->ncp, 1, PLAN_MAX_STAGES);
	for (int k = 0; k < g->ncp && g->seq > 0; k++)
		if (g->seq % (2L * g->cp[k]))
			diag_err(jo.d, jo.file, "/search/cp", "/%d: seq_len %ld must be divisible by 2 x cp = %d "
				 "(two chunks per rank in the load-balanced causal split), got cp = %d", k, g->seq,
				 2 * g->cp[k], g->cp[k]);
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
bool goal_tries_etp(const struct goal *g, const struct model *m, int tp, int etp)
{
	if (etp != 1 && etp != tp)
		return false;
	if (g->netp == 0)   /* default: tp, and 1 where plan_check models it */
		return etp == tp || (model_is_moe(m) && m->moe.shared_experts == 0);
	for (int k = 0; k < g->netp; k++)
		if ((g->etp[k] == 0 && etp == tp) || (g->etp[k] == 1 && etp == 1))
			return true;
	return false;
}

/* search.ep against the model (an MoE model's experts; a dense model
 * takes none), and the defaults of ep and cp (search.h). */
static void resolve_ep_cp(struct goal *g, const struct model *m, struct diag *d)
{
	bool moe = model_is_moe(m);
	for (int k = 0; k < g->nep; k++) {
		if (!moe && g->ep[k] > 1)
			diag_err(d, g->path, "/search/ep", "/%d: expert parallelism needs a mixture-of-experts "
				 "model (a \"moe\" object in the model file); model '%s' is dense, got ep = %d",
				 k, m->name, g->ep[k]);
		else if (moe && m->moe.experts % g->ep[k])
			diag_err(d, g->path, "/search/ep", "/%d: must divide the model's %ld experts (model "
				 "'%s'), got ep = %d", k, m->moe.experts, m->name, g->ep[k]);
	}
	for (int k = 0; k < g->netp && !moe; k++)
		if (g->etp[k] == 1) {
			diag_err(d, g->path, "/search/etp", "/%d: expert tensor parallelism needs a mixture-of-"
				 "experts model (a \"moe\" object in the model file); model '%s' is dense, got 1",
				 k, m->name);
			break;
		}
	if (g->nep == 0) {
		for (long e = 1; e <= (moe ? m->moe.experts : 1) && g->nep < SEARCH_MAX_VALUES; e++)
			if (!moe || m->moe.experts % e == 0)
				g->ep[g->nep++] = (int)e;
	}
	if (g->ncp == 0) {
		g->cp[g->ncp++] = 1;
		for (int c = 2; c <= 8 && g->seq >= SEARCH_CP_SEQ; c *= 2)
			if (g->seq % (2L * c) == 0)
				g->cp[g->ncp++] = c;
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

/* The defaults of a goal (goal.h's table) into g. */
static void goal_defaults(struct goal *g)
{
	static const int tp0[] = { 1, 2, 4, 8 }, v0[] = { 1, 2, 4 }, mb0[] = { 1, 2, 4 }, z0[] = { 0, 1, 2, 3 };
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
}

/* name (default: path's file name less its extension) and
 * description. */
static void load_names(struct jobj *jo, struct goal *g, const char *path)
{
	const char *s;
	const char *b = strrchr(path, '/');
	g->name = xstrdup(b ? b + 1 : path);
	char *dot = strrchr(g->name, '.');
	if (dot)
		*dot = 0;
	if (jobj_str(jo, "name", &s, JFILENAME) == 1) {
		free(g->name);
		g->name = xstrdup(s);
	}
	g->description = xstrdup(jobj_str(jo, "description", &s, 0) == 1 ? s : "");
}

/* model, resolved against path; then seq_len, which needs it. */
static void load_model(struct jobj *jo, struct goal *g, const char *path, struct diag *d)
{
	const char *s;
	int before_model = diag_count(d);
	if (jobj_str(jo, "model", &s, JREQ | JPATH) == 1) {
		if (jload_resolve(path, s, g->model, sizeof(g->model)))
			jobj_err(jo, "model", "path too long");
		else
			jload_check_ref(jo, "model", g->model);
	}
	load_seq(jo, g, diag_count(d) == before_model);
}

/* global_batch_tokens: min <= max, max / seq_len within global_batch's
 * bound. */
static void load_batch_range(struct jobj *jo, struct goal *g)
{
	struct jobj sub;
	if (jobj_child(jo, "global_batch_tokens", &sub, JREQ) != 1)
		return;
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

/* precision and top (at most 1000). */
static void load_precision_top(struct jobj *jo, struct goal *g)
{
	int e = DTYPE_BF16;
	jobj_enum(jo, "precision", dtype_names, &e, 0);
	g->precision = e;
	long top = g->top;
	if (jobj_int(jo, "top", &top, 1, 0) == 1) {
		if (top > 1000)
			jobj_err(jo, "top", "expected at most 1000 plans simulated per cluster (as --top), got %ld", top);
		else
			g->top = (int)top;
	}
}

/* finetune and goodput, each an optional object. */
static void load_finetune_goodput(struct jobj *jo, struct goal *g)
{
	struct jobj sub;
	if (jobj_child(jo, "finetune", &sub, 0) == 1) {
		finetune_load(&sub, &g->finetune);
		jobj_end(&sub);
	}
	if (jobj_child(jo, "goodput", &sub, 0) == 1) {
		goodput_params_load(&sub, &g->goodput);
		jobj_end(&sub);
	}
}

/* "auto" nodes only with a deadline. */
static void check_auto_deadline(const struct goal *g, const char *path, struct diag *d)
{
	for (int i = 0; i < g->nclusters; i++)
		if (g->clusters[i].auto_nodes && !(g->deadline_s > 0)) {
			char jp[64];
			snprintf(jp, sizeof(jp), "/clusters/%d/nodes", i);
			diag_err(d, path, jp, "\"auto\" searches the fewest nodes that meet "
				 "deadline_days, and the goal gives no deadline_days");
		}
}

/* Each cluster's inputs (the model on its topology) loaded while no
 * error is reported beyond the first `before`: its name defaults to the
 * topology's; transformers only; the first resolves ep and cp. */
static void load_cluster_inputs(struct goal *g, const char *path, int before, struct diag *d)
{
	for (int i = 0; i < g->nclusters && g->model[0] && diag_count(d) == before; i++) {
		struct goal_cluster *c = &g->clusters[i];
		c->in = inputs_load(g->model, c->topology, "roofline", NULL, d);
		if (c->in && !c->name[0])
			snprintf(c->name, sizeof(c->name), "%s", inputs_topology(c->in)->name);
		if (c->in && !model_arch(inputs_model(c->in))->model_parallel)
			diag_err(d, path, "/model", "the plan search covers transformer models only");
		else if (c->in && i == 0)
			resolve_ep_cp(g, inputs_model(c->in), d);
	}
}

struct goal *goal_load(const char *path, struct diag *d)
{
	struct goal *g = xcalloc(1, sizeof(*g));
	struct jobj jo;
	int before = diag_count(d);

	g->path = xstrdup(path);
	goal_defaults(g);

	json_t *root = jload_file(path, d);
	if (!root)
		goto err;
	if (jload_schema(root, path, d, "ddlsim.goal", 1, 0))
		goto err;
	jobj_init(&jo, root, path, "", d);
	load_names(&jo, g, path);
	load_model(&jo, g, path, d);
	load_tokens(&jo, g);
	double days = 0;
	if (jobj_num(&jo, "deadline_days", &days, JPOS) == 1)
		g->deadline_s = days * 86400;
	jobj_num(&jo, "budget_usd", &g->budget_usd, JPOS);
	load_batch_range(&jo, g);
	load_precision_top(&jo, g);
	load_clusters(&jo, g);
	load_search(&jo, g);
	load_finetune_goodput(&jo, g);
	check_auto_deadline(g, path, d);
	jobj_end(&jo);
	json_decref(root);
	root = NULL;
	load_cluster_inputs(g, path, before, d);
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
