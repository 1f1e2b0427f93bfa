/* report_csv: report.csv, one header and one row of the headline numbers
 * (see report.h), and the same columns from a runner's fixed-size row
 * (`ddlsim run` of several scenarios). The columns are runcols.h's
 * runcols_report; fields are written through tidy.h's RFC 4180 field
 * writer and plain-decimal numbers. */
#include "report.h"

#include "runcols.h"
#include "tidy.h"

/* One field of column id: empty when it does not apply (a failed row's
 * figures) or is not a finite number; text quoted only where RFC 4180
 * needs it; numbers in plain decimal, rounded as the column says. */
static void field(FILE *f, enum runcol_id id, const struct runcol_src *src)
{
	const struct runcol *c = runcol_info(id);
	struct runcol_value v;
	if (!runcol_get(id, src, &v))
		return;
	switch (c->kind) {
	case RUNCOL_TEXT: tidy_csv_field(f, v.text); break;
	case RUNCOL_INT: fprintf(f, "%lld", v.integer); break;
	case RUNCOL_BOOL: fputs(v.boolean ? "true" : "false", f); break;
	case RUNCOL_NUMBER:
		if (!c->digits)
			fprintf(f, "%.*f", c->decimals, v.number);
		else
			tidy_csv_number(f, v.number, c->digits);
		break;
	}
}

int report_csv_header(FILE *f)
{
	for (int i = 0; i < runcols_report.n; i++) {
		if (i)
			fputc(',', f);
		tidy_csv_field(f, runcol_info(runcols_report.cols[i])->name);
	}
	fputc('\n', f);
	return ferror(f) ? -1 : 0;
}

int report_csv_row(FILE *f, const struct result_row *row, const char *name, const struct inputs *in)
{
	const struct runcol_src src = { .row = row, .in = in, .scenario = name };
	for (int i = 0; i < runcols_report.n; i++) {
		if (i)
			fputc(',', f);
		field(f, runcols_report.cols[i], &src);
	}
	fputc('\n', f);
	return ferror(f) ? -1 : 0;
}

int report_write_csv_stream(const struct result *r, FILE *f, bool header)
{
	struct result_row row = { 0 };
	result_row_fill(&row, r);
	if (header && report_csv_header(f))
		return -1;
	return report_csv_row(f, &row, r->meta.name, r->in);
}
