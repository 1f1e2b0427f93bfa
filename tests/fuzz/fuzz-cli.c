/* fuzz-cli: libFuzzer targets for two commands' inputs (issue 40): what
 * `ddlsim merge` reads and `ddlsim collective`'s arguments.
 *
 * FUZZ_MERGE: the input is a shard and its origin record: byte 0 picks
 * the format (bit 0: JSON lines, else CSV) and --partial (bit 1); the
 * rest up to the first NUL byte is written as
 * points.shard-1-of-2.{csv,jsonl}, what follows it (when there is a NUL)
 * as points.shard-1-of-2.ddlsim-origin.json; then cmd_merge() joins the
 * shard into out.{csv,jsonl} (removed after). merge may refuse the input
 * with any message and exit code, but must never crash, leak, hang or
 * read out of bounds.
 *
 * FUZZ_COLLECTIVE: the input is the arguments after `collective`,
 * separated by NUL bytes (at most 64); they are parsed by the command's
 * own parse_args() (cmd_collective.c is included: its parser is static),
 * and what it accepts goes on through the steps before the engine: the
 * sizes, the layout on topologies/dgx-h100.json, the rows and the memory
 * estimate. A refusal is fine; an accepted set of arguments must give
 * sizes and rows within their bounds. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ddlsim-config.h"

#if defined(FUZZ_MERGE)
#include "cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Write n bytes of p to path; false when it cannot. */
static bool put(const char *path, const uint8_t *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return false;
	bool ok = fwrite(p, 1, n, f) == n;
	return fclose(f) == 0 && ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char dir[128];
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/ddlsim-fuzz-merge-%ld", (long)getpid());
		if (mkdir(dir, 0700) && errno != EEXIST)
			abort();
	}
	if (size < 1)
		return 0;
	bool jsonl = data[0] & 1, partial = data[0] & 2;
	const char *ext = jsonl ? "jsonl" : "csv";
	const uint8_t *nul = memchr(data + 1, 0, size - 1);
	size_t shard_n = nul ? (size_t)(nul - (data + 1)) : size - 1;
	char shard[256], origin[256], out[256], out_origin[256];
	snprintf(shard, sizeof(shard), "%s/points.shard-1-of-2.%s", dir, ext);
	snprintf(origin, sizeof(origin), "%s/points.shard-1-of-2.ddlsim-origin.json", dir);
	snprintf(out, sizeof(out), "%s/out.%s", dir, ext);
	snprintf(out_origin, sizeof(out_origin), "%s/out.ddlsim-origin.json", dir);
	unlink(origin);
	if (!put(shard, data + 1, shard_n) ||
	    (nul && !put(origin, nul + 1, size - (size_t)(nul + 1 - data))))
		return 0;
	char *argv[] = { "merge", partial ? "--partial" : out, partial ? out : shard, partial ? shard : NULL,
			 NULL };
	cmd_merge(partial ? 4 : 3, argv);
	unlink(out);
	unlink(out_origin);
	return 0;
}

#elif defined(FUZZ_COLLECTIVE)
/* the command's static parser and steps */
#include "../../cli/cmd_collective.c"

#define FUZZ_MAX_ARGS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct topology *t;
	if (!t) {
		struct diag d;
		diag_init(&d, stderr);
		t = topology_load(DDLSIM_SOURCE_DIR "/topologies/dgx-h100.json", &d);
		diag_finish(&d);
		if (!t)
			abort();
	}
	char *buf = malloc(size + 1), *argv[FUZZ_MAX_ARGS + 2];
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	buf[size] = 0;
	int argc = 0;
	argv[argc++] = "collective";
	for (char *p = buf; p < buf + size + 1 && argc <= FUZZ_MAX_ARGS; p += strlen(p) + 1)
		argv[argc++] = p;
	argv[argc] = NULL;
	struct args a = {
		.algo = "auto", .nodes = 1, .threads = 1, .gpus = 1, .root = 0, .iters = 20,
		.warmup = 1, .agg = 1, .check = 1, .average = 1, .minb = 32.0 * 1024 * 1024,
		.maxb = 32.0 * 1024 * 1024, .stepf = 1, .stepb = 1024 * 1024, .redop = 0, .cycles = 1,
		.cta_policy = -1, .device_ctas = 16, .dtype = DTYPE_FLOAT, .ops = {COLL_ALLREDUCE},
		.nops = 1,
	};
	if (parse_args(argc, argv, &a) == 0) {
		cap_max_bytes(&a, t);
		int nsizes = collective_sizes(&a, NULL, MAX_SIZES);
		if (nsizes > MAX_SIZES)
			abort();  /* collective_sizes() stops at the bound */
		long ppn = 1, used = 0;
		int n = 0;
		struct diag d;
		diag_init(&d, NULL);
		if (nsizes > 0 && layout(&a, t, &ppn, &used, &n, &d) == 0 && check_group(&a, t, n) == 0) {
			if (n < 1 || n > TOPO_MAX_NODES * TOPO_MAX_GPUS_PER_NODE || a.root >= n)
				abort();  /* layout() bounds the ranks and the root */
			long nrows = collective_nrows(&a, nsizes, n);
			double *sizes = nrows <= MAX_ROWS ? calloc((size_t)nsizes, sizeof(*sizes)) : NULL;
			struct row *rows = sizes ? calloc((size_t)nrows, sizeof(*rows)) : NULL;
			struct engine_coll_point *pts = rows ? calloc((size_t)nrows, sizeof(*pts)) : NULL;
			int npts = 0;
			if (sizes && rows && pts) {
				collective_sizes(&a, sizes, nsizes);
				if (collective_rows(&a, sizes, nsizes, n, rows, pts, &npts) != nrows || npts > nrows)
					abort();
				if (!(estimate_collective_bytes(n, npts) > 0))
					abort();
			}
			free(pts);
			free(rows);
			free(sizes);
		}
		diag_finish(&d);
	}
	free(buf);
	return 0;
}

#else
#error "define FUZZ_MERGE or FUZZ_COLLECTIVE"
#endif
