/* test-hostile-rows: the audit harness of issue 40, hostile inputs as data.
 *
 * Every tests/hostile/<class>.json holds rows: files to write into a fresh
 * folder, a command line, and what ddlsim must answer (exit code, a POSIX
 * extended regex over stderr and optionally stdout, paths that must not
 * exist afterwards, files that must be left byte for byte). Each row is
 * one Criterion test (a parameterized test over every row of every file);
 * a failing row prints its name, file, command, exit code and stderr. The
 * format is versioned ("ddlsim.hostile" 1.x) and strict: an unknown key
 * in a file or a row fails that row, so a typo never turns a check off.
 * tests/hostile/README.md describes the format; its keys per row:
 *
 *   key        type               meaning
 *   name       string             unique among all rows; names the test
 *   issue      string             where the input came from ("40 item 6")
 *   files      object             name -> JSON value (written as JSON text)
 *                                 or string (written verbatim)
 *   variant    object or array    a shipped file with keys changed: file,
 *                                 from, set {pointer: value}, remove [pointer]
 *   args       array of strings   ddlsim's arguments
 *   env        object             extra environment variables
 *   exit       integer            the exit code wanted
 *   stderr     string             regex that must match stderr
 *   stdout     string             regex that must match stdout (optional)
 *   absent     array of strings   paths that must not exist afterwards
 *   unchanged  array of strings   files whose bytes must stay the same
 *   timeout_s  number             wall-clock limit (default 60 s)
 *
 * "{dir}" (the row's fresh folder, also the command's working directory)
 * and "{src}" (the source root) are replaced in files, variants, args,
 * env, the regexes, absent and unchanged. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <regex.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

#define ROWS_DIR "tests/hostile"
#define MAX_ARGS 64

/* One row to run: its file (below ROWS_DIR) and its index in "cases"
 * (-1: the file itself is refused). Plain data: Criterion copies it. */
struct row_ref {
	char file[256];
	int index;
};

/* What a row's check found wrong, appended line by line (malloc'd). */
struct problems {
	char *text;
	size_t len;
};

static void problem(struct problems *p, const char *fmt, ...)
{
	va_list ap;
	char *line;
	va_start(ap, fmt);
	int n = vasprintf(&line, fmt, ap);
	va_end(ap);
	cr_assert(n >= 0);
	p->text = realloc(p->text, p->len + (size_t)n + 2);
	cr_assert_not_null(p->text);
	memcpy(p->text + p->len, line, (size_t)n);
	p->len += (size_t)n;
	p->text[p->len++] = '\n';
	p->text[p->len] = 0;
	free(line);
}

/* s with every "{dir}" and "{src}" replaced (malloc'd); in a regex (re)
 * the replacement's special characters are escaped. */
static char *expand_as(const char *s, const char *dir, bool re)
{
	const char *src = getenv("DDLSIM_SOURCE_DIR");
	char srcbuf[PATH_MAX];
	if (!src || !realpath(src, srcbuf))
		snprintf(srcbuf, sizeof(srcbuf), "%s", src ? src : ".");
	size_t cap = strlen(s) + 1, len = 0;
	char *out = malloc(cap);
	cr_assert_not_null(out);
	while (*s) {
		const char *with = NULL;
		size_t skip = 0;
		if (!strncmp(s, "{dir}", 5))
			with = dir, skip = 5;
		else if (!strncmp(s, "{src}", 5))
			with = srcbuf, skip = 5;
		size_t add = with ? 2 * strlen(with) : 1;
		if (len + add + 1 > cap) {
			cap = 2 * (len + add + 1);
			out = realloc(out, cap);
			cr_assert_not_null(out);
		}
		if (!with)
			out[len++] = *s;
		for (const char *w = with; w && *w; w++) {
			if (re && strchr(".[]{}()*+?^$|\\", *w))
				out[len++] = '\\';
			out[len++] = *w;
		}
		s += with ? skip : 1;
	}
	out[len] = 0;
	return out;
}

static char *expand(const char *s, const char *dir)
{
	return expand_as(s, dir, false);
}

/* ---- the format ---- */

/* Returns true if every key of o is in the NULL-ended list keys;
 * otherwise names the first unknown key in p. */
