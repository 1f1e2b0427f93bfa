/* cmd_collective: `ddlsim collective`, a simulated drop-in for nccl-tests'
 * all_reduce_perf (and its siblings all_gather_perf, reduce_scatter_perf,
 * alltoall_perf, sendrecv_perf, broadcast_perf, reduce_perf).
 *
 * It takes nccl-tests' flags (-b -e -f -i -g -t -n -w -m -c -o -d -r -a -z
 * -G -C -p -y -T and their long forms, sizes parsed as nccl-tests'
 * parsesize(): a number and an optional K, M or G, powers of 1024) and
 * prints nccl-tests' layout, as src/common.cu of nccl-tests v2.16.0 prints
 * it: the "# nThread ..." line, "# Using devices" with one line per
 * simulated rank (PCI bus id as "[%04x:%02x:%02x]", the form since v2.14.1;
 * v2.13 printed "[0x%02x]"), the two column header rows, one row per size with
 * "%12li  %12li  %8s  %6s  %6s" then, out-of-place and in-place,
 * "  %7s  %6.2f  %6.2f  %5g" (time with 2 decimals below 100 us, 1 below
 * 10 ms, none above), and the "# Out of bounds values" and
 * "# Avg bus bandwidth" footer. So a script that parses an nccl-tests log
 * parses this one (tests/test-coll.c holds the layout against recorded
 * public logs, tests/data/nccl-tests-*.log). Nothing else goes to standard
 * output: what ddlsim simulated (topology, nodes, algorithm) is one line
 * on standard error.
 *
 * Processes as mpirun starts them: --procs P is mpirun's -np (P processes
 * over --nodes N, P / N per node, mpirun -npernode), each of -t threads x
 * -g GPUs, so P x T x G ranks, as nccl-tests counts them (-g is GPUs per
 * process: `mpirun -np 16 -npernode 8 all_reduce_perf -g 1` is --nodes 2
 * --procs 16 -g 1, 16 ranks). Without --procs, one process per node, and
 * -g defaults to every GPU of the node (with --procs, to nccl-tests' 1).
 * The first argument may name the nccl-tests binary (all_reduce_perf,
 * all_gather_perf_mpi, a path to either): it selects the collective.
 *
 * Byte counts follow each test's GetCollByteCount(): a requested size S of
 * dtype size w is count = S / w elements; all-gather and reduce-scatter
 * round the per-rank count down to a multiple of 4 (ALIGN) and print
 * count x ranks x w; all-to-all rounds count down to a multiple of the
 * ranks. algbw = size / time and busbw = algbw x coll_bus_factor(), the
 * factors of each test's GetBw() (2(n-1)/n all-reduce; (n-1)/n all-gather,
 * reduce-scatter, all-to-all; 1 broadcast, reduce, send/recv).
 *
 * What a simulation does not have: the time is one simulated collective,
 * the same out-of-place and in-place, for every reduction op and for
 * every dtype of the same byte count; -n, -w, -m, -a, -G, -z, -p, -y, -T,
 * -C are accepted and echoed where nccl-tests echoes them. #wrong is 0
 * (-c 1) or N/A (-c 0). Pid, host name and PCI bus id of the device lines
 * are simulated: pid 10000 + the process's index, host node<k>, bus id
 * 0000:<local GPU index>:00. All sizes of all ops run in one simulation
 * (engine_collective_run()), one after another on the same platform. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "cli.h"
#include "collective-private.h"
#include "coll.h"
#include "diag.h"
#include "engine.h"
#include "estimate.h"
#include "longrun.h"
#include "options.h"
#include "samefile.h"
#include "topology.h"

/* Bounds checked before anything is allocated (no silent caps). */
#define MAX_SIZES 4096        /* sizes in one sweep */
#define MAX_ROWS 65536        /* rows over ops x dtypes x redops x sizes */
#define MAX_BYTES 1099511627776.0 /* 1 TiB: above any GPU's memory */

/* nccl-tests' parsesize(): "%lf %1s", K/M/G in powers of 1024 (and an
 * optional trailing B, as ddlsim always took). -1 if not a finite size
 * in [lo, MAX_BYTES]. */
