/* cmd_collective: `ddlsim collective`, a simulated drop-in for nccl-tests
 * v2.19.6 (github.com/NVIDIA/nccl-tests, commit a0b82b2, the version its
 * src/common.h names): all_reduce_perf and its siblings all_gather_perf,
 * reduce_scatter_perf, alltoall_perf, alltoallv_perf, sendrecv_perf,
 * broadcast_perf, reduce_perf, gather_perf, scatter_perf, hypercube_perf.
 *
 * Every flag of src/common.cu's getopt_long table, short and long, with
 * its default there: -t 1, -g 1, -b 32M, -e 32M, -i 1M, -f 1 (a factor
 * above 1 multiplies, else -i adds; read as strtol reads it, so -f 1.5 is
 * 1), -n 20, -m 1, -w 1, -N 1, -p 0, -c 1, -o sum, -d float, -r 0, -z 0,
 * -y 0, -T 0, -G 0, -C 0, -S 0, -J none, -a 1, -R 0, -x unset, -D 0, -V 16,
 * -M 0, -u 0, -I 0, -K 0. Sizes as parsesize(): a number and an optional K,
 * M or G, powers of 1024. What nccl-tests says while parsing, ddlsim says
 * the same: an unknown -o or -d falls back to sum or float with its line
 * on stdout ("invalid op X, defaulting to sum .. "), -x above 1 is ignored
 * with its line (the NCCL named, 2.27.3, is before 2.28), -D and -V are
 * refused with its line ("requires NCCL >= 2.28.0"), -I, -K and -z 3 with
 * -G are disabled with its lines on stderr.
 *
 * Output: src/util.cu's, per binary run: "# nccl-tests version 2.19.6
 * nccl-headers=22703 nccl-library=22703" (the NCCL of ddlsim's model),
 * "# Collective test starting: NAME", the "# nThread ... unalign: U" line,
 * the -z, -I and -p lines, "# Using devices" with one line per simulated
 * rank, "# Reducing maxBytes" where the GPU's memory (gpu.hbm_total_bytes)
 * caps -e as run() does, the column headers (-C cputime, -I's per-
 * iteration columns, -S's timestamp), one row per size ("%12li  %12li
 * %8s  %6s  %6s", then per out-of-place and in-place "  %7s  %6s  %6s
 * %6g", each number in getFloatStr()'s width: 2 decimals, else 1, else
 * none, else an exponent), the footer "# Out of bounds values", "# Avg bus
 * bandwidth" (OK/FAILED against NCCL_TESTS_MIN_BW), "# Collective test
 * concluded: NAME". Nothing else goes to standard output: what ddlsim
 * simulated is one line on standard error.
 *
 * What a simulation does not have, said here and in --help: the time is
 * one simulated collective, the same out-of-place and in-place (ddlsim's
 * plans move the same bytes either way; NCCL's in-place differs only by
 * the local copy it skips), for every reduction op and dtype of the same
 * byte count, for every root (the root is rank 0's position: equal on a
 * switched fabric); -I's min, max and p99 are that time, cv 0; #wrong is
 * 0 (N/A with -c 0). -n -w -m -a -G -z -p -y -T -C -S -u -R -x are
 * accepted and echoed where nccl-tests echoes them (-R and -x nowhere).
 * -J FILE.json writes nccl-tests' JSON report (collective_json.c).
 * Refused, with the reason: -M 1 (NCCL's own memory, not simulated), -N 0
 * (an endless run), alltoallv with NCCL_TESTS_ALLTOALLV_MATRIX_FILE or a
 * spread other than 1 (default) or 0, hypercube on ranks not a power of 2,
 * fp8 types on a GPU below compute capability 9.0 (as nccl-tests leaves
 * them out of -d all there). --op COLLECTIVE (ddlsim's old alias of
 * --ops) is nccl-tests' -o now: it falls back to sum, with a note.
 *
 * Processes as mpirun starts them: --procs P is mpirun's -np (P processes
 * over --nodes N, P / N per node, mpirun -npernode), each of -t threads x
 * -g GPUs, so P x T x G ranks, as nccl-tests counts them (`mpirun -np 16
 * -npernode 8 all_reduce_perf -g 1` is --nodes 2 --procs 16). Without
 * --procs, one process per node. The first argument may name the
 * nccl-tests binary (all_reduce_perf, all_gather_perf_mpi, a path to
 * either): it selects the collective and is the NAME printed. Byte counts
 * and bandwidths: collective_rows.c. Pid, host name and PCI bus id of the
 * device lines are simulated: pid 10000 + the process's index, host
 * node<k>, bus id 0000:<local GPU index>:00. All sizes of all ops run in
 * one simulation (engine_collective_run()). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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
#define MAX_ROWS 65536        /* rows over ops x dtypes x redops x roots x cycles x sizes */
#define MAX_BYTES 1099511627776.0 /* 1 TiB: above any GPU's memory */

