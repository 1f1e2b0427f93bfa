/* nccl_model: NCCL's tuning model, from NCCL 2.27.3 (tag v2.27.3-1 of
 * github.com/NVIDIA/nccl): src/graph/tuning.cc (ncclTopoTuneModel,
 * ncclTopoGetAlgoTime), src/graph/search.cc (channel search speeds),
 * src/graph/topo.h (link bandwidths). The tables are cited, not the code.
 *
 * 1. Graphs. NCCL searches, per algorithm, a set of channels (rings,
 *    trees, NVLS heads) and a per-channel bandwidth that its links can
 *    carry. It tries speeds from a fixed list, highest first, and keeps
 *    the graph of most channels x speed. This module stands in for the
 *    search with its closed form on the link totals it would see:
 *
 *      speeds (GB/s, search.cc)  single node        across nodes
 *        sm < 90                 speedArrayIntra    speedArrayInter
 *                                40 30 20 18 15 12 10 9 7 6 5 4 3
 *                                                   48 30 28 24 20 18 15 12 10 9 7 6 5 4 3 ...
 *        sm 90                   60 50 40 30 24 20 15 12 11 6 3
 *                                                   48 45 42 40 30 24 22 20 17.5 15 12 6 3 ...
 *        sm 100                  90 80 70 60 50 40 30 24 20 19 18
 *                                                   47.9 45 42 40 30 24 22 20 17.5 15 12 6 3 ...
 *
 *      GPU NVLink total T (topo.h): links x SM70/SM80_NVLINK_BW 20.0,
 *      SM90_NVLINK_BW 20.6, SM100_NVLINK_BW 40.0 GB/s per link; links =
 *      the topology's per-GPU NVLink bandwidth / the NVLink generation's
 *      25 GB/s per link and direction (NVLink 2-4; 50 for NVLink 5), or
 *      the mesh's lanes. PCIe nodes: T = the topology's PCIe bandwidth
 *      (NCCL reads the link width and generation; the file states them
 *      as GB/s). NIC: Gb/s / 8 (ncclIbGetProperties reports Mb/s, the
 *      topology divides by 8000).
 *
 *      ring, one node:  channels = min(floor(T / s), MAXCHANNELS/2 = 32)
 *                       for each speed s <= T, the s of largest
 *                       channels x s (init.cc: ringGraph->maxChannels);
 *      ring, nodes:     s <= NIC bandwidth, floor(NIC / s) channels per
 *                       NIC the group uses, and channels x s <= T (every
 *                       channel crosses every GPU of the node);
 *      tree:            as the ring with T x ngpus / (ngpus - 1)
 *                       (search.cc: totalBw of non-ring patterns), at
 *                       most the ring's channels (init.cc);
 *      NVLS:            NVSwitch and sm >= 90 only, one node: channels =
 *                       ngpus (search.cc forces min = max = GPU count),
 *                       s the first speed with ngpus x s <= T x ngpus /
 *                       (ngpus - 1).
 *    What is left out: channel duplication (ncclTopoDupChannels doubles
 *    channels and halves their speed: channels x speed, which is all the
 *    model reads, is unchanged); the search's timeouts; raising tree
 *    bwIntra on 2 nodes; cross-NIC rings. NVLS across nodes needs CollNet
 *    (disabled without it, tuning.cc), NVLSTree and PAT (one GPU per
 *    node) are not modelled, nor CollNet.
 *
 * 2. Bandwidth (tuning.cc), busBw = channels x speed, then
 *      ring LL      min(llMaxBw, busBw x 0.5)
 *      ring LL128   min(busBw x 0.92, channels x perChMaxRingLL128Bw)
 *      tree         min(busBw x 0.92, channels x perChMaxTreeBw) (all-reduce)
 *      tree LL      min(that / 3.8, llMaxBw)
 *      tree LL128   min(that x (7/9 one node, 120/128 nodes),
 *                       channels x perChMaxTreeLL128Bw)
 *      NVLS         all-reduce: channels x speed; reduce-scatter and
 *                   all-gather: channels x speed x (ppn - 1) / ppn
 *    and to algorithm bandwidth: ring x nranks / nsteps, NVLS x 5/6,
 *    tree x 1/2 (not for NVLS reduce-scatter / all-gather). Per
 *    generation (rows Volta, Ampere, Hopper, Blackwell; columns 1 node,
 *    2 nodes, more):
 *      llMaxBws             39.0 39.0 20.4 | 87.7 22.5 19.0 | 141 45 35 | 282 90 70
 *        (one node: by GPU; across nodes: by CPU, row 0 Intel, row 1 AMD)
 *      perChMaxRingLL128Bws 20 20 20 | 20 20 20 | 36.7 x3 | 73.4 x3
 *      perChMaxTreeLL128Bws 20 20 20 | 20 20 20 | 36.7 36.7 29 | 73.4 73.4 58
 *      perChMaxTreeBws      26.5 18.5 10 | 24 23.6 17.8 | 38.7 41.4 36 | 77.4 82.8 72
 *
 * 3. Latency (us, tuning.cc):
 *      baseLat        tree 6.8 14.0 8.4   ring 6.6 14.0 8.4   NVLS 0
 *      hwLat NVLink   tree 0.6 1.25 4.0   ring 0.6 1.9  3.4   NVLS 25
 *            PCIe     tree 1.0 1.9  4.0   ring 1.0 2.5  5.7
 *            network  tree 5.0 8.5  14    ring 2.7 4.0  14    NVLS 18
 *      ring  base + (nsteps - interSteps) x max(intra, netOverhead) +
 *            interSteps x inter; nsteps 2(P-1) all-reduce, P-1
 *            reduce-scatter / all-gather, P broadcast / reduce (those:
 *            base + one hwLat, as NCCL for rings of the same channels);
 *            interSteps 2(nodes-1) or nodes-1; netOverhead 1 us (x86
 *            Intel; AMD would be 2), x3 for Simple, across nodes only;
 *      tree  base + 2 ((P/nodes - 1) intra + log2(nodes) inter);
 *      NVLS  intra (+ inter across nodes).
 *    inter = the network hwLat (the tree's when one GPU per node) + the
 *    network's own latency, twice for Simple; InfiniBand reports 0
 *    (net_ib.cc). ncclTopoGetAlgoTime then scales tree all-reduce
 *    bandwidth by treeCorrectionFactor[proto][log2(bytes / 64)] below
 *    256 MiB and multiplies ring Simple all-reduce latency across nodes
 *    by 1.4 (1.9 before sm 80) once bytes / (channels x P) >= 64.
 *
 * 4. Which pairs run (tuning.cc): broadcast and reduce ring only;
 *    reduce-scatter and all-gather ring or NVLS; NVLS Simple only; LL128
 *    only with NVLink inside the node (sm >= 70).
 *
 * Assumptions where a topology file does not say what NCCL detects: the
 * GPU generation comes from the GPU name (V100, A100, L40/Ada, H100,
 * H200, B200/GB200; others as Ampere); the CPU is x86 Intel (AMD
 * changes netOverhead and the multi-node LL cap). Tests:
 * tests/test-nccl-model.c computes these values by hand from the tables. */
