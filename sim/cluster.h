/* cluster: several training jobs on one fabric, simulated together so
 * that their flows share its links.
 *
 * A cluster file (schema "ddlsim.cluster" 1.0) names the jobs, each a
 * scenario file, the fabric's node count, and where each job runs:
 *
 *   key            type     default   meaning
 *   name           string   required  the cluster's name (reports)
 *   description    string   ""        free text
 *   nodes          int      required  nodes of the fabric: the topology
 *                                     every job's scenario names
 *   placement      string   packed    packed: each job in turn on the
 *                                     lowest free nodes; spread: the
 *                                     jobs take free nodes in turn, one
 *                                     at a time
 *   jobs[]         array    required  two or more (one is a scenario)
 *     name         string   required  the job's name (unique)
 *     scenario     path     required  its scenario (resolved beside this
 *                                     file); it runs on as many nodes as
 *                                     it says
 *     nodes        int[]    placed    the fabric's nodes it runs on, in
 *                                     its node order (its node k is
 *                                     nodes[k]); the others are placed
 *                                     around them
 *
 * Job node k on fabric node m puts the job's rank r = k G + l (G GPUs a
 * node) on the fabric's GPU m G + l. The jobs are simulated together
 * (simulate_run_many): their flows share the fabric's links. A job plans
 * its collectives as if its nodes were the first ones of the fabric (a
 * ring's order, a tree's shape); the flows then cross the links between
 * the nodes it really has. */
#ifndef DDLSIM_CLUSTER_H
#define DDLSIM_CLUSTER_H

#include "diag.h"
#include "result.h"
#include "scenario.h"

#define CLUSTER_MAX_JOBS 64

enum cluster_placement { CLUSTER_PACKED, CLUSTER_SPREAD };

struct cluster_job {
	char name[64];
	char scenario[4096];            /* the scenario's path, as resolved */
	struct scenario *sc;            /* owned */
	int nnodes;                     /* the scenario's nodes */
	int *node;                      /* [nnodes] fabric nodes, owned */
	bool listed;                    /* node came from the file (jobs[].nodes) */
	int nranks;
	int *gpu;                       /* [nranks] fabric GPUs, owned */
};

struct cluster {
	char path[4096];
	char name[128];
	char description[512];
	int nodes;                      /* the fabric's */
	int gpus_per_node;
	enum cluster_placement placement;
	struct cluster_job job[CLUSTER_MAX_JOBS];
	int njobs;
};

extern const char *const cluster_placement_names[];  /* "packed", "spread", NULL */

/* Load the cluster file at path, its jobs' scenarios, and place them.
 * Returns a new cluster (cluster_destroy()) or NULL after reporting every
 * problem into d (file, JSON path, what was expected and found). */
struct cluster *cluster_load(const char *path, struct diag *d);
void cluster_destroy(struct cluster *c);

/* Place c's jobs without listed nodes by p (c->placement set to it)
 * around the listed ones, and every job's ranks on the fabric's GPUs.
 * Returns 0 or -1 (reported: overlapping lists, no room). */
int cluster_place(struct cluster *c, enum cluster_placement p, struct diag *d);

/* Simulate the jobs of c together (only < 0), or job `only` alone on its
 * nodes of the same fabric, into r[0 .. njobs - 1] (alone: r[0]);
 * result_finish() each of them, whatever is returned. Returns 0 or -1
 * (reported). Runs the engine: once per process. */
int cluster_run(const struct cluster *c, int only, struct result *r, struct diag *d);

#endif