/* nccl-tests' parsesize(): "%lf %1s", K/M/G in powers of 1024 (and an
 * optional trailing B, as ddlsim always took). -1 if not a finite size
 * in [0, MAX_BYTES]. */
static double parse_size(const char *s)
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
	if (*end || !(v >= 0) || v > MAX_BYTES)
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

/* What nccl-tests prints on stdout while it parses (an unknown -o or -d,
 * -x above 1), kept until the command line is read: then on stdout as
 * there, or on stderr when --csv - or --json - has stdout. */
static char said[1024];
static size_t said_len;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(said + said_len, sizeof(said) - said_len, fmt, ap);
	va_end(ap);
	if (k > 0)
		said_len = said_len + (size_t)k < sizeof(said) ? said_len + (size_t)k : sizeof(said) - 1;
}

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
	double x = parse_size(v);
	if (x < 0)
		return out_of_range(flag, v);
	*(double *)((char *)base + o->off) = x;
	return 0;
}

/* -f F as common.cu reads it, strtol(F, NULL, 0): the integer it starts
 * with (-f 1.5 is 1: step by -i). A value that does not start with one is
 * refused (nccl-tests would take it as 0); a fraction dropped is said on
 * stderr. */
static int factor_option(const struct opt *o, const char *flag, const char *v, void *base)
{
	char *end;
	errno = 0;
	long f = strtol(v, &end, 0);
	if (errno || end == v || f < o->lo || f > o->hi)
		return out_of_range(flag, v);
	if (*end)
		fprintf(stderr, "ddlsim collective: %s %s: nccl-tests reads the step factor as an integer "
			"(strtol): %ld%s\n", flag, v, f, f > 1 ? "" : ", so sizes step by -i bytes");
	((struct args *)base)->stepf = f;
	return 0;
}

/* -o OP: a reduction or all; anything else falls back to sum with
 * nccl-tests' line on stdout (common.h ncclstringtoop()). --op
 * COLLECTIVE, ddlsim's old alias of --ops, is no more: a note says so. */
static int op_option(const struct opt *o, const char *flag, const char *v, void *base)
{
	struct args *a = base;
	(void)o;
	if (!strcmp(v, "all"))
		a->redop = -1;
	else if ((a->redop = find_name(v, nccl_redops, NREDOPS, sizeof(nccl_redops[0]))) < 0) {
		say("invalid op %s, defaulting to %s .. \n", v, nccl_redops[0]);
		a->redop = 0;
		if (coll_op_parse(v) >= 0)
			fprintf(stderr, "ddlsim collective: note: %s %s: %s is nccl-tests' reduction op; "
				"the collective is chosen with --ops %s or the binary name %s_perf "
				"(--op COLLECTIVE is deprecated and no longer selects it)\n",
				flag, v, flag, v, nccl_test_name(coll_op_parse(v)));
	}
	return 0;
}

/* -d T: a type or all; anything else falls back to float with nccl-tests'
 * line (common.h ncclstringtotype()). */
