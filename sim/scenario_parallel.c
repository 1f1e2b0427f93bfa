/* scenario_parallel: the scenario file's parallel object (plan.h's
 * struct plan_parallel): degrees, schedule and interleave, ZeRO, recompute,
 * rank order, stage layers, and the parameter servers (parallel.ps). */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "scenario-private.h"
#include "scenario.h"
#include "placement.h"

static const char *const rc_names[] = { "none", "selective", "full", "selective-op", NULL };

/* A list of at most max layer counts (each >= min) into out; returns the
 * count read, 0 when the key is absent or too long. */
static int layer_list(struct jobj *jo, const char *key, int *out, size_t max, long min)
{
	json_t *arr, *v;
	char ap[300];
	size_t i;

	if (jobj_array(jo, key, &arr, ap, sizeof(ap), 0) != 1)
		return 0;
	if (json_array_size(arr) > max) {
		diag_err(jo->d, jo->file, ap, "at most %zu stages, got %zu", max, json_array_size(arr));
		return 0;
	}
	json_array_foreach(arr, i, v) {
		const char *what = min > 0 ? "a positive layer count" : "a layer count >= 0";
		char ep[340];
		snprintf(ep, sizeof(ep), "%s/%zu", ap, i);
		if (!json_is_integer(v)) {
			diag_err(jo->d, jo->file, ep, "expected %s, got %s", what, jload_type_name(v));
			continue;
		}
		if (json_integer_value(v) < min || json_integer_value(v) > INT_MAX) {
			diag_err(jo->d, jo->file, ep, "expected %s, got %lld", what,
				 (long long)json_integer_value(v));
			continue;
		}
		out[i] = (int)json_integer_value(v);
	}
	return (int)json_array_size(arr);
}

/* parallel.recompute_modules (workload.h enum rc_module): Megatron's
 * names, with recompute "selective" only; the unmodelled ones refused. */
static void load_recompute_modules(struct jobj *jo, struct plan *s)
{
	json_t *arr, *v;
	char ap[300];
	size_t i;

	if (jobj_array(jo, "recompute_modules", &arr, ap, sizeof(ap), 0) != 1)
		return;
	if (s->parallel.recompute != RECOMPUTE_SELECTIVE) {
		diag_err(jo->d, jo->file, ap, "applies with recompute \"selective\" only (Megatron's "
			 "--recompute-granularity selective), got recompute \"%s\"",
			 rc_names[s->parallel.recompute]);
		return;
	}
	if (json_array_size(arr) == 0) {
		diag_err(jo->d, jo->file, ap, "expected at least one module (core_attn, layernorm, "
			 "mla_up_proj, moe_act), got []");
		return;
	}
	unsigned mods = 0;
	json_array_foreach(arr, i, v) {
		char ep[340];
		int k = 0;
		snprintf(ep, sizeof(ep), "%s/%zu", ap, i);
		const char *name = json_is_string(v) ? json_string_value(v) : NULL;
		while (name && rc_module_names[k] && strcmp(rc_module_names[k], name))
			k++;
		if (!name || !rc_module_names[k]) {
			diag_err(jo->d, jo->file, ep, "expected one of Megatron's recompute modules {core_attn, "
				 "layernorm, mla_up_proj, moe_act, mlp, moe, shared_experts}, got %s%s%s",
				 name ? "\"" : "", name ? name : jload_type_name(v), name ? "\"" : "");
			continue;
		}
		if (!((1u << k) & RC_MOD_MODELLED)) {
			diag_err(jo->d, jo->file, ep, "recompute module \"%s\" (Megatron's checkpoint of the "
				 "whole sub-block) is not modelled; modelled: core_attn, layernorm, "
				 "mla_up_proj, moe_act", name);
			continue;
		}
		mods |= 1u << k;
	}
	s->parallel.recompute_modules = mods;
}

/* parallel.ps: the parameter servers (plan.h). */
static void load_ps(struct jobj *parallel, struct plan *s)
{
	struct jobj jo;
	double v;
	int e;

	if (jobj_child(parallel, "ps", &jo, 0) != 1)
		return;
	s->given |= PLAN_GIVEN_PS;
	jobj_int_at_most(&jo, "servers", 1, PLAN_MAX_PS_SERVERS, "servers", &s->parallel.ps.servers);
	e = PS_ATTACH_FABRIC;
	jobj_enum(&jo, "attach", plan_ps_attach_names, &e, 0);
	s->parallel.ps.attach = e;
	e = PS_SHARD_EVEN;
	jobj_enum(&jo, "sharding", plan_ps_shard_names, &e, 0);
	s->parallel.ps.shard = e;
	e = 0;
	jobj_enum(&jo, "mode", plan_ps_mode_names, &e, 0);
	s->parallel.ps.async = e == 1;
	long x = 0;
	if (jobj_int(&jo, "staleness", &x, 0, 0) == 1) {
		if (x > PLAN_MAX_ITERATIONS)
			jobj_err(&jo, "staleness", "expected at most %d iterations, got %ld", PLAN_MAX_ITERATIONS, x);
		else
			s->parallel.ps.staleness = (int)x;
		s->given |= PLAN_GIVEN_PS_ASYNC;
	}
	if (jobj_int(&jo, "iterations", &x, 2, 0) == 1) {
		if (x > PLAN_MAX_ITERATIONS)
			jobj_err(&jo, "iterations", "expected at most %d iterations, got %ld", PLAN_MAX_ITERATIONS, x);
		else
			s->parallel.ps.iterations = (int)x;
		s->given |= PLAN_GIVEN_PS_ASYNC;
	}
	if (jobj_num(&jo, "nic_Gbps", &v, JPOS) == 1) {
		s->parallel.ps.nic_Bps = v * 1e9 / 8;
		s->given |= PLAN_GIVEN_PS_NIC;
	}
	if (jobj_num(&jo, "latency_us", &v, JNONNEG) == 1) {
		s->parallel.ps.latency_s = v * 1e-6;
		s->given |= PLAN_GIVEN_PS_NIC;
	}
	jobj_end(&jo);
}

