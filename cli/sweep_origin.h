/* sweep_origin: which sweep (and shard) a sweep's output files belong to.
 *
 * Beside DIR/points.csv and DIR/points.jsonl (points.shard-I-of-N.*),
 * `ddlsim sweep` writes DIR/points.sweep.json (points.shard-I-of-N.sweep.json):
 *
 *     {"schema": "ddlsim.sweep-origin", "schema_version": "1.0",
 *      "sweep": "llama3-70b-h100", "hash": "9c1e...", "points": 96,
 *      "shard": 1, "shards": 4}
 *
 * hash is FNV-1a 64 of the sweep file's bytes followed by its base
 * scenario's, so an edited sweep or base is another sweep. `sweep
 * --resume` continues an output only when its origin matches (another
 * sweep's output with the same point numbers is refused, not taken as
 * done), and `merge` joins only shards of one sweep and says which shards
 * are missing. The origin is CSV-free, so the points files stay plain
 * tables. */
#ifndef DDLSIM_SWEEP_ORIGIN_H
#define DDLSIM_SWEEP_ORIGIN_H

#include <stdbool.h>
#include <stddef.h>

struct sweep_origin {
	char sweep[256];    /* the sweep's name */
	char hash[17];      /* 16 hex digits */
	long points;        /* points of the whole sweep */
	long shard, shards; /* 1-based; 1 of 1 = the whole sweep */
};

/* The origin file of a points file: "d/points.csv" and "d/points.jsonl"
 * give "d/points.sweep.json". Caller frees. */
char *sweep_origin_path(const char *points_file);

/* Hash sweep_path and base_path (util/infile.h rules). Returns 0, or -1
 * with why[] set. */
int sweep_origin_hash(const char *sweep_path, const char *base_path, char hash[17], char *why, size_t n);

/* Write o as points_file's origin (atomically). Returns 0 or -errno. */
int sweep_origin_write(const char *points_file, const struct sweep_origin *o);

/* Read points_file's origin. Returns 1 when read, 0 when there is none
 * (why[] says so), -1 when it is unreadable or malformed (why[] set). */
int sweep_origin_read(const char *points_file, struct sweep_origin *o, char *why, size_t n);

/* Whether a and b are the same sweep (name, hash, points). */
bool sweep_origin_same(const struct sweep_origin *a, const struct sweep_origin *b);

#endif