static double parse_size(const char *s, double lo)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || !isfinite(v))
		return -1;
	while (*end == ' ')
		end++;
	switch (*end) {
	case 'k': case 'K': v *= 1024; end++; break;
	case 'm': case 'M': v *= 1024.0 * 1024; end++; break;
	case 'g': case 'G': v *= 1024.0 * 1024 * 1024; end++; break;
	default: break;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end || !(v >= lo) || v > MAX_BYTES)
		return -1;
	return floor(v);
}

/* An integer in [lo, hi] (strtol base 0, as nccl-tests), or -1 in *ok. */
static long parse_long(const char *s, long lo, long hi, bool *ok)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 0);
	*ok = !(errno || end == s || *end || v < lo || v > hi);
	return v;
}

static int find_name(const char *s, const char *const *names, int n, size_t stride)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(s, *(const char *const *)((const char *)names + (size_t)i * stride)))
			return i;
	return -1;
}

static int add_ops(struct args *a, const char *list);

static int out_of_range(const char *flag, const char *v)
{
	return cli_usage_error("%s: out of range or not a number, got '%s' (see 'ddlsim collective --help' for "
			       "the ranges)", flag, v);
}

/* nccl-tests' integers: strtol base 0 in the entry's [lo, hi]. */
static int nccl_long(const struct opt *o, const char *flag, const char *v, void *base)
{
	bool ok;
	long x = parse_long(v, (long)o->lo, (long)o->hi, &ok);
	if (!ok)
		return out_of_range(flag, v);
	*(long *)((char *)base + o->off) = x;
	return 0;
}

/* --gpus-per-node-used K: -g K with -t 1. */
static int used_option(const struct opt *o, const char *flag, const char *v, void *base)
{
	((struct args *)base)->threads = 1;
	return nccl_long(o, flag, v, base);
}

/* A size (parse_size()) of -b, -e, -i. */
static int size_option(const struct opt *o, const char *flag, const char *v, void *base)
{
	double x = parse_size(v, 1);
	if (x < 0)
		return out_of_range(flag, v);
	*(double *)((char *)base + o->off) = x;
	return 0;
}

/* -f F (F >= 1; 1: step by -i bytes) or --factor F (F > 1), at most 1024. */
static int factor_option(const struct opt *o, const char *flag, const char *v, void *base)
{
	char *end;
	errno = 0;
	double f = strtod(v, &end);
	bool ok = !errno && end != v && !*end && isfinite(f) && (o->short_name == 'f' ? f >= 1 : f > 1) &&
		  f <= 1024;
	if (!ok)
		return out_of_range(flag, v);
	((struct args *)base)->stepf = f;
	return 0;
}

/* -o OP: a reduction, or all; the long --op also takes a collective
 * (as --ops). */
static int op_option(const struct opt *o, const char *flag, const char *v, void *base)
{
	struct args *a = base;
	(void)o;
	if (!strcmp(v, "all"))
		a->redop = -1;
	else if ((a->redop = find_name(v, nccl_redops, NREDOPS, sizeof(nccl_redops[0]))) >= 0)
		;
	else if (flag[1] == '-' && coll_op_parse(v) >= 0) { /* ddlsim's --op COLLECTIVE */
		a->nops = 0;
		a->redop = 0;
		return add_ops(a, v);
	} else
		return cli_usage_error("%s: expected sum, prod, max, min, avg, mulsum or all (or, for --op, a "
				       "collective: all_reduce, all_gather, reduce_scatter, alltoall, sendrecv, "
				       "broadcast, reduce), got '%s'", flag, v);
	return 0;
}

static int dtype_option(const struct opt *o, const char *flag, const char *v, void *base)
{
	struct args *a = base;
	(void)o;
	if (!strcmp(v, "all"))
		a->dtype = -1;
	else if ((a->dtype = find_name(v, &nccl_dtypes[0].name, NDTYPES, sizeof(nccl_dtypes[0]))) < 0)
		return cli_usage_error("%s: expected int8, uint8, int32, uint32, int64, uint64, half, float, "
				       "double, bfloat16 or all, got '%s'", flag, v);
	return 0;
}

