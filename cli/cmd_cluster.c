/* cmd_cluster: `ddlsim cluster CLUSTER.json [--out DIR]`: several jobs on
 * one fabric (sim/cluster.h). Each job is simulated alone on its nodes of
 * the fabric (one child process each, through the runner), then all of
 * them together in this process, where their flows share the links; the
 * table and DIR/cluster.json (written atomically) give each job's figures
 * both ways and the slowdown sharing costs it. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "atomic_file.h"
#include "cli.h"
#include "cluster.h"
#include "ddlsim-config.h"
#include "options.h"
#include "report.h"
#include "runner.h"
#include "samefile.h"
#include "topology.h"
#include "xalloc.h"

struct cluster_opts {
	const char *out;
	bool quiet, placements;
	struct runner_opts ro;
};

static const struct opt cluster_options[] = {
	OPT_STRING('o', "out", struct cluster_opts, out, "DIR",
		   "write DIR/cluster.json (default out/<cluster name>)"),
	OPT_FLAG('q', "quiet", struct cluster_opts, quiet, "no table"),
	OPT_FLAG(0, "placements", struct cluster_opts, placements,
		 "also try every placement (packed, spread) of the jobs without listed nodes "
		 "and name the one that loses least"),
	OPT_RUNNER_JOBS(struct cluster_opts, ro, "jobs simulated alone at once (default 1)"),
	OPT_END(),
};

const struct opt_cmd cmd_cluster_opts = {
	.name = "cluster",
	.summary = "simulate several jobs sharing one fabric, each beside its run alone",
	.args = "CLUSTER",
	.description =
		"Loads a cluster file (schema ddlsim.cluster: the jobs, each a scenario on\n"
		"the same topology, the fabric's node count and where each job runs:\n"
		"packed, spread or listed nodes), simulates each job alone on its nodes,\n"
		"then every job together so that their flows share the fabric's links, and\n"
		"prints each job's iteration time, tokens per second and MFU both ways with\n"
		"the slowdown from sharing. Jobs are simulated whole (no folding); a job\n"
		"with parameter servers or what-ifs (stragglers, degraded links, sampled\n"
		"iterations) is refused. With --placements, the jobs whose nodes the file\n"
		"does not list are also placed each other way, every placement simulated\n"
		"alone and together, and the one whose GPU-weighted mean slowdown is\n"
		"least is named.\n",
	.options = cluster_options,
	.epilogue =
		"example:\n"
		"  ddlsim cluster clusters/two-jobs-2to1.json -j 2\n\n"
		"exit codes: 0 ok, 1 a simulation or the report failed, 2 usage, 3 invalid input\n",
	.size = sizeof(struct cluster_opts),
};

/* The runner's jobs: i < njobs, job i alone; with together, i >= njobs,
 * every job together, keeping job i - njobs's row. */
struct cctx {
	const struct cluster *c;
	struct result_row *alone, *shared;
};

static void job_run(void *ctx, int i, struct result_row *row)
{
	struct cctx *x = ctx;
	int n = x->c->njobs;
	struct result *r = xcalloc((size_t)n, sizeof(*r));
	struct diag d;
	diag_init(&d, NULL);
	if (cluster_run(x->c, i < n ? i : -1, r, &d))
		result_row_fail(row, RESULT_FAILED, diag_text(&d));
	else
		result_row_fill(row, &r[i < n ? 0 : i - n]);
	for (int k = 0; k < n; k++)
		result_finish(&r[k]);
	free(r);
	diag_finish(&d);
}

static void job_done(void *ctx, int i, const struct result_row *row)
{
	struct cctx *x = ctx;
	int n = x->c->njobs;
	if (i < n)
		x->alone[i] = *row;
	else
		x->shared[i - n] = *row;
}

/* The GPU-weighted mean slowdown of one placement; NAN if a run failed. */
static double mean_slowdown(const struct cluster *c, const struct result_row *alone,
			    const struct result_row *shared)
{
	double s = 0, g = 0;
	for (int i = 0; i < c->njobs; i++) {
		if (alone[i].status != RESULT_OK || shared[i].status != RESULT_OK || alone[i].iteration_s <= 0)
			return NAN;
		s += c->job[i].nranks * (shared[i].iteration_s / alone[i].iteration_s - 1);
		g += c->job[i].nranks;
	}
	return s / g;
}

