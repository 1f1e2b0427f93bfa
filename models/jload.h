/* jload: strict, versioned JSON input for every ddlsim file format.
 *
 * Every ddlsim input file is a JSON object carrying "schema" and
 * "schema_version" ("MAJOR.MINOR"). A reader accepts its own major version
 * and any minor version up to the one it knows; another major is rejected
 * with a note on what changed. Keys are read through struct jobj, which
 * remembers which keys were consumed, so jobj_end() can report every key the
 * reader did not know: unknown keys are errors, never silently ignored.
 *
 * Errors carry the file and the JSON path (RFC 6901 style, "/a/b/0/c"),
 * what was expected and what was found; syntax errors carry line:column.
 * Getters never abort: they report into struct diag and return -1, leaving
 * the output untouched, so a loader can report every problem in one pass. */
#ifndef DDLSIM_JLOAD_H
#define DDLSIM_JLOAD_H

#include <jansson.h>
#include <stdbool.h>

#include "diag.h"


/* Keys one loader may read from one object: a limit on the loaders' own
 * code (a BUG when exceeded), never on what a file may contain. */
#define JLOAD_MAX_KEYS 256

/* A JSON object being read. Caller-owned; init/end bracket its use. */
struct jobj {
	json_t *o;                     /* borrowed */
	const char *file;              /* borrowed, for messages */
	struct diag *d;
	char path[256];                /* JSON path of this object ("" = root) */
	const char *seen[JLOAD_MAX_KEYS];
	int nseen;
};

/* Flags for numeric getters. */
enum {
	JREQ = 1 << 0,     /* key is required */
	JPOS = 1 << 1,     /* value must be > 0 */
	JNONNEG = 1 << 2,  /* value must be >= 0 */
	JUNIT = 1 << 3,    /* value must be in [0, 1] */
	JNAME = 1 << 4,    /* a string that is a name (an identifier shown on
			    * terminals and in reports): not empty, no control
			    * character at all (tab and newline included) */
	JFILENAME = 1 << 5, /* a name that also names an output directory
			     * (out/<name>): JNAME, at most NAME_MAX (255) bytes,
			     * no '/', not '.' or '..' */
	JPATH = 1 << 6,    /* a file or directory path: not empty (an empty
			    * one resolves to the directory of the file that
			    * names it: reports written beside a scenario) */
};

/* Parse path as JSON. It is opened through util/infile.h: only a regular
 * file of at most INFILE_MAX_BYTES is read (a FIFO, a directory or a
 * device is an error, never a hang).
 * Returns a new reference (caller json_decref()s) or NULL after reporting
 * "file:line:col: error: ..." or what the path is instead. */
json_t *jload_file(const char *path, struct diag *d);

/* Check root["schema"] == name and root["schema_version"] "MAJOR.MINOR"
 * with MAJOR == major and MINOR <= minor. Returns 0 or -1 (reported). */
int jload_schema(json_t *root, const char *file, struct diag *d,
		 const char *name, int major, int minor);

/* Start reading v at jpath as an object. Returns 0, or -1 if v is not an
 * object (reported). "schema" and "schema_version" count as seen at root. */
int jobj_init(struct jobj *jo, json_t *v, const char *file, const char *jpath,
	      struct diag *d);
/* Report every key of jo that no getter asked for. Returns 0 or -1. */
int jobj_end(struct jobj *jo);

/* True if key is present (and marks it seen). */
bool jobj_has(struct jobj *jo, const char *key);

/* Integers are bounded by INT_MAX (sizes in ddlsim fit an int).
 * Getters: 1 = read into *out, 0 = absent and optional (*out untouched),
 * -1 = error reported. */
int jobj_num(struct jobj *jo, const char *key, double *out, int flags);
int jobj_int(struct jobj *jo, const char *key, long *out, long min, int flags);
/* An optional int key in [min, max] into the int *out, what naming its
 * unit in the message when it is above max ("expected at most 8 ranks"). */
int jobj_int_at_most(struct jobj *jo, const char *key, long min, long max, const char *what, int *out);
/* An integer without the INT_MAX bound (byte counts). */
int jobj_long(struct jobj *jo, const char *key, long *out, long min, int flags);
int jobj_bool(struct jobj *jo, const char *key, bool *out, int flags);
/* *out borrows the string from the JSON tree. Every string is refused
 * when it holds a control character (C0 but tab and newline, DEL, C1:
 * terminal escapes reach no screen through a name or a message), a
 * JNAME / JFILENAME one as said above; the message names the character
 * (U+001B) and its byte, never echoes it. */
int jobj_str(struct jobj *jo, const char *key, const char **out, int flags);
/* Copy a string into a field of size bytes; a longer one is an error
 * naming the limit (never cut, so never cut inside a UTF-8 character). */
int jobj_str_copy(struct jobj *jo, const char *key, char *out, size_t size, int flags);
/* Copy a file name into a field; too long: an error, returns -1. */
int jload_copy_path(const char *path, char *out, size_t size, struct diag *d);
/* Match a string against names (NULL-terminated); *out = index. */
int jobj_enum(struct jobj *jo, const char *key, const char *const *names,
	      int *out, int flags);
/* The same over a registry: an array of structs of stride bytes whose
 * first member is the name (const char *), ended by a NULL name; *out is
 * the index. Lets loaders read the same table as `ddlsim list`. */
int jobj_enum_table(struct jobj *jo, const char *key, const void *table, size_t stride,
		    int *out, int flags);
/* Open key as a child object reader (caller must jobj_end it). */
int jobj_child(struct jobj *jo, const char *key, struct jobj *child, int flags);
/* Fetch key as an array (borrowed) and write its JSON path into jpath. */
int jobj_array(struct jobj *jo, const char *key, json_t **out,
	       char *jpath, size_t jpath_size, int flags);

/* Check that path, which key of jo names, is a file ddlsim may read
 * (util/infile.h). Returns 0, or -1 after reporting against the referring
 * file and key: "topology.json: /gpu: error: cannot open 'p': No such
 * file or directory". */
int jload_check_ref(struct jobj *jo, const char *key, const char *path);

/* The byte offset of the first control character of s (C0 and DEL; C1
 * U+0080..U+009F as UTF-8; with text, tab and newline are allowed), its
 * code point in *cp; -1 when there is none. */
long jload_control_char(const char *s, bool text, unsigned *cp);

/* Report an error at jo's path + "/" + key. Returns -1. */
int jobj_err(struct jobj *jo, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Name of a JSON value's type for messages ("string", "integer", ...). */
const char *jload_type_name(const json_t *v);

/* Resolve rel against the directory of base_file into out. Absolute rel is
 * copied. Returns 0, or -1 if out is too small. */
int jload_resolve(const char *base_file, const char *rel, char *out, size_t n);

#endif