static int ops_option(const struct opt *o, const char *flag, const char *v, void *base)
{
	struct args *a = base;
	(void)o;
	(void)flag;
	a->nops = 0;
	return add_ops(a, v);
}

static int algo_option(const struct opt *o, const char *flag, const char *v, void *base)
{
	(void)flag;
	if (!coll_algo_find(v))
		return cli_usage_error("--algo: unknown collective algorithm '%s' (see 'ddlsim list')", v);
	*(const char **)((char *)base + o->off) = v;
	return 0;
}

/* An nccl-tests integer flag, short and long. */
#define NCCL(s, l, f, lo_, hi_, a_, h) \
	{ .type = OPT_T_LONG, .short_name = (s), .long_name = (l), OPT_F_(struct args, f), .argh = (a_), \
	  .lo = (lo_), .hi = (hi_), .cb = nccl_long, .help = (h) }
#define SIZE(s, l, f, fl, h) \
	{ .type = OPT_T_NUMBER, .short_name = (s), .long_name = (l), OPT_F_(struct args, f), .argh = "S", \
	  .cb = size_option, .example = "1M", .flags = (fl), .help = (h) }

static const struct opt collective_options[] = {
	OPT_GROUP("ddlsim options"),
	OPT_FILE(0, "topology", struct args, topo, "FILE", "topology file (see topologies/README.md)"),
	NCCL(0, "nodes", nodes, 1, TOPO_MAX_NODES, "N", "nodes (default 1)"),
	NCCL(0, "procs", procs, 1, (long)TOPO_MAX_NODES * TOPO_MAX_GPUS_PER_NODE, "P",
	     "processes over the nodes, as mpirun -np (P / N per node),\n"
	     "each of -t x -g GPUs: P x T x G ranks (default: one\n"
	     "process per node of every GPU)"),
	{ .type = OPT_T_LONG, .long_name = "gpus-per-node-used", OPT_F_(struct args, gpus), .argh = "K",
	  .lo = 1, .hi = TOPO_MAX_GPUS_PER_NODE, .cb = used_option,
	  .help = "same as -g K with -t 1 (default: every GPU of a node)" },
	{ .type = OPT_T_RAW, .long_name = "ops", .off = offsetof(struct args, ops),
	  .size = sizeof(((struct args *)0)->ops) + sizeof(int), .argh = "OP,...", .cb = ops_option,
	  .example = "all_gather,alltoall",
	  .help = "all_reduce (default), all_gather, reduce_scatter, alltoall, sendrecv,\n"
		  "broadcast, reduce: one nccl-tests output per op, in this order" },
	{ .type = OPT_T_STRING, .long_name = "algo", OPT_F_(struct args, algo), .argh = "ALGO", .cb = algo_option,
	  .example = "ring",
	  .help = "auto, ring, tree, nvls, hierarchical, direct; ring, tree\n"
		  "and nvls take a protocol (ring:LL, ring:LL128,\n"
		  "ring:Simple); without one, NCCL's choice for that\n"
		  "algorithm (default auto: NCCL's choice of both)" },
	OPT_FILE(0, "csv", struct args, csv, "FILE|-",
		 "also write every row with ddlsim's columns (atomically);\n"
		 "'-' writes it to stdout instead of the nccl-tests layout"),
	OPT_FILE(0, "json", struct args, json, "FILE|-", "as --csv, in JSON"),
	OPT_MEM_LIMIT(struct args, mem_limit_bytes,
		      "refuse (exit 3) a run whose estimated memory exceeds GB\n"
		      "(1e9 bytes; default 80% of the machine's physical memory):\n"
		      "34 MB + 165 KB per rank + 0.8 KB per rank and size"),
	SIZE(0, "min-bytes", minb, OPT_HIDDEN, "as -b"),
	SIZE(0, "max-bytes", maxb, OPT_HIDDEN, "as -e"),
	{ .type = OPT_T_NUMBER, .long_name = "factor", OPT_F_(struct args, stepf), .argh = "F",
	  .cb = factor_option, .example = "2", .flags = OPT_HIDDEN, .help = "as -f, F > 1" },
	OPT_GROUP("nccl-tests flags (short or long form: '-b 8', '-b8', '--minbytes=8')"),
	SIZE('b', "minbytes", minb, 0,
	     "smallest size: a number with an optional K, M or G\n"
	     "(powers of 1024), 1 to 1T (default 8)"),
	SIZE('e', "maxbytes", maxb, 0, "largest size (default 8G; nccl-tests: 32M)"),
	{ .type = OPT_T_NUMBER, .short_name = 'f', .long_name = "stepfactor", OPT_F_(struct args, stepf),
	  .argh = "F", .cb = factor_option, .example = "2",
	  .help = "multiply the size by F > 1 (default 2); F = 1: add -i" },
	SIZE('i', "stepbytes", stepb, 0, "increment when F = 1 (default 1M)"),
	NCCL('g', "ngpus", gpus, 1, TOPO_MAX_GPUS_PER_NODE, "K",
	     "GPUs per thread (default: with --procs 1, as nccl-tests;\n"
	     "without, every GPU of the node)"),
	NCCL('t', "nthreads", threads, 1, TOPO_MAX_GPUS_PER_NODE, "T", "threads per process (default 1)"),
	{ .type = OPT_T_INT, .short_name = 'o', .long_name = "op", OPT_F_(struct args, redop), .argh = "OP",
	  .cb = op_option, .example = "max",
	  .help = "sum, prod, max, min, avg, mulsum or all (default sum);\n"
		  "the long --op also takes a collective, as --ops OP" },
	{ .type = OPT_T_INT, .short_name = 'd', .long_name = "datatype", OPT_F_(struct args, dtype), .argh = "T",
	  .cb = dtype_option, .example = "half",
	  .help = "int8, uint8, int32, uint32, int64, uint64, half, float,\n"
		  "double, bfloat16 or all (default float)" },
	NCCL('r', "root", root, 0, INT_MAX, "R", "root of broadcast and reduce, 0..ranks-1 (default 0)"),
	NCCL('c', "check", check, 0, 1, "0/1", "check results: #wrong is 0 (1, the default) or N/A (0)"),
	NCCL('n', "iters", iters, 1, INT_MAX, "N", "iterations (accepted and echoed, as the flags below; a\n"
	     "simulation has no iterations to average)"),
	NCCL('w', "warmup_iters", warmup, 0, INT_MAX, "N", "warm-up iterations"),
	NCCL('m', "agg_iters", agg, 1, INT_MAX, "N", "operations aggregated together"),
	NCCL('a', "average", average, 0, 3, "0-3", "how results are averaged over ranks"),
	NCCL('z', "blocking", blocking, 0, 1, "0/1", "blocking collectives"),
	NCCL('G', "cudagraph", graph, 0, INT_MAX, "N", "CUDA graph launches"),
	NCCL('C', "report_cputime", cputime, 0, 1, "0/1", "report CPU time"),
	NCCL('p', "parallel_init", pinit, 0, 1, "0/1", "initialise NCCL in parallel"),
	NCCL('y', "stream_null", stream_null, 0, 1, "0/1", "use the default stream"),
	NCCL('T', "timeout", nccl_timeout, 0, INT_MAX, "S", "nccl-tests' timeout in seconds"),
	OPT_END(),
};

