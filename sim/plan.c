/* plan: defaults and resolution of a plan (see plan.h; its validity
 * check is plan_check.c). */
#include "plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "framework.h"
#include "stack.h"
#include "inputs.h"
#include "xalloc.h"

const char *const plan_fold_names[] = { "auto", "on", "off", "exact", NULL };
const char *const plan_link_traffic_names[] = { "exact", "bytes", "off", NULL };
const char *const plan_cp_comm_names[] = { "p2p", "a2a", NULL };
const char *const plan_offload_names[] = { "none", "optimizer", "optimizer+params", NULL };
const char *const plan_dp_sync_names[] = { "allreduce", "ps", NULL };
const char *const plan_ps_attach_names[] = { "fabric", "gpus", NULL };
const char *const plan_ps_shard_names[] = { "even", "round_robin", NULL };
const char *const plan_ps_mode_names[] = { "sync", "async", NULL };
const char *const plan_straggler_dist_names[] = { "fixed", "normal", "lognormal", "empirical", NULL };
const char *const plan_node_order_names[] = { "listed", "fast_first", "slow_first", NULL };

void plan_init(struct plan *p)
{
	memset(p, 0, sizeof(*p));
	p->parallel.tp = p->parallel.pp = p->parallel.cp = p->parallel.ep = 1;
	p->parallel.bn_group = 1;
	p->parallel.cp_comm = CP_P2P;
	p->parallel.interleave = 1;
	p->framework = -1;
	p->compute.stack = -1;
	p->compute.attn_backend_set = -1;
	p->compute.host_issue_us[0] = p->compute.host_issue_us[1] = -1;
	p->parallel.schedule = SCHED_1F1B;
	p->parallel.zero = ZERO_0;
	p->parallel.recompute = RECOMPUTE_NONE;
	p->parallel.recompute_every = 1;
	snprintf(p->parallel.order, sizeof(p->parallel.order), "tp,cp,dp,pp");
	p->training.micro_batch = 1;
	p->training.precision = DTYPE_BF16;
	p->training.grad_dtype = precision_weight_dtype(DTYPE_BF16);
	snprintf(p->communication.coll_algo, sizeof(p->communication.coll_algo), "auto");
	p->communication.bucket_bytes = 25e6;
	p->communication.overlap_grad_reduce = true;
	p->simulation.fold = FOLD_AUTO;
	p->training.attention = ATTN_UNFUSED;
	p->training.memory_reserve = 0.05;
	p->parallel.dp_sync = DP_SYNC_ALLREDUCE;
	p->parallel.ps.servers = 1;
	p->parallel.ps.latency_s = -1;
	p->parallel.ps.staleness = -1;
	p->parallel.ps.iterations = 8;
	p->simulation.iterations = 1;
}

bool plan_straggler_group_active(const struct plan *p, int g)
{
	const struct plan_straggler_group *s = &p->simulation.stragglers.group[g];
	return (s->nranks > 0 || s->fraction > 0) && (s->slowdown != 1 || s->dist != STRAG_FIXED);
}

bool plan_has_stragglers(const struct plan *p)
{
	for (int g = 0; g < p->simulation.stragglers.ngroups; g++)
		if (plan_straggler_group_active(p, g))
			return true;
	return false;
}

bool plan_stragglers_drawn(const struct plan *p)
{
	for (int g = 0; g < p->simulation.stragglers.ngroups; g++)
		if (plan_straggler_group_active(p, g) && p->simulation.stragglers.group[g].dist != STRAG_FIXED)
			return true;
	return false;
}

/* splitmix64 (Steele, Lea, Flood 2014): a stateless hash of the seed,
 * iteration and rank, so a draw does not depend on the order of others. */
static unsigned long long mix64(unsigned long long x)
{
	x += 0x9E3779B97F4A7C15ULL;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
	return x ^ (x >> 31);
}

/* A uniform draw in (0, 1) from key k. */
static double uniform01(unsigned long long k)
{
	return ((double)(mix64(k) >> 11) + 0.5) / 9007199254740992.0;
}