/* Every placement of the jobs without listed nodes, each alone and
 * together in children, into root's "placements" and
 * "least_loss_placement"; c is placed back as loaded. Returns 0, or -1
 * (reported) when a placement or the runner fails. */
static int try_placements(struct cluster *c, const struct runner_opts *ro, json_t *root, struct diag *d)
{
	enum cluster_placement loaded = c->placement;
	int n = c->njobs, best = -1, rc = 0;
	double best_s = 0;
	json_t *arr = json_array();
	struct result_row *alone = xcalloc((size_t)n, sizeof(*alone));
	struct result_row *shared = xcalloc((size_t)n, sizeof(*shared));
	for (int p = 0; cluster_placement_names[p] && !rc; p++) {
		struct cctx x = { c, alone, shared };
		if (cluster_place(c, (enum cluster_placement)p, d) ||
		    runner_run(ro, 2 * n, job_run, job_done, &x, d)) {
			rc = -1;
			break;
		}
		double m = mean_slowdown(c, alone, shared);
		json_t *jobs = json_array();
		for (int i = 0; i < n; i++) {
			const struct result_row *a = &alone[i], *s = &shared[i];
			if (a->status == RESULT_OK && s->status == RESULT_OK)
				json_array_append_new(jobs, json_pack("{s:s, s:f, s:f, s:f}", "name", c->job[i].name,
								      "alone_iteration_time_s", a->iteration_s,
								      "shared_iteration_time_s", s->iteration_s,
								      "slowdown", s->iteration_s / a->iteration_s - 1));
			else
				json_array_append_new(jobs, json_pack("{s:s, s:s}", "name", c->job[i].name, "error",
								      a->status != RESULT_OK ? a->reason : s->reason));
		}
		json_t *o = json_pack("{s:s, s:o}", "placement", cluster_placement_names[p], "jobs", jobs);
		if (!isnan(m))
			json_object_set_new(o, "mean_slowdown", json_real(m));
		json_array_append_new(arr, o);
		if (!isnan(m) && (best < 0 || m < best_s))
			best = p, best_s = m;
	}
	json_object_set_new(root, "placements", arr);
	if (best >= 0)
		json_object_set_new(root, "least_loss_placement", json_string(cluster_placement_names[best]));
	if (!rc && cluster_place(c, loaded, d))
		rc = -1;
	free(alone);
	free(shared);
	return rc;
}

/* A slowdown in percent, rounding's -0.00 read as 0. */
static double pct(double x)
{
	return fabs(x) < 5e-5 ? 0 : 100 * x;
}

/* The placements' table (try_placements' JSON). */
static void print_placements(const json_t *arr, const json_t *best)
{
	size_t k;
	const json_t *p;
	printf("\n%-10s %10s  %s\n", "placement", "slowdown", "each job's (GPU-weighted mean first)");
	json_array_foreach(arr, k, p) {
		const json_t *m = json_object_get(p, "mean_slowdown"), *j;
		size_t i;
		printf("%-10s ", json_string_value(json_object_get(p, "placement")));
		if (m)
			printf("%+9.2f%% ", pct(json_number_value(m)));
		else
			printf("%10s ", "failed");
		json_array_foreach(json_object_get(p, "jobs"), i, j) {
			const json_t *s = json_object_get(j, "slowdown");
			printf(" %s %s", json_string_value(json_object_get(j, "name")), s ? "" : "failed");
			if (s)
				printf("%+.2f%%", pct(json_number_value(s)));
		}
		printf("\n");
	}
	if (best)
		printf("least loss: %s\n", json_string_value(best));
}

/* The links of the shared run that carried flows of two jobs or more,
 * most bytes first (at most SHARED_LINKS), into root's "shared_links":
 * each with its class, bandwidth, busy time and peak utilisation (every
 * job's flows: what the links carried), and its bytes per job. Crossbars
 * (every flow through a switch crosses its crossbar, which binds none)
 * are left out. */
#define SHARED_LINKS 10
struct shared_link {
	struct result_link l;
	double total;
	int njobs;
};

static int by_total(const void *a, const void *b)
{
	const struct shared_link *x = a, *y = b;
	return (x->total < y->total) - (x->total > y->total);
}