static bool known_keys(json_t *o, const char *const *keys, const char *where, struct problems *p)
{
	const char *k;
	json_t *v;
	bool ok = true;
	json_object_foreach(o, k, v) {
		bool known = false;
		for (int i = 0; keys[i] && !known; i++)
			known = !strcmp(keys[i], k);
		if (!known) {
			problem(p, "%s: unknown key '%s'", where, k);
			ok = false;
		}
	}
	return ok;
}

static bool string_array(json_t *a, const char *what, struct problems *p)
{
	size_t i;
	json_t *v;
	if (!a)
		return true;
	if (!json_is_array(a)) {
		problem(p, "%s: expected an array of strings", what);
		return false;
	}
	json_array_foreach(a, i, v) if (!json_is_string(v)) {
		problem(p, "%s/%zu: expected a string", what, i);
		return false;
	}
	return true;
}

static bool string_object(json_t *o, const char *what, struct problems *p)
{
	const char *k;
	json_t *v;
	if (!o)
		return true;
	if (!json_is_object(o)) {
		problem(p, "%s: expected an object of strings", what);
		return false;
	}
	json_object_foreach(o, k, v) if (!json_is_string(v)) {
		problem(p, "%s/%s: expected a string", what, k);
		return false;
	}
	return true;
}

/* A file name inside the row's folder: relative, no "..", not empty. */
static bool plain_name(const char *name)
{
	if (!*name || name[0] == '/' || !strcmp(name, "..") || !strncmp(name, "../", 3) ||
	    strstr(name, "/../") || (strlen(name) >= 3 && !strcmp(name + strlen(name) - 3, "/..")))
		return false;
	return true;
}

static bool check_variant(json_t *v, const char *where, struct problems *p)
{
	static const char *const keys[] = { "file", "from", "set", "remove", NULL };
	if (!json_is_object(v)) {
		problem(p, "%s: expected an object", where);
		return false;
	}
	bool ok = known_keys(v, keys, where, p);
	json_t *file = json_object_get(v, "file"), *from = json_object_get(v, "from");
	json_t *set = json_object_get(v, "set");
	if (!json_is_string(file) || !plain_name(json_string_value(file)))
		ok = false, problem(p, "%s/file: expected a file name inside the row's folder", where);
	if (!json_is_string(from))
		ok = false, problem(p, "%s/from: expected a shipped file's path below the source root", where);
	if (set && !json_is_object(set))
		ok = false, problem(p, "%s/set: expected an object of JSON pointers", where);
	return string_array(json_object_get(v, "remove"), "variant/remove", p) && ok;
}

/* Returns true if row is a well-formed row (problems said in p). */
static bool check_row(json_t *row, struct problems *p)
{
	static const char *const keys[] = { "name", "issue", "files", "variant", "args", "env", "exit",
					    "stderr", "stdout", "absent", "unchanged", "timeout_s", NULL };
	if (!json_is_object(row)) {
		problem(p, "expected a row object");
		return false;
	}
	bool ok = known_keys(row, keys, "row", p);
	const char *req_str[] = { "name", "issue", "stderr" };
	for (int i = 0; i < 3; i++)
		if (!json_is_string(json_object_get(row, req_str[i])))
			ok = false, problem(p, "/%s: expected a string", req_str[i]);
	json_t *so = json_object_get(row, "stdout"), *files = json_object_get(row, "files");
	json_t *ex = json_object_get(row, "exit"), *to = json_object_get(row, "timeout_s");
	json_t *var = json_object_get(row, "variant"), *args = json_object_get(row, "args");
	if (so && !json_is_string(so))
		ok = false, problem(p, "/stdout: expected a string");
	if (!json_is_integer(ex) || json_integer_value(ex) < 0 || json_integer_value(ex) > 255)
		ok = false, problem(p, "/exit: expected an exit code 0..255");
	if (to && (!json_is_number(to) || !(json_number_value(to) > 0) || json_number_value(to) > 600))
		ok = false, problem(p, "/timeout_s: expected seconds in (0, 600]");
	if (!json_is_array(args) || json_array_size(args) == 0 || json_array_size(args) >= MAX_ARGS)
		ok = false, problem(p, "/args: expected 1 to %d strings", MAX_ARGS - 1);
	ok = string_array(args, "/args", p) && ok;
	ok = string_array(json_object_get(row, "absent"), "/absent", p) && ok;
	ok = string_array(json_object_get(row, "unchanged"), "/unchanged", p) && ok;
	ok = string_object(json_object_get(row, "env"), "/env", p) && ok;
	if (files && !json_is_object(files))
		ok = false, problem(p, "/files: expected an object of file name -> content");
	const char *fname;
	json_t *fv;
	if (json_is_object(files))
		json_object_foreach(files, fname, fv) if (!plain_name(fname))
			ok = false, problem(p, "/files/%s: expected a file name inside the row's folder", fname);
	if (json_is_array(var)) {
		size_t i;
		json_t *v;
		json_array_foreach(var, i, v) {
			char where[40];
			snprintf(where, sizeof(where), "/variant/%zu", i);
			ok = check_variant(v, where, p) && ok;
		}
	} else if (var)
		ok = check_variant(var, "/variant", p) && ok;
	return ok;
}

