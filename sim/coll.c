/* coll: plan construction shared by all algorithms (see coll.h). */
#include "coll.h"

#include <stdlib.h>
#include <string.h>

#include "coll-private.h"

const struct coll_algo coll_algos[] = {
	{ "ring", "NCCL-style ring, one channel per NIC across nodes, one flow per ring edge", coll_ring_plan },
	{ NULL, NULL, NULL },
};

const char *coll_op_name(enum coll_op op)
{
	static const char *const n[] = { "allreduce", "reduce_scatter", "allgather",
					 "broadcast", "reduce", "alltoall" };
	return op < COLL_NOPS ? n[op] : "?";
}

const struct coll_algo *coll_algo_find(const char *name)
{
	if (!name || strcmp(name, "auto") == 0)
		return &coll_algos[0];
	for (int i = 0; coll_algos[i].name; i++)
		if (strcmp(coll_algos[i].name, name) == 0)
			return &coll_algos[i];
	return NULL;
}

struct coll_plan *coll_plan_create(const struct topology *t, const char *algo,
				   enum coll_op op, const int *ranks, int n,
				   double bytes)
{
	const struct coll_algo *a = coll_algo_find(algo);
	if (!a || n < 1 || bytes < 0)
		return NULL;
	struct coll_plan *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->op = op;
	p->algo = a->name;
	p->bytes = bytes;
	p->nranks = n;
	if (n > 1 && a->plan(t, op, ranks, n, bytes, p)) {
		coll_plan_destroy(p);
		return NULL;
	}
	return p;
}

void coll_plan_destroy(struct coll_plan *p)
{
	if (!p)
		return;
	free(p->flows);
	free(p);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

int *coll_sorted_ranks(const int *ranks, int n)
{
	int *r = malloc((size_t)n * sizeof(*r));
	if (!r)
		return NULL;
	memcpy(r, ranks, (size_t)n * sizeof(*r));
	qsort(r, (size_t)n, sizeof(*r), cmp_int);
	return r;
}

int coll_add_flow(struct coll_plan *p, int *cap, int src, int dst, double bytes,
		  double latency_s)
{
	if (p->nflows == *cap) {
		int nc = *cap ? 2 * *cap : 16;
		struct coll_flow *f = realloc(p->flows, (size_t)nc * sizeof(*f));
		if (!f)
			return -1;
		p->flows = f;
		*cap = nc;
	}
	p->flows[p->nflows++] = (struct coll_flow){ src, dst, bytes, latency_s };
	return 0;
}
