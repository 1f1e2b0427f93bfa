/* test-coll: collective plans against closed forms, the engine against
 * the plans, the auto selector, `ddlsim collective`, and placement. Each
 * test runs in its own process, so each may run the engine once; tests
 * comparing several simulations run `ddlsim`. */
#include <criterion/criterion.h>
#include <regex.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "coll.h"
#include "diag.h"
#include "engine.h"
#include "topology.h"
#include "ddlsim-config.h"
#include "sweep-util.h"
#include "testutil.h"

static struct topology *load(const char *rel)
{
	struct diag d;
	diag_init(&d, stderr);
	struct topology *t = topology_load(rel[0] == '/' ? rel : src_path(rel), &d);
	cr_assert(t, "%s", diag_text(&d));
	diag_finish(&d);
	return t;
}

static double sim(const struct topology *t, int nodes, const int *ranks, int n, enum coll_op op,
		  const char *algo, double bytes)
{
	struct diag d;
	diag_init(&d, stderr);
	struct engine_coll_point pt = { .bytes = bytes };
	cr_assert_eq(engine_collective_sweep(t, nodes, ranks, n, op, algo, &pt, 1, &d), 0, "%s",
		     diag_text(&d));
	diag_finish(&d);
	return pt.time_s;
}

#define REL(a, b) (fabs((a) - (b)) / (b))

/* The values below are NCCL 2.27.3's model worked by hand from the
 * tables cited in fabric/nccl_model.c; the engine replays them exactly. */