static void shared_links(const struct cluster *c, const struct result *r, json_t *root)
{
	int cap = 0, n = 0;
	struct shared_link *sl = NULL;
	for (int i = 0; i < c->njobs; i++)
		cap += result_nlinks(&r[i]);
	sl = xcalloc((size_t)cap + 1, sizeof(*sl));
	for (int i = 0; i < c->njobs; i++)
		for (int k = 0; k < result_nlinks(&r[i]); k++) {
			struct result_link l = result_link(&r[i], k);
			if (l.crossbar)
				continue;
			int m = 0;
			while (m < n && strcmp(sl[m].l.name, l.name))
				m++;
			if (m == n)
				sl[n++] = (struct shared_link){ .l = l };
			sl[m].total += l.bytes;
			sl[m].njobs++;
		}
	int w = 0;
	for (int m = 0; m < n; m++)
		if (sl[m].njobs > 1)
			sl[w++] = sl[m];
	qsort(sl, (size_t)w, sizeof(*sl), by_total);
	json_t *arr = json_array();
	for (int m = 0; m < w && m < SHARED_LINKS; m++) {
		json_t *by = json_object();
		for (int i = 0; i < c->njobs; i++)
			for (int k = 0; k < result_nlinks(&r[i]); k++) {
				struct result_link l = result_link(&r[i], k);
				if (!strcmp(l.name, sl[m].l.name))
					json_object_set_new(by, c->job[i].name, json_real(l.bytes));
			}
		json_t *o = json_pack("{s:s, s:s, s:f, s:f, s:o}", "name", sl[m].l.name, "class", sl[m].l.cls,
				      "bw_Bps", sl[m].l.bw_Bps, "bytes", sl[m].total, "bytes_by_job", by);
		json_object_set_new(o, "busy_s", sl[m].l.timed ? json_real(sl[m].l.busy_s) : json_null());
		json_object_set_new(o, "peak_util", sl[m].l.timed ? json_real(sl[m].l.peak_util) : json_null());
		json_array_append_new(arr, o);
	}
	json_object_set_new(root, "shared_links", arr);
	free(sl);
}

/* The hottest shared link's line (shared_links' JSON). */
static void print_hottest(const json_t *arr)
{
	const json_t *l = json_array_get(arr, 0), *u;
	if (!l) {
		printf("no link carried two jobs' flows\n");
		return;
	}
	printf("hottest shared link: %s (%s), %.3g GB an iteration (", json_string_value(json_object_get(l, "name")),
	       json_string_value(json_object_get(l, "class")), json_number_value(json_object_get(l, "bytes")) / 1e9);
	const char *k;
	json_t *v;
	bool first = true;
	json_object_foreach((json_t *)json_object_get(l, "bytes_by_job"), k, v) {
		printf("%s%s %.3g GB", first ? "" : ", ", k, json_number_value(v) / 1e9);
		first = false;
	}
	printf(")");
	if ((u = json_object_get(l, "peak_util")) && json_is_number(u))
		printf(", busy %.3g s, peak %.0f%% of %.3g GB/s", json_number_value(json_object_get(l, "busy_s")),
		       100 * json_number_value(u), json_number_value(json_object_get(l, "bw_Bps")) / 1e9);
	printf("\n");
}

/* A job's figures one way. */
static json_t *figures(const struct result_row *r)
{
	if (r->status != RESULT_OK)
		return json_pack("{s:s}", "error", r->reason);
	return json_pack("{s:f, s:f, s:f, s:f}", "iteration_time_s", r->iteration_s, "tokens_per_s",
			 r->tokens_per_s, "model_tflops_per_gpu", r->model_tflops_per_gpu, "mfu", r->mfu);
}

/* "0-31" or "0,2,4" (at most the first 8 runs, then "..."). */
static void node_text(const struct cluster_job *j, char *buf, size_t n)
{
	size_t len = 0;
	int runs = 0;
	buf[0] = 0;
	for (int k = 0; k < j->nnodes && len < n;) {
		int e = k;
		while (e + 1 < j->nnodes && j->node[e + 1] == j->node[e] + 1)
			e++;
		if (++runs > 8) {
			len += (size_t)snprintf(buf + len, n - len, ",...");
			break;
		}
		if (e > k)
			len += (size_t)snprintf(buf + len, n - len, "%s%d-%d", k ? "," : "", j->node[k], j->node[e]);
		else
			len += (size_t)snprintf(buf + len, n - len, "%s%d", k ? "," : "", j->node[k]);
		k = e + 1;
	}
}

