/* fold_links: the binding links of a path as small ids, for exact
 * folding's union-find and the pair signatures of groups whose own flows
 * stand for theirs (fold_exact.c, fold_own.c both use it). No SimGrid
 * here. */
#include <stdlib.h>
#include <string.h>

#include "fold-private.h"
#include "hash.h"
#include "xalloc.h"

/* Link keys are slotted by util/hash.h's hash_slot: every field of the
 * key (the node is in bits 36 and up) moves the low bits; (k * phi) >> 17
 * never saw the node and every node's NIC i collided (16,384 GPUs: 72 %
 * of the run). */
/* Id of the link of key k (topology_link_key), made if add; -1 if unknown. */
static int link_id(struct fold *F, unsigned long long k, bool add)
{
	if (add && (size_t)(F->nlinks + 1) * 2 > F->lcap) {
		size_t ncap = F->lcap ? 2 * F->lcap : 4096;
		unsigned long long *nk = xcalloc(ncap, sizeof(*nk));
		int *ni = xreallocarray(NULL, ncap, sizeof(*ni));
		for (size_t i = 0; i < F->lcap; i++) {
			if (!F->lkey[i])
				continue;
			size_t j = hash_slot(F->lkey[i], ncap);
			while (nk[j])
				j = (j + 1) & (ncap - 1);
			nk[j] = F->lkey[i];
			ni[j] = F->lid[i];
		}
		free(F->lkey);
		free(F->lid);
		F->lkey = nk;
		F->lid = ni;
		F->lcap = ncap;
		F->uf = xreallocarray(F->uf, ncap, sizeof(*F->uf));
		F->rooted = xreallocarray(F->rooted, ncap, sizeof(*F->rooted));
		F->lown = xreallocarray(F->lown, ncap, sizeof(*F->lown));
		F->lpair = xreallocarray(F->lpair, ncap, sizeof(*F->lpair));
		F->lmark = xreallocarray(F->lmark, ncap, sizeof(*F->lmark));
	}
	if (!F->lcap)
		return -1;
	k++; /* 0 marks a free slot */
	size_t j = hash_slot(k, F->lcap);
	while (F->lkey[j] && F->lkey[j] != k)
		j = (j + 1) % F->lcap;
	if (F->lkey[j])
		return F->lid[j];
	if (!add)
		return -1;
	F->lkey[j] = k;
	F->lid[j] = F->nlinks;
	F->uf[F->nlinks] = F->nlinks;
	F->rooted[F->nlinks] = false;
	F->lown[F->nlinks] = 0;
	F->lpair[F->nlinks] = 0;
	F->lmark[F->nlinks] = 0;
	return F->nlinks++;
}

/* Ids of the binding links of the path a -> b, into ids (room for
 * TOPO_MAX_HOPS), made if add (else unknown links are skipped); returns
 * the count. */
int fold_link_ids(struct fold *F, int a, int b, int *ids, bool add)
{
	const struct topology *t = F->job->topo;
	struct topo_hop h[TOPO_MAX_HOPS];
	int nh = topology_route(t, a, b, h), n = 0;
	for (int i = 0; i < nh; i++) {
		if (h[i].kind == TL_SWITCH || (h[i].kind == TL_LEAF_UP && !F->lu_binds) ||
		    (h[i].kind == TL_POD_UP && !F->pod_binds))
			continue;
		int id = link_id(F, topology_link_key(t, &h[i]), add);
		if (id >= 0)
			ids[n++] = id;
	}
	return n;
}
