/* collective_json: nccl-tests v2.19.6's JSON report (-J FILE.json) of one
 * binary's run, as src/util.cu and src/common.cu write it (NVIDIA/nccl-tests
 * a0b82b2: jsonOutputInit(), writeDeviceReport(), writeBenchmarkLine*(),
 * writePerIterReport(), writeResultFooter(), writeErrors(),
 * jsonOutputFinalize()): file version 3, start and end time, the command's
 * arguments and environment, the NCCL version (ddlsim's model's, 22703), the
 * config with the devices, one result per row, out of bounds, the average
 * bus bandwidth, the errors (none). Compact JSON, keys in nccl-tests'
 * order; numbers as jansson writes them (nccl-tests: "%lf"). The file is
 * opened exclusively, as "wx" there: an existing FILE is kept and FILE.0,
 * FILE.1, ... tried, so each op of --ops gets its own file, as running the
 * binaries one after another does. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collective-private.h"
#include "engine.h"
#include "topology.h"

extern char **environ;

static json_t *now_str(void)
{
	char b[64];
	time_t now = time(NULL);
	struct tm tm;
	strftime(b, sizeof(b), "%Y-%m-%d %H:%M:%S", localtime_r(&now, &tm));
	return json_string(b);
}

static json_t *config_of(const struct args *a, const struct topology *t, int n)
{
	json_t *c = json_object(), *devs = json_array();
	json_object_set_new(c, "nthreads", json_integer(a->threads));
	json_object_set_new(c, "ngpus", json_integer(a->gpus));
	json_object_set_new(c, "minimum_bytes", json_integer((json_int_t)a->minb_asked));
	json_object_set_new(c, "maximum_bytes", json_integer((json_int_t)a->maxb_asked));
	if (a->stepf > 1)
		json_object_set_new(c, "step_factor", json_integer(a->stepf));
	else
		json_object_set_new(c, "step_bytes", json_integer((json_int_t)a->stepb));
	json_object_set_new(c, "warmup_iters", json_integer(a->warmup));
	json_object_set_new(c, "iterations", json_integer(a->iters));
	json_object_set_new(c, "aggregated_iterations", json_integer(a->agg));
	json_object_set_new(c, "validation", json_integer(a->check));
	json_object_set_new(c, "graph", json_integer(a->graph));
	json_object_set_new(c, "blocking_collectives", json_boolean(a->blocking));
	json_object_set_new(c, "per_iter_timing", json_boolean(a->per_iter));
	json_object_set_new(c, "per_iter_skip", json_integer(a->per_iter_skip));
	json_object_set_new(c, "parallel_init", json_boolean(a->pinit));
	long per_proc = a->threads * a->gpus, per_node = per_proc * (a->procs / a->nodes);
	for (int r = 0; r < n; r++) {
		char host[32], hex[32];
		snprintf(host, sizeof(host), "node%ld", r / per_node);
		snprintf(hex, sizeof(hex), "%04x:%02lx:%02x", 0, (unsigned long)(r % per_node), 0);
		json_array_append_new(devs, json_pack("{s:i, s:i, s:I, s:s, s:I, s:s, s:s}", "rank", r, "group", 0,
						      "pid", (json_int_t)(10000 + r / per_proc), "hostname", host,
						      "device", (json_int_t)(r % per_node), "device_hex", hex,
						      "device_info", t->gpu.name));
	}
	json_object_set_new(c, "devices", devs);
	return c;
}

/* One writeBenchmarkLineBody() (and writePerIterReport() with -I). */
static void add_body(json_t *res, const struct args *a, bool oop, double us, double alg, double bus)
{
	json_object_set_new(res, oop ? "out_of_place" : "in_place",
			    json_pack("{s:f, s:f, s:f, s:o}", a->cputime ? "cpu_time" : "time", us, "alg_bw", alg,
				      "bus_bw", bus, "nwrong", a->check ? json_real(0) : json_null()));
	if (!a->per_iter)
		return;
	json_t *times = json_array();
	for (long i = 0; i < a->iters; i++)
		json_array_append_new(times, json_real(us));
	json_object_set_new(res, oop ? "out_of_place_per_iter" : "in_place_per_iter",
			    json_pack("{s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:o}", "skipped_iterations",
				      (json_int_t)a->per_iter_skip, "min_us", us, "max_us", us, "avg_us", us, "p50_us",
				      us, "p95_us", us, "p99_us", us, "stdev_us", 0.0, "cv_pct", 0.0, "times_us", times));
}

