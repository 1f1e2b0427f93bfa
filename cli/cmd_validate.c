/* cmd_validate: `ddlsim validate FILE...` checks files without simulating.
 *
 * The kind of each file is read from its "schema" key, so scenarios,
 * models and topologies can be checked in one call. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "diag.h"
#include "engine.h"
#include "jload.h"
#include "model.h"
#include "profile.h"
#include "scenario.h"
#include "search.h"
#include "sweep.h"
#include "topology.h"

void cmd_validate_usage(FILE *f)
{
	fprintf(f, "usage: ddlsim validate FILE...\n"
		   "       ddlsim validate --platform NODES TOPOLOGY\n\n"
		   "Checks scenario, model, topology, calibration profile, sweep and goal files (the kind\n"
		   "comes from each file's \"schema\" key) and prints 'ok' or every problem found. A scenario is\n"
		   "checked with the model and topology it references and its plan.\n\n"
		   "--platform NODES  also build the simulator's platform of NODES nodes of one topology file\n"
		   "                  with every GPU (what a run without folding builds) and print how long\n"
		   "                  it took\n\n"
		   "examples:\n"
		   "  ddlsim validate scenarios/*.json topologies/*.json models/zoo/*.json\n"
		   "  ddlsim validate --platform 2048 topologies/dgx-h100-fattree3.json\n\n"
		   "exit codes: 0 all valid, 1 the platform could not be built, 2 usage, 3 some file is\n"
		   "invalid\n");
}

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

static int validate_one(const char *path, struct diag *d)
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

	if (!strcmp(kind, "ddlsim.scenario")) {
		struct scenario *sc = scenario_load(path, d);
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
static int validate_platform(const char *arg, const char *path)
{
	char *end;
	long nodes = strtol(arg, &end, 10);
	if (end == arg || *end || nodes < 1 || nodes > TOPO_MAX_NODES)
		return cli_usage_error("--platform expects a node count from 1 to %d, got '%s'",
				       TOPO_MAX_NODES, arg);
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
	struct diag d;
	int bad = 0;

	if (argc >= 2 && !strcmp(argv[1], "--platform")) {
		if (argc != 4)
			return cli_usage_error("'validate --platform' needs a node count and one topology file");
		return validate_platform(argv[2], argv[3]);
	}
	if (argc < 2)
		return cli_usage_error("'validate' needs at least one file");
	for (int i = 1; i < argc; i++)
		if (argv[i][0] == '-' && argv[i][1])
			return cli_usage_error("unknown option '%s' for 'validate'", argv[i]);
	diag_init(&d, stderr);
	for (int i = 1; i < argc; i++) {
		if (validate_one(argv[i], &d))
			bad++;
		else
			printf("%s: ok\n", argv[i]);
	}
	diag_finish(&d);
	return bad ? EXIT_INPUT : EXIT_OK;
}