const struct opt_cmd cmd_collective_opts = {
	.name = "collective",
	.summary = "sweep a collective over message sizes on a topology, like nccl-tests",
	.args = "[BINARY] --topology FILE",
	.brief = true,
	.description =
		"Simulates collectives over a range of message sizes and prints what nccl-tests'\n"
		"all_reduce_perf (all_gather_perf, ...) prints, in its layout (nccl-tests v2.13):\n"
		"'#' header lines with one '# Using devices' line per simulated rank, then per size\n"
		"'size count type redop root' and, out-of-place and in-place, 'time algbw busbw\n"
		"#wrong', then '# Out of bounds values' and '# Avg bus bandwidth'. algbw = size /\n"
		"time; busbw = algbw x 2(n-1)/n for all_reduce, (n-1)/n for all_gather,\n"
		"reduce_scatter and alltoall, 1 for broadcast, reduce and sendrecv (nccl-tests).\n"
		"The time is one simulated collective: out-of-place and in-place are the same,\n"
		"#wrong is 0 (N/A with -c 0). --csv and --json add ddlsim's columns: the algorithm\n"
		"and protocol that ran, NCCL's predicted time (0 where NCCL's tuning model does\n"
		"not apply: hierarchical, direct) and the plan's closed form. BINARY, an\n"
		"nccl-tests binary's name or path (all_reduce_perf, all_gather_perf_mpi, ...),\n"
		"selects the collective.\n",
	.options = collective_options,
	.epilogue =
		"A sweep has at most " OPT_STR(MAX_SIZES) " sizes and " OPT_STR(MAX_ROWS) " rows, --nodes x GPUs at most "
		OPT_STR(TOPO_MAX_NODES) " x " OPT_STR(TOPO_MAX_GPUS_PER_NODE) ".\n\n"
		"examples:\n"
		"  ddlsim collective --topology topologies/dgx-h100.json -b 8 -e 8G -f 2 -g 8\n"
		"  ddlsim collective --topology topologies/dgx-h100-fattree2-2to1.json --nodes 16 \\\n"
		"      --ops all_reduce,all_gather --algo tree -b 1M -e 1G --csv ar.csv\n\n"
		"exit codes: 0 ok, 1 simulation or output failed, 2 usage (an unknown flag, a\n"
		"bad value: not a number, nan, negative, out of range, min > max, unknown op,\n"
		"dtype or algorithm, GPUs beyond the node, several nodes of a node without\n"
		"NICs; --csv and --json one file), 3 invalid\n"
		"topology, --csv or --json is the topology or its GPU preset, or the estimated\n"
		"memory exceeds --mem-limit (nothing is allocated)\n",
	.size = sizeof(struct args),
};

