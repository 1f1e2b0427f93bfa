/* test-nccl-validation: ddlsim's NCCL model against public nccl-tests
 * measurements (the JSON files of validation/nccl). Each row's busbw is the plan's
 * closed form (what the engine replays when nothing else shares the
 * links); the mean absolute relative busbw error over every row must not
 * rise above RATCHET. Lower RATCHET when the model improves; never fit a
 * constant to these measurements. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "coll.h"
#include "diag.h"
#include "topology.h"
#include "testutil.h"

/* recorded (2026-11-23, 60 rows, table in validation/nccl/README.md):
 * H100 ring 2.6 % and 2.3 %, NVLS 21.4 % (NCCL's NVLS model predicts busbw
 * 583 GB/s where 480 are measured); one DGX-class A100 node 2-4 % from
 * 256 MiB up but 2x too fast from 64 B to 2 MiB (a 32 us floor measured,
 * 15 us modelled) and 32-59 % too fast from 4 to 32 MiB; two A100 nodes on
 * 100G RoCE without QP tuning 50-620 % too fast (measured 72 GB/s busbw,
 * the same nodes with NCCL_IB_QPS_PER_CONNECTION=4 measure 223, model 192);
 * mean 105.4 %. Then (2026-11-26, 61 rows) Jean Zay's 4 A100 nodes on
 * Omni-Path: NCCL 2.10.3 ran its ring through one port per direction
 * without GPUDirect RDMA, 5.07 GB/s busbw; the model, with the port at
 * that measured 40.5 Gb/s, spreads the ring over four ports: 20.0 GB/s,
 * +294 %: mean 108.5 %. The mean is dominated by the untuned RoCE log and
 * this one; it is a ratchet, not a goal. */
#define RATCHET 1.09

Test(nccl_validation, mean_busbw_error_stays_below_the_ratchet)
{
	char dir[2048];
	snprintf(dir, sizeof(dir), "%s", src_path("validation/nccl"));
	DIR *dp = opendir(dir);
	cr_assert(dp, "cannot open %s", dir);
	struct dirent *e;
	double sum = 0, tab_sum[COLL_NOPS][11] = {{0}};
	int rows = 0, tab_n[COLL_NOPS][11] = {{0}};
	while ((e = readdir(dp))) {
		size_t len = strlen(e->d_name);
		if (len < 5 || strcmp(e->d_name + len - 5, ".json"))
			continue;
		char path[4096], tp[2048];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		json_error_t je;
		json_t *j = json_load_file(path, 0, &je);
		cr_assert(j, "%s:%d:%d: %s", path, je.line, je.column, je.text);
		snprintf(tp, sizeof(tp), "%s", json_string_value(json_object_get(j, "topology")));
		struct diag d;
		diag_init(&d, stderr);
		struct topology *t = topology_load(src_path(tp), &d);
		cr_assert(t, "%s", diag_text(&d));
		diag_finish(&d);
		int nodes = (int)json_integer_value(json_object_get(j, "nodes"));
		int g = (int)json_integer_value(json_object_get(j, "gpus_per_node"));
		int op = coll_op_parse(json_string_value(json_object_get(j, "op")));
		const char *algo = json_string_value(json_object_get(j, "algo"));
		cr_assert(nodes >= 1 && g >= 1 && op >= 0 && algo, "%s: bad case", path);
		int n = nodes * g, r[4096];
		for (int k = 0; k < nodes; k++)
			for (int i = 0; i < g; i++)
				r[k * g + i] = k * t->gpus_per_node + i;
		size_t i;
		json_t *row;
		json_array_foreach(json_object_get(j, "rows"), i, row) {
			double S = json_number_value(json_object_get(row, "size_bytes"));
			double want = json_number_value(json_object_get(row, "busbw_GBps"));
			double t_us = json_number_value(json_object_get(row, "time_us"));
			if (t_us > 0) /* the time has more digits than busbw's 2 decimals */
				want = S / (t_us * 1e-6) * coll_bus_factor(op, n) / 1e9;
			struct coll_plan *p = coll_plan_create(t, algo, op, r, n, S);
			cr_assert(p, "%s: no plan", path);
			double busbw = S / p->ideal_time_s * coll_bus_factor(op, n) / 1e9;
			double err = fabs(busbw - want) / want;
			cr_log_info("%s %.0f B: model %.1f GB/s (%s/%s), measured %.1f, error %.1f%%",
				    e->d_name, S, busbw, p->algo, p->proto, want, 100 * err);
			sum += err;
			rows++;
			int dec = S >= 1 ? (int)floor(log10(S)) : 0;
			if (dec > 10)
				dec = 10;
			tab_sum[op][dec] += err;
			tab_n[op][dec]++;
			coll_plan_destroy(p);
		}
		topology_destroy(t);
		json_decref(j);
	}
	closedir(dp);
	cr_assert_gt(rows, 0);
	/* the error table of validation/nccl/README.md, per op and size decade */
	for (int op = 0; op < COLL_NOPS; op++)
		for (int k = 0; k < 11; k++)
			if (tab_n[op][k])
				cr_log_info("table %s 1e%d B: mean |busbw error| %.1f%% over %d rows",
					    coll_op_name(op), k, 100 * tab_sum[op][k] / tab_n[op][k], tab_n[op][k]);
	cr_expect_leq(sum / rows, RATCHET, "mean absolute busbw error %.1f%% over %d rows",
		      100 * sum / rows, rows);
}
