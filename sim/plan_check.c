/* plan_check: the validity check of a resolved plan (see plan.h
 * plan_check()): every problem against the model, the topology and the
 * plan's own knobs, each with its JSON path, without side effects. One
 * check_* per concern: precision, attention kernel and stack, CNN limits,
 * pipeline stages and schedule (plan_check_pipe.c), context and expert
 * parallelism and shard groups (plan_check_groups.c), parameter servers,
 * what-ifs, node groups, the parallel shape, TP and the batch. */
#include "plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bounds.h"
#include "inputs.h"
#include "platform.h"
#include "plan_check-private.h"
#include "stack.h"

/* The precision against the GPU: tf32 and fp8 need tensor cores for them. */
static void check_precision(const struct plan *p, const struct inputs *in, const char *f,
			    struct diag *d)
{
	(void)in;
	if (p->training.fp8_comm && p->training.precision != DTYPE_FP8)
		diag_err(d, f, "/training/fp8_comm", "needs precision \"fp8\", got \"%s\"",
			 dtype_name(p->training.precision));
	if (p->training.fp8_params && p->training.precision != DTYPE_FP8)
		diag_err(d, f, "/training/fp8_params", "needs precision \"fp8\", got \"%s\"",
			 dtype_name(p->training.precision));
	if (p->training.fp8_moe_act_cache && p->training.precision != DTYPE_FP8)
		diag_err(d, f, "/training/fp8_moe_act_cache", "needs precision \"fp8\", got \"%s\"",
			 dtype_name(p->training.precision));
	if (p->training.master_remainders &&
	    (p->training.fp8_params ||
	     (p->training.precision != DTYPE_BF16 && p->training.precision != DTYPE_FP8)))
		diag_err(d, f, "/training/master_weights",
			 "\"remainders\" needs bf16 weights (precision bf16, or fp8 without fp8_params), "
			 "got precision \"%s\"%s", dtype_name(p->training.precision),
			 p->training.fp8_params ? " with fp8_params" : "");
	if (p->training.memory_reserve < 0 || p->training.memory_reserve >= 0.5)
		diag_err(d, f, "/training/memory_reserve", "expected a fraction of HBM below 0.5, got %g",
			 p->training.memory_reserve);
}

/* The attention kernel: flash needs a GPU with one and a 16-bit or fp8
 * precision (FlashAttention has no fp32 kernels). */
static void check_attention(const struct plan *p, const struct gpu_spec *g, const char *f,
			    struct diag *d)
{
	bool full = p->training.precision == DTYPE_FP32 || p->training.precision == DTYPE_TF32;

	if (p->compute.attn_backend_set >= 0) {
		enum attn_backend be = (enum attn_backend)p->compute.attn_backend_set;
		if (p->training.attention != ATTN_FLASH)
			diag_err(d, f, "/compute/attention_backend", "a flash kernel needs attention "
				 "\"flash\", got \"%s\"", attention_names[p->training.attention]);
		else if (be == ATTN_BE_FA3 && g->compute_capability > 0 && g->compute_capability < 9)
			diag_err(d, f, "/compute/attention_backend", "fa3 needs compute capability 9.0 or "
				 "later (Hopper), GPU '%s' has %.1f", g->name, g->compute_capability);
		else if (be != ATTN_BE_BEST && g->flash_be_fwd[be] <= 0)
			diag_warn(d, f, "/compute/attention_backend", "GPU '%s' gives no figure for %s "
				  "(gpu.efficiency.attention_backends): priced as its best flash kernel",
				  g->name, attn_backend_names[be]);
	}
	if (p->training.attention != ATTN_FLASH)
		return;
	if (!gpu_has_flash(g))
		diag_err(d, f, "/training/attention", "flash needs a GPU with a fused attention "
			 "kernel (Ampere or later: the topology's gpu.efficiency.flash_fwd_max), "
			 "GPU '%s' has none", g->name);
	else if (full)
		diag_err(d, f, "/training/attention", "flash needs precision fp16, bf16 or fp8, "
			 "got \"%s\"", dtype_name(p->training.precision));
}

/* A kernel stack is written for transformers or for CNNs (stack.h): one
 * of the other kind would price kernels its model never runs. LoRA adapts
 * the modules the stack's model code has: where it projects q, k and v by
 * three Linear layers (stack.h stack_qkv_separate) there is no fused qkv_proj
 * (PEFT rejects a target module the model lacks), and workload.c would
 * attach its adapter to no GEMM. */
static void check_stack(const struct plan *p, const struct model *m, const char *f,
			struct diag *d)
{
	const struct stack *k = plan_stack(p);
	bool cnn_model = m->arch == MODEL_ARCH_CNN, cnn_stack = k->cnn != CNN_FUSE_NONE;
	if (p->compute.stack_set && cnn_model != cnn_stack)
		diag_err(d, f, "/compute/stack", "stack '%s' runs %s, the model is a %s",
			 k->name, cnn_stack ? "convolutional networks" : "transformers",
			 cnn_model ? "convolutional network" : "transformer");
	if (p->compute.attn_backend_set == ATTN_BE_FA3 && p->training.attention == ATTN_FLASH &&
	    m->dropout)
		diag_warn(d, f, "/compute/attention_backend", "fa3 has no dropout and the model has: "
			  "its attention core runs fa2 (models/attention.h attention_backend_dropout)");
	if (stack_qkv_separate(k, m) && finetune_targets(&p->training.finetune, FT_QKV))
		diag_err(d, f, "/training/finetune/targets", "no fused 'qkv_proj' in stack '%s', "
			 "which projects q, k and v by three layers: give q_proj, k_proj and v_proj",
			 k->name);
	/* the caching allocator is replayed for the stacks that launch with
	 * expandable segments (stack.h expandable_segments) */
	if (p->training.allocator != PLAN_ALLOC_STACK && !k->expandable_segments)
		diag_err(d, f, "/training/allocator", "PyTorch's caching allocator is replayed for "
			 "torchtitan's stacks only (models/memory_replay.c), got stack '%s'", k->name);
}

