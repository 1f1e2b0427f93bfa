/* cplan: the engine's cache of collective plans (see cplan.h). */
#include "cplan.h"

#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

static unsigned long hash_key(int leader, int kind, int op, double bytes)
{
	unsigned long h = (unsigned long)leader * 2654435761UL;
	h ^= (unsigned long)kind * 40503UL + (unsigned long)op * 97UL;
	unsigned long long b;
	memcpy(&b, &bytes, sizeof(b));
	h ^= (unsigned long)(b ^ (b >> 29)) * 0x9E3779B97F4A7C15ULL;
	return h;
}

static int cmp_by_dst(const void *a, const void *b, void *arg)
{
	const struct coll_plan *p = arg;
	const struct coll_flow *x = &p->flows[*(const int *)a], *y = &p->flows[*(const int *)b];
	if (x->dst != y->dst)
		return (x->dst > y->dst) - (x->dst < y->dst);
	if (x->src != y->src)
		return (x->src > y->src) - (x->src < y->src);
	return (x > y) - (x < y); /* plan order: a stable sort */
}

int *cplan_flows_by_dst(const struct coll_plan *p)
{
	int *bd = xreallocarray(NULL, (size_t)p->nflows + 1, sizeof(*bd));
	for (int i = 0; i < p->nflows; i++)
		bd[i] = i;
	qsort_r(bd, (size_t)p->nflows, sizeof(int), cmp_by_dst, (void *)p);
	return bd;
}

struct cplan *cplan_get(struct cplan_cache *C, int kind, const int *members, int n, int op,
			double bytes)
{
	int leader = members[0];
	if (C->n * 2 >= C->cap) {
		size_t ncap = C->cap ? 2 * C->cap : 1024;
		struct cplan *np = xcalloc(ncap, sizeof(*np));
		for (size_t i = 0; i < C->cap; i++) {
			struct cplan *c = &C->plans[i];
			if (!c->p)
				continue;
			size_t j = hash_key(c->leader, c->kind, c->op, c->bytes) % ncap;
			while (np[j].p)
				j = (j + 1) % ncap;
			np[j] = *c;
		}
		free(C->plans);
		C->plans = np;
		C->cap = ncap;
	}
	size_t j = hash_key(leader, kind, op, bytes) % C->cap;
	while (C->plans[j].p) {
		struct cplan *c = &C->plans[j];
		if (c->leader == leader && c->kind == kind && c->op == op && c->bytes == bytes)
			return c;
		j = (j + 1) % C->cap;
	}
	struct coll_plan *p = coll_plan_create(C->topo, C->algo, op, members, n, bytes);
	if (!p)
		return NULL;
	int *bd = cplan_flows_by_dst(p);
	C->plans[j] = (struct cplan){ leader, kind, op, bytes, p, bd, NULL, -1, -1, false, -1, 0, NULL, 0, NULL, -1, -2, -1, false, NULL };
	C->n++;
	return &C->plans[j];
}

int cplan_lower(const struct coll_plan *p, const int *idx, int r, bool by_dst)
{
	int lo = 0, hi = p->nflows;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		const struct coll_flow *f = &p->flows[idx ? idx[mid] : mid];
		int key = by_dst ? f->dst : f->src;
		if (key < r)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void cplan_cache_finish(struct cplan_cache *C)
{
	for (size_t i = 0; i < C->cap; i++)
		if (C->plans[i].p) {
			coll_plan_destroy(C->plans[i].p);
			free(C->plans[i].by_dst);
			free(C->plans[i].cflows);
			free(C->plans[i].uflows);
			free(C->plans[i].mir);
			if (C->plans[i].rep) {
				free(C->plans[i].rep->ids);
				free(C->plans[i].rep);
			}
		}
	free(C->plans);
	C->plans = NULL;
	C->cap = C->n = 0;
}
