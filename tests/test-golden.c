/* test-golden: every shipped scenario's headline figures against the
 * values recorded in tests/golden/golden.json, to 1e-9 relative.
 *
 * The record makes refactors provably behaviour-preserving: a commit that
 * moves a shipped scenario's numbers on purpose re-records them
 * (tests/golden/record.py) and says why in its message. A scenario added
 * to scenarios/ without being recorded fails here too. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define REL_TOL 1e-9

static json_t *golden(void)
{
	json_error_t e;
	json_t *g = json_load_file(src_path("tests/golden/golden.json"), 0, &e);
	cr_assert(g, "tests/golden/golden.json:%d:%d: %s", e.line, e.column, e.text);
	cr_assert_str_eq(json_string_value(json_object_get(g, "schema_version")), "2.0",
			 "tests/golden/golden.json: schema_version: expected \"2.0\" (figures as name: report path)");
	cr_assert(json_is_object(json_object_get(g, "figures")),
		  "tests/golden/golden.json: figures: expected an object of report paths");
	return g;
}

static bool recorded(json_t *list, const char *rel)
{
	size_t i;
	json_t *row;
	json_array_foreach(list, i, row)
		if (strcmp(json_string_value(json_object_get(row, "scenario")), rel) == 0)
			return true;
	return false;
}

/* Count the scenario files under dir (relative to the source root) that
 * golden.json does not record; print each. */
static int unrecorded(json_t *list, const char *dir)
{
	DIR *dh = opendir(src_path(dir));
	struct dirent *de;
	int missing = 0;
	char rel[1024];

	cr_assert(dh, "cannot open %s", dir);
	while ((de = readdir(dh))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(rel, sizeof(rel), "%s/%s", dir, de->d_name);
		size_t n = strlen(de->d_name);
		if (n > 5 && strcmp(de->d_name + n - 5, ".json") == 0) {
			json_t *s = json_load_file(src_path(rel), 0, NULL);
			const char *schema = json_string_value(json_object_get(s, "schema"));
			if (schema && strcmp(schema, "ddlsim.scenario") == 0 && !recorded(list, rel)) {
				printf("not recorded: %s\n", rel);
				missing++;
			}
			json_decref(s);
		} else if (!strchr(de->d_name, '.'))
			missing += unrecorded(list, rel);
	}
	closedir(dh);
	return missing;
}

Test(golden, every_shipped_scenario_is_recorded)
{
	json_t *g = golden();
	json_t *list = json_object_get(g, "scenarios");
	cr_assert(json_array_size(list) >= 14, "golden.json records %zu scenarios", json_array_size(list));
	cr_expect_eq(unrecorded(list, "scenarios"), 0,
		     "shipped scenarios missing from tests/golden/golden.json (run tests/golden/record.py)");
	json_decref(g);
}

Test(golden, shipped_scenarios_reproduce_recorded_figures, .timeout = 900)
{
	json_t *g = golden();
	json_t *list = json_object_get(g, "scenarios"), *figs = json_object_get(g, "figures"), *row, *f;
	const char *name;
	size_t i;
	int bad = 0;

	json_array_foreach(list, i, row) {
		const char *rel = json_string_value(json_object_get(row, "scenario"));
		char *d = tmp_dir(), args[2048], *err = NULL;
		snprintf(args, sizeof(args), "run %s --out %s --quiet --format json", src_path(rel), d);
		cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s: %s", rel, err);
		json_t *r = load_report(d);
		cr_assert(r, "%s: no report", rel);
		json_object_foreach(figs, name, f) {
			const char *path = json_string_value(f);
			cr_assert(path, "golden.json: figure '%s' has no report path", name);
			cr_assert(json_is_number(json_object_get(row, name)), "golden.json: %s records no %s",
				  rel, name);
			double want = json_number_value(json_object_get(row, name));
			double got = jnum(r, path);
			double tol = REL_TOL * fmax(fabs(want), fabs(got));
			if (!(fabs(got - want) <= tol)) {
				printf("%s: %s = %.15g, recorded %.15g (%+.3g relative)\n", rel, name, got,
				       want, want ? got / want - 1 : got);
				bad++;
			}
		}
		json_decref(r);
		free(err);
		free(d);
	}
	fflush(stdout);
	cr_assert_eq(bad, 0, "%d figures differ from tests/golden/golden.json "
		     "(if on purpose: tests/golden/record.py, and say why in the commit)", bad);
	json_decref(g);
}