static json_t *report(const struct cluster *c, const struct result_row *alone,
		      const struct result_row *shared, int gpn)
{
	json_t *jobs = json_array();
	for (int i = 0; i < c->njobs; i++) {
		const struct cluster_job *j = &c->job[i];
		json_t *nodes = json_array();
		for (int k = 0; k < j->nnodes; k++)
			json_array_append_new(nodes, json_integer(j->node[k]));
		json_t *o = json_pack("{s:s, s:s, s:o, s:i, s:o, s:o}", "name", j->name, "scenario",
				      j->scenario, "nodes", nodes, "gpus", j->nranks, "alone",
				      figures(&alone[i]), "shared", figures(&shared[i]));
		if (alone[i].status == RESULT_OK && shared[i].status == RESULT_OK && alone[i].iteration_s > 0)
			json_object_set_new(o, "slowdown", json_real(shared[i].iteration_s / alone[i].iteration_s - 1));
		json_array_append_new(jobs, o);
	}
	return json_pack("{s:s, s:s, s:{s:s, s:s}, s:s, s:s, s:{s:i, s:i}, s:s, s:o}", "schema",
			 "ddlsim.cluster_report", "schema_version", "1.0", "producer", "name", "ddlsim",
			 "version", DDLSIM_VERSION, "cluster", c->name, "description", c->description,
			 "fabric", "nodes", c->nodes, "gpus", c->nodes * gpn, "placement",
			 cluster_placement_names[c->placement], "jobs", jobs);
}

static void print_table(const struct cluster *c, const struct result_row *alone,
			const struct result_row *shared, int gpn)
{
	int used = 0;
	for (int i = 0; i < c->njobs; i++)
		used += c->job[i].nnodes;
	printf("cluster %s: %d jobs on %d of %d nodes (%d GPUs a node), %s\n", c->name, c->njobs, used,
	       c->nodes, gpn, cluster_placement_names[c->placement]);
	printf("%-20s %-16s %6s %14s %14s %9s %8s %8s\n", "job", "nodes", "gpus", "iter_s_alone",
	       "iter_s_shared", "slowdown", "mfu_alone", "mfu_shared");
	for (int i = 0; i < c->njobs; i++) {
		char nodes[64];
		node_text(&c->job[i], nodes, sizeof(nodes));
		const struct result_row *a = &alone[i], *s = &shared[i];
		if (a->status != RESULT_OK || s->status != RESULT_OK) {
			printf("%-20s %-16s %6d failed: %s\n", c->job[i].name, nodes, c->job[i].nranks,
			       a->status != RESULT_OK ? a->reason : s->reason);
			continue;
		}
		printf("%-20s %-16s %6d %14.6f %14.6f %+8.2f%% %8.1f%% %9.1f%%\n", c->job[i].name, nodes,
		       c->job[i].nranks, a->iteration_s, s->iteration_s, pct(s->iteration_s / a->iteration_s - 1),
		       100 * a->mfu, 100 * s->mfu);
	}
}

/* Refuses a report path that would replace one of the inputs (cli_check_samefile). */
static int check_samefile(const struct cluster *c, const struct cluster_opts *o, const char *file)
{
	struct samefile *sf = samefile_create();
	samefile_input(sf, "the cluster", c->path);
	for (int i = 0; i < c->njobs; i++)
		cli_note_scenario(sf, c->job[i].sc);
	samefile_inputs_read(sf, "a file it read", 0);
	samefile_output(sf, o->out ? "--out" : "the report", file);
	int rc = cli_check_samefile(sf);
	samefile_destroy(sf);
	return rc;
}

/* --placements: the other placements, in children, into extra; -1 when they failed. */
static int run_placements(struct cluster *c, const struct cluster_opts *o, json_t *extra,
			  struct diag *d)
{
	bool movable = false;
	for (int i = 0; i < c->njobs; i++)
		movable |= !c->job[i].listed;
	if (o->placements && !movable)
		diag_warn(d, c->path, "/jobs", "--placements: every job lists its nodes, so there is "
			  "no other placement to try");
	else if (o->placements && try_placements(c, &o->ro, extra, d))
		return -1;
	return 0;
}

