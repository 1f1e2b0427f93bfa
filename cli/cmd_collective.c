/* cmd_collective: `ddlsim collective`, an nccl-tests-like sweep of one
 * collective over message sizes on a topology, simulated.
 *
 * All sizes run in one simulation, one after another on the same platform
 * (engine_collective_sweep()). Bandwidths follow nccl-tests: algbw = S / t
 * and busbw = algbw x factor, the factor being 2(n-1)/n for all-reduce,
 * (n-1)/n for reduce-scatter, all-gather and all-to-all, 1 for broadcast,
 * reduce and send/recv (coll_bus_factor()). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "coll.h"
#include "diag.h"
#include "engine.h"
#include "topology.h"

void cmd_collective_usage(FILE *f)
{
	fprintf(f, "usage: ddlsim collective --topology FILE --nodes N [--gpus-per-node-used K]\n"
		   "                         [--op OP] [--algo ALGO] [--min-bytes S] [--max-bytes S]\n"
		   "                         [--factor F] [--csv FILE]\n\n"
		   "Simulates one collective over a range of message sizes, like nccl-tests, and\n"
		   "prints size, time, algorithm bandwidth (algbw = S / t), bus bandwidth\n"
		   "(busbw = algbw x 2(n-1)/n for allreduce, (n-1)/n for reduce_scatter,\n"
		   "allgather and alltoall, 1 for broadcast, reduce and sendrecv), the algorithm and\n"
		   "protocol that ran and NCCL's predicted time (nccl(us); 0 where NCCL's tuning\n"
		   "model does not apply: hierarchical, direct).\n\n"
		   "  --topology FILE          topology file (see topologies/README.md)\n"
		   "  --nodes N                nodes in the group (default 1)\n"
		   "  --gpus-per-node-used K   GPUs 0..K-1 of every node take part (default: all)\n"
		   "  --op OP                  allreduce, reduce_scatter, allgather, broadcast, reduce,\n"
		   "                           alltoall, sendrecv (default allreduce)\n"
		   "  --algo ALGO              auto, ring, tree, nvls, hierarchical, direct; ring, tree\n"
		   "                           and nvls take a protocol (ring:LL, ring:LL128,\n"
		   "                           ring:Simple); without one, NCCL's choice for that\n"
		   "                           algorithm (default auto: NCCL's choice of both)\n"
		   "  --min-bytes S, --max-bytes S   sizes, with K, M, G suffixes (powers of 1024;\n"
		   "                           default 8 and 8G)\n"
		   "  --factor F               size multiplier between points (default 2)\n"
		   "  --csv FILE               also write the table as CSV (written atomically)\n\n"
		   "examples:\n"
		   "  ddlsim collective --topology topologies/dgx-h100.json --nodes 1\n"
		   "  ddlsim collective --topology topologies/dgx-h100-fattree2-2to1.json --nodes 16 \\\n"
		   "      --op allreduce --algo tree --min-bytes 1M --max-bytes 1G --csv ar.csv\n\n"
		   "exit codes: 0 ok, 1 simulation or CSV failed, 2 usage, 3 invalid topology\n");
}

static int parse_size(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return -1;
	switch (*end) {
	case 'k': case 'K': v *= 1024; end++; break;
	case 'm': case 'M': v *= 1024.0 * 1024; end++; break;
	case 'g': case 'G': v *= 1024.0 * 1024 * 1024; end++; break;
	default: break;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end)
		return -1;
	*out = v;
	return 0;
}

static int parse_int(const char *s, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end)
		return -1;
	*out = v;
	return 0;
}

static int write_csv(const char *path, const struct engine_coll_point *pts, int npts,
		     enum coll_op op, int n, struct diag *d)
{
	char tmp[1100];
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	FILE *f = fopen(tmp, "w");
	if (!f)
		return diag_errf(d, "%s: cannot write: %s", path, strerror(errno));
	fprintf(f, "op,ranks,bytes,algo,proto,time_us,algbw_GBps,busbw_GBps,ideal_us\n");
	for (int i = 0; i < npts; i++) {
		double algbw = pts[i].time_s > 0 ? pts[i].bytes / pts[i].time_s / 1e9 : 0;
		fprintf(f, "%s,%d,%.0f,%s,%s,%.6f,%.6f,%.6f,%.6f\n", coll_op_name(op), n,
			pts[i].bytes, pts[i].algo, pts[i].proto, pts[i].time_s * 1e6, algbw,
			algbw * coll_bus_factor(op, n), pts[i].ideal_s * 1e6);
	}
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		unlink(tmp);
		return diag_errf(d, "%s: cannot write: %s", path, strerror(errno));
	}
	return 0;
}

int cmd_collective(int argc, char **argv)
{
	const char *topo_path = NULL, *algo = "auto", *csv = NULL;
	long nodes = 1, used = 0;
	double minb = 8, maxb = 8.0 * 1024 * 1024 * 1024, factor = 2;
	int op = COLL_ALLREDUCE;
	struct diag d;
	int rc = EXIT_FAIL;

	for (int i = 1; i < argc; i++) {
		const char *o = argv[i];
		if (i + 1 >= argc)
			return cli_usage_error("option '%s' for 'collective' %s", o,
					       o[0] == '-' ? "needs a value" : "is not an option");
		const char *v = argv[++i];
		if (!strcmp(o, "--topology"))
			topo_path = v;
		else if (!strcmp(o, "--nodes")) {
			if (parse_int(v, &nodes) || nodes < 1)
				return cli_usage_error("--nodes: expected an integer >= 1, got '%s'", v);
		} else if (!strcmp(o, "--gpus-per-node-used")) {
			if (parse_int(v, &used) || used < 1)
				return cli_usage_error("--gpus-per-node-used: expected an integer >= 1, got '%s'", v);
		} else if (!strcmp(o, "--op")) {
			if ((op = coll_op_parse(v)) < 0)
				return cli_usage_error("--op: expected allreduce, reduce_scatter, allgather, "
						       "broadcast, reduce, alltoall or sendrecv, got '%s'", v);
		} else if (!strcmp(o, "--algo")) {
			if (!coll_algo_find(v))
				return cli_usage_error("--algo: unknown collective algorithm '%s' (see 'ddlsim list')", v);
			algo = v;
		} else if (!strcmp(o, "--min-bytes")) {
			if (parse_size(v, &minb) || minb < 1)
				return cli_usage_error("--min-bytes: expected a size >= 1 like 8, 64K, 1M, got '%s'", v);
		} else if (!strcmp(o, "--max-bytes")) {
			if (parse_size(v, &maxb) || maxb < 1)
				return cli_usage_error("--max-bytes: expected a size >= 1 like 1M, 8G, got '%s'", v);
		} else if (!strcmp(o, "--factor")) {
			char *end;
			factor = strtod(v, &end);
			if (*end || !(factor > 1))
				return cli_usage_error("--factor: expected a number > 1, got '%s'", v);
		} else if (!strcmp(o, "--csv"))
			csv = v;
		else
			return cli_usage_error("unknown option '%s' for 'collective'", o);
	}
	if (!topo_path)
		return cli_usage_error("'collective' needs --topology FILE");
	if (maxb < minb)
		return cli_usage_error("--max-bytes (%.0f) is below --min-bytes (%.0f)", maxb, minb);

	diag_init(&d, stderr);
	struct topology *t = topology_load(topo_path, &d);
	if (!t) {
		diag_finish(&d);
		return EXIT_INPUT;
	}
	int G = t->gpus_per_node;
	if (used == 0)
		used = G;
	if (used > G) {
		diag_err(&d, topo_path, "/node/gpus", "--gpus-per-node-used %ld exceeds the %d GPUs of a node",
			 used, G);
		rc = EXIT_USAGE;
		goto out_topo;
	}
	if (nodes > 1 && t->nics < 1) {
		diag_err(&d, topo_path, "/node/nics/count", "a node without NICs cannot join %ld nodes", nodes);
		rc = EXIT_INPUT;
		goto out_topo;
	}
	int n = (int)(nodes * used), npts = 0;
	int *ranks = malloc((size_t)n * sizeof(*ranks));
	struct engine_coll_point *pts = calloc(512, sizeof(*pts));
	if (!ranks || !pts)
		goto out_mem;
	for (long k = 0; k < nodes; k++)
		for (long g = 0; g < used; g++)
			ranks[k * used + g] = (int)(k * G + g);
	for (double s = minb; s <= maxb * (1 + 1e-12) && npts < 512; s *= factor)
		pts[npts++].bytes = floor(s);

	if (engine_collective_sweep(t, (int)nodes, ranks, n, op, algo, pts, npts, &d))
		goto out_mem;
	printf("# %s on %s: %ld node(s) x %ld GPU(s) = %d ranks, algo %s\n", coll_op_name(op),
	       t->name, nodes, used, n, algo);
	printf("%14s %12s %12s %12s  %-13s %-7s %s\n", "size(B)", "time(us)", "algbw(GB/s)",
	       "busbw(GB/s)", "algo", "proto", "nccl(us)");
	for (int i = 0; i < npts; i++) {
		double algbw = pts[i].time_s > 0 ? pts[i].bytes / pts[i].time_s / 1e9 : 0;
		printf("%14.0f %12.3f %12.3f %12.3f  %-13s %-7s %.3f\n", pts[i].bytes, pts[i].time_s * 1e6,
		       algbw, algbw * coll_bus_factor(op, n), pts[i].algo, pts[i].proto,
		       pts[i].nccl_s * 1e6);
	}
	if (csv && write_csv(csv, pts, npts, op, n, &d))
		goto out_mem;
	rc = EXIT_OK;
out_mem:
	free(pts);
	free(ranks);
out_topo:
	topology_destroy(t);
	diag_finish(&d);
	return rc;
}
