/* atomic_file: temp file + fsync + rename (see atomic_file.h). */
#include "atomic_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "xalloc.h"

int atomic_file_open(struct atomic_file *af, const char *path)
{
	memset(af, 0, sizeof(*af));
	af->path = xstrdup(path);
	af->tmp = xasprintf("%s.tmp.XXXXXX", path);
	int fd = mkstemp(af->tmp);
	if (fd < 0) {
		int e = errno;
		free(af->path);
		free(af->tmp);
		memset(af, 0, sizeof(*af));
		return -e;
	}
	cleanup_remember(af->tmp);  /* removed if a signal ends the run */
	fchmod(fd, 0644);
	af->f = fdopen(fd, "w");
	if (!af->f) {
		int e = errno;
		close(fd);
		unlink(af->tmp);
		free(af->path);
		free(af->tmp);
		memset(af, 0, sizeof(*af));
		return -e;
	}
	return 0;
}

int atomic_file_commit(struct atomic_file *af)
{
	int e = 0;
	if (fflush(af->f) != 0 || ferror(af->f) || fsync(fileno(af->f)) != 0)
		e = errno ? errno : EIO;
	if (fclose(af->f) != 0 && !e)
		e = errno ? errno : EIO;
	af->f = NULL;
	if (!e && rename(af->tmp, af->path) != 0)
		e = errno;
	if (e)
		unlink(af->tmp);
	cleanup_forget(af->tmp);
	free(af->path);
	free(af->tmp);
	memset(af, 0, sizeof(*af));
	return -e;
}

void atomic_file_abort(struct atomic_file *af)
{
	if (af->f)
		fclose(af->f);
	if (af->tmp) {
		unlink(af->tmp);
		cleanup_forget(af->tmp);
	}
	free(af->path);
	free(af->tmp);
	memset(af, 0, sizeof(*af));
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