/* The key of group g's stream: its seed, and (after the first group, whose
 * draws are those of a single group) a hash of g, so two groups with the
 * same seed still draw apart and a group never moves another's draws. */
static unsigned long long group_stream(const struct plan_straggler_group *s, int g)
{
	unsigned long long seed = (unsigned long long)s->seed << 32;
	return g ? seed ^ mix64(0x5354524147475250ULL + (unsigned long long)g) : seed;
}

void plan_straggler_group_mask(const struct plan *p, int g, int nranks, unsigned char *slow)
{
	const struct plan_stragglers *st = &p->simulation.stragglers;
	const struct plan_straggler_group *s = &st->group[g];
	memset(slow, 0, (size_t)nranks);
	if (!plan_straggler_group_active(p, g))
		return;
	unsigned long long seed = group_stream(s, g);
	for (int i = 0; i < s->nranks; i++)
		if (st->rank[s->first_rank + i] < nranks)
			slow[st->rank[s->first_rank + i]] = 1;
	if (s->fraction > 0) {
		/* the first k of a seeded shuffle (Fisher-Yates) */
		int k = (int)(s->fraction * nranks + 0.5), *perm;
		perm = xreallocarray(NULL, (size_t)nranks, sizeof(*perm));
		for (int r = 0; r < nranks; r++)
			perm[r] = r;
		for (int r = nranks - 1; r > 0; r--) {
			int j = (int)(uniform01(seed ^ 0xA5A5A5A5ULL ^ (unsigned long long)r) * (r + 1));
			int x = perm[r];
			perm[r] = perm[j];
			perm[j] = x;
		}
		for (int i = 0; i < k && i < nranks; i++)
			slow[perm[i]] = 1;
		free(perm);
	}
}

void plan_straggler_mask(const struct plan *p, int nranks, unsigned char *slow)
{
	memset(slow, 0, (size_t)nranks);
	unsigned char *one = xcalloc((size_t)nranks, sizeof(*one));
	for (int g = 0; g < p->simulation.stragglers.ngroups; g++) {
		plan_straggler_group_mask(p, g, nranks, one);
		for (int r = 0; r < nranks; r++)
			slow[r] |= one[r];
	}
	free(one);
}

void plan_straggler_group_factors(const struct plan *p, int g, int nranks, int iter, double *out)
{
	const struct plan_stragglers *st = &p->simulation.stragglers;
	const struct plan_straggler_group *s = &st->group[g];
	for (int r = 0; r < nranks; r++)
		out[r] = 1;
	if (!plan_straggler_group_active(p, g))
		return;
	unsigned long long seed = group_stream(s, g);
	unsigned char *slow = xcalloc((size_t)nranks, sizeof(*slow));
	plan_straggler_group_mask(p, g, nranks, slow);
	for (int r = 0; r < nranks; r++) {
		if (!slow[r])
			continue;
		double f = s->slowdown;
		/* draws keyed by (the group's stream, iteration, rank) */
		unsigned long long k = seed ^ ((unsigned long long)iter << 24) ^ (unsigned long long)r;
		if (s->dist == STRAG_EMPIRICAL && s->nsamples > 0) {
			/* one measured sample, uniformly */
			int i = (int)(uniform01(2 * k) * s->nsamples);
			int last = s->nsamples - 1;
			f = st->samples[s->first_sample + (i < last ? i : last)];
		} else if (s->dist != STRAG_FIXED) {
			/* Box-Muller from two draws */
			double u1 = uniform01(2 * k), u2 = uniform01(2 * k + 1);
			double z = sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
			f = s->dist == STRAG_NORMAL ? f + s->sigma * z : f * exp(s->sigma * z);
		}
		out[r] = f < 0.05 ? 0.05 : f;
	}
	free(slow);
}

void plan_straggler_factors(const struct plan *p, int nranks, int iter, double *out)
{
	for (int r = 0; r < nranks; r++)
		out[r] = 1;
	double *one = xreallocarray(NULL, (size_t)nranks, sizeof(*one));
	for (int g = 0; g < p->simulation.stragglers.ngroups; g++) {
		if (!plan_straggler_group_active(p, g))
			continue;
		plan_straggler_group_factors(p, g, nranks, iter, one);
		for (int r = 0; r < nranks; r++)
			out[r] *= one[r];
	}
	free(one);
}

