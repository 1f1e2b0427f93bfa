/* test-jload: strict JSON reading: syntax positions, schema versions,
 * types, ranges and unknown keys. */
#include <criterion/criterion.h>
#include <string.h>

#include "jload.h"
#include "testutil.h"

static json_t *parse(const char *text)
{
	json_error_t e;
	return json_loads(text, 0, &e);
}

Test(jload, reports_syntax_error_with_line_and_column)
{
	char *d = tmp_dir();
	char *p = write_file(d, "bad.json", "{\n  \"a\": 1,\n  \"b\": }\n");
	struct diag dg;
	diag_init(&dg, NULL);
	cr_assert_null(jload_file(p, &dg));
	char want[1200];
	snprintf(want, sizeof(want), "%s:3:8: error: malformed JSON: unexpected token near '}'\n", p);
	cr_assert_str_eq(diag_text(&dg), want);
	diag_finish(&dg);
}

Test(jload, rejects_other_major_version_and_newer_minor)
{
	struct diag dg;
	diag_init(&dg, NULL);
	json_t *a = parse("{\"schema\":\"ddlsim.model\",\"schema_version\":\"2.0\"}");
	cr_assert_eq(jload_schema(a, "m.json", &dg, "ddlsim.model", 1, 0), -1);
	cr_assert_str_eq(diag_text(&dg), "m.json: /schema_version: error: unsupported major version 2 of "
			 "'ddlsim.model' (this ddlsim reads 1.x; convert the file to version 1.0)\n");
	json_decref(a);
	diag_finish(&dg);
	diag_init(&dg, NULL);
	a = parse("{\"schema\":\"ddlsim.model\",\"schema_version\":\"1.3\"}");
	cr_assert_eq(jload_schema(a, "m.json", &dg, "ddlsim.model", 1, 2), -1);
	json_decref(a);
	a = parse("{\"schema\":\"ddlsim.model\",\"schema_version\":\"1.1\"}");
	cr_assert_eq(jload_schema(a, "m.json", &dg, "ddlsim.model", 1, 2), 0);
	json_decref(a);
	diag_finish(&dg);
}

Test(jload, rejects_wrong_schema_name)
{
	struct diag dg;
	diag_init(&dg, NULL);
	json_t *a = parse("{\"schema\":\"ddlsim.topology\",\"schema_version\":\"1.0\"}");
	cr_assert_eq(jload_schema(a, "m.json", &dg, "ddlsim.model", 1, 0), -1);
	cr_assert_str_eq(diag_text(&dg), "m.json: /schema: error: expected \"ddlsim.model\", got 'ddlsim.topology'\n");
	json_decref(a);
	diag_finish(&dg);
}

Test(jload, reports_every_problem_with_its_path)
{
	struct diag dg;
	struct jobj jo, child;
	long n = 0;
	double x = 0;
	diag_init(&dg, NULL);
	json_t *a = parse("{\"schema\":\"s\",\"schema_version\":\"1.0\",\"n\":\"eight\","
			  "\"x\":-2,\"c\":{\"bw\":0,\"extra\":1},\"typo\":true}");
	jobj_init(&jo, a, "f.json", "", &dg);
	cr_assert_eq(jobj_int(&jo, "n", &n, 1, JREQ), -1);
	cr_assert_eq(jobj_num(&jo, "x", &x, JNONNEG), -1);
	cr_assert_eq(jobj_int(&jo, "missing", &n, 1, JREQ), -1);
	cr_assert_eq(jobj_child(&jo, "c", &child, JREQ), 1);
	cr_assert_eq(jobj_num(&child, "bw", &x, JPOS), -1);
	jobj_end(&child);
	jobj_end(&jo);
	cr_assert_eq(diag_count(&dg), 6);
	cr_assert_str_eq(diag_text(&dg),
			 "f.json: /n: error: expected an integer, got string\n"
			 "f.json: /x: error: must be >= 0, got -2\n"
			 "f.json: /missing: error: missing required key 'missing'\n"
			 "f.json: /c/bw: error: must be > 0, got 0\n"
			 "f.json: /c/extra: error: unknown key 'extra'\n"
			 "f.json: /typo: error: unknown key 'typo'\n");
	json_decref(a);
	diag_finish(&dg);
}

Test(jload, enum_lists_the_choices)
{
	struct diag dg;
	struct jobj jo;
	int e = 0;
	static const char *const names[] = { "gpipe", "1f1b", NULL };
	diag_init(&dg, NULL);
	json_t *a = parse("{\"s\":\"zb\"}");
	jobj_init(&jo, a, "f.json", "/p", &dg);
	cr_assert_eq(jobj_enum(&jo, "s", names, &e, JREQ), -1);
	cr_assert_str_eq(diag_text(&dg), "f.json: /p/s: error: expected one of {gpipe, 1f1b}, got 'zb'\n");
	json_decref(a);
	diag_finish(&dg);
}

Test(jload, resolves_paths_relative_to_the_file)
{
	char out[256];
	cr_assert_eq(jload_resolve("scenarios/a.json", "../models/m.json", out, sizeof(out)), 0);
	cr_assert_str_eq(out, "scenarios/../models/m.json");
	cr_assert_eq(jload_resolve("a.json", "m.json", out, sizeof(out)), 0);
	cr_assert_str_eq(out, "m.json");
	cr_assert_eq(jload_resolve("x/a.json", "/abs/m.json", out, sizeof(out)), 0);
	cr_assert_str_eq(out, "/abs/m.json");
}