/* The file's rows ("cases"), or NULL with the reason in p. */
static json_t *load_rows(const char *file, struct problems *p)
{
	static const char *const keys[] = { "schema", "schema_version", "cases", NULL };
	json_error_t e;
	char rel[512];
	snprintf(rel, sizeof(rel), "%s/%s", ROWS_DIR, file);
	json_t *root = json_load_file(src_path(rel), JSON_REJECT_DUPLICATES, &e);
	if (!root) {
		problem(p, "%s:%d:%d: malformed JSON: %s", rel, e.line, e.column, e.text);
		return NULL;
	}
	json_t *schema = json_object_get(root, "schema"), *ver = json_object_get(root, "schema_version");
	json_t *cases = json_object_get(root, "cases");
	bool ok = json_is_object(root) && known_keys(root, keys, rel, p);
	if (!json_is_string(schema) || strcmp(json_string_value(schema), "ddlsim.hostile"))
		ok = false, problem(p, "%s: /schema: expected \"ddlsim.hostile\"", rel);
	if (!json_is_string(ver) || strncmp(json_string_value(ver), "1.", 2))
		ok = false, problem(p, "%s: /schema_version: expected \"1.x\"", rel);
	if (!json_is_array(cases) || !json_array_size(cases))
		ok = false, problem(p, "%s: /cases: expected a non-empty array of rows", rel);
	if (!ok) {
		json_decref(root);
		return NULL;
	}
	json_incref(cases);
	json_decref(root);
	return cases;
}

/* The row files, sorted (malloc'd names, count in *n). */
static char **row_files(size_t *n)
{
	DIR *dp = opendir(src_path(ROWS_DIR));
	char **names = NULL;
	struct dirent *de;
	*n = 0;
	if (!dp)
		return NULL;
	while ((de = readdir(dp))) {
		size_t l = strlen(de->d_name);
		if (l < 6 || strcmp(de->d_name + l - 5, ".json") || de->d_name[0] == '.')
			continue;
		names = realloc(names, (*n + 1) * sizeof(*names));
		names[(*n)++] = strdup(de->d_name);
	}
	closedir(dp);
	for (size_t i = 1; i < *n; i++)  /* insertion sort: a handful of files */
		for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
			char *t = names[j];
			names[j] = names[j - 1];
			names[j - 1] = t;
		}
	return names;
}

/* ---- writing the row's files ---- */

static void write_text(const char *dir, const char *name, const char *text, struct problems *p)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	for (char *s = strchr(path + strlen(dir) + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = 0;
		mkdir(path, 0755);
		*s = '/';
	}
	FILE *f = fopen(path, "w");
	if (!f || fputs(text, f) < 0)
		problem(p, "cannot write %s: %s", path, strerror(errno));
	if (f)
		fclose(f);
}

/* Unescape one JSON pointer token ("~1" '/', "~0" '~') in place. */
static void unescape(char *t)
{
	char *w = t;
	for (char *r = t; *r; r++, w++) {
		*w = *r;
		if (r[0] == '~' && (r[1] == '0' || r[1] == '1'))
			*w = r[1] == '0' ? '~' : '/', r++;
	}
	*w = 0;
}

/* Set (v, stolen) or remove (v NULL) the value at pointer ptr in root.
 * Returns false if its parent does not exist. */
