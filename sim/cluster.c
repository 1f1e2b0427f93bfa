/* cluster: several jobs on one fabric, loaded, placed and simulated
 * together (see cluster.h). */
#include "cluster.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "jload.h"
#include "simulate.h"
#include "topology.h"
#include "xalloc.h"

const char *const cluster_placement_names[] = { "packed", "spread", NULL };

void cluster_destroy(struct cluster *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->njobs; i++) {
		scenario_destroy(c->job[i].sc);
		free(c->job[i].node);
		free(c->job[i].gpu);
	}
	free(c);
}

/* Whether files a and b are one (device and inode). */
static bool same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* jobs[i]: its name, scenario (loaded) and explicit nodes, if any. */
static int load_job(struct cluster *c, json_t *v, const char *jpath, struct cluster_job *j,
		    struct diag *d)
{
	struct jobj jo;
	const char *rel = NULL;
	json_t *nodes = NULL;
	char npath[300];
	int bad = 0;

	if (jobj_init(&jo, v, c->path, jpath, d))
		return -1;
	bad |= jobj_str_copy(&jo, "name", j->name, sizeof(j->name), JREQ | JFILENAME) < 0;
	bad |= jobj_str(&jo, "scenario", &rel, JREQ | JPATH) < 0;
	bad |= jobj_array(&jo, "nodes", &nodes, npath, sizeof(npath), 0) < 0;
	if (!bad && rel && (jload_resolve(c->path, rel, j->scenario, sizeof(j->scenario)) ||
			    jload_check_ref(&jo, "scenario", j->scenario)))
		bad = 1;
	bad |= jobj_end(&jo) < 0;
	if (bad)
		return -1;
	if (!(j->sc = scenario_load(j->scenario, d)))
		return -1;
	j->nnodes = j->sc->plan.nodes;
	j->nranks = (int)plan_gpus(&j->sc->plan, j->sc->in);
	if (!nodes)
		return 0;
	if ((int)json_array_size(nodes) != j->nnodes)
		return diag_err(d, c->path, npath, "expected the %d nodes the scenario runs on, found %zu",
				j->nnodes, json_array_size(nodes));
	j->node = xcalloc((size_t)j->nnodes, sizeof(int));
	j->listed = true;
	for (int k = 0; k < j->nnodes; k++) {
		json_t *e = json_array_get(nodes, (size_t)k);
		char ep[320];
		snprintf(ep, sizeof(ep), "%s/%d", npath, k);
		if (!json_is_integer(e))
			return diag_err(d, c->path, ep, "expected a node of the fabric, 0 to %d, found %s",
					c->nodes - 1, jload_type_name(e));
		json_int_t m = json_integer_value(e);
		if (m < 0 || m >= c->nodes)
			return diag_err(d, c->path, ep, "expected a node of the fabric, 0 to %d, found %lld",
					c->nodes - 1, (long long)m);
		j->node[k] = (int)m;
	}
	return 0;
}

/* Frees the nodes of the jobs that do not list theirs and every job's GPUs; marks the
 * listed nodes' owners in owner[]; -1 after reporting a node listed twice. */
static int claim_listed(struct cluster *c, int *owner, struct diag *d)
{
	for (int i = 0; i < c->njobs; i++) {
		struct cluster_job *j = &c->job[i];
		if (!j->listed) {
			free(j->node);
			j->node = NULL;
		}
		free(j->gpu);
		j->gpu = NULL;
		for (int k = 0; j->listed && k < j->nnodes; k++) {
			int m = j->node[k];
			if (owner[m] >= 0) {
				char ep[64];
				snprintf(ep, sizeof(ep), "/jobs/%d/nodes/%d", i, k);
				if (owner[m] == i)
					diag_err(d, c->path, ep, "expected each node once, found node %d again", m);
				else
					diag_err(d, c->path, ep, "expected a node no other job holds, found node "
						 "%d (job '%s' holds it)", m, c->job[owner[m]].name);
				return -1;
			}
			owner[m] = i;
		}
	}
	return 0;
}