#include "nccl_model.h"
#include "xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "topology.h"

enum { HW_NVLINK, HW_PCI, HW_NET };
enum { ARCH_VOLTA, ARCH_AMPERE, ARCH_HOPPER, ARCH_BLACKWELL };

/* tuning.cc baseLat[algo][proto], algo order tree, ring, NVLS */
static const double base_lat_us[NCCL_ALGO_N][PROTO_N] = {
	{ 6.8, 14.0, 8.4 }, { 6.6, 14.0, 8.4 }, { 0, 0, 0 },
};
/* tuning.cc hwLat[hw][algo][proto] */
static const double hw_lat_us[3][NCCL_ALGO_N][PROTO_N] = {
	{ { .6, 1.25, 4.0 }, { .6, 1.9, 3.4 }, { 0, 0, 25 } },
	{ { 1.0, 1.9, 4.0 }, { 1.0, 2.5, 5.7 }, { 0, 0, 0 } },
	{ { 5.0, 8.5, 14 }, { 2.7, 4.0, 14.0 }, { 0, 0, 18 } },
};
/* tuning.cc, rows Volta, Ampere, Hopper, Blackwell; columns 1, 2, >2 nodes */
static const double ll_max_bw[4][3] = {
	{ 39.0, 39.0, 20.4 }, { 87.7, 22.5, 19.0 }, { 141.0, 45.0, 35.0 }, { 2 * 141.0, 2 * 45.0, 2 * 35.0 },
};
static const double per_ch_ring_ll128[4][3] = {
	{ 20.0, 20.0, 20.0 }, { 20.0, 20.0, 20.0 }, { 36.7, 36.7, 36.7 }, { 2 * 36.7, 2 * 36.7, 2 * 36.7 },
};
static const double per_ch_tree_ll128[4][3] = {
	{ 20.0, 20.0, 20.0 }, { 20.0, 20.0, 20.0 }, { 36.7, 36.7, 29.0 }, { 2 * 36.7, 2 * 36.7, 2 * 29.0 },
};
static const double per_ch_tree[4][3] = {
	{ 26.5, 18.5, 10.0 }, { 24.0, 23.6, 17.8 }, { 38.7, 41.4, 36.0 }, { 2 * 38.7, 2 * 41.4, 2 * 36.0 },
};
/* tuning.cc treeCorrectionFactor[proto][log2(bytes / 64)], 64 B .. 256 MiB */
static const double tree_correction[PROTO_N][23] = {
	{ 1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0 },
	{ 1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0 },
	{ .9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9 },
};
/* search.cc speed lists (GB/s), highest first */
static const double speed_intra[] = { 40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0, 6.0, 5.0, 4.0, 3.0, 0 };
static const double speed_inter[] = { 48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0, 12.0, 10.0, 9.0, 7.0,
				      6.0, 5.0, 4.0, 3.0, 2.4, 1.2, 0.24, 0.12, 0 };
