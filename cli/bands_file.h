/* bands_file: validation/bands.json, the error bands the suite writes
 * (sim/band.h has its keys; sim/band_cv.h builds the rows): written,
 * checked against what the suite gives now, and printed as the
 * cross-validation table. `ddlsim validation` is its only user. */
#ifndef DDLSIM_BANDS_FILE_H
#define DDLSIM_BANDS_FILE_H

#include <jansson.h>
#include <stdio.h>

#include "band.h"
#include "diag.h"

/* frac in percent to 0.1, the file's precision. */
double bands_file_pct(double frac);

/* Write rows[0 .. nrows - 1] (the overall row last) and, when mem is not
 * NULL, the memory families' errors (sim/band.h "memory") to path
 * atomically. 0, or -1 with the reason in d. */
int bands_file_write(const char *path, const struct band *rows, int nrows, json_t *mem, struct diag *d);

/* Check the form of a bands file before the suite runs (--check-bands):
 * JSON of schema ddlsim.validation-bands 2.x, "families" an array of
 * objects each naming its "family" (a string), "memory" an object when
 * present. 0, or -1 with every problem (file, JSON path, what was
 * expected and found) in d. */
int bands_file_validate(const char *path, struct diag *d);

/* Whether the file at path says what the suite gives now (rows, and mem
 * when not NULL): 0 yes, 1 no (each difference said on stderr), -1 bad
 * input (in d). */
int bands_file_check(const char *path, const struct band *rows, int nrows, json_t *mem, struct diag *d);

/* --cross-validate's table: per family, in sample against out of family. */
void bands_file_print_cv(const struct band *rows, int nrows, FILE *f);

#endif