/* A batch-norm group (CNN models only): a power of two of one node's
 * GPUs, which exchange statistics over its links (sim/build_cnn.c). */
static void check_bn_group(const struct plan *p, const struct topology *t, bool cnn, const char *f,
			   struct diag *d)
{
	int g = p->parallel.bn_group;
	if (g > 1 && !cnn)
		diag_err(d, f, "/parallel/bn_group", "batch-norm groups apply to CNN models only, got %d", g);
	else if (g > 1 && ((g & (g - 1)) || t->gpus_per_node % g))
		diag_err(d, f, "/parallel/bn_group", "expected a power of two dividing the %d GPUs of a "
			 "node (the group exchanges statistics over the node's links), got %d",
			 t->gpus_per_node, g);
}

/* A CNN trains with data parallelism only: one replica per GPU. */
static void check_cnn(const struct plan *p, const struct topology *t, long gpus, const char *f,
		      struct diag *d)
{
	if (p->parallel.tp > 1)
		diag_err(d, f, "/parallel/tp", "CNN models train with data parallelism only, got tp = %d",
			 p->parallel.tp);
	if (p->parallel.pp > 1)
		diag_err(d, f, "/parallel/pp", "CNN models train with data parallelism only, got pp = %d",
			 p->parallel.pp);
	if (p->parallel.zero != ZERO_0)
		diag_err(d, f, "/parallel/zero", "ZeRO is not supported for CNN models, got zero = %d",
			 (int)p->parallel.zero);
	if (p->parallel.sp)
		diag_err(d, f, "/parallel/sp", "sequence parallelism does not apply to CNN models");
	if (p->parallel.cp > 1)
		diag_err(d, f, "/parallel/cp", "context parallelism does not apply to CNN models");
	if (p->parallel.recompute != RECOMPUTE_NONE)
		diag_err(d, f, "/parallel/recompute", "recomputation is not supported for CNN models, got '%s'",
			 recompute_name(p->parallel.recompute));
	if (p->training.attention_set)
		diag_err(d, f, "/training/attention", "applies to transformer models only");
	/* the optimizer's state is the stack's (sim/build_cnn.c) */
	if (p->training.master_remainders)
		diag_err(d, f, "/training/master_weights", "applies to transformer models only, got \"remainders\"");
	if (p->training.bf16_moments)
		diag_err(d, f, "/training/optimizer_state_dtype", "applies to transformer models only, got \"bf16\"");
	if (dtype_is_te_low(p->training.precision))
		diag_err(d, f, "/training/precision", "%s (Transformer Engine) applies to transformer models only",
			 dtype_name(p->training.precision));
	if (p->parallel.dp != gpus)
		diag_err(d, f, "/parallel/dp", "must equal the %ld GPUs for a CNN model, got %d", gpus,
			 p->parallel.dp);
	check_bn_group(p, t, true, f, d);
	long div = (long)p->parallel.dp * p->training.micro_batch;
	if (div > 0 && p->training.global_batch > 0 && p->training.global_batch % div)
		diag_err(d, f, "/training/global_batch", "must be divisible by dp x micro_batch = %d x %ld = %ld, got %ld",
			 p->parallel.dp, p->training.micro_batch, div, p->training.global_batch);
}

/* training.finetune against the plan's parallel layout: CPU offload and
 * ZeRO-3 (the rest is fixed by model and precision: check_fixed_finetune). */
static void check_finetune(const struct plan *p, const char *f, struct diag *d)
{
	const struct finetune *ft = &p->training.finetune;
	if (!finetune_frozen(ft))
		return;
	if (p->parallel.offload != OFFLOAD_NONE)
		diag_err(d, f, "/parallel/offload", "CPU offload with frozen base weights is not "
			 "supported, got \"%s\"", plan_offload_names[p->parallel.offload]);
	if (ft->base == FT_BASE_NF4 && p->parallel.zero >= ZERO_3)
		diag_err(d, f, "/training/finetune/base_dtype", "nf4 weights with ZeRO-3 are not "
			 "supported");
}

/* The narrowest side of the weights ft adapts (models/finetune.h's
 * table: k_proj and v_proj map hidden_size to kv_heads x head_dim, the
 * MLP's to ffn_size and back, the others hidden_size to at least it),
 * named in *what. */
static long narrowest_target(const struct finetune *ft, const struct model *m, const char **what)
{
	long n = m->hidden, kv = m->kv_heads * model_head_dim(m);
	*what = "hidden_size";
	if (!model_is_mla(m) && (finetune_targets(ft, FT_K) || finetune_targets(ft, FT_V)) && kv < n) {
		n = kv;
		*what = "kv_heads x head_dim, k_proj's and v_proj's outputs";
	}
	if ((finetune_targets(ft, FT_GATE) || finetune_targets(ft, FT_UP) || finetune_targets(ft, FT_DOWN)) &&
	    m->ffn < n) {
		n = m->ffn;
		*what = "ffn_size, the MLP's inner width";
	}
	return n;
}