static bool pointer_apply(json_t *root, const char *ptr, json_t *v)
{
	char buf[1024];
	if (ptr[0] != '/' || strlen(ptr) >= sizeof(buf)) {
		json_decref(v);
		return false;
	}
	snprintf(buf, sizeof(buf), "%s", ptr + 1);
	json_t *o = root;
	char *tok = buf, *slash;
	while ((slash = strchr(tok, '/'))) {
		*slash = 0;
		unescape(tok);
		o = json_is_array(o) ? json_array_get(o, strtoul(tok, NULL, 10)) : json_object_get(o, tok);
		tok = slash + 1;
	}
	unescape(tok);
	bool ok;
	if (json_is_array(o)) {
		size_t i = strtoul(tok, NULL, 10);
		if (!v)
			ok = json_array_remove(o, i) == 0;
		else if (!strcmp(tok, "-"))
			ok = json_array_append_new(o, v) == 0;
		else
			ok = json_array_set_new(o, i, v) == 0;
	} else if (json_is_object(o))
		ok = v ? json_object_set_new(o, tok, v) == 0 : json_object_del(o, tok) == 0;
	else {
		json_decref(v);
		ok = false;
	}
	return ok;
}

/* Paths in a shipped file are relative to it: made absolute where the
 * file they name exists, under the keys that hold paths. */
static void absolute_paths(json_t *o, const char *from_dir)
{
	static const char *const keys[] = { "model", "topology", "base", "profile", "samples_file",
					    "preset", "gpu", NULL };
	const char *k;
	json_t *v;
	size_t i;
	if (json_is_array(o))
		json_array_foreach(o, i, v) absolute_paths(v, from_dir);
	if (!json_is_object(o))
		return;
	json_object_foreach(o, k, v) {
		bool path_key = false;
		for (int j = 0; keys[j] && !path_key; j++)
			path_key = !strcmp(keys[j], k);
		char p[PATH_MAX];
		if (path_key && json_is_string(v) && json_string_value(v)[0] != '/') {
			snprintf(p, sizeof(p), "%s/%s", from_dir, json_string_value(v));
			if (access(p, F_OK) == 0)
				json_object_set_new(o, k, json_string(p));
		} else
			absolute_paths(v, from_dir);
	}
}

static void write_variant(json_t *var, const char *dir, struct problems *p)
{
	const char *from = json_string_value(json_object_get(var, "from"));
	char from_dir[PATH_MAX];
	json_error_t e;
	json_t *root = json_load_file(src_path(from), 0, &e);
	if (!root) {
		problem(p, "variant: cannot read shipped file '%s': %s", from, e.text);
		return;
	}
	snprintf(from_dir, sizeof(from_dir), "%s", src_path(from));
	*strrchr(from_dir, '/') = 0;
	absolute_paths(root, from_dir);
	const char *ptr;
	json_t *v;
	size_t i;
	json_object_foreach(json_object_get(var, "set"), ptr, v) if (!pointer_apply(root, ptr, json_deep_copy(v)))
		problem(p, "variant: /set: '%s' has no parent in %s", ptr, from);
	json_array_foreach(json_object_get(var, "remove"), i, v)
		if (!pointer_apply(root, json_string_value(v), NULL))
			problem(p, "variant: /remove: '%s' is not in %s", json_string_value(v), from);
	char *text = json_dumps(root, JSON_INDENT(1)), *x = expand(text, dir);
	write_text(dir, json_string_value(json_object_get(var, "file")), x, p);
	free(x);
	free(text);
	json_decref(root);
}

static void write_files(json_t *row, const char *dir, struct problems *p)
{
	const char *name;
	json_t *v;
	size_t i;
	json_object_foreach(json_object_get(row, "files"), name, v) {
		char *text = json_is_string(v) ? strdup(json_string_value(v)) : json_dumps(v, JSON_INDENT(1) |
											     JSON_ENCODE_ANY);
		char *x = expand(text, dir);
		write_text(dir, name, x, p);
		free(x);
		free(text);
	}
	json_t *var = json_object_get(row, "variant");
	if (json_is_array(var))
		json_array_foreach(var, i, v) write_variant(v, dir, p);
	else if (var)
		write_variant(var, dir, p);
}

/* ---- running ddlsim ---- */