/* Whether the free nodes hold the jobs without listed nodes; -1 after reporting. */
static int check_room(const struct cluster *c, const int *owner, struct diag *d)
{
	int need = 0, free_nodes = 0;
	for (int i = 0; i < c->njobs; i++)
		need += c->job[i].listed ? 0 : c->job[i].nnodes;
	for (int m = 0; m < c->nodes; m++)
		free_nodes += owner[m] < 0;
	if (need > free_nodes) {
		diag_err(d, c->path, "/nodes", "expected room for the jobs: they need %d more nodes, the "
			 "fabric has %d free of %d", need, free_nodes, c->nodes);
		return -1;
	}
	return 0;
}

/* The free nodes to the jobs without listed nodes, in node order: packed, each job's
 * nodes together; spread, one node to each job in turn. */
static void assign_free(struct cluster *c, int *owner)
{
	int *got = xcalloc((size_t)c->njobs, sizeof(int));
	for (int i = 0; i < c->njobs; i++) {
		if (c->job[i].listed)
			got[i] = c->job[i].nnodes;
		else
			c->job[i].node = xcalloc((size_t)c->job[i].nnodes, sizeof(int));
	}
	int m = 0;
	if (c->placement == CLUSTER_PACKED) {
		for (int i = 0; i < c->njobs; i++)
			while (got[i] < c->job[i].nnodes) {
				while (owner[m] >= 0)
					m++;
				owner[m] = i;
				c->job[i].node[got[i]++] = m;
			}
	} else {
		for (bool more = true; more;) {
			more = false;
			for (int i = 0; i < c->njobs; i++) {
				if (got[i] >= c->job[i].nnodes)
					continue;
				while (owner[m] >= 0)
					m++;
				owner[m] = i;
				c->job[i].node[got[i]++] = m;
				more = true;
			}
		}
	}
	free(got);
}

int cluster_place(struct cluster *c, enum cluster_placement p, struct diag *d)
{
	int *owner = xcalloc((size_t)c->nodes, sizeof(int)), rc = -1, gpn = c->gpus_per_node;
	c->placement = p;
	for (int m = 0; m < c->nodes; m++)
		owner[m] = -1;
	if (claim_listed(c, owner, d) || check_room(c, owner, d))
		goto out;
	assign_free(c, owner);
	for (int i = 0; i < c->njobs; i++) {
		struct cluster_job *j = &c->job[i];
		j->gpu = xcalloc((size_t)j->nranks + 1, sizeof(int));
		for (int r = 0; r < j->nranks; r++)
			j->gpu[r] = j->node[r / gpn] * gpn + r % gpn;
	}
	rc = 0;
out:
	free(owner);
	return rc;
}

/* Job i beside the jobs before it: a name of its own, the first job's fabric and GPUs
 * a node, no what-ifs, its ranks on its nodes (jobs at jpath); -1 after reporting. */
static int check_job(const struct cluster *c, int i, const char *path, const char *jpath,
		     struct diag *d)
{
	const struct cluster_job *j0 = &c->job[0], *j = &c->job[i];
	const char *fabric = inputs_topology_path(j0->sc->in);
	int gpn = inputs_topology(j0->sc->in)->gpus_per_node, bad = 0;
	char np[340], sp[340];

	snprintf(np, sizeof(np), "%s/%d/name", jpath, i);
	snprintf(sp, sizeof(sp), "%s/%d/scenario", jpath, i);
	for (int k = 0; k < i; k++)
		if (!strcmp(j->name, c->job[k].name))
			bad = diag_err(d, path, np, "expected a name no other job has, found '%s' (job "
				       "%d's)", j->name, k);
	if (!same_file(inputs_topology_path(j->sc->in), fabric))
		bad = diag_err(d, path, sp, "expected a scenario on the fabric of job '%s' (%s), found "
			       "one on %s", j0->name, fabric, inputs_topology_path(j->sc->in));
	else if (inputs_topology(j->sc->in)->gpus_per_node != gpn)
		bad = diag_err(d, path, sp, "expected %d GPUs a node, as job '%s' uses, found %d", gpn,
			       j0->name, inputs_topology(j->sc->in)->gpus_per_node);
	else if (!simulate_can_share(&j->sc->plan))
		bad = diag_err(d, path, sp, "expected a job without parameter servers, degraded "
			       "links, throttled GPUs, stragglers or sampled iterations (a job beside "
			       "others is simulated once, whole), found %s with some", j->scenario);
	else if (j->nranks > j->nnodes * gpn)
		bad = diag_err(d, path, sp, "expected at most %d ranks on its %d nodes, found %d",
			       j->nnodes * gpn, j->nnodes, j->nranks);
	return bad;
}