Test(coll, ring_allreduce_inside_a_node_is_nccls_model)
{
	struct topology *t = load("topologies/dgx-a100.json");
	int r[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	/* A100: 12 NVLinks x 20 GB/s = 240, 6 channels x 40 GB/s (speedArrayIntra);
	 * ring Simple: busBw 240 x 8/14; latency 8.4 + 14 x 3.4 us */
	double N = 1e8, want = 56.0e-6 + N / (240e9 * 8 / 14);
	double got = sim(t, 1, r, 8, COLL_ALLREDUCE, "ring", N);
	cr_expect(REL(got, want) < 1e-6, "simulated %.12g, NCCL %.12g", got, want);
	topology_destroy(t);
}

Test(coll, ring_allreduce_across_nodes_is_nccls_model)
{
	struct topology *t = load("topologies/dgx-a100.json");
	int r[4] = { 0, 8, 16, 24 }; /* one GPU per node */
	/* HDR 25 GB/s: 1 channel x 24 GB/s (speedArrayInter); Simple: busBw 24
	 * x 4/6; latency (8.4 + 6 x 14 [tree network hwLat, ppn 1]) x 1.4 (plateau) */
	double N = 1e8, want = (8.4 + 6 * 14.0) * 1.4e-6 + N / (24e9 * 4 / 6);
	double got = sim(t, 4, r, 4, COLL_ALLREDUCE, "ring", N);
	cr_expect(REL(got, want) < 1e-6, "simulated %.12g, NCCL %.12g", got, want);
	topology_destroy(t);
}

Test(coll, tree_allreduce_across_four_nodes_is_nccls_model)
{
	struct topology *t = load("topologies/dgx-a100.json");
	int r[4] = { 0, 8, 16, 24 };
	/* tree LL128 wins: min(24 x 0.92, 17.8 [perChMaxTreeBw Ampere, >2
	 * nodes]) x 120/128 x 1/2 x 0.9 (treeCorrectionFactor LL128, 2^20 x 64 B);
	 * latency 14.0 + 2 x log2(4) x 8.5 us */
	double N = 1e8, bw = 17.8 * 120 / 128 * 0.5 * 0.9 * 1e9, want = 48e-6 + N / bw;
	double got = sim(t, 4, r, 4, COLL_ALLREDUCE, "tree", N);
	cr_expect(REL(got, want) < 1e-6, "simulated %.12g, NCCL %.12g", got, want);
	topology_destroy(t);
}

Test(coll, one_transfer_costs_alpha_plus_size_over_beta)
{
	struct topology *t = load("topologies/dgx-a100.json");
	int r[2] = { 3, 11 };
	double S = 1e7, want = 2.5e-6 + S / 25e9;
	double got = sim(t, 2, r, 2, COLL_SENDRECV, "direct", S);
	cr_expect(REL(got, want) < 1e-9, "simulated %.12g, closed form %.12g", got, want);
	topology_destroy(t);
}

Test(coll, two_flows_sharing_a_link_take_twice_as_long)
{
	char *dir = tmp_dir();
	char *p = write_file(dir, "t.json",
		"{\"schema\":\"ddlsim.topology\",\"schema_version\":\"1.0\",\"name\":\"t\",\"source\":\"test\","
		"\"gpu\":{\"name\":\"g\",\"peak_tflops\":{\"fp32\":10},\"hbm_GB\":16,\"hbm_bw_GBps\":900,\"sm_count\":80},"
		"\"node\":{\"gpus\":2,\"intra\":{\"kind\":\"nvswitch\",\"bw_GBps\":100,\"latency_us\":2},"
		"\"nics\":{\"count\":1,\"bw_Gbps\":100,\"latency_us\":1}},"
		"\"fabric\":{\"kind\":\"nonblocking\",\"latency_us\":0.5}}");
	struct topology *t = load(p);
	/* send/recv ring 0->2->1->3->0: 0->2 and 1->3 share node 0's NIC */
	int r[4] = { 0, 2, 1, 3 };
	double S = 1e7, want = 2.5e-6 + 2 * S / 12.5e9;
	double got = sim(t, 2, r, 4, COLL_SENDRECV, "direct", S);
	cr_expect(REL(got, want) < 1e-9, "simulated %.12g, closed form %.12g", got, want);
	topology_destroy(t);
	free(p);
	free(dir);
}

static void expect_busbw(const char *topo, double want_GBps)
{
	struct topology *t = load(topo);
	int r[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	double N = 8.0 * (1 << 30);
	double time = sim(t, 1, r, 8, COLL_ALLREDUCE, "auto", N);
	double busbw = N / time * 2 * 7 / 8 / 1e9;
	cr_expect(fabs(busbw - want_GBps) / want_GBps < 0.01, "%s: busbw %.1f GB/s, want ~%.0f",
		  topo, busbw, want_GBps);
	topology_destroy(t);
}

/* NCCL's ring Simple: 6 channels x 40 GB/s = 240 GB/s busbw (not the 300 of
 * the NVLink specification); public logs show 230-235 */
Test(coll, dgx_a100_allreduce_bus_bandwidth_is_nccls_240)
{
	expect_busbw("topologies/dgx-a100.json", 240);
}

/* NCCL picks NVLS: 8 channels x 50 GB/s x 5/6 algbw = 333 GB/s, busbw
 * 583 (NCCL's model; measured peaks are ~480, nccl-tests issue 212) */
Test(coll, dgx_h100_allreduce_bus_bandwidth_is_nccls_nvls)
{
	expect_busbw("topologies/dgx-h100.json", 400.0 * 5 / 6 * 2 * 7 / 8);
}

/* Time (us) of the last size of `ddlsim collective ARGS`. */
static double cli_time(const char *args)
{
	char *out = NULL, *err = NULL, cmd[2048];
	snprintf(cmd, sizeof(cmd), "collective %s", args);
	int rc = run_ddlsim(cmd, &out, &err);
	cr_assert_eq(rc, 0, "ddlsim %s: %s", cmd, err);
	char *last = NULL;
	for (char *l = strtok(out, "\n"); l; l = strtok(NULL, "\n"))
		if (l[0] != '#')
			last = l; /* nccl-tests' layout: the last row before the '#' footer */
	double size = 0, us = 0;
	cr_assert(last && sscanf(last, "%lf %*f %*s %*s %*d %lf", &size, &us) == 2, "output:\n%s", out);
	free(out);
	free(err);
	return us;
}

static char *ft_file(const char *dir, const char *name, const char *fabric)
{
	char text[2048];
	snprintf(text, sizeof(text),
		 "{\"schema\":\"ddlsim.topology\",\"schema_version\":\"1.1\",\"name\":\"t\",\"source\":\"test\","
		 "\"gpu\":{\"name\":\"g\",\"peak_tflops\":{\"fp32\":10},\"hbm_GB\":16,\"hbm_bw_GBps\":900,\"sm_count\":80},"
		 "\"node\":{\"gpus\":1,\"intra\":{\"kind\":\"nvswitch\",\"bw_GBps\":100,\"latency_us\":2},"
		 "\"nics\":{\"count\":1,\"bw_Gbps\":100,\"latency_us\":1}},\"fabric\":%s}", fabric);
	return write_file(dir, name, text);
}

Test(coll, oversubscribed_fat_tree_slows_a_cross_pod_allreduce)
{
	/* radix 4: 2 nodes per leaf, 2 leaves per pod; 8 nodes = 2 pods */
	char *dir = tmp_dir();
	char *nb = ft_file(dir, "nb.json", "{\"kind\":\"nonblocking\",\"latency_us\":0.5}");
	char *f1 = ft_file(dir, "f1.json", "{\"kind\":\"fat_tree\",\"levels\":3,\"radix\":4,\"oversubscription\":1,\"latency_us\":0.5}");
	char *f2 = ft_file(dir, "f2.json", "{\"kind\":\"fat_tree\",\"levels\":3,\"radix\":4,\"oversubscription\":2,\"latency_us\":0.5}");
	char a[1200];
	snprintf(a, sizeof(a), "--topology %s --nodes 8 --algo tree --min-bytes 1G --max-bytes 1G", nb);
	double t_nb = cli_time(a);
	snprintf(a, sizeof(a), "--topology %s --nodes 8 --algo tree --min-bytes 1G --max-bytes 1G", f1);
	double t_1 = cli_time(a);
	snprintf(a, sizeof(a), "--topology %s --nodes 8 --algo tree --min-bytes 1G --max-bytes 1G", f2);
	double t_2 = cli_time(a);
	cr_log_info("tree all-reduce 1 GiB, 8 nodes: non-blocking %.0f us, 1:1 %.0f us, 2:1 %.0f us",
		    t_nb, t_1, t_2);
	cr_expect(t_1 / t_nb < 1.01, "1:1 fat tree %.0f us vs non-blocking %.0f us", t_1, t_nb);
	cr_expect(t_2 / t_nb > 1.2, "2:1 fat tree %.0f us vs non-blocking %.0f us", t_2, t_nb);
	free(nb);
	free(f1);
	free(f2);
	free(dir);
}

Test(coll, pcie_server_is_slower_than_nvswitch)
{
	double pcie = cli_time("--topology " DDLSIM_SOURCE_DIR "/topologies/l40s-pcie-8gpu.json --algo ring --min-bytes 256M --max-bytes 256M -g 8");
	double nvs = cli_time("--topology " DDLSIM_SOURCE_DIR "/topologies/dgx-a100.json --algo ring --min-bytes 256M --max-bytes 256M -g 8");
	cr_log_info("ring all-reduce 256 MiB on 8 GPUs: PCIe %.0f us, NVSwitch %.0f us", pcie, nvs);
	cr_expect_gt(pcie, 5 * nvs);
}

Test(coll, hierarchical_beats_flat_ring_across_nodes_for_large_messages)
{
	double ring = cli_time("--topology " DDLSIM_SOURCE_DIR "/topologies/dgx-h100.json --nodes 2 --algo ring --min-bytes 1G --max-bytes 1G -g 8");
	double hier = cli_time("--topology " DDLSIM_SOURCE_DIR "/topologies/dgx-h100.json --nodes 2 --algo hierarchical --min-bytes 1G --max-bytes 1G -g 8");
	cr_log_info("all-reduce 1 GiB on 2 x 8 H100: ring %.0f us, hierarchical %.0f us", ring, hier);
	cr_expect_lt(hier, 0.9 * ring);
}

Test(coll, auto_picks_ll_for_small_and_simple_for_large_messages)
{
	struct topology *t = load("topologies/dgx-h100.json");
	int r[32];
	for (int i = 0; i < 32; i++)
		r[i] = i;
	struct coll_plan *s = coll_plan_create(t, "auto", COLL_ALLREDUCE, r, 8, 8);
	struct coll_plan *l = coll_plan_create(t, "auto", COLL_ALLREDUCE, r, 8, 1e9);
	struct coll_plan *m = coll_plan_create(t, "auto", COLL_ALLREDUCE, r, 32, 8);
	cr_assert(s && l && m);
	cr_expect_str_eq(s->proto, "LL");
	cr_expect_str_eq(l->proto, "Simple");
	cr_expect_str_eq(m->algo, "tree", "small all-reduce over 4 nodes: %s", m->algo);
	/* LL: busBw = min(llMaxBw 141, 360 x 0.5) x 8/14 on one H100 node,
	 * Simple 360 x 8/14: LL's wire bytes are 360/141 times Simple's */
	struct coll_plan *ll = coll_plan_create(t, "ring:LL", COLL_ALLREDUCE, r, 8, 1e8);
	struct coll_plan *pure = coll_plan_create(t, "ring:Simple", COLL_ALLREDUCE, r, 8, 1e8);
	cr_assert(ll && pure);
	cr_expect_float_eq(ll->flows[0].bytes / pure->flows[0].bytes, 360.0 / 141.0, 1e-6);
	cr_expect_str_eq(l->algo, "nvls", "1 GB all-reduce on one H100 node: %s", l->algo);
	cr_expect_null(coll_algo_find("ring:XX"));
	/* tree has no all-gather: it falls back to ring, as NCCL does */
	struct coll_plan *fb = coll_plan_create(t, "tree", COLL_ALLGATHER, r, 8, 1e6);
	cr_expect_not_null(fb);
	cr_expect_str_eq(fb->algo, "ring");
	coll_plan_destroy(fb);
	coll_plan_destroy(s);
	coll_plan_destroy(l);
	coll_plan_destroy(m);
	coll_plan_destroy(ll);
	coll_plan_destroy(pure);
	topology_destroy(t);
}

Test(coll, plans_have_o_p_merged_flows_except_alltoall)
{
	struct topology *t = load("topologies/dgx-h100-rail.json");
	int n = 256, *r = malloc(sizeof(int) * (size_t)n);
	for (int i = 0; i < n; i++)
		r[i] = i;
	const char *algos[] = { "ring", "tree", "hierarchical" };
	for (int a = 0; a < 3; a++) {
		struct coll_plan *p = coll_plan_create(t, algos[a], COLL_ALLREDUCE, r, n, 1e9);
		cr_assert(p, "%s", algos[a]);
		/* tree: a pair of trees per NIC channel, each edge both ways */
		cr_expect_leq(p->nflows, 8 * n, "%s: %d flows", algos[a], p->nflows);
		for (int i = 1; i < p->nflows; i++)
			cr_expect(p->flows[i - 1].src < p->flows[i].src ||
				  (p->flows[i - 1].src == p->flows[i].src && p->flows[i - 1].dst < p->flows[i].dst),
				  "%s: flows sorted and merged", algos[a]);
		coll_plan_destroy(p);
	}
	struct topology *nb = load("topologies/dgx-h100.json");
	struct coll_plan *x = coll_plan_create(nb, "auto", COLL_ALLTOALL, r, 16, 1e9);
	cr_assert(x);
	cr_expect_str_eq(x->algo, "direct");
	/* 2 nodes x 8 GPUs, rail-aligned: 2 x 8 x 7 over NVLink + 8 x 2 x 1 over the rails */
	cr_expect_eq(x->nflows, 2 * 8 * 7 + 8 * 2 * 1);
	coll_plan_destroy(x);
	topology_destroy(nb);
	/* PXN: GPU 0 of node 0 to GPU 5 of node 1 goes through GPU 5 of node 0 */
	int pair[2] = { 0, 5 + 8 }, g[3] = { 0, 5, 13 };
	struct coll_plan *s = coll_plan_create(t, "direct", COLL_SENDRECV, pair, 2, 1e6);
	cr_expect_eq(s->nflows, 2, "GPU 5 of node 0 is not in the group: no PXN");
	coll_plan_destroy(s);
	s = coll_plan_create(t, "direct", COLL_ALLTOALL, g, 3, 3e6);
	bool via = false;
	for (int i = 0; i < s->nflows; i++)
		via |= s->flows[i].src == 5 && s->flows[i].dst == 13 && s->flows[i].bytes > 1.5e6;
	cr_expect(via, "0->13 rides 5->13");
	coll_plan_destroy(s);
	free(r);
	topology_destroy(t);
}

Test(coll, collective_command_writes_csv_and_checks_usage)
{
	char *dir = tmp_dir(), args[1200], *out = NULL, *err = NULL;
	snprintf(args, sizeof(args), "collective --topology %s --nodes 2 --ops reduce_scatter -g 8 "
		 "--min-bytes 1K --max-bytes 1M --factor 4 --csv %s/c.csv",
		 src_path("topologies/dgx-h100.json"), dir);
	cr_assert_eq(run_ddlsim(args, &out, &err), 0, "%s", err);
	cr_expect(strstr(out, "# Avg bus bandwidth    : "), "%s", out);
	char p[1100];
	snprintf(p, sizeof(p), "%s/c.csv", dir);
	FILE *f = fopen(p, "r");
	cr_assert(f);
	char line[256];
	int lines = 0;
	cr_expect(fgets(line, sizeof(line), f) && strstr(line, "busbw_GBps"));
	while (fgets(line, sizeof(line), f))
		lines++;
	fclose(f);
	cr_expect_eq(lines, 6, "1K, 4K, ..., 1M");
	free(out);
	free(err);
	cr_expect_eq(run_ddlsim("collective --topology x.json --ops allsum", NULL, NULL), 2);
	cr_expect_eq(run_ddlsim("collective --topology /nonexistent.json", NULL, NULL), 3);
	free(dir);
}

static double run_placement(const char *dir, const char *name, const char *order)
{
	char text[2048], args[1400];
	snprintf(text, sizeof(text),
		 "{\"schema\":\"ddlsim.scenario\",\"schema_version\":\"1.0\",\"model\":\"%s\","
		 "\"topology\":\"%s\",\"nodes\":2,\"parallel\":{\"tp\":8,\"dp\":2,\"pp\":1,\"order\":\"%s\"},"
		 "\"training\":{\"seq_len\":2048,\"global_batch\":16,\"micro_batch\":1}}",
		 src_path("models/zoo/llama2-7b.json"), src_path("topologies/dgx-a100.json"), order);
	char *p = write_file(dir, name, text);
	snprintf(args, sizeof(args), "run %s --out %s/%s.out --quiet", p, dir, name);
	char *err = NULL;
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err);
	char od[1200];
	snprintf(od, sizeof(od), "%s/%s.out", dir, name);
	json_t *r = load_report(od);
	cr_assert(r);
	double it = jnum(r, "summary/iteration_time_s");
	json_decref(r);
	free(err);
	free(p);
	return it;
}

Test(coll, tensor_parallel_across_nodes_is_slower_than_inside_one)
{
	char *dir = tmp_dir();
	double inside = run_placement(dir, "inside.json", "tp,dp,pp");
	double across = run_placement(dir, "across.json", "dp,tp,pp");
	cr_log_info("llama2-7b tp=8 dp=2 on 2 DGX A100: TP inside a node %.3f s, across nodes %.3f s",
		    inside, across);
	cr_expect_gt(across, 1.1 * inside);
	free(dir);
}

/* The whole file (malloc'ed, the caller frees it) or NULL. */
static char *read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	char *buf = malloc(1 << 16);
	size_t n = buf ? fread(buf, 1, (1 << 16) - 1, f) : 0;
	fclose(f);
	if (buf)
		buf[n] = 0;
	return buf;
}