static int add_ops(struct args *a, const char *list)
{
	char buf[256];
	if (strlen(list) >= sizeof(buf))
		return cli_usage_error("--ops: list too long '%s'", list);
	strcpy(buf, list);
	for (char *sv = NULL, *tok = strtok_r(buf, ",", &sv); tok; tok = strtok_r(NULL, ",", &sv)) {
		int op = coll_op_parse(tok);
		if (op < 0)
			return cli_usage_error("--ops: expected all_reduce, all_gather, reduce_scatter, "
					       "alltoall, sendrecv, broadcast or reduce, got '%s'", tok);
		bool dup = false;
		for (int i = 0; i < a->nops; i++)
			dup |= a->ops[i] == op;
		if (!dup)
			a->ops[a->nops++] = op;
	}
	if (a->nops == 0)
		return cli_usage_error("--ops: expected at least one collective, got '%s'", list);
	return 0;
}

/* nccl-tests' binary name (a path, "_perf", an optional "_mpi") as the
 * collective it runs: 0 and a->ops set, or -1 if arg is not one. */
static int binary_op(struct args *a, const char *arg)
{
	const char *base = strrchr(arg, '/');
	base = base ? base + 1 : arg;
	for (int op = 0; op < COLL_NOPS; op++) {
		char name[64];
		size_t len = (size_t)snprintf(name, sizeof(name), "%s_perf", nccl_test_name(op));
		if (!strncmp(base, name, len) && (!base[len] || !strcmp(base + len, "_mpi"))) {
			a->ops[0] = op;
			a->nops = 1;
			return 0;
		}
	}
	return -1;
}

