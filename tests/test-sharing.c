/* test-sharing: links are shared plain max-min, whatever the routes'
 * latencies (issue 25; engine/engine_platform.cpp).
 *
 * SimGrid's CM02 model gives a flow the sharing penalty of its route's
 * latency, so on one link a short route outran a long one (TCP's RTT
 * unfairness: a cross-pod flow got about 1/1.8 of a NIC against one
 * inside a leaf). The engine builds the links with no latency and charges
 * each transfer its route's latency itself. Here one H100 sends S bytes
 * at once to the GPU of the same rail on a node of its own leaf and to
 * one on a node whose route is longer; both cross its NIC: each gets half
 * of it, so both end at 2 S / B (400 Gb/s NIC), together, and the route
 * latencies the engine charges are the topology's. This suite links
 * SimGrid itself (the engine's private header). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>

#include "engine-private.h"
#include "engine_platform.h"
#include "testutil.h"

static double g_end[2];

static void sender(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	const int *dst = sg_actor_self_get_data();
	double S = 1e9;
	sg_comm_t c[2];
	for (int i = 0; i < 2; i++)
		c[i] = engine_platform_sendto_async(engine_host_of(0), engine_host_of(dst[i]), S);
	int first = (int)sg_comm_wait_any(c, 2);
	g_end[first] = simgrid_get_clock();
	sg_comm_wait(c[1 - first]);
	g_end[1 - first] = simgrid_get_clock();
}

Test(sharing, two_routes_of_different_latency_share_a_nic_equally)
{
	struct diag d;
	diag_init(&d, stderr);
	struct topology *t = topology_load(src_path("topologies/dgx-h100-fattree3.json"), &d);
	cr_assert(t, "%s", diag_text(&d));
	int nodes = 256, G = t->gpus_per_node;
	static int dst[2];
	dst[0] = G; /* node 1, GPU 0 */
	double near = topology_path_latency(t, 0, dst[0]);
	dst[1] = -1;
	for (int n = 2; n < nodes && dst[1] < 0; n++)
		if (topology_path_latency(t, 0, n * G) > near * 1.2)
			dst[1] = n * G;
	cr_assert(dst[1] > 0, "no node of a longer route among %d", nodes);
	double far = topology_path_latency(t, 0, dst[1]);

	cr_assert_eq(engine_claim_process(&d), 0);
	cr_assert_eq(engine_start_simgrid(t, nodes, NULL, NULL, true, NULL, &d), 0, "%s",
		     diag_text(&d));
	engine_start_actor("sender", engine_host_of(0), sender, dst, false);
	simgrid_run();

	double want = 2 * 1e9 / t->nic_bw_Bps;
	cr_expect(fabs(g_end[0] / want - 1) < 1e-6, "near flow %.9f s, want %.9f", g_end[0], want);
	cr_expect(fabs(g_end[1] / want - 1) < 1e-6, "far flow %.9f s, want %.9f", g_end[1], want);
	/* the latencies the engine charges instead */
	double ln = engine_platform_route_latency(engine_host_of(0), engine_host_of(dst[0]));
	double lf = engine_platform_route_latency(engine_host_of(0), engine_host_of(dst[1]));
	cr_expect(fabs(ln - near) < 1e-12, "near route %.3g s, topology %.3g s", ln, near);
	cr_expect(fabs(lf - far) < 1e-12, "far route %.3g s, topology %.3g s", lf, far);
	topology_destroy(t);
	diag_finish(&d);
}