/* The bytes of path (malloc'd, length in *n), or NULL. */
static char *file_bytes(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *s = NULL;
	size_t cap = 0;
	*n = 0;
	for (;;) {
		if (*n + 4096 + 1 > cap) {
			cap = 2 * cap + 4096 + 1;
			s = realloc(s, cap);
		}
		size_t r = fread(s + *n, 1, 4096, f);
		*n += r;
		if (r < 4096)
			break;
	}
	fclose(f);
	s[*n] = 0;
	return s;
}

/* Run ddlsim with argv in dir, env added, stdout and stderr into the
 * files out and err, killed (with its children) after timeout_s. Returns
 * the wait status, or -1 on a time-out. */
static int spawn(char **argv, json_t *env, const char *dir, const char *out, const char *err,
		 double timeout_s)
{
	size_t n = json_object_size(env), i = 0;
	char **vars = calloc(n + 1, sizeof(*vars));
	cr_assert_not_null(vars);
	const char *k;
	json_t *v;
	json_object_foreach(env, k, v) {
		const char *val = json_string_value(v);
		size_t len = strlen(k) + strlen(val ? val : "") + 2;
		vars[i] = malloc(len);
		cr_assert_not_null(vars[i]);
		snprintf(vars[i++], len, "%s=%s", k, val ? val : "");
	}
	pid_t pid = test_spawn(argv, vars, dir, out, err, true);
	for (i = 0; i < n; i++)
		free(vars[i]);
	free(vars);
	struct timespec tick = { 0, 10 * 1000 * 1000 };
	int st;
	for (double waited = 0; waited < timeout_s; waited += 0.01) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			return st;
		nanosleep(&tick, NULL);
	}
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -1;
}

static void match(const char *what, const char *pattern, const char *text, struct problems *p)
{
	regex_t re;
	int rc = regcomp(&re, pattern, REG_EXTENDED | REG_NEWLINE | REG_NOSUB);
	if (rc) {
		char why[200];
		regerror(rc, &re, why, sizeof(why));
		problem(p, "/%s: bad regex '%s': %s", what, pattern, why);
		return;
	}
	if (regexec(&re, text, 0, NULL, 0))
		problem(p, "%s does not match /%s/", what, pattern);
	regfree(&re);
}

/* Run the row in a fresh folder and check what it wants; problems in p,
 * the command line in cmd (n bytes). */