static int dtype_option(const struct opt *o, const char *flag, const char *v, void *base)
{
	struct args *a = base;
	(void)o;
	(void)flag;
	if (!strcmp(v, "all"))
		a->dtype = -1;
	else if ((a->dtype = find_name(v, &nccl_dtypes[0].name, NDTYPES, sizeof(nccl_dtypes[0]))) < 0) {
		say("invalid type %s, defaulting to %s .. \n", v, nccl_dtypes[DTYPE_FLOAT].name);
		a->dtype = DTYPE_FLOAT;
	}
	return 0;
}

/* -x P: NCCL's CTA policy; above 1 needs NCCL 2.28 (common.cu's line). */
static int cta_option(const struct opt *o, const char *flag, const char *v, void *base)
{
	int rc = nccl_long(o, flag, v, base);
	struct args *a = base;
	if (!rc && a->cta_policy > 1) {
		say("Option -x (cta_policy) %ld is not supported before NCCL 2.28. Ignoring\n", a->cta_policy);
		a->cta_policy = -1;
	}
	return rc;
}

/* -D and -V: NCCL's device API, from NCCL 2.28; ddlsim's NCCL is 2.27.3,
 * where nccl-tests refuses them (exit -1) with its line
 * (check_nccl_tests()). Parsed here, refused there. */