static const double sm90_intra[] = { 60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0, 0 };
static const double sm90_inter[] = { 48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0,
				     6.0, 3.0, 2.4, 1.2, 0.24, 0.12, 0 };
static const double sm100_intra[] = { 90.0, 80.0, 70.0, 60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0, 0 };
static const double sm100_inter[] = { 47.9, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0,
				      6.0, 3.0, 2.4, 1.2, 0.24, 0.12, 0 };
#define RING_MAX_CHANNELS 32      /* init.cc: MAXCHANNELS (64) / 2 */
#define NET_OVERHEAD_US 1.0       /* tuning.cc getNetOverhead: x86 Intel */

struct nccl_model {
	int compcap, arch;
	int nranks, nnodes, ppn;
	bool nvlink, nvswitch;
	int channels[NCCL_ALGO_N];
	double speed_GBps[NCCL_ALGO_N];
};

const char *nccl_algo_name(enum nccl_algo a)
{
	static const char *const n[] = { "Tree", "Ring", "NVLS" };
	return a >= 0 && a < NCCL_ALGO_N ? n[a] : "?";
}

const char *nccl_algo_plan_name(enum nccl_algo a)
{
	static const char *const n[] = { "tree", "ring", "nvls" };
	return a >= 0 && a < NCCL_ALGO_N ? n[a] : "?";
}

int nccl_algo_of_plan(const char *name)
{
	for (int i = 0; i < NCCL_ALGO_N; i++)
		if (!strcmp(name, nccl_algo_plan_name(i)))
			return i;
	return -1;
}

const char *nccl_proto_name(enum coll_proto p)
{
	static const char *const n[] = { "LL", "LL128", "Simple" };
	return p >= 0 && p < PROTO_N ? n[p] : "?";
}

/* Compute capability x 10 from the GPU name. */
static int compcap_of(const char *name)
{
	static const struct { const char *key; int cc; } map[] = {
		{ "B200", 100 }, { "B100", 100 }, { "GB200", 100 }, { "B300", 100 },
		{ "H100", 90 }, { "H200", 90 }, { "H800", 90 }, { "H20", 90 },
		{ "L40", 89 }, { "L4", 89 }, { "A100", 80 }, { "A800", 80 }, { "A10", 86 },
		{ "V100", 70 },
	};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strstr(name, map[i].key))
			return map[i].cc;
	return 80;
}

