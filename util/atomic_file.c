/* atomic_file: temp file + fsync + rename, all or none (see atomic_file.h). */
#include "atomic_file.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "infile.h"
#include "xalloc.h"

int atomic_file_check(const char *path, char *why, size_t n)
{
	struct stat st;
	if (stat(path, &st) != 0 || S_ISREG(st.st_mode))
		return 0;
	snprintf(why, n, "'%s' is %s, expected a regular file or nothing (refusing to replace it)", path,
		 infile_kind(st.st_mode));
	return -1;
}

const char *atomic_file_strerror(int e)
{
	return e == ATOMIC_FILE_ENOTREG ? "not a regular file (refusing to replace it)" : strerror(e);
}

/* Whether name is "<base>.tmp.<pid>.XXXXXX" (or a backup "....bak") of a
 * process that is gone. */
static bool stale(const char *name, const char *base)
{
	size_t bl = strlen(base);
	if (strncmp(name, base, bl) || strncmp(name + bl, ".tmp.", 5))
		return false;
	char *end;
	long pid = strtol(name + bl + 5, &end, 10);
	if (end == name + bl + 5 || *end != '.' || pid <= 0 || pid == (long)getpid())
		return false;
	return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* Remove the temporaries of path left by processes that are gone. */
static void clean_stale(const char *path)
{
	char *dir = xstrdup(path);
	char *slash = strrchr(dir, '/');
	const char *base = slash ? slash + 1 : path;
	if (slash)
		slash[slash == dir ? 1 : 0] = 0;
	DIR *dh = opendir(slash ? dir : ".");
	if (dh) {
		struct dirent *e;
		while ((e = readdir(dh)))
			if (stale(e->d_name, base)) {
				char *p = slash ? xasprintf("%s/%s", slash == dir ? "" : dir, e->d_name)
						: xstrdup(e->d_name);
				unlink(p);
				free(p);
			}
		closedir(dh);
	}
	free(dir);
}

static void forget(struct atomic_file *af)
{
	free(af->path);
	free(af->tmp);
	memset(af, 0, sizeof(*af));
}

/* Block the signals cleanup.h handles (a run's end) into *old. */
static void block_ending_signals(sigset_t *old)
{
	sigset_t block;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGXFSZ);
	sigprocmask(SIG_BLOCK, &block, old);
}

/* path with its directory resolved (malloc'd); as given when the
 * directory does not exist. */
static char *canonical(const char *path)
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/'), *real;
	const char *base = slash ? slash + 1 : path;
	if (slash)
		*(slash == dir ? slash + 1 : slash) = 0;
	real = realpath(slash ? dir : ".", NULL);
	char *out = real ? xasprintf("%s/%s", real, base) : xstrdup(path);
	free(real);
	free(dir);
	return out;
}

bool atomic_file_same_target(const char *a, const char *b)
{
	struct stat sa, sb;
	int ea = stat(a, &sa), eb = stat(b, &sb);
	if (!ea && !eb)
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	if (!ea || !eb)
		return false;
	char *ca = canonical(a), *cb = canonical(b);
	bool same = !strcmp(ca, cb);
	free(ca);
	free(cb);
	return same;
}

int atomic_file_open(struct atomic_file *af, const char *path)
{
	char why[8];
	memset(af, 0, sizeof(*af));
	if (atomic_file_check(path, why, sizeof(why)))
		return -ATOMIC_FILE_ENOTREG;
	clean_stale(path);
	af->path = xstrdup(path);
	af->tmp = xasprintf("%s.tmp.%ld.XXXXXX", path, (long)getpid());
	/* the temporary exists only once it is remembered: a signal between
	 * the two would leave it behind */
	sigset_t old;
	block_ending_signals(&old);
	int fd = mkstemp(af->tmp);
	if (fd >= 0)
		cleanup_remember(af->tmp);  /* removed if a signal ends the run */
	int e = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (fd < 0) {
		forget(af);
		return -e;
	}
	fchmod(fd, 0644);
	af->f = fdopen(fd, "w");
	if (!af->f) {
		int e = errno;
		close(fd);
		unlink(af->tmp);
		cleanup_forget(af->tmp);
		forget(af);
		return -e;
	}
	return 0;
}