static int device_option(const struct opt *o, const char *flag, const char *v, void *base)
{
	struct args *a = base;
	int rc = nccl_long(o, flag, v, base);
	if (o->short_name == 'D')
		a->device_impl_set = true;
	else
		a->device_ctas_set = true;
	return rc;
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
#define FACTOR(s, l, fl, h) \
	{ .type = OPT_T_LONG, .short_name = (s), .long_name = (l), OPT_F_(struct args, stepf), .argh = "F", \
	  .lo = 0, .hi = 1 << 20, .cb = factor_option, .example = "2", .flags = (fl), .help = (h) }

static const struct opt collective_options[] = {
	OPT_GROUP("ddlsim options"),
	OPT_FILE(0, "topology", struct args, topo, "FILE", "topology file (see topologies/README.md)"),
	NCCL(0, "nodes", nodes, 1, TOPO_MAX_NODES, "N", "nodes (default 1)"),
	NCCL(0, "procs", procs, 1, (long)TOPO_MAX_NODES * TOPO_MAX_GPUS_PER_NODE, "P",
	     "processes over the nodes, as mpirun -np (P / N per node),\n"
	     "each of -t x -g GPUs: P x T x G ranks (default: one\n"
	     "process per node)"),
	{ .type = OPT_T_LONG, .long_name = "gpus-per-node-used", OPT_F_(struct args, gpus), .argh = "K",
	  .lo = 1, .hi = TOPO_MAX_GPUS_PER_NODE, .cb = used_option,
	  .help = "same as -g K with -t 1" },
	{ .type = OPT_T_RAW, .long_name = "ops", .off = offsetof(struct args, ops),
	  .size = sizeof(((struct args *)0)->ops) + sizeof(int), .argh = "OP,...", .cb = ops_option,
	  .example = "all_gather,alltoall",
	  .help = "all_reduce (default), all_gather, reduce_scatter, alltoall,\n"
		  "alltoallv, sendrecv, broadcast, reduce, gather, scatter,\n"
		  "hypercube: one nccl-tests output per op, in this order" },
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
	FACTOR(0, "factor", OPT_HIDDEN, "as -f"),
	OPT_GROUP("nccl-tests v2.19.6 flags (short or long form: '-b 8', '-b8', '--minbytes=8')"),
	NCCL('t', "nthreads", threads, 1, TOPO_MAX_GPUS_PER_NODE, "T", "threads per process (default 1)"),
	NCCL('g', "ngpus", gpus, 1, TOPO_MAX_GPUS_PER_NODE, "K", "GPUs per thread (default 1)"),
	SIZE('b', "minbytes", minb, 0,
	     "smallest size: a number with an optional K, M or G\n"
	     "(powers of 1024), 0 to 1T (default 32M)"),
	SIZE('e', "maxbytes", maxb, 0, "largest size (default 32M)"),
	SIZE('i', "stepbytes", stepb, 0, "increment when F <= 1 (default 1M)"),
	FACTOR('f', "stepfactor", 0, "multiply the size by the integer F > 1; F <= 1: add -i\n"
	       "(default 1; read as strtol: 1.5 is 1)"),
	NCCL('n', "iters", iters, 1, INT_MAX, "N", "iterations (default 20; echoed: a simulation\n"
	     "has no iterations to average, as for -m -w -a -G -z -p\n"
	     "-y -T -C -u -R -x)"),
	NCCL('m', "agg_iters", agg, 1, INT_MAX, "N", "operations aggregated together (default 1)"),
	NCCL('w', "warmup_iters", warmup, 0, INT_MAX, "N", "warm-up iterations (default 1)"),
	NCCL('N', "run_cycles", cycles, 0, INT_MAX, "N", "print the sizes N times (default 1; 0, endless, refused)"),
	NCCL('p', "parallel_init", pinit, 0, 1, "0/1", "initialise NCCL in parallel"),
	NCCL('c', "check", check, 0, INT_MAX, "N", "check results: #wrong is 0 (N > 0, default 1) or N/A (0)"),
	{ .type = OPT_T_INT, .short_name = 'o', .long_name = "op", OPT_F_(struct args, redop), .argh = "OP",
	  .cb = op_option, .example = "max",
	  .help = "sum, prod, max, min, avg, mulsum or all (default sum;\n"
		  "another falls back to sum, as nccl-tests)" },
	{ .type = OPT_T_INT, .short_name = 'd', .long_name = "datatype", OPT_F_(struct args, dtype), .argh = "T",
	  .cb = dtype_option, .example = "half",
	  .help = "int8, uint8, int32, uint32, int64, uint64, half, float,\n"
		  "double, bfloat16, f8e4m3, f8e5m2 or all (default float;\n"
		  "another falls back to float; fp8 needs compute capability 9)" },
	NCCL('r', "root", root, -1, INT_MAX, "R", "root of broadcast, reduce, gather and scatter, 0..ranks-1;\n"
	     "-1: every root (default 0)"),
	NCCL('z', "blocking", blocking, 0, 3, "0-3", "1: barrier after each inner iteration (-m), 2: no\n"
	     "barrier, 3: wait and barrier after each outer iteration (-n)"),
	NCCL('y', "stream_null", stream_null, 0, 1, "0/1", "use the default stream"),
	NCCL('T', "timeout", nccl_timeout, 0, INT_MAX, "S", "nccl-tests' timeout in seconds"),
	NCCL('G', "cudagraph", graph, 0, INT_MAX, "N", "CUDA graph launches"),
	NCCL('C', "report_cputime", cputime, 0, 1, "0/1", "label the time 'cputime'"),
	NCCL('S', "report_timestamps", timestamps, 0, 1, "0/1", "a timestamp after each row"),
	OPT_STRING('J', "output_file", struct args, output_file, "FILE",
		   "nccl-tests' JSON report if FILE ends in .json (an existing\n"
		   "FILE kept: FILE.0, ...), else ignored, as nccl-tests"),
	NCCL('a', "average", average, 0, 3, "0-3", "how results are averaged over ranks"),
	NCCL('R', "local_register", local_register, 0, 2, "0-2", "buffer registration (accepted, not modelled)"),
	{ .type = OPT_T_LONG, .short_name = 'x', .long_name = "cta_policy", OPT_F_(struct args, cta_policy),
	  .argh = "0-2", .lo = -1, .hi = 2, .cb = cta_option, .example = "1",
	  .help = "NCCL's CTA policy (2 ignored before NCCL 2.28, as nccl-tests)" },
	{ .type = OPT_T_LONG, .short_name = 'D', .long_name = "device_implementation",
	  OPT_F_(struct args, device_impl), .argh = "N", .lo = INT_MIN, .hi = INT_MAX, .cb = device_option,
	  .example = "1",
	  .help = "refused: NCCL's device API needs NCCL 2.28 (ddlsim's is 2.27.3)" },
	{ .type = OPT_T_LONG, .short_name = 'V', .long_name = "device_cta_count",
	  OPT_F_(struct args, device_ctas), .argh = "N", .lo = INT_MIN, .hi = INT_MAX, .cb = device_option,
	  .example = "16",
	  .help = "refused, as -D" },
	NCCL('M', "memory", memory, 0, 1, "0/1", "GPU memory report: 1 refused (NCCL's own memory)"),
	NCCL('u', "unalign", unalign, 0, INT_MAX, "U", "misalign the buffers by U elements (echoed)"),
	NCCL('I', "per_iter_timing", per_iter, INT_MIN, INT_MAX, "0/1", "per-iteration columns (i_min i_max\n"
	     "i_p99 i_cv%: the one simulated time, cv 0)"),
	NCCL('K', "per_iter_skip", per_iter_skip, INT_MIN, INT_MAX, "N", "leading samples -I leaves out"),
	OPT_END(),
};

const struct opt_cmd cmd_collective_opts = {
	.name = "collective",
	.summary = "sweep a collective over message sizes on a topology, like nccl-tests",
	.args = "[BINARY] --topology FILE",
	.brief = true,
	.description =
		"Simulates collectives over a range of message sizes and prints what nccl-tests\n"
		"v2.19.6's all_reduce_perf (all_gather_perf, ...) prints, in its layout, with its\n"
		"defaults (-b 32M -e 32M -g 1 -w 1): the version and 'Collective test starting'\n"
		"lines, the parameters, one '# Using devices' line per simulated rank, then per size\n"
		"'size count type redop root' and, out-of-place and in-place, 'time algbw busbw\n"
		"#wrong', then '# Out of bounds values', '# Avg bus bandwidth' and 'Collective test\n"
		"concluded'. algbw = size / time; busbw = algbw x 2(n-1)/n for all_reduce, (n-1)/n\n"
		"for all_gather, reduce_scatter, alltoall, alltoallv, gather and scatter, 1 for\n"
		"broadcast, reduce, sendrecv and hypercube (whose algbw counts (n-1)/n of the size).\n"
		"The time is one simulated collective: out-of-place and in-place are the same (the\n"
		"plans move the same bytes), as are reduction ops, dtypes of one size and roots\n"
		"(rank 0's position); #wrong is 0 (N/A with -c 0). alltoallv is nccl-tests'\n"
		"distance-weighted default (or NCCL_TESTS_ALLTOALLV_SPREAD=0: uniform). --csv and\n"
		"--json add ddlsim's columns: the algorithm and protocol that ran, NCCL's predicted\n"
		"time (0 where NCCL's tuning model does not apply: hierarchical, direct) and the\n"
		"plan's closed form. BINARY, an nccl-tests binary's name or path (all_reduce_perf,\n"
		"all_gather_perf_mpi, ...), selects the collective.\n",
	.options = collective_options,
	.epilogue =
		"A sweep has at most " OPT_STR(MAX_SIZES) " sizes and " OPT_STR(MAX_ROWS) " rows, --nodes x GPUs at most "
		OPT_STR(TOPO_MAX_NODES) " x " OPT_STR(TOPO_MAX_GPUS_PER_NODE) ".\n\n"
		"examples:\n"
		"  ddlsim collective --topology topologies/dgx-h100.json -b 8 -e 8G -f 2 -g 8\n"
		"  ddlsim collective --topology topologies/dgx-h100-fattree2-2to1.json --nodes 16 \\\n"
		"      --ops all_reduce,all_gather --algo tree -b 1M -e 1G -f 2 -g 8 --csv ar.csv\n\n"
		"exit codes: 0 ok, 1 simulation or output failed (or the average bus bandwidth\n"
		"below 0.9 x NCCL_TESTS_MIN_BW), 2 usage (an unknown flag, a bad value: not a number,\n"
		"nan, negative, out of range, min > max, unknown algorithm, GPUs beyond the node,\n"
		"several nodes of a node without NICs, -D, -V, -M 1, -N 0, a flag\n"
		"combination or environment a simulation cannot honour; --csv and --json one file),\n"
		"3 invalid topology, --csv or --json is the topology or its GPU preset, or the\n"
		"estimated memory exceeds --mem-limit (nothing is allocated)\n",
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
					       "alltoall, alltoallv, sendrecv, broadcast, reduce, gather, "
					       "scatter or hypercube, got '%s'", tok);
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
			a->binary = arg;
			return 0;
		}
	}
	return -1;
}

