/* cost: how long one kernel takes on one GPU.
 *
 * A cost source prices an op (see workload.h). Sources are interchangeable
 * behind a const vtable and listed in a registry, so the CLI can name them:
 *
 *   roofline   max(compute, bytes / (HBM bw x eff)) + launch: GEMMs in
 *              waves of tiles, attention by backend, memory-bound kernels
 *              by class (cost_roofline.c); needs nothing measured.
 *   profile    times measured by the calib tool, interpolated by shape;
 *              falls back to the roofline outside the measured range.
 *
 * A cost source counts, per op name, how many ops it priced from a
 * measurement and how many from the roofline, for the report. */
#ifndef DDLSIM_COST_H
#define DDLSIM_COST_H

#include <stdbool.h>

#include "diag.h"
#include "gpu.h"
#include "workload.h"

struct cost;

struct cost_impl {
	const char *name;
	const char *description;
	/* Price op; set *measured if the time came from a measurement. */
	double (*op_time)(struct cost *c, const struct op *op, bool *measured);
	void (*destroy)(struct cost *c);
};

struct cost_registry_entry {
	const char *name;
	const char *description;
	bool needs_profile;         /* create() needs a calibration profile path */
	/* A source for gpu (borrowed; must outlive the source). Returns NULL
	 * after reporting into d. */
	struct cost *(*create)(const struct gpu_spec *gpu, const char *profile_path, struct diag *d);
};

/* The registered sources, terminated by a NULL name: the scenario loader,
 * `ddlsim list` and inputs_load() read this table. */
extern const struct cost_registry_entry cost_registry[];
/* The entry named name, or NULL. */
const struct cost_registry_entry *cost_registry_find(const char *name);

/* A roofline source for gpu (borrowed; must outlive the source).
 * Returns NULL only on allocation failure. */
struct cost *cost_roofline_create(const struct gpu_spec *gpu);
/* A profile source reading a calib profile; falls back to the roofline of
 * gpu. Returns NULL after reporting into d. */
struct cost *cost_profile_create(const struct gpu_spec *gpu, const char *profile_path,
				 struct diag *d);
void cost_destroy(struct cost *c);
/* True if two GPU names name the same model ("NVIDIA H100 80GB HBM3" and
 * "H100-SXM5-80GB" do: both have the token "h100"). */
bool cost_profile_gpu_matches(const char *profile_gpu, const char *topology_gpu);

/* Seconds op takes. */
double cost_op_time(struct cost *c, const struct op *op);
/* The same, and whether the time came from a measurement. */
double cost_op_time_ex(struct cost *c, const struct op *op, bool *measured);
/* Seconds the ops of l take, one after another. */
double cost_list_time(struct cost *c, const struct op_list *l);
/* The kernels op launches on c's GPU: op_launches(), plus FlashAttention-3
 * backward's preprocess and postprocess kernels where the GPU prices its
 * main kernel apart (cost_fa3_bwd_split()). */
int cost_op_launches(const struct cost *c, const struct op *op);
/* True where op is a FlashAttention-3 backward that gpu prices as three
 * kernels: gpu's file measured FA3's main kernel, which it says by giving
 * the backward its own length curve (bwd_seq_half); else the backward is
 * priced as one whole kernel (the GPU's best, or an fa3 bwd_max written
 * before the main kernel was priced apart). */
bool cost_fa3_bwd_split(const struct gpu_spec *gpu, const struct op *op);

/* The roofline price of op on gpu inside a training step (sustained
 * clock), for sources that fall back to it. */
double cost_roofline_time(const struct gpu_spec *gpu, const struct op *op);
/* The same for the kernel alone, as a micro-benchmark times it (clock as
 * measured by the benchmarks behind the GPU's efficiencies). */
double cost_roofline_time_isolated(const struct gpu_spec *gpu, const struct op *op);

const char *cost_name(const struct cost *c);
/* One line on what prices the ops, borrowed: for a profile its file, the
 * GPU it was measured on and whether that matches the topology's GPU
 * ("profile 'p.json' measured on 'NVIDIA H100 80GB HBM3' (SYNTHETIC ...);
 * topology GPU 'H100-SXM5-80GB': same model"); for the roofline the GPU. */
const char *cost_describe(const struct cost *c);

/* The compute slowdown measured beside a copy kernel (a profile's
 * "interference": GEMM time with / alone), or 0 when the source has none
 * (the engine takes it as a floor under its SM model, engine.h). */
double cost_interference(const struct cost *c);
/* Provenance summary: number of distinct op names priced by measurement
 * and by roofline, and the names ("qkv,mlp_up,...") of each, borrowed. */
int cost_measured_ops(const struct cost *c, const char **names);
int cost_roofline_ops(const struct cost *c, const char **names);

#endif
