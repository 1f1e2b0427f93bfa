/* tidy: flat point records as CSV and JSON lines (see tidy.h). */
#include "tidy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runcols.h"

/* A value that does not apply (v NULL) never replaces one the caller set:
 * a sweep's axis "nodes" stays in an invalid point's record. */
static void put(json_t *o, const char *k, json_t *v)
{
	if (v || !json_object_get(o, k))
		json_object_set_new(o, k, v ? v : json_null());
}

static json_t *num(double x)
{
	return isfinite(x) ? json_real(x) : json_null();
}

void tidy_add_row(json_t *rec, const struct result_row *row, const struct inputs *in,
		  const struct assessment *a)
{
	const struct runcol_src src = { .row = row, .in = in, .a = a };
	for (int i = 0; i < runcols_record.n; i++) {
		enum runcol_id id = runcols_record.cols[i];
		struct runcol_value v;
		json_t *j = NULL;
		if (runcol_get(id, &src, &v))
			switch (runcol_info(id)->kind) {
			case RUNCOL_TEXT: j = json_string(v.text); break;
			case RUNCOL_INT: j = json_integer(v.integer); break;
			case RUNCOL_BOOL: j = json_boolean(v.boolean); break;
			case RUNCOL_NUMBER: j = num(v.number); break;
			}
		put(rec, runcol_info(id)->name, j);
	}
}

void tidy_csv_field(FILE *f, const char *s)
{
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

void tidy_csv_number(FILE *f, double x, int digits)
{
	if (!isfinite(x))
		return;  /* an empty field: the value does not exist */
	if (x == 0) {
		fputc('0', f);
		return;
	}
	/* `digits` significant digits in fixed notation, trailing zeros cut */
	int mag = (int)floor(log10(fabs(x)));
	int dec = digits - 1 - mag;
	if (dec < 0)
		dec = 0;
	if (dec > 12)
		dec = 12;  /* below 1e-12 is rounding noise (a time of 6e-17 s) */
	char buf[400];
	snprintf(buf, sizeof(buf), "%.*f", dec, x);
	if (strchr(buf, '.')) {
		char *e = buf + strlen(buf) - 1;
		while (*e == '0')
			*e-- = 0;
		if (*e == '.')
			*e = 0;
	}
	fputs(strcmp(buf, "-0") ? buf : "0", f);
}

static bool scalar(const json_t *v)
{
	return !json_is_object(v) && !json_is_array(v);
}

int tidy_csv_header(FILE *f, const json_t *rec)
{
	const char *k;
	json_t *v;
	bool first = true;
	json_object_foreach((json_t *)rec, k, v) {
		if (!scalar(v))
			continue;
		if (!first)
			fputc(',', f);
		first = false;
		tidy_csv_field(f, k);
	}
	fputc('\n', f);
	return fflush(f) || ferror(f) ? -1 : 0;
}

int tidy_csv_row(FILE *f, const json_t *rec)
{
	const char *k;
	json_t *v;
	bool first = true;
	json_object_foreach((json_t *)rec, k, v) {
		if (!scalar(v))
			continue;
		if (!first)
			fputc(',', f);
		first = false;
		if (json_is_string(v))
			tidy_csv_field(f, json_string_value(v));
		else if (json_is_integer(v))
			fprintf(f, "%lld", (long long)json_integer_value(v));
		else if (json_is_real(v))
			tidy_csv_number(f, json_real_value(v), 9);
		else if (json_is_boolean(v))
			fputs(json_is_true(v) ? "true" : "false", f);
	}
	fputc('\n', f);
	return fflush(f) || ferror(f) ? -1 : 0;
}

int tidy_jsonl(FILE *f, const json_t *rec)
{
	char *s = json_dumps(rec, JSON_COMPACT | JSON_REAL_PRECISION(12));
	if (!s)
		return -1;
	fputs(s, f);
	fputc('\n', f);
	free(s);
	return fflush(f) || ferror(f) ? -1 : 0;
}
