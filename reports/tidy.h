/* tidy: one flat record per sweep or plan point, as CSV and JSON lines.
 *
 * A record is a JSON object whose keys are the columns, in order: the
 * point's index and axes first (the caller adds them), then the plan, the
 * status and error, the simulated headline and the assessment (cost,
 * energy, goodput). Units are in the names (_s, _GB, _usd, _MWh); numbers
 * are written unquoted in plain decimal, strings quoted only when they hold a comma, a
 * quote or a line break (RFC 4180); a value that does not apply (a failed
 * point's figures) is an empty field in CSV and null in JSON. Nested
 * objects and arrays (breakdowns) go to the JSON lines only. Both writers
 * flush each record, so a killed sweep keeps every finished point. */
#ifndef DDLSIM_TIDY_H
#define DDLSIM_TIDY_H

#include <jansson.h>
#include <stdio.h>

#include "assess.h"
#include "result.h"

/* Append the plan, status and figures of row (and of a when not NULL and
 * the row is OK) to rec: the columns of runcols.h's runcols_record. */
void tidy_add_row(json_t *rec, const struct result_row *row, const struct inputs *in,
		  const struct assessment *a);

/* CSV header: the names of rec's scalar keys. Returns 0 or -1 (I/O). */
int tidy_csv_header(FILE *f, const json_t *rec);
/* One CSV line of rec's scalar values, flushed. Returns 0 or -1. */
int tidy_csv_row(FILE *f, const json_t *rec);
/* One JSON line of rec, flushed. Returns 0 or -1. */
int tidy_jsonl(FILE *f, const json_t *rec);
/* Write x as a plain decimal (never an exponent, so money and counts read
 * as written: 190690123, not 1.90690e+08) rounded to `digits` significant
 * digits, at most 12 decimals, trailing zeros cut; an empty field when x
 * is not finite. */
void tidy_csv_number(FILE *f, double x, int digits);
/* Write one CSV field (quoted only where RFC 4180 needs it). */
void tidy_csv_field(FILE *f, const char *s);

#endif