/* FILE, else FILE.0, FILE.1, ... opened exclusively; the name in *used. */
static FILE *open_exclusive(const char *path, char *used, size_t len)
{
	snprintf(used, len, "%s", path);
	for (int k = 0; k < 1000; k++) {
		int fd = open(used, O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd >= 0)
			return fdopen(fd, "w");
		if (errno != EEXIST)
			return NULL;
		snprintf(used, len, "%s.%d", path, k);
	}
	return NULL;
}

int collective_write_nccl_json(FILE *say, const struct args *a, const struct topology *t, int n,
			       const struct row *rows, int r0, int r1, const struct engine_coll_point *pts,
			       double avg_bus, double min_bw)
{
	char used[4200];
	FILE *f = open_exclusive(a->output_file, used, sizeof(used));
	if (!f) {
		fprintf(say, "# skipping json output; %s not accessible\n", used);
		return 0;
	}
	fprintf(say, "# Writing JSON output to %s\n", used);
	json_t *doc = json_object(), *args = json_array(), *env = json_array(), *results = json_array();
	json_object_set_new(doc, "version", json_integer(3));
	json_object_set_new(doc, "start_time", now_str());
	for (int i = 0; i < a->argc; i++)
		json_array_append_new(args, json_string(a->argv[i]));
	json_object_set_new(doc, "args", args);
	for (char **e = environ; e && *e; e++)
		json_array_append_new(env, json_string(*e));
	json_object_set_new(doc, "env", env);
	json_object_set_new(doc, "nccl_version", json_integer(NCCL_TESTS_NCCL_CODE));
	json_object_set_new(doc, "config", config_of(a, t, n));
	for (int i = r0; i < r1; i++) {
		const struct row *r = &rows[i];
		char root[32];
		double alg, bus, us = pts[r->pt].time_s * 1e6;
		collective_bw(r, n, pts[r->pt].time_s, &alg, &bus);
		snprintf(root, sizeof(root), "%6i", r->root);
		json_t *res = json_pack("{s:I, s:I, s:s, s:s, s:s}", "size", (json_int_t)r->bytes, "count",
					(json_int_t)r->count, "type", nccl_dtypes[r->dtype].name, "redop",
					collective_redop_name(r->redop), "root", root);
		add_body(res, a, true, us, alg, bus);
		add_body(res, a, false, us, alg, bus);
		json_object_set_new(res, "actual_iterations", json_integer(a->iters));
		json_object_set_new(res, "experiment_name", json_string(""));
		json_array_append_new(results, res);
	}
	json_object_set_new(doc, "results", results);
	json_object_set_new(doc, "out_of_bounds", json_pack("{s:i, s:b}", "count", 0, "okay", 1));
	json_object_set_new(doc, "average_bus_bandwidth",
			    json_pack("{s:f, s:o}", "bandwidth", avg_bus, "okay",
				      min_bw == -1 ? json_string("unchecked") : json_boolean(avg_bus >= min_bw * 0.9)));
	json_object_set_new(doc, "errors", json_pack("[s]", ""));
	json_object_set_new(doc, "end_time", now_str());
	int rc = json_dumpf(doc, f, JSON_COMPACT | JSON_PRESERVE_ORDER);
	rc |= fclose(f);
	json_decref(doc);
	if (rc)
		fprintf(stderr, "ddlsim: error: -J %s: cannot write\n", used);
	return rc ? -1 : 0;
}