/* Lines of text (modified in place), empty lines dropped. */
static int split_lines(char *text, char **lines, int max)
{
	int n = 0;
	for (char *sv = NULL, *l = strtok_r(text, "\n", &sv); l && n < max; l = strtok_r(NULL, "\n", &sv))
		lines[n++] = l;
	return n;
}

static bool matches(const char *re, const char *s)
{
	regex_t r;
	cr_assert_eq(regcomp(&r, re, REG_EXTENDED | REG_NOSUB), 0, "%s", re);
	bool ok = regexec(&r, s, 0, NULL, 0) == 0;
	regfree(&r);
	return ok;
}

/* nccl-tests' time format (common.cu): 2 decimals below 100 us, 1 below
 * 10 ms, none above; algbw and busbw 2 decimals. */
static void expect_number_formats(const char *row)
{
	char f[13][64];
	cr_assert_eq(sscanf(row, "%63s %63s %63s %63s %63s %63s %63s %63s %63s %63s %63s %63s %63s", f[0],
			    f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9], f[10], f[11], f[12]), 13, "%s", row);
	for (int k = 5; k <= 9; k += 4) {
		double us = atof(f[k]);
		const char *dot = strchr(f[k], '.');
		int dec = dot ? (int)strlen(dot + 1) : 0;
		cr_expect_eq(dec, us >= 10000 ? 0 : us >= 100 ? 1 : 2, "time '%s' in: %s", f[k], row);
		for (int j = k + 1; j <= k + 2; j++)
			cr_expect(matches("^[0-9]+\\.[0-9]{2}$", f[j]), "bandwidth '%s' in: %s", f[j], row);
	}
}

