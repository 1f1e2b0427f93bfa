/* inputs: model, topology and cost source loaded once (see inputs.h). */
#include "inputs.h"

#include "xalloc.h"

struct inputs {
	char *model_path, *topo_path, *profile_path;
	struct model *model;
	struct topology *topo;
	struct cost *cost;
};

struct inputs *inputs_load(const char *model_path, const char *topo_path,
			   const char *profile_path, struct diag *d)
{
	struct inputs *in = xcalloc(1, sizeof(*in));
	int before = diag_count(d);

	in->model_path = xstrdup(model_path);
	in->topo_path = xstrdup(topo_path);
	in->profile_path = profile_path ? xstrdup(profile_path) : NULL;
	in->model = model_load(model_path, d);
	in->topo = topology_load(topo_path, d);
	if (!in->model || !in->topo)
		goto err;
	in->cost = profile_path ? cost_profile_create(profile_path, &in->topo->gpu, d)
				: cost_roofline_create(&in->topo->gpu);
	if (!in->cost || diag_count(d) != before)
		goto err;
	return in;
err:
	inputs_destroy(in);
	return NULL;
}

void inputs_destroy(struct inputs *in)
{
	if (!in)
		return;
	cost_destroy(in->cost);
	topology_destroy(in->topo);
	model_destroy(in->model);
	free(in->model_path);
	free(in->topo_path);
	free(in->profile_path);
	free(in);
}

const struct model *inputs_model(const struct inputs *in) { return in->model; }
const struct topology *inputs_topology(const struct inputs *in) { return in->topo; }
const char *inputs_model_path(const struct inputs *in) { return in->model_path; }
const char *inputs_topology_path(const struct inputs *in) { return in->topo_path; }
const char *inputs_profile_path(const struct inputs *in) { return in->profile_path; }
struct cost *inputs_cost(const struct inputs *in) { return in->cost; }
