/* sweep_origin: the sweep a points file belongs to (see sweep_origin.h). */
#include "sweep_origin.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomic_file.h"
#include "infile.h"
#include "xalloc.h"

/* points_file without its extension, then suffix. Caller frees. */
static char *beside(const char *points_file, const char *suffix)
{
	size_t n = strlen(points_file);
	const char *dot = strrchr(points_file, '.'), *slash = strrchr(points_file, '/');
	if (dot && (!slash || dot > slash))
		n = (size_t)(dot - points_file);
	return xasprintf("%.*s%s", (int)n, points_file, suffix);
}

char *sweep_origin_path(const char *points_file)
{
	return beside(points_file, ".ddlsim-origin.json");
}

long sweep_origin_shard_points(const struct sweep_origin *o)
{
	long first = o->shard - 1;
	return first < o->points ? (o->points - first + o->shards - 1) / o->shards : 0;
}

bool sweep_origin_has_point(const struct sweep_origin *o, long index)
{
	return index >= 0 && index < o->points && index % o->shards == o->shard - 1;
}

/* Whether the file at path is an origin (its "schema"). Opened directly,
 * not through util/infile.h: a file about to be replaced is not an input
 * of the command (util/samefile.h); only a small regular file is read. */
static bool is_origin(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return false;
	FILE *f = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < (1 << 20) ? fdopen(fd, "r") : NULL;
	if (!f) {
		close(fd);
		return false;
	}
	json_t *j = json_loadf(f, 0, NULL);
	fclose(f);
	const char *s = json_string_value(json_object_get(j, "schema"));
	bool yes = s && !strcmp(s, "ddlsim.sweep-origin");
	json_decref(j);
	return yes;
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

int sweep_origin_check_target(const char *points_file, char *why, size_t n)
{
	char *path = sweep_origin_path(points_file);
	int rc = 0;
	if (access(path, F_OK) == 0 && !is_origin(path)) {
		snprintf(why, n, "'%s' exists and is not a sweep origin record (schema ddlsim.sweep-origin): "
			 "refusing to replace it", path);
		rc = -1;
	}
	free(path);
	return rc;
}

int sweep_origin_write(const char *points_file, const struct sweep_origin *o)
{
	char why[8];
	if (sweep_origin_check_target(points_file, why, sizeof(why)))
		return -EEXIST;
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
	if (!f && errno == ENOENT) {
		/* an output written before the rename: its origin's old name */
		char *old = beside(points_file, ".sweep.json");
		if (access(old, F_OK) == 0 && is_origin(old)) {
			free(path);
			path = old;
			f = infile_open(path, why, n);
		} else {
			free(old);
			errno = ENOENT;
		}
	}
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
	    json_integer_value(k) < 1 || json_integer_value(i) < 1 || json_integer_value(i) > json_integer_value(k) ||
	    json_integer_value(p) < 0 || json_integer_value(p) > SWEEP_ORIGIN_MAX_POINTS) {
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
