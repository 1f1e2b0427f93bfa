/* infile: regular files only, bounded size and line length (infile.h). */
#include "infile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xalloc.h"

/* What this process read (infile_read_path()): one entry per file. */
static struct read_file {
	dev_t dev;
	ino_t ino;
	char *path;
} *reads;
static size_t nreads, capreads;

static void remember(const char *path, const struct stat *st)
{
	for (size_t i = 0; i < nreads; i++)
		if (reads[i].dev == st->st_dev && reads[i].ino == st->st_ino)
			return;
	XGROW(reads, capreads, nreads + 1);
	reads[nreads++] = (struct read_file){ .dev = st->st_dev, .ino = st->st_ino, .path = xstrdup(path) };
}

size_t infile_read_count(void)
{
	return nreads;
}

const char *infile_read_path(size_t i)
{
	return i < nreads ? reads[i].path : NULL;
}

const char *infile_kind(unsigned mode)
{
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISCHR(mode) || S_ISBLK(mode))
		return "a device";
	if (S_ISSOCK(mode))
		return "a socket";
	return "a special file";
}

/* Opens path and checks what it is; returns the fd or -1 (why set). */
static int open_regular(const char *path, long max_bytes, char *why, size_t n)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		int e = errno;
		snprintf(why, n, "cannot open '%s': %s", path, strerror(e));
		errno = e;  /* callers tell a missing file (ENOENT) from the rest */
		return -1;
	}
	if (fstat(fd, &st)) {
		snprintf(why, n, "cannot open '%s': %s", path, strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(why, n, "'%s' is %s, expected a regular file", path, infile_kind(st.st_mode));
		goto fail;
	}
	if (st.st_size > max_bytes) {
		snprintf(why, n, "'%s' has %lld bytes, more than the %ld MB an input file may have", path,
			 (long long)st.st_size, max_bytes >> 20);
		goto fail;
	}
	remember(path, &st);
	/* a regular file: reads never block, the flag only mattered for open */
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
fail:
	close(fd);
	errno = EINVAL;
	return -1;
}

FILE *infile_open(const char *path, char *why, size_t n)
{
	return infile_open_max(path, INFILE_MAX_BYTES, why, n);
}

FILE *infile_open_max(const char *path, long max_bytes, char *why, size_t n)
{
	int fd = open_regular(path, max_bytes, why, n);
	if (fd < 0)
		return NULL;
	FILE *f = fdopen(fd, "r");
	if (!f) {
		snprintf(why, n, "cannot open '%s': %s", path, strerror(errno));
		close(fd);
	}
	return f;
}

int infile_check(const char *path, char *why, size_t n)
{
	int fd = open_regular(path, INFILE_MAX_BYTES, why, n);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

int infile_line_check(const char *line, size_t len, char *why, size_t n)
{
	if (len > (size_t)INFILE_MAX_LINE) {
		snprintf(why, n, "is longer than the %ld bytes a line may have", INFILE_MAX_LINE);
		return -1;
	}
	if (memchr(line, 0, len)) {
		snprintf(why, n, "holds a NUL byte (a binary file?)");
		return -1;
	}
	return 0;
}