/* Every job together, here, into shared[] and links; nonzero when the run failed. */
static int run_shared(struct cluster *c, struct result *r, struct result_row *shared, json_t *links,
		      struct diag *d)
{
	int bad = cluster_run(c, -1, r, d);
	if (!bad)
		shared_links(c, r, links);
	for (int i = 0; i < c->njobs; i++) {
		if (bad)
			result_row_fail(&shared[i], RESULT_FAILED, diag_text(d));
		else
			result_row_fill(&shared[i], &r[i]);
		result_finish(&r[i]);
	}
	return bad;
}

/* Writes the report, with extra and links, atomically to dir/file; -1 after reporting. */
static int write_report(const struct cluster *c, const struct result_row *alone,
			const struct result_row *shared, int gpn, json_t *extra, json_t *links,
			const char *dir, const char *file, struct diag *d)
{
	json_t *root = report(c, alone, shared, gpn);
	json_object_update(root, extra);
	json_object_update(root, links);
	char *text = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
	json_decref(root);
	int e = report_mkdirs(dir) ? -errno : 0;
	if (!e)
		e = text ? atomic_file_write(file, text, strlen(text)) : -ENOMEM;
	free(text);
	if (e) {
		diag_errf(d, "%s: cannot write: %s", file, atomic_file_strerror(-e));
		return -1;
	}
	return 0;
}

int cmd_cluster(int argc, char **argv)
{
	struct cluster_opts o = { .ro = { .jobs = 1 } };
	const char *pos[2] = { 0 };
	int npos = 0, rc = EXIT_USAGE;
	struct cluster *c = NULL;
	struct result_row *alone = NULL, *shared = NULL;
	struct result *r = NULL;
	char *dir = NULL, *file = NULL;
	json_t *extra = NULL, *links = NULL;

	if (opt_parse(&cmd_cluster_opts, argc, argv, &o, pos, &npos))
		return EXIT_USAGE;
	if (npos != 1)
		return cli_usage_error("'cluster' needs one cluster file");
	struct diag d;
	diag_init(&d, stderr);
	extra = json_object();
	rc = EXIT_INPUT;
	if (cli_check_input_name(pos[0]) || !(c = cluster_load(pos[0], &d)))
		goto out;
	int gpn = inputs_topology(c->job[0].sc->in)->gpus_per_node;
	dir = o.out ? xstrdup(o.out) : xasprintf("out/%s", c->name);
	file = xasprintf("%s/cluster.json", dir);
	if ((rc = cli_check_output(file)) || (rc = check_samefile(c, &o, file)))
		goto out;
	rc = EXIT_FAIL;
	alone = xcalloc((size_t)c->njobs, sizeof(*alone));
	shared = xcalloc((size_t)c->njobs, sizeof(*shared));
	r = xcalloc((size_t)c->njobs, sizeof(*r));
	struct cctx x = { c, alone, shared };
	if (runner_run(&o.ro, c->njobs, job_run, job_done, &x, &d))
		goto out;
	/* the other placements, in children: before any simulation here */
	if (run_placements(c, &o, extra, &d))
		goto out;
	/* together, here: no simulation ran in this process before */
	links = json_object();
	int bad = run_shared(c, r, shared, links, &d);
	if (write_report(c, alone, shared, gpn, extra, links, dir, file, &d))
		goto out;
	if (!o.quiet)
		print_table(c, alone, shared, gpn);
	if (!o.quiet && !bad)
		print_hottest(json_object_get(links, "shared_links"));
	if (!o.quiet && json_object_get(extra, "placements"))
		print_placements(json_object_get(extra, "placements"),
				 json_object_get(extra, "least_loss_placement"));
	int failed = bad;
	for (int i = 0; i < c->njobs; i++)
		failed |= alone[i].status != RESULT_OK;
	rc = failed ? EXIT_FAIL : EXIT_OK;
out:
	free(r);
	free(alone);
	free(shared);
	free(dir);
	free(file);
	json_decref(extra);
	json_decref(links);
	cluster_destroy(c);
	diag_finish(&d);
	return rc;
}
