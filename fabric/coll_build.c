/* coll_build: a plan built from an algorithm's flows, shared by all
 * algorithms (see coll.h and coll-private.h).
 *
 * An algorithm only lists its flows and its step count; coll_plan_build()
 * then (1) reroutes cross-rail flows over NVLink on rail fabrics with PXN,
 * (2) sorts flows by (src, dst) and merges equal endpoints (the engine
 * binary-searches them), (3) sums every flow's bytes on the links of its
 * route to get the fabric's time (the most loaded link's bytes /
 * bandwidth), (4) for NCCL's algorithms, takes NCCL's latency and
 * bandwidth for the (algorithm, protocol) from nccl_model.c: when NCCL's
 * bandwidth term N / bw exceeds the fabric's, every flow's bytes grow by
 * their ratio (what NCCL loses to protocol and channel limits shows as
 * extra wire time, still shared on the links), and the latency is NCCL's.
 * The closed form is then latency + max(NCCL's, the fabric's) transfer.
 * The helpers the algorithms share (sorted ranks, node runs, adding a
 * flow) live here too, so the algorithms and the builder sit below the
 * entries' builds (coll_force.c, coll_tune.c), the registry
 * (coll_registry.c) and the API (coll.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coll-private.h"
#include "hash.h"
#include "nccl_model.h"
#include "xalloc.h"

double coll_bus_factor(enum coll_op op, int n)
{
	switch (op) {
	case COLL_ALLREDUCE:
		return 2.0 * (n - 1) / n;
	case COLL_REDUCE_SCATTER:
	case COLL_ALLGATHER:
	case COLL_ALLTOALL:
	case COLL_GATHER:
	case COLL_SCATTER:
	case COLL_HYPERCUBE:
	case COLL_ALLTOALLV:
		return (double)(n - 1) / n;
	default:
		return 1;
	}
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
	int *r = xreallocarray(NULL, (size_t)(n ? n : 1), sizeof(*r));
	memcpy(r, ranks, (size_t)n * sizeof(*r));
	qsort(r, (size_t)n, sizeof(*r), cmp_int);
	return r;
}

int coll_node_runs(const struct topology *t, const int *r, int n, int *start)
{
	int nn = 0;
	for (int i = 0; i < n; i++)
		if (i == 0 || topology_node_of(t, r[i]) != topology_node_of(t, r[i - 1]))
			start[nn++] = i;
	start[nn] = n;
	return nn;
}

/* The channels of a ring or tree: one per NIC the group's GPUs use in
 * every node, at least one; one where the group is in one node or a node has
 * one NIC. r: the ranks sorted, start: the nn node runs' starts. */
int coll_node_channels(const struct topology *t, const int *r, const int *start, int nn)
{
	if (nn <= 1 || t->nics <= 1)
		return 1;
	int C = t->nics;
	for (int k = 0; k < nn; k++) {
		bool seen[TOPO_MAX_NICS] = { false };
		int dn = 0;
		for (int i = start[k]; i < start[k + 1]; i++) {
			int nic = t->gpu_nic[topology_local_of(t, r[i])];
			if (nic >= 0 && !seen[nic]) {
				seen[nic] = true;
				dn++;
			}
		}
		C = dn < C ? dn : C;
	}
	return C < 1 ? 1 : C;
}

int coll_add_flow(struct coll_plan *p, int *cap, int src, int dst, double bytes,
		  double latency_s)
{
	size_t c = (size_t)*cap;
	XGROW(p->flows, c, (size_t)p->nflows + 1);
	*cap = (int)c;
	p->flows[p->nflows++] = (struct coll_flow){ src, dst, bytes, latency_s };
	return 0;
}

static int cmp_flow(const void *a, const void *b)
{
	const struct coll_flow *x = a, *y = b;
	if (x->src != y->src)
		return (x->src > y->src) - (x->src < y->src);
	return (x->dst > y->dst) - (x->dst < y->dst);
}

/* NCCL PXN: a flow between GPUs on different rails first moves over
 * NVLink to the source node's GPU on the destination's rail, if that GPU
 * takes part in the collective (its proxy forwards). */