/* Parse argv into a; 0 or EXIT_USAGE (message printed). */
static int parse_args(int argc, char **argv, struct args *a)
{
	const char **pos = calloc((size_t)argc + 1, sizeof(*pos));
	int n = 0, k = 0, rc;
	if (!pos)
		return cli_usage_error("out of memory for %d arguments", argc);
	rc = opt_parse(&cmd_collective_opts, argc, argv, a, pos, &n);
	if (!rc && k < n && binary_op(a, pos[k]) == 0)
		k++;
	if (!rc && k < n)
		rc = cli_usage_error("'collective' takes no argument '%s' (an nccl-tests binary name "
				     "is all_reduce_perf, all_gather_perf, reduce_scatter_perf, "
				     "alltoall_perf, sendrecv_perf, broadcast_perf or reduce_perf)", pos[k]);
	free(pos);
	if (rc)
		return rc;
	if (a->procs > 0 && a->procs % a->nodes)
		return cli_usage_error("--procs %ld is not a multiple of --nodes %ld (mpirun's -np over "
				       "-npernode processes per node)", a->procs, a->nodes);
	if (!a->topo)
		return cli_usage_error("'collective' needs --topology FILE");
	if (a->maxb < a->minb)
		return cli_usage_error("invalid sizes for 'minbytes' and 'maxbytes': %.0f > %.0f",
				       a->minb, a->maxb);
	if (a->csv && a->json && !strcmp(a->csv, "-") && !strcmp(a->json, "-"))
		return cli_usage_error("--csv - and --json - cannot both write to stdout");
	return 0;
}

/* The requested sizes, as nccl-tests' TimeTest() loop steps them. */
static int sizes_of(const struct args *a, double *out)
{
	int n = 0;
	for (double s = a->minb; s <= a->maxb; s = a->stepf > 1 ? floor(s * a->stepf) : s + a->stepb) {
		if (n == MAX_SIZES)
			return -1;
		if (out)
			out[n] = s;
		n++;
		if (a->stepf > 1 && floor(s * a->stepf) <= s)
			break;
	}
	return n;
}

/* Fill r's count and bytes for requested size S, as GetCollByteCount(). */
static void byte_count(struct row *r, double S, int w, int n)
{
	double count = floor(S / w);
	switch (r->op) {
	case COLL_ALLGATHER:
	case COLL_REDUCE_SCATTER: {
		double base = floor(count / (4.0 * n)) * 4; /* ALIGN 4 */
		r->count = base;
		r->bytes = base * n * w;
		break;
	}
	case COLL_ALLTOALL:
		r->count = floor(count / n);
		r->bytes = r->count * n * w;
		break;
	default:
		r->count = count;
		r->bytes = count * w;
	}
}
/* Processes and GPUs: -g's default, processes per node *ppn, GPUs used
 * per node *used and ranks *n, checked against the node. Returns 0 or an
 * exit code (reported). */
static int layout(struct args *a, const struct topology *t, long *ppn, long *used, int *n,
		  struct diag *d)
{
	int G = t->gpus_per_node;
	if (a->gpus == 0)
		a->gpus = a->procs > 0 ? 1 : G / a->threads > 0 ? G / a->threads : 1;
	*ppn = a->procs > 0 ? a->procs / a->nodes : 1;
	if (a->procs == 0)
		a->procs = a->nodes;
	/* each <= TOPO_MAX_GPUS_PER_NODE before the check: no overflow */
	*used = *ppn <= G ? *ppn * a->threads * a->gpus : (long)G + 1;
	if (*used > G) {
		diag_err(d, a->topo, "/node/gpus", "%ld process(es) per node x -t %ld x -g %ld = %ld "
			 "GPUs per node exceeds the %d GPUs of a node", *ppn, a->threads, a->gpus,
			 *ppn * a->threads * a->gpus, G);
		return EXIT_USAGE;
	}
	if (a->nodes > 1 && t->nics < 1) {
		/* the topology is valid; the command asks what it cannot give */
		diag_err(d, a->topo, "/node/nics/count", "a node without NICs cannot join %ld nodes "
			 "(--nodes 1, or a topology with NICs)", a->nodes);
		return EXIT_USAGE;
	}
	/* nodes <= TOPO_MAX_NODES and used <= TOPO_MAX_GPUS_PER_NODE (parse_args),
	 * so n fits an int with room; checked again as an invariant. */
	long nl = a->nodes * *used;
	if (nl > (long)TOPO_MAX_NODES * TOPO_MAX_GPUS_PER_NODE || nl > INT_MAX) {
		fprintf(stderr, "ddlsim: error: %ld ranks is too many\n", nl);
		return EXIT_USAGE;
	}
	*n = (int)nl;
	if (a->root >= *n)
		return cli_usage_error("-r: root %ld is not a rank of %d", a->root, *n);
	return 0;
}