/* finetune (in the object at JSON path tr) against the model and the
 * precision (models/finetune.h): dense decoders; a LoRA rank within the
 * hidden size; NF4 dequantizes to a 16-bit precision; a LoRA base is the
 * precision's own weights. */
static void check_fixed_finetune(const struct plan *p, const struct model *m, const char *f, const char *tr,
				 struct diag *d)
{
	const struct finetune *ft = &p->training.finetune;
	char jp[64], why[300];
	if (!finetune_frozen(ft))
		return;
	if (!model_arch(m)->model_parallel) {
		snprintf(why, sizeof(why), "%s/finetune", tr);
		diag_err(d, f, why, "applies to transformer models only");
		return;
	}
	snprintf(jp, sizeof(jp), "%s/finetune", tr);
	if (model_is_moe(m))
		diag_err(d, f, jp, "mixture-of-experts models are not supported yet (model '%s')", m->name);
	if (model_is_bidirectional(m))
		diag_err(d, f, jp, "%s models are not supported yet (model '%s')", model_arch(m)->name, m->name);
	snprintf(jp, sizeof(jp), "%s/finetune/rank", tr);
	const char *side;
	long narrow = narrowest_target(ft, m, &side);
	if (ft->rank > 0 && !bound_check_ratio("finetune/rank", ft->rank, (double)narrow, why, sizeof(why)))
		diag_err(d, f, jp, "%s (%s of model '%s', %s)", why, side, m->name, m->path);
	snprintf(jp, sizeof(jp), "%s/finetune/targets", tr);
	if (finetune_targets(ft, FT_GATE) && m->act != MODEL_ACT_SWIGLU)
		diag_err(d, f, jp, "gate_proj needs a SwiGLU MLP, model '%s' has none", m->name);
	struct precision pr;
	precision_init(&pr, p->training.precision, false);
	snprintf(jp, sizeof(jp), "%s/finetune/base_dtype", tr);
	if (ft->base == FT_BASE_NF4) {
		if (p->training.precision != DTYPE_BF16 && p->training.precision != DTYPE_FP16)
			diag_err(d, f, jp, "nf4 weights are dequantized to a bf16 or fp16 precision, got "
				 "precision \"%s\"", dtype_name(p->training.precision));
	} else if (ft->base_set &&
		   (ft->base == FT_BASE_FP16 ? DTYPE_FP16 : DTYPE_BF16) != pr.weight)
		diag_err(d, f, jp, "a lora base is the precision's own weights, %s under precision \"%s\", "
			 "got '%s'", dtype_name(pr.weight), dtype_name(p->training.precision),
			 ft_base_names[ft->base]);
}

/* A bidirectional model's sequence (at tr/seq_len) against its learned
 * positions and its masked positions. */
static void check_fixed_seq(const struct plan *p, const struct model *m, const char *f, const char *tr,
			    struct diag *d)
{
	char jp[64];
	snprintf(jp, sizeof(jp), "%s/seq_len", tr);
	if (model_is_bidirectional(m) && p->training.seq > m->max_position)
		diag_err(d, f, jp, "must be at most the %ld learned positions of model '%s' (max_position), "
			 "got %ld", m->max_position, m->name, p->training.seq);
	if (model_is_encoder(m) && m->mlm_positions > p->training.seq)
		diag_err(d, f, jp, "must be at least the %ld mlm_positions of model '%s' (%s: /mlm_positions; "
			 "the masked positions are some of a sequence's tokens), got %ld", m->mlm_positions,
			 m->name, m->path, p->training.seq);
}

int plan_check_fixed_model(const struct plan *p, const struct model *m, const char *f, const char *tr,
			   struct diag *d)
{
	int before = diag_count(d);
	check_fixed_finetune(p, m, f, tr, d);
	check_fixed_seq(p, m, f, tr, d);
	return diag_count(d) - before;
}

int plan_check_fixed_gpu(const struct plan *p, const struct inputs *in, const char *f, const char *tr,
			 struct diag *d)
{
	const struct topology *t = inputs_topology(in);
	const struct gpu_spec *g = &t->gpu;
	char jp[64];
	snprintf(jp, sizeof(jp), "%s/precision", tr);
	if (g->peak_flops[p->training.precision] <= 0)
		return diag_err(d, f, jp, "%s needs a GPU with a peak for %s, but GPU '%s' of topology '%s' has "
				"none (%s: /gpu/peak_tflops)", dtype_name(p->training.precision),
				dtype_name(p->training.precision), g->name, t->name, inputs_topology_path(in)), 1;
	return 0;
}

/* An encoder or a ViT (model.h): its learned position table bounds the
 * sequence (a ViT's is the sequence: scenario.c derives seq_len);
 * context parallelism's split is the causal one; no adapters yet. */
static void check_encoder(const struct plan *p, const struct model *m, const char *f,
			  struct diag *d)
{
	if (!model_is_bidirectional(m))
		return;
	const char *arch = model_arch(m)->name;
	if (p->parallel.cp > 1)
		diag_err(d, f, "/parallel/cp", "context parallelism here is the load-balanced causal "
			 "split of a decoder; model '%s' is a%s %s, got cp = %d",
			 m->name, strchr("aeiou", arch[0]) ? "n" : "", arch, p->parallel.cp);
}