int atomic_file_stage(struct atomic_file *af)
{
	int e = 0;
	errno = 0;
	if (fflush(af->f) != 0 || ferror(af->f) || fsync(fileno(af->f)) != 0)
		e = errno ? errno : EIO;
	if (fclose(af->f) != 0 && !e)
		e = errno ? errno : EIO;
	af->f = NULL;
	if (e) {
		unlink(af->tmp);
		cleanup_forget(af->tmp);
		forget(af);
	}
	return -e;
}

/* Undo the first k renames of publish(): the backups back, new files
 * that replaced nothing removed. */
static void roll_back(struct atomic_file *af, char **bak, int k)
{
	for (int i = 0; i < k; i++) {
		if (!af[i].tmp)
			continue;
		if (bak[i])
			rename(bak[i], af[i].path);
		else
			unlink(af[i].path);
	}
}

static long fail_publish_at;   /* atomic_file_fail_publish_at(); 0: never */

void atomic_file_fail_publish_at(long n)
{
	fail_publish_at = n > 0 ? n : 0;
}

/* rename() for publishing, with the test hook (atomic_file.h): the Nth of
 * this process's publishing renames fails with EIO. */
static int publish_rename(const char *from, const char *to)
{
	static long renames;
	if (fail_publish_at > 0 && ++renames == fail_publish_at) {
		errno = EIO;
		return -1;
	}
	return rename(from, to);
}

int atomic_file_publish(struct atomic_file *af, int n)
{
	sigset_t old;
	block_ending_signals(&old);
	char **bak = xcalloc((size_t)n + 1, sizeof(char *));
	int e = 0, i;
	/* two files of one set for one target: the second would replace the
	 * first; nothing is published (callers check before writing) */
	for (i = 0; i < n && !e; i++)
		for (int j = i + 1; j < n && !e; j++)
			if (af[i].tmp && af[j].tmp && atomic_file_same_target(af[i].path, af[j].path))
				e = EINVAL;
	/* backups (hard links: no data copied) of what will be replaced */
	for (i = 0; i < n && !e; i++) {
		if (!af[i].tmp || n == 1)
			continue;
		bak[i] = xasprintf("%s.bak", af[i].tmp);
		if (link(af[i].path, bak[i]) != 0) {
			if (errno != ENOENT)
				e = errno;
			free(bak[i]);
			bak[i] = NULL;
		}
	}
	for (i = 0; i < n && !e; i++)
		if (af[i].tmp && publish_rename(af[i].tmp, af[i].path) != 0) {
			e = errno;
			roll_back(af, bak, i);
		}
	for (i = 0; i < n; i++) {
		if (bak[i])
			unlink(bak[i]);
		free(bak[i]);
		if (!af[i].tmp)
			continue;
		if (e)
			unlink(af[i].tmp);
		cleanup_forget(af[i].tmp);
		forget(&af[i]);
	}
	free(bak);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return -e;
}

int atomic_file_commit(struct atomic_file *af)
{
	int e = atomic_file_stage(af);
	return e ? e : atomic_file_publish(af, 1);
}

void atomic_file_abort(struct atomic_file *af)
{
	if (af->f)
		fclose(af->f);
	if (af->tmp) {
		unlink(af->tmp);
		cleanup_forget(af->tmp);
	}
	forget(af);
}

int atomic_file_write(const char *path, const void *data, size_t len)
{
	struct atomic_file af;
	int rc = atomic_file_open(&af, path);
	if (rc)
		return rc;
	if (len && fwrite(data, 1, len, af.f) != len) {
		int e = errno ? errno : EIO;
		atomic_file_abort(&af);
		return -e;
	}
	return atomic_file_commit(&af);
}