#define ROW_RE \
	"^ +[0-9]+ +[0-9]+ +[a-z0-9]+ +[a-z]+ +-?[0-9]+( +[0-9]+(\\.[0-9]+)? +[0-9]+\\.[0-9]{2} " \
	"+[0-9]+\\.[0-9]{2} +([0-9]+|N/A)){2}$"
/* A rank line of "# Using devices", the bus id as bus_re. */
#define RANK_RE(bus_re) \
	"^#  Rank +[0-9]+ Group +[0-9]+ Pid +[0-9]+ on +[^ ]+ device +[0-9]+ " bus_re " .+$"
#define BUS_V213 "\\[0x[0-9a-f]{2}\\]"
#define BUS_V214 "\\[[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\\]"

/* The pid and host of a rank line. */
static void rank_pid_host(const char *line, long *pid, char *host)
{
	int r, g;
	cr_assert_eq(sscanf(line, "#  Rank %d Group %d Pid %ld on %63s", &r, &g, pid, host), 4, "%s", line);
}

/* ddlsim's output out has the layout of the nccl-tests log, an older
 * version's: the same '#' lines (the '# nThread' line byte for byte, the
 * rank lines in the form of ddlsim's bus id and the log's, with as many
 * distinct processes and hosts), rows matched by one nccl-tests row regex
 * with the same size/count/type/redop/root, the same footer. What v2.19.6
 * changed is left out here and held by tests/test-nccl-layout.c: its
 * version, "starting" and "concluded" lines, "unalign: 0", the column
 * headers and #wrong one wider (util.cu, commit 379ca38 "Fix benchmark
 * output alignment"), getFloatStr()'s decimals. */