void scenario_load_parallel(struct jobj *root, struct plan *s)
{
	struct jobj jo;
	long x;
	int e;

	if (jobj_child(root, "parallel", &jo, 0) != 1)
		return;
	x = 0;
	if (jobj_int(&jo, "dp", &x, 1, 0) == 1) {
		if (x > PLAN_MAX_GPUS)
			jobj_err(&jo, "dp", "expected at most %ld, got %ld", PLAN_MAX_GPUS, x);
		else
			s->parallel.dp = (int)x;
	}
	x = 1;
	if (jobj_int(&jo, "tp", &x, 1, 0) == 1) {
		if (x > PLAN_MAX_GPUS)
			jobj_err(&jo, "tp", "expected at most %ld, got %ld", PLAN_MAX_GPUS, x);
		else
			s->parallel.tp = (int)x;
	}
	x = 1;
	if (jobj_int(&jo, "pp", &x, 1, 0) == 1) {
		if (x > PLAN_MAX_STAGES)
			jobj_err(&jo, "pp", "expected at most %d stages, got %ld", PLAN_MAX_STAGES, x);
		else
			s->parallel.pp = (int)x;
	}
	jobj_int_at_most(&jo, "cp", 1, PLAN_MAX_STAGES, "context-parallel ranks", &s->parallel.cp);
	e = CP_P2P;
	jobj_enum(&jo, "cp_comm", plan_cp_comm_names, &e, 0);
	s->parallel.cp_comm = e;
	jobj_int_at_most(&jo, "ep", 1, MOE_MAX_EXPERTS, "expert-parallel ranks", &s->parallel.ep);
	jobj_int_at_most(&jo, "etp", 1, PLAN_MAX_STAGES, "expert-tensor-parallel ranks", &s->parallel.etp);
	jobj_int_at_most(&jo, "bn_group", 1, BN_GROUP_MAX, "GPUs per batch-norm group",
			 &s->parallel.bn_group);
	e = OFFLOAD_NONE;
	jobj_enum(&jo, "offload", plan_offload_names, &e, 0);
	s->parallel.offload = e;
	e = DP_SYNC_ALLREDUCE;
	jobj_enum(&jo, "dp_sync", plan_dp_sync_names, &e, 0);
	s->parallel.dp_sync = e;
	load_ps(&jo, s);
	jobj_bool(&jo, "sp", &s->parallel.sp, 0);
	x = 0;
	if (jobj_int(&jo, "zero", &x, 0, 0) == 1) {
		if (x > 3)
			jobj_err(&jo, "zero", "expected a ZeRO stage 0..3, got %ld", x);
		else
			s->parallel.zero = (enum zero_stage)x;
		s->given |= PLAN_GIVEN_ZERO;
	}
	jobj_int_at_most(&jo, "shard_group", 1, PLAN_MAX_GPUS, "GPUs", &s->parallel.shard_group);
	e = SCHED_1F1B;
	jobj_enum_table(&jo, "schedule", schedule_registry, sizeof(schedule_registry[0]), &e, 0);
	s->parallel.schedule = e;
	x = 1;
	if (jobj_int(&jo, "interleave", &x, 1, 0) == 1) {
		if (x > PLAN_MAX_STAGES)
			jobj_err(&jo, "interleave", "expected at most %d chunks, got %ld", PLAN_MAX_STAGES, x);
		else
			s->parallel.interleave = (int)x;
	}
	e = RECOMPUTE_NONE;
	jobj_enum(&jo, "recompute", rc_names, &e, 0);
	s->parallel.recompute = e;
	jobj_int_at_most(&jo, "recompute_every_n_layers", 1, INT_MAX, "layers", &s->parallel.recompute_every);
	load_recompute_modules(&jo, s);
	const char *ord;
	if (jobj_str(&jo, "order", &ord, 0) == 1) {
		struct placement pl;
		if (placement_init(&pl, 1, 1, 1, ord))
			jobj_err(&jo, "order", "expected a permutation of tp, cp, ep, dp, pp (cp and ep may "
				 "be left out) such as \"tp,cp,dp,pp\", got '%s'", ord);
		else
			snprintf(s->parallel.order, sizeof(s->parallel.order), "%s", ord);
	}
	s->parallel.nstage_layers = layer_list(&jo, "stage_layers", s->parallel.stage_layers, PLAN_MAX_STAGES, 1);
	jobj_int_at_most(&jo, "first_stage_layers", 1, INT_MAX, "layers", &s->parallel.first_stage_layers);
	jobj_int_at_most(&jo, "last_stage_layers", 1, INT_MAX, "layers", &s->parallel.last_stage_layers);
	s->parallel.nvstage_layers = layer_list(&jo, "vstage_layers", s->parallel.vstage_layers, PLAN_MAX_VSTAGES, 0);
	jobj_end(&jo);
}
