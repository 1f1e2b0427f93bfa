/* finetune: LoRA / QLoRA adapters, frozen weights, their storage (see
 * finetune.h). */
#include "finetune.h"

#include <string.h>

const char *const ft_method_names[FT_METHOD_N + 1] = { "full", "lora", "qlora", NULL };
const char *const ft_base_names[FT_BASE_N + 1] = { "bf16", "fp16", "nf4", NULL };
const char *const ft_target_names[FT_TARGET_N + 1] = {
	"q_proj", "k_proj", "v_proj", "qkv_proj", "o_proj", "gate_proj", "up_proj", "down_proj", NULL
};

bool finetune_frozen(const struct finetune *f)
{
	return f->method != FT_FULL;
}

bool finetune_targets(const struct finetune *f, enum ft_target target)
{
	return finetune_frozen(f) && (f->targets & (1u << target));
}

void finetune_target_dims(const struct model *m, enum ft_target target, double *d_in,
			  double *d_out, bool *row_parallel)
{
	double h = (double)m->hidden, f = (double)m->ffn;
	double kv = (double)(m->kv_heads * model_head_dim(m));
	double q = (double)(m->heads * model_head_dim(m));
	static const bool row[FT_TARGET_N] = { [FT_O] = true, [FT_DOWN] = true };
	const double in[FT_TARGET_N] = { h, h, h, h, q, h, h, f };
	const double out[FT_TARGET_N] = { q, kv, kv, q + 2 * kv, h, f, f, h };

	*d_in = in[target];
	*d_out = out[target];
	*row_parallel = row[target];
}

double finetune_layer_adapter_params(const struct model *m, const struct finetune *f, int tp)
{
	double t = tp > 1 ? tp : 1, p = 0;
	for (int k = 0; k < FT_TARGET_N; k++) {
		double din, dout;
		bool row;
		if (!finetune_targets(f, (enum ft_target)k))
			continue;
		finetune_target_dims(m, (enum ft_target)k, &din, &dout, &row);
		p += f->rank * (row ? din / t + dout : din + dout / t);
	}
	return p;
}

double finetune_layer_linear_params(const struct model *m)
{
	double h = (double)m->hidden, ff = (double)m->ffn;
	double kv = model_kv_width(m), q = model_q_width(m);
	return h * (q + 2 * kv) + q * h + (m->act == MODEL_ACT_SWIGLU ? 3 : 2) * h * ff;
}

double finetune_base_stored_bytes(const struct finetune *f)
{
	return finetune_frozen(f) && f->base == FT_BASE_NF4 ? FT_NF4_STORED_BYTES : 0;
}

double finetune_model_flops(const struct model *m, const struct finetune *f, double batch,
			    double seq)
{
	double all = model_iteration_flops(m, batch, seq), tok = batch * seq;
	if (!finetune_frozen(f))
		return all;
	double L = (double)m->layers;
	double wgrad = tok * (L * 2 * finetune_layer_linear_params(m) +
			      2 * (double)m->hidden * (double)m->vocab);
	return all - wgrad + 6 * tok * L * finetune_layer_adapter_params(m, f, 1);
}

/* targets: a non-empty list of distinct names; qkv_proj excludes q, k and
 * v_proj (the same weights). */
static void load_targets(struct jobj *jo, struct finetune *f)
{
	json_t *arr, *v;
	char ap[300];
	size_t i;
	if (jobj_array(jo, "targets", &arr, ap, sizeof(ap), 0) != 1)
		return;
	if (json_array_size(arr) == 0) {
		diag_err(jo->d, jo->file, ap, "expected at least one target, got an empty list");
		return;
	}
	json_array_foreach(arr, i, v) {
		char ep[340];
		int k;
		snprintf(ep, sizeof(ep), "%s/%zu", ap, i);
		for (k = 0; k < FT_TARGET_N; k++)
			if (json_is_string(v) && !strcmp(json_string_value(v), ft_target_names[k]))
				break;
		if (k == FT_TARGET_N) {
			diag_err(jo->d, jo->file, ep, "expected one of {q_proj, k_proj, v_proj, qkv_proj, "
				 "o_proj, gate_proj, up_proj, down_proj}, got %s%s%s",
				 json_is_string(v) ? "'" : "", json_is_string(v) ? json_string_value(v)
										 : jload_type_name(v),
				 json_is_string(v) ? "'" : "");
			continue;
		}
		if (f->targets & (1u << k)) {
			diag_err(jo->d, jo->file, ep, "'%s' is listed twice", ft_target_names[k]);
			continue;
		}
		f->targets |= 1u << k;
	}
	unsigned sep = (1u << FT_Q) | (1u << FT_K) | (1u << FT_V);
	if ((f->targets & (1u << FT_QKV)) && (f->targets & sep))
		diag_err(jo->d, jo->file, ap, "qkv_proj adapts the same weights as q_proj, k_proj "
			 "and v_proj: give one or the others");
}

int finetune_load(struct jobj *jo, struct finetune *f)
{
	int before = diag_count(jo->d), e = FT_LORA;
	long r = 0;

	memset(f, 0, sizeof(*f));
	/* a bad or missing method reported, the other keys are read as lora's
	 * without asking for lora's required ones */
	bool known = jobj_enum(jo, "method", ft_method_names, &e, JREQ) == 1;
	f->method = e;
	bool peft = f->method != FT_FULL;
	if (jobj_int(jo, "rank", &r, 1, peft && known ? JREQ : 0) == 1) {
		if (!peft)
			jobj_err(jo, "rank", "only with method lora or qlora");
		else if (r > 65536)
			jobj_err(jo, "rank", "expected at most 65536, got %ld", r);
		else
			f->rank = (int)r;
	}
	f->alpha = (double)f->rank;
	if (jobj_num(jo, "alpha", &f->alpha, JPOS) == 1 && !peft)
		jobj_err(jo, "alpha", "only with method lora or qlora");
	if (jobj_num(jo, "dropout", &f->dropout, JNONNEG) == 1) {
		if (!peft)
			jobj_err(jo, "dropout", "only with method lora or qlora");
		else if (f->dropout >= 1)
			jobj_err(jo, "dropout", "expected a probability in [0, 1), got %g", f->dropout);
	}
	if (!jobj_has(jo, "targets") && peft && known)
		jobj_err(jo, "targets", "missing required key 'targets'");
	else if (jobj_has(jo, "targets") && !peft)
		jobj_err(jo, "targets", "only with method lora or qlora");
	else
		load_targets(jo, f);
	e = f->method == FT_QLORA ? FT_BASE_NF4 : FT_BASE_BF16;
	if (jobj_enum(jo, "base_dtype", ft_base_names, &e, 0) == 1) {
		f->base_set = true;
		if (!peft)
			jobj_err(jo, "base_dtype", "only with method lora or qlora");
		else if (f->method == FT_QLORA && e != FT_BASE_NF4)
			jobj_err(jo, "base_dtype", "qlora stores the base weights in nf4, got '%s'",
				 ft_base_names[e]);
		else if (f->method == FT_LORA && e == FT_BASE_NF4)
			jobj_err(jo, "base_dtype", "nf4 base weights are qlora: give method qlora");
	}
	f->base = e;
	return diag_count(jo->d) == before ? 0 : -1;
}