/* Parameter servers (plan dp_sync "ps"). */
static void check_ps(const struct plan *p, const struct inputs *in, long gpus, const char *f,
		     struct diag *d)
{
	const struct topology *t = inputs_topology(in);
	if (p->parallel.dp_sync != DP_SYNC_PS) {
		if (p->given & PLAN_GIVEN_PS)
			diag_err(d, f, "/parallel/ps", "applies to parameter servers only (parallel.dp_sync "
				 "\"ps\"), got dp_sync \"%s\"", plan_dp_sync_names[p->parallel.dp_sync]);
		return;
	}
	if (p->parallel.zero != ZERO_0)
		diag_err(d, f, "/parallel/dp_sync", "parameter servers hold the whole model and return it "
			 "whole: needs zero 0, got zero %d", (int)p->parallel.zero);
	if (p->parallel.ep > 1)
		diag_err(d, f, "/parallel/dp_sync", "parameter servers with expert parallelism are not "
			 "supported (ep = %d)", p->parallel.ep);
	if ((p->simulation.fold == FOLD_ON || p->simulation.fold == FOLD_EXACT))
		diag_err(d, f, "/simulation/fold", "parameter servers are simulated with every rank: "
			 "\"on\" cannot be used with dp_sync \"ps\"");
	long group = p->parallel.dp > 0 ? (long)p->parallel.dp * p->parallel.cp : gpus;
	if (p->parallel.ps.servers < 1)
		diag_err(d, f, "/parallel/ps/servers", "expected at least 1 server, got %d", p->parallel.ps.servers);
	else if (p->parallel.ps.attach == PS_ATTACH_GPUS && p->parallel.ps.servers > group)
		diag_err(d, f, "/parallel/ps/servers", "colocated servers (attach \"gpus\") live on the "
			 "DP group's GPUs: at most dp x cp = %ld, got %d", group, p->parallel.ps.servers);
	if (!p->parallel.ps.async && (p->given & PLAN_GIVEN_PS_ASYNC))
		diag_err(d, f, "/parallel/ps", "staleness and iterations apply to mode \"async\" only, "
			 "got mode \"sync\"");
	if (p->parallel.ps.attach == PS_ATTACH_GPUS && (p->given & PLAN_GIVEN_PS_NIC))
		diag_err(d, f, "/parallel/ps", "nic_Gbps and latency_us describe dedicated servers: "
			 "attach \"fabric\" only (colocated servers use their GPU's NIC)");
	if (p->parallel.ps.attach == PS_ATTACH_FABRIC && !platform_ps_supported(t, p->nodes))
		diag_err(d, f, "/parallel/ps/attach", "dedicated servers attach to the fabric core of a "
			 "multi-node job on a non-blocking, rail or two-level fat-tree fabric; topology '%s' "
			 "with %d nodes has none (use attach \"gpus\")", t->name, p->nodes);
}

/* Every straggler's rank below the job's gpus; every fraction picks a rank. */
static void check_straggler_ranks(const struct plan *p, long gpus, const char *f, struct diag *d)
{
	char jp[96];
	const struct plan_stragglers *st = &p->simulation.stragglers;
	for (int g = 0; g < st->ngroups; g++)
		for (int i = 0; i < st->group[g].nranks; i++)
			if (st->rank[st->group[g].first_rank + i] >= gpus) {
				if (st->listed)
					snprintf(jp, sizeof(jp), "/simulation/stragglers/%d/ranks/%d", g, i);
				else
					snprintf(jp, sizeof(jp), "/simulation/stragglers/ranks/%d", i);
				diag_err(d, f, jp, "expected a rank below the job's %ld GPUs, got %d", gpus,
					 st->rank[st->group[g].first_rank + i]);
			}
	/* a fraction picks round(fraction x GPUs) ranks (plan.h): none is no straggler at all */
	for (int g = 0; g < st->ngroups; g++) {
		double fr = st->group[g].fraction;
		if (fr > 0 && (long)(fr * (double)gpus + 0.5) < 1) {
			if (st->listed)
				snprintf(jp, sizeof(jp), "/simulation/stragglers/%d/fraction", g);
			else
				snprintf(jp, sizeof(jp), "/simulation/stragglers/fraction");
			diag_err(d, f, jp, "expected a fraction that picks at least one of the job's %ld GPUs "
				 "(>= %g), got %g: it rounds to no rank", gpus, 0.5 / (double)gpus, fr);
		}
	}
}

/* Exact folding against stragglers, degraded links and mixed GPUs;
 * sensitivity against no degraded links. */
static void check_fold_whatifs(const struct plan *p, const char *f, struct diag *d)
{
	if ((plan_has_stragglers(p) || p->simulation.ndegraded > 0) && p->simulation.fold == FOLD_EXACT)
		diag_err(d, f, "/simulation/fold", "stragglers and degraded links make their replicas "
			 "differ, which exact folding does not fold: use \"auto\" or \"on\" (the others "
			 "folded, those replicas simulated whole)");
	if (p->simulation.sensitivity && p->simulation.ndegraded == 0)
		diag_err(d, f, "/simulation/sensitivity", "needs degraded_links to measure");
	if (plan_mixed_gpus(p) && p->simulation.fold == FOLD_EXACT)
		diag_err(d, f, "/simulation/fold", "node groups with different GPUs make ranks differ, "
			 "which exact folding does not fold: use \"auto\" or \"on\" (one replica "
			 "simulated for each class of GPUs)");
}

/* Node groups: each GPU with a peak for the precision, their nodes the
 * plan's; node_order only with them. */
