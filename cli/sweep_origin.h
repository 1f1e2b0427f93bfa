/* sweep_origin: which sweep (and shard) a sweep's output files belong to.
 *
 * Beside DIR/points.csv and DIR/points.jsonl (points.shard-I-of-N.*),
 * `ddlsim sweep` writes DIR/points.ddlsim-origin.json
 * (points.shard-I-of-N.ddlsim-origin.json):
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
 * are missing, and how many points each shard must hold (its indices
 * are those with index mod shards = shard - 1, below points). The origin
 * is CSV-free, so the points files stay plain tables.
 *
 * The name cannot be a user's file: ddlsim once named it
 * "points.sweep.json", the name a user gives a sweep file, so `merge
 * results.csv ...` would have replaced a sweep named results.sweep.json.
 * That old name is still read (outputs written before), but only when the
 * file is an origin (schema ddlsim.sweep-origin); it is never written.
 * sweep_origin_write() refuses to replace a file that is not an origin. */
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
 * give "d/points.ddlsim-origin.json". Caller frees. */
char *sweep_origin_path(const char *points_file);

/* The largest point count an origin may record (sim/sweep.h's bound). */
#define SWEEP_ORIGIN_MAX_POINTS 10000000L

/* The points of shard o->shard of o->shards, of o->points: those with
 * index mod shards = shard - 1. */
long sweep_origin_shard_points(const struct sweep_origin *o);
/* Whether point index belongs to o's shard. */
bool sweep_origin_has_point(const struct sweep_origin *o, long index);

/* Hash sweep_path and base_path (util/infile.h rules). Returns 0, or -1
 * with why[] set. */
int sweep_origin_hash(const char *sweep_path, const char *base_path, char hash[17], char *why, size_t n);

/* Whether points_file's origin may be written: its name is free or holds
 * an origin. Returns 0, or -1 with why[] set ("'d/x.ddlsim-origin.json'
 * exists and is not a sweep origin record (schema ddlsim.sweep-origin):
 * refusing to replace it"). */
int sweep_origin_check_target(const char *points_file, char *why, size_t n);

/* Write o as points_file's origin (atomically). Returns 0, -errno, or
 * -EEXIST when a file that is not an origin has its name (refused). */
int sweep_origin_write(const char *points_file, const struct sweep_origin *o);

/* Read points_file's origin (the old name "d/points.sweep.json" when the
 * new one is absent and that file is an origin). Returns 1 when read, 0
 * when there is none (why[] says so), -1 when it is unreadable or
 * malformed (why[] set). */
int sweep_origin_read(const char *points_file, struct sweep_origin *o, char *why, size_t n);

/* Whether a and b are the same sweep (name, hash, points). */
bool sweep_origin_same(const struct sweep_origin *a, const struct sweep_origin *b);

#endif