static void run_row(json_t *row, struct problems *p, char *cmd, size_t n, char **err_text)
{
	char *dir = tmp_dir(), *cap = tmp_dir(), out[PATH_MAX], err[PATH_MAX];
	cr_assert(dir && cap);
	char real[PATH_MAX];
	if (realpath(dir, real)) {
		free(dir);
		dir = strdup(real);
	}
	write_files(row, dir, p);
	const char *bin = getenv("DDLSIM_BIN");
	char *argv[MAX_ARGS + 1] = { strdup(bin ? bin : "ddlsim") };
	size_t i, used = (size_t)snprintf(cmd, n, "ddlsim");
	json_t *v;
	json_array_foreach(json_object_get(row, "args"), i, v) {
		argv[i + 1] = expand(json_string_value(v), dir);
		used += (size_t)snprintf(cmd + (used < n ? used : n), used < n ? n - used : 0, " '%s'", argv[i + 1]);
	}
	json_t *env = json_deep_copy(json_object_get(row, "env"));
	const char *k;
	json_object_foreach(env, k, v) {
		char *x = expand(json_string_value(v), dir);
		json_object_set_new(env, k, json_string(x));
		free(x);
	}
	/* the bytes of the files that must be left alone, before */
	json_t *unchanged = json_object_get(row, "unchanged");
	size_t nu = json_array_size(unchanged);
	char **before = calloc(nu + 1, sizeof(*before)), **upath = calloc(nu + 1, sizeof(*upath));
	size_t *blen = calloc(nu + 1, sizeof(*blen));
	json_array_foreach(unchanged, i, v) {
		upath[i] = expand(json_string_value(v), dir);
		before[i] = file_bytes(upath[i], &blen[i]);
		if (!before[i])
			problem(p, "unchanged: '%s' does not exist before the command", upath[i]);
	}
	json_t *to = json_object_get(row, "timeout_s");
	snprintf(out, sizeof(out), "%s/stdout", cap);
	snprintf(err, sizeof(err), "%s/stderr", cap);
	bool ran = !p->len;  /* not when the row's files could not be written */
	int st = ran ? spawn(argv, env, dir, out, err, to ? json_number_value(to) : 60) : 0;
	size_t len;
	char *so = file_bytes(out, &len), *se = file_bytes(err, &len);
	if (!so)
		so = strdup("");
	if (!se)
		se = strdup("");
	strip_sanitizer_notice(se);
	int want = (int)json_integer_value(json_object_get(row, "exit"));
	if (!ran)
		;
	else if (st == -1)
		problem(p, "timed out after %g s", to ? json_number_value(to) : 60.0);
	else if (WIFSIGNALED(st))
		problem(p, "killed by signal %d, want exit %d", WTERMSIG(st), want);
	else if (WEXITSTATUS(st) != want)
		problem(p, "exit %d, want %d", WEXITSTATUS(st), want);
	if (ran && st != -1) {
		char *re = expand_as(json_string_value(json_object_get(row, "stderr")), dir, true);
		match("stderr", re, se, p);
		free(re);
		if (json_object_get(row, "stdout")) {
			re = expand_as(json_string_value(json_object_get(row, "stdout")), dir, true);
			match("stdout", re, so, p);
			free(re);
		}
	}
	json_array_foreach(json_object_get(row, "absent"), i, v) {
		char *a = expand(json_string_value(v), dir);
		struct stat sb;
		if (lstat(a, &sb) == 0)
			problem(p, "absent: '%s' exists afterwards", a);
		free(a);
	}
	for (i = 0; i < nu; i++) {
		size_t alen;
		char *after = file_bytes(upath[i], &alen);
		if (before[i] && (!after || alen != blen[i] || memcmp(after, before[i], alen)))
			problem(p, "unchanged: '%s' changed (%zu bytes before, %zu after)", upath[i], blen[i],
				after ? alen : 0);
		free(after);
		free(before[i]);
		free(upath[i]);
	}
	*err_text = se;
	free(so);
	free(before);
	free(upath);
	free(blen);
	for (i = 0; argv[i]; i++)
		free(argv[i]);
	json_decref(env);
	char rm[2 * PATH_MAX + 20];
	snprintf(rm, sizeof(rm), "rm -rf '%s' '%s'", dir, cap);
	if (system(rm)) {
	}
	free(dir);
	free(cap);
}

/* ---- the tests ---- */

static void free_refs(struct criterion_test_params *crp)
{
	cr_free(crp->params);
}

ParameterizedTestParameters(hostile_rows, row)
{
	size_t nf, total = 0;
	char **files = row_files(&nf);
	struct row_ref *refs = NULL;
	for (size_t i = 0; i < nf; i++) {
		struct problems p = { 0 };
		json_t *cases = load_rows(files[i], &p);
		size_t rows = cases ? json_array_size(cases) : 1;
		refs = realloc(refs, (total + rows) * sizeof(*refs));
		for (size_t j = 0; j < rows; j++) {
			snprintf(refs[total + j].file, sizeof(refs[0].file), "%s", files[i]);
			refs[total + j].index = cases ? (int)j : -1;
		}
		total += rows;
		json_decref(cases);
		free(p.text);
		free(files[i]);
	}
	free(files);
	/* the tests run in other processes: the array lives in Criterion's
	 * shared arena */
	struct row_ref *shared = cr_malloc(total * sizeof(*refs) + 1);
	memcpy(shared, refs, total * sizeof(*refs));
	free(refs);
	return cr_make_param_array(struct row_ref, shared, total, free_refs);
}

ParameterizedTest(struct row_ref *r, hostile_rows, row, .timeout = 620)
{
	struct problems p = { 0 };
	json_t *cases = load_rows(r->file, &p);
	cr_assert_not_null(cases, "%s/%s: refused:\n%s", ROWS_DIR, r->file, p.text);
	json_t *row = json_array_get(cases, (size_t)r->index);
	const char *name = json_string_value(json_object_get(row, "name"));
	char cmd[8192] = "";
	char *se = NULL;
	if (check_row(row, &p))
		run_row(row, &p, cmd, sizeof(cmd), &se);
	cr_expect(!p.len, "row '%s' (%s/%s, case %d):\n%s  command: %s\n  stderr:\n%s",
		  name ? name : "?", ROWS_DIR, r->file, r->index, p.text, cmd, se ? se : "(not run)");
	free(se);
	free(p.text);
	json_decref(cases);
}