static void check_node_groups(const struct plan *p, const char *f, struct diag *d)
{
	char jp[96];
	if (p->ngroups > 0) {
		long sum = 0;
		for (int i = 0; i < p->ngroups; i++) {
			const struct gpu_spec *g = &p->group[i].gpu;
			sum += p->group[i].nodes;
			snprintf(jp, sizeof(jp), "/node_groups/%d/gpu", i);
			if (g->peak_flops[p->training.precision] <= 0)
				diag_err(d, f, jp, "%s needs a GPU with a peak for %s, but GPU '%s' has none",
					 dtype_name(p->training.precision), dtype_name(p->training.precision),
					 g->name);
		}
		if (sum != p->nodes)
			diag_err(d, f, "/nodes", "must equal the node groups' %ld nodes, got %d", sum, p->nodes);
	} else if (p->node_order != NODE_ORDER_LISTED)
		diag_err(d, f, "/node_order", "orders node groups: needs node_groups");
}

/* Throttling windows: their nodes or ranks in the job, no exact folding. */
static void check_throttles(const struct plan *p, long gpus, const char *f, struct diag *d)
{
	char jp[96];
	for (int i = 0; i < p->simulation.nthrottle; i++) {
		const struct plan_throttle *w = &p->simulation.throttle[i];
		long lim = w->by_node ? p->nodes : gpus;
		for (int k = 0; k < w->n; k++)
			if (w->id[k] >= lim) {
				snprintf(jp, sizeof(jp), "/simulation/throttle/%d/%s/%d", i,
					 w->by_node ? "nodes" : "ranks", k);
				diag_err(d, f, jp, "expected a %s below the job's %ld, got %d",
					 w->by_node ? "node" : "rank", lim, w->id[k]);
			}
	}
	if (p->simulation.nthrottle > 0 && p->simulation.fold == FOLD_EXACT)
		diag_err(d, f, "/simulation/fold", "throttling windows make ranks differ, which exact "
			 "folding does not fold: use \"auto\" or \"on\" (the others folded, the "
			 "throttled replicas simulated whole)");
}

/* Each degraded link named in the job's platform (its parameter servers'
 * links included), unless the node count is wrong (reported with /nodes). */
static void check_degraded_links(const struct plan *p, const struct topology *t, const char *f,
				 struct diag *d)
{
	char jp[96];
	struct diag inner;
	diag_init(&inner, NULL);
	int bad = topology_check_nodes(t, p->nodes, &inner);
	diag_finish(&inner);
	if (bad)
		return;     /* reported with /nodes */
	struct platform_ps ps = { p->parallel.ps.servers, 1, 0 };
	struct platform_extra x = { NULL, NULL, 0 };
	if (p->parallel.dp_sync == DP_SYNC_PS && p->parallel.ps.attach == PS_ATTACH_FABRIC &&
	    platform_ps_supported(t, p->nodes))
		x.ps = &ps;
	for (int i = 0; i < p->simulation.ndegraded; i++) {
		const char *name = p->simulation.degraded[i].link;
		if (platform_has_link(t, p->nodes, &x, name))
			continue;
		snprintf(jp, sizeof(jp), "/simulation/degraded_links/%d/link", i);
		diag_err(d, f, jp, "no link '%s' in the platform of %d nodes of topology '%s' "
			 "(names as fabric/platform.c: gl<gpu>, nic<node>_<nic>, lu<leaf>, podup<pod>, "
			 "psnic<server>, ...)", name, p->nodes, t->name);
	}
}

/* Stragglers, sampled iterations and degraded links. */
static void check_whatifs(const struct plan *p, const struct inputs *in, long gpus, const char *f,
			  struct diag *d)
{
	check_straggler_ranks(p, gpus, f, d);
	check_fold_whatifs(p, f, d);
	check_node_groups(p, f, d);
	check_throttles(p, gpus, f, d);
	if (p->simulation.iterations > 1 && !plan_stragglers_drawn(p))
		diag_err(d, f, "/simulation/iterations", "samples straggler draws: needs stragglers with "
			 "distribution \"normal\", \"lognormal\" or \"empirical\" (every iteration would be the same), "
			 "got %d iterations", p->simulation.iterations);
	if (p->simulation.ndegraded > 0)
		check_degraded_links(p, inputs_topology(in), f, d);
}

/* The node count against the topology: its limits, NICs between nodes. */
static void check_nodes(const struct plan *p, const struct topology *t, const char *f,
			struct diag *d)
{
	struct diag inner;
	diag_init(&inner, NULL);
	if (topology_check_nodes(t, p->nodes, &inner)) {
		const char *e = strstr(diag_text(&inner), "error: ");
		diag_err(d, f, "/nodes", "%d nodes do not fit topology '%s': %s", p->nodes, t->name,
			 e ? e + 7 : diag_text(&inner));
	}
	diag_finish(&inner);
	if (p->nodes > 1 && t->nics < 1)
		diag_err(d, f, "/nodes", "%d nodes need NICs, but topology '%s' has none", p->nodes, t->name);
}