double plan_gpu_speed(const struct gpu_spec *g, enum dtype dt)
{
	return g->peak_flops[dt] * gpu_gemm_eff_max(g, dt) * gpu_power_cap_clock_ratio(g);
}

int plan_node_group(const struct plan *p, int node)
{
	int idx[PLAN_MAX_NODE_GROUPS];
	for (int i = 0; i < p->ngroups; i++)
		idx[i] = i;
	if (p->node_order != NODE_ORDER_LISTED) {
		/* stable insertion sort by speed: ties keep the listed order */
		for (int i = 1; i < p->ngroups; i++)
			for (int j = i; j > 0; j--) {
				double a = plan_gpu_speed(&p->group[idx[j - 1]].gpu, p->training.precision);
				double b = plan_gpu_speed(&p->group[idx[j]].gpu, p->training.precision);
				bool swap = p->node_order == NODE_ORDER_FAST_FIRST ? b > a : b < a;
				if (!swap)
					break;
				int x = idx[j];
				idx[j] = idx[j - 1];
				idx[j - 1] = x;
			}
	}
	int first = 0;
	for (int i = 0; i < p->ngroups; i++) {
		if (node < first + p->group[idx[i]].nodes)
			return idx[i];
		first += p->group[idx[i]].nodes;
	}
	return -1;
}

const struct gpu_spec *plan_rank_gpu(const struct plan *p, const struct inputs *in, int r)
{
	const struct topology *t = inputs_topology(in);
	int g = p->ngroups > 0 ? plan_node_group(p, topology_node_of(t, r)) : -1;
	return g >= 0 ? &p->group[g].gpu : &t->gpu;
}

bool plan_groups_same_gpu(const struct plan *p, int i, int j)
{
	return !memcmp(&p->group[i].gpu, &p->group[j].gpu, sizeof(p->group[i].gpu));
}

bool plan_mixed_gpus(const struct plan *p)
{
	for (int i = 1; i < p->ngroups; i++)
		if (!plan_groups_same_gpu(p, i, 0))
			return true;
	return false;
}

const struct stack *plan_stack(const struct plan *p)
{
	return stack_at(p->compute.stack);
}

const struct framework *plan_z3_framework(const struct plan *p)
{
	const struct framework *fw = p->framework >= 0 ? &framework_table[p->framework] : NULL;
	if (plan_stack(p)->ds_zero3_2021 && p->parallel.zero >= ZERO_3 &&
	    (!fw || fw->gather != GATHER_PER_TENSOR)) {
		bool known;
		fw = framework_find("deepspeed@0.4", &known);
	}
	return fw;
}

bool plan_z3_per_tensor(const struct plan *p, const struct framework *fw)
{
	return fw && fw->gather == GATHER_PER_TENSOR && p->parallel.zero >= ZERO_3 &&
	       (long)p->parallel.dp * p->parallel.cp > 1 && p->parallel.tp <= 1 && p->parallel.cp <= 1;
}

struct host_issue plan_host_issue(const struct plan *p)
{
	const struct stack *s = plan_stack(p);
	struct host_issue h = { 0, 0, p->compute.launch_blocking };
	if (p->compute.cuda_graphs)
		return h;
	h.fwd_s = 1e-6 * (p->compute.host_issue_us[0] >= 0 ? p->compute.host_issue_us[0] : s->host_issue_us[0]);
	h.bwd_s = 1e-6 * (p->compute.host_issue_us[1] >= 0 ? p->compute.host_issue_us[1] : s->host_issue_us[1]);
	return h;
}

/* The flash kernel p runs on a GPU of compute capability cc: the given
 * one, else its stack's. */
static enum attn_backend attn_backend_at(const struct plan *p, double cc)
{
	if (p->compute.attn_backend_set >= 0)
		return (enum attn_backend)p->compute.attn_backend_set;
	return stack_attn_backend(plan_stack(p), cc);
}

