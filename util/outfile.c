/* outfile: streamed, checked, atomic output, plain or gzip (see outfile.h).
 *
 * Plain: stdio on the temporary (af.f), each call's result checked.
 * Gzip: zlib's gz stream on a duplicate of the temporary's descriptor
 * (gzclose closes the duplicate, atomic_file_stage the original; af.f is
 * never written, so the two never interleave). Text is formatted into a
 * buffer and written with gzwrite, whose 0 return is the failure. */
#include "outfile.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "xalloc.h"

bool outfile_is_gzip(const char *path)
{
	size_t n = strlen(path);
	return n > 3 && !strcmp(path + n - 3, ".gz");
}

/* Remember the first failure: errno if it says something, else EIO. */
static void fail(struct outfile *o, int e)
{
	if (!o->err)
		o->err = e > 0 ? e : EIO;
}

int outfile_open(struct outfile *o, const char *path)
{
	memset(o, 0, sizeof(*o));
	int e = atomic_file_open(&o->af, path);
	if (e)
		return e;
	if (!outfile_is_gzip(path))
		return 0;
	int fd = dup(fileno(o->af.f));
	gzFile gz = fd >= 0 ? gzdopen(fd, "wb") : NULL;
	if (!gz) {
		e = errno ? errno : ENOMEM;
		if (fd >= 0)
			close(fd);
		atomic_file_abort(&o->af);
		memset(o, 0, sizeof(*o));
		return -e;
	}
	/* a 128 kB buffer: fewer, larger writes to the file */
	gzbuffer(gz, 1u << 17);
	o->gz = gz;
	return 0;
}

void outfile_write(struct outfile *o, const void *p, size_t n)
{
	if (o->err || !n)
		return;
	errno = 0;
	if (o->gz) {
		/* gzwrite takes an unsigned count: large blocks in pieces */
		for (const char *c = p; n > 0 && !o->err;) {
			unsigned k = n > (1u << 30) ? (1u << 30) : (unsigned)n;
			int errnum;
			if (gzwrite(o->gz, c, k) != (int)k) {
				gzerror(o->gz, &errnum);
				fail(o, errnum == Z_ERRNO ? errno : EIO);
			}
			c += k;
			n -= k;
			o->bytes += k;
		}
		return;
	}
	if (fwrite(p, 1, n, o->af.f) != n || ferror(o->af.f))
		fail(o, errno);
	o->bytes += n;
}

void outfile_puts(struct outfile *o, const char *s)
{
	outfile_write(o, s, strlen(s));
}

void outfile_printf(struct outfile *o, const char *fmt, ...)
{
	char small[512], *big = NULL;
	va_list ap;
	if (o->err)
		return;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0) {
		fail(o, EINVAL);
		return;
	}
	if ((size_t)n >= sizeof(small)) {
		va_start(ap, fmt);
		n = vasprintf(&big, fmt, ap);
		va_end(ap);
		if (n < 0) {
			fprintf(stderr, "ddlsim: fatal: out of memory formatting %s\n", o->af.path);
			exit(1);
		}
	}
	outfile_write(o, big ? big : small, (size_t)n);
	free(big);
}

int outfile_stage(struct outfile *o, struct atomic_file *staged)
{
	memset(staged, 0, sizeof(*staged));
	if (o->gz) {
		errno = 0;
		int z = gzclose(o->gz);
		o->gz = NULL;
		if (z != Z_OK)
			fail(o, z == Z_ERRNO ? errno : EIO);
	}
	int e = o->err ? -o->err : 0;
	if (e)
		atomic_file_abort(&o->af);
	else if ((e = atomic_file_stage(&o->af)) == 0)
		*staged = o->af;
	memset(&o->af, 0, sizeof(o->af));
	o->err = 0;
	return e;
}

void outfile_abort(struct outfile *o)
{
	if (o->gz) {
		gzclose(o->gz);
		o->gz = NULL;
	}
	atomic_file_abort(&o->af);
	memset(&o->af, 0, sizeof(o->af));
}
