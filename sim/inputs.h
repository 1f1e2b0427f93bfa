/* inputs: the immutable half of a simulation — model, topology and the
 * compute cost source (with its calibration profile parsed once).
 *
 * Loaded once per command and shared, read-only, by every plan evaluated
 * against it: a sweep's forked children inherit it, a plan search reads
 * it in-process. The plan (plan.h) is the other half. */
#ifndef DDLSIM_INPUTS_H
#define DDLSIM_INPUTS_H

#include "cost.h"
#include "diag.h"
#include "model.h"
#include "topology.h"

struct inputs;

/* Load the model and topology files and create the cost source named
 * cost_source (cost.h registry: "roofline" of the topology's GPU, or
 * "profile", which needs profile_path, a calibration profile checked
 * against that GPU). Reports every problem into d and returns NULL, or a
 * new inputs (inputs_destroy()). */
struct inputs *inputs_load(const char *model_path, const char *topo_path, const char *cost_source,
			   const char *profile_path, struct diag *d);
/* As inputs_load(), using only the first gpus_per_node_used GPUs of each
 * node (0: all; topology_use_gpus(); a bad count is reported as
 * "file: /gpus_per_node_used: ..."). */
struct inputs *inputs_load_gpus(const char *model_path, const char *topo_path, const char *cost_source,
				const char *profile_path, int gpus_per_node_used, const char *file,
				struct diag *d);
/* A variant of base whose nodes have GPU gpu (a node group of a mixed
 * cluster, plan.h): the same model and topology links, the topology's
 * gpu replaced by *gpu, priced by the roofline of that GPU (a calibration
 * profile measures one GPU only). base must outlive it. Returns a new
 * inputs (inputs_destroy(); it frees only what the variant owns), or NULL
 * on allocation failure. */
struct inputs *inputs_with_gpu(const struct inputs *base, const struct gpu_spec *gpu);
void inputs_destroy(struct inputs *in);

/* Borrowed; valid as long as in. */
const struct model *inputs_model(const struct inputs *in);
const struct topology *inputs_topology(const struct inputs *in);
const char *inputs_model_path(const struct inputs *in);
const char *inputs_topology_path(const struct inputs *in);
const char *inputs_profile_path(const struct inputs *in);   /* NULL: roofline */

/* The cost source. It counts which ops it priced from a measurement for the
 * report, hence not const; nothing else about it changes. */
struct cost *inputs_cost(const struct inputs *in);

#endif