/* The attention kernel on every GPU of the plan (each node group's). */
static void check_attention_gpus(const struct plan *p, const struct topology *t, const char *f,
				 struct diag *d)
{
	if (p->ngroups > 0) {
		/* every group's GPU must run the plan's kernels */
		for (int i = 0; i < p->ngroups; i++) {
			char jp[64];
			struct diag inner;
			diag_init(&inner, NULL);
			check_attention(p, &p->group[i].gpu, f, &inner);
			if (diag_count(&inner)) {
				snprintf(jp, sizeof(jp), "/node_groups/%d/gpu", i);
				diag_err(d, f, jp, "GPU '%s' cannot run attention \"%s\" at precision %s (set "
					 "training.attention \"unfused\" for a cluster with a GPU without a "
					 "fused kernel)", p->group[i].gpu.name,
					 attention_names[p->training.attention],
					 dtype_name(p->training.precision));
			}
			diag_finish(&inner);
		}
	} else
		check_attention(p, &t->gpu, f, d);
}

/* tp x cp x pp dividing the GPUs, dp x the rest equal to them. Returns
 * false after reporting (the checks that follow need the shape). */
/* The userbuffers reduce-scatter's SMs: only with tp_comm_overlap, and
 * fewer than the GPU has. */
static void check_sm_margin(const struct plan *p, const struct topology *t, const char *f,
			    struct diag *d)
{
	static const char *const key[2] = { "proj_fprop", "fc2_fprop" };
	for (int i = 0; i < 2; i++) {
		long n = p->communication.tp_rs_margin_sms[i];
		char jp[96];
		if (n <= 0)
			continue;       /* unset: no path to format (the plan search) */
		snprintf(jp, sizeof(jp), "/communication/tp_comm_overlap_sm_margin/%s", key[i]);
		if (!p->communication.tp_comm_overlap)
			diag_err(d, f, jp, "needs communication.tp_comm_overlap = true, got %ld SMs "
				 "without it", n);
		else if (n >= t->gpu.sm_count)
			diag_err(d, f, jp, "must be below the GPU's %ld SMs (%s), got %ld",
				 t->gpu.sm_count, t->gpu.name, n);
	}
}

static bool check_shape(const struct plan *p, const struct topology *t, long gpus, const char *f,
			struct diag *d)
{
	long tpp = (long)p->parallel.tp * p->parallel.pp;
	if (p->parallel.cp > 1) {
		long tcp = tpp * p->parallel.cp;
		if (gpus % tcp) {
			diag_err(d, f, "/parallel", "tp x cp x pp = %d x %d x %d = %ld must divide the %ld GPUs "
				 "(%d nodes x %d GPUs)", p->parallel.tp, p->parallel.cp, p->parallel.pp, tcp,
				 gpus, p->nodes, t->gpus_per_node);
			return false;
		}
		if ((long)p->parallel.dp * tcp != gpus) {
			diag_err(d, f, "/parallel/dp", "dp x tp x cp x pp must equal the %ld GPUs (%d nodes x %d "
				 "GPUs): %d x %d x %d x %d = %ld", gpus, p->nodes, t->gpus_per_node, p->parallel.dp,
				 p->parallel.tp, p->parallel.cp, p->parallel.pp, (long)p->parallel.dp * tcp);
			return false;
		}
		tpp = tcp;
	}
	if (gpus % tpp) {
		diag_err(d, f, "/parallel", "tp x pp = %d x %d = %ld must divide the %ld GPUs "
			 "(%d nodes x %d GPUs)", p->parallel.tp, p->parallel.pp, tpp, gpus, p->nodes,
			 t->gpus_per_node);
		return false;
	}
	if ((long)p->parallel.dp * tpp != gpus) {
		diag_err(d, f, "/parallel/dp", "dp x tp x pp must equal the %ld GPUs (%d nodes x %d GPUs): "
			 "%d x %d x %d = %ld", gpus, p->nodes, t->gpus_per_node,
			 p->parallel.dp, p->parallel.tp, p->parallel.pp, (long)p->parallel.dp * tpp);
		return false;
	}
	return true;
}

/* Tensor and sequence parallelism against the model's heads and sizes. */
static void check_tp(const struct plan *p, const struct model *m, const char *f, struct diag *d)
{
	if (m->heads % p->parallel.tp)
		diag_err(d, f, "/parallel/tp", "must divide the model's %ld attention heads, got %d", m->heads,
			 p->parallel.tp);
	else if (m->kv_heads % p->parallel.tp && p->parallel.tp % m->kv_heads)
		diag_err(d, f, "/parallel/tp", "must divide or be a multiple of the model's %ld KV heads, got %d",
			 m->kv_heads, p->parallel.tp);
	if (m->ffn % p->parallel.tp)
		diag_err(d, f, "/parallel/tp", "must divide the FFN size %ld, got %d", m->ffn, p->parallel.tp);
	/* a vocabulary not divisible by tp is fine: Megatron pads it */
	if (p->parallel.sp && p->parallel.tp < 2)
		diag_err(d, f, "/parallel/sp", "sequence parallelism needs tp > 1, got tp = %d", p->parallel.tp);
	if (p->communication.tp_comm_overlap && !p->parallel.sp)
		diag_err(d, f, "/communication/tp_comm_overlap",
			 "needs sequence parallelism (parallel.sp) with tp > 1, got sp = false, tp = %d",
			 p->parallel.tp);
	if (p->training.seq > 0 && p->parallel.sp && p->training.seq % p->parallel.tp)
		diag_err(d, f, "/parallel/sp", "seq_len %ld must be divisible by tp = %d", p->training.seq,
			 p->parallel.tp);
}

/* The batch: divisible by dp x micro_batch (and pp when interleaved),
 * within what is replayed in memory; ZeRO-3 without a pipeline. */
