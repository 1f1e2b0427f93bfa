/* diag: user-facing error collection (see diag.h). */
#include "diag.h"

#include <stdbool.h>
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

static void emit(struct diag *d, const char *prefix, const char *fmt, va_list ap,
		 bool count)
{
	char msg[2048];
	char line[2600];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	snprintf(line, sizeof(line), "%s%s\n", prefix, msg);
	if (count)
		d->count++;
	if (d->out)
		fputs(line, d->out);
	size_t n = strlen(line);
	char *nb = realloc(d->buf, d->len + n + 1);
	if (!nb)
		return;
	memcpy(nb + d->len, line, n + 1);
	d->buf = nb;
	d->len += n;
}

int diag_err(struct diag *d, const char *file, const char *jpath,
	     const char *fmt, ...)
{
	char prefix[1200];
	va_list ap;

	snprintf(prefix, sizeof(prefix), "%s: %s%serror: ", file ? file : "<input>",
		 jpath && *jpath ? jpath : "", jpath && *jpath ? ": " : "");
	va_start(ap, fmt);
	emit(d, prefix, fmt, ap, true);
	va_end(ap);
	return -1;
}

void diag_warn(struct diag *d, const char *file, const char *jpath,
	       const char *fmt, ...)
{
	char prefix[1200];
	va_list ap;

	snprintf(prefix, sizeof(prefix), "%s: %s%swarning: ", file ? file : "<input>",
		 jpath && *jpath ? jpath : "", jpath && *jpath ? ": " : "");
	va_start(ap, fmt);
	emit(d, prefix, fmt, ap, false);
	va_end(ap);
}

int diag_err_at(struct diag *d, const char *file, int line, int col,
		const char *fmt, ...)
{
	char prefix[1200];
	va_list ap;

	snprintf(prefix, sizeof(prefix), "%s:%d:%d: error: ", file ? file : "<input>",
		 line, col);
	va_start(ap, fmt);
	emit(d, prefix, fmt, ap, true);
	va_end(ap);
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