static int check_nccl_tests(struct args *a);

/* Parse argv into a; 0 or EXIT_USAGE (message printed). */
static int parse_args(int argc, char **argv, struct args *a)
{
	const char **pos = calloc((size_t)argc + 1, sizeof(*pos));
	int n = 0, k = 0, rc;
	if (!pos)
		return cli_usage_error("out of memory for %d arguments", argc);
	said_len = 0;
	said[0] = 0;
	rc = opt_parse(&cmd_collective_opts, argc, argv, a, pos, &n);
	if (!rc && k < n && binary_op(a, pos[k]) == 0)
		k++;
	if (!rc && k < n)
		rc = cli_usage_error("'collective' takes no argument '%s' (an nccl-tests binary name "
				     "is all_reduce_perf, all_gather_perf, reduce_scatter_perf, "
				     "alltoall_perf, alltoallv_perf, sendrecv_perf, broadcast_perf, "
				     "reduce_perf, gather_perf, scatter_perf or hypercube_perf)", pos[k]);
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
	return check_nccl_tests(a);
}

/* alltoallv's pattern from nccl-tests' environment (alltoallv.cu
 * AlltoAllvInit): the distance-weighted default (spread 1.0), or uniform
 * (spread 0: an alltoall). 0 or EXIT_USAGE. */