static void check_batch(const struct plan *p, const struct model *m, const char *f, struct diag *d)
{
	long div = (long)p->parallel.dp * p->training.micro_batch;
	if (p->training.global_batch > 0 && p->training.global_batch % div)
		diag_err(d, f, "/training/global_batch", "must be divisible by dp x micro_batch = %d x %ld = %ld, got %ld",
			 p->parallel.dp, p->training.micro_batch, div, p->training.global_batch);
	else if (p->parallel.schedule == SCHED_INTERLEAVED && p->parallel.interleave > 1 &&
		 (p->training.global_batch / div) % p->parallel.pp)
		diag_err(d, f, "/training/global_batch", "interleaving needs micro-batches per pipeline (%ld) divisible by pp = %d",
			 p->training.global_batch / div, p->parallel.pp);
	long steps = 2 * (p->training.global_batch / div) *
		     (p->parallel.schedule == SCHED_INTERLEAVED ? p->parallel.interleave : 1);
	if (steps > 4000000)
		diag_err(d, f, "/training/global_batch", "%ld micro-batches per pipeline are more than this ddlsim "
			 "replays (2 x micro-batches x chunks must be <= 4000000); raise micro_batch",
			 p->training.global_batch / div);
	if (p->parallel.zero == ZERO_3 && p->parallel.pp > 1)
		diag_err(d, f, "/parallel/zero",
			 "ZeRO-3 / FSDP with pipeline parallelism is not supported (pp = %d)", p->parallel.pp);
	/* the replayed programs live in memory: bound their tasks before the
	 * builder allocates them (about 100 bytes each with dependencies) */
	double per_layer = (p->parallel.tp > 1 ? 8 : 2) + 4.0 * (p->parallel.cp - 1);
	double tasks = 2.0 * (double)(p->training.global_batch / div) * (double)m->layers * per_layer;
	if (tasks > PLAN_MAX_TASKS)
		diag_err(d, f, "/training/global_batch", "an iteration of %ld micro-batches x %ld layers is about "
			 "%.3g tasks, more than the %.0f this ddlsim replays in memory; raise micro_batch "
			 "(fewer, larger micro-batches) or simulate a smaller global batch and scale",
			 p->training.global_batch / div, m->layers, tasks, (double)PLAN_MAX_TASKS);
}

/* The node count: positive, at most PLAN_MAX_GPUS GPUs. Returns whether
 * it is (else reported: nothing else can be checked). */
static bool check_node_count(const struct plan *p, const struct topology *t, long gpus, const char *f,
			     struct diag *d)
{
	if (p->nodes >= 1 && gpus <= PLAN_MAX_GPUS)
		return true;
	if (p->nodes < 1)
		diag_err(d, f, "/nodes", "expected a positive node count, got %d", p->nodes);
	else
		diag_err(d, f, "/nodes", "at most %ld GPUs are supported, got %d nodes x %d GPUs = %ld",
			 PLAN_MAX_GPUS, p->nodes, t->gpus_per_node, gpus);
	return false;
}

/* recompute_every_n_layers with "full" only; recompute_modules and
 * fp8_moe_act_cache only where the model has what they name. */
static void check_recompute_options(const struct plan *p, const struct model *m, const char *f, struct diag *d)
{
	if (p->parallel.recompute_every > 1 && p->parallel.recompute != RECOMPUTE_FULL)
		diag_err(d, f, "/parallel/recompute_every_n_layers", "applies to recompute \"full\" (the layers "
			 "it picks are checkpointed whole), got recompute \"%s\"",
			 recompute_name(p->parallel.recompute));
	if (p->parallel.recompute_modules & RC_MOD_MLA_UP_PROJ && !model_is_mla(m))
		diag_err(d, f, "/parallel/recompute_modules", "\"mla_up_proj\" recomputes multi-head "
			 "latent attention's up projections; the model has no \"mla\" attention");
	if (p->parallel.recompute_modules & RC_MOD_MOE_ACT && !model_is_moe(m))
		diag_err(d, f, "/parallel/recompute_modules", "\"moe_act\" recomputes the routed experts' "
			 "activation; the model has no \"moe\" block");
	if (p->training.fp8_moe_act_cache && !model_is_moe(m))
		diag_err(d, f, "/training/fp8_moe_act_cache", "caches the routed experts' SwiGLU inputs; "
			 "the model has no \"moe\" block");
}

/* "selective-op" (torchtitan's per-op policy) only where it is modelled. */
static void check_selective_op(const struct plan *p, const struct model *m, const char *f, struct diag *d)
{
	if (p->parallel.recompute != RECOMPUTE_SELECTIVE_OP)
		return;
	/* memory.c counts the saved GEMM outputs of torchtitan's Llama
	 * layer (wq, wk, wv, wo, w1, w3, w2); compute recomputes what the
	 * stack emits: the two agree only there */
	const struct stack *k = plan_stack(p);
	if (model_is_moe(m) || model_is_mla(m) || m->arch != MODEL_ARCH_DECODER ||
	    m->act != MODEL_ACT_SWIGLU)
		diag_err(d, f, "/parallel/recompute", "\"selective-op\" (torchtitan's per-op policy) is "
			 "modelled for dense Llama-style decoders (SwiGLU, standard attention), not for '%s'",
			 m->name);
	else if (!stack_qkv_separate(k, m) || !k->mlp_separate)
		diag_err(d, f, "/parallel/recompute", "\"selective-op\" needs a stack with separate q, k, v "
			 "and gate, up projections as torchtitan's (its mm count), got stack '%s'", k->name);
	else if (p->training.finetune.method != FT_FULL)
		diag_err(d, f, "/parallel/recompute", "\"selective-op\" is not modelled with LoRA adapters "
			 "(their GEMMs shift the policy's mm count)");
	else if (p->training.attention_set && p->training.attention != ATTN_FLASH)
		diag_err(d, f, "/parallel/recompute", "\"selective-op\" saves the fused SDPA kernel's output: "
			 "it needs flash attention");
}

