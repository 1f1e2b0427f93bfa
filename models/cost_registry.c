/* cost_registry: the cost sources by name (see cost.h), each with its
 * create function (cost_roofline.c, cost_profile.c); `ddlsim list`
 * prints this table. */
#include "cost-private.h"

#include <string.h>

static struct cost *roofline_create(const struct gpu_spec *gpu, const char *profile_path,
				    struct diag *d)
{
	(void)profile_path;
	(void)d;
	return cost_roofline_create(gpu);
}

const struct cost_registry_entry cost_registry[] = {
	{ "roofline", "max(compute, bytes/(HBM bw*eff)) + launch: GEMMs in waves of tiles, attention by backend, memory-bound kernels by class",
	  false, roofline_create },
	{ "profile", "times measured by ddlsim-calib on a real GPU, interpolated by shape; roofline outside the measured range",
	  true, cost_profile_create },
	{ NULL, NULL, false, NULL },
};

const struct cost_registry_entry *cost_registry_find(const char *name)
{
	for (int i = 0; cost_registry[i].name; i++)
		if (!strcmp(cost_registry[i].name, name))
			return &cost_registry[i];
	return NULL;
}
