/* op: the op list (see op.h). */
#include "op.h"

#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

void op_list_init(struct op_list *l)
{
	memset(l, 0, sizeof(*l));
}

void op_list_finish(struct op_list *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

void op_list_push(struct op_list *l, const struct op *op)
{
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 16;
		l->v = xreallocarray(l->v, (size_t)l->cap, sizeof(*l->v));
	}
	l->v[l->n++] = *op;
}

int op_launches(const struct op *op)
{
	return op->kernels < 0 ? 0 : op->kernels > 1 ? op->kernels : 1;
}

double op_list_flops(const struct op_list *l)
{
	double f = 0;
	for (int i = 0; i < l->n; i++)
		f += l->v[i].flops;
	return f;
}