static void expect_layout(char *log, char *out, int rows, const char *log_rank_re)
{
	char *L[160], *O[160];
	int nl = split_lines(log, L, 160), no = split_lines(out, O, 160);
	char *lrows[64], *orows[64], *lhdr[64], *ohdr[64];
	int nlr = 0, nor = 0, nlh = 0, noh = 0;
	for (int i = 0; i < nl; i++)
		if (L[i][0] == '#')
			lhdr[nlh++] = L[i];
		else
			lrows[nlr++] = L[i];
	for (int i = 0; i < no; i++)
		if (!strncmp(O[i], "# nccl-tests version ", 21) || !strncmp(O[i], "# Collective test ", 18) ||
		    (i > 0 && !strncmp(O[i - 1], "# Collective test concluded", 27)) || !O[i][0])
			continue; /* v2.19's lines */
		else if (O[i][0] == '#')
			ohdr[noh++] = O[i];
		else
			orows[nor++] = O[i];
	char *unalign = strstr(ohdr[0], " unalign: 0");
	cr_assert(unalign && !unalign[11], "%s", ohdr[0]);
	*unalign = 0;
	/* nccl-tests closes with a '#' line the shorter log lacks */
	cr_assert(nlh == noh || (nlh + 1 == noh && !strcmp(ohdr[noh - 1], "#")),
		  "header lines: log %d, ddlsim %d", nlh, noh);
	cr_expect_str_eq(ohdr[0], lhdr[0]);
	long lpid[64], opid[64];
	char lhost[64][64], ohost[64][64];
	int nrank = 0;
	for (int i = 1; i < nlh; i++) {
		if (!strncmp(lhdr[i], "#  Rank", 7)) {
			cr_expect(matches(log_rank_re, lhdr[i]), "log: %s", lhdr[i]);
			cr_expect(matches(RANK_RE(BUS_V214), ohdr[i]), "ddlsim: %s", ohdr[i]);
			rank_pid_host(lhdr[i], &lpid[nrank], lhost[nrank]);
			rank_pid_host(ohdr[i], &opid[nrank], ohost[nrank]);
			nrank++;
		} else if (!strncmp(lhdr[i], "# Avg bus bandwidth", 19)) {
			const char *re = "^# Avg bus bandwidth    : [0-9.e+-]+ $";
			cr_expect(matches(re, lhdr[i]) && matches(re, ohdr[i]), "%s\n%s", lhdr[i], ohdr[i]);
		} else if (strncmp(lhdr[i], "#  ", 3)) /* the column headers: v2.19's */
			cr_expect_str_eq(ohdr[i], lhdr[i]);
	}
	/* processes and hosts: a new pid (host) where the log has one */
	for (int i = 1; i < nrank; i++) {
		cr_expect_eq(lpid[i] != lpid[i - 1], opid[i] != opid[i - 1], "rank %d's process", i);
		cr_expect_eq(strcmp(lhost[i], lhost[i - 1]) != 0, strcmp(ohost[i], ohost[i - 1]) != 0,
			     "rank %d's host", i);
	}
	cr_assert_eq(nlr, rows);
	cr_assert_eq(nor, nlr);
	for (int i = 0; i < nlr; i++) {
		cr_expect(matches(ROW_RE, lrows[i]), "log row: %s", lrows[i]);
		cr_expect(matches(ROW_RE, orows[i]), "ddlsim row: %s", orows[i]);
		cr_expect_eq(strlen(orows[i]), strlen(lrows[i]) + 2, "#wrong one wider:\n%s\n%s", orows[i],
			     lrows[i]);
		cr_expect_eq(strncmp(orows[i], lrows[i], 54), 0, "size..root:\n%s\n%s", orows[i], lrows[i]);
		expect_number_formats(lrows[i]);
	}
}