struct wl_shape plan_wl_shape(const struct plan *p)
{
	struct wl_shape shp = { (double)p->training.micro_batch, (double)p->training.seq,
				p->parallel.tp, p->parallel.sp,
				p->training.precision, p->training.attention,
				p->parallel.cp, p->parallel.cp_comm == CP_A2A,
				p->parallel.ep, true, p->moe.dist, p->moe.zipf_s, p->moe.capacity_factor,
				plan_stack(p), { attn_backend_at(p, 0), attn_backend_at(p, 9) },
				p->training.grad_dtype == DTYPE_FP32, p->training.finetune, false,
				{ (int)p->parallel.zero, plan_shard_group(p),
				  p->parallel.dp > 0 && p->training.micro_batch > 0 ? (int)plan_microbatches(p) : 1,
				  p->communication.bucket_bytes / dtype_bytes(p->training.grad_dtype) }, false,
				p->parallel.recompute_modules, plan_etp(p) };
	return shp;
}

int plan_etp(const struct plan *p)
{
	return p->parallel.etp > 0 ? p->parallel.etp : p->parallel.tp;
}

long plan_edp(const struct plan *p)
{
	long n = (long)p->parallel.dp * (p->parallel.cp > 1 ? p->parallel.cp : 1) *
		 (p->parallel.tp / plan_etp(p));
	return n / (p->parallel.ep > 1 ? p->parallel.ep : 1);
}

int plan_ep_stride(const struct plan *p)
{
	return plan_etp(p) != p->parallel.tp ? 1 : p->parallel.tp * p->parallel.cp;
}

const char *plan_attention_kernel(const struct plan *p)
{
	return p->training.attention == ATTN_FLASH ? attn_backend_names[p->compute.attn_backend] : "unfused";
}

long plan_gpus(const struct plan *p, const struct inputs *in)
{
	return (long)p->nodes * inputs_topology(in)->gpus_per_node;
}

int plan_shard_group(const struct plan *p)
{
	int n = p->parallel.dp * (p->parallel.cp > 1 ? p->parallel.cp : 1);
	return p->parallel.shard_group > 0 && p->parallel.shard_group < n ? p->parallel.shard_group : n;
}

bool plan_hsdp(const struct plan *p)
{
	return plan_shard_group(p) < p->parallel.dp * (p->parallel.cp > 1 ? p->parallel.cp : 1);
}

long plan_microbatches(const struct plan *p)
{
	return p->training.global_batch / ((long)p->parallel.dp * p->training.micro_batch);
}

/* The preset's knobs that the scenario did not give (framework.h). */
static void apply_framework(struct plan *p, const struct inputs *in, bool model_parallel)
{
	const struct framework *f = &framework_table[p->framework];
	enum dtype param = precision_weight_dtype(p->training.precision);

	if (!(p->given & PLAN_GIVEN_GRAD_DTYPE))
		p->training.grad_dtype = framework_grad_dtype(f, param);
	if (!(p->given & PLAN_GIVEN_ZERO) && model_parallel)
		p->parallel.zero = (enum zero_stage)f->zero;
	if (!(p->given & PLAN_GIVEN_OVERLAP_GRAD))
		p->communication.overlap_grad_reduce = f->overlap_grad_reduce;
	if (!(p->given & PLAN_GIVEN_OVERLAP_PARAM))
		p->communication.overlap_param_gather = f->overlap_param_gather;
	if (!(p->given & PLAN_GIVEN_BUCKET))
		p->communication.bucket_bytes = framework_bucket_bytes(f, p->parallel.dp * p->parallel.cp,
								       dtype_bytes(p->training.grad_dtype));
	if (!p->training.attention_set && p->training.attention == ATTN_FLASH)
		p->training.attention = f->attention;
	if (p->compute.stack < 0)
		p->compute.stack = stack_index(stack_find(f->stack));
	(void)in;
}

