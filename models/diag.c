/* diag: user-facing error collection (see diag.h). */
#include "diag.h"

#include "xalloc.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void diag_init(struct diag *d, FILE *out)
{
	memset(d, 0, sizeof(*d));
	d->out = out;
}

void diag_finish(struct diag *d)
{
	free(d->buf);
	d->buf = NULL;
	d->len = 0;
}

/* msg on one line, safe on a terminal (malloc'd): trailing line breaks
 * cut, other control characters (a key or value quoted from a file: an
 * escape sequence, a line break) written as \n, \r or \xNN; tab kept. */
static char *one_line(const char *msg)
{
	size_t n = strlen(msg);
	while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
		n--;
	char *out = xmalloc(4 * n + 1), *o = out;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)msg[i];
		if (c == '\n' || c == '\r')
			*o++ = '\\', *o++ = c == '\n' ? 'n' : 'r';
		else if ((c < 0x20 && c != '\t') || c == 0x7f)
			o += sprintf(o, "\\x%02x", c);
		else if (c == 0xc2 && i + 1 < n && (unsigned char)msg[i + 1] >= 0x80 &&
			 (unsigned char)msg[i + 1] <= 0x9f)  /* C1 controls, U+0080..U+009F */
			o += sprintf(o, "\\u%04x", (unsigned char)msg[++i]);
		else
			*o++ = (char)c;
	}
	*o = 0;
	return out;
}

static void emit(struct diag *d, const char *prefix, const char *fmt, va_list ap,
		 bool count)
{
	char *msg;
	if (vasprintf(&msg, fmt, ap) < 0) {
		fputs("ddlsim: fatal: out of memory formatting a message\n", stderr);
		exit(1);
	}
	char *whole = xasprintf("%s%s", prefix, msg), *safe = one_line(whole), *line = xasprintf("%s\n", safe);
	free(whole);
	free(safe);
	free(msg);
	if (count)
		d->count++;
	if (d->out)
		fputs(line, d->out);
	size_t n = strlen(line);
	d->buf = xreallocarray(d->buf, d->len + n + 1, 1);
	memcpy(d->buf + d->len, line, n + 1);
	d->len += n;
	free(line);
}

int diag_err(struct diag *d, const char *file, const char *jpath,
	     const char *fmt, ...)
{
	va_list ap;
	char *prefix = xasprintf("%s: %s%serror: ", file ? file : "<input>",
				 jpath && *jpath ? jpath : "", jpath && *jpath ? ": " : "");
	va_start(ap, fmt);
	emit(d, prefix, fmt, ap, true);
	va_end(ap);
	free(prefix);
	return -1;
}

void diag_warn(struct diag *d, const char *file, const char *jpath,
	       const char *fmt, ...)
{
	va_list ap;
	char *prefix = xasprintf("%s: %s%swarning: ", file ? file : "<input>",
				 jpath && *jpath ? jpath : "", jpath && *jpath ? ": " : "");
	va_start(ap, fmt);
	emit(d, prefix, fmt, ap, false);
	va_end(ap);
	free(prefix);
}

int diag_err_at(struct diag *d, const char *file, int line, int col,
		const char *fmt, ...)
{
	va_list ap;
	char *prefix = xasprintf("%s:%d:%d: error: ", file ? file : "<input>", line, col);
	va_start(ap, fmt);
	emit(d, prefix, fmt, ap, true);
	va_end(ap);
	free(prefix);
	return -1;
}

int diag_errf(struct diag *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	emit(d, "error: ", fmt, ap, true);
	va_end(ap);
	return -1;
}

const char *diag_text(const struct diag *d)
{
	return d->buf ? d->buf : "";
}
