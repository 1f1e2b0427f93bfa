/* collective-private: what `ddlsim collective`'s files share (cli/ only):
 * cmd_collective.c parses and simulates, collective_rows.c steps the sizes
 * and lays out the rows in nccl-tests' order, collective_out.c writes what
 * nccl-tests prints, the CSV and the JSON. */
#ifndef DDLSIM_COLLECTIVE_PRIVATE_H
#define DDLSIM_COLLECTIVE_PRIVATE_H

#include <stdbool.h>
#include <stdio.h>

#include "coll.h"

struct atomic_file;
struct diag;
struct engine_coll_point;
struct topology;

/* The nccl-tests version matched (src/common.h NCCL_TESTS_VERSION,
 * github.com/NVIDIA/nccl-tests commit a0b82b2) and the NCCL version its
 * header line names: that of ddlsim's NCCL model (fabric/nccl_model.c,
 * NCCL 2.27.3, NCCL_VERSION_CODE 22703). */
#define NCCL_TESTS_VERSION "2.19.6"
#define NCCL_TESTS_NCCL_CODE 22703

/* nccl-tests' type names and sizes (common.cu test_typenames, NCCL >=
 * 2.24 with CUDA's fp8 types: f8e4m3, f8e5m2 last). */
struct nccl_dtype {
	const char *name;
	int size;
};
#define NDTYPES 12
#define NDTYPES_NO_FP8 10
#define DTYPE_FLOAT 7
extern const struct nccl_dtype nccl_dtypes[NDTYPES];
/* nccl-tests' reduction op names (common.cu test_opnames, NCCL >= 2.11). */
#define NREDOPS 6
extern const char *const nccl_redops[NREDOPS];
#define REDOP_NONE (-1)  /* printed "none" */
#define REDOP_EMPTY (-2) /* printed "" (hypercube.cu) */

/* nccl-tests' name of a collective (the binary's prefix). */
const char *nccl_test_name(enum coll_op op);

struct row {
	int op, dtype, redop;  /* redop REDOP_NONE or REDOP_EMPTY: no reduction */
	int root;              /* printed root: -1 where the test has none */
	double count;          /* elements, as nccl-tests prints them (paramcount) */
	double bytes;          /* size printed: max(send, recv) bytes */
	int pt;                /* simulated point */
};

struct args {
	const char *topo, *algo, *csv, *json, *output_file, *binary;
	int argc;              /* the command line, for -J's "args" */
	char **argv;
	long nodes, procs, threads, gpus, root, iters, warmup, agg, check, average, blocking, graph,
		cputime, pinit, stream_null, nccl_timeout, stepf, cycles, unalign, per_iter, per_iter_skip,
		timestamps, local_register, cta_policy, device_impl, device_ctas, memory;
	bool device_impl_set, device_ctas_set;
	double minb, maxb, stepb;
	double minb_asked, maxb_asked; /* as given: the header's, before run()'s memory cap */
	double mem_limit_bytes; /* 0: the default (cli/longrun.h) */
	int redop, dtype;      /* -1: all */
	int ops[COLL_NOPS], nops;
	int alltoallv_op;      /* what alltoallv simulates: COLL_ALLTOALLV or COLL_ALLTOALL (spread 0) */
	bool max_reduced;      /* maxBytes lowered to the GPU memory (run()) */
	bool fp8;              /* the GPU has fp8 (compute capability >= 9.0): in -d all */
};

/* The requested sizes, as nccl-tests' TimeTest() loop steps them, into
 * out (NULL: count only); -1 beyond max entries. */
int collective_sizes(const struct args *a, double *out, int max);

/* The rows of every op x dtype x reduction x root x cycle x size in
 * nccl-tests' order into rows (room for collective_nrows()), the distinct
 * (op, bytes) points to simulate into pts. Returns the rows' count; *npts
 * the points'. */
long collective_nrows(const struct args *a, int nsizes, int n);
int collective_rows(const struct args *a, const double *sizes, int nsizes, int n, struct row *rows,
		    struct engine_coll_point *pts, int *npts);

/* nccl-tests' algbw and busbw (GB/s) of row r in time_s (each test's
 * GetBw()). */
void collective_bw(const struct row *r, int n, double time_s, double *alg, double *bus);

/* The program name nccl-tests prints: BINARY's base name, or <op>_perf. */
void collective_program(const struct args *a, int op, char *buf, size_t len);

/* nccl-tests' output (one binary's run) for rows [r0, r1) of one op (and
 * its -J FILE.json report). 0; 1 if the average bus bandwidth is below 0.9
 * x NCCL_TESTS_MIN_BW (nccl-tests fails the run); -1 after reporting. */
int collective_print_nccl_tests(FILE *f, const struct args *a, const struct topology *t, int n,
				 const struct row *rows, int r0, int r1, const struct engine_coll_point *pts);

/* "none", "" or the reduction's name. */
const char *collective_redop_name(int redop);

/* nccl-tests' JSON report of rows [r0, r1) (-J FILE.json, collective_json.c),
 * its "# Writing JSON output to" line on say. 0 or -1 after reporting. */
int collective_write_nccl_json(FILE *say, const struct args *a, const struct topology *t, int n,
			       const struct row *rows, int r0, int r1, const struct engine_coll_point *pts,
			       double avg_bus, double min_bw);

/* Write the rows as CSV (json 0) or JSON to path's staged temporary *af
 * (published by the caller with the other output), or to stdout for
 * "-". 0 or -1 after reporting. */
int collective_write_out(const char *path, int json, const struct args *a, const struct topology *t,
			 const struct row *rows, int nrows, const struct engine_coll_point *pts, int n,
			 struct atomic_file *af, struct diag *d);

#endif