/* The kernel stack (given, the framework's, else the default) and the
 * attention backend it runs on this GPU (models/stack.h; FA2 for FA3
 * under dropout). */
static void resolve_stack(struct plan *p, const struct inputs *in)
{
	if (p->compute.stack < 0)
		p->compute.stack = stack_index(stack_default());
	const struct model *m = inputs_model(in);
	/* with dropout, FA3 gives way to FA2 (models/attention.h) */
	p->compute.attn_backend = attention_backend_dropout(
		attn_backend_at(p, inputs_topology(in)->gpu.compute_capability), m && m->dropout);
}

void plan_resolve(struct plan *p, const struct inputs *in)
{
	if (!p->compute.stack_set)
		p->compute.stack = -1;   /* the framework's or the default, resolved below */
	long gpus = plan_gpus(p, in);
	if (!p->training.attention_set) {
		bool full = p->training.precision == DTYPE_FP32 || p->training.precision == DTYPE_TF32;
		p->training.attention = full || !model_arch(inputs_model(in))->model_parallel
				       ? ATTN_UNFUSED : attention_default(&inputs_topology(in)->gpu);
	}
	const struct model_arch_ops *arch = model_arch(inputs_model(in));
	const struct moe_config *moe = &inputs_model(in)->moe;
	if (!(p->given & PLAN_GIVEN_MOE_DIST))
		p->moe.dist = moe->dist;
	if (!(p->given & PLAN_GIVEN_MOE_ZIPF))
		p->moe.zipf_s = moe->zipf_s;
	if (!(p->given & PLAN_GIVEN_MOE_CAPACITY))
		p->moe.capacity_factor = moe->capacity_factor;
	if (!arch->sequence)
		p->training.seq = 1;  /* a sample is one item (an image): tokens/s report items/s */
	if (!arch->model_parallel) {
		if (p->parallel.dp == 0 && gpus <= PLAN_MAX_GPUS)
			p->parallel.dp = (int)gpus;
	} else {
		long tpp = (long)p->parallel.tp * p->parallel.cp * p->parallel.pp;
		if (p->parallel.dp == 0 && tpp > 0 && gpus <= PLAN_MAX_GPUS && gpus % tpp == 0)
			p->parallel.dp = (int)(gpus / tpp);
	}
	/* a shard group of the whole dp x cp group is plain ZeRO: the same
	 * plan, and the same report, as without the key */
	if (p->parallel.shard_group > 0 && (long)p->parallel.shard_group == (long)p->parallel.dp * p->parallel.cp)
		p->parallel.shard_group = 0;
	if (p->framework >= 0)
		apply_framework(p, in, arch->model_parallel);
	resolve_stack(p, in);
}

/* Layers of pipeline stage s over all its chunks when per-stage counts
 * apply (stage_layers, first/last_stage_layers), else -1. */
static long stage_count(const struct plan *p, long L, int s)
{
	if (p->parallel.nstage_layers)
		return p->parallel.stage_layers[s];
	if (!p->parallel.first_stage_layers && !p->parallel.last_stage_layers)
		return -1;
	if (s == 0 && p->parallel.first_stage_layers)
		return p->parallel.first_stage_layers;
	if (s == p->parallel.pp - 1 && p->parallel.last_stage_layers)
		return p->parallel.last_stage_layers;
	int left = p->parallel.pp - (p->parallel.first_stage_layers > 0) - (p->parallel.last_stage_layers > 0);
	return left > 0 ? (L - p->parallel.first_stage_layers - p->parallel.last_stage_layers) / left : 0;
}

static int vstage_count(const struct plan *p, long L, int vs, int nv)
{
	if (p->parallel.nvstage_layers)
		return p->parallel.vstage_layers[vs];
	int v = nv / p->parallel.pp, stage = vs % p->parallel.pp, chunk = vs / p->parallel.pp;
	long S = p->parallel.pp == nv || v < 1 ? stage_count(p, L, vs) : stage_count(p, L, stage);
	if (S < 0) {
		long base = L / nv, extra = L % nv;
		return (int)(base + (vs < extra ? 1 : 0));
	}
	if (v < 1)
		v = 1;
	return (int)(S / v + (chunk < S % v ? 1 : 0));
}