/* The layout against a recorded public all_reduce_perf log of one process
 * of 8 GPUs (tests/data/nccl-tests-a100-8gpu-oci.log, nccl-tests v2.13's
 * "[0x0f]" bus ids; source in tests/data/README.md), run with the same
 * flags. Nothing but nccl-tests' lines on standard output. */
Test(coll, collective_output_has_the_layout_of_a_recorded_nccl_tests_log)
{
	char *log = read_text(src_path("tests/data/nccl-tests-a100-8gpu-oci.log")), *out = NULL,
	     *err = NULL, args[1200];
	cr_assert(log);
	snprintf(args, sizeof(args), "collective --topology %s -b 64 -e 10G -f 2 -t 1 -g 8 -w 5",
		 src_path("topologies/dgx-a100.json"));
	cr_assert_eq(run_ddlsim(args, &out, &err), 0, "%s", err);
	cr_expect(!strstr(out, "ddlsim"), "%s", out);
	cr_expect(strstr(err, "ddlsim collective: simulated on DGX A100, 1 node(s) x 1 process(es) x 8 "
			 "GPU(s), algo auto"), "%s", err);
	expect_layout(log, out, 28, RANK_RE(BUS_V213));
	free(log);
	free(out);
	free(err);
}

/* The same against a public log of 16 processes of one GPU on 2 nodes
 * (`mpirun -np 16 -npernode 8 all_reduce_perf -b 8 -e 8G -f 2 -g 1`,
 * tests/data/nccl-tests-h100-16rank-a3mega.log, bus ids "[0000:04:00]"
 * as nccl-tests prints them since v2.14.1): the command copied as the
 * binary's name, --nodes 2 --procs 16 and nccl-tests' flags gives 16
 * ranks, a process each, 8 per host, as the log. */
Test(coll, collective_takes_mpirun_processes_as_a_recorded_multi_node_log)
{
	char *log = read_text(src_path("tests/data/nccl-tests-h100-16rank-a3mega.log")), *out = NULL,
	     *err = NULL, args[1200];
	cr_assert(log);
	snprintf(args, sizeof(args), "collective /opt/src/nccl-tests/build/all_reduce_perf --topology %s "
		 "--nodes 2 --procs 16 -b 8 -e 8G -f 2 -g 1 -w 5", src_path("topologies/dgx-h100.json"));
	cr_assert_eq(run_ddlsim(args, &out, &err), 0, "%s", err);
	expect_layout(log, out, 31, RANK_RE(BUS_V214));
	free(log);
	free(out);
	/* -g 1 without --procs is one GPU per node: 2 ranks, not 16 */
	snprintf(args, sizeof(args), "collective --topology %s --nodes 2 -b 8 -e 8 -g 1",
		 src_path("topologies/dgx-h100.json"));
	cr_assert_eq(run_ddlsim(args, &out, NULL), 0);
	cr_expect(strstr(out, "#  Rank  1 ") && !strstr(out, "#  Rank  2 "), "%s", out);
	free(out);
	free(err);
}

