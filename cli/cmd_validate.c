/* cmd_validate: `ddlsim validate FILE...` checks files without simulating;
 * `--platform NODES TOPOLOGY` builds a topology's platform.
 *
 * The kind of each file is read from its "schema" key, so scenarios,
 * models and topologies can be checked in one call. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "diag.h"
#include "engine.h"
#include "anatomy.h"
#include "jload.h"
#include "model.h"
#include "options.h"
#include "profile.h"
#include "scenario.h"
#include "search.h"
#include "sweep.h"
#include "topology.h"
#include "xalloc.h"

struct validate_opts {
	long platform_nodes;        /* --platform NODES; 0: not given */
};

/* --platform NODES: a node count, said as it always was. */
static int platform_option(const struct opt *o, const char *flag, const char *v, void *base)
{
	char *end;
	errno = 0;
	long nodes = strtol(v, &end, 10);
	(void)flag;
	if (errno || end == v || *end || nodes < 1 || nodes > TOPO_MAX_NODES)
		return cli_usage_error("--platform expects a node count from 1 to %d, got '%s'", TOPO_MAX_NODES, v);
	*(long *)((char *)base + o->off) = nodes;
	return 0;
}

static const struct opt validate_options[] = {
	{ .type = OPT_T_LONG, .long_name = "platform", OPT_F_(struct validate_opts, platform_nodes),
	  .argh = "NODES", .cb = platform_option, .example = "4", .flags = OPT_HIDDEN,
	  .help = "also build the simulator's platform of NODES nodes of one\n"
		  "topology file with every GPU (what a run without folding\n"
		  "builds) and print how long it took" },
	OPT_END(),
};

const struct opt_cmd cmd_validate_opts = {
	.name = "validate",
	.summary = "check scenario, model and topology files without simulating",
	.args = "FILE...",
	.usage_more = "       ddlsim validate --platform NODES TOPOLOGY\n",
	.description =
		"Checks scenario, model, topology, calibration profile, sweep and goal files (the kind\n"
		"comes from each file's \"schema\" key) and prints 'ok' or every problem found. A scenario is\n"
		"checked with the model and topology it references and its plan, and its plan's memory\n"
		"against its GPUs (the fullest stage's anatomy, as run computes it; a transformer's plan on\n"
		"one GPU type): 'ok, fits with N GB to spare' or 'valid, but does not fit'.\n",
	.options = validate_options,
	.epilogue =
		"examples:\n"
		"  ddlsim validate scenarios/*.json topologies/*.json models/zoo/*.json\n"
		"  ddlsim validate --platform 2048 topologies/dgx-h100-fattree3.json\n\n"
		"exit codes: 0 all valid, 1 the platform could not be built, 2 usage, 3 some file is\n"
		"invalid, 4 all valid but some scenario's plan does not fit in GPU memory\n",
	.size = sizeof(struct validate_opts),
};

struct point_ctx {
	struct sweep *s;
	struct inputs_cache *cache;
	bool loaded_one;        /* a point loaded: the rest only need their expressions */
};

/* A sweep point's scenario loads (checked until one does: a sweep of
 * invalid points only is what validate must catch). */
static int point_loads(void *ctx, json_t *doc, char *reason, size_t n)
{
	struct point_ctx *pc = ctx;
	if (pc->loaded_one)
		return 0;
	struct diag pd;
	diag_init(&pd, NULL);
	struct scenario *sc = scenario_load_json(doc, pc->s->base_path, pc->cache, &pd);
	if (!sc) {
		const char *t = diag_text(&pd);
		size_t len = strcspn(t, "\n");
		snprintf(reason, n, "%.*s", (int)(len < 400 ? len : 400), t);
	}
	diag_finish(&pd);
	pc->loaded_one = sc != NULL;
	scenario_destroy(sc);
	return pc->loaded_one ? 0 : -1;
}

/* A sweep: the file, then every point's expressions (sweep_check_points). */
static void validate_sweep(const char *path, struct diag *d)
{
	struct sweep *s = sweep_load(path, d);
	if (!s)
		return;
	struct point_ctx pc = { .s = s, .cache = inputs_cache_create() };
	sweep_check_points(s, d, point_loads, &pc);
	inputs_cache_destroy(pc.cache);
	sweep_destroy(s);
}

/* A valid scenario's memory verdict, after "PATH: ": how much it
 * spares or misses on its fullest stage (anatomy_worst(), what run's
 * stages hold but the per-node-group check of mixed clusters, which a
 * run does). Returns false when it does not fit. */
