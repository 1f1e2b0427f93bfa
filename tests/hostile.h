/* hostile.h: the helpers test-hostile.c and test-hardening.c share: a
 * shipped file with one key replaced, a refused command with nothing left
 * behind, a sweep over the shipped base scenario. Static: each suite is
 * its own executable. */
#ifndef DDLSIM_TESTS_HOSTILE_H
#define DDLSIM_TESTS_HOSTILE_H

#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* Write a copy of shipped file rel into dir/name with key (a JSON pointer
 * without the leading '/', components split by '/') set to v (stolen);
 * relative paths in the file are made absolute first (fix: the keys that
 * hold paths). Returns the path (malloc'd). */
static char *variant(const char *dir, const char *name, const char *rel, const char *key, json_t *v)
{
	json_t *root = json_load_file(src_path(rel), 0, NULL);
	cr_assert_not_null(root, "%s", rel);
	static const char *const paths[] = { "model", "topology", "base", NULL };
	for (int i = 0; paths[i]; i++) {
		json_t *p = json_object_get(root, paths[i]);
		if (json_is_string(p)) {
			/* rel is relative to the source root: drop its file name */
			char rel2[1024], dirpart[512];
			snprintf(dirpart, sizeof(dirpart), "%s", rel);
			char *cut = strrchr(dirpart, '/');
			*cut = 0;
			snprintf(rel2, sizeof(rel2), "%s/%s", dirpart, json_string_value(p));
			json_object_set_new(root, paths[i], json_string(src_path(rel2)));
		}
	}
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", key);
	json_t *o = root;
	char *save = NULL, *tok = strtok_r(buf, "/", &save), *next;
	for (; (next = strtok_r(NULL, "/", &save)); tok = next)
		o = json_is_array(o) ? json_array_get(o, (size_t)atoi(tok)) : json_object_get(o, tok);
	cr_assert_not_null(o, "%s in %s", key, rel);
	if (json_is_array(o))
		json_array_set_new(o, (size_t)atoi(tok), v);
	else
		json_object_set_new(o, tok, v);
	char *text = json_dumps(root, JSON_INDENT(1));
	json_decref(root);
	char *path = write_file(dir, name, text);
	free(text);
	return path;
}

/* `ddlsim ARGS` exits with want, its stderr contains msg, and dir/out
 * does not exist (nothing was written). */
static void refused(const char *args, int want, const char *msg, const char *dir)
{
	char *err = NULL, out_dir[1200];
	int rc = run_ddlsim(args, NULL, &err);
	cr_expect_eq(rc, want, "%s: exit %d, want %d: %s", args, rc, want, err);
	cr_expect(err && strstr(err, msg), "%s: expected '%s' in:\n%s", args, msg, err);
	snprintf(out_dir, sizeof(out_dir), "%s/out", dir);
	cr_expect(!file_exists(out_dir), "%s left %s behind", args, out_dir);
	free(err);
}

static char *sweep_file(const char *dir, const char *body)
{
	char text[8192];
	snprintf(text, sizeof(text),
		 "{\"schema\": \"ddlsim.sweep\", \"schema_version\": \"1.0\", \"base\": \"%s\",\n"
		 " \"output\": {\"dir\": \"%s/out\"}, %s}\n",
		 src_path("scenarios/llama3-70b-h100-base.json"), dir, body);
	return write_file(dir, "sweep.json", text);
}

/* ---- ranges: finite ends and steps, counted before expanding ---- */

#endif
