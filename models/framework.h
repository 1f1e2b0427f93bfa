/* framework: the defaults a training stack sets, as a preset table.
 *
 * Megatron-Core, NeMo, DeepSpeed, PyTorch FSDP2 and TorchTitan differ in
 * what a run does when its configuration does not say: in which dtype
 * gradients are reduced, which communication overlaps are on, how large a
 * gradient bucket is, whether the optimizer state is sharded (ZeRO stage)
 * and which attention kernel runs. A scenario names its stack with
 * `framework: "megatron-core"` or `"megatron-core@0.9"`; plan_resolve()
 * then fills every such knob the scenario did not give from the preset
 * (explicit keys win). Every value in the table cites the public source it
 * comes from (framework.c), for the version named.
 *
 * One struct per (framework, version), which also says at what granularity
 * the stack issues its ZeRO-3 / FSDP collectives (per parameter tensor
 * with a prefetch window, or per wrapped unit) and what each data-parallel
 * collective costs the host to launch (simulate.c uses both). */
#ifndef DDLSIM_FRAMEWORK_H
#define DDLSIM_FRAMEWORK_H

#include <stdbool.h>

#include "attention.h"
#include "precision.h"

/* How a stack picks the gradient-reduction (main-grad) dtype. */
enum grad_rule {
	GRAD_AS_PARAMS,        /* the dtype the parameters are kept in (fp8 runs: bf16) */
	GRAD_FP32,             /* always fp32 */
	GRAD_FP32_IF_BF16,     /* fp32 when the parameters are bf16, else as the parameters */
};

/* How a stack sizes its gradient buckets. */
enum bucket_rule {
	BUCKET_BYTES,          /* bucket_bytes as given */
	BUCKET_MCORE,          /* max(40e6, 1e6 x dp) parameters of the main-grad dtype */
	BUCKET_ELEMENTS,       /* bucket_elements parameters of the main-grad dtype */
	BUCKET_PER_UNIT,       /* one wrapped unit (a transformer layer): FSDP */
};

/* ZeRO-3 / FSDP parameter all-gather granularity. */
enum gather_rule {
	GATHER_PER_UNIT,       /* one all-gather per wrapped unit (a transformer layer), the
				  next unit prefetched while one computes: FSDP */
	GATHER_PER_TENSOR,     /* one all-gather per parameter tensor (a submodule's weight),
				  prefetched by elements: DeepSpeed ZeRO-3 */
};

struct framework {
	const char *name;          /* "megatron-core", "nemo", ... */
	const char *version;       /* the version the values are cited for */
	const char *description;
	enum grad_rule grad;
	enum bucket_rule bucket;
	double bucket_value;       /* BUCKET_BYTES: bytes; BUCKET_ELEMENTS: parameters */
	bool overlap_grad_reduce;
	bool overlap_param_gather; /* ZeRO-1/2 parameter all-gather overlaps the next forward */
	int zero;                  /* optimizer sharding: 0, 1 (distributed optimizer), 3 (FSDP) */
	enum attention attention;  /* where the GPU and precision allow it (attention.h) */
	const char *source;        /* where the values come from (URLs, files, versions) */
	/* ZeRO-3 granularity (zero = 3 plans) */
	enum gather_rule gather;
	double prefetch_elements;  /* GATHER_PER_TENSOR: parameters gathered ahead of use
				      (DeepSpeed stage3_prefetch_bucket_size) */
	double reuse_elements;     /* GATHER_PER_TENSOR: a parameter reused within this many
				      gathered elements is not released (stage3_max_reuse_distance) */
	double persist_elements;   /* GATHER_PER_TENSOR: tensors below this stay whole
				      (stage3_param_persistence_threshold: norms, biases) */
	double launch_s;           /* host-side cost of one data-parallel collective call
				      (framework bookkeeping + c10d + NCCL enqueue), seconds */
	const char *launch_source; /* the published profile launch_s is read from */
	const char *stack;         /* the kernels it runs (stack.h stack_table name) */
	/* What its data-parallel wrapper does to each gradient bucket on the
	 * compute stream before reducing it: the NaN check's L2 norm (reads
	 * the bucket) and the 1/dp scaling when the collective does not
	 * average (reads and writes it). */
	bool bucket_nan_check;
	bool bucket_scale;
	/* GATHER_PER_TENSOR under DeepSpeed 0.4's coordinator (stack
	 * deepspeed-zero3-2021): no prefetch while this many gathered
	 * elements are available (stage3_max_live_parameters); 0: no limit */
	double live_elements;
};

/* The presets, newest version of each framework first, NULL name last. */
extern const struct framework framework_table[];

/* Look up "name" or "name@version"; the bare name takes the first (newest)
 * entry of that name. NULL when unknown; *known_name tells whether the
 * name exists (an unknown version of a known framework). */
const struct framework *framework_find(const char *spec, bool *known_name);

/* Index into framework_table, or -1 for NULL. */
int framework_index(const struct framework *f);

/* The gradient-reduction dtype of f for parameters kept in `param`. */
enum dtype framework_grad_dtype(const struct framework *f, enum dtype param);

/* Gradient bucket of f in bytes for a DP group of dp ranks reducing
 * grad_elem_bytes per parameter; 0 means one unit (a layer) per bucket. */
double framework_bucket_bytes(const struct framework *f, int dp, double grad_elem_bytes);

/* "name@version" of f into buf (n bytes); returns buf. */
const char *framework_label(const struct framework *f, char *buf, unsigned long n);

#endif