static int reroute_pxn(const struct topology *t, struct coll_plan *p, const int *ranks, int n)
{
	int G = t->gpus_per_node, cap = p->nflows, nf = p->nflows;
	if (t->fabric != FABRIC_RAIL || !t->rail_pxn || t->nics < 2)
		return 0;
	int *sorted = coll_sorted_ranks(ranks, n);
	if (!sorted)
		return -1;
	for (int i = 0; i < nf; i++) {
		struct coll_flow f = p->flows[i];
		int na = topology_node_of(t, f.src), nb = topology_node_of(t, f.dst);
		int want = t->gpu_nic[topology_local_of(t, f.dst)];
		if (na == nb || t->gpu_nic[topology_local_of(t, f.src)] == want)
			continue;
		int via = -1;
		for (int c = 0; c < G && via < 0; c++)
			if (t->gpu_nic[c] == want &&
			    bsearch(&(int){ na * G + c }, sorted, (size_t)n, sizeof(int), cmp_int))
				via = na * G + c;
		if (via < 0)
			continue;
		p->flows[i].dst = via;
		if (coll_add_flow(p, &cap, via, f.dst, f.bytes, 0)) {
			free(sorted);
			return -1;
		}
	}
	free(sorted);
	return 0;
}

/* Link load table: open addressing on topology_link_key(). */
struct load {
	unsigned long long key;
	double bytes, bw;
	bool used;
};

static double max_link_time(const struct topology *t, const struct coll_plan *p)
{
	size_t cap = 64, used = 0; /* cap: a power of two */
	struct load *tab = xcalloc(cap, sizeof(*tab));
	double worst = 0;
	struct topo_hop h[TOPO_MAX_HOPS];

	for (int i = 0; i < p->nflows; i++) {
		int k = topology_route(t, p->flows[i].src, p->flows[i].dst, h);
		for (int j = 0; j < k; j++) {
			double bw = topology_link_bw(t, &h[j]);
			if (h[j].dir == 0) { /* FATPIPE: never shared */
				if (p->flows[i].bytes / bw > worst)
					worst = p->flows[i].bytes / bw;
				continue;
			}
			if (2 * (used + 1) > cap) {
				size_t nc = cap * 2;
				struct load *nt = xcalloc(nc, sizeof(*nt));
				for (size_t q = 0; q < cap; q++)
					if (tab[q].used) {
						size_t s = hash_slot(tab[q].key, nc);
						while (nt[s].used)
							s = (s + 1) & (nc - 1);
						nt[s] = tab[q];
					}
				free(tab);
				tab = nt;
				cap = nc;
			}
			unsigned long long key = topology_link_key(t, &h[j]);
			size_t s = hash_slot(key, cap);
			while (tab[s].used && tab[s].key != key)
				s = (s + 1) & (cap - 1);
			struct load *l = &tab[s];
			if (!l->used) {
				*l = (struct load){ key, 0, bw, true };
				used++;
			}
			l->bytes += p->flows[i].bytes;
			if (l->bytes / l->bw > worst)
				worst = l->bytes / l->bw;
		}
	}
	free(tab);
	return worst;
}

/* NCCL's prediction for a plan of its algorithm na (nccl_model.h): the latency and
 * total time, us; the protocol chosen when asked for auto. */
struct nccl_pred {
	double lat_us, bw_GBps, us;
};

/* NCCL's latency and bandwidth for algorithm na and *proto (auto: NCCL's choice) into
 * *pr, the model into *m (the caller destroys it); -1 when NCCL does not run op this way. */
static int nccl_predict(const struct topology *t, const int *ranks, int n, enum coll_op op,
			double bytes, int na, enum coll_proto *proto, struct nccl_model **m,
			struct nccl_pred *pr)
{
	if (!(*m = nccl_model_create(t, ranks, n)))
		return -1;
	if (*proto == PROTO_AUTO &&
	    nccl_model_choose(*m, op, bytes, na, &(enum nccl_algo){ 0 }, proto) < 0)
		return -1;
	pr->us = nccl_model_predict(*m, op, na, *proto, bytes, &pr->lat_us, &pr->bw_GBps);
	return pr->us < 0 ? -1 : 0;
}