int plan_vstage_layers(const struct plan *p, long model_layers, int vs, int nv, int *first)
{
	if (!p->parallel.nvstage_layers && stage_count(p, model_layers, 0) < 0) {
		long base = model_layers / nv, extra = model_layers % nv;
		*first = (int)(vs * base + (vs < extra ? vs : extra));
		return (int)(base + (vs < extra ? 1 : 0));
	}
	int f = 0;
	for (int i = 0; i < vs; i++)
		f += vstage_count(p, model_layers, i, nv);
	*first = f;
	return vstage_count(p, model_layers, vs, nv);
}

int plan_stage_blocks(const struct plan *p, const struct model *m, int vs, int nv, int *first)
{
	int n = plan_vstage_layers(p, m->layers, vs, nv, first);
	return n + (vs == nv - 1 ? (int)m->mtp_depth : 0);
}

bool plan_layer_recomputed(const struct plan *p, int k)
{
	if (p->parallel.recompute != RECOMPUTE_FULL)
		return p->parallel.recompute != RECOMPUTE_NONE;
	int every = p->parallel.recompute_every > 1 ? p->parallel.recompute_every : 1;
	return (k + 1) % every == 0;
}

double plan_recomputed_model_layers(const struct plan *p, const struct model *m, double *dense)
{
	int v = p->parallel.schedule == SCHED_INTERLEAVED ? p->parallel.interleave : 1;
	int pp = p->parallel.pp > 1 ? p->parallel.pp : 1, nv = pp * v, first;
	long nd = model_is_moe(m) ? m->layers - model_moe_layers(m) : 0;
	double n = 0;
	*dense = (double)nd;
	/* every layer; or a split plan_check refuses (vstage_layers not pp x v) */
	if (p->parallel.recompute != RECOMPUTE_FULL || p->parallel.recompute_every <= 1 ||
	    (p->parallel.nvstage_layers && p->parallel.nvstage_layers != nv))
		return (double)(m->layers + m->mtp_depth);  /* the MTP blocks as layers */
	*dense = 0;
	for (int s = 0; s < pp; s++)
		for (int c = 0, k = 0; c < v; c++) {
			int nl = plan_stage_blocks(p, m, c * pp + s, nv, &first);
			for (int l = 0; l < nl; l++, k++)
				if (plan_layer_recomputed(p, k)) {
					n++;
					*dense += first + l < nd;
				}
		}
	return n;
}

void plan_describe(const struct plan *p, char *buf, size_t n)
{
	char v[16] = "", every[24] = "", ce[32] = "", shard[24] = "";
	int k = p->parallel.cp > 1 ? snprintf(ce, sizeof(ce), " cp%d", p->parallel.cp) : 0;
	if (p->parallel.ep > 1)
		k += snprintf(ce + k, sizeof(ce) - (size_t)k, " ep%d", p->parallel.ep);
	if (plan_etp(p) != p->parallel.tp && k >= 0 && k < (int)sizeof(ce))
		snprintf(ce + k, sizeof(ce) - (size_t)k, " etp%d", plan_etp(p));
	if (plan_hsdp(p))
		snprintf(shard, sizeof(shard), "/%d", plan_shard_group(p));
	if (p->parallel.schedule == SCHED_INTERLEAVED)
		snprintf(v, sizeof(v), "v%d", p->parallel.interleave);
	if (p->parallel.recompute == RECOMPUTE_FULL && p->parallel.recompute_every > 1)
		snprintf(every, sizeof(every), "/%d", p->parallel.recompute_every);
	snprintf(buf, n, "tp%d pp%d%s%s dp%d mb%ld gb%ld z%d%s %s%s%s %s", p->parallel.tp, p->parallel.pp, v,
		 ce, p->parallel.dp, p->training.micro_batch, p->training.global_batch, (int)p->parallel.zero, shard,
		 recompute_name(p->parallel.recompute), every, p->parallel.sp ? " sp" : "", p->parallel.order);
}
