/* testutil: test helpers (see testutil.h). */
#include "testutil.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "diag.h"
#include "inputs.h"
#include "model.h"
#include "topology.h"

const char *src_path(const char *rel)
{
	static char buf[8][1024];
	static int k;
	const char *root = getenv("DDLSIM_SOURCE_DIR");
	char *b = buf[k++ % 8];
	snprintf(b, sizeof(buf[0]), "%s/%s", root ? root : ".", rel);
	return b;
}

char *tmp_dir(void)
{
	char *t = strdup("/tmp/ddlsim-test-XXXXXX");
	if (!mkdtemp(t)) {
		free(t);
		return NULL;
	}
	return t;
}

char *write_file(const char *dir, const char *name, const char *text)
{
	char *p = malloc(strlen(dir) + strlen(name) + 2);
	sprintf(p, "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
	return p;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return strdup("");
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = malloc((size_t)n + 1);
	size_t r = fread(s, 1, (size_t)n, f);
	s[r] = 0;
	fclose(f);
	return s;
}

char *test_file_text(const char *path)
{
	return slurp(path);
}

/* Remove, in place, the three-line notice ASan prints once per process
 * when SimGrid's actors switch stacks ("==PID==WARNING: ASan is ignoring
 * requested __asan_handle_no_return ...", "False positive error reports
 * may follow", "For details see ..."): it is the sanitizer's, not
 * ddlsim's, and only the sanitizer build prints it. */
void strip_sanitizer_notice(char *s)
{
	static const char *const lines[] = {
		"WARNING: ASan is ignoring requested __asan_handle_no_return",
		"False positive error reports may follow",
		"For details see https://github.com/google/sanitizers/issues/189",
	};
	if (!s)
		return;
	char *w = s;
	for (char *l = s; *l;) {
		char *end = strchr(l, '\n');
		size_t len = end ? (size_t)(end - l) + 1 : strlen(l);
		const char *body = l;
		if (l[0] == '=' && l[1] == '=') {  /* "==PID==" */
			const char *q = strstr(l + 2, "==");
			body = q && q < l + len ? q + 2 : l;
		}
		bool drop = false;
		for (int i = 0; i < 3; i++)
			drop |= !strncmp(body, lines[i], strlen(lines[i]));
		if (!drop) {
			memmove(w, l, len);
			w += len;
		}
		l += len;
	}
	*w = 0;
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#endif

#ifdef UNDER_ASAN
/* Threads of this process, from /proc/self/status (1 if unreadable). */
static int thread_count(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	int n = 1;
	if (!f)
		return 1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	fclose(f);
	return n;
}
#endif

bool fork_is_safe(void)
{
#ifdef UNDER_ASAN
	return thread_count() <= 1;
#else
	return true;
#endif
}

extern char **environ;

/* environ with env's entries put in (replacing those of the same name);
 * the array is malloc'd, its strings borrowed. */
static char **environ_with(char *const env[])
{
	size_t n = 0, k = 0;
	while (environ[n])
		n++;
	while (env && env[k])
		k++;
	char **e = calloc(n + k + 1, sizeof(*e));
	cr_assert_not_null(e);
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		bool replaced = false;
		for (size_t j = 0; j < k && !replaced; j++) {
			size_t len = strcspn(env[j], "=");
			replaced = !strncmp(environ[i], env[j], len) && environ[i][len] == '=';
		}
		if (!replaced)
			e[m++] = environ[i];
	}
	for (size_t j = 0; j < k; j++)
		e[m++] = env[j];
	return e;
}

pid_t test_spawn(char *const argv[], char *const env[], const char *dir, const char *out,
		 const char *err, bool own_group)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	pid_t pid;
	char **envp = environ_with(env);
	cr_assert_eq(posix_spawn_file_actions_init(&fa), 0);
	cr_assert_eq(posix_spawnattr_init(&at), 0);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	posix_spawn_file_actions_addopen(&fa, 2, err ? err : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (dir)
		posix_spawn_file_actions_addchdir_np(&fa, dir);
	if (own_group) {
		posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP);
		posix_spawnattr_setpgroup(&at, 0);
	}
	fflush(NULL);
	int rc = posix_spawn(&pid, argv[0], &fa, &at, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	free(envp);
	cr_assert_eq(rc, 0, "cannot start %s: %s", argv[0], strerror(rc));
	return pid;
}

int run_ddlsim(const char *args, char **out, char **err)
{
	char *d = tmp_dir();
	char cmd[8192];
	const char *bin = getenv("DDLSIM_BIN");
	snprintf(cmd, sizeof(cmd), "%s %s >%s/out 2>%s/err", bin ? bin : "ddlsim", args, d, d);
	int st = system(cmd);
	char p[1100];
	if (out) {
		snprintf(p, sizeof(p), "%s/out", d);
		*out = slurp(p);
	}
	if (err) {
		snprintf(p, sizeof(p), "%s/err", d);
		*err = slurp(p);
		strip_sanitizer_notice(*err);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", d);
	if (system(cmd)) {
	}
	free(d);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 255;
}

json_t *load_report(const char *dir)
{
	char p[1100];
	snprintf(p, sizeof(p), "%s/report.json", dir);
	return json_load_file(p, 0, NULL);
}

json_t *report_of_text(const char *text)
{
	char *dir = tmp_dir(), args[2200], *err = NULL;
	char *path = write_file(dir, "s.json", text);
	snprintf(args, sizeof(args), "run '%s' --out '%s' --quiet --format json", path, dir);
	cr_assert_eq(run_ddlsim(args, NULL, &err), 0, "%s", err ? err : "");
	json_t *r = load_report(dir);
	cr_assert_not_null(r, "no report.json in %s", dir);
	free(err);
	free(path);
	free(dir);
	return r;
}

json_t *report_on_profile(const char *profile)
{
	char text[4096];
	snprintf(text, sizeof(text),
		 "{\"schema\": \"ddlsim.scenario\", \"schema_version\": \"1.0\",\n"
		 " \"name\": \"roundtrip\", \"model\": \"%s\", \"topology\": \"%s\", \"nodes\": 2,\n"
		 " \"parallel\": {\"dp\": 16, \"zero\": 1, \"recompute\": \"selective\"},\n"
		 " \"training\": {\"seq_len\": 4096, \"global_batch\": 1024, \"micro_batch\": 1,\n"
		 "  \"precision\": \"bf16\", \"optimizer\": \"adam\"},\n"
		 " \"communication\": {\"algorithm\": \"ring\", \"bucket_MB\": 25},\n"
		 " \"compute\": {\"cost\": \"profile\", \"profile\": \"%s\"}}\n",
		 src_path("models/zoo/llama2-7b.json"), src_path("topologies/dgx-a100.json"), profile);
	return report_of_text(text);
}

double jnum(json_t *root, const char *path)
{
	char buf[512];
	snprintf(buf, sizeof(buf), "%s", path);
	json_t *v = root;
	for (char *t = strtok(buf, "/"); t && v; t = strtok(NULL, "/")) {
		if (json_is_array(v))
			v = json_array_get(v, (size_t)atoi(t));
		else
			v = json_object_get(v, t);
	}
	return v ? json_number_value(v) : -1e300;
}

bool file_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

char *str_subst(const char *s, const char *key, const char *val)
{
	const char *p = strstr(s, key);
	if (!p)
		return strdup(s);
	size_t n = strlen(s) - strlen(key) + strlen(val) + 1;
	char *o = malloc(n);
	cr_assert_not_null(o);
	snprintf(o, n, "%.*s%s%s", (int)(p - s), s, val, p + strlen(key));
	return o;
}

void expect_run_error(const char *text, const char *want_fmt)
{
	char *d = tmp_dir();
	char *p = write_file(d, "s.json", text);
	char args[2048], want[4096], *err = NULL;
	snprintf(args, sizeof(args), "run %s --out %s/out --quiet", p, d);
	int rc = run_ddlsim(args, NULL, &err);
	/* every %s in want_fmt stands for the scenario's path */
	size_t w = 0;
	for (const char *q = want_fmt; *q && w + 1 < sizeof(want);) {
		if (q[0] == '%' && q[1] == 's') {
			w += (size_t)snprintf(want + w, sizeof(want) - w, "%s", p);
			q += 2;
		} else
			want[w++] = *q++;
	}
	want[w < sizeof(want) ? w : sizeof(want) - 1] = 0;
	cr_assert_eq(rc, 3, "exit %d, stderr: %s", rc, err);
	cr_assert_str_eq(err, want);
	char rep[1100];
	snprintf(rep, sizeof(rep), "%s/out/report.json", d);
	cr_assert(!file_exists(rep), "a report was written despite the error");
	snprintf(rep, sizeof(rep), "%s/out", d);
	cr_assert(!file_exists(rep), "the report directory was created despite the error");
	free(err);
	free(p);
	free(d);
}

void expect_model_text_error(const char *text, const char *msg)
{
	char *dir = tmp_dir(), want[2048];
	char *path = write_file(dir, "m.json", text);
	struct diag d;
	diag_init(&d, NULL);
	cr_expect_null(model_load(path, &d));
	snprintf(want, sizeof(want), "%s: %s\n", path, msg);
	cr_expect_str_eq(diag_text(&d), want);
	diag_finish(&d);
	free(path);
	free(dir);
}

struct topology *load_topology(const char *rel)
{
	struct diag d;
	diag_init(&d, stderr);
	struct topology *t = topology_load(src_path(rel), &d);
	cr_assert(t, "%s", diag_text(&d));
	diag_finish(&d);
	return t;
}

struct topology *load_topology_text(const char *text)
{
	char *d = tmp_dir();
	char *p = write_file(d, "t.json", text);
	struct diag dg;
	diag_init(&dg, stderr);
	struct topology *t = topology_load(p, &dg);
	cr_assert_not_null(t, "%s", diag_text(&dg));
	diag_finish(&dg);
	free(p), free(d);
	return t;
}

struct model *load_model(const char *rel)
{
	struct diag d;
	diag_init(&d, stderr);
	struct model *m = model_load(src_path(rel), &d);
	cr_assert_not_null(m, "%s", diag_text(&d));
	diag_finish(&d);
	return m;
}

struct model *load_model_with(const char *rel, const char *after, const char *extra)
{
	char *text = test_file_text(src_path(rel));
	char *at = strstr(text, after);
	cr_assert_not_null(at, "%s: no '%s'", rel, after);
	at += strlen(after);
	size_t n = strlen(text) + strlen(extra) + 2;
	char *buf = malloc(n);
	cr_assert_not_null(buf);
	snprintf(buf, n, "%.*s %s%s", (int)(at - text), text, extra, at);
	char *d = tmp_dir(), *p = write_file(d, "m.json", buf);
	struct diag dg;
	diag_init(&dg, NULL);
	struct model *m = model_load(p, &dg);
	cr_assert_not_null(m, "%s", diag_text(&dg));
	diag_finish(&dg);
	free(text), free(buf), free(p), free(d);
	return m;
}

struct inputs *load_inputs(const char *model_path, const char *topo_rel)
{
	struct diag d;
	diag_init(&d, stderr);
	struct inputs *in = inputs_load(model_path, src_path(topo_rel), "roofline", NULL, &d);
	cr_assert_not_null(in, "%s", diag_text(&d));
	diag_finish(&d);
	return in;
}

/* The value at a JSON path ("a/b/0/c": arrays by index), NULL when absent. */
static json_t *value_at(json_t *root, const char *path)
{
	char buf[512];
	snprintf(buf, sizeof(buf), "%s", path);
	json_t *v = root;
	for (char *t = strtok(buf, "/"); t && v; t = strtok(NULL, "/"))
		v = json_is_array(v) ? json_array_get(v, (size_t)atoi(t)) : json_object_get(v, t);
	return v;
}

long jint_at(json_t *root, const char *path)
{
	json_t *v = value_at(root, path);
	cr_assert(json_is_integer(v), "%s: not an integer", path);
	return (long)json_integer_value(v);
}

const char *jstr_at(json_t *root, const char *path)
{
	json_t *v = value_at(root, path);
	cr_assert(json_is_string(v), "%s: not a string", path);
	return json_string_value(v);
}

bool jbool_at(json_t *root, const char *path)
{
	json_t *v = value_at(root, path);
	cr_assert(json_is_boolean(v), "%s: not a boolean", path);
	return json_is_true(v);
}

json_t *load_json(const char *path)
{
	json_error_t e;
	json_t *j = json_load_file(path, 0, &e);
	cr_assert(j, "%s: %s", path, e.text);
	return j;
}

const char *const known_not_fitting[] = { "nemo-gpt3-20b-64gpu", NULL };

double rel_diff(double a, double b)
{
	double m = fmax(fabs(a), fabs(b));
	return m > 0 ? fabs(a - b) / m : 0;
}
