/* coll: the collectives' API (see coll.h): operation names, an
 * algorithm named "name[:PROTO]" resolved through the registry
 * (coll_registry.c) and planned by its entry's build (a forced
 * algorithm with NCCL's fallbacks, coll_force.c; "auto" through NCCL's
 * tuning model, coll_tune.c), and the busiest member of an unequal plan.
 * A plan is built by coll_build.c. */
#include "coll.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coll-private.h"
#include "nccl_model.h"
#include "xalloc.h"

static const char *const op_names[COLL_NOPS] = {
	"allreduce", "reduce_scatter", "allgather", "broadcast", "reduce", "alltoall", "sendrecv",
	"gather", "scatter", "hypercube", "alltoallv"
};

const char *coll_op_name(enum coll_op op)
{
	return op < COLL_NOPS ? op_names[op] : "?";
}

bool coll_op_p2p(enum coll_op op)
{
	return op == COLL_ALLTOALL || op == COLL_SENDRECV || op >= COLL_GATHER;
}

int coll_op_parse(const char *name)
{
	char b[32];
	size_t w = 0;
	for (const char *s = name; *s && w + 1 < sizeof(b); s++)
		if (*s != '_' && *s != '-')
			b[w++] = *s;
	b[w] = 0;
	for (int i = 0; i < COLL_NOPS; i++) {
		char c[32];
		size_t k = 0;
		for (const char *s = op_names[i]; *s; s++)
			if (*s != '_')
				c[k++] = *s;
		c[k] = 0;
		if (!strcasecmp(b, c))
			return i;
	}
	return -1;
}

/* Split "name:PROTO"; returns the algorithm or NULL. */
static const struct coll_algo *parse_algo(const char *name, enum coll_proto *proto)
{
	char base[64];
	const char *colon = name ? strchr(name, ':') : NULL;

	*proto = PROTO_AUTO;
	if (!name)
		name = "auto";
	snprintf(base, sizeof(base), "%.*s", colon ? (int)(colon - name) : (int)strlen(name), name);
	if (colon) {
		int k;
		for (k = 0; k < PROTO_N; k++)
			if (!strcasecmp(colon + 1, nccl_proto_name(k)))
				break;
		/* only NCCL's algorithms take a protocol */
		if (k == PROTO_N || (strcmp(base, "ring") && strcmp(base, "tree") && strcmp(base, "nvls")))
			return NULL;
		*proto = k;
	}
	return coll_algo_by_name(base);
}

const struct coll_algo *coll_algo_find(const char *name)
{
	enum coll_proto p;
	return parse_algo(name, &p);
}

struct coll_plan *coll_plan_create(const struct topology *t, const char *algo,
				   enum coll_op op, const int *ranks, int n,
				   double bytes)
{
	enum coll_proto proto;
	const struct coll_algo *a = parse_algo(algo, &proto);
	if (!a || n < 1 || bytes < 0 || op < 0 || op >= COLL_NOPS)
		return NULL;
	return a->build(t, a, proto, op, ranks, n, bytes);
}

struct coll_plan *coll_plan_create_alone(const struct topology *t, const char *algo,
					 enum coll_op op, const int *ranks, int n,
					 double bytes)
{
	struct coll_plan *p = coll_plan_create(t, algo, op, ranks, n, bytes);
	if (p)
		coll_plan_classes(t, p);
	return p;
}

struct member_bytes {
	int who, peer;
	double bytes;
};

static int cmp_member(const void *a, const void *b)
{
	const struct member_bytes *x = a, *y = b;
	if (x->who != y->who)
		return (x->who > y->who) - (x->who < y->who);
	return (x->peer > y->peer) - (x->peer < y->peer);
}

struct member_sums {
	double lo, hi;
	int members;
};

/* Sum m[0..n) per member (sorted here by member, then peer: a plan's
 * endpoints are unique, so the order is fixed): the least and the largest
 * sum and how many members; *top and *who_top become the first sum above
 * *top and its member. */
static struct member_sums sum_members(struct member_bytes *m, int n, double *top, int *who_top)
{
	struct member_sums s = { INFINITY, 0, 0 };
	qsort(m, (size_t)n, sizeof(*m), cmp_member);
	for (int i = 0; i < n;) {
		double sum = 0;
		int j = i;
		for (; j < n && m[j].who == m[i].who; j++)
			sum += m[j].bytes;
		s.lo = fmin(s.lo, sum);
		s.hi = fmax(s.hi, sum);
		s.members++;
		if (sum > *top) {
			*top = sum;
			*who_top = m[i].who;
		}
		i = j;
	}
	return s;
}

int coll_plan_busiest(const struct coll_plan *p)
{
	if (p->nflows == 0)
		return -1;
	struct member_bytes *m = xreallocarray(NULL, (size_t)p->nflows, sizeof(*m));
	double top = 0;
	int who = -1;
	for (int i = 0; i < p->nflows; i++)
		m[i] = (struct member_bytes){ p->flows[i].src, p->flows[i].dst, p->flows[i].bytes };
	struct member_sums out = sum_members(m, p->nflows, &top, &who);
	for (int i = 0; i < p->nflows; i++)
		m[i] = (struct member_bytes){ p->flows[i].dst, p->flows[i].src, p->flows[i].bytes };
	struct member_sums in = sum_members(m, p->nflows, &top, &who);
	free(m);
	bool balanced = out.members == in.members && out.hi <= out.lo * (1 + 1e-9) &&
			in.hi <= in.lo * (1 + 1e-9);
	return balanced ? -1 : who;
}

