/* sweep_origin: the sweep a points file belongs to (see sweep_origin.h). */
#include "sweep_origin.h"

#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomic_file.h"
#include "infile.h"
#include "xalloc.h"

char *sweep_origin_path(const char *points_file)
{
	size_t n = strlen(points_file);
	const char *dot = strrchr(points_file, '.'), *slash = strrchr(points_file, '/');
	if (dot && (!slash || dot > slash))
		n = (size_t)(dot - points_file);
	return xasprintf("%.*s.sweep.json", (int)n, points_file);
}

static int hash_file(const char *path, uint64_t *h, char *why, size_t n)
{
	FILE *f = infile_open(path, why, n);
	if (!f)
		return -1;
	int c;
	while ((c = getc(f)) != EOF) {
		*h ^= (unsigned char)c;
		*h *= 0x100000001b3ULL;
	}
	int bad = ferror(f);
	fclose(f);
	if (bad)
		snprintf(why, n, "cannot read '%s'", path);
	return bad ? -1 : 0;
}

int sweep_origin_hash(const char *sweep_path, const char *base_path, char hash[17], char *why, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	if (hash_file(sweep_path, &h, why, n) || hash_file(base_path, &h, why, n))
		return -1;
	snprintf(hash, 17, "%016llx", (unsigned long long)h);
	return 0;
}

int sweep_origin_write(const char *points_file, const struct sweep_origin *o)
{
	char *path = sweep_origin_path(points_file);
	json_t *j = json_pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:I}", "schema", "ddlsim.sweep-origin",
			      "schema_version", "1.0", "sweep", o->sweep, "hash", o->hash,
			      "points", (json_int_t)o->points, "shard", (json_int_t)o->shard,
			      "shards", (json_int_t)o->shards);
	char *text = j ? json_dumps(j, JSON_PRESERVE_ORDER) : NULL;
	char *full = text ? xasprintf("%s\n", text) : NULL;
	int rc = full ? atomic_file_write(path, full, strlen(full)) : -ENOMEM;
	json_decref(j);
	free(text);
	free(full);
	free(path);
	return rc;
}

int sweep_origin_read(const char *points_file, struct sweep_origin *o, char *why, size_t n)
{
	char *path = sweep_origin_path(points_file);
	int rc = -1;
	memset(o, 0, sizeof(*o));
	FILE *f = infile_open(path, why, n);
	if (!f) {
		rc = errno == ENOENT ? 0 : -1;
		if (!rc)
			snprintf(why, n, "'%s' has no origin file '%s'", points_file, path);
		free(path);
		return rc;
	}
	json_error_t je;
	json_t *j = json_loadf(f, 0, &je);
	fclose(f);
	const char *s = json_string_value(json_object_get(j, "sweep"));
	const char *h = json_string_value(json_object_get(j, "hash"));
	json_t *p = json_object_get(j, "points"), *i = json_object_get(j, "shard"),
	       *k = json_object_get(j, "shards");
	if (!s || !h || strlen(h) != 16 || !json_is_integer(p) || !json_is_integer(i) || !json_is_integer(k) ||
	    json_integer_value(k) < 1 || json_integer_value(i) < 1 || json_integer_value(i) > json_integer_value(k)) {
		snprintf(why, n, "'%s' is not a sweep origin file (expected the keys sweep, hash, points, shard, shards)",
			 path);
	} else {
		snprintf(o->sweep, sizeof(o->sweep), "%s", s);
		memcpy(o->hash, h, 17);
		o->points = (long)json_integer_value(p);
		o->shard = (long)json_integer_value(i);
		o->shards = (long)json_integer_value(k);
		rc = 1;
	}
	json_decref(j);
	free(path);
	return rc;
}

bool sweep_origin_same(const struct sweep_origin *a, const struct sweep_origin *b)
{
	return !strcmp(a->sweep, b->sweep) && !strcmp(a->hash, b->hash) && a->points == b->points;
}