/* Best channels x speed: the s of speeds (0-terminated) with s <= max_s,
 * channels = min(floor(per_limit / s) x units, floor(total / s), cap);
 * ties keep the faster speed. As search.cc, once a graph is found at s0,
 * slower speeds are tried only while they exceed 0.49 x s0. */
static void search(const double *speeds, double max_s, double total, double per_limit, int units,
		   int cap, int *ch, double *s_out)
{
	double s0 = 0;
	*ch = 0;
	*s_out = 0;
	for (int i = 0; speeds[i] > 0; i++) {
		double s = speeds[i];
		if (s > max_s * (1 + 1e-9))
			continue;
		if (s0 > 0 && s / s0 <= 0.49)
			break;
		long c = (long)floor(total / s + 1e-9);
		if (units > 0) {
			long per = (long)floor(per_limit / s + 1e-9) * units;
			c = per < c ? per : c;
		}
		c = c > cap ? cap : c;
		if (c >= 1 && s0 == 0)
			s0 = s;
		if (c >= 1 && c * s > *ch * *s_out + 1e-9) {
			*ch = (int)c;
			*s_out = s;
		}
	}
}

/* The GPU's NVLink total as NCCL counts it (GB/s), 0 without NVLink. */
static double nvlink_total_GBps(const struct topology *t, int cc, int local)
{
	double per_link = cc >= 100 ? 40.0 : cc >= 90 ? 20.6 : 20.0; /* topo.h SMxx_NVLINK_BW */
	double spec = cc >= 100 ? 50e9 : 25e9; /* NVLink 5: 50 GB/s per link and direction, 2-4: 25 */
	if (t->intra == INTRA_NVSWITCH)
		return round(t->intra_bw_Bps / spec) * per_link;
	if (t->intra == INTRA_NVLINK_MESH) {
		double links = 0;
		for (int j = 0; j < t->gpus_per_node; j++)
			links += t->nvl_bw_Bps[local * t->gpus_per_node + j] / spec;
		return round(links) * per_link;
	}
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* A sorted copy of ranks[0..n) (caller frees). */
static int *sorted_copy(const int *ranks, int n)
{
	int *r = xreallocarray(NULL, (size_t)n, sizeof(*r));
	memcpy(r, ranks, (size_t)n * sizeof(*r));
	qsort(r, (size_t)n, sizeof(*r), cmp_int);
	return r;
}

void nccl_group_shape(const struct topology *t, const int *ranks, int n, struct nccl_shape *sh)
{
	*sh = (struct nccl_shape){ .nranks = n, .nics = TOPO_MAX_NICS, .first_local = -1 };
	/* nodes, GPUs per node (the most loaded), NICs the group uses per
	 * node: one pass over the ranks sorted (a node's ranks are adjacent;
	 * placement groups come sorted, and a sorted list is not copied) */
	bool sorted = true;
	for (int i = 1; i < n && sorted; i++)
		sorted = ranks[i - 1] <= ranks[i];
	int *copy = sorted || n <= 0 ? NULL : sorted_copy(ranks, n);
	const int *r = copy ? copy : ranks;
	for (int i = 0; i < n;) {
		int node = topology_node_of(t, r[i]), cnt = 0, dn = 0;
		unsigned long long nic_seen[(TOPO_MAX_NICS + 63) / 64] = { 0 };
		for (; i < n && topology_node_of(t, r[i]) == node; i++) {
			int nic = t->nics > 0 ? t->gpu_nic[topology_local_of(t, r[i])] : -1;
			cnt++;
			if (nic >= 0 && !(nic_seen[nic / 64] >> (nic % 64) & 1)) {
				nic_seen[nic / 64] |= 1ULL << (nic % 64);
				dn++;
			}
		}
		sh->nodes++;
		sh->ppn = cnt > sh->ppn ? cnt : sh->ppn;
		sh->nics = dn < sh->nics ? dn : sh->nics;
	}
	/* the first member's local GPU (NVLink bandwidth of its GPU) */
	if (n > 0)
		sh->first_local = topology_local_of(t, ranks[0]);
	free(copy);
}

struct nccl_model *nccl_model_create(const struct topology *t, const int *ranks, int n)
{
	struct nccl_shape sh;
	nccl_group_shape(t, ranks, n, &sh);
	return nccl_model_create_shape(t, &sh);
}

struct nccl_model *nccl_model_create_shape(const struct topology *t, const struct nccl_shape *sh)
{
	struct nccl_model *m = xcalloc(1, sizeof(*m));
	int n = sh->nranks, nodes = sh->nodes, ppn = sh->ppn, nics = sh->nics, first = sh->first_local;
	m->compcap = compcap_of(t->gpu.name);
	m->arch = m->compcap >= 100 ? ARCH_BLACKWELL : m->compcap >= 90 ? ARCH_HOPPER
		: m->compcap >= 80 ? ARCH_AMPERE : ARCH_VOLTA;
	m->nranks = n;
	m->nvswitch = t->intra == INTRA_NVSWITCH;
	m->nvlink = t->intra != INTRA_PCIE;
	m->nnodes = nodes;
	m->ppn = ppn;
	if (n <= 1)
		return m;

	double T = m->nvlink ? nvlink_total_GBps(t, m->compcap, first < 0 ? 0 : first)
			     : t->intra_bw_Bps / 1e9;
	double Ttree = ppn > 1 ? T * ppn / (ppn - 1) : T;
	const double *intra = m->arch == ARCH_BLACKWELL ? sm100_intra
			    : m->arch == ARCH_HOPPER ? sm90_intra : speed_intra;
	const double *inter = m->arch == ARCH_BLACKWELL ? sm100_inter
			    : m->arch == ARCH_HOPPER ? sm90_inter : speed_inter;
	if (nodes == 1) {
		search(intra, T, T, 0, 0, RING_MAX_CHANNELS, &m->channels[NCCL_ALGO_RING],
		       &m->speed_GBps[NCCL_ALGO_RING]);
		search(intra, Ttree, Ttree, 0, 0, m->channels[NCCL_ALGO_RING],
		       &m->channels[NCCL_ALGO_TREE], &m->speed_GBps[NCCL_ALGO_TREE]);
		if (m->nvswitch && m->compcap >= 90)
			for (int i = 0; intra[i] > 0; i++)
				if (ppn * intra[i] <= Ttree * (1 + 1e-9) && intra[i] <= T) {
					m->channels[NCCL_ALGO_NVLS] = ppn;
					m->speed_GBps[NCCL_ALGO_NVLS] = intra[i];
					break;
				}
	} else {
		double nic = t->nic_bw_Bps / 1e9; /* the file's Gb/s / 8 */
		double lim = ppn > 1 ? T : 1e6; /* one GPU per node: no NVLink hop */
		double limt = ppn > 1 ? Ttree : 1e6;
		search(inter, nic, lim, nic, nics < 1 ? 1 : nics, RING_MAX_CHANNELS,
		       &m->channels[NCCL_ALGO_RING], &m->speed_GBps[NCCL_ALGO_RING]);
		search(inter, nic, limt, nic, nics < 1 ? 1 : nics, m->channels[NCCL_ALGO_RING],
		       &m->channels[NCCL_ALGO_TREE], &m->speed_GBps[NCCL_ALGO_TREE]);
	}
	return m;
}

void nccl_model_destroy(struct nccl_model *m)
{
	free(m);
}

int nccl_model_compcap(const struct nccl_model *m)
{
	return m->compcap;
}

int nccl_model_channels(const struct nccl_model *m, enum nccl_algo a)
{
	return a >= 0 && a < NCCL_ALGO_N ? m->channels[a] : 0;
}

double nccl_model_channel_bw_GBps(const struct nccl_model *m, enum nccl_algo a)
{
	return a >= 0 && a < NCCL_ALGO_N ? m->speed_GBps[a] : 0;
}

static int log2i(double x)
{
	if (x < 1)
		return -1;
	int l = 0;
	while (x >= 2) {
		x /= 2;
		l++;
	}
	return l;
}

/* Whether NCCL would run op with algorithm a and protocol p here. */
static bool tune_runs(const struct nccl_model *m, enum coll_op op, enum nccl_algo a,
		      enum coll_proto p)
{
	int P = m->nranks, nn = m->nnodes, ch = m->channels[a];
	bool ar = op == COLL_ALLREDUCE, rsag = op == COLL_REDUCE_SCATTER || op == COLL_ALLGATHER;
	bool bcrd = op == COLL_BROADCAST || op == COLL_REDUCE;

	if (P <= 1 || ch <= 0 || p < 0 || p >= PROTO_N)
		return false;
	if (!ar && !rsag && !bcrd)
		return false;                       /* all-to-all, send/recv: not tuned */
	if (bcrd && a != NCCL_ALGO_RING)
		return false;
	if (rsag && a == NCCL_ALGO_TREE)
		return false;
	if (a == NCCL_ALGO_NVLS && (p != PROTO_SIMPLE || nn > 1))
		return false;                       /* NVLS: Simple; across nodes it needs CollNet */
	if (p == PROTO_LL128 && (!m->nvlink || m->compcap < 70))
		return false;                       /* LL128 only over NVLink */
	return true;
}

/* The algorithm bandwidth (GB/s) of (op, a, p): the channels' bus
 * bandwidth, the protocol caps, the algorithm's steps. */
static double tune_bw(const struct nccl_model *m, enum coll_op op, enum nccl_algo a,
		      enum coll_proto p, int nsteps)
{
	int P = m->nranks, nn = m->nnodes, ch = m->channels[a];
	int i2 = nn <= 2 ? nn - 1 : 2;
	int arch = m->arch;
	bool ar = op == COLL_ALLREDUCE, rsag = op == COLL_REDUCE_SCATTER || op == COLL_ALLGATHER;

	double speed = m->speed_GBps[a];
	double bus = ch * speed;
	if (a == NCCL_ALGO_NVLS && rsag)
		bus = ch * speed * (m->ppn - 1.0) / m->ppn; /* bwInter x 0.9 > bwIntra x 7/8 on one node */
	/* LL cap: one node by GPU generation, across nodes by CPU (Intel row) */
	double ll_max = ll_max_bw[nn == 1 ? arch : 0][i2];
	if (a == NCCL_ALGO_RING && p == PROTO_LL)
		bus = fmin(ll_max, bus * 0.5);
	if (a == NCCL_ALGO_RING && p == PROTO_LL128)
		bus = fmin(bus * 0.92, ch * per_ch_ring_ll128[arch][i2]);
	if (a == NCCL_ALGO_TREE && ar)
		bus = fmin(bus * 0.92, ch * per_ch_tree[arch][i2]);
	if (a == NCCL_ALGO_TREE && p == PROTO_LL)
		bus = fmin(bus / 3.8, ll_max);
	if (a == NCCL_ALGO_TREE && p == PROTO_LL128)
		bus = fmin(bus * (nn == 1 ? 7.0 / 9.0 : 120.0 / 128.0), ch * per_ch_tree_ll128[arch][i2]);
	if (!(a != NCCL_ALGO_RING && rsag)) {
		if (a == NCCL_ALGO_RING)
			bus *= (double)P / nsteps;
		else if (a == NCCL_ALGO_NVLS)
			bus *= 5.0 / 6.0;
		else
			bus *= 0.5;
	}
	return bus;
}

/* The latency (us) of (op, a, p): the base latency, then the intra- and
 * inter-node hops of the algorithm's steps. */
static double tune_lat(const struct nccl_model *m, enum coll_op op, enum nccl_algo a,
		       enum coll_proto p, int nsteps)
{
	int P = m->nranks, nn = m->nnodes;
	bool ar = op == COLL_ALLREDUCE;
	bool bcrd = op == COLL_BROADCAST || op == COLL_REDUCE;

	int intra_hw = m->nvlink ? HW_NVLINK : HW_PCI;
	double lat = base_lat_us[a][p];
	double intra = hw_lat_us[intra_hw][a][p];
	/* one GPU per node: the tree's network latency; network latency 0 (IB) */
	double inter = m->ppn == 1 ? hw_lat_us[HW_NET][NCCL_ALGO_TREE][p] : hw_lat_us[HW_NET][a][p];
	if (a == NCCL_ALGO_RING) {
		int hw = nn == 1 ? intra_hw : HW_NET;
		if (bcrd) {
			lat += hw_lat_us[hw][a][p]; /* rings of the same channels (sameChannels) */
		} else {
			double ovh = nn > 1 ? NET_OVERHEAD_US * (p == PROTO_SIMPLE ? 3 : 1) : 0;
			intra = fmax(intra, ovh);
			int inter_steps = nn == 1 ? 0 : ar ? 2 * (nn - 1) : nn - 1;
			lat += (nsteps - inter_steps) * intra + inter_steps * inter;
		}
	} else if (a == NCCL_ALGO_TREE) {
		lat += 2 * ((P / nn - 1) * intra + log2i(nn) * inter);
	} else {
		lat = intra + (nn > 1 ? inter : 0);
	}
	return lat;
}

/* tuning.cc: the latency (us) and algorithm bandwidth (GB/s) of (op, a,
 * p) before size corrections; false when NCCL would not run it. */
static bool tune(const struct nccl_model *m, enum coll_op op, enum nccl_algo a, enum coll_proto p,
		 double *lat_us, double *bw_GBps)
{
	int P = m->nranks;
	bool ar = op == COLL_ALLREDUCE, rsag = op == COLL_REDUCE_SCATTER || op == COLL_ALLGATHER;

	if (!tune_runs(m, op, a, p))
		return false;
	int nsteps = ar ? 2 * (P - 1) : rsag ? P - 1 : P;
	*bw_GBps = tune_bw(m, op, a, p, nsteps);
	*lat_us = tune_lat(m, op, a, p, nsteps);
	return true;
}

double nccl_model_predict(const struct nccl_model *m, enum coll_op op, enum nccl_algo a,
			  enum coll_proto p, double bytes, double *latency_us, double *bw_GBps)
{
	double lat, bw;
	if (a < 0 || a >= NCCL_ALGO_N || !tune(m, op, a, p, &lat, &bw) || bw <= 0)
		return -1;
	int ls = log2i(floor(bytes / 64));
	if (a == NCCL_ALGO_TREE && op == COLL_ALLREDUCE && ls >= 0 && ls < 23)
		bw *= tree_correction[p][ls];
	if (a == NCCL_ALGO_RING && p == PROTO_SIMPLE && m->nnodes > 1 && op == COLL_ALLREDUCE &&
	    bytes / ((double)m->channels[a] * m->nranks) >= 64)
		lat *= m->compcap < 80 ? 1.9 : 1.4; /* plateau effect of ring */
	if (latency_us)
		*latency_us = lat;
	if (bw_GBps)
		*bw_GBps = bw;
	return lat + bytes / (1000 * bw);
}

double nccl_model_choose(const struct nccl_model *m, enum coll_op op, double bytes,
			 int algo_only, enum nccl_algo *a, enum coll_proto *p)
{
	double best = -1;
	for (int i = 0; i < NCCL_ALGO_N; i++) {
		if (algo_only >= 0 && i != algo_only)
			continue;
		for (int k = 0; k < PROTO_N; k++) {
			double tm = nccl_model_predict(m, op, i, k, bytes, NULL, NULL);
			if (tm >= 0 && (best < 0 || tm < best)) {
				best = tm;
				*a = i;
				*p = k;
			}
		}
	}
	return best;
}

bool nccl_model_next(const struct nccl_model *m, enum coll_op op, double bytes,
		     bool tried[NCCL_ALGO_N][PROTO_N], enum nccl_algo *a, enum coll_proto *p)
{
	double best = -1;
	int ba = -1, bp = -1;
	for (int i = 0; i < NCCL_ALGO_N; i++)
		for (int k = 0; k < PROTO_N; k++) {
			double tm = nccl_model_predict(m, op, i, k, bytes, NULL, NULL);
			if (tm >= 0 && !tried[i][k] && (best < 0 || tm < best)) {
				best = tm;
				ba = i;
				bp = k;
			}
		}
	if (ba < 0)
		return false;
	tried[ba][bp] = true;
	*a = ba;
	*p = bp;
	return true;
}
