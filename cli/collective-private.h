/* collective-private: what `ddlsim collective`'s files share (cli/ only):
 * cmd_collective.c parses and simulates, collective_out.c writes what
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

/* nccl-tests' type names and sizes (common.cu test_typenames, NCCL >= 2.10). */
struct nccl_dtype {
	const char *name;
	int size;
};
#define NDTYPES 10
extern const struct nccl_dtype nccl_dtypes[NDTYPES];
/* nccl-tests' reduction op names (common.cu test_opnames, NCCL >= 2.11). */
#define NREDOPS 6
extern const char *const nccl_redops[NREDOPS];

/* nccl-tests' name of a collective (the binary's prefix). */
const char *nccl_test_name(enum coll_op op);

struct row {
	int op, dtype, redop;  /* redop -1: "none" */
	double count;          /* elements, as nccl-tests prints them */
	double bytes;          /* size printed = ddlsim's N */
	int pt;                /* simulated point */
};

struct args {
	const char *topo, *algo, *csv, *json;
	long nodes, procs, threads, gpus, root, iters, warmup, agg, check, average, blocking, graph,
		cputime, pinit, stream_null, nccl_timeout;
	double minb, maxb, stepf, stepb;
	double mem_limit_bytes; /* 0: the default (cli/longrun.h) */
	int redop, dtype;      /* -1: all */
	int ops[COLL_NOPS], nops;
};

/* nccl-tests' output for rows [r0, r1) of one op. */
void collective_print_nccl_tests(FILE *f, const struct args *a, const struct topology *t, int n,
				 const struct row *rows, int r0, int r1, const struct engine_coll_point *pts);

/* Write the rows as CSV (json 0) or JSON to path's staged temporary *af
 * (published by the caller with the other output), or to stdout for
 * "-". 0 or -1 after reporting. */
int collective_write_out(const char *path, int json, const struct args *a, const struct topology *t,
			 const struct row *rows, int nrows, const struct engine_coll_point *pts, int n,
			 struct atomic_file *af, struct diag *d);

#endif