/* The fabric's size, before placing: a node count beyond what the jobs' topology t0
 * holds would place (and simulate) nothing it can build; -1 after reporting. */
static int check_size(const struct cluster *c, const struct topology *t0, const char *path,
		      struct diag *d)
{
	long cap = topology_node_capacity(t0);
	if (c->nodes > TOPO_MAX_NODES || c->nodes > cap)
		return diag_err(d, path, "/nodes", "expected at most %ld nodes, the most %s, got %d",
				cap < TOPO_MAX_NODES ? cap : TOPO_MAX_NODES,
				cap < TOPO_MAX_NODES ? "the jobs' topology holds" : "ddlsim simulates",
				c->nodes);
	return 0;
}

struct cluster *cluster_load(const char *path, struct diag *d)
{
	struct cluster *c = xcalloc(1, sizeof(*c));
	json_t *root = NULL, *jobs = NULL;
	struct jobj jo;
	char jpath[300];
	long nodes = 0;
	int place_idx = CLUSTER_PACKED, bad = 0;

	if (jload_copy_path(path, c->path, sizeof(c->path), d) || !(root = jload_file(path, d)) ||
	    jload_schema(root, path, d, "ddlsim.cluster", 1, 0) || jobj_init(&jo, root, path, "", d))
		goto fail;
	bad |= jobj_str_copy(&jo, "name", c->name, sizeof(c->name), JREQ | JFILENAME) < 0;
	bad |= jobj_str_copy(&jo, "description", c->description, sizeof(c->description), 0) < 0;
	bad |= jobj_int(&jo, "nodes", &nodes, 1, JREQ) < 0;
	bad |= jobj_enum(&jo, "placement", cluster_placement_names, &place_idx, 0) < 0;
	bad |= jobj_array(&jo, "jobs", &jobs, jpath, sizeof(jpath), JREQ) < 0;
	bad |= jobj_end(&jo) < 0;
	if (bad)
		goto fail;
	c->nodes = (int)nodes;
	c->placement = (enum cluster_placement)place_idx;
	size_t n = json_array_size(jobs);
	if (n < 2 || n > CLUSTER_MAX_JOBS) {
		diag_err(d, path, jpath, "expected 2 to %d jobs (one job is a scenario: ddlsim run), found %zu",
			 CLUSTER_MAX_JOBS, n);
		goto fail;
	}
	for (size_t i = 0; i < n; i++) {
		char ep[320];
		snprintf(ep, sizeof(ep), "%s/%zu", jpath, i);
		bad |= load_job(c, json_array_get(jobs, i), ep, &c->job[c->njobs++], d) < 0;
	}
	if (bad)
		goto fail;
	const struct cluster_job *j0 = &c->job[0];
	int gpn = inputs_topology(j0->sc->in)->gpus_per_node;
	for (int i = 0; i < c->njobs; i++)
		bad |= check_job(c, i, path, jpath, d);
	if (check_size(c, inputs_topology(j0->sc->in), path, d))
		bad = -1;
	c->gpus_per_node = gpn;
	if (bad || cluster_place(c, c->placement, d))
		goto fail;
	json_decref(root);
	return c;
fail:
	json_decref(root);
	cluster_destroy(c);
	return NULL;
}

int cluster_run(const struct cluster *c, int only, struct result *r, struct diag *d)
{
	struct simulate_member m[CLUSTER_MAX_JOBS];
	int n = 0;
	for (int i = 0; i < c->njobs; i++) {
		if (only >= 0 && i != only)
			continue;
		const struct cluster_job *j = &c->job[i];
		m[n++] = (struct simulate_member){ j->sc->in, &j->sc->plan, j->gpu };
	}
	const struct inputs *in0 = c->job[0].sc->in;
	return simulate_run_many(m, n, inputs_topology(in0), c->nodes, r, d);
}