static int alltoallv_pattern(struct args *a)
{
	const char *m = getenv("NCCL_TESTS_ALLTOALLV_MATRIX_FILE"), *sp = getenv("NCCL_TESTS_ALLTOALLV_SPREAD");
	a->alltoallv_op = COLL_ALLTOALLV;
	if (m && *m)
		return cli_usage_error("alltoallv: NCCL_TESTS_ALLTOALLV_MATRIX_FILE=%s: a traffic matrix is not "
				       "simulated (only the generated patterns, spread 1.0 or 0.0)", m);
	if (!sp)
		return 0;
	char *end;
	double v = strtod(sp, &end);
	if (end == sp || *end || (v != 0 && v != 1))
		return cli_usage_error("alltoallv: NCCL_TESTS_ALLTOALLV_SPREAD=%s: ddlsim simulates spread 1.0 "
				       "(the default, distance-weighted) or 0.0 (uniform) only", sp);
	if (v == 0)
		a->alltoallv_op = COLL_ALLTOALL;
	return 0;
}

/* After parsing, what common.cu main() checks (its lines, its order),
 * then what a simulation cannot honour. 0 or EXIT_USAGE. */
static int check_nccl_tests(struct args *a)
{
	if (a->device_impl_set || a->device_ctas_set) {
		fprintf(stderr, a->device_impl_set ? "Option -D (device implementation) requires NCCL >= 2.28.0\n"
						   : "Option -V (device CTA count) requires NCCL >= 2.28.0\n");
		return EXIT_USAGE;
	}
	if (a->per_iter != 0 && a->per_iter != 1) {
		fprintf(stderr, "per-iteration timing (-I) only supports 0=off or 1=on. Disabling.\n");
		a->per_iter = 0;
	}
	if (a->per_iter && a->graph >= 1) {
		fprintf(stderr, "per-iteration timing (-I) is incompatible with CUDA graph mode (-G). Disabling.\n");
		a->per_iter = 0;
	}
	if (a->blocking == 3 && a->graph >= 1) {
		fprintf(stderr, "blocking mode (-z 3) is incompatible with CUDA graph mode (-G). Disabling.\n");
		a->blocking = 0;
	}
	if (a->per_iter_skip < 0 || a->per_iter_skip >= a->iters) {
		fprintf(stderr, "per-iteration skip (-K) must be between 0 and %ld. Disabling.\n", a->iters - 1);
		a->per_iter_skip = 0;
	}
	if (a->per_iter_skip && !a->per_iter) {
		fprintf(stderr, "per-iteration skip (-K) requires per-iteration timing (-I 1). Disabling.\n");
		a->per_iter_skip = 0;
	}
	if (a->memory)
		return cli_usage_error("-M 1: nccl-tests' GPU memory report measures NCCL's own allocations "
				       "(cudaMemGetInfo), which a simulation does not have");
	if (a->cycles == 0)
		return cli_usage_error("-N 0: nccl-tests runs endlessly; a simulation prints a finite number "
				       "of cycles (-N 1 or more)");
	for (int i = 0; i < a->nops; i++)
		if (a->ops[i] == COLL_ALLTOALLV)
			return alltoallv_pattern(a);
	return 0;
}

