/* fuzz-loader: libFuzzer target for ddlsim's input loaders.
 *
 * Built once per loader (FUZZ_SCENARIO, FUZZ_MODEL, FUZZ_TOPOLOGY,
 * FUZZ_PROFILE) with clang's -fsanitize=fuzzer,address,undefined (meson
 * option fuzz=enabled). Each input is written to a temporary file and
 * loaded; a loader may reject it with any message but must never crash,
 * leak, hang or read out of bounds. The temporary file sits in a
 * directory beside links to the source tree's models/, topologies/ and
 * tests/, so a scenario's "../models/zoo/..." paths resolve as they do
 * for shipped scenarios and the plan checks behind the loader are fuzzed
 * too. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ddlsim-config.h"

#include "diag.h"
#include "model.h"
#include "profile.h"
#include "scenario.h"
#include "topology.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[256];
	struct diag d;

	if (!path[0]) {
		char dir[128], link[192];
		snprintf(dir, sizeof(dir), "/tmp/ddlsim-fuzz-%ld", (long)getpid());
		mkdir(dir, 0700);
		static const char *const links[] = { "models", "topologies", "tests" };
		for (int i = 0; i < 3; i++) {
			snprintf(link, sizeof(link), "%s/%s", dir, links[i]);
			char target[512];
			snprintf(target, sizeof(target), "%s/%s", DDLSIM_SOURCE_DIR, links[i]);
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
#else
#error "define one of FUZZ_SCENARIO, FUZZ_MODEL, FUZZ_TOPOLOGY, FUZZ_PROFILE"
#endif
	diag_finish(&d);
	return 0;
}
