/* inputs: model, topology and cost source loaded once (see inputs.h). */
#include "inputs.h"

#include "xalloc.h"

struct inputs {
	char *model_path, *topo_path, *profile_path, *cost_source;
	struct model *model;
	struct topology *topo;
	struct cost *cost;
	const struct inputs *base;      /* a variant (inputs_with_gpu()): model and topology arrays borrowed */
};

struct inputs *inputs_load(const char *model_path, const char *topo_path, const char *cost_source,
			   const char *profile_path, struct diag *d)
{
	return inputs_load_gpus(model_path, topo_path, cost_source, profile_path, 0, NULL, d);
}

struct inputs *inputs_load_gpus(const char *model_path, const char *topo_path, const char *cost_source,
				const char *profile_path, int used, const char *file, struct diag *d)
{
	struct inputs *in = xcalloc(1, sizeof(*in));
	int before = diag_count(d);

	in->model_path = xstrdup(model_path);
	in->topo_path = xstrdup(topo_path);
	in->profile_path = profile_path ? xstrdup(profile_path) : NULL;
	in->cost_source = xstrdup(cost_source);
	in->model = model_load(model_path, d);
	in->topo = topology_load(topo_path, d);
	if (!in->model || !in->topo)
		goto err;
	if (used && topology_use_gpus(in->topo, used, file, "/gpus_per_node_used", d))
		goto err;
	const struct cost_registry_entry *src = cost_registry_find(cost_source);
	if (!src) {
		diag_errf(d, "unknown compute cost source '%s' (see 'ddlsim list')", cost_source);
		goto err;
	}
	if (src->needs_profile && !profile_path) {
		diag_errf(d, "compute cost source '%s' needs a calibration profile", cost_source);
		goto err;
	}
	in->cost = src->create(&in->topo->gpu, src->needs_profile ? profile_path : NULL, d);
	if (!in->cost || diag_count(d) != before)
		goto err;
	return in;
err:
	inputs_destroy(in);
	return NULL;
}

struct inputs *inputs_with_gpu(const struct inputs *base, const struct gpu_spec *gpu)
{
	struct inputs *in = xcalloc(1, sizeof(*in));
	in->base = base;
	in->model_path = xstrdup(base->model_path);
	in->topo_path = xstrdup(base->topo_path);
	in->cost_source = xstrdup("roofline");
	in->model = base->model;
	in->topo = xmalloc(sizeof(*in->topo));
	*in->topo = *base->topo;        /* the arrays stay the base's */
	in->topo->gpu = *gpu;
	in->cost = cost_roofline_create(&in->topo->gpu);
	if (!in->cost) {
		inputs_destroy(in);
		return NULL;
	}
	return in;
}

void inputs_destroy(struct inputs *in)
{
	if (!in)
		return;
	if (in->base) {
		cost_destroy(in->cost);
		free(in->topo);
		free(in->model_path);
		free(in->topo_path);
		free(in->cost_source);
		free(in);
		return;
	}
	cost_destroy(in->cost);
	topology_destroy(in->topo);
	model_destroy(in->model);
	free(in->model_path);
	free(in->topo_path);
	free(in->profile_path);
	free(in->cost_source);
	free(in);
}

const struct model *inputs_model(const struct inputs *in) { return in->model; }
const struct topology *inputs_topology(const struct inputs *in) { return in->topo; }
const char *inputs_model_path(const struct inputs *in) { return in->model_path; }
const char *inputs_topology_path(const struct inputs *in) { return in->topo_path; }
const char *inputs_profile_path(const struct inputs *in) { return in->profile_path; }
struct cost *inputs_cost(const struct inputs *in) { return in->cost; }