/* Processes and GPUs: -g's default, processes per node *ppn, GPUs used
 * per node *used and ranks *n, checked against the node. Returns 0 or an
 * exit code (reported). */
static int layout(struct args *a, const struct topology *t, long *ppn, long *used, int *n,
		  struct diag *d)
{
	int G = t->gpus_per_node;
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
	int below = 0;
	for (int r0 = 0; r0 < nrows && !quiet;) {
		int r1 = r0;
		while (r1 < nrows && rows[r1].op == rows[r0].op)
			r1++;
		int k = collective_print_nccl_tests(stdout, a, t, n, rows, r0, r1, pts);
		if (k < 0)
			return -1;
		below |= k;
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
	return below ? -1 : 0;
}

/* common.cu run(): maxBytes capped to what the GPU's memory holds, the
 * send and receive buffers (and the expected one with -c) after a reserve
 * of 1 GiB per 16 GiB (at most 4 GiB) and 1 GiB for the rest. */
static void cap_max_bytes(struct args *a, const struct topology *t)
{
	const double GiB = 1024.0 * 1024 * 1024, mem = t->gpu.hbm_bytes;
	double reserve = fmin(ceil(mem / (16 * GiB)) * GiB, 4 * GiB);
	double cap = floor((mem - reserve - GiB) / (a->check ? 3 : 2));
	if (a->maxb > cap) {
		a->maxb = cap;
		if (a->minb > a->maxb)
			a->minb = a->maxb;
		a->max_reduced = true;
	}
}

/* What the group and the GPU allow: hypercube's powers of 2, fp8 from
 * compute capability 9.0 (common.cu leaves fp8 out below it). */
static int check_group(struct args *a, const struct topology *t, int n)
{
	a->fp8 = t->gpu.compute_capability >= 9.0;
	if (a->dtype >= NDTYPES_NO_FP8 && !a->fp8)
		return cli_usage_error("-d %s: fp8 needs a GPU of compute capability 9.0 or above; %s's "
				       "is %g (nccl-tests leaves fp8 out there)", nccl_dtypes[a->dtype].name,
				       t->gpu.name, t->gpu.compute_capability);
	for (int i = 0; i < a->nops; i++)
		if (a->ops[i] == COLL_HYPERCUBE && (n & (n - 1)))
			return cli_usage_error("hypercube: %d ranks is not a power of 2 (hypercube.cu "
					       "exchanges with rank ^ 2^k)", n);
	return 0;
}

/* The command line into a, what was said echoed (to stderr when a table goes to
 * stdout), the outputs checked; 0 or the exit code. */
static int read_command(int argc, char **argv, struct args *a)
{
	a->argc = argc;
	a->argv = argv;
	int rc = parse_args(argc, argv, a);
	bool quiet = (a->csv && !strcmp(a->csv, "-")) || (a->json && !strcmp(a->json, "-"));
	fputs(said, quiet ? stderr : stdout);
	if (rc)
		return rc;
	a->minb_asked = a->minb;
	a->maxb_asked = a->maxb;
	if ((rc = cli_check_output(a->csv)) || (rc = cli_check_output(a->json)))
		return rc;
	return 0;
}

/* No output may replace the topology, its GPU preset or the other output (cli_check_samefile). */
static int check_samefile(const struct args *a)
{
	struct samefile *sf = samefile_create();
	samefile_input(sf, "the topology", a->topo);
	samefile_inputs_read(sf, "a file it read", 0);
	samefile_output(sf, "--json", a->json);
	samefile_output(sf, "--csv", a->csv);
	int rc = cli_check_samefile(sf);
	samefile_destroy(sf);
	return rc;
}

/* The sizes of the sweep, -e capped to what t's GPUs hold, into *nsizes; the usage exit
 * when there are more than MAX_SIZES. */
static int count_sizes(struct args *a, const struct topology *t, int *nsizes)
{
	cap_max_bytes(a, t);
	*nsizes = collective_sizes(a, NULL, MAX_SIZES);
	if (*nsizes < 0)
		return cli_usage_error("the sweep from %.0f to %.0f bytes has more than %d sizes (nccl-tests "
				       "steps size x F for F > 1, else size + -i); raise -f or -i",
				       a->minb, a->maxb, MAX_SIZES);
	return 0;
}

/* Admission: the platform, the actors and every size's plan are allocated
 * before the run; refuses (longrun_admit's exit) what would not fit. */
static int admit(const struct args *a, int n, long used, int npts)
{
	char what[200];
	snprintf(what, sizeof(what), "collective on %d ranks (%ld nodes x %ld GPUs), %d size%s", n, a->nodes, used, npts,
		 npts == 1 ? "" : "s");
	return longrun_admit(what, estimate_collective_bytes(n, npts), a->mem_limit_bytes);
}

int cmd_collective(int argc, char **argv)
{
	/* common.cu's defaults */
	struct args a = {
		.algo = "auto", .nodes = 1, .threads = 1, .gpus = 1, .root = 0, .iters = 20,
		.warmup = 1, .agg = 1, .check = 1, .average = 1, .minb = 32.0 * 1024 * 1024,
		.maxb = 32.0 * 1024 * 1024, .stepf = 1, .stepb = 1024 * 1024, .redop = 0, .cycles = 1,
		.cta_policy = -1, .device_ctas = 16, .dtype = DTYPE_FLOAT, .ops = {COLL_ALLREDUCE},
		.nops = 1,
	};
	struct diag d;
	int rc = read_command(argc, argv, &a);
	if (rc)
		return rc;

	diag_init(&d, stderr);
	rc = EXIT_FAIL;
	struct topology *t = topology_load(a.topo, &d);
	if (!t) {
		diag_finish(&d);
		return EXIT_INPUT;
	}
	int nsizes = 0;
	if ((rc = check_samefile(&a)) || (rc = count_sizes(&a, t, &nsizes)))
		goto out_topo;
	long ppn = 1, used = 0;
	int n = 0;
	if ((rc = layout(&a, t, &ppn, &used, &n, &d)) || (rc = check_group(&a, t, n)))
		goto out_topo;
	rc = EXIT_FAIL;
	int G = t->gpus_per_node;

	long nrows_l = collective_nrows(&a, nsizes, n);
	if (nrows_l > MAX_ROWS) {
		rc = cli_usage_error("%ld rows (ops x dtypes x reduction ops x roots x cycles x sizes) exceed %d",
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
	collective_sizes(&a, sizes, nsizes);
	nrows = collective_rows(&a, sizes, nsizes, n, rows, pts, &npts);
	if ((rc = admit(&a, n, used, npts)))
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