/* Offloading: a link to host memory; parameters not with ZeRO-3. */
static void check_offload(const struct plan *p, const struct inputs *in, const char *f, struct diag *d)
{
	const struct topology *t = inputs_topology(in);
	if (p->parallel.offload != OFFLOAD_NONE && !(topology_host_bw(t) > 0))
		diag_err(d, f, "/parallel/offload", "needs the GPUs' link to host memory, but topology '%s' "
			 "gives none (%s: /node/intra/host_bw_GBps)", t->name, inputs_topology_path(in));
	if (p->parallel.offload == OFFLOAD_PARAMS && p->parallel.zero == ZERO_3)
		diag_err(d, f, "/parallel/offload", "\"optimizer+params\" with ZeRO-3 is not supported "
			 "(parameters come from host memory layer by layer already)");
}

int plan_check(const struct plan *p, const struct inputs *in, const char *f, struct diag *d)
{
	const struct model *m = inputs_model(in);
	const struct topology *t = inputs_topology(in);
	int before = diag_count(d);
	long gpus = plan_gpus(p, in);

	if (!check_node_count(p, t, gpus, f, d))
		return diag_count(d) - before;
	check_nodes(p, t, f, d);
	plan_check_fixed_gpu(p, in, f, "/training", d);
	plan_check_fixed_model(p, m, f, "/training", d);
	check_precision(p, in, f, d);
	check_ps(p, in, gpus, f, d);
	check_whatifs(p, in, gpus, f, d);
	check_stack(p, m, f, d);
	check_finetune(p, f, d);
	check_recompute_options(p, m, f, d);
	if (!model_arch(m)->model_parallel) {
		if (p->parallel.shard_group > 0)
			diag_err(d, f, "/parallel/shard_group", "hybrid sharding applies to transformer "
				 "models (ZeRO), got a CNN model");
		check_cnn(p, t, gpus, f, d);
		return diag_count(d) - before;
	}
	check_bn_group(p, t, false, f, d);
	check_attention_gpus(p, t, f, d);
	if (!check_shape(p, t, gpus, f, d))
		return diag_count(d) - before;
	check_tp(p, m, f, d);
	check_sm_margin(p, t, f, d);
	plan_check_pipeline(p, m, f, d);
	check_encoder(p, m, f, d);
	plan_check_groups(p, m, f, d);
	check_selective_op(p, m, f, d);
	check_offload(p, in, f, d);
	check_batch(p, m, f, d);
	return diag_count(d) - before;
}

/* The fastest p could train its tokens: every GPU at 1.25 x the
 * precision's peak (the most a cost source prices a kernel at: the
 * roofline stays under the peak, a profile entry within 1.25 x of it,
 * cost_profile.c), and the time's cost at p's price. */
int plan_check_train_time(const struct plan *p, const struct inputs *in, const char *f, const char *jpath,
			  struct diag *d)
{
	const struct model *m = inputs_model(in);
	if (!(p->training.train_tokens > 0) || !model_arch(m)->sequence || p->training.seq < 1 ||
	    p->training.global_batch < 1)
		return 0;
	double peak = inputs_topology(in)->gpu.peak_flops[p->training.precision];
	for (int g = 0; g < p->ngroups; g++)
		peak = fmax(peak, p->group[g].gpu.peak_flops[p->training.precision]);
	long gpus = plan_gpus(p, in);
	struct wl_shape shp = plan_wl_shape(p);
	double dense, layers = plan_recomputed_model_layers(p, m, &dense);
	double flops = workload_iteration_flops_layers(m, &shp, p->parallel.recompute,
						       (double)p->training.global_batch, layers, dense);
	double iter_tokens = (double)p->training.global_batch * (double)p->training.seq;
	if (!(peak > 0) || !(flops > 0) || gpus < 1)
		return 0;
	double s = p->training.train_tokens / iter_tokens * flops / ((double)gpus * 1.25 * peak);
	char how[400], why[600];
	int before = diag_count(d);
	snprintf(how, sizeof(how), "train_tokens / tokens per iteration x FLOPs per iteration / (GPUs x 1.25 x peak) "
		 "/ 86400 = %g / %g x %g / (%ld x 1.25 x %g) / 86400", p->training.train_tokens, iter_tokens, flops,
		 gpus, peak);
	if (!bound_check_derived("time_to_train_days", s / 86400, how, why, sizeof(why)))
		diag_err(d, f, jpath, "%s days (the fastest these GPUs could train it, at 1.25 x their peak)", why);
	double usd = s / 3600 * (double)gpus * p->cost.usd_per_gpu_hour;
	snprintf(how, sizeof(how), "%g GPU-hours at that speed x %g USD/GPU-hour", s / 3600 * (double)gpus,
		 p->cost.usd_per_gpu_hour);
	if (diag_count(d) == before && !bound_check_derived("cost_usd", usd, how, why, sizeof(why)))
		diag_err(d, f, jpath, "%s (the least these GPUs could train it for)", why);
	return diag_count(d) - before;
}