/* Sorts the flows, drops the empty and self ones and merges those of one pair. */
static void merge_flows(struct coll_plan *p)
{
	qsort(p->flows, (size_t)p->nflows, sizeof(*p->flows), cmp_flow);
	int w = 0;
	for (int i = 0; i < p->nflows; i++) {
		if (p->flows[i].src == p->flows[i].dst || p->flows[i].bytes <= 0)
			continue;
		if (w && p->flows[w - 1].src == p->flows[i].src && p->flows[w - 1].dst == p->flows[i].dst)
			p->flows[w - 1].bytes += p->flows[i].bytes;
		else
			p->flows[w++] = p->flows[i];
	}
	p->nflows = w;
}

/* Each flow's path latency; returns the longest (alpha). */
static double flow_latencies(const struct topology *t, struct coll_plan *p)
{
	double amax = 0;
	for (int i = 0; i < p->nflows; i++) {
		p->flows[i].latency_s = topology_path_latency(t, p->flows[i].src, p->flows[i].dst);
		if (p->flows[i].latency_s > amax)
			amax = p->flows[i].latency_s;
	}
	return amax;
}

/* The plan's closed-form time from its busiest link; under NCCL's model (pr not NULL) the
 * flows scaled up to NCCL's transfer time when it is longer, and NCCL's latency. */
static void plan_times(const struct topology *t, struct coll_plan *p, const struct nccl_pred *pr,
		       int sm_ch)
{
	double amax = flow_latencies(t, p);
	double fabric_s = max_link_time(t, p), xfer_s = fabric_s, lat;
	if (pr) {
		double nccl_xfer_s = (pr->us - pr->lat_us) * 1e-6;
		if (nccl_xfer_s > fabric_s && fabric_s > 0) {
			double scale = nccl_xfer_s / fabric_s;
			for (int i = 0; i < p->nflows; i++)
				p->flows[i].bytes *= scale;
			p->wire_scale = scale;
			xfer_s = nccl_xfer_s;
		}
		lat = pr->lat_us * 1e-6;
		p->nccl_time_s = pr->us * 1e-6;
	} else {
		lat = p->latency_s > 0 ? p->latency_s : p->steps * amax;
	}
	p->sm_channels = sm_ch > 0 ? sm_ch : p->channels;
	p->alpha_s = amax;
	p->latency_s = lat;
	p->extra_latency_s = lat > amax ? lat - amax : 0;
	p->ideal_time_s = fmax(lat, amax) + xfer_s;
}

struct coll_plan *coll_plan_build(const struct topology *t, const char *name, coll_plan_fn plan,
				  enum coll_proto proto, enum coll_op op, const int *ranks,
				  int n, double bytes)
{
	struct nccl_model *m = NULL;
	struct coll_plan *p = xcalloc(1, sizeof(*p));
	p->op = op;
	p->algo = name;
	p->proto = nccl_proto_name(PROTO_SIMPLE);
	p->bytes = bytes;
	p->nranks = n;
	p->channels = 1;
	p->wire_scale = 1;
	p->bus_bytes = coll_bus_factor(op, n) * bytes;
	if (n <= 1)
		return p;

	/* NCCL's latency and bandwidth for this algorithm and protocol */
	int na = nccl_algo_of_plan(name);
	struct nccl_pred pr = { 0, 0, -1 };
	if (na >= 0) {
		if (nccl_predict(t, ranks, n, op, bytes, na, &proto, &m, &pr))
			goto err;
		p->proto = nccl_proto_name(proto);
	}
	int sm_ch = m ? nccl_model_channels(m, na) : 0;
	if (plan(t, op, ranks, n, bytes, p) || reroute_pxn(t, p, ranks, n))
		goto err;
	merge_flows(p);
	plan_times(t, p, na >= 0 ? &pr : NULL, sm_ch);
	nccl_model_destroy(m);
	return p;
err:
	nccl_model_destroy(m);
	coll_plan_destroy(p);
	return NULL;
}
