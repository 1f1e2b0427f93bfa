/* cost: a cost source's dispatch and provenance (see cost.h); the
 * sources by name are in cost_registry.c. */
#include "cost-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cost_base_init(struct cost *c, const struct cost_impl *impl,
		    const struct gpu_spec *gpu)
{
	memset(c, 0, sizeof(*c));
	c->impl = impl;
	c->gpu = gpu;
	snprintf(c->detail, sizeof(c->detail), "%s of '%s'", impl->name, gpu ? gpu->name : "?");
}

void cost_destroy(struct cost *c)
{
	if (c)
		c->impl->destroy(c);
}

static void note(struct cost *c, const char *name, bool measured)
{
	char base[32];
	snprintf(base, sizeof(base), "%s", name);
	char *dot = strchr(base, '.');
	if (dot)
		*dot = 0;
	for (int i = 0; i < c->nnames; i++)
		if (strcmp(c->names[i], base) == 0) {
			c->measured[i] |= measured;
			c->fallback[i] |= !measured;
			return;
		}
	if (c->nnames == COST_MAX_NAMES)
		return;
	snprintf(c->names[c->nnames], sizeof(c->names[0]), "%s", base);
	c->measured[c->nnames] = measured;
	c->fallback[c->nnames] = !measured;
	c->nnames++;
}

double cost_op_time_ex(struct cost *c, const struct op *op, bool *measured)
{
	*measured = false;
	double t = c->impl->op_time(c, op, measured);
	note(c, op->name, *measured);
	return t;
}

double cost_op_time(struct cost *c, const struct op *op)
{
	bool measured;
	return cost_op_time_ex(c, op, &measured);
}

double cost_list_time(struct cost *c, const struct op_list *l)
{
	double t = 0;
	for (int i = 0; i < l->n; i++)
		t += cost_op_time(c, &l->v[i]);
	return t;
}

int cost_op_launches(const struct cost *c, const struct op *op)
{
	return op_launches(op) + (cost_fa3_bwd_split(c->gpu, op) ? 2 : 0);
}

const char *cost_name(const struct cost *c)
{
	return c->impl->name;
}

const char *cost_describe(const struct cost *c)
{
	return c->detail;
}

static int list(const struct cost *cc, bool want_measured, const char **names)
{
	struct cost *c = (struct cost *)cc;
	char *buf = want_measured ? c->measured_list : c->roofline_list;
	int n = 0;
	buf[0] = 0;
	for (int i = 0; i < c->nnames; i++) {
		bool hit = want_measured ? c->measured[i] : c->fallback[i];
		if (!hit)
			continue;
		if (n++)
			strcat(buf, ",");
		strcat(buf, c->names[i]);
	}
	if (names)
		*names = buf;
	return n;
}

int cost_measured_ops(const struct cost *c, const char **names)
{
	return list(c, true, names);
}

int cost_roofline_ops(const struct cost *c, const char **names)
{
	return list(c, false, names);
}

double cost_interference(const struct cost *c)
{
	return c->interference;
}