static bool has_redop(int op)
{
	return op != COLL_ALLGATHER && op != COLL_ALLTOALL && op != COLL_BROADCAST;
}

/* The rows of every op x dtype x reduction x size (nccl-tests' order)
 * into rows, and the distinct (op, bytes) points to simulate into pts.
 * Returns the rows' count; *npts the points'. */
static int build_rows(const struct args *a, const double *sizes, int nsizes, int n, struct row *rows,
		      struct engine_coll_point *pts, int *npts)
{
	int ndt = a->dtype < 0 ? NDTYPES : 1, nro = a->redop < 0 ? NREDOPS : 1, nrows = 0;
	*npts = 0;
	for (int o = 0; o < a->nops; o++)
		for (int dt = 0; dt < ndt; dt++)
			for (int ro = 0; ro < (has_redop(a->ops[o]) ? nro : 1); ro++)
				for (int s = 0; s < nsizes; s++) {
					struct row *r = &rows[nrows++];
					r->op = a->ops[o];
					r->dtype = a->dtype < 0 ? dt : a->dtype;
					r->redop = !has_redop(r->op) ? -1 : a->redop < 0 ? ro : a->redop;
					byte_count(r, sizes[s], nccl_dtypes[r->dtype].size, n);
					int p = 0;
					while (p < *npts && !(pts[p].op == (enum coll_op)r->op &&
							      pts[p].bytes == r->bytes))
						p++;
					if (p == *npts) {
						pts[*npts].op = r->op;
						pts[(*npts)++].bytes = r->bytes;
					}
					r->pt = p;
				}
	return nrows;
}

/* The nccl-tests layout on stdout (unless --csv - or --json -), the
 * simulated setup on stderr, and the CSV and JSON files, both or neither.
 * Returns 0, or -1 after reporting. */
static int emit(const struct args *a, const struct topology *t, long ppn, int n,
		const struct row *rows, int nrows, const struct engine_coll_point *pts, struct diag *d)
{
	bool quiet = (a->csv && !strcmp(a->csv, "-")) || (a->json && !strcmp(a->json, "-"));
	if (!quiet)
		fprintf(stderr, "ddlsim collective: simulated on %s, %ld node(s) x %ld process(es) x "
			"%ld GPU(s), algo %s\n", t->name, a->nodes, ppn, a->threads * a->gpus, a->algo);
	for (int r0 = 0; r0 < nrows && !quiet;) {
		int r1 = r0;
		while (r1 < nrows && rows[r1].op == rows[r0].op)
			r1++;
		collective_print_nccl_tests(stdout, a, t, n, rows, r0, r1, pts);
		r0 = r1;
	}
	struct atomic_file af[2] = { 0 };
	int e;
	if ((a->csv && collective_write_out(a->csv, 0, a, t, rows, nrows, pts, n, &af[0], d)) ||
	    (a->json && collective_write_out(a->json, 1, a, t, rows, nrows, pts, n, &af[1], d))) {
		atomic_file_abort(&af[0]);
		atomic_file_abort(&af[1]);
		return -1;
	}
	if ((e = atomic_file_publish(af, 2)))
		return diag_errf(d, "%s: cannot write: %s", a->csv ? a->csv : a->json, atomic_file_strerror(-e));
	return 0;
}

