/* cost-private: the base struct every cost source embeds (models/ only). */
#ifndef DDLSIM_COST_PRIVATE_H
#define DDLSIM_COST_PRIVATE_H

#include "cost.h"

#define COST_MAX_NAMES 64

struct cost {
	const struct cost_impl *impl;
	const struct gpu_spec *gpu;
	/* provenance: op names seen, and whether each was measured */
	char names[COST_MAX_NAMES][32];
	unsigned char measured[COST_MAX_NAMES];
	unsigned char fallback[COST_MAX_NAMES];
	int nnames;
	char measured_list[COST_MAX_NAMES * 33];
	char roofline_list[COST_MAX_NAMES * 33];
	char detail[1536];     /* what priced the ops, for the report */
	double interference;   /* measured compute slowdown beside communication, 0: none */
};

void cost_base_init(struct cost *c, const struct cost_impl *impl,
		    const struct gpu_spec *gpu);

#endif