static bool memory_verdict(const struct scenario *sc, char *buf, size_t n)
{
	const struct model *m = inputs_model(sc->in);
	if (m->arch == MODEL_ARCH_CNN || sc->plan.ngroups > 0) {
		snprintf(buf, n, "ok");
		return true;
	}
	struct mem_anatomy a;
	int stage = 0;
	anatomy_worst(sc->in, &sc->plan, &a, &stage);
	double gb = 1e9;
	if (a.total_bytes <= a.capacity_bytes) {
		snprintf(buf, n, "ok, fits with %.1f GB to spare (stage %d needs %.1f GB of %.1f GB)",
			 (a.capacity_bytes - a.total_bytes) / gb, stage, a.total_bytes / gb, a.capacity_bytes / gb);
		return true;
	}
	snprintf(buf, n, "valid, but does not fit: stage %d needs %.1f GB per GPU of %.1f GB (short by %.1f GB); "
		 "'ddlsim run' shows its memory anatomy", stage, a.total_bytes / gb, a.capacity_bytes / gb,
		 (a.total_bytes - a.capacity_bytes) / gb);
	return false;
}

static int validate_one(const char *path, struct diag *d, char *verdict, size_t n, bool *fits)
{
	int before = diag_count(d);
	json_t *root = jload_file(path, d);
	if (!root)
		return -1;
	json_t *s = json_object_get(root, "schema");
	const char *schema = json_is_string(s) ? json_string_value(s) : "";
	char kind[64];
	snprintf(kind, sizeof(kind), "%s", schema);
	json_decref(root);

	*fits = true;
	snprintf(verdict, n, "ok");
	if (!strcmp(kind, "ddlsim.scenario")) {
		struct scenario *sc = scenario_load(path, d);
		if (sc)
			*fits = memory_verdict(sc, verdict, n);
		scenario_destroy(sc);
	} else if (!strcmp(kind, "ddlsim.sweep")) {
		validate_sweep(path, d);
	} else if (!strcmp(kind, "ddlsim.goal")) {
		goal_destroy(goal_load(path, d));
	} else if (!strcmp(kind, "ddlsim.model")) {
		model_destroy(model_load(path, d));
	} else if (!strcmp(kind, "ddlsim.topology")) {
		topology_destroy(topology_load(path, d));
	} else if (!strcmp(kind, "ddlsim.gpu")) {
		topology_gpu_preset_check(path, d);
	} else if (!strcmp(kind, "ddlsim.profile")) {
		profile_destroy(profile_load(path, d));
	} else {
		diag_err(d, path, "/schema", "expected \"ddlsim.scenario\", \"ddlsim.model\", "
			 "\"ddlsim.topology\", \"ddlsim.gpu\", \"ddlsim.profile\", \"ddlsim.sweep\" or \"ddlsim.goal\", got '%s'", kind);
	}
	return diag_count(d) == before ? 0 : -1;
}

/* `--platform NODES TOPOLOGY`: load the topology, build its platform. */
static int validate_platform(long nodes, const char *path)
{
	struct diag d;
	diag_init(&d, stderr);
	struct topology *t = topology_load(path, &d);
	double s = 0;
	long hosts = 0;
	int rc = EXIT_INPUT;
	if (t) {
		rc = engine_platform_load(t, (int)nodes, &s, &hosts, &d) ? EXIT_FAIL : EXIT_OK;
		if (rc == EXIT_OK)
			printf("%s: ok, platform of %ld nodes (%ld GPUs) built in %.3f s\n", path,
			       nodes, hosts, s);
	}
	topology_destroy(t);
	diag_finish(&d);
	return rc;
}

int cmd_validate(int argc, char **argv)
{
	struct validate_opts o = { 0 };
	const char **files = xcalloc((size_t)argc, sizeof(*files));
	struct diag d;
	int n = 0, bad = 0, nofit = 0, rc = EXIT_USAGE;

	if (opt_parse(&cmd_validate_opts, argc, argv, &o, files, &n))
		goto out;
	if (o.platform_nodes) {
		if (n != 1)
			rc = cli_usage_error("'validate --platform' needs a node count and one topology file");
		else
			rc = validate_platform(o.platform_nodes, files[0]);
		goto out;
	}
	if (n < 1) {
		rc = cli_usage_error("'validate' needs at least one file");
		goto out;
	}
	diag_init(&d, stderr);
	for (int i = 0; i < n; i++) {
		char verdict[400];
		bool fits = true;
		if (validate_one(files[i], &d, verdict, sizeof(verdict), &fits))
			bad++;
		else
			printf("%s: %s\n", files[i], verdict);
		nofit += !fits;
	}
	diag_finish(&d);
	rc = bad ? EXIT_INPUT : nofit ? EXIT_NOFIT : EXIT_OK;
out:
	free(files);
	return rc;
}
