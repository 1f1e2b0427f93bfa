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

void diag_first_only(struct diag *d)
{
	d->first_only = true;
	d->mark = d->len;
}

void diag_finish(struct diag *d)
{
	free(d->buf);
	d->buf = NULL;
	d->len = 0;
	d->cap = 0;
	d->mark = 0;
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

/* Whether one_line(msg) would be msg itself: no control character (tab
 * kept), no C1 control, no trailing line break. */
static bool plain(const char *msg)
{
	const unsigned char *c = (const unsigned char *)msg;
	for (; *c; c++)
		if ((*c < 0x20 && *c != '\t') || *c == 0x7f || (*c == 0xc2 && c[1] >= 0x80 && c[1] <= 0x9f))
			return false;
	return true;
}

/* Whether a message is left out (diag_first_only: one was kept since
 * the mark); an error left out is still counted. */
static bool skipped(struct diag *d, bool count)
{
	if (!d->first_only || d->len == d->mark)
		return false;
	d->count += count;
	return true;
}

/* Append prefix + the formatted message, on one line (one_line), and a
 * line break to d's buffer, and print it. Formatted once, copied once: a
 * plan search formats a message for every plan plan_check() rejects. */
static void emit(struct diag *d, const char *prefix, const char *fmt, va_list ap,
		 bool count)
{
	char *msg;
	if (vasprintf(&msg, fmt, ap) < 0) {
		fputs("ddlsim: fatal: out of memory formatting a message\n", stderr);
		exit(1);
	}
	size_t pl = strlen(prefix), ml = strlen(msg);
	char *whole = xmalloc(pl + ml + 1);
	memcpy(whole, prefix, pl);
	memcpy(whole + pl, msg, ml + 1);
	free(msg);
	char *safe = whole;
	if (!plain(whole)) {
		safe = one_line(whole);
		free(whole);
	}
	size_t n = strlen(safe);
	if (count)
		d->count++;
	if (d->len + n + 2 > d->cap) {
		d->cap = d->cap * 2 > d->len + n + 2 ? d->cap * 2 : d->len + n + 2 + 256;
		d->buf = xreallocarray(d->buf, d->cap, 1);
	}
	char *line = d->buf + d->len;
	memcpy(line, safe, n);
	line[n] = '\n';
	line[n + 1] = 0;
	free(safe);
	if (d->out)
		fputs(line, d->out);
	d->len += n + 1;
}

/* "file: jpath: kind: " ("<input>" without a file, no jpath when empty),
 * malloc'd. */
static char *located(const char *file, const char *jpath, const char *kind)
{
	const char *f = file ? file : "<input>", *j = jpath && *jpath ? jpath : "";
	size_t fl = strlen(f), jl = strlen(j), kl = strlen(kind);
	char *p = xmalloc(fl + jl + kl + 5), *w = p;
	memcpy(w, f, fl);
	w += fl;
	*w++ = ':', *w++ = ' ';
	if (jl) {
		memcpy(w, j, jl);
		w += jl;
		*w++ = ':', *w++ = ' ';
	}
	memcpy(w, kind, kl + 1);
	return p;
}

int diag_err(struct diag *d, const char *file, const char *jpath,
	     const char *fmt, ...)
{
	va_list ap;
	if (skipped(d, true))
		return -1;
	char *prefix = located(file, jpath, "error: ");
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
	if (skipped(d, false))
		return;
	char *prefix = located(file, jpath, "warning: ");
	va_start(ap, fmt);
	emit(d, prefix, fmt, ap, false);
	va_end(ap);
	free(prefix);
}

int diag_err_at(struct diag *d, const char *file, int line, int col,
		const char *fmt, ...)
{
	va_list ap;
	if (skipped(d, true))
		return -1;
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
	if (skipped(d, true))
		return -1;

	va_start(ap, fmt);
	emit(d, "error: ", fmt, ap, true);
	va_end(ap);
	return -1;
}

const char *diag_text(const struct diag *d)
{
	return d->buf ? d->buf : "";
}