/* Names say which row failed: each is unique across every file. */
Test(hostile_rows, every_row_has_a_name_of_its_own)
{
	size_t nf;
	char **files = row_files(&nf);
	cr_assert_gt(nf, 0, "no row files in %s", src_path(ROWS_DIR));
	json_t *seen = json_object();
	for (size_t i = 0; i < nf; i++) {
		struct problems p = { 0 };
		json_t *cases = load_rows(files[i], &p), *row;
		size_t j;
		json_array_foreach(cases, j, row) {
			const char *name = json_string_value(json_object_get(row, "name"));
			if (!name)
				continue;
			json_t *first = json_object_get(seen, name);
			cr_expect_null(first, "row name '%s' in %s is used in %s already", name, files[i],
				       first ? json_string_value(first) : "");
			json_object_set_new(seen, name, json_string(files[i]));
		}
		json_decref(cases);
		free(p.text);
		free(files[i]);
	}
	free(files);
	json_decref(seen);
}

/* The format is strict: a misspelt key would turn a check off silently. */
Test(hostile_rows, a_row_with_an_unknown_or_missing_key_is_refused)
{
	struct problems p = { 0 };
	json_t *row = json_pack("{s:s, s:s, s:[s], s:i, s:s, s:s}", "name", "x", "issue", "test", "args", "list",
				"exit", 0, "stderr", "", "stderrr", "typo");
	cr_expect(!check_row(row, &p));
	cr_expect_str_eq(p.text, "row: unknown key 'stderrr'\n");
	free(p.text);
	p = (struct problems){ 0 };
	json_object_del(row, "stderrr");
	cr_expect(check_row(row, &p), "%s", p.text);
	json_object_del(row, "exit");
	cr_expect(!check_row(row, &p));
	cr_expect_str_eq(p.text, "/exit: expected an exit code 0..255\n");
	free(p.text);
	json_decref(row);
}

/* "{dir}" and "{src}" in a regex stand for the folders themselves. */
Test(hostile_rows, a_folder_in_a_regex_matches_itself_only)
{
	char *re = expand_as("^{dir}/s\\.json$", "/tmp/a.b+c", true);
	cr_expect_str_eq(re, "^/tmp/a\\.b\\+c/s\\.json$");
	struct problems p = { 0 };
	match("stderr", re, "/tmp/a.b+c/s.json", &p);
	cr_expect_null(p.text);
	match("stderr", re, "/tmp/aXbbc/s.json", &p);
	cr_expect_str_eq(p.text, "stderr does not match /^/tmp/a\\.b\\+c/s\\.json$/\n");
	free(p.text);
	free(re);
}

/* absent and unchanged see what a command wrote: a run's reports over a
 * file named unchanged, into a folder named absent. */
Test(hostile_rows, a_file_written_or_replaced_fails_absent_and_unchanged)
{
	json_t *row = json_pack("{s:s, s:s, s:{s:s}, s:[s,s,s,s,s], s:i, s:s, s:[s], s:[s]}", "name", "x", "issue",
				"test", "files", "o/report.json", "before", "args", "run",
				"{src}/scenarios/quickstart.json", "--out", "{dir}/o", "--quiet", "exit", 0, "stderr",
				"^$", "absent", "{dir}/o/report.csv", "unchanged", "{dir}/o/report.json");
	struct problems p = { 0 };
	char cmd[4096], *se = NULL;
	cr_assert(check_row(row, &p), "%s", p.text);
	run_row(row, &p, cmd, sizeof(cmd), &se);
	cr_assert_not_null(p.text, "%s", cmd);
	cr_expect(strstr(p.text, "absent: '/") && strstr(p.text, "/o/report.csv' exists afterwards\n"), "%s", p.text);
	cr_expect(strstr(p.text, "unchanged: '/") && strstr(p.text, "/o/report.json' changed (6 bytes before, "),
		  "%s", p.text);
	free(p.text);
	free(se);
	json_decref(row);
}
