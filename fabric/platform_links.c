/* platform_links: what kind of link a platform link's name is (the names
 * platform.c gives; see platform.h), for the reports' per-link traffic. */
#include "platform.h"

#include <stdbool.h>
#include <string.h>

static bool has_prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

const char *platform_link_class(const struct topology *t, const char *name)
{
	static const struct { const char *prefix, *cls; } rule[] = {
		{ "nv", "nvlink" }, { "pu", "pcie_uplink" }, { "xs", "cross_socket" },
		{ "nic", "nic" }, { "psnic", "nic" }, { "fabric", "switch" }, { "grp", "switch" },
		{ "sw", "leaf_switch" }, { "lu", "leaf_uplink" }, { "podup", "spine_uplink" },
	};
	if (has_prefix(name, "gl"))
		return t->intra == INTRA_NVSWITCH ? "nvswitch" : "pcie";
	for (size_t i = 0; i < sizeof(rule) / sizeof(rule[0]); i++)
		if (has_prefix(name, rule[i].prefix))
			return rule[i].cls;
	return "other";
}
