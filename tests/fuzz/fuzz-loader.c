/* fuzz-loader: libFuzzer target for ddlsim's input loaders.
 *
 * Built once per loader (FUZZ_SCENARIO, FUZZ_MODEL, FUZZ_TOPOLOGY,
 * FUZZ_PROFILE, FUZZ_SWEEP, FUZZ_GOAL) and once for the expression
 * language (FUZZ_EXPR: the input is the expression) with clang's
 * -fsanitize=fuzzer,address,undefined (meson option fuzz=enabled). A
 * sweep that loads has its first FUZZ_POINTS points expanded (ranges,
 * derived values, constraints). Each input is written to a temporary file and
 * loaded; a loader may reject it with any message but must never crash,
 * leak, hang or read out of bounds. The temporary file sits in a
 * directory beside links to the source tree's models/, topologies/ and
 * tests/, so a scenario's "../models/zoo/..." paths resolve as they do
 * for shipped scenarios and the plan checks behind the loader are fuzzed
 * too. */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ddlsim-config.h"

#include "diag.h"
#include "expr.h"
#include "model.h"
#include "profile.h"
#include "scenario.h"
#include "search.h"
#include "sweep.h"
#include "topology.h"

#define FUZZ_POINTS 16

#if defined(FUZZ_EXPR)
/* Variables of the fuzzed expressions: a few names with values, one not
 * finite (it must be refused, never reach a result). */
static bool var(void *ctx, const char *name, size_t len, double *out)
{
	static const struct { const char *name; double v; } vars[] = {
		{ "tp", 8 }, { "pp", 4 }, { "dp", 16 }, { "nodes", 32 }, { "big", 1e308 },
		{ "nan", 0.0 / 0.0 }, { NULL, 0 }
	};
	(void)ctx;
	for (int i = 0; vars[i].name; i++)
		if (strlen(vars[i].name) == len && !memcmp(vars[i].name, name, len)) {
			*out = vars[i].v;
			return true;
		}
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *src = malloc(size + 1), err[200];
	double x;
	bool boolean;
	if (!src)
		return 0;
	memcpy(src, data, size);
	src[size] = 0;
	if (expr_eval_typed(src, var, NULL, &x, &boolean, err, sizeof(err)) == 0 && !isfinite(x))
		abort();  /* the evaluator promises a finite result */
	free(src);
	return 0;
}
#else

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[256];
	struct diag d;

	if (!path[0]) {
		char dir[128], link[192];
		snprintf(dir, sizeof(dir), "/tmp/ddlsim-fuzz-%ld", (long)getpid());
		mkdir(dir, 0700);
		static const char *const links[] = { "models", "topologies", "tests", "gpus", "s" };
		for (int i = 0; i < 5; i++) {
			snprintf(link, sizeof(link), "%s/%s", dir, links[i]);
			char target[512];
			snprintf(target, sizeof(target), "%s/%s", DDLSIM_SOURCE_DIR,
				 i == 4 ? "scenarios" : links[i]);
			if (symlink(target, link) && errno != EEXIST)
				abort();
		}
		snprintf(link, sizeof(link), "%s/scenarios", dir);
		mkdir(link, 0700);
		snprintf(path, sizeof(path), "%s/scenarios/input.json", dir);
	}
	FILE *f = fopen(path, "wb");
	if (!f)
		return 0;
	fwrite(data, 1, size, f);
	fclose(f);
	diag_init(&d, NULL);
#if defined(FUZZ_SCENARIO)
	scenario_destroy(scenario_load(path, &d));
#elif defined(FUZZ_MODEL)
	model_destroy(model_load(path, &d));
#elif defined(FUZZ_TOPOLOGY)
	topology_destroy(topology_load(path, &d));
#elif defined(FUZZ_PROFILE)
	profile_destroy(profile_load(path, &d));
#elif defined(FUZZ_SWEEP)
	struct sweep *s = sweep_load(path, &d);
	for (long i = 0; s && i < s->npoints && i < FUZZ_POINTS; i++) {
		json_t *values;
		char reason[512];
		json_decref(sweep_point(s, i, &values, reason, sizeof(reason)));
		json_decref(values);
	}
	sweep_destroy(s);
#elif defined(FUZZ_GOAL)
	goal_destroy(goal_load(path, &d));
#else
#error "define one of FUZZ_SCENARIO, FUZZ_MODEL, FUZZ_TOPOLOGY, FUZZ_PROFILE, FUZZ_SWEEP, FUZZ_GOAL, FUZZ_EXPR"
#endif
	diag_finish(&d);
	return 0;
}
#endif