int cmd_collective(int argc, char **argv)
{
	struct args a = {
		.algo = "auto", .nodes = 1, .threads = 1, .gpus = 0, .root = 0, .iters = 20,
		.warmup = 5, .agg = 1, .check = 1, .average = 1, .minb = 8,
		.maxb = 8.0 * 1024 * 1024 * 1024, .stepf = 2, .stepb = 1024 * 1024, .redop = 0,
		.dtype = 7 /* float */, .ops = {COLL_ALLREDUCE}, .nops = 1,
	};
	struct diag d;
	int rc = parse_args(argc, argv, &a);
	if (rc)
		return rc;
	if ((rc = cli_check_output(a.csv)) || (rc = cli_check_output(a.json)))
		return rc;
	/* nccl-tests' sizes are whole bytes, size = size x F truncated: a
	 * factor that does not move the first size past itself never moves
	 * any (s (F - 1) grows with s), so the sweep would end at one row */
	if (a.stepf > 1 && a.maxb > a.minb && floor(a.minb * a.stepf) <= a.minb)
		return cli_usage_error("-f %g from -b %.0f makes no progress: %.0f x %g = %g, truncated to "
				       "whole bytes, is %.0f again; the sweep to %.0f would stop at one size "
				       "(raise -f above %g, raise -b, or step by bytes: -f 1 -i N)",
				       a.stepf, a.minb, a.minb, a.stepf, a.minb * a.stepf, floor(a.minb * a.stepf),
				       a.maxb, (a.minb + 1) / a.minb);
	int nsizes = sizes_of(&a, NULL);
	if (nsizes < 0)
		return cli_usage_error("the sweep from %.0f to %.0f bytes has more than %d sizes; "
				       "raise -f or -i", a.minb, a.maxb, MAX_SIZES);

	diag_init(&d, stderr);
	rc = EXIT_FAIL;
	struct topology *t = topology_load(a.topo, &d);
	if (!t) {
		diag_finish(&d);
		return EXIT_INPUT;
	}
	/* no output may replace the topology, its GPU preset or the other output */
	struct samefile *sf = samefile_create();
	samefile_input(sf, "the topology", a.topo);
	samefile_inputs_read(sf, "a file it read", 0);
	samefile_output(sf, "--json", a.json);
	samefile_output(sf, "--csv", a.csv);
	rc = cli_check_samefile(sf);
	samefile_destroy(sf);
	if (rc)
		goto out_topo;
	long ppn = 1, used = 0;
	int n = 0;
	if ((rc = layout(&a, t, &ppn, &used, &n, &d)))
		goto out_topo;
	rc = EXIT_FAIL;
	int G = t->gpus_per_node;

	int ndt = a.dtype < 0 ? NDTYPES : 1, nro = a.redop < 0 ? NREDOPS : 1;
	long nrows_l = (long)a.nops * ndt * nro * nsizes;
	if (nrows_l > MAX_ROWS) {
		rc = cli_usage_error("%ld rows (ops x dtypes x reduction ops x sizes) exceed %d",
				     nrows_l, MAX_ROWS);
		goto out_topo;
	}
	int nrows = 0, npts = 0;
	int *ranks = malloc((size_t)n * sizeof(*ranks));
	double *sizes = malloc((size_t)nsizes * sizeof(*sizes));
	struct row *rows = calloc((size_t)nrows_l, sizeof(*rows));
	struct engine_coll_point *pts = calloc((size_t)nrows_l, sizeof(*pts));
	if (!ranks || !sizes || !rows || !pts) {
		diag_errf(&d, "out of memory for %d ranks and %ld rows", n, nrows_l);
		goto out_mem;
	}
	for (long k = 0; k < a.nodes; k++)
		for (long g = 0; g < used; g++)
			ranks[k * used + g] = (int)(k * G + g);
	sizes_of(&a, sizes);
	nrows = build_rows(&a, sizes, nsizes, n, rows, pts, &npts);
	/* admission: the platform, the actors and every size's plan are
	 * allocated before the run; refuse what would not fit */
	char what[200];
	snprintf(what, sizeof(what), "collective on %d ranks (%ld nodes x %ld GPUs), %d size%s", n, a.nodes, used, npts,
		 npts == 1 ? "" : "s");
	if ((rc = longrun_admit(what, estimate_collective_bytes(n, npts), a.mem_limit_bytes)))
		goto out_mem;
	rc = EXIT_FAIL;
	if (engine_collective_run(t, (int)a.nodes, ranks, n, a.algo, pts, npts, &d))
		goto out_mem;
	if (emit(&a, t, ppn, n, rows, nrows, pts, &d))
		goto out_mem;
	rc = fflush(stdout) ? EXIT_FAIL : EXIT_OK;
out_mem:
	free(pts);
	free(rows);
	free(sizes);
	free(ranks);
out_topo:
	topology_destroy(t);
	diag_finish(&d);
	return rc;
}