Test(coll, collective_rejects_bad_flags_and_values_with_exit_2)
{
	char args[1400], *err = NULL;
	const char *topo = src_path("topologies/dgx-h100.json");
	static const struct { const char *flags, *msg; } cases[] = {
		{"--nodes 4294967296 --gpus-per-node-used 1", "--nodes: out of range or not a number, got '4294967296'"},
		{"--nodes 16385", "--nodes: out of range"},
		{"-g 129", "-g: out of range"},
		{"-g 16", "exceeds the 8 GPUs of a node"},
		{"--nodes 2 --procs 3", "--procs 3 is not a multiple of --nodes 2"},
		{"--nodes 2 --procs 32 -g 1", "16 process(es) per node x -t 1 x -g 1 = 16 GPUs per node "
					      "exceeds the 8 GPUs of a node"},
		{"--procs 0", "--procs: out of range or not a number, got '0'"},
		{"all_reduce_perf_nope", "'collective' takes no argument 'all_reduce_perf_nope'"},
		{"-b nan", "-b: out of range or not a number, got 'nan'"},
		{"--minbytes=-8", "--minbytes: out of range"},
		{"-e 2T", "-e: out of range"},
		{"-b 1M -e 1K", "invalid sizes for 'minbytes' and 'maxbytes': 1048576 > 1024"},
		{"-f x", "-f: out of range or not a number, got 'x'"},
		{"-f 1 -i 1 -b 1 -e 1G", "more than 4096 sizes"},
		{"-z 4", "-z: out of range"},
		{"-r -2", "-r: out of range"},
		{"--ops all_reduce,frob", "--ops: expected all_reduce"},
		{"--bogus 1", "unknown option '--bogus'"},
		{"-b", "needs a value"},
		{"-r 8 -g 8", "-r: root 8 is not a rank of 8"},
		{"extra", "takes no argument 'extra'"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(args, sizeof(args), "collective --topology %s %s", topo, cases[i].flags);
		cr_expect_eq(run_ddlsim(args, NULL, &err), 2, "%s: %s", cases[i].flags, err);
		cr_expect(err && strstr(err, cases[i].msg), "%s: want '%s', got: %s", cases[i].flags,
			  cases[i].msg, err);
		free(err);
		err = NULL;
	}
}

/* --ops runs several collectives in one simulation, one nccl-tests output
 * each, with each test's byte counts (all_gather: count per rank, a
 * multiple of 16 bytes; size = count x ranks x w); --csv - prints only the
 * CSV. */
Test(coll, collective_runs_several_ops_with_nccl_tests_byte_counts)
{
	char args[1400], *out = NULL, *err = NULL;
	snprintf(args, sizeof(args), "collective --topology %s -b 1000 -e 1000 -g 8 "
		 "--ops all_reduce,all_gather,alltoall,broadcast -d half",
		 src_path("topologies/dgx-h100.json"));
	cr_assert_eq(run_ddlsim(args, &out, &err), 0, "%s", err);
	cr_expect(strstr(out, "        1000           500      half     sum      -1  "), "%s", out);
	/* all_gather, alltoall (v2.19.6): 500 elements / 8 = 62, rounded down to
	 * 16 bytes (8 halves): 56 per rank, 56 x 8 x 2 = 896 bytes */
	cr_expect(strstr(out, "         896            56      half    none      -1  "), "%s", out);
	const char *ag = strstr(out, "         896            56      half    none      -1  ");
	cr_expect(ag && strstr(ag + 1, "         896            56      half    none      -1  "),
		  "all_gather's and alltoall's row: %s", out);
	cr_expect(strstr(out, "        1000           500      half    none       0  "), "%s", out);
	int footers = 0;
	for (char *p = out; (p = strstr(p, "# Avg bus bandwidth")); p++)
		footers++;
	cr_expect_eq(footers, 4);
	free(out);
	free(err);
	snprintf(args, sizeof(args), "collective --topology %s -b 8 -e 64 -f 2 -g 8 --csv - --ops reduce_scatter",
		 src_path("topologies/dgx-h100.json"));
	cr_assert_eq(run_ddlsim(args, &out, &err), 0, "%s", err);
	cr_expect(!strchr(out, '#'), "%s", out);
	cr_expect(!strncmp(out, "op,ranks,bytes,count,type,redop,algo,proto,time_us", 50), "%s", out);
	/* 8..32 B give 0 elements per rank: NCCL launches nothing, time 0 */
	cr_expect(strstr(out, "reduce_scatter,8,0,0,float,sum,"), "%s", out);
	free(out);
	free(err);
}

/* The rail-aligned all-to-all (coll_direct.c) against every pair's flow,
 * both run alone (the sweep, where coll_classes.c makes one flow per NIC
 * where only NICs bind):
 * without contention (non-blocking, 1:1 fat tree, rail fabric) the same
 * time to 1e-9; on oversubscribed trees (2:1 with 10 and 7 nodes, 3:1
 * with 9: leaves filled or not) within 1e-6, and both at or above the
 * closed-form bound of leaf 0's uplink: the bytes its GPUs send off the
 * leaf over its bandwidth. And far fewer flows: 1,024 ranks in 130,048 instead of
 * 1,047,552, and alone on the 1:1 tree 8,192. */
Test(coll, alltoall_rail_aligned_equals_pairwise_and_the_uplink_bounds_both, .timeout = 300)
{
	const struct { const char *topo; int nodes; } c[] = {
		{ "topologies/dgx-h100.json", 4 },
		{ "topologies/dgx-h100-fattree3.json", 8 },
		{ "topologies/dgx-h100-rail.json", 8 },
		{ "topologies/dgx-h100-fattree2-2to1.json", 10 },
		{ "topologies/dgx-h100-fattree2-2to1.json", 7 },
		{ "tests/data/fattree2-3to1.json", 9 },
	};
	double N = 1073741824.0;
	for (size_t k = 0; k < sizeof(c) / sizeof(c[0]); k++) {
		struct topology *t = load(c[k].topo);
		int n = c[k].nodes * t->gpus_per_node, *r = malloc(sizeof(int) * (size_t)n);
		for (int i = 0; i < n; i++)
			r[i] = i;
		double d = sweep_forked(t, c[k].nodes, r, n, COLL_ALLTOALL, "direct", N);
		double p = sweep_forked(t, c[k].nodes, r, n, COLL_ALLTOALL, "pairwise", N);
		cr_log_info("all-to-all 1 GiB, %s x %d: rail-aligned %.9g s, pairwise %.9g s", c[k].topo,
			    c[k].nodes, d, p);
		cr_assert(d > 0 && p > 0, "%s: %g %g", c[k].topo, d, p);
		/* oversubscribed: fewer, bigger flows share the uplinks a little
		 * differently (2:1 x 7: 3.9e-8, x 10: 9.3e-9 relative) */
		bool contended = t->fabric == FABRIC_FAT_TREE && c[k].nodes > t->ft_nodes_per_leaf &&
				 t->ft_leaf_up_bw_Bps < t->ft_nodes_per_leaf * t->nics * t->nic_bw_Bps;
		cr_expect_lt(REL(d, p), contended ? 1e-6 : 1e-9, "%s x %d: %.17g vs %.17g", c[k].topo,
			     c[k].nodes, d, p);
		if (t->fabric == FABRIC_FAT_TREE && t->ft_leaf_up_bw_Bps > 0) {
			int npl = t->ft_nodes_per_leaf, G = t->gpus_per_node;
			int in = (c[k].nodes < npl ? c[k].nodes : npl) * G, out = n - in;
			double bound = (double)in * out * (N / n) / t->ft_leaf_up_bw_Bps;
			cr_expect_geq(d, bound * (1 - 1e-9), "%s: %g s under the uplink bound %g s",
				      c[k].topo, d, bound);
			cr_expect_geq(p, bound * (1 - 1e-9));
		}
		free(r);
		topology_destroy(t);
	}
	struct topology *t = load("topologies/dgx-h100-fattree3.json");
	int n = 1024, *r = malloc(sizeof(int) * (size_t)n);
	for (int i = 0; i < n; i++)
		r[i] = i;
	struct coll_plan *a = coll_plan_create(t, "direct", COLL_ALLTOALL, r, n, N);
	struct coll_plan *b = coll_plan_create(t, "pairwise", COLL_ALLTOALL, r, n, N);
	cr_assert(a && b);
	struct coll_plan *cl = coll_plan_create_alone(t, "direct", COLL_ALLTOALL, r, n, N);
	cr_assert(cl);
	cr_expect_eq(a->nflows, 128 * 8 * 7 + 8 * 128 * 127);
	cr_expect_eq(b->nflows, 1024 * 1023);
	/* alone on the 1:1 tree: the NVLink stage and one flow per NIC */
	cr_expect_eq(cl->nflows, 128 * 8 * 7 + 8 * 128);
	/* the latency and closed form of the longest pair (across pods) kept,
	 * whatever the shifted flows cross */
	cr_expect_float_eq(cl->latency_s, topology_path_latency(t, 0, 1023), 1e-15);
	cr_expect_float_eq(cl->alpha_s + cl->extra_latency_s, a->latency_s, 1e-15);
	cr_expect_float_eq(cl->ideal_time_s, a->ideal_time_s, 1e-15);
	coll_plan_destroy(a);
	coll_plan_destroy(b);
	coll_plan_destroy(cl);
	topology_destroy(t);
	/* 2:1 tree: an uplink can bind, so every node pair keeps its flow */
	t = load("topologies/dgx-h100-fattree2-2to1.json");
	cl = coll_plan_create_alone(t, "direct", COLL_ALLTOALL, r, 80, N);
	cr_assert(cl);
	cr_expect_eq(cl->nflows, 10 * 8 * 7 + 8 * 10 * 9);
	coll_plan_destroy(cl);
	free(r);
	topology_destroy(t);
}
