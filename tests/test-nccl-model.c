/* test-nccl-model: NCCL 2.27.3's tuning model (fabric/nccl_model.c) against
 * values worked by hand from the tables it cites, and its choices. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "diag.h"
#include "nccl_model.h"
#include "topology.h"
#include "testutil.h"

static struct nccl_model *model(const struct topology *t, int nodes, int g)
{
	int r[1024];
	for (int k = 0; k < nodes; k++)
		for (int i = 0; i < g; i++)
			r[k * g + i] = k * t->gpus_per_node + i;
	struct nccl_model *m = nccl_model_create(t, r, nodes * g);
	cr_assert(m);
	return m;
}

Test(nccl_model, channel_graphs_follow_the_search_speeds)
{
	struct topology *a = load_topology("topologies/dgx-a100.json"), *h = load_topology("topologies/dgx-h100.json");
	struct nccl_model *a1 = model(a, 1, 8), *h1 = model(h, 1, 8), *h2 = model(h, 2, 8);
	/* A100: 12 x 20 = 240 GB/s of NVLink: 6 rings at 40 */
	cr_expect_eq(nccl_model_channels(a1, NCCL_ALGO_RING), 6);
	cr_expect_float_eq(nccl_model_channel_bw_GBps(a1, NCCL_ALGO_RING), 40, 1e-12);
	cr_expect_eq(nccl_model_channels(a1, NCCL_ALGO_NVLS), 0);
	/* H100: 18 x 20.6 = 370.8: 6 x 60; NVLS 8 heads x 50 <= 370.8 x 8/7 */
	cr_expect_eq(nccl_model_channels(h1, NCCL_ALGO_RING), 6);
	cr_expect_float_eq(nccl_model_channel_bw_GBps(h1, NCCL_ALGO_RING), 60, 1e-12);
	cr_expect_eq(nccl_model_channels(h1, NCCL_ALGO_NVLS), 8);
	cr_expect_float_eq(nccl_model_channel_bw_GBps(h1, NCCL_ALGO_NVLS), 50, 1e-12);
	/* 2 nodes, NDR 50 GB/s NICs: 48 x 8 = 384 > 370.8, so 8 x 45 */
	cr_expect_eq(nccl_model_channels(h2, NCCL_ALGO_RING), 8);
	cr_expect_float_eq(nccl_model_channel_bw_GBps(h2, NCCL_ALGO_RING), 45, 1e-12);
	nccl_model_destroy(a1);
	nccl_model_destroy(h1);
	nccl_model_destroy(h2);
	topology_destroy(a);
	topology_destroy(h);
}

Test(nccl_model, latency_and_bandwidth_match_the_tables)
{
	struct topology *h = load_topology("topologies/dgx-h100.json");
	struct nccl_model *m1 = model(h, 1, 8), *m2 = model(h, 2, 8);
	double lat, bw;
	/* ring LL, one node: 6.6 + 14 x 0.6 us; min(141, 360 x 0.5) x 8/14 */
	nccl_model_predict(m1, COLL_ALLREDUCE, NCCL_ALGO_RING, PROTO_LL, 8, &lat, &bw);
	cr_expect_float_eq(lat, 6.6 + 14 * 0.6, 1e-9);
	cr_expect_float_eq(bw, 141.0 * 8 / 14, 1e-9);
	/* NVLS: 25 us, 8 x 50 x 5/6 */
	nccl_model_predict(m1, COLL_ALLREDUCE, NCCL_ALGO_NVLS, PROTO_SIMPLE, 1 << 30, &lat, &bw);
	cr_expect_float_eq(lat, 25.0, 1e-9);
	cr_expect_float_eq(bw, 400.0 * 5 / 6, 1e-9);
	/* tree LL, 2 nodes: 6.8 + 2 (7 x 0.6 + 1 x 5.0) us */
	nccl_model_predict(m2, COLL_ALLREDUCE, NCCL_ALGO_TREE, PROTO_LL, 8, &lat, &bw);
	cr_expect_float_eq(lat, 6.8 + 2 * (7 * 0.6 + 5.0), 1e-9);
	/* ring Simple, 2 nodes, 1 GiB: (8.4 + 28 x max(3.4, 3 x 1.0) + 2 x 14) x 1.4 (plateau);
	 * 8 x 45 x 16/30 */
	nccl_model_predict(m2, COLL_ALLREDUCE, NCCL_ALGO_RING, PROTO_SIMPLE, 1 << 30, &lat, &bw);
	cr_expect_float_eq(lat, (8.4 + 28 * 3.4 + 2 * 14.0) * 1.4, 1e-9);
	cr_expect_float_eq(bw, 360.0 * 16 / 30, 1e-9);
	/* tree has no all-gather, NVLS no LL */
	cr_expect_lt(nccl_model_predict(m1, COLL_ALLGATHER, NCCL_ALGO_TREE, PROTO_SIMPLE, 1e6, NULL, NULL), 0);
	cr_expect_lt(nccl_model_predict(m1, COLL_ALLREDUCE, NCCL_ALGO_NVLS, PROTO_LL, 1e6, NULL, NULL), 0);
	nccl_model_destroy(m1);
	nccl_model_destroy(m2);
	topology_destroy(h);
}

Test(nccl_model, auto_choices_follow_the_least_predicted_time)
{
	struct topology *h = load_topology("topologies/dgx-h100.json"), *l = load_topology("topologies/l40s-pcie-8gpu.json");
	struct nccl_model *m1 = model(h, 1, 8), *m16 = model(h, 16, 8), *pc = model(l, 1, 8);
	enum nccl_algo a;
	enum coll_proto p;
	/* one H100 node: ring LL at 8 B (15.0 us < tree LL 15.2), NVLS at 1 GiB */
	nccl_model_choose(m1, COLL_ALLREDUCE, 8, -1, &a, &p);
	cr_expect(a == NCCL_ALGO_RING && p == PROTO_LL, "%s/%s", nccl_algo_name(a), nccl_proto_name(p));
	nccl_model_choose(m1, COLL_ALLREDUCE, 1 << 30, -1, &a, &p);
	cr_expect(a == NCCL_ALGO_NVLS && p == PROTO_SIMPLE, "%s/%s", nccl_algo_name(a), nccl_proto_name(p));
	/* 16 nodes: tree LL for 8 B, ring Simple for 8 GiB */
	nccl_model_choose(m16, COLL_ALLREDUCE, 8, -1, &a, &p);
	cr_expect(a == NCCL_ALGO_TREE && p == PROTO_LL, "%s/%s", nccl_algo_name(a), nccl_proto_name(p));
	nccl_model_choose(m16, COLL_ALLREDUCE, 8.0 * (1 << 30), -1, &a, &p);
	cr_expect(a == NCCL_ALGO_RING && p == PROTO_SIMPLE, "%s/%s", nccl_algo_name(a), nccl_proto_name(p));
	/* PCIe: no LL128 */
	cr_expect_lt(nccl_model_predict(pc, COLL_ALLREDUCE, NCCL_ALGO_RING, PROTO_LL128, 1e6, NULL, NULL), 0);
	nccl_model_destroy(m1);
	nccl_model_destroy(m16);
	nccl_model_destroy(pc);
	topology_destroy(h);
	topology_destroy(l);
}
